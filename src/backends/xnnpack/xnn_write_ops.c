/* The XNNPACK writer's nodes: one Edge op to one (or a few) xnodes, as the node visitors of
 * backends/xnnpack/operators/ serialize them (op_add.py, op_linear.py, op_conv2d.py,
 * op_permute.py, op_slice_copy.py, op_cat.py, op_softmax.py, op_mean_dim.py, op_square.py, ...).
 * Layouts and fusion come from xnn_write.c. */
#include <math.h>
#include <stdlib.h>
#include <string.h>

#include "xnn_write.h"

static uint32_t arg_node(const ls_node *n, const char *name)
{
    const ls_arg *a = ls_node_arg(n, name);
    return a && a->kind == LS_ARG_NODE ? a->v.node : 0;
}

static bool arg_num(const ls_node *n, const char *name, double *v)
{
    const ls_arg *a = ls_node_arg(n, name);
    if (!a) return false;
    if (a->kind == LS_ARG_FLOAT) return *v = a->v.f, true;
    if (a->kind == LS_ARG_INT || a->kind == LS_ARG_BOOL) return *v = a->kind == LS_ARG_BOOL ? a->v.b : (double)a->v.i, true;
    return false;
}

static int64_t arg_int(const ls_node *n, const char *name, int64_t def)
{
    double v;
    return arg_num(n, name, &v) ? (int64_t)v : def;
}

static int ints_of(const ls_node *n, const char *name, int64_t *out, int cap)
{
    const ls_arg *a = ls_node_arg(n, name);
    if (!a) return -1;
    if (a->kind == LS_ARG_INT) return out[0] = a->v.i, 1;
    if (a->kind != LS_ARG_INTS || (int)a->n > cap) return -1;
    for (uint32_t i = 0; i < a->n; i++) out[i] = a->v.ints[i];
    return (int)a->n;
}

/* The node's output value in layout lay (dims permuted for NHWC). */
static uint32_t out_value(lsw *W, const ls_node *n, int lay)
{
    const ls_tmeta *m = ls_node_tval(n);
    uint8_t dt = lsw_datatype(m);
    int32_t pos = ls_program_pos(W->p, n->id);
    float qs = 0;
    int32_t qz = 0;
    bool q = pos >= 0 && W->out_q[pos] >= 0 && lsw_qparams(W->p->nodes[W->out_q[pos]], &qs, &qz);
    if (q) dt = LS_XNN_DT_QINT8; /* the q after it: the op gives its quantized output */
    if (!dt) {
        lsw_needs(W, n, "a %s result: XNNPACK values here are float32 or float16", m ? ls_dtype_name(m->dtype) : "non-tensor");
        return LSW_NONE;
    }
    int64_t dims[LS_XNN_MAX_DIMS];
    if (m->ndim > LS_XNN_MAX_DIMS) {
        lsw_needs(W, n, "%d dimensions, XNNPACK takes at most 6", m->ndim);
        return LSW_NONE;
    }
    for (int i = 0; i < m->ndim; i++) dims[i] = m->sizes[i];
    if (lay == LSW_NHWC) dims[1] = m->sizes[2], dims[2] = m->sizes[3], dims[3] = m->sizes[1];
    uint32_t v = lsw_value(W, dt, m->ndim, dims);
    if (q) W->values.v[v].quant = LS_XNN_Q_PER_TENSOR, W->values.v[v].scale = qs, W->values.v[v].zero_point = qz;
    lsw_set(W, n, v, lay);
    return v;
}

/* An input of n: quantized as it is when n gives a quantized output (the static pattern), else float. */
static uint32_t in_get(lsw *W, const ls_node *n, uint32_t id, int lay)
{
    int32_t pos = ls_program_pos(W->p, n->id);
    return pos >= 0 && W->out_q[pos] >= 0 ? lsw_get(W, id, lay) : lsw_get_f(W, id, lay);
}

static int32_t pos_of(lsw *W, const ls_node *n) { return ls_program_pos(W->p, n->id); }

/* The activation fused into n (FuseActivationPass), as its output_min_max. */
static void fused_clamp(lsw *W, const ls_node *n, ls_xnn_node *x)
{
    int32_t p = pos_of(W, n);
    if (p >= 0 && W->fused[p]) {
        x->has_min_max = true;
        x->out_min = W->fuse_min[p];
        x->out_max = W->fuse_max[p];
    }
}

