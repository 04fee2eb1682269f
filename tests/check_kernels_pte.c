/* Tests of the kernels the real .pte files need, on cases worked by hand from ExecuTorch's
 * portable and quantized kernels: scatter.src/value and scatter_add (kernels/portable/cpu/
 * op_scatter.cpp, op_scatter_add.cpp), max_pool2d_with_indices (op_max_pool2d_with_indices.cpp:
 * the first in-window element starts the max, a strictly greater one replaces it), the prim ops
 * (kernels/prim_ops/register_prim_ops.cpp), choose_qparams (kernels/quantized/cpu/
 * op_choose_qparams.cpp) and quantize (op_quantize.cpp: 1.0f / (float)scale). */
#include <check.h>
#include <math.h>

#include "ktest.h"

START_TEST(scatter_family)
{
    /* self zeros[2, 3]; dim 1; index [[2, 0]] (1x2); src [[7, 8]]: out[0][2] = 7, out[0][0] = 8 */
    ls_value v = kt_run(LS_OP_scatter_src, 4, VT(kt(LS_DT_F32, SHAPE(2, 3), VALS(0, 0, 0, 0, 0, 0))), VI(1),
                        VT(kt_i64(SHAPE(1, 2), (int64_t[]){2, 0})), VT(kt(LS_DT_F32, SHAPE(1, 2), VALS(7, 8))));
    kt_expect(&v, LS_DT_F32, SHAPE(2, 3), VALS(8, 0, 7, 0, 0, 0));
    ls_value_release(&v);
    /* the xor program's call: scatter.value(self [1, 2], dim 1, index [[1]], -1.0) */
    v = kt_run(LS_OP_scatter_value, 4, VT(kt(LS_DT_F32, SHAPE(1, 2), VALS(0.25, 0.75))), VI(1),
               VT(kt_i64(SHAPE(1, 1), (int64_t[]){1})), VF(-1.0));
    kt_expect(&v, LS_DT_F32, SHAPE(1, 2), VALS(0.25, -1));
    ls_value_release(&v);
    /* dim 0, index [[1, 1, 0]]: column j of row index[0][j] */
    v = kt_run(LS_OP_scatter_value, 4, VT(kt(LS_DT_I64, SHAPE(2, 3), VALS(1, 2, 3, 4, 5, 6))), VI(0),
               VT(kt_i64(SHAPE(1, 3), (int64_t[]){1, 1, 0})), VI(9));
    kt_expect(&v, LS_DT_I64, SHAPE(2, 3), VALS(1, 2, 9, 9, 9, 6));
    ls_value_release(&v);
    /* scatter_add accumulates: index [[0, 0, 1]] adds 1 + 2 into column 0, 3 into column 1 */
    v = kt_run(LS_OP_scatter_add, 4, VT(kt(LS_DT_F32, SHAPE(1, 3), VALS(10, 20, 30))), VI(1),
               VT(kt_i64(SHAPE(1, 3), (int64_t[]){0, 0, 1})), VT(kt(LS_DT_F32, SHAPE(1, 3), VALS(1, 2, 3))));
    kt_expect(&v, LS_DT_F32, SHAPE(1, 3), VALS(13, 23, 30));
    ls_value_release(&v);
    kt_fails("out of bounds", LS_OP_scatter_value, 4, VT(kt(LS_DT_F32, SHAPE(1, 2), VALS(0, 0))), VI(1),
             VT(kt_i64(SHAPE(1, 1), (int64_t[]){2})), VF(1));
    kt_fails("out of bounds", LS_OP_scatter_value, 4, VT(kt(LS_DT_F32, SHAPE(1, 2), VALS(0, 0))), VI(1),
             VT(kt_i64(SHAPE(1, 1), (int64_t[]){-1})), VF(1));
    kt_fails("larger than self", LS_OP_scatter_src, 4, VT(kt(LS_DT_F32, SHAPE(1, 2), VALS(0, 0))), VI(1),
             VT(kt_i64(SHAPE(2, 1), (int64_t[]){0, 0})), VT(kt(LS_DT_F32, SHAPE(2, 1), VALS(1, 1))));
}
END_TEST

