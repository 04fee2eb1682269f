/* The pipeline: options, the plan (per-backend rounds), the history (changes against the step
 * before, reports, errors stop the pipeline), the samples through the default pipeline with the
 * verifier clean at every step, and the passes / partitions / diff commands. */
#include <check.h>
#include <poll.h>
#include <pty.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>
#include <unistd.h>

#include "gen_program.h"
#include "passtest.h"
#include "progress.h"
#include "progfixtures.h"
#include "reader.h"
#include "testutil.h"

START_TEST(options_and_plan)
{
    ls_pipeline_opts o;
    ls_pipeline_opts_init(&o);
    ls_plan_step plan[64];
    uint32_t n = ls_pipeline_plan(&o, plan, 64);
    /* ExecuTorch's default flow: to_edge_transform_and_lower, then to_executorch (no constant
     * propagation: the bundled backend's flow does not run it) */
    ck_assert_uint_eq(n, 8);
    const char *want[] = {"to_edge", "partition", "fold_masks", "duplicate_constants", "to_backend",
                          "to_out_variant", "memory_plan", "emit"};
    for (int i = 0; i < 8; i++) ck_assert_str_eq(plan[i].pass->name, want[i]);
    ck_assert_ptr_null(plan[0].profile);
    ck_assert_ptr_eq(plan[1].profile, ls_profile_bundled());
    /* a backend that folds no masks has no fold_masks step */
    ls_pipeline_opts x;
    ls_pipeline_opts_init(&x);
    ls_error xerr;
    ck_assert_int_eq(ls_pipeline_opt(&x, "--backend", "xnnpack", &xerr), 1);
    n = ls_pipeline_plan(&x, plan, 64);
    ck_assert_uint_eq(n, 7);
    ck_assert_str_eq(plan[1].pass->name, "partition");
    ck_assert_str_eq(plan[2].pass->name, "duplicate_constants");
    ls_pipeline_opts_free(&x);

    char a0[] = "lowerscope", a1[] = "--backend", a2[] = "bundled", a3[] = "FILE", a4[] = "--pipeline=to_edge,partition,to_backend",
         a5[] = "--json";
    char *argv[] = {a0, a1, a2, a3, a4, a5, NULL};
    int argc = 6;
    ls_error err;
    ck_assert_int_eq(ls_pipeline_opts_parse(&o, &argc, argv, &err), 0);
    ck_assert_int_eq(argc, 3);
    ck_assert_str_eq(argv[1], "FILE");
    ck_assert_str_eq(argv[2], "--json");
    ck_assert_uint_eq(o.n_passes, 3);
    ck_assert_uint_eq(o.n_backends, 1);
    /* two backends: the per-backend run repeats */
    const char *json = "{\"name\": \"other\", \"backend_id\": \"OtherBackend\", \"tag_prefix\": \"other\", \"ops\": [\"add\"]}";
    o.backends[o.n_backends++] = pt_profile(json);
    n = ls_pipeline_plan(&o, plan, 64);
    ck_assert_uint_eq(n, 5);
    ck_assert_str_eq(plan[3].pass->name, "partition");
    ck_assert_str_eq(plan[3].profile->name, "other");
    ck_assert_int_eq(ls_pipeline_opt(&o, "--pipeline", "to_edge,frob", &err), -1);
    ck_assert_msg(strstr(err.msg, "unknown pass 'frob' (passes: to_edge, constant_prop"), "%s", err.msg);
    ck_assert_int_eq(ls_pipeline_opt(&o, "--backend", "bundled", &err), -1);
    ck_assert_msg(strstr(err.msg, "given twice"), "%s", err.msg);
    ck_assert_int_eq(ls_pipeline_opt(&o, "--json", NULL, &err), 0);
    ls_pipeline_opts_free(&o);
}
END_TEST

static ls_program *shared_constant(void)
{
    int64_t four = 4;
    ls_builder *b = ls_builder_new("model", LS_DIALECT_ATEN);
    uint32_t c = pt_input(b, "c", LS_IN_CONSTANT_TENSOR, "c", true, LS_DT_F32, 1, &four);
    uint32_t x = pt_input(b, "x", LS_IN_USER_INPUT, NULL, false, LS_DT_F32, 1, &four);
    uint32_t s = pt_bin(b, LS_OP_atan2, c, x);
    uint32_t a = pt_bin(b, LS_OP_add_Tensor, x, c);
    uint32_t m = pt_bin(b, LS_OP_mul_Tensor, a, c);
    uint32_t o[2] = {s, m};
    ls_build_output(b, o, 2, NULL, NULL);
    return ls_builder_finish(b);
}

