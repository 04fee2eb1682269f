/* Shared by the passes, partitions and diff commands. */
#include "pipeline_cli.h"

#include <inttypes.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "cli.h"
#include "progress.h"
#include "signature.h"
#include "ops.h"

typedef struct step_watch {
    cli_run *r;
    void (*step_done)(void *ctx, cli_run *r, uint32_t k);
    void *ctx;
} step_watch;

static void on_step_done(void *ctx, const ls_history *h, uint32_t k)
{
    (void)h; /* the same as &w->r->h: the pipeline fills the run's own history */
    step_watch *w = ctx;
    w->step_done(w->ctx, w->r, k);
}

int cli_run_pipeline(const char *cmd, const char *usage, int argc, char **argv, unsigned accept, cli_run *r)
{
    return cli_run_pipeline_watched(cmd, usage, argc, argv, accept, r, NULL, NULL);
}

int cli_run_pipeline_at_step(const char *cmd, const char *usage, int argc, char **argv, unsigned accept, cli_run *r,
                             int *step)
{
    int rc = cli_run_pipeline(cmd, usage, argc, argv, accept, r);
    if (rc != LS_EXIT_OK) {
        cli_run_free(r);
        return rc;
    }
    *step = cli_find_step(&r->h, r->args.step);
    if (*step < 0) {
        cli_run_free(r);
        return LS_EXIT_INPUT;
    }
    return LS_EXIT_OK;
}

void cli_release_step(cli_run *r, uint32_t k)
{
    /* a recorded file's steps are the loaded program's own members: releasing frees nothing */
    if (k >= r->h.n_planned || (r->loaded && ls_program_recorded(r->loaded))) return;
    ls_program_unref(r->h.steps[k].program);
    r->h.steps[k].program = NULL;
    ls_program_unref(r->loaded); /* step 0 holds its own reference to it */
    r->loaded = NULL;
}

void cli_release_rendered(cli_run *r, uint32_t k)
{
    if (k >= r->h.n_planned) return;
    ls_step *s = &r->h.steps[k];
    free(s->changes);
    s->changes = NULL;
    s->n_changes = 0;
    ls_report_free(&s->report);
}

int cli_run_pipeline_watched(const char *cmd, const char *usage, int argc, char **argv, unsigned accept, cli_run *r,
                             void (*step_done)(void *ctx, cli_run *r, uint32_t k), void *ctx)
{
    memset(r, 0, sizeof *r);
    ls_pipeline_opts_init(&r->opts);
    ls_error err;
    if (ls_pipeline_opts_parse(&r->opts, &argc, argv, &err) != 0) {
        ls_cli_error("%s: %s", cmd, err.msg);
        return LS_EXIT_INPUT;
    }
    int loaded = ls_cli_load(cmd, usage, argc, argv, accept, &r->args, &r->loaded);
    if (loaded != LS_EXIT_OK) return loaded;
    ls_pipeline_watch watch = {.step_begin = ls_progress_step}; /* a progress line on a terminal */
    step_watch sw = {r, step_done, ctx};
    if (step_done) {
        watch.step_done = on_step_done;
        watch.ctx = &sw;
    }
    if (!r->opts.watch) r->opts.watch = &watch;
    ls_progress_tty_begin();
    int rc = ls_pipeline_run(r->loaded, &r->opts, &r->h, &err);
    ls_progress_tty_end();
    if (r->opts.watch == &watch) r->opts.watch = NULL;
    if (rc != 0) {
        ls_cli_error("%s: %s", cmd, err.msg);
        return LS_EXIT_INPUT;
    }
    return LS_EXIT_OK;
}

void cli_note_not_run(const ls_history *h)
{
    ls_cli_error("%s: step 0 load: no pass ran: %s (lowerscope verify %s lists the errors)", h->path, h->not_run, h->path);
}

void cli_run_free(cli_run *r)
{
    ls_history_free(&r->h);
    ls_program_unref(r->loaded);
    ls_pipeline_opts_free(&r->opts);
}

int cli_note_step_failed(const char *cmd, const ls_history *h, int s)
{
    if (h->not_run) { /* what is shown is the loaded program: say why there is no other, as passes exits */
        cli_note_not_run(h);
        return LS_EXIT_FINDINGS;
    }
    if (s < 0 || (uint32_t)s >= h->n || !h->steps[s].error) return LS_EXIT_OK;
    const ls_step *st = &h->steps[s];
    ls_cli_error("%s: %s: step %d %s failed: %s; what is shown is the program before it", cmd, h->path ? h->path : "",
                 s, st->pass, st->error);
    return cli_step_failure_exit(st);
}

int cli_step_failure_exit(const ls_step *st)
{
    return st->error_kind == LS_ERR_NEEDS ? LS_EXIT_NEEDS : LS_EXIT_FINDINGS;
}

int cli_find_step(const ls_history *h, const char *spec)
{
    return cli_find_step_of(h, "--step", spec);
}

int cli_find_step_of(const ls_history *h, const char *option, const char *spec)
{
    if (!spec) return (int)h->n - 1;
    ls_error err;
    int s = ls_history_find_step(h, spec, &err);
    if (s < 0 && h->path) ls_cli_error("%s: %s %s", h->path, option, err.msg);
    else if (s < 0) ls_cli_error("%s %s", option, err.msg);
    return s;
}

