/* The partition graph (regions.h) and `lowerscope graph`: two_delegates' regions worked by hand
 * from the sample (samples/scenarios.py: three atan2(·, x) on the CPU, a delegate of add/mul, a
 * cos on the CPU, a delegate of sub/div), at the partition step (tags) and after to_backend
 * (lowered modules); kv_cache's delegate keeps its cache as state; a tag that is not convex
 * still gives every region a place; 200 alternating regions fold; --json parses; --dot is
 * accepted by Graphviz's own dot -Tsvg (skipped without graphviz). */
#include <check.h>
#include <cjson/cJSON.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "ops.h"
#include "progfixtures.h"
#include "regions.h"
#include "testutil.h"

static int32_t region_named(const ls_regions *r, const char *name)
{
    for (uint32_t i = 0; i < r->n; i++)
        if (!strcmp(r->v[i].name, name)) return (int32_t)i;
    return -1;
}

static const ls_region_edge *edge(const ls_regions *r, int32_t from, int32_t to)
{
    for (uint32_t e = 0; e < r->n_edges; e++)
        if ((int32_t)r->edges[e].from == from && (int32_t)r->edges[e].to == to) return &r->edges[e];
    return NULL;
}

/* Regions of the cos node and of the two delegates (by their tag or lowered module). */
static void check_two_delegates(const ls_program *p, const char *first, const char *second, ls_region_kind kind)
{
    ls_regions r;
    ls_regions_build(p, &r);
    int32_t a = region_named(&r, first), b = region_named(&r, second);
    ck_assert_msg(a >= 0 && b >= 0, "no region %s or %s", first, second);
    ck_assert_int_eq(r.v[a].kind, kind);
    ck_assert_int_eq(r.v[b].kind, kind);
    int32_t cos = ls_regions_of_node(&r, p, p->nodes[ls_program_find(p, ls_intern("aten_cos_default"))]->id);
    ck_assert_int_ge(cos, 0);
    ck_assert_int_eq(r.v[cos].kind, LS_REGION_CPU);
    ck_assert_uint_eq(r.v[cos].n_nodes, 1);
    /* the cos between them: in the order and in the drawing's ranks */
    ck_assert(a < cos && cos < b);
    ck_assert(r.v[a].rank < r.v[cos].rank && r.v[cos].rank < r.v[b].rank);
    ck_assert_uint_eq(r.v[a].stage, 0);
    ck_assert_uint_eq(r.v[b].stage, 1);
    /* float32[4] values: 16 bytes each */
    const ls_region_edge *e1 = edge(&r, a, cos), *e2 = edge(&r, cos, b);
    ck_assert_ptr_nonnull(e1);
    ck_assert_ptr_nonnull(e2);
    ck_assert_uint_eq(e1->tensors, 1);
    ck_assert_uint_eq(e1->bytes, 16);
    ck_assert_uint_eq(e2->bytes, 16);
    /* each delegate: 6 nodes, reads the weight, the offset and the scale (its copies): 3 × 16 B */
    ck_assert_uint_eq(r.v[a].n_nodes, 6);
    ck_assert_uint_eq(r.v[b].n_nodes, 6);
    ck_assert_uint_eq(r.v[a].consts, 3);
    ck_assert_uint_eq(r.v[a].const_bytes, 48);
    ck_assert_str_eq(r.v[a].ops, "add ×3, mul ×3");
    ck_assert_str_eq(r.v[b].ops, "sub ×3, div ×3");
    /* the three atan2 are islands of their own (they share only x, a placeholder) */
    uint32_t islands = 0;
    for (uint32_t i = 0; i < r.n; i++) islands += r.v[i].kind == LS_REGION_CPU;
    ck_assert_uint_eq(islands, 4);
    ck_assert_uint_eq(r.cpu_nodes, 4);
    ck_assert_uint_eq(r.delegated_nodes, 12);
    /* x into the first delegate; the second's output back: 16 B each way */
    ck_assert_uint_eq(r.cpu_to_delegates, 32);
    ck_assert_uint_eq(r.v[0].kind, LS_REGION_INPUTS);
    ck_assert_uint_eq(r.v[r.n - 1].kind, LS_REGION_OUTPUTS);
    for (uint32_t i = 0; i < p->n_nodes; i++) /* every compute node is somewhere */
        if (p->nodes[i]->kind == LS_NODE_CALL && p->nodes[i]->op && p->nodes[i]->op->id != LS_OP_alloc)
            ck_assert_int_ge(r.of_pos[i], 0);
    ls_regions_free(&r);
}

