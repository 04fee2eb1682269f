/* The profile's `boundary` step (src/passes/partition_boundary.c), on programs built here and
 * worked by hand from TOSAPartitioner.partition (backends/arm/tosa_partitioner.py, 0016af85), and
 * on samples/quantized_mlp with the shipped `arm` profile. */
#include <check.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "passtest.h"
#include "progfixtures.h"

static const int64_t FOUR = 4;

static ls_profile *profile(const char *name_or_json)
{
    ls_profile *p;
    ls_error err;
    int rc = name_or_json[0] == '{' ? ls_profile_parse("test.json", name_or_json, strlen(name_or_json), &p, &err)
                                    : ls_profile_load(name_or_json, &p, &err);
    if (rc != 0) ck_abort_msg("%s", err.msg);
    return p;
}

static uint32_t call(ls_builder *b, ls_op_id op, const ls_arg *pos, uint16_t n, ls_dtype dt)
{
    ls_arg *a = calloc(n, sizeof *a);
    for (uint16_t i = 0; i < n; i++) a[i] = pos[i];
    ls_tmeta m = ls_meta(dt, 1, &FOUR);
    return ls_build_call(b, NULL, op, a, n, &m);
}

/* quantize_per_tensor / dequantize_per_tensor of x, int8 with scale 0.05 and zero point 0. */
static uint32_t qdq(ls_builder *b, ls_op_id op, uint32_t x)
{
    ls_arg a[6] = {ls_arg_node(x), ls_arg_float(0.05), ls_arg_int(0), ls_arg_int(-128), ls_arg_int(127),
                   {.kind = LS_ARG_DTYPE, .v.i = LS_DT_I8}};
    return call(b, op, a, 6, op == LS_OP_quantize_per_tensor ? LS_DT_I8 : LS_DT_F32);
}

static uint32_t unary(ls_builder *b, ls_op_id op, uint32_t x)
{
    ls_arg a[1] = {ls_arg_node(x)};
    return call(b, op, a, 1, LS_DT_F32);
}

static ls_program *partitioned(ls_builder *b, const uint32_t *o, uint32_t n, const ls_profile *prof)
{
    ls_build_output(b, o, n, NULL, NULL);
    ls_program *p = ls_builder_finish(b);
    pt_step(&p, ls_pass_partition, prof);
    return p;
}

static void assert_cpu(const ls_program *p, const char *name, const char *text)
{
    const ls_node *n = pt_must(p, name);
    ck_assert_msg(!n->tag, "%s is in %s", name, n->tag);
    const char *w = ls_cpu_why((ls_cpu_reason)n->reason, n->reason_detail);
    ck_assert_msg(strcmp(w, text) == 0, "%s: '%s', expected '%s'", name, w, text);
}

static void assert_tag(const ls_program *p, const char *name, const char *tag)
{
    const ls_node *n = pt_must(p, name);
    ck_assert_msg(n->tag && strcmp(n->tag, tag) == 0, "%s: tag %s, expected %s", name, n->tag ? n->tag : "None", tag);
}

/* x -> q -> dq -> relu -> q -> dq -> output, all in BaseTOSASupportList. By hand:
 * CapabilityBasedPartitioner walks from the output, each node a new partition, a merge keeping
 * the larger side's id (docs/backends.md, `partitioner`): dq 0 and q 1 merge into 1, and every
 * later node joins partition 1 (tag1). Then, per
 * node: the first q reads x, a placeholder without the tag: de-tagged (outermost q upwards); the
 * first dq's one user relu has the tag, and its input (now outside) is int8, not floating point:
 * kept; relu and the second q read tagged nodes: kept; the last dq's user is the output node:
 * de-tagged (outermost dq downwards). int8 crosses both edges. No node read by another is taken
 * out with a float output, so the set order TOSAPartitioner visits the nodes in does not matter. */
