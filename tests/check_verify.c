/* Tests of the verifier: torch's signature checks with their wording, the graph checks, the
 * "listed twice" and dialect errors, submodules, metadata-only programs, and the verify command's
 * exit codes. Programs come from tests/programs or are changed here in C. */
#include <check.h>
#include <cjson/cJSON.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "ops.h"
#include "program.h"
#include "progfixtures.h"
#include "reader.h"
#include "testutil.h"
#include "verify.h"

/* The findings of p, checked to hold `text` in an error of submodule `program` (NULL: the top level). */
static void expect_error(const ls_program *p, const char *text, const char *program)
{
    ls_verify_result vr;
    ls_verify(p, &vr);
    bool found = false;
    for (uint32_t i = 0; i < vr.n; i++)
        if (vr.v[i].severity == LS_SEV_ERROR && strstr(vr.v[i].msg, text) &&
            ((!program && !vr.v[i].program) || (program && vr.v[i].program && strcmp(program, vr.v[i].program) == 0)))
            found = true;
    ls_buf all = {0};
    for (uint32_t i = 0; i < vr.n; i++) ls_buf_printf(&all, "[%s] %s\n", vr.v[i].program ? vr.v[i].program : "-", vr.v[i].msg);
    ck_assert_msg(found, "no error with '%s'; findings:\n%s", text, all.s ? all.s : "(none)");
    ck_assert_uint_ge(vr.n_errors, 1);
    ls_buf_free(&all);
    ls_verify_result_free(&vr);
}

static void expect_clean(const ls_program *p)
{
    ls_verify_result vr;
    ls_verify(p, &vr);
    ck_assert_msg(vr.n_errors == 0, "unexpected: %s", vr.n ? vr.v[0].msg : "");
    ls_verify_result_free(&vr);
}

START_TEST(valid_programs_have_no_findings)
{
    ls_program *p = pf_load(tu_root("tests/programs/base.pt2"));
    ls_verify_result vr;
    ls_verify(p, &vr);
    ck_assert_uint_eq(vr.n, 0);
    ls_verify_result_free(&vr);
    ls_program_unref(p);
    const char *linear = tu_shared("data/pt2/et_pt2_archive_test_linear.pt2");
    if (linear) {
        ls_error err;
        ck_assert_int_eq(ls_load(linear, NULL, &p, &err), 0);
        expect_clean(p);
        ls_program_unref(p);
    }
}
END_TEST

START_TEST(target_listed_twice)
{
    ls_program *p = pf_load(tu_root("tests/programs/listed_twice.json"));
    expect_error(p, "`c` is not a buffer", NULL);
    expect_error(p, "placeholders 'c_c_copy_0' and 'c_c'", NULL);
    ls_program_unref(p);
    /* the same made in C: a second buffer spec on the base program's parameter target is fine,
     * a second constant spec with one target is not */
    p = pf_load(tu_root("tests/programs/base.json"));
    ls_program *q = ls_program_copy(p);
    ls_node *c1 = ls_node_new(q, LS_NODE_PLACEHOLDER, "c_k", "c_k");
    ls_node *c2 = ls_node_new(q, LS_NODE_PLACEHOLDER, "c_k_copy_0", "c_k_copy_0");
    ls_program_insert(q, 0, c1);
    ls_program_insert(q, 0, c2);
    ls_input_spec specs[8];
    specs[0] = (ls_input_spec){.kind = LS_IN_CONSTANT_TENSOR, .name = ls_intern("c_k_copy_0"), .target = ls_intern("k")};
    specs[1] = (ls_input_spec){.kind = LS_IN_CONSTANT_TENSOR, .name = ls_intern("c_k"), .target = ls_intern("k")};
    for (uint32_t i = 0; i < p->n_inputs; i++) specs[2 + i] = p->inputs[i];
    ls_program_set_inputs(q, specs, p->n_inputs + 2);
    ls_program_put_constant(q, "k", NULL, p->state_dict[0].meta);
    expect_error(q, "`k` is not a buffer", NULL);
    ls_program_unref(q);
    ls_program_unref(p);
}
END_TEST

