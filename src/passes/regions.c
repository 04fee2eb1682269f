/* The regions of a program (regions.h): delegates, tags and CPU islands in topological order,
 * with the tensors crossing between them. One pass in graph order gives every node its region
 * and stage, a union-find joins the CPU islands, one pass over the arguments gives the edges and
 * the constants each region reads, then the regions are sorted topologically (Kahn, earliest
 * first node first) and given their ranks. O(n) with hashes. */
#include "regions.h"

#include <stdlib.h>
#include <string.h>

#include "delegation.h"
#include "ops.h"
#include "ptrmap.h"

#define CPU_PENDING (-2)

const char *ls_region_kind_name(ls_region_kind k)
{
    static const char *names[] = {"inputs", "cpu", "tag", "delegate", "outputs"};
    return k <= LS_REGION_OUTPUTS ? names[k] : "?";
}

typedef struct build {
    const ls_program *p;
    ls_regions *r;
    LS_VEC(ls_region) regs; /* provisional, in creation order */
    uint32_t *stage;        /* per position */
    uint32_t *parent;       /* union-find over CPU positions */
    int32_t *spec_of_pos;   /* per position: input spec of a placeholder, -1 */
    uint64_t *data_bytes;   /* per position: a constant's bytes, UINT64_MAX until looked up */
    ls_ptrmap tag_reg, sub_reg; /* tag / submodule name -> region + 1 */
    int32_t inputs, outputs;
} build;

static uint32_t find(uint32_t *parent, uint32_t x)
{
    while (parent[x] != x) {
        parent[x] = parent[parent[x]];
        x = parent[x];
    }
    return x;
}

static int32_t new_region(build *b, ls_region_kind kind, const char *name, uint32_t first)
{
    ls_region g = {.kind = (uint8_t)kind, .name = ls_intern(name), .first = first};
    ls_vec_push(&b->regs, g);
    return (int32_t)b->regs.n - 1;
}

static int32_t keyed_region(build *b, ls_ptrmap *m, const char *key, ls_region_kind kind, uint32_t first)
{
    uintptr_t v;
    if (ls_ptrmap_get(m, key, &v)) return (int32_t)v - 1;
    int32_t g = new_region(b, kind, key, first);
    ls_ptrmap_put(m, key, (uintptr_t)g + 1);
    return g;
}

static int32_t pos_of_arg(const ls_program *p, uint32_t id)
{
    return id ? ls_program_pos(p, id) : -1;
}

static bool is_delegated(const build *b, int32_t g)
{
    return g >= 0 && (b->regs.v[g].kind == LS_REGION_TAG || b->regs.v[g].kind == LS_REGION_DELEGATE);
}

/* The stage a consumer in region g gets from the producer at q: one more than a delegate's
 * (another one's), else the producer's own. */
static uint32_t contribution(const build *b, int32_t g, int32_t q)
{
    int32_t pg = b->r->of_pos[q];
    if (pg == -1) return 0;
    if (pg != g && is_delegated(b, pg)) return b->regs.v[pg].stage + 1;
    return b->stage[q];
}

typedef struct stage_ctx {
    const build *b;
    int32_t g;
    uint32_t max;
} stage_ctx;

static void stage_of_arg(uint32_t id, void *vctx)
{
    stage_ctx *c = vctx;
    int32_t q = pos_of_arg(c->b->p, id);
    if (q < 0) return;
    uint32_t s = contribution(c->b, c->g, q);
    if (s > c->max) c->max = s;
}

static uint32_t stage_of(const build *b, const ls_node *n, int32_t g, uint16_t from_arg)
{
    stage_ctx c = {b, g, 0};
    for (uint16_t a = from_arg; a < n->nargs; a++) ls_arg_each_node(&n->args[a], stage_of_arg, &c);
    return c.max;
}

typedef struct join_ctx {
    build *b;
    uint32_t pos;
} join_ctx;

