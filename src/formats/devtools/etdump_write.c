/* Writing an ETDump (etdump.h) with lowerscope's flatbuffer builder: the same tables and slots
 * the reader follows (etdump.c), size-prefixed with identifier "ED00" as flatcc finishes the
 * runtime's buffer (flatbuffers_buffer_start with the identifier, etdump_ETDump_start_as_root_with_size). */
#include <stdlib.h>
#include <string.h>

#include "etdump.h"
#include "flatbuf.h"

static ls_fb_ref str(ls_fbb *b, const char *s)
{
    return s ? ls_fbb_string(b, s, strlen(s)) : 0;
}

static ls_fb_ref tensor(ls_fbb *b, const ls_etd_tensor *t)
{
    ls_fb_ref sizes = ls_fbb_vector(b, t->sizes, t->ndim, 8, 8);
    ls_fb_ref strides = ls_fbb_vector(b, t->strides, t->nstrides, 8, 8);
    ls_fbb_table_start(b);
    ls_fbb_add_i8(b, 0, t->scalar_type, 0);
    ls_fbb_add_ref(b, 1, sizes);
    ls_fbb_add_ref(b, 2, strides);
    ls_fbb_add_i64(b, 3, t->offset, 0);
    return ls_fbb_table_end(b);
}

static ls_fb_ref box_u64(ls_fbb *b, uint64_t bits, unsigned size)
{
    ls_fbb_table_start(b);
    if (size == 8) ls_fbb_add_u64(b, 0, bits, 0);
    else if (size == 4) ls_fbb_add_u32(b, 0, (uint32_t)bits, 0);
    else ls_fbb_add_u8(b, 0, (uint8_t)bits, 0);
    return ls_fbb_table_end(b);
}

static ls_fb_ref value(ls_fbb *b, const ls_etd_value *v)
{
    ls_fb_ref t = 0, list = 0, iv = 0, fv = 0, dv = 0, bv = 0, out = 0;
    if (v->type == LS_ETD_TENSOR) t = tensor(b, &v->tensor);
    if (v->type == LS_ETD_TENSOR_LIST) {
        ls_fb_ref *refs = ls_calloc(v->n_tensors ? v->n_tensors : 1, sizeof *refs);
        for (uint32_t i = 0; i < v->n_tensors; i++) refs[i] = tensor(b, &v->tensors[i]);
        ls_fb_ref vec = ls_fbb_vector_refs(b, refs, v->n_tensors);
        free(refs);
        ls_fbb_table_start(b);
        ls_fbb_add_ref(b, 0, vec);
        list = ls_fbb_table_end(b);
    }
    if (v->type == LS_ETD_INT) iv = box_u64(b, (uint64_t)v->int_val, 8);
    if (v->type == LS_ETD_FLOAT) {
        float f = (float)v->float_val;
        uint32_t bits;
        memcpy(&bits, &f, 4);
        fv = box_u64(b, bits, 4);
    }
    if (v->type == LS_ETD_DOUBLE) {
        uint64_t bits;
        memcpy(&bits, &v->float_val, 8);
        dv = box_u64(b, bits, 8);
    }
    if (v->type == LS_ETD_BOOL) bv = box_u64(b, v->bool_val, 1);
    if (v->output) out = box_u64(b, 1, 1);
    ls_fbb_table_start(b);
    ls_fbb_add_i8(b, 0, v->type, 0);
    ls_fbb_add_ref(b, 1, t);
    ls_fbb_add_ref(b, 2, list);
    ls_fbb_add_ref(b, 3, iv);
    ls_fbb_add_ref(b, 4, fv);
    ls_fbb_add_ref(b, 5, dv);
    ls_fbb_add_ref(b, 6, bv);
    ls_fbb_add_ref(b, 7, out);
    return ls_fbb_table_end(b);
}

