/* The change log: the current step's report sentences, then the verifier's findings (and the
 * pass's error, first, when it failed), wrapped to the pane's width. Runs of sentences alike
 * but for their names fold into one line (Enter unfolds it). Enter jumps to the node a sentence
 * names. */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "ui.h"

typedef struct item {
    const char *text, *prog, *node;
    ui_role role;
    const char *bullet;
    int32_t run; /* a folded run's header: the report index it starts at; -1 otherwise */
} item;

/* Sentences alike but for the names in backquotes ("`aten_mm_default_3` (aten.mm.default) stays
 * on the CPU: op not supported") fold when three or more come in a row: one line says how many
 * and the first and last names; Enter unfolds it (and folds it again). */
#define FOLD_RUN 3

static bool alike(const char *a, const char *b)
{
    while (*a && *b) {
        if (*a == '`' && *b == '`') {
            const char *ea = strchr(a + 1, '`'), *eb = strchr(b + 1, '`');
            if (!ea || !eb) return !strcmp(a, b);
            a = ea + 1;
            b = eb + 1;
            continue;
        }
        if (*a++ != *b++) return false;
    }
    return *a == *b;
}

/* "3 × `first` … `last` rest of the first sentence" */
static char *folded_text(const char *first, const char *last, uint32_t n, bool utf8)
{
    ls_buf b = {0};
    const char *a0 = strchr(first, '`'), *b0 = a0 ? strchr(a0 + 1, '`') : NULL;
    const char *a1 = strchr(last, '`'), *b1 = a1 ? strchr(a1 + 1, '`') : NULL;
    ls_buf_printf(&b, "%u %s ", n, utf8 ? "×" : "x");
    if (!b0 || !b1) ls_buf_puts(&b, first);
    else ls_buf_printf(&b, "%.*s %s %.*s%s", (int)(b0 - first + 1), first, utf8 ? "…" : "~", (int)(b1 - a1 + 1), a1, b0 + 1);
    return ls_buf_take(&b);
}

/* The items of this step, folded as the user left them, made as far as they are asked for (a
 * step of a large program has hundreds of thousands of sentences): next is the first report
 * sentence not made into an item yet. Started again when the step or a fold changes. */
static struct {
    const ui *u;
    const ls_history *h;
    uint32_t step;
    item *v;
    uint32_t n, cap;
    uint32_t next;      /* report sentences [0, next) are in v */
    bool head, tail;    /* the pass's error, the verifier's findings are in v */
    char **owned;
    uint32_t n_owned;
    uint32_t *open;     /* runs unfolded (their report index) */
    uint32_t n_open;
    uint32_t gen;       /* bumped when the items start again: the wrapping follows */
} items;

static bool is_open(uint32_t run)
{
    for (uint32_t i = 0; i < items.n_open; i++)
        if (items.open[i] == run) return true;
    return false;
}

static void push(item it)
{
    if (items.n == items.cap) {
        items.cap = items.cap ? items.cap * 2 : 32;
        items.v = ls_realloc(items.v, sizeof *items.v * items.cap);
    }
    items.v[items.n++] = it;
}

static void items_reset(ui *u)
{
    if (items.u != u || items.h != u->h || items.step != u->step) items.n_open = 0;
    items.u = u;
    items.h = u->h;
    items.step = u->step;
    for (uint32_t i = 0; i < items.n_owned; i++) free(items.owned[i]);
    items.n_owned = 0;
    items.n = items.next = 0;
    items.head = items.tail = false;
    items.gen++;
}

