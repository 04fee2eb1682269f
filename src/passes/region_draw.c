/* Drawing the partition graph (regions.h): regions as boxes (runs of similar ones folded into
 * one box that says how many), boxes laid out in rows by rank with the tensors entering each
 * box written above it, as UTF-8 box-drawing text or ASCII; the history's tag order and the
 * UI's tag colours, so `lowerscope graph --dot` colours clusters as the UI does. */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "delegation.h"
#include "ptrmap.h"
#include "regions.h"
#include "safe_text.h"

/* ---- text as code points (every character we draw is one column wide) */

static uint32_t utf8_next(const char **s)
{
    const unsigned char *p = (const unsigned char *)*s;
    uint32_t c = *p;
    int len = c < 0x80 ? 1 : (c >> 5) == 6 ? 2 : (c >> 4) == 14 ? 3 : (c >> 3) == 30 ? 4 : 1;
    if (len > 1) {
        c &= 0x3f >> (len - 1);
        for (int i = 1; i < len; i++) {
            if ((p[i] & 0xc0) != 0x80) {
                *s += 1;
                return '?';
            }
            c = c << 6 | (p[i] & 0x3f);
        }
    }
    *s += len;
    return c;
}

static void utf8_put(ls_buf *b, uint32_t c)
{
    char s[4];
    if (c < 0x80) ls_buf_putc(b, (char)c);
    else if (c < 0x800) {
        s[0] = (char)(0xc0 | c >> 6);
        s[1] = (char)(0x80 | (c & 0x3f));
        ls_buf_putn(b, s, 2);
    } else if (c < 0x10000) {
        s[0] = (char)(0xe0 | c >> 12);
        s[1] = (char)(0x80 | (c >> 6 & 0x3f));
        s[2] = (char)(0x80 | (c & 0x3f));
        ls_buf_putn(b, s, 3);
    } else {
        s[0] = (char)(0xf0 | c >> 18);
        s[1] = (char)(0x80 | (c >> 12 & 0x3f));
        s[2] = (char)(0x80 | (c >> 6 & 0x3f));
        s[3] = (char)(0x80 | (c & 0x3f));
        ls_buf_putn(b, s, 4);
    }
}

typedef struct grid {
    uint32_t *cells; /* rows × w */
    uint32_t rows, w;
} grid;

/* A text's cells as they are shown: a control in a name is drawn escaped, several columns wide
 * (the output's filter would escape it after the box was cut to width, pushing its right edge
 * out). Returns how many (at most 512). */
static uint32_t text_cells(const char *s, uint32_t cps[512])
{
    char shown[2048];
    ls_safe_copy(s, strlen(s), 0, shown, sizeof shown);
    uint32_t n = 0;
    for (const char *p = shown; *p && n < 512;) cps[n++] = utf8_next(&p);
    return n;
}

int ls_boxes_fit_width(const ls_box *boxes, uint32_t n, int lo, int hi)
{
    int w = lo;
    uint32_t cps[512];
    for (uint32_t b = 0; b < n && w < hi; b++)
        for (int k = 0; k < LS_BOX_LINES; k++) {
            int need = boxes[b].text[k] ? (int)text_cells(boxes[b].text[k], cps) + 4 : 0;
            if (need > w) w = need;
        }
    return w < hi ? w : hi;
}

static void grid_text(grid *g, uint32_t y, uint32_t x, uint32_t maxw, const char *s, bool keep_end)
{
    if (!s || y >= g->rows) return;
    uint32_t cps[512], n = text_cells(s, cps);
    uint32_t from = 0;
    if (n > maxw && maxw > 1) { /* too long: an ellipsis, keeping the end (names) or the start */
        if (keep_end) {
            from = n - (maxw - 1);
            if (x < g->w) g->cells[y * g->w + x++] = 0x2026;
        } else {
            n = maxw - 1;
            cps[n++] = 0x2026;
        }
    }
    for (uint32_t i = from; i < n && x < g->w; i++) g->cells[y * g->w + x++] = cps[i];
}

