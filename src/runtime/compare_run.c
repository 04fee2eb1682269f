/* A reference program run next to the program being checked (compare.h): the same inputs for
 * both, state carrying over on both sides, every user output and every state tensor compared
 * with the tolerance of its dtype. lowerscope run --compare / --compare-with and the UI's run
 * screen share it. */
#include "compare.h"
#include "node_stats.h"

#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

typedef LS_VEC(ls_compare_item) item_vec;

struct ls_compare_run {
    const char *where;
    ls_compare_opts opts;
    ls_runner *r;     /* the reference's */
    ls_value *inputs; /* this run's inputs, cloned before the program's run can touch them */
    uint32_t n_inputs;
    int64_t runs;
    item_vec outputs, states;
    uint32_t *ref_state; /* by state item: the reference's state index (UINT32_MAX: none) */
    const char **ref_outputs; /* the reference's user output names (interned) */
    uint32_t n_ref_outputs;
    bool states_ready;
    ls_node_stats *nodes; /* node-by-node comparison into these (ls_compare_run_nodes), or NULL */
};

ls_compare_run *ls_compare_run_new(const ls_program *ref, const ls_program *p, const char *where,
                                   const ls_compare_opts *opts, ls_error *err)
{
    if (!ref->has_weights) /* a need, as running it alone is (exit 3) */
        return ls_fail_needs(err, "%s: the program was loaded without weight data: it cannot run as the reference", where),
               NULL;
    uint32_t a = ls_program_user_inputs(p, NULL, 0), b = ls_program_user_inputs(ref, NULL, 0);
    if (a != b)
        return ls_fail(err, "%s takes %u user input%s, the program %u: they cannot run on the same inputs", where, b,
                       b == 1 ? "" : "s", a),
               NULL;
    /* the same inputs must fit both: a dtype or a static shape that differs fails here, before
     * anything runs (it failed at the reference's first run, after the program's) */
    const ls_node *pin[64], *rin[64];
    uint32_t na = ls_program_user_inputs(p, pin, 64), nb = ls_program_user_inputs(ref, rin, 64);
    for (uint32_t k = 0; k < na && k < nb && k < 64; k++) {
        const ls_tmeta *x = ls_node_tval(pin[k]), *y = ls_node_tval(rin[k]);
        if (!x || !y || x->dtype == LS_DT_UNKNOWN || y->dtype == LS_DT_UNKNOWN) continue;
        bool differs = x->dtype != y->dtype || x->ndim != y->ndim;
        for (int d = 0; !differs && d < x->ndim; d++) differs = !x->sym[d] && !y->sym[d] && x->sizes[d] != y->sizes[d];
        if (!differs) continue;
        char sx[128], sy[128];
        return ls_fail(err, "%s: input %u '%s' is %s, the program's '%s' is %s: they cannot run on the same inputs", where, k,
                       rin[k]->name, ls_tmeta_str(y, sy, sizeof sy), pin[k]->name, ls_tmeta_str(x, sx, sizeof sx)),
               NULL;
    }
    uint32_t oa = ls_program_user_outputs(p, NULL, 0), ob = ls_program_user_outputs(ref, NULL, 0);
    if (oa != ob)
        return ls_fail(err, "%s has %u user output%s, the program %u: they cannot be compared", where, ob, ob == 1 ? "" : "s",
                       oa),
               NULL;
    ls_runner *r = ls_runner_new(ref, err);
    if (!r) return ls_fail_prefix(err, "%s", where), NULL;
    ls_compare_run *c = ls_calloc(1, sizeof *c);
    c->where = ls_intern(where);
    c->opts = opts ? *opts : (ls_compare_opts){-1, -1};
    c->r = r;
    c->n_ref_outputs = ls_program_user_outputs(ref, NULL, 0);
    c->ref_outputs = ls_calloc(c->n_ref_outputs + 1, sizeof *c->ref_outputs);
    ls_program_user_outputs(ref, c->ref_outputs, c->n_ref_outputs);
    return c;
}

static void release_inputs(ls_compare_run *c)
{
    for (uint32_t i = 0; i < c->n_inputs; i++) ls_value_release(&c->inputs[i]);
    free(c->inputs);
    c->inputs = NULL;
    c->n_inputs = 0;
}

