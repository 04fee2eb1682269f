/* The rules of the backend profiles, one test per rule, on small programs built here: the tag
 * each node gets and the reason each CPU node gives. Where ExecuTorch's own partitioner tests
 * check a case (backends/xnnpack/test/ops/test_*.py), the program is that test's model and the
 * assertion is its number (one executorch_call_delegate, the op left undelegated). */
#include <check.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "passtest.h"

static const int64_t FOUR = 4;

static ls_profile *xnnpack(void)
{
    ls_profile *p;
    ls_error err;
    if (ls_profile_load("xnnpack", &p, &err) != 0) ck_abort_msg("%s", err.msg);
    return p;
}

static const char *tag_of(const ls_program *p, const char *name)
{
    return pt_must(p, name)->tag;
}

/* The CPU reason of a node, as the CLI prints it. */
static const char *why(const ls_program *p, const char *name)
{
    const ls_node *n = pt_must(p, name);
    ck_assert_msg(!n->tag, "%s is in %s", name, n->tag);
    return ls_cpu_why((ls_cpu_reason)n->reason, n->reason_detail);
}

static void assert_why(const ls_program *p, const char *name, const char *text)
{
    const char *w = why(p, name);
    ck_assert_msg(strcmp(w, text) == 0, "%s: '%s', expected '%s'", name, w, text);
}

/* The program built in b with outputs o, partitioned for XNNPACK (the caller unrefs). */
static ls_program *xnn_partitioned(ls_builder *b, const uint32_t *o, uint32_t n)
{
    ls_build_output(b, o, n, NULL, NULL);
    ls_program *p = ls_builder_finish(b);
    ls_profile *prof = xnnpack();
    pt_step(&p, ls_pass_partition, prof);
    ls_profile_free(prof);
    return p;
}

/* partition then to_backend: the program ExecuTorch's tests count delegates in. */
static ls_program *lower(ls_program *p, const ls_profile *prof)
{
    pt_step(&p, ls_pass_partition, prof);
    ls_program *tagged = ls_program_ref(p);
    pt_step(&p, ls_pass_duplicate_constants, prof);
    pt_step(&p, ls_pass_to_backend, prof);
    ls_program_unref(tagged);
    return p;
}

/* A call with keyword arguments after the positional ones. */
static uint32_t call_kw(ls_builder *b, ls_op_id op, ls_arg *pos, uint16_t npos, const char *kw, ls_arg kwval, const ls_tmeta *val)
{
    ls_arg *a = calloc((size_t)npos + 1, sizeof *a);
    for (uint16_t i = 0; i < npos; i++) a[i] = pos[i];
    uint16_t n = npos;
    if (kw) {
        a[n] = kwval;
        a[n].name = ls_intern(kw);
        a[n].flags = LS_ARGF_KEYWORD;
        n++;
    }
    return ls_build_call(b, NULL, op, a, n, val);
}

static uint32_t user(ls_builder *b, const char *name, ls_dtype dt, int nd, const int64_t *sz)
{
    return pt_input(b, name, LS_IN_USER_INPUT, NULL, false, dt, nd, sz);
}

/* test_add.py Add: four adds, one delegate, no add left (to_edge_transform_and_lower). The
 * group partitioner keeps the first partition's id (tag0); CapabilityBasedPartitioner keeps the
 * larger side's (tag1). */
START_TEST(xnnpack_test_add_one_delegate)
{
    ls_builder *b = ls_builder_new("model", LS_DIALECT_EDGE);
    uint32_t x = user(b, "x", LS_DT_F32, 1, &FOUR), y = user(b, "y", LS_DT_F32, 1, &FOUR);
    uint32_t z = pt_bin(b, LS_OP_add_Tensor, x, y);
    z = pt_bin(b, LS_OP_add_Tensor, z, x);
    z = pt_bin(b, LS_OP_add_Tensor, z, x);
    z = pt_bin(b, LS_OP_add_Tensor, z, z);
    ls_build_output(b, &z, 1, NULL, NULL);
    ls_program *p = ls_builder_finish(b);
    ls_profile *x_prof = xnnpack();
    ls_program *q = pt_run(ls_pass_partition, p, x_prof, NULL, NULL);
    for (uint32_t i = 0; i < q->n_nodes; i++)
        if (q->nodes[i]->kind == LS_NODE_CALL) ck_assert_str_eq(q->nodes[i]->tag, "tag0");
    ck_assert_str_eq(q->tags[0].backend_id, "XnnpackBackend");
    ls_program_unref(q);
    q = pt_run(ls_pass_partition, p, ls_profile_bundled(), NULL, NULL);
    ck_assert_str_eq(tag_of(q, "aten_add_tensor"), "tag1");
    ls_program_unref(q);
    p = lower(p, x_prof);
    ck_assert_uint_eq(pt_count_op(p, LS_OP_call_delegate), 1);
    ck_assert_uint_eq(pt_count_op(p, LS_OP_add_Tensor), 0);
    ls_program_unref(p);
    ls_profile_free(x_prof);
}
END_TEST

