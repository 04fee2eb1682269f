/* lowerscope run --step / --compare / --compare-with through the binary: a pipeline step runs
 * and gives the loaded program's outputs on every sample; --compare passes on every sample
 * (kv_cache's cache compared inside its delegate over three steps) and fails, exit 1, on a
 * program that was changed (one constant or the initial cache altered) or that fails where the
 * reference runs (constant_mask lowered without fold_masks); --rtol/--atol move the line; bad
 * usage exits 2. Also `COMMAND --help` for every command. */
#include <check.h>
#include <cjson/cJSON.h>
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "export.h"
#include "ops.h"
#include "passes.h"
#include "progfixtures.h"
#include "testutil.h"


static const char *sample_path(const char *name)
{
    static char rel[256];
    snprintf(rel, sizeof rel, "samples/%s.pt2", name);
    const char *path = tu_root(rel);
    ck_assert_msg(access(path, R_OK) == 0, "%s: the sample is missing (samples/ is committed)", path);
    return path;
}

/* Runs lowerscope with the arguments and parses its JSON output; the exit code in *rc. */
static cJSON *run_json(int *rc, const char *fmt, const char *a, const char *b, int steps)
{
    char args[4096], *out;
    snprintf(args, sizeof args, fmt, a, b, steps);
    *rc = tu_runf(&out, "%s", args);
    cJSON *j = cJSON_Parse(out);
    ck_assert_msg(j != NULL, "lowerscope %s: not JSON (exit %d):\n%s", args, *rc, out);
    free(out);
    return j;
}

static cJSON *item(const cJSON *j, const char *key)
{
    cJSON *v = cJSON_GetObjectItem(j, key);
    ck_assert_msg(v != NULL, "no \"%s\"", key);
    return v;
}

/* Every "first" value of every output of every run of a and b agree (float32 tolerance). */
static void same_outputs(const char *what, const cJSON *a, const cJSON *b)
{
    const cJSON *ra = item(a, "runs"), *rb = item(b, "runs");
    ck_assert_int_eq(cJSON_GetArraySize(ra), cJSON_GetArraySize(rb));
    int compared = 0;
    for (int k = 0; k < cJSON_GetArraySize(ra); k++) {
        const cJSON *oa = item(cJSON_GetArrayItem(ra, k), "outputs"), *ob = item(cJSON_GetArrayItem(rb, k), "outputs");
        ck_assert_int_eq(cJSON_GetArraySize(oa), cJSON_GetArraySize(ob));
        for (int o = 0; o < cJSON_GetArraySize(oa); o++) {
            const cJSON *fa = item(cJSON_GetArrayItem(oa, o), "first"), *fb = item(cJSON_GetArrayItem(ob, o), "first");
            ck_assert_int_eq(cJSON_GetArraySize(fa), cJSON_GetArraySize(fb));
            for (int i = 0; i < cJSON_GetArraySize(fa); i++) {
                const cJSON *x = cJSON_GetArrayItem(fa, i), *y = cJSON_GetArrayItem(fb, i);
                if (cJSON_IsBool(y)) {
                    ck_assert_int_eq(cJSON_IsTrue(x), cJSON_IsTrue(y));
                } else {
                    double u = x->valuedouble, v = y->valuedouble;
                    ck_assert_msg(fabs(u - v) <= 1e-6 + 1e-5 * fabs(v), "%s step %d output %d [%d]: %g against %g", what,
                                  k, o, i, u, v);
                }
                compared++;
            }
        }
    }
    ck_assert_int_gt(compared, 0);
}

START_TEST(step_to_backend_gives_the_loaded_programs_outputs)
{
    for (size_t s = 0; s < PF_N_SAMPLES; s++) {
        const char *path = sample_path(pf_samples[s].name);
        int rc;
        cJSON *ref = run_json(&rc, "run %s%s --json --steps %d", path, "", pf_samples[s].steps);
        ck_assert_int_eq(rc, 0);
        cJSON *low = run_json(&rc, "run %s --step %s --json --steps %d", path, "to_backend", pf_samples[s].steps);
        ck_assert_msg(rc == 0, "%s: exit %d", pf_samples[s].name, rc);
        const cJSON *ps = item(low, "pipeline_step");
        ck_assert_str_eq(item(ps, "pass")->valuestring, "to_backend");
        ck_assert_str_eq(item(ps, "backend")->valuestring, "bundled");
        ck_assert(cJSON_IsNull(item(ref, "pipeline_step")));
        same_outputs(pf_samples[s].name, low, ref);
        /* the step has lowered modules: their time is reported */
        ck_assert_int_gt(cJSON_GetArraySize(item(item(low, "time"), "delegates")), 0);
        cJSON_Delete(ref);
        cJSON_Delete(low);
    }
}
END_TEST

