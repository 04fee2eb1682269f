/* The graph pane: the nodes of the current step in graph order, one a line — diff mark, tag
 * swatch, name, op (short form; placeholders as their kind), arguments, dtype and shape, tag —
 * each row in its tag's colour. Removed nodes stay visible, dimmed, marked `-`. Name and op are as
 * wide as the step's widest (within a share of the pane), a name too long keeps its end, an op
 * drops its namespace; < and > scroll the row across. After a run, the run's columns (time,
 * range, difference: overlay.c) come after the op. Enter on a delegate call opens its lowered
 * submodule here; Backspace returns. */
#include <stdio.h>
#include <string.h>

#include "node_stats.h"
#include "ops.h"
#include "ui.h"

/* The visible row `row` into *r; false past the end. */
static bool row_at(ui *u, uint32_t row, ui_row *r)
{
    ui_model_ensure(u);
    if (row >= u->m.n_vis) return false;
    *r = ui_model_row(u, row);
    return true;
}

/* The op text of a row (a placeholder finds its spec through the program's map). */
static const char *row_op(ui *u, const ui_row *r)
{
    return ui_node_op(ui_row_program(u, r), r->node);
}

static void title(ui *u, ls_buf *b)
{
    ui_model_ensure(u);
    ui_model *m = &u->m;
    if (u->depth) ls_buf_printf(b, "Graph of %s", u->scope[u->depth - 1]);
    else ls_buf_puts(b, "Graph");
    if (!m->prog) {
        ls_buf_puts(b, " — not at this step");
        return;
    }
    ls_buf_printf(b, " · %u node%s", m->prog->n_nodes, m->prog->n_nodes == 1 ? "" : "s");
    if (u->diff_marks && u->step > 0) ls_buf_printf(b, " · +%u ~%u -%u", m->n_added, m->n_changed, m->n_removed);
    else if (!u->diff_marks) ls_buf_puts(b, " · marks off");
    if (u->filter == UI_FILTER_TAG || u->filter == UI_FILTER_OP || u->filter == UI_FILTER_IDS)
        ls_buf_printf(b, " · filter %s (%u)", u->filter_value, m->n_vis);
    else if (u->filter == UI_FILTER_CPU) ls_buf_printf(b, " · filter cpu (%u)", m->n_vis);
    if (u->search_active && u->search_screen == UI_S_MAIN) /* not one typed on a screen since closed */
        ls_buf_printf(b, " · /%s%s", u->search, ui_search_pending(u) ? " (searching…)" : "");
    const ls_node_stats *ns = ui_overlay_stats(u);
    if (ns) {
        uint32_t compared, differ = ls_node_stats_differing(ns, &compared);
        ls_buf_printf(b, " · %s ×%lld", ns->source == ls_intern("ETDump") ? "ETDump" : "run", (long long)ns->runs);
        if (compared) ls_buf_printf(b, ": %u differ", differ);
    }
    /* a sort by what a run measured holds only while its columns show (ui_sort_vis) */
    if (u->sort != UI_SORT_GRAPH && (ns || u->sort == UI_SORT_SIZE))
        ls_buf_printf(b, " · by %s%s", ui_sort_name(u->sort), u->sort_reverse ? " ↑" : "");
    else if (u->sort != UI_SORT_GRAPH && !u->overlay)
        ls_buf_printf(b, " · graph order (by %s needs o)", ui_sort_name(u->sort));
    else if (u->sort != UI_SORT_GRAPH)
        ls_buf_printf(b, " · graph order (by %s needs a run: r)", ui_sort_name(u->sort));
    /* last: a narrow pane cuts these before the filter and the search, which say what is shown */
    if (u->diff_marks && u->step > 0 && m->inside_added + m->inside_changed + m->inside_removed)
        ls_buf_printf(b, " · +%u ~%u -%u inside", m->inside_added, m->inside_changed, m->inside_removed);
}

static uint32_t count(ui *u)
{
    ui_model_ensure(u);
    return u->m.n_vis;
}

typedef struct cols {
    int name, op, args, type, tag, time, range, diff;
} cols;

#define OV_TIME 9
#define OV_RANGE 17
#define OV_DIFF 11

static int min_i(int a, int b) { return a < b ? a : b; }

