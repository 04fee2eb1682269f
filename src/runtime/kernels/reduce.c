/* Reductions and scans: sum, mean, amax, amin, argmax over dims (keepdim), cumsum, softmax and
 * log_softmax.
 *
 * Every reduction sees its input as [outer, R, inner]: R the reduced elements, inner the
 * elements after them. A contiguous block of reduced dims is that view as it is; scattered
 * reduced dims are first permuted to the end (one copy). inner == 1 gives row reductions;
 * inner > 1 accumulates whole rows of `inner` at a time, which vectorises.
 * Float sums accumulate in float64 (as torch's CPU accumulate type does for cumsum; for sums it
 * is at least as exact as torch's cascade summation); integer sums in wrapping int64. */
#include <inttypes.h>
#include <math.h>
#include <stdlib.h>

#include "kernels.h"

typedef struct rview {
    ls_tensor *src; /* owned: the input or its permuted copy */
    int64_t outer, R, inner;
    int ondim;
    int64_t osizes[LS_MAX_DIMS]; /* result shape (with keepdim applied) */
} rview;

/* dims: NULL/ndims 0 = all dims. */
static int reduce_view(ls_kctx *c, ls_tensor *t, const int64_t *dims, int ndims, bool keepdim, rview *v)
{
    bool red[LS_MAX_DIMS] = {0};
    if (ndims == 0) {
        for (int d = 0; d < t->ndim; d++) red[d] = true;
    }
    for (int i = 0; i < ndims; i++) {
        int d;
        if (lk_dim(c, dims[i], t->ndim, &d) != 0) return -1;
        if (t->ndim && red[d]) return ls_kfail(c, "dim %d appears multiple times in the list of dims", d);
        if (t->ndim) red[d] = true;
    }
    v->ondim = 0;
    for (int d = 0; d < t->ndim; d++) {
        if (!red[d]) v->osizes[v->ondim++] = t->sizes[d];
        else if (keepdim) v->osizes[v->ondim++] = 1;
    }
    int first = -1, last = -1;
    bool block = true;
    for (int d = 0; d < t->ndim; d++)
        if (red[d]) {
            if (first < 0) first = d;
            else if (last != d - 1) block = false;
            last = d;
        }
    if (first < 0) { /* 0-dim input */
        v->src = ls_tensor_ref(t);
        v->outer = 1, v->R = 1, v->inner = 1;
        return 0;
    }
    if (block) {
        v->src = ls_tensor_ref(t);
        v->outer = lk_numel(first, t->sizes);
        v->R = lk_numel(last - first + 1, t->sizes + first);
        v->inner = lk_numel(t->ndim - last - 1, t->sizes + last + 1);
        return 0;
    }
    int perm[LS_MAX_DIMS], n = 0;
    for (int d = 0; d < t->ndim; d++)
        if (!red[d]) perm[n++] = d;
    int nkeep = n;
    for (int d = 0; d < t->ndim; d++)
        if (red[d]) perm[n++] = d;
    v->src = lk_permute(c, t, perm);
    if (!v->src) return -1;
    v->outer = lk_numel(nkeep, v->src->sizes);
    v->R = lk_numel(t->ndim - nkeep, v->src->sizes + nkeep);
    v->inner = 1;
    return 0;
}

/* ---- sum and mean: float64 / int64 accumulation */

LK_HOT static void sum_rows_f64(const double *restrict x, double *restrict o, int64_t outer, int64_t R, int64_t inner,
                                double scale)
{
    for (int64_t p = 0; p < outer; p++) {
        const double *xp = x + p * R * inner;
        double *op = o + p * inner;
        if (inner == 1) {
            double lanes[4] = {0, 0, 0, 0};
            int64_t r = 0;
            for (; r + 4 <= R; r += 4)
                for (int q = 0; q < 4; q++) lanes[q] += xp[r + q];
            double s = (lanes[0] + lanes[1]) + (lanes[2] + lanes[3]);
            for (; r < R; r++) s += xp[r];
            op[0] = s * scale;
        } else {
            for (int64_t i = 0; i < inner; i++) op[i] = 0;
            for (int64_t r = 0; r < R; r++)
                for (int64_t i = 0; i < inner; i++) op[i] += xp[r * inner + i];
            for (int64_t i = 0; i < inner; i++) op[i] *= scale;
        }
    }
}

