/* duplicate_constants (PR #24481's grouping, exir-semantics §5.4, §9 tests 14-16 and D1-D5):
 * which group keeps the original, how many copies, no program lists a target twice. */
#include <check.h>
#include <stdlib.h>
#include <string.h>

#include "passtest.h"

static const int64_t FOUR = 4;

/* C (a lifted constant) read by u1, u2, u3 (muls with x), graph order u1, u2, u3, with tags. */
static ls_program *three_readers(const char *t1, const char *t2, const char *t3, const char *ctag)
{
    ls_builder *b = ls_builder_new("model", LS_DIALECT_EDGE);
    uint32_t c = pt_input(b, "_prop_tensor_constant0", LS_IN_CONSTANT_TENSOR, "_prop_tensor_constant0", true, LS_DT_F32, 1, &FOUR);
    uint32_t x = pt_input(b, "x", LS_IN_USER_INPUT, NULL, false, LS_DT_F32, 1, &FOUR);
    uint32_t o[3];
    for (int i = 0; i < 3; i++) o[i] = pt_bin(b, LS_OP_mul_Tensor, x, c);
    ls_build_output(b, o, 3, NULL, NULL);
    ls_program *p = ls_builder_finish(b);
    const char *tags[3] = {t1, t2, t3};
    const char *names[3] = {"aten_mul_tensor", "aten_mul_tensor_1", "aten_mul_tensor_2"};
    for (int i = 0; i < 3; i++)
        if (tags[i]) pt_tag(p, names[i], tags[i]);
    if (ctag) pt_tag(p, "_prop_tensor_constant0", ctag);
    return p;
}

static const char *input_of(const ls_program *p, const char *user, int arg)
{
    return ls_program_node(p, pt_must(p, user)->args[arg].v.node)->name;
}

/* D1: same tag twice + another tag → two groups, one copy; each delegate lists C once. */
START_TEST(d1_same_tag_twice_and_other_tag)
{
    ls_program *p = three_readers("tag0", "tag0", "tag1", "tag0");
    ls_report rep = {0};
    ls_program *q = pt_run(ls_pass_duplicate_constants, p, NULL, &rep, NULL);
    ck_assert_ptr_nonnull(q);
    ck_assert_uint_eq(pt_count_kind(q, LS_NODE_PLACEHOLDER), 3); /* C, C_copy_0, x */
    ck_assert_str_eq(input_of(q, "aten_mul_tensor", 1), "_prop_tensor_constant0");
    ck_assert_str_eq(input_of(q, "aten_mul_tensor_1", 1), "_prop_tensor_constant0");
    ck_assert_str_eq(input_of(q, "aten_mul_tensor_2", 1), "_prop_tensor_constant0_copy_0");
    ck_assert_str_eq(pt_must(q, "_prop_tensor_constant0_copy_0")->tag, "tag1");
    ck_assert_str_eq(pt_must(q, "_prop_tensor_constant0")->tag, "tag0");
    /* the copy comes right before the original, with a target of its own */
    ck_assert_str_eq(q->inputs[0].name, "_prop_tensor_constant0_copy_0");
    ck_assert_str_eq(q->inputs[0].target, "_prop_tensor_constant0_copy_0");
    ck_assert_int_eq(q->inputs[0].kind, LS_IN_CONSTANT_TENSOR);
    ck_assert_ptr_nonnull(ls_program_constant(q, "_prop_tensor_constant0_copy_0"));
    ck_assert_ptr_eq(ls_program_constant(q, "_prop_tensor_constant0_copy_0")->t, ls_program_constant(q, "_prop_tensor_constant0")->t);
    ck_assert(!pt_target_twice(q));
    ck_assert(pt_report_has(&rep, "`tag0` keeps `_prop_tensor_constant0`, `tag1` gets `_prop_tensor_constant0_copy_0`"));
    ls_report_free(&rep);
    pt_step(&q, ls_pass_to_backend, NULL);
    ck_assert_uint_eq(q->n_subs, 2);
    for (uint32_t s = 0; s < 2; s++) {
        const ls_program *d = q->subs[s].program;
        ck_assert_uint_eq(pt_count_inputs(d, LS_IN_CONSTANT_TENSOR), 1);
        ck_assert_uint_eq(d->n_constants, 1);
    }
    ck_assert(!pt_target_twice(q));
    ck_assert_uint_eq(q->n_constants, 0); /* both moved into their delegates */
    ls_program_unref(q);
    ls_program_unref(p);
}
END_TEST

