/* The shipped profiles of Core ML, MLX, Vulkan and QNN on the cases ExecuTorch's own tests check
 * (backends/apple/coreml/test/test_coreml_partitioner.py: test_buffer, test_add_sub_skip_mm,
 * test_lower_full_graph, test_take_over_constant_data_false) and on what each partitioner file
 * says (mlx/partitioner.py's tags and its recipe's flow, vulkan_partitioner.py's
 * is_linear_permute, qnn_partitioner.py's tags). */
#include <check.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "passtest.h"
#include "progfixtures.h"
#include "reader.h"
#include "testutil.h"

static const int64_t S22[2] = {2, 2};

static ls_profile *load(const char *name)
{
    ls_profile *p;
    ls_error err;
    if (ls_profile_load(name, &p, &err) != 0) ck_abort_msg("%s", err.msg);
    return p;
}

/* The default pipeline with one profile (taken by the options) into *h; step errors allowed. */
static void lower_with(ls_program *p, ls_profile *prof, ls_history *h)
{
    ls_pipeline_opts o;
    ls_pipeline_opts_init(&o);
    o.backends[o.n_backends++] = prof;
    ls_error err;
    ck_assert_msg(ls_pipeline_run(p, &o, h, &err) == 0, "%s", err.msg);
    ls_pipeline_opts_free(&o);
}

static const ls_program *last(const ls_history *h)
{
    for (uint32_t i = 0; i < h->n; i++) ck_assert_msg(!h->steps[i].error, "%s: %s", h->steps[i].pass, h->steps[i].error);
    return h->steps[h->n - 1].program;
}

/* test_buffer: the KV-cache model lowers to one delegate that keeps the cache as state: the top
 * level calls the delegate and reads one getitem, nothing else. */
START_TEST(coreml_test_buffer_cache_is_state)
{
    ls_program *p = pf_sample("kv_cache");
    ls_history h;
    pf_lower_backend(p, "coreml", &h);
    int s = ls_history_find_step(&h, "to_backend", NULL);
    const ls_program *q = h.steps[s].program;
    char *ops = pt_call_ops(q);
    ck_assert_str_eq(ops, "executorch_call_delegate,getitem");
    free(ops);
    ck_assert_uint_eq(pt_count_inputs(q, LS_IN_BUFFER), 0);
    const ls_program *d = pt_sub(q, "lowered_module_0");
    ck_assert_uint_eq(pt_count_inputs(d, LS_IN_BUFFER), 1);
    ck_assert_uint_eq(pt_count_outputs(d, LS_OUT_BUFFER_MUTATION), 1);
    ck_assert_str_eq(q->subs[0].backend_id, "CoreMLBackend");
    ck_assert(pt_report_has(&h.steps[ls_history_find_step(&h, "partition", NULL)].report,
                            "mutable buffer `b_cache` goes with `tag1` (tag_mutated_buffer)"));
    ls_history_free(&h);
    ls_program_unref(p);
}
END_TEST

/* y = mm(a, x); z = y + b; a = z - a; y = mm(a, x); z = y + b */
static ls_program *add_sub_mm(void)
{
    ls_builder *b = ls_builder_new("model", LS_DIALECT_ATEN);
    uint32_t a = pt_input(b, "a", LS_IN_USER_INPUT, NULL, false, LS_DT_F32, 2, S22);
    uint32_t x = pt_input(b, "x", LS_IN_USER_INPUT, NULL, false, LS_DT_F32, 2, S22);
    uint32_t bb = pt_input(b, "b", LS_IN_USER_INPUT, NULL, false, LS_DT_F32, 2, S22);
    uint32_t y = pt_bin(b, LS_OP_mm, a, x);
    uint32_t z = pt_bin(b, LS_OP_add_Tensor, y, bb);
    a = pt_bin(b, LS_OP_sub_Tensor, z, a);
    y = pt_bin(b, LS_OP_mm, a, x);
    z = pt_bin(b, LS_OP_add_Tensor, y, bb);
    ls_build_output(b, &z, 1, NULL, NULL);
    return ls_builder_finish(b);
}

