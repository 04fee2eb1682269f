/* memory_plan, the second of to_executorch's steps (ExecuTorch's MemoryPlanningPass with the
 * greedy algorithm): every tensor whose memory the runtime provides gets a place in one arena
 * (memory_id 1), 16-byte aligned. The owners of memory are the user inputs, the buffers the top
 * level mutates (alive across runs: the whole program), the alloc nodes of out arguments, the
 * outputs of delegate calls and calls without out variant. A call writing an out argument, a
 * getitem of a call with several out arguments and an in-place op live in the memory of what
 * they write. Lifetimes run from the definition to the last use in graph order (an output lives
 * to the end); tensors are placed in order of definition, each into the smallest free gap that
 * holds it among the tensors alive at that point (best fit), else after them. */
#include <inttypes.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "export_internal.h"
#include "namer.h"
#include "ptrmap.h"
#include "signature.h"

#define ALIGN 16

typedef struct planner {
    ls_program *q;
    uint32_t n_ids;
    uint32_t *owner;     /* by id: the id of the node owning the memory of its value (0: none) */
    uint32_t *first, *last; /* by owner id */
    int64_t *nbytes;     /* by owner id: -1 when not planned */
} planner;

static void use(planner *P, uint32_t id, uint32_t pos)
{
    if (id >= P->n_ids) return;
    uint32_t o = P->owner[id];
    if (o && P->last[o] < pos) P->last[o] = pos;
}

typedef struct use_ctx {
    planner *P;
    uint32_t pos;
} use_ctx;

static void use_cb(uint32_t id, void *vctx)
{
    use_ctx *u = vctx;
    use(u->P, id, u->pos);
}

static uint32_t owner_of_arg(const planner *P, const ls_arg *a, uint32_t k)
{
    uint32_t id = a->kind == LS_ARG_NODE ? a->v.node : (a->kind == LS_ARG_NODES && k < a->n) ? a->v.nodes[k] : 0;
    return id < P->n_ids ? P->owner[id] : 0;
}

static void own(planner *P, const ls_node *n, uint32_t pos, lsx_bounds *b)
{
    if (n->val_kind != LS_VAL_TENSOR || !n->nvals) return;
    int64_t nb = lsx_upper_nbytes(b, &n->vals[0]);
    if (nb < 0) return;
    P->owner[n->id] = n->id;
    P->first[n->id] = pos;
    P->last[n->id] = pos;
    P->nbytes[n->id] = nb;
}

