/* Writing .pte files the way ExecuTorch's serializer lays them out: the Program flatbuffer,
 * then, when any segment has bytes, a 32-byte "eh00" extended header inserted after the file
 * identifier (root offset bumped past it), padding to 128 bytes, and the segments, each
 * starting at a multiple of lcm(128, its alignment) from the segment base. */
#include "pte.h"

#include <stdlib.h>
#include <string.h>

#include "flatbuf.h"
#include "pte_internal.h"

#define SEGMENT_ALIGNMENT 128
#define EH_LENGTH 32 /* magic, length, program_size, segment_base_offset, segment_data_size */
#define TENSOR_ALIGNMENT 16 /* force_align of Buffer.storage and BackendDelegateInlineData.data */

static ls_fb_ref str_ref(ls_fbb *b, const char *s)
{
    return s ? ls_fbb_string(b, s, strlen(s)) : 0;
}

/* A scalar vector when present (or non-empty), else 0 (left out). */
#define VEC_REF(b, vec, align) \
    (((vec).present || (vec).n) ? ls_fbb_vector(b, (vec).v, (vec).n, sizeof *(vec).v, align) : 0)

typedef ls_fb_ref (*build_fn)(ls_fbb *b, const void *elem);

static ls_fb_ref tables_ref(ls_fbb *b, const void *v, uint32_t n, bool present, size_t esize, build_fn fn)
{
    if (!present && !n) return 0;
    ls_fb_ref *refs = n ? ls_malloc(n * sizeof *refs) : NULL;
    for (uint32_t i = 0; i < n; i++) refs[i] = fn(b, (const char *)v + i * esize);
    ls_fb_ref r = ls_fbb_vector_refs(b, refs, n);
    free(refs);
    return r;
}
#define TABLES_REF(b, vec, fn) tables_ref(b, (vec).v, (vec).n, (vec).present, sizeof *(vec).v, fn)

/* ---------------------------------------------------------------- tables */

static ls_fb_ref build_tensor(ls_fbb *b, const ls_pte_tensor *t)
{
    ls_fb_ref sizes = VEC_REF(b, t->sizes, 4);
    ls_fb_ref dim_order = VEC_REF(b, t->dim_order, 1);
    ls_fb_ref alloc = 0, extra = 0;
    if (t->has_allocation_info) {
        ls_fbb_table_start(b);
        ls_fbb_add_u32(b, 0, t->allocation_info.memory_id, 0);
        ls_fbb_add_u32(b, 1, t->allocation_info.memory_offset_low, 0);
        ls_fbb_add_u32(b, 2, t->allocation_info.memory_offset_high, 0);
        alloc = ls_fbb_table_end(b);
    }
    if (t->has_extra_tensor_info) {
        const ls_pte_extra_tensor_info *x = &t->extra_tensor_info;
        ls_fb_ref fqn = str_ref(b, x->fully_qualified_name);
        ls_fbb_table_start(b);
        ls_fbb_add_u64(b, 0, x->mutable_data_segments_idx, 0);
        ls_fbb_add_ref(b, 1, fqn);
        ls_fbb_add_i8(b, 2, x->location, 0);
        ls_fbb_add_i8(b, 3, x->device_type, LS_PTE_DEVICE_CPU);
        ls_fbb_add_i8(b, 4, x->device_index, 0);
        extra = ls_fbb_table_end(b);
    }
    ls_fbb_table_start(b);
    ls_fbb_add_ref(b, 2, sizes);
    ls_fbb_add_ref(b, 3, dim_order);
    ls_fbb_add_ref(b, 6, alloc);
    ls_fbb_add_ref(b, 9, extra);
    ls_fbb_add_i32(b, 1, t->storage_offset, 0);
    ls_fbb_add_u32(b, 5, t->data_buffer_idx, 0);
    ls_fbb_add_i8(b, 0, t->scalar_type, 0);
    ls_fbb_add_bool(b, 4, t->requires_grad, false);
    ls_fbb_add_i8(b, 7, t->layout, 0);
    ls_fbb_add_i8(b, 8, t->shape_dynamism, 0);
    return ls_fbb_table_end(b);
}

