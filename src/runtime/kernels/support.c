/* What every kernel family shares: arguments, shapes, outputs, dtype conversion, type
 * promotion, the broadcast iterator and the two-thread helper. */
#include <inttypes.h>
#include <math.h>
#include <pthread.h>
#include <sys/mman.h>
#include <stdio.h>
#include <stdlib.h>
#include <unistd.h>

#include "kernels.h"

/* ---- arguments and shapes */

int lk_ints(ls_kctx *c, const ls_value *a, const char *what, int64_t *out, int cap, int *n)
{
    if (a->kind == LS_V_INT || a->kind == LS_V_BOOL) {
        if (cap < 1) return ls_kfail(c, "%s: too many values", what);
        out[0] = ls_value_as_i64(a);
        *n = 1;
        return 0;
    }
    if (a->kind == LS_V_NONE) {
        *n = 0;
        return 0;
    }
    if (a->kind != LS_V_LIST) return ls_kfail(c, "%s: expected a list of ints", what);
    if (a->n > (uint32_t)cap) return ls_kfail(c, "%s: %u values, at most %d are supported", what, a->n, cap);
    for (uint32_t i = 0; i < a->n; i++) out[i] = ls_value_as_i64(&a->items[i]);
    *n = (int)a->n;
    return 0;
}

int lk_dim(ls_kctx *c, int64_t dim, int ndim, int *out)
{
    int64_t lim = ndim > 0 ? ndim : 1;
    if (dim < -lim || dim >= lim)
        return ls_kfail(c, "dimension %" PRId64 " is out of range for a %d-d tensor (expected %" PRId64 "..%" PRId64 ")",
                        dim, ndim, -lim, lim - 1);
    *out = (int)(dim < 0 ? dim + lim : dim);
    return 0;
}

const char *lk_shape_str(int ndim, const int64_t *sizes, char *buf, size_t cap)
{
    size_t len = (size_t)snprintf(buf, cap, "[");
    for (int i = 0; i < ndim && len < cap; i++)
        len += (size_t)snprintf(buf + len, cap - len, "%s%" PRId64, i ? ", " : "", sizes[i]);
    if (len < cap) snprintf(buf + len, cap - len, "]");
    return buf;
}

int64_t lk_numel(int ndim, const int64_t *sizes)
{
    uint64_t n = 1; /* unsigned: a shape that overflows is refused elsewhere, never undefined here */
    for (int i = 0; i < ndim; i++) n *= (uint64_t)sizes[i];
    return (int64_t)n;
}

int lk_broadcast_shape(ls_kctx *c, int na, const int64_t *sa, int nb, const int64_t *sb, int *nout, int64_t *out)
{
    int n = na > nb ? na : nb;
    for (int i = 0; i < n; i++) {
        int ia = i - (n - na), ib = i - (n - nb);
        int64_t a = ia >= 0 ? sa[ia] : 1, b = ib >= 0 ? sb[ib] : 1;
        if (a != b && a != 1 && b != 1) {
            char s1[96], s2[96];
            return ls_kfail(c, "shapes %s and %s cannot be broadcast together (dimension %d: %" PRId64 " vs %" PRId64 ")",
                            lk_shape_str(na, sa, s1, sizeof s1), lk_shape_str(nb, sb, s2, sizeof s2), i, a, b);
        }
        out[i] = a == 1 ? b : a;
    }
    *nout = n;
    return 0;
}

void lk_strides(int ndim, const int64_t *sizes, int64_t *strides)
{
    uint64_t s = 1; /* unsigned for the same reason as lk_numel (an empty shape may be huge) */
    for (int i = ndim - 1; i >= 0; i--) {
        strides[i] = (int64_t)s;
        s *= (uint64_t)sizes[i];
    }
}

/* ---- outputs */

/* Large results come from fresh pages: without help every 4 KiB page costs a fault (several
 * microseconds under a hypervisor), more than the kernel's own work. Transparent huge pages
 * cut that 512-fold, so large blocks are 2 MiB-aligned and marked for them. Small results
 * (most of a decode step's) take the allocator's fast path. All are released with free(). */