/* test_add.py AddWithAlpha: add(x, y, alpha=1) is partitioned, alpha=2 is not (AddConfig). */
START_TEST(rule_alpha_one)
{
    ls_builder *b = ls_builder_new("model", LS_DIALECT_EDGE);
    uint32_t x = user(b, "x", LS_DT_F32, 1, &FOUR), y = user(b, "y", LS_DT_F32, 1, &FOUR);
    ls_arg a1[2] = {ls_arg_node(x), ls_arg_node(y)}, a2[2] = {ls_arg_node(x), ls_arg_node(y)};
    uint32_t o[2] = {call_kw(b, LS_OP_add_Tensor, a1, 2, "alpha", ls_arg_int(1), NULL),
                     call_kw(b, LS_OP_add_Tensor, a2, 2, "alpha", ls_arg_int(2), NULL)};
    ls_build_output(b, o, 2, NULL, NULL);
    ls_program *p = ls_builder_finish(b);
    ls_profile *prof = xnnpack();
    ls_program *q = pt_run(ls_pass_partition, p, prof, NULL, NULL);
    ck_assert_str_eq(tag_of(q, "aten_add_tensor"), "tag0");
    assert_why(q, "aten_add_tensor_1", "XNNPACK takes only alpha=1, not alpha=2 (rule alpha_one)");
    ck_assert_int_eq(pt_must(q, "aten_add_tensor_1")->reason, LS_WHY_RULE);
    ls_program_unref(q);
    p = lower(p, prof);
    ck_assert_uint_eq(pt_count_op(p, LS_OP_call_delegate), 1);
    ck_assert_uint_eq(pt_count_op(p, LS_OP_add_Tensor), 1); /* the unpartitioned one */
    ls_program_unref(p);
    ls_profile_free(prof);
}
END_TEST

static ls_program *softmax_program(int64_t dim)
{
    int64_t s[3] = {3, 5, 7};
    ls_builder *b = ls_builder_new("model", LS_DIALECT_EDGE);
    uint32_t x = user(b, "x", LS_DT_F32, 3, s);
    ls_arg *a = calloc(3, sizeof *a);
    a[0] = ls_arg_node(x);
    a[1] = ls_arg_int(dim);
    a[2] = ls_arg_bool(false);
    uint32_t o = ls_build_call(b, NULL, LS_OP__softmax, a, 3, NULL);
    ls_build_output(b, &o, 1, NULL, NULL);
    return ls_builder_finish(b);
}

/* test_softmax.py: dims 2 and -1 of a rank-3 input are delegated; another dim is not
 * (SoftmaxConfig; the test's own loop over invalid dims is empty, range(len(inputs) - 1)). */
START_TEST(rule_last_dim)
{
    ls_profile *prof = xnnpack();
    int64_t ok[2] = {2, -1};
    for (int k = 0; k < 2; k++) {
        ls_program *p = lower(softmax_program(ok[k]), prof);
        ck_assert_uint_eq(pt_count_op(p, LS_OP_call_delegate), 1);
        ck_assert_uint_eq(pt_count_op(p, LS_OP__softmax), 0);
        ls_program_unref(p);
    }
    ls_program *p = softmax_program(0);
    pt_step(&p, ls_pass_partition, prof);
    assert_why(p, "aten__softmax_default", "XNNPACK takes only the last dim, not dim=0 of a rank-3 input (rule last_dim:dim)");
    ck_assert_uint_eq(p->n_tags, 0);
    ls_program_unref(p);
    ls_profile_free(prof);
}
END_TEST

static ls_program *pow_program(ls_arg exponent)
{
    int64_t n = 20;
    ls_builder *b = ls_builder_new("model", LS_DIALECT_EDGE);
    uint32_t x = user(b, "x", LS_DT_F32, 1, &n);
    ls_arg *a = calloc(2, sizeof *a);
    a[0] = ls_arg_node(x);
    a[1] = exponent;
    uint32_t o = ls_build_call(b, NULL, LS_OP_pow_Tensor_Scalar, a, 2, NULL);
    ls_build_output(b, &o, 1, NULL, NULL);
    return ls_builder_finish(b);
}

/* test_pow.py: pow(x, 2) is one delegate, pow(x, 3) none (PowConfig: an int power of two only;
 * 2.0 is a float, refused as well). */
START_TEST(rule_arg_is)
{
    ls_profile *prof = xnnpack();
    ls_program *p = lower(pow_program(ls_arg_int(2)), prof);
    ck_assert_uint_eq(pt_count_op(p, LS_OP_call_delegate), 1);
    ls_program_unref(p);
    p = lower(pow_program(ls_arg_int(3)), prof);
    ck_assert_uint_eq(pt_count_op(p, LS_OP_call_delegate), 0);
    assert_why(p, "aten_pow_tensor_scalar", "XNNPACK takes only exponent=2, not exponent=3 (rule arg_is:exponent=2)");
    ls_program_unref(p);
    p = pow_program(ls_arg_float(2.0));
    pt_step(&p, ls_pass_partition, prof);
    assert_why(p, "aten_pow_tensor_scalar", "XNNPACK takes only exponent=2, not exponent=2 (a float) (rule arg_is:exponent=2)");
    ls_program_unref(p);
    ls_profile_free(prof);
}
END_TEST

