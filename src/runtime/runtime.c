/* The interpreter: runs a program's graph in order on the CPU kernels, hands delegate calls to
 * their backend, and keeps mutable state (buffers written by BUFFER_MUTATION outputs or by
 * in-place ops) from one run to the next.
 *
 * Values live in one slot per node position and are released after their last use, so a long
 * graph holds only what is still needed. The program itself is never modified: parameters and
 * constants are shared by reference, and every buffer the program mutates is a private copy
 * owned by the runner (that copy is the state ls_runner_state shows). */
#include <inttypes.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "backend.h"
#include "node_stats.h"
#include "ptrmap.h"
#include "runtime.h"

typedef struct rstate {
    const char *target;   /* buffer FQN */
    ls_tensor *t;         /* owned */
} rstate;

typedef struct rdelegate {
    const ls_submodule *sub;
    const ls_backend *be;
    void *handle;
    double seconds;
    bool simulated;
} rdelegate;

typedef struct rph {            /* what a placeholder is bound to */
    enum { PH_USER, PH_DATA, PH_STATE, PH_NONE, PH_CONST } kind;
    uint32_t index;             /* user input number / state number */
    ls_tensor *data;            /* PH_DATA: borrowed from the program */
    ls_value cval;              /* PH_CONST */
} rph;

struct ls_runner {
    ls_program *p;
    uint32_t n;
    ls_value *vals;
    bool *ready;
    uint32_t *last_use;     /* per position: last position reading it (UINT32_MAX: kept to the end) */
    uint32_t *pos_of_id;    /* id → position */
    uint32_t n_ids;
    rph *ph;                /* per position (placeholders) */
    uint32_t *user_pos;     /* user input placeholders, signature order */
    uint32_t n_user;
    rstate *state;
    uint32_t n_state;
    rdelegate *del;
    uint32_t n_del;
    int32_t *del_of_pos;    /* call_delegate position → delegate index */
    bool *inplace_target;   /* per position: the first argument of an in-place op */
    ls_ptrmap mutated;      /* targets a BUFFER_/PARAMETER_MUTATION output writes */
    ls_ptrmap state_ix;     /* target → index in state */
    ls_run_stats stats;
    ls_node_stats *observed; /* per-node measurements of the runs (ls_runner_observe), or NULL */
    ls_value *kept;          /* per position: the value of the last run, when kept */
};

static const char *where(const ls_program *p)
{
    return p->path ? p->path : p->name ? p->name : "program";
}

static int32_t pos_of(const ls_runner *r, uint32_t id)
{
    return id < r->n_ids ? (int32_t)r->pos_of_id[id] : -1;
}

/* ---- preparation */

static int32_t state_of(ls_runner *r, const char *target)
{
    uintptr_t i;
    return ls_ptrmap_get(&r->state_ix, target, &i) ? (int32_t)i : -1;
}

typedef struct use_ctx {
    ls_runner *r;
    uint32_t pos;
} use_ctx;

static void note_use(uint32_t id, void *vctx)
{
    use_ctx *u = vctx;
    int32_t p = pos_of(u->r, id);
    if (p >= 0 && (u->r->last_use[p] == UINT32_MAX - 1 || u->r->last_use[p] < u->pos)) u->r->last_use[p] = u->pos;
}

/* After node u->pos ran: a value it was the last to read is released. */
static void release_if_last(uint32_t id, void *vctx)
{
    use_ctx *u = vctx;
    int32_t q = pos_of(u->r, id);
    if (q >= 0 && u->r->last_use[q] == u->pos) ls_value_release(&u->r->vals[q]);
}

/* Is the target of this placeholder written by the program (a mutation output, or the first
 * argument of an in-place op: inplace_target, computed once for the graph)? */
static bool placeholder_mutated(const ls_runner *r, uint32_t pos, const ls_input_spec *s)
{
    return ls_ptrmap_get(&r->mutated, s->target, NULL) || r->inplace_target[pos];
}

