/* Screen tests of ExecuTorch's devtools files in the UI: an ETDump over the .pte that ran and
 * over its ETRecord (the times in the graph pane's column and sort, the node pane, inside a
 * delegate), and the run screen of a bundled program running its cases. The files are the
 * devtools suites' (devtools_fixture.h), in a fresh folder, opened by the binary as a user would. */
#include <check.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "devtools_fixture.h"
#include "testutil.h"

/* Runs tests/screens/NAME.keys on `lowerscope ARGS` in dir (the files' folder), then compares. */
static void run_keys(const char *dir, const char *name, const char *args, int cols, int rows)
{
    char keys[512], size[32], cwd[4096];
    snprintf(keys, sizeof keys, "tests/screens/%s.keys", name);
    snprintf(size, sizeof size, "%dx%d", cols, rows);
    setenv("LOWERSCOPE_SCRIPT", tu_root(keys), 1);
    setenv("LOWERSCOPE_DUMP_DIR", dir, 1);
    setenv("LOWERSCOPE_SIZE", size, 1);
    unsetenv("NO_COLOR");
    ck_assert_ptr_nonnull(getcwd(cwd, sizeof cwd));
    ck_assert_int_eq(chdir(dir), 0);
    char *out;
    int rc = tu_runf(&out, "%s", args);
    ck_assert_int_eq(chdir(cwd), 0);
    unsetenv("LOWERSCOPE_SCRIPT");
    ck_assert_msg(rc == 0, "lowerscope %s exited %d: %s", args, rc, out);
    free(out);
    tu_compare_screens(dir, name);
}

/* The folder holding path, into buf. */
static const char *folder_of(const char *path, char *buf, size_t cap)
{
    snprintf(buf, cap, "%.*s", (int)(strrchr(path, '/') - path), path);
    return buf;
}

static char *screen(const char *dir, const char *file)
{
    char path[4200];
    snprintf(path, sizeof path, "%s/%s", dir, file);
    char *s = tu_slurp(path);
    ck_assert_msg(s != NULL, "%s was not saved", path);
    return s;
}

START_TEST(screen_etdump_over_the_pte)
{
    dt_fixture f;
    dt_fixture_make(&f);
    char buf[512];
    const char *dir = folder_of(f.pte_path, buf, sizeof buf);
    run_keys(dir, "etdump_pte", "two.pte --etdump two.etdp", 100, 30);
    char *s = screen(dir, "etdump_pte-open.screen");
    ck_assert_msg(tu_contains(s, "ETDump ×2") && tu_contains(s, "2 unmatched"), "%s", s);
    free(s);
    /* sorted by time: the longest event (the last instruction's) first */
    s = screen(dir, "etdump_pte-sorted.screen");
    ck_assert_msg(tu_contains(s, "by time"), "%s", s);
    free(s);
    s = screen(dir, "etdump_pte-delegate.screen");
    ck_assert_msg(tu_contains(s, "time      ") && tu_contains(s, "a run (2 runs, ETDump two.etdp)"), "%s", s);
    ck_assert_msg(tu_contains(s, "inside    ") && tu_contains(s, "over 6 nodes the delegate timed"), "%s", s);
    free(s);
    s = screen(dir, "etdump_pte-inside.screen");
    ck_assert_msg(tu_contains(s, "Graph of lowered_module_1") && tu_contains(s, "ETDump two.etdp, by the delegate"), "%s", s);
    free(s);
    dt_fixture_free(&f);
}
END_TEST

START_TEST(screen_etdump_over_the_etrecord)
{
    dt_fixture f;
    dt_fixture_make(&f);
    dt_fixture_etrecord(&f);
    char buf[512];
    const char *dir = folder_of(f.pte_path, buf, sizeof buf);
    run_keys(dir, "etdump_etrecord", "two.etrecord --etdump two.etdp", 100, 30);
    char *s = screen(dir, "etdump_etrecord-node.screen");
    ck_assert_msg(tu_contains(s, "step 1/1 to_backend") && tu_contains(s, "ETDump two.etdp"), "%s", s);
    free(s);
    dt_fixture_free(&f);
}
END_TEST

/* The recorded programs share no ids: each lowered module's nodes take those of the export's
 * nodes it took, so the compare screen says which module holds an export node. */
