/* Reading .pte files: sniff, extended header, the Program flatbuffer walked through the
 * checked reader into the owned model, segments resolved, cross references checked. */
#include "pte.h"

#include <ctype.h>
#include <stdlib.h>
#include <string.h>

#include "flatbuf.h"
#include "pte_internal.h"
#include "tensor.h"

#define PTE_READ_LIMIT ((size_t)1 << 34) /* 16 GiB: a .pte larger than this is not for us */

/* ---------------------------------------------------------------- generic field readers */

int lsp_read_string(ls_fb_reader *r, const ls_fb_table *t, unsigned slot, const char *field, char **out)
{
    const char *s;
    uint32_t n;
    int rc = ls_fb_string_field(r, t, slot, field, &s, &n);
    if (rc <= 0) return rc;
    if (ls_fb_charge(r, field, (uint64_t)n + 1) < 0) return -1;
    *out = ls_strndup(s, n);
    return 1;
}

int lsp_read_scalars(ls_fb_reader *r, const ls_fb_table *t, unsigned slot, const char *field, uint32_t elem_size,
                     void **v, uint32_t *n, bool *present)
{
    ls_fb_vec vec;
    int rc = ls_fb_vector_field(r, t, slot, field, elem_size, &vec);
    if (rc <= 0) return rc;
    *present = true;
    *n = vec.n;
    *v = vec.n ? ls_malloc((size_t)vec.n * elem_size) : NULL;
    if (vec.n && ls_fb_vec_copy(r, &vec, field, *v) < 0) return -1;
    return 1;
}

/* A vector of tables: the array is sized from the verified element count (so it fits in the
 * file) and charged to the reader's budget (elements may all share one table), zeroed so a
 * failure half way leaves something the free functions can free. */
int lsp_read_tables(ls_fb_reader *r, const ls_fb_table *t, unsigned slot, const char *field, size_t esize,
                    lsp_read_fn fn, void **v, uint32_t *n, bool *present)
{
    ls_fb_vec vec;
    int rc = ls_fb_vector_field(r, t, slot, field, 4, &vec);
    if (rc <= 0) return rc;
    *present = true;
    if (ls_fb_charge(r, field, (uint64_t)vec.n * esize) < 0) return -1;
    *v = vec.n ? ls_calloc(vec.n, esize) : NULL;
    *n = vec.n;
    for (uint32_t i = 0; i < vec.n; i++) {
        ls_fb_table el;
        if (ls_fb_push(r, "%s[%u]", field, i) < 0) return -1;
        if (ls_fb_vec_table(r, &vec, i, NULL, &el) < 0) return -1;
        if (fn(r, &el, (char *)*v + i * esize) < 0) return -1;
        ls_fb_pop(r);
    }
    return 1;
}

int lsp_read_sub(ls_fb_reader *r, const ls_fb_table *t, unsigned slot, const char *field, lsp_read_fn fn, void *out,
                 bool *present)
{
    ls_fb_table sub;
    int rc = ls_fb_table_field(r, t, slot, field, &sub);
    if (rc <= 0) return rc;
    *present = true;
    if (ls_fb_push(r, "%s", field) < 0 || fn(r, &sub, out) < 0) return -1;
    ls_fb_pop(r);
    return 1;
}

#define read_string lsp_read_string
#define read_sub lsp_read_sub
#define READ_SCALARS LSP_READ_SCALARS
#define READ_TABLES LSP_READ_TABLES

#define TRY(x)               \
    do {                     \
        if ((x) < 0) return -1; \
    } while (0)

/* ---------------------------------------------------------------- tables */

static int read_allocation(ls_fb_reader *r, const ls_fb_table *t, void *out)
{
    ls_pte_allocation *a = out;
    TRY(ls_fb_u32(r, t, 0, "memory_id", 0, &a->memory_id));
    TRY(ls_fb_u32(r, t, 1, "memory_offset_low", 0, &a->memory_offset_low));
    TRY(ls_fb_u32(r, t, 2, "memory_offset_high", 0, &a->memory_offset_high));
    return 0;
}

