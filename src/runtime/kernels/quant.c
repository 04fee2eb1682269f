/* Quantization: quantized_decomposed's quantize / dequantize (per tensor, per channel, with the
 * parameters as numbers or as tensors) and choose_qparams.tensor, as ExecuTorch's quantized
 * kernels compute them (the op semantics are torch/ao/quantization/fx/_decomposed.py's; the
 * arithmetic is the kernels', which a .pte runs with):
 *   quantize (kernels/quantized/cpu/op_quantize.cpp, quantize_val): inv_scale = 1.0f /
 *               (float)scale, q = zero_point + nearbyint((float)(inv_scale * x)) (round half to
 *               even), clamped to [quant_min, quant_max], in the integer dtype;
 *   dequantize (op_dequantize.cpp): per tensor (dequantize_per_tensor_out) (q - zero_point) *
 *               (float)scale in float32; per channel (dequantize_per_channel_out) the same in
 *               float32, except an int8 input to float32 (can_use_optimized_dequantize_per_channel:
 *               Char in, contiguous, out_dtype Float or none), which dequantize_optimized
 *               computes in double, (q - zero_point) * scale, then stores as float; a float64
 *               out_dtype gets the float32 product widened;
 *   choose_qparams (op_choose_qparams.cpp, choose_qparams): min' = min(min(x), 0), max' =
 *               max(max(x), 0), scale = (max' - min') / (quant_max - quant_min) in double, 0.1
 *               when (float)scale is 0 or its float reciprocal is infinite, raised to 6.1e-5
 *               (SMALL_SCALE_THRESHOLD, min' and max' scaled alike) when below; the zero point
 *               from whichever of (quant_min, min') and (quant_max, max') adds the smaller terms,
 *               clamped, then nearbyint; eps is unused, as there; scale as float64[1],
 *               zero_point as int64[1]. */
#include <inttypes.h>
#include <math.h>
#include <stdlib.h>

#include "kernels.h"

static bool is_int_dtype(ls_dtype d)
{
    return d == LS_DT_U8 || d == LS_DT_I8 || d == LS_DT_I16 || d == LS_DT_I32 || d == LS_DT_U16;
}

static int check_range(ls_kctx *c, int64_t qmin, int64_t qmax, ls_dtype dt)
{
    if (!is_int_dtype(dt)) return ls_kfail(c, "quantizes to an integer dtype (uint8, int8, int16, int32), not %s", ls_dtype_name(dt));
    if (qmin > qmax) return ls_kfail(c, "quant_min %" PRId64 " is above quant_max %" PRId64, qmin, qmax);
    return 0;
}

/* A scale or zero point given as a tensor: its single element. */
static int scalar_of(ls_kctx *c, const ls_value *a, const char *what, double *f)
{
    if (a->kind != LS_V_TENSOR) {
        *f = lk_f64(a);
        return 0;
    }
    if (a->t->numel != 1) return ls_kfail(c, "%s must have one element, not %" PRId64, what, a->t->numel);
    *f = ls_tensor_get_f64(a->t, 0);
    return 0;
}

/* Per-channel parameters: `scales` (and `zps`, NULL for zeros) along axis of x. */
typedef struct qparams {
    const double *scale;  /* per channel, or one */
    const double *zp;
    int64_t channels, inner; /* channel c of element i: (i / inner) % channels */
    void *tmp_s, *tmp_z;
    double one_scale, one_zp;
} qparams;

static int per_channel(ls_kctx *c, const ls_tensor *x, const ls_value *scales, const ls_value *zps, int64_t axis, qparams *q)
{
    memset(q, 0, sizeof *q);
    int ax;
    if (lk_dim(c, axis, x->ndim, &ax) != 0) return -1;
    int64_t C = x->ndim ? x->sizes[ax] : 1;
    if (scales->t->numel != C)
        return ls_kfail(c, "scales has %" PRId64 " elements for %" PRId64 " channels along axis %d", scales->t->numel, C, ax);
    if (zps && !lk_none(zps) && zps->t->numel != C)
        return ls_kfail(c, "zero_points has %" PRId64 " elements for %" PRId64 " channels along axis %d", zps->t->numel, C, ax);
    q->scale = lk_as(scales->t, LS_DT_F64, &q->tmp_s);
    q->zp = zps && !lk_none(zps) ? lk_as(zps->t, LS_DT_F64, &q->tmp_z) : NULL;
    q->channels = C;
    q->inner = 1;
    for (int d = ax + 1; d < x->ndim; d++) q->inner *= x->sizes[d];
    return 0;
}

