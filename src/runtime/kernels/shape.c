/* Shape kernels: view/reshape and their _copy forms, permute, transpose, t, unsqueeze, squeeze,
 * expand, slice, select, split, split_with_sizes, chunk, cat, stack, constant_pad_nd, alias.
 *
 * Each is a strided view of its input (offset, sizes, strides) made contiguous by one
 * lk_copy_nd; the aliasing view ops share the input's storage when the view is contiguous in
 * memory (a reshape, a leading-dim slice or select), their Edge _copy forms always copy. */
#include <inttypes.h>
#include <stdlib.h>

#include "kernels.h"

/* ---- strided copies */

#define STRIDED_ROW(name, T)                                                                               \
    LK_HOT static void name(int64_t n, void *restrict vd, int64_t sd, const void *restrict vs, int64_t ss) \
    {                                                                                                      \
        T *restrict d = vd;                                                                                \
        const T *restrict s = vs;                                                                          \
        if (sd == 1 && ss == 0) {                                                                          \
            const T v = s[0];                                                                              \
            for (int64_t i = 0; i < n; i++) d[i] = v;                                                      \
        } else if (sd == 1) {                                                                              \
            for (int64_t i = 0; i < n; i++) d[i] = s[i * ss];                                              \
        } else {                                                                                           \
            for (int64_t i = 0; i < n; i++) d[i * sd] = s[i * ss];                                         \
        }                                                                                                  \
    }
STRIDED_ROW(row8, uint8_t)
STRIDED_ROW(row16, uint16_t)
STRIDED_ROW(row32, uint32_t)
STRIDED_ROW(row64, uint64_t)

void lk_copy_nd(void *dst, const int64_t *dst_st, const void *src, const int64_t *src_st, size_t es, int ndim,
                const int64_t *sizes)
{
    int64_t sz[LS_MAX_DIMS], ds[LS_MAX_DIMS], ss[LS_MAX_DIMS];
    int nd = 0;
    for (int d = 0; d < ndim; d++) {
        if (sizes[d] == 0) return;
        if (sizes[d] == 1) continue;
        if (nd > 0 && ds[nd - 1] == dst_st[d] * sizes[d] && ss[nd - 1] == src_st[d] * sizes[d]) {
            sz[nd - 1] *= sizes[d];
            ds[nd - 1] = dst_st[d];
            ss[nd - 1] = src_st[d];
            continue;
        }
        sz[nd] = sizes[d], ds[nd] = dst_st[d], ss[nd] = src_st[d];
        nd++;
    }
    if (nd == 0) {
        memcpy(dst, src, es);
        return;
    }
    int64_t inner = sz[nd - 1], di = ds[nd - 1], si = ss[nd - 1];
    int64_t rows = 1, idx[LS_MAX_DIMS] = {0};
    for (int d = 0; d + 1 < nd; d++) rows *= sz[d];
    int64_t od = 0, os = 0;
    for (int64_t r = 0; r < rows; r++) {
        uint8_t *dp = (uint8_t *)dst + od * (int64_t)es;
        const uint8_t *sp = (const uint8_t *)src + os * (int64_t)es;
        if (di == 1 && si == 1) memcpy(dp, sp, (size_t)inner * es);
        else if (es == 4) row32(inner, dp, di, sp, si);
        else if (es == 8) row64(inner, dp, di, sp, si);
        else if (es == 2) row16(inner, dp, di, sp, si);
        else row8(inner, dp, di, sp, si);
        for (int d = nd - 2; d >= 0; d--) {
            od += ds[d], os += ss[d];
            if (++idx[d] < sz[d]) break;
            od -= ds[d] * sz[d], os -= ss[d] * sz[d];
            idx[d] = 0;
        }
    }
}

bool lk_is_view_op(const ls_kctx *c)
{
    const ls_op *op = c->op ? c->op : c->node ? c->node->op : NULL;
    return op && (op->flags & LS_OPF_VIEW);
}

