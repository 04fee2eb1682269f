/* Elementwise XNNPACK nodes: the binary ops with numpy broadcasting (xnn_define_binary), the
 * unary ops (xnn_define_unary), softmax over the innermost dimension and Convert (quantize,
 * dequantize, dynamic per-row quantization, float16 <-> float32).
 *
 * Quantized operands are read dequantized and results quantized with the output's parameters,
 * the output clamp applied before; XNNPACK's own qs8/qu8 kernels work in fixed point and can
 * differ from this by one step of the output scale. Which nodes honour output_min/max is
 * XNNCompiler.cpp's: Add, Subtract, Multiply, Div (_DEFINE_BINARY_NODE_WITH_MINMAX) and Clamp
 * (_DEFINE_UNARY_NODE_WITH_MINMAX); Minimum, Maximum, PReLU and the other unary ops ignore it. */
#include <math.h>
#include <stdlib.h>
#include <string.h>

#include "xnn_internal.h"

/* ---- broadcasting: numpy's rule, shapes right-aligned */

static int bcast_shape(lsx_run *R, uint32_t node, const ls_tensor *a, const ls_tensor *b, int *nd, int64_t *dims)
{
    int n = a->ndim > b->ndim ? a->ndim : b->ndim;
    for (int i = 0; i < n; i++) {
        int64_t da = i < n - a->ndim ? 1 : a->sizes[i - (n - a->ndim)];
        int64_t db = i < n - b->ndim ? 1 : b->sizes[i - (n - b->ndim)];
        if (da != db && da != 1 && db != 1)
            return lsx_fail(R, node, "shapes do not broadcast: dim %d is %lld and %lld", i, (long long)da, (long long)db);
        dims[i] = da == 1 ? db : da;
    }
    *nd = n;
    return 0;
}

/* Element strides of t over the broadcast shape (0 where it is broadcast). */
static void bcast_strides(const ls_tensor *t, int nd, const int64_t *dims, int64_t *st)
{
    int64_t s = 1;
    for (int i = nd - 1; i >= 0; i--) {
        int ti = i - (nd - t->ndim);
        if (ti < 0 || t->sizes[ti] == 1) st[i] = 0;
        else {
            st[i] = s;
            s *= t->sizes[ti];
        }
        (void)dims;
    }
}

static inline float bin_f(uint8_t type, float x, float y)
{
    switch (type) {
    case LS_XNN_Add: return x + y;
    case LS_XNN_Subtract: return x - y;
    case LS_XNN_Multiply: return x * y;
    case LS_XNN_Div: return x / y;
    case LS_XNN_Minimum: return x < y ? x : y;
    case LS_XNN_Maximum: return x > y ? x : y;
    case LS_XNN_PReLU: return x < 0 ? x * y : x;
    default: return 0;
    }
}

int lsx_binary(lsx_run *R, uint32_t node)
{
    const ls_xnn_node *n = &R->g->nodes[node];
    ls_tensor *ta = lsx_in(R, node, 0), *tb = lsx_in(R, node, 1);
    if (!ta || !tb) return -1;
    int nd = 0;
    int64_t dims[LS_XNN_MAX_DIMS], sa[LS_XNN_MAX_DIMS], sb[LS_XNN_MAX_DIMS];
    if (ta->ndim > LS_XNN_MAX_DIMS || tb->ndim > LS_XNN_MAX_DIMS) return lsx_fail(R, node, "more than 6 dimensions");
    if (bcast_shape(R, node, ta, tb, &nd, dims) != 0) return -1;
    void *tmpa, *tmpb;
    const float *a = lsx_in_f32(R, node, 0, &tmpa);
    const float *b = a ? lsx_in_f32(R, node, 1, &tmpb) : NULL;
    if (!b) {
        ls_free_aligned(tmpa);
        return -1;
    }
    ls_tensor *out = lsx_out(R, node, 0, nd, dims);
    float *o = lsx_out_f32(R, node, out);
    if (!o) {
        ls_free_aligned(tmpa);
        ls_free_aligned(tmpb);
        return -1;
    }
    bcast_strides(ta, nd, dims, sa);
    bcast_strides(tb, nd, dims, sb);
    int64_t inner = nd ? dims[nd - 1] : 1, rows = nd ? out->numel / (inner ? inner : 1) : 1;
    int64_t ia = nd ? sa[nd - 1] : 0, ib = nd ? sb[nd - 1] : 0;
    int64_t idx[LS_XNN_MAX_DIMS] = {0};
    uint8_t type = n->type;
    for (int64_t r = 0; r < rows && inner; r++) {
        int64_t oa = 0, ob = 0;
        for (int d = 0; d + 1 < nd; d++) oa += idx[d] * sa[d], ob += idx[d] * sb[d];
        float *orow = o + r * inner;
        const float *pa = a + oa, *pb = b + ob;
        if (type == LS_XNN_Add && ia == 1 && ib == 1)
            for (int64_t i = 0; i < inner; i++) orow[i] = pa[i] + pb[i];
        else if (type == LS_XNN_Multiply && ia == 1 && ib == 1)
            for (int64_t i = 0; i < inner; i++) orow[i] = pa[i] * pb[i];
        else
            for (int64_t i = 0; i < inner; i++) orow[i] = bin_f(type, pa[i * ia], pb[i * ib]);
        for (int d = nd - 2; d >= 0; d--) {
            if (++idx[d] < dims[d]) break;
            idx[d] = 0;
        }
    }
    if (type == LS_XNN_Add || type == LS_XNN_Subtract || type == LS_XNN_Multiply || type == LS_XNN_Div)
        lsx_clamp(n, o, out->numel);
    lsx_out_done(R, node, out, o);
    ls_free_aligned(tmpa);
    ls_free_aligned(tmpb);
    return 0;
}