static const ls_change *find_change(const ls_step *s, ls_change_kind k, const char *program, const char *node)
{
    for (uint32_t i = 0; i < s->n_changes; i++) {
        const ls_change *c = &s->changes[i];
        if (c->kind == k && strcmp(c->node, node) == 0 && ((!program && !c->program) || (program && c->program && strcmp(program, c->program) == 0)))
            return c;
    }
    return NULL;
}

/* The PR's failing case through the default pipeline: every step verifies, the history shares
 * unchanged nodes between steps and records what each step did. */
START_TEST(history_of_shared_constant)
{
    ls_program *p = shared_constant();
    ls_pipeline_opts o;
    ls_pipeline_opts_init(&o);
    ls_history h;
    ls_error err;
    ck_assert_int_eq(ls_pipeline_run(p, &o, &h, &err), 0);
    ls_program_unref(p);
    ck_assert_uint_eq(h.n, 9);
    ck_assert_str_eq(h.steps[0].pass, "load");
    ck_assert_uint_eq(h.steps[0].n_changes, 0);
    for (uint32_t i = 0; i < h.n; i++) {
        ck_assert_msg(!h.steps[i].error, "step %u: %s", i, h.steps[i].error);
        ck_assert_msg(h.steps[i].verify.n_errors == 0, "step %u: %s", i, h.steps[i].verify.v[0].msg);
    }
    ck_assert_str_eq(h.steps[2].detail, "bundled");
    /* duplicate_constants: c_copy_0 added, the CPU keeps c */
    const ls_step *dup = &h.steps[4];
    ck_assert_ptr_nonnull(find_change(dup, LS_CHANGE_ADDED, NULL, "c_copy_0"));
    ck_assert_ptr_nonnull(find_change(dup, LS_CHANGE_CHANGED, NULL, "aten_add_tensor"));
    ck_assert(pt_report_has(&dup->report, "`c` is read by `tag1` (add, mul) and by the CPU "
                                          "(atan2): the CPU keeps `c`, `tag1` gets `c_copy_0`"));
    ck_assert_str_eq(dup->report.v[0].node, "c");
    /* to_backend: the moved nodes appear in the lowered module with the same ids */
    const ls_step *tb = &h.steps[5];
    const ls_change *rem = find_change(tb, LS_CHANGE_REMOVED, NULL, "aten_add_tensor");
    const ls_change *add = find_change(tb, LS_CHANGE_ADDED, "lowered_module_0", "aten_add_tensor");
    ck_assert_ptr_nonnull(rem);
    ck_assert_ptr_nonnull(add);
    ck_assert_uint_eq(rem->node_id, add->node_id);
    ck_assert_ptr_nonnull(find_change(tb, LS_CHANGE_ADDED, NULL, "executorch_call_delegate"));
    /* unchanged nodes are shared between steps */
    ck_assert_ptr_eq(pt_must(h.steps[5].program, "aten_atan2_default"), pt_must(h.steps[4].program, "aten_atan2_default"));
    ck_assert_ptr_eq(pt_must(h.steps[3].program, "x"), pt_must(h.steps[0].program, "x"));
    ck_assert(!pt_target_twice(tb->program));
    ls_history_free(&h);
    ls_pipeline_opts_free(&o);
}
END_TEST

/* A step that leaves the signature and the data alone holds the step before's tables (one
 * array for both); a step that changes one has its own, so the change cannot reach back. */
