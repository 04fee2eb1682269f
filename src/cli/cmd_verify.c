/* lowerscope verify FILE [--model NAME] [--metadata-only] [--json]: runs the verifier on a
 * program and its lowered submodules; on a .pte, first the checks ExecuTorch's runtime makes
 * when it loads the program and its methods (pte_check.h). Exit 0 valid, 1 errors (listed), 2
 * unreadable input. */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "check_cli.h"
#include "cli.h"
#include "verify.h"

int ls_cmd_verify(int argc, char **argv);

#define USAGE "verify FILE [--model NAME] [--metadata-only] [--json]"
static const char HELP[] =
    "usage: lowerscope " USAGE "\n"
    "\n"
    "Runs the verifier on the program and on each lowered submodule, and lists every finding.\n"
    "On a .pte it first makes the checks ExecuTorch's runtime makes when it loads the program\n"
    "and each method (planned memory, constants, segments, operators, delegates, instruction\n"
    "arguments) and lists each failure in the runtime's words, with the kernels and backends\n"
    "the file needs.\n"
    "\n"
    "options:\n"
    "  --model NAME          which models/NAME.json of an archive holding several\n"
    "  --metadata-only       do not read weight data (the checks of data against shapes are skipped)\n"
    "  --json                the results as JSON (docs/cli.md)\n"
    CLI_PTE_OPTIONS_HELP
    "  -h, --help            this help\n"
    "\n"
    "exit codes: 0 valid (warnings allowed), 1 verifier errors or a file the runtime refuses,\n"
    "2 unreadable input or bad usage, 3 a file lowerscope cannot read the weights of (a big-endian\n"
    "archive: --metadata-only reads it without them), out of memory\n";

static void print_findings(const char *path, const ls_verify_result *vr, const ls_program *p)
{
    for (uint32_t i = 0; i < vr->n; i++) {
        const ls_finding *f = &vr->v[i];
        printf("%s: %s%s%s: %s\n", path, f->program ? f->program : "", f->program ? ": " : "",
               f->severity == LS_SEV_ERROR ? "error" : "warning", f->msg);
    }
    uint32_t warnings = vr->n - vr->n_errors;
    uint32_t subs = 0;
    for (uint32_t i = 0; i < p->n_subs; i++) subs += p->subs[i].program != NULL;
    if (vr->n_errors)
        printf("%s: invalid: %u error%s, %u warning%s\n", path, vr->n_errors, vr->n_errors == 1 ? "" : "s", warnings,
               warnings == 1 ? "" : "s");
    else {
        printf("%s: valid: %u node%s", path, p->n_nodes, p->n_nodes == 1 ? "" : "s");
        if (subs) printf(", %u lowered submodule%s", subs, subs == 1 ? "" : "s");
        if (!p->has_weights) printf(", metadata only (weight data not checked)");
        printf(", %u warning%s\n", warnings, warnings == 1 ? "" : "s");
    }
}

static void json_findings(ls_buf *b, const ls_verify_result *vr)
{
    ls_buf_printf(b, "{\"ok\": %s, \"errors\": %u, \"warnings\": %u, \"findings\": [", vr->n_errors ? "false" : "true",
                  vr->n_errors, vr->n - vr->n_errors);
    for (uint32_t i = 0; i < vr->n; i++) {
        const ls_finding *f = &vr->v[i];
        ls_buf_printf(b, "%s{\"severity\": \"%s\", \"program\": ", i ? ", " : "",
                      f->severity == LS_SEV_ERROR ? "error" : "warning");
        ls_buf_json_str(b, f->program);
        ls_buf_puts(b, ", \"node\": ");
        ls_buf_json_str(b, f->node);
        ls_buf_puts(b, ", \"message\": ");
        ls_buf_json_str(b, f->msg);
        ls_buf_putc(b, '}');
    }
    ls_buf_puts(b, "]}");
}

int ls_cmd_verify(int argc, char **argv)
{
    if (ls_cli_help(argc, argv, HELP)) return LS_EXIT_OK;
    cli_args a;
    if (ls_cli_parse("verify", USAGE, argc, argv, CLI_JSON, &a) != LS_EXIT_OK) return LS_EXIT_INPUT;
    const char *file = a.path;
    bool json = a.json;
    ls_buf out = {0};
    if (json) ls_buf_puts(&out, "{\"format_version\": 1, \"file\": ");
    if (json) ls_buf_json_str(&out, file);
    /* A .pte (or the one a .bpte embeds): the runtime's checks first; a file they refuse is not
     * loaded further (the reader would stop at its first bad reference). */
    bool refused = false;
    if (file && (cli_is_pte(file) || cli_is_bpte(file))) {
        ls_pte_check_report rep;
        ls_error err;
        if (cli_runtime_check(file, &rep, &err) != 0) {
            ls_cli_error("verify: %s", err.msg);
            ls_buf_free(&out);
            return LS_EXIT_INPUT;
        }
        if (json) {
            ls_buf_puts(&out, ", \"runtime\": ");
            ls_pte_check_report_json(&rep, &out);
        } else {
            ls_pte_check_report_text(&rep, file, &out);
            fputs(out.s ? out.s : "", stdout);
            out.len = 0;
        }
        refused = rep.n_fails > 0;
        ls_pte_check_report_free(&rep);
    }
    int rc = LS_EXIT_OK;
    if (!refused) {
        ls_program *p;
        ls_error err;
        if (ls_load(file, &a.load, &p, &err) != 0) {
            ls_cli_error("%s", err.msg);
            ls_buf_free(&out);
            return ls_cli_exit_of(&err);
        }
        ls_verify_result vr;
        ls_verify(p, &vr);
        if (json) {
            ls_buf_puts(&out, ", \"verify\": ");
            json_findings(&out, &vr);
        } else {
            print_findings(a.path, &vr, p);
        }
        if (vr.n_errors) rc = LS_EXIT_FINDINGS;
        ls_verify_result_free(&vr);
        ls_program_unref(p);
    } else {
        rc = LS_EXIT_FINDINGS;
        if (json) ls_buf_puts(&out, ", \"verify\": null");
    }
    if (json) {
        ls_buf_puts(&out, "}\n");
        fputs(out.s, stdout);
    }
    ls_buf_free(&out);
    return rc;
}
