/* Screen tests of the terminal UI, like tig's: a script of keys and :save-display commands
 * (tests/screens/NAME.keys) drives the UI headless at a fixed size, and every screen it saves
 * (NAME*.screen) must equal tests/screens/NAME*.expected. Each dump line starts with two marks,
 * the tag colour drawn in the left and main column ('.' none), so colours are tested too.
 * LS_UPDATE_SCREENS=1 writes the expected files from what the UI drew (review the diff).
 *
 * The histories are samples/shared_constant.pt2 through the real pipeline (in this process, or
 * the binary on the sample: sample_* scripts), that history with verifier findings added, and
 * a generated 100k-node one for speed. */
#include <check.h>
#include <dirent.h>
#include <inttypes.h>
#include <poll.h>
#include <pty.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/wait.h>
#include <time.h>
#include <unistd.h>

#include "ops.h"
#include "passes.h"
#include "progfixtures.h"
#include "testutil.h"
#include "tui.h"
#include "../views/ui.h" /* ui_core_start: a live history to draw while its pipeline works */

/* ---- a history shaped like shared_constant: c is read by atan2 (CPU) and add, mul (tag0) */

static ls_node *call(ls_program *p, const char *name, ls_op_id id, const uint32_t *ins, int n)
{
    const ls_op *op = ls_op_get(id);
    ls_node *nd = ls_node_new(p, LS_NODE_CALL, name, ls_op_target(op, (ls_dialect)p->dialect));
    nd->op = op;
    nd->dialect = p->dialect;
    ls_arg given[4];
    for (int i = 0; i < n; i++) given[i] = ls_arg_node(ins[i]);
    ls_arg *args;
    uint16_t nargs;
    ls_error err;
    ck_assert_int_eq(ls_op_normalize_args(op, given, (uint16_t)n, &args, &nargs, &err), 0);
    ls_node_set_args(nd, args, nargs);
    ls_tmeta m;
    int64_t four = 4;
    ls_tmeta_init(&m, LS_DT_F32, 1, &four);
    ls_node_set_val(nd, &m);
    ls_program_append(p, nd);
    return nd;
}

static ls_node *placeholder(ls_program *p, const char *name)
{
    ls_node *nd = ls_node_new(p, LS_NODE_PLACEHOLDER, name, NULL);
    ls_tmeta m;
    int64_t four = 4;
    ls_tmeta_init(&m, LS_DT_F32, 1, &four);
    ls_node_set_val(nd, &m);
    ls_program_append(p, nd);
    return nd;
}

static void output(ls_program *p, const uint32_t *ids, uint32_t n)
{
    ls_node *o = ls_node_new(p, LS_NODE_OUTPUT, "output", NULL);
    ls_arg *a = ls_calloc(1, sizeof *a);
    a[0] = ls_arg_nodes(ids, n, false);
    ls_node_set_args(o, a, 1);
    ls_program_append(p, o);
}

static void add_step(ls_history *h, const char *pass, ls_program *p, const char *sentence, const char *node,
                     const char *node_prog)
{
    h->steps = ls_realloc(h->steps, sizeof *h->steps * (h->n + 1));
    ls_step *st = &h->steps[h->n];
    memset(st, 0, sizeof *st);
    st->pass = ls_intern(pass);
    st->program = p;
    if (h->n) ls_diff_programs(h->steps[h->n - 1].program, p, &st->changes, &st->n_changes);
    if (sentence) {
        st->report.v = ls_calloc(1, sizeof *st->report.v);
        st->report.v[0] = (ls_sentence){ls_strdup(sentence), node_prog ? ls_intern(node_prog) : NULL, ls_intern(node)};
        st->report.n = 1;
    }
    h->n++;
}

/* samples/shared_constant.pt2 through the reader and the default pipeline, in this process. */
static ls_history *shared_constant_history(void)
{
    ls_history *h = ls_calloc(1, sizeof *h);
    ls_program *p = pf_sample("shared_constant");
    pf_lower(p, NULL, h);
    ls_program_unref(p);
    h->path = ls_intern("samples/shared_constant.pt2"); /* as typed from the repository's root */
    return h;
}

static ls_history *big_history(uint32_t n)
{
    ls_history *h = ls_calloc(1, sizeof *h);
    h->path = ls_intern("bench_100k.pt2");
    ls_program *p = ls_program_new("model", LS_DIALECT_EDGE);
    ls_node *x = placeholder(p, "x");
    ls_program_set_inputs(p, &(ls_input_spec){.kind = LS_IN_USER_INPUT, .name = ls_intern("x")}, 1);
    uint32_t prev = x->id;
    char name[32];
    for (uint32_t i = 0; i < n; i++) {
        snprintf(name, sizeof name, i % 2 ? "mul_%u" : "add_%u", i);
        prev = call(p, name, i % 2 ? LS_OP_mul_Tensor : LS_OP_add_Tensor, (uint32_t[]){prev, x->id}, 2)->id;
    }
    output(p, &prev, 1);
    add_step(h, "load", p, NULL, NULL, NULL);
    p = ls_program_copy(p);
    ls_program_add_tag(p, ls_intern("tag0"), ls_intern("BundledBackend"));
    for (uint32_t i = 1; i < p->n_nodes; i += 2) ls_program_edit(p, i)->tag = ls_intern("tag0");
    add_step(h, "partition", p, "tag0: half of the chain", "add_0", NULL);
    return h;
}