START_TEST(arm_qdq_chain)
{
    ls_profile *prof = profile("arm");
    ck_assert(prof->release_qdq && prof->integer_edges);
    ls_builder *b = ls_builder_new("model", LS_DIALECT_EDGE);
    uint32_t x = pt_input(b, "x", LS_IN_USER_INPUT, NULL, false, LS_DT_F32, 1, &FOUR);
    uint32_t o = qdq(b, LS_OP_dequantize_per_tensor,
                     qdq(b, LS_OP_quantize_per_tensor,
                         unary(b, LS_OP_relu, qdq(b, LS_OP_dequantize_per_tensor, qdq(b, LS_OP_quantize_per_tensor, x)))));
    ls_program *p = partitioned(b, &o, 1, prof);
    assert_cpu(p, "quantized_decomposed_quantize_per_tensor_default",
               "quantize_per_tensor: Arm takes a partition's outermost quantize back out when its input (`x`) is "
               "outside it (boundary release_qdq, tosa_partitioner.py)");
    assert_tag(p, "quantized_decomposed_dequantize_per_tensor_default", "tag1");
    assert_tag(p, "aten_relu_default", "tag1");
    assert_tag(p, "quantized_decomposed_quantize_per_tensor_default_1", "tag1");
    assert_cpu(p, "quantized_decomposed_dequantize_per_tensor_default_1",
               "dequantize_per_tensor: Arm takes a partition's outermost dequantize back out when its user (`output`) "
               "is outside it (boundary release_qdq, tosa_partitioner.py)");
    ck_assert_uint_eq(p->n_tags, 1);
    ck_assert_str_eq(p->tags[0].backend_id, "TOSABackend");
    ls_program_unref(p);
    ls_profile_free(prof);
}
END_TEST

/* integer_edges, and the floating-point spec without it. x is int8, y float32: dq(x) -> relu ->
 * q is one output, tanh(y) another; CapabilityBasedPartitioner's horizontal fusion puts all four
 * in one partition. By hand, integer-only: dq's input x is int8 and its user relu tagged, relu
 * and q read tagged nodes, q's input is inside (q's users are not looked at): kept; tanh reads y
 * from outside, float32: de-tagged ("Was first node in partition and input y had fp dtype").
 * With a floating-point spec (support_float(): the check is skipped) tanh stays. */
START_TEST(arm_integer_edges)
{
    for (int fp = 0; fp < 2; fp++) {
        ls_profile *prof =
            profile(fp ? "{\"extends\": \"arm\", \"name\": \"arm_fp\", \"boundary\": {\"integer_edges\": false}}" : "arm");
        ck_assert(prof->release_qdq && prof->integer_edges == !fp);
        ls_builder *b = ls_builder_new("model", LS_DIALECT_EDGE);
        uint32_t x = pt_input(b, "x", LS_IN_USER_INPUT, NULL, false, LS_DT_I8, 1, &FOUR);
        uint32_t y = pt_input(b, "y", LS_IN_USER_INPUT, NULL, false, LS_DT_F32, 1, &FOUR);
        uint32_t o[2] = {qdq(b, LS_OP_quantize_per_tensor, unary(b, LS_OP_relu, qdq(b, LS_OP_dequantize_per_tensor, x))),
                         unary(b, LS_OP_tanh, y)};
        ls_program *p = partitioned(b, o, 2, prof);
        const char *tag = pt_must(p, "aten_relu_default")->tag;
        ck_assert_ptr_nonnull(tag);
        assert_tag(p, "quantized_decomposed_dequantize_per_tensor_default", tag);
        assert_tag(p, "quantized_decomposed_quantize_per_tensor_default", tag);
        if (fp)
            assert_tag(p, "aten_tanh_default", tag);
        else
            assert_cpu(p, "aten_tanh_default",
                       "tanh: Arm (integer-only) takes a partition's first node back out when an input from outside "
                       "(`y`) is float32 (boundary integer_edges, tosa_partitioner.py)");
        ls_program_unref(p);
        ls_profile_free(prof);
    }
}
END_TEST