START_TEST(two_delegates_split_by_a_cpu_cos)
{
    ls_history h = {0};
    ls_program *p = pf_sample("two_delegates");
    pf_lower(p, NULL, &h);
    check_two_delegates(h.steps[ls_history_find_step(&h, "partition", NULL)].program, "tag7", "tag1", LS_REGION_TAG);
    check_two_delegates(h.steps[ls_history_find_step(&h, "to_backend", NULL)].program, "lowered_module_0",
                        "lowered_module_1", LS_REGION_DELEGATE);
    check_two_delegates(h.steps[h.n - 1].program, "lowered_module_0", "lowered_module_1", LS_REGION_DELEGATE); /* with allocs */
    ls_history_free(&h);
    ls_program_unref(p);
}
END_TEST

START_TEST(a_delegate_keeps_its_cache_as_state)
{
    ls_history h = {0};
    ls_program *p = pf_sample("kv_cache");
    pf_lower(p, NULL, &h);
    const ls_program *q = h.steps[ls_history_find_step(&h, "to_backend", NULL)].program;
    ls_regions r;
    ls_regions_build(q, &r);
    int32_t d = region_named(&r, "lowered_module_0");
    ck_assert_int_ge(d, 0);
    ck_assert_uint_eq(r.v[d].states, 1);
    ck_assert_uint_gt(r.v[d].state_bytes, 0);
    ls_regions_free(&r);
    ls_history_free(&h);
    ls_program_unref(p);
}
END_TEST

/* a → (tag A) b → (CPU) c → (tag A) d: a tag the CPU splits; every region is still placed once. */
START_TEST(a_tag_that_is_not_convex_still_has_an_order)
{
    static const int64_t s4[] = {4};
    ls_builder *bd = ls_builder_new("model", LS_DIALECT_EDGE);
    uint32_t x = pf_user_input(bd, "x", LS_DT_F32, 1, s4);
    ls_arg a1[] = {ls_arg_node(x), ls_arg_node(x)};
    uint32_t b = pf_call(bd, "b", LS_OP_add_Tensor, a1, 2, LS_DT_F32, 1, s4);
    ls_arg a2[] = {ls_arg_node(b)};
    uint32_t c = pf_call(bd, "c", LS_OP_cos, a2, 1, LS_DT_F32, 1, s4);
    ls_arg a3[] = {ls_arg_node(c), ls_arg_node(b)};
    uint32_t d = pf_call(bd, "d", LS_OP_mul_Tensor, a3, 2, LS_DT_F32, 1, s4);
    ls_build_output(bd, &d, 1, NULL, NULL);
    ls_program *p = ls_builder_finish(bd);
    const char *tag = ls_intern("A");
    ls_program_add_tag(p, tag, ls_intern("BundledBackend"));
    ls_program_edit(p, (uint32_t)ls_program_pos(p, b))->tag = tag;
    ls_program_edit(p, (uint32_t)ls_program_pos(p, d))->tag = tag;
    ls_regions r;
    ls_regions_build(p, &r);
    ck_assert_uint_eq(r.n, 4); /* inputs, A, CPU 1, outputs */
    bool seen[4] = {0};
    for (uint32_t i = 0; i < p->n_nodes; i++)
        if (r.of_pos[i] >= 0) seen[r.of_pos[i]] = true;
    for (int i = 0; i < 4; i++) ck_assert(seen[i]);
    ls_regions_free(&r);
    ls_program_unref(p);
}
END_TEST

