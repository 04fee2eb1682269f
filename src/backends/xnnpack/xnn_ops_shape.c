/* XNNPACK nodes that move data (static transpose, reshape, slice, concatenate, constant pad)
 * and the NHWC spatial ones (pooling, global average pooling, bilinear resize). The movers copy
 * elements whatever their type, as XNNPACK's do; the spatial ones read floats (dequantized) and
 * store with the output's parameters. Layouts are XNNPACK's: [N, H, W, C] for the spatial ops
 * (the ExecuTorch passes put a transpose before and after them, channels_last_tagged_reshape_pass). */
#include <math.h>
#include <stdlib.h>
#include <string.h>

#include "xnn_internal.h"

static void strides_of(int nd, const int64_t *dims, int64_t *st)
{
    int64_t s = 1;
    for (int i = nd - 1; i >= 0; i--) {
        st[i] = s;
        s *= dims[i];
    }
}

/* dst[idx] = src[idx·src_st + base] over the block dims (element size es). */
static void copy_block(uint8_t *dst, const int64_t *dst_st, const uint8_t *src, const int64_t *src_st, size_t es, int nd,
                       const int64_t *dims)
{
    int64_t idx[LS_XNN_MAX_DIMS] = {0}, total = 1;
    for (int d = 0; d < nd; d++) total *= dims[d];
    if (!total) return;
    int64_t inner = nd ? dims[nd - 1] : 1, sd = nd ? dst_st[nd - 1] : 0, ss = nd ? src_st[nd - 1] : 0;
    for (int64_t r = 0; r < total / inner; r++) {
        int64_t od = 0, os = 0;
        for (int d = 0; d + 1 < nd; d++) od += idx[d] * dst_st[d], os += idx[d] * src_st[d];
        if (sd == 1 && ss == 1) memcpy(dst + od * es, src + os * es, (size_t)inner * es);
        else
            for (int64_t i = 0; i < inner; i++) memcpy(dst + (od + i * sd) * es, src + (os + i * ss) * es, es);
        for (int d = nd - 2; d >= 0; d--) {
            if (++idx[d] < dims[d]) break;
            idx[d] = 0;
        }
    }
}

/* A mover's output takes its input's bytes: the same storage type and quantization are needed
 * (XNNPACK's define functions for these nodes check that a quantized output's scale and zero
 * point match the input's: xnn_subgraph_check_quantization_parameter_matches). Input k. */
static int same_storage_k(lsx_run *R, uint32_t node, unsigned k, const ls_tensor *in)
{
    const ls_xnn_node *n = &R->g->nodes[node];
    const ls_xnn_value *od = lsx_def(R, n->out[0]), *id = lsx_def(R, n->in[k]);
    if (lsx_storage(od->datatype) != in->dtype)
        return lsx_fail(R, node, "output is %s, input %s: this node does not convert", ls_xnn_datatype_name(od->datatype),
                        ls_dtype_name(in->dtype));
    bool qi = id && id->quant == LS_XNN_Q_PER_TENSOR, qo = od->quant == LS_XNN_Q_PER_TENSOR;
    if ((qi || qo) && (qi != qo || id->scale != od->scale || id->zero_point != od->zero_point))
        return lsx_fail(R, node, "input %u is quantized with scale %g, zero point %d, the output with %g, %d: this node does not requantize",
                        k, qi ? (double)id->scale : 0.0, qi ? id->zero_point : 0, qo ? (double)od->scale : 0.0,
                        qo ? od->zero_point : 0);
    return 0;
}

static int same_storage(lsx_run *R, uint32_t node, const ls_tensor *in)
{
    return same_storage_k(R, node, 0, in);
}

