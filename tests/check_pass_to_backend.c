/* to_backend on the exir tests of exir-semantics §9 (1-11, 17): what moves into a delegate,
 * what stays, the call's arguments, mutable buffers as state and the errors' texts. */
#include <check.h>
#include <stdlib.h>
#include <string.h>

#include "gen_program.h"
#include "passtest.h"
#include "verify.h"

static const int64_t S22[2] = {2, 2};

/* Tests 1-3: c_const1 CONSTANT_TENSOR, b_const2 non-persistent BUFFER, p_const3 PARAMETER, x;
 * add(x, c) → add(·, b) → add(·, p), all three adds tagged tag0. */
static ls_program *three_adds(void)
{
    ls_builder *b = ls_builder_new("model", LS_DIALECT_EDGE);
    uint32_t c = pt_input(b, "c_const1", LS_IN_CONSTANT_TENSOR, "const1", true, LS_DT_F32, 2, S22);
    uint32_t bb = pt_input(b, "b_const2", LS_IN_BUFFER, "const2", false, LS_DT_F32, 2, S22);
    uint32_t p = pt_input(b, "p_const3", LS_IN_PARAMETER, "const3", true, LS_DT_F32, 2, S22);
    uint32_t x = pt_input(b, "x", LS_IN_USER_INPUT, NULL, false, LS_DT_F32, 2, S22);
    uint32_t a = pt_bin(b, LS_OP_add_Tensor, x, c);
    a = pt_bin(b, LS_OP_add_Tensor, a, bb);
    a = pt_bin(b, LS_OP_add_Tensor, a, p);
    ls_build_output(b, &a, 1, NULL, NULL);
    ls_program *prog = ls_builder_finish(b);
    pt_tag(prog, "aten_add_tensor", "tag0");
    pt_tag(prog, "aten_add_tensor_1", "tag0");
    pt_tag(prog, "aten_add_tensor_2", "tag0");
    return prog;
}

START_TEST(test1_partitioner_not_tag_data)
{
    ls_program *p = three_adds();
    pt_step(&p, ls_pass_to_backend, NULL);
    ck_assert_uint_eq(p->n_subs, 1);
    ck_assert_uint_eq(p->n_state + p->n_constants, 3);
    ck_assert_uint_eq(pt_count_inputs(p, LS_IN_BUFFER) + pt_count_inputs(p, LS_IN_CONSTANT_TENSOR), 2);
    ck_assert_uint_eq(pt_count_inputs(p, LS_IN_PARAMETER), 1);
    const ls_node *call = pt_delegate_call(p, 0);
    ck_assert_ptr_nonnull(call);
    ck_assert_uint_eq(call->nargs, 5); /* lowered_module, x, c_const1, b_const2, p_const3 */
    const char *want[] = {"lowered_module_0", "x", "c_const1", "b_const2", "p_const3"};
    for (int i = 0; i < 5; i++) ck_assert_str_eq(ls_program_node(p, call->args[i].v.node)->name, want[i]);
    const ls_program *d = pt_sub(p, "lowered_module_0");
    ck_assert_uint_eq(d->n_state, 0);
    ck_assert_uint_eq(d->n_constants, 0);
    ck_assert_uint_eq(pt_count_inputs(d, LS_IN_USER_INPUT), 4);
    ck_assert_uint_eq(pt_count_inputs(d, LS_IN_PARAMETER) + pt_count_inputs(d, LS_IN_BUFFER), 0);
    ck_assert_str_eq(ls_program_sub(p, "lowered_module_0")->backend_id, "BundledBackend");
    /* the top level: placeholders, get_attr, the call and one getitem, the output */
    char *ops = pt_call_ops(p);
    ck_assert_str_eq(ops, "executorch_call_delegate,getitem");
    free(ops);
    ck_assert_str_eq(p->outputs[0].name, "getitem");
    ls_program_unref(p);
}
END_TEST

