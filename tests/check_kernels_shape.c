/* Shape, indexing, creation and layer kernels against hand-computed values. */
#include <check.h>
#include <math.h>
#include <stdint.h>

#include "ktest.h"
#include "ops.h"
#include "runtime.h"

START_TEST(view_reshape_share_and_copy_forms_do_not)
{
    ls_tensor *x = kt_iota(LS_DT_F32, SHAPE(2, 3));
    ls_value r = kt_run(LS_OP_view, 2, VT(ls_tensor_ref(x)), VINTS(3, -1));
    kt_expect(&r, LS_DT_F32, SHAPE(3, 2), VALS(0, 1, 2, 3, 4, 5));
    ck_assert_ptr_eq(r.t->data, x->data); /* the view op aliases */
    ls_value_release(&r);
    r = kt_run(LS_OP_view_copy, 2, VT(ls_tensor_ref(x)), VINTS(6));
    kt_expect(&r, LS_DT_F32, SHAPE(6), VALS(0, 1, 2, 3, 4, 5));
    ck_assert_ptr_ne(r.t->data, x->data); /* the Edge _copy form does not */
    ls_value_release(&r);
    kt_fails("invalid for input of size 6", LS_OP_view, 2, VT(ls_tensor_ref(x)), VINTS(4, -1));
    kt_fails("only one dimension", LS_OP_reshape, 2, VT(ls_tensor_ref(x)), VINTS(-1, -1));
    r = kt_run(LS_OP_alias_copy, 1, VT(ls_tensor_ref(x)));
    ck_assert_ptr_ne(r.t->data, x->data);
    ls_value_release(&r);
    ls_tensor_unref(x);
}
END_TEST

START_TEST(permute_transpose_t)
{
    ls_value r = kt_run(LS_OP_permute_copy, 2, VT(kt_iota(LS_DT_F32, SHAPE(2, 3, 2))), VINTS(2, 0, -2));
    /* out[k][i][j] = x[i][j][k] */
    kt_expect(&r, LS_DT_F32, SHAPE(2, 2, 3), VALS(0, 2, 4, 6, 8, 10, 1, 3, 5, 7, 9, 11));
    ls_value_release(&r);
    r = kt_run(LS_OP_transpose_int, 3, VT(kt_iota(LS_DT_I64, SHAPE(2, 3))), VI(-1), VI(0));
    kt_expect(&r, LS_DT_I64, SHAPE(3, 2), VALS(0, 3, 1, 4, 2, 5));
    ls_value_release(&r);
    r = kt_run(LS_OP_t_copy, 1, VT(kt_iota(LS_DT_F16, SHAPE(1, 3))));
    kt_expect(&r, LS_DT_F16, SHAPE(3, 1), VALS(0, 1, 2));
    ls_value_release(&r);
    r = kt_run(LS_OP_t, 1, VT(kt_iota(LS_DT_F32, SHAPE(3))));
    kt_expect(&r, LS_DT_F32, SHAPE(3), VALS(0, 1, 2));
    ls_value_release(&r);
    kt_fails("repeats", LS_OP_permute, 2, VT(kt_iota(LS_DT_F32, SHAPE(2, 2))), VINTS(0, 0));
    kt_fails("out of range", LS_OP_transpose_int, 3, VT(kt_iota(LS_DT_F32, SHAPE(2, 2))), VI(2), VI(0));
}
END_TEST

