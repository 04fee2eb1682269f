/* The XNNGraph interpreter's core: values at run time, float views of quantized and half
 * values, the output clamp, and the run of a graph's nodes in order.
 *
 * Semantics follow ExecuTorch's XNNPACK runtime: the external inputs are the delegate call's
 * arguments by external_id and the outputs follow them (XNNExecutor.cpp: initialize sorts the
 * input and output ids, prepare_args binds args[external_id] and reshapes each input to the
 * tensor given, so shapes propagate through the graph at every run); each node is what
 * XNNCompiler.cpp's define*Node hands XNNPACK (getDefineNodeFunc), with the node's
 * output_min/max where define*Node passes it. */
#include <inttypes.h>
#include <math.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "xnn_internal.h"

ls_dtype lsx_storage(uint8_t dt)
{
    switch (dt) {
    case LS_XNN_DT_FP32:
    case LS_XNN_DT_PFP32: return LS_DT_F32;
    case LS_XNN_DT_FP16: return LS_DT_F16;
    case LS_XNN_DT_BF16: return LS_DT_BF16;
    case LS_XNN_DT_QINT8:
    case LS_XNN_DT_QCINT8:
    case LS_XNN_DT_QDINT8:
    case LS_XNN_DT_QPINT8: return LS_DT_I8;
    case LS_XNN_DT_QUINT8:
    case LS_XNN_DT_QCINT4:
    case LS_XNN_DT_QBINT4: return LS_DT_U8;
    case LS_XNN_DT_QINT32:
    case LS_XNN_DT_QCINT32:
    case LS_XNN_DT_INT32: return LS_DT_I32;
    default: return LS_DT_UNKNOWN;
    }
}

const ls_xnn_value *lsx_def(const lsx_run *R, uint32_t id)
{
    int32_t pos = ls_xnn_value_pos(R->g, id);
    return pos >= 0 ? &R->g->values[pos] : NULL;
}

lsx_rval *lsx_val(lsx_run *R, uint32_t id)
{
    int32_t pos = ls_xnn_value_pos(R->g, id);
    return pos >= 0 ? &R->vals[pos] : NULL;
}

/* "NAME: xnodes[i] (XNNConv2d, debug handle h): ..."; needs: the exit 3 code (ls_fail_needs) */
static int vfail(lsx_run *R, uint32_t node, bool needs, const char *fmt, va_list ap)
{
    char msg[LS_ERR_MAX / 2];
    vsnprintf(msg, sizeof msg, fmt, ap);
    const ls_xnn_node *n = &R->g->nodes[node];
    const char *tn = ls_xnn_node_type_name(n->type);
    return (needs ? ls_fail_needs : ls_fail)(R->err, "%s: xnodes[%u] (%s, debug handle %u): %s", R->name, node,
                                             tn ? tn : "?", n->debug_handle, msg);
}

int lsx_fail(lsx_run *R, uint32_t node, const char *fmt, ...)
{
    va_list ap;
    va_start(ap, fmt);
    int rc = vfail(R, node, false, fmt, ap);
    va_end(ap);
    return rc;
}

int lsx_fail_needs(lsx_run *R, uint32_t node, const char *fmt, ...)
{
    va_list ap;
    va_start(ap, fmt);
    int rc = vfail(R, node, true, fmt, ap);
    va_end(ap);
    return rc;
}

ls_tensor *lsx_in(lsx_run *R, uint32_t node, unsigned k)
{
    const ls_xnn_node *n = &R->g->nodes[node];
    lsx_rval *v = lsx_val(R, n->in[k]);
    if (!v || !v->t) {
        lsx_fail(R, node, "input %u (value %u) has not been computed: the nodes are not in order", k, n->in[k]);
        return NULL;
    }
    return v->t;
}

