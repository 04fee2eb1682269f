/* A small FlatBuffers layer: a reader that checks every access against untrusted bytes, and a
 * builder that lays a buffer out back to front the way FlatBuffers writers do.
 *
 * Reader: each call that follows an offset verifies it (target inside the buffer, alignment,
 * vtable shape, vector length x element size without overflow, strings NUL-terminated inside
 * the buffer). Callers keep a path ("execution_plan[0].values[12].val") with ls_fb_push/pop so
 * errors read "FILE: PATH.field: what is wrong (byte N)". A cap on tables visited and on bytes
 * handed out for copying bounds the work a hostile buffer can cause (shared or cyclic offsets),
 * and a depth cap bounds recursion for schemas that nest.
 *
 * Builder: objects are written from the end of the buffer towards its start; a "ref" names an
 * object by its distance from the end, which stays valid while the buffer grows. */
#ifndef LS_FLATBUF_H
#define LS_FLATBUF_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#include "common.h"

/* ---------------------------------------------------------------- reader */

#define LS_FB_PATH_MAX 384
#define LS_FB_DEPTH_MAX 64

typedef struct ls_fb_reader {
    const uint8_t *buf;
    uint32_t size;    /* bytes of flatbuffer data (uoffsets are 32-bit) */
    const char *name; /* file name for messages */
    ls_error *err;
    unsigned depth;
    uint64_t tables, max_tables; /* tables opened so far, and the cap */
    uint64_t copied, max_copied; /* bytes charged by ls_fb_charge, and the cap */
    char path[LS_FB_PATH_MAX];
    size_t path_len;
    uint16_t marks[LS_FB_DEPTH_MAX]; /* path_len before each push */
} ls_fb_reader;

typedef struct ls_fb_table {
    uint32_t pos;      /* table start (its soffset to the vtable) */
    uint32_t vtab;     /* vtable start */
    uint16_t vt_size;  /* vtable bytes, including its two u16 header fields */
    uint16_t obj_size; /* table bytes, including the soffset */
} ls_fb_table;

typedef struct ls_fb_vec {
    uint32_t pos; /* first element */
    uint32_t n;
    uint32_t elem_size;
} ls_fb_vec;

/* Sets up a reader over buf[0..size). Fails when size does not fit a flatbuffer (>= 4 GiB).
 * name is used in messages and must outlive the reader. */
int ls_fb_reader_init(ls_fb_reader *r, const void *buf, size_t size, const char *name, ls_error *err);
/* Opens the root table; checks the 4-byte file identifier at byte 4 when ident is not NULL. */
int ls_fb_root(ls_fb_reader *r, const char *ident, ls_fb_table *root);
/* The same for a size-prefixed buffer (flatcc's and FinishSizePrefixed's): a u32 byte count at
 * byte 0, then the root offset (relative to byte 4) and the identifier at byte 8. Bytes past the
 * declared size are not part of the buffer; positions stay relative to byte 0, so alignment is
 * checked as the writers laid it out. */
int ls_fb_root_size_prefixed(ls_fb_reader *r, const char *ident, ls_fb_table *root);
/* Opens (verifies) the table starting at pos. */
int ls_fb_table_at(ls_fb_reader *r, uint32_t pos, ls_fb_table *t);

/* Path bookkeeping: push appends a segment ("[3]" or ".values" or "values"), pop removes it.
 * A push past LS_FB_DEPTH_MAX fails with a message (returns -1; no pop needed then). */
int ls_fb_push(ls_fb_reader *r, const char *fmt, ...) LS_PRINTF(2, 3);
void ls_fb_pop(ls_fb_reader *r);
/* Fails with "NAME: PATH[.field]: message (byte pos)"; field may be NULL. Returns -1. */
int ls_fb_fail(ls_fb_reader *r, const char *field, uint32_t pos, const char *fmt, ...) LS_PRINTF(4, 5);
/* Counts bytes the caller is about to copy out or allocate for what it reads; fails when the
 * total passes max_copied (8x the buffer + 1 MiB), so offsets that share one big vector or
 * table many times cannot make a small file take gigabytes. */
int ls_fb_charge(ls_fb_reader *r, const char *field, uint64_t bytes);

/* Field access. Each returns 1 when the field is present, 0 when absent (outputs untouched, or
 * the default for the scalar getters), -1 on error (message set). slot is the field's index in
 * the vtable; field names the field in messages. */
int ls_fb_scalar(ls_fb_reader *r, const ls_fb_table *t, unsigned slot, const char *field, unsigned size, void *out);
int ls_fb_u8(ls_fb_reader *r, const ls_fb_table *t, unsigned slot, const char *field, uint8_t def, uint8_t *out);
int ls_fb_i8(ls_fb_reader *r, const ls_fb_table *t, unsigned slot, const char *field, int8_t def, int8_t *out);
int ls_fb_bool(ls_fb_reader *r, const ls_fb_table *t, unsigned slot, const char *field, bool def, bool *out);
int ls_fb_i32(ls_fb_reader *r, const ls_fb_table *t, unsigned slot, const char *field, int32_t def, int32_t *out);
int ls_fb_u32(ls_fb_reader *r, const ls_fb_table *t, unsigned slot, const char *field, uint32_t def, uint32_t *out);
int ls_fb_i64(ls_fb_reader *r, const ls_fb_table *t, unsigned slot, const char *field, int64_t def, int64_t *out);
int ls_fb_u64(ls_fb_reader *r, const ls_fb_table *t, unsigned slot, const char *field, uint64_t def, uint64_t *out);
int ls_fb_f64(ls_fb_reader *r, const ls_fb_table *t, unsigned slot, const char *field, double def, double *out);
/* A sub-table field. */
int ls_fb_table_field(ls_fb_reader *r, const ls_fb_table *t, unsigned slot, const char *field, ls_fb_table *sub);
/* A vector field of elem_size-byte elements (4 for vectors of tables or strings). */
int ls_fb_vector_field(ls_fb_reader *r, const ls_fb_table *t, unsigned slot, const char *field, uint32_t elem_size,
                       ls_fb_vec *v);
