/* The interpreter on programs built in C: values, mutable buffers carried across runs, in-place
 * ops, user-input mutations, delegates through a test backend, and every error it must name
 * (missing weights, unknown op, no kernel, kernel failure, metadata mismatch, wrong inputs,
 * unavailable backend, missing blob). Also the seeded inputs. */
#include <check.h>
#include <math.h>
#include <stdarg.h>
#include <stdlib.h>
#include <string.h>

#include "backend.h"
#include "build.h"
#include "export.h"
#include "progfixtures.h"
#include "runtime.h"

static const int64_t S23[2] = {2, 3}, S3[1] = {3}, S1[1] = {1}, S32[2] = {3, 2}, S12[2] = {1, 2};

static uint32_t input(ls_builder *b, const char *name, ls_input_kind kind, const char *target, ls_dtype dt, int nd,
                      const int64_t *sz, ls_tensor *data)
{
    ls_tmeta m = ls_meta(dt, nd, sz);
    uint32_t id = ls_build_input(b, name, kind, target, true, &m, data);
    ls_tensor_unref(data);
    return id;
}

static ls_tensor *vals(ls_dtype dt, int nd, const int64_t *sz, const double *v)
{
    ls_tmeta m = ls_meta(dt, nd, sz);
    return ls_tensor_of(dt, nd, sz, v, ls_tmeta_numel(&m));
}

/* builders consume a malloc'd argument array */
static ls_arg *args_of(int n, ...)
{
    ls_arg *a = ls_calloc((size_t)n, sizeof *a);
    va_list ap;
    va_start(ap, n);
    for (int i = 0; i < n; i++) a[i] = va_arg(ap, ls_arg);
    va_end(ap);
    return a;
}

static void run_ok(ls_runner *r, ls_value *in, uint32_t nin, ls_value **out, uint32_t *nout)
{
    ls_error err;
    ck_assert_msg(ls_runner_run(r, in, nin, out, nout, &err) == 0, "%s", err.msg);
}

/* y = (x + w) * 2 */
START_TEST(runs_a_small_program)
{
    ls_builder *b = ls_builder_new("model", LS_DIALECT_ATEN);
    uint32_t w = input(b, "p_w", LS_IN_PARAMETER, "w", LS_DT_F32, 1, S3, vals(LS_DT_F32, 1, S3, (double[]){1, 2, 3}));
    uint32_t x = input(b, "x", LS_IN_USER_INPUT, NULL, LS_DT_F32, 2, S23, NULL);
    uint32_t a = ls_build_call(b, NULL, LS_OP_add_Tensor, args_of(2, ls_arg_node(x), ls_arg_node(w)), 2, NULL);
    uint32_t m = ls_build_call(b, NULL, LS_OP_mul_Scalar, args_of(2, ls_arg_node(a), ls_arg_float(2)), 2, NULL);
    ls_build_output(b, &m, 1, NULL, NULL);
    ls_program *p = ls_builder_finish(b);
    ls_error err;
    ls_runner *r = ls_runner_new(p, &err);
    ck_assert_msg(r, "%s", err.msg);
    ls_value in = ls_value_tensor(vals(LS_DT_F32, 2, S23, (double[]){0, 0, 0, 1, 1, 1}));
    ls_value *out;
    uint32_t n;
    run_ok(r, &in, 1, &out, &n);
    ck_assert_uint_eq(n, 1);
    const float *o = out[0].t->data;
    const float want[6] = {2, 4, 6, 4, 6, 8};
    for (int i = 0; i < 6; i++) ck_assert_float_eq(o[i], want[i]);
    pf_values_free(out, n);
    /* wrong input shape and count are named */
    ls_value bad = ls_value_tensor(vals(LS_DT_F32, 1, S3, (double[]){0, 0, 0}));
    ck_assert_int_ne(ls_runner_run(r, &bad, 1, &out, &n, &err), 0);
    ck_assert_msg(strstr(err.msg, "input 0 'x': expected float32[2, 3], got float32[3]"), "%s", err.msg);
    ck_assert_int_ne(ls_runner_run(r, &bad, 0, &out, &n, &err), 0);
    ck_assert_msg(strstr(err.msg, "takes 1 user input, 0 given"), "%s", err.msg);
    ls_value_release(&bad);
    ls_value_release(&in);
    ck_assert_uint_eq(ls_runner_state_count(r), 0);
    ck_assert(ls_runner_stats(r)->cpu_seconds > 0);
    ls_runner_free(r);
    ls_program_unref(p);
}
END_TEST