START_TEST(unsqueeze_squeeze_expand)
{
    ls_value r = kt_run(LS_OP_unsqueeze_copy, 2, VT(kt_iota(LS_DT_F32, SHAPE(2, 3))), VI(-1));
    kt_expect(&r, LS_DT_F32, SHAPE(2, 3, 1), NULL);
    ls_value_release(&r);
    r = kt_run(LS_OP_unsqueeze, 2, VT(kt_iota(LS_DT_F32, SCALAR_SHAPE)), VI(0));
    kt_expect(&r, LS_DT_F32, SHAPE(1), VALS(0));
    ls_value_release(&r);
    r = kt_run(LS_OP_squeeze, 1, VT(kt_iota(LS_DT_F32, SHAPE(1, 2, 1))));
    kt_expect(&r, LS_DT_F32, SHAPE(2), VALS(0, 1));
    ls_value_release(&r);
    r = kt_run(LS_OP_squeeze_dim, 2, VT(kt_iota(LS_DT_F32, SHAPE(1, 2, 1))), VI(1)); /* not size 1: unchanged */
    kt_expect(&r, LS_DT_F32, SHAPE(1, 2, 1), NULL);
    ls_value_release(&r);
    r = kt_run(LS_OP_squeeze_copy_dims, 2, VT(kt_iota(LS_DT_F32, SHAPE(1, 2, 1))), VINTS(0, -1));
    kt_expect(&r, LS_DT_F32, SHAPE(2), NULL);
    ls_value_release(&r);
    r = kt_run(LS_OP_expand_copy, 3, VT(kt(LS_DT_F32, SHAPE(2, 1), VALS(1, 2))), VINTS(2, -1, 3), VB(false));
    kt_expect(&r, LS_DT_F32, SHAPE(2, 2, 3), VALS(1, 1, 1, 2, 2, 2, 1, 1, 1, 2, 2, 2));
    ls_value_release(&r);
    kt_fails("cannot expand", LS_OP_expand, 3, VT(kt(LS_DT_F32, SHAPE(2), NULL)), VINTS(3), VB(false));
    kt_fails("-1", LS_OP_expand, 3, VT(kt(LS_DT_F32, SHAPE(2), NULL)), VINTS(-1, 2), VB(false));
}
END_TEST

START_TEST(slice_select_split_chunk)
{
    ls_tensor *x = kt_iota(LS_DT_F32, SHAPE(3, 4));
    ls_value r = kt_run(LS_OP_slice_copy_Tensor, 5, VT(ls_tensor_ref(x)), VI(1), VI(1), VI(INT64_MAX), VI(2));
    kt_expect(&r, LS_DT_F32, SHAPE(3, 2), VALS(1, 3, 5, 7, 9, 11));
    ls_value_release(&r);
    r = kt_run(LS_OP_slice_Tensor, 5, VT(ls_tensor_ref(x)), VI(0), VI(-2), VN, VI(1));
    kt_expect(&r, LS_DT_F32, SHAPE(2, 4), VALS(4, 5, 6, 7, 8, 9, 10, 11));
    ck_assert_ptr_eq(r.t->data, (float *)x->data + 4); /* a leading-dim slice is a view */
    ls_value_release(&r);
    r = kt_run(LS_OP_slice_Tensor, 5, VT(ls_tensor_ref(x)), VI(1), VI(5), VI(10), VI(1)); /* clamped: empty */
    kt_expect(&r, LS_DT_F32, SHAPE(3, 0), NULL);
    ls_value_release(&r);
    r = kt_run(LS_OP_slice_Tensor, 5, VT(ls_tensor_ref(x)), VI(1), VI(3), VI(1), VI(1)); /* end < start: empty */
    kt_expect(&r, LS_DT_F32, SHAPE(3, 0), NULL);
    ls_value_release(&r);
    r = kt_run(LS_OP_select_copy_int, 3, VT(ls_tensor_ref(x)), VI(1), VI(-1));
    kt_expect(&r, LS_DT_F32, SHAPE(3), VALS(3, 7, 11));
    ls_value_release(&r);
    kt_fails("out of range", LS_OP_select_int, 3, VT(ls_tensor_ref(x)), VI(0), VI(3));
    r = kt_run(LS_OP_split_Tensor, 3, VT(ls_tensor_ref(x)), VI(3), VI(1));
    ck_assert_int_eq(r.kind, LS_V_LIST);
    ck_assert_uint_eq(r.n, 2);
    kt_expect(&r.items[0], LS_DT_F32, SHAPE(3, 3), VALS(0, 1, 2, 4, 5, 6, 8, 9, 10));
    kt_expect(&r.items[1], LS_DT_F32, SHAPE(3, 1), VALS(3, 7, 11));
    ls_value_release(&r);
    r = kt_run(LS_OP_split_with_sizes_copy, 3, VT(ls_tensor_ref(x)), VINTS(1, 2), VI(0));
    ck_assert_uint_eq(r.n, 2);
    kt_expect(&r.items[1], LS_DT_F32, SHAPE(2, 4), VALS(4, 5, 6, 7, 8, 9, 10, 11));
    ls_value_release(&r);
    kt_fails("sum exactly", LS_OP_split_with_sizes, 3, VT(ls_tensor_ref(x)), VINTS(1, 1), VI(0));
    r = kt_run(LS_OP_chunk, 3, VT(ls_tensor_ref(x)), VI(3), VI(-1));
    ck_assert_uint_eq(r.n, 2); /* ceil(4/3) = 2 per chunk → 2 chunks */
    kt_expect(&r.items[0], LS_DT_F32, SHAPE(3, 2), VALS(0, 1, 4, 5, 8, 9));
    ls_value_release(&r);
    /* an empty dimension keeps the count: torch.chunk(torch.empty(2, 0), 3, 1) gives 3 tensors of
     * shape (2, 0) (ATen TensorShape.cpp, chunk: split_with_sizes when split_size and size are 0) */
    r = kt_run(LS_OP_chunk, 3, VT(kt(LS_DT_F32, SHAPE(2, 0), NULL)), VI(3), VI(1));
    ck_assert_int_eq(r.kind, LS_V_LIST);
    ck_assert_uint_eq(r.n, 3);
    for (uint32_t i = 0; i < 3; i++) kt_expect(&r.items[i], LS_DT_F32, SHAPE(2, 0), NULL);
    ls_value_release(&r);
    r = kt_run(LS_OP_split_Tensor, 3, VT(kt(LS_DT_F32, SHAPE(2, 0), NULL)), VI(0), VI(1)); /* split: one */
    ck_assert_uint_eq(r.n, 1);
    ls_value_release(&r);
    ls_tensor_unref(x);
}
END_TEST

