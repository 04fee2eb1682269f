/* Convolution: aten.convolution (1-D and 2-D, not transposed) and the composite conv2d, as
 * torch computes them: out[n, o, y, x] = bias[o] + sum over the group's input channels c and
 * the kernel (ky, kx) of in[n, g·C/g + c, y·s − p + ky·d, x·s − p + kx·d] · w[o, c, ky, kx],
 * zero outside the input. Accumulates in float64, returns the input's floating dtype. */
#include <inttypes.h>
#include <stdlib.h>

#include "kernels.h"

typedef struct conv_shape {
    int64_t N, C, H, W, O, KH, KW, OH, OW, groups;
    int64_t stride[2], pad[2], dil[2];
} conv_shape;

/* stride/padding/dilation: one value for every spatial dim or one per dim. */
static int spatial(ls_kctx *c, const ls_value *a, const char *what, int dims, int64_t dflt, bool positive, int64_t *out)
{
    int64_t v[LS_MAX_DIMS];
    int k = 0;
    if (lk_ints(c, a, what, v, LS_MAX_DIMS, &k) != 0) return -1;
    if (k == 0) v[k++] = dflt;
    if (k != 1 && k != dims) return ls_kfail(c, "%s has %d values for %d spatial dims", what, k, dims);
    for (int d = 0; d < dims; d++) {
        out[d] = v[k == 1 ? 0 : d];
        if (positive ? out[d] < 1 : out[d] < 0) return ls_kfail(c, "%s %" PRId64 " is out of range", what, out[d]);
    }
    return 0;
}