/* cache[pos] = v (BUFFER_MUTATION, first output), out = sum(cache) */
static ls_program *cache_program(bool inplace)
{
    ls_builder *b = ls_builder_new("model", LS_DIALECT_ATEN);
    uint32_t c = input(b, "b_cache", LS_IN_BUFFER, "cache", LS_DT_F32, 2, S32, ls_tensor_alloc(LS_DT_F32, 2, S32));
    uint32_t pos = input(b, "pos", LS_IN_USER_INPUT, NULL, LS_DT_I64, 1, S1, NULL);
    uint32_t v = input(b, "v", LS_IN_USER_INPUT, NULL, LS_DT_F32, 2, S12, NULL);
    ls_arg *args = args_of(3, ls_arg_node(c), ls_arg_opt_nodes(&pos, 1), ls_arg_node(v));
    uint32_t put = ls_build_call(b, NULL, inplace ? LS_OP_index_put_ : LS_OP_index_put, args, 3, NULL);
    ls_tmeta sm = ls_meta(LS_DT_F32, 0, NULL);
    uint32_t s = ls_build_call(b, NULL, LS_OP_sum, args_of(1, ls_arg_node(put)), 1, &sm);
    if (inplace) {
        ls_build_output(b, &s, 1, NULL, NULL);
    } else {
        uint32_t ids[2] = {put, s};
        ls_output_kind kinds[2] = {LS_OUT_BUFFER_MUTATION, LS_OUT_USER_OUTPUT};
        const char *targets[2] = {"cache", NULL};
        ls_build_output(b, ids, 2, kinds, targets);
    }
    return ls_builder_finish(b);
}

static void check_cache_fills(bool inplace)
{
    ls_program *p = cache_program(inplace);
    ls_error err;
    ls_runner *r = ls_runner_new(p, &err);
    ck_assert_msg(r, "%s", err.msg);
    ck_assert_uint_eq(ls_runner_state_count(r), 1);
    ck_assert_str_eq(ls_runner_state_name(r, 0), "cache");
    for (int step = 0; step < 3; step++) {
        ls_value in[2];
        int64_t pv = step;
        in[0] = ls_value_tensor(ls_tensor_alloc(LS_DT_I64, 1, S1));
        memcpy(in[0].t->data, &pv, 8);
        in[1] = ls_value_tensor(vals(LS_DT_F32, 2, S12, (double[]){step + 1, 10 * (step + 1)}));
        ls_value *out;
        uint32_t n;
        run_ok(r, in, 2, &out, &n);
        ck_assert_uint_eq(n, 1);
        double want = 0;
        for (int k = 0; k <= step; k++) want += 11 * (k + 1);
        ck_assert_float_eq(((float *)out[0].t->data)[0], (float)want); /* rows filled so far */
        pf_values_free(out, n);
        ls_value_release(&in[0]);
        ls_value_release(&in[1]);
    }
    const float *c = ls_runner_state(r, 0)->data;
    const float want[6] = {1, 10, 2, 20, 3, 30};
    for (int i = 0; i < 6; i++) ck_assert_float_eq(c[i], want[i]);
    /* the program's own buffer is untouched */
    ck_assert_float_eq(((float *)ls_program_state(p, "cache")->t->data)[2], 0);
    ls_runner_free(r);
    ls_program_unref(p);
}