/* A Python scalar operand as a constant [1] of the op's type (lift_constant_scalar_operands_pass). */
static uint32_t scalar_value(lsw *W, const ls_node *n, double v)
{
    const ls_tmeta *m = ls_node_tval(n);
    int64_t one = 1;
    ls_tensor *t = ls_tensor_alloc(m && m->dtype == LS_DT_F16 ? LS_DT_F16 : LS_DT_F32, 1, &one);
    ls_tensor_set_f64(t, 0, v);
    uint32_t id = lsw_constant(W, t);
    ls_tensor_unref(t);
    return id == UINT32_MAX ? LSW_NONE : id;
}

static bool four_d(lsw *W, uint32_t id)
{
    const ls_tmeta *m = ls_node_tval(lsw_nd(W, id));
    return m && m->ndim == 4;
}

/* An elementwise node: NHWC when all its tensor inputs are, or some are and all are 4-d. */
static int elementwise(lsw *W, const ls_node *n, uint8_t type, const uint32_t *ids, unsigned k, const double *scalar)
{
    bool any = false, all = true, all4 = true;
    for (unsigned i = 0; i < k; i++) {
        int lay = lsw_native(W, ids[i]);
        if (lay < 0) return -1;
        any |= lay == LSW_NHWC;
        all &= lay == LSW_NHWC;
        all4 &= four_d(W, ids[i]);
    }
    int lay = any && (all || all4) ? LSW_NHWC : LSW_NCHW;
    uint32_t in[2];
    for (unsigned i = 0; i < k; i++)
        if ((in[i] = in_get(W, n, ids[i], lay)) == LSW_NONE) return -1;
    if (scalar && W->out_q[ls_program_pos(W->p, n->id)] >= 0) return lsw_needs(W, n, "a Python scalar in a quantized op");
    if (scalar && (in[k] = scalar_value(W, n, *scalar)) == LSW_NONE) return -1;
    uint32_t out = out_value(W, n, lay);
    if (out == LSW_NONE) return -1;
    ls_xnn_node *x = lsw_node(W, type, n);
    x->n_in = (uint8_t)(k + (scalar != NULL));
    memcpy(x->in, in, sizeof in[0] * x->n_in);
    x->n_out = 1;
    x->out[0] = out;
    return 0;
}

static int binary(lsw *W, const ls_node *n, uint8_t type)
{
    double alpha;
    if (arg_num(n, "alpha", &alpha) && alpha != 1) return lsw_needs(W, n, "alpha=%g (XNNPACK adds with alpha 1)", alpha);
    uint32_t a = arg_node(n, "self"), b = arg_node(n, "other");
    double s;
    int rc;
    if (b) rc = elementwise(W, n, type, (uint32_t[]){a, b}, 2, NULL);
    else if (arg_num(n, "other", &s)) rc = elementwise(W, n, type, &a, 1, &s);
    else return lsw_fail(W, n, "no operands");
    if (rc == 0) fused_clamp(W, n, &W->nodes.v[W->nodes.n - 1]);
    return rc;
}

static int unary(lsw *W, const ls_node *n, uint8_t type)
{
    uint32_t x = n->nargs && n->args[0].kind == LS_ARG_NODE ? n->args[0].v.node : 0;
    if (!x) return lsw_fail(W, n, "no tensor input");
    return elementwise(W, n, type, &x, 1, NULL); /* elementwise reads floats unless n gives a quantized output */
}

/* relu (unfused) and hardtanh: XNNClamp (op_relu.py, op_hardtanh.py); clamp too (op_clamp.py). */
static int clamp(lsw *W, const ls_node *n, double lo, double hi)
{
    if (unary(W, n, LS_XNN_Clamp) != 0) return -1;
    ls_xnn_node *x = &W->nodes.v[W->nodes.n - 1];
    x->has_min_max = true;
    x->out_min = (float)lo;
    x->out_max = (float)hi;
    return 0;
}

/* linear, addmm, mm with a constant weight: XNNFullyConnected, filter [N, K] (op_linear.py;
 * convert_to_linear.py turns addmm(b, x, wᵀ) and mm(x, wᵀ) into linear). */
/* A float constant bias as a value (LS_XNN_INVALID_ID when there is none). */
static int float_bias(lsw *W, const ls_node *n, uint32_t b, uint32_t *bias)
{
    *bias = LS_XNN_INVALID_ID;
    if (!b) return 0;
    ls_tensor *bt = lsw_data(W, b);
    if (!bt || bt->ndim != 1) return lsw_needs(W, n, "the bias is not a constant vector");
    return (*bias = lsw_constant(W, bt)) == UINT32_MAX ? -1 : 0;
}

