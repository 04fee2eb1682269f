/* Reading an ETDump (etdump.h): the flatbuffer checked field by field through flatbuf.h.
 * Field slots follow devtools/etdump/etdump_schema_flatcc.fbs (tests/schema has our copy):
 *   ETDump       0 version, 1 run_data
 *   RunData      0 name, 1 bundled_input_index (= -1), 2 allocators, 3 events
 *   Event        0 profile_event, 1 allocation_event, 2 debug_event (exactly one is set)
 *   ProfileEvent 0 name, 1 chain_index, 2 instruction_id (= -1), 3 delegate_debug_id_int (= -1),
 *                4 delegate_debug_id_str, 5 delegate_debug_metadata, 6 start_time, 7 end_time
 *   AllocationEvent 0 allocator_id, 1 allocation_size
 *   DebugEvent   0 chain_index (ulong), 1 instruction_id (= -1), 2 debug_entry, 3 delegate_debug_id_int
 *                (= -1), 4 delegate_debug_id_str, 5 name
 *   Value        0 val, 1 tensor, 2 tensor_list, 3 int_value, 4 float_value, 5 double_value,
 *                6 bool_value, 7 output
 *   Tensor       0 scalar_type, 1 sizes, 2 strides, 3 offset;  TensorList 0 tensors */
#include <stdlib.h>
#include <string.h>

#include "etdump.h"
#include "flatbuf.h"

static int str_field(ls_fb_reader *r, const ls_fb_table *t, unsigned slot, const char *field, const char **out)
{
    const char *s;
    uint32_t len;
    int rc = ls_fb_string_field(r, t, slot, field, &s, &len);
    if (rc == 1) *out = ls_intern_n(s, len);
    return rc;
}

static int i64s(ls_fb_reader *r, const ls_fb_table *t, unsigned slot, const char *field, int64_t **v, uint32_t *n)
{
    ls_fb_vec vec;
    int rc = ls_fb_vector_field(r, t, slot, field, 8, &vec);
    if (rc != 1) return rc;
    *v = ls_malloc((size_t)vec.n * 8 + 8);
    *n = vec.n;
    return ls_fb_vec_copy(r, &vec, field, *v) == 0 ? 1 : -1;
}

static int read_tensor(ls_fb_reader *r, const ls_fb_table *t, ls_etd_tensor *out)
{
    if (ls_fb_i8(r, t, 0, "scalar_type", 0, &out->scalar_type) < 0) return -1;
    if (i64s(r, t, 1, "sizes", &out->sizes, &out->ndim) < 0) return -1;
    if (i64s(r, t, 2, "strides", &out->strides, &out->nstrides) < 0) return -1;
    return ls_fb_i64(r, t, 3, "offset", 0, &out->offset) < 0 ? -1 : 0;
}

static void free_tensor(ls_etd_tensor *t)
{
    free(t->sizes);
    free(t->strides);
}

/* A scalar box (Int, Bool, Float, Double): its one field. */
static int boxed(ls_fb_reader *r, const ls_fb_table *v, unsigned slot, const char *field, const char *inner, unsigned size,
                 void *out)
{
    ls_fb_table box;
    int rc = ls_fb_table_field(r, v, slot, field, &box);
    if (rc != 1) return rc;
    if (ls_fb_push(r, "%s", field) != 0) return -1;
    rc = ls_fb_scalar(r, &box, 0, inner, size, out);
    ls_fb_pop(r);
    return rc < 0 ? -1 : 1;
}