static void *alloc_result(size_t n)
{
    if (n <= 1024) return malloc(n ? n : 1); /* 16-byte aligned: enough for any element, and cheap */
    if (n < ((size_t)4 << 20)) return ls_alloc_aligned(n);
    void *p = NULL;
    size_t sz = (n + ((size_t)2 << 20) - 1) & ~(((size_t)2 << 20) - 1);
    if (posix_memalign(&p, (size_t)2 << 20, sz) != 0) return NULL;
#ifdef MADV_HUGEPAGE
    madvise(p, sz, MADV_HUGEPAGE);
#endif
    return p;
}

ls_tensor *lk_new(ls_kctx *c, ls_dtype dt, int ndim, const int64_t *sizes)
{
    if (ndim < 0 || ndim > LS_MAX_DIMS) {
        ls_kfail(c, "%d dimensions (at most %d are supported)", ndim, LS_MAX_DIMS);
        return NULL;
    }
    ls_tmeta m;
    ls_tmeta_init(&m, dt, ndim, sizes);
    uint64_t nbytes;
    ls_error e;
    if (ls_tmeta_check_size(&m, (uint64_t)1 << 38, &nbytes, &e) != 0) {
        ls_kfail(c, "result %s", e.msg);
        return NULL;
    }
    void *data = alloc_result((size_t)nbytes);
    if (!data) {
        ls_kfail(c, "out of memory: cannot allocate %" PRIu64 " bytes", nbytes);
        if (c->err) c->err->code = LS_ERR_NEEDS; /* the program is valid: the machine lacks the memory (exit 3) */
        return NULL;
    }
    ls_blob *b = ls_blob_wrap(data, (size_t)nbytes);
    ls_tensor *t = ls_tensor_from_blob(b, 0, dt, ndim, sizes);
    ls_blob_unref(b);
    return t;
}

ls_tensor *lk_new_like(ls_kctx *c, const ls_tensor *t, ls_dtype dt)
{
    return lk_new(c, dt, t->ndim, t->sizes);
}

/* ---- dtypes */

ls_dtype lk_compute_type(ls_dtype t)
{
    switch (t) {
    case LS_DT_F16:
    case LS_DT_BF16:
    case LS_DT_F32: return LS_DT_F32;
    case LS_DT_F64: return LS_DT_F64;
    default: return LS_DT_I64;
    }
}

/* Float to integer the way x86's cvtt* does it: NaN and out-of-range give the minimum,
 * instead of C's undefined behaviour. Narrow types then wrap like torch's casts. */
static inline int64_t f2i(double v)
{
    return (v >= -9223372036854775808.0 && v < 9223372036854775808.0) ? (int64_t)v : INT64_MIN;
}

typedef uint8_t lk_bool_t;
#define LD_u8(p, i) ((double)((const uint8_t *)(p))[i])
#define LD_i8(p, i) ((double)((const int8_t *)(p))[i])
#define LD_i16(p, i) ((double)((const int16_t *)(p))[i])
#define LD_i32(p, i) ((double)((const int32_t *)(p))[i])
#define LD_i64(p, i) ((double)((const int64_t *)(p))[i])
#define LD_u16(p, i) ((double)((const uint16_t *)(p))[i])
#define LD_u32(p, i) ((double)((const uint32_t *)(p))[i])
#define LD_u64(p, i) ((double)((const uint64_t *)(p))[i])
#define LD_f32(p, i) ((double)((const float *)(p))[i])
#define LD_f64(p, i) (((const double *)(p))[i])
#define LD_f16(p, i) ((double)ls_f16_to_f32(((const uint16_t *)(p))[i]))
#define LD_bf16(p, i) ((double)ls_bf16_to_f32(((const uint16_t *)(p))[i]))
#define LD_b8(p, i) ((double)(((const uint8_t *)(p))[i] != 0))

/* Integer-valued sources are read as int64 so large values keep every bit. */
static int64_t ld_int(const void *p, ls_dtype st, int64_t i)
{
    switch (st) {
    case LS_DT_U8: return ((const uint8_t *)p)[i];
    case LS_DT_I8: return ((const int8_t *)p)[i];
    case LS_DT_I16: return ((const int16_t *)p)[i];
    case LS_DT_I32: return ((const int32_t *)p)[i];
    case LS_DT_I64: return ((const int64_t *)p)[i];
    case LS_DT_U16: return ((const uint16_t *)p)[i];
    case LS_DT_U32: return ((const uint32_t *)p)[i];
    case LS_DT_U64: return (int64_t)((const uint64_t *)p)[i];
    case LS_DT_BOOL: return ((const uint8_t *)p)[i] != 0;
    default: return 0;
    }
}