ls_tensor *lk_view_result(ls_kctx *c, ls_tensor *t, int64_t offset, int ndim, const int64_t *sizes,
                          const int64_t *strides)
{
    size_t es = ls_dtype_size(t->dtype);
    int64_t cs[LS_MAX_DIMS];
    lk_strides(ndim, sizes, cs);
    bool contiguous = true;
    for (int d = 0; d < ndim; d++)
        if (sizes[d] != 1 && strides[d] != cs[d]) contiguous = false;
    if (contiguous && lk_is_view_op(c) && t->owner) {
        size_t base = (size_t)((uint8_t *)t->data - t->owner->data);
        ls_tensor *v = ls_tensor_from_blob(t->owner, base + (size_t)offset * es, t->dtype, ndim, sizes);
        if (v) return v;
    }
    ls_tensor *o = lk_new(c, t->dtype, ndim, sizes);
    if (o && o->numel) lk_copy_nd(o->data, cs, (uint8_t *)t->data + offset * (int64_t)es, strides, es, ndim, sizes);
    return o;
}

static ls_tensor *reshaped(ls_kctx *c, ls_tensor *t, int ndim, const int64_t *sizes)
{
    int64_t st[LS_MAX_DIMS];
    lk_strides(ndim, sizes, st);
    return lk_view_result(c, t, 0, ndim, sizes, st);
}

void lk_fill(void *dst, ls_dtype dt, int64_t n, double f, int64_t i, bool is_int)
{
    if (n <= 0) return;
    uint64_t v = 0;
    if (is_int) lk_convert(&v, dt, &i, LS_DT_I64, 1);
    else lk_convert(&v, dt, &f, LS_DT_F64, 1);
    int64_t one = 1, zero = 0;
    lk_copy_nd(dst, &one, &v, &zero, ls_dtype_size(dt), 1, &n);
}

/* ---- view, reshape */

LK_DECL(k_view)
{
    ls_tensor *t = args[0].t;
    int64_t sz[LS_MAX_DIMS];
    int n;
    if (lk_ints(c, &args[1], "size", sz, LS_MAX_DIMS, &n) != 0) return -1;
    int infer = -1;
    int64_t known = 1;
    for (int d = 0; d < n; d++) {
        if (sz[d] == -1) {
            if (infer >= 0) return ls_kfail(c, "only one dimension can be inferred");
            infer = d;
        } else if (sz[d] < 0) {
            return ls_kfail(c, "invalid shape dimension %" PRId64, sz[d]);
        } else if (__builtin_mul_overflow(known, sz[d], &known)) {
            goto bad;
        }
    }
    if (infer >= 0) {
        if (known == 0 || t->numel % known != 0) goto bad;
        sz[infer] = t->numel / known;
    } else if (known != t->numel) {
        goto bad;
    }
    ls_tensor *r = reshaped(c, t, n, sz);
    return r ? lk_ret(out, r) : -1;
bad:;
    char s[128];
    return ls_kfail(c, "shape %s is invalid for input of size %" PRId64, lk_shape_str(n, sz, s, sizeof s), t->numel);
}

LK_DECL(k_alias)
{
    ls_tensor *r = reshaped(c, args[0].t, args[0].t->ndim, args[0].t->sizes);
    return r ? lk_ret(out, r) : -1;
}

/* ---- permutations */

static int permuted(ls_kctx *c, ls_tensor *t, const int *perm, ls_value *out)
{
    int64_t st[LS_MAX_DIMS], sz[LS_MAX_DIMS], ps[LS_MAX_DIMS];
    lk_strides(t->ndim, t->sizes, st);
    for (int d = 0; d < t->ndim; d++) sz[d] = t->sizes[perm[d]], ps[d] = st[perm[d]];
    ls_tensor *r = lk_view_result(c, t, 0, t->ndim, sz, ps);
    return r ? lk_ret(out, r) : -1;
}

