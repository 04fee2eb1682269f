/* The portable twin of an XNNPACK blob (ls_xnn_twin): an Edge program of lowerscope's portable
 * ops computing what the blob computes, to run beside it as an oracle. It is built from the
 * decoded graph alone, op by op, with formulations that share nothing with the interpreter's:
 *  - every value keeps the blob's layout (NHWC where the blob is NHWC): XNNStaticTranspose is a
 *    permute_copy, a convolution is a sum over its kernel taps of strided slices of the padded
 *    input times that tap's weights (linear), pooling a max or a sum over the same slices;
 *  - a quantized value is its integer tensor; a node reading one dequantizes it
 *    ((q - zp) · scale), computes in float and quantizes its output (round, + zp, clamp, cast)
 *    as the Edge program's dequantize → op → quantize does; weights and biases are dequantized
 *    when the twin is built (what constant propagation makes of dequantize(w));
 *  - a value XNNPACK quantizes at run time (qdint8) stays float in the twin: the twin computes
 *    what the dynamically quantized program approximates, so the two agree within the int8
 *    step of each row (the tests say by how much).
 * Every size is marked symbolic (the blob's size as its hint), so the twin runs on the shapes a
 * dynamic input brings, as the delegate does. Nodes the portable ops cannot express here
 * (ConvTranspose2d, ArgMaxPooling2d) are refused by name. */
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "build.h"
#include "xnn_internal.h"

typedef struct twin {
    ls_builder *b;
    const ls_xnn_graph *g;
    const ls_blob *blob;
    const ls_named_data *named;
    uint32_t *node_of; /* per value position: the twin node holding it (0: none yet) */
    uint32_t cur;      /* the xnode being expressed, for messages */
    ls_error *err;
    const char *sym;
    unsigned n_consts; /* for the constants' names */
} twin;

static ls_tmeta meta_of(const twin *T, ls_dtype dt, int nd, const int64_t *dims)
{
    ls_tmeta m = ls_meta(dt, nd, dims);
    for (int i = 0; i < nd; i++) m.sym[i] = T->sym;
    return m;
}

static ls_tmeta meta_of_value(const twin *T, const ls_xnn_value *v, ls_dtype dt)
{
    int64_t dims[LS_XNN_MAX_DIMS] = {0};
    for (unsigned i = 0; i < v->ndim; i++) dims[i] = v->dims[i];
    return meta_of(T, dt, v->ndim, dims);
}

static ls_arg *args_of(unsigned n, ...)
{
    ls_arg *a = ls_malloc(sizeof *a * (n ? n : 1));
    va_list ap;
    va_start(ap, n);
    for (unsigned i = 0; i < n; i++) a[i] = va_arg(ap, ls_arg);
    va_end(ap);
    return a;
}

static ls_arg A_str(const char *s)
{
    ls_arg a = {.kind = LS_ARG_STRING};
    a.v.s = ls_intern(s);
    return a;
}

static ls_arg A_dtype(ls_dtype d)
{
    ls_arg a = {.kind = LS_ARG_DTYPE};
    a.v.i = d;
    return a;
}

#define CALL(T, op, val, n, ...) ls_build_call((T)->b, NULL, LS_OP_##op, args_of(n, __VA_ARGS__), n, val)
#define N(id) ls_arg_node(id)

/* A constant placeholder holding t (the builder takes its reference). */
static uint32_t constant(twin *T, ls_tensor *t)
{
    char name[64];
    snprintf(name, sizeof name, "xnn_const_%u", T->n_consts++);
    ls_tmeta m;
    ls_tensor_meta(t, &m);
    uint32_t id = ls_build_input(T->b, name, LS_IN_CONSTANT_TENSOR, ls_intern(name), false, &m, t);
    ls_tensor_unref(t);
    return id;
}

static uint32_t const_floats(twin *T, int nd, const int64_t *dims, const float *v)
{
    ls_tensor *t = ls_tensor_alloc(LS_DT_F32, nd, dims);
    memcpy(t->data, v, t->nbytes);
    return constant(T, t);
}

/* ---- quantization as portable ops */

static bool is_q(uint8_t dt)
{
    return dt == LS_XNN_DT_QINT8 || dt == LS_XNN_DT_QUINT8 || dt == LS_XNN_DT_QINT32 || dt == LS_XNN_DT_QCINT8 ||
           dt == LS_XNN_DT_QCINT32;
}

/* (x - zp) · scale in float32 */
static uint32_t dequant(twin *T, uint32_t x, const ls_xnn_value *v)
{
    ls_tmeta m = meta_of_value(T, v, LS_DT_F32);
    uint32_t f = CALL(T, _to_copy, &m, 7, N(x), A_dtype(LS_DT_F32), ls_arg_none(), ls_arg_none(), ls_arg_none(),
                      ls_arg_bool(false), ls_arg_none());
    if (v->zero_point) f = CALL(T, sub_Scalar, &m, 3, N(f), ls_arg_int(v->zero_point), ls_arg_int(1));
    return CALL(T, mul_Scalar, &m, 2, N(f), ls_arg_float(v->scale));
}