START_TEST(cat_stack_pad)
{
    ls_value r = kt_run(LS_OP_cat, 2, VLIST(2, VT(kt_iota(LS_DT_F32, SHAPE(2, 1))), VT(kt(LS_DT_I64, SHAPE(2, 2), VALS(7, 8, 9, 10)))),
                        VI(-1));
    kt_expect(&r, LS_DT_F32, SHAPE(2, 3), VALS(0, 7, 8, 1, 9, 10));
    ls_value_release(&r);
    /* legacy: a 1-d empty tensor is skipped */
    r = kt_run(LS_OP_cat, 2, VLIST(2, VT(kt(LS_DT_F32, SHAPE(0), NULL)), VT(kt_iota(LS_DT_F32, SHAPE(1, 2)))), VI(0));
    kt_expect(&r, LS_DT_F32, SHAPE(1, 2), VALS(0, 1));
    ls_value_release(&r);
    kt_fails("tensor 1 has shape", LS_OP_cat, 2, VLIST(2, VT(kt_iota(LS_DT_F32, SHAPE(2, 1))), VT(kt_iota(LS_DT_F32, SHAPE(3, 1)))),
             VI(1));
    r = kt_run(LS_OP_stack, 2, VLIST(2, VT(kt(LS_DT_F32, SHAPE(2), VALS(1, 2))), VT(kt(LS_DT_F32, SHAPE(2), VALS(3, 4)))), VI(1));
    kt_expect(&r, LS_DT_F32, SHAPE(2, 2), VALS(1, 3, 2, 4));
    ls_value_release(&r);
    r = kt_run(LS_OP_constant_pad_nd, 3, VT(kt_iota(LS_DT_F32, SHAPE(2, 2))), VINTS(1, 0, 0, 1), VF(-1));
    kt_expect(&r, LS_DT_F32, SHAPE(3, 3), VALS(-1, 0, 1, -1, 2, 3, -1, -1, -1));
    ls_value_release(&r);
    /* negative padding crops */
    r = kt_run(LS_OP_constant_pad_nd, 3, VT(kt_iota(LS_DT_I64, SHAPE(2, 3))), VINTS(-1, 1), VI(9));
    kt_expect(&r, LS_DT_I64, SHAPE(2, 3), VALS(1, 2, 9, 4, 5, 9));
    ls_value_release(&r);
}
END_TEST