START_TEST(buffer_mutation_carries_state_across_runs) { check_cache_fills(false); }
END_TEST

START_TEST(in_place_index_put_mutates_its_buffer) { check_cache_fills(true); }
END_TEST

/* copy_(x, x + 1) on a user input, and a USER_INPUT_MUTATION output */
START_TEST(user_input_mutations_write_back)
{
    ls_builder *b = ls_builder_new("model", LS_DIALECT_ATEN);
    uint32_t x = input(b, "x", LS_IN_USER_INPUT, NULL, LS_DT_F32, 1, S3, NULL);
    uint32_t a = ls_build_call(b, NULL, LS_OP_add_Scalar, args_of(2, ls_arg_node(x), ls_arg_int(1)), 2, NULL);
    uint32_t ids[2] = {a, a};
    ls_output_kind kinds[2] = {LS_OUT_USER_INPUT_MUTATION, LS_OUT_USER_OUTPUT};
    const char *targets[2] = {"x", NULL};
    ls_build_output(b, ids, 2, kinds, targets);
    ls_program *p = ls_builder_finish(b);
    ls_error err;
    ls_runner *r = ls_runner_new(p, &err);
    ck_assert_msg(r, "%s", err.msg);
    ls_value in = ls_value_tensor(vals(LS_DT_F32, 1, S3, (double[]){1, 2, 3}));
    ls_value *out;
    uint32_t n;
    run_ok(r, &in, 1, &out, &n);
    pf_values_free(out, n);
    run_ok(r, &in, 1, &out, &n);
    ck_assert_float_eq(((float *)in.t->data)[0], 3); /* 1 + 1 + 1 */
    ck_assert_float_eq(((float *)out[0].t->data)[2], 5);
    pf_values_free(out, n);
    ls_value_release(&in);
    ls_runner_free(r);
    ls_program_unref(p);
}
END_TEST

/* out = view(buffer) aliases the buffer; the mutation written after the run must not change it */
START_TEST(an_output_aliasing_a_buffer_keeps_its_value)
{
    ls_builder *b = ls_builder_new("model", LS_DIALECT_ATEN);
    uint32_t buf = input(b, "b_buf", LS_IN_BUFFER, "buf", LS_DT_F32, 1, S3, vals(LS_DT_F32, 1, S3, (double[]){1, 2, 3}));
    uint32_t v = ls_build_call(b, NULL, LS_OP_view, args_of(2, ls_arg_node(buf), ls_arg_ints((int64_t[]){3}, 1)), 2, NULL);
    uint32_t a = ls_build_call(b, NULL, LS_OP_add_Scalar, args_of(2, ls_arg_node(buf), ls_arg_int(10)), 2, NULL);
    uint32_t ids[2] = {a, v};
    ls_output_kind kinds[2] = {LS_OUT_BUFFER_MUTATION, LS_OUT_USER_OUTPUT};
    const char *targets[2] = {"buf", NULL};
    ls_build_output(b, ids, 2, kinds, targets);
    ls_program *p = ls_builder_finish(b);
    ls_error err;
    ls_runner *r = ls_runner_new(p, &err);
    ck_assert_msg(r, "%s", err.msg);
    ls_value *out;
    uint32_t n;
    run_ok(r, NULL, 0, &out, &n);
    ck_assert_float_eq(((float *)out[0].t->data)[0], 1); /* the value before the mutation */
    ck_assert_float_eq(((float *)ls_runner_state(r, 0)->data)[0], 11);
    pf_values_free(out, n);
    run_ok(r, NULL, 0, &out, &n);
    ck_assert_float_eq(((float *)out[0].t->data)[0], 11);
    pf_values_free(out, n);
    ls_runner_free(r);
    ls_program_unref(p);
}
END_TEST

