/* Indexing kernels: index.Tensor (advanced indexing: integer and boolean index tensors, several
 * of them broadcast together, None entries), index_put / index_put_ (with and without
 * accumulate), index_select, gather, embedding.
 *
 * Advanced indexing follows NumPy/torch: boolean masks become the integer indices of their
 * True elements (one index tensor per mask dim); the index tensors broadcast to one shape B;
 * when the indexed dims are adjacent, B takes their place in the result, otherwise it goes
 * first. Every result element is self[pre + lin[b] + blk], so the kernel precomputes three
 * offset tables once and then only adds. */
#include <inttypes.h>
#include <stdlib.h>

#include "kernels.h"

typedef struct adv {
    int nidx;                   /* indexed dims */
    int bnd;
    int64_t bshape[LS_MAX_DIMS];
    int64_t bnumel;
    int64_t *lin;               /* [bnumel] element offsets in self of the indexed part */
    int64_t npre, nblk;
    int64_t *pre, *blk;         /* offsets of the non-indexed dims before / after B */
    bool blk_contiguous;        /* blk[e] == e: copy blocks with memcpy */
    int ondim;
    int64_t oshape[LS_MAX_DIMS];
} adv;

static void adv_free(adv *a)
{
    free(a->lin);
    free(a->pre);
    free(a->blk);
}

/* Offsets of all elements of a sub-block of self (dims `dims`, in order). */
static int64_t *block_offsets(const ls_tensor *self, const int64_t *st, const int *dims, int n, int64_t *count)
{
    int64_t total = 1;
    for (int i = 0; i < n; i++) total *= self->sizes[dims[i]];
    int64_t *off = ls_malloc(sizeof *off * (size_t)(total ? total : 1));
    int64_t idx[LS_MAX_DIMS] = {0}, cur = 0;
    for (int64_t e = 0; e < total; e++) {
        off[e] = cur;
        for (int i = n - 1; i >= 0; i--) {
            cur += st[dims[i]];
            if (++idx[i] < self->sizes[dims[i]]) break;
            cur -= st[dims[i]] * self->sizes[dims[i]];
            idx[i] = 0;
        }
    }
    *count = total;
    return off;
}

