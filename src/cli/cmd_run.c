/* lowerscope run FILE [--steps N] [--input NAME=FILE.npy]... [--seed S] [--save DIR] [--json]
 * [--model NAME]: runs a program on the bundled CPU runtime and prints its outputs, the time
 * and the mutable state (docs/cli.md; JSON format_version 1). */
#include <errno.h>
#include <inttypes.h>
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>

#include "cli.h"
#include "npy.h"
#include "reader.h"
#include "run_compare.h"
#include "runtime.h"

int ls_cmd_run(int argc, char **argv);

#define RUN_FORMAT_VERSION 1
#define RUN_USAGE                                                                                                      \
    "lowerscope run FILE [--steps N] [--input NAME=FILE.npy]... [--seed S] [--save DIR] [--json] [--model NAME] "      \
    "[--compare-with REF]"
#define FIRST_VALUES 8

typedef struct given_input {
    const char *name, *file;
    ls_tensor *t;
} given_input;

typedef struct stats {
    double min, max, mean;
    int64_t nan;
    bool any; /* at least one non-NaN value */
} stats;

static void stats_add(stats *s, double v, double *sum, int64_t *n)
{
    if (isnan(v)) {
        s->nan++;
        return;
    }
    s->min = v < s->min ? v : s->min;
    s->max = v > s->max ? v : s->max;
    *sum += v;
    (*n)++;
}

static stats tensor_stats(const ls_tensor *t)
{
    stats s = {INFINITY, -INFINITY, 0, 0, false};
    double sum = 0;
    int64_t n = 0;
    if (t->dtype == LS_DT_F32) { /* the common case without a call per element */
        const float *f = t->data;
        for (int64_t i = 0; i < t->numel; i++) stats_add(&s, f[i], &sum, &n);
    } else {
        for (int64_t i = 0; i < t->numel; i++) stats_add(&s, ls_tensor_get_f64(t, i), &sum, &n);
    }
    s.any = n > 0;
    s.mean = n ? sum / (double)n : NAN;
    return s;
}

/* ---- text output */

static void print_value_line(const char *label, const ls_value *v)
{
    if (v->kind != LS_V_TENSOR) {
        printf("  %-24s %s\n", label, v->kind == LS_V_NONE ? "None" : v->kind == LS_V_INT ? "int" : "value");
        return;
    }
    const ls_tensor *t = v->t;
    ls_tmeta m;
    char ms[128];
    ls_tensor_meta(t, &m);
    printf("  %-24s %s", label, ls_tmeta_str(&m, ms, sizeof ms));
    stats s = tensor_stats(t);
    if (s.any) printf("  min %.6g  max %.6g  mean %.6g", s.min, s.max, s.mean);
    if (s.nan) printf("  NaN %" PRId64, s.nan);
    ls_buf b = {0};
    ls_tensor_preview(t, FIRST_VALUES, &b);
    printf("\n  %-24s %s\n", "", b.s);
    ls_buf_free(&b);
}

