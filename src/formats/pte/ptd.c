/* Reading .ptd files (ExecuTorch FlatTensor, identifier FT01) and resolving a program's
 * EXTERNAL tensors against them.
 *
 * Two schema layouts share the identifier FT01. The current one is FlatTensor {version,
 * segments, named_data[{key, segment_index, tensor_layout}]}; the February 2025 one is
 * FlatTensor {version, tensor_alignment, tensors[TensorMetadata{fully_qualified_name,
 * scalar_type, sizes, dim_order, segment_index, offset}], segments}. Both are read.
 * Physically, current files have the FH01 header inside the flatbuffer at byte 8 (like eh00);
 * the early 2025 writer put FH01 at byte 0 with the flatbuffer after it at flatbuffer_offset. */
#include "pte.h"

#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "pte_internal.h"

#define PTD_READ_LIMIT ((size_t)1 << 34)
#define FH_MIN_LENGTH 40 /* magic, length, flatbuffer offset and size, segment base and size */

#define TRY(x)                  \
    do {                        \
        if ((x) < 0) return -1; \
    } while (0)

/* ---------------------------------------------------------------- tables */

static int read_layout(ls_fb_reader *r, const ls_fb_table *t, void *out)
{
    ls_ptd_entry *e = out;
    TRY(ls_fb_i8(r, t, 0, "scalar_type", 0, &e->scalar_type));
    TRY(LSP_READ_SCALARS(r, t, 1, "sizes", &e->sizes));
    TRY(LSP_READ_SCALARS(r, t, 2, "dim_order", &e->dim_order));
    return 0;
}

static int read_named_data(ls_fb_reader *r, const ls_fb_table *t, void *out)
{
    ls_ptd_entry *e = out;
    TRY(lsp_read_string(r, t, 0, "key", &e->key));
    TRY(ls_fb_u32(r, t, 1, "segment_index", 0, &e->segment_index));
    TRY(lsp_read_sub(r, t, 2, "tensor_layout", read_layout, e, &e->has_tensor_layout));
    return 0;
}

static int read_tensor_metadata(ls_fb_reader *r, const ls_fb_table *t, void *out)
{
    ls_ptd_entry *e = out;
    TRY(lsp_read_string(r, t, 0, "fully_qualified_name", &e->key));
    TRY(ls_fb_i8(r, t, 1, "scalar_type", 0, &e->scalar_type));
    TRY(LSP_READ_SCALARS(r, t, 2, "sizes", &e->sizes));
    TRY(LSP_READ_SCALARS(r, t, 3, "dim_order", &e->dim_order));
    TRY(ls_fb_u32(r, t, 4, "segment_index", 0, &e->segment_index));
    TRY(ls_fb_u64(r, t, 5, "offset", 0, &e->offset));
    e->has_tensor_layout = true; /* the Feb-2025 layout always describes the tensor */
    return 0;
}

static int read_flat_tensor(ls_fb_reader *r, const ls_fb_table *t, bool feb2025, ls_ptd *d)
{
    TRY(ls_fb_u32(r, t, 0, "version", 0, &d->version));
    if (feb2025) {
        TRY(ls_fb_u32(r, t, 1, "tensor_alignment", 0, &d->tensor_alignment));
        TRY(LSP_READ_TABLES(r, t, 2, "tensors", &d->named_data, read_tensor_metadata));
        TRY(LSP_READ_TABLES(r, t, 3, "segments", &d->segments, lsp_read_data_segment));
    } else {
        TRY(LSP_READ_TABLES(r, t, 1, "segments", &d->segments, lsp_read_data_segment));
        TRY(LSP_READ_TABLES(r, t, 2, "named_data", &d->named_data, read_named_data));
    }
    return 0;
}

static void free_entries(ls_ptd *d)
{
    for (uint32_t i = 0; i < d->named_data.n; i++) {
        free(d->named_data.v[i].key);
        free(d->named_data.v[i].sizes.v);
        free(d->named_data.v[i].dim_order.v);
    }
    free(d->named_data.v);
    free(d->segments.v);
    d->named_data = (ls_ptd_entries){0};
    d->segments = (ls_pte_data_segments){0};
    d->version = d->tensor_alignment = 0;
}