/* clamp(floor(x / scale + 0.5) + zp, qmin, qmax) cast to the storage type */
static uint32_t quant(twin *T, uint32_t x, const ls_xnn_value *v, float lo_f, float hi_f)
{
    ls_tmeta m = meta_of_value(T, v, LS_DT_F32);
    ls_dtype st = lsx_storage(v->datatype);
    double qmin = st == LS_DT_I8 ? -128 : st == LS_DT_U8 ? 0 : -2147483648.0;
    double qmax = st == LS_DT_I8 ? 127 : st == LS_DT_U8 ? 255 : 2147483647.0;
    if (lo_f > -INFINITY) qmin = fmax(qmin, floor(lo_f / v->scale + 0.5) + v->zero_point);
    if (hi_f < INFINITY) qmax = fmin(qmax, floor(hi_f / v->scale + 0.5) + v->zero_point);
    uint32_t s = CALL(T, div_Scalar, &m, 2, N(x), ls_arg_float(v->scale));
    s = CALL(T, add_Scalar, &m, 3, N(s), ls_arg_float(0.5), ls_arg_int(1));
    s = CALL(T, div_Scalar_mode, &m, 3, N(s), ls_arg_int(1), A_str("floor"));
    if (v->zero_point) s = CALL(T, add_Scalar, &m, 3, N(s), ls_arg_int(v->zero_point), ls_arg_int(1));
    s = CALL(T, clamp, &m, 3, N(s), ls_arg_float(qmin), ls_arg_float(qmax));
    ls_tmeta mq = meta_of_value(T, v, st);
    return CALL(T, _to_copy, &mq, 7, N(s), A_dtype(st), ls_arg_none(), ls_arg_none(), ls_arg_none(), ls_arg_bool(false),
                ls_arg_none());
}

static const ls_xnn_value *vdef(const twin *T, uint32_t id) { return &T->g->values[ls_xnn_value_pos(T->g, id)]; }

/* Input k of the current node as float32 (dequantized when quantized). */
static uint32_t in_f(twin *T, const ls_xnn_node *n, unsigned k)
{
    const ls_xnn_value *v = vdef(T, n->in[k]);
    uint32_t x = T->node_of[ls_xnn_value_pos(T->g, n->in[k])];
    if (is_q(v->datatype) && v->quant == LS_XNN_Q_PER_TENSOR) return dequant(T, x, v);
    return x;
}

/* Sets output k to a float result: clamped when the node honours output_min/max, quantized
 * when the output is. */
static void out_f(twin *T, const ls_xnn_node *n, unsigned k, uint32_t x, bool clamps)
{
    const ls_xnn_value *v = vdef(T, n->out[k]);
    float lo = clamps && n->has_min_max ? n->out_min : -INFINITY, hi = clamps && n->has_min_max ? n->out_max : INFINITY;
    if (is_q(v->datatype)) {
        x = quant(T, x, v, lo, hi);
    } else if (lo > -INFINITY || hi < INFINITY) {
        ls_tmeta m = meta_of_value(T, v, LS_DT_F32);
        x = CALL(T, clamp, &m, 3, N(x), lo > -INFINITY ? ls_arg_float(lo) : ls_arg_none(),
                 hi < INFINITY ? ls_arg_float(hi) : ls_arg_none());
    }
    if (v->datatype == LS_XNN_DT_FP16 && !is_q(v->datatype)) {
        ls_tmeta m = meta_of_value(T, v, LS_DT_F16);
        x = CALL(T, _to_copy, &m, 7, N(x), A_dtype(LS_DT_F16), ls_arg_none(), ls_arg_none(), ls_arg_none(),
                 ls_arg_bool(false), ls_arg_none());
    }
    T->node_of[ls_xnn_value_pos(T->g, n->out[k])] = x;
}

static int refuse(twin *T, const ls_xnn_node *n, const char *why)
{
    return ls_fail_needs(T->err, "xnodes[%u] (%s): no portable twin: %s", T->cur, ls_xnn_node_type_name(n->type), why);
}

/* ---- weights, folded to float at build time */

static int weight_floats(twin *T, uint32_t id, int64_t rows, int64_t cols, float **out)
{
    const ls_xnn_value *v = vdef(T, id);
    uint64_t size;
    const uint8_t *p = ls_xnn_constant_bytes(T->g, T->blob, T->named, v->constant_idx, &size, T->err);
    if (!p) return -1;
    if (size < ls_xnn_value_nbytes(v)) return ls_fail(T->err, "constant of value %u is %llu bytes, short", id, (unsigned long long)size);
    float *f = ls_malloc(sizeof *f * (size_t)(rows * cols + 1));
    int32_t zp = v->quant == LS_XNN_Q_PER_TENSOR ? v->zero_point : 0;
    for (int64_t r = 0; r < rows; r++)
        for (int64_t c = 0; c < cols; c++) {
            int64_t i = r * cols + c;
            float s = v->quant == LS_XNN_Q_PER_TENSOR ? v->scale : 1.0f;
            int64_t ch = v->quant == LS_XNN_Q_PER_CHANNEL ? (v->channel_dim == (int)v->ndim - 1 ? c : r) : 0;
            if (v->quant == LS_XNN_Q_PER_CHANNEL && v->scales && ch < v->n_scales) s = v->scales[ch];
            if (v->quant == LS_XNN_Q_PER_CHANNEL_GROUP) s = lsx_block_scale(v, r * (cols / v->group_size) + c / v->group_size);
            float x;
            switch (v->datatype) {
            case LS_XNN_DT_FP32: memcpy(&x, p + 4 * i, 4); break;
            case LS_XNN_DT_FP16: x = ls_f16_to_f32((uint16_t)ls_le_get(p + 2 * i, 2)); break;
            case LS_XNN_DT_BF16: x = ls_bf16_to_f32((uint16_t)ls_le_get(p + 2 * i, 2)); break;
            case LS_XNN_DT_QINT8:
            case LS_XNN_DT_QCINT8: x = ((float)(int8_t)p[i] - (float)zp) * s; break;
            case LS_XNN_DT_QUINT8: x = ((float)p[i] - (float)zp) * s; break;
            case LS_XNN_DT_QINT32:
            case LS_XNN_DT_QCINT32: x = (float)(int32_t)ls_le_get(p + 4 * i, 4) * s; break;
            case LS_XNN_DT_QCINT4:
            case LS_XNN_DT_QBINT4: {
                uint8_t byte = p[r * ((cols + 1) / 2) + c / 2];
                x = (float)((int)((c & 1) ? byte >> 4 : byte & 15) - 8) * s;
                break;
            }
            default: free(f); return ls_fail_needs(T->err, "weights of datatype %s", ls_xnn_datatype_name(v->datatype));
            }
            f[i] = x;
        }
    *out = f;
    return 0;
}

