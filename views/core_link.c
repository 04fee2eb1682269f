/* Where the UI meets the core's loading and pipeline: a file is loaded (reader.h) and run through
 * the lowering passes (passes.h) with the --pipeline/--backend options the command line gave, into
 * the history every view reads; :backend lowers the loaded program again.
 *
 * The pipeline of the file opened runs on a thread of its own (a live history): the UI shows
 * step 0 as soon as it is verified, and each step when it is done. That thread also derives the
 * rows each step shows at the top level (rows.c) before publishing the step, so the UI steps
 * in O(visible rows). The UI reads only published steps (ls_history_ready) and never changes a
 * program; what both threads touch is locked in the core (the intern pool while
 * ls_threads_begin holds, the programs' caches under ls_cache_lock). Nodes' and tensors'
 * reference counts are not atomic: the UI refuses what would take references (run, export,
 * :backend) until the pipeline has finished. */
#include <pthread.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>
#include <unistd.h>

#include "ops.h"
#include "passes.h"
#include "progress.h"
#include "pte_file.h"
#include "reader.h"
#include "ui.h"

static ls_pipeline_opts pipeline_opts;
static bool pipeline_opts_set;
static double loaded_at;

double ui_core_loaded_at(void)
{
    return loaded_at;
}

/* --method, --data and --ops, for the file the UI opens first (not for one compared with it) */
static ls_load_opts load_opts;
static bool load_opts_used;

static int load_options(int *argc, char **argv, ls_error *err)
{
    int w = 1;
    for (int i = 1; i < *argc; i++) {
        const char *a = argv[i];
        bool has = i + 1 < *argc;
        if (!strcmp(a, "--method") && has) {
            load_opts.method = argv[++i];
        } else if (!strcmp(a, "--data") && has) {
            if (load_opts.n_data == LS_MAX_DATA_FILES) return ls_fail(err, "at most %d --data files", LS_MAX_DATA_FILES);
            if (ls_load_check_data(argv[++i], err) != 0) return -1;
            load_opts.data[load_opts.n_data++] = argv[i];
        } else if (!strcmp(a, "--ops") && has) {
            if (ls_refuse_empty_path("--ops", argv[i + 1], "the file of custom operator schemas (one a line)", err) != 0) return -1;
            if (ls_ops_load_file(argv[++i], err) != 0) return ls_fail_prefix(err, "--ops");
        } else {
            argv[w++] = argv[i];
        }
    }
    *argc = w;
    argv[w] = NULL;
    return 0;
}

int ui_core_options(int *argc, char **argv, ls_error *err)
{
    if (!pipeline_opts_set) ls_pipeline_opts_init(&pipeline_opts);
    pipeline_opts_set = true;
    if (load_options(argc, argv, err) != 0) return -1;
    return ls_pipeline_opts_parse(&pipeline_opts, argc, argv, err) < 0 ? -1 : 0;
}

/* ---- the live pipeline */

struct ui_live {
    ls_history h; /* first, so the history handed out is the live one's address */
    ls_program *loaded;
    ls_pipeline_opts opts;
    ls_pipeline_watch watch;
    bool stop;
    pthread_t thread;
    ls_error err;
    ui_derive d;         /* the pipeline thread's tag table and module tags */
    ui_step_rows **rows; /* per planned step, stored before the step is published */
    ui_step_rows *rows0; /* step 0's, made by the UI's thread while the pipeline's verifies it */
    bool rows0_ready;
    uint32_t n_rows;
    uint32_t making;     /* the step being made */
};

static ui_live *g_live; /* the one live history (the file the command opened) */

static void step_begin(void *ctx, const ls_history *h, uint32_t k, double seconds)
{
    ui_live *L = ctx;
    (void)h;
    (void)seconds;
    __atomic_store_n(&L->making, k, __ATOMIC_RELAXED);
}

/* What the UI shows of step k at the top level, with the caches its keys will read (the users
 * of every node, for the node pane) built now rather than on the first key. */
static ui_step_rows *derive_step(ui_live *L, const ls_history *h, uint32_t k)
{
    const ls_program *p = h->steps[k].program;
    ui_tagtab log = {0};
    ui_derive_tags(&L->d, p, &log);
    ui_part cpu = {.name = "CPU", .backend = "portable", .color = -1};
    ls_history upto = *h; /* as the UI will see it: steps 0..k (k is made, not yet published) */
    upto.n = k + 1;
    ui_step_rows *sr = ui_rows_build(&L->d, &upto, k, p, k ? h->steps[k - 1].program : NULL, NULL, &cpu);
    sr->tag_log = log;
    uint32_t n_users;
    if (p->n_nodes) ls_program_users(p, 0, &n_users);
    return sr;
}