static int read_extra_info(ls_fb_reader *r, const ls_fb_table *t, void *out)
{
    ls_pte_extra_tensor_info *x = out;
    TRY(ls_fb_u64(r, t, 0, "mutable_data_segments_idx", 0, &x->mutable_data_segments_idx));
    TRY(read_string(r, t, 1, "fully_qualified_name", &x->fully_qualified_name));
    TRY(ls_fb_i8(r, t, 2, "location", 0, &x->location));
    TRY(ls_fb_i8(r, t, 3, "device_type", 0, &x->device_type));
    TRY(ls_fb_i8(r, t, 4, "device_index", 0, &x->device_index));
    return 0;
}

static int read_tensor(ls_fb_reader *r, const ls_fb_table *t, ls_pte_tensor *x)
{
    TRY(ls_fb_i8(r, t, 0, "scalar_type", 0, &x->scalar_type));
    TRY(ls_fb_i32(r, t, 1, "storage_offset", 0, &x->storage_offset));
    TRY(READ_SCALARS(r, t, 2, "sizes", &x->sizes));
    TRY(READ_SCALARS(r, t, 3, "dim_order", &x->dim_order));
    TRY(ls_fb_bool(r, t, 4, "requires_grad", false, &x->requires_grad));
    TRY(ls_fb_u32(r, t, 5, "data_buffer_idx", 0, &x->data_buffer_idx));
    TRY(read_sub(r, t, 6, "allocation_info", read_allocation, &x->allocation_info, &x->has_allocation_info));
    TRY(ls_fb_i8(r, t, 7, "layout", 0, &x->layout));
    TRY(ls_fb_i8(r, t, 8, "shape_dynamism", 0, &x->shape_dynamism));
    TRY(read_sub(r, t, 9, "extra_tensor_info", read_extra_info, &x->extra_tensor_info, &x->has_extra_tensor_info));
    return 0;
}

static int read_value(ls_fb_reader *r, const ls_fb_table *t, void *out)
{
    ls_pte_value *x = out;
    uint8_t tag;
    ls_fb_table v;
    int rc = ls_fb_union(r, t, 0, "val", &tag, &v);
    TRY(rc);
    if (tag > LS_PTE_VAL_OPTIONAL_TENSOR_LIST)
        return ls_fb_fail(r, "val_type", t->pos, "unknown KernelTypes tag %u", tag);
    if (tag == LS_PTE_VAL_NONE) return 0; /* a value table without a tag means nothing */
    if (rc == 0)
        return ls_fb_fail(r, "val", t->pos, "val_type is %s but the value table is missing", ls_pte_val_kind_name(tag));
    x->kind = (ls_pte_val_kind)tag; /* before reading: free() looks at it for what to release */
    TRY(ls_fb_push(r, "val"));
    switch (tag) {
    case LS_PTE_VAL_NULL: break;
    case LS_PTE_VAL_INT: TRY(ls_fb_i64(r, &v, 0, "int_val", 0, &x->int_val)); break;
    case LS_PTE_VAL_BOOL: TRY(ls_fb_bool(r, &v, 0, "bool_val", false, &x->bool_val)); break;
    case LS_PTE_VAL_DOUBLE: TRY(ls_fb_f64(r, &v, 0, "double_val", 0.0, &x->double_val)); break;
    case LS_PTE_VAL_TENSOR: TRY(read_tensor(r, &v, &x->tensor)); break;
    case LS_PTE_VAL_STRING: TRY(read_string(r, &v, 0, "string_val", &x->string_val)); break;
    case LS_PTE_VAL_INT_LIST: TRY(READ_SCALARS(r, &v, 0, "items", &x->int_list)); break;
    case LS_PTE_VAL_DOUBLE_LIST: TRY(READ_SCALARS(r, &v, 0, "items", &x->double_list)); break;
    case LS_PTE_VAL_BOOL_LIST:
        TRY(READ_SCALARS(r, &v, 0, "items", &x->bool_list));
        for (uint32_t i = 0; i < x->bool_list.n; i++) x->bool_list.v[i] = x->bool_list.v[i] != 0;
        break;
    default: TRY(READ_SCALARS(r, &v, 0, "items", &x->tensor_list)); break; /* TensorList, OptionalTensorList */
    }
    ls_fb_pop(r);
    return 0;
}