/* test_add_sub_skip_mm: with mm skipped, mm, delegate, getitem, mm, delegate, getitem. */
START_TEST(coreml_test_add_sub_skip_mm)
{
    ls_program *p = add_sub_mm();
    ls_history h;
    lower_with(p, pt_profile("{\"extends\": \"coreml\", \"name\": \"coreml_no_mm\", \"skip_ops\": [\"mm\"]}"), &h);
    int s = ls_history_find_step(&h, "to_backend", NULL);
    char *ops = pt_call_ops(h.steps[s].program);
    ck_assert_str_eq(ops, "mm,executorch_call_delegate,getitem,mm,executorch_call_delegate,getitem");
    free(ops);
    ls_history_free(&h);
    /* and without skipping, one delegate takes everything */
    pf_lower_backend(p, "coreml", &h);
    ops = pt_call_ops(h.steps[ls_history_find_step(&h, "to_backend", NULL)].program);
    ck_assert_str_eq(ops, "executorch_call_delegate,getitem");
    free(ops);
    ls_history_free(&h);
    ls_program_unref(p);
}
END_TEST

/* test_lower_full_graph: an op Core ML does not take raises with lower_full_graph=True. */
START_TEST(coreml_test_lower_full_graph)
{
    ls_builder *b = ls_builder_new("model", LS_DIALECT_ATEN);
    uint32_t x = pt_input(b, "x", LS_IN_USER_INPUT, NULL, false, LS_DT_F32, 2, S22);
    uint32_t y = pt_bin(b, LS_OP_atan2, pt_unary(b, LS_OP_relu, x), x);
    ls_build_output(b, &y, 1, NULL, NULL);
    ls_program *p = ls_builder_finish(b);
    ls_history h;
    pf_lower_backend(p, "coreml", &h);
    (void)last(&h); /* lower_full_graph=False: atan2 stays on the CPU */
    ls_history_free(&h);
    lower_with(p, pt_profile("{\"extends\": \"coreml\", \"name\": \"coreml_full\", \"lower_full_graph\": true}"), &h);
    int s = ls_history_find_step(&h, "partition", NULL);
    ck_assert_ptr_nonnull(h.steps[s].error);
    ck_assert_msg(strstr(h.steps[s].error, "partition (coreml_full): lower_full_graph is set and `aten_atan2_default` (atan2) "
                                           "stays on the CPU: op not supported"),
                  "%s", h.steps[s].error);
    ck_assert_uint_eq(h.n, (uint32_t)s + 1); /* the pipeline stops there */
    ls_history_free(&h);
    ls_program_unref(p);
}
END_TEST

/* test_take_over_constant_data_false: a Linear lowered with take_over_constant_data=False calls
 * its delegate with lowered_module_0, x, p_linear_weight, p_linear_bias; Core ML keeps linear
 * whole (ops_to_not_decompose: every supported op). */