/* On the pipeline's thread, before step k is published: what the UI shows of it. */
static void step_done(void *ctx, const ls_history *h, uint32_t k)
{
    ui_live *L = ctx;
    if (!L->rows) {
        L->n_rows = h->n_planned;
        L->rows = ls_calloc(L->n_rows, sizeof *L->rows);
    }
    if (k >= L->n_rows) return;
    ui_step_rows *sr;
    if (k == 0) { /* made by the UI's thread while this one verified the program */
        while (!__atomic_load_n(&L->rows0_ready, __ATOMIC_ACQUIRE)) {
            struct timespec ts = {0, 500000L};
            nanosleep(&ts, NULL);
        }
        sr = L->rows0;
    } else {
        sr = derive_step(L, h, k);
    }
    ui_rows_add_findings(sr, &h->steps[k].verify);
    __atomic_store_n(&L->rows[k], sr, __ATOMIC_RELEASE);
}

static void *pipeline_main(void *arg)
{
    ui_live *L = arg;
    if (ls_pipeline_run(L->loaded, &L->opts, &L->h, &L->err) != 0) {
        /* bad options: a history with no step that says it is done */
        __atomic_store_n(&L->h.done, true, __ATOMIC_RELEASE);
    }
    ls_threads_end();
    return NULL;
}

ui_live *ui_core_live(const ls_history *h)
{
    return g_live && h == &g_live->h ? g_live : NULL;
}

const ls_history *ui_live_history(const ui_live *L)
{
    return &L->h;
}

uint32_t ui_live_making(const ui_live *L)
{
    return __atomic_load_n(&L->making, __ATOMIC_RELAXED);
}

ui_step_rows **ui_live_rows(ui_live *L)
{
    return L->rows;
}

const char *ui_live_error(const ui_live *L)
{
    return L->err.msg[0] ? L->err.msg : NULL;
}

static int live_start(ls_program *p, const ls_pipeline_opts *opts, ls_history **h, ls_error *err);

int ui_core_open_live(const char *path, ls_history **h, ls_error *err)
{
    *h = NULL;
    if (!pipeline_opts_set) ui_core_options(&(int){1}, (char *[]){"lowerscope", NULL}, err);
    ls_program *p = NULL;
    const ls_load_opts *lo = load_opts_used ? NULL : &load_opts;
    load_opts_used = true;
    ls_progress_tty_begin(); /* before the UI starts: the load's progress on the terminal */
    int rc = ls_load(path, lo, &p, err);
    ls_progress_tty_end();
    if (rc != 0) return -1;
    loaded_at = ls_now();
    return live_start(p, &pipeline_opts, h, err);
}

void ui_core_prepare(void)
{
    ls_error err = {0};
    if (!pipeline_opts_set) ui_core_options(&(int){1}, (char *[]){"lowerscope", NULL}, &err);
}

int ui_core_open(const char *path, const bool *stop, ls_history **h, ls_error *err)
{
    *h = NULL;
    if (!pipeline_opts_set) ui_core_options(&(int){1}, (char *[]){"lowerscope", NULL}, err);
    ls_program *p = NULL;
    if (ls_load(path, NULL, &p, err) != 0) return -1;
    ls_history *hist = ls_calloc(1, sizeof *hist);
    ls_pipeline_opts o = pipeline_opts; /* read only; the watch is this run's */
    ls_pipeline_watch w = {.stop = stop};
    o.watch = stop ? &w : NULL;
    int rc = ls_pipeline_run(p, &o, hist, err);
    ls_program_unref(p); /* the history holds its own reference */
    if (rc != 0) {
        ls_history_free(hist);
        free(hist);
        return -1;
    }
    *h = hist;
    return 0;
}

int ui_core_start(ls_program *p, const ls_pipeline_opts *opts, ls_history **h, ls_error *err)
{
    return live_start(ls_program_ref(p), opts, h, err);
}

/* Takes the caller's reference to p: once the thread runs, only the thread touches its count. */
static int live_start(ls_program *p, const ls_pipeline_opts *opts, ls_history **h, ls_error *err)
{
    *h = NULL;
    ui_live *L = ls_calloc(1, sizeof *L);
    L->loaded = p;
    L->opts = *opts;
    L->watch = (ls_pipeline_watch){.step_begin = step_begin, .step_done = step_done, .ctx = L, .stop = &L->stop};
    L->opts.watch = &L->watch;
    ls_threads_begin();
    if (pthread_create(&L->thread, NULL, pipeline_main, L) != 0) {
        ls_threads_end();
        ls_program_unref(p);
        free(L);
        return ls_fail(err, "%s: cannot start the pipeline's thread", p->path ? p->path : "the program");
    }
    g_live = L;
    *h = &L->h;
    /* step 0 is the loaded program: this thread derives its rows while the pipeline's verifies
     * it (the first screen waits for both); the derive context is this thread's until then */
    ls_step s0 = {.program = p};
    ls_history one = {.steps = &s0, .n = 1};
    L->rows0 = derive_step(L, &one, 0);
    __atomic_store_n(&L->rows0_ready, true, __ATOMIC_RELEASE);
    return 0;
}

