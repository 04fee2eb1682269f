/* XnnpackBackend's speed (medians):
 *   1. an MLP (64×512 → 1024 → 512 → 256, relu between) and a conv net (1×32×56×56, two 3×3
 *      convolutions to 64 channels, relu after each) lowered with --backend xnnpack, each run
 *      through its delegate beside the same Edge program on the portable kernels, in GFLOP/s
 *      (goal: the delegate ≥ 50 % of the portable kernels' throughput for GEMM-bound blobs);
 *   2. one fully connected layer (64×1024 → 1024) and one 3×3 convolution (1×64×56×56 → 64) as
 *      XNNPACK blobs in fp32, static int8 (qint8 activations, per-channel qcint8 weights) and,
 *      for the layer, dynamic int8 (qdint8 activations) — the int8 runs next to their fp32 twin
 *      (goal: no slower).
 * Never fails on timing. */
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "backend.h"
#include "benchutil.h"
#include "build.h"
#include "history.h"
#include "passes.h"
#include "runtime.h"
#include "sha256.h"
#include "xnnpack_blob.h"
#include "../xnn_build.h"

enum { RUNS = 9 };

static float frand(uint32_t *s)
{
    *s = *s * 1664525u + 1013904223u;
    return (float)((*s >> 8) & 0xffff) / 32768.0f - 1.0f;
}

static ls_tensor *rand_f32(int nd, const int64_t *dims, uint32_t seed, float scale)
{
    ls_tensor *t = ls_tensor_alloc(LS_DT_F32, nd, dims);
    for (int64_t i = 0; i < t->numel; i++) ((float *)t->data)[i] = frand(&seed) * scale;
    return t;
}

static double median_run(ls_runner *r, const ls_value *in, uint32_t nin)
{
    double t[RUNS];
    ls_error err;
    for (int k = 0; k <= RUNS; k++) {
        ls_value *out;
        uint32_t nout;
        double t0 = ls_now();
        if (ls_runner_run(r, in, nin, &out, &nout, &err) != 0) {
            printf("  failed: %s\n", err.msg);
            return -1;
        }
        if (k) t[k - 1] = ls_now() - t0;
        for (uint32_t i = 0; i < nout; i++) ls_value_release(&out[i]);
        free(out);
    }
    return bench_median(t, RUNS);
}

/* ---- 1. programs lowered with --backend xnnpack beside their portable run */

static uint32_t param(ls_builder *b, const char *name, ls_tensor *t)
{
    ls_tmeta m;
    ls_tensor_meta(t, &m);
    uint32_t id = ls_build_input(b, name, LS_IN_PARAMETER, name, true, &m, t);
    ls_tensor_unref(t);
    return id;
}

static uint32_t call(ls_builder *b, ls_op_id op, ls_arg *args, uint16_t n, int nd, const int64_t *dims)
{
    ls_tmeta m = ls_meta(LS_DT_F32, nd, dims);
    ls_arg *heap = ls_malloc(sizeof *heap * n);
    memcpy(heap, args, sizeof *heap * n);
    return ls_build_call(b, NULL, op, heap, n, &m);
}

static ls_program *mlp(void)
{
    ls_builder *b = ls_builder_new("mlp", LS_DIALECT_EDGE);
    int64_t xs[2] = {64, 512};
    ls_tmeta xm = ls_meta(LS_DT_F32, 2, xs);
    uint32_t h = ls_build_input(b, "x", LS_IN_USER_INPUT, NULL, false, &xm, NULL);
    int64_t widths[4] = {512, 1024, 512, 256};
    for (int l = 0; l < 3; l++) {
        char wn[16], bn[16];
        snprintf(wn, sizeof wn, "w%d", l);
        snprintf(bn, sizeof bn, "b%d", l);
        int64_t wd[2] = {widths[l + 1], widths[l]}, bd[1] = {widths[l + 1]}, od[2] = {64, widths[l + 1]};
        uint32_t w = param(b, wn, rand_f32(2, wd, 11u + l, 0.05f)), bias = param(b, bn, rand_f32(1, bd, 21u + l, 0.1f));
        ls_arg la[3] = {ls_arg_node(h), ls_arg_node(w), ls_arg_node(bias)};
        h = call(b, LS_OP_linear, la, 3, 2, od);
        if (l < 2) {
            ls_arg ra[1] = {ls_arg_node(h)};
            h = call(b, LS_OP_relu, ra, 1, 2, od);
        }
    }
    ls_build_output(b, &h, 1, NULL, NULL);
    return ls_builder_finish(b);
}