/* Typed loops for the pairs that matter for speed (halves ↔ float32, float ↔ float,
 * int ↔ int64); the rest go through one element at a time. */
#define CONV_LOOP(DT, ST, EXPR)                                        \
    do {                                                               \
        DT *restrict d_ = dst;                                         \
        const ST *restrict s_ = src;                                   \
        for (int64_t i = 0; i < n; i++) d_[i] = (DT)(EXPR(s_[i]));     \
        return;                                                        \
    } while (0)
#define ID(x) (x)

LK_HOT void lk_convert(void *dst, ls_dtype dt, const void *src, ls_dtype st, int64_t n)
{
    if (n <= 0) return;
    if (dt == st) {
        memcpy(dst, src, (size_t)n * ls_dtype_size(dt));
        return;
    }
    if (dt == LS_DT_F32) {
        switch (st) {
        case LS_DT_F16: CONV_LOOP(float, uint16_t, ls_f16_to_f32);
        case LS_DT_BF16: CONV_LOOP(float, uint16_t, ls_bf16_to_f32);
        case LS_DT_F64: CONV_LOOP(float, double, ID);
        case LS_DT_I64: CONV_LOOP(float, int64_t, ID);
        case LS_DT_I32: CONV_LOOP(float, int32_t, ID);
        case LS_DT_U8: CONV_LOOP(float, uint8_t, ID);
        case LS_DT_I8: CONV_LOOP(float, int8_t, ID);
        case LS_DT_BOOL: CONV_LOOP(float, uint8_t, !!);
        default: break;
        }
    } else if (dt == LS_DT_F16 && st == LS_DT_F32) {
        CONV_LOOP(uint16_t, float, ls_f32_to_f16);
    } else if (dt == LS_DT_BF16 && st == LS_DT_F32) {
        CONV_LOOP(uint16_t, float, ls_f32_to_bf16);
    } else if (dt == LS_DT_F64) {
        switch (st) {
        case LS_DT_F32: CONV_LOOP(double, float, ID);
        case LS_DT_I64: CONV_LOOP(double, int64_t, ID);
        case LS_DT_I32: CONV_LOOP(double, int32_t, ID);
        default: break;
        }
    } else if (dt == LS_DT_I64) {
        switch (st) {
        case LS_DT_I32: CONV_LOOP(int64_t, int32_t, ID);
        case LS_DT_I8: CONV_LOOP(int64_t, int8_t, ID);
        case LS_DT_U8: CONV_LOOP(int64_t, uint8_t, ID);
        case LS_DT_BOOL: CONV_LOOP(int64_t, uint8_t, !!);
        default: break;
        }
    } else if (dt == LS_DT_I32 && st == LS_DT_I64) {
        CONV_LOOP(int32_t, uint64_t, ID);
    } else if (dt == LS_DT_BOOL && (st == LS_DT_I64 || st == LS_DT_F32)) {
        if (st == LS_DT_I64) CONV_LOOP(uint8_t, int64_t, !!);
        CONV_LOOP(uint8_t, float, !!);
    }
    /* general path */
    bool src_float = ls_dtype_is_float(st);
    for (int64_t i = 0; i < n; i++) {
        double f = 0;
        int64_t v = 0;
        if (src_float) {
            switch (st) {
            case LS_DT_F16: f = LD_f16(src, i); break;
            case LS_DT_BF16: f = LD_bf16(src, i); break;
            case LS_DT_F32: f = LD_f32(src, i); break;
            default: f = LD_f64(src, i); break;
            }
        } else {
            v = ld_int(src, st, i);
        }
        switch (dt) {
        case LS_DT_F16: ((uint16_t *)dst)[i] = ls_f32_to_f16(src_float ? (float)f : (float)v); break;
        case LS_DT_BF16: ((uint16_t *)dst)[i] = ls_f32_to_bf16(src_float ? (float)f : (float)v); break;
        case LS_DT_F32: ((float *)dst)[i] = src_float ? (float)f : (float)v; break;
        case LS_DT_F64: ((double *)dst)[i] = src_float ? f : (double)v; break;
        case LS_DT_BOOL: ((uint8_t *)dst)[i] = src_float ? f != 0 : v != 0; break;
        default: {
            int64_t x = src_float ? f2i(f) : v;
            switch (dt) {
            case LS_DT_U8: ((uint8_t *)dst)[i] = (uint8_t)x; break;
            case LS_DT_I8: ((int8_t *)dst)[i] = (int8_t)(uint8_t)x; break;
            case LS_DT_I16: ((int16_t *)dst)[i] = (int16_t)(uint16_t)x; break;
            case LS_DT_I32: ((int32_t *)dst)[i] = (int32_t)(uint32_t)x; break;
            case LS_DT_I64: ((int64_t *)dst)[i] = x; break;
            case LS_DT_U16: ((uint16_t *)dst)[i] = (uint16_t)x; break;
            case LS_DT_U32: ((uint32_t *)dst)[i] = (uint32_t)x; break;
            case LS_DT_U64: ((uint64_t *)dst)[i] = (uint64_t)x; break;
            default: break;
            }
        }
        }
    }
}