/* D2: u1{tag0}, u2 and u3 untagged → one copy shared by u2 and u3 at the top level. */
START_TEST(d2_untagged_users_share_one_copy)
{
    ls_program *p = three_readers("tag0", NULL, NULL, "tag0");
    pt_step(&p, ls_pass_duplicate_constants, NULL);
    ck_assert_str_eq(input_of(p, "aten_mul_tensor", 1), "_prop_tensor_constant0");
    ck_assert_str_eq(input_of(p, "aten_mul_tensor_1", 1), "_prop_tensor_constant0_copy_0");
    ck_assert_str_eq(input_of(p, "aten_mul_tensor_2", 1), "_prop_tensor_constant0_copy_0");
    ck_assert_ptr_null(pt_node(p, "_prop_tensor_constant0_copy_1"));
    ck_assert_ptr_null(pt_must(p, "_prop_tensor_constant0_copy_0")->tag);
    pt_step(&p, ls_pass_to_backend, NULL);
    ck_assert_uint_eq(pt_count_inputs(pt_sub(p, "lowered_module_0"), LS_IN_CONSTANT_TENSOR), 1);
    ck_assert_uint_eq(pt_count_inputs(p, LS_IN_CONSTANT_TENSOR), 1); /* the copy, for the CPU */
    ck_assert(!pt_target_twice(p));
    ls_program_unref(p);
}
END_TEST

/* D3 (and test 14's outcome): the first reader is on the CPU → the CPU keeps C, tag0 gets C_copy_0. */
START_TEST(d3_first_group_untagged_keeps_original)
{
    ls_program *p = three_readers(NULL, "tag0", "tag0", "tag0");
    ls_report rep = {0};
    ls_program *q = pt_run(ls_pass_duplicate_constants, p, NULL, &rep, NULL);
    ck_assert_str_eq(input_of(q, "aten_mul_tensor", 1), "_prop_tensor_constant0");
    ck_assert_str_eq(input_of(q, "aten_mul_tensor_1", 1), "_prop_tensor_constant0_copy_0");
    ck_assert_ptr_null(pt_must(q, "_prop_tensor_constant0")->tag); /* re-tagged with its group */
    ck_assert_str_eq(pt_must(q, "_prop_tensor_constant0_copy_0")->tag, "tag0");
    ck_assert(pt_report_has(&rep, "`_prop_tensor_constant0` is read by `tag0` (mul ×2) and by "
                                  "the CPU (mul): the CPU keeps `_prop_tensor_constant0`, `tag0` gets "
                                  "`_prop_tensor_constant0_copy_0`"));
    ls_report_free(&rep);
    ls_program_unref(q);
    ls_program_unref(p);
}
END_TEST

/* D4: no tags at all → no copies, the program is unchanged (it shares every node). */
START_TEST(d4_untagged_graph_no_copies)
{
    ls_program *p = three_readers(NULL, NULL, NULL, NULL);
    ls_program *q = pt_run(ls_pass_duplicate_constants, p, NULL, NULL, NULL);
    ck_assert_uint_eq(q->n_nodes, p->n_nodes);
    for (uint32_t i = 0; i < q->n_nodes; i++) ck_assert_ptr_eq(q->nodes[i], p->nodes[i]);
    ls_program_unref(q);
    ls_program_unref(p);
}
END_TEST

/* D5: one tag only → a single group, no copy; C moves into tag0. */
START_TEST(d5_one_tag_no_copies)
{
    ls_program *p = three_readers("tag0", "tag0", "tag0", "tag0");
    pt_step(&p, ls_pass_duplicate_constants, NULL);
    ck_assert_ptr_null(pt_node(p, "_prop_tensor_constant0_copy_0"));
    pt_step(&p, ls_pass_to_backend, NULL);
    ck_assert_uint_eq(pt_sub(p, "lowered_module_0")->n_constants, 1);
    ck_assert_uint_eq(p->n_constants, 0);
    ls_program_unref(p);
}
END_TEST

