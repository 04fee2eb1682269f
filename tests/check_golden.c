/* Golden tests: every sample in samples/ is run by the interpreter and its outputs compared with
 * the NumPy results in tests/golden/<sample>/ (computed independently, see its README):
 * float outputs within |got - want| <= 1e-6 + 1e-5·|want|, integer and bool outputs and all
 * shapes exactly. Programs with state run three steps; kv_cache's cache is checked after each,
 * also inside the delegate after lowering. Both folders are committed: one missing fails. */
#include <check.h>
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <dirent.h>
#include <sys/stat.h>

#include "backend.h"
#include "npy.h"
#include "progfixtures.h"
#include "runtime.h"
#include "testutil.h"

static bool exists(const char *path)
{
    struct stat st;
    return stat(path, &st) == 0;
}

/* Compares got against the .npy at path; returns a message or NULL. */
static char *compare(const ls_tensor *got, const char *path)
{
    ls_tensor *want;
    ls_error err;
    static char msg[LS_ERR_MAX + 1024];
    if (ls_npy_load(path, &want, &err) != 0) {
        snprintf(msg, sizeof msg, "%s", err.msg);
        return msg;
    }
    char *res = NULL;
    ls_tmeta a, b;
    char s1[128], s2[128];
    ls_tensor_meta(got, &a);
    ls_tensor_meta(want, &b);
    if (!ls_tmeta_equal(&a, &b)) {
        snprintf(msg, sizeof msg, "%s: got %s, expected %s", path, ls_tmeta_str(&a, s1, sizeof s1), ls_tmeta_str(&b, s2, sizeof s2));
        res = msg;
    } else {
        bool fl = ls_dtype_is_float(got->dtype);
        for (int64_t i = 0; i < got->numel && !res; i++) {
            double g = ls_tensor_get_f64(got, i), w = ls_tensor_get_f64(want, i);
            bool ok = fl ? (isnan(w) ? isnan(g) : fabs(g - w) <= 1e-6 + 1e-5 * fabs(w))
                         : ls_tensor_get_i64(got, i) == ls_tensor_get_i64(want, i);
            if (!ok) {
                snprintf(msg, sizeof msg, "%s: element %lld is %.9g, expected %.9g", path, (long long)i, g, w);
                res = msg;
            }
        }
    }
    ls_tensor_unref(want);
    return res;
}

static void golden_paths(const char *sample, char *prog, char *dir, size_t cap)
{
    snprintf(prog, cap, "%ssamples/%s.pt2", tu_root(""), sample);
    snprintf(dir, cap, "%stests/golden/%s", tu_root(""), sample);
}

/* Runs p for `steps` steps on the golden inputs and compares every output (and state). */
/* Whether the golden folder holds states (kv_cache's step<k>_state_<target>.npy). */
static bool has_golden_states(const char *dir)
{
    DIR *d = opendir(dir);
    bool found = false;
    for (struct dirent *e; d && !found && (e = readdir(d)) != NULL;) found = strstr(e->d_name, "_state_") != NULL;
    if (d) closedir(d);
    return found;
}