static void grid_lines(const grid *g, bool ascii, char **out, uint32_t *width)
{
    ls_buf b = {0};
    for (uint32_t y = 0; y < g->rows; y++) {
        uint32_t end = g->w;
        while (end && g->cells[y * g->w + end - 1] == ' ') end--;
        for (uint32_t x = 0; x < end; x++) utf8_put(&b, ascii ? ls_ascii_of(g->cells[y * g->w + x]) : g->cells[y * g->w + x]);
        if (end > *width) *width = end;
        out[y] = ls_buf_take(&b);
    }
    ls_buf_free(&b);
}

static uint32_t box_height(const ls_box *b)
{
    uint32_t h = 2;
    for (int k = 1; k < LS_BOX_LINES; k++) h += b->text[k] != NULL;
    return h < 3 ? 3 : h;
}

#define GAP 2

typedef struct row_key {
    uint32_t rank, weight, order, box;
} row_key;

static int cmp_row_key(const void *x, const void *y)
{
    const row_key *a = x, *b = y;
    if (a->rank != b->rank) return a->rank < b->rank ? -1 : 1;
    if (a->weight != b->weight) return a->weight > b->weight ? -1 : 1;
    return a->order < b->order ? -1 : a->order > b->order;
}

static uint32_t in_degree(const ls_box_layout *L, uint32_t b) { return L->in_start[b + 1] - L->in_start[b]; }

void ls_box_layout_build(const ls_box *boxes, uint32_t n, const ls_box_edge *edges, uint32_t n_edges, ls_box_layout *L)
{
    memset(L, 0, sizeof *L);
    L->boxes = boxes;
    L->edges = edges;
    L->n_boxes = n;
    L->n_edges = n_edges;
    uint32_t n_ranks = 0;
    for (uint32_t i = 0; i < n; i++)
        if (boxes[i].rank + 1 > n_ranks) n_ranks = boxes[i].rank + 1;
    L->n_ranks = n_ranks;
    /* boxes by rank, in the order given; edges by destination */
    uint32_t *rank_start = ls_calloc(n_ranks + 2, sizeof *rank_start), *by_rank = ls_malloc(sizeof *by_rank * (n + 1));
    for (uint32_t i = 0; i < n; i++) rank_start[boxes[i].rank + 1]++;
    for (uint32_t r = 0; r < n_ranks; r++) rank_start[r + 1] += rank_start[r];
    uint32_t *fill = ls_malloc(sizeof *fill * (n_ranks + 1));
    memcpy(fill, rank_start, sizeof *fill * (n_ranks + 1));
    for (uint32_t i = 0; i < n; i++) by_rank[fill[boxes[i].rank]++] = i;
    free(fill);
    /* heaviest first within a row (a delegate before the small CPU islands beside it) */
    row_key *keys = ls_malloc(sizeof *keys * (n + 1));
    for (uint32_t k = 0; k < n; k++) keys[k] = (row_key){boxes[by_rank[k]].rank, boxes[by_rank[k]].weight, k, by_rank[k]};
    qsort(keys, n, sizeof *keys, cmp_row_key);
    for (uint32_t k = 0; k < n; k++) by_rank[k] = keys[k].box;
    free(keys);
    L->order_of = ls_malloc(sizeof *L->order_of * (n + 1));
    for (uint32_t k = 0; k < n; k++) L->order_of[by_rank[k]] = k;
    uint32_t *in_start = ls_calloc(n + 2, sizeof *in_start), *in_edges = ls_malloc(sizeof *in_edges * (n_edges + 1));
    for (uint32_t e = 0; e < n_edges; e++) in_start[edges[e].to + 1]++;
    for (uint32_t i = 0; i < n; i++) in_start[i + 1] += in_start[i];
    uint32_t *efill = ls_malloc(sizeof *efill * (n + 1));
    memcpy(efill, in_start, sizeof *efill * (n + 1));
    for (uint32_t e = 0; e < n_edges; e++) in_edges[efill[edges[e].to]++] = e;
    free(efill);
    L->rank_start = rank_start;
    L->by_rank = by_rank;
    L->in_start = in_start;
    L->in_edges = in_edges;
    /* each row's lines: the band above it (what enters each box, one line per edge), then its
     * boxes; none for a rank without boxes */
    L->line0 = ls_malloc(sizeof *L->line0 * (n_ranks + 1));
    L->band = ls_calloc(n_ranks + 1, sizeof *L->band);
    uint32_t line = 0;
    for (uint32_t r = 0; r < n_ranks; r++) {
        L->line0[r] = line;
        uint32_t k0 = rank_start[r], k1 = rank_start[r + 1];
        if (k0 == k1) continue;
        uint32_t band = 0, h = 0;
        for (uint32_t k = k0; k < k1; k++) {
            uint32_t b = by_rank[k];
            if (in_degree(L, b) > band) band = in_degree(L, b);
            if (box_height(&boxes[b]) > h) h = box_height(&boxes[b]);
        }
        if (r > 0 && band == 0) band = 1;
        L->band[r] = band;
        line += band + h;
    }
    L->line0[n_ranks] = line;
    L->n_lines = line;
}

