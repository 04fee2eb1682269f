/* The partitions pane: the CPU and each tag (or lowered delegate) of the current step with
 * its colour swatch, backend, node count, constants (count and bytes) and state buffers.
 * Enter on a tag filters the graph to its nodes (again: all nodes); on a lowered delegate it
 * opens the delegate's graph. */
#include <stdio.h>
#include <string.h>

#include "ui.h"

static void title(ui *u, ls_buf *b)
{
    ui_model_ensure(u);
    ls_buf_printf(b, "Partitions · %u", u->m.n_parts);
}

static uint32_t count(ui *u)
{
    ui_model_ensure(u);
    return u->m.n_parts;
}

static void draw_row(ui *u, uint32_t row, int y, int x, int w, bool cursor)
{
    ui_model_ensure(u);
    if (row >= u->m.n_parts) return;
    const ui_part *pt = &u->m.parts[row];
    short pair;
    attr_t a = ui_tag_attr(u, pt->color, &pair);
    bool focus = u->focus == UI_P_PARTITIONS;
    bool filtered = (u->filter == UI_FILTER_TAG && pt->tag == u->filter_value && !pt->sub) ||
                    (u->filter == UI_FILTER_CPU && !pt->tag && !u->depth);
    if (cursor && focus) a |= A_REVERSE;
    if (filtered) a |= A_BOLD;
    if (cursor && focus) ui_fill(u, y, x, w, a, pair);
    char sw[8];
    if (pt->color < 0) snprintf(sw, sizeof sw, " ");
    else if (u->colors == UI_COLORS_NONE) snprintf(sw, sizeof sw, "%c", ui_tag_letter(pt->color));
    else snprintf(sw, sizeof sw, "%s", u->utf8 ? "█" : "#");
    ui_put(u, y, x + 1, 1, a, pair, sw);
    char bytes[32], line[256];
    ui_fmt_bytes(pt->const_bytes, bytes, sizeof bytes);
    char blob[32];
    ui_fmt_bytes(pt->blob_bytes, blob, sizeof blob);
    if (w < 44) {
        char details[64];
        int dl = pt->opaque ? snprintf(details, sizeof details, "opaque %s", blob)
                            : snprintf(details, sizeof details, "%un %uc %s", pt->nodes, pt->consts, bytes);
        if (pt->states) dl += snprintf(details + dl, sizeof details - (size_t)dl, " %us", pt->states);
        int nw = w - 5 - dl;
        if (nw < 4) nw = 4;
        /* a name too long keeps its end: lowered_module_0 and _1 stay apart ("…module_1") */
        int len = (int)strlen(pt->name);
        if (len <= nw)
            snprintf(line, sizeof line, "%-*s %s", nw, pt->name, details);
        else
            snprintf(line, sizeof line, "%s%s %s", u->utf8 ? "…" : "~", pt->name + len - (nw - 1), details);
    } else if (pt->opaque) {
        snprintf(line, sizeof line, "%-16.16s %-15.15s opaque blob %s (Enter: what it says)", pt->name,
                 pt->backend ? pt->backend : "-", blob);
    } else {
        snprintf(line, sizeof line, "%-16.16s %-15.15s %5u nodes %3u const %-9s %u state", pt->name,
                 pt->backend ? pt->backend : "-", pt->nodes, pt->consts, bytes, pt->states);
    }
    ui_put(u, y, x + 3, w - 3, a, pair, line);
}

static void activate(ui *u, uint32_t row)
{
    ui_model_ensure(u);
    if (row >= u->m.n_parts) return;
    const ui_part *pt = &u->m.parts[row];
    if (pt->sub) {
        if (!ui_enter_sub(u, pt->sub)) { /* opaque: select its call, whose node pane says what the blob says */
            const ls_program *p = ui_scope_program(u, u->step);
            for (uint32_t i = 0; p && i < p->n_nodes; i++) {
                const char *callee = ui_delegate_sub(p, p->nodes[i]);
                if (callee && callee == pt->sub) {
                    ui_select_id(u, p->nodes[i]->id);
                    u->focus = UI_P_NODE;
                    break;
                }
            }
        }
        return;
    }
    if (u->depth) return;
    bool same = (pt->tag && u->filter == UI_FILTER_TAG && u->filter_value == pt->tag) ||
                (!pt->tag && u->filter == UI_FILTER_CPU);
    ui_filter_set(u, same ? "" : pt->tag ? pt->tag : "cpu");
}

/* / in this pane finds a partition by its name or backend */
static bool match(ui *u, uint32_t row, const regex_t *re)
{
    ui_model_ensure(u);
    if (row >= u->m.n_parts) return false;
    const ui_part *pt = &u->m.parts[row];
    return regexec(re, pt->name, 0, NULL, 0) == 0 || (pt->backend && regexec(re, pt->backend, 0, NULL, 0) == 0);
}

const ui_view_ops ui_partitions_ops = {
    .name = "partitions",
    .title = title,
    .count = count,
    .draw_row = draw_row,
    .activate = activate,
    .match = match,
};
