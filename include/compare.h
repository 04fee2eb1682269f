/* Comparing run results: an output of one program against the same output of a reference
 * (lowerscope run --compare-with, the export tests). A value passes when every element has
 * |got - want| <= atol + rtol * |want| (NaN against NaN passes), with the same kind, dtype
 * category and shape. */
#ifndef LS_COMPARE_H
#define LS_COMPARE_H

#include <stdbool.h>
#include <stdint.h>

#include "runtime.h"

#define LS_COMPARE_RTOL 1e-5
#define LS_COMPARE_ATOL 1e-6

typedef struct ls_value_diff {
    bool pass;
    double max_abs, max_rel; /* over all elements (0 when they are equal) */
    int64_t worst;           /* the element with the largest excess over the tolerance, -1 when none */
    char why[160];           /* when it fails: "shape float32[4] against float32[2, 2]", "element 3: 1.5 against 1" */
} ls_value_diff;

void ls_compare_values(const ls_value *got, const ls_value *want, double rtol, double atol, ls_value_diff *d);

#endif