static int bind_placeholder(ls_runner *r, uint32_t pos, const ls_node *n, const ls_input_spec *s, ls_error *err)
{
    rph *ph = &r->ph[pos];
    const ls_program *p = r->p;
    if (!s || s->kind == LS_IN_USER_INPUT) {
        ph->kind = PH_USER;
        ph->index = r->n_user;
        r->user_pos[r->n_user++] = pos;
        return 0;
    }
    switch ((ls_input_kind)s->kind) {
    case LS_IN_PARAMETER:
    case LS_IN_BUFFER:
    case LS_IN_CONSTANT_TENSOR: {
        ls_named_tensor *nt = ls_program_spec_data(p, s);
        const char *kind = ls_input_kind_name((ls_input_kind)s->kind);
        if (!nt || !nt->t) {
            const char *why = p->origin && p->origin->missing_data && s->target ? p->origin->missing_data(p->origin, s->target) : NULL;
            if (why) return ls_fail(err, "%s: %s %s (placeholder %s): %s", where(p), kind, s->target, n->name, why);
            if (!p->has_weights) /* valid, but it needs what was not given: exit 3, as lowering it is */
                return ls_fail_needs(err, "%s: the program was loaded without weight data: %s '%s' (placeholder %s) is missing",
                               where(p), kind, s->target ? s->target : "?", n->name);
            return ls_fail(err, "%s: no data for %s '%s' (placeholder %s)", where(p), kind, s->target ? s->target : "?", n->name);
        }
        if (placeholder_mutated(r, pos, s)) {
            int32_t k = state_of(r, s->target);
            if (k < 0) {
                r->state = ls_realloc(r->state, sizeof *r->state * (r->n_state + 1));
                r->state[r->n_state].target = s->target;
                r->state[r->n_state].t = ls_tensor_clone(nt->t); /* the program's bytes stay as loaded */
                ls_ptrmap_put(&r->state_ix, s->target, r->n_state);
                k = (int32_t)r->n_state++;
            }
            ph->kind = PH_STATE;
            ph->index = (uint32_t)k;
        } else {
            ph->kind = PH_DATA;
            ph->data = nt->t;
        }
        return 0;
    }
    case LS_IN_CONSTANT_INPUT:
        ph->kind = PH_CONST;
        switch (s->value.kind) {
        case LS_ARG_INT: ph->cval = ls_value_int(s->value.v.i); break;
        case LS_ARG_FLOAT: ph->cval = ls_value_float(s->value.v.f); break;
        case LS_ARG_BOOL: ph->cval = ls_value_bool(s->value.v.b); break;
        case LS_ARG_STRING: ph->cval = (ls_value){.kind = LS_V_STRING, .s = s->value.v.s}; break;
        default: ph->cval = ls_value_none(); break;
        }
        return 0;
    default: /* custom objects and tokens carry no values here */
        ph->kind = PH_NONE;
        return 0;
    }
}

static int prepare_delegate(ls_runner *r, uint32_t pos, const ls_node *n, ls_error *err)
{
    const ls_program *p = r->p;
    const ls_node *ga = n->nargs && n->args[0].kind == LS_ARG_NODE ? ls_program_node(p, n->args[0].v.node) : NULL;
    if (!ga || ga->kind != LS_NODE_GET_ATTR)
        return ls_fail(err, "%s: node %s: executorch_call_delegate does not name a lowered module", where(p), n->name);
    const ls_submodule *sub = ls_program_sub(p, ga->target);
    if (!sub) return ls_fail(err, "%s: node %s: lowered module '%s' is not in the program", where(p), n->name, ga->target);
    for (uint32_t i = 0; i < r->n_del; i++)
        if (r->del[i].sub == sub) {
            r->del_of_pos[pos] = (int32_t)i;
            return 0;
        }
    bool simulated;
    const ls_backend *be = ls_backend_resolve(sub->backend_id, sub->processed, &simulated);
    if (!be)
        return ls_fail_needs(err, /* the program is fine: lowerscope lacks the backend (exit 3) */
                             "%s: valid, but delegate %s needs %s: that backend is not available here and its blob is "
                             "not one the bundled delegate runs",
                             where(p), sub->name, sub->backend_id && *sub->backend_id ? sub->backend_id : "a backend with no id");
    if (!sub->processed)
        return ls_fail(err, "%s: delegate %s (%s) has no processed blob: the program was not preprocessed for its backend",
                       where(p), sub->name, sub->backend_id);
    void *handle = NULL;
    if (be->init && be->init(sub->processed, sub->specs, sub->nspecs, p->named_data, &handle, err) != 0)
        return ls_fail_prefix(err, "%s: delegate %s (%s)", where(p), sub->name, sub->backend_id);
    r->del = ls_realloc(r->del, sizeof *r->del * (r->n_del + 1));
    r->del[r->n_del] = (rdelegate){sub, be, handle, 0, simulated};
    r->del_of_pos[pos] = (int32_t)r->n_del++;
    return 0;
}