static int adv_init(ls_kctx *c, const ls_tensor *self, const ls_value *list, adv *a)
{
    memset(a, 0, sizeof *a);
    if (list->kind != LS_V_LIST) return ls_kfail(c, "indices must be a list");
    int dims[LS_MAX_DIMS];
    ls_tensor *idx[LS_MAX_DIMS]; /* owned int64 index tensors */
    int d = 0, rc = 0;
    char s1[96], s2[96];
    for (uint32_t k = 0; k < list->n && rc == 0; k++) {
        const ls_value *v = &list->items[k];
        if (v->kind == LS_V_NONE) {
            d++;
            continue;
        }
        if (v->kind != LS_V_TENSOR) {
            rc = ls_kfail(c, "index %u is not a tensor or None", k);
            break;
        }
        ls_tensor *t = v->t;
        if (t->dtype == LS_DT_BOOL || t->dtype == LS_DT_U8) { /* a mask over t->ndim dims */
            if (d + t->ndim > self->ndim || t->ndim == 0) {
                rc = t->ndim == 0 ? ls_kfail(c, "0-dim boolean indices are not supported")
                                  : ls_kfail(c, "too many indices for a tensor of dimension %d", self->ndim);
                break;
            }
            for (int q = 0; q < t->ndim && rc == 0; q++)
                if (t->sizes[q] != self->sizes[d + q])
                    rc = ls_kfail(c, "the shape of the mask %s at index %u does not match the shape of the indexed tensor %s",
                                  lk_shape_str(t->ndim, t->sizes, s1, sizeof s1), k,
                                  lk_shape_str(self->ndim, self->sizes, s2, sizeof s2));
            if (rc) break;
            const uint8_t *m = t->data;
            int64_t count = 0;
            for (int64_t i = 0; i < t->numel; i++) count += m[i] != 0;
            int64_t st[LS_MAX_DIMS];
            lk_strides(t->ndim, t->sizes, st);
            for (int q = 0; q < t->ndim; q++) {
                idx[a->nidx] = ls_tensor_alloc(LS_DT_I64, 1, &count);
                dims[a->nidx++] = d + q;
            }
            int64_t j = 0;
            for (int64_t i = 0; i < t->numel; i++) {
                if (!m[i]) continue;
                for (int q = 0; q < t->ndim; q++)
                    ((int64_t *)idx[a->nidx - t->ndim + q]->data)[j] = (i / st[q]) % t->sizes[q];
                j++;
            }
            d += t->ndim;
        } else if (ls_dtype_is_int(t->dtype)) {
            if (d >= self->ndim) {
                rc = ls_kfail(c, "too many indices for a tensor of dimension %d", self->ndim);
                break;
            }
            idx[a->nidx] = ls_tensor_ref(t);
            dims[a->nidx++] = d++;
        } else {
            rc = ls_kfail(c, "tensors used as indices must be long, int, byte or bool tensors, not %s",
                          ls_dtype_name(t->dtype));
        }
    }
    if (rc == 0 && d > self->ndim) rc = ls_kfail(c, "too many indices for a tensor of dimension %d", self->ndim);
    /* broadcast shape of the index tensors */
    a->bnd = 0;
    for (int j = 0; j < a->nidx && rc == 0; j++) {
        int nd;
        int64_t tmp[LS_MAX_DIMS];
        if (lk_broadcast_shape(c, a->bnd, a->bshape, idx[j]->ndim, idx[j]->sizes, &nd, tmp) != 0) {
            rc = -1;
            break;
        }
        a->bnd = nd;
        memcpy(a->bshape, tmp, sizeof(int64_t) * (size_t)nd);
    }
    int64_t st[LS_MAX_DIMS];
    lk_strides(self->ndim, self->sizes, st);
    if (rc == 0) {
        a->bnumel = lk_numel(a->bnd, a->bshape);
        a->lin = ls_calloc((size_t)(a->bnumel ? a->bnumel : 1), sizeof *a->lin);
        for (int j = 0; j < a->nidx && rc == 0; j++) {
            /* walk B, reading idx[j] through broadcast strides */
            int64_t bst[LS_MAX_DIMS], ist[LS_MAX_DIMS], pos[LS_MAX_DIMS] = {0}, off = 0;
            lk_strides(idx[j]->ndim, idx[j]->sizes, ist);
            for (int q = 0; q < a->bnd; q++) {
                int k = q - (a->bnd - idx[j]->ndim);
                bst[q] = k < 0 || idx[j]->sizes[k] == 1 ? 0 : ist[k];
            }
            int64_t size = self->sizes[dims[j]];
            for (int64_t b = 0; b < a->bnumel; b++) {
                int64_t v = ls_tensor_get_i64(idx[j], off);
                if (v < -size || v >= size) {
                    rc = ls_kfail(c, "index %" PRId64 " is out of bounds for dimension %d with size %" PRId64, v,
                                  dims[j], size);
                    break;
                }
                a->lin[b] += (v < 0 ? v + size : v) * st[dims[j]];
                for (int q = a->bnd - 1; q >= 0; q--) {
                    off += bst[q];
                    if (++pos[q] < a->bshape[q]) break;
                    off -= bst[q] * a->bshape[q];
                    pos[q] = 0;
                }
            }
        }
    }
    if (rc == 0) {
        bool adjacent = true;
        for (int j = 1; j < a->nidx; j++)
            if (dims[j] != dims[j - 1] + 1) adjacent = false;
        bool indexed[LS_MAX_DIMS] = {0};
        for (int j = 0; j < a->nidx; j++) indexed[dims[j]] = true;
        int pre[LS_MAX_DIMS], blk[LS_MAX_DIMS], npre = 0, nblk = 0;
        for (int q = 0; q < self->ndim; q++) {
            if (indexed[q]) continue;
            if (adjacent && a->nidx && q < dims[0]) pre[npre++] = q;
            else blk[nblk++] = q;
        }
        if (npre + a->bnd + nblk > LS_MAX_DIMS) {
            rc = ls_kfail(c, "the result would have more than %d dimensions", LS_MAX_DIMS);
        } else {
            a->ondim = 0;
            for (int q = 0; q < npre; q++) a->oshape[a->ondim++] = self->sizes[pre[q]];
            for (int q = 0; q < a->bnd; q++) a->oshape[a->ondim++] = a->bshape[q];
            for (int q = 0; q < nblk; q++) a->oshape[a->ondim++] = self->sizes[blk[q]];
            a->pre = block_offsets(self, st, pre, npre, &a->npre);
            a->blk = block_offsets(self, st, blk, nblk, &a->nblk);
            a->blk_contiguous = true;
            for (int64_t e = 0; e < a->nblk && a->blk_contiguous; e++) a->blk_contiguous = a->blk[e] == e;
        }
    }
    for (int j = 0; j < a->nidx; j++) ls_tensor_unref(idx[j]);
    if (rc) adv_free(a);
    return rc;
}

