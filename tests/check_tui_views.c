/* Screen tests of the views of issue 18, on samples lowered in this process by the default
 * pipeline (or with a backend profile): the partition graph (`g`) of two_delegates at its
 * partition step (tags) and after to_backend (lowered modules), Enter on a box filtering the
 * graph pane to its nodes or opening the delegate, and of policy; the neighbourhood (`x`) of
 * two_delegates' cos, recentred with Enter; the compare screen (`:compare`) of shared_constant's
 * steps 3 and 6 and of its emit step with the .pte exported from it; the run overlay on a
 * lowered form that differs on purpose, with the first-divergence jump. */
#include <check.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "passes.h"
#include "progfixtures.h"
#include "testutil.h"
#include "tui.h"

static void run_sample_in(const char *sample, const char *backend, const char *name, int cols, int rows, const char *dir)
{
    pf_screens_file(tu_root(sample), sample, backend, name, cols, rows, dir);
}

static void run_sample(const char *sample, const char *backend, const char *name, int cols, int rows)
{
    pf_screens_file(tu_root(sample), sample, backend, name, cols, rows, NULL);
}

START_TEST(screen_graph_two_delegates)
{
    run_sample("samples/two_delegates.pt2", NULL, "graph_two", 80, 30);
}
END_TEST

START_TEST(screen_graph_policy)
{
    run_sample("samples/policy.pt2", NULL, "graph_policy", 100, 34);
}
END_TEST

/* tiny_llama at 80 columns: its delegate's details give way (bytes first) before its name, and
 * what shows is whole (it read "…e_0 1603n 139c 312.4K 14": the states' s cut off) */
START_TEST(screen_partitions_narrow)
{
    run_sample("samples/tiny_llama.pt2", NULL, "parts_narrow", 80, 24);
}
END_TEST

START_TEST(screen_around)
{
    run_sample("samples/two_delegates.pt2", NULL, "around", 80, 30);
}
END_TEST

START_TEST(screen_compare_steps)
{
    run_sample("samples/shared_constant.pt2", NULL, "compare_steps", 100, 24);
    char *why = tu_slurp(tu_root("tests/screens/compare_steps-why.expected"));
    ck_assert_ptr_nonnull(why);
    ck_assert_msg(strstr(why, "aten_atan2_default differs: an out variant on one side only"), "%s", why);
    free(why);
}
END_TEST

/* A step key on the compare screen aligns the new step (a second job on the alignment's thread,
 * view_compare.c): the screen is the one opening it there gives. */
START_TEST(screen_compare_follows_the_step)
{
    run_sample("samples/shared_constant.pt2", NULL, "compare_steps-moved", 100, 24);
    char *moved = tu_slurp(tu_root("tests/screens/compare_steps-moved.expected"));
    char *fresh = tu_slurp(tu_root("tests/screens/compare_steps-moved-fresh.expected"));
    ck_assert_ptr_nonnull(moved);
    ck_assert_ptr_nonnull(fresh);
    ck_assert_msg(strstr(moved, "Compare · step 3 fold_masks │ step 5 to_backend"), "%s", moved);
    ck_assert_msg(strstr(moved, "row 3 of 9"), "the selection stays on aten_atan2_default: %s", moved);
    /* all but the status line: opening the screen also says the counts there */
    char *moved_end = strrchr(moved, '\n'), *fresh_end = strrchr(fresh, '\n');
    ck_assert_ptr_nonnull(moved_end);
    ck_assert_ptr_nonnull(fresh_end);
    *moved_end = *fresh_end = 0;
    *strrchr(moved, '\n') = *strrchr(fresh, '\n') = 0;
    ck_assert_str_eq(moved, fresh);
    free(moved);
    free(fresh);
}
END_TEST

/* `:compare` without a step follows the left side as the step before it; a named step stays
 * (views/view_compare.c, label_step_before). */
