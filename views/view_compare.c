/* The compare screen (`c`, `:compare STEP | FILE [STEP] | backend FILE`): the program at this
 * step on the left and another beside it on the right — another step of this history, the
 * same step lowered for another backend, or another file (a .pt2 and the .pte exported from
 * it) — one row per node, matched by identity (align.h: by id between two steps, by input
 * number, target, name and op across files and across two lowerings, which number the nodes they
 * make each on its own), so the selection is the same node on both sides.
 * Marks: `~` the pair differs, `-` only on the left, `+` only on the right. `]`/`[` go to the
 * next/previous difference; Enter selects the left node in the graph pane. */
#include <pthread.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "ops.h"
#include "progress.h"
#include "ui.h"

/* ---- the alignment, made on a thread of its own: at a million nodes it takes a few hundred ms,
 * and keys go on meanwhile (the screen says "comparing"). It reads the two programs only, and
 * their caches (ls_program_pos) under the core's lock; the UI never frees a history while a job
 * reads it (ui_compare_free joins first). */
typedef enum { JOB_ALIGN, JOB_FILE, JOB_BACKEND } job_kind;

struct ui_compare_job {
    pthread_t thread;
    bool threaded; /* else it ran on the UI's thread (no thread could be started) */
    /* JOB_FILE, JOB_BACKEND: the right side is made first: a file loaded and run through the
     * pipeline (its step `step_arg`, or as loaded), or the loaded program lowered again */
    job_kind kind;
    char what[1100]; /* the file or the backend profile */
    char step_arg[64];
    bool step_failed;       /* the file loaded, and has no such step */
    const ls_history *base; /* JOB_BACKEND: the UI's history (done: its pipeline is not running) */
    ls_history *made;       /* owned until taken */
    uint32_t made_step;
    ls_error err;
    const ls_program *a, *b;
    ls_align_by by;
    bool subs;     /* index the lowered modules' ids too (one lineage) */
    uint32_t left; /* the step it aligns */
    double started;
    ls_alignment al;
    ls_ptrmap sub_a, sub_b;
    bool done; /* atomic: the fields above are the thread's until it is set */
    bool stop; /* atomic: set when the UI gives the job up (the load and the pipeline stop early) */
};

/* JOB_FILE, JOB_BACKEND: the other history, and its step to compare with; false on an error */
static bool make_right(ui_compare_job *j)
{
    if (j->kind == JOB_FILE) {
        ls_cancel_on(&j->stop);
        int rc = ui_core_open(j->what, &j->stop, &j->made, &j->err);
        ls_cancel_on(NULL);
        if (rc != 0) return false;
        int cs = j->step_arg[0] ? ls_history_find_step(j->made, j->step_arg, &j->err) : 0; /* as diff --with reads it */
        if (cs < 0) {
            j->step_failed = true;
            ui_core_free(j->made);
            j->made = NULL;
            return false;
        }
        j->made_step = (uint32_t)cs;
    } else {
        if (ui_core_relower(j->base, j->what, &j->stop, &j->made, &j->err) != 0) return false;
        j->made_step = ls_history_same_pass_step(j->base, j->left, j->made);
    }
    j->b = j->made->steps[j->made_step].program;
    return true;
}

static void *job_main(void *arg)
{
    ui_compare_job *j = arg;
    if ((j->kind != JOB_ALIGN && !make_right(j)) || __atomic_load_n(&j->stop, __ATOMIC_ACQUIRE)) {
        __atomic_store_n(&j->done, true, __ATOMIC_RELEASE); /* given up: job_free frees what it made */
        return NULL;
    }
    ls_align_programs(j->a, j->b, j->by, &j->al);
    if (j->subs) {
        ls_align_index_subs(j->a, &j->sub_a);
        ls_align_index_subs(j->b, &j->sub_b);
    }
    __atomic_store_n(&j->done, true, __ATOMIC_RELEASE);
    return NULL;
}

static bool job_done(const ui_compare_job *j)
{
    return __atomic_load_n(&j->done, __ATOMIC_ACQUIRE);
}

/* ---- another file's history, freed on a thread of its own: at 100k nodes its free took the
 * key that closed the comparison 100-200 ms. Nothing of it is shared with this history (its own
 * load and pipeline: only the intern pool, which is never freed), so no reference count is
 * touched by both threads. Another lowering of this history shares its loaded program and is
 * freed here, on the UI's thread. One at a time; the UI waits for the last at its end. */