START_TEST(edge_op_in_aten_program)
{
    ls_program *p = pf_load(tu_root("tests/programs/edge_in_aten.json"));
    expect_error(p, "Operator 'executorch.exir.dialects.edge.ops.aten.clone.default' is not an allowed operator type", NULL);
    ls_program_unref(p);
    /* and the other way: an ATen add in an Edge program */
    p = pf_load(tu_root("tests/programs/base.json"));
    p->dialect = LS_DIALECT_EDGE;
    p->verifier = ls_intern("EDGE");
    expect_error(p, "holds an ATen op", NULL);
    ls_program_unref(p);
}
END_TEST

START_TEST(mutation_must_point_to_a_buffer)
{
    ls_program *p = pf_load(tu_root("tests/programs/mutation_without_buffer.json"));
    expect_error(p,
                 "Buffer output add does not point to a buffer that exists. Dict of buffers that are mutated, in order: "
                 "{'add': 'state_1'}. Buffer nodes available: []",
                 NULL);
    ls_program_unref(p);
}
END_TEST

START_TEST(graph_checks)
{
    ls_program *p = pf_load(tu_root("tests/programs/base.json"));
    /* an argument naming a later node */
    ls_program *q = ls_program_copy(p);
    int32_t add = ls_program_find(q, "add"), add1 = ls_program_find(q, "add_1");
    ls_node *n = ls_program_edit(q, (uint32_t)add);
    n->args[1].v.node = q->nodes[add1]->id;
    expect_error(q, "node 'add' argument 'other': 'add_1' is not defined before it", NULL);
    ls_program_unref(q);
    /* placeholders and specs disagree */
    q = ls_program_copy(p);
    ls_program_set_inputs(q, p->inputs, 1);
    expect_error(q, "Number of graph inputs (2) does not match number of inputs in the graph signature (1)", NULL);
    expect_error(q, "Placeholders missing input_specs: ['x']", NULL);
    ls_program_unref(q);
    q = ls_program_copy(p);
    ls_input_spec sw[2] = {p->inputs[1], p->inputs[0]};
    ls_program_set_inputs(q, sw, 2);
    expect_error(q, "Input spec name x does not match node name p_w", NULL);
    ls_program_unref(q);
    /* a parameter whose target is not in the state dict */
    q = ls_program_copy(p);
    ls_program_drop_state(q, "w");
    expect_error(q, "Parameter w is not in the state dict.", NULL);
    ls_program_unref(q);
    /* outputs and output specs disagree */
    q = ls_program_copy(p);
    ls_output_spec two[2] = {p->outputs[0], p->outputs[0]};
    ls_program_set_outputs(q, two, 2);
    expect_error(q, "Number of output nodes 1 is different Than the number of outputs specified by the graph signature: 2", NULL);
    ls_program_unref(q);
    /* the last node is not the output */
    q = ls_program_copy(p);
    ls_program_remove(q, q->n_nodes - 1);
    expect_error(q, "last node must be output, got call_function", NULL);
    ls_program_unref(q);
    ls_program_unref(p);
}
END_TEST

START_TEST(data_checks_only_with_weights)
{
    /* metadata only: the state entry has no tensor, nothing is said about data */
    ls_program *p = pf_load(tu_root("tests/programs/base.json"));
    ck_assert(!p->has_weights);
    expect_clean(p);
    ls_program_unref(p);
    /* with data: a tensor of the wrong shape is an error */
    p = pf_load(tu_root("tests/programs/base.pt2"));
    int64_t three = 3;
    ls_tensor *t = ls_tensor_alloc(LS_DT_F32, 1, &three);
    ls_program_put_state(p, "w", t, NULL);
    ls_tensor_unref(t);
    expect_error(p, "Parameter w holds float32[3] but its placeholder 'p_w' says float32[4]", NULL);
    ls_program_unref(p);
}
END_TEST