void cli_step_title(ls_buf *b, const ls_history *h, int s)
{
    const ls_step *st = &h->steps[s];
    ls_buf_printf(b, "step %d %s", s, st->pass);
    if (st->detail) ls_buf_printf(b, " (%s)", st->detail);
}

static void json_arg(ls_buf *b, const ls_program *p, const ls_arg *a)
{
    const ls_node *n;
    switch (a->kind) {
    case LS_ARG_NONE: ls_buf_puts(b, "null"); break;
    case LS_ARG_NODE:
        n = ls_program_node(p, a->v.node);
        ls_buf_puts(b, "{\"node\": ");
        ls_buf_json_str(b, n ? n->name : NULL);
        ls_buf_putc(b, '}');
        break;
    case LS_ARG_NODES:
    case LS_ARG_OPT_NODES:
        ls_buf_puts(b, "{\"nodes\": [");
        for (uint32_t i = 0; i < a->n; i++) {
            n = a->v.nodes[i] ? ls_program_node(p, a->v.nodes[i]) : NULL;
            if (i) ls_buf_puts(b, ", ");
            ls_buf_json_str(b, n ? n->name : NULL);
        }
        ls_buf_puts(b, "]}");
        break;
    case LS_ARG_INT: ls_buf_printf(b, "%" PRId64, a->v.i); break;
    case LS_ARG_FLOAT:
        if (a->v.f != a->v.f || a->v.f > 1e308 || a->v.f < -1e308) ls_buf_printf(b, "\"%g\"", a->v.f);
        else ls_buf_printf(b, "%.17g", a->v.f);
        break;
    case LS_ARG_BOOL: ls_buf_puts(b, a->v.b ? "true" : "false"); break;
    case LS_ARG_INTS:
        ls_buf_putc(b, '[');
        for (uint32_t i = 0; i < a->n; i++) ls_buf_printf(b, "%s%" PRId64, i ? ", " : "", a->v.ints[i]);
        ls_buf_putc(b, ']');
        break;
    default: {
        ls_buf t = {0};
        ls_arg_text(p, a, &t);
        char *s = ls_buf_take(&t);
        ls_buf_json_str(b, s);
        free(s);
    }
    }
}

void cli_json_program(ls_buf *b, const ls_program *p, const char *name, const char *backend)
{
    ls_buf_puts(b, "{\"name\": ");
    ls_buf_json_str(b, name);
    ls_buf_puts(b, ", \"backend\": ");
    ls_buf_json_str(b, backend);
    ls_buf_printf(b, ", \"dialect\": \"%s\", \"placeholders\": [", ls_dialect_name((ls_dialect)p->dialect));
    bool first = true;
    ls_sig sig;
    ls_sig_build(&sig, p);
    for (uint32_t i = 0; i < p->n_nodes; i++) {
        const ls_node *n = p->nodes[i];
        if (n->kind != LS_NODE_PLACEHOLDER) continue;
        const ls_input_spec *sp = ls_sig_spec(&sig, p, n);
        ls_buf_puts(b, first ? "\n  {\"name\": " : ",\n  {\"name\": ");
        first = false;
        ls_buf_json_str(b, n->name);
        ls_buf_puts(b, ", \"kind\": ");
        ls_buf_json_str(b, sp ? ls_input_kind_name((ls_input_kind)sp->kind) : NULL);
        ls_buf_puts(b, ", \"target\": ");
        ls_buf_json_str(b, sp ? sp->target : NULL);
        ls_buf_puts(b, ", \"tag\": ");
        ls_buf_json_str(b, n->tag);
        ls_buf_puts(b, ", \"users\": [");
        uint32_t nu;
        const uint32_t *us = ls_program_users(p, i, &nu);
        for (uint32_t u = 0; u < nu; u++) {
            if (u) ls_buf_puts(b, ", ");
            ls_buf_json_str(b, p->nodes[us[u]]->name);
        }
        ls_buf_puts(b, "]}");
    }
    ls_sig_free(&sig);
    ls_buf_puts(b, "], \"nodes\": [");
    first = true;
    for (uint32_t i = 0; i < p->n_nodes; i++) {
        const ls_node *n = p->nodes[i];
        if (n->kind == LS_NODE_PLACEHOLDER) continue;
        ls_buf_puts(b, first ? "\n  {\"name\": " : ",\n  {\"name\": ");
        first = false;
        ls_buf_json_str(b, n->name);
        ls_buf_printf(b, ", \"op\": \"%s\", \"target\": ", ls_node_kind_name((ls_node_kind)n->kind));
        ls_buf_json_str(b, n->target);
        ls_buf_puts(b, ", \"tag\": ");
        ls_buf_json_str(b, n->tag);
        if (n->reason) {
            ls_buf_puts(b, ", \"cpu_reason\": ");
            ls_buf_json_str(b, ls_cpu_reason_text((ls_cpu_reason)n->reason));
        }
        ls_buf_puts(b, ", \"args\": [");
        for (uint16_t a = 0; a < n->nargs; a++) {
            if (a) ls_buf_puts(b, ", ");
            json_arg(b, p, &n->args[a]);
        }
        ls_buf_puts(b, "]}");
    }
    ls_buf_puts(b, "]}");
}
