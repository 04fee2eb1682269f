/* Tests of .pte files read back as programs (src/formats/pte/pte_load.c): every real file in shared/data/pte
 * opens (djl_corrupt is refused), out-variant calls become functional nodes with their args in
 * schema order, constants share the file's bytes, unknown operators and foreign delegates load for
 * inspection, and what the bundled runtime can run gives the right numbers. */
#include <check.h>
#include <math.h>
#include <stdlib.h>
#include <string.h>

#include "build.h"
#include "export.h"
#include "ops.h"
#include "pte_test.h"
#include "reader.h"
#include "progfixtures.h"
#include "runtime.h"
#include "testutil.h"
#include "verify.h"

static ls_program *load_real(const char *name)
{
    const char *path = pt_path(name, ".pte");
    return path ? pf_load(path) : NULL;
}

static const ls_node *only_call(const ls_program *p, const char *op_qualname)
{
    const ls_node *hit = NULL;
    for (uint32_t i = 0; i < p->n_nodes; i++)
        if (p->nodes[i]->op && !strcmp(p->nodes[i]->op->qualname, op_qualname)) hit = p->nodes[i];
    return hit;
}

START_TEST(pte_load_every_real_file)
{
    if (!tu_shared("data/pte")) return;
    for (size_t i = 0; i < PT_NREAL; i++) {
        ls_program *p = load_real(pt_real_files[i]);
        ck_assert_int_eq(p->dialect, LS_DIALECT_EXECUTORCH);
        ls_verify_result v;
        ls_verify(p, &v);
        ck_assert_msg(v.n_errors == 0, "%s: %s", pt_real_files[i], v.n ? v.v[0].msg : "");
        ls_verify_result_free(&v);
        ck_assert_ptr_nonnull(ls_program_output(p));
        ls_program_unref(p);
        char *out = NULL;
        ck_assert_int_eq(tu_runf(&out, "info %s", pt_path(pt_real_files[i], ".pte")), 0);
        ck_assert_msg(tu_contains(out, "ExecuTorch"), "%s", out);
        free(out);
    }
    ls_program *p = NULL;
    ls_error err;
    ck_assert_int_ne(ls_load(pt_path("djl_corrupt", ".pte"), NULL, &p, &err), 0);
    ck_assert_ptr_null(p);
    ck_assert_msg(tu_contains(err.msg, "djl_corrupt.pte"), "%s", err.msg);
}
END_TEST

START_TEST(pte_load_kernel_call_in_schema_order)
{
    ls_program *p = load_real("et_apple_add");
    if (!p) return;
    const ls_node *add = only_call(p, "aten.add.Tensor");
    ck_assert_ptr_nonnull(add);
    ck_assert_str_eq(add->target, "aten::add.out");
    ck_assert_int_eq(add->dialect, LS_DIALECT_EXECUTORCH);
    ck_assert_int_eq(add->nargs, 3); /* self, other, alpha: the out arg and the return are gone */
    ck_assert_int_eq(add->args[0].kind, LS_ARG_NODE);
    ck_assert_int_eq(add->args[1].kind, LS_ARG_NODE);
    ck_assert_str_eq(add->args[2].name, "alpha");
    ck_assert_int_eq(add->args[2].v.i, 1);
    ck_assert_int_eq(ls_program_node(p, add->args[0].v.node)->kind, LS_NODE_PLACEHOLDER);
    ck_assert_int_eq(add->vals[0].dtype, LS_DT_F32);
    ck_assert_uint_eq(p->n_inputs, 2);
    ck_assert_int_eq(p->inputs[0].kind, LS_IN_USER_INPUT);
    ck_assert_uint_eq(p->n_outputs, 1);
    ck_assert_str_eq(p->outputs[0].name, add->name);
    /* ls_op_from_target knows the spelling */
    ls_dialect d;
    ck_assert_ptr_eq(ls_op_from_target(add->target, &d), add->op);
    ck_assert_int_eq(d, LS_DIALECT_EXECUTORCH);

    /* it runs: 2 + 3 */
    ls_error err;
    ls_runner *r = ls_runner_new(p, &err);
    ck_assert_msg(r != NULL, "%s", err.msg);
    int64_t one = 1;
    ls_value in[2] = {ls_value_tensor(ls_tensor_of(LS_DT_F32, 1, &one, (double[]){2}, 1)),
                      ls_value_tensor(ls_tensor_of(LS_DT_F32, 1, &one, (double[]){3}, 1))};
    ls_value *outs = NULL;
    uint32_t nout = 0;
    ck_assert_msg(ls_runner_run(r, in, 2, &outs, &nout, &err) == 0, "%s", err.msg);
    ck_assert_uint_eq(nout, 1);
    ck_assert_double_eq(ls_tensor_get_f64(outs[0].t, 0), 5.0);
    for (uint32_t i = 0; i < nout; i++) ls_value_release(&outs[i]);
    free(outs);
    ls_value_release(&in[0]);
    ls_value_release(&in[1]);
    ls_runner_free(r);
    ls_program_unref(p);
}
END_TEST

