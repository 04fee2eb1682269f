/* A .pte's method replaced by a re-lowered one, the rest of the file kept (export.c): every other
 * method as read, the file's named data with its keys, its EXTERNAL tensors (still by key), its
 * inline delegate data, compile specs and segment alignment.
 *
 * The file is laid out again as exir's serializer lays a program out
 * (exir/_serialize/_program.py serialize_pte_binary): the constant segment first, then the
 * mutable data segment, then the delegates' blobs, then the named data, each stored once by its
 * bytes (the emitter's cached_spec_hash_values / cached_spec_mutable_hash_values and
 * backend_delegate_data_cache, the NamedDataStore's per-key buffers). Methods are visited in
 * plan order and values in value order, so a constant takes the index a fresh emit of the
 * whole program would give it; a method none of whose data moved keeps its indices.
 *
 * The result borrows every string, tensor shape and segment byte from the two models it is made
 * of (they outlive it); lsx_pte_merged_free releases what it owns. */
#include <string.h>
#include <xxhash.h>

#include "export_internal.h"
#include "ptrmap.h"

#define CONST_ALIGN 16

typedef LS_VEC(ls_pte_named_data) named_vec;

typedef struct merger {
    ls_pte *out;
    uint64_t align; /* the file's segment alignment */
    LS_VEC(ls_pte_blob) segs;
    ls_ptrmap seg_by_hash; /* XXH3 of a blob → its segment + 1 */
    lsx_store consts, muts;
    LS_VEC(ls_pte_buffer) inline_data;
    ls_error *err;
} merger;

static uint32_t segment_of(merger *M, const uint8_t *data, size_t n, uint32_t alignment)
{
    uint64_t h = XXH3_64bits(data, n) | 1;
    uintptr_t at;
    if (ls_ptrmap_get(&M->seg_by_hash, (const void *)(uintptr_t)h, &at)) {
        const ls_pte_blob *b = &M->segs.v[at - 1];
        if (b->n == n && (!n || !memcmp(b->v, data, n))) return (uint32_t)at - 1;
    }
    ls_vec_push(&M->segs, ((ls_pte_blob){(uint8_t *)data, n, alignment, NULL}));
    ls_ptrmap_put(&M->seg_by_hash, (const void *)(uintptr_t)h, M->segs.n);
    return M->segs.n - 1;
}

/* The constants and mutable initial data of plan pl (of src) into the stores, its values
 * renumbered into them. */
static int move_tensor_data(merger *M, const ls_pte *src, ls_pte_plan *pl)
{
    ls_pte_value *vals = ls_malloc(sizeof *vals * (pl->values.n ? pl->values.n : 1));
    if (pl->values.n) memcpy(vals, pl->values.v, sizeof *vals * pl->values.n);
    pl->values.v = vals;
    for (uint32_t i = 0; i < pl->values.n; i++) {
        if (vals[i].kind != LS_PTE_VAL_TENSOR) continue;
        ls_pte_tensor *t = &vals[i].tensor;
        if (t->has_extra_tensor_info && t->extra_tensor_info.location == LS_PTE_TENSOR_EXTERNAL) continue;
        if (!t->data_buffer_idx) continue;
        const uint8_t *d;
        size_t n;
        int rc = ls_pte_tensor_bytes(src, t, &d, &n, M->err);
        if (rc < 0) return ls_fail_prefix(M->err, "%s: value %u", pl->name ? pl->name : "?", i);
        if (rc == 0) continue;
        if (t->has_allocation_info) {
            t->data_buffer_idx = lsx_store_put(&M->muts, d, n, NULL);
            if (t->has_extra_tensor_info) t->extra_tensor_info.mutable_data_segments_idx = 0;
        } else {
            t->data_buffer_idx = lsx_store_put(&M->consts, d, n, NULL);
        }
    }
    return 0;
}

