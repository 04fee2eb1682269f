/* One node's facts: the core's "held by" index (held_by.h, which the UI's node pane reads) and
 * `lowerscope node`, its CLI twin.
 * Worked by hand from samples/scenarios.py's shared_constant and the pass report: the constant
 * `c` is read by atan2 (stays on the CPU: the bundled backend has no trigonometry) and by add
 * and mul (tag1). duplicate_constants (src/passes/duplicate_constants.c, after PR #24481's
 * duplicate_constant_nodes) keeps `c` for the CPU and gives tag1 `c_copy_0`, target
 * `c_copy_0`, placed right before the original and sharing its storage. So at that step the
 * top level holds both (c_copy_0 first); after to_backend `c_copy_0` is lowered_module_0's
 * and `c` the top level's, and each one's holders are those two, through the same bytes. */
#include <check.h>
#include <cjson/cJSON.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "held_by.h"
#include "history.h"
#include "progfixtures.h"
#include "testutil.h"

/* "prog:placeholder:target,..." of spec's holders at step `step` (the top level's `name`, or
 * lowered module `sub`'s). */
static void holders(const ls_history *h, const char *step, const char *sub, const char *name, char *buf, size_t cap)
{
    ls_error err;
    int s = ls_history_find_step(h, step, &err);
    ck_assert_int_ge(s, 0);
    const ls_program *top = h->steps[s].program, *p = top;
    if (sub) p = ls_program_sub(top, ls_intern(sub))->program;
    int32_t si = ls_program_input_spec(p, ls_intern(name));
    ck_assert_msg(si >= 0, "no input spec %s", name);
    ls_held_index ix;
    ls_held_index_build(&ix, top);
    uint32_t *found;
    uint32_t n = ls_held_by(&ix, p, &p->inputs[si], &found);
    size_t len = 0;
    buf[0] = 0;
    for (uint32_t i = 0; i < n; i++) {
        const ls_holder *e = &ix.v[found[i]];
        const ls_input_spec *o = &ls_holder_program(&ix, e)->inputs[e->input];
        const char *pn = ls_holder_sub_name(&ix, e);
        len += (size_t)snprintf(buf + len, cap - len, "%s%s:%s:%s", i ? "," : "", pn ? pn : "top", o->name, o->target);
    }
    free(found);
    ls_held_index_free(&ix);
}

START_TEST(held_by_follows_the_copy)
{
    ls_program *p = pf_sample("shared_constant");
    ls_history h;
    pf_lower(p, NULL, &h);
    char got[512];
    holders(&h, "partition", NULL, "c", got, sizeof got);
    ck_assert_str_eq(got, "top:c:c"); /* no copy yet */
    holders(&h, "duplicate_constants", NULL, "c", got, sizeof got);
    ck_assert_str_eq(got, "top:c_copy_0:c_copy_0,top:c:c");
    holders(&h, "duplicate_constants", NULL, "c_copy_0", got, sizeof got);
    ck_assert_str_eq(got, "top:c_copy_0:c_copy_0,top:c:c");
    holders(&h, "to_backend", NULL, "c", got, sizeof got);
    ck_assert_str_eq(got, "top:c:c,lowered_module_0:c_copy_0:c_copy_0");
    holders(&h, "to_backend", "lowered_module_0", "c_copy_0", got, sizeof got);
    ck_assert_str_eq(got, "top:c:c,lowered_module_0:c_copy_0:c_copy_0");
    /* a user input holds no data: nobody */
    holders(&h, "to_backend", NULL, "x", got, sizeof got);
    ck_assert_str_eq(got, "");
    ls_history_free(&h);
    ls_program_unref(p);
}
END_TEST

