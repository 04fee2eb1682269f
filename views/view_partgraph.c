/* The partition graph screen (`g`, `:graph`): the regions of the program at this step — each
 * delegate, each tag not yet lowered, each island of CPU nodes, with the inputs and outputs —
 * as boxes in topological order, the tensors entering each box written above it (regions.h:
 * the same drawing as `lowerscope graph`). j/k go from box to box, Enter opens a box's nodes in
 * the graph pane (a delegate: its lowered graph; a folded box: every region drawn), < and >
 * scroll a wide row. The regions, their folded boxes and those boxes' layout come with the
 * step's rows (rows.c, made as the step finishes); the screen draws the rows of boxes it shows
 * at its width, UTF-8 or ASCII, so opening it and each key cost what is on screen. The unfolded
 * boxes are made when Enter asks for them, O(regions). */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "ui.h"

#define BOX_W UI_PG_BOX_W

void ui_partgraph_free(ui *u)
{
    ui_boxview_free(&u->pg);
    ls_box_layout_free(&u->pg_layout);
    if (u->pg_boxes_shared) memset(&u->pg_boxes, 0, sizeof u->pg_boxes); /* the step's, like the regions */
    else ls_region_boxes_free(&u->pg_boxes);
    u->pg_boxes_shared = false;
    memset(&u->pg_regions, 0, sizeof u->pg_regions); /* the step's (rows.c): not ours to free */
}

/* The region holding the node selected in the graph pane (a lowered module's nodes: its box). */
static int32_t selected_region(ui *u)
{
    const ls_program *top = u->h->steps[u->step].program;
    if (u->depth) {
        for (uint32_t g = 0; g < u->pg_regions.n; g++)
            if (u->pg_regions.v[g].sub == u->scope[0]) return (int32_t)g;
        return -1;
    }
    return u->sel_id ? ls_regions_of_node(&u->pg_regions, top, u->sel_id) : -1;
}

/* Boxes as wide as their widest line where the terminal has room for four of them a row (30 at
 * 80 or 120 columns, up to 56): on a wide terminal "→ BundledBackend · 284 nodes" and the ops
 * read in full instead of "284 no…". */
static int box_width(ui *u, const ls_region_boxes *bx)
{
    int cap = u->cols / 4 > 56 ? 56 : u->cols / 4;
    if (cap <= BOX_W) return BOX_W;
    const ls_program *prog = u->h->steps[u->step].program;
    if (u->pg_text_w_prog != prog || u->pg_text_w_unfold != u->pg_unfold) {
        /* the first 4096 boxes, until one needs the widest box: measuring every line of a
         * million-node program's boxes cost the screen 40 ms (bench_ui); once per step. Measured
         * as `lowerscope graph` measures them (ls_boxes_fit_width: the cells as drawn). */
        u->pg_text_w = ls_boxes_fit_width(bx->boxes, bx->n < 4096 ? bx->n : 4096, BOX_W, 56);
        u->pg_text_w_prog = prog;
        u->pg_text_w_unfold = u->pg_unfold;
    }
    int need = u->pg_text_w > cap ? cap : u->pg_text_w;
    return need < BOX_W ? BOX_W : need;
}

/* A box's colour, asked for the boxes drawn (not made for every box when the screen opens). */
static int32_t box_color(ui *u, uint32_t b)
{
    const ls_region *g = &u->pg_regions.v[u->pg_boxes.region_of_box[b]];
    return u->pg_boxes.boxes[b].fold > 1 ? -2 : g->tag ? ui_tag_index(u, g->tag) : -1;
}

void ui_partgraph_build(ui *u)
{
    ui_partgraph_free(u);
    u->pg_step = u->step;
    const ui_step_rows *sr = ui_top_rows(u, u->step);
    u->pg_islands = u->pg_delegates = 0;
    if (sr && sr->has_table) { /* made once per step with its rows */
        u->pg_regions = sr->regions;
        u->pg_islands = sr->n_islands;
        u->pg_delegates = sr->n_delegates;
    }
    const ls_box_layout *L;
    if (sr && sr->has_table && !u->pg_unfold) { /* the boxes an ASCII drawing has too */
        u->pg_boxes = sr->boxes;
        u->pg_boxes_shared = true;
        L = &sr->layout;
    } else {
        ls_region_boxes_build(&u->pg_regions, !u->pg_unfold, !u->utf8, &u->pg_boxes);
        ls_box_layout_build(u->pg_boxes.boxes, u->pg_boxes.n, u->pg_boxes.edges, u->pg_boxes.n_edges, &u->pg_layout);
        L = &u->pg_layout;
    }
    ui_boxview_set_layout(&u->pg, L, box_width(u, &u->pg_boxes), !u->utf8);
    u->pg.color_of = box_color;
    u->pg_cols = u->cols;
    int32_t g = selected_region(u);
    ui_pane *p = ui_pane_of(u, UI_P_SCREEN);
    p->left = p->top = 0;
    ui_boxview_select(u, &u->pg, p, g >= 0 ? u->pg_boxes.box_of_region[g] : 0);
}

static void ensure(ui *u)
{
    if (!u->pg.valid || u->pg_step != u->step) {
        ui_partgraph_build(u);
    } else if (u->pg_cols != u->cols && box_width(u, &u->pg_boxes) != u->pg.box_w) {
        /* the boxes widen or narrow with the terminal: drawn again, the same box selected */
        uint32_t sel = u->pg.sel;
        ui_partgraph_build(u);
        if (sel < ui_boxview_boxes(&u->pg)) ui_boxview_select(u, &u->pg, ui_pane_of(u, UI_P_SCREEN), sel);
    }
}

