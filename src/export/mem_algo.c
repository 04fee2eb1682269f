/* The memory planning algorithms of exir/memory_planning.py, on tensors already reduced to
 * (aligned size, lifetime) in the order collect_specs_from_nodes yields them (graph order of
 * first appearance):
 *
 * greedy (exir's default; greedy, pick_shared_obj, materialize_buffer):
 *   the tensors sorted by size, largest first; equal sizes in the order bisect.insort then
 *   reverse() leaves them (the later-yielded one first). Each goes into the first shared object
 *   (in creation order) none of whose tensors' lifetimes overlap its own, at offset 0; else
 *   into the first object where it fits above the tensors there that overlap it
 *   (_find_max_overlapping_allocations_offset: their largest end, when > 0, plus its size within
 *   the object's size); else into a new object of its size. Objects are laid out one after the
 *   other in creation order; the arena is their total, plus extra_padding.
 * naive: every tensor after the one before, in yield order.
 *
 * Lifetimes are inclusive node index ranges; two overlap unless one ends before the other
 * starts (_does_not_overlap). Objects keep their tensors' busy intervals merged and sorted, so
 * "is object j free over [s, e]" and "how high do the tensors overlapping x reach" are tree
 * searches; the scan over objects in creation order is exir's. */
#include <stdlib.h>
#include <string.h>

#include "export_internal.h"

/* Intervals [s, e] in treaps (one pool for every object): an object's merged busy intervals,
 * and its offset-0 tensors (pairwise disjoint: one goes at offset 0 only where the object is
 * free), each with its size and the largest size below it. Both are ordered by start, and
 * being disjoint, by end too. */
typedef struct tnode {
    uint32_t s, e;
    uint64_t size, max;
    uint32_t prio, l, r; /* 0: none (entry 0 of the pool is unused) */
} tnode;

typedef struct pool {
    LS_VEC(tnode) v;
    uint32_t seed;
} pool;

static uint32_t tnew(pool *P, uint32_t s, uint32_t e, uint64_t size)
{
    if (!P->v.n) ls_vec_push(&P->v, ((tnode){0}));
    P->seed = P->seed * 1103515245u + 12345u;
    tnode n = {s, e, size, size, P->seed >> 8, 0, 0};
    ls_vec_push(&P->v, n);
    return P->v.n - 1;
}

static void tfix(pool *P, uint32_t t)
{
    tnode *n = &P->v.v[t];
    n->max = n->size;
    if (n->l && P->v.v[n->l].max > n->max) n->max = P->v.v[n->l].max;
    if (n->r && P->v.v[n->r].max > n->max) n->max = P->v.v[n->r].max;
}

/* Splits t into starts < key (l) and starts >= key (r). */
static void tsplit(pool *P, uint32_t t, uint32_t key, uint32_t *l, uint32_t *r)
{
    if (!t) {
        *l = *r = 0;
        return;
    }
    if (P->v.v[t].s < key) {
        uint32_t a, b;
        tsplit(P, P->v.v[t].r, key, &a, &b);
        P->v.v[t].r = a;
        tfix(P, t);
        *l = t;
        *r = b;
    } else {
        uint32_t a, b;
        tsplit(P, P->v.v[t].l, key, &a, &b);
        P->v.v[t].l = b;
        tfix(P, t);
        *l = a;
        *r = t;
    }
}

static uint32_t tmerge(pool *P, uint32_t a, uint32_t b)
{
    if (!a || !b) return a ? a : b;
    if (P->v.v[a].prio > P->v.v[b].prio) {
        P->v.v[a].r = tmerge(P, P->v.v[a].r, b);
        tfix(P, a);
        return a;
    }
    P->v.v[b].l = tmerge(P, a, P->v.v[b].l);
    tfix(P, b);
    return b;
}

/* The entry with the largest start <= key, or 0. */
static uint32_t tfloor(const pool *P, uint32_t t, uint32_t key)
{
    uint32_t best = 0;
    while (t) {
        if (P->v.v[t].s <= key) {
            best = t;
            t = P->v.v[t].r;
        } else {
            t = P->v.v[t].l;
        }
    }
    return best;
}

/* The first entry (in order) whose end is >= key: ends grow with starts. 0 when none. */
static uint32_t tfirst_end(const pool *P, uint32_t t, uint32_t key)
{
    uint32_t best = 0;
    while (t) {
        if (P->v.v[t].e >= key) {
            best = t;
            t = P->v.v[t].l;
        } else {
            t = P->v.v[t].r;
        }
    }
    return best;
}

typedef struct object {
    uint64_t size, offset;
    uint32_t spans;          /* treap of merged busy intervals */
    uint32_t zeros;          /* treap of the tensors at offset 0 */
    LS_VEC(uint32_t) above;  /* tensors above offset 0 (few): scanned */
} object;

static bool overlaps(uint32_t s1, uint32_t e1, uint32_t s2, uint32_t e2)
{
    return !(e1 < s2 || s1 > e2);
}

/* Is object o busy somewhere in [s, e]? The busy interval starting last at or before e is the
 * only one that can reach s. */
static bool busy_in(const pool *P, const object *o, uint32_t s, uint32_t e)
{
    uint32_t f = tfloor(P, o->spans, e);
    return f && P->v.v[f].e >= s;
}

