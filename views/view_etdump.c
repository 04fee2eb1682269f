/* --etdump FILE: an ExecuTorch ETDump placed on the nodes of the step whose program it
 * describes (etdump.h: a .pte's instructions, or an ETRecord's debug handles). Its times go
 * through the run overlay (overlay.c): the graph pane's time column and its sort, inside a
 * delegate the times the delegate gave its own nodes; the node pane says them (ui_measured_lines,
 * for a run's figures too; a delegate call also the total of what the delegate timed inside). Events that find no node are counted in the message the UI opens with;
 * `lowerscope run FILE --etdump D` lists them. */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "etrecord.h"
#include "node_stats.h"
#include "ops.h"
#include "ui.h"

struct ui_etdump {
    ls_etdump d;
    ls_etd_index *x;
    ls_etd_profile pr;
    uint32_t step;    /* the step whose program the events land on */
    const char *file; /* its basename */
};

void ui_etdump_free(ui *u)
{
    struct ui_etdump *e = u->etdump;
    if (!e) return;
    ls_etd_profile_free(&e->pr);
    ls_etd_index_free(e->x);
    ls_etdump_free(&e->d);
    free(e);
    u->etdump = NULL;
}

int ui_etdump_open(ui *u, const char *path, ls_error *err)
{
    struct ui_etdump *e = ls_calloc(1, sizeof *e);
    if (ls_etdump_read_file(path, &e->d, err) != 0) {
        free(e);
        return ls_fail_prefix(err, "--etdump"); /* which option's file */
    }
    const ls_program *loaded = u->h->steps[u->h->n - 1].program, *mapped = NULL;
    if (!ls_program_recorded(loaded)) loaded = u->h->steps[0].program; /* a .pte: its step 0 */
    e->x = ls_etd_index_for(loaded, &mapped, err);
    int32_t step = -1;
    for (uint32_t i = 0; e->x && i < u->h->n && step < 0; i++)
        if (u->h->steps[i].program == mapped) step = (int32_t)i;
    if (!e->x || step < 0) {
        if (e->x) ls_fail(err, "%s: the program its events describe is not a step of this history", path);
        ls_etd_index_free(e->x);
        ls_etdump_free(&e->d);
        free(e);
        return -1;
    }
    e->step = (uint32_t)step;
    const char *slash = strrchr(path, '/');
    e->file = ls_intern(slash ? slash + 1 : path);
    ls_etd_profile_build(&e->d, mapped, e->x, 1e9, &e->pr);
    u->etdump = e;
    u->overlay = true;
    ui_message(u, e->pr.n_unmatched > 0, "%s: %u run%s, %u events on nodes of step %u, %u framework, %u unmatched%s", e->file,
               e->pr.runs, e->pr.runs == 1 ? "" : "s", e->pr.n_matched + e->pr.n_in_delegate, e->step, e->pr.n_framework,
               e->pr.n_unmatched, e->pr.n_unmatched ? " (lowerscope run FILE --etdump lists them)" : "");
    return 0;
}

uint32_t ui_etdump_step(const ui *u)
{
    return u->etdump ? u->etdump->step : 0;
}

const ls_node_stats *ui_etdump_stats(ui *u)
{
    struct ui_etdump *e = u->etdump;
    if (!e || u->step != e->step) return NULL;
    return u->depth ? ls_etd_profile_sub(&e->pr, u->scope[u->depth - 1]) : &e->pr.stats;
}

/* The submodule a delegate call calls. */
static const ls_submodule *called(const ls_program *p, const ls_node *n)
{
    if (!n->op || n->op->id != LS_OP_call_delegate || !n->nargs || n->args[0].kind != LS_ARG_NODE) return NULL;
    const ls_node *ga = ls_program_node(p, n->args[0].v.node);
    return ga && ga->kind == LS_NODE_GET_ATTR ? ls_program_sub(p, ga->target) : NULL;
}

void ui_measured_lines(ui *u, const ls_program *p, const ls_node *n, ui_lines *l)
{
    const ls_node_stats *s = ui_overlay_stats(u);
    const ls_node_stat *st = s ? ui_stat_of(u, n) : NULL;
    if (!st || !st->timed) return;
    bool from_file = u->etdump && s->source == ls_intern("ETDump");
    char t[64];
    if (u->script && !from_file) snprintf(t, sizeof t, "—");
    else snprintf(t, sizeof t, "%.4f ms", st->seconds * 1e3 / (double)(st->runs ? st->runs : 1));
    ui_line *ln = ui_lines_add(l, UI_R_NORMAL, -1, "%-10s%s a run (%u run%s, %s%s%s)", "time", t, st->runs,
                               st->runs == 1 ? "" : "s", from_file ? "ETDump " : s->source, from_file ? u->etdump->file : "",
                               u->depth ? ", by the delegate" : "");
    ln->indent = 10;
    const ls_submodule *sub = !u->depth && u->etdump && from_file ? called(p, n) : NULL;
    const ls_node_stats *inner = sub ? ls_etd_profile_sub(&u->etdump->pr, sub->name) : NULL;
    if (!inner) return;
    double sum = 0;
    uint32_t timed = 0;
    for (uint32_t i = 0; i < inner->n; i++)
        if (inner->v[i].timed) sum += inner->v[i].seconds, timed++;
    snprintf(t, sizeof t, "%.4f ms", sum * 1e3 / (double)(inner->runs ? inner->runs : 1));
    ln = ui_lines_add(l, UI_R_NORMAL, -1, "%-10s%s a run over %u node%s the delegate timed (Enter shows each)", "inside", t,
                      timed, timed == 1 ? "" : "s");
    ln->indent = 10;
}
