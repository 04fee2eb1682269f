/* max_pool2d_with_indices, as ExecuTorch's portable kernel computes it
 * (kernels/portable/cpu/op_max_pool2d_with_indices.cpp over util/kernel_ops_util's
 * apply_kernel_2d_reduce_then_map_fn, include_pad false): for every output position the window's
 * first element inside the input starts the maximum, a later one replaces it only when strictly
 * greater (so a NaN that starts a window stays, one met later is passed over); the index is the
 * element's place in its H x W plane (h * W + w). Output sizes as torch's pooling_output_shape:
 * (H + 2p - d (k - 1) - 1 + (ceil_mode ? s - 1 : 0)) / s + 1, less one when ceil_mode's last
 * window would start in the right padding. stride [] means the kernel size; one value means both.
 * Integers are compared in their own type; a window with no tap inside gives 0 at index 0. */
#include <inttypes.h>
#include <math.h>

#include "kernels.h"

static int pair(ls_kctx *c, const ls_value *a, const char *what, int64_t dflt0, int64_t dflt1, int64_t v[2])
{
    int64_t x[4];
    int n = 0;
    if (lk_ints(c, a, what, x, 4, &n) != 0) return -1;
    if (n == 0) v[0] = dflt0, v[1] = dflt1;
    else if (n == 1) v[0] = v[1] = x[0];
    else if (n == 2) v[0] = x[0], v[1] = x[1];
    else return ls_kfail(c, "%s takes one or two values, not %d", what, n);
    return 0;
}

static int64_t out_size(int64_t in, int64_t k, int64_t s, int64_t p, int64_t d, bool ceil_mode)
{
    int64_t num = in + 2 * p - d * (k - 1) - 1 + (ceil_mode ? s - 1 : 0);
    int64_t o = (num >= 0 ? num / s : -((-num + s - 1) / s)) + 1;
    if (ceil_mode && (o - 1) * s >= in + p) o--;
    return o;
}

/* max_pool2d_with_indices(self, kernel_size, stride=[], padding=0, dilation=1, ceil_mode=False) -> (Tensor, Tensor) */
LK_DECL(k_max_pool2d_with_indices)
{
    const ls_tensor *x = args[0].t;
    if (x->ndim != 3 && x->ndim != 4) return ls_kfail(c, "takes a 3-D or 4-D input, not %d-D", x->ndim);
    int64_t k[2] = {0}, s[2] = {0}, p[2] = {0}, d[2] = {0}; /* -O3 cannot see that pair() sets them when it returns 0 */
    if (pair(c, &args[1], "kernel_size", 0, 0, k) != 0) return -1;
    if (pair(c, nargs > 2 ? &args[2] : &(ls_value){0}, "stride", k[0], k[1], s) != 0) return -1;
    if (pair(c, nargs > 3 ? &args[3] : &(ls_value){0}, "padding", 0, 0, p) != 0) return -1;
    if (pair(c, nargs > 4 ? &args[4] : &(ls_value){0}, "dilation", 1, 1, d) != 0) return -1;
    bool ceil_mode = nargs > 5 && lk_bool(&args[5]);
    for (int i = 0; i < 2; i++) {
        if (k[i] <= 0 || s[i] <= 0 || d[i] <= 0 || p[i] < 0)
            return ls_kfail(c, "kernel_size, stride and dilation must be positive and padding not negative");
        if (p[i] > k[i] / 2) return ls_kfail(c, "padding %" PRId64 " is more than half the kernel size %" PRId64, p[i], k[i]);
    }
    /* the portable kernel's ET_SWITCH_REAL_TYPES: no bool, and of the unsigned types only uint8 */
    if (x->dtype == LS_DT_BOOL || x->dtype == LS_DT_UNKNOWN || x->dtype == LS_DT_U16 || x->dtype == LS_DT_U32 ||
        x->dtype == LS_DT_U64)
        return ls_kfail(c, "takes a real dtype, not %s", ls_dtype_name(x->dtype));
    int nd = x->ndim;
    int64_t H = x->sizes[nd - 2], W = x->sizes[nd - 1];
    int64_t OH = out_size(H, k[0], s[0], p[0], d[0], ceil_mode), OW = out_size(W, k[1], s[1], p[1], d[1], ceil_mode);
    if (OH <= 0 || OW <= 0) return ls_kfail(c, "the output would be %" PRId64 "x%" PRId64 ": the input is too small", OH, OW);
    int64_t sizes[4];
    for (int i = 0; i < nd; i++) sizes[i] = x->sizes[i];
    sizes[nd - 2] = OH;
    sizes[nd - 1] = OW;
    ls_tensor *y = lk_new(c, x->dtype, nd, sizes), *ix = y ? lk_new(c, LS_DT_I64, nd, sizes) : NULL;
    if (!ix) {
        ls_tensor_unref(y);
        return -1;
    }
    int64_t planes = x->numel / (H * W > 0 ? H * W : 1);
    int64_t *id = ix->data;
    /* Integers are compared as integers (a double loses int64's low bits past 2^53), as the
     * portable kernel compares in the element's type (op_max_pool2d_with_indices.cpp,
     * "in_val > accum" on CTYPE). A window with no tap inside the input keeps the kernel's
     * starting accumulator, 0 at index 0 (kernel_ops_util.h, kernel_reduction_then_map_2d). */
    bool ints = ls_dtype_is_int(x->dtype);
    int64_t *maxima = ints ? lk_alloc_tmp(sizeof *maxima * (size_t)(y->numel + 1)) : NULL; /* into y's type at the end */
    for (int64_t pl = 0; pl < planes && H * W > 0; pl++)
        for (int64_t oh = 0; oh < OH; oh++)
            for (int64_t ow = 0; ow < OW; ow++) {
                double best = 0;
                int64_t best_i = 0, at = -1;
                for (int64_t kh = 0; kh < k[0]; kh++) {
                    int64_t h = oh * s[0] - p[0] + kh * d[0];
                    if (h < 0 || h >= H) continue;
                    for (int64_t kw = 0; kw < k[1]; kw++) {
                        int64_t w = ow * s[1] - p[1] + kw * d[1];
                        if (w < 0 || w >= W) continue;
                        int64_t e = pl * H * W + h * W + w;
                        if (ints) {
                            int64_t v = ls_tensor_get_i64(x, e);
                            if (at < 0 || v > best_i) best_i = v, at = h * W + w;
                        } else {
                            double v = ls_tensor_get_f64(x, e);
                            if (at < 0 || v > best) best = v, at = h * W + w;
                        }
                    }
                }
                int64_t o = (pl * OH + oh) * OW + ow;
                if (ints) maxima[o] = best_i;
                else ls_tensor_set_f64(y, o, best);
                id[o] = at < 0 ? 0 : at;
            }
    if (ints) lk_convert(y->data, y->dtype, maxima, LS_DT_I64, y->numel); /* each is one of x's: in range */
    ls_free_aligned(maxima);
    *out = ls_value_list(2);
    out->items[0] = ls_value_tensor(y);
    out->items[1] = ls_value_tensor(ix);
    return 0;
}