static int conv(ls_kctx *c, const ls_tensor *x, const ls_tensor *w, const ls_tensor *b, const ls_value *stride,
                const ls_value *padding, const ls_value *dilation, int64_t groups, ls_value *out)
{
    if (x->ndim != 3 && x->ndim != 4) return ls_kfail(c, "takes a 3-D or 4-D input (1-D or 2-D convolution), not %d-D", x->ndim);
    if (w->ndim != x->ndim) return ls_kfail(c, "weight is %d-D for a %d-D input", w->ndim, x->ndim);
    if (!ls_dtype_is_float(x->dtype) || !ls_dtype_is_float(w->dtype))
        return ls_kfail(c, "convolves floating point tensors, not %s and %s", ls_dtype_name(x->dtype), ls_dtype_name(w->dtype));
    int dims = x->ndim - 2;
    conv_shape s = {.N = x->sizes[0], .C = x->sizes[1], .H = dims == 2 ? x->sizes[2] : 1, .W = x->sizes[x->ndim - 1],
                    .O = w->sizes[0], .KH = dims == 2 ? w->sizes[2] : 1, .KW = w->sizes[w->ndim - 1], .groups = groups};
    s.stride[0] = s.stride[1] = 1;
    s.pad[0] = s.pad[1] = 0;
    s.dil[0] = s.dil[1] = 1;
    int off = dims == 2 ? 0 : 1; /* a 1-D convolution is a 2-D one of height 1 */
    if (spatial(c, stride, "stride", dims, 1, true, s.stride + off) != 0 ||
        spatial(c, padding, "padding", dims, 0, false, s.pad + off) != 0 ||
        spatial(c, dilation, "dilation", dims, 1, true, s.dil + off) != 0)
        return -1;
    if (groups < 1 || s.C % groups || s.O % groups)
        return ls_kfail(c, "groups=%" PRId64 " must divide %" PRId64 " input and %" PRId64 " output channels", groups, s.C, s.O);
    if (w->sizes[1] != s.C / groups)
        return ls_kfail(c, "weight has %" PRId64 " input channels per group, the input %" PRId64, w->sizes[1], s.C / groups);
    if (b && b->numel != s.O) return ls_kfail(c, "bias has %" PRId64 " elements for %" PRId64 " output channels", b->numel, s.O);
    int64_t eh = s.dil[0] * (s.KH - 1) + 1, ew = s.dil[1] * (s.KW - 1) + 1;
    s.OH = (s.H + 2 * s.pad[0] - eh) / s.stride[0] + 1;
    s.OW = (s.W + 2 * s.pad[1] - ew) / s.stride[1] + 1;
    if (s.H + 2 * s.pad[0] < eh || s.W + 2 * s.pad[1] < ew || s.OH < 1 || s.OW < 1)
        return ls_kfail(c, "the kernel (%" PRId64 "x%" PRId64 " dilated) is larger than the padded input (%" PRId64 "x%" PRId64 ")",
                        eh, ew, s.H + 2 * s.pad[0], s.W + 2 * s.pad[1]);
    int64_t osz[4] = {s.N, s.O, s.OH, s.OW};
    if (dims == 1) osz[2] = s.OW;
    /* ExecuTorch's convolution_out resizes its planned output to this shape, which fails when
     * the program's static shape is another (op_convolution.cpp, resize_tensor): said before
     * anything is allocated, not after computing it (a .bpte whose stride and padding made
     * float32[1, 4, 4, 32899076] of a [1, 4, 4, 4] allocated 6 GiB and ran for seconds) */
    if (c->node && c->node->val_kind == LS_VAL_TENSOR && c->node->nvals == 1 && c->node->vals[0].dtype != LS_DT_UNKNOWN) {
        ls_tmeta got;
        ls_tmeta_init(&got, x->dtype, x->ndim, osz);
        if (!ls_tmeta_fits(&c->node->vals[0], &got)) {
            char s1[128], s2[128];
            return ls_kfail(c, "produced %s where the program says %s", ls_tmeta_str(&got, s1, sizeof s1),
                            ls_tmeta_str(&c->node->vals[0], s2, sizeof s2));
        }
    }
    ls_tensor *y = lk_new(c, x->dtype, x->ndim, osz);
    if (!y) return -1;
    void *tx, *tw, *tb = NULL;
    const double *xd = lk_as(x, LS_DT_F64, &tx), *wd = lk_as(w, LS_DT_F64, &tw);
    const double *bd = b ? lk_as(b, LS_DT_F64, &tb) : NULL;
    double *yd = lk_alloc_tmp(sizeof(double) * (size_t)(y->numel ? y->numel : 1));
    int64_t cpg = s.C / groups, opg = s.O / groups;
    for (int64_t n = 0; n < s.N; n++)
        for (int64_t o = 0; o < s.O; o++) {
            int64_t g = o / opg;
            for (int64_t oy = 0; oy < s.OH; oy++)
                for (int64_t ox = 0; ox < s.OW; ox++) {
                    double acc = bd ? bd[o] : 0.0;
                    for (int64_t ci = 0; ci < cpg; ci++) {
                        const double *xc = xd + ((n * s.C + g * cpg + ci) * s.H) * s.W;
                        const double *wc = wd + ((o * cpg + ci) * s.KH) * s.KW;
                        for (int64_t ky = 0; ky < s.KH; ky++) {
                            int64_t iy = oy * s.stride[0] - s.pad[0] + ky * s.dil[0];
                            if (iy < 0 || iy >= s.H) continue;
                            for (int64_t kx = 0; kx < s.KW; kx++) {
                                int64_t ix = ox * s.stride[1] - s.pad[1] + kx * s.dil[1];
                                if (ix >= 0 && ix < s.W) acc += xc[iy * s.W + ix] * wc[ky * s.KW + kx];
                            }
                        }
                    }
                    yd[((n * s.O + o) * s.OH + oy) * s.OW + ox] = acc;
                }
        }
    lk_convert(y->data, y->dtype, yd, LS_DT_F64, y->numel);
    ls_free_aligned(yd);
    ls_free_aligned(tx);
    ls_free_aligned(tw);
    ls_free_aligned(tb);
    return lk_ret(out, y);
}

/* convolution(input, weight, bias?, stride, padding, dilation, transposed, output_padding, groups) */
LK_DECL(k_convolution)
{
    if (lk_bool(&args[6])) return ls_kfail(c, "transposed convolution is not supported");
    const ls_tensor *b = lk_none(&args[2]) ? NULL : args[2].t;
    return conv(c, args[0].t, args[1].t, b, &args[3], &args[4], &args[5], lk_int(&args[8]), out);
}

/* conv2d(input, weight, bias?, stride, padding, dilation, groups) */
LK_DECL(k_conv2d)
{
    const ls_tensor *b = lk_none(&args[2]) ? NULL : args[2].t;
    return conv(c, args[0].t, args[1].t, b, &args[3], &args[4], &args[5], lk_int(&args[6]), out);
}