/* The delegates of plan pl (of src): blobs into segments (once per bytes) or inline data. */
static int move_delegates(merger *M, const ls_pte *src, ls_pte_plan *pl)
{
    ls_pte_delegate *dels = ls_malloc(sizeof *dels * (pl->delegates.n ? pl->delegates.n : 1));
    if (pl->delegates.n) memcpy(dels, pl->delegates.v, sizeof *dels * pl->delegates.n);
    pl->delegates.v = dels;
    for (uint32_t k = 0; k < pl->delegates.n; k++) {
        ls_pte_delegate *d = &dels[k];
        if (!d->has_processed) continue;
        const uint8_t *data;
        size_t n;
        if (ls_pte_delegate_blob(src, d, &data, &n, M->err) != 0) return -1;
        if (d->processed.location == LS_PTE_INLINE) {
            ls_vec_push(&M->inline_data, src->backend_delegate_data.v[d->processed.index]);
            d->processed.index = M->inline_data.n - 1;
        } else {
            uint32_t a = d->processed.index < src->n_segment_data ? src->segment_data[d->processed.index].alignment : 0;
            d->processed.index = segment_of(M, data, n, a);
        }
    }
    return 0;
}

/* The named data of src into the result, keys once: a key both models hold must have the same
 * bytes (NamedDataStore refuses a key given twice with different data). */
static int move_named(merger *M, const ls_pte *src, named_vec *named, ls_ptrmap *keys)
{
    for (uint32_t i = 0; i < src->named_data.n; i++) {
        const ls_pte_named_data *nd = &src->named_data.v[i];
        const uint8_t *data;
        size_t n;
        if (ls_pte_segment_bytes(src, nd->segment_index, &data, &n, M->err) != 0) return -1;
        uintptr_t at;
        const char *key = ls_intern(nd->key ? nd->key : "");
        if (ls_ptrmap_get(keys, key, &at)) {
            const ls_pte_blob *b = &M->segs.v[named->v[at - 1].segment_index];
            if (b->n != n || (n && memcmp(b->v, data, n)))
                return ls_fail(M->err, "named data \"%s\": the re-lowered method gives it other bytes than the file (%zu, "
                                       "not %llu)", key, n, (unsigned long long)b->n);
            continue;
        }
        uint32_t a = nd->segment_index < src->n_segment_data ? src->segment_data[nd->segment_index].alignment : 0;
        ls_vec_push(named, ((ls_pte_named_data){nd->key, segment_of(M, data, n, a)}));
        ls_ptrmap_put(keys, key, named->n);
    }
    return 0;
}

