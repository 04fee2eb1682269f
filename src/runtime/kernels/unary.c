/* Unary elementwise kernels: neg, abs, relu, sqrt, rsqrt, exp, log, sin, cos, tanh, sigmoid,
 * gelu (exact and tanh), silu, logical_not, and clamp with scalar bounds.
 * Tensors are contiguous, so these are flat loops over numel in the compute type; integer
 * inputs of the floating functions give float32, as torch's int-to-float promotion does. */
#include <float.h>
#include <math.h>

#include "kernels.h"

enum unop { U_NEG, U_ABS, U_RELU, U_SQRT, U_RSQRT, U_EXP, U_LOG, U_SIN, U_COS, U_TANH, U_SIGMOID, U_GELU,
            U_GELU_TANH, U_SILU, U_CLAMP, U_COUNT };

typedef void (*un_row)(int64_t n, void *o, const void *a, double p0, double p1);

#define UN_ROW(name, T, expr)                                                                     \
    LK_HOT static void name(int64_t n, void *restrict vo, const void *restrict va, double p0_, double p1_) \
    {                                                                                             \
        T *restrict o = vo;                                                                       \
        const T *restrict a = va;                                                                 \
        const T p0 = (T)p0_, p1 = (T)p1_;                                                         \
        (void)p0;                                                                                 \
        (void)p1;                                                                                 \
        for (int64_t i = 0; i < n; i++) {                                                         \
            const T x = a[i];                                                                     \
            o[i] = (T)(expr);                                                                     \
        }                                                                                         \
    }

#define GELU_K 0.7978845608028654 /* sqrt(2/pi) */
UN_ROW(neg_f32, float, -x)
UN_ROW(neg_f64, double, -x)
UN_ROW(neg_i64, int64_t, (int64_t)(0 - (uint64_t)x))
UN_ROW(abs_f32, float, fabsf(x))
UN_ROW(abs_f64, double, fabs(x))
UN_ROW(abs_i64, int64_t, x < 0 ? (int64_t)(0 - (uint64_t)x) : x)
UN_ROW(relu_f32, float, x > 0 ? x : (x == x ? 0.0f : x))
UN_ROW(relu_f64, double, x > 0 ? x : (x == x ? 0.0 : x))
UN_ROW(relu_i64, int64_t, x > 0 ? x : 0)
UN_ROW(sqrt_f32, float, sqrtf(x))
UN_ROW(sqrt_f64, double, sqrt(x))
UN_ROW(rsqrt_f32, float, 1.0f / sqrtf(x))
UN_ROW(rsqrt_f64, double, 1.0 / sqrt(x))
UN_ROW(exp_f32, float, expf(x))
UN_ROW(exp_f64, double, exp(x))
UN_ROW(log_f32, float, logf(x))
UN_ROW(log_f64, double, log(x))
UN_ROW(sin_f32, float, sinf(x))
UN_ROW(sin_f64, double, sin(x))
UN_ROW(cos_f32, float, cosf(x))
UN_ROW(cos_f64, double, cos(x))
UN_ROW(tanh_f32, float, tanhf(x))
UN_ROW(tanh_f64, double, tanh(x))
UN_ROW(sigmoid_f32, float, 1.0f / (1.0f + expf(-x)))
UN_ROW(sigmoid_f64, double, 1.0 / (1.0 + exp(-x)))
UN_ROW(gelu_f32, float, 0.5f * x * (1.0f + erff(x * (float)M_SQRT1_2)))
UN_ROW(gelu_f64, double, 0.5 * x * (1.0 + erf(x * M_SQRT1_2)))
UN_ROW(gelut_f32, float, 0.5f * x * (1.0f + tanhf((float)GELU_K * (x + 0.044715f * x * x * x))))
UN_ROW(gelut_f64, double, 0.5 * x * (1.0 + tanh(GELU_K * (x + 0.044715 * x * x * x))))
UN_ROW(silu_f32, float, x / (1.0f + expf(-x)))
UN_ROW(silu_f64, double, x / (1.0 + exp(-x)))
/* clamp: p0 = min, p1 = max (±inf / extreme ints when absent). As the portable kernel
 * (op_clamp.cpp: max_override(x, min), then min_override(that, max), each NaN when either side
 * is): a NaN input or a NaN bound gives NaN; min > max gives max. */
