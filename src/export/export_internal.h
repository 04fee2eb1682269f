/* What the .pte loader, the to_executorch passes and the writers share. */
#ifndef LS_EXPORT_INTERNAL_H
#define LS_EXPORT_INTERNAL_H

#include <stdint.h>

#include "export.h"
#include "ops.h"
#include "program.h"
#include "pte.h"

/* The functional parameters an op's out variant keeps, in order (indices into op->schema.params).
 * torchgen drops the TensorOptions group (dtype, layout, device, pin_memory) from out variants of
 * ops that have one (full.out, _to_dim_order_copy.out, scalar_tensor.out): the out tensor gives
 * them. Returns the count. */
uint32_t lsx_out_params(const ls_op *op, uint8_t keep[LS_MAX_PARAMS]);
/* How many out arguments the out variant takes: one per returned tensor, one Tensor[] for a list. */
uint32_t lsx_out_count(const ls_op *op);
/* The name of out argument k: "out" for one, "out0", "out1", ... for several. Interned. */
const char *lsx_out_name(const ls_op *op, uint32_t k);

/* Layout and MemoryFormat codes: c10's (what a .pte holds) and torch.export's (LS_ARG_LAYOUT,
 * LS_ARG_MEMFMT). */
int64_t lsx_layout_from_c10(int64_t c10);
int64_t lsx_layout_to_c10(int64_t code);
int64_t lsx_memfmt_from_c10(int64_t c10);
int64_t lsx_memfmt_to_c10(int64_t code);

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


/* The program as torch.export's ExportedProgram JSON (schema 8.x), malloc'd (write_pt2.c). */
char *lsx_exported_program_json(const ls_program *p);

/* pte_load.c: one method of a read .pte as a program (ptd may be NULL); pte_load_file.c: a
 * decoded BundledBackend blob as the lowered module's program (data viewing blob). */
int lsx_program_from_pte(ls_pte *pte, const ls_ptd *ptd, const char *method, const char *where, ls_program **out,
                         ls_error *err);
struct ls_bb_graph;
ls_program *lsx_program_from_bb(const struct ls_bb_graph *g, ls_blob *blob, const char *name);

/* A name usable as a node name: dots and other punctuation become underscores. Interned. */
const char *lsx_sanitize(const char *prefix, const char *s);

#endif
