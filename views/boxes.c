/* A screen of boxes (regions.h's drawing): the partition graph and the neighbourhood. The
 * drawing is text made once per step (or per node); a row of the screen is one of its lines,
 * drawn from the pane's horizontal offset, each box in its tag's colour and the selected one in
 * reverse video. j/k go from box to box in the order the boxes were given (topological), the
 * selection scrolls into view both ways; < and > scroll across a wide row. */
#include <stdlib.h>
#include <string.h>

#include "ui.h"

void ui_boxview_free(ui_boxview *v)
{
    if (!v->d_shared) ls_drawing_free(&v->d);
    free(v->color);
    free(v->line0);
    free(v->line_box);
    free(v->order);
    free(v->rank_of);
    memset(v, 0, sizeof *v);
}

void ui_boxview_set(ui_boxview *v, ls_drawing *d, int32_t *color)
{
    uint32_t sel = v->sel;
    ui_boxview_free(v);
    v->d = *d;
    memset(d, 0, sizeof *d);
    v->color = color;
    v->sel = sel < v->d.n_boxes ? sel : 0;
    uint32_t L = v->d.n_lines;
    v->line0 = ls_calloc(L + 2, sizeof *v->line0);
    for (uint32_t b = 0; b < v->d.n_boxes; b++)
        for (uint32_t l = v->d.place[b].line; l < v->d.place[b].line + v->d.place[b].h && l < L; l++) v->line0[l + 1]++;
    for (uint32_t l = 0; l < L; l++) v->line0[l + 1] += v->line0[l];
    v->line_box = ls_malloc(sizeof *v->line_box * (v->line0[L] + 1));
    uint32_t *fill = ls_malloc(sizeof *fill * (L + 1));
    memcpy(fill, v->line0, sizeof *fill * (L + 1));
    for (uint32_t b = 0; b < v->d.n_boxes; b++)
        for (uint32_t l = v->d.place[b].line; l < v->d.place[b].line + v->d.place[b].h && l < L; l++) v->line_box[fill[l]++] = b;
    free(fill);
    /* reading order: the line index already lists boxes by line; each box once, at its top line */
    v->order = ls_malloc(sizeof *v->order * (v->d.n_boxes + 1));
    v->rank_of = ls_malloc(sizeof *v->rank_of * (v->d.n_boxes + 1));
    uint32_t k = 0;
    for (uint32_t l = 0; l < L; l++) {
        uint32_t first = k;
        for (uint32_t i = v->line0[l]; i < v->line0[l + 1]; i++)
            if (v->d.place[v->line_box[i]].line == l) v->order[k++] = v->line_box[i];
        for (uint32_t a = first + 1; a < k; a++) /* left to right (a row holds few boxes on screen) */
            for (uint32_t b = a; b > first && v->d.place[v->order[b]].col < v->d.place[v->order[b - 1]].col; b--) {
                uint32_t t = v->order[b];
                v->order[b] = v->order[b - 1];
                v->order[b - 1] = t;
            }
    }
    for (uint32_t i = 0; i < k; i++) v->rank_of[v->order[i]] = i;
    v->valid = true;
}