static ls_program *convnet(void)
{
    ls_builder *b = ls_builder_new("convnet", LS_DIALECT_EDGE);
    int64_t xs[4] = {1, 32, 56, 56};
    ls_tmeta xm = ls_meta(LS_DT_F32, 4, xs);
    uint32_t h = ls_build_input(b, "x", LS_IN_USER_INPUT, NULL, false, &xm, NULL);
    int64_t cin = 32;
    for (int l = 0; l < 2; l++) {
        char wn[16], bn[16];
        snprintf(wn, sizeof wn, "w%d", l);
        snprintf(bn, sizeof bn, "b%d", l);
        int64_t wd[4] = {64, cin, 3, 3}, bd[1] = {64}, od[4] = {1, 64, 56, 56}, one[2] = {1, 1}, zero[2] = {0, 0};
        uint32_t w = param(b, wn, rand_f32(4, wd, 31u + l, 0.05f)), bias = param(b, bn, rand_f32(1, bd, 41u + l, 0.1f));
        ls_arg ca[9] = {ls_arg_node(h),     ls_arg_node(w),      ls_arg_node(bias),   ls_arg_ints(one, 2),
                        ls_arg_ints(one, 2), ls_arg_ints(one, 2), ls_arg_bool(false), ls_arg_ints(zero, 2),
                        ls_arg_int(1)};
        h = call(b, LS_OP_convolution, ca, 9, 4, od);
        ls_arg ra[1] = {ls_arg_node(h)};
        h = call(b, LS_OP_relu, ra, 1, 4, od);
        cin = 64;
    }
    ls_build_output(b, &h, 1, NULL, NULL);
    return ls_builder_finish(b);
}

static void bench_lowered(const char *what, ls_program *p, double flops)
{
    ls_pipeline_opts o;
    ls_pipeline_opts_init(&o);
    ls_error err;
    ls_history h;
    if (ls_pipeline_opt(&o, "--backend", "xnnpack", &err) != 1 || ls_pipeline_opt(&o, "--pipeline", "partition,to_backend", &err) != 1 ||
        ls_pipeline_run(p, &o, &h, &err) != 0) {
        printf("%-24s failed: %s\n", what, err.msg);
        ls_pipeline_opts_free(&o);
        return;
    }
    ls_pipeline_opts_free(&o);
    const ls_program *low = h.steps[h.n - 1].program;
    ls_value *in;
    uint32_t nin;
    ls_runner *rp = ls_runner_new(p, &err), *rx = rp ? ls_runner_new(low, &err) : NULL;
    if (!rx || ls_make_inputs(p, 1, 0, &in, &nin, &err) != 0) {
        printf("%-24s failed: %s\n", what, err.msg);
        ls_runner_free(rp);
        ls_history_free(&h);
        return;
    }
    bool xnn = low->n_subs == 1 && ls_xnn_is_blob(low->subs[0].processed->data, low->subs[0].processed->size);
    double tp = median_run(rp, in, nin), tx = median_run(rx, in, nin);
    if (tp > 0 && tx > 0)
        printf("%-24s portable %7.1f GFLOP/s (%7.2f ms)   XNNPACK delegate %7.1f GFLOP/s (%6.2f ms)%s = %4.0f%% (goal >= 50%%)\n",
               what, flops / tp / 1e9, tp * 1e3, flops / tx / 1e9, tx * 1e3, xnn ? "" : " [not an XNNPACK blob]",
               100 * tp / tx);
    for (uint32_t i = 0; i < nin; i++) ls_value_release(&in[i]);
    free(in);
    ls_runner_free(rp);
    ls_runner_free(rx);
    ls_history_free(&h);
}

/* ---- 2. hand-made blobs: fp32 and its int8 twins */

enum { FP32, QS8, QD8 };