/* The bias of a quantized node is int32 at scale in_scale · w_scale (per channel); its float is
 * what the Edge program's dequantize of it gives. */
static int bias_floats(twin *T, uint32_t id, int64_t n, float **out)
{
    *out = NULL;
    if (id == LS_XNN_INVALID_ID) return 0;
    return weight_floats(T, id, 1, n, out);
}

/* ---- the nodes */

static const ls_tmeta *out_meta(twin *T, const ls_xnn_node *n, ls_tmeta *m)
{
    *m = meta_of_value(T, vdef(T, n->out[0]), LS_DT_F32);
    return m;
}

static int fully_connected(twin *T, const ls_xnn_node *n)
{
    const ls_xnn_value *w = vdef(T, n->in[1]);
    if (!w->constant_idx) return refuse(T, n, "weights computed at run time");
    bool tr = n->flags & 1;
    int64_t N = w->dims[tr ? 1 : 0], K = w->dims[tr ? 0 : 1];
    float *wf, *bf;
    if (weight_floats(T, n->in[1], w->dims[0], w->dims[1], &wf) != 0) return -1;
    if (tr) { /* [K, N] → [N, K] */
        float *t = ls_malloc(sizeof *t * (size_t)(N * K));
        for (int64_t k = 0; k < K; k++)
            for (int64_t j = 0; j < N; j++) t[j * K + k] = wf[k * N + j];
        free(wf);
        wf = t;
    }
    if (bias_floats(T, n->in[2], N, &bf) != 0) {
        free(wf);
        return -1;
    }
    int64_t wd[2] = {N, K};
    uint32_t wn = const_floats(T, 2, wd, wf), bn = bf ? const_floats(T, 1, &N, bf) : 0;
    free(wf);
    free(bf);
    ls_tmeta m;
    uint32_t y = CALL(T, linear, out_meta(T, n, &m), 3, N(in_f(T, n, 0)), N(wn), bn ? N(bn) : ls_arg_none());
    out_f(T, n, 0, y, true);
    return 0;
}

/* One tap's strided window of a padded NHWC input: rows ky·dh, +sh, ..., OH of them; same for columns. */
static uint32_t window(twin *T, uint32_t xp, int64_t N_, int64_t OH, int64_t OW, int64_t C, int64_t y0, int64_t sh,
                       int64_t x0, int64_t sw)
{
    int64_t d1[4] = {N_, OH, 0, C}, d2[4] = {N_, OH, OW, C};
    ls_tmeta m1 = meta_of(T, LS_DT_F32, 4, d1), m2 = meta_of(T, LS_DT_F32, 4, d2);
    m1.sizes[2] = -1;
    uint32_t s = CALL(T, slice_copy_Tensor, &m1, 5, N(xp), ls_arg_int(1), ls_arg_int(y0), ls_arg_int(y0 + (OH - 1) * sh + 1),
                      ls_arg_int(sh));
    return CALL(T, slice_copy_Tensor, &m2, 5, N(s), ls_arg_int(2), ls_arg_int(x0), ls_arg_int(x0 + (OW - 1) * sw + 1),
                ls_arg_int(sw));
}

static uint32_t pad_nhwc(twin *T, uint32_t x, const int64_t *dims, uint32_t pt, uint32_t pr, uint32_t pb, uint32_t pl,
                         double value)
{
    if (!pt && !pr && !pb && !pl) return x;
    int64_t pd[4] = {dims[0], dims[1] + pt + pb, dims[2] + pl + pr, dims[3]};
    int64_t pads[6] = {0, 0, pl, pr, pt, pb};
    ls_tmeta m = meta_of(T, LS_DT_F32, 4, pd);
    return CALL(T, constant_pad_nd, &m, 3, N(x), ls_arg_ints(pads, 6), ls_arg_float(value));
}

