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
    /* the first row is where the rest is not (the CPU, or the module shown); the title counts
     * the rest, as `lowerscope partitions` does: "2 delegates" (a bare count took in the CPU's
     * row, which can hold nothing once every node is delegated) */
    uint32_t delegates = 0, tags = 0;
    for (uint32_t i = 1; i < u->m.n_parts; i++) {
        if (u->m.parts[i].sub || u->m.parts[i].opaque) delegates++;
        else tags++;
    }
    if (!delegates && !tags) {
        ls_buf_puts(b, u->depth ? "Partitions · none inside" : "Partitions · CPU only");
        return;
    }
    ls_buf_puts(b, "Partitions ·");
    if (delegates) ls_buf_printf(b, " %u delegate%s", delegates, delegates == 1 ? "" : "s");
    if (tags) ls_buf_printf(b, "%s %u tag%s", delegates ? "," : "", tags, tags == 1 ? "" : "s");
}

static uint32_t count(ui *u)
{
    ui_model_ensure(u);
    return u->m.n_parts;
}

/* The details at a level of detail: 0 all, 1 without the bytes, 2 the nodes (and states) only. */
static int details_at(const ui_part *pt, int level, char *buf, size_t cap)
{
    char bytes[32];
    ui_fmt_bytes(pt->opaque ? pt->blob_bytes : pt->const_bytes, bytes, sizeof bytes);
    /* the bytes last: they are the constants' and the states' together ("3n 0c 1s 128B") */
    char states[16] = "";
    if (pt->states) snprintf(states, sizeof states, " %us", pt->states);
    int n = pt->opaque      ? snprintf(buf, cap, level < 2 ? "opaque %s" : "opaque", bytes)
            : level == 0 ? snprintf(buf, cap, "%un %uc%s %s", pt->nodes, pt->consts, states, bytes)
            : level == 1 ? snprintf(buf, cap, "%un %uc%s", pt->nodes, pt->consts, states)
                         : snprintf(buf, cap, "%un%s", pt->nodes, states);
    return n < 0 ? 0 : (size_t)n < cap ? n : (int)cap - 1;
}

int ui_part_details(const ui_part *pt, char *buf, size_t cap)
{
    return details_at(pt, 0, buf, cap);
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
    char line[256], details[64];
    /* the details give way before the name does: the bytes, then the constants go, so that
     * what is shown is whole and the name keeps 8 columns (at 80 columns: "…e_0 1603n 139c 14s") */
    int dl = 0, nw = 0;
    for (int level = 0; level <= 2; level++) {
        dl = details_at(pt, level, details, sizeof details);
        nw = w - 5 - dl;
        if (nw >= 8 || nw >= (int)strlen(pt->name)) break;
    }
    if (nw < 4) nw = 4;
    /* a name too long keeps its end: lowered_module_0 and _1 stay apart ("…module_1"); the
     * backends in a column of their own when every row of the step has room for it */
    const ui_step_rows *sr = u->m.sr;
    int len = (int)strlen(pt->name);
    if (sr->part_name_w + 1 + sr->part_backend_w + 1 + sr->part_details_w <= w - 4 && sr->part_backend_w)
        snprintf(line, sizeof line, "%-*s %-*s %s", sr->part_name_w, pt->name, nw - sr->part_name_w - 1,
                 pt->backend ? pt->backend : "-", details);
    else if (len <= nw)
        snprintf(line, sizeof line, "%-*s %s", nw, pt->name, details);
    else
        snprintf(line, sizeof line, "%s%s %s", u->utf8 ? "…" : "~", pt->name + len - (nw - 1), details);
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
