/* Where the UI meets the core's loading and pipeline: a file is loaded (reader.h) and run through
 * the lowering passes (passes.h) with the --pipeline/--backend options the command line gave, into
 * the history every view reads; :backend lowers the loaded program again. */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "passes.h"
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

int ui_core_options(int *argc, char **argv, ls_error *err)
{
    if (!pipeline_opts_set) ls_pipeline_opts_init(&pipeline_opts);
    pipeline_opts_set = true;
    return ls_pipeline_opts_parse(&pipeline_opts, argc, argv, err) < 0 ? -1 : 0;
}

int ui_core_open(const char *path, ls_history **h, ls_error *err)
{
    *h = NULL;
    if (!pipeline_opts_set) ui_core_options(&(int){1}, (char *[]){"lowerscope", NULL}, err);
    ls_program *p = NULL;
    if (ls_load(path, NULL, &p, err) != 0) return -1;
    loaded_at = ls_now();
    ls_history *hist = ls_calloc(1, sizeof *hist);
    int rc = ls_pipeline_run(p, &pipeline_opts, hist, err);
    ls_program_unref(p); /* the history holds its own reference */
    if (rc != 0) {
        ls_history_free(hist);
        free(hist);
        return -1;
    }
    *h = hist;
    return 0;
}

void ui_core_free(ls_history *h)
{
    if (h) ls_history_free(h);
    free(h);
}

void ui_core_done(void)
{
    if (pipeline_opts_set) ls_pipeline_opts_free(&pipeline_opts);
    pipeline_opts_set = false;
}

/* Lowers the loaded program again with the same passes and one backend profile. */
int ui_core_relower(const ls_history *old, const char *backend, ls_history **out, ls_error *err)
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
