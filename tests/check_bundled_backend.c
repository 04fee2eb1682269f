/* Tests of the bundled delegate backend through the registry (preprocess → init → execute →
 * destroy): consumed constants, state kept across calls, outputs never aliasing the state,
 * in-place ops never writing the blob, boolean gather refused, inputs checked, altered blobs.
 * The submodule programs (progfixtures.h) are shaped as to_backend leaves them. */
#include <check.h>
#include <stdlib.h>
#include <string.h>

#include "backend.h"
#include "bundled_blob.h"
#include "xnnpack_blob.h"
#include "progfixtures.h"
#include "testutil.h"

static const ls_backend *bundled(void)
{
    const ls_backend *b = ls_backend_find("BundledBackend");
    ck_assert_ptr_nonnull(b);
    return b;
}

static void *init_ok(const ls_program *p, ls_blob **blob)
{
    const ls_backend *be = bundled();
    ls_compile_spec *specs = (ls_compile_spec *)1;
    uint32_t nspecs = 7;
    ls_error err = {0};
    ck_assert_msg(be->preprocess(p, blob, &specs, &nspecs, NULL, &err) == 0, "%s", err.msg);
    ck_assert_ptr_null(specs);
    ck_assert_uint_eq(nspecs, 0);
    void *h = NULL;
    ck_assert_msg(be->init(*blob, NULL, 0, NULL, &h, &err) == 0, "%s", err.msg);
    ck_assert_ptr_nonnull(h);
    return h;
}

START_TEST(registry_finds_backends_by_id)
{
    const ls_backend *b = ls_backend_find("BundledBackend");
    ck_assert_ptr_eq(b, &ls_bundled_backend);
    ck_assert_ptr_eq(ls_backend_find("BundledBackend"), b);
    ck_assert_str_eq(b->id, "BundledBackend");
    ck_assert_ptr_null(ls_backend_find("CoreMLBackend"));
    ck_assert_ptr_eq(ls_backend_find("XnnpackBackend"), &ls_xnnpack_backend);
    ck_assert_ptr_null(ls_backend_find(NULL));
    static const ls_backend fake = {.id = "TestFakeBackend"}, fake2 = {.id = "TestFakeBackend"};
    ls_backend_register(&fake);
    ck_assert_ptr_eq(ls_backend_find("TestFakeBackend"), &fake);
    ls_backend_register(&fake2); /* same id: replaces */
    ck_assert_ptr_eq(ls_backend_find("TestFakeBackend"), &fake2);
    ck_assert_ptr_eq(ls_backend_find("BundledBackend"), b);
}
END_TEST

START_TEST(chain_with_consumed_constants_runs)
{
    static const int64_t s23[] = {2, 3}, s32[] = {3, 2};
    ls_program *p = pf_chain_program();
    ls_blob *blob;
    void *h = init_ok(p, &blob);
    const ls_backend *be = bundled();
    ck_assert_uint_eq(be->state_count(h), 0);
    const float xv[] = {0.5f, -1, 2, 0, 3, -4};
    ls_value in = ls_value_tensor(pf_f32(2, s23, xv));
    ls_error err;
    for (int call = 0; call < 2; call++) {
        ls_value *out;
        uint32_t nout;
        ck_assert_msg(be->execute(h, &in, 1, &out, &nout, &err) == 0, "%s", err.msg);
        ck_assert_uint_eq(nout, 1);
        ck_assert_int_eq(out[0].kind, LS_V_TENSOR);
        ck_assert_int_eq(out[0].t->dtype, LS_DT_F32);
        ck_assert_int_eq(out[0].t->ndim, 2);
        for (int i = 0; i < 6; i++)
            ck_assert_double_eq_tol(ls_tensor_get_f64(out[0].t, i), xv[i] + (i + 1) + 10 * (i + 1), 1e-6);
        pf_values_free(out, nout);
    }
    ls_value_release(&in);

    /* inputs are checked against what the blob declares, naming the input */
    ls_value *out = (ls_value *)1;
    uint32_t nout = 9;
    ck_assert_int_eq(be->execute(h, NULL, 0, &out, &nout, &err), -1);
    ck_assert_ptr_null(out);
    ck_assert_uint_eq(nout, 0);
    ck_assert_msg(tu_contains(err.msg, "BundledBackend: lowered_module_0: 0 inputs given, the delegate takes 1"), "%s",
                  err.msg);
    ls_value bad = ls_value_tensor(ls_tensor_alloc(LS_DT_I64, 2, s23));
    ck_assert_int_eq(be->execute(h, &bad, 1, &out, &nout, &err), -1);
    ck_assert_msg(tu_contains(err.msg, "input 0 (x): expected float32[2, 3], got int64[2, 3]"), "%s", err.msg);
    ls_value_release(&bad);
    bad = ls_value_tensor(ls_tensor_alloc(LS_DT_F32, 2, s32));
    ck_assert_int_eq(be->execute(h, &bad, 1, &out, &nout, &err), -1);
    ck_assert_msg(tu_contains(err.msg, "input 0 (x): expected float32[2, 3], got float32[3, 2]"), "%s", err.msg);
    ls_value_release(&bad);
    bad = ls_value_int(3);
    ck_assert_int_eq(be->execute(h, &bad, 1, &out, &nout, &err), -1);
    ck_assert_msg(tu_contains(err.msg, "input 0 (x): expected float32[2, 3], got an int"), "%s", err.msg);

    be->destroy(h);
    ls_blob_unref(blob);
    ls_program_unref(p);
}
END_TEST