static ls_fb_ref build_value(ls_fbb *b, const void *elem)
{
    const ls_pte_value *v = elem;
    ls_fb_ref val = 0, items = 0;
    switch (v->kind) {
    case LS_PTE_VAL_TENSOR: val = build_tensor(b, &v->tensor); break;
    case LS_PTE_VAL_STRING: items = str_ref(b, v->string_val); break;
    case LS_PTE_VAL_INT_LIST: items = VEC_REF(b, v->int_list, 8); break;
    case LS_PTE_VAL_DOUBLE_LIST: items = VEC_REF(b, v->double_list, 8); break;
    case LS_PTE_VAL_BOOL_LIST: items = VEC_REF(b, v->bool_list, 1); break;
    case LS_PTE_VAL_TENSOR_LIST:
    case LS_PTE_VAL_OPTIONAL_TENSOR_LIST: items = VEC_REF(b, v->tensor_list, 4); break;
    default: break;
    }
    if (v->kind != LS_PTE_VAL_NONE && v->kind != LS_PTE_VAL_TENSOR) {
        ls_fbb_table_start(b);
        switch (v->kind) {
        case LS_PTE_VAL_INT: ls_fbb_add_i64(b, 0, v->int_val, 0); break;
        case LS_PTE_VAL_BOOL: ls_fbb_add_bool(b, 0, v->bool_val, false); break;
        case LS_PTE_VAL_DOUBLE: ls_fbb_add_f64(b, 0, v->double_val, 0.0); break;
        default: ls_fbb_add_ref(b, 0, items); break; /* Null has no fields: items is 0 */
        }
        val = ls_fbb_table_end(b);
    }
    ls_fbb_table_start(b);
    ls_fbb_add_ref(b, 1, val);
    ls_fbb_add_u8(b, 0, (uint8_t)v->kind, 0);
    return ls_fbb_table_end(b);
}

static ls_fb_ref build_instruction(ls_fbb *b, const void *elem)
{
    const ls_pte_instruction *in = elem;
    ls_fb_ref args = 0, val = 0;
    if (in->kind == LS_PTE_KERNEL_CALL) args = VEC_REF(b, in->kernel_call.args, 4);
    if (in->kind == LS_PTE_DELEGATE_CALL) args = VEC_REF(b, in->delegate_call.args, 4);
    if (in->kind != LS_PTE_INSTR_NONE) {
        ls_fbb_table_start(b);
        switch (in->kind) {
        case LS_PTE_KERNEL_CALL:
            ls_fbb_add_ref(b, 1, args);
            ls_fbb_add_i32(b, 0, in->kernel_call.op_index, 0);
            break;
        case LS_PTE_DELEGATE_CALL:
            ls_fbb_add_ref(b, 1, args);
            ls_fbb_add_i32(b, 0, in->delegate_call.delegate_index, 0);
            break;
        case LS_PTE_MOVE_CALL:
            ls_fbb_add_i32(b, 0, in->move_call.move_from, 0);
            ls_fbb_add_i32(b, 1, in->move_call.move_to, 0);
            break;
        case LS_PTE_JUMP_FALSE_CALL:
            ls_fbb_add_i32(b, 0, in->jump_false_call.cond_value_index, 0);
            ls_fbb_add_i32(b, 1, in->jump_false_call.destination_instruction, 0);
            break;
        default: ls_fbb_add_i32(b, 0, in->free_call.value_index, 0); break;
        }
        val = ls_fbb_table_end(b);
    }
    ls_fbb_table_start(b);
    ls_fbb_add_ref(b, 1, val);
    ls_fbb_add_u8(b, 0, (uint8_t)in->kind, 0);
    return ls_fbb_table_end(b);
}

