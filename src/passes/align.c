/* Two programs node by node (align.h): match, then rows in the first program's order with the
 * second's unmatched nodes merged in after their anchor, then each pair compared. */
#include "align.h"

#include <stdlib.h>
#include <string.h>

#include "ops.h"
#include "ptrmap.h"

static bool is_alloc(const ls_node *n)
{
    return n->kind == LS_NODE_CALL && n->op && n->op->id == LS_OP_alloc;
}

static const ls_input_spec *spec_of(const ls_ptrmap *specs, const ls_program *p, const ls_node *n)
{
    uintptr_t i;
    return n->kind == LS_NODE_PLACEHOLDER && ls_ptrmap_get(specs, n->name, &i) ? &p->inputs[i] : NULL;
}

static void spec_map(const ls_program *p, ls_ptrmap *m)
{
    for (uint32_t i = 0; i < p->n_inputs; i++) ls_ptrmap_add(m, p->inputs[i].name, i, NULL);
}

static void pair(int32_t *b_of_a, int32_t *a_of_b, uint32_t i, uint32_t j)
{
    b_of_a[i] = (int32_t)j;
    a_of_b[j] = (int32_t)i;
}

typedef LS_VEC(uint32_t) pos_vec;

/* The positions of the alloc nodes among n's arguments, in argument order (an out list's
 * allocs in the list's order). */
static void allocs_read(const ls_program *p, const ls_node *n, pos_vec *out)
{
    out->n = 0;
    for (uint16_t i = 0; i < n->nargs; i++) {
        const ls_arg *x = &n->args[i];
        uint32_t k = x->kind == LS_ARG_NODE ? 1 : x->kind == LS_ARG_NODES || x->kind == LS_ARG_OPT_NODES ? x->n : 0;
        for (uint32_t e = 0; e < k; e++) {
            int32_t pos = ls_program_pos(p, x->kind == LS_ARG_NODE ? x->v.node : x->v.nodes[e]);
            if (pos >= 0 && is_alloc(p->nodes[pos])) ls_vec_push(out, (uint32_t)pos);
        }
    }
}

/* An alloc is the memory of one out argument of the call it comes right before (exir/passes/
 * __init__.py ToOutVarPass.call: make_alloc_node per out argument, inserted before the node;
 * to_out_variant.c's new_alloc), and its name is a counter's ("alloc_3"), which one extra
 * alloc earlier shifts. So an alloc is the same allocation as the alloc in the same out
 * argument of the call matched with its call: the k-th alloc a matched pair of calls reads
 * pairs with the k-th. A side with no out arguments (a .pte's loaded calls) pairs none. */
static void match_allocs(const ls_program *a, const ls_program *b, int32_t *b_of_a, int32_t *a_of_b)
{
    pos_vec xa = {0}, xb = {0};
    for (uint32_t i = 0; i < a->n_nodes; i++) {
        const ls_node *x = a->nodes[i];
        if (b_of_a[i] < 0 || x->kind != LS_NODE_CALL || is_alloc(x)) continue;
        allocs_read(a, x, &xa);
        if (!xa.n) continue;
        allocs_read(b, b->nodes[b_of_a[i]], &xb);
        for (uint32_t k = 0; k < xa.n && k < xb.n; k++)
            if (b_of_a[xa.v[k]] < 0 && a_of_b[xb.v[k]] < 0) pair(b_of_a, a_of_b, xa.v[k], xb.v[k]);
    }
    free(xa.v);
    free(xb.v);
}

/* Across files, in tiers: a user input by its number and a parameter, buffer or constant by its
 * target, else by its data; then any node by its name; then by its op and how many of that op
 * came before it among the nodes left; last, allocs through the calls they are the memory of. */
