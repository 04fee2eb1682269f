/* The neighbourhood screen (`x`, `:around`), Model Explorer's "expand around a node": the
 * selected node in the middle, its producers two levels above and its users two levels below,
 * drawn as the partition graph is (boxes, what enters each written above it: the value's type),
 * each box in its tag's colour. Enter centres the drawing on a box (and selects that node in the
 * graph pane); q goes back with it selected. A level shows at most MAX_LEVEL nodes and a box
 * saying how many more. O(degree²) per drawing, never O(n). */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "ops.h"
#include "ui.h"

#define BOX_W 26
#define MAX_LEVEL 8
#define LEVELS 2

void ui_around_free(ui *u)
{
    ui_boxview_free(&u->around);
    free(u->around_ids);
    u->around_ids = NULL;
}

typedef struct level {
    uint32_t ids[MAX_LEVEL];
    uint32_t n, more; /* shown, and not shown */
} level;

static bool shown(const level *lv, int n_lv, uint32_t id)
{
    for (int k = 0; k < n_lv; k++)
        for (uint32_t i = 0; i < lv[k].n; i++)
            if (lv[k].ids[i] == id) return true;
    return false;
}

static void add_id(level *lv, const level *all, int n_all, uint32_t id)
{
    if (!id || shown(all, n_all, id)) return;
    for (uint32_t i = 0; i < lv->n; i++)
        if (lv->ids[i] == id) return;
    if (lv->n < MAX_LEVEL) lv->ids[lv->n++] = id;
    else lv->more++;
}

typedef struct collect {
    const ls_program *p;
    level *lv;
    const level *all;
    int n_all;
} collect;

static void add_producer(uint32_t id, void *vctx)
{
    collect *c = vctx;
    const ls_node *n = ls_program_node(c->p, id);
    if (n && !(n->op && n->op->id == LS_OP_alloc)) add_id(c->lv, c->all, c->n_all, id);
}

static void producers(const ls_program *p, const level *from, level *to, const level *all, int n_all)
{
    collect c = {p, to, all, n_all};
    for (uint32_t i = 0; i < from->n; i++) {
        const ls_node *n = ls_program_node(p, from->ids[i]);
        for (uint16_t a = 0; n && a < n->nargs; a++) ls_arg_each_node(&n->args[a], add_producer, &c);
    }
}

static void users(const ls_program *p, const level *from, level *to, const level *all, int n_all)
{
    for (uint32_t i = 0; i < from->n; i++) {
        int32_t pos = ls_program_pos(p, from->ids[i]);
        uint32_t cnt = 0;
        const uint32_t *us = pos >= 0 ? ls_program_users(p, (uint32_t)pos, &cnt) : NULL;
        for (uint32_t k = 0; k < cnt; k++) add_id(to, all, n_all, p->nodes[us[k]]->id);
    }
}

typedef struct reads_ctx {
    uint32_t id;
    bool found;
} reads_ctx;

static void reads_one(uint32_t id, void *vctx)
{
    reads_ctx *c = vctx;
    c->found |= id == c->id;
}

static bool reads(const ls_node *n, uint32_t id)
{
    reads_ctx c = {id, false};
    for (uint16_t a = 0; a < n->nargs && !c.found; a++) ls_arg_each_node(&n->args[a], reads_one, &c);
    return c.found;
}