static pthread_t reaper;
static bool reaping;

static void *reap_main(void *arg)
{
    ui_core_free(arg);
    return NULL;
}

void ui_compare_reaped(void)
{
    if (reaping) pthread_join(reaper, NULL);
    reaping = false;
}

static void free_later(ls_history *h)
{
    ui_compare_reaped();
    reaping = pthread_create(&reaper, NULL, reap_main, h) == 0;
    if (!reaping) ui_core_free(h);
}

/* Waits for the job's thread to end (once). */
static void job_join(ui_compare_job *j)
{
    if (!j->threaded) return;
    pthread_join(j->thread, NULL);
    ls_threads_end();
    j->threaded = false;
}

/* Gives the job up and frees what it made: its thread stops at the next 4096 nodes of a load,
 * or after the pass it is in (an alignment goes to its end, under a second at 1M nodes). */
static void job_free(ui_compare_job *j)
{
    if (!j) return;
    __atomic_store_n(&j->stop, true, __ATOMIC_RELEASE);
    job_join(j);
    ls_alignment_free(&j->al);
    ls_ptrmap_free(&j->sub_a);
    ls_ptrmap_free(&j->sub_b);
    if (j->made && j->kind == JOB_FILE) free_later(j->made);
    else if (j->made) ui_core_free(j->made);
    free(j);
}

/* Which history is on the right: another lowering of this one (it shares the loaded program's
 * objects; ids below cmp_lineage_ids name the same node), or another file's (it shares nothing:
 * cmp_lineage_ids 0). Two steps of this history have no cmp_h. */
static bool is_relowering(const ui *u)
{
    return u->cmp_h && u->cmp_lineage_ids && u->cmp_lineage_ids != UINT32_MAX;
}

static bool is_other_file(const ui *u)
{
    return u->cmp_h && !u->cmp_lineage_ids;
}

void ui_compare_free(ui *u)
{
    job_free(u->cmp_job);
    u->cmp_job = NULL;
    ls_alignment_free(&u->cmp);
    ls_ptrmap_free(&u->cmp_sub_a);
    ls_ptrmap_free(&u->cmp_sub_b);
    if (is_other_file(u)) free_later(u->cmp_h);
    else if (u->cmp_h) ui_core_free(u->cmp_h);
    u->cmp_h = NULL;
    u->cmp_lineage_ids = 0;
    u->cmp_before = false;
    u->cmp_valid = false;
    u->cmp_want_sel = false;
}

static const ls_history *right_history(const ui *u)
{
    return u->cmp_h ? u->cmp_h : u->h;
}

static const ls_program *left_program(const ui *u)
{
    return u->h->steps[u->step].program;
}

static const ls_program *right_program(const ui *u)
{
    const ls_history *h = right_history(u);
    return h->steps[u->cmp_step < h->n ? u->cmp_step : h->n - 1].program;
}

static const char *sub_holding(const ui *u, const ls_ptrmap *m, const ls_node *n)
{
    return n->id < u->cmp_lineage_ids ? ls_align_sub_holding(m, n->id) : NULL;
}

/* kind JOB_ALIGN: this step with the right side's; else `what` (and step_arg) name what to make */
static void start_job(ui *u, job_kind kind, const char *what, const char *step_arg)
{
    ui_compare_job *j = ls_calloc(1, sizeof *j);
    *j = (ui_compare_job){.kind = kind, .base = u->h, .a = left_program(u), .b = kind == JOB_ALIGN ? right_program(u) : NULL,
                          .by = u->cmp_by, .subs = u->cmp_lineage_ids != 0, .left = u->step, .started = ls_now()};
    snprintf(j->what, sizeof j->what, "%s", what ? what : "");
    snprintf(j->step_arg, sizeof j->step_arg, "%s", step_arg ? step_arg : "");
    u->cmp_job = j;
    ls_threads_begin();
    j->threaded = pthread_create(&j->thread, NULL, job_main, j) == 0;
    if (!j->threaded) {
        ls_threads_end();
        job_main(j);
    }
}

/* The right side's label; for another lowering, its step of the same pass and round as step
 * `left` here, and when that lowering has no such pass, that its last step stands in. */