/* The same history with verifier findings at the last step: the UI must still open on it. */
static ls_history *history_with_errors(void)
{
    ls_history *h = shared_constant_history();
    ls_verify_result *v = &h->steps[h->n - 1].verify;
    ls_verify_result_free(v);
    v->v = ls_calloc(2, sizeof *v->v);
    v->v[0] = (ls_finding){LS_SEV_ERROR, NULL, ls_intern("c"), ls_strdup("Constant tensor c is listed twice in the signature"),
                           false};
    v->v[1] = (ls_finding){LS_SEV_WARNING, ls_intern("lowered_module_0"), ls_intern("aten_mul_tensor"),
                           ls_strdup("aten_mul_tensor is never used"), false};
    v->n = 2;
    v->n_errors = 1;
    return h;
}

static void free_history(ls_history *h)
{
    ls_history_free(h);
    free(h);
}

/* ---- running a script and comparing its screens */

static void run_script_at(ls_history *h, const char *name, bool no_color, const char *step)
{
    const char *dir = tu_tmpdir();
    setenv("LOWERSCOPE_DUMP_DIR", dir, 1);
    char keys[512];
    snprintf(keys, sizeof keys, "tests/screens/%s.keys", name);
    ls_tui_opts o = {.script = tu_root(keys), .rows = 24, .cols = 80, .start_step = step, .no_color = no_color, .headless = true};
    ls_error err = {0};
    int rc = ls_tui_run(h, &o, &err);
    ck_assert_msg(rc == 0, "ls_tui_run: %d %s", rc, err.msg);
    tu_compare_screens(dir, name);
}

static void run_script(ls_history *h, const char *name, bool no_color)
{
    run_script_at(h, name, no_color, "0");
}

