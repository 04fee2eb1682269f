/* fold_masks (PR #24481, exir-semantics §8.4, scenario D7): constant boolean masks become their
 * int64 positions, one index per mask dimension, and the result's length becomes known. */
#include <check.h>
#include <stdlib.h>
#include <string.h>

#include "passtest.h"

static uint32_t index_with(ls_builder *b, uint32_t x, const uint32_t *ix, uint32_t n, const ls_tmeta *out)
{
    ls_arg *a = calloc(2, sizeof *a);
    a[0] = ls_arg_node(x);
    a[1] = ls_arg_opt_nodes(ix, n);
    return ls_build_call(b, NULL, LS_OP_index_Tensor, a, 2, out);
}

static void set_mask(ls_program *p, const char *target, const int *trues, int n)
{
    ls_named_tensor *e = ls_program_constant(p, target);
    for (int64_t i = 0; i < e->t->numel; i++) ls_tensor_set_f64(e->t, i, 0);
    for (int i = 0; i < n; i++) ls_tensor_set_f64(e->t, trues[i], 1);
}

static int64_t at(const ls_program *p, const char *target, int64_t i)
{
    return ls_tensor_get_i64(ls_program_constant(p, target)->t, i);
}

/* D7: x:[4, 5] with c_mask [T, F, T, F] → index(x, [int64 [0, 2]]) → [2, 5];
 * x3:[4, 5, 6] with a [4, 5] mask holding 3 trues → two int64 [3] indices → [3, 6]. */
START_TEST(d7_constant_masks_fold)
{
    int64_t s45[2] = {4, 5}, s456[3] = {4, 5, 6}, four = 4, five = 5;
    ls_builder *b = ls_builder_new("model", LS_DIALECT_EDGE);
    uint32_t m1 = pt_input(b, "c_mask", LS_IN_CONSTANT_TENSOR, "mask", true, LS_DT_BOOL, 1, &four);
    uint32_t m2 = pt_input(b, "c_mask_2d", LS_IN_CONSTANT_TENSOR, "mask_2d", true, LS_DT_BOOL, 2, s45);
    uint32_t m3 = pt_input(b, "b_mask_axis1", LS_IN_BUFFER, "mask_axis1", false, LS_DT_BOOL, 1, &five);
    uint32_t x = pt_input(b, "x", LS_IN_USER_INPUT, NULL, false, LS_DT_F32, 2, s45);
    uint32_t x3 = pt_input(b, "x3", LS_IN_USER_INPUT, NULL, false, LS_DT_F32, 3, s456);
    ls_tmeta o1 = ls_meta(LS_DT_F32, 2, (int64_t[]){-1, 5}), o2 = ls_meta(LS_DT_F32, 2, (int64_t[]){-1, 6}),
             o3 = ls_meta(LS_DT_F32, 2, (int64_t[]){4, -1});
    o1.sym[0] = o2.sym[0] = ls_intern("u0");
    o3.sym[1] = ls_intern("u1");
    uint32_t outs[3];
    outs[0] = index_with(b, x, &m1, 1, &o1);
    outs[1] = index_with(b, x3, &m2, 1, &o2);
    uint32_t ax[2] = {0, m3};
    outs[2] = index_with(b, x, ax, 2, &o3);
    ls_build_output(b, outs, 3, NULL, NULL);
    ls_program *p = ls_builder_finish(b);
    set_mask(p, "mask", (int[]){0, 2}, 2);
    set_mask(p, "mask_2d", (int[]){1, 7, 18}, 3);
    set_mask(p, "mask_axis1", (int[]){0, 1, 4}, 3);
    pt_step(&p, ls_pass_partition, ls_profile_bundled());
    for (int i = 0; i < 3; i++) ck_assert_ptr_nonnull(ls_program_node(p, outs[i])->tag);
    ls_report rep = {0};
    ls_program *q = pt_run(ls_pass_fold_masks, p, ls_profile_bundled(), &rep, NULL);
    ck_assert(pt_report_has(&rep, "mask `c_mask` (bool[4], 2 true) folded into `c_mask_positions` (int64[2])"));
    ck_assert(pt_report_has(&rep, "mask `c_mask_2d` (bool[4, 5], 3 true) folded into `c_mask_2d_positions_0`, "
                                  "`c_mask_2d_positions_1` (int64[3] each)"));
    ls_report_free(&rep);
    /* 1-D: [0, 2] */
    const ls_node *n0 = ls_program_node(q, outs[0]);
    ck_assert_uint_eq(n0->args[1].n, 1);
    ck_assert_str_eq(ls_program_node(q, n0->args[1].v.nodes[0])->name, "c_mask_positions");
    ck_assert_int_eq(at(q, "c_mask_positions", 0), 0);
    ck_assert_int_eq(at(q, "c_mask_positions", 1), 2);
    ck_assert_int_eq(n0->vals[0].sizes[0], 2);
    ck_assert_ptr_null(n0->vals[0].sym[0]);
    /* 2-D: trues at 1 (0,1), 7 (1,2), 18 (3,3) → rows [0, 1, 3], columns [1, 2, 3] */
    const ls_node *n1 = ls_program_node(q, outs[1]);
    ck_assert_uint_eq(n1->args[1].n, 2);
    const int64_t rows[3] = {0, 1, 3}, cols[3] = {1, 2, 3};
    for (int i = 0; i < 3; i++) {
        ck_assert_int_eq(at(q, "c_mask_2d_positions_0", i), rows[i]);
        ck_assert_int_eq(at(q, "c_mask_2d_positions_1", i), cols[i]);
    }
    ck_assert_int_eq(n1->vals[0].sizes[0], 3);
    ck_assert_int_eq(n1->vals[0].sizes[1], 6);
    /* a non-persistent buffer at axis 1: [None, positions] */
    const ls_node *n2 = ls_program_node(q, outs[2]);
    ck_assert_uint_eq(n2->args[1].n, 2);
    ck_assert_uint_eq(n2->args[1].v.nodes[0], 0);
    ck_assert_int_eq(n2->vals[0].sizes[1], 3);
    /* the masks leave; the positions are lifted constants tagged like their reader */
    ck_assert_ptr_null(pt_node(q, "c_mask"));
    ck_assert_ptr_null(ls_program_constant(q, "mask"));
    const ls_node *pos = pt_must(q, "c_mask_positions");
    ck_assert_str_eq(pos->tag, n0->tag);
    int32_t s = ls_program_input_spec(q, "c_mask_positions");
    ck_assert_int_eq(q->inputs[s].kind, LS_IN_CONSTANT_TENSOR);
    ck_assert_int_eq(pt_count_kind(q, LS_NODE_PLACEHOLDER), (int)q->n_inputs);
    pt_step(&q, ls_pass_duplicate_constants, ls_profile_bundled());
    pt_step(&q, ls_pass_to_backend, ls_profile_bundled());
    ck_assert_uint_eq(pt_count_inputs(pt_sub(q, "lowered_module_0"), LS_IN_CONSTANT_TENSOR), 4);
    ls_program_unref(q);
    ls_program_unref(p);
}
END_TEST

