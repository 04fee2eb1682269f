/* Comparing run results element by element (compare.h). */
#include "compare.h"

#include <math.h>
#include <stdio.h>
#include <string.h>

static void tensor_diff(const ls_tensor *g, const ls_tensor *w, double rtol, double atol, ls_value_diff *d)
{
    bool same_shape = g->ndim == w->ndim;
    for (int i = 0; same_shape && i < g->ndim; i++) same_shape = g->sizes[i] == w->sizes[i];
    bool float_g = ls_dtype_is_float(g->dtype), float_w = ls_dtype_is_float(w->dtype);
    if (!same_shape || float_g != float_w || (g->dtype == LS_DT_BOOL) != (w->dtype == LS_DT_BOOL)) {
        char a[96], b[96];
        ls_tmeta ma, mb;
        ls_tensor_meta(g, &ma);
        ls_tensor_meta(w, &mb);
        snprintf(d->why, sizeof d->why, "%s against %s", ls_tmeta_str(&ma, a, sizeof a), ls_tmeta_str(&mb, b, sizeof b));
        d->pass = false;
        return;
    }
    double worst_excess = 0;
    bool ints = !float_g && !float_w; /* compared as int64: doubles lose int64's low bits */
    for (int64_t i = 0; i < g->numel; i++) {
        double x = ls_tensor_get_f64(g, i), y = ls_tensor_get_f64(w, i);
        if (isnan(x) && isnan(y)) continue;
        double diff = fabs(x - y);
        if (ints) {
            int64_t a = ls_tensor_get_i64(g, i), b = ls_tensor_get_i64(w, i);
            diff = a == b ? 0 : (double)(a > b ? (uint64_t)a - (uint64_t)b : (uint64_t)b - (uint64_t)a);
        }
        if (isinf(x) && isinf(y) && (x > 0) == (y > 0)) diff = 0;
        if (isnan(diff)) diff = INFINITY;
        double rel = y != 0 ? diff / fabs(y) : diff > 0 ? INFINITY : 0;
        if (diff > d->max_abs) d->max_abs = diff;
        if (rel > d->max_rel) d->max_rel = rel;
        double excess = diff - (atol + rtol * fabs(y));
        if (excess > 0 && (d->worst < 0 || excess > worst_excess)) {
            worst_excess = excess;
            d->worst = i;
            d->pass = false;
            snprintf(d->why, sizeof d->why, "element %lld: %.9g against %.9g", (long long)i, x, y);
        }
    }
}

void ls_compare_values(const ls_value *got, const ls_value *want, double rtol, double atol, ls_value_diff *d)
{
    memset(d, 0, sizeof *d);
    d->pass = true;
    d->worst = -1;
    if (got->kind != want->kind) {
        d->pass = false;
        snprintf(d->why, sizeof d->why, "%s against %s", ls_value_kind_text(got->kind), ls_value_kind_text(want->kind));
        return;
    }
    switch (got->kind) {
    case LS_V_TENSOR: tensor_diff(got->t, want->t, rtol, atol, d); return;
    case LS_V_INT:
    case LS_V_FLOAT:
    case LS_V_BOOL: {
        double x = ls_value_as_f64(got), y = ls_value_as_f64(want);
        d->max_abs = fabs(x - y);
        d->max_rel = y != 0 ? d->max_abs / fabs(y) : d->max_abs > 0 ? INFINITY : 0;
        if (!(d->max_abs <= atol + rtol * fabs(y)) && !(isnan(x) && isnan(y))) {
            d->pass = false;
            snprintf(d->why, sizeof d->why, "%.9g against %.9g", x, y);
        }
        return;
    }
    case LS_V_LIST:
        if (got->n != want->n) {
            d->pass = false;
            snprintf(d->why, sizeof d->why, "a list of %u against a list of %u", got->n, want->n);
            return;
        }
        for (uint32_t i = 0; i < got->n; i++) {
            ls_value_diff e;
            ls_compare_values(&got->items[i], &want->items[i], rtol, atol, &e);
            if (e.max_abs > d->max_abs) d->max_abs = e.max_abs;
            if (e.max_rel > d->max_rel) d->max_rel = e.max_rel;
            if (!e.pass && d->pass) {
                d->pass = false;
                snprintf(d->why, sizeof d->why, "item %u: %.120s", i, e.why);
            }
        }
        return;
    case LS_V_STRING:
        if (got->s != want->s) {
            d->pass = false;
            snprintf(d->why, sizeof d->why, "'%s' against '%s'", got->s ? got->s : "", want->s ? want->s : "");
        }
        return;
    default: return;
    }
}

void ls_compare_tolerance(ls_dtype dt, double *rtol, double *atol)
{
    switch (dt) {
    case LS_DT_F64: *rtol = 1e-7, *atol = 1e-7; break;
    case LS_DT_F16: *rtol = 1e-3, *atol = 1e-5; break;
    case LS_DT_BF16: *rtol = 1.6e-2, *atol = 1e-5; break;
    case LS_DT_F32:
    case LS_DT_UNKNOWN: *rtol = LS_COMPARE_RTOL, *atol = LS_COMPARE_ATOL; break;
    default: *rtol = 0, *atol = 0; break; /* integers and bool: exact */
    }
}

/* 1e-05 → 1e-5: the way people write tolerances */
static void short_number(char *buf, size_t cap, double v)
{
    char t[32];
    snprintf(t, sizeof t, "%g", v);
    char *e = strstr(t, "e-0");
    if (!e) e = strstr(t, "e+0");
    if (e) memmove(e + 2, e + 3, strlen(e + 3) + 1);
    snprintf(buf, cap, "%s", t);
}

const char *ls_compare_tolerance_text(double rtol, double atol, char *buf, size_t cap)
{
    if (rtol == 0 && atol == 0) {
        snprintf(buf, cap, "exact");
        return buf;
    }
    char r[32], a[32];
    short_number(r, sizeof r, rtol);
    short_number(a, sizeof a, atol);
    snprintf(buf, cap, "rtol %s, atol %s", r, a);
    return buf;
}
