/* Running a bundled program's test cases (bpte.h) on the bundled runtime, checked as
 * ExecuTorch's runtime checks them (devtools/bundled_program/bundled_program.cpp):
 * load_bundled_input gives the case's inputs to the method in order (Tensor, Int, Double,
 * Bool), verify_method_outputs compares every method output with the case's expected output
 * of the same index (tensors only; ls_bp_tensors_close, rtol 1e-5 and atol 1e-8 unless told),
 * and compute_method_output_error_stats gives the mean and largest absolute and relative
 * errors (relative to max(|a|, |e|, 1e-8)) over the floating-point outputs. One runner per
 * method: state carries over from case to case, as on a device running them in turn. The CLI's
 * run and the UI's run screen share it. */
#ifndef LS_BPTE_RUN_H
#define LS_BPTE_RUN_H

#include <stdbool.h>
#include <stdint.h>

#include "bpte.h"
#include "common.h"
#include "program.h"

typedef enum ls_bp_status {
    LS_BP_PASS,       /* every output within tolerance */
    LS_BP_FAIL,       /* an output differs from the expected one */
    LS_BP_ERROR,      /* the case cannot be checked as written (inputs that do not fit, no expected outputs) */
    LS_BP_CANNOT_RUN, /* the method needs what lowerscope lacks (a kernel, a backend) */
} ls_bp_status;
const char *ls_bp_status_text(ls_bp_status s); /* "pass", "FAIL", "error", "cannot run" */

typedef struct ls_bp_output_check {
    bool pass;
    char expected[64], got[64]; /* "float32[2, 3]" */
    double max_abs;             /* the largest |e - a| (floating point outputs) */
    int64_t worst;              /* the first element that differs, -1 none */
    char why[200];              /* when it fails */
} ls_bp_output_check;

typedef struct ls_bp_case_result {
    uint32_t suite, index;
    const char *method;
    ls_bp_status status;
    char message[LS_ERR_MAX];   /* ERROR and CANNOT_RUN: why */
    ls_bp_output_check *outputs;
    uint32_t n_outputs;
    double seconds;
    bool has_stats;             /* compute_method_output_error_stats over the float outputs */
    double mean_abs, max_abs, mean_rel, max_rel;
} ls_bp_case_result;
void ls_bp_case_result_free(ls_bp_case_result *r);

typedef struct ls_bp_runner ls_bp_runner;
/* b must outlive the runner. Programs are made per method on first use. */
ls_bp_runner *ls_bp_runner_new(const ls_bpte *b, double rtol, double atol);
/* Runs case `index` of suite `suite`; the result says how it went (it never fails itself). */
void ls_bp_run_case(ls_bp_runner *r, uint32_t suite, uint32_t index, ls_bp_case_result *res);
/* The program of a suite's method (NULL when it cannot be made: *why says why). */
const ls_program *ls_bp_runner_program(ls_bp_runner *r, uint32_t suite, const char **why);
void ls_bp_runner_free(ls_bp_runner *r);

#endif
