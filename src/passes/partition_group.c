/* ExecuTorch's GroupBasedPartitioner (exir/backend/canonical_partitioners/group_partitioner.py),
 * fed by ConfigerationBasedPartitioner.get_matched_nodes_from_configs (config_partitioner.py),
 * as XnnpackPartitioner partitions.
 *
 * Groups: every supported node, in graph order, with the nodes its op entry takes along
 * (get_partition: a GEMM's constant weight and bias, the dq/q of a quantized pattern, a fused
 * activation) is united with them in a disjoint set; a constant already in some group is left
 * to that group ("partitioner infra copies constant data across partitions").
 *
 * Partitions (_process_all_nodes): nodes from the output side; the first unassigned member of a
 * group met makes the whole group a partition with the next id. Then (_merge_partitions) for
 * each partition p1 in id order, every later partition p2 not yet merged is merged into p1
 * unless a node outside both that uses a node of p2 reaches p1 ∪ p2 downstream
 * (_can_merge_partitions: only p2's external users are checked, as there). Merges keep p1's id,
 * so partitions are never renumbered: a lone chain is tag0, and independent regions merge
 * horizontally (kv_cache's XNNPACK partition is tag0).
 *
 * torch does this with full downstream sets (_DependencyViewer); here each node knows the
 * partition numbers it reaches downstream as a short interval list (one sweep from the output
 * side), so checking a candidate costs its outside users' lookups: about O(n + partitions²)
 * for the round, with n the nodes. */
#include <stdlib.h>
#include <string.h>

#include "partition_internal.h"
#include "partition_iset.h"
#include "rules_gemm.h"

typedef struct dsj {
    uint32_t *parent;
    bool *in;
} dsj;

static uint32_t dsj_find(dsj *d, uint32_t x)
{
    while (d->parent[x] != x) {
        d->parent[x] = d->parent[d->parent[x]];
        x = d->parent[x];
    }
    return x;
}

static void dsj_union(dsj *d, uint32_t x, uint32_t y)
{
    /* config_partitioner.py's DSJ.union: parent[find(x)] = find(y) */
    uint32_t a = dsj_find(d, x), b = dsj_find(d, y);
    if (a != b) d->parent[a] = b;
}

/* The nodes a supported node takes along, as positions (itself first). */
static uint32_t candidate(pt_round *r, uint32_t pos, uint32_t *out)
{
    const ls_node *n = r->q->nodes[pos];
    uint32_t k = 0;
    out[k++] = pos;
    pr_deps deps = {.n = 0};
    uint8_t flags = r->prof->ops[n->op->id].flags;
    const char *ignored;
    if (flags & LS_POP_GEMM) pr_gemm_deps(&r->view, n, &deps, &ignored);
    else if (flags & LS_POP_QUANT) pr_quant_deps(&r->view, n, &deps);
    for (uint32_t i = 0; i < deps.n; i++) {
        int32_t p = pu_pos(&r->users, deps.ids[i]);
        if (p >= 0) out[k++] = (uint32_t)p;
    }
    /* a node returning a tuple brings its getitems (XNNPACK's MaxDimConfig does; every op with
     * several results would leave its partition through them otherwise) */
    if (n->val_kind == LS_VAL_TENSORS && pu_nusers(&r->users, pos)) {
        bool all = true;
        for (uint32_t u = r->users.off[pos]; u < r->users.off[pos + 1] && all; u++) all = r->cls[r->users.pos[u]] & CLS_GETITEM;
        for (uint32_t u = r->users.off[pos]; all && u < r->users.off[pos + 1] && k < PR_MAX_DEPS + 8; u++) out[k++] = r->users.pos[u];
    }
    return k;
}

static void build_groups(pt_round *r, dsj *d)
{
    for (uint32_t i = 0; i < r->n; i++) d->parent[i] = i;
    uint32_t cand[PR_MAX_DEPS + 16];
    for (uint32_t i = 0; i < r->n; i++) {
        if (!pt_is_call(r, i) || (r->cls[i] & CLS_GETITEM) || r->reason[i] != LS_WHY_NONE) continue;
        uint32_t k = candidate(r, i, cand), first = UINT32_MAX;
        for (uint32_t c = 0; c < k; c++) {
            uint32_t p = cand[c];
            if (d->in[p] && pr_is_const_data(&r->view, r->q->nodes[p])) continue;
            d->in[p] = true;
            if (first == UINT32_MAX) first = p;
            else dsj_union(d, first, p);
        }
    }
}

/* What each node reaches downstream, as the original partition numbers of the nodes below it
 * (a sweep from the output side; interval sets, see partition_iset.h). */