void ui_around_build(ui *u)
{
    ui_around_free(u);
    const ls_program *p = ui_scope_program(u, u->step);
    const ls_node *center = p ? ls_program_node(p, u->around_id) : NULL;
    u->around_step = u->step;
    u->around_scope = u->depth ? u->scope[u->depth - 1] : NULL;
    if (!center) return;
    /* levels: [0] two above, [1] one above, [2] the node, [3] one below, [4] two below */
    level lv[2 * LEVELS + 1];
    memset(lv, 0, sizeof lv);
    lv[LEVELS].ids[lv[LEVELS].n++] = center->id;
    producers(p, &lv[LEVELS], &lv[LEVELS - 1], lv, 2 * LEVELS + 1);
    users(p, &lv[LEVELS], &lv[LEVELS + 1], lv, 2 * LEVELS + 1);
    producers(p, &lv[LEVELS - 1], &lv[LEVELS - 2], lv, 2 * LEVELS + 1);
    users(p, &lv[LEVELS + 1], &lv[LEVELS + 2], lv, 2 * LEVELS + 1);
    uint32_t n = 0;
    for (int k = 0; k <= 2 * LEVELS; k++) n += lv[k].n + (lv[k].more ? 1 : 0);
    ls_box *boxes = ls_calloc(n + 1, sizeof *boxes);
    int32_t *color = ls_malloc(sizeof *color * (n + 1));
    u->around_ids = ls_calloc(n + 1, sizeof *u->around_ids);
    uint32_t nb = 0, center_box = 0;
    uint32_t first_of[2 * LEVELS + 2];
    for (int k = 0; k <= 2 * LEVELS; k++) {
        first_of[k] = nb;
        for (uint32_t i = 0; i < lv[k].n; i++) {
            const ls_node *nd = ls_program_node(p, lv[k].ids[i]);
            char t[96];
            ui_fmt_type(nd, t, sizeof t);
            int tag = ui_node_color(u, p, nd);
            ls_box *b = &boxes[nb];
            b->rank = (uint32_t)k;
            b->id = (int32_t)nd->id;
            b->fold = 1;
            b->text[0] = nd->name;
            b->text[1] = ls_intern(ui_node_op(p, nd));
            b->text[2] = t[0] ? ls_intern(t) : NULL;
            if (tag >= 0) b->text[3] = ls_internf("%s → %s", u->dc.tags.tags[tag], u->dc.tags.backends[tag] ? u->dc.tags.backends[tag] : "?");
            else if (nd->kind == LS_NODE_CALL) b->text[3] = "CPU";
            color[nb] = tag;
            if (nd->id == center->id) center_box = nb;
            u->around_ids[nb++] = nd->id;
        }
        if (lv[k].more) {
            ls_box *b = &boxes[nb];
            b->rank = (uint32_t)k;
            b->id = -1;
            b->fold = lv[k].more;
            b->text[0] = ls_internf("%u more", lv[k].more);
            b->text[1] = k < LEVELS ? "producers" : "users";
            color[nb] = -2;
            u->around_ids[nb++] = 0;
        }
    }
    first_of[2 * LEVELS + 1] = nb;
    /* an edge wherever a box reads a box of the level above it */
    LS_VEC(ls_box_edge) edges = {0};
    for (int k = 1; k <= 2 * LEVELS; k++)
        for (uint32_t b = first_of[k]; b < first_of[k + 1]; b++) {
            const ls_node *nd = u->around_ids[b] ? ls_program_node(p, u->around_ids[b]) : NULL;
            for (uint32_t a = first_of[k - 1]; nd && a < first_of[k]; a++) {
                const ls_node *src = u->around_ids[a] ? ls_program_node(p, u->around_ids[a]) : NULL;
                if (!src || !reads(nd, src->id)) continue;
                ls_box_edge e = {a, b, boxes[a].text[2] ? boxes[a].text[2] : "value"};
                ls_vec_push(&edges, e);
            }
        }
    ls_drawing d;
    ls_draw_boxes(boxes, nb, edges.v, edges.n, BOX_W, !u->utf8, &d);
    free(edges.v);
    free(boxes);
    u->around.sel = center_box;
    ui_boxview_set(&u->around, &d, color);
    ui_pane *pane = ui_pane_of(u, UI_P_SCREEN);
    pane->left = pane->top = 0;
    ui_boxview_select(u, &u->around, pane, center_box);
}

static void ensure(ui *u)
{
    const char *scope = u->depth ? u->scope[u->depth - 1] : NULL;
    if (!u->around.valid || u->around_step != u->step || u->around_scope != scope) ui_around_build(u);
}

static void title(ui *u, ls_buf *b)
{
    ensure(u);
    const ls_program *p = ui_scope_program(u, u->step);
    const ls_node *n = p ? ls_program_node(p, u->around_id) : NULL;
    if (!n) {
        ls_buf_printf(b, "Around · the node is not at step %u · q back", u->step);
        return;
    }
    ls_buf_printf(b, "Around %s · producers above, users below · Enter centres · q back", n->name);
}

static uint32_t count(ui *u)
{
    ensure(u);
    return u->around.valid ? u->around.d.n_lines : 0;
}

static void draw_row(ui *u, uint32_t row, int y, int x, int w, bool cursor)
{
    (void)cursor;
    ensure(u);
    ui_boxview_draw_row(u, &u->around, ui_pane_of(u, UI_P_SCREEN), row, y, x, w);
}

static void activate(ui *u, uint32_t row)
{
    (void)row;
    ensure(u);
    if (!u->around.valid || u->around.sel >= u->around.d.n_boxes) return;
    uint32_t id = u->around_ids[u->around.sel];
    if (!id) {
        ui_message(u, false, "more nodes than a level shows: centre on a neighbour to see them");
        return;
    }
    u->around_id = id;
    ui_select_id(u, id);
    ui_around_build(u);
}

static bool action(ui *u, ui_action a)
{
    ensure(u);
    if (a == UI_A_ENTER) {
        activate(u, 0);
        return true;
    }
    if (a == UI_A_QUIT || a == UI_A_CANCEL || a == UI_A_BACK) { /* back, the centre selected */
        u->screen = UI_S_MAIN;
        if (u->around_id) ui_select_id(u, u->around_id);
        return true;
    }
    uint32_t before = u->around.sel;
    if (!ui_boxview_move(u, &u->around, ui_pane_of(u, UI_P_SCREEN), a)) return false;
    if (u->around.sel != before && u->around.sel < u->around.d.n_boxes) {
        uint32_t id = u->around_ids[u->around.sel];
        const ls_program *p = ui_scope_program(u, u->step);
        const ls_node *n = id && p ? ls_program_node(p, id) : NULL;
        if (n) ui_message(u, false, "%s (%s) — Enter centres on it", n->name, ui_node_op(p, n));
    }
    return true;
}

static void moved(ui *u, uint32_t row)
{
    ensure(u);
    ui_boxview_moved(u, &u->around, row);
}

static bool match(ui *u, uint32_t row, const regex_t *re)
{
    (void)re;
    ensure(u);
    return ui_boxview_match(u, &u->around, row);
}

static bool match_next(ui *u, uint32_t row, bool backward)
{
    ensure(u);
    return ui_boxview_match_next(u, &u->around, row, backward);
}

const ui_view_ops ui_around_ops = {
    .name = "neighbourhood",
    .action = action,
    .title = title,
    .count = count,
    .draw_row = draw_row,
    .activate = activate,
    .moved = moved,
    .match = match,
    .match_next = match_next,
};