LK_HOT static void sum_rows_i64(const int64_t *restrict x, int64_t *restrict o, int64_t outer, int64_t R, int64_t inner)
{
    for (int64_t p = 0; p < outer; p++) {
        const uint64_t *xp = (const uint64_t *)x + p * R * inner;
        uint64_t *op = (uint64_t *)o + p * inner;
        for (int64_t i = 0; i < inner; i++) op[i] = 0;
        for (int64_t r = 0; r < R; r++)
            for (int64_t i = 0; i < inner; i++) op[i] += xp[r * inner + i];
    }
}

static int sum_mean(ls_kctx *c, const ls_value *self, const ls_value *dimv, bool keepdim, const ls_value *dtv,
                    bool mean, ls_value *out)
{
    ls_tensor *t = self->t;
    ls_dtype in_dt = lk_dtype_or(dtv, t->dtype);
    ls_dtype rt = in_dt;
    if (!mean && lk_none(dtv) && !ls_dtype_is_float(rt)) rt = LS_DT_I64;
    if (mean && !ls_dtype_is_float(rt))
        return ls_kfail(c, "mean(): could not infer output dtype. Input dtype must be either a floating point or "
                           "complex dtype. Got: %s", ls_dtype_name(rt));
    int64_t dims[LS_MAX_DIMS];
    int nd = 0;
    if (dimv && lk_ints(c, dimv, "dim", dims, LS_MAX_DIMS, &nd) != 0) return -1;
    rview v;
    if (reduce_view(c, t, dims, nd, keepdim, &v) != 0) return -1;
    ls_tensor *res = lk_new(c, rt, v.ondim, v.osizes);
    if (!res) {
        ls_tensor_unref(v.src);
        return -1;
    }
    ls_dtype acc = ls_dtype_is_float(rt) ? LS_DT_F64 : LS_DT_I64;
    void *tx;
    /* the input is converted to the requested dtype first (torch's dtype= semantics), then
     * accumulated */
    ls_tensor *src = v.src;
    if (in_dt != src->dtype) {
        ls_tensor *cv = lk_to_dtype(c, src, in_dt);
        ls_tensor_unref(src);
        src = v.src = cv;
        if (!src) {
            ls_tensor_unref(res);
            return -1;
        }
    }
    const void *x = lk_as(src, acc, &tx);
    void *o = acc == rt ? res->data : lk_alloc_tmp((size_t)(v.outer * v.inner) * 8 + 8);
    if (acc == LS_DT_F64) sum_rows_f64(x, o, v.outer, v.R, v.inner, mean ? 1.0 / (double)v.R : 1.0);
    else sum_rows_i64(x, o, v.outer, v.R, v.inner);
    if (o != res->data) {
        lk_convert(res->data, rt, o, acc, res->numel);
        ls_free_aligned(o);
    }
    ls_free_aligned(tx);
    ls_tensor_unref(v.src);
    return lk_ret(out, res);
}

LK_DECL(k_sum_dim) { return sum_mean(c, &args[0], &args[1], lk_bool(&args[2]), &args[3], false, out); }
LK_DECL(k_sum) { return sum_mean(c, &args[0], NULL, false, &args[1], false, out); }
LK_DECL(k_mean_dim) { return sum_mean(c, &args[0], &args[1], lk_bool(&args[2]), &args[3], true, out); }
LK_DECL(k_mean) { return sum_mean(c, &args[0], NULL, false, &args[1], true, out); }

/* ---- amax / amin: in the compute type, NaN propagates */

#define MINMAX(name, T, better)                                                                           \
    LK_HOT static void name(const T *restrict x, T *restrict o, int64_t outer, int64_t R, int64_t inner) \
    {                                                                                                     \
        for (int64_t p = 0; p < outer; p++) {                                                             \
            const T *xp = x + p * R * inner;                                                              \
            T *op = o + p * inner;                                                                        \
            for (int64_t i = 0; i < inner; i++) op[i] = xp[i];                                            \
            for (int64_t r = 1; r < R; r++)                                                               \
                for (int64_t i = 0; i < inner; i++) {                                                     \
                    const T a = op[i], b = xp[r * inner + i];                                             \
                    op[i] = (b != b || (better)) ? b : a;                                                 \
                }                                                                                         \
        }                                                                                                 \
    }
