/* XnnpackBackend (src/backends/xnnpack/): the blob reader checked against flatc's decode of the
 * real files' blobs with ExecuTorch's schema (tests/schema/xnnpack.fbs), the five XNNPACK files
 * of shared/data/pte run through `lowerscope run` and against their portable twins, the cases
 * the issue names worked by hand (cc_add is a + b, cc_dynamic is 2x for sizes 1..8), and bad
 * blobs refused with a message (an unknown xnode type by exit 3). */
#include <check.h>
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "backend.h"
#include "npy.h"
#include "progfixtures.h"
#include "pte_test.h"
#include "runtime.h"
#include "testutil.h"
#include "xnn_test.h"
#include "xnnpack_blob.h"

static const char *const xnn_files[] = {"cc_add", "cc_dynamic", "cc_quantized", "djl_conv", "djl_add_unplanned"};
#define N_XNN_FILES (sizeof xnn_files / sizeof xnn_files[0])

/* The XnnpackBackend delegate of a real file's program. */
static const ls_submodule *xnn_sub(const ls_program *p)
{
    for (uint32_t i = 0; i < p->n_subs; i++)
        if (!strcmp(p->subs[i].backend_id, LS_XNN_BACKEND_ID)) return &p->subs[i];
    return NULL;
}

START_TEST(xnn_reader_agrees_with_flatc)
{
    if (!tu_shared("data/pte")) return;
    for (size_t f = 0; f < N_XNN_FILES; f++) {
        ls_program *p = pf_load(pt_path(xnn_files[f], ".pte"));
        const ls_submodule *sub = xnn_sub(p);
        ck_assert_ptr_nonnull(sub);
        ls_xnn_graph *g;
        ls_error err;
        ck_assert_msg(ls_xnn_decode(sub->processed->data, sub->processed->size, xnn_files[f], &g, &err) == 0, "%s", err.msg);
        ck_assert(g->has_header);
        ck_assert_str_eq(g->identifier, "XN01");
        xt_agrees_with_flatc(sub->processed, g, p->named_data, xnn_files[f]);
        ls_xnn_graph_free(g);
        ls_program_unref(p);
    }
}
END_TEST

/* The blob and its portable twin agree on seeded inputs: float32 to float32's default
 * tolerance; cc_quantized (static int8) within one step of its output scale (0.0054, XNNPACK
 * requantizes in fixed point, the twin in float), so atol 0.006. */
START_TEST(xnn_real_files_match_their_twins)
{
    if (!tu_shared("data/pte")) return;
    for (size_t f = 0; f < N_XNN_FILES; f++) {
        ls_program *p = pf_load(pt_path(xnn_files[f], ".pte"));
        const ls_submodule *sub = xnn_sub(p);
        bool q = !strcmp(xnn_files[f], "cc_quantized");
        for (uint64_t seed = 0; seed < 3; seed++) {
            ls_value_diff *d;
            uint32_t nd;
            ls_error err;
            int bad = ls_xnn_compare_twin(sub->processed, p->named_data, NULL, 0, seed, q ? 0 : 1e-5, q ? 0.006 : 1e-6, &d,
                                          &nd, &err);
            ck_assert_msg(bad == 0, "%s seed %llu: %s", xnn_files[f], (unsigned long long)seed,
                          bad < 0 ? err.msg : d[0].why);
            ck_assert_uint_ge(nd, 1);
            free(d);
        }
        ls_program_unref(p);
    }
}
END_TEST

static ls_tensor *f32_seq(int64_t n, float start, float step)
{
    ls_tensor *t = ls_tensor_alloc(LS_DT_F32, 1, &n);
    for (int64_t i = 0; i < n; i++) ((float *)t->data)[i] = start + step * (float)i;
    return t;
}

/* cc_add computes a + b; cc_dynamic 2x for every size its Dim(1..8) allows; djl_add_unplanned
 * a + b with inputs that are not memory-planned. Through the whole program, delegate and all. */
