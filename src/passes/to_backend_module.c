/* to_backend, one tag (to_backend.c has the overview): its members become the lowered module's
 * program and signature — the values it reads become its inputs, tagged constants and a stateful
 * backend's buffers move in, what leaves becomes its outputs — preprocessed by its backend, and
 * the top level gets the get_attr, executorch_call_delegate and getitem nodes that call it. */
#include <stdlib.h>
#include <string.h>

#include "backend.h"
#include "build.h"
#include "to_backend.h"

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

int tb_lower_one(lower *L, uint32_t t, tagrun *tr, block *bk)
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
            const ls_input_spec *s = tb_spec_at(L, pos);
            pu_map_put(&consumed, s->target, 1);
            continue;
        }
        ls_vec_push(&calls, pos);
        uint32_t na = pu_inputs(n, &L->ids, &L->ids_cap);
        for (uint32_t a = 0; a < na; a++) {
            int32_t p = tb_pos_of(L, L->ids[a]);
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
            const ls_input_spec *s = tb_spec_at(L, tagged_ph.v[k]);
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
        const ls_input_spec *s = tb_spec_at(L, tagged_ph.v[k]);
        if (s) L->drop_input[s - q->inputs] = true;
    }
    for (uint32_t k = 0; k < outs.n; k++) {
        if (!outs.v[k].mutation) continue;
        L->drop_output[outs.v[k].spec] = true;
        ls_report_add(L->ctx->report, mod_name, q->nodes[outs.v[k].pos]->name,
                      "buffer `%s` becomes state of `%s`: its mutation `%s` moves into `%s`", outs.v[k].target, tr->tag,
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
            /* the backend's error as it is, its kind too (a need: data the load left out); the
             * backends name the module and themselves ("XnnpackBackend: preprocess `m`: ...") */
            if (L->ctx->err) *L->ctx->err = perr;
            rc = -1;
            if (!strstr(perr.msg, "preprocess `")) ls_fail_prefix(L->ctx->err, "%s: %s preprocess", mod_name, tr->backend_id);
            ls_program_unref(d);
            goto done;
        }
    }
    ls_vec_push(&L->subs, sub);

    ls_buf b = {0};
    ls_buf_printf(&b, "`%s` becomes `%s` (%s): %u node%s, %u input%s", tr->tag, mod_name, tr->backend_id, calls.n,
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
