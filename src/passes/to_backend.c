/* to_backend: every tag becomes a lowered submodule — its own program and signature — called
 * through executorch_call_delegate + getitem nodes (exir-semantics §6).
 *
 * Tagged constants move into their delegate and leave the top level when nothing there reads
 * them any more; a mutable buffer tagged to a backend with state moves in as state, and its
 * BUFFER_MUTATION output leaves the top level with it (the Core ML issue, #4830); everything
 * else the partition reads becomes a delegate input. ExecuTorch's errors keep their texts.
 *
 * ExecuTorch lowers one tag after the other, each time rewriting the whole graph; here every
 * tag is lowered in one sweep (same names and numbering as one after the other), the node
 * array is rebuilt once with a stable topological order, and the moved nodes are shared by
 * reference with the step before: a lowered node keeps its id inside its delegate, and each
 * delegate input takes the id of the value it stands for. */
#include <stdlib.h>
#include <string.h>

#include "backend.h"
#include "build.h"
#include "pass_util.h"
#include "passes.h"

typedef struct tagrun {
    const char *tag;
    const char *backend_id;
    LS_VEC(uint32_t) members; /* positions, graph order */
} tagrun;

typedef struct block {
    ls_node *get_attr, *call;
    ls_node **getitems;
    uint32_t n_getitems;
    uint32_t key;    /* where it goes: the position of the partition's last node */
    uint32_t *ext;   /* positions of the values it reads (in the step before) */
    uint32_t n_ext;
} block;

typedef struct lower {
    ls_program *q;
    ls_pass_ctx *ctx;
    uint32_t n;
    ls_sig sig;
    pu_users users;
    ls_namer *names;
    int32_t *tix;         /* per position: tag index or -1 */
    uint32_t *stamp;      /* per position scratch */
    int32_t *spec_ix;     /* per position: input spec of a placeholder, -1 none, -2 not looked up */
    uint32_t *ids, ids_cap;
    uint32_t *repl_id;    /* per position: the getitem standing for it now, 0 if none */
    const char **repl_name;
    bool *drop_output;    /* per output spec: a consumed buffer mutation */
    bool *drop_input;     /* per input spec */
    uint32_t *spec_next;  /* output specs naming the same node, chained */
    pu_map spec_first;    /* node name → first output spec index */
    int64_t debug_handle;
    uint32_t module_index;
    const char *getitem, *call_delegate; /* interned once */
    LS_VEC(ls_submodule) subs;
} lower;

static int32_t pos_of(const lower *L, uint32_t id)
{
    return pu_pos(&L->users, id);
}

/* The input spec of the placeholder at pos (looked up once per placeholder: the checks, the
 * delegate's inputs and its data all ask). */
static const ls_input_spec *spec_at(lower *L, uint32_t pos)
{
    if (L->spec_ix[pos] == -2) {
        const ls_input_spec *s = ls_sig_spec(&L->sig, L->q, L->q->nodes[pos]);
        L->spec_ix[pos] = s ? (int32_t)(s - L->q->inputs) : -1;
    }
    return L->spec_ix[pos] >= 0 ? &L->q->inputs[L->spec_ix[pos]] : NULL;
}

/* exir's _get_node_list_with_same_tag checks (§3.3). */
static int check_members(lower *L, const tagrun *t)
{
    for (uint32_t k = 0; k < t->members.n; k++) {
        uint32_t pos = t->members.v[k];
        const ls_node *n = L->q->nodes[pos];
        if (n->kind == LS_NODE_OUTPUT) return ls_fail(L->ctx->err, "output node %s should not be tagged", n->name);
        if (n->kind == LS_NODE_GET_ATTR)
            return ls_fail(L->ctx->err, "%s: a get_attr node cannot be delegated (tag %s)", n->name, t->tag);
        if (n->kind != LS_NODE_PLACEHOLDER) continue;
        const ls_input_spec *s = spec_at(L, pos);
        if (!s || !ls_input_kind_holds_data(s->kind))
            return ls_fail(L->ctx->err,
                           "placeholder node for non-params, non-buffer, and non-tensor constants should not be tagged: %s ",
                           n->name);
        for (uint32_t u = L->users.off[pos]; u < L->users.off[pos + 1]; u++) {
            const ls_node *user = L->q->nodes[L->users.pos[u]];
            if (user->tag != n->tag)
                return ls_fail(L->ctx->err, "constant data node (%s) is tagged with (%s) but has user (%s) which has tag (%s)",
                               n->name, pu_tag_text(n->tag), user->name, pu_tag_text(user->tag));
        }
    }
    return 0;
}