static void join_cpu(uint32_t id, void *vctx)
{
    join_ctx *c = vctx;
    int32_t q = pos_of_arg(c->b->p, id);
    if (q < 0 || c->b->r->of_pos[q] != CPU_PENDING || c->b->stage[q] != c->b->stage[c->pos]) return;
    uint32_t x = find(c->b->parent, (uint32_t)q), y = find(c->b->parent, c->pos);
    if (x != y) c->b->parent[x < y ? y : x] = x < y ? x : y; /* the earliest node is the root */
}

static const char *delegate_sub(const ls_program *p, const ls_node *n)
{
    if (!n->nargs || n->args[0].kind != LS_ARG_NODE) return NULL;
    const ls_node *ga = ls_program_node(p, n->args[0].v.node);
    return ga && ga->kind == LS_NODE_GET_ATTR ? ga->target : NULL;
}

/* Every node's region and stage, in graph order. */
static void assign(build *b)
{
    const ls_program *p = b->p;
    ls_regions *r = b->r;
    for (uint32_t i = 0; i < p->n_nodes; i++) {
        const ls_node *n = p->nodes[i];
        int32_t g = -1;
        uint32_t st = 0;
        switch ((ls_node_kind)n->kind) {
        case LS_NODE_PLACEHOLDER: {
            int32_t s = b->spec_of_pos[i];
            if (s < 0 || p->inputs[s].kind == LS_IN_USER_INPUT) {
                if (b->inputs < 0) b->inputs = new_region(b, LS_REGION_INPUTS, "inputs", i);
                g = b->inputs;
            }
            break;
        }
        case LS_NODE_OUTPUT:
            if (b->outputs < 0) b->outputs = new_region(b, LS_REGION_OUTPUTS, "outputs", i);
            g = b->outputs;
            st = stage_of(b, n, g, 0);
            break;
        case LS_NODE_GET_ATTR: break; /* with the delegate call that reads it */
        case LS_NODE_CALL: {
            ls_op_id op = n->op ? n->op->id : LS_OP_COUNT;
            if (op == LS_OP_alloc) break;
            if (op == LS_OP_getitem) { /* with what it reads */
                int32_t q = n->nargs && n->args[0].kind == LS_ARG_NODE ? pos_of_arg(p, n->args[0].v.node) : -1;
                if (q >= 0 && r->of_pos[q] != -1) {
                    g = r->of_pos[q];
                    st = b->stage[q];
                    if (g == CPU_PENDING) b->parent[i] = find(b->parent, (uint32_t)q);
                    break;
                }
            }
            const char *sub = op == LS_OP_call_delegate ? delegate_sub(p, n) : NULL;
            if (sub) {
                g = keyed_region(b, &b->sub_reg, sub, LS_REGION_DELEGATE, i);
                ls_region *rg = &b->regs.v[g];
                const ls_submodule *s = ls_program_sub(p, sub);
                rg->sub = rg->name;
                rg->backend = s ? s->backend_id : NULL;
                rg->tag = s ? ls_deleg_sub_tag(s) : NULL;
                st = stage_of(b, n, g, 1);
                if (st > rg->stage) rg->stage = st;
                int32_t ga = pos_of_arg(p, n->args[0].v.node);
                if (ga >= 0) r->of_pos[ga] = g;
            } else if (n->tag) {
                g = keyed_region(b, &b->tag_reg, n->tag, LS_REGION_TAG, i);
                ls_region *rg = &b->regs.v[g];
                if (!rg->tag) { /* its first node: the backend is looked up once per tag */
                    rg->tag = n->tag;
                    rg->backend = ls_program_tag_backend(p, n->tag);
                }
                st = stage_of(b, n, g, 0);
                if (st > rg->stage) rg->stage = st;
            } else {
                g = CPU_PENDING;
                st = stage_of(b, n, -1, 0);
            }
            break;
        }
        }
        r->of_pos[i] = g;
        b->stage[i] = st;
        if (g == CPU_PENDING && b->parent[i] == i) {
            join_ctx c = {b, i};
            for (uint16_t a = 0; a < n->nargs; a++) ls_arg_each_node(&n->args[a], join_cpu, &c);
        }
    }
    /* one region per island, numbered later in topological order */
    ls_ptrmap island = {0};
    for (uint32_t i = 0; i < p->n_nodes; i++) {
        if (r->of_pos[i] != CPU_PENDING) continue;
        uint32_t root = find(b->parent, i);
        uintptr_t v;
        if (!ls_ptrmap_get(&island, (const void *)(uintptr_t)(root + 1), &v)) {
            v = (uintptr_t)new_region(b, LS_REGION_CPU, "CPU", i) + 1;
            b->regs.v[v - 1].stage = b->stage[i];
            ls_ptrmap_put(&island, (const void *)(uintptr_t)(root + 1), v);
        }
        r->of_pos[i] = (int32_t)v - 1;
    }
    ls_ptrmap_free(&island);
}

