/* Seeds for the fuzzers that no file in the repository or ../shared is (make fuzz runs it):
 * the .pte a sample exports to, and the delegate blobs inside samples and real .pte files; and
 * per sample the devtools files a lowering leaves (tests make theirs the same way at run time):
 * its ETRecord, an ETDump of one run of its .pte (an event per instruction, a delegate's own
 * events), and a bundled program (.bpte) with one case of forward whose expected outputs are
 * the .pte's own run on generated inputs. Each into OUT/<harness>/. Usage: fuzz_seeds OUT FILE... */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "bpte.h"
#include "bundled_blob.h"
#include "dtype.h"
#include "etdump.h"
#include "export.h"
#include "fuzz.h"
#include "passes.h"
#include "pte.h"
#include "pte_file.h"
#include "reader.h"
#include "runtime.h"
#include "xnnpack_blob.h"

int main(int argc, char **argv);

static int n_written;

static void put(const char *out, const char *file, const char *what, unsigned k, const uint8_t *data, size_t size)
{
    const char *base = strrchr(file, '/') ? strrchr(file, '/') + 1 : file;
    const char *harness = ls_xnn_is_blob(data, size) ? "xnnpack_blob"
                          : size >= 4 && !memcmp(data, LS_BB_MAGIC, 4) ? "bundled_blob" : what;
    if (!strcmp(harness, "delegate")) return; /* a blob of a backend lowerscope has no reader for */
    char path[4096];
    snprintf(path, sizeof path, "%s/%s/%s_%u", out, harness, base, k);
    ls_error err;
    if (ls_write_file_atomic(path, data, size, &err) != 0) fprintf(stderr, "fuzz_seeds: %s\n", err.msg);
    else n_written++;
}

static void from_pte(const char *out, const char *file)
{
    ls_pte_file *f;
    ls_error err;
    if (ls_pte_file_open(file, NULL, 0, &f, &err) != 0) return;
    unsigned k = 0;
    for (uint32_t p = 0; p < f->pte.execution_plan.n; p++) {
        const ls_pte_plan *pl = &f->pte.execution_plan.v[p];
        for (uint32_t d = 0; d < pl->delegates.n; d++) {
            const uint8_t *data;
            size_t size;
            if (ls_pte_delegate_blob(&f->pte, &pl->delegates.v[d], &data, &size, &err) == 0)
                put(out, file, "delegate", k++, data, size);
        }
    }
    ls_pte_file_unref(f);
}

static void from_program(const char *out, const char *file)
{
    ls_program *p;
    ls_error err;
    if (ls_load(file, NULL, &p, &err) != 0) return;
    ls_pipeline_opts o;
    ls_pipeline_opts_init(&o);
    ls_history h;
    if (ls_pipeline_run(p, &o, &h, &err) == 0) {
        const ls_program *last = h.steps[h.n - 1].program;
        for (uint32_t i = 0; i < last->n_subs; i++)
            if (last->subs[i].processed)
                put(out, file, "delegate", i, last->subs[i].processed->data, last->subs[i].processed->size);
        const ls_pte *pte = ls_program_emitted(last, NULL);
        uint8_t *bytes;
        size_t size;
        if (pte && ls_pte_write(pte, &bytes, &size, &err) == 0) {
            put(out, file, "pte", 0, bytes, size);
            free(bytes);
        }
        ls_history_free(&h);
    }
    ls_pipeline_opts_free(&o);
    ls_program_unref(p);
}

/* An ETDump of one run of the .pte: Method::execute around an event per instruction, and on a
 * delegate call three of the delegate's own events, by int and by string id. */
static void etdump_of(const char *out, const char *file, const ls_pte *pte)
{
    if (!pte->execution_plan.n) return;
    const ls_pte_plan *pl = &pte->execution_plan.v[0];
    LS_VEC(ls_etd_event) v = {0};
    ls_vec_push(&v, ((ls_etd_event){.kind = LS_ETD_PROFILE, .name = ls_intern("Method::execute"), .chain_index = -1,
                                    .instruction_id = -1, .delegate_debug_id_int = -1, .end_time = 900000}));
    uint64_t t = 1000;
    for (uint32_t c = 0; c < pl->chains.n; c++)
        for (uint32_t i = 0; i < pl->chains.v[c].instructions.n; i++, t += 1000) {
            bool del = pl->chains.v[c].instructions.v[i].kind == LS_PTE_DELEGATE_CALL;
            ls_vec_push(&v, ((ls_etd_event){.kind = LS_ETD_PROFILE, .name = ls_intern(del ? "DELEGATE_CALL" : "OPERATOR_CALL"),
                                            .chain_index = c, .instruction_id = (int32_t)i, .delegate_debug_id_int = -1,
                                            .start_time = t, .end_time = t + 700}));
            for (int32_t k = 0; del && k < 2; k++)
                ls_vec_push(&v, ((ls_etd_event){.kind = LS_ETD_PROFILE, .chain_index = c, .instruction_id = (int32_t)i,
                                                .delegate_debug_id_int = k, .start_time = t, .end_time = t + 100 + k}));
            if (del)
                ls_vec_push(&v, ((ls_etd_event){.kind = LS_ETD_PROFILE, .chain_index = c, .instruction_id = (int32_t)i,
                                                .delegate_debug_id_int = -1, .delegate_debug_id_str = ls_intern("0"),
                                                .start_time = t, .end_time = t + 50}));
        }
    ls_vec_push(&v, ((ls_etd_event){.kind = LS_ETD_ALLOCATION, .instruction_id = -1, .delegate_debug_id_int = -1,
                                    .allocation_size = 64}));
    ls_etd_run run = {.name = ls_intern("Execute"), .bundled_input_index = -1, .events = v.v, .n_events = v.n};
    ls_etdump d = {.name = "seed.etdp", .runs = &run, .n_runs = 1};
    uint8_t *bytes;
    size_t size;
    ls_error err;
    if (ls_etdump_write(&d, &bytes, &size, &err) == 0) {
        put(out, file, "etdump", 0, bytes, size);
        free(bytes);
    }
    free(v.v);
}

