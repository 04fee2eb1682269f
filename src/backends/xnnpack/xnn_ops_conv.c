/* XNNPACK's NHWC convolutions (xnn_define_convolution_2d, _depthwise_convolution_2d,
 * _deconvolution_2d as XNNCompiler.cpp's defineConv2dNode, defineDepthwiseConv2dNode and
 * defineConvTranspose2dNode call them).
 *
 * Conv2d: input [N, H, W, groups·group_in], filter [groups·group_out, KH, KW, group_in], output
 * [N, OH, OW, groups·group_out], OH = (H + pad_top + pad_bottom - dilation·(KH-1) - 1) / stride + 1.
 * Each group is one GEMM of the input's patches (im2col, skipped for 1x1 stride-1 unpadded
 * convolutions) with the packed filter, written straight into the output's columns; static qs8
 * runs in int8 (padding with the input's zero point, so it adds nothing). DepthwiseConv2d:
 * filter [1, KH, KW, C·M], output channel c reads input channel c / M (depth multiplier
 * M = group_out / group_in, input channels = groups). ConvTranspose2d: output
 * OH = stride·(H-1) + adjustment + dilation·(KH-1) + 1 - pad_top - pad_bottom. The nodes
 * computed in float (DepthwiseConv2d, ConvTranspose2d) clamp a qint8 output in its steps, as
 * XNNPACK's qs8 operators take int8 bounds (lsx_out_done_clamped). */
#include <math.h>
#include <stdlib.h>
#include <string.h>

#include "gemm.h"
#include "xnn_internal.h"

typedef struct geom {
    int64_t N, H, W, C, OH, OW, KH, KW, sh, sw, dh, dw, pt, pl, O, G, gi, go;
} geom;

static int conv_geom(lsx_run *R, uint32_t node, const ls_tensor *in, bool transposed, geom *g)
{
    const ls_xnn_node *n = &R->g->nodes[node];
    const __typeof__(n->p.conv) *c = &n->p.conv;
    if (in->ndim != 4) return lsx_fail(R, node, "input is %d-d, XNNPACK's convolutions take [N, H, W, C]", in->ndim);
    *g = (geom){.N = in->sizes[0], .H = in->sizes[1], .W = in->sizes[2], .C = in->sizes[3], .KH = c->kernel_h,
                .KW = c->kernel_w, .sh = c->stride_h ? c->stride_h : 1, .sw = c->stride_w ? c->stride_w : 1,
                .dh = c->dilation_h ? c->dilation_h : 1, .dw = c->dilation_w ? c->dilation_w : 1, .pt = c->pad_top,
                .pl = c->pad_left, .G = c->groups, .gi = c->group_in, .go = c->group_out};
    g->O = g->G * g->go;
    if (!g->KH || !g->KW || !g->G) return lsx_fail(R, node, "a kernel or group count of 0");
    bool dw = n->type == LS_XNN_DepthwiseConv2d;
    if (g->C != (dw ? g->G : g->G * g->gi))
        return lsx_fail(R, node, "the input has %lld channels, the node takes %lld", (long long)g->C,
                        (long long)(dw ? g->G : g->G * g->gi));
    int64_t eh = (g->KH - 1) * g->dh + 1, ew = (g->KW - 1) * g->dw + 1;
    if (transposed) {
        g->OH = g->sh * (g->H - 1) + c->adjust_h + eh - c->pad_top - c->pad_bottom;
        g->OW = g->sw * (g->W - 1) + c->adjust_w + ew - c->pad_left - c->pad_right;
    } else {
        int64_t ph = g->H + c->pad_top + c->pad_bottom, pw = g->W + c->pad_left + c->pad_right;
        if (ph < eh || pw < ew) return lsx_fail(R, node, "the kernel does not fit the padded input");
        g->OH = (ph - eh) / g->sh + 1;
        g->OW = (pw - ew) / g->sw + 1;
    }
    if (g->OH <= 0 || g->OW <= 0) return lsx_fail(R, node, "the output would be empty");
    return 0;
}