ls_tensor *lk_permute(ls_kctx *c, const ls_tensor *t, const int *perm)
{
    int64_t st[LS_MAX_DIMS], sz[LS_MAX_DIMS], ps[LS_MAX_DIMS];
    lk_strides(t->ndim, t->sizes, st);
    for (int d = 0; d < t->ndim; d++) sz[d] = t->sizes[perm[d]], ps[d] = st[perm[d]];
    ls_tensor *o = lk_new(c, t->dtype, t->ndim, sz);
    int64_t cs[LS_MAX_DIMS];
    lk_strides(t->ndim, sz, cs);
    if (o && o->numel) lk_copy_nd(o->data, cs, t->data, ps, ls_dtype_size(t->dtype), t->ndim, sz);
    return o;
}

LK_DECL(k_permute)
{
    ls_tensor *t = args[0].t;
    int64_t d64[LS_MAX_DIMS];
    int n, perm[LS_MAX_DIMS];
    bool seen[LS_MAX_DIMS] = {0};
    if (lk_ints(c, &args[1], "dims", d64, LS_MAX_DIMS, &n) != 0) return -1;
    if (n != t->ndim) return ls_kfail(c, "%d dims given for a %d-d tensor", n, t->ndim);
    for (int d = 0; d < n; d++) {
        if (lk_dim(c, d64[d], t->ndim, &perm[d]) != 0) return -1;
        if (seen[perm[d]]) return ls_kfail(c, "dim %d repeats in the permutation", perm[d]);
        seen[perm[d]] = true;
    }
    return permuted(c, t, perm, out);
}

LK_DECL(k_transpose)
{
    ls_tensor *t = args[0].t;
    int d0, d1, perm[LS_MAX_DIMS];
    if (lk_dim(c, lk_int(&args[1]), t->ndim, &d0) != 0 || lk_dim(c, lk_int(&args[2]), t->ndim, &d1) != 0) return -1;
    for (int d = 0; d < t->ndim; d++) perm[d] = d;
    if (t->ndim) perm[d0] = d1, perm[d1] = d0;
    return permuted(c, t, perm, out);
}

LK_DECL(k_t)
{
    ls_tensor *t = args[0].t;
    if (t->ndim > 2) return ls_kfail(c, "t() expects a tensor with <= 2 dimensions, but self is %d-d", t->ndim);
    int perm[2] = {1, 0};
    if (t->ndim < 2) perm[0] = 0;
    return permuted(c, t, perm, out);
}

/* ---- adding and removing size-1 dims */

LK_DECL(k_unsqueeze)
{
    ls_tensor *t = args[0].t;
    int d;
    if (t->ndim >= LS_MAX_DIMS) return ls_kfail(c, "too many dimensions");
    if (lk_dim(c, lk_int(&args[1]), t->ndim + 1, &d) != 0) return -1;
    int64_t sz[LS_MAX_DIMS];
    for (int i = 0, j = 0; i <= t->ndim; i++) sz[i] = i == d ? 1 : t->sizes[j++];
    ls_tensor *r = reshaped(c, t, t->ndim + 1, sz);
    return r ? lk_ret(out, r) : -1;
}

static int squeeze_mask(ls_kctx *c, ls_tensor *t, const bool *drop, ls_value *out)
{
    int64_t sz[LS_MAX_DIMS];
    int n = 0;
    for (int d = 0; d < t->ndim; d++)
        if (!(drop[d] && t->sizes[d] == 1)) sz[n++] = t->sizes[d];
    ls_tensor *r = reshaped(c, t, n, sz);
    return r ? lk_ret(out, r) : -1;
}

LK_DECL(k_squeeze)
{
    bool drop[LS_MAX_DIMS];
    for (int d = 0; d < LS_MAX_DIMS; d++) drop[d] = true;
    return squeeze_mask(c, args[0].t, drop, out);
}

LK_DECL(k_squeeze_dims)
{
    ls_tensor *t = args[0].t;
    bool drop[LS_MAX_DIMS] = {0};
    int64_t dims[LS_MAX_DIMS];
    int n;
    if (lk_ints(c, &args[1], "dim", dims, LS_MAX_DIMS, &n) != 0) return -1;
    for (int i = 0; i < n; i++) {
        int d;
        if (lk_dim(c, dims[i], t->ndim, &d) != 0) return -1;
        if (t->ndim) drop[d] = true;
    }
    return squeeze_mask(c, t, drop, out);
}

