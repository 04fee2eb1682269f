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
 * torch does this with all-pairs checks over full downstream sets; here, per p1, every node
 * outside p1 that reaches it is marked once (a backward sweep from each node joining p1), so a
 * candidate is checked by looking at its own users: O(n) per surviving partition. A group that
 * re-enters itself through an outside node (a weight whose other reader feeds the GEMM) is
 * found once, up front. */
#include <stdlib.h>
#include <string.h>

#include "partition_internal.h"
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

typedef struct grouper {
    pt_round *r;
    uint32_t nparts;
    uint32_t *start, *member; /* members of each original partition (CSR), in graph order */
    int32_t *owner;           /* per position: the partition it is in now, or -1 */
    uint32_t *maxpos;         /* per partition: its last position */
    uint32_t *taint;          /* per position: p1 + 1 when it reaches p1 from outside */
    uint32_t *stack, sp;
    bool *merged;
    uint32_t *reenter_start, *reenter; /* per partition: outside users that reach back into it */
} grouper;

static void push(grouper *g, uint32_t pos)
{
    g->stack[g->sp++] = pos;
}

/* Marks every node outside p1 that reaches one of p1's members `from` (backward sweep). */
static void taint_from(grouper *g, uint32_t p1, const uint32_t *from, uint32_t nfrom)
{
    pt_round *r = g->r;
    for (uint32_t i = 0; i < nfrom; i++) push(g, from[i]);
    while (g->sp) {
        uint32_t x = g->stack[--g->sp];
        uint32_t k = pu_inputs(r->q->nodes[x], &r->ids, &r->ids_cap);
        for (uint32_t a = 0; a < k; a++) {
            int32_t y = pu_pos(&r->users, r->ids[a]);
            if (y < 0 || g->owner[y] == (int32_t)p1 || g->taint[y] == p1 + 1) continue;
            g->taint[y] = p1 + 1;
            push(g, (uint32_t)y);
        }
    }
}

static bool can_merge(const grouper *g, uint32_t p1, uint32_t p2)
{
    const pt_round *r = g->r;
    for (uint32_t m = g->start[p2]; m < g->start[p2 + 1]; m++) {
        uint32_t x = g->member[m];
        for (uint32_t u = r->users.off[x]; u < r->users.off[x + 1]; u++) {
            uint32_t up = r->users.pos[u];
            if (g->owner[up] == (int32_t)p1 || g->owner[up] == (int32_t)p2) continue;
            if (g->taint[up] == p1 + 1) return false; /* reaches p1 */
        }
    }
    for (uint32_t k = g->reenter_start[p2]; k < g->reenter_start[p2 + 1]; k++)
        if (g->owner[g->reenter[k]] != (int32_t)p1) return false; /* reaches p2 itself */
    return true;
}

/* Outside users of a group that reach back into it (only possible for groups of several
 * nodes): a forward sweep from each, bounded by the group's last position. */
static void find_reentries(grouper *g)
{
    pt_round *r = g->r;
    uint32_t *seen = ls_calloc(r->n ? r->n : 1, sizeof *seen), stamp = 0;
    LS_VEC(uint32_t) list = {0};
    g->reenter_start = ls_calloc(g->nparts + 1, sizeof *g->reenter_start);
    for (uint32_t p = 0; p < g->nparts; p++) {
        g->reenter_start[p] = list.n;
        if (g->start[p + 1] - g->start[p] < 2) continue;
        for (uint32_t m = g->start[p]; m < g->start[p + 1]; m++) {
            uint32_t x = g->member[m];
            for (uint32_t u = r->users.off[x]; u < r->users.off[x + 1]; u++) {
                uint32_t up = r->users.pos[u];
                if (g->owner[up] == (int32_t)p || up > g->maxpos[p]) continue;
                bool dup = false;
                for (uint32_t k = g->reenter_start[p]; k < list.n && !dup; k++) dup = list.v[k] == up;
                if (dup) continue;
                stamp++;
                bool back = false;
                g->sp = 0;
                push(g, up);
                seen[up] = stamp;
                while (g->sp && !back) {
                    uint32_t y = g->stack[--g->sp];
                    for (uint32_t v = r->users.off[y]; v < r->users.off[y + 1] && !back; v++) {
                        uint32_t z = r->users.pos[v];
                        if (g->owner[z] == (int32_t)p) back = true;
                        else if (z <= g->maxpos[p] && seen[z] != stamp) {
                            seen[z] = stamp;
                            push(g, z);
                        }
                    }
                }
                g->sp = 0;
                if (back) ls_vec_push(&list, up);
            }
        }
    }
    g->reenter_start[g->nparts] = list.n;
    g->reenter = list.v;
    free(seen);
}

void pt_group_partition(pt_round *r, pt_parts *ps)
{
    uint32_t n = r->n, n1 = n ? n : 1;
    dsj d = {ls_malloc(sizeof *d.parent * n1), ls_calloc(n1, sizeof *d.in)};
    build_groups(r, &d);

    /* _process_all_nodes: ids from the output side, a whole group at its last member */
    grouper g = {.r = r};
    g.owner = ls_malloc(sizeof *g.owner * n1);
    uint32_t *part_of_root = ls_malloc(sizeof *part_of_root * n1);
    for (uint32_t i = 0; i < n; i++) g.owner[i] = -1, part_of_root[i] = UINT32_MAX;
    for (uint32_t i = n; i-- > 0;) {
        if (!d.in[i]) continue;
        uint32_t root = dsj_find(&d, i);
        if (part_of_root[root] == UINT32_MAX) part_of_root[root] = g.nparts++;
        g.owner[i] = (int32_t)part_of_root[root];
    }
    uint32_t np1 = g.nparts + 1;
    g.start = ls_calloc(np1, sizeof *g.start);
    g.maxpos = ls_calloc(np1, sizeof *g.maxpos);
    for (uint32_t i = 0; i < n; i++)
        if (g.owner[i] >= 0) {
            g.start[g.owner[i] + 1]++;
            g.maxpos[g.owner[i]] = i;
        }
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

    g.taint = ls_calloc(n1, sizeof *g.taint);
    g.stack = ls_malloc(sizeof *g.stack * (n1 + 1));
    g.merged = ls_calloc(np1, sizeof *g.merged);
    find_reentries(&g);

    /* _merge_partitions */
    for (uint32_t p1 = 0; p1 < g.nparts; p1++) {
        if (g.merged[p1]) continue;
        taint_from(&g, p1, g.member + g.start[p1], g.start[p1 + 1] - g.start[p1]);
        for (uint32_t p2 = p1 + 1; p2 < g.nparts; p2++) {
            if (g.merged[p2] || !can_merge(&g, p1, p2)) continue;
            for (uint32_t m = g.start[p2]; m < g.start[p2 + 1]; m++) g.owner[g.member[m]] = (int32_t)p1;
            g.merged[p2] = true;
            taint_from(&g, p1, g.member + g.start[p2], g.start[p2 + 1] - g.start[p2]);
        }
    }

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
    free(g.maxpos);
    free(g.taint);
    free(g.stack);
    free(g.merged);
    free(g.reenter_start);
    free(g.reenter);
}