START_TEST(cli_node_held_by)
{
    const char *f = tu_root("samples/shared_constant.pt2");
    char *out;
    int rc = tu_runf(&out, "node %s c --step duplicate_constants", f);
    ck_assert_msg(rc == 0, "%s", out);
    ck_assert_msg(tu_contains(out, "step 4 duplicate_constants (bundled): node c\n"), "%s", out);
    ck_assert_msg(tu_contains(out, "spec      tensor_constant · target c\n"), "%s", out);
    ck_assert_msg(tu_contains(out, "values    [0.5, -1, 2, 0.25]\n"), "%s", out); /* scenarios.py's values */
    ck_assert_msg(tu_contains(out, "held by (same target or the same bytes)\n"
                                   "  program   placeholder target\n"
                                   "  top level c_copy_0    c_copy_0\n"
                                   "  top level c           c\n"),
                  "%s", out);
    ck_assert_msg(tu_contains(out, "users (1)\n  aten_atan2_default atan2\n"), "%s", out); /* the CPU's reader */
    free(out);
    /* after to_backend, by the name inside the module and by SUB/NAME: the same */
    rc = tu_runf(&out, "node %s c_copy_0 --step to_backend", f);
    ck_assert_msg(rc == 0, "%s", out);
    ck_assert_msg(tu_contains(out, "node lowered_module_0/c_copy_0\n"), "%s", out);
    ck_assert_msg(tu_contains(out, "where     inside lowered_module_0: delegated to BundledBackend\n"), "%s", out);
    ck_assert_msg(tu_contains(out, "  top level        c           c\n"
                                   "  lowered_module_0 c_copy_0    c_copy_0\n"),
                  "%s", out);
    char *out2;
    rc = tu_runf(&out2, "node %s lowered_module_0/c_copy_0 --step to_backend", f);
    ck_assert_int_eq(rc, 0);
    ck_assert_str_eq(out, out2);
    free(out);
    free(out2);
    /* the CPU's reader: why it stays there */
    rc = tu_runf(&out, "node %s aten_atan2_default --step partition", f);
    ck_assert_msg(rc == 0, "%s", out);
    ck_assert_msg(tu_contains(out, "why       CPU: "), "%s", out);
    free(out);
}
END_TEST

START_TEST(cli_node_json_agrees)
{
    const char *f = tu_root("samples/shared_constant.pt2");
    char *out;
    int rc = tu_runf(&out, "node %s c --step to_backend --json", f);
    ck_assert_msg(rc == 0, "%s", out);
    cJSON *j = cJSON_Parse(out);
    ck_assert_msg(j, "not JSON: %s", out);
    ck_assert_int_eq(cJSON_GetObjectItem(j, "format_version")->valueint, 1);
    ck_assert_str_eq(cJSON_GetObjectItem(j, "name")->valuestring, "c");
    ck_assert(cJSON_IsNull(cJSON_GetObjectItem(j, "lowered_module")));
    cJSON *held = cJSON_GetObjectItem(j, "held_by");
    ck_assert_int_eq(cJSON_GetArraySize(held), 2);
    ck_assert(cJSON_IsNull(cJSON_GetObjectItem(cJSON_GetArrayItem(held, 0), "program")));
    ck_assert_str_eq(cJSON_GetObjectItem(cJSON_GetArrayItem(held, 0), "placeholder")->valuestring, "c");
    ck_assert_str_eq(cJSON_GetObjectItem(cJSON_GetArrayItem(held, 1), "program")->valuestring, "lowered_module_0");
    ck_assert_str_eq(cJSON_GetObjectItem(cJSON_GetArrayItem(held, 1), "target")->valuestring, "c_copy_0");
    cJSON *spec = cJSON_GetObjectItem(j, "input_spec");
    ck_assert_str_eq(cJSON_GetObjectItem(spec, "kind")->valuestring, "tensor_constant");
    cJSON *data = cJSON_GetObjectItem(spec, "data");
    ck_assert_int_eq(cJSON_GetObjectItem(data, "bytes")->valueint, 16); /* float32[4] */
    /* the text says the same hash and values */
    char *text;
    rc = tu_runf(&text, "node %s c --step to_backend", f);
    ck_assert_int_eq(rc, 0);
    char line[256];
    snprintf(line, sizeof line, "data      float32[4] · 16 B · hash %s\n", cJSON_GetObjectItem(data, "hash")->valuestring);
    ck_assert_msg(tu_contains(text, line), "%s\n%s", line, text);
    snprintf(line, sizeof line, "values    %s\n", cJSON_GetObjectItem(data, "values")->valuestring);
    ck_assert_msg(tu_contains(text, line), "%s\n%s", line, text);
    /* and the same users */
    cJSON *users = cJSON_GetObjectItem(j, "users");
    snprintf(line, sizeof line, "users (%d)\n", cJSON_GetArraySize(users));
    ck_assert_msg(tu_contains(text, line), "%s", text);
    ck_assert_int_eq(cJSON_GetArraySize(users), 1);
    free(text);
    cJSON_Delete(j);
    free(out);
}
END_TEST

