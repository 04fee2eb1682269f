/* lowerscope passes FILE [--backend NAME|FILE]... [--pipeline a,b,...] [--json]: runs the lowering
 * pipeline and prints every step's report and verifier result (JSON: docs/cli.md). Exit 0 when
 * every step ran and verified, 1 when a pass failed or the verifier found errors, 2 bad input. */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "cli.h"
#include "pipeline_cli.h"

int ls_cmd_passes(int argc, char **argv);

#define PASSES_FORMAT_VERSION 1
#define USAGE "passes FILE [--backend NAME|FILE]... [--pipeline a,b,...] [--json] [--model NAME] [--metadata-only]"
static const char HELP[] =
    "usage: lowerscope " USAGE "\n"
    "\n"
    "Runs the lowering pipeline (docs/pipeline.md) and prints every step: its pass and backend, node\n"
    "counts, how many nodes it added, removed and changed, its time (from 0.1 ms up), the verifier's\n"
    "result, then one line per sentence of its report and per verifier finding.\n"
    "\n"
    "options:\n" CLI_PIPELINE_OPTIONS_HELP
    "  --json                one JSON document instead of the text (format_version 1, docs/cli.md)\n"
    CLI_LOAD_OPTIONS_HELP
    "  -h, --help            this help\n"
    "\n"
    "exit codes: 0 every step ran and verified, 1 a pass failed or the verifier found errors in a step,\n"
    "2 unreadable input or bad options, 3 a pass needs what lowerscope lacks (a kernel, an out variant)\n";

static void count_changes(const ls_step *s, uint32_t *add, uint32_t *rem, uint32_t *chg)
{
    *add = *rem = *chg = 0;
    for (uint32_t i = 0; i < s->n_changes; i++) {
        if (s->changes[i].kind == LS_CHANGE_ADDED) (*add)++;
        else if (s->changes[i].kind == LS_CHANGE_REMOVED) (*rem)++;
        else (*chg)++;
    }
}

/* One step as text: all a step's lines but the header's, which needs the step count. */
static void text_step(ls_buf *b, const ls_history *h, uint32_t i)
{
    const ls_step *s = &h->steps[i];
    ls_buf t = {0};
    cli_step_title(&t, h, (int)i);
    char *title = ls_buf_take(&t);
    uint32_t add, rem, chg;
    count_changes(s, &add, &rem, &chg);
    uint32_t nn = s->program ? s->program->n_nodes : 0;
    ls_buf_printf(b, "\n%s: %u node%s", title, nn, nn == 1 ? "" : "s");
    if (s->program && s->program->n_subs)
        ls_buf_printf(b, " + %u lowered module%s", s->program->n_subs, s->program->n_subs == 1 ? "" : "s");
    if (i && add + rem + chg) ls_buf_printf(b, ", +%u -%u ~%u", add, rem, chg);
    else if (i) ls_buf_puts(b, ", no node changed");
    /* under 0.1 ms a time says nothing: left out */
    if (s->seconds >= 10e-3) ls_buf_printf(b, ", %.0f ms", s->seconds * 1e3);
    else if (s->seconds >= 0.1e-3) ls_buf_printf(b, ", %.1f ms", s->seconds * 1e3);
    if (s->error && s->error_kind == LS_ERR_NEEDS) ls_buf_puts(b, ", STOPPED: it needs what lowerscope lacks (exit 3)\n");
    else if (s->error) ls_buf_puts(b, ", FAILED\n");
    else if (s->verify.n_errors) ls_buf_printf(b, ", verifier: %u error%s\n", s->verify.n_errors, s->verify.n_errors == 1 ? "" : "s");
    else ls_buf_puts(b, ", verifier: ok\n");
    free(title);
    if (s->error) ls_buf_printf(b, "  ✗ %s\n", s->error);
    for (uint32_t k = 0; k < s->report.n; k++) ls_buf_printf(b, "  · %s\n", s->report.v[k].text);
    for (uint32_t k = 0; k < s->verify.n; k++) {
        const ls_finding *f = &s->verify.v[k];
        ls_buf_printf(b, "  %s %s%s%s\n", f->severity == LS_SEV_ERROR ? "! error:" : "? warning:", f->program ? f->program : "",
                      f->program ? ": " : "", f->msg);
    }
}