/* Patches of group `grp` into rows [M][KH·KW·gi] (element size es, pad with `fill`). */
static void im2col(const geom *g, const uint8_t *x, size_t es, int64_t grp, const void *fill, uint8_t *a)
{
    int64_t K = g->KH * g->KW * g->gi;
    for (int64_t b = 0; b < g->N; b++)
        for (int64_t oy = 0; oy < g->OH; oy++)
            for (int64_t ox = 0; ox < g->OW; ox++) {
                uint8_t *row = a + (((b * g->OH + oy) * g->OW + ox) * K) * es;
                for (int64_t ky = 0; ky < g->KH; ky++) {
                    int64_t iy = oy * g->sh + ky * g->dh - g->pt;
                    for (int64_t kx = 0; kx < g->KW; kx++) {
                        int64_t ix = ox * g->sw + kx * g->dw - g->pl;
                        uint8_t *dst = row + ((ky * g->KW + kx) * g->gi) * es;
                        if (iy < 0 || iy >= g->H || ix < 0 || ix >= g->W) {
                            for (int64_t c = 0; c < g->gi; c++) memcpy(dst + c * es, fill, es);
                        } else {
                            memcpy(dst, x + (((b * g->H + iy) * g->W + ix) * g->C + grp * g->gi) * es, (size_t)g->gi * es);
                        }
                    }
                }
            }
}

static int conv_int8(lsx_run *R, uint32_t node, const ls_tensor *in, const geom *g)
{
    const ls_xnn_node *n = &R->g->nodes[node];
    const lsx_prep *p = &R->prep[node];
    const ls_xnn_value *id = lsx_def(R, n->in[0]), *od = lsx_def(R, n->out[0]);
    if (in->dtype != LS_DT_I8 || od->datatype != LS_XNN_DT_QINT8)
        return lsx_fail(R, node, "a static quantized convolution needs qint8 in and out");
    int64_t dims[4] = {g->N, g->OH, g->OW, g->O}, M = g->N * g->OH * g->OW, K = g->KH * g->KW * g->gi;
    ls_tensor *out = lsx_out(R, node, 0, 4, dims);
    if (!out) return -1;
    int8_t *a = ls_alloc_aligned((size_t)(M * K) + 64);
    int32_t *acc = ls_alloc_aligned((size_t)(M * g->go) * 4 + 4);
    if (!a || !acc) {
        ls_free_aligned(a);
        ls_free_aligned(acc);
        return lsx_fail(R, node, "out of memory");
    }
    int8_t zp = (int8_t)id->zero_point;
    for (int64_t grp = 0; grp < g->G; grp++) {
        im2col(g, in->data, 1, grp, &zp, (uint8_t *)a);
        ls_qgemm_s8_packed(M, a, K, p->wq[grp], acc, g->go);
        /* requantize into the group's output columns */
        int32_t lo, hi;
        lsx_q_bounds(n, od->scale, od->zero_point, &lo, &hi);
        for (int64_t m = 0; m < M; m++)
            for (int64_t j = 0; j < g->go; j++) {
                int64_t c = grp * g->go + j;
                int32_t v = acc[m * g->go + j] - id->zero_point * p->wsum[c] + (p->bias32 ? p->bias32[c] : 0);
                float y = lsx_round_q((float)v * (id->scale * p->wscale[c] / od->scale)) + (float)od->zero_point;
                ((int8_t *)out->data)[m * g->O + c] = (int8_t)(y < lo ? lo : y > hi ? hi : y);
            }
    }
    ls_free_aligned(a);
    ls_free_aligned(acc);
    return 0;
}

static void depthwise(const geom *g, const float *x, const float *w, const float *bias, float *o)
{
    int64_t mult = g->go / (g->gi ? g->gi : 1);
    if (mult < 1) mult = 1;
    for (int64_t b = 0; b < g->N; b++)
        for (int64_t oy = 0; oy < g->OH; oy++)
            for (int64_t ox = 0; ox < g->OW; ox++) {
                float *orow = o + ((b * g->OH + oy) * g->OW + ox) * g->O;
                for (int64_t c = 0; c < g->O; c++) orow[c] = bias ? bias[c] : 0;
                for (int64_t ky = 0; ky < g->KH; ky++) {
                    int64_t iy = oy * g->sh + ky * g->dh - g->pt;
                    if (iy < 0 || iy >= g->H) continue;
                    for (int64_t kx = 0; kx < g->KW; kx++) {
                        int64_t ix = ox * g->sw + kx * g->dw - g->pl;
                        if (ix < 0 || ix >= g->W) continue;
                        const float *xr = x + ((b * g->H + iy) * g->W + ix) * g->C;
                        const float *wr = w + (ky * g->KW + kx) * g->O;
                        if (mult == 1)
                            for (int64_t c = 0; c < g->O; c++) orow[c] += xr[c] * wr[c];
                        else
                            for (int64_t c = 0; c < g->O; c++) orow[c] += xr[c / mult] * wr[c];
                    }
                }
            }
}

