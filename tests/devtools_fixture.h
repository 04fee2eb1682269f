/* The devtools suites' shared fixture: two_delegates lowered and emitted to a .pte, an ETDump of
 * two runs of it written from the .pte's instructions as ExecuTorch's Method::execute records
 * them (method.cpp: "Method::execute" around everything, "OPERATOR_CALL" per KernelCall,
 * "DELEGATE_CALL" per DelegateCall, a delegate's own events with the position of each call in
 * its graph as delegate_debug_id_int), plus an event for an instruction the program does not
 * have and an allocation; and, on request, an ETRecord of the same lowering. And a bundled
 * program (.bpte) for shared_constant whose expected outputs libm computes, the last case's
 * wrong on purpose (dt_bpte_make). */
#ifndef LS_DEVTOOLS_FIXTURE_H
#define LS_DEVTOOLS_FIXTURE_H

#include <check.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include <math.h>

#include "bpte.h"
#include "bundled_blob.h"
#include "etdump.h"
#include "etrecord.h"
#include "export.h"
#include "history.h"
#include "progfixtures.h"
#include "pte.h"
#include "testutil.h"

typedef struct dt_fixture {
    ls_history h;
    ls_pte pte; /* the emitted file, read back */
    char pte_path[512], etdp_path[512], etr_path[512];
    ls_etdump dump;
    uint32_t n_instr;
    /* what each event of a run stands for: its instruction, and for a delegate's own event the
     * position inside the delegate's graph (-1: an instruction event) */
    int32_t ev_instr[256], ev_pos[256];
    uint32_t n_ev;
} dt_fixture;

/* Ticks (nanoseconds) of event k of run r: distinct per event and run, tenths of a millisecond.
 * dt_fixture_etrecord writes the ETRecord of the same lowering at f->etr_path: its ATen and Edge
 * (to_backend) programs and the emitter's maps. Header-only, like pte_test.h. */
typedef LS_VEC(ls_etd_event) dt_event_vec;

static inline ls_etd_event *dt_push(dt_event_vec *v, ls_etd_event e)
{
    ls_vec_push(v, e);
    return &v->v[v->n - 1];
}

static inline uint64_t dt_ticks(uint32_t r, uint32_t k)
{
    return (100 + 10 * k + r) * 1000;
}