MINMAX(max_f32, float, b > a)
MINMAX(max_f64, double, b > a)
MINMAX(max_i64, int64_t, b > a)
MINMAX(min_f32, float, b < a)
MINMAX(min_f64, double, b < a)
MINMAX(min_i64, int64_t, b < a)

static int minmax(ls_kctx *c, const ls_value *args, bool is_max, ls_value *out)
{
    ls_tensor *t = args[0].t;
    int64_t dims[LS_MAX_DIMS];
    int nd;
    if (lk_ints(c, &args[1], "dim", dims, LS_MAX_DIMS, &nd) != 0) return -1;
    rview v;
    if (reduce_view(c, t, dims, nd, lk_bool(&args[2]), &v) != 0) return -1;
    if (v.R == 0) {
        ls_tensor_unref(v.src);
        return ls_kfail(c, "expected reduction dim to have non-zero size (the tensor is %s empty)",
                        t->numel ? "not" : "");
    }
    ls_dtype ct = lk_compute_type(t->dtype);
    ls_tensor *res = lk_new(c, t->dtype, v.ondim, v.osizes);
    if (!res) {
        ls_tensor_unref(v.src);
        return -1;
    }
    void *tx;
    const void *x = lk_as(v.src, ct, &tx);
    void *o = ct == t->dtype ? res->data : lk_alloc_tmp((size_t)(v.outer * v.inner) * 8 + 8);
    if (v.outer * v.inner > 0) {
        if (ct == LS_DT_F32) (is_max ? max_f32 : min_f32)(x, o, v.outer, v.R, v.inner);
        else if (ct == LS_DT_F64) (is_max ? max_f64 : min_f64)(x, o, v.outer, v.R, v.inner);
        else (is_max ? max_i64 : min_i64)(x, o, v.outer, v.R, v.inner);
    }
    if (o != res->data) {
        lk_convert(res->data, t->dtype, o, ct, res->numel);
        ls_free_aligned(o);
    }
    ls_free_aligned(tx);
    ls_tensor_unref(v.src);
    return lk_ret(out, res);
}

LK_DECL(k_amax) { return minmax(c, args, true, out); }
LK_DECL(k_amin) { return minmax(c, args, false, out); }

/* argmax: the first maximum; a NaN counts as the maximum (the first NaN wins) */
LK_DECL(k_argmax)
{
    ls_tensor *t = args[0].t;
    bool keepdim = lk_bool(&args[2]);
    rview v;
    int64_t dim = 0;
    if (lk_none(&args[1])) {
        if (reduce_view(c, t, NULL, 0, false, &v) != 0) return -1;
        if (keepdim) { /* all dims kept as 1 */
            v.ondim = t->ndim;
            for (int d = 0; d < t->ndim; d++) v.osizes[d] = 1;
        }
    } else {
        dim = lk_int(&args[1]);
        if (reduce_view(c, t, &dim, 1, keepdim, &v) != 0) return -1;
    }
    if (v.R == 0) {
        ls_tensor_unref(v.src);
        return ls_kfail(c, "cannot compute argmax over an empty dimension");
    }
    ls_tensor *res = lk_new(c, LS_DT_I64, v.ondim, v.osizes);
    if (!res) {
        ls_tensor_unref(v.src);
        return -1;
    }
    void *tx;
    ls_dtype ct = lk_compute_type(t->dtype) == LS_DT_I64 ? LS_DT_I64 : LS_DT_F64;
    const void *x = lk_as(v.src, ct, &tx);
    int64_t *o = res->data;
    for (int64_t p = 0; p < v.outer; p++)
        for (int64_t i = 0; i < v.inner; i++) {
            int64_t best = 0;
            if (ct == LS_DT_F64) {
                const double *xp = (const double *)x + p * v.R * v.inner + i;
                double bv = xp[0];
                for (int64_t r = 1; r < v.R && bv == bv; r++) {
                    double y = xp[r * v.inner];
                    if (y > bv || y != y) bv = y, best = r;
                }
            } else {
                const int64_t *xp = (const int64_t *)x + p * v.R * v.inner + i;
                int64_t bv = xp[0];
                for (int64_t r = 1; r < v.R; r++)
                    if (xp[r * v.inner] > bv) bv = xp[r * v.inner], best = r;
            }
            o[p * v.inner + i] = best;
        }
    ls_free_aligned(tx);
    ls_tensor_unref(v.src);
    return lk_ret(out, res);
}