ls_tensor *lsx_out(lsx_run *R, uint32_t node, unsigned k, int ndim, const int64_t *dims)
{
    const ls_xnn_node *n = &R->g->nodes[node];
    const ls_xnn_value *d = lsx_def(R, n->out[k]);
    lsx_rval *v = lsx_val(R, n->out[k]);
    ls_dtype dt = lsx_storage(d->datatype);
    if (dt == LS_DT_UNKNOWN || d->datatype == LS_XNN_DT_QCINT4 || d->datatype == LS_XNN_DT_QBINT4) {
        lsx_fail(R, node, "output value %u is %s, which no XNNPACK operation produces", n->out[k],
                 ls_xnn_datatype_name(d->datatype));
        return NULL;
    }
    if (d->constant_idx) {
        lsx_fail(R, node, "output value %u is a constant", n->out[k]);
        return NULL;
    }
    /* XNNPACK infers every value's shape from the inputs before anything runs
     * (xnn_reshape_runtime), and the dims a value is defined with are what the serializer saw
     * (the upper bound of a dynamic one: backends/transforms/addmm_mm_to_linear.py's get_shape,
     * which the XNNPACK node visitors serialize dims with, takes eval_shape_upper_bound unless
     * the bound is int64 max): a node whose output would hold more elements than its
     * value is defined with is refused before it computes (a crafted convolution made
     * float32[1, 8, 272, 8207] of a [1, 8, 16, 16], 310 MB, before the runtime said so) */
    if (d->ndim > 0) {
        double want = 1, declared = 1;
        for (int i = 0; i < ndim; i++) want *= (double)dims[i];
        for (unsigned i = 0; i < d->ndim; i++) declared *= (double)d->dims[i];
        if (want > declared) {
            char got[160], def[160];
            int o = 0, q = 0;
            for (int i = 0; i < ndim && o < 140; i++) o += snprintf(got + o, sizeof got - (size_t)o, "%s%" PRId64, i ? ", " : "", dims[i]);
            for (unsigned i = 0; i < d->ndim && q < 140; i++) q += snprintf(def + q, sizeof def - (size_t)q, "%s%u", i ? ", " : "", d->dims[i]);
            if (!ndim) snprintf(got, sizeof got, "%s", "");
            lsx_fail(R, node, "output value %u would be %s[%s], more elements than the %s[%s] it is defined with", n->out[k],
                     ls_dtype_name(dt), got, ls_dtype_name(dt), def);
            return NULL;
        }
    }
    ls_error e2;
    ls_tensor *t = ls_tensor_new(dt, ndim, dims, &e2);
    if (!t) {
        lsx_fail(R, node, "output %u: %s", k, e2.msg);
        return NULL;
    }
    ls_tensor_unref(v->t);
    free(v->row_scale);
    free(v->row_zp);
    *v = (lsx_rval){.t = t};
    return t;
}

float lsx_round_q(float x)
{
    return nearbyintf(x);
}

/* xnn_qs8_quantize (src/xnnpack/requantization.h), which create_fully_connected_operator
 * (src/subgraph/fully-connected.c) and create_convolution_operator (convolution-2d.c) apply to
 * output_min/max: the zero point is added before rounding, lrintf(clamp(bound / scale + zp,
 * -128, 127)). */
void lsx_q_bounds(const ls_xnn_node *n, float scale, int32_t zp, int32_t *lo, int32_t *hi)
{
    *lo = -128;
    *hi = 127;
    if (!n->has_min_max || scale == 0) return;
    if (n->out_min > -INFINITY) *lo = (int32_t)lsx_round_q(fminf(fmaxf(n->out_min / scale + (float)zp, -128), 127));
    if (n->out_max < INFINITY) *hi = (int32_t)lsx_round_q(fminf(fmaxf(n->out_max / scale + (float)zp, -128), 127));
}

/* Per-tensor quantization parameters of a value; per-channel values are dequantized by the
 * kernels that read them (weights). */
static void qparams(const ls_xnn_value *d, float *scale, int32_t *zp)
{
    *scale = d->quant == LS_XNN_Q_PER_TENSOR ? d->scale : 1.0f;
    *zp = d->quant == LS_XNN_Q_PER_TENSOR ? d->zero_point : 0;
}

const float *lsx_in_f32(lsx_run *R, uint32_t node, unsigned k, void **tmp)
{
    *tmp = NULL;
    ls_tensor *t = lsx_in(R, node, k);
    if (!t) return NULL;
    const ls_xnn_node *n = &R->g->nodes[node];
    const ls_xnn_value *d = lsx_def(R, n->in[k]);
    const lsx_rval *v = lsx_val(R, n->in[k]);
    if (t->dtype == LS_DT_F32) return t->data;
    float *f = ls_alloc_aligned((size_t)t->numel * sizeof(float) + 1);
    if (!f) {
        lsx_fail(R, node, "cannot hold input %u as float32 (%" PRId64 " elements)", k, t->numel);
        return NULL;
    }
    *tmp = f;
    float scale;
    int32_t zp;
    qparams(d, &scale, &zp);
    switch (t->dtype) {
    case LS_DT_F16:
        for (int64_t i = 0; i < t->numel; i++) f[i] = ls_f16_to_f32(((const uint16_t *)t->data)[i]);
        break;
    case LS_DT_BF16:
        for (int64_t i = 0; i < t->numel; i++) f[i] = ls_bf16_to_f32(((const uint16_t *)t->data)[i]);
        break;
    case LS_DT_I8:
        if (d->datatype == LS_XNN_DT_QDINT8 && v->row_scale) {
            int64_t row = t->numel / (v->n_rows ? v->n_rows : 1);
            for (int64_t i = 0; i < t->numel; i++) {
                int64_t r = row ? i / row : 0;
                f[i] = ((float)((const int8_t *)t->data)[i] - (float)v->row_zp[r]) * v->row_scale[r];
            }
        } else {
            for (int64_t i = 0; i < t->numel; i++) f[i] = ((float)((const int8_t *)t->data)[i] - (float)zp) * scale;
        }
        break;
    case LS_DT_U8:
        for (int64_t i = 0; i < t->numel; i++) f[i] = ((float)((const uint8_t *)t->data)[i] - (float)zp) * scale;
        break;
    case LS_DT_I32:
        for (int64_t i = 0; i < t->numel; i++) f[i] = ((float)((const int32_t *)t->data)[i] - (float)zp) * scale;
        break;
    default:
        ls_free_aligned(f);
        *tmp = NULL;
        lsx_fail(R, node, "input %u is %s, which this node does not read", k, ls_dtype_name(t->dtype));
        return NULL;
    }
    return f;
}