/* The partition must be convex: nothing outside it may read from it and feed it again. */
static int check_convex(lower *L, uint32_t t, const tagrun *tr)
{
    /* tagged placeholders read nothing, so no path runs through them: start at the first call */
    uint32_t k0 = 0;
    while (k0 < tr->members.n && L->q->nodes[tr->members.v[k0]]->kind == LS_NODE_PLACEHOLDER) k0++;
    if (k0 == tr->members.n) return 0;
    uint32_t first = tr->members.v[k0], last = tr->members.v[tr->members.n - 1];
    uint32_t mark = t + 1;
    for (uint32_t pos = first; pos <= last; pos++) {
        bool member = L->tix[pos] == (int32_t)t;
        uint32_t k = pu_inputs(L->q->nodes[pos], &L->ids, &L->ids_cap);
        bool tainted = false;
        for (uint32_t a = 0; a < k && !tainted; a++) {
            int32_t p = pos_of(L, L->ids[a]);
            if (p < (int32_t)first) continue;
            if (member && L->stamp[p] == mark)
                return ls_fail(L->ctx->err,
                               "Invalid partition, found dependency cycles (%s: `%s` reads `%s`, which is computed "
                               "outside %s from it)",
                               tr->tag, L->q->nodes[pos]->name, L->q->nodes[p]->name, tr->tag);
            if (!member && (L->tix[p] == (int32_t)t || L->stamp[p] == mark)) tainted = true;
        }
        if (tainted) L->stamp[pos] = mark;
    }
    return 0;
}

/* Output specs that name a node. */
static uint32_t specs_naming(const lower *L, const char *name, uint32_t *out, uint32_t max)
{
    uint32_t i, n = 0;
    if (!pu_map_get(&L->spec_first, name, &i)) return 0;
    for (; i != UINT32_MAX; i = L->spec_next[i])
        if (n < max) out[n++] = i;
        else n++;
    return n;
}

/* The order exir lowers partitions in, which numbers lowered_module_<i>: grouped by backend
 * (in the order partition_tags first names each), each group in graph order of its call
 * (_create_partitions_in_graph_module collects the call_module nodes from the graph; the call
 * sits where its partition ends), and lower_all_submodules_to_backend inserts them in that
 * order. */
typedef struct tag_key {
    uint32_t group, end, index;
} tag_key;

static int by_lowering(const void *a, const void *b)
{
    const tag_key *x = a, *y = b;
    if (x->group != y->group) return x->group < y->group ? -1 : 1;
    if (x->end != y->end) return x->end < y->end ? -1 : 1;
    return x->index < y->index ? -1 : x->index > y->index;
}

static void lowering_order(tagrun *tr, uint32_t n)
{
    if (n < 2) return;
    tag_key *k = ls_malloc(sizeof *k * (n ? n : 1));
    ls_ptrmap groups = {0}; /* backend id (interned) → the first tag naming it */
    for (uint32_t t = 0; t < n; t++) {
        uintptr_t g = t;
        ls_ptrmap_add(&groups, tr[t].backend_id, t, &g);
        k[t] = (tag_key){(uint32_t)g, tr[t].members.v[tr[t].members.n - 1], t};
    }
    ls_ptrmap_free(&groups);
    qsort(k, n, sizeof *k, by_lowering);
    tagrun *sorted = ls_malloc(sizeof *sorted * (n ? n : 1));
    for (uint32_t t = 0; t < n; t++) sorted[t] = tr[k[t].index];
    memcpy(tr, sorted, sizeof *tr * n);
    free(sorted);
    free(k);
}

/* lowered_module_<i> for the first i that names neither a node nor a submodule (both were
 * put in L->names when the pass started). */
static const char *fresh_module_name(lower *L)
{
    char buf[32] = "lowered_module_";
    const size_t prefix = 15;
    for (;; L->module_index++) {
        char digits[12];
        size_t nd = 0;
        uint32_t v = L->module_index;
        do digits[nd++] = (char)('0' + v % 10), v /= 10;
        while (v);
        for (size_t k = 0; k < nd; k++) buf[prefix + k] = digits[nd - 1 - k];
        const char *nm = ls_intern_n(buf, prefix + nd);
        if (ls_namer_taken(L->names, nm)) continue;
        L->module_index++;
        ls_namer_reserve(L->names, nm);
        return nm;
    }
}

typedef struct dout {
    uint32_t pos;      /* the member whose value leaves the partition */
    bool mutation;     /* a consumed buffer's mutation: stays inside as state */
    const char *target;
    uint32_t spec;     /* the outer spec it takes over (mutations) */
} dout;