/* Adds [s, e] to o's busy intervals, merging those it touches: the intervals starting at or
 * before e + 1 and ending at or after s - 1, a run of the ordered treap. */
static void add_span(pool *P, object *o, uint32_t s, uint32_t e)
{
    uint32_t l, mid, r;
    tsplit(P, o->spans, e >= UINT32_MAX - 1 ? UINT32_MAX : e + 2, &l, &r);
    uint32_t first = tfirst_end(P, l, s ? s - 1 : 0);
    if (first) {
        uint32_t fs = P->v.v[first].s;
        tsplit(P, l, fs, &l, &mid);
        if (fs < s) s = fs;
        uint32_t last = tfloor(P, mid, UINT32_MAX);
        if (last && P->v.v[last].e > e) e = P->v.v[last].e;
    }
    o->spans = tmerge(P, tmerge(P, l, tnew(P, s, e, 0)), r);
}

static void hold(pool *P, object *o, lsx_mem_tensor *t, uint32_t i, uint64_t at)
{
    t[i].offset = at;
    if (at == 0) {
        uint32_t l, r;
        tsplit(P, o->zeros, t[i].first, &l, &r);
        o->zeros = tmerge(P, tmerge(P, l, tnew(P, t[i].first, t[i].last, t[i].size)), r);
    } else {
        ls_vec_push(&o->above, i);
    }
    add_span(P, o, t[i].first, t[i].last);
}

/* Largest end (offset + size) of the tensors in o whose lifetimes overlap x's; 0 when none
 * (_find_max_overlapping_allocations_offset). The offset-0 ones overlapping x are a run of the
 * ordered treap: those starting at or before x's end, from the first ending at or after its start. */
static uint64_t max_overlapping_end(pool *P, object *o, const lsx_mem_tensor *t, const lsx_mem_tensor *x)
{
    uint64_t m = 0;
    uint32_t l, r;
    tsplit(P, o->zeros, x->last == UINT32_MAX ? x->last : x->last + 1, &l, &r);
    uint32_t f = tfirst_end(P, l, x->first);
    if (f) {
        uint32_t a, b;
        tsplit(P, l, P->v.v[f].s, &a, &b);
        if (b) m = P->v.v[b].max;
        l = tmerge(P, a, b);
    }
    o->zeros = tmerge(P, l, r);
    for (uint32_t k = 0; k < o->above.n; k++) {
        const lsx_mem_tensor *a = &t[o->above.v[k]];
        if (overlaps(x->first, x->last, a->first, a->last) && a->offset + a->size > m) m = a->offset + a->size;
    }
    return m;
}

static int by_size(const void *pa, const void *pb)
{
    const lsx_mem_tensor *a = *(const lsx_mem_tensor *const *)pa, *b = *(const lsx_mem_tensor *const *)pb;
    if (a->size != b->size) return a->size > b->size ? -1 : 1;
    return a->order > b->order ? -1 : a->order < b->order; /* reverse() of a stable insort */
}

uint64_t lsx_mem_greedy(lsx_mem_tensor *t, uint32_t n, uint64_t extra_padding, uint32_t *n_objects)
{
    *n_objects = 0;
    if (!n) return 0; /* exir: no tensor to allocate gives [0, 0], without padding */
    lsx_mem_tensor **sorted = ls_malloc(sizeof *sorted * n);
    for (uint32_t i = 0; i < n; i++) sorted[i] = &t[i];
    qsort(sorted, n, sizeof *sorted, by_size);
    LS_VEC(object) objs = {0};
    pool P = {.seed = 2463534242u};
    for (uint32_t r = 0; r < n; r++) {
        lsx_mem_tensor *x = sorted[r];
        uint32_t xi = (uint32_t)(x - t);
        int32_t pick = -1;
        for (uint32_t j = 0; j < objs.n && pick < 0; j++)
            if (!busy_in(&P, &objs.v[j], x->first, x->last)) {
                pick = (int32_t)j;
                hold(&P, &objs.v[j], t, xi, 0);
            }
        for (uint32_t j = 0; j < objs.n && pick < 0; j++) {
            object *o = &objs.v[j];
            uint64_t at = max_overlapping_end(&P, o, t, x);
            if (at > 0 && at + x->size <= o->size) {
                pick = (int32_t)j;
                hold(&P, o, t, xi, at);
            }
        }
        if (pick < 0) {
            object o = {.size = x->size};
            ls_vec_push(&objs, o);
            pick = (int32_t)objs.n - 1;
            hold(&P, &objs.v[pick], t, xi, 0);
        }
        x->object = (uint32_t)pick;
    }
    uint64_t total = 0;
    for (uint32_t j = 0; j < objs.n; j++) {
        objs.v[j].offset = total;
        total += objs.v[j].size;
    }
    for (uint32_t i = 0; i < n; i++) t[i].offset += objs.v[t[i].object].offset;
    for (uint32_t j = 0; j < objs.n; j++) free(objs.v[j].above.v);
    free(P.v.v);
    *n_objects = objs.n;
    free(objs.v);
    free(sorted);
    return total + extra_padding;
}

uint64_t lsx_mem_naive(lsx_mem_tensor *t, uint32_t n)
{
    uint64_t total = 0;
    for (uint32_t i = 0; i < n; i++) {
        t[i].offset = total;
        t[i].object = i;
        total += t[i].size;
    }
    return total;
}