static int read_instruction(ls_fb_reader *r, const ls_fb_table *t, void *out)
{
    ls_pte_instruction *x = out;
    uint8_t tag;
    ls_fb_table a;
    int rc = ls_fb_union(r, t, 0, "instr_args", &tag, &a);
    TRY(rc);
    if (tag > LS_PTE_FREE_CALL)
        return ls_fb_fail(r, "instr_args_type", t->pos, "unknown InstructionArguments tag %u", tag);
    if (tag == LS_PTE_INSTR_NONE) return 0;
    if (rc == 0)
        return ls_fb_fail(r, "instr_args", t->pos, "instr_args_type is %s but the arguments table is missing",
                          ls_pte_instr_kind_name(tag));
    TRY(ls_fb_push(r, "instr_args"));
    x->kind = (ls_pte_instr_kind)tag;
    switch (tag) {
    case LS_PTE_KERNEL_CALL:
        TRY(ls_fb_i32(r, &a, 0, "op_index", 0, &x->kernel_call.op_index));
        TRY(READ_SCALARS(r, &a, 1, "args", &x->kernel_call.args));
        break;
    case LS_PTE_DELEGATE_CALL:
        TRY(ls_fb_i32(r, &a, 0, "delegate_index", 0, &x->delegate_call.delegate_index));
        TRY(READ_SCALARS(r, &a, 1, "args", &x->delegate_call.args));
        break;
    case LS_PTE_MOVE_CALL:
        TRY(ls_fb_i32(r, &a, 0, "move_from", 0, &x->move_call.move_from));
        TRY(ls_fb_i32(r, &a, 1, "move_to", 0, &x->move_call.move_to));
        break;
    case LS_PTE_JUMP_FALSE_CALL:
        TRY(ls_fb_i32(r, &a, 0, "cond_value_index", 0, &x->jump_false_call.cond_value_index));
        TRY(ls_fb_i32(r, &a, 1, "destination_instruction", 0, &x->jump_false_call.destination_instruction));
        break;
    default: TRY(ls_fb_i32(r, &a, 0, "value_index", 0, &x->free_call.value_index)); break;
    }
    ls_fb_pop(r);
    return 0;
}

static int read_frame(ls_fb_reader *r, const ls_fb_table *t, void *out)
{
    ls_pte_frame *x = out;
    TRY(read_string(r, t, 0, "filename", &x->filename));
    TRY(ls_fb_i32(r, t, 1, "lineno", 0, &x->lineno));
    TRY(read_string(r, t, 2, "name", &x->name));
    TRY(read_string(r, t, 3, "context", &x->context));
    return 0;
}

static int read_frame_list(ls_fb_reader *r, const ls_fb_table *t, void *out)
{
    ls_pte_frame_list *x = out;
    return READ_TABLES(r, t, 0, "items", &x->items, read_frame) < 0 ? -1 : 0;
}

static int read_chain(ls_fb_reader *r, const ls_fb_table *t, void *out)
{
    ls_pte_chain *x = out;
    TRY(READ_SCALARS(r, t, 0, "inputs", &x->inputs));
    TRY(READ_SCALARS(r, t, 1, "outputs", &x->outputs));
    TRY(READ_TABLES(r, t, 2, "instructions", &x->instructions, read_instruction));
    TRY(READ_TABLES(r, t, 3, "stacktrace", &x->stacktrace, read_frame_list));
    return 0;
}

static int read_operator(ls_fb_reader *r, const ls_fb_table *t, void *out)
{
    ls_pte_operator *x = out;
    TRY(read_string(r, t, 0, "name", &x->name));
    TRY(read_string(r, t, 1, "overload", &x->overload));
    return 0;
}

static int read_compile_spec(ls_fb_reader *r, const ls_fb_table *t, void *out)
{
    ls_pte_compile_spec *x = out;
    TRY(read_string(r, t, 0, "key", &x->key));
    TRY(READ_SCALARS(r, t, 1, "value", &x->value));
    return 0;
}

