/* XnnpackBackend's preprocess (src/backends/xnnpack/xnn_write*.c): every sample lowered with
 * --backend xnnpack and exported is a .pte whose XNNPACK blobs flatc decodes with ExecuTorch's
 * schema as lowerscope's reader does, whose weights are in the named data under the SHA-256 of
 * their bytes, each blob matching its portable twin, and which runs back and matches the sample
 * as loaded. The modules the writer cannot write (XNNCos has a union tag newer than the schema
 * followed) are exactly those holding cos, stood in for by the bundled delegate; sin is XNNSin. Hand-worked cases of what the XNNPACK passes change: channels last around a
 * convolution, relu fused into output_min_max, a Python scalar as a [1] constant, cat of six
 * chained 5 + 2, a real blob re-encoded byte-equal in flatc's eyes. */
#include <check.h>
#include <math.h>
#include <stdlib.h>
#include <string.h>

#include "build.h"
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

/* The one delegate of a lowered program, decoded (free it with ls_xnn_graph_free). */
static ls_xnn_graph *only_blob(const ls_program *last, const char *name, const ls_blob **blob)
{
    ck_assert_uint_eq(last->n_subs, 1);
    *blob = last->subs[0].processed;
    ls_xnn_graph *g;
    ls_error err;
    ck_assert_msg(ls_xnn_decode((*blob)->data, (*blob)->size, name, &g, &err) == 0, "%s", err.msg);
    return g;
}

/* a and b give the same first output on seeded inputs (seed), within (rtol, atol). */
static void runs_agree(const ls_program *a, const ls_program *b, uint64_t seed, double rtol, double atol, const char *what)
{
    ls_runner *ra = pf_runner(a), *rb = pf_runner(b);
    ls_value *in, *oa, *ob;
    uint32_t nin, na, nb;
    ls_error err;
    ck_assert_int_eq(ls_make_inputs(a, seed, 0, &in, &nin, &err), 0);
    ck_assert_msg(ls_runner_run(ra, in, nin, &oa, &na, &err) == 0, "%s", err.msg);
    ck_assert_msg(ls_runner_run(rb, in, nin, &ob, &nb, &err) == 0, "%s", err.msg);
    ls_value_diff vd;
    ls_compare_values(&ob[0], &oa[0], rtol, atol, &vd);
    ck_assert_msg(vd.pass, "%s seed %llu: %s", what, (unsigned long long)seed, vd.why);
    pf_values_free(in, nin);
    pf_values_free(oa, na);
    pf_values_free(ob, nb);
    ls_runner_free(ra);
    ls_runner_free(rb);
}

static bool has_op(const ls_program *p, ls_op_id a, ls_op_id b)
{
    for (uint32_t i = 0; p && i < p->n_nodes; i++)
        if (p->nodes[i]->op && (p->nodes[i]->op->id == a || p->nodes[i]->op->id == b)) return true;
    return false;
}

/* The int8 tolerance: quantized_mlp's delegate computes its int8 GEMMs and convolution in
 * integers and requantizes, where the sample's Edge program dequantizes, computes in float and
 * quantizes; the two may differ by one step of an output's scale (at most 0.047 in the sample),
 * so its outputs and its twin are held to atol 0.05. Measured: 0 (the runs agree exactly). */
#define INT8_ATOL 0.05

