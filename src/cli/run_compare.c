/* lowerscope run --compare / --compare-with REF: the reference runs on the same inputs as the
 * program, step by step, state carrying over on both sides, and every user output and state
 * tensor is compared (compare.h: the tolerance of the reference value's dtype, or --rtol/--atol).
 * This file prints what the core's comparison found, as text and as JSON. */
#include "run_compare.h"

#include <inttypes.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "cli.h"
#include "reader.h"
#include "run_print.h"

struct run_compare {
    const char *reference; /* the reference's file */
    const char *label;     /* how the text names it: "the loaded program" or the file */
    ls_program *owned;     /* --compare-with: REF's program */
    ls_compare_opts opts;
    ls_compare_run *run;
    int64_t failed_step; /* the step the program failed at (-1: none) */
    char *failed_msg;
};

static run_compare *open_with(const ls_program *ref, const char *reference, const char *label, const char *where,
                              const ls_program *p, const ls_compare_opts *o, ls_error *err)
{
    run_compare *c = ls_calloc(1, sizeof *c);
    c->reference = reference;
    c->label = label;
    c->opts = *o;
    c->failed_step = -1;
    if (!(c->run = ls_compare_run_new(ref, p, where, o, err))) {
        free(c);
        return NULL;
    }
    return c;
}

run_compare *run_compare_open(const char *path, const ls_program *p, const ls_compare_opts *o, ls_error *err)
{
    ls_program *ref;
    if (ls_load(path, NULL, &ref, err) != 0) {
        ls_fail_prefix(err, "--compare-with"); /* which of the two files */
        return NULL;
    }
    run_compare *c = open_with(ref, path, path, ls_internf("--compare-with %s", path), p, o, err);
    if (!c) ls_program_unref(ref);
    else c->owned = ref;
    return c;
}

run_compare *run_compare_loaded(const ls_program *ref, const char *path, const ls_program *p, const ls_compare_opts *o,
                                ls_error *err)
{
    return open_with(ref, path, "the loaded program", "the loaded program", p, o, err);
}

void run_compare_nodes(run_compare *c, struct ls_node_stats *stats) { ls_compare_run_nodes(c->run, stats); }

void run_compare_inputs(run_compare *c, const ls_value *inputs, uint32_t n) { ls_compare_run_inputs(c->run, inputs, n); }

int run_compare_step(run_compare *c, const ls_value *outs, uint32_t nout, const char *const *names,
                     const ls_runner *program, bool print, ls_error *err)
{
    uint32_t before;
    ls_compare_run_outputs(c->run, &before);
    if (ls_compare_run_step(c->run, outs, nout, names, program, err) != 0) return -1;
    uint32_t n;
    const ls_compare_item *it = ls_compare_run_outputs(c->run, &n);
    for (uint32_t i = before; print && i < n; i++)
        printf("  vs %-21s max abs %.3g, max rel %.3g: %s%s\n", it[i].ref_name, it[i].d.max_abs, it[i].d.max_rel,
               it[i].d.pass ? "ok" : "DIFFERS: ", it[i].d.pass ? "" : it[i].d.why);
    return 0;
}

void run_compare_program_failed(run_compare *c, int64_t step, const char *msg)
{
    c->failed_step = step;
    free(c->failed_msg);
    c->failed_msg = ls_strdup(msg);
}

bool run_compare_failed(const run_compare *c) { return c->failed_msg || ls_compare_run_failed(c->run, NULL); }

/* Each output over all steps: the largest differences, the first failure. */
static ls_compare_item *outputs_over_steps(const run_compare *c, uint32_t *count)
{
    uint32_t n, m = 0;
    const ls_compare_item *it = ls_compare_run_outputs(c->run, &n);
    ls_compare_item *acc = ls_calloc(n + 1, sizeof *acc);
    for (uint32_t i = 0; i < n; i++) {
        uint32_t k = 0;
        while (k < m && acc[k].index != it[i].index) k++;
        if (k == m) acc[m++] = it[i];
        else ls_compare_item_merge(&acc[k], &it[i]);
    }
    *count = m;
    return acc;
}

