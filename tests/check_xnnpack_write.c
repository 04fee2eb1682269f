/* XnnpackBackend's preprocess (src/backends/xnnpack/xnn_write*.c): every sample lowered with
 * --backend xnnpack and exported is a .pte whose XNNPACK blobs flatc decodes with ExecuTorch's
 * schema as lowerscope's reader does, whose weights are in the named data under the SHA-256 of
 * their bytes, each blob matching its portable twin, and which runs back and matches the sample
 * as loaded. The modules the writer cannot write (XNNSin and XNNCos have union tags newer than
 * the schema followed) are exactly those holding sin or cos, stood in for by the bundled
 * delegate. Hand-worked cases of what the XNNPACK passes change: channels last around a
 * convolution, relu fused into output_min_max, a Python scalar as a [1] constant, cat of six
 * chained 5 + 2, a real blob re-encoded byte-equal in flatc's eyes. */
#include <check.h>
#include <math.h>
#include <stdlib.h>
#include <string.h>

#include "compare.h"
#include "export.h"
#include "passes.h"
#include "progfixtures.h"
#include "pte.h"
#include "sha256.h"
#include "xnn_test.h"

static void lower_xnnpack(ls_program *p, ls_history *h)
{
    ls_pipeline_opts o;
    ls_pipeline_opts_init(&o);
    ls_error err;
    ck_assert_msg(ls_pipeline_opt(&o, "--backend", "xnnpack", &err) == 1, "%s", err.msg);
    /* the file starts from the buffers' initial data, as the sample does, and names them for
     * the comparison of state (exir writes neither unless et_init_buffer and
     * emit_mutable_buffer_names ask) */
    ck_assert(ls_pipeline_opt(&o, "--init-mutable-buffers", NULL, &err) == 1);
    ck_assert(ls_pipeline_opt(&o, "--mutable-buffer-names", NULL, &err) == 1);
    ck_assert_msg(ls_pipeline_run(p, &o, h, &err) == 0, "%s", err.msg);
    for (uint32_t i = 0; i < h->n; i++) ck_assert_msg(!h->steps[i].error, "step %u: %s", i, h->steps[i].error);
    ls_pipeline_opts_free(&o);
}

static bool has_op(const ls_program *p, ls_op_id a, ls_op_id b)
{
    for (uint32_t i = 0; p && i < p->n_nodes; i++)
        if (p->nodes[i]->op && (p->nodes[i]->op->id == a || p->nodes[i]->op->id == b)) return true;
    return false;
}

START_TEST(xnn_every_sample_lowers_exports_and_runs_back)
{
    for (int s = 0; s < PF_N_SAMPLES; s++) {
        const char *name = pf_samples[s].name;
        ls_program *p = pf_sample(name);
        ls_history h;
        lower_xnnpack(p, &h);
        const ls_program *last = h.steps[h.n - 1].program;
        /* which modules are XNNPACK blobs and which the bundled delegate stands in for */
        uint32_t n_xnn = 0;
        for (uint32_t i = 0; i < last->n_subs; i++) {
            const ls_submodule *sub = &last->subs[i];
            ck_assert_str_eq(sub->backend_id, LS_XNN_BACKEND_ID);
            bool xnn = ls_xnn_is_blob(sub->processed->data, sub->processed->size);
            ck_assert_msg(xnn != has_op(sub->program, LS_OP_sin, LS_OP_cos), "%s %s: %s", name, sub->name,
                          xnn ? "an XNNPACK blob with sin or cos" : "stood in for without sin or cos");
            n_xnn += xnn;
        }
        char path[600];
        snprintf(path, sizeof path, "%s/%s.pte", tu_tmpdir(), name);
        ls_error err;
        ck_assert_msg(ls_export(&h, (int)h.n - 1, path, true, NULL, &err) == 0, "%s: %s", name, err.msg);
        /* the file as ExecuTorch would read it: its delegates and named data */
        ls_pte pte;
        ck_assert_msg(ls_pte_read_file(path, &pte, &err) == 0, "%s", err.msg);
        ls_program *back = pf_load(path);
        uint32_t seen = 0;
        for (uint32_t d = 0; d < pte.execution_plan.v[0].delegates.n; d++) {
            const ls_pte_delegate *dl = &pte.execution_plan.v[0].delegates.v[d];
            const ls_pte_blob *seg = &pte.segment_data[dl->processed.index];
            if (!ls_xnn_is_blob(seg->v, seg->n)) continue;
            seen++;
            ls_blob *blob = ls_blob_new(seg->n);
            memcpy(blob->data, seg->v, seg->n);
            ls_xnn_graph *g;
            ck_assert_msg(ls_xnn_decode(blob->data, blob->size, name, &g, &err) == 0, "%s: %s", name, err.msg);
            char tag[64];
            snprintf(tag, sizeof tag, "%s_%u", name, d);
            xt_agrees_with_flatc(blob, g, back->named_data, tag);
            for (uint32_t c = 1; c < g->n_constants; c++) { /* keyed by the SHA-256 of their bytes */
                const ls_blob *w = ls_named_data_get(back->named_data, g->constants[c].named_key);
                ck_assert_ptr_nonnull(w);
                char hex[65];
                ls_sha256_hex(w->data, w->size, hex);
                ck_assert_str_eq(hex, g->constants[c].named_key);
                ck_assert_uint_eq(w->size, g->constants[c].size);
            }
            ls_value_diff *diffs;
            uint32_t nd;
            int bad = ls_xnn_compare_twin(blob, back->named_data, NULL, 0, 7, 1e-5, 1e-5, &diffs, &nd, &err);
            ck_assert_msg(bad == 0, "%s delegate %u vs its twin: %s", name, d, bad < 0 ? err.msg : diffs[0].why);
            free(diffs);
            ls_xnn_graph_free(g);
            ls_blob_unref(blob);
        }
        ck_assert_uint_eq(seen, n_xnn);
        ls_pte_free(&pte);
        /* runs back and matches the sample as loaded */
        ls_compare_opts co = {-1, -1};
        ls_compare_run *cr = ls_compare_run_new(p, back, name, &co, &err);
        ck_assert_msg(cr != NULL, "%s", err.msg);
        ls_runner *r = pf_runner(back);
        for (int k = 0; k < pf_samples[s].steps; k++) {
            ls_value *in, *out;
            uint32_t nin, nout;
            ck_assert_msg(ls_make_inputs(back, 3, k, &in, &nin, &err) == 0, "%s", err.msg);
            ls_compare_run_inputs(cr, in, nin);
            ck_assert_msg(ls_runner_run(r, in, nin, &out, &nout, &err) == 0, "%s: %s", name, err.msg);
            ck_assert_msg(ls_compare_run_step(cr, out, nout, NULL, r, &err) == 0, "%s", err.msg);
            pf_values_free(in, nin);
            pf_values_free(out, nout);
        }
        uint32_t compared;
        ck_assert_msg(ls_compare_run_failed(cr, &compared) == 0, "%s: the exported program differs from the sample", name);
        ck_assert_uint_gt(compared, 0);
        ls_compare_run_free(cr);
        ls_runner_free(r);
        ls_program_unref(back);
        ls_history_free(&h);
        ls_program_unref(p);
    }
}
END_TEST

