/* Creation, copies and conversions: full, zeros, ones, arange, scalar_tensor, the *_like
 * family, copy / copy_, clone, lift_fresh_copy, _to_copy, the dim-order copies, and the two
 * non-tensor ops sym_size and getitem.
 * Tensors are always contiguous in logical order here, so a dim-order copy only converts the
 * dtype; the dim order a .pte asks for is a memory-layout matter of the program, not of values. */
#include <inttypes.h>
#include <math.h>

#include "kernels.h"

static bool scalar_is_int(const ls_value *v)
{
    return v->kind == LS_V_INT || v->kind == LS_V_BOOL ||
           (v->kind == LS_V_TENSOR && !ls_dtype_is_float(v->t->dtype));
}

static int filled(ls_kctx *c, const ls_value *sizev, const ls_value *fill, double f, ls_dtype dt, ls_value *out)
{
    int64_t sz[LS_MAX_DIMS];
    int n;
    if (lk_ints(c, sizev, "size", sz, LS_MAX_DIMS, &n) != 0) return -1;
    for (int i = 0; i < n; i++)
        if (sz[i] < 0) return ls_kfail(c, "negative dimension %" PRId64, sz[i]);
    ls_tensor *t = lk_new(c, dt, n, sz);
    if (!t) return -1;
    if (fill) lk_fill(t->data, dt, t->numel, lk_f64(fill), lk_int(fill), scalar_is_int(fill));
    else lk_fill(t->data, dt, t->numel, f, 0, false);
    return lk_ret(out, t);
}

static ls_dtype scalar_dtype(const ls_value *v)
{
    if (v->kind == LS_V_BOOL) return LS_DT_BOOL;
    if (v->kind == LS_V_INT) return LS_DT_I64;
    if (v->kind == LS_V_TENSOR) return v->t->dtype;
    return LS_DT_F32;
}

LK_DECL(k_full) { return filled(c, &args[0], &args[1], 0, lk_dtype_or(&args[2], scalar_dtype(&args[1])), out); }
LK_DECL(k_zeros) { return filled(c, &args[0], NULL, 0, lk_dtype_or(&args[1], LS_DT_F32), out); }
LK_DECL(k_ones) { return filled(c, &args[0], NULL, 1, lk_dtype_or(&args[1], LS_DT_F32), out); }

/* memory.alloc(size, dtype) stands for the memory of an out argument. Kernels compute the
 * functional result and skip out arguments (ls_eval_node), so nothing ever reads an alloc's
 * value: it makes none, rather than zeroing a buffer as large as the result. */
LK_DECL(k_alloc)
{
    *out = ls_value_none();
    return 0;
}

static int like(ls_kctx *c, const ls_tensor *t, const ls_value *fill, double f, const ls_value *dtv, ls_value *out)
{
    ls_dtype dt = lk_dtype_or(dtv, t->dtype);
    ls_tensor *r = lk_new_like(c, t, dt);
    if (!r) return -1;
    if (fill) lk_fill(r->data, dt, r->numel, lk_f64(fill), lk_int(fill), scalar_is_int(fill));
    else lk_fill(r->data, dt, r->numel, f, 0, false);
    return lk_ret(out, r);
}

LK_DECL(k_full_like) { return like(c, args[0].t, &args[1], 0, &args[2], out); }
LK_DECL(k_zeros_like) { return like(c, args[0].t, NULL, 0, &args[1], out); }
LK_DECL(k_ones_like) { return like(c, args[0].t, NULL, 1, &args[1], out); }

LK_DECL(k_scalar_tensor)
{
    ls_dtype dt = lk_dtype_or(&args[1], LS_DT_F32);
    ls_tensor *t = lk_new(c, dt, 0, NULL);
    if (!t) return -1;
    lk_fill(t->data, dt, 1, lk_f64(&args[0]), lk_int(&args[0]), scalar_is_int(&args[0]));
    return lk_ret(out, t);
}

