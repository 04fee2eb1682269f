/* The delegation table screen (`d`): per op type, how many nodes run on the CPU and how many
 * in each tag or lowered delegate at the current step, with the delegated share — what
 * ExecuTorch's print_delegation_info gives, split per backend and with percentages. The table
 * is the core's (delegation.h), as `lowerscope partitions` prints it, made once per step with
 * the step's rows (rows.c). What stays on the CPU comes in the core's groups by reason (made
 * once per step), each with its ops and, for ops no backend supports, what the backends took
 * instead; Enter on a group goes to its first node in the list of nodes after them (a million
 * at step 0 of a big program), which is formatted row by row as it is drawn or searched. */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "delegation.h"
#include "safe_text.h"
#include "ui.h"

#define pct ls_deleg_pct

/* The groups of what stays on the CPU, by reason, as lines (each Enter goes to its first node). */
static const ls_deleg_cpu_groups *groups_of(ui *u)
{
    static const ls_deleg_cpu_groups none;
    const ui_step_rows *sr = ui_top_rows(u, u->step);
    return sr && sr->has_table ? &sr->cpu_groups : &none; /* made with the step's rows (rows.c) */
}

static void cpu_groups(ui *u, ui_lines *l, const ls_deleg_table *full)
{
    const ls_deleg_cpu_groups *g = groups_of(u);
    if (!g->n) return;
    ls_buf tk = {0}, ops = {0};
    ls_deleg_backends_took(full, &tk);
    const char *unsupported = ls_cpu_reason_text(LS_WHY_OP_UNSUPPORTED);
    ui_lines_add(l, UI_R_NORMAL, -1, "%s", "");
    ui_lines_add(l, UI_R_TITLE, -1, "On the CPU, by reason (Enter goes to a group's first node):");
    u->table_groups_from = l->n;
    for (uint32_t k = 0; k < g->n; k++) {
        const ls_deleg_cpu_group *gr = &g->v[k];
        ops.len = 0;
        if (ops.s) ops.s[0] = 0;
        ls_deleg_cpu_group_ops(gr, 4, &ops);
        ui_line *ln = ui_lines_add(l, UI_R_NORMAL, -1, "  %5u× %s: %s", gr->n, gr->why, ops.s ? ops.s : "");
        ln->fold = (int32_t)k + 1;
        if (tk.s && !strncmp(gr->why, unsupported, strlen(unsupported))) {
            ln = ui_lines_add(l, UI_R_DIM, -1, "         instead: %s", tk.s);
            ln->fold = (int32_t)k + 1;
        }
    }
    ls_buf_free(&tk);
    ls_buf_free(&ops);
}

void ui_table_build(ui *u)
{
    ui_lines *l = &u->screen_lines;
    ui_lines_clear(l);
    const ls_step *st = &u->h->steps[u->step];
    const ui_step_rows *sr = ui_top_rows(u, u->step);
    u->table_cpu_from = 0;
    u->table_n_cpu = 0;
    if (!sr || !sr->has_table) return;
    const ls_deleg_table *full = &sr->table;
    ls_deleg_table merged;
    const ls_deleg_table *t;
    bool by_backend = ls_deleg_shown(full, &merged, &t);
    ls_buf sum = {0};
    ls_deleg_summary(full, &sum);
    ui_lines_add(l, UI_R_TITLE, -1, "%s, step %u %s%s%s%s: %s", u->file, u->step, st->pass, st->detail ? " (" : "",
                 st->detail ? st->detail : "", st->detail ? ")" : "", sum.s);
    ls_buf_free(&sum);
    ui_lines_add(l, UI_R_NORMAL, -1, "%s", "");
    /* columns as wide as their headers and ops, as `lowerscope partitions` prints them (cut to 8,
     * two lowered modules' columns both read "lowered_"); < and > scroll a wide table */
    int op_w = 22, col_w[64];
    char head[64][25]; /* each column's tag as shown (escaped), cut to 24 bytes */
    for (uint32_t i = 0; i < t->n_rows; i++)
        if ((int)strlen(t->rows[i].op) > op_w) op_w = strlen(t->rows[i].op) > 40 ? 40 : (int)strlen(t->rows[i].op);
    for (uint32_t c = 0; c < t->n_cols && c < 64; c++) {
        ls_safe_copy(t->cols[c].tag, strlen(t->cols[c].tag), 0, head[c], sizeof head[c]);
        int n = ui_text_width(head[c]);
        col_w[c] = n < 8 ? 8 : n;
    }
    ls_buf b = {0};
    ls_buf_printf(&b, "%-*s", op_w, "op");
    for (uint32_t c = 0; c < t->n_cols; c++) {
        int pad = c < 64 ? col_w[c] - ui_text_width(head[c]) : 0;
        ls_buf_printf(&b, " %*s%s", pad, "", c < 64 ? head[c] : "…");
    }
    ls_buf_printf(&b, " %8s %10s", "CPU", "delegated");
    ui_lines_add(l, UI_R_KEY, -1, "%s", b.s);
    ls_buf_free(&b);
    for (uint32_t i = 0; i <= t->n_rows; i++) {
        const ls_deleg_row *r = i < t->n_rows ? &t->rows[i] : NULL;
        uint32_t total = r ? r->total : t->total, cpu = r ? r->cpu : t->cpu;
        ls_buf_printf(&b, "%-*.*s", op_w, op_w, r ? r->op : "total");
        for (uint32_t c = 0; c < t->n_cols; c++) ls_buf_printf(&b, " %*u", c < 64 ? col_w[c] : 8, r ? r->by_col[c] : t->cols[c].nodes);
        ls_buf_printf(&b, " %8u %9.1f%%", cpu, pct(total - cpu, total));
        ui_lines_add(l, r ? UI_R_NORMAL : UI_R_KEY, -1, "%s", b.s);
        ls_buf_free(&b);
    }
    ui_lines_add(l, UI_R_NORMAL, -1, "%s", "");
    for (uint32_t c = 0; c < t->n_cols; c++) {
        const ls_deleg_col *col = &t->cols[c];
        int tag = by_backend ? -1 : ui_tag_index(u, col->tag);
        if (by_backend)
            ui_lines_add(l, UI_R_NORMAL, -1, "%s · %u node%s (%.1f%%)", col->tag, col->nodes, col->nodes == 1 ? "" : "s",
                         pct(col->nodes, t->total));
        else {
            const char *module = ls_deleg_col_module(col);
            ui_lines_add(l, UI_R_NORMAL, tag, "%c %s: %s%s%s · %u node%s (%.1f%%)", ui_tag_letter(tag), col->tag,
                         col->backend ? col->backend : "?", module ? ", lowered as " : "", module ? module : "", col->nodes,
                         col->nodes == 1 ? "" : "s", pct(col->nodes, t->total));
        }
    }
    if (by_backend) ls_deleg_table_free(&merged);
    if (sr->n_cpu) cpu_groups(u, l, full);
    /* what stays on the CPU and why (Enter selects the node): one row each after these lines */
    if (sr->n_cpu) {
        ui_lines_add(l, UI_R_NORMAL, -1, "%s", "");
        ui_lines_add(l, UI_R_TITLE, -1, "On the CPU, node by node:");
    }
    u->table_cpu_from = l->n;
    u->table_n_cpu = sr->n_cpu;
    /* the node list's name and op columns as wide as the widest of its first 4096 (within 48 and
     * 28): the whole list of a million took 180 ms of the UI thread (bench_ui), and a later
     * name longer than these only pushes its own reason along */
    u->table_name_w = 24;
    u->table_op_w = 16;
    for (uint32_t k = 0; k < sr->n_cpu && k < 4096; k++) {
        const ls_node *n = sr->prog->nodes[sr->cpu_pos[k]];
        int nw = (int)strlen(n->name), ow = (int)strlen(ls_deleg_op_label(n));
        if (nw > u->table_name_w) u->table_name_w = nw > 48 ? 48 : nw;
        if (ow > u->table_op_w) u->table_op_w = ow > 28 ? 28 : ow;
    }
}