/* A string field: *s points into the buffer (NUL-terminated, checked), *len excludes the NUL. */
int ls_fb_string_field(ls_fb_reader *r, const ls_fb_table *t, unsigned slot, const char *field, const char **s,
                       uint32_t *len);
/* A union: the type tag in slot type_slot (ubyte), the value table in type_slot + 1.
 * Returns 1 when the value table is present (sub set), 0 when not; *type is always set. */
int ls_fb_union(ls_fb_reader *r, const ls_fb_table *t, unsigned type_slot, const char *field, uint8_t *type,
                ls_fb_table *sub);

/* Elements of a verified vector. Tables/strings: the element is a uoffset, followed and checked
 * (the message names field[i]; field NULL when the caller already pushed it). Scalars: copy
 * all n elements to dst (host order), charging the bytes; dst must hold n * elem_size bytes. */
int ls_fb_vec_table(ls_fb_reader *r, const ls_fb_vec *v, uint32_t i, const char *field, ls_fb_table *t);
int ls_fb_vec_copy(ls_fb_reader *r, const ls_fb_vec *v, const char *field, void *dst);

/* Little-endian loads (no checks: for positions already verified). */
uint16_t ls_fb_le16(const uint8_t *p);
uint32_t ls_fb_le32(const uint8_t *p);
uint64_t ls_fb_le64(const uint8_t *p);

/* ---------------------------------------------------------------- builder */

#define LS_FBB_MAX_SLOTS 64

typedef uint32_t ls_fb_ref; /* an object's distance from the end of the buffer; 0 = none */

typedef struct ls_fbb {
    uint8_t *buf;
    size_t cap, head; /* data lives in buf[head..cap) */
    size_t minalign;  /* largest alignment asked for; the finished size is a multiple of it */
    bool too_big;     /* passed 2 GiB, the FlatBuffers limit: ls_fbb_finish returns NULL */
    bool in_table;
    size_t table_start;
    unsigned nslots;                       /* 1 + highest slot set in the open table */
    uint32_t slot_ref[LS_FBB_MAX_SLOTS];   /* field refs of the open table (0 = unset) */
    LS_VEC(uint32_t) vtables;              /* refs of vtables written, for reuse */
} ls_fbb;

void ls_fbb_init(ls_fbb *b);
void ls_fbb_free(ls_fbb *b);
size_t ls_fbb_size(const ls_fbb *b);

/* Leaves objects: strings and vectors (elements given in host order, stored little-endian;
 * align is the element data's alignment, at least elem_size, e.g. 16 for force_align 16). */
ls_fb_ref ls_fbb_string(ls_fbb *b, const char *s, size_t len);
ls_fb_ref ls_fbb_vector(ls_fbb *b, const void *elems, size_t n, size_t elem_size, size_t align);
ls_fb_ref ls_fbb_vector_refs(ls_fbb *b, const ls_fb_ref *refs, size_t n); /* tables or strings */

/* Tables: start, add fields (scalars equal to their default are left out, as FlatBuffers
 * writers do), end. Only one table can be open; build its children first. */
void ls_fbb_table_start(ls_fbb *b);
void ls_fbb_add_u8(ls_fbb *b, unsigned slot, uint8_t v, uint8_t def);
void ls_fbb_add_i8(ls_fbb *b, unsigned slot, int8_t v, int8_t def);
void ls_fbb_add_bool(ls_fbb *b, unsigned slot, bool v, bool def);
void ls_fbb_add_i16(ls_fbb *b, unsigned slot, int16_t v, int16_t def);
void ls_fbb_add_f32(ls_fbb *b, unsigned slot, float v, float def);
void ls_fbb_add_i32(ls_fbb *b, unsigned slot, int32_t v, int32_t def);
void ls_fbb_add_u32(ls_fbb *b, unsigned slot, uint32_t v, uint32_t def);
void ls_fbb_add_i64(ls_fbb *b, unsigned slot, int64_t v, int64_t def);
void ls_fbb_add_u64(ls_fbb *b, unsigned slot, uint64_t v, uint64_t def);
void ls_fbb_add_f64(ls_fbb *b, unsigned slot, double v, double def);
void ls_fbb_add_ref(ls_fbb *b, unsigned slot, ls_fb_ref ref); /* ref 0: field left out */
ls_fb_ref ls_fbb_table_end(ls_fbb *b);

/* Writes the root offset and the file identifier (4 chars, or NULL), returns the finished
 * buffer (malloc'd, *size bytes) and resets the builder. NULL when the buffer passed 2 GiB. */
uint8_t *ls_fbb_finish(ls_fbb *b, ls_fb_ref root, const char *ident, size_t *size);
/* The same with a u32 size prefix (the bytes after it) before the root offset, as flatcc writes
 * an ETDump; the buffer is aligned as a whole, prefix included. */
uint8_t *ls_fbb_finish_size_prefixed(ls_fbb *b, ls_fb_ref root, const char *ident, size_t *size);

#endif
