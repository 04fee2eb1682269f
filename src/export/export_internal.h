/* What the to_executorch steps (to_out_variant, memory_plan, emit) and export share. */
#ifndef LS_EXPORT_INTERNAL_H
#define LS_EXPORT_INTERNAL_H

#include <stdint.h>

#include "dialect.h"
#include "export.h"
#include "ops.h"
#include "program.h"
#include "pte.h"
#include "ptrmap.h"

/* Upper bounds of a tensor's sizes: static sizes as they are, a symbolic one from its hint or from
 * the program's range_constraints ("Symbol('u0', integer=True)" → max_val of u0). */
typedef struct lsx_bounds lsx_bounds;
lsx_bounds *lsx_bounds_new(const ls_program *p);
void lsx_bounds_free(lsx_bounds *b);
/* Fills sizes; *dynamic tells whether any was symbolic. -1 when a size has no known bound. */
int lsx_upper_sizes(lsx_bounds *b, const ls_tmeta *m, int64_t sizes[LS_MAX_DIMS], bool *dynamic);
/* Bytes of a tensor at its upper bound sizes; -1 when unknown. */
int64_t lsx_upper_nbytes(lsx_bounds *b, const ls_tmeta *m);

/* What the to_executorch steps attach to a program (ls_program.exec). */
typedef struct lsx_exec {
    ls_mem_plan *plan; /* a reference, or NULL */
    ls_pte *pte;       /* owned, or NULL */
    ls_emit_summary summary;
} lsx_exec;
/* Attaches plan (a new reference is taken) and pte (ownership taken) to p, replacing what it had. */
void lsx_exec_attach(ls_program *p, ls_mem_plan *plan, ls_pte *pte, const ls_emit_summary *summary);
ls_mem_plan *lsx_plan_ref(ls_mem_plan *m);
void lsx_plan_unref(ls_mem_plan *m);

/* The constant or mutable data segment emit builds (emit_data.c): each distinct run of bytes
 * once, index 0 reserved; entries padded to `alignment` between them (1: none). */
typedef struct lsx_store_entry {
    uint32_t index, next; /* next: the entry with the same hash, UINT32_MAX none */
    size_t size;
} lsx_store_entry;
typedef struct lsx_store {
    ls_buf bytes;
    LS_VEC(uint64_t) offsets; /* by index */
    LS_VEC(lsx_store_entry) entries;
    ls_ptrmap by_hash;
    uint32_t alignment;
} lsx_store;
void lsx_store_init(lsx_store *s, uint32_t alignment);
/* The index of these bytes, stored now (*added true) or before. */
uint32_t lsx_store_put(lsx_store *s, const void *data, size_t n, bool *added);
void lsx_store_free(lsx_store *s);

/* The read file `file` with execution plan `replace` replaced by the one plan of `emitted`
 * (pte_merge.c): the other plans as read, the file's named data then the emitted one's new keys,
 * constants, mutable data and blobs stored once and renumbered, segments at the file's
 * alignment. *out borrows from both models (keep them until it is freed with
 * lsx_pte_merged_free); on failure it is left empty. */
int lsx_pte_merge(const ls_pte *file, uint32_t replace, const ls_pte *emitted, ls_pte *out, ls_error *err);
void lsx_pte_merged_free(ls_pte *out);

/* One tensor for the memory planning algorithms (mem_algo.c): its aligned size, its lifetime
 * (node indices, inclusive) and the order it was found in (collect_specs_from_nodes' graph
 * order); the algorithm sets offset and the shared object it went into. */
typedef struct lsx_mem_tensor {
    uint64_t size;
    uint32_t first, last;
    uint32_t order;
    uint64_t offset;
    uint32_t object;
} lsx_mem_tensor;
/* exir's greedy: returns the arena size (the objects' total + extra_padding; 0 for no tensor). */
uint64_t lsx_mem_greedy(lsx_mem_tensor *t, uint32_t n, uint64_t extra_padding, uint32_t *n_objects);
/* exir's naive: one after the other. Returns the arena size. */
uint64_t lsx_mem_naive(lsx_mem_tensor *t, uint32_t n);

/* insert_write_back_for_buffers_pass (write_back.c): copy_(buffer, value) for each BUFFER_MUTATION
 * output, placed where exir places it now; the output reads the copies. Returns how many. */
struct ls_namer;
struct ls_report;
uint32_t lsx_insert_write_backs(ls_program *q, struct ls_namer *names, struct ls_report *rep);

#endif
