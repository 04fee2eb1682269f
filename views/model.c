/* What the views show, derived from the history: the tag table (one colour per tag over the
 * whole history), the graph rows of the current step and scope (the program's nodes in graph
 * order with the nodes this step removed merged back in at their old place), the rows the
 * filter lets through, and the partitions summary. Built lazily, O(n) per step change; the
 * views format only the rows they draw. */
#include <inttypes.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "delegation.h"
#include "ops.h"
#include "ui.h"

/* ---- tags: the UI's table (u->dc) grows with the steps as they are derived */

void ui_tags_init(ui *u)
{
    for (uint32_t s = 0; s < u->h->n; s++) ui_derive_tags(&u->dc, u->h->steps[s].program, NULL);
}

void ui_tags_free(ui *u)
{
    ui_derive_free(&u->dc);
}

int ui_tag_index(const ui *u, const char *tag)
{
    return ui_tagtab_index(&u->dc.tags, tag);
}

const char *ui_sub_tag(const ui *u, const ls_program *p, const char *sub)
{
    return ui_derive_sub_tag((ui_derive *)&u->dc, p, sub); /* the cache is the UI thread's own */
}

const char *ui_delegate_sub(const ls_program *p, const ls_node *n)
{
    if (n->kind != LS_NODE_CALL || !n->op || n->op->id != LS_OP_call_delegate || !n->nargs) return NULL;
    if (n->args[0].kind != LS_ARG_NODE) return NULL;
    const ls_node *ga = ls_program_node(p, n->args[0].v.node);
    return ga && ga->kind == LS_NODE_GET_ATTR ? ga->target : NULL;
}

int ui_node_color(const ui *u, const ls_program *p, const ls_node *n)
{
    if (n->tag) return ui_tag_index(u, n->tag);
    const char *sub = ui_delegate_sub(p, n);
    if (sub) return ui_tag_index(u, ui_sub_tag(u, p, sub));
    if (n->kind == LS_NODE_GET_ATTR && ls_program_sub(p, n->target)) return ui_tag_index(u, ui_sub_tag(u, p, n->target));
    if (u->depth > 0 && (p == u->m.prog || p == u->m.prev)) return ui_tag_index(u, ui_sub_tag(u, ui_scope_program_parent(u), u->scope[u->depth - 1]));
    return -1;
}

/* ---- scope */

const ls_program *ui_scope_program(const ui *u, uint32_t step)
{
    if (step >= u->h->n) return NULL;
    const ls_program *p = u->h->steps[step].program;
    for (int i = 0; i < u->depth && p; i++) {
        const ls_submodule *s = ls_program_sub(p, u->scope[i]);
        p = s ? s->program : NULL;
    }
    return p;
}

const ls_program *ui_scope_program_parent(const ui *u)
{
    const ls_program *p = u->h->steps[u->step].program;
    for (int i = 0; i + 1 < u->depth && p; i++) {
        const ls_submodule *s = ls_program_sub(p, u->scope[i]);
        p = s ? s->program : NULL;
    }
    return p;
}

const ls_program *ui_row_program(const ui *u, const ui_row *r)
{
    return r->mark == UI_MARK_REMOVED ? u->m.prev : u->m.prog;
}

/* ---- node text */

const ls_input_spec *ui_input_spec(const ls_program *p, const ls_node *n)
{
    if (n->kind != LS_NODE_PLACEHOLDER) return NULL;
    int32_t i = ls_program_input_spec(p, n->name);
    return i >= 0 ? &p->inputs[i] : NULL;
}

const char *ui_node_op(const ls_program *p, const ls_node *n)
{
    return ui_node_op_spec(n, n->kind == LS_NODE_PLACEHOLDER ? ui_input_spec(p, n) : NULL);
}

