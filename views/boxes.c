/* A screen of boxes (regions.h's drawing): the partition graph and the neighbourhood. The
 * layout comes once per step (or per node); a row of boxes is drawn as text the first time one
 * of its lines is shown or searched, at the screen's box width, in UTF-8 or ASCII, and kept. A
 * line of the screen is drawn from the pane's horizontal offset, each box in its tag's colour and the selected one in
 * reverse video. j/k go from box to box in the order the boxes were given (topological), the
 * selection scrolls into view both ways; < and > scroll across a wide row. */
#include <stdlib.h>
#include <string.h>

#include "ui.h"

uint64_t ui_boxview_rows_drawn;

static void free_drawn(ui_boxview *v)
{
    for (uint32_t i = 0; v->drawn.keys && i < v->drawn.cap; i++) {
        if (!v->drawn.keys[i]) continue;
        char **lines = (char **)v->drawn.vals[i]; /* NULL-terminated: the layout may be gone */
        for (char **l = lines; *l; l++) free(*l);
        free(lines);
    }
    ls_ptrmap_free(&v->drawn);
}

void ui_boxview_free(ui_boxview *v)
{
    free_drawn(v);
    ls_box_layout_free(&v->own);
    free(v->own_boxes);
    free(v->own_edges);
    free(v->color);
    memset(v, 0, sizeof *v);
}

static void use_layout(ui_boxview *v, const ls_box_layout *L, int box_w, bool ascii, uint32_t sel)
{
    v->L = L;
    v->box_w = box_w;
    v->ascii = ascii;
    v->sel = sel < L->n_boxes ? sel : 0;
    v->valid = true;
}

void ui_boxview_set_layout(ui_boxview *v, const ls_box_layout *L, int box_w, bool ascii)
{
    uint32_t sel = v->sel;
    ui_boxview_free(v);
    use_layout(v, L, box_w, ascii, sel);
}

void ui_boxview_set_boxes(ui_boxview *v, ls_box *boxes, uint32_t n, ls_box_edge *edges, uint32_t n_edges, int box_w,
                          bool ascii)
{
    uint32_t sel = v->sel;
    ui_boxview_free(v);
    v->own_boxes = boxes;
    v->own_edges = edges;
    ls_box_layout_build(boxes, n, edges, n_edges, &v->own);
    use_layout(v, &v->own, box_w, ascii, sel);
}

uint32_t ui_boxview_lines(const ui_boxview *v) { return v->valid ? v->L->n_lines : 0; }
uint32_t ui_boxview_boxes(const ui_boxview *v) { return v->valid ? v->L->n_boxes : 0; }

static ls_box_place place(const ui_boxview *v, uint32_t b) { return ls_box_layout_place(v->L, b, v->box_w); }

/* Line l's text: its row of boxes drawn the first time one of its lines is asked for. */
static const char *line_text(ui_boxview *v, uint32_t l)
{
    uint32_t r = ls_box_layout_rank_of_line(v->L, l);
    uintptr_t val;
    if (!ls_ptrmap_get(&v->drawn, (const void *)(uintptr_t)(r + 1), &val)) {
        char **lines = ls_calloc(ls_box_layout_lines_of(v->L, r) + 1, sizeof *lines);
        uint32_t width = 0;
        ls_box_layout_draw(v->L, r, v->box_w, v->ascii, lines, &width);
        ui_boxview_rows_drawn++;
        val = (uintptr_t)lines;
        ls_ptrmap_put(&v->drawn, (const void *)(uintptr_t)(r + 1), val);
    }
    return ((char **)val)[l - v->L->line0[r]];
}

/* The boxes drawn on line l: a range of the reading order (its row's), of which those tall
 * enough to reach it. */
static uint32_t row_range(const ui_boxview *v, uint32_t l, uint32_t *k1, uint32_t *top)
{
    uint32_t r = ls_box_layout_rank_of_line(v->L, l);
    *top = v->L->line0[r] + v->L->band[r];
    *k1 = l < *top ? v->L->rank_start[r] : v->L->rank_start[r + 1];
    return v->L->rank_start[r];
}

static int32_t color_of(ui *u, const ui_boxview *v, uint32_t b)
{
    return v->color ? v->color[b] : v->color_of ? v->color_of(u, b) : -1;
}

/* The bytes of columns [from, from + n) of a line (every character we draw is one column). */
static const char *column(const char *s, uint32_t col)
{
    while (*s && col) {
        s++;
        while (((unsigned char)*s & 0xC0) == 0x80) s++;
        col--;
    }
    return s;
}