/* Who owns each node's memory. */
static void find_owners(planner *P, lsx_bounds *b)
{
    ls_program *q = P->q;
    ls_sig sig;
    ls_sig_build(&sig, q);
    uint32_t end = q->n_nodes;
    for (uint32_t i = 0; i < q->n_nodes; i++) {
        const ls_node *n = q->nodes[i];
        if (n->kind == LS_NODE_PLACEHOLDER) {
            const ls_input_spec *s = ls_sig_spec(&sig, q, n);
            if (s && s->kind == LS_IN_USER_INPUT) own(P, n, 0, b);
            if (s && s->kind == LS_IN_BUFFER && ls_sig_is_mutated(&sig, s)) {
                own(P, n, 0, b);
                if (P->owner[n->id]) P->last[n->id] = end; /* state: alive across runs */
            }
            if (P->owner[n->id]) P->first[n->id] = 0;
            continue;
        }
        if (n->kind != LS_NODE_CALL || !n->op) continue;
        const ls_op *op = n->op;
        if (op->id == LS_OP_getitem) {
            const ls_node *of = n->nargs == 2 && n->args[0].kind == LS_ARG_NODE ? ls_program_node(q, n->args[0].v.node) : NULL;
            uint32_t k = n->nargs == 2 && n->args[1].kind == LS_ARG_INT ? (uint32_t)n->args[1].v.i : 0;
            if (of && of->dialect == LS_DIALECT_EXECUTORCH && of->op && of->nargs > of->op->schema.nparams) {
                const ls_schema *s = &of->op->schema;
                uint32_t o = s->returns_list ? owner_of_arg(P, &of->args[s->nparams], k)
                             : s->nparams + k < of->nargs ? owner_of_arg(P, &of->args[s->nparams + k], 0)
                                                          : 0;
                P->owner[n->id] = o;
            } else {
                own(P, n, i, b);
                int32_t at = of ? ls_program_pos(q, of->id) : -1;
                if (P->owner[n->id] && at >= 0) P->first[n->id] = (uint32_t)at; /* written by the call */
            }
        } else if (op->id == LS_OP_call_delegate || op->id == LS_OP_sym_size_int) {
            continue;
        } else if (op->flags & LS_OPF_INPLACE) {
            P->owner[n->id] = n->nargs ? owner_of_arg(P, &n->args[0], 0) : 0;
        } else if (n->dialect == LS_DIALECT_EXECUTORCH && n->nargs > op->schema.nparams) {
            if (!op->schema.returns_list && op->schema.nreturns == 1)
                P->owner[n->id] = owner_of_arg(P, &n->args[op->schema.nparams], 0);
        } else {
            own(P, n, i, b); /* alloc nodes, and calls without out variant */
        }
    }
    ls_sig_free(&sig);
    for (uint32_t i = 0; i < q->n_nodes; i++) {
        use_ctx u = {P, q->nodes[i]->kind == LS_NODE_OUTPUT ? end : i};
        for (uint16_t a = 0; a < q->nodes[i]->nargs; a++) ls_arg_each_node(&q->nodes[i]->args[a], use_cb, &u);
    }
}

static uint64_t align_up(uint64_t x)
{
    return (x + ALIGN - 1) / ALIGN * ALIGN;
}

static int by_first(const void *a, const void *b)
{
    const ls_mem_slot *x = a, *y = b;
    if (x->first != y->first) return x->first < y->first ? -1 : 1;
    return x->node < y->node ? -1 : x->node > y->node;
}

/* Greedy best fit over the slots in order of definition. */
static void place(ls_mem_plan *m)
{
    uint32_t *active = ls_malloc(sizeof *active * (m->n_slots ? m->n_slots : 1)); /* by offset */
    uint32_t na = 0;
    for (uint32_t s = 0; s < m->n_slots; s++) {
        ls_mem_slot *x = &m->slots[s];
        uint32_t w = 0;
        for (uint32_t k = 0; k < na; k++)
            if (m->slots[active[k]].last >= x->first) active[w++] = active[k];
        na = w;
        uint64_t need = x->nbytes, at = 0, best = 0, best_gap = UINT64_MAX;
        bool found = false;
        uint32_t ins = na;
        for (uint32_t k = 0; k <= na; k++) {
            uint64_t end = k < na ? m->slots[active[k]].offset : UINT64_MAX;
            /* the gap after the last live tensor is open-ended: taken when no closed gap fits */
            if (end >= at && end - at >= need && (end - at < best_gap || !found)) {
                found = true;
                best = at;
                best_gap = end - at;
                ins = k;
            }
            if (k < na) {
                uint64_t e = align_up(m->slots[active[k]].offset + m->slots[active[k]].nbytes);
                if (e > at) at = e;
            }
        }
        x->offset = best;
        if (align_up(best + need) > m->arena) m->arena = align_up(best + need);
        memmove(active + ins + 1, active + ins, sizeof *active * (na - ins));
        active[ins] = s;
        na++;
    }
    free(active);
}

/* The exact count, and the readable one when it differs: "448 bytes", "2048 bytes (2.0 KiB)". */
static void human(char *buf, size_t cap, uint64_t n)
{
    char r[32];
    if (n < 1024) snprintf(buf, cap, "%" PRIu64 " bytes", n);
    else snprintf(buf, cap, "%" PRIu64 " bytes (%s)", n, ls_fmt_bytes(n, r, sizeof r));
}