/* arange(end) / arange(start, end) / arange(start, end, step) share this. */
static int arange(ls_kctx *c, const ls_value *start, const ls_value *end, const ls_value *step, const ls_value *dtv,
                  ls_value *out)
{
    bool all_int = (!start || scalar_is_int(start)) && scalar_is_int(end) && (!step || scalar_is_int(step));
    ls_dtype dt = lk_dtype_or(dtv, all_int ? LS_DT_I64 : LS_DT_F32);
    int64_t n;
    if (all_int) {
        int64_t s = start ? lk_int(start) : 0, e = lk_int(end), st = step ? lk_int(step) : 1;
        if (st == 0) return ls_kfail(c, "step must be nonzero");
        if ((st > 0 && e < s) || (st < 0 && e > s))
            return ls_kfail(c, "upper bound and larger bound inconsistent with step sign");
        /* in 128 bits: the span of two int64 bounds does not fit in 64 */
        __int128 span = (__int128)e - s, stp = st;
        __int128 len = span / stp + (span % stp != 0);
        if (len > ((__int128)1 << 40)) return ls_kfail(c, "arange of %.3g elements", (double)len);
        n = (int64_t)len;
        ls_tensor *t = lk_new(c, dt, 1, &n);
        if (!t) return -1;
        if (dt == LS_DT_I64)
            for (int64_t i = 0; i < n; i++) ((int64_t *)t->data)[i] = (int64_t)(s + (__int128)i * st);
        else
            for (int64_t i = 0; i < n; i++) ls_tensor_set_f64(t, i, (double)(s + (__int128)i * st));
        return lk_ret(out, t);
    }
    double s = start ? lk_f64(start) : 0, e = lk_f64(end), st = step ? lk_f64(step) : 1;
    if (st == 0) return ls_kfail(c, "step must be nonzero");
    if (!isfinite(s) || !isfinite(e) || !isfinite(st))
        return ls_kfail(c, "unsupported range: %g -> %g step %g", s, e, st);
    if ((st > 0 && e < s) || (st < 0 && e > s))
        return ls_kfail(c, "upper bound and larger bound inconsistent with step sign");
    double len = ceil((e - s) / st);
    if (len > 1e10) return ls_kfail(c, "arange of %g elements", len);
    n = (int64_t)len;
    ls_tensor *t = lk_new(c, dt, 1, &n);
    if (!t) return -1;
    for (int64_t i = 0; i < n; i++) {
        double v = s + (double)i * st;
        lk_convert((uint8_t *)t->data + (size_t)i * ls_dtype_size(dt), dt, &v, LS_DT_F64, 1);
    }
    return lk_ret(out, t);
}

LK_DECL(k_arange) { return arange(c, NULL, &args[0], NULL, &args[1], out); }
LK_DECL(k_arange_start) { return arange(c, &args[0], &args[1], NULL, &args[2], out); }
LK_DECL(k_arange_start_step) { return arange(c, &args[0], &args[1], &args[2], &args[3], out); }

/* ---- copies */

LK_DECL(k_clone)
{
    ls_tensor *t = args[0].t;
    return lk_ret(out, ls_tensor_clone(t));
}

/* _to_copy, _to_dim_order_copy: dtype= converts; layout, device and dim order do not change values */
LK_DECL(k_to_copy)
{
    ls_tensor *t = args[0].t;
    ls_dtype dt = lk_dtype_or(&args[1], t->dtype);
    if (ls_dtype_size(dt) == 0) return ls_kfail(c, "unsupported dtype");
    if (dt == t->dtype) return lk_ret(out, ls_tensor_clone(t));
    ls_tensor *r = lk_to_dtype(c, t, dt);
    return r ? lk_ret(out, r) : -1;
}

/* src broadcast to dst's shape, in dst's dtype, written into dst */
static int copy_into(ls_kctx *c, ls_tensor *dst, const ls_tensor *src)
{
    int nd;
    int64_t bs[LS_MAX_DIMS];
    char s1[96], s2[96];
    if (lk_broadcast_shape(c, src->ndim, src->sizes, dst->ndim, dst->sizes, &nd, bs) != 0 || nd != dst->ndim ||
        memcmp(bs, dst->sizes, sizeof(int64_t) * (size_t)nd) != 0)
        return ls_kfail(c, "source of shape %s cannot be copied into a tensor of shape %s",
                        lk_shape_str(src->ndim, src->sizes, s1, sizeof s1),
                        lk_shape_str(dst->ndim, dst->sizes, s2, sizeof s2));
    if (src == dst) return 0;
    ls_tensor *conv = lk_to_dtype(c, (ls_tensor *)src, dst->dtype);
    if (!conv) return -1;
    if (conv->numel == dst->numel) {
        memmove(dst->data, conv->data, dst->nbytes);
    } else {
        ls_tensor *e = lk_expand(c, conv, dst->ndim, dst->sizes);
        if (!e) {
            ls_tensor_unref(conv);
            return -1;
        }
        memcpy(dst->data, e->data, dst->nbytes);
        ls_tensor_unref(e);
    }
    ls_tensor_unref(conv);
    dst->hash_valid = false;
    return 0;
}

LK_DECL(k_copy)
{
    ls_tensor *r = lk_new_like(c, args[0].t, args[0].t->dtype);
    if (!r) return -1;
    if (copy_into(c, r, args[1].t) != 0) {
        ls_tensor_unref(r);
        return -1;
    }
    return lk_ret(out, r);
}

LK_DECL(k_copy_)
{
    ls_tensor *self = args[0].t;
    if (copy_into(c, self, args[1].t) != 0) return -1;
    return lk_ret(out, ls_tensor_ref(self));
}

/* ---- values that are not tensors */

LK_DECL(k_sym_size)
{
    const ls_tensor *t = args[0].t;
    int d;
    if (lk_dim(c, lk_int(&args[1]), t->ndim, &d) != 0) return -1;
    *out = ls_value_int(t->ndim ? t->sizes[d] : 1);
    return 0;
}

LK_DECL(k_getitem)
{
    const ls_value *l = &args[0];
    int64_t i = lk_int(&args[1]);
    if (l->kind != LS_V_LIST) return ls_kfail(c, "getitem of a value that is not a list or tuple");
    if (i < 0) i += l->n;
    if (i < 0 || i >= (int64_t)l->n)
        return ls_kfail(c, "index %" PRId64 " is out of range for a tuple of %u values", lk_int(&args[1]), l->n);
    *out = ls_value_copy(&l->items[i]);
    return 0;
}
