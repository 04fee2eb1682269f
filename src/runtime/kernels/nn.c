/* Network layers: layer_norm, native_layer_norm and scaled_dot_product_attention.
 *
 * Layer norm works on rows of the normalised size: mean and biased variance in float64
 * (two passes, so no cancellation), then (x - mean)·rstd·w + b.
 * Attention is torch's math path: scores = q·kᵀ·scale (+ mask, or −inf where a boolean mask is
 * False or above the causal diagonal), a softmax per row, then probs·v; the products go through
 * the blocked GEMM. A row with every score masked gives zeros (torch's _safe_softmax), not NaN. */
#include <inttypes.h>
#include <math.h>
#include <stdlib.h>

#include "kernels.h"

/* ---- layer norm */

static int layer_norm(ls_kctx *c, const ls_value *args, bool native, ls_value *out)
{
    const ls_tensor *x = args[0].t;
    const ls_tensor *w = lk_none(&args[2]) ? NULL : args[2].t, *b = lk_none(&args[3]) ? NULL : args[3].t;
    double eps = lk_f64(&args[4]);
    int64_t ns[LS_MAX_DIMS];
    int k;
    if (lk_ints(c, &args[1], "normalized_shape", ns, LS_MAX_DIMS, &k) != 0) return -1;
    bool ok = k >= 1 && k <= x->ndim;
    for (int i = 0; ok && i < k; i++) ok = x->sizes[x->ndim - k + i] == ns[i];
    char s1[96], s2[96];
    if (!ok)
        return ls_kfail(c, "given normalized_shape=%s, expected input with shape [*, %s], but got input of size %s",
                        lk_shape_str(k, ns, s1, sizeof s1), lk_shape_str(k, ns, s2, sizeof s2) + 1,
                        lk_shape_str(x->ndim, x->sizes, (char[96]){0}, 96));
    int64_t D = lk_numel(k, ns), rows = lk_numel(x->ndim - k, x->sizes);
    for (int q = 0; q < 2; q++) {
        const ls_tensor *p = q ? b : w;
        if (p && p->numel != D)
            return ls_kfail(c, "%s has %" PRId64 " elements, the normalised shape %s has %" PRId64, q ? "bias" : "weight",
                            p->numel, lk_shape_str(k, ns, s1, sizeof s1), D);
    }
    ls_dtype rt = x->dtype;
    if (!ls_dtype_is_float(rt)) return ls_kfail(c, "expects a floating point input, not %s", ls_dtype_name(rt));
    ls_tensor *y = lk_new_like(c, x, rt);
    int64_t msz[LS_MAX_DIMS];
    memcpy(msz, x->sizes, sizeof(int64_t) * x->ndim);
    for (int i = x->ndim - k; i < x->ndim; i++) msz[i] = 1;
    ls_tensor *mean = native && y ? lk_new(c, rt, x->ndim, msz) : NULL;
    ls_tensor *rstd = native && mean ? lk_new(c, rt, x->ndim, msz) : NULL;
    if (!y || (native && !rstd)) {
        ls_tensor_unref(y);
        ls_tensor_unref(mean);
        return -1;
    }
    void *tx, *tw = NULL, *tb = NULL;
    const double *xd = lk_as(x, LS_DT_F64, &tx);
    const double *wd = w ? lk_as(w, LS_DT_F64, &tw) : NULL, *bd = b ? lk_as(b, LS_DT_F64, &tb) : NULL;
    double *yd = lk_alloc_tmp(sizeof(double) * (size_t)(D + 1));
    for (int64_t r = 0; r < rows; r++) {
        const double *xr = xd + r * D;
        double m = 0, v = 0;
        for (int64_t i = 0; i < D; i++) m += xr[i];
        m = D ? m / (double)D : NAN;
        for (int64_t i = 0; i < D; i++) v += (xr[i] - m) * (xr[i] - m);
        v = D ? v / (double)D : NAN;
        double rs = 1.0 / sqrt(v + eps);
        for (int64_t i = 0; i < D; i++) {
            double t = (xr[i] - m) * rs;
            if (wd) t *= wd[i];
            if (bd) t += bd[i];
            yd[i] = t;
        }
        lk_convert((uint8_t *)y->data + (size_t)(r * D) * ls_dtype_size(rt), rt, yd, LS_DT_F64, D);
        if (native) {
            lk_convert((uint8_t *)mean->data + (size_t)r * ls_dtype_size(rt), rt, &m, LS_DT_F64, 1);
            lk_convert((uint8_t *)rstd->data + (size_t)r * ls_dtype_size(rt), rt, &rs, LS_DT_F64, 1);
        }
    }
    ls_free_aligned(yd);
    ls_free_aligned(tx);
    ls_free_aligned(tw);
    ls_free_aligned(tb);
    if (!native) return lk_ret(out, y);
    *out = ls_value_list(3);
    out->items[0] = ls_value_tensor(y);
    out->items[1] = ls_value_tensor(mean);
    out->items[2] = ls_value_tensor(rstd);
    return 0;
}

