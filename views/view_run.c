/* The run screen (`r`, `:run [FILE.npy ...]`): runs the program at the current step with the
 * bundled runtime and shows the inputs, the outputs, each compared with the loaded program's
 * on the same inputs (compare.h), the state tensors (a delegate's by name) with their first
 * values, and where the time went. `r` on the screen runs again, state carrying over on both
 * sides, as `lowerscope run --steps N --compare` does. Errors are shown here, never fatal. In
 * scripted mode times are masked (—) so screen dumps stay stable. */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "compare.h"
#include "node_stats.h"
#include "npy.h"
#include "runtime.h"
#include "ui.h"

#define MAX_NPY 16

/* What carries from one run to the next: the program's runner and the reference's. */
struct ui_run_session {
    const ls_history *h;
    uint32_t step;
    char args[512];        /* the .npy files of :run */
    ls_runner *r;          /* NULL: the program cannot run (error says why) */
    char *error;
    ls_compare_run *cmp;   /* NULL at step 0 (the program is the reference) or when the reference cannot run */
    char *cmp_error;
    int64_t runs;
    ls_node_stats nodes;   /* what each node measured over the runs (the graph pane's overlay) */
};

void ui_run_session_free(ui_run_session *s)
{
    if (!s) return;
    ls_compare_run_free(s->cmp);
    ls_runner_free(s->r);
    ls_node_stats_free(&s->nodes);
    free(s->error);
    free(s->cmp_error);
    free(s);
}

static ui_run_session *session_new(ui *u)
{
    ui_run_session *s = ls_calloc(1, sizeof *s);
    s->h = u->h;
    s->step = u->step;
    snprintf(s->args, sizeof s->args, "%s", u->run_args);
    const ls_program *p = u->h->steps[u->step].program;
    ls_error err = {0};
    if (u->h->not_run) { /* the runtime, like a pass, needs a well-formed program */
        s->error = ls_strdup(u->h->not_run);
        return s;
    }
    if (!(s->r = ls_runner_new(p, &err))) {
        s->error = ls_strdup(err.msg);
        return s;
    }
    if (u->step > 0) {
        ls_compare_opts o = {-1, -1};
        if (!(s->cmp = ls_compare_run_new(u->h->steps[0].program, p, "the loaded program", &o, &err)))
            s->cmp_error = ls_strdup(err.msg);
    }
    /* node by node: time and range always, the difference when there is a reference */
    ls_node_stats_init(&s->nodes, p, "bundled runtime");
    ls_runner_observe(s->r, &s->nodes, s->cmp != NULL);
    if (s->cmp) ls_compare_run_nodes(s->cmp, &s->nodes);
    return s;
}

bool ui_run_can_run(const ui *u)
{
    return u->run && u->run->r;
}

const ls_node_stats *ui_run_stats(const ui *u)
{
    const ui_run_session *s = u->run;
    return s && s->h == u->h && s->step == u->step && s->r && s->nodes.runs ? &s->nodes : NULL;
}

/* Where the values first part from the loaded program's, node by node. */
static void show_nodes(ui *u, ui_lines *out)
{
    const ls_node_stats *ns = &u->run->nodes;
    uint32_t compared, differ = ls_node_stats_differing(ns, &compared);
    if (!compared) return;
    int32_t first = ls_node_stats_divergence(ns, -1, 1);
    if (first < 0)
        ui_lines_add(out, UI_R_OK, -1, "node by node: %u node%s compared with the loaded program's, none differs", compared, compared == 1 ? "" : "s");
    else {
        ui_line *ln = ui_lines_add(out, UI_R_ERROR, -1, "node by node: %u of %u nodes differ; the first: %s (max abs %.3g) — ] in the graph",
                                   differ, compared, ns->program->nodes[first]->name, ns->v[first].max_abs);
        ln->jump_node = ns->program->nodes[first]->name;
        ln->has_jump = true;
    }
}

/* The label column of a block of values: as wide as its widest label (12 to 40), so the types
 * line up under one another (a 12-column one let aten_atan2_default push its type out of line). */