/* The XNNFullyConnected node with n's output and its fused activation. */
static int fc_node(lsw *W, const ls_node *n, uint32_t in, uint32_t filt, uint32_t bias)
{
    uint32_t out = out_value(W, n, LSW_NCHW);
    if (out == LSW_NONE) return -1;
    ls_xnn_node *f = lsw_node(W, LS_XNN_FullyConnected, n);
    f->n_in = 3;
    f->in[0] = in, f->in[1] = filt, f->in[2] = bias;
    f->n_out = 1, f->out[0] = out;
    fused_clamp(W, n, f);
    return 0;
}

static int fully_connected_q(lsw *W, const ls_node *n, uint32_t x, uint32_t filt, uint32_t b, float *scales,
                             uint32_t n_scales)
{
    uint32_t in = lsw_get(W, x, LSW_NCHW);
    if (in == LSW_NONE) return -1;
    uint8_t idt = W->values.v[in].datatype;
    float in_scale = W->values.v[in].scale;
    uint32_t bias = LS_XNN_INVALID_ID;
    if (idt == LS_XNN_DT_QINT8) { /* static: int32 bias, qint8 out (the q after it) */
        if (W->out_q[ls_program_pos(W->p, n->id)] < 0)
            return lsw_needs(W, n, "a statically quantized linear without a quantize after it");
        if (b && (bias = lsw_quant_bias(W, n, b, in_scale, scales, n_scales)) == LSW_NONE) return -1;
    } else if (idt == LS_XNN_DT_QDINT8) { /* dynamic: float bias, float out */
        if (float_bias(W, n, b, &bias) != 0) return -1;
    } else {
        return lsw_needs(W, n, "quantized weights with a float input (weight-only quantization)");
    }
    return fc_node(W, n, in, filt, bias);
}

static int fully_connected(lsw *W, const ls_node *n, uint32_t x, uint32_t w, uint32_t b, bool w_is_kn)
{
    bool isq;
    float *scales;
    uint32_t n_scales;
    uint32_t qf = lsw_quant_weight(W, n, w, 0, &isq, &scales, &n_scales);
    if (isq) {
        int rc = qf == LSW_NONE ? -1 : fully_connected_q(W, n, x, qf, b, scales, n_scales);
        free(scales);
        return rc;
    }
    ls_tensor *wt = lsw_data(W, w), *own = NULL;
    const ls_node *wn = lsw_nd(W, w);
    if (!wt && w_is_kn && wn && wn->kind == LS_NODE_CALL && wn->op && wn->op->id == LS_OP_permute_copy &&
        wn->args[0].kind == LS_ARG_NODE && (wt = lsw_data(W, wn->args[0].v.node))) {
        w_is_kn = false; /* wᵀ of a constant: the constant itself is the [N, K] filter */
    }
    if (!wt || wt->ndim != 2) return lsw_needs(W, n, "the weight is not a constant matrix (XNNPACK's GEMM configs take constant weights)");
    if (w_is_kn) { /* [K, N] → [N, K] */
        int64_t d[2] = {wt->sizes[1], wt->sizes[0]};
        own = ls_tensor_alloc(wt->dtype, 2, d);
        size_t es = ls_dtype_size(wt->dtype);
        for (int64_t i = 0; i < d[0]; i++)
            for (int64_t j = 0; j < d[1]; j++)
                memcpy((uint8_t *)own->data + (i * d[1] + j) * es, (uint8_t *)wt->data + (j * d[0] + i) * es, es);
        wt = own;
    }
    uint32_t in = lsw_get_f(W, x, LSW_NCHW); /* linear takes NCHW (memory_sensitive_ops_nchw) */
    uint32_t filt = in == LSW_NONE ? LSW_NONE : lsw_constant(W, wt);
    ls_tensor_unref(own);
    if (in == LSW_NONE || filt == UINT32_MAX) return -1;
    uint32_t bias;
    if (float_bias(W, n, b, &bias) != 0) return -1;
    return fc_node(W, n, in, filt, bias);
}

