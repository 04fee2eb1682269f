/* Tensor metadata, reference-counted data and content hashes. */
#include "tensor.h"

#include <inttypes.h>
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/mman.h>
#include <xxhash.h>

void ls_tmeta_init(ls_tmeta *m, ls_dtype dtype, int ndim, const int64_t *sizes)
{
    memset(m, 0, sizeof *m);
    m->dtype = dtype;
    m->ndim = (uint8_t)(ndim < 0 ? 0 : ndim > LS_MAX_DIMS ? LS_MAX_DIMS : ndim);
    for (int i = 0; i < m->ndim; i++) m->sizes[i] = sizes ? sizes[i] : 0;
    /* the contiguous order in every slot: a fixed-length loop, which -O3 vectorises without the
     * out-of-bounds epilogue a loop to ndim made GCC warn about (-Wstringop-overflow) */
    for (int i = 0; i < LS_MAX_DIMS; i++) m->dim_order[i] = (uint8_t)i;
}

int64_t ls_tmeta_numel(const ls_tmeta *m)
{
    bool empty = false;
    for (int i = 0; i < m->ndim; i++) {
        if (m->sizes[i] < 0) return -1;
        empty |= m->sizes[i] == 0;
    }
    if (empty) return 0; /* whatever the product of the other sizes would be */
    int64_t n = 1;
    for (int i = 0; i < m->ndim; i++) {
        if (n > INT64_MAX / m->sizes[i]) return -1;
        n *= m->sizes[i];
    }
    return n;
}

uint64_t ls_tmeta_nbytes(const ls_tmeta *m)
{
    int64_t n = ls_tmeta_numel(m);
    return n > 0 ? (uint64_t)n * ls_dtype_size(m->dtype) : 0;
}

bool ls_tmeta_is_dynamic(const ls_tmeta *m)
{
    for (int i = 0; i < m->ndim; i++)
        if (m->sym[i]) return true;
    return false;
}

bool ls_tmeta_equal(const ls_tmeta *a, const ls_tmeta *b)
{
    if (a->dtype != b->dtype || a->ndim != b->ndim) return false;
    for (int i = 0; i < a->ndim; i++)
        if (a->sizes[i] != b->sizes[i] || a->sym[i] != b->sym[i] || a->dim_order[i] != b->dim_order[i]) return false;
    return true;
}

/* Appends text to buf[*len..cap), always leaving it NUL-terminated (truncating when full). */
static void str_append(char *buf, size_t cap, size_t *len, const char *text, size_t n)
{
    if (*len + 1 >= cap) return;
    if (n > cap - 1 - *len) n = cap - 1 - *len;
    memcpy(buf + *len, text, n);
    *len += n;
    buf[*len] = 0;
}

int64_t ls_tmeta_numel_bound(const ls_tmeta *m)
{
    int64_t n = 1;
    bool bounded = false;
    for (int d = 0; d < m->ndim; d++) {
        bounded |= m->sym[d] && m->sym[d][0] == '<' && m->sym[d][1] == '=';
        if (m->sizes[d] < 0) return -1;
        n = n > INT64_MAX / (m->sizes[d] ? m->sizes[d] : 1) ? INT64_MAX : n * m->sizes[d];
    }
    return bounded ? n : -1;
}

static bool fits(const ls_tmeta *want, ls_dtype dtype, int ndim, const int64_t *sizes)
{
    if ((want->dtype != LS_DT_UNKNOWN && want->dtype != dtype) || want->ndim != ndim) return false;
    for (int d = 0; d < ndim; d++)
        if (!want->sym[d] && want->sizes[d] >= 0 && want->sizes[d] != sizes[d]) return false;
    int64_t bound = ls_tmeta_numel_bound(want);
    if (bound >= 0 && ndim > 0) { /* ExecuTorch returns at once for a 0-d tensor */
        int64_t n = 1;
        for (int d = 0; d < ndim; d++) {
            if (sizes[d] < 0) return false;
            if (sizes[d] && n > bound / sizes[d]) return false; /* past the bound, and no overflow */
            n *= sizes[d];
        }
        if (n > bound) return false;
    }
    return true;
}

