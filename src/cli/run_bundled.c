/* lowerscope run X.bpte: every bundled test case run and checked as ExecuTorch's runtime
 * checks it (bpte_run.h), one line per case, or JSON (docs/cli.md). */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "bpte_run.h"
#include "run_devtools.h"
#include "run_print.h"

static void json_case(ls_buf *b, const ls_bp_case_result *r)
{
    ls_buf_puts(b, "{\"method\": ");
    ls_buf_json_str(b, r->method);
    ls_buf_printf(b, ", \"suite\": %u, \"case\": %u, \"status\": ", r->suite, r->index);
    ls_buf_json_str(b, r->status == LS_BP_PASS ? "pass" : r->status == LS_BP_FAIL ? "fail" : r->status == LS_BP_ERROR ? "error" : "cannot_run");
    if (r->status == LS_BP_ERROR || r->status == LS_BP_CANNOT_RUN) {
        ls_buf_puts(b, ", \"message\": ");
        ls_buf_json_str(b, r->message);
    }
    ls_buf_puts(b, ", \"ms\": ");
    run_json_num(b, r->seconds * 1e3);
    if (r->has_stats) {
        ls_buf_puts(b, ", \"error_stats\": {\"mean_abs\": ");
        run_json_num(b, r->mean_abs);
        ls_buf_puts(b, ", \"max_abs\": ");
        run_json_num(b, r->max_abs);
        ls_buf_puts(b, ", \"mean_rel\": ");
        run_json_num(b, r->mean_rel);
        ls_buf_puts(b, ", \"max_rel\": ");
        run_json_num(b, r->max_rel);
        ls_buf_puts(b, "}");
    }
    ls_buf_puts(b, ", \"outputs\": [");
    for (uint32_t k = 0; k < r->n_outputs; k++) {
        const ls_bp_output_check *o = &r->outputs[k];
        ls_buf_printf(b, "%s{\"index\": %u, \"pass\": %s, \"expected\": ", k ? ", " : "", k, o->pass ? "true" : "false");
        ls_buf_json_str(b, o->expected);
        ls_buf_puts(b, ", \"got\": ");
        ls_buf_json_str(b, o->got);
        ls_buf_puts(b, ", \"max_abs\": ");
        run_json_num(b, o->max_abs);
        if (!o->pass) {
            ls_buf_printf(b, ", \"first_mismatch\": %lld, \"why\": ", (long long)o->worst);
            ls_buf_json_str(b, o->why);
        }
        ls_buf_puts(b, "}");
    }
    ls_buf_puts(b, "]}");
}

/* The case's line names the file and the case already: the message without them at its start
 * ("FILE: forward case 0: FILE: program: ..." reads "program: ..."). */
static const char *case_message(const char *msg, const char *file, const ls_bp_case_result *r)
{
    size_t fl = strlen(file);
    for (;;) {
        char head[320];
        snprintf(head, sizeof head, "%s case %u: ", r->method ? r->method : "?", r->index);
        if (!strncmp(msg, file, fl) && !strncmp(msg + fl, ": ", 2)) msg += fl + 2;
        else if (!strncmp(msg, head, strlen(head))) msg += strlen(head);
        else return msg;
    }
}

static void print_case(const ls_bp_case_result *r, const char *file)
{
    printf("  %s case %u: %s", r->method ? r->method : "?", r->index, ls_bp_status_text(r->status));
    if (r->status == LS_BP_PASS || r->status == LS_BP_FAIL) {
        printf("  (%u output%s", r->n_outputs, r->n_outputs == 1 ? "" : "s");
        if (r->has_stats) printf(", max abs error %.3g, max rel error %.3g", r->max_abs, r->max_rel);
        printf("; %.3f ms)\n", r->seconds * 1e3);
    } else {
        printf(": %s\n", case_message(r->message, file, r));
    }
    for (uint32_t k = 0; k < r->n_outputs; k++)
        if (!r->outputs[k].pass) printf("    output %u: %s\n", k, r->outputs[k].why);
}

int cli_run_bundled(const cli_devtools_run *o)
{
    ls_bpte b;
    ls_error err;
    if (ls_bpte_read_file(o->path, &b, &err) != 0) {
        ls_cli_error("%s", err.msg);
        return LS_EXIT_INPUT;
    }
    double rtol = o->rtol >= 0 ? o->rtol : LS_BP_RTOL, atol = o->atol >= 0 ? o->atol : LS_BP_ATOL;
    ls_bp_runner *r = ls_bp_runner_new(&b, rtol, atol);
    uint32_t total = 0, passed = 0, failed = 0, errors = 0, cannot = 0;
    for (uint32_t s = 0; s < b.n_suites; s++) total += b.suites[s].n_cases;
    ls_buf js = {0};
    ls_buf_puts(&js, "{\n  \"format_version\": 1,\n  \"file\": ");
    ls_buf_json_str(&js, o->path);
    ls_buf_puts(&js, ",\n  \"rtol\": ");
    run_json_num(&js, rtol);
    ls_buf_puts(&js, ", \"atol\": ");
    run_json_num(&js, atol);
    ls_buf_puts(&js, ",\n  \"cases\": [");
    if (!o->json)
        printf("%s: %u test case%s in %u suite%s, compared as ExecuTorch's verify_method_outputs (rtol %g, atol %g)\n",
               o->path, total, total == 1 ? "" : "s", b.n_suites, b.n_suites == 1 ? "" : "s", rtol, atol);
    bool first = true;
    for (uint32_t s = 0; s < b.n_suites; s++)
        for (uint32_t c = 0; c < b.suites[s].n_cases; c++) {
            ls_bp_case_result res;
            ls_bp_run_case(r, s, c, &res);
            passed += res.status == LS_BP_PASS;
            failed += res.status == LS_BP_FAIL;
            errors += res.status == LS_BP_ERROR;
            cannot += res.status == LS_BP_CANNOT_RUN;
            if (o->json) {
                ls_buf_puts(&js, first ? "\n    " : ",\n    ");
                json_case(&js, &res);
            } else {
                print_case(&res, b.name);
            }
            first = false;
            ls_bp_case_result_free(&res);
        }
    ls_buf_printf(&js, "\n  ],\n  \"summary\": {\"cases\": %u, \"passed\": %u, \"failed\": %u, \"errors\": %u, \"cannot_run\": %u}\n}\n",
                  total, passed, failed, errors, cannot);
    if (o->json) fputs(js.s, stdout);
    else {
        printf("%u case%s: %u passed, %u failed", total, total == 1 ? "" : "s", passed, failed);
        if (errors) printf(", %u could not be checked", errors);
        if (cannot) printf(", %u need%s what lowerscope lacks", cannot, cannot == 1 ? "s" : "");
        printf("\n");
    }
    ls_buf_free(&js);
    ls_bp_runner_free(r);
    ls_bpte_free(&b);
    if (failed || errors) return LS_EXIT_FINDINGS;
    if (cannot) return LS_EXIT_NEEDS;
    return LS_EXIT_OK;
}
