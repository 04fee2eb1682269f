/* Screen tests of real .pte files in the UI (tests/screens/pte_*.keys): a .pte opens as the
 * file holds it at step 0 alone; an opaque delegate (QNN, OpenVINO) is a partition whose node
 * pane shows what lowerscope can say of its blob; M and :method switch methods; :relower lowers
 * it again; and every real file opens at step 0 in the UI. Runs the binary on
 * ../shared/data/pte (skipped without it). */
#include <check.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "pte_test.h"
#include "testutil.h"

static void run_pte_script(const char *file, const char *name)
{
    const char *path = pt_path(file, ".pte");
    if (!path) return;
    char p[4200];
    snprintf(p, sizeof p, "%s", path);
    const char *dir = tu_tmpdir();
    char keys[512];
    snprintf(keys, sizeof keys, "tests/screens/%s.keys", name);
    setenv("LOWERSCOPE_SCRIPT", tu_root(keys), 1);
    setenv("LOWERSCOPE_DUMP_DIR", dir, 1);
    setenv("LOWERSCOPE_SIZE", "80x24", 1);
    unsetenv("LOWERSCOPE_TERM");
    unsetenv("NO_COLOR");
    char *out;
    int rc = tu_runf(&out, "%s", p);
    ck_assert_msg(rc == 0, "lowerscope exited %d: %s", rc, out);
    free(out);
    unsetenv("LOWERSCOPE_SCRIPT");
    tu_compare_screens(dir, name);
}

START_TEST(screen_pte_qnn)
{
    run_pte_script("et_stories260k_hybrid_llama_qnn", "pte_qnn");
    if (!pt_path("et_stories260k_hybrid_llama_qnn", ".pte")) return;
    /* :method alone names the methods (it said "lowerscope info lists them"); Tab completes them */
    char *m = tu_slurp(tu_root("tests/screens/pte_qnn-methods.expected"));
    ck_assert_ptr_nonnull(m);
    ck_assert_msg(strstr(m, "method NAME: which method? kv_forward, prefill_forward") && strstr(m, "(29; Tab lists them)"), "%s", m);
    free(m);
    m = tu_slurp(tu_root("tests/screens/pte_qnn-method-tab.expected"));
    ck_assert_ptr_nonnull(m);
    ck_assert_msg(strstr(m, ":method get_max_"), "%s", m);
    free(m);
}
END_TEST

START_TEST(screen_pte_parts)
{
    run_pte_script("djl_openvino_tiny", "pte_parts");
}
END_TEST

START_TEST(screen_pte_xor)
{
    run_pte_script("et_android_xor", "pte_xor");
}
END_TEST

/* Every real file opens in the UI at step 0 of 0, its method in the header; djl_corrupt and the
 * .ptd files are refused before the UI starts, named by what they are. */
START_TEST(every_real_file_opens_at_step_0)
{
    if (!tu_shared("data/pte")) return;
    const char *dir = tu_tmpdir();
    char keys[4200];
    snprintf(keys, sizeof keys, "%s/open.keys", dir);
    ls_error err;
    const char *script = ":save-display open.screen\n";
    ck_assert_int_eq(ls_write_file_atomic(keys, script, strlen(script), &err), 0);
    setenv("LOWERSCOPE_SCRIPT", keys, 1);
    setenv("LOWERSCOPE_DUMP_DIR", dir, 1);
    setenv("LOWERSCOPE_SIZE", "100x30", 1);
    for (size_t i = 0; i < PT_NREAL; i++) {
        char path[4200], screen[4200];
        snprintf(path, sizeof path, "%s", pt_path(pt_real_files[i], ".pte"));
        snprintf(screen, sizeof screen, "%s/open.screen", dir);
        remove(screen);
        char *out;
        int rc = tu_runf(&out, "%s", path);
        ck_assert_msg(rc == 0, "%s: exit %d: %s", pt_real_files[i], rc, out);
        free(out);
        char *s = tu_slurp(screen);
        ck_assert_msg(s && tu_contains(s, "step 0/0 load") && tu_contains(s, "Passes · 1 step") && tu_contains(s, " · "),
                      "%s:\n%s", pt_real_files[i], s ? s : "(no screen)");
        free(s);
    }
    unsetenv("LOWERSCOPE_SCRIPT");
    const char *refused[][2] = {{"djl_corrupt", ".pte"}, {"et_android_xor", ".ptd"}, {"rs_data_map__default_external_constant", ".ptd"}};
    for (int k = 0; k < 3; k++) {
        char *out;
        ck_assert_int_eq(tu_runf(&out, "%s", pt_path(refused[k][0], refused[k][1])), 2);
        ck_assert_msg(tu_contains(out, k ? "external data file (.ptd" : "not an ExecuTorch program"), "%s", out);
        free(out);
    }
}
END_TEST

Suite *tui_pte_suite(void)
{
    Suite *s = suite_create("tui_pte");
    TCase *tc = tcase_create("tui_pte");
    tcase_set_timeout(tc, 120);
    tcase_add_test(tc, screen_pte_qnn);
    tcase_add_test(tc, screen_pte_parts);
    tcase_add_test(tc, screen_pte_xor);
    tcase_add_test(tc, every_real_file_opens_at_step_0);
    suite_add_tcase(s, tc);
    return s;
}
