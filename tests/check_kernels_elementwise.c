/* Elementwise kernels against hand-computed values: broadcasting, type promotion with
 * scalars, integer wrap-around and division, NaN/inf, empty tensors, float16/bfloat16. */
#include <check.h>
#include <math.h>
#include <stdint.h>

#include "ktest.h"
#include "ops.h"
#include "runtime.h"

START_TEST(add_broadcasts_and_applies_alpha)
{
    ls_value r = kt_run(LS_OP_add_Tensor, 3, VT(kt(LS_DT_F32, SHAPE(2, 3), VALS(1, 2, 3, 4, 5, 6))),
                        VT(kt(LS_DT_F32, SHAPE(3), VALS(10, 20, 30))), VI(2));
    kt_expect(&r, LS_DT_F32, SHAPE(2, 3), VALS(21, 42, 63, 24, 45, 66));
    ls_value_release(&r);
    /* [2,1] + [1,3] → [2,3] */
    r = kt_run(LS_OP_add_Tensor, 3, VT(kt(LS_DT_F32, SHAPE(2, 1), VALS(1, 2))),
               VT(kt(LS_DT_F32, SHAPE(1, 3), VALS(10, 20, 30))), VI(1));
    kt_expect(&r, LS_DT_F32, SHAPE(2, 3), VALS(11, 21, 31, 12, 22, 32));
    ls_value_release(&r);
    /* 0-dim + [2] */
    r = kt_run(LS_OP_add_Tensor, 3, VT(kt(LS_DT_F32, SCALAR_SHAPE, VALS(1))), VT(kt(LS_DT_F32, SHAPE(2), VALS(1, 2))),
               VI(1));
    kt_expect(&r, LS_DT_F32, SHAPE(2), VALS(2, 3));
    ls_value_release(&r);
    kt_fails("cannot be broadcast", LS_OP_add_Tensor, 3, VT(kt(LS_DT_F32, SHAPE(2, 3), NULL)),
             VT(kt(LS_DT_F32, SHAPE(2), NULL)), VI(1));
}
END_TEST