START_TEST(screen_compare_the_step_before)
{
    run_sample("samples/shared_constant.pt2", NULL, "compare_before", 100, 24);
    static const struct {
        const char *file, *title;
    } want[] = {
        {"compare_before", "Compare · step 3 fold_masks │ step 2 partition (the step before)"},
        {"compare_before-left", "Compare · step 1 to_edge │ step 0 load (the step before)"},
        {"compare_before-zero", "Compare · step 0 load │ step 0 load (itself: step 0 has no step before it)"},
        {"compare_before-fixed", "Compare · step 5 to_backend │ step 5 to_backend · ~0 -0 +0 · the same step on both sides"},
    };
    for (size_t i = 0; i < sizeof want / sizeof want[0]; i++) {
        char path[256];
        snprintf(path, sizeof path, "tests/screens/%s.expected", want[i].file);
        char *s = tu_slurp(tu_root(path));
        ck_assert_ptr_nonnull(s);
        ck_assert_msg(strstr(s, want[i].title), "%s: %s", want[i].file, s);
        if (i == 3) ck_assert_msg(strstr(s, "— no difference"), "nothing to go to with ]: %s", s); /* not "] next difference" */
        free(s);
    }
}
END_TEST

/* The .pte the CLI exports from shared_constant, beside the .pt2's emit step. */
/* The same step lowered for another backend (:compare backend FILE), the twin of
 * `lowerscope diff --with-backend` (check_diff has the figures): 10 same, 2 changed (lowered_module_0 is
 * another backend's), 3 and 6
 * only on one side, the sub and div inside lowered_module_1 on the left. */
START_TEST(screen_compare_backend)
{
    const char *dir = tu_tmpdir();
    char cmd[8192];
    snprintf(cmd, sizeof cmd, "cp '%s' '%s/arith.json'", tu_root("samples/backends/arith.json"), dir);
    ck_assert_int_eq(system(cmd), 0);
    run_sample_in("samples/two_delegates.pt2", NULL, "compare_backend", 120, 30, dir);
    char *follows = tu_slurp(tu_root("tests/screens/compare_backend-follows.expected"));
    char *no_pass = tu_slurp(tu_root("tests/screens/compare_backend-no-pass.expected"));
    ck_assert_ptr_nonnull(follows);
    ck_assert_ptr_nonnull(no_pass);
    ck_assert_msg(strstr(follows, "Compare · step 2 partition │ arith.json, step 2 partition ·"), "%s", follows);
    ck_assert_msg(strstr(no_pass, "Compare · step 3 fold_masks │ arith.json, step 7 emit (no fold_masks step there)"), "%s",
                  no_pass);
    free(follows);
    free(no_pass);
}
END_TEST

START_TEST(screen_compare_pte)
{
    const char *dir = tu_tmpdir();
    char *out;
    int rc = tu_runf(&out, "export %s -o %s/sc.pte", tu_root("samples/shared_constant.pt2"), dir);
    ck_assert_msg(rc == 0, "%s", out);
    free(out);
    run_sample_in("samples/shared_constant.pt2", NULL, "compare_pte", 100, 24, dir);
}
END_TEST

/* two_delegates lowered, then its CPU cos made a sin on purpose (pf_diverging_history): after r,
 * the run screen names the first node that differs, the graph pane shows the run's columns, ]
 * goes to the cos and then to the delegate output that reads it, s sorts by difference. */
START_TEST(screen_overlay)
{
    ls_history h = {0};
    pf_diverging_history(&h, NULL);
    h.path = ls_intern("samples/two_delegates.pt2");
    pf_screens(&h, "overlay", 100, 30, NULL);
    ls_history_free(&h);
}
END_TEST

Suite *tui_views_suite(void)
{
    Suite *s = suite_create("tui_views");
    TCase *tc = tcase_create("screens");
    tcase_set_timeout(tc, 60);
    tcase_add_test(tc, screen_graph_two_delegates);
    tcase_add_test(tc, screen_graph_policy);
    tcase_add_test(tc, screen_around);
    tcase_add_test(tc, screen_partitions_narrow);
    tcase_add_test(tc, screen_compare_steps);
    tcase_add_test(tc, screen_compare_the_step_before);
    tcase_add_test(tc, screen_compare_follows_the_step);
    tcase_add_test(tc, screen_compare_backend);
    tcase_add_test(tc, screen_compare_pte);
    tcase_add_test(tc, screen_overlay);
    suite_add_tcase(s, tc);
    return s;
}
