/* memory_plan, the second of to_executorch's steps: ExecuTorch's MemoryPlanningPass
 * (exir/passes/memory_planning_pass.py → exir/memory_planning.py apply_algo) with its default
 * algorithm, greedy, or naive (--memory-planning naive). Which tensors get memory and when they
 * are alive follows exir; the algorithms themselves are mem_algo.c.
 *
 * The tensors (exir's TensorSpecs) and the nodes that share them:
 *   a user-input placeholder, a mutated buffer's placeholder (constants are not planned),
 *   an alloc (its out-variant call, and that call's getitems, use the alloc's tensor),
 *   each output of a delegate call or of a functional call with several results (its getitems
 *   use them), a call left functional; a memory.view uses its base's tensor; an in-place call
 *   (copy_, index_put_) has none of its own (_is_inplace_node).
 * Lifetimes (update_all_tensors_lifetime, update_tensor_lifetime): at node index i, the node's
 * own tensors and those of every node in its arguments (a get_attr and an in-place call
 * excepted) are alive at i; a placeholder's start at 0; a mutated buffer's end at the last
 * node. Planned (collect_specs_from_nodes): in graph order of first appearance, constants,
 * unbounded tensors and out-variant calls skipped, each tensor once; 16-byte aligned sizes
 * (TensorSpec.allocated_memory). A program calling an XNNPACK delegate gets 64 bytes of padding
 * after its tensors (apply_algo, _contains_xnnpack_delegate). One arena, memory_id 1. */
#include <ctype.h>
#include <inttypes.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "export_internal.h"
#include "namer.h"
#include "pte_file.h"
#include "signature.h"

#define ALIGN 16
#define XNNPACK_PADDING 64

typedef struct spec {
    uint32_t node, index;
    int64_t nbytes;       /* -1: unbounded (not planned) */
    bool planned;         /* not a constant, bounded */
    bool mutable_buffer;  /* alive to the end */
    bool seen;            /* yielded already */
    const char *name;     /* for the report: the node, or the getitem that reads a delegate's output */
    uint32_t first, last; /* lifetime; first == UINT32_MAX until touched */
} spec;

typedef struct planner {
    const ls_program *q;
    uint32_t n_ids;
    LS_VEC(spec) specs;
    uint32_t *sp_first, *sp_n; /* by node id: its tensors are sp_list[sp_first .. +sp_n] (spec indices) */
    LS_VEC(uint32_t) sp_list;
    bool *skip; /* by node id: in-place calls and get_attrs, which lifetimes ignore */
} planner;

static uint32_t new_spec(planner *P, const ls_node *n, uint32_t index, int64_t nbytes, bool planned)
{
    spec s = {.node = n->id, .index = index, .nbytes = nbytes, .planned = planned && nbytes >= 0, .first = UINT32_MAX,
              .name = n->val_kind == LS_VAL_TENSORS ? ls_internf("%s[%u]", n->name, index) : n->name};
    ls_vec_push(&P->specs, s);
    return P->specs.n - 1;
}

static void set_specs(planner *P, uint32_t id, const uint32_t *sp, uint32_t n)
{
    P->sp_first[id] = P->sp_list.n;
    P->sp_n[id] = n;
    for (uint32_t k = 0; k < n; k++) ls_vec_push(&P->sp_list, sp[k]);
}

static void alias(planner *P, uint32_t id, uint32_t of)
{
    if (of >= P->n_ids) return;
    P->sp_first[id] = P->sp_first[of];
    P->sp_n[id] = P->sp_n[of];
}

/* The node an argument names (k-th of a list), or 0. */
static uint32_t arg_node(const ls_arg *a, uint32_t k)
{
    if (a->kind == LS_ARG_NODE && k == 0) return a->v.node;
    if ((a->kind == LS_ARG_NODES || a->kind == LS_ARG_OPT_NODES) && k < a->n) return a->v.nodes[k];
    return 0;
}