/* A boundary that is not an object, or with a field it does not have, is refused by name. */
START_TEST(boundary_bad_fields)
{
    ls_profile *p;
    ls_error err;
    const char *bad = "{\"name\": \"b\", \"backend_id\": \"B\", \"boundary\": {\"release_dq\": true}}";
    ck_assert_int_ne(ls_profile_parse("b.json", bad, strlen(bad), &p, &err), 0);
    ck_assert_msg(strstr(err.msg, "b.json") && strstr(err.msg, "boundary") && strstr(err.msg, "release_dq"), "%s", err.msg);
    const char *bad2 = "{\"name\": \"b\", \"backend_id\": \"B\", \"boundary\": true}";
    ck_assert_int_ne(ls_profile_parse("b.json", bad2, strlen(bad2), &p, &err), 0);
    ck_assert_msg(strstr(err.msg, "'boundary' must be an object"), "%s", err.msg);
}
END_TEST

/* samples/quantized_mlp with --backend arm: the quantize of each input (x, y) reads a
 * placeholder and the dequantize of each output feeds the output node, so all four go back to
 * the CPU with the rule's reason (the boundary q/dq that XNNPACK keeps inside). */
START_TEST(arm_quantized_mlp_boundary)
{
    ls_program *p = pf_sample("quantized_mlp");
    ls_pipeline_opts o;
    ls_pipeline_opts_init(&o);
    ls_error err;
    ck_assert_int_eq(ls_pipeline_opt(&o, "--backend", "arm", &err), 1);
    ls_history h;
    ls_pipeline_run(p, &o, &h, &err); /* to_backend may refuse the tags (docs/backends.md); partition is what is asserted */
    int k = ls_history_find_step(&h, "partition", NULL);
    ck_assert_int_ge(k, 0);
    ck_assert_ptr_null(h.steps[k].error);
    const ls_program *q = h.steps[k].program;
    static const char *const in_q[2][2] = {{"quantized_decomposed_quantize_per_tensor_default", "x"},
                                           {"quantized_decomposed_quantize_per_tensor_default_3", "y"}};
    for (int i = 0; i < 2; i++)
        assert_cpu(q, in_q[i][0],
                   ls_internf("quantize_per_tensor: Arm takes a partition's outermost quantize back out when its input "
                              "(`%s`) is outside it (boundary release_qdq, tosa_partitioner.py)",
                              in_q[i][1]));
    uint32_t out_dq = 0;
    const ls_node *out = q->nodes[q->n_nodes - 1];
    for (uint32_t a = 0; a < out->nargs; a++) {
        const ls_node *n = out->args[a].kind == LS_ARG_NODE ? ls_program_node(q, out->args[a].v.node) : NULL;
        if (!n || !n->op || n->op->id != LS_OP_dequantize_per_tensor) continue;
        out_dq++;
        assert_cpu(q, n->name,
                   "dequantize_per_tensor: Arm takes a partition's outermost dequantize back out when its user "
                   "(`output`) is outside it (boundary release_qdq, tosa_partitioner.py)");
    }
    ck_assert_uint_eq(out_dq, 2);
    ls_pipeline_opts_free(&o);
    ls_history_free(&h);
    ls_program_unref(p);
}
END_TEST

Suite *partition_boundary_suite(void)
{
    Suite *s = suite_create("partition_boundary");
    TCase *tc = tcase_create("boundary");
    tcase_set_timeout(tc, 30);
    tcase_add_test(tc, arm_qdq_chain);
    tcase_add_test(tc, arm_integer_edges);
    tcase_add_test(tc, boundary_bad_fields);
    tcase_add_test(tc, arm_quantized_mlp_boundary);
    suite_add_tcase(s, tc);
    return s;
}
