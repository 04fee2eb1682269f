/* Quantized values in the XNNPACK writer, as node_visitor.py's define_tensor and QuantParams
 * (backends/xnnpack/operators/quant_params.py) make them out of PT2E's quantize/dequantize:
 *  - a static dq → op → q pattern (taken whole by the partitioner) is one op on qint8 values:
 *    the dq's input is the op's input, the op's output takes the q's scale and zero point
 *    (XNNQuantizedTensorValue, PerTensorQuant), and the q itself writes nothing;
 *  - a quantize whose producer is not such an op, and a float consumer of a quantized value, are
 *    XNNConvert (quantize / dequantize) — an int8 input of the delegate takes the parameters of
 *    the dequantize that reads it;
 *  - a dequantize_per_channel (or per tensor) of an int8 constant used as a GEMM's weight is a
 *    quantized constant: qcint8 with its scales on the output channels' dim (per channel), or
 *    qint8; a float bias of a quantized GEMM becomes int32 at scale in_scale · w_scale
 *    (QuantParams.from_bias), qcint32 per channel;
 *  - dynamic quantization, choose_qparams → quantize.tensor → dequantize.tensor of a float x, is
 *    one XNNConvert of x to qdint8 (PerTokenDynamicQuant over all of x's dims: choose_qparams.tensor
 *    picks one scale for the tensor) read by the fully connected node (op_dynamic_quantize_ops.py). */
#include <math.h>
#include <stdlib.h>
#include <string.h>

#include "xnn_write.h"

static bool is_op(const ls_node *n, ls_op_id id) { return n && n->kind == LS_NODE_CALL && n->op && n->op->id == id; }

static double num_arg(const ls_node *n, unsigned k, double def)
{
    if (k >= n->nargs) return def;
    const ls_arg *a = &n->args[k];
    return a->kind == LS_ARG_FLOAT ? a->v.f : a->kind == LS_ARG_INT ? (double)a->v.i : def;
}

bool lsw_qparams(const ls_node *q, float *scale, int32_t *zp)
{
    if (!is_op(q, LS_OP_quantize_per_tensor) && !is_op(q, LS_OP_dequantize_per_tensor)) return false;
    *scale = (float)num_arg(q, 1, 1);
    *zp = (int32_t)num_arg(q, 2, 0);
    /* int8 only: quint8 and others are not what XNNPACK's quantizer makes here */
    const ls_arg *dt = q->nargs > 5 ? &q->args[5] : NULL;
    return dt && dt->kind == LS_ARG_DTYPE && dt->v.i == LS_DT_I8;
}

static bool quant_aware(const ls_node *p)
{
    if (!p || p->kind != LS_NODE_CALL || !p->op) return false;
    switch (p->op->id) {
    case LS_OP_linear: case LS_OP_addmm: case LS_OP_mm: case LS_OP_convolution: case LS_OP_add_Tensor:
    case LS_OP_sub_Tensor: case LS_OP_mul_Tensor: case LS_OP_relu: case LS_OP_hardtanh: case LS_OP_clamp:
    case LS_OP_cat: case LS_OP_permute_copy: case LS_OP_slice_copy_Tensor: case LS_OP_mean_dim: return true;
    default: return false;
    }
}

/* The activation input of an op (the GEMMs' "act"), or every tensor input of the others: are they all dq nodes? */
static bool inputs_are_dq(lsw *W, const ls_node *p)
{
    ls_op_id id = p->op->id;
    const char *act = id == LS_OP_linear || id == LS_OP_convolution ? "input"
                      : id == LS_OP_addmm                           ? "mat1"
                      : id == LS_OP_mm                              ? "self"
                                                                    : NULL;
    bool any = false;
    for (uint16_t k = 0; k < p->nargs; k++) {
        const ls_arg *a = &p->args[k];
        if (act && (!a->name || strcmp(a->name, act) != 0)) continue;
        uint32_t ids[64];
        uint32_t n = 0;
        if (a->kind == LS_ARG_NODE) ids[n++] = a->v.node;
        else if (a->kind == LS_ARG_NODES)
            for (uint32_t i = 0; i < a->n && n < 64; i++) ids[n++] = a->v.nodes[i];
        for (uint32_t i = 0; i < n; i++) {
            const ls_node *d = lsw_nd(W, ids[i]);
            int32_t dp = d ? ls_program_pos(W->p, d->id) : -1;
            if (dp >= 0 && W->alias[dp] >= 0) d = W->p->nodes[W->alias[dp]];
            if (!is_op(d, LS_OP_dequantize_per_tensor)) return false;
            any = true;
        }
    }
    return any;
}