bool ls_tmeta_fits(const ls_tmeta *want, const ls_tmeta *have)
{
    return fits(want, have->dtype, have->ndim, have->sizes);
}

bool ls_tensor_fits(const ls_tmeta *want, const ls_tensor *t)
{
    return fits(want, t->dtype, t->ndim, t->sizes);
}

/* "float32[2, s0]": written without snprintf, since every report sentence about a tensor
 * asks for one. */
/* A symbolic size as people read it: a sympy repr's Symbol('u8', integer=True) is u8 (the
 * file keeps the text as torch wrote it; only what is shown changes). */
static void sym_append(char *buf, size_t cap, size_t *len, const char *s)
{
    static const char sym[] = "Symbol('";
    while (*s) {
        const char *at = strstr(s, sym);
        if (!at) {
            str_append(buf, cap, len, s, strlen(s));
            return;
        }
        str_append(buf, cap, len, s, (size_t)(at - s));
        const char *name = at + sizeof sym - 1, *end = strchr(name, '\'');
        const char *close = end ? strchr(end, ')') : NULL;
        if (!close) { /* not the shape we know: as it is */
            str_append(buf, cap, len, at, strlen(at));
            return;
        }
        str_append(buf, cap, len, name, (size_t)(end - name));
        s = close + 1;
    }
}

char *ls_tmeta_str(const ls_tmeta *m, char *buf, size_t cap)
{
    if (!cap) return buf;
    size_t len = 0;
    buf[0] = 0;
    const char *dt = ls_dtype_name(m->dtype);
    str_append(buf, cap, &len, dt, strlen(dt));
    str_append(buf, cap, &len, "[", 1);
    for (int i = 0; i < m->ndim; i++) {
        if (i) str_append(buf, cap, &len, ", ", 2);
        if (m->sym[i]) {
            sym_append(buf, cap, &len, m->sym[i]);
            continue;
        }
        char digits[24];
        size_t n = 0;
        int64_t v = m->sizes[i];
        uint64_t u = v < 0 ? (uint64_t)0 - (uint64_t)v : (uint64_t)v;
        do digits[sizeof digits - 1 - n++] = (char)('0' + u % 10);
        while ((u /= 10) != 0);
        if (v < 0) digits[sizeof digits - 1 - n++] = '-';
        str_append(buf, cap, &len, digits + sizeof digits - n, n);
    }
    str_append(buf, cap, &len, "]", 1);
    return buf;
}

/* Copied field by field into zeroed records, since interned records compare byte for byte and
 * a tmeta has padding that whoever built it may have left unset. */
const ls_tmeta *ls_tmeta_intern(const ls_tmeta *ms, uint16_t count)
{
    ls_tmeta few[4];
    ls_tmeta *z = count <= 4 ? few : ls_malloc(sizeof *z * count);
    memset(z, 0, sizeof *z * count);
    for (uint16_t i = 0; i < count; i++) {
        z[i].dtype = ms[i].dtype;
        z[i].ndim = ms[i].ndim;
        z[i].requires_grad = ms[i].requires_grad;
        memcpy(z[i].dim_order, ms[i].dim_order, sizeof z[i].dim_order);
        memcpy(z[i].sizes, ms[i].sizes, sizeof z[i].sizes);
        memcpy(z[i].sym, ms[i].sym, sizeof z[i].sym);
    }
    const ls_tmeta *r = ls_intern_record(z, sizeof *z * count);
    if (z != few) free(z);
    return r;
}

int ls_tmeta_check_size(const ls_tmeta *m, uint64_t limit_bytes, uint64_t *nbytes, ls_error *err)
{
    uint64_t n = 1;
    for (int i = 0; i < m->ndim; i++) {
        if (m->sizes[i] < 0) return ls_fail(err, "negative size %" PRId64 " in dimension %d", m->sizes[i], i);
        if (m->sizes[i] != 0 && n > UINT64_MAX / (uint64_t)m->sizes[i])
            return ls_fail(err, "element count overflows 64 bits");
        n *= (uint64_t)m->sizes[i];
    }
    size_t es = ls_dtype_size(m->dtype);
    if (es == 0) return ls_fail(err, "unknown element type");
    if (n > limit_bytes / es) {
        char s[128];
        return ls_fail(err, "%s claims %" PRIu64 " elements (%.3g bytes), more than the %.3g bytes allowed",
                       ls_tmeta_str(m, s, sizeof s), n, (double)n * (double)es, (double)limit_bytes);
    }
    if (nbytes) *nbytes = n * es;
    return 0;
}