START_TEST(advanced_indexing)
{
    ls_tensor *x = kt_iota(LS_DT_F32, SHAPE(3, 4));
    /* x[[2, -3]] */
    ls_value r = kt_run(LS_OP_index_Tensor, 2, VT(ls_tensor_ref(x)), VLIST(1, VT(kt(LS_DT_I64, SHAPE(2), VALS(2, -3)))));
    kt_expect(&r, LS_DT_F32, SHAPE(2, 4), VALS(8, 9, 10, 11, 0, 1, 2, 3));
    ls_value_release(&r);
    /* x[:, [1, 3]] (None first) */
    r = kt_run(LS_OP_index_Tensor, 2, VT(ls_tensor_ref(x)), VLIST(2, VN, VT(kt(LS_DT_I32, SHAPE(2), VALS(1, 3)))));
    kt_expect(&r, LS_DT_F32, SHAPE(3, 2), VALS(1, 3, 5, 7, 9, 11));
    ls_value_release(&r);
    /* x[[0, 2], [1, 3]] → pairs; and index shapes broadcast: x[[[0],[2]], [1, 3]] → [2, 2] */
    r = kt_run(LS_OP_index_Tensor, 2, VT(ls_tensor_ref(x)),
               VLIST(2, VT(kt(LS_DT_I64, SHAPE(2), VALS(0, 2))), VT(kt(LS_DT_I64, SHAPE(2), VALS(1, 3)))));
    kt_expect(&r, LS_DT_F32, SHAPE(2), VALS(1, 11));
    ls_value_release(&r);
    r = kt_run(LS_OP_index_Tensor, 2, VT(ls_tensor_ref(x)),
               VLIST(2, VT(kt(LS_DT_I64, SHAPE(2, 1), VALS(0, 2))), VT(kt(LS_DT_I64, SHAPE(2), VALS(1, 3)))));
    kt_expect(&r, LS_DT_F32, SHAPE(2, 2), VALS(1, 3, 9, 11));
    ls_value_release(&r);
    /* boolean mask over rows, and over the whole tensor */
    r = kt_run(LS_OP_index_Tensor, 2, VT(ls_tensor_ref(x)), VLIST(1, VT(kt(LS_DT_BOOL, SHAPE(3), VALS(1, 0, 1)))));
    kt_expect(&r, LS_DT_F32, SHAPE(2, 4), VALS(0, 1, 2, 3, 8, 9, 10, 11));
    ls_value_release(&r);
    ls_tensor *m = kt(LS_DT_BOOL, SHAPE(3, 4), NULL);
    ((uint8_t *)m->data)[5] = ((uint8_t *)m->data)[11] = 1;
    r = kt_run(LS_OP_index_Tensor, 2, VT(ls_tensor_ref(x)), VLIST(1, VT(m)));
    kt_expect(&r, LS_DT_F32, SHAPE(2), VALS(5, 11));
    ls_value_release(&r);
    /* a mask with no True gives an empty result */
    r = kt_run(LS_OP_index_Tensor, 2, VT(ls_tensor_ref(x)), VLIST(2, VN, VT(kt(LS_DT_BOOL, SHAPE(4), NULL))));
    kt_expect(&r, LS_DT_F32, SHAPE(3, 0), NULL);
    ls_value_release(&r);
    kt_fails("out of bounds for dimension 1 with size 4", LS_OP_index_Tensor, 2, VT(ls_tensor_ref(x)),
             VLIST(2, VN, VT(kt(LS_DT_I64, SHAPE(1), VALS(4)))));
    kt_fails("does not match", LS_OP_index_Tensor, 2, VT(ls_tensor_ref(x)), VLIST(1, VT(kt(LS_DT_BOOL, SHAPE(4), NULL))));
    kt_fails("long, int, byte or bool", LS_OP_index_Tensor, 2, VT(ls_tensor_ref(x)), VLIST(1, VT(kt(LS_DT_F32, SHAPE(1), NULL))));
    ls_tensor_unref(x);

    /* non-adjacent index tensors put the indexed dims first: y[[0,1], :, [1,0]] of [2,3,2] → [2, 3] */
    ls_tensor *y = kt_iota(LS_DT_F32, SHAPE(2, 3, 2));
    r = kt_run(LS_OP_index_Tensor, 2, VT(y),
               VLIST(3, VT(kt(LS_DT_I64, SHAPE(2), VALS(0, 1))), VN, VT(kt(LS_DT_I64, SHAPE(2), VALS(1, 0)))));
    kt_expect(&r, LS_DT_F32, SHAPE(2, 3), VALS(1, 3, 5, 6, 8, 10));
    ls_value_release(&r);
    /* adjacent in the middle: z[:, [2, 0]] of [2, 3, 2] keeps the place → [2, 2, 2] */
    r = kt_run(LS_OP_index_Tensor, 2, VT(kt_iota(LS_DT_F32, SHAPE(2, 3, 2))), VLIST(2, VN, VT(kt(LS_DT_I64, SHAPE(2), VALS(2, 0)))));
    kt_expect(&r, LS_DT_F32, SHAPE(2, 2, 2), VALS(4, 5, 0, 1, 10, 11, 6, 7));
    ls_value_release(&r);
}
END_TEST