static void put_cols(ui *u, int y, int x, const char *line, uint32_t from, uint32_t n, attr_t a, short pair)
{
    const char *s = column(line, from), *e = column(s, n);
    char buf[1024];
    size_t len = (size_t)(e - s) < sizeof buf - 1 ? (size_t)(e - s) : sizeof buf - 1;
    memcpy(buf, s, len);
    buf[len] = 0;
    ui_put(u, y, x, (int)n, a, pair, buf);
}

void ui_boxview_draw_row(ui *u, ui_boxview *v, const ui_pane *p, uint32_t row, int y, int x, int w)
{
    if (!v->valid || row >= v->L->n_lines) return;
    const char *line = line_text(v, row);
    uint32_t left = p->left;
    short pair;
    attr_t a = ui_role_attr(u, UI_R_NORMAL, &pair);
    put_cols(u, y, x + 1, line, left, (uint32_t)(w > 1 ? w - 1 : 0), a, pair);
    uint32_t k1, top;
    for (uint32_t k = row_range(v, row, &k1, &top); k < k1; k++) {
        uint32_t b = v->L->by_rank[k];
        const ls_box_place pl = place(v, b);
        if (pl.h <= row - top) continue; /* a shorter box than its row's tallest */
        uint32_t c0 = pl.col > left ? pl.col : left, c1 = pl.col + pl.w;
        if (c1 <= c0 || c0 - left >= (uint32_t)(w - 1)) continue;
        if (c1 - left > (uint32_t)(w - 1)) c1 = left + (uint32_t)(w - 1);
        int color = color_of(u, v, b);
        short bp;
        attr_t ba = color >= 0 ? ui_tag_attr(u, color, &bp) : ui_role_attr(u, color == -2 ? UI_R_DIM : UI_R_NORMAL, &bp);
        if (b == v->sel) ba |= A_REVERSE;
        put_cols(u, y, x + 1 + (int)(c0 - left), line, c0, c1 - c0, ba, bp);
    }
}

void ui_boxview_select(ui *u, ui_boxview *v, ui_pane *p, uint32_t box)
{
    (void)u;
    if (!v->valid || box >= v->L->n_boxes) return;
    v->sel = box;
    const ls_box_place pl = place(v, box);
    /* the whole box on screen (its title line is the row selected) */
    uint32_t rows = (uint32_t)ui_pane_rows(p);
    if (pl.line < p->top) p->top = pl.line;
    else if (pl.line + pl.h > p->top + rows) p->top = pl.line + pl.h > rows ? pl.line + pl.h - rows : 0;
    if (p->top > pl.line) p->top = pl.line;
    p->sel = pl.line;
    uint32_t w = p->r.w > 1 ? (uint32_t)p->r.w - 1 : 1;
    if (pl.col < p->left) p->left = pl.col;
    else if (pl.col + pl.w > p->left + w) p->left = pl.col + pl.w > w ? pl.col + pl.w - w : 0;
}

/* The first box whose top line is at or after `line` (forward) or the last at or before it:
 * of that row of boxes (they share their top line) the one given first, the selected one
 * passed over when another is there. */
static uint32_t box_near_line(const ui_boxview *v, uint32_t line, bool forward)
{
    const ls_box_layout *L = v->L;
    if (!L->n_lines || (forward && line >= L->n_lines)) return v->sel;
    int64_t r = ls_box_layout_rank_of_line(L, line < L->n_lines ? line : L->n_lines - 1), n = L->n_ranks;
    uint32_t top = L->line0[r] + L->band[r];
    if (forward ? top < line : top > line) r += forward ? 1 : -1; /* the next (previous) row */
    while (r >= 0 && r < n && L->rank_start[r] == L->rank_start[r + 1]) r += forward ? 1 : -1; /* no boxes, no lines */
    if (r < 0 || r >= n) return v->sel;
    uint32_t best = v->sel;
    for (uint32_t k = L->rank_start[r]; k < L->rank_start[r + 1]; k++) {
        uint32_t b = L->by_rank[k];
        if (b != v->sel && (best == v->sel || b < best)) best = b;
    }
    return best;
}