START_TEST(compare_passes_on_every_sample)
{
    for (size_t s = 0; s < PF_N_SAMPLES; s++) {
        const char *path = sample_path(pf_samples[s].name);
        int rc;
        cJSON *j = run_json(&rc, "run %s%s --compare --json --steps %d", path, "", pf_samples[s].steps);
        const cJSON *c = item(j, "compare");
        ck_assert_msg(rc == 0 && cJSON_IsTrue(item(c, "pass")), "%s: exit %d, failed %d", pf_samples[s].name, rc,
                      item(c, "failed")->valueint);
        ck_assert_str_eq(item(item(j, "pipeline_step"), "pass")->valuestring, "emit"); /* the last step runs here */
        ck_assert_int_eq(item(c, "failed")->valueint, 0);
        ck_assert(cJSON_IsTrue(item(c, "loaded_program")));
        ck_assert(cJSON_IsNull(item(c, "error")));
        const cJSON *outs = item(c, "outputs");
        ck_assert_int_eq(cJSON_GetArraySize(outs) % pf_samples[s].steps, 0);
        ck_assert_int_gt(cJSON_GetArraySize(outs), 0);
        for (int i = 0; i < cJSON_GetArraySize(outs); i++) {
            const cJSON *o = cJSON_GetArrayItem(outs, i);
            ck_assert(cJSON_IsTrue(item(o, "pass")));
            ck_assert(cJSON_IsNumber(item(o, "max_abs")) && cJSON_IsNumber(item(o, "rtol")));
        }
        cJSON_Delete(j);
    }
}
END_TEST

START_TEST(kv_cache_state_is_compared_inside_its_delegate)
{
    const char *path = sample_path("kv_cache");
    int rc;
    cJSON *j = run_json(&rc, "run %s --step %s --compare --json --steps %d", path, "to_backend", 3);
    ck_assert_int_eq(rc, 0);
    const cJSON *st = item(item(j, "compare"), "state");
    ck_assert_int_eq(cJSON_GetArraySize(st), 1);
    const cJSON *cache = cJSON_GetArrayItem(st, 0);
    ck_assert_str_eq(item(cache, "name")->valuestring, "lowered_module_0/cache");
    ck_assert_str_eq(item(cache, "reference")->valuestring, "cache");
    ck_assert(cJSON_IsTrue(item(cache, "compared")) && cJSON_IsTrue(item(cache, "pass")));
    ck_assert_int_eq(item(cache, "step")->valueint, 2);
    ck_assert_str_eq(item(cache, "dtype")->valuestring, "float32");
    ck_assert_int_eq(cJSON_GetArraySize(item(item(j, "compare"), "outputs")), 3);
    /* both sides' time */
    ck_assert_int_eq(cJSON_GetArraySize(item(item(j, "time"), "delegates")), 1);
    ck_assert(cJSON_IsNumber(item(item(item(j, "compare"), "reference_time"), "cpu_kernel_seconds")));
    cJSON_Delete(j);
    char *out;
    ck_assert_int_eq(tu_runf(&out, "run %s --compare --steps 3", path), 0);
    ck_assert_msg(tu_contains(out, "at step 8 emit") && tu_contains(out, "compared with the loaded program") &&
                      tu_contains(out, "state lowered_module_0/cache") && tu_contains(out, "reference time: on the CPU outside delegates") &&
                      tu_contains(out, "lowered_module_0 (BundledBackend)") &&
                      tu_contains(out, "3 outputs over 3 steps and 1 state tensor, all within rtol 1e-5, atol 1e-6"),
                  "%s", out);
    free(out);
}
END_TEST