void lsx_store_f32(lsx_run *R, uint32_t node, unsigned k, ls_tensor *out, const float *src)
{
    const ls_xnn_node *n = &R->g->nodes[node];
    const ls_xnn_value *d = lsx_def(R, n->out[k]);
    float scale;
    int32_t zp;
    qparams(d, &scale, &zp);
    int64_t count = out->numel;
    switch (out->dtype) {
    case LS_DT_F32:
        if ((const void *)src != out->data) memcpy(out->data, src, (size_t)count * sizeof(float));
        break;
    case LS_DT_F16:
        for (int64_t i = 0; i < count; i++) ((uint16_t *)out->data)[i] = ls_f32_to_f16(src[i]);
        break;
    case LS_DT_BF16:
        for (int64_t i = 0; i < count; i++) ((uint16_t *)out->data)[i] = ls_f32_to_bf16(src[i]);
        break;
    case LS_DT_I8:
    case LS_DT_U8:
    case LS_DT_I32: {
        double lo = out->dtype == LS_DT_I8 ? -128 : out->dtype == LS_DT_U8 ? 0 : -2147483648.0;
        double hi = out->dtype == LS_DT_I8 ? 127 : out->dtype == LS_DT_U8 ? 255 : 2147483647.0;
        float inv = scale != 0 ? 1.0f / scale : 0;
        for (int64_t i = 0; i < count; i++) {
            double q = (double)lsx_round_q(src[i] * inv) + zp;
            q = isnan(q) ? (double)zp : q < lo ? lo : q > hi ? hi : q;
            if (out->dtype == LS_DT_I8) ((int8_t *)out->data)[i] = (int8_t)q;
            else if (out->dtype == LS_DT_U8) ((uint8_t *)out->data)[i] = (uint8_t)q;
            else ((int32_t *)out->data)[i] = (int32_t)q;
        }
        break;
    }
    default: break;
    }
}

float *lsx_out_f32(lsx_run *R, uint32_t node, ls_tensor *out)
{
    if (!out) return NULL;
    if (out->dtype == LS_DT_F32) return out->data;
    float *o = ls_alloc_aligned((size_t)out->numel * sizeof(float) + 4);
    if (!o) lsx_fail(R, node, "out of memory for %lld float32 values", (long long)out->numel);
    return o;
}

void lsx_out_done(lsx_run *R, uint32_t node, ls_tensor *out, float *o)
{
    if ((void *)o == out->data) return;
    lsx_store_f32(R, node, 0, out, o);
    ls_free_aligned(o);
}

void lsx_out_drop(ls_tensor *out, float *o)
{
    if (o && (!out || (void *)o != out->data)) ls_free_aligned(o);
}

int lsx_float_io(lsx_run *R, uint32_t node, int ndim, const int64_t *dims, const float **x, void **tmp, ls_tensor **out,
                 float **o)
{
    *o = NULL;
    *out = NULL;
    if (!(*x = lsx_in_f32(R, node, 0, tmp))) return -1;
    *out = lsx_out(R, node, 0, ndim, dims);
    if (!(*o = lsx_out_f32(R, node, *out))) {
        ls_free_aligned(*tmp);
        *tmp = NULL;
        return -1;
    }
    return 0;
}

/* max with the lower bound, then min with the upper, as XNNPACK's clamp kernels do
 * (xnn_f32_vclamp_ukernel__scalar_u1, src/f32-vclamp/gen/: math_max_f32 then math_min_f32), so a
 * range whose min is above its max (which xnn_define_binary and xnn_define_unary let through)
 * gives the max; a NaN passes, as it did. */
void lsx_clamp(const ls_xnn_node *n, float *x, int64_t count)
{
    if (!n->has_min_max) return;
    float lo = n->out_min, hi = n->out_max;
    if (lo == -INFINITY && hi == INFINITY) return;
    for (int64_t i = 0; i < count; i++) {
        float v = x[i] < lo ? lo : x[i];
        x[i] = v > hi ? hi : v;
    }
}

void lsx_out_done_clamped(lsx_run *R, uint32_t node, ls_tensor *out, float *o)
{
    const ls_xnn_node *n = &R->g->nodes[node];
    const ls_xnn_value *d = lsx_def(R, n->out[0]);
    if (out->dtype != LS_DT_I8 || d->datatype != LS_XNN_DT_QINT8 || d->quant != LS_XNN_Q_PER_TENSOR) {
        lsx_clamp(n, o, out->numel);
        lsx_out_done(R, node, out, o);
        return;
    }
    lsx_out_done(R, node, out, o);
    int32_t lo, hi;
    lsx_q_bounds(n, d->scale, d->zero_point, &lo, &hi);
    int8_t *q = out->data;
    for (int64_t i = 0; i < out->numel; i++) q[i] = (int8_t)(q[i] < lo ? lo : q[i] > hi ? hi : q[i]);
}
