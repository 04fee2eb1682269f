/* Quantization and convolution kernels, on values worked by hand from torch's definitions
 * (torch/ao/quantization/fx/_decomposed.py; aten.convolution). */
#include "ktest.h"

/* quantize: clamp(round(x / scale) + zp); round half to even (torch.round): 0.125/0.25 = 0.5 → 0,
 * 0.375/0.25 = 1.5 → 2; 100 clamps to 127. dequantize: (q - zp) * scale. */
START_TEST(quantize_dequantize_per_tensor)
{
    ls_value q = kt_run(LS_OP_quantize_per_tensor, 6, VT(kt(LS_DT_F32, SHAPE(5), VALS(0.125, 0.375, -1.0, 100.0, -0.3))), VF(0.25),
                        VI(3), VI(-128), VI(127), VDT(LS_DT_I8));
    kt_expect(&q, LS_DT_I8, SHAPE(5), VALS(3, 5, -1, 127, 2));
    ls_value d = kt_run(LS_OP_dequantize_per_tensor, 6, VT(ls_tensor_ref(q.t)), VF(0.25), VI(3), VI(-128), VI(127), VDT(LS_DT_I8));
    kt_expect(&d, LS_DT_F32, SHAPE(5), VALS(0.0, 0.5, -1.0, 31.0, -0.25));
    ls_value_release(&d);
    /* the .tensor forms read the parameters from one-element tensors */
    d = kt_run(LS_OP_dequantize_per_tensor_tensor, 6, VT(ls_tensor_ref(q.t)), VT(kt(LS_DT_F64, SHAPE(1), VALS(0.25))),
               VT(kt(LS_DT_I64, SHAPE(1), VALS(3))), VI(-128), VI(127), VDT(LS_DT_I8));
    kt_expect(&d, LS_DT_F32, SHAPE(5), VALS(0.0, 0.5, -1.0, 31.0, -0.25));
    ls_value_release(&d);
    ls_value_release(&q);
    kt_fails("dequantizes an integer tensor", LS_OP_dequantize_per_tensor, 6, VT(kt(LS_DT_F32, SHAPE(1), VALS(1))), VF(1.0), VI(0),
             VI(-128), VI(127), VDT(LS_DT_I8));
    kt_fails("integer dtype", LS_OP_quantize_per_tensor, 6, VT(kt(LS_DT_F32, SHAPE(1), VALS(1))), VF(1.0), VI(0), VI(-128),
             VI(127), VDT(LS_DT_F32));
}
END_TEST

/* per channel along axis 0 of [2, 2]: channel 0 scale 0.5, channel 1 scale 0.1 (zero points 0). */
START_TEST(quantize_dequantize_per_channel)
{
    ls_value q = kt_run(LS_OP_quantize_per_channel, 7, VT(kt(LS_DT_F32, SHAPE(2, 2), VALS(1.0, -1.0, 0.25, 0.5))),
                        VT(kt(LS_DT_F32, SHAPE(2), VALS(0.5, 0.1))), VT(kt(LS_DT_I64, SHAPE(2), VALS(0, 0))), VI(0), VI(-127),
                        VI(127), VDT(LS_DT_I8));
    kt_expect(&q, LS_DT_I8, SHAPE(2, 2), VALS(2, -2, 2, 5));
    ls_value d = kt_run(LS_OP_dequantize_per_channel, 7, VT(ls_tensor_ref(q.t)), VT(kt(LS_DT_F32, SHAPE(2), VALS(0.5, 0.1))), VN,
                        VI(0), VI(-127), VI(127), VDT(LS_DT_I8));
    kt_expect(&d, LS_DT_F32, SHAPE(2, 2), VALS(1.0, -1.0, 0.2, 0.5));
    ls_value_release(&d);
    ls_value_release(&q);
    kt_fails("scales has 3 elements for 2 channels", LS_OP_quantize_per_channel, 7, VT(kt(LS_DT_F32, SHAPE(2, 2), NULL)),
             VT(kt(LS_DT_F32, SHAPE(3), NULL)), VT(kt(LS_DT_I64, SHAPE(3), NULL)), VI(0), VI(-127), VI(127), VDT(LS_DT_I8));
}
END_TEST

/* The arithmetic of kernels/quantized/cpu/op_dequantize.cpp, where float32 and double differ:
 * q = -124, scale 0.1. dequantize_per_tensor_out: (q - zp) * (float)scale in float32 =
 * -124 * 0.100000001f = -12.4000006; dequantize_per_channel_out on int8 (the optimized path,
 * dequantize_optimized): (q - zp) * scale in double = -12.4 → -12.3999996f; on uint8 (the generic
 * path, float _scale): q 4, zp 128 → -124 * 0.100000001f = -12.4000006 again. */
static float f32_at(const ls_value *v, int64_t i)
{
    ck_assert_int_eq(v->kind, LS_V_TENSOR);
    ck_assert_int_eq(v->t->dtype, LS_DT_F32);
    return ((const float *)v->t->data)[i];
}