START_TEST(unchanged_tables_are_shared_between_steps)
{
    ls_program *p = shared_constant();
    ls_pipeline_opts o;
    ls_pipeline_opts_init(&o);
    ls_history h;
    ls_error err;
    ck_assert_int_eq(ls_pipeline_run(p, &o, &h, &err), 0);
    ls_program_unref(p);
    ck_assert_uint_eq(h.n, 9);
    ck_assert_str_eq(h.steps[2].pass, "partition");
    ck_assert_str_eq(h.steps[4].pass, "duplicate_constants");
    ls_program *edge = h.steps[1].program, *part = h.steps[2].program, *fold = h.steps[3].program;
    ls_program *dup = h.steps[4].program;
    /* partition tags nodes and fold_masks folds none here: every table is the one before's */
    for (int w = 0; w < LS_SHARED_TABLES; w++) {
        ck_assert_msg(ls_program_shares_table(part, edge, w), "table %d", w);
        ck_assert_msg(ls_program_shares_table(fold, part, w), "table %d", w);
    }
    ck_assert_ptr_eq(part->inputs, edge->inputs);
    ck_assert_ptr_eq(fold->constants, edge->constants);
    /* duplicate_constants adds c_copy_0's spec and data: its own inputs and data, the outputs shared */
    ck_assert(!ls_program_shares_table(dup, fold, LS_SHARED_INPUTS));
    ck_assert_ptr_ne(dup->inputs, fold->inputs);
    ck_assert_int_ge(ls_program_input_spec(dup, "c_copy_0"), 0);
    ck_assert_int_eq(ls_program_input_spec(fold, "c_copy_0"), -1);
    ck_assert_uint_eq(dup->n_inputs, fold->n_inputs + 1);
    ck_assert(ls_program_shares_table(dup, fold, LS_SHARED_OUTPUTS));
    /* a copy of a shared step changes its own tables, never the steps' */
    uint32_t n_const = fold->n_constants, n_in = fold->n_inputs;
    const char *first = fold->inputs[0].name;
    ls_program *q = ls_program_copy(fold);
    ls_program_put_constant(q, "extra_constant", NULL, fold->constants[0].meta);
    ls_program_set_inputs(q, q->inputs + 1, q->n_inputs - 1);
    ck_assert_uint_eq(q->n_constants, n_const + 1);
    ck_assert_uint_eq(fold->n_constants, n_const);
    ck_assert_uint_eq(part->n_constants, n_const);
    ck_assert_ptr_null(ls_program_constant(part, "extra_constant"));
    ck_assert_uint_eq(fold->n_inputs, n_in);
    ck_assert_ptr_eq(part->inputs[0].name, first);
    ls_program_unref(q);
    /* made its own in place (ls_program_own_table): the step before keeps its entries */
    ls_program_own_table(fold, LS_SHARED_INPUTS);
    ck_assert_ptr_ne(fold->inputs, part->inputs);
    fold->inputs[0].target = ls_intern("changed_in_place");
    ck_assert_ptr_eq(part->inputs[0].target, edge->inputs[0].target);
    ck_assert_ptr_ne(part->inputs[0].target, fold->inputs[0].target);
    ck_assert(ls_program_shares_table(part, edge, LS_SHARED_INPUTS));
    ls_history_free(&h);
    ls_pipeline_opts_free(&o);
}
END_TEST

/* A failing pass records its message in its step and stops the pipeline. */
START_TEST(failing_pass_stops)
{
    ls_program *p = shared_constant();
    pt_tag(p, "output", "tag0");
    ls_pipeline_opts o;
    ls_pipeline_opts_init(&o);
    ls_error err;
    ck_assert_int_eq(ls_pipeline_opt(&o, "--pipeline", "to_backend,to_edge", &err), 1);
    ls_history h;
    ck_assert_int_eq(ls_pipeline_run(p, &o, &h, &err), 0);
    ck_assert_uint_eq(h.n, 2);
    ck_assert_str_eq(h.steps[1].error, "output node output should not be tagged");
    ck_assert_ptr_eq(h.steps[1].program, p);
    ls_history_free(&h);
    ls_pipeline_opts_free(&o);
    ls_program_unref(p);
}
END_TEST

/* A watched run (the UI's thread): every step is named before the first runs, step_done sees
 * step k complete and unpublished (n == k), the stop flag ends the run between steps, and a
 * run that stops early says it is done with what it made. */
typedef struct watch_log {
    uint32_t begun[16], done[16], n_begun, n_done;
    bool names_known, unpublished, stop;
    uint32_t stop_after;
} watch_log;

static void on_begin(void *ctx, const ls_history *h, uint32_t k, double seconds)
{
    watch_log *w = ctx;
    w->begun[w->n_begun++] = k;
    ck_assert(seconds >= 0);
    w->names_known &= h->steps[h->n_planned - 1].pass == ls_intern("emit") && h->n == k;
}

static void on_done(void *ctx, const ls_history *h, uint32_t k)
{
    watch_log *w = ctx;
    w->done[w->n_done++] = k;
    w->unpublished &= h->n == k && (h->steps[k].program != NULL);
    if (k == w->stop_after) w->stop = true;
}

