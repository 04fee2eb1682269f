/* How lowerscope run shows values: each output with its statistics and first values, state
 * tensors row by row, and the same as JSON (docs/cli.md). */
#include "run_print.h"

#include <inttypes.h>
#include <math.h>
#include <stdio.h>

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

void run_print_value(const char *label, const ls_value *v)
{
    if (v->kind != LS_V_TENSOR) {
        ls_buf text = {0};
        ls_value_scalar_text(v, &text);
        printf("  %-24s %s\n", label, text.s);
        ls_buf_free(&text);
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
    ls_tensor_preview(t, RUN_FIRST_VALUES, &b);
    printf("\n  %-24s %s\n", "", b.s);
    ls_buf_free(&b);
}

/* State tensors are shown row by row (last dim), so a cache filling up is easy to follow. */
void run_print_state(const char *name, const ls_tensor *t, int64_t max_rows)
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
        if (view) ls_tensor_preview(view, RUN_FIRST_VALUES, &pb);
        printf("    [%" PRId64 "] %s\n", r, pb.s ? pb.s : "");
        ls_buf_free(&pb);
        ls_tensor_unref(view);
    }
    if (filled > shown) printf("    ... (%" PRId64 " more rows)\n", filled - shown);
    if (rows == filled + 1) printf("    [%" PRId64 "] zeros\n", filled);
    else if (rows > filled) printf("    [%" PRId64 "..%" PRId64 "] zeros\n", filled, rows - 1);
}

/* ---- JSON output */

void run_json_num(ls_buf *b, double v)
{
    if (isnan(v)) ls_buf_puts(b, "\"NaN\"");
    else if (isinf(v)) ls_buf_puts(b, v > 0 ? "\"Infinity\"" : "\"-Infinity\"");
    else ls_buf_printf(b, "%.9g", v);
}

void run_json_tensor(ls_buf *b, const ls_tensor *t, bool with_stats)
{
    ls_buf_printf(b, "\"dtype\": \"%s\", \"shape\": [", ls_dtype_name(t->dtype));
    for (int d = 0; d < t->ndim; d++) ls_buf_printf(b, "%s%" PRId64, d ? ", " : "", t->sizes[d]);
    ls_buf_puts(b, "]");
    if (with_stats) {
        stats s = tensor_stats(t);
        ls_buf_puts(b, ", \"min\": ");
        if (s.any) run_json_num(b, s.min);
        else ls_buf_puts(b, "null");
        ls_buf_puts(b, ", \"max\": ");
        if (s.any) run_json_num(b, s.max);
        else ls_buf_puts(b, "null");
        ls_buf_puts(b, ", \"mean\": ");
        if (s.any) run_json_num(b, s.mean);
        else ls_buf_puts(b, "null");
        ls_buf_printf(b, ", \"nan\": %" PRId64, s.nan);
    }
    ls_buf_puts(b, ", \"first\": [");
    int64_t n = t->numel < RUN_FIRST_VALUES ? t->numel : RUN_FIRST_VALUES;
    for (int64_t i = 0; i < n; i++) {
        if (i) ls_buf_puts(b, ", ");
        if (t->dtype == LS_DT_BOOL) ls_buf_puts(b, ls_tensor_get_i64(t, i) ? "true" : "false");
        else if (ls_dtype_is_float(t->dtype)) run_json_num(b, ls_tensor_get_f64(t, i));
        else ls_buf_printf(b, "%" PRId64, ls_tensor_get_i64(t, i));
    }
    ls_buf_puts(b, "]");
}

void run_json_value(ls_buf *b, const ls_value *v)
{
    if (v->kind == LS_V_TENSOR) run_json_tensor(b, v->t, true);
    else if (v->kind == LS_V_INT) ls_buf_printf(b, "\"value\": %" PRId64, v->i);
    else if (v->kind == LS_V_FLOAT) {
        ls_buf_puts(b, "\"value\": ");
        if (isfinite(v->f)) ls_buf_printf(b, "%.17g", v->f); /* a Python float: every digit */
        else run_json_num(b, v->f);                          /* NaN, infinities: as strings */
    } else if (v->kind == LS_V_BOOL) {
        ls_buf_puts(b, v->b ? "\"value\": true" : "\"value\": false");
    } else if (v->kind == LS_V_STRING) {
        ls_buf_puts(b, "\"value\": ");
        ls_buf_json_str(b, v->s);
    } else {
        ls_buf_puts(b, "\"value\": null");
    }
}

void run_print_delegate_times(const ls_run_stats *st)
{
    for (uint32_t d = 0; d < st->n_delegates; d++)
        printf("; %s (%s%s) %.3f ms", st->delegate_names[d], st->delegate_backends[d],
               st->delegate_simulated[d] ? ", simulated by BundledBackend" : "", st->delegate_seconds[d] * 1e3);
}

void run_json_delegate_times(ls_buf *b, const ls_run_stats *st)
{
    ls_buf_putc(b, '[');
    for (uint32_t d = 0; d < st->n_delegates; d++) {
        ls_buf_puts(b, d ? ", {\"name\": " : "{\"name\": ");
        ls_buf_json_str(b, st->delegate_names[d]);
        ls_buf_puts(b, ", \"backend\": ");
        ls_buf_json_str(b, st->delegate_backends[d]);
        ls_buf_printf(b, ", \"simulated\": %s, \"seconds\": %.9f}", st->delegate_simulated[d] ? "true" : "false",
                      st->delegate_seconds[d]);
    }
    ls_buf_putc(b, ']');
}