/* ---- cumsum */

LK_DECL(k_cumsum)
{
    ls_tensor *t = args[0].t;
    int dim;
    if (lk_dim(c, lk_int(&args[1]), t->ndim, &dim) != 0) return -1;
    ls_dtype rt = lk_dtype_or(&args[2], ls_dtype_is_float(t->dtype) ? t->dtype : LS_DT_I64);
    ls_tensor *res = lk_new_like(c, t, rt);
    if (!res) return -1;
    int64_t outer = t->ndim ? lk_numel(dim, t->sizes) : 1, R = t->ndim ? t->sizes[dim] : 1;
    int64_t inner = t->ndim ? lk_numel(t->ndim - dim - 1, t->sizes + dim + 1) : 1;
    ls_dtype acc = ls_dtype_is_float(rt) ? LS_DT_F64 : LS_DT_I64;
    void *tx;
    const void *x = lk_as(t, acc, &tx);
    void *o = acc == rt ? res->data : lk_alloc_tmp((size_t)t->numel * 8 + 8);
    for (int64_t p = 0; p < outer; p++) {
        if (acc == LS_DT_F64) {
            const double *xp = (const double *)x + p * R * inner;
            double *op = (double *)o + p * R * inner;
            for (int64_t r = 0; r < R; r++)
                for (int64_t i = 0; i < inner; i++)
                    op[r * inner + i] = r ? op[(r - 1) * inner + i] + xp[r * inner + i] : xp[i];
        } else {
            const uint64_t *xp = (const uint64_t *)x + p * R * inner;
            uint64_t *op = (uint64_t *)o + p * R * inner;
            for (int64_t r = 0; r < R; r++)
                for (int64_t i = 0; i < inner; i++)
                    op[r * inner + i] = r ? op[(r - 1) * inner + i] + xp[r * inner + i] : xp[i];
        }
    }
    if (o != res->data) {
        lk_convert(res->data, rt, o, acc, t->numel);
        ls_free_aligned(o);
    }
    ls_free_aligned(tx);
    return lk_ret(out, res);
}

/* ---- softmax, log_softmax (float32 compute for the halves and float32, float64 otherwise) */

LK_HOT void lk_softmax_row(const float *x, float *y, int64_t n, bool log)
{
    float mx = -INFINITY;
    for (int64_t i = 0; i < n; i++) mx = x[i] > mx || x[i] != x[i] ? x[i] : mx;
    double sum = 0;
    for (int64_t i = 0; i < n; i++) {
        float e = expf(x[i] - mx);
        if (!log) y[i] = e;
        sum += e;
    }
    if (log) {
        float lse = mx + (float)logf((float)sum);
        for (int64_t i = 0; i < n; i++) y[i] = x[i] - lse;
    } else {
        float inv = (float)(1.0 / sum);
        for (int64_t i = 0; i < n; i++) y[i] *= inv;
    }
}

static void softmax_row_f64(const double *x, double *y, int64_t n, int64_t st, bool take_log)
{
    double mx = -INFINITY, sum = 0;
    for (int64_t i = 0; i < n; i++) mx = x[i * st] > mx || x[i * st] != x[i * st] ? x[i * st] : mx;
    for (int64_t i = 0; i < n; i++) sum += exp(x[i * st] - mx);
    double lse = mx + log(sum);
    for (int64_t i = 0; i < n; i++) y[i * st] = take_log ? x[i * st] - lse : exp(x[i * st] - lse);
}