START_TEST(watched_run_publishes_step_by_step)
{
    ls_program *p = shared_constant();
    ls_pipeline_opts o;
    ls_pipeline_opts_init(&o);
    watch_log w = {.names_known = true, .unpublished = true, .stop_after = 99};
    ls_pipeline_watch watch = {.step_begin = on_begin, .step_done = on_done, .ctx = &w, .stop = &w.stop};
    o.watch = &watch;
    ls_history h;
    ls_error err;
    ck_assert_int_eq(ls_pipeline_run(p, &o, &h, &err), 0);
    ls_plan_step plan[64];
    uint32_t steps = ls_pipeline_plan(&o, plan, 64) + 1; /* the load, then one step per pass */
    ck_assert_uint_eq(w.n_done, steps);
    ck_assert_uint_eq(w.n_begun, steps - 1);
    for (uint32_t i = 0; i < steps; i++) ck_assert_uint_eq(w.done[i], i);
    ck_assert_uint_eq(w.begun[0], 1);
    ck_assert(w.names_known);
    ck_assert(w.unpublished);
    bool done;
    ck_assert_uint_eq(ls_history_ready(&h, &done), steps);
    ck_assert(done);
    ck_assert_uint_eq(h.n_planned, steps);
    ls_history_free(&h);
    /* stopped after step 3: four steps, done, the plan shrinks to what was made */
    w = (watch_log){.names_known = true, .unpublished = true, .stop_after = 3};
    ck_assert_int_eq(ls_pipeline_run(p, &o, &h, &err), 0);
    ck_assert_uint_eq(ls_history_ready(&h, &done), 4);
    ck_assert(done);
    ck_assert_uint_eq(h.n_planned, 4);
    ck_assert_str_eq(h.steps[3].pass, plan[2].pass->name);
    ls_history_free(&h);
    /* a history built by hand, with no plan, is complete; an empty one is not yet */
    ls_history hand = {.n = 1};
    ck_assert_uint_eq(ls_history_ready(&hand, &done), 1);
    ck_assert(done);
    ls_history empty = {0};
    ck_assert_uint_eq(ls_history_ready(&empty, &done), 0);
    ck_assert(!done);
    ls_pipeline_opts_free(&o);
    ls_program_unref(p);
}
END_TEST

/* Progress reports: a streamed load says how many bytes of its text it has read (every 4096
 * nodes), a watched pipeline each step as it begins. */
typedef struct progress_log {
    uint32_t reads, steps;
    uint64_t last_done, total;
    bool monotonic;
    char first_step[128];
} progress_log;

static void on_progress(void *ctx, const char *what, uint64_t done, uint64_t total)
{
    progress_log *l = ctx;
    if (!strncmp(what, "reading ", 8)) {
        l->monotonic &= done >= l->last_done && done <= total;
        l->last_done = done;
        l->total = total;
        l->reads++;
    } else if (!strncmp(what, "step ", 5)) {
        if (!l->steps++) snprintf(l->first_step, sizeof l->first_step, "%s", what);
    }
}

START_TEST(progress_of_a_load_and_a_pipeline)
{
    progress_log log = {.monotonic = true};
    ls_progress_set(on_progress, &log);
    ls_gen_opts g = ls_gen_defaults(20000);
    size_t len;
    char *json = ls_gen_json(&g, &len);
    ls_program *p;
    ls_error err;
    ck_assert_int_eq(ls_load_json("gen.json", json, len, NULL, &p, &err), 0);
    free(json);
    ck_assert_uint_ge(log.reads, 4); /* 20000 nodes: at 0, 4096, 8192, ... */
    ck_assert(log.monotonic);
    ck_assert_uint_eq(log.total, len);
    ls_pipeline_opts o;
    ls_pipeline_opts_init(&o);
    ls_pipeline_watch w = {.step_begin = ls_progress_step};
    o.watch = &w;
    ls_history h;
    ck_assert_int_eq(ls_pipeline_run(p, &o, &h, &err), 0);
    ck_assert_uint_eq(log.steps, h.n - 1);
    ls_plan_step plan[64];
    ck_assert_str_eq(log.first_step, ls_internf("step 1 of %u: to_edge", ls_pipeline_plan(&o, plan, 64)));
    ls_progress_set(NULL, NULL);
    ls_history_free(&h);
    ls_pipeline_opts_free(&o);
    ls_program_unref(p);
}
END_TEST

/* A load given up (ls_cancel_on, as the compare screen's job is when the user leaves it): the
 * flag set at the report of node 4096, the load stops at that same check and says why; with no
 * flag on the thread the same text loads. */
typedef struct cancel_log {
    progress_log log;
    bool stop;
} cancel_log;

static void cancel_at_second_report(void *ctx, const char *what, uint64_t done, uint64_t total)
{
    cancel_log *c = ctx;
    on_progress(&c->log, what, done, total);
    if (c->log.reads == 2) c->stop = true;
}

START_TEST(cancelled_load_stops_at_its_next_report)
{
    cancel_log c = {.log = {.monotonic = true}};
    ls_progress_set(cancel_at_second_report, &c);
    ls_cancel_on(&c.stop);
    ls_gen_opts g = ls_gen_defaults(20000);
    size_t len;
    char *json = ls_gen_json(&g, &len);
    ls_program *p = NULL;
    ls_error err = {0};
    ck_assert_int_ne(ls_load_json("gen.json", json, len, NULL, &p, &err), 0);
    ck_assert_ptr_null(p);
    ck_assert_msg(strstr(err.msg, "gen.json") && strstr(err.msg, "the load was cancelled"), "%s", err.msg);
    ck_assert_uint_eq(c.log.reads, 2); /* nodes 0 and 4096: the second report set it, its check saw it */
    ls_cancel_on(NULL);
    ls_progress_set(NULL, NULL);
    ck_assert_int_eq(ls_load_json("gen.json", json, len, NULL, &p, &err), 0);
    ck_assert_uint_gt(p->n_nodes, 20000);
    ls_program_unref(p);
    free(json);
}
END_TEST

