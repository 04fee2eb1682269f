/* Weights of the XNNPACK nodes that have them, packed once at init (as XNNPACK packs them when
 * it creates its runtime): float32 filters transposed for ls_sgemm_ex, int8 filters kept as
 * [output channel][input] rows for ls_qgemm_s8 with their row sums, int4 filters widened, and
 * the per-channel (or per-block) scales and the bias each path needs.
 *
 * The kinds are those XNNCompiler.cpp's defineTensor accepts: per-tensor qint8/qint32, per-
 * channel qcint8/qcint32/qcint4 (zero point 8 for int4, 0 otherwise) and blockwise qbint4
 * (zero point 8, one scale per group_size inputs of each output channel). Two int4 values
 * share a byte, the even one in the low nibble (operators/convert_to_qc4w.cpp). */
#include <math.h>
#include <stdlib.h>
#include <string.h>

#include "gemm.h"
#include "xnn_internal.h"

void lsx_prep_free(lsx_prep *p)
{
    ls_free_aligned(p->w);
    ls_free_aligned(p->w8);
    for (int64_t i = 0; i < p->n_wq; i++) ls_qgemm_packed_free(p->wq[i]);
    free(p->wq);
    free(p->wsum);
    free(p->wscale);
    free(p->bias);
    free(p->bias32);
    *p = (lsx_prep){0};
}

/* Element i (row-major over the value's dims) of a constant weight as an integer, int4 widened
 * with its zero point removed. */
static int32_t q_at(const ls_xnn_value *d, const ls_tensor *t, int64_t row, int64_t col, int64_t cols)
{
    switch (d->datatype) {
    case LS_XNN_DT_QCINT4:
    case LS_XNN_DT_QBINT4: {
        uint8_t byte = ((const uint8_t *)t->data)[row * ((cols + 1) / 2) + col / 2];
        return (int32_t)((col & 1) ? byte >> 4 : byte & 15) - 8;
    }
    case LS_XNN_DT_QUINT8: return ((const uint8_t *)t->data)[row * cols + col];
    default: return ((const int8_t *)t->data)[row * cols + col];
    }
}

static bool is_quantized_weight(uint8_t dt)
{
    return dt == LS_XNN_DT_QINT8 || dt == LS_XNN_DT_QCINT8 || dt == LS_XNN_DT_QCINT4 || dt == LS_XNN_DT_QBINT4 ||
           dt == LS_XNN_DT_QUINT8;
}

float lsx_block_scale(const ls_xnn_value *d, int64_t at)
{
    float s = d->scales && at >= 0 && at < d->n_scales ? d->scales[at] : 1.0f;
    if (d->scales_bf16) return s; /* read as bf16: exact */
    /* convertF32TensorToBF16: scaled so that it rounds when truncated, then the low half dropped */
    float adjusted = s * 1.00389105f;
    uint32_t bits;
    memcpy(&bits, &adjusted, 4);
    bits &= 0xffff0000u;
    memcpy(&s, &bits, 4);
    return s;
}

/* The scale of element (n, k) of a quantized weight whose output channel is the row n. */
static float w_scale(const ls_xnn_value *d, int64_t n, int64_t k)
{
    switch (d->quant) {
    case LS_XNN_Q_PER_TENSOR: return d->scale;
    case LS_XNN_Q_PER_CHANNEL: return d->scales && n < d->n_scales ? d->scales[n] : 1.0f;
    case LS_XNN_Q_PER_CHANNEL_GROUP: {
        int64_t groups = d->dims[1] / (uint32_t)d->group_size;
        return lsx_block_scale(d, n * groups + k / d->group_size);
    }
    default: return 1.0f;
    }
}

/* Element (row, col) of a weight with `cols` columns as a float; ch and kin say which scale
 * (output channel, and input index for blockwise) applies. */
static float w_float(const ls_xnn_value *d, const ls_tensor *t, int64_t row, int64_t col, int64_t cols, int64_t ch,
                     int64_t kin)
{
    switch (t->dtype) {
    case LS_DT_F32: return ((const float *)t->data)[row * cols + col];
    case LS_DT_F16: return ls_f16_to_f32(((const uint16_t *)t->data)[row * cols + col]);
    case LS_DT_BF16: return ls_bf16_to_f32(((const uint16_t *)t->data)[row * cols + col]);
    default: {
        int32_t zp = d->quant == LS_XNN_Q_PER_TENSOR ? d->zero_point : 0;
        return (float)(q_at(d, t, row, col, cols) - zp) * w_scale(d, ch, kin);
    }
    }
}