START_TEST(add_promotes_like_torch)
{
    /* int32 tensor + int scalar stays int32; + float scalar becomes float32 */
    ls_value r = kt_run(LS_OP_add_Scalar, 3, VT(kt(LS_DT_I32, SHAPE(2), VALS(1, 2))), VI(5), VI(1));
    kt_expect(&r, LS_DT_I32, SHAPE(2), VALS(6, 7));
    ls_value_release(&r);
    r = kt_run(LS_OP_add_Scalar, 3, VT(kt(LS_DT_I32, SHAPE(2), VALS(1, 2))), VF(0.5), VI(1));
    kt_expect(&r, LS_DT_F32, SHAPE(2), VALS(1.5, 2.5));
    ls_value_release(&r);
    /* a Python scalar in a Tensor slot (aten.add.Tensor(x, 2.5)) */
    r = kt_run(LS_OP_add_Tensor, 3, VT(kt(LS_DT_I64, SHAPE(1), VALS(1))), VF(2.5), VI(1));
    kt_expect(&r, LS_DT_F32, SHAPE(1), VALS(3.5));
    ls_value_release(&r);
    /* float16 tensor + float scalar stays float16 */
    r = kt_run(LS_OP_add_Scalar, 3, VT(kt(LS_DT_F16, SHAPE(2), VALS(1, 2))), VF(0.25), VI(1));
    kt_expect(&r, LS_DT_F16, SHAPE(2), VALS(1.25, 2.25));
    ls_value_release(&r);
    /* int32 tensor + int64 0-dim tensor stays int32 (dimensioned tensors win) */
    r = kt_run(LS_OP_add_Tensor, 3, VT(kt(LS_DT_I32, SHAPE(1), VALS(1))), VT(kt(LS_DT_I64, SCALAR_SHAPE, VALS(2))), VI(1));
    kt_expect(&r, LS_DT_I32, SHAPE(1), VALS(3));
    ls_value_release(&r);
    /* int tensor + float 0-dim tensor: the higher category wins with the 0-dim's type */
    r = kt_run(LS_OP_add_Tensor, 3, VT(kt(LS_DT_I32, SHAPE(1), VALS(1))), VT(kt(LS_DT_F64, SCALAR_SHAPE, VALS(0.5))), VI(1));
    kt_expect(&r, LS_DT_F64, SHAPE(1), VALS(1.5));
    ls_value_release(&r);
    /* bool + bool is bool (or); bool + int scalar is int64 */
    r = kt_run(LS_OP_add_Tensor, 3, VT(kt(LS_DT_BOOL, SHAPE(2), VALS(1, 0))), VT(kt(LS_DT_BOOL, SHAPE(2), VALS(1, 0))), VI(1));
    kt_expect(&r, LS_DT_BOOL, SHAPE(2), VALS(1, 0));
    ls_value_release(&r);
    r = kt_run(LS_OP_add_Scalar, 3, VT(kt(LS_DT_BOOL, SHAPE(1), VALS(1))), VI(3), VI(1));
    kt_expect(&r, LS_DT_I64, SHAPE(1), VALS(4));
    ls_value_release(&r);
    /* uint8 + int8 → int16 */
    r = kt_run(LS_OP_add_Tensor, 3, VT(kt(LS_DT_U8, SHAPE(1), VALS(200))), VT(kt(LS_DT_I8, SHAPE(1), VALS(-100))), VI(1));
    kt_expect(&r, LS_DT_I16, SHAPE(1), VALS(100));
    ls_value_release(&r);
    /* bfloat16 + float16 → float32 */
    r = kt_run(LS_OP_mul_Tensor, 2, VT(kt(LS_DT_BF16, SHAPE(1), VALS(3))), VT(kt(LS_DT_F16, SHAPE(1), VALS(0.5))));
    kt_expect(&r, LS_DT_F32, SHAPE(1), VALS(1.5));
    ls_value_release(&r);
    /* float16 comparisons see the scalar as float16, arithmetic keeps it in float32 */
    r = kt_run(LS_OP_eq_Scalar, 2, VT(kt(LS_DT_F16, SHAPE(1), VALS(0.1))), VF(0.1));
    kt_expect(&r, LS_DT_BOOL, SHAPE(1), VALS(1));
    ls_value_release(&r);
    r = kt_run(LS_OP_add_Scalar, 3, VT(kt(LS_DT_F16, SHAPE(1), VALS(1000))), VF(0.3), VI(1));
    kt_expect(&r, LS_DT_F16, SHAPE(1), VALS(1000.5)); /* 1000.3 rounds to 1000.5 in float16 */
    ls_value_release(&r);
    /* an int32 tensor meets a float16 one: it is rounded to float16 first (2049 → 2048) */
    r = kt_run(LS_OP_sub_Tensor, 3, VT(kt(LS_DT_I32, SHAPE(1), VALS(2049))), VT(kt(LS_DT_F16, SHAPE(1), VALS(2048))), VI(1));
    kt_expect(&r, LS_DT_F16, SHAPE(1), VALS(0));
    ls_value_release(&r);
    kt_fails("alpha", LS_OP_add_Tensor, 3, VT(kt(LS_DT_I64, SHAPE(1), NULL)), VT(kt(LS_DT_I64, SHAPE(1), NULL)), VF(0.5));
}
END_TEST

START_TEST(integer_arithmetic_wraps_without_undefined_behaviour)
{
    ls_value r = kt_run(LS_OP_add_Scalar, 3, VT(kt(LS_DT_U8, SHAPE(2), VALS(250, 3))), VI(10), VI(1));
    kt_expect(&r, LS_DT_U8, SHAPE(2), VALS(4, 13));
    ls_value_release(&r);
    int64_t big[2] = {INT64_MAX, INT64_MIN};
    r = kt_run(LS_OP_add_Scalar, 3, VT(kt_i64(SHAPE(2), big)), VI(1), VI(1));
    ck_assert(((int64_t *)r.t->data)[0] == INT64_MIN);
    ck_assert(((int64_t *)r.t->data)[1] == INT64_MIN + 1);
    ls_value_release(&r);
    r = kt_run(LS_OP_mul_Scalar, 2, VT(kt_i64(SHAPE(2), big)), VI(2));
    ck_assert(((int64_t *)r.t->data)[0] == -2);
    ck_assert(((int64_t *)r.t->data)[1] == 0);
    ls_value_release(&r);
    r = kt_run(LS_OP_neg, 1, VT(kt_i64(SHAPE(2), big)));
    ck_assert(((int64_t *)r.t->data)[1] == INT64_MIN);
    ls_value_release(&r);
    /* int64 keeps every bit (no trip through double) */
    int64_t v[1] = {(int64_t)1 << 60 | 1};
    r = kt_run(LS_OP_sub_Scalar, 3, VT(kt_i64(SHAPE(1), v)), VI(1), VI(1));
    ck_assert(((int64_t *)r.t->data)[0] == (int64_t)1 << 60);
    ls_value_release(&r);
    kt_fails("bool", LS_OP_sub_Tensor, 3, VT(kt(LS_DT_BOOL, SHAPE(1), NULL)), VT(kt(LS_DT_BOOL, SHAPE(1), NULL)), VI(1));
}
END_TEST