START_TEST(every_operator_but_the_delegate_call_has_a_kernel)
{
    for (int i = 0; i < LS_OP_COUNT; i++) {
        const ls_op *op = ls_op_get((ls_op_id)i);
        if (i == LS_OP_call_delegate) ck_assert_ptr_null(ls_kernel_for(op));
        else ck_assert_msg(ls_kernel_for(op) != NULL, "%s has no kernel", op->qualname);
    }
}
END_TEST

/* memory.alloc nodes (to_out_variant) only name an out argument's memory: running them makes no
 * tensor, however large the size they name (a terabyte here), and the program still computes. */
START_TEST(alloc_nodes_make_no_tensor)
{
    ls_value size = ls_value_list(1), dtype = ls_value_int(LS_DT_F32), out;
    size.items[0] = ls_value_int((int64_t)1 << 38);
    ls_value args[2] = {size, dtype};
    ls_error err;
    ck_assert_msg(ls_kernel_call(ls_op_get(LS_OP_alloc), NULL, args, 2, &out, &err) == 0, "%s", err.msg);
    ck_assert_int_eq(out.kind, LS_V_NONE);
    ls_value_release(&size);

    ls_builder *b = ls_builder_new("model", LS_DIALECT_EDGE);
    uint32_t x = input(b, "x", LS_IN_USER_INPUT, NULL, LS_DT_F32, 2, S23, NULL);
    uint32_t m = ls_build_call(b, NULL, LS_OP_mul_Scalar, args_of(2, ls_arg_node(x), ls_arg_float(2)), 2, NULL);
    uint32_t a = ls_build_call(b, NULL, LS_OP_add_Tensor, args_of(2, ls_arg_node(m), ls_arg_node(x)), 2, NULL);
    ls_build_output(b, &a, 1, NULL, NULL);
    ls_program *p = ls_builder_finish(b), *q;
    ls_report rep = {0};
    ls_pass_ctx ctx = {.report = &rep, .err = &err};
    ck_assert_msg(ls_pass_to_out_variant(p, &q, &ctx) == 0, "%s", err.msg);
    ls_report_free(&rep);
    uint32_t allocs = 0;
    for (uint32_t i = 0; i < q->n_nodes; i++) {
        if (!q->nodes[i]->op || q->nodes[i]->op->id != LS_OP_alloc) continue;
        ls_node *al = ls_program_edit(q, i); /* a size nothing could hold: never materialised */
        ck_assert_int_eq(al->args[0].kind, LS_ARG_INTS);
        al->args[0].v.ints[0] = (int64_t)1 << 38;
        allocs++;
    }
    ck_assert_uint_eq(allocs, 2);
    ls_runner *r = ls_runner_new(q, &err);
    ck_assert_msg(r, "%s", err.msg);
    ls_value in = ls_value_tensor(vals(LS_DT_F32, 2, S23, (double[]){1, 2, 3, 4, 5, 6}));
    ls_value *res;
    uint32_t n;
    run_ok(r, &in, 1, &res, &n);
    ck_assert_uint_eq(n, 1);
    for (int i = 0; i < 6; i++) ck_assert_float_eq(((float *)res[0].t->data)[i], 3.0f * (float)(i + 1));
    pf_values_free(res, n);
    ls_value_release(&in);
    ls_runner_free(r);
    ls_program_unref(q);
    ls_program_unref(p);
}
END_TEST

START_TEST(missing_weights_name_the_tensor)
{
    ls_builder *b = ls_builder_new("model", LS_DIALECT_ATEN);
    uint32_t w = input(b, "p_linear_weight", LS_IN_PARAMETER, "linear.weight", LS_DT_F32, 1, S3, NULL);
    ls_build_output(b, &w, 1, NULL, NULL);
    ls_program *p = ls_builder_finish(b);
    ls_error err;
    ck_assert_ptr_null(ls_runner_new(p, &err));
    ck_assert_msg(strstr(err.msg, "parameter 'linear.weight' (placeholder p_linear_weight)"), "%s", err.msg);
    p->has_weights = false;
    ck_assert_ptr_null(ls_runner_new(p, &err));
    ck_assert_msg(strstr(err.msg, "loaded without weight data"), "%s", err.msg);
    ls_program_unref(p);
}
END_TEST