static uint64_t value_bytes(const ls_node *n)
{
    uint64_t total = 0;
    for (uint16_t k = 0; k < n->nvals; k++) {
        const ls_tmeta *m = &n->vals[k];
        int64_t numel = 1;
        for (uint8_t d = 0; d < m->ndim; d++) numel *= m->sizes[d] > 0 ? m->sizes[d] : 0;
        total += (uint64_t)numel * ls_dtype_size(m->dtype);
    }
    return total;
}

static bool mutated(const ls_program *p, const char *target)
{
    for (uint32_t i = 0; i < p->n_outputs; i++)
        if (p->outputs[i].kind == LS_OUT_BUFFER_MUTATION && p->outputs[i].target == target) return true;
    return false;
}

static uint64_t data_bytes(const ls_program *p, const ls_input_spec *s, const ls_node *n)
{
    const ls_named_tensor *nt = ls_program_spec_data(p, s);
    if (nt) return ls_tmeta_nbytes(nt->meta);
    return value_bytes(n);
}

/* bytes: the data's size when known (UINT64_MAX: look it up) */
static void count_data(ls_region *g, const ls_program *p, const ls_input_spec *s, const ls_node *n, const ls_ptrmap *muts,
                       uint64_t bytes)
{
    if (bytes == UINT64_MAX) bytes = data_bytes(p, s, n);
    if (s->kind == LS_IN_BUFFER && (muts ? ls_ptrmap_get(muts, s->target, NULL) : mutated(p, s->target))) {
        g->states++;
        g->state_bytes += bytes;
    } else {
        g->consts++;
        g->const_bytes += bytes;
    }
}

typedef LS_VEC(ls_region_edge) edge_vec;

typedef struct edge_ctx {
    build *b;
    int32_t to;
    ls_ptrmap *seen, *edge_ix, *muts;
    int32_t *last_to; /* per producer: the region it was last counted for (most values go to one) */
    edge_vec *edges;
} edge_ctx;

static void edge_of_arg(uint32_t id, void *vctx)
{
    edge_ctx *c = vctx;
    const ls_program *p = c->b->p;
    int32_t q = pos_of_arg(p, id);
    if (q < 0) return;
    if (c->last_to[q] == c->to) return; /* this value already counted for this region */
    if (c->last_to[q] != -1) { /* a second region: whether it was counted for this one before */
        const void *key = (const void *)(uintptr_t)((((uint64_t)(uint32_t)q) << 32 | (uint32_t)c->to) + 1);
        if (!ls_ptrmap_add(c->seen, key, 1, NULL)) return;
        if (c->last_to[q] >= 0) { /* and the first region it went to, so that coming back to it is seen */
            const void *first = (const void *)(uintptr_t)((((uint64_t)(uint32_t)q) << 32 | (uint32_t)c->last_to[q]) + 1);
            ls_ptrmap_add(c->seen, first, 1, NULL);
        }
    }
    c->last_to[q] = c->to;
    int32_t from = c->b->r->of_pos[q];
    int32_t s = c->b->spec_of_pos[q];
    if (from < 0 && s >= 0 && ls_input_kind_holds_data(p->inputs[s].kind)) {
        if (c->b->regs.v[c->to].kind == LS_REGION_OUTPUTS) return;
        if (c->b->data_bytes[q] == UINT64_MAX) /* once per constant, however many regions read it */
            c->b->data_bytes[q] = data_bytes(p, &p->inputs[s], p->nodes[q]);
        count_data(&c->b->regs.v[c->to], p, &p->inputs[s], p->nodes[q], c->muts, c->b->data_bytes[q]);
        return;
    }
    if (from < 0 || from == c->to) return;
    const void *ek = (const void *)(uintptr_t)((((uint64_t)(uint32_t)from) << 32 | (uint32_t)c->to) + 1);
    uintptr_t e;
    if (!ls_ptrmap_get(c->edge_ix, ek, &e)) {
        ls_region_edge ne = {(uint32_t)from, (uint32_t)c->to, 0, 0};
        ls_vec_push(c->edges, ne);
        e = c->edges->n - 1;
        ls_ptrmap_put(c->edge_ix, ek, e);
    }
    c->edges->v[e].tensors++;
    c->edges->v[e].bytes += value_bytes(p->nodes[q]);
}