#define CLAMP_LO(x, lo) ((x) < (lo) ? (lo) : (x))
#define CLAMP_NAN(x, lo, hi)                                                                      \
    ((x) != (x) || (lo) != (lo) || (hi) != (hi) ? (x) + (lo) + (hi) /* NaN, whichever it was */ \
     : CLAMP_LO(x, lo) > (hi)                   ? (hi)                                          \
                                                : CLAMP_LO(x, lo))
UN_ROW(clamp_f32, float, CLAMP_NAN(x, p0, p1))
UN_ROW(clamp_f64, double, CLAMP_NAN(x, p0, p1))

static const struct {
    un_row f32, f64, i64;
    bool to_float; /* integer inputs give float32 */
    double cost;   /* relative cost per element, for threading */
} unops[U_COUNT] = {
    [U_NEG] = {neg_f32, neg_f64, neg_i64, false, 1},
    [U_ABS] = {abs_f32, abs_f64, abs_i64, false, 1},
    [U_RELU] = {relu_f32, relu_f64, relu_i64, false, 1},
    [U_SQRT] = {sqrt_f32, sqrt_f64, NULL, true, 4},
    [U_RSQRT] = {rsqrt_f32, rsqrt_f64, NULL, true, 4},
    [U_EXP] = {exp_f32, exp_f64, NULL, true, 20},
    [U_LOG] = {log_f32, log_f64, NULL, true, 20},
    [U_SIN] = {sin_f32, sin_f64, NULL, true, 20},
    [U_COS] = {cos_f32, cos_f64, NULL, true, 20},
    [U_TANH] = {tanh_f32, tanh_f64, NULL, true, 20},
    [U_SIGMOID] = {sigmoid_f32, sigmoid_f64, NULL, true, 20},
    [U_GELU] = {gelu_f32, gelu_f64, NULL, true, 20},
    [U_GELU_TANH] = {gelut_f32, gelut_f64, NULL, true, 20},
    [U_SILU] = {silu_f32, silu_f64, NULL, true, 20},
    [U_CLAMP] = {clamp_f32, clamp_f64, NULL, false, 1},
};

typedef struct un_job {
    un_row fn;
    uint8_t *o;
    const uint8_t *a;
    size_t es;
    double p0, p1;
} un_job;

static void un_range(void *vctx, int64_t lo, int64_t hi)
{
    un_job *j = vctx;
    j->fn(hi - lo, j->o + (size_t)lo * j->es, j->a + (size_t)lo * j->es, j->p0, j->p1);
}

/* Integer clamp: done here so the bounds keep all 64 bits. */
LK_HOT static void clamp_i64(int64_t n, int64_t *restrict o, const int64_t *restrict a, int64_t lo, int64_t hi)
{
    for (int64_t i = 0; i < n; i++) {
        int64_t v = a[i] < lo ? lo : a[i];
        o[i] = v > hi ? hi : v;
    }
}

static int unary(ls_kctx *c, enum unop op, const ls_tensor *x, ls_dtype rt, double p0, double p1, int64_t i0,
                 int64_t i1, ls_value *out)
{
    ls_dtype ct = lk_compute_type(rt);
    ls_tensor *res = lk_new_like(c, x, rt);
    if (!res) return -1;
    void *tin, *tout = NULL;
    const void *in = lk_as(x, ct, &tin);
    void *o = res->data;
    if (ct != rt) o = tout = lk_alloc_tmp((size_t)x->numel * ls_dtype_size(ct) + 1);
    if (ct == LS_DT_I64 && op == U_CLAMP) {
        clamp_i64(x->numel, o, in, i0, i1);
    } else {
        un_job j = {.fn = ct == LS_DT_F32 ? unops[op].f32 : ct == LS_DT_F64 ? unops[op].f64 : unops[op].i64,
                    .o = o, .a = in, .es = ls_dtype_size(ct), .p0 = p0, .p1 = p1};
        lk_parallel(x->numel, unops[op].cost, un_range, &j);
    }
    if (tout) lk_convert(res->data, rt, tout, ct, x->numel);
    ls_free_aligned(tin);
    ls_free_aligned(tout);
    return lk_ret(out, res);
}

static int unary_simple(ls_kctx *c, enum unop op, const ls_value *v, ls_value *out)
{
    const ls_tensor *x = v->t;
    ls_dtype rt = x->dtype;
    if (unops[op].to_float && !ls_dtype_is_float(rt)) rt = LS_DT_F32;
    if (rt == LS_DT_BOOL && op == U_NEG)
        return ls_kfail(c, "negation of a bool tensor is not supported (use logical_not)");
    return unary(c, op, x, rt, 0, 0, 0, 0, out);
}