START_TEST(pte_load_constants_share_the_segment)
{
    ls_program *p = load_real("et_arduino_AddModel");
    if (!p) return;
    ck_assert_uint_eq(p->n_constants, 1);
    const ls_tensor *c = p->constants[0].t;
    ck_assert_ptr_nonnull(c);
    /* the same bytes as the file's constant segment */
    ls_pte pte;
    ls_error err;
    ck_assert(ls_pte_read_file(pt_path("et_arduino_AddModel", ".pte"), &pte, &err) == 0);
    const ls_pte_plan *plan = &pte.execution_plan.v[0];
    const uint8_t *data = NULL;
    size_t size = 0;
    for (uint32_t i = 0; i < plan->values.n; i++)
        if (plan->values.v[i].kind == LS_PTE_VAL_TENSOR && plan->values.v[i].tensor.data_buffer_idx)
            ck_assert_int_eq(ls_pte_tensor_bytes(&pte, &plan->values.v[i].tensor, &data, &size, &err), 1);
    ck_assert_uint_eq(size, c->nbytes);
    ck_assert(memcmp(data, c->data, size) == 0);
    ls_pte_free(&pte);
    /* the program runs with it: x + c */
    ls_runner *r = ls_runner_new(p, &err);
    ck_assert_msg(r != NULL, "%s", err.msg);
    int64_t three = 3;
    ls_value in = ls_value_tensor(ls_tensor_of(LS_DT_F32, 1, &three, (double[]){1, 2, 3}, 3));
    ls_value *outs = NULL;
    uint32_t nout = 0;
    ck_assert_msg(ls_runner_run(r, &in, 1, &outs, &nout, &err) == 0, "%s", err.msg);
    double cv = ls_tensor_get_f64(c, 0);
    for (int i = 0; i < 3; i++) ck_assert_double_eq_tol(ls_tensor_get_f64(outs[0].t, i), i + 1 + cv, 1e-6);
    ls_value_release(&outs[0]);
    free(outs);
    ls_value_release(&in);
    ls_runner_free(r);
    ls_program_unref(p);
}
END_TEST

START_TEST(pte_load_dropped_tensor_options)
{
    /* _to_dim_order_copy.out has no dtype: the out tensor gives it (int64 constant → float32) */
    ls_program *p = load_real("cc_const_methods");
    if (!p) return;
    const ls_node *n = only_call(p, "dim_order_ops._to_dim_order_copy.default");
    ck_assert_ptr_nonnull(n);
    const ls_arg *dt = ls_node_arg(n, "dtype");
    ck_assert_ptr_nonnull(dt);
    ck_assert_int_eq(dt->kind, LS_ARG_DTYPE);
    ck_assert_int_eq(dt->v.i, LS_DT_F32);
    ck_assert_int_eq(ls_node_arg(n, "non_blocking")->kind, LS_ARG_BOOL);
    ck_assert_int_eq(ls_node_arg(n, "dim_order")->kind, LS_ARG_INTS);
    ls_error err;
    ls_runner *r = ls_runner_new(p, &err);
    ck_assert_msg(r != NULL, "%s", err.msg);
    ls_value *in = NULL, *outs = NULL;
    uint32_t nin = 0, nout = 0;
    ck_assert(ls_make_inputs(p, 1, 0, &in, &nin, &err) == 0);
    ck_assert_msg(ls_runner_run(r, in, nin, &outs, &nout, &err) == 0, "%s", err.msg);
    ck_assert_int_eq(outs[0].t->dtype, LS_DT_F32);
    for (uint32_t i = 0; i < nin; i++) ls_value_release(&in[i]);
    for (uint32_t i = 0; i < nout; i++) ls_value_release(&outs[i]);
    free(in);
    free(outs);
    ls_runner_free(r);
    ls_program_unref(p);
}
END_TEST