ls_runner *ls_runner_new(const ls_program *cp, ls_error *err)
{
    ls_program *p = (ls_program *)cp;
    ls_runner *r = ls_calloc(1, sizeof *r);
    r->p = ls_program_ref(p);
    r->n = p->n_nodes;
    uint32_t cap = r->n ? r->n : 1;
    r->vals = ls_calloc(cap, sizeof *r->vals);
    r->ready = ls_calloc(cap, sizeof *r->ready);
    r->last_use = ls_malloc(sizeof *r->last_use * cap);
    r->ph = ls_calloc(cap, sizeof *r->ph);
    r->user_pos = ls_calloc(cap, sizeof *r->user_pos);
    r->del_of_pos = ls_malloc(sizeof *r->del_of_pos * cap);
    r->n_ids = p->next_id + 1;
    r->pos_of_id = ls_malloc(sizeof *r->pos_of_id * r->n_ids);
    for (uint32_t i = 0; i < r->n_ids; i++) r->pos_of_id[i] = UINT32_MAX;
    for (uint32_t i = 0; i < r->n; i++) {
        if (p->nodes[i]->id < r->n_ids) r->pos_of_id[p->nodes[i]->id] = i;
        r->last_use[i] = UINT32_MAX - 1; /* never read: released right after it is made */
        r->del_of_pos[i] = -1;
    }
    uint32_t n_ph = 0;
    for (uint32_t i = 0; i < p->n_outputs; i++) {
        const ls_output_spec *o = &p->outputs[i];
        if (o->kind == LS_OUT_BUFFER_MUTATION || o->kind == LS_OUT_PARAMETER_MUTATION) ls_ptrmap_put(&r->mutated, o->target, i);
    }
    r->inplace_target = ls_calloc(cap, sizeof *r->inplace_target);
    for (uint32_t i = 0; i < r->n; i++) {
        const ls_node *n = p->nodes[i];
        n_ph += n->kind == LS_NODE_PLACEHOLDER;
        if (n->kind == LS_NODE_CALL && n->op && (n->op->flags & LS_OPF_INPLACE) && n->nargs && n->args[0].kind == LS_ARG_NODE) {
            int32_t t = pos_of(r, n->args[0].v.node);
            if (t >= 0) r->inplace_target[t] = true;
        }
    }
    if (p->n_inputs && p->n_inputs != n_ph) {
        ls_fail(err, "%s: the program has %u placeholders but its signature lists %u inputs", where(p), n_ph, p->n_inputs);
        goto fail;
    }
    const ls_node *out_node = NULL;
    for (uint32_t i = 0, k = 0; i < r->n; i++) {
        const ls_node *n = p->nodes[i];
        use_ctx u = {r, i};
        for (uint16_t a = 0; a < n->nargs; a++) ls_arg_each_node(&n->args[a], note_use, &u);
        switch ((ls_node_kind)n->kind) {
        case LS_NODE_PLACEHOLDER:
            if (bind_placeholder(r, i, n, p->n_inputs ? &p->inputs[k] : NULL, err) != 0) goto fail;
            k++;
            break;
        case LS_NODE_CALL:
            if (!n->op) {
                ls_fail_needs(err, "%s: valid, but node %s needs a kernel for %s, an operator unknown to lowerscope", where(p),
                              n->name, n->target ? n->target : "?");
                goto fail;
            }
            if (n->op->id == LS_OP_call_delegate) {
                if (prepare_delegate(r, i, n, err) != 0) goto fail;
            } else if (!ls_kernel_for(n->op)) {
                ls_fail_needs(err, "%s: valid, but node %s needs a kernel for %s, which lowerscope does not have", where(p),
                              n->name, n->op->qualname);
                goto fail;
            }
            break;
        case LS_NODE_OUTPUT:
            out_node = n;
            break;
        default: break;
        }
    }
    if (!out_node) {
        ls_fail(err, "%s: the graph has no output node", where(p));
        goto fail;
    }
    if (p->n_outputs && p->n_outputs != out_node->nargs) {
        ls_fail(err, "%s: the output node has %u values but the signature lists %u outputs", where(p), out_node->nargs,
                p->n_outputs);
        goto fail;
    }
    r->stats.n_delegates = r->n_del;
    r->stats.delegate_names = ls_calloc(r->n_del + 1, sizeof(char *));
    r->stats.delegate_backends = ls_calloc(r->n_del + 1, sizeof(char *));
    r->stats.delegate_seconds = ls_calloc(r->n_del + 1, sizeof(double));
    r->stats.delegate_simulated = ls_calloc(r->n_del + 1, sizeof(bool));
    for (uint32_t i = 0; i < r->n_del; i++) {
        r->stats.delegate_names[i] = r->del[i].sub->name;
        r->stats.delegate_simulated[i] = r->del[i].simulated;
        r->stats.delegate_backends[i] = r->del[i].sub->backend_id;
    }
    return r;
fail:
    ls_runner_free(r);
    return NULL;
}