static void one_channel(qparams *q, double scale, double zp)
{
    memset(q, 0, sizeof *q);
    q->one_scale = scale;
    q->one_zp = zp;
    q->scale = &q->one_scale;
    q->zp = &q->one_zp;
    q->channels = 1;
    q->inner = 1;
}

static void qparams_free(qparams *q)
{
    ls_free_aligned(q->tmp_s);
    ls_free_aligned(q->tmp_z);
}

static int quantize(ls_kctx *c, const ls_tensor *x, qparams *q, int64_t qmin, int64_t qmax, ls_dtype dt, ls_value *out)
{
    if (check_range(c, qmin, qmax, dt) != 0) return -1;
    if (!ls_dtype_is_float(x->dtype)) return ls_kfail(c, "quantizes a floating point tensor, not %s", ls_dtype_name(x->dtype));
    for (int64_t k = 0; k < q->channels; k++)
        if (!(q->scale[k] > 0) && !(q->scale[k] < 0)) return ls_kfail(c, "scale %g cannot divide", q->scale[k]);
    ls_tensor *y = lk_new_like(c, x, dt);
    if (!y) return -1;
    void *tx;
    const float *xd = lk_as(x, LS_DT_F32, &tx);
    int64_t *qd = lk_alloc_tmp(sizeof(int64_t) * (size_t)(x->numel ? x->numel : 1));
    for (int64_t i = 0; i < x->numel; i++) {
        int64_t ch = (i / q->inner) % q->channels;
        float inv = 1.0f / (float)q->scale[ch];
        double v = nearbyint((double)(xd[i] * inv)) + (q->zp ? q->zp[ch] : 0);
        if (v != v) v = (double)qmin;
        qd[i] = v < (double)qmin ? qmin : v > (double)qmax ? qmax : (int64_t)v;
    }
    lk_convert(y->data, dt, qd, LS_DT_I64, x->numel);
    ls_free_aligned(qd);
    ls_free_aligned(tx);
    return lk_ret(out, y);
}

static int dequantize(ls_kctx *c, const ls_tensor *x, qparams *q, ls_dtype dt, ls_dtype out_dt, bool per_channel_op,
                      ls_value *out)
{
    if (!is_int_dtype(x->dtype)) return ls_kfail(c, "dequantizes an integer tensor, not %s", ls_dtype_name(x->dtype));
    if (x->dtype != dt) return ls_kfail(c, "the input is %s, dtype says %s", ls_dtype_name(x->dtype), ls_dtype_name(dt));
    if (!ls_dtype_is_float(out_dt)) return ls_kfail(c, "dequantizes to a floating point dtype, not %s", ls_dtype_name(out_dt));
    ls_tensor *y = lk_new_like(c, x, out_dt);
    if (!y) return -1;
    void *tx;
    const int64_t *xd = lk_as(x, LS_DT_I64, &tx);
    float *yd = lk_alloc_tmp(sizeof(float) * (size_t)(x->numel ? x->numel : 1));
    /* lowerscope's tensors are contiguous: the optimized path is the int8 → float32 one */
    bool in_double = per_channel_op && x->dtype == LS_DT_I8 && out_dt == LS_DT_F32;
    for (int64_t i = 0; i < x->numel; i++) {
        int64_t ch = (i / q->inner) % q->channels;
        /* (input - zero_point) * scale, as ExecuTorch's dequantize_per_tensor_out and
         * dequantize_per_channel_out (kernels/quantized/cpu/op_dequantize.cpp); taken in double,
         * exact for every input and zero point below 2^53, so a zero point a file makes -2^63
         * (or past int64) neither overflows nor casts out of range */
        double d = (double)xd[i] - (q->zp ? q->zp[ch] : 0.0);
        yd[i] = in_double ? (float)(d * q->scale[ch]) : (float)d * (float)q->scale[ch];
    }
    lk_convert(y->data, out_dt, yd, LS_DT_F32, x->numel);
    ls_free_aligned(yd);
    ls_free_aligned(tx);
    return lk_ret(out, y);
}