START_TEST(sub_rsub_mul)
{
    ls_value r = kt_run(LS_OP_sub_Tensor, 3, VT(kt(LS_DT_F32, SHAPE(3), VALS(1, 2, 3))),
                        VT(kt(LS_DT_F32, SHAPE(3), VALS(1, 1, 1))), VF(0.5));
    kt_expect(&r, LS_DT_F32, SHAPE(3), VALS(0.5, 1.5, 2.5));
    ls_value_release(&r);
    r = kt_run(LS_OP_rsub_Scalar, 3, VT(kt(LS_DT_F32, SHAPE(2), VALS(1, 2))), VI(10), VI(2));
    kt_expect(&r, LS_DT_F32, SHAPE(2), VALS(8, 6));
    ls_value_release(&r);
    r = kt_run(LS_OP_mul_Tensor, 2, VT(kt(LS_DT_F64, SHAPE(2, 1), VALS(2, 3))), VT(kt(LS_DT_F64, SHAPE(2), VALS(5, 7))));
    kt_expect(&r, LS_DT_F64, SHAPE(2, 2), VALS(10, 14, 15, 21));
    ls_value_release(&r);
}
END_TEST

START_TEST(div_rounding_modes)
{
    /* true division of integers gives float32 */
    ls_value r = kt_run(LS_OP_div_Tensor, 2, VT(kt(LS_DT_I64, SHAPE(2), VALS(7, -7))), VT(kt(LS_DT_I64, SHAPE(2), VALS(2, 2))));
    kt_expect(&r, LS_DT_F32, SHAPE(2), VALS(3.5, -3.5));
    ls_value_release(&r);
    r = kt_run(LS_OP_div_Tensor_mode, 3, VT(kt(LS_DT_I64, SHAPE(4), VALS(7, -7, 7, -7))),
               VT(kt(LS_DT_I64, SHAPE(4), VALS(2, 2, -2, -2))), VS("trunc"));
    kt_expect(&r, LS_DT_I64, SHAPE(4), VALS(3, -3, -3, 3));
    ls_value_release(&r);
    r = kt_run(LS_OP_div_Tensor_mode, 3, VT(kt(LS_DT_I64, SHAPE(4), VALS(7, -7, 7, -7))),
               VT(kt(LS_DT_I64, SHAPE(4), VALS(2, 2, -2, -2))), VS("floor"));
    kt_expect(&r, LS_DT_I64, SHAPE(4), VALS(3, -4, -4, 3));
    ls_value_release(&r);
    int64_t mn[1] = {INT64_MIN};
    r = kt_run(LS_OP_div_Scalar_mode, 3, VT(kt_i64(SHAPE(1), mn)), VI(-1), VS("floor"));
    ck_assert(((int64_t *)r.t->data)[0] == INT64_MIN); /* wraps, no trap */
    ls_value_release(&r);
    r = kt_run(LS_OP_div_Tensor_mode, 3, VT(kt(LS_DT_F32, SHAPE(4), VALS(-7.5, 7.5, 1, -1))),
               VT(kt(LS_DT_F32, SHAPE(4), VALS(2, -2, 0, 0))), VS("floor"));
    kt_expect(&r, LS_DT_F32, SHAPE(4), VALS(-4, -4, INFINITY, -INFINITY));
    ls_value_release(&r);
    r = kt_run(LS_OP_div_Tensor_mode, 3, VT(kt(LS_DT_F32, SHAPE(2), VALS(-7.5, 7.5))), VF(2), VS("trunc"));
    kt_expect(&r, LS_DT_F32, SHAPE(2), VALS(-3, 3));
    ls_value_release(&r);
    r = kt_run(LS_OP_div_Tensor, 2, VT(kt(LS_DT_F32, SHAPE(3), VALS(1, -1, 0))), VT(kt(LS_DT_F32, SHAPE(1), VALS(0))));
    kt_expect(&r, LS_DT_F32, SHAPE(3), VALS(INFINITY, -INFINITY, NAN));
    ls_value_release(&r);
    kt_fails("division by zero", LS_OP_div_Tensor_mode, 3, VT(kt(LS_DT_I32, SHAPE(2), VALS(1, 2))),
             VT(kt(LS_DT_I32, SHAPE(2), VALS(1, 0))), VS("floor"));
    kt_fails("rounding_mode", LS_OP_div_Tensor_mode, 3, VT(kt(LS_DT_F32, SHAPE(1), NULL)), VT(kt(LS_DT_F32, SHAPE(1), NULL)),
             VS("round"));
}
END_TEST