/* The tolerances the compared items used: one text when they share it, else per dtype. */
static void tolerances_used(const run_compare *c, ls_buf *b)
{
    uint32_t n_out, n_st;
    const ls_compare_item *outs = ls_compare_run_outputs(c->run, &n_out), *sts = ls_compare_run_states(c->run, &n_st);
    LS_VEC(const char *) texts = {0};
    LS_VEC(const char *) labels = {0};
    for (uint32_t i = 0; i < n_out + n_st; i++) {
        const ls_compare_item *it = i < n_out ? &outs[i] : &sts[i - n_out];
        if (!it->compared || !it->name || (i >= n_out && it->run < 0)) continue;
        char t[64];
        const char *text = ls_intern(ls_compare_tolerance_text(it->rtol, it->atol, t, sizeof t));
        const char *label = ls_internf("%s: %s", it->dtype ? ls_dtype_name(it->dtype) : "scalar", text);
        bool seen = false;
        for (uint32_t k = 0; k < labels.n && !seen; k++) seen = labels.v[k] == label;
        if (!seen) ls_vec_push(&labels, label);
        seen = false;
        for (uint32_t k = 0; k < texts.n && !seen; k++) seen = texts.v[k] == text;
        if (!seen) ls_vec_push(&texts, text);
    }
    if (texts.n == 1) ls_buf_puts(b, texts.v[0]);
    for (uint32_t k = 0; texts.n > 1 && k < labels.n; k++) ls_buf_printf(b, "%s%s", k ? "; " : "", labels.v[k]);
    if (!texts.n) ls_buf_puts(b, "nothing compared");
    free(texts.v);
    free(labels.v);
}

static void print_item(const char *what, const ls_compare_item *it)
{
    char t[64];
    printf("  %-30s %-8s max abs %-9.3g max rel %-9.3g %-21s ", what, it->dtype ? ls_dtype_name(it->dtype) : "scalar",
           it->d.max_abs, it->d.max_rel, ls_compare_tolerance_text(it->rtol, it->atol, t, sizeof t));
    if (it->d.pass) printf("ok\n");
    else printf("DIFFERS at step %" PRId64 ": %s\n", it->run, it->d.why);
}

void run_compare_print(const run_compare *c, int64_t steps)
{
    if (c->failed_msg) steps = c->failed_step + 1; /* the step that failed was compared too */
    if (c->owned) printf("compare with %s over %" PRId64 " step%s:\n", c->label, steps, steps == 1 ? "" : "s");
    else printf("compare with %s (%s) over %" PRId64 " step%s:\n", c->label, c->reference, steps, steps == 1 ? "" : "s");
    uint32_t n, n_st;
    ls_compare_item *outs = outputs_over_steps(c, &n);
    for (uint32_t i = 0; i < n; i++) {
        char what[300];
        bool renamed = strcmp(outs[i].name, outs[i].ref_name) != 0; /* lowering renames outputs (getitem) */
        snprintf(what, sizeof what, "out %u %s%s%s", outs[i].index, outs[i].name, renamed ? " vs " : "",
                 renamed ? outs[i].ref_name : "");
        print_item(what, &outs[i]);
    }
    free(outs);
    const ls_compare_item *sts = ls_compare_run_states(c->run, &n_st);
    uint32_t n_states = 0;
    for (uint32_t i = 0; i < n_st; i++) {
        const ls_compare_item *it = &sts[i];
        if (it->run < 0) continue; /* no step finished */
        if (!it->name) {
            printf("  state %s: %s  DIFFERS\n", it->ref_name, it->d.why);
        } else if (!it->compared) {
            printf("  state %s: the reference has no state of this target (not compared)\n", it->name);
            continue;
        } else {
            /* states pair by target: the reference's name is worth showing when it is not the target alone */
            const char *slash = strrchr(it->name, '/');
            bool other = strcmp(slash ? slash + 1 : it->name, it->ref_name) != 0;
            char what[300];
            snprintf(what, sizeof what, "state %s%s%s", it->name, other ? " vs " : "", other ? it->ref_name : "");
            print_item(what, it);
        }
        n_states++;
    }
    const ls_run_stats *st = ls_runner_stats(ls_compare_run_reference(c->run));
    printf("  reference time: on the CPU outside delegates %.3f ms", st->cpu_seconds * 1e3);
    run_print_delegate_times(st);
    printf("\n");
    uint32_t compared, failed = ls_compare_run_failed(c->run, &compared);
    uint32_t out_items;
    ls_compare_run_outputs(c->run, &out_items);
    ls_buf tol = {0};
    tolerances_used(c, &tol);
    printf("compare with %s: %u output%s over %" PRId64 " step%s and %u state tensor%s, ", c->label, out_items,
           out_items == 1 ? "" : "s", steps, steps == 1 ? "" : "s", n_states, n_states == 1 ? "" : "s");
    if (c->failed_msg)
        printf("the program FAILED at step %" PRId64 " where the reference ran: %s\n", c->failed_step, c->failed_msg);
    else if (failed)
        printf("%u differ (%s)\n", failed, tol.s);
    else
        printf("all within %s\n", tol.s);
    ls_buf_free(&tol);
}

