/* The run screen of a bundled program (.bpte): its test cases run and checked as ExecuTorch's
 * runtime checks them (bpte_run.h), a line per case, the outputs that differ under it. The
 * same runner as `lowerscope run X.bpte`. */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "bpte_run.h"
#include "ui.h"

bool ui_run_cases_lines(ui *u, ui_lines *out)
{
    if (!u->h->path || !ls_bpte_is_file(u->h->path)) return false;
    ls_bpte b;
    ls_error err = {0};
    if (ls_bpte_read_file(u->h->path, &b, &err) != 0) {
        ui_lines_add_wrapped(out, UI_R_ERROR, err.msg, u->cols - 4);
        return true;
    }
    uint32_t total = 0, passed = 0;
    for (uint32_t s = 0; s < b.n_suites; s++) total += b.suites[s].n_cases;
    ui_lines_add(out, UI_R_TITLE, -1, "bundled test cases: %u, checked as ExecuTorch's verify_method_outputs (rtol %g, atol %g)",
                 total, LS_BP_RTOL, LS_BP_ATOL);
    ls_bp_runner *r = ls_bp_runner_new(&b, LS_BP_RTOL, LS_BP_ATOL);
    for (uint32_t s = 0; s < b.n_suites; s++)
        for (uint32_t c = 0; c < b.suites[s].n_cases; c++) {
            ls_bp_case_result res;
            ls_bp_run_case(r, s, c, &res);
            int role = res.status == LS_BP_PASS ? UI_R_OK : res.status == LS_BP_FAIL ? UI_R_ERROR : UI_R_WARN;
            passed += res.status == LS_BP_PASS;
            char err_text[64] = "";
            if (res.has_stats) snprintf(err_text, sizeof err_text, ", max abs error %.3g", res.max_abs);
            if (res.status == LS_BP_PASS || res.status == LS_BP_FAIL)
                ui_lines_add(out, role, -1, "  %s case %u: %s (%u output%s%s)", res.method ? res.method : "?", c,
                             ls_bp_status_text(res.status), res.n_outputs, res.n_outputs == 1 ? "" : "s", err_text);
            else
                ui_lines_add(out, role, -1, "  %s case %u: %s", res.method ? res.method : "?", c, ls_bp_status_text(res.status));
            if (res.status == LS_BP_ERROR || res.status == LS_BP_CANNOT_RUN)
                ui_lines_add_wrapped(out, role, res.message, u->cols - 6);
            for (uint32_t k = 0; k < res.n_outputs; k++)
                if (!res.outputs[k].pass) ui_lines_add(out, UI_R_ERROR, -1, "    output %u: %s", k, res.outputs[k].why);
            ls_bp_case_result_free(&res);
        }
    ui_lines_add(out, passed == total ? UI_R_OK : UI_R_ERROR, -1, "%u of %u case%s passed", passed, total,
                 total == 1 ? "" : "s");
    ls_bp_runner_free(r);
    ls_bpte_free(&b);
    return true;
}