START_TEST(dequantize_float_or_double_as_the_kernel)
{
    const float in_float = (float)-124 * (float)0.1, in_double = (float)(-124 * 0.1);
    ck_assert(in_float != in_double); /* the case tells the two apart */
    ls_value d = kt_run(LS_OP_dequantize_per_tensor, 6, VT(kt(LS_DT_I8, SHAPE(1), VALS(-124))), VF(0.1), VI(0), VI(-128),
                        VI(127), VDT(LS_DT_I8));
    ck_assert_float_eq(f32_at(&d, 0), in_float);
    ls_value_release(&d);
    d = kt_run(LS_OP_dequantize_per_channel, 7, VT(kt(LS_DT_I8, SHAPE(1), VALS(-124))), VT(kt(LS_DT_F64, SHAPE(1), VALS(0.1))),
               VN, VI(0), VI(-128), VI(127), VDT(LS_DT_I8));
    ck_assert_float_eq(f32_at(&d, 0), in_double);
    ls_value_release(&d);
    d = kt_run(LS_OP_dequantize_per_channel, 7, VT(kt(LS_DT_U8, SHAPE(1), VALS(4))), VT(kt(LS_DT_F64, SHAPE(1), VALS(0.1))),
               VT(kt(LS_DT_I64, SHAPE(1), VALS(128))), VI(0), VI(0), VI(255), VDT(LS_DT_U8));
    ck_assert_float_eq(f32_at(&d, 0), in_float);
    ls_value_release(&d);
}
END_TEST

/* choose_qparams over [-1, 3] for int8 [-128, 127]: scale 4/255, zp = -128 - round(-1 / (4/255))
 * = -128 + 64 = -64 (round(-63.75) = -64). */
START_TEST(choose_qparams_tensor)
{
    ls_value r = kt_run(LS_OP_choose_qparams_tensor, 5, VT(kt(LS_DT_F32, SHAPE(3), VALS(-1.0, 0.5, 3.0))), VI(-128), VI(127),
                        VF(1e-5), VDT(LS_DT_I8));
    ck_assert_int_eq(r.kind, LS_V_LIST);
    ck_assert_uint_eq(r.n, 2);
    kt_expect(&r.items[0], LS_DT_F64, SHAPE(1), VALS(4.0 / 255.0));
    kt_expect(&r.items[1], LS_DT_I64, SHAPE(1), VALS(-64));
    ls_value_release(&r);
}
END_TEST

/* A 2×2 kernel of ones over a 3×3 input 0..8 with bias 1: each output sums a 2×2 window. */
START_TEST(convolution_2d)
{
    ls_value y = kt_run(LS_OP_convolution, 9, VT(kt_iota(LS_DT_F32, SHAPE(1, 1, 3, 3))),
                        VT(kt(LS_DT_F32, SHAPE(1, 1, 2, 2), VALS(1, 1, 1, 1))), VT(kt(LS_DT_F32, SHAPE(1), VALS(1))), VINTS(1, 1),
                        VINTS(0, 0), VINTS(1, 1), VB(false), VINTS(0, 0), VI(1));
    kt_expect(&y, LS_DT_F32, SHAPE(1, 1, 2, 2), VALS(9, 13, 21, 25));
    ls_value_release(&y);
    /* conv2d with padding 1 and stride 2: the corners of the padded input */
    y = kt_run(LS_OP_conv2d, 7, VT(kt_iota(LS_DT_F32, SHAPE(1, 1, 3, 3))), VT(kt(LS_DT_F32, SHAPE(1, 1, 2, 2), VALS(1, 1, 1, 1))),
               VN, VINTS(2, 2), VINTS(1, 1), VINTS(1, 1), VI(1));
    kt_expect(&y, LS_DT_F32, SHAPE(1, 1, 2, 2), VALS(0, 3, 9, 24));
    ls_value_release(&y);
    kt_fails("transposed convolution is not supported", LS_OP_convolution, 9, VT(kt_iota(LS_DT_F32, SHAPE(1, 1, 3, 3))),
             VT(kt(LS_DT_F32, SHAPE(1, 1, 2, 2), NULL)), VN, VINTS(1, 1), VINTS(0, 0), VINTS(1, 1), VB(true), VINTS(0, 0), VI(1));
    kt_fails("groups=2 must divide", LS_OP_convolution, 9, VT(kt_iota(LS_DT_F32, SHAPE(1, 3, 3, 3))),
             VT(kt(LS_DT_F32, SHAPE(2, 1, 2, 2), NULL)), VN, VINTS(1, 1), VINTS(0, 0), VINTS(1, 1), VB(false), VINTS(0, 0), VI(2));
}
END_TEST

Suite *kernels_quant_suite(void)
{
    Suite *s = suite_create("kernels_quant");
    TCase *tc = tcase_create("quant");
    tcase_add_test(tc, quantize_dequantize_per_tensor);
    tcase_add_test(tc, quantize_dequantize_per_channel);
    tcase_add_test(tc, choose_qparams_tensor);
    tcase_add_test(tc, dequantize_float_or_double_as_the_kernel);
    tcase_add_test(tc, convolution_2d);
    suite_add_tcase(s, tc);
    return s;
}
