/* Screen tests of the inside of XNNPACK delegates: Enter on the delegate call of a real file
 * (djl_conv.pte: the transpose to NHWC, the 3x3 convolution with its relu as output_min_max,
 * the transpose back) and of a sample lowered with --backend xnnpack and exported, each xnode a
 * row with its fields, its value's datatype and shape, the constants with their keys. */
#include <check.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "pte_test.h"
#include "testutil.h"

/* Runs the binary on FILE (a name inside dir, so the screens show no machine's path) with the
 * script tests/screens/NAME.keys at 110x44 and compares the screens it saves. */
static void run_file_script(const char *dir, const char *file, const char *name)
{
    char keys[512], cwd[4096];
    snprintf(keys, sizeof keys, "tests/screens/%s.keys", name);
    setenv("LOWERSCOPE_SCRIPT", tu_root(keys), 1);
    setenv("LOWERSCOPE_DUMP_DIR", dir, 1);
    setenv("LOWERSCOPE_SIZE", "110x44", 1);
    unsetenv("LOWERSCOPE_TERM");
    unsetenv("NO_COLOR");
    ck_assert_ptr_nonnull(getcwd(cwd, sizeof cwd));
    ck_assert_int_eq(chdir(dir), 0);
    char *out;
    int rc = tu_runf(&out, "%s", file);
    ck_assert_int_eq(chdir(cwd), 0);
    ck_assert_msg(rc == 0, "lowerscope exited %d: %s", rc, out);
    free(out);
    unsetenv("LOWERSCOPE_SCRIPT");
    tu_compare_screens(dir, name);
}

START_TEST(screen_xnnpack_real_file)
{
    if (!tu_shared("data/pte")) return;
    const char *dir = tu_tmpdir();
    size_t n;
    uint8_t *bytes = pt_load(pt_path("djl_conv", ".pte"), &n);
    ck_assert_ptr_nonnull(bytes);
    char path[600];
    snprintf(path, sizeof path, "%s/djl_conv.pte", dir);
    ls_error err;
    ck_assert_int_eq(ls_write_file_atomic(path, bytes, n, &err), 0);
    free(bytes);
    run_file_script(dir, "djl_conv.pte", "xnnpack_djl_conv");
}
END_TEST

START_TEST(screen_xnnpack_lowered_sample)
{
    const char *dir = tu_tmpdir();
    char *out;
    int rc = tu_runf(&out, "export %s --backend xnnpack -o %s/policy_xnnpack.pte", tu_root("samples/policy.pt2"), dir);
    ck_assert_msg(rc == 0, "%s", out);
    free(out);
    run_file_script(dir, "policy_xnnpack.pte", "xnnpack_policy");
}
END_TEST

Suite *tui_xnnpack_suite(void)
{
    Suite *s = suite_create("tui_xnnpack");
    TCase *tc = tcase_create("screens");
    tcase_set_timeout(tc, 60);
    tcase_add_test(tc, screen_xnnpack_real_file);
    tcase_add_test(tc, screen_xnnpack_lowered_sample);
    suite_add_tcase(s, tc);
    return s;
}