/* Makes items until item i exists (or all are made). */
static void items_upto(ui *u, uint32_t i)
{
    if (!(items.u == u && items.h == u->h && items.step == u->step)) items_reset(u);
    const ls_step *st = &u->h->steps[u->step];
    const char *bullet = u->utf8 ? "•" : "*";
    if (!items.head) {
        items.head = true;
        if (st->error) push((item){st->error, NULL, NULL, UI_R_ERROR, "pass failed:", -1});
    }
    while (items.n <= i && items.next < st->report.n) {
        uint32_t at = items.next, run = 1;
        while (at + run < st->report.n && alike(st->report.v[at].text, st->report.v[at + run].text)) run++;
        if (run < FOLD_RUN) {
            const ls_sentence *se = &st->report.v[at];
            push((item){se->text, se->program, se->node, UI_R_NORMAL, bullet, -1});
            items.next++;
            continue;
        }
        char *t = folded_text(st->report.v[at].text, st->report.v[at + run - 1].text, run, u->utf8);
        items.owned = ls_realloc(items.owned, sizeof *items.owned * (items.n_owned + 1));
        items.owned[items.n_owned++] = t;
        bool open = is_open(at);
        push((item){t, st->report.v[at].program, st->report.v[at].node, UI_R_NORMAL,
                    open ? (u->utf8 ? "▾" : "-") : (u->utf8 ? "▸" : "+"), (int32_t)at});
        for (uint32_t k = at; open && k < at + run; k++) {
            const ls_sentence *se = &st->report.v[k];
            push((item){se->text, se->program, se->node, UI_R_NORMAL, u->utf8 ? "  •" : "  *", -1});
        }
        items.next += run;
    }
    if (items.n <= i && items.next >= st->report.n && !items.tail) {
        items.tail = true;
        for (uint32_t k = 0; k < st->verify.n; k++) {
            const ls_finding *f = &st->verify.v[k];
            bool err = f->severity == LS_SEV_ERROR;
            push((item){f->msg, f->program, f->node, err ? UI_R_ERROR : UI_R_WARN, err ? "error:" : "warning:", -1});
        }
    }
}

/* The items made so far and, for what is left, one a sentence or finding (an upper bound: runs
 * fold into fewer); exact once everything is made. */
static uint32_t n_items(ui *u)
{
    items_upto(u, 0);
    const ls_step *st = &u->h->steps[u->step];
    return items.n + (st->report.n - items.next) + (items.tail ? 0 : st->verify.n);
}

static item item_at(ui *u, uint32_t row)
{
    items_upto(u, row);
    return row < items.n ? items.v[row] : (item){.run = -1};
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
    uint32_t step, gen;
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
    items_upto(u, 0);
    if (!(wrap.u == u && wrap.h == u->h && wrap.step == u->step && wrap.gen == items.gen && wrap.w == w)) {
        wrap.u = u;
        wrap.h = u->h;
        wrap.step = u->step;
        wrap.gen = items.gen;
        wrap.w = w;
        wrap.n = wrap.items_done = 0;
    }
    while (wrap.n <= row) {
        items_upto(u, wrap.items_done);
        if (wrap.items_done >= items.n) break;
        wrap_item(u, wrap.items_done++, w);
    }
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

/* Enter on a folded run's line: unfold it, or fold it again; the selection stays on its line. */
static void toggle(ui *u, uint32_t run, uint32_t item_no)
{
    bool found = false;
    for (uint32_t i = 0; i < items.n_open; i++)
        if (items.open[i] == run) {
            items.open[i] = items.open[--items.n_open];
            found = true;
            break;
        }
    if (!found) {
        items.open = ls_realloc(items.open, sizeof *items.open * (items.n_open + 1));
        items.open[items.n_open++] = run;
    }
    uint32_t open_n = items.n_open, *open = items.open;
    items_reset(u); /* the same step: the folds stay */
    items.n_open = open_n;
    items.open = open;
    wrap_upto(u, 0);
    for (uint32_t r = 0;; r++) {
        wrap_upto(u, r);
        if (r >= wrap.n) break;
        if (wrap.v[r].item == item_no) {
            ui_pane_select(u, ui_pane_of(u, UI_P_CHANGES), r);
            break;
        }
    }
    ui_message(u, false, "%s", found ? "folded" : "unfolded — Enter on its line folds it again");
}

static void activate(ui *u, uint32_t row)
{
    wrap_upto(u, row);
    if (row >= wrap.n) return;
    item it = item_at(u, wrap.v[row].item);
    if (it.run >= 0) {
        toggle(u, (uint32_t)it.run, wrap.v[row].item);
        return;
    }
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