START_TEST(test2_partitioner_tag_data)
{
    ls_program *p = three_adds();
    pt_tag(p, "c_const1", "tag0");
    pt_tag(p, "b_const2", "tag0");
    pt_tag(p, "p_const3", "tag0");
    pt_step(&p, ls_pass_to_backend, NULL);
    ck_assert_uint_eq(p->n_state, 0);
    ck_assert_uint_eq(p->n_constants, 0);
    ck_assert_uint_eq(pt_count_inputs(p, LS_IN_BUFFER) + pt_count_inputs(p, LS_IN_PARAMETER), 0);
    ck_assert_uint_eq(pt_delegate_call(p, 0)->nargs, 2); /* lowered_module, x */
    const ls_program *d = pt_sub(p, "lowered_module_0");
    ck_assert_uint_eq(d->n_state + d->n_constants, 3);
    ck_assert_uint_eq(pt_count_inputs(d, LS_IN_BUFFER) + pt_count_inputs(d, LS_IN_CONSTANT_TENSOR), 2);
    ck_assert_uint_eq(pt_count_inputs(d, LS_IN_PARAMETER), 1);
    /* arrange_graph_placeholders: parameters, buffers, then the rest */
    ck_assert_str_eq(d->inputs[0].name, "p_const3");
    ck_assert_str_eq(d->inputs[1].name, "b_const2");
    ck_assert_str_eq(d->inputs[2].name, "c_const1");
    ck_assert_str_eq(d->inputs[3].name, "x");
    ck_assert_ptr_null(pt_node(p, "c_const1"));
    ls_program_unref(p);
}
END_TEST

START_TEST(test3_partitioner_tag_only_params)
{
    ls_program *p = three_adds();
    pt_tag(p, "p_const3", "tag0");
    pt_step(&p, ls_pass_to_backend, NULL);
    ck_assert_uint_eq(p->n_state + p->n_constants, 2);
    ck_assert_uint_eq(pt_count_inputs(p, LS_IN_BUFFER) + pt_count_inputs(p, LS_IN_CONSTANT_TENSOR), 2);
    ck_assert_uint_eq(pt_count_inputs(p, LS_IN_PARAMETER), 0);
    const ls_node *call = pt_delegate_call(p, 0);
    ck_assert_uint_eq(call->nargs, 4); /* lowered_module, x, c_const1, b_const2 */
    ck_assert_str_eq(ls_program_node(p, call->args[2].v.node)->name, "c_const1");
    ck_assert_str_eq(ls_program_node(p, call->args[3].v.node)->name, "b_const2");
    const ls_program *d = pt_sub(p, "lowered_module_0");
    ck_assert_uint_eq(d->n_state, 1);
    ck_assert_uint_eq(pt_count_inputs(d, LS_IN_PARAMETER), 1);
    ck_assert_uint_eq(pt_count_inputs(d, LS_IN_BUFFER), 0);
    ls_program_unref(p);
}
END_TEST

/* Tests 4, 5: c_const; y = add(x, c){tag0}; z = sub(x, c) untagged; outputs (y, z). */
static ls_program *split_constant(void)
{
    ls_builder *b = ls_builder_new("model", LS_DIALECT_EDGE);
    uint32_t c = pt_input(b, "c_const", LS_IN_CONSTANT_TENSOR, "const", true, LS_DT_F32, 2, S22);
    uint32_t x = pt_input(b, "x", LS_IN_USER_INPUT, NULL, false, LS_DT_F32, 2, S22);
    uint32_t o[2] = {pt_bin(b, LS_OP_add_Tensor, x, c), pt_bin(b, LS_OP_sub_Tensor, x, c)};
    ls_build_output(b, o, 2, NULL, NULL);
    ls_program *p = ls_builder_finish(b);
    pt_tag(p, "aten_add_tensor", "tag0");
    return p;
}

START_TEST(test4_partitioner_splits_constant_data)
{
    ls_program *p = split_constant();
    pt_step(&p, ls_pass_duplicate_constants, NULL); /* c_const is untagged: no copy */
    ck_assert_ptr_null(pt_node(p, "c_const_copy_0"));
    pt_step(&p, ls_pass_to_backend, NULL);
    ck_assert_ptr_nonnull(pt_node(p, "c_const"));
    ck_assert_uint_eq(p->n_constants, 1);
    const ls_node *call = pt_delegate_call(p, 0);
    ck_assert_uint_eq(call->nargs, 3);
    ck_assert_str_eq(ls_program_node(p, call->args[2].v.node)->name, "c_const");
    const ls_node *sub = pt_must(p, "aten_sub_tensor");
    ck_assert_str_eq(ls_program_node(p, sub->args[1].v.node)->name, "c_const");
    ls_program_unref(p);
}
END_TEST

