/* Where to_out_variant puts the write-back of a mutated buffer: as exir's
 * insert_write_back_for_buffers_pass does now (exir/passes/insert_write_back_for_buffers_pass.py,
 * _insert_copy and _insertion_point), each case worked by hand from that code, and what it does
 * to memory_plan (exir/memory_planning.py greedy). */
#include <check.h>
#include <stdlib.h>
#include <string.h>

#include "export.h"
#include "passes.h"
#include "progfixtures.h"
#include "testutil.h"

static const int64_t s4[] = {4};

static const ls_program *step(const ls_history *h, const char *pass)
{
    for (uint32_t i = h->n; i-- > 0;)
        if (!strcmp(h->steps[i].pass, pass)) return h->steps[i].program;
    ck_abort_msg("no %s step", pass);
    return NULL;
}

static int32_t at(const ls_program *p, const char *name)
{
    int32_t pos = ls_program_find(p, name);
    ck_assert_msg(pos >= 0, "no node %s", name);
    return pos;
}

static uint64_t offset_of(const ls_history *h, const char *name)
{
    const ls_program *p = step(h, "memory_plan");
    const ls_mem_plan *m = ls_program_mem_plan(p);
    uint32_t slot = ls_mem_plan_slot(m, p->nodes[at(p, name)]->id, 0);
    ck_assert_msg(slot > 0, "%s is not planned", name);
    return m->slots[slot - 1].offset;
}

static uint32_t call(ls_builder *b, const char *name, ls_op_id op, uint32_t x, uint32_t y)
{
    ls_arg a[] = {ls_arg_node(x), ls_arg_node(y), ls_arg_int(1)};
    return pf_call(b, name, op, a, op == LS_OP_add_Tensor || op == LS_OP_sub_Tensor ? 3 : 2, LS_DT_F32, 1, s4);
}

/* b (buffer, [4] f32), x; add = b + x is b's new value; mul = x * x; mul_1 = mul * mul, the user
 * output. _insertion_point: the latest of the value (add), the last placeholder (x), the readers
 * of b (add): the copy_ goes right after add, not before the output. Then, after ToOutVarPass:
 * b 0, x 1, alloc 2, add 3, copy_ 4, alloc_1 5, mul 6, alloc_2 7, mul_1 8, output 9; lifetimes
 * b [0,9] (a mutable buffer), x [0,6], add's [2,4] (its last reader is the copy_), mul's [5,8],
 * mul_1's [7,9]; all 16 bytes, so greedy takes them later-found first: mul_1 object 0, mul
 * object 1 (overlaps), add object 0 at 0 (free there), x object 2 (overlaps add and mul), b
 * object 3: mul_1 0, add 0, mul 16, x 32, b 48. (Before the output, add would live to 8 and take
 * object 2, x object 0.) */
START_TEST(copy_right_after_the_value)
{
    ls_builder *b = ls_builder_new("wb", LS_DIALECT_EDGE);
    uint32_t buf = pf_input(b, "b_state", LS_IN_BUFFER, "state", pf_f32(1, s4, NULL));
    uint32_t x = pf_user_input(b, "x", LS_DT_F32, 1, s4);
    uint32_t add = call(b, "add", LS_OP_add_Tensor, buf, x);
    uint32_t mul = call(b, "mul", LS_OP_mul_Tensor, x, x);
    uint32_t mul1 = call(b, "mul_1", LS_OP_mul_Tensor, mul, mul);
    const uint32_t ids[] = {add, mul1};
    const ls_output_kind kinds[] = {LS_OUT_BUFFER_MUTATION, LS_OUT_USER_OUTPUT};
    const char *const targets[] = {"state", NULL};
    ls_build_output(b, ids, 2, kinds, targets);
    ls_program *p = ls_builder_finish(b);
    ls_history h;
    pf_lower(p, "to_out_variant,memory_plan", &h);
    const ls_program *q = step(&h, "to_out_variant");
    int32_t cp = at(q, "aten_copy__default");
    ck_assert_int_eq(cp, at(q, "add") + 1);
    const ls_node *o = q->nodes[q->n_nodes - 1];
    ck_assert(o->args[0].kind == LS_ARG_NODE && o->args[0].v.node == q->nodes[cp]->id);
    ck_assert_str_eq(q->outputs[0].name, "aten_copy__default");
    ck_assert_uint_eq(offset_of(&h, "mul_1"), 0);
    ck_assert_uint_eq(offset_of(&h, "add"), 0);
    ck_assert_uint_eq(offset_of(&h, "mul"), 16);
    ck_assert_uint_eq(offset_of(&h, "x"), 32);
    ck_assert_uint_eq(offset_of(&h, "b_state"), 48);
    ck_assert_uint_eq(ls_program_mem_plan(step(&h, "memory_plan"))->arena, 64);
    ls_history_free(&h);
    ls_program_unref(p);
}
END_TEST

/* b1, b2 buffers, x; add = b1 + x (b1's new value), mul = b2 * x (b2's), sub = b1 - b2 the user
 * output. Each copy_ must follow every reader of its buffer: both follow sub. Inserted one after
 * the other right after sub (fx inserting_after), the second comes first: sub, the copy_ of b2,
 * the copy_ of b1, output. */