/* A copy of a sample with the last value of a stored tensor moved by a relative `by` (a cache's
 * last row is one no step writes). */
static const char *altered(const char *sample, const char *target, bool buffer, double by)
{
    static char path[512];
    ls_error err;
    ls_program *p = pf_load(sample_path(sample));
    ls_named_tensor *nt = buffer ? ls_program_state(p, target) : ls_program_constant(p, target);
    ck_assert_ptr_nonnull(nt);
    ls_tensor *t = ls_tensor_clone(nt->t);
    int64_t last = t->numel - 1;
    double v = ls_tensor_get_f64(t, last);
    ls_tensor_set_f64(t, last, v == 0 ? by : v * (1 + by));
    if (buffer) ls_program_put_state(p, target, t, NULL);
    else ls_program_put_constant(p, target, t, NULL);
    ls_tensor_unref(t);
    snprintf(path, sizeof path, "%s/%s_altered.pt2", tu_tmpdir(), sample);
    ck_assert_msg(ls_write_pt2(p, path, NULL, &err) == 0, "%s", err.msg);
    ls_program_unref(p);
    return path;
}

START_TEST(a_changed_constant_fails_the_comparison)
{
    const char *orig = sample_path("shared_constant");
    if (!orig) return;
    char changed[512], *out;
    snprintf(changed, sizeof changed, "%s", altered("shared_constant", "c", false, 1e-4));
    int rc;
    cJSON *j = run_json(&rc, "run %s --compare-with %s --json --steps %d", changed, orig, 2);
    ck_assert_int_eq(rc, 1);
    const cJSON *c = item(j, "compare");
    ck_assert(cJSON_IsFalse(item(c, "pass")));
    ck_assert(cJSON_IsFalse(item(c, "loaded_program")));
    ck_assert_str_eq(item(j, "compare_with")->valuestring, orig);
    ck_assert_int_eq(item(c, "compared")->valueint, 4);
    ck_assert_int_gt(item(c, "failed")->valueint, 0);
    const cJSON *o = cJSON_GetArrayItem(item(c, "outputs"), 0);
    ck_assert(cJSON_IsFalse(item(o, "pass")));
    ck_assert_msg(tu_contains(item(o, "why")->valuestring, "element 3:"), "%s", item(o, "why")->valuestring);
    ck_assert(item(o, "max_rel")->valuedouble > 1e-5);
    cJSON_Delete(j);
    /* text: the failing outputs, the tolerance and exit 1; a lowered step of the changed file too */
    ck_assert_int_eq(tu_runf(&out, "run %s --step to_backend --compare-with %s", changed, orig), 1);
    ck_assert_msg(tu_contains(out, "DIFFERS at step 0: element 3:") && tu_contains(out, "differ (rtol 1e-5, atol 1e-6)"),
                  "%s", out);
    free(out);
    /* a looser tolerance takes it */
    ck_assert_int_eq(tu_runf(&out, "run %s --compare-with %s --rtol 1e-3", changed, orig), 0);
    ck_assert_msg(tu_contains(out, "all within rtol 0.001, atol 1e-6"), "%s", out);
    free(out);
    ck_assert_int_eq(tu_runf(&out, "run %s --compare-with %s --rtol 0 --atol 1", changed, orig), 0);
    free(out);
}
END_TEST

START_TEST(a_changed_initial_cache_fails_the_state)
{
    const char *orig = sample_path("kv_cache");
    if (!orig) return;
    char changed[512];
    snprintf(changed, sizeof changed, "%s", altered("kv_cache", "cache", true, 0.5));
    int rc;
    cJSON *j = run_json(&rc, "run %s --compare-with %s --json --steps %d", changed, orig, 3);
    ck_assert_int_eq(rc, 1);
    const cJSON *cache = cJSON_GetArrayItem(item(item(j, "compare"), "state"), 0);
    ck_assert_str_eq(item(cache, "name")->valuestring, "cache");
    ck_assert(cJSON_IsFalse(item(cache, "pass")));
    ck_assert_int_eq(item(cache, "step")->valueint, 0); /* the first step it differed at */
    ck_assert_msg(tu_contains(item(cache, "why")->valuestring, "element 31: 0.5 against 0"), "%s",
                  item(cache, "why")->valuestring);
    cJSON_Delete(j);
}
END_TEST