static void match_by_identity(const ls_program *a, const ls_program *b, int32_t *b_of_a, int32_t *a_of_b)
{
    ls_ptrmap sa = {0}, sb = {0}, keys = {0};
    spec_map(a, &sa);
    spec_map(b, &sb);
    pos_vec users_b = {0};
    for (uint32_t j = 0; j < b->n_nodes; j++) {
        const ls_input_spec *s = spec_of(&sb, b, b->nodes[j]);
        if (!s) continue;
        if (s->kind == LS_IN_USER_INPUT) ls_vec_push(&users_b, j);
        else if (s->target) ls_ptrmap_add(&keys, s->target, j, NULL);
    }
    uint32_t user = 0;
    for (uint32_t i = 0; i < a->n_nodes; i++) {
        const ls_input_spec *s = spec_of(&sa, a, a->nodes[i]);
        uintptr_t j;
        if (!s) continue;
        if (s->kind == LS_IN_USER_INPUT) {
            if (user < users_b.n) pair(b_of_a, a_of_b, i, users_b.v[user]);
            user++;
        } else if (s->target && ls_ptrmap_get(&keys, s->target, &j) && a_of_b[j] < 0)
            pair(b_of_a, a_of_b, i, (uint32_t)j);
    }
    free(users_b.v);
    ls_ptrmap_free(&keys);
    /* data the other file names differently (exir writes no FQN for a constant it stores in a
     * .pte): by its bytes, dtype and shape; of several with the same bytes (two zero-filled
     * caches), the k-th with the k-th in graph order (the first of them took every match) */
    uint32_t *next_same = ls_malloc(sizeof *next_same * ((size_t)b->n_nodes + 1)); /* chains of equal hashes */
    for (uint32_t j = b->n_nodes; j-- > 0;) {
        const ls_input_spec *s = spec_of(&sb, b, b->nodes[j]);
        ls_named_tensor *d = s && a_of_b[j] < 0 && s->kind != LS_IN_USER_INPUT ? ls_program_spec_data(b, s) : NULL;
        if (!d || !d->t) continue;
        const void *key = (const void *)(uintptr_t)(ls_tensor_hash(d->t) | 1);
        uintptr_t head;
        next_same[j] = ls_ptrmap_get(&keys, key, &head) ? (uint32_t)head : UINT32_MAX;
        ls_ptrmap_put(&keys, key, j); /* walking down: the head is the first in graph order */
    }
    for (uint32_t i = 0; i < a->n_nodes && keys.used; i++) {
        const ls_input_spec *s = spec_of(&sa, a, a->nodes[i]);
        ls_named_tensor *d = s && b_of_a[i] < 0 && s->kind != LS_IN_USER_INPUT ? ls_program_spec_data(a, s) : NULL;
        uintptr_t j;
        const void *key = d && d->t ? (const void *)(uintptr_t)(ls_tensor_hash(d->t) | 1) : NULL;
        if (!key || !ls_ptrmap_get(&keys, key, &j)) continue;
        while (j != UINT32_MAX && a_of_b[j] >= 0) j = next_same[j];
        if (j == UINT32_MAX) continue;
        pair(b_of_a, a_of_b, i, (uint32_t)j);
        ls_ptrmap_put(&keys, key, next_same[j]); /* the next of these bytes for the next one */
    }
    free(next_same);
    ls_ptrmap_free(&keys);
    for (uint32_t j = 0; j < b->n_nodes; j++)
        if (a_of_b[j] < 0 && !is_alloc(b->nodes[j])) ls_ptrmap_add(&keys, b->nodes[j]->name, j, NULL);
    for (uint32_t i = 0; i < a->n_nodes; i++) {
        uintptr_t j;
        if (b_of_a[i] < 0 && !is_alloc(a->nodes[i]) && ls_ptrmap_get(&keys, a->nodes[i]->name, &j) && a_of_b[j] < 0 &&
            a->nodes[i]->kind == b->nodes[j]->kind)
            pair(b_of_a, a_of_b, i, (uint32_t)j);
    }
    ls_ptrmap_free(&keys);
    /* the calls left, by op: the k-th of an op with the k-th */
    LS_VEC(pos_vec) lists = {0};
    LS_VEC(uint32_t) taken = {0};
    for (uint32_t j = 0; j < b->n_nodes; j++) {
        const ls_node *n = b->nodes[j];
        const void *op = n->op ? (const void *)n->op : (const void *)n->target;
        if (a_of_b[j] >= 0 || n->kind != LS_NODE_CALL || is_alloc(n) || !op) continue;
        uintptr_t l;
        if (!ls_ptrmap_get(&keys, op, &l)) {
            pos_vec empty = {0};
            ls_vec_push(&lists, empty);
            ls_vec_push(&taken, 0);
            l = lists.n - 1;
            ls_ptrmap_put(&keys, op, l);
        }
        ls_vec_push(&lists.v[l], j);
    }
    for (uint32_t i = 0; i < a->n_nodes; i++) {
        const ls_node *n = a->nodes[i];
        const void *op = n->op ? (const void *)n->op : (const void *)n->target;
        uintptr_t l;
        if (b_of_a[i] >= 0 || n->kind != LS_NODE_CALL || is_alloc(n) || !op || !ls_ptrmap_get(&keys, op, &l)) continue;
        if (taken.v[l] < lists.v[l].n) pair(b_of_a, a_of_b, i, lists.v[l].v[taken.v[l]++]);
    }
    for (uint32_t l = 0; l < lists.n; l++) free(lists.v[l].v);
    free(lists.v);
    free(taken.v);
    ls_ptrmap_free(&keys);
    ls_ptrmap_free(&sa);
    ls_ptrmap_free(&sb);
    match_allocs(a, b, b_of_a, a_of_b);
}