static int read_processed(ls_fb_reader *r, const ls_fb_table *t, void *out)
{
    ls_pte_delegate *x = out;
    TRY(ls_fb_i8(r, t, 0, "location", 0, &x->processed.location));
    TRY(ls_fb_u32(r, t, 1, "index", 0, &x->processed.index));
    return 0;
}

static int read_delegate(ls_fb_reader *r, const ls_fb_table *t, void *out)
{
    ls_pte_delegate *x = out;
    TRY(read_string(r, t, 0, "id", &x->id));
    TRY(read_sub(r, t, 1, "processed", read_processed, x, &x->has_processed));
    TRY(READ_TABLES(r, t, 2, "compile_specs", &x->compile_specs, read_compile_spec));
    return 0;
}

static int read_buffer_device(ls_fb_reader *r, const ls_fb_table *t, void *out)
{
    ls_pte_buffer_device *x = out;
    TRY(ls_fb_i32(r, t, 0, "buffer_idx", 0, &x->buffer_idx));
    TRY(ls_fb_i8(r, t, 1, "device_type", 0, &x->device_type));
    TRY(ls_fb_i8(r, t, 2, "device_index", 0, &x->device_index));
    return 0;
}

static int read_container_meta(ls_fb_reader *r, const ls_fb_table *t, void *out)
{
    ls_pte_plan *x = out;
    TRY(read_string(r, t, 0, "encoded_inp_str", &x->container_meta_type.encoded_inp_str));
    TRY(read_string(r, t, 1, "encoded_out_str", &x->container_meta_type.encoded_out_str));
    return 0;
}

static int read_plan(ls_fb_reader *r, const ls_fb_table *t, void *out)
{
    ls_pte_plan *x = out;
    TRY(read_string(r, t, 0, "name", &x->name));
    TRY(read_sub(r, t, 1, "container_meta_type", read_container_meta, x, &x->has_container_meta_type));
    TRY(READ_TABLES(r, t, 2, "values", &x->values, read_value));
    TRY(READ_SCALARS(r, t, 3, "inputs", &x->inputs));
    TRY(READ_SCALARS(r, t, 4, "outputs", &x->outputs));
    TRY(READ_TABLES(r, t, 5, "chains", &x->chains, read_chain));
    TRY(READ_TABLES(r, t, 6, "operators", &x->operators, read_operator));
    TRY(READ_TABLES(r, t, 7, "delegates", &x->delegates, read_delegate));
    TRY(READ_SCALARS(r, t, 8, "non_const_buffer_sizes", &x->non_const_buffer_sizes));
    TRY(READ_TABLES(r, t, 9, "non_const_buffer_device", &x->non_const_buffer_device, read_buffer_device));
    return 0;
}

/* Buffer.storage and BackendDelegateInlineData.data: both a [ubyte] in slot 0. */
static int read_buffer(ls_fb_reader *r, const ls_fb_table *t, void *out)
{
    ls_pte_buffer *x = out;
    return READ_SCALARS(r, t, 0, "storage", &x->storage) < 0 ? -1 : 0;
}

static int read_inline_data(ls_fb_reader *r, const ls_fb_table *t, void *out)
{
    ls_pte_buffer *x = out;
    return READ_SCALARS(r, t, 0, "data", &x->storage) < 0 ? -1 : 0;
}

int lsp_read_data_segment(ls_fb_reader *r, const ls_fb_table *t, void *out)
{
    ls_pte_data_segment *x = out;
    TRY(ls_fb_u64(r, t, 0, "offset", 0, &x->offset));
    TRY(ls_fb_u64(r, t, 1, "size", 0, &x->size));
    return 0;
}

static int read_subsegments(ls_fb_reader *r, const ls_fb_table *t, void *out)
{
    ls_pte_subsegments *x = out;
    TRY(ls_fb_u32(r, t, 0, "segment_index", 0, &x->segment_index));
    TRY(READ_SCALARS(r, t, 1, "offsets", &x->offsets));
    return 0;
}