START_TEST(pow_forms)
{
    ls_value r = kt_run(LS_OP_pow_Tensor_Scalar, 2, VT(kt(LS_DT_F32, SHAPE(3), VALS(4, 9, -1))), VF(0.5));
    kt_expect(&r, LS_DT_F32, SHAPE(3), VALS(2, 3, NAN));
    ls_value_release(&r);
    r = kt_run(LS_OP_pow_Tensor_Scalar, 2, VT(kt(LS_DT_I64, SHAPE(3), VALS(2, -3, 0))), VI(3));
    kt_expect(&r, LS_DT_I64, SHAPE(3), VALS(8, -27, 0));
    ls_value_release(&r);
    r = kt_run(LS_OP_pow_Tensor_Scalar, 2, VT(kt(LS_DT_I64, SHAPE(1), VALS(2))), VF(0.5));
    kt_expect(&r, LS_DT_F32, SHAPE(1), VALS(sqrt(2.0)));
    ls_value_release(&r);
    r = kt_run(LS_OP_pow_Scalar, 2, VF(2), VT(kt(LS_DT_F32, SHAPE(2), VALS(3, -1))));
    kt_expect(&r, LS_DT_F32, SHAPE(2), VALS(8, 0.5));
    ls_value_release(&r);
    r = kt_run(LS_OP_pow_Tensor_Tensor, 2, VT(kt(LS_DT_F32, SHAPE(2), VALS(2, 3))), VT(kt(LS_DT_F32, SHAPE(2), VALS(3, 2))));
    kt_expect(&r, LS_DT_F32, SHAPE(2), VALS(8, 9));
    ls_value_release(&r);
    r = kt_run(LS_OP_atan2, 2, VT(kt(LS_DT_F32, SHAPE(3), VALS(1, 1, 0))), VT(kt(LS_DT_I64, SHAPE(3), VALS(1, -1, 0))));
    kt_expect(&r, LS_DT_F32, SHAPE(3), VALS(M_PI / 4, 3 * M_PI / 4, 0));
    ls_value_release(&r);
    r = kt_run(LS_OP_atan2, 2, VT(kt(LS_DT_I32, SHAPE(1), VALS(-1))), VT(kt(LS_DT_I32, SHAPE(1), VALS(0))));
    kt_expect(&r, LS_DT_F32, SHAPE(1), VALS(-M_PI / 2));
    ls_value_release(&r);
    kt_fails("negative integer powers", LS_OP_pow_Tensor_Scalar, 2, VT(kt(LS_DT_I64, SHAPE(1), VALS(2))), VI(-1));
}
END_TEST