const char *ui_node_op_spec(const ls_node *n, const ls_input_spec *s)
{
    switch (n->kind) {
    case LS_NODE_PLACEHOLDER: {
        if (!s) return "[placeholder]";
        static const char *kinds[] = {"[input]", "[param]", "[buffer]", "[const]", "[object]", "[token]", "[const input]"};
        return s->kind < sizeof kinds / sizeof kinds[0] ? kinds[s->kind] : "[placeholder]";
    }
    case LS_NODE_GET_ATTR: return "get_attr";
    case LS_NODE_OUTPUT: return "output";
    default:
        if (n->op) return n->op->id == LS_OP_call_delegate ? "call_delegate" : ls_op_short(n->op);
        return ls_target_short(n->target);
    }
}

void ui_fmt_args(const ls_program *p, const ls_node *n, ls_buf *b)
{
    if (n->kind == LS_NODE_PLACEHOLDER) {
        const ls_input_spec *s = ui_input_spec(p, n);
        if (s && s->target) ls_buf_printf(b, "%s", s->target);
        return;
    }
    if (n->kind == LS_NODE_GET_ATTR) {
        const ls_submodule *s = ls_program_sub(p, n->target);
        ls_buf_printf(b, "%s%s%s", n->target ? n->target : "", s ? " " : "", s && s->backend_id ? s->backend_id : "");
        return;
    }
    bool first = true;
    for (uint16_t i = 0; i < n->nargs; i++) {
        const ls_arg *a = &n->args[i];
        if (a->flags & LS_ARGF_DEFAULT) continue;
        if (!first) ls_buf_puts(b, ", ");
        first = false;
        if ((a->flags & LS_ARGF_KEYWORD) && a->name) ls_buf_printf(b, "%s=", a->name);
        ls_arg_text(p, a, b);
    }
}

void ui_fmt_bytes(uint64_t n, char *buf, size_t cap)
{
    if (n < 1024) snprintf(buf, cap, "%" PRIu64 "B", n);
    else if (n < 1024 * 1024) snprintf(buf, cap, "%.1fK", (double)n / 1024);
    else if (n < 1024ull * 1024 * 1024) snprintf(buf, cap, "%.1fM", (double)n / (1024.0 * 1024));
    else snprintf(buf, cap, "%.2fG", (double)n / (1024.0 * 1024 * 1024));
}

/* ---- the rows in view */

void ui_model_free(ui_model *m)
{
    ui_rows_free(m->own);
    free(m->vis);
    free(m->vis_of_row);
    memset(m, 0, sizeof *m);
}

void ui_model_invalidate(ui *u)
{
    u->m.valid = false;
    u->node_valid = false;
}

void ui_model_refilter(ui *u)
{
    u->m.vis_valid = false;
    u->node_valid = false;
}

static const char *scope_name(const ui *u)
{
    return u->depth ? u->scope[u->depth - 1] : NULL;
}

/* The rows of a step at the top level: derived by the pipeline's thread before the step was
 * published, or (a history made whole beforehand) here, once. */
const ui_step_rows *ui_top_rows(ui *u, uint32_t step)
{
    if (step < u->n_step_rows) {
        ui_step_rows *sr = __atomic_load_n(&u->step_rows[step], __ATOMIC_ACQUIRE);
        if (sr) return sr;
    }
    if (u->live) return NULL; /* not derived yet: not published either */
    if (step >= u->n_step_rows) {
        u->step_rows = ls_realloc(u->step_rows, sizeof *u->step_rows * u->h->n);
        memset(u->step_rows + u->n_step_rows, 0, sizeof *u->step_rows * (u->h->n - u->n_step_rows));
        u->n_step_rows = u->h->n;
        u->own_step_rows = true;
    }
    const ls_program *p = u->h->steps[step].program;
    ui_part cpu = {.name = "CPU", .backend = "portable", .color = -1};
    u->step_rows[step] = ui_rows_build(&u->dc, u->h, step, p, step ? u->h->steps[step - 1].program : NULL, NULL, &cpu);
    ui_rows_add_findings(u->step_rows[step], &u->h->steps[step].verify);
    return u->step_rows[step];
}

