/* ExecuTorch bundled programs (.bpte, "BP08"): the verified reader, each suite's method as a
 * program through everything fuzz_program does, then the test cases run as `run` runs them
 * (bpte_run.h: the case's inputs into the method, its outputs compared with the expected ones)
 * when the method is small enough to run. */
#include <string.h>

#include "bpte.h"
#include "bpte_run.h"
#include "fuzz.h"

#define MAX_SUITES 4
#define MAX_CASES 8

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
    if (size < 8 || memcmp(data + 4, "BP", 2) != 0) return 0; /* other bytes reach other readers */
    ls_bpte b;
    ls_error err;
    if (ls_bpte_read(data, size, "fuzz.bpte", &b, &err) != 0) return 0;
    for (uint32_t s = 0; s < b.n_suites && s < MAX_SUITES; s++) {
        ls_program *p;
        if (ls_bpte_program(&b, b.suites[s].method_name, &p, &err) != 0) continue;
        fuzz_program(p);
        ls_program_unref(p);
    }
    ls_bp_runner *r = ls_bp_runner_new(&b, LS_BP_RTOL, LS_BP_ATOL);
    uint32_t cases = 0;
    for (uint32_t s = 0; s < b.n_suites && s < MAX_SUITES; s++) {
        const char *why;
        const ls_program *p = ls_bp_runner_program(r, s, &why);
        if (p && !fuzz_runnable(p)) continue;
        for (uint32_t c = 0; c < b.suites[s].n_cases && cases < MAX_CASES; c++, cases++) {
            ls_bp_case_result res;
            ls_bp_run_case(r, s, c, &res);
            ls_bp_case_result_free(&res);
        }
    }
    ls_bp_runner_free(r);
    ls_bpte_free(&b);
    return 0;
}