/* Name and op as wide as their widest (within a share of the pane), then the run's columns, then
 * the type and tag on wide panes; the arguments take what is left. */
static cols widths(ui *u, int w, bool overlay)
{
    ui_model_ensure(u);
    int name_w = u->m.sr->name_w, op_w = u->m.sr->op_w; /* the step's widest (rows.c, once per step) */
    int avail = w - 3;
    cols c = {0};
    if (overlay) {
        c.time = OV_TIME;
        c.range = OV_RANGE;
        c.diff = OV_DIFF;
        avail -= OV_TIME + OV_RANGE + OV_DIFF + 3;
    }
    /* with the run's columns the arguments keep a share (the name and op took 90% of what was
     * left, and the arguments got two characters at 120 columns) */
    int name_share = avail * (overlay ? 50 : 40) / 100, op_share = avail * (overlay ? 20 : 25) / 100;
    c.name = min_i(name_w, name_share > 12 ? name_share : 12);
    c.op = min_i(op_w, op_share > 8 ? op_share : 8);
    int rest = avail - c.name - c.op - 2;
    /* a shape whole before the arguments: "float32[1, 3, 16, 16]" is 21 (it got 12, "float32[1, …") */
    c.type = !overlay && rest >= 40 ? min_i(u->m.sr->type_w, rest * 55 / 100) : 0;
    c.tag = !overlay && rest >= 70 ? 12 : 0;
    c.args = rest - c.type - c.tag - (c.type ? 1 : 0) - (c.tag ? 1 : 0);
    if (c.args < 0) c.args = 0;
    return c;
}

/* A row's columns from the name on, each in full, as one line to scroll across (< and >). */
static void row_text(ui *u, const ui_row *r, const ls_program *p, ls_buf *b)
{
    const ls_node *n = r->node;
    ls_buf args = {0};
    ui_fmt_args(p, n, &args);
    char t[160];
    ls_node_type_str(n, t, sizeof t);
    const char *tg = n->tag;
    const char *sub = tg ? NULL : ui_delegate_sub(p, n);
    if (sub) tg = ui_sub_tag(u, p, sub);
    /* name and op padded to the step's widest, so the columns stay aligned while scrolling */
    ls_buf_printf(b, "%-*s %-*s %s  %s  %s", u->m.sr->name_w, n->name, u->m.sr->op_w, row_op(u, r), args.s ? args.s : "", t,
                  tg ? tg : "");
    ls_buf_free(&args);
}

