/* The bundled delegate backend ("BundledBackend"): preprocess serialises a lowered submodule
 * (blob_write.c), init decodes and checks the blob (blob_read.c) into a handle,
 * execute runs the decoded nodes with the runtime's CPU kernels through ls_eval_node, and the
 * consumed mutable buffers live in the handle as state across calls (docs/bundled-backend.md). */
#include <inttypes.h>
#include <stdlib.h>
#include <string.h>

#include "backend.h"
#include "bundled_blob.h"
#include "ops.h"
#include "runtime.h"

#define NO_USE UINT32_MAX

typedef struct bb_handle {
    ls_bb_graph *g;
    ls_blob *blob;         /* the constants are views into it */
    ls_tensor **constants; /* per constant slot */
    ls_tensor **states;    /* per state slot: copied at init, written after every call */
    ls_value *vals;        /* per node id (1..n_nodes); NONE outside execute */
    uint32_t *last_use;    /* per node index: the last node reading it (n_nodes: an output; NO_USE: none) */
} bb_handle;

/* ---- preprocess */

static int bb_preprocess(const ls_program *sub, ls_blob **processed, ls_compile_spec **specs, uint32_t *nspecs,
                         ls_named_data *named_out, ls_error *err)
{
    (void)named_out; /* the bundled blob holds its constants itself */
    if (specs) *specs = NULL;
    if (nspecs) *nspecs = 0;
    if (ls_bb_encode(sub, processed, err) != 0)
        return ls_fail_prefix(err, "BundledBackend: preprocess `%s`", sub->name ? sub->name : "(unnamed submodule)");
    return 0;
}

/* ---- init / destroy */

static void bb_destroy(void *hv)
{
    bb_handle *h = hv;
    if (!h) return;
    if (h->vals)
        for (uint32_t i = 0; i <= h->g->n_nodes; i++) ls_value_release(&h->vals[i]);
    for (uint32_t i = 0; h->constants && i < h->g->n_constants; i++) ls_tensor_unref(h->constants[i]);
    for (uint32_t i = 0; h->states && i < h->g->n_states; i++) ls_tensor_unref(h->states[i]);
    free(h->constants);
    free(h->states);
    free(h->vals);
    free(h->last_use);
    ls_bb_graph_free(h->g);
    ls_blob_unref(h->blob);
    free(h);
}

typedef struct use_ctx {
    uint32_t *last_use;
    uint32_t at;
} use_ctx;

static void note_use(uint32_t id, void *vctx)
{
    use_ctx *c = vctx;
    c->last_use[id - 1] = c->at;
}