void ls_runner_free(ls_runner *r)
{
    if (!r) return;
    for (uint32_t i = 0; i < r->n; i++) {
        ls_value_release(&r->vals[i]);
        ls_value_release(&r->ph[i].cval);
    }
    for (uint32_t i = 0; i < r->n_state; i++) ls_tensor_unref(r->state[i].t);
    for (uint32_t i = 0; i < r->n_del; i++)
        if (r->del[i].be->destroy) r->del[i].be->destroy(r->del[i].handle);
    free(r->state);
    free(r->del);
    free(r->vals);
    free(r->ready);
    free(r->last_use);
    free(r->pos_of_id);
    free(r->ph);
    free(r->user_pos);
    free(r->del_of_pos);
    free(r->inplace_target);
    ls_ptrmap_free(&r->mutated);
    ls_ptrmap_free(&r->state_ix);
    free(r->stats.delegate_names);
    free(r->stats.delegate_backends);
    free(r->stats.delegate_seconds);
    free(r->stats.delegate_simulated);
    if (r->kept)
        for (uint32_t i = 0; i < r->n; i++) ls_value_release(&r->kept[i]);
    free(r->kept);
    ls_program_unref(r->p);
    free(r);
}

void ls_runner_observe(ls_runner *r, ls_node_stats *stats, bool keep)
{
    r->observed = stats && stats->n == r->n ? stats : NULL;
    if (keep && !r->kept) r->kept = ls_calloc(r->n ? r->n : 1, sizeof *r->kept);
}

const ls_value *ls_runner_value(const ls_runner *r, uint32_t pos)
{
    return r->kept && pos < r->n && r->kept[pos].kind != LS_V_NONE ? &r->kept[pos] : NULL;
}

const ls_program *ls_runner_program(const ls_runner *r)
{
    return r->p;
}

/* What one node made, into its record: every tensor (a delegate's list: each item). */
static void observe_value(ls_node_stat *st, const ls_value *v)
{
    if (v->kind == LS_V_TENSOR) ls_node_stat_add_tensor(st, v->t);
    else if (v->kind == LS_V_LIST)
        for (uint32_t i = 0; i < v->n; i++)
            if (v->items[i].kind == LS_V_TENSOR) ls_node_stat_add_tensor(st, v->items[i].t);
}

/* ---- running */

static const ls_value *lookup(uint32_t id, void *ctx)
{
    ls_runner *r = ctx;
    int32_t p = pos_of(r, id);
    return p >= 0 && r->ready[p] ? &r->vals[p] : NULL;
}

/* The program's metadata says what each node makes; a kernel that disagrees is caught here
 * (static shapes and known dtypes only). */
static int check_meta(const ls_runner *r, const ls_node *n, const ls_value *v, ls_error *err)
{
    if (n->val_kind != LS_VAL_TENSOR || n->nvals < 1 || v->kind != LS_V_TENSOR) return 0;
    const ls_tmeta *m = &n->vals[0];
    const ls_tensor *t = v->t;
    if (m->dtype == LS_DT_UNKNOWN || ls_tensor_fits(m, t)) return 0;
    char s1[128], s2[128];
    ls_tmeta got;
    ls_tensor_meta(t, &got);
    return ls_fail(err, "%s: node %s (%s): produced %s where the program says %s", where(r->p), n->name,
                   n->op ? n->op->qualname : "?", ls_tmeta_str(&got, s1, sizeof s1), ls_tmeta_str(m, s2, sizeof s2));
}

