/* The verifier: torch.export's signature checks (_verify_exported_program_signature, with its
 * wording), the graph checks FX and the dialect verifiers make, and the two problems that only
 * show up later in ExecuTorch: a constant or buffer target listed twice (unlifting fails with
 * "`X` is not a buffer") and an op of the other dialect. Unlike torch it does not stop at the
 * first problem: every finding is listed. Runs on a program and each lowered submodule. */
#include "verify.h"

#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "ops.h"
#include "ptrmap.h"

typedef struct id_pos id_pos;

typedef struct vctx {
    const ls_program *p;
    const char *prog; /* NULL at the top level, else the submodule path */
    ls_verify_result *out;
    uint32_t cap;
    const id_pos *ids; /* where each node id sits in p */
} vctx;

/* A finding. An error is structural (the passes cannot work on the program: ls_finding) unless
 * it is one that ExecuTorch itself only meets later, which add_late records. */
static void vadd(vctx *c, ls_severity sev, bool structural, const char *node, const char *fmt, va_list ap)
    LS_PRINTF(5, 0);
static void vadd(vctx *c, ls_severity sev, bool structural, const char *node, const char *fmt, va_list ap)
{
    va_list ap2;
    va_copy(ap2, ap);
    int n = vsnprintf(NULL, 0, fmt, ap);
    if (n < 0) n = 0;
    char *msg = ls_malloc((size_t)n + 1);
    vsnprintf(msg, (size_t)n + 1, fmt, ap2);
    va_end(ap2);
    if (c->out->n == c->cap) {
        c->cap = c->cap ? c->cap * 2 : 8;
        c->out->v = ls_realloc(c->out->v, sizeof *c->out->v * c->cap);
    }
    ls_finding *f = &c->out->v[c->out->n++];
    f->severity = (uint8_t)sev;
    f->structural = sev == LS_SEV_ERROR && structural;
    f->program = c->prog;
    f->node = node;
    f->msg = msg;
    if (sev == LS_SEV_ERROR) c->out->n_errors++;
    if (f->structural) c->out->n_structural++;
}

static void add(vctx *c, ls_severity sev, const char *node, const char *fmt, ...) LS_PRINTF(4, 5);
static void add(vctx *c, ls_severity sev, const char *node, const char *fmt, ...)
{
    va_list ap;
    va_start(ap, fmt);
    vadd(c, sev, true, node, fmt, ap);
    va_end(ap);
}

/* An error the pipeline still runs on: ExecuTorch meets it in a later step (to_edge's dialect
 * check, unlifting), which is what the user wants to see happen. */
static void add_late(vctx *c, const char *node, const char *fmt, ...) LS_PRINTF(3, 4);
static void add_late(vctx *c, const char *node, const char *fmt, ...)
{
    va_list ap;
    va_start(ap, fmt);
    vadd(c, LS_SEV_ERROR, false, node, fmt, ap);
    va_end(ap);
}

/* Python-like reprs, so messages read like torch's: ['a', 'b'] and {'x': 'y'}. */
static void py_list(ls_buf *b, const char *const *items, uint32_t n)
{
    ls_buf_putc(b, '[');
    for (uint32_t i = 0; i < n; i++) ls_buf_printf(b, "%s'%s'", i ? ", " : "", items[i] ? items[i] : "None");
    ls_buf_putc(b, ']');
}

static void py_dict(ls_buf *b, const char *const *keys, const char *const *vals, uint32_t n)
{
    ls_buf_putc(b, '{');
    for (uint32_t i = 0; i < n; i++)
        ls_buf_printf(b, "%s'%s': '%s'", i ? ", " : "", keys[i] ? keys[i] : "None", vals[i] ? vals[i] : "None");
    ls_buf_putc(b, '}');
}

/* ---- the graph */

/* Where each node id sits, taken once per program: a dense array when ids are dense (the top
 * level), a map otherwise (a lowered module keeps the ids its nodes had in the program it came
 * from). The program's own index would also hash every name; the verifier needs only ids. */
struct id_pos {
    int32_t *dense; /* id → position, -1 absent */
    uint32_t cap;
    ls_ptrmap sparse; /* (void *)id → position */
};

/* Empty: dense when the program's ids are (below next_id), else a map. */
static void id_pos_init(id_pos *t, const ls_program *p)
{
    memset(t, 0, sizeof *t);
    if (p->next_id <= 4u * p->n_nodes + 1024u) {
        t->cap = p->next_id + 1;
        t->dense = ls_malloc(sizeof *t->dense * t->cap);
        memset(t->dense, 0xff, sizeof *t->dense * t->cap);
    } else {
        ls_ptrmap_reserve(&t->sparse, p->n_nodes);
    }
}