START_TEST(xnn_hand_worked_cases)
{
    if (!tu_shared("data/pte")) return;
    const char *adds[] = {"cc_add", "djl_add_unplanned"};
    for (int f = 0; f < 2; f++) {
        ls_program *p = pf_load(pt_path(adds[f], ".pte"));
        const ls_node *ins[2];
        ck_assert_uint_eq(ls_program_user_inputs(p, ins, 2), 2);
        int64_t n = ls_node_tval(ins[0])->sizes[0];
        ls_value in[2] = {ls_value_tensor(f32_seq(n, 1.5f, 0.25f)), ls_value_tensor(f32_seq(n, -3.0f, 2.0f))};
        ls_runner *r = pf_runner(p);
        ls_value *out;
        uint32_t nout;
        ls_error err;
        ck_assert_msg(ls_runner_run(r, in, 2, &out, &nout, &err) == 0, "%s", err.msg);
        ck_assert_uint_eq(nout, 1);
        ck_assert_int_eq(out[0].t->numel, n);
        for (int64_t i = 0; i < n; i++)
            ck_assert_float_eq(((float *)out[0].t->data)[i], (1.5f + 0.25f * (float)i) + (-3.0f + 2.0f * (float)i));
        pf_values_free(out, nout);
        ls_value_release(&in[0]);
        ls_value_release(&in[1]);
        ls_runner_free(r);
        ls_program_unref(p);
    }
    ls_program *p = pf_load(pt_path("cc_dynamic", ".pte"));
    ls_runner *r = pf_runner(p);
    for (int64_t n = 1; n <= 8; n++) {
        ls_value in = ls_value_tensor(f32_seq(n, -1.25f, 0.5f));
        ls_value *out;
        uint32_t nout;
        ls_error err;
        ck_assert_msg(ls_runner_run(r, &in, 1, &out, &nout, &err) == 0, "size %lld: %s", (long long)n, err.msg);
        ck_assert_int_eq(out[0].t->numel, n);
        for (int64_t i = 0; i < n; i++) ck_assert_float_eq(((float *)out[0].t->data)[i], 2.0f * (-1.25f + 0.5f * (float)i));
        /* the twin agrees at this size too (its second input is the blob's [1], define_tensor's
         * dims for the 0-d constant 2.0 the program passes) */
        ls_value_diff *d;
        uint32_t nd;
        ls_tensor *two = f32_seq(1, 2.0f, 0);
        ls_value din[2] = {ls_value_tensor(ls_tensor_ref(in.t)), ls_value_tensor(two)};
        int bad = ls_xnn_compare_twin(xnn_sub(p)->processed, NULL, din, 2, 0, 0, 0, &d, &nd, &err);
        ck_assert_msg(bad == 0, "size %lld: %s", (long long)n, bad < 0 ? err.msg : d[0].why);
        free(d);
        ls_value_release(&din[0]);
        ls_value_release(&din[1]);
        pf_values_free(out, nout);
        ls_value_release(&in);
    }
    /* 9 elements is past the input's DYNAMIC_BOUND capacity of 8: ExecuTorch's set_input fails
     * (TensorImpl::internal_resize_contiguous), and so do the runner and `lowerscope run` (exit 2) */
    ls_error err;
    ls_value *out;
    uint32_t nout;
    ls_value big = ls_value_tensor(f32_seq(9, 0, 1));
    ck_assert_int_ne(ls_runner_run(r, &big, 1, &out, &nout, &err), 0);
    char npy[600], *text = NULL;
    snprintf(npy, sizeof npy, "%s/nine.npy", tu_tmpdir());
    ck_assert_int_eq(ls_npy_save(npy, big.t, &err), 0);
    ck_assert_int_eq(tu_runf(&text, "run %s --input input_0=%s", pt_path("cc_dynamic", ".pte"), npy), 2);
    ck_assert_msg(tu_contains(text, "maximum capacity of 8 elements to 9 elements"), "%s", text);
    free(text);
    ls_value_release(&big);
    ls_runner_free(r);
    ls_program_unref(p);
}
END_TEST

/* `lowerscope run` on each file: exit 0 and its outputs printed. */
START_TEST(xnn_cli_runs_the_real_files)
{
    if (!tu_shared("data/pte")) return;
    for (size_t f = 0; f < N_XNN_FILES; f++) {
        char *out = NULL;
        int rc = tu_runf(&out, "run %s", pt_path(xnn_files[f], ".pte"));
        ck_assert_msg(rc == 0 && tu_contains(out, "lowered_module_0 (XnnpackBackend)"), "%s: %d %s", xnn_files[f], rc, out);
        ck_assert_msg(!tu_contains(out, "simulated"), "%s", out);
        free(out);
    }
}
END_TEST