static void collect_inputs(const ls_runner *r, const ls_arg *a, ls_value **vals, uint32_t *n)
{
    uint32_t count = a->kind == LS_ARG_NODE ? 1 : (a->kind == LS_ARG_NODES || a->kind == LS_ARG_OPT_NODES) ? a->n : 0;
    for (uint32_t i = 0; i < count; i++) {
        uint32_t id = a->kind == LS_ARG_NODE ? a->v.node : a->v.nodes[i];
        const ls_value *v = lookup(id, (void *)r);
        *vals = ls_realloc(*vals, sizeof **vals * (*n + 1));
        (*vals)[(*n)++] = v ? ls_value_copy(v) : ls_value_none();
    }
}

static int run_delegate(ls_runner *r, uint32_t pos, const ls_node *n, ls_value *out, ls_error *err)
{
    rdelegate *d = &r->del[r->del_of_pos[pos]];
    ls_value *in = NULL, *res = NULL;
    uint32_t nin = 0, nres = 0;
    for (uint16_t a = 1; a < n->nargs; a++) collect_inputs(r, &n->args[a], &in, &nin);
    double t0 = ls_now();
    int rc = d->be->execute(d->handle, in, nin, &res, &nres, err);
    d->seconds += ls_now() - t0;
    r->stats.delegate_seconds[r->del_of_pos[pos]] = d->seconds;
    for (uint32_t i = 0; i < nin; i++) ls_value_release(&in[i]);
    free(in);
    if (rc != 0) return ls_fail_prefix(err, "%s: node %s: delegate %s (%s)", where(r->p), n->name, d->sub->name, d->sub->backend_id);
    *out = ls_value_list(nres);
    for (uint32_t i = 0; i < nres; i++) out->items[i] = res[i];
    free(res);
    return 0;
}

static int check_input(const ls_runner *r, const ls_node *ph, const ls_value *v, uint32_t k, ls_error *err)
{
    if (v->kind != LS_V_TENSOR || ph->val_kind != LS_VAL_TENSOR || ph->nvals < 1) return 0;
    const ls_tmeta *m = &ph->vals[0];
    const ls_tensor *t = v->t;
    if (ls_tensor_fits(m, t)) return 0;
    char s1[128], s2[128];
    ls_tmeta got;
    ls_tensor_meta(t, &got);
    return ls_fail(err, "%s: input %u '%s': expected %s, got %s", where(r->p), k, ph->name, ls_tmeta_str(m, s1, sizeof s1),
                   ls_tmeta_str(&got, s2, sizeof s2));
}

static void release_all(ls_runner *r)
{
    for (uint32_t i = 0; i < r->n; i++) {
        ls_value_release(&r->vals[i]);
        r->ready[i] = false;
    }
}

/* Writes a new value of a mutated buffer (or user input) into the tensor that holds it. */
static int write_back(ls_tensor *dst, const ls_value *v, const char *what, ls_runner *r, ls_error *err)
{
    if (v->kind != LS_V_TENSOR) return ls_fail(err, "%s: the new value of %s is not a tensor", where(r->p), what);
    if (v->t == dst) return 0;
    const ls_tensor *src = v->t;
    if (src->dtype != dst->dtype || src->numel != dst->numel) {
        char s1[128], s2[128];
        ls_tmeta a, b;
        ls_tensor_meta(src, &a);
        ls_tensor_meta(dst, &b);
        return ls_fail(err, "%s: the new value of %s is %s, the buffer is %s", where(r->p), what, ls_tmeta_str(&a, s1, sizeof s1),
                       ls_tmeta_str(&b, s2, sizeof s2));
    }
    memmove(dst->data, src->data, dst->nbytes);
    dst->hash_valid = false;
    return 0;
}