static ls_program *mean_program(int nd, const int64_t *sizes, const int64_t *dims, uint32_t ndims)
{
    ls_builder *b = ls_builder_new("model", LS_DIALECT_EDGE);
    uint32_t x = user(b, "x", LS_DT_F32, nd, sizes);
    uint32_t y = pt_bin(b, LS_OP_add_Tensor, x, x);
    int64_t osz[4];
    memcpy(osz, sizes, sizeof(int64_t) * (size_t)nd);
    for (uint32_t k = 0; k < ndims; k++) osz[dims[k] < 0 ? dims[k] + nd : dims[k]] = 1;
    ls_tmeta m = ls_meta(LS_DT_F32, nd, osz);
    ls_arg a[3] = {ls_arg_node(y), ls_arg_ints(dims, ndims), ls_arg_bool(true)};
    uint32_t z = call_kw(b, LS_OP_mean_dim, a, 3, NULL, ls_arg_none(), &m);
    ls_build_output(b, &z, 1, NULL, NULL);
    return ls_builder_finish(b);
}

/* test_mean_dim.py: mean over (-1, -2) of a 4-D tensor with keepdim is delegated with the add
 * before it (one delegate); over (3) it is not; a 3-D input is not (MeanDimConfig). */
START_TEST(rule_dims_are_and_rank_is)
{
    ls_profile *prof = xnnpack();
    int64_t s4[4] = {1, 5, 4, 4}, s3[3] = {1, 5, 4}, inner[2] = {-1, -2}, three = 3;
    ls_program *p = lower(mean_program(4, s4, inner, 2), prof);
    ck_assert_uint_eq(pt_count_op(p, LS_OP_call_delegate), 1);
    ck_assert_uint_eq(pt_count_op(p, LS_OP_mean_dim), 0);
    ls_program_unref(p);
    p = mean_program(4, s4, &three, 1);
    pt_step(&p, ls_pass_partition, prof);
    assert_why(p, "aten_mean_dim", "XNNPACK takes only dim [2, 3] (of a rank-4 input), not [3] (rule dims_are:dim=2,3)");
    ck_assert_str_eq(tag_of(p, "aten_add_tensor"), "tag0");
    ls_program_unref(p);
    p = mean_program(3, s3, inner, 2);
    pt_step(&p, ls_pass_partition, prof);
    assert_why(p, "aten_mean_dim", "XNNPACK takes `self` of rank 4 only, not rank 3 (rule rank_is:self=4)");
    ls_program_unref(p);
    ls_profile_free(prof);
}
END_TEST

/* GEMMConfig: mm's weight must be a parameter, buffer or constant (attention's q·kᵀ stays on
 * the CPU); a constant weight comes into the partition with it (take_constants "deps"). */
START_TEST(rule_const_arg_gemm_weight)
{
    int64_t s[2] = {4, 4};
    ls_builder *b = ls_builder_new("model", LS_DIALECT_EDGE);
    uint32_t w = pt_input(b, "p_w", LS_IN_PARAMETER, "w", true, LS_DT_F32, 2, s);
    uint32_t c = pt_input(b, "c_scale", LS_IN_CONSTANT_TENSOR, "scale", false, LS_DT_F32, 2, s);
    uint32_t q = user(b, "q", LS_DT_F32, 2, s), k = user(b, "k", LS_DT_F32, 2, s);
    int64_t perm[2] = {1, 0};
    ls_arg pa[2] = {ls_arg_node(k), ls_arg_ints(perm, 2)};
    uint32_t kt = call_kw(b, LS_OP_permute_copy, pa, 2, NULL, ls_arg_none(), NULL);
    ls_tmeta m = ls_meta(LS_DT_F32, 2, s);
    ls_arg s1[2] = {ls_arg_node(q), ls_arg_node(kt)}, s2[2] = {ls_arg_node(q), ls_arg_node(w)};
    uint32_t scores = call_kw(b, LS_OP_mm, s1, 2, NULL, ls_arg_none(), &m);
    uint32_t proj = call_kw(b, LS_OP_mm, s2, 2, NULL, ls_arg_none(), &m);
    uint32_t o[2] = {scores, pt_bin(b, LS_OP_mul_Tensor, proj, c)};
    ls_program *p = xnn_partitioned(b, o, 2);
    assert_why(p, "aten_mm_default",
               "XNNPACK needs a constant weight: `mat2` (arg 1) is computed by `aten_permute_copy_default` (rule const_arg:1)");
    const char *t = tag_of(p, "aten_mm_default_1");
    ck_assert_ptr_nonnull(t);
    ck_assert_str_eq(tag_of(p, "p_w"), t);  /* the GEMM's weight is in its group */
    ck_assert_ptr_null(tag_of(p, "c_scale")); /* mul's constant is not: XNNPACK takes no other constant */
    ls_program_unref(p);
}
END_TEST