/* x [M, K] fp32 → (Convert to qint8 / qdint8) → FullyConnected or 3×3 Conv2d (NHWC) → (Convert) → fp32 */
static ls_blob *layer_blob(int kind, bool conv, const uint32_t *xd, uint32_t K, uint32_t N, ls_named_data **named)
{
    xb_graph g = {.named = ls_named_data_new()};
    int nd = conv ? 4 : 2;
    uint32_t od[4] = {xd[0], conv ? xd[1] : N, xd[2], N};
    uint32_t x = xb_value(&g, LS_XNN_DT_FP32, nd, xd, LS_XNN_FLAG_EXTERNAL_INPUT, 0), in = x;
    uint32_t wd4[4] = {N, 3, 3, K}, wd2[2] = {N, K}, bd[1] = {N};
    size_t wn = (size_t)N * K * (conv ? 9 : 1);
    uint32_t seed = 5;
    uint32_t w, b;
    if (kind == FP32) {
        float *wf = malloc(wn * 4), *bf = malloc(N * 4);
        for (size_t i = 0; i < wn; i++) wf[i] = frand(&seed) * 0.05f;
        for (uint32_t i = 0; i < N; i++) bf[i] = frand(&seed) * 0.1f;
        w = xb_const(&g, LS_XNN_DT_FP32, nd, conv ? wd4 : wd2, wf, wn * 4);
        b = xb_const(&g, LS_XNN_DT_FP32, 1, bd, bf, N * 4);
        free(wf);
        free(bf);
    } else {
        int8_t *wq = malloc(wn);
        int32_t *bq = malloc(N * 4);
        for (size_t i = 0; i < wn; i++) wq[i] = (int8_t)(frand(&seed) * 127);
        for (uint32_t i = 0; i < N; i++) bq[i] = (int32_t)(frand(&seed) * 1000);
        w = xb_const(&g, LS_XNN_DT_QCINT8, nd, conv ? wd4 : wd2, wq, wn);
        ls_xnn_value *wv = &g.v.v[w];
        wv->quant = LS_XNN_Q_PER_CHANNEL;
        wv->n_scales = N;
        wv->scales = malloc(N * 4);
        for (uint32_t i = 0; i < N; i++) wv->scales[i] = 0.0004f;
        if (kind == QS8) {
            b = xb_const(&g, LS_XNN_DT_QCINT32, 1, bd, bq, N * 4);
            ls_xnn_value *bv = &g.v.v[b];
            bv->quant = LS_XNN_Q_PER_CHANNEL;
            bv->n_scales = N;
            bv->scales = malloc(N * 4);
            for (uint32_t i = 0; i < N; i++) bv->scales[i] = 0.0004f * 0.01f;
        } else {
            float *bf = malloc(N * 4);
            for (uint32_t i = 0; i < N; i++) bf[i] = frand(&seed) * 0.1f;
            b = xb_const(&g, LS_XNN_DT_FP32, 1, bd, bf, N * 4);
            free(bf);
        }
        free(wq);
        free(bq);
        in = xb_value(&g, kind == QS8 ? LS_XNN_DT_QINT8 : LS_XNN_DT_QDINT8, nd, xd, 0, LS_XNN_INVALID_ID);
        ls_xnn_value *iv = &g.v.v[in];
        iv->quant = kind == QS8 ? LS_XNN_Q_PER_TENSOR : LS_XNN_Q_PER_TOKEN_DYNAMIC;
        iv->scale = 0.01f, iv->zero_point = 3, iv->num_nonbatch_dims = 1;
        xb_node(&g, LS_XNN_Convert, &x, 1, in);
    }
    uint32_t out = xb_value(&g, kind == QS8 ? LS_XNN_DT_QINT8 : LS_XNN_DT_FP32, nd, od, kind == QS8 ? 0 : LS_XNN_FLAG_EXTERNAL_OUTPUT,
                      kind == QS8 ? LS_XNN_INVALID_ID : 1);
    if (kind == QS8) g.v.v[out].quant = LS_XNN_Q_PER_TENSOR, g.v.v[out].scale = 0.05f, g.v.v[out].zero_point = -2;
    xb_node(&g, conv ? LS_XNN_Conv2d : LS_XNN_FullyConnected, (const uint32_t[]){in, w, b}, 3, out);
    if (conv) {
        ls_xnn_node *c = &g.n.v[g.n.n - 1];
        c->p.conv = (__typeof__(c->p.conv)){.pad_top = 1, .pad_right = 1, .pad_bottom = 1, .pad_left = 1, .kernel_h = 3,
                                            .kernel_w = 3, .stride_h = 1, .stride_w = 1, .dilation_h = 1, .dilation_w = 1,
                                            .group_in = K, .group_out = N, .groups = 1};
    }
    if (kind == QS8) {
        uint32_t f = xb_value(&g, LS_XNN_DT_FP32, nd, od, LS_XNN_FLAG_EXTERNAL_OUTPUT, 1);
        xb_node(&g, LS_XNN_Convert, &out, 1, f);
    }
    ls_blob *blob = xb_finish(&g, 2);
    *named = ls_named_data_ref(g.named);
    xb_free(&g);
    return blob;
}