static int lower_one(lower *L, uint32_t t, tagrun *tr, block *bk)
{
    ls_program *q = L->q;
    uint32_t mark = 0x80000000u | t;
    /* the delegate's inputs: tagged data placeholders, then outside values at first use */
    LS_VEC(uint32_t) tagged_ph = {0};
    LS_VEC(uint32_t) ext = {0};
    LS_VEC(uint32_t) calls = {0};
    pu_map consumed = {0}; /* targets moving into the delegate */
    for (uint32_t k = 0; k < tr->members.n; k++) {
        uint32_t pos = tr->members.v[k];
        const ls_node *n = q->nodes[pos];
        if (n->kind == LS_NODE_PLACEHOLDER) {
            ls_vec_push(&tagged_ph, pos);
            const ls_input_spec *s = spec_at(L, pos);
            pu_map_put(&consumed, s->target, 1);
            continue;
        }
        ls_vec_push(&calls, pos);
        uint32_t na = pu_inputs(n, &L->ids, &L->ids_cap);
        for (uint32_t a = 0; a < na; a++) {
            int32_t p = pos_of(L, L->ids[a]);
            if (p < 0 || L->tix[p] == (int32_t)t || L->stamp[p] == mark) continue;
            L->stamp[p] = mark;
            ls_vec_push(&ext, (uint32_t)p);
        }
    }
    /* the values that leave it, in graph order; consumed buffers' mutations stay inside */
    LS_VEC(dout) outs = {0};
    int rc = 0;
    for (uint32_t c = 0; c < calls.n && rc == 0; c++) {
        uint32_t pos = calls.v[c];
        bool outside = false, outside_node = false;
        for (uint32_t u = L->users.off[pos]; u < L->users.off[pos + 1]; u++) {
            uint32_t up = L->users.pos[u];
            if (L->tix[up] == (int32_t)t) continue;
            outside = true;
            if (q->nodes[up]->kind != LS_NODE_OUTPUT) outside_node = true;
        }
        if (!outside) continue;
        const ls_node *n = q->nodes[pos];
        if (n->val_kind == LS_VAL_TENSORS) {
            rc = ls_fail(L->ctx->err, "%s: `%s` returns several values and is read outside the partition", tr->tag, n->name);
            break;
        }
        dout o = {.pos = pos};
        uint32_t sp[8];
        uint32_t ns = specs_naming(L, n->name, sp, 8);
        for (uint32_t k = 0; k < ns && k < 8; k++) {
            const ls_output_spec *s = &q->outputs[sp[k]];
            if (s->kind != LS_OUT_BUFFER_MUTATION || !s->target || !pu_map_has(&consumed, s->target)) continue;
            if (ns != 1) {
                rc = ls_fail(L->ctx->err,
                             "Constant %s was tagged to be consumed by the buffer, and was found to also contain a "
                             "buffer mutation. However this buffer mutation node was found to also be used as other "
                             "types of outputs which is currently not supported. Please file an issue on Github.",
                             s->target);
                break;
            }
            if (outside_node) {
                rc = ls_fail(L->ctx->err,
                             "%s: the new value of buffer %s (`%s`) becomes the delegate's state but is also read "
                             "outside it",
                             tr->tag, s->target, n->name);
                break;
            }
            o.mutation = true;
            o.target = s->target;
            o.spec = sp[k];
        }
        ls_vec_push(&outs, o);
    }
    if (rc != 0) goto done;

    /* the delegate's program */
    const char *mod_name = fresh_module_name(L);
    ls_program *d = ls_program_new(mod_name, (ls_dialect)q->dialect);
    d->verifier = q->verifier;
    d->path = q->path;
    d->has_weights = q->has_weights;
    d->torch_version = q->torch_version;
    d->schema_major = q->schema_major;
    d->schema_minor = q->schema_minor;
    LS_VEC(ls_node *) dn = {0};
    LS_VEC(ls_input_spec) din = {0};
    LS_VEC(ls_named_tensor) dstate = {0}, dconst = {0};
    pu_map placed = {0};
    /* arrange_graph_placeholders: tagged parameters, tagged buffers, then the rest in order */
    for (int pass = 0; pass < 3; pass++)
        for (uint32_t k = 0; k < tagged_ph.n; k++) {
            const ls_input_spec *s = spec_at(L, tagged_ph.v[k]);
            int want = s->kind == LS_IN_PARAMETER ? 0 : s->kind == LS_IN_BUFFER ? 1 : 2;
            if (want != pass) continue;
            ls_vec_push(&dn, ls_node_ref(q->nodes[tagged_ph.v[k]]));
            ls_input_spec cs = *s;
            ls_arg_copy(&cs.value, &s->value);
            ls_vec_push(&din, cs);
            const ls_named_tensor *data = ls_sig_data(&L->sig, q, s);
            bool in_state = ls_input_in_state(s->kind, s->persistent);
            if (data && !pu_map_has(&placed, s->target)) {
                pu_map_put(&placed, s->target, 1);
                ls_named_tensor e = {.name = s->target, .t = ls_tensor_ref(data->t), .meta = data->meta};
                if (in_state) ls_vec_push(&dstate, e);
                else ls_vec_push(&dconst, e);
            }
        }
    for (uint32_t k = 0; k < ext.n; k++) {
        const ls_node *src = q->nodes[ext.v[k]];
        /* the id the partition's nodes read; the name of what stands for it at the top level now
         * (an earlier delegate's getitem), as lowering one tag after the other names it */
        uint32_t id = src->id;
        const char *name = L->repl_id[ext.v[k]] ? L->repl_name[ext.v[k]] : src->name;
        ls_node *ph = ls_calloc(1, sizeof *ph);
        ph->refs = 1;
        ph->id = id;
        ph->kind = LS_NODE_PLACEHOLDER;
        ph->name = name;
        ph->target = name;
        ls_node_set_vals(ph, (ls_val_kind)src->val_kind, src->vals, src->nvals);
        ls_vec_push(&dn, ph);
        ls_input_spec s = {.kind = LS_IN_USER_INPUT, .name = name};
        ls_vec_push(&din, s);
    }
    for (uint32_t c = 0; c < calls.n; c++) ls_vec_push(&dn, ls_node_ref(q->nodes[calls.v[c]]));
    /* arrange_graph_outputs: mutations first, then the values the top level reads */
    LS_VEC(ls_output_spec) dos = {0};
    ls_node *dout_node = ls_node_new(q, LS_NODE_OUTPUT, "output", NULL);
    ls_arg *oargs = ls_calloc(outs.n ? outs.n : 1, sizeof *oargs);
    uint32_t no = 0, n_user = 0;
    for (int pass = 0; pass < 2; pass++)
        for (uint32_t k = 0; k < outs.n; k++) {
            if (outs.v[k].mutation != (pass == 0)) continue;
            const ls_node *v = q->nodes[outs.v[k].pos];
            oargs[no++] = ls_arg_node(v->id);
            ls_output_spec s = {.kind = (uint8_t)(pass == 0 ? LS_OUT_BUFFER_MUTATION : LS_OUT_USER_OUTPUT),
                                .name = v->name,
                                .target = outs.v[k].target};
            ls_vec_push(&dos, s);
            n_user += pass == 1;
        }
    ls_node_set_args(dout_node, oargs, (uint16_t)no);
    ls_vec_push(&dn, dout_node);
    d->next_id = q->next_id;
    ls_program_set_nodes(d, dn.v, dn.n);
    ls_program_set_inputs(d, din.v, din.n);
    ls_program_set_outputs(d, dos.v, dos.n);
    d->state_dict = dstate.v;
    d->n_state = dstate.n;
    d->constants = dconst.v;
    d->n_constants = dconst.n;
    pu_map_free(&placed);
    for (uint32_t k = 0; k < din.n; k++) ls_arg_free(&din.v[k].value);
    free(dn.v);
    free(din.v);
    free(dos.v);

    /* the call: get_attr lowered_module_<i>, executorch_call_delegate, one getitem per value */
    bk->get_attr = ls_node_new(q, LS_NODE_GET_ATTR, mod_name, mod_name);
    const ls_op *cd = ls_op_get(LS_OP_call_delegate);
    bk->call = ls_node_new(q, LS_NODE_CALL, ls_namer_take_interned(L->names, L->call_delegate), ls_op_target(cd, LS_DIALECT_NONE));
    bk->call->op = cd;
    bk->call->debug_handle = ++L->debug_handle;
    ls_tmeta *vals = ls_calloc(n_user ? n_user : 1, sizeof *vals);
    bk->getitems = ls_calloc(n_user ? n_user : 1, sizeof *bk->getitems);
    for (uint32_t k = 0, u = 0; k < outs.n; k++) {
        if (outs.v[k].mutation) continue;
        const ls_node *v = q->nodes[outs.v[k].pos];
        if (ls_node_tval(v)) vals[u] = *ls_node_tval(v);
        ls_node *g = ls_node_new_getitem(q, ls_namer_take_interned(L->names, L->getitem), bk->call->id, u);
        ls_node_set_vals(g, (ls_val_kind)v->val_kind, v->vals, v->nvals);
        bk->getitems[u++] = g;
        L->repl_id[outs.v[k].pos] = g->id;
        L->repl_name[outs.v[k].pos] = g->name;
    }
    bk->n_getitems = n_user;
    ls_node_set_vals(bk->call, LS_VAL_TENSORS, vals, (uint16_t)n_user);
    free(vals);
    bk->key = tr->members.v[tr->members.n - 1];
    bk->ext = ext.v;
    bk->n_ext = ext.n;
    ext.v = NULL;

    /* the top level's signature: consumed inputs and mutations leave it */
    for (uint32_t k = 0; k < tagged_ph.n; k++) {
        const ls_input_spec *s = spec_at(L, tagged_ph.v[k]);
        if (s) L->drop_input[s - q->inputs] = true;
    }
    for (uint32_t k = 0; k < outs.n; k++) {
        if (!outs.v[k].mutation) continue;
        L->drop_output[outs.v[k].spec] = true;
        ls_report_add(L->ctx->report, mod_name, q->nodes[outs.v[k].pos]->name,
                      "buffer `%s` becomes state of %s: its mutation `%s` moves into `%s`", outs.v[k].target, tr->tag,
                      q->nodes[outs.v[k].pos]->name, mod_name);
    }

    /* preprocess; a backend lowerscope does not have is stood in for by the bundled delegate
     * (ls_backend_resolve), which may refuse the module: then it stays unprocessed, not an error */
    ls_submodule sub = {.name = mod_name, .backend_id = tr->backend_id, .program = d};
    bool simulated = false;
    const ls_backend *be = ls_backend_resolve(tr->backend_id, NULL, &simulated);
    ls_buf prep = {0};
    if (be && be->preprocess) {
        ls_error perr;
        ls_named_data *named = ls_named_data_new();
        int prc = be->preprocess(d, &sub.processed, &sub.specs, &sub.nspecs, named, &perr);
        if (prc == 0 && ls_named_data_count(named))
            prc = ls_named_data_merge(ls_program_named_data_mut(L->q), named, &perr);
        ls_named_data_unref(named);
        const ls_backend *bundled = ls_backend_find("BundledBackend");
        if (prc != 0 && !simulated && perr.code == LS_ERR_NEEDS && be != bundled && bundled) {
            /* the backend is here but cannot write this module (an op its writer lacks): the
             * bundled delegate stands in for it, and the report says why */
            ls_buf_printf(&prep, " (%s cannot write it: %s)", tr->backend_id, perr.msg);
            ls_blob_unref(sub.processed);
            sub.processed = NULL;
            be = bundled;
            simulated = true;
            prc = be->preprocess(d, &sub.processed, &sub.specs, &sub.nspecs, NULL, &perr);
        }
        if (prc == 0) {
            ls_buf_printf(&prep, ", preprocessed%s to %zu bytes", simulated ? " by the bundled delegate standing in" : "",
                          sub.processed ? sub.processed->size : (size_t)0);
        } else if (simulated) {
            ls_buf_printf(&prep, " (no backend %s here and the bundled delegate cannot stand in: %s; not preprocessed)",
                          tr->backend_id, perr.msg);
        } else {
            rc = ls_fail(L->ctx->err, "%s: %s preprocess: %s", mod_name, tr->backend_id, perr.msg);
            ls_program_unref(d);
            goto done;
        }
    }
    ls_vec_push(&L->subs, sub);

    ls_buf b = {0};
    ls_buf_printf(&b, "%s becomes `%s` (%s): %u node%s, %u input%s", tr->tag, mod_name, tr->backend_id, calls.n,
                  calls.n == 1 ? "" : "s", bk->n_ext, bk->n_ext == 1 ? "" : "s");
    if (bk->n_ext) {
        const char **nm = ls_malloc(sizeof *nm * bk->n_ext);
        for (uint32_t k = 0; k < bk->n_ext; k++)
            nm[k] = L->repl_id[bk->ext[k]] ? L->repl_name[bk->ext[k]] : q->nodes[bk->ext[k]]->name;
        ls_buf_puts(&b, " (");
        pu_names(&b, nm, bk->n_ext, 4);
        ls_buf_putc(&b, ')');
        free(nm);
    }
    ls_buf_printf(&b, ", %u output%s", n_user, n_user == 1 ? "" : "s");
    if (tagged_ph.n) {
        const char **nm = ls_malloc(sizeof *nm * tagged_ph.n);
        for (uint32_t k = 0; k < tagged_ph.n; k++) nm[k] = q->nodes[tagged_ph.v[k]]->name;
        ls_buf_puts(&b, "; takes ");
        pu_names(&b, nm, tagged_ph.n, 4);
        free(nm);
    }
    if (prep.len) ls_buf_putn(&b, prep.s, prep.len);
    ls_buf_free(&prep);
    char *text = ls_buf_take(&b);
    ls_report_add(L->ctx->report, NULL, bk->call->name, "%s", text);
    free(text);

done:
    free(tagged_ph.v);
    free(ext.v);
    free(calls.v);
    free(outs.v);
    pu_map_free(&consumed);
    return rc;
}

