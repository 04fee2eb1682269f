/* The delegation table screen (`d`): per op type, how many nodes run on the CPU and how many
 * in each tag or lowered delegate at the current step, with the delegated share — what
 * ExecuTorch's print_delegation_info gives, split per backend and with percentages. Nodes of
 * a lowered submodule count for the tag it came from. */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "ops.h"
#include "ui.h"

#define MAX_COLS 24 /* tags shown as columns; the CPU is the last one */

typedef struct op_row {
    const char *op;
    uint32_t n[MAX_COLS + 1]; /* per tag column, [MAX_COLS] = the CPU */
    uint32_t total;
} op_row;

typedef struct table {
    op_row *v;
    uint32_t n;
    const char *cols[MAX_COLS];
    const char *backends[MAX_COLS];
    int col_tag[MAX_COLS];
    uint32_t n_cols, tot[MAX_COLS + 1], all;
} table;

/* As `lowerscope partitions` counts: compute nodes only (no getitem, no delegate call), op
 * labels with their overload unless it is "default". */
static bool is_compute(const ls_node *n)
{
    return n->kind == LS_NODE_CALL && (!n->op || (n->op->id != LS_OP_getitem && n->op->id != LS_OP_call_delegate));
}

static const char *op_label(const ls_node *n)
{
    if (!n->op) return ls_target_short(n->target);
    if (n->op->overload && strcmp(n->op->overload, "default") != 0) return ls_internf("%s.%s", n->op->name, n->op->overload);
    return n->op->name;
}

static uint32_t col_of(ui *u, table *t, const char *tag, const char *backend)
{
    if (!tag) return MAX_COLS;
    for (uint32_t i = 0; i < t->n_cols; i++)
        if (t->cols[i] == tag) return i;
    if (t->n_cols == MAX_COLS) return MAX_COLS - 1;
    t->cols[t->n_cols] = tag;
    t->backends[t->n_cols] = backend;
    t->col_tag[t->n_cols] = ui_tag_index(u, tag);
    return t->n_cols++;
}

static void count_node(table *t, const char *op, uint32_t col)
{
    op_row *r = NULL;
    for (uint32_t i = 0; i < t->n && !r; i++)
        if (t->v[i].op == op) r = &t->v[i];
    if (!r) {
        t->v = ls_realloc(t->v, sizeof *t->v * (t->n + 1));
        r = &t->v[t->n++];
        memset(r, 0, sizeof *r);
        r->op = op;
    }
    r->n[col]++;
    r->total++;
    t->tot[col]++;
    t->all++;
}

static int cmp_rows(const void *a, const void *b)
{
    const op_row *x = a, *y = b;
    if (x->total != y->total) return x->total > y->total ? -1 : 1;
    return strcmp(x->op, y->op);
}

static void count_program(ui *u, table *t, const ls_program *p, const char *sub_label, const char *sub_backend,
                          const ls_program *top)
{
    for (uint32_t i = 0; i < p->n_nodes; i++) {
        const ls_node *n = p->nodes[i];
        if (!is_compute(n)) continue;
        const char *label = n->tag ? n->tag : sub_label;
        const char *backend = sub_backend ? sub_backend : label ? ls_program_tag_backend(top, label) : NULL;
        count_node(t, ls_intern(op_label(n)), col_of(u, t, label, backend));
    }
}

static double pct(uint32_t part, uint32_t total) { return total ? 100.0 * part / total : 0.0; }

