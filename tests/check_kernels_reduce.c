/* Reductions, scans, softmax and the matrix products against hand-computed values. */
#include <check.h>
#include <math.h>
#include <stdint.h>
#include <stdlib.h>

#include "ktest.h"
#include "ops.h"
#include "runtime.h"

START_TEST(sum_over_dims_with_keepdim)
{
    /* x = [[[0,1,2],[3,4,5]],[[6,7,8],[9,10,11]]] */
    ls_value r = kt_run(LS_OP_sum_dim_IntList, 4, VT(kt_iota(LS_DT_F32, SHAPE(2, 2, 3))), VINTS(-1), VB(false), VN);
    kt_expect(&r, LS_DT_F32, SHAPE(2, 2), VALS(3, 12, 21, 30));
    ls_value_release(&r);
    r = kt_run(LS_OP_sum_dim_IntList, 4, VT(kt_iota(LS_DT_F32, SHAPE(2, 2, 3))), VINTS(0), VB(true), VN);
    kt_expect(&r, LS_DT_F32, SHAPE(1, 2, 3), VALS(6, 8, 10, 12, 14, 16));
    ls_value_release(&r);
    /* scattered dims (0 and 2) go through a permutation */
    r = kt_run(LS_OP_sum_dim_IntList, 4, VT(kt_iota(LS_DT_F32, SHAPE(2, 2, 3))), VINTS(0, 2), VB(true), VN);
    kt_expect(&r, LS_DT_F32, SHAPE(1, 2, 1), VALS(24, 42));
    ls_value_release(&r);
    /* dim=None reduces everything */
    r = kt_run(LS_OP_sum_dim_IntList, 4, VT(kt_iota(LS_DT_F32, SHAPE(2, 2, 3))), VN, VB(false), VN);
    kt_expect(&r, LS_DT_F32, SCALAR_SHAPE, VALS(66));
    ls_value_release(&r);
    r = kt_run(LS_OP_sum, 2, VT(kt_iota(LS_DT_F32, SHAPE(4))), VDT(LS_DT_F64));
    kt_expect(&r, LS_DT_F64, SCALAR_SHAPE, VALS(6));
    ls_value_release(&r);
    kt_fails("out of range", LS_OP_sum_dim_IntList, 4, VT(kt_iota(LS_DT_F32, SHAPE(2))), VINTS(2), VB(false), VN);
    kt_fails("multiple times", LS_OP_sum_dim_IntList, 4, VT(kt_iota(LS_DT_F32, SHAPE(2, 2))), VINTS(1, -1), VB(false), VN);
}
END_TEST

START_TEST(integer_sums_are_int64_and_do_not_overflow)
{
    ls_tensor *t = kt(LS_DT_I32, SHAPE(3), VALS(2147483647, 2147483647, 2));
    ls_value r = kt_run(LS_OP_sum_dim_IntList, 4, VT(t), VINTS(0), VB(false), VN);
    ck_assert_int_eq(r.t->dtype, LS_DT_I64);
    ck_assert(((int64_t *)r.t->data)[0] == 4294967296LL);
    ls_value_release(&r);
    r = kt_run(LS_OP_sum, 2, VT(kt(LS_DT_BOOL, SHAPE(4), VALS(1, 0, 1, 1))), VN);
    kt_expect(&r, LS_DT_I64, SCALAR_SHAPE, VALS(3));
    ls_value_release(&r);
    /* dtype= keeps the narrow type (and wraps, as torch does) */
    r = kt_run(LS_OP_sum_dim_IntList, 4, VT(kt(LS_DT_I8, SHAPE(2), VALS(100, 100))), VINTS(0), VB(false), VDT(LS_DT_I8));
    kt_expect(&r, LS_DT_I8, SCALAR_SHAPE, VALS(-56));
    ls_value_release(&r);
}
END_TEST