LK_DECL(k_quantize_per_tensor)
{
    double scale = 0, zp = 0;
    if (scalar_of(c, &args[1], "scale", &scale) != 0 || scalar_of(c, &args[2], "zero_point", &zp) != 0) return -1;
    qparams q;
    one_channel(&q, scale, zp);
    return quantize(c, args[0].t, &q, lk_int(&args[3]), lk_int(&args[4]), lk_dtype_or(&args[5], LS_DT_I8), out);
}

LK_DECL(k_dequantize_per_tensor)
{
    double scale = 0, zp = 0;
    if (scalar_of(c, &args[1], "scale", &scale) != 0 || scalar_of(c, &args[2], "zero_point", &zp) != 0) return -1;
    qparams q;
    one_channel(&q, scale, zp);
    ls_dtype od = nargs > 6 ? lk_dtype_or(&args[6], LS_DT_F32) : LS_DT_F32;
    return dequantize(c, args[0].t, &q, lk_dtype_or(&args[5], LS_DT_I8), od, false, out);
}

LK_DECL(k_quantize_per_channel)
{
    qparams q;
    if (per_channel(c, args[0].t, &args[1], &args[2], lk_int(&args[3]), &q) != 0) return -1;
    int rc = quantize(c, args[0].t, &q, lk_int(&args[4]), lk_int(&args[5]), lk_dtype_or(&args[6], LS_DT_I8), out);
    qparams_free(&q);
    return rc;
}

LK_DECL(k_dequantize_per_channel)
{
    qparams q;
    if (per_channel(c, args[0].t, &args[1], &args[2], lk_int(&args[3]), &q) != 0) return -1;
    ls_dtype od = nargs > 7 ? lk_dtype_or(&args[7], LS_DT_F32) : LS_DT_F32;
    int rc = dequantize(c, args[0].t, &q, lk_dtype_or(&args[6], LS_DT_I8), od, true, out);
    qparams_free(&q);
    return rc;
}

LK_DECL(k_choose_qparams)
{
    (void)nargs;
    const ls_tensor *x = args[0].t;
    int64_t qmin = lk_int(&args[1]), qmax = lk_int(&args[2]);
    if (check_range(c, qmin, qmax, lk_dtype_or(&args[4], LS_DT_I8)) != 0) return -1;
    if (qmin >= qmax) return ls_kfail(c, "qmin should be less than qmax, but received min: %" PRId64 ", max %" PRId64, qmin, qmax);
    if (x->dtype != LS_DT_F32) return ls_kfail(c, "Expected input to be Float tensor, not %s", ls_dtype_name(x->dtype));
    const float *xd = x->data;
    float lo = 0, hi = 0; /* min(min(x), 0) and max(max(x), 0) */
    for (int64_t i = 0; i < x->numel; i++) {
        if (xd[i] < lo) lo = xd[i];
        if (xd[i] > hi) hi = xd[i];
    }
    double scale = ((double)hi - lo) / (double)(qmax - qmin);
    if ((float)scale == 0.0f || isinf(1.0f / (float)scale)) scale = 0.1;
    const float small = 6.1e-5f; /* SMALL_SCALE_THRESHOLD */
    if (scale < small) {
        float org = (float)scale;
        scale = small;
        if (lo == 0.0f) hi = small * (float)(qmax - qmin);
        else if (hi == 0.0f) lo = -small * (float)(qmax - qmin);
        else {
            float amp = small / org;
            lo *= amp;
            hi *= amp;
        }
    }
    double from_min = (double)qmin - lo / scale, from_max = (double)qmax - hi / scale;
    double err_min = fabs((double)qmin) - fabs(lo / scale), err_max = fabs((double)qmax) - fabs(hi / scale);
    double initial = err_min < err_max ? from_min : from_max;
    int64_t zp = initial < (double)qmin ? qmin : initial > (double)qmax ? qmax : (int64_t)nearbyint(initial);
    int64_t one = 1;
    ls_tensor *s = lk_new(c, LS_DT_F64, 1, &one), *z = s ? lk_new(c, LS_DT_I64, 1, &one) : NULL;
    if (!z) {
        ls_tensor_unref(s);
        return -1;
    }
    ((double *)s->data)[0] = scale;
    ((int64_t *)z->data)[0] = zp;
    *out = ls_value_list(2);
    out->items[0] = ls_value_tensor(s);
    out->items[1] = ls_value_tensor(z);
    return 0;
}