#define SCREEN_TEST(name, no_color)                          \
    START_TEST(screen_##name)                                \
    {                                                        \
        ls_history *h = shared_constant_history();           \
        run_script(h, #name, no_color);                      \
        free_history(h);                                     \
    }                                                        \
    END_TEST

SCREEN_TEST(open, false)
SCREEN_TEST(table, false)
SCREEN_TEST(nav, false)
SCREEN_TEST(run, false)
SCREEN_TEST(parts, false)

/* An 8-colour terminal: the fallback palette, tags still told apart by colour. */
START_TEST(screen_colors8)
{
    setenv("LOWERSCOPE_TERM", "xterm", 1);
    ls_history *h = shared_constant_history();
    run_script(h, "colors8", false);
    free_history(h);
    unsetenv("LOWERSCOPE_TERM");
}
END_TEST

START_TEST(screen_errors)
{
    ls_history *h = history_with_errors();
    run_script_at(h, "errors", false, NULL); /* opens on the last step, as lowerscope FILE does */
    free_history(h);
}
END_TEST

/* Runs a script on h headless at 120x40 from step 0 in a fresh folder, which it returns (the
 * screens it saves are there). */
static const char *run_keys(ls_history *h, const char *script)
{
    const char *dir = tu_tmpdir();
    char keys[4096];
    snprintf(keys, sizeof keys, "%s/run.keys", dir);
    ls_error err;
    ck_assert_int_eq(ls_write_file_atomic(keys, script, strlen(script), &err), 0);
    setenv("LOWERSCOPE_DUMP_DIR", dir, 1);
    ls_tui_opts o = {.script = keys, .rows = 40, .cols = 120, .start_step = "0", .headless = true};
    ck_assert_msg(ls_tui_run(h, &o, &err) == 0, "%s", err.msg);
    return dir;
}

/* Each screen a script saved in dir holds its text: want[i] = {file, text}. */
static void screens_hold(const char *dir, const char *const want[][2], size_t n)
{
    for (size_t i = 0; i < n; i++) {
        char path[4096];
        snprintf(path, sizeof path, "%s/%s", dir, want[i][0]);
        char *screen = tu_slurp(path);
        ck_assert_ptr_nonnull(screen);
        ck_assert_msg(tu_contains(screen, want[i][1]), "%s: no '%s':\n%s", want[i][0], want[i][1], screen);
        free(screen);
    }
}

/* :diff takes on, off or nothing (switch, as t does); another word is said to be wrong, not taken
 * for on without a word, and setting what is set says so. */
START_TEST(diff_command_names_a_bad_word)
{
    ls_history *h = shared_constant_history();
    const char *dir = run_keys(h, ":step 2\n:diff maybe\n:save-display bad.screen\n:diff off\n:diff off\n"
                                  ":save-display again.screen\n:diff\n:save-display switched.screen\n");
    static const char *const want[][2] = {{"bad.screen", "diff maybe: give on or off"},
                                          {"again.screen", "diff marks are off already"},
                                          {"switched.screen", "diff marks on"}};
    screens_hold(dir, want, 3);
    free_history(h);
}
END_TEST

/* A search of the top-level graph that finds nothing says where a match is inside a lowered
 * module (it said "no match in the graph" while :goto found the node in lowered_module_0). */
START_TEST(search_names_a_match_inside_a_module)
{
    ls_history *h = shared_constant_history();
    const char *dir = run_keys(h, ":step emit\n3\n/mul<Enter>\n:save-display inside.screen\n/zzz<Enter>\n"
                                  ":save-display none.screen\n");
    static const char *const want[][2] = {
        {"inside.screen", "/mul: none in this graph; aten_mul_tensor is inside lowered_module_0 (:goto aten_mul_tensor)"},
        {"none.screen", "/zzz: no match in the graph"}};
    screens_hold(dir, want, 2);
    free_history(h);
}
END_TEST

/* A search ends on entering a lowered module and on leaving it, as a filter does: its pattern
 * stayed in the module's title, and n looked for it there ("/call_del: no match in the graph"). */
START_TEST(entering_a_module_ends_the_search)
{
    ls_history *h = shared_constant_history();
    const char *dir = run_keys(h, ":step to_backend\n3\n/call_delegate<Enter>\n:save-display found.screen\n<Enter>\n"
                                  ":save-display in.screen\n<BS>\n:save-display back.screen\n");
    static const char *const want[][2] = {{"found.screen", "/call_delegate"}, {"in.screen", "Graph of lowered_module_0"},
                                          {"back.screen", "back in the top-level program"}};
    screens_hold(dir, want, 3);
    static const char *const gone[] = {"in.screen", "back.screen"};
    for (int i = 0; i < 2; i++) {
        char path[4096];
        snprintf(path, sizeof path, "%s/%s", dir, gone[i]);
        char *screen = tu_slurp(path);
        ck_assert_msg(screen && !strstr(screen, "/call_delegate"), "%s:\n%s", gone[i], screen);
        free(screen);
    }
    free_history(h);
}
END_TEST

/* The header counts warnings when there is no error (it said "verify: ok" beside a node pane
 * that showed a verifier warning); an error still wins. */
START_TEST(the_header_counts_warnings)
{
    ls_history *h = history_with_errors();
    ls_verify_result *v = &h->steps[h->n - 1].verify;
    const char *dir = run_keys(h, ":step emit\n:save-display error.screen\n");
    static const char *const with_error[][2] = {{"error.screen", "verify: 1 error"}};
    screens_hold(dir, with_error, 1);
    v->v[0].severity = LS_SEV_WARNING;
    v->n_errors = 0;
    dir = run_keys(h, ":step emit\n:save-display warned.screen\n");
    static const char *const warned[][2] = {{"warned.screen", "verify: 2 warnings"}};
    screens_hold(dir, warned, 1);
    free_history(h);
}
END_TEST

/* Enter on a step of the Passes pane goes to what it changed (it did nothing, without a word). */
START_TEST(enter_on_a_step_opens_its_changes)
{
    ls_history *h = shared_constant_history();
    const char *dir = run_keys(h, ":step to_backend\n2\n<Enter>\n:save-display step.screen\nj\n:save-display moved.screen\n");
    /* j then moves in the Changes pane, not to the next step */
    static const char *const want[][2] = {{"step.screen", "step 5 to_backend: what it changed"},
                                          {"moved.screen", "step 5/8 to_backend"}};
    screens_hold(dir, want, 2);
    free_history(h);
}
END_TEST

START_TEST(stays_instant_on_100k_nodes)
{
    ls_history *h = big_history(100000);
    double t0 = ls_now();
    const char *dir = run_keys(h, "G\nn\np\nn\n/mul_99999<Enter>\n/add_5<Enter>\nn\nN\ngg\n<C-d>\n<C-d>\nf\ntag0<Enter>\nG\n"
                                  "<Esc>\ngd\ngu\n:goto add_50000\n:save-display big.screen\n");
    double dt = ls_now() - t0;
    char path[4096];
    snprintf(path, sizeof path, "%s/big.screen", dir);
    char *screen = tu_slurp(path);
    ck_assert_ptr_nonnull(screen);
    ck_assert_msg(tu_contains(screen, "add_50000"), "goto did not select add_50000:\n%s", screen);
    free(screen);
    /* generous: ~20 steps, searches and filters; ASan makes it several times slower */
    ck_assert_msg(dt < 20.0, "the script took %.1f s on 100k nodes", dt);
    free_history(h);
}
END_TEST

/* Tab completing a node name of a program bigger than one slice (65536 names) goes on between
 * keys: a script waits for it (key times note "complete-done") and the line is completed as a
 * scan in one piece would; goto then finds the node. */
START_TEST(tab_completion_goes_on_between_keys)
{
    ls_history *h = big_history(100000);
    char times[4096], path[4096];
    snprintf(times, sizeof times, "%s/tab.times", tu_tmpdir());
    setenv("LOWERSCOPE_KEY_TIMES", times, 1);
    const char *dir = run_keys(h, "<Colon>goto mul_99997<Tab><Enter>\n:save-display tab.screen\n<Colon>goto zz<Tab>\n:save-display none.screen\n");
    unsetenv("LOWERSCOPE_KEY_TIMES");
    char *t = tu_slurp(times);
    ck_assert_ptr_nonnull(t);
    ck_assert_msg(tu_contains(t, "complete-done"), "the completion was done in one slice:\n%s", t);
    free(t);
    snprintf(path, sizeof path, "%s/tab.screen", dir);
    char *screen = tu_slurp(path);
    ck_assert_ptr_nonnull(screen);
    ck_assert_msg(tu_contains(screen, "mul_99997"), "goto did not select mul_99997:\n%s", screen);
    free(screen);
    snprintf(path, sizeof path, "%s/none.screen", dir);
    screen = tu_slurp(path);
    ck_assert_ptr_nonnull(screen);
    ck_assert_msg(tu_contains(screen, "no completion for 'zz'"), "%s", screen);
    free(screen);
    free_history(h);
}
END_TEST

/* A partition graph of many regions that do not fold: a chain of groups of nodes, each group
 * its own tag and its own size (no period a fold could find: 32 at most), a CPU node between. */
static uint32_t group_size(uint32_t g) { return 1 + (g * 37) % 101; }

static ls_history *many_regions_history(uint32_t groups)
{
    ls_history *h = ls_calloc(1, sizeof *h);
    h->path = ls_intern("regions.pt2");
    ls_program *p = ls_program_new("model", LS_DIALECT_EDGE);
    ls_node *x = placeholder(p, "x");
    ls_program_set_inputs(p, &(ls_input_spec){.kind = LS_IN_USER_INPUT, .name = ls_intern("x")}, 1);
    uint32_t prev = x->id, i = 0;
    char name[32];
    for (uint32_t g = 0; g < groups; g++)
        for (uint32_t k = 0; k <= group_size(g); k++, i++) {
            snprintf(name, sizeof name, "n_%u", i);
            prev = call(p, name, k < group_size(g) ? LS_OP_add_Tensor : LS_OP_mul_Tensor, (uint32_t[]){prev, x->id}, 2)->id;
        }
    output(p, &prev, 1);
    add_step(h, "load", p, NULL, NULL, NULL);
    p = ls_program_copy(p);
    for (uint32_t g = 0, pos = 1; g < groups; pos += group_size(g) + 1, g++) {
        const char *tag = ls_internf("t%u", g);
        ls_program_add_tag(p, tag, ls_intern("BundledBackend"));
        for (uint32_t k = 0; k < group_size(g); k++) ls_program_edit(p, pos + k)->tag = tag;
    }
    add_step(h, "partition", p, "every group tagged", "n_0", NULL);
    return h;
}

/* The layout draws a row at a time what ls_draw_boxes draws whole, and measures its width. */
START_TEST(box_layout_draws_what_the_drawing_does)
{
    ls_history *h = many_regions_history(60);
    ls_regions r;
    ls_regions_build(h->steps[1].program, &r);
    ck_assert_uint_gt(r.n, 100);
    for (int fold = 0; fold < 2; fold++) {
        ls_region_boxes bx;
        ls_region_boxes_build(&r, fold, false, &bx);
        ls_box_layout L;
        ls_box_layout_build(bx.boxes, bx.n, bx.edges, bx.n_edges, &L);
        for (int w = 12; w <= 56; w += 11)
            for (int ascii = 0; ascii < 2; ascii++) {
                ls_drawing d;
                ls_draw_boxes(bx.boxes, bx.n, bx.edges, bx.n_edges, w, ascii, &d);
                ck_assert_uint_eq(L.n_lines, d.n_lines);
                ck_assert_uint_eq(ls_box_layout_width(&L, w), d.width);
                for (uint32_t b = 0; b < bx.n; b++) {
                    ls_box_place pl = ls_box_layout_place(&L, b, w);
                    ck_assert(pl.line == d.place[b].line && pl.col == d.place[b].col && pl.h == d.place[b].h);
                }
                for (uint32_t k = 0; k < L.n_ranks; k++) {
                    char *lines[16] = {0};
                    uint32_t width = 0, n = ls_box_layout_lines_of(&L, k);
                    ck_assert_uint_lt(n, 16);
                    ls_box_layout_draw(&L, k, w, ascii, lines, &width);
                    for (uint32_t l = 0; l < n; l++) {
                        ck_assert_str_eq(lines[l], d.lines[L.line0[k] + l]);
                        ck_assert_uint_eq(ls_box_layout_rank_of_line(&L, L.line0[k] + l), k);
                        free(lines[l]);
                    }
                }
                ls_drawing_free(&d);
            }
        ls_box_layout_free(&L);
        ls_region_boxes_free(&bx);
    }
    ls_regions_free(&r);
    free_history(h);
}
END_TEST

/* The g screen of 800 regions, wide and in ASCII (neither the step's narrow boxes): opening it
 * and each key draw the rows of boxes on screen, not all 800 (ui_boxview_rows_drawn). */
START_TEST(partgraph_draws_only_the_rows_it_shows)
{
    ls_history *h = many_regions_history(400);
    const char *dir = tu_tmpdir();
    setenv("LOWERSCOPE_DUMP_DIR", dir, 1);
    char keys[4096], path[4096];
    snprintf(keys, sizeof keys, "%s/pg.keys", dir);
    const char *script = "g<Timeout>\n:save-display pg.screen\nj\nj\n<PgDn>\n>\n<lt>\nG\n<PgUp>\ngg\nq\n";
    ls_error err;
    ck_assert_int_eq(ls_write_file_atomic(keys, script, strlen(script), &err), 0);
    for (int ascii = 0; ascii < 2; ascii++) {
        if (ascii) setenv("LOWERSCOPE_TERM", "vt100", 1);
        ls_tui_opts o = {.script = keys, .rows = 50, .cols = 200, .headless = true};
        uint64_t before = ui_boxview_rows_drawn;
        ck_assert_int_eq(ls_tui_run(h, &o, &err), 0);
        uint64_t drawn = ui_boxview_rows_drawn - before;
        ck_assert_msg(drawn >= 3 && drawn < 60, "%s: %" PRIu64 " rows of boxes drawn of 800", ascii ? "ascii" : "utf-8", drawn);
        snprintf(path, sizeof path, "%s/pg.screen", dir);
        char *screen = tu_slurp(path);
        ck_assert_ptr_nonnull(screen);
        ck_assert_msg(tu_contains(screen, "inputs") && tu_contains(screen, " t0 "), "%s", screen);
        ck_assert_msg(tu_contains(screen, ascii ? "+-" : "┌") && !tu_contains(screen, ascii ? "┌" : "+-"), "%s", screen);
        free(screen);
    }
    unsetenv("LOWERSCOPE_TERM");
    free_history(h);
}
END_TEST

/* The node pane makes its lines once per selection: not again to count them and to draw them,
 * nor on a redraw, a move inside the pane or a search in it. */
START_TEST(node_pane_gathers_its_facts_once_per_selection)
{
    ls_history *h = shared_constant_history();
    const char *dir = tu_tmpdir();
    char keys[4096];
    snprintf(keys, sizeof keys, "%s/node.keys", dir);
    /* three selections (the first screen's, j, j), then the pane's own keys and redraws */
    const char *script = "j\nj\n4\nj\nj\n<C-l>\n/user<Enter>\n<Esc>\n<C-l>\n";
    ls_error err;
    ck_assert_int_eq(ls_write_file_atomic(keys, script, strlen(script), &err), 0);
    ls_tui_opts o = {.script = keys, .rows = 24, .cols = 80, .start_step = "0", .headless = true};
    uint64_t before = ui_node_lines_built;
    ck_assert_int_eq(ls_tui_run(h, &o, &err), 0);
    ck_assert_uint_eq(ui_node_lines_built - before, 3);
    free_history(h);
}
END_TEST

/* A pipeline still running (the live history ui_core_start makes): its last pass here waits
 * until the test lets it go, so the screens are those of a step being made. The timeline lists
 * the step to come, the status line says which step is being made, stepping onto it and
 * running a step say they wait. */
static bool release_hold;

static int hold_pass(const ls_program *in, ls_program **out, ls_pass_ctx *ctx)
{
    (void)ctx;
    while (!__atomic_load_n(&release_hold, __ATOMIC_ACQUIRE)) {
        struct timespec ts = {0, 1000000L};
        nanosleep(&ts, NULL);
    }
    *out = ls_program_copy(in);
    return 0;
}

START_TEST(live_history_shows_the_step_being_made)
{
    static const ls_pass hold = {"hold", "waits for the test", false, hold_pass};
    ls_program *p = pf_sample("shared_constant");
    ls_pipeline_opts po;
    ls_pipeline_opts_init(&po);
    po.passes[0] = ls_pass_find("to_edge");
    po.passes[1] = &hold;
    po.n_passes = 2;
    __atomic_store_n(&release_hold, false, __ATOMIC_RELEASE);
    ls_history *h;
    ls_error err;
    ck_assert_int_eq(ui_core_start(p, &po, &h, &err), 0);
    while (ls_history_ready(h, NULL) < 2) {
        struct timespec ts = {0, 1000000L};
        nanosleep(&ts, NULL);
    }
    const char *dir = tu_tmpdir();
    char keys[4096];
    snprintf(keys, sizeof keys, "%s/live.keys", dir);
    const char *script = ":save-display live1.screen\n<Right>\n:save-display live2.screen\nr\n:save-display live3.screen\n";
    ck_assert_int_eq(ls_write_file_atomic(keys, script, strlen(script), &err), 0);
    setenv("LOWERSCOPE_DUMP_DIR", dir, 1);
    ls_tui_opts o = {.script = keys, .rows = 24, .cols = 80, .headless = true, .script_no_wait = true};
    ck_assert_int_eq(ls_tui_run(h, &o, &err), 0);
    const char *want[][3] = {
        {"live1.screen", "step 1/2 to_edge", "pipeline: step 2 of 2: hold"},
        {"live2.screen", "2 hold", "step 2 is not ready yet"},
        {"live3.screen", "running", "running a step waits for the pipeline to finish (step 2 of 2: hold"},
    };
    for (int i = 0; i < 3; i++) {
        char path[4096];
        snprintf(path, sizeof path, "%s/%s", dir, want[i][0]);
        char *screen = tu_slurp(path);
        ck_assert_ptr_nonnull(screen);
        ck_assert_msg(tu_contains(screen, want[i][1]) && tu_contains(screen, want[i][2]), "%s lacks '%s' or '%s':\n%s",
                      want[i][0], want[i][1], want[i][2], screen);
        free(screen);
    }
    __atomic_store_n(&release_hold, true, __ATOMIC_RELEASE);
    ui_core_free(h); /* waits for the pipeline's last step */
    ls_pipeline_opts_free(&po);
    ls_program_unref(p);
}
END_TEST

START_TEST(bad_script_is_an_error_not_a_crash)
{
    ls_history *h = shared_constant_history();
    const char *dir = tu_tmpdir();
    char keys[4096];
    snprintf(keys, sizeof keys, "%s/bad.keys", dir);
    ls_error err;
    ck_assert_int_eq(ls_write_file_atomic(keys, "<Bogus>\n", 8, &err), 0);
    ls_tui_opts o = {.script = keys, .rows = 24, .cols = 80, .start_step = NULL, .headless = true};
    ck_assert_int_eq(ls_tui_run(h, &o, &err), 2);
    ck_assert(tu_contains(err.msg, "unknown key name"));
    free_history(h);
}
END_TEST

START_TEST(cli_opens_files_and_reports_errors)
{
    char *out;
    int rc = tu_runf(&out, "/nonexistent/model.pt2");
    ck_assert_int_eq(rc, 2);
    ck_assert_msg(tu_contains(out, "lowerscope: "), "%s", out);
    free(out);
    rc = tu_runf(&out, "--no-color");
    ck_assert_int_eq(rc, 2);
    ck_assert(tu_contains(out, "usage: lowerscope FILE"));
    free(out);
}
END_TEST

/* The real thing: lowerscope on samples/shared_constant.pt2 through the reader and the pass
 * pipeline, scripted through the environment, its screens compared like the others. */
static void run_sample_script(const char *name, bool no_color)
{
    const char *dir = tu_tmpdir();
    char keys[512];
    snprintf(keys, sizeof keys, "tests/screens/%s.keys", name);
    setenv("LOWERSCOPE_SCRIPT", tu_root(keys), 1);
    setenv("LOWERSCOPE_DUMP_DIR", dir, 1);
    setenv("LOWERSCOPE_SIZE", "80x24", 1);
    unsetenv("LOWERSCOPE_TERM");
    if (no_color) setenv("NO_COLOR", "1", 1);
    else unsetenv("NO_COLOR");
    char *out;
    int rc = tu_runf(&out, "%s", tu_root("samples/shared_constant.pt2"));
    ck_assert_msg(rc == 0, "lowerscope exited %d: %s", rc, out);
    free(out);
    unsetenv("LOWERSCOPE_SCRIPT");
    unsetenv("NO_COLOR");
    tu_compare_screens(dir, name);
}

/* A sample through the reader and the default pipeline, run in this process with the working
 * folder a fresh temporary one (relative paths the script writes land there; the dumps too).
 * Opens on the last step, as lowerscope FILE does. */
static void run_history_script(const char *sample, const char *name, const char **dir_out)
{
    ls_error err = {0};
    ls_program *p = pf_load(tu_root(sample));
    p->path = ls_intern(sample); /* as typed from the repository's root: screens show the path given */
    ls_history h = {0};
    pf_lower(p, NULL, &h);
    h.path = p->path;
    const char *dir = tu_tmpdir();
    char keys[512], cwd[4096];
    snprintf(keys, sizeof keys, "%s", tu_root(""));
    strncat(keys, "tests/screens/", sizeof keys - strlen(keys) - 1);
    strncat(keys, name, sizeof keys - strlen(keys) - 1);
    strncat(keys, ".keys", sizeof keys - strlen(keys) - 1);
    ck_assert_ptr_nonnull(getcwd(cwd, sizeof cwd));
    ck_assert_int_eq(chdir(dir), 0);
    if (dir_out) { /* the files the script will find there */
        ck_assert_int_eq(ls_write_file_atomic("keep.pte", "not a pte\n", 10, &err), 0);
        ck_assert_int_eq(ls_write_file_atomic("replace.pte", "not a pte\n", 10, &err), 0);
    }
    setenv("LOWERSCOPE_DUMP_DIR", dir, 1);
    ls_tui_opts to = {.script = keys, .rows = 24, .cols = 80, .start_step = NULL, .headless = true};
    int rc = ls_tui_run(&h, &to, &err);
    ck_assert_int_eq(chdir(cwd), 0);
    ck_assert_msg(rc == 0, "ls_tui_run: %d %s", rc, err.msg);
    tu_compare_screens(dir, name);
    ls_history_free(&h);
    ls_program_unref(p);
    if (dir_out) *dir_out = dir;
}

/* The run screen on kv_cache's last step after three runs: inputs, each output compared with the
 * loaded program's, the cache inside the delegate (by name, first values) compared with the
 * loaded program's buffer, the CPU's and the delegate's time (masked), the verdict. */
START_TEST(screen_kv_run)
{
    run_history_script("samples/kv_cache.pt2", "kv_run", NULL);
    char *past = tu_slurp(tu_root("tests/screens/kv_run-past.expected"));
    char *again = tu_slurp(tu_root("tests/screens/kv_run-again.expected"));
    ck_assert_ptr_nonnull(past);
    ck_assert_ptr_nonnull(again);
    ck_assert_msg(strstr(past, "run 5 failed:") && strstr(past, "index 4 is out of bounds"), "%s", past);
    ck_assert_msg(strstr(past, "the loaded program fails on these inputs too"), "%s", past);
    ck_assert_msg(strstr(past, "the state carries over; q"), "how to start again: %s", past);
    ck_assert_msg(strstr(again, "inputs of run 1 (seeded)") && !strstr(again, "failed"), "%s", again);
    free(past);
    free(again);
}
END_TEST

/* A program the verifier rejects structurally: step 0 only, and the UI says why. */
START_TEST(screen_structural)
{
    run_history_script("tests/corpus/constant_without_target.json", "structural", NULL);
}
END_TEST

/* Text from the file that would drive the terminal is drawn escaped. */
START_TEST(screen_escapes)
{
    run_history_script("tests/corpus/escapes.pt2", "escapes", NULL);
    /* a name mostly escapes, too long for its column, keeps its last columns as drawn (a cut
     * that counted each raw byte as one column left a bare ellipsis) */
    char *screen = tu_slurp(tu_root("tests/screens/escapes.expected"));
    ck_assert_ptr_nonnull(screen);
    ck_assert_msg(strstr(screen, "│ ▌ …u202egnp.exe\\u2066 add"), "%s", screen);
    free(screen);
}
END_TEST

/* Names cut to their column keep what they should: one of 1500 characters its end; on an ASCII
 * terminal (vt100), one of 20 wide characters drawn as 22 stand-ins fits whole, and one of
 * e + combining accent, drawn as two characters each, is cut with its ellipsis and keeps its end
 * (the fit was measured on the UTF-8 text, not on what is drawn). */
static char *name_screen(const char *corpus, const char *shot)
{
    ls_program *p = pf_load(tu_root(corpus)); /* metadata only: the pipeline stops at to_edge */
    ls_pipeline_opts o;
    ls_pipeline_opts_init(&o);
    ls_error err = {0};
    ck_assert_msg(ls_pipeline_opt(&o, "--pipeline", "to_edge", &err) == 1, "%s", err.msg);
    ls_history h = {0};
    ck_assert_msg(ls_pipeline_run(p, &o, &h, &err) == 0, "%s", err.msg);
    char script[256];
    snprintf(script, sizeof script, ":step 0\n:save-display %s\n", shot);
    const char *dir = run_keys(&h, script);
    char path[4096];
    snprintf(path, sizeof path, "%s/%s", dir, shot);
    char *screen = tu_slurp(path);
    ck_assert_ptr_nonnull(screen);
    ls_history_free(&h);
    ls_pipeline_opts_free(&o);
    ls_program_unref(p);
    return screen;
}

START_TEST(screen_long_and_wide_names)
{
    char *screen = name_screen("tests/corpus/long_name.json", "long.screen");
    ck_assert_msg(strstr(screen, "AAAA_TAILEND [input]"), "%s", screen);
    free(screen);
    setenv("LOWERSCOPE_TERM", "vt100", 1);
    screen = name_screen("tests/corpus/wide_names.json", "wide.screen");
    unsetenv("LOWERSCOPE_TERM");
    ck_assert_msg(strstr(screen, "|   ????????????????????_E  "), "%s", screen); /* whole: no ~ */
    ck_assert_msg(strstr(screen, "|   ~?e?e?e?") && strstr(screen, "?e?_END [param]"), "%s", screen);
    free(screen);
}
END_TEST

static char *file_text(const char *dir, const char *name)
{
    char path[4096];
    snprintf(path, sizeof path, "%s/%s", dir, name);
    return tu_slurp(path);
}

/* Export from the UI: a new file is written and its summary shown; an existing one is kept when
 * the answer to "overwrite? (y/n)" is n and replaced when it is y (through `e`); an export the
 * format cannot hold shows why. */
START_TEST(screen_kv_export)
{
    const char *dir;
    run_history_script("samples/kv_cache.pt2", "kv_export", &dir);
    char *kept = file_text(dir, "keep.pte"), *replaced = file_text(dir, "replace.pte"), *fresh = file_text(dir, "fresh.pte");
    ck_assert_str_eq(kept, "not a pte\n");
    ck_assert_ptr_nonnull(fresh);
    ck_assert_msg(memcmp(replaced + 4, "ET12", 4) == 0, "replace.pte was not replaced by a .pte");
    ck_assert_msg(memcmp(fresh + 4, "ET12", 4) == 0, "fresh.pte is not a .pte");
    free(kept);
    free(replaced);
    free(fresh);
    char *pt2 = file_text(dir, "kv.pt2");
    ck_assert_ptr_null(pt2); /* refused: nothing written */
    char *again = tu_slurp(tu_root("tests/screens/kv_export-ask-again.expected"));
    char *kept_q = tu_slurp(tu_root("tests/screens/kv_export-kept-q.expected"));
    ck_assert_msg(again && strstr(again, "keep.pte exists — overwrite? (y: yes; n, q or Esc: no)"), "%s", again);
    ck_assert_msg(kept_q && strstr(kept_q, "keep.pte not written: it is left as it was"), "%s", kept_q);
    free(again);
    free(kept_q);
    /* what the UI wrote runs and matches the loaded program */
    char path[4096], *out;
    snprintf(path, sizeof path, "%s/replace.pte", dir);
    ck_assert_int_eq(tu_runf(&out, "run %s --steps 3 --compare-with %s", path, tu_root("samples/kv_cache.pt2")), 0);
    free(out);
}
END_TEST

#define SAMPLE_TEST(name, no_color)                          \
    START_TEST(sample_##name)                                \
    {                                                        \
        run_sample_script("sample_" #name, no_color);        \
    }                                                        \
    END_TEST

SAMPLE_TEST(dup, false)
SAMPLE_TEST(delegate, false)
SAMPLE_TEST(search, false)
SAMPLE_TEST(filter, false)
SAMPLE_TEST(help, false)
SAMPLE_TEST(resize, false)
SAMPLE_TEST(nocolor, true)
SAMPLE_TEST(reasons, false)

/* On a terminal that cannot move the cursor (TERM=dumb) the UI drew only its key bar and left it
 * on the screen after q; it is refused as an unknown terminal is, in words, with no escape. */
START_TEST(a_dumb_terminal_is_refused)
{
    int master;
    const char *bin = getenv("LS_BIN") ? getenv("LS_BIN") : "build/lowerscope";
    pid_t pid = forkpty(&master, NULL, NULL, NULL);
    if (pid < 0) {
        tu_skip("no pseudo-terminal (forkpty failed)");
        return;
    }
    if (pid == 0) {
        setenv("TERM", "dumb", 1);
        execl(bin, bin, tu_root("samples/kv_cache.pt2"), (char *)NULL);
        _exit(127);
    }
    char out[8192];
    size_t n = 0;
    struct pollfd pf = {.fd = master, .events = POLLIN};
    while (n < sizeof out - 1 && poll(&pf, 1, 5000) == 1) { /* until the child closes it (EIO) */
        ssize_t got = read(master, out + n, sizeof out - 1 - n);
        if (got <= 0) break;
        n += (size_t)got;
    }
    out[n] = 0;
    int status = 0;
    pid_t done = 0;
    for (int i = 0; i < 50 && (done = waitpid(pid, &status, WNOHANG)) == 0; i++) /* up to 5 s to exit */
        nanosleep(&(struct timespec){0, 100 * 1000 * 1000}, NULL);
    if (done == 0) { /* still running: it opened the UI */
        kill(pid, SIGKILL);
        waitpid(pid, &status, 0);
        ck_abort_msg("the UI started on TERM=dumb: %s", out);
    }
    close(master);
    ck_assert_msg(WIFEXITED(status) && WEXITSTATUS(status) == 2, "status %d: %s", status, out);
    ck_assert_msg(strstr(out, "cannot start the terminal UI: TERM=dumb cannot move the cursor") && !strchr(out, 0x1b),
                  "%s", out);
}
END_TEST

/* SIGTERM and SIGINT end the UI with the terminal restored (the alternate screen left) and the
 * exit a shell gives the signal: 143 and 130 (SIGTERM gave 130, SIGINT's). */
START_TEST(a_signal_ends_the_ui_with_its_code)
{
    const char *bin = getenv("LS_BIN") ? getenv("LS_BIN") : "build/lowerscope";
    static const int sigs[2] = {SIGTERM, SIGINT};
    for (int k = 0; k < 2; k++) {
        int master;
        pid_t pid = forkpty(&master, NULL, NULL, &(struct winsize){.ws_row = 40, .ws_col = 120});
        if (pid < 0) {
            tu_skip("no pseudo-terminal (forkpty failed)");
            return;
        }
        if (pid == 0) {
            setenv("TERM", "xterm", 1);
            execl(bin, bin, tu_root("samples/kv_cache.pt2"), (char *)NULL);
            _exit(127);
        }
        static char out[1 << 16];
        size_t n = 0;
        struct pollfd pf = {.fd = master, .events = POLLIN};
        bool drawn = false, sent = false;
        while (n < sizeof out - 1 && poll(&pf, 1, 10000) == 1) {
            ssize_t got = read(master, out + n, sizeof out - 1 - n);
            if (got <= 0) break;
            n += (size_t)got;
            out[n] = 0;
            drawn = drawn || strstr(out, "Partitions") != NULL;
            if (drawn && !sent) {
                kill(pid, sigs[k]);
                sent = true;
            }
        }
        int status = 0;
        ck_assert_int_eq(waitpid(pid, &status, 0), pid);
        close(master);
        ck_assert_msg(sent, "the first screen never came");
        ck_assert_msg(WIFEXITED(status) && WEXITSTATUS(status) == 128 + sigs[k], "signal %d: status %d", sigs[k], status);
        ck_assert_msg(strstr(out, "\x1b[?1049l"), "signal %d: the alternate screen was not left", sigs[k]);
    }
}
END_TEST

START_TEST(binary_opens_a_sample)
{
    const char *dir = tu_tmpdir();
    char keys[4096], dump[4096];
    snprintf(keys, sizeof keys, "%s/s.keys", dir);
    const char *script = ":step 0\n:goto c\n:save-display s.screen\n?\n:save-display h.screen\n";
    ls_error err;
    ck_assert_int_eq(ls_write_file_atomic(keys, script, strlen(script), &err), 0);
    setenv("LOWERSCOPE_SCRIPT", keys, 1);
    setenv("LOWERSCOPE_DUMP_DIR", dir, 1);
    setenv("LOWERSCOPE_SIZE", "100x30", 1);
    char *out;
    int rc = tu_runf(&out, "%s", tu_root("samples/shared_constant.pt2"));
    ck_assert_msg(rc == 0, "exit %d: %s", rc, out);
    free(out);
    snprintf(dump, sizeof dump, "%s/s.screen", dir);
    char *screen = tu_slurp(dump);
    ck_assert_ptr_nonnull(screen);
    ck_assert_msg(tu_contains(screen, "shared_constant.pt2") && tu_contains(screen, "step 0/") &&
                      tu_contains(screen, "Node c ") && tu_contains(screen, "[const]") && tu_contains(screen, "atan2"),
                  "%s", screen);
    free(screen);
    snprintf(dump, sizeof dump, "%s/h.screen", dir);
    screen = tu_slurp(dump);
    ck_assert_msg(screen && tu_contains(screen, "Help"), "%s", screen ? screen : "no help screen");
    free(screen);
    unsetenv("LOWERSCOPE_SCRIPT");
}
END_TEST

Suite *tui_suite(void)
{
    Suite *s = suite_create("tui");
    TCase *tc = tcase_create("screens");
    tcase_set_timeout(tc, 60);
    tcase_add_test(tc, screen_open);
    tcase_add_test(tc, screen_table);
    tcase_add_test(tc, screen_nav);
    tcase_add_test(tc, screen_run);
    tcase_add_test(tc, screen_parts);
    tcase_add_test(tc, screen_errors);
    tcase_add_test(tc, screen_colors8);
    tcase_add_test(tc, stays_instant_on_100k_nodes);
    tcase_add_test(tc, tab_completion_goes_on_between_keys);
    tcase_add_test(tc, box_layout_draws_what_the_drawing_does);
    tcase_add_test(tc, partgraph_draws_only_the_rows_it_shows);
    tcase_add_test(tc, node_pane_gathers_its_facts_once_per_selection);
    tcase_add_test(tc, bad_script_is_an_error_not_a_crash);
    tcase_add_test(tc, live_history_shows_the_step_being_made);
    tcase_add_test(tc, cli_opens_files_and_reports_errors);
    tcase_add_test(tc, binary_opens_a_sample);
    tcase_add_test(tc, sample_dup);
    tcase_add_test(tc, sample_delegate);
    tcase_add_test(tc, sample_search);
    tcase_add_test(tc, sample_filter);
    tcase_add_test(tc, sample_reasons);
    tcase_add_test(tc, sample_help);
    tcase_add_test(tc, sample_resize);
    tcase_add_test(tc, a_dumb_terminal_is_refused);
    tcase_add_test(tc, a_signal_ends_the_ui_with_its_code);
    tcase_add_test(tc, diff_command_names_a_bad_word);
    tcase_add_test(tc, search_names_a_match_inside_a_module);
    tcase_add_test(tc, entering_a_module_ends_the_search);
    tcase_add_test(tc, the_header_counts_warnings);
    tcase_add_test(tc, enter_on_a_step_opens_its_changes);
    tcase_add_test(tc, sample_nocolor);
    tcase_add_test(tc, screen_kv_run);
    tcase_add_test(tc, screen_structural);
    tcase_add_test(tc, screen_escapes);
    tcase_add_test(tc, screen_long_and_wide_names);
    tcase_add_test(tc, screen_kv_export);
    suite_add_tcase(s, tc);
    return s;
}