static void draw_row(ui *u, uint32_t row, int y, int x, int w, bool cursor)
{
    ui_row rv;
    if (!row_at(u, row, &rv)) return;
    const ui_row *r = &rv;
    const ls_program *p = ui_row_program(u, r);
    const ls_node *n = r->node;
    int tag = ui_node_color(u, p, n);
    short pair;
    attr_t a = ui_tag_attr(u, tag, &pair);
    if (r->mark == UI_MARK_REMOVED) a |= A_DIM;
    /* while the partitions pane has the focus, the selected partition's nodes stand out */
    if (u->screen == UI_S_MAIN && u->focus == UI_P_PARTITIONS && ui_pane_of(u, UI_P_PARTITIONS)->sel < u->m.n_parts) {
        const ui_part *pt = &u->m.parts[ui_pane_of(u, UI_P_PARTITIONS)->sel];
        bool in = pt->color >= 0 ? tag == pt->color : tag < 0 && n->kind == LS_NODE_CALL;
        a |= in ? A_BOLD : A_DIM;
    }
    bool focus = u->screen == UI_S_MAIN && u->focus == UI_P_GRAPH;
    if (cursor) a |= focus ? A_REVERSE : A_BOLD;
    if (cursor) ui_fill(u, y, x, w, a, pair);
    /* mark */
    static const char marks[] = {' ', '+', '~', '-'};
    static const ui_role mark_roles[] = {UI_R_NORMAL, UI_R_ADDED, UI_R_CHANGED, UI_R_REMOVED};
    ui_put_mark_swatch(u, y, x, u->diff_marks ? marks[r->mark] : ' ', mark_roles[r->mark], tag, a, pair, cursor);
    const ls_node_stats *ns = ui_overlay_stats(u);
    cols c = widths(u, w, ns != NULL);
    int cx = x + 3;
    attr_t na = a;
    if (u->search_active && u->search_screen == UI_S_MAIN && ui_search_matches(u, n->name)) na |= A_UNDERLINE;
    uint32_t left = ui_pane_of(u, UI_P_GRAPH)->left;
    if (left) { /* scrolled: the whole row, every column in full, from column `left` */
        ls_buf b = {0};
        row_text(u, r, p, &b);
        const char *s = b.s;
        for (uint32_t k = 0; k < left && *s; k++) {
            s++;
            while (((unsigned char)*s & 0xC0) == 0x80) s++;
        }
        ui_put(u, y, cx, x + w - cx, a, pair, s);
        ls_buf_free(&b);
        return;
    }
    ui_put_fit(u, y, cx, c.name, na, pair, n->name, true);
    cx += c.name + 1;
    ui_put_fit(u, y, cx, c.op, a, pair, row_op(u, r), false);
    cx += c.op + 1;
    if (ns) {
        char tm[32], rg[64], df[32];
        const ls_node_stat *st = r->mark == UI_MARK_REMOVED ? NULL : ui_stat_of(u, n);
        ui_overlay_cells(u, st, ns, tm, rg, df, sizeof rg);
        ui_put(u, y, cx, c.time, a, pair, tm);
        cx += c.time + 1;
        ui_put_fit(u, y, cx, c.range, a, pair, rg, false);
        cx += c.range + 1;
        short ep;
        attr_t da = st && st->differs ? ui_role_attr(u, UI_R_ERROR, &ep) | (cursor ? A_REVERSE : 0) : a;
        ui_put(u, y, cx, c.diff, da, st && st->differs ? ep : pair, df);
        cx += c.diff + 1;
    }
    ls_buf b = {0};
    ui_fmt_args(p, n, &b);
    /* a cell cut at the pane's edge ends in … so it does not pass for the whole value */
    if (b.s && c.args) ui_put_cut(u, y, cx, c.args, a, pair, b.s);
    cx += c.args + 1;
    ls_buf_free(&b);
    if (c.type) {
        char t[160];
        ls_node_type_str(n, t, sizeof t);
        ui_put_cut(u, y, cx, c.type, a, pair, t);
        cx += c.type + 1;
    }
    if (c.tag) {
        const char *tg = n->tag;
        const char *sub = tg ? NULL : ui_delegate_sub(p, n);
        if (sub) tg = ui_sub_tag(u, p, sub);
        if (tg) ui_put_cut(u, y, cx, c.tag, a, pair, tg);
    }
}

static void activate(ui *u, uint32_t row)
{
    ui_row rv;
    if (!row_at(u, row, &rv)) return;
    const ui_row *r = &rv;
    const ls_program *p = ui_row_program(u, r);
    const char *sub = ui_delegate_sub(p, r->node);
    if (!sub && r->node->kind == LS_NODE_GET_ATTR && ls_program_sub(p, r->node->target)) sub = r->node->target;
    if (sub && r->mark != UI_MARK_REMOVED && ui_enter_sub(u, sub)) {
        ui_search_forget(u);
        return;
    }
    u->focus = UI_P_NODE; /* an opaque delegate too: the node pane says what its blob says */
}

static void moved(ui *u, uint32_t row)
{
    ui_row rv;
    if (!row_at(u, row, &rv)) return;
    const ui_row *r = &rv;
    if (r->node->id != u->sel_id) {
        u->sel_id = r->node->id;
        u->node_valid = false;
        ui_pane_of(u, UI_P_NODE)->sel = ui_pane_of(u, UI_P_NODE)->top = 0;
    }
}

static bool match(ui *u, uint32_t row, const regex_t *re)
{
    ui_row rv;
    if (!row_at(u, row, &rv)) return false;
    const ui_row *r = &rv;
    (void)re;
    return ui_search_matches(u, r->node->name) || ui_search_matches_shared(u, row_op(u, r));
}

const ui_view_ops ui_graph_ops = {
    .name = "graph",
    .title = title,
    .count = count,
    .draw_row = draw_row,
    .activate = activate,
    .moved = moved,
    .match = match,
};
