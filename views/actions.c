/* What keys and the mouse do: selection that follows the node across steps, stepping,
 * entering and leaving lowered submodules, jumps by name, gd/gu, and the action dispatcher
 * (one switch over the action table in ui.h). */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "ui.h"

/* ---- selection and navigation */

const ls_node *ui_selected_node(ui *u, const ls_program **p, uint8_t *mark)
{
    ui_model_ensure(u);
    ui_pane *g = &u->panes[UI_P_GRAPH];
    if (!u->m.n_vis) return NULL;
    if (g->sel >= u->m.n_vis) g->sel = u->m.n_vis - 1;
    ui_row r = ui_model_row(u, g->sel);
    if (p) *p = ui_row_program(u, &r);
    if (mark) *mark = r.mark;
    return r.node;
}

/* Puts the graph cursor back on the selected node after the rows changed; when the node is
 * gone, the cursor keeps its position. */
void ui_reselect(ui *u)
{
    ui_model_ensure(u);
    ui_pane *g = &u->panes[UI_P_GRAPH];
    int32_t v = ui_model_find(u, u->sel_id);
    if (v >= 0) g->sel = (uint32_t)v;
    if (g->r.h > 0) ui_pane_clamp(u, g);
    else if (g->sel >= u->m.n_vis) g->sel = u->m.n_vis ? u->m.n_vis - 1 : 0;
    if (u->m.n_vis) u->sel_id = ui_model_row(u, g->sel).node->id;
    /* the node pane's lines are keyed by step, scope and node: made again only when one moved */
    u->panes[UI_P_NODE].sel = u->panes[UI_P_NODE].top = 0;
}

/* After the filter changed: the selection goes into it, to the first visible node at or after
 * where it was in graph order (the last one before it when none follows). O(n), once. */
void ui_filter_moved(ui *u)
{
    ui_model_ensure(u);
    ui_model *m = &u->m;
    if (!m->n_vis || ui_model_find(u, u->sel_id) >= 0) {
        ui_reselect(u);
        return;
    }
    if (!m->vis) { /* no filter: every row is visible */
        ui_reselect(u);
        return;
    }
    int64_t at = ui_rows_find(m->sr, u->sel_id);
    uint32_t best = m->vis[m->n_vis - 1];
    bool found = false;
    for (uint32_t v = 0; v < m->n_vis && at >= 0; v++)
        if (m->vis[v] >= (uint32_t)at && (!found || m->vis[v] < best)) {
            best = m->vis[v];
            found = true;
        }
    if (!found) best = m->vis[0];
    u->sel_id = ui_rows_at(m->sr, best).node->id;
    ui_reselect(u);
}

void ui_filter_ids(ui *u, const char *name, const uint32_t *ids, uint32_t n)
{
    free(u->filter_ids);
    u->filter_ids = ls_malloc(sizeof *u->filter_ids * (n + 1));
    memcpy(u->filter_ids, ids, sizeof *ids * n);
    qsort(u->filter_ids, n, sizeof *ids, ui_cmp_u32);
    u->filter_ids_n = 0;
    for (uint32_t i = 0; i < n; i++) /* once each */
        if (!u->filter_ids_n || u->filter_ids[u->filter_ids_n - 1] != u->filter_ids[i]) u->filter_ids[u->filter_ids_n++] = u->filter_ids[i];
    u->filter = UI_FILTER_IDS;
    u->filter_value = ls_intern(name);
    ui_model_refilter(u);
    ui_filter_moved(u);
    ui_message(u, false, "filter %s: %u node%s — Esc clears it", name, u->m.n_vis, u->m.n_vis == 1 ? "" : "s");
}

/* A node the filter hides stays hidden: the filter keeps itself and says so. */
static bool hidden_by_filter(ui *u, uint32_t id)
{
    if (u->filter == UI_FILTER_NONE || ui_model_find(u, id) >= 0) return false;
    const ls_node *n = u->m.prog ? ls_program_node(u->m.prog, id) : NULL;
    if (!n && u->m.prev) n = ls_program_node(u->m.prev, id);
    ui_message(u, false, "%s is not in the filter %s — Esc clears it", n ? n->name : "that node", u->filter_value);
    return true;
}

void ui_select_id(ui *u, uint32_t id)
{
    if (hidden_by_filter(u, id)) return;
    u->sel_id = id;
    ui_reselect(u);
}

