/* Screen tests of the partition graph (`g`) and the neighbourhood (`x`) screens, on samples
 * lowered in this process by the default pipeline (or with a backend profile): two_delegates at
 * its partition step (tags) and after to_backend (lowered modules), Enter on a box filtering the
 * graph pane to its nodes or opening the delegate; policy's graph scrolled across; the
 * neighbourhood of two_delegates' cos, recentred with Enter. */
#include <check.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "passes.h"
#include "progfixtures.h"
#include "testutil.h"
#include "tui.h"

/* Runs tests/screens/NAME.keys on SAMPLE lowered (with the backend profile, when given) at size
 * cols×rows, from the step the script's first :step names (the last one otherwise). */
static void run_sample(const char *sample, const char *backend, const char *name, int cols, int rows)
{
    ls_program *p = pf_load(tu_root(sample));
    ls_history h = {0};
    ls_pipeline_opts o;
    ls_pipeline_opts_init(&o);
    ls_error err = {0};
    if (backend) ck_assert_msg(ls_pipeline_opt(&o, "--backend", tu_root(backend), &err) == 1, "%s", err.msg);
    ck_assert_msg(ls_pipeline_run(p, &o, &h, &err) == 0, "%s", err.msg);
    ls_pipeline_opts_free(&o);
    h.path = ls_intern(sample);
    const char *dir = tu_tmpdir();
    setenv("LOWERSCOPE_DUMP_DIR", dir, 1);
    char keys[512];
    snprintf(keys, sizeof keys, "tests/screens/%s.keys", name);
    ls_tui_opts to = {.script = tu_root(keys), .rows = rows, .cols = cols, .headless = true};
    int rc = ls_tui_run(&h, &to, &err);
    ck_assert_msg(rc == 0, "ls_tui_run: %d %s", rc, err.msg);
    tu_compare_screens(dir, name);
    ls_history_free(&h);
    ls_program_unref(p);
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

START_TEST(screen_around)
{
    run_sample("samples/two_delegates.pt2", NULL, "around", 80, 30);
}
END_TEST

Suite *tui_graph_suite(void)
{
    Suite *s = suite_create("tui_graph");
    TCase *tc = tcase_create("screens");
    tcase_set_timeout(tc, 60);
    tcase_add_test(tc, screen_graph_two_delegates);
    tcase_add_test(tc, screen_graph_policy);
    tcase_add_test(tc, screen_around);
    suite_add_tcase(s, tc);
    return s;
}