/* exir writes a mutable buffer with no name (no emit_mutable_buffer_names): a --portable .pte of
 * kv_cache keeps its cache as an unnamed planned tensor, which the .pte loader calls _buffer_0.
 * Compared with the .pt2, it pairs with the reference's only state of its dtype and shape; asked
 * for names, it pairs by its target. */
START_TEST(an_unnamed_state_of_a_pte_pairs_by_position)
{
    const char *orig = sample_path("kv_cache");
    if (!orig) return;
    char pte[512], named[512];
    snprintf(pte, sizeof pte, "%s/kv_portable.pte", tu_tmpdir());
    snprintf(named, sizeof named, "%s/kv_portable_named.pte", tu_tmpdir());
    char *out;
    ck_assert_int_eq(tu_runf(&out, "export %s --portable -o %s --force", orig, pte), 0);
    free(out);
    ck_assert_int_eq(tu_runf(&out, "export %s --portable --mutable-buffer-names -o %s --force", orig, named), 0);
    free(out);
    int rc;
    cJSON *j = run_json(&rc, "run %s --compare-with %s --json --steps %d", pte, orig, 3);
    ck_assert_int_eq(rc, 0);
    const cJSON *st = item(item(j, "compare"), "state");
    ck_assert_int_eq(cJSON_GetArraySize(st), 1);
    const cJSON *cache = cJSON_GetArrayItem(st, 0);
    ck_assert_str_eq(item(cache, "name")->valuestring, "_buffer_0");
    ck_assert_str_eq(item(cache, "reference")->valuestring, "cache");
    ck_assert(cJSON_IsTrue(item(cache, "compared")) && cJSON_IsTrue(item(cache, "pass")));
    cJSON_Delete(j);
    ck_assert_int_eq(tu_runf(&out, "run %s --compare-with %s --steps 3", pte, orig), 0);
    ck_assert_msg(tu_contains(out, "state _buffer_0 vs cache") && tu_contains(out, "1 state tensor, all within"), "%s", out);
    free(out);
    j = run_json(&rc, "run %s --compare-with %s --json --steps %d", named, orig, 3);
    ck_assert_int_eq(rc, 0);
    cache = cJSON_GetArrayItem(item(item(j, "compare"), "state"), 0);
    ck_assert_str_eq(item(cache, "name")->valuestring, "cache");
    ck_assert(cJSON_IsTrue(item(cache, "pass")));
    cJSON_Delete(j);
    /* --compare on a .pte: its pipeline is the load alone, so there is nothing lowered to
     * compare; the message says so and names the two ways that do compare */
    rc = tu_runf(&out, "run %s --compare", pte);
    ck_assert_msg(rc == 2 && tu_contains(out, "has only the load") && tu_contains(out, "--relower") &&
                      tu_contains(out, "--compare-with REF"),
                  "%s", out);
    free(out);
}
END_TEST

START_TEST(a_program_failing_where_the_reference_runs_is_a_finding)
{
    const char *path = sample_path("constant_mask");
    char *out;
    int rc = tu_runf(&out, "run %s --compare --pipeline to_edge,constant_prop,partition,duplicate_constants,to_backend",
                     path);
    ck_assert_msg(rc == 1, "exit %d: %s", rc, out);
    ck_assert_msg(tu_contains(out, "step 0  FAILED:") && tu_contains(out, "[Gather] Boolean indices not supported") &&
                      tu_contains(out, "the program FAILED at step 0 where the reference ran"),
                  "%s", out);
    free(out);
    cJSON *j = run_json(&rc, "run %s --compare --pipeline %s --json --steps %d", path,
                        "to_edge,constant_prop,partition,duplicate_constants,to_backend", 1);
    ck_assert_int_eq(rc, 1);
    const cJSON *e = item(item(j, "compare"), "error");
    ck_assert_int_eq(item(e, "step")->valueint, 0);
    ck_assert(tu_contains(item(e, "message")->valuestring, "[Gather] Boolean indices not supported"));
    cJSON_Delete(j);
    /* with fold_masks (the default pipeline) it matches */
    ck_assert_int_eq(tu_runf(&out, "run %s --compare --step to_backend", path), 0);
    free(out);
}
END_TEST