START_TEST(test5_partitioner_alert_split_constant_data)
{
    ls_program *p = split_constant();
    pt_tag(p, "c_const", "tag0");
    ls_program_edit(p, (uint32_t)ls_program_find(p, "c_const"))->no_copy = true;
    ls_error err;
    ck_assert_ptr_null(pt_run(ls_pass_duplicate_constants, p, NULL, NULL, &err));
    ck_assert_msg(strstr(err.msg, "is tagged with (tag0) but has user (aten_sub_tensor) which has tag (None)"), "%s", err.msg);
    ck_assert_ptr_null(pt_run(ls_pass_to_backend, p, NULL, NULL, &err));
    ck_assert_str_eq(err.msg, "constant data node (c_const) is tagged with (tag0) but has user (aten_sub_tensor) which has tag (None)");
    ls_program_unref(p);
}
END_TEST

START_TEST(test6_bad_partitioner_tagged_output)
{
    ls_program *p = split_constant();
    pt_tag(p, "output", "tag0");
    ls_error err;
    ck_assert_ptr_null(pt_run(ls_pass_to_backend, p, NULL, NULL, &err));
    ck_assert_str_eq(err.msg, "output node output should not be tagged");
    ls_program_unref(p);
}
END_TEST

START_TEST(test7_bad_partitioner_tagged_model_input)
{
    ls_program *p = split_constant();
    pt_tag(p, "x", "tag_x");
    ls_error err;
    ck_assert_ptr_null(pt_run(ls_pass_to_backend, p, NULL, NULL, &err));
    ck_assert_str_eq(err.msg, "placeholder node for non-params, non-buffer, and non-tensor constants should not be tagged: x ");
    ls_program_unref(p);
}
END_TEST

/* Test 8: b_my_state mutated; add(x, state){tag0}; add(state, 1){tag0} is the mutation;
 * the buffer is not tagged (tag_constant_data skips mutated buffers). */
START_TEST(test8_not_delegate_mutable_buffers)
{
    int64_t one = 1;
    ls_builder *b = ls_builder_new("model", LS_DIALECT_EDGE);
    uint32_t st = pt_input(b, "b_my_state", LS_IN_BUFFER, "my_state", true, LS_DT_F32, 1, &one);
    uint32_t x = pt_input(b, "x", LS_IN_USER_INPUT, NULL, false, LS_DT_F32, 1, &one);
    uint32_t a = pt_bin(b, LS_OP_add_Tensor, x, st);
    uint32_t m = pt_scalar(b, LS_OP_add_Scalar, st, 1);
    uint32_t o[2] = {m, a};
    ls_output_kind k[2] = {LS_OUT_BUFFER_MUTATION, LS_OUT_USER_OUTPUT};
    const char *t[2] = {"my_state", NULL};
    ls_build_output(b, o, 2, k, t);
    ls_program *p = ls_builder_finish(b);
    pt_tag(p, "aten_add_tensor", "tag0");
    pt_tag(p, "aten_add_scalar", "tag0");
    ck_assert_str_eq(p->outputs[0].name, "aten_add_scalar");
    pt_step(&p, ls_pass_to_backend, NULL);
    ck_assert_uint_eq(p->n_outputs, 2);
    ck_assert_int_eq(p->outputs[0].kind, LS_OUT_BUFFER_MUTATION);
    ck_assert_str_eq(p->outputs[0].name, "getitem_1"); /* delegate output 1 */
    ck_assert_str_eq(p->outputs[0].target, "my_state");
    ck_assert_ptr_nonnull(pt_node(p, "b_my_state"));
    const ls_program *d = pt_sub(p, "lowered_module_0");
    ck_assert_uint_eq(pt_count_outputs(d, LS_OUT_USER_OUTPUT), 2);
    ck_assert_uint_eq(d->n_state, 0);
    ls_program_unref(p);
}
END_TEST