static void id_pos_set(id_pos *t, uint32_t id, int32_t pos)
{
    if (!t->dense) {
        if (id) ls_ptrmap_put(&t->sparse, (const void *)(uintptr_t)id, (uintptr_t)pos);
        return;
    }
    if (id >= t->cap) { /* an id at or above next_id (a program built by hand) */
        uint64_t nc = (uint64_t)t->cap * 2;
        while (nc <= id) nc *= 2;
        t->dense = ls_realloc(t->dense, sizeof *t->dense * (size_t)nc);
        memset(t->dense + t->cap, 0xff, sizeof *t->dense * (size_t)(nc - t->cap));
        t->cap = (uint32_t)(nc > UINT32_MAX ? UINT32_MAX : nc);
    }
    t->dense[id] = pos;
}

static int32_t id_pos_get(const id_pos *t, uint32_t id)
{
    if (t->dense) return id < t->cap ? t->dense[id] : -1;
    uintptr_t v;
    return ls_ptrmap_get(&t->sparse, (const void *)(uintptr_t)id, &v) ? (int32_t)v : -1;
}

static void id_pos_free(id_pos *t)
{
    free(t->dense);
    ls_ptrmap_free(&t->sparse);
}

static const ls_node *node_of(const vctx *c, uint32_t id)
{
    int32_t at = id_pos_get(c->ids, id);
    return at >= 0 ? c->p->nodes[at] : NULL;
}

/* A reference to a node that is absent or not defined before its reader (message formatted
 * only then). */
static void bad_ref(vctx *c, const ls_node *n, const ls_arg *a, uint32_t id, int32_t at)
{
    char argname[48];
    if (a->name) snprintf(argname, sizeof argname, "argument '%s'", a->name);
    else snprintf(argname, sizeof argname, "argument %d", (int)(a - n->args));
    if (at < 0)
        add(c, LS_SEV_ERROR, n->name, "node '%s' %s: node id %u is not in the graph", n->name, argname, id);
    else
        add(c, LS_SEV_ERROR, n->name, "node '%s' %s: '%s' is not defined before it", n->name, argname,
            c->p->nodes[at]->name);
}

static void check_refs(vctx *c, const ls_node *n, int32_t pos)
{
    const id_pos *ids = c->ids;
    for (uint16_t k = 0; k < n->nargs; k++) {
        const ls_arg *a = &n->args[k];
        uint32_t id;
        int32_t at;
        switch (a->kind) {
        case LS_ARG_NODE:
            id = a->v.node;
            at = id_pos_get(ids, id);
            if (at < 0 || at >= pos) bad_ref(c, n, a, id, at);
            break;
        case LS_ARG_NODES:
        case LS_ARG_OPT_NODES:
            for (uint32_t j = 0; j < a->n; j++) {
                if (!(id = a->v.nodes[j])) continue;
                at = id_pos_get(ids, id);
                if (at < 0 || at >= pos) bad_ref(c, n, a, id, at);
            }
            break;
        case LS_ARG_SYMINTS:
            for (uint32_t j = 0; j < a->n; j++) {
                if (!a->v.symints[j].is_node) continue;
                id = a->v.symints[j].node;
                at = id_pos_get(ids, id);
                if (at < 0 || at >= pos) bad_ref(c, n, a, id, at);
            }
            break;
        default: break;
        }
    }
}

static bool is_sym_op(const ls_op *op)
{
    return op && op->id == LS_OP_sym_size_int;
}

/* A set of interned names (pointers), sized once for a program. */
typedef struct name_set {
    const char **slots;
    uint32_t cap;
} name_set;

static void name_set_init(name_set *s, uint32_t n)
{
    s->cap = 16;
    while (s->cap < 2 * n + 2) s->cap *= 2;
    s->slots = ls_calloc_table(s->cap, sizeof *s->slots);
}

static void name_set_prefetch(const name_set *s, const char *name)
{
    __builtin_prefetch(&s->slots[ls_ptrmap_hash(name) & (s->cap - 1)]);
}

/* false when the name is there already */
static bool name_set_add(name_set *s, const char *name)
{
    uint32_t j = ls_ptrmap_hash(name) & (s->cap - 1);
    for (; s->slots[j]; j = (j + 1) & (s->cap - 1))
        if (s->slots[j] == name) return false;
    s->slots[j] = name;
    return true;
}

typedef LS_VEC(const ls_node *) node_vec;

/* The graph in one sweep. With `sweep` set, ids are recorded as the nodes come: it returns false
 * (having checked nothing reliable) at the first reference to a node not seen yet or the first
 * id seen twice, and the caller checks again with every id known (then `sweep` is false and ids
 * is complete). The placeholders are collected for the signature checks. */
