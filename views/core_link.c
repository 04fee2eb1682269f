/* The only place the UI calls core parts that other developers are still writing: loading a
 * file and running the pass pipeline (reader.h, passes.h, history.h) and running a program
 * (runtime.h). Each part is switched on here once it is in the repository, so a missing symbol
 * never breaks the build; until then the UI says what is missing. */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "ui.h"

#ifndef UI_HAVE_PIPELINE
#define UI_HAVE_PIPELINE 1 /* ls_load, ls_pipeline_run, ls_history_free */
#endif
#ifndef UI_HAVE_RUNTIME
#define UI_HAVE_RUNTIME 0 /* ls_runner_*, ls_make_inputs */
#endif
#ifndef UI_HAVE_NPY
#define UI_HAVE_NPY 0 /* ls_npy_load: :run FILE.npy ... */
#endif

#if UI_HAVE_PIPELINE
#include "passes.h"
#include "reader.h"

static ls_pipeline_opts pipeline_opts;
static bool pipeline_opts_set;

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
#else
int ui_core_options(int *argc, char **argv, ls_error *err)
{
    (void)argc;
    (void)argv;
    (void)err;
    return 0;
}

void ui_core_done(void) {}

int ui_core_relower(const ls_history *old, const char *backend, ls_history **out, ls_error *err)
{
    (void)old;
    *out = NULL;
    return ls_fail(err, "backend %s: lowering again needs the pass pipeline, which is not in this build yet", backend);
}

int ui_core_open(const char *path, ls_history **h, ls_error *err)
{
    *h = NULL;
    return ls_fail(err, "%s: this build cannot open files (no pass pipeline)", path);
}

void ui_core_free(ls_history *h)
{
    (void)h;
}
#endif

#if UI_HAVE_RUNTIME
#include "runtime.h"
#if UI_HAVE_NPY
#include "npy.h"
#endif

static void show_value(ui_lines *out, const char *label, const ls_value *v)
{
    ls_buf b = {0};
    if (v->kind == LS_V_TENSOR && v->t) {
        ls_tmeta m;
        char t[128];
        ls_tensor_meta(v->t, &m);
        ls_tensor_preview(v->t, 8, &b);
        ui_lines_add(out, UI_R_NORMAL, -1, "  %-12s %-16s %s", label, ls_tmeta_str(&m, t, sizeof t), b.s);
    } else if (v->kind == LS_V_INT) {
        ui_lines_add(out, UI_R_NORMAL, -1, "  %-12s int %lld", label, (long long)v->i);
    } else if (v->kind == LS_V_FLOAT) {
        ui_lines_add(out, UI_R_NORMAL, -1, "  %-12s float %g", label, v->f);
    } else if (v->kind == LS_V_BOOL) {
        ui_lines_add(out, UI_R_NORMAL, -1, "  %-12s bool %s", label, v->b ? "True" : "False");
    } else {
        ui_lines_add(out, UI_R_NORMAL, -1, "  %-12s (%s)", label, v->kind == LS_V_LIST ? "list" : "none");
    }
    ls_buf_free(&b);
}

/* Errors can be long: wrapped at spaces to the screen's width. */
static void add_wrapped(ui_lines *out, ui_role role, const char *text, int width)
{
    if (width < 20) width = 20;
    const char *s = text;
    bool first = true;
    while (*s) {
        int n = (int)strlen(s);
        if (n > width) {
            n = width;
            while (n > width / 2 && s[n] != ' ') n--;
            if (s[n] != ' ') n = width;
        }
        ui_lines_add(out, role, -1, "%s%.*s", first ? "" : "  ", n, s);
        first = false;
        s += n;
        while (*s == ' ') s++;
    }
}