void ui_table_build(ui *u)
{
    ui_lines *l = &u->screen_lines;
    ui_lines_clear(l);
    table t = {0};
    const ls_step *st = &u->h->steps[u->step];
    const ls_program *p = st->program;
    count_program(u, &t, p, NULL, NULL, p);
    for (uint32_t s = 0; s < p->n_subs; s++)
        if (p->subs[s].program)
            count_program(u, &t, p->subs[s].program, ui_sub_tag(u, p, p->subs[s].name), p->subs[s].backend_id, p);
    qsort(t.v, t.n, sizeof *t.v, cmp_rows);
    uint32_t delegated = t.all - t.tot[MAX_COLS];
    ui_lines_add(l, UI_R_TITLE, -1, "%s, step %u %s%s%s%s: %u compute nodes, %u delegated (%.1f%%) to %u tag%s", u->file,
                 u->step, st->pass, st->detail ? " (" : "", st->detail ? st->detail : "", st->detail ? ")" : "", t.all,
                 delegated, pct(delegated, t.all), t.n_cols, t.n_cols == 1 ? "" : "s");
    ui_lines_add(l, UI_R_NORMAL, -1, "%s", "");
    ls_buf b = {0};
    ls_buf_printf(&b, "%-22s", "op");
    for (uint32_t c = 0; c < t.n_cols; c++) ls_buf_printf(&b, " %8.8s", t.cols[c]);
    ls_buf_printf(&b, " %8s %10s", "CPU", "delegated");
    ui_lines_add(l, UI_R_KEY, -1, "%s", b.s);
    ls_buf_free(&b);
    for (uint32_t i = 0; i <= t.n; i++) {
        const op_row *r = i < t.n ? &t.v[i] : NULL;
        const uint32_t *n = r ? r->n : t.tot;
        uint32_t total = r ? r->total : t.all;
        ls_buf_printf(&b, "%-22.22s", r ? r->op : "total");
        for (uint32_t c = 0; c < t.n_cols; c++) ls_buf_printf(&b, " %8u", n[c]);
        ls_buf_printf(&b, " %8u %9.1f%%", n[MAX_COLS], pct(total - n[MAX_COLS], total));
        ui_lines_add(l, r ? UI_R_NORMAL : UI_R_KEY, -1, "%s", b.s);
        ls_buf_free(&b);
    }
    ui_lines_add(l, UI_R_NORMAL, -1, "%s", "");
    for (uint32_t c = 0; c < t.n_cols; c++)
        ui_lines_add(l, UI_R_NORMAL, t.col_tag[c], "%c %s: %s · %u nodes (%.1f%%)", ui_tag_letter(t.col_tag[c]), t.cols[c],
                     t.backends[c] ? t.backends[c] : "?", t.tot[c], pct(t.tot[c], t.all));
    /* what stays on the CPU and why; Enter selects the node */
    bool header = false;
    for (uint32_t i = 0; i < p->n_nodes; i++) {
        const ls_node *n = p->nodes[i];
        if (!is_compute(n) || n->tag) continue;
        if (!header) {
            ui_lines_add(l, UI_R_NORMAL, -1, "%s", "");
            ui_lines_add(l, UI_R_TITLE, -1, "On the CPU:");
            header = true;
        }
        const char *why = n->reason ? ls_cpu_reason_text((ls_cpu_reason)n->reason) : !n->op ? "unknown operator" : "";
        ui_line *ln = ui_lines_add(l, UI_R_NORMAL, -1, "  %-24s %-16s %s%s%s", n->name, ui_node_op(p, n), why,
                                   n->reason_detail ? " — " : "", n->reason_detail ? n->reason_detail : "");
        ln->jump_node = n->name;
        ln->has_jump = true;
    }
    free(t.v);
}

static void title(ui *u, ls_buf *b)
{
    ls_buf_printf(b, "Delegation table · step %u %s · q back", u->step, u->h->steps[u->step].pass);
}

static uint32_t count(ui *u) { return u->screen_lines.n; }

static void draw_row(ui *u, uint32_t row, int y, int x, int w, bool cursor)
{
    ui_lines_draw_row(u, &u->screen_lines, row, y, x, w, cursor);
}

static bool match(ui *u, uint32_t row, const regex_t *re)
{
    return row < u->screen_lines.n && regexec(re, u->screen_lines.v[row].text, 0, NULL, 0) == 0;
}

static void activate(ui *u, uint32_t row)
{
    if (row >= u->screen_lines.n || !u->screen_lines.v[row].has_jump) return;
    u->screen = UI_S_MAIN;
    ui_jump(u, NULL, u->screen_lines.v[row].jump_node);
}

const ui_view_ops ui_table_ops = {
    .name = "table",
    .title = title,
    .count = count,
    .draw_row = draw_row,
    .activate = activate,
    .match = match,
};