int ls_runner_run(ls_runner *r, const ls_value *inputs, uint32_t n_inputs, ls_value **outputs, uint32_t *n_outputs,
                  ls_error *err)
{
    ls_program *p = r->p;
    *outputs = NULL;
    *n_outputs = 0;
    if (n_inputs != r->n_user)
        return ls_fail(err, "%s: the program takes %u user input%s, %u given", where(p), r->n_user, r->n_user == 1 ? "" : "s",
                       n_inputs);
    for (uint32_t k = 0; k < n_inputs; k++)
        if (check_input(r, p->nodes[r->user_pos[k]], &inputs[k], k, err) != 0) return -1;
    int rc = 0;
    const ls_node *out_node = NULL;
    /* CPU time is the run's time minus the delegates' (a clock read per node costs too much) */
    double t_start = ls_now(), del_before = 0;
    for (uint32_t d = 0; d < r->n_del; d++) del_before += r->del[d].seconds;
    if (r->kept)
        for (uint32_t i = 0; i < r->n; i++) ls_value_release(&r->kept[i]);
    /* out of memory names the file and the node; a delegate's own program run inside this one
     * keeps the outer file */
    ls_running_now was = ls_running((ls_running_now){NULL, NULL, NULL});
    const char *file = was.file ? was.file : where(p);
    ls_running(was.file ? was : (ls_running_now){file, NULL, NULL});
    for (uint32_t i = 0; i < r->n && rc == 0; i++) {
        const ls_node *n = p->nodes[i];
        ls_value v = ls_value_none();
        double t_node = r->observed && n->kind == LS_NODE_CALL ? ls_now() : 0;
        switch ((ls_node_kind)n->kind) {
        case LS_NODE_PLACEHOLDER: {
            const rph *ph = &r->ph[i];
            switch (ph->kind) {
            case PH_USER: v = ls_value_copy(&inputs[ph->index]); break;
            case PH_DATA: v = ls_value_tensor(ls_tensor_ref(ph->data)); break;
            case PH_STATE: v = ls_value_tensor(ls_tensor_ref(r->state[ph->index].t)); break;
            case PH_CONST: v = ls_value_copy(&ph->cval); break;
            default: break;
            }
            break;
        }
        case LS_NODE_CALL:
            if (r->del_of_pos[i] >= 0) {
                ls_running((ls_running_now){file, n->name, r->del[r->del_of_pos[i]].sub->backend_id});
                rc = run_delegate(r, i, n, &v, err);
            } else {
                ls_running((ls_running_now){file, n->name, n->op ? n->op->qualname : n->target});
                rc = ls_eval_node(n, lookup, r, &v, err);
                if (rc != 0) ls_fail_prefix(err, "%s", where(p));
                else rc = check_meta(r, n, &v, err);
            }
            break;
        case LS_NODE_OUTPUT: out_node = n; break;
        default: break;
        }
        if (r->observed && rc == 0 && n->kind != LS_NODE_OUTPUT) {
            ls_node_stat *st = &r->observed->v[i];
            if (n->kind == LS_NODE_CALL) ls_node_stat_add_time(st, ls_now() - t_node);
            observe_value(st, &v);
            st->runs++;
        }
        /* kept by reference: the comparison reads them before the next run changes any state */
        if (r->kept && rc == 0) r->kept[i] = ls_value_copy(&v);
        r->vals[i] = v;
        r->ready[i] = true;
        /* release what is no longer read */
        if (n->kind != LS_NODE_OUTPUT) {
            if (r->last_use[i] == UINT32_MAX - 1) ls_value_release(&r->vals[i]);
            /* every node an argument names, as note_use saw them (symbolic sizes too) */
            use_ctx uc = {r, i};
            for (uint16_t a = 0; a < n->nargs; a++) ls_arg_each_node(&n->args[a], release_if_last, &uc);
        }
    }
    double del_after = 0;
    for (uint32_t d = 0; d < r->n_del; d++) del_after += r->del[d].seconds;
    r->stats.cpu_seconds += ls_now() - t_start - (del_after - del_before);
    if (r->observed && rc == 0) r->observed->runs++;
    if (rc == 0 && !out_node) rc = ls_fail(err, "%s: the graph has no output node", where(p));
    /* outputs: user outputs are returned, then mutations written back. A user output that
     * shares storage with a buffer (a view of it) is copied first, so the write-back does not
     * change a value already returned. */
    ls_value *outs = NULL;
    uint32_t nouts = 0;
    for (int pass = 0; pass < 2; pass++)
        for (uint16_t k = 0; rc == 0 && out_node && k < out_node->nargs; k++) {
            uint8_t kind = p->n_outputs ? p->outputs[k].kind : LS_OUT_USER_OUTPUT;
            bool user = kind == LS_OUT_USER_OUTPUT || kind == LS_OUT_LOSS_OUTPUT;
            bool mutation = kind == LS_OUT_BUFFER_MUTATION || kind == LS_OUT_PARAMETER_MUTATION ||
                            kind == LS_OUT_USER_INPUT_MUTATION;
            if ((pass == 0 && !user) || (pass == 1 && !mutation)) continue;
            const ls_arg *a = &out_node->args[k];
            ls_value v = ls_value_none();
            if (a->kind == LS_ARG_NODE) {
                const ls_value *src = lookup(a->v.node, r);
                if (src) v = ls_value_copy(src);
            } else if (a->kind == LS_ARG_INT) {
                v = ls_value_int(a->v.i);
            } else if (a->kind == LS_ARG_FLOAT) {
                v = ls_value_float(a->v.f);
            } else if (a->kind == LS_ARG_BOOL) {
                v = ls_value_bool(a->v.b);
            } else if (a->kind == LS_ARG_STRING) { /* a constant method's String (interned) */
                v = (ls_value){.kind = LS_V_STRING, .s = a->v.s};
            }
            if (user) {
                if (v.kind == LS_V_TENSOR)
                    for (uint32_t s = 0; s < r->n_state; s++)
                        if (v.t->owner == r->state[s].t->owner) {
                            ls_tensor *c = ls_tensor_clone(v.t);
                            ls_tensor_unref(v.t);
                            v.t = c;
                            break;
                        }
                outs = ls_realloc(outs, sizeof *outs * (nouts + 1));
                outs[nouts++] = v;
                continue;
            }
            const char *target = p->outputs[k].target;
            if (kind == LS_OUT_USER_INPUT_MUTATION) {
                for (uint32_t u = 0; u < r->n_user; u++)
                    if (p->nodes[r->user_pos[u]]->name == target && inputs[u].kind == LS_V_TENSOR)
                        rc = write_back(inputs[u].t, &v, target, r, err);
            } else {
                int32_t s = state_of(r, target);
                if (s >= 0) rc = write_back(r->state[s].t, &v, target, r, err);
            }
            ls_value_release(&v);
        }
    release_all(r);
    ls_running(was);
    if (rc != 0) {
        for (uint32_t i = 0; i < nouts; i++) ls_value_release(&outs[i]);
        free(outs);
        return -1;
    }
    *outputs = outs;
    *n_outputs = nouts;
    return 0;
}