/* ---- comparing a pair */

typedef struct cmp_ctx {
    const ls_program *a, *b;
    const int32_t *b_of_a;
    bool lineage; /* two steps of one history (by id) */
} cmp_ctx;

static bool same_node_ref(const cmp_ctx *c, uint32_t ia, uint32_t ib)
{
    if (!ia || !ib) return ia == ib;
    int32_t pa = ls_program_pos(c->a, ia), pb = ls_program_pos(c->b, ib);
    if (pa < 0 || pb < 0) return pa < 0 && pb < 0;
    return c->b_of_a[pa] == pb;
}

static bool out_arg(const ls_program *p, const ls_arg *x)
{
    if (x->kind != LS_ARG_NODE) return false;
    const ls_node *n = ls_program_node(p, x->v.node);
    return n && is_alloc(n);
}

static bool same_arg(const cmp_ctx *c, const ls_arg *x, const ls_arg *y)
{
    if (x->kind != y->kind) return false;
    switch (x->kind) {
    case LS_ARG_NODE: return same_node_ref(c, x->v.node, y->v.node);
    case LS_ARG_NODES:
    case LS_ARG_OPT_NODES:
        if (x->n != y->n) return false;
        for (uint32_t k = 0; k < x->n; k++)
            if (!same_node_ref(c, x->v.nodes[k], y->v.nodes[k])) return false;
        return true;
    case LS_ARG_SYMINTS:
        if (x->n != y->n) return false;
        for (uint32_t k = 0; k < x->n; k++) {
            const ls_symint *s = &x->v.symints[k], *t = &y->v.symints[k];
            if (s->is_node != t->is_node || (s->is_node ? !same_node_ref(c, s->node, t->node) : s->i != t->i)) return false;
        }
        return true;
    default: return ls_arg_equal(x, y);
    }
}

/* The arguments that say what a node computes: out arguments left out, and a trailing default
 * left out on one side matches its default on the other. */
