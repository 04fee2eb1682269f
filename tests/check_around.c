/* A node's neighbourhood (neighbourhood.h), the UI's `x` screen and `lowerscope graph --around`.
 * Worked by hand from samples/scenarios.py's two_delegates: cos reads the first region's last
 * mul (`h * weight`), which reads the add before it (`h + offset`) and p_weight; cos's user is
 * the second region's first sub (`h - scale`), read by a div (`/ offset`), read by a sub
 * (`- weight`). A level past its cap counts the rest once each; the CLI draws what the UI's
 * screen draws (tests/screens/around-cos.expected, the same step and node). */
#include <check.h>
#include <cjson/cJSON.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "neighbourhood.h"
#include "progfixtures.h"
#include "testutil.h"

static uint32_t id_of(const ls_program *p, const char *name)
{
    int32_t pos = ls_program_find(p, ls_intern(name));
    ck_assert_msg(pos >= 0, "no node %s", name);
    return p->nodes[pos]->id;
}

/* The names on level `level` (-depth..depth), comma-separated in the order reached. */
static void level_names(const ls_program *p, const ls_around *a, int level, char *buf, size_t cap)
{
    size_t k = (size_t)(level + a->depth), len = 0;
    buf[0] = 0;
    for (uint32_t i = a->first[k]; i < a->first[k + 1]; i++)
        len += (size_t)snprintf(buf + len, cap - len, "%s%s", i > a->first[k] ? "," : "", ls_program_node(p, a->ids[i])->name);
}

static bool has_edge(const ls_program *p, const ls_around *a, const char *from, const char *to)
{
    for (uint32_t e = 0; e < a->n_edges; e++)
        if (!strcmp(ls_program_node(p, a->ids[a->edges[e].from])->name, from) &&
            !strcmp(ls_program_node(p, a->ids[a->edges[e].to])->name, to))
            return true;
    return false;
}

START_TEST(cos_has_the_first_region_above_and_the_second_below)
{
    ls_program *loaded = pf_sample("two_delegates");
    ls_history h = {0};
    pf_lower(loaded, NULL, &h);
    const ls_program *p = h.steps[ls_history_find_step(&h, "to_edge", NULL)].program; /* Edge names */
    ls_around a;
    ck_assert_int_eq(ls_around_build(p, id_of(p, "aten_cos_default"), 2, 8, &a), 0);
    char names[512];
    ck_assert_uint_eq(a.n_levels, 5);
    level_names(p, &a, -2, names, sizeof names);
    ck_assert_str_eq(names, "aten_add_tensor_2,p_weight");
    level_names(p, &a, -1, names, sizeof names);
    ck_assert_str_eq(names, "aten_mul_tensor_2");
    level_names(p, &a, 0, names, sizeof names);
    ck_assert_str_eq(names, "aten_cos_default");
    level_names(p, &a, 1, names, sizeof names);
    ck_assert_str_eq(names, "aten_sub_tensor");
    level_names(p, &a, 2, names, sizeof names);
    ck_assert_str_eq(names, "aten_div_tensor");
    ck_assert_uint_eq(a.n_edges, 5);
    ck_assert(has_edge(p, &a, "p_weight", "aten_mul_tensor_2"));
    ck_assert(has_edge(p, &a, "aten_add_tensor_2", "aten_mul_tensor_2"));
    ck_assert(has_edge(p, &a, "aten_sub_tensor", "aten_div_tensor"));
    ck_assert_int_eq(ls_around_level_of(&a, 0), -2);
    for (uint32_t k = 0; k < a.n_levels; k++) ck_assert_uint_eq(a.more[k], 0);
    ls_around_free(&a);
    /* one level further: the add's producers (the mul before it, b_offset), the sub after the div */
    ck_assert_int_eq(ls_around_build(p, id_of(p, "aten_cos_default"), 3, 8, &a), 0);
    level_names(p, &a, -3, names, sizeof names);
    ck_assert_str_eq(names, "aten_mul_tensor_1,b_offset");
    level_names(p, &a, 3, names, sizeof names);
    ck_assert_str_eq(names, "aten_sub_tensor_1");
    ls_around_free(&a);
    ck_assert_int_eq(ls_around_build(p, 999999, 2, 8, &a), -1);
    ls_history_free(&h);
    ls_program_unref(loaded);
}
END_TEST