START_TEST(empty_reductions)
{
    ls_value r = kt_run(LS_OP_sum_dim_IntList, 4, VT(kt(LS_DT_F32, SHAPE(0, 3), NULL)), VINTS(0), VB(false), VN);
    kt_expect(&r, LS_DT_F32, SHAPE(3), VALS(0, 0, 0));
    ls_value_release(&r);
    r = kt_run(LS_OP_mean_dim, 4, VT(kt(LS_DT_F32, SHAPE(0), NULL)), VINTS(0), VB(false), VN);
    kt_expect(&r, LS_DT_F32, SCALAR_SHAPE, VALS(NAN));
    ls_value_release(&r);
    kt_fails("non-zero size", LS_OP_amax, 3, VT(kt(LS_DT_F32, SHAPE(2, 0), NULL)), VINTS(1), VB(false));
    kt_fails("empty", LS_OP_argmax, 3, VT(kt(LS_DT_F32, SHAPE(0), NULL)), VN, VB(false));
}
END_TEST

START_TEST(mean_amax_amin_argmax)
{
    ls_value r = kt_run(LS_OP_mean_dim, 4, VT(kt_iota(LS_DT_F32, SHAPE(2, 3))), VINTS(1), VB(true), VN);
    kt_expect(&r, LS_DT_F32, SHAPE(2, 1), VALS(1, 4));
    ls_value_release(&r);
    r = kt_run(LS_OP_mean, 2, VT(kt_iota(LS_DT_F16, SHAPE(4))), VN);
    kt_expect(&r, LS_DT_F16, SCALAR_SHAPE, VALS(1.5));
    ls_value_release(&r);
    kt_fails("floating point", LS_OP_mean_dim, 4, VT(kt_iota(LS_DT_I64, SHAPE(2))), VINTS(0), VB(false), VN);
    r = kt_run(LS_OP_amax, 3, VT(kt(LS_DT_F32, SHAPE(2, 3), VALS(1, 5, 2, -1, NAN, 0))), VINTS(1), VB(false));
    kt_expect(&r, LS_DT_F32, SHAPE(2), VALS(5, NAN));
    ls_value_release(&r);
    r = kt_run(LS_OP_amin, 3, VT(kt(LS_DT_I64, SHAPE(2, 3), VALS(1, 5, 2, -1, 7, 0))), VINTS(0), VB(true));
    kt_expect(&r, LS_DT_I64, SHAPE(1, 3), VALS(-1, 5, 0));
    ls_value_release(&r);
    r = kt_run(LS_OP_amax, 3, VT(kt_iota(LS_DT_F32, SHAPE(2, 3))), VEMPTY, VB(false)); /* dim=[]: all */
    kt_expect(&r, LS_DT_F32, SCALAR_SHAPE, VALS(5));
    ls_value_release(&r);
    /* argmax: first maximum, a NaN wins, dim=None flattens */
    r = kt_run(LS_OP_argmax, 3, VT(kt(LS_DT_F32, SHAPE(2, 3), VALS(1, 5, 5, -1, NAN, 9))), VI(1), VB(false));
    kt_expect(&r, LS_DT_I64, SHAPE(2), VALS(1, 1));
    ls_value_release(&r);
    r = kt_run(LS_OP_argmax, 3, VT(kt(LS_DT_F32, SHAPE(2, 3), VALS(1, 5, 5, -1, 2, 9))), VN, VB(false));
    kt_expect(&r, LS_DT_I64, SCALAR_SHAPE, VALS(5));
    ls_value_release(&r);
    r = kt_run(LS_OP_argmax, 3, VT(kt(LS_DT_I32, SHAPE(2, 3), VALS(1, 5, 5, -1, 2, 9))), VI(0), VB(true));
    kt_expect(&r, LS_DT_I64, SHAPE(1, 3), VALS(0, 0, 1));
    ls_value_release(&r);
}
END_TEST