static int label_width(const char *const *labels, uint32_t n)
{
    int w = 12;
    for (uint32_t i = 0; i < n; i++) {
        int l = labels[i] ? ui_text_width(labels[i]) : 0;
        if (l > w) w = l;
    }
    return w < 40 ? w : 40;
}

static void show_value(ui_lines *out, const char *label, int label_w, const ls_value *v, int color)
{
    if (v->kind == LS_V_TENSOR && v->t) {
        ls_buf b = {0};
        ls_tmeta m;
        char t[128];
        ls_tensor_meta(v->t, &m);
        ls_tensor_preview(v->t, 8, &b);
        ui_lines_add(out, UI_R_NORMAL, color, "  %-*s %-16s %s", label_w, label, ls_tmeta_str(&m, t, sizeof t), b.s);
        ls_buf_free(&b);
    } else {
        ls_buf text = {0};
        ls_value_scalar_text(v, &text);
        ui_lines_add(out, UI_R_NORMAL, color, "  %-*s %s", label_w, label, text.s);
        ls_buf_free(&text);
    }
}

/* "    vs mm: max abs 0, max rel 0 (rtol 1e-5, atol 1e-6): ok" */
static void show_diff(ui_lines *out, const ls_compare_item *it)
{
    char tol[64];
    ls_compare_tolerance_text(it->rtol, it->atol, tol, sizeof tol);
    ui_lines_add(out, it->d.pass ? UI_R_OK : UI_R_ERROR, -1, "    vs %s: max abs %.3g, max rel %.3g (%s): %s%s",
                 it->ref_name ? it->ref_name : "?", it->d.max_abs, it->d.max_rel, tol, it->d.pass ? "ok" : "DIFFERS: ",
                 it->d.pass ? "" : it->d.why);
}

static void time_text(const ui *u, double seconds, char *buf, size_t cap)
{
    if (u->script) snprintf(buf, cap, "—");
    else snprintf(buf, cap, "%.3f ms", seconds * 1e3);
}

/* Reads the .npy files of :run, else makes seeded inputs (seed 0, the run number as step). */
static int make_inputs(ui *u, const ls_program *p, int64_t run, ls_value **in, uint32_t *n_in, ui_lines *out)
{
    ls_error err = {0};
    char args[sizeof u->run_args];
    const char *npy[MAX_NPY];
    int n_npy = 0;
    snprintf(args, sizeof args, "%s", u->run->args);
    for (char *s = args, *tok; (tok = strtok_r(s, " ", &s)) && n_npy < MAX_NPY;) npy[n_npy++] = tok;
    *in = NULL;
    *n_in = 0;
    if (!n_npy) {
        if (ls_make_inputs(p, 0, run, in, n_in, &err) == 0) return 0;
        ui_lines_add_wrapped(out, UI_R_ERROR, err.msg, u->cols - 4);
        return -1;
    }
    *in = ls_calloc((size_t)n_npy, sizeof **in);
    for (int i = 0; i < n_npy; i++) {
        ls_tensor *t;
        if (ls_npy_load(npy[i], &t, &err) != 0) {
            ui_lines_add_wrapped(out, UI_R_ERROR, err.msg, u->cols - 4);
            for (uint32_t k = 0; k < *n_in; k++) ls_value_release(&(*in)[k]);
            free(*in);
            *in = NULL;
            *n_in = 0;
            return -1;
        }
        (*in)[(*n_in)++] = ls_value_tensor(t);
    }
    return 0;
}

/* A state tensor of two or more dimensions by rows (its last dimension a row): a KV cache's
 * filled rows show as they fill, and runs of rows that are all zero fold into one line. */
