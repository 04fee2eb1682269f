/* to_edge: Edge targets, _copy forms of view ops, the decomposition table, Edge node names. */
#include <check.h>
#include <stdlib.h>
#include <string.h>

#include "passtest.h"

START_TEST(targets_views_and_names)
{
    int64_t s23[2] = {2, 3}, s32[2] = {3, 2}, six = 6;
    ls_builder *b = ls_builder_new("model", LS_DIALECT_ATEN);
    uint32_t x = pt_input(b, "x", LS_IN_USER_INPUT, NULL, false, LS_DT_F32, 2, s23);
    uint32_t a = pt_bin(b, LS_OP_add_Tensor, x, x);
    ls_arg *args = calloc(2, sizeof *args);
    args[0] = ls_arg_node(a);
    args[1] = ls_arg_ints(&six, 1);
    ls_tmeta m = ls_meta(LS_DT_F32, 1, &six);
    uint32_t v = ls_build_call(b, NULL, LS_OP_view, args, 2, &m);
    args = calloc(2, sizeof *args);
    args[0] = ls_arg_node(a);
    int64_t perm[2] = {1, 0};
    args[1] = ls_arg_ints(perm, 2);
    m = ls_meta(LS_DT_F32, 2, s32);
    uint32_t t = ls_build_call(b, NULL, LS_OP_permute, args, 2, &m);
    args = calloc(2, sizeof *args);
    args[0] = ls_arg_node(t);
    args[1] = ls_arg_ints(&six, 1);
    m = ls_meta(LS_DT_F32, 1, &six);
    uint32_t r = ls_build_call(b, NULL, LS_OP_reshape, args, 2, &m);
    uint32_t o[2] = {v, pt_bin(b, LS_OP_add_Tensor, r, v)};
    ls_build_output(b, o, 2, NULL, NULL);
    ls_program *p = ls_builder_finish(b);
    ck_assert_str_eq(p->outputs[1].name, "add_1");
    ls_program *q = pt_run(ls_pass_to_edge, p, NULL, NULL, NULL);
    ck_assert_int_eq(q->dialect, LS_DIALECT_EDGE);
    ck_assert_str_eq(q->verifier, "EDGE");
    const ls_node *add = pt_must(q, "aten_add_tensor");
    ck_assert_str_eq(add->target, "executorch.exir.dialects.edge.ops.aten.add.Tensor");
    ck_assert_int_eq(add->dialect, LS_DIALECT_EDGE);
    ck_assert_int_eq(add->id, (int)a); /* ids are stable */
    ck_assert_int_eq(pt_must(q, "aten_view_copy_default")->op->id, LS_OP_view_copy);
    ck_assert_int_eq(pt_must(q, "aten_permute_copy_default")->op->id, LS_OP_permute_copy);
    const ls_node *rs = pt_must(q, "aten_view_copy_default_1"); /* reshape → view_copy */
    ck_assert_ptr_nonnull(ls_node_arg(rs, "size"));
    ck_assert_str_eq(q->outputs[0].name, "aten_view_copy_default");
    ck_assert_str_eq(q->outputs[1].name, "aten_add_tensor_1");
    ck_assert_ptr_eq(pt_must(q, "x"), pt_must(p, "x")); /* placeholders are shared */
    ls_program *again = pt_run(ls_pass_to_edge, q, NULL, NULL, NULL);
    ck_assert_uint_eq(again->n_nodes, q->n_nodes);
    ls_program_unref(again);
    ls_program_unref(q);
    ls_program_unref(p);
}
END_TEST

/* linear → permute_copy + addmm (2-D) or with view_copy around it (3-D); the last node keeps
 * the linear's id. */
START_TEST(linear_decomposition)
{
    int64_t sx[3] = {2, 3, 4}, sw[2] = {5, 4}, sb = 5, sy[3] = {2, 3, 5};
    ls_builder *b = ls_builder_new("model", LS_DIALECT_ATEN);
    uint32_t w = pt_input(b, "p_w", LS_IN_PARAMETER, "w", true, LS_DT_F32, 2, sw);
    uint32_t bias = pt_input(b, "p_b", LS_IN_PARAMETER, "b", true, LS_DT_F32, 1, &sb);
    uint32_t x = pt_input(b, "x", LS_IN_USER_INPUT, NULL, false, LS_DT_F32, 3, sx);
    ls_arg *args = calloc(3, sizeof *args);
    args[0] = ls_arg_node(x);
    args[1] = ls_arg_node(w);
    args[2] = ls_arg_node(bias);
    ls_tmeta m = ls_meta(LS_DT_F32, 3, sy);
    uint32_t lin = ls_build_call(b, NULL, LS_OP_linear, args, 3, &m);
    uint32_t o = pt_unary(b, LS_OP_relu, lin);
    ls_build_output(b, &o, 1, NULL, NULL);
    ls_program *p = ls_builder_finish(b);
    ls_report rep = {0};
    ls_program *q = pt_run(ls_pass_to_edge, p, NULL, &rep, NULL);
    char *ops = pt_call_ops(q);
    ck_assert_str_eq(ops, "permute_copy,view_copy,addmm,view_copy,relu");
    free(ops);
    const ls_node *last = ls_program_node(q, lin);
    ck_assert_int_eq(last->op->id, LS_OP_view_copy);
    ck_assert_int_eq(last->vals[0].sizes[2], 5);
    ck_assert_int_eq(pt_must(q, "aten_addmm_default")->vals[0].sizes[0], 6);
    ck_assert(pt_report_has(&rep, "`linear` (aten.linear.default) decomposed into `aten_permute_copy_default` + "
                                  "`aten_view_copy_default` + `aten_addmm_default` + `aten_view_copy_default_1`"));
    ls_report_free(&rep);
    ls_program_unref(q);
    ls_program_unref(p);
}
END_TEST

