/* A step's rows grouped by what a filter asks for, made with the rows (by the pipeline's
 * thread for a top-level step): by tag (a node's own, and the tag of the module a delegate
 * call runs), the CPU's rows (no tag, no module, a call), and by op text. So a filter costs the
 * rows it shows, not a test of every row: at a million nodes the test of an op read each
 * placeholder's input spec through a hash and took 200 ms (bench at dup's step). The same
 * read of each row's name and op gives the graph pane its column widths. */
#include <stdlib.h>
#include <string.h>

#include "ui.h"

const char ui_cpu_rows_key[] = "cpu rows"; /* by_tag's key of the CPU's rows: no tag is this pointer */

typedef struct entry {
    uint32_t group, row;
} entry;

typedef struct groups_builder {
    ui_row_groups *g;
    entry *e;
    size_t n, cap;
    const void *last; /* runs of one key are the rule: a run costs one lookup */
    uint32_t last_group;
} groups_builder;

static void put(groups_builder *b, const void *key, uint32_t row)
{
    if (key != b->last) {
        ui_row_groups *g = b->g;
        uintptr_t at = g->n;
        if (ls_ptrmap_add(&g->group, key, at, &at)) {
            if (g->n == g->cap_keys) g->keys = ls_realloc(g->keys, sizeof *g->keys * (g->cap_keys = g->cap_keys ? g->cap_keys * 2 : 16));
            g->keys[g->n++] = key;
        }
        b->last = key;
        b->last_group = (uint32_t)at;
    }
    if (b->n == b->cap) b->e = ls_realloc(b->e, sizeof *b->e * (b->cap = b->cap ? b->cap * 2 : 256));
    b->e[b->n++] = (entry){b->last_group, row};
}

/* Counting sort by group, stable: each group's rows stay in row order. */
static void finish(groups_builder *b)
{
    ui_row_groups *g = b->g;
    g->start = ls_calloc((size_t)g->n + 1, sizeof *g->start);
    g->rows = ls_malloc(sizeof *g->rows * (b->n ? b->n : 1));
    for (size_t i = 0; i < b->n; i++) g->start[b->e[i].group + 1]++;
    for (uint32_t k = 0; k < g->n; k++) g->start[k + 1] += g->start[k];
    uint32_t *fill = ls_malloc(sizeof *fill * (g->n ? g->n : 1));
    memcpy(fill, g->start, sizeof *fill * g->n);
    for (size_t i = 0; i < b->n; i++) g->rows[fill[b->e[i].group]++] = b->e[i].row;
    free(fill);
    free(b->e);
}

/* The width of ls_node_type_str's text, counted without writing it (a step of a million rows):
 * "float32[1, 3, 16, 16]"; a list of values counts as wide as the column goes. */
static int type_width(const ls_node *n)
{
    if (n->val_kind == LS_VAL_TENSORS) return 24;
    if (n->val_kind != LS_VAL_TENSOR || !n->nvals) return 0;
    const ls_tmeta *m = &n->vals[0];
    int w = (int)strlen(ls_dtype_name(m->dtype)) + 2 + (m->ndim > 1 ? 2 * (m->ndim - 1) : 0);
    for (int i = 0; i < m->ndim && w < 24; i++) {
        if (m->sym[i]) {
            w += (int)strlen(m->sym[i]);
            continue;
        }
        int64_t v = m->sizes[i];
        w += v < 0;
        for (uint64_t u = v < 0 ? (uint64_t)0 - (uint64_t)v : (uint64_t)v; ; u /= 10) {
            w++;
            if (u < 10) break;
        }
    }
    return w;
}

void ui_rows_index(ui_derive *d, ui_step_rows *sr)
{
    groups_builder tags = {.g = &sr->by_tag}, ops = {.g = &sr->by_op};
    sr->name_w = sr->op_w = sr->type_w = 1;
    const char *last_op = NULL;
    for (uint32_t r = 0; r < sr->n_rows; r++) {
        ui_row row = ui_rows_at(sr, r);
        const ls_node *n = row.node;
        const ls_program *p = row.mark == UI_MARK_REMOVED ? sr->prev : sr->prog;
        const char *sub = ui_delegate_sub(p, n);
        const char *sub_tag = sub ? ui_derive_sub_tag(d, p, sub) : NULL;
        if (n->tag) put(&tags, n->tag, r);
        if (sub_tag && sub_tag != n->tag) put(&tags, sub_tag, r);
        if (!n->tag && !sub && n->kind == LS_NODE_CALL) put(&tags, ui_cpu_rows_key, r);
        const char *op = ui_node_op(p, n);
        put(&ops, op, r);
        /* the graph pane's columns are as wide as the widest name and op of the step */
        int nw = (int)strlen(n->name ? n->name : "");
        if (nw > sr->name_w) sr->name_w = nw;
        if (sr->type_w < 24) {
            int tw = type_width(n);
            if (tw > sr->type_w) sr->type_w = tw < 24 ? tw : 24;
        }
        if (op == last_op) continue; /* runs of one op: measured once */
        last_op = op;
        int ow = (int)strlen(op);
        if (ow > sr->op_w) sr->op_w = ow;
    }
    finish(&tags);
    finish(&ops);
}

uint32_t ui_row_groups_of(const ui_row_groups *g, const void *key, const uint32_t **rows)
{
    uint32_t k;
    *rows = NULL;
    if (!ls_ptrmap_get_u32(&g->group, key, &k)) return 0;
    *rows = g->rows + g->start[k];
    return g->start[k + 1] - g->start[k];
}

void ui_row_groups_free(ui_row_groups *g)
{
    ls_ptrmap_free(&g->group);
    free(g->keys);
    free(g->start);
    free(g->rows);
    memset(g, 0, sizeof *g);
}

bool ui_op_matches(const char *op, const char *value)
{
    if (strcmp(op, value) == 0) return true;
    size_t l = strlen(value);
    return op[0] == '[' && strncmp(op + 1, value, l) == 0 && op[l + 1] == ']';
}