/* ---- blobs */

ls_blob *ls_blob_new(size_t size)
{
    uint8_t *d = ls_alloc_aligned(size);
    if (!d) return NULL;
    memset(d, 0, size);
    return ls_blob_wrap(d, size);
}

ls_blob *ls_blob_wrap(uint8_t *data, size_t size)
{
    ls_blob *b = ls_calloc(1, sizeof *b);
    b->refs = 1;
    b->data = data;
    b->size = size;
    return b;
}

ls_blob *ls_blob_mapped(void *map, size_t map_len, uint8_t *data, size_t size)
{
    ls_blob *b = ls_blob_wrap(data, size);
    b->map = map;
    b->map_len = map_len;
    return b;
}

ls_blob *ls_blob_ref(ls_blob *b)
{
    if (b) b->refs++;
    return b;
}

void ls_blob_unref(ls_blob *b)
{
    if (!b || --b->refs) return;
    if (b->map) munmap(b->map, b->map_len);
    else free(b->data);
    free(b);
}

/* ---- tensors */

/* A tensor over data held by owner (a reference the tensor takes over). */
static ls_tensor *tensor_over(ls_blob *owner, void *data, ls_dtype dtype, int ndim, const int64_t *sizes,
                              int64_t numel)
{
    ls_tensor *t = ls_calloc(1, sizeof *t);
    t->owner = owner;
    t->data = data;
    t->refs = 1;
    t->dtype = dtype;
    t->ndim = (uint8_t)ndim;
    for (int i = 0; i < ndim; i++) t->sizes[i] = sizes[i];
    t->numel = numel;
    t->nbytes = (size_t)numel * ls_dtype_size(dtype);
    return t;
}

ls_tensor *ls_tensor_new(ls_dtype dtype, int ndim, const int64_t *sizes, ls_error *err)
{
    if (ndim < 0 || ndim > LS_MAX_DIMS) {
        ls_fail(err, "%d dimensions (at most %d are supported)", ndim, LS_MAX_DIMS);
        return NULL;
    }
    ls_tmeta m;
    ls_tmeta_init(&m, dtype, ndim, sizes);
    uint64_t nbytes;
    if (ls_tmeta_check_size(&m, (uint64_t)1 << 40, &nbytes, err) != 0) return NULL;
    ls_blob *b = ls_blob_new((size_t)nbytes);
    if (!b) {
        ls_fail_needs(err, "out of memory: cannot allocate %" PRIu64 " bytes", nbytes);
        return NULL;
    }
    return tensor_over(b, b->data, dtype, ndim, sizes, ls_tmeta_numel(&m));
}

ls_tensor *ls_tensor_alloc(ls_dtype dtype, int ndim, const int64_t *sizes)
{
    ls_error err;
    ls_tensor *t = ls_tensor_new(dtype, ndim, sizes, &err);
    if (!t) { /* as every allocation that cannot fail: the file and node at hand named, exit 3 */
        ls_tmeta m;
        ls_tmeta_init(&m, dtype, ndim, sizes);
        int64_t numel = ls_tmeta_numel(&m);
        ls_out_of_memory(numel > 0 ? (size_t)numel * ls_dtype_size(dtype) : 0, "a tensor");
    }
    return t;
}

ls_tensor *ls_tensor_scalar_f64(ls_dtype dtype, double v)
{
    ls_tensor *t = ls_tensor_alloc(dtype, 0, NULL);
    ls_tensor_set_f64(t, 0, v);
    return t;
}

