/* The neighbourhood screen (`x`, `:around`), Model Explorer's "expand around a node": the
 * selected node in the middle, its producers two levels above and its users two levels below,
 * drawn as the partition graph is (boxes, what enters each written above it: the value's type),
 * each box in its tag's colour. Enter centres the drawing on a box (and selects that node in the
 * graph pane); q goes back with it selected. A level shows at most MAX_LEVEL nodes and a box
 * saying how many more. The neighbourhood itself is the core's (neighbourhood.h), as
 * `lowerscope graph --around` draws it. O(degree²) per drawing, never O(n). */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "neighbourhood.h"
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

void ui_around_build(ui *u)
{
    ui_around_free(u);
    const ls_program *p = ui_scope_program(u, u->step);
    const ls_node *center = p ? ls_program_node(p, u->around_id) : NULL;
    u->around_step = u->step;
    u->around_scope = u->depth ? u->scope[u->depth - 1] : NULL;
    if (!center) return;
    ls_around ar;
    ls_around_build(p, center->id, LEVELS, MAX_LEVEL, &ar);
    uint32_t n = ar.first[ar.n_levels];
    for (uint32_t k = 0; k < ar.n_levels; k++) n += ar.more[k] ? 1 : 0;
    ls_box *boxes = ls_calloc(n + 1, sizeof *boxes);
    int32_t *color = ls_malloc(sizeof *color * (n + 1));
    u->around_ids = ls_calloc(n + 1, sizeof *u->around_ids);
    uint32_t *box_of = ls_malloc(sizeof *box_of * (ar.first[ar.n_levels] + 1)); /* per node shown: its box */
    uint32_t nb = 0, center_box = 0;
    for (uint32_t k = 0; k < ar.n_levels; k++) {
        for (uint32_t i = ar.first[k]; i < ar.first[k + 1]; i++) {
            const ls_node *nd = ls_program_node(p, ar.ids[i]);
            char t[96];
            ls_node_type_str(nd, t, sizeof t);
            int tag = ui_node_color(u, p, nd);
            ls_box *b = &boxes[nb];
            b->rank = k;
            b->id = (int32_t)nd->id;
            b->fold = 1;
            b->text[0] = nd->name;
            b->text[1] = ls_intern(ui_node_op(p, nd));
            b->text[2] = t[0] ? ls_intern(t) : NULL;
            if (tag >= 0) b->text[3] = ls_internf("%s → %s", u->dc.tags.tags[tag], u->dc.tags.backends[tag] ? u->dc.tags.backends[tag] : "?");
            else if (nd->kind == LS_NODE_CALL) b->text[3] = "CPU";
            color[nb] = tag;
            if (nd->id == center->id) center_box = nb;
            box_of[i] = nb;
            u->around_ids[nb++] = nd->id;
        }
        if (ar.more[k]) {
            ls_box *b = &boxes[nb];
            b->rank = k;
            b->id = -1;
            b->fold = ar.more[k];
            b->text[0] = ls_internf("%u more", ar.more[k]);
            b->text[1] = (int)k < ar.depth ? "producers" : "users";
            color[nb] = -2;
            u->around_ids[nb++] = 0;
        }
    }
    LS_VEC(ls_box_edge) edges = {0};
    for (uint32_t e = 0; e < ar.n_edges; e++) {
        uint32_t a = box_of[ar.edges[e].from], b = box_of[ar.edges[e].to];
        /* what crosses is the producer's value, but of a tuple (a delegate call's) one item:
         * the getitem's own type, not "(float32[16, 7], float…" on every one */
        const ls_node *from = ls_program_node(p, ar.ids[ar.edges[e].from]), *to = ls_program_node(p, ar.ids[ar.edges[e].to]);
        bool item = from->val_kind == LS_VAL_TENSORS && to->val_kind == LS_VAL_TENSOR && boxes[b].text[2];
        const char *label = item ? boxes[b].text[2] : boxes[a].text[2];
        ls_box_edge be = {a, b, label ? label : "value"};
        ls_vec_push(&edges, be);
    }
    free(box_of);
    ls_around_free(&ar);
    u->around.sel = center_box;
    ui_boxview_set_boxes(&u->around, boxes, nb, edges.v, edges.n, BOX_W, !u->utf8); /* takes both */
    u->around.color = color;
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
    return u->around.valid ? ui_boxview_lines(&u->around) : 0;
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
    if (!u->around.valid || u->around.sel >= ui_boxview_boxes(&u->around)) return;
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
    if (a == UI_A_QUIT || a == UI_A_CANCEL || a == UI_A_BACK) {
        if (u->n_under) { /* opened over another screen (x on the partition graph): back to it */
            ui_close_screen(u);
            return true;
        }
        u->screen = UI_S_MAIN; /* back to the graph, the centre selected */
        if (u->around_id) ui_select_id(u, u->around_id);
        return true;
    }
    uint32_t before = u->around.sel;
    if (!ui_boxview_move(u, &u->around, ui_pane_of(u, UI_P_SCREEN), a)) return false;
    if (u->around.sel != before && u->around.sel < ui_boxview_boxes(&u->around)) {
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

/* x: the selected box's node (the scope's), to centre on */
static const ls_node *selected_node(ui *u, bool *top_level)
{
    ensure(u);
    *top_level = false;
    if (!u->around.valid || u->around.sel >= ui_boxview_boxes(&u->around)) return NULL;
    const ls_program *p = ui_scope_program(u, u->step);
    uint32_t id = u->around_ids[u->around.sel];
    return id && p ? ls_program_node(p, id) : NULL;
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
    .node = selected_node,
};
