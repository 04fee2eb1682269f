/* Writes the binary corpus files that are easier to make from a real file than by hand:
 *
 *     make corpus
 *
 * runs it as build/gen_corpus_pte SAMPLES_PTE CORPUS_DIR after exporting samples/shared_constant.pt2
 * (and after gen_corpus.py, whose escapes.pt2 the ETRecord is made from). Each file is a valid
 * file with one field changed, as a fuzzer found it; the devtools files carry the strings of
 * escapes.pte: a .bpte of it, an ETDump of a run of it, an ETRecord of escapes.pt2. */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "bpte.h"
#include "common.h"
#include "etdump.h"
#include "etrecord.h"
#include "export.h"
#include "history.h"
#include "passes.h"
#include "pte.h"
#include "reader.h"

int main(int argc, char **argv);

static int write_variant(const char *src, const char *dir, const char *name, void (*change)(ls_pte *))
{
    ls_pte pte;
    ls_error err;
    if (ls_pte_read_file(src, &pte, &err) != 0) {
        fprintf(stderr, "%s\n", err.msg);
        return 1;
    }
    change(&pte);
    char path[4096];
    snprintf(path, sizeof path, "%s/%s", dir, name);
    int rc = ls_pte_write_file(&pte, path, &err);
    if (rc != 0) fprintf(stderr, "%s\n", err.msg);
    ls_pte_free(&pte);
    return rc != 0;
}

/* the DelegateCall keeps its delegate but loses every argument (the runtime accepts that: its
 * instruction arguments are a list of any length, method.cpp gen_instruction_arguments) */
static void delegate_call_without_arguments(ls_pte *pte)
{
    ls_pte_plan *pl = &pte->execution_plan.v[0];
    for (uint32_t c = 0; c < pl->chains.n; c++)
        for (uint32_t i = 0; i < pl->chains.v[c].instructions.n; i++) {
            ls_pte_instruction *in = &pl->chains.v[c].instructions.v[i];
            if (in->kind != LS_PTE_DELEGATE_CALL) continue;
            free(in->delegate_call.args.v);
            in->delegate_call.args.v = NULL;
            in->delegate_call.args.n = 0;
            in->delegate_call.args.present = true;
        }
}

/* strings a terminal would act on, and bytes that are not UTF-8 at all (flatbuffers' strings
 * are bytes): every command shows them escaped, and --json stays valid UTF-8 */
static const char evil[] = "\x1b]0;title\x07\x1b[2J\xc2\x9b" "31m\xe2\x80\xae\xff\xc0\x80\xed\xa0\x80";

static void escapes(ls_pte *pte)
{
    ls_pte_plan *pl = &pte->execution_plan.v[0];
    for (uint32_t i = 0; i < pl->delegates.n; i++) {
        char *id = malloc(strlen(pl->delegates.v[i].id) + sizeof evil);
        sprintf(id, "%s%s", pl->delegates.v[i].id, evil);
        free(pl->delegates.v[i].id);
        pl->delegates.v[i].id = id;
    }
    for (uint32_t i = 0; i < pl->operators.n; i++) {
        char *name = malloc(strlen(pl->operators.v[i].name) + sizeof evil);
        sprintf(name, "%s%s", pl->operators.v[i].name, evil);
        free(pl->operators.v[i].name);
        pl->operators.v[i].name = name;
    }
}

static int write_bytes(const char *dir, const char *name, const void *data, size_t size)
{
    char path[4096];
    snprintf(path, sizeof path, "%s/%s", dir, name);
    ls_error err;
    if (ls_write_file_atomic(path, data, size, &err) == 0) return 0;
    fprintf(stderr, "%s\n", err.msg);
    return 1;
}

static ls_bp_value float_value(const float *v, int32_t n)
{
    ls_bp_value x = {.kind = LS_BP_TENSOR, .has_val = true, .scalar_type = LS_ET_FLOAT, .ndim = 1, .has_data = true,
                     .n_dim_order = 1, .nbytes = (uint32_t)n * 4};
    x.sizes = ls_calloc(1, sizeof *x.sizes);
    x.sizes[0] = n;
    x.dim_order = ls_calloc(1, 1);
    x.data = ls_malloc(x.nbytes);
    memcpy(x.data, v, x.nbytes);
    return x;
}

/* escapes.pte bundled: a case of forward (whose kernels' names do not resolve: the case cannot
 * run and says which kernel), and a suite of a method named with the same strings */
static int escapes_bpte(const char *dir)
{
    char path[4096];
    snprintf(path, sizeof path, "%s/escapes.pte", dir);
    ls_bpte b = {.name = ls_intern("escapes.bpte")};
    ls_error err;
    if (ls_read_file(path, (size_t)1 << 30, &b.program, &b.program_size, &err) != 0) {
        fprintf(stderr, "%s\n", err.msg);
        return 1;
    }
    static const float x[4] = {1, 2, 3, 4};
    b.n_suites = 2;
    b.suites = ls_calloc(2, sizeof *b.suites);
    b.suites[0].method_name = ls_intern("forward");
    b.suites[1].method_name = ls_internf("forward%s", evil);
    for (int s = 0; s < 2; s++) {
        b.suites[s].n_cases = 1;
        b.suites[s].cases = ls_calloc(1, sizeof(ls_bp_case));
        ls_bp_case *c = &b.suites[s].cases[0];
        c->n_inputs = 1;
        c->inputs = ls_calloc(1, sizeof(ls_bp_value));
        c->inputs[0] = float_value(x, 4);
        c->n_expected = 2;
        c->expected = ls_calloc(2, sizeof(ls_bp_value));
        c->expected[0] = float_value(x, 4);
        c->expected[1] = float_value(x, 4);
    }
    uint8_t *bytes;
    size_t size;
    int rc = ls_bpte_write(&b, &bytes, &size, &err);
    if (rc != 0) fprintf(stderr, "%s\n", err.msg);
    else rc = write_bytes(dir, "escapes.bpte", bytes, size), free(bytes);
    ls_bpte_free(&b);
    return rc != 0;
}