/* State tensors are shown row by row (last dim), so a cache filling up is easy to follow. */
static void print_state(const char *name, const ls_tensor *t, int64_t max_rows)
{
    ls_tmeta m;
    char ms[128];
    ls_tensor_meta(t, &m);
    printf("  %s  %s\n", name, ls_tmeta_str(&m, ms, sizeof ms));
    int64_t row = t->ndim ? t->sizes[t->ndim - 1] : 1, rows = row ? t->numel / row : 0;
    /* rows after the last one holding anything are summed up in one line */
    int64_t filled = 0;
    size_t rb = (size_t)row * ls_dtype_size(t->dtype);
    for (int64_t r = 0; r < rows; r++) {
        const uint8_t *p = (const uint8_t *)t->data + (size_t)r * rb;
        bool zero = true;
        for (size_t i = 0; i < rb && zero; i++) zero = p[i] == 0;
        if (!zero) filled = r + 1;
    }
    int64_t shown = filled < max_rows ? filled : max_rows;
    for (int64_t r = 0; r < shown; r++) {
        ls_tensor *view = NULL;
        ls_blob *b = t->owner;
        size_t off = (size_t)((uint8_t *)t->data - b->data) + (size_t)(r * row) * ls_dtype_size(t->dtype);
        view = ls_tensor_from_blob(b, off, t->dtype, 1, &row);
        ls_buf pb = {0};
        if (view) ls_tensor_preview(view, FIRST_VALUES, &pb);
        printf("    [%" PRId64 "] %s\n", r, pb.s ? pb.s : "");
        ls_buf_free(&pb);
        ls_tensor_unref(view);
    }
    if (filled > shown) printf("    ... (%" PRId64 " more rows)\n", filled - shown);
    if (rows == filled + 1) printf("    [%" PRId64 "] zeros\n", filled);
    else if (rows > filled) printf("    [%" PRId64 "..%" PRId64 "] zeros\n", filled, rows - 1);
}

/* ---- JSON output */

static void json_num(ls_buf *b, double v)
{
    if (isnan(v)) ls_buf_puts(b, "\"NaN\"");
    else if (isinf(v)) ls_buf_puts(b, v > 0 ? "\"Infinity\"" : "\"-Infinity\"");
    else ls_buf_printf(b, "%.9g", v);
}

static void json_tensor(ls_buf *b, const ls_tensor *t, bool with_stats)
{
    ls_buf_printf(b, "\"dtype\": \"%s\", \"shape\": [", ls_dtype_name(t->dtype));
    for (int d = 0; d < t->ndim; d++) ls_buf_printf(b, "%s%" PRId64, d ? ", " : "", t->sizes[d]);
    ls_buf_puts(b, "]");
    if (with_stats) {
        stats s = tensor_stats(t);
        ls_buf_puts(b, ", \"min\": ");
        if (s.any) json_num(b, s.min);
        else ls_buf_puts(b, "null");
        ls_buf_puts(b, ", \"max\": ");
        if (s.any) json_num(b, s.max);
        else ls_buf_puts(b, "null");
        ls_buf_puts(b, ", \"mean\": ");
        if (s.any) json_num(b, s.mean);
        else ls_buf_puts(b, "null");
        ls_buf_printf(b, ", \"nan\": %" PRId64, s.nan);
    }
    ls_buf_puts(b, ", \"first\": [");
    int64_t n = t->numel < FIRST_VALUES ? t->numel : FIRST_VALUES;
    for (int64_t i = 0; i < n; i++) {
        if (i) ls_buf_puts(b, ", ");
        if (t->dtype == LS_DT_BOOL) ls_buf_puts(b, ls_tensor_get_i64(t, i) ? "true" : "false");
        else if (ls_dtype_is_float(t->dtype)) json_num(b, ls_tensor_get_f64(t, i));
        else ls_buf_printf(b, "%" PRId64, ls_tensor_get_i64(t, i));
    }
    ls_buf_puts(b, "]");
}

static void json_value(ls_buf *b, const ls_value *v)
{
    if (v->kind == LS_V_TENSOR) json_tensor(b, v->t, true);
    else if (v->kind == LS_V_INT) ls_buf_printf(b, "\"value\": %" PRId64, v->i);
    else if (v->kind == LS_V_FLOAT) ls_buf_printf(b, "\"value\": %.17g", v->f);
    else ls_buf_puts(b, "\"value\": null");
}

/* ---- options */

typedef struct run_opts {
    const char *path, *save_dir;
    const char *compare_with; /* --compare-with REF (run_compare.c) */
    ls_load_opts load;
    int64_t steps;
    uint64_t seed;
    bool json;
    LS_VEC(given_input) given;
} run_opts;