static bool same_args(const cmp_ctx *c, const ls_node *x, const ls_node *y)
{
    uint16_t i = 0, j = 0;
    for (;;) {
        while (i < x->nargs && out_arg(c->a, &x->args[i])) i++;
        while (j < y->nargs && out_arg(c->b, &y->args[j])) j++;
        if (i >= x->nargs || j >= y->nargs) break;
        if (!same_arg(c, &x->args[i], &y->args[j])) return false;
        i++;
        j++;
    }
    for (; i < x->nargs; i++)
        if (!out_arg(c->a, &x->args[i]) && !(x->args[i].flags & LS_ARGF_DEFAULT)) return false;
    for (; j < y->nargs; j++)
        if (!out_arg(c->b, &y->args[j]) && !(y->args[j].flags & LS_ARGF_DEFAULT)) return false;
    return true;
}

/* Two get_attrs of lowered modules of the same name: the same delegate only when the same
 * backend lowered them (`:compare backend` of two_delegates: lowered_module_0 is ArithBackend's
 * on one side, BundledBackend's on the other). A get_attr's target is only the attribute's name
 * (exir/delegate.py get_lowered_module_name: lowered_module_N, numbered per graph); what it
 * holds is a LoweredBackendModule, whose backend_id names the backend that preprocessed it
 * (exir/lowered_backend_module.py: backend_id, processed_bytes, compile_specs). */
static bool same_backend(const cmp_ctx *c, const ls_node *x, const ls_node *y)
{
    const ls_submodule *sx = ls_program_sub(c->a, x->target), *sy = ls_program_sub(c->b, y->target);
    if (!sx || !sy) return !sx && !sy;
    return (!sx->backend_id && !sy->backend_id) ||
           (sx->backend_id && sy->backend_id && strcmp(sx->backend_id, sy->backend_id) == 0);
}

static uint16_t out_args(const ls_program *p, const ls_node *n)
{
    uint16_t k = 0;
    for (uint16_t i = 0; i < n->nargs; i++) k += out_arg(p, &n->args[i]);
    return k;
}

/* LS_ALIGN_WHY_NONE when x and y are the same node, else the first rule they break. */
static ls_align_why node_diff(const cmp_ctx *c, const ls_node *x, const ls_node *y)
{
    if (x == y) return LS_ALIGN_WHY_NONE; /* shared between two steps */
    if (x->kind != y->kind) return LS_ALIGN_WHY_KIND;
    if (x->tag != y->tag) return LS_ALIGN_WHY_TAG;
    if (x->kind == LS_NODE_CALL && (x->op != y->op || (!x->op && x->target != y->target))) return LS_ALIGN_WHY_OP;
    if (x->kind == LS_NODE_GET_ATTR && x->target != y->target) return LS_ALIGN_WHY_TARGET;
    if (x->kind == LS_NODE_GET_ATTR && !same_backend(c, x, y)) return LS_ALIGN_WHY_BACKEND;
    const ls_tmeta *mx = ls_node_tval(x), *my = ls_node_tval(y);
    if ((mx != NULL) != (my != NULL) || (mx && !ls_tmeta_equal(mx, my))) return LS_ALIGN_WHY_META;
    /* within one history, a call made its out variant differs, as diff --from --to says: exir's
     * ToOutVarPass (exir/passes/__init__.py) gives the node the out variant's target and an
     * out kwarg made by memory.alloc. Across files (a .pte's calls are all out variants) what it
     * computes is compared */
    if (c->lineage && x->kind == LS_NODE_CALL && out_args(c->a, x) != out_args(c->b, y)) return LS_ALIGN_WHY_OUT_VARIANT;
    return x->kind == LS_NODE_PLACEHOLDER || same_args(c, x, y) ? LS_ALIGN_WHY_NONE : LS_ALIGN_WHY_ARGS;
}

/* ---- rows */