void ui_boxview_set_shared(ui_boxview *v, const ls_drawing *d, int32_t *color)
{
    ls_drawing borrowed = *d;
    ui_boxview_set(v, &borrowed, color);
    v->d_shared = true;
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

void ui_boxview_draw_row(ui *u, const ui_boxview *v, const ui_pane *p, uint32_t row, int y, int x, int w)
{
    if (!v->valid || row >= v->d.n_lines) return;
    const char *line = v->d.lines[row];
    uint32_t left = p->left;
    short pair;
    attr_t a = ui_role_attr(u, UI_R_NORMAL, &pair);
    put_cols(u, y, x + 1, line, left, (uint32_t)(w > 1 ? w - 1 : 0), a, pair);
    for (uint32_t k = v->line0[row]; k < v->line0[row + 1]; k++) {
        uint32_t b = v->line_box[k];
        const ls_box_place *pl = &v->d.place[b];
        uint32_t c0 = pl->col > left ? pl->col : left, c1 = pl->col + pl->w;
        if (c1 <= c0 || c0 - left >= (uint32_t)(w - 1)) continue;
        if (c1 - left > (uint32_t)(w - 1)) c1 = left + (uint32_t)(w - 1);
        int color = v->color ? v->color[b] : -1;
        short bp;
        attr_t ba = color >= 0 ? ui_tag_attr(u, color, &bp) : ui_role_attr(u, color == -2 ? UI_R_DIM : UI_R_NORMAL, &bp);
        if (b == v->sel) ba |= A_REVERSE;
        put_cols(u, y, x + 1 + (int)(c0 - left), line, c0, c1 - c0, ba, bp);
    }
}

void ui_boxview_select(ui *u, ui_boxview *v, ui_pane *p, uint32_t box)
{
    if (!v->valid || box >= v->d.n_boxes) return;
    v->sel = box;
    const ls_box_place *pl = &v->d.place[box];
    /* the whole box on screen (its title line is the row selected) */
    uint32_t rows = (uint32_t)ui_pane_rows(p);
    if (pl->line < p->top) p->top = pl->line;
    else if (pl->line + pl->h > p->top + rows) p->top = pl->line + pl->h > rows ? pl->line + pl->h - rows : 0;
    if (p->top > pl->line) p->top = pl->line;
    p->sel = pl->line;
    uint32_t w = p->r.w > 1 ? (uint32_t)p->r.w - 1 : 1;
    if (pl->col < p->left) p->left = pl->col;
    else if (pl->col + pl->w > p->left + w) p->left = pl->col + pl->w > w ? pl->col + pl->w - w : 0;
}

/* The first box whose top line is at or after `line` (forward) or the last at or before it. */
static uint32_t box_near_line(const ui_boxview *v, uint32_t line, bool forward)
{
    uint32_t best = v->sel;
    for (uint32_t b = 0; b < v->d.n_boxes; b++) {
        uint32_t l = v->d.place[b].line;
        if (forward && l >= line && (best == v->sel || l < v->d.place[best].line)) best = b;
        if (!forward && l <= line && (best == v->sel || l > v->d.place[best].line)) best = b;
    }
    return best;
}

bool ui_boxview_move(ui *u, ui_boxview *v, ui_pane *p, ui_action a)
{
    if (!v->valid || !v->d.n_boxes) return false;
    uint32_t n = v->d.n_boxes, page = (uint32_t)ui_pane_rows(p);
    uint32_t w = p->r.w > 2 ? (uint32_t)p->r.w - 2 : 1;
    switch (a) {
    case UI_A_DOWN: {
        uint32_t i = v->rank_of[v->sel];
        ui_boxview_select(u, v, p, v->order[i + 1 < n ? i + 1 : i]);
        return true;
    }
    case UI_A_UP: {
        uint32_t i = v->rank_of[v->sel];
        ui_boxview_select(u, v, p, v->order[i ? i - 1 : 0]);
        return true;
    }
    case UI_A_FIRST: ui_boxview_select(u, v, p, v->order[0]); return true;
    case UI_A_LAST: ui_boxview_select(u, v, p, v->order[n - 1]); return true;
    case UI_A_PAGE_DOWN:
    case UI_A_HALF_DOWN: {
        uint32_t step = a == UI_A_PAGE_DOWN ? page : page / 2;
        ui_boxview_select(u, v, p, box_near_line(v, v->d.place[v->sel].line + (step ? step : 1), true));
        return true;
    }
    case UI_A_PAGE_UP:
    case UI_A_HALF_UP: {
        uint32_t step = a == UI_A_PAGE_UP ? page : page / 2, l = v->d.place[v->sel].line;
        ui_boxview_select(u, v, p, box_near_line(v, l > step ? l - step : 0, false));
        return true;
    }
    case UI_A_SCROLL_RIGHT:
        if (p->left + w < v->d.width) p->left += w / 2 ? w / 2 : 1;
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
    if (!v->valid || row >= v->d.n_lines) return;
    const char *line = v->d.lines[row];
    int64_t best = -1;
    uint32_t best_col = UINT32_MAX;
    for (uint32_t k = v->line0[row]; k < v->line0[row + 1]; k++) {
        const ls_box_place *pl = &v->d.place[v->line_box[k]];
        if (pl->col < best_col && cols_match(u, line, pl->col, pl->col + pl->w)) {
            best = v->line_box[k];
            best_col = pl->col;
        }
    }
    if (best < 0 && v->line0[row] == v->line0[row + 1]) { /* an edge line: the row of boxes below it */
        uint32_t below = row + 1;
        while (below < v->d.n_lines && v->line0[below] == v->line0[below + 1]) below++;
        if (below < v->d.n_lines) {
            uint32_t first = UINT32_MAX; /* the row's boxes, left to right, from its first in reading order */
            for (uint32_t k = v->line0[below]; k < v->line0[below + 1]; k++)
                if (v->rank_of[v->line_box[k]] < first) first = v->rank_of[v->line_box[k]];
            for (uint32_t i = first; best < 0 && i < v->d.n_boxes && v->d.place[v->order[i]].line == below; i++) {
                bool last = i + 1 >= v->d.n_boxes || v->d.place[v->order[i + 1]].line != below;
                uint32_t next = last ? UINT32_MAX : v->d.place[v->order[i + 1]].col;
                if (cols_match(u, line, v->d.place[v->order[i]].col, next)) best = v->order[i];
            }
        }
    }
    for (uint32_t k = v->line0[row]; best < 0 && k < v->line0[row + 1]; k++) /* a match across boxes: the leftmost */
        if (v->d.place[v->line_box[k]].col < best_col) best_col = v->d.place[v->line_box[k]].col;
    for (uint32_t k = v->line0[row]; best < 0 && k < v->line0[row + 1]; k++)
        if (v->d.place[v->line_box[k]].col == best_col) best = v->line_box[k];
    if (best >= 0) v->sel = (uint32_t)best;
}

/* n/N: the nearest box right (left) of the selected one on its row whose columns match. */
bool ui_boxview_match_next(ui *u, ui_boxview *v, uint32_t row, bool backward)
{
    if (!v->valid || row >= v->d.n_lines || v->sel >= v->d.n_boxes) return false;
    const char *line = v->d.lines[row];
    uint32_t at = v->d.place[v->sel].col;
    int64_t best = -1;
    for (uint32_t k = v->line0[row]; k < v->line0[row + 1]; k++) {
        uint32_t b = v->line_box[k];
        const ls_box_place *pl = &v->d.place[b];
        bool beyond = backward ? pl->col < at : pl->col > at;
        bool nearer = best < 0 || (backward ? pl->col > v->d.place[best].col : pl->col < v->d.place[best].col);
        if (beyond && nearer && cols_match(u, line, pl->col, pl->col + pl->w)) best = b;
    }
    if (best < 0) return false;
    v->sel = (uint32_t)best;
    return true;
}

bool ui_boxview_match(ui *u, const ui_boxview *v, uint32_t row)
{
    return v->valid && row < v->d.n_lines && ui_search_matches(u, v->d.lines[row]);
}