/* Test 9: b_b tagged; add(b, x){tag0} mutates b, add(x, ·){tag0} is the user output. */
START_TEST(test9_buffer_mutation1)
{
    int64_t s33[2] = {3, 3};
    ls_builder *b = ls_builder_new("model", LS_DIALECT_EDGE);
    uint32_t bb = pt_input(b, "b_b", LS_IN_BUFFER, "b", true, LS_DT_F32, 2, s33);
    uint32_t x = pt_input(b, "x", LS_IN_USER_INPUT, NULL, false, LS_DT_F32, 2, s33);
    uint32_t m = pt_bin(b, LS_OP_add_Tensor, bb, x);
    uint32_t y = pt_bin(b, LS_OP_add_Tensor, x, m);
    uint32_t o[2] = {m, y};
    ls_output_kind k[2] = {LS_OUT_BUFFER_MUTATION, LS_OUT_USER_OUTPUT};
    const char *t[2] = {"b", NULL};
    ls_build_output(b, o, 2, k, t);
    ls_program *p = ls_builder_finish(b);
    pt_tag(p, "b_b", "tag0");
    pt_tag(p, "aten_add_tensor", "tag0");
    pt_tag(p, "aten_add_tensor_1", "tag0");
    ls_report rep = {0};
    ls_program *q = pt_run(ls_pass_to_backend, p, NULL, &rep, NULL);
    ck_assert_ptr_nonnull(q);
    ck_assert_uint_eq(pt_count_outputs(q, LS_OUT_BUFFER_MUTATION), 0);
    ck_assert_uint_eq(q->n_subs, 1);
    ck_assert_uint_eq(pt_delegate_call(q, 0)->nargs, 2);
    ck_assert_uint_eq(q->n_state, 0);
    const ls_program *d = pt_sub(q, "lowered_module_0");
    ck_assert_uint_eq(d->n_state, 1);
    ck_assert_uint_eq(pt_count_outputs(d, LS_OUT_BUFFER_MUTATION), 1);
    ck_assert_uint_eq(pt_count_inputs(d, LS_IN_BUFFER), 1);
    ck_assert_int_eq(d->outputs[0].kind, LS_OUT_BUFFER_MUTATION); /* mutations first */
    ck_assert(pt_report_has(&rep, "buffer `b` becomes state of `tag0`"));
    ls_report_free(&rep);
    ls_program_unref(q);
    ls_program_unref(p);
}
END_TEST

/* Test 10 (and the Core ML issue's model): b_cache [2, 3]; q, k_val, input_pos;
 * permute(q); index_put(cache, [input_pos], k_val) mutates cache; mm(index_put, qᵀ). */
static ls_program *llama_repro(void)
{
    int64_t s23[2] = {2, 3}, s13[2] = {1, 3}, s2 = 2;
    ls_builder *b = ls_builder_new("model", LS_DIALECT_EDGE);
    uint32_t cache = pt_input(b, "b_cache", LS_IN_BUFFER, "cache", true, LS_DT_F32, 2, s23);
    uint32_t q = pt_input(b, "q", LS_IN_USER_INPUT, NULL, false, LS_DT_F32, 2, s13);
    uint32_t k = pt_input(b, "k_val", LS_IN_USER_INPUT, NULL, false, LS_DT_F32, 2, s13);
    uint32_t pos = pt_input(b, "input_pos", LS_IN_USER_INPUT, NULL, false, LS_DT_I64, 1, &s2);
    int64_t perm[2] = {1, 0}, s31[2] = {3, 1}, s21[2] = {2, 1};
    ls_arg *a = calloc(2, sizeof *a);
    a[0] = ls_arg_node(q);
    a[1] = ls_arg_ints(perm, 2);
    ls_tmeta qt_m = ls_meta(LS_DT_F32, 2, s31);
    uint32_t qt = ls_build_call(b, NULL, LS_OP_permute_copy, a, 2, &qt_m);
    a = calloc(3, sizeof *a);
    a[0] = ls_arg_node(cache);
    uint32_t ix[2] = {pos, 0};
    a[1] = ls_arg_opt_nodes(ix, 2);
    a[2] = ls_arg_node(k);
    uint32_t put = ls_build_call(b, NULL, LS_OP_index_put, a, 3, NULL);
    a = calloc(2, sizeof *a);
    a[0] = ls_arg_node(put);
    a[1] = ls_arg_node(qt);
    ls_tmeta mm_m = ls_meta(LS_DT_F32, 2, s21);
    uint32_t mm = ls_build_call(b, NULL, LS_OP_mm, a, 2, &mm_m);
    uint32_t o[2] = {put, mm};
    ls_output_kind kinds[2] = {LS_OUT_BUFFER_MUTATION, LS_OUT_USER_OUTPUT};
    const char *t[2] = {"cache", NULL};
    ls_build_output(b, o, 2, kinds, t);
    return ls_builder_finish(b);
}