/* Two backends in one program: two_delegates' additions and products go to the example
 * `arith` profile (a backend lowerscope does not have: the bundled delegate stands in for it),
 * its subtractions and divisions to the bundled backend; both delegates run and match. */
START_TEST(two_backends_run_together)
{
    const char *path = sample_path("two_delegates");
    char profile[1024];
    snprintf(profile, sizeof profile, "%ssamples/backends/arith.json", tu_root(""));
    int rc;
    cJSON *j = run_json(&rc, "run %s --backend %s --backend bundled --compare --json --steps %d", path, profile, 2);
    const cJSON *c = item(j, "compare");
    ck_assert_msg(rc == 0 && cJSON_IsTrue(item(c, "pass")), "exit %d", rc);
    const cJSON *dels = item(item(j, "time"), "delegates");
    ck_assert_int_eq(cJSON_GetArraySize(dels), 2);
    const cJSON *d0 = cJSON_GetArrayItem(dels, 0), *d1 = cJSON_GetArrayItem(dels, 1);
    ck_assert_str_eq(item(d0, "backend")->valuestring, "ArithBackend");
    ck_assert(cJSON_IsTrue(item(d0, "simulated")));
    ck_assert_str_eq(item(d1, "backend")->valuestring, "BundledBackend");
    ck_assert(cJSON_IsFalse(item(d1, "simulated")));
    cJSON_Delete(j);

    /* the text says so; and from the exported .pte, the load-time side of the stand-in */
    char *out;
    ck_assert_int_eq(tu_runf(&out, "run %s --backend %s --backend bundled --step emit", path, profile), 0);
    ck_assert_msg(strstr(out, "lowered_module_0 (ArithBackend, simulated by BundledBackend)") &&
                      strstr(out, "lowered_module_1 (BundledBackend) "),
                  "%s", out);
    free(out);
    char pte[1024];
    snprintf(pte, sizeof pte, "%s/two_backends.pte", tu_tmpdir());
    ck_assert_int_eq(tu_runf(&out, "export %s --backend %s --backend bundled -o %s --force", path, profile, pte), 0);
    free(out);
    ck_assert_int_eq(tu_runf(&out, "run %s --compare-with %s", pte, path), 0);
    ck_assert_msg(strstr(out, "(ArithBackend, simulated by BundledBackend)") && strstr(out, "all within"), "%s", out);
    free(out);

    /* each round took its own ops */
    ls_program *p = pf_sample("two_delegates");
    ls_pipeline_opts po;
    ls_pipeline_opts_init(&po);
    ls_error err;
    ck_assert_int_eq(ls_pipeline_opt(&po, "--backend", profile, &err), 1);
    ck_assert_int_eq(ls_pipeline_opt(&po, "--backend", "bundled", &err), 1);
    ls_history h;
    ck_assert_msg(ls_pipeline_run(p, &po, &h, &err) == 0, "%s", err.msg);
    const ls_program *last = h.steps[h.n - 1].program;
    ck_assert_int_eq(last->n_subs, 2);
    const char *want_ops[2][2] = {{"add", "mul"}, {"sub", "div"}};
    for (uint32_t k = 0; k < 2; k++) {
        const ls_submodule *sub = &last->subs[k];
        ck_assert_str_eq(sub->backend_id, k == 0 ? "ArithBackend" : "BundledBackend");
        ck_assert_ptr_nonnull(sub->processed);
        uint32_t calls = 0;
        for (uint32_t i = 0; i < sub->program->n_nodes; i++) {
            const ls_node *n = sub->program->nodes[i];
            if (n->kind != LS_NODE_CALL || !n->op) continue;
            const char *op = ls_op_short(n->op);
            ck_assert_msg(strncmp(op, want_ops[k][0], 3) == 0 || strncmp(op, want_ops[k][1], 3) == 0,
                          "%s holds %s", sub->name, op);
            calls++;
        }
        ck_assert_uint_eq(calls, 6);
    }
    ls_history_free(&h);
    ls_pipeline_opts_free(&po);
    ls_program_unref(p);
}
END_TEST