ls_tensor *ls_tensor_from_blob(ls_blob *blob, size_t offset, ls_dtype dtype, int ndim, const int64_t *sizes)
{
    if (ndim < 0 || ndim > LS_MAX_DIMS) return NULL;
    ls_tmeta m;
    ls_tmeta_init(&m, dtype, ndim, sizes);
    int64_t numel = ls_tmeta_numel(&m);
    size_t es = ls_dtype_size(dtype);
    if (numel < 0 || es == 0 || offset > blob->size || (size_t)numel > (blob->size - offset) / es) return NULL;
    uint8_t *src = blob->data + offset;
    if (((uintptr_t)src % es) != 0) { /* misaligned for the element type: copy */
        ls_tensor *t = ls_tensor_alloc(dtype, ndim, sizes);
        memcpy(t->data, src, t->nbytes);
        return t;
    }
    return tensor_over(ls_blob_ref(blob), src, dtype, ndim, sizes, numel);
}

ls_tensor *ls_tensor_from_strided(const void *src, ls_dtype dtype, int ndim, const int64_t *sizes,
                                  const int64_t *strides)
{
    ls_tensor *t = ls_tensor_alloc(dtype, ndim, sizes);
    size_t es = ls_dtype_size(dtype);
    int64_t idx[LS_MAX_DIMS] = {0};
    const uint8_t *base = src;
    uint8_t *dst = t->data;
    for (int64_t i = 0; i < t->numel; i++) {
        int64_t off = 0;
        for (int d = 0; d < ndim; d++) off += idx[d] * strides[d];
        memcpy(dst + (size_t)i * es, base + off * (int64_t)es, es);
        for (int d = ndim - 1; d >= 0; d--) {
            if (++idx[d] < sizes[d]) break;
            idx[d] = 0;
        }
    }
    return t;
}

ls_tensor *ls_tensor_ref(ls_tensor *t)
{
    if (t) t->refs++;
    return t;
}

void ls_tensor_unref(ls_tensor *t)
{
    if (!t || --t->refs) return;
    ls_blob_unref(t->owner);
    free(t);
}

ls_tensor *ls_tensor_clone(const ls_tensor *t)
{
    ls_tensor *c = ls_tensor_alloc(t->dtype, t->ndim, t->sizes);
    if (t->nbytes) memcpy(c->data, t->data, t->nbytes);
    c->hash = t->hash;
    c->hash_valid = t->hash_valid;
    return c;
}

ls_tensor *ls_tensor_reshape(ls_tensor *t, int ndim, const int64_t *sizes)
{
    ls_tmeta m;
    ls_tmeta_init(&m, t->dtype, ndim, sizes);
    if (ndim < 0 || ndim > LS_MAX_DIMS || ls_tmeta_numel(&m) != t->numel) return NULL;
    return tensor_over(ls_blob_ref(t->owner), t->data, t->dtype, ndim, sizes, t->numel);
}

void ls_tensor_meta(const ls_tensor *t, ls_tmeta *m)
{
    ls_tmeta_init(m, t->dtype, t->ndim, t->sizes);
}

/* A cache two threads may fill at once (the UI's node pane and the compare screen's alignment):
 * each computes the same value, and hash_valid is published after hash. */
uint64_t ls_tensor_hash(ls_tensor *t)
{
    if (__atomic_load_n(&t->hash_valid, __ATOMIC_ACQUIRE)) return __atomic_load_n(&t->hash, __ATOMIC_RELAXED);
    XXH3_state_t *st = XXH3_createState();
    XXH3_64bits_reset(st);
    uint32_t head[2] = {(uint32_t)t->dtype, t->ndim};
    XXH3_64bits_update(st, head, sizeof head);
    XXH3_64bits_update(st, t->sizes, sizeof(int64_t) * t->ndim);
    if (t->nbytes) XXH3_64bits_update(st, t->data, t->nbytes);
    uint64_t h = XXH3_64bits_digest(st);
    XXH3_freeState(st);
    __atomic_store_n(&t->hash, h, __ATOMIC_RELAXED);
    __atomic_store_n(&t->hash_valid, true, __ATOMIC_RELEASE);
    return h;
}

bool ls_tensor_equal(const ls_tensor *a, const ls_tensor *b)
{
    if (a == b) return true;
    if (a->dtype != b->dtype || a->ndim != b->ndim) return false;
    for (int i = 0; i < a->ndim; i++)
        if (a->sizes[i] != b->sizes[i]) return false;
    return a->nbytes == 0 || memcmp(a->data, b->data, a->nbytes) == 0;
}