/* Row k of the CPU list, formatted now. */
static const ls_node *cpu_node(ui *u, uint32_t k)
{
    const ui_step_rows *sr = ui_top_rows(u, u->step);
    return sr && k < sr->n_cpu ? sr->prog->nodes[sr->cpu_pos[k]] : NULL;
}

static void cpu_text(ui *u, const ls_node *n, char *buf, size_t cap)
{
    snprintf(buf, cap, "  %-*s %-*s %s%s%s", u->table_name_w, n->name, u->table_op_w, ls_deleg_op_label(n),
             ls_deleg_cpu_reason(u->h, u->step, n),
             n->reason_detail ? " — " : "", n->reason_detail ? n->reason_detail : "");
}

static uint32_t count(ui *u)
{
    return u->screen_lines.n + u->table_n_cpu;
}

static void draw_row(ui *u, uint32_t row, int y, int x, int w, bool cursor)
{
    if (row < u->screen_lines.n) {
        ui_screen_draw_row(u, row, y, x, w, cursor);
        return;
    }
    const ls_node *n = cpu_node(u, row - u->table_cpu_from);
    if (!n) return;
    char text[1024];
    cpu_text(u, n, text, sizeof text);
    ui_line ln = {.text = text, .role = UI_R_NORMAL, .color = -1};
    ui_lines l = {.v = &ln, .n = 1};
    ui_lines_draw_row(u, &l, 0, y, x, w, cursor, ui_pane_of(u, UI_P_SCREEN)->left);
}

static bool match(ui *u, uint32_t row, const regex_t *re)
{
    if (row < u->screen_lines.n) return ui_screen_match(u, row, re);
    const ls_node *n = cpu_node(u, row - u->table_cpu_from);
    if (!n) return false;
    char text[1024];
    cpu_text(u, n, text, sizeof text);
    (void)re;
    return ui_search_matches(u, text);
}

static void title(ui *u, ls_buf *b)
{
    ls_buf_printf(b, "Delegation table · step %u %s · q back", u->step, u->h->steps[u->step].pass);
}

static void activate(ui *u, uint32_t row)
{
    if (row < u->screen_lines.n && u->screen_lines.v[row].fold) { /* a group: to its first node in the list */
        const ls_deleg_cpu_group *gr = &groups_of(u)->v[u->screen_lines.v[row].fold - 1];
        const ui_step_rows *sr = ui_top_rows(u, u->step);
        for (uint32_t k = 0; sr && k < sr->n_cpu; k++)
            if (sr->cpu_pos[k] == gr->nodes[0]) {
                ui_pane *p = ui_pane_of(u, UI_P_SCREEN);
                ui_pane_select(u, p, u->table_cpu_from + k);
                p->top = p->sel;
                ui_pane_clamp(u, p);
                ui_message(u, false, "%u node%s: %s — Enter on one selects it", gr->n, gr->n == 1 ? "" : "s", gr->why);
                return;
            }
        return;
    }
    const ls_node *n = row >= u->table_cpu_from ? cpu_node(u, row - u->table_cpu_from) : NULL;
    if (!n) return;
    u->screen = UI_S_MAIN;
    ui_jump(u, NULL, n->name);
}

const ui_view_ops ui_table_ops = {
    .name = "table",
    .title = title,
    .count = count,
    .draw_row = draw_row,
    .activate = activate,
    .match = match,
};