static int read_value(ls_fb_reader *r, const ls_fb_table *t, ls_etd_value *out)
{
    if (ls_fb_i8(r, t, 0, "val", 0, &out->type) < 0) return -1;
    ls_fb_table sub;
    int rc = ls_fb_table_field(r, t, 1, "tensor", &sub);
    if (rc < 0) return -1;
    if (rc == 1) {
        if (ls_fb_push(r, "tensor") != 0 || read_tensor(r, &sub, &out->tensor) != 0) return -1;
        ls_fb_pop(r);
    }
    if ((rc = ls_fb_table_field(r, t, 2, "tensor_list", &sub)) < 0) return -1;
    if (rc == 1) {
        ls_fb_vec vec;
        if (ls_fb_push(r, "tensor_list") != 0) return -1;
        if ((rc = ls_fb_vector_field(r, &sub, 0, "tensors", 4, &vec)) < 0) return -1;
        if (rc == 1) {
            if (ls_fb_charge(r, "tensors", (uint64_t)vec.n * sizeof(ls_etd_tensor)) != 0) return -1;
            out->tensors = ls_calloc(vec.n ? vec.n : 1, sizeof *out->tensors);
            out->n_tensors = vec.n;
            for (uint32_t i = 0; i < vec.n; i++) {
                ls_fb_table tt;
                if (ls_fb_push(r, ".tensors[%u]", i) != 0) return -1;
                if (ls_fb_vec_table(r, &vec, i, NULL, &tt) != 0 || read_tensor(r, &tt, &out->tensors[i]) != 0) return -1;
                ls_fb_pop(r);
            }
        }
        ls_fb_pop(r);
    }
    float f = 0;
    double d = 0;
    uint8_t b = 0;
    if (boxed(r, t, 3, "int_value", "int_val", 8, &out->int_val) < 0) return -1;
    if ((rc = boxed(r, t, 4, "float_value", "float_val", 4, &f)) < 0) return -1;
    if (rc == 1) out->float_val = f;
    if ((rc = boxed(r, t, 5, "double_value", "double_val", 8, &d)) < 0) return -1;
    if (rc == 1) out->float_val = d;
    if ((rc = boxed(r, t, 6, "bool_value", "bool_val", 1, &b)) < 0) return -1;
    out->bool_val = b != 0;
    b = 0;
    if ((rc = boxed(r, t, 7, "output", "bool_val", 1, &b)) < 0) return -1;
    out->output = b != 0;
    return 0;
}

static void free_value(ls_etd_value *v)
{
    free_tensor(&v->tensor);
    for (uint32_t i = 0; i < v->n_tensors; i++) free_tensor(&v->tensors[i]);
    free(v->tensors);
}

static int read_profile(ls_fb_reader *r, const ls_fb_table *t, ls_etd_event *e)
{
    int32_t chain = 0;
    e->kind = LS_ETD_PROFILE;
    if (str_field(r, t, 0, "name", &e->name) < 0 || ls_fb_i32(r, t, 1, "chain_index", 0, &chain) < 0 ||
        ls_fb_i32(r, t, 2, "instruction_id", -1, &e->instruction_id) < 0 ||
        ls_fb_i32(r, t, 3, "delegate_debug_id_int", -1, &e->delegate_debug_id_int) < 0 ||
        str_field(r, t, 4, "delegate_debug_id_str", &e->delegate_debug_id_str) < 0)
        return -1;
    e->chain_index = chain;
    ls_fb_vec vec;
    int rc = ls_fb_vector_field(r, t, 5, "delegate_debug_metadata", 1, &vec);
    if (rc < 0) return -1;
    if (rc == 1 && vec.n) {
        e->metadata = ls_malloc(vec.n);
        e->n_metadata = vec.n;
        if (ls_fb_vec_copy(r, &vec, "delegate_debug_metadata", e->metadata) != 0) return -1;
    }
    if (ls_fb_u64(r, t, 6, "start_time", 0, &e->start_time) < 0 || ls_fb_u64(r, t, 7, "end_time", 0, &e->end_time) < 0)
        return -1;
    return 0;
}