void lsw_plan_quant(lsw *W)
{
    const ls_program *p = W->p;
    for (uint32_t i = 0; i < p->n_nodes; i++) W->out_q[i] = -1;
    /* in graph order, so an op whose inputs are the quantized outputs of earlier ones is seen after them */
    for (uint32_t i = 0; i < p->n_nodes; i++) {
        const ls_node *q = p->nodes[i];
        float s;
        int32_t z;
        if (!is_op(q, LS_OP_quantize_per_tensor) || !lsw_qparams(q, &s, &z) || q->args[0].kind != LS_ARG_NODE) continue;
        int32_t src = ls_program_pos(p, q->args[0].v.node);
        if (src < 0) continue;
        if (W->alias[src] >= 0) src = W->alias[src]; /* through a fused relu */
        const ls_node *op = p->nodes[src];
        uint32_t users;
        ls_program_users(p, (uint32_t)src, &users);
        if (!quant_aware(op) || W->out_q[src] >= 0) continue;
        /* its only user is the q (or the fused activation, whose only user is the q) */
        if (users != 1 && !(W->fused[src] && users == 1)) continue;
        if (!inputs_are_dq(W, op)) continue;
        W->out_q[src] = (int32_t)i;
        W->alias[i] = src;
    }
}

static bool quantized(uint8_t dt) { return dt == LS_XNN_DT_QINT8 || dt == LS_XNN_DT_QUINT8 || dt == LS_XNN_DT_QDINT8; }

uint32_t lsw_get_f(lsw *W, uint32_t id, int lay)
{
    uint32_t v = lsw_get(W, id, lay);
    if (v == LSW_NONE || !quantized(W->values.v[v].datatype)) return v;
    int32_t pos = ls_program_pos(W->p, id);
    if (W->alias[pos] >= 0) pos = W->alias[pos];
    if (W->fval[lay][pos]) return W->fval[lay][pos] - 1;
    ls_xnn_value q = W->values.v[v];
    int64_t dims[LS_XNN_MAX_DIMS];
    for (unsigned i = 0; i < q.ndim; i++) dims[i] = q.dims[i];
    uint32_t f = lsw_value(W, LS_XNN_DT_FP32, q.ndim, dims);
    ls_xnn_node *c = lsw_node(W, LS_XNN_Convert, W->p->nodes[pos]);
    c->n_in = c->n_out = 1;
    c->in[0] = v;
    c->out[0] = f;
    W->fval[lay][pos] = f + 1;
    return f;
}

/* A quantized value with per-tensor parameters, dims of the node's tensor in layout lay. */
static uint32_t q_value(lsw *W, const ls_node *of, int lay, uint8_t dt, float scale, int32_t zp)
{
    const ls_tmeta *m = ls_node_tval(of);
    int64_t dims[LS_XNN_MAX_DIMS];
    for (int i = 0; i < m->ndim; i++) dims[i] = m->sizes[i];
    if (lay == LSW_NHWC && m->ndim == 4) dims[1] = m->sizes[2], dims[2] = m->sizes[3], dims[3] = m->sizes[1];
    uint32_t v = lsw_value(W, dt, m->ndim, dims);
    ls_xnn_value *x = &W->values.v[v];
    if (dt == LS_XNN_DT_QDINT8) {
        /* per token, whatever the Edge graph's choose_qparams: quant_params.py's
         * _from_dynamic_input_node writes num_nonbatch_dims = 1, the only count defineTensor takes */
        x->quant = LS_XNN_Q_PER_TOKEN_DYNAMIC;
        x->num_nonbatch_dims = 1;
    } else {
        x->quant = LS_XNN_Q_PER_TENSOR;
        x->scale = scale;
        x->zero_point = zp;
    }
    return v;
}