/* Running past a cache's rows fails at a step: the message names the step and says what to do
 * (it gave the kernel's words alone), with and without a reference; the steps that ran and the
 * state after the last of them are reported (exit 2 threw them away, and --json wrote nothing),
 * and the cache's rows are the steps that ran. */
START_TEST(a_step_past_the_cache_names_itself)
{
    const char *path = sample_path("kv_cache");
    char *out;
    int rc = tu_runf(&out, "run %s --steps 5", path);
    ck_assert_msg(rc == 1 && tu_contains(out, "run: step 4 failed: ") && tu_contains(out, "index 4 is out of bounds") &&
                      tu_contains(out, "a position past a cache's rows fails (give fewer --steps)") &&
                      tu_contains(out, "step 3  ") && tu_contains(out, "step 4  FAILED: ") &&
                      tu_contains(out, "state after step 3"),
                  "exit %d: %s", rc, out);
    free(out);
    rc = tu_runf(&out, "run %s --steps 5 --compare", path);
    ck_assert_msg(rc == 1 && tu_contains(out, "run: step 4: the program and the reference both fail on these inputs") &&
                      tu_contains(out, "over 4 steps"),
                  "exit %d: %s", rc, out);
    free(out);
    for (int compare = 0; compare < 2; compare++) {
        rc = tu_runf(&out, "run %s --steps 5 --json%s", path, compare ? " --compare" : "");
        ck_assert_int_eq(rc, 1);
        const char *js = strstr(out, "\n{"); /* after stderr's message */
        cJSON *doc = js ? cJSON_Parse(js) : NULL;
        ck_assert_msg(doc, "%s", out);
        cJSON *runs = cJSON_GetObjectItem(doc, "runs"), *failed = cJSON_GetObjectItem(doc, "failed");
        ck_assert_int_eq(cJSON_GetArraySize(runs), 4);
        ck_assert_int_eq(cJSON_GetObjectItem(failed, "step")->valueint, 4);
        ck_assert(strstr(cJSON_GetObjectItem(failed, "error")->valuestring, "index 4 is out of bounds"));
        ck_assert(cJSON_IsTrue(cJSON_GetObjectItem(failed, "reference_fails_too")) == (compare == 1));
        ck_assert_int_eq(cJSON_GetArraySize(cJSON_GetObjectItem(doc, "state")), 1);
        cJSON_Delete(doc);
        free(out);
    }
    rc = tu_runf(&out, "run %s --steps 4 --json", path); /* the cache full, not past it */
    ck_assert_int_eq(rc, 0);
    cJSON *doc = cJSON_Parse(out);
    ck_assert(doc && cJSON_IsNull(cJSON_GetObjectItem(doc, "failed")));
    ck_assert_int_eq(cJSON_GetArraySize(cJSON_GetObjectItem(doc, "runs")), 4);
    cJSON_Delete(doc);
    free(out);
}
END_TEST

START_TEST(bad_usage_exits_2)
{
    const char *path = sample_path("shared_constant");
    static const struct {
        const char *args, *says;
    } cases[] = {
        {"--compare --compare-with %s", "one reference at a time"},
        {"--rtol 1e-3", "--rtol and --atol are the tolerance of --compare"},
        {"--compare --rtol -1", "--rtol wants a number from 0 up"},
        {"--compare --atol x", "--atol wants a number"},
        {"--pipeline to_edge", "choose the pipeline of --step or --compare"},
        {"--step nope", "--step nope: no such step"},
        {"--step 99", "the pipeline has steps 0 to"},
        {"--step to_backend --backend /nonexistent.json", "/nonexistent.json"},
    };
    /* a reference whose inputs the program's do not fit: refused before anything runs (it ran
     * step 0, then failed on the reference's first run) */
    char *mis;
    int mrc = tu_runf(&mis, "run %s --compare-with %s", sample_path("kv_cache"), sample_path("policy"));
    ck_assert_msg(mrc == 2 && tu_contains(mis, "input 0 'state' is float32[1, 14], the program's 'q' is float32[1, 8]: they "
                                              "cannot run on the same inputs") && !tu_contains(mis, "step 0"),
                  "exit %d: %s", mrc, mis);
    free(mis);
    mrc = tu_runf(&mis, "run %s --compare-with %s", sample_path("two_delegates"), sample_path("shared_constant"));
    ck_assert_msg(mrc == 2 && tu_contains(mis, "has 2 user outputs, the program 4: they cannot be compared") &&
                      !tu_contains(mis, "step 0"),
                  "exit %d: %s", mrc, mis);
    free(mis);
    for (size_t i = 0; i < sizeof cases / sizeof cases[0]; i++) {
        char args[2048], *out;
        snprintf(args, sizeof args, cases[i].args, path);
        int rc = tu_runf(&out, "run %s %s", path, args);
        ck_assert_msg(rc == 2 && tu_contains(out, cases[i].says), "run %s: exit %d: %s", args, rc, out);
        free(out);
    }
}
END_TEST