static int conv2d(twin *T, const ls_xnn_node *n)
{
    const __typeof__(n->p.conv) *c = &n->p.conv;
    const ls_xnn_value *iv = vdef(T, n->in[0]), *ov = vdef(T, n->out[0]), *w = vdef(T, n->in[1]);
    if (iv->ndim != 4 || ov->ndim != 4 || w->ndim != 4) return refuse(T, n, "not 4-d");
    if (!w->constant_idx) return refuse(T, n, "weights computed at run time");
    int64_t dims[4] = {iv->dims[0], iv->dims[1], iv->dims[2], iv->dims[3]};
    int64_t OH = ov->dims[1], OW = ov->dims[2], O = ov->dims[3], G = c->groups;
    bool dw = n->type == LS_XNN_DepthwiseConv2d;
    int64_t taps = (int64_t)c->kernel_h * c->kernel_w, gi = dw ? 1 : c->group_in, go = c->group_out;
    /* the twin writes a few nodes per tap and group: a node count to keep */
    if (taps * (dw ? 1 : G) > 1024) return refuse(T, n, "more than 1024 kernel taps × groups");
    bool fits = dw ? w->dims[0] == 1 && w->dims[1] == c->kernel_h && w->dims[2] == c->kernel_w && w->dims[3] == O
                   : w->dims[0] == O && w->dims[1] == c->kernel_h && w->dims[2] == c->kernel_w && w->dims[3] == gi;
    if (!fits || O != G * go || (!dw && dims[3] != G * gi)) return refuse(T, n, "the filter, the channels and the node disagree");
    float *wf, *bf;
    /* Conv2d filter rows are output channels [O][KH·KW·gi]; depthwise rows are taps [taps][O] */
    if (weight_floats(T, n->in[1], dw ? taps : O, dw ? O : taps * gi, &wf) != 0) return -1;
    if (bias_floats(T, n->in[2], O, &bf) != 0) {
        free(wf);
        return -1;
    }
    uint32_t x = in_f(T, n, 0);
    uint32_t xp = pad_nhwc(T, x, dims, c->pad_top, c->pad_right, c->pad_bottom, c->pad_left, 0);
    int64_t sh = c->stride_h ? c->stride_h : 1, sw = c->stride_w ? c->stride_w : 1;
    int64_t dh = c->dilation_h ? c->dilation_h : 1, dwd = c->dilation_w ? c->dilation_w : 1;
    int64_t od[4] = {dims[0], OH, OW, O};
    ls_tmeta mo = meta_of(T, LS_DT_F32, 4, od);
    uint32_t acc = 0;
    if (dw) {
        int64_t mult = O / (dims[3] ? dims[3] : 1);
        uint32_t src = xp;
        if (mult > 1) { /* output channel o reads input channel o / mult */
            int64_t *idx = ls_malloc(sizeof *idx * (size_t)O);
            for (int64_t o = 0; o < O; o++) idx[o] = o / mult;
            ls_tensor *it = ls_tensor_alloc(LS_DT_I64, 1, &O);
            memcpy(it->data, idx, sizeof *idx * (size_t)O);
            free(idx);
            int64_t ed[4] = {dims[0], dims[1] + c->pad_top + c->pad_bottom, dims[2] + c->pad_left + c->pad_right, O};
            ls_tmeta me = meta_of(T, LS_DT_F32, 4, ed);
            src = CALL(T, index_select, &me, 3, N(xp), ls_arg_int(3), N(constant(T, it)));
        }
        for (int64_t ky = 0; ky < c->kernel_h; ky++)
            for (int64_t kx = 0; kx < c->kernel_w; kx++) {
                uint32_t s = window(T, src, dims[0], OH, OW, O, ky * dh, sh, kx * dwd, sw);
                uint32_t wk = const_floats(T, 1, &O, wf + (ky * c->kernel_w + kx) * O);
                uint32_t term = CALL(T, mul_Tensor, &mo, 2, N(s), N(wk));
                acc = acc ? CALL(T, add_Tensor, &mo, 3, N(acc), N(term), ls_arg_int(1)) : term;
            }
    } else {
        uint32_t *parts = ls_malloc(sizeof *parts * (size_t)G);
        int64_t pd[4] = {dims[0], OH, OW, go};
        ls_tmeta mp = meta_of(T, LS_DT_F32, 4, pd);
        for (int64_t g = 0; g < G; g++) {
            uint32_t xg = xp;
            if (G > 1) {
                int64_t gd[4] = {dims[0], dims[1] + c->pad_top + c->pad_bottom, dims[2] + c->pad_left + c->pad_right, gi};
                ls_tmeta mg = meta_of(T, LS_DT_F32, 4, gd);
                xg = CALL(T, slice_copy_Tensor, &mg, 5, N(xp), ls_arg_int(3), ls_arg_int(g * gi), ls_arg_int((g + 1) * gi),
                          ls_arg_int(1));
            }
            uint32_t part = 0;
            for (int64_t ky = 0; ky < c->kernel_h; ky++)
                for (int64_t kx = 0; kx < c->kernel_w; kx++) {
                    uint32_t s = window(T, xg, dims[0], OH, OW, gi, ky * dh, sh, kx * dwd, sw);
                    float *wk = ls_malloc(sizeof *wk * (size_t)(go * gi));
                    for (int64_t o = 0; o < go; o++)
                        for (int64_t i = 0; i < gi; i++)
                            wk[o * gi + i] = wf[(g * go + o) * taps * gi + (ky * c->kernel_w + kx) * gi + i];
                    int64_t wd2[2] = {go, gi};
                    uint32_t wn = const_floats(T, 2, wd2, wk);
                    free(wk);
                    uint32_t term = CALL(T, linear, &mp, 3, N(s), N(wn), ls_arg_none());
                    part = part ? CALL(T, add_Tensor, &mp, 3, N(part), N(term), ls_arg_int(1)) : term;
                }
            parts[g] = part;
        }
        acc = G > 1 ? CALL(T, cat, &mo, 2, ls_arg_nodes(parts, (uint32_t)G, false), ls_arg_int(3)) : parts[0];
        free(parts);
    }
    if (bf) acc = CALL(T, add_Tensor, &mo, 3, N(acc), N(const_floats(T, 1, &O, bf)), ls_arg_int(1));
    free(wf);
    free(bf);
    out_f(T, n, 0, acc, true);
    return 0;
}