void ls_box_layout_free(ls_box_layout *L)
{
    free(L->rank_start);
    free(L->by_rank);
    free(L->order_of);
    free(L->in_start);
    free(L->in_edges);
    free(L->line0);
    free(L->band);
    memset(L, 0, sizeof *L);
}

static uint32_t layout_w(int box_w) { return box_w < 12 ? 12 : (uint32_t)box_w; }

ls_box_place ls_box_layout_place(const ls_box_layout *L, uint32_t b, int box_w)
{
    uint32_t W = layout_w(box_w), r = L->boxes[b].rank, k = L->order_of[b] - L->rank_start[r];
    return (ls_box_place){L->line0[r] + L->band[r], k * (W + GAP), box_height(&L->boxes[b]), W};
}

uint32_t ls_box_layout_rank_of_line(const ls_box_layout *L, uint32_t line)
{
    uint32_t lo = 0, hi = L->n_ranks; /* the last rank whose first line is at or before line: it has lines */
    while (hi - lo > 1) {
        uint32_t mid = lo + (hi - lo) / 2;
        if (L->line0[mid] <= line) lo = mid;
        else hi = mid;
    }
    return lo;
}

/* The text of the line of edge e above box b in row r: its label, and the source box's title
 * when that is not the box right above. */
static void band_text(const ls_box_layout *L, uint32_t r, uint32_t e, ls_buf *lb)
{
    bool single_above = r > 0 && L->rank_start[r] - L->rank_start[r - 1] == 1;
    const ls_box_edge *ed = &L->edges[e];
    lb->len = 0;
    if (lb->s) lb->s[0] = 0;
    ls_buf_puts(lb, "▼ ");
    ls_buf_puts(lb, ed->label ? ed->label : "");
    bool right_above = single_above && L->boxes[ed->from].rank + 1 == r;
    if (!right_above && L->boxes[ed->from].text[0]) ls_buf_printf(lb, " ← %s", L->boxes[ed->from].text[0]);
}

/* Room for the y-th band line of the k-th box of a row: up to the next box of the row that has
 * a line there. */
static uint32_t band_room(const ls_box_layout *L, uint32_t k, uint32_t k1, uint32_t y, uint32_t W, uint32_t x, uint32_t width)
{
    for (uint32_t j = k + 1; j < k1; j++)
        if (in_degree(L, L->by_rank[j]) > y) return (j - k) * (W + GAP) - 3;
    return width - x - 2;
}