int lsx_conv2d(lsx_run *R, uint32_t node)
{
    const ls_xnn_node *n = &R->g->nodes[node];
    const lsx_prep *p = &R->prep[node];
    ls_tensor *in = lsx_in(R, node, 0);
    geom g;
    if (!in || conv_geom(R, node, in, false, &g) != 0) return -1;
    if (p->w8) return conv_int8(R, node, in, &g);
    int64_t dims[4] = {g.N, g.OH, g.OW, g.O}, M = g.N * g.OH * g.OW, K = g.KH * g.KW * g.gi;
    void *tmp;
    const float *x;
    ls_tensor *out;
    float *o;
    if (lsx_float_io(R, node, 4, dims, &x, &tmp, &out, &o) != 0) return -1;
    if (n->type == LS_XNN_DepthwiseConv2d) {
        depthwise(&g, x, p->w, p->bias, o);
    } else {
        bool direct = g.KH == 1 && g.KW == 1 && g.sh == 1 && g.sw == 1 && g.G == 1 && g.pt == 0 && g.pl == 0 &&
                      g.OH == g.H && g.OW == g.W;
        float *a = direct ? NULL : ls_alloc_aligned((size_t)(M * K) * 4 + 4);
        if (!direct && !a) {
            ls_free_aligned(tmp);
            lsx_out_drop(out, o);
            return lsx_fail(R, node, "out of memory for the %lld x %lld patches", (long long)M, (long long)K);
        }
        float zero = 0;
        for (int64_t grp = 0; grp < g.G; grp++) {
            if (!direct) im2col(&g, (const uint8_t *)x, 4, grp, &zero, (uint8_t *)a);
            ls_sgemm_ex(M, g.go, K, 1.0f, direct ? x : a, K, 1, p->w + grp * g.go, g.O, 1, 0.0f, o + grp * g.go, g.O);
        }
        ls_free_aligned(a);
        if (p->bias)
            for (int64_t m = 0; m < M; m++)
                for (int64_t c = 0; c < g.O; c++) o[m * g.O + c] += p->bias[c];
    }
    lsx_out_done_clamped(R, node, out, o);
    ls_free_aligned(tmp);
    return 0;
}

int lsx_deconv2d(lsx_run *R, uint32_t node)
{
    const lsx_prep *p = &R->prep[node];
    ls_tensor *in = lsx_in(R, node, 0);
    geom g;
    if (!in || conv_geom(R, node, in, true, &g) != 0) return -1;
    int64_t dims[4] = {g.N, g.OH, g.OW, g.O}, K = g.KH * g.KW * g.gi;
    void *tmp;
    const float *x;
    ls_tensor *out;
    float *o;
    if (lsx_float_io(R, node, 4, dims, &x, &tmp, &out, &o) != 0) return -1;
    for (int64_t i = 0; i < out->numel; i++) o[i] = p->bias ? p->bias[i % g.O] : 0;
    /* every input pixel scatters its kernel-sized patch: p->w is [K][O], K = (ky, kx, i) */
    for (int64_t b = 0; b < g.N; b++)
        for (int64_t iy = 0; iy < g.H; iy++)
            for (int64_t ix = 0; ix < g.W; ix++) {
                const float *xr = x + ((b * g.H + iy) * g.W + ix) * g.C;
                for (int64_t ky = 0; ky < g.KH; ky++) {
                    int64_t oy = iy * g.sh + ky * g.dh - g.pt;
                    if (oy < 0 || oy >= g.OH) continue;
                    for (int64_t kx = 0; kx < g.KW; kx++) {
                        int64_t ox = ix * g.sw + kx * g.dw - g.pl;
                        if (ox < 0 || ox >= g.OW) continue;
                        float *orow = o + ((b * g.OH + oy) * g.OW + ox) * g.O;
                        for (int64_t grp = 0; grp < g.G; grp++)
                            for (int64_t i = 0; i < g.gi; i++) {
                                float xv = xr[grp * g.gi + i];
                                const float *wr = p->w + ((ky * g.KW + kx) * g.gi + i) * g.O + grp * g.go;
                                for (int64_t j = 0; j < g.go; j++) orow[grp * g.go + j] += xv * wr[j];
                            }
                    }
                }
            }
    (void)K;
    lsx_out_done_clamped(R, node, out, o);
    ls_free_aligned(tmp);
    return 0;
}
