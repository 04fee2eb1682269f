/* constant_prop on the exir tests of exir-semantics §9 (18-25) and scenario D6: what folds,
 * `_prop_tensor_constantN` numbering and placement, constants nobody reads, and the dialect
 * of the clone a folded output gets. */
#include <check.h>
#include <stdlib.h>
#include <string.h>

#include "passtest.h"
#include "reader.h"
#include "testutil.h"

/* Test 18: p_a:[1, 2, 3]; x:[2, 2, 3]; b = add(a, a); c = cat([a, b]); d = add(c, c);
 * out = add(d, x) → one add left; specs [CONSTANT_TENSOR _prop_tensor_constant0, USER_INPUT x]. */
START_TEST(test18_graph_signature)
{
    int64_t s123[3] = {1, 2, 3}, s223[3] = {2, 2, 3};
    ls_builder *b = ls_builder_new("model", LS_DIALECT_ATEN);
    uint32_t a = pt_input(b, "p_a", LS_IN_PARAMETER, "a", true, LS_DT_F32, 3, s123);
    uint32_t x = pt_input(b, "x", LS_IN_USER_INPUT, NULL, false, LS_DT_F32, 3, s223);
    uint32_t bb = pt_bin(b, LS_OP_add_Tensor, a, a);
    ls_arg *args = calloc(2, sizeof *args);
    uint32_t ab[2] = {a, bb};
    args[0] = ls_arg_nodes(ab, 2, false);
    args[1] = ls_arg_int(0);
    ls_tmeta m = ls_meta(LS_DT_F32, 3, s223);
    uint32_t c = ls_build_call(b, NULL, LS_OP_cat, args, 2, &m);
    uint32_t d = pt_bin(b, LS_OP_add_Tensor, c, c);
    uint32_t out = pt_bin(b, LS_OP_add_Tensor, d, x);
    ls_build_output(b, &out, 1, NULL, NULL);
    ls_program *p = ls_builder_finish(b);
    ls_report rep = {0};
    ls_program *q = pt_run(ls_pass_constant_prop, p, NULL, &rep, NULL);
    ck_assert_ptr_nonnull(q);
    ck_assert_uint_eq(pt_count_op(q, LS_OP_add_Tensor), 1);
    ck_assert_uint_eq(pt_count_op(q, LS_OP_cat), 0);
    ck_assert_uint_eq(q->n_inputs, 2);
    ck_assert_int_eq(q->inputs[0].kind, LS_IN_CONSTANT_TENSOR);
    ck_assert_str_eq(q->inputs[0].name, "_prop_tensor_constant0");
    ck_assert_str_eq(q->inputs[0].target, "_prop_tensor_constant0");
    ck_assert(q->inputs[0].persistent);
    ck_assert_int_eq(q->inputs[1].kind, LS_IN_USER_INPUT);
    ck_assert_ptr_null(ls_program_state(q, "a"));
    /* a + a, cat, doubled: 4 * a for the first half, 2 * a + 2 * (2 * a)... values of d */
    const ls_tensor *v = ls_program_constant(q, "_prop_tensor_constant0")->t;
    ck_assert_int_eq(v->numel, 12);
    ck_assert_double_eq_tol(ls_tensor_get_f64(v, 0), 2 * 0.5, 1e-6);       /* 2 * a[0] */
    ck_assert_double_eq_tol(ls_tensor_get_f64(v, 6), 4 * 0.5, 1e-6);       /* 2 * (a + a)[0] */
    ck_assert(pt_report_has(&rep, "folded into `_prop_tensor_constant0` (float32[2, 2, 3])"));
    ck_assert(pt_report_has(&rep, "`p_a` removed"));
    ls_report_free(&rep);
    ls_program_unref(q);
    ls_program_unref(p);
}
END_TEST

