/* A node's neighbourhood (neighbourhood.h): producers above, users below, level by level. A node
 * reached from two sides is shown once, at the first level it was reached at: producers of the
 * level nearest the node are collected before users, one level at a time outwards. */
#include <stdlib.h>
#include <string.h>

#include "neighbourhood.h"
#include "ops.h"

typedef LS_VEC(uint32_t) id_vec;

typedef struct gather {
    const ls_program *p;
    id_vec *levels;    /* per level, every node reached (shown or not) */
    uint32_t n_levels;
    uint32_t to;       /* the level being filled */
    uint32_t max_level;
} gather;

static bool contains(const id_vec *v, uint32_t id)
{
    for (uint32_t i = 0; i < v->n; i++)
        if (v->v[i] == id) return true;
    return false;
}

/* Only the nodes shown on other levels hide a node: one past the cap is counted on its level. */
static bool shown_elsewhere(const gather *g, uint32_t id)
{
    for (uint32_t k = 0; k < g->n_levels; k++) {
        const id_vec *v = &g->levels[k];
        uint32_t shown = v->n < g->max_level ? v->n : g->max_level;
        if (k == g->to) continue;
        for (uint32_t i = 0; i < shown; i++)
            if (v->v[i] == id) return true;
    }
    return false;
}

static void reach(gather *g, uint32_t id)
{
    if (!id || shown_elsewhere(g, id) || contains(&g->levels[g->to], id)) return;
    ls_vec_push(&g->levels[g->to], id);
}

static void reach_producer(uint32_t id, void *vg)
{
    gather *g = vg;
    const ls_node *n = ls_program_node(g->p, id);
    if (n && !(n->op && n->op->id == LS_OP_alloc)) reach(g, id);
}

/* Level `to` from the nodes shown on level `from`: their producers or their users. */
static void expand(gather *g, uint32_t from, uint32_t to, bool producers)
{
    g->to = to;
    const id_vec *src = &g->levels[from];
    uint32_t shown = src->n < g->max_level ? src->n : g->max_level;
    for (uint32_t i = 0; i < shown; i++) {
        uint32_t id = src->v[i];
        if (producers) {
            const ls_node *n = ls_program_node(g->p, id);
            for (uint16_t a = 0; n && a < n->nargs; a++) ls_arg_each_node(&n->args[a], reach_producer, g);
            continue;
        }
        int32_t pos = ls_program_pos(g->p, id);
        uint32_t cnt = 0;
        const uint32_t *us = pos >= 0 ? ls_program_users(g->p, (uint32_t)pos, &cnt) : NULL;
        for (uint32_t k = 0; k < cnt; k++) reach(g, g->p->nodes[us[k]]->id);
    }
}

typedef struct reads_ctx {
    uint32_t id;
    bool found;
} reads_ctx;

static void reads_one(uint32_t id, void *vctx)
{
    reads_ctx *c = vctx;
    c->found |= id == c->id;
}

static bool reads(const ls_node *n, uint32_t id)
{
    reads_ctx c = {id, false};
    for (uint16_t a = 0; a < n->nargs && !c.found; a++) ls_arg_each_node(&n->args[a], reads_one, &c);
    return c.found;
}

int ls_around_build(const ls_program *p, uint32_t center, int depth, uint32_t max_level, ls_around *out)
{
    memset(out, 0, sizeof *out);
    if (!p || !ls_program_node(p, center)) return -1;
    if (depth < 1) depth = 1;
    if (depth > LS_AROUND_MAX_DEPTH) depth = LS_AROUND_MAX_DEPTH;
    if (!max_level) max_level = 1;
    uint32_t nl = 2u * (uint32_t)depth + 1, c = (uint32_t)depth;
    gather g = {.p = p, .levels = ls_calloc(nl, sizeof *g.levels), .n_levels = nl, .max_level = max_level};
    ls_vec_push(&g.levels[c], center);
    for (uint32_t d = 1; d <= (uint32_t)depth; d++) {
        expand(&g, c - d + 1, c - d, true);
        expand(&g, c + d - 1, c + d, false);
    }
    out->center = center;
    out->depth = depth;
    out->n_levels = nl;
    out->first = ls_malloc(sizeof *out->first * (nl + 1));
    out->more = ls_calloc(nl, sizeof *out->more);
    uint32_t total = 0;
    for (uint32_t k = 0; k < nl; k++) total += g.levels[k].n < max_level ? g.levels[k].n : max_level;
    out->ids = ls_malloc(sizeof *out->ids * (total ? total : 1));
    uint32_t at = 0;
    for (uint32_t k = 0; k < nl; k++) {
        out->first[k] = at;
        uint32_t shown = g.levels[k].n < max_level ? g.levels[k].n : max_level;
        if (shown) memcpy(out->ids + at, g.levels[k].v, sizeof *out->ids * shown);
        at += shown;
        out->more[k] = g.levels[k].n - shown;
        free(g.levels[k].v);
    }
    out->first[nl] = at;
    free(g.levels);
    /* an edge wherever a node reads a node of the level above it */
    LS_VEC(ls_around_edge) edges = {0};
    for (uint32_t k = 1; k < nl; k++)
        for (uint32_t b = out->first[k]; b < out->first[k + 1]; b++) {
            const ls_node *n = ls_program_node(p, out->ids[b]);
            for (uint32_t a = out->first[k - 1]; a < out->first[k]; a++)
                if (reads(n, out->ids[a])) {
                    ls_around_edge e = {a, b};
                    ls_vec_push(&edges, e);
                }
        }
    out->edges = edges.v;
    out->n_edges = edges.n;
    return 0;
}

int ls_around_level_of(const ls_around *a, uint32_t i)
{
    for (uint32_t k = 0; k < a->n_levels; k++)
        if (i < a->first[k + 1]) return (int)k - a->depth;
    return a->depth;
}

void ls_around_free(ls_around *a)
{
    free(a->ids);
    free(a->first);
    free(a->more);
    free(a->edges);
    memset(a, 0, sizeof *a);
}