double ls_tensor_get_f64(const ls_tensor *t, int64_t i)
{
    const uint8_t *p = (const uint8_t *)t->data;
    switch (t->dtype) {
    case LS_DT_F32: return ((const float *)p)[i];
    case LS_DT_F64: return ((const double *)p)[i];
    case LS_DT_F16: return ls_f16_to_f32(((const uint16_t *)p)[i]);
    case LS_DT_BF16: return ls_bf16_to_f32(((const uint16_t *)p)[i]);
    case LS_DT_I64: return (double)((const int64_t *)p)[i];
    case LS_DT_I32: return ((const int32_t *)p)[i];
    case LS_DT_I16: return ((const int16_t *)p)[i];
    case LS_DT_I8: return ((const int8_t *)p)[i];
    case LS_DT_U8: return p[i];
    case LS_DT_BOOL: return p[i] != 0;
    case LS_DT_U16: return ((const uint16_t *)p)[i];
    case LS_DT_U32: return ((const uint32_t *)p)[i];
    case LS_DT_U64: return (double)((const uint64_t *)p)[i];
    default: return NAN;
    }
}

int64_t ls_tensor_get_i64(const ls_tensor *t, int64_t i)
{
    const uint8_t *p = (const uint8_t *)t->data;
    switch (t->dtype) {
    case LS_DT_I64: return ((const int64_t *)p)[i];
    case LS_DT_I32: return ((const int32_t *)p)[i];
    case LS_DT_I16: return ((const int16_t *)p)[i];
    case LS_DT_I8: return ((const int8_t *)p)[i];
    case LS_DT_U8: return p[i];
    case LS_DT_BOOL: return p[i] != 0;
    case LS_DT_U16: return ((const uint16_t *)p)[i];
    case LS_DT_U32: return ((const uint32_t *)p)[i];
    case LS_DT_U64: return (int64_t)((const uint64_t *)p)[i];
    default: {
        double d = ls_tensor_get_f64(t, i);
        return isfinite(d) ? (int64_t)d : 0;
    }
    }
}

void ls_tensor_set_f64(ls_tensor *t, int64_t i, double v)
{
    uint8_t *p = (uint8_t *)t->data;
    switch (t->dtype) {
    case LS_DT_F32: ((float *)p)[i] = (float)v; break;
    case LS_DT_F64: ((double *)p)[i] = v; break;
    case LS_DT_F16: ((uint16_t *)p)[i] = ls_f32_to_f16((float)v); break;
    case LS_DT_BF16: ((uint16_t *)p)[i] = ls_f32_to_bf16((float)v); break;
    case LS_DT_I64: ((int64_t *)p)[i] = (int64_t)v; break;
    case LS_DT_I32: ((int32_t *)p)[i] = (int32_t)v; break;
    case LS_DT_I16: ((int16_t *)p)[i] = (int16_t)v; break;
    case LS_DT_I8: ((int8_t *)p)[i] = (int8_t)v; break;
    case LS_DT_U8: p[i] = (uint8_t)v; break;
    case LS_DT_BOOL: p[i] = v != 0; break;
    case LS_DT_U16: ((uint16_t *)p)[i] = (uint16_t)v; break;
    case LS_DT_U32: ((uint32_t *)p)[i] = (uint32_t)v; break;
    case LS_DT_U64: ((uint64_t *)p)[i] = (uint64_t)v; break;
    default: break;
    }
    t->hash_valid = false;
}

void ls_tensor_preview(const ls_tensor *t, int max_values, ls_buf *b)
{
    ls_buf_putc(b, '[');
    int64_t n = t->numel < max_values ? t->numel : max_values;
    for (int64_t i = 0; i < n; i++) {
        if (i) ls_buf_puts(b, ", ");
        if (t->dtype == LS_DT_BOOL) ls_buf_puts(b, ls_tensor_get_i64(t, i) ? "True" : "False");
        else if (ls_dtype_is_float(t->dtype)) ls_buf_printf(b, "%.6g", ls_tensor_get_f64(t, i));
        else ls_buf_printf(b, "%" PRId64, ls_tensor_get_i64(t, i));
    }
    if (t->numel > n) ls_buf_printf(b, ", ... (%" PRId64 " values)", t->numel);
    ls_buf_putc(b, ']');
}