static uint32_t first_spec(const planner *P, uint32_t id, uint32_t k)
{
    return id && id < P->n_ids && k < P->sp_n[id] ? P->sp_list.v[P->sp_first[id] + k] : UINT32_MAX;
}

/* A weight the program's .pte keeps in a .ptd and plans (a trainable one: EXTERNAL with
 * allocation_info). exir plans a weight that has a gradient (collect_specs_from_nodes:
 * weight_has_gradient) and the runtime copies its initial bytes in at Method::init; lowerscope
 * knows it from the file it read, and keeps it alive for the whole program, as state. */
static bool trainable_weight(const ls_program *q, const ls_input_spec *s)
{
    ls_pte_file *f = s->kind == LS_IN_BUFFER ? ls_program_pte_file(q) : NULL;
    const ls_pte_external *e = f && q->method && s->target ? ls_pte_file_external(f, q->method, s->target) : NULL;
    return e && e->trainable;
}

/* Every node's tensors (the TensorSpecs its meta["spec"] holds in exir). */
static void find_specs(planner *P, lsx_bounds *b)
{
    const ls_program *q = P->q;
    ls_sig sig;
    ls_sig_build(&sig, q);
    for (uint32_t i = 0; i < q->n_nodes; i++) {
        const ls_node *n = q->nodes[i];
        uint32_t sp[LS_MAX_RETURNS > 8 ? LS_MAX_RETURNS : 8];
        if (n->kind == LS_NODE_GET_ATTR) {
            P->skip[n->id] = true;
            continue;
        }
        if (n->kind == LS_NODE_PLACEHOLDER) {
            const ls_input_spec *s = ls_sig_spec(&sig, q, n);
            if (n->val_kind != LS_VAL_TENSOR || !n->nvals || !s) continue;
            bool user = s->kind == LS_IN_USER_INPUT;
            bool mut = (s->kind == LS_IN_BUFFER && ls_sig_is_mutated(&sig, s)) || trainable_weight(q, s);
            sp[0] = new_spec(P, n, 0, lsx_upper_nbytes(b, &n->vals[0]), user || mut);
            P->specs.v[sp[0]].mutable_buffer = mut;
            set_specs(P, n->id, sp, 1);
            continue;
        }
        if (n->kind != LS_NODE_CALL || !n->op) continue;
        const ls_op *op = n->op;
        const ls_schema *s = &op->schema;
        if (op->id == LS_OP_getitem) {
            uint32_t of = n->nargs == 2 ? arg_node(&n->args[0], 0) : 0;
            int64_t k = n->nargs == 2 && n->args[1].kind == LS_ARG_INT ? n->args[1].v.i : -1;
            uint32_t x = k >= 0 ? first_spec(P, of, (uint32_t)k) : UINT32_MAX;
            if (x != UINT32_MAX) {
                set_specs(P, n->id, &x, 1);
                if (P->specs.v[x].node == of) P->specs.v[x].name = n->name;
            }
        } else if (op->id == LS_OP_memory_view) {
            alias(P, n->id, n->nargs ? arg_node(&n->args[0], 0) : 0);
        } else if (op->flags & LS_OPF_INPLACE) {
            P->skip[n->id] = true; /* its value is its first argument's memory (emit reads it so) */
            alias(P, n->id, n->nargs ? arg_node(&n->args[0], 0) : 0);
        } else if (n->dialect == LS_DIALECT_EXECUTORCH && n->nargs > s->nparams) {
            /* an out-variant call: its tensors are its out arguments' allocs */
            uint32_t c = 0;
            if (s->returns_list) {
                const ls_arg *a = &n->args[s->nparams];
                for (uint32_t k = 0; k < a->n && c < 8; k++) {
                    uint32_t x = first_spec(P, arg_node(a, k), 0);
                    if (x != UINT32_MAX) sp[c++] = x;
                }
            } else {
                for (uint32_t k = s->nparams; k < n->nargs && c < 8; k++) {
                    uint32_t x = first_spec(P, arg_node(&n->args[k], 0), 0);
                    if (x != UINT32_MAX) sp[c++] = x;
                }
            }
            set_specs(P, n->id, sp, c);
        } else if (n->val_kind == LS_VAL_TENSOR && n->nvals) {
            sp[0] = new_spec(P, n, 0, lsx_upper_nbytes(b, &n->vals[0]), true); /* alloc, functional call */
            set_specs(P, n->id, sp, 1);
        } else if (n->val_kind == LS_VAL_TENSORS) {
            /* a delegate's outputs, a functional call's several results: one tensor each */
            P->sp_first[n->id] = P->sp_list.n;
            for (uint32_t k = 0; k < n->nvals; k++) {
                uint32_t x = new_spec(P, n, k, lsx_upper_nbytes(b, &n->vals[k]), true);
                ls_vec_push(&P->sp_list, x);
            }
            P->sp_n[n->id] = n->nvals;
        }
    }
    ls_sig_free(&sig);
}