LK_DECL(k_layer_norm) { return layer_norm(c, args, false, out); }
LK_DECL(k_native_layer_norm) { return layer_norm(c, args, true, out); }

/* ---- scaled dot product attention */

/* Repeats dim -3 (heads) `rep` times each, as repeat_interleave does for grouped-query attention. */
static ls_tensor *repeat_heads(ls_kctx *c, const ls_tensor *t, int64_t rep)
{
    int64_t sz[LS_MAX_DIMS];
    memcpy(sz, t->sizes, sizeof(int64_t) * t->ndim);
    int h = t->ndim - 3;
    sz[h] *= rep;
    ls_tensor *o = lk_new(c, t->dtype, t->ndim, sz);
    if (!o) return NULL;
    int64_t outer = lk_numel(h + 1, t->sizes), chunk = lk_numel(2, t->sizes + t->ndim - 2);
    size_t bytes = (size_t)chunk * ls_dtype_size(t->dtype);
    uint8_t *dst = o->data;
    for (int64_t i = 0; i < outer; i++)
        for (int64_t r = 0; r < rep; r++, dst += bytes) memcpy(dst, (const uint8_t *)t->data + (size_t)i * bytes, bytes);
    return o;
}

LK_DECL(k_sdpa)
{
    ls_tensor *q = args[0].t, *k = args[1].t, *v = args[2].t;
    const ls_tensor *mask = lk_none(&args[3]) ? NULL : args[3].t;
    bool causal = lk_bool(&args[5]), gqa = lk_bool(&args[7]);
    char s1[96], s2[96];
    if (q->ndim < 2 || k->ndim < 2 || v->ndim < 2) return ls_kfail(c, "query, key and value must be at least 2-d");
    int64_t L = q->sizes[q->ndim - 2], E = q->sizes[q->ndim - 1], S = k->sizes[k->ndim - 2];
    if (k->sizes[k->ndim - 1] != E || v->sizes[v->ndim - 2] != S)
        return ls_kfail(c, "query %s, key %s and value %s do not fit together",
                        lk_shape_str(q->ndim, q->sizes, s1, sizeof s1), lk_shape_str(k->ndim, k->sizes, s2, sizeof s2),
                        lk_shape_str(v->ndim, v->sizes, (char[96]){0}, 96));
    if (mask && causal) return ls_kfail(c, "attn_mask and is_causal cannot both be set");
    double scale = lk_none(&args[6]) ? 1.0 / sqrt((double)E) : lk_f64(&args[6]);
    ls_tensor *kk = ls_tensor_ref(k), *vv = ls_tensor_ref(v);
    int rc = 0;
    ls_tensor *kt = NULL, *scores = NULL, *m = NULL;
    if (gqa && q->ndim >= 3 && k->ndim >= 3) {
        int64_t hq = q->sizes[q->ndim - 3], hk = k->sizes[k->ndim - 3];
        if (hk == 0 || hq % hk != 0) {
            rc = ls_kfail(c, "enable_gqa: %" PRId64 " query heads are not a multiple of %" PRId64 " key heads", hq, hk);
            goto done;
        }
        if (hq != hk) {
            ls_tensor *t1 = repeat_heads(c, k, hq / hk), *t2 = t1 ? repeat_heads(c, v, hq / hk) : NULL;
            ls_tensor_unref(kk);
            ls_tensor_unref(vv);
            kk = t1, vv = t2;
            if (!t2) {
                rc = -1;
                goto done;
            }
        }
    }
    int perm[LS_MAX_DIMS];
    for (int d = 0; d < kk->ndim; d++) perm[d] = d;
    perm[kk->ndim - 2] = kk->ndim - 1, perm[kk->ndim - 1] = kk->ndim - 2;
    if (!(kt = lk_permute(c, kk, perm))) {
        rc = -1;
        goto done;
    }
    ls_value sv;
    if (lk_matmul(c, q, kt, &sv) != 0) {
        rc = -1;
        goto done;
    }
    scores = sv.t;
    /* work on the scores in float32 (float64 when that is the dtype) */
    ls_dtype ct = scores->dtype == LS_DT_F64 ? LS_DT_F64 : LS_DT_F32;
    if (scores->dtype != ct) {
        ls_tensor *t = lk_to_dtype(c, scores, ct);
        ls_tensor_unref(scores);
        if (!(scores = t)) {
            rc = -1;
            goto done;
        }
    }
    if (mask) {
        int nd;
        int64_t bs[LS_MAX_DIMS];
        if (lk_broadcast_shape(c, mask->ndim, mask->sizes, scores->ndim, scores->sizes, &nd, bs) != 0 ||
            nd != scores->ndim || memcmp(bs, scores->sizes, sizeof(int64_t) * (size_t)nd) != 0) {
            rc = ls_kfail(c, "attn_mask of shape %s does not broadcast to the scores' shape %s",
                          lk_shape_str(mask->ndim, mask->sizes, s1, sizeof s1),
                          lk_shape_str(scores->ndim, scores->sizes, s2, sizeof s2));
            goto done;
        }
        ls_tensor *mc = lk_to_dtype(c, (ls_tensor *)mask, mask->dtype == LS_DT_BOOL ? LS_DT_BOOL : ct);
        m = mc ? lk_expand(c, mc, scores->ndim, scores->sizes) : NULL;
        ls_tensor_unref(mc);
        if (!m) {
            rc = -1;
            goto done;
        }
    }
    int64_t rows = scores->numel / (S ? S : 1);
    if (S == 0) rows = 0;
    for (int64_t r = 0; r < rows; r++) {
        int64_t l = r % (L ? L : 1);
        if (ct == LS_DT_F32) {
            float *row = (float *)scores->data + r * S;
            for (int64_t j = 0; j < S; j++) {
                float s = row[j] * (float)scale;
                if (m && m->dtype == LS_DT_BOOL) s = ((const uint8_t *)m->data)[r * S + j] ? s : -INFINITY;
                else if (m) s += ((const float *)m->data)[r * S + j];
                if (causal && j > l) s = -INFINITY;
                row[j] = s;
            }
            float mx = -INFINITY;
            for (int64_t j = 0; j < S; j++) mx = row[j] > mx ? row[j] : mx;
            if (mx == -INFINITY) memset(row, 0, sizeof(float) * (size_t)S);
            else lk_softmax_row(row, row, S, false);
        } else {
            double *row = (double *)scores->data + r * S, mx = -INFINITY, sum = 0;
            for (int64_t j = 0; j < S; j++) {
                double s = row[j] * scale;
                if (m && m->dtype == LS_DT_BOOL) s = ((const uint8_t *)m->data)[r * S + j] ? s : -INFINITY;
                else if (m) s += ((const double *)m->data)[r * S + j];
                if (causal && j > l) s = -INFINITY;
                row[j] = s;
                mx = s > mx ? s : mx;
            }
            for (int64_t j = 0; j < S; j++) sum += row[j] = mx == -INFINITY ? 0 : exp(row[j] - mx);
            for (int64_t j = 0; j < S; j++) row[j] = sum > 0 ? row[j] / sum : 0;
        }
    }
    if (ct != q->dtype && ls_dtype_is_float(q->dtype)) {
        ls_tensor *t = lk_to_dtype(c, scores, q->dtype);
        ls_tensor_unref(scores);
        if (!(scores = t)) {
            rc = -1;
            goto done;
        }
    }
    rc = lk_matmul(c, scores, vv, out);
done:
    ls_tensor_unref(kk);
    ls_tensor_unref(vv);
    ls_tensor_unref(kt);
    ls_tensor_unref(scores);
    ls_tensor_unref(m);
    return rc;
}