#define MAX_STATE_ROWS 12
static void show_rows(ui_lines *out, const char *label, const ls_tensor *t, int color)
{
    ls_tmeta m;
    char type[128];
    ls_tensor_meta(t, &m);
    ui_lines_add(out, UI_R_NORMAL, color, "  %-12s %s", label, ls_tmeta_str(&m, type, sizeof type));
    int64_t cols = t->ndim ? t->sizes[t->ndim - 1] : 1, rows = cols > 0 ? t->numel / cols : 0, shown = 0;
    for (int64_t r = 0; r < rows && shown < MAX_STATE_ROWS;) {
        bool zero = true;
        for (int64_t c = 0; c < cols && zero; c++) zero = ls_tensor_get_f64(t, r * cols + c) == 0;
        if (zero) { /* the run of zero rows from here */
            int64_t end = r + 1;
            for (; end < rows; end++) {
                bool z = true;
                for (int64_t c = 0; c < cols && z; c++) z = ls_tensor_get_f64(t, end * cols + c) == 0;
                if (!z) break;
            }
            if (end - r == 1) ui_lines_add(out, UI_R_DIM, color, "    [%lld] all 0", (long long)r);
            else ui_lines_add(out, UI_R_DIM, color, "    [%lld..%lld] all 0", (long long)r, (long long)end - 1);
            r = end;
            shown++;
            continue;
        }
        ls_buf b = {0};
        for (int64_t c = 0; c < cols && c < 8; c++) ls_buf_printf(&b, "%s%g", c ? ", " : "", ls_tensor_get_f64(t, r * cols + c));
        if (cols > 8) ls_buf_printf(&b, ", … (%lld)", (long long)cols);
        ui_lines_add(out, UI_R_NORMAL, color, "    [%lld] %s", (long long)r, b.s);
        ls_buf_free(&b);
        r++;
        shown++;
    }
    if (shown >= MAX_STATE_ROWS && rows > MAX_STATE_ROWS) ui_lines_add(out, UI_R_DIM, color, "    … %lld rows in all", (long long)rows);
}

static void show_state(ui *u, const ls_program *p, ui_lines *out)
{
    ui_run_session *s = u->run;
    uint32_t ns = ls_runner_state_count(s->r), n_cmp = 0;
    const ls_compare_item *cmp = s->cmp ? ls_compare_run_states(s->cmp, &n_cmp) : NULL;
    if (ns || n_cmp) ui_lines_add(out, UI_R_TITLE, -1, "state after run %lld", (long long)s->runs);
    const char *state_labels[64];
    for (uint32_t i = 0; i < ns && i < 64; i++) state_labels[i] = ls_runner_state_name(s->r, i);
    int label_w = label_width(state_labels, ns < 64 ? ns : 64);
    for (uint32_t i = 0; i < ns; i++) {
        const char *name = ls_runner_state_name(s->r, i);
        const char *slash = strchr(name, '/');
        int color = slash ? ui_tag_index(u, ui_sub_tag(u, p, ls_intern_n(name, (size_t)(slash - name)))) : -1;
        ls_value v = {.kind = LS_V_TENSOR, .t = ls_runner_state(s->r, i)};
        if (v.t && v.t->ndim >= 2) show_rows(out, name, v.t, color);
        else show_value(out, name, label_w, &v, color);
        for (uint32_t k = 0; k < n_cmp; k++)
            if (cmp[k].name && cmp[k].index == i && cmp[k].run >= 0) {
                if (cmp[k].compared) show_diff(out, &cmp[k]);
                else ui_lines_add(out, UI_R_DIM, -1, "    the loaded program keeps no state of this target");
            }
    }
    for (uint32_t k = 0; k < n_cmp; k++) /* states the loaded program has and this step lost */
        if (!cmp[k].name && cmp[k].run >= 0) ui_lines_add(out, UI_R_ERROR, -1, "  %s: %s", cmp[k].ref_name, cmp[k].d.why);
}

