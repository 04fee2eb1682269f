/* The run overlay: after `r`, the graph pane's rows carry what the run measured for their node
 * (node_stats.h: time per run, the range of the values with NaN and Inf counts, the largest
 * difference from the loaded program's run), the rows can be sorted by time, difference or size
 * as htop sorts its columns (`s` cycles, `S` reverses), and `]`/`[` jump to the next/previous
 * node, in graph order, whose values differ beyond tolerance — where a lowered program starts to
 * go wrong. Sorting is O(n log n) once per change of key or run, a jump O(n) at most. */
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "node_stats.h"
#include "ui.h"

static const char *sort_names[UI_SORT_COUNT] = {"graph order", "time", "difference", "size"};

const char *ui_sort_name(ui_sort s)
{
    return s < UI_SORT_COUNT ? sort_names[s] : "?";
}

/* The stats of the run shown for this step, at the top level, when the overlay is on. */
const ls_node_stats *ui_overlay_stats(ui *u)
{
    if (!u->overlay) return NULL;
    const ls_node_stats *run = u->depth ? NULL : ui_run_stats(u);
    return run ? run : ui_etdump_stats(u); /* else what an ETDump says of this step (view_etdump.c) */
}

const ls_node_stat *ui_stat_of(ui *u, const ls_node *n)
{
    const ls_node_stats *s = ui_overlay_stats(u);
    if (!s) return NULL;
    const ls_node_stat *st = ls_node_stats_of(s, n->id);
    return st && s->program->nodes[ls_program_pos(s->program, n->id)] == n ? st : NULL;
}

static uint64_t value_bytes(const ls_node *n)
{
    uint64_t total = 0;
    for (uint16_t k = 0; k < n->nvals; k++) {
        int64_t numel = ls_tmeta_numel(&n->vals[k]);
        if (numel > 0) total += (uint64_t)numel * ls_dtype_size(n->vals[k].dtype);
    }
    return total;
}

typedef struct sort_item {
    double rank, key; /* rank first (a node that differs before one that does not), then key */
    uint32_t vis, order;
} sort_item;

static int cmp_items(const void *x, const void *y)
{
    const sort_item *a = x, *b = y;
    if (a->rank != b->rank) return a->rank > b->rank ? -1 : 1;
    if (a->key != b->key) return a->key > b->key ? -1 : 1;
    return a->order < b->order ? -1 : a->order > b->order;
}

void ui_sort_vis(ui *u, uint32_t *vis, uint32_t n)
{
    if (u->sort == UI_SORT_GRAPH || !n) return;
    const ls_node_stats *s = ui_overlay_stats(u);
    if (!s && u->sort != UI_SORT_SIZE) return;
    sort_item *it = ls_malloc(sizeof *it * n);
    for (uint32_t k = 0; k < n; k++) {
        ui_row rv = ui_rows_at(u->m.sr, vis[k]);
        const ui_row *r = &rv;
        const ls_node_stat *st = r->mark == UI_MARK_REMOVED ? NULL : ui_stat_of(u, r->node);
        double rank = -1, key = 0; /* nothing measured: last, in graph order */
        if (u->sort == UI_SORT_SIZE) rank = 0, key = (double)value_bytes(r->node);
        else if (st && u->sort == UI_SORT_TIME && st->timed) rank = 0, key = st->seconds;
        else if (st && u->sort == UI_SORT_DIFF && st->compared) rank = st->differs, key = st->max_abs;
        if (u->sort_reverse && rank >= 0) { /* smallest first; unmeasured still last */
            rank = 1 - rank;
            key = -key;
        }
        it[k] = (sort_item){rank, key, vis[k], k};
    }
    qsort(it, n, sizeof *it, cmp_items);
    for (uint32_t k = 0; k < n; k++) vis[k] = it[k].vis;
    free(it);
}