/* Waits for the pipeline to stop (after the step it is making, when the UI quits early). */
static void live_free(ui_live *L)
{
    __atomic_store_n(&L->stop, true, __ATOMIC_RELEASE);
    bool done;
    ls_history_ready(&L->h, &done);
    if (!done && isatty(2)) fprintf(stderr, "lowerscope: stopping the pipeline after the step it is making (%u)\n", ui_live_making(L));
    pthread_join(L->thread, NULL);
    if (L->rows0 && !(L->rows && L->rows[0] == L->rows0)) ui_rows_free(L->rows0); /* never published */
    for (uint32_t i = 0; i < L->n_rows; i++) ui_rows_free(L->rows[i]);
    free(L->rows);
    ui_derive_free(&L->d);
    ls_history_free(&L->h);
    ls_program_unref(L->loaded);
    if (g_live == L) g_live = NULL;
    free(L);
}

void ui_core_free(ls_history *h)
{
    ui_live *L = ui_core_live(h);
    if (L) {
        live_free(L);
        return;
    }
    if (h) ls_history_free(h);
    free(h);
}

void ui_core_done(void)
{
    if (pipeline_opts_set) ls_pipeline_opts_free(&pipeline_opts);
    pipeline_opts_set = false;
}

/* Lowers the loaded program again with the same passes and one backend profile. */
int ui_core_relower(const ls_history *old, const char *backend, const bool *stop, ls_history **out, ls_error *err)
{
    *out = NULL;
    ls_pipeline_opts o;
    ls_pipeline_opts_init(&o);
    if (pipeline_opts_set) {
        memcpy(o.passes, pipeline_opts.passes, sizeof o.passes);
        o.n_passes = pipeline_opts.n_passes;
        o.verify = pipeline_opts.verify;
    }
    if (ls_pipeline_opt(&o, "--backend", backend, err) != 1) {
        ls_pipeline_opts_free(&o);
        return -1;
    }
    ls_history *h = ls_calloc(1, sizeof *h);
    ls_pipeline_watch w = {.stop = stop};
    o.watch = stop ? &w : NULL;
    int rc = ls_pipeline_run(old->steps[0].program, &o, h, err);
    ls_pipeline_opts_free(&o);
    if (rc != 0) {
        ls_history_free(h);
        free(h);
        return -1;
    }
    *out = h;
    return 0;
}

/* The options the UI was started with, the pipeline to run given by `relower`. */
static void opts_like_start(ls_pipeline_opts *o, bool relower)
{
    ls_pipeline_opts_init(o);
    if (pipeline_opts_set) {
        memcpy(o->passes, pipeline_opts.passes, sizeof o->passes);
        o->n_passes = pipeline_opts.n_passes;
        o->verify = pipeline_opts.verify;
        o->relower = pipeline_opts.relower;
    }
    o->relower |= relower;
}

static int history_of(ls_program *p, const ls_pipeline_opts *o, ls_history **out, ls_error *err)
{
    ls_history *h = ls_calloc(1, sizeof *h);
    if (ls_pipeline_run(p, o, h, err) != 0) {
        ls_history_free(h);
        free(h);
        return -1;
    }
    *out = h;
    return 0;
}

int ui_core_relower_all(const ls_history *old, ls_history **out, ls_error *err)
{
    *out = NULL;
    ls_pipeline_opts o;
    opts_like_start(&o, true);
    int rc = history_of(old->steps[0].program, &o, out, err);
    ls_pipeline_opts_free(&o);
    return rc;
}

int ui_core_method(const ls_history *old, const char *method, ls_history **out, ls_error *err)
{
    *out = NULL;
    const ls_program *loaded = old->steps[0].program;
    ls_pte_file *f = ls_program_pte_file(loaded);
    if (!f) return ls_fail(err, "method: %s is not a .pte: it has one program", old->path ? old->path : "the file");
    ls_program *p;
    if (ls_pte_file_method(f, method, &p, err) != 0) return -1;
    ls_pipeline_opts o;
    opts_like_start(&o, old->n > 1); /* lowered again before: lowered again now */
    int rc = history_of(p, &o, out, err);
    ls_pipeline_opts_free(&o);
    ls_program_unref(p);
    return rc;
}

uint32_t ui_core_methods(const ls_history *h, const char *const **names)
{
    const ls_pte_file *f = h->n ? ls_program_pte_file(h->steps[0].program) : NULL;
    *names = f ? f->method_names : NULL;
    return f ? f->n_methods : 0;
}

const char *ui_core_next_method(const ls_history *h)
{
    const ls_program *loaded = h->steps[0].program;
    const ls_pte_file *f = ls_program_pte_file(loaded);
    if (!f || !loaded->method) return NULL;
    uint32_t at = 0;
    while (at < f->n_methods && f->methods[at].name != loaded->method) at++;
    for (uint32_t k = 1; k <= f->n_methods; k++) {
        const ls_pte_method *m = &f->methods[(at + k) % f->n_methods];
        if (m->kind == LS_PTE_METHOD_RUN) return m->name == loaded->method ? NULL : m->name;
    }
    return NULL;
}