START_TEST(copies_after_the_same_node_come_last_first)
{
    ls_builder *b = ls_builder_new("wb", LS_DIALECT_EDGE);
    uint32_t b1 = pf_input(b, "b_one", LS_IN_BUFFER, "one", pf_f32(1, s4, NULL));
    uint32_t b2 = pf_input(b, "b_two", LS_IN_BUFFER, "two", pf_f32(1, s4, NULL));
    uint32_t x = pf_user_input(b, "x", LS_DT_F32, 1, s4);
    uint32_t add = call(b, "add", LS_OP_add_Tensor, b1, x);
    uint32_t mul = call(b, "mul", LS_OP_mul_Tensor, b2, x);
    uint32_t sub = call(b, "sub", LS_OP_sub_Tensor, b1, b2);
    const uint32_t ids[] = {add, mul, sub};
    const ls_output_kind kinds[] = {LS_OUT_BUFFER_MUTATION, LS_OUT_BUFFER_MUTATION, LS_OUT_USER_OUTPUT};
    const char *const targets[] = {"one", "two", NULL};
    ls_build_output(b, ids, 3, kinds, targets);
    ls_program *p = ls_builder_finish(b);
    ls_history h;
    pf_lower(p, "to_out_variant", &h);
    const ls_program *q = step(&h, "to_out_variant");
    int32_t s = at(q, "sub");
    const ls_node *c_two = q->nodes[s + 1], *c_one = q->nodes[s + 2];
    ck_assert(c_one->op && c_one->op->id == LS_OP_copy_ && c_two->op && c_two->op->id == LS_OP_copy_);
    ck_assert_uint_eq(c_one->args[0].v.node, b1);
    ck_assert_uint_eq(c_two->args[0].v.node, b2);
    ck_assert_int_eq(q->nodes[s + 3]->kind, LS_NODE_OUTPUT);
    ls_history_free(&h);
    ls_program_unref(p);
}
END_TEST

/* b2's new value is a view of b1 (view_copy aliases its base): the value of one write-back may
 * alias the buffer of another, so exir's independence check sends both copies before the
 * output, in output order. The output then reads the copies, not v: v becomes a memory.view
 * (ReplaceViewCopyWithViewPass keeps only a view_copy the output reads). */
START_TEST(copies_that_may_alias_go_before_the_output)
{
    ls_builder *b = ls_builder_new("wb", LS_DIALECT_EDGE);
    uint32_t b1 = pf_input(b, "b_one", LS_IN_BUFFER, "one", pf_f32(1, s4, NULL));
    uint32_t b2 = pf_input(b, "b_two", LS_IN_BUFFER, "two", pf_f32(1, s4, NULL));
    uint32_t x = pf_user_input(b, "x", LS_DT_F32, 1, s4);
    uint32_t add = call(b, "add", LS_OP_add_Tensor, b1, x);
    ls_arg va[] = {ls_arg_node(b1), ls_arg_ints(s4, 1)};
    uint32_t v = pf_call(b, "v", LS_OP_view_copy, va, 2, LS_DT_F32, 1, s4);
    uint32_t mul = call(b, "mul", LS_OP_mul_Tensor, x, x);
    const uint32_t ids[] = {add, v, mul};
    const ls_output_kind kinds[] = {LS_OUT_BUFFER_MUTATION, LS_OUT_BUFFER_MUTATION, LS_OUT_USER_OUTPUT};
    const char *const targets[] = {"one", "two", NULL};
    ls_build_output(b, ids, 3, kinds, targets);
    ls_program *p = ls_builder_finish(b);
    ls_history h;
    pf_lower(p, "to_out_variant", &h);
    const ls_program *q = step(&h, "to_out_variant");
    uint32_t n = q->n_nodes;
    ck_assert_int_eq(q->nodes[n - 1]->kind, LS_NODE_OUTPUT);
    ck_assert_uint_eq(q->nodes[n - 3]->args[0].v.node, b1);
    ck_assert_uint_eq(q->nodes[n - 2]->args[0].v.node, b2);
    ck_assert_int_eq(q->nodes[at(q, "v")]->op->id, LS_OP_memory_view);
    ls_history_free(&h);
    ls_program_unref(p);
}
END_TEST

/* The mutation is done in place on the buffer (index_put_): its output is the buffer itself
 * through in-place calls, so there is nothing to write back (_inplace_lineage). */
START_TEST(no_copy_for_an_in_place_lineage)
{
    ls_program *p = pf_kv_program(false, true);
    ls_history h;
    pf_lower(p, "to_out_variant", &h);
    const ls_program *q = step(&h, "to_out_variant");
    for (uint32_t i = 0; i < q->n_nodes; i++)
        ck_assert(!(q->nodes[i]->op && q->nodes[i]->op->id == LS_OP_copy_));
    ls_history_free(&h);
    ls_program_unref(p);
}
END_TEST

Suite *write_back_suite(void)
{
    Suite *s = suite_create("write_back");
    TCase *tc = tcase_create("write_back");
    tcase_add_test(tc, copy_right_after_the_value);
    tcase_add_test(tc, copies_after_the_same_node_come_last_first);
    tcase_add_test(tc, copies_that_may_alias_go_before_the_output);
    tcase_add_test(tc, no_copy_for_an_in_place_lineage);
    suite_add_tcase(s, tc);
    return s;
}