static double time_blob(ls_blob *blob, const ls_named_data *named, ls_tensor *x)
{
    void *h;
    ls_error err;
    if (!blob || ls_xnnpack_backend.init(blob, NULL, 0, named, &h, &err) != 0) {
        printf("  failed: %s\n", blob ? err.msg : "no blob");
        return -1;
    }
    ls_value in = ls_value_tensor(ls_tensor_ref(x));
    double t[RUNS];
    for (int k = 0; k <= RUNS; k++) {
        ls_value *out;
        uint32_t n;
        double t0 = ls_now();
        if (ls_xnnpack_backend.execute(h, &in, 1, &out, &n, &err) != 0) {
            printf("  failed: %s\n", err.msg);
            break;
        }
        if (k) t[k - 1] = ls_now() - t0;
        ls_value_release(&out[0]);
        free(out);
    }
    ls_value_release(&in);
    ls_xnnpack_backend.destroy(h);
    return bench_median(t, RUNS);
}

static void bench_int8(const char *what, bool conv, const uint32_t *xd, uint32_t K, uint32_t N, double flops)
{
    int64_t xs[4] = {xd[0], xd[1], xd[2], xd[3]};
    ls_tensor *x = rand_f32(conv ? 4 : 2, xs, 77, 1.0f);
    static const char *const names[3] = {"fp32", "int8 static", "int8 dynamic"};
    double t[3] = {0};
    for (int kind = 0; kind < (conv ? 2 : 3); kind++) {
        ls_named_data *named;
        ls_blob *b = layer_blob(kind, conv, xd, K, N, &named);
        t[kind] = time_blob(b, named, x);
        ls_blob_unref(b);
        ls_named_data_unref(named);
    }
    printf("%-24s", what);
    for (int kind = 0; kind < (conv ? 2 : 3); kind++)
        printf(" %s %6.1f GOP/s (%6.2f ms)%s", names[kind], flops / t[kind] / 1e9, t[kind] * 1e3,
               kind ? "" : " ");
    printf("  int8/fp32 time %.2f%s (goal <= 1)\n", t[1] / t[0], conv ? "" : "");
    if (!conv) printf("%-24s dynamic int8/fp32 time %.2f\n", "", t[2] / t[0]);
    ls_tensor_unref(x);
}

int main(void)
{
    bench_print_header("xnnpack");
    ls_program *m = mlp(), *c = convnet();
    bench_lowered("MLP fp32 64x512>1024>512>256", m, 2.0 * 64 * (512 * 1024 + 1024 * 512 + 512 * 256));
    bench_lowered("conv net fp32 32>64>64 56²", c, 2.0 * 56 * 56 * 64 * 9 * (32 + 64));
    ls_program_unref(m);
    ls_program_unref(c);
    bench_int8("linear 64x1024>1024", false, (const uint32_t[]){64, 1024, 0, 0}, 1024, 1024, 2.0 * 64 * 1024 * 1024);
    bench_int8("conv 3x3 64>64 56²", true, (const uint32_t[]){1, 56, 56, 64}, 64, 64, 2.0 * 56 * 56 * 64 * 64 * 9);
    return 0;
}
