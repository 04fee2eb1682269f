/* Tests of --ops FILE (ops.h: ls_op_register, ls_ops_load_file): custom operators typed like the
 * table's own, an out variant for to_out_variant and emit, shown but never run; without the file
 * to_out_variant stops as ExecuTorch's ToOutVarPass does, "Missing out variants: {...}". The CLI
 * tests run the binary, so a registration never leaks into another test. */
#include <check.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "ops.h"
#include "pte.h"
#include "testutil.h"

/* tests/programs/tagged.json calls torch.ops.mylib.frobnicate.default(input, scale=0.5) */
static const char OPS[] = "# the custom op of tests/programs/tagged.json\n"
                          "mylib::frobnicate(Tensor input, float scale) -> Tensor\n"
                          "\n"
                          "mylib::frobnicate.out(Tensor input, float scale, *, Tensor(a!) out) -> Tensor(a!)\n";

static const char *write_ops(const char *text)
{
    static char path[4200];
    snprintf(path, sizeof path, "%s/ops.txt", tu_tmpdir());
    ls_error err;
    ck_assert_msg(ls_write_file_atomic(path, text, strlen(text), &err) == 0, "%s", err.msg);
    return path;
}

START_TEST(without_ops_to_out_variant_stops_as_executorch)
{
    char *out;
    int rc = tu_runf(&out, "passes %s", tu_root("tests/programs/tagged.json"));
    ck_assert_msg(rc == 3, "exit %d: %s", rc, out);
    ck_assert_msg(tu_contains(out, "Missing out variants: {'mylib::frobnicate'}"), "%s", out);
    free(out);
    /* every command that shows that step says it failed, with passes' exit (they said nothing and
     * exited 0); the step before it shows as it was */
    static const char *const cmds[] = {"graph %s", "graph %s --json", "diff %s --step 6", "node %s frobnicate --step 6",
                                       "partitions %s --step 6", "graph %s --around frobnicate"};
    for (size_t i = 0; i < sizeof cmds / sizeof cmds[0]; i++) {
        rc = tu_runf(&out, cmds[i], tu_root("tests/programs/tagged.json"));
        ck_assert_msg(rc == 3, "%s: exit %d: %s", cmds[i], rc, out);
        ck_assert_msg(tu_contains(out, "step 6 to_out_variant failed: Missing out variants") &&
                          tu_contains(out, "what is shown is the program before it"),
                      "%s: %s", cmds[i], out);
        free(out);
    }
    rc = tu_runf(&out, "diff %s --step 5", tu_root("tests/programs/tagged.json")); /* steps that did not fail */
    ck_assert_msg(rc == 0 && !tu_contains(out, "failed"), "exit %d: %s", rc, out);
    free(out);
}
END_TEST

START_TEST(with_ops_it_lowers_exports_and_is_refused_to_run)
{
    char ops[4200], pte[4200];
    snprintf(ops, sizeof ops, "%s", write_ops(OPS));
    snprintf(pte, sizeof pte, "%s/frob.pte", tu_tmpdir());
    const char *prog = tu_root("tests/programs/tagged.json");
    char progc[4200];
    snprintf(progc, sizeof progc, "%s", prog);
    char *out;
    ck_assert_int_eq(tu_runf(&out, "passes %s --ops %s", progc, ops), 0);
    free(out);
    int rc = tu_runf(&out, "export %s --ops %s -o %s", progc, ops, pte);
    ck_assert_msg(rc == 0, "%s", out);
    free(out);
    /* the file names the out variant as ExecuTorch would register it */
    ls_pte p;
    ls_error err;
    ck_assert_msg(ls_pte_read_file(pte, &p, &err) == 0, "%s", err.msg);
    bool found = false;
    for (uint32_t i = 0; i < p.execution_plan.v[0].operators.n; i++) {
        const ls_pte_operator *o = &p.execution_plan.v[0].operators.v[i];
        found |= !strcmp(o->name, "mylib::frobnicate") && !strcmp(o->overload, "out");
    }
    ck_assert(found);
    ls_pte_free(&p);
    /* read back with the schemas, the call is typed; without them it is unknown */
    ck_assert_int_eq(tu_runf(&out, "info %s --ops %s", pte, ops), 0);
    ck_assert_msg(tu_contains(out, "frobnicate 1") && !tu_contains(out, "unknown"), "%s", out);
    free(out);
    ck_assert_int_eq(tu_runf(&out, "info %s", pte), 0);
    ck_assert_msg(tu_contains(out, "mylib::frobnicate.out"), "%s", out);
    free(out);
    /* shown, never run: the run names the operator, exit 3 */
    rc = tu_runf(&out, "run %s --ops %s", progc, ops);
    ck_assert_msg(rc == 3 && tu_contains(out, "needs a kernel for mylib.frobnicate.default"), "exit %d: %s", rc, out);
    free(out);
}
END_TEST

/* An --ops schema that does not fit the call (it names `x` where the file passes `input` and
 * `scale`): the node stays an unknown op, and the verifier says why (it said "valid, 0 warnings"
 * while passes blamed a missing out variant that the file declares). */
