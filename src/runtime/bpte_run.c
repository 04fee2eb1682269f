/* A bundled program's test cases on the bundled runtime (bpte_run.h). */
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "bpte_run.h"
#include "runtime.h"

typedef struct method_run {
    const char *method;
    ls_program *p;
    ls_runner *runner;
    bool tried;
    char why[LS_ERR_MAX];
    bool cannot_run; /* the program was made but does not run here */
    bool shared;     /* the runner is an earlier suite's (same method) */
} method_run;

struct ls_bp_runner {
    const ls_bpte *b;
    double rtol, atol;
    method_run *m; /* per suite */
};

const char *ls_bp_status_text(ls_bp_status s)
{
    switch (s) {
    case LS_BP_PASS: return "pass";
    case LS_BP_FAIL: return "FAIL";
    case LS_BP_ERROR: return "error";
    case LS_BP_CANNOT_RUN: return "cannot run";
    }
    return "?";
}

ls_bp_runner *ls_bp_runner_new(const ls_bpte *b, double rtol, double atol)
{
    ls_bp_runner *r = ls_calloc(1, sizeof *r);
    r->b = b;
    r->rtol = rtol;
    r->atol = atol;
    r->m = ls_calloc(b->n_suites ? b->n_suites : 1, sizeof *r->m);
    return r;
}

void ls_bp_runner_free(ls_bp_runner *r)
{
    if (!r) return;
    for (uint32_t i = 0; i < r->b->n_suites; i++) {
        if (!r->m[i].shared) ls_runner_free(r->m[i].runner);
        ls_program_unref(r->m[i].p);
    }
    free(r->m);
    free(r);
}

static method_run *method_of(ls_bp_runner *r, uint32_t suite)
{
    method_run *m = &r->m[suite];
    if (m->tried) return m;
    m->tried = true;
    m->method = r->b->suites[suite].method_name;
    if (!m->method) {
        snprintf(m->why, sizeof m->why, "%s: method_test_suites[%u] has no method_name", r->b->name, suite);
        return m;
    }
    for (uint32_t k = 0; k < suite; k++) /* an earlier suite of the same method: the same runner */
        if (r->m[k].tried && r->m[k].method == m->method) {
            *m = r->m[k];
            m->shared = true; /* suites of one method share its program and runner */
            if (m->p) ls_program_ref(m->p);
            return m;
        }
    ls_error err;
    if (ls_bpte_program(r->b, m->method, &m->p, &err) != 0) {
        snprintf(m->why, sizeof m->why, "%s", err.msg);
        return m;
    }
    m->runner = ls_runner_new(m->p, &err);
    if (!m->runner) {
        snprintf(m->why, sizeof m->why, "%s", err.msg);
        m->cannot_run = true;
    }
    return m;
}

const ls_program *ls_bp_runner_program(ls_bp_runner *r, uint32_t suite, const char **why)
{
    method_run *m = suite < r->b->n_suites ? method_of(r, suite) : NULL;
    if (why) *why = m && !m->p ? m->why : NULL;
    return m ? m->p : NULL;
}

void ls_bp_case_result_free(ls_bp_case_result *res)
{
    free(res->outputs);
    memset(res, 0, sizeof *res);
}

static void set_error(ls_bp_case_result *res, ls_bp_status st, const char *fmt, ...) LS_PRINTF(3, 4);
static void set_error(ls_bp_case_result *res, ls_bp_status st, const char *fmt, ...)
{
    va_list ap;
    va_start(ap, fmt);
    vsnprintf(res->message, sizeof res->message, fmt, ap);
    va_end(ap);
    res->status = st;
}

/* load_bundled_input's value kinds */
static int input_value(const ls_bp_value *v, const char *where, ls_value *out, ls_error *err)
{
    ls_tensor *t;
    switch (v->has_val ? v->kind : LS_BP_NONE) {
    case LS_BP_TENSOR:
        if (ls_bp_value_tensor(v, where, &t, err) != 0) return -1;
        *out = ls_value_tensor(t);
        return 0;
    case LS_BP_INT: *out = ls_value_int(v->int_val); return 0;
    case LS_BP_DOUBLE: *out = ls_value_float(v->double_val); return 0;
    case LS_BP_BOOL: *out = ls_value_bool(v->bool_val); return 0;
    default: return ls_fail(err, "%s: data type %d not supported (the runtime takes Tensor, Int, Double, Bool)", where, v->kind);
    }
}

/* compute_method_output_error_stats: |a - e|, and that over max(|a|, |e|, 1e-8) */
static void add_stats(const ls_tensor *e, const ls_tensor *a, double *sum_abs, double *sum_rel, double *max_abs,
                      double *max_rel, uint64_t *n)
{
    for (int64_t k = 0; k < e->numel; k++) {
        double x = ls_tensor_get_f64(a, k), y = ls_tensor_get_f64(e, k);
        double ab = fabs(x - y), div = fmax(fmax(fabs(x), fabs(y)), (double)1e-8f), rel = ab / div;
        *sum_abs += ab;
        *sum_rel += rel;
        if (ab > *max_abs) *max_abs = ab;
        if (rel > *max_rel) *max_rel = rel;
    }
    *n += (uint64_t)e->numel;
}