int ls_pass_memory_plan(const ls_program *in, ls_program **out, ls_pass_ctx *ctx)
{
    ls_program *q = ls_program_copy(in);
    planner P = {.q = q, .n_ids = q->next_id};
    P.owner = ls_calloc(P.n_ids, sizeof *P.owner);
    P.first = ls_calloc(P.n_ids, sizeof *P.first);
    P.last = ls_calloc(P.n_ids, sizeof *P.last);
    P.nbytes = ls_calloc(P.n_ids, sizeof *P.nbytes);
    lsx_bounds *b = lsx_bounds_new(q);
    find_owners(&P, b);
    lsx_bounds_free(b);

    ls_mem_plan *m = ls_calloc(1, sizeof *m);
    m->refs = 1;
    m->n_ids = P.n_ids;
    m->slot_of = ls_calloc(P.n_ids, sizeof *m->slot_of);
    for (uint32_t id = 1; id < P.n_ids; id++)
        if (P.owner[id] == id) m->n_slots++;
    m->slots = ls_calloc(m->n_slots ? m->n_slots : 1, sizeof *m->slots);
    uint32_t k = 0;
    for (uint32_t id = 1; id < P.n_ids; id++)
        if (P.owner[id] == id)
            m->slots[k++] = (ls_mem_slot){.node = id, .first = P.first[id], .last = P.last[id], .nbytes = (uint64_t)P.nbytes[id]};
    qsort(m->slots, m->n_slots, sizeof *m->slots, by_first);
    place(m);
    uint32_t *slot_by_owner = ls_calloc(P.n_ids, sizeof *slot_by_owner);
    for (uint32_t s = 0; s < m->n_slots; s++) {
        slot_by_owner[m->slots[s].node] = s + 1;
        m->tensor_bytes += m->slots[s].nbytes;
    }
    for (uint32_t id = 1; id < P.n_ids; id++)
        if (P.owner[id]) m->slot_of[id] = slot_by_owner[P.owner[id]];
    free(slot_by_owner);

    char a[64], t[64];
    human(a, sizeof a, m->arena);
    human(t, sizeof t, m->tensor_bytes);
    ls_report_add(ctx->report, NULL, NULL, "arena %s for %s of tensors (%u tensor%s)", a, t, m->n_slots,
                  m->n_slots == 1 ? "" : "s");
    uint32_t unplanned = 0;
    const char *first_unplanned = NULL;
    for (uint32_t i = 0; i < q->n_nodes; i++) {
        const ls_node *n = q->nodes[i];
        bool wants = n->val_kind == LS_VAL_TENSOR && n->kind == LS_NODE_CALL && n->op && n->op->id != LS_OP_call_delegate;
        if (wants && !P.owner[n->id]) {
            if (!unplanned++) first_unplanned = n->name;
        }
    }
    if (unplanned)
        ls_report_add(ctx->report, NULL, first_unplanned,
                      "%u tensor%s without a size bound (first `%s`) get their memory at run time", unplanned,
                      unplanned == 1 ? "" : "s", first_unplanned);
    if (m->n_slots) {
        uint32_t big = 0;
        for (uint32_t s = 1; s < m->n_slots; s++)
            if (m->slots[s].nbytes > m->slots[big].nbytes) big = s;
        const ls_node *bn = ls_program_node(q, m->slots[big].node);
        human(a, sizeof a, m->slots[big].nbytes);
        if (bn) ls_report_add(ctx->report, NULL, bn->name, "the largest tensor is `%s`: %s", bn->name, a);
    }
    lsx_exec_attach(q, m, NULL, NULL);
    lsx_plan_unref(m);
    free(P.owner);
    free(P.first);
    free(P.last);
    free(P.nbytes);
    ls_program_touch(q); /* the index built for the plan is not kept with the step */
    *out = q;
    return 0;
}