void ui_sort_next(ui *u, bool reverse)
{
    if (reverse) u->sort_reverse = !u->sort_reverse;
    else {
        u->sort = (ui_sort)((u->sort + 1) % UI_SORT_COUNT);
        u->sort_reverse = false;
    }
    if (u->sort != UI_SORT_GRAPH && u->sort != UI_SORT_SIZE && !ui_overlay_stats(u))
        ui_message(u, false, "sorted by %s: nothing measured at this step yet (r runs it)", ui_sort_name(u->sort));
    else
        ui_message(u, false, "sorted by %s%s — s next column, S reverses", ui_sort_name(u->sort),
                   u->sort == UI_SORT_GRAPH ? "" : u->sort_reverse ? ", smallest first" : ", largest first");
    ui_model_refilter(u);
    ui_model_ensure(u);
    u->panes[UI_P_GRAPH].sel = u->panes[UI_P_GRAPH].top = 0;
    if (u->m.n_vis) u->sel_id = ui_model_row(u, 0).node->id;
    ui_reselect(u);
}

/* "0.012ms", "-1.5..4", "Δ 0", "Δ 8.4e-01 ✗" into fixed-width cells (time masked in scripts). */
void ui_overlay_cells(ui *u, const ls_node_stat *st, const ls_node_stats *s, char *time, char *range, char *diff,
                      size_t cap)
{
    time[0] = range[0] = diff[0] = 0;
    if (!st || !st->runs) return;
    if (st->timed) {
        if (u->script && s->source != ls_intern("ETDump")) snprintf(time, cap, "—"); /* a file's times are the same every run */
        else snprintf(time, cap, "%.3fms", st->seconds * 1e3 / (double)(s->runs ? s->runs : 1));
    }
    if (st->numel) {
        int n = 0;
        if (st->finite) n = snprintf(range, cap, "%.3g..%.3g", st->min, st->max);
        if (st->nan && (size_t)n < cap) n += snprintf(range + n, cap - (size_t)n, "%s%lluNaN", n ? " " : "", (unsigned long long)st->nan);
        if (st->inf && (size_t)n < cap) snprintf(range + n, cap - (size_t)n, "%s%lluInf", n ? " " : "", (unsigned long long)st->inf);
    }
    if (st->compared) snprintf(diff, cap, "Δ%.3g%s", st->max_abs, st->differs ? (u->utf8 ? " ✗" : " X") : "");
}

bool ui_overlay_jump(ui *u, int dir)
{
    const ls_node_stats *s = ui_overlay_stats(u);
    if (!s) {
        bool measured = ui_run_stats(u) || ui_etdump_stats(u);
        ui_message(u, false, "%s", measured && !u->overlay ? "the run columns are hidden: o shows them"
                                   : u->depth ? "no run overlay inside a lowered module (Backspace leaves it)"
                                              : "nothing measured at this step: r runs it beside the loaded program");
        return false;
    }
    const ls_program *p;
    const ls_node *cur = ui_selected_node(u, &p, NULL);
    int64_t from = cur ? ls_program_pos(s->program, cur->id) : -1;
    if (dir < 0 && from < 0) from = s->n;
    int32_t pos = ls_node_stats_divergence(s, from, dir);
    if (pos < 0) {
        uint32_t compared, differ = ls_node_stats_differing(s, &compared);
        if (!differ) ui_message(u, false, "no node differs from the loaded program's run (%u compared)", compared);
        else ui_message(u, false, "no %s node differs (%u of %u do)", dir > 0 ? "later" : "earlier", differ, compared);
        return false;
    }
    const ls_node *n = s->program->nodes[pos];
    bool first = ls_node_stats_divergence(s, -1, 1) == pos;
    ui_select_id(u, n->id);
    ui_message(u, false, "%s%s differs from the loaded program's: max abs %.3g, max rel %.3g", first ? "first divergence: " : "",
               n->name, s->v[pos].max_abs, s->v[pos].max_rel);
    return true;
}