/* Test 19: slice_copy of a parameter feeding cat with a user input → folded, no slice left. */
START_TEST(test19_parameter_slice)
{
    int64_t s322[3] = {3, 2, 2}, s122[3] = {1, 2, 2}, s222[3] = {2, 2, 2}, s322b[3] = {3, 2, 2};
    ls_builder *b = ls_builder_new("model", LS_DIALECT_EDGE);
    uint32_t a = pt_input(b, "p_a", LS_IN_PARAMETER, "a", true, LS_DT_F32, 3, s322);
    uint32_t x = pt_input(b, "x", LS_IN_USER_INPUT, NULL, false, LS_DT_F32, 3, s222);
    ls_arg *args = calloc(4, sizeof *args);
    args[0] = ls_arg_node(a);
    args[1] = ls_arg_int(0);
    args[2] = ls_arg_int(0);
    args[3] = ls_arg_int(1);
    ls_tmeta m = ls_meta(LS_DT_F32, 3, s122);
    uint32_t sl = ls_build_call(b, NULL, LS_OP_slice_copy_Tensor, args, 4, &m);
    args = calloc(2, sizeof *args);
    uint32_t xs[2] = {x, sl};
    args[0] = ls_arg_nodes(xs, 2, false);
    args[1] = ls_arg_int(0);
    m = ls_meta(LS_DT_F32, 3, s322b);
    uint32_t c = ls_build_call(b, NULL, LS_OP_cat, args, 2, &m);
    ls_build_output(b, &c, 1, NULL, NULL);
    ls_program *p = ls_builder_finish(b);
    pt_step(&p, ls_pass_constant_prop, NULL);
    ck_assert_ptr_nonnull(ls_program_constant(p, "_prop_tensor_constant0"));
    ck_assert_ptr_null(ls_program_state(p, "a"));
    ck_assert_uint_eq(pt_count_op(p, LS_OP_slice_copy_Tensor), 0);
    ck_assert_int_eq(ls_program_constant(p, "_prop_tensor_constant0")->t->numel, 4);
    ls_program_unref(p);
}
END_TEST

/* Test 20: add(x, a) with a user input: nothing folds; the unused input y stays. */
START_TEST(test20_no_propagate)
{
    int64_t s[3] = {3, 2, 4};
    ls_builder *b = ls_builder_new("model", LS_DIALECT_ATEN);
    uint32_t a = pt_input(b, "p_a", LS_IN_PARAMETER, "a", true, LS_DT_F32, 3, s);
    uint32_t x = pt_input(b, "x", LS_IN_USER_INPUT, NULL, false, LS_DT_F32, 3, s);
    pt_input(b, "y", LS_IN_USER_INPUT, NULL, false, LS_DT_F32, 3, s);
    uint32_t o = pt_bin(b, LS_OP_add_Tensor, x, a);
    ls_build_output(b, &o, 1, NULL, NULL);
    ls_program *p = ls_builder_finish(b);
    pt_step(&p, ls_pass_constant_prop, NULL);
    ck_assert_ptr_nonnull(ls_program_state(p, "a"));
    ck_assert_uint_eq(pt_count_kind(p, LS_NODE_PLACEHOLDER), 3);
    ck_assert_uint_eq(p->n_constants, 0);
    ls_program_unref(p);
}
END_TEST

/* Test 21: a persistent buffer from exir's lift pass (constants empty) through
 * _to_dim_order_copy → _prop_tensor_constant0 (K = size of `constants` = 0). */