const ls_run_stats *ls_runner_stats(const ls_runner *r)
{
    return &r->stats;
}

uint32_t ls_runner_state_count(const ls_runner *r)
{
    uint32_t n = r->n_state;
    for (uint32_t i = 0; i < r->n_del; i++)
        if (r->del[i].be->state_count) n += r->del[i].be->state_count(r->del[i].handle);
    return n;
}

/* Finds which delegate holds state number i (after the top-level ones). */
static int delegate_state(const ls_runner *r, uint32_t i, uint32_t *d, uint32_t *k)
{
    if (i < r->n_state) return 0;
    i -= r->n_state;
    for (uint32_t j = 0; j < r->n_del; j++) {
        uint32_t c = r->del[j].be->state_count ? r->del[j].be->state_count(r->del[j].handle) : 0;
        if (i < c) {
            *d = j;
            *k = i;
            return 1;
        }
        i -= c;
    }
    return -1;
}

const char *ls_runner_state_name(const ls_runner *r, uint32_t i)
{
    uint32_t d, k;
    int w = delegate_state(r, i, &d, &k);
    if (w == 0) return r->state[i].target;
    if (w < 0) return NULL;
    const char *inner = r->del[d].be->state_name ? r->del[d].be->state_name(r->del[d].handle, k) : "?";
    return ls_internf("%s/%s", r->del[d].sub->name, inner ? inner : "?");
}

ls_tensor *ls_runner_state(const ls_runner *r, uint32_t i)
{
    uint32_t d, k;
    int w = delegate_state(r, i, &d, &k);
    if (w == 0) return r->state[i].t;
    if (w < 0 || !r->del[d].be->state_get) return NULL;
    return r->del[d].be->state_get(r->del[d].handle, k);
}