void ls_ptd_free(ls_ptd *d)
{
    if (!d) return;
    free(d->name);
    free_entries(d);
    for (uint32_t i = 0; i < d->n_segment_data; i++) ls_pte_blob_release(&d->segment_data[i]);
    free(d->segment_data);
    memset(d, 0, sizeof *d);
}

/* Reads the flatbuffer as one layout with a fresh reader (fresh limits and path). */
static int try_layout(const uint8_t *fb, size_t fb_size, const char *name, bool feb2025, ls_ptd *d, ls_error *err)
{
    ls_fb_reader r;
    ls_fb_table root;
    if (ls_fb_reader_init(&r, fb, fb_size, name, err) < 0) return -1;
    if (ls_fb_root(&r, "FT01", &root) < 0) return -1;
    d->feb2025 = feb2025;
    if (read_flat_tensor(&r, &root, feb2025, d) < 0) {
        free_entries(d);
        return -1;
    }
    return 0;
}

/* The Feb-2025 FlatTensor has a fourth field (segments in slot 3); the current one has three. */
static bool looks_feb2025(const uint8_t *fb, size_t fb_size, const char *name)
{
    ls_fb_reader r;
    ls_fb_table root;
    uint32_t pos = 0;
    if (ls_fb_reader_init(&r, fb, fb_size, name, NULL) < 0 || ls_fb_root(&r, "FT01", &root) < 0) return false;
    if (root.vt_size < 4 + 2 * 4) return false;
    pos = ls_fb_le16(fb + root.vtab + 4 + 2 * 3);
    return pos != 0;
}

static int parse_header(const uint8_t *h, size_t avail, const char *name, ls_ptd *d, ls_error *err)
{
    if (avail < 8) return ls_fail(err, "%s: FH01 header: file ends inside it", name);
    uint32_t len = ls_fb_le32(h + 4);
    if (len < FH_MIN_LENGTH)
        return ls_fail(err, "%s: FH01 header: length %u is less than %d", name, len, FH_MIN_LENGTH);
    if (len > avail) return ls_fail(err, "%s: FH01 header: file ends inside it", name);
    d->has_header = true;
    d->flatbuffer_offset = ls_fb_le64(h + 8);
    d->flatbuffer_size = ls_fb_le64(h + 16);
    d->segment_base_offset = ls_fb_le64(h + 24);
    d->segment_data_size = ls_fb_le64(h + 32);
    return 0;
}