START_TEST(submodules_are_verified_by_name)
{
    ls_program *p = pf_load(tu_root("tests/programs/lowered.json"));
    expect_clean(p);
    /* break the submodule: its findings carry its name */
    ls_submodule *sub = ls_program_sub(p, "lowered_module_0");
    ls_program *inner = ls_program_copy(sub->program);
    ls_program_set_outputs(inner, NULL, 0);
    ls_program_unref(sub->program);
    sub->program = inner;
    expect_error(p, "Number of output nodes 1 is different", "lowered_module_0");
    ls_program_unref(p);
}
END_TEST

/* A program loaded without its weights lowers up to the step that needs them: to_backend, whose
 * preprocess writes the constants into the blob, stops as a need (exit 3, the module and
 * placeholder named once), not as a failed pass (it exited 1, naming the backend twice). */
START_TEST(lowering_without_weights_is_a_need)
{
    char *out;
    int rc = tu_runf(&out, "passes %s --metadata-only", tu_root("samples/kv_cache.pt2"));
    ck_assert_msg(rc == 3, "exit %d: %s", rc, out);
    ck_assert_msg(tu_contains(out, "✗ BundledBackend: preprocess `lowered_module_0`: placeholder b_cache: 'cache' has no data "
                                   "(the program was loaded without weights: --metadata-only"),
                  "%s", out);
    ck_assert_msg(!tu_contains(out, "BundledBackend preprocess: BundledBackend"), "%s", out);
    const char *stopped = strstr(out, "step 5 to_backend (bundled): 8 nodes, no node changed"); /* then its time, if any */
    ck_assert_msg(stopped && strstr(stopped, "STOPPED: it needs what lowerscope lacks (exit 3)\n  ✗ BundledBackend"), "%s", out);
    ck_assert_msg(tu_contains(out, "step 4 duplicate_constants (bundled): 8 nodes"), "the steps before it ran: %s", out);
    free(out);
    rc = tu_runf(&out, "partitions %s --metadata-only", tu_root("samples/kv_cache.pt2"));
    ck_assert_msg(rc == 3 && tu_contains(out, "step 5 to_backend failed"), "exit %d: %s", rc, out);
    free(out);
    /* and running one is the same need (it exited 2, as for a bad file) */
    rc = tu_runf(&out, "run %s", tu_root("tests/programs/base.json"));
    ck_assert_msg(rc == 3 && tu_contains(out, "the program was loaded without weight data: parameter 'w'"), "exit %d: %s",
                  rc, out);
    free(out);
    /* exporting a step before emit, which runs emit for it: the same need, emit named once (it
     * exited 2 saying "emit: emit:") */
    char pte[600];
    snprintf(pte, sizeof pte, "%s/w.pte", tu_tmpdir());
    rc = tu_runf(&out, "export %s -o %s --step 1", tu_root("tests/programs/base.json"), pte);
    ck_assert_msg(rc == 3 && tu_contains(out, ": emit: node `p_w`: parameter `w` has no data") && !tu_contains(out, "emit: emit:"),
                  "exit %d: %s", rc, out);
    free(out);
    /* as the reference too (it exited 2) */
    rc = tu_runf(&out, "run %s --compare-with %s", tu_root("samples/kv_cache.pt2"), tu_root("tests/programs/base.json"));
    ck_assert_msg(rc == 3 && tu_contains(out, "loaded without weight data: it cannot run as the reference"), "exit %d: %s",
                  rc, out);
    free(out);
    /* --json: a document that says it did not run, with the exit code (stdout after stderr's line) */
    rc = tu_runf(&out, "run %s --json", tu_root("tests/programs/base.json"));
    const char *doc = out[0] == '{' ? out : strstr(out, "\n{");
    cJSON *j = doc ? cJSON_Parse(doc) : NULL;
    const cJSON *nr = cJSON_GetObjectItem(j, "not_run"), *ex = cJSON_GetObjectItem(j, "exit");
    ck_assert_msg(rc == 3 && cJSON_IsString(nr) && strstr(nr->valuestring, "loaded without weight data") && ex &&
                      ex->valueint == 3 && cJSON_GetArraySize(cJSON_GetObjectItem(j, "runs")) == 0,
                  "exit %d: %s", rc, out);
    cJSON_Delete(j);
    free(out);
}
END_TEST