/* ---- expand */

ls_tensor *lk_expand(ls_kctx *c, const ls_tensor *t, int ndim, const int64_t *sizes)
{
    int64_t st[LS_MAX_DIMS], es[LS_MAX_DIMS];
    lk_strides(t->ndim, t->sizes, st);
    for (int d = 0; d < ndim; d++) {
        int k = d - (ndim - t->ndim);
        es[d] = k < 0 || (t->sizes[k] == 1 && sizes[d] != 1) ? 0 : st[k];
    }
    ls_tensor *o = lk_new(c, t->dtype, ndim, sizes);
    if (!o) return NULL;
    int64_t cs[LS_MAX_DIMS];
    lk_strides(ndim, sizes, cs);
    if (o->numel) lk_copy_nd(o->data, cs, t->data, es, ls_dtype_size(t->dtype), ndim, sizes);
    return o;
}

LK_DECL(k_expand)
{
    ls_tensor *t = args[0].t;
    int64_t sz[LS_MAX_DIMS];
    int n;
    if (lk_ints(c, &args[1], "size", sz, LS_MAX_DIMS, &n) != 0) return -1;
    char s1[96], s2[96];
    if (n < t->ndim)
        return ls_kfail(c, "the number of sizes provided (%d) must be greater or equal to the number of dimensions in the tensor (%d)",
                        n, t->ndim);
    for (int d = 0; d < n; d++) {
        int k = d - (n - t->ndim);
        if (sz[d] == -1) {
            if (k < 0) return ls_kfail(c, "the expanded size -1 is not allowed in a leading, non-existing dimension %d", d);
            sz[d] = t->sizes[k];
        } else if (sz[d] < 0 || (k >= 0 && t->sizes[k] != 1 && t->sizes[k] != sz[d])) {
            return ls_kfail(c, "cannot expand %s to %s", lk_shape_str(t->ndim, t->sizes, s1, sizeof s1),
                            lk_shape_str(n, sz, s2, sizeof s2));
        }
    }
    ls_tensor *r = lk_expand(c, t, n, sz);
    return r ? lk_ret(out, r) : -1;
}

/* ---- slicing */

static int slice_view(ls_kctx *c, ls_tensor *t, int dim, int64_t start, int64_t len, int64_t step, bool keep_dim,
                      ls_tensor **res)
{
    int64_t st[LS_MAX_DIMS], sz[LS_MAX_DIMS], vs[LS_MAX_DIMS];
    lk_strides(t->ndim, t->sizes, st);
    int n = 0;
    for (int d = 0; d < t->ndim; d++) {
        if (d == dim && !keep_dim) continue;
        sz[n] = d == dim ? len : t->sizes[d];
        vs[n] = d == dim && len > 1 ? st[d] * step : st[d]; /* len > 1: step·stride stays inside the tensor */
        n++;
    }
    *res = lk_view_result(c, t, start * st[dim], n, sz, vs);
    return *res ? 0 : -1;
}

LK_DECL(k_slice)
{
    ls_tensor *t = args[0].t;
    int dim;
    if (t->ndim == 0) return ls_kfail(c, "slice() cannot be applied to a 0-dim tensor");
    if (lk_dim(c, lk_int(&args[1]), t->ndim, &dim) != 0) return -1;
    int64_t size = t->sizes[dim];
    int64_t start = lk_none(&args[2]) ? 0 : lk_int(&args[2]);
    int64_t end = lk_none(&args[3]) ? INT64_MAX : lk_int(&args[3]);
    int64_t step = lk_int(&args[4]);
    if (step <= 0) return ls_kfail(c, "slice step must be positive, got %" PRId64, step);
    if (start < 0) start += size;
    if (end < 0) end += size;
    start = start < 0 ? 0 : start > size ? size : start;
    end = end < start ? start : end > size ? size : end;
    int64_t len = (end - start) / step + ((end - start) % step != 0);
    ls_tensor *r;
    if (slice_view(c, t, dim, start, len, step, true, &r) != 0) return -1;
    return lk_ret(out, r);
}

