/* lowerscope diff FILE --step S [--backend NAME|FILE]... [--pipeline ...]: what step S changed
 * against the step before, one line per node: "+" added, "-" removed, "~" changed (before and
 * after), prefixed with the lowered module for nodes inside one; then the step's report. */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "cli.h"
#include "pipeline_cli.h"

int ls_cmd_diff(int argc, char **argv);

#define USAGE "diff FILE --step S [--backend NAME|FILE]... [--pipeline a,b,...] [--model NAME] [--metadata-only]"
static const char HELP[] =
    "usage: lowerscope " USAGE "\n"
    "\n"
    "What step S of the lowering pipeline changed against the step before, one line per node: + added,\n"
    "- removed, ~ changed (with the node before on a `was:` line); nodes inside a lowered module are\n"
    "prefixed with it. Then the step's report.\n"
    "\n"
    "options:\n" CLI_STEP_OPTION_HELP CLI_PIPELINE_OPTIONS_HELP CLI_LOAD_OPTIONS_HELP
    "  -h, --help            this help\n"
    "\n"
    "exit codes: 0 printed, 2 unreadable input, no such step or bad options\n";

static const ls_program *program_of(const ls_program *top, const char *sub)
{
    if (!top || !sub) return top;
    const ls_submodule *s = ls_program_sub(top, sub);
    return s ? s->program : NULL;
}

static char *describe(const ls_program *p, uint32_t id)
{
    const ls_node *n = p ? ls_program_node(p, id) : NULL;
    if (!n) return ls_strdup("?");
    ls_buf b = {0};
    cli_node_text(&b, p, n);
    return ls_buf_take(&b);
}

int ls_cmd_diff(int argc, char **argv)
{
    if (ls_cli_help(argc, argv, HELP)) return LS_EXIT_OK;
    cli_run r;
    int rc = cli_run_pipeline("diff", USAGE, argc, argv, CLI_STEP, &r);
    if (rc != LS_EXIT_OK) {
        cli_run_free(&r);
        return rc;
    }
    if (!r.args.step) {
        ls_cli_error("diff: which step? (usage: lowerscope %s)", USAGE);
        cli_run_free(&r);
        return LS_EXIT_INPUT;
    }
    if (r.h.not_run) cli_note_not_run(&r.h);
    int s = cli_find_step(&r.h, r.args.step);
    if (s < 0) {
        cli_run_free(&r);
        return LS_EXIT_INPUT;
    }
    const ls_step *st = &r.h.steps[s];
    const ls_program *before = s > 0 ? r.h.steps[s - 1].program : NULL;
    ls_buf t = {0};
    cli_step_title(&t, &r.h, s);
    char *title = ls_buf_take(&t);
    printf("%s, %s: %u change%s\n", r.args.path, title, st->n_changes, st->n_changes == 1 ? "" : "s");
    free(title);
    if (st->error) printf("✗ %s\n", st->error);
    for (uint32_t i = 0; i < st->n_changes; i++) {
        const ls_change *c = &st->changes[i];
        const char *where = c->program ? c->program : "";
        const char *sep = c->program ? "/" : "";
        if (c->kind == LS_CHANGE_ADDED) {
            char *d = describe(program_of(st->program, c->program), c->node_id);
            printf("+ %s%s%s: %s\n", where, sep, c->node, d);
            free(d);
        } else if (c->kind == LS_CHANGE_REMOVED) {
            char *d = describe(program_of(before, c->program), c->node_id);
            printf("- %s%s%s: %s\n", where, sep, c->node, d);
            free(d);
        } else {
            char *a = describe(program_of(before, c->program), c->node_id);
            char *b = describe(program_of(st->program, c->program), c->node_id);
            const ls_node *old = program_of(before, c->program) ? ls_program_node(program_of(before, c->program), c->node_id) : NULL;
            if (old && old->name != c->node) printf("~ %s%s%s (was %s): %s\n", where, sep, c->node, old->name, b);
            else printf("~ %s%s%s: %s\n", where, sep, c->node, b);
            if (strcmp(a, b) != 0) printf("      was: %s\n", a);
            free(a);
            free(b);
        }
    }
    for (uint32_t k = 0; k < st->report.n; k++) printf("  · %s\n", st->report.v[k].text);
    cli_run_free(&r);
    return LS_EXIT_OK;
}