static int bias_of(lsx_run *R, uint32_t node, uint32_t id, int64_t N, bool int32_wanted, lsx_prep *p)
{
    if (id == LS_XNN_INVALID_ID) return 0;
    const ls_xnn_value *bd = lsx_def(R, id);
    lsx_rval *bv = lsx_val(R, id);
    if (!bd->constant_idx || !bv->t) return lsx_fail(R, node, "the bias (value %u) is not a constant", id);
    if (bv->t->numel != N) return lsx_fail(R, node, "the bias has %lld elements for %lld outputs", (long long)bv->t->numel, (long long)N);
    if (int32_wanted) {
        if (bv->t->dtype != LS_DT_I32) return lsx_fail(R, node, "a quantized node's bias is %s, not int32", ls_xnn_datatype_name(bd->datatype));
        p->bias32 = ls_malloc(sizeof *p->bias32 * (size_t)N);
        memcpy(p->bias32, bv->t->data, sizeof *p->bias32 * (size_t)N);
        return 0;
    }
    p->bias = ls_malloc(sizeof *p->bias * (size_t)N);
    for (int64_t i = 0; i < N; i++) {
        if (bv->t->dtype == LS_DT_I32) {
            float s = bd->quant == LS_XNN_Q_PER_CHANNEL && bd->scales ? bd->scales[i] : bd->scale;
            p->bias[i] = (float)((const int32_t *)bv->t->data)[i] * s;
        } else {
            p->bias[i] = (float)ls_tensor_get_f64(bv->t, i);
        }
    }
    return 0;
}

/* Packs a weight seen as [N][K] (row = output channel; k_major: stored [K][N]): float32 [K][N]
 * for float inputs, or int8 rows with sums and scales for quantized ones. */
static int pack(lsx_run *R, uint32_t node, const ls_xnn_value *wd, const ls_tensor *wt, int64_t N, int64_t K,
                bool k_major, bool quantized_input, int64_t n_groups, lsx_prep *p)
{
    p->N = N;
    p->K = K;
    if (!quantized_input) {
        p->w = ls_alloc_aligned((size_t)(N * K) * sizeof(float) + 4);
        if (!p->w) return lsx_fail(R, node, "out of memory packing the weights");
        for (int64_t n = 0; n < N; n++)
            for (int64_t k = 0; k < K; k++)
                p->w[k * N + n] = k_major ? w_float(wd, wt, k, n, N, n, k) : w_float(wd, wt, n, k, K, n, k);
        return 0;
    }
    if (!is_quantized_weight(wd->datatype))
        return lsx_fail(R, node, "a quantized input with %s weights", ls_xnn_datatype_name(wd->datatype));
    if (k_major && (wd->datatype == LS_XNN_DT_QCINT4 || wd->datatype == LS_XNN_DT_QBINT4))
        return ls_fail_needs(R->err, "%s: xnodes[%u]: transposed int4 weights are not supported", R->name, node);
    p->w8 = ls_alloc_aligned((size_t)(N * K) + 64);
    p->wsum = ls_malloc(sizeof *p->wsum * (size_t)(N + 1));
    if (!p->w8) return lsx_fail(R, node, "out of memory packing the weights");
    p->wzp = wd->quant == LS_XNN_Q_PER_TENSOR ? wd->zero_point : 0;
    for (int64_t n = 0; n < N; n++) {
        int32_t s = 0;
        for (int64_t k = 0; k < K; k++) {
            int32_t q = k_major ? q_at(wd, wt, k, n, N) : q_at(wd, wt, n, k, K);
            int32_t w = q - p->wzp;
            if (w < -128 || w > 127) /* a uint8 weight with zero point: keep it exact in int8 */
                return ls_fail_needs(R->err, "%s: xnodes[%u]: weight %d does not fit int8 after its zero point", R->name, node, w);
            p->w8[n * K + k] = (int8_t)w;
            s += w;
        }
        p->wsum[n] = s;
    }
    if (wd->quant != LS_XNN_Q_PER_CHANNEL_GROUP) { /* packed once, in per-group slices of groups rows */
        int64_t groups = n_groups > 0 ? n_groups : 1, rows = N / groups;
        p->wq = ls_calloc((size_t)groups, sizeof *p->wq);
        p->n_wq = groups;
        for (int64_t g = 0; g < groups; g++) p->wq[g] = ls_qgemm_pack(rows, K, p->w8 + g * rows * K, K);
    }
    if (wd->quant == LS_XNN_Q_PER_CHANNEL_GROUP) {
        p->group = wd->group_size;
        int64_t groups = K / p->group;
        p->wscale = ls_malloc(sizeof *p->wscale * (size_t)(N * groups + 1));
        for (int64_t i = 0; i < N * groups; i++) p->wscale[i] = lsx_block_scale(wd, i);
    } else {
        p->wscale = ls_malloc(sizeof *p->wscale * (size_t)(N + 1));
        for (int64_t n = 0; n < N; n++) p->wscale[n] = w_scale(wd, n, 0);
    }
    return 0;
}

