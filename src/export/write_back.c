/* The write-back of mutated buffers, as exir's insert_write_back_for_buffers_pass places it now
 * (exir/passes/insert_write_back_for_buffers_pass.py: _insert_copy, _insertion_point,
 * _AliasIndex, _inplace_lineage), the first thing to_executorch does to the program.
 *
 * Each BUFFER_MUTATION output whose value is not the buffer itself (nor reaches it through
 * in-place calls: _inplace_lineage) gets copy_(buffer, value), and the output reads the copy_.
 * The copy_ goes right after the earliest node after which it is safe: after the value, after
 * the last placeholder, after every reader of the buffer or of an alias of it (they must see the
 * old value; the output node aside), and after every node that may write the value or an alias
 * of it. Several copies that share the same anchor come out last one first (each is inserted
 * right after the anchor, as fx's inserting_after puts it). When the value of one write-back may
 * alias the buffer of another, or two buffers may alias, the copies all go before the output
 * node, in output order, as exir did before (its independence check).
 *
 * Aliases (_aliasing_inputs, _AliasIndex.aliases: the closure of an undirected relation, here
 * as union-find): a node may alias the inputs of its value — a getitem, a call without a trusted
 * schema (not aten: quantized_decomposed, dim_order_ops, custom ops; executorch_call_delegate)
 * all of them; view_copy and an aten view its first argument; an aten in-place call its first
 * argument (Tensor(a!) self -> Tensor(a!)); other aten calls none. May write an input
 * (_mutates_input): an in-place call its first argument, an out-variant call its out arguments,
 * a call without a trusted schema (and a getitem) any; the output node none. */
#include <stdlib.h>
#include <string.h>

#include "build.h"
#include "export_internal.h"
#include "history.h"
#include "namer.h"

typedef struct wb {
    const ls_program *q;
    uint32_t *parent; /* union-find over node ids */
    uint32_t *pos;    /* by id: position in the graph */
    /* by component root: the last position of a node reading it (the output aside), and of a
     * node that may write it; 0 with has_* false when none */
    uint32_t *last_reader, *last_writer;
    bool *has_reader, *has_writer;
} wb;

static uint32_t find(wb *W, uint32_t x)
{
    while (W->parent[x] != x) {
        W->parent[x] = W->parent[W->parent[x]];
        x = W->parent[x];
    }
    return x;
}

static void unite(wb *W, uint32_t a, uint32_t b)
{
    a = find(W, a);
    b = find(W, b);
    if (a != b) W->parent[a < b ? b : a] = a < b ? a : b;
}

typedef enum { ALIAS_NONE, ALIAS_ALL, ALIAS_FIRST, ALIAS_OUTS } alias_kind;

static bool untrusted(const ls_node *n)
{
    /* _schema_is_trusted: only aten:: schemas say how they alias and write */
    return !n->op || (n->op->flags & LS_OPF_SPECIAL) || strcmp(n->op->ns, "aten") != 0;
}

static bool out_variant_call(const ls_node *n)
{
    return n->op && n->dialect == LS_DIALECT_EXECUTORCH && n->nargs > n->op->schema.nparams;
}

/* What the value of n may alias among its inputs. */
static alias_kind aliasing(const ls_node *n)
{
    if (n->kind != LS_NODE_CALL) return ALIAS_NONE; /* the output node; placeholders and get_attrs read nothing */
    if (untrusted(n)) return ALIAS_ALL;             /* getitem, delegate calls, other namespaces */
    if (n->op->id == LS_OP_view_copy || (n->op->flags & (LS_OPF_VIEW | LS_OPF_INPLACE))) return ALIAS_FIRST;
    if (out_variant_call(n)) return ALIAS_OUTS;
    return ALIAS_NONE;
}

/* Which inputs n may write. */
static alias_kind writing(const ls_node *n)
{
    if (n->kind != LS_NODE_CALL) return ALIAS_NONE;
    if (untrusted(n)) return ALIAS_ALL;
    if (n->op->flags & LS_OPF_INPLACE) return ALIAS_FIRST;
    if (out_variant_call(n)) return ALIAS_OUTS;
    return ALIAS_NONE;
}

typedef struct each_ctx {
    wb *W;
    uint32_t self, at;
    int what; /* 0 unite, 1 reader, 2 writer */
} each_ctx;

static void on_input(uint32_t id, void *vctx)
{
    each_ctx *e = vctx;
    wb *W = e->W;
    if (id >= W->q->next_id || W->pos[id] == UINT32_MAX) return;
    if (e->what == 0) {
        unite(W, e->self, id);
        return;
    }
    uint32_t r = find(W, id);
    uint32_t *last = e->what == 1 ? W->last_reader : W->last_writer;
    bool *has = e->what == 1 ? W->has_reader : W->has_writer;
    if (!has[r] || e->at > last[r]) last[r] = e->at;
    has[r] = true;
}