uint32_t ls_box_layout_lines_of(const ls_box_layout *L, uint32_t r) { return L->line0[r + 1] - L->line0[r]; }

void ls_box_layout_draw(const ls_box_layout *L, uint32_t r, int box_w, bool ascii, char **out, uint32_t *width)
{
    uint32_t W = layout_w(box_w), k0 = L->rank_start[r], k1 = L->rank_start[r + 1];
    if (k0 == k1) return;
    const ls_box *boxes = L->boxes;
    uint32_t row_w = (k1 - k0) * (W + GAP) + W; /* the last box's band lines may run on */
    uint32_t band = L->band[r], h = L->line0[r + 1] - L->line0[r] - band;
    grid g = {ls_malloc(sizeof(uint32_t) * (size_t)(band + h) * row_w), band + h, row_w};
    for (size_t c = 0; c < (size_t)g.rows * g.w; c++) g.cells[c] = ' ';
    ls_buf lb = {0};
    for (uint32_t k = k0; k < k1; k++) {
        uint32_t b = L->by_rank[k], x = (k - k0) * (W + GAP);
        for (uint32_t e = L->in_start[b], y = 0; e < L->in_start[b + 1]; e++, y++) {
            band_text(L, r, L->in_edges[e], &lb);
            grid_text(&g, y, x + 2, band_room(L, k, k1, y, W, x, row_w), lb.s, false);
        }
        /* the box */
        uint32_t bh = box_height(&boxes[b]), y0 = band;
        for (uint32_t y = y0; y < y0 + bh; y++)
            for (uint32_t c = x; c < x + W; c++) {
                uint32_t ch = ' ';
                bool top = y == y0, bottom = y == y0 + bh - 1, left = c == x, right = c == x + W - 1;
                if ((top || bottom) && (left || right)) ch = top ? (left ? 0x250c : 0x2510) : (left ? 0x2514 : 0x2518);
                else if (top || bottom) ch = 0x2500;
                else if (left || right) ch = 0x2502;
                g.cells[y * g.w + c] = ch;
            }
        if (boxes[b].text[0]) {
            char title[256];
            snprintf(title, sizeof title, " %s ", boxes[b].text[0]);
            grid_text(&g, y0, x + 1, W - 2, title, true);
        }
        uint32_t y = y0 + 1;
        for (int t = 1; t < LS_BOX_LINES; t++)
            if (boxes[b].text[t]) grid_text(&g, y++, x + 2, W - 4, boxes[b].text[t], false);
    }
    ls_buf_free(&lb);
    grid_lines(&g, ascii, out, width);
    free(g.cells);
}

/* The widest line without drawing: a row's last box ends it, or a band line's text past it
 * (as grid_text writes it: cut to its room with an ellipsis, trailing spaces not counted). */
uint32_t ls_box_layout_width(const ls_box_layout *L, int box_w)
{
    uint32_t W = layout_w(box_w), width = 0, cps[512];
    ls_buf lb = {0};
    for (uint32_t r = 0; r < L->n_ranks; r++) {
        uint32_t k0 = L->rank_start[r], k1 = L->rank_start[r + 1];
        if (k0 == k1) continue;
        uint32_t row_w = (k1 - k0) * (W + GAP) + W, end = (k1 - k0 - 1) * (W + GAP) + W;
        for (uint32_t k = k0; k < k1; k++) {
            uint32_t b = L->by_rank[k], x = (k - k0) * (W + GAP);
            for (uint32_t e = L->in_start[b], y = 0; e < L->in_start[b + 1]; e++, y++) {
                band_text(L, r, L->in_edges[e], &lb);
                uint32_t room = band_room(L, k, k1, y, W, x, row_w), n = text_cells(lb.s, cps), last = n;
                if (n > room && room > 1) last = room; /* ends with the ellipsis */
                else
                    while (last && cps[last - 1] == ' ') last--;
                uint32_t line_end = last ? x + 2 + last : 0;
                if (line_end > row_w) line_end = row_w;
                if (line_end > end) end = line_end;
            }
        }
        if (end > width) width = end;
    }
    ls_buf_free(&lb);
    return width;
}