static void label_other(ui *u, uint32_t left)
{
    const char *pass = u->cmp_h->steps[u->cmp_step].pass, *here = u->h->steps[left].pass;
    bool stand_in = is_relowering(u) && here && pass && strcmp(pass, here) != 0;
    snprintf(u->cmp_label, sizeof u->cmp_label, "%.200s, step %u %s%s%s%s", u->cmp_other, u->cmp_step, pass,
             stand_in ? " (no " : "", stand_in ? here : "", stand_in ? " step there)" : "");
}

/* The results of a finished job become the screen's; the selection asked for when the screen
 * opened is placed now. */
static void take_job(ui *u, ui_compare_job *j)
{
    if (j->kind != JOB_ALIGN) { /* the other side, made: the screen's now */
        u->cmp_h = j->made;
        j->made = NULL;
        u->cmp_step = j->made_step;
        const char *name = j->what;
        if (strrchr(name, '/')) name = strrchr(name, '/') + 1; /* a file's name, a profile file's too */
        snprintf(u->cmp_other, sizeof u->cmp_other, "%.200s", name);
        label_other(u, j->left);
    }
    ls_alignment_free(&u->cmp);
    ls_ptrmap_free(&u->cmp_sub_a);
    ls_ptrmap_free(&u->cmp_sub_b);
    u->cmp = j->al;
    u->cmp_sub_a = j->sub_a;
    u->cmp_sub_b = j->sub_b;
    j->al = (ls_alignment){0};
    j->sub_a = j->sub_b = (ls_ptrmap){0};
    u->cmp_left = j->left;
    u->cmp_valid = true;
    /* closed meanwhile (its pane is another's), or stepped (the next alignment places it) */
    if (!u->cmp_want_sel || u->screen != UI_S_COMPARE || j->left != u->step) return;
    u->cmp_want_sel = false;
    ui_pane *pane = ui_pane_of(u, UI_P_SCREEN);
    int32_t pos = u->cmp_want_id ? ls_program_pos(j->a, u->cmp_want_id) : -1;
    pane->sel = pos >= 0 && (uint32_t)pos < j->a->n_nodes ? u->cmp.row_of_a[pos] : 0;
    ui_pane_clamp(u, pane);
    bool any = u->cmp.changed || u->cmp.only_a || u->cmp.only_b;
    ui_message(u, false, "%u same, %u changed, -%u only in step %u, +%u only in %s — %s", u->cmp.same, u->cmp.changed,
               u->cmp.only_a, u->step, u->cmp.only_b, u->cmp_label, any ? "] next difference" : "no difference");
}

/* The node on the selected row of the alignment there is (of step cmp_left), to select when
 * the next one is ready: its left side's, else its right side's (within a lineage the ids are
 * the same node's). */
static void keep_selection(ui *u)
{
    uint32_t row = ui_pane_of(u, UI_P_SCREEN)->sel;
    if (row >= u->cmp.n || u->cmp_left >= u->h->n) return;
    const ls_align_row *r = &u->cmp.v[row];
    const ls_program *was = u->h->steps[u->cmp_left].program;
    u->cmp_want_id = r->a >= 0                              ? was->nodes[r->a]->id
                     : r->b >= 0 && u->cmp_by == LS_ALIGN_BY_ID ? right_program(u)->nodes[r->b]->id
                                                            : 0;
    u->cmp_want_sel = true;
}

/* `:compare` without a step: the step before this one, as ←/→ move this one; step 0 has none,
 * and is shown beside itself with a label that says so. */
static void label_step_before(ui *u)
{
    u->cmp_step = u->step ? u->step - 1 : 0;
    snprintf(u->cmp_label, sizeof u->cmp_label, "step %u %s%s", u->cmp_step, u->h->steps[u->cmp_step].pass,
             u->step ? " (the step before)" : " (itself: step 0 has no step before it)");
}

/* True when the alignment of this step is ready; else one is being made (started here when
 * none is, or when the one under way is of another step). */