START_TEST(unknown_ops_and_kernel_errors_name_the_node)
{
    /* an operator lowerscope does not know */
    ls_builder *b = ls_builder_new("model", LS_DIALECT_ATEN);
    uint32_t x = input(b, "x", LS_IN_USER_INPUT, NULL, LS_DT_F32, 1, S3, NULL);
    ls_program *bp = ls_builder_program(b);
    ls_node *u = ls_node_new(bp, LS_NODE_CALL, "frob", "torch.ops.mylib.frobnicate.default");
    ls_node_set_args(u, ls_calloc(1, sizeof(ls_arg)), 1);
    u->args[0] = ls_arg_node(x);
    ls_program_append(bp, u);
    uint32_t uid = u->id;
    ls_build_output(b, &uid, 1, NULL, NULL);
    ls_program *p = ls_builder_finish(b);
    ls_error err;
    ck_assert_ptr_null(ls_runner_new(p, &err));
    ck_assert_msg(strstr(err.msg, "node frob needs a kernel for torch.ops.mylib.frobnicate.default, an operator unknown"), "%s",
                  err.msg);
    ck_assert_int_eq(err.code, LS_ERR_NEEDS); /* a valid program lowerscope cannot run: exit 3 */
    ls_program_unref(p);

    /* a kernel that fails at run time: index 5 of a 3-row table */
    b = ls_builder_new("model", LS_DIALECT_ATEN);
    uint32_t w = input(b, "p_table", LS_IN_PARAMETER, "table", LS_DT_F32, 2, S32, ls_tensor_alloc(LS_DT_F32, 2, S32));
    uint32_t ix = input(b, "ix", LS_IN_USER_INPUT, NULL, LS_DT_I64, 1, S1, NULL);
    ls_tmeta em = ls_meta(LS_DT_F32, 2, S12);
    uint32_t e = ls_build_call(b, NULL, LS_OP_embedding, args_of(2, ls_arg_node(w), ls_arg_node(ix)), 2, &em);
    ls_build_output(b, &e, 1, NULL, NULL);
    p = ls_builder_finish(b);
    ls_runner *r = ls_runner_new(p, &err);
    ck_assert_msg(r, "%s", err.msg);
    ls_value in = ls_value_tensor(ls_tensor_alloc(LS_DT_I64, 1, S1));
    ((int64_t *)in.t->data)[0] = 5;
    ls_value *out;
    uint32_t n;
    ck_assert_int_ne(ls_runner_run(r, &in, 1, &out, &n, &err), 0);
    ck_assert_msg(strstr(err.msg, "node embedding (aten.embedding.default): index 5 is out of range"), "%s", err.msg);
    /* and runs again after a failure */
    ((int64_t *)in.t->data)[0] = 2;
    run_ok(r, &in, 1, &out, &n);
    pf_values_free(out, n);
    ls_value_release(&in);
    ls_runner_free(r);
    ls_program_unref(p);
}
END_TEST