/* "add ×3, mul ×3": the ops of a run of nodes, most first (first seen on ties). */
#define MAX_OPS 64
typedef struct op_count {
    const char *op;
    uint32_t n, first;
} op_count;

static int cmp_ops(const void *x, const void *y)
{
    const op_count *a = x, *b = y;
    if (a->n != b->n) return a->n > b->n ? -1 : 1;
    return a->first < b->first ? -1 : a->first > b->first;
}

static void add_op(op_count *ops, uint32_t *n_ops, uint32_t *other, const ls_node *n)
{
    if (!ls_deleg_is_compute(n)) return;
    const char *label = n->op ? n->op->name : ls_intern(ls_target_short(n->target)); /* an op's name is its own */
    for (uint32_t k = 0; k < *n_ops; k++)
        if (ops[k].op == label) {
            ops[k].n++;
            return;
        }
    if (*n_ops < MAX_OPS) ops[(*n_ops)++] = (op_count){label, 1, *n_ops};
    else (*other)++;
}

static const char *ops_text(op_count *ops, uint32_t n_ops, uint32_t other)
{
    if (!n_ops) return NULL;
    qsort(ops, n_ops, sizeof *ops, cmp_ops);
    ls_buf b = {0};
    for (uint32_t k = 0; k < n_ops && k < 3; k++) {
        if (ops[k].n > 1) ls_buf_printf(&b, "%s%s ×%u", k ? ", " : "", ops[k].op, ops[k].n);
        else ls_buf_printf(&b, "%s%s", k ? ", " : "", ops[k].op);
    }
    uint32_t more = other + (n_ops > 3 ? n_ops - 3 : 0);
    if (more) ls_buf_printf(&b, ", +%u more", more);
    const char *s = ls_intern(b.s);
    ls_buf_free(&b);
    return s;
}

/* What each region holds and does: compute nodes, ops, a delegate's data and state. */
static void describe(build *b, const uint32_t *members, const uint32_t *start)
{
    const ls_program *p = b->p;
    op_count ops[MAX_OPS];
    for (uint32_t g = 0; g < b->regs.n; g++) {
        ls_region *rg = &b->regs.v[g];
        uint32_t n_ops = 0, other = 0;
        if (rg->kind == LS_REGION_DELEGATE) {
            const ls_submodule *s = ls_program_sub(p, rg->sub);
            const ls_program *sp = s ? s->program : NULL;
            for (uint32_t i = 0; sp && i < sp->n_nodes; i++) {
                rg->n_nodes += ls_deleg_is_compute(sp->nodes[i]);
                add_op(ops, &n_ops, &other, sp->nodes[i]);
            }
            if (!sp) { /* a blob lowerscope cannot read: one call, as the delegation table counts it */
                rg->n_nodes = 1;
                rg->ops = ls_intern("opaque blob: one call");
                continue;
            }
            for (uint32_t i = 0; sp && i < sp->n_inputs; i++) { /* what it holds, and the state it keeps */
                int32_t pos = sp->inputs[i].name ? ls_program_find(sp, sp->inputs[i].name) : -1;
                if (pos >= 0 && ls_input_kind_holds_data(sp->inputs[i].kind)) count_data(rg, sp, &sp->inputs[i], sp->nodes[pos], NULL, UINT64_MAX);
            }
        } else {
            for (uint32_t k = start[g]; k < start[g + 1]; k++) {
                const ls_node *n = p->nodes[members[k]];
                if (rg->kind == LS_REGION_INPUTS) rg->n_nodes++;
                else rg->n_nodes += ls_deleg_is_compute(n);
                add_op(ops, &n_ops, &other, n);
            }
        }
        rg->ops = ops_text(ops, n_ops, other);
    }
}