static ls_fb_ref build_frame(ls_fbb *b, const void *elem)
{
    const ls_pte_frame *f = elem;
    ls_fb_ref filename = str_ref(b, f->filename), name = str_ref(b, f->name), context = str_ref(b, f->context);
    ls_fbb_table_start(b);
    ls_fbb_add_ref(b, 0, filename);
    ls_fbb_add_i32(b, 1, f->lineno, 0);
    ls_fbb_add_ref(b, 2, name);
    ls_fbb_add_ref(b, 3, context);
    return ls_fbb_table_end(b);
}

static ls_fb_ref build_frame_list(ls_fbb *b, const void *elem)
{
    const ls_pte_frame_list *fl = elem;
    ls_fb_ref items = TABLES_REF(b, fl->items, build_frame);
    ls_fbb_table_start(b);
    ls_fbb_add_ref(b, 0, items);
    return ls_fbb_table_end(b);
}

static ls_fb_ref build_chain(ls_fbb *b, const void *elem)
{
    const ls_pte_chain *c = elem;
    ls_fb_ref inputs = VEC_REF(b, c->inputs, 4), outputs = VEC_REF(b, c->outputs, 4);
    ls_fb_ref instructions = TABLES_REF(b, c->instructions, build_instruction);
    ls_fb_ref stacktrace = TABLES_REF(b, c->stacktrace, build_frame_list);
    ls_fbb_table_start(b);
    ls_fbb_add_ref(b, 0, inputs);
    ls_fbb_add_ref(b, 1, outputs);
    ls_fbb_add_ref(b, 2, instructions);
    ls_fbb_add_ref(b, 3, stacktrace);
    return ls_fbb_table_end(b);
}

static ls_fb_ref build_operator(ls_fbb *b, const void *elem)
{
    const ls_pte_operator *op = elem;
    ls_fb_ref name = str_ref(b, op->name), overload = str_ref(b, op->overload);
    ls_fbb_table_start(b);
    ls_fbb_add_ref(b, 0, name);
    ls_fbb_add_ref(b, 1, overload);
    return ls_fbb_table_end(b);
}

static ls_fb_ref build_compile_spec(ls_fbb *b, const void *elem)
{
    const ls_pte_compile_spec *cs = elem;
    ls_fb_ref k = str_ref(b, cs->key), v = VEC_REF(b, cs->value, 1);
    ls_fbb_table_start(b);
    ls_fbb_add_ref(b, 0, k);
    ls_fbb_add_ref(b, 1, v);
    return ls_fbb_table_end(b);
}

static ls_fb_ref build_delegate(ls_fbb *b, const void *elem)
{
    const ls_pte_delegate *d = elem;
    ls_fb_ref id = str_ref(b, d->id), processed = 0;
    if (d->has_processed) {
        ls_fbb_table_start(b);
        ls_fbb_add_u32(b, 1, d->processed.index, 0);
        ls_fbb_add_i8(b, 0, d->processed.location, 0);
        processed = ls_fbb_table_end(b);
    }
    ls_fb_ref specs = TABLES_REF(b, d->compile_specs, build_compile_spec);
    ls_fbb_table_start(b);
    ls_fbb_add_ref(b, 0, id);
    ls_fbb_add_ref(b, 1, processed);
    ls_fbb_add_ref(b, 2, specs);
    return ls_fbb_table_end(b);
}

static ls_fb_ref build_buffer_device(ls_fbb *b, const void *elem)
{
    const ls_pte_buffer_device *d = elem;
    ls_fbb_table_start(b);
    ls_fbb_add_i32(b, 0, d->buffer_idx, 0);
    ls_fbb_add_i8(b, 1, d->device_type, LS_PTE_DEVICE_CPU);
    ls_fbb_add_i8(b, 2, d->device_index, 0);
    return ls_fbb_table_end(b);
}