/* exir-semantics §9 test 10, called three times: the cache fills row by row inside the
 * delegate and the output is mm(cache, q^T) over the rows filled so far. */
START_TEST(state_lives_in_the_delegate_across_calls)
{
    static const int64_t s13[] = {1, 3}, s1[] = {1};
    ls_program *p = pf_kv_program(false, false);
    ls_blob *blob;
    void *h = init_ok(p, &blob);
    const ls_backend *be = bundled();
    ck_assert_uint_eq(be->state_count(h), 1);
    ck_assert_str_eq(be->state_name(h, 0), "cache");
    ck_assert_ptr_null(be->state_name(h, 1));
    ck_assert_ptr_null(be->state_get(h, 1));
    const float qv[] = {1, 0.5f, 0.25f};
    ls_error err;
    for (int step = 0; step < 3; step++) {
        const float kv[] = {(float)(step + 1), 10.0f * (float)(step + 1), 100.0f * (float)(step + 1)};
        ls_tensor *pos = ls_tensor_alloc(LS_DT_I64, 1, s1);
        ((int64_t *)pos->data)[0] = step;
        ls_value in[3] = {ls_value_tensor(pf_f32(2, s13, qv)), ls_value_tensor(pf_f32(2, s13, kv)),
                          ls_value_tensor(pos)};
        ls_value *out;
        uint32_t nout;
        ck_assert_msg(be->execute(h, in, 3, &out, &nout, &err) == 0, "step %d: %s", step, err.msg);
        ck_assert_uint_eq(nout, 1); /* the mutation stays inside: user outputs only */
        ck_assert_int_eq(out[0].t->ndim, 2);
        ck_assert_int_eq(out[0].t->sizes[0], 4);
        ck_assert_int_eq(out[0].t->sizes[1], 1);
        const ls_tensor *cache = be->state_get(h, 0);
        ck_assert_int_eq(cache->numel, 12);
        for (int r = 0; r < 4; r++) {
            double row_dot = r <= step ? (r + 1) * (1 * 1 + 10 * 0.5 + 100 * 0.25) : 0;
            ck_assert_double_eq_tol(ls_tensor_get_f64(out[0].t, r), row_dot, 1e-4);
            for (int c = 0; c < 3; c++) {
                double want = r <= step ? (r + 1) * (c == 0 ? 1 : c == 1 ? 10 : 100) : 0;
                ck_assert_double_eq_tol(ls_tensor_get_f64(cache, r * 3 + c), want, 1e-6);
            }
        }
        pf_values_free(out, nout);
        for (int i = 0; i < 3; i++) ls_value_release(&in[i]);
    }
    /* A second handle from the same blob starts from the initial value: the blob is unchanged. */
    void *h2 = NULL;
    ck_assert_int_eq(be->init(blob, NULL, 0, NULL, &h2, &err), 0);
    for (int i = 0; i < 12; i++) ck_assert_double_eq(ls_tensor_get_f64(be->state_get(h2, 0), i), 0);
    ck_assert_double_eq(ls_tensor_get_f64(be->state_get(h, 0), 0), 1);
    be->destroy(h2);
    be->destroy(h);
    ls_blob_unref(blob);
    ls_program_unref(p);
}
END_TEST

/* Runs pf_kv_program(true, inplace) for three steps and returns the cache output of each
 * (all kept alive until the end). */