void ls_compare_run_inputs(ls_compare_run *c, const ls_value *inputs, uint32_t n)
{
    release_inputs(c);
    c->inputs = ls_calloc(n ? n : 1, sizeof *c->inputs);
    c->n_inputs = n;
    for (uint32_t i = 0; i < n; i++)
        c->inputs[i] = inputs[i].kind == LS_V_TENSOR ? ls_value_tensor(ls_tensor_clone(inputs[i].t)) : ls_value_copy(&inputs[i]);
}

/* The tolerance for a reference value: its dtype's, overridden for floating-point values. */
static void tolerance_for(const ls_compare_run *c, const ls_value *want, ls_compare_item *it)
{
    const ls_value *v = want;
    if (v->kind == LS_V_LIST)
        for (uint32_t i = 0; i < v->n; i++)
            if (v->items[i].kind == LS_V_TENSOR) {
                v = &v->items[i];
                break;
            }
    ls_dtype dt = v->kind == LS_V_TENSOR ? (ls_dtype)v->t->dtype
                  : v->kind == LS_V_FLOAT ? LS_DT_UNKNOWN /* a Python float: float32's tolerance */
                  : v->kind == LS_V_BOOL  ? LS_DT_BOOL
                                          : LS_DT_I64;
    it->dtype = v->kind == LS_V_TENSOR ? dt : LS_DT_UNKNOWN;
    ls_compare_tolerance(dt, &it->rtol, &it->atol);
    if (dt == LS_DT_UNKNOWN || ls_dtype_is_float(dt)) {
        if (c->opts.rtol >= 0) it->rtol = c->opts.rtol;
        if (c->opts.atol >= 0) it->atol = c->opts.atol;
    }
}

void ls_compare_item_merge(ls_compare_item *acc, const ls_compare_item *x)
{
    double max_abs = fmax(acc->d.max_abs, x->d.max_abs), max_rel = fmax(acc->d.max_rel, x->d.max_rel);
    if (acc->d.pass) { /* the first failure stays */
        acc->d = x->d;
        acc->run = x->run;
    }
    acc->d.max_abs = max_abs;
    acc->d.max_rel = max_rel;
}

static const char *target_of(const char *state_name)
{
    const char *slash = strrchr(state_name, '/');
    return slash ? slash + 1 : state_name;
}

/* A state the program's .pte gave no name: exir writes a mutable buffer with no FQN unless asked
 * (emit_mutable_buffer_names), and the .pte loader calls it _buffer_<value index>. */
static bool unnamed_state(const char *name)
{
    return strncmp(target_of(name), "_buffer_", 8) == 0;
}

static bool same_shape(const ls_tensor *a, const ls_tensor *b)
{
    if (!a || !b || a->dtype != b->dtype || a->ndim != b->ndim) return false;
    for (int d = 0; d < a->ndim; d++)
        if (a->sizes[d] != b->sizes[d]) return false;
    return true;
}

/* The reference state for program state i: the untaken one of the same target; for a state its
 * file left unnamed, the first untaken one no program state names, of the same dtype and shape
 * (exir keeps the buffers' order: the .pte's values follow the signature's placeholders). */
static uint32_t ref_state_for(ls_compare_run *c, const ls_runner *program, uint32_t i, const bool *taken,
                              const bool *named)
{
    uint32_t nr = ls_runner_state_count(c->r);
    const char *name = ls_runner_state_name(program, i), *target = target_of(name);
    uint32_t j = 0;
    while (j < nr && (taken[j] || strcmp(target_of(ls_runner_state_name(c->r, j)), target) != 0)) j++;
    if (j < nr || !unnamed_state(name)) return j;
    for (j = 0; j < nr; j++)
        if (!taken[j] && !named[j] && same_shape(ls_runner_state(program, i), ls_runner_state(c->r, j))) return j;
    return nr;
}

/* Pairs every state of the program with the reference's state of the same target; reference
 * states left over are states the program lost. */