START_TEST(a_kernel_disagreeing_with_the_metadata_is_reported)
{
    ls_builder *b = ls_builder_new("model", LS_DIALECT_ATEN);
    uint32_t x = input(b, "x", LS_IN_USER_INPUT, NULL, LS_DT_F32, 2, S23, NULL);
    ls_tmeta wrong = ls_meta(LS_DT_F32, 2, S32); /* sum over dim 1 is [2], not [3, 2] */
    uint32_t s = ls_build_call(b, NULL, LS_OP_sum_dim_IntList, args_of(2, ls_arg_node(x), ls_arg_ints((int64_t[]){1}, 1)), 2,
                               &wrong);
    ls_build_output(b, &s, 1, NULL, NULL);
    ls_program *p = ls_builder_finish(b);
    ls_error err;
    ls_runner *r = ls_runner_new(p, &err);
    ck_assert_msg(r, "%s", err.msg);
    ls_value in = ls_value_tensor(ls_tensor_alloc(LS_DT_F32, 2, S23));
    ls_value *out;
    uint32_t n;
    ck_assert_int_ne(ls_runner_run(r, &in, 1, &out, &n, &err), 0);
    ck_assert_msg(strstr(err.msg, "node sum_1 (aten.sum.dim_IntList): produced float32[2] where the program says float32[3, 2]"),
                  "%s", err.msg);
    ls_value_release(&in);
    ls_runner_free(r);
    ls_program_unref(p);
}
END_TEST

/* ---- delegates, through a backend registered by the test */

typedef struct tb_handle {
    ls_tensor *acc;
} tb_handle;
static int tb_inits;

static int tb_init(const ls_blob *processed, const ls_compile_spec *specs, uint32_t nspecs, const ls_named_data *named,
                   void **handle, ls_error *err)
{
    tb_inits++;
    tb_handle *h = calloc(1, sizeof *h);
    h->acc = ls_tensor_alloc(LS_DT_F32, 1, S3);
    *handle = h;
    return 0;
}

/* returns 2·x and keeps acc += x */
static int tb_execute(void *handle, const ls_value *in, uint32_t nin, ls_value **out, uint32_t *nout, ls_error *err)
{
    tb_handle *h = handle;
    if (nin != 1 || in[0].kind != LS_V_TENSOR) return ls_fail(err, "expects one tensor");
    ls_tensor *y = ls_tensor_clone(in[0].t);
    for (int i = 0; i < 3; i++) {
        ((float *)y->data)[i] *= 2;
        ((float *)h->acc->data)[i] += ((float *)in[0].t->data)[i];
    }
    *out = calloc(1, sizeof **out);
    (*out)[0] = ls_value_tensor(y);
    *nout = 1;
    return 0;
}
static uint32_t tb_state_count(void *h) { return 1; }
static const char *tb_state_name(void *h, uint32_t i) { return "acc"; }
static ls_tensor *tb_state_get(void *h, uint32_t i) { return ((tb_handle *)h)->acc; }
static void tb_destroy(void *handle)
{
    tb_handle *h = handle;
    ls_tensor_unref(h->acc);
    free(h);
}
static const ls_backend test_backend = {"TestBackend", NULL, tb_init, tb_execute, tb_state_count, tb_state_name,
                                        tb_state_get, tb_destroy};

/* x → delegate(lowered_module_0, x) → getitem 0, twice through the same module */
static ls_program *delegate_program(const char *backend, bool with_blob)
{
    ls_builder *b = ls_builder_new("model", LS_DIALECT_EDGE);
    uint32_t x = input(b, "x", LS_IN_USER_INPUT, NULL, LS_DT_F32, 1, S3, NULL);
    ls_program *bp = ls_builder_program(b);
    ls_submodule sub = {0};
    sub.name = ls_intern("lowered_module_0");
    sub.backend_id = ls_intern(backend);
    sub.program = ls_program_new("lowered_module_0", LS_DIALECT_EDGE);
    sub.processed = with_blob ? ls_blob_new(16) : NULL;
    ls_program_add_sub(bp, &sub);
    ls_program_unref(sub.program);
    ls_blob_unref(sub.processed);
    ls_node *ga = ls_node_new(bp, LS_NODE_GET_ATTR, "lowered_module_0", "lowered_module_0");
    ls_program_append(bp, ga);
    ls_tmeta m = ls_meta(LS_DT_F32, 1, S3);
    uint32_t prev = x;
    for (int k = 0; k < 2; k++) {
        ls_error err;
        ls_arg *ca = ls_calloc(2, sizeof *ca);
        ca[0] = ls_arg_node(ga->id);
        ca[1] = ls_arg_node(prev);
        ls_node *call = ls_node_new_call(bp, k ? "executorch_call_delegate_1" : "executorch_call_delegate",
                                         ls_op_get(LS_OP_call_delegate), LS_DIALECT_NONE, ca, 2, NULL, &err);
        ck_assert_msg(call, "%s", err.msg);
        ls_program_append(bp, call);
        ls_arg *gi = ls_calloc(2, sizeof *gi);
        gi[0] = ls_arg_node(call->id);
        gi[1] = ls_arg_int(0);
        ls_node *g = ls_node_new_call(bp, k ? "getitem_1" : "getitem", ls_op_get(LS_OP_getitem), LS_DIALECT_NONE, gi, 2, &m, &err);
        ck_assert_msg(g, "%s", err.msg);
        ls_program_append(bp, g);
        prev = g->id;
    }
    ls_build_output(b, &prev, 1, NULL, NULL);
    return ls_builder_finish(b);
}