static bool check_graph(vctx *c, id_pos *ids, bool sweep, node_vec *ph)
{
    const ls_program *p = c->p;
    name_set names;
    name_set_init(&names, p->n_nodes);
    ls_ptrmap subs = {0}, first_of = {0}; /* first_of: name → first position, made at the first clash */
    for (uint32_t i = 0; i < p->n_subs; i++) ls_ptrmap_add(&subs, p->subs[i].name, 1, NULL);
    uint32_t n_outputs = 0;
    bool ok = true;
    /* the sweep adds a name to the set a few nodes after its slot was asked for (the set is
     * as big as the program: a slot is rarely in the cache); a name seen twice ends it */
    enum { AHEAD = 16 };
    const char *pending[AHEAD];
    uint32_t named = 0;
    for (uint32_t i = 0; i < p->n_nodes && ok; i++) {
        const ls_node *n = p->nodes[i];
        if (sweep && n->name) {
            uint32_t slot = named++ % AHEAD;
            if (named > AHEAD) ok = name_set_add(&names, pending[slot]);
            name_set_prefetch(&names, n->name);
            pending[slot] = n->name;
        }
        if (sweep) {
            for (uint16_t k = 0; k < n->nargs && ok; k++) {
                const ls_arg *a = &n->args[k];
                if (a->kind == LS_ARG_NODE) ok = id_pos_get(ids, a->v.node) >= 0;
                else if (a->kind == LS_ARG_NODES || a->kind == LS_ARG_OPT_NODES)
                    for (uint32_t j = 0; j < a->n && ok; j++) ok = !a->v.nodes[j] || id_pos_get(ids, a->v.nodes[j]) >= 0;
                else if (a->kind == LS_ARG_SYMINTS)
                    for (uint32_t j = 0; j < a->n && ok; j++)
                        ok = !a->v.symints[j].is_node || id_pos_get(ids, a->v.symints[j].node) >= 0;
            }
            if (!ok || !n->id || id_pos_get(ids, n->id) >= 0) {
                ok = false;
                break;
            }
            id_pos_set(ids, n->id, (int32_t)i);
        }
        if (n->kind == LS_NODE_PLACEHOLDER) ls_vec_push(ph, n);
        if (!n->name) {
            add(c, LS_SEV_ERROR, NULL, "node at position %u has no name", i);
        } else if (!sweep && !name_set_add(&names, n->name)) {
            if (!first_of.cap)
                for (uint32_t k = 0; k < p->n_nodes; k++) ls_ptrmap_add(&first_of, p->nodes[k]->name, k, NULL);
            uintptr_t first = 0;
            ls_ptrmap_get(&first_of, n->name, &first);
            add(c, LS_SEV_ERROR, n->name, "node name '%s' is used twice (positions %u and %u)", n->name,
                (unsigned)first, i);
        }
        if (!sweep) check_refs(c, n, (int32_t)i);
        if (n->kind == LS_NODE_OUTPUT) n_outputs++;
        if (n->kind == LS_NODE_GET_ATTR && !ls_ptrmap_get(&subs, n->target, NULL))
            add(c, LS_SEV_WARNING, n->name,
                "get_attr '%s': the lowered module '%s' is not in the program (the file does not hold it): shown, "
                "never run",
                n->name, n->target ? n->target : "?");
        /* a call whose arguments a schema refused (the file's torch, or an --ops file, spells the
         * op otherwise): the node is kept as an unknown op, which nothing runs or lowers */
        if (n->kind == LS_NODE_CALL && !n->op && n->reason == LS_WHY_UNKNOWN_OP && n->reason_detail &&
            !strncmp(n->reason_detail, LS_SCHEMA_MISFIT, sizeof LS_SCHEMA_MISFIT - 1))
            add(c, LS_SEV_WARNING, n->name, "node '%s' (%s): %s; it is kept as an unknown op", n->name,
                n->target ? n->target : "?", n->reason_detail);
        if (n->kind != LS_NODE_CALL || !n->op) continue;
        if (n->op->id == LS_OP_call_delegate) {
            const ls_node *m = n->nargs && n->args[0].kind == LS_ARG_NODE ? node_of(c, n->args[0].v.node) : NULL;
            if (!m || m->kind != LS_NODE_GET_ATTR)
                add(c, LS_SEV_ERROR, n->name, "node '%s': executorch_call_delegate's first argument is not a get_attr of a lowered module",
                    n->name);
        } else if (n->op->id == LS_OP_getitem) {
            if (n->nargs < 2 || n->args[0].kind != LS_ARG_NODE || n->args[1].kind != LS_ARG_INT)
                add(c, LS_SEV_ERROR, n->name, "node '%s': getitem needs (node, index) arguments", n->name);
        }
        /* None where the schema takes no None ("Tensor self" of aten.mul.Tensor): torch's
         * deserializer lets it through (as_none is a value), and the kernel's EValue::toTensor
         * would abort on the device; the arguments are in schema order after the reader */
        if (!(n->op->flags & (LS_OPF_SPECIAL | LS_OPF_CUSTOM)))
            for (uint16_t k = 0; k < n->nargs && k < n->op->schema.nparams; k++) {
                const ls_param *prm = &n->op->schema.params[k];
                if (n->args[k].kind == LS_ARG_NONE && !prm->optional && prm->type != LS_PT_ANY)
                    add(c, LS_SEV_ERROR, n->name, "node '%s' (%s): argument '%s' is None, which the schema does not "
                        "allow (%s)", n->name, n->op->qualname, prm->name, n->op->schema_text);
            }
        /* the dialect: an Edge op in an ATen program, or an ATen compute op in an Edge one */
        bool special = (n->op->flags & LS_OPF_SPECIAL) || is_sym_op(n->op);
        if (p->dialect == LS_DIALECT_ATEN && (n->dialect == LS_DIALECT_EDGE || n->dialect == LS_DIALECT_EXECUTORCH))
            add_late(c, n->name,
                "Operator '%s' is not an allowed operator type in the ATen dialect (verifier %s): node '%s' holds an "
                "%s op",
                n->target, p->verifier ? p->verifier : "ATEN", n->name,
                n->dialect == LS_DIALECT_EDGE ? "Edge-dialect" : "ExecuTorch (out-variant)");
        else if (p->dialect == LS_DIALECT_EDGE && n->dialect == LS_DIALECT_ATEN && !special)
            add_late(c, n->name,
                "Operator '%s' is not an allowed operator type in the Edge dialect: node '%s' holds an ATen op "
                "(to_edge turns it into executorch.exir.dialects.edge.ops.%s)",
                n->target, n->name, n->op->qualname);
    }
    for (uint32_t k = 0; ok && k < named && k < AHEAD; k++) ok = name_set_add(&names, pending[k]);
    free(names.slots);
    ls_ptrmap_free(&subs);
    ls_ptrmap_free(&first_of);
    if (!ok) return false;
    if (!p->n_nodes) add(c, LS_SEV_ERROR, NULL, "the graph has no nodes (not even an output node)");
    else if (p->nodes[p->n_nodes - 1]->kind != LS_NODE_OUTPUT)
        add(c, LS_SEV_ERROR, p->nodes[p->n_nodes - 1]->name, "last node must be output, got %s",
            ls_node_kind_name((ls_node_kind)p->nodes[p->n_nodes - 1]->kind));
    if (n_outputs > 1) add(c, LS_SEV_ERROR, NULL, "the graph has %u output nodes", n_outputs);
    return true;
}