int ls_ptd_read_bytes(const uint8_t *data, size_t size, const char *name, ls_ptd *out, ls_error *err)
{
    memset(out, 0, sizeof *out);
    if (!name) name = "data file";
    ls_ptd d = {0};
    d.name = ls_strdup(name);
    const uint8_t *fb;
    uint64_t fb_end; /* the flatbuffer is data[fb_start, fb_end) */
    uint64_t fb_start = 0;
    if (size >= 8 && memcmp(data + 4, "FT01", 4) == 0) {
        fb_end = size;
        if (size >= 12 && memcmp(data + 8, "FH01", 4) == 0) {
            if (parse_header(data + 8, size - 8, name, &d, err) < 0) goto fail;
            /* flatbuffer_offset counts from the file start, past the header it contains */
            if (__builtin_add_overflow(d.flatbuffer_offset, d.flatbuffer_size, &fb_end) || fb_end > size || fb_end < 8)
                goto bad_extent;
        }
    } else if (size >= 4 && memcmp(data, "FH01", 4) == 0) {
        if (parse_header(data, size, name, &d, err) < 0) goto fail;
        fb_start = d.flatbuffer_offset;
        if (__builtin_add_overflow(d.flatbuffer_offset, d.flatbuffer_size, &fb_end) || fb_end > size ||
            d.flatbuffer_size < 8)
            goto bad_extent;
    } else {
        ls_fail(err, "%s: not an ExecuTorch data file (no \"FT01\" identifier at byte 4)", name);
        goto fail;
    }
    fb = data + fb_start;
    size_t fb_size = (size_t)(fb_end - fb_start);
    if (d.has_header && d.segment_base_offset != 0 && d.segment_base_offset < fb_end) {
        ls_fail(err, "%s: FH01 header: segment_base_offset %llu is inside the flatbuffer (which ends at %llu)", name,
                (unsigned long long)d.segment_base_offset, (unsigned long long)fb_end);
        goto fail;
    }
    uint64_t seg_end = size;
    if (d.has_header && d.segment_data_size > 0 &&
        (__builtin_add_overflow(d.segment_base_offset, d.segment_data_size, &seg_end) || seg_end > size)) {
        ls_fail(err, "%s: FH01 header: segment data (%llu bytes from byte %llu) runs past the end of the %zu-byte file",
                name, (unsigned long long)d.segment_data_size, (unsigned long long)d.segment_base_offset, size);
        goto fail;
    }

    bool feb = looks_feb2025(fb, fb_size, name);
    ls_error first, second;
    if (try_layout(fb, fb_size, name, feb, &d, &first) < 0) {
        /* The identifier cannot tell the layouts apart: give the other one a chance. */
        if (try_layout(fb, fb_size, name, !feb, &d, &second) < 0) {
            size_t nl = strlen(name);
            bool named = strncmp(first.msg, name, nl) == 0 && first.msg[nl] == ':' && first.msg[nl + 1] == ' ';
            const char *why = named ? first.msg + nl + 2 : first.msg; /* do not name the file twice */
            ls_fail(err, "%s: fits neither FlatTensor layout; read as the %s layout: %s", name,
                    feb ? "Feb-2025" : "current", why);
            goto fail;
        }
    }
    if (lsp_copy_segments(data, d.segment_base_offset, seg_end, d.has_header, &d.segments, &d.segment_data,
                          &d.n_segment_data, name, err) < 0)
        goto fail;
    for (uint32_t i = 0; i < d.named_data.n; i++) {
        const ls_ptd_entry *e = &d.named_data.v[i];
        if (e->segment_index >= d.segments.n) {
            ls_fail(err, "%s: %s[%u].segment_index: %u is out of range (%u segments)", name,
                    d.feb2025 ? "tensors" : "named_data", i, e->segment_index, d.segments.n);
            goto fail;
        }
        if (e->offset > d.segment_data[e->segment_index].n) {
            ls_fail(err, "%s: tensors[%u].offset: %llu is past the end of segment %u (%llu bytes)", name, i,
                    (unsigned long long)e->offset, e->segment_index,
                    (unsigned long long)d.segment_data[e->segment_index].n);
            goto fail;
        }
    }
    *out = d;
    return 0;
bad_extent:
    ls_fail(err, "%s: FH01 header: flatbuffer (%llu bytes at byte %llu) does not fit in the %zu-byte file", name,
            (unsigned long long)d.flatbuffer_size, (unsigned long long)d.flatbuffer_offset, size);
fail:
    ls_ptd_free(&d);
    return -1;
}

int ls_ptd_read_file(const char *path, ls_ptd *ptd, ls_error *err)
{
    memset(ptd, 0, sizeof *ptd);
    uint8_t *data;
    size_t size;
    if (ls_read_file(path, PTD_READ_LIMIT, &data, &size, err) < 0) return -1;
    int rc = ls_ptd_read_bytes(data, size, path, ptd, err);
    free(data);
    return rc;
}

/* ---------------------------------------------------------------- look-ups */

static const char *dname(const ls_ptd *d)
{
    return d->name ? d->name : "data file";
}

const ls_ptd_entry *ls_ptd_find(const ls_ptd *d, const char *key)
{
    for (uint32_t i = 0; i < d->named_data.n; i++)
        if (d->named_data.v[i].key && strcmp(d->named_data.v[i].key, key) == 0) return &d->named_data.v[i];
    return NULL;
}

static int entry_nbytes(const ls_ptd_entry *e, uint64_t *nbytes, ls_error *err)
{
    ls_pte_tensor t = {0};
    t.scalar_type = e->scalar_type;
    t.sizes = e->sizes;
    return ls_pte_tensor_nbytes(&t, nbytes, err);
}