START_TEST(test21_for_add)
{
    int64_t one = 1;
    ls_builder *b = ls_builder_new("model", LS_DIALECT_EDGE);
    uint32_t c = pt_input(b, "_lifted_tensor_constant0", LS_IN_BUFFER, "_lifted_tensor_constant0", true, LS_DT_F32, 1, &one);
    uint32_t x = pt_input(b, "x", LS_IN_USER_INPUT, NULL, false, LS_DT_F32, 1, &one);
    uint32_t cp = pt_unary(b, LS_OP__to_dim_order_copy, c);
    uint32_t o = pt_bin(b, LS_OP_add_Tensor, x, cp);
    ls_build_output(b, &o, 1, NULL, NULL);
    ls_program *p = ls_builder_finish(b);
    pt_step(&p, ls_pass_constant_prop, NULL);
    ck_assert_ptr_nonnull(pt_node(p, "_prop_tensor_constant0"));
    ck_assert_ptr_null(pt_node(p, "_lifted_tensor_constant0"));
    ck_assert_ptr_null(ls_program_state(p, "_lifted_tensor_constant0"));
    ck_assert_uint_eq(pt_count_op(p, LS_OP__to_dim_order_copy), 0);
    ls_program_unref(p);
}
END_TEST

/* Test 22 (convolution replaced by mm, which our table has): two lifted constants folded into
 * one result, named after the 2 constants that existed when it was made. */
START_TEST(test22_numbering_from_constants)
{
    int64_t s33[2] = {3, 3};
    ls_builder *b = ls_builder_new("model", LS_DIALECT_EDGE);
    uint32_t cst = pt_input(b, "c_cst", LS_IN_CONSTANT_TENSOR, "cst", true, LS_DT_F32, 2, s33);
    uint32_t w = pt_input(b, "c_w", LS_IN_CONSTANT_TENSOR, "w", true, LS_DT_F32, 2, s33);
    uint32_t x = pt_input(b, "x", LS_IN_USER_INPUT, NULL, false, LS_DT_F32, 2, s33);
    uint32_t mm = pt_bin(b, LS_OP_mm, cst, w);
    uint32_t o = pt_bin(b, LS_OP_add_Tensor, mm, x);
    ls_build_output(b, &o, 1, NULL, NULL);
    ls_program *p = ls_builder_finish(b);
    pt_step(&p, ls_pass_constant_prop, NULL);
    ck_assert_uint_eq(p->n_constants, 1);
    ck_assert_str_eq(p->constants[0].name, "_prop_tensor_constant2");
    ls_program_unref(p);
}
END_TEST

/* Test 23: no user input: add of two lifted constants folded; the new constant goes to the
 * start of the graph and the output reads it through the Edge clone. */
START_TEST(test23_folded_output_without_inputs)
{
    int64_t none[1] = {0};
    ls_builder *b = ls_builder_new("model", LS_DIALECT_EDGE);
    uint32_t c0 = pt_input(b, "c_lifted_tensor_0", LS_IN_CONSTANT_TENSOR, "lifted_tensor_0", true, LS_DT_F32, 0, none);
    uint32_t c1 = pt_input(b, "c_lifted_tensor_1", LS_IN_CONSTANT_TENSOR, "lifted_tensor_1", true, LS_DT_F32, 0, none);
    uint32_t o = pt_bin(b, LS_OP_add_Tensor, c0, c1);
    ls_build_output(b, &o, 1, NULL, NULL);
    ls_program *p = ls_builder_finish(b);
    ls_tensor_set_f64(ls_program_constant(p, "lifted_tensor_0")->t, 0, 3);
    ls_tensor_set_f64(ls_program_constant(p, "lifted_tensor_1")->t, 0, 5);
    pt_step(&p, ls_pass_constant_prop, NULL);
    ck_assert_ptr_null(pt_node(p, "c_lifted_tensor_0"));
    ck_assert_ptr_null(pt_node(p, "c_lifted_tensor_1"));
    ck_assert_str_eq(p->nodes[0]->name, "_prop_tensor_constant2");
    ck_assert_double_eq(ls_tensor_get_f64(ls_program_constant(p, "_prop_tensor_constant2")->t, 0), 8);
    const ls_node *cl = pt_must(p, "aten_clone_default");
    ck_assert_str_eq(cl->target, "executorch.exir.dialects.edge.ops.aten.clone.default");
    ck_assert_str_eq(p->outputs[0].name, "aten_clone_default");
    ck_assert_uint_eq(p->n_constants, 1);
    ls_program_unref(p);
}
END_TEST

