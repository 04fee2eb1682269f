/* The delegation table of a program, as `lowerscope partitions` prints it and the UI's `d`
 * screen shows it: per op, how many compute nodes each tag took and how many stayed on the CPU.
 *
 * Compute nodes are the call nodes other than getitem, executorch_call_delegate and
 * memory.alloc (an out argument's memory: the to_executorch steps add one per call, and none
 * does any work). Nodes of a lowered module count for the tag they carry, or else for the tag
 * the module came from (ls_deleg_sub_tag). */
#ifndef LS_DELEGATION_H
#define LS_DELEGATION_H

#include <stdbool.h>
#include <stdint.h>

#include "history.h"
#include "program.h"

typedef struct ls_deleg_col {
    const char *tag;     /* interned; with ls_deleg_by_backend, the backend id */
    const char *backend; /* NULL when the program does not say */
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
} ls_deleg_table;

void ls_deleg_table_build(const ls_program *p, ls_deleg_table *t);
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

/* Why an untagged compute node of step `step` is on the CPU: the partitioner's reason
 * (ls_cpu_reason_text; n->reason_detail may say more), "unknown op", or, for a node the
 * partitioner has not seen, "not partitioned yet" before the first partition step and "added by
 * PASS, after partitioning" after it. */
const char *ls_deleg_cpu_reason(const ls_history *h, uint32_t step, const ls_node *n);

#endif