int lsx_transpose(lsx_run *R, uint32_t node)
{
    const ls_xnn_node *n = &R->g->nodes[node];
    ls_tensor *in = lsx_in(R, node, 0);
    if (!in || same_storage(R, node, in) != 0) return -1;
    int nd = (int)n->p.dims.n;
    if (nd != in->ndim) return lsx_fail(R, node, "perm has %d entries for a %d-d input", nd, in->ndim);
    int64_t dims[LS_XNN_MAX_DIMS], ist[LS_XNN_MAX_DIMS], src_st[LS_XNN_MAX_DIMS], ost[LS_XNN_MAX_DIMS];
    bool seen[LS_XNN_MAX_DIMS] = {0};
    for (int d = 0; d < nd; d++) {
        uint32_t p = n->p.dims.v[d];
        if (p >= (uint32_t)nd || seen[p]) return lsx_fail(R, node, "perm is not a permutation of 0..%d", nd - 1);
        seen[p] = true;
        dims[d] = in->sizes[p];
    }
    strides_of(nd, in->sizes, ist);
    for (int d = 0; d < nd; d++) src_st[d] = ist[n->p.dims.v[d]];
    ls_tensor *out = lsx_out(R, node, 0, nd, dims);
    if (!out) return -1;
    strides_of(nd, dims, ost);
    copy_block(out->data, ost, in->data, src_st, ls_dtype_size(in->dtype), nd, dims);
    return 0;
}

int lsx_reshape(lsx_run *R, uint32_t node)
{
    const ls_xnn_node *n = &R->g->nodes[node];
    ls_tensor *in = lsx_in(R, node, 0);
    if (!in || same_storage(R, node, in) != 0) return -1;
    int nd = (int)n->p.dims.n, infer = -1;
    int64_t dims[LS_XNN_MAX_DIMS], known = 1;
    for (int d = 0; d < nd; d++) {
        dims[d] = n->p.dims.v[d];
        if (dims[d] == 0 && infer < 0 && in->numel) infer = d; /* a dynamic dim, inferred (one at most) */
        else known *= dims[d];
    }
    if (infer >= 0) dims[infer] = known ? in->numel / known : 0;
    int64_t total = 1;
    for (int d = 0; d < nd; d++) total *= dims[d];
    if (total != in->numel)
        return lsx_fail(R, node, "new shape holds %lld elements, the input %lld", (long long)total, (long long)in->numel);
    ls_tensor *out = lsx_out(R, node, 0, nd, dims);
    if (!out) return -1;
    memcpy(out->data, in->data, in->nbytes);
    return 0;
}

int lsx_slice(lsx_run *R, uint32_t node)
{
    const ls_xnn_node *n = &R->g->nodes[node];
    ls_tensor *in = lsx_in(R, node, 0);
    if (!in || same_storage(R, node, in) != 0) return -1;
    int nd = (int)n->p.slice.n;
    if (nd != in->ndim) return lsx_fail(R, node, "%d offsets for a %d-d input", nd, in->ndim);
    int64_t dims[LS_XNN_MAX_DIMS], ist[LS_XNN_MAX_DIMS], ost[LS_XNN_MAX_DIMS], base = 0;
    strides_of(nd, in->sizes, ist);
    for (int d = 0; d < nd; d++) {
        int64_t off = n->p.slice.offsets[d], size = n->p.slice.sizes[d];
        if (size == 0) size = in->sizes[d] - off; /* 0: to the end */
        if (off < 0 || size < 0 || off + size > in->sizes[d])
            return lsx_fail(R, node, "dim %d: offset %lld size %lld outside %lld", d, (long long)off, (long long)size,
                            (long long)in->sizes[d]);
        dims[d] = size;
        base += off * ist[d];
    }
    ls_tensor *out = lsx_out(R, node, 0, nd, dims);
    if (!out) return -1;
    strides_of(nd, dims, ost);
    size_t es = ls_dtype_size(in->dtype);
    copy_block(out->data, ost, (const uint8_t *)in->data + base * es, ist, es, nd, dims);
    return 0;
}