static void show_time(ui *u, const ls_program *p, ui_lines *out)
{
    ui_run_session *s = u->run;
    char t[32];
    const ls_run_stats *st = ls_runner_stats(s->r);
    ui_lines_add(out, UI_R_TITLE, -1, "time over %lld run%s", (long long)s->runs, s->runs == 1 ? "" : "s");
    time_text(u, st->cpu_seconds, t, sizeof t);
    ui_lines_add(out, UI_R_NORMAL, -1, "  on the CPU, outside delegates: %s", t);
    for (uint32_t i = 0; i < st->n_delegates; i++) {
        time_text(u, st->delegate_seconds[i], t, sizeof t);
        ui_lines_add(out, UI_R_NORMAL, ui_tag_index(u, ui_sub_tag(u, p, st->delegate_names[i])), "  %s on %s%s: %s",
                     st->delegate_names[i], st->delegate_backends[i],
                     st->delegate_simulated[i] ? " (simulated by BundledBackend)" : "", t);
    }
    if (s->cmp) {
        time_text(u, ls_runner_stats(ls_compare_run_reference(s->cmp))->cpu_seconds, t, sizeof t);
        ui_lines_add(out, UI_R_DIM, -1, "  the loaded program (reference): on the CPU %s", t);
    }
}

static void show_verdict(ui_lines *out, const ls_compare_run *cmp)
{
    uint32_t compared, failed = ls_compare_run_failed(cmp, &compared), n_out, n_st, states = 0;
    ls_compare_run_outputs(cmp, &n_out);
    const ls_compare_item *st = ls_compare_run_states(cmp, &n_st);
    for (uint32_t i = 0; i < n_st; i++) states += st[i].compared && st[i].run >= 0;
    int64_t runs = ls_compare_run_count(cmp);
    if (failed)
        ui_lines_add(out, UI_R_ERROR, -1, "compared: %u output%s over %lld run%s and %u state tensor%s, %u differ", n_out,
                     n_out == 1 ? "" : "s", (long long)runs, runs == 1 ? "" : "s", states, states == 1 ? "" : "s", failed);
    else
        ui_lines_add(out, UI_R_OK, -1, "compared: %u output%s over %lld run%s and %u state tensor%s, all within tolerance",
                     n_out, n_out == 1 ? "" : "s", (long long)runs, runs == 1 ? "" : "s", states, states == 1 ? "" : "s");
}