static int read_debug(ls_fb_reader *r, const ls_fb_table *t, ls_etd_event *e)
{
    uint64_t chain = 0;
    e->kind = LS_ETD_DEBUG;
    if (ls_fb_u64(r, t, 0, "chain_index", 0, &chain) < 0 || ls_fb_i32(r, t, 1, "instruction_id", -1, &e->instruction_id) < 0)
        return -1;
    e->chain_index = (int64_t)chain;
    ls_fb_table v;
    int rc = ls_fb_table_field(r, t, 2, "debug_entry", &v);
    if (rc < 0) return -1;
    if (rc == 1) {
        e->has_debug_entry = true;
        if (ls_fb_push(r, "debug_entry") != 0 || read_value(r, &v, &e->debug_entry) != 0) return -1;
        ls_fb_pop(r);
    }
    if (ls_fb_i32(r, t, 3, "delegate_debug_id_int", -1, &e->delegate_debug_id_int) < 0 ||
        str_field(r, t, 4, "delegate_debug_id_str", &e->delegate_debug_id_str) < 0 || str_field(r, t, 5, "name", &e->name) < 0)
        return -1;
    return 0;
}

static int read_event(ls_fb_reader *r, const ls_fb_table *t, ls_etd_event *e)
{
    static const char *const fields[3] = {"profile_event", "allocation_event", "debug_event"};
    ls_fb_table sub[3];
    int set = -1;
    e->instruction_id = -1;
    e->delegate_debug_id_int = -1;
    for (unsigned k = 0; k < 3; k++) {
        int rc = ls_fb_table_field(r, t, k, fields[k], &sub[k]);
        if (rc < 0) return -1;
        if (rc == 0) continue;
        if (set >= 0)
            return ls_fb_fail(r, NULL, t->pos, "sets both %s and %s (exactly one must be set)", fields[set], fields[k]);
        set = (int)k;
    }
    if (set < 0) return ls_fb_fail(r, NULL, t->pos, "sets none of profile_event, allocation_event, debug_event");
    if (ls_fb_push(r, "%s", fields[set]) != 0) return -1;
    int rc;
    if (set == 0) {
        rc = read_profile(r, &sub[0], e);
    } else if (set == 1) {
        e->kind = LS_ETD_ALLOCATION;
        rc = ls_fb_i32(r, &sub[1], 0, "allocator_id", 0, &e->allocator_id) < 0 ||
                     ls_fb_u64(r, &sub[1], 1, "allocation_size", 0, &e->allocation_size) < 0
                 ? -1
                 : 0;
    } else {
        rc = read_debug(r, &sub[2], e);
    }
    if (rc == 0) ls_fb_pop(r);
    return rc;
}

static int read_run(ls_fb_reader *r, const ls_fb_table *t, ls_etd_run *run)
{
    run->bundled_input_index = -1;
    if (str_field(r, t, 0, "name", &run->name) < 0 ||
        ls_fb_i32(r, t, 1, "bundled_input_index", -1, &run->bundled_input_index) < 0)
        return -1;
    ls_fb_vec vec;
    int rc = ls_fb_vector_field(r, t, 2, "allocators", 4, &vec);
    if (rc < 0) return -1;
    if (rc == 1) {
        if (ls_fb_charge(r, "allocators", (uint64_t)vec.n * sizeof(char *)) != 0) return -1;
        run->allocators = ls_calloc(vec.n ? vec.n : 1, sizeof *run->allocators);
        run->n_allocators = vec.n;
        for (uint32_t i = 0; i < vec.n; i++) {
            ls_fb_table a;
            if (ls_fb_push(r, ".allocators[%u]", i) != 0) return -1;
            if (ls_fb_vec_table(r, &vec, i, NULL, &a) != 0 || str_field(r, &a, 0, "name", &run->allocators[i]) < 0) return -1;
            ls_fb_pop(r);
        }
    }
    if ((rc = ls_fb_vector_field(r, t, 3, "events", 4, &vec)) < 0) return -1;
    if (rc == 1) {
        if (ls_fb_charge(r, "events", (uint64_t)vec.n * sizeof(ls_etd_event)) != 0) return -1;
        run->events = ls_calloc(vec.n ? vec.n : 1, sizeof *run->events);
        for (uint32_t i = 0; i < vec.n; i++) {
            ls_fb_table ev;
            if (ls_fb_push(r, ".events[%u]", i) != 0) return -1;
            run->n_events = i + 1; /* freed from here on, whatever happens */
            if (ls_fb_vec_table(r, &vec, i, NULL, &ev) != 0 || read_event(r, &ev, &run->events[i]) != 0) return -1;
            ls_fb_pop(r);
        }
    }
    return 0;
}