/* Where a step of one lowering stands in another (ls_history_same_pass_step): the same pass in
 * the same round (it took the last round, so a first round faced the other's last); fewer rounds
 * there, its last of that pass; no such pass there, its last step. */
START_TEST(same_pass_step_keeps_the_round)
{
    static const char *const two[] = {"load", "to_edge", "partition", "to_backend", "partition", "to_backend", "emit"};
    static const char *const one[] = {"load", "to_edge", "partition", "to_backend", "emit"};
    static const char *const none[] = {"load", "to_edge", "emit"};
    ls_step a[7] = {{0}}, b[5] = {{0}}, c[3] = {{0}};
    for (int i = 0; i < 7; i++) a[i].pass = two[i];
    for (int i = 0; i < 5; i++) b[i].pass = one[i];
    for (int i = 0; i < 3; i++) c[i].pass = none[i];
    ls_history h2 = {.steps = a, .n = 7}, h1 = {.steps = b, .n = 5}, h0 = {.steps = c, .n = 3};
    ck_assert_uint_eq(ls_history_same_pass_step(&h2, 2, &h2), 2); /* first partition: the first */
    ck_assert_uint_eq(ls_history_same_pass_step(&h2, 3, &h2), 3);
    ck_assert_uint_eq(ls_history_same_pass_step(&h2, 5, &h2), 5);
    ck_assert_uint_eq(ls_history_same_pass_step(&h2, 4, &h1), 2); /* a second round there is not: its last */
    ck_assert_uint_eq(ls_history_same_pass_step(&h1, 3, &h2), 3); /* the first round's to_backend */
    ck_assert_uint_eq(ls_history_same_pass_step(&h2, 6, &h1), 4); /* emit beside emit */
    ck_assert_uint_eq(ls_history_same_pass_step(&h2, 2, &h0), 2); /* no partition there: its last step */
}
END_TEST

/* The terminal's progress line: the figures always fit in the columns, the text before them
 * gives up its end, a step says how long it has taken once a second has passed. */
START_TEST(progress_line_fits_its_columns)
{
    char line[200];
    ls_progress_line(line, sizeof line, 50, "reading /a/rather/long/path/to/gen1000000.pt2: models/model.json",
                     34000000, 80000000, 0);
    ck_assert_str_eq(line, "lowerscope: reading /a/rathe...: 42% (34 of 80 MB)");
    ck_assert_uint_le(strlen(line), 50);
    ls_progress_line(line, sizeof line, 79, "step 5 of 8: to_backend (bundled)", 0, 0, 0.4);
    ck_assert_str_eq(line, "lowerscope: step 5 of 8: to_backend (bundled)");
    ls_progress_line(line, sizeof line, 79, "step 5 of 8: to_backend (bundled)", 0, 0, 12.6);
    ck_assert_str_eq(line, "lowerscope: step 5 of 8: to_backend (bundled) (13 s)");
    ls_progress_line(line, sizeof line, 79, "reading a\033]0;x\007.pt2", 1, 2, 0);
    ck_assert_str_eq(line, "lowerscope: reading a?]0;x?.pt2: 50% (0 of 0 MB)");
}
END_TEST

/* On a terminal, a step that reports once when it begins is drawn once the delay has passed,
 * while it is still running, and the line is cleared at the end; not on a pipe. */
START_TEST(progress_line_drawn_while_a_step_runs)
{
    int master, slave;
    if (openpty(&master, &slave, NULL, NULL, NULL) != 0) {
        tu_skip("no pseudo-terminal (openpty failed)");
        return;
    }
    ls_progress_tty_begin_on(slave, 0.2);
    ls_progress("step 1 of 3: to_edge", 0, 0); /* before the delay: not drawn yet */
    struct timespec wait = {1, 500 * 1000 * 1000};
    nanosleep(&wait, NULL); /* the step still runs: the ticker draws it */
    ls_progress_tty_end();
    char out[8192];
    size_t n = 0;
    struct pollfd pf = {.fd = master, .events = POLLIN};
    while (n < sizeof out - 1 && poll(&pf, 1, 200) == 1) { /* all the terminal got, in as many reads */
        ssize_t got = read(master, out + n, sizeof out - 1 - n);
        if (got <= 0) break;
        n += (size_t)got;
    }
    ck_assert_uint_gt(n, 0);
    out[n] = 0;
    ck_assert_ptr_nonnull(strstr(out, "\rlowerscope: step 1 of 3: to_edge (1 s)"));
    ck_assert_str_eq(out + n - 1, "\r"); /* cleared: spaces, back to the start */
    close(master);
    close(slave);
    int fds[2];
    ck_assert_int_eq(pipe(fds), 0);
    ls_progress_tty_begin_on(fds[1], 0);
    ls_progress("step 1 of 3: to_edge", 0, 0);
    nanosleep(&(struct timespec){0, 300 * 1000 * 1000}, NULL);
    ls_progress_tty_end();
    close(fds[1]);
    ck_assert_int_eq(read(fds[0], out, sizeof out), 0); /* nothing written to a pipe */
    close(fds[0]);
}
END_TEST