/* ---- the new top level, in a stable topological order: kept nodes where they were, each
 * delegate call where its partition ended, and what reads it after it */

typedef struct heap {
    uint32_t *v;
    uint32_t n;
    const uint32_t *key;
} heap;

static void heap_push(heap *h, uint32_t x)
{
    uint32_t i = h->n++;
    while (i > 0) {
        uint32_t p = (i - 1) / 2;
        if (h->key[h->v[p]] <= h->key[x]) break;
        h->v[i] = h->v[p];
        i = p;
    }
    h->v[i] = x;
}

static uint32_t heap_pop(heap *h)
{
    uint32_t top = h->v[0], x = h->v[--h->n], i = 0;
    for (;;) {
        uint32_t c = 2 * i + 1;
        if (c >= h->n) break;
        if (c + 1 < h->n && h->key[h->v[c + 1]] < h->key[h->v[c]]) c++;
        if (h->key[x] <= h->key[h->v[c]]) break;
        h->v[i] = h->v[c];
        i = c;
    }
    if (h->n) h->v[i] = x;
    return top;
}

static void rebuild(lower *L, uint32_t nt, block *bks)
{
    ls_program *q = L->q;
    uint32_t n = L->n, nv = n + nt;
    uint32_t *key = ls_malloc(sizeof *key * (nv ? nv : 1));
    uint32_t *indeg = ls_calloc(nv ? nv : 1, sizeof *indeg);
    LS_VEC(uint32_t) ef = {0};
    LS_VEC(uint32_t) et = {0};
    for (uint32_t i = 0; i < n; i++) key[i] = i;
    for (uint32_t t = 0; t < nt; t++) key[n + t] = bks[t].key;
#define VERTEX(p) (L->tix[p] >= 0 ? n + (uint32_t)L->tix[p] : (p))
    /* kept nodes may already read getitems (new ids the index does not know) */
    pu_map block_of_getitem = {0};
    for (uint32_t t = 0; t < nt; t++)
        for (uint32_t g = 0; g < bks[t].n_getitems; g++)
            pu_map_put(&block_of_getitem, (const void *)(uintptr_t)bks[t].getitems[g]->id, t);
    for (uint32_t i = 0; i < n; i++) {
        if (L->tix[i] >= 0) continue;
        uint32_t k = pu_inputs(q->nodes[i], &L->ids, &L->ids_cap);
        for (uint32_t a = 0; a < k; a++) {
            uint32_t t;
            uint32_t from;
            if (pu_map_get(&block_of_getitem, (const void *)(uintptr_t)L->ids[a], &t)) {
                from = n + t;
            } else {
                int32_t p = pos_of(L, L->ids[a]);
                if (p < 0) continue;
                from = VERTEX((uint32_t)p);
            }
            ls_vec_push(&ef, from);
            ls_vec_push(&et, i);
            indeg[i]++;
        }
    }
    pu_map_free(&block_of_getitem);
    for (uint32_t t = 0; t < nt; t++)
        for (uint32_t k = 0; k < bks[t].n_ext; k++) {
            uint32_t p = bks[t].ext[k];
            ls_vec_push(&ef, VERTEX(p));
            ls_vec_push(&et, n + t);
            indeg[n + t]++;
        }
#undef VERTEX
    uint32_t *off, *adj;
    pu_csr(nv, ef.v, et.v, ef.n, &off, &adj);
    heap h = {.v = ls_malloc(sizeof *h.v * (nv ? nv : 1)), .key = key};
    for (uint32_t v = 0; v < nv; v++)
        if ((v >= n || L->tix[v] < 0) && !indeg[v]) heap_push(&h, v);
    uint32_t total = 0;
    for (uint32_t t = 0; t < nt; t++) total += 2 + bks[t].n_getitems;
    ls_node **nodes = ls_malloc(sizeof *nodes * (n + total));
    uint32_t m = 0;
    while (h.n) {
        uint32_t v = heap_pop(&h);
        if (v < n) {
            nodes[m++] = ls_node_ref(q->nodes[v]);
        } else {
            block *b = &bks[v - n];
            nodes[m++] = b->get_attr;
            nodes[m++] = b->call;
            for (uint32_t g = 0; g < b->n_getitems; g++) nodes[m++] = b->getitems[g];
            b->get_attr = b->call = NULL;
            b->n_getitems = 0;
        }
        for (uint32_t e = off[v]; e < off[v + 1]; e++)
            if (--indeg[adj[e]] == 0) heap_push(&h, adj[e]);
    }
    ls_program_set_nodes(q, nodes, m);
    free(nodes);
    free(h.v);
    free(key);
    free(indeg);
    free(ef.v);
    free(et.v);
    free(off);
    free(adj);
}