int lsw_emit_quant(lsw *W, uint32_t pos)
{
    const ls_node *n = W->p->nodes[pos];
    float s;
    int32_t z;
    switch (n->op->id) {
    case LS_OP_dequantize_per_tensor: { /* the quantized value itself: its readers take it as it is */
        if (n->args[0].kind != LS_ARG_NODE) return lsw_fail(W, n, "no input");
        int lay = lsw_native(W, n->args[0].v.node);
        uint32_t v = lay < 0 ? LSW_NONE : lsw_get(W, n->args[0].v.node, lay);
        if (v == LSW_NONE) return -1;
        if (!quantized(W->values.v[v].datatype)) return lsw_needs(W, n, "a dequantize of a value that is not quantized");
        lsw_set(W, n, v, lay);
        return 0;
    }
    case LS_OP_quantize_per_tensor: { /* not taken into its producer: XNNConvert to qint8 */
        if (!lsw_qparams(n, &s, &z)) return lsw_needs(W, n, "quantization to a type other than int8");
        int lay = lsw_native(W, n->args[0].v.node);
        uint32_t x = lay < 0 ? LSW_NONE : lsw_get_f(W, n->args[0].v.node, lay);
        if (x == LSW_NONE) return -1;
        uint32_t q = q_value(W, n, lay, LS_XNN_DT_QINT8, s, z);
        ls_xnn_node *c = lsw_node(W, LS_XNN_Convert, n);
        c->n_in = c->n_out = 1, c->in[0] = x, c->out[0] = q;
        lsw_set(W, n, q, lay);
        return 0;
    }
    case LS_OP_dequantize_per_tensor_tensor: { /* dynamic: choose_qparams → q.tensor → dq.tensor of x */
        const ls_node *q = n->args[0].kind == LS_ARG_NODE ? lsw_nd(W, n->args[0].v.node) : NULL;
        if (!is_op(q, LS_OP_quantize_per_tensor_tensor) || q->args[0].kind != LS_ARG_NODE)
            return lsw_needs(W, n, "a dequantize.tensor that is not of a quantize.tensor (dynamic quantization)");
        uint32_t xid = q->args[0].v.node;
        int lay = lsw_native(W, xid);
        uint32_t x = lay < 0 ? LSW_NONE : lsw_get_f(W, xid, lay);
        if (x == LSW_NONE) return -1;
        uint32_t d = q_value(W, n, lay, LS_XNN_DT_QDINT8, 0, 0);
        ls_xnn_node *c = lsw_node(W, LS_XNN_Convert, n);
        c->n_in = c->n_out = 1, c->in[0] = x, c->out[0] = d;
        lsw_set(W, n, d, lay);
        return 0;
    }
    case LS_OP_quantize_per_tensor_tensor:
    case LS_OP_choose_qparams_tensor:
        return lsw_needs(W, n, "dynamic quantization's parameters are only read by its dequantize");
    case LS_OP_dequantize_per_channel: return lsw_needs(W, n, "a per-channel dequantize that is not a GEMM's weight");
    default: return 1;
    }
}

/* The dequantize (per channel or per tensor) of an int8 constant, or NULL. */
static const ls_node *weight_dq(lsw *W, uint32_t w, ls_tensor **q)
{
    const ls_node *d = lsw_nd(W, w);
    if (!(is_op(d, LS_OP_dequantize_per_channel) || is_op(d, LS_OP_dequantize_per_tensor)) || d->args[0].kind != LS_ARG_NODE)
        return NULL;
    *q = lsw_data(W, d->args[0].v.node);
    return *q && (*q)->dtype == LS_DT_I8 ? d : NULL;
}

