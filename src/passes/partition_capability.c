/* torch's CapabilityBasedPartitioner (torch/fx/passes/infra/partitioner.py, exir-semantics
 * §4.2), as Core ML, MLX, Vulkan, QNN and the bundled profile partition.
 *
 * CapabilityBasedPartitioner visits nodes from the output side; every supported node gets the
 * next partition id and is merged into the first partition (in creation order) it can join
 * without forming a cycle; the merged partition keeps the id of the larger side, the new one
 * on a tie (so a chain of six adds is tag1). torch tries every partition at every node, which
 * is quadratic; here each node asks one question instead: which partitions can it reach
 * through a node outside them? Those sets are kept as interval lists over partition creation
 * numbers (a node reaches a contiguous run of the partitions below it in practice), so the
 * round stays linear in the program. */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "partition_internal.h"
#include "partition_iset.h"

uint32_t pt_new_part(pt_parts *ps, uint32_t torch_id)
{
    if (ps->n == ps->cap) {
        ps->cap = ps->cap ? ps->cap * 2 : 16;
        ps->v = ls_realloc(ps->v, sizeof *ps->v * ps->cap);
    }
    ps->v[ps->n].torch_id = torch_id;
    ps->v[ps->n].size = 0;
    return ps->n++;
}

static void join(pt_parts *ps, uint32_t g, uint32_t new_id)
{
    /* torch merges the new one-node partition with g: the larger keeps its id, a tie keeps
     * the new one's */
    if (ps->v[g].size == 1) ps->v[g].torch_id = new_id;
    ps->v[g].size++;
}