static bool ensure(ui *u)
{
    if (u->cmp_valid && u->cmp_left == u->step) return true;
    ui_compare_job *j = u->cmp_job;
    if (j && (!job_done(j) || j->kind != JOB_ALIGN)) return false; /* one that made the right side: ui_compare_poll takes it */
    if (j) {
        u->cmp_job = NULL;
        bool current = j->left == u->step;
        if (current) take_job(u, j);
        job_free(j);
        if (current) return true;
    }
    if (u->cmp_valid && !u->cmp_want_sel) keep_selection(u); /* stepped: the same node, on the new step's rows */
    if (is_relowering(u)) { /* the other lowering's step of this step's pass */
        u->cmp_step = ls_history_same_pass_step(u->h, u->step, u->cmp_h);
        label_other(u, u->step);
    } else if (u->cmp_before) {
        label_step_before(u);
    }
    start_job(u, JOB_ALIGN, NULL, NULL);
    return ensure(u); /* done at once when no thread could be started */
}

/* A job that made the right side: its history (or its error, and the screen closes). Between
 * frames, never while one is drawn. */
static void take_made(ui *u)
{
    ui_compare_job *j = u->cmp_job;
    u->cmp_job = NULL;
    if (j->made) {
        take_job(u, j); /* of the step it began at: a step since, ensure aligns again */
    } else {
        ui_compare_free(u);
        if (u->screen == UI_S_COMPARE) u->screen = UI_S_MAIN;
        ui_forget_screen(u, UI_S_COMPARE); /* help over it closes to what was under it */
        if (j->step_failed) ui_message(u, true, "compare %s: step %s", j->what, j->err.msg); /* as the CLI says it */
        else ui_message(u, true, "compare: %s", j->err.msg);
    }
    job_free(j);
}

bool ui_compare_loading(const ui *u)
{
    return u->cmp_job && u->cmp_job->kind != JOB_ALIGN;
}

bool ui_compare_pending(const ui *u)
{
    return u->cmp_job && !job_done(u->cmp_job);
}

void ui_compare_poll(ui *u)
{
    if (!u->cmp_job || !job_done(u->cmp_job)) return;
    if (u->cmp_job->kind != JOB_ALIGN) take_made(u);
    else if (u->screen == UI_S_COMPARE) ensure(u);
}

bool ui_compare_unfinished(const ui *u)
{
    return u->cmp_job && (u->screen == UI_S_COMPARE || u->cmp_job->kind != JOB_ALIGN);
}

void ui_compare_finish(ui *u)
{
    while (ui_compare_unfinished(u)) {
        job_join(u->cmp_job);
        if (u->cmp_job->kind != JOB_ALIGN) take_made(u);
        else ensure(u);
    }
}

/* Opens the screen on the row of the node selected in the graph pane. */
static void open_screen(ui *u, job_kind kind, const char *what, const char *step_arg)
{
    u->cmp_valid = false;
    u->cmp_want_id = u->depth ? 0 : u->sel_id; /* a lowered module's node: the first row */
    u->cmp_want_sel = true;
    u->screen = UI_S_MAIN;
    ui_open_screen(u, UI_S_COMPARE);
    ui_pane *pane = ui_pane_of(u, UI_P_SCREEN);
    pane->sel = 0;
    if (kind == JOB_ALIGN) ensure(u);
    else start_job(u, kind, what, step_arg);
}

