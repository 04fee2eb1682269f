/* The emitter's state, shared by emit's three files (private to src/export/): emit.c assembles
 * the Program, emit_values.c makes its values (placeholders, arguments, tensors), emit_calls.c
 * its instructions (kernel and delegate calls, views, the outputs). */
#ifndef LS_EXPORT_EMITTER_H
#define LS_EXPORT_EMITTER_H

#include "export_internal.h"
#include "named_data.h"
#include "pte_file.h"
#include "signature.h"

typedef LS_VEC(uint64_t) u64_vec;

typedef struct emitter {
    const ls_program *p;
    const ls_mem_plan *plan;
    lsx_bounds *bounds;
    ls_sig sig;
    ls_error *err;
    LS_VEC(ls_pte_value) values;
    int32_t *val_of; /* by node id: its value index, -1 none */
    LS_VEC(ls_pte_instruction) instrs;
    LS_VEC(uint32_t) instr_node; /* per instruction: the node it is made of */
    uint32_t cur_node;
    LS_VEC(ls_pte_operator) ops;
    LS_VEC(ls_pte_delegate) dels;
    LS_VEC(const char *) del_sub; /* submodule name of each delegate */
    ls_ptrmap sub_ix, del_ix;     /* submodule name → its index in p->subs, its delegate's index */
    LS_VEC(ls_pte_blob) segs;
    lsx_store consts, muts; /* the constant and mutable data segments, by content */
    int32_t mut_seg;        /* segment of mutable data, -1 none */
    bool init_buffers;      /* mutable buffers keep their initial data (exir's et_init_buffer) */
    bool buffer_names;      /* and their FQNs (exir's emit_mutable_buffer_names) */
    ls_ptrmap blob_seg;     /* delegate blob (interned by content) → its segment + 1 */
    ls_named_data *named; /* the program's named data and what preprocess adds here: one segment each */
    const ls_pte_file *file; /* the .pte the program came from, or NULL: its external data stays external */
    LS_VEC(int32_t) inputs;
    LS_VEC(int32_t) outputs;
    uint32_t user_outputs; /* of them, the ones call_spec.out_spec counts (the pytree string) */
    uint32_t kernel_calls, delegate_calls, constants, externals;
    uint32_t buffers_unwritten;       /* mutated buffers the program starts not all zero, written without it */
    const char *buffer_unwritten;     /* the first of them (its target) */
} emitter;

/* emit_values.c */
/* Fails with "emit: node `NAME`: ..." (or "emit: ..." without a node); returns -1. */
int lsx_emit_fail(emitter *E, const ls_node *n, const char *fmt, ...) LS_PRINTF(3, 4);
void *lsx_emit_dup(const void *src, size_t n);
int32_t lsx_emit_push_value(emitter *E, ls_pte_value v);
int32_t lsx_emit_int_value(emitter *E, int64_t i);
/* A Tensor value of meta m; the plan gives node_id's memory; dbi / fqn for stored data. */
int lsx_emit_tensor_value(emitter *E, const ls_node *n, const ls_tmeta *m, uint32_t node_id, uint32_t dbi,
                          const char *fqn, int32_t *out);
/* The value node id has (n reads it: named in the error when it has none). */
int lsx_emit_node_value(emitter *E, const ls_node *n, uint32_t id, int32_t *out);
/* The value of an argument (a new value for literals). */
int lsx_emit_arg_value(emitter *E, const ls_node *n, const ls_arg *a, int32_t *out);
int lsx_emit_placeholder(emitter *E, const ls_node *n);

/* emit_calls.c */
/* A call node at position pos: its instruction(s) and values. */
int lsx_emit_call(emitter *E, const ls_node *n, uint32_t pos);
/* The output node: the plan's outputs (buffer write-backs, then user outputs). */
int lsx_emit_output(emitter *E, const ls_node *n);

#endif