START_TEST(delegates_run_through_their_backend)
{
    ls_backend_register(&test_backend);
    ls_program *p = delegate_program("TestBackend", true);
    ls_error err;
    tb_inits = 0;
    ls_runner *r = ls_runner_new(p, &err);
    ck_assert_msg(r, "%s", err.msg);
    ck_assert_int_eq(tb_inits, 1); /* one init per runner, however many calls */
    ls_value in = ls_value_tensor(vals(LS_DT_F32, 1, S3, (double[]){1, 2, 3}));
    ls_value *out;
    uint32_t n;
    run_ok(r, &in, 1, &out, &n);
    ck_assert_float_eq(((float *)out[0].t->data)[2], 12); /* 3 · 2 · 2 */
    pf_values_free(out, n);
    ck_assert_uint_eq(ls_runner_state_count(r), 1);
    ck_assert_str_eq(ls_runner_state_name(r, 0), "lowered_module_0/acc");
    ck_assert_float_eq(((float *)ls_runner_state(r, 0)->data)[0], 3); /* x then 2x went through */
    const ls_run_stats *st = ls_runner_stats(r);
    ck_assert_uint_eq(st->n_delegates, 1);
    ck_assert_str_eq(st->delegate_names[0], "lowered_module_0");
    ck_assert_str_eq(st->delegate_backends[0], "TestBackend");
    ls_value_release(&in);
    ls_runner_free(r);
    ls_program_unref(p);
}
END_TEST

START_TEST(delegates_without_backend_or_blob_fail_clearly)
{
    ls_program *p = delegate_program("NoSuchBackend", true);
    ls_error err;
    ck_assert_ptr_null(ls_runner_new(p, &err));
    ck_assert_msg(strstr(err.msg, "valid, but delegate lowered_module_0 needs NoSuchBackend"), "%s", err.msg);
    ck_assert_int_eq(err.code, LS_ERR_NEEDS);
    ls_program_unref(p);
    ls_backend_register(&test_backend);
    p = delegate_program("TestBackend", false);
    ck_assert_ptr_null(ls_runner_new(p, &err));
    ck_assert_msg(strstr(err.msg, "delegate lowered_module_0 (TestBackend) has no processed blob"), "%s", err.msg);
    ls_program_unref(p);
}
END_TEST

