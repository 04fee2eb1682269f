/* lowerscope verify FILE [--model NAME] [--metadata-only]: runs the verifier on a program and
 * its lowered submodules. Exit 0 valid, 1 verifier errors (listed), 2 unreadable input. */
#include <stdio.h>
#include <string.h>

#include "cli.h"
#include "verify.h"

int ls_cmd_verify(int argc, char **argv);

#define USAGE "verify FILE [--model NAME] [--metadata-only]"
static const char HELP[] =
    "usage: lowerscope " USAGE "\n"
    "\n"
    "Runs the verifier on the program and on each lowered submodule, and lists every finding.\n"
    "\n"
    "options:\n"
    "  --model NAME          which models/NAME.json of an archive holding several\n"
    "  --metadata-only       do not read weight data (the checks of data against shapes are skipped)\n"
    "  -h, --help            this help\n"
    "\n"
    "exit codes: 0 valid (warnings allowed), 1 verifier errors, 2 unreadable input or bad usage\n";

int ls_cmd_verify(int argc, char **argv)
{
    if (ls_cli_help(argc, argv, HELP)) return LS_EXIT_OK;
    cli_args a;
    ls_program *p;
    if (ls_cli_load("verify", USAGE, argc, argv, 0, &a, &p) != LS_EXIT_OK) return LS_EXIT_INPUT;
    const char *path = a.path;
    ls_verify_result vr;
    ls_verify(p, &vr);
    for (uint32_t i = 0; i < vr.n; i++) {
        const ls_finding *f = &vr.v[i];
        printf("%s: %s%s%s: %s\n", path, f->program ? f->program : "", f->program ? ": " : "",
               f->severity == LS_SEV_ERROR ? "error" : "warning", f->msg);
    }
    uint32_t warnings = vr.n - vr.n_errors;
    uint32_t subs = 0;
    for (uint32_t i = 0; i < p->n_subs; i++) subs += p->subs[i].program != NULL;
    if (vr.n_errors)
        printf("%s: invalid: %u error%s, %u warning%s\n", path, vr.n_errors, vr.n_errors == 1 ? "" : "s", warnings,
               warnings == 1 ? "" : "s");
    else {
        printf("%s: valid: %u nodes", path, p->n_nodes);
        if (subs) printf(", %u lowered submodule%s", subs, subs == 1 ? "" : "s");
        if (!p->has_weights) printf(", metadata only (weight data not checked)");
        printf(", %u warning%s\n", warnings, warnings == 1 ? "" : "s");
    }
    int rc = vr.n_errors ? LS_EXIT_FINDINGS : LS_EXIT_OK;
    ls_verify_result_free(&vr);
    ls_program_unref(p);
    return rc;
}