static int conv2d(lsw *W, const ls_node *n)
{
    uint32_t x = arg_node(n, "input"), w = arg_node(n, "weight"), b = arg_node(n, "bias");
    ls_tensor *wt = lsw_data(W, w), *wq = NULL;
    const ls_node *wd = lsw_nd(W, w);
    if (!wt && wd && wd->kind == LS_NODE_CALL && wd->op &&
        (wd->op->id == LS_OP_dequantize_per_channel || wd->op->id == LS_OP_dequantize_per_tensor) &&
        wd->args[0].kind == LS_ARG_NODE)
        wt = wq = lsw_data(W, wd->args[0].v.node); /* a quantized filter: its shape */
    if (!wt || wt->ndim != 4) return lsw_needs(W, n, "the weight is not a constant 4-d tensor (2-d convolution only)");
    if (arg_int(n, "transposed", 0)) return lsw_needs(W, n, "transposed convolution is not written");
    int64_t stride[2], pad[2], dil[2], opad[2];
    int ns = ints_of(n, "stride", stride, 2), np = ints_of(n, "padding", pad, 2), nd = ints_of(n, "dilation", dil, 2);
    int no = ints_of(n, "output_padding", opad, 2);
    if (ns < 1 || np < 1 || nd < 1) return lsw_fail(W, n, "stride, padding and dilation are needed");
    if (ns == 1) stride[1] = stride[0];
    if (np == 1) pad[1] = pad[0];
    if (nd == 1) dil[1] = dil[0];
    for (int i = 0; i < no; i++)
        if (opad[i]) return lsw_needs(W, n, "output padding (op_conv2d.py: XNNPACK does not support it)");
    int64_t groups = arg_int(n, "groups", 1), O = wt->sizes[0], gi = wt->sizes[1], KH = wt->sizes[2], KW = wt->sizes[3];
    int64_t go = groups ? O / groups : 0;
    /* depthwise when group_input_channels == 1 (op_conv2d.py's is_depthwise_conv; its "output
     * channels a multiple" always holds then): a one-channel convolution with groups 1 too */
    bool dw = gi == 1;
    /* filter: [O, I/g, KH, KW] to NHWC [O, KH, KW, I/g]; depthwise swaps N and C first: [1, KH, KW, O] */
    uint32_t filt, in, bias = LS_XNN_INVALID_ID;
    if (wq) { /* static qs8: qcint8 filter, int32 bias, qint8 in and out */
        bool isq;
        float *scales;
        uint32_t n_scales;
        filt = lsw_quant_weight(W, n, w, dw ? 2 : 1, &isq, &scales, &n_scales);
        in = filt == LSW_NONE ? LSW_NONE : lsw_get(W, x, LSW_NHWC);
        if (in != LSW_NONE && (W->values.v[in].datatype != LS_XNN_DT_QINT8 || W->out_q[ls_program_pos(W->p, n->id)] < 0)) {
            free(scales);
            return lsw_needs(W, n, "a quantized filter without the static pattern (dq input, q after)");
        }
        if (in != LSW_NONE && b && (bias = lsw_quant_bias(W, n, b, W->values.v[in].scale, scales, n_scales)) == LSW_NONE)
            in = LSW_NONE;
        free(scales);
        if (in == LSW_NONE) return -1;
        goto define;
    }
    int64_t fd[4] = {dw ? 1 : O, KH, KW, dw ? O : gi};
    ls_tensor *f = ls_tensor_alloc(wt->dtype, 4, fd);
    size_t es = ls_dtype_size(wt->dtype);
    for (int64_t o = 0; o < O; o++)
        for (int64_t i = 0; i < gi; i++)
            for (int64_t ky = 0; ky < KH; ky++)
                for (int64_t kx = 0; kx < KW; kx++) {
                    int64_t src = ((o * gi + i) * KH + ky) * KW + kx;
                    int64_t dst = dw ? (ky * KW + kx) * O + o : ((o * KH + ky) * KW + kx) * gi + i;
                    memcpy((uint8_t *)f->data + dst * es, (uint8_t *)wt->data + src * es, es);
                }
    in = lsw_get_f(W, x, LSW_NHWC);
    filt = in == LSW_NONE ? LSW_NONE : lsw_constant(W, f);
    ls_tensor_unref(f);
    if (in == LSW_NONE || filt == UINT32_MAX) return -1;
    if (float_bias(W, n, b, &bias) != 0) return -1;
define:;
    uint32_t out = out_value(W, n, LSW_NHWC);
    if (out == LSW_NONE) return -1;
    ls_xnn_node *c = lsw_node(W, dw ? LS_XNN_DepthwiseConv2d : LS_XNN_Conv2d, n);
    c->n_in = 3;
    c->in[0] = in, c->in[1] = filt, c->in[2] = bias;
    c->n_out = 1, c->out[0] = out;
    c->p.conv = (__typeof__(c->p.conv)){.pad_top = (uint32_t)pad[0], .pad_right = (uint32_t)pad[1],
                                        .pad_bottom = (uint32_t)pad[0], .pad_left = (uint32_t)pad[1],
                                        .kernel_h = (uint32_t)KH, .kernel_w = (uint32_t)KW,
                                        .stride_h = (uint32_t)stride[0], .stride_w = (uint32_t)stride[1],
                                        .dilation_h = (uint32_t)dil[0], .dilation_w = (uint32_t)dil[1],
                                        .group_in = (uint32_t)gi, .group_out = (uint32_t)go, .groups = (uint32_t)groups};
    fused_clamp(W, n, c);
    return 0;
}