/* tiny_llama's most read node: one level below shows 8 users and counts the rest once each. */
START_TEST(a_level_past_its_cap_counts_the_rest)
{
    ls_program *p = pf_sample("tiny_llama");
    uint32_t best = 0, most = 0;
    for (uint32_t i = 0; i < p->n_nodes; i++) {
        uint32_t n;
        const uint32_t *us = ls_program_users(p, i, &n);
        uint32_t distinct = 0; /* a node reading it twice is one user */
        for (uint32_t k = 0; k < n; k++) distinct += k == 0 || us[k] != us[k - 1];
        if (distinct > most) most = distinct, best = i;
    }
    ck_assert_uint_gt(most, 8);
    ls_around a;
    ck_assert_int_eq(ls_around_build(p, p->nodes[best]->id, 1, 8, &a), 0);
    ck_assert_uint_eq(a.first[3] - a.first[2], 8);
    ck_assert_uint_eq(a.more[2], most - 8);
    ls_around_free(&a);
    ck_assert_int_eq(ls_around_build(p, p->nodes[best]->id, 1, UINT32_MAX, &a), 0);
    ck_assert_uint_eq(a.first[3] - a.first[2], most);
    ck_assert_uint_eq(a.more[2], 0);
    for (uint32_t i = 0; i < a.first[3]; i++) /* each node once */
        for (uint32_t j = i + 1; j < a.first[3]; j++) ck_assert_uint_ne(a.ids[i], a.ids[j]);
    ls_around_free(&a);
    ls_program_unref(p);
}
END_TEST

START_TEST(graph_around_json_names_levels_tags_and_edges)
{
    char *out;
    int rc = tu_runf(&out, "graph %s --step partition --around aten_cos_default --json", tu_root("samples/two_delegates.pt2"));
    ck_assert_msg(rc == 0, "%s", out);
    cJSON *j = cJSON_Parse(out);
    ck_assert_msg(j != NULL, "not JSON:\n%s", out);
    ck_assert_str_eq(cJSON_GetObjectItem(j, "center")->valuestring, "aten_cos_default");
    ck_assert_int_eq(cJSON_GetObjectItem(j, "depth")->valueint, 2);
    const cJSON *levels = cJSON_GetObjectItem(j, "levels");
    ck_assert_int_eq(cJSON_GetArraySize(levels), 5);
    const cJSON *top = cJSON_GetArrayItem(levels, 0);
    ck_assert_int_eq(cJSON_GetObjectItem(top, "level")->valueint, -2);
    const cJSON *nodes = cJSON_GetObjectItem(top, "nodes");
    ck_assert_int_eq(cJSON_GetArraySize(nodes), 2);
    /* the first region is tag7 at the partition step, the weight goes to the second (tag1) */
    ck_assert_str_eq(cJSON_GetObjectItem(cJSON_GetArrayItem(nodes, 0), "tag")->valuestring, "tag7");
    ck_assert_str_eq(cJSON_GetObjectItem(cJSON_GetArrayItem(nodes, 1), "op")->valuestring, "[param]");
    const cJSON *mid = cJSON_GetObjectItem(cJSON_GetArrayItem(levels, 2), "nodes");
    ck_assert_str_eq(cJSON_GetObjectItem(cJSON_GetArrayItem(mid, 0), "runs_on")->valuestring, "CPU");
    ck_assert_int_eq(cJSON_GetArraySize(cJSON_GetObjectItem(j, "edges")), 5);
    cJSON_Delete(j);
    free(out);
    /* inside a lowered module, by module/name: its nodes run on the module's backend */
    rc = tu_runf(&out, "graph %s --step to_backend --around lowered_module_1/aten_div_tensor --depth 1 --json",
                 tu_root("samples/two_delegates.pt2"));
    ck_assert_msg(rc == 0, "%s", out);
    j = cJSON_Parse(out);
    ck_assert_msg(j != NULL, "not JSON:\n%s", out);
    ck_assert_str_eq(cJSON_GetObjectItem(j, "program")->valuestring, "lowered_module_1");
    mid = cJSON_GetObjectItem(cJSON_GetArrayItem(cJSON_GetObjectItem(j, "levels"), 1), "nodes");
    ck_assert_str_eq(cJSON_GetObjectItem(cJSON_GetArrayItem(mid, 0), "backend")->valuestring, "BundledBackend");
    cJSON_Delete(j);
    free(out);
}
END_TEST

