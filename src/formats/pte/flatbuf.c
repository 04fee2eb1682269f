/* FlatBuffers reader (checked, for untrusted bytes) and builder (back to front). */
#include "flatbuf.h"

#include <assert.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

/* FlatBuffers offsets are 32-bit and the C++ implementation caps buffers below 2 GiB. */
#define FB_MAX_SIZE 0x7fffffffu
#define NO_POS UINT32_MAX

uint16_t ls_fb_le16(const uint8_t *p)
{
    return (uint16_t)ls_le_get(p, 2);
}

uint32_t ls_fb_le32(const uint8_t *p)
{
    return (uint32_t)ls_le_get(p, 4);
}

uint64_t ls_fb_le64(const uint8_t *p)
{
    return ls_le_get(p, 8);
}

/* ---------------------------------------------------------------- reader */

int ls_fb_reader_init(ls_fb_reader *r, const void *buf, size_t size, const char *name, ls_error *err)
{
    memset(r, 0, sizeof *r);
    r->buf = buf;
    r->name = name ? name : "flatbuffer";
    r->err = err;
    if (size > FB_MAX_SIZE)
        return ls_fail(err, "%s: flatbuffer of %zu bytes is larger than the 2 GiB FlatBuffers allows", r->name, size);
    r->size = (uint32_t)size;
    /* Every distinct table takes at least 4 bytes; allow some sharing on top. Past this the
     * offsets must be shared or cyclic on purpose. */
    r->max_tables = (uint64_t)size / 2 + 256;
    /* Real programs copy out 1-2.5x their flatbuffer size (arrays of structs included). */
    r->max_copied = (uint64_t)size * 8 + ((uint64_t)1 << 20);
    return 0;
}

int ls_fb_push(ls_fb_reader *r, const char *fmt, ...)
{
    if (r->depth >= LS_FB_DEPTH_MAX)
        return ls_fb_fail(r, NULL, NO_POS, "nesting deeper than %u levels", (unsigned)LS_FB_DEPTH_MAX);
    r->marks[r->depth++] = (uint16_t)r->path_len;
    char seg[128];
    va_list ap;
    va_start(ap, fmt);
    vsnprintf(seg, sizeof seg, fmt, ap);
    va_end(ap);
    const char *dot = (r->path_len > 0 && seg[0] != '[' && seg[0] != '.') ? "." : "";
    const char *s = (r->path_len == 0 && seg[0] == '.') ? seg + 1 : seg;
    int n = snprintf(r->path + r->path_len, sizeof r->path - r->path_len, "%s%s", dot, s);
    if (n > 0) r->path_len += (size_t)n;
    if (r->path_len >= sizeof r->path) r->path_len = sizeof r->path - 1;
    return 0;
}

void ls_fb_pop(ls_fb_reader *r)
{
    if (r->depth == 0) return;
    r->path_len = r->marks[--r->depth];
    r->path[r->path_len] = 0;
}

int ls_fb_fail(ls_fb_reader *r, const char *field, uint32_t pos, const char *fmt, ...)
{
    char what[512];
    va_list ap;
    va_start(ap, fmt);
    vsnprintf(what, sizeof what, fmt, ap);
    va_end(ap);
    char where[LS_FB_PATH_MAX + 80];
    if (r->path_len && field) snprintf(where, sizeof where, "%s.%s: ", r->path, field);
    else if (r->path_len) snprintf(where, sizeof where, "%s: ", r->path);
    else if (field) snprintf(where, sizeof where, "%s: ", field);
    else where[0] = 0;
    if (pos == NO_POS) return ls_fail(r->err, "%s: %s%s", r->name, where, what);
    return ls_fail(r->err, "%s: %s%s (byte %u)", r->name, where, what, pos);
}

int ls_fb_charge(ls_fb_reader *r, const char *field, uint64_t bytes)
{
    r->copied += bytes;
    if (r->copied > r->max_copied)
        return ls_fb_fail(r, field, NO_POS,
                          "more than %llu bytes of data referenced by a %u-byte buffer: offsets are shared or cyclic",
                          (unsigned long long)r->max_copied, r->size);
    return 0;
}