int ls_ptd_entry_bytes(const ls_ptd *d, const ls_ptd_entry *e, const uint8_t **data, size_t *size, ls_error *err)
{
    const char *key = e->key ? e->key : "";
    if (e->segment_index >= d->n_segment_data)
        return ls_fail(err, "%s: \"%s\": segment %u does not exist (%u segments)", dname(d), key, e->segment_index,
                       d->n_segment_data);
    const ls_pte_blob *b = &d->segment_data[e->segment_index];
    uint64_t avail = e->offset <= b->n ? b->n - e->offset : 0;
    uint64_t n = avail;
    if (d->feb2025 || e->has_tensor_layout) {
        if (entry_nbytes(e, &n, err) < 0) return ls_fail_prefix(err, "%s: \"%s\"", dname(d), key);
        if (n > avail)
            return ls_fail(err, "%s: \"%s\": tensor needs %llu bytes, segment %u has %llu from offset %llu", dname(d),
                           key, (unsigned long long)n, e->segment_index, (unsigned long long)avail,
                           (unsigned long long)e->offset);
    }
    *data = b->v ? b->v + e->offset : NULL;
    *size = (size_t)n;
    return 0;
}

static void layout_str(char *s, size_t cap, int scalar_type, const ls_pte_i32s *sizes)
{
    const char *tn = ls_et_scalar_type_name(scalar_type);
    int n = tn ? snprintf(s, cap, "%s [", tn) : snprintf(s, cap, "type %d [", scalar_type);
    for (uint32_t i = 0; i < sizes->n && n > 0 && (size_t)n < cap; i++)
        n += snprintf(s + n, cap - (size_t)n, "%s%d", i ? ", " : "", sizes->v[i]);
    if (n > 0 && (size_t)n < cap) snprintf(s + n, cap - (size_t)n, "]");
}

int ls_ptd_tensor_bytes(const ls_ptd *d, const ls_pte_tensor *t, const uint8_t **data, size_t *size, ls_error *err)
{
    *data = NULL;
    *size = 0;
    const char *fqn = t->has_extra_tensor_info ? t->extra_tensor_info.fully_qualified_name : NULL;
    if (!fqn) return ls_fail(err, "%s: tensor has no fully_qualified_name to look up", dname(d));
    const ls_ptd_entry *e = ls_ptd_find(d, fqn);
    if (!e) return ls_fail(err, "%s: no entry \"%s\"", dname(d), fqn);
    if (e->has_tensor_layout) {
        bool same = e->scalar_type == t->scalar_type && e->sizes.n == t->sizes.n;
        for (uint32_t i = 0; same && i < e->sizes.n; i++) same = e->sizes.v[i] == t->sizes.v[i];
        if (!same) {
            char want[160], have[160];
            layout_str(want, sizeof want, t->scalar_type, &t->sizes);
            layout_str(have, sizeof have, e->scalar_type, &e->sizes);
            return ls_fail(err, "%s: \"%s\": the program expects %s, the data file has %s", dname(d), fqn, want, have);
        }
    }
    uint64_t need;
    if (ls_pte_tensor_nbytes(t, &need, err) < 0) return ls_fail_prefix(err, "%s: \"%s\"", dname(d), fqn);
    const uint8_t *p;
    size_t avail;
    if (ls_ptd_entry_bytes(d, e, &p, &avail, err) < 0) return -1;
    if (need > avail)
        return ls_fail(err, "%s: \"%s\": tensor needs %llu bytes, the data file holds %zu", dname(d), fqn,
                       (unsigned long long)need, avail);
    *data = p;
    *size = (size_t)need;
    return 0;
}

int ls_pte_resolve_external(const ls_pte *pte, const ls_ptd *ptd, uint32_t *count, ls_error *err)
{
    uint32_t found = 0;
    for (uint32_t pi = 0; pi < pte->execution_plan.n; pi++) {
        const ls_pte_plan *plan = &pte->execution_plan.v[pi];
        for (uint32_t vi = 0; vi < plan->values.n; vi++) {
            const ls_pte_value *v = &plan->values.v[vi];
            if (v->kind != LS_PTE_VAL_TENSOR || !v->tensor.has_extra_tensor_info ||
                v->tensor.extra_tensor_info.location != LS_PTE_TENSOR_EXTERNAL)
                continue;
            const uint8_t *data;
            size_t size;
            if (ls_ptd_tensor_bytes(ptd, &v->tensor, &data, &size, err) < 0)
                return ls_fail_prefix(err, "%s: execution_plan[%u].values[%u]", pte->name ? pte->name : "program", pi,
                                      vi);
            found++;
        }
    }
    if (count) *count = found;
    return 0;
}