START_TEST(softmax_and_matmul)
{
    int64_t s[2] = {3, 3};
    ls_builder *b = ls_builder_new("model", LS_DIALECT_ATEN);
    uint32_t x = pt_input(b, "x", LS_IN_USER_INPUT, NULL, false, LS_DT_F32, 2, s);
    uint32_t mm = pt_bin(b, LS_OP_matmul, x, x);
    ls_arg *args = calloc(2, sizeof *args);
    args[0] = ls_arg_node(mm);
    args[1] = ls_arg_int(-1);
    uint32_t sm = ls_build_call(b, NULL, LS_OP_softmax_int, args, 2, NULL);
    ls_build_output(b, &sm, 1, NULL, NULL);
    ls_program *p = ls_builder_finish(b);
    pt_step(&p, ls_pass_to_edge, NULL);
    char *ops = pt_call_ops(p);
    ck_assert_str_eq(ops, "mm,_softmax");
    free(ops);
    ck_assert_str_eq(p->outputs[0].name, "aten__softmax_default");
    ls_program_unref(p);
}
END_TEST

/* exir's ScalarToTensorPass: add.Tensor(x, 1) and mul.Tensor(x, 2.5) read 0-dim constants
 * (torch.tensor(1): int64, torch.tensor(2.5): float32) lifted before the first user input as
 * _lifted_tensor_constant0 and 1 (alpha, a Scalar, stays an int). And
 * silu decomposes into mul(x, sigmoid(x)). */
START_TEST(scalars_become_tensors_and_silu_decomposes)
{
    int64_t s4 = 4;
    ls_builder *b = ls_builder_new("model", LS_DIALECT_ATEN);
    uint32_t w = pt_input(b, "p_w", LS_IN_PARAMETER, "w", true, LS_DT_F32, 1, &s4);
    uint32_t x = pt_input(b, "x", LS_IN_USER_INPUT, NULL, false, LS_DT_F32, 1, &s4);
    ls_tmeta m = ls_meta(LS_DT_F32, 1, &s4);
    ls_arg *args = calloc(3, sizeof *args);
    args[0] = ls_arg_node(x), args[1] = ls_arg_int(1), args[2] = ls_arg_int(1);
    uint32_t a = ls_build_call(b, NULL, LS_OP_add_Tensor, args, 3, &m);
    args = calloc(2, sizeof *args);
    args[0] = ls_arg_node(a), args[1] = ls_arg_float(2.5);
    uint32_t mu = ls_build_call(b, NULL, LS_OP_mul_Tensor, args, 2, &m);
    args = calloc(1, sizeof *args);
    args[0] = ls_arg_node(mu);
    uint32_t si = ls_build_call(b, NULL, LS_OP_silu, args, 1, &m);
    uint32_t o = pt_bin(b, LS_OP_add_Tensor, si, w);
    ls_build_output(b, &o, 1, NULL, NULL);
    ls_program *p = ls_builder_finish(b);
    ls_report rep = {0};
    ls_program *q = pt_run(ls_pass_to_edge, p, NULL, &rep, NULL);
    const ls_node *add = pt_must(q, "aten_add_tensor");
    const ls_node *c0 = ls_program_node(q, add->args[1].v.node);
    ck_assert_int_eq(add->args[1].kind, LS_ARG_NODE);
    ck_assert_str_eq(c0->name, "_lifted_tensor_constant0");
    ck_assert_int_eq(add->args[2].kind, LS_ARG_INT); /* alpha is a Scalar: stays */
    const ls_named_tensor *t0 = ls_program_constant(q, "_lifted_tensor_constant0");
    ck_assert_ptr_nonnull(t0);
    ck_assert_int_eq(t0->t->dtype, LS_DT_I64);
    ck_assert_int_eq(t0->t->ndim, 0);
    ck_assert_int_eq(((int64_t *)t0->t->data)[0], 1);
    const ls_named_tensor *t1 = ls_program_constant(q, "_lifted_tensor_constant1");
    ck_assert_int_eq(t1->t->dtype, LS_DT_F32);
    ck_assert(((float *)t1->t->data)[0] == 2.5f);
    /* before the first user input, in the nodes and in the specs */
    ck_assert_str_eq(q->nodes[0]->name, "p_w");
    ck_assert_str_eq(q->nodes[1]->name, "_lifted_tensor_constant0");
    ck_assert_str_eq(q->nodes[2]->name, "_lifted_tensor_constant1");
    ck_assert_str_eq(q->nodes[3]->name, "x");
    ck_assert_int_eq(q->inputs[1].kind, LS_IN_CONSTANT_TENSOR);
    ck_assert_str_eq(q->inputs[2].target, "_lifted_tensor_constant1");
    ck_assert_int_eq(q->inputs[3].kind, LS_IN_USER_INPUT);
    /* silu: sigmoid, then mul(x, sigmoid); the mul keeps silu's id */
    const ls_node *sg = pt_must(q, "aten_sigmoid_default");
    const ls_node *m2 = pt_must(q, "aten_mul_tensor_1");
    ck_assert_int_eq((int)m2->id, (int)si);
    ck_assert_int_eq(m2->args[0].v.node, mu);
    ck_assert_int_eq(m2->args[1].v.node, sg->id);
    for (uint32_t i = 0; i < q->n_nodes; i++) ck_assert(!q->nodes[i]->op || q->nodes[i]->op->id != LS_OP_silu);
    bool said = false;
    for (uint32_t i = 0; i < rep.n; i++) said |= strstr(rep.v[i].text, "(ScalarToTensorPass)") != NULL;
    ck_assert(said);
    ls_report_free(&rep);
    ls_program_unref(q);
    ls_program_unref(p);
}
END_TEST