/* The CLI's drawing is the UI's screen: the same boxes, edges and labels line for line. */
START_TEST(graph_around_text_draws_what_the_screen_draws)
{
    char *out;
    int rc = tu_runf(&out, "graph %s --step partition --around aten_cos_default", tu_root("samples/two_delegates.pt2"));
    ck_assert_msg(rc == 0, "%s", out);
    ck_assert_msg(tu_contains(out, "around aten_cos_default, 2 levels: 3 producers above, 2 users below"), "%s", out);
    char *screen = tu_slurp(tu_root("tests/screens/around-cos.expected"));
    ck_assert_ptr_nonnull(screen);
    /* the screen's rows 3..22: two marks and a space, the pane's one-column margin, the drawing */
    char *line = screen, *cli = strchr(out, '\n') + 1;
    uint32_t compared = 0;
    for (int row = 1; line && *line; row++) {
        char *end = strchr(line, '\n');
        if (end) *end = 0;
        if (row >= 3 && row <= 22) {
            const char *drawn = line + 4;
            size_t n = strcspn(cli, "\n");
            ck_assert_msg(strlen(drawn) == n && !strncmp(drawn, cli, n), "row %d: screen '%s', cli '%.*s'", row, drawn, (int)n,
                          cli);
            cli += n + (cli[n] == '\n');
            compared++;
        }
        line = end ? end + 1 : NULL;
    }
    ck_assert_uint_eq(compared, 20);
    free(screen);
    free(out);
}
END_TEST

START_TEST(graph_around_refuses_what_is_not_there)
{
    char *out;
    int rc = tu_runf(&out, "graph %s --around nope", tu_root("samples/two_delegates.pt2"));
    ck_assert_int_eq(rc, 2);
    ck_assert_msg(tu_contains(out, "--around nope: no node `nope` at step 8 emit"), "%s", out);
    free(out);
    rc = tu_runf(&out, "graph %s --around aten_cos_default --depth 0", tu_root("samples/two_delegates.pt2"));
    ck_assert_int_eq(rc, 2);
    ck_assert_msg(tu_contains(out, "--depth takes a number of levels from 1 to 8"), "%s", out);
    free(out);
    rc = tu_runf(&out, "graph %s --depth 3", tu_root("samples/two_delegates.pt2"));
    ck_assert_int_eq(rc, 2);
    free(out);
    rc = tu_runf(&out, "graph %s --around", tu_root("samples/two_delegates.pt2"));
    ck_assert_int_eq(rc, 2);
    free(out);
}
END_TEST

START_TEST(graph_around_dot_is_accepted_by_graphviz)
{
    if (!tu_have_tool("dot")) return; /* graphviz absent: skipped */
    const char *dir = tu_tmpdir();
    char cmd[8192];
    snprintf(cmd, sizeof cmd, "'%s' graph '%s' --step to_edge --around aten_cos_default --depth 3 --dot > '%s/a.dot' && dot -Tsvg '%s/a.dot' -o '%s/a.svg'",
             getenv("LS_BIN"), tu_root("samples/two_delegates.pt2"), dir, dir, dir);
    ck_assert_msg(system(cmd) == 0, "dot refused: %s", cmd);
    char path[4096];
    snprintf(path, sizeof path, "%s/a.svg", dir);
    char *svg = tu_slurp(path);
    ck_assert_msg(svg && strstr(svg, "<svg") && strstr(svg, "aten_sub_tensor_1") && strstr(svg, "b_offset"),
                  "the SVG lacks the nodes three levels away");
    free(svg);
}
END_TEST

Suite *around_suite(void)
{
    Suite *s = suite_create("around");
    TCase *tc = tcase_create("core");
    tcase_add_test(tc, cos_has_the_first_region_above_and_the_second_below);
    tcase_add_test(tc, a_level_past_its_cap_counts_the_rest);
    tcase_add_test(tc, graph_around_json_names_levels_tags_and_edges);
    tcase_add_test(tc, graph_around_text_draws_what_the_screen_draws);
    tcase_add_test(tc, graph_around_refuses_what_is_not_there);
    tcase_add_test(tc, graph_around_dot_is_accepted_by_graphviz);
    tcase_set_timeout(tc, 60);
    suite_add_tcase(s, tc);
    return s;
}