/* One run of the session; appends what it shows to the screen's lines. */
static void run_once(ui *u, ui_lines *out)
{
    ui_run_session *s = u->run;
    const ls_program *p = u->h->steps[s->step].program;
    if (!s->r) {
        ui_lines_add(out, UI_R_ERROR, -1, "the program cannot run:");
        ui_lines_add_wrapped(out, UI_R_ERROR, s->error, u->cols - 4);
        return;
    }
    ls_value *in = NULL, *res = NULL;
    uint32_t n_in = 0, n_res = 0;
    if (make_inputs(u, p, s->runs, &in, &n_in, out) != 0) return;
    int64_t run = s->runs++;
    const ls_node *names[64];
    uint32_t n_names = ls_program_user_inputs(p, names, 64);
    if (s->args[0]) ui_lines_add(out, UI_R_TITLE, -1, "inputs of run %lld (from .npy files)", (long long)run + 1);
    else ui_lines_add(out, UI_R_TITLE, -1, "inputs of run %lld (seeded)", (long long)run + 1);
    const char *in_labels[64];
    for (uint32_t i = 0; i < n_in && i < 64; i++) in_labels[i] = i < n_names ? names[i]->name : "input";
    int in_w = label_width(in_labels, n_in < 64 ? n_in : 64);
    for (uint32_t i = 0; i < n_in; i++) show_value(out, i < 64 ? in_labels[i] : "input", in_w, &in[i], -1);
    if (s->cmp) ls_compare_run_inputs(s->cmp, in, n_in);
    ls_error err = {0};
    if (ls_runner_run(s->r, in, n_in, &res, &n_res, &err) != 0) {
        ui_lines_add(out, UI_R_ERROR, -1, "run %lld failed:", (long long)run + 1);
        ui_lines_add_wrapped(out, UI_R_ERROR, err.msg, u->cols - 4);
        if (s->cmp) {
            ls_error ref_err = {0};
            if (ls_compare_run_step(s->cmp, NULL, 0, NULL, NULL, &ref_err) == 0)
                ui_lines_add(out, UI_R_ERROR, -1, "the loaded program runs on these inputs: lowering broke it");
            else
                ui_lines_add(out, UI_R_WARN, -1, "the loaded program fails on these inputs too: the inputs, not the lowering");
        }
        if (run > 0) /* what a user does next: the inputs follow the run count, the state carries over */
            ui_lines_add_wrapped(out, UI_R_NORMAL,
                                 s->args[0] ? "the next r runs again on the same files, with the state as this run left it; "
                                              "q and r start again from run 1, the state as the program starts it"
                                            : "seeded inputs follow the run count (run k is step k of lowerscope run "
                                              "--steps: a position past a cache's rows fails) and the state carries over; "
                                              "q and r start again from run 1",
                                 u->cols - 4);
    } else {
        const char *onames[64] = {0};
        ls_program_user_outputs(p, onames, 64);
        uint32_t before = 0;
        if (s->cmp) ls_compare_run_outputs(s->cmp, &before);
        bool compared = s->cmp && ls_compare_run_step(s->cmp, res, n_res, onames, s->r, &err) == 0;
        if (s->cmp && !compared) {
            ui_lines_add(out, UI_R_WARN, -1, "the loaded program (the reference) failed:");
            ui_lines_add_wrapped(out, UI_R_WARN, err.msg, u->cols - 4);
        }
        if (s->step == 0) ui_lines_add(out, UI_R_TITLE, -1, "outputs (this is the loaded program: nothing to compare with)");
        else if (compared) ui_lines_add(out, UI_R_TITLE, -1, "outputs, compared with the loaded program's");
        else ui_lines_add(out, UI_R_TITLE, -1, "outputs");
        uint32_t n_items = 0;
        const ls_compare_item *items = compared ? ls_compare_run_outputs(s->cmp, &n_items) : NULL;
        const char *out_labels[64];
        for (uint32_t i = 0; i < n_res && i < 64; i++) out_labels[i] = onames[i] ? onames[i] : "(constant)";
        int out_w = label_width(out_labels, n_res < 64 ? n_res : 64);
        for (uint32_t i = 0; i < n_res; i++) {
            show_value(out, i < 64 ? out_labels[i] : "(constant)", out_w, &res[i], -1);
            if (items && before + i < n_items) show_diff(out, &items[before + i]);
        }
        show_state(u, p, out);
        show_time(u, p, out);
        if (compared) show_nodes(u, out);
        if (compared) show_verdict(out, s->cmp);
    }
    for (uint32_t i = 0; i < n_res; i++) ls_value_release(&res[i]);
    free(res);
    for (uint32_t i = 0; i < n_in; i++) ls_value_release(&in[i]);
    free(in);
}

/* A run holds the UI until it ends (a big program: seconds): the status says so first, and the
 * keys typed meanwhile are dropped (drop_typed_ahead), not acted on in the screen the run opens
 * (a queued ? opened the help over the result, a :step ran inside it). */
static void say_running(ui *u, const char *what)
{
    if (u->headless) return;
    ui_message(u, false, "%s… (keys typed while it runs are dropped)", what);
    ui_draw(u);
}

/* The keys typed while the run held the UI: read as the UI reads them (get_wch: a UTF-8
 * character is one key), dropped, and counted; a resize is kept for the loop, and mouse
 * events are dropped without counting as keys. */
static int drop_typed_ahead(ui *u)
{
    if (u->headless) return 0;
    int n = 0, r;
    wint_t key;
    bool resized = false;
    timeout(0);
    while ((r = get_wch(&key)) != ERR) {
        if (r == KEY_CODE_YES && key == KEY_RESIZE) resized = true;
        else if (r == KEY_CODE_YES && key == KEY_MOUSE) {
            MEVENT ev;
            (void)getmouse(&ev);
        } else n++;
    }
    timeout(UI_INPUT_TIMEOUT_MS);
    if (resized) ungetch(KEY_RESIZE);
    u->msg[0] = 0;
    return n;
}