/* Greedy grouping; fills r->grp. Returns the partitions. */
static void propose(pt_round *r, pt_parts *ps)
{
    uint32_t n = r->n;
    iset *reach = ls_calloc(n ? n : 1, sizeof *reach); /* per unassigned call: partitions it reaches */
    iset *preach = NULL;                                /* per partition */
    uint32_t preach_cap = 0;
    /* a node's set is read when its producers are visited; the earliest producer ends it */
    uint32_t *die_head = ls_malloc(sizeof *die_head * (n ? n : 1));
    uint32_t *die_next = ls_malloc(sizeof *die_next * (n ? n : 1));
    bool *read_later = ls_calloc(n ? n : 1, sizeof *read_later);
    memset(die_head, 0xff, sizeof *die_head * (n ? n : 1));
    LS_VEC(uint32_t) live = {0};
    for (uint32_t i = 0; i < n; i++) {
        die_next[i] = UINT32_MAX;
        if (!pt_is_call(r, i)) continue;
        uint32_t k = pu_inputs(r->q->nodes[i], &r->ids, &r->ids_cap), first = UINT32_MAX;
        for (uint32_t a = 0; a < k; a++) {
            int32_t pos = pu_pos(&r->users, r->ids[a]);
            if (pos >= 0 && pt_is_call(r, (uint32_t)pos) && (uint32_t)pos < first) first = (uint32_t)pos;
        }
        if (first != UINT32_MAX) {
            die_next[i] = die_head[first];
            die_head[first] = i;
            read_later[i] = true;
        }
    }
    uint32_t created = 0, compact_at = 64;
    iset via = {0}, direct = {0}, scratch = {0};
    for (uint32_t i = n; i-- > 0;) {
        r->grp[i] = -1;
        if (!pt_is_call(r, i)) continue;
        /* partitions reachable from this node through something outside them, and the ones
         * its users are in */
        direct.n = 0;
        for (uint32_t u = r->users.off[i]; u < r->users.off[i + 1]; u++) {
            uint32_t up = r->users.pos[u];
            if (!pt_is_call(r, up)) continue;
            if (r->grp[up] >= 0) {
                uint32_t g = (uint32_t)r->grp[up];
                iset_merge(&direct, NULL, g, g + 1, &scratch);
                iset_merge(&via, &preach[g], 0, 0, &scratch);
            } else {
                iset_merge(&via, &reach[up], 0, 0, &scratch);
            }
        }
        bool placed = false;
        if (r->reason[i] == LS_WHY_NONE) {
            uint32_t my_id = created++;
            uint32_t g = iset_first_gap(&via, ps->n);
            if (r->prof->single_partition && ps->n && g != 0) {
                r->reason[i] = LS_WHY_CYCLE;
                r->detail[i] = ls_internf("joining `%s%u` would form a cycle", r->prof->tag_prefix, ps->v[0].torch_id);
            } else if (g < ps->n) {
                r->grp[i] = (int32_t)g;
                join(ps, g, my_id);
                placed = true;
                /* g now also reaches what this node reaches: tell everyone who reaches g */
                iset add = {0};
                iset_merge(&add, &via, 0, 0, &scratch);
                iset_merge(&add, &direct, 0, 0, &scratch);
                iset without = {0};
                for (uint32_t t = 0; t < add.n; t++) {
                    if (add.v[t].lo <= g && g < add.v[t].hi) {
                        iset_merge(&without, NULL, add.v[t].lo, g, &scratch);
                        iset_merge(&without, NULL, g + 1, add.v[t].hi, &scratch);
                    } else {
                        iset_merge(&without, NULL, add.v[t].lo, add.v[t].hi, &scratch);
                    }
                }
                uint64_t before = iset_count(&preach[g]);
                iset_merge(&preach[g], &without, 0, 0, &scratch);
                if (iset_count(&preach[g]) != before) {
                    for (uint32_t h = 0; h < ps->n; h++)
                        if (h != g && iset_has(&preach[h], g)) iset_merge(&preach[h], &without, 0, 0, &scratch);
                    for (uint32_t l = 0; l < live.n; l++)
                        if (iset_has(&reach[live.v[l]], g)) iset_merge(&reach[live.v[l]], &without, 0, 0, &scratch);
                }
                iset_free(&add);
                iset_free(&without);
            } else {
                uint32_t ng = pt_new_part(ps, my_id);
                if (ps->n > preach_cap) {
                    uint32_t old = preach_cap;
                    preach_cap = ps->cap;
                    preach = ls_realloc(preach, sizeof *preach * preach_cap);
                    memset(preach + old, 0, sizeof *preach * (preach_cap - old));
                }
                r->grp[i] = (int32_t)ng;
                join(ps, ng, my_id);
                iset_merge(&preach[ng], &via, 0, 0, &scratch);
                iset_merge(&preach[ng], &direct, 0, 0, &scratch);
                placed = true;
            }
        }
        if (!placed && read_later[i]) {
            iset_merge(&reach[i], &via, 0, 0, &scratch);
            iset_merge(&reach[i], &direct, 0, 0, &scratch);
            ls_vec_push(&live, i);
        }
        via.n = 0; /* keep the buffers */
        /* sets nobody reads any more */
        for (uint32_t d = die_head[i]; d != UINT32_MAX; d = die_next[d]) iset_free(&reach[d]);
        if (live.n > compact_at) { /* amortised: only when the list doubled */
            uint32_t w = 0;
            for (uint32_t l = 0; l < live.n; l++)
                if (reach[live.v[l]].n) live.v[w++] = live.v[l];
            live.n = w;
            compact_at = w * 2 > 64 ? w * 2 : 64;
        }
    }
    iset_free(&via);
    iset_free(&direct);
    iset_free(&scratch);
    for (uint32_t i = 0; i < n; i++) iset_free(&reach[i]);
    for (uint32_t g = 0; g < ps->n; g++) iset_free(&preach[g]);
    free(reach);
    free(preach);
    free(die_head);
    free(die_next);
    free(read_later);
    free(live.v);
}

/* torch's post-pass: the getitems of a node whose users are all getitems follow the node. */
static void getitems_follow(pt_round *r, pt_parts *ps)
{
    for (bool changed = true; changed;) {
        changed = false;
        for (uint32_t i = 0; i < r->n; i++) {
            uint32_t nu = pu_nusers(&r->users, i);
            if (!nu) continue;
            bool all = true;
            for (uint32_t u = r->users.off[i]; u < r->users.off[i + 1] && all; u++)
                all = r->cls[r->users.pos[u]] & CLS_GETITEM;
            if (!all) continue;
            for (uint32_t u = r->users.off[i]; u < r->users.off[i + 1]; u++) {
                uint32_t up = r->users.pos[u];
                if (r->grp[up] == r->grp[i]) continue;
                if (r->grp[up] >= 0) ps->v[r->grp[up]].size--;
                if (r->grp[i] >= 0) ps->v[r->grp[i]].size++;
                r->grp[up] = r->grp[i];
                changed = true;
            }
        }
    }
}

