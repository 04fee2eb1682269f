/* Tests of emit against exir's emitter (exir/emit/_emitter.py): a default overload written as
 * "" (copy_), mutated buffers planned without data or name unless asked (et_init_buffer,
 * emit_mutable_buffer_names), constants stored once per distinct bytes and without FQN, an
 * out variant with several outputs returning one TensorList of them, lowered modules numbered
 * in graph order. */
#include <check.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "export.h"
#include "passes.h"
#include "progfixtures.h"
#include "pte_check.h"
#include "testutil.h"

static void lower_opts(ls_program *p, const char *pipeline, const char *flag, ls_history *h)
{
    ls_pipeline_opts o;
    ls_pipeline_opts_init(&o);
    ls_error err;
    if (pipeline) ck_assert_msg(ls_pipeline_opt(&o, "--pipeline", pipeline, &err) == 1, "%s", err.msg);
    if (flag) ck_assert_msg(ls_pipeline_opt(&o, flag, NULL, &err) == 1, "%s", err.msg);
    ck_assert_msg(ls_pipeline_run(p, &o, h, &err) == 0, "%s", err.msg);
    for (uint32_t i = 0; i < h->n; i++) ck_assert_msg(!h->steps[i].error, "%s: %s", h->steps[i].pass, h->steps[i].error);
    ls_pipeline_opts_free(&o);
}

static const ls_pte *emitted(const ls_history *h)
{
    ls_emit_summary es;
    const ls_pte *pte = ls_program_emitted(h->steps[h->n - 1].program, &es);
    ck_assert_ptr_nonnull(pte);
    ls_pte_check_report r;
    ck_assert_uint_eq(ls_pte_runtime_check(pte, &r), 0);
    ls_pte_check_report_free(&r);
    return pte;
}

#define CPU "to_edge,constant_prop,to_out_variant,memory_plan,emit"

/* kv_cache on the CPU: the cache is a planned [4,8] float tensor; its write-back copy_ is
 * operator aten::copy_ with overload "". */
static const ls_pte_tensor *cache_value(const ls_pte *pte)
{
    const ls_pte_plan *pl = &pte->execution_plan.v[0];
    for (uint32_t i = 0; i < pl->values.n; i++) {
        const ls_pte_value *v = &pl->values.v[i];
        if (v->kind == LS_PTE_VAL_TENSOR && v->tensor.sizes.n == 2 && v->tensor.sizes.v[0] == 4 &&
            v->tensor.sizes.v[1] == 8 && v->tensor.has_allocation_info)
            return &v->tensor; /* the first: the buffer's own value */
    }
    ck_abort_msg("no cache value");
    return NULL;
}

START_TEST(mutable_buffers_as_exir_writes_them)
{
    ls_program *p = pf_sample("kv_cache");
    ls_history h;
    lower_opts(p, CPU, NULL, &h);
    const ls_pte *pte = emitted(&h);
    const ls_pte_tensor *c = cache_value(pte);
    ck_assert_uint_eq(c->data_buffer_idx, 0); /* no initial state */
    ck_assert(!c->has_extra_tensor_info);    /* no name */
    ck_assert_uint_eq(pte->mutable_data_segments.n, 0);
    bool copy = false;
    const ls_pte_plan *pl = &pte->execution_plan.v[0];
    for (uint32_t i = 0; i < pl->operators.n; i++) {
        ck_assert_str_ne(pl->operators.v[i].overload, "default");
        copy |= !strcmp(pl->operators.v[i].name, "aten::copy_") && !strcmp(pl->operators.v[i].overload, "");
    }
    ck_assert(copy);
    ls_history_free(&h);

    lower_opts(p, CPU, "--init-mutable-buffers", &h);
    pte = emitted(&h);
    c = cache_value(pte);
    ck_assert_uint_eq(c->data_buffer_idx, 1);
    ck_assert(!c->has_extra_tensor_info);
    ck_assert_uint_eq(pte->mutable_data_segments.n, 1);
    /* unpadded: the placeholder and the cache at 0 */
    ck_assert_uint_eq(pte->mutable_data_segments.v[0].offsets.n, 2);
    ck_assert_uint_eq(pte->mutable_data_segments.v[0].offsets.v[1], 0);
    ls_history_free(&h);

    lower_opts(p, CPU, "--mutable-buffer-names", &h);
    c = cache_value(emitted(&h));
    ck_assert(c->has_extra_tensor_info);
    ck_assert_str_eq(c->extra_tensor_info.fully_qualified_name, "cache");
    ck_assert_int_eq(c->extra_tensor_info.location, LS_PTE_TENSOR_SEGMENT);
    ls_history_free(&h);
    ls_program_unref(p);
}
END_TEST

