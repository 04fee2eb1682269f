/* Making programs and nodes in C: the passes use it to create nodes, the tests and the
 * benchmark generator to write whole programs without a file.
 *
 * Arguments are given positionally in schema order (the order of the operator's schema in
 * src/model/ops.def); trailing arguments left out take their schema defaults. A builder names call
 * nodes as torch.fx does when no name is given: "add", "add_1" in an ATen program,
 * "aten_add_tensor", "aten_add_tensor_1" in an Edge one. */
#ifndef LS_BUILD_H
#define LS_BUILD_H

#include "ops.h"
#include "program.h"

/* The base name FX gives a node of op in a dialect ("add" / "aten_add_tensor"), interned. */
const char *ls_op_node_base(const ls_op *op, ls_dialect dialect);
/* ls_op_target, made once per op for ATen and Edge (other dialects each time). */
const char *ls_op_target_cached(const ls_op *op, ls_dialect dialect);

/* A new call node of p (next id, not yet in the graph): target = op's spelling in dialect,
 * args positional in schema order (the array and its lists are consumed, also on failure),
 * missing trailing arguments filled from the schema defaults. val may be NULL. The name is
 * used as given: the caller makes it unique (ls_namer). NULL with err set when the arguments
 * do not fit the schema. Special ops (getitem, executorch_call_delegate) keep args as given. */
ls_node *ls_node_new_call(ls_program *p, const char *name, const ls_op *op, ls_dialect dialect, ls_arg *args,
                          uint16_t nargs, const ls_tmeta *val, ls_error *err);
/* A new `name = getitem(of, k)` call (next id, not in the graph): value k of node `of`. */
ls_node *ls_node_new_getitem(ls_program *p, const char *name, uint32_t of, int64_t k);
/* A new placeholder node (next id, not in the graph) with a tensor value. */
ls_node *ls_node_new_placeholder(ls_program *p, const char *name, const ls_tmeta *val);

/* ---- whole programs */
typedef struct ls_builder ls_builder;

ls_builder *ls_builder_new(const char *name, ls_dialect dialect);
ls_program *ls_builder_program(ls_builder *b); /* borrowed, for inspection while building */

/* A placeholder with its input spec. target: the FQN (NULL for user inputs). data (may be
 * NULL: metadata only) goes where the kind says: the state dict for parameters and
 * persistent buffers, the constants table for tensor constants and non-persistent buffers.
 * Returns the node id. */
uint32_t ls_build_input(ls_builder *b, const char *name, ls_input_kind kind, const char *target, bool persistent,
                        const ls_tmeta *meta, ls_tensor *data);
/* A call node appended to the graph; name NULL: FX's name for the op. val NULL: the value of
 * the first tensor argument (right for elementwise ops). Aborts when the arguments do not fit
 * the schema (builders are for programs the caller controls). Returns the node id. */
uint32_t ls_build_call(ls_builder *b, const char *name, ls_op_id op, ls_arg *args, uint16_t nargs,
                       const ls_tmeta *val);
/* The output node: value ids[i] with output kind kinds[i] (NULL: all user outputs) and target
 * targets[i] (NULL entries or NULL array: none). */
void ls_build_output(ls_builder *b, const uint32_t *ids, uint32_t n, const ls_output_kind *kinds,
                     const char *const *targets);
/* The finished program (the caller owns it); frees the builder. */
ls_program *ls_builder_finish(ls_builder *b);

/* Small helpers for building arguments and tensors. */
ls_arg ls_arg_opt_nodes(const uint32_t *ids, uint32_t n); /* Tensor?[]: 0 = None */
ls_tmeta ls_meta(ls_dtype dtype, int ndim, const int64_t *sizes);
/* A tensor filled from doubles (converted to dtype), n values. */
ls_tensor *ls_tensor_of(ls_dtype dtype, int ndim, const int64_t *sizes, const double *values, int64_t n);

#endif