LK_DECL(k_select)
{
    ls_tensor *t = args[0].t;
    int dim;
    if (t->ndim == 0) return ls_kfail(c, "select() cannot be applied to a 0-dim tensor");
    if (lk_dim(c, lk_int(&args[1]), t->ndim, &dim) != 0) return -1;
    int64_t idx = lk_int(&args[2]), size = t->sizes[dim];
    if (idx < -size || idx >= size)
        return ls_kfail(c, "index %" PRId64 " is out of range for dimension %d of size %" PRId64, idx, dim, size);
    if (idx < 0) idx += size;
    ls_tensor *r;
    if (slice_view(c, t, dim, idx, 1, 1, false, &r) != 0) return -1;
    return lk_ret(out, r);
}

static int split_sizes(ls_kctx *c, ls_tensor *t, int dim, const int64_t *sizes, int n, ls_value *out)
{
    ls_value list = ls_value_list((uint32_t)n);
    int64_t start = 0;
    for (int i = 0; i < n; i++) {
        ls_tensor *r;
        if (slice_view(c, t, dim, start, sizes[i], 1, true, &r) != 0) {
            ls_value_release(&list);
            return -1;
        }
        list.items[i] = ls_value_tensor(r);
        start += sizes[i];
    }
    *out = list;
    return 0;
}

static int split_even(ls_kctx *c, ls_tensor *t, int dim, int64_t split, ls_value *out)
{
    int64_t size = t->sizes[dim];
    if (split < 0 || (split == 0 && size != 0)) return ls_kfail(c, "split size must be positive, got %" PRId64, split);
    int64_t n = split == 0 ? 1 : size / split + (size % split != 0);
    if (n == 0) n = 1;
    if (n > LS_SPLIT_MAX_PIECES) return ls_kfail(c, "split into %" PRId64 " parts", n);
    int64_t *sizes = ls_malloc(sizeof *sizes * (size_t)n);
    for (int64_t i = 0; i < n; i++) sizes[i] = split <= size - i * split ? split : size - i * split;
    int rc = split_sizes(c, t, dim, sizes, (int)n, out);
    free(sizes);
    return rc;
}

LK_DECL(k_split)
{
    ls_tensor *t = args[0].t;
    int dim;
    if (t->ndim == 0) return ls_kfail(c, "split() cannot be applied to a 0-dim tensor");
    if (lk_dim(c, lk_int(&args[2]), t->ndim, &dim) != 0) return -1;
    return split_even(c, t, dim, lk_int(&args[1]), out);
}

LK_DECL(k_chunk)
{
    ls_tensor *t = args[0].t;
    int dim;
    int64_t chunks = lk_int(&args[1]);
    if (chunks <= 0) return ls_kfail(c, "chunk expects 'chunks' to be greater than 0, got %" PRId64, chunks);
    if (t->ndim == 0) return ls_kfail(c, "chunk() cannot be applied to a 0-dim tensor");
    if (lk_dim(c, lk_int(&args[2]), t->ndim, &dim) != 0) return -1;
    int64_t size = t->sizes[dim];
    if (size == 0) {
        /* torch's chunk (ATen TensorShape.cpp) keeps the count when the dimension is empty: `chunks`
         * pieces of size 0, through split_with_sizes; split would give one. */
        if (chunks > LS_SPLIT_MAX_PIECES) return ls_kfail(c, "split into %" PRId64 " parts", chunks);
        int64_t *zeros = ls_calloc((size_t)chunks, sizeof *zeros);
        int rc = split_sizes(c, t, dim, zeros, (int)chunks, out);
        free(zeros);
        return rc;
    }
    return split_even(c, t, dim, size / chunks + (size % chunks != 0), out);
}