/* Three constants, two with the same bytes (one float32, one int32: exir hashes the bytes
 * alone), read by the CPU: two constant entries after the placeholder, the equal ones one index,
 * no FQN on any. */
START_TEST(constants_once_per_bytes)
{
    int64_t s4[] = {4};
    const float f[] = {1, 2, 3, 4};
    int32_t same[4];
    memcpy(same, f, sizeof same);
    ls_builder *b = ls_builder_new("consts", LS_DIALECT_EDGE);
    ls_tmeta m = ls_meta(LS_DT_F32, 1, s4), mi = ls_meta(LS_DT_I32, 1, s4);
    uint32_t c0 = pf_input(b, "c_a", LS_IN_CONSTANT_TENSOR, "a", pf_f32(1, s4, f));
    ls_tensor *ti = ls_tensor_alloc(LS_DT_I32, 1, s4);
    memcpy(ti->data, same, sizeof same);
    uint32_t c1 = ls_build_input(b, "c_b", LS_IN_CONSTANT_TENSOR, "b", false, &mi, ti);
    ls_tensor_unref(ti);
    const float g[] = {5, 6, 7, 8};
    uint32_t c2 = pf_input(b, "c_c", LS_IN_CONSTANT_TENSOR, "c", pf_f32(1, s4, g));
    uint32_t x = pf_user_input(b, "x", LS_DT_F32, 1, s4);
    ls_arg *a = ls_calloc(3, sizeof *a);
    a[0] = ls_arg_node(x), a[1] = ls_arg_node(c0), a[2] = ls_arg_int(1);
    uint32_t s0 = ls_build_call(b, NULL, LS_OP_add_Tensor, a, 3, &m);
    a = ls_calloc(3, sizeof *a);
    a[0] = ls_arg_node(s0), a[1] = ls_arg_node(c1), a[2] = ls_arg_int(1);
    uint32_t s1 = ls_build_call(b, NULL, LS_OP_add_Tensor, a, 3, &m);
    a = ls_calloc(3, sizeof *a);
    a[0] = ls_arg_node(s1), a[1] = ls_arg_node(c2), a[2] = ls_arg_int(1);
    uint32_t s2 = ls_build_call(b, NULL, LS_OP_add_Tensor, a, 3, &m);
    ls_build_output(b, &s2, 1, NULL, NULL);
    ls_program *p = ls_builder_finish(b);
    ls_history h;
    lower_opts(p, "to_out_variant,memory_plan,emit", NULL, &h);
    ls_emit_summary es;
    const ls_pte *pte = ls_program_emitted(h.steps[h.n - 1].program, &es);
    ck_assert_uint_eq(pte->constant_segment.offsets.n, 3);
    ck_assert_uint_eq(es.constants, 2);
    ck_assert_uint_eq(es.constant_bytes, 32); /* 16, then 16 at offset 16 */
    const ls_pte_plan *pl = &pte->execution_plan.v[0];
    ck_assert_uint_eq(pl->values.v[0].tensor.data_buffer_idx, 1);
    ck_assert_uint_eq(pl->values.v[1].tensor.data_buffer_idx, 1);
    ck_assert_uint_eq(pl->values.v[2].tensor.data_buffer_idx, 2);
    for (uint32_t i = 0; i < 3; i++) ck_assert(!pl->values.v[i].tensor.has_extra_tensor_info);
    ls_history_free(&h);
    ls_program_unref(p);
}
END_TEST