static int read_named_data(ls_fb_reader *r, const ls_fb_table *t, void *out)
{
    ls_pte_named_data *x = out;
    TRY(read_string(r, t, 0, "key", &x->key));
    TRY(ls_fb_u32(r, t, 1, "segment_index", 0, &x->segment_index));
    return 0;
}

static int read_program(ls_fb_reader *r, const ls_fb_table *t, ls_pte *x)
{
    TRY(ls_fb_u32(r, t, 0, "version", 0, &x->version));
    TRY(READ_TABLES(r, t, 1, "execution_plan", &x->execution_plan, read_plan));
    TRY(READ_TABLES(r, t, 2, "constant_buffer", &x->constant_buffer, read_buffer));
    TRY(READ_TABLES(r, t, 3, "backend_delegate_data", &x->backend_delegate_data, read_inline_data));
    TRY(READ_TABLES(r, t, 4, "segments", &x->segments, lsp_read_data_segment));
    TRY(read_sub(r, t, 5, "constant_segment", read_subsegments, &x->constant_segment, &x->has_constant_segment));
    TRY(READ_TABLES(r, t, 6, "mutable_data_segments", &x->mutable_data_segments, read_subsegments));
    TRY(READ_TABLES(r, t, 7, "named_data", &x->named_data, read_named_data));
    return 0;
}

/* ---------------------------------------------------------------- the file */

int lsp_copy_segments(const uint8_t *data, uint64_t base, uint64_t end, bool have_base,
                      const ls_pte_data_segments *segs, ls_pte_blob **blobs, uint32_t *nblobs, const char *name,
                      ls_error *err)
{
    *nblobs = segs->n;
    *blobs = segs->n ? ls_calloc(segs->n, sizeof **blobs) : NULL;
    uint64_t prev_end = 0;
    for (uint32_t i = 0; i < segs->n; i++) {
        const ls_pte_data_segment *s = &segs->v[i];
        ls_pte_blob *b = &(*blobs)[i];
        if (s->size == 0) continue;
        if (!have_base)
            return ls_fail(err, "%s: segments[%u]: %llu bytes of segment data, but the file's header gives no "
                           "segment base offset (where segments start)", name, i, (unsigned long long)s->size);
        uint64_t seg_end;
        if (__builtin_add_overflow(s->offset, s->size, &seg_end) || __builtin_add_overflow(seg_end, base, &seg_end) ||
            seg_end > end)
            return ls_fail(err, "%s: segments[%u]: offset %llu + size %llu runs past the end of the segment data "
                           "(%llu bytes from byte %llu)", name, i, (unsigned long long)s->offset,
                           (unsigned long long)s->size, (unsigned long long)(end - base), (unsigned long long)base);
        b->n = s->size;
        b->v = ls_malloc((size_t)s->size);
        memcpy(b->v, data + base + s->offset, (size_t)s->size);
        /* A segment placed further than 128-byte packing needs asked for a larger alignment
         * (named data can); remember it so a rewrite lays the file out the same way. */
        uint64_t packed = (prev_end + 127) & ~(uint64_t)127;
        if (s->offset > packed) {
            uint64_t a = s->offset & (~s->offset + 1);
            if (a > 128 && a <= 65536 && ((prev_end + a - 1) & ~(a - 1)) == s->offset) b->alignment = (uint32_t)a;
        }
        prev_end = s->offset + s->size;
    }
    return 0;
}