/* The samples of the foundation issue through the default pipeline: the verifier is clean at
 * every step, no program lists a target twice at the end. */
START_TEST(samples_through_default_pipeline)
{
    for (size_t k = 0; k < PF_N_SAMPLES; k++) {
        const char *name = pf_samples[k].name;
        ls_program *p = pf_sample(name);
        ls_error err;
        ls_pipeline_opts o;
        ls_pipeline_opts_init(&o);
        ls_history h;
        ck_assert_int_eq(ls_pipeline_run(p, &o, &h, &err), 0);
        ck_assert_uint_eq(h.n, 9);
        for (uint32_t i = 0; i < h.n; i++) {
            ck_assert_msg(!h.steps[i].error, "%s step %u: %s", name, i, h.steps[i].error);
            ck_assert_msg(h.steps[i].verify.n_errors == 0, "%s step %u (%s): %s", name, i, h.steps[i].pass,
                          h.steps[i].verify.v[0].msg);
        }
        const ls_program *last = h.steps[h.n - 1].program;
        ck_assert_msg(last->n_subs >= 1, "%s: nothing lowered", name);
        ck_assert(!pt_target_twice(last));
        if (strcmp(name, "two_delegates") == 0) ck_assert_uint_eq(last->n_subs, 2);
        if (strcmp(name, "kv_cache") == 0) {
            char *ops = pt_call_ops(last);
            ck_assert_str_eq(ops, "executorch_call_delegate,getitem");
            free(ops);
        }
        ls_history_free(&h);
        ls_pipeline_opts_free(&o);
        ls_program_unref(p);
    }
}
END_TEST

/* folded_output with constant_prop alone keeps the ATen dialect: the clone is aten.clone. */
START_TEST(folded_output_sample_aten_clone)
{
    ls_program *p;
    ls_error err;
    if (ls_load(tu_root("samples/folded_output.pt2"), NULL, &p, &err) != 0) ck_abort_msg("%s", err.msg);
    ls_pipeline_opts o;
    ls_pipeline_opts_init(&o);
    ck_assert_int_eq(ls_pipeline_opt(&o, "--pipeline", "constant_prop", &err), 1);
    ls_history h;
    ck_assert_int_eq(ls_pipeline_run(p, &o, &h, &err), 0);
    ck_assert_uint_eq(h.steps[1].verify.n_errors, 0);
    const ls_node *cl = pt_must(h.steps[1].program, "clone");
    ck_assert_str_eq(cl->target, "torch.ops.aten.clone.default");
    ck_assert(pt_report_has(&h.steps[1].report, "`clone` (aten.clone.default) added before output 1"));
    ls_history_free(&h);
    ls_pipeline_opts_free(&o);
    ls_program_unref(p);
}
END_TEST

/* Two verifier results list the same findings in the same order. */
static void same_findings(const ls_verify_result *a, const ls_verify_result *b)
{
    ck_assert_uint_eq(a->n, b->n);
    ck_assert_uint_eq(a->n_errors, b->n_errors);
    for (uint32_t i = 0; i < a->n; i++) {
        ck_assert_uint_eq(a->v[i].severity, b->v[i].severity);
        ck_assert_ptr_eq(a->v[i].program, b->v[i].program);
        ck_assert_ptr_eq(a->v[i].node, b->v[i].node);
        ck_assert_str_eq(a->v[i].msg, b->v[i].msg);
    }
}

/* Replaces the program of a submodule (the caller's reference is taken). */
static void set_sub_program(ls_program *p, uint32_t i, ls_program *sub)
{
    ls_program_unref(p->subs[i].program);
    p->subs[i].program = sub;
}

/* ls_verify_next: a submodule the step before holds as the same program keeps its findings, a
 * replaced one is checked again; either way the findings are ls_verify's. */