static void each_input(wb *W, const ls_node *n, uint32_t at, alias_kind which, int what)
{
    each_ctx e = {W, n->id, at, what};
    uint16_t from = 0, to = n->nargs;
    if (which == ALIAS_NONE) return;
    if (which == ALIAS_FIRST) to = n->nargs ? 1 : 0;
    if (which == ALIAS_OUTS) from = n->op->schema.nparams;
    for (uint16_t a = from; a < to; a++) ls_arg_each_node(&n->args[a], on_input, &e);
}

/* _inplace_lineage: the value is the buffer itself, or in-place calls on it. */
static bool inplace_lineage(const ls_program *q, uint32_t value, uint32_t buf)
{
    for (uint32_t steps = 0; steps <= q->n_nodes; steps++) {
        if (value == buf) return true;
        const ls_node *v = ls_program_node(q, value);
        if (!v || v->kind != LS_NODE_CALL || !v->op || !(v->op->flags & LS_OPF_INPLACE) || !v->nargs ||
            v->args[0].kind != LS_ARG_NODE)
            return false;
        value = v->args[0].v.node;
    }
    return false;
}

typedef struct pair {
    uint32_t out;   /* output index */
    const ls_node *buf;
    uint32_t value; /* node id */
    uint32_t after; /* position of the anchor */
    ls_node *copy;
} pair;

static ls_node *new_copy(ls_program *q, ls_namer *names, const ls_node *buf, uint32_t value)
{
    const ls_op *cp = ls_op_get(LS_OP_copy_);
    ls_arg *a = ls_calloc(3, sizeof *a);
    a[0] = ls_arg_node(buf->id);
    a[1] = ls_arg_node(value);
    a[2] = ls_arg_bool(false);
    a[2].flags = LS_ARGF_DEFAULT;
    for (int i = 0; i < 3; i++) a[i].name = cp->schema.params[i].name;
    ls_node *w = ls_node_new(q, LS_NODE_CALL, ls_namer_take(names, ls_op_node_base(cp, LS_DIALECT_EDGE)),
                             ls_op_target(cp, LS_DIALECT_EXECUTORCH));
    w->op = cp;
    w->dialect = LS_DIALECT_EXECUTORCH;
    ls_node_set_args(w, a, 3);
    if (ls_node_tval(buf)) ls_node_set_val(w, ls_node_tval(buf));
    return w;
}

/* The write-back pairs of q's BUFFER_MUTATION outputs. */
static uint32_t find_pairs(const ls_program *q, const ls_node *outn, pair *pairs)
{
    uint32_t np = 0;
    for (uint32_t k = 0; k < q->n_outputs && k < outn->nargs; k++) {
        if (q->outputs[k].kind != LS_OUT_BUFFER_MUTATION || outn->args[k].kind != LS_ARG_NODE) continue;
        const ls_node *buf = NULL;
        for (uint32_t i = 0; i < q->n_inputs && !buf; i++)
            if (q->inputs[i].kind == LS_IN_BUFFER && q->inputs[i].target == q->outputs[k].target) {
                int32_t p = ls_program_find(q, q->inputs[i].name);
                if (p >= 0) buf = q->nodes[p];
            }
        uint32_t value = outn->args[k].v.node;
        if (!buf || inplace_lineage(q, value, buf->id)) continue;
        pairs[np++] = (pair){.out = k, .buf = buf, .value = value};
    }
    return np;
}

/* Each copy's anchor (_insertion_point), or every anchor at the output when the copies are not
 * independent. */
static void place(wb *W, pair *pairs, uint32_t np, uint32_t out_pos, uint32_t last_placeholder)
{
    bool independent = true;
    if (np > 1) {
        bool *mut = ls_calloc(W->q->next_id, sizeof *mut), *ret = ls_calloc(W->q->next_id, sizeof *ret);
        for (uint32_t i = 0; i < np && independent; i++) {
            uint32_t cm = find(W, pairs[i].buf->id), cr = find(W, pairs[i].value);
            if (ret[cm] || mut[cr] || mut[cm]) independent = false;
            mut[cm] = ret[cr] = true;
        }
        free(mut);
        free(ret);
    }
    for (uint32_t i = 0; i < np; i++) {
        if (!independent) {
            pairs[i].after = out_pos - 1; /* before the output node, in output order */
            continue;
        }
        uint32_t at = W->pos[pairs[i].value], cm = find(W, pairs[i].buf->id), cr = find(W, pairs[i].value);
        if (last_placeholder != UINT32_MAX && last_placeholder > at) at = last_placeholder;
        if (W->has_reader[cm] && W->last_reader[cm] > at) at = W->last_reader[cm];
        if (W->has_writer[cr] && W->last_writer[cr] > at) at = W->last_writer[cr];
        pairs[i].after = at;
    }
    /* the report and the node array need to know: copies before the output keep output order */
    if (!independent)
        for (uint32_t i = 0; i < np; i++) pairs[i].out |= 0x80000000u;
}