START_TEST(test10_buffer_mutation_llama_repro)
{
    ls_program *p = llama_repro();
    const char *all[] = {"b_cache", "aten_permute_copy_default", "aten_index_put_default", "aten_mm_default"};
    for (int i = 0; i < 4; i++) pt_tag(p, all[i], "tag0");
    pt_step(&p, ls_pass_to_backend, NULL);
    ck_assert_uint_eq(pt_count_outputs(p, LS_OUT_BUFFER_MUTATION), 0);
    ck_assert_uint_eq(p->n_subs, 1);
    const ls_node *call = pt_delegate_call(p, 0);
    ck_assert_uint_eq(call->nargs, 4); /* lowered_module, q, input_pos, k_val */
    const ls_program *d = pt_sub(p, "lowered_module_0");
    ck_assert_uint_eq(d->n_state, 1);
    ck_assert_uint_eq(pt_count_outputs(d, LS_OUT_BUFFER_MUTATION), 1);
    ck_assert_uint_eq(pt_count_inputs(d, LS_IN_BUFFER), 1);
    char *ops = pt_call_ops(p);
    ck_assert_str_eq(ops, "executorch_call_delegate,getitem"); /* test 12's expectation */
    free(ops);
    ls_program_unref(p);
}
END_TEST

/* Test 11, the Core ML issue's model: add(b_state_1, x){tag0} is both the buffer's mutation and
 * the user output — one getitem would carry two outer specs. */
START_TEST(test11_buffer_mutation_unsupported)
{
    int64_t s23[2] = {2, 3};
    ls_builder *b = ls_builder_new("model", LS_DIALECT_EDGE);
    uint32_t st = pt_input(b, "b_state_1", LS_IN_BUFFER, "state_1", true, LS_DT_F32, 2, s23);
    uint32_t x = pt_input(b, "x", LS_IN_USER_INPUT, NULL, false, LS_DT_F32, 2, s23);
    uint32_t a = pt_bin(b, LS_OP_add_Tensor, st, x);
    uint32_t o[2] = {a, a};
    ls_output_kind k[2] = {LS_OUT_BUFFER_MUTATION, LS_OUT_USER_OUTPUT};
    const char *t[2] = {"state_1", NULL};
    ls_build_output(b, o, 2, k, t);
    ls_program *p = ls_builder_finish(b);
    pt_tag(p, "b_state_1", "tag0");
    pt_tag(p, "aten_add_tensor", "tag0");
    ls_error err;
    ck_assert_ptr_null(pt_run(ls_pass_to_backend, p, NULL, NULL, &err));
    ck_assert_msg(strncmp(err.msg, "Constant state_1 was tagged to be consumed by the buffer, and was found to also contain a "
                                   "buffer mutation. However this buffer mutation node was found to also be used as other "
                                   "types of outputs which is currently not supported. Please file an issue on Github.",
                          200) == 0,
                  "%s", err.msg);
    ls_program_unref(p);
}
END_TEST

/* Test 17: delegate outputs [add (user), mul (mutation of buf), sub (user)] → mutations first;
 * the consumed mutation leaves the top level, the getitems of add and sub are 0 and 1. */
START_TEST(test17_arrange_graph_outputs)
{
    int64_t three = 3;
    ls_builder *b = ls_builder_new("model", LS_DIALECT_EDGE);
    uint32_t buf = pt_input(b, "b_buf", LS_IN_BUFFER, "buf", true, LS_DT_F32, 1, &three);
    uint32_t x = pt_input(b, "x", LS_IN_USER_INPUT, NULL, false, LS_DT_F32, 1, &three);
    uint32_t add = pt_bin(b, LS_OP_add_Tensor, x, buf);
    uint32_t mul = pt_bin(b, LS_OP_mul_Tensor, buf, x);
    uint32_t sub = pt_bin(b, LS_OP_sub_Tensor, x, buf);
    uint32_t o[3] = {mul, add, sub};
    ls_output_kind k[3] = {LS_OUT_BUFFER_MUTATION, LS_OUT_USER_OUTPUT, LS_OUT_USER_OUTPUT};
    const char *t[3] = {"buf", NULL, NULL};
    ls_build_output(b, o, 3, k, t);
    ls_program *p = ls_builder_finish(b);
    const char *all[] = {"b_buf", "aten_add_tensor", "aten_mul_tensor", "aten_sub_tensor"};
    for (int i = 0; i < 4; i++) pt_tag(p, all[i], "tag0");
    pt_step(&p, ls_pass_to_backend, NULL);
    const ls_program *d = pt_sub(p, "lowered_module_0");
    ck_assert_uint_eq(d->n_outputs, 3);
    ck_assert_str_eq(d->outputs[0].name, "aten_mul_tensor");
    ck_assert_int_eq(d->outputs[0].kind, LS_OUT_BUFFER_MUTATION);
    ck_assert_str_eq(d->outputs[1].name, "aten_add_tensor");
    ck_assert_str_eq(d->outputs[2].name, "aten_sub_tensor");
    ck_assert_uint_eq(p->n_outputs, 2);
    const ls_node *g0 = pt_must(p, p->outputs[0].name), *g1 = pt_must(p, p->outputs[1].name);
    ck_assert_int_eq(g0->args[1].v.i, 0);
    ck_assert_int_eq(g1->args[1].v.i, 1);
    ck_assert_uint_eq(pt_delegate_call(p, 0)->nvals, 2); /* the call returns the user outputs only */
    ls_program_unref(p);
}
END_TEST