START_TEST(max_pool2d_with_indices_as_portable)
{
    /* 1x1x3x3 [[1, 5, 2], [4, 3, 9], [0, 8, 7]], kernel 2, stride 1: windows' maxima and their
     * places in the 3x3 plane */
    ls_value v = kt_run(LS_OP_max_pool2d_with_indices, 3, VT(kt(LS_DT_F32, SHAPE(1, 1, 3, 3), VALS(1, 5, 2, 4, 3, 9, 0, 8, 7))),
                        VINTS(2, 2), VINTS(1, 1));
    ck_assert_int_eq(v.kind, LS_V_LIST);
    kt_expect(&v.items[0], LS_DT_F32, SHAPE(1, 1, 2, 2), VALS(5, 9, 8, 9));
    kt_expect(&v.items[1], LS_DT_I64, SHAPE(1, 1, 2, 2), VALS(1, 5, 7, 5));
    ls_value_release(&v);
    /* stride [] is the kernel size; padding 1 with ceil_mode: (3 + 2 - 1 - 1 + 1) / 2 + 1 = 3,
     * less one because the last window would start in the padding (2 * 2 >= 3 + 1) */
    v = kt_run(LS_OP_max_pool2d_with_indices, 6, VT(kt(LS_DT_F32, SHAPE(1, 3, 3), VALS(1, 5, 2, 4, 3, 9, 0, 8, 7))), VINTS(2),
               VEMPTY, VINTS(1), VINTS(1), VB(true));
    kt_expect(&v.items[0], LS_DT_F32, SHAPE(1, 2, 2), VALS(1, 5, 4, 9));
    kt_expect(&v.items[1], LS_DT_I64, SHAPE(1, 2, 2), VALS(0, 1, 3, 5));
    ls_value_release(&v);
    /* a NaN first in its window stays; one met later is passed over ("in_val > accum") */
    v = kt_run(LS_OP_max_pool2d_with_indices, 3, VT(kt(LS_DT_F32, SHAPE(1, 1, 1, 4), VALS(NAN, 1, 2, NAN))), VINTS(1, 2),
               VINTS(1, 2));
    kt_expect(&v.items[0], LS_DT_F32, SHAPE(1, 1, 1, 2), VALS(NAN, 2));
    ls_value_release(&v);
    /* int64 compared as int64 (in a double, 2^62 + 1 and 2^62 are equal, and 2^53 + 1 is 2^53):
     * the first window's maximum is its first element, the second's its second */
    const int64_t big[] = {((int64_t)1 << 62) + 1, (int64_t)1 << 62, (int64_t)1 << 53, ((int64_t)1 << 53) + 1};
    v = kt_run(LS_OP_max_pool2d_with_indices, 3, VT(kt_i64(SHAPE(1, 1, 1, 4), big)), VINTS(1, 2), VINTS(1, 2));
    ck_assert_int_eq(v.items[0].t->dtype, LS_DT_I64);
    const int64_t *got = v.items[0].t->data, *at = v.items[1].t->data;
    ck_assert(got[0] == big[0] && at[0] == 0);
    ck_assert(got[1] == big[3] && at[1] == 3);
    ls_value_release(&v);
    /* a uint8 result is written in its own type: 255 stays 255 (not -1 nor 255.0 rounded) */
    v = kt_run(LS_OP_max_pool2d_with_indices, 3, VT(kt(LS_DT_U8, SHAPE(1, 1, 1, 2), VALS(200, 255))), VINTS(1, 2), VINTS(1, 2));
    kt_expect(&v.items[0], LS_DT_U8, SHAPE(1, 1, 1, 1), VALS(255));
    kt_expect(&v.items[1], LS_DT_I64, SHAPE(1, 1, 1, 1), VALS(1));
    ls_value_release(&v);
    /* W 2, kernel 2, padding 1, dilation 3: (2 + 2 - 3 - 1) / 1 + 1 = 1 window, whose taps (-1
     * and 2) both fall outside: the portable kernel's starting accumulator, 0 at index 0 */
    v = kt_run(LS_OP_max_pool2d_with_indices, 5, VT(kt(LS_DT_F32, SHAPE(1, 1, 1, 2), VALS(5, 7))), VINTS(1, 2), VINTS(1, 1),
               VINTS(0, 1), VINTS(1, 3));
    kt_expect(&v.items[0], LS_DT_F32, SHAPE(1, 1, 1, 1), VALS(0));
    kt_expect(&v.items[1], LS_DT_I64, SHAPE(1, 1, 1, 1), VALS(0));
    ls_value_release(&v);
    kt_fails("more than half the kernel size", LS_OP_max_pool2d_with_indices, 4,
             VT(kt(LS_DT_F32, SHAPE(1, 1, 3, 3), VALS(0, 0, 0, 0, 0, 0, 0, 0, 0))), VINTS(2, 2), VINTS(1, 1), VINTS(2, 2));
}
END_TEST