#define UN_KERNEL(name, op) \
    LK_DECL(name) { return unary_simple(c, op, &args[0], out); }
UN_KERNEL(k_neg, U_NEG)
UN_KERNEL(k_abs, U_ABS)
UN_KERNEL(k_relu, U_RELU)
UN_KERNEL(k_sqrt, U_SQRT)
UN_KERNEL(k_rsqrt, U_RSQRT)
UN_KERNEL(k_exp, U_EXP)
UN_KERNEL(k_log, U_LOG)
UN_KERNEL(k_sin, U_SIN)
UN_KERNEL(k_cos, U_COS)
UN_KERNEL(k_tanh, U_TANH)
UN_KERNEL(k_sigmoid, U_SIGMOID)
UN_KERNEL(k_silu, U_SILU)

LK_DECL(k_gelu)
{
    const char *mode = nargs > 1 && args[1].kind == LS_V_STRING ? args[1].s : "none";
    if (strcmp(mode, "none") == 0) return unary_simple(c, U_GELU, &args[0], out);
    if (strcmp(mode, "tanh") == 0) return unary_simple(c, U_GELU_TANH, &args[0], out);
    return ls_kfail(c, "approximate='%s' is not 'none' or 'tanh'", mode);
}

LK_DECL(k_logical_not)
{
    const ls_tensor *x = args[0].t;
    ls_tensor *res = lk_new_like(c, x, LS_DT_BOOL);
    if (!res) return -1;
    void *tmp;
    const uint8_t *b = lk_as(x, LS_DT_BOOL, &tmp);
    uint8_t *o = res->data;
    for (int64_t i = 0; i < x->numel; i++) o[i] = !b[i];
    ls_free_aligned(tmp);
    return lk_ret(out, res);
}

/* Whether a clamp bound (int64 i, double f: the same scalar) is a value of the result type rt:
 * within an integer type's range, or, finite, within a float type's. */
static bool bound_fits(ls_dtype rt, const ls_value *v, int64_t i, double f)
{
    double q = v->kind == LS_V_INT || v->kind == LS_V_BOOL ? (double)i : f;
    switch (rt) {
    case LS_DT_U8: return q >= 0 && q <= UINT8_MAX;
    case LS_DT_I8: return q >= INT8_MIN && q <= INT8_MAX;
    case LS_DT_I16: return q >= INT16_MIN && q <= INT16_MAX;
    case LS_DT_I32: return q >= INT32_MIN && q <= INT32_MAX;
    case LS_DT_F16: return !isfinite(f) || fabs(f) <= 65504.0;
    case LS_DT_BF16: return !isfinite(f) || fabs(f) <= 3.3895313892515355e38;
    case LS_DT_F32: return !isfinite(f) || fabs(f) <= FLT_MAX;
    default: return true;
    }
}

LK_DECL(k_clamp)
{
    const ls_tensor *x = args[0].t;
    bool has_lo = !lk_none(&args[1]), has_hi = !lk_none(&args[2]);
    if (!has_lo && !has_hi) return ls_kfail(c, "at least one of 'min' or 'max' must not be None");
    lk_operand ops[3];
    int n = 0;
    lk_operand_from(&ops[n++], &args[0]);
    if (has_lo) lk_operand_from(&ops[n++], &args[1]);
    if (has_hi) lk_operand_from(&ops[n++], &args[2]);
    ls_dtype rt = lk_result_type(ops, n);
    double lo = has_lo ? lk_f64(&args[1]) : -INFINITY, hi = has_hi ? lk_f64(&args[2]) : INFINITY;
    int64_t ilo = has_lo ? lk_int(&args[1]) : INT64_MIN, ihi = has_hi ? lk_int(&args[2]) : INT64_MAX;
    /* the portable kernel's check (op_clamp.cpp, clamp_out): a bound the result's type cannot
     * hold is refused, where a cast would wrap it (int8 and min 200: -56) */
    if (has_lo && !bound_fits(rt, &args[1], ilo, lo))
        return ls_kfail(c, "minimum value out of bounds: %g is not a %s", lo, ls_dtype_name(rt));
    if (has_hi && !bound_fits(rt, &args[2], ihi, hi))
        return ls_kfail(c, "maximum value out of bounds: %g is not a %s", hi, ls_dtype_name(rt));
    return unary(c, U_CLAMP, x, rt, lo, hi, ilo, ihi, out);
}