/* XNNPartitionerConfig._check_inputs_are_valid_dtypes: no mixed input dtypes. */
START_TEST(rule_same_dtype)
{
    ls_builder *b = ls_builder_new("model", LS_DIALECT_EDGE);
    uint32_t x = user(b, "x", LS_DT_F32, 1, &FOUR), h = user(b, "h", LS_DT_F16, 1, &FOUR);
    uint32_t o = pt_bin(b, LS_OP_mul_Tensor, x, h);
    ls_program *p = xnn_partitioned(b, &o, 1);
    assert_why(p, "aten_mul_tensor", "XNNPACK takes no mixed input dtypes: float32 and float16 (rule same_dtype)");
    ls_program_unref(p);
}
END_TEST

/* XNNPACK does not support empty tensors. */
START_TEST(rule_no_empty)
{
    int64_t zero = 0;
    ls_builder *b = ls_builder_new("model", LS_DIALECT_EDGE);
    uint32_t x = user(b, "x", LS_DT_F32, 1, &zero);
    uint32_t o = pt_unary(b, LS_OP_relu, x);
    ls_program *p = xnn_partitioned(b, &o, 1);
    assert_why(p, "aten_relu_default", "XNNPACK takes no empty tensors: `x` has 0 elements (rule no_empty)");
    ls_program_unref(p);
    /* nor a tensor of a data-dependent (unbacked) size: has_free_unbacked_symbols; a backed
     * symbolic size passes */
    int64_t unknown = -1;
    b = ls_builder_new("model", LS_DIALECT_EDGE);
    x = user(b, "x", LS_DT_F32, 1, &unknown);
    uint32_t y = user(b, "y", LS_DT_F32, 1, &unknown);
    ls_node_vals_mut(ls_builder_program(b)->nodes[0])[0].sym[0] = ls_intern("u0");
    ls_node_vals_mut(ls_builder_program(b)->nodes[1])[0].sym[0] = ls_intern("s0");
    uint32_t o2[2] = {pt_unary(b, LS_OP_relu, x), pt_unary(b, LS_OP_relu, y)};
    p = xnn_partitioned(b, o2, 2);
    assert_why(p, "aten_relu_default", "XNNPACK takes no tensor of data-dependent size: `x` has size u0 in dim 0 (rule no_empty)");
    ck_assert_ptr_nonnull(tag_of(p, "aten_relu_default_1"));
    ls_program_unref(p);
}
END_TEST

/* A SymInt among the inputs refuses the node (view_copy to a size read by sym_size). */
START_TEST(rule_tensor_args)
{
    int64_t s[2] = {2, 4};
    ls_builder *b = ls_builder_new("model", LS_DIALECT_EDGE);
    uint32_t x = user(b, "x", LS_DT_F32, 2, s);
    ls_arg sa[2] = {ls_arg_node(x), ls_arg_int(0)};
    ls_tmeta none = {0};
    uint32_t n0 = call_kw(b, LS_OP_sym_size_int, sa, 2, NULL, ls_arg_none(), &none);
    ls_arg size = {.kind = LS_ARG_SYMINTS, .n = 2};
    size.v.symints = calloc(2, sizeof *size.v.symints);
    size.v.symints[0].is_node = true;
    size.v.symints[0].node = n0;
    size.v.symints[1].i = 4;
    ls_tmeta m = ls_meta(LS_DT_F32, 2, s);
    ls_arg va[2] = {ls_arg_node(x), size};
    uint32_t o = call_kw(b, LS_OP_view_copy, va, 2, NULL, ls_arg_none(), &m);
    ls_program *p = xnn_partitioned(b, &o, 1);
    assert_why(p, "aten_view_copy_default", "XNNPACK takes only tensor inputs: `aten_sym_size_int` is a SymInt (rule tensor_args)");
    ls_program_unref(p);
}
END_TEST


/* SliceCopyConfig: step 1 only, and static sizes (is_shape_dynamic). */
START_TEST(rule_static_shape_and_step)
{
    int64_t s[2] = {4, 8};
    ls_builder *b = ls_builder_new("model", LS_DIALECT_EDGE);
    uint32_t x = user(b, "x", LS_DT_F32, 2, s);
    ls_node_vals_mut(ls_builder_program(b)->nodes[0])[0].sym[0] = ls_intern("s0"); /* x: [s0, 8] */
    uint32_t y = user(b, "y", LS_DT_F32, 2, s);
    int64_t half[2] = {4, 4};
    ls_tmeta m = ls_meta(LS_DT_F32, 2, half);
    ls_arg a1[5] = {ls_arg_node(x), ls_arg_int(1), ls_arg_int(0), ls_arg_int(4), ls_arg_int(1)};
    ls_arg a2[5] = {ls_arg_node(y), ls_arg_int(1), ls_arg_int(0), ls_arg_int(8), ls_arg_int(2)};
    ls_arg a3[5] = {ls_arg_node(y), ls_arg_int(1), ls_arg_int(0), ls_arg_int(4), ls_arg_int(1)};
    uint32_t o[3] = {call_kw(b, LS_OP_slice_copy_Tensor, a1, 5, NULL, ls_arg_none(), &m),
                     call_kw(b, LS_OP_slice_copy_Tensor, a2, 5, NULL, ls_arg_none(), &m),
                     call_kw(b, LS_OP_slice_copy_Tensor, a3, 5, NULL, ls_arg_none(), &m)};
    ls_program *p = xnn_partitioned(b, o, 3);
    assert_why(p, "aten_slice_copy_tensor", "XNNPACK takes only static shapes: `x` has size s0 in dim 0 (rule static_shape)");
    assert_why(p, "aten_slice_copy_tensor_1", "XNNPACK takes only step=1, not step=2 (rule arg_is:step=1)");
    ck_assert_str_eq(tag_of(p, "aten_slice_copy_tensor_2"), "tag0");
    ls_program_unref(p);
}
END_TEST

