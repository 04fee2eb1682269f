/* Where the UI meets the core's loading and pipeline: a file is loaded (reader.h) and run through
 * the lowering passes (passes.h) with the --pipeline/--backend options the command line gave, into
 * the history every view reads; :backend lowers the loaded program again. */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "passes.h"
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