static void pair_states(ls_compare_run *c, const ls_runner *program)
{
    uint32_t np = ls_runner_state_count(program), nr = ls_runner_state_count(c->r);
    bool *taken = ls_calloc(nr + 1, sizeof *taken), *named = ls_calloc(nr + 1, sizeof *named);
    c->ref_state = ls_calloc((size_t)np + nr + 1, sizeof *c->ref_state);
    for (uint32_t i = 0; i < np; i++) { /* the reference states some program state names */
        const char *target = target_of(ls_runner_state_name(program, i));
        for (uint32_t j = 0; j < nr; j++)
            if (!strcmp(target_of(ls_runner_state_name(c->r, j)), target)) named[j] = true;
    }
    for (uint32_t i = 0; i < np; i++) {
        const char *name = ls_runner_state_name(program, i);
        uint32_t j = ref_state_for(c, program, i, taken, named);
        ls_compare_item it = {.run = -1, .index = i, .name = ls_intern(name), .compared = j < nr};
        it.d.pass = true;
        it.d.worst = -1;
        if (j < nr) {
            taken[j] = true;
            it.ref_name = ls_intern(ls_runner_state_name(c->r, j));
        }
        c->ref_state[c->states.n] = j < nr ? j : UINT32_MAX;
        ls_vec_push(&c->states, it);
    }
    for (uint32_t j = 0; j < nr; j++) {
        if (taken[j]) continue;
        const char *ref_name = ls_intern(ls_runner_state_name(c->r, j));
        ls_compare_item it = {.run = -1, .index = UINT32_MAX, .ref_name = ref_name, .compared = true};
        it.d.worst = -1;
        snprintf(it.d.why, sizeof it.d.why, "the program keeps no state of target '%s'", target_of(ref_name));
        const ls_tensor *t = ls_runner_state(c->r, j);
        it.dtype = t ? (ls_dtype)t->dtype : LS_DT_UNKNOWN;
        c->ref_state[c->states.n] = j;
        ls_vec_push(&c->states, it);
    }
    free(taken);
    free(named);
    c->states_ready = true;
}

static void compare_states(ls_compare_run *c, const ls_runner *program, int64_t run)
{
    if (!c->states_ready) pair_states(c, program);
    for (uint32_t s = 0; s < c->states.n; s++) {
        ls_compare_item *acc = &c->states.v[s];
        if (!acc->compared || !acc->name) {
            acc->run = run;
            continue;
        }
        ls_tensor *got = ls_runner_state(program, acc->index), *want = ls_runner_state(c->r, c->ref_state[s]);
        if (!got || !want) continue;
        ls_value g = {.kind = LS_V_TENSOR, .t = got}, w = {.kind = LS_V_TENSOR, .t = want};
        ls_compare_item x = *acc;
        x.run = run;
        tolerance_for(c, &w, &x);
        ls_compare_values(&g, &w, x.rtol, x.atol, &x.d);
        if (acc->run < 0) *acc = x;
        else ls_compare_item_merge(acc, &x);
        acc->rtol = x.rtol;
        acc->atol = x.atol;
        acc->dtype = x.dtype;
    }
}

int ls_compare_run_step(ls_compare_run *c, const ls_value *outs, uint32_t nout, const char *const *names,
                        const ls_runner *program, ls_error *err)
{
    ls_value *want = NULL;
    uint32_t nwant = 0;
    int64_t run = c->runs++;
    if (ls_runner_run(c->r, c->inputs, c->n_inputs, &want, &nwant, err) != 0) return ls_fail_prefix(err, "%s", c->where);
    int rc = 0;
    if (outs && nwant != nout)
        rc = ls_fail(err, "%s has %u user output%s, the program %u", c->where, nwant, nwant == 1 ? "" : "s", nout);
    for (uint32_t i = 0; outs && i < nout && rc == 0; i++) {
        ls_compare_item it = {.run = run, .index = i, .name = ls_intern(names && names[i] ? names[i] : "(constant)"),
                              .compared = true};
        it.ref_name = ls_intern(i < c->n_ref_outputs && c->ref_outputs[i] ? c->ref_outputs[i] : "(constant)");
        tolerance_for(c, &want[i], &it);
        ls_compare_values(&outs[i], &want[i], it.rtol, it.atol, &it.d);
        ls_vec_push(&c->outputs, it);
    }
    if (rc == 0 && program) compare_states(c, program, run);
    if (rc == 0 && program && c->nodes) ls_compare_nodes(program, c->r, &c->opts, run, c->nodes);
    for (uint32_t i = 0; i < nwant; i++) ls_value_release(&want[i]);
    free(want);
    return rc;
}

const ls_compare_item *ls_compare_run_outputs(const ls_compare_run *c, uint32_t *n)
{
    *n = c->outputs.n;
    return c->outputs.v;
}

const ls_compare_item *ls_compare_run_states(const ls_compare_run *c, uint32_t *n)
{
    *n = c->states.n;
    return c->states.v;
}