static int bb_init(const ls_blob *processed, const ls_compile_spec *specs, uint32_t nspecs, const ls_named_data *named,
                   void **handle, ls_error *err)
{
    (void)named;
    (void)specs;
    (void)nspecs; /* preprocess returns none; others' specs are ignored */
    *handle = NULL;
    ls_bb_graph *g;
    if (ls_bb_decode(processed, &g, err) != 0) return ls_fail_prefix(err, "BundledBackend: init");
    bb_handle *h = ls_calloc(1, sizeof *h);
    h->g = g;
    /* Constants share the blob's bytes: the handle keeps a reference (the count is not the
     * blob's content, so taking one through the const pointer is sound). */
    h->blob = ls_blob_ref((ls_blob *)processed);
    for (uint32_t i = 0; i < g->n_nodes; i++) {
        const ls_node *n = g->nodes[i];
        if (n->kind == LS_NODE_CALL && !ls_kernel_for(n->op)) {
            ls_fail(err, "BundledBackend: init %s: node %s: no CPU kernel for %s", g->name, n->name, n->op->qualname);
            bb_destroy(h);
            return -1;
        }
    }
    /* In-place kernels (index_put_, copy_) write their first argument: with one in the graph,
     * constants get bytes of their own so the blob (and every other handle) stays intact. */
    bool inplace = false;
    for (uint32_t i = 0; i < g->n_nodes; i++)
        if (g->nodes[i]->kind == LS_NODE_CALL && (g->nodes[i]->op->flags & LS_OPF_INPLACE)) inplace = true;
    h->constants = ls_calloc(g->n_constants ? g->n_constants : 1, sizeof *h->constants);
    for (uint32_t i = 0; i < g->n_constants; i++) {
        const ls_bb_tensor *c = &g->constants[i];
        h->constants[i] = ls_tensor_from_blob(h->blob, (size_t)c->offset, c->meta.dtype, c->meta.ndim, c->meta.sizes);
        if (h->constants[i] && inplace && h->constants[i]->owner == h->blob) {
            ls_tensor *own = ls_tensor_clone(h->constants[i]);
            ls_tensor_unref(h->constants[i]);
            h->constants[i] = own;
        }
        if (!h->constants[i]) {
            ls_fail(err, "BundledBackend: init %s: constant '%s' lies outside the blob", g->name, c->name);
            bb_destroy(h);
            return -1;
        }
    }
    h->states = ls_calloc(g->n_states ? g->n_states : 1, sizeof *h->states);
    for (uint32_t i = 0; i < g->n_states; i++) {
        const ls_bb_tensor *s = &g->states[i];
        h->states[i] = ls_tensor_new(s->meta.dtype, s->meta.ndim, s->meta.sizes, err);
        if (!h->states[i]) {
            ls_fail_prefix(err, "BundledBackend: init %s: state '%s'", g->name, s->name);
            bb_destroy(h);
            return -1;
        }
        memcpy(h->states[i]->data, h->blob->data + s->offset, h->states[i]->nbytes);
    }
    h->vals = ls_calloc((size_t)g->n_nodes + 1, sizeof *h->vals);
    h->last_use = ls_malloc(sizeof *h->last_use * (g->n_nodes ? g->n_nodes : 1));
    for (uint32_t i = 0; i < g->n_nodes; i++) h->last_use[i] = NO_USE;
    use_ctx uc = {.last_use = h->last_use};
    for (uint32_t i = 0; i < g->n_nodes; i++) {
        uc.at = i;
        for (uint16_t k = 0; k < g->nodes[i]->nargs; k++) ls_arg_each_node(&g->nodes[i]->args[k], note_use, &uc);
    }
    uc.at = g->n_nodes;
    for (uint16_t k = 0; k < g->output->nargs; k++) ls_arg_each_node(&g->output->args[k], note_use, &uc);
    *handle = h;
    return 0;
}

/* ---- execute */

static const ls_value *lookup(uint32_t id, void *ctx)
{
    bb_handle *h = ctx;
    static const ls_value none = {.kind = LS_V_NONE};
    return id >= 1 && id <= h->g->n_nodes ? &h->vals[id] : &none;
}

static int check_input(const bb_handle *h, uint32_t k, const ls_value *v, ls_error *err)
{
    const ls_node *n = h->g->nodes[h->g->inputs[k]];
    if (n->val_kind == LS_VAL_SYMINT) {
        if (v->kind == LS_V_INT) return 0;
        return ls_fail(err, "BundledBackend: %s: input %" PRIu32 " (%s): expected a SymInt, got %s", h->g->name, k,
                       n->name, ls_value_kind_text(v->kind));
    }
    const ls_tmeta *m = &n->vals[0];
    char want[160], got[160];
    ls_tmeta_str(m, want, sizeof want);
    if (v->kind != LS_V_TENSOR || !v->t)
        return ls_fail(err, "BundledBackend: %s: input %" PRIu32 " (%s): expected %s, got %s", h->g->name, k, n->name,
                       want, ls_value_kind_text(v->kind));
    const ls_tensor *t = v->t;
    if (ls_tensor_fits(m, t)) return 0;
    ls_tmeta tm;
    ls_tensor_meta(t, &tm);
    return ls_fail(err, "BundledBackend: %s: input %" PRIu32 " (%s): expected %s, got %s", h->g->name, k, n->name, want,
                   ls_tmeta_str(&tm, got, sizeof got));
}

/* MLX gathers with integer indices only; a boolean mask reaching the delegate is refused when
 * it runs, as the MLX runtime does, so an unfolded mask fails visibly. */