/* SliceCopyConfig: no dimension of size 0 in the input or the output ("output tensor has invalid
 * shape ... Expecting non-zero, int values"): y[:, 2:2] of a float32[4, 8] is float32[4, 0],
 * refused though its input has elements (no_empty looks at inputs only); y[:, 2:3] is taken. */
START_TEST(rule_slice_to_nothing)
{
    int64_t s[2] = {4, 8}, none[2] = {4, 0}, one[2] = {4, 1};
    ls_builder *b = ls_builder_new("model", LS_DIALECT_EDGE);
    uint32_t y = user(b, "y", LS_DT_F32, 2, s);
    ls_tmeta m0 = ls_meta(LS_DT_F32, 2, none), m1 = ls_meta(LS_DT_F32, 2, one);
    ls_arg a0[5] = {ls_arg_node(y), ls_arg_int(1), ls_arg_int(2), ls_arg_int(2), ls_arg_int(1)};
    ls_arg a1[5] = {ls_arg_node(y), ls_arg_int(1), ls_arg_int(2), ls_arg_int(3), ls_arg_int(1)};
    uint32_t o[2] = {call_kw(b, LS_OP_slice_copy_Tensor, a0, 5, NULL, ls_arg_none(), &m0),
                     call_kw(b, LS_OP_slice_copy_Tensor, a1, 5, NULL, ls_arg_none(), &m1)};
    ls_program *p = xnn_partitioned(b, o, 2);
    assert_why(p, "aten_slice_copy_tensor",
               "XNNPACK takes no dimension of size 0: its result `aten_slice_copy_tensor` has size 0 in dim 1 (rule no_zero_dim)");
    ck_assert_str_eq(tag_of(p, "aten_slice_copy_tensor_1"), "tag0");
    ls_program_unref(p);
}
END_TEST

/* CatConfig: at least two tensors. */
START_TEST(rule_min_inputs)
{
    ls_builder *b = ls_builder_new("model", LS_DIALECT_EDGE);
    uint32_t x = user(b, "x", LS_DT_F32, 1, &FOUR), y = user(b, "y", LS_DT_F32, 1, &FOUR);
    uint32_t one[1] = {x}, two[2] = {x, y};
    int64_t eight = 8;
    ls_tmeta m4 = ls_meta(LS_DT_F32, 1, &FOUR), m8 = ls_meta(LS_DT_F32, 1, &eight);
    ls_arg c1 = {.kind = LS_ARG_NODES, .n = 1}, c2 = {.kind = LS_ARG_NODES, .n = 2};
    c1.v.nodes = malloc(sizeof(uint32_t));
    memcpy(c1.v.nodes, one, sizeof one);
    c2.v.nodes = malloc(2 * sizeof(uint32_t));
    memcpy(c2.v.nodes, two, sizeof two);
    uint32_t o[2] = {call_kw(b, LS_OP_cat, &c1, 1, NULL, ls_arg_none(), &m4), call_kw(b, LS_OP_cat, &c2, 1, NULL, ls_arg_none(), &m8)};
    ls_program *p = xnn_partitioned(b, o, 2);
    assert_why(p, "aten_cat_default", "XNNPACK takes at least 2 input tensors, not 1 (rule min_inputs:2)");
    ck_assert_ptr_nonnull(tag_of(p, "aten_cat_default_1"));
    ls_program_unref(p);
}
END_TEST

/* ConstantPadConfig: no negative padding (cropping). */
START_TEST(rule_nonneg)
{
    ls_builder *b = ls_builder_new("model", LS_DIALECT_EDGE);
    uint32_t x = user(b, "x", LS_DT_F32, 1, &FOUR);
    int64_t crop[2] = {-1, 0}, pad[2] = {1, 1}, three = 3, six = 6;
    ls_tmeta m3 = ls_meta(LS_DT_F32, 1, &three), m6 = ls_meta(LS_DT_F32, 1, &six);
    ls_arg a1[2] = {ls_arg_node(x), ls_arg_ints(crop, 2)}, a2[2] = {ls_arg_node(x), ls_arg_ints(pad, 2)};
    uint32_t o[2] = {call_kw(b, LS_OP_constant_pad_nd, a1, 2, NULL, ls_arg_none(), &m3),
                     call_kw(b, LS_OP_constant_pad_nd, a2, 2, NULL, ls_arg_none(), &m6)};
    ls_program *p = xnn_partitioned(b, o, 2);
    assert_why(p, "aten_constant_pad_nd_default", "XNNPACK takes no negative pad: [-1, 0] (rule nonneg:pad)");
    ck_assert_ptr_nonnull(tag_of(p, "aten_constant_pad_nd_default_1"));
    ls_program_unref(p);
}
END_TEST