static void title(ui *u, ls_buf *b)
{
    ensure(u);
    const ls_regions *r = &u->pg_regions;
    uint32_t islands = u->pg_islands, delegates = u->pg_delegates; /* counted with the step's rows */
    char a[32], c[32];
    /* the header names the step: the line keeps its room for the counts and bytes at 80 columns */
    ls_buf_printf(b, "Partitions · %u CPU island%s, %u delegate%s · %s to %s, %s back", islands, islands == 1 ? "" : "s",
                  delegates, delegates == 1 ? "" : "s", ls_fmt_bytes(r->cpu_to_delegates, a, sizeof a),
                  delegates == 1 ? "it" : "them", ls_fmt_bytes(r->delegates_to_cpu, c, sizeof c));
    /* where it fits (the folded boxes say how many regions they stand for) */
    char folded[64];
    int fl = snprintf(folded, sizeof folded, " · %u regions in %u boxes", r->n, u->pg_boxes.n);
    if (u->pg_boxes.n < r->n && ui_text_width(b->s) + fl <= u->cols - 1) ls_buf_puts(b, folded);
}

static uint32_t count(ui *u)
{
    ensure(u);
    return ui_boxview_lines(&u->pg);
}

static void draw_row(ui *u, uint32_t row, int y, int x, int w, bool cursor)
{
    (void)cursor;
    ensure(u);
    ui_boxview_draw_row(u, &u->pg, ui_pane_of(u, UI_P_SCREEN), row, y, x, w);
}

static void activate(ui *u, uint32_t row)
{
    (void)row;
    ensure(u);
    if (u->pg.sel >= u->pg_boxes.n) return;
    const ls_box *bx = &u->pg_boxes.boxes[u->pg.sel];
    uint32_t gi = u->pg_boxes.region_of_box[u->pg.sel];
    const ls_region *g = &u->pg_regions.v[gi];
    if (bx->fold > 1) { /* draw every region, this one selected */
        u->pg_unfold = true;
        ui_partgraph_build(u);
        ui_boxview_select(u, &u->pg, ui_pane_of(u, UI_P_SCREEN), u->pg_boxes.box_of_region[gi]);
        ui_message(u, false, "every region drawn: %u boxes", u->pg_boxes.n);
        return;
    }
    u->screen = UI_S_MAIN;
    u->focus = UI_P_GRAPH;
    while (u->depth) ui_leave_sub(u);
    if (g->kind == LS_REGION_DELEGATE) {
        ui_enter_sub(u, g->sub);
        return;
    }
    const ls_program *p = u->h->steps[u->step].program;
    uint32_t *ids = ls_malloc(sizeof *ids * (g->n_members + 1));
    for (uint32_t k = 0; k < g->n_members; k++) ids[k] = p->nodes[u->pg_regions.members[g->member0 + k]]->id;
    ui_filter_ids(u, g->name, ids, g->n_members);
    free(ids);
}

/* The status line names the selected box and what Enter does with it. */
static void say_selected(ui *u)
{
    if (u->pg.sel >= u->pg_boxes.n) return;
    const ls_box *bx = &u->pg_boxes.boxes[u->pg.sel];
    const ls_region *g = &u->pg_regions.v[u->pg_boxes.region_of_box[u->pg.sel]];
    if (bx->fold > 1) ui_message(u, false, "%s folded (%s) — Enter draws every region", bx->text[0], bx->text[2]);
    else if (g->kind == LS_REGION_DELEGATE)
        ui_message(u, false, "%s: %s, %u nodes — Enter opens its graph", g->name, g->backend ? g->backend : "?", g->n_nodes);
    else
        ui_message(u, false, "%s: %u node%s — Enter shows them in the graph", g->name, g->n_members, g->n_members == 1 ? "" : "s");
}

static bool action(ui *u, ui_action a)
{
    ensure(u);
    if (a == UI_A_ENTER) {
        activate(u, 0);
        return true;
    }
    uint32_t before = u->pg.sel;
    if (!ui_boxview_move(u, &u->pg, ui_pane_of(u, UI_P_SCREEN), a)) return false;
    if (u->pg.sel != before) say_selected(u);
    return true;
}

/* A search lands on a line: the box drawn there is selected. */
static void moved(ui *u, uint32_t row)
{
    ensure(u);
    ui_boxview_moved(u, &u->pg, row);
}

static bool match(ui *u, uint32_t row, const regex_t *re)
{
    (void)re;
    ensure(u);
    return ui_boxview_match(u, &u->pg, row);
}

static bool match_next(ui *u, uint32_t row, bool backward)
{
    ensure(u);
    return ui_boxview_match_next(u, &u->pg, row, backward);
}

/* x: a node of the selected box, of the step's top level: a delegate's call, else the
 * region's first node */
static const ls_node *selected_node(ui *u, bool *top_level)
{
    ensure(u);
    *top_level = true;
    if (u->pg.sel >= u->pg_boxes.n) return NULL;
    const ls_region *g = &u->pg_regions.v[u->pg_boxes.region_of_box[u->pg.sel]];
    const ls_program *p = u->h->steps[u->step].program;
    const ls_node *first = NULL;
    for (uint32_t k = 0; k < g->n_members; k++) {
        const ls_node *n = p->nodes[u->pg_regions.members[g->member0 + k]];
        if (!first) first = n;
        if (g->kind == LS_REGION_DELEGATE && n->kind == LS_NODE_CALL && n->op && n->op->id == LS_OP_call_delegate)
            return n;
    }
    return first;
}

const ui_view_ops ui_partgraph_ops = {
    .name = "partition graph",
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