static bool parse_int(const char *s, int64_t *out)
{
    char *end;
    errno = 0;
    long long v = strtoll(s, &end, 10);
    if (errno || end == s || *end) return false;
    *out = v;
    return true;
}

static int parse_opts(int argc, char **argv, run_opts *o)
{
    for (int i = 1; i < argc; i++) {
        const char *a = argv[i];
        bool has_next = i + 1 < argc;
        if (strcmp(a, "--json") == 0) {
            o->json = true;
        } else if (strcmp(a, "--steps") == 0 && has_next) {
            if (!parse_int(argv[++i], &o->steps) || o->steps < 1 || o->steps > 1000000) {
                ls_cli_error("run: --steps wants a whole number from 1 up, not '%s'", argv[i]);
                return -1;
            }
        } else if (strcmp(a, "--seed") == 0 && has_next) {
            int64_t s;
            if (!parse_int(argv[++i], &s)) {
                ls_cli_error("run: --seed wants a whole number, not '%s'", argv[i]);
                return -1;
            }
            o->seed = (uint64_t)s;
        } else if (strcmp(a, "--compare-with") == 0 && has_next) {
            o->compare_with = argv[++i];
        } else if (strcmp(a, "--save") == 0 && has_next) {
            o->save_dir = argv[++i];
        } else if (strcmp(a, "--model") == 0 && has_next) {
            o->load.model = argv[++i];
        } else if (strcmp(a, "--input") == 0 && has_next) {
            const char *spec = argv[++i], *eq = strchr(spec, '=');
            if (!eq || eq == spec || !eq[1]) {
                ls_cli_error("run: --input wants NAME=FILE.npy, not '%s'", spec);
                return -1;
            }
            given_input g = {ls_intern_n(spec, (size_t)(eq - spec)), eq + 1, NULL};
            ls_vec_push(&o->given, g);
        } else if (a[0] == '-' && a[1]) {
            ls_cli_error("run: unknown option or missing value '%s' (usage: %s)", a, RUN_USAGE);
            return -1;
        } else if (!o->path) {
            o->path = a;
        } else {
            ls_cli_error("run: one FILE at a time ('%s' is a second one)", a);
            return -1;
        }
    }
    if (!o->path) {
        ls_cli_error("run: which file? (usage: %s)", RUN_USAGE);
        return -1;
    }
    return 0;
}

/* Loads each --input file and checks it against its placeholder. */
static int load_given(run_opts *o, const ls_node **ins, uint32_t nin)
{
    ls_error err;
    for (uint32_t g = 0; g < o->given.n; g++) {
        given_input *gi = &o->given.v[g];
        const ls_node *ph = NULL;
        for (uint32_t i = 0; i < nin && !ph; i++)
            if (ins[i]->name == gi->name) ph = ins[i];
        if (!ph) {
            ls_buf b = {0};
            for (uint32_t i = 0; i < nin; i++) ls_buf_printf(&b, "%s%s", i ? ", " : "", ins[i]->name);
            ls_cli_error("run: --input %s: the program has no user input of that name (its inputs: %s)", gi->name,
                         nin ? b.s : "none");
            ls_buf_free(&b);
            return -1;
        }
        if (ls_npy_load(gi->file, &gi->t, &err) != 0) {
            ls_cli_error("%s", err.msg);
            return -1;
        }
        if (ph->val_kind == LS_VAL_TENSOR && ph->nvals) {
            const ls_tmeta *m = &ph->vals[0];
            bool ok = (m->dtype == LS_DT_UNKNOWN || m->dtype == gi->t->dtype) && m->ndim == gi->t->ndim;
            for (int d = 0; ok && d < m->ndim; d++)
                if (!m->sym[d] && m->sizes[d] != gi->t->sizes[d]) ok = false;
            if (!ok) {
                char s1[128], s2[128];
                ls_tmeta got;
                ls_tensor_meta(gi->t, &got);
                ls_cli_error("%s: input '%s' expects %s, the file holds %s", gi->file, gi->name, ls_tmeta_str(m, s1, sizeof s1),
                             ls_tmeta_str(&got, s2, sizeof s2));
                return -1;
            }
        }
    }
    return 0;
}