uint32_t lsx_insert_write_backs(ls_program *q, ls_namer *names, ls_report *rep)
{
    if (!q->n_nodes || q->nodes[q->n_nodes - 1]->kind != LS_NODE_OUTPUT) return 0;
    const ls_node *outn = q->nodes[q->n_nodes - 1];
    pair *pairs = ls_calloc(q->n_outputs ? q->n_outputs : 1, sizeof *pairs);
    uint32_t np = find_pairs(q, outn, pairs);
    if (!np) {
        free(pairs);
        return 0;
    }
    uint32_t ids = q->next_id;
    wb W = {.q = q};
    W.parent = ls_malloc(sizeof *W.parent * ids);
    W.pos = ls_malloc(sizeof *W.pos * ids);
    W.last_reader = ls_calloc(ids, sizeof *W.last_reader);
    W.last_writer = ls_calloc(ids, sizeof *W.last_writer);
    W.has_reader = ls_calloc(ids, sizeof *W.has_reader);
    W.has_writer = ls_calloc(ids, sizeof *W.has_writer);
    for (uint32_t i = 0; i < ids; i++) {
        W.parent[i] = i;
        W.pos[i] = UINT32_MAX;
    }
    uint32_t last_placeholder = UINT32_MAX;
    for (uint32_t i = 0; i < q->n_nodes; i++) {
        W.pos[q->nodes[i]->id] = i;
        if (q->nodes[i]->kind == LS_NODE_PLACEHOLDER) last_placeholder = i;
    }
    for (uint32_t i = 0; i < q->n_nodes; i++) each_input(&W, q->nodes[i], i, aliasing(q->nodes[i]), 0);
    for (uint32_t i = 0; i < q->n_nodes; i++) {
        const ls_node *n = q->nodes[i];
        if (n->kind == LS_NODE_OUTPUT) continue; /* readers of the buffer: the output aside */
        each_input(&W, n, i, ALIAS_ALL, 1);
        each_input(&W, n, i, writing(n), 2);
    }
    place(&W, pairs, np, q->n_nodes - 1, last_placeholder);

    /* the node array with the copies in place */
    LS_VEC(ls_node *) nodes = {0};
    ls_node *o = ls_node_clone(outn);
    ls_output_spec *specs = ls_calloc(q->n_outputs, sizeof *specs);
    memcpy(specs, q->outputs, sizeof *specs * q->n_outputs);
    for (uint32_t i = 0; i < np; i++) pairs[i].copy = new_copy(q, names, pairs[i].buf, pairs[i].value);
    for (uint32_t i = 0; i + 1 < q->n_nodes; i++) {
        ls_vec_push(&nodes, ls_node_ref(q->nodes[i]));
        bool at_end = i + 2 == q->n_nodes;
        /* inserted right after the anchor one by one: the last one first; before the output in order */
        for (uint32_t k = np; k-- > 0;) {
            uint32_t j = at_end && (pairs[0].out & 0x80000000u) ? np - 1 - k : k;
            if (pairs[j].after == i) ls_vec_push(&nodes, ls_node_ref(pairs[j].copy));
        }
    }
    for (uint32_t i = 0; i < np; i++) {
        uint32_t k = pairs[i].out & 0x7fffffffu;
        ls_arg_free(&o->args[k]);
        o->args[k] = ls_arg_node(pairs[i].copy->id);
        specs[k].name = pairs[i].copy->name;
        const ls_node *v = ls_program_node(q, pairs[i].value), *a = q->nodes[pairs[i].after];
        bool end = pairs[i].out & 0x80000000u;
        ls_report_add(rep, NULL, pairs[i].copy->name,
                      "buffer `%s` is written back by `%s` (copy_ of `%s`) %s%s%s, as ExecuTorch places it", specs[k].target,
                      pairs[i].copy->name, v ? v->name : "?", end ? "before the output" : "right after `",
                      end ? "" : a->name, end ? "" : "`");
        ls_node_unref(pairs[i].copy);
    }
    ls_vec_push(&nodes, o);
    ls_program_set_nodes(q, nodes.v, nodes.n);
    ls_program_set_outputs(q, specs, q->n_outputs);
    free(nodes.v);
    free(specs);
    free(pairs);
    free(W.parent);
    free(W.pos);
    free(W.last_reader);
    free(W.last_writer);
    free(W.has_reader);
    free(W.has_writer);
    return np;
}