static void check_program(const ls_program *p, const char *dir, const char *label, int steps)
{
    bool every_state = has_golden_states(dir);
    uint32_t states_compared = 0;
    char path[2200];
    ls_error err;
    ls_runner *r = ls_runner_new(p, &err);
    ck_assert_msg(r != NULL, "%s: %s", label, err.msg);
    uint32_t nin = ls_program_user_inputs(p, NULL, 0);
    const ls_node **ins = calloc(nin + 1, sizeof *ins);
    ls_program_user_inputs(p, ins, nin);
    for (int k = 0; k < steps; k++) {
        char pre[32] = "";
        if (steps > 1) snprintf(pre, sizeof pre, "step%d_", k);
        ls_value *vals = calloc(nin + 1, sizeof *vals);
        for (uint32_t i = 0; i < nin; i++) {
            ls_tensor *t;
            snprintf(path, sizeof path, "%s/%sin_%s.npy", dir, pre, ins[i]->name);
            ck_assert_msg(ls_npy_load(path, &t, &err) == 0, "%s: %s", label, err.msg);
            vals[i] = ls_value_tensor(t);
        }
        ls_value *outs;
        uint32_t nout;
        ck_assert_msg(ls_runner_run(r, vals, nin, &outs, &nout, &err) == 0, "%s step %d: %s", label, k, err.msg);
        uint32_t checked = 0;
        for (uint32_t o = 0; o < nout; o++) {
            snprintf(path, sizeof path, "%s/%sout_%u.npy", dir, pre, o);
            if (!exists(path)) continue;
            ck_assert_int_eq(outs[o].kind, LS_V_TENSOR);
            char *m = compare(outs[o].t, path);
            ck_assert_msg(m == NULL, "%s step %d output %u: %s", label, k, o, m);
            checked++;
        }
        ck_assert_msg(checked == nout, "%s: %u outputs, %u golden files", label, nout, checked);
        /* a state is the golden one of its target, also inside a delegate ("lowered_module_0/cache") */
        for (uint32_t s = 0; s < ls_runner_state_count(r); s++) {
            const char *name = ls_runner_state_name(r, s), *slash = strrchr(name, '/');
            snprintf(path, sizeof path, "%s/%sstate_%s.npy", dir, pre, slash ? slash + 1 : name);
            if (!every_state) continue;
            ck_assert_msg(exists(path), "%s step %d: no golden file for state %s", label, k, name);
            ck_assert_ptr_nonnull(ls_runner_state(r, s));
            states_compared++;
            char *m = compare(ls_runner_state(r, s), path);
            ck_assert_msg(m == NULL, "%s step %d state %s: %s", label, k, name, m);
        }
        pf_values_free(outs, nout);
        pf_values_free(vals, nin);
    }
    free(ins);
    ls_runner_free(r);
    if (every_state) ck_assert_msg(states_compared > 0, "%s: no state compared with the golden files", label);
}

static void run_golden(const char *sample, int steps)
{
    char prog[1024], dir[1024];
    golden_paths(sample, prog, dir, sizeof prog);
    ck_assert_msg(exists(prog) && exists(dir), "golden %s: %s or %s is missing (both are committed)", sample, prog, dir);
    ls_program *p = pf_load(prog);
    check_program(p, dir, sample, steps);
    ls_program_unref(p);
}

/* Lowering keeps the meaning: every step of the default pipeline gives the golden outputs and
 * states too (its delegates are the bundled backend's, preprocessed by to_backend). */
static void run_golden_lowered(const char *sample, int steps)
{
    char prog[1024], dir[1024], label[256];
    golden_paths(sample, prog, dir, sizeof prog);
    ck_assert_msg(exists(prog) && exists(dir), "golden %s: %s or %s is missing (both are committed)", sample, prog, dir);
    ls_program *p = pf_load(prog);
    ls_history h = {0};
    pf_lower(p, NULL, &h);
    int ran = 0;
    for (uint32_t i = 1; i < h.n; i++) {
        const ls_program *sp = h.steps[i].program;
        for (uint32_t k = 0; k < sp->n_subs; k++)
            ck_assert_msg(sp->subs[k].processed, "%s after %s: %s has no processed blob", sample, h.steps[i].pass,
                          sp->subs[k].name);
        snprintf(label, sizeof label, "%s after %s%s%s", sample, h.steps[i].pass, h.steps[i].detail ? " " : "",
                 h.steps[i].detail ? h.steps[i].detail : "");
        check_program(sp, dir, label, steps);
        ran++;
    }
    ck_assert_int_eq(ran, (int)h.n - 1);
    ls_history_free(&h);
    ls_program_unref(p);
}


START_TEST(golden_samples)
{
    for (int i = 0; i < PF_N_SAMPLES; i++) run_golden(pf_samples[i].name, pf_samples[i].steps);
}
END_TEST

START_TEST(golden_after_lowering)
{
    for (int i = 0; i < PF_N_SAMPLES; i++) run_golden_lowered(pf_samples[i].name, pf_samples[i].steps);
}
END_TEST

Suite *golden_suite(void)
{
    Suite *s = suite_create("golden");
    TCase *tc = tcase_create("samples");
    tcase_set_timeout(tc, 60);
    tcase_add_test(tc, golden_samples);
    tcase_add_test(tc, golden_after_lowering);
    suite_add_tcase(s, tc);
    return s;
}