/* ---- the signature */

static const char *spec_kind_title(const ls_input_spec *s)
{
    switch (s->kind) {
    case LS_IN_PARAMETER: return "Parameter";
    case LS_IN_BUFFER: return "Buffer";
    case LS_IN_CONSTANT_TENSOR: return "Constant tensor";
    default: return "Input";
    }
}

/* ph: the spec's placeholder when known (same name), else NULL (looked up by name). */
static void check_data(vctx *c, const ls_input_spec *s, const ls_named_tensor *e, const ls_node *ph)
{
    const ls_program *p = c->p;
    char a[160], b[160];
    if (!e->t && !p->weights_unread) {
        const char *why = p->origin && p->origin->missing_data ? p->origin->missing_data(p->origin, s->target) : NULL;
        if (why) add(c, LS_SEV_WARNING, s->name, "%s %s has no data: %s", spec_kind_title(s), s->target, why);
        else
            add(c, LS_SEV_WARNING, s->name, "%s %s has no data (a pickled tensor or a dtype lowerscope cannot hold)",
                spec_kind_title(s), s->target);
        return;
    }
    if (!ph) {
        int32_t pos = s->name ? ls_program_find(p, s->name) : -1;
        ph = pos >= 0 ? p->nodes[pos] : NULL;
    }
    if (!ph || ph->val_kind != LS_VAL_TENSOR) return;
    ls_tmeta have;
    if (e->t) ls_tensor_meta(e->t, &have);
    else have = *e->meta; /* weights_unread: what the file says the data is */
    const ls_tmeta *want = &ph->vals[0];
    bool same = have.dtype == want->dtype && have.ndim == want->ndim;
    for (int d = 0; same && d < have.ndim; d++) same = want->sym[d] || have.sizes[d] == want->sizes[d];
    if (!same)
        add(c, LS_SEV_ERROR, s->name, "%s %s holds %s but its placeholder '%s' says %s", spec_kind_title(s), s->target,
            ls_tmeta_str(&have, a, sizeof a), s->name, ls_tmeta_str(want, b, sizeof b));
}