void ui_set_step(ui *u, uint32_t step)
{
    if (step >= u->h->n) step = u->h->n - 1;
    while (u->depth > 0 && !ui_scope_program(u, step)) {
        u->depth--;
        u->sel_id = u->scope_sel[u->depth];
    }
    u->step = step;
    u->follow = false; /* the user picked a step: new ones no longer take the screen */
    ui_model_invalidate(u);
    ui_reselect(u);
    u->panes[UI_P_TIMELINE].sel = step;
    u->panes[UI_P_CHANGES].sel = u->panes[UI_P_CHANGES].top = 0;
    u->panes[UI_P_PARTITIONS].sel = 0;
    ui_layout(u);
}

bool ui_enter_sub(ui *u, const char *sub)
{
    const ls_program *p = ui_scope_program(u, u->step);
    const ls_submodule *s = p ? ls_program_sub(p, sub) : NULL;
    if (s && !s->program) { /* a blob no inspector reads (backend.h): the node pane says what it can */
        ui_message(u, false, "%s (%s): its blob is opaque to lowerscope; the node pane shows what it says", s->name,
                   s->backend_id && *s->backend_id ? s->backend_id : "?");
        return false;
    }
    if (!s || u->depth >= UI_MAX_DEPTH) {
        ui_message(u, true, "%s: no such lowered module at this step", sub ? sub : "?");
        return false;
    }
    u->scope_sel[u->depth] = u->sel_id;
    u->scope[u->depth++] = s->name;
    u->sel_id = 0;
    u->filter = UI_FILTER_NONE;
    ui_model_invalidate(u);
    u->panes[UI_P_GRAPH].sel = u->panes[UI_P_GRAPH].top = 0;
    ui_reselect(u);
    ui_layout(u);
    ui_message(u, false, "in %s (%s) — Backspace returns", s->name, s->backend_id ? s->backend_id : "?");
    return true;
}

void ui_leave_sub(ui *u)
{
    if (!u->depth) {
        ui_message(u, false, "already at the top-level program");
        return;
    }
    u->depth--;
    u->sel_id = u->scope_sel[u->depth];
    u->filter = UI_FILTER_NONE;
    ui_model_invalidate(u);
    ui_reselect(u);
    ui_layout(u);
    ui_message(u, false, "back in %s", u->depth ? u->scope[u->depth - 1] : "the top-level program");
}

bool ui_jump(ui *u, const char *prog, const char *node)
{
    if (!node) return false;
    const char *cur = u->depth ? u->scope[u->depth - 1] : NULL;
    if (prog != cur) {
        while (u->depth) ui_leave_sub(u);
        if (prog && !ui_enter_sub(u, prog)) return false;
    }
    ui_model_ensure(u);
    const ls_program *sets[2] = {u->m.prog, u->m.prev};
    for (int i = 0; i < 2; i++) {
        if (!sets[i]) continue;
        int32_t pos = ls_program_find(sets[i], node);
        if (pos < 0) continue;
        uint32_t id = sets[i]->nodes[pos]->id;
        if (ui_model_find(u, id) < 0 && !u->diff_marks && i == 1) {
            u->diff_marks = true;
            ui_model_refilter(u);
        }
        if (hidden_by_filter(u, id)) return false;
        ui_select_id(u, id);
        if (ui_model_find(u, id) >= 0) return true;
    }
    ui_message(u, true, "%s: no node of that name at this step", node);
    return false;
}

void ui_replace_history(ui *u, ls_history *h)
{
    ui_run_session_free(u->run); /* its runners read the programs of the history going away */
    u->run = NULL;
    ui_partgraph_free(u);
    u->pg_text_w_prog = NULL; /* its programs go */
    u->node_valid = false;    /* the node pane's lines are about one of its nodes */
    ui_around_free(u);
    ui_compare_free(u);
    if (u->owned_h) ui_core_free(u->owned_h);
    /* the rows derived for the history going away (its own, or the live pipeline's, which keeps
     * running and is freed with the history the UI was started on) */
    ui_step_rows_free_all(u);
    u->live = NULL;
    u->owned_h = h;
    u->h = h;
    ui_tags_free(u);
    ui_tags_init(u);
    u->depth = 0;
    u->filter = UI_FILTER_NONE;
    u->screen = UI_S_MAIN;
    u->step = 0;
    ui_set_step(u, h->n - 1);
}