static void check_outputs(ls_bp_runner *r, const ls_bp_case *c, const char *where, const ls_value *outs, uint32_t nout,
                          ls_bp_case_result *res)
{
    if (c->n_expected == 0) {
        set_error(res, LS_BP_ERROR, "%s: no expected outputs, so the method's outputs cannot be verified", where);
        return;
    }
    if (c->n_expected < nout) {
        set_error(res, LS_BP_ERROR, "%s: %u expected output%s for the method's %u", where, c->n_expected,
                  c->n_expected == 1 ? "" : "s", nout);
        return;
    }
    res->outputs = ls_calloc(nout ? nout : 1, sizeof *res->outputs);
    res->n_outputs = nout;
    double sum_abs = 0, sum_rel = 0;
    uint64_t total = 0;
    res->status = LS_BP_PASS;
    for (uint32_t k = 0; k < nout; k++) {
        ls_bp_output_check *o = &res->outputs[k];
        o->worst = -1;
        char w[LS_ERR_MAX];
        snprintf(w, sizeof w, "%s expected output %u", where, k);
        ls_tensor *e;
        ls_error err;
        if (c->expected[k].kind != LS_BP_TENSOR) {
            set_error(res, LS_BP_ERROR, "%s: data type %s not supported (the runtime verifies tensors)", w,
                      ls_bp_kind_name(c->expected[k].kind));
            return;
        }
        if (ls_bp_value_tensor(&c->expected[k], w, &e, &err) != 0) {
            set_error(res, LS_BP_ERROR, "%s", err.msg);
            return;
        }
        ls_tmeta m;
        ls_tensor_meta(e, &m);
        ls_tmeta_str(&m, o->expected, sizeof o->expected);
        if (outs[k].kind != LS_V_TENSOR) {
            snprintf(o->got, sizeof o->got, "%s", ls_value_kind_text(outs[k].kind));
            snprintf(o->why, sizeof o->why, "the method gave %s, not a tensor", o->got);
        } else {
            ls_tensor_meta(outs[k].t, &m);
            ls_tmeta_str(&m, o->got, sizeof o->got);
            o->pass = ls_bp_tensors_close(e, outs[k].t, r->rtol, r->atol, o->why, sizeof o->why, &o->worst);
            if (ls_dtype_is_float(e->dtype) && e->dtype == outs[k].t->dtype && e->numel == outs[k].t->numel) {
                add_stats(e, outs[k].t, &sum_abs, &sum_rel, &res->max_abs, &res->max_rel, &total);
                res->has_stats = true;
                for (int64_t i = 0; i < e->numel; i++) {
                    double d = fabs(ls_tensor_get_f64(e, i) - ls_tensor_get_f64(outs[k].t, i));
                    if (d > o->max_abs) o->max_abs = d;
                }
            }
        }
        if (!o->pass) res->status = LS_BP_FAIL;
        ls_tensor_unref(e);
    }
    if (total) {
        res->mean_abs = sum_abs / (double)total;
        res->mean_rel = sum_rel / (double)total;
    }
}

void ls_bp_run_case(ls_bp_runner *r, uint32_t suite, uint32_t index, ls_bp_case_result *res)
{
    memset(res, 0, sizeof *res);
    res->suite = suite;
    res->index = index;
    if (suite >= r->b->n_suites || index >= r->b->suites[suite].n_cases) {
        set_error(res, LS_BP_ERROR, "%s: no test case %u of suite %u", r->b->name, index, suite);
        return;
    }
    method_run *m = method_of(r, suite);
    res->method = m->method;
    if (!m->runner) {
        set_error(res, m->cannot_run ? LS_BP_CANNOT_RUN : LS_BP_ERROR, "%s", m->why);
        return;
    }
    const ls_bp_case *c = &r->b->suites[suite].cases[index];
    char where[256];
    snprintf(where, sizeof where, "%s: %s case %u", r->b->name, m->method, index);
    const ls_node *ins[1];
    uint32_t nin = ls_program_user_inputs(m->p, ins, 0);
    if (c->n_inputs < nin) {
        set_error(res, LS_BP_ERROR, "%s: %u input%s for the method's %u", where, c->n_inputs, c->n_inputs == 1 ? "" : "s", nin);
        return;
    }
    ls_value *vals = ls_calloc(nin ? nin : 1, sizeof *vals);
    ls_error err;
    int rc = 0;
    for (uint32_t k = 0; k < nin && rc == 0; k++) {
        char w[300];
        snprintf(w, sizeof w, "%s input %u", where, k);
        rc = input_value(&c->inputs[k], w, &vals[k], &err);
    }
    ls_value *outs = NULL;
    uint32_t nout = 0;
    if (rc == 0) {
        double t0 = ls_now();
        rc = ls_runner_run(m->runner, vals, nin, &outs, &nout, &err);
        res->seconds = ls_now() - t0;
        if (rc != 0) ls_fail_prefix(&err, "%s", where);
    }
    if (rc != 0) set_error(res, LS_BP_ERROR, "%s", err.msg);
    else check_outputs(r, c, where, outs, nout, res);
    for (uint32_t k = 0; k < nin; k++) ls_value_release(&vals[k]);
    free(vals);
    for (uint32_t k = 0; k < nout; k++) ls_value_release(&outs[k]);
    free(outs);
}