static iset *reach_sets(pt_round *r, const int32_t *part)
{
    iset *reach = ls_calloc(r->n ? r->n : 1, sizeof *reach), scratch = {0};
    for (uint32_t i = r->n; i-- > 0;)
        for (uint32_t u = r->users.off[i]; u < r->users.off[i + 1]; u++) {
            uint32_t up = r->users.pos[u];
            int32_t p = part[up];
            iset_merge(&reach[i], &reach[up], p >= 0 ? (uint32_t)p : 0, p >= 0 ? (uint32_t)p + 1 : 0, &scratch);
        }
    iset_free(&scratch);
    return reach;
}

void pt_group_partition(pt_round *r, pt_parts *ps)
{
    uint32_t n = r->n, n1 = n ? n : 1;
    dsj d = {ls_malloc(sizeof *d.parent * n1), ls_calloc(n1, sizeof *d.in)};
    build_groups(r, &d);

    /* _process_all_nodes: ids from the output side, a whole group at its last member */
    struct {
        uint32_t nparts;
        uint32_t *start, *member; /* members of each original partition (CSR), in graph order */
        int32_t *owner, *orig;    /* per position: the partition it is in now / was made in, or -1 */
        bool *merged;
    } g = {0};
    g.owner = ls_malloc(sizeof *g.owner * n1);
    g.orig = ls_malloc(sizeof *g.orig * n1);
    uint32_t *part_of_root = ls_malloc(sizeof *part_of_root * n1);
    for (uint32_t i = 0; i < n; i++) g.owner[i] = -1, part_of_root[i] = UINT32_MAX;
    for (uint32_t i = n; i-- > 0;) {
        if (!d.in[i]) continue;
        uint32_t root = dsj_find(&d, i);
        if (part_of_root[root] == UINT32_MAX) part_of_root[root] = g.nparts++;
        g.owner[i] = (int32_t)part_of_root[root];
    }
    memcpy(g.orig, g.owner, sizeof *g.orig * n);
    uint32_t np1 = g.nparts + 1;
    g.start = ls_calloc(np1, sizeof *g.start);
    for (uint32_t i = 0; i < n; i++)
        if (g.owner[i] >= 0) g.start[g.owner[i] + 1]++;
    for (uint32_t p = 0; p < g.nparts; p++) g.start[p + 1] += g.start[p];
    g.member = ls_malloc(sizeof *g.member * (g.start[g.nparts] ? g.start[g.nparts] : 1));
    uint32_t *fill = ls_malloc(sizeof *fill * np1);
    memcpy(fill, g.start, sizeof *fill * np1);
    for (uint32_t i = 0; i < n; i++)
        if (g.owner[i] >= 0) g.member[fill[g.owner[i]]++] = i;
    free(fill);
    free(part_of_root);
    free(d.parent);
    free(d.in);

    /* _merge_partitions: p2 joins p1 unless a node outside both that uses a node of p2 reaches
     * a node of either (_can_merge_partitions): its reach set meets p1's merged numbers or holds
     * p2. A round p1 looks only at the p2 that can pass: one that reaches p1 must do so through
     * an edge straight into p1's merged nodes (any other path leaves through a node outside, which
     * then reaches p1), so it is queued when the node it feeds joins p1; one that does not reach
     * p1 is found from the gaps of what p2 reaches (events over p1). The rounds then cost what
     * they merge, not all pairs: a chain of partitions split by CPU nodes checks each edge once. */
    iset *reach = reach_sets(r, g.orig);
    bool *merged = ls_calloc(np1, sizeof *merged);
    iset in_p1 = {0}, scratch = {0}, reached = {0};
    LS_VEC(uint32_t) ev_at = {0}, ev_part = {0}; /* a gap [a, b) of p2: +p2 at a, -p2 (bit 31) at b */
    for (uint32_t p2 = 0; p2 < g.nparts; p2++) {
        reached.n = 0;
        for (uint32_t m = g.start[p2]; m < g.start[p2 + 1]; m++) iset_merge(&reached, &reach[g.member[m]], 0, 0, &scratch);
        uint32_t at = 0;
        for (uint32_t k = 0; k <= reached.n && at < p2; k++) {
            uint32_t end = k < reached.n ? (reached.v[k].lo < p2 ? reached.v[k].lo : p2) : p2;
            if (end > at) {
                ls_vec_push(&ev_at, at);
                ls_vec_push(&ev_part, p2);
                ls_vec_push(&ev_at, end);
                ls_vec_push(&ev_part, p2 | 0x80000000u);
            }
            if (k < reached.n && reached.v[k].hi > at) at = reached.v[k].hi;
        }
    }
    /* events by position (counting sort) */
    uint32_t *ev_start = ls_calloc(np1 + 1, sizeof *ev_start), *ev = ls_malloc(sizeof *ev * (ev_at.n ? ev_at.n : 1));
    for (uint32_t e = 0; e < ev_at.n; e++) ev_start[ev_at.v[e] + 1]++;
    for (uint32_t t = 0; t < np1; t++) ev_start[t + 1] += ev_start[t];
    uint32_t *ev_fill = ls_malloc(sizeof *ev_fill * (np1 + 1));
    memcpy(ev_fill, ev_start, sizeof *ev_fill * (np1 + 1));
    for (uint32_t e = 0; e < ev_at.n; e++) ev[ev_fill[ev_at.v[e]]++] = ev_part.v[e];
    uint32_t words = (g.nparts + 63) / 64 + 1;
    uint64_t *active = ls_calloc(words, sizeof *active), *queued = ls_calloc(words, sizeof *queued);
    LS_VEC(uint32_t) touched = {0}; /* the queued bits to clear after a round */
    for (uint32_t p1 = 0; p1 < g.nparts; p1++) {
        for (uint32_t e = ev_start[p1]; e < ev_start[p1 + 1]; e++) {
            uint32_t q = ev[e] & 0x7fffffffu;
            if (ev[e] & 0x80000000u) active[q / 64] &= ~((uint64_t)1 << (q % 64));
            else active[q / 64] |= (uint64_t)1 << (q % 64);
        }
        if (merged[p1]) continue;
        in_p1.n = 0;
        iset_merge(&in_p1, NULL, p1, p1 + 1, &scratch);
        uint32_t joined = p1; /* the partition whose producers to queue, UINT32_MAX for none */
        for (uint32_t cur = p1;;) {
            /* queue the partitions feeding what just joined p1 (ids past the candidate at hand) */
            for (uint32_t m = joined != UINT32_MAX ? g.start[joined] : 0; joined != UINT32_MAX && m < g.start[joined + 1]; m++) {
                uint32_t k = pu_inputs(r->q->nodes[g.member[m]], &r->ids, &r->ids_cap);
                for (uint32_t a = 0; a < k; a++) {
                    int32_t y = pu_pos(&r->users, r->ids[a]);
                    int32_t q = y >= 0 ? g.orig[y] : -1;
                    if (q <= (int32_t)cur || merged[q] || (queued[q / 64] >> (q % 64) & 1)) continue;
                    queued[q / 64] |= (uint64_t)1 << (q % 64);
                    ls_vec_push(&touched, (uint32_t)q);
                }
            }
            /* the next candidate: the first queued or active partition after cur */
            uint32_t p2 = UINT32_MAX;
            for (uint32_t w = (cur + 1) / 64; w < words && p2 == UINT32_MAX; w++) {
                uint64_t bits = active[w] | queued[w];
                if (w == (cur + 1) / 64) bits &= ~(uint64_t)0 << ((cur + 1) % 64);
                while (bits && p2 == UINT32_MAX) {
                    uint32_t c = w * 64 + (uint32_t)__builtin_ctzll(bits);
                    bits &= bits - 1;
                    if (c < g.nparts && !merged[c]) p2 = c;
                }
            }
            if (p2 == UINT32_MAX) break;
            cur = p2;
            bool ok = true;
            for (uint32_t m = g.start[p2]; m < g.start[p2 + 1] && ok; m++) {
                uint32_t x = g.member[m];
                for (uint32_t u = r->users.off[x]; u < r->users.off[x + 1] && ok; u++) {
                    uint32_t up = r->users.pos[u];
                    if (g.owner[up] == (int32_t)p1 || g.orig[up] == (int32_t)p2) continue;
                    ok = !iset_has(&reach[up], p2) && !iset_meets(&reach[up], &in_p1);
                }
            }
            joined = ok ? p2 : UINT32_MAX;
            if (!ok) continue;
            for (uint32_t m = g.start[p2]; m < g.start[p2 + 1]; m++) g.owner[g.member[m]] = (int32_t)p1;
            merged[p2] = true;
            iset_merge(&in_p1, NULL, p2, p2 + 1, &scratch);
        }
        for (uint32_t t = 0; t < touched.n; t++) queued[touched.v[t] / 64] &= ~((uint64_t)1 << (touched.v[t] % 64));
        touched.n = 0;
    }
    for (uint32_t i = 0; i < n; i++) iset_free(&reach[i]);
    free(reach);
    free(active);
    free(queued);
    free(touched.v);
    free(ev);
    free(ev_start);
    free(ev_fill);
    free(ev_at.v);
    free(ev_part.v);
    iset_free(&in_p1);
    iset_free(&reached);
    iset_free(&scratch);
    g.merged = merged;

    /* the surviving partitions, in id order, keep their ids */
    int32_t *index = ls_malloc(sizeof *index * np1);
    for (uint32_t p = 0; p < g.nparts; p++) index[p] = g.merged[p] ? -1 : (int32_t)pt_new_part(ps, p);
    for (uint32_t i = 0; i < n; i++) {
        r->grp[i] = g.owner[i] >= 0 ? index[g.owner[i]] : -1;
        if (r->grp[i] >= 0) ps->v[r->grp[i]].size++;
    }
    free(index);
    free(g.owner);
    free(g.start);
    free(g.member);
    free(g.orig);
    free(g.merged);
}