static void json_item(ls_buf *js, const ls_compare_item *it)
{
    ls_buf_puts(js, "\"dtype\": ");
    ls_buf_json_str(js, it->dtype ? ls_dtype_name(it->dtype) : NULL);
    ls_buf_puts(js, ", \"rtol\": ");
    run_json_num(js, it->rtol);
    ls_buf_puts(js, ", \"atol\": ");
    run_json_num(js, it->atol);
    ls_buf_puts(js, ", \"max_abs\": ");
    run_json_num(js, it->d.max_abs);
    ls_buf_puts(js, ", \"max_rel\": ");
    run_json_num(js, it->d.max_rel);
    ls_buf_printf(js, ", \"pass\": %s", it->d.pass ? "true" : "false");
    if (!it->d.pass) {
        ls_buf_puts(js, ", \"why\": ");
        ls_buf_json_str(js, it->d.why);
    }
}

static void json_opt_num(ls_buf *js, double v)
{
    if (v < 0) ls_buf_puts(js, "null");
    else run_json_num(js, v);
}

void run_compare_json(const run_compare *c, ls_buf *js)
{
    uint32_t compared, failed = ls_compare_run_failed(c->run, &compared);
    ls_buf_puts(js, ",\n  \"compare\": {\"reference\": ");
    ls_buf_json_str(js, c->reference);
    ls_buf_printf(js, ", \"loaded_program\": %s, \"rtol\": ", c->owned ? "false" : "true");
    json_opt_num(js, c->opts.rtol);
    ls_buf_puts(js, ", \"atol\": ");
    json_opt_num(js, c->opts.atol);
    ls_buf_printf(js, ", \"compared\": %u, \"failed\": %u, \"pass\": %s,\n    \"outputs\": [", compared, failed,
                  run_compare_failed(c) ? "false" : "true");
    uint32_t n;
    const ls_compare_item *it = ls_compare_run_outputs(c->run, &n);
    for (uint32_t i = 0; i < n; i++) {
        ls_buf_printf(js, "%s\n      {\"step\": %" PRId64 ", \"index\": %u, \"name\": ", i ? "," : "", it[i].run, it[i].index);
        ls_buf_json_str(js, it[i].name);
        ls_buf_puts(js, ", \"reference\": ");
        ls_buf_json_str(js, it[i].ref_name);
        ls_buf_puts(js, ", ");
        json_item(js, &it[i]);
        ls_buf_putc(js, '}');
    }
    ls_buf_puts(js, "],\n    \"state\": [");
    it = ls_compare_run_states(c->run, &n);
    bool first = true;
    for (uint32_t i = 0; i < n; i++) {
        if (it[i].run < 0) continue;
        ls_buf_puts(js, first ? "\n      {\"name\": " : ",\n      {\"name\": ");
        first = false;
        ls_buf_json_str(js, it[i].name);
        ls_buf_puts(js, ", \"reference\": ");
        ls_buf_json_str(js, it[i].ref_name);
        ls_buf_printf(js, ", \"compared\": %s, \"step\": %" PRId64 ", ", it[i].compared ? "true" : "false", it[i].run);
        json_item(js, &it[i]);
        ls_buf_putc(js, '}');
    }
    const ls_run_stats *st = ls_runner_stats(ls_compare_run_reference(c->run));
    ls_buf_printf(js, "],\n    \"reference_time\": {\"cpu_kernel_seconds\": %.9f, \"delegates\": ", st->cpu_seconds);
    run_json_delegate_times(js, st);
    ls_buf_puts(js, "},\n    \"error\": ");
    if (c->failed_msg) {
        ls_buf_printf(js, "{\"step\": %" PRId64 ", \"message\": ", c->failed_step);
        ls_buf_json_str(js, c->failed_msg);
        ls_buf_putc(js, '}');
    } else {
        ls_buf_puts(js, "null");
    }
    ls_buf_puts(js, "}");
}

void run_compare_free(run_compare *c)
{
    if (!c) return;
    ls_compare_run_free(c->run);
    ls_program_unref(c->owned);
    free(c->failed_msg);
    free(c);
}