START_TEST(screen_compare_of_the_etrecord_steps)
{
    dt_fixture f;
    dt_fixture_make(&f);
    dt_fixture_etrecord(&f);
    char buf[512];
    const char *dir = folder_of(f.pte_path, buf, sizeof buf);
    run_keys(dir, "found_etrecord-compare", "two.etrecord", 120, 36);
    char *s = screen(dir, "found_etrecord-compare.screen");
    /* each export node a module took says which one: add/mul lowered_module_0, sub/div _1 */
    const char *names[] = {"add", "mul", "add_1", "mul_1", "add_2", "mul_2", "sub", "div", "sub_1", "div_1", "sub_2", "div_2"};
    for (int k = 0; k < 12; k++) {
        char want[200];
        snprintf(want, sizeof want, "inside lowered_module_%d                                 │+  %-22s", k < 6 ? 0 : 1,
                 names[k]);
        ck_assert_msg(tu_contains(s, want), "%s not in\n%s", want, s);
    }
    free(s);
    dt_fixture_free(&f);
}
END_TEST

START_TEST(screen_run_of_a_bundled_program)
{
    ls_bpte b;
    dt_bpte_make(&b);
    const char *path = dt_bpte_write(&b, NULL, NULL);
    char buf[512];
    const char *dir = folder_of(path, buf, sizeof buf);
    run_keys(dir, "bpte_run", "shared_constant.bpte", 100, 24);
    char *s = screen(dir, "bpte_run.screen");
    ck_assert_msg(tu_contains(s, "forward case 2: FAIL") && tu_contains(s, "2 of 3 cases passed"), "%s", s);
    ck_assert_msg(tu_contains(s, "output 1: element 1: expected 2.25, the method gave 1.75"), "%s", s);
    free(s);
    ls_bpte_free(&b);
}
END_TEST

/* The devtools screens on tests/corpus's files whose strings would drive a terminal (the ETDump
 * view over escapes.pte, the run screen of escapes.bpte): what is drawn holds none of those
 * bytes raw and shows them escaped, as the CLI does (check_corpus.c). */
START_TEST(screen_devtools_text_escaped)
{
    static const struct { const char *keys, *args, *screen, *want; } runs[] = {
        {"escapes_devtools-etdump", "escapes.pte --etdump escapes.etdp", "escapes_devtools-etdump.screen",
         "atan2\\x1b]0;title\\x07"},
        {"escapes_devtools-run", "escapes.bpte", "escapes_devtools-run.screen", "no method 'forward\\x1b]0;title\\x07"},
    };
    const char *dir = tu_tmpdir();
    for (int i = 0; i < 2; i++) {
        char keys[512], cwd[4096];
        snprintf(keys, sizeof keys, "tests/screens/%s.keys", runs[i].keys);
        setenv("LOWERSCOPE_SCRIPT", tu_root(keys), 1);
        setenv("LOWERSCOPE_DUMP_DIR", dir, 1);
        setenv("LOWERSCOPE_SIZE", "120x30", 1);
        ck_assert_ptr_nonnull(getcwd(cwd, sizeof cwd));
        ck_assert_int_eq(chdir(tu_root("tests/corpus")), 0);
        char *out;
        int rc = tu_runf(&out, "%s", runs[i].args);
        ck_assert_int_eq(chdir(cwd), 0);
        unsetenv("LOWERSCOPE_SCRIPT");
        ck_assert_msg(rc == 0, "lowerscope %s exited %d: %s", runs[i].args, rc, out);
        free(out);
        char *s = screen(dir, runs[i].screen);
        ck_assert_msg(!strchr(s, '\x1b') && !strstr(s, "\xc2\x9b") && !strstr(s, "\xe2\x80\xae"), "raw controls drawn:\n%s", s);
        ck_assert_msg(tu_contains(s, runs[i].want), "want '%s' in:\n%s", runs[i].want, s);
        free(s);
    }
}
END_TEST

Suite *tui_devtools_suite(void)
{
    Suite *s = suite_create("tui_devtools");
    TCase *tc = tcase_create("screens");
    tcase_set_timeout(tc, 120);
    tcase_add_test(tc, screen_devtools_text_escaped);
    tcase_add_test(tc, screen_etdump_over_the_pte);
    tcase_add_test(tc, screen_etdump_over_the_etrecord);
    tcase_add_test(tc, screen_run_of_a_bundled_program);
    tcase_add_test(tc, screen_compare_of_the_etrecord_steps);
    suite_add_tcase(s, tc);
    return s;
}