START_TEST(pte_load_foreign_delegate_and_unknown_ops)
{
    ls_program *p = load_real("cc_add");
    if (!p) return;
    ck_assert_uint_eq(p->n_subs, 1);
    ck_assert_str_eq(p->subs[0].backend_id, "XnnpackBackend");
    /* XNNPACK's blob is read (xnn_inspect.c): its one XNNAdd between the two inputs */
    ck_assert_ptr_nonnull(p->subs[0].program);
    uint32_t adds = 0;
    for (uint32_t i = 0; i < p->subs[0].program->n_nodes; i++)
        adds += p->subs[0].program->nodes[i]->target == ls_intern("XNNAdd");
    ck_assert_uint_eq(adds, 1);
    ck_assert_uint_eq(p->subs[0].processed->size, 432);
    const ls_node *call = only_call(p, "higher_order.executorch_call_delegate.default");
    ck_assert_ptr_nonnull(call);
    ck_assert_int_eq(call->nargs, 3); /* the get_attr, then the two inputs */
    ck_assert_int_eq(ls_program_node(p, call->args[0].v.node)->kind, LS_NODE_GET_ATTR);
    ls_program_unref(p);

    p = load_real("djl_openvino_tiny");
    ck_assert_ptr_null(p->subs[0].program); /* opaque: shown, never entered */
    ck_assert_uint_eq(p->subs[0].nspecs, 1);
    ck_assert_str_eq(p->subs[0].specs[0].key, "device");
    ck_assert_uint_eq(p->subs[0].specs[0].value->size, 3);
    ls_program_unref(p);

    p = load_real("et_arduino_KeywordSpotting");
    uint32_t unknown = 0, calls = 0;
    for (uint32_t i = 0; i < p->n_nodes; i++) {
        const ls_node *n = p->nodes[i];
        if (n->kind != LS_NODE_CALL) continue;
        calls++;
        if (!n->op) {
            unknown++;
            ck_assert(strncmp(n->target, "cortex_m::", 10) == 0);
        }
    }
    /* 16 kernel calls and the view exir elided: quantized_linear's input (value 271, [1, 64])
     * sits at avg_pool2d's output (value 257, [1, 64, 1, 1]: memory 1, offset 8256) and no
     * instruction writes it; it was taken for a tensor the linear writes, which cut the
     * program in two */
    ck_assert_uint_eq(calls, 17);
    ck_assert_uint_eq(unknown, 14);
    const ls_node *lin = NULL;
    for (uint32_t i = 0; i < p->n_nodes; i++)
        if (p->nodes[i]->target && !strcmp(p->nodes[i]->target, "cortex_m::quantized_linear.out")) lin = p->nodes[i];
    ck_assert_ptr_nonnull(lin);
    ck_assert_int_eq(lin->args[0].kind, LS_ARG_NODE);
    const ls_node *view = ls_program_node(p, lin->args[0].v.node);
    ck_assert_ptr_eq(view->op, ls_op_get(LS_OP_memory_view));
    ck_assert_int_eq(view->vals[0].ndim, 2);
    ck_assert_int_eq(view->vals[0].sizes[1], 64);
    const ls_node *pool = ls_program_node(p, view->args[0].v.node);
    ck_assert_str_eq(pool->target, "cortex_m::quantized_avg_pool2d.out");
    ls_program_unref(p);
}
END_TEST

START_TEST(pte_load_methods_and_external_data)
{
    const char *path = pt_path("et_stories260k_hybrid_llama_qnn", ".pte");
    if (!path) return;
    ls_program *p = NULL;
    ls_error err;
    ck_assert(ls_load_pte(path, "prefill_forward", &p, &err) == 0);
    ck_assert_str_eq(p->name, "prefill_forward");
    ck_assert_uint_eq(p->n_outputs, 11);
    ls_program_unref(p);
    ck_assert_int_ne(ls_load_pte(path, "nope", &p, &err), 0);
    ck_assert_msg(tu_contains(err.msg, "no method 'nope'") && tu_contains(err.msg, "kv_forward"), "%s", err.msg);

    /* trainable weights of the xor model live in the .ptd beside it */
    p = load_real("et_android_xor");
    uint32_t buffers = 0;
    for (uint32_t i = 0; i < p->n_inputs; i++)
        if (p->inputs[i].kind == LS_IN_BUFFER) {
            buffers++;
            const ls_named_tensor *e = ls_program_spec_data(p, &p->inputs[i]);
            ck_assert_ptr_nonnull(e);
            ck_assert_ptr_nonnull(e->t);
        }
    ck_assert_uint_eq(buffers, 4);
    ck_assert_ptr_nonnull(ls_program_state(p, "net.linear.weight"));
    ck_assert(p->has_weights);
    ls_program_unref(p);

    /* without it, the constants have no data and the file says why (check_pte_file.c) */
    ls_pte pte;
    ck_assert(ls_pte_read_file(pt_path("rs_data_map_model", ".pte"), &pte, &err) == 0);
    ck_assert(ls_program_from_pte(&pte, NULL, "rs_data_map_model.pte", &p, &err) == 0);
    ck_assert_ptr_nonnull(ls_program_constant(p, "a"));
    ck_assert_ptr_null(ls_program_constant(p, "a")->t);
    ck_assert_ptr_nonnull(p->origin->missing_data(p->origin, ls_intern("a")));
    ls_pte_free(&pte);
    ls_program_unref(p);
}
END_TEST

Suite *pte_load_suite(void)
{
    Suite *s = suite_create("pte_load");
    TCase *tc = tcase_create("pte_load");
    tcase_set_timeout(tc, 60);
    tcase_add_test(tc, pte_load_every_real_file);
    tcase_add_test(tc, pte_load_kernel_call_in_schema_order);
    tcase_add_test(tc, pte_load_constants_share_the_segment);
    tcase_add_test(tc, pte_load_dropped_tensor_options);
    tcase_add_test(tc, pte_load_foreign_delegate_and_unknown_ops);
    tcase_add_test(tc, pte_load_methods_and_external_data);
    suite_add_tcase(s, tc);
    return s;
}