START_TEST(verify_next_reuses_shared_submodules)
{
    ls_program *p;
    ls_error err;
    if (ls_load(tu_root("samples/two_delegates.pt2"), NULL, &p, &err) != 0) ck_abort_msg("%s", err.msg);
    ls_pipeline_opts o;
    ls_pipeline_opts_init(&o);
    ls_history h;
    ck_assert_int_eq(ls_pipeline_run(p, &o, &h, &err), 0);
    const ls_program *lowered = h.steps[5].program;
    ck_assert_str_eq(h.steps[5].pass, "to_backend");
    ck_assert_uint_eq(lowered->n_subs, 2);
    /* a: lowered_module_1 loses its first placeholder (its readers now read nothing) */
    ls_program *broken = ls_program_copy(lowered->subs[1].program);
    ls_program_remove(broken, 0);
    ls_program *a = ls_program_copy(lowered);
    set_sub_program(a, 1, broken);
    ls_verify_result ra, rb, rb_fresh, rc, rc_fresh;
    ls_verify(a, &ra);
    ck_assert_uint_gt(ra.n_errors, 0);
    ck_assert_str_eq(ra.v[0].program, "lowered_module_1");
    /* b shares both submodules with a: the findings come over */
    ls_program *b = ls_program_copy(a);
    ls_verify_next(b, a, &ra, &rb);
    ls_verify(b, &rb_fresh);
    same_findings(&rb, &rb_fresh);
    same_findings(&rb, &ra);
    /* d changes the top level only: both submodules keep their findings */
    ls_program *d = ls_program_copy(a);
    ls_program_edit(d, 0)->name = ls_intern("renamed_first_node");
    ls_verify_result rd, rd_fresh;
    ls_verify_next(d, a, &ra, &rd);
    ls_verify(d, &rd_fresh);
    same_findings(&rd, &rd_fresh);
    ck_assert_uint_gt(rd.n, ra.n); /* the renamed placeholder no longer matches its spec */
    ls_verify_result_free(&rd);
    ls_verify_result_free(&rd_fresh);
    ls_program_unref(d);
    /* c repairs lowered_module_1 and breaks lowered_module_0 */
    ls_program *c = ls_program_copy(a);
    set_sub_program(c, 1, ls_program_ref(lowered->subs[1].program));
    ls_program *broken0 = ls_program_copy(lowered->subs[0].program);
    ls_program_remove(broken0, 0);
    set_sub_program(c, 0, broken0);
    ls_verify_next(c, a, &ra, &rc);
    ls_verify(c, &rc_fresh);
    same_findings(&rc, &rc_fresh);
    ck_assert_uint_gt(rc.n_errors, 0);
    ck_assert_str_eq(rc.v[0].program, "lowered_module_0");
    /* the pipeline's own results are what ls_verify finds */
    for (uint32_t i = 0; i < h.n; i++) {
        ls_verify_result fresh;
        ls_verify(h.steps[i].program, &fresh);
        same_findings(&h.steps[i].verify, &fresh);
        ls_verify_result_free(&fresh);
    }
    ls_verify_result_free(&ra);
    ls_verify_result_free(&rb);
    ls_verify_result_free(&rb_fresh);
    ls_verify_result_free(&rc);
    ls_verify_result_free(&rc_fresh);
    ls_program_unref(a);
    ls_program_unref(b);
    ls_program_unref(c);
    ls_history_free(&h);
    ls_pipeline_opts_free(&o);
    ls_program_unref(p);
}
END_TEST

START_TEST(cli_passes_partitions_diff)
{
    const char *sample = tu_root("samples/shared_constant.pt2");
    char *out;
    ck_assert_int_eq(tu_runf(&out, "passes %s", sample), 0);
    ck_assert_msg(tu_contains(out, "step 4 duplicate_constants (bundled)"), "%s", out);
    ck_assert(tu_contains(out, "the CPU keeps `c`, `tag1` gets `c_copy_0`"));
    free(out);
    ck_assert_int_eq(tu_runf(&out, "passes %s --json", sample), 0);
    ck_assert(tu_contains(out, "\"format\": \"lowerscope-passes\", \"format_version\": 1"));
    ck_assert(tu_contains(out, "\"verify\": {\"ok\": true"));
    ck_assert(tu_contains(out, "{\"name\": \"lowered_module_0\", \"backend\": \"BundledBackend\""));
    ck_assert(tu_contains(out, "{\"name\": \"c_copy_0\", \"kind\": \"tensor_constant\", \"target\": \"c_copy_0\", \"tag\": \"tag1\""));
    free(out);
    ck_assert_int_eq(tu_runf(&out, "partitions %s --step partition", sample), 0);
    ck_assert_msg(tu_contains(out, "atan2"), "%s", out);
    ck_assert(tu_contains(out, "op not supported"));
    ck_assert(tu_contains(out, "66.7%"));
    free(out);
    ck_assert_int_eq(tu_runf(&out, "partitions %s --json", sample), 0);
    ck_assert(tu_contains(out, "\"format\": \"lowerscope-partitions\""));
    ck_assert(tu_contains(out, "\"by_backend\": {\"BundledBackend\": 1}"));
    free(out);
    ck_assert_int_eq(tu_runf(&out, "diff %s --step duplicate_constants", sample), 0);
    ck_assert_msg(tu_contains(out, "+ c_copy_0: placeholder tensor_constant c_copy_0 [tag1]"), "%s", out);
    ck_assert(tu_contains(out, "~ aten_add_tensor: edge.aten.add.Tensor(x, c_copy_0) [tag1]"));
    free(out);
    ck_assert_int_eq(tu_runf(&out, "diff %s --step 10", sample), 2);
    free(out);
    ck_assert_int_eq(tu_runf(&out, "passes %s --pipeline to_edge,nope", sample), 2);
    ck_assert(tu_contains(out, "unknown pass 'nope'"));
    free(out);
}
END_TEST