static int parse_extended_header(const uint8_t *data, size_t size, ls_pte *p, const char *name, ls_error *err)
{
    if (size < 16 || memcmp(data + 8, "eh00", 4) != 0) return 0;
    uint32_t len = ls_fb_le32(data + 12);
    if (len < 24) return ls_fail(err, "%s: extended header: length %u is less than the 24 bytes it needs", name, len);
    if ((uint64_t)len + 8 > size)
        return ls_fail(err, "%s: extended header: file ends inside it (%zu bytes)", name, size);
    p->has_extended_header = true;
    p->program_size = ls_fb_le64(data + 16);
    p->segment_base_offset = ls_fb_le64(data + 24);
    p->segment_data_size = len >= 32 ? ls_fb_le64(data + 32) : 0;
    if (p->program_size < (uint64_t)len + 8 || p->program_size > size)
        return ls_fail(err, "%s: extended header: program_size %llu is outside the %zu-byte file", name,
                       (unsigned long long)p->program_size, size);
    if (p->segment_base_offset != 0 &&
        (p->segment_base_offset < p->program_size || p->segment_base_offset > size))
        return ls_fail(err, "%s: extended header: segment_base_offset %llu is not between program_size %llu and the "
                       "end of the %zu-byte file", name, (unsigned long long)p->segment_base_offset,
                       (unsigned long long)p->program_size, size);
    uint64_t seg_end;
    if (p->segment_data_size > 0 &&
        (__builtin_add_overflow(p->segment_base_offset, p->segment_data_size, &seg_end) || seg_end > size))
        return ls_fail(err, "%s: extended header: segment data (%llu bytes from byte %llu) runs past the end of the "
                       "%zu-byte file", name, (unsigned long long)p->segment_data_size,
                       (unsigned long long)p->segment_base_offset, size);
    return 0;
}

static int read_bytes(const uint8_t *data, size_t size, const char *name, bool check, ls_pte *pte, ls_error *err)
{
    memset(pte, 0, sizeof *pte);
    if (!name) name = "program";
    if (size < 8 || memcmp(data + 4, "ET12", 4) != 0) {
        if (size >= 8 && data[4] == 'E' && data[5] == 'T' && isalnum(data[6]) && isalnum(data[7]))
            return ls_fail(err, "%s: incompatible program version: identifier \"%.4s\", this reader knows \"ET12\"",
                           name, (const char *)data + 4);
        return ls_fail(err, "%s: not an ExecuTorch program (no \"ET12\" identifier at byte 4)", name);
    }
    ls_pte p = {0};
    p.name = ls_strdup(name);
    if (parse_extended_header(data, size, &p, name, err) < 0) goto fail;
    size_t program_size = p.has_extended_header ? (size_t)p.program_size : size;

    ls_fb_reader r;
    ls_fb_table root;
    if (ls_fb_reader_init(&r, data, program_size, name, err) < 0) goto fail;
    if (ls_fb_root(&r, "ET12", &root) < 0 || read_program(&r, &root, &p) < 0) goto fail;
    uint64_t seg_end = p.has_extended_header && p.segment_data_size > 0
                           ? p.segment_base_offset + p.segment_data_size : (uint64_t)size;
    if (lsp_copy_segments(data, p.segment_base_offset, seg_end, p.segment_base_offset != 0, &p.segments,
                          &p.segment_data, &p.n_segment_data, name, err) < 0)
        goto fail;
    if (check && ls_pte_check(&p, name, err) < 0) goto fail;
    *pte = p;
    return 0;
fail:
    ls_pte_free(&p);
    return -1;
}

int ls_pte_read_bytes(const uint8_t *data, size_t size, const char *name, ls_pte *pte, ls_error *err)
{
    return read_bytes(data, size, name, true, pte, err);
}

int ls_pte_read_bytes_unchecked(const uint8_t *data, size_t size, const char *name, ls_pte *pte, ls_error *err)
{
    memset(pte, 0, sizeof *pte);
    return read_bytes(data, size, name, false, pte, err);
}

static int read_file(const char *path, bool check, ls_pte *pte, ls_error *err)
{
    memset(pte, 0, sizeof *pte);
    uint8_t *data;
    size_t size;
    if (ls_read_file(path, PTE_READ_LIMIT, &data, &size, err) < 0) return -1;
    int rc = read_bytes(data, size, path, check, pte, err);
    free(data);
    return rc;
}

int ls_pte_read_file(const char *path, ls_pte *pte, ls_error *err)
{
    return read_file(path, true, pte, err);
}

int ls_pte_read_file_unchecked(const char *path, ls_pte *pte, ls_error *err)
{
    return read_file(path, false, pte, err);
}

/* ---------------------------------------------------------------- freeing */

static void free_tensor(ls_pte_tensor *t)
{
    free(t->sizes.v);
    free(t->dim_order.v);
    free(t->extra_tensor_info.fully_qualified_name);
}