LK_DECL(k_index)
{
    const ls_tensor *self = args[0].t;
    adv a;
    if (adv_init(c, self, &args[1], &a) != 0) return -1;
    ls_tensor *res = lk_new(c, self->dtype, a.ondim, a.oshape);
    if (!res) {
        adv_free(&a);
        return -1;
    }
    size_t es = ls_dtype_size(self->dtype);
    const uint8_t *src = self->data;
    uint8_t *dst = res->data;
    for (int64_t p = 0; p < a.npre; p++)
        for (int64_t b = 0; b < a.bnumel; b++) {
            int64_t base = a.pre[p] + a.lin[b];
            if (a.blk_contiguous) {
                memcpy(dst, src + (size_t)base * es, (size_t)a.nblk * es);
                dst += (size_t)a.nblk * es;
            } else {
                for (int64_t e = 0; e < a.nblk; e++, dst += es) memcpy(dst, src + (size_t)(base + a.blk[e]) * es, es);
            }
        }
    adv_free(&a);
    return lk_ret(out, res);
}

/* self[indices] (+)= values; self is modified in place. */
#define ACC_LOOP(T, W)                                                                     \
    do {                                                                                   \
        T *d = (T *)self->data;                                                            \
        const T *s = (const T *)vals->data;                                                \
        int64_t k = 0;                                                                     \
        for (int64_t p = 0; p < a.npre; p++)                                               \
            for (int64_t b = 0; b < a.bnumel; b++) {                                       \
                int64_t base = a.pre[p] + a.lin[b];                                        \
                for (int64_t e = 0; e < a.nblk; e++, k++) d[base + a.blk[e]] = (T)(W); \
            }                                                                              \
    } while (0)