/* A real export's metadata (torch's v1 JSON of examples/models/toy_model's `input * other`):
 * the stack trace and source_fn as the file has them, as text and JSON. */
START_TEST(cli_node_stack_and_source_fn)
{
    const char *f = tu_shared("data/pt2/exported_program_schema_v1_mul.json");
    if (!f) return;
    char *out;
    int rc = tu_runf(&out, "node %s mul --step 0", f);
    ck_assert_msg(rc == 0, "%s", out);
    ck_assert_msg(tu_contains(out, "source_fn mul,_operator.mul\n"), "%s", out);
    ck_assert_msg(tu_contains(out, "toy_model/model.py\", line 18, in forward\n"), "%s", out);
    ck_assert_msg(tu_contains(out, "return input * other\n"), "%s", out);
    ck_assert_msg(tu_contains(out, "arguments\n  self               arg0_1             float32[3, 2]\n"), "%s", out);
    free(out);
    rc = tu_runf(&out, "node %s mul --step 0 --json", f);
    ck_assert_int_eq(rc, 0);
    cJSON *j = cJSON_Parse(out);
    ck_assert_msg(j, "not JSON: %s", out);
    ck_assert_str_eq(cJSON_GetObjectItem(j, "source_fn")->valuestring, "mul,_operator.mul");
    ck_assert(strstr(cJSON_GetObjectItem(j, "stack_trace")->valuestring, "line 18, in forward"));
    ck_assert_str_eq(cJSON_GetObjectItem(cJSON_GetObjectItem(j, "output"), "kind")->valuestring, "user_output");
    ck_assert_int_eq(cJSON_GetArraySize(cJSON_GetObjectItem(j, "arguments")), 2);
    cJSON_Delete(j);
    free(out);
}
END_TEST

/* A delegate call whose blob lowerscope cannot read (a real OpenVINO .pte): what the pane says of
 * it, from the blob itself (backend.h's generic facts: its size, its first bytes). */
/* What the step did to the node, first, as the node pane has it: changed, where it runs, now /
 * was; an added node says so and has no was. The UI's pane for the same node says the same. */
START_TEST(cli_node_says_what_the_step_did)
{
    const char *sc = tu_root("samples/shared_constant.pt2");
    char *out;
    ck_assert_int_eq(tu_runf(&out, "node %s aten_mul_tensor --step partition", sc), 0);
    ck_assert_msg(tu_contains(out, "node aten_mul_tensor\nstatus    changed by this step\n"
                                   "tag       tag1 → BundledBackend (delegated)\n"
                                   "now       edge.aten.mul.Tensor(aten_add_tensor, c) [tag1]\n"
                                   "was:      edge.aten.mul.Tensor(aten_add_tensor, c)\nkind "),
                  "%s", out);
    free(out);
    /* the JSON has the same facts (text and JSON are printed from one gathering) */
    ck_assert_int_eq(tu_runf(&out, "node %s aten_mul_tensor --step partition --json", sc), 0);
    cJSON *j = cJSON_Parse(out);
    ck_assert_msg(j, "%s", out);
    ck_assert_str_eq(cJSON_GetObjectItem(j, "status")->valuestring, "changed");
    ck_assert_str_eq(cJSON_GetObjectItem(j, "now")->valuestring, "edge.aten.mul.Tensor(aten_add_tensor, c) [tag1]");
    ck_assert_str_eq(cJSON_GetObjectItem(j, "was")->valuestring, "edge.aten.mul.Tensor(aten_add_tensor, c)");
    cJSON_Delete(j);
    free(out);
    ck_assert_int_eq(tu_runf(&out, "node %s c_copy_0 --step duplicate_constants", sc), 0);
    ck_assert_msg(tu_contains(out, "status    added by this step\n") && !tu_contains(out, "was:"), "%s", out);
    free(out);
    ck_assert_int_eq(tu_runf(&out, "node %s aten_mul_tensor --step fold_masks", sc), 0); /* a step that changes nothing */
    ck_assert_msg(!tu_contains(out, "status "), "%s", out);
    free(out);
}
END_TEST

