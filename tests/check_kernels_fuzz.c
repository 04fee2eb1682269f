/* Kernels never crash: every operator's kernel is called with seeded random arguments drawn
 * from a pool of awkward values (empty and 0-dim tensors, every dtype, negative and out-of-range
 * ints, None, empty lists, lists of the wrong things). Each call must either succeed or fail
 * with a message; under AddressSanitizer and UBSan this also finds bad reads and overflow. */
#include <check.h>
#include <stdint.h>
#include <stdlib.h>
#include <string.h>

#include "ktest.h"
#include "ops.h"
#include "runtime.h"

static uint64_t rng = 88172645463325252ull;
static uint32_t next(void)
{
    rng ^= rng << 13;
    rng ^= rng >> 7;
    rng ^= rng << 17;
    return (uint32_t)(rng >> 11);
}

static ls_tensor *rand_tensor(void)
{
    static const ls_dtype dts[] = {LS_DT_F32, LS_DT_F32, LS_DT_F16, LS_DT_BF16, LS_DT_F64, LS_DT_I64,
                                   LS_DT_I32, LS_DT_I8,  LS_DT_U8,  LS_DT_BOOL};
    static const int64_t shapes[][4] = {{0}, {2, 3}, {3}, {1, 3}, {2, 1}, {0, 3}, {2, 2, 3}, {4}};
    static const int nds[] = {0, 2, 1, 2, 2, 2, 3, 1};
    int s = (int)(next() % 8);
    ls_tensor *t = ls_tensor_alloc(dts[next() % 10], nds[s], shapes[s]);
    for (int64_t i = 0; i < t->numel; i++) {
        int v = (int)(next() % 9) - 3; /* -3 .. 5: negative and out-of-range indices too */
        ls_tensor_set_f64(t, i, next() % 13 == 0 ? 0.0 / 0.0 : v);
    }
    return t;
}

static ls_value rand_value(int depth)
{
    switch (next() % 12) {
    case 0:
    case 1:
    case 2: return ls_value_tensor(rand_tensor());
    case 3: return ls_value_int((int64_t)(next() % 7) - 3);
    case 4: {
        static const int64_t big[] = {1, 1000000, INT64_MAX, INT64_MIN, (int64_t)1 << 40, -((int64_t)1 << 40)};
        return ls_value_int(big[next() % 6]);
    }
    case 5: return ls_value_float(next() % 2 ? 0.5 : -2.0);
    case 6: return ls_value_bool(next() % 2);
    case 7: return ls_value_none();
    case 8: {
        ls_value v = {.kind = LS_V_STRING};
        static const char *strs[] = {"none", "tanh", "floor", "trunc", "bogus"};
        v.s = ls_intern(strs[next() % 5]);
        return v;
    }
    case 9:
    case 10: { /* a list of ints */
        uint32_t n = next() % 4;
        ls_value l = ls_value_list(n);
        for (uint32_t i = 0; i < n; i++) l.items[i] = ls_value_int((int64_t)(next() % 7) - 3);
        return l;
    }
    default: { /* a list of tensors or None */
        uint32_t n = next() % 3;
        ls_value l = ls_value_list(n);
        for (uint32_t i = 0; i < n && depth == 0; i++) l.items[i] = next() % 4 ? ls_value_tensor(rand_tensor()) : ls_value_none();
        return l;
    }
    }
}

/* A plausible argument for a parameter, most of the time; anything at all otherwise. */
static ls_value arg_for(const ls_param *p)
{
    if (next() % 5 == 0) return rand_value(0);
    switch ((ls_ptype)p->type) {
    case LS_PT_TENSOR: return p->optional && next() % 3 == 0 ? ls_value_none() : ls_value_tensor(rand_tensor());
    case LS_PT_TENSOR_LIST:
    case LS_PT_OPT_TENSOR_LIST: {
        uint32_t n = 1 + next() % 3;
        ls_value l = ls_value_list(n);
        for (uint32_t i = 0; i < n; i++)
            l.items[i] = p->type == LS_PT_OPT_TENSOR_LIST && next() % 3 == 0 ? ls_value_none() : ls_value_tensor(rand_tensor());
        return l;
    }
    case LS_PT_INT: return next() % 8 ? ls_value_int((int64_t)(next() % 7) - 3) : rand_value(0);
    case LS_PT_INT_LIST: {
        uint32_t n = next() % 4;
        ls_value l = ls_value_list(n);
        for (uint32_t i = 0; i < n; i++)
            l.items[i] = next() % 10 ? ls_value_int((int64_t)(next() % 7) - 3) : ls_value_int(next() % 2 ? INT64_MAX : INT64_MIN);
        return l;
    }
    case LS_PT_DTYPE: return ls_value_int(1 + (int64_t)(next() % 10));
    case LS_PT_FLOAT:
    case LS_PT_SCALAR: return next() % 2 ? ls_value_int((int64_t)(next() % 5) - 2) : ls_value_float(0.25);
    case LS_PT_BOOL: return ls_value_bool(next() % 2);
    default: return rand_value(0);
    }
}

START_TEST(random_arguments_never_crash)
{
    /* LS_FUZZ_SEED and LS_FUZZ_ROUNDS explore further than the default run */
    const char *seed = getenv("LS_FUZZ_SEED"), *rounds_env = getenv("LS_FUZZ_ROUNDS");
    if (seed) rng = strtoull(seed, NULL, 10) * 2654435761ull + 1;
    int rounds = rounds_env ? atoi(rounds_env) : 150;
    int ok = 0, failed = 0;
    for (int i = 0; i < LS_OP_COUNT; i++) {
        const ls_op *op = ls_op_get((ls_op_id)i);
        if (!ls_kernel_for(op)) continue;
        for (int round = 0; round < rounds; round++) {
            ls_value args[LS_MAX_PARAMS];
            uint32_t n = op->flags & LS_OPF_SPECIAL ? 2 : op->schema.nparams;
            if (n && next() % 10 == 0) n--; /* now and then rely on a default */
            for (uint32_t k = 0; k < n; k++)
                args[k] = op->flags & LS_OPF_SPECIAL ? rand_value(0) : arg_for(&op->schema.params[k]);
            ls_value out;
            ls_error err;
            int rc = ls_kernel_call(op, NULL, args, n, &out, &err);
            if (rc == 0) ok++;
            else {
                failed++;
                ck_assert_msg(strlen(err.msg) > 0, "%s failed without a message", op->qualname);
            }
            ls_value_release(&out);
            for (uint32_t k = 0; k < n; k++) ls_value_release(&args[k]);
        }
    }
    if (rounds >= 150) {
        ck_assert_int_gt(ok, 1000); /* the pool makes plenty of valid calls too */
        ck_assert_int_gt(failed, 1000);
    }
}
END_TEST

Suite *kernels_fuzz_suite(void)
{
    Suite *s = suite_create("kernels_fuzz");
    TCase *tc = tcase_create("core");
    tcase_set_timeout(tc, 60);
    tcase_add_test(tc, random_arguments_never_crash);
    suite_add_tcase(s, tc);
    return s;
}