int ls_fb_table_at(ls_fb_reader *r, uint32_t pos, ls_fb_table *t)
{
    if (++r->tables > r->max_tables)
        return ls_fb_fail(r, NULL, pos, "more than %llu tables visited: offsets are shared or cyclic",
                          (unsigned long long)r->max_tables);
    if ((uint64_t)pos + 4 > r->size)
        return ls_fb_fail(r, NULL, pos, "table starts past the end of the %u-byte buffer", r->size);
    if (pos % 4) return ls_fb_fail(r, NULL, pos, "table is not 4-byte aligned");
    int32_t soff = (int32_t)ls_fb_le32(r->buf + pos);
    int64_t vt = (int64_t)pos - soff;
    if (vt < 0 || vt + 4 > (int64_t)r->size)
        return ls_fb_fail(r, NULL, pos, "vtable offset %d points outside the buffer", soff);
    if (vt % 2) return ls_fb_fail(r, NULL, pos, "vtable at byte %lld is not 2-byte aligned", (long long)vt);
    uint16_t vt_size = ls_fb_le16(r->buf + vt), obj_size = ls_fb_le16(r->buf + vt + 2);
    if (vt_size < 4 || vt_size % 2)
        return ls_fb_fail(r, NULL, pos, "vtable at byte %lld has a bad size %u", (long long)vt, vt_size);
    if (vt + vt_size > (int64_t)r->size)
        return ls_fb_fail(r, NULL, pos, "vtable at byte %lld (%u bytes) runs past the end of the buffer", (long long)vt,
                          vt_size);
    if (obj_size < 4 || (uint64_t)pos + obj_size > r->size)
        return ls_fb_fail(r, NULL, pos, "table of %u bytes does not fit in the buffer", obj_size);
    t->pos = pos;
    t->vtab = (uint32_t)vt;
    t->vt_size = vt_size;
    t->obj_size = obj_size;
    return 0;
}

/* The 4-byte file identifier at byte `at` (checked to be inside the buffer by the caller). */
static int check_ident(ls_fb_reader *r, uint32_t at, const char *ident)
{
    if (memcmp(r->buf + at, ident, 4) == 0) return 0;
    char got[5];
    for (int i = 0; i < 4; i++) {
        uint8_t c = r->buf[at + i];
        got[i] = (c >= 0x20 && c < 0x7f) ? (char)c : '?';
    }
    got[4] = 0;
    return ls_fb_fail(r, NULL, at, "file identifier is \"%s\", expected \"%.4s\"", got, ident);
}

int ls_fb_root(ls_fb_reader *r, const char *ident, ls_fb_table *root)
{
    uint32_t need = ident ? 8 : 4;
    if (r->size < need)
        return ls_fb_fail(r, NULL, NO_POS, "%u bytes is too short for a flatbuffer", r->size);
    if (ident && check_ident(r, 4, ident) != 0) return -1;
    uint32_t off = ls_fb_le32(r->buf);
    if (off < need || off >= r->size)
        return ls_fb_fail(r, NULL, 0, "root offset %u is outside the %u-byte buffer", off, r->size);
    return ls_fb_table_at(r, off, root);
}

int ls_fb_root_size_prefixed(ls_fb_reader *r, const char *ident, ls_fb_table *root)
{
    uint32_t need = ident ? 12 : 8;
    if (r->size < need)
        return ls_fb_fail(r, NULL, NO_POS, "%u bytes is too short for a size-prefixed flatbuffer", r->size);
    uint32_t declared = ls_fb_le32(r->buf);
    if (declared < need - 4 || declared > r->size - 4)
        return ls_fb_fail(r, NULL, 0, "size prefix %u does not fit the %u bytes after it", declared, r->size - 4);
    r->size = declared + 4; /* what follows the declared size is not part of the buffer */
    if (ident && check_ident(r, 8, ident) != 0) return -1;
    uint32_t off = ls_fb_le32(r->buf + 4);
    if (off < need - 4 || off >= r->size - 4)
        return ls_fb_fail(r, NULL, 4, "root offset %u is outside the %u-byte buffer", off, r->size - 4);
    return ls_fb_table_at(r, 4 + off, root);
}