static ls_fb_ref build_plan(ls_fbb *b, const void *elem)
{
    const ls_pte_plan *p = elem;
    ls_fb_ref name = str_ref(b, p->name), meta = 0;
    if (p->has_container_meta_type) {
        ls_fb_ref in = str_ref(b, p->container_meta_type.encoded_inp_str);
        ls_fb_ref out = str_ref(b, p->container_meta_type.encoded_out_str);
        ls_fbb_table_start(b);
        ls_fbb_add_ref(b, 0, in);
        ls_fbb_add_ref(b, 1, out);
        meta = ls_fbb_table_end(b);
    }
    ls_fb_ref values = TABLES_REF(b, p->values, build_value);
    ls_fb_ref inputs = VEC_REF(b, p->inputs, 4), outputs = VEC_REF(b, p->outputs, 4);
    ls_fb_ref chains = TABLES_REF(b, p->chains, build_chain);
    ls_fb_ref operators = TABLES_REF(b, p->operators, build_operator);
    ls_fb_ref delegates = TABLES_REF(b, p->delegates, build_delegate);
    ls_fb_ref sizes = VEC_REF(b, p->non_const_buffer_sizes, 8);
    ls_fb_ref devices = TABLES_REF(b, p->non_const_buffer_device, build_buffer_device);
    ls_fbb_table_start(b);
    ls_fbb_add_ref(b, 0, name);
    ls_fbb_add_ref(b, 1, meta);
    ls_fbb_add_ref(b, 2, values);
    ls_fbb_add_ref(b, 3, inputs);
    ls_fbb_add_ref(b, 4, outputs);
    ls_fbb_add_ref(b, 5, chains);
    ls_fbb_add_ref(b, 6, operators);
    ls_fbb_add_ref(b, 7, delegates);
    ls_fbb_add_ref(b, 8, sizes);
    ls_fbb_add_ref(b, 9, devices);
    return ls_fbb_table_end(b);
}

static ls_fb_ref build_buffer(ls_fbb *b, const void *elem)
{
    const ls_pte_buffer *buf = elem;
    ls_fb_ref data = VEC_REF(b, buf->storage, TENSOR_ALIGNMENT);
    ls_fbb_table_start(b);
    ls_fbb_add_ref(b, 0, data);
    return ls_fbb_table_end(b);
}

static ls_fb_ref build_data_segment(ls_fbb *b, const void *elem)
{
    const ls_pte_data_segment *s = elem;
    ls_fbb_table_start(b);
    ls_fbb_add_u64(b, 0, s->offset, 0);
    ls_fbb_add_u64(b, 1, s->size, 0);
    return ls_fbb_table_end(b);
}

static ls_fb_ref build_subsegments(ls_fbb *b, const void *elem)
{
    const ls_pte_subsegments *s = elem;
    ls_fb_ref offsets = VEC_REF(b, s->offsets, 8);
    ls_fbb_table_start(b);
    ls_fbb_add_ref(b, 1, offsets);
    ls_fbb_add_u32(b, 0, s->segment_index, 0);
    return ls_fbb_table_end(b);
}

static ls_fb_ref build_named_data(ls_fbb *b, const void *elem)
{
    const ls_pte_named_data *nd = elem;
    ls_fb_ref k = str_ref(b, nd->key);
    ls_fbb_table_start(b);
    ls_fbb_add_ref(b, 0, k);
    ls_fbb_add_u32(b, 1, nd->segment_index, 0);
    return ls_fbb_table_end(b);
}