int ui_compare_open(ui *u, const char *arg)
{
    ls_error err = {0};
    while (*arg == ' ') arg++;
    if (!*arg) { /* the step before, and after a step the step before that one */
        if (!u->step) {
            ui_message(u, true, "compare STEP|FILE: step 0 has no step before it");
            return 0;
        }
        ui_compare_free(u);
        u->cmp_before = true;
        u->cmp_by = LS_ALIGN_BY_ID;
        u->cmp_lineage_ids = UINT32_MAX;
        label_step_before(u);
        open_screen(u, JOB_ALIGN, NULL, NULL);
        return 0;
    }
    int s = access(arg, F_OK) == 0 ? -1 : ls_history_find_step(u->h, arg, &err);
    if (s >= 0) {
        ui_compare_free(u);
        u->cmp_step = (uint32_t)s;
        u->cmp_by = LS_ALIGN_BY_ID;
        u->cmp_lineage_ids = UINT32_MAX;
        snprintf(u->cmp_label, sizeof u->cmp_label, "step %d %s", s, u->h->steps[s].pass);
        open_screen(u, JOB_ALIGN, NULL, NULL);
        return 0;
    }
    if (!strcmp(arg, "backend")) {
        ui_message(u, true, "compare backend NAME|FILE: which backend profile? (bundled, xnnpack, ... or a JSON file)");
        return 0;
    }
    if (!strncmp(arg, "backend ", 8)) { /* the same step lowered for another backend, on the job's thread */
        /* lowering takes references to the loaded program's nodes, which the pipeline's thread
         * is copying */
        if (ui_running(u) && ui_refuse_while_running(u, "compare backend")) return 0; /* a comparison loading is given up */
        const char *be = arg + 8;
        while (*be == ' ') be++;
        ui_compare_free(u);
        /* matched by identity, as diff --with-backend: each lowering numbers the nodes it makes on
         * its own, so only the loaded program's ids name the same node on both sides */
        u->cmp_by = LS_ALIGN_BY_IDENTITY;
        u->cmp_lineage_ids = u->h->steps[0].program->next_id;
        snprintf(u->cmp_label, sizeof u->cmp_label, "lowering for %.200s", be);
        open_screen(u, JOB_BACKEND, be, NULL);
        return 0;
    }
    /* FILE [STEP]: another file as loaded, or the step of it named; loaded on the job's thread */
    char path[1024];
    snprintf(path, sizeof path, "%s", arg);
    char *space = strrchr(path, ' ');
    const char *step = NULL;
    if (space && access(path, F_OK) != 0) {
        *space = 0;
        step = space + 1;
    }
    if (access(path, F_OK) != 0) {
        /* a number: the steps there are; else both readings */
        char *end;
        (void)strtol(arg, &end, 10);
        if (!*end && u->h->as_held) ui_message(u, true, "compare %s: no such file, and a .pte has step 0 only (:relower runs the pipeline)", arg);
        else if (!*end) ui_message(u, true, "compare %s: the pipeline has steps 0 to %u, and there is no such file", arg, u->h->n - 1);
        else /* the same words as a number's: the steps there are, then the file */
            ui_message(u, true, "compare %s: not a step (the pipeline has steps 0 to %u: :compare STEP), and no such file "
                       "(:compare FILE [STEP])", arg, u->h->n - 1);
        return 0;
    }
    ui_compare_free(u);
    ui_core_prepare(); /* the options the job's pipeline reads, set on this thread */
    u->cmp_by = LS_ALIGN_BY_IDENTITY;
    const char *slash = strrchr(path, '/');
    snprintf(u->cmp_label, sizeof u->cmp_label, "loading %.200s", slash ? slash + 1 : path);
    open_screen(u, JOB_FILE, path, step);
    return 0;
}

static void title(ui *u, ls_buf *b)
{
    if (!ensure(u)) {
        ls_buf_printf(b, "Compare · step %u %s │ %s · comparing", u->step, u->h->steps[u->step].pass, u->cmp_label);
        return;
    }
    ls_buf_printf(b, "Compare · step %u %s │ %s · ~%u -%u +%u", u->step, u->h->steps[u->step].pass, u->cmp_label,
                  u->cmp.changed, u->cmp.only_a, u->cmp.only_b);
    if (!u->cmp_h && !u->cmp_before && u->cmp_step == u->step) ls_buf_puts(b, " · the same step on both sides");
    /* the alignment is of the top levels: a delegate is its call there */
    if (left_program(u)->n_subs || right_program(u)->n_subs) ls_buf_puts(b, " · top level (a delegate is its call)");
}

static uint32_t count(ui *u)
{
    return ensure(u) ? u->cmp.n : 1; /* while comparing: a line that says so */
}

/* One side of a row: mark, swatch, name, op, arguments, in the node's tag colour. */
static void draw_side(ui *u, const ls_program *p, int32_t pos, int tag, char mark, ui_role mark_role, int y, int x, int w,
                      bool cursor)
{
    if (pos < 0 || w < 8) return;
    const ls_node *n = p->nodes[pos];
    short pair;
    attr_t a = ui_tag_attr(u, tag, &pair);
    if (cursor) {
        a |= A_REVERSE;
        ui_fill(u, y, x, w, a, pair);
    }
    ui_put_mark_swatch(u, y, x, mark, mark_role, tag, a, pair, cursor);
    int name_w = (w - 3) * 2 / 5, op_w = (w - 3) / 4;
    ui_put_fit(u, y, x + 3, name_w, a, pair, n->name, true);
    ui_put_fit(u, y, x + 4 + name_w, op_w, a, pair, ui_node_op(p, n), false);
    ls_buf args = {0};
    ui_fmt_args(p, n, &args);
    int ax = x + 5 + name_w + op_w;
    if (args.s) ui_put_cut(u, y, ax, x + w - ax, a, pair, args.s) /* a cut value ends in … */;
    ls_buf_free(&args);
}