/* info --json: each XNNPACK delegate's xnodes by type, as the blob holds them (the reader's
 * decode, which the flatc test holds to flatc's), its values and quantized values. */
START_TEST(xnn_info_json_xnodes_by_type)
{
    if (!tu_shared("data/pte")) return;
    for (size_t f = 0; f < N_XNN_FILES; f++) {
        char *out = NULL;
        ck_assert_int_eq(tu_runf(&out, "info %s --json", pt_path(xnn_files[f], ".pte")), 0);
        cJSON *j = cJSON_Parse(out);
        ck_assert_msg(j != NULL, "%s: not JSON", xnn_files[f]);
        const cJSON *x = cJSON_GetObjectItem(cJSON_GetArrayItem(cJSON_GetObjectItem(j, "delegates"), 0), "xnnpack");
        ck_assert_msg(x != NULL, "%s: no xnnpack object", xnn_files[f]);
        ls_program *p = pf_load(pt_path(xnn_files[f], ".pte"));
        const ls_blob *b = xnn_sub(p)->processed;
        ls_xnn_graph *g;
        ls_error err;
        ck_assert_int_eq(ls_xnn_decode(b->data, b->size, "t", &g, &err), 0);
        const cJSON *by = cJSON_GetObjectItem(x, "xnodes_by_type");
        uint32_t total = 0;
        const cJSON *e;
        cJSON_ArrayForEach(e, by)
        {
            uint32_t want = 0;
            for (uint32_t i = 0; i < g->n_nodes; i++) want += !strcmp(ls_xnn_node_type_name(g->nodes[i].type), e->string);
            ck_assert_uint_eq((uint32_t)e->valuedouble, want);
            total += (uint32_t)e->valuedouble;
        }
        ck_assert_uint_eq(total, g->n_nodes);
        uint32_t q = 0;
        for (uint32_t i = 0; i < g->n_values; i++) q += g->values[i].quant != LS_XNN_Q_NONE;
        ck_assert_uint_eq((uint32_t)xt_jnum(x, "values"), g->n_values);
        ck_assert_uint_eq((uint32_t)xt_jnum(x, "quantized_values"), q);
        ls_xnn_graph_free(g);
        ls_program_unref(p);
        cJSON_Delete(j);
        free(out);
    }
}
END_TEST

/* A copy of a real blob with one byte changed at `at`. */
static ls_blob *patched(const ls_blob *b, size_t at, uint8_t v)
{
    ls_blob *c = ls_blob_new(b->size);
    memcpy(c->data, b->data, b->size);
    if (at < c->size) c->data[at] = v;
    return c;
}

/* Bad blobs: each refused with a message naming what is wrong, never a crash; an xnode type the
 * schema lacks is "needs" (exit 3), by its number. */
