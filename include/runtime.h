/* The bundled CPU runtime: values, the kernel table and the interpreter.
 * One set of kernels serves everything that computes: the interpreter, constant propagation
 * (which evaluates folded subgraphs), the bundled delegate and the .pte runtime. */
#ifndef LS_RUNTIME_H
#define LS_RUNTIME_H

#include <stdbool.h>
#include <stdint.h>

#include "common.h"
#include "ops.h"
#include "program.h"
#include "tensor.h"

/* A runtime value: what a node argument or result is at run time. */
typedef enum ls_value_kind {
    LS_V_NONE,
    LS_V_TENSOR,
    LS_V_INT,
    LS_V_FLOAT,
    LS_V_BOOL,
    LS_V_STRING,
    LS_V_LIST, /* items: tensors (Tensor[], Tensor?[] with NONE holes), ints, floats, bools */
} ls_value_kind;

typedef struct ls_value {
    uint8_t kind;
    uint32_t n; /* list length */
    union {
        ls_tensor *t; /* owned reference */
        int64_t i;
        double f;
        bool b;
        const char *s; /* interned */
        struct ls_value *items;
    };
} ls_value;

ls_value ls_value_tensor(ls_tensor *t); /* takes the reference */
ls_value ls_value_int(int64_t v);
ls_value ls_value_float(double v);
ls_value ls_value_bool(bool v);
ls_value ls_value_none(void);
ls_value ls_value_list(uint32_t n); /* n NONE items */
ls_value ls_value_copy(const ls_value *v); /* shares tensors by reference */
void ls_value_release(ls_value *v);
double ls_value_as_f64(const ls_value *v); /* INT, FLOAT, BOOL or a one-element tensor */
int64_t ls_value_as_i64(const ls_value *v);
/* "a tensor", "an int", "None": what messages call a value of this kind. */
const char *ls_value_kind_text(uint8_t kind);
/* A value that is not a tensor, as the run screens show it: "int 4", "float 0.5", "bool True",
 * "None", "list of 3", "string 'x'". */
void ls_value_scalar_text(const ls_value *v, ls_buf *b);

/* ---- kernels */
typedef struct ls_kctx {
    const ls_node *node; /* for messages: "node add_3 (aten.add.Tensor): ..." (may be NULL) */
    const ls_op *op;     /* the op being run (NULL: node->op). One kernel serves a view op and its
                            _copy form; the view op shares storage where it can, the copy never. */
    ls_error *err;
} ls_kctx;

/* args are the node's arguments evaluated, in schema order, checked against the schema (see
 * ls_eval_node); out receives the result (a tensor, an INT for sym_size, or a LIST for ops
 * returning several tensors). Returns 0 or -1 with ctx->err set. A ScalarType argument is an INT
 * holding an ls_dtype. In-place ops (index_put_, copy_) modify args[0]'s tensor and return it. */
typedef int (*ls_kernel_fn)(ls_kctx *ctx, const ls_value *args, uint32_t nargs, ls_value *out);

ls_kernel_fn ls_kernel_for(const ls_op *op); /* NULL when there is no kernel */
/* Fails like the kernels do: "node NAME (OP): message". */
int ls_kfail(ls_kctx *ctx, const char *fmt, ...) LS_PRINTF(2, 3);
/* Runs op's kernel on argument values (schema order; missing trailing ones take the schema's
 * defaults), checking and coercing them as ls_eval_node does. node may be NULL. For callers that
 * hold values rather than a graph: the bundled delegate, the .pte runtime, tests. */
int ls_kernel_call(const ls_op *op, const ls_node *node, const ls_value *args, uint32_t nargs, ls_value *out,
                   ls_error *err);

/* Direct entry points for callers that plan their own memory, and the benchmark:
 * out = a (+ - * /) b with broadcasting, written into an existing `out` of the result's shape
 * and dtype (opid: LS_OP_add_Tensor, sub_Tensor, mul_Tensor or div_Tensor). */
int ls_binary_into(ls_op_id opid, const ls_tensor *a, const ls_tensor *b, ls_tensor *out, ls_error *err);
/* C[M,N] = A[M,K]·B[K,N], float32 row-major: the blocked, two-thread GEMM behind mm/linear. */
void ls_sgemm(int64_t M, int64_t N, int64_t K, const float *A, const float *B, float *C);
/* Threads the kernels use for large work: 2 on a machine with two cores or more, else 1;
 * LS_THREADS=1 in the environment forces one. */