/* A real blob decoded and encoded again reads the same to flatc, field by field. */
START_TEST(xnn_encode_round_trips_real_blobs)
{
    if (!tu_shared("data/pte")) return;
    const char *files[] = {"cc_add", "cc_quantized", "djl_conv"};
    for (int f = 0; f < 3; f++) {
        ls_program *p = pf_load(pt_path(files[f], ".pte"));
        const ls_blob *b = p->subs[0].processed;
        ls_xnn_graph *g, *g2;
        ls_blob *again;
        ls_error err;
        ck_assert_int_eq(ls_xnn_decode(b->data, b->size, files[f], &g, &err), 0);
        ck_assert_int_eq(ls_xnn_encode(g, b->data + g->constant_data_offset, g->constant_data_size, &again, &err), 0);
        ck_assert_int_eq(ls_xnn_decode(again->data, again->size, "again", &g2, &err), 0);
        char tag[64];
        snprintf(tag, sizeof tag, "%s_again", files[f]);
        cJSON *a = xt_flatc_decode(b, g, files[f]), *c = xt_flatc_decode(again, g2, tag);
        if (a && c) {
            char where[256];
            ck_assert_msg(pt_json_equal(c, a, where, sizeof where), "%s: flatc reads the re-encoding differently at %s",
                          files[f], where);
        }
        cJSON_Delete(a);
        cJSON_Delete(c);
        ls_xnn_graph_free(g);
        ls_xnn_graph_free(g2);
        ls_blob_unref(again);
        ls_program_unref(p);
    }
}
END_TEST

/* conv → relu on x:[1, 2, 5, 5] lowered for XNNPACK: a transpose to NHWC, the convolution with
 * the relu as output_min_max [0, inf] and a [2, 3, 3, 2] (OHWI) filter, a transpose back; then
 * the blob matches its twin and the program. */
