/* The delegation table screen (`d`): per op type, how many nodes run on the CPU and how many
 * in each tag or lowered delegate at the current step, with the delegated share — what
 * ExecuTorch's print_delegation_info gives, split per backend and with percentages. Nodes of
 * a lowered submodule count for the tag it came from. */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "ops.h"
#include "ui.h"

#define MAX_COLS 24 /* CPU + tags shown as columns; more tags go to "other" */

typedef struct op_row {
    const char *op;
    uint32_t n[MAX_COLS + 1];
    uint32_t total;
} op_row;

typedef struct table {
    op_row *v;
    uint32_t n;
    const char *cols[MAX_COLS + 1]; /* 0 = CPU */
    int col_tag[MAX_COLS + 1];
    uint32_t n_cols;
    uint32_t n_subs;
} table;

static uint32_t col_of(ui *u, table *t, const char *tag)
{
    if (!tag) return 0;
    for (uint32_t i = 1; i < t->n_cols; i++)
        if (t->cols[i] == tag) return i;
    if (t->n_cols == MAX_COLS) return MAX_COLS;
    t->cols[t->n_cols] = tag;
    t->col_tag[t->n_cols] = ui_tag_index(u, tag);
    return t->n_cols++;
}

static void count_node(table *t, const char *op, uint32_t col)
{
    for (uint32_t i = 0; i < t->n; i++)
        if (t->v[i].op == op) {
            t->v[i].n[col]++;
            t->v[i].total++;
            return;
        }
    t->v = ls_realloc(t->v, sizeof *t->v * (t->n + 1));
    op_row *r = &t->v[t->n++];
    memset(r, 0, sizeof *r);
    r->op = op;
    r->n[col] = 1;
    r->total = 1;
}

static int cmp_rows(const void *a, const void *b)
{
    const op_row *x = a, *y = b;
    if (x->total != y->total) return x->total > y->total ? -1 : 1;
    return strcmp(x->op, y->op);
}

static void count_program(ui *u, table *t, const ls_program *p, const char *sub_tag)
{
    for (uint32_t i = 0; i < p->n_nodes; i++) {
        const ls_node *n = p->nodes[i];
        if (n->kind != LS_NODE_CALL) continue;
        const char *sub = ui_delegate_sub(p, n);
        if (sub) {
            const ls_submodule *s = ls_program_sub(p, sub);
            if (s && s->program) {
                t->n_subs++;
                count_program(u, t, s->program, ui_sub_tag(u, p, sub));
            }
            continue;
        }
        count_node(t, ls_intern(ui_node_op(p, n)), col_of(u, t, sub_tag ? sub_tag : n->tag));
    }
}

void ui_table_build(ui *u)
{
    ui_lines *l = &u->screen_lines;
    ui_lines_clear(l);
    table t = {0};
    t.cols[0] = "CPU";
    t.col_tag[0] = -1;
    t.n_cols = 1;
    const ls_program *p = u->h->steps[u->step].program;
    count_program(u, &t, p, NULL);
    qsort(t.v, t.n, sizeof *t.v, cmp_rows);
    uint32_t tot[MAX_COLS + 1] = {0}, all = 0;
    for (uint32_t i = 0; i < t.n; i++) {
        for (uint32_t c = 0; c <= MAX_COLS; c++) tot[c] += t.v[i].n[c];
        all += t.v[i].total;
    }
    uint32_t delegated = all - tot[0];
    ui_lines_add(l, UI_R_TITLE, -1, "step %u %s · %u delegated subgraph%s · %u of %u nodes delegated (%.1f%%) · %u on the CPU",
                 u->step, u->h->steps[u->step].pass, t.n_subs, t.n_subs == 1 ? "" : "s", delegated, all,
                 all ? 100.0 * delegated / all : 0.0, tot[0]);
    for (uint32_t c = 1; c < t.n_cols; c++) {
        const char *be = t.col_tag[c] >= 0 ? u->tag_backends[t.col_tag[c]] : NULL;
        ui_lines_add(l, UI_R_NORMAL, t.col_tag[c], "%c %-16s %-18s %6u nodes  %5.1f%%", ui_tag_letter(t.col_tag[c]), t.cols[c],
                     be ? be : "-", tot[c], all ? 100.0 * tot[c] / all : 0.0);
    }
    ui_lines_add(l, UI_R_NORMAL, -1, "%s", "");
    ls_buf b = {0};
    ls_buf_printf(&b, "%-24s", "op");
    for (uint32_t c = 0; c < t.n_cols; c++) ls_buf_printf(&b, " %8.8s", t.cols[c]);
    ls_buf_printf(&b, " %8s %10s", "total", "delegated");
    ui_lines_add(l, UI_R_KEY, -1, "%s", b.s);
    ls_buf_free(&b);
    for (uint32_t i = 0; i <= t.n; i++) {
        const op_row *r = i < t.n ? &t.v[i] : NULL;
        const uint32_t *n = r ? r->n : tot;
        uint32_t total = r ? r->total : all;
        ls_buf_printf(&b, "%-24.24s", r ? r->op : "Total");
        for (uint32_t c = 0; c < t.n_cols; c++) ls_buf_printf(&b, " %8u", n[c]);
        ls_buf_printf(&b, " %8u %9.1f%%", total, total ? 100.0 * (total - n[0]) / total : 0.0);
        ui_lines_add(l, r ? UI_R_NORMAL : UI_R_KEY, -1, "%s", b.s);
        ls_buf_free(&b);
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

const ui_view_ops ui_table_ops = {
    .name = "table",
    .title = title,
    .count = count,
    .draw_row = draw_row,
    .match = match,
};