START_TEST(coreml_test_take_over_constant_data_false)
{
    int64_t sw[2] = {100, 50}, sx[2] = {2, 50}, sy[2] = {2, 100}, nb = 100;
    ls_builder *b = ls_builder_new("model", LS_DIALECT_ATEN);
    uint32_t w = pt_input(b, "p_linear_weight", LS_IN_PARAMETER, "linear.weight", true, LS_DT_F32, 2, sw);
    uint32_t bias = pt_input(b, "p_linear_bias", LS_IN_PARAMETER, "linear.bias", true, LS_DT_F32, 1, &nb);
    uint32_t x = pt_input(b, "x", LS_IN_USER_INPUT, NULL, false, LS_DT_F32, 2, sx);
    ls_arg *a = calloc(3, sizeof *a);
    a[0] = ls_arg_node(x);
    a[1] = ls_arg_node(w);
    a[2] = ls_arg_node(bias);
    ls_tmeta m = ls_meta(LS_DT_F32, 2, sy);
    uint32_t y = ls_build_call(b, NULL, LS_OP_linear, a, 3, &m);
    ls_build_output(b, &y, 1, NULL, NULL);
    ls_program *p = ls_builder_finish(b);
    ls_history h;
    lower_with(p, pt_profile("{\"extends\": \"coreml\", \"name\": \"coreml_keep_data\", \"take_constants\": false}"), &h);
    const ls_program *q = h.steps[ls_history_find_step(&h, "to_backend", NULL)].program;
    ck_assert_uint_eq(pt_delegate_call(q, 0)->nargs, 4);
    ck_assert_uint_eq(pt_count_op(pt_sub(q, "lowered_module_0"), LS_OP_linear), 1);
    ls_history_free(&h);
    /* taking the data (the default), the delegate is called with x alone */
    pf_lower_backend(p, "coreml", &h);
    q = h.steps[ls_history_find_step(&h, "to_backend", NULL)].program;
    ck_assert_uint_eq(pt_delegate_call(q, 0)->nargs, 2);
    ls_history_free(&h);
    ls_program_unref(p);
}
END_TEST

/* MLX: its recipe runs constant_prop on the ATen program before to_edge (folded_output's clone
 * is aten's, which to_edge then turns into Edge's); tags are mlx_<id>; masks fold as PR #24481. */
START_TEST(mlx_flow_tags_and_masks)
{
    ls_program *p;
    ls_error err;
    if (ls_load(tu_root("samples/folded_output.pt2"), NULL, &p, &err) != 0) ck_abort_msg("%s", err.msg);
    ls_history h;
    pf_lower_backend(p, "mlx", &h);
    (void)last(&h);
    ck_assert_str_eq(h.steps[1].pass, "constant_prop");
    ck_assert_str_eq(h.steps[2].pass, "to_edge");
    ck_assert_str_eq(pt_must(h.steps[1].program, "clone")->target, "torch.ops.aten.clone.default");
    ck_assert_str_eq(h.steps[3].pass, "partition");
    /* clone (id 0) and add (id 1) merge horizontally; the tie keeps the new id */
    ck_assert_str_eq(h.steps[3].program->tags[0].tag, "mlx_1");
    ck_assert_str_eq(h.steps[4].pass, "fold_masks");
    ls_history_free(&h);
    ls_program_unref(p);
    p = pf_sample("constant_mask");
    pf_lower_backend(p, "mlx", &h);
    const ls_program *q = h.steps[ls_history_find_step(&h, "partition", NULL)].program;
    uint32_t refused = 0, taken = 0;
    for (uint32_t i = 0; i < q->n_nodes; i++) {
        const ls_node *n = q->nodes[i];
        if (n->kind != LS_NODE_CALL || !n->op || n->op->id != LS_OP_index_Tensor) continue;
        if (n->tag) taken++;
        else refused += n->reason >= LS_WHY_MASK_COMPUTED && n->reason <= LS_WHY_MASK_ALL_FALSE;
    }
    ck_assert_uint_eq(taken, 5);   /* the five foldable masks (samples/README.md) */
    ck_assert_uint_eq(refused, 7); /* the seven the PR refuses */
    ls_history_free(&h);
    ls_program_unref(p);
}
END_TEST

/* Vulkan: a permute feeding an mm it does not take is left for a backend that fuses it into a
 * linear (is_linear_permute); a permute feeding anything else is taken. */
