/* The --compare-with part of lowerscope run (run_compare.c). */
#ifndef LS_RUN_COMPARE_H
#define LS_RUN_COMPARE_H

#include <stdbool.h>
#include <stdint.h>

#include "runtime.h"

typedef struct run_compare run_compare;

/* Loads the reference program at path and prepares its runner; p is the program being run (its
 * user inputs must be as many). NULL with err set on failure. */
run_compare *run_compare_open(const char *path, const ls_program *p, ls_error *err);
/* This step's inputs (cloned: the program's run may write into its own). */
void run_compare_inputs(run_compare *c, const ls_value *inputs, uint32_t n);
/* Runs the reference on the step's inputs and compares each output with outs; prints one line per
 * output when print, appends JSON objects to json. -1 when the reference cannot run. */
int run_compare_step(run_compare *c, int64_t step, const ls_value *outs, uint32_t nout, const char *const *names,
                     bool print, ls_buf *json, ls_error *err);
/* How many outputs differed (and, in *compared, how many were compared). */
uint32_t run_compare_failed(const run_compare *c, uint32_t *compared);
void run_compare_free(run_compare *c);

#endif