static int refuse_bool_gather(bb_handle *h, const ls_node *n, ls_error *err)
{
    if (n->nargs < 2 || n->args[1].kind != LS_ARG_OPT_NODES) return 0;
    const ls_arg *idx = &n->args[1];
    for (uint32_t j = 0; j < idx->n; j++) {
        const ls_value *v = lookup(idx->v.nodes[j], h);
        if (idx->v.nodes[j] && v->kind == LS_V_TENSOR && v->t && v->t->dtype == LS_DT_BOOL)
            return ls_fail(err, "BundledBackend: %s: node %s (%s): [Gather] Boolean indices not supported", h->g->name,
                           n->name, n->op->qualname);
    }
    return 0;
}

static int run_call(bb_handle *h, const ls_node *n, ls_value *out, ls_error *err)
{
    if (n->op->id == LS_OP_index_Tensor && refuse_bool_gather(h, n, err) != 0) return -1;
    if (ls_eval_node(n, lookup, h, out, err) != 0) return ls_fail_prefix(err, "BundledBackend: %s", h->g->name);
    return 0;
}

typedef struct release_ctx {
    bb_handle *h;
    uint32_t at;
} release_ctx;

static void release_if_dead(uint32_t id, void *vctx)
{
    release_ctx *c = vctx;
    if (id >= 1 && id <= c->h->g->n_nodes && c->h->last_use[id - 1] == c->at) ls_value_release(&c->h->vals[id]);
}

/* The value of an output argument: a node's value, or a constant written in the graph. */
static ls_value output_value(bb_handle *h, const ls_arg *a)
{
    switch (a->kind) {
    case LS_ARG_NODE: return ls_value_copy(lookup(a->v.node, h));
    case LS_ARG_INT: return ls_value_int(a->v.i);
    case LS_ARG_FLOAT: return ls_value_float(a->v.f);
    case LS_ARG_BOOL: return ls_value_bool(a->v.b);
    default: return ls_value_none();
    }
}

/* Writes a mutation's result into its state slot (MLX's IdCopy into the mutable buffer). The
 * bytes are copied into the slot's tensor when nothing else holds it; otherwise (a user output
 * returns the old state, or a view of it) the slot gets a copy of the new value. */
static int write_state(bb_handle *h, uint32_t s, const ls_value *v, ls_error *err)
{
    ls_tensor *st = h->states[s];
    const char *name = h->g->states[s].name;
    if (v->kind != LS_V_TENSOR || !v->t)
        return ls_fail(err, "BundledBackend: %s: the new value of state '%s' is %s, not a tensor", h->g->name, name,
                       ls_value_kind_text(v->kind));
    const ls_tensor *t = v->t;
    if (t == st) return 0;
    bool same = t->dtype == st->dtype && t->ndim == st->ndim;
    for (int d = 0; same && d < t->ndim; d++) same = t->sizes[d] == st->sizes[d];
    if (!same) {
        ls_tmeta a, b;
        char sa[160], sb[160];
        ls_tensor_meta(st, &a);
        ls_tensor_meta(t, &b);
        return ls_fail(err, "BundledBackend: %s: state '%s' is %s but its new value is %s", h->g->name, name,
                       ls_tmeta_str(&a, sa, sizeof sa), ls_tmeta_str(&b, sb, sizeof sb));
    }
    if (st->refs == 1 && st->owner->refs == 1) {
        if (st->data != t->data) memmove(st->data, t->data, st->nbytes);
        st->hash_valid = false;
    } else {
        h->states[s] = ls_tensor_clone(t);
        ls_tensor_unref(st);
    }
    return 0;
}