START_TEST(vulkan_linear_permute)
{
    ls_builder *b = ls_builder_new("model", LS_DIALECT_EDGE);
    uint32_t x = pt_input(b, "x", LS_IN_USER_INPUT, NULL, false, LS_DT_F32, 2, S22);
    int64_t perm[2] = {1, 0};
    uint32_t t[2];
    for (int k = 0; k < 2; k++) {
        ls_arg *a = calloc(2, sizeof *a);
        a[0] = ls_arg_node(x);
        a[1] = ls_arg_ints(perm, 2);
        t[k] = ls_build_call(b, NULL, LS_OP_permute_copy, a, 2, NULL);
    }
    uint32_t o[2] = {pt_bin(b, LS_OP_mm, x, t[0]), pt_unary(b, LS_OP_relu, t[1])};
    ls_build_output(b, o, 2, NULL, NULL);
    ls_program *p = ls_builder_finish(b);
    ls_profile *prof = pt_profile("{\"extends\": \"vulkan\", \"name\": \"vulkan_no_mm\", \"skip_ops\": [\"mm\"]}");
    pt_step(&p, ls_pass_partition, prof);
    const ls_node *n = pt_must(p, "aten_permute_copy_default");
    ck_assert_ptr_null(n->tag);
    ck_assert_str_eq(ls_cpu_why((ls_cpu_reason)n->reason, n->reason_detail),
                     "Vulkan leaves a permute that feeds a GEMM it does not take (`aten_mm_default`) to a backend that fuses "
                     "it into a linear (rule linear_permute)");
    ck_assert_ptr_nonnull(pt_must(p, "aten_permute_copy_default_1")->tag);
    ls_profile_free(prof);
    ls_program_unref(p);
    /* the shipped profile takes mm, so it takes the permute too */
}
END_TEST

/* QNN: tags qnn_<id>; what common_defs.py lists as to be implemented stays on the CPU. */
START_TEST(qnn_tags_and_unimplemented_ops)
{
    ls_builder *b = ls_builder_new("model", LS_DIALECT_EDGE);
    uint32_t x = pt_input(b, "x", LS_IN_USER_INPUT, NULL, false, LS_DT_F32, 2, S22);
    ls_arg *a = calloc(3, sizeof *a);
    a[0] = ls_arg_node(x);
    a[1] = ls_arg_node(x);
    a[2] = (ls_arg){.kind = LS_ARG_STRING, .v.s = ls_intern("floor")};
    a[2].name = ls_intern("rounding_mode");
    a[2].flags = LS_ARGF_KEYWORD;
    uint32_t d = ls_build_call(b, NULL, LS_OP_div_Tensor_mode, a, 3, NULL);
    uint32_t o = pt_unary(b, LS_OP_relu, pt_unary(b, LS_OP_exp, d));
    ls_build_output(b, &o, 1, NULL, NULL);
    ls_program *p = ls_builder_finish(b);
    ls_profile *prof = load("qnn");
    pt_step(&p, ls_pass_partition, prof);
    ck_assert_str_eq(pt_must(p, "aten_relu_default")->tag, "qnn_1"); /* relu 0, exp 1: a tie keeps 1 */
    ck_assert_int_eq(pt_must(p, "aten_div_tensor_mode")->reason, LS_WHY_OP_UNSUPPORTED);
    ck_assert_str_eq(p->tags[0].backend_id, "QnnBackend");
    ls_profile_free(prof);
    ls_program_unref(p);
}
END_TEST

Suite *partition_profiles_suite(void)
{
    Suite *s = suite_create("partition_profiles");
    TCase *tc = tcase_create("profiles");
    tcase_set_timeout(tc, 30);
    tcase_add_test(tc, coreml_test_buffer_cache_is_state);
    tcase_add_test(tc, coreml_test_add_sub_skip_mm);
    tcase_add_test(tc, coreml_test_lower_full_graph);
    tcase_add_test(tc, coreml_test_take_over_constant_data_false);
    tcase_add_test(tc, mlx_flow_tags_and_masks);
    tcase_add_test(tc, vulkan_linear_permute);
    tcase_add_test(tc, qnn_tags_and_unimplemented_ops);
    suite_add_tcase(s, tc);
    return s;
}
