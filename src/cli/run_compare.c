/* lowerscope run FILE --compare-with REF: REF's loaded program runs on the same inputs as FILE's,
 * step by step, and every user output is compared (compare.h: rtol 1e-5, atol 1e-6). */
#include "run_compare.h"

#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "cli.h"
#include "compare.h"
#include "reader.h"

struct run_compare {
    const char *path;
    ls_program *ref;
    ls_runner *r;
    ls_value *inputs; /* this step's inputs, cloned before FILE's run can touch them */
    uint32_t n_inputs;
    uint32_t compared, failed;
};

run_compare *run_compare_open(const char *path, const ls_program *p, ls_error *err)
{
    run_compare *c = ls_calloc(1, sizeof *c);
    c->path = path;
    if (ls_load(path, NULL, &c->ref, err) != 0) goto fail;
    if (!c->ref->has_weights) {
        ls_fail(err, "%s: the program has no weight data: it cannot run as the reference", path);
        goto fail;
    }
    uint32_t a = ls_program_user_inputs(p, NULL, 0), b = ls_program_user_inputs(c->ref, NULL, 0);
    if (a != b) {
        ls_fail(err, "%s takes %u user input%s, the program %u: they cannot run on the same inputs", path, b,
                b == 1 ? "" : "s", a);
        goto fail;
    }
    if (!(c->r = ls_runner_new(c->ref, err))) goto fail;
    return c;
fail:
    run_compare_free(c);
    return NULL;
}

void run_compare_inputs(run_compare *c, const ls_value *inputs, uint32_t n)
{
    for (uint32_t i = 0; i < c->n_inputs; i++) ls_value_release(&c->inputs[i]);
    free(c->inputs);
    c->inputs = ls_calloc(n ? n : 1, sizeof *c->inputs);
    c->n_inputs = n;
    for (uint32_t i = 0; i < n; i++)
        c->inputs[i] = inputs[i].kind == LS_V_TENSOR ? ls_value_tensor(ls_tensor_clone(inputs[i].t)) : ls_value_copy(&inputs[i]);
}

int run_compare_step(run_compare *c, int64_t step, const ls_value *outs, uint32_t nout, const char *const *names,
                     bool print, ls_buf *json, ls_error *err)
{
    ls_value *want = NULL;
    uint32_t nwant = 0;
    if (ls_runner_run(c->r, c->inputs, c->n_inputs, &want, &nwant, err) != 0)
        return ls_fail_prefix(err, "--compare-with %s", c->path);
    int rc = 0;
    if (nwant != nout) {
        rc = ls_fail(err, "--compare-with %s: it has %u user output%s, the program %u", c->path, nwant,
                     nwant == 1 ? "" : "s", nout);
    }
    for (uint32_t i = 0; i < nout && rc == 0; i++) {
        ls_value_diff d;
        ls_compare_values(&outs[i], &want[i], LS_COMPARE_RTOL, LS_COMPARE_ATOL, &d);
        c->compared++;
        c->failed += !d.pass;
        const char *name = names && names[i] ? names[i] : "(constant)";
        if (print)
            printf("  vs %-21s max abs %.3g, max rel %.3g: %s%s\n", name, d.max_abs, d.max_rel, d.pass ? "ok" : "DIFFERS: ",
                   d.pass ? "" : d.why);
        ls_buf_printf(json, "%s\n    {\"step\": %lld, \"index\": %u, \"name\": ", json->len ? "," : "", (long long)step, i);
        ls_buf_json_str(json, name);
        ls_buf_printf(json, ", \"max_abs\": %.9g, \"max_rel\": %.9g, \"pass\": %s", d.max_abs,
                      d.max_rel > 1e300 ? 1e300 : d.max_rel, d.pass ? "true" : "false");
        if (!d.pass) {
            ls_buf_puts(json, ", \"why\": ");
            ls_buf_json_str(json, d.why);
        }
        ls_buf_putc(json, '}');
    }
    for (uint32_t i = 0; i < nwant; i++) ls_value_release(&want[i]);
    free(want);
    return rc;
}

uint32_t run_compare_failed(const run_compare *c, uint32_t *compared)
{
    if (compared) *compared = c->compared;
    return c->failed;
}

void run_compare_free(run_compare *c)
{
    if (!c) return;
    for (uint32_t i = 0; i < c->n_inputs; i++) ls_value_release(&c->inputs[i]);
    free(c->inputs);
    ls_runner_free(c->r);
    ls_program_unref(c->ref);
    free(c);
}