void *lk_alloc_tmp(size_t n)
{
    void *p = ls_alloc_aligned(n ? n : 1);
    if (!p) ls_out_of_memory(n, "kernel scratch");
    return p;
}

const void *lk_as(const ls_tensor *t, ls_dtype dt, void **tmp)
{
    *tmp = NULL;
    if (t->dtype == dt) return t->data;
    size_t n = (size_t)t->numel * ls_dtype_size(dt);
    *tmp = lk_alloc_tmp(n);
    lk_convert(*tmp, dt, t->data, t->dtype, t->numel);
    return *tmp;
}

ls_tensor *lk_to_dtype(ls_kctx *c, ls_tensor *t, ls_dtype dt)
{
    if (t->dtype == dt) return ls_tensor_ref(t);
    ls_tensor *o = lk_new_like(c, t, dt);
    if (o) lk_convert(o->data, dt, t->data, t->dtype, t->numel);
    return o;
}

void lk_scalar_store(void *dst, ls_dtype ct, double f, int64_t i, bool is_int)
{
    switch (ct) {
    case LS_DT_F32: *(float *)dst = is_int ? (float)i : (float)f; break;
    case LS_DT_F64: *(double *)dst = is_int ? (double)i : f; break;
    default: *(int64_t *)dst = is_int ? i : f2i(f); break;
    }
}

/* ---- operands and type promotion */

void lk_operand_from(lk_operand *o, const ls_value *v)
{
    memset(o, 0, sizeof *o);
    switch (v->kind) {
    case LS_V_TENSOR: o->t = v->t; break;
    case LS_V_INT:
        o->is_scalar = o->scalar_is_int = true;
        o->i = v->i;
        o->f = (double)v->i;
        break;
    case LS_V_BOOL:
        o->is_scalar = o->scalar_is_int = o->scalar_is_bool = true;
        o->i = v->b;
        o->f = v->b;
        break;
    default:
        o->is_scalar = true;
        o->f = ls_value_as_f64(v);
        break;
    }
}

static ls_dtype promote_skip(ls_dtype a, ls_dtype b)
{
    if (a == LS_DT_UNKNOWN) return b;
    if (b == LS_DT_UNKNOWN) return a;
    return ls_dtype_promote(a, b);
}

/* c10's combine_categories: the higher-priority result wins unless the lower one is of a
 * higher category (float over integer, integer over bool). */
static ls_dtype combine(ls_dtype higher, ls_dtype lower)
{
    if (ls_dtype_is_float(higher)) return higher;
    if (higher == LS_DT_BOOL || ls_dtype_is_float(lower)) return promote_skip(higher, lower);
    return higher != LS_DT_UNKNOWN ? higher : lower;
}

ls_dtype lk_result_type(const lk_operand *ops, int n)
{
    ls_dtype dim = LS_DT_UNKNOWN, zero = LS_DT_UNKNOWN, wrapped = LS_DT_UNKNOWN;
    for (int k = 0; k < n; k++) {
        const lk_operand *o = &ops[k];
        if (o->is_scalar) {
            ls_dtype s = o->scalar_is_bool ? LS_DT_BOOL : o->scalar_is_int ? LS_DT_I64 : LS_DT_F32;
            wrapped = promote_skip(wrapped, s);
        } else if (o->t) {
            if (o->t->ndim == 0) zero = promote_skip(zero, o->t->dtype);
            else dim = promote_skip(dim, o->t->dtype);
        }
    }
    return combine(dim, combine(zero, wrapped));
}