START_TEST(comparisons_and_logic)
{
    ls_value r = kt_run(LS_OP_lt_Tensor, 2, VT(kt(LS_DT_F32, SHAPE(4), VALS(1, NAN, 3, -INFINITY))),
                        VT(kt(LS_DT_F32, SHAPE(4), VALS(2, 1, 3, 0))));
    kt_expect(&r, LS_DT_BOOL, SHAPE(4), VALS(1, 0, 0, 1));
    ls_value_release(&r);
    r = kt_run(LS_OP_ne_Tensor, 2, VT(kt(LS_DT_F32, SHAPE(2), VALS(NAN, 1))), VT(kt(LS_DT_F32, SHAPE(2), VALS(NAN, 1))));
    kt_expect(&r, LS_DT_BOOL, SHAPE(2), VALS(1, 0));
    ls_value_release(&r);
    /* int tensor vs float scalar compares in float */
    r = kt_run(LS_OP_ge_Scalar, 2, VT(kt(LS_DT_I64, SHAPE(3), VALS(1, 2, 3))), VF(1.5));
    kt_expect(&r, LS_DT_BOOL, SHAPE(3), VALS(0, 1, 1));
    ls_value_release(&r);
    r = kt_run(LS_OP_eq_Scalar, 2, VT(kt(LS_DT_I32, SHAPE(2, 2), VALS(0, 1, 2, 1))), VI(1));
    kt_expect(&r, LS_DT_BOOL, SHAPE(2, 2), VALS(0, 1, 0, 1));
    ls_value_release(&r);
    r = kt_run(LS_OP_gt_Tensor, 2, VT(kt(LS_DT_F32, SHAPE(2, 1), VALS(1, 5))), VT(kt(LS_DT_I64, SHAPE(3), VALS(0, 2, 6))));
    kt_expect(&r, LS_DT_BOOL, SHAPE(2, 3), VALS(1, 0, 0, 1, 1, 0));
    ls_value_release(&r);
    r = kt_run(LS_OP_le_Scalar, 2, VT(kt(LS_DT_F32, SHAPE(2), VALS(1, 2))), VI(1));
    kt_expect(&r, LS_DT_BOOL, SHAPE(2), VALS(1, 0));
    ls_value_release(&r);
    r = kt_run(LS_OP_logical_and, 2, VT(kt(LS_DT_F32, SHAPE(3), VALS(0, 2, NAN))), VT(kt(LS_DT_BOOL, SHAPE(1), VALS(1))));
    kt_expect(&r, LS_DT_BOOL, SHAPE(3), VALS(0, 1, 1));
    ls_value_release(&r);
    r = kt_run(LS_OP_logical_or, 2, VT(kt(LS_DT_I64, SHAPE(2), VALS(0, 0))), VT(kt(LS_DT_I64, SHAPE(2), VALS(0, 3))));
    kt_expect(&r, LS_DT_BOOL, SHAPE(2), VALS(0, 1));
    ls_value_release(&r);
    r = kt_run(LS_OP_logical_not, 1, VT(kt(LS_DT_F32, SHAPE(3), VALS(0, -1, NAN))));
    kt_expect(&r, LS_DT_BOOL, SHAPE(3), VALS(1, 0, 0));
    ls_value_release(&r);
}
END_TEST

START_TEST(where_and_masked_fill)
{
    ls_value r = kt_run(LS_OP_where_self, 3, VT(kt(LS_DT_BOOL, SHAPE(2, 1), VALS(1, 0))),
                        VT(kt(LS_DT_F32, SHAPE(3), VALS(1, 2, 3))), VT(kt(LS_DT_I64, SHAPE(1), VALS(-1))));
    kt_expect(&r, LS_DT_F32, SHAPE(2, 3), VALS(1, 2, 3, -1, -1, -1));
    ls_value_release(&r);
    r = kt_run(LS_OP_where_ScalarOther, 3, VT(kt(LS_DT_BOOL, SHAPE(3), VALS(1, 0, 1))),
               VT(kt(LS_DT_F16, SHAPE(3), VALS(1, 2, 3))), VF(-INFINITY));
    kt_expect(&r, LS_DT_F16, SHAPE(3), VALS(1, -INFINITY, 3));
    ls_value_release(&r);
    r = kt_run(LS_OP_masked_fill_Scalar, 3, VT(kt(LS_DT_F32, SHAPE(2, 2), VALS(1, 2, 3, 4))),
               VT(kt(LS_DT_BOOL, SHAPE(2), VALS(0, 1))), VF(-1e9));
    kt_expect(&r, LS_DT_F32, SHAPE(2, 2), VALS(1, -1e9, 3, -1e9));
    ls_value_release(&r);
    r = kt_run(LS_OP_masked_fill_Scalar, 3, VT(kt(LS_DT_I64, SHAPE(2), VALS(5, 6))),
               VT(kt(LS_DT_BOOL, SHAPE(2), VALS(1, 0))), VI(0));
    kt_expect(&r, LS_DT_I64, SHAPE(2), VALS(0, 6));
    ls_value_release(&r);
}
END_TEST