/* ToDimOrderCopyConfig: dim order changes only, no dtype conversion. */
START_TEST(rule_same_io_dtype)
{
    ls_builder *b = ls_builder_new("model", LS_DIALECT_EDGE);
    uint32_t x = user(b, "x", LS_DT_F32, 1, &FOUR);
    ls_tmeta m16 = ls_meta(LS_DT_F16, 1, &FOUR);
    ls_arg a[1] = {ls_arg_node(x)};
    ls_arg dt = {.kind = LS_ARG_DTYPE, .v.i = LS_DT_F16};
    uint32_t o = call_kw(b, LS_OP__to_dim_order_copy, a, 1, "dtype", dt, &m16);
    ls_program *p = xnn_partitioned(b, &o, 1);
    assert_why(p, "dim_order_ops__to_dim_order_copy_default", "XNNPACK takes no dtype conversion: float32 to float16 (rule same_io_dtype)");
    ls_program_unref(p);
}
END_TEST

/* ViewCopyConfig: a single inferred (-1) dimension. */
START_TEST(rule_one_inferred)
{
    int64_t s[2] = {2, 2};
    ls_builder *b = ls_builder_new("model", LS_DIALECT_EDGE);
    uint32_t x = user(b, "x", LS_DT_F32, 1, &FOUR);
    int64_t two_inferred[2] = {-1, -1}, one_inferred[2] = {2, -1};
    ls_tmeta m = ls_meta(LS_DT_F32, 2, s);
    ls_arg a1[2] = {ls_arg_node(x), ls_arg_ints(two_inferred, 2)}, a2[2] = {ls_arg_node(x), ls_arg_ints(one_inferred, 2)};
    uint32_t o[2] = {call_kw(b, LS_OP_view_copy, a1, 2, NULL, ls_arg_none(), &m), call_kw(b, LS_OP_view_copy, a2, 2, NULL, ls_arg_none(), &m)};
    ls_program *p = xnn_partitioned(b, o, 2);
    assert_why(p, "aten_view_copy_default", "XNNPACK takes only one inferred dimension, not 2 in [-1, -1] (rule one_inferred:size)");
    ck_assert_ptr_nonnull(tag_of(p, "aten_view_copy_default_1"));
    ls_program_unref(p);
}
END_TEST

/* A static q and dq with nothing around them: QuantizedPerTensorConfig and
 * DeQuantizedPerTensorConfig (generic_node_configs.py, STATIC_QUANT) take each on its own
 * (get_node_and_deps is [node]); _check_node_has_valid_dtype lets a q/dq read and give int8
 * (is_quant, is_dequant), not uint8 (torch.quint8 is in its set, torch.uint8 is not); the
 * GroupBasedPartitioner of generate_grouped_partitions_from_list_of_nodes allows single-node
 * partitions, and the two independent ones merge into tag0. */
START_TEST(rule_lone_qdq_taken)
{
    ls_builder *b = ls_builder_new("model", LS_DIALECT_EDGE);
    uint32_t x = user(b, "x", LS_DT_F32, 1, &FOUR), y = user(b, "y", LS_DT_I8, 1, &FOUR);
    ls_tmeta m8 = ls_meta(LS_DT_I8, 1, &FOUR), mu8 = ls_meta(LS_DT_U8, 1, &FOUR), mf = ls_meta(LS_DT_F32, 1, &FOUR);
    ls_arg q[6] = {ls_arg_node(x), ls_arg_float(0.05), ls_arg_int(0), ls_arg_int(-128), ls_arg_int(127),
                   {.kind = LS_ARG_DTYPE, .v.i = LS_DT_I8}};
    ls_arg qu[6] = {ls_arg_node(x), ls_arg_float(0.05), ls_arg_int(128), ls_arg_int(0), ls_arg_int(255),
                    {.kind = LS_ARG_DTYPE, .v.i = LS_DT_U8}};
    ls_arg dq[6] = {ls_arg_node(y), ls_arg_float(0.1), ls_arg_int(-3), ls_arg_int(-128), ls_arg_int(127),
                    {.kind = LS_ARG_DTYPE, .v.i = LS_DT_I8}};
    uint32_t o[3] = {call_kw(b, LS_OP_quantize_per_tensor, q, 6, NULL, ls_arg_none(), &m8),
                     call_kw(b, LS_OP_quantize_per_tensor, qu, 6, NULL, ls_arg_none(), &mu8),
                     call_kw(b, LS_OP_dequantize_per_tensor, dq, 6, NULL, ls_arg_none(), &mf)};
    ls_program *p = xnn_partitioned(b, o, 3);
    ck_assert_str_eq(tag_of(p, "quantized_decomposed_quantize_per_tensor_default"), "tag0");
    ck_assert_str_eq(tag_of(p, "quantized_decomposed_dequantize_per_tensor_default"), "tag0");
    const ls_node *u8 = pt_must(p, "quantized_decomposed_quantize_per_tensor_default_1");
    ck_assert_ptr_null(u8->tag);
    ck_assert_int_eq(u8->reason, LS_WHY_DTYPE);
    ls_program_unref(p);
}
END_TEST