static int save_tensor(const char *dir, const char *name, const ls_tensor *t, ls_buf *saved)
{
    char path[4096];
    snprintf(path, sizeof path, "%s/%s.npy", dir, name);
    ls_error err;
    if (ls_npy_save(path, t, &err) != 0) {
        ls_cli_error("%s", err.msg);
        return -1;
    }
    if (saved->len) ls_buf_puts(saved, ", ");
    ls_buf_json_str(saved, path);
    return 0;
}

static int cmp_double(const void *a, const void *b)
{
    double x = *(const double *)a, y = *(const double *)b;
    return x < y ? -1 : x > y;
}

int ls_cmd_run(int argc, char **argv)
{
    run_opts o = {.steps = 1};
    int rc = LS_EXIT_INPUT;
    ls_program *p = NULL;
    ls_runner *r = NULL;
    const ls_node **ins = NULL;
    double *times = NULL;
    ls_buf js = {0}, saved = {0}, cmp_js = {0};
    run_compare *cmp = NULL;
    ls_error err;
    if (parse_opts(argc, argv, &o) != 0) goto done;
    if (ls_load(o.path, &o.load, &p, &err) != 0) {
        ls_cli_error("%s", err.msg);
        goto done;
    }
    uint32_t nin = ls_program_user_inputs(p, NULL, 0);
    ins = calloc(nin + 1, sizeof *ins);
    ls_program_user_inputs(p, ins, nin);
    if (load_given(&o, ins, nin) != 0) goto done;
    if (o.save_dir && mkdir(o.save_dir, 0777) != 0 && errno != EEXIST) {
        ls_cli_error("%s: cannot create the folder: %s", o.save_dir, strerror(errno));
        goto done;
    }
    if (!(r = ls_runner_new(p, &err))) {
        ls_cli_error("%s", err.msg);
        goto done;
    }
    if (o.compare_with && !(cmp = run_compare_open(o.compare_with, p, &err))) {
        ls_cli_error("%s", err.msg);
        goto done;
    }
    uint32_t nst0 = ls_runner_state_count(r);
    if (!o.json)
        printf("%s: %u user input%s, %" PRId64 " step%s, %u mutable buffer%s\n", o.path, nin, nin == 1 ? "" : "s", o.steps,
               o.steps == 1 ? "" : "s", nst0, nst0 == 1 ? "" : "s");
    times = calloc((size_t)o.steps, sizeof *times);
    ls_buf_printf(&js, "{\n  \"format_version\": %d,\n  \"file\": ", RUN_FORMAT_VERSION);
    ls_buf_json_str(&js, o.path);
    ls_buf_printf(&js, ",\n  \"steps\": %" PRId64 ",\n  \"seed\": %" PRIu64 ",\n  \"inputs\": [", o.steps, o.seed);
    for (uint32_t i = 0; i < nin; i++) {
        const char *src = "generated";
        for (uint32_t g = 0; g < o.given.n; g++)
            if (o.given.v[g].name == ins[i]->name) src = o.given.v[g].file;
        ls_buf_puts(&js, i ? ", " : "");
        ls_buf_puts(&js, "{\"name\": ");
        ls_buf_json_str(&js, ins[i]->name);
        ls_buf_puts(&js, ", \"source\": ");
        ls_buf_json_str(&js, src);
        ls_buf_puts(&js, "}");
    }
    ls_buf_puts(&js, "],\n  \"runs\": [");
    uint32_t nout_names = ls_program_user_outputs(p, NULL, 0);
    const char **onames = calloc(nout_names + 1, sizeof *onames);
    ls_program_user_outputs(p, onames, nout_names);
    for (int64_t k = 0; k < o.steps; k++) {
        ls_value *vals;
        uint32_t n;
        if (ls_make_inputs(p, o.seed, k, &vals, &n, &err) != 0) {
            /* only an input without metadata fails here; it is fine when the user gave it */
            bool all_given = true;
            for (uint32_t i = 0; i < nin && all_given; i++) {
                bool g = false;
                for (uint32_t j = 0; j < o.given.n; j++) g |= o.given.v[j].name == ins[i]->name;
                all_given = g;
            }
            if (!all_given) {
                ls_cli_error("%s", err.msg);
                free(onames);
                goto done;
            }
            vals = calloc(nin + 1, sizeof *vals);
            n = nin;
        }
        for (uint32_t i = 0; i < n; i++)
            for (uint32_t g = 0; g < o.given.n; g++)
                if (o.given.v[g].name == ins[i]->name) {
                    ls_value_release(&vals[i]);
                    vals[i] = ls_value_tensor(ls_tensor_ref(o.given.v[g].t));
                }
        ls_value *outs;
        uint32_t nout;
        if (cmp) run_compare_inputs(cmp, vals, n);
        double t0 = ls_now();
        int ok = ls_runner_run(r, vals, n, &outs, &nout, &err);
        times[k] = ls_now() - t0;
        for (uint32_t i = 0; i < n; i++) ls_value_release(&vals[i]);
        free(vals);
        if (ok != 0) {
            ls_cli_error("%s", err.msg);
            free(onames);
            goto done;
        }
        if (!o.json) printf("step %" PRId64 "  %.3f ms\n", k, times[k] * 1e3);
        ls_buf_printf(&js, "%s\n    {\"step\": %" PRId64 ", \"seconds\": %.9f, \"outputs\": [", k ? "," : "", k, times[k]);
        for (uint32_t i = 0; i < nout; i++) {
            const char *name = i < nout_names && onames[i] ? onames[i] : "(constant)";
            if (!o.json) {
                char label[96];
                snprintf(label, sizeof label, "out %u %s", i, name);
                print_value_line(label, &outs[i]);
            }
            ls_buf_printf(&js, "%s\n      {\"index\": %u, \"name\": ", i ? "," : "", i);
            ls_buf_json_str(&js, name);
            ls_buf_puts(&js, ", ");
            json_value(&js, &outs[i]);
            ls_buf_puts(&js, "}");
            if (o.save_dir && outs[i].kind == LS_V_TENSOR) {
                char fname[64];
                if (o.steps > 1) snprintf(fname, sizeof fname, "step%" PRId64 "_out_%u", k, i);
                else snprintf(fname, sizeof fname, "out_%u", i);
                if (save_tensor(o.save_dir, fname, outs[i].t, &saved) != 0) {
                    for (uint32_t j = 0; j < nout; j++) ls_value_release(&outs[j]);
                    free(outs);
                    free(onames);
                    goto done;
                }
            }
        }
        ls_buf_puts(&js, "]}");
        if (cmp && run_compare_step(cmp, k, outs, nout, onames, !o.json, &cmp_js, &err) != 0) {
            ls_cli_error("%s", err.msg);
            for (uint32_t j = 0; j < nout; j++) ls_value_release(&outs[j]);
            free(outs);
            free(onames);
            goto done;
        }
        for (uint32_t i = 0; i < nout; i++) ls_value_release(&outs[i]);
        free(outs);
    }
    free(onames);
    ls_buf_puts(&js, "\n  ],\n  \"state\": [");
    uint32_t nst = ls_runner_state_count(r);
    if (!o.json && nst) printf("state after step %" PRId64 "\n", o.steps - 1);
    for (uint32_t s = 0; s < nst; s++) {
        const char *name = ls_runner_state_name(r, s);
        ls_tensor *t = ls_runner_state(r, s);
        if (!t) continue;
        if (!o.json) print_state(name, t, nst <= 4 ? 8 : 3); /* many buffers: fewer rows each */
        ls_buf_puts(&js, s ? ",\n    {\"name\": " : "\n    {\"name\": ");
        ls_buf_json_str(&js, name);
        ls_buf_puts(&js, ", ");
        json_tensor(&js, t, false);
        ls_buf_puts(&js, "}");
        if (o.save_dir) {
            char fname[300];
            snprintf(fname, sizeof fname, "state_%s", name);
            for (char *c = fname; *c; c++)
                if (*c == '/') *c = '.';
            if (save_tensor(o.save_dir, fname, t, &saved) != 0) goto done;
        }
    }
    /* time: the median step, then where it went */
    qsort(times, (size_t)o.steps, sizeof *times, cmp_double);
    double median = o.steps % 2 ? times[o.steps / 2] : (times[o.steps / 2 - 1] + times[o.steps / 2]) / 2;
    const ls_run_stats *st = ls_runner_stats(r);
    ls_buf_printf(&js, "%s],\n  \"time\": {\"median_step_seconds\": %.9f, \"cpu_kernel_seconds\": %.9f, \"delegates\": [",
                  nst ? "\n  " : "", median, st->cpu_seconds);
    if (!o.json) printf("time  median step %.3f ms (%" PRId64 " step%s); CPU kernels %.3f ms in all", median * 1e3, o.steps,
                        o.steps == 1 ? "" : "s", st->cpu_seconds * 1e3);
    for (uint32_t d = 0; d < st->n_delegates; d++) {
        if (!o.json) printf("; %s (%s) %.3f ms", st->delegate_names[d], st->delegate_backends[d], st->delegate_seconds[d] * 1e3);
        ls_buf_puts(&js, d ? ", {\"name\": " : "{\"name\": ");
        ls_buf_json_str(&js, st->delegate_names[d]);
        ls_buf_puts(&js, ", \"backend\": ");
        ls_buf_json_str(&js, st->delegate_backends[d]);
        ls_buf_printf(&js, ", \"seconds\": %.9f}", st->delegate_seconds[d]);
    }
    if (!o.json) printf("\n");
    ls_buf_printf(&js, "]},\n  \"saved\": [%s]", saved.s ? saved.s : "");
    rc = LS_EXIT_OK;
    if (cmp) { /* --compare-with: exit 1 when an output differs */
        uint32_t compared, failed = run_compare_failed(cmp, &compared);
        ls_buf_puts(&js, ",\n  \"compare_with\": ");
        ls_buf_json_str(&js, o.compare_with);
        ls_buf_printf(&js, ",\n  \"compare\": {\"rtol\": 1e-05, \"atol\": 1e-06, \"compared\": %u, \"failed\": %u, "
                           "\"outputs\": [%s\n  ]}", compared, failed, cmp_js.s ? cmp_js.s : "");
        if (!o.json)
            printf("compare with %s: %u output%s over %" PRId64 " step%s, %s\n", o.compare_with, compared,
                   compared == 1 ? "" : "s", o.steps, o.steps == 1 ? "" : "s",
                   failed ? ls_internf("%u differ (rtol 1e-5, atol 1e-6)", failed) : "all within rtol 1e-5, atol 1e-6");
        if (failed) rc = LS_EXIT_FINDINGS;
    }
    ls_buf_puts(&js, "\n}\n");
    if (o.json) fputs(js.s, stdout);
    else if (saved.len) printf("saved %s\n", o.save_dir);
done:
    for (uint32_t g = 0; g < o.given.n; g++) ls_tensor_unref(o.given.v[g].t);
    free(o.given.v);
    free(ins);
    free(times);
    ls_buf_free(&js);
    ls_buf_free(&saved);
    ls_buf_free(&cmp_js);
    run_compare_free(cmp);
    ls_runner_free(r);
    ls_program_unref(p);
    return rc;
}
