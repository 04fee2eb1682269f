/* One Check runner for every suite: the Makefile collects each tests/check_*.c that defines
 * "Suite *<name>_suite(void)" into suites.inc, so adding a suite needs no edit here. */
#include <check.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "common.h"

#define LS_SUITE(name) Suite *name##_suite(void);
#include "suites.inc"
#undef LS_SUITE

/* What the tests recorded skipping (testutil.h, tu_skip): per reason, how many tests and which,
 * printed under Check's summary. */
static void print_skips(const char *log)
{
    uint8_t *data;
    size_t size;
    ls_error err;
    if (ls_read_file(log, 1 << 24, &data, &size, &err) != 0) {
        printf("skipped: none (every test ran all it checks)\n");
        return;
    }
    /* lines "test\twhy", each test counted once per reason */
    LS_VEC(const char *) why = {0}, test = {0};
    for (char *line = (char *)data; line && *line;) {
        char *end = strchr(line, '\n'), *tab = strchr(line, '\t');
        if (end) *end = 0;
        if (tab && (!end || tab < end)) {
            *tab = 0;
            const char *t = ls_intern(line), *w = ls_intern(tab + 1);
            bool seen = false;
            for (uint32_t i = 0; i < why.n && !seen; i++) seen = why.v[i] == w && test.v[i] == t;
            if (!seen) {
                ls_vec_push(&why, w);
                ls_vec_push(&test, t);
            }
        }
        line = end ? end + 1 : NULL;
    }
    for (uint32_t i = 0; i < why.n; i++) {
        bool first = true;
        for (uint32_t k = 0; k < i && first; k++) first = why.v[k] != why.v[i];
        if (!first) continue;
        uint32_t n = 0;
        ls_buf names = {0};
        for (uint32_t k = i; k < why.n; k++)
            if (why.v[k] == why.v[i]) ls_buf_printf(&names, "%s%s", n++ ? ", " : "", test.v[k]);
        printf("skipped: %u test%s, because %s: %s\n", n, n == 1 ? "" : "s", why.v[i], names.s);
        ls_buf_free(&names);
    }
    free(why.v);
    free(test.v);
    free(data);
}

int main(void)
{
    /* the tests' skips, collected from their child processes */
    char log[64];
    snprintf(log, sizeof log, "/tmp/lowerscope-skips-%d", (int)getpid());
    unlink(log);
    setenv("LS_SKIP_LOG", log, 1);
    SRunner *sr = srunner_create(NULL);
#define LS_SUITE(name) srunner_add_suite(sr, name##_suite());
#include "suites.inc"
#undef LS_SUITE
    srunner_run_all(sr, CK_ENV);
    int failed = srunner_ntests_failed(sr);
    srunner_free(sr);
    print_skips(log);
    unlink(log);
    ls_intern_release_all();
    return failed == 0 ? EXIT_SUCCESS : EXIT_FAILURE;
}