/* policy on the CPU: native_layer_norm.out writes out0, out1, out2 and its KernelCall ends with
 * one TensorList of them (exir's _emit_operator returns several outs as a list). */
START_TEST(several_outs_return_one_list)
{
    ls_program *p = pf_sample("policy");
    ls_history h;
    lower_opts(p, CPU, NULL, &h);
    const ls_pte *pte = emitted(&h);
    const ls_pte_plan *pl = &pte->execution_plan.v[0];
    int32_t op = -1;
    for (uint32_t i = 0; i < pl->operators.n; i++)
        if (!strcmp(pl->operators.v[i].name, "aten::native_layer_norm")) op = (int32_t)i;
    ck_assert_int_ge(op, 0);
    uint32_t seen = 0;
    for (uint32_t i = 0; i < pl->chains.v[0].instructions.n; i++) {
        const ls_pte_instruction *in = &pl->chains.v[0].instructions.v[i];
        if (in->kind != LS_PTE_KERNEL_CALL || in->kernel_call.op_index != op) continue;
        const ls_pte_i32s *args = &in->kernel_call.args;
        ck_assert_uint_eq(args->n, 5 + 3 + 1);
        const ls_pte_value *ret = &pl->values.v[args->v[8]];
        ck_assert_int_eq(ret->kind, LS_PTE_VAL_TENSOR_LIST);
        ck_assert_uint_eq(ret->tensor_list.n, 3);
        for (int k = 0; k < 3; k++) ck_assert_int_eq(ret->tensor_list.v[k], args->v[5 + k]);
        seen++;
    }
    ck_assert_uint_gt(seen, 0);
    ls_history_free(&h);
    ls_program_unref(p);
}
END_TEST

/* two_delegates: lowered_module_0 is the first region (it reads x), lowered_module_1 the one
 * after the cos; the emitted delegates follow the calls. */
START_TEST(lowered_modules_in_graph_order)
{
    ls_program *p = pf_sample("two_delegates");
    ls_history h;
    lower_opts(p, NULL, NULL, &h);
    const ls_program *q = h.steps[h.n - 1].program;
    int32_t first = -1, second = -1;
    for (uint32_t i = 0; i < q->n_nodes; i++) {
        const ls_node *n = q->nodes[i];
        if (n->kind != LS_NODE_CALL || !n->op || n->op->id != LS_OP_call_delegate) continue;
        const ls_node *ga = ls_program_node(q, n->args[0].v.node);
        const ls_node *in = ls_program_node(q, n->args[1].v.node);
        if (first < 0) {
            first = (int32_t)i;
            ck_assert_str_eq(ga->target, "lowered_module_0");
            ck_assert_str_eq(in->name, "x");
        } else {
            second = (int32_t)i;
            ck_assert_str_eq(ga->target, "lowered_module_1");
            ck_assert_str_eq(in->name, "aten_cos_default");
        }
    }
    ck_assert(first >= 0 && second > first);
    const ls_pte *pte = emitted(&h);
    ck_assert_uint_eq(pte->execution_plan.v[0].delegates.n, 2);
    ls_history_free(&h);
    ls_program_unref(p);
}
END_TEST

Suite *emit_suite(void)
{
    Suite *s = suite_create("emit");
    TCase *tc = tcase_create("emit");
    tcase_set_timeout(tc, 60);
    tcase_add_test(tc, mutable_buffers_as_exir_writes_them);
    tcase_add_test(tc, constants_once_per_bytes);
    tcase_add_test(tc, several_outs_return_one_list);
    tcase_add_test(tc, lowered_modules_in_graph_order);
    suite_add_tcase(s, tc);
    return s;
}