START_TEST(cumsum_and_softmax)
{
    ls_value r = kt_run(LS_OP_cumsum, 3, VT(kt_iota(LS_DT_I32, SHAPE(2, 3))), VI(1), VN);
    kt_expect(&r, LS_DT_I64, SHAPE(2, 3), VALS(0, 1, 3, 3, 7, 12));
    ls_value_release(&r);
    r = kt_run(LS_OP_cumsum, 3, VT(kt_iota(LS_DT_F32, SHAPE(2, 3))), VI(-2), VN);
    kt_expect(&r, LS_DT_F32, SHAPE(2, 3), VALS(0, 1, 2, 3, 5, 7));
    ls_value_release(&r);
    /* softmax([0, ln 2, ln 3]) = [1/6, 2/6, 3/6] */
    double l2 = log(2.0), l3 = log(3.0);
    r = kt_run(LS_OP__softmax, 3, VT(kt(LS_DT_F32, SHAPE(2, 3), VALS(0, l2, l3, 10, 10 + l2, 10 + l3))), VI(-1), VB(false));
    kt_expect(&r, LS_DT_F32, SHAPE(2, 3), VALS(1.0 / 6, 2.0 / 6, 3.0 / 6, 1.0 / 6, 2.0 / 6, 3.0 / 6));
    ls_value_release(&r);
    /* over dim 0 of a [3, 2] (columns) */
    r = kt_run(LS_OP_softmax_int, 3, VT(kt(LS_DT_F32, SHAPE(3, 2), VALS(0, 0, l2, 0, l3, 0))), VI(0), VN);
    kt_expect(&r, LS_DT_F32, SHAPE(3, 2), VALS(1.0 / 6, 1.0 / 3, 2.0 / 6, 1.0 / 3, 3.0 / 6, 1.0 / 3));
    ls_value_release(&r);
    r = kt_run(LS_OP__log_softmax, 3, VT(kt(LS_DT_F64, SHAPE(3), VALS(0, l2, l3))), VI(0), VB(false));
    kt_expect(&r, LS_DT_F64, SHAPE(3), VALS(log(1.0 / 6), log(2.0 / 6), log(0.5)));
    ls_value_release(&r);
    r = kt_run(LS_OP_log_softmax_int, 3, VT(kt(LS_DT_F16, SHAPE(2), VALS(0, 0))), VI(0), VDT(LS_DT_F32));
    kt_expect(&r, LS_DT_F32, SHAPE(2), VALS(-M_LN2, -M_LN2));
    ls_value_release(&r);
    /* -inf entries get 0; a large input does not overflow */
    r = kt_run(LS_OP__softmax, 3, VT(kt(LS_DT_F32, SHAPE(3), VALS(-INFINITY, 1000, 1000))), VI(0), VB(false));
    kt_expect(&r, LS_DT_F32, SHAPE(3), VALS(0, 0.5, 0.5));
    ls_value_release(&r);
    /* half_to_float */
    r = kt_run(LS_OP__softmax, 3, VT(kt(LS_DT_F16, SHAPE(2), VALS(1, 1))), VI(0), VB(true));
    kt_expect(&r, LS_DT_F32, SHAPE(2), VALS(0.5, 0.5));
    ls_value_release(&r);
}
END_TEST