LK_DECL(k_split_with_sizes)
{
    ls_tensor *t = args[0].t;
    int dim;
    if (t->ndim == 0) return ls_kfail(c, "split_with_sizes() cannot be applied to a 0-dim tensor");
    if (lk_dim(c, lk_int(&args[2]), t->ndim, &dim) != 0) return -1;
    const ls_value *l = &args[1];
    if (l->kind != LS_V_LIST) return ls_kfail(c, "split_sizes must be a list");
    int64_t *sizes = ls_malloc(sizeof *sizes * (l->n + 1));
    int64_t sum = 0;
    for (uint32_t i = 0; i < l->n; i++) {
        sizes[i] = ls_value_as_i64(&l->items[i]);
        if (sizes[i] < 0) {
            int64_t bad = sizes[i];
            free(sizes);
            return ls_kfail(c, "split_sizes contains a negative entry %" PRId64, bad);
        }
        if (__builtin_add_overflow(sum, sizes[i], &sum)) {
            free(sizes);
            return ls_kfail(c, "split_sizes overflow when summed");
        }
    }
    int rc;
    if (sum != t->sizes[dim])
        rc = ls_kfail(c, "split_with_sizes expects split_sizes to sum exactly to %" PRId64 " (dimension %d), got %" PRId64,
                      t->sizes[dim], dim, sum);
    else
        rc = split_sizes(c, t, dim, sizes, (int)l->n, out);
    free(sizes);
    return rc;
}

/* ---- joining */

static int join(ls_kctx *c, const ls_value *list, int64_t dim_arg, bool stack, ls_value *out)
{
    if (list->kind != LS_V_LIST || list->n == 0) return ls_kfail(c, "expects a non-empty list of tensors");
    uint32_t n = list->n;
    const ls_tensor *ref = NULL;
    ls_dtype rt = LS_DT_UNKNOWN;
    for (uint32_t i = 0; i < n; i++) {
        const ls_tensor *t = list->items[i].t;
        /* cat skips legacy empty 1-d tensors ([0]) next to tensors of other ranks */
        rt = rt == LS_DT_UNKNOWN ? t->dtype : ls_dtype_promote(rt, t->dtype);
        if (!ref && (stack || !(t->ndim == 1 && t->sizes[0] == 0))) ref = t;
    }
    if (!ref) ref = list->items[0].t;
    int ndim = ref->ndim + (stack ? 1 : 0), dim;
    if (!stack && ref->ndim == 0) return ls_kfail(c, "zero-dimensional tensor (at position 0) cannot be concatenated");
    if (lk_dim(c, dim_arg, ndim, &dim) != 0) return -1;
    if (ndim > LS_MAX_DIMS) return ls_kfail(c, "too many dimensions");
    int64_t osz[LS_MAX_DIMS];
    for (int d = 0, k = 0; d < ndim; d++) osz[d] = (stack && d == dim) ? (int64_t)n : ref->sizes[k++];
    if (!stack) osz[dim] = 0;
    for (uint32_t i = 0; i < n; i++) {
        const ls_tensor *t = list->items[i].t;
        if (!stack && t->ndim == 1 && t->sizes[0] == 0 && ref->ndim != 1) continue;
        bool ok = t->ndim == ref->ndim;
        for (int d = 0; ok && d < ref->ndim; d++)
            if ((stack || d != dim) && t->sizes[d] != ref->sizes[d]) ok = false;
        if (!ok) {
            char s1[96], s2[96];
            return ls_kfail(c, "%s: tensor %u has shape %s, tensor 0 has %s (they must match%s)", stack ? "stack" : "cat", i,
                            lk_shape_str(t->ndim, t->sizes, s1, sizeof s1),
                            lk_shape_str(ref->ndim, ref->sizes, s2, sizeof s2), stack ? "" : " except in the cat dim");
        }
        if (!stack) osz[dim] += t->sizes[dim];
    }
    ls_tensor *res = lk_new(c, rt, ndim, osz);
    if (!res) return -1;
    size_t es = ls_dtype_size(rt);
    int64_t outer = lk_numel(dim, osz), inner = lk_numel(ndim - dim - 1, osz + dim + 1);
    int64_t orow = osz[dim] * inner, pos = 0;
    for (uint32_t i = 0; i < n; i++) {
        const ls_tensor *t = list->items[i].t;
        if (!stack && t->ndim == 1 && t->sizes[0] == 0 && ref->ndim != 1) continue;
        int64_t len = stack ? 1 : t->sizes[dim];
        void *tmp;
        const uint8_t *src = lk_as(t, rt, &tmp);
        int64_t ds[2] = {orow, 1}, ss[2] = {len * inner, 1}, sz[2] = {outer, len * inner};
        if (len * inner > 0) lk_copy_nd((uint8_t *)res->data + (size_t)(pos * inner) * es, ds, src, ss, es, 2, sz);
        ls_free_aligned(tmp);
        pos += len;
    }
    return lk_ret(out, res);
}