/* Position of the field in slot inside the table, 0 when absent; fails when the field of
 * fsize bytes would run past its table or is misaligned for its size. */
static int field_pos(ls_fb_reader *r, const ls_fb_table *t, unsigned slot, const char *field, unsigned fsize,
                     uint32_t *pos)
{
    *pos = 0;
    uint32_t voff = 4 + 2 * slot;
    if (voff + 2 > t->vt_size) return 0;
    uint16_t fo = ls_fb_le16(r->buf + t->vtab + voff);
    if (fo == 0) return 0;
    /* Checked against the buffer, not the table's declared size: some writers (the Python
     * FlatBuffers builder exir uses) declare tables shorter than their last field, and the
     * reference verifier accepts that. */
    if ((uint64_t)t->pos + fo + fsize > r->size)
        return ls_fb_fail(r, field, t->pos + fo, "field runs past the end of the %u-byte buffer", r->size);
    uint32_t p = t->pos + fo;
    unsigned align = fsize > 8 ? 8 : fsize;
    if (align > 1 && p % align) return ls_fb_fail(r, field, p, "%u-byte field is not aligned", fsize);
    *pos = p;
    return 1;
}

static void store_host(void *out, uint64_t v, unsigned size)
{
    switch (size) {
    case 1: { uint8_t x = (uint8_t)v; memcpy(out, &x, 1); break; }
    case 2: { uint16_t x = (uint16_t)v; memcpy(out, &x, 2); break; }
    case 4: { uint32_t x = (uint32_t)v; memcpy(out, &x, 4); break; }
    default: memcpy(out, &v, 8); break;
    }
}

int ls_fb_scalar(ls_fb_reader *r, const ls_fb_table *t, unsigned slot, const char *field, unsigned size, void *out)
{
    uint32_t p;
    int rc = field_pos(r, t, slot, field, size, &p);
    if (rc <= 0) return rc;
    store_host(out, ls_le_get(r->buf + p, (int)size), size);
    return 1;
}

#define SCALAR_GETTER(fn, T, SZ)                                                                       \
    int fn(ls_fb_reader *r, const ls_fb_table *t, unsigned slot, const char *field, T def, T *out)     \
    {                                                                                                  \
        *out = def;                                                                                    \
        return ls_fb_scalar(r, t, slot, field, SZ, out);                                               \
    }
SCALAR_GETTER(ls_fb_u8, uint8_t, 1)
SCALAR_GETTER(ls_fb_i8, int8_t, 1)
SCALAR_GETTER(ls_fb_i32, int32_t, 4)
SCALAR_GETTER(ls_fb_u32, uint32_t, 4)
SCALAR_GETTER(ls_fb_i64, int64_t, 8)
SCALAR_GETTER(ls_fb_u64, uint64_t, 8)
SCALAR_GETTER(ls_fb_f64, double, 8)

int ls_fb_bool(ls_fb_reader *r, const ls_fb_table *t, unsigned slot, const char *field, bool def, bool *out)
{
    uint8_t v;
    int rc = ls_fb_u8(r, t, slot, field, def ? 1 : 0, &v);
    *out = v != 0;
    return rc;
}

/* Follows the uoffset stored at pos; *target is checked only for fitting in 32 bits. Returns 0
 * with *target set, or -1: spelled out rather than passing on ls_fb_fail's result, so that the
 * compiler sees that the callers never read *target after a failure. */
static int follow(ls_fb_reader *r, uint32_t pos, const char *field, uint32_t *target)
{
    uint64_t tgt = (uint64_t)pos + ls_fb_le32(r->buf + pos);
    if (tgt >= r->size) {
        ls_fb_fail(r, field, pos, "offset points to byte %llu, past the end of the %u-byte buffer",
                   (unsigned long long)tgt, r->size);
        return -1;
    }
    *target = (uint32_t)tgt;
    return 0;
}

static int ref_field(ls_fb_reader *r, const ls_fb_table *t, unsigned slot, const char *field, uint32_t *target)
{
    uint32_t p;
    int rc = field_pos(r, t, slot, field, 4, &p);
    if (rc <= 0) return rc;
    if (follow(r, p, field, target) < 0) return -1;
    return 1;
}