static void draw_row(ui *u, uint32_t row, int y, int x, int w, bool cursor)
{
    if (!ensure(u)) {
        char text[1300];
        const ui_compare_job *j = u->cmp_job;
        double t = j ? ls_now() - j->started : 0.0;
        if (j && j->kind == JOB_FILE && !job_done(j))
            snprintf(text, sizeof text, "loading %s and running its pipeline · %.1f s", j->what, t);
        else if (j && j->kind == JOB_BACKEND && !job_done(j))
            snprintf(text, sizeof text, "lowering step 0 for %s · %.1f s", j->what, t);
        else
            snprintf(text, sizeof text, "comparing %u nodes with %u · %.1f s", left_program(u)->n_nodes,
                     j && j->b ? j->b->n_nodes : right_program(u)->n_nodes, t);
        short dp;
        attr_t da = ui_role_attr(u, UI_R_DIM, &dp);
        if (row == 0) ui_put(u, y, x + 3, w - 3, da, dp, text);
        return;
    }
    if (row >= u->cmp.n) return;
    const ls_align_row *r = &u->cmp.v[row];
    int half = (w - 1) / 2;
    static const char marks[] = {' ', '~', '-', '+'};
    static const ui_role roles[] = {UI_R_NORMAL, UI_R_CHANGED, UI_R_REMOVED, UI_R_ADDED};
    /* another file's tags may be unknown here: a node it shares takes the left one's colour */
    const ls_program *lp = left_program(u), *rp = right_program(u);
    int lt = r->a >= 0 ? ui_node_color(u, lp, lp->nodes[r->a]) : -1;
    int rt = r->b >= 0 ? ui_node_color(u, rp, rp->nodes[r->b]) : -1;
    if (r->a >= 0 && r->b >= 0 && rt < 0 && u->cmp_h) rt = lt;
    draw_side(u, lp, r->a, lt, marks[r->mark], roles[r->mark], y, x, half, cursor);
    short bp;
    attr_t ba = ui_role_attr(u, UI_R_BORDER, &bp);
    ui_put(u, y, x + half, 1, ba, bp, u->utf8 ? "│" : "|");
    draw_side(u, rp, r->b, rt, marks[r->mark], roles[r->mark], y, x + half + 1, w - half - 1, cursor);
    /* a node only on one side whose id the other side holds inside a lowered module */
    const char *in = r->b < 0 && r->a >= 0 ? sub_holding(u, &u->cmp_sub_b, lp->nodes[r->a])
                     : r->a < 0 && r->b >= 0 ? sub_holding(u, &u->cmp_sub_a, rp->nodes[r->b]) : NULL;
    if (in) {
        char text[300];
        snprintf(text, sizeof text, "   inside %s", in);
        short dp;
        attr_t da = ui_role_attr(u, UI_R_DIM, &dp);
        int sx = r->b < 0 ? x + half + 1 : x;
        ui_put_cut(u, y, sx, r->b < 0 ? w - half - 1 : half, da | (cursor ? A_REVERSE : 0), dp, text);
    }
}

static void activate(ui *u, uint32_t row)
{
    if (!ensure(u)) {
        ui_message(u, false, "the comparison is being made");
        return;
    }
    if (row >= u->cmp.n) return;
    const ls_align_row *r = &u->cmp.v[row];
    if (r->a < 0) {
        ui_message(u, false, "%s is only on the right (%s)", right_program(u)->nodes[r->b]->name, u->cmp_label);
        return;
    }
    u->screen = UI_S_MAIN;
    while (u->depth) ui_leave_sub(u);
    ui_select_id(u, left_program(u)->nodes[r->a]->id);
}

/* What of a changed pair differs, as the alignment found it (ls_align_row.why): ": op add ->
 * mul", ": dtype and shape float32[4] -> float32[2]", ": BundledBackend's on the left, ...". */