START_TEST(index_put_forms)
{
    /* cache[:, pos] = v (the kv-cache update) */
    ls_tensor *cache = kt(LS_DT_F32, SHAPE(2, 3), NULL);
    ls_value r = kt_run(LS_OP_index_put, 4, VT(ls_tensor_ref(cache)), VLIST(2, VN, VT(kt(LS_DT_I64, SHAPE(1), VALS(1)))),
                        VT(kt(LS_DT_F32, SHAPE(2, 1), VALS(5, 6))), VB(false));
    kt_expect(&r, LS_DT_F32, SHAPE(2, 3), VALS(0, 5, 0, 0, 6, 0));
    kt_expect(&(ls_value){.kind = LS_V_TENSOR, .t = cache}, LS_DT_F32, SHAPE(2, 3), VALS(0, 0, 0, 0, 0, 0)); /* functional */
    ls_value_release(&r);
    /* accumulate with a repeated index adds twice; values broadcast */
    r = kt_run(LS_OP_index_put, 4, VT(kt(LS_DT_I64, SHAPE(3), VALS(1, 1, 1))), VLIST(1, VT(kt(LS_DT_I64, SHAPE(3), VALS(0, 2, 0)))),
               VT(kt(LS_DT_I64, SCALAR_SHAPE, VALS(10))), VB(true));
    kt_expect(&r, LS_DT_I64, SHAPE(3), VALS(21, 1, 11));
    ls_value_release(&r);
    /* index_put_ modifies self and returns it */
    r = kt_run(LS_OP_index_put_, 4, VT(ls_tensor_ref(cache)), VLIST(1, VT(kt(LS_DT_BOOL, SHAPE(2), VALS(0, 1)))),
               VT(kt(LS_DT_F64, SHAPE(3), VALS(1, 2, 3))), VB(false));
    ck_assert_ptr_eq(r.t, cache);
    kt_expect(&r, LS_DT_F32, SHAPE(2, 3), VALS(0, 0, 0, 1, 2, 3));
    ls_value_release(&r);
    kt_fails("cannot be broadcast", LS_OP_index_put, 4, VT(ls_tensor_ref(cache)), VLIST(1, VT(kt(LS_DT_I64, SHAPE(1), VALS(0)))),
             VT(kt(LS_DT_F32, SHAPE(2), NULL)), VB(false));
    ls_tensor_unref(cache);
}
END_TEST

START_TEST(index_select_gather_embedding)
{
    ls_value r = kt_run(LS_OP_index_select, 3, VT(kt_iota(LS_DT_F32, SHAPE(2, 3))), VI(1), VT(kt(LS_DT_I64, SHAPE(3), VALS(2, 0, 2))));
    kt_expect(&r, LS_DT_F32, SHAPE(2, 3), VALS(2, 0, 2, 5, 3, 5));
    ls_value_release(&r);
    r = kt_run(LS_OP_gather, 4, VT(kt_iota(LS_DT_F32, SHAPE(2, 3))), VI(1), VT(kt(LS_DT_I64, SHAPE(2, 2), VALS(2, 0, 2, 1))),
               VB(false));
    kt_expect(&r, LS_DT_F32, SHAPE(2, 2), VALS(2, 0, 5, 4));
    ls_value_release(&r);
    kt_fails("out of bounds", LS_OP_gather, 4, VT(kt_iota(LS_DT_F32, SHAPE(2, 3))), VI(1), VT(kt(LS_DT_I64, SHAPE(1, 1), VALS(-1))),
             VB(false));
    r = kt_run(LS_OP_gather, 4, VT(kt_iota(LS_DT_F32, SHAPE(2, 3))), VI(0), VT(kt(LS_DT_I64, SHAPE(1, 3), VALS(1, 0, 1))), VB(false));
    kt_expect(&r, LS_DT_F32, SHAPE(1, 3), VALS(3, 1, 5));
    ls_value_release(&r);
    r = kt_run(LS_OP_embedding, 5, VT(kt_iota(LS_DT_F32, SHAPE(4, 2))), VT(kt(LS_DT_I64, SHAPE(1, 3), VALS(3, 0, 3))), VI(-1),
               VB(false), VB(false));
    kt_expect(&r, LS_DT_F32, SHAPE(1, 3, 2), VALS(6, 7, 0, 1, 6, 7));
    ls_value_release(&r);
    kt_fails("out of range", LS_OP_embedding, 5, VT(kt_iota(LS_DT_F32, SHAPE(4, 2))), VT(kt(LS_DT_I64, SHAPE(1), VALS(4))), VI(-1),
             VB(false), VB(false));
}
END_TEST