/* The Program flatbuffer, with `segments` standing in for the model's segment table. */
static uint8_t *build_program(const ls_pte *p, const ls_pte_data_segments *segments, size_t *size, size_t *minalign)
{
    ls_fbb b;
    ls_fbb_init(&b);
    ls_fb_ref plans = TABLES_REF(&b, p->execution_plan, build_plan);
    ls_fb_ref constants = TABLES_REF(&b, p->constant_buffer, build_buffer);
    ls_fb_ref inline_data = TABLES_REF(&b, p->backend_delegate_data, build_buffer);
    ls_fb_ref segs = TABLES_REF(&b, *segments, build_data_segment);
    ls_fb_ref constant_segment = p->has_constant_segment ? build_subsegments(&b, &p->constant_segment) : 0;
    ls_fb_ref mutable_segments = TABLES_REF(&b, p->mutable_data_segments, build_subsegments);
    ls_fb_ref named = TABLES_REF(&b, p->named_data, build_named_data);
    ls_fbb_table_start(&b);
    ls_fbb_add_u32(&b, 0, p->version, 0);
    ls_fbb_add_ref(&b, 1, plans);
    ls_fbb_add_ref(&b, 2, constants);
    ls_fbb_add_ref(&b, 3, inline_data);
    ls_fbb_add_ref(&b, 4, segs);
    ls_fbb_add_ref(&b, 5, constant_segment);
    ls_fbb_add_ref(&b, 6, mutable_segments);
    ls_fbb_add_ref(&b, 7, named);
    ls_fb_ref root = ls_fbb_table_end(&b);
    *minalign = b.minalign;
    return ls_fbb_finish(&b, root, "ET12", size);
}

/* ---------------------------------------------------------------- the file */

static uint64_t align_up(uint64_t x, uint64_t a)
{
    return (x + a - 1) / a * a;
}

static uint64_t lcm(uint64_t a, uint64_t b)
{
    uint64_t x = a, y = b;
    while (y) {
        uint64_t t = x % y;
        x = y;
        y = t;
    }
    return a / x * b;
}

/* The model's own segment offsets when they are a layout of its segments (in order, apart,
 * each of its size and at its blob's alignment): a file read and written again keeps them, so
 * its segments[] decode the same. Otherwise the writer lays them out afresh. */
static bool layout_kept(const ls_pte *pte)
{
    uint64_t end = 0;
    for (uint32_t i = 0; i < pte->segments.n; i++) {
        const ls_pte_data_segment *s = &pte->segments.v[i];
        uint32_t a = pte->segment_data[i].alignment;
        if (s->size != pte->segment_data[i].n || s->offset < end || (a && s->offset % a)) return false;
        end = s->offset + s->size;
    }
    return pte->segments.n > 0;
}

/* The alignment of the segment base of a file read: that of its segments (the largest power of two, up
 * to 64 KiB, dividing every offset that is not 0: what the file's writer aligned them to, its
 * segment_alignment), at least ExecuTorch's 128. */
uint64_t ls_pte_segment_alignment(const ls_pte *pte)
{
    if (!pte->has_extended_header) return SEGMENT_ALIGNMENT; /* emitted here, not read */
    uint64_t a = (uint64_t)1 << 16;
    bool any = false;
    for (uint32_t i = 0; i < pte->segments.n; i++) {
        uint64_t o = pte->segments.v[i].offset;
        if (!o) continue;
        any = true;
        while (a > SEGMENT_ALIGNMENT && o % a) a /= 2;
    }
    return any ? a : SEGMENT_ALIGNMENT;
}