/* Test 15: b_const (persistent buffer) read by add{tag0} and sub{tag1} → b_const_copy_0 for sub. */
START_TEST(test15_duplicate_constant_node_pass)
{
    int64_t s22[2] = {2, 2};
    ls_builder *b = ls_builder_new("model", LS_DIALECT_EDGE);
    uint32_t c = pt_input(b, "b_const", LS_IN_BUFFER, "const", true, LS_DT_F32, 2, s22);
    uint32_t x = pt_input(b, "x", LS_IN_USER_INPUT, NULL, false, LS_DT_F32, 2, s22);
    uint32_t o[2] = {pt_bin(b, LS_OP_add_Tensor, x, c), pt_bin(b, LS_OP_sub_Tensor, x, c)};
    ls_build_output(b, o, 2, NULL, NULL);
    ls_program *p = ls_builder_finish(b);
    pt_tag(p, "aten_add_tensor", "tag0");
    pt_tag(p, "aten_sub_tensor", "tag1");
    pt_tag(p, "b_const", "tag0");
    pt_step(&p, ls_pass_duplicate_constants, NULL);
    ck_assert_str_eq(input_of(p, "aten_sub_tensor", 1), "b_const_copy_0");
    ck_assert_str_eq(input_of(p, "aten_add_tensor", 1), "b_const");
    int32_t s = ls_program_input_spec(p, "b_const_copy_0");
    ck_assert_int_ge(s, 0);
    ck_assert_int_eq(p->inputs[s].kind, LS_IN_BUFFER);
    ck_assert(p->inputs[s].persistent);
    ck_assert_ptr_nonnull(ls_program_state(p, p->inputs[s].target)); /* persistent buffers live in the state dict */
    ls_program_unref(p);
}
END_TEST

/* Test 16: the copy replaces the keyword argument `other` of its reader. */
START_TEST(test16_kwargs_users)
{
    int64_t three = 3;
    ls_builder *b = ls_builder_new("model", LS_DIALECT_EDGE);
    uint32_t c = pt_input(b, "b_const_buffer", LS_IN_BUFFER, "const_buffer", true, LS_DT_F32, 1, &three);
    uint32_t x = pt_input(b, "x", LS_IN_USER_INPUT, NULL, false, LS_DT_F32, 1, &three);
    uint32_t o[2] = {pt_bin(b, LS_OP_add_Tensor, x, c), pt_bin(b, LS_OP_mul_Tensor, x, c)};
    ls_build_output(b, o, 2, NULL, NULL);
    ls_program *p = ls_builder_finish(b);
    pt_tag(p, "aten_add_tensor", "tag0");
    pt_tag(p, "b_const_buffer", "tag0");
    ls_program_edit(p, (uint32_t)ls_program_find(p, "aten_mul_tensor"))->args[1].flags |= LS_ARGF_KEYWORD;
    pt_step(&p, ls_pass_duplicate_constants, NULL);
    const ls_arg *other = ls_node_arg(pt_must(p, "aten_mul_tensor"), "other");
    ck_assert_ptr_nonnull(other);
    ck_assert(other->flags & LS_ARGF_KEYWORD);
    ck_assert_str_eq(ls_program_node(p, other->v.node)->name, "b_const_buffer_copy_0");
    ls_program_unref(p);
}
END_TEST

/* A constant read twice inside a Tensor[] (cat) and by two tags: nested lists are rewritten too. */
START_TEST(copies_rewrite_lists)
{
    ls_builder *b = ls_builder_new("model", LS_DIALECT_EDGE);
    uint32_t c = pt_input(b, "c", LS_IN_CONSTANT_TENSOR, "c", true, LS_DT_F32, 1, &FOUR);
    uint32_t x = pt_input(b, "x", LS_IN_USER_INPUT, NULL, false, LS_DT_F32, 1, &FOUR);
    uint32_t a = pt_bin(b, LS_OP_add_Tensor, x, c);
    ls_arg *args = calloc(2, sizeof *args);
    uint32_t ids[2] = {c, a};
    args[0] = ls_arg_nodes(ids, 2, false);
    args[1] = ls_arg_int(0);
    int64_t eight = 8;
    ls_tmeta m = ls_meta(LS_DT_F32, 1, &eight);
    uint32_t cat = ls_build_call(b, NULL, LS_OP_cat, args, 2, &m);
    ls_build_output(b, &cat, 1, NULL, NULL);
    ls_program *p = ls_builder_finish(b);
    pt_tag(p, "aten_add_tensor", "tag0");
    pt_tag(p, "c", "tag0");
    pt_step(&p, ls_pass_duplicate_constants, NULL);
    const ls_node *catn = pt_must(p, "aten_cat_default");
    ck_assert_str_eq(ls_program_node(p, catn->args[0].v.nodes[0])->name, "c_copy_0");
    ls_program_unref(p);
}
END_TEST

/* Test 14: two backends one after the other. The second backend takes the three subs (merged
 * horizontally: no cycle between them), the first the six adds; c_const is read by the CPU mul
 * first, so the CPU keeps it and the add delegate consumes c_const_copy_0 only. */