/* ---- unary */

static float gelu(float x) { return 0.5f * x * (1.0f + erff(x * 0.70710678118654752f)); }

int lsx_unary(lsx_run *R, uint32_t node)
{
    const ls_xnn_node *n = &R->g->nodes[node];
    ls_tensor *ti = lsx_in(R, node, 0);
    if (!ti) return -1;
    void *tmp;
    const float *x;
    ls_tensor *out;
    float *o;
    if (lsx_float_io(R, node, ti->ndim, ti->sizes, &x, &tmp, &out, &o) != 0) return -1;
    int64_t count = ti->numel;
    float p = n->p.alpha;
    switch (n->type) {
    case LS_XNN_Sigmoid: for (int64_t i = 0; i < count; i++) o[i] = 1.0f / (1.0f + expf(-x[i])); break;
    case LS_XNN_Clamp:
        memmove(o, x, (size_t)count * 4);
        lsx_clamp(n, o, count);
        break;
    case LS_XNN_Floor: for (int64_t i = 0; i < count; i++) o[i] = floorf(x[i]); break;
    case LS_XNN_Ceiling: for (int64_t i = 0; i < count; i++) o[i] = ceilf(x[i]); break;
    case LS_XNN_SquareRoot: for (int64_t i = 0; i < count; i++) o[i] = sqrtf(x[i]); break;
    case LS_XNN_ReciprocalSquareRoot: for (int64_t i = 0; i < count; i++) o[i] = 1.0f / sqrtf(x[i]); break;
    case LS_XNN_Hardswish:
        for (int64_t i = 0; i < count; i++) {
            float r = x[i] + 3.0f;
            r = r < 0 ? 0 : r > 6 ? 6 : r;
            o[i] = x[i] * r / 6.0f;
        }
        break;
    case LS_XNN_Negate: for (int64_t i = 0; i < count; i++) o[i] = -x[i]; break;
    case LS_XNN_Square: for (int64_t i = 0; i < count; i++) o[i] = x[i] * x[i]; break;
    case LS_XNN_Abs: for (int64_t i = 0; i < count; i++) o[i] = fabsf(x[i]); break;
    case LS_XNN_Log: for (int64_t i = 0; i < count; i++) o[i] = logf(x[i]); break;
    case LS_XNN_Exp: for (int64_t i = 0; i < count; i++) o[i] = expf(x[i]); break;
    case LS_XNN_Tanh: for (int64_t i = 0; i < count; i++) o[i] = tanhf(x[i]); break;
    case LS_XNN_Sin: for (int64_t i = 0; i < count; i++) o[i] = sinf(x[i]); break;
    case LS_XNN_Gelu: for (int64_t i = 0; i < count; i++) o[i] = gelu(x[i]); break;
    case LS_XNN_ELU: for (int64_t i = 0; i < count; i++) o[i] = x[i] > 0 ? x[i] : p * expm1f(x[i]); break;
    case LS_XNN_LeakyReLU: for (int64_t i = 0; i < count; i++) o[i] = x[i] < 0 ? x[i] * p : x[i]; break;
    default: break;
    }
    lsx_out_done(R, node, out, o);
    ls_free_aligned(tmp);
    return 0;
}