/* The partitions contracted to single vertices must form a DAG (Kahn's algorithm). */
static bool acyclic(const pt_round *r, uint32_t nparts)
{
    uint32_t nv = r->n + nparts;
    uint32_t *indeg = ls_calloc(nv ? nv : 1, sizeof *indeg);
    LS_VEC(uint32_t) edges_from = {0};
    LS_VEC(uint32_t) edges_to = {0};
    for (uint32_t i = 0; i < r->n; i++) {
        uint32_t a = r->grp[i] >= 0 ? r->n + (uint32_t)r->grp[i] : i;
        for (uint32_t u = r->users.off[i]; u < r->users.off[i + 1]; u++) {
            uint32_t up = r->users.pos[u];
            uint32_t b = r->grp[up] >= 0 ? r->n + (uint32_t)r->grp[up] : up;
            if (a == b) continue;
            ls_vec_push(&edges_from, a);
            ls_vec_push(&edges_to, b);
            indeg[b]++;
        }
    }
    uint32_t *off, *adj;
    pu_csr(nv, edges_from.v, edges_to.v, edges_from.n, &off, &adj);
    uint32_t *queue = ls_malloc(sizeof *queue * (nv ? nv : 1));
    uint32_t head = 0, tail = 0, done = 0;
    bool *exists = ls_calloc(nv ? nv : 1, sizeof *exists);
    for (uint32_t i = 0; i < r->n; i++) exists[r->grp[i] >= 0 ? r->n + (uint32_t)r->grp[i] : i] = true;
    uint32_t total = 0;
    for (uint32_t v = 0; v < nv; v++)
        if (exists[v]) {
            total++;
            if (!indeg[v]) queue[tail++] = v;
        }
    while (head < tail) {
        uint32_t v = queue[head++];
        done++;
        for (uint32_t e = off[v]; e < off[v + 1]; e++)
            if (--indeg[adj[e]] == 0) queue[tail++] = adj[e];
    }
    free(indeg);
    free(edges_from.v);
    free(edges_to.v);
    free(off);
    free(adj);
    free(queue);
    free(exists);
    return done == total;
}

/* Fallback when the greedy grouping formed a cycle (it should not): group supported nodes by
 * the number of unsupported ops below them, which is always acyclic. */
static void propose_by_level(pt_round *r, pt_parts *ps)
{
    uint32_t *level = ls_calloc(r->n ? r->n : 1, sizeof *level);
    pu_map part_of_level = {0};
    ps->n = 0;
    uint32_t created = 0;
    for (uint32_t i = r->n; i-- > 0;) {
        r->grp[i] = -1;
        if (!pt_is_call(r, i)) continue;
        for (uint32_t u = r->users.off[i]; u < r->users.off[i + 1]; u++) {
            uint32_t up = r->users.pos[u];
            if (!pt_is_call(r, up)) continue;
            uint32_t l = level[up] + (r->grp[up] < 0 ? 1u : 0u);
            if (l > level[i]) level[i] = l;
        }
        if (r->reason[i] != LS_WHY_NONE) continue;
        uint32_t my_id = created++, g;
        /* levels as keys: offset by one so level 0 is not a NULL key */
        if (!pu_map_get(&part_of_level, (const void *)(uintptr_t)(level[i] + 1), &g)) {
            g = pt_new_part(ps, my_id);
            pu_map_put(&part_of_level, (const void *)(uintptr_t)(level[i] + 1), g);
        }
        r->grp[i] = (int32_t)g;
        join(ps, g, my_id);
    }
    pu_map_free(&part_of_level);
    free(level);
}

void pt_capability_partition(pt_round *r, pt_parts *ps, ls_pass_ctx *ctx)
{
    propose(r, ps);
    getitems_follow(r, ps);
    if (!acyclic(r, ps->n)) {
        propose_by_level(r, ps);
        ls_report_add(ctx->report, NULL, NULL, "the partitions grouped as torch would form a cycle; grouped by level instead");
    }
}
