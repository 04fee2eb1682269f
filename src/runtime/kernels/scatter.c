/* The scatter family, as ExecuTorch's portable kernels compute it (kernels/portable/cpu/
 * op_scatter.cpp: scatter.src_out, scatter.value_out; op_scatter_add.cpp): out starts as a copy
 * of self; for every position p of index, out[p with dim replaced by index[p]] = src[p] (or the
 * value; scatter_add adds src[p]). index has self's number of dims, each size at most self's
 * (src's too) outside dim. The portable kernels do not check index values; here one outside
 * [0, self.size(dim)) is an error, as torch says it (negative values are not wrapped). */
#include <inttypes.h>
#include <string.h>

#include "kernels.h"

typedef enum { SC_SRC, SC_VALUE, SC_ADD } scatter_kind;

static int check_shapes(ls_kctx *c, const ls_tensor *self, int dim, const ls_tensor *index, const ls_tensor *src)
{
    if (!ls_dtype_is_int(index->dtype)) return ls_kfail(c, "index must be an int64 tensor, not %s", ls_dtype_name(index->dtype));
    int snd = self->ndim ? self->ndim : 1, ind = index->ndim ? index->ndim : 1;
    if (index->numel && snd != ind)
        return ls_kfail(c, "index has %d dims, self %d: they must have the same number of dimensions", ind, snd);
    if (src && src->dtype != self->dtype)
        return ls_kfail(c, "src is %s, self is %s", ls_dtype_name(src->dtype), ls_dtype_name(self->dtype));
    if (src && index->numel && (src->ndim ? src->ndim : 1) != ind)
        return ls_kfail(c, "index has %d dims, src %d", ind, src->ndim ? src->ndim : 1);
    for (int d = 0; d < index->ndim && index->numel; d++) {
        char s1[96], s2[96];
        if (d != dim && self->ndim && index->sizes[d] > self->sizes[d])
            return ls_kfail(c, "index %s is larger than self %s at dimension %d", lk_shape_str(index->ndim, index->sizes, s1, sizeof s1),
                            lk_shape_str(self->ndim, self->sizes, s2, sizeof s2), d);
        if (src && src->ndim && index->sizes[d] > src->sizes[d])
            return ls_kfail(c, "index %s is larger than src %s at dimension %d", lk_shape_str(index->ndim, index->sizes, s1, sizeof s1),
                            lk_shape_str(src->ndim, src->sizes, s2, sizeof s2), d);
    }
    return 0;
}

static int scatter(ls_kctx *c, const ls_value *args, scatter_kind kind, ls_value *out)
{
    const ls_tensor *self = args[0].t, *index = args[2].t;
    const ls_tensor *src = kind == SC_VALUE ? NULL : args[3].t;
    int dim;
    if (lk_dim(c, lk_int(&args[1]), self->ndim, &dim) != 0) return -1;
    if (check_shapes(c, self, dim, index, src) != 0) return -1;
    ls_tensor *res = ls_tensor_clone(self);
    int64_t ost[LS_MAX_DIMS], sst[LS_MAX_DIMS], pos[LS_MAX_DIMS] = {0};
    lk_strides(self->ndim, self->sizes, ost);
    if (src) lk_strides(src->ndim, src->sizes, sst);
    int64_t size = self->ndim ? self->sizes[dim] : 1;
    size_t es = ls_dtype_size(self->dtype);
    void *tmp;
    const int64_t *ix = lk_as(index, LS_DT_I64, &tmp);
    double value = kind == SC_VALUE ? lk_f64(&args[3]) : 0;
    int64_t ivalue = kind == SC_VALUE ? lk_int(&args[3]) : 0;
    bool value_is_int = kind == SC_VALUE && args[3].kind != LS_V_FLOAT;
    int rc = 0;
    for (int64_t i = 0; i < index->numel; i++) {
        int64_t k = ix[i];
        if (k < 0 || k >= size) {
            rc = ls_kfail(c, "index %" PRId64 " is out of bounds for dimension %d with size %" PRId64, k, dim, size);
            break;
        }
        int64_t o = 0, s = 0;
        for (int d = 0; d < index->ndim; d++) {
            o += (d == dim ? k : pos[d]) * ost[d];
            if (src) s += pos[d] * sst[d];
        }
        if (kind == SC_VALUE) lk_fill((uint8_t *)res->data + (size_t)o * es, self->dtype, 1, value, ivalue, value_is_int);
        else if (kind == SC_SRC) memcpy((uint8_t *)res->data + (size_t)o * es, (const uint8_t *)src->data + (size_t)s * es, es);
        else ls_tensor_set_f64(res, o, ls_tensor_get_f64(res, o) + ls_tensor_get_f64(src, s));
        for (int d = index->ndim - 1; d >= 0; d--) {
            if (++pos[d] < index->sizes[d]) break;
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

/* scatter.src(self, dim, index, src) */
LK_DECL(k_scatter_src)
{
    (void)nargs;
    return scatter(c, args, SC_SRC, out);
}

/* scatter.value(self, dim, index, value) */
LK_DECL(k_scatter_value)
{
    (void)nargs;
    return scatter(c, args, SC_VALUE, out);
}

/* scatter_add(self, dim, index, src) */
LK_DECL(k_scatter_add)
{
    (void)nargs;
    return scatter(c, args, SC_ADD, out);
}