static inline void dt_fixture_make(dt_fixture *f)
{
    memset(f, 0, sizeof *f);
    ls_program *p = pf_sample("two_delegates");
    pf_lower(p, NULL, &f->h);
    ls_program_unref(p);
    const ls_pte *emitted = ls_program_emitted(f->h.steps[f->h.n - 1].program, NULL);
    ck_assert_ptr_nonnull(emitted);
    uint8_t *bytes;
    size_t size;
    ls_error err;
    ck_assert_msg(ls_pte_write(emitted, &bytes, &size, &err) == 0, "%s", err.msg);
    const char *dir = tu_tmpdir();
    snprintf(f->pte_path, sizeof f->pte_path, "%s/two.pte", dir);
    snprintf(f->etdp_path, sizeof f->etdp_path, "%s/two.etdp", dir);
    snprintf(f->etr_path, sizeof f->etr_path, "%s/two.etrecord", dir);
    ck_assert(ls_write_file_atomic(f->pte_path, bytes, size, &err) == 0);
    ck_assert_msg(ls_pte_read_bytes(bytes, size, "two.pte", &f->pte, &err) == 0, "%s", err.msg);
    free(bytes);
    const ls_pte_plan *pl = &f->pte.execution_plan.v[0];
    ck_assert_uint_eq(pl->chains.n, 1);
    const ls_pte_instructions *ins = &pl->chains.v[0].instructions;
    f->n_instr = ins->n;
    static ls_etd_run runs[2];
    for (uint32_t r = 0; r < 2; r++) {
        dt_event_vec v = {0};
        uint64_t t = 1000000 * (r + 1);
        ls_etd_event *exec = dt_push(&v, (ls_etd_event){.kind = LS_ETD_PROFILE, .name = ls_intern("Method::execute"),
                                                     .chain_index = -1, .instruction_id = 0, .delegate_debug_id_int = -1,
                                                     .start_time = t});
        (void)exec;
        uint32_t n_ev = 0;
        for (uint32_t i = 0; i < ins->n; i++) {
            bool del = ins->v[i].kind == LS_PTE_DELEGATE_CALL;
            uint64_t d = dt_ticks(r, n_ev);
            dt_push(&v, (ls_etd_event){.kind = LS_ETD_PROFILE, .name = ls_intern(del ? "DELEGATE_CALL" : "OPERATOR_CALL"),
                                    .chain_index = 0, .instruction_id = (int32_t)i, .delegate_debug_id_int = -1,
                                    .start_time = t, .end_time = t + d});
            f->ev_instr[n_ev] = (int32_t)i;
            f->ev_pos[n_ev++] = -1;
            if (!del) continue;
            /* the delegate's own events: one per call of its graph, numbered by position */
            const ls_pte_delegate *dl = &pl->delegates.v[ins->v[i].delegate_call.delegate_index];
            const uint8_t *data;
            size_t dsize;
            ck_assert(ls_pte_delegate_blob(&f->pte, dl, &data, &dsize, &err) == 0);
            ls_blob *blob = ls_blob_new(dsize);
            memcpy(blob->data, data, dsize);
            ls_bb_graph *g;
            ck_assert_msg(ls_bb_decode(blob, &g, &err) == 0, "%s", err.msg);
            for (uint32_t k = 0; k < g->n_nodes; k++) {
                if (g->nodes[k]->kind != LS_NODE_CALL) continue;
                dt_push(&v, (ls_etd_event){.kind = LS_ETD_PROFILE, .chain_index = 0, .instruction_id = (int32_t)i,
                                        .delegate_debug_id_int = (int32_t)k, .start_time = t, .end_time = t + dt_ticks(r, n_ev)});
                f->ev_instr[n_ev] = (int32_t)i;
                f->ev_pos[n_ev++] = (int32_t)k;
            }
            ls_bb_graph_free(g);
            ls_blob_unref(blob);
        }
        /* an instruction the program does not have, and an allocation (not a timed event) */
        dt_push(&v, (ls_etd_event){.kind = LS_ETD_PROFILE, .name = ls_intern("OPERATOR_CALL"), .instruction_id = (int32_t)ins->n + 5,
                                .delegate_debug_id_int = -1, .start_time = t, .end_time = t + 7});
        dt_push(&v, (ls_etd_event){.kind = LS_ETD_ALLOCATION, .instruction_id = -1, .delegate_debug_id_int = -1,
                                .allocator_id = 0, .allocation_size = 64});
        v.v[0].end_time = t + 100000;
        f->n_ev = n_ev;
        runs[r] = (ls_etd_run){.name = ls_intern("Execute"), .bundled_input_index = -1, .events = v.v, .n_events = v.n};
    }
    f->dump = (ls_etdump){.name = "two.etdp", .runs = runs, .n_runs = 2};
    ck_assert_msg(ls_etdump_write(&f->dump, &bytes, &size, &err) == 0, "%s", err.msg);
    ck_assert(ls_write_file_atomic(f->etdp_path, bytes, size, &err) == 0);
    free(bytes);
}

static inline void dt_fixture_free(dt_fixture *f)
{
    for (uint32_t r = 0; r < f->dump.n_runs; r++) free(f->dump.runs[r].events);
    ls_pte_free(&f->pte);
    ls_history_free(&f->h);
}

static inline ls_program *dt_step_program(const ls_history *h, const char *pass)
{
    ls_error err;
    int s = ls_history_find_step(h, pass, &err);
    ck_assert_msg(s >= 0, "%s", err.msg);
    return h->steps[s].program;
}

static inline void dt_fixture_etrecord(dt_fixture *f)
{
    char *dhm, *dm;
    ls_error err;
    ck_assert_msg(ls_debug_maps_json(f->h.steps[f->h.n - 1].program, "forward", &dhm, &dm, &err) == 0, "%s", err.msg);
    ls_etrecord_parts parts = {.exported = f->h.steps[0].program, .edge = dt_step_program(&f->h, "to_backend"),
                               .debug_handle_map = dhm, .delegate_map = dm};
    ck_assert_msg(ls_etrecord_write(&parts, f->etr_path, &err) == 0, "%s", err.msg);
    free(dhm);
    free(dm);
}