static ls_program *conv_relu_program(void)
{
    ls_builder *b = ls_builder_new("conv_relu", LS_DIALECT_EDGE);
    int64_t xs[4] = {1, 2, 5, 5}, ws[4] = {2, 2, 3, 3}, bs[1] = {2}, os[4] = {1, 2, 5, 5};
    uint32_t x = pf_user_input(b, "x", LS_DT_F32, 4, xs);
    float wv[36], bv[2] = {0.5f, -0.25f};
    for (int i = 0; i < 36; i++) wv[i] = (float)((i * 7) % 11 - 5) / 8.0f;
    uint32_t w = pf_input(b, "w", LS_IN_PARAMETER, "conv.weight", pf_f32(4, ws, wv));
    uint32_t bi = pf_input(b, "bias", LS_IN_PARAMETER, "conv.bias", pf_f32(1, bs, bv));
    int64_t one2[2] = {1, 1}, zero2[2] = {0, 0};
    ls_arg args[9] = {ls_arg_node(x), ls_arg_node(w), ls_arg_node(bi), ls_arg_ints(one2, 2), ls_arg_ints(one2, 2),
                      ls_arg_ints(one2, 2), ls_arg_bool(false), ls_arg_ints(zero2, 2), ls_arg_int(1)};
    uint32_t c = pf_call(b, "conv", LS_OP_convolution, args, 9, LS_DT_F32, 4, os);
    ls_arg ra[1] = {ls_arg_node(c)};
    uint32_t r = pf_call(b, "relu", LS_OP_relu, ra, 1, LS_DT_F32, 4, os);
    ls_arg ma[2] = {ls_arg_node(r), ls_arg_float(0.5)};
    uint32_t m = pf_call(b, "half", LS_OP_mul_Tensor, ma, 2, LS_DT_F32, 4, os);
    ls_build_output(b, &m, 1, NULL, NULL);
    return ls_builder_finish(b);
}

START_TEST(xnn_channels_last_fusion_and_scalars)
{
    ls_program *p = conv_relu_program();
    ls_history h;
    lower_xnnpack(p, &h);
    const ls_program *last = h.steps[h.n - 1].program;
    ck_assert_uint_eq(last->n_subs, 1);
    const ls_blob *blob = last->subs[0].processed;
    ls_xnn_graph *g;
    ls_error err;
    ck_assert_msg(ls_xnn_decode(blob->data, blob->size, "conv_relu", &g, &err) == 0, "%s", err.msg);
    /* transpose, conv (relu fused), multiply by the scalar (NHWC: all inputs are, the [1] broadcasts), transpose */
    ck_assert_uint_eq(g->n_nodes, 4);
    ck_assert_int_eq(g->nodes[0].type, LS_XNN_StaticTranspose);
    ck_assert_uint_eq(g->nodes[0].p.dims.v[1], 2);
    ck_assert_uint_eq(g->nodes[0].p.dims.v[3], 1);
    ck_assert_int_eq(g->nodes[1].type, LS_XNN_Conv2d);
    ck_assert(g->nodes[1].has_min_max && g->nodes[1].out_min == 0 && isinf(g->nodes[1].out_max));
    const ls_xnn_value *f = &g->values[ls_xnn_value_pos(g, g->nodes[1].in[1])];
    ck_assert(f->dims[0] == 2 && f->dims[1] == 3 && f->dims[2] == 3 && f->dims[3] == 2);
    ck_assert_uint_eq(g->nodes[1].p.conv.pad_left, 1);
    ck_assert_int_eq(g->nodes[2].type, LS_XNN_Multiply);
    const ls_xnn_value *sc = &g->values[ls_xnn_value_pos(g, g->nodes[2].in[1])];
    ck_assert(sc->constant_idx && sc->ndim == 1 && sc->dims[0] == 1);
    ck_assert_int_eq(g->nodes[3].type, LS_XNN_StaticTranspose);
    ck_assert_uint_eq(g->nodes[3].p.dims.v[1], 3);
    ck_assert_uint_eq(g->nodes[3].debug_handle, LS_XNN_DEFAULT_DEBUG_HANDLE);
    ls_value_diff *d;
    uint32_t nd;
    ck_assert_int_eq(ls_xnn_compare_twin(blob, last->named_data, NULL, 0, 1, 1e-5, 1e-6, &d, &nd, &err), 0);
    free(d);
    ls_xnn_graph_free(g);
    /* and the lowered program computes what the Edge one does */
    ls_runner *ra = pf_runner(p), *rb = pf_runner(last);
    ls_value *in, *oa, *ob;
    uint32_t nin, na, nb;
    ck_assert_int_eq(ls_make_inputs(p, 5, 0, &in, &nin, &err), 0);
    ck_assert_msg(ls_runner_run(ra, in, nin, &oa, &na, &err) == 0, "%s", err.msg);
    ck_assert_msg(ls_runner_run(rb, in, nin, &ob, &nb, &err) == 0, "%s", err.msg);
    ls_value_diff vd;
    ls_compare_values(&ob[0], &oa[0], 1e-5, 1e-6, &vd);
    ck_assert_msg(vd.pass, "%s", vd.why);
    pf_values_free(in, nin);
    pf_values_free(oa, na);
    pf_values_free(ob, nb);
    ls_runner_free(ra);
    ls_runner_free(rb);
    ls_history_free(&h);
    ls_program_unref(p);
}
END_TEST

Suite *xnnpack_write_suite(void)
{
    Suite *s = suite_create("xnnpack_write");
    TCase *tc = tcase_create("core");
    tcase_set_timeout(tc, 300);
    tcase_add_test(tc, xnn_every_sample_lowers_exports_and_runs_back);
    tcase_add_test(tc, xnn_encode_round_trips_real_blobs);
    tcase_add_test(tc, xnn_channels_last_fusion_and_scalars);
    suite_add_tcase(s, tc);
    return s;
}
