/* partition: one round of capability-based partitioning for one backend, as ExecuTorch's
 * partitioners do it with torch's CapabilityBasedPartitioner (exir-semantics §3, §4), then
 * tag_constant_data and, for a backend with state, tag_mutated_buffer.
 *
 * CapabilityBasedPartitioner visits nodes from the output side; every supported node gets the
 * next partition id and is merged into the first partition (in creation order) it can join
 * without forming a cycle; the merged partition keeps the id of the larger side, the new one
 * on a tie (so a chain of six adds is tag1). torch tries every partition at every node, which
 * is quadratic; here each node asks one question instead: which partitions can it reach
 * through a node outside them? Those sets are kept as interval lists over partition creation
 * numbers (a node reaches a contiguous run of the partitions below it in practice), so the
 * round stays linear in the program. Every node left on the CPU records why. */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "delegation.h"
#include "pass_util.h"
#include "passes.h"

/* ---- sets of partition numbers as sorted, disjoint, non-touching intervals [lo, hi) */
typedef struct ivl {
    uint32_t lo, hi;
} ivl;
typedef struct iset {
    ivl *v;
    uint32_t n, cap;
} iset;

static void iset_free(iset *s)
{
    free(s->v);
    s->v = NULL;
    s->n = s->cap = 0;
}

static bool iset_has(const iset *s, uint32_t x)
{
    uint32_t lo = 0, hi = s->n;
    while (lo < hi) {
        uint32_t mid = (lo + hi) / 2;
        if (s->v[mid].hi <= x) lo = mid + 1;
        else if (s->v[mid].lo > x) hi = mid;
        else return true;
    }
    return false;
}

static uint64_t iset_count(const iset *s)
{
    uint64_t c = 0;
    for (uint32_t i = 0; i < s->n; i++) c += s->v[i].hi - s->v[i].lo;
    return c;
}

static void iset_reserve(iset *s, uint32_t want)
{
    if (want <= s->cap) return;
    uint32_t nc = s->cap ? s->cap : 4;
    while (nc < want) nc *= 2;
    s->v = ls_realloc(s->v, sizeof *s->v * nc);
    s->cap = nc;
}

/* dst := dst ∪ src ∪ [lo, hi) (lo == hi for none); scratch holds the merge (no allocation
 * once it is big enough, so the partitioner does not call malloc per edge). */
static void iset_merge(iset *dst, const iset *src, uint32_t lo, uint32_t hi, iset *scratch)
{
    uint32_t ns = src ? src->n : 0;
    if (!ns && lo >= hi) return;
    if (!dst->n && ns && lo >= hi) { /* a plain copy */
        iset_reserve(dst, ns);
        memcpy(dst->v, src->v, sizeof *dst->v * ns);
        dst->n = ns;
        return;
    }
    ivl extra = {lo, hi};
    iset_reserve(scratch, dst->n + ns + 1);
    ivl *out = scratch->v;
    uint32_t n = 0, i = 0, j = 0;
    bool extra_done = lo >= hi;
    for (;;) {
        const ivl *a = i < dst->n ? &dst->v[i] : NULL;
        const ivl *b = j < ns ? &src->v[j] : NULL;
        const ivl *next = a;
        if (b && (!next || b->lo < next->lo)) next = b;
        if (!extra_done && (!next || extra.lo < next->lo)) next = &extra;
        if (!next) break;
        if (next == a) i++;
        else if (next == b) j++;
        else extra_done = true;
        if (n && out[n - 1].hi >= next->lo) {
            if (next->hi > out[n - 1].hi) out[n - 1].hi = next->hi;
        } else {
            out[n++] = *next;
        }
    }
    iset_reserve(dst, n);
    memcpy(dst->v, out, sizeof *out * n);
    dst->n = n;
}

/* The smallest number in [0, limit) not in s, or limit. */
static uint32_t iset_first_gap(const iset *s, uint32_t limit)
{
    uint32_t x = 0;
    for (uint32_t i = 0; i < s->n && s->v[i].lo <= x; i++)
        if (s->v[i].hi > x) x = s->v[i].hi;
    return x < limit ? x : limit;
}