START_TEST(xnn_every_sample_lowers_exports_and_runs_back)
{
    for (int s = 0; s < PF_N_SAMPLES; s++) {
        const char *name = pf_samples[s].name;
        bool int8 = !strcmp(name, "quantized_mlp");
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
            ck_assert_msg(xnn != has_op(sub->program, LS_OP_cos, LS_OP_cos), "%s %s: %s", name, sub->name,
                          xnn ? "an XNNPACK blob with cos" : "stood in for without cos");
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
            int bad = ls_xnn_compare_twin(blob, back->named_data, NULL, 0, 7, 1e-5, int8 ? INT8_ATOL : 1e-5, &diffs, &nd,
                                          &err);
            ck_assert_msg(bad == 0, "%s delegate %u vs its twin: %s", name, d, bad < 0 ? err.msg : diffs[0].why);
            free(diffs);
            ls_xnn_graph_free(g);
            ls_blob_unref(blob);
        }
        ck_assert_uint_eq(seen, n_xnn);
        ls_pte_free(&pte);
        /* runs back and matches the sample as loaded */
        ls_compare_opts co = {-1, int8 ? INT8_ATOL : -1};
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

/* A PT2E-style quantized two-layer MLP (x [4, 16] → 32 → relu → 8), as XNNPACKQuantizer leaves
 * it: static (q → dq before each linear, per-channel int8 weights through dequantize_per_channel,
 * float biases, q after; the first q and the last dq are taken on their own, as XNNConverts) or dynamic (choose_qparams
 * → q.tensor → dq.tensor of the float activation before each linear). */
static uint32_t qcall(ls_builder *b, ls_op_id op, ls_arg *a, uint16_t n, ls_dtype dt, int nd, const int64_t *dims)
{
    ls_tmeta m = ls_meta(dt, nd, dims);
    ls_arg *h = ls_malloc(sizeof *h * n);
    memcpy(h, a, sizeof *h * n);
    return ls_build_call(b, NULL, op, h, n, &m);
}
static uint32_t qconst(ls_builder *b, const char *name, ls_tensor *t)
{
    ls_tmeta m; ls_tensor_meta(t, &m);
    uint32_t id = ls_build_input(b, name, LS_IN_PARAMETER, name, true, &m, t);
    ls_tensor_unref(t);
    return id;
}
static ls_arg dt_arg(ls_dtype d) { ls_arg a = {.kind = LS_ARG_DTYPE}; a.v.i = d; return a; }
static ls_program *qmlp(bool dynamic)
{
    ls_builder *b = ls_builder_new("qmlp", LS_DIALECT_EDGE);
    int64_t xs[2] = {4, 16};
    ls_tmeta xm = ls_meta(LS_DT_F32, 2, xs);
    uint32_t x = ls_build_input(b, "x", LS_IN_USER_INPUT, NULL, false, &xm, NULL);
    uint32_t h = x;
    int64_t widths[3] = {16, 32, 8};
    float s_act[3] = {0.02f, 0.03f, 0.05f};
    int zp_act[3] = {3, -128, 5};
    uint32_t seed = 1;
    for (int l = 0; l < 2; l++) {
        int64_t N = widths[l + 1], K = widths[l], wd[2] = {N, K}, od[2] = {4, N}, nd1[1] = {N};
        ls_tensor *wq = ls_tensor_alloc(LS_DT_I8, 2, wd), *sc = ls_tensor_alloc(LS_DT_F32, 1, nd1), *zp = ls_tensor_alloc(LS_DT_I64, 1, nd1);
        for (int64_t i = 0; i < N * K; i++) { seed = seed * 1103515245u + 12345u; ((int8_t *)wq->data)[i] = (int8_t)((seed >> 16) % 255 - 127); }
        for (int64_t i = 0; i < N; i++) { ((float *)sc->data)[i] = 0.001f + 0.0001f * (float)i; ((int64_t *)zp->data)[i] = 0; }
        char nm[32];
        snprintf(nm, sizeof nm, "w%d_q", l); uint32_t w = qconst(b, nm, wq);
        snprintf(nm, sizeof nm, "w%d_scale", l); uint32_t ws = qconst(b, nm, sc);
        snprintf(nm, sizeof nm, "w%d_zp", l); uint32_t wz = qconst(b, nm, zp);
        ls_tensor *bias = ls_tensor_alloc(LS_DT_F32, 1, nd1);
        for (int64_t i = 0; i < N; i++) ((float *)bias->data)[i] = 0.01f * (float)(i % 5) - 0.02f;
        snprintf(nm, sizeof nm, "b%d", l); uint32_t bi = qconst(b, nm, bias);
        uint32_t in;
        if (dynamic) {
            ls_arg ca[5] = {ls_arg_node(h), ls_arg_int(-128), ls_arg_int(127), ls_arg_float(1.1920928955078125e-07), dt_arg(LS_DT_I8)};
            int64_t one = 1;
            ls_tmeta ms[2] = {ls_meta(LS_DT_F64, 1, &one), ls_meta(LS_DT_I64, 1, &one)};
            ls_arg *ch = ls_malloc(sizeof *ch * 5); memcpy(ch, ca, sizeof ca);
            uint32_t cq = ls_build_call(b, NULL, LS_OP_choose_qparams_tensor, ch, 5, NULL);
            ls_node *cn = ls_program_node(ls_builder_program(b), cq);
            ls_node_set_vals(cn, LS_VAL_TENSORS, ms, 2);
            ls_arg g0[2] = {ls_arg_node(cq), ls_arg_int(0)}, g1[2] = {ls_arg_node(cq), ls_arg_int(1)};
            uint32_t s0 = qcall(b, LS_OP_getitem, g0, 2, LS_DT_F64, 1, &one), z0 = qcall(b, LS_OP_getitem, g1, 2, LS_DT_I64, 1, &one);
            ls_arg qa[6] = {ls_arg_node(h), ls_arg_node(s0), ls_arg_node(z0), ls_arg_int(-128), ls_arg_int(127), dt_arg(LS_DT_I8)};
            uint32_t q = qcall(b, LS_OP_quantize_per_tensor_tensor, qa, 6, LS_DT_I8, 2, (int64_t[]){4, K});
            ls_arg da[7] = {ls_arg_node(q), ls_arg_node(s0), ls_arg_node(z0), ls_arg_int(-128), ls_arg_int(127), dt_arg(LS_DT_I8), ls_arg_none()};
            in = qcall(b, LS_OP_dequantize_per_tensor_tensor, da, 7, LS_DT_F32, 2, (int64_t[]){4, K});
        } else {
            if (l == 0) {
                ls_arg qa[6] = {ls_arg_node(h), ls_arg_float(s_act[0]), ls_arg_int(zp_act[0]), ls_arg_int(-128), ls_arg_int(127), dt_arg(LS_DT_I8)};
                h = qcall(b, LS_OP_quantize_per_tensor, qa, 6, LS_DT_I8, 2, (int64_t[]){4, K});
            }
            ls_arg da[7] = {ls_arg_node(h), ls_arg_float(s_act[l]), ls_arg_int(zp_act[l]), ls_arg_int(-128), ls_arg_int(127), dt_arg(LS_DT_I8), ls_arg_none()};
            in = qcall(b, LS_OP_dequantize_per_tensor, da, 7, LS_DT_F32, 2, (int64_t[]){4, K});
        }
        ls_arg wa[8] = {ls_arg_node(w), ls_arg_node(ws), ls_arg_node(wz), ls_arg_int(0), ls_arg_int(-127), ls_arg_int(127), dt_arg(LS_DT_I8), ls_arg_none()};
        uint32_t dw = qcall(b, LS_OP_dequantize_per_channel, wa, 8, LS_DT_F32, 2, wd);
        ls_arg la[3] = {ls_arg_node(in), ls_arg_node(dw), ls_arg_node(bi)};
        h = qcall(b, LS_OP_linear, la, 3, LS_DT_F32, 2, od);
        if (l == 0) { ls_arg ra[1] = {ls_arg_node(h)}; h = qcall(b, LS_OP_relu, ra, 1, LS_DT_F32, 2, od); }
        if (!dynamic) {
            ls_arg qa[6] = {ls_arg_node(h), ls_arg_float(s_act[l + 1]), ls_arg_int(zp_act[l + 1]), ls_arg_int(-128), ls_arg_int(127), dt_arg(LS_DT_I8)};
            h = qcall(b, LS_OP_quantize_per_tensor, qa, 6, LS_DT_I8, 2, od);
            if (l == 1) {
                ls_arg da[7] = {ls_arg_node(h), ls_arg_float(s_act[2]), ls_arg_int(zp_act[2]), ls_arg_int(-128), ls_arg_int(127), dt_arg(LS_DT_I8), ls_arg_none()};
                h = qcall(b, LS_OP_dequantize_per_tensor, da, 7, LS_DT_F32, 2, od);
            }
        }
    }
    ls_build_output(b, &h, 1, NULL, NULL);
    return ls_builder_finish(b);
}

/* Dynamic quantization in the blob is per token, whatever the Edge graph says: row r of the
 * delegate's output is what the Edge program (per tensor) gives when every row of x is row r
 * (then the tensor's range is the row's), but for a few int8 steps where XNNPACK's inverse-scale
 * arithmetic rounds otherwise than choose_qparams' (each worth at most span·0.0025 here): held
 * to 0.005·span. x's rows span 0.01 to 100, so per tensor would round all of row 0 to zero,
 * some 0.02 off. */
static void per_token_rows(const ls_program *edge, const ls_program *lowered)
{
    int64_t xs[2] = {4, 16};
    float xv[64], rv[64];
    const float span[4] = {0.01f, 1, 10, 100};
    for (int i = 0; i < 64; i++) xv[i] = span[i / 16] * (float)((i * 5) % 9 - 4) / 4.0f;
    ls_runner *rl = pf_runner(lowered), *re = pf_runner(edge);
    ls_error err;
    ls_value x = ls_value_tensor(pf_f32(2, xs, xv)), *y, *yr;
    uint32_t ny, nr;
    ck_assert_msg(ls_runner_run(rl, &x, 1, &y, &ny, &err) == 0, "%s", err.msg);
    for (int r = 0; r < 4; r++) {
        for (int i = 0; i < 64; i++) rv[i] = xv[r * 16 + i % 16];
        ls_value xr = ls_value_tensor(pf_f32(2, xs, rv));
        ck_assert_msg(ls_runner_run(re, &xr, 1, &yr, &nr, &err) == 0, "%s", err.msg);
        const float *a = y[0].t->data, *b = yr[0].t->data;
        for (int j = 0; j < 8; j++)
            ck_assert_msg(fabsf(a[r * 8 + j] - b[r * 8 + j]) <= 1e-5f + 0.005f * span[r],
                          "row %d out %d: the delegate gives %g, per token %g", r, j, a[r * 8 + j], b[r * 8 + j]);
        pf_values_free(yr, nr);
        ls_value_release(&xr);
    }
    pf_values_free(y, ny);
    ls_value_release(&x);
    ls_runner_free(rl);
    ls_runner_free(re);
}

/* Static: the blob computes in int8 exactly what the Edge program's quantize/dequantize kernels
 * give (the output is the q's int8, dequantized on the CPU), so they agree to float32's
 * tolerance; its twin too. Dynamic: the blob's qdint8 Converts are per token
 * (num_nonbatch_dims 1, as quant_params.py writes and defineTensor requires), the Edge
 * program's choose_qparams per tensor: seeded inputs (rows of one scale) agree to atol 0.02
 * (differences of 0.004 seen), per_token_rows holds each row to the Edge program exactly; the twin
 * keeps x float, the int8 step of the activations away: atol 0.02. A blob saying 2 non-batch
 * dims is refused, as defineTensor refuses it. */
START_TEST(xnn_quantized_mlp)
{
    for (int dyn = 0; dyn < 2; dyn++) {
        ls_program *p = qmlp(dyn);
        ls_history h;
        lower_xnnpack(p, &h);
        const ls_program *last = h.steps[h.n - 1].program;
        const ls_blob *blob = last->n_subs == 1 ? last->subs[0].processed : NULL;
        ck_assert_ptr_nonnull(blob);
        ck_assert(ls_xnn_is_blob(blob->data, blob->size));
        ls_xnn_graph *g = only_blob(last, "qmlp", &blob);
        ls_error err;
        uint32_t fcs = 0;
        for (uint32_t i = 0; i < g->n_nodes; i++) {
            const ls_xnn_node *n = &g->nodes[i];
            if (n->type != LS_XNN_FullyConnected) continue;
            fcs++;
            const ls_xnn_value *x = &g->values[ls_xnn_value_pos(g, n->in[0])], *w = &g->values[ls_xnn_value_pos(g, n->in[1])];
            const ls_xnn_value *b = &g->values[ls_xnn_value_pos(g, n->in[2])], *o = &g->values[ls_xnn_value_pos(g, n->out[0])];
            ck_assert_int_eq(x->datatype, dyn ? LS_XNN_DT_QDINT8 : LS_XNN_DT_QINT8);
            ck_assert_int_eq(w->datatype, LS_XNN_DT_QCINT8);
            ck_assert(w->quant == LS_XNN_Q_PER_CHANNEL && w->channel_dim == 0 && w->n_scales == w->dims[0]);
            ck_assert_int_eq(b->datatype, dyn ? LS_XNN_DT_FP32 : LS_XNN_DT_QCINT32);
            ck_assert_int_eq(o->datatype, dyn ? LS_XNN_DT_FP32 : LS_XNN_DT_QINT8);
            if (!dyn) ck_assert(fabsf(b->scales[1] - x->scale * w->scales[1]) <= 1e-9f); /* QuantParams.from_bias */
            if (fcs == 1) ck_assert(n->has_min_max && n->out_min == 0); /* the relu, fused */
            if (dyn) ck_assert(x->quant == LS_XNN_Q_PER_TOKEN_DYNAMIC && x->num_nonbatch_dims == 1);
        }
        ck_assert_uint_eq(fcs, 2);
        if (!dyn) { /* x's q and the last dq, taken on their own (QuantizedPerTensorConfig,
                     * DeQuantizedPerTensorConfig): XNNConverts at the blob's edges, as in the
                     * real cc_quantized.pte; the delegate reads and gives float32 */
            const ls_xnn_node *first = &g->nodes[0], *last_n = &g->nodes[g->n_nodes - 1];
            ck_assert_int_eq(first->type, LS_XNN_Convert);
            ck_assert_int_eq(last_n->type, LS_XNN_Convert);
            const ls_xnn_value *qin = &g->values[ls_xnn_value_pos(g, first->out[0])];
            ck_assert_int_eq(g->values[ls_xnn_value_pos(g, first->in[0])].datatype, LS_XNN_DT_FP32);
            ck_assert(qin->datatype == LS_XNN_DT_QINT8 && qin->scale == 0.02f && qin->zero_point == 3);
            ck_assert_int_eq(g->values[ls_xnn_value_pos(g, last_n->in[0])].datatype, LS_XNN_DT_QINT8);
            ck_assert_int_eq(g->values[ls_xnn_value_pos(g, last_n->out[0])].datatype, LS_XNN_DT_FP32);
            ck_assert(!has_op(last, LS_OP_quantize_per_tensor, LS_OP_dequantize_per_tensor));
        }
        if (dyn) {
            ls_xnn_value *x = NULL;
            for (uint32_t i = 0; i < g->n_values && !x; i++)
                if (g->values[i].datatype == LS_XNN_DT_QDINT8) x = &g->values[i];
            ck_assert_ptr_nonnull(x);
            x->num_nonbatch_dims = 2;
            ls_blob *bad;
            ck_assert_int_eq(ls_xnn_encode(g, NULL, 0, &bad, &err), 0);
            ls_xnn_graph *g2;
            ck_assert_int_eq(ls_xnn_decode(bad->data, bad->size, "qmlp2", &g2, &err), -1);
            ck_assert_msg(tu_contains(err.msg, "num_nonbatch_dims 2") && tu_contains(err.msg, "per token"), "%s", err.msg);
            ls_blob_unref(bad);
            per_token_rows(p, last);
        }
        ls_xnn_graph_free(g);
        for (uint64_t seed = 0; seed < 4; seed++) {
            runs_agree(p, last, seed, 1e-5, dyn ? 0.02 : 1e-5, dyn ? "dynamic" : "static");
            ls_value_diff *d;
            uint32_t nd;
            int bad = ls_xnn_compare_twin(blob, last->named_data, NULL, 0, seed, 0, dyn ? 0.02 : 1e-6, &d, &nd, &err);
            ck_assert_msg(bad == 0, "twin: %s", bad < 0 ? err.msg : d[0].why);
            free(d);
        }
        ls_history_free(&h);
        ls_program_unref(p);
    }
}
END_TEST

START_TEST(xnn_channels_last_fusion_and_scalars)
{
    ls_program *p = conv_relu_program();
    ls_history h;
    lower_xnnpack(p, &h);
    const ls_program *last = h.steps[h.n - 1].program;
    const ls_blob *blob;
    ls_xnn_graph *g = only_blob(last, "conv_relu", &blob);
    ls_error err;
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
    runs_agree(p, last, 5, 1e-5, 1e-6, "conv_relu");
    ls_history_free(&h);
    ls_program_unref(p);
}
END_TEST

/* A convolution of x [1, 2, 5, 5] padded 1 with a 3x3 filter of cin channels to cout, weights
 * from a seed. */
static uint32_t conv3x3(ls_builder *b, const char *name, uint32_t x, int64_t cin, int64_t cout, int seed)
{
    int64_t ws[4] = {cout, cin, 3, 3}, bs[1] = {cout}, os[4] = {1, cout, 5, 5};
    float wv[4 * 4 * 9], bv[4];
    for (int i = 0; i < cout * cin * 9; i++) wv[i] = (float)((i * 7 + seed) % 11 - 5) / 8.0f;
    for (int i = 0; i < cout; i++) bv[i] = 0.25f * (float)(i - seed % 3);
    char wn[32], bn[32];
    snprintf(wn, sizeof wn, "%s.weight", name);
    snprintf(bn, sizeof bn, "%s.bias", name);
    uint32_t w = pf_input(b, wn, LS_IN_PARAMETER, wn, pf_f32(4, ws, wv));
    uint32_t bi = pf_input(b, bn, LS_IN_PARAMETER, bn, pf_f32(1, bs, bv));
    int64_t one2[2] = {1, 1}, zero2[2] = {0, 0};
    ls_arg args[9] = {ls_arg_node(x), ls_arg_node(w), ls_arg_node(bi), ls_arg_ints(one2, 2), ls_arg_ints(one2, 2),
                      ls_arg_ints(one2, 2), ls_arg_bool(false), ls_arg_ints(zero2, 2), ls_arg_int(1)};
    return pf_call(b, name, LS_OP_convolution, args, 9, LS_DT_F32, 4, os);
}

/* Channels last kept through slice, cat and permute, as channels_last_tagged_reshape_pass.py
 * tags a node NHWC when its inputs are, with the visitors' remapping worked by hand from
 * PERM_NCHW_TO_NHWC = [0, 2, 3, 1] and PERM_NHWC_TO_NCHW = [0, 3, 1, 2]:
 * c1 = conv(x) [1, 4, 5, 5]; s = c1[:, 1:3] (op_slice_copy.py: dim 1 sits at 3, offsets
 * [0, 0, 0, 1], sizes [1, 5, 5, 2]); c2 = conv(s); k = cat([s, c2], 1) (op_cat.py: axis 3);
 * p = permute(k, [0, 1, 3, 2]) (op_permute.py: [P[d] for d in perm] = [0, 3, 2, 1], read at
 * [0, 2, 3, 1]: [0, 2, 1, 3]). One transpose in, one out: 7 nodes, where transposing back
 * before each shape op took 9. */
START_TEST(xnn_channels_last_through_shape_ops)
{
    ls_builder *b = ls_builder_new("nhwc_chain", LS_DIALECT_EDGE);
    int64_t xs[4] = {1, 2, 5, 5}, ss[4] = {1, 2, 5, 5}, ks[4] = {1, 4, 5, 5};
    uint32_t x = pf_user_input(b, "x", LS_DT_F32, 4, xs);
    uint32_t c1 = conv3x3(b, "c1", x, 2, 4, 1);
    ls_arg sa[5] = {ls_arg_node(c1), ls_arg_int(1), ls_arg_int(1), ls_arg_int(3), ls_arg_int(1)};
    uint32_t sl = pf_call(b, "s", LS_OP_slice_copy_Tensor, sa, 5, LS_DT_F32, 4, ss);
    uint32_t c2 = conv3x3(b, "c2", sl, 2, 2, 4);
    uint32_t both[2] = {sl, c2};
    ls_arg ca[2] = {ls_arg_nodes(both, 2, false), ls_arg_int(1)};
    uint32_t k = pf_call(b, "k", LS_OP_cat, ca, 2, LS_DT_F32, 4, ks);
    int64_t perm[4] = {0, 1, 3, 2};
    ls_arg pa[2] = {ls_arg_node(k), ls_arg_ints(perm, 4)};
    uint32_t pm = pf_call(b, "p", LS_OP_permute_copy, pa, 2, LS_DT_F32, 4, ks);
    ls_build_output(b, &pm, 1, NULL, NULL);
    ls_program *p = ls_builder_finish(b);
    ls_history h;
    lower_xnnpack(p, &h);
    const ls_program *last = h.steps[h.n - 1].program;
    const ls_blob *blob = last->n_subs == 1 ? last->subs[0].processed : NULL;
    ck_assert_ptr_nonnull(blob);
    ck_assert(ls_xnn_is_blob(blob->data, blob->size));
    ls_xnn_graph *g = only_blob(last, "nhwc_chain", &blob);
    ls_error err;
    const uint8_t want[7] = {LS_XNN_StaticTranspose, LS_XNN_Conv2d, LS_XNN_StaticSlice, LS_XNN_Conv2d,
                             LS_XNN_Concatenate2, LS_XNN_StaticTranspose, LS_XNN_StaticTranspose};
    ck_assert_uint_eq(g->n_nodes, 7);
    for (int i = 0; i < 7; i++) ck_assert_msg(g->nodes[i].type == want[i], "node %d is %s", i, ls_xnn_node_type_name(g->nodes[i].type));
    const ls_xnn_node *s_n = &g->nodes[2], *c_n = &g->nodes[4], *p_n = &g->nodes[5], *back = &g->nodes[6];
    const uint32_t s_off[4] = {0, 0, 0, 1}, s_size[4] = {1, 5, 5, 2}, p_perm[4] = {0, 2, 1, 3}, nchw[4] = {0, 3, 1, 2};
    for (int i = 0; i < 4; i++) {
        ck_assert_uint_eq(s_n->p.slice.offsets[i], s_off[i]);
        ck_assert_uint_eq(s_n->p.slice.sizes[i], s_size[i]);
        ck_assert_uint_eq(p_n->p.dims.v[i], p_perm[i]);
        ck_assert_uint_eq(back->p.dims.v[i], nchw[i]);
    }
    ck_assert_uint_eq(c_n->p.axis, 3);
    xt_agrees_with_flatc(blob, g, last->named_data, "nhwc_chain");
    ls_xnn_graph_free(g);
    for (uint64_t seed = 0; seed < 3; seed++) {
        runs_agree(p, last, seed, 1e-5, 1e-5, "nhwc_chain");
        ls_value_diff *d;
        uint32_t nd;
        ck_assert_int_eq(ls_xnn_compare_twin(blob, last->named_data, NULL, 0, seed, 1e-5, 1e-5, &d, &nd, &err), 0);
        free(d);
    }
    ls_history_free(&h);
    ls_program_unref(p);
}
END_TEST

/* A convolution of one input channel (groups 1, 3 output channels, 2x2) is what op_conv2d.py
 * calls depthwise (group_input_channels 1): XNNDepthwiseConv2d with groups 1, group_in 1,
 * group_out 3 and the filter's N and C swapped, [1, 2, 2, 3]; it computes what the Edge
 * convolution does. */
START_TEST(xnn_one_channel_conv_is_depthwise)
{
    ls_builder *b = ls_builder_new("mono", LS_DIALECT_EDGE);
    int64_t xs[4] = {1, 1, 3, 3}, ws[4] = {3, 1, 2, 2}, os[4] = {1, 3, 2, 2};
    uint32_t x = pf_user_input(b, "x", LS_DT_F32, 4, xs);
    float wv[12];
    for (int i = 0; i < 12; i++) wv[i] = (float)(i % 5) - 1.5f;
    uint32_t w = pf_input(b, "w", LS_IN_PARAMETER, "conv.weight", pf_f32(4, ws, wv));
    int64_t one2[2] = {1, 1}, zero2[2] = {0, 0};
    ls_arg args[9] = {ls_arg_node(x), ls_arg_node(w), ls_arg_none(), ls_arg_ints(one2, 2), ls_arg_ints(zero2, 2),
                      ls_arg_ints(one2, 2), ls_arg_bool(false), ls_arg_ints(zero2, 2), ls_arg_int(1)};
    uint32_t c = pf_call(b, "conv", LS_OP_convolution, args, 9, LS_DT_F32, 4, os);
    ls_build_output(b, &c, 1, NULL, NULL);
    ls_program *p = ls_builder_finish(b);
    ls_history h;
    lower_xnnpack(p, &h);
    const ls_program *last = h.steps[h.n - 1].program;
    const ls_blob *blob;
    ls_xnn_graph *g = only_blob(last, "mono", &blob);
    const ls_xnn_node *conv = NULL;
    for (uint32_t i = 0; i < g->n_nodes; i++)
        if (g->nodes[i].type == LS_XNN_DepthwiseConv2d || g->nodes[i].type == LS_XNN_Conv2d) conv = &g->nodes[i];
    ck_assert_ptr_nonnull(conv);
    ck_assert_int_eq(conv->type, LS_XNN_DepthwiseConv2d);
    ck_assert(conv->p.conv.groups == 1 && conv->p.conv.group_in == 1 && conv->p.conv.group_out == 3);
    const ls_xnn_value *f = &g->values[ls_xnn_value_pos(g, conv->in[1])];
    ck_assert(f->dims[0] == 1 && f->dims[1] == 2 && f->dims[2] == 2 && f->dims[3] == 3);
    ck_assert_uint_eq(conv->in[2], LS_XNN_INVALID_ID);
    xt_agrees_with_flatc(blob, g, last->named_data, "mono");
    ls_xnn_graph_free(g);
    for (uint64_t seed = 0; seed < 3; seed++) runs_agree(p, last, seed, 1e-5, 1e-6, "mono");
    ls_history_free(&h);
    ls_program_unref(p);
}
END_TEST

/* sin(x) on x = [0, π/6, π/2, -π/2, 7π/6, π/4] lowered for XNNPACK: one XNNSin (union tag 45 in
 * runtime_schema.fbs at pytorch/executorch 0144bfeb, which op_sin.py writes), which flatc reads
 * as XNNSin with tests/schema/xnnpack.fbs, and which gives [0, 1/2, 1, -1, -1/2, √2/2]. */
START_TEST(xnn_sin_is_xnnsin)
{
    ls_builder *b = ls_builder_new("sine", LS_DIALECT_EDGE);
    int64_t xs[1] = {6};
    uint32_t x = pf_user_input(b, "x", LS_DT_F32, 1, xs);
    ls_arg sa[1] = {ls_arg_node(x)};
    uint32_t y = pf_call(b, "sin", LS_OP_sin, sa, 1, LS_DT_F32, 1, xs);
    ls_build_output(b, &y, 1, NULL, NULL);
    ls_program *p = ls_builder_finish(b);
    ls_history h;
    lower_xnnpack(p, &h);
    const ls_program *last = h.steps[h.n - 1].program;
    const ls_blob *blob = last->n_subs == 1 ? last->subs[0].processed : NULL;
    ck_assert_ptr_nonnull(blob);
    ck_assert_msg(ls_xnn_is_blob(blob->data, blob->size), "sin was not written as an XNNPACK blob");
    ls_xnn_graph *g = only_blob(last, "sine", &blob);
    ls_error err;
    ck_assert_uint_eq(g->n_nodes, 1);
    ck_assert_int_eq(g->nodes[0].type, 45);
    ck_assert_str_eq(ls_xnn_node_type_name(g->nodes[0].type), "XNNSin");
    xt_agrees_with_flatc(blob, g, last->named_data, "sine");
    ls_xnn_graph_free(g);
    const double pi = 3.14159265358979323846;
    float xv[6] = {0, (float)(pi / 6), (float)(pi / 2), (float)(-pi / 2), (float)(7 * pi / 6), (float)(pi / 4)};
    const float want[6] = {0, 0.5f, 1, -1, -0.5f, 0.70710678f};
    ls_value in = ls_value_tensor(pf_f32(1, xs, xv)), *out;
    uint32_t nout;
    ls_runner *r = pf_runner(last);
    ck_assert_msg(ls_runner_run(r, &in, 1, &out, &nout, &err) == 0, "%s", err.msg);
    ck_assert_uint_eq(nout, 1);
    for (int i = 0; i < 6; i++)
        ck_assert_msg(fabsf(((const float *)out[0].t->data)[i] - want[i]) < 1e-6f, "sin(x[%d]) = %g, not %g", i,
                      ((const float *)out[0].t->data)[i], want[i]);
    ls_value_diff *d;
    uint32_t nd;
    ck_assert_int_eq(ls_xnn_compare_twin(blob, last->named_data, NULL, 0, 2, 1e-5, 1e-6, &d, &nd, &err), 0);
    free(d);
    pf_values_free(out, nout);
    ls_value_release(&in);
    ls_runner_free(r);
    ls_history_free(&h);
    ls_program_unref(p);
}
END_TEST

/* The writer's failure path (xnn_write.c, lsw_fail / lsw_needs): a submodule it cannot write
 * fails its preprocess with the module and the node named, no blob and no specs, and the error's
 * kind says which exit it is: an int64 input is valid but not an XNNPACK value (needs, exit 3), a
 * permute whose dims do not match its input's rank is a bad program (input, exit 2), and an
 * operator lowerscope does not know is one the writer lacks (needs). The partitioner never gives
 * these to the writer; a program given to to_backend by hand can. */
START_TEST(xnn_write_failures_name_the_node)
{
    const ls_backend *be = ls_backend_find("XnnpackBackend");
    ck_assert_ptr_nonnull(be);
    for (int c = 0; c < 3; c++) {
        ls_builder *b = ls_builder_new("lowered_module_7", LS_DIALECT_EDGE);
        int64_t xs[2] = {2, 3};
        uint32_t x = pf_user_input(b, "x", c == 0 ? LS_DT_I64 : LS_DT_F32, 2, xs);
        uint32_t y;
        if (c == 1) {
            int64_t one = 1;
            ls_arg pa[2] = {ls_arg_node(x), ls_arg_ints(&one, 1)};
            y = pf_call(b, "aten_permute_copy_default", LS_OP_permute_copy, pa, 2, LS_DT_F32, 2, xs);
        } else {
            ls_arg aa[2] = {ls_arg_node(x), ls_arg_node(x)};
            y = pf_call(b, "aten_mul_tensor", LS_OP_mul_Tensor, aa, 2, c == 0 ? LS_DT_I64 : LS_DT_F32, 2, xs);
        }
        ls_build_output(b, &y, 1, NULL, NULL);
        ls_program *p = ls_builder_finish(b);
        if (c == 2) ls_program_edit(p, (uint32_t)ls_program_pos(p, y))->op = NULL; /* an unknown target: no op */
        ls_blob *blob = (ls_blob *)1;
        ls_compile_spec *specs = (ls_compile_spec *)1;
        uint32_t nspecs = 7;
        ls_named_data *nd = ls_named_data_new();
        ls_error err = {0};
        ck_assert_int_eq(be->preprocess(p, &blob, &specs, &nspecs, nd, &err), -1);
        ck_assert_ptr_null(blob);
        ck_assert_msg(tu_contains(err.msg, "XnnpackBackend: preprocess `lowered_module_7`: node `"), "%s", err.msg);
        static const char *const want[] = {"node `x` (", "node `aten_permute_copy_default` (", "node `aten_mul_tensor` ("};
        static const char *const why[] = {"a int64 input: XNNPACK values here are float32 or float16",
                                          "dims do not match the input's rank", "an operator lowerscope does not know"};
        ck_assert_msg(tu_contains(err.msg, want[c]) && tu_contains(err.msg, why[c]), "case %d: %s", c, err.msg);
        ck_assert_int_eq(err.code, c == 1 ? LS_ERR_INPUT : LS_ERR_NEEDS);
        ck_assert_uint_eq(ls_named_data_count(nd), 0); /* nothing stored for a module not written */
        ls_named_data_unref(nd);
        ls_program_unref(p);
    }
}
END_TEST

/* A q and a dq with nothing around them, each a partition of its own that merges into one
 * (QuantizedPerTensorConfig, DeQuantizedPerTensorConfig): one blob of two XNNConverts, the q's
 * output a qint8 external output, the dq's input a qint8 external input with its parameters.
 * Worked by hand: x = [-0.1, 0.02, 0.0749, 6.4] at scale 0.05, zero point 0 quantizes to
 * [-2, 0, 1, 127] (0.4 rounds to 0, 1.498 to 1, 128 saturates); y = [-128, -3, 0, 127] at scale
 * 0.1, zero point -3 dequantizes to [-12.5, 0, 0.3, 13]. */
START_TEST(xnn_lone_qdq)
{
    ls_builder *b = ls_builder_new("lone_qdq", LS_DIALECT_EDGE);
    int64_t four = 4;
    uint32_t x = pf_user_input(b, "x", LS_DT_F32, 1, &four), y = pf_user_input(b, "y", LS_DT_I8, 1, &four);
    ls_arg qa[6] = {ls_arg_node(x), ls_arg_float(0.05), ls_arg_int(0), ls_arg_int(-128), ls_arg_int(127), dt_arg(LS_DT_I8)};
    ls_arg da[7] = {ls_arg_node(y), ls_arg_float(0.1), ls_arg_int(-3), ls_arg_int(-128), ls_arg_int(127), dt_arg(LS_DT_I8), ls_arg_none()};
    uint32_t o[2] = {qcall(b, LS_OP_quantize_per_tensor, qa, 6, LS_DT_I8, 1, &four),
                     qcall(b, LS_OP_dequantize_per_tensor, da, 7, LS_DT_F32, 1, &four)};
    ls_build_output(b, o, 2, NULL, NULL);
    ls_program *p = ls_builder_finish(b);
    ls_history h;
    lower_xnnpack(p, &h);
    const ls_program *last = h.steps[h.n - 1].program;
    ck_assert_uint_eq(last->n_subs, 1);
    ck_assert(!has_op(last, LS_OP_quantize_per_tensor, LS_OP_dequantize_per_tensor));
    const ls_blob *blob = last->subs[0].processed;
    ck_assert(ls_xnn_is_blob(blob->data, blob->size));
    ls_xnn_graph *g;
    ls_error err;
    ck_assert_msg(ls_xnn_decode(blob->data, blob->size, "lone_qdq", &g, &err) == 0, "%s", err.msg);
    ck_assert_uint_eq(g->n_nodes, 2);
    for (uint32_t i = 0; i < 2; i++) ck_assert_int_eq(g->nodes[i].type, LS_XNN_Convert);
    for (uint32_t i = 0; i < g->n_values; i++) {
        const ls_xnn_value *v = &g->values[i];
        if (v->flags & LS_XNN_FLAG_EXTERNAL_INPUT && v->external_id == 1)
            ck_assert(v->datatype == LS_XNN_DT_QINT8 && fabsf(v->scale - 0.1f) < 1e-9f && v->zero_point == -3);
        if (v->flags & LS_XNN_FLAG_EXTERNAL_OUTPUT && v->external_id == 2)
            ck_assert(v->datatype == LS_XNN_DT_QINT8 && fabsf(v->scale - 0.05f) < 1e-9f && v->zero_point == 0);
    }
    xt_agrees_with_flatc(blob, g, last->named_data, "lone_qdq");
    ls_xnn_graph_free(g);
    float xv[4] = {-0.1f, 0.02f, 0.0749f, 6.4f};
    ls_tensor *yt = ls_tensor_alloc(LS_DT_I8, 1, &four);
    const int8_t yv[4] = {-128, -3, 0, 127};
    memcpy(yt->data, yv, 4);
    ls_value in[2] = {ls_value_tensor(pf_f32(1, &four, xv)), ls_value_tensor(yt)}, *out;
    uint32_t nout;
    ls_runner *r = pf_runner(last);
    ck_assert_msg(ls_runner_run(r, in, 2, &out, &nout, &err) == 0, "%s", err.msg);
    ck_assert_uint_eq(nout, 2);
    ck_assert_int_eq(out[0].t->dtype, LS_DT_I8);
    const int8_t wq[4] = {-2, 0, 1, 127};
    const float wd[4] = {-12.5f, 0, 0.3f, 13};
    for (int i = 0; i < 4; i++) {
        ck_assert_int_eq(((const int8_t *)out[0].t->data)[i], wq[i]);
        ck_assert_float_eq_tol(((const float *)out[1].t->data)[i], wd[i], 1e-6f);
    }
    ls_value_diff *d;
    uint32_t nd;
    ck_assert_int_eq(ls_xnn_compare_twin(blob, last->named_data, NULL, 0, 2, 0, 0, &d, &nd, &err), 0);
    free(d);
    pf_values_free(out, nout);
    ls_value_release(&in[0]);
    ls_value_release(&in[1]);
    ls_runner_free(r);
    ls_history_free(&h);
    ls_program_unref(p);
}
END_TEST

/* conv → _softmax(dim=-1) on x [1, 2, 5, 5]: the softmax takes its input back in NCHW.
 * channels_last_tagged_reshape_pass.py would tag it NHWC (it is in neither memory-sensitive set)
 * and op_softmax.py checks only the logical dim, so ExecuTorch's blob would run XNNSoftmax over
 * C; lowerscope keeps the Edge program's numbers (written NHWC, element 59 came out 0.669 where
 * the Edge program gives 0.051). */
START_TEST(xnn_softmax_after_conv_is_nchw)
{
    ls_builder *b = ls_builder_new("sm", LS_DIALECT_EDGE);
    int64_t xs[4] = {1, 2, 5, 5};
    uint32_t x = pf_user_input(b, "x", LS_DT_F32, 4, xs);
    uint32_t c1 = conv3x3(b, "c1", x, 2, 4, 1);
    int64_t os[4] = {1, 4, 5, 5};
    ls_arg sa[3] = {ls_arg_node(c1), ls_arg_int(-1), ls_arg_bool(false)};
    uint32_t sm = pf_call(b, "sm", LS_OP__softmax, sa, 3, LS_DT_F32, 4, os);
    ls_build_output(b, &sm, 1, NULL, NULL);
    ls_program *p = ls_builder_finish(b);
    ls_history h;
    lower_xnnpack(p, &h);
    const ls_program *last = h.steps[h.n - 1].program;
    ck_assert_uint_eq(last->n_subs, 1);
    ls_xnn_graph *g;
    ls_error err;
    const ls_blob *blob = last->subs[0].processed;
    ck_assert_msg(ls_xnn_decode(blob->data, blob->size, "sm", &g, &err) == 0, "%s", err.msg);
    const uint8_t want[4] = {LS_XNN_StaticTranspose, LS_XNN_Conv2d, LS_XNN_StaticTranspose, LS_XNN_Softmax};
    ck_assert_uint_eq(g->n_nodes, 4);
    for (int i = 0; i < 4; i++) ck_assert_int_eq(g->nodes[i].type, want[i]);
    ck_assert_uint_eq(g->nodes[2].p.dims.v[1], 3); /* back to NCHW before it */
    ls_xnn_graph_free(g);
    for (uint64_t seed = 0; seed < 3; seed++) runs_agree(p, last, seed, 1e-5, 1e-6, "softmax");
    ls_history_free(&h);
    ls_program_unref(p);
}
END_TEST

/* A partition that is one chain of 60000 adds (h = h + x): the writer recurses a level per node
 * of the chain, which overflowed the 8 MiB stack at about 20k (the benches' 100k program lowered
 * for XNNPACK crashed); now every add is written, in order, and the delegate computes x * 60001. */
START_TEST(xnn_long_chain_is_written)
{
    enum { CHAIN = 60000 };
    ls_builder *b = ls_builder_new("chain", LS_DIALECT_EDGE);
    int64_t xs[2] = {1, 4};
    uint32_t x = pf_user_input(b, "x", LS_DT_F32, 2, xs), h = x;
    for (int i = 0; i < CHAIN; i++) {
        ls_arg a[2] = {ls_arg_node(h), ls_arg_node(x)};
        h = pf_call(b, NULL, LS_OP_add_Tensor, a, 2, LS_DT_F32, 2, xs);
    }
    ls_build_output(b, &h, 1, NULL, NULL);
    ls_program *p = ls_builder_finish(b);
    ls_history hist;
    lower_xnnpack(p, &hist);
    const ls_program *last = hist.steps[hist.n - 1].program;
    const ls_blob *blob;
    ls_xnn_graph *g = only_blob(last, "chain", &blob);
    ck_assert_uint_eq(g->n_nodes, CHAIN);
    ck_assert_int_eq(g->nodes[0].type, LS_XNN_Add);
    ck_assert_int_eq(g->nodes[CHAIN - 1].type, LS_XNN_Add);
    ls_xnn_graph_free(g);
    runs_agree(p, last, 7, 1e-5, 1e-6, "a chain of 60000 adds");
    ls_history_free(&hist);
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
    tcase_add_test(tc, xnn_quantized_mlp);
    tcase_add_test(tc, xnn_sin_is_xnnsin);
    tcase_add_test(tc, xnn_write_failures_name_the_node);
    tcase_add_test(tc, xnn_one_channel_conv_is_depthwise);
    tcase_add_test(tc, xnn_lone_qdq);
    tcase_add_test(tc, xnn_channels_last_through_shape_ops);
    tcase_add_test(tc, xnn_softmax_after_conv_is_nchw);
    tcase_add_test(tc, xnn_long_chain_is_written);
    suite_add_tcase(s, tc);
    return s;
}