static int bb_execute(void *hv, const ls_value *inputs, uint32_t n_inputs, ls_value **outputs, uint32_t *n_outputs,
                      ls_error *err)
{
    bb_handle *h = hv;
    const ls_bb_graph *g = h->g;
    *outputs = NULL;
    *n_outputs = 0;
    if (n_inputs != g->n_inputs)
        return ls_fail(err, "BundledBackend: %s: %" PRIu32 " inputs given, the delegate takes %" PRIu32, g->name,
                       n_inputs, g->n_inputs);
    for (uint32_t k = 0; k < n_inputs; k++)
        if (check_input(h, k, &inputs[k], err) != 0) return -1;

    int rc = 0;
    release_ctx rel = {.h = h};
    for (uint32_t i = 0; i < g->n_nodes && rc == 0; i++) {
        const ls_node *n = g->nodes[i];
        ls_value *v = &h->vals[i + 1];
        if (n->kind == LS_NODE_PLACEHOLDER) {
            uint32_t slot = g->role_index[i];
            if (g->role[i] == LS_BB_USER_INPUT) *v = ls_value_copy(&inputs[slot]);
            else if (g->role[i] == LS_BB_CONSTANT) *v = ls_value_tensor(ls_tensor_ref(h->constants[slot]));
            else *v = ls_value_tensor(ls_tensor_ref(h->states[slot]));
        } else {
            rc = run_call(h, n, v, err);
        }
        rel.at = i; /* values no later node or output reads are dropped now */
        for (uint16_t k = 0; k < n->nargs; k++) ls_arg_each_node(&n->args[k], release_if_dead, &rel);
        if (h->last_use[i] == NO_USE) ls_value_release(v);
    }

    ls_value *user = NULL, *writes = NULL;
    if (rc == 0) {
        user = ls_calloc(g->n_user_outputs ? g->n_user_outputs : 1, sizeof *user);
        writes = ls_calloc(g->n_outputs ? g->n_outputs : 1, sizeof *writes);
        for (uint32_t k = 0, u = 0; k < g->n_outputs; k++) {
            ls_value v = output_value(h, &g->output->args[k]);
            if (g->outputs[k].kind == LS_BB_OUT_USER) user[u++] = v;
            else writes[k] = v;
        }
    }
    for (uint32_t i = 1; i <= g->n_nodes; i++) ls_value_release(&h->vals[i]);
    for (uint32_t k = 0; rc == 0 && k < g->n_outputs; k++)
        if (g->outputs[k].kind == LS_BB_OUT_STATE) rc = write_state(h, g->outputs[k].state, &writes[k], err);
    for (uint32_t k = 0; writes && k < g->n_outputs; k++) ls_value_release(&writes[k]);
    free(writes);
    /* A user output that is a state tensor (an in-place op's result, the buffer itself) or views
     * its bytes gets a copy: what execute returned must not change with later calls. */
    for (uint32_t u = 0; rc == 0 && u < g->n_user_outputs; u++) {
        ls_tensor *t = user[u].kind == LS_V_TENSOR ? user[u].t : NULL;
        for (uint32_t s = 0; t && s < g->n_states; s++) {
            if (t != h->states[s] && t->owner != h->states[s]->owner) continue;
            user[u].t = ls_tensor_clone(t);
            ls_tensor_unref(t);
            break;
        }
    }
    if (rc != 0) {
        for (uint32_t u = 0; user && u < g->n_user_outputs; u++) ls_value_release(&user[u]);
        free(user);
        return -1;
    }
    *outputs = user;
    *n_outputs = g->n_user_outputs;
    return 0;
}

/* ---- state */

static uint32_t bb_state_count(void *hv)
{
    const bb_handle *h = hv;
    return h ? h->g->n_states : 0;
}

static const char *bb_state_name(void *hv, uint32_t i)
{
    const bb_handle *h = hv;
    return h && i < h->g->n_states ? h->g->states[i].name : NULL;
}

static ls_tensor *bb_state_get(void *hv, uint32_t i)
{
    const bb_handle *h = hv;
    return h && i < h->g->n_states ? h->states[i] : NULL;
}

const ls_backend ls_bundled_backend = {
    .id = "BundledBackend",
    .preprocess = bb_preprocess,
    .init = bb_init,
    .execute = bb_execute,
    .state_count = bb_state_count,
    .state_name = bb_state_name,
    .state_get = bb_state_get,
    .destroy = bb_destroy,
};
