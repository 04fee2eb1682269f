/* Screen tests of defects found by using the UI as a newcomer would (issue 18's testing round),
 * one script each in tests/screens/found_*.keys. */
#include <check.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "progfixtures.h"
#include "testutil.h"

static void run_sample(const char *sample, const char *backend, const char *name, int cols, int rows)
{
    pf_screens_file(tu_root(sample), sample, backend, name, cols, rows, NULL);
}

/* The partition graph of two_delegates: a search hit in a row of several boxes selects the box
 * the match is in (it selected the row's first box, and Enter filtered to another island). */
START_TEST(screen_graph_search_in_a_row)
{
    run_sample("samples/two_delegates.pt2", NULL, "found_graph-search", 100, 30);
}
END_TEST

/* The UI started on a pipe (stdout is one here): it says it needs a terminal and exits 2, with no
 * escape sequence in the pipe (it drew into it, and with stdin at end-of-file spun forever). */
START_TEST(ui_needs_a_terminal)
{
    unsetenv("LOWERSCOPE_SCRIPT");
    char *out;
    int rc = tu_runf(&out, "%s", tu_root("samples/shared_constant.pt2"));
    ck_assert_msg(rc == 2, "exit %d: %s", rc, out);
    ck_assert_msg(tu_contains(out, "needs a terminal") && tu_contains(out, "is not one"), "%s", out);
    ck_assert_msg(!strchr(out, '\x1b'), "escape sequences on a pipe: %s", out);
    free(out);
    /* bad input is still said first */
    rc = tu_runf(&out, "%s --step nope", tu_root("samples/shared_constant.pt2"));
    ck_assert_msg(rc == 2 && tu_contains(out, "--step nope: no such step"), "exit %d: %s", rc, out);
    free(out);
}
END_TEST

/* At 200 columns the partitions pane shows each partition's backend, as docs/tui.md says (the
 * pane was never wide enough for the format that had them). */
START_TEST(screen_partitions_backends)
{
    run_sample("samples/two_delegates.pt2", "samples/backends/arith.json", "found_parts-wide", 200, 30);
}
END_TEST

/* tiny_llama for ArithBackend at 80 columns: the partition graph's title keeps the bytes coming
 * back from the delegates (it read '12.8 KiB to them, 11' with the step's name before them). */
START_TEST(screen_partgraph_title)
{
    run_sample("samples/tiny_llama.pt2", "samples/backends/arith.json", "found_partgraph-title", 80, 24);
}
END_TEST

/* shared_constant's step 2 beside step 5: the compare screen compares top levels, says so in its
 * title, and the add and mul only on the left say they are inside lowered_module_0 on the right
 * (they read as removed). */
START_TEST(screen_compare_top_level)
{
    run_sample("samples/shared_constant.pt2", NULL, "found_compare-sub", 100, 24);
}
END_TEST

/* :compare FILE [STEP], whose load runs on the compare job's thread: a file that does not load,
 * and a step it does not have, each say so and close the screen (a first version of the job kept
 * the second's history without its alignment, and crashed); a good one after them opens. */
START_TEST(screen_compare_errors)
{
    const char *dir = tu_tmpdir();
    char cmd[8192];
    snprintf(cmd, sizeof cmd, "cp '%s' '%s/bad.json' && cp '%s' '%s/sc.pt2'", tu_root("tests/corpus/invalid.json"), dir,
             tu_root("samples/shared_constant.pt2"), dir);
    ck_assert_int_eq(system(cmd), 0);
    pf_screens_file(tu_root("samples/shared_constant.pt2"), "samples/shared_constant.pt2", NULL, "found_compare-errors",
                    100, 24, dir);
}
END_TEST

/* tiny_llama's embedding weight in the node pane: "held by"'s columns as wide as their entries
 * (p_tok_embeddings_weight ran into its target, 18 columns being all a placeholder had). */
START_TEST(screen_held_by_columns)
{
    run_sample("samples/tiny_llama.pt2", NULL, "found_held-by", 120, 50);
}
END_TEST

/* < and > on screens of text and in the node pane: the run screen of quantized_mlp lowered for
 * XNNPACK shows its outputs' values past 80 columns (the keys did nothing there). */
START_TEST(screen_scroll_text)
{
    run_sample("samples/quantized_mlp.pt2", "xnnpack", "found_scroll", 80, 24);
}
END_TEST

/* A .pte with a view exir elided under an operator lowerscope does not know (KeywordSpotting's
 * quantized_linear): the view is its input, so the CPU is one island from input to output. */
START_TEST(screen_graph_through_an_elided_view)
{
    const char *kws = tu_shared("data/pte/et_arduino_KeywordSpotting.pte");
    if (!kws) return;
    pf_screens_file(kws, "et_arduino_KeywordSpotting", NULL, "found_kws-graph", 80, 24, NULL);
}
END_TEST

/* The partition graph at 200 columns: boxes as wide as their lines (to 56), narrowed again on a
 * resize with the same box selected. */