START_TEST(verify_command_exit_codes)
{
    char *out = NULL;
    const char *ok[] = {"verify", tu_root("tests/programs/base.pt2"), NULL};
    ck_assert_int_eq(tu_run(&out, ok), 0);
    ck_assert(tu_contains(out, "valid"));
    free(out);
    const char *bad[] = {"verify", tu_root("tests/programs/listed_twice.json"), NULL};
    ck_assert_int_eq(tu_run(&out, bad), 1);
    ck_assert(tu_contains(out, "error: `c` is not a buffer"));
    ck_assert(tu_contains(out, "invalid: 1 error"));
    free(out);
    const char *unreadable[] = {"verify", tu_root("tests/corpus/undefined_value.json"), NULL};
    ck_assert_int_eq(tu_run(&out, unreadable), 2);
    ck_assert(tu_contains(out, "'x2' is not defined before it"));
    free(out);
    const char *none[] = {"verify", NULL};
    ck_assert_int_eq(tu_run(&out, none), 2);
    free(out);
    /* a --data file that is not there: refused first, before the .pte is said to load */
    char pte[600];
    snprintf(pte, sizeof pte, "%s/v.pte", tu_tmpdir());
    ck_assert_int_eq(tu_runf(&out, "export %s -o %s --force", tu_root("samples/shared_constant.pt2"), pte), 0);
    free(out);
    ck_assert_int_eq(tu_runf(&out, "verify %s --data /nonexistent/w.ptd", pte), 2);
    ck_assert_msg(tu_contains(out, "/nonexistent/w.ptd: cannot read it (No such file or directory)") &&
                      !tu_contains(out, "runtime loads it"),
                  "%s", out);
    free(out);
    ck_assert_int_eq(tu_runf(&out, "verify %s --data %s", pte, tu_tmpdir()), 2); /* a folder too */
    ck_assert_msg(tu_contains(out, "cannot read it (a folder)") && !tu_contains(out, "runtime loads it"), "%s", out);
    free(out);
    /* a file that is not a .ptd (the .pte itself): refused before the .pte is said to load */
    ck_assert_int_eq(tu_runf(&out, "verify %s --data %s", pte, pte), 2);
    ck_assert_msg(tu_contains(out, "not an ExecuTorch data file (no \"FT01\" identifier at byte 4)") &&
                      !tu_contains(out, "runtime loads it"),
                  "%s", out);
    free(out);
}
END_TEST

Suite *verify_suite(void)
{
    Suite *s = suite_create("verify");
    TCase *tc = tcase_create("verify");
    tcase_set_timeout(tc, 30);
    tcase_add_test(tc, valid_programs_have_no_findings);
    tcase_add_test(tc, target_listed_twice);
    tcase_add_test(tc, edge_op_in_aten_program);
    tcase_add_test(tc, mutation_must_point_to_a_buffer);
    tcase_add_test(tc, graph_checks);
    tcase_add_test(tc, data_checks_only_with_weights);
    tcase_add_test(tc, submodules_are_verified_by_name);
    tcase_add_test(tc, verify_command_exit_codes);
    tcase_add_test(tc, lowering_without_weights_is_a_need);
    suite_add_tcase(s, tc);
    return s;
}