/* ---- broadcast iterator */

void lk_iter_init(lk_iter *it, int nops, int ndim, const int64_t *shape, const int *ndims,
                  const int64_t *const *shapes)
{
    memset(it, 0, sizeof *it);
    it->nops = nops;
    /* full strides per operand, right-aligned, 0 where broadcast */
    int64_t full[LK_ITER_MAX][LS_MAX_DIMS];
    for (int k = 0; k < nops; k++) {
        int64_t s = 1;
        for (int d = ndim - 1; d >= 0; d--) {
            int kd = d - (ndim - ndims[k]);
            int64_t sz = kd >= 0 ? shapes[k][kd] : 1;
            full[k][d] = (sz == 1 && shape[d] != 1) || kd < 0 ? 0 : s;
            if (kd >= 0) s *= sz;
        }
    }
    /* drop size-1 dims, then merge neighbours where every operand is contiguous across them */
    int nd = 0;
    for (int d = 0; d < ndim; d++) {
        if (shape[d] == 1) continue;
        if (nd > 0) {
            bool merge = true;
            for (int k = 0; k < nops && merge; k++)
                merge = it->strides[k][nd - 1] == full[k][d] * shape[d];
            if (merge) {
                it->shape[nd - 1] *= shape[d];
                for (int k = 0; k < nops; k++) it->strides[k][nd - 1] = full[k][d];
                continue;
            }
        }
        it->shape[nd] = shape[d];
        for (int k = 0; k < nops; k++) it->strides[k][nd] = full[k][d];
        nd++;
    }
    it->ndim = nd;
    it->inner = nd ? it->shape[nd - 1] : 1;
    it->rows = 1;
    for (int d = 0; d + 1 < nd; d++) it->rows *= it->shape[d];
    for (int d = 0; d < ndim; d++)
        if (shape[d] == 0) it->rows = 0, it->inner = 0;
}

void lk_iter_next(lk_iter *it)
{
    for (int d = it->ndim - 2; d >= 0; d--) {
        for (int k = 0; k < it->nops; k++) it->off[k] += it->strides[k][d];
        if (++it->idx[d] < it->shape[d]) return;
        for (int k = 0; k < it->nops; k++) it->off[k] -= it->strides[k][d] * it->shape[d];
        it->idx[d] = 0;
    }
}

/* ---- threads */

int lk_threads(void)
{
    static int n;
    if (!n) {
        const char *e = getenv("LS_THREADS");
        long want = e ? strtol(e, NULL, 10) : sysconf(_SC_NPROCESSORS_ONLN);
        n = want >= 2 ? 2 : 1;
    }
    return n;
}

int ls_runtime_threads(void)
{
    return lk_threads();
}

typedef struct range_job {
    lk_range_fn fn;
    void *ctx;
    int64_t lo, hi;
} range_job;

static void *range_main(void *p)
{
    range_job *j = p;
    j->fn(j->ctx, j->lo, j->hi);
    return NULL;
}

void lk_parallel(int64_t n, double cost_per_item, lk_range_fn fn, void *ctx)
{
    /* a thread costs tens of microseconds: only worth it above about a million operations */
    if (n < 2 || lk_threads() < 2 || (double)n * cost_per_item < 2e6) {
        if (n > 0) fn(ctx, 0, n);
        return;
    }
    range_job j = {fn, ctx, n / 2, n};
    pthread_t th;
    if (pthread_create(&th, NULL, range_main, &j) != 0) {
        fn(ctx, 0, n);
        return;
    }
    fn(ctx, 0, n / 2);
    pthread_join(th, NULL);
}

void lk_iter_seek(lk_iter *it, int64_t row)
{
    for (int k = 0; k < it->nops; k++) it->off[k] = 0;
    for (int d = it->ndim - 2; d >= 0; d--) {
        it->idx[d] = row % it->shape[d];
        row /= it->shape[d];
        for (int k = 0; k < it->nops; k++) it->off[k] += it->idx[d] * it->strides[k][d];
    }
}