/* A run of escapes.pte: an event per instruction, named with the strings; one for an
 * instruction the program lacks (listed as unmatched, by name) and a delegate's own event with
 * the strings as its debug id. */
static int escapes_etdump(const char *dir)
{
    char path[4096];
    snprintf(path, sizeof path, "%s/escapes.pte", dir);
    ls_pte pte;
    ls_error err;
    if (ls_pte_read_file(path, &pte, &err) != 0) {
        fprintf(stderr, "%s\n", err.msg);
        return 1;
    }
    const ls_pte_instructions *ins = &pte.execution_plan.v[0].chains.v[0].instructions;
    ls_etd_event ev[64];
    uint32_t n = 0;
    const char *name = ls_internf("OPERATOR_CALL%s", evil);
    ev[n++] = (ls_etd_event){.kind = LS_ETD_PROFILE, .name = ls_intern("Method::execute"), .chain_index = -1,
                             .instruction_id = -1, .delegate_debug_id_int = -1, .end_time = 90000};
    for (uint32_t i = 0; i < ins->n && n < 60; i++)
        ev[n++] = (ls_etd_event){.kind = LS_ETD_PROFILE, .name = name, .instruction_id = (int32_t)i,
                                 .delegate_debug_id_int = -1, .start_time = 1000, .end_time = 2000 + 100 * i};
    ev[n++] = (ls_etd_event){.kind = LS_ETD_PROFILE, .name = name, .instruction_id = (int32_t)ins->n + 5,
                             .delegate_debug_id_int = -1, .start_time = 1000, .end_time = 1007};
    ev[n++] = (ls_etd_event){.kind = LS_ETD_PROFILE, .instruction_id = (int32_t)ins->n + 6, .delegate_debug_id_int = -1,
                             .delegate_debug_id_str = ls_internf("id%s", evil), .start_time = 1000, .end_time = 1003};
    ls_etd_run run = {.name = ls_internf("Execute%s", evil), .bundled_input_index = -1, .events = ev, .n_events = n};
    ls_etdump d = {.name = "escapes.etdp", .runs = &run, .n_runs = 1};
    uint8_t *bytes;
    size_t size;
    int rc = ls_etdump_write(&d, &bytes, &size, &err);
    if (rc != 0) fprintf(stderr, "%s\n", err.msg);
    else rc = write_bytes(dir, "escapes.etdp", bytes, size), free(bytes);
    ls_pte_free(&pte);
    return rc != 0;
}

/* escapes.pt2 lowered by the default pipeline, recorded as exir's generate_etrecord records it */
static int escapes_etrecord(const char *dir)
{
    char src[4096], path[4096];
    snprintf(src, sizeof src, "%s/escapes.pt2", dir);
    snprintf(path, sizeof path, "%s/escapes.etrecord", dir);
    ls_program *p;
    ls_error err;
    if (ls_load(src, NULL, &p, &err) != 0) {
        fprintf(stderr, "%s\n", err.msg);
        return 1;
    }
    ls_pipeline_opts o;
    ls_pipeline_opts_init(&o);
    ls_history h;
    int rc = ls_pipeline_run(p, &o, &h, &err);
    if (rc == 0) {
        char *dhm = NULL, *dm = NULL;
        int edge = ls_history_find_step(&h, "to_backend", &err);
        rc = edge < 0 ? -1 : ls_debug_maps_json(h.steps[h.n - 1].program, "forward", &dhm, &dm, &err);
        if (rc == 0)
            rc = ls_etrecord_write(&(ls_etrecord_parts){.exported = h.steps[0].program, .edge = h.steps[edge].program,
                                                        .debug_handle_map = dhm, .delegate_map = dm},
                                   path, &err);
        free(dhm);
        free(dm);
        ls_history_free(&h);
    }
    if (rc != 0) fprintf(stderr, "%s\n", err.msg);
    ls_pipeline_opts_free(&o);
    ls_program_unref(p);
    return rc != 0;
}

int main(int argc, char **argv)
{
    if (argc != 3) {
        fprintf(stderr, "usage: gen_corpus_pte SAMPLE.pte|- CORPUS_DIR\n");
        return 2;
    }
    /* SAMPLE.pte "-": only the devtools files, from the corpus's escapes.pte as it is */
    int rc = !strcmp(argv[1], "-") ? 0
             : write_variant(argv[1], argv[2], "delegate_call_without_arguments.pte", delegate_call_without_arguments) |
                   write_variant(argv[1], argv[2], "escapes.pte", escapes);
    return rc || escapes_bpte(argv[2]) || escapes_etdump(argv[2]) || escapes_etrecord(argv[2]);
}