START_TEST(clamp_scalar_and_tensor)
{
    ls_value r = kt_run(LS_OP_clamp, 3, VT(kt(LS_DT_F32, SHAPE(5), VALS(-2, 0.5, 3, NAN, INFINITY))), VF(0), VF(1));
    kt_expect(&r, LS_DT_F32, SHAPE(5), VALS(0, 0.5, 1, NAN, 1));
    ls_value_release(&r);
    r = kt_run(LS_OP_clamp, 3, VT(kt(LS_DT_I64, SHAPE(3), VALS(-5, 5, 50))), VN, VI(10));
    kt_expect(&r, LS_DT_I64, SHAPE(3), VALS(-5, 5, 10));
    ls_value_release(&r);
    r = kt_run(LS_OP_clamp, 3, VT(kt(LS_DT_I64, SHAPE(2), VALS(0, 3))), VF(0.5), VN);
    kt_expect(&r, LS_DT_F32, SHAPE(2), VALS(0.5, 3));
    ls_value_release(&r);
    /* min > max gives max, as torch does */
    r = kt_run(LS_OP_clamp, 3, VT(kt(LS_DT_F32, SHAPE(1), VALS(0))), VF(2), VF(1));
    kt_expect(&r, LS_DT_F32, SHAPE(1), VALS(1));
    ls_value_release(&r);
    r = kt_run(LS_OP_clamp_Tensor, 3, VT(kt(LS_DT_F32, SHAPE(2, 2), VALS(-1, 5, -1, 5))),
               VT(kt(LS_DT_F32, SHAPE(2, 1), VALS(0, -2))), VT(kt(LS_DT_F32, SHAPE(1), VALS(3))));
    kt_expect(&r, LS_DT_F32, SHAPE(2, 2), VALS(0, 3, -1, 3));
    ls_value_release(&r);
    kt_fails("min", LS_OP_clamp, 3, VT(kt(LS_DT_F32, SHAPE(1), NULL)), VN, VN);
    /* op_clamp.cpp: max_override(x, min) then min_override(that, max), NaN when either side is:
     * a NaN bound gives NaN everywhere, whichever bound it is */
    r = kt_run(LS_OP_clamp, 3, VT(kt(LS_DT_F32, SHAPE(3), VALS(1, 5, 9))), VF(NAN), VF(6));
    kt_expect(&r, LS_DT_F32, SHAPE(3), VALS(NAN, NAN, NAN));
    ls_value_release(&r);
    r = kt_run(LS_OP_clamp, 3, VT(kt(LS_DT_F32, SHAPE(3), VALS(1, 5, 9))), VF(2), VF(NAN));
    kt_expect(&r, LS_DT_F32, SHAPE(3), VALS(NAN, NAN, NAN));
    ls_value_release(&r);
    r = kt_run(LS_OP_clamp_Tensor, 3, VT(kt(LS_DT_F32, SHAPE(3), VALS(1, 5, 9))), VT(kt(LS_DT_F32, SHAPE(3), VALS(NAN, 0, 0))),
               VN);
    kt_expect(&r, LS_DT_F32, SHAPE(3), VALS(NAN, 5, 9));
    ls_value_release(&r);
    /* its bounds check: int8 holds no 200 (a cast would make it -56), float32 no 1e300; an
     * infinite bound is no value out of range */
    kt_fails("minimum value out of bounds", LS_OP_clamp, 3, VT(kt(LS_DT_I8, SHAPE(2), VALS(-5, 3))), VI(200), VN);
    kt_fails("maximum value out of bounds", LS_OP_clamp, 3, VT(kt(LS_DT_F32, SHAPE(1), VALS(0))), VN, VF(1e300));
    r = kt_run(LS_OP_clamp, 3, VT(kt(LS_DT_F32, SHAPE(2), VALS(-1, 1))), VF(-INFINITY), VF(0));
    kt_expect(&r, LS_DT_F32, SHAPE(2), VALS(-1, 0));
    ls_value_release(&r);
}
END_TEST