bool ui_boxview_move(ui *u, ui_boxview *v, ui_pane *p, ui_action a)
{
    if (!v->valid || !v->L->n_boxes) return false;
    const ls_box_layout *L = v->L;
    uint32_t n = L->n_boxes, page = (uint32_t)ui_pane_rows(p);
    uint32_t w = p->r.w > 2 ? (uint32_t)p->r.w - 2 : 1;
    switch (a) {
    case UI_A_DOWN: {
        uint32_t i = L->order_of[v->sel];
        ui_boxview_select(u, v, p, L->by_rank[i + 1 < n ? i + 1 : i]);
        return true;
    }
    case UI_A_UP: {
        uint32_t i = L->order_of[v->sel];
        ui_boxview_select(u, v, p, L->by_rank[i ? i - 1 : 0]);
        return true;
    }
    case UI_A_FIRST: ui_boxview_select(u, v, p, L->by_rank[0]); return true;
    case UI_A_LAST: ui_boxview_select(u, v, p, L->by_rank[n - 1]); return true;
    case UI_A_PAGE_DOWN:
    case UI_A_HALF_DOWN: {
        uint32_t step = a == UI_A_PAGE_DOWN ? page : page / 2;
        ui_boxview_select(u, v, p, box_near_line(v, place(v, v->sel).line + (step ? step : 1), true));
        return true;
    }
    case UI_A_PAGE_UP:
    case UI_A_HALF_UP: {
        uint32_t step = a == UI_A_PAGE_UP ? page : page / 2, l = place(v, v->sel).line;
        ui_boxview_select(u, v, p, box_near_line(v, l > step ? l - step : 0, false));
        return true;
    }
    case UI_A_SCROLL_RIGHT:
        if (!v->width_known) { /* measured once, without drawing */
            v->width = ls_box_layout_width(L, v->box_w);
            v->width_known = true;
        }
        if (p->left + w < v->width) p->left += w / 2 ? w / 2 : 1;
        return true;
    case UI_A_SCROLL_LEFT:
        p->left = p->left > w / 2 ? p->left - w / 2 : 0;
        return true;
    default: return false;
    }
}

/* Whether the search matches the text a line has in columns [c0, c1). */
static bool cols_match(ui *u, const char *line, uint32_t c0, uint32_t c1)
{
    const char *s = column(line, c0), *e = c1 == UINT32_MAX ? s + strlen(s) : column(s, c1 - c0);
    char buf[1024];
    size_t len = (size_t)(e - s) < sizeof buf - 1 ? (size_t)(e - s) : sizeof buf - 1;
    memcpy(buf, s, len);
    buf[len] = 0;
    return ui_search_matches(u, buf);
}

/* A search landed on a line: the selection is the leftmost box whose part of the line matches —
 * on a box's lines its own columns, on the lines above a row of boxes (the edges entering each)
 * the columns from a box of that row to the next one. A row holds several boxes, and Enter
 * must act on the one the match is in. */
void ui_boxview_moved(ui *u, ui_boxview *v, uint32_t row)
{
    if (!v->valid || row >= v->L->n_lines) return;
    const ls_box_layout *L = v->L;
    const char *line = line_text(v, row);
    int64_t best = -1, leftmost = -1;
    uint32_t best_col = UINT32_MAX, k1, top, k0 = row_range(v, row, &k1, &top);
    for (uint32_t k = k0; k < k1; k++) {
        uint32_t b = L->by_rank[k];
        const ls_box_place pl = place(v, b);
        if (pl.h <= row - top) continue;
        if (leftmost < 0) leftmost = b; /* columns grow along the row */
        if (pl.col < best_col && cols_match(u, line, pl.col, pl.col + pl.w)) {
            best = b;
            best_col = pl.col;
        }
    }
    if (leftmost < 0) { /* an edge line: the row of boxes below it, left to right */
        uint32_t r = ls_box_layout_rank_of_line(L, row), e = L->rank_start[r + 1];
        for (uint32_t i = L->rank_start[r]; best < 0 && i < e; i++) {
            uint32_t next = i + 1 >= e ? UINT32_MAX : place(v, L->by_rank[i + 1]).col;
            if (cols_match(u, line, place(v, L->by_rank[i]).col, next)) best = L->by_rank[i];
        }
    }
    if (best < 0) best = leftmost; /* a match across boxes: the leftmost */
    if (best >= 0) v->sel = (uint32_t)best;
}

/* n/N: the nearest box right (left) of the selected one on its row whose columns match. */
bool ui_boxview_match_next(ui *u, ui_boxview *v, uint32_t row, bool backward)
{
    if (!v->valid || row >= v->L->n_lines || v->sel >= v->L->n_boxes) return false;
    const char *line = line_text(v, row);
    uint32_t at = place(v, v->sel).col, best_col = 0, k1, top;
    int64_t best = -1;
    for (uint32_t k = row_range(v, row, &k1, &top); k < k1; k++) {
        uint32_t b = v->L->by_rank[k];
        const ls_box_place pl = place(v, b);
        if (pl.h <= row - top) continue;
        bool beyond = backward ? pl.col < at : pl.col > at;
        bool nearer = best < 0 || (backward ? pl.col > best_col : pl.col < best_col);
        if (beyond && nearer && cols_match(u, line, pl.col, pl.col + pl.w)) {
            best = b;
            best_col = pl.col;
        }
    }
    if (best < 0) return false;
    v->sel = (uint32_t)best;
    return true;
}

bool ui_boxview_match(ui *u, ui_boxview *v, uint32_t row)
{
    return v->valid && row < v->L->n_lines && ui_search_matches(u, line_text(v, row));
}
