/* Helpers for the kernel tests: build tensors and values in one line, run a kernel through
 * ls_kernel_call (schema checks included) and compare against hand-computed values.
 *
 *   ls_value r = kt_run(LS_OP_add_Tensor, 2, VT(kt(LS_DT_F32, SHAPE(2), VALS(1, 2))), VF(0.5));
 *   kt_expect(&r, LS_DT_F32, SHAPE(2), VALS(1.5, 2.5));
 *   ls_value_release(&r);
 */
#ifndef LS_KTEST_H
#define LS_KTEST_H

#include <check.h>
#include <math.h>
#include <stdarg.h>
#include <stdio.h>
#include <string.h>

#include "runtime.h"

#define SHAPE(...) (int)(sizeof((int64_t[]){__VA_ARGS__}) / sizeof(int64_t)), (int64_t[]){__VA_ARGS__}
#define SCALAR_SHAPE 0, (int64_t *)NULL
#define VALS(...) (double[]){__VA_ARGS__}

static inline ls_tensor *kt(ls_dtype dt, int ndim, const int64_t *sizes, const double *vals)
{
    ls_tensor *t = ls_tensor_alloc(dt, ndim, sizes);
    for (int64_t i = 0; vals && i < t->numel; i++) ls_tensor_set_f64(t, i, vals[i]);
    return t;
}

/* int64 tensor with exact values */
static inline ls_tensor *kt_i64(int ndim, const int64_t *sizes, const int64_t *vals)
{
    ls_tensor *t = ls_tensor_alloc(LS_DT_I64, ndim, sizes);
    if (vals) memcpy(t->data, vals, t->nbytes);
    return t;
}

/* 0..n-1 in a float32 tensor of the shape */
static inline ls_tensor *kt_iota(ls_dtype dt, int ndim, const int64_t *sizes)
{
    ls_tensor *t = ls_tensor_alloc(dt, ndim, sizes);
    for (int64_t i = 0; i < t->numel; i++) ls_tensor_set_f64(t, i, (double)i);
    return t;
}

#define VT(t) ls_value_tensor(t)
#define VI(x) ls_value_int(x)
#define VF(x) ls_value_float(x)
#define VB(x) ls_value_bool(x)
#define VN ls_value_none()
#define VDT(d) ls_value_int(d)
static inline ls_value VS(const char *s)
{
    ls_value v = {.kind = LS_V_STRING};
    v.s = ls_intern(s);
    return v;
}
#define VINTS(...) kt_ints((int)(sizeof((int64_t[]){__VA_ARGS__}) / sizeof(int64_t)), (int64_t[]){__VA_ARGS__})
static inline ls_value kt_ints(int n, const int64_t *v)
{
    ls_value l = ls_value_list((uint32_t)n);
    for (int i = 0; i < n; i++) l.items[i] = ls_value_int(v[i]);
    return l;
}
#define VEMPTY ls_value_list(0)
/* a list of values (tensors or None) */
static inline ls_value VLIST(int n, ...)
{
    ls_value l = ls_value_list((uint32_t)n);
    va_list ap;
    va_start(ap, n);
    for (int i = 0; i < n; i++) l.items[i] = va_arg(ap, ls_value);
    va_end(ap);
    return l;
}

static char kt_err[LS_ERR_MAX];

static inline int kt_vcall(ls_op_id op, ls_value *out, int n, va_list ap)
{
    ls_value args[16];
    for (int i = 0; i < n; i++) args[i] = va_arg(ap, ls_value);
    ls_error err = {0};
    int rc = ls_kernel_call(ls_op_get(op), NULL, args, (uint32_t)n, out, &err);
    snprintf(kt_err, sizeof kt_err, "%s", err.msg);
    for (int i = 0; i < n; i++) ls_value_release(&args[i]);
    return rc;
}

/* Runs op on n values (taking them) and asserts success. */
static inline ls_value kt_run(ls_op_id op, int n, ...)
{
    va_list ap;
    va_start(ap, n);
    ls_value out;
    int rc = kt_vcall(op, &out, n, ap);
    va_end(ap);
    ck_assert_msg(rc == 0, "%s failed: %s", ls_op_get(op)->qualname, kt_err);
    return out;
}

/* Runs op and asserts it fails with a message containing `needle`. */
static inline void kt_fails(const char *needle, ls_op_id op, int n, ...)
{
    va_list ap;
    va_start(ap, n);
    ls_value out;
    int rc = kt_vcall(op, &out, n, ap);
    va_end(ap);
    ls_value_release(&out);
    ck_assert_msg(rc != 0, "%s should have failed", ls_op_get(op)->qualname);
    ck_assert_msg(strstr(kt_err, needle) != NULL, "message '%s' lacks '%s'", kt_err, needle);
}

static inline bool kt_close(double got, double want, double tol)
{
    if (isnan(want)) return isnan(got);
    if (isinf(want)) return got == want;
    return fabs(got - want) <= tol + tol * fabs(want);
}

/* Asserts v is a tensor of dtype/shape with the values (NaN matches NaN, inf matches inf). */
static inline void kt_expect_tol(const ls_value *v, ls_dtype dt, int ndim, const int64_t *sizes, const double *vals,
                                 double tol)
{
    ck_assert_int_eq(v->kind, LS_V_TENSOR);
    const ls_tensor *t = v->t;
    ck_assert_msg(t->dtype == dt, "dtype %s, expected %s", ls_dtype_name(t->dtype), ls_dtype_name(dt));
    ck_assert_int_eq(t->ndim, ndim);
    for (int d = 0; d < ndim; d++) ck_assert_msg(t->sizes[d] == sizes[d], "dim %d: %lld vs %lld", d,
                                                 (long long)t->sizes[d], (long long)sizes[d]);
    for (int64_t i = 0; vals && i < t->numel; i++) {
        double g = ls_tensor_get_f64(t, i);
        ck_assert_msg(kt_close(g, vals[i], tol), "element %lld: got %.9g, expected %.9g", (long long)i, g, vals[i]);
    }
}
#define kt_expect(v, dt, ...) kt_expect_tol(v, dt, __VA_ARGS__, 1e-6)

#endif