typedef struct sm_job {
    const float *x;
    float *y;
    int64_t R;
    bool log;
} sm_job;

static void sm_range(void *vctx, int64_t lo, int64_t hi)
{
    sm_job *j = vctx;
    for (int64_t r = lo; r < hi; r++) lk_softmax_row(j->x + r * j->R, j->y + r * j->R, j->R, j->log);
}

static int softmax(ls_kctx *c, ls_tensor *t, int64_t dim_arg, ls_dtype rt, bool log, ls_value *out)
{
    int dim;
    if (lk_dim(c, dim_arg, t->ndim, &dim) != 0) return -1;
    if (!ls_dtype_is_float(rt)) rt = LS_DT_F32;
    ls_dtype ct = rt == LS_DT_F64 ? LS_DT_F64 : LS_DT_F32;
    ls_tensor *res = lk_new_like(c, t, rt);
    if (!res || t->numel == 0) return res ? lk_ret(out, res) : -1;
    int64_t outer = t->ndim ? lk_numel(dim, t->sizes) : 1, R = t->ndim ? t->sizes[dim] : 1;
    int64_t inner = t->ndim ? lk_numel(t->ndim - dim - 1, t->sizes + dim + 1) : 1;
    void *tx;
    const void *x = lk_as(t, ct, &tx);
    void *y = ct == rt ? res->data : lk_alloc_tmp((size_t)t->numel * 8 + 8);
    if (ct == LS_DT_F32 && inner == 1) {
        sm_job j = {x, y, R, log};
        lk_parallel(outer, (double)R * 20, sm_range, &j);
    } else if (ct == LS_DT_F32) {
        /* softmax across rows of `inner`: a float64 row per element column is too slow, so
         * gather each column, run the row kernel, scatter back */
        float *col = lk_alloc_tmp(sizeof(float) * (size_t)R * 2 + 64);
        for (int64_t p = 0; p < outer; p++)
            for (int64_t i = 0; i < inner; i++) {
                const float *xp = (const float *)x + p * R * inner + i;
                float *yp = (float *)y + p * R * inner + i;
                for (int64_t r = 0; r < R; r++) col[r] = xp[r * inner];
                lk_softmax_row(col, col + R, R, log);
                for (int64_t r = 0; r < R; r++) yp[r * inner] = col[R + r];
            }
        ls_free_aligned(col);
    } else {
        for (int64_t p = 0; p < outer; p++)
            for (int64_t i = 0; i < inner; i++)
                softmax_row_f64((const double *)x + p * R * inner + i, (double *)y + p * R * inner + i, R, inner, log);
    }
    if (y != res->data) {
        lk_convert(res->data, rt, y, ct, t->numel);
        ls_free_aligned(y);
    }
    ls_free_aligned(tx);
    return lk_ret(out, res);
}

/* _softmax(self, dim, half_to_float) */
static int softmax_internal(ls_kctx *c, const ls_value *args, bool log, ls_value *out)
{
    ls_tensor *t = args[0].t;
    ls_dtype rt = t->dtype;
    if (lk_bool(&args[2]) && (rt == LS_DT_F16 || rt == LS_DT_BF16)) rt = LS_DT_F32;
    return softmax(c, t, lk_int(&args[1]), rt, log, out);
}

/* softmax.int(self, dim, dtype?) */
static int softmax_public(ls_kctx *c, const ls_value *args, bool log, ls_value *out)
{
    ls_tensor *t = args[0].t;
    ls_dtype rt = lk_dtype_or(&args[2], t->dtype);
    ls_tensor *src = lk_to_dtype(c, t, rt);
    if (!src) return -1;
    int rc = softmax(c, src, lk_int(&args[1]), rt, log, out);
    ls_tensor_unref(src);
    return rc;
}

LK_DECL(k__softmax) { return softmax_internal(c, args, false, out); }
LK_DECL(k__log_softmax) { return softmax_internal(c, args, true, out); }
LK_DECL(k_softmax) { return softmax_public(c, args, false, out); }
LK_DECL(k_log_softmax) { return softmax_public(c, args, true, out); }