/* mean over H and W of a 4-d tensor, keepdim: XNNGlobalAvgPooling2d in NHWC (op_mean_dim.py) */
static int mean_dim(lsw *W, const ls_node *n)
{
    int64_t dims[4];
    int nd = ints_of(n, "dim", dims, 4);
    uint32_t x = arg_node(n, "self");
    int64_t d0 = nd == 2 ? (dims[0] + 4) % 4 : -1, d1 = nd == 2 ? (dims[1] + 4) % 4 : -1;
    bool hw = nd == 2 && four_d(W, x) && ((d0 == 2 && d1 == 3) || (d0 == 3 && d1 == 2));
    if (!hw || !arg_int(n, "keepdim", 0)) return lsw_needs(W, n, "mean.dim is written over dims 2, 3 of a 4-d tensor, kept");
    uint32_t in = in_get(W, n, x, LSW_NHWC), out = in == LSW_NONE ? LSW_NONE : out_value(W, n, LSW_NHWC);
    if (out == LSW_NONE) return -1;
    ls_xnn_node *g = lsw_node(W, LS_XNN_GlobalAvgPooling2d, n);
    g->n_in = g->n_out = 1;
    g->in[0] = in, g->out[0] = out;
    return 0;
}

/* utils.py's PERM_NCHW_TO_NHWC and PERM_NHWC_TO_NCHW: physical axis j of an NHWC value is
 * logical axis PERM_NCHW_TO_NHWC[j]; logical axis a sits at physical PERM_NHWC_TO_NCHW[a]. */
static const uint32_t nchw_to_nhwc[4] = {0, 2, 3, 1}, nhwc_to_nchw[4] = {0, 3, 1, 2};

