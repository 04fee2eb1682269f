/* Binary and ternary elementwise kernels: add, sub, rsub, mul, div (three rounding modes),
 * pow, comparisons, logical and/or, where, masked_fill, clamp with tensor bounds.
 *
 * How they run: the operands' result type follows torch.result_type; arithmetic happens in a
 * compute type (float32 for the halves, float64, int64 for integers and bool, with wrapping
 * integer arithmetic); operands not already in it are converted once, whole. The broadcast
 * iterator (kernels/support.c) hands each row to a typed loop whose operand strides are 0 or 1,
 * so the loops GCC vectorises carry no dtype switch and no index arithmetic. */
#include <inttypes.h>
#include <math.h>
#include <stdio.h>
#include <stdlib.h>

#include "kernels.h"

enum binop {
    B_ADD, B_ADDA, B_SUBA, B_MUL, B_DIV, B_DIVT, B_DIVF, B_POW, B_ATAN2,
    B_EQ, B_NE, B_GT, B_GE, B_LT, B_LE,
    B_COUNT
};
typedef void (*bin_row)(int64_t n, void *o, const void *a, int64_t sa, const void *b, int64_t sb, double alpha);

/* wrapping int64 arithmetic (torch's integer ops wrap; C's signed overflow is undefined) */
#define WADD(x, y) ((int64_t)((uint64_t)(x) + (uint64_t)(y)))
#define WSUB(x, y) ((int64_t)((uint64_t)(x) - (uint64_t)(y)))
#define WMUL(x, y) ((int64_t)((uint64_t)(x) * (uint64_t)(y)))

#define BIN_ROW(name, T, OT, expr)                                                                        \
    LK_HOT static void name(int64_t n, void *restrict vo, const void *restrict va, int64_t sa,            \
                            const void *restrict vb, int64_t sb, double alpha_)                           \
    {                                                                                                     \
        OT *restrict o = vo;                                                                              \
        const T *restrict a = va;                                                                         \
        const T *restrict b = vb;                                                                         \
        const T alpha = (T)alpha_;                                                                        \
        (void)alpha;                                                                                      \
        if (sa == 1 && sb == 1) {                                                                         \
            for (int64_t i = 0; i < n; i++) {                                                             \
                const T x = a[i], y = b[i];                                                               \
                o[i] = (OT)(expr);                                                                        \
            }                                                                                             \
        } else if (sa == 0 && sb == 1) {                                                                  \
            const T x = a[0];                                                                             \
            for (int64_t i = 0; i < n; i++) {                                                             \
                const T y = b[i];                                                                         \
                o[i] = (OT)(expr);                                                                        \
            }                                                                                             \
        } else if (sa == 1 && sb == 0) {                                                                  \
            const T y = b[0];                                                                             \
            for (int64_t i = 0; i < n; i++) {                                                             \
                const T x = a[i];                                                                         \
                o[i] = (OT)(expr);                                                                        \
            }                                                                                             \
        } else {                                                                                          \
            for (int64_t i = 0; i < n; i++) {                                                             \
                const T x = a[i * sa], y = b[i * sb];                                                     \
                o[i] = (OT)(expr);                                                                        \
            }                                                                                             \
        }                                                                                                 \
    }

/* torch's floor division of floats (div_floor_floating): exact for a remainder, then floor. */
static inline double floordiv_f64(double a, double b)
{
    if (b == 0) return a / b;
    double mod = fmod(a, b);
    double div = (a - mod) / b;
    if (mod != 0 && ((b < 0) != (mod < 0))) div -= 1;
    double fl;
    if (div != 0) {
        fl = floor(div);
        if (div - fl > 0.5) fl += 1;
    } else {
        fl = copysign(0.0, a / b);
    }
    return fl;
}
static inline float floordiv_f32(float a, float b)
{
    if (b == 0) return a / b;
    float mod = fmodf(a, b);
    float div = (a - mod) / b;
    if (mod != 0 && ((b < 0) != (mod < 0))) div -= 1;
    float fl;
    if (div != 0) {
        fl = floorf(div);
        if (div - fl > 0.5f) fl += 1;
    } else {
        fl = copysignf(0.0f, a / b);
    }
    return fl;
}
/* Integer division; the divisor is checked for zero before the loop. */
static inline int64_t idiv_trunc(int64_t a, int64_t b)
{
    return b == -1 ? WSUB(0, a) : a / b;
}
static inline int64_t idiv_floor(int64_t a, int64_t b)
{
    if (b == -1) return WSUB(0, a);
    int64_t q = a / b, r = a % b;
    return (r != 0 && ((r < 0) != (b < 0))) ? q - 1 : q;
}
static inline int64_t ipow(int64_t base, int64_t e)
{
    uint64_t r = 1, b = (uint64_t)base;
    while (e > 0) {
        if (e & 1) r *= b;
        b *= b;
        e >>= 1;
    }
    return (int64_t)r;
}
static inline float powf_fast(float x, float y)
{
    return y == 2.0f ? x * x : y == 1.0f ? x : y == 0.5f ? sqrtf(x) : powf(x, y);
}