uint32_t lsw_quant_weight(lsw *W, const ls_node *n, uint32_t w, int conv_kind, bool *is_q, float **scales,
                          uint32_t *n_scales)
{
    *is_q = false;
    *scales = NULL;
    *n_scales = 0;
    ls_tensor *q;
    const ls_node *d = weight_dq(W, w, &q);
    if (!d) return LSW_NONE;
    *is_q = true;
    bool per_channel = is_op(d, LS_OP_dequantize_per_channel);
    int64_t C = q->sizes[0];
    float *sc = ls_malloc(sizeof *sc * (size_t)(C + 1));
    if (per_channel) {
        ls_tensor *st = d->args[1].kind == LS_ARG_NODE ? lsw_data(W, d->args[1].v.node) : NULL;
        ls_tensor *zt = d->nargs > 2 && d->args[2].kind == LS_ARG_NODE ? lsw_data(W, d->args[2].v.node) : NULL;
        if (!st || st->numel != C || num_arg(d, 3, 0) != 0) {
            free(sc);
            lsw_needs(W, n, "per-channel weight scales that are not a constant over dim 0");
            return LSW_NONE;
        }
        for (int64_t i = 0; zt && i < zt->numel; i++)
            if (ls_tensor_get_i64(zt, i) != 0) {
                free(sc);
                lsw_needs(W, n, "weight zero points other than 0 (XNNPACK's qc8 weights are symmetric)");
                return LSW_NONE;
            }
        for (int64_t i = 0; i < C; i++) sc[i] = (float)ls_tensor_get_f64(st, i);
    } else {
        float s0;
        int32_t z0;
        if (!lsw_qparams(d, &s0, &z0) || z0 != 0) {
            free(sc);
            lsw_needs(W, n, "a per-tensor weight with zero point other than 0");
            return LSW_NONE;
        }
        for (int64_t i = 0; i < C; i++) sc[i] = s0;
    }
    /* the data in the node's filter layout (xnn_write_ops.c's for float weights): linear keeps
     * [N, K]; conv makes OHWI, depthwise [1, KH, KW, O] */
    ls_tensor *t = q, *own = NULL;
    int channel_dim = 0;
    if (conv_kind) {
        int64_t O = q->sizes[0], gi = q->sizes[1], KH = q->sizes[2], KW = q->sizes[3];
        bool dw = conv_kind == 2;
        int64_t fd[4] = {dw ? 1 : O, KH, KW, dw ? O : gi};
        own = ls_tensor_alloc(LS_DT_I8, 4, fd);
        for (int64_t o = 0; o < O; o++)
            for (int64_t i = 0; i < gi; i++)
                for (int64_t ky = 0; ky < KH; ky++)
                    for (int64_t kx = 0; kx < KW; kx++)
                        ((int8_t *)own->data)[dw ? (ky * KW + kx) * O + o : ((o * KH + ky) * KW + kx) * gi + i] =
                            ((const int8_t *)q->data)[((o * gi + i) * KH + ky) * KW + kx];
        t = own;
        channel_dim = dw ? 3 : 0;
    }
    uint32_t v = lsw_constant(W, t);
    ls_tensor_unref(own);
    if (v == UINT32_MAX) {
        free(sc);
        return LSW_NONE;
    }
    ls_xnn_value *x = &W->values.v[v];
    x->datatype = per_channel ? LS_XNN_DT_QCINT8 : LS_XNN_DT_QINT8;
    if (per_channel) {
        x->quant = LS_XNN_Q_PER_CHANNEL;
        x->channel_dim = channel_dim;
        x->n_scales = (uint32_t)C;
        x->scales = ls_malloc(sizeof *x->scales * (size_t)C);
        memcpy(x->scales, sc, sizeof *sc * (size_t)C);
    } else {
        x->quant = LS_XNN_Q_PER_TENSOR;
        x->scale = sc[0];
    }
    *scales = sc;
    *n_scales = (uint32_t)C;
    return v;
}

uint32_t lsw_quant_bias(lsw *W, const ls_node *n, uint32_t b, float in_scale, const float *w_scales, uint32_t n_w)
{
    ls_tensor *bt = lsw_data(W, b);
    if (!bt || bt->numel != n_w) {
        lsw_needs(W, n, "the bias of a quantized GEMM is not a float constant of its output channels");
        return LSW_NONE;
    }
    ls_tensor *q = ls_tensor_alloc(LS_DT_I32, 1, (const int64_t[]){n_w});
    bool per_channel = false;
    for (uint32_t i = 0; i < n_w; i++) {
        double s = (double)in_scale * w_scales[i];
        double v = s ? nearbyint(ls_tensor_get_f64(bt, i) / s) : 0;
        ((int32_t *)q->data)[i] = (int32_t)(v < -2147483648.0 ? -2147483648.0 : v > 2147483647.0 ? 2147483647.0 : v);
        per_channel |= w_scales[i] != w_scales[0];
    }
    uint32_t v = lsw_constant(W, q);
    ls_tensor_unref(q);
    if (v == UINT32_MAX) return LSW_NONE;
    ls_xnn_value *x = &W->values.v[v];
    if (per_channel) {
        x->datatype = LS_XNN_DT_QCINT32;
        x->quant = LS_XNN_Q_PER_CHANNEL;
        x->n_scales = n_w;
        x->scales = ls_malloc(sizeof *x->scales * n_w);
        for (uint32_t i = 0; i < n_w; i++) x->scales[i] = in_scale * w_scales[i];
    } else {
        x->datatype = LS_XNN_DT_QINT32;
        x->quant = LS_XNN_Q_PER_TENSOR;
        x->scale = in_scale * w_scales[0];
    }
    return v;
}