static void check_inputs(vctx *c, node_vec ph)
{
    const ls_program *p = c->p;
    if (ph.n != p->n_inputs) {
        /* names on one side only, as torch lists them */
        ls_ptrmap spec_names = {0}, ph_names = {0};
        for (uint32_t i = 0; i < p->n_inputs; i++)
            if (p->inputs[i].name) ls_ptrmap_put(&spec_names, p->inputs[i].name, 1);
        for (uint32_t i = 0; i < ph.n; i++) ls_ptrmap_put(&ph_names, ph.v[i]->name, 1);
        LS_VEC(const char *) a = {0}, b = {0};
        for (uint32_t i = 0; i < ph.n; i++)
            if (!ls_ptrmap_get(&spec_names, ph.v[i]->name, NULL)) ls_vec_push(&a, ph.v[i]->name);
        for (uint32_t i = 0; i < p->n_inputs; i++)
            if (p->inputs[i].name && !ls_ptrmap_get(&ph_names, p->inputs[i].name, NULL)) ls_vec_push(&b, p->inputs[i].name);
        ls_buf sa = {0}, sb = {0};
        py_list(&sa, a.v, a.n);
        py_list(&sb, b.v, b.n);
        add(c, LS_SEV_ERROR, NULL,
            "Number of graph inputs (%u) does not match number of inputs in the graph signature (%u). Placeholders "
            "missing input_specs: %s. Input_specs missing placeholders: %s",
            ph.n, p->n_inputs, sa.s, sb.s);
        ls_buf_free(&sa);
        ls_buf_free(&sb);
        free(a.v);
        free(b.v);
        ls_ptrmap_free(&spec_names);
        ls_ptrmap_free(&ph_names);
    }
    ls_ptrmap state = {0}, consts = {0}; /* target → entry (the model's lookups are linear) */
    for (uint32_t i = 0; i < p->n_state; i++) ls_ptrmap_put(&state, p->state_dict[i].name, (uintptr_t)&p->state_dict[i]);
    for (uint32_t i = 0; i < p->n_constants; i++) ls_ptrmap_put(&consts, p->constants[i].name, (uintptr_t)&p->constants[i]);
    ls_ptrmap targets = {0}; /* buffer / constant target → the first spec naming it */
    for (uint32_t i = 0; i < p->n_inputs; i++) {
        const ls_input_spec *s = &p->inputs[i];
        if (i < ph.n && s->kind != LS_IN_CUSTOM_OBJ && s->kind != LS_IN_CONSTANT_INPUT && s->name != ph.v[i]->name)
            add(c, LS_SEV_ERROR, ph.v[i]->name, "Input spec name %s does not match node name %s",
                s->name ? s->name : "None", ph.v[i]->name);
        if (s->kind != LS_IN_PARAMETER && s->kind != LS_IN_BUFFER && s->kind != LS_IN_CONSTANT_TENSOR) continue;
        if (!s->target) {
            add(c, LS_SEV_ERROR, s->name, "InputSpec for %s has no target.", s->name ? s->name : "None");
            continue;
        }
        uintptr_t e1 = 0, e2 = 0;
        ls_ptrmap_get(&state, s->target, &e1);
        ls_ptrmap_get(&consts, s->target, &e2);
        const ls_named_tensor *in_state = (const ls_named_tensor *)e1, *in_consts = (const ls_named_tensor *)e2;
        const ls_named_tensor *data = NULL;
        if (s->kind == LS_IN_PARAMETER) {
            if (!in_state) add(c, LS_SEV_ERROR, s->name, "Parameter %s is not in the state dict.", s->target);
            data = in_state;
        } else if (s->kind == LS_IN_BUFFER && s->persistent) {
            if (!in_state) add(c, LS_SEV_ERROR, s->name, "Buffer %s is not in the state dict.", s->target);
            data = in_state;
        } else if (s->kind == LS_IN_BUFFER) {
            if (in_state)
                add(c, LS_SEV_ERROR, s->name, "Non-persistent buffer %s is in the state dict, it should not be.", s->target);
            else if (!in_consts)
                add(c, LS_SEV_ERROR, s->name, "Non-persistent buffer %s is not in the constants dictionary.", s->target);
            data = in_consts;
        } else {
            if (!in_consts) add(c, LS_SEV_ERROR, s->name, "Constant tensor %s is not in the constants dictionary.", s->target);
            data = in_consts;
        }
        if (data && (p->has_weights || p->weights_unread)) check_data(c, s, data, i < ph.n && ph.v[i]->name == s->name ? ph.v[i] : NULL);
        if (s->kind == LS_IN_PARAMETER) continue;
        uintptr_t first;
        if (!ls_ptrmap_add(&targets, s->target, i, &first)) {
            const ls_input_spec *f = &p->inputs[first];
            add_late(c, s->name,
                "`%s` is not a buffer: %s target '%s' is listed twice in one program, by placeholders '%s' and '%s'; "
                "unlifting this program (ExportedProgram.module()) fails",
                s->target, s->kind == LS_IN_BUFFER ? "buffer" : "constant", s->target, f->name ? f->name : "None",
                s->name ? s->name : "None");
        }
    }
    ls_ptrmap_free(&targets);
    ls_ptrmap_free(&state);
    ls_ptrmap_free(&consts);
}

