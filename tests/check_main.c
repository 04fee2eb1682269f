/* One Check runner for every suite: the Makefile collects each tests/check_*.c that defines
 * "Suite *<name>_suite(void)" into suites.inc, so adding a suite needs no edit here. */
#include <check.h>
#include <stdlib.h>

#include "common.h"

#define LS_SUITE(name) Suite *name##_suite(void);
#include "suites.inc"
#undef LS_SUITE

int main(void)
{
    SRunner *sr = srunner_create(NULL);
#define LS_SUITE(name) srunner_add_suite(sr, name##_suite());
#include "suites.inc"
#undef LS_SUITE
    srunner_run_all(sr, CK_ENV);
    int failed = srunner_ntests_failed(sr);
    srunner_free(sr);
    ls_intern_release_all();
    return failed == 0 ? EXIT_SUCCESS : EXIT_FAILURE;
}