LK_DECL(k_cat) { return join(c, &args[0], lk_int(&args[1]), false, out); }
LK_DECL(k_stack) { return join(c, &args[0], lk_int(&args[1]), true, out); }

/* ---- constant_pad_nd: pads (or crops, when negative) the last dims, last dim first */

LK_DECL(k_constant_pad_nd)
{
    ls_tensor *t = args[0].t;
    int64_t pad[2 * LS_MAX_DIMS];
    int np;
    if (lk_ints(c, &args[1], "pad", pad, 2 * LS_MAX_DIMS, &np) != 0) return -1;
    if (np % 2 != 0) return ls_kfail(c, "padding length must be divisible by 2, got %d", np);
    for (int i = 0; i < np; i++)
        if (pad[i] < -((int64_t)1 << 48) || pad[i] > ((int64_t)1 << 48))
            return ls_kfail(c, "padding %" PRId64 " is out of range", pad[i]);
    if (np / 2 > t->ndim)
        return ls_kfail(c, "padding length %d is too large for a %d-d tensor", np, t->ndim);
    int64_t lo[LS_MAX_DIMS] = {0}, osz[LS_MAX_DIMS];
    for (int d = 0; d < t->ndim; d++) {
        int k = t->ndim - 1 - d; /* pad pair index for dim d */
        int64_t l = 0, r = 0;
        if (k < np / 2) l = pad[2 * k], r = pad[2 * k + 1];
        lo[d] = l;
        if (__builtin_add_overflow(t->sizes[d], l, &osz[d]) || __builtin_add_overflow(osz[d], r, &osz[d]))
            return ls_kfail(c, "padding %" PRId64 ", %" PRId64 " overflows dimension %d", l, r, d);
        if (osz[d] < 0)
            return ls_kfail(c, "the input size %" PRId64 " plus negative padding %" PRId64 " and %" PRId64
                               " resulted in a negative output size",
                            t->sizes[d], l, r);
    }
    ls_tensor *res = lk_new(c, t->dtype, t->ndim, osz);
    if (!res) return -1;
    const ls_value *v = &args[2];
    lk_fill(res->data, t->dtype, res->numel, lk_f64(v), lk_int(v), v->kind != LS_V_FLOAT);
    /* the part of the input that survives, placed at offset lo */
    int64_t ist[LS_MAX_DIMS], ost[LS_MAX_DIMS], csz[LS_MAX_DIMS], ioff = 0, ooff = 0;
    lk_strides(t->ndim, t->sizes, ist);
    lk_strides(t->ndim, osz, ost);
    bool empty = false;
    for (int d = 0; d < t->ndim; d++) {
        int64_t skip_in = lo[d] < 0 ? -lo[d] : 0, skip_out = lo[d] > 0 ? lo[d] : 0;
        int64_t n = t->sizes[d] - skip_in;
        if (n > osz[d] - skip_out) n = osz[d] - skip_out;
        if (n <= 0) empty = true;
        csz[d] = n;
        ioff += skip_in * ist[d];
        ooff += skip_out * ost[d];
    }
    size_t es = ls_dtype_size(t->dtype);
    if (!empty && t->numel)
        lk_copy_nd((uint8_t *)res->data + ooff * (int64_t)es, ost, (uint8_t *)t->data + ioff * (int64_t)es, ist, es,
                   t->ndim, csz);
    return lk_ret(out, res);
}
