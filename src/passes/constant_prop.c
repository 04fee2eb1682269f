/* constant_prop: exir's constant_prop_pass (exir-semantics §2) with PR #24481's dialect-aware
 * output clone.
 *
 * Constants are parameters, buffers no output mutates, lifted tensor constants and literals.
 * Every call whose inputs are all constant is evaluated with the runtime's kernels; walking the
 * folded values from the last to the first, a value only constants read disappears, and one
 * something else still reads becomes a new lifted constant `_prop_tensor_constant<K>` (K = the
 * size of the constants table at that moment; on a clash one more than the largest such
 * suffix), placed before the first user input. Placeholders nobody reads any more leave the
 * program with their data. An output that is now a constant gets a clone in the program's own
 * dialect: aten.clone.default in an ATen program (`clone`), the Edge clone in an Edge one.
 * Finally dead calls are removed (eliminate_dead_code). */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "build.h"
#include "pass_util.h"
#include "passes.h"
#include "runtime.h"

/* ---- values of constant nodes */


typedef struct cprop {
    ls_program *q;
    uint32_t n;
    ls_sig sig;
    pu_users users;
    bool *is_const;   /* per position */
    ls_value *value;  /* per position (folded calls and constant placeholders) */
} cprop;

static const ls_value *lookup(uint32_t id, void *vctx)
{
    cprop *c = vctx;
    int32_t p = pu_pos(&c->users, id);
    return p >= 0 && c->is_const[p] ? &c->value[p] : NULL;
}

/* Evaluates a call with the runtime's kernels (the same ones the interpreter runs). */
static int evaluate(cprop *c, const ls_node *n, ls_value *out, ls_error *err)
{
    int rc = ls_eval_node(n, lookup, c, out, err);
    if (rc == 0 && out->kind == LS_V_TENSOR && !out->t) rc = ls_fail(err, "node %s: no value", n->name);
    return rc;
}

typedef struct arg_scan {
    cprop *c;
    bool all_const;
} arg_scan;

static void check_input(uint32_t id, void *vctx)
{
    arg_scan *s = vctx;
    int32_t p = pu_pos(&s->c->users, id);
    if (p < 0 || !s->c->is_const[p]) s->all_const = false;
}

/* exir's _DEFAULT_SKIP_TARGETS (exir/passes/constant_prop_pass.py): the Edge full ("can
 * significantly increase compiled model size") and the Edge forms of _QUANT_PRIMITIVES
 * (exir/operator/util.py; "Do not const prop quantization primitives"), so an int8 weight and
 * its dequantize stay for a backend to match. Edge targets only: in an ATen program they fold.
 * (convert_element_type.no_fuse and torchao's affine ops are in the list too; lowerscope runs
 * neither, so they are never folded anyway.) */
static bool skipped_in_edge(const ls_op *op)
{
    return op->id == LS_OP_full || ls_op_is_quant_primitive(op);
}

typedef enum { FOLD_NO, FOLD_YES, FOLD_SKIPPED } fold_kind;

static fold_kind foldable_op(const ls_program *q, const ls_node *n)
{
    if (n->kind != LS_NODE_CALL || !n->op) return FOLD_NO;
    if (n->op->id == LS_OP_call_delegate || (n->op->flags & LS_OPF_INPLACE)) return FOLD_NO;
    if (n->val_kind != LS_VAL_TENSOR && n->val_kind != LS_VAL_TENSORS) return FOLD_NO;
    return q->dialect == LS_DIALECT_EDGE && skipped_in_edge(n->op) ? FOLD_SKIPPED : FOLD_YES;
}

static bool constant_input(const cprop *c, const ls_node *ph)
{
    const ls_input_spec *s = ls_sig_spec(&c->sig, c->q, ph);
    return s && ls_input_kind_holds_data(s->kind) && !ls_sig_is_mutated(&c->sig, s);
}

/* `_prop_tensor_constant<K>`: K = the size of the constants table at that moment; on a clash,
 * one more than the largest such suffix. The table only grows while they are made (what goes
 * leaves after), so its size and the largest suffix are counted here, not rescanned. */
typedef struct prop_names {
    pu_map taken;
    uint32_t size;   /* the constants table's size, counting the ones made so far */
    long max_suffix; /* largest K of `_prop_tensor_constant<K>` in the table, -1 if none */
} prop_names;

static long prop_suffix(const char *k)
{
    if (strncmp(k, "_prop_tensor_constant", 21) != 0 || !k[21]) return -1;
    char *end;
    long v = strtol(k + 21, &end, 10);
    return *end ? -1 : v;
}