START_TEST(prim_ops_as_registered)
{
    ls_value v = kt_run(LS_OP_prim_add_Scalar, 2, VI(2), VI(3));
    ck_assert(v.kind == LS_V_INT && v.i == 5);
    v = kt_run(LS_OP_prim_mul_Scalar, 2, VI(2), VF(1.5)); /* an int and a double: a double */
    ck_assert(v.kind == LS_V_FLOAT && v.f == 3.0);
    v = kt_run(LS_OP_prim_floordiv_Scalar, 2, VI(-7), VI(2)); /* Python's -7 // 2 */
    ck_assert(v.kind == LS_V_INT && v.i == -4);
    v = kt_run(LS_OP_prim_floordiv_Scalar, 2, VF(7.0), VF(-2.0)); /* fmod(7, -2) = 1, (7 - 1) / -2 = -3, the remainder not signed as b: -4 */
    ck_assert(v.kind == LS_V_FLOAT && v.f == -4.0);
    v = kt_run(LS_OP_prim_floordiv_Scalar, 2, VF(-1.0), VF(0.0));
    ck_assert(v.kind == LS_V_FLOAT && isinf(v.f) && v.f < 0);
    v = kt_run(LS_OP_prim_floordiv_int, 2, VI(-7), VI(2)); /* C's truncating division, as the source */
    ck_assert(v.kind == LS_V_INT && v.i == -3);
    v = kt_run(LS_OP_prim_truediv_Scalar, 2, VI(7), VI(2));
    ck_assert(v.kind == LS_V_FLOAT && v.f == 3.5);
    v = kt_run(LS_OP_prim_le_Scalar, 2, VI(3), VF(3.0));
    ck_assert(v.kind == LS_V_BOOL && v.b);
    v = kt_run(LS_OP_prim_eq_Scalar, 2, VB(true), VB(false));
    ck_assert(v.kind == LS_V_BOOL && !v.b);
    kt_fails("division by zero", LS_OP_prim_floordiv_int, 2, VI(1), VI(0));
    kt_fails("takes two numbers", LS_OP_prim_add_Scalar, 2, VB(true), VI(1));
    v = kt_run(LS_OP_sym_numel, 1, VT(kt(LS_DT_F32, SHAPE(2, 3), VALS(0, 0, 0, 0, 0, 0))));
    ck_assert(v.kind == LS_V_INT && v.i == 6);
}
END_TEST

static void qparams(const double *x, int n, int64_t qmin, int64_t qmax, double *scale, int64_t *zp)
{
    int64_t sz = n;
    ls_value v = kt_run(LS_OP_choose_qparams_tensor, 5, VT(kt(LS_DT_F32, 1, &sz, x)), VI(qmin), VI(qmax), VF(1.1920928955078125e-07),
                        VDT(LS_DT_I8));
    ck_assert_int_eq(v.kind, LS_V_LIST);
    *scale = ls_tensor_get_f64(v.items[0].t, 0);
    *zp = (int64_t)ls_tensor_get_f64(v.items[1].t, 0);
    ls_value_release(&v);
}

/* op_choose_qparams.cpp's choose_qparams, worked by hand. */
START_TEST(choose_qparams_as_executorch)
{
    double s;
    int64_t z;
    /* [-1, 0.5, 2] in [-128, 127]: scale 3/255; both zero points are -43 (from max: 127 - 170,
     * whose error -43 is the smaller) */
    qparams(VALS(-1, 0.5, 2), 3, -128, 127, &s, &z);
    ck_assert(fabs(s - 3.0 / 255) < 1e-12);
    ck_assert_int_eq(z, -43);
    /* all zeros: the scale would be 0, so 0.1; zero point from max (error 127 < 128): 127 —
     * torch's _decomposed.py would give eps and -128 */
    qparams(VALS(0, 0), 2, -128, 127, &s, &z);
    ck_assert_double_eq(s, 0.1);
    ck_assert_int_eq(z, 127);
    /* a tiny range: the scale is raised to SMALL_SCALE_THRESHOLD 6.1e-5f */
    qparams(VALS(0, 1e-3), 2, 0, 255, &s, &z);
    ck_assert_double_eq(s, (double)6.1e-5f);
    ck_assert_int_eq(z, 0);
    kt_fails("qmin should be less than qmax", LS_OP_choose_qparams_tensor, 5, VT(kt(LS_DT_F32, SHAPE(1), VALS(1))), VI(3), VI(3),
             VF(1e-7), VDT(LS_DT_I8));
}
END_TEST

/* op_quantize.cpp: q = zero_point + nearbyint((float)(1.0f / (float)scale * x)), clamped; 2.5
 * rounds to even. */
START_TEST(quantize_as_executorch)
{
    ls_value v = kt_run(LS_OP_quantize_per_tensor, 6, VT(kt(LS_DT_F32, SHAPE(4), VALS(0.25, 0.75, -100, 1.0))), VF(0.1), VI(3),
                        VI(-128), VI(127), VDT(LS_DT_I8));
    kt_expect(&v, LS_DT_I8, SHAPE(4), VALS(5, 11, -128, 13)); /* 3 + (2.5 → 2), 3 + (7.5 → 8), clamped, 3 + 10 */
    ls_value_release(&v);
    v = kt_run(LS_OP_dequantize_per_tensor, 6, VT(kt(LS_DT_U8, SHAPE(2), VALS(0, 255))), VF(0.5), VI(128), VI(0), VI(255),
               VDT(LS_DT_U8));
    kt_expect(&v, LS_DT_F32, SHAPE(2), VALS(-64, 63.5));
    ls_value_release(&v);
}
END_TEST

Suite *kernels_pte_suite(void)
{
    Suite *s = suite_create("kernels_pte");
    TCase *tc = tcase_create("kernels_pte");
    tcase_add_test(tc, scatter_family);
    tcase_add_test(tc, max_pool2d_with_indices_as_portable);
    tcase_add_test(tc, prim_ops_as_registered);
    tcase_add_test(tc, choose_qparams_as_executorch);
    tcase_add_test(tc, quantize_as_executorch);
    suite_add_tcase(s, tc);
    return s;
}