void ls_align_programs(const ls_program *a, const ls_program *b, ls_align_by by, ls_alignment *out)
{
    memset(out, 0, sizeof *out);
    uint32_t na = a->n_nodes, nb = b->n_nodes;
    int32_t *b_of_a = ls_malloc(sizeof *b_of_a * (na + 1)), *a_of_b = ls_malloc(sizeof *a_of_b * (nb + 1));
    for (uint32_t i = 0; i < na; i++) b_of_a[i] = -1;
    for (uint32_t j = 0; j < nb; j++) a_of_b[j] = -1;
    if (by == LS_ALIGN_BY_ID) {
        for (uint32_t i = 0; i < na; i++) {
            int32_t j = ls_program_pos(b, a->nodes[i]->id);
            if (j >= 0) {
                b_of_a[i] = j;
                a_of_b[j] = (int32_t)i;
            }
        }
    } else {
        match_by_identity(a, b, b_of_a, a_of_b);
    }
    /* the second program's unmatched nodes, each after the last matched node before it */
    int32_t *anchor = ls_malloc(sizeof *anchor * (nb + 1));
    uint32_t *after = ls_calloc(na + 2, sizeof *after); /* how many follow each a-position (+1: before all) */
    int32_t last = -1;
    for (uint32_t j = 0; j < nb; j++) {
        if (a_of_b[j] >= 0) last = a_of_b[j];
        else {
            anchor[j] = last;
            after[last + 1]++;
        }
    }
    uint32_t n = na;
    for (uint32_t i = 0; i <= na; i++) n += after[i];
    /* where each anchor's followers start among the rows */
    uint32_t *start = ls_malloc(sizeof *start * (na + 2));
    out->v = ls_malloc(sizeof *out->v * (n + 1));
    out->row_of_a = ls_malloc(sizeof *out->row_of_a * (na + 1));
    out->row_of_b = ls_malloc(sizeof *out->row_of_b * (nb + 1));
    uint32_t r = 0;
    start[0] = r;
    r += after[0];
    for (uint32_t i = 0; i < na; i++) {
        out->row_of_a[i] = r;
        out->v[r++] = (ls_align_row){(int32_t)i, b_of_a[i], LS_ALIGN_SAME, LS_ALIGN_WHY_NONE};
        start[i + 1] = r;
        r += after[i + 1];
    }
    for (uint32_t j = 0; j < nb; j++)
        if (a_of_b[j] < 0) {
            uint32_t row = start[anchor[j] + 1]++;
            out->v[row] = (ls_align_row){-1, (int32_t)j, LS_ALIGN_ONLY_B, LS_ALIGN_WHY_NONE};
        }
    out->n = n;
    cmp_ctx c = {a, b, b_of_a, by == LS_ALIGN_BY_ID};
    for (uint32_t k = 0; k < n; k++) {
        ls_align_row *row = &out->v[k];
        if (row->b >= 0) out->row_of_b[row->b] = k;
        if (row->a < 0) out->only_b++;
        else if (row->b < 0) {
            row->mark = LS_ALIGN_ONLY_A;
            out->only_a++;
        } else if ((row->why = (uint8_t)node_diff(&c, a->nodes[row->a], b->nodes[row->b])) != LS_ALIGN_WHY_NONE) {
            row->mark = LS_ALIGN_CHANGED;
            out->changed++;
        } else out->same++;
    }
    free(b_of_a);
    free(a_of_b);
    free(anchor);
    free(after);
    free(start);
}

void ls_alignment_free(ls_alignment *al)
{
    free(al->v);
    free(al->row_of_a);
    free(al->row_of_b);
    memset(al, 0, sizeof *al);
}

void ls_align_index_subs(const ls_program *p, ls_ptrmap *m)
{
    ls_ptrmap_free(m);
    for (uint32_t s = 0; p && s < p->n_subs; s++) {
        const ls_program *sp = p->subs[s].program;
        for (uint32_t i = 0; sp && i < sp->n_nodes; i++)
            if (sp->nodes[i]->id) ls_ptrmap_put(m, (const void *)(uintptr_t)sp->nodes[i]->id, (uintptr_t)p->subs[s].name);
    }
}

const char *ls_align_sub_holding(const ls_ptrmap *m, uint32_t id)
{
    uintptr_t v;
    return id && ls_ptrmap_get(m, (const void *)(uintptr_t)id, &v) ? (const char *)v : NULL;
}