START_TEST(creation_and_conversion)
{
    ls_value r = kt_run(LS_OP_full, 2, VINTS(2, 2), VI(3)); /* an int fill gives int64 */
    kt_expect(&r, LS_DT_I64, SHAPE(2, 2), VALS(3, 3, 3, 3));
    ls_value_release(&r);
    r = kt_run(LS_OP_full, 3, VINTS(2), VF(-INFINITY), VDT(LS_DT_F16));
    kt_expect(&r, LS_DT_F16, SHAPE(2), VALS(-INFINITY, -INFINITY));
    ls_value_release(&r);
    r = kt_run(LS_OP_ones, 1, VINTS(2));
    kt_expect(&r, LS_DT_F32, SHAPE(2), VALS(1, 1));
    ls_value_release(&r);
    r = kt_run(LS_OP_arange, 1, VI(4));
    kt_expect(&r, LS_DT_I64, SHAPE(4), VALS(0, 1, 2, 3));
    ls_value_release(&r);
    r = kt_run(LS_OP_arange_start_step, 3, VI(1), VF(2), VF(0.25));
    kt_expect(&r, LS_DT_F32, SHAPE(4), VALS(1, 1.25, 1.5, 1.75));
    ls_value_release(&r);
    r = kt_run(LS_OP_arange_start_step, 3, VI(5), VI(0), VI(-2));
    kt_expect(&r, LS_DT_I64, SHAPE(3), VALS(5, 3, 1));
    ls_value_release(&r);
    kt_fails("nonzero", LS_OP_arange_start_step, 3, VI(0), VI(5), VI(0));
    kt_fails("unsupported range", LS_OP_arange_start_step, 3, VF(0), VF(5), VF(NAN));
    r = kt_run(LS_OP_zeros_like, 2, VT(kt_iota(LS_DT_I32, SHAPE(2))), VDT(LS_DT_BOOL));
    kt_expect(&r, LS_DT_BOOL, SHAPE(2), VALS(0, 0));
    ls_value_release(&r);
    r = kt_run(LS_OP_full_like, 2, VT(kt_iota(LS_DT_F32, SHAPE(2))), VF(0.5));
    kt_expect(&r, LS_DT_F32, SHAPE(2), VALS(0.5, 0.5));
    ls_value_release(&r);
    r = kt_run(LS_OP_scalar_tensor, 1, VI(7));
    kt_expect(&r, LS_DT_F32, SCALAR_SHAPE, VALS(7));
    ls_value_release(&r);
    /* float → int truncates toward zero; NaN does not crash */
    r = kt_run(LS_OP__to_copy, 2, VT(kt(LS_DT_F32, SHAPE(4), VALS(1.7, -1.7, 300, NAN))), VDT(LS_DT_I32));
    ck_assert_int_eq(((int32_t *)r.t->data)[0], 1);
    ck_assert_int_eq(((int32_t *)r.t->data)[1], -1);
    ck_assert_int_eq(((int32_t *)r.t->data)[2], 300);
    ls_value_release(&r);
    r = kt_run(LS_OP__to_dim_order_copy, 2, VT(kt(LS_DT_F32, SHAPE(2), VALS(0.1, 2))), VDT(LS_DT_BF16));
    kt_expect_tol(&r, LS_DT_BF16, SHAPE(2), VALS(0.1, 2), 1e-2);
    ls_value_release(&r);
    r = kt_run(LS_OP_copy, 2, VT(kt(LS_DT_I64, SHAPE(2, 2), NULL)), VT(kt(LS_DT_F32, SHAPE(2), VALS(1.5, 2.5))));
    kt_expect(&r, LS_DT_I64, SHAPE(2, 2), VALS(1, 2, 1, 2));
    ls_value_release(&r);
    ls_tensor *dst = kt(LS_DT_F32, SHAPE(2), NULL);
    r = kt_run(LS_OP_copy_, 2, VT(ls_tensor_ref(dst)), VT(kt(LS_DT_F32, SHAPE(2), VALS(3, 4))));
    ck_assert_ptr_eq(r.t, dst);
    kt_expect(&r, LS_DT_F32, SHAPE(2), VALS(3, 4));
    ls_value_release(&r);
    ls_tensor_unref(dst);
    r = kt_run(LS_OP_sym_size_int, 2, VT(kt(LS_DT_F32, SHAPE(2, 5), NULL)), VI(-1));
    ck_assert_int_eq(r.kind, LS_V_INT);
    ck_assert_int_eq(r.i, 5);
    ls_value_release(&r);
}
END_TEST