static int write_pte(const ls_pte *pte, bool check, uint8_t **bytes, size_t *size, ls_error *err)
{
    if (bytes) *bytes = NULL;
    *size = 0;
    const char *name = pte->name ? pte->name : "program";
    uint32_t nseg = pte->segments.n;
    bool have_blobs = pte->n_segment_data == nseg;
    if (!have_blobs) {
        for (uint32_t i = 0; i < nseg; i++)
            if (pte->segments.v[i].size)
                return ls_fail(err, "%s: segments[%u] has %llu bytes but the model holds no segment data", name, i,
                               (unsigned long long)pte->segments.v[i].size);
        if (pte->n_segment_data)
            return ls_fail(err, "%s: %u segment blobs for %u segments", name, pte->n_segment_data, nseg);
    }
    if (check && ls_pte_check(pte, name, err) < 0) return -1;

    /* Lay the segments out: offsets relative to the segment base, each aligned. */
    ls_pte_data_segments segs = {NULL, nseg, pte->segments.present};
    segs.v = nseg ? ls_calloc(nseg, sizeof *segs.v) : NULL;
    uint64_t seg_bytes = 0;
    bool kept = have_blobs && layout_kept(pte);
    for (uint32_t i = 0; i < nseg; i++) {
        uint32_t a = have_blobs ? pte->segment_data[i].alignment : 0;
        segs.v[i].offset = kept ? pte->segments.v[i].offset : align_up(seg_bytes, lcm(SEGMENT_ALIGNMENT, a ? a : 1));
        segs.v[i].size = have_blobs ? pte->segment_data[i].n : 0;
        seg_bytes = segs.v[i].offset + segs.v[i].size;
    }

    size_t fb_size, minalign;
    uint8_t *fb = build_program(pte, &segs, &fb_size, &minalign);
    if (!fb) {
        free(segs.v);
        return ls_fail(err, "%s: the program is larger than the 2 GiB a flatbuffer can hold", name);
    }
    if (seg_bytes == 0) { /* no segment data: a plain flatbuffer, as ExecuTorch writes it */
        free(segs.v);
        if (bytes) *bytes = fb;
        else free(fb);
        *size = fb_size;
        return 0;
    }

    /* Header padded to the flatbuffer's largest alignment so everything after it stays aligned. */
    uint64_t header = align_up(EH_LENGTH, minalign > 16 ? minalign : 16);
    uint64_t program_size = header + fb_size;
    uint64_t base = align_up(program_size, kept ? ls_pte_segment_alignment(pte) : SEGMENT_ALIGNMENT);
    uint64_t total = base + seg_bytes;
    if (total > SIZE_MAX / 2) {
        free(segs.v);
        free(fb);
        return ls_fail(err, "%s: %llu bytes is too large to write", name, (unsigned long long)total);
    }
    if (!bytes) { /* the size only: the segments are not copied */
        free(segs.v);
        free(fb);
        *size = (size_t)total;
        return 0;
    }
    uint8_t *out = ls_calloc(1, (size_t)total);
    ls_le_put(out, ls_fb_le32(fb) + header, 4); /* the root table moved by the header's size */
    memcpy(out + 4, fb + 4, 4);
    memcpy(out + 8, "eh00", 4);
    ls_le_put(out + 12, EH_LENGTH, 4);
    ls_le_put(out + 16, program_size, 8);
    ls_le_put(out + 24, base, 8);
    ls_le_put(out + 32, seg_bytes, 8);
    memcpy(out + 8 + header, fb + 8, fb_size - 8);
    for (uint32_t i = 0; i < nseg; i++)
        if (segs.v[i].size) memcpy(out + base + segs.v[i].offset, pte->segment_data[i].v, (size_t)segs.v[i].size);
    free(segs.v);
    free(fb);
    *bytes = out;
    *size = (size_t)total;
    return 0;
}

int ls_pte_file_size(const ls_pte *pte, size_t *size, ls_error *err)
{
    return write_pte(pte, true, NULL, size, err);
}

int ls_pte_write(const ls_pte *pte, uint8_t **bytes, size_t *size, ls_error *err)
{
    return write_pte(pte, true, bytes, size, err);
}

int lsp_pte_write_unchecked(const ls_pte *pte, uint8_t **bytes, size_t *size, ls_error *err)
{
    return write_pte(pte, false, bytes, size, err);
}

int ls_pte_write_file(const ls_pte *pte, const char *path, ls_error *err)
{
    uint8_t *bytes;
    size_t size;
    if (ls_pte_write(pte, &bytes, &size, err) < 0) return -1;
    int rc = ls_write_file_atomic(path, bytes, size, err);
    free(bytes);
    return rc;
}