static int movement(lsw *W, const ls_node *n)
{
    uint32_t x = arg_node(n, "self");
    const ls_tmeta *im = ls_node_tval(lsw_nd(W, x)), *om = ls_node_tval(n);
    if (!im || !om) return lsw_fail(W, n, "no tensor metadata");
    /* channels_last_tagged_reshape_pass.py: a node outside its memory-sensitive sets is NHWC when
     * its inputs are; op_permute.py and op_slice_copy.py then remap their axes (the visitors of
     * view_copy and constant_pad_nd were not read: those take NCHW, transposed back) */
    int lay = LSW_NCHW;
    if (n->op->id == LS_OP_permute_copy || n->op->id == LS_OP_slice_copy_Tensor) {
        int l = lsw_native(W, x);
        if (l < 0) return -1;
        if (l == LSW_NHWC && im->ndim == 4) lay = LSW_NHWC;
    }
    uint32_t in = in_get(W, n, x, lay), out = in == LSW_NONE ? LSW_NONE : out_value(W, n, lay);
    if (out == LSW_NONE) return -1;
    ls_xnn_node *m;
    switch (n->op->id) {
    case LS_OP_permute_copy: {
        int64_t d[LS_XNN_MAX_DIMS];
        int k = ints_of(n, "dims", d, LS_XNN_MAX_DIMS);
        if (k != im->ndim) return lsw_fail(W, n, "dims do not match the input's rank");
        for (int i = 0; i < k; i++) {
            if (d[i] < 0) d[i] += k;
            if (d[i] < 0 || d[i] >= k) return lsw_fail(W, n, "dims has %lld, out of range", (long long)d[i]);
        }
        m = lsw_node(W, LS_XNN_StaticTranspose, n);
        m->p.dims.n = (uint32_t)k;
        for (int i = 0; i < k; i++) /* NHWC: the permutation in NCHW terms, then read in NHWC order */
            m->p.dims.v[i] = lay == LSW_NHWC ? nhwc_to_nchw[d[nchw_to_nhwc[i]]] : (uint32_t)d[i];
        break;
    }
    case LS_OP_view_copy: /* the output's static shape (op_view_copy.py) */
        m = lsw_node(W, LS_XNN_StaticReshape, n);
        m->p.dims.n = om->ndim;
        for (int i = 0; i < om->ndim; i++) m->p.dims.v[i] = (uint32_t)om->sizes[i];
        break;
    case LS_OP_slice_copy_Tensor: {
        int64_t dim = arg_int(n, "dim", 0), step = arg_int(n, "step", 1);
        if (dim < 0) dim += im->ndim;
        if (step != 1 || dim < 0 || dim >= im->ndim) return lsw_needs(W, n, "a slice with step %lld", (long long)step);
        int64_t size = im->sizes[dim], start = arg_int(n, "start", 0), end = arg_int(n, "end", size);
        if (start < 0) start += size;
        if (end < 0) end += size;
        start = start < 0 ? 0 : start > size ? size : start;
        end = end < start ? start : end > size ? size : end;
        m = lsw_node(W, LS_XNN_StaticSlice, n);
        m->p.slice.n = im->ndim;
        int pd = lay == LSW_NHWC ? (int)nhwc_to_nchw[dim] : (int)dim; /* the sliced axis where it sits */
        for (int i = 0; i < im->ndim; i++) {
            int64_t len = im->sizes[lay == LSW_NHWC ? nchw_to_nhwc[i] : (uint32_t)i];
            m->p.slice.offsets[i] = i == pd ? (uint32_t)start : 0;
            m->p.slice.sizes[i] = (uint32_t)(i == pd ? end - start : len);
        }
        break;
    }
    case LS_OP_constant_pad_nd: {
        int64_t pad[2 * LS_XNN_MAX_DIMS];
        int k = ints_of(n, "pad", pad, 2 * LS_XNN_MAX_DIMS);
        double value = 0;
        arg_num(n, "value", &value);
        if (k < 0 || k % 2 || k / 2 > im->ndim) return lsw_fail(W, n, "pad has %d entries", k);
        m = lsw_node(W, LS_XNN_StaticConstantPad, n);
        m->p.pad.n = im->ndim;
        for (int d = 0; d < im->ndim; d++) { /* pad pairs start at the last dim */
            int j = im->ndim - 1 - d;
            m->p.pad.pre[d] = j < k / 2 ? (uint32_t)pad[2 * j] : 0;
            m->p.pad.post[d] = j < k / 2 ? (uint32_t)pad[2 * j + 1] : 0;
        }
        m->p.pad.value = (float)value;
        break;
    }
    default: return lsw_fail(W, n, "not a movement op");
    }
    m->n_in = m->n_out = 1;
    m->in[0] = in, m->out[0] = out;
    return 0;
}