/* ---- topological order */

typedef struct heap {
    uint32_t *v, n;
    const ls_region *regs;
} heap;

static bool before(const heap *h, uint32_t a, uint32_t b)
{
    return h->regs[a].first < h->regs[b].first || (h->regs[a].first == h->regs[b].first && a < b);
}

static void heap_push(heap *h, uint32_t x)
{
    uint32_t i = h->n++;
    h->v[i] = x;
    while (i && before(h, h->v[i], h->v[(i - 1) / 2])) {
        uint32_t t = h->v[i];
        h->v[i] = h->v[(i - 1) / 2];
        h->v[(i - 1) / 2] = t;
        i = (i - 1) / 2;
    }
}

static uint32_t heap_pop(heap *h)
{
    uint32_t top = h->v[0];
    h->v[0] = h->v[--h->n];
    for (uint32_t i = 0;;) {
        uint32_t l = 2 * i + 1, m = i;
        if (l < h->n && before(h, h->v[l], h->v[m])) m = l;
        if (l + 1 < h->n && before(h, h->v[l + 1], h->v[m])) m = l + 1;
        if (m == i) break;
        uint32_t t = h->v[i];
        h->v[i] = h->v[m];
        h->v[m] = t;
        i = m;
    }
    return top;
}

static int cmp_edges(const void *x, const void *y)
{
    const ls_region_edge *a = x, *b = y;
    if (a->to != b->to) return a->to < b->to ? -1 : 1;
    return a->from < b->from ? -1 : a->from > b->from;
}

/* order[k] = the provisional region placed k-th: Kahn's algorithm, the region whose first node
 * comes first among those ready; regions left on a cycle (a tag that is not convex) follow in
 * the order of their first node. */
static void topo_order(const ls_region *regs, uint32_t n, const ls_region_edge *edges, uint32_t n_edges, uint32_t *order)
{
    uint32_t *indeg = ls_calloc(n + 1, sizeof *indeg), *start = ls_calloc(n + 2, sizeof *start);
    uint32_t *adj = ls_malloc(sizeof *adj * (n_edges + 1));
    for (uint32_t e = 0; e < n_edges; e++) {
        indeg[edges[e].to]++;
        start[edges[e].from + 1]++;
    }
    for (uint32_t g = 0; g < n; g++) start[g + 1] += start[g];
    uint32_t *fill = ls_malloc(sizeof *fill * (n + 1));
    memcpy(fill, start, sizeof *fill * (n + 1));
    for (uint32_t e = 0; e < n_edges; e++) adj[fill[edges[e].from]++] = edges[e].to;
    heap h = {ls_malloc(sizeof(uint32_t) * (n + 1)), 0, regs};
    bool *placed = ls_calloc(n + 1, sizeof *placed);
    for (uint32_t g = 0; g < n; g++)
        if (!indeg[g]) heap_push(&h, g);
    uint32_t k = 0;
    while (k < n) {
        if (!h.n) { /* a cycle: take the earliest region not placed yet */
            uint32_t best = UINT32_MAX;
            for (uint32_t g = 0; g < n; g++)
                if (!placed[g] && (best == UINT32_MAX || regs[g].first < regs[best].first)) best = g;
            heap_push(&h, best);
            indeg[best] = 0;
        }
        uint32_t g = heap_pop(&h);
        if (placed[g]) continue;
        placed[g] = true;
        order[k++] = g;
        for (uint32_t a = start[g]; a < start[g + 1]; a++)
            if (!placed[adj[a]] && indeg[adj[a]] && --indeg[adj[a]] == 0) heap_push(&h, adj[a]);
    }
    free(indeg);
    free(start);
    free(adj);
    free(fill);
    free(h.v);
    free(placed);
}