START_TEST(a_schema_that_does_not_fit_is_a_warning)
{
    char ops[512];
    snprintf(ops, sizeof ops, "%s/misfit.txt", tu_tmpdir());
    static const char misfit[] = "mylib::frobnicate(Tensor x) -> Tensor\n"
                                 "mylib::frobnicate.out(Tensor x, *, Tensor(a!) out) -> Tensor(a!)\n";
    ls_error err;
    ck_assert_int_eq(ls_write_file_atomic(ops, misfit, sizeof misfit - 1, &err), 0);
    char *out;
    int rc = tu_runf(&out, "verify %s --ops %s", tu_root("tests/programs/tagged.json"), ops);
    ck_assert_msg(rc == 0, "exit %d: %s", rc, out);
    ck_assert_msg(tu_contains(out, "warning: node 'frobnicate' (torch.ops.mylib.frobnicate.default): arguments do not fit "
                                   "the schema lowerscope has for it (its own, or an --ops file's): argument 'input' is "
                                   "not in the schema of mylib.frobnicate.default; it is kept as an unknown op"),
                  "%s", out);
    ck_assert_msg(tu_contains(out, "valid: 5 nodes, 1 warning"), "%s", out);
    free(out);
    rc = tu_runf(&out, "verify %s --ops %s", tu_root("tests/programs/tagged.json"), write_ops(OPS)); /* the fitting one */
    ck_assert_msg(rc == 0 && tu_contains(out, "0 warnings"), "exit %d: %s", rc, out);
    free(out);
}
END_TEST

START_TEST(bad_ops_files_name_the_line)
{
    char *out;
    const char *ops = write_ops("mylib::ok(Tensor x) -> Tensor\nnot a schema\n");
    char opsc[4200];
    snprintf(opsc, sizeof opsc, "%s", ops);
    int rc = tu_runf(&out, "info %s --ops %s", tu_root("tests/programs/tagged.json"), opsc);
    ck_assert_msg(rc == 2 && tu_contains(out, "ops.txt: line 2") && tu_contains(out, "namespace::name"), "exit %d: %s", rc, out);
    free(out);
    rc = tu_runf(&out, "info %s --ops /nonexistent/ops.txt", tu_root("tests/programs/tagged.json"));
    ck_assert_int_eq(rc, 2);
    free(out);
}
END_TEST

/* In this test's own process (Check forks one per test). */
START_TEST(registered_schemas_join_the_table)
{
    ls_error err;
    ck_assert_msg(ls_op_register("my_ops::foo(Tensor x, float s) -> Tensor", &err) == 0, "%s", err.msg);
    const ls_op *op = ls_op_find("my_ops", "foo", NULL);
    ck_assert_ptr_nonnull(op);
    ck_assert(op->flags & LS_OPF_CUSTOM);
    ck_assert_int_eq(op->schema.nparams, 2);
    ck_assert_str_eq(op->schema.params[1].name, "s");
    ck_assert_int_eq(op->schema.params[1].type, LS_PT_FLOAT);
    ck_assert_ptr_null(op->out_overload);
    ck_assert_ptr_eq(ls_op_get(op->id), op);
    ck_assert(ls_op_register("my_ops::foo.out(Tensor x, float s, *, Tensor(a!) out) -> Tensor(a!)", &err) == 0);
    ck_assert_str_eq(op->out_overload, "out");
    ck_assert_ptr_eq(ls_op_from_out_variant("my_ops::foo", "out"), op);
    ls_dialect d;
    ck_assert_ptr_eq(ls_op_from_target("executorch.exir.dialects.edge.ops.my_ops.foo.out", &d), op);
    ck_assert_int_eq(d, LS_DIALECT_EXECUTORCH);
    ck_assert_int_ne(ls_op_register("my_ops::foo(Tensor x) -> Tensor", &err), 0);
    ck_assert_msg(tu_contains(err.msg, "already an operator"), "%s", err.msg);
    ck_assert_int_ne(ls_op_register("my_ops::bar.out(Tensor x, *, Tensor(a!) out) -> Tensor(a!)", &err), 0);
    ck_assert_msg(tu_contains(err.msg, "before (or without) its functional schema"), "%s", err.msg);
    ck_assert_int_ne(ls_op_register("aten::add.Tensor(Tensor self, Tensor other, *, Scalar alpha=1) -> Tensor", &err), 0);
}
END_TEST

Suite *custom_ops_suite(void)
{
    Suite *s = suite_create("custom_ops");
    TCase *tc = tcase_create("custom_ops");
    tcase_set_timeout(tc, 60);
    tcase_add_test(tc, without_ops_to_out_variant_stops_as_executorch);
    tcase_add_test(tc, with_ops_it_lowers_exports_and_is_refused_to_run);
    tcase_add_test(tc, bad_ops_files_name_the_line);
    tcase_add_test(tc, a_schema_that_does_not_fit_is_a_warning);
    tcase_add_test(tc, registered_schemas_join_the_table);
    suite_add_tcase(s, tc);
    return s;
}