/* ---- a bundled program for shared_constant: its emitted .pte and three cases of forward(x) */


static const float dt_cases_x[3][4] = {{1, 2, 3, 4}, {-1, 0.5f, 2, -3}, {0.25f, -0.75f, 10, 0}};

static inline uint8_t *dt_emitted_pte(const char *sample, size_t *size, ls_program **loaded)
{
    ls_program *p = pf_sample(sample);
    ls_history h;
    pf_lower(p, NULL, &h);
    const ls_pte *pte = ls_program_emitted(h.steps[h.n - 1].program, NULL);
    ck_assert_ptr_nonnull(pte);
    uint8_t *bytes;
    ls_error err;
    ck_assert_msg(ls_pte_write(pte, &bytes, size, &err) == 0, "%s", err.msg);
    ls_history_free(&h);
    *loaded = p;
    return bytes;
}

static inline ls_bp_value dt_tensor_value(const float *v, int32_t n)
{
    ls_bp_value x = {.kind = LS_BP_TENSOR, .has_val = true, .scalar_type = LS_ET_FLOAT, .ndim = 1, .has_data = true,
                     .n_dim_order = 1};
    x.sizes = ls_malloc(sizeof *x.sizes);
    x.sizes[0] = n;
    x.dim_order = ls_calloc(1, 1);
    x.nbytes = (uint32_t)n * 4;
    x.data = ls_malloc(x.nbytes);
    memcpy(x.data, v, x.nbytes);
    return x;
}

/* Three cases of forward(x): expected atan2(c, x) and (x + c) * c in float32, from libm; case 2's
 * second expected output is wrong at element 1 by 0.5. */
static inline void dt_bpte_make(ls_bpte *b)
{
    size_t n;
    ls_program *p;
    memset(b, 0, sizeof *b);
    b->name = ls_intern("shared_constant.bpte");
    b->program = dt_emitted_pte("shared_constant", &n, &p);
    b->program_size = n;
    const ls_named_tensor *c = ls_program_constant(p, ls_intern("c"));
    ck_assert_ptr_nonnull(c);
    ck_assert_ptr_nonnull(c->t);
    const float *cv = c->t->data;
    b->n_suites = 1;
    b->suites = ls_calloc(1, sizeof *b->suites);
    b->suites[0].method_name = ls_intern("forward");
    b->suites[0].n_cases = 3;
    b->suites[0].cases = ls_calloc(3, sizeof(ls_bp_case));
    for (int k = 0; k < 3; k++) {
        ls_bp_case *cs = &b->suites[0].cases[k];
        float at[4], mu[4];
        for (int i = 0; i < 4; i++) {
            at[i] = atan2f(cv[i], dt_cases_x[k][i]);
            mu[i] = (dt_cases_x[k][i] + cv[i]) * cv[i];
        }
        if (k == 2) mu[1] += 0.5f;
        cs->n_inputs = 1;
        cs->inputs = ls_calloc(1, sizeof(ls_bp_value));
        cs->inputs[0] = dt_tensor_value(dt_cases_x[k], 4);
        cs->n_expected = 2;
        cs->expected = ls_calloc(2, sizeof(ls_bp_value));
        cs->expected[0] = dt_tensor_value(at, 4);
        cs->expected[1] = dt_tensor_value(mu, 4);
    }
    ls_program_unref(p);
}

static inline const char *dt_bpte_write(const ls_bpte *b, uint8_t **bytes_out, size_t *size_out)
{
    uint8_t *bytes;
    size_t size;
    ls_error err;
    ck_assert_msg(ls_bpte_write(b, &bytes, &size, &err) == 0, "%s", err.msg);
    static char path[512];
    snprintf(path, sizeof path, "%s/shared_constant.bpte", tu_tmpdir());
    ck_assert_msg(ls_write_file_atomic(path, bytes, size, &err) == 0, "%s", err.msg);
    if (bytes_out) {
        *bytes_out = bytes;
        *size_out = size;
    } else {
        free(bytes);
    }
    return path;
}

#endif