static ls_fb_ref event(ls_fbb *b, const ls_etd_event *e)
{
    ls_fb_ref inner;
    if (e->kind == LS_ETD_PROFILE) {
        ls_fb_ref name = str(b, e->name), ds = str(b, e->delegate_debug_id_str);
        ls_fb_ref md = e->metadata || e->n_metadata ? ls_fbb_vector(b, e->metadata, e->n_metadata, 1, 1) : 0;
        ls_fbb_table_start(b);
        ls_fbb_add_ref(b, 0, name);
        ls_fbb_add_i32(b, 1, (int32_t)e->chain_index, 0);
        ls_fbb_add_i32(b, 2, e->instruction_id, -1);
        ls_fbb_add_i32(b, 3, e->delegate_debug_id_int, -1);
        ls_fbb_add_ref(b, 4, ds);
        ls_fbb_add_ref(b, 5, md);
        ls_fbb_add_u64(b, 6, e->start_time, 0);
        ls_fbb_add_u64(b, 7, e->end_time, 0);
    } else if (e->kind == LS_ETD_ALLOCATION) {
        ls_fbb_table_start(b);
        ls_fbb_add_i32(b, 0, e->allocator_id, 0);
        ls_fbb_add_u64(b, 1, e->allocation_size, 0);
    } else {
        ls_fb_ref entry = e->has_debug_entry ? value(b, &e->debug_entry) : 0;
        ls_fb_ref ds = str(b, e->delegate_debug_id_str), name = str(b, e->name);
        ls_fbb_table_start(b);
        ls_fbb_add_u64(b, 0, (uint64_t)e->chain_index, 0);
        ls_fbb_add_i32(b, 1, e->instruction_id, -1);
        ls_fbb_add_ref(b, 2, entry);
        ls_fbb_add_i32(b, 3, e->delegate_debug_id_int, -1);
        ls_fbb_add_ref(b, 4, ds);
        ls_fbb_add_ref(b, 5, name);
    }
    inner = ls_fbb_table_end(b);
    ls_fbb_table_start(b);
    ls_fbb_add_ref(b, e->kind == LS_ETD_PROFILE ? 0 : e->kind == LS_ETD_ALLOCATION ? 1 : 2, inner);
    return ls_fbb_table_end(b);
}

static ls_fb_ref run(ls_fbb *b, const ls_etd_run *r)
{
    ls_fb_ref *refs = ls_calloc(r->n_events + r->n_allocators + 1, sizeof *refs);
    for (uint32_t i = 0; i < r->n_events; i++) refs[i] = event(b, &r->events[i]);
    ls_fb_ref events = ls_fbb_vector_refs(b, refs, r->n_events);
    for (uint32_t i = 0; i < r->n_allocators; i++) {
        ls_fb_ref name = str(b, r->allocators[i]);
        ls_fbb_table_start(b);
        ls_fbb_add_ref(b, 0, name);
        refs[i] = ls_fbb_table_end(b);
    }
    ls_fb_ref allocs = r->n_allocators ? ls_fbb_vector_refs(b, refs, r->n_allocators) : 0;
    free(refs);
    ls_fb_ref name = str(b, r->name);
    ls_fbb_table_start(b);
    ls_fbb_add_ref(b, 0, name);
    ls_fbb_add_i32(b, 1, r->bundled_input_index, -1);
    ls_fbb_add_ref(b, 2, allocs);
    ls_fbb_add_ref(b, 3, events);
    return ls_fbb_table_end(b);
}

int ls_etdump_write(const ls_etdump *d, uint8_t **bytes, size_t *size, ls_error *err)
{
    ls_fbb b;
    ls_fbb_init(&b);
    ls_fb_ref *refs = ls_calloc(d->n_runs ? d->n_runs : 1, sizeof *refs);
    for (uint32_t i = 0; i < d->n_runs; i++) refs[i] = run(&b, &d->runs[i]);
    ls_fb_ref runs = ls_fbb_vector_refs(&b, refs, d->n_runs);
    free(refs);
    ls_fbb_table_start(&b);
    ls_fbb_add_u32(&b, 0, d->version, 0);
    ls_fbb_add_ref(&b, 1, runs);
    ls_fb_ref root = ls_fbb_table_end(&b);
    *bytes = ls_fbb_finish_size_prefixed(&b, root, "ED00", size);
    if (!*bytes) return ls_fail(err, "%s: the ETDump passed the 2 GiB a flatbuffer can hold", d->name ? d->name : "etdump");
    return 0;
}