void ui_open_method(ui *u, const char *method)
{
    ls_error err = {0};
    ls_history *nh;
    if (!method || !*method) { /* the file's methods, as Tab completes them */
        const char *const *names;
        uint32_t n = ui_core_methods(u->h, &names);
        ls_buf b = {0};
        for (uint32_t i = 0; i < n && i < 12; i++) ls_buf_printf(&b, "%s%s", i ? ", " : "", names[i]);
        if (n > 12) ls_buf_printf(&b, ", ... (%u; Tab lists them)", n);
        if (n) ui_message(u, true, "method NAME: which method? %s", b.s);
        else ui_message(u, true, "method NAME: %s is not a .pte, whose methods :method opens (another model of a .pt2: "
                                 "lowerscope FILE --model NAME)", u->h->path ? u->h->path : "the file");
        ls_buf_free(&b);
        return;
    }
    if (ui_refuse_while_running(u, "method")) return; /* it takes references to the file's objects */
    if (ui_core_method(u->h, method, &nh, &err) != 0) {
        ui_message(u, true, "%s", err.msg);
        return;
    }
    ui_replace_history(u, nh);
    ui_message(u, false, "method %s", method);
}

/* Whether opening `over` on top of `s` keeps s to go back to: the table, run and export
 * screens share one set of lines (screen_lines), so one of them over another overwrites it;
 * only the table's can be made again (the run's would run the program again). */
static bool keeps_under(ui_screen s, ui_screen over)
{
    bool lines = over == UI_S_TABLE || over == UI_S_RUN || over == UI_S_EXPORT;
    return s != UI_S_MAIN && s != over && !(lines && (s == UI_S_RUN || s == UI_S_EXPORT));
}

void ui_close_screen(ui *u)
{
    if (!u->n_under) {
        u->screen = UI_S_MAIN;
        return;
    }
    ui_screen closing = u->screen;
    u->n_under--;
    u->screen = u->under[u->n_under].screen;
    ui_pane *p = &u->panes[UI_P_SCREEN];
    ui_rect r = p->r; /* where it is on the terminal may have changed meanwhile */
    *p = u->under[u->n_under].pane;
    p->r = r;
    if (u->screen == UI_S_TABLE && (closing == UI_S_RUN || closing == UI_S_EXPORT)) {
        uint32_t sel = p->sel, top = p->top;
        ui_table_build(u); /* its lines were the other screen's */
        p->sel = sel;
        p->top = top;
    }
    ui_pane_clamp(u, p);
}

void ui_push_screen(ui *u, ui_screen s)
{
    ui_pane *p = &u->panes[UI_P_SCREEN];
    if (!keeps_under(u->screen, s)) {
        if (u->screen == UI_S_MAIN) u->n_under = 0;
    } else {
        if (u->n_under == sizeof u->under / sizeof u->under[0]) { /* the oldest goes */
            memmove(&u->under[0], &u->under[1], sizeof u->under[0] * (u->n_under - 1));
            u->n_under--;
        }
        u->under[u->n_under].screen = u->screen;
        u->under[u->n_under++].pane = *p;
    }
    u->screen = s;
    p->ops = s == UI_S_TABLE       ? &ui_table_ops
             : s == UI_S_RUN       ? &ui_run_ops
             : s == UI_S_EXPORT    ? &ui_export_ops
             : s == UI_S_PARTGRAPH ? &ui_partgraph_ops
             : s == UI_S_AROUND    ? &ui_around_ops
             : s == UI_S_COMPARE   ? &ui_compare_ops
                                   : &ui_help_ops;
    p->sel = p->top = p->left = 0;
    if (s == UI_S_TABLE) ui_table_build(u);
    else if (s == UI_S_RUN) ui_run_build(u);
    else if (s == UI_S_HELP) ui_help_build(u); /* the export screen's lines come with the export */
    else if (s == UI_S_PARTGRAPH) ui_partgraph_build(u);
    else if (s == UI_S_AROUND) ui_around_build(u);
}

void ui_forget_screen(ui *u, ui_screen s)
{
    uint32_t kept = 0;
    for (uint32_t i = 0; i < u->n_under; i++)
        if (u->under[i].screen != s) u->under[kept++] = u->under[i];
    u->n_under = kept;
}

void ui_open_screen(ui *u, ui_screen s)
{
    if (u->screen == s) {
        ui_close_screen(u);
        return;
    }
    if (s == UI_S_AROUND) { /* the graph's node */
        const ls_node *n = ui_selected_node(u, NULL, NULL);
        u->around_id = n ? n->id : 0;
    }
    ui_push_screen(u, s);
}

/* gd / gu: pressed again, they go through the other arguments / users of the node where the
 * cycle started. */