int ls_runtime_threads(void);

/* Evaluates one call node whose inputs are known: `lookup(id)` gives the value of a node id
 * (borrowed). Used by constant propagation and the interpreter. */
typedef const ls_value *(*ls_value_lookup)(uint32_t id, void *ctx);
int ls_eval_node(const ls_node *n, ls_value_lookup lookup, void *lookup_ctx, ls_value *out, ls_error *err);

/* ---- the interpreter */
typedef struct ls_runner ls_runner;

typedef struct ls_run_stats {
    double cpu_seconds;      /* the run less its delegates: the kernels and the interpreter around them */
    uint32_t n_delegates;
    const char **delegate_names; /* submodule names */
    const char **delegate_backends;
    double *delegate_seconds;
    bool *delegate_simulated; /* run by the bundled delegate standing in for its backend (ls_backend_resolve) */
} ls_run_stats;

/* Prepares a program for running: checks every op has a kernel (or is a delegate call whose
 * backend is registered and whose submodule has a processed blob) and that weights are present;
 * initialises each delegate once. Buffers start from their loaded values; state carries from
 * one run to the next: a BUFFER_MUTATION output is written into its buffer after each run, and
 * in-place ops (index_put_, copy_) on a buffer write it directly. The runner keeps its own copy
 * of every mutated buffer, so the program is never modified. Errors read "FILE: what". */
ls_runner *ls_runner_new(const ls_program *p, ls_error *err);
/* Inputs are the user inputs in signature order, checked against the placeholders' dtype and
 * static shape. Outputs are the user outputs in order (caller releases each value and frees
 * the array). A USER_INPUT_MUTATION output (and an in-place op on an input) writes into the
 * caller's input tensor, as torch does. Every kernel result is checked against the node's
 * metadata (dtype and static sizes). */
int ls_runner_run(ls_runner *r, const ls_value *inputs, uint32_t n_inputs, ls_value **outputs, uint32_t *n_outputs,
                  ls_error *err);
const ls_run_stats *ls_runner_stats(const ls_runner *r); /* accumulated over runs */
/* Mutable state after the runs so far: top-level mutated buffers, then each delegate's state. */
uint32_t ls_runner_state_count(const ls_runner *r);
const char *ls_runner_state_name(const ls_runner *r, uint32_t i); /* "cache" or "lowered_module_0/cache" */
ls_tensor *ls_runner_state(const ls_runner *r, uint32_t i);       /* borrowed */
void ls_runner_free(ls_runner *r);

struct ls_node_stats;
/* Measures every node of the runs that follow into stats (node_stats.h: time per call node,
 * the range, NaN and Inf counts of what each node made; stats must be of this runner's
 * program, borrowed, NULL for none) and, with keep, keeps every node's value of the last run
 * for a node-by-node comparison (ls_runner_value, ls_compare_nodes). Timing reads the clock
 * twice per node, so it is off unless asked for. */
void ls_runner_observe(ls_runner *r, struct ls_node_stats *stats, bool keep);
/* The value node position pos made in the last run, when kept; NULL otherwise. */
const ls_value *ls_runner_value(const ls_runner *r, uint32_t pos);
const ls_program *ls_runner_program(const ls_runner *r);

/* The user inputs of a program in signature order (borrowed placeholder nodes); returns how
 * many there are (fills at most max). A program without input specs: every placeholder. */
uint32_t ls_program_user_inputs(const ls_program *p, const ls_node **nodes, uint32_t max);
/* The names of the user outputs in order (the output node's argument names, NULL for a
 * constant output); returns how many there are. */
uint32_t ls_program_user_outputs(const ls_program *p, const char **names, uint32_t max);
/* Seeded inputs for every user input, shaped and typed as the placeholder's metadata says (a
 * symbolic dim takes its hint, or 1): floats from a normal distribution N(0, 1) seeded by
 * (seed, step, input number), integers all equal to step (so positions and token ids advance
 * with --steps), bools alternating True, False, ... Fails for an input with no metadata. */
int ls_make_inputs(const ls_program *p, uint64_t seed, int64_t step, ls_value **inputs, uint32_t *n, ls_error *err);

#endif