/* `_prop_tensor_constant<k>`, interned (formatted without printf: one per folded value) */
static const char *prop_fqn(long k)
{
    char buf[48] = "_prop_tensor_constant", digits[24];
    size_t n = 0, len = 21;
    unsigned long v = k < 0 ? 0 : (unsigned long)k;
    do digits[n++] = (char)('0' + v % 10), v /= 10;
    while (v);
    while (n) buf[len++] = digits[--n];
    return ls_intern_n(buf, len);
}

static const char *prop_name(prop_names *pn)
{
    const char *name = prop_fqn(pn->size);
    if (pu_map_has(&pn->taken, name)) name = prop_fqn(pn->max_suffix + 1);
    long k = prop_suffix(name);
    if (k > pn->max_suffix) pn->max_suffix = k;
    pu_map_put(&pn->taken, name, 1);
    pn->size++;
    return name;
}

int ls_pass_constant_prop(const ls_program *in, ls_program **out, ls_pass_ctx *ctx)
{
    cprop c = {0};
    c.q = ls_program_copy(in);
    ls_program *q = c.q;
    c.n = q->n_nodes;
    uint32_t n = c.n;
    ls_sig_build(&c.sig, q);
    pu_users_take(&c.users, q);
    c.is_const = ls_calloc(n ? n : 1, sizeof *c.is_const);
    c.value = ls_calloc(n ? n : 1, sizeof *c.value);

    /* §2.1 constant placeholders, §2.2 propagation in graph order */
    uint32_t folded = 0, failures = 0, skipped = 0;
    const char *skipped_names[3] = {0};
    for (uint32_t i = 0; i < n; i++) {
        const ls_node *nd = q->nodes[i];
        if (nd->kind == LS_NODE_PLACEHOLDER) {
            if (!constant_input(&c, nd)) continue;
            c.is_const[i] = true;
            const ls_named_tensor *d = ls_sig_data(&c.sig, q, ls_sig_spec(&c.sig, q, nd));
            if (d && d->t) c.value[i] = ls_value_tensor(ls_tensor_ref(d->t));
            continue;
        }
        fold_kind fk = foldable_op(q, nd);
        if (fk == FOLD_NO || !q->has_weights) continue;
        arg_scan s = {&c, true};
        for (uint16_t a = 0; a < nd->nargs; a++) ls_arg_each_node(&nd->args[a], check_input, &s);
        if (!s.all_const) continue;
        if (fk == FOLD_SKIPPED) { /* said once, below: a quantized model has hundreds */
            if (skipped < 3) skipped_names[skipped] = nd->name;
            skipped++;
            continue;
        }
        ls_error err;
        ls_value v = {0};
        int rc;
        if (pu_is_op(nd, LS_OP_getitem)) {
            const ls_value *src = lookup(nd->args[0].v.node, &c);
            int64_t k = nd->args[1].kind == LS_ARG_INT ? nd->args[1].v.i : -1;
            rc = src && src->kind == LS_V_LIST && k >= 0 && (uint64_t)k < src->n && src->items[k].kind == LS_V_TENSOR ? 0 : -1;
            if (rc == 0) v = ls_value_tensor(ls_tensor_ref(src->items[k].t));
            else ls_fail(&err, "no value to take item %lld from", (long long)k);
        } else {
            rc = evaluate(&c, nd, &v, &err);
        }
        if (rc != 0) {
            if (failures++ < 8)
                ls_report_add(ctx->report, NULL, nd->name, "`%s` reads only constants but is not folded: %s", nd->name, err.msg);
            continue;
        }
        c.is_const[i] = true;
        c.value[i] = v;
        folded++;
    }

    /* §2.3 materialisation, last folded value first */
    /* only names that could clash with the ones made here are reserved */
    ls_namer *names = ls_namer_new(NULL);
    prop_names pn = {.size = q->n_constants, .max_suffix = -1};
    for (uint32_t i = 0; i < q->n_constants; i++) {
        pu_map_put(&pn.taken, q->constants[i].name, 1);
        long k = prop_suffix(q->constants[i].name);
        if (k > pn.max_suffix) pn.max_suffix = k;
    }
    LS_VEC(ls_named_tensor) made = {0}; /* the new constants, added to the table at the end */
    pu_map gone_state = {0}, gone_const = {0}; /* targets leaving the tables */
    for (uint32_t i = 0; i < n; i++) {
        const char *nm = q->nodes[i]->name;
        if ((nm[0] == '_' && strncmp(nm, "_prop_tensor_constant", 21) == 0) || (nm[0] == 'c' && strncmp(nm, "clone", 5) == 0) ||
            (nm[0] == 'a' && strncmp(nm, "aten_clone_default", 18) == 0))
            ls_namer_reserve(names, nm);
    }
    bool *erase = ls_calloc(n ? n : 1, sizeof *erase);
    LS_VEC(ls_node *) created = {0};
    LS_VEC(ls_input_spec) new_specs = {0};
    pu_map dropped = {0}; /* placeholder names whose specs go */
    for (int stage = 0; stage < 2; stage++)
        for (uint32_t i = n; i-- > 0;) {
            if (!c.is_const[i]) continue;
            const ls_node *nd = q->nodes[i];
            if ((stage == 0) != (nd->kind == LS_NODE_CALL)) continue;
            bool other_reader = false;
            for (uint32_t u = c.users.off[i]; u < c.users.off[i + 1] && !other_reader; u++)
                other_reader = !c.is_const[c.users.pos[u]];
            if (!other_reader) {
                erase[i] = true;
                if (nd->kind == LS_NODE_PLACEHOLDER) {
                    const ls_input_spec *s = ls_sig_spec(&c.sig, q, nd);
                    pu_map_put(&dropped, nd->name, 1);
                    bool gone = false;
                    if (s->kind == LS_IN_PARAMETER || s->kind == LS_IN_BUFFER) {
                        gone |= pu_map_has(&c.sig.state_ix, s->target);
                        pu_map_put(&gone_state, s->target, 1);
                    }
                    if (s->kind == LS_IN_CONSTANT_TENSOR || s->kind == LS_IN_BUFFER) {
                        gone |= pu_map_has(&c.sig.const_ix, s->target);
                        pu_map_put(&gone_const, s->target, 1);
                    }
                    ls_report_add(ctx->report, NULL, nd->name, "`%s` removed: nothing but constants read it%s%s%s", nd->name,
                                  gone ? " (" : "", gone ? s->target : "", gone ? " leaves the program's data)" : "");
                } else {
                    ls_report_add(ctx->report, NULL, nd->name, "`%s` (%s) folded away: only constants read it", nd->name,
                                  nd->op->qualname);
                }
                continue;
            }
            if (nd->kind == LS_NODE_PLACEHOLDER) continue;
            const ls_value *v = &c.value[i];
            if (v->kind != LS_V_TENSOR) {
                c.is_const[i] = false; /* a tuple read by something other than getitem: keep it */
                continue;
            }
            const char *fqn = prop_name(&pn);
            const char *name = ls_namer_take_interned(names, fqn);
            ls_node *ph = ls_node_clone(nd);
            ls_node_set_args(ph, NULL, 0);
            ph->id = q->next_id++;
            ph->kind = LS_NODE_PLACEHOLDER;
            ph->name = name;
            ph->target = name;
            ph->op = NULL;
            ph->dialect = LS_DIALECT_NONE;
            ph->reason = LS_WHY_NONE;
            ph->reason_detail = NULL;
            ls_tmeta m;
            ls_tensor_meta(v->t, &m);
            ls_node_set_val(ph, &m);
            ls_named_tensor e = {.name = fqn, .t = ls_tensor_ref(v->t), .meta = ls_tmeta_intern(&m, 1)};
            ls_vec_push(&made, e);
            ls_vec_push(&created, ph);
            ls_input_spec s = {.kind = LS_IN_CONSTANT_TENSOR, .persistent = true, .name = name, .target = fqn};
            ls_vec_push(&new_specs, s);
            for (uint32_t u = c.users.off[i]; u < c.users.off[i + 1]; u++) {
                uint32_t up = c.users.pos[u];
                if (!c.is_const[up]) ls_node_replace_input(pu_edit(q, up), nd->id, ph->id);
            }
            erase[i] = true;
            ls_report_add(ctx->report, NULL, name, "`%s` (%s) folded into `%s` (%s)", nd->name, nd->op->qualname, name,
                          pu_meta_str(&m));
        }
    pu_map_free(&pn.taken);
    /* the data tables, once: what went leaves, what was made comes at the end */
    uint32_t w = 0;
    for (uint32_t i = 0; i < q->n_state; i++) {
        if (pu_map_has(&gone_state, q->state_dict[i].name)) ls_tensor_unref(q->state_dict[i].t);
        else q->state_dict[w++] = q->state_dict[i];
    }
    q->n_state = w;
    w = 0;
    for (uint32_t i = 0; i < q->n_constants; i++) {
        if (pu_map_has(&gone_const, q->constants[i].name)) ls_tensor_unref(q->constants[i].t);
        else q->constants[w++] = q->constants[i];
    }
    q->n_constants = w;
    if (made.n) {
        q->constants = ls_realloc(q->constants, sizeof *q->constants * (q->n_constants + made.n));
        memcpy(q->constants + q->n_constants, made.v, sizeof *made.v * made.n);
        q->n_constants += made.n;
    }
    free(made.v);
    pu_map_free(&gone_state);
    pu_map_free(&gone_const);

    /* the new node array: new constants before the first user input, in creation order (or at
     * the very start, newest first, when there is no user input) */
    int32_t first_user = -1;
    for (uint32_t i = 0; i < n && first_user < 0; i++) {
        const ls_input_spec *s = q->nodes[i]->kind == LS_NODE_PLACEHOLDER ? ls_sig_spec(&c.sig, q, q->nodes[i]) : NULL;
        if (s && s->kind == LS_IN_USER_INPUT) first_user = (int32_t)i;
    }
    LS_VEC(ls_node *) nodes = {0};
    if (first_user < 0)
        for (uint32_t k = created.n; k-- > 0;) ls_vec_push(&nodes, created.v[k]);
    for (uint32_t i = 0; i < n; i++) {
        if ((int32_t)i == first_user)
            for (uint32_t k = 0; k < created.n; k++) ls_vec_push(&nodes, created.v[k]);
        if (!erase[i]) ls_vec_push(&nodes, ls_node_ref(q->nodes[i]));
    }
    ls_program_set_nodes(q, nodes.v, nodes.n);
    free(nodes.v);
    /* input specs, walking the placeholders in their new order */
    pu_map fresh = {0};
    for (uint32_t k = 0; k < new_specs.n; k++) pu_map_put(&fresh, new_specs.v[k].name, k);
    LS_VEC(ls_input_spec) specs = {0};
    bool *listed = ls_calloc(q->n_inputs ? q->n_inputs : 1, sizeof *listed);
    for (uint32_t i = 0; i < q->n_nodes; i++) {
        const ls_node *nd = q->nodes[i];
        if (nd->kind != LS_NODE_PLACEHOLDER) continue;
        uint32_t k;
        if (pu_map_get(&fresh, nd->name, &k)) {
            ls_vec_push(&specs, new_specs.v[k]);
        } else if (pu_map_get(&c.sig.spec_of, nd->name, &k)) {
            ls_input_spec s = q->inputs[k];
            ls_arg_copy(&s.value, &q->inputs[k].value);
            ls_vec_push(&specs, s);
            listed[k] = true;
        }
    }
    /* specs without a placeholder (already broken programs) stay as they were, at the end;
     * those of erased placeholders go */
    for (uint32_t k = 0; k < q->n_inputs; k++) {
        if (listed[k] || pu_map_has(&dropped, q->inputs[k].name)) continue;
        ls_input_spec s = q->inputs[k];
        ls_arg_copy(&s.value, &q->inputs[k].value);
        ls_vec_push(&specs, s);
    }
    free(listed);
    ls_program_set_inputs(q, specs.v, specs.n);
    for (uint32_t k = 0; k < specs.n; k++) ls_arg_free(&specs.v[k].value);
    free(specs.v);
    pu_map_free(&fresh);
    pu_map_free(&dropped);

    /* §2.4 an output that is a constant gets a clone of the program's dialect */
    ls_sig sig2;
    ls_sig_build(&sig2, q);
    pu_users u2; /* positions in the new array (the users themselves are not needed) */
    pu_pos_take(&u2, q);
    int32_t op = -1;
    for (uint32_t i = q->n_nodes; i-- > 0;)
        if (q->nodes[i]->kind == LS_NODE_OUTPUT) {
            op = (int32_t)i;
            break;
        }
    LS_VEC(ls_node *) clones = {0};
    if (op >= 0) {
        const ls_op *clone = ls_op_get(LS_OP_clone);
        ls_dialect d = q->dialect == LS_DIALECT_EDGE ? LS_DIALECT_EDGE : LS_DIALECT_ATEN;
        ls_node *o = q->nodes[op];
        for (uint16_t a = 0; a < o->nargs; a++) {
            if (o->args[a].kind != LS_ARG_NODE) continue;
            int32_t vp = pu_pos(&u2, o->args[a].v.node);
            const ls_node *v = vp >= 0 ? q->nodes[vp] : NULL;
            const ls_input_spec *s = v && v->kind == LS_NODE_PLACEHOLDER ? ls_sig_spec(&sig2, q, v) : NULL;
            if (!s || !ls_input_kind_holds_data(s->kind) || ls_sig_is_mutated(&sig2, s)) continue;
            ls_arg *args = ls_calloc(1, sizeof *args);
            args[0] = ls_arg_node(v->id);
            ls_error err;
            ls_node *cl = ls_node_new_call(q, ls_namer_take_interned(names, ls_op_node_base(clone, d)), clone, d, args, 1, ls_node_tval(v), &err);
            if (!cl) continue;
            ls_vec_push(&clones, cl);
            o = pu_edit(q, (uint32_t)op);
            o->args[a].v.node = cl->id;
            if (a < q->n_outputs) q->outputs[a].name = cl->name;
            ls_report_add(ctx->report, NULL, cl->name, "`%s` (%s%s) added before output %u: output `%s` is a constant",
                          cl->name, d == LS_DIALECT_EDGE ? "Edge " : "", clone->qualname, a, v->name);
        }
    }
    ls_namer_free(names);
    ls_sig_free(&sig2);

    /* eliminate_dead_code: calls nobody reads (in-place ops and delegate calls stay) */
    uint32_t nn = q->n_nodes;
    uint32_t *readers = ls_calloc(nn ? nn : 1, sizeof *readers);
    bool *dead = ls_calloc(nn ? nn : 1, sizeof *dead);
    uint32_t *ids = NULL, cap = 0, n_dead = 0;
    for (uint32_t i = 0; i < nn; i++) {
        uint32_t k = pu_inputs(q->nodes[i], &ids, &cap);
        for (uint32_t a = 0; a < k; a++) {
            int32_t p = pu_pos(&u2, ids[a]);
            if (p >= 0) readers[p]++;
        }
    }
    for (uint32_t k = 0; k < clones.n; k++) { /* the clones read their placeholders */
        int32_t p = pu_pos(&u2, clones.v[k]->args[0].v.node);
        if (p >= 0) readers[p]++;
    }
    for (uint32_t i = nn; i-- > 0;) {
        if (readers[i]) continue;
        const ls_node *nd = q->nodes[i];
        if (nd->kind != LS_NODE_CALL || !nd->op || (nd->op->flags & LS_OPF_INPLACE) ||
            nd->op->id == LS_OP_call_delegate)
            continue;
        dead[i] = true;
        n_dead++;
        ls_report_add(ctx->report, NULL, nd->name, "`%s` removed: nothing reads it (dead code)", nd->name);
        uint32_t k = pu_inputs(nd, &ids, &cap);
        for (uint32_t a = 0; a < k; a++) {
            int32_t p = pu_pos(&u2, ids[a]);
            if (p >= 0 && readers[p]) readers[p]--;
        }
    }
    if (clones.n || n_dead) {
        LS_VEC(ls_node *) keep = {0};
        for (uint32_t i = 0; i < nn; i++) {
            if (q->nodes[i]->kind == LS_NODE_OUTPUT)
                for (uint32_t k = 0; k < clones.n; k++) ls_vec_push(&keep, clones.v[k]);
            if (!dead[i]) ls_vec_push(&keep, ls_node_ref(q->nodes[i]));
        }
        ls_program_set_nodes(q, keep.v, keep.n);
        free(keep.v);
    }
    ls_program_touch(q);
    pu_users_free(&u2);
    free(ids);
    free(readers);
    free(dead);
    free(clones.v);

    if (!q->has_weights)
        ls_report_add(ctx->report, NULL, NULL, "the program was loaded without weights: nothing can be evaluated");
    if (skipped) {
        ls_buf kept_list = {0};
        for (uint32_t k = 0; k < skipped && k < 3; k++) ls_buf_printf(&kept_list, "%s`%s`", k ? ", " : "", skipped_names[k]);
        if (skipped > 3) ls_buf_puts(&kept_list, ", ...");
        bool one = skipped == 1;
        ls_report_add(ctx->report, NULL, skipped_names[0],
                      "%u call%s read%s only constants and stay%s: exir's _DEFAULT_SKIP_TARGETS keep the full and the "
                      "quantization primitives of an Edge program (%s)", skipped, one ? "" : "s", one ? "s" : "",
                      one ? "s" : "", kept_list.s);
        ls_buf_free(&kept_list);
    }
    if (q->has_weights && !folded && !created.n && !skipped)
        ls_report_add(ctx->report, NULL, NULL, "no call reads only constants: nothing to fold");
    for (uint32_t i = 0; i < n; i++) ls_value_release(&c.value[i]);
    free(c.value);
    free(c.is_const);
    free(erase);
    free(created.v);
    free(new_specs.v);
    pu_users_free(&c.users);
    ls_sig_free(&c.sig);
    *out = q;
    return 0;
}