static void build(ui *u)
{
    ui_lines *l = &u->screen_lines;
    ui_lines_clear(l);
    const ls_step *st = &u->h->steps[u->step];
    ui_lines_add(l, UI_R_TITLE, -1, "step %u %s · %s", u->step, st->pass, u->file);
    if (st->error) ui_lines_add(l, UI_R_WARN, -1, "this pass failed; running the program of the step before it");
    if (u->step == 0 && ui_run_cases_lines(u, l)) /* a .bpte: its own cases first */
        ui_lines_add(l, UI_R_TITLE, -1, "and a run of the program on seeded inputs:");
    if (u->run->cmp_error) {
        ui_lines_add(l, UI_R_WARN, -1, "no comparison: the loaded program cannot run as the reference:");
        ui_lines_add_wrapped(l, UI_R_WARN, u->run->cmp_error, u->cols - 4);
    }
    run_once(u, l);
}

static void say_dropped(ui *u, int dropped, const char *before)
{
    if (dropped) ui_message(u, false, "%s%s%d key%s typed while it ran dropped", before, *before ? "; " : "", dropped,
                            dropped == 1 ? "" : "s");
    else if (*before) ui_message(u, false, "%s", before);
}

void ui_run_build(ui *u)
{
    ui_lines_clear(&u->screen_lines); /* the running frame shows no other screen's lines */
    say_running(u, "running");
    ui_run_session_free(u->run);
    u->run = session_new(u);
    build(u);
    u->overlay = true; /* the graph pane shows what was measured */
    ui_model_refilter(u);
    say_dropped(u, drop_typed_ahead(u), "");
}

void ui_run_again(ui *u)
{
    ui_run_session *s = u->run;
    if (!s || s->h != u->h || s->step != u->step || strcmp(s->args, u->run_args) != 0) {
        ui_run_build(u); /* another step or other inputs: a fresh start */
        return;
    }
    if (!s->r) { /* it cannot run: the screen says why again, and nothing of runs or state */
        build(u);
        return;
    }
    char what[96];
    snprintf(what, sizeof what, "run %lld", (long long)s->runs + 1);
    say_running(u, what);
    build(u);
    ui_model_refilter(u); /* a sort by a run's column moves */
    /* a program without state runs again as the first run did (it said "state carried over" of
     * a .pte with no mutable buffer) */
    char said[160];
    if (ls_runner_state_count(s->r) > 0)
        snprintf(said, sizeof said, "run %lld: state carried over from the run before", (long long)s->runs);
    else
        snprintf(said, sizeof said, "run %lld: the program keeps no state between runs", (long long)s->runs);
    say_dropped(u, drop_typed_ahead(u), said);
}

static void title(ui *u, ls_buf *b)
{
    const ui_run_session *s = u->run;
    if (s && s->h == u->h && s->step != u->step) /* stepped while on the screen: what is shown is older */
        ls_buf_printf(b, "Run · step %u %s · now at step %u: r runs it · q back", s->step, u->h->steps[s->step].pass,
                      u->step);
    else if (s && !s->r) /* r would only say why again */
        ls_buf_printf(b, "Run · step %u %s · it cannot run · q back", u->step, u->h->steps[u->step].pass);
    else
        ls_buf_printf(b, "Run · step %u %s · r again · q back", u->step, u->h->steps[u->step].pass);
}

static void activate(ui *u, uint32_t row)
{
    if (row >= u->screen_lines.n || !u->screen_lines.v[row].has_jump) return;
    u->screen = UI_S_MAIN;
    u->focus = UI_P_GRAPH;
    ui_jump(u, NULL, u->screen_lines.v[row].jump_node);
}

const ui_view_ops ui_run_ops = {
    .name = "run",
    .title = title,
    .count = ui_screen_count,
    .draw_row = ui_screen_draw_row,
    .activate = activate,
    .match = ui_screen_match,
};