/* One way to name a step, for the CLI's --step and the UI's --step and :step: a number, a pass
 * (its last step) or pass:backend; anything else is refused with the steps there are. */
START_TEST(steps_are_found_by_number_pass_or_backend)
{
    ls_program *p = pf_sample("two_delegates");
    ls_pipeline_opts po;
    ls_pipeline_opts_init(&po);
    ls_error err;
    ck_assert_int_eq(ls_pipeline_opt(&po, "--backend", tu_root("samples/backends/arith.json"), &err), 1);
    ck_assert_int_eq(ls_pipeline_opt(&po, "--backend", "bundled", &err), 1);
    ls_history h;
    ck_assert_msg(ls_pipeline_run(p, &po, &h, &err) == 0, "%s", err.msg);
    ck_assert_int_eq(ls_history_find_step(&h, "0", &err), 0);
    int last_partition = ls_history_find_step(&h, "partition", &err);
    ck_assert_int_gt(last_partition, 0);
    ck_assert_str_eq(h.steps[last_partition].pass, "partition");
    ck_assert_str_eq(h.steps[last_partition].detail, "bundled"); /* the second round's */
    int arith = ls_history_find_step(&h, "partition:arith", &err);
    ck_assert_int_gt(arith, 0);
    ck_assert_int_lt(arith, last_partition);
    ck_assert_str_eq(h.steps[arith].detail, "arith");
    ck_assert_int_eq(ls_history_find_step(&h, "partition:bundled", &err), last_partition);
    ck_assert_int_eq(ls_history_find_step(&h, "99", &err), -1);
    ck_assert_msg(strstr(err.msg, "steps 0 to"), "%s", err.msg);
    ck_assert_int_eq(ls_history_find_step(&h, "nope", &err), -1);
    ck_assert_msg(strstr(err.msg, "no such step"), "%s", err.msg);
    ls_history_free(&h);
    ls_pipeline_opts_free(&po);
    ls_program_unref(p);
    /* the UI refuses a step it cannot find instead of opening another one */
    char *out;
    ck_assert_int_eq(tu_runf(&out, "%s --step nope", tu_root("samples/shared_constant.pt2")), 2);
    ck_assert_msg(strstr(out, "--step nope: no such step"), "%s", out);
    free(out);
}
END_TEST

Suite *pipeline_suite(void)
{
    Suite *s = suite_create("pipeline");
    TCase *tc = tcase_create("pipeline");
    tcase_set_timeout(tc, 60);
    tcase_add_test(tc, options_and_plan);
    tcase_add_test(tc, history_of_shared_constant);
    tcase_add_test(tc, unchanged_tables_are_shared_between_steps);
    tcase_add_test(tc, failing_pass_stops);
    tcase_add_test(tc, watched_run_publishes_step_by_step);
    tcase_add_test(tc, progress_of_a_load_and_a_pipeline);
    tcase_add_test(tc, cancelled_load_stops_at_its_next_report);
    tcase_add_test(tc, same_pass_step_keeps_the_round);
    tcase_add_test(tc, progress_line_fits_its_columns);
    tcase_add_test(tc, progress_line_drawn_while_a_step_runs);
    tcase_add_test(tc, steps_are_found_by_number_pass_or_backend);
    tcase_add_test(tc, samples_through_default_pipeline);
    tcase_add_test(tc, folded_output_sample_aten_clone);
    tcase_add_test(tc, verify_next_reuses_shared_submodules);
    tcase_add_test(tc, cli_passes_partitions_diff);
    suite_add_tcase(s, tc);
    return s;
}