/* Test 24: a mutated buffer is not constant: both adds stay. */
START_TEST(test24_mutable_buffers)
{
    int64_t one = 1;
    ls_builder *b = ls_builder_new("model", LS_DIALECT_EDGE);
    uint32_t st = pt_input(b, "b_state", LS_IN_BUFFER, "state", true, LS_DT_F32, 1, &one);
    uint32_t x = pt_input(b, "x", LS_IN_USER_INPUT, NULL, false, LS_DT_F32, 1, &one);
    uint32_t a = pt_bin(b, LS_OP_add_Tensor, x, st);
    uint32_t m = pt_scalar(b, LS_OP_add_Scalar, st, 1);
    uint32_t o[2] = {m, a};
    ls_output_kind k[2] = {LS_OUT_BUFFER_MUTATION, LS_OUT_USER_OUTPUT};
    const char *t[2] = {"state", NULL};
    ls_build_output(b, o, 2, k, t);
    ls_program *p = ls_builder_finish(b);
    pt_step(&p, ls_pass_constant_prop, NULL);
    ck_assert_uint_eq(pt_count_op(p, LS_OP_add_Tensor) + pt_count_op(p, LS_OP_add_Scalar), 2);
    ck_assert_uint_eq(p->n_constants, 0);
    ls_program_unref(p);
}
END_TEST

/* Test 25's counterpart: runtime allocations (the Edge full) are never folded. */
START_TEST(test25_edge_full_is_kept)
{
    int64_t one = 1;
    ls_builder *b = ls_builder_new("model", LS_DIALECT_EDGE);
    uint32_t x = pt_input(b, "x", LS_IN_USER_INPUT, NULL, false, LS_DT_F32, 1, &one);
    ls_arg *a = calloc(2, sizeof *a);
    a[0] = ls_arg_ints(&one, 1);
    a[1] = ls_arg_float(2);
    ls_tmeta m = ls_meta(LS_DT_F32, 1, &one);
    uint32_t f = ls_build_call(b, NULL, LS_OP_full, a, 2, &m);
    uint32_t o = pt_bin(b, LS_OP_add_Tensor, x, f);
    ls_build_output(b, &o, 1, NULL, NULL);
    ls_program *p = ls_builder_finish(b);
    pt_step(&p, ls_pass_constant_prop, NULL);
    ck_assert_uint_eq(pt_count_op(p, LS_OP_full), 1);
    ck_assert_uint_eq(p->n_constants, 0);
    ls_program_unref(p);
}
END_TEST

/* exir's _DEFAULT_SKIP_TARGETS hold the Edge forms of _QUANT_PRIMITIVES: in the Edge
 * quantized_mlp, each dequantize_per_channel reads only constants (an int8 weight, its scales
 * and zero points) and stays, with its int8 weight, for a backend's quantized pattern; the same
 * program in ATen folds them (the set holds Edge targets only). They were folded into float32
 * constants in Edge, so XNNPACK took float weights 4x the size. */
static uint32_t count_dtype(const ls_program *p, ls_dtype dt)
{
    uint32_t k = 0;
    for (uint32_t i = 0; i < p->n_state; i++) k += p->state_dict[i].t && p->state_dict[i].t->dtype == dt;
    for (uint32_t i = 0; i < p->n_constants; i++) k += p->constants[i].t && p->constants[i].t->dtype == dt;
    return k;
}