static int put(ls_kctx *c, ls_tensor *self, const ls_value *indices, const ls_tensor *values, bool accumulate)
{
    adv a;
    if (adv_init(c, self, indices, &a) != 0) return -1;
    /* values broadcast to the indexed shape, in self's dtype */
    int nd;
    int64_t bs[LS_MAX_DIMS];
    char s1[96], s2[96];
    if (lk_broadcast_shape(c, values->ndim, values->sizes, a.ondim, a.oshape, &nd, bs) != 0 || nd != a.ondim ||
        memcmp(bs, a.oshape, sizeof(int64_t) * (size_t)nd) != 0) {
        adv_free(&a);
        return ls_kfail(c, "shape mismatch: value tensor of shape %s cannot be broadcast to indexing result of shape %s",
                        lk_shape_str(values->ndim, values->sizes, s1, sizeof s1),
                        lk_shape_str(a.ondim, a.oshape, s2, sizeof s2));
    }
    ls_tensor *conv = lk_to_dtype(c, (ls_tensor *)values, self->dtype);
    ls_tensor *vals = conv ? lk_expand(c, conv, a.ondim, a.oshape) : NULL;
    ls_tensor_unref(conv);
    if (!vals) {
        adv_free(&a);
        return -1;
    }
    size_t es = ls_dtype_size(self->dtype);
    if (!accumulate) {
        const uint8_t *src = vals->data;
        uint8_t *dst = self->data;
        for (int64_t p = 0; p < a.npre; p++)
            for (int64_t b = 0; b < a.bnumel; b++) {
                int64_t base = a.pre[p] + a.lin[b];
                if (a.blk_contiguous) {
                    memcpy(dst + (size_t)base * es, src, (size_t)a.nblk * es);
                    src += (size_t)a.nblk * es;
                } else {
                    for (int64_t e = 0; e < a.nblk; e++, src += es) memcpy(dst + (size_t)(base + a.blk[e]) * es, src, es);
                }
            }
    } else {
        switch (self->dtype) {
        case LS_DT_F32: ACC_LOOP(float, d[base + a.blk[e]] + s[k]); break;
        case LS_DT_F64: ACC_LOOP(double, d[base + a.blk[e]] + s[k]); break;
        case LS_DT_I64: ACC_LOOP(uint64_t, d[base + a.blk[e]] + s[k]); break;
        case LS_DT_I32: ACC_LOOP(uint32_t, d[base + a.blk[e]] + s[k]); break;
        case LS_DT_I16: ACC_LOOP(uint16_t, d[base + a.blk[e]] + s[k]); break;
        case LS_DT_I8:
        case LS_DT_U8: ACC_LOOP(uint8_t, d[base + a.blk[e]] + s[k]); break;
        case LS_DT_BOOL: ACC_LOOP(uint8_t, d[base + a.blk[e]] | s[k]); break;
        case LS_DT_F16: ACC_LOOP(uint16_t, ls_f32_to_f16(ls_f16_to_f32(d[base + a.blk[e]]) + ls_f16_to_f32(s[k]))); break;
        case LS_DT_BF16:
            ACC_LOOP(uint16_t, ls_f32_to_bf16(ls_bf16_to_f32(d[base + a.blk[e]]) + ls_bf16_to_f32(s[k])));
            break;
        default:
            ls_tensor_unref(vals);
            adv_free(&a);
            return ls_kfail(c, "index_put with accumulate does not support %s", ls_dtype_name(self->dtype));
        }
    }
    self->hash_valid = false;
    ls_tensor_unref(vals);
    adv_free(&a);
    return 0;
}

LK_DECL(k_index_put)
{
    ls_tensor *res = ls_tensor_clone(args[0].t);
    if (put(c, res, &args[1], args[2].t, lk_bool(&args[3])) != 0) {
        ls_tensor_unref(res);
        return -1;
    }
    return lk_ret(out, res);
}

LK_DECL(k_index_put_)
{
    ls_tensor *self = args[0].t;
    if (put(c, self, &args[1], args[2].t, lk_bool(&args[3])) != 0) return -1;
    return lk_ret(out, ls_tensor_ref(self));
}

/* ---- index_select, embedding: whole rows at a time */

static int take_rows(ls_kctx *c, const ls_tensor *self, int dim, const ls_tensor *index, int ondim,
                     const int64_t *oshape, ls_value *out)
{
    ls_tensor *res = lk_new(c, self->dtype, ondim, oshape);
    if (!res) return -1;
    int64_t size = self->ndim ? self->sizes[dim] : 1;
    int64_t outer = self->ndim ? lk_numel(dim, self->sizes) : 1;
    int64_t inner = self->ndim ? lk_numel(self->ndim - dim - 1, self->sizes + dim + 1) : 1;
    size_t row = (size_t)inner * ls_dtype_size(self->dtype);
    void *tmp;
    const int64_t *ix = lk_as(index, LS_DT_I64, &tmp);
    for (int64_t i = 0; i < index->numel; i++)
        if (ix[i] < 0 || ix[i] >= size) { /* no negative indices here, as in torch */
            int64_t bad = ix[i];
            ls_free_aligned(tmp);
            ls_tensor_unref(res);
            return ls_kfail(c, "index %" PRId64 " is out of range for dimension %d of size %" PRId64, bad, dim, size);
        }
    uint8_t *dst = res->data;
    for (int64_t p = 0; p < outer; p++)
        for (int64_t i = 0; i < index->numel; i++, dst += row) {
            memcpy(dst, (const uint8_t *)self->data + (size_t)(p * size + ix[i]) * row, row);
        }
    ls_free_aligned(tmp);
    return lk_ret(out, res);
}