START_TEST(unary_math)
{
    ls_value r = kt_run(LS_OP_neg, 1, VT(kt(LS_DT_F32, SHAPE(2), VALS(1, -0.5))));
    kt_expect(&r, LS_DT_F32, SHAPE(2), VALS(-1, 0.5));
    ls_value_release(&r);
    r = kt_run(LS_OP_abs, 1, VT(kt(LS_DT_I32, SHAPE(2), VALS(-3, 3))));
    kt_expect(&r, LS_DT_I32, SHAPE(2), VALS(3, 3));
    ls_value_release(&r);
    r = kt_run(LS_OP_relu, 1, VT(kt(LS_DT_F32, SHAPE(3), VALS(-1, 2, NAN))));
    kt_expect(&r, LS_DT_F32, SHAPE(3), VALS(0, 2, NAN));
    ls_value_release(&r);
    r = kt_run(LS_OP_sqrt, 1, VT(kt(LS_DT_F32, SHAPE(3), VALS(4, -1, INFINITY))));
    kt_expect(&r, LS_DT_F32, SHAPE(3), VALS(2, NAN, INFINITY));
    ls_value_release(&r);
    r = kt_run(LS_OP_rsqrt, 1, VT(kt(LS_DT_F32, SHAPE(2), VALS(4, 0))));
    kt_expect(&r, LS_DT_F32, SHAPE(2), VALS(0.5, INFINITY));
    ls_value_release(&r);
    /* integer input to exp/log gives float32 */
    r = kt_run(LS_OP_exp, 1, VT(kt(LS_DT_I64, SHAPE(2), VALS(0, 1))));
    kt_expect(&r, LS_DT_F32, SHAPE(2), VALS(1, M_E));
    ls_value_release(&r);
    r = kt_run(LS_OP_log, 1, VT(kt(LS_DT_F64, SHAPE(3), VALS(1, 0, -1))));
    kt_expect(&r, LS_DT_F64, SHAPE(3), VALS(0, -INFINITY, NAN));
    ls_value_release(&r);
    r = kt_run(LS_OP_sin, 1, VT(kt(LS_DT_F32, SHAPE(2), VALS(0, M_PI / 2))));
    kt_expect(&r, LS_DT_F32, SHAPE(2), VALS(0, 1));
    ls_value_release(&r);
    r = kt_run(LS_OP_cos, 1, VT(kt(LS_DT_F32, SHAPE(2), VALS(0, M_PI))));
    kt_expect(&r, LS_DT_F32, SHAPE(2), VALS(1, -1));
    ls_value_release(&r);
    r = kt_run(LS_OP_tanh, 1, VT(kt(LS_DT_F32, SHAPE(3), VALS(0, 100, -INFINITY))));
    kt_expect(&r, LS_DT_F32, SHAPE(3), VALS(0, 1, -1));
    ls_value_release(&r);
    r = kt_run(LS_OP_sigmoid, 1, VT(kt(LS_DT_F32, SHAPE(3), VALS(0, 200, -200))));
    kt_expect(&r, LS_DT_F32, SHAPE(3), VALS(0.5, 1, 0));
    ls_value_release(&r);
    /* gelu(1) = 0.5·(1 + erf(1/√2)) = 0.841344746; tanh form 0.841191990 */
    r = kt_run(LS_OP_gelu, 2, VT(kt(LS_DT_F32, SHAPE(2), VALS(1, -1))), VS("none"));
    kt_expect(&r, LS_DT_F32, SHAPE(2), VALS(0.841344746, -0.158655254));
    ls_value_release(&r);
    r = kt_run(LS_OP_gelu, 2, VT(kt(LS_DT_F32, SHAPE(1), VALS(1))), VS("tanh"));
    kt_expect(&r, LS_DT_F32, SHAPE(1), VALS(0.841191990));
    ls_value_release(&r);
    r = kt_run(LS_OP_gelu, 1, VT(kt(LS_DT_F32, SHAPE(1), VALS(0)))); /* default approximate */
    kt_expect(&r, LS_DT_F32, SHAPE(1), VALS(0));
    ls_value_release(&r);
    r = kt_run(LS_OP_silu, 1, VT(kt(LS_DT_BF16, SHAPE(2), VALS(0, 2))));
    kt_expect_tol(&r, LS_DT_BF16, SHAPE(2), VALS(0, 2 / (1 + exp(-2.0))), 4e-3);
    ls_value_release(&r);
    kt_fails("bool", LS_OP_neg, 1, VT(kt(LS_DT_BOOL, SHAPE(1), NULL)));
}
END_TEST