static void run_cache_out(bool inplace, ls_tensor *seen[3])
{
    static const int64_t s13[] = {1, 3}, s1[] = {1};
    ls_program *p = pf_kv_program(true, inplace);
    ls_blob *blob;
    void *h = init_ok(p, &blob);
    const ls_backend *be = bundled();
    ls_error err;
    for (int step = 0; step < 3; step++) {
        const float kv[] = {(float)(step + 1), (float)(step + 1), (float)(step + 1)};
        ls_tensor *pos = ls_tensor_alloc(LS_DT_I64, 1, s1);
        ((int64_t *)pos->data)[0] = step;
        ls_value in[3] = {ls_value_tensor(pf_f32(2, s13, kv)), ls_value_tensor(pf_f32(2, s13, kv)),
                          ls_value_tensor(pos)};
        ls_value *out;
        uint32_t nout;
        ck_assert_msg(be->execute(h, in, 3, &out, &nout, &err) == 0, "%s", err.msg);
        ck_assert_uint_eq(nout, 2);
        seen[step] = ls_tensor_ref(out[1].t);
        ck_assert_ptr_ne(seen[step], be->state_get(h, 0));
        pf_values_free(out, nout);
        for (int i = 0; i < 3; i++) ls_value_release(&in[i]);
    }
    be->destroy(h);
    ls_blob_unref(blob);
    ls_program_unref(p);
}

/* Rows of a [4,3] cache that hold a value (row r holds r + 1 once written). */
static int rows_written(const ls_tensor *t)
{
    int n = 0;
    for (int r = 0; r < 4; r++) n += ls_tensor_get_f64(t, r * 3) == r + 1;
    return n;
}

START_TEST(outputs_never_alias_the_state)
{
    ls_tensor *seen[3];
    /* functional: the buffer's output is its value before the call's write */
    run_cache_out(false, seen);
    for (int step = 0; step < 3; step++) {
        ck_assert_int_eq(rows_written(seen[step]), step);
        ls_tensor_unref(seen[step]);
    }
    /* index_put_ writes the state in place: the buffer's output is the written value, and it does
     * not change with later calls */
    run_cache_out(true, seen);
    for (int step = 0; step < 3; step++) {
        ck_assert_int_eq(rows_written(seen[step]), step + 1);
        ls_tensor_unref(seen[step]);
    }
}
END_TEST

START_TEST(inplace_ops_never_write_the_blob)
{
    /* copy_(c, x) on a consumed constant: the handle's constant changes, the blob does not */
    static const int64_t s2[] = {2};
    static const float cv[] = {5, 7}, xv[] = {1, 2};
    ls_builder *b = ls_builder_new("lowered_module_0", LS_DIALECT_EDGE);
    uint32_t c = pf_input(b, "c_c", LS_IN_CONSTANT_TENSOR, "c", pf_f32(1, s2, cv));
    uint32_t x = pf_user_input(b, "x", LS_DT_F32, 1, s2);
    ls_arg a1[] = {ls_arg_node(c), ls_arg_node(x), ls_arg_bool(false)};
    uint32_t cp = pf_call(b, "aten_copy_default", LS_OP_copy_, a1, 3, LS_DT_F32, 1, s2);
    ls_arg a2[] = {ls_arg_node(cp), ls_arg_node(x), ls_arg_int(1)};
    uint32_t add = pf_call(b, "aten_add_tensor", LS_OP_add_Tensor, a2, 3, LS_DT_F32, 1, s2);
    ls_build_output(b, &add, 1, NULL, NULL);
    ls_program *p = ls_builder_finish(b);
    ls_blob *blob;
    void *h = init_ok(p, &blob);
    ls_blob *before = pf_blob_copy(blob, blob->size);
    const ls_backend *be = bundled();
    ls_value in = ls_value_tensor(pf_f32(1, s2, xv)), *out;
    uint32_t nout;
    ls_error err;
    ck_assert_msg(be->execute(h, &in, 1, &out, &nout, &err) == 0, "%s", err.msg);
    ck_assert_double_eq(ls_tensor_get_f64(out[0].t, 1), 4);
    pf_values_free(out, nout);
    ck_assert_mem_eq(blob->data, before->data, blob->size);
    ls_value_release(&in);
    be->destroy(h);
    ls_blob_unref(before);
    ls_blob_unref(blob);
    ls_program_unref(p);
}
END_TEST

