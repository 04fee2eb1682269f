/* The graph pane: the nodes of the current step in graph order, one a line — diff mark, tag
 * swatch, name, op (short form; placeholders as their kind), arguments, dtype and shape, tag —
 * each row in its tag's colour. Removed nodes stay visible, dimmed, marked `-`. Enter on a
 * delegate call opens its lowered submodule here; Backspace returns. */
#include <stdio.h>
#include <string.h>

#include "ops.h"
#include "ui.h"

static const ui_row *row_at(ui *u, uint32_t row)
{
    ui_model_ensure(u);
    return row < u->m.n_vis ? &u->m.rows[u->m.vis[row]] : NULL;
}

/* The op text of a row; placeholders of the current program find their spec in O(1). */
static const char *row_op(ui *u, const ui_row *r)
{
    const ls_node *n = r->node;
    if (n->kind == LS_NODE_PLACEHOLDER && r->mark != UI_MARK_REMOVED && u->m.spec_of_pos) {
        int32_t pos = ls_program_pos(u->m.prog, n->id);
        int32_t si = pos >= 0 ? u->m.spec_of_pos[pos] : -1;
        return ui_node_op_spec(n, si >= 0 ? &u->m.prog->inputs[si] : NULL);
    }
    return ui_node_op(ui_row_program(u, r), n);
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
    ls_buf_printf(b, " · %u nodes", m->prog->n_nodes);
    if (u->diff_marks && u->step > 0) ls_buf_printf(b, " · +%u ~%u -%u", m->n_added, m->n_changed, m->n_removed);
    else if (!u->diff_marks) ls_buf_puts(b, " · marks off");
    if (u->filter == UI_FILTER_TAG || u->filter == UI_FILTER_OP || u->filter == UI_FILTER_IDS)
        ls_buf_printf(b, " · filter %s (%u)", u->filter_value, m->n_vis);
    else if (u->filter == UI_FILTER_CPU) ls_buf_printf(b, " · filter cpu (%u)", m->n_vis);
    if (u->search_active) ls_buf_printf(b, " · /%s", u->search);
}

static uint32_t count(ui *u)
{
    ui_model_ensure(u);
    return u->m.n_vis;
}

typedef struct cols {
    int name, op, args, type, tag;
} cols;

static cols widths(int w)
{
    int avail = w - 3;
    cols c = {0};
    c.name = avail * 28 / 100;
    if (c.name > 28) c.name = 28;
    c.op = avail * 18 / 100;
    if (c.op > 18) c.op = 18;
    c.type = avail >= 60 ? avail * 20 / 100 : 0;
    if (c.type > 24) c.type = 24;
    c.tag = avail >= 90 ? 12 : 0;
    c.args = avail - c.name - c.op - c.type - c.tag - 4;
    if (c.args < 0) c.args = 0;
    return c;
}

static void draw_row(ui *u, uint32_t row, int y, int x, int w, bool cursor)
{
    const ui_row *r = row_at(u, row);
    if (!r) return;
    const ls_program *p = ui_row_program(u, r);
    const ls_node *n = r->node;
    int tag = ui_node_color(u, p, n);
    short pair, mp;
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
    char mk[2] = {u->diff_marks ? marks[r->mark] : ' ', 0};
    attr_t ma = ui_role_attr(u, mark_roles[r->mark], &mp);
    ui_put(u, y, x, 1, ma | (cursor ? A_REVERSE : 0), mp, mk);
    /* swatch: the tag's colour, or its letter without colours */
    if (tag >= 0) {
        char sw[8];
        if (u->colors == UI_COLORS_NONE) snprintf(sw, sizeof sw, "%c", ui_tag_letter(tag));
        else snprintf(sw, sizeof sw, "%s", u->utf8 ? "▌" : "|");
        ui_put(u, y, x + 1, 1, a, pair, sw);
    }
    cols c = widths(w);
    int cx = x + 3;
    ls_buf b = {0};
    attr_t na = a;
    if (u->search_active && u->re_ok && regexec(&u->re, n->name, 0, NULL, 0) == 0) na |= A_UNDERLINE;
    ui_put(u, y, cx, c.name, na, pair, n->name);
    cx += c.name + 1;
    ui_put(u, y, cx, c.op, a, pair, row_op(u, r));
    cx += c.op + 1;
    ui_fmt_args(p, n, &b);
    if (b.s) ui_put(u, y, cx, c.args, a, pair, b.s);
    cx += c.args + 1;
    ls_buf_free(&b);
    if (c.type) {
        char t[160];
        ui_fmt_type(n, t, sizeof t);
        ui_put(u, y, cx, c.type, a, pair, t);
        cx += c.type + 1;
    }
    if (c.tag) {
        const char *tg = n->tag;
        const char *sub = tg ? NULL : ui_delegate_sub(p, n);
        if (sub) tg = ui_sub_tag(u, p, sub);
        if (tg) ui_put(u, y, cx, c.tag, a, pair, tg);
    }
}

static void activate(ui *u, uint32_t row)
{
    const ui_row *r = row_at(u, row);
    if (!r) return;
    const ls_program *p = ui_row_program(u, r);
    const char *sub = ui_delegate_sub(p, r->node);
    if (!sub && r->node->kind == LS_NODE_GET_ATTR && ls_program_sub(p, r->node->target)) sub = r->node->target;
    if (sub && r->mark != UI_MARK_REMOVED && ui_enter_sub(u, sub)) return;
    u->focus = UI_P_NODE; /* an opaque delegate too: the node pane says what its blob says */
}

static void moved(ui *u, uint32_t row)
{
    const ui_row *r = row_at(u, row);
    if (!r) return;
    if (r->node->id != u->sel_id) {
        u->sel_id = r->node->id;
        u->node_valid = false;
        ui_pane_of(u, UI_P_NODE)->sel = ui_pane_of(u, UI_P_NODE)->top = 0;
    }
}

static bool match(ui *u, uint32_t row, const regex_t *re)
{
    const ui_row *r = row_at(u, row);
    if (!r) return false;
    return regexec(re, r->node->name, 0, NULL, 0) == 0 || regexec(re, row_op(u, r), 0, NULL, 0) == 0;
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