void ls_draw_boxes(const ls_box *boxes, uint32_t n, const ls_box_edge *edges, uint32_t n_edges, int box_w, bool ascii,
                   ls_drawing *d)
{
    memset(d, 0, sizeof *d);
    ls_box_layout L;
    ls_box_layout_build(boxes, n, edges, n_edges, &L);
    d->n_boxes = n;
    d->place = ls_calloc(n + 1, sizeof *d->place);
    for (uint32_t b = 0; b < n; b++) d->place[b] = ls_box_layout_place(&L, b, box_w);
    d->n_lines = L.n_lines;
    d->lines = ls_malloc(sizeof *d->lines * (L.n_lines + 1));
    for (uint32_t r = 0; r < L.n_ranks; r++) ls_box_layout_draw(&L, r, box_w, ascii, d->lines + L.line0[r], &d->width);
    ls_box_layout_free(&L);
}

void ls_drawing_free(ls_drawing *d)
{
    for (uint32_t i = 0; i < d->n_lines; i++) free(d->lines[i]);
    free(d->lines);
    free(d->place);
    memset(d, 0, sizeof *d);
}

/* ---- the regions as boxes */

static const char *store(ls_region_boxes *o, char *s)
{
    o->store = ls_realloc(o->store, sizeof *o->store * (o->n_store + 1));
    o->store[o->n_store++] = s;
    return s;
}

static const char *fmt(ls_region_boxes *o, const char *f, ...) LS_PRINTF(2, 3);
static const char *fmt(ls_region_boxes *o, const char *f, ...)
{
    ls_buf b = {0};
    va_list ap;
    va_start(ap, f);
    ls_buf_vprintf(&b, f, ap);
    va_end(ap);
    return store(o, ls_buf_take(&b));
}

static void region_text(ls_region_boxes *o, const ls_region *g, ls_box *bx)
{
    char b1[32], b2[32];
    bx->text[0] = g->name;
    switch ((ls_region_kind)g->kind) {
    case LS_REGION_INPUTS:
        bx->text[1] = fmt(o, "%u user input%s", g->n_nodes, g->n_nodes == 1 ? "" : "s");
        break;
    case LS_REGION_OUTPUTS: bx->text[1] = "the program's outputs"; break;
    case LS_REGION_CPU:
        bx->text[1] = fmt(o, "CPU · %u node%s", g->n_nodes, g->n_nodes == 1 ? "" : "s");
        bx->text[2] = g->ops;
        break;
    case LS_REGION_TAG:
    case LS_REGION_DELEGATE:
        bx->text[1] = fmt(o, "%s%s · %u node%s", g->kind == LS_REGION_TAG ? "→ " : "", g->backend ? g->backend : "?",
                          g->n_nodes, g->n_nodes == 1 ? "" : "s");
        bx->text[2] = g->ops;
        break;
    }
    if (g->kind == LS_REGION_INPUTS || g->kind == LS_REGION_OUTPUTS) return;
    if (g->consts && g->states)
        bx->text[3] = fmt(o, "%u const %s · %u state %s", g->consts, ls_fmt_bytes(g->const_bytes, b1, sizeof b1), g->states,
                          ls_fmt_bytes(g->state_bytes, b2, sizeof b2));
    else if (g->states)
        bx->text[3] = fmt(o, "state: %u buffer%s, %s", g->states, g->states == 1 ? "" : "s",
                          ls_fmt_bytes(g->state_bytes, b2, sizeof b2));
    else if (g->consts) /* a delegate counts what it holds; every other box what its nodes read */
        bx->text[3] = fmt(o, "%u const%s%s, %s", g->consts, g->consts == 1 ? "" : "s",
                          g->kind != LS_REGION_DELEGATE ? " read" : "", ls_fmt_bytes(g->const_bytes, b1, sizeof b1));
}