START_TEST(empty_tensors)
{
    ls_value r = kt_run(LS_OP_add_Tensor, 3, VT(kt(LS_DT_F32, SHAPE(0, 3), NULL)), VT(kt(LS_DT_F32, SHAPE(3), VALS(1, 2, 3))),
                        VI(1));
    kt_expect(&r, LS_DT_F32, SHAPE(0, 3), NULL);
    ls_value_release(&r);
    r = kt_run(LS_OP_exp, 1, VT(kt(LS_DT_F16, SHAPE(0), NULL)));
    kt_expect(&r, LS_DT_F16, SHAPE(0), NULL);
    ls_value_release(&r);
    r = kt_run(LS_OP_where_self, 3, VT(kt(LS_DT_BOOL, SHAPE(0), NULL)), VT(kt(LS_DT_F32, SHAPE(1), VALS(1))), VF(0));
    kt_expect(&r, LS_DT_F32, SHAPE(0), NULL);
    ls_value_release(&r);
}
END_TEST

START_TEST(large_elementwise_matches_scalar_loop)
{
    /* exercises the two-thread split and both broadcast loop forms */
    int64_t n = 1 << 20;
    ls_tensor *a = ls_tensor_alloc(LS_DT_F32, 1, &n), *b = ls_tensor_alloc(LS_DT_F32, 2, (int64_t[]){n / 256, 256});
    for (int64_t i = 0; i < n; i++) ((float *)a->data)[i] = (float)(i % 1000) * 0.5f, ((float *)b->data)[i] = (float)(i % 7);
    ls_tensor *row = kt(LS_DT_F32, SHAPE(256), NULL);
    for (int i = 0; i < 256; i++) ((float *)row->data)[i] = (float)i;
    ls_tensor *a2 = ls_tensor_reshape(a, 2, (int64_t[]){n / 256, 256});
    ls_tensor_unref(a);
    ls_value r = kt_run(LS_OP_add_Tensor, 3, VT(ls_tensor_ref(a2)), VT(ls_tensor_ref(b)), VI(1));
    ls_value r2 = kt_run(LS_OP_mul_Tensor, 2, VT(ls_tensor_ref(a2)), VT(ls_tensor_ref(row)));
    int64_t bad = 0;
    for (int64_t i = 0; i < n; i++) {
        bad += ((float *)r.t->data)[i] != ((float *)a2->data)[i] + ((float *)b->data)[i];
        bad += ((float *)r2.t->data)[i] != ((float *)a2->data)[i] * (float)(i % 256);
    }
    ck_assert_int_eq(bad, 0);
    /* the allocation-free entry point gives the same */
    ls_tensor *into = ls_tensor_alloc(LS_DT_F32, 2, a2->sizes);
    ls_error err;
    ck_assert_int_eq(ls_binary_into(LS_OP_add_Tensor, a2, b, into, &err), 0);
    ck_assert(ls_tensor_equal(into, r.t));
    ls_tensor_unref(into);
    ls_value_release(&r);
    ls_value_release(&r2);
    ls_tensor_unref(a2);
    ls_tensor_unref(b);
    ls_tensor_unref(row);
}
END_TEST

Suite *kernels_elementwise_suite(void)
{
    Suite *s = suite_create("kernels_elementwise");
    TCase *tc = tcase_create("core");
    tcase_add_test(tc, add_broadcasts_and_applies_alpha);
    tcase_add_test(tc, add_promotes_like_torch);
    tcase_add_test(tc, integer_arithmetic_wraps_without_undefined_behaviour);
    tcase_add_test(tc, sub_rsub_mul);
    tcase_add_test(tc, div_rounding_modes);
    tcase_add_test(tc, pow_forms);
    tcase_add_test(tc, comparisons_and_logic);
    tcase_add_test(tc, where_and_masked_fill);
    tcase_add_test(tc, clamp_scalar_and_tensor);
    tcase_add_test(tc, unary_math);
    tcase_add_test(tc, empty_tensors);
    tcase_add_test(tc, large_elementwise_matches_scalar_loop);
    suite_add_tcase(s, tc);
    return s;
}