START_TEST(seeded_inputs)
{
    ls_builder *b = ls_builder_new("model", LS_DIALECT_ATEN);
    input(b, "x", LS_IN_USER_INPUT, NULL, LS_DT_F32, 2, S23, NULL);
    input(b, "pos", LS_IN_USER_INPUT, NULL, LS_DT_I64, 1, S3, NULL);
    uint32_t m = input(b, "mask", LS_IN_USER_INPUT, NULL, LS_DT_BOOL, 1, S3, NULL);
    ls_build_output(b, &m, 1, NULL, NULL);
    ls_program *p = ls_builder_finish(b);
    ls_value *a, *a2, *c;
    uint32_t n;
    ls_error err;
    ck_assert_int_eq(ls_make_inputs(p, 7, 2, &a, &n, &err), 0);
    ck_assert_uint_eq(n, 3);
    ck_assert_int_eq(a[0].t->dtype, LS_DT_F32);
    ck_assert_int_eq(ls_make_inputs(p, 7, 2, &a2, &n, &err), 0);
    ck_assert(ls_tensor_equal(a[0].t, a2[0].t)); /* deterministic */
    ck_assert_int_eq(ls_make_inputs(p, 7, 3, &c, &n, &err), 0);
    ck_assert(!ls_tensor_equal(a[0].t, c[0].t)); /* a new step, new values */
    double sum = 0;
    for (int i = 0; i < 6; i++) sum += fabs(ls_tensor_get_f64(a[0].t, i));
    ck_assert(sum > 0.1 && sum < 30);
    for (int i = 0; i < 3; i++) ck_assert_int_eq(ls_tensor_get_i64(a[1].t, i), 2); /* ints = step */
    ck_assert_int_eq(ls_tensor_get_i64(c[1].t, 0), 3);
    ck_assert_int_eq(ls_tensor_get_i64(a[2].t, 0), 1);
    ck_assert_int_eq(ls_tensor_get_i64(a[2].t, 1), 0);
    pf_values_free(a, 3);
    pf_values_free(a2, 3);
    pf_values_free(c, 3);
    ls_program_unref(p);
}
END_TEST

/* Outputs that are not tensors, as run and the run screen show them. */
START_TEST(scalar_values_have_their_text)
{
    struct {
        ls_value v;
        const char *want;
    } cases[] = {{ls_value_int(-4), "int -4"},     {ls_value_float(0.5), "float 0.5"},
                 {ls_value_bool(true), "bool True"}, {ls_value_none(), "None"},
                 {ls_value_list(3), "list of 3"}};
    for (size_t i = 0; i < sizeof cases / sizeof cases[0]; i++) {
        ls_buf b = {0};
        ls_value_scalar_text(&cases[i].v, &b);
        ck_assert_str_eq(b.s, cases[i].want);
        ls_buf_free(&b);
        ls_value_release(&cases[i].v);
    }
    ck_assert_str_eq(ls_value_kind_text(LS_V_TENSOR), "a tensor");
    ck_assert_str_eq(ls_value_kind_text(LS_V_NONE), "None");
}
END_TEST

Suite *runtime_suite(void)
{
    Suite *s = suite_create("runtime");
    TCase *tc = tcase_create("core");
    tcase_add_test(tc, runs_a_small_program);
    tcase_add_test(tc, scalar_values_have_their_text);
    tcase_add_test(tc, buffer_mutation_carries_state_across_runs);
    tcase_add_test(tc, in_place_index_put_mutates_its_buffer);
    tcase_add_test(tc, user_input_mutations_write_back);
    tcase_add_test(tc, an_output_aliasing_a_buffer_keeps_its_value);
    tcase_add_test(tc, every_operator_but_the_delegate_call_has_a_kernel);
    tcase_add_test(tc, alloc_nodes_make_no_tensor);
    tcase_add_test(tc, missing_weights_name_the_tensor);
    tcase_add_test(tc, unknown_ops_and_kernel_errors_name_the_node);
    tcase_add_test(tc, a_kernel_disagreeing_with_the_metadata_is_reported);
    tcase_add_test(tc, delegates_run_through_their_backend);
    tcase_add_test(tc, delegates_without_backend_or_blob_fail_clearly);
    tcase_add_test(tc, seeded_inputs);
    suite_add_tcase(s, tc);
    return s;
}