typedef struct touch_ctx {
    planner *P;
    uint32_t pos;
} touch_ctx;

static void touch_node(planner *P, uint32_t id, uint32_t pos)
{
    if (!id || id >= P->n_ids || P->skip[id]) return;
    for (uint32_t k = 0; k < P->sp_n[id]; k++) {
        spec *s = &P->specs.v[P->sp_list.v[P->sp_first[id] + k]];
        if (pos < s->first) s->first = pos;
        if (pos > s->last) s->last = pos;
    }
}

static void touch_cb(uint32_t id, void *vctx)
{
    touch_ctx *t = vctx;
    touch_node(t->P, id, t->pos);
}

/* update_all_tensors_lifetime: node i and every node in its arguments are alive at i. */
static void lifetimes(planner *P)
{
    const ls_program *q = P->q;
    uint32_t max = q->n_nodes ? q->n_nodes - 1 : 0;
    for (uint32_t s = 0; s < P->specs.n; s++) P->specs.v[s].last = 0;
    for (uint32_t i = 0; i < q->n_nodes; i++) {
        const ls_node *n = q->nodes[i];
        touch_node(P, n->id, i);
        touch_ctx t = {P, i};
        for (uint16_t a = 0; a < n->nargs; a++) ls_arg_each_node(&n->args[a], touch_cb, &t);
    }
    for (uint32_t i = 0; i < q->n_nodes; i++) {
        const ls_node *n = q->nodes[i];
        if (n->kind != LS_NODE_PLACEHOLDER || n->id >= P->n_ids || !P->sp_n[n->id]) continue;
        spec *s = &P->specs.v[P->sp_list.v[P->sp_first[n->id]]];
        s->first = 0;
        if (s->mutable_buffer) s->last = max; /* mutable buffers are never freed */
    }
}

static bool calls_xnnpack(const ls_program *q)
{
    for (uint32_t i = 0; i < q->n_subs; i++) {
        const char *id = q->subs[i].backend_id;
        for (const char *c = id; c && *c; c++)
            if (strncasecmp(c, "xnnpack", 7) == 0) return true;
    }
    return false;
}

static uint64_t align_up(uint64_t x)
{
    return (x + ALIGN - 1) / ALIGN * ALIGN;
}

/* "448 bytes", "2048 bytes (2.0 KiB)" */
static void human(char *buf, size_t cap, uint64_t n)
{
    char r[32];
    if (n < 1024) snprintf(buf, cap, "%" PRIu64 " bytes", n);
    else snprintf(buf, cap, "%" PRIu64 " bytes (%s)", n, ls_fmt_bytes(n, r, sizeof r));
}

static int by_object(const void *a, const void *b)
{
    const ls_mem_slot *x = *(const ls_mem_slot *const *)a, *y = *(const ls_mem_slot *const *)b;
    if (x->object != y->object) return x->object < y->object ? -1 : 1;
    return x->offset < y->offset ? -1 : x->offset > y->offset;
}