int lsx_pte_merge(const ls_pte *file, uint32_t replace, const ls_pte *emitted, ls_pte *out, ls_error *err)
{
    memset(out, 0, sizeof *out);
    if (replace >= file->execution_plan.n || emitted->execution_plan.n != 1)
        return ls_fail(err, "merge: plan %u of %u, %u emitted", replace, file->execution_plan.n, emitted->execution_plan.n);
    merger M = {.out = out, .align = ls_pte_segment_alignment(file), .err = err};
    lsx_store_init(&M.consts, CONST_ALIGN);
    lsx_store_init(&M.muts, 1);
    out->name = file->name;
    out->version = file->version;
    uint32_t np = file->execution_plan.n;
    out->execution_plan = (ls_pte_plans){ls_calloc(np, sizeof(ls_pte_plan)), np, true};
    ls_vec_push(&M.segs, ((ls_pte_blob){0})); /* the constant segment, always (as exir) */
    int rc = 0;
    /* constants and mutable data first, every plan's, then the delegates' blobs: the serializer's
     * segment order */
    for (uint32_t i = 0; i < np; i++) {
        out->execution_plan.v[i] = i == replace ? emitted->execution_plan.v[0] : file->execution_plan.v[i];
        out->execution_plan.v[i].values.v = NULL;
        out->execution_plan.v[i].delegates.v = NULL;
    }
    for (uint32_t i = 0; i < np && rc == 0; i++) {
        const ls_pte *src = i == replace ? emitted : file;
        const ls_pte_plan *orig = i == replace ? &emitted->execution_plan.v[0] : &file->execution_plan.v[i];
        out->execution_plan.v[i].values.v = orig->values.v;
        rc = move_tensor_data(&M, src, &out->execution_plan.v[i]);
    }
    int32_t mut_seg = -1;
    if (rc == 0 && M.muts.bytes.len) {
        mut_seg = (int32_t)M.segs.n;
        ls_vec_push(&M.segs, ((ls_pte_blob){0}));
    }
    for (uint32_t i = 0; i < np && rc == 0; i++) {
        const ls_pte *src = i == replace ? emitted : file;
        const ls_pte_plan *orig = i == replace ? &emitted->execution_plan.v[0] : &file->execution_plan.v[i];
        out->execution_plan.v[i].delegates.v = orig->delegates.v;
        rc = move_delegates(&M, src, &out->execution_plan.v[i]);
    }
    named_vec named = {0};
    ls_ptrmap keys = {0};
    if (rc == 0) rc = move_named(&M, file, &named, &keys);
    if (rc == 0) rc = move_named(&M, emitted, &named, &keys);
    ls_ptrmap_free(&keys);
    ls_ptrmap_free(&M.seg_by_hash);

    /* the stores become segments this model owns */
    M.segs.v[0] = (ls_pte_blob){(uint8_t *)M.consts.bytes.s, M.consts.bytes.len, 0, NULL};
    M.consts.bytes.s = NULL;
    out->has_constant_segment = true;
    out->constant_segment.segment_index = 0;
    out->constant_segment.offsets = (ls_pte_u64s){M.consts.offsets.v, M.consts.offsets.n, true};
    M.consts.offsets.v = NULL;
    if (mut_seg >= 0) {
        M.segs.v[mut_seg] = (ls_pte_blob){(uint8_t *)M.muts.bytes.s, M.muts.bytes.len, 0, NULL};
        M.muts.bytes.s = NULL;
        out->mutable_data_segments = (ls_pte_subsegments_list){ls_calloc(1, sizeof(ls_pte_subsegments)), 1, true};
        out->mutable_data_segments.v[0].segment_index = (uint32_t)mut_seg;
        out->mutable_data_segments.v[0].offsets = (ls_pte_u64s){M.muts.offsets.v, M.muts.offsets.n, true};
        M.muts.offsets.v = NULL;
    }
    lsx_store_free(&M.consts);
    lsx_store_free(&M.muts);
    out->constant_buffer.present = true;
    out->backend_delegate_data = (ls_pte_buffers){M.inline_data.v, M.inline_data.n, true};
    out->named_data = (ls_pte_named_data_list){named.v, named.n, named.n > 0};

    /* laid out at the file's segment alignment (and each blob's own): the writer keeps offsets a
     * model gives with an extended header, and aligns the segment base as they are */
    out->segments = (ls_pte_data_segments){ls_calloc(M.segs.n ? M.segs.n : 1, sizeof(ls_pte_data_segment)), M.segs.n, true};
    uint64_t at = 0;
    for (uint32_t i = 0; i < M.segs.n; i++) {
        uint64_t a = M.segs.v[i].alignment > M.align ? M.segs.v[i].alignment : M.align; /* powers of two */
        out->segments.v[i].offset = (at + a - 1) / a * a;
        out->segments.v[i].size = M.segs.v[i].n;
        at = out->segments.v[i].offset + M.segs.v[i].n;
    }
    out->segment_data = M.segs.v;
    out->n_segment_data = M.segs.n;
    out->has_extended_header = true;
    if (rc != 0) lsx_pte_merged_free(out);
    return rc;
}

void lsx_pte_merged_free(ls_pte *out)
{
    for (uint32_t i = 0; i < out->execution_plan.n; i++) {
        /* copies of the source's arrays, made before the first failure can stop the merge */
        free(out->execution_plan.v[i].values.v);
        free(out->execution_plan.v[i].delegates.v);
    }
    free(out->execution_plan.v);
    if (out->has_constant_segment && out->constant_segment.segment_index < out->n_segment_data)
        free(out->segment_data[out->constant_segment.segment_index].v);
    free(out->constant_segment.offsets.v);
    for (uint32_t i = 0; i < out->mutable_data_segments.n; i++) {
        if (out->mutable_data_segments.v[i].segment_index < out->n_segment_data)
            free(out->segment_data[out->mutable_data_segments.v[i].segment_index].v);
        free(out->mutable_data_segments.v[i].offsets.v);
    }
    free(out->mutable_data_segments.v);
    free(out->backend_delegate_data.v);
    free(out->named_data.v);
    free(out->segments.v);
    free(out->segment_data);
    memset(out, 0, sizeof *out);
}