static int pool2d(twin *T, const ls_xnn_node *n)
{
    const __typeof__(n->p.pool) *p = &n->p.pool;
    const ls_xnn_value *iv = vdef(T, n->in[0]), *ov = vdef(T, n->out[0]);
    if (iv->ndim != 4 || ov->ndim != 4) return refuse(T, n, "not 4-d");
    int64_t dims[4] = {iv->dims[0], iv->dims[1], iv->dims[2], iv->dims[3]}, OH = ov->dims[1], OW = ov->dims[2], C = dims[3];
    if ((int64_t)p->pool_h * p->pool_w > 1024 || !p->pool_h || !p->pool_w) return refuse(T, n, "a window of more than 1024 taps");
    bool maxp = n->type == LS_XNN_MaxPooling2d;
    uint32_t x = in_f(T, n, 0);
    uint32_t xp = pad_nhwc(T, x, dims, p->pad_top, p->pad_right, p->pad_bottom, p->pad_left, maxp ? -INFINITY : 0);
    int64_t od[4] = {dims[0], OH, OW, C};
    ls_tmeta mo = meta_of(T, LS_DT_F32, 4, od);
    ls_tmeta mb = meta_of(T, LS_DT_BOOL, 4, od);
    int64_t sh = p->stride_h ? p->stride_h : 1, sw = p->stride_w ? p->stride_w : 1;
    /* average pooling has no dilation in XNNPACK (defineAvgPooling2dNode passes none) */
    int64_t dh = p->dilation_h && maxp ? p->dilation_h : 1, dw = p->dilation_w && maxp ? p->dilation_w : 1;
    uint32_t acc = 0;
    for (int64_t ky = 0; ky < p->pool_h; ky++)
        for (int64_t kx = 0; kx < p->pool_w; kx++) {
            uint32_t s = window(T, xp, dims[0], OH, OW, C, ky * dh, sh, kx * dw, sw);
            if (!acc) acc = s;
            else if (maxp) acc = CALL(T, where_self, &mo, 3, N(CALL(T, gt_Tensor, &mb, 2, N(s), N(acc))), N(s), N(acc));
            else acc = CALL(T, add_Tensor, &mo, 3, N(acc), N(s), ls_arg_int(1));
        }
    if (!maxp) { /* divided by the taps inside the input, as XNNPACK's average pooling does */
        float *cnt = ls_malloc(sizeof *cnt * (size_t)(OH * OW));
        for (int64_t oy = 0; oy < OH; oy++)
            for (int64_t ox = 0; ox < OW; ox++) {
                int64_t k = 0;
                for (int64_t ky = 0; ky < p->pool_h; ky++)
                    for (int64_t kx = 0; kx < p->pool_w; kx++) {
                        int64_t iy = oy * sh + ky * dh - p->pad_top, ix = ox * sw + kx * dw - p->pad_left;
                        k += iy >= 0 && iy < dims[1] && ix >= 0 && ix < dims[2];
                    }
                cnt[oy * OW + ox] = k ? (float)k : 1.0f;
            }
        int64_t cd[4] = {1, OH, OW, 1};
        acc = CALL(T, div_Tensor, &mo, 2, N(acc), N(const_floats(T, 4, cd, cnt)));
        free(cnt);
    }
    out_f(T, n, 0, acc, true);
    return 0;
}

static int resize(twin *T, const ls_xnn_node *n)
{
    const ls_xnn_value *iv = vdef(T, n->in[0]);
    if (iv->ndim != 4) return refuse(T, n, "not 4-d");
    if (n->flags & 4) return refuse(T, n, "TensorFlow legacy mode");
    int64_t H = iv->dims[1], W = iv->dims[2], C = iv->dims[3], B = iv->dims[0];
    int64_t OH = n->p.resize.height, OW = n->p.resize.width;
    bool corners = n->flags & 8;
    uint32_t x = in_f(T, n, 0);
    /* rows y0, y1 and their weight, columns x0, x1 and theirs: index_select then blends */
    uint32_t sel[2][2], frac[2];
    for (int axis = 0; axis < 2; axis++) {
        int64_t in_n = axis ? W : H, out_n = axis ? OW : OH;
        float r = corners ? (out_n > 1 ? (float)(in_n - 1) / (float)(out_n - 1) : 0) : (float)in_n / (float)out_n;
        ls_tensor *i0 = ls_tensor_alloc(LS_DT_I64, 1, &out_n), *i1 = ls_tensor_alloc(LS_DT_I64, 1, &out_n);
        float *f = ls_malloc(sizeof *f * (size_t)out_n);
        for (int64_t o = 0; o < out_n; o++) {
            float s = corners ? (float)o * r : ((float)o + 0.5f) * r - 0.5f;
            if (s < 0) s = 0;
            int64_t a = (int64_t)s;
            ((int64_t *)i0->data)[o] = a;
            ((int64_t *)i1->data)[o] = a + 1 < in_n ? a + 1 : in_n - 1;
            f[o] = s - (float)a;
        }
        sel[axis][0] = constant(T, i0);
        sel[axis][1] = constant(T, i1);
        int64_t fd[4] = {1, axis ? 1 : out_n, axis ? out_n : 1, 1};
        frac[axis] = const_floats(T, 4, fd, f);
        free(f);
    }
    int64_t rd[4] = {B, OH, W, C}, od[4] = {B, OH, OW, C};
    ls_tmeta mr = meta_of(T, LS_DT_F32, 4, rd), mo = meta_of(T, LS_DT_F32, 4, od);
    uint32_t rows[2], px[2][2];
    for (int k = 0; k < 2; k++) rows[k] = CALL(T, index_select, &mr, 3, N(x), ls_arg_int(1), N(sel[0][k]));
    for (int k = 0; k < 2; k++)
        for (int j = 0; j < 2; j++) px[k][j] = CALL(T, index_select, &mo, 3, N(rows[k]), ls_arg_int(2), N(sel[1][j]));
    uint32_t lerp[2];
    for (int k = 0; k < 2; k++) { /* a + (b - a) · fx */
        uint32_t d = CALL(T, sub_Tensor, &mo, 3, N(px[k][1]), N(px[k][0]), ls_arg_int(1));
        d = CALL(T, mul_Tensor, &mo, 2, N(d), N(frac[1]));
        lerp[k] = CALL(T, add_Tensor, &mo, 3, N(px[k][0]), N(d), ls_arg_int(1));
    }
    uint32_t d = CALL(T, sub_Tensor, &mo, 3, N(lerp[1]), N(lerp[0]), ls_arg_int(1));
    d = CALL(T, mul_Tensor, &mo, 2, N(d), N(frac[0]));
    out_f(T, n, 0, CALL(T, add_Tensor, &mo, 3, N(lerp[0]), N(d), ls_arg_int(1)), false);
    return 0;
}

