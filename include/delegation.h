/* The delegation table of a program, as `lowerscope partitions` prints it and the UI's `d`
 * screen shows it: per op, how many compute nodes each tag took and how many stayed on the CPU.
 *
 * Compute nodes are the call nodes other than getitem, executorch_call_delegate and
 * memory.alloc (an out argument's memory: the to_executorch steps add one per call, and none
 * does any work). Nodes of a lowered module count for the tag they carry, or else for the tag
 * the module came from (ls_deleg_sub_tag). A delegate whose blob lowerscope cannot read (a .pte's
 * QnnBackend, CoreMLBackend, ...: no program inside, backend.h) counts as one opaque call, in a
 * row of its own ("QnnBackend delegate (opaque)"), and the summary says how many are. */
#ifndef LS_DELEGATION_H
#define LS_DELEGATION_H

#include <stdbool.h>
#include <stdint.h>

#include "history.h"
#include "program.h"

typedef struct ls_deleg_col {
    const char *tag;     /* interned; with ls_deleg_by_backend, the backend id */
    const char *backend; /* NULL when the program does not say */
    const char *module;  /* the lowered module holding the tag's nodes ("lowered_module_0"), NULL
                          * before to_backend (and with ls_deleg_by_backend) */
    uint32_t nodes;
} ls_deleg_col;

typedef struct ls_deleg_row {
    const char *op; /* ls_deleg_op_label */
    uint32_t total, cpu;
    uint32_t *by_col; /* nodes per column */
} ls_deleg_row;

typedef struct ls_deleg_table {
    ls_deleg_col *cols; /* in the order the tags first appear */
    uint32_t n_cols;
    ls_deleg_row *rows; /* most nodes first, then by op */
    uint32_t n_rows;
    uint32_t total, cpu; /* compute nodes, and those on the CPU */
    uint32_t n_opaque;   /* delegate calls counted as one call each: their blob is not readable */
} ls_deleg_table;

void ls_deleg_table_build(const ls_program *p, ls_deleg_table *t);
/* The module a column's tag was lowered as, when it says more than the tag (a .pte's delegates
 * are named by their module already), else NULL. */
const char *ls_deleg_col_module(const ls_deleg_col *c);
/* The same table with one column per backend (for many tags). */
void ls_deleg_by_backend(const ls_deleg_table *t, ls_deleg_table *out);
void ls_deleg_table_free(ls_deleg_table *t);

/* The table as the CLI and the UI show it: one column per tag, or, past this many tags, one
 * per backend (then *merged holds it: free it when the result is true). */
#define LS_DELEG_MAX_TAG_COLUMNS 8
bool ls_deleg_shown(const ls_deleg_table *full, ls_deleg_table *merged, const ls_deleg_table **shown);
/* "12 compute nodes, 8 delegated (66.7%) to 2 tags" */
void ls_deleg_summary(const ls_deleg_table *full, ls_buf *b);
double ls_deleg_pct(uint32_t part, uint32_t total); /* 0 when total is 0 */

bool ls_deleg_is_compute(const ls_node *n);
/* A compute node no tag took: a row of the table's "On the CPU" list. */
bool ls_deleg_on_cpu(const ls_node *n);
/* "add.Tensor", "mm" (the overload unless it is "default"), the short target of an unknown op;
 * interned. */
const char *ls_deleg_op_label(const ls_node *n);
/* The tag a lowered module came from: the tag its nodes carry, the one its program records,
 * or else its own name. */
const char *ls_deleg_sub_tag(const ls_submodule *s);

/* The row label of an opaque delegate's calls: "QnnBackend delegate (opaque)" (interned). */
const char *ls_deleg_opaque_label(const ls_submodule *s);

/* What a delegate call passes: its inputs (the arguments after the lowered module) and its
 * outputs, with their bytes by metadata (a dim without a size counts 0). */
typedef struct ls_deleg_io {
    uint32_t n_in, n_out;
    uint64_t in_bytes, out_bytes;
} ls_deleg_io;
void ls_deleg_call_io(const ls_program *p, const ls_node *call, ls_deleg_io *io);

/* A program's delegates as partitions (a .pte's are all it has): per lowered submodule, its
 * backend, blob, compile specs, its calls and what they pass, and whether lowerscope reads the
 * blob (then the compute nodes inside are counted) or not (one opaque call per call). */
typedef struct ls_deleg_part {
    const ls_submodule *sub;
    const ls_node *call; /* the first executorch_call_delegate calling it, NULL: none */
    uint32_t n_calls;
    ls_deleg_io io;      /* of the first call */
    uint64_t blob_bytes; /* 0: no processed blob yet */
    bool readable;       /* sub->program is set */
    uint32_t nodes;      /* compute nodes inside (readable) */
} ls_deleg_part;
/* One entry per submodule of p, in p->subs order (caller frees *parts). */
void ls_deleg_parts(const ls_program *p, ls_deleg_part **parts, uint32_t *n);
/* The compute nodes of p left on the CPU (ls_deleg_on_cpu): "kernels left on the CPU". */
uint32_t ls_deleg_cpu_count(const ls_program *p);

/* Why an untagged compute node of step `step` is on the CPU: the partitioner's reason
 * (ls_cpu_reason_text; n->reason_detail may say more), "unknown op", or, for a node the
 * partitioner has not seen, "not partitioned yet" before the first partition step and "added by
 * PASS, after partitioning" after it. */
const char *ls_deleg_cpu_reason(const ls_history *h, uint32_t step, const ls_node *n);
/* The same with the partitioner's detail, as one sentence (ls_cpu_why): what the CLI prints. */
const char *ls_deleg_cpu_why(const ls_history *h, uint32_t step, const ls_node *n);

/* The CPU nodes of a step grouped by why they stay there, for the delegation table of the CLI
 * and the UI: one group per rule (every node a rule refused, whatever the sentence says of the
 * node), else per reason with its detail ("op not supported", "dtype not supported (float64 not
 * supported)", "added by to_out_variant, after partitioning"). Most nodes first, then by name. */
typedef struct ls_deleg_cpu_group {
    const char *why;     /* "rule const_arg:1", "op not supported", ... (interned) */
    const char *example; /* the first node's whole reason (ls_deleg_cpu_why) */
    uint32_t n;          /* how many nodes */
    uint32_t *nodes;     /* their positions in the step's top-level program, in graph order */
    uint32_t n_ops;      /* the ops among them, most nodes first: ops[k] (ls_deleg_op_label) × op_count[k] */
    const char **ops;
    uint32_t *op_count;
} ls_deleg_cpu_group;

typedef struct ls_deleg_cpu_groups {
    ls_deleg_cpu_group *v;
    uint32_t n;
} ls_deleg_cpu_groups;

void ls_deleg_cpu_groups_build(const ls_history *h, uint32_t step, ls_deleg_cpu_groups *out);
void ls_deleg_cpu_groups_free(ls_deleg_cpu_groups *g);
/* "mm ×112, bmm ×3" (at most max ops, then "…") into b. */
void ls_deleg_cpu_group_ops(const ls_deleg_cpu_group *g, uint32_t max, ls_buf *b);
/* What each backend took, by op, the first 6 of each ("XnnpackBackend took add, mul, +2 more;
 * ..."): what an "op not supported" group is read beside. Appends to b. */
void ls_deleg_backends_took(const ls_deleg_table *full, ls_buf *b);

#endif