static void free_value(ls_pte_value *v)
{
    switch (v->kind) {
    case LS_PTE_VAL_TENSOR: free_tensor(&v->tensor); break;
    case LS_PTE_VAL_STRING: free(v->string_val); break;
    case LS_PTE_VAL_INT_LIST: free(v->int_list.v); break;
    case LS_PTE_VAL_DOUBLE_LIST: free(v->double_list.v); break;
    case LS_PTE_VAL_BOOL_LIST: free(v->bool_list.v); break;
    case LS_PTE_VAL_TENSOR_LIST:
    case LS_PTE_VAL_OPTIONAL_TENSOR_LIST: free(v->tensor_list.v); break;
    default: break;
    }
}

static void free_chain(ls_pte_chain *c)
{
    free(c->inputs.v);
    free(c->outputs.v);
    for (uint32_t i = 0; i < c->instructions.n; i++) {
        ls_pte_instruction *in = &c->instructions.v[i];
        if (in->kind == LS_PTE_KERNEL_CALL) free(in->kernel_call.args.v);
        if (in->kind == LS_PTE_DELEGATE_CALL) free(in->delegate_call.args.v);
    }
    free(c->instructions.v);
    for (uint32_t i = 0; i < c->stacktrace.n; i++) {
        ls_pte_frames *f = &c->stacktrace.v[i].items;
        for (uint32_t k = 0; k < f->n; k++) {
            free(f->v[k].filename);
            free(f->v[k].name);
            free(f->v[k].context);
        }
        free(f->v);
    }
    free(c->stacktrace.v);
}

static void free_plan(ls_pte_plan *p)
{
    free(p->name);
    free(p->container_meta_type.encoded_inp_str);
    free(p->container_meta_type.encoded_out_str);
    for (uint32_t i = 0; i < p->values.n; i++) free_value(&p->values.v[i]);
    free(p->values.v);
    free(p->inputs.v);
    free(p->outputs.v);
    for (uint32_t i = 0; i < p->chains.n; i++) free_chain(&p->chains.v[i]);
    free(p->chains.v);
    for (uint32_t i = 0; i < p->operators.n; i++) {
        free(p->operators.v[i].name);
        free(p->operators.v[i].overload);
    }
    free(p->operators.v);
    for (uint32_t i = 0; i < p->delegates.n; i++) {
        ls_pte_delegate *d = &p->delegates.v[i];
        free(d->id);
        for (uint32_t k = 0; k < d->compile_specs.n; k++) {
            free(d->compile_specs.v[k].key);
            free(d->compile_specs.v[k].value.v);
        }
        free(d->compile_specs.v);
    }
    free(p->delegates.v);
    free(p->non_const_buffer_sizes.v);
    free(p->non_const_buffer_device.v);
}

static void free_buffers(ls_pte_buffers *b)
{
    for (uint32_t i = 0; i < b->n; i++) free(b->v[i].storage.v);
    free(b->v);
}

void ls_pte_blob_release(ls_pte_blob *b)
{
    if (b->owner) ls_blob_unref(b->owner);
    else free(b->v);
    b->v = NULL;
    b->owner = NULL;
    b->n = 0;
}

void ls_pte_free(ls_pte *pte)
{
    if (!pte) return;
    free(pte->name);
    for (uint32_t i = 0; i < pte->execution_plan.n; i++) free_plan(&pte->execution_plan.v[i]);
    free(pte->execution_plan.v);
    free_buffers(&pte->constant_buffer);
    free_buffers(&pte->backend_delegate_data);
    free(pte->segments.v);
    free(pte->constant_segment.offsets.v);
    for (uint32_t i = 0; i < pte->mutable_data_segments.n; i++) free(pte->mutable_data_segments.v[i].offsets.v);
    free(pte->mutable_data_segments.v);
    for (uint32_t i = 0; i < pte->named_data.n; i++) free(pte->named_data.v[i].key);
    free(pte->named_data.v);
    for (uint32_t i = 0; i < pte->n_segment_data; i++) ls_pte_blob_release(&pte->segment_data[i]);
    free(pte->segment_data);
    memset(pte, 0, sizeof *pte);
}