static int unary(twin *T, const ls_xnn_node *n)
{
    ls_tmeta m, mb;
    out_meta(T, n, &m);
    mb = m;
    mb.dtype = LS_DT_BOOL;
    uint32_t x = in_f(T, n, 0), y;
    switch (n->type) {
    case LS_XNN_Sigmoid: y = CALL(T, sigmoid, &m, 1, N(x)); break;
    case LS_XNN_Clamp: out_f(T, n, 0, x, true); return 0;
    case LS_XNN_Floor: y = CALL(T, div_Scalar_mode, &m, 3, N(x), ls_arg_int(1), A_str("floor")); break;
    case LS_XNN_Ceiling:
        y = CALL(T, neg, &m, 1, N(CALL(T, div_Scalar_mode, &m, 3, N(CALL(T, neg, &m, 1, N(x))), ls_arg_int(1), A_str("floor"))));
        break;
    case LS_XNN_SquareRoot: y = CALL(T, sqrt, &m, 1, N(x)); break;
    case LS_XNN_ReciprocalSquareRoot: y = CALL(T, rsqrt, &m, 1, N(x)); break;
    case LS_XNN_Hardswish: {
        uint32_t r = CALL(T, add_Scalar, &m, 3, N(x), ls_arg_int(3), ls_arg_int(1));
        r = CALL(T, clamp, &m, 3, N(r), ls_arg_int(0), ls_arg_int(6));
        y = CALL(T, div_Scalar, &m, 2, N(CALL(T, mul_Tensor, &m, 2, N(x), N(r))), ls_arg_int(6));
        break;
    }
    case LS_XNN_Negate: y = CALL(T, neg, &m, 1, N(x)); break;
    case LS_XNN_Square: y = CALL(T, mul_Tensor, &m, 2, N(x), N(x)); break;
    case LS_XNN_Abs: y = CALL(T, abs, &m, 1, N(x)); break;
    case LS_XNN_Log: y = CALL(T, log, &m, 1, N(x)); break;
    case LS_XNN_Exp: y = CALL(T, exp, &m, 1, N(x)); break;
    case LS_XNN_Tanh: y = CALL(T, tanh, &m, 1, N(x)); break;
    case LS_XNN_Sin: y = CALL(T, sin, &m, 1, N(x)); break;
    case LS_XNN_Gelu: y = CALL(T, gelu, &m, 2, N(x), A_str("none")); break;
    case LS_XNN_ELU: {
        uint32_t e = CALL(T, sub_Scalar, &m, 3, N(CALL(T, exp, &m, 1, N(x))), ls_arg_int(1), ls_arg_int(1));
        e = CALL(T, mul_Scalar, &m, 2, N(e), ls_arg_float(n->p.alpha));
        y = CALL(T, where_self, &m, 3, N(CALL(T, gt_Scalar, &mb, 2, N(x), ls_arg_int(0))), N(x), N(e));
        break;
    }
    case LS_XNN_LeakyReLU: {
        uint32_t s = CALL(T, mul_Scalar, &m, 2, N(x), ls_arg_float(n->p.alpha));
        y = CALL(T, where_self, &m, 3, N(CALL(T, lt_Scalar, &mb, 2, N(x), ls_arg_int(0))), N(s), N(x));
        break;
    }
    case LS_XNN_Softmax: y = CALL(T, softmax_int, &m, 3, N(x), ls_arg_int(-1), ls_arg_none()); break;
    case LS_XNN_GlobalAvgPooling2d: {
        int64_t dims[2] = {1, 2};
        bool keep = vdef(T, n->out[0])->ndim == 4;
        y = CALL(T, mean_dim, &m, 4, N(x), ls_arg_ints(dims, 2), ls_arg_bool(keep), ls_arg_none());
        out_f(T, n, 0, y, true);
        return 0;
    }
    default: return refuse(T, n, "unknown unary op");
    }
    out_f(T, n, 0, y, false);
    return 0;
}

static int binary(twin *T, const ls_xnn_node *n)
{
    ls_tmeta m, mb;
    out_meta(T, n, &m);
    mb = m;
    mb.dtype = LS_DT_BOOL;
    uint32_t a = in_f(T, n, 0), b = in_f(T, n, 1), y;
    bool clamps = true;
    switch (n->type) {
    case LS_XNN_Add: y = CALL(T, add_Tensor, &m, 3, N(a), N(b), ls_arg_int(1)); break;
    case LS_XNN_Subtract: y = CALL(T, sub_Tensor, &m, 3, N(a), N(b), ls_arg_int(1)); break;
    case LS_XNN_Multiply: y = CALL(T, mul_Tensor, &m, 2, N(a), N(b)); break;
    case LS_XNN_Div: y = CALL(T, div_Tensor, &m, 2, N(a), N(b)); break;
    case LS_XNN_Minimum: y = CALL(T, where_self, &m, 3, N(CALL(T, lt_Tensor, &mb, 2, N(b), N(a))), N(b), N(a)); clamps = false; break;
    case LS_XNN_Maximum: y = CALL(T, where_self, &m, 3, N(CALL(T, gt_Tensor, &mb, 2, N(b), N(a))), N(b), N(a)); clamps = false; break;
    case LS_XNN_PReLU:
        y = CALL(T, where_self, &m, 3, N(CALL(T, lt_Scalar, &mb, 2, N(a), ls_arg_int(0))),
                 N(CALL(T, mul_Tensor, &m, 2, N(a), N(b))), N(a));
        clamps = false;
        break;
    case LS_XNN_BatchMatrixMultiply: {
        if (n->flags & 1) {
            const ls_xnn_value *bv = vdef(T, n->in[1]);
            ls_tmeta mt = meta_of_value(T, bv, LS_DT_F32);
            int64_t t = mt.sizes[mt.ndim - 1];
            mt.sizes[mt.ndim - 1] = mt.sizes[mt.ndim - 2];
            mt.sizes[mt.ndim - 2] = t;
            b = CALL(T, transpose_copy_int, &mt, 3, N(b), ls_arg_int(-1), ls_arg_int(-2));
        }
        y = CALL(T, matmul, &m, 2, N(a), N(b));
        clamps = false;
        break;
    }
    default: return refuse(T, n, "unknown binary op");
    }
    out_f(T, n, 0, y, clamps);
    return 0;
}