static void cycle_related(ui *u, bool users)
{
    const ls_program *p;
    uint8_t mark;
    const ls_node *n = ui_selected_node(u, &p, &mark);
    if (!n) return;
    ui_action a = users ? UI_A_USERS : UI_A_PRODUCER;
    if (u->last_action == a && u->cycle_origin) {
        u->cycle_index++;
    } else {
        u->cycle_origin = n->id;
        u->cycle_index = 0;
    }
    const ls_node *o = ls_program_node(p, u->cycle_origin);
    if (!o) {
        p = u->m.prog;
        o = p ? ls_program_node(p, u->cycle_origin) : NULL;
    }
    if (!o) return;
    uint32_t ids[256], n_ids = 0;
    if (users) {
        int32_t pos = ls_program_pos(p, o->id);
        uint32_t cnt = 0;
        const uint32_t *us = pos >= 0 ? ls_program_users(p, (uint32_t)pos, &cnt) : NULL;
        for (uint32_t i = 0; i < cnt && n_ids < 256; i++) ids[n_ids++] = p->nodes[us[i]]->id;
    } else {
        for (uint16_t i = 0; i < o->nargs; i++) {
            const ls_arg *ar = &o->args[i];
            uint32_t one = ar->kind == LS_ARG_NODE ? ar->v.node : 0;
            uint32_t cnt = ar->kind == LS_ARG_NODES || ar->kind == LS_ARG_OPT_NODES ? ar->n : one ? 1 : 0;
            for (uint32_t k = 0; k < cnt && n_ids < 256; k++) {
                uint32_t id = one ? one : ar->v.nodes[k];
                bool dup = !id;
                for (uint32_t j = 0; j < n_ids && !dup; j++) dup = ids[j] == id;
                if (!dup) ids[n_ids++] = id;
            }
        }
    }
    if (!n_ids) {
        ui_message(u, false, "%s has no %s", o->name, users ? "users" : "arguments from other nodes");
        return;
    }
    uint32_t k = u->cycle_index % n_ids;
    const ls_node *t = ls_program_node(p, ids[k]);
    bool shown = u->filter == UI_FILTER_NONE || ui_model_find(u, ids[k]) >= 0;
    ui_select_id(u, ids[k]); /* a node the filter hides: it says so */
    if (shown) ui_message(u, false, "%s %u/%u of %s: %s", users ? "user" : "argument", k + 1, n_ids, o->name, t ? t->name : "?");
}

static void move_sel(ui *u, int64_t delta)
{
    ui_pane *p = ui_focused_pane(u);
    uint32_t n = p->ops->count(u);
    if (!n) return;
    int64_t s = (int64_t)p->sel + delta;
    if (s < 0) s = 0;
    if (s >= (int64_t)n) s = n - 1;
    ui_pane_select(u, p, (uint32_t)s);
}

/* PgDn / PgUp: the view scrolls by a page and the cursor moves with it (from the top, the
 * first PgDn shows the next page, not only the row below the last one shown) */
static void page_by(ui *u, int dir)
{
    ui_pane *p = ui_focused_pane(u);
    uint32_t n = p->ops->count(u);
    if (!n) return;
    int64_t rows = ui_pane_rows(p), last_top = (int64_t)n > rows ? (int64_t)n - rows : 0;
    int64_t top = (int64_t)p->top + dir * rows, s = (int64_t)p->sel + dir * rows;
    p->top = (uint32_t)(top < 0 ? 0 : top > last_top ? last_top : top);
    ui_pane_select(u, p, (uint32_t)(s < 0 ? 0 : s >= (int64_t)n ? (int64_t)n - 1 : s));
}

static void cycle_focus(ui *u, int dir)
{
    static const ui_pane_id order[] = {UI_P_GRAPH, UI_P_NODE, UI_P_CHANGES, UI_P_TIMELINE, UI_P_PARTITIONS};
    int n = (int)(sizeof order / sizeof order[0]), i = 0;
    while (i < n && order[i] != u->focus) i++;
    u->focus = order[((i + dir) % n + n) % n];
}