START_TEST(every_command_has_its_help)
{
    static const char *commands[] = {"info", "verify", "passes", "partitions", "diff", "run", "export"};
    for (size_t i = 0; i < sizeof commands / sizeof commands[0]; i++) {
        char *out, usage[64];
        snprintf(usage, sizeof usage, "usage: lowerscope %s FILE", commands[i]);
        ck_assert_int_eq(tu_runf(&out, "%s --help", commands[i]), 0);
        ck_assert_msg(strncmp(out, usage, strlen(usage)) == 0 && tu_contains(out, "\noptions:\n") &&
                          tu_contains(out, "-h, --help") && tu_contains(out, "exit codes:"),
                      "%s --help:\n%s", commands[i], out);
        char *again;
        ck_assert_int_eq(tu_runf(&again, "help %s", commands[i]), 0); /* lowerscope help COMMAND: the same */
        ck_assert_str_eq(again, out);
        free(again);
        free(out);
        ck_assert_int_eq(tu_runf(&out, "%s x.pt2 -h", commands[i]), 0);
        ck_assert(strncmp(out, usage, strlen(usage)) == 0);
        free(out);
        /* an unknown option: exit 2, the usage line */
        ck_assert_int_eq(tu_runf(&out, "%s x.pt2 --bogus -o y.pte", commands[i]), 2);
        snprintf(usage, sizeof usage, "(usage: lowerscope %s FILE", commands[i]);
        ck_assert_msg(tu_contains(out, "'--bogus'") && tu_contains(out, usage), "%s: %s", commands[i], out);
        free(out);
    }
    char *out;
    ck_assert_int_eq(tu_runf(&out, "run --help"), 0);
    ck_assert(tu_contains(out, "--compare ") && tu_contains(out, "--step S") && tu_contains(out, "--rtol R"));
    free(out);
    ck_assert_int_eq(tu_runf(&out, "help frobnicate"), 2);
    free(out);
    ck_assert_int_eq(tu_runf(&out, "--help"), 0);
    ck_assert(tu_contains(out, "COMMAND --help"));
    free(out);
}
END_TEST

Suite *run_compare_suite(void)
{
    Suite *s = suite_create("run_compare");
    TCase *tc = tcase_create("cli");
    tcase_set_timeout(tc, 60);
    tcase_add_test(tc, step_to_backend_gives_the_loaded_programs_outputs);
    tcase_add_test(tc, compare_passes_on_every_sample);
    tcase_add_test(tc, kv_cache_state_is_compared_inside_its_delegate);
    tcase_add_test(tc, a_changed_constant_fails_the_comparison);
    tcase_add_test(tc, a_changed_initial_cache_fails_the_state);
    tcase_add_test(tc, an_unnamed_state_of_a_pte_pairs_by_position);
    tcase_add_test(tc, a_program_failing_where_the_reference_runs_is_a_finding);
    tcase_add_test(tc, two_backends_run_together);
    tcase_add_test(tc, bad_usage_exits_2);
    tcase_add_test(tc, a_step_past_the_cache_names_itself);
    tcase_add_test(tc, every_command_has_its_help);
    suite_add_tcase(s, tc);
    return s;
}