void ui_step_rows_free_all(ui *u)
{
    if (u->own_step_rows)
        for (uint32_t i = 0; i < u->n_step_rows; i++) ui_rows_free(u->step_rows[i]);
    if (u->own_step_rows) free(u->step_rows);
    u->step_rows = NULL;
    u->n_step_rows = 0;
    u->own_step_rows = false;
}

static void build_scope_rows(ui *u)
{
    ui_model *m = &u->m;
    ui_rows_free(m->own);
    m->own = NULL;
    m->prog = ui_scope_program(u, u->step);
    m->prev = u->step > 0 ? ui_scope_program(u, u->step - 1) : NULL;
    if (!u->depth) {
        m->sr = ui_top_rows(u, u->step);
    } else {
        /* inside a lowered module: its own rows, made on entering it */
        const ls_program *parent = ui_scope_program_parent(u);
        const ls_submodule *s = ls_program_sub(parent, scope_name(u));
        ui_part cpu = {.name = scope_name(u), .backend = s ? s->backend_id : NULL,
                       .color = ui_tag_index(u, ui_sub_tag(u, parent, scope_name(u)))};
        m->own = ui_rows_build(&u->dc, u->h, u->step, m->prog, m->prev, scope_name(u), &cpu);
        m->sr = m->own;
    }
    static const ui_step_rows none;
    if (!m->sr || !m->prog) m->sr = &none;
    m->parts = m->sr->parts;
    m->n_parts = m->sr->n_parts;
    m->n_added = m->sr->n_added;
    m->n_changed = m->sr->n_changed;
    m->n_removed = m->sr->n_removed;
    m->inside_added = m->sr->inside_added;
    m->inside_changed = m->sr->inside_changed;
    m->inside_removed = m->sr->inside_removed;
}

static ui_row row_of(const ui_model *m, uint32_t v)
{
    if (m->vis) return ui_rows_at(m->sr, m->vis[v]);
    if (m->vis_pos) return (ui_row){m->prog->nodes[v], m->sr->mark_of_pos ? m->sr->mark_of_pos[v] : UI_MARK_NONE};
    return ui_rows_at(m->sr, v);
}

ui_row ui_model_row(ui *u, uint32_t v)
{
    ui_model_ensure(u);
    return row_of(&u->m, v);
}

int ui_cmp_u32(const void *a, const void *b)
{
    uint32_t x = *(const uint32_t *)a, y = *(const uint32_t *)b;
    return x < y ? -1 : x > y;
}

static void take_rows(ui *u, const uint32_t *rows, uint32_t n)
{
    ui_model *m = &u->m;
    for (uint32_t i = 0; i < n; i++)
        if (u->diff_marks || !ui_rows_is_removed(m->sr, rows[i])) m->vis[m->n_vis++] = rows[i];
}

/* A filter's rows, in row order, O(the rows shown): by tag, the CPU or an op, the step's groups
 * of rows that match (row_index.c; an op also costs a test of each op text of the step); a
 * region of the g screen, the row of each of its node ids. */
static void filtered_rows(ui *u)
{
    ui_model *m = &u->m;
    m->n_vis = 0;
    if (u->filter == UI_FILTER_IDS) { /* a region's nodes: the row of each id (ids are stable across steps) */
        m->vis = ls_malloc(sizeof *m->vis * ((size_t)u->filter_ids_n + 1));
        for (uint32_t i = 0; i < u->filter_ids_n; i++) {
            int64_t r = ui_rows_find(m->sr, u->filter_ids[i]);
            if (r >= 0 && (u->diff_marks || !ui_rows_is_removed(m->sr, (uint32_t)r))) m->vis[m->n_vis++] = (uint32_t)r;
        }
        qsort(m->vis, m->n_vis, sizeof *m->vis, ui_cmp_u32);
        return;
    }
    if (u->filter != UI_FILTER_OP) {
        const uint32_t *rows;
        const void *key = u->filter == UI_FILTER_CPU ? (const void *)ui_cpu_rows_key : u->filter_value;
        uint32_t n = ui_row_groups_of(&m->sr->by_tag, key, &rows);
        m->vis = ls_malloc(sizeof *m->vis * ((size_t)n + 1));
        take_rows(u, rows, n);
        return;
    }
    const ui_row_groups *g = &m->sr->by_op;
    size_t total = 0;
    uint32_t groups = 0;
    for (uint32_t k = 0; k < g->n; k++)
        if (ui_op_matches(g->keys[k], u->filter_value)) total += g->start[k + 1] - g->start[k], groups++;
    m->vis = ls_malloc(sizeof *m->vis * (total + 1));
    for (uint32_t k = 0; k < g->n; k++)
        if (ui_op_matches(g->keys[k], u->filter_value)) take_rows(u, g->rows + g->start[k], g->start[k + 1] - g->start[k]);
    if (groups > 1) qsort(m->vis, m->n_vis, sizeof *m->vis, ui_cmp_u32); /* one text from two ops' names */
}

