/* The Makefile finds the test suites by folder (build/suites.inc, made from tests/check_*.c):
 * adding or removing a suite's file must change the list, without a `make clean`. Checked on
 * a scratch copy of the Makefile with two stand-in suites. And the test runner says what it
 * skipped: without ../shared, how many tests and why, beside Check's summary. */
#include <check.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "common.h"
#include "testutil.h"

static void put(const char *dir, const char *rel, const char *text)
{
    char path[1024];
    snprintf(path, sizeof path, "%s/%s", dir, rel);
    FILE *f = fopen(path, "w");
    ck_assert_msg(f != NULL, "cannot write %s", path);
    fputs(text, f);
    fclose(f);
}

static int make_suites(const char *dir, char **list)
{
    char cmd[2048];
    snprintf(cmd, sizeof cmd, "make -s -C %s build/suites.inc >/dev/null 2>&1", dir);
    int rc = system(cmd);
    char path[1024];
    snprintf(path, sizeof path, "%s/build/suites.inc", dir);
    *list = tu_slurp(path);
    return rc;
}

START_TEST(suites_follow_the_test_files)
{
    if (!tu_have_tool("make")) return;
    const char *dir = tu_tmpdir();
    char cmd[4096];
    snprintf(cmd, sizeof cmd, "mkdir -p %s/tests/fuzz && cp %s %s/Makefile && cp %s %s/tests/fuzz/fuzz.mk", dir,
             tu_root("Makefile"), dir, tu_root("tests/fuzz/fuzz.mk"), dir);
    ck_assert_int_eq(system(cmd), 0);
    put(dir, "tests/check_alpha.c", "Suite *alpha_suite(void)\n{\n    return 0;\n}\n");
    put(dir, "tests/check_beta.c", "Suite *beta_suite(void)\n{\n    return 0;\n}\n");
    char *list;
    ck_assert_int_eq(make_suites(dir, &list), 0);
    ck_assert_msg(list && strstr(list, "LS_SUITE(alpha)") && strstr(list, "LS_SUITE(beta)"), "%s", list ? list : "(none)");
    free(list);
    /* a suite removed: the list loses it (the link would fail on the missing function) */
    snprintf(cmd, sizeof cmd, "%s/tests/check_beta.c", dir);
    ck_assert_int_eq(remove(cmd), 0);
    ck_assert_int_eq(make_suites(dir, &list), 0);
    ck_assert_msg(list && strstr(list, "LS_SUITE(alpha)") && !strstr(list, "LS_SUITE(beta)"), "%s", list ? list : "(none)");
    free(list);
    /* one added: the list gains it */
    put(dir, "tests/check_gamma.c", "Suite *gamma_suite(void)\n{\n    return 0;\n}\n");
    ck_assert_int_eq(make_suites(dir, &list), 0);
    ck_assert_msg(list && strstr(list, "LS_SUITE(gamma)"), "%s", list ? list : "(none)");
    free(list);
}
END_TEST

/* The runner itself (this binary) on one suite that reads ../shared, with LS_SHARED pointing
 * nowhere: Check's summary passes, and the line after it counts the skips and says why. */
static char *run_suite_without_shared(const char *suite, const char *shared)
{
    char self[4096];
    ssize_t n = readlink("/proc/self/exe", self, sizeof self - 1);
    ck_assert_int_gt(n, 0);
    self[n] = 0;
    char cmd[8192];
    snprintf(cmd, sizeof cmd, "CK_RUN_SUITE=%s CK_VERBOSITY=normal LS_SHARED=%s '%s' 2>&1", suite, shared, self);
    FILE *p = popen(cmd, "r");
    ck_assert_ptr_nonnull(p);
    ls_buf b = {0};
    char chunk[4096];
    size_t got;
    while ((got = fread(chunk, 1, sizeof chunk, p)) > 0) ls_buf_putn(&b, chunk, got);
    ck_assert_int_eq(pclose(p), 0);
    return b.s;
}

START_TEST(the_runner_says_what_it_skipped)
{
    char *out = run_suite_without_shared("ptd", "/nonexistent-shared");
    ck_assert_msg(tu_contains(out, "100%: Checks: "), "%s", out);
    const char *line = strstr(out, "skipped: ");
    ck_assert_msg(line != NULL, "no skip summary:\n%s", out);
    unsigned n = 0;
    ck_assert_msg(sscanf(line, "skipped: %u test", &n) == 1 && n > 0, "%s", out);
    ck_assert_msg(tu_contains(line, "because ../shared is absent (LS_SHARED=/nonexistent-shared)"), "%s", out);
    free(out);
    if (tu_shared("data/pte")) { /* with it, nothing of that suite skips */
        out = run_suite_without_shared("ptd", tu_shared(""));
        ck_assert_msg(tu_contains(out, "skipped: none"), "%s", out);
        free(out);
    }
}
END_TEST

/* Plain `make` builds lowerscope (the header's first line): the default goal is `all`, not
 * whichever target the file happens to name first. Read from make's database, without building. */
START_TEST(plain_make_builds_lowerscope)
{
    if (!tu_have_tool("make")) {
        tu_skip("no make");
        return;
    }
    char cmd[2048];
    snprintf(cmd, sizeof cmd, "make -s -p -q -f %s FORCE 2>/dev/null", tu_root("Makefile"));
    FILE *f = popen(cmd, "r");
    ck_assert_ptr_nonnull(f);
    char line[4096], goal[4096] = "";
    while (fgets(line, sizeof line, f))
        if (strncmp(line, ".DEFAULT_GOAL := ", 17) == 0) snprintf(goal, sizeof goal, "%.*s", (int)strcspn(line + 17, "\n"), line + 17);
    pclose(f);
    ck_assert_msg(goal[0], "make printed no default goal");
    ck_assert_str_eq(goal, "all");
}
END_TEST

Suite *makefile_suite(void)
{
    Suite *s = suite_create("makefile");
    TCase *tc = tcase_create("suites");
    tcase_add_test(tc, suites_follow_the_test_files);
    tcase_add_test(tc, the_runner_says_what_it_skipped);
    tcase_add_test(tc, plain_make_builds_lowerscope);
    /* make reads the whole Makefile and its dependency files (-p -q): about 2 s, past Check's
     * default of 4 s when the machine is busy (it once timed out there) */
    tcase_set_timeout(tc, 60);
    suite_add_tcase(s, tc);
    return s;
}
