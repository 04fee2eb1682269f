/* Comparing run results: an output of one program against the same output of a reference
 * (lowerscope run --compare / --compare-with, the run screen of the UI, the export tests).
 *
 * A value passes when every element has |got - want| <= atol + rtol * |want| (NaN against NaN
 * passes), with the same kind, dtype category and shape. The tolerance depends on the
 * reference's dtype (ls_compare_tolerance; the table is in docs/cli.md). */
#ifndef LS_COMPARE_H
#define LS_COMPARE_H

#include <stdbool.h>
#include <stdint.h>

#include "runtime.h"

/* float32's default tolerance */
#define LS_COMPARE_RTOL 1e-5
#define LS_COMPARE_ATOL 1e-6

typedef struct ls_value_diff {
    bool pass;
    double max_abs, max_rel; /* over all elements (0 when they are equal) */
    int64_t worst;           /* the element with the largest excess over the tolerance, -1 when none */
    char why[160];           /* when it fails: "shape float32[4] against float32[2, 2]", "element 3: 1.5 against 1" */
} ls_value_diff;

void ls_compare_values(const ls_value *got, const ls_value *want, double rtol, double atol, ls_value_diff *d);

/* The default tolerance for values of dtype dt: float32 rtol 1e-5, atol 1e-6; float64 1e-7,
 * 1e-7; float16 1e-3, 1e-5; bfloat16 1.6e-2, 1e-5 (torch.testing's); integers and bool exact
 * (0, 0). LS_DT_UNKNOWN (a Python float) takes float32's. */
void ls_compare_tolerance(ls_dtype dt, double *rtol, double *atol);

/* ---- a reference program run next to the program being checked, on the same inputs */

typedef struct ls_compare_opts {
    double rtol, atol; /* for floating-point values; < 0: the dtype's default. Integers and bool stay exact. */
} ls_compare_opts;

/* One comparison: a user output at one run, or a state tensor over all runs so far. */
typedef struct ls_compare_item {
    int64_t run;          /* the run compared (a state: its first failing run, else the last one) */
    uint32_t index;       /* output index, or state index in the program's runner */
    const char *name;     /* output name ("(constant)" for a constant output), or the program's state name
                             ("lowered_module_0/cache"); NULL for a reference state the program lacks */
    const char *ref_name; /* the reference's name of the output; of a state, the reference's state of the
                             same target ("cache"), NULL when none */
    ls_dtype dtype;       /* the reference value's (LS_DT_UNKNOWN: not a tensor) */
    double rtol, atol;    /* the tolerance applied */
    bool compared;        /* false for a program state the reference has no counterpart of (not counted) */
    ls_value_diff d;
} ls_compare_item;

typedef struct ls_compare_run ls_compare_run;

/* Prepares the reference's runner. p is the program checked: both must take as many user
 * inputs. `where` names the reference in messages (a file, "the loaded program"). NULL with err
 * set when the reference cannot run. */
ls_compare_run *ls_compare_run_new(const ls_program *ref, const ls_program *p, const char *where,
                                   const ls_compare_opts *opts, ls_error *err);
/* The inputs of the next run, given before the program runs on them (they are cloned: a
 * program may write into its inputs). */
void ls_compare_run_inputs(ls_compare_run *c, const ls_value *inputs, uint32_t n);
/* Runs the reference on those inputs. Then, when outs is not NULL, compares the program's
 * outputs of this run with the reference's (one item each; names may be NULL) and, when
 * `program` is not NULL, the program runner's state with the reference's: a state matches the
 * reference's state of the same target (the part of its name after the last '/', so
 * "lowered_module_0/cache" is compared with "cache"). -1 with err set when the reference fails
 * or the number of outputs differs. */
int ls_compare_run_step(ls_compare_run *c, const ls_value *outs, uint32_t nout, const char *const *names,
                        const ls_runner *program, ls_error *err);
/* Every output item so far, in run order; the state items (one per state, over all runs). */
const ls_compare_item *ls_compare_run_outputs(const ls_compare_run *c, uint32_t *n);
const ls_compare_item *ls_compare_run_states(const ls_compare_run *c, uint32_t *n);
/* Items compared and, returned, how many failed (outputs and states). */
uint32_t ls_compare_run_failed(const ls_compare_run *c, uint32_t *compared);
/* The runs done so far. */
int64_t ls_compare_run_count(const ls_compare_run *c);
/* The reference's runner (its time: ls_runner_stats). */
const ls_runner *ls_compare_run_reference(const ls_compare_run *c);
void ls_compare_run_free(ls_compare_run *c);

/* ---- node by node (the UI's run overlay: where a lowered program starts to go wrong) */
struct ls_node_stats;
/* Compares every call node's value in program's last run with the value of the same node in
 * reference's last run (the same id, ids being stable from step to step; a delegate's getitem
 * with the node inside the lowered module it stands for), with the tolerance of the reference
 * value's dtype (opts override it for floating point), into stats (of program's program). Both
 * runners must keep their values (ls_runner_observe). */
void ls_compare_nodes(const ls_runner *program, const ls_runner *reference, const ls_compare_opts *opts, int64_t run,
                      struct ls_node_stats *stats);
/* From now on, each ls_compare_run_step given the program's runner also compares node by node
 * into stats (borrowed); the program's runner must keep its values (ls_runner_observe). */
void ls_compare_run_nodes(ls_compare_run *c, struct ls_node_stats *stats);

/* Folds item x (a later run of the same output or state) into acc: largest differences, first
 * failure kept. */
void ls_compare_item_merge(ls_compare_item *acc, const ls_compare_item *x);
/* "rtol 1e-05, atol 1e-06" or "exact" */
const char *ls_compare_tolerance_text(double rtol, double atol, char *buf, size_t cap);

#endif