START_TEST(edge_quantization_primitives_are_kept)
{
    ls_program *aten = NULL;
    ls_error err;
    ck_assert_msg(ls_load(tu_root("samples/quantized_mlp.pt2"), NULL, &aten, &err) == 0, "%s", err.msg);
    uint32_t dq = pt_count_op(aten, LS_OP_dequantize_per_channel), int8 = count_dtype(aten, LS_DT_I8);
    ck_assert_uint_eq(dq, 3); /* three quantized weights, read by nothing but constants */
    ck_assert_uint_ge(int8, 3);
    ls_program *edge = ls_program_ref(aten);
    pt_step(&edge, ls_pass_to_edge, NULL);
    ls_report rep = {0};
    ls_program *kept = pt_run(ls_pass_constant_prop, edge, NULL, &rep, &err);
    ck_assert_ptr_nonnull(kept);
    ck_assert_uint_eq(pt_count_op(kept, LS_OP_dequantize_per_channel), dq);
    ck_assert_uint_eq(count_dtype(kept, LS_DT_I8), int8);
    ck_assert_uint_eq(kept->n_nodes, edge->n_nodes);
    bool said = false;
    for (uint32_t i = 0; i < rep.n; i++)
        said |= strstr(rep.v[i].text, "3 calls read only constants and stay: exir's _DEFAULT_SKIP_TARGETS") != NULL;
    ck_assert(said);
    ls_report_free(&rep);
    ls_program *folded = pt_run(ls_pass_constant_prop, aten, NULL, NULL, &err);
    ck_assert_ptr_nonnull(folded);
    ck_assert_uint_eq(pt_count_op(folded, LS_OP_dequantize_per_channel), 0);
    ck_assert_uint_lt(count_dtype(folded, LS_DT_I8), int8);
    ls_program_unref(folded);
    ls_program_unref(kept);
    ls_program_unref(edge);
    ls_program_unref(aten);
}
END_TEST

/* D6: (x + 1, a * 2) with parameter a: the folded output gets the clone of the program's own
 * dialect — aten.clone.default named `clone` in an ATen program, the Edge clone in an Edge one. */
static ls_program *folded_output(ls_dialect d)
{
    int64_t two = 2;
    ls_builder *b = ls_builder_new("model", d);
    uint32_t a = pt_input(b, "p_a", LS_IN_PARAMETER, "a", true, LS_DT_F32, 1, &two);
    uint32_t x = pt_input(b, "x", LS_IN_USER_INPUT, NULL, false, LS_DT_F32, 1, &two);
    uint32_t o[2] = {pt_scalar(b, LS_OP_add_Scalar, x, 1), pt_scalar(b, LS_OP_mul_Scalar, a, 2)};
    ls_build_output(b, o, 2, NULL, NULL);
    return ls_builder_finish(b);
}

START_TEST(d6_clone_of_the_programs_dialect)
{
    ls_program *p = folded_output(LS_DIALECT_ATEN);
    ls_report rep = {0};
    ls_program *q = pt_run(ls_pass_constant_prop, p, NULL, &rep, NULL);
    const ls_node *cl = pt_must(q, "clone");
    ck_assert_str_eq(cl->target, "torch.ops.aten.clone.default");
    ck_assert_int_eq(cl->dialect, LS_DIALECT_ATEN);
    ck_assert_str_eq(ls_program_node(q, cl->args[0].v.node)->name, "_prop_tensor_constant0");
    ck_assert_str_eq(q->outputs[1].name, "clone");
    ck_assert_int_eq(q->outputs[1].kind, LS_OUT_USER_OUTPUT);
    ck_assert_int_eq(q->nodes[q->n_nodes - 2]->id, cl->id); /* right before the output */
    ck_assert(pt_report_has(&rep, "`clone` (aten.clone.default) added before output 1"));
    ls_report_free(&rep);
    ls_program_unref(q);
    ls_program_unref(p);

    p = folded_output(LS_DIALECT_EDGE);
    q = pt_run(ls_pass_constant_prop, p, NULL, NULL, NULL);
    cl = pt_must(q, "aten_clone_default");
    ck_assert_str_eq(cl->target, "executorch.exir.dialects.edge.ops.aten.clone.default");
    ck_assert_int_eq(cl->dialect, LS_DIALECT_EDGE);
    ck_assert_ptr_null(pt_node(q, "clone"));
    ls_program_unref(q);
    ls_program_unref(p);
}
END_TEST