static int table_checked(ls_fb_reader *r, uint32_t pos, const char *field, ls_fb_table *t)
{
    /* Name the field in table errors: the message otherwise names only the parent's path. */
    if (field && ls_fb_push(r, "%s", field) < 0) return -1;
    int rc = ls_fb_table_at(r, pos, t);
    if (field) ls_fb_pop(r);
    return rc;
}

int ls_fb_table_field(ls_fb_reader *r, const ls_fb_table *t, unsigned slot, const char *field, ls_fb_table *sub)
{
    uint32_t target;
    int rc = ref_field(r, t, slot, field, &target);
    if (rc <= 0) return rc;
    return table_checked(r, target, field, sub) < 0 ? -1 : 1;
}

static int vector_at(ls_fb_reader *r, uint32_t pos, const char *field, uint32_t elem_size, ls_fb_vec *v)
{
    if ((uint64_t)pos + 4 > r->size)
        return ls_fb_fail(r, field, pos, "vector starts past the end of the %u-byte buffer", r->size);
    if (pos % 4) return ls_fb_fail(r, field, pos, "vector is not 4-byte aligned");
    uint32_t n = ls_fb_le32(r->buf + pos);
    uint64_t bytes = (uint64_t)n * elem_size; /* cannot overflow: both factors < 2^32 */
    if ((uint64_t)pos + 4 + bytes > r->size)
        return ls_fb_fail(r, field, pos, "vector of %u elements x %u bytes runs past the end of the %u-byte buffer", n,
                          elem_size, r->size);
    uint32_t data = pos + 4;
    if (elem_size > 4 && n > 0 && data % (elem_size > 8 ? 8 : elem_size))
        return ls_fb_fail(r, field, pos, "vector of %u-byte elements is not aligned", elem_size);
    v->pos = data;
    v->n = n;
    v->elem_size = elem_size;
    return 0;
}

int ls_fb_vector_field(ls_fb_reader *r, const ls_fb_table *t, unsigned slot, const char *field, uint32_t elem_size,
                       ls_fb_vec *v)
{
    uint32_t target;
    int rc = ref_field(r, t, slot, field, &target);
    if (rc <= 0) return rc;
    return vector_at(r, target, field, elem_size, v) < 0 ? -1 : 1;
}

static int string_at(ls_fb_reader *r, uint32_t pos, const char *field, const char **s, uint32_t *len)
{
    if ((uint64_t)pos + 4 > r->size)
        return ls_fb_fail(r, field, pos, "string starts past the end of the %u-byte buffer", r->size);
    if (pos % 4) return ls_fb_fail(r, field, pos, "string is not 4-byte aligned");
    uint32_t n = ls_fb_le32(r->buf + pos);
    if ((uint64_t)pos + 4 + n + 1 > r->size)
        return ls_fb_fail(r, field, pos, "string of %u bytes runs past the end of the %u-byte buffer", n, r->size);
    if (r->buf[pos + 4 + n] != 0) return ls_fb_fail(r, field, pos, "string of %u bytes is not NUL-terminated", n);
    *s = (const char *)r->buf + pos + 4;
    *len = n;
    return 0;
}

int ls_fb_string_field(ls_fb_reader *r, const ls_fb_table *t, unsigned slot, const char *field, const char **s,
                       uint32_t *len)
{
    uint32_t target;
    int rc = ref_field(r, t, slot, field, &target);
    if (rc <= 0) return rc;
    return string_at(r, target, field, s, len) < 0 ? -1 : 1;
}

int ls_fb_union(ls_fb_reader *r, const ls_fb_table *t, unsigned type_slot, const char *field, uint8_t *type,
                ls_fb_table *sub)
{
    char type_field[96];
    snprintf(type_field, sizeof type_field, "%s_type", field);
    if (ls_fb_u8(r, t, type_slot, type_field, 0, type) < 0) return -1;
    return ls_fb_table_field(r, t, type_slot + 1, field, sub);
}