/* Past this many regions, runs of similar ones fold. */
#define FOLD_ABOVE 40
#define MAX_PERIOD 32

/* How many times regions [i, i + p) repeat from i on (1: no repeat). */
static uint32_t repeats(const ls_regions *r, uint32_t i, uint32_t p)
{
    uint32_t m = 1;
    while (i + (m + 1) * p <= r->n) {
        for (uint32_t k = 0; k < p; k++)
            if (!ls_region_similar(&r->v[i + k], &r->v[i + m * p + k])) return m;
        m++;
    }
    return m;
}

typedef struct edge_acc {
    uint32_t tensors;
    uint64_t bytes;
} edge_acc;

void ls_region_boxes_build(const ls_regions *r, bool fold, bool ascii, ls_region_boxes *o)
{
    (void)ascii;
    memset(o, 0, sizeof *o);
    o->box_of_region = ls_malloc(sizeof *o->box_of_region * (r->n + 1));
    o->region_of_box = ls_malloc(sizeof *o->region_of_box * (r->n + 1));
    o->boxes = ls_calloc(r->n + 1, sizeof *o->boxes);
    fold = fold && r->n > FOLD_ABOVE;
    for (uint32_t i = 0; i < r->n;) {
        uint32_t best_p = 0, best_m = 1;
        for (uint32_t p = 1; fold && p <= MAX_PERIOD && i + 2 * p <= r->n; p++) {
            uint32_t m = repeats(r, i, p);
            if (m >= 3 && m * p > best_m * best_p) {
                best_p = p;
                best_m = m;
            }
        }
        /* the first copy as it is, then one box for the copies after it */
        uint32_t shown = best_p ? best_p : 1;
        for (uint32_t k = 0; k < shown; k++, i++) {
            ls_box *bx = &o->boxes[o->n];
            bx->id = (int32_t)i;
            bx->fold = 1;
            const ls_region *g = &r->v[i];
            bx->weight = (g->kind == LS_REGION_TAG || g->kind == LS_REGION_DELEGATE ? 1u << 31 : 0) + g->n_nodes;
            region_text(o, g, bx);
            o->box_of_region[i] = o->n;
            o->region_of_box[o->n++] = i;
        }
        if (!best_p) continue;
        uint32_t last = i + (best_m - 1) * best_p - 1;
        ls_box *bx = &o->boxes[o->n];
        bx->id = (int32_t)i;
        bx->fold = (best_m - 1) * best_p;
        bx->text[0] = fmt(o, "%u more", bx->fold);
        if (best_p == 1) bx->text[1] = fmt(o, "like %s", r->v[i - 1].name);
        else bx->text[1] = fmt(o, "%u × the %u above", best_m - 1, best_p);
        bx->text[2] = fmt(o, "%s … %s", r->v[i].name, r->v[last].name);
        for (uint32_t k = i; k <= last; k++) o->box_of_region[k] = o->n;
        o->region_of_box[o->n++] = i;
        i = last + 1;
    }
    /* edges between boxes, summed; ranks: the longest path over them */
    ls_ptrmap ix = {0};
    LS_VEC(edge_acc) acc = {0};
    for (uint32_t e = 0; e < r->n_edges; e++) {
        uint32_t a = o->box_of_region[r->edges[e].from], b = o->box_of_region[r->edges[e].to];
        if (a == b) continue;
        const void *key = (const void *)(uintptr_t)(((uint64_t)a << 32 | b) + 1);
        uintptr_t k;
        if (!ls_ptrmap_get(&ix, key, &k)) {
            o->edges = ls_realloc(o->edges, sizeof *o->edges * (o->n_edges + 1));
            o->edges[o->n_edges] = (ls_box_edge){a, b, NULL};
            edge_acc z = {0, 0};
            ls_vec_push(&acc, z);
            k = o->n_edges++;
            ls_ptrmap_put(&ix, key, k);
        }
        acc.v[k].tensors += r->edges[e].tensors;
        acc.v[k].bytes += r->edges[e].bytes;
    }
    for (uint32_t e = 0; e < o->n_edges; e++) {
        ls_region_edge re = {o->edges[e].from, o->edges[e].to, acc.v[e].tensors, acc.v[e].bytes};
        ls_buf b = {0};
        ls_region_edge_label(&re, &b);
        o->edges[e].label = store(o, ls_buf_take(&b));
    }
    /* r's edges are sorted by destination, so boxes' are too: sources get their rank first */
    for (uint32_t e = 0; e < o->n_edges; e++) {
        ls_box *a = &o->boxes[o->edges[e].from], *b = &o->boxes[o->edges[e].to];
        if (o->edges[e].from < o->edges[e].to && a->rank + 1 > b->rank) b->rank = a->rank + 1;
    }
    free(acc.v);
    ls_ptrmap_free(&ix);
}