START_TEST(copies_and_small_forms)
{
    ls_tensor *x = kt(LS_DT_F32, SHAPE(2), VALS(1, 2));
    ls_op_id copies[] = {LS_OP_clone, LS_OP_lift_fresh_copy, LS_OP__clone_dim_order, LS_OP_alias_copy};
    for (int i = 0; i < 4; i++) {
        ls_value r = kt_run(copies[i], 1, VT(ls_tensor_ref(x)));
        kt_expect(&r, LS_DT_F32, SHAPE(2), VALS(1, 2));
        ck_assert_ptr_ne(r.t->data, x->data); /* new storage */
        ls_value_release(&r);
    }
    ls_value r = kt_run(LS_OP_alias, 1, VT(ls_tensor_ref(x)));
    ck_assert_ptr_eq(r.t->data, x->data); /* the aliasing op shares */
    ls_value_release(&r);
    r = kt_run(LS_OP_ones_like, 1, VT(ls_tensor_ref(x)));
    kt_expect(&r, LS_DT_F32, SHAPE(2), VALS(1, 1));
    ls_value_release(&r);
    r = kt_run(LS_OP_zeros, 2, VINTS(1, 2), VDT(LS_DT_I32));
    kt_expect(&r, LS_DT_I32, SHAPE(1, 2), VALS(0, 0));
    ls_value_release(&r);
    r = kt_run(LS_OP_arange_start, 2, VI(-2), VI(1));
    kt_expect(&r, LS_DT_I64, SHAPE(3), VALS(-2, -1, 0));
    ls_value_release(&r);
    r = kt_run(LS_OP_where_ScalarSelf, 3, VT(kt(LS_DT_BOOL, SHAPE(2), VALS(1, 0))), VI(7), VT(ls_tensor_ref(x)));
    kt_expect(&r, LS_DT_F32, SHAPE(2), VALS(7, 2));
    ls_value_release(&r);
    /* getitem picks from a tuple; a tensor is not one */
    r = kt_run(LS_OP_getitem, 2, VLIST(2, VT(kt(LS_DT_F32, SHAPE(1), VALS(3))), VT(ls_tensor_ref(x))), VI(-1));
    ck_assert_ptr_eq(r.t, x);
    ls_value_release(&r);
    kt_fails("out of range", LS_OP_getitem, 2, VLIST(1, VN), VI(1));
    kt_fails("not a list", LS_OP_getitem, 2, VT(ls_tensor_ref(x)), VI(0));
    /* float16 and bfloat16 computed in float32: a product and a sum */
    r = kt_run(LS_OP_mm, 2, VT(kt(LS_DT_F16, SHAPE(1, 2), VALS(0.5, 2))), VT(kt(LS_DT_F16, SHAPE(2, 1), VALS(4, 0.25))));
    kt_expect(&r, LS_DT_F16, SHAPE(1, 1), VALS(2.5));
    ls_value_release(&r);
    r = kt_run(LS_OP_sum_dim_IntList, 4, VT(kt(LS_DT_BF16, SHAPE(3), VALS(1, 2, 0.5))), VINTS(0), VB(false), VN);
    kt_expect(&r, LS_DT_BF16, SCALAR_SHAPE, VALS(3.5));
    ls_value_release(&r);
    ls_tensor_unref(x);
}
END_TEST

START_TEST(layer_norm_forms)
{
    /* row [1,2,3,4]: mean 2.5, var 1.25 */
    double rs = 1 / sqrt(1.25 + 1e-5);
    ls_value r = kt_run(LS_OP_layer_norm, 6, VT(kt(LS_DT_F32, SHAPE(1, 4), VALS(1, 2, 3, 4))), VINTS(4),
                        VT(kt(LS_DT_F32, SHAPE(4), VALS(1, 1, 2, 2))), VT(kt(LS_DT_F32, SHAPE(4), VALS(0, 0, 0, 1))), VF(1e-5),
                        VB(true));
    kt_expect(&r, LS_DT_F32, SHAPE(1, 4), VALS(-1.5 * rs, -0.5 * rs, 2 * 0.5 * rs, 2 * 1.5 * rs + 1));
    ls_value_release(&r);
    r = kt_run(LS_OP_native_layer_norm, 5, VT(kt(LS_DT_F32, SHAPE(2, 2), VALS(1, 3, 0, 0))), VINTS(2), VN, VN, VF(0));
    ck_assert_uint_eq(r.n, 3);
    kt_expect(&r.items[0], LS_DT_F32, SHAPE(2, 2), VALS(-1, 1, NAN, NAN)); /* a constant row with eps 0 is 0/0 */
    kt_expect(&r.items[1], LS_DT_F32, SHAPE(2, 1), VALS(2, 0));
    kt_expect(&r.items[2], LS_DT_F32, SHAPE(2, 1), VALS(1, INFINITY));
    ls_value_release(&r);
    kt_fails("normalized_shape", LS_OP_layer_norm, 6, VT(kt(LS_DT_F32, SHAPE(2, 3), NULL)), VINTS(2), VN, VN, VF(1e-5), VB(true));
}
END_TEST