/* cat: Concatenate2..5, more inputs chained five then four at a time (decompose_cat.py) */
static int cat(lsw *W, const ls_node *n)
{
    const ls_arg *t = ls_node_arg(n, "tensors");
    const ls_tmeta *om = ls_node_tval(n);
    if (!t || t->kind != LS_ARG_NODES || t->n < 2 || !om) return lsw_needs(W, n, "cat of fewer than two tensors");
    int64_t axis = arg_int(n, "dim", 0);
    if (axis < 0) axis += om->ndim;
    if (om->ndim > LS_XNN_MAX_DIMS) return lsw_needs(W, n, "%d dimensions, XNNPACK takes at most 6", om->ndim);
    if (axis < 0 || axis >= om->ndim) return lsw_fail(W, n, "dim %lld out of range", (long long)arg_int(n, "dim", 0));
    /* channels_last_tagged_reshape_pass.py's rule for a node of any format (as elementwise), and
     * op_cat.py's axis = PERM_NHWC_TO_NCHW[axis] for an NHWC one */
    bool any = false, all = true, all4 = om->ndim == 4;
    for (uint32_t i = 0; i < t->n; i++) {
        int l = lsw_native(W, t->v.nodes[i]);
        if (l < 0) return -1;
        any |= l == LSW_NHWC;
        all &= l == LSW_NHWC;
        all4 &= four_d(W, t->v.nodes[i]);
    }
    int lay = any && (all || all4) && om->ndim == 4 ? LSW_NHWC : LSW_NCHW;
    if (lay == LSW_NHWC) axis = nhwc_to_nchw[axis];
    int64_t od[LS_XNN_MAX_DIMS]; /* the output's dims as they sit */
    for (int i = 0; i < om->ndim && i < LS_XNN_MAX_DIMS; i++) od[i] = om->sizes[lay == LSW_NHWC ? nchw_to_nhwc[i] : (uint32_t)i];
    uint32_t *ins = ls_malloc(sizeof *ins * t->n);
    int rc = 0;
    for (uint32_t i = 0; i < t->n && rc == 0; i++)
        if ((ins[i] = in_get(W, n, t->v.nodes[i], lay)) == LSW_NONE) rc = -1;
    uint32_t acc = LSW_NONE, done = 0;
    while (rc == 0 && done < t->n) {
        unsigned take = acc == LSW_NONE ? (t->n - done > 5 ? 5 : t->n - done) : (t->n - done > 4 ? 4 : t->n - done);
        uint32_t part[5], k = 0;
        if (acc != LSW_NONE) part[k++] = acc;
        for (unsigned i = 0; i < take; i++) part[k++] = ins[done + i];
        done += take;
        uint32_t out;
        if (done == t->n) {
            out = out_value(W, n, lay);
        } else { /* an intermediate: the output's shape with the axis summed so far */
            int64_t d[LS_XNN_MAX_DIMS];
            for (int i = 0; i < om->ndim; i++) d[i] = od[i];
            d[axis] = 0;
            for (uint32_t i = 0; i < k; i++) d[axis] += W->values.v[part[i]].dims[axis];
            out = lsw_value(W, W->values.v[ins[0]].datatype, om->ndim, d);
            ls_xnn_value *ov = &W->values.v[out], *iv = &W->values.v[ins[0]]; /* a quantized chain keeps the inputs' */
            ov->quant = iv->quant, ov->scale = iv->scale, ov->zero_point = iv->zero_point;
        }
        if (out == LSW_NONE) {
            rc = -1;
            break;
        }
        if (k == 1) { /* one left after a chain: cannot happen with 5 then 4 */
            rc = lsw_fail(W, n, "a concatenation of one");
            break;
        }
        static const uint8_t types[6] = {0, 0, LS_XNN_Concatenate2, LS_XNN_Concatenate3, LS_XNN_Concatenate4,
                                         LS_XNN_Concatenate5};
        ls_xnn_node *c = lsw_node(W, types[k], n);
        c->n_in = (uint8_t)k;
        memcpy(c->in, part, sizeof part[0] * k);
        c->n_out = 1, c->out[0] = out;
        c->p.axis = (uint32_t)axis;
        acc = out;
    }
    free(ins);
    return rc;
}

static int softmax(lsw *W, const ls_node *n)
{
    const ls_tmeta *m = ls_node_tval(n);
    int64_t dim = arg_int(n, "dim", -1);
    if (m && dim < 0) dim += m->ndim;
    if (!m || dim != m->ndim - 1) return lsw_needs(W, n, "softmax over dim %lld: XNNPACK takes only the last", (long long)dim);
    if (arg_int(n, "half_to_float", 0)) return lsw_needs(W, n, "half_to_float");
    /* NCHW, whatever its input's layout: XNNSoftmax runs over the innermost dim as it sits, which
     * for an NHWC value is C (channels_last_tagged_reshape_pass.py would tag it NHWC after a
     * convolution and op_softmax.py checks only the logical dim: such a blob would not compute
     * the Edge program's softmax) */
    uint32_t x = n->nargs && n->args[0].kind == LS_ARG_NODE ? n->args[0].v.node : 0;
    if (!x) return lsw_fail(W, n, "no tensor input");
    uint32_t in = lsw_get_f(W, x, LSW_NCHW), out = in == LSW_NONE ? LSW_NONE : out_value(W, n, LSW_NCHW);
    if (out == LSW_NONE) return -1;
    ls_xnn_node *sm = lsw_node(W, LS_XNN_Softmax, n);
    sm->n_in = sm->n_out = 1, sm->in[0] = in, sm->out[0] = out;
    return 0;
}

static int matmul(lsw *W, const ls_node *n, bool mm)
{
    uint32_t a = arg_node(n, "self"), b = arg_node(n, "mat2");
    if (mm && (lsw_data(W, b) || (lsw_nd(W, b) && lsw_nd(W, b)->op && lsw_nd(W, b)->op->id == LS_OP_permute_copy &&
                                  lsw_data(W, lsw_nd(W, b)->args[0].v.node))))
        return fully_connected(W, n, a, b, 0, true);
    uint32_t ia = lsw_get_f(W, a, LSW_NCHW), ib = ia == LSW_NONE ? LSW_NONE : lsw_get_f(W, b, LSW_NCHW);
    uint32_t out = ib == LSW_NONE ? LSW_NONE : out_value(W, n, LSW_NCHW);
    if (out == LSW_NONE) return -1;
    ls_xnn_node *x = lsw_node(W, LS_XNN_BatchMatrixMultiply, n); /* op_bmm.py */
    x->n_in = 2, x->in[0] = ia, x->in[1] = ib;
    x->n_out = 1, x->out[0] = out;
    return 0;
}