START_TEST(screen_partgraph_wide_boxes)
{
    run_sample("samples/policy.pt2", NULL, "found_partgraph-wide", 200, 40);
}
END_TEST

/* The delegation table of a .pte with two delegates: a column per lowered module, each headed
 * by its whole name. */
START_TEST(screen_table_columns_by_content)
{
    const char *dir = tu_tmpdir();
    char *out, path[4200];
    int rc = tu_runf(&out, "export %s -o %s/two.pte", tu_root("samples/two_delegates.pt2"), dir);
    ck_assert_msg(rc == 0, "%s", out);
    free(out);
    snprintf(path, sizeof path, "%s/two.pte", dir);
    pf_screens_file(path, "two.pte", NULL, "found_table-columns", 80, 24, NULL);
}
END_TEST

/* The neighbourhood of a delegate call: the edges to its getitems say the item each takes. */
START_TEST(screen_around_tuple_items)
{
    run_sample("samples/policy.pt2", NULL, "found_around-items", 100, 30);
    char *s = tu_slurp(tu_root("tests/screens/found_around-items.expected"));
    ck_assert_ptr_nonnull(s);
    ck_assert_msg(tu_contains(s, "▼ float32[16, 7]") && tu_contains(s, "▼ float32[15, 7]") && !tu_contains(s, "▼ (float32"),
                  "%s", s);
    free(s);
}
END_TEST

/* now and was wrap to the node pane (remade on a resize), so what changed is on screen. */
START_TEST(screen_node_now_was_wrapped)
{
    run_sample("samples/tiny_llama.pt2", "samples/backends/arith.json", "found_node-was", 80, 24);
}
END_TEST

/* Tab after `backend` completes a backend's name, after `export` a path (issue 18 defect 6 names
 * both; its screen test had commands, nodes and steps). */
START_TEST(screen_prompt_completes_backends_and_paths)
{
    /* relative paths are taken from where lowerscope started: a folder holding one file */
    const char *dir = tu_tmpdir();
    char path[4200];
    snprintf(path, sizeof path, "%s/shared_constant_out.pte", dir);
    FILE *f = fopen(path, "w");
    ck_assert_ptr_nonnull(f);
    fclose(f);
    snprintf(path, sizeof path, "%s/my_profile.json", dir); /* a backend profile's name, for compare backend */
    f = fopen(path, "w");
    ck_assert_ptr_nonnull(f);
    fclose(f);
    pf_screens_file(tu_root("samples/shared_constant.pt2"), "samples/shared_constant.pt2", NULL, "found_prompt-complete",
                    80, 24, dir);
    char *cands = tu_slurp(tu_root("tests/screens/found_prompt-complete-compare-backend.expected"));
    ck_assert_ptr_nonnull(cands);
    ck_assert_msg(strstr(cands, "my_profile.json") && strstr(cands, "xnnpack") && !strstr(cands, "shared_constant_out.pte"),
                  "%s", cands);
    free(cands);
}
END_TEST

/* A node whose module stack has ';' inside names: the pane lists a module a line, as `lowerscope
 * node` does (the same ls_module_stack_entry; it split at every ';'). */
START_TEST(screen_module_stack_semicolons)
{
    run_sample("tests/corpus/module_stack_semicolon.json", NULL, "found_module-stack", 120, 48);
}
END_TEST

/* A node whose source_fn_stack has two entries: the pane lists an entry a line (it showed the
 * ';'-joined text as one). */
START_TEST(screen_source_fn_entries)
{
    run_sample("tests/corpus/source_fn_stack_entries.json", NULL, "found_source-fn", 120, 48);
}
END_TEST

Suite *tui_found_suite(void)
{
    Suite *s = suite_create("tui_found");
    TCase *tc = tcase_create("screens");
    tcase_set_timeout(tc, 60);
    tcase_add_test(tc, screen_graph_search_in_a_row);
    tcase_add_test(tc, ui_needs_a_terminal);
    tcase_add_test(tc, screen_partitions_backends);
    tcase_add_test(tc, screen_partgraph_title);
    tcase_add_test(tc, screen_compare_top_level);
    tcase_add_test(tc, screen_held_by_columns);
    tcase_add_test(tc, screen_module_stack_semicolons);
    tcase_add_test(tc, screen_source_fn_entries);
    tcase_add_test(tc, screen_scroll_text);
    tcase_add_test(tc, screen_graph_through_an_elided_view);
    tcase_add_test(tc, screen_partgraph_wide_boxes);
    tcase_add_test(tc, screen_table_columns_by_content);
    tcase_add_test(tc, screen_around_tuple_items);
    tcase_add_test(tc, screen_node_now_was_wrapped);
    tcase_add_test(tc, screen_prompt_completes_backends_and_paths);
    tcase_add_test(tc, screen_compare_errors);
    suite_add_tcase(s, tc);
    return s;
}