void ls_regions_build(const ls_program *p, ls_regions *r)
{
    memset(r, 0, sizeof *r);
    uint32_t n = p->n_nodes;
    r->n_pos = n;
    r->of_pos = ls_malloc(sizeof *r->of_pos * (n + 1));
    build b = {.p = p, .r = r, .inputs = -1, .outputs = -1};
    b.stage = ls_calloc(n + 1, sizeof *b.stage);
    b.parent = ls_malloc(sizeof *b.parent * (n + 1));
    b.spec_of_pos = ls_malloc(sizeof *b.spec_of_pos * (n + 1));
    b.data_bytes = ls_malloc(sizeof *b.data_bytes * (n + 1));
    memset(b.data_bytes, 0xff, sizeof *b.data_bytes * (n + 1));
    ls_ptrmap spec_of_name = {0}, muts = {0};
    for (uint32_t i = 0; i < p->n_inputs; i++) ls_ptrmap_add(&spec_of_name, p->inputs[i].name, i, NULL);
    for (uint32_t i = 0; i < p->n_outputs; i++)
        if (p->outputs[i].kind == LS_OUT_BUFFER_MUTATION) ls_ptrmap_add(&muts, p->outputs[i].target, 1, NULL);
    for (uint32_t i = 0; i < n; i++) {
        b.parent[i] = i;
        r->of_pos[i] = -1;
        uintptr_t s;
        b.spec_of_pos[i] = p->nodes[i]->kind == LS_NODE_PLACEHOLDER && ls_ptrmap_get(&spec_of_name, p->nodes[i]->name, &s)
                               ? (int32_t)s
                               : -1;
    }
    assign(&b);
    /* edges and the constants each region reads */
    edge_vec edges = {0};
    ls_ptrmap seen = {0}, edge_ix = {0};
    int32_t *last_to = ls_malloc(sizeof *last_to * (n + 1));
    for (uint32_t i = 0; i < n; i++) last_to[i] = -1;
    for (uint32_t i = 0; i < n; i++) {
        int32_t g = r->of_pos[i];
        const ls_node *nd = p->nodes[i];
        if (g < 0 || nd->kind == LS_NODE_GET_ATTR) continue;
        edge_ctx c = {&b, g, &seen, &edge_ix, &muts, last_to, &edges};
        for (uint16_t a = 0; a < nd->nargs; a++) ls_arg_each_node(&nd->args[a], edge_of_arg, &c);
    }
    ls_ptrmap_free(&seen);
    ls_ptrmap_free(&edge_ix);
    free(last_to);
    /* the order, then everything renumbered in it */
    uint32_t R = b.regs.n;
    uint32_t *order = ls_malloc(sizeof *order * (R + 1)), *new_of = ls_malloc(sizeof *new_of * (R + 1));
    topo_order(b.regs.v, R, edges.v, edges.n, order);
    for (uint32_t k = 0; k < R; k++) new_of[order[k]] = k;
    r->v = ls_malloc(sizeof *r->v * (R + 1));
    r->n = R;
    for (uint32_t k = 0; k < R; k++) r->v[k] = b.regs.v[order[k]];
    for (uint32_t i = 0; i < n; i++)
        if (r->of_pos[i] >= 0) r->of_pos[i] = (int32_t)new_of[r->of_pos[i]];
    for (uint32_t e = 0; e < edges.n; e++) {
        edges.v[e].from = new_of[edges.v[e].from];
        edges.v[e].to = new_of[edges.v[e].to];
    }
    if (edges.n) qsort(edges.v, edges.n, sizeof *edges.v, cmp_edges); /* qsort wants an array, even of none */
    r->edges = edges.v;
    r->n_edges = edges.n;
    /* members grouped by region */
    uint32_t *start = ls_calloc(R + 2, sizeof *start);
    for (uint32_t i = 0; i < n; i++)
        if (r->of_pos[i] >= 0) start[r->of_pos[i] + 1]++;
    for (uint32_t g = 0; g < R; g++) start[g + 1] += start[g];
    r->members = ls_malloc(sizeof *r->members * (start[R] + 1));
    uint32_t *fill = ls_malloc(sizeof *fill * (R + 1));
    memcpy(fill, start, sizeof *fill * (R + 1));
    for (uint32_t i = 0; i < n; i++)
        if (r->of_pos[i] >= 0) r->members[fill[r->of_pos[i]]++] = i;
    free(fill);
    /* describe() counts in the provisional array: point it at the sorted one */
    free(b.regs.v);
    b.regs.v = r->v;
    b.regs.n = R;
    describe(&b, r->members, start);
    b.regs.v = NULL;
    uint32_t island = 0;
    for (uint32_t g = 0; g < R; g++) {
        ls_region *rg = &r->v[g];
        rg->member0 = start[g];
        rg->n_members = start[g + 1] - start[g];
        if (rg->kind == LS_REGION_CPU) rg->name = ls_internf("CPU %u", ++island);
        if (rg->kind == LS_REGION_CPU) r->cpu_nodes += rg->n_nodes;
        else if (rg->kind == LS_REGION_TAG || rg->kind == LS_REGION_DELEGATE) r->delegated_nodes += rg->n_nodes;
    }
    /* ranks: the longest path (edges are between regions placed in order, but for a cycle's) */
    for (uint32_t e = 0; e < r->n_edges; e++) { /* sorted by destination: sources ranked first */
        const ls_region_edge *ed = &r->edges[e];
        if (ed->from < ed->to && r->v[ed->from].rank + 1 > r->v[ed->to].rank) r->v[ed->to].rank = r->v[ed->from].rank + 1;
    }
    for (uint32_t g = 0; g < R; g++)
        if (r->v[g].rank + 1 > r->n_ranks) r->n_ranks = r->v[g].rank + 1;
    for (uint32_t e = 0; e < r->n_edges; e++) {
        const ls_region_edge *ed = &r->edges[e];
        bool from_d = r->v[ed->from].kind == LS_REGION_TAG || r->v[ed->from].kind == LS_REGION_DELEGATE;
        bool to_d = r->v[ed->to].kind == LS_REGION_TAG || r->v[ed->to].kind == LS_REGION_DELEGATE;
        if (!from_d && to_d) r->cpu_to_delegates += ed->bytes;
        else if (from_d && !to_d) r->delegates_to_cpu += ed->bytes;
    }
    free(start);
    free(order);
    free(new_of);
    free(b.stage);
    free(b.parent);
    free(b.spec_of_pos);
    free(b.data_bytes);
    ls_ptrmap_free(&b.tag_reg);
    ls_ptrmap_free(&b.sub_reg);
    ls_ptrmap_free(&spec_of_name);
    ls_ptrmap_free(&muts);
}

void ls_regions_free(ls_regions *r)
{
    if (!r) return;
    free(r->v);
    free(r->edges);
    free(r->members);
    free(r->of_pos);
    memset(r, 0, sizeof *r);
}

int32_t ls_regions_of_node(const ls_regions *r, const ls_program *p, uint32_t id)
{
    int32_t pos = ls_program_pos(p, id);
    return pos >= 0 && (uint32_t)pos < r->n_pos ? r->of_pos[pos] : -1;
}

void ls_region_edge_label(const ls_region_edge *e, ls_buf *b)
{
    char bytes[32];
    ls_buf_printf(b, "%u tensor%s, %s", e->tensors, e->tensors == 1 ? "" : "s", ls_fmt_bytes(e->bytes, bytes, sizeof bytes));
}

bool ls_region_similar(const ls_region *a, const ls_region *b)
{
    return a->kind == b->kind && a->backend == b->backend && a->ops == b->ops && a->n_nodes == b->n_nodes &&
           a->consts == b->consts && a->states == b->states;
}
