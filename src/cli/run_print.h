/* How lowerscope run shows values: text lines and JSON (run_print.c). */
#ifndef LS_RUN_PRINT_H
#define LS_RUN_PRINT_H

#include <stdbool.h>
#include <stdint.h>

#include "runtime.h"

#define RUN_FIRST_VALUES 8 /* values shown per tensor */

/* "  out 0 mm   float32[4, 1]  min ..  max ..  mean ..", then the first values */
void run_print_value(const char *label, const ls_value *v);
/* A state tensor row by row (its last dimension), at most max_rows rows, trailing zero rows summed up. */
void run_print_state(const char *name, const ls_tensor *t, int64_t max_rows);

/* A number as JSON: non-finite ones as the strings "NaN", "Infinity", "-Infinity". */
void run_json_num(ls_buf *b, double v);
/* "dtype", "shape", with_stats: "min", "max", "mean", "nan"; then "first" (no braces). */
void run_json_tensor(ls_buf *b, const ls_tensor *t, bool with_stats);
/* A tensor's fields as above, or "value" for a scalar. */
void run_json_value(ls_buf *b, const ls_value *v);

/* Where a run's time went, after the CPU kernels: "; lowered_module_0 (ArithBackend, simulated
 * by BundledBackend) 0.010 ms" per delegate (printed), and the delegates as a JSON array. */
void run_print_delegate_times(const ls_run_stats *st);
void run_json_delegate_times(ls_buf *b, const ls_run_stats *st);

#endif