/* ---- what the backend supports */

typedef struct round {
    const ls_profile *prof;
    ls_program *q;
    ls_sig sig;
    pu_users users;
    uint32_t n;
    uint8_t *reason;          /* per position: LS_WHY_NONE when supported */
    const char **detail;      /* per position */
    int32_t *grp;             /* per position: partition number or -1 */
    uint8_t *cls;             /* per position: CLS_* (read once, so later sweeps skip the nodes) */
    uint16_t *op;             /* per position: the op id of a call with a known op, else LS_OP_COUNT */
    uint32_t *ids, ids_cap;   /* scratch */
} round;

enum { CLS_CALL = 1, CLS_COMPUTE = 2, CLS_GETITEM = 4, CLS_PLACEHOLDER = 8 };

static const ls_node *producer(const round *r, uint32_t id)
{
    int32_t pos = pu_pos(&r->users, id);
    return pos >= 0 ? r->q->nodes[pos] : NULL;
}

static bool mask_values(const round *r, const ls_node *m, int64_t *trues, const char **detail)
{
    const ls_input_spec *s = ls_sig_spec(&r->sig, r->q, m);
    const ls_named_tensor *d = ls_sig_data(&r->sig, r->q, s);
    if (!d || !d->t) {
        *detail = "the mask's values are not loaded";
        return false;
    }
    *trues = 0;
    for (int64_t i = 0; i < d->t->numel; i++) *trues += ls_tensor_get_i64(d->t, i) != 0;
    return true;
}

/* exir-semantics §8.4: which boolean masks the backend may fold to their positions. */
static ls_cpu_reason check_mask(const round *r, const ls_node *n, uint32_t *mask_id, const char **detail)
{
    *mask_id = 0;
    if (n->nargs < 2 || n->args[1].kind != LS_ARG_OPT_NODES) return LS_WHY_NONE;
    const ls_arg *ix = &n->args[1];
    uint32_t given = 0;
    for (uint32_t k = 0; k < ix->n; k++) {
        if (!ix->v.nodes[k]) continue;
        given++;
        const ls_tmeta *m = ls_node_tval(producer(r, ix->v.nodes[k]));
        if (m && m->dtype == LS_DT_BOOL && !*mask_id) *mask_id = ix->v.nodes[k];
    }
    if (!*mask_id) return LS_WHY_NONE;
    const ls_node *m = producer(r, *mask_id);
    if (given > 1) return LS_WHY_MASK_OTHER_INDEX;
    if (!m || m->kind != LS_NODE_PLACEHOLDER) return LS_WHY_MASK_COMPUTED;
    const ls_input_spec *s = ls_sig_spec(&r->sig, r->q, m);
    if (!s || !ls_input_kind_holds_data(s->kind)) return LS_WHY_MASK_INPUT;
    if (ls_sig_is_mutated(&r->sig, s)) return LS_WHY_MASK_MUTATED;
    /* parameters and persistent buffers are fake tensors while ExecuTorch partitions */
    if (ls_input_in_state(s->kind, s->persistent)) return LS_WHY_MASK_PARAMETER;
    int64_t trues;
    if (!mask_values(r, m, &trues, detail)) return LS_WHY_MASK_PARAMETER;
    if (trues == 0) return LS_WHY_MASK_ALL_FALSE;
    return LS_WHY_NONE;
}

static ls_cpu_reason dtype_reason(ls_dtype d, uint32_t allowed, const char **detail)
{
    if (d == LS_DT_UNKNOWN || (allowed & LS_DTYPE_BIT(d))) return LS_WHY_NONE;
    *detail = ls_internf("%s not supported", ls_dtype_name(d));
    return LS_WHY_DTYPE;
}