void ui_run_action(ui *u, ui_action a)
{
    ui_pane *p = ui_focused_pane(u);
    int page = ui_pane_rows(p);
    if (u->too_small && a != UI_A_QUIT && a != UI_A_REDRAW) {
        u->last_action = a;
        return; /* nothing to act on until the terminal is big enough */
    }
    if (a != UI_A_NONE && p->ops->action && p->ops->action(u, a)) { /* the view's own meaning of the key */
        u->last_action = a;
        return;
    }
    switch (a) {
    case UI_A_NONE: break;
    case UI_A_DOWN: move_sel(u, 1); break;
    case UI_A_UP: move_sel(u, -1); break;
    case UI_A_HALF_DOWN: move_sel(u, page / 2 ? page / 2 : 1); break;
    case UI_A_HALF_UP: move_sel(u, -(page / 2 ? page / 2 : 1)); break;
    case UI_A_PAGE_DOWN: page_by(u, 1); break;
    case UI_A_PAGE_UP: page_by(u, -1); break;
    case UI_A_FIRST: move_sel(u, -(int64_t)p->ops->count(u)); break;
    case UI_A_LAST: move_sel(u, p->ops->count(u)); break;
    case UI_A_NEXT_PANE:
    case UI_A_PREV_PANE:
        if (u->screen == UI_S_MAIN) cycle_focus(u, a == UI_A_NEXT_PANE ? 1 : -1);
        break;
    case UI_A_PANE_1:
    case UI_A_PANE_2:
    case UI_A_PANE_3:
    case UI_A_PANE_4:
    case UI_A_PANE_5: /* on screen order: partitions, passes, graph, node, changes */
        if (u->screen != UI_S_MAIN) u->screen = UI_S_MAIN;
        u->focus = (ui_pane_id)(UI_P_PARTITIONS + (a - UI_A_PANE_1));
        break;
    case UI_A_STEP_NEXT:
        if (u->step + 1 < u->h->n) ui_set_step(u, u->step + 1);
        else if (ui_running(u)) ui_message(u, false, "step %u is not ready yet", u->step + 1);
        else if (u->h->not_run) ui_message(u, true, "no pass ran: %s", u->h->not_run);
        else ui_message(u, false, "last step");
        break;
    case UI_A_STEP_PREV:
        if (u->step > 0) ui_set_step(u, u->step - 1);
        else ui_message(u, false, "first step");
        break;
    case UI_A_STEP_FIRST: ui_set_step(u, 0); break;
    case UI_A_STEP_LAST: ui_set_step(u, u->h->n - 1); break;
    case UI_A_ENTER:
        if (p->ops->activate && p->ops->count(u)) p->ops->activate(u, p->sel);
        break;
    case UI_A_BACK:
        if (u->screen != UI_S_MAIN) {
            ui_close_screen(u);
        } else if (u->depth) {
            ui_leave_sub(u);
            ui_search_forget(u);
        } else {
            ui_leave_sub(u); /* says it is at the top already */
        }
        break;
    case UI_A_PRODUCER: cycle_related(u, false); break;
    case UI_A_USERS: cycle_related(u, true); break;
    case UI_A_DIFF:
        u->diff_marks = !u->diff_marks;
        ui_model_refilter(u);
        ui_reselect(u);
        ui_message(u, false, "diff marks %s", u->diff_marks ? "on" : "off");
        break;
    case UI_A_SEARCH: ui_prompt_open(u, '/'); break;
    case UI_A_SEARCH_NEXT: ui_search_next(u, false); break;
    case UI_A_SEARCH_PREV: ui_search_next(u, true); break;
    case UI_A_FILTER: ui_prompt_open(u, 'f'); break;
    case UI_A_CANCEL:
        if (u->screen != UI_S_MAIN) {
            ui_close_screen(u);
        } else {
            u->search_active = false;
            u->search[0] = 0;
            if (u->filter != UI_FILTER_NONE) {
                u->filter = UI_FILTER_NONE;
                ui_model_refilter(u);
                ui_reselect(u);
            }
            ui_message(u, false, "search and filter cleared");
        }
        break;
    case UI_A_TABLE: ui_open_screen(u, UI_S_TABLE); break;
    case UI_A_PARTGRAPH: ui_open_screen(u, UI_S_PARTGRAPH); break;
    case UI_A_AROUND: {
        /* the node selected on this screen (a box of the partition graph, of the neighbourhood),
         * else the graph's */
        if (u->screen != UI_S_MAIN && !p->ops->node) {
            ui_message(u, true, "x: the rows here are not nodes (q, then x on a node of the graph)");
            break;
        }
        bool top_level = false;
        const ls_node *n = u->screen == UI_S_MAIN ? ui_selected_node(u, NULL, NULL) : p->ops->node(u, &top_level);
        if (!n) break;
        if (top_level)
            while (u->depth) ui_leave_sub(u); /* the neighbourhood is the graph pane's scope's */
        u->around_id = n->id;
        if (u->screen == UI_S_AROUND) ui_around_build(u); /* centred on the other node, in place */
        else ui_push_screen(u, UI_S_AROUND);
        break;
    }
    case UI_A_SCROLL_LEFT:
        p->left = p->left > 8 ? p->left - 8 : 0;
        break;
    case UI_A_SCROLL_RIGHT: p->left += 8; break;
    case UI_A_RUN:
        if (ui_refuse_while_running(u, "running a step")) break;
        if (u->screen == UI_S_RUN) {
            ui_run_again(u); /* state carries over */
            break;
        }
        u->run_args[0] = 0;
        u->screen = UI_S_MAIN;
        ui_open_screen(u, UI_S_RUN);
        break;
    case UI_A_HELP: ui_open_screen(u, UI_S_HELP); break;
    case UI_A_EXPORT:
        if (ui_refuse_while_running(u, "export")) break;
        ui_prompt_open(u, ':');
        snprintf(u->prompt, sizeof u->prompt, "export ");
        u->prompt_len = strlen(u->prompt);
        break;
    case UI_A_METHOD: {
        const char *next = ui_core_next_method(u->h);
        if (next) ui_open_method(u, next);
        else ui_message(u, true, "no other method that runs here (:method NAME opens any; lowerscope info lists them)");
        break;
    }
    case UI_A_COMMAND: ui_prompt_open(u, ':'); break;
    case UI_A_NEXT_DIFF:
    case UI_A_PREV_DIFF:
        if (u->screen != UI_S_MAIN) u->screen = UI_S_MAIN;
        if (ui_overlay_jump(u, a == UI_A_NEXT_DIFF ? 1 : -1)) u->focus = UI_P_GRAPH;
        break;
    case UI_A_OVERLAY:
        u->overlay = !u->overlay;
        ui_model_refilter(u);
        ui_reselect(u);
        ui_message(u, false, "run columns %s%s", u->overlay ? "on" : "off",
                   u->overlay && !ui_run_stats(u) ? " (nothing measured at this step: r runs it)" : "");
        break;
    case UI_A_SORT:
    case UI_A_SORT_REVERSE: ui_sort_next(u, a == UI_A_SORT_REVERSE); break;
    case UI_A_COMPARE:
        ui_prompt_open(u, ':');
        snprintf(u->prompt, sizeof u->prompt, "compare ");
        u->prompt_len = strlen(u->prompt);
        break;
    case UI_A_REDRAW: clearok(curscr, TRUE); break;
    case UI_A_QUIT:
        if (u->screen != UI_S_MAIN) ui_close_screen(u);
        else u->quit = true;
        break;
    default: break;
    }
    if (a != UI_A_NONE) u->last_action = a; /* a pending prefix (g) does not break a gd/gu cycle */
}

