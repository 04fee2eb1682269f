/* The bundled backend on the real samples, lowered by the pipeline and run by the interpreter:
 * kv_cache's cache fills inside the delegate over three runs (the runner names it
 * lowered_module_0/cache) and equals the un-lowered program's buffer; constant_mask fails with
 * MLX's Gather message without fold_masks, and runs with it, matching the un-lowered program. */
#include <check.h>
#include <math.h>
#include <stdlib.h>
#include <string.h>

#include "backend.h"
#include "bundled_blob.h"
#include "history.h"
#include "progfixtures.h"
#include "runtime.h"
#include "testutil.h"

/* The program after the last pass. Submodules to_backend left without a blob (when it did not
 * find the backend) are preprocessed here, as to_backend does, in a copy. */
static ls_program *lower(const char *sample, const char *pipeline)
{
    ls_program *p = pf_load(tu_root(sample));
    ls_history h = {0};
    pf_lower(p, pipeline, &h);
    uint32_t last = h.n - 1; /* the default pipeline goes on with to_executorch's steps */
    while (last > 0 && strcmp(h.steps[last].pass, "to_backend") != 0) last--;
    ck_assert_str_eq(h.steps[last].pass, "to_backend");
    ls_program *out = ls_program_copy(h.steps[last].program);
    ls_history_free(&h);
    ls_program_unref(p);
    ck_assert_uint_ge(out->n_subs, 1);
    for (uint32_t i = 0; i < out->n_subs; i++) {
        ls_submodule *s = &out->subs[i];
        ck_assert_str_eq(s->backend_id, "BundledBackend");
        ck_assert_msg(s->processed != NULL, "%s: to_backend left no processed blob", s->name); /* to_backend's work */
    }
    return out;
}

static void assert_close(const ls_tensor *a, const ls_tensor *b, const char *what)
{
    ck_assert_msg(a->dtype == b->dtype && a->numel == b->numel && a->ndim == b->ndim, "%s: shapes differ", what);
    for (int64_t i = 0; i < a->numel; i++) {
        double x = ls_tensor_get_f64(a, i), y = ls_tensor_get_f64(b, i);
        ck_assert_msg(fabs(x - y) <= 1e-5 * (1 + fabs(y)), "%s[%lld]: %g, expected %g", what, (long long)i, x, y);
    }
}

static ls_tensor *state_named(const ls_runner *r, const char *name)
{
    for (uint32_t i = 0; i < ls_runner_state_count(r); i++)
        if (strcmp(ls_runner_state_name(r, i), name) == 0) return ls_runner_state(r, i);
    ck_abort_msg("no state %s", name);
    return NULL;
}

/* Runs both programs on the same seeded inputs and compares the user outputs. */
static void run_both(ls_runner *ref, ls_runner *low, const ls_program *ref_prog, int64_t step)
{
    ls_error err;
    ls_value *in, *a, *b;
    uint32_t n_in, na, nb;
    ck_assert_msg(ls_make_inputs(ref_prog, 7, step, &in, &n_in, &err) == 0, "%s", err.msg);
    ck_assert_msg(ls_runner_run(ref, in, n_in, &a, &na, &err) == 0, "%s", err.msg);
    ck_assert_msg(ls_runner_run(low, in, n_in, &b, &nb, &err) == 0, "step %lld: %s", (long long)step, err.msg);
    ck_assert_uint_eq(na, nb);
    for (uint32_t k = 0; k < na; k++) {
        ck_assert_int_eq(a[k].kind, b[k].kind);
        if (a[k].kind == LS_V_TENSOR) assert_close(b[k].t, a[k].t, "output");
    }
    pf_values_free(in, n_in);
    pf_values_free(a, na);
    pf_values_free(b, nb);
}

START_TEST(kv_cache_fills_inside_the_delegate)
{
    ls_program *ref_prog = pf_load(tu_root("samples/kv_cache.pt2"));
    ls_program *low_prog = lower("samples/kv_cache.pt2", NULL);
    ls_runner *ref = pf_runner(ref_prog), *low = pf_runner(low_prog);
    ck_assert_uint_eq(ls_runner_state_count(low), 1); /* the delegate's only: the top level has none */
    ck_assert_str_eq(ls_runner_state_name(low, 0), "lowered_module_0/cache");
    for (int64_t step = 0; step < 3; step++) {
        run_both(ref, low, ref_prog, step);
        const ls_tensor *mine = state_named(low, "lowered_module_0/cache"), *want = state_named(ref, "cache");
        assert_close(mine, want, "cache");
        ck_assert_int_eq(mine->ndim, 2);
        int64_t rows = mine->sizes[0], cols = mine->sizes[1];
        for (int64_t r = 0; r < rows; r++) { /* rows 0..step written, the rest still zero */
            bool any = false;
            for (int64_t c = 0; c < cols; c++) any |= ls_tensor_get_f64(mine, r * cols + c) != 0;
            ck_assert_msg(any == (r <= step), "step %lld: row %lld %s", (long long)step, (long long)r,
                          any ? "written too early" : "not written");
        }
    }
    ls_runner_free(ref);
    ls_runner_free(low);
    ls_program_unref(ref_prog);
    ls_program_unref(low_prog);
}
END_TEST

START_TEST(constant_mask_needs_fold_masks)
{
    ls_program *ref_prog = pf_load(tu_root("samples/constant_mask.pt2"));
    ls_error err;

    ls_program *unfolded = lower("samples/constant_mask.pt2", "to_edge,constant_prop,partition,duplicate_constants,to_backend");
    ls_runner *r = pf_runner(unfolded);
    ls_value *in, *out;
    uint32_t n_in, n_out;
    ck_assert_msg(ls_make_inputs(ref_prog, 7, 0, &in, &n_in, &err) == 0, "%s", err.msg);
    ck_assert_int_eq(ls_runner_run(r, in, n_in, &out, &n_out, &err), -1);
    ck_assert_msg(tu_contains(err.msg, "[Gather] Boolean indices not supported"), "%s", err.msg);
    ck_assert_msg(tu_contains(err.msg, "BundledBackend: lowered_module_0: node aten_index_tensor"), "%s", err.msg);
    pf_values_free(in, n_in);
    ls_runner_free(r);
    ls_program_unref(unfolded);

    ls_program *folded = lower("samples/constant_mask.pt2", NULL);
    ls_runner *ref = pf_runner(ref_prog), *low = pf_runner(folded);
    for (int64_t step = 0; step < 2; step++) run_both(ref, low, ref_prog, step);
    ls_runner_free(ref);
    ls_runner_free(low);
    ls_program_unref(folded);
    ls_program_unref(ref_prog);
}
END_TEST

Suite *bundled_samples_suite(void)
{
    Suite *s = suite_create("bundled_samples");
    TCase *tc = tcase_create("samples");
    tcase_set_timeout(tc, 60);
    tcase_add_test(tc, kv_cache_fills_inside_the_delegate);
    tcase_add_test(tc, constant_mask_needs_fold_masks);
    suite_add_tcase(s, tc);
    return s;
}