static ls_cpu_reason check_node(round *r, const ls_node *n, const char **detail)
{
    *detail = NULL;
    if (!n->op) {
        *detail = n->reason == LS_WHY_UNKNOWN_OP ? n->reason_detail : ls_internf("%s is not in lowerscope's operator table", n->target ? n->target : "?");
        return LS_WHY_UNKNOWN_OP;
    }
    uint32_t allowed = ls_profile_dtypes(r->prof, n->op);
    if (!allowed) return LS_WHY_OP_UNSUPPORTED;
    uint32_t mask_id = 0;
    if (n->op->id == LS_OP_index_Tensor && r->prof->fold_masks) {
        ls_cpu_reason why = check_mask(r, n, &mask_id, detail);
        if (why != LS_WHY_NONE) return why;
    }
    uint32_t k = pu_inputs(n, &r->ids, &r->ids_cap);
    for (uint32_t i = 0; i < k; i++) {
        if (r->ids[i] == mask_id) continue; /* folded to int64 positions */
        const ls_node *src = producer(r, r->ids[i]);
        if (!src || src->val_kind != LS_VAL_TENSOR) continue;
        for (uint16_t v = 0; v < src->nvals; v++) {
            ls_cpu_reason why = dtype_reason(src->vals[v].dtype, allowed, detail);
            if (why != LS_WHY_NONE) return why;
        }
    }
    if (n->val_kind == LS_VAL_TENSOR || n->val_kind == LS_VAL_TENSORS)
        for (uint16_t v = 0; v < n->nvals; v++) {
            ls_cpu_reason why = dtype_reason(n->vals[v].dtype, allowed, detail);
            if (why != LS_WHY_NONE) return why;
        }
    return LS_WHY_NONE;
}

/* ---- the partitioner */

typedef struct part {
    uint32_t torch_id; /* the id CapabilityBasedPartitioner would give it */
    uint32_t size;
} part;

typedef struct parts {
    part *v;
    uint32_t n, cap;
} parts;

static uint32_t new_part(parts *ps, uint32_t torch_id)
{
    if (ps->n == ps->cap) {
        ps->cap = ps->cap ? ps->cap * 2 : 16;
        ps->v = ls_realloc(ps->v, sizeof *ps->v * ps->cap);
    }
    ps->v[ps->n].torch_id = torch_id;
    ps->v[ps->n].size = 0;
    return ps->n++;
}

static void join(parts *ps, uint32_t g, uint32_t new_id)
{
    /* torch merges the new one-node partition with g: the larger keeps its id, a tie keeps
     * the new one's */
    if (ps->v[g].size == 1) ps->v[g].torch_id = new_id;
    ps->v[g].size++;
}

static bool is_call(const round *r, uint32_t pos)
{
    return r->cls[pos] & CLS_CALL;
}