/* A run's value as a bundled value (tensors, ints, floats, bools; -1 for others) */
static int bp_value(const ls_value *x, ls_bp_value *v)
{
    memset(v, 0, sizeof *v);
    v->has_val = true;
    switch (x->kind) {
    case LS_V_INT: v->kind = LS_BP_INT, v->int_val = x->i; return 0;
    case LS_V_FLOAT: v->kind = LS_BP_DOUBLE, v->double_val = x->f; return 0;
    case LS_V_BOOL: v->kind = LS_BP_BOOL, v->bool_val = x->b; return 0;
    case LS_V_TENSOR: break;
    default: return -1;
    }
    const ls_tensor *t = x->t;
    v->kind = LS_BP_TENSOR;
    v->scalar_type = (int8_t)ls_dtype_to_et(t->dtype);
    v->ndim = v->n_dim_order = t->ndim;
    v->sizes = ls_calloc(t->ndim + 1, sizeof *v->sizes);
    v->dim_order = ls_calloc(t->ndim + 1, 1);
    for (uint32_t d = 0; d < t->ndim; d++) {
        v->sizes[d] = (int32_t)t->sizes[d];
        v->dim_order[d] = (uint8_t)d;
    }
    v->has_data = true;
    v->nbytes = (uint32_t)t->nbytes;
    v->data = ls_malloc(t->nbytes + 1);
    memcpy(v->data, t->data, t->nbytes);
    return 0;
}

/* A bundled program of the .pte with one case of forward: generated inputs, the run's outputs. */
static void bpte_of(const char *out, const char *file, uint8_t *pte, size_t pte_size)
{
    ls_bpte b = {.name = ls_intern("seed.bpte"), .program = pte, .program_size = pte_size};
    ls_program *p;
    ls_error err;
    if (ls_bpte_program(&b, "forward", &p, &err) != 0) return;
    ls_runner *r = ls_runner_new(p, &err);
    ls_value *in = NULL, *res = NULL;
    uint32_t nin = 0, nres = 0;
    if (r && ls_make_inputs(p, 1, 0, &in, &nin, &err) == 0 && ls_runner_run(r, in, nin, &res, &nres, &err) == 0) {
        ls_bp_case cs = {.inputs = ls_calloc(nin + 1, sizeof(ls_bp_value)), .n_inputs = nin,
                         .expected = ls_calloc(nres + 1, sizeof(ls_bp_value)), .n_expected = nres};
        bool ok = true;
        for (uint32_t i = 0; i < nin; i++) ok = ok && bp_value(&in[i], &cs.inputs[i]) == 0;
        for (uint32_t i = 0; i < nres; i++) ok = ok && bp_value(&res[i], &cs.expected[i]) == 0;
        ls_bp_suite suite = {.method_name = ls_intern("forward"), .cases = &cs, .n_cases = 1};
        b.suites = &suite;
        b.n_suites = 1;
        uint8_t *bytes;
        size_t size;
        if (ok && ls_bpte_write(&b, &bytes, &size, &err) == 0) {
            put(out, file, "bpte", 0, bytes, size);
            free(bytes);
        }
        /* what bp_value made (the writer copied it) */
        ls_bpte copy = {.suites = ls_calloc(1, sizeof suite), .n_suites = 1};
        copy.suites[0] = suite;
        copy.suites[0].cases = ls_calloc(1, sizeof cs);
        copy.suites[0].cases[0] = cs;
        ls_bpte_free(&copy);
    }
    for (uint32_t i = 0; i < nin; i++) ls_value_release(&in[i]);
    for (uint32_t i = 0; i < nres; i++) ls_value_release(&res[i]);
    free(in);
    free(res);
    ls_runner_free(r);
    ls_program_unref(p);
}

/* A sample's ETRecord, its .pte's ETDump and a .bpte of it. */
static void devtools_of(const char *out, const char *file)
{
    const char *base = strrchr(file, '/') ? strrchr(file, '/') + 1 : file;
    char etr[4096];
    snprintf(etr, sizeof etr, "%s/etrecord/%s_0", out, base);
    uint8_t *bytes;
    size_t size;
    if (fuzz_lowered(file, &bytes, &size, etr) != 0) return;
    n_written++;
    ls_pte pte;
    ls_error err;
    if (ls_pte_read_bytes(bytes, size, file, &pte, &err) == 0) {
        etdump_of(out, file, &pte);
        ls_pte_free(&pte);
    }
    bpte_of(out, file, bytes, size);
    free(bytes);
}

int main(int argc, char **argv)
{
    if (argc < 2) {
        fprintf(stderr, "usage: fuzz_seeds OUT FILE...\n");
        return 2;
    }
    for (int i = 2; i < argc; i++) {
        size_t l = strlen(argv[i]);
        if (l > 4 && !strcmp(argv[i] + l - 4, ".pte")) from_pte(argv[1], argv[i]);
        else {
            from_program(argv[1], argv[i]);
            devtools_of(argv[1], argv[i]);
        }
    }
    printf("fuzz_seeds: %d seeds\n", n_written);
    return 0;
}