void ls_region_boxes_free(ls_region_boxes *b)
{
    for (uint32_t i = 0; i < b->n_store; i++) free(b->store[i]);
    free(b->store);
    free(b->boxes);
    free(b->edges);
    free(b->box_of_region);
    free(b->region_of_box);
    memset(b, 0, sizeof *b);
}

/* ---- tags and colours */

typedef struct tag_list {
    ls_ptrmap seen; /* tag -> index + 1 */
    LS_VEC(const char *) tags;
    LS_VEC(const char *) backends;
} tag_list;

static void add_tag(tag_list *l, const char *tag, const char *backend)
{
    if (!tag) return;
    uintptr_t i;
    if (ls_ptrmap_get(&l->seen, tag, &i)) {
        if (!l->backends.v[i - 1]) l->backends.v[i - 1] = backend;
        return;
    }
    ls_vec_push(&l->tags, tag);
    ls_vec_push(&l->backends, backend);
    ls_ptrmap_put(&l->seen, tag, l->tags.n);
}

static void tags_of_program(tag_list *l, const ls_program *p, int depth)
{
    if (!p || depth > 8) return;
    for (uint32_t i = 0; i < p->n_tags; i++) add_tag(l, p->tags[i].tag, p->tags[i].backend_id);
    const char *last = NULL;
    for (uint32_t i = 0; i < p->n_nodes; i++) {
        const char *t = p->nodes[i]->tag;
        if (t && t != last) add_tag(l, t, ls_program_tag_backend(p, t));
        last = t;
    }
    for (uint32_t i = 0; i < p->n_subs; i++) {
        add_tag(l, ls_deleg_sub_tag(&p->subs[i]), p->subs[i].backend_id);
        tags_of_program(l, p->subs[i].program, depth + 1);
    }
}

uint32_t ls_history_tags(const ls_history *h, const char ***tags, const char ***backends)
{
    tag_list l = {0};
    for (uint32_t s = 0; s < h->n; s++) tags_of_program(&l, h->steps[s].program, 0);
    ls_ptrmap_free(&l.seen);
    *tags = l.tags.v;
    *backends = l.backends.v;
    return l.tags.n;
}

const short ls_tag_palette256[16] = {33, 166, 34, 163, 37, 136, 99, 160, 30, 130, 69, 28, 169, 172, 61, 131};

void ls_tag_rgb(int tag, char hex[8])
{
    static const int level[6] = {0, 95, 135, 175, 215, 255};
    int c = ls_tag_palette256[(tag < 0 ? 0 : tag) % 16] - 16; /* the xterm 6×6×6 cube */
    snprintf(hex, 8, "#%02x%02x%02x", level[c / 36 % 6], level[c / 6 % 6], level[c % 6]);
}