static int element_target(ls_fb_reader *r, const ls_fb_vec *v, uint32_t i, const char *field, char *name,
                          size_t name_size, uint32_t *target)
{
    assert(i < v->n && v->elem_size == 4);
    if (field) snprintf(name, name_size, "%s[%u]", field, i);
    else name[0] = 0;
    return follow(r, v->pos + 4 * i, field ? name : NULL, target);
}

int ls_fb_vec_table(ls_fb_reader *r, const ls_fb_vec *v, uint32_t i, const char *field, ls_fb_table *t)
{
    char name[96];
    uint32_t target;
    if (element_target(r, v, i, field, name, sizeof name, &target) < 0) return -1;
    return table_checked(r, target, field ? name : NULL, t);
}

int ls_fb_vec_copy(ls_fb_reader *r, const ls_fb_vec *v, const char *field, void *dst)
{
    uint64_t bytes = (uint64_t)v->n * v->elem_size;
    if (ls_fb_charge(r, field, bytes) < 0) return -1;
    const uint8_t *src = r->buf + v->pos;
    uint8_t *out = dst;
    if (v->elem_size == 1) {
        memcpy(out, src, v->n);
        return 0;
    }
    for (uint32_t i = 0; i < v->n; i++)
        store_host(out + (size_t)i * v->elem_size, ls_le_get(src + (size_t)i * v->elem_size, (int)v->elem_size), v->elem_size);
    return 0;
}

/* ---------------------------------------------------------------- builder */

void ls_fbb_init(ls_fbb *b)
{
    memset(b, 0, sizeof *b);
    b->minalign = 1;
}

void ls_fbb_free(ls_fbb *b)
{
    free(b->buf);
    free(b->vtables.v);
    ls_fbb_init(b);
}

size_t ls_fbb_size(const ls_fbb *b)
{
    return b->cap - b->head;
}

/* Makes room for need more bytes in front of the data. */
static void fbb_reserve(ls_fbb *b, size_t need)
{
    if (b->head >= need) return;
    size_t used = b->cap - b->head;
    if (used + need > FB_MAX_SIZE) b->too_big = true;
    size_t ncap = b->cap ? b->cap : 1024;
    while (ncap - used < need) ncap *= 2;
    uint8_t *nb = ls_malloc(ncap);
    if (used) memcpy(nb + ncap - used, b->buf + b->head, used);
    free(b->buf);
    b->buf = nb;
    b->head = ncap - used;
    b->cap = ncap;
}

static void fbb_pad(ls_fbb *b, size_t n)
{
    if (!n) return;
    fbb_reserve(b, n);
    b->head -= n;
    memset(b->buf + b->head, 0, n);
}

/* Pads so that after writing `additional` more bytes the size is a multiple of align. */
static void fbb_prep(ls_fbb *b, size_t align, size_t additional)
{
    if (align > b->minalign) b->minalign = align;
    size_t pad = (align - ((ls_fbb_size(b) + additional) & (align - 1))) & (align - 1);
    fbb_pad(b, pad);
}

static void fbb_push_le(ls_fbb *b, uint64_t v, unsigned size)
{
    fbb_reserve(b, size);
    b->head -= size;
    ls_le_put(b->buf + b->head, v, (int)size);
}

static uint32_t fbb_uoffset_to(ls_fbb *b, ls_fb_ref ref)
{
    /* Written at the position whose distance from the end will be size + 4. */
    return (uint32_t)(ls_fbb_size(b) + 4 - ref);
}

ls_fb_ref ls_fbb_string(ls_fbb *b, const char *s, size_t len)
{
    assert(!b->in_table);
    fbb_prep(b, 4, len + 1);
    fbb_pad(b, 1);
    fbb_reserve(b, len);
    b->head -= len;
    if (len) memcpy(b->buf + b->head, s, len);
    fbb_push_le(b, len, 4);
    return (ls_fb_ref)ls_fbb_size(b);
}