/* The position in `in` of the node output spec s names: the output node's argument s when it
 * has that name (specs and output values correspond), else found by name. */
static int32_t named_output(const lower *L, const ls_program *in, int32_t out_pos, uint32_t s, const char *name)
{
    const ls_node *o = out_pos >= 0 ? in->nodes[out_pos] : NULL;
    if (o && s < o->nargs && o->args[s].kind == LS_ARG_NODE) {
        int32_t p = pos_of(L, o->args[s].v.node);
        if (p >= 0 && in->nodes[p]->name == name) return p;
    }
    return ls_program_find(in, name);
}

int ls_pass_to_backend(const ls_program *in, ls_program **out, ls_pass_ctx *ctx)
{
    lower L = {.ctx = ctx, .names = ls_namer_new(NULL)};
    L.q = ls_program_copy(in);
    ls_program *q = L.q;
    L.n = q->n_nodes;
    uint32_t n = L.n;
    ls_sig_build(&L.sig, q);
    pu_users_take(&L.users, q);
    /* the names this pass makes start with these: only names that could clash are reserved */
    for (uint32_t i = 0; i < n; i++) {
        const char *nm = q->nodes[i]->name;
        if ((nm[0] == 'g' && strncmp(nm, "getitem", 7) == 0) || (nm[0] == 'e' && strncmp(nm, "executorch_call_delegate", 24) == 0) ||
            (nm[0] == 'l' && strncmp(nm, "lowered_module_", 15) == 0))
            ls_namer_reserve(L.names, nm);
    }
    for (uint32_t i = 0; i < q->n_subs; i++) ls_namer_reserve(L.names, q->subs[i].name);
    L.getitem = ls_intern("getitem");
    L.call_delegate = ls_intern("executorch_call_delegate");
    L.tix = ls_malloc(sizeof *L.tix * (n ? n : 1));
    L.stamp = ls_calloc(n ? n : 1, sizeof *L.stamp);
    L.spec_ix = ls_malloc(sizeof *L.spec_ix * (n ? n : 1));
    for (uint32_t i = 0; i < n; i++) L.spec_ix[i] = -2;
    L.repl_id = ls_calloc(n ? n : 1, sizeof *L.repl_id);
    L.repl_name = ls_calloc(n ? n : 1, sizeof *L.repl_name);
    L.drop_input = ls_calloc(q->n_inputs ? q->n_inputs : 1, sizeof *L.drop_input);
    L.drop_output = ls_calloc(q->n_outputs ? q->n_outputs : 1, sizeof *L.drop_output);
    L.spec_next = ls_malloc(sizeof *L.spec_next * (q->n_outputs ? q->n_outputs : 1));
    for (uint32_t i = q->n_outputs; i-- > 0;) {
        uint32_t head = UINT32_MAX;
        if (q->outputs[i].name) pu_map_get(&L.spec_first, q->outputs[i].name, &head);
        L.spec_next[i] = head;
        if (q->outputs[i].name) pu_map_put(&L.spec_first, q->outputs[i].name, i);
    }
    for (uint32_t i = 0; i < n; i++)
        if (q->nodes[i]->debug_handle > L.debug_handle) L.debug_handle = q->nodes[i]->debug_handle;

    /* the tags: those of partition_tags first (in order), then any other tag on a node */
    pu_map tag_ix = {0};
    LS_VEC(tagrun) tr = {0};
    for (uint32_t k = 0; k < q->n_tags; k++) {
        if (pu_map_has(&tag_ix, q->tags[k].tag)) continue;
        pu_map_put(&tag_ix, q->tags[k].tag, tr.n);
        /* a tag read from a file names no backend: the round's backend lowers it */
        const char *be = q->tags[k].backend_id ? q->tags[k].backend_id
                         : ctx->profile          ? ctx->profile->backend_id
                                                 : ls_intern("BundledBackend");
        tagrun t = {.tag = q->tags[k].tag, .backend_id = be};
        ls_vec_push(&tr, t);
    }
    for (uint32_t i = 0; i < n; i++) {
        const char *tag = q->nodes[i]->tag;
        uint32_t t;
        L.tix[i] = -1;
        if (!tag) continue;
        if (!pu_map_get(&tag_ix, tag, &t)) {
            t = tr.n;
            pu_map_put(&tag_ix, tag, t);
            tagrun nt = {.tag = tag, .backend_id = ctx->profile ? ctx->profile->backend_id : ls_intern("BundledBackend")};
            ls_vec_push(&tr, nt);
        }
        ls_vec_push(&tr.v[t].members, i);
        L.tix[i] = (int32_t)t;
    }
    pu_map_free(&tag_ix);
    /* lower only the tags that have nodes, renumbered densely */
    uint32_t nt = 0;
    for (uint32_t t = 0; t < tr.n; t++) {
        if (!tr.v[t].members.n) {
            free(tr.v[t].members.v);
            continue;
        }
        tr.v[nt++] = tr.v[t];
    }
    tr.n = nt;
    lowering_order(tr.v, nt);
    for (uint32_t i = 0; i < n; i++) L.tix[i] = -1;
    for (uint32_t t = 0; t < nt; t++)
        for (uint32_t k = 0; k < tr.v[t].members.n; k++) L.tix[tr.v[t].members.v[k]] = (int32_t)t;

    int rc = 0;
    for (uint32_t t = 0; t < nt && rc == 0; t++) rc = check_members(&L, &tr.v[t]);
    for (uint32_t t = 0; t < nt && rc == 0; t++) rc = check_convex(&L, t, &tr.v[t]);
    block *bks = ls_calloc(nt ? nt : 1, sizeof *bks);
    for (uint32_t t = 0; t < nt && rc == 0; t++) rc = lower_one(&L, t, &tr.v[t], &bks[t]);

    if (rc == 0 && nt) {
        /* what read a partition's values now reads its getitems */
        for (uint32_t i = 0; i < n; i++) {
            if (!L.repl_id[i]) continue;
            uint32_t old = q->nodes[i]->id;
            for (uint32_t u = L.users.off[i]; u < L.users.off[i + 1]; u++) {
                uint32_t up = L.users.pos[u];
                if (L.tix[up] >= 0) continue;
                ls_node_replace_input(pu_edit(q, up), old, L.repl_id[i]);
            }
        }
        for (uint32_t t = 0; t < nt; t++) {
            block *b = &bks[t];
            ls_arg *args = ls_calloc(b->n_ext + 1u, sizeof *args);
            args[0] = ls_arg_node(b->get_attr->id);
            args[0].name = ls_intern("lowered_module");
            for (uint32_t k = 0; k < b->n_ext; k++) {
                uint32_t p = b->ext[k];
                args[k + 1] = ls_arg_node(L.repl_id[p] ? L.repl_id[p] : q->nodes[p]->id);
            }
            ls_node_set_args(b->call, args, (uint16_t)(b->n_ext + 1));
        }
        /* the output node loses the consumed mutations; output specs follow the getitems */
        int32_t op = -1;
        for (uint32_t i = n; i-- > 0;)
            if (q->nodes[i]->kind == LS_NODE_OUTPUT) {
                op = (int32_t)i;
                break;
            }
        LS_VEC(ls_output_spec) os = {0};
        if (op >= 0) {
            ls_node *o = pu_edit(q, (uint32_t)op);
            uint16_t w = 0;
            for (uint16_t a = 0; a < o->nargs; a++) {
                if (a < q->n_outputs && L.drop_output[a]) {
                    ls_arg_free(&o->args[a]);
                    continue;
                }
                o->args[w++] = o->args[a];
            }
            o->nargs = w;
        }
        for (uint32_t s = 0; s < q->n_outputs; s++) {
            if (L.drop_output[s]) continue;
            ls_output_spec sp = q->outputs[s];
            int32_t p = sp.name ? named_output(&L, in, op, s, sp.name) : -1;
            if (p >= 0 && L.repl_id[p]) sp.name = L.repl_name[p];
            ls_vec_push(&os, sp);
        }
        LS_VEC(ls_input_spec) is = {0};
        pu_map still = {0}; /* targets the top level still lists */
        for (uint32_t s = 0; s < q->n_inputs; s++) {
            if (L.drop_input[s]) continue;
            ls_input_spec sp = q->inputs[s];
            ls_arg_copy(&sp.value, &q->inputs[s].value);
            ls_vec_push(&is, sp);
            if (sp.target) pu_map_put(&still, sp.target, 1);
        }
        rebuild(&L, nt, bks);
        ls_program_set_inputs(q, is.v, is.n);
        for (uint32_t s = 0; s < is.n; s++) ls_arg_free(&is.v[s].value);
        free(is.v);
        ls_program_set_outputs(q, os.v, os.n);
        free(os.v);
        /* data that moved into a delegate leaves the top level unless it is still listed there */
        for (uint32_t s = 0; s < in->n_inputs; s++) {
            if (!L.drop_input[s] || !in->inputs[s].target || pu_map_has(&still, in->inputs[s].target)) continue;
            const ls_input_spec *sp = &in->inputs[s];
            bool in_state = ls_input_in_state(sp->kind, sp->persistent);
            pu_map_put(&still, sp->target, 1); /* drop once */
            uint32_t ix;
            if (in_state && pu_map_get(&L.sig.state_ix, sp->target, &ix)) q->state_dict[ix].name = NULL;
            if (!in_state && pu_map_get(&L.sig.const_ix, sp->target, &ix)) q->constants[ix].name = NULL;
        }
        uint32_t w = 0;
        for (uint32_t i = 0; i < q->n_state; i++) {
            if (q->state_dict[i].name) q->state_dict[w++] = q->state_dict[i];
            else ls_tensor_unref(q->state_dict[i].t);
        }
        q->n_state = w;
        w = 0;
        for (uint32_t i = 0; i < q->n_constants; i++) {
            if (q->constants[i].name) q->constants[w++] = q->constants[i];
            else ls_tensor_unref(q->constants[i].t);
        }
        q->n_constants = w;
        pu_map_free(&still);
        q->subs = ls_realloc(q->subs, sizeof *q->subs * (q->n_subs + L.subs.n));
        memcpy(q->subs + q->n_subs, L.subs.v, sizeof *L.subs.v * L.subs.n);
        q->n_subs += L.subs.n;
        L.subs.n = 0;
    }
    if (rc == 0 && !nt) ls_report_add(ctx->report, NULL, NULL, "no node is tagged: nothing to lower");
    ls_program_touch(q);

    for (uint32_t t = 0; t < nt; t++) {
        ls_node_unref(bks[t].get_attr);
        ls_node_unref(bks[t].call);
        for (uint32_t g = 0; g < bks[t].n_getitems; g++) ls_node_unref(bks[t].getitems[g]);
        free(bks[t].getitems);
        free(bks[t].ext);
        free(tr.v[t].members.v);
    }
    for (uint32_t s = 0; s < L.subs.n; s++) ls_submodule_release(&L.subs.v[s]);
    free(L.subs.v);
    free(bks);
    free(tr.v);
    pu_map_free(&L.spec_first);
    free(L.spec_next);
    free(L.drop_input);
    free(L.drop_output);
    free(L.repl_id);
    free(L.repl_name);
    free(L.stamp);
    free(L.spec_ix);
    free(L.tix);
    free(L.ids);
    ls_namer_free(L.names);
    pu_users_free(&L.users);
    ls_sig_free(&L.sig);
    if (rc != 0) {
        ls_program_unref(q);
        return -1;
    }
    *out = q;
    return 0;
}
