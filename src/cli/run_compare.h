/* The comparing part of lowerscope run (run_compare.c): --compare (the loaded program as the
 * reference of a pipeline step) and --compare-with REF (another file's loaded program). The
 * comparison itself is the core's (compare.h); this file prints it. */
#ifndef LS_RUN_COMPARE_H
#define LS_RUN_COMPARE_H

#include <stdbool.h>
#include <stdint.h>

#include "compare.h"
#include "runtime.h"

typedef struct run_compare run_compare;

/* --compare-with: loads the reference program at path. p is the program being run (its user
 * inputs must be as many). NULL with err set on failure. */
run_compare *run_compare_open(const char *path, const ls_program *p, const ls_compare_opts *o, ls_error *err);
/* --compare: ref (borrowed; the program loaded from path) is the reference. */
run_compare *run_compare_loaded(const ls_program *ref, const char *path, const ls_program *p, const ls_compare_opts *o,
                                ls_error *err);
/* From now on each step also compares the program's values node by node into stats (by node id:
 * --compare only, the reference being the same lineage); the program's runner keeps its values. */
void run_compare_nodes(run_compare *c, struct ls_node_stats *stats);
/* This step's inputs (cloned: the program's run may write into its own). */
void run_compare_inputs(run_compare *c, const ls_value *inputs, uint32_t n);
/* Runs the reference on the step's inputs and compares each output with outs and the state of
 * `program` with the reference's; prints one line per output when print. outs NULL: the
 * program failed this step, the reference only runs (to tell a finding from bad input).
 * -1 when the reference cannot run. */
int run_compare_step(run_compare *c, const ls_value *outs, uint32_t nout, const char *const *names,
                     const ls_runner *program, bool print, ls_error *err);
/* The program failed at this step while the reference ran: a finding, reported at the end. */
void run_compare_program_failed(run_compare *c, int64_t step, const char *msg);
/* The text summary: per output (worst over the steps) and per state tensor, the reference's
 * time, then the verdict line. */
void run_compare_print(const run_compare *c, int64_t steps);
/* Appends `"compare": {...}` (docs/cli.md, run --json). */
void run_compare_json(const run_compare *c, ls_buf *js);
/* Whether the comparison failed: an output or state differs, or the program failed a step. */
bool run_compare_failed(const run_compare *c);
void run_compare_free(run_compare *c);

#endif