static void check_outputs(vctx *c)
{
    const ls_program *p = c->p;
    const ls_node *out = ls_program_output(p);
    if (!out) return; /* reported by check_graph */
    uint32_t n = out->nargs;
    const char **names = ls_calloc(n ? n : 1, sizeof *names);
    for (uint32_t i = 0; i < n; i++) {
        const ls_node *v = out->args[i].kind == LS_ARG_NODE ? node_of(c, out->args[i].v.node) : NULL;
        names[i] = v ? v->name : NULL;
    }
    if (n != p->n_outputs) {
        ls_buf b = {0};
        py_list(&b, names, n);
        add(c, LS_SEV_ERROR, out->name,
            "Number of output nodes %u is different Than the number of outputs specified by the graph signature: %u "
            "(outputs: %s)",
            n, p->n_outputs, b.s);
        ls_buf_free(&b);
    }
    /* the mutation block comes first, right after the tokens */
    LS_VEC(const char *) mk = {0}, mv = {0}, bufs = {0}, users = {0};
    uint32_t tokens = 0, mutations = 0;
    for (uint32_t i = 0; i < p->n_outputs; i++) {
        const ls_output_spec *o = &p->outputs[i];
        if (o->kind == LS_OUT_TOKEN) tokens++;
        else if (o->kind == LS_OUT_BUFFER_MUTATION || o->kind == LS_OUT_PARAMETER_MUTATION ||
                 o->kind == LS_OUT_USER_INPUT_MUTATION)
            mutations++;
        if (o->kind == LS_OUT_BUFFER_MUTATION) {
            ls_vec_push(&mk, o->name);
            ls_vec_push(&mv, o->target);
        }
        if (o->kind == LS_OUT_USER_OUTPUT) ls_vec_push(&users, o->name);
    }
    for (uint32_t i = 0; i < p->n_inputs; i++)
        if (p->inputs[i].kind == LS_IN_BUFFER) ls_vec_push(&bufs, p->inputs[i].target);
    ls_ptrmap mut = {0}, buf_t = {0}, par_t = {0}, user_in = {0};
    for (uint32_t j = 0; j < p->n_outputs; j++) {
        const ls_output_spec *o = &p->outputs[j];
        if (o->name && (o->kind == LS_OUT_BUFFER_MUTATION || o->kind == LS_OUT_PARAMETER_MUTATION ||
                        o->kind == LS_OUT_USER_INPUT_MUTATION))
            ls_ptrmap_add(&mut, o->name, (uintptr_t)o, NULL);
    }
    for (uint32_t j = 0; j < p->n_inputs; j++) {
        const ls_input_spec *s = &p->inputs[j];
        ls_ptrmap *m = s->kind == LS_IN_BUFFER ? &buf_t : s->kind == LS_IN_PARAMETER ? &par_t
                       : s->kind == LS_IN_USER_INPUT ? &user_in : NULL;
        const char *key = s->kind == LS_IN_USER_INPUT ? s->name : s->target;
        if (m && key) ls_ptrmap_put(m, key, 1);
    }
    for (uint32_t i = tokens; i < tokens + mutations && i < n; i++) {
        uintptr_t ov = 0;
        const ls_output_spec *o = names[i] && ls_ptrmap_get(&mut, names[i], &ov) ? (const ls_output_spec *)ov : NULL;
        const char *what = names[i] ? names[i] : "None";
        if (!o) {
            ls_buf b = {0};
            py_dict(&b, mk.v, mv.v, mk.n);
            add(c, LS_SEV_ERROR, names[i], "Mutation node %s is neither a buffer nor a user input. Buffers to mutate: %s",
                what, b.s);
            ls_buf_free(&b);
            continue;
        }
        const char *kind_word = o->kind == LS_OUT_BUFFER_MUTATION ? "buffer"
                                : o->kind == LS_OUT_PARAMETER_MUTATION ? "parameter" : "user input";
        const ls_ptrmap *where = o->kind == LS_OUT_BUFFER_MUTATION ? &buf_t
                                 : o->kind == LS_OUT_PARAMETER_MUTATION ? &par_t : &user_in;
        if (o->target && ls_ptrmap_get(where, o->target, NULL)) continue;
        if (o->kind == LS_OUT_BUFFER_MUTATION) {
            ls_buf d = {0}, l = {0};
            py_dict(&d, mk.v, mv.v, mk.n);
            py_list(&l, bufs.v, bufs.n);
            add(c, LS_SEV_ERROR, names[i],
                "Buffer output %s does not point to a buffer that exists. Dict of buffers that are mutated, in order: "
                "%s. Buffer nodes available: %s",
                what, d.s, l.s);
            ls_buf_free(&d);
            ls_buf_free(&l);
        } else {
            add(c, LS_SEV_ERROR, names[i], "%c%s output %s does not point to a %s that exists (target '%s')",
                kind_word[0] - 32, kind_word + 1, what, kind_word, o->target ? o->target : "None");
        }
    }
    ls_ptrmap_free(&mut);
    ls_ptrmap_free(&buf_t);
    ls_ptrmap_free(&par_t);
    ls_ptrmap_free(&user_in);
    for (uint32_t k = 0; k < users.n && tokens + mutations + k < n; k++) {
        const char *have = names[tokens + mutations + k];
        if (have == users.v[k]) continue;
        ls_buf b = {0};
        py_list(&b, users.v, users.n);
        add(c, LS_SEV_ERROR, have,
            "User output %s is not in the correct order or is not found in the exported program's user_output list: %s",
            have ? have : "None", b.s);
        ls_buf_free(&b);
        break;
    }
    free(mk.v);
    free(mv.v);
    free(bufs.v);
    free(users.v);
    free(names);
}