/* A partition that is not convex: tag0 = {a, c} with b (CPU) between them. */
START_TEST(test_invalid_partition_cycle)
{
    int64_t two = 2;
    ls_builder *b = ls_builder_new("model", LS_DIALECT_EDGE);
    uint32_t x = pt_input(b, "x", LS_IN_USER_INPUT, NULL, false, LS_DT_F32, 1, &two);
    uint32_t a = pt_unary(b, LS_OP_relu, x);
    uint32_t s = pt_unary(b, LS_OP_sin, a);
    uint32_t c = pt_bin(b, LS_OP_add_Tensor, s, a);
    ls_build_output(b, &c, 1, NULL, NULL);
    ls_program *p = ls_builder_finish(b);
    pt_tag(p, "aten_relu_default", "tag0");
    pt_tag(p, "aten_add_tensor", "tag0");
    ls_error err;
    ck_assert_ptr_null(pt_run(ls_pass_to_backend, p, NULL, NULL, &err));
    ck_assert_msg(strncmp(err.msg, "Invalid partition, found dependency cycles", 42) == 0, "%s", err.msg);
    ls_program_unref(p);
}
END_TEST

/* Two tags: nodes are shared by reference with the step before, ids are kept, the delegate
 * calls come where their partitions ended, and a value flowing between them goes through a
 * getitem. */
START_TEST(test_two_tags_share_nodes)
{
    int64_t two = 2;
    ls_builder *b = ls_builder_new("model", LS_DIALECT_EDGE);
    uint32_t x = pt_input(b, "x", LS_IN_USER_INPUT, NULL, false, LS_DT_F32, 1, &two);
    uint32_t a = pt_unary(b, LS_OP_relu, x);
    uint32_t s = pt_unary(b, LS_OP_sin, a);
    uint32_t c = pt_bin(b, LS_OP_add_Tensor, s, a);
    ls_build_output(b, &c, 1, NULL, NULL);
    ls_program *p = ls_builder_finish(b);
    pt_tag(p, "aten_relu_default", "tag1");
    pt_tag(p, "aten_add_tensor", "tag0");
    const ls_node *relu = pt_must(p, "aten_relu_default");
    ls_program *q = pt_run(ls_pass_to_backend, p, NULL, NULL, NULL);
    ck_assert_ptr_nonnull(q);
    ck_assert_uint_eq(q->n_subs, 2);
    /* tag1 is lowered second (partition_tags order: tag1 was registered first here) */
    const ls_program *d0 = pt_sub(q, "lowered_module_0");
    ck_assert_ptr_eq(pt_must(d0, "aten_relu_default"), relu); /* the same node, shared */
    char *ops = pt_call_ops(q);
    ck_assert_str_eq(ops, "executorch_call_delegate,getitem,sin,executorch_call_delegate,getitem");
    free(ops);
    const ls_program *d1 = pt_sub(q, "lowered_module_1");
    ck_assert_uint_eq(d1->n_inputs, 2); /* sin's value and the first delegate's getitem */
    ck_assert_str_eq(d1->inputs[1].name, "getitem");
    ls_program_unref(q);
    ls_program_unref(p);
}
END_TEST

