/* The delegation table screen (`d`): per op type, how many nodes run on the CPU and how many
 * in each tag or lowered delegate at the current step, with the delegated share — what
 * ExecuTorch's print_delegation_info gives, split per backend and with percentages. The table
 * is the core's (delegation.h), as `lowerscope partitions` prints it. */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "delegation.h"
#include "ui.h"

#define pct ls_deleg_pct

void ui_table_build(ui *u)
{
    ui_lines *l = &u->screen_lines;
    ui_lines_clear(l);
    const ls_step *st = &u->h->steps[u->step];
    const ls_program *p = st->program;
    ls_deleg_table full, merged;
    ls_deleg_table_build(p, &full);
    const ls_deleg_table *t;
    bool by_backend = ls_deleg_shown(&full, &merged, &t);
    ls_buf sum = {0};
    ls_deleg_summary(&full, &sum);
    ui_lines_add(l, UI_R_TITLE, -1, "%s, step %u %s%s%s%s: %s", u->file, u->step, st->pass, st->detail ? " (" : "",
                 st->detail ? st->detail : "", st->detail ? ")" : "", sum.s);
    ls_buf_free(&sum);
    ui_lines_add(l, UI_R_NORMAL, -1, "%s", "");
    ls_buf b = {0};
    ls_buf_printf(&b, "%-22s", "op");
    for (uint32_t c = 0; c < t->n_cols; c++) ls_buf_printf(&b, " %8.8s", t->cols[c].tag);
    ls_buf_printf(&b, " %8s %10s", "CPU", "delegated");
    ui_lines_add(l, UI_R_KEY, -1, "%s", b.s);
    ls_buf_free(&b);
    for (uint32_t i = 0; i <= t->n_rows; i++) {
        const ls_deleg_row *r = i < t->n_rows ? &t->rows[i] : NULL;
        uint32_t total = r ? r->total : t->total, cpu = r ? r->cpu : t->cpu;
        ls_buf_printf(&b, "%-22.22s", r ? r->op : "total");
        for (uint32_t c = 0; c < t->n_cols; c++) ls_buf_printf(&b, " %8u", r ? r->by_col[c] : t->cols[c].nodes);
        ls_buf_printf(&b, " %8u %9.1f%%", cpu, pct(total - cpu, total));
        ui_lines_add(l, r ? UI_R_NORMAL : UI_R_KEY, -1, "%s", b.s);
        ls_buf_free(&b);
    }
    ui_lines_add(l, UI_R_NORMAL, -1, "%s", "");
    for (uint32_t c = 0; c < t->n_cols; c++) {
        const ls_deleg_col *col = &t->cols[c];
        int tag = by_backend ? -1 : ui_tag_index(u, col->tag);
        if (by_backend)
            ui_lines_add(l, UI_R_NORMAL, -1, "%s · %u nodes (%.1f%%)", col->tag, col->nodes, pct(col->nodes, t->total));
        else
            ui_lines_add(l, UI_R_NORMAL, tag, "%c %s: %s · %u nodes (%.1f%%)", ui_tag_letter(tag), col->tag,
                         col->backend ? col->backend : "?", col->nodes, pct(col->nodes, t->total));
    }
    /* what stays on the CPU and why; Enter selects the node */
    bool header = false;
    for (uint32_t i = 0; i < p->n_nodes; i++) {
        const ls_node *n = p->nodes[i];
        if (!ls_deleg_on_cpu(n)) continue;
        if (!header) {
            ui_lines_add(l, UI_R_NORMAL, -1, "%s", "");
            ui_lines_add(l, UI_R_TITLE, -1, "On the CPU:");
            header = true;
        }
        ui_line *ln = ui_lines_add(l, UI_R_NORMAL, -1, "  %-24s %-16s %s%s%s", n->name, ls_deleg_op_label(n),
                                   ls_deleg_cpu_reason(u->h, u->step, n), n->reason_detail ? " — " : "",
                                   n->reason_detail ? n->reason_detail : "");
        ln->jump_node = n->name;
        ln->has_jump = true;
    }
    if (by_backend) ls_deleg_table_free(&merged);
    ls_deleg_table_free(&full);
}

static void title(ui *u, ls_buf *b)
{
    ls_buf_printf(b, "Delegation table · step %u %s · q back", u->step, u->h->steps[u->step].pass);
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
    .count = ui_screen_count,
    .draw_row = ui_screen_draw_row,
    .activate = activate,
    .match = ui_screen_match,
};