uint32_t ls_compare_run_failed(const ls_compare_run *c, uint32_t *compared)
{
    uint32_t failed = 0, done = 0;
    for (uint32_t i = 0; i < c->outputs.n; i++) {
        done++;
        failed += !c->outputs.v[i].d.pass;
    }
    for (uint32_t i = 0; i < c->states.n; i++) {
        if (!c->states.v[i].compared) continue;
        done++;
        failed += !c->states.v[i].d.pass;
    }
    if (compared) *compared = done;
    return failed;
}

void ls_compare_run_nodes(ls_compare_run *c, ls_node_stats *stats)
{
    c->nodes = stats;
    ls_runner_observe(c->r, NULL, true);
}

/* The id, in the reference, of the value the node at pos of p stands for: its own id (ids are
 * stable from step to step), or for a delegate's getitem the id of the node inside the lowered
 * module that makes that output (a lowered node keeps its id: to_backend). 0: none. */
static uint32_t reference_id(const ls_program *p, const ls_node *n)
{
    if (n->kind != LS_NODE_CALL || !n->op || n->op->id != LS_OP_getitem || n->nargs < 2 || n->args[0].kind != LS_ARG_NODE ||
        n->args[1].kind != LS_ARG_INT)
        return n->id;
    const ls_node *call = ls_program_node(p, n->args[0].v.node);
    if (!call || !call->op || call->op->id != LS_OP_call_delegate || !call->nargs || call->args[0].kind != LS_ARG_NODE)
        return n->id;
    const ls_node *ga = ls_program_node(p, call->args[0].v.node);
    const ls_submodule *sub = ga && ga->kind == LS_NODE_GET_ATTR ? ls_program_sub(p, ga->target) : NULL;
    const ls_program *sp = sub ? sub->program : NULL;
    const ls_node *out = sp ? ls_program_output(sp) : NULL;
    if (!out) return 0;
    int64_t want = n->args[1].v.i, u = 0; /* the getitem's index counts the user outputs only */
    for (uint16_t k = 0; k < out->nargs; k++) {
        uint8_t kind = k < sp->n_outputs ? sp->outputs[k].kind : LS_OUT_USER_OUTPUT;
        if (kind != LS_OUT_USER_OUTPUT && kind != LS_OUT_LOSS_OUTPUT) continue;
        if (u++ == want) return out->args[k].kind == LS_ARG_NODE ? out->args[k].v.node : 0;
    }
    return 0;
}

void ls_compare_nodes(const ls_runner *program, const ls_runner *reference, const ls_compare_opts *opts, int64_t run,
                      ls_node_stats *stats)
{
    const ls_program *p = ls_runner_program(program), *ref = ls_runner_program(reference);
    if (!stats || stats->n != p->n_nodes) return;
    ls_compare_run tol = {.opts = opts ? *opts : (ls_compare_opts){-1, -1}};
    stats->rtol = tol.opts.rtol;
    stats->atol = tol.opts.atol;
    for (uint32_t i = 0; i < p->n_nodes; i++) {
        const ls_node *n = p->nodes[i];
        if (n->kind != LS_NODE_CALL) continue;
        const ls_value *got = ls_runner_value(program, i);
        uint32_t id = got ? reference_id(p, n) : 0;
        int32_t rpos = id ? ls_program_pos(ref, id) : -1;
        const ls_value *want = rpos >= 0 ? ls_runner_value(reference, (uint32_t)rpos) : NULL;
        if (!want || ref->nodes[rpos]->kind != LS_NODE_CALL) continue;
        if (got->kind != LS_V_TENSOR && got->kind != LS_V_LIST) continue; /* sizes, None: nothing to see */
        ls_compare_item it = {0};
        tolerance_for(&tol, want, &it);
        ls_value_diff d;
        ls_compare_values(got, want, it.rtol, it.atol, &d);
        ls_node_stat_add_diff(&stats->v[i], d.max_abs, d.max_rel, d.pass, run);
    }
}

int64_t ls_compare_run_count(const ls_compare_run *c) { return c->runs; }

const ls_runner *ls_compare_run_reference(const ls_compare_run *c) { return c->r; }

void ls_compare_run_free(ls_compare_run *c)
{
    if (!c) return;
    release_inputs(c);
    ls_runner_free(c->r);
    free(c->outputs.v);
    free(c->states.v);
    free(c->ref_state);
    free(c->ref_outputs);
    free(c);
}
