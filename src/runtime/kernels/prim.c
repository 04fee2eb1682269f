/* ExecuTorch's prim ops: arithmetic and comparisons on scalar values (the sizes a dynamic
 * program computes at run time), as kernels/prim_ops/register_prim_ops.cpp defines them:
 *   add, sub, mul.Scalar: int op int is an int, any double makes a double;
 *   floordiv.Scalar: Python's // (ints: the quotient, one less when the signs differ and the
 *     remainder is not 0; doubles: (a - fmod(a, b)) / b, one less when the remainder's sign is
 *     not b's; b == 0 gives an infinity signed as a);
 *   truediv.Scalar: a double always;
 *   eq, gt, lt, ge, le.Scalar: a bool, of numbers or of two bools;
 *   floordiv.int: C's integer division (truncating, as the source has it);
 *   aten::sym_numel, aten::_local_scalar_dense: a tensor's element count, its first element.
 * An int division by zero, undefined in C, is refused here. Bools in arithmetic are refused as
 * the source's ET_CHECK does. */
#include <math.h>

#include "kernels.h"

enum { P_ADD, P_SUB, P_MUL, P_EQ, P_GT, P_LT, P_GE, P_LE };

static bool is_num(const ls_value *v)
{
    return v->kind == LS_V_INT || v->kind == LS_V_FLOAT;
}

static int numbers(ls_kctx *c, const ls_value *a, const ls_value *b)
{
    if (!is_num(a) || !is_num(b))
        return ls_kfail(c, "takes two numbers, not %s and %s", ls_value_kind_text(a->kind), ls_value_kind_text(b->kind));
    return 0;
}

static int algebra(ls_kctx *c, const ls_value *args, int op, ls_value *out)
{
    const ls_value *a = &args[0], *b = &args[1];
    if (numbers(c, a, b) != 0) return -1;
    if (a->kind == LS_V_INT && b->kind == LS_V_INT) {
        int64_t x = a->i, y = b->i;
        *out = ls_value_int(op == P_ADD ? (int64_t)((uint64_t)x + (uint64_t)y)
                            : op == P_SUB ? (int64_t)((uint64_t)x - (uint64_t)y)
                                          : (int64_t)((uint64_t)x * (uint64_t)y));
        return 0;
    }
    double x = lk_f64(a), y = lk_f64(b);
    *out = ls_value_float(op == P_ADD ? x + y : op == P_SUB ? x - y : x * y);
    return 0;
}

static int compare(ls_kctx *c, const ls_value *args, int op, ls_value *out)
{
    const ls_value *a = &args[0], *b = &args[1];
    if (a->kind == LS_V_BOOL && b->kind == LS_V_BOOL) {
        int x = a->b, y = b->b;
        bool r = op == P_EQ ? x == y : op == P_GT ? x > y : op == P_LT ? x < y : op == P_GE ? x >= y : x <= y;
        *out = ls_value_bool(r);
        return 0;
    }
    if (numbers(c, a, b) != 0) return -1;
    bool r;
    if (a->kind == LS_V_INT && b->kind == LS_V_INT) {
        int64_t x = a->i, y = b->i;
        r = op == P_EQ ? x == y : op == P_GT ? x > y : op == P_LT ? x < y : op == P_GE ? x >= y : x <= y;
    } else {
        double x = lk_f64(a), y = lk_f64(b);
        r = op == P_EQ ? x == y : op == P_GT ? x > y : op == P_LT ? x < y : op == P_GE ? x >= y : x <= y;
    }
    *out = ls_value_bool(r);
    return 0;
}

LK_DECL(k_prim_add) { (void)nargs; return algebra(c, args, P_ADD, out); }
LK_DECL(k_prim_sub) { (void)nargs; return algebra(c, args, P_SUB, out); }
LK_DECL(k_prim_mul) { (void)nargs; return algebra(c, args, P_MUL, out); }
LK_DECL(k_prim_eq) { (void)nargs; return compare(c, args, P_EQ, out); }
LK_DECL(k_prim_gt) { (void)nargs; return compare(c, args, P_GT, out); }
LK_DECL(k_prim_lt) { (void)nargs; return compare(c, args, P_LT, out); }
LK_DECL(k_prim_ge) { (void)nargs; return compare(c, args, P_GE, out); }
LK_DECL(k_prim_le) { (void)nargs; return compare(c, args, P_LE, out); }

static double floor_div_double(double a, double b)
{
    if (b == 0) return signbit(a) ? -INFINITY : INFINITY;
    double mod = fmod(a, b), div = (a - mod) / b;
    return mod != 0 && signbit(b) != signbit(mod) ? div - 1 : div;
}

LK_DECL(k_prim_floordiv)
{
    (void)nargs;
    const ls_value *a = &args[0], *b = &args[1];
    if (numbers(c, a, b) != 0) return -1;
    if (a->kind == LS_V_INT && b->kind == LS_V_INT) {
        if (b->i == 0) return ls_kfail(c, "integer division by zero");
        if (a->i == INT64_MIN && b->i == -1) return ls_kfail(c, "integer division overflows");
        int64_t q = a->i / b->i;
        if ((a->i < 0) == (b->i < 0)) *out = ls_value_int(q);
        else *out = ls_value_int(a->i % b->i ? q - 1 : q);
        return 0;
    }
    *out = ls_value_float(floor_div_double(lk_f64(a), lk_f64(b)));
    return 0;
}

LK_DECL(k_prim_truediv)
{
    (void)nargs;
    if (numbers(c, &args[0], &args[1]) != 0) return -1;
    *out = ls_value_float(lk_f64(&args[0]) / lk_f64(&args[1]));
    return 0;
}

LK_DECL(k_prim_floordiv_int)
{
    (void)nargs;
    int64_t a = lk_int(&args[0]), b = lk_int(&args[1]);
    if (b == 0) return ls_kfail(c, "integer division by zero");
    if (a == INT64_MIN && b == -1) return ls_kfail(c, "integer division overflows");
    *out = ls_value_int(a / b);
    return 0;
}

LK_DECL(k_sym_numel)
{
    (void)nargs;
    (void)c;
    *out = ls_value_int(args[0].t->numel);
    return 0;
}

LK_DECL(k_local_scalar_dense)
{
    (void)nargs;
    const ls_tensor *t = args[0].t;
    if (t->numel < 1) return ls_kfail(c, "takes a tensor with an element, not an empty one");
    if (ls_dtype_is_float(t->dtype)) *out = ls_value_float(ls_tensor_get_f64(t, 0));
    else if (t->dtype == LS_DT_BOOL) *out = ls_value_bool(ls_tensor_get_f64(t, 0) != 0);
    else *out = ls_value_int((int64_t)ls_tensor_get_f64(t, 0));
    return 0;
}