/* Which tensors share an object: a line for each of the first objects holding several. */
static void report_sharing(const ls_mem_plan *m, const char *const *names, ls_report *rep)
{
    if (m->algo != LS_MEM_GREEDY || m->n_objects == m->n_slots) return;
    const ls_mem_slot **by = ls_malloc(sizeof *by * (m->n_slots ? m->n_slots : 1));
    for (uint32_t i = 0; i < m->n_slots; i++) by[i] = &m->slots[i];
    qsort(by, m->n_slots, sizeof *by, by_object);
    uint32_t shown = 0, shared = 0;
    for (uint32_t i = 0; i < m->n_slots;) {
        uint32_t j = i;
        while (j < m->n_slots && by[j]->object == by[i]->object) j++;
        if (j - i > 1) {
            shared++;
            if (shown < 8) {
                ls_buf b = {0};
                uint64_t end = 0;
                for (uint32_t k = i; k < j; k++)
                    if (by[k]->offset + by[k]->size > end) end = by[k]->offset + by[k]->size;
                for (uint32_t k = i; k < j && k < i + 6; k++)
                    ls_buf_printf(&b, "%s`%s`", k > i ? (k + 1 == j ? " and " : ", ") : "", names[by[k] - m->slots]);
                if (j - i > 6) ls_buf_printf(&b, " and %u more", j - i - 6);
                const ls_mem_slot *first = by[i]; /* at the object's start: offsets are sorted */
                ls_report_add(rep, NULL, names[first - m->slots], "%s share object %u (%" PRIu64 " bytes at offset %" PRIu64 ")",
                              b.s, first->object, end - first->offset, first->offset);
                ls_buf_free(&b);
                shown++;
            }
        }
        i = j;
    }
    if (shared > shown)
        ls_report_add(rep, NULL, NULL, "%u more shared objects hold several tensors each", shared - shown);
    free(by);
}