/* Without a filter the visible rows are the rows (or, marks off, the positions): nothing to
 * build. A filter takes the rows it shows (filtered_rows); a sort without one, every row. */
static void build_vis(ui *u)
{
    ui_model *m = &u->m;
    free(m->vis);
    free(m->vis_of_row);
    m->vis = NULL;
    m->vis_of_row = NULL;
    m->vis_pos = false;
    m->vis_valid = true;
    if (!m->prog) {
        m->n_vis = 0;
        return;
    }
    if (u->filter == UI_FILTER_NONE && u->sort == UI_SORT_GRAPH) {
        m->vis_pos = !u->diff_marks && m->sr->n_removed;
        m->n_vis = m->vis_pos ? m->prog->n_nodes : m->sr->n_rows;
        return;
    }
    if (u->filter != UI_FILTER_NONE) {
        filtered_rows(u);
    } else {
        m->vis = ls_malloc(sizeof *m->vis * (m->sr->n_rows + 1));
        m->n_vis = 0;
        for (uint32_t i = 0; i < m->sr->n_rows; i++) /* every row, to be sorted */
            if (u->diff_marks || !ui_rows_is_removed(m->sr, i)) m->vis[m->n_vis++] = i;
    }
    ui_sort_vis(u, m->vis, m->n_vis); /* by a run's column, when asked (overlay.c) */
    if (u->sort == UI_SORT_GRAPH) return; /* vis is in row order: found by bisection */
    /* sorted, the way back from a row (ui_rows_find gives a node's) to its place in vis */
    m->vis_of_row = ls_malloc(sizeof *m->vis_of_row * (m->sr->n_rows + 1));
    memset(m->vis_of_row, 0xff, sizeof *m->vis_of_row * (m->sr->n_rows + 1));
    for (uint32_t v = 0; v < m->n_vis; v++) m->vis_of_row[m->vis[v]] = v;
}

void ui_model_ensure(ui *u)
{
    ui_model *m = &u->m;
    if (!m->valid || m->step != u->step) {
        m->step = u->step;
        build_scope_rows(u);
        m->valid = true;
        m->vis_valid = false;
    }
    if (!m->vis_valid) build_vis(u);
}

int32_t ui_model_find(ui *u, uint32_t id)
{
    ui_model_ensure(u);
    ui_model *m = &u->m;
    if (!id || !m->prog) return -1;
    if (m->vis) {
        int64_t r = ui_rows_find(m->sr, id);
        if (r < 0 || r >= m->sr->n_rows) return -1;
        if (m->vis_of_row) return m->vis_of_row[r] != UINT32_MAX ? (int32_t)m->vis_of_row[r] : -1;
        uint32_t lo = 0, hi = m->n_vis;
        while (lo < hi) {
            uint32_t mid = lo + (hi - lo) / 2;
            if (m->vis[mid] < r) lo = mid + 1;
            else hi = mid;
        }
        return lo < m->n_vis && m->vis[lo] == r ? (int32_t)lo : -1;
    }
    if (m->vis_pos) return ls_program_pos(m->prog, id);
    return (int32_t)ui_rows_find(m->sr, id);
}