static void why_text(const ui *u, const ls_align_row *r, char *buf, size_t cap)
{
    const ls_program *lp = left_program(u), *rp = right_program(u);
    const ls_node *x = lp->nodes[r->a], *y = rp->nodes[r->b];
    const ls_submodule *sx = x->kind == LS_NODE_GET_ATTR ? ls_program_sub(lp, x->target) : NULL;
    const ls_submodule *sy = y->kind == LS_NODE_GET_ATTR ? ls_program_sub(rp, y->target) : NULL;
    char ma[96] = "none", mb[96] = "none";
    switch (r->why) {
    case LS_ALIGN_WHY_KIND: snprintf(buf, cap, ": %s -> %s", ls_node_kind_name(x->kind), ls_node_kind_name(y->kind)); break;
    case LS_ALIGN_WHY_TAG: snprintf(buf, cap, ": tag %s -> %s", x->tag ? x->tag : "none", y->tag ? y->tag : "none"); break;
    case LS_ALIGN_WHY_OP: snprintf(buf, cap, ": op %s -> %s", ui_node_op(lp, x), ui_node_op(rp, y)); break;
    case LS_ALIGN_WHY_TARGET: snprintf(buf, cap, ": attribute %s -> %s", x->target, y->target); break;
    case LS_ALIGN_WHY_BACKEND:
        snprintf(buf, cap, ": %s's on the left, %s's on the right", sx && sx->backend_id ? sx->backend_id : "no backend",
                 sy && sy->backend_id ? sy->backend_id : "no backend");
        break;
    case LS_ALIGN_WHY_META:
        if (ls_node_tval(x)) ls_tmeta_str(ls_node_tval(x), ma, sizeof ma);
        if (ls_node_tval(y)) ls_tmeta_str(ls_node_tval(y), mb, sizeof mb);
        snprintf(buf, cap, ": dtype and shape %s -> %s", ma, mb);
        break;
    case LS_ALIGN_WHY_OUT_VARIANT: snprintf(buf, cap, ": an out variant on one side only"); break;
    case LS_ALIGN_WHY_ARGS: snprintf(buf, cap, ": its arguments"); break;
    default: buf[0] = 0;
    }
}

/* ] and [: the next and previous row that differs. */
static bool action(ui *u, ui_action a)
{
    if (a != UI_A_NEXT_DIFF && a != UI_A_PREV_DIFF) return false;
    if (!ensure(u)) {
        ui_message(u, false, "the comparison is being made");
        return true;
    }
    ui_pane *p = ui_pane_of(u, UI_P_SCREEN);
    int dir = a == UI_A_NEXT_DIFF ? 1 : -1;
    for (int64_t r = (int64_t)p->sel + dir; r >= 0 && r < (int64_t)u->cmp.n; r += dir)
        if (u->cmp.v[r].mark != LS_ALIGN_SAME) {
            ui_pane_select(u, p, (uint32_t)r);
            const ls_align_row *x = &u->cmp.v[r];
            const char *name = x->a >= 0 ? left_program(u)->nodes[x->a]->name : right_program(u)->nodes[x->b]->name;
            static const char *what[] = {"", "differs", "only on the left", "only on the right"};
            const char *in = x->b < 0 && x->a >= 0 ? sub_holding(u, &u->cmp_sub_b, left_program(u)->nodes[x->a])
                             : x->a < 0 && x->b >= 0 ? sub_holding(u, &u->cmp_sub_a, right_program(u)->nodes[x->b]) : NULL;
            char why[512] = "";
            if (x->mark == LS_ALIGN_CHANGED) why_text(u, x, why, sizeof why);
            if (in) ui_message(u, false, "%s %s at the top level (inside %s on the %s)", name, what[x->mark], in, x->b < 0 ? "right" : "left");
            else ui_message(u, false, "%s %s%s", name, what[x->mark], why);
            return true;
        }
    ui_message(u, false, "no %s difference", dir > 0 ? "later" : "earlier");
    return true;
}

static bool match(ui *u, uint32_t row, const regex_t *re)
{
    if (!ensure(u) || row >= u->cmp.n) return false;
    const ls_align_row *r = &u->cmp.v[row];
    return (r->a >= 0 && regexec(re, left_program(u)->nodes[r->a]->name, 0, NULL, 0) == 0) ||
           (r->b >= 0 && regexec(re, right_program(u)->nodes[r->b]->name, 0, NULL, 0) == 0);
}

const ui_view_ops ui_compare_ops = {
    .name = "compare",
    .action = action,
    .title = title,
    .count = count,
    .draw_row = draw_row,
    .activate = activate,
    .match = match,
};