#define XNN_FLAG_TRANSPOSE_WEIGHTS 0x1u

int lsx_prepare_weights(lsx_run *R, uint32_t node)
{
    const ls_xnn_node *n = &R->g->nodes[node];
    lsx_prep *p = &R->prep[node];
    bool fc = n->type == LS_XNN_FullyConnected;
    bool conv = n->type == LS_XNN_Conv2d || n->type == LS_XNN_DepthwiseConv2d || n->type == LS_XNN_ConvTranspose2d;
    if (!fc && !conv) return 0;
    const ls_xnn_value *in = lsx_def(R, n->in[0]), *wd = lsx_def(R, n->in[1]);
    lsx_rval *wv = lsx_val(R, n->in[1]);
    if (!wd->constant_idx || !wv->t)
        return ls_fail_needs(R->err, "%s: xnodes[%u] (%s): weights computed at run time (value %u) are not supported",
                             R->name, node, ls_xnn_node_type_name(n->type), n->in[1]);
    bool q_in = in->datatype == LS_XNN_DT_QINT8 || in->datatype == LS_XNN_DT_QUINT8 || in->datatype == LS_XNN_DT_QDINT8 ||
                in->dq_datatype == LS_XNN_DT_QINT8;
    bool dynamic = in->datatype == LS_XNN_DT_QDINT8 || in->dq_datatype == LS_XNN_DT_QINT8;
    if (fc) {
        if (wd->ndim != 2) return lsx_fail(R, node, "the filter is %u-d, not [output, input]", wd->ndim);
        if (n->flags & ~XNN_FLAG_TRANSPOSE_WEIGHTS)
            return ls_fail_needs(R->err, "%s: xnodes[%u] (XNNFullyConnected): flags 0x%x are not supported", R->name, node,
                                 n->flags);
        bool kmaj = n->flags & XNN_FLAG_TRANSPOSE_WEIGHTS; /* filter [K, N] */
        int64_t N = kmaj ? wd->dims[1] : wd->dims[0], K = kmaj ? wd->dims[0] : wd->dims[1];
        if (pack(R, node, wd, wv->t, N, K, kmaj, q_in, 1, p) != 0) return -1;
        return bias_of(R, node, n->in[2], N, q_in && !dynamic, p);
    }
    /* convolutions: XNNPACK's filter layouts. Conv2d and ConvTranspose2d [O, KH, KW, I/groups]
     * (rows are output channels); DepthwiseConv2d [1, KH, KW, C·M] (kept as floats [KH·KW][C·M]) */
    if (wd->ndim != 4) return lsx_fail(R, node, "the filter is %u-d, not 4-d", wd->ndim);
    if (n->flags) return ls_fail_needs(R->err, "%s: xnodes[%u] (%s): flags 0x%x are not supported", R->name, node,
                                       ls_xnn_node_type_name(n->type), n->flags);
    const __typeof__(n->p.conv) *c = &n->p.conv;
    int64_t O = (int64_t)c->groups * c->group_out;
    if (n->type == LS_XNN_DepthwiseConv2d) {
        int64_t taps = (int64_t)wd->dims[1] * wd->dims[2], CM = wd->dims[3];
        if (wd->dims[0] != 1 || CM != O) return lsx_fail(R, node, "a depthwise filter is not [1, KH, KW, %lld]", (long long)O);
        /* as floats [taps][C·M], the channel's scale for a quantized filter */
        p->w = ls_alloc_aligned((size_t)(taps * CM) * sizeof(float) + 4);
        if (!p->w) return lsx_fail(R, node, "out of memory packing the weights");
        for (int64_t t = 0; t < taps; t++)
            for (int64_t ch = 0; ch < CM; ch++) p->w[t * CM + ch] = w_float(wd, wv->t, t, ch, CM, ch, 0);
        p->N = CM;
        p->K = taps;
        return bias_of(R, node, n->in[2], O, false, p);
    }
    if (wd->dims[0] != (uint32_t)O || wd->dims[3] != c->group_in || wd->dims[1] != c->kernel_h || wd->dims[2] != c->kernel_w)
        return lsx_fail(R, node, "the filter [%u, %u, %u, %u] does not match %u groups of %u->%u channels, kernel %ux%u",
                        wd->dims[0], wd->dims[1], wd->dims[2], wd->dims[3], c->groups, c->group_in, c->group_out,
                        c->kernel_h, c->kernel_w);
    int64_t K = (int64_t)c->kernel_h * c->kernel_w * c->group_in;
    bool int_path = q_in && n->type == LS_XNN_Conv2d && !dynamic;
    if (pack(R, node, wd, wv->t, O, K, false, int_path, c->groups, p) != 0) return -1;
    return bias_of(R, node, n->in[2], O, int_path, p);
}