int lsx_concat(lsx_run *R, uint32_t node)
{
    const ls_xnn_node *n = &R->g->nodes[node];
    ls_tensor *ins[5];
    for (unsigned k = 0; k < n->n_in; k++)
        if (!(ins[k] = lsx_in(R, node, k))) return -1;
    for (unsigned k = 0; k < n->n_in; k++)
        if (same_storage_k(R, node, k, ins[k]) != 0) return -1;
    int nd = ins[0]->ndim;
    uint32_t axis = n->p.axis;
    if (axis >= (uint32_t)nd) return lsx_fail(R, node, "axis %u of a %d-d input", axis, nd);
    int64_t dims[LS_XNN_MAX_DIMS];
    memcpy(dims, ins[0]->sizes, sizeof(int64_t) * (size_t)nd);
    dims[axis] = 0;
    for (unsigned k = 0; k < n->n_in; k++) {
        if (ins[k]->ndim != nd || ins[k]->dtype != ins[0]->dtype) return lsx_fail(R, node, "inputs differ in rank or type");
        for (int d = 0; d < nd; d++)
            if (d != (int)axis && ins[k]->sizes[d] != ins[0]->sizes[d])
                return lsx_fail(R, node, "input %u differs in dim %d", k, d);
        dims[axis] += ins[k]->sizes[axis];
    }
    ls_tensor *out = lsx_out(R, node, 0, nd, dims);
    if (!out) return -1;
    int64_t ost[LS_XNN_MAX_DIMS], ist[LS_XNN_MAX_DIMS], at = 0;
    strides_of(nd, dims, ost);
    size_t es = ls_dtype_size(out->dtype);
    for (unsigned k = 0; k < n->n_in; k++) {
        strides_of(nd, ins[k]->sizes, ist);
        copy_block((uint8_t *)out->data + at * ost[axis] * es, ost, ins[k]->data, ist, es, nd, ins[k]->sizes);
        at += ins[k]->sizes[axis];
    }
    return 0;
}

int lsx_pad(lsx_run *R, uint32_t node)
{
    const ls_xnn_node *n = &R->g->nodes[node];
    ls_tensor *in = lsx_in(R, node, 0);
    if (!in || same_storage(R, node, in) != 0) return -1;
    int nd = in->ndim;
    if ((int)n->p.pad.n != nd) return lsx_fail(R, node, "%u paddings for a %d-d input", n->p.pad.n, nd);
    int64_t dims[LS_XNN_MAX_DIMS], ost[LS_XNN_MAX_DIMS], ist[LS_XNN_MAX_DIMS], base = 0;
    for (int d = 0; d < nd; d++) dims[d] = in->sizes[d] + n->p.pad.pre[d] + n->p.pad.post[d];
    ls_tensor *out = lsx_out(R, node, 0, nd, dims);
    if (!out) return -1;
    /* the padding value, stored as the output stores a float (quantized with its parameters) */
    float *fill = ls_alloc_aligned((size_t)out->numel * 4 + 4);
    if (!fill) return lsx_fail(R, node, "out of memory");
    for (int64_t i = 0; i < out->numel; i++) fill[i] = n->p.pad.value;
    lsx_store_f32(R, node, 0, out, fill);
    ls_free_aligned(fill);
    strides_of(nd, dims, ost);
    strides_of(nd, in->sizes, ist);
    for (int d = 0; d < nd; d++) base += n->p.pad.pre[d] * ost[d];
    size_t es = ls_dtype_size(in->dtype);
    copy_block((uint8_t *)out->data + base * es, ost, in->data, ist, es, nd, in->sizes);
    return 0;
}

/* ---- NHWC pooling */

static int nhwc(lsx_run *R, uint32_t node, const ls_tensor *t)
{
    if (t->ndim != 4) return lsx_fail(R, node, "input is %d-d, XNNPACK's 2-D pooling takes [N, H, W, C]", t->ndim);
    return 0;
}