/* Greedy grouping; fills r->grp. Returns the partitions. */
static void propose(round *r, parts *ps)
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
        if (!is_call(r, i)) continue;
        uint32_t k = pu_inputs(r->q->nodes[i], &r->ids, &r->ids_cap), first = UINT32_MAX;
        for (uint32_t a = 0; a < k; a++) {
            int32_t pos = pu_pos(&r->users, r->ids[a]);
            if (pos >= 0 && is_call(r, (uint32_t)pos) && (uint32_t)pos < first) first = (uint32_t)pos;
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
        if (!is_call(r, i)) continue;
        /* partitions reachable from this node through something outside them, and the ones
         * its users are in */
        direct.n = 0;
        for (uint32_t u = r->users.off[i]; u < r->users.off[i + 1]; u++) {
            uint32_t up = r->users.pos[u];
            if (!is_call(r, up)) continue;
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
                r->detail[i] = ls_internf("joining %s%u would form a cycle", r->prof->tag_prefix, ps->v[0].torch_id);
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
                uint32_t ng = new_part(ps, my_id);
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
static void getitems_follow(round *r, parts *ps)
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
static bool acyclic(const round *r, uint32_t nparts)
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
    /* adjacency in CSR */
    uint32_t *off = ls_calloc(nv + 1, sizeof *off);
    for (uint32_t e = 0; e < edges_from.n; e++) off[edges_from.v[e] + 1]++;
    for (uint32_t v = 0; v < nv; v++) off[v + 1] += off[v];
    uint32_t *adj = ls_malloc(sizeof *adj * (edges_from.n ? edges_from.n : 1));
    uint32_t *fill = ls_malloc(sizeof *fill * (nv ? nv : 1));
    memcpy(fill, off, sizeof *fill * nv);
    for (uint32_t e = 0; e < edges_from.n; e++) adj[fill[edges_from.v[e]]++] = edges_to.v[e];
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
    free(fill);
    free(queue);
    free(exists);
    return done == total;
}

/* Fallback when the greedy grouping formed a cycle (it should not): group supported nodes by
 * the number of unsupported ops below them, which is always acyclic. */
static void propose_by_level(round *r, parts *ps)
{
    uint32_t *level = ls_calloc(r->n ? r->n : 1, sizeof *level);
    pu_map part_of_level = {0};
    ps->n = 0;
    uint32_t created = 0;
    for (uint32_t i = r->n; i-- > 0;) {
        r->grp[i] = -1;
        if (!is_call(r, i)) continue;
        for (uint32_t u = r->users.off[i]; u < r->users.off[i + 1]; u++) {
            uint32_t up = r->users.pos[u];
            if (!is_call(r, up)) continue;
            uint32_t l = level[up] + (r->grp[up] < 0 ? 1u : 0u);
            if (l > level[i]) level[i] = l;
        }
        if (r->reason[i] != LS_WHY_NONE) continue;
        uint32_t my_id = created++, g;
        /* levels as keys: offset by one so level 0 is not a NULL key */
        if (!pu_map_get(&part_of_level, (const void *)(uintptr_t)(level[i] + 1), &g)) {
            g = new_part(ps, my_id);
            pu_map_put(&part_of_level, (const void *)(uintptr_t)(level[i] + 1), g);
        }
        r->grp[i] = (int32_t)g;
        join(ps, g, my_id);
    }
    pu_map_free(&part_of_level);
    free(level);
}

/* ---- tagging data: tag_constant_data and tag_mutated_buffer (exir-semantics §3.1, §3.2) */

static const char *min_user_tag(const round *r, const char **tags, uint32_t pos, bool *all_same, bool *any_cpu)
{
    const char *best = NULL;
    const char *first = NULL;
    *all_same = true;
    *any_cpu = false;
    bool have = false;
    for (uint32_t u = r->users.off[pos]; u < r->users.off[pos + 1]; u++) {
        const char *t = tags[r->users.pos[u]];
        if (!have) first = t, have = true;
        else if (t != first) *all_same = false;
        if (!t) *any_cpu = true;
        else if (pu_tag_cmp(t, best) < 0) best = t;
    }
    return best;
}

typedef struct sole {
    const char *tag;
    uint32_t pos;
} sole;

static int cmp_sole(const void *a, const void *b)
{
    const sole *x = a, *y = b;
    int c = strcmp(x->tag, y->tag);
    return c ? c : (x->pos < y->pos ? -1 : x->pos > y->pos);
}

static void tag_data(round *r, const char **tags, ls_pass_ctx *ctx)
{
    LS_VEC(sole) alone = {0}; /* constants one tag alone reads: one sentence per tag */
    for (uint32_t i = 0; i < r->n; i++) {
        if (!(r->cls[i] & CLS_PLACEHOLDER)) continue;
        const ls_node *ph = r->q->nodes[i];
        const ls_input_spec *s = ls_sig_spec(&r->sig, r->q, ph);
        if (!s || !ls_input_kind_holds_data(s->kind) || !pu_nusers(&r->users, i)) continue;
        bool all_same, any_cpu;
        const char *t = min_user_tag(r, tags, i, &all_same, &any_cpu);
        if (!t) continue;
        if (ls_sig_is_mutated(&r->sig, s)) {
            if (!r->prof->stateful || s->kind != LS_IN_BUFFER) continue;
            if (!all_same) {
                ls_report_add(ctx->report, NULL, ph->name,
                              "buffer `%s` stays at the top level: it is read by %s%s and more than one program would "
                              "hold its state",
                              ph->name, t, any_cpu ? " and by the CPU" : " and other tags");
                continue;
            }
            tags[i] = t;
            ls_report_add(ctx->report, NULL, ph->name, "mutable buffer `%s` goes with %s (tag_mutated_buffer)", ph->name, t);
            continue;
        }
        if (!r->prof->take_constants) continue;
        tags[i] = t;
        if (all_same) {
            sole so = {t, i};
            ls_vec_push(&alone, so);
        } else {
            ls_report_add(ctx->report, NULL, ph->name,
                          "%s `%s` is read by several programs: tagged %s (the smallest tag), duplicate_constants "
                          "gives the others a copy",
                          ls_input_kind_name((ls_input_kind)s->kind), ph->name, t);
        }
    }
    if (alone.n) qsort(alone.v, alone.n, sizeof *alone.v, cmp_sole);
    for (uint32_t a = 0; a < alone.n;) {
        uint32_t b = a;
        while (b < alone.n && alone.v[b].tag == alone.v[a].tag) b++;
        const char **names = ls_malloc(sizeof *names * (b - a));
        for (uint32_t k = a; k < b; k++) names[k - a] = r->q->nodes[alone.v[k].pos]->name;
        ls_buf buf = {0};
        ls_buf_printf(&buf, "%s takes the constant data only it reads (tag_constant_data): ", alone.v[a].tag);
        pu_names(&buf, names, b - a, 6);
        char *text = ls_buf_take(&buf);
        ls_report_add(ctx->report, NULL, names[0], "%s", text);
        free(text);
        free(names);
        a = b;
    }
    free(alone.v);
}

/* ---- the pass */

static int cmp_u32(const void *a, const void *b)
{
    uint32_t x = *(const uint32_t *)a, y = *(const uint32_t *)b;
    return x < y ? -1 : x > y;
}

static void report_parts(const round *r, const parts *ps, const char **tag_of_part, ls_pass_ctx *ctx)
{
    uint32_t np = ps->n ? ps->n : 1;
    /* the compute nodes of each partition, by a counting sort (linear) */
    uint32_t *start = ls_calloc(np + 1, sizeof *start);
    uint32_t *first = ls_malloc(sizeof *first * np);
    memset(first, 0xff, sizeof *first * np);
    for (uint32_t i = 0; i < r->n; i++) {
        if (r->grp[i] < 0) continue;
        uint32_t g = (uint32_t)r->grp[i];
        if (first[g] == UINT32_MAX) first[g] = i;
        if (r->cls[i] & CLS_COMPUTE) start[g + 1]++;
    }
    for (uint32_t g = 0; g < ps->n; g++) start[g + 1] += start[g];
    uint32_t *ops = ls_malloc(sizeof *ops * (start[ps->n] ? start[ps->n] : 1));
    uint32_t *fill = ls_malloc(sizeof *fill * np);
    memcpy(fill, start, sizeof *fill * np);
    for (uint32_t i = 0; i < r->n; i++)
        if (r->grp[i] >= 0 && (r->cls[i] & CLS_COMPUTE)) ops[fill[r->grp[i]]++] = r->op[i];
    /* one sentence per partition, in tag order (ascending ids, as partition_tags is built) */
    uint32_t *order = ls_malloc(sizeof *order * np);
    for (uint32_t g = 0; g < ps->n; g++) order[g] = g;
    for (uint32_t a = 1; a < ps->n; a++) { /* insertion sort by id: the ids come almost in order */
        uint32_t x = order[a], b = a;
        while (b > 0 && ps->v[order[b - 1]].torch_id > ps->v[x].torch_id) order[b] = order[b - 1], b--;
        order[b] = x;
    }
    uint32_t count[LS_OP_COUNT + 1] = {0}, touched[LS_OP_COUNT + 1];
    for (uint32_t k = 0; k < ps->n; k++) {
        uint32_t g = order[k];
        if (!ps->v[g].size) continue;
        uint32_t nt = 0, compute = start[g + 1] - start[g];
        for (uint32_t e = start[g]; e < start[g + 1]; e++)
            if (count[ops[e]]++ == 0) touched[nt++] = ops[e];
        qsort(touched, nt, sizeof *touched, cmp_u32);
        ls_buf b = {0};
        ls_buf_printf(&b, "%s (%s) takes %u node%s", tag_of_part[g], r->prof->backend_id, compute, compute == 1 ? "" : "s");
        for (uint32_t t = 0; t < nt; t++) {
            if (t < 6) {
                const char *nm = touched[t] < LS_OP_COUNT ? ls_op_short(ls_op_get((ls_op_id)touched[t])) : "?";
                ls_buf_printf(&b, "%s%s ×%u", t ? ", " : ": ", nm, count[touched[t]]);
            } else if (t == 6) {
                ls_buf_puts(&b, ", …");
            }
            count[touched[t]] = 0;
        }
        char *text = ls_buf_take(&b);
        ls_report_add(ctx->report, NULL, first[g] != UINT32_MAX ? r->q->nodes[first[g]]->name : NULL, "%s", text);
        free(text);
    }
    free(order);
    free(fill);
    free(ops);
    free(start);
    free(first);
}

/* taken: the tags earlier rounds (other backends) registered; a name of theirs is prefixed */
static const char *tag_name(const round *r, const pu_map *taken, uint32_t id)
{
    const char *t = ls_internf("%s%u", r->prof->tag_prefix, id);
    if (pu_map_has(taken, t)) t = ls_internf("%s_%s%u", r->prof->name, r->prof->tag_prefix, id);
    return t;
}

/* ls_program_add_tag for each tag_of_part[order[k]], with the program's tags in a map (a round
 * registers one tag per partition). */
static void add_tags(ls_program *q, const char **tag_of_part, const uint32_t *order, uint32_t n, const char *backend_id)
{
    pu_map known = {0};
    for (uint32_t i = 0; i < q->n_tags; i++)
        if (!pu_map_has(&known, q->tags[i].tag)) pu_map_put(&known, q->tags[i].tag, i);
    q->tags = ls_realloc(q->tags, sizeof *q->tags * (q->n_tags + n + 1));
    for (uint32_t k = 0; k < n; k++) {
        const char *t = tag_of_part[order[k]];
        uint32_t at;
        if (pu_map_get(&known, t, &at)) {
            q->tags[at].backend_id = backend_id;
            continue;
        }
        pu_map_put(&known, t, q->n_tags);
        q->tags[q->n_tags].tag = t;
        q->tags[q->n_tags].backend_id = backend_id;
        q->n_tags++;
    }
    pu_map_free(&known);
}

int ls_pass_partition(const ls_program *in, ls_program **out, ls_pass_ctx *ctx)
{
    if (!ctx->profile) return ls_fail(ctx->err, "partition: no backend profile given");
    round r = {.prof = ctx->profile};
    r.q = ls_program_copy(in);
    r.n = r.q->n_nodes;
    ls_sig_build(&r.sig, r.q);
    pu_users_take(&r.users, r.q);
    r.reason = ls_calloc(r.n ? r.n : 1, sizeof *r.reason);
    r.detail = ls_calloc(r.n ? r.n : 1, sizeof *r.detail);
    r.grp = ls_malloc(sizeof *r.grp * (r.n ? r.n : 1));
    r.cls = ls_calloc(r.n ? r.n : 1, sizeof *r.cls);
    r.op = ls_malloc(sizeof *r.op * (r.n ? r.n : 1));

    /* what the backend supports; a getitem follows its producer */
    for (uint32_t i = 0; i < r.n; i++) {
        const ls_node *n = r.q->nodes[i];
        r.op[i] = n->kind == LS_NODE_CALL && n->op ? (uint16_t)n->op->id : (uint16_t)LS_OP_COUNT;
        r.cls[i] = (uint8_t)((n->kind == LS_NODE_CALL ? CLS_CALL : 0) | (ls_deleg_is_compute(n) ? CLS_COMPUTE : 0) |
                             (pu_is_op(n, LS_OP_getitem) ? CLS_GETITEM : 0) |
                             (n->kind == LS_NODE_PLACEHOLDER ? CLS_PLACEHOLDER : 0));
        if (n->kind != LS_NODE_CALL) continue;
        if (pu_is_op(n, LS_OP_getitem)) {
            const ls_node *src = n->nargs ? producer(&r, n->args[0].v.node) : NULL;
            int32_t sp = src ? pu_pos(&r.users, src->id) : -1;
            r.reason[i] = (uint8_t)(sp >= 0 && r.reason[sp] == LS_WHY_NONE && src->kind == LS_NODE_CALL ? LS_WHY_NONE
                                                                                                     : LS_WHY_NOT_COMPUTE);
        } else if (pu_is_op(n, LS_OP_call_delegate)) {
            r.reason[i] = LS_WHY_NOT_COMPUTE;
        } else {
            r.reason[i] = (uint8_t)check_node(&r, n, &r.detail[i]);
        }
    }
    parts ps = {0};
    propose(&r, &ps);
    getitems_follow(&r, &ps);
    if (!acyclic(&r, ps.n)) {
        propose_by_level(&r, &ps);
        ls_report_add(ctx->report, NULL, NULL,
                      "the partitions grouped as torch would form a cycle; grouped by level instead");
    }

    /* tags, in ascending id order (partition_tags) */
    const char **tag_of_part = ls_malloc(sizeof *tag_of_part * (ps.n ? ps.n : 1));
    pu_map taken = {0};
    for (uint32_t i = 0; i < r.q->n_tags; i++)
        if (r.q->tags[i].backend_id) pu_map_put(&taken, r.q->tags[i].tag, i);
    for (uint32_t g = 0; g < ps.n; g++) tag_of_part[g] = tag_name(&r, &taken, ps.v[g].torch_id);
    pu_map_free(&taken);
    const char **tags = ls_calloc(r.n ? r.n : 1, sizeof *tags);
    for (uint32_t i = 0; i < r.n; i++)
        if (r.grp[i] >= 0) tags[i] = tag_of_part[r.grp[i]];
    report_parts(&r, &ps, tag_of_part, ctx);
    for (uint32_t i = 0; i < r.n; i++) {
        if (!(r.cls[i] & CLS_COMPUTE) || r.grp[i] >= 0) continue;
        const ls_node *n = r.q->nodes[i];
        const char *d = r.detail[i];
        ls_report_add(ctx->report, NULL, n->name, "`%s` (%s) stays on the CPU: %s%s%s%s", n->name,
                      n->op ? n->op->qualname : ls_target_short(n->target), ls_cpu_reason_text((ls_cpu_reason)r.reason[i]),
                      d ? " (" : "", d ? d : "", d ? ")" : "");
    }
    tag_data(&r, tags, ctx);

    /* write tags and reasons, copying only the nodes that change */
    for (uint32_t i = 0; i < r.n; i++) {
        const ls_node *n = r.q->nodes[i];
        uint8_t why = LS_WHY_NONE;
        const char *detail = NULL;
        if ((r.cls[i] & CLS_COMPUTE) && !tags[i]) {
            why = r.reason[i];
            detail = r.detail[i];
        } else if (n->kind == LS_NODE_CALL && !tags[i]) {
            why = n->reason; /* getitems and delegate calls keep what they had */
            detail = n->reason_detail;
        }
        if (n->tag == tags[i] && n->reason == why && n->reason_detail == detail) continue;
        ls_node *e = pu_edit(r.q, i);
        e->tag = tags[i];
        e->reason = why;
        e->reason_detail = detail;
    }
    ls_program_touch(r.q);
    uint32_t *order = ls_malloc(sizeof *order * (ps.n ? ps.n : 1));
    uint32_t live_parts = 0;
    for (uint32_t g = 0; g < ps.n; g++)
        if (ps.v[g].size) order[live_parts++] = g;
    for (uint32_t a = 1; a < live_parts; a++) {
        uint32_t x = order[a], b = a;
        while (b > 0 && ps.v[order[b - 1]].torch_id > ps.v[x].torch_id) order[b] = order[b - 1], b--;
        order[b] = x;
    }
    add_tags(r.q, tag_of_part, order, live_parts, r.prof->backend_id);
    if (!live_parts)
        ls_report_add(ctx->report, NULL, NULL, "%s takes nothing: no node is supported", r.prof->backend_id);

    free(order);
    free(tags);
    free(tag_of_part);
    free(ps.v);
    free(r.reason);
    free(r.detail);
    free(r.grp);
    free(r.cls);
    free(r.op);
    free(r.ids);
    pu_users_free(&r.users);
    ls_sig_free(&r.sig);
    *out = r.q;
    return 0;
}