BIN_ROW(add_f32, float, float, x + y)
BIN_ROW(add_f64, double, double, x + y)
BIN_ROW(add_i64, int64_t, int64_t, WADD(x, y))
BIN_ROW(adda_f32, float, float, x + alpha * y)
BIN_ROW(adda_f64, double, double, x + alpha * y)
BIN_ROW(adda_i64, int64_t, int64_t, WADD(x, WMUL(alpha, y)))
BIN_ROW(suba_f32, float, float, x - alpha * y)
BIN_ROW(suba_f64, double, double, x - alpha * y)
BIN_ROW(suba_i64, int64_t, int64_t, WSUB(x, WMUL(alpha, y)))
BIN_ROW(mul_f32, float, float, x * y)
BIN_ROW(mul_f64, double, double, x * y)
BIN_ROW(mul_i64, int64_t, int64_t, WMUL(x, y))
BIN_ROW(div_f32, float, float, x / y)
BIN_ROW(div_f64, double, double, x / y)
BIN_ROW(divt_f32, float, float, truncf(x / y))
BIN_ROW(divt_f64, double, double, trunc(x / y))
BIN_ROW(divt_i64, int64_t, int64_t, idiv_trunc(x, y))
BIN_ROW(divf_f32, float, float, floordiv_f32(x, y))
BIN_ROW(divf_f64, double, double, floordiv_f64(x, y))
BIN_ROW(divf_i64, int64_t, int64_t, idiv_floor(x, y))
BIN_ROW(pow_f32, float, float, powf_fast(x, y))
BIN_ROW(pow_f64, double, double, pow(x, y))
BIN_ROW(pow_i64, int64_t, int64_t, ipow(x, y))
BIN_ROW(atan2_f32, float, float, atan2f(x, y))
BIN_ROW(atan2_f64, double, double, atan2(x, y))
#define CMP_ROWS(op, expr)                       \
    BIN_ROW(op##_f32, float, uint8_t, expr)      \
    BIN_ROW(op##_f64, double, uint8_t, expr)     \
    BIN_ROW(op##_i64, int64_t, uint8_t, expr)
CMP_ROWS(eq, x == y)
CMP_ROWS(ne, x != y)
CMP_ROWS(gt, x > y)
CMP_ROWS(ge, x >= y)
CMP_ROWS(lt, x < y)
CMP_ROWS(le, x <= y)
BIN_ROW(and_b8, uint8_t, uint8_t, x && y)
BIN_ROW(or_b8, uint8_t, uint8_t, x || y)

/* [op][compute type: f32, f64, i64] */
static const bin_row bin_rows[B_COUNT][3] = {
    [B_ADD] = {add_f32, add_f64, add_i64},     [B_ADDA] = {adda_f32, adda_f64, adda_i64},
    [B_SUBA] = {suba_f32, suba_f64, suba_i64}, [B_MUL] = {mul_f32, mul_f64, mul_i64},
    [B_DIV] = {div_f32, div_f64, NULL},        [B_DIVT] = {divt_f32, divt_f64, divt_i64},
    [B_DIVF] = {divf_f32, divf_f64, divf_i64}, [B_POW] = {pow_f32, pow_f64, pow_i64},
    [B_ATAN2] = {atan2_f32, atan2_f64, NULL},
    [B_EQ] = {eq_f32, eq_f64, eq_i64},         [B_NE] = {ne_f32, ne_f64, ne_i64},
    [B_GT] = {gt_f32, gt_f64, gt_i64},         [B_GE] = {ge_f32, ge_f64, ge_i64},
    [B_LT] = {lt_f32, lt_f64, lt_i64},         [B_LE] = {le_f32, le_f64, le_i64},
};

static int ct_index(ls_dtype ct)
{
    return ct == LS_DT_F32 ? 0 : ct == LS_DT_F64 ? 1 : 2;
}

/* One operand in the compute type: a tensor's data (converted if needed) or a scalar. */
typedef struct prepared {
    const void *data;
    void *tmp;
    int ndim;
    const int64_t *sizes;
    uint64_t scalar; /* storage for a scalar, 8 bytes */
} prepared;

/* As TensorIterator does for float16/bfloat16 results: a tensor of another dtype is first
 * converted to the common dtype (so an int32 tensor rounds to float16 as in torch), then to
 * the float32 compute type. Python scalars keep their value in the compute type for arithmetic
 * (torch reads them as the op's math type), but comparisons round them to the common dtype
 * too (x_f16 == 0.1 compares with float16(0.1)). */
static void prepare_as(prepared *p, const lk_operand *o, ls_dtype ct, ls_dtype common, bool round_scalars)
{
    memset(p, 0, sizeof *p);
    bool half = common == LS_DT_F16 || common == LS_DT_BF16;
    if (o->is_scalar) {
        if (ct == LS_DT_BOOL) {
            *(uint8_t *)&p->scalar = o->scalar_is_int ? o->i != 0 : o->f != 0;
        } else if (half && round_scalars) {
            double v = o->scalar_is_int ? (double)o->i : o->f;
            uint16_t h;
            lk_convert(&h, common, &v, LS_DT_F64, 1);
            lk_convert(&p->scalar, ct, &h, common, 1);
        } else {
            lk_scalar_store(&p->scalar, ct, o->f, o->i, o->scalar_is_int);
        }
        p->data = &p->scalar;
        return;
    }
    p->ndim = o->t->ndim;
    p->sizes = o->t->sizes;
    if (half && o->t->dtype != common) {
        size_t n = (size_t)o->t->numel;
        uint16_t *h = lk_alloc_tmp(n * 2 + 2);
        p->tmp = lk_alloc_tmp(n * ls_dtype_size(ct) + 8);
        lk_convert(h, common, o->t->data, o->t->dtype, o->t->numel);
        lk_convert(p->tmp, ct, h, common, o->t->numel);
        ls_free_aligned(h);
        p->data = p->tmp;
        return;
    }
    p->data = lk_as(o->t, ct, &p->tmp);
}

static void prepare(prepared *p, const lk_operand *o, ls_dtype ct)
{
    prepare_as(p, o, ct, LS_DT_UNKNOWN, false);
}

/* ---- running a row function over the broadcast iteration, in up to two threads */

typedef struct bin_job {
    lk_iter it;
    bin_row fn;
    double alpha;
    uint8_t *o;
    const uint8_t *a, *b;
    size_t eo, ei; /* element sizes of the output and the inputs */
} bin_job;

static void bin_range(void *vctx, int64_t lo, int64_t hi)
{
    bin_job *j = vctx;
    lk_iter it = j->it;
    int64_t sa = lk_iter_stride(&it, 1), sb = lk_iter_stride(&it, 2);
    if (it.rows == 1) { /* one long row: split it */
        j->fn(hi - lo, j->o + (size_t)lo * j->eo, j->a + (size_t)(lo * sa) * j->ei, sa,
              j->b + (size_t)(lo * sb) * j->ei, sb, j->alpha);
        return;
    }
    lk_iter_seek(&it, lo);
    for (int64_t r = lo; r < hi; r++) {
        j->fn(it.inner, j->o + (size_t)it.off[0] * j->eo, j->a + (size_t)it.off[1] * j->ei, sa,
              j->b + (size_t)it.off[2] * j->ei, sb, j->alpha);
        lk_iter_next(&it);
    }
}

static void run_rows(bin_job *j, int ndim, const int64_t *shape, const prepared *pa, const prepared *pb)
{
    int nds[3] = {ndim, pa->ndim, pb->ndim};
    const int64_t *shapes[3] = {shape, pa->sizes, pb->sizes};
    lk_iter_init(&j->it, 3, ndim, shape, nds, shapes);
    if (j->it.rows == 0 || j->it.inner == 0) return;
    if (j->it.rows == 1) lk_parallel(j->it.inner, 1, bin_range, j);
    else lk_parallel(j->it.rows, (double)j->it.inner, bin_range, j);
}

static bool int_divisor_has_zero(const prepared *pb, const lk_operand *ob)
{
    int64_t n = ob->is_scalar ? 1 : ob->t->numel;
    const int64_t *v = pb->data;
    for (int64_t i = 0; i < n; i++)
        if (v[i] == 0) return true;
    return false;
}

static bool int_exponent_negative(const prepared *pb, const lk_operand *ob)
{
    int64_t n = ob->is_scalar ? 1 : ob->t->numel;
    const int64_t *v = pb->data;
    for (int64_t i = 0; i < n; i++)
        if (v[i] < 0) return true;
    return false;
}

/* The whole binary op. into: an existing output of the right shape and dtype, or NULL. */
static int binary(ls_kctx *c, enum binop op, const lk_operand *oa, const lk_operand *ob, double alpha,
                  ls_tensor *into, ls_value *out)
{
    ls_dtype common = lk_result_type((lk_operand[]){*oa, *ob}, 2);
    if (common == LS_DT_UNKNOWN) return ls_kfail(c, "cannot determine the result type");
    bool is_cmp = op >= B_EQ;
    ls_dtype rt = is_cmp ? LS_DT_BOOL : common;
    if ((op == B_DIV || op == B_ATAN2) && !ls_dtype_is_float(common)) rt = common = LS_DT_F32;
    if (op == B_POW && common == LS_DT_BOOL) rt = common = LS_DT_I64;
    if ((op == B_SUBA) && common == LS_DT_BOOL)
        return ls_kfail(c, "subtraction of two bool tensors is not supported (use logical_xor or ~)");
    if ((op == B_ADDA || op == B_SUBA) && !ls_dtype_is_float(common) && alpha != floor(alpha))
        return ls_kfail(c, "alpha %g must be an integer for integral inputs", alpha);
    if ((op == B_ADDA || op == B_SUBA) && alpha == 1) op = op == B_ADDA ? B_ADD : op;
    ls_dtype ct = lk_compute_type(common);

    int ndim;
    int64_t shape[LS_MAX_DIMS];
    int na = oa->is_scalar ? 0 : oa->t->ndim, nb = ob->is_scalar ? 0 : ob->t->ndim;
    if (lk_broadcast_shape(c, na, oa->is_scalar ? NULL : oa->t->sizes, nb, ob->is_scalar ? NULL : ob->t->sizes,
                           &ndim, shape) != 0)
        return -1;

    prepared pa, pb;
    prepare_as(&pa, oa, ct, common, is_cmp);
    prepare_as(&pb, ob, ct, common, is_cmp);
    int rc = 0;
    ls_tensor *res = NULL;
    void *tmp_out = NULL;
    if (ct == LS_DT_I64 && (op == B_DIVT || op == B_DIVF) && int_divisor_has_zero(&pb, ob)) {
        rc = ls_kfail(c, "integer division by zero");
        goto done;
    }
    if (ct == LS_DT_I64 && op == B_POW && int_exponent_negative(&pb, ob)) {
        rc = ls_kfail(c, "integers to negative integer powers are not allowed");
        goto done;
    }
    if (into) {
        if (into->dtype != rt || into->ndim != ndim || memcmp(into->sizes, shape, sizeof(int64_t) * (size_t)ndim) != 0) {
            char s1[96], s2[96];
            rc = ls_kfail(c, "output is %s%s, the result is %s%s", ls_dtype_name(into->dtype),
                          lk_shape_str(into->ndim, into->sizes, s1, sizeof s1), ls_dtype_name(rt),
                          lk_shape_str(ndim, shape, s2, sizeof s2));
            goto done;
        }
        res = ls_tensor_ref(into);
    } else if (!(res = lk_new(c, rt, ndim, shape))) {
        rc = -1;
        goto done;
    }
    bin_job j = {.fn = bin_rows[op][ct_index(ct)], .alpha = alpha, .a = pa.data, .b = pb.data,
                 .ei = ls_dtype_size(ct)};
    ls_dtype produced = is_cmp ? LS_DT_BOOL : ct;
    j.eo = ls_dtype_size(produced);
    if (produced == rt) {
        j.o = res->data;
    } else {
        tmp_out = lk_alloc_tmp((size_t)res->numel * j.eo + 1);
        j.o = tmp_out;
    }
    run_rows(&j, ndim, shape, &pa, &pb);
    if (tmp_out) lk_convert(res->data, rt, tmp_out, produced, res->numel);
    res->hash_valid = false;
done:
    ls_free_aligned(pa.tmp);
    ls_free_aligned(pb.tmp);
    ls_free_aligned(tmp_out);
    if (rc == 0 && out) *out = ls_value_tensor(res);
    else ls_tensor_unref(res);
    return rc;
}

static int binary_values(ls_kctx *c, enum binop op, const ls_value *a, const ls_value *b, double alpha, ls_value *out)
{
    lk_operand oa, ob;
    lk_operand_from(&oa, a);
    lk_operand_from(&ob, b);
    if (oa.is_scalar && ob.is_scalar) {
        /* two scalars (a SymInt expression): a 0-dim tensor of their type */
        ls_tensor *t = ls_tensor_scalar_f64(LS_DT_I64, 0);
        oa.t = t;
        oa.is_scalar = false;
        t->dtype = oa.scalar_is_int ? LS_DT_I64 : LS_DT_F64;
        lk_scalar_store(t->data, t->dtype, oa.f, oa.i, oa.scalar_is_int);
        int rc = binary(c, op, &oa, &ob, alpha, NULL, out);
        ls_tensor_unref(t);
        return rc;
    }
    return binary(c, op, &oa, &ob, alpha, NULL, out);
}

int ls_binary_into(ls_op_id opid, const ls_tensor *a, const ls_tensor *b, ls_tensor *out, ls_error *err)
{
    ls_kctx c = {.op = ls_op_get(opid), .err = err};
    enum binop op;
    switch (opid) {
    case LS_OP_add_Tensor: op = B_ADD; break;
    case LS_OP_sub_Tensor: op = B_SUBA; break;
    case LS_OP_mul_Tensor: op = B_MUL; break;
    case LS_OP_div_Tensor: op = B_DIV; break;
    default: return ls_fail(err, "ls_binary_into: %s is not add, sub, mul or div", ls_op_get(opid)->qualname);
    }
    lk_operand oa = {.t = a}, ob = {.t = b};
    return binary(&c, op, &oa, &ob, 1.0, out, NULL);
}

/* ---- kernels */

LK_DECL(k_add) { return binary_values(c, B_ADDA, &args[0], &args[1], lk_f64(&args[2]), out); }
LK_DECL(k_sub) { return binary_values(c, B_SUBA, &args[0], &args[1], lk_f64(&args[2]), out); }
LK_DECL(k_rsub) { return binary_values(c, B_SUBA, &args[1], &args[0], lk_f64(&args[2]), out); }
LK_DECL(k_mul) { return binary_values(c, B_MUL, &args[0], &args[1], 1, out); }
LK_DECL(k_pow) { return binary_values(c, B_POW, &args[0], &args[1], 1, out); }
LK_DECL(k_atan2) { return binary_values(c, B_ATAN2, &args[0], &args[1], 1, out); }

LK_DECL(k_div)
{
    enum binop op = B_DIV;
    if (nargs > 2 && args[2].kind == LS_V_STRING) {
        const char *mode = args[2].s;
        if (strcmp(mode, "trunc") == 0) op = B_DIVT;
        else if (strcmp(mode, "floor") == 0) op = B_DIVF;
        else return ls_kfail(c, "rounding_mode '%s' is not one of None, 'trunc', 'floor'", mode);
    }
    return binary_values(c, op, &args[0], &args[1], 1, out);
}

#define CMP_KERNEL(name, op) \
    LK_DECL(name) { return binary_values(c, op, &args[0], &args[1], 1, out); }
CMP_KERNEL(k_eq, B_EQ)
CMP_KERNEL(k_ne, B_NE)
CMP_KERNEL(k_gt, B_GT)
CMP_KERNEL(k_ge, B_GE)
CMP_KERNEL(k_lt, B_LT)
CMP_KERNEL(k_le, B_LE)

static int logical(ls_kctx *c, bin_row fn, const ls_value *a, const ls_value *b, ls_value *out)
{
    lk_operand oa, ob;
    lk_operand_from(&oa, a);
    lk_operand_from(&ob, b);
    if (oa.is_scalar || ob.is_scalar) return ls_kfail(c, "expects two tensors");
    int ndim;
    int64_t shape[LS_MAX_DIMS];
    if (lk_broadcast_shape(c, oa.t->ndim, oa.t->sizes, ob.t->ndim, ob.t->sizes, &ndim, shape) != 0) return -1;
    ls_tensor *res = lk_new(c, LS_DT_BOOL, ndim, shape);
    if (!res) return -1;
    prepared pa, pb;
    prepare(&pa, &oa, LS_DT_BOOL);
    prepare(&pb, &ob, LS_DT_BOOL);
    bin_job j = {.fn = fn, .a = pa.data, .b = pb.data, .ei = 1, .eo = 1, .o = res->data};
    run_rows(&j, ndim, shape, &pa, &pb);
    ls_free_aligned(pa.tmp);
    ls_free_aligned(pb.tmp);
    return lk_ret(out, res);
}

LK_DECL(k_logical_and) { return logical(c, and_b8, &args[0], &args[1], out); }
LK_DECL(k_logical_or) { return logical(c, or_b8, &args[0], &args[1], out); }

/* ---- where / masked_fill: selection needs no arithmetic, only the element size */

#define SEL_ROW(name, T)                                                                                       \
    LK_HOT static void name(int64_t n, T *restrict o, const uint8_t *restrict m, int64_t sm, const T *restrict a, \
                            int64_t sa, const T *restrict b, int64_t sb)                                         \
    {                                                                                                          \
        if (sm == 1 && sa == 1 && sb == 1)                                                                     \
            for (int64_t i = 0; i < n; i++) o[i] = m[i] ? a[i] : b[i];                                         \
        else if (sm == 1 && sa == 0 && sb == 1)                                                                \
            for (int64_t i = 0; i < n; i++) o[i] = m[i] ? a[0] : b[i];                                         \
        else if (sm == 1 && sa == 1 && sb == 0)                                                                \
            for (int64_t i = 0; i < n; i++) o[i] = m[i] ? a[i] : b[0];                                         \
        else                                                                                                   \
            for (int64_t i = 0; i < n; i++) o[i] = m[i * sm] ? a[i * sa] : b[i * sb];                          \
    }
SEL_ROW(sel8, uint8_t)
SEL_ROW(sel16, uint16_t)
SEL_ROW(sel32, uint32_t)
SEL_ROW(sel64, uint64_t)

static int select_where(ls_kctx *c, const ls_tensor *cond, const lk_operand *oa, const lk_operand *ob, ls_dtype rt,
                        ls_value *out)
{
    int ndim, n2;
    int64_t s1[LS_MAX_DIMS], shape[LS_MAX_DIMS];
    int na = oa->is_scalar ? 0 : oa->t->ndim, nb = ob->is_scalar ? 0 : ob->t->ndim;
    if (lk_broadcast_shape(c, cond->ndim, cond->sizes, na, oa->is_scalar ? NULL : oa->t->sizes, &n2, s1) != 0 ||
        lk_broadcast_shape(c, n2, s1, nb, ob->is_scalar ? NULL : ob->t->sizes, &ndim, shape) != 0)
        return -1;
    ls_tensor *res = lk_new(c, rt, ndim, shape);
    if (!res) return -1;
    void *tc;
    const uint8_t *m = lk_as(cond, LS_DT_BOOL, &tc);
    prepared pa, pb;
    /* prepare() stores scalars in compute types; here operands are needed in rt itself */
    memset(&pa, 0, sizeof pa);
    memset(&pb, 0, sizeof pb);
    const lk_operand *ops[2] = {oa, ob};
    prepared *ps[2] = {&pa, &pb};
    for (int k = 0; k < 2; k++) {
        if (ops[k]->is_scalar) {
            ls_tensor *t = ls_tensor_scalar_f64(rt, 0);
            if (ops[k]->scalar_is_int) {
                int64_t v = ops[k]->i;
                lk_convert(t->data, rt, &v, LS_DT_I64, 1);
            } else {
                double v = ops[k]->f;
                lk_convert(t->data, rt, &v, LS_DT_F64, 1);
            }
            memcpy(&ps[k]->scalar, t->data, ls_dtype_size(rt));
            ls_tensor_unref(t);
            ps[k]->data = &ps[k]->scalar;
        } else {
            ps[k]->data = lk_as(ops[k]->t, rt, &ps[k]->tmp);
            ps[k]->ndim = ops[k]->t->ndim;
            ps[k]->sizes = ops[k]->t->sizes;
        }
    }
    int nds[4] = {ndim, cond->ndim, pa.ndim, pb.ndim};
    const int64_t *shapes[4] = {shape, cond->sizes, pa.sizes, pb.sizes};
    lk_iter it;
    lk_iter_init(&it, 4, ndim, shape, nds, shapes);
    size_t es = ls_dtype_size(rt);
    int64_t sm = lk_iter_stride(&it, 1), sa = lk_iter_stride(&it, 2), sb = lk_iter_stride(&it, 3);
    for (int64_t r = 0; r < it.rows && it.inner > 0; r++) {
        uint8_t *o = (uint8_t *)res->data + (size_t)it.off[0] * es;
        const uint8_t *mm = m + it.off[1];
        const uint8_t *a = (const uint8_t *)pa.data + (size_t)it.off[2] * es;
        const uint8_t *b = (const uint8_t *)pb.data + (size_t)it.off[3] * es;
        switch (es) {
        case 1: sel8(it.inner, o, mm, sm, a, sa, b, sb); break;
        case 2: sel16(it.inner, (uint16_t *)o, mm, sm, (const uint16_t *)a, sa, (const uint16_t *)b, sb); break;
        case 4: sel32(it.inner, (uint32_t *)o, mm, sm, (const uint32_t *)a, sa, (const uint32_t *)b, sb); break;
        default: sel64(it.inner, (uint64_t *)o, mm, sm, (const uint64_t *)a, sa, (const uint64_t *)b, sb); break;
        }
        lk_iter_next(&it);
    }
    ls_free_aligned(tc);
    ls_free_aligned(pa.tmp);
    ls_free_aligned(pb.tmp);
    return lk_ret(out, res);
}

LK_DECL(k_where)
{
    lk_operand oa, ob;
    lk_operand_from(&oa, &args[1]);
    lk_operand_from(&ob, &args[2]);
    if (args[0].kind != LS_V_TENSOR) return ls_kfail(c, "condition must be a tensor");
    ls_dtype rt = lk_result_type((lk_operand[]){oa, ob}, 2);
    return select_where(c, args[0].t, &oa, &ob, rt, out);
}

LK_DECL(k_masked_fill)
{
    lk_operand self, val;
    lk_operand_from(&self, &args[0]);
    lk_operand_from(&val, &args[2]);
    if (self.is_scalar || args[1].kind != LS_V_TENSOR) return ls_kfail(c, "expects a tensor and a mask");
    if (args[1].t->dtype != LS_DT_BOOL) return ls_kfail(c, "mask must be bool, not %s", ls_dtype_name(args[1].t->dtype));
    if (val.t && val.t->numel != 1) return ls_kfail(c, "value must be a scalar or a one-element tensor");
    if (val.t) { /* a 0-dim tensor value: read it as a scalar */
        lk_operand v = {.is_scalar = true};
        if (ls_dtype_is_float(val.t->dtype)) v.f = ls_tensor_get_f64(val.t, 0);
        else v.i = ls_tensor_get_i64(val.t, 0), v.f = (double)v.i, v.scalar_is_int = true;
        val = v;
    }
    return select_where(c, args[1].t, &val, &self, self.t->dtype, out);
}

/* ---- clamp with tensor bounds (the scalar form lives with the unary kernels) */

#define CLAMP_ROW(name, T)                                                                                     \
    LK_HOT static void name(int64_t n, T *restrict o, const T *restrict x, int64_t sx, const T *restrict lo,     \
                            int64_t sl, const T *restrict hi, int64_t sh)                                        \
    {                                                                                                          \
        for (int64_t i = 0; i < n; i++) {                                                                      \
            T v = x[i * sx];                                                                                   \
            /* as clamp.Scalar: a NaN input or bound gives NaN (op_clamp.cpp, max/min_override) */             \
            if (v == v && lo) v = lo[i * sl] != lo[i * sl] || v < lo[i * sl] ? lo[i * sl] : v;                 \
            if (v == v && hi) v = hi[i * sh] != hi[i * sh] || v > hi[i * sh] ? hi[i * sh] : v;                 \
            o[i] = v;                                                                                          \
        }                                                                                                      \
    }
CLAMP_ROW(clamp_f32, float)
CLAMP_ROW(clamp_f64, double)
CLAMP_ROW(clamp_i64, int64_t)

LK_DECL(k_clamp_tensor)
{
    if (lk_none(&args[1]) && lk_none(&args[2])) return ls_kfail(c, "at least one of 'min' or 'max' must not be None");
    lk_operand ops[3];
    int nops = 0;
    for (int k = 0; k < 3; k++)
        if (!lk_none(&args[k])) lk_operand_from(&ops[nops++], &args[k]);
    ls_dtype rt = lk_result_type(ops, nops), ct = lk_compute_type(rt);
    prepared p[3];
    memset(p, 0, sizeof p);
    int ndim = 0, nds[4];
    int64_t shape[LS_MAX_DIMS];
    const int64_t *shapes[4];
    for (int k = 0; k < 3; k++) {
        if (lk_none(&args[k])) continue;
        lk_operand o;
        lk_operand_from(&o, &args[k]);
        prepare(&p[k], &o, ct);
        int64_t tmp[LS_MAX_DIMS];
        int nt;
        if (lk_broadcast_shape(c, ndim, shape, p[k].ndim, p[k].sizes, &nt, tmp) != 0) {
            for (int q = 0; q < 3; q++) ls_free_aligned(p[q].tmp);
            return -1;
        }
        ndim = nt;
        memcpy(shape, tmp, sizeof(int64_t) * (size_t)nt);
    }
    ls_tensor *res = lk_new(c, rt, ndim, shape);
    void *buf = res && ct != rt ? lk_alloc_tmp((size_t)res->numel * ls_dtype_size(ct) + 1) : NULL;
    if (res) {
        nds[0] = ndim;
        shapes[0] = shape;
        for (int k = 0; k < 3; k++) nds[k + 1] = p[k].ndim, shapes[k + 1] = p[k].sizes;
        lk_iter it;
        lk_iter_init(&it, 4, ndim, shape, nds, shapes);
        size_t es = ls_dtype_size(ct);
        uint8_t *o = buf ? buf : res->data;
        int64_t s1 = lk_iter_stride(&it, 1), s2 = lk_iter_stride(&it, 2), s3 = lk_iter_stride(&it, 3);
        for (int64_t r = 0; r < it.rows && it.inner > 0; r++) {
            uint8_t *orow = o + (size_t)it.off[0] * es;
            const void *x = (const uint8_t *)p[0].data + (size_t)it.off[1] * es;
            const void *lo = p[1].data ? (const uint8_t *)p[1].data + (size_t)it.off[2] * es : NULL;
            const void *hi = p[2].data ? (const uint8_t *)p[2].data + (size_t)it.off[3] * es : NULL;
            if (ct == LS_DT_F32) clamp_f32(it.inner, (float *)orow, x, s1, lo, s2, hi, s3);
            else if (ct == LS_DT_F64) clamp_f64(it.inner, (double *)orow, x, s1, lo, s2, hi, s3);
            else clamp_i64(it.inner, (int64_t *)orow, x, s1, lo, s2, hi, s3);
            lk_iter_next(&it);
        }
        if (buf) lk_convert(res->data, rt, buf, ct, res->numel);
    }
    ls_free_aligned(buf);
    for (int k = 0; k < 3; k++) ls_free_aligned(p[k].tmp);
    return res ? lk_ret(out, res) : -1;
}