int lsx_pool2d(lsx_run *R, uint32_t node)
{
    const ls_xnn_node *n = &R->g->nodes[node];
    const __typeof__(n->p.pool) *p = &n->p.pool;
    ls_tensor *in = lsx_in(R, node, 0);
    if (!in || nhwc(R, node, in) != 0) return -1;
    int64_t N = in->sizes[0], H = in->sizes[1], W = in->sizes[2], C = in->sizes[3];
    /* defineAvgPooling2dNode passes no dilation (xnn_define_average_pooling_2d has none): the
     * fields are ignored there */
    bool avg = n->type == LS_XNN_AvgPooling2d;
    int64_t dh = p->dilation_h && !avg ? p->dilation_h : 1, dw = p->dilation_w && !avg ? p->dilation_w : 1;
    int64_t sh = p->stride_h ? p->stride_h : 1, sw = p->stride_w ? p->stride_w : 1;
    int64_t eh = (int64_t)(p->pool_h - 1) * dh + 1, ew = (int64_t)(p->pool_w - 1) * dw + 1;
    int64_t ph = H + p->pad_top + p->pad_bottom, pw = W + p->pad_left + p->pad_right;
    if (!p->pool_h || !p->pool_w || ph < eh || pw < ew) return lsx_fail(R, node, "the window does not fit the input");
    int64_t OH = (ph - eh) / sh + 1, OW = (pw - ew) / sw + 1;
    /* the loops visit every window tap of every output: refuse what would run for hours */
    if ((double)N * OH * OW * C * p->pool_h * p->pool_w > 1e11)
        return ls_fail_needs(R->err, "%s: xnodes[%u]: a %ux%u pooling window over %lldx%lld outputs is too much work", R->name,
                             node, p->pool_h, p->pool_w, (long long)OH, (long long)OW);
    int64_t dims[4] = {N, OH, OW, C};
    void *tmp;
    const float *x = lsx_in_f32(R, node, 0, &tmp);
    if (!x) return -1;
    ls_tensor *out = lsx_out(R, node, 0, 4, dims);
    ls_tensor *idx = out && n->type == LS_XNN_ArgMaxPooling2d ? lsx_out(R, node, 1, 4, dims) : NULL;
    if (idx && idx->dtype != LS_DT_I32) {
        ls_free_aligned(tmp);
        return lsx_fail(R, node, "the index output is %s, not 32-bit integers", ls_dtype_name(idx->dtype));
    }
    float *o = lsx_out_f32(R, node, out);
    if (!o || (n->type == LS_XNN_ArgMaxPooling2d && !idx)) {
        ls_free_aligned(tmp);
        lsx_out_drop(out, o);
        return -1;
    }
    bool maxp = n->type != LS_XNN_AvgPooling2d;
    for (int64_t b = 0; b < N; b++)
        for (int64_t oy = 0; oy < OH; oy++)
            for (int64_t ox = 0; ox < OW; ox++)
                for (int64_t c = 0; c < C; c++) {
                    float acc = maxp ? -INFINITY : 0;
                    int64_t count = 0, best = 0;
                    for (int64_t ky = 0; ky < p->pool_h; ky++) {
                        int64_t iy = oy * sh + ky * dh - p->pad_top;
                        if (iy < 0 || iy >= H) continue;
                        for (int64_t kx = 0; kx < p->pool_w; kx++) {
                            int64_t ix = ox * sw + kx * dw - p->pad_left;
                            if (ix < 0 || ix >= W) continue;
                            float v = x[((b * H + iy) * W + ix) * C + c];
                            if (maxp) {
                                if (v > acc || count == 0) acc = v, best = ky * p->pool_w + kx;
                            } else {
                                acc += v;
                            }
                            count++;
                        }
                    }
                    /* XNNPACK's average pooling divides by the elements inside the input */
                    int64_t at = ((b * OH + oy) * OW + ox) * C + c;
                    o[at] = maxp ? acc : count ? acc / (float)count : 0;
                    if (idx) ((int32_t *)idx->data)[at] = (int32_t)best;
                }
    if (n->type != LS_XNN_ArgMaxPooling2d) lsx_clamp(n, o, out->numel);
    lsx_out_done(R, node, out, o);
    ls_free_aligned(tmp);
    return 0;
}

