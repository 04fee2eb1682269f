/* The Makefile finds the test suites by folder (build/suites.inc, made from tests/check_*.c):
 * adding or removing a suite's file must change the list, without a `make clean`. Checked on
 * a scratch copy of the Makefile with two stand-in suites. */
#include <check.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

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

Suite *makefile_suite(void)
{
    Suite *s = suite_create("makefile");
    TCase *tc = tcase_create("suites");
    tcase_add_test(tc, suites_follow_the_test_files);
    suite_add_tcase(s, tc);
    return s;
}