static void verify_one(const ls_program *p, const char *prog, ls_verify_result *out, uint32_t *cap, int depth);

static void verify_subs(const ls_program *p, const char *prog, ls_verify_result *out, uint32_t *cap, int depth)
{
    for (uint32_t i = 0; i < p->n_subs && depth < 8; i++) {
        if (!p->subs[i].program) continue;
        const char *name = prog ? ls_internf("%s/%s", prog, p->subs[i].name) : p->subs[i].name;
        verify_one(p->subs[i].program, name, out, cap, depth + 1);
    }
}

/* One program without its submodules. */
static void verify_program(const ls_program *p, const char *prog, ls_verify_result *out, uint32_t *cap)
{
    id_pos ids;
    id_pos_init(&ids, p);
    vctx c = {p, prog, out, *cap, &ids};
    node_vec ph = {0};
    uint32_t first = out->n, errors = out->n_errors, structural = out->n_structural;
    if (!check_graph(&c, &ids, true, &ph)) {
        /* a reference to a later or missing node, or an id twice: again, every id known */
        for (uint32_t k = first; k < out->n; k++) free(out->v[k].msg);
        out->n = first;
        out->n_errors = errors;
        out->n_structural = structural;
        ph.n = 0;
        id_pos_free(&ids);
        id_pos_init(&ids, p);
        for (uint32_t i = 0; i < p->n_nodes; i++) id_pos_set(&ids, p->nodes[i]->id, (int32_t)i);
        check_graph(&c, &ids, false, &ph);
    }
    check_inputs(&c, ph);
    check_outputs(&c);
    free(ph.v);
    id_pos_free(&ids);
    *cap = c.cap;
}

static void verify_one(const ls_program *p, const char *prog, ls_verify_result *out, uint32_t *cap, int depth)
{
    verify_program(p, prog, out, cap);
    verify_subs(p, prog, out, cap, depth);
}

void ls_verify(const ls_program *p, ls_verify_result *out)
{
    memset(out, 0, sizeof *out);
    uint32_t cap = 0;
    verify_one(p, NULL, out, &cap, 0);
}

/* The findings of one submodule (and those nested in it) in a result: they are contiguous, the
 * submodule's own first, as verify_one makes them. */
typedef struct span {
    uint32_t first, n;
} span;

static const char *top_component(const char *prog)
{
    const char *slash = strchr(prog, '/');
    return slash ? ls_intern_n(prog, (size_t)(slash - prog)) : prog;
}

static void copy_finding(ls_verify_result *out, uint32_t *cap, const ls_finding *f)
{
    if (out->n == *cap) {
        *cap = *cap ? *cap * 2 : 8;
        out->v = ls_realloc(out->v, sizeof *out->v * *cap);
    }
    ls_finding *d = &out->v[out->n++];
    *d = *f;
    d->msg = ls_strdup(f->msg);
    if (f->severity == LS_SEV_ERROR) out->n_errors++;
    if (f->structural) out->n_structural++;
}

static bool same_named(const ls_named_tensor *a, const ls_named_tensor *b, uint32_t n)
{
    for (uint32_t i = 0; i < n; i++)
        if (a[i].name != b[i].name || a[i].t != b[i].t || !ls_tmeta_equal(a[i].meta, b[i].meta)) return false;
    return true;
}