/* x → add (tag) → cos (CPU) → add (tag) → ...: 100 of each, one tag per add; it folds. */
START_TEST(runs_of_similar_regions_fold)
{
    static const int64_t s4[] = {4};
    ls_builder *bd = ls_builder_new("model", LS_DIALECT_EDGE);
    uint32_t prev = pf_user_input(bd, "x", LS_DT_F32, 1, s4);
    uint32_t adds[100];
    for (int i = 0; i < 100; i++) {
        ls_arg a[] = {ls_arg_node(prev), ls_arg_node(prev)};
        adds[i] = pf_call(bd, NULL, LS_OP_add_Tensor, a, 2, LS_DT_F32, 1, s4);
        ls_arg c[] = {ls_arg_node(adds[i])};
        prev = pf_call(bd, NULL, LS_OP_cos, c, 1, LS_DT_F32, 1, s4);
    }
    ls_build_output(bd, &prev, 1, NULL, NULL);
    ls_program *p = ls_builder_finish(bd);
    for (int i = 0; i < 100; i++) {
        const char *tag = ls_internf("tag%d", i);
        ls_program_add_tag(p, tag, ls_intern("BundledBackend"));
        ls_program_edit(p, (uint32_t)ls_program_pos(p, adds[i]))->tag = tag;
    }
    ls_regions r;
    ls_regions_build(p, &r);
    ck_assert_uint_eq(r.n, 202);
    ck_assert_uint_eq(r.n_ranks, 202); /* a chain */
    /* tags differ by name only: they are similar; the regions fold into a few boxes */
    ls_region_boxes bx;
    ls_region_boxes_build(&r, true, false, &bx);
    ck_assert_uint_lt(bx.n, 10);
    uint32_t covered = 0;
    for (uint32_t b = 0; b < bx.n; b++) covered += bx.boxes[b].fold;
    ck_assert_uint_eq(covered, r.n);
    bool said = false;
    for (uint32_t b = 0; b < bx.n; b++) said |= bx.boxes[b].fold > 1 && strstr(bx.boxes[b].text[0], "more") != NULL;
    ck_assert_msg(said, "the folded box does not say how many it stands for");
    for (uint32_t g = 1; g < r.n; g++) ck_assert_uint_ge(bx.box_of_region[g], bx.box_of_region[g - 1]);
    ls_region_boxes_free(&bx);
    ls_region_boxes_build(&r, false, false, &bx);
    ck_assert_uint_eq(bx.n, r.n);
    ls_region_boxes_free(&bx);
    ls_regions_free(&r);
    ls_program_unref(p);
}
END_TEST

START_TEST(graph_json_lists_regions_and_edges)
{
    char *out;
    int rc = tu_runf(&out, "graph %s --step to_backend --json", tu_root("samples/two_delegates.pt2"));
    ck_assert_msg(rc == 0, "%s", out);
    cJSON *j = cJSON_Parse(out);
    ck_assert_msg(j != NULL, "not JSON:\n%s", out);
    const cJSON *regions = cJSON_GetObjectItem(j, "regions"), *edges = cJSON_GetObjectItem(j, "edges");
    ck_assert_int_eq(cJSON_GetArraySize(regions), 8); /* inputs, 4 islands, 2 delegates, outputs */
    ck_assert_int_gt(cJSON_GetArraySize(edges), 0);
    int delegates = 0;
    for (int i = 0; i < cJSON_GetArraySize(regions); i++) {
        const cJSON *g = cJSON_GetArrayItem(regions, i);
        if (!strcmp(cJSON_GetObjectItem(g, "kind")->valuestring, "delegate")) {
            delegates++;
            ck_assert_str_eq(cJSON_GetObjectItem(g, "backend")->valuestring, "BundledBackend");
            ck_assert_int_eq(cJSON_GetObjectItem(g, "compute_nodes")->valueint, 6);
        }
    }
    ck_assert_int_eq(delegates, 2);
    cJSON_Delete(j);
    free(out);
    rc = tu_runf(&out, "graph %s --step nope", tu_root("samples/two_delegates.pt2"));
    ck_assert_int_eq(rc, 2);
    free(out);
    /* two formats are one too many: refused, naming both (given twice, one format is one) */
    rc = tu_runf(&out, "graph %s --dot --json", tu_root("samples/two_delegates.pt2"));
    ck_assert_msg(rc == 2 && tu_contains(out, "--dot and --json are two formats"), "%s", out);
    free(out);
    rc = tu_runf(&out, "graph %s --json --json", tu_root("samples/two_delegates.pt2"));
    ck_assert_msg(rc == 0 && tu_contains(out, "\"format_version\": 1"), "%s", out);
    free(out);
}
END_TEST

