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
 * delegate input takes the id of the value it stands for. One tag becoming its lowered module is
 * to_backend_module.c; this file gathers, checks and orders the tags and rebuilds the top level. */
#include <stdlib.h>
#include <string.h>

#include "to_backend.h"

/* The input spec of the placeholder at pos (looked up once per placeholder: the checks, the
 * delegate's inputs and its data all ask). */
const ls_input_spec *tb_spec_at(lower *L, uint32_t pos)
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
        const ls_input_spec *s = tb_spec_at(L, pos);
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
            int32_t p = tb_pos_of(L, L->ids[a]);
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
                int32_t p = tb_pos_of(L, L->ids[a]);
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
        int32_t p = tb_pos_of(L, o->args[s].v.node);
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
    for (uint32_t t = 0; t < nt && rc == 0; t++) rc = tb_lower_one(&L, t, &tr.v[t], &bks[t]);

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