int lsw_emit_call(lsw *W, uint32_t pos)
{
    const ls_node *n = W->p->nodes[pos];
    if (!n->op) return lsw_needs(W, n, "an operator lowerscope does not know");
    int qr = lsw_emit_quant(W, pos);
    if (qr != 1) return qr;
    double a, b;
    switch (n->op->id) {
    case LS_OP_add_Tensor: return binary(W, n, LS_XNN_Add);
    case LS_OP_sub_Tensor: return binary(W, n, LS_XNN_Subtract);
    case LS_OP_mul_Tensor: return binary(W, n, LS_XNN_Multiply);
    case LS_OP_div_Tensor: return binary(W, n, LS_XNN_Div);
    case LS_OP_relu: return clamp(W, n, 0, INFINITY);
    case LS_OP_hardtanh:
        if (!arg_num(n, "min_val", &a)) a = -1;
        if (!arg_num(n, "max_val", &b)) b = 1;
        return clamp(W, n, a, b);
    case LS_OP_clamp:
        if (!arg_num(n, "min", &a)) a = -INFINITY;
        if (!arg_num(n, "max", &b)) b = INFINITY;
        return clamp(W, n, a, b);
    case LS_OP_neg: return unary(W, n, LS_XNN_Negate);
    case LS_OP_abs: return unary(W, n, LS_XNN_Abs);
    case LS_OP_exp: return unary(W, n, LS_XNN_Exp);
    case LS_OP_log: return unary(W, n, LS_XNN_Log);
    case LS_OP_sigmoid: return unary(W, n, LS_XNN_Sigmoid);
    case LS_OP_tanh: return unary(W, n, LS_XNN_Tanh);
    case LS_OP_sqrt: return unary(W, n, LS_XNN_SquareRoot);
    case LS_OP_rsqrt: return unary(W, n, LS_XNN_ReciprocalSquareRoot);
    case LS_OP_gelu: {
        const ls_arg *ap = ls_node_arg(n, "approximate");
        if (ap && ap->kind == LS_ARG_STRING && strcmp(ap->v.s, "none") != 0)
            return lsw_needs(W, n, "gelu approximate='%s' (XNNPACK's is exact)", ap->v.s);
        return unary(W, n, LS_XNN_Gelu);
    }
    case LS_OP_pow_Tensor_Scalar: /* op_square.py: x² only */
        if (!arg_num(n, "exponent", &a) || a != 2) return lsw_needs(W, n, "pow with an exponent other than 2");
        return unary(W, n, LS_XNN_Square);
    case LS_OP__softmax:
    case LS_OP_softmax_int: return softmax(W, n);
    case LS_OP_linear: return fully_connected(W, n, arg_node(n, "input"), arg_node(n, "weight"), arg_node(n, "bias"), false);
    case LS_OP_addmm: {
        double beta = 1, alpha = 1;
        arg_num(n, "beta", &beta);
        arg_num(n, "alpha", &alpha);
        if (beta != 1 || alpha != 1) return lsw_needs(W, n, "addmm with beta or alpha other than 1");
        return fully_connected(W, n, arg_node(n, "mat1"), arg_node(n, "mat2"), arg_node(n, "self"), true);
    }
    case LS_OP_mm: return matmul(W, n, true);
    case LS_OP_bmm: return matmul(W, n, false);
    case LS_OP_convolution: return conv2d(W, n);
    case LS_OP_mean_dim: return mean_dim(W, n);
    case LS_OP_permute_copy:
    case LS_OP_view_copy:
    case LS_OP_slice_copy_Tensor:
    case LS_OP_constant_pad_nd: return movement(W, n);
    case LS_OP_cat: return cat(W, n);
    case LS_OP_sin: return unary(W, n, LS_XNN_Sin); /* op_sin.py; XNNSin is tag 45 (runtime_schema.fbs, 0144bfeb) */
    case LS_OP_cos:
        /* op_cos.py serializes XNNCos, a member added to XNodeUnion after XNNSin: the newest schema
         * read (runtime_schema.fbs at 0144bfeb) ends at XNNSin (45), so its tag is not known here */
        return lsw_needs(W, n, "XNNCos's union tag is newer than the XNNPACK schema lowerscope follows (up to XNNSin, 45)");
    default: return lsw_needs(W, n, "no XNNPACK node is written for %s", n->op->qualname);
    }
}