/* A parameter returned directly is a constant output too (§2.5). */
START_TEST(parameter_output_gets_clone)
{
    int64_t two = 2;
    ls_builder *b = ls_builder_new("model", LS_DIALECT_ATEN);
    uint32_t a = pt_input(b, "p_a", LS_IN_PARAMETER, "a", true, LS_DT_F32, 1, &two);
    uint32_t x = pt_input(b, "x", LS_IN_USER_INPUT, NULL, false, LS_DT_F32, 1, &two);
    uint32_t o[2] = {pt_unary(b, LS_OP_relu, x), a};
    ls_build_output(b, o, 2, NULL, NULL);
    ls_program *p = ls_builder_finish(b);
    pt_step(&p, ls_pass_constant_prop, NULL);
    ck_assert_str_eq(p->outputs[1].name, "clone");
    ck_assert_ptr_nonnull(ls_program_state(p, "a"));
    ls_program_unref(p);
}
END_TEST

/* Numbering: K = size of `constants`; on a clash one more than the largest suffix. Several new
 * constants go before the first user input in creation order (the last folded value first). */
START_TEST(prop_names_and_placement)
{
    int64_t two = 2;
    ls_builder *b = ls_builder_new("model", LS_DIALECT_EDGE);
    uint32_t c = pt_input(b, "_prop_tensor_constant1", LS_IN_CONSTANT_TENSOR, "_prop_tensor_constant1", true, LS_DT_F32, 1, &two);
    uint32_t x = pt_input(b, "x", LS_IN_USER_INPUT, NULL, false, LS_DT_F32, 1, &two);
    uint32_t n1 = pt_unary(b, LS_OP_neg, c);
    uint32_t r1 = pt_bin(b, LS_OP_add_Tensor, x, n1);
    uint32_t n2 = pt_unary(b, LS_OP_exp, c);
    uint32_t r2 = pt_bin(b, LS_OP_mul_Tensor, r1, n2);
    ls_build_output(b, &r2, 1, NULL, NULL);
    ls_program *p = ls_builder_finish(b);
    pt_step(&p, ls_pass_constant_prop, NULL);
    /* exp (the later one) is made first with K = 1: clash → 2; then neg with K = 2: clash → 3 */
    ck_assert_str_eq(ls_program_node(p, pt_must(p, "aten_mul_tensor")->args[1].v.node)->name, "_prop_tensor_constant2");
    ck_assert_str_eq(ls_program_node(p, pt_must(p, "aten_add_tensor")->args[1].v.node)->name, "_prop_tensor_constant3");
    ck_assert_str_eq(p->inputs[0].name, "_prop_tensor_constant2");
    ck_assert_str_eq(p->inputs[1].name, "_prop_tensor_constant3");
    ck_assert_str_eq(p->inputs[2].name, "x");
    ck_assert_ptr_null(pt_node(p, "_prop_tensor_constant1")); /* nobody reads it any more */
    ls_program_unref(p);
}
END_TEST

Suite *pass_constant_prop_suite(void)
{
    Suite *s = suite_create("pass_constant_prop");
    TCase *tc = tcase_create("exir");
    tcase_add_test(tc, test18_graph_signature);
    tcase_add_test(tc, test19_parameter_slice);
    tcase_add_test(tc, test20_no_propagate);
    tcase_add_test(tc, test21_for_add);
    tcase_add_test(tc, test22_numbering_from_constants);
    tcase_add_test(tc, test23_folded_output_without_inputs);
    tcase_add_test(tc, test24_mutable_buffers);
    tcase_add_test(tc, test25_edge_full_is_kept);
    tcase_add_test(tc, d6_clone_of_the_programs_dialect);
    tcase_add_test(tc, parameter_output_gets_clone);
    tcase_add_test(tc, prop_names_and_placement);
    tcase_add_test(tc, edge_quantization_primitives_are_kept);
    suite_add_tcase(s, tc);
    return s;
}