int lsx_global_avg_pool(lsx_run *R, uint32_t node)
{
    const ls_xnn_node *n = &R->g->nodes[node];
    ls_tensor *in = lsx_in(R, node, 0);
    if (!in || nhwc(R, node, in) != 0) return -1;
    int64_t N = in->sizes[0], HW = in->sizes[1] * in->sizes[2], C = in->sizes[3];
    const ls_xnn_value *od = lsx_def(R, n->out[0]);
    int64_t dims4[4] = {N, 1, 1, C}, dims2[2] = {N, C};
    void *tmp;
    const float *x;
    ls_tensor *out;
    float *o;
    if (lsx_float_io(R, node, od->ndim == 2 ? 2 : 4, od->ndim == 2 ? dims2 : dims4, &x, &tmp, &out, &o) != 0) return -1;
    for (int64_t b = 0; b < N; b++)
        for (int64_t c = 0; c < C; c++) {
            float s = 0;
            for (int64_t i = 0; i < HW; i++) s += x[(b * HW + i) * C + c];
            o[b * C + c] = HW ? s / (float)HW : 0;
        }
    lsx_clamp(n, o, out->numel);
    lsx_out_done(R, node, out, o);
    ls_free_aligned(tmp);
    return 0;
}

#define XNN_FLAG_ALIGN_CORNERS 0x8u
#define XNN_FLAG_TENSORFLOW_LEGACY_MODE 0x4u

int lsx_resize_bilinear(lsx_run *R, uint32_t node)
{
    const ls_xnn_node *n = &R->g->nodes[node];
    ls_tensor *in = lsx_in(R, node, 0);
    if (!in || nhwc(R, node, in) != 0) return -1;
    if (n->flags & XNN_FLAG_TENSORFLOW_LEGACY_MODE)
        return ls_fail_needs(R->err, "%s: xnodes[%u]: TensorFlow legacy resize (flag 0x4) is not supported", R->name, node);
    int64_t N = in->sizes[0], H = in->sizes[1], W = in->sizes[2], C = in->sizes[3];
    int64_t OH = n->p.resize.height, OW = n->p.resize.width;
    int64_t dims[4] = {N, OH, OW, C};
    void *tmp;
    const float *x;
    ls_tensor *out;
    float *o;
    if (lsx_float_io(R, node, 4, dims, &x, &tmp, &out, &o) != 0) return -1;
    bool corners = n->flags & XNN_FLAG_ALIGN_CORNERS;
    /* align_corners maps the corner pixels onto each other; otherwise pixel centres (half-pixel),
     * clamped at the low edge as torch's upsample_bilinear2d does */
    float rh = corners ? (OH > 1 ? (float)(H - 1) / (float)(OH - 1) : 0) : (float)H / (float)OH;
    float rw = corners ? (OW > 1 ? (float)(W - 1) / (float)(OW - 1) : 0) : (float)W / (float)OW;
    for (int64_t b = 0; b < N; b++)
        for (int64_t oy = 0; oy < OH; oy++) {
            float sy = corners ? oy * rh : ((float)oy + 0.5f) * rh - 0.5f;
            if (sy < 0) sy = 0;
            int64_t y0 = (int64_t)sy, y1 = y0 + 1 < H ? y0 + 1 : H - 1;
            float fy = sy - (float)y0;
            for (int64_t ox = 0; ox < OW; ox++) {
                float sx = corners ? ox * rw : ((float)ox + 0.5f) * rw - 0.5f;
                if (sx < 0) sx = 0;
                int64_t x0 = (int64_t)sx, x1 = x0 + 1 < W ? x0 + 1 : W - 1;
                float fx = sx - (float)x0;
                for (int64_t c = 0; c < C; c++) {
                    float a = x[((b * H + y0) * W + x0) * C + c], bb = x[((b * H + y0) * W + x1) * C + c];
                    float cc = x[((b * H + y1) * W + x0) * C + c], d = x[((b * H + y1) * W + x1) * C + c];
                    float top = a + (bb - a) * fx, bot = cc + (d - cc) * fx;
                    o[((b * OH + oy) * OW + ox) * C + c] = top + (bot - top) * fy;
                }
            }
        }
    lsx_out_done(R, node, out, o);
    ls_free_aligned(tmp);
    return 0;
}