START_TEST(cli_node_opaque_delegate)
{
    const char *f = tu_shared("data/pte/djl_openvino_tiny.pte");
    if (!f) return;
    char *out;
    int rc = tu_runf(&out, "node %s lowered_module_0 --json", f);
    ck_assert_msg(rc == 0, "%s", out);
    cJSON *j = cJSON_Parse(out);
    ck_assert_msg(j, "not JSON: %s", out);
    cJSON *runs = cJSON_GetObjectItem(j, "runs");
    ck_assert_str_eq(cJSON_GetObjectItem(runs, "on")->valuestring, "delegate");
    ck_assert_str_eq(cJSON_GetObjectItem(runs, "backend")->valuestring, "OpenvinoBackend");
    ck_assert(cJSON_IsNull(cJSON_GetObjectItem(runs, "nodes")));
    cJSON *facts = cJSON_GetObjectItem(runs, "facts");
    ck_assert_int_gt(cJSON_GetArraySize(facts), 0);
    ck_assert_str_eq(cJSON_GetObjectItem(cJSON_GetArrayItem(facts, 0), "label")->valuestring, "blob");
    char *text;
    ck_assert_int_eq(tu_runf(&text, "node %s lowered_module_0", f), 0);
    char line[512];
    snprintf(line, sizeof line, "blob      %s\n", cJSON_GetObjectItem(cJSON_GetArrayItem(facts, 0), "text")->valuestring);
    ck_assert_msg(tu_contains(text, line), "%s\n%s", line, text);
    ck_assert_msg(tu_contains(text, "its blob is opaque to lowerscope\n"), "%s", text);
    free(text);
    cJSON_Delete(j);
    free(out);
}
END_TEST

START_TEST(cli_node_refuses_bad_names)
{
    const char *f = tu_root("samples/shared_constant.pt2");
    char *out;
    int rc = tu_runf(&out, "node %s nope", f);
    ck_assert_int_eq(rc, 2);
    ck_assert_msg(tu_contains(out, "no node `nope` at step 8 emit"), "%s", out);
    free(out);
    /* c_copy_0 does not exist before duplicate_constants */
    rc = tu_runf(&out, "node %s c_copy_0 --step partition", f);
    ck_assert_int_eq(rc, 2);
    ck_assert_msg(tu_contains(out, "no node `c_copy_0` at step 2 partition"), "%s", out);
    free(out);
    rc = tu_runf(&out, "node %s lowered_module_9/c_copy_0", f);
    ck_assert_int_eq(rc, 2);
    ck_assert_msg(tu_contains(out, "lowered_module_9/c_copy_0"), "%s", out);
    free(out);
    rc = tu_runf(&out, "node %s", f);
    ck_assert_int_eq(rc, 2);
    ck_assert_msg(tu_contains(out, "which node?"), "%s", out);
    free(out);
    rc = tu_runf(&out, "node %s c x", f);
    ck_assert_int_eq(rc, 2);
    ck_assert_msg(tu_contains(out, "one NAME at a time"), "%s", out);
    free(out);
    /* an option node does not have, with a value: named as such (the value was taken for a
     * second NAME); after a flag it knows, a word is a second NAME */
    rc = tu_runf(&out, "node %s c --depth 999", f);
    ck_assert_int_eq(rc, 2);
    ck_assert_msg(tu_contains(out, "unknown option or missing value '--depth'") && !tu_contains(out, "NAME at a time"), "%s", out);
    free(out);
    rc = tu_runf(&out, "node %s c --json x", f);
    ck_assert_int_eq(rc, 2);
    ck_assert_msg(tu_contains(out, "one NAME at a time ('x'"), "%s", out);
    free(out);
    rc = tu_runf(&out, "node %s c --step 99", f);
    ck_assert_int_eq(rc, 2);
    free(out);
}
END_TEST

Suite *node_suite(void)
{
    Suite *s = suite_create("node");
    TCase *tc = tcase_create("node");
    tcase_set_timeout(tc, 60);
    tcase_add_test(tc, held_by_follows_the_copy);
    tcase_add_test(tc, cli_node_held_by);
    tcase_add_test(tc, cli_node_json_agrees);
    tcase_add_test(tc, cli_node_stack_and_source_fn);
    tcase_add_test(tc, cli_node_opaque_delegate);
    tcase_add_test(tc, cli_node_says_what_the_step_did);
    tcase_add_test(tc, cli_node_refuses_bad_names);
    suite_add_tcase(s, tc);
    return s;
}
