/* Tables shared between the steps of a history: a step that leaves its input specs, output
 * specs, state dict or constants as the step before had them points at the step before's array
 * (program.h: ls_program_share_tables). */
#include "program.h"
#include <stdlib.h>
#include <string.h>

/* A holder owns the array (and what its entries hold) for
 * every program that points at it. Holders are made and taken by the pipeline's thread before
 * a step is published and released with the programs, so their counts follow the programs'. */
struct ls_shared_table {
    uint32_t refs;
    uint8_t which; /* LS_SHARED_* */
    void *arr;
    uint32_t n;
};

static void **table_arr(ls_program *p, int which, uint32_t **n)
{
    switch (which) {
    case LS_SHARED_INPUTS: *n = &p->n_inputs; return (void **)&p->inputs;
    case LS_SHARED_OUTPUTS: *n = &p->n_outputs; return (void **)&p->outputs;
    case LS_SHARED_STATE: *n = &p->n_state; return (void **)&p->state_dict;
    default: *n = &p->n_constants; return (void **)&p->constants;
    }
}

/* Frees an array of table `which` and what its entries hold. */
static void free_table(int which, void *arr, uint32_t n)
{
    if (which == LS_SHARED_INPUTS)
        for (uint32_t i = 0; i < n; i++) ls_arg_free(&((ls_input_spec *)arr)[i].value);
    if (which == LS_SHARED_STATE || which == LS_SHARED_CONSTANTS)
        for (uint32_t i = 0; i < n; i++) ls_tensor_unref(((ls_named_tensor *)arr)[i].t);
    free(arr);
}

/* A copy of an array of table `which` holding its own references. */
static void *copy_table(int which, const void *arr, uint32_t n)
{
    bool named = which == LS_SHARED_STATE || which == LS_SHARED_CONSTANTS;
    size_t es = named ? sizeof(ls_named_tensor) : which == LS_SHARED_INPUTS ? sizeof(ls_input_spec) : sizeof(ls_output_spec);
    void *d = ls_malloc(es * (n ? n : 1));
    if (n) memcpy(d, arr, es * n);
    if (named)
        for (uint32_t i = 0; i < n; i++) ls_tensor_ref(((ls_named_tensor *)d)[i].t);
    if (which == LS_SHARED_INPUTS)
        for (uint32_t i = 0; i < n; i++) ls_arg_copy(&((ls_input_spec *)d)[i].value, &((const ls_input_spec *)arr)[i].value);
    return d;
}

static void release_table(ls_program *p, int which)
{
    uint32_t *n;
    void **arr = table_arr(p, which, &n);
    struct ls_shared_table *h = p->shared[which];
    if (!h) free_table(which, *arr, *n);
    else if (--h->refs == 0) {
        free_table(which, h->arr, h->n);
        free(h);
    }
    p->shared[which] = NULL;
    *arr = NULL;
    *n = 0;
}

void ls_program_release_tables(ls_program *p)
{
    for (int w = 0; w < LS_SHARED_TABLES; w++) release_table(p, w);
}

void ls_program_own_table(ls_program *p, int which)
{
    struct ls_shared_table *h = p->shared[which];
    if (!h) return;
    p->shared[which] = NULL;
    if (h->refs == 1) {
        free(h); /* the program keeps the array */
        return;
    }
    h->refs--;
    uint32_t *n;
    void **arr = table_arr(p, which, &n);
    *arr = copy_table(which, h->arr, h->n);
}

static bool arg_same(const ls_arg *a, const ls_arg *b)
{
    if (a->flags != b->flags || a->name != b->name) return false;
    /* ls_arg_equal takes -0.0 for 0.0: a shared table must show the very value */
    if (a->kind == LS_ARG_FLOAT && b->kind == LS_ARG_FLOAT) return memcmp(&a->v.f, &b->v.f, sizeof a->v.f) == 0;
    return ls_arg_equal(a, b);
}

static bool same_entries(const ls_program *p, const ls_program *q, int which)
{
    switch (which) {
    case LS_SHARED_INPUTS:
        if (p->n_inputs != q->n_inputs) return false;
        for (uint32_t i = 0; i < p->n_inputs; i++) {
            const ls_input_spec *a = &p->inputs[i], *b = &q->inputs[i];
            if (a->kind != b->kind || a->persistent != b->persistent || a->name != b->name || a->target != b->target ||
                a->class_fqn != b->class_fqn || !arg_same(&a->value, &b->value))
                return false;
        }
        return true;
    case LS_SHARED_OUTPUTS:
        if (p->n_outputs != q->n_outputs) return false;
        for (uint32_t i = 0; i < p->n_outputs; i++) {
            const ls_output_spec *a = &p->outputs[i], *b = &q->outputs[i];
            if (a->kind != b->kind || a->name != b->name || a->target != b->target) return false;
        }
        return true;
    default: {
        bool state = which == LS_SHARED_STATE;
        uint32_t n = state ? p->n_state : p->n_constants;
        if (n != (state ? q->n_state : q->n_constants)) return false;
        const ls_named_tensor *x = state ? p->state_dict : p->constants, *y = state ? q->state_dict : q->constants;
        for (uint32_t i = 0; i < n; i++)
            if (x[i].name != y[i].name || x[i].t != y[i].t || !ls_tmeta_equal(x[i].meta, y[i].meta) ||
                x[i].meta->requires_grad != y[i].meta->requires_grad)
                return false;
        return true;
    }
    }
}

void ls_program_share_tables(ls_program *p, const ls_program *before)
{
    bool changed = false;
    for (int w = 0; w < LS_SHARED_TABLES; w++) {
        if (p->shared[w]) continue; /* shared already (a pass gave back the step before's program) */
        uint32_t *n;
        void **arr = table_arr(p, w, &n);
        struct ls_shared_table *h = before ? before->shared[w] : NULL;
        if (h && before != p && same_entries(p, before, w)) {
            release_table(p, w);
            h->refs++;
            p->shared[w] = h;
            *arr = h->arr;
            *n = h->n;
            changed = true;
            continue;
        }
        h = ls_malloc(sizeof *h);
        *h = (struct ls_shared_table){.refs = 1, .which = (uint8_t)w, .arr = *arr, .n = *n};
        p->shared[w] = h;
    }
    if (changed) ls_program_tables_touch(p);
}

bool ls_program_shares_table(const ls_program *p, const ls_program *q, int which)
{
    return p->shared[which] && p->shared[which] == q->shared[which];
}