static int move(twin *T, const ls_xnn_node *n)
{
    const ls_xnn_value *ov = vdef(T, n->out[0]);
    ls_tmeta m = meta_of_value(T, ov, lsx_storage(ov->datatype));
    uint32_t x = T->node_of[ls_xnn_value_pos(T->g, n->in[0])], y;
    switch (n->type) {
    case LS_XNN_StaticTranspose: {
        int64_t perm[LS_XNN_MAX_DIMS];
        for (unsigned i = 0; i < n->p.dims.n; i++) perm[i] = n->p.dims.v[i];
        y = CALL(T, permute_copy, &m, 2, N(x), ls_arg_ints(perm, n->p.dims.n));
        break;
    }
    case LS_XNN_StaticReshape: {
        int64_t shape[LS_XNN_MAX_DIMS];
        for (unsigned i = 0; i < n->p.dims.n; i++) shape[i] = n->p.dims.v[i] ? (int64_t)n->p.dims.v[i] : -1;
        y = CALL(T, view_copy, &m, 2, N(x), ls_arg_ints(shape, n->p.dims.n));
        break;
    }
    case LS_XNN_StaticSlice:
        y = x;
        for (unsigned d = 0; d < n->p.slice.n; d++) {
            int64_t off = n->p.slice.offsets[d], size = n->p.slice.sizes[d];
            if (off == 0 && (size == 0 || size == vdef(T, n->in[0])->dims[d])) continue;
            y = CALL(T, slice_copy_Tensor, &m, 5, N(y), ls_arg_int(d), ls_arg_int(off), size ? ls_arg_int(off + size) : ls_arg_none(),
                     ls_arg_int(1));
        }
        if (y == x) y = CALL(T, clone, &m, 2, N(x), ls_arg_none());
        break;
    case LS_XNN_StaticConstantPad: {
        int64_t pads[2 * LS_XNN_MAX_DIMS];
        unsigned nd = n->p.pad.n;
        for (unsigned d = 0; d < nd; d++) {
            pads[2 * d] = n->p.pad.pre[nd - 1 - d];
            pads[2 * d + 1] = n->p.pad.post[nd - 1 - d];
        }
        if (is_q(ov->datatype)) return refuse(T, n, "a quantized padding value");
        y = CALL(T, constant_pad_nd, &m, 3, N(x), ls_arg_ints(pads, 2 * nd), ls_arg_float(n->p.pad.value));
        break;
    }
    default: { /* concatenate */
        uint32_t ids[5];
        for (unsigned k = 0; k < n->n_in; k++) ids[k] = T->node_of[ls_xnn_value_pos(T->g, n->in[k])];
        y = CALL(T, cat, &m, 2, ls_arg_nodes(ids, n->n_in, false), ls_arg_int(n->p.axis));
        break;
    }
    }
    T->node_of[ls_xnn_value_pos(T->g, n->out[0])] = y;
    return 0;
}

static int convert(twin *T, const ls_xnn_node *n)
{
    const ls_xnn_value *iv = vdef(T, n->in[0]), *ov = vdef(T, n->out[0]);
    uint32_t x = T->node_of[ls_xnn_value_pos(T->g, n->in[0])];
    uint32_t *out = &T->node_of[ls_xnn_value_pos(T->g, n->out[0])];
    if (ov->datatype == LS_XNN_DT_QDINT8) { /* stays float: see the header */
        *out = x;
        return 0;
    }
    if (is_q(iv->datatype)) x = dequant(T, x, iv);
    if (is_q(ov->datatype)) {
        *out = quant(T, x, ov, -INFINITY, INFINITY);
        return 0;
    }
    ls_dtype want = lsx_storage(ov->datatype);
    ls_tmeta m = meta_of_value(T, ov, want);
    *out = CALL(T, _to_copy, &m, 7, N(x), A_dtype(want), ls_arg_none(), ls_arg_none(), ls_arg_none(), ls_arg_bool(false),
                ls_arg_none());
    return 0;
}

static int sdpa(twin *T, const ls_xnn_node *n)
{
    const ls_xnn_value *qv = vdef(T, n->in[0]), *kv = vdef(T, n->in[1]);
    ls_tmeta mq = meta_of_value(T, qv, LS_DT_F32), mk = meta_of_value(T, kv, LS_DT_F32), mo;
    out_meta(T, n, &mo);
    ls_tmeta mw = mq;
    mw.sizes[mw.ndim - 1] = kv->dims[kv->ndim - 2];
    int64_t t = mk.sizes[mk.ndim - 1];
    mk.sizes[mk.ndim - 1] = mk.sizes[mk.ndim - 2];
    mk.sizes[mk.ndim - 2] = t;
    uint32_t q = CALL(T, mul_Tensor, &mq, 2, N(in_f(T, n, 0)), N(in_f(T, n, 3)));
    uint32_t kt = CALL(T, transpose_copy_int, &mk, 3, N(in_f(T, n, 1)), ls_arg_int(-1), ls_arg_int(-2));
    uint32_t w = CALL(T, matmul, &mw, 2, N(q), N(kt));
    if (n->in[4] != LS_XNN_INVALID_ID) w = CALL(T, add_Tensor, &mw, 3, N(w), N(in_f(T, n, 4)), ls_arg_int(1));
    w = CALL(T, softmax_int, &mw, 3, N(w), ls_arg_int(-1), ls_arg_none());
    out_f(T, n, 0, CALL(T, matmul, &mo, 2, N(w), N(in_f(T, n, 2))), false);
    return 0;
}