/* Rules of other backends, in profiles written here: Vulkan's rank limit (max_rank), its
 * reduce check (list_len and keepdim), skip_bool_tensors (no_bool). */
START_TEST(rules_of_other_backends)
{
    int64_t s5[5] = {1, 1, 1, 2, 2}, s2[2] = {2, 2};
    ls_builder *b = ls_builder_new("model", LS_DIALECT_EDGE);
    uint32_t x5 = user(b, "x5", LS_DT_F32, 5, s5), x = user(b, "x", LS_DT_F32, 2, s2);
    uint32_t m = user(b, "m", LS_DT_BOOL, 2, s2);
    int64_t both[2] = {0, 1}, first = 0, one1[2] = {1, 1}, one2[2] = {1, 2};
    ls_tmeta mr1 = ls_meta(LS_DT_F32, 2, one1), mr2 = ls_meta(LS_DT_F32, 2, one2), mx = ls_meta(LS_DT_F32, 2, s2);
    ls_arg s_both[3] = {ls_arg_node(x), ls_arg_ints(both, 2), ls_arg_bool(true)};
    ls_arg s_first[3] = {ls_arg_node(x), ls_arg_ints(&first, 1), ls_arg_bool(true)};
    ls_arg w[3] = {ls_arg_node(m), ls_arg_node(x), ls_arg_node(x)};
    uint32_t o[4] = {pt_unary(b, LS_OP_relu, x5), call_kw(b, LS_OP_sum_dim_IntList, s_both, 3, NULL, ls_arg_none(), &mr1),
                     call_kw(b, LS_OP_sum_dim_IntList, s_first, 3, NULL, ls_arg_none(), &mr2),
                     call_kw(b, LS_OP_where_self, w, 3, NULL, ls_arg_none(), &mx)};
    ls_build_output(b, o, 4, NULL, NULL);
    ls_program *p = ls_builder_finish(b);
    ls_profile *prof = pt_profile("{\"name\": \"gpu\", \"title\": \"Vulkan\", \"backend_id\": \"VulkanBackend\", "
                                  "\"rules\": [\"max_rank:4\", \"no_bool\"], \"ops\": [\"relu\", "
                                  "{\"op\": \"sum.dim_IntList\", \"rules\": [\"list_len:dim=1\", \"arg_is:keepdim=true\"]}, \"where.self\"]}");
    pt_step(&p, ls_pass_partition, prof);
    assert_why(p, "aten_relu_default", "Vulkan takes tensors of rank at most 4: `x5` has rank 5 (rule max_rank:4)");
    assert_why(p, "aten_sum_dim_intlist", "Vulkan takes dim of 1 entry only, not [0, 1] (rule list_len:dim=1)");
    ck_assert_ptr_nonnull(tag_of(p, "aten_sum_dim_intlist_1"));
    assert_why(p, "aten_where_self", "Vulkan takes no bool tensors: `m` is bool (rule no_bool)");
    ls_program_unref(p);
    ls_profile_free(prof);
}
END_TEST

/* The profile format's rules: what a misspelt rule says. */
START_TEST(rule_spelling_errors)
{
    const char *bad[][2] = {
        {"\"rules\": [\"frobnicate\"]", "rules[0]: unknown rule 'frobnicate' (rules: alpha_one, "},
        {"\"rules\": [\"const_arg:1\"]", "rule 'const_arg:1' names an argument: give it in an op's \"rules\""},
        {"\"ops\": [{\"op\": \"mm\", \"rules\": [\"const_arg:weight\"]}]", "rule 'const_arg:weight': aten.mm.default has no argument 'weight'"},
        {"\"ops\": [{\"op\": \"mm\", \"rules\": [\"const_arg:7\"]}]", "aten.mm.default has no argument 7"},
        {"\"ops\": [{\"op\": \"pow.Tensor_Scalar\", \"rules\": [\"arg_is:exponent\"]}]", "needs ARG=VALUE"},
        {"\"ops\": [{\"op\": \"pow.Tensor_Scalar\", \"rules\": [\"arg_is:exponent=two\"]}]", "'two' is not an integer"},
        {"\"ops\": [{\"op\": \"relu\", \"rules\": [\"alpha_one\"]}]", "rule 'alpha_one': aten.relu.default has no alpha"},
        {"\"ops\": [{\"op\": \"mm\", \"gemm\": {\"weight\": \"nope\", \"act\": 0}}]", "aten.mm.default has no such argument"},
        {"\"partitioner\": \"greedy\", \"ops\": []", "'partitioner' must be \"capability\" or \"group\""},
        {"\"flow\": [\"emit\"], \"ops\": []", "flow[0]: 'emit' is not a pass run before partitioning"},
        {"\"extends\": \"nosuch\"", "'extends': no shipped profile 'nosuch'"},
    };
    for (size_t i = 0; i < sizeof bad / sizeof bad[0]; i++) {
        char json[512];
        snprintf(json, sizeof json, "{\"name\": \"n\", \"backend_id\": \"B\", %s}", bad[i][0]);
        ls_profile *p;
        ls_error err;
        ck_assert_int_eq(ls_profile_parse("p.json", json, strlen(json), &p, &err), -1);
        ck_assert_msg(strstr(err.msg, bad[i][1]) && strncmp(err.msg, "p.json: ", 8) == 0, "%s", err.msg);
    }
}
END_TEST