void ls_etdump_free(ls_etdump *d)
{
    for (uint32_t i = 0; i < d->n_runs; i++) {
        ls_etd_run *run = &d->runs[i];
        for (uint32_t k = 0; k < run->n_events; k++) {
            free(run->events[k].metadata);
            free_value(&run->events[k].debug_entry);
        }
        free(run->events);
        free(run->allocators);
    }
    free(d->runs);
    memset(d, 0, sizeof *d);
}

/* Another ExecuTorch file given where an ETDump is expected (by the identifiers reader.c sniffs),
 * and where it goes instead. */
static const char *other_file(const uint8_t *d, size_t n)
{
    if (n >= 8 && memcmp(d + 4, "ET", 2) == 0) return "an ExecuTorch program (.pte): give it as FILE";
    if (n >= 8 && memcmp(d + 4, "BP08", 4) == 0) return "a bundled program (.bpte, \"BP08\"): give it as FILE";
    if (n >= 8 && memcmp(d + 4, "FT01", 4) == 0) return "an external data file (.ptd, \"FT01\"): give it with --data";
    if (n >= 4 && d[0] == 'P' && d[1] == 'K') return "a zip archive (an ETRecord or a .pt2): give it as FILE";
    return NULL;
}

int ls_etdump_read(const uint8_t *data, size_t size, const char *name, ls_etdump *out, ls_error *err)
{
    memset(out, 0, sizeof *out);
    out->name = ls_intern(name ? name : "etdump");
    ls_fb_reader r;
    ls_fb_table root;
    if (ls_fb_reader_init(&r, data, size, out->name, err) != 0) return -1;
    if (size >= 12 && memcmp(data + 4, "ED00", 4) == 0 && memcmp(data + 8, "ED00", 4) != 0)
        return ls_fail(err, "%s: \"ED00\" at byte 4, not 8: an ETDump without its size prefix (flatcc writes one)", out->name);
    const char *other = other_file(data, size);
    if (other)
        return ls_fail(err, "%s: not an ETDump (\"ED00\") but %s, and the ETDump its run wrote to --etdump", out->name,
                       other);
    if (ls_fb_root_size_prefixed(&r, "ED00", &root) != 0) return -1;
    if (ls_fb_u32(&r, &root, 0, "version", 0, &out->version) < 0) goto fail;
    ls_fb_vec vec;
    int rc = ls_fb_vector_field(&r, &root, 1, "run_data", 4, &vec);
    if (rc < 0) goto fail;
    if (rc == 1) {
        if (ls_fb_charge(&r, "run_data", (uint64_t)vec.n * sizeof(ls_etd_run)) != 0) goto fail;
        out->runs = ls_calloc(vec.n ? vec.n : 1, sizeof *out->runs);
        for (uint32_t i = 0; i < vec.n; i++) {
            ls_fb_table t;
            if (ls_fb_push(&r, "run_data[%u]", i) != 0) goto fail;
            out->n_runs = i + 1;
            if (ls_fb_vec_table(&r, &vec, i, NULL, &t) != 0 || read_run(&r, &t, &out->runs[i]) != 0) goto fail;
            ls_fb_pop(&r);
        }
    }
    return 0;
fail:
    ls_etdump_free(out);
    return -1;
}

int ls_etdump_read_file(const char *path, ls_etdump *out, ls_error *err)
{
    uint8_t *data;
    size_t size;
    memset(out, 0, sizeof *out);
    if (ls_read_file(path, (size_t)1 << 31, &data, &size, err) != 0) return -1;
    int rc = ls_etdump_read(data, size, path, out, err);
    free(data);
    return rc;
}

int64_t ls_etd_elapsed(const ls_etd_event *e)
{
    if (e->start_time <= e->end_time) return (int64_t)(e->end_time - e->start_time);
    if (e->start_time > UINT32_MAX || e->end_time > UINT32_MAX) return -1;
    return (int64_t)((UINT32_MAX - e->start_time) + e->end_time);
}