ls_fb_ref ls_fbb_vector(ls_fbb *b, const void *elems, size_t n, size_t elem_size, size_t align)
{
    assert(!b->in_table);
    assert(elem_size == 1 || elem_size == 2 || elem_size == 4 || elem_size == 8);
    if (align < elem_size) align = elem_size;
    size_t bytes = n * elem_size;
    fbb_prep(b, 4, bytes);
    fbb_prep(b, align, bytes);
    fbb_reserve(b, bytes);
    b->head -= bytes;
    const uint8_t *src = elems;
    for (size_t i = 0; i < n; i++) {
        uint64_t v = 0;
        switch (elem_size) {
        case 1: v = src[i]; break;
        case 2: { uint16_t x; memcpy(&x, src + 2 * i, 2); v = x; break; }
        case 4: { uint32_t x; memcpy(&x, src + 4 * i, 4); v = x; break; }
        default: memcpy(&v, src + 8 * i, 8); break;
        }
        ls_le_put(b->buf + b->head + i * elem_size, v, (int)elem_size);
    }
    fbb_push_le(b, n, 4);
    return (ls_fb_ref)ls_fbb_size(b);
}

ls_fb_ref ls_fbb_vector_refs(ls_fbb *b, const ls_fb_ref *refs, size_t n)
{
    assert(!b->in_table);
    fbb_prep(b, 4, 4 * n);
    for (size_t i = n; i-- > 0;) fbb_push_le(b, fbb_uoffset_to(b, refs[i]), 4);
    fbb_push_le(b, n, 4);
    return (ls_fb_ref)ls_fbb_size(b);
}

void ls_fbb_table_start(ls_fbb *b)
{
    assert(!b->in_table);
    b->in_table = true;
    b->nslots = 0;
    memset(b->slot_ref, 0, sizeof b->slot_ref);
    b->table_start = ls_fbb_size(b);
}

static void fbb_add_scalar(ls_fbb *b, unsigned slot, uint64_t v, unsigned size)
{
    assert(b->in_table && slot < LS_FBB_MAX_SLOTS);
    fbb_prep(b, size, 0);
    fbb_push_le(b, v, size);
    b->slot_ref[slot] = (uint32_t)ls_fbb_size(b);
    if (slot + 1 > b->nslots) b->nslots = slot + 1;
}

void ls_fbb_add_u8(ls_fbb *b, unsigned slot, uint8_t v, uint8_t def)
{
    if (v != def) fbb_add_scalar(b, slot, v, 1);
}
void ls_fbb_add_i8(ls_fbb *b, unsigned slot, int8_t v, int8_t def)
{
    if (v != def) fbb_add_scalar(b, slot, (uint8_t)v, 1);
}
void ls_fbb_add_bool(ls_fbb *b, unsigned slot, bool v, bool def)
{
    if (v != def) fbb_add_scalar(b, slot, v ? 1 : 0, 1);
}
void ls_fbb_add_i16(ls_fbb *b, unsigned slot, int16_t v, int16_t def)
{
    if (v != def) fbb_add_scalar(b, slot, (uint16_t)v, 2);
}
void ls_fbb_add_f32(ls_fbb *b, unsigned slot, float v, float def)
{
    uint32_t bits, dbits; /* bits, as for f64 */
    memcpy(&bits, &v, 4);
    memcpy(&dbits, &def, 4);
    if (bits != dbits) fbb_add_scalar(b, slot, bits, 4);
}
void ls_fbb_add_i32(ls_fbb *b, unsigned slot, int32_t v, int32_t def)
{
    if (v != def) fbb_add_scalar(b, slot, (uint32_t)v, 4);
}
void ls_fbb_add_u32(ls_fbb *b, unsigned slot, uint32_t v, uint32_t def)
{
    if (v != def) fbb_add_scalar(b, slot, v, 4);
}
void ls_fbb_add_i64(ls_fbb *b, unsigned slot, int64_t v, int64_t def)
{
    if (v != def) fbb_add_scalar(b, slot, (uint64_t)v, 8);
}
void ls_fbb_add_u64(ls_fbb *b, unsigned slot, uint64_t v, uint64_t def)
{
    if (v != def) fbb_add_scalar(b, slot, v, 8);
}
void ls_fbb_add_f64(ls_fbb *b, unsigned slot, double v, double def)
{
    /* Compare bits, not values: -0.0 and NaN payloads survive a round trip. */
    uint64_t bits, dbits;
    memcpy(&bits, &v, 8);
    memcpy(&dbits, &def, 8);
    if (bits != dbits) fbb_add_scalar(b, slot, bits, 8);
}