START_TEST(boolean_gather_is_refused_at_execute_time)
{
    static const int64_t s4[] = {4}, s2[] = {2};
    ls_program *p = pf_mask_program();
    ls_blob *blob;
    void *h = init_ok(p, &blob); /* lowering and loading accept it: MLX fails when it runs */
    const ls_backend *be = bundled();
    const float xv[] = {1, 2, 3, 4};
    ls_value in = ls_value_tensor(pf_f32(1, s4, xv));
    ls_value *out;
    uint32_t nout;
    ls_error err;
    ck_assert_int_eq(be->execute(h, &in, 1, &out, &nout, &err), -1);
    ck_assert_str_eq(err.msg, "BundledBackend: lowered_module_1: node aten_index_tensor (aten.index.Tensor): "
                              "[Gather] Boolean indices not supported");
    be->destroy(h);
    ls_blob_unref(blob);

    /* the same gather with the mask folded to its integer positions (fold_masks) runs */
    ls_tensor *pos = ls_tensor_alloc(LS_DT_I64, 1, s2);
    ((int64_t *)pos->data)[0] = 0;
    ((int64_t *)pos->data)[1] = 2;
    ls_program_drop_constant(p, "mask");
    ls_program_put_constant(p, "mask", pos, NULL);
    ls_tensor_unref(pos);
    ls_tmeta m;
    ls_tmeta_init(&m, LS_DT_I64, 1, s2);
    ls_node_set_val(ls_program_edit(p, 0), &m);
    h = init_ok(p, &blob);
    ck_assert_msg(be->execute(h, &in, 1, &out, &nout, &err) == 0, "%s", err.msg);
    ck_assert_uint_eq(nout, 1);
    ck_assert_int_eq(out[0].t->numel, 2);
    ck_assert_double_eq(ls_tensor_get_f64(out[0].t, 0), 1);
    ck_assert_double_eq(ls_tensor_get_f64(out[0].t, 1), 3);
    pf_values_free(out, nout);
    ls_value_release(&in);
    be->destroy(h);
    ls_blob_unref(blob);
    ls_program_unref(p);
}
END_TEST

START_TEST(preprocess_and_init_refuse_with_clear_messages)
{
    const ls_backend *be = bundled();
    ls_error err;
    ls_blob *blob = NULL;
    ls_compile_spec *specs;
    uint32_t nspecs;
    ls_program *p = pf_kv_program(false, false);
    ls_output_spec outs[] = {pf_out_spec(LS_OUT_BUFFER_MUTATION, "aten_index_put_default", "other"),
                             pf_out_spec(LS_OUT_USER_OUTPUT, "aten_mm_default", NULL)};
    ls_program_set_outputs(p, outs, 2);
    ck_assert_int_eq(be->preprocess(p, &blob, &specs, &nspecs, NULL, &err), -1);
    ck_assert_msg(tu_contains(err.msg, "BundledBackend: preprocess `lowered_module_0`: output 0 mutates buffer 'other'"),
                  "%s", err.msg);
    ls_program_unref(p);

    p = pf_kv_program(false, false);
    ls_blob *good = pf_encode(p);
    void *h = (void *)1;
    ls_blob *b = pf_blob_copy(good, good->size - 7);
    ck_assert_int_eq(be->init(b, NULL, 0, NULL, &h, &err), -1);
    ck_assert_ptr_null(h);
    ck_assert_msg(tu_contains(err.msg, "BundledBackend: init: bundled blob: the header says"), "%s", err.msg);
    ls_blob_unref(b);
    ck_assert_int_eq(be->init(NULL, NULL, 0, NULL, &h, &err), -1);
    ck_assert_msg(tu_contains(err.msg, "never preprocessed"), "%s", err.msg);

    /* altered blobs (resealed) either fail at init or load and run or fail with a message */
    static const int64_t s13[] = {1, 3}, s1[] = {1};
    uint64_t gsize = 0;
    for (int i = 0; i < 8; i++) gsize |= (uint64_t)good->data[32 + i] << (8 * i);
    for (size_t at = 64; at < 64 + gsize; at++) {
        b = pf_blob_copy(good, good->size);
        b->data[at] ^= 0x5A;
        ls_bb_seal(b);
        h = NULL;
        if (be->init(b, NULL, 0, NULL, &h, &err) == 0) {
            ls_value in[3] = {ls_value_tensor(pf_f32(2, s13, NULL)), ls_value_tensor(pf_f32(2, s13, NULL)),
                              ls_value_tensor(ls_tensor_alloc(LS_DT_I64, 1, s1))};
            ls_value *out;
            uint32_t nout;
            if (be->execute(h, in, 3, &out, &nout, &err) == 0) pf_values_free(out, nout);
            for (int i = 0; i < 3; i++) ls_value_release(&in[i]);
            be->destroy(h);
        } else {
            ck_assert_msg(strncmp(err.msg, "BundledBackend: init", 20) == 0, "%s", err.msg);
        }
        ls_blob_unref(b);
    }
    ls_blob_unref(good);
    ls_program_unref(p);
}
END_TEST

Suite *bundled_backend_suite(void)
{
    Suite *s = suite_create("bundled_backend");
    TCase *be = tcase_create("backend");
    tcase_set_timeout(be, 60);
    tcase_add_test(be, registry_finds_backends_by_id);
    tcase_add_test(be, chain_with_consumed_constants_runs);
    tcase_add_test(be, state_lives_in_the_delegate_across_calls);
    tcase_add_test(be, outputs_never_alias_the_state);
    tcase_add_test(be, inplace_ops_never_write_the_blob);
    tcase_add_test(be, boolean_gather_is_refused_at_execute_time);
    tcase_add_test(be, preprocess_and_init_refuse_with_clear_messages);
    suite_add_tcase(s, be);
    return s;
}