/* One step of the JSON document's "steps" (docs/cli.md), its programs included. */
static void json_step(ls_buf *b, const ls_history *h, uint32_t i)
{
    const ls_step *s = &h->steps[i];
    uint32_t add, rem, chg;
    count_changes(s, &add, &rem, &chg);
    ls_buf_printf(b, "%s\n{\"index\": %u, \"pass\": ", i ? "," : "", i);
    ls_buf_json_str(b, s->pass);
    ls_buf_puts(b, ", \"backend\": ");
    ls_buf_json_str(b, s->detail);
    ls_buf_printf(b, ", \"seconds\": %.6f, \"error\": ", s->seconds);
    ls_buf_json_str(b, s->error);
    ls_buf_printf(b, ",\n \"verify\": {\"ok\": %s, \"errors\": [", s->verify.n_errors ? "false" : "true");
    bool first = true;
    for (int sev = 0; sev < 2; sev++) {
        if (sev == 1) {
            ls_buf_puts(b, "], \"warnings\": [");
            first = true;
        }
        for (uint32_t k = 0; k < s->verify.n; k++) {
            const ls_finding *f = &s->verify.v[k];
            if (f->severity != (sev == 0 ? LS_SEV_ERROR : LS_SEV_WARNING)) continue;
            ls_buf_puts(b, first ? "{\"program\": " : ", {\"program\": ");
            first = false;
            ls_buf_json_str(b, f->program);
            ls_buf_puts(b, ", \"node\": ");
            ls_buf_json_str(b, f->node);
            ls_buf_puts(b, ", \"message\": ");
            ls_buf_json_str(b, f->msg);
            ls_buf_putc(b, '}');
        }
    }
    ls_buf_printf(b, "]},\n \"changes\": {\"added\": %u, \"removed\": %u, \"changed\": %u},\n \"report\": [", add, rem, chg);
    for (uint32_t k = 0; k < s->report.n; k++) {
        ls_buf_puts(b, k ? ",\n  {\"text\": " : "\n  {\"text\": ");
        ls_buf_json_str(b, s->report.v[k].text);
        ls_buf_puts(b, ", \"program\": ");
        ls_buf_json_str(b, s->report.v[k].program);
        ls_buf_puts(b, ", \"node\": ");
        ls_buf_json_str(b, s->report.v[k].node);
        ls_buf_putc(b, '}');
    }
    ls_buf_puts(b, "],\n \"programs\": [");
    const ls_program *p = s->program;
    cli_json_program(b, p, p->name, NULL);
    for (uint32_t k = 0; k < p->n_subs; k++) {
        if (!p->subs[k].program) continue;
        ls_buf_puts(b, ",\n");
        cli_json_program(b, p->subs[k].program, p->subs[k].name, p->subs[k].backend_id);
    }
    ls_buf_puts(b, "]}");
}

/* The steps rendered so far, each as it was complete (the header, which needs the count of
 * steps, is written at the end). */
typedef struct rendered {
    bool release;
    ls_buf steps;
} rendered;

/* Step k is complete: nothing later changes it, so it is rendered now; then, unless
 * LS_KEEP_STEPS is set (the test that compares both), step k's changes and report, rendered,
 * and step k-1, whose program nothing reads any more (step k's changes and verifier result are
 * made, and the next pass reads step k), are released. */
static void on_step(void *ctx, cli_run *r, uint32_t k)
{
    rendered *out = ctx;
    if (r->args.json) json_step(&out->steps, &r->h, k);
    else text_step(&out->steps, &r->h, k);
    if (!out->release) return;
    cli_release_rendered(r, k);
    if (k) cli_release_step(r, k - 1);
}

static void print_text(const cli_run *r, const ls_buf *steps)
{
    const ls_history *h = &r->h;
    printf("%s: %u step%s\n", r->args.path, h->n, h->n == 1 ? "" : "s");
    fwrite(steps->s, 1, steps->len, stdout);
    if (h->not_run) printf("\nno pass ran: %s\n", h->not_run);
}

static void print_json(const cli_run *r, const ls_buf *steps)
{
    const ls_history *h = &r->h;
    ls_buf b = {0};
    ls_buf_printf(&b, "{\"format\": \"lowerscope-passes\", \"format_version\": %d, \"file\": ", PASSES_FORMAT_VERSION);
    ls_buf_json_str(&b, r->args.path);
    ls_buf_puts(&b, ",\n\"steps\": [");
    fwrite(b.s, 1, b.len, stdout);
    fwrite(steps->s, 1, steps->len, stdout);
    b.len = 0;
    ls_buf_puts(&b, "\n],\n\"not_run\": ");
    ls_buf_json_str(&b, h->not_run);
    ls_buf_puts(&b, "}\n");
    fwrite(b.s, 1, b.len, stdout);
    ls_buf_free(&b);
}

int ls_cmd_passes(int argc, char **argv)
{
    if (ls_cli_help(argc, argv, HELP)) return LS_EXIT_OK;
    rendered out = {.release = getenv("LS_KEEP_STEPS") == NULL};
    cli_run r;
    int rc = cli_run_pipeline_watched("passes", USAGE, argc, argv, CLI_JSON, &r, on_step, &out);
    if (rc == LS_EXIT_OK) {
        if (r.args.json) print_json(&r, &out.steps);
        else print_text(&r, &out.steps);
        for (uint32_t i = 0; i < r.h.n; i++)
            if ((r.h.steps[i].error || r.h.steps[i].verify.n_errors) && rc != LS_EXIT_NEEDS)
                rc = r.h.steps[i].error ? cli_step_failure_exit(&r.h.steps[i]) : LS_EXIT_FINDINGS;
        if (r.h.not_run) rc = LS_EXIT_FINDINGS;
    }
    cli_run_free(&r);
    ls_buf_free(&out.steps);
    return rc;
}