START_TEST(small_matrix_products)
{
    /* [[1,2,3],[4,5,6]] · [[1,0],[0,1],[1,1]] = [[4,5],[10,11]] */
    ls_tensor *a = kt(LS_DT_F32, SHAPE(2, 3), VALS(1, 2, 3, 4, 5, 6));
    ls_tensor *b = kt(LS_DT_F32, SHAPE(3, 2), VALS(1, 0, 0, 1, 1, 1));
    ls_value r = kt_run(LS_OP_mm, 2, VT(ls_tensor_ref(a)), VT(ls_tensor_ref(b)));
    kt_expect(&r, LS_DT_F32, SHAPE(2, 2), VALS(4, 5, 10, 11));
    ls_value_release(&r);
    r = kt_run(LS_OP_addmm, 5, VT(kt(LS_DT_F32, SHAPE(2), VALS(1, -1))), VT(ls_tensor_ref(a)), VT(ls_tensor_ref(b)), VF(2),
               VF(0.5));
    kt_expect(&r, LS_DT_F32, SHAPE(2, 2), VALS(4, 0.5, 7, 3.5));
    ls_value_release(&r);
    /* linear: W is [out, in] */
    r = kt_run(LS_OP_linear, 3, VT(ls_tensor_ref(a)), VT(kt(LS_DT_F32, SHAPE(1, 3), VALS(1, 1, 1))),
               VT(kt(LS_DT_F32, SHAPE(1), VALS(0.5))));
    kt_expect(&r, LS_DT_F32, SHAPE(2, 1), VALS(6.5, 15.5));
    ls_value_release(&r);
    r = kt_run(LS_OP_linear, 3, VT(kt_iota(LS_DT_F32, SHAPE(2, 1, 2))), VT(kt(LS_DT_F32, SHAPE(2, 2), VALS(1, 0, 1, 1))), VN);
    kt_expect(&r, LS_DT_F32, SHAPE(2, 1, 2), VALS(0, 1, 2, 5));
    ls_value_release(&r);
    /* integer and float64 products go through the generic loops */
    r = kt_run(LS_OP_mm, 2, VT(kt(LS_DT_I64, SHAPE(2, 3), VALS(1, 2, 3, 4, 5, 6))), VT(kt(LS_DT_I64, SHAPE(3, 1), VALS(1, 1, 1))));
    kt_expect(&r, LS_DT_I64, SHAPE(2, 1), VALS(6, 15));
    ls_value_release(&r);
    r = kt_run(LS_OP_addmm, 5, VT(kt(LS_DT_F64, SHAPE(1), VALS(1))), VT(kt(LS_DT_F64, SHAPE(1, 2), VALS(1, 2))),
               VT(kt(LS_DT_F64, SHAPE(2, 1), VALS(3, 4))), VI(1), VI(1));
    kt_expect(&r, LS_DT_F64, SHAPE(1, 1), VALS(12));
    ls_value_release(&r);
    kt_fails("cannot be multiplied", LS_OP_mm, 2, VT(ls_tensor_ref(a)), VT(ls_tensor_ref(a)));
    ls_tensor_unref(a);
    ls_tensor_unref(b);
}
END_TEST

START_TEST(matmul_ranks_and_batches)
{
    /* 1-d · 1-d = dot */
    ls_value r = kt_run(LS_OP_matmul, 2, VT(kt(LS_DT_F32, SHAPE(3), VALS(1, 2, 3))), VT(kt(LS_DT_F32, SHAPE(3), VALS(4, 5, 6))));
    kt_expect(&r, LS_DT_F32, SCALAR_SHAPE, VALS(32));
    ls_value_release(&r);
    /* 1-d · 2-d */
    r = kt_run(LS_OP_matmul, 2, VT(kt(LS_DT_F32, SHAPE(2), VALS(1, 1))), VT(kt(LS_DT_F32, SHAPE(2, 3), VALS(1, 2, 3, 4, 5, 6))));
    kt_expect(&r, LS_DT_F32, SHAPE(3), VALS(5, 7, 9));
    ls_value_release(&r);
    /* 2-d · 1-d */
    r = kt_run(LS_OP_matmul, 2, VT(kt(LS_DT_F32, SHAPE(2, 3), VALS(1, 2, 3, 4, 5, 6))), VT(kt(LS_DT_F32, SHAPE(3), VALS(1, 0, 1))));
    kt_expect(&r, LS_DT_F32, SHAPE(2), VALS(4, 10));
    ls_value_release(&r);
    /* batch broadcasting: [2,1,2,2] · [3,2,1] → [2,3,2,1] */
    r = kt_run(LS_OP_matmul, 2, VT(kt_iota(LS_DT_F32, SHAPE(2, 1, 2, 2))), VT(kt_iota(LS_DT_F32, SHAPE(3, 2, 1))));
    /* a0 = [[0,1],[2,3]], a1 = [[4,5],[6,7]]; b = [0,1], [2,3], [4,5] */
    kt_expect(&r, LS_DT_F32, SHAPE(2, 3, 2, 1), VALS(1, 3, 3, 13, 5, 23, 5, 7, 23, 33, 41, 59));
    ls_value_release(&r);
    r = kt_run(LS_OP_bmm, 2, VT(kt_iota(LS_DT_F32, SHAPE(2, 1, 2))), VT(kt_iota(LS_DT_F32, SHAPE(2, 2, 1))));
    kt_expect(&r, LS_DT_F32, SHAPE(2, 1, 1), VALS(1, 13));
    ls_value_release(&r);
    kt_fails("batch", LS_OP_bmm, 2, VT(kt_iota(LS_DT_F32, SHAPE(2, 1, 2))), VT(kt_iota(LS_DT_F32, SHAPE(3, 2, 1))));
    /* K = 0: an empty sum gives zeros */
    r = kt_run(LS_OP_mm, 2, VT(kt(LS_DT_F32, SHAPE(2, 0), NULL)), VT(kt(LS_DT_F32, SHAPE(0, 2), NULL)));
    kt_expect(&r, LS_DT_F32, SHAPE(2, 2), VALS(0, 0, 0, 0));
    ls_value_release(&r);
}
END_TEST