LK_DECL(k_index_select)
{
    const ls_tensor *self = args[0].t, *index = args[2].t;
    int dim;
    if (lk_dim(c, lk_int(&args[1]), self->ndim, &dim) != 0) return -1;
    if (index->ndim > 1) return ls_kfail(c, "index_select(): index must be a vector, got %d-d", index->ndim);
    if (!ls_dtype_is_int(index->dtype)) return ls_kfail(c, "index_select(): index must be an integer tensor");
    if (self->ndim == 0 && index->numel != 1) return ls_kfail(c, "index_select(): index to a scalar can have only 1 value");
    int64_t oshape[LS_MAX_DIMS];
    memcpy(oshape, self->sizes, sizeof(int64_t) * self->ndim);
    if (self->ndim) oshape[dim] = index->numel;
    return take_rows(c, self, dim, index, self->ndim, oshape, out);
}

LK_DECL(k_embedding)
{
    const ls_tensor *w = args[0].t, *ix = args[1].t;
    if (w->ndim != 2) return ls_kfail(c, "weight must be 2-d, got %d-d", w->ndim);
    if (!ls_dtype_is_int(ix->dtype)) return ls_kfail(c, "indices must be an integer tensor, not %s", ls_dtype_name(ix->dtype));
    if (ix->ndim + 1 > LS_MAX_DIMS) return ls_kfail(c, "too many dimensions");
    int64_t oshape[LS_MAX_DIMS];
    memcpy(oshape, ix->sizes, sizeof(int64_t) * ix->ndim);
    oshape[ix->ndim] = w->sizes[1];
    return take_rows(c, w, 0, ix, ix->ndim + 1, oshape, out);
}

/* ---- gather */

LK_DECL(k_gather)
{
    const ls_tensor *self = args[0].t, *index = args[2].t;
    int dim;
    if (lk_dim(c, lk_int(&args[1]), self->ndim, &dim) != 0) return -1;
    if (!ls_dtype_is_int(index->dtype)) return ls_kfail(c, "gather(): index must be an integer tensor");
    int snd = self->ndim ? self->ndim : 1, ind = index->ndim ? index->ndim : 1;
    if (snd != ind) return ls_kfail(c, "index tensor must have the same number of dimensions as input tensor");
    for (int d = 0; d < index->ndim && self->ndim; d++)
        if (d != dim && index->sizes[d] > self->sizes[d]) {
            char s1[96], s2[96];
            return ls_kfail(c, "size does not match at dimension %d: index %s, input %s", d,
                            lk_shape_str(index->ndim, index->sizes, s1, sizeof s1),
                            lk_shape_str(self->ndim, self->sizes, s2, sizeof s2));
        }
    ls_tensor *res = lk_new(c, self->dtype, index->ndim, index->sizes);
    if (!res) return -1;
    int64_t st[LS_MAX_DIMS], pos[LS_MAX_DIMS] = {0};
    lk_strides(self->ndim, self->sizes, st);
    int64_t size = self->ndim ? self->sizes[dim] : 1;
    size_t es = ls_dtype_size(self->dtype);
    void *tmp;
    const int64_t *ix = lk_as(index, LS_DT_I64, &tmp);
    int64_t base = 0; /* offset of the current index position in self, without the dim term */
    int rc = 0;
    for (int64_t i = 0; i < index->numel; i++) {
        int64_t k = ix[i];
        if (k < 0 || k >= size) {
            rc = ls_kfail(c, "index %" PRId64 " is out of bounds for dimension %d with size %" PRId64, k, dim, size);
            break;
        }
        memcpy((uint8_t *)res->data + (size_t)i * es,
               (const uint8_t *)self->data + (size_t)(base + (self->ndim ? k * st[dim] : 0)) * es, es);
        for (int d = index->ndim - 1; d >= 0; d--) {
            if (d != dim) base += st[d];
            if (++pos[d] < index->sizes[d]) break;
            if (d != dim) base -= st[d] * index->sizes[d];
            pos[d] = 0;
        }
    }
    ls_free_aligned(tmp);
    if (rc) {
        ls_tensor_unref(res);
        return -1;
    }
    return lk_ret(out, res);
}