/* chunk decomposes as export's decomposition of ATen's chunk gives it (TensorShape.cpp, chunk):
 * split(x, ceil(size / chunks)) — chunk(x(2, 5), 3, 1) is split_copy(x, 2, 1), 3 pieces of 2, 2, 1 —
 * and, of an empty dimension, split_with_sizes(x, [0, 0, 0]), so the three getitems still have a
 * piece each (split of size 0 would give one). */
START_TEST(chunk_decomposes_to_a_split)
{
    for (int empty = 0; empty < 2; empty++) {
        int64_t sx[2] = {2, empty ? 0 : 5};
        ls_builder *b = ls_builder_new("model", LS_DIALECT_ATEN);
        uint32_t x = pt_input(b, "x", LS_IN_USER_INPUT, NULL, false, LS_DT_F32, 2, sx);
        ls_arg *args = calloc(3, sizeof *args);
        args[0] = ls_arg_node(x), args[1] = ls_arg_int(3), args[2] = ls_arg_int(-1);
        uint32_t ch = ls_build_call(b, NULL, LS_OP_chunk, args, 3, NULL);
        ls_tmeta ms[3];
        for (int i = 0; i < 3; i++) {
            int64_t si[2] = {2, empty ? 0 : (i < 2 ? 2 : 1)};
            ms[i] = ls_meta(LS_DT_F32, 2, si);
        }
        ls_node_set_vals(ls_builder_program(b)->nodes[ls_builder_program(b)->n_nodes - 1], LS_VAL_TENSORS, ms, 3);
        uint32_t g[3];
        for (int i = 0; i < 3; i++) {
            args = calloc(2, sizeof *args);
            args[0] = ls_arg_node(ch), args[1] = ls_arg_int(i);
            g[i] = ls_build_call(b, NULL, LS_OP_getitem, args, 2, &ms[i]);
        }
        ls_build_output(b, g, 3, NULL, NULL);
        ls_program *p = ls_builder_finish(b);
        pt_step(&p, ls_pass_to_edge, NULL);
        char *ops = pt_call_ops(p);
        ck_assert_str_eq(ops, empty ? "split_with_sizes_copy,getitem,getitem,getitem" : "split_copy,getitem,getitem,getitem");
        free(ops);
        const ls_node *s = NULL;
        for (uint32_t i = 0; i < p->n_nodes && !s; i++)
            if (p->nodes[i]->op && p->nodes[i]->op->id != LS_OP_getitem && p->nodes[i]->kind == LS_NODE_CALL) s = p->nodes[i];
        ck_assert_ptr_nonnull(s);
        ck_assert_int_eq(s->args[2].v.i, 1); /* the dimension, made positive */
        if (empty) {
            ck_assert_int_eq(s->args[1].kind, LS_ARG_INTS);
            ck_assert_uint_eq(s->args[1].n, 3);
            for (int i = 0; i < 3; i++) ck_assert_int_eq(s->args[1].v.ints[i], 0);
        } else {
            ck_assert_int_eq(s->args[1].kind, LS_ARG_INT);
            ck_assert_int_eq(s->args[1].v.i, 2);
        }
        ck_assert_uint_eq(s->nvals, 3);
        ls_program_unref(p);
    }
}
END_TEST

Suite *pass_to_edge_suite(void)
{
    Suite *s = suite_create("pass_to_edge");
    TCase *tc = tcase_create("edge");
    tcase_add_test(tc, targets_views_and_names);
    tcase_add_test(tc, linear_decomposition);
    tcase_add_test(tc, softmax_and_matmul);
    tcase_add_test(tc, scalars_become_tensors_and_silu_decomposes);
    tcase_add_test(tc, chunk_decomposes_to_a_split);
    suite_add_tcase(s, tc);
    return s;
}