START_TEST(attention)
{
    /* one query, two keys: scores [1, 0]·scale(1) → softmax [e/(e+1), 1/(e+1)] */
    double p = M_E / (M_E + 1);
    ls_value r = kt_run(LS_OP_sdpa, 8, VT(kt(LS_DT_F32, SHAPE(1, 1, 1), VALS(1))), VT(kt(LS_DT_F32, SHAPE(1, 2, 1), VALS(1, 0))),
                        VT(kt(LS_DT_F32, SHAPE(1, 2, 2), VALS(10, 0, 0, 10))), VN, VF(0), VB(false), VF(1), VB(false));
    kt_expect(&r, LS_DT_F32, SHAPE(1, 1, 2), VALS(10 * p, 10 * (1 - p)));
    ls_value_release(&r);
    /* default scale 1/sqrt(E), causal: row 0 sees only key 0 */
    r = kt_run(LS_OP_sdpa, 8, VT(kt(LS_DT_F32, SHAPE(2, 4), VALS(1, 1, 1, 1, 0, 0, 0, 0))),
               VT(kt(LS_DT_F32, SHAPE(2, 4), VALS(1, 0, 0, 0, 0, 0, 0, 0))), VT(kt(LS_DT_F32, SHAPE(2, 1), VALS(3, 5))), VN, VF(0),
               VB(true), VN, VB(false));
    kt_expect(&r, LS_DT_F32, SHAPE(2, 1), VALS(3, 4)); /* row 1: equal scores → mean of 3 and 5 */
    ls_value_release(&r);
    /* a boolean mask hides key 1; a fully masked row gives zeros, not NaN */
    r = kt_run(LS_OP_sdpa, 8, VT(kt(LS_DT_F32, SHAPE(2, 1), VALS(1, 1))), VT(kt(LS_DT_F32, SHAPE(2, 1), VALS(5, 0))),
               VT(kt(LS_DT_F32, SHAPE(2, 1), VALS(3, 5))), VT(kt(LS_DT_BOOL, SHAPE(2, 2), VALS(0, 1, 0, 0))), VF(0), VB(false), VN,
               VB(false));
    kt_expect(&r, LS_DT_F32, SHAPE(2, 1), VALS(5, 0));
    ls_value_release(&r);
    /* grouped-query: 2 query heads share 1 key/value head */
    r = kt_run(LS_OP_sdpa, 8, VT(kt(LS_DT_F32, SHAPE(2, 1, 1), VALS(1, -1))), VT(kt(LS_DT_F32, SHAPE(1, 1, 1), VALS(1))),
               VT(kt(LS_DT_F32, SHAPE(1, 1, 1), VALS(7))), VN, VF(0), VB(false), VN, VB(true));
    kt_expect(&r, LS_DT_F32, SHAPE(2, 1, 1), VALS(7, 7));
    ls_value_release(&r);
}
END_TEST

Suite *kernels_shape_suite(void)
{
    Suite *s = suite_create("kernels_shape");
    TCase *tc = tcase_create("core");
    tcase_add_test(tc, view_reshape_share_and_copy_forms_do_not);
    tcase_add_test(tc, permute_transpose_t);
    tcase_add_test(tc, unsqueeze_squeeze_expand);
    tcase_add_test(tc, slice_select_split_chunk);
    tcase_add_test(tc, cat_stack_pad);
    tcase_add_test(tc, advanced_indexing);
    tcase_add_test(tc, index_put_forms);
    tcase_add_test(tc, index_select_gather_embedding);
    tcase_add_test(tc, creation_and_conversion);
    tcase_add_test(tc, copies_and_small_forms);
    tcase_add_test(tc, layer_norm_forms);
    tcase_add_test(tc, attention);
    suite_add_tcase(s, tc);
    return s;
}