int ls_pass_memory_plan(const ls_program *in, ls_program **out, ls_pass_ctx *ctx)
{
    ls_program *q = ls_program_copy(in);
    planner P = {.q = q, .n_ids = q->next_id};
    P.sp_first = ls_calloc(P.n_ids ? P.n_ids : 1, sizeof *P.sp_first);
    P.sp_n = ls_calloc(P.n_ids ? P.n_ids : 1, sizeof *P.sp_n);
    P.skip = ls_calloc(P.n_ids ? P.n_ids : 1, sizeof *P.skip);
    lsx_bounds *b = lsx_bounds_new(q);
    find_specs(&P, b);
    lsx_bounds_free(b);
    lifetimes(&P);

    /* collect_specs_from_nodes: graph order, out-variant calls, in-place calls and get_attrs
     * skipped, constants and unbounded tensors not planned, each tensor once */
    LS_VEC(uint32_t) order = {0};
    uint32_t unplanned = 0;
    const char *first_unplanned = NULL;
    for (uint32_t i = 0; i < q->n_nodes; i++) {
        const ls_node *n = q->nodes[i];
        if (n->id >= P.n_ids || P.skip[n->id]) continue;
        if (n->kind == LS_NODE_CALL && n->op && n->dialect == LS_DIALECT_EXECUTORCH && n->nargs > n->op->schema.nparams)
            continue;
        for (uint32_t k = 0; k < P.sp_n[n->id]; k++) {
            spec *s = &P.specs.v[P.sp_list.v[P.sp_first[n->id] + k]];
            if (s->seen) continue;
            s->seen = true;
            if (s->planned) ls_vec_push(&order, P.sp_list.v[P.sp_first[n->id] + k]);
            else if (s->nbytes < 0 && !unplanned++) first_unplanned = n->name;
        }
    }
    lsx_mem_tensor *t = ls_calloc(order.n ? order.n : 1, sizeof *t);
    for (uint32_t i = 0; i < order.n; i++) {
        const spec *s = &P.specs.v[order.v[i]];
        t[i] = (lsx_mem_tensor){.size = align_up((uint64_t)s->nbytes), .first = s->first, .last = s->last, .order = i};
    }
    ls_mem_plan *m = ls_calloc(1, sizeof *m);
    m->refs = 1;
    m->algo = ctx->memory_planning == LS_MEM_NAIVE ? LS_MEM_NAIVE : LS_MEM_GREEDY;
    bool xnn = calls_xnnpack(q);
    if (m->algo == LS_MEM_NAIVE) {
        m->arena = lsx_mem_naive(t, order.n);
        m->n_objects = order.n;
    } else {
        m->padding = xnn && order.n ? XNNPACK_PADDING : 0;
        m->arena = lsx_mem_greedy(t, order.n, m->padding, &m->n_objects);
    }
    m->n_slots = order.n;
    m->slots = ls_calloc(order.n ? order.n : 1, sizeof *m->slots);
    uint32_t *slot_of_spec = ls_calloc(P.specs.n ? P.specs.n : 1, sizeof *slot_of_spec);
    const char **names = ls_malloc(sizeof *names * (order.n ? order.n : 1));
    for (uint32_t i = 0; i < order.n; i++) {
        const spec *s = &P.specs.v[order.v[i]];
        m->slots[i] = (ls_mem_slot){.node = s->node, .index = s->index, .first = s->first, .last = s->last,
                                    .offset = t[i].offset, .nbytes = (uint64_t)s->nbytes, .size = t[i].size,
                                    .object = t[i].object};
        m->tensor_bytes += (uint64_t)s->nbytes;
        names[i] = s->name;
        slot_of_spec[order.v[i]] = i + 1;
    }
    /* node → its values' slots, for emit */
    m->n_ids = P.n_ids;
    m->slot_first = P.sp_first;
    m->slot_count = P.sp_n;
    m->slot_list = ls_malloc(sizeof *m->slot_list * (P.sp_list.n ? P.sp_list.n : 1));
    for (uint32_t i = 0; i < P.sp_list.n; i++) m->slot_list[i] = slot_of_spec[P.sp_list.v[i]];
    free(slot_of_spec);

    char a[64], tb[64];
    human(a, sizeof a, m->arena);
    human(tb, sizeof tb, m->tensor_bytes);
    if (m->algo == LS_MEM_NAIVE)
        ls_report_add(ctx->report, NULL, NULL, "naive: arena %s for %s of tensors (%u tensor%s, one after the other)", a,
                      tb, m->n_slots, m->n_slots == 1 ? "" : "s");
    else
        ls_report_add(ctx->report, NULL, NULL, "greedy: arena %s for %s of tensors (%u tensor%s in %u shared object%s)",
                      a, tb, m->n_slots, m->n_slots == 1 ? "" : "s", m->n_objects, m->n_objects == 1 ? "" : "s");
    if (m->padding)
        ls_report_add(ctx->report, NULL, NULL, "%" PRIu64 " bytes of padding after them: the program calls an XNNPACK "
                      "delegate (exir's _contains_xnnpack_delegate)", m->padding);
    report_sharing(m, names, ctx->report);
    if (unplanned)
        ls_report_add(ctx->report, NULL, first_unplanned,
                      "%u tensor%s without a size bound (first `%s`) get their memory at run time", unplanned,
                      unplanned == 1 ? "" : "s", first_unplanned);
    if (m->n_slots) {
        uint32_t big = 0;
        for (uint32_t s = 1; s < m->n_slots; s++)
            if (m->slots[s].nbytes > m->slots[big].nbytes) big = s;
        human(a, sizeof a, m->slots[big].nbytes);
        ls_report_add(ctx->report, NULL, names[big], "the largest tensor is `%s`: %s", names[big], a);
    }
    lsx_exec_attach(q, m, NULL, NULL);
    lsx_plan_unref(m);
    free(names);
    free(t);
    free(order.v);
    free(P.specs.v);
    free(P.sp_list.v);
    free(P.skip);
    ls_program_touch(q); /* the index built for the plan is not kept with the step */
    *out = q;
    return 0;
}

uint32_t ls_mem_plan_slot(const ls_mem_plan *m, uint32_t node, uint32_t k)
{
    if (!m || node >= m->n_ids || k >= m->slot_count[node]) return 0;
    return m->slot_list[m->slot_first[node] + k];
}