void ls_fbb_add_ref(ls_fbb *b, unsigned slot, ls_fb_ref ref)
{
    assert(b->in_table && slot < LS_FBB_MAX_SLOTS);
    if (!ref) return;
    fbb_prep(b, 4, 0);
    fbb_push_le(b, fbb_uoffset_to(b, ref), 4);
    b->slot_ref[slot] = (uint32_t)ls_fbb_size(b);
    if (slot + 1 > b->nslots) b->nslots = slot + 1;
}

ls_fb_ref ls_fbb_table_end(ls_fbb *b)
{
    assert(b->in_table);
    fbb_prep(b, 4, 0);
    fbb_push_le(b, 0, 4); /* the soffset to the vtable, patched below */
    uint32_t obj = (uint32_t)ls_fbb_size(b);

    uint8_t vt[4 + 2 * LS_FBB_MAX_SLOTS];
    size_t vt_size = 4 + 2 * (size_t)b->nslots;
    uint32_t obj_size = obj - (uint32_t)b->table_start;
    vt[0] = (uint8_t)vt_size;
    vt[1] = (uint8_t)(vt_size >> 8);
    vt[2] = (uint8_t)obj_size;
    vt[3] = (uint8_t)(obj_size >> 8);
    for (unsigned i = 0; i < b->nslots; i++) {
        uint32_t fo = b->slot_ref[i] ? obj - b->slot_ref[i] : 0;
        vt[4 + 2 * i] = (uint8_t)fo;
        vt[5 + 2 * i] = (uint8_t)(fo >> 8);
    }
    /* Reuse an identical vtable written before, as FlatBuffers writers do. */
    uint32_t vt_ref = 0;
    for (uint32_t i = 0; i < b->vtables.n && !vt_ref; i++) {
        const uint8_t *p = b->buf + b->cap - b->vtables.v[i];
        if (ls_fb_le16(p) == vt_size && memcmp(p, vt, vt_size) == 0) vt_ref = b->vtables.v[i];
    }
    if (!vt_ref) {
        fbb_reserve(b, vt_size);
        b->head -= vt_size;
        memcpy(b->buf + b->head, vt, vt_size);
        vt_ref = (uint32_t)ls_fbb_size(b);
        ls_vec_push(&b->vtables, vt_ref);
    }
    int32_t soff = (int32_t)((int64_t)vt_ref - obj);
    uint8_t *at = b->buf + b->cap - obj;
    ls_le_put(at, (uint32_t)soff, 4);
    b->in_table = false;
    return obj;
}

/* The root offset (after a u32 size prefix when size_prefixed) and the identifier, aligned so
 * that the whole buffer, prefix included, keeps every field's alignment. */
static uint8_t *fbb_finish(ls_fbb *b, ls_fb_ref root, const char *ident, bool size_prefixed, size_t *size)
{
    assert(!b->in_table);
    fbb_prep(b, b->minalign < 4 ? 4 : b->minalign, (ident ? 8 : 4) + (size_prefixed ? 4 : 0));
    if (ident) {
        fbb_reserve(b, 4);
        b->head -= 4;
        memcpy(b->buf + b->head, ident, 4);
    }
    fbb_push_le(b, fbb_uoffset_to(b, root), 4);
    if (size_prefixed) fbb_push_le(b, ls_fbb_size(b), 4);
    uint8_t *out = NULL;
    *size = 0;
    if (!b->too_big) {
        *size = ls_fbb_size(b);
        out = ls_malloc(*size);
        memcpy(out, b->buf + b->head, *size);
    }
    ls_fbb_free(b);
    return out;
}

uint8_t *ls_fbb_finish(ls_fbb *b, ls_fb_ref root, const char *ident, size_t *size)
{
    return fbb_finish(b, root, ident, false, size);
}

uint8_t *ls_fbb_finish_size_prefixed(ls_fbb *b, ls_fb_ref root, const char *ident, size_t *size)
{
    return fbb_finish(b, root, ident, true, size);
}