/* The blocked GEMM against a double-precision triple loop, across the edge cases of its
 * blocking: partial micro-tiles, several KC slices, several MC blocks, both thread splits,
 * the small-M paths, and B read transposed (linear). */
static void check_gemm(int64_t M, int64_t N, int64_t K, bool transposed)
{
    ls_tensor *a = ls_tensor_alloc(LS_DT_F32, 2, (int64_t[]){M, K});
    ls_tensor *b = ls_tensor_alloc(LS_DT_F32, 2, transposed ? (int64_t[]){N, K} : (int64_t[]){K, N});
    unsigned s = 12345;
    for (int64_t i = 0; i < a->numel; i++) ((float *)a->data)[i] = (float)((s = s * 1103515245 + 12345) >> 16 & 1023) / 512 - 1;
    for (int64_t i = 0; i < b->numel; i++) ((float *)b->data)[i] = (float)((s = s * 1103515245 + 12345) >> 16 & 1023) / 512 - 1;
    ls_value r = transposed ? kt_run(LS_OP_linear, 3, VT(ls_tensor_ref(a)), VT(ls_tensor_ref(b)), VN)
                            : kt_run(LS_OP_mm, 2, VT(ls_tensor_ref(a)), VT(ls_tensor_ref(b)));
    const float *A = a->data, *B = b->data, *C = r.t->data;
    int64_t bad = 0;
    for (int64_t i = 0; i < M; i++)
        for (int64_t j = 0; j < N; j++) {
            double want = 0;
            for (int64_t k = 0; k < K; k++) want += (double)A[i * K + k] * (transposed ? B[j * K + k] : B[k * N + j]);
            if (fabs(C[i * N + j] - want) > 1e-4 * (1 + fabs(want))) bad++;
        }
    ck_assert_msg(bad == 0, "%lld wrong of %lldx%lldx%lld%s", (long long)bad, (long long)M, (long long)N, (long long)K,
                  transposed ? " (transposed)" : "");
    ls_value_release(&r);
    ls_tensor_unref(a);
    ls_tensor_unref(b);
}

START_TEST(blocked_gemm_matches_reference)
{
    check_gemm(7, 19, 33, false);
    check_gemm(1, 40, 300, false);
    check_gemm(3, 17, 300, true);
    check_gemm(130, 70, 520, false); /* 9.5 MFLOP: threads split columns */
    check_gemm(125, 260, 64, true);
    check_gemm(400, 20, 300, false); /* 4.8 MFLOP: threads split rows */
}
END_TEST

Suite *kernels_reduce_suite(void)
{
    Suite *s = suite_create("kernels_reduce");
    TCase *tc = tcase_create("core");
    tcase_set_timeout(tc, 30);
    tcase_add_test(tc, sum_over_dims_with_keepdim);
    tcase_add_test(tc, integer_sums_are_int64_and_do_not_overflow);
    tcase_add_test(tc, empty_reductions);
    tcase_add_test(tc, mean_amax_amin_argmax);
    tcase_add_test(tc, cumsum_and_softmax);
    tcase_add_test(tc, small_matrix_products);
    tcase_add_test(tc, matmul_ranks_and_batches);
    tcase_add_test(tc, blocked_gemm_matches_reference);
    suite_add_tcase(s, tc);
    return s;
}