/* D9: a delegate program with two placeholders naming one target (what ExecuTorch's per-user
 * copies made) is refused by the bundled backend's builder guard at preprocess; the verifier
 * reports it for the top level. duplicate_constants never makes one (see its tests). */
START_TEST(d9_target_listed_twice_refused)
{
    int64_t four = 4;
    ls_builder *b = ls_builder_new("model", LS_DIALECT_EDGE);
    uint32_t c = pt_input(b, "c_k", LS_IN_CONSTANT_TENSOR, "k", true, LS_DT_F32, 1, &four);
    uint32_t c2 = pt_input(b, "c_k_copy_0", LS_IN_CONSTANT_TENSOR, "k", true, LS_DT_F32, 1, &four);
    uint32_t x = pt_input(b, "x", LS_IN_USER_INPUT, NULL, false, LS_DT_F32, 1, &four);
    uint32_t o = pt_bin(b, LS_OP_mul_Tensor, pt_bin(b, LS_OP_add_Tensor, x, c), c2);
    ls_build_output(b, &o, 1, NULL, NULL);
    ls_program *p = ls_builder_finish(b);
    const char *all[] = {"c_k", "c_k_copy_0", "aten_add_tensor", "aten_mul_tensor"};
    for (int i = 0; i < 4; i++) pt_tag(p, all[i], "tag0");
    ls_error err;
    ck_assert_ptr_null(pt_run(ls_pass_to_backend, p, NULL, NULL, &err));
    ck_assert_msg(strstr(err.msg, "already has a slot"), "%s", err.msg);
    ls_verify_result vr;
    ls_verify(p, &vr);
    ck_assert_uint_ge(vr.n_errors, 1);
    bool named = false;
    for (uint32_t i = 0; i < vr.n; i++) named |= strstr(vr.v[i].msg, "`k` is not a buffer") != NULL;
    ck_assert(named);
    ls_verify_result_free(&vr);
    ls_program_unref(p);
}
END_TEST

/* Tags read from a file (custom metadata) name no backend: the round's backend lowers them. */
START_TEST(tags_from_a_file)
{
    ls_gen_opts o = ls_gen_defaults(300);
    o.partitions = 4;
    o.edge = true;
    o.with_data = true;
    ls_error err;
    ls_program *p = ls_gen_program(&o, &err);
    ck_assert_msg(p != NULL, "%s", err.msg);
    ck_assert_uint_eq(p->n_tags, 4);
    ck_assert_ptr_null(p->tags[0].backend_id);
    pt_step(&p, ls_pass_to_backend, ls_profile_bundled());
    ck_assert_uint_eq(p->n_subs, 4);
    for (uint32_t s = 0; s < p->n_subs; s++) ck_assert_str_eq(p->subs[s].backend_id, "BundledBackend");
    ls_verify_result vr;
    ls_verify(p, &vr);
    ck_assert_msg(vr.n_errors == 0, "%s", vr.n ? vr.v[0].msg : "");
    ls_verify_result_free(&vr);
    ls_program_unref(p);
}
END_TEST

Suite *pass_to_backend_suite(void)
{
    Suite *s = suite_create("pass_to_backend");
    TCase *tc = tcase_create("exir");
    tcase_add_test(tc, test1_partitioner_not_tag_data);
    tcase_add_test(tc, test2_partitioner_tag_data);
    tcase_add_test(tc, test3_partitioner_tag_only_params);
    tcase_add_test(tc, test4_partitioner_splits_constant_data);
    tcase_add_test(tc, test5_partitioner_alert_split_constant_data);
    tcase_add_test(tc, test6_bad_partitioner_tagged_output);
    tcase_add_test(tc, test7_bad_partitioner_tagged_model_input);
    tcase_add_test(tc, test8_not_delegate_mutable_buffers);
    tcase_add_test(tc, test9_buffer_mutation1);
    tcase_add_test(tc, test10_buffer_mutation_llama_repro);
    tcase_add_test(tc, test11_buffer_mutation_unsupported);
    tcase_add_test(tc, test17_arrange_graph_outputs);
    tcase_add_test(tc, test_invalid_partition_cycle);
    tcase_add_test(tc, test_two_tags_share_nodes);
    tcase_add_test(tc, d9_target_listed_twice_refused);
    tcase_add_test(tc, tags_from_a_file);
    suite_add_tcase(s, tc);
    return s;
}