/* ---- mouse */

void ui_on_mouse(ui *u)
{
    MEVENT *e = &u->mouse;
    ui_pane_id hit = UI_P_ALL;
    int first = u->screen == UI_S_MAIN ? 0 : UI_P_SCREEN, last = u->screen == UI_S_MAIN ? UI_P_COUNT : UI_P_ALL;
    for (int i = first; i < last; i++) {
        ui_rect r = u->panes[i].r;
        if (e->y >= r.y && e->y < r.y + r.h && e->x >= r.x && e->x < r.x + r.w) hit = (ui_pane_id)i;
    }
    if (hit == UI_P_ALL) return;
    ui_pane *p = &u->panes[hit];
    if (u->screen == UI_S_MAIN) u->focus = hit;
    if (e->bstate & (BUTTON4_PRESSED | BUTTON5_PRESSED)) {
        int d = e->bstate & BUTTON4_PRESSED ? -3 : 3;
        uint32_t n = p->ops->count(u);
        int64_t top = (int64_t)p->top + d, h = ui_pane_rows(p);
        if (top > (int64_t)n - h) top = (int64_t)n - h;
        if (top < 0) top = 0;
        p->top = (uint32_t)top;
        if (p->sel < p->top) ui_pane_select(u, p, p->top);
        else if (p->sel >= p->top + (uint32_t)h) ui_pane_select(u, p, p->top + (uint32_t)h - 1);
        return;
    }
    if (e->y > p->r.y) {
        uint32_t row = p->top + (uint32_t)(e->y - p->r.y - 1);
        if (row < p->ops->count(u)) {
            ui_pane_select(u, p, row);
            if (e->bstate & BUTTON1_DOUBLE_CLICKED) ui_run_action(u, UI_A_ENTER);
        }
    }
}

