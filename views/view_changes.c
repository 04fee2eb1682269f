/* The change log: the current step's report sentences, then the verifier's findings (and the
 * pass's error, first, when it failed), wrapped to the pane's width. Enter jumps to the node
 * a sentence names. */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "ui.h"

typedef struct item {
    const char *text, *prog, *node;
    ui_role role;
    const char *bullet;
} item;

static uint32_t n_items(ui *u)
{
    const ls_step *st = &u->h->steps[u->step];
    return (st->error ? 1 : 0) + st->report.n + st->verify.n;
}

static item item_at(ui *u, uint32_t row)
{
    const ls_step *st = &u->h->steps[u->step];
    item it = {0};
    if (st->error) {
        if (row == 0) return (item){st->error, NULL, NULL, UI_R_ERROR, "pass failed:"};
        row--;
    }
    if (row < st->report.n) {
        const ls_sentence *s = &st->report.v[row];
        return (item){s->text, s->program, s->node, UI_R_NORMAL, u->utf8 ? "•" : "*"};
    }
    row -= st->report.n;
    if (row < st->verify.n) {
        const ls_finding *f = &st->verify.v[row];
        bool err = f->severity == LS_SEV_ERROR;
        return (item){f->msg, f->program, f->node, err ? UI_R_ERROR : UI_R_WARN, err ? "error:" : "warning:"};
    }
    return it;
}

static void title(ui *u, ls_buf *b)
{
    const ls_step *st = &u->h->steps[u->step];
    ls_buf_printf(b, "Changes · step %u %s · %u sentence%s", u->step, st->pass, st->report.n, st->report.n == 1 ? "" : "s");
    if (st->verify.n) ls_buf_printf(b, " · %u finding%s", st->verify.n, st->verify.n == 1 ? "" : "s");
    if (!n_items(u)) ls_buf_puts(b, " · nothing changed");
}

/* Display lines: each item wrapped at word boundaries to the pane's width. A step of a large
 * program has hundreds of thousands of sentences, so items are wrapped as far as the rows asked
 * for (the view, a search, G): the count is the lines wrapped so far plus one for each item not
 * wrapped yet, and grows to the exact count as the rest is reached. Started again when the step
 * or the width changes. */
typedef struct wline {
    uint32_t item, off, len; /* byte range of the item's text */
} wline;

static struct {
    const ui *u;
    const ls_history *h; /* :method and :backend replace the history: the same step is another one */
    uint32_t step;
    int w;
    wline *v;
    uint32_t n, cap;
    uint32_t items_done; /* items [0, items_done) are wrapped into v */
} wrap;

static void wrap_item(ui *u, uint32_t i, int w)
{
    item it = item_at(u, i);
    const char *t = it.text ? it.text : "";
    int avail = w - ui_text_width(it.bullet) - 1;
    if (avail < 10) avail = 10;
    uint32_t off = 0, len = (uint32_t)strlen(t);
    do {
        uint32_t end = off, last_space = 0, cols = 0;
        while (end < len && (int)cols < avail) {
            if (t[end] == ' ') last_space = end;
            if (((unsigned char)t[end] & 0xC0) != 0x80) cols++;
            end++;
        }
        while (end < len && ((unsigned char)t[end] & 0xC0) == 0x80) end++;
        if (end < len && last_space > off) end = last_space + 1;
        if (wrap.n == wrap.cap) {
            wrap.cap = wrap.cap ? wrap.cap * 2 : 16;
            wrap.v = ls_realloc(wrap.v, sizeof *wrap.v * wrap.cap);
        }
        wrap.v[wrap.n++] = (wline){i, off, end - off};
        off = end;
    } while (off < len);
}

/* Wraps items until line `row` exists (or every item is wrapped). */
static void wrap_upto(ui *u, uint32_t row)
{
    int w = ui_pane_of(u, UI_P_CHANGES)->r.w - 4;
    if (!(wrap.u == u && wrap.h == u->h && wrap.step == u->step && wrap.w == w)) {
        wrap.u = u;
        wrap.h = u->h;
        wrap.step = u->step;
        wrap.w = w;
        wrap.n = wrap.items_done = 0;
    }
    for (uint32_t n = n_items(u); wrap.n <= row && wrap.items_done < n; wrap.items_done++) wrap_item(u, wrap.items_done, w);
}

static void wrap_build(ui *u)
{
    const ui_pane *p = ui_pane_of(u, UI_P_CHANGES);
    uint32_t last = (p->sel > p->top ? p->sel : p->top) + (uint32_t)(p->r.h > 0 ? p->r.h : 1);
    wrap_upto(u, last);
}

static uint32_t count(ui *u)
{
    wrap_build(u);
    return wrap.n + (n_items(u) - wrap.items_done);
}

static void draw_row(ui *u, uint32_t row, int y, int x, int w, bool cursor)
{
    uint32_t sel_row = ui_pane_of(u, UI_P_CHANGES)->sel;
    wrap_upto(u, row > sel_row ? row : sel_row);
    if (row >= wrap.n) return;
    const wline *wl = &wrap.v[row];
    item it = item_at(u, wl->item);
    if (!it.text) return;
    bool focus = u->focus == UI_P_CHANGES;
    /* the whole item is the selection */
    bool sel = focus && sel_row < wrap.n && wrap.v[sel_row].item == wl->item;
    (void)cursor;
    short pair, bp;
    attr_t a = ui_role_attr(u, it.role, &pair);
    if (sel) {
        a |= A_REVERSE;
        ui_fill(u, y, x, w, a, pair);
    }
    int tag = -1;
    if (it.node) {
        const ls_program *p = u->h->steps[u->step].program;
        if (it.prog) {
            const ls_submodule *s = ls_program_sub(p, it.prog);
            p = s ? s->program : NULL;
        }
        int32_t pos = p ? ls_program_find(p, it.node) : -1;
        if (pos >= 0) tag = ui_node_color(u, p, p->nodes[pos]);
    }
    attr_t ba = tag >= 0 ? ui_tag_attr(u, tag, &bp) : a;
    if (tag < 0) bp = pair;
    int bw = ui_text_width(it.bullet);
    if (wl->off == 0) ui_put(u, y, x + 1, bw, ba | (a & A_REVERSE), bp, it.bullet);
    char text[1024];
    snprintf(text, sizeof text, "%.*s", (int)wl->len, it.text + wl->off);
    ui_put(u, y, x + 2 + bw, w - 2 - bw, a, pair, text);
}

static void activate(ui *u, uint32_t row)
{
    wrap_upto(u, row);
    if (row >= wrap.n) return;
    item it = item_at(u, wrap.v[row].item);
    if (it.node) ui_jump(u, it.prog, it.node);
    else ui_message(u, false, "this line names no node");
}

static bool match(ui *u, uint32_t row, const regex_t *re)
{
    wrap_upto(u, row);
    if (row >= wrap.n) return false;
    item it = item_at(u, wrap.v[row].item);
    return it.text && regexec(re, it.text, 0, NULL, 0) == 0;
}

const ui_view_ops ui_changes_ops = {
    .name = "changes",
    .title = title,
    .count = count,
    .draw_row = draw_row,
    .activate = activate,
    .match = match,
};