/* Everything the verifier reads is the same in a and b (a step that changed nothing). */
static bool same_program(const ls_program *a, const ls_program *b)
{
    if (a->n_nodes != b->n_nodes || a->n_inputs != b->n_inputs || a->n_outputs != b->n_outputs ||
        a->n_state != b->n_state || a->n_constants != b->n_constants || a->n_subs != b->n_subs ||
        a->dialect != b->dialect || a->verifier != b->verifier || a->has_weights != b->has_weights)
        return false;
    if (a->n_nodes && memcmp(a->nodes, b->nodes, sizeof *a->nodes * a->n_nodes) != 0) return false;
    for (uint32_t i = 0; i < a->n_inputs; i++) {
        const ls_input_spec *x = &a->inputs[i], *y = &b->inputs[i];
        if (x->kind != y->kind || x->persistent != y->persistent || x->name != y->name || x->target != y->target ||
            x->class_fqn != y->class_fqn || !ls_arg_equal(&x->value, &y->value))
            return false;
    }
    for (uint32_t i = 0; i < a->n_outputs; i++)
        if (a->outputs[i].kind != b->outputs[i].kind || a->outputs[i].name != b->outputs[i].name ||
            a->outputs[i].target != b->outputs[i].target)
            return false;
    for (uint32_t i = 0; i < a->n_subs; i++)
        if (a->subs[i].name != b->subs[i].name || a->subs[i].program != b->subs[i].program) return false;
    return same_named(a->state_dict, b->state_dict, a->n_state) && same_named(a->constants, b->constants, a->n_constants);
}

void ls_verify_next(const ls_program *p, const ls_program *prev, const ls_verify_result *prev_result,
                    ls_verify_result *out)
{
    if (prev && prev_result && same_program(p, prev)) {
        memset(out, 0, sizeof *out);
        uint32_t cap = 0;
        for (uint32_t k = 0; k < prev_result->n; k++) copy_finding(out, &cap, &prev_result->v[k]);
        return;
    }
    if (!prev || !prev_result || !p->n_subs || !prev->n_subs) {
        ls_verify(p, out);
        return;
    }
    memset(out, 0, sizeof *out);
    uint32_t cap = 0;
    verify_program(p, NULL, out, &cap);
    /* prev's submodules by name (a name given twice: never reused), and their findings */
    ls_ptrmap prev_sub = {0}, spans = {0};
    ls_ptrmap_reserve(&prev_sub, prev->n_subs);
    for (uint32_t i = 0; i < prev->n_subs; i++) {
        uintptr_t old;
        if (!ls_ptrmap_add(&prev_sub, prev->subs[i].name, (uintptr_t)prev->subs[i].program, &old))
            ls_ptrmap_put(&prev_sub, prev->subs[i].name, 0);
    }
    span *sp = ls_calloc(prev_result->n ? prev_result->n : 1, sizeof *sp);
    uint32_t nsp = 0;
    for (uint32_t k = 0; k < prev_result->n; k++) {
        const char *prog = prev_result->v[k].program;
        if (!prog) continue;
        const char *top = top_component(prog);
        uintptr_t at;
        if (ls_ptrmap_get(&spans, top, &at) && sp[at].first + sp[at].n == k) {
            sp[at].n++;
        } else if (!ls_ptrmap_get(&spans, top, NULL)) {
            sp[nsp] = (span){k, 1};
            ls_ptrmap_put(&spans, top, nsp++);
        } else {
            ls_ptrmap_put(&prev_sub, top, 0); /* not contiguous: check it again */
        }
    }
    ls_ptrmap seen = {0};
    for (uint32_t i = 0; i < p->n_subs; i++) {
        const ls_submodule *sub = &p->subs[i];
        if (!sub->program) continue;
        uintptr_t was = 0, at;
        bool twice = !ls_ptrmap_add(&seen, sub->name, 1, NULL);
        if (!twice && ls_ptrmap_get(&prev_sub, sub->name, &was) && was == (uintptr_t)sub->program) {
            if (ls_ptrmap_get(&spans, sub->name, &at))
                for (uint32_t k = sp[at].first; k < sp[at].first + sp[at].n; k++) copy_finding(out, &cap, &prev_result->v[k]);
            continue;
        }
        verify_one(sub->program, sub->name, out, &cap, 1);
    }
    ls_ptrmap_free(&seen);
    ls_ptrmap_free(&prev_sub);
    ls_ptrmap_free(&spans);
    free(sp);
}

void ls_verify_result_free(ls_verify_result *r)
{
    for (uint32_t i = 0; i < r->n; i++) free(r->v[i].msg);
    free(r->v);
    memset(r, 0, sizeof *r);
}