void ui_core_run(ui *u, const ls_program *p, const char *const *npy, int n_npy, ui_lines *out)
{
    ls_error err = {{0}};
    ls_value *in = NULL, *res = NULL;
    uint32_t n_in = 0, n_res = 0;
#if UI_HAVE_NPY
    if (n_npy) {
        in = ls_calloc((size_t)n_npy, sizeof *in);
        for (int i = 0; i < n_npy; i++) {
            ls_tensor *t;
            if (ls_npy_load(npy[i], &t, &err) != 0) {
                add_wrapped(out, UI_R_ERROR, err.msg, u->cols - 4);
                for (uint32_t k = 0; k < n_in; k++) ls_value_release(&in[k]);
                free(in);
                return;
            }
            in[n_in++] = ls_value_tensor(t);
        }
    }
#else
    if (n_npy) ui_lines_add(out, UI_R_WARN, -1, "reading .npy inputs is not in this build yet: using seeded inputs");
#endif
    if (!n_in && ls_make_inputs(p, 0, 0, &in, &n_in, &err) != 0) {
        add_wrapped(out, UI_R_ERROR, err.msg, u->cols - 4);
        return;
    }
    const ls_node *names[64];
    uint32_t n_names = ls_program_user_inputs(p, names, 64);
    ui_lines_add(out, UI_R_TITLE, -1, "inputs (%s)", n_npy && UI_HAVE_NPY ? "from .npy files" : "seeded, seed 0");
    for (uint32_t i = 0; i < n_in; i++) {
        char label[64];
        snprintf(label, sizeof label, "%s", i < n_names && i < 64 ? names[i]->name : "input");
        show_value(out, label, &in[i]);
    }
    ls_runner *r = ls_runner_new(p, &err);
    double t0 = ls_now();
    int rc = r ? ls_runner_run(r, in, n_in, &res, &n_res, &err) : -1;
    double dt = ls_now() - t0;
    if (rc != 0) {
        ui_lines_add(out, UI_R_ERROR, -1, "run failed:");
        add_wrapped(out, UI_R_ERROR, err.msg, u->cols - 4);
    } else {
        ui_lines_add(out, UI_R_TITLE, -1, "outputs");
        for (uint32_t i = 0; i < n_res; i++) {
            char label[32];
            snprintf(label, sizeof label, "output %u", i);
            show_value(out, label, &res[i]);
        }
        const ls_run_stats *st = ls_runner_stats(r);
        char t[32];
        if (u->script) snprintf(t, sizeof t, "—");
        else snprintf(t, sizeof t, "%.3f ms", dt * 1e3);
        ui_lines_add(out, UI_R_TITLE, -1, "time %s", t);
        for (uint32_t i = 0; st && i < st->n_delegates; i++) {
            if (u->script) snprintf(t, sizeof t, "—");
            else snprintf(t, sizeof t, "%.3f ms", st->delegate_seconds[i] * 1e3);
            ui_lines_add(out, UI_R_NORMAL, ui_tag_index(u, ui_sub_tag(u, p, st->delegate_names[i])), "  %s on %s: %s",
                         st->delegate_names[i], st->delegate_backends[i], t);
        }
        uint32_t ns = ls_runner_state_count(r);
        if (ns) ui_lines_add(out, UI_R_TITLE, -1, "state after the run");
        for (uint32_t i = 0; i < ns; i++) {
            ls_value v = {.kind = LS_V_TENSOR, .t = ls_runner_state(r, i)};
            show_value(out, ls_runner_state_name(r, i), &v);
        }
    }
    for (uint32_t i = 0; i < n_res; i++) ls_value_release(&res[i]);
    free(res);
    for (uint32_t i = 0; i < n_in; i++) ls_value_release(&in[i]);
    free(in);
    if (r) ls_runner_free(r);
}
#else
void ui_core_run(ui *u, const ls_program *p, const char *const *npy, int n_npy, ui_lines *out)
{
    (void)u;
    (void)p;
    (void)npy;
    (void)n_npy;
    ui_lines_add(out, UI_R_WARN, -1, "the bundled runtime is not in this build yet: nothing was run");
}
#endif