START_TEST(xnn_bad_blobs)
{
    if (!tu_shared("data/pte")) return;
    ls_program *p = pf_load(pt_path("cc_add", ".pte"));
    const ls_blob *b = xnn_sub(p)->processed;
    ls_xnn_graph *g;
    ls_error err;
    ck_assert_int_eq(ls_xnn_decode(b->data, b->size, "t", &g, &err), 0);
    uint32_t fb = g->flatbuffer_offset;
    uint32_t add_in = g->nodes[0].in[0], add_out = g->nodes[0].out[0];
    ls_xnn_graph_free(g);
    /* truncated header, flatbuffer outside the blob, wrong identifier */
    ck_assert_int_eq(ls_xnn_decode(b->data, 20, "t", &g, &err), -1);
    ck_assert_msg(tu_contains(err.msg, "too short for the 30-byte XH00 header"), "%s", err.msg);
    ls_blob *c = patched(b, 14, 0xff);
    ck_assert_int_eq(ls_xnn_decode(c->data, c->size, "t", &g, &err), -1);
    ck_assert_msg(tu_contains(err.msg, "does not fit"), "%s", err.msg);
    ls_blob_unref(c);
    c = patched(b, fb + 7, '9');
    ck_assert_int_eq(ls_xnn_decode(c->data, c->size, "t", &g, &err), -1);
    ck_assert_msg(tu_contains(err.msg, "'XN09', not XN00 or XN01"), "%s", err.msg);
    ls_blob_unref(c);
    /* every single-byte change of the flatbuffer decodes or fails with a message */
    for (size_t at = fb; at < b->size; at++) {
        c = patched(b, at, (uint8_t)(b->data[at] ^ 0x5a));
        if (ls_xnn_decode(c->data, c->size, "t", &g, &err) == 0) ls_xnn_graph_free(g);
        else ck_assert_msg(tu_contains(err.msg, "t: "), "%s", err.msg);
        ls_blob_unref(c);
    }
    /* the add writing its own input (single assignment: the interpreter frees what a node
     * overwrites; found by fuzz_xnnpack_blob) */
    bool self_write = false;
    for (size_t at = fb; at < b->size && !self_write; at++) {
        if (b->data[at] != add_out) continue;
        c = patched(b, at, (uint8_t)add_in);
        if (ls_xnn_decode(c->data, c->size, "t", &g, &err) == 0) ls_xnn_graph_free(g);
        else self_write = tu_contains(err.msg, "t: xnodes[0] (XNNAdd): output 0 (value") &&
                          tu_contains(err.msg, "is also one of its inputs");
        ls_blob_unref(c);
    }
    ck_assert(self_write);
    /* XNNAdd's union type (1) made 46, a type past the schema's last (XNNSin, 45) */
    size_t type_at = 0;
    for (size_t at = fb; at < b->size && !type_at; at++) {
        if (b->data[at] != 1) continue;
        c = patched(b, at, 46);
        if (ls_xnn_decode(c->data, c->size, "t", &g, &err) == 0) {
            if (g->n_nodes == 1 && g->nodes[0].type == 46) type_at = at;
            ls_xnn_graph_free(g);
        }
        ls_blob_unref(c);
    }
    ck_assert_uint_ne(type_at, 0);
    c = patched(b, type_at, 46);
    void *h = NULL;
    ck_assert_int_eq(ls_xnnpack_backend.init(c, NULL, 0, NULL, &h, &err), -1);
    ck_assert_int_eq(err.code, LS_ERR_NEEDS);
    ck_assert_msg(tu_contains(err.msg, "xnode type 46 is not in the XNNPACK schema"), "%s", err.msg);
    /* the same through the CLI: the .pte with that byte changed runs with exit 3 */
    size_t n;
    uint8_t *file = pt_load(pt_path("cc_add", ".pte"), &n);
    uint8_t *hit = NULL;
    for (size_t at = 0; at + b->size <= n && !hit; at++)
        if (!memcmp(file + at, b->data, b->size)) hit = file + at;
    ck_assert_ptr_nonnull(hit);
    hit[type_at] = 46;
    char path[512];
    snprintf(path, sizeof path, "%s/cc_add_type46.pte", tu_tmpdir());
    FILE *f = fopen(path, "wb");
    fwrite(file, 1, n, f);
    fclose(f);
    free(file);
    char *out = NULL;
    ck_assert_int_eq(tu_runf(&out, "run %s", path), 3);
    ck_assert_msg(tu_contains(out, "xnode type 46"), "%s", out);
    free(out);
    ls_blob_unref(c);
    ls_program_unref(p);
}
END_TEST

Suite *xnnpack_suite(void)
{
    Suite *s = suite_create("xnnpack");
    TCase *tc = tcase_create("core");
    tcase_set_timeout(tc, 120);
    tcase_add_test(tc, xnn_reader_agrees_with_flatc);
    tcase_add_test(tc, xnn_real_files_match_their_twins);
    tcase_add_test(tc, xnn_hand_worked_cases);
    tcase_add_test(tc, xnn_cli_runs_the_real_files);
    tcase_add_test(tc, xnn_bad_blobs);
    tcase_add_test(tc, xnn_info_json_xnodes_by_type);
    suite_add_tcase(s, tc);
    return s;
}
