/* Screen tests of the nine defects of issue 18, each a script of keys on a sample lowered in
 * this process (tests/screens/defect_*.keys):
 *   1 a filter keeps itself and moves the selection into it (tiny_llama with the arith profile at
 *     its partition step: f cpu, Enter on the CPU partition, :filter zzz, a jump out of it);
 *   2 columns share the width by content, a long name keeps its end, > scrolls (tiny_llama at
 *     200 columns; ExecuTorch's KeywordSpotting .pte, whose ops are all cortex_m::, when
 *     ../shared is there);
 *   3 a search counts its matches (3/17), says when it wraps, searches the focused pane (the
 *     changes pane too), and n is never the next step;
 *   4 the delegation table groups the CPU's nodes by reason (the core's groups), naming what the
 *     backend took instead, Enter lists a group; runs of alike report sentences fold, Enter unfolds;
 *   5 the node pane: a changed node's was:, held by's column headers, both users under
 *     users (2), a symbolic size as u0 (constant_mask);
 *   6 the : prompt's history (Up/Down) and Tab completion of commands, node names and steps;
 *   7 TERM=vt100 or a locale that is not UTF-8: ASCII only;
 *   8 a state tensor by rows on the run screen (kv_cache's cache after three runs);
 *   9 1-5 jump to a pane, the status line says row 3 of 40. */
#include <check.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "passes.h"
#include "progfixtures.h"
#include "testutil.h"
#include "tui.h"

static void run_file(const char *path, const char *backend, const char *name, int cols, int rows)
{
    const char *slash = strrchr(path, '/');
    pf_screens_file(path, slash ? slash + 1 : path, backend, name, cols, rows, NULL);
}

static void run_sample(const char *sample, const char *backend, const char *name, int cols, int rows)
{
    char rel[256];
    snprintf(rel, sizeof rel, "samples/%s.pt2", sample);
    run_file(tu_root(rel), backend, name, cols, rows);
}

START_TEST(defect1_filter_keeps_itself)
{
    run_sample("tiny_llama", "samples/backends/arith.json", "defect_filter", 100, 30);
}
END_TEST

START_TEST(defect2_columns_by_content)
{
    run_sample("tiny_llama", NULL, "defect_columns", 200, 24);
    const char *kws = tu_shared("data/pte/et_arduino_KeywordSpotting.pte");
    if (kws) run_file(kws, NULL, "defect_columns_kws", 200, 24);
}
END_TEST

START_TEST(defect3_search_counts_and_wraps)
{
    run_sample("two_delegates", NULL, "defect_search", 80, 24);
}
END_TEST

START_TEST(defect4_groups_and_folds)
{
    run_sample("tiny_llama", "samples/backends/arith.json", "defect_table", 100, 30);
    run_sample("two_delegates", NULL, "defect_fold", 80, 40);
}
END_TEST

START_TEST(defect5_node_pane)
{
    run_sample("shared_constant", NULL, "defect_node", 100, 50);
    run_sample("constant_mask", NULL, "defect_symbolic", 100, 24);
}
END_TEST

START_TEST(defect6_prompt_history_and_completion)
{
    run_sample("shared_constant", NULL, "defect_prompt", 80, 24);
}
END_TEST

START_TEST(defect7_ascii)
{
    setenv("LOWERSCOPE_TERM", "vt100", 1);
    run_sample("two_delegates", NULL, "defect_ascii", 80, 24);
    unsetenv("LOWERSCOPE_TERM");
    setenv("LOWERSCOPE_LOCALE", "C", 1); /* a locale that is not UTF-8, on a terminal that could */
    run_sample("two_delegates", NULL, "defect_ascii_locale", 80, 24);
    unsetenv("LOWERSCOPE_LOCALE");
}
END_TEST

START_TEST(defect8_state_by_rows)
{
    run_sample("kv_cache", NULL, "defect_state", 80, 30);
}
END_TEST

START_TEST(defect9_pane_jumps_and_position)
{
    run_sample("two_delegates", NULL, "defect_panes", 80, 24);
}
END_TEST

Suite *tui_defects_suite(void)
{
    Suite *s = suite_create("tui_defects");
    TCase *tc = tcase_create("screens");
    tcase_set_timeout(tc, 120);
    tcase_add_test(tc, defect1_filter_keeps_itself);
    tcase_add_test(tc, defect2_columns_by_content);
    tcase_add_test(tc, defect3_search_counts_and_wraps);
    tcase_add_test(tc, defect4_groups_and_folds);
    tcase_add_test(tc, defect5_node_pane);
    tcase_add_test(tc, defect6_prompt_history_and_completion);
    tcase_add_test(tc, defect7_ascii);
    tcase_add_test(tc, defect8_state_by_rows);
    tcase_add_test(tc, defect9_pane_jumps_and_position);
    suite_add_tcase(s, tc);
    return s;
}