/* const_arg as a plain rule (a profile without GEMM entries), and rank_le on XNNPACK's
 * convolution (ConvolutionConfig: 1-D and 2-D only, the weight's rank minus 2). */
START_TEST(rules_const_arg_and_rank_le)
{
    int64_t s2[2] = {2, 2}, w5[5] = {1, 1, 1, 1, 1}, x5[5] = {1, 1, 2, 2, 2};
    ls_builder *b = ls_builder_new("model", LS_DIALECT_EDGE);
    uint32_t w = pt_input(b, "p_w", LS_IN_PARAMETER, "w", true, LS_DT_F32, 2, s2);
    uint32_t x = user(b, "x", LS_DT_F32, 2, s2), y = user(b, "y", LS_DT_F32, 2, s2);
    uint32_t o[2] = {pt_bin(b, LS_OP_mul_Tensor, x, w), pt_bin(b, LS_OP_mul_Tensor, x, y)};
    ls_build_output(b, o, 2, NULL, NULL);
    ls_program *p = ls_builder_finish(b);
    ls_profile *prof = pt_profile("{\"name\": \"c\", \"title\": \"ConstNPU\", \"backend_id\": \"ConstBackend\", "
                                  "\"ops\": [{\"op\": \"mul.Tensor\", \"rules\": [\"const_arg:other\"]}]}");
    pt_step(&p, ls_pass_partition, prof);
    ck_assert_ptr_nonnull(tag_of(p, "aten_mul_tensor"));
    assert_why(p, "aten_mul_tensor_1",
               "ConstNPU needs `other` (arg 1) to be a parameter, buffer or constant: it is a user input (rule const_arg:other)");
    ls_profile_free(prof);
    ls_program_unref(p);
    /* a 3-D convolution (5-D weight) */
    b = ls_builder_new("model", LS_DIALECT_EDGE);
    uint32_t cw = pt_input(b, "p_cw", LS_IN_PARAMETER, "cw", true, LS_DT_F32, 5, w5);
    uint32_t cx = user(b, "cx", LS_DT_F32, 5, x5);
    int64_t ones[3] = {1, 1, 1}, zeros[3] = {0, 0, 0};
    ls_arg a[9] = {ls_arg_node(cx), ls_arg_node(cw), ls_arg_none(), ls_arg_ints(ones, 3), ls_arg_ints(zeros, 3),
                   ls_arg_ints(ones, 3), ls_arg_bool(false), ls_arg_ints(zeros, 3), ls_arg_int(1)};
    ls_tmeta m = ls_meta(LS_DT_F32, 5, x5);
    uint32_t c = call_kw(b, LS_OP_convolution, a, 9, NULL, ls_arg_none(), &m);
    p = xnn_partitioned(b, &c, 1);
    assert_why(p, "aten_convolution_default", "XNNPACK takes `weight` of rank at most 4 only, not rank 5 (rule rank_le:weight=4)");
    ls_program_unref(p);
}
END_TEST

Suite *partition_rules_suite(void)
{
    Suite *s = suite_create("partition_rules");
    TCase *tc = tcase_create("xnnpack");
    tcase_add_test(tc, xnnpack_test_add_one_delegate);
    tcase_add_test(tc, rule_alpha_one);
    tcase_add_test(tc, rule_last_dim);
    tcase_add_test(tc, rule_arg_is);
    tcase_add_test(tc, rule_dims_are_and_rank_is);
    tcase_add_test(tc, rule_const_arg_gemm_weight);
    tcase_add_test(tc, rule_same_dtype);
    tcase_add_test(tc, rule_no_empty);
    tcase_add_test(tc, rule_slice_to_nothing);
    tcase_add_test(tc, rule_tensor_args);
    tcase_add_test(tc, rule_static_shape_and_step);
    tcase_add_test(tc, rule_min_inputs);
    tcase_add_test(tc, rule_nonneg);
    tcase_add_test(tc, rule_same_io_dtype);
    tcase_add_test(tc, rule_one_inferred);
    tcase_add_test(tc, rule_lone_qdq_taken);
    tcase_add_test(tc, rules_of_other_backends);
    tcase_add_test(tc, rule_spelling_errors);
    tcase_add_test(tc, rules_const_arg_and_rank_le);
    suite_add_tcase(s, tc);
    return s;
}