START_TEST(graph_text_draws_the_cos_between_the_delegates)
{
    char *out;
    int rc = tu_runf(&out, "graph %s --step to_backend", tu_root("samples/two_delegates.pt2"));
    ck_assert_int_eq(rc, 0);
    /* exir numbers lowered modules in graph order: lowered_module_0 is the first region */
    const char *a = strstr(out, "lowered_module_0"), *c = strstr(out, "│ cos"), *b = strstr(out, "┌ lowered_module_1");
    ck_assert_msg(a && c && b && a < c && c < b, "%s", out);
    ck_assert(tu_contains(out, "▼ 1 tensor, 16 B ← lowered_module_0"));
    free(out);
    rc = tu_runf(&out, "graph %s --step to_backend --ascii", tu_root("samples/two_delegates.pt2"));
    ck_assert_int_eq(rc, 0);
    for (const unsigned char *s = (const unsigned char *)out; *s; s++) ck_assert_msg(*s < 0x80, "not ASCII:\n%s", out);
    ck_assert(tu_contains(out, "+ lowered_module_0 "));
    free(out);
}
END_TEST

/* Graphviz's own parser is the judge of our DOT. */
START_TEST(graph_dot_is_accepted_by_graphviz)
{
    if (!tu_have_tool("dot")) return; /* graphviz absent: skipped */
    const char *samples[] = {"two_delegates", "policy", "kv_cache", "tiny_llama"};
    for (size_t i = 0; i < sizeof samples / sizeof samples[0]; i++) {
        char rel[128], cmd[8192];
        snprintf(rel, sizeof rel, "samples/%s.pt2", samples[i]);
        const char *dir = tu_tmpdir();
        snprintf(cmd, sizeof cmd, "'%s' graph '%s' %s --dot > '%s/g.dot' && dot -Tsvg '%s/g.dot' -o '%s/g.svg' 2>'%s/err'",
                 getenv("LS_BIN"), tu_root(rel), i == 0 ? "--step partition" : "", dir, dir, dir, dir);
        ck_assert_msg(system(cmd) == 0, "dot refused the graph of %s: %s", samples[i], cmd);
        char path[4096], *svg;
        snprintf(path, sizeof path, "%s/g.svg", dir);
        FILE *f = fopen(path, "r");
        ck_assert_ptr_nonnull(f);
        svg = ls_calloc(1, 1 << 20);
        size_t n = fread(svg, 1, (1 << 20) - 1, f);
        fclose(f);
        ck_assert_uint_gt(n, 0);
        ck_assert_msg(strstr(svg, "<svg") != NULL, "no SVG from dot for %s", samples[i]);
        if (i == 0) ck_assert(strstr(svg, "tag7 (BundledBackend)") != NULL); /* the cluster's label */
        free(svg);
        snprintf(path, sizeof path, "%s/err", dir);
        f = fopen(path, "r");
        char warn[256] = {0};
        if (f) {
            size_t k = fread(warn, 1, sizeof warn - 1, f);
            warn[k] = 0;
            fclose(f);
        }
        ck_assert_msg(!warn[0], "dot warned on %s: %s", samples[i], warn);
    }
}
END_TEST

Suite *graph_suite(void)
{
    Suite *s = suite_create("graph");
    TCase *tc = tcase_create("core");
    tcase_add_test(tc, two_delegates_split_by_a_cpu_cos);
    tcase_add_test(tc, a_delegate_keeps_its_cache_as_state);
    tcase_add_test(tc, a_tag_that_is_not_convex_still_has_an_order);
    tcase_add_test(tc, runs_of_similar_regions_fold);
    tcase_add_test(tc, graph_json_lists_regions_and_edges);
    tcase_add_test(tc, graph_text_draws_the_cos_between_the_delegates);
    tcase_add_test(tc, graph_dot_is_accepted_by_graphviz);
    tcase_set_timeout(tc, 60);
    suite_add_tcase(s, tc);
    return s;
}