/* A mask also read by a CPU node stays, following its remaining readers. */
START_TEST(mask_read_elsewhere_stays)
{
    int64_t s45[2] = {4, 5}, four = 4;
    ls_builder *b = ls_builder_new("model", LS_DIALECT_EDGE);
    uint32_t m = pt_input(b, "c_mask", LS_IN_CONSTANT_TENSOR, "mask", true, LS_DT_BOOL, 1, &four);
    uint32_t idx = pt_input(b, "c_index", LS_IN_CONSTANT_TENSOR, "index", true, LS_DT_I64, 1, &four);
    uint32_t x = pt_input(b, "x", LS_IN_USER_INPUT, NULL, false, LS_DT_F32, 2, s45);
    ls_tmeta o = ls_meta(LS_DT_F32, 2, (int64_t[]){2, 5});
    uint32_t a = index_with(b, x, &m, 1, &o);
    uint32_t two[2] = {m, idx};
    uint32_t c = index_with(b, x, two, 2, &o); /* refused: another index */
    uint32_t outs[2] = {a, c};
    ls_build_output(b, outs, 2, NULL, NULL);
    ls_program *p = ls_builder_finish(b);
    set_mask(p, "mask", (int[]){1, 3}, 2);
    pt_step(&p, ls_pass_partition, ls_profile_bundled());
    pt_step(&p, ls_pass_fold_masks, ls_profile_bundled());
    const ls_node *mk = pt_must(p, "c_mask");
    ck_assert_ptr_null(mk->tag); /* its only reader now is the CPU's index */
    pt_step(&p, ls_pass_duplicate_constants, ls_profile_bundled());
    pt_step(&p, ls_pass_to_backend, ls_profile_bundled());
    ck_assert_ptr_nonnull(pt_node(p, "c_mask"));
    ls_program_unref(p);
}
END_TEST

/* A backend that does not fold masks: nothing changes. */
START_TEST(backend_without_mask_folding)
{
    int64_t s45[2] = {4, 5}, four = 4;
    ls_builder *b = ls_builder_new("model", LS_DIALECT_EDGE);
    uint32_t m = pt_input(b, "c_mask", LS_IN_CONSTANT_TENSOR, "mask", true, LS_DT_BOOL, 1, &four);
    uint32_t x = pt_input(b, "x", LS_IN_USER_INPUT, NULL, false, LS_DT_F32, 2, s45);
    ls_tmeta o = ls_meta(LS_DT_F32, 2, (int64_t[]){2, 5});
    uint32_t a = index_with(b, x, &m, 1, &o);
    ls_build_output(b, &a, 1, NULL, NULL);
    ls_program *p = ls_builder_finish(b);
    ls_profile *prof = pt_profile("{\"name\": \"plain\", \"backend_id\": \"PlainBackend\", \"all_except\": []}");
    pt_step(&p, ls_pass_partition, prof);
    ck_assert_ptr_nonnull(pt_must(p, "aten_index_tensor")->tag);
    ls_report rep = {0};
    ls_program *q = pt_run(ls_pass_fold_masks, p, prof, &rep, NULL);
    ck_assert(pt_report_has(&rep, "PlainBackend does not fold boolean masks"));
    ck_assert_uint_eq(q->n_nodes, p->n_nodes);
    ls_report_free(&rep);
    ls_program_unref(q);
    ls_profile_free(prof);
    ls_program_unref(p);
}
END_TEST

Suite *pass_fold_masks_suite(void)
{
    Suite *s = suite_create("pass_fold_masks");
    TCase *tc = tcase_create("masks");
    tcase_add_test(tc, d7_constant_masks_fold);
    tcase_add_test(tc, mask_read_elsewhere_stays);
    tcase_add_test(tc, backend_without_mask_folding);
    suite_add_tcase(s, tc);
    return s;
}