static int express(twin *T, const ls_xnn_node *n)
{
    switch (lsx_node_layout(n->type)) {
    case LSX_L_2X1: return binary(T, n);
    case LSX_L_1X1: return n->type == LS_XNN_Convert ? convert(T, n) : unary(T, n);
    case LSX_L_ALPHA: return unary(T, n);
    case LSX_L_FC: return fully_connected(T, n);
    case LSX_L_CONV: return n->type == LS_XNN_ConvTranspose2d ? refuse(T, n, "transposed convolution") : conv2d(T, n);
    case LSX_L_POOL: return pool2d(T, n);
    case LSX_L_RESIZE: return resize(T, n);
    case LSX_L_DIMS:
    case LSX_L_SLICE:
    case LSX_L_PAD:
    case LSX_L_CAT: return move(T, n);
    case LSX_L_SDPA: return sdpa(T, n);
    case LSX_L_ARGMAXPOOL: return refuse(T, n, "argmax pooling");
    default: return ls_fail_needs(T->err, "xnodes[%u]: xnode type %u has no portable twin", T->cur, n->type);
    }
}

int ls_xnn_twin(const ls_xnn_graph *g, const ls_blob *blob, const ls_named_data *named, const char *name,
                ls_program **out, ls_error *err)
{
    *out = NULL;
    twin T = {.g = g, .blob = blob, .named = named, .err = err, .sym = ls_intern("s")};
    T.b = ls_builder_new(name ? name : "xnnpack_twin", LS_DIALECT_EDGE);
    T.node_of = ls_calloc(g->n_values ? g->n_values : 1, sizeof *T.node_of);
    /* external inputs in external-id order, then the outputs in theirs (XNNExecutor's order) */
    uint32_t n_in = 0, n_out = 0;
    for (uint32_t i = 0; i < g->n_values; i++) {
        n_in += (g->values[i].flags & LS_XNN_FLAG_EXTERNAL_INPUT) != 0;
        n_out += (g->values[i].flags & LS_XNN_FLAG_EXTERNAL_OUTPUT) != 0;
    }
    int rc = 0;
    for (uint32_t k = 0; k < n_in && rc == 0; k++) {
        uint32_t i = 0;
        while (i < g->n_values && !((g->values[i].flags & LS_XNN_FLAG_EXTERNAL_INPUT) && g->values[i].external_id == k)) i++;
        if (i == g->n_values) {
            rc = ls_fail(err, "no external input has id %u", k);
            break;
        }
        char nm[32];
        snprintf(nm, sizeof nm, "x%u", k);
        ls_tmeta m = meta_of_value(&T, &g->values[i], lsx_storage(g->values[i].datatype));
        T.node_of[i] = ls_build_input(T.b, nm, LS_IN_USER_INPUT, NULL, false, &m, NULL);
    }
    /* constants read as values: every input but the weights and biases of fully connected and
     * convolution nodes, which are folded into their node */
    bool *read = ls_calloc(g->n_values ? g->n_values : 1, sizeof *read);
    for (uint32_t i = 0; i < g->n_nodes; i++) {
        const ls_xnn_node *n = &g->nodes[i];
        bool weights = lsx_node_layout(n->type) == LSX_L_FC || lsx_node_layout(n->type) == LSX_L_CONV;
        for (unsigned k = 0; k < (weights ? 1u : n->n_in); k++)
            if (n->in[k] != LS_XNN_INVALID_ID) read[ls_xnn_value_pos(g, n->in[k])] = true;
    }
    for (uint32_t i = 0; i < g->n_values && rc == 0; i++) {
        const ls_xnn_value *v = &g->values[i];
        if (!v->constant_idx || !read[i]) continue;
        uint64_t size;
        const uint8_t *p = ls_xnn_constant_bytes(g, blob, named, v->constant_idx, &size, err);
        ls_dtype dt = lsx_storage(v->datatype);
        if (!p || v->datatype == LS_XNN_DT_QCINT4 || v->datatype == LS_XNN_DT_QBINT4 || dt == LS_DT_UNKNOWN) continue;
        int64_t dims[LS_XNN_MAX_DIMS];
        for (unsigned d = 0; d < v->ndim; d++) dims[d] = v->dims[d];
        ls_tensor *t = ls_tensor_alloc(dt, v->ndim, dims);
        if (size < t->nbytes) {
            ls_tensor_unref(t);
            continue;
        }
        memcpy(t->data, p, t->nbytes);
        T.node_of[i] = constant(&T, t);
    }
    for (uint32_t i = 0; i < g->n_nodes && rc == 0; i++) {
        const ls_xnn_node *n = &g->nodes[i];
        T.cur = i;
        bool weights = lsx_node_layout(n->type) == LSX_L_FC || lsx_node_layout(n->type) == LSX_L_CONV;
        for (unsigned k = 0; k < (weights ? 1u : n->n_in) && rc == 0; k++)
            if (n->in[k] != LS_XNN_INVALID_ID && !T.node_of[ls_xnn_value_pos(g, n->in[k])])
                rc = ls_fail(err, "xnodes[%u]: input %u (value %u) is not computed before it", i, k, n->in[k]);
        if (rc == 0) rc = express(&T, n);
    }
    free(read);
    uint32_t *outs = ls_calloc(n_out + 1, sizeof *outs);
    for (uint32_t k = 0; k < n_out && rc == 0; k++) {
        uint32_t i = 0;
        while (i < g->n_values && !((g->values[i].flags & LS_XNN_FLAG_EXTERNAL_OUTPUT) && g->values[i].external_id == n_in + k))
            i++;
        if (i == g->n_values || !T.node_of[i]) rc = ls_fail(err, "external output %u is computed by no node", n_in + k);
        else outs[k] = T.node_of[i];
    }
    if (rc == 0) ls_build_output(T.b, outs, n_out, NULL, NULL);
    free(outs);
    free(T.node_of);
    ls_program *p = ls_builder_finish(T.b);
    if (rc != 0) {
        ls_fail_prefix(err, "%s: portable twin", name ? name : "XNNPACK blob");
        ls_program_unref(p);
        return -1;
    }
    *out = p;
    return 0;
}