int lsx_softmax(lsx_run *R, uint32_t node)
{
    ls_tensor *ti = lsx_in(R, node, 0);
    if (!ti) return -1;
    if (ti->ndim == 0) return lsx_fail(R, node, "softmax of a 0-d tensor");
    void *tmp;
    const float *x;
    ls_tensor *out;
    float *o;
    if (lsx_float_io(R, node, ti->ndim, ti->sizes, &x, &tmp, &out, &o) != 0) return -1;
    int64_t c = ti->sizes[ti->ndim - 1];
    for (int64_t r = 0; c && r < ti->numel / c; r++) {
        const float *xr = x + r * c;
        float *orow = o + r * c, m = -INFINITY, s = 0;
        for (int64_t i = 0; i < c; i++) m = xr[i] > m ? xr[i] : m;
        for (int64_t i = 0; i < c; i++) s += orow[i] = expf(xr[i] - m);
        for (int64_t i = 0; i < c; i++) orow[i] /= s;
    }
    lsx_out_done(R, node, out, o);
    ls_free_aligned(tmp);
    return 0;
}

/* ---- Convert */

/* XNNPACK's per-row (qd8) parameters, as xnn_qd8_asymmetric_quantization_params computes them
 * (XNNPACK's src/xnnpack/quantization.h): the range [min, max] widened to hold 0, its inverse
 * scale 255 / (max - min) (1 for an empty range), the zero point from whichever end errs less,
 * clamped to [-128, 127] and rounded to nearest even (lrintf). The rows are quantized with the
 * inverse scale and dequantized with its reciprocal (*scale). The same rule as torch's
 * choose_qparams, computed through the inverse. */
void lsx_qd8_row(const float *x, int64_t n, int8_t *q, float *scale, int32_t *zp)
{
    float lo = 0, hi = 0;
    for (int64_t i = 0; i < n; i++) {
        lo = x[i] < lo ? x[i] : lo;
        hi = x[i] > hi ? x[i] : hi;
    }
    const float qmin = -128, qmax = 127;
    float inv = lo == hi ? 1.0f : (qmax - qmin) / (hi - lo);
    float dmin = lo * inv, dmax = hi * inv;
    float z = (qmin + dmin) + (qmax + dmax) > 0 ? qmin - dmin : qmax - dmax;
    z = z < qmin ? qmin : z > qmax ? qmax : z;
    *scale = 1.0f / inv;
    *zp = (int32_t)lsx_round_q(z);
    for (int64_t i = 0; i < n; i++) {
        float f = lsx_round_q(x[i] * inv) + (float)*zp;
        q[i] = (int8_t)(f < -128 ? -128 : f > 127 ? 127 : f);
    }
}

int lsx_convert(lsx_run *R, uint32_t node)
{
    const ls_xnn_node *n = &R->g->nodes[node];
    ls_tensor *ti = lsx_in(R, node, 0);
    if (!ti) return -1;
    const ls_xnn_value *od = lsx_def(R, n->out[0]);
    void *tmp;
    const float *x = lsx_in_f32(R, node, 0, &tmp);
    if (!x) return -1;
    ls_tensor *out = lsx_out(R, node, 0, ti->ndim, ti->sizes);
    if (!out) {
        ls_free_aligned(tmp);
        return -1;
    }
    if (od->datatype == LS_XNN_DT_QDINT8) {
        /* rows: the last num_nonbatch_dims dimensions (xnn_define_dynamically_quantized_tensor_value) */
        int nb = od->quant == LS_XNN_Q_PER_TOKEN_DYNAMIC ? od->num_nonbatch_dims : 1;
        if (nb < 0 || nb > ti->ndim) nb = ti->ndim;
        int64_t row = 1;
        for (int d = ti->ndim - nb; d < ti->ndim; d++) row *= ti->sizes[d];
        int64_t rows = row ? ti->numel / row : 0;
        lsx_rval *v = lsx_val(R, n->out[0]);
        v->n_rows = rows;
        v->row_scale = ls_malloc(sizeof *v->row_scale * (size_t)(rows + 1));
        v->row_zp = ls_malloc(sizeof *v->row_zp * (size_t)(rows + 1));
        for (int64_t r = 0; r < rows; r++)
            lsx_qd8_row(x + r * row, row, (int8_t *)out->data + r * row, &v->row_scale[r], &v->row_zp[r]);
    } else {
        lsx_store_f32(R, node, 0, out, x);
    }
    ls_free_aligned(tmp);
    return 0;
}