START_TEST(test14_multi_backend_constants)
{
    int64_t one = 1;
    ls_builder *b = ls_builder_new("model", LS_DIALECT_EDGE);
    uint32_t c = pt_input(b, "c_const", LS_IN_CONSTANT_TENSOR, "const", true, LS_DT_F32, 1, &one);
    uint32_t x = pt_input(b, "x", LS_IN_USER_INPUT, NULL, false, LS_DT_F32, 1, &one);
    uint32_t y = pt_input(b, "y", LS_IN_USER_INPUT, NULL, false, LS_DT_F32, 1, &one);
    uint32_t z = pt_input(b, "z", LS_IN_USER_INPUT, NULL, false, LS_DT_F32, 1, &one);
    uint32_t xs = pt_bin(b, LS_OP_sub_Tensor, x, x), ys = pt_bin(b, LS_OP_sub_Tensor, y, y), zs = pt_bin(b, LS_OP_sub_Tensor, z, z);
    uint32_t a = pt_bin(b, LS_OP_mul_Tensor, pt_bin(b, LS_OP_mul_Tensor, pt_bin(b, LS_OP_mul_Tensor, xs, ys), zs), c);
    uint32_t h = pt_bin(b, LS_OP_add_Tensor, a, a);
    h = pt_bin(b, LS_OP_add_Tensor, h, c);
    for (int i = 0; i < 4; i++) h = pt_bin(b, LS_OP_add_Tensor, h, a);
    ls_build_output(b, &h, 1, NULL, NULL);
    ls_program *p = ls_builder_finish(b);

    ls_pipeline_opts o;
    ls_pipeline_opts_init(&o);
    o.backends[o.n_backends++] = pt_profile("{\"name\": \"second\", \"backend_id\": \"SecondBackendWithPreprocessAll\", "
                                            "\"tag_prefix\": \"second_tag\", \"ops\": [\"sub.Tensor\"]}");
    o.backends[o.n_backends++] = pt_profile("{\"name\": \"first\", \"backend_id\": \"FirstBackendWithPreprocessAll\", "
                                            "\"tag_prefix\": \"first_tag\", \"ops\": [\"aten.add.Tensor\"]}");
    ls_error err;
    ck_assert_int_eq(ls_pipeline_opt(&o, "--pipeline", "partition,fold_masks,duplicate_constants,to_backend", &err), 1);
    ls_history h2;
    ck_assert_int_eq(ls_pipeline_run(p, &o, &h2, &err), 0);
    ck_assert_uint_eq(h2.n, 9);
    ck_assert_str_eq(h2.steps[5].pass, "partition");
    ck_assert_str_eq(h2.steps[5].detail, "first");
    for (uint32_t i = 0; i < h2.n; i++) {
        ck_assert_msg(!h2.steps[i].error, "step %u: %s", i, h2.steps[i].error);
        ck_assert_msg(h2.steps[i].verify.n_errors == 0, "step %u: %s", i, h2.steps[i].verify.v[0].msg);
    }
    const ls_program *last = h2.steps[h2.n - 1].program;
    ck_assert_uint_eq(last->n_subs, 2);
    const ls_submodule *s0 = &last->subs[0], *s1 = &last->subs[1];
    ck_assert_str_eq(s0->backend_id, "SecondBackendWithPreprocessAll");
    ck_assert_uint_eq(pt_count_op(s0->program, LS_OP_sub_Tensor), 3);
    ck_assert_str_eq(s1->backend_id, "FirstBackendWithPreprocessAll");
    ck_assert_uint_eq(pt_count_op(s1->program, LS_OP_add_Tensor), 6);
    ck_assert_uint_eq(pt_count_inputs(s1->program, LS_IN_CONSTANT_TENSOR), 1);
    ck_assert_ptr_nonnull(pt_node(s1->program, "c_const_copy_0"));
    ck_assert_ptr_nonnull(pt_node(last, "c_const")); /* the CPU's mul keeps the original */
    ck_assert(!pt_target_twice(last));
    ls_history_free(&h2);
    ls_pipeline_opts_free(&o);
    ls_program_unref(p);
}
END_TEST

Suite *pass_duplicate_constants_suite(void)
{
    Suite *s = suite_create("pass_duplicate_constants");
    TCase *tc = tcase_create("pr24481");
    tcase_add_test(tc, d1_same_tag_twice_and_other_tag);
    tcase_add_test(tc, d2_untagged_users_share_one_copy);
    tcase_add_test(tc, d3_first_group_untagged_keeps_original);
    tcase_add_test(tc, d4_untagged_graph_no_copies);
    tcase_add_test(tc, d5_one_tag_no_copies);
    tcase_add_test(tc, test14_multi_backend_constants);
    tcase_add_test(tc, test15_duplicate_constant_node_pass);
    tcase_add_test(tc, test16_kwargs_users);
    tcase_add_test(tc, copies_rewrite_lists);
    suite_add_tcase(s, tc);
    return s;
}
