/* The interpreter's semantics of single xnodes, each on a blob made by hand and a result worked
 * by hand from how pytorch/executorch backends/xnnpack/runtime/XNNCompiler.cpp defines the node
 * for XNNPACK (define*Node, defineTensor; read at 4f41e652):
 * - defineAvgPooling2dNode passes no dilation: a dilated average pool pools undilated;
 * - defineDepthwiseConv2dNode: depth multiplier group_out / group_in, input channels = groups,
 *   output channel c reading input channel c / multiplier;
 * - a static qs8 fully connected node clamps to output_min_max in the output's steps, the bounds
 *   rounded as XNNPACK's xnn_qs8_quantize rounds them (zero point added first);
 * - defineTensor gives XNNPACK blockwise scales as bf16, fp32 ones through
 *   convertF32TensorToBF16 (×1.00389105, truncated);
 * - scales kept in a constant (scale_buffer_idx) are refused by name, not guessed;
 * - dynamic int8 activations per token, with XNNPACK's qd8 parameters, for an XNNConvert and for
 *   the older dq_datatype marker;
 * - what google/XNNPACK itself refuses at init (xnn_define.c): a requantization scale of 256 or
 *   more, output_min above output_max; and a qs8 convolution's .5 cases at its clamp bounds.
 * Each blob is also held to its portable twin where the twin takes the node. */
#include <check.h>
#include <math.h>
#include <stdlib.h>
#include <string.h>

#include "backend.h"
#include "runtime.h"
#include "testutil.h"
#include "xnn_build.h"

/* Runs a blob on one input; returns output 0 (the caller unrefs it). */
static ls_tensor *run1(const ls_blob *blob, const ls_named_data *named, ls_tensor *x)
{
    void *h;
    ls_error err;
    ck_assert_msg(ls_xnnpack_backend.init(blob, NULL, 0, named, &h, &err) == 0, "%s", err.msg);
    ls_value in = ls_value_tensor(x), *out;
    uint32_t n;
    ck_assert_msg(ls_xnnpack_backend.execute(h, &in, 1, &out, &n, &err) == 0, "%s", err.msg);
    ck_assert_uint_eq(n, 1);
    ls_tensor *t = ls_tensor_ref(out[0].t);
    ls_value_release(&out[0]);
    free(out);
    ls_value_release(&in);
    ls_xnnpack_backend.destroy(h);
    return t;
}

static ls_tensor *f32(int nd, const int64_t *dims, const float *v)
{
    ls_tensor *t = ls_tensor_alloc(LS_DT_F32, nd, dims);
    memcpy(t->data, v, sizeof *v * (size_t)t->numel);
    return t;
}

static void twin_agrees(const ls_blob *blob, const ls_named_data *named)
{
    ls_value_diff *d;
    uint32_t nd;
    ls_error err;
    int bad = ls_xnn_compare_twin(blob, named, NULL, 0, 3, 1e-5, 1e-6, &d, &nd, &err);
    ck_assert_msg(bad == 0, "twin: %s", bad < 0 ? err.msg : d[0].why);
    free(d);
}

/* x = 1..9 as [1, 3, 3, 1]; a 2x2 average pool, stride 1, whose dilation fields say 2. XNNPACK
 * never sees the dilation: 2x2 outputs, (1+2+4+5)/4 = 3, 4, 6, 7 (dilated it would be one
 * output, (1+3+7+9)/4 = 5). */
START_TEST(xnn_avg_pool_ignores_dilation)
{
    xb_graph g = {0};
    uint32_t xd[4] = {1, 3, 3, 1}, od[4] = {1, 2, 2, 1};
    uint32_t x = xb_value(&g, LS_XNN_DT_FP32, 4, xd, LS_XNN_FLAG_EXTERNAL_INPUT, 0);
    uint32_t y = xb_value(&g, LS_XNN_DT_FP32, 4, od, LS_XNN_FLAG_EXTERNAL_OUTPUT, 1);
    ls_xnn_node *n = xb_node(&g, LS_XNN_AvgPooling2d, &x, 1, y);
    n->p.pool = (__typeof__(n->p.pool)){.pool_h = 2, .pool_w = 2, .stride_h = 1, .stride_w = 1, .dilation_h = 2,
                                        .dilation_w = 2};
    ls_blob *blob = xb_finish(&g, 2);
    ck_assert_ptr_nonnull(blob);
    int64_t dims[4] = {1, 3, 3, 1};
    const float xv[9] = {1, 2, 3, 4, 5, 6, 7, 8, 9}, want[4] = {3, 4, 6, 7};
    ls_tensor *o = run1(blob, g.named, f32(4, dims, xv));
    ck_assert_int_eq(o->numel, 4);
    ck_assert(o->sizes[1] == 2 && o->sizes[2] == 2);
    for (int i = 0; i < 4; i++) ck_assert_float_eq_tol(((float *)o->data)[i], want[i], 1e-6);
    ls_tensor_unref(o);
    twin_agrees(blob, g.named);
    ls_blob_unref(blob);
    xb_free(&g);
}
END_TEST

/* groups 2, group_in 1, group_out 2: multiplier 2, 4 output channels, filter [1, 1, 1, 4] =
 * 1, 2, 3, 4 on x = (5, 7): channel c reads x[c / 2], so 5·1, 5·2, 7·3, 7·4 = 5, 10, 21, 28. */
START_TEST(xnn_depthwise_multiplier_order)
{
    xb_graph g = {0};
    uint32_t xd[4] = {1, 1, 1, 2}, wd[4] = {1, 1, 1, 4}, od[4] = {1, 1, 1, 4};
    const float wv[4] = {1, 2, 3, 4};
    uint32_t x = xb_value(&g, LS_XNN_DT_FP32, 4, xd, LS_XNN_FLAG_EXTERNAL_INPUT, 0);
    uint32_t w = xb_const(&g, LS_XNN_DT_FP32, 4, wd, wv, sizeof wv);
    uint32_t y = xb_value(&g, LS_XNN_DT_FP32, 4, od, LS_XNN_FLAG_EXTERNAL_OUTPUT, 1);
    ls_xnn_node *n = xb_node(&g, LS_XNN_DepthwiseConv2d, (const uint32_t[]){x, w, LS_XNN_INVALID_ID}, 3, y);
    n->p.conv = (__typeof__(n->p.conv)){.kernel_h = 1, .kernel_w = 1, .stride_h = 1, .stride_w = 1, .dilation_h = 1,
                                        .dilation_w = 1, .group_in = 1, .group_out = 2, .groups = 2};
    ls_blob *blob = xb_finish(&g, 2);
    ck_assert_ptr_nonnull(blob);
    int64_t dims[4] = {1, 1, 1, 2};
    const float xv[2] = {5, 7}, want[4] = {5, 10, 21, 28};
    ls_tensor *o = run1(blob, g.named, f32(4, dims, xv));
    ck_assert_int_eq(o->numel, 4);
    for (int i = 0; i < 4; i++) ck_assert_float_eq_tol(((float *)o->data)[i], want[i], 1e-6);
    ls_tensor_unref(o);
    twin_agrees(blob, g.named);
    ls_blob_unref(blob);
    xb_free(&g);
}
END_TEST

/* qs8: x int8 (3, 5) at scale 0.5, zero point 1 is (1, 2); w qcint8 (2, 4) at 0.25 is (0.5, 1);
 * bias qcint32 4 at 0.125 is 0.5: y = 0.5 + 2 + 0.5 = 3, at output scale 1, zero point 0. With
 * output_min_max [0, 2] the node gives 2, without it 3. */
START_TEST(xnn_qs8_fully_connected_clamps_in_steps)
{
    for (int clamp = 0; clamp < 2; clamp++) {
        xb_graph g = {0};
        uint32_t xd[2] = {1, 2}, wd[2] = {1, 2}, bd[1] = {1}, od[2] = {1, 1};
        const int8_t wq[2] = {2, 4};
        const int32_t bq[1] = {4};
        uint32_t x = xb_value(&g, LS_XNN_DT_QINT8, 2, xd, LS_XNN_FLAG_EXTERNAL_INPUT, 0);
        g.v.v[x].quant = LS_XNN_Q_PER_TENSOR, g.v.v[x].scale = 0.5f, g.v.v[x].zero_point = 1;
        uint32_t w = xb_const(&g, LS_XNN_DT_QCINT8, 2, wd, wq, sizeof wq);
        g.v.v[w].quant = LS_XNN_Q_PER_CHANNEL, g.v.v[w].n_scales = 1, g.v.v[w].scales = malloc(4);
        g.v.v[w].scales[0] = 0.25f;
        uint32_t b = xb_const(&g, LS_XNN_DT_QCINT32, 1, bd, bq, sizeof bq);
        g.v.v[b].quant = LS_XNN_Q_PER_CHANNEL, g.v.v[b].n_scales = 1, g.v.v[b].scales = malloc(4);
        g.v.v[b].scales[0] = 0.125f;
        uint32_t y = xb_value(&g, LS_XNN_DT_QINT8, 2, od, LS_XNN_FLAG_EXTERNAL_OUTPUT, 1);
        g.v.v[y].quant = LS_XNN_Q_PER_TENSOR, g.v.v[y].scale = 1, g.v.v[y].zero_point = 0;
        ls_xnn_node *n = xb_node(&g, LS_XNN_FullyConnected, (const uint32_t[]){x, w, b}, 3, y);
        if (clamp) n->has_min_max = true, n->out_min = 0, n->out_max = 2;
        ls_blob *blob = xb_finish(&g, 2);
        ck_assert_ptr_nonnull(blob);
        int64_t dims[2] = {1, 2};
        ls_tensor *xt = ls_tensor_alloc(LS_DT_I8, 2, dims);
        ((int8_t *)xt->data)[0] = 3, ((int8_t *)xt->data)[1] = 5;
        ls_tensor *o = run1(blob, g.named, xt);
        ck_assert_int_eq(o->dtype, LS_DT_I8);
        ck_assert_int_eq(((int8_t *)o->data)[0], clamp ? 2 : 3);
        ls_tensor_unref(o);
        ls_blob_unref(blob);
        xb_free(&g);
    }
}
END_TEST

/* The clamp bounds are XNNPACK's xnn_qs8_quantize (src/xnnpack/requantization.h, called by
 * create_fully_connected_operator in src/subgraph/fully-connected.c): lrintf(bound / scale + zp),
 * the zero point added before rounding. x qint8 (2, 2) at 0.5, zero point 1; w qcint8 (2, 4) at
 * 0.25; no bias; y qint8 at 0.5, zero point 1, so the requantization scale is 0.25. Row (1, 1) is
 * 0 (acc 6 - 1·6 = 0, y = 1); row (3, 5) is 2.5 (acc 26 - 6 = 20, 20·0.25 = 5, y = 6).
 * output_min 0.25: 0.5 + 1 = 1.5 rounds to 2 (rounded before the zero point: 0 + 1 = 1), so
 * y = (2, 6). output_max 1.25: 2.5 + 1 = 3.5 rounds to 4 (2 + 1 = 3 the other way), so y = (1, 4). */
START_TEST(xnn_qs8_fully_connected_bounds_round_with_zero_point)
{
    for (int which = 0; which < 2; which++) {
        xb_graph g = {0};
        uint32_t xd[2] = {2, 2}, wd[2] = {1, 2}, od[2] = {2, 1};
        const int8_t wq[2] = {2, 4};
        uint32_t x = xb_value(&g, LS_XNN_DT_QINT8, 2, xd, LS_XNN_FLAG_EXTERNAL_INPUT, 0);
        g.v.v[x].quant = LS_XNN_Q_PER_TENSOR, g.v.v[x].scale = 0.5f, g.v.v[x].zero_point = 1;
        uint32_t w = xb_const(&g, LS_XNN_DT_QCINT8, 2, wd, wq, sizeof wq);
        g.v.v[w].quant = LS_XNN_Q_PER_CHANNEL, g.v.v[w].n_scales = 1, g.v.v[w].scales = malloc(4);
        g.v.v[w].scales[0] = 0.25f;
        uint32_t y = xb_value(&g, LS_XNN_DT_QINT8, 2, od, LS_XNN_FLAG_EXTERNAL_OUTPUT, 1);
        g.v.v[y].quant = LS_XNN_Q_PER_TENSOR, g.v.v[y].scale = 0.5f, g.v.v[y].zero_point = 1;
        ls_xnn_node *n = xb_node(&g, LS_XNN_FullyConnected, (const uint32_t[]){x, w, LS_XNN_INVALID_ID}, 3, y);
        n->has_min_max = true;
        n->out_min = which ? -INFINITY : 0.25f;
        n->out_max = which ? 1.25f : INFINITY;
        ls_blob *blob = xb_finish(&g, 2);
        ck_assert_ptr_nonnull(blob);
        int64_t dims[2] = {2, 2};
        ls_tensor *xt = ls_tensor_alloc(LS_DT_I8, 2, dims);
        const int8_t xv[4] = {1, 1, 3, 5};
        memcpy(xt->data, xv, sizeof xv);
        ls_tensor *o = run1(blob, g.named, xt);
        ck_assert_int_eq(o->dtype, LS_DT_I8);
        ck_assert_int_eq(o->numel, 2);
        const int8_t *ov = o->data;
        ck_assert_int_eq(ov[0], which ? 1 : 2);
        ck_assert_int_eq(ov[1], which ? 4 : 6);
        ls_tensor_unref(o);
        ls_blob_unref(blob);
        xb_free(&g);
    }
}
END_TEST

/* x = (1, 1) → Convert to qdint8 (per row: scale 1/255, zero point -128, exact) → fully connected
 * with a qbint4 weight (9, 15), zero point 8, so (1, 7) in steps, one group of 2 with the fp32
 * scale 0.1. XNNPACK gets the scale as bf16: 0.1f × 1.00389105 = 0.1003891, truncated to
 * 0x3dcd = 0.10009765625, so y = 8 × 0.10009765625 = 0.80078125 (0.8 with the fp32 scale). */
START_TEST(xnn_blockwise_scales_are_bf16)
{
    xb_graph g = {0};
    uint32_t xd[2] = {1, 2}, wd[2] = {1, 2}, od[2] = {1, 1};
    const uint8_t wq[1] = {9 | 15 << 4}; /* the even element in the low nibble */
    uint32_t x = xb_value(&g, LS_XNN_DT_FP32, 2, xd, LS_XNN_FLAG_EXTERNAL_INPUT, 0);
    uint32_t q = xb_value(&g, LS_XNN_DT_QDINT8, 2, xd, 0, LS_XNN_INVALID_ID);
    g.v.v[q].quant = LS_XNN_Q_PER_TOKEN_DYNAMIC, g.v.v[q].num_nonbatch_dims = 1;
    uint32_t w = xb_const(&g, LS_XNN_DT_QBINT4, 2, wd, wq, sizeof wq);
    g.v.v[w].quant = LS_XNN_Q_PER_CHANNEL_GROUP, g.v.v[w].group_size = 2, g.v.v[w].n_scales = 1;
    g.v.v[w].scales = malloc(4);
    g.v.v[w].scales[0] = 0.1f;
    uint32_t y = xb_value(&g, LS_XNN_DT_FP32, 2, od, LS_XNN_FLAG_EXTERNAL_OUTPUT, 1);
    xb_node(&g, LS_XNN_Convert, &x, 1, q);
    xb_node(&g, LS_XNN_FullyConnected, (const uint32_t[]){q, w, LS_XNN_INVALID_ID}, 3, y);
    ls_blob *blob = xb_finish(&g, 2);
    ck_assert_ptr_nonnull(blob);
    int64_t dims[2] = {1, 2};
    const float xv[2] = {1, 1};
    ls_tensor *o = run1(blob, g.named, f32(2, dims, xv));
    ck_assert_msg(fabsf(((float *)o->data)[0] - 0.80078125f) < 1e-6f, "y = %.9g, not 0.80078125", ((float *)o->data)[0]);
    ls_tensor_unref(o);
    /* the twin dequantizes the weight with the same bf16 scale */
    ls_value_diff *d;
    uint32_t nd;
    ls_error err;
    ls_value in = ls_value_tensor(f32(2, dims, xv));
    int bad = ls_xnn_compare_twin(blob, g.named, &in, 1, 0, 1e-5, 1e-6, &d, &nd, &err);
    ck_assert_msg(bad == 0, "twin: %s", bad < 0 ? err.msg : d[0].why);
    free(d);
    ls_value_release(&in);
    ls_blob_unref(blob);
    xb_free(&g);
}
END_TEST

/* Dynamic int8 per token, worked by hand through XNNPACK's xnn_qd8_asymmetric_quantization_params:
 * x = [[1, 1], [2, -2]], w = qcint8 (2, 4) at 0.25. Row 0: range [0, 1], inverse scale 255,
 * zero point -128, q = 127 (exact): y = 255·(2 + 4)·0.25/255 = 1.5. Row 1: range [-2, 2], inverse
 * scale 63.75, zero point lrintf(-0.5) = 0, q(2) = 128 saturated to 127, q(-2) = -128:
 * y = (127·2 - 128·4)·0.25/63.75 = -258/255 = -1.0117647. The same through an XNNConvert to
 * qdint8 and through runtime_schema.fbs's older dq_datatype marker on the external input
 * (defineTensor's per-token Convert). */
START_TEST(xnn_dynamic_int8_per_token_by_hand)
{
    for (int legacy = 0; legacy < 2; legacy++) {
        xb_graph g = {0};
        uint32_t xd[2] = {2, 2}, wd[2] = {1, 2}, od[2] = {2, 1};
        const int8_t wq[2] = {2, 4};
        uint32_t x = xb_value(&g, LS_XNN_DT_FP32, 2, xd, LS_XNN_FLAG_EXTERNAL_INPUT, 0), q = x;
        if (legacy) {
            g.v.v[x].dq_datatype = LS_XNN_DT_QINT8;
        } else {
            q = xb_value(&g, LS_XNN_DT_QDINT8, 2, xd, 0, LS_XNN_INVALID_ID);
            g.v.v[q].quant = LS_XNN_Q_PER_TOKEN_DYNAMIC, g.v.v[q].num_nonbatch_dims = 1;
        }
        uint32_t w = xb_const(&g, LS_XNN_DT_QCINT8, 2, wd, wq, sizeof wq);
        g.v.v[w].quant = LS_XNN_Q_PER_CHANNEL, g.v.v[w].n_scales = 1, g.v.v[w].scales = malloc(4);
        g.v.v[w].scales[0] = 0.25f;
        uint32_t y = xb_value(&g, LS_XNN_DT_FP32, 2, od, LS_XNN_FLAG_EXTERNAL_OUTPUT, 1);
        if (!legacy) xb_node(&g, LS_XNN_Convert, &x, 1, q);
        xb_node(&g, LS_XNN_FullyConnected, (const uint32_t[]){q, w, LS_XNN_INVALID_ID}, 3, y);
        ls_blob *blob = xb_finish(&g, 2);
        ck_assert_ptr_nonnull(blob);
        int64_t dims[2] = {2, 2};
        const float xv[4] = {1, 1, 2, -2};
        ls_tensor *o = run1(blob, g.named, f32(2, dims, xv));
        const float *yv = o->data;
        ck_assert_msg(fabsf(yv[0] - 1.5f) < 1e-6f && fabsf(yv[1] - -258.0f / 255.0f) < 1e-6f, "%s: y = %.9g, %.9g",
                      legacy ? "dq_datatype" : "Convert", yv[0], yv[1]);
        ls_tensor_unref(o);
        ls_blob_unref(blob);
        xb_free(&g);
    }
}
END_TEST

/* A weight whose per-channel scales are in constant 1 (scale_buffer_idx) is refused at init
 * with exit code 3, naming the value; the reader still reads the blob. */
START_TEST(xnn_scale_buffer_refused)
{
    xb_graph g = {0};
    uint32_t xd[2] = {1, 2}, wd[2] = {1, 2}, od[2] = {1, 1};
    const int8_t wq[2] = {1, 2};
    uint32_t x = xb_value(&g, LS_XNN_DT_FP32, 2, xd, LS_XNN_FLAG_EXTERNAL_INPUT, 0);
    uint32_t w = xb_const(&g, LS_XNN_DT_QCINT8, 2, wd, wq, sizeof wq);
    g.v.v[w].quant = LS_XNN_Q_PER_CHANNEL, g.v.v[w].scale_buffer_idx = 1;
    uint32_t y = xb_value(&g, LS_XNN_DT_FP32, 2, od, LS_XNN_FLAG_EXTERNAL_OUTPUT, 1);
    xb_node(&g, LS_XNN_FullyConnected, (const uint32_t[]){x, w, LS_XNN_INVALID_ID}, 3, y);
    ls_blob *blob = xb_finish(&g, 2);
    ck_assert_ptr_nonnull(blob);
    ls_xnn_graph *gr;
    ls_error err;
    ck_assert_msg(ls_xnn_decode(blob->data, blob->size, "sb", &gr, &err) == 0, "%s", err.msg);
    ck_assert_uint_eq(gr->values[w].scale_buffer_idx, 1);
    ls_xnn_graph_free(gr);
    void *h = NULL;
    ck_assert_int_eq(ls_xnnpack_backend.init(blob, NULL, 0, g.named, &h, &err), -1);
    ck_assert_int_eq(err.code, LS_ERR_NEEDS);
    ck_assert_msg(tu_contains(err.msg, "xvalues[1]") && tu_contains(err.msg, "scale_buffer_idx"), "%s", err.msg);
    ls_blob_unref(blob);
    xb_free(&g);
}
END_TEST

/* init's error for a blob XNNPACK refuses (NULL when init takes it). */
static const char *init_refuses(const ls_blob *blob, const ls_named_data *named, ls_error *err)
{
    void *h = NULL;
    if (ls_xnnpack_backend.init(blob, NULL, 0, named, &h, err) == 0) {
        ls_xnnpack_backend.destroy(h);
        return NULL;
    }
    return err->msg;
}

/* A static qs8 fully connected node with a qint8 filter (scale ws, per tensor): x qint8 [1, 1]
 * at 16, y qint8 at 1. XNNPACK's xnn_create_fully_connected_nc_qs8 (operators/fully-connected-
 * nc.c) computes 16·ws/1 in float and refuses 256 or more as an unsupported parameter: ws = 16
 * gives 256 (refused, exit 3); ws = 15.9375 gives 255 (taken, and x = 1 gives
 * round(1·255) = 127 after the int8 clamp). */
static ls_blob *qs8_fc(xb_graph *g, float ws)
{
    uint32_t xd[2] = {1, 1}, wd[2] = {1, 1};
    const int8_t wq[1] = {1};
    uint32_t x = xb_value(g, LS_XNN_DT_QINT8, 2, xd, LS_XNN_FLAG_EXTERNAL_INPUT, 0);
    g->v.v[x].quant = LS_XNN_Q_PER_TENSOR, g->v.v[x].scale = 16, g->v.v[x].zero_point = 0;
    uint32_t w = xb_const(g, LS_XNN_DT_QINT8, 2, wd, wq, sizeof wq);
    g->v.v[w].quant = LS_XNN_Q_PER_TENSOR, g->v.v[w].scale = ws;
    uint32_t y = xb_value(g, LS_XNN_DT_QINT8, 2, xd, LS_XNN_FLAG_EXTERNAL_OUTPUT, 1);
    g->v.v[y].quant = LS_XNN_Q_PER_TENSOR, g->v.v[y].scale = 1, g->v.v[y].zero_point = 0;
    xb_node(g, LS_XNN_FullyConnected, (const uint32_t[]){x, w, LS_XNN_INVALID_ID}, 3, y);
    return xb_finish(g, 2);
}

/* Per output channel (convolution-nhwc.c, init_requantization_scale_qx8_qc8w): a 1x1 Conv2d,
 * x qint8 at 2, filter qcint8 with scales (1, 128), y at 1: channel 0 is 2, channel 1 is 256,
 * refused naming the channel. */
START_TEST(xnn_requantization_scale_of_256_refused)
{
    ls_error err;
    xb_graph g = {0};
    ls_blob *blob = qs8_fc(&g, 16);
    ck_assert_ptr_nonnull(blob);
    const char *why = init_refuses(blob, g.named, &err);
    ck_assert_msg(why && err.code == LS_ERR_NEEDS, "%s", why ? why : "init took it");
    ck_assert_msg(tu_contains(why, "xnodes[0] (XNNFullyConnected") && tu_contains(why, "requantization scale 256 ") &&
                      tu_contains(why, "input scale 16 x kernel scale 16 / output scale 1"),
                  "%s", why);
    ls_blob_unref(blob);
    xb_free(&g);

    xb_graph g2 = {0};
    blob = qs8_fc(&g2, 15.9375f);
    ck_assert_ptr_nonnull(blob);
    int64_t dims[2] = {1, 1};
    ls_tensor *xt = ls_tensor_alloc(LS_DT_I8, 2, dims);
    ((int8_t *)xt->data)[0] = 1;
    ls_tensor *o = run1(blob, g2.named, xt);
    ck_assert_int_eq(((int8_t *)o->data)[0], 127);
    ls_tensor_unref(o);
    ls_blob_unref(blob);
    xb_free(&g2);

    xb_graph g3 = {0};
    uint32_t xd[4] = {1, 1, 1, 1}, wd[4] = {2, 1, 1, 1}, od[4] = {1, 1, 1, 2};
    const int8_t wq[2] = {1, 1};
    uint32_t x = xb_value(&g3, LS_XNN_DT_QINT8, 4, xd, LS_XNN_FLAG_EXTERNAL_INPUT, 0);
    g3.v.v[x].quant = LS_XNN_Q_PER_TENSOR, g3.v.v[x].scale = 2, g3.v.v[x].zero_point = 0;
    uint32_t w = xb_const(&g3, LS_XNN_DT_QCINT8, 4, wd, wq, sizeof wq);
    g3.v.v[w].quant = LS_XNN_Q_PER_CHANNEL, g3.v.v[w].n_scales = 2, g3.v.v[w].scales = malloc(8);
    g3.v.v[w].scales[0] = 1, g3.v.v[w].scales[1] = 128;
    uint32_t y = xb_value(&g3, LS_XNN_DT_QINT8, 4, od, LS_XNN_FLAG_EXTERNAL_OUTPUT, 1);
    g3.v.v[y].quant = LS_XNN_Q_PER_TENSOR, g3.v.v[y].scale = 1, g3.v.v[y].zero_point = 0;
    ls_xnn_node *n = xb_node(&g3, LS_XNN_Conv2d, (const uint32_t[]){x, w, LS_XNN_INVALID_ID}, 3, y);
    n->p.conv = (__typeof__(n->p.conv)){.kernel_h = 1, .kernel_w = 1, .stride_h = 1, .stride_w = 1, .dilation_h = 1,
                                        .dilation_w = 1, .group_in = 1, .group_out = 2, .groups = 1};
    blob = xb_finish(&g3, 2);
    ck_assert_ptr_nonnull(blob);
    why = init_refuses(blob, g3.named, &err);
    ck_assert_msg(why && err.code == LS_ERR_NEEDS, "%s", why ? why : "init took it");
    ck_assert_msg(tu_contains(why, "XNNConv2d") && tu_contains(why, "256 of output channel 1"), "%s", why);
    ls_blob_unref(blob);
    xb_free(&g3);
}
END_TEST

/* xnn_subgraph_check_output_min_max (subgraph/validation.c), which xnn_define_fully_connected
 * calls: a float fully connected node with output_min_max [1, 0] is refused as an invalid
 * parameter (exit 2) naming the range; [0.5, 0.5] is taken (equal bounds pass), and clamps
 * y = 3·2 = 6 to 0.5. An Add with [1, 0] is taken: xnn_define_binary (subgraph/binary.c) checks
 * no bound. */
START_TEST(xnn_output_min_above_max_refused)
{
    for (int which = 0; which < 3; which++) {
        xb_graph g = {0};
        uint32_t xd[2] = {1, 1};
        const float wv[1] = {2};
        uint32_t x = xb_value(&g, LS_XNN_DT_FP32, 2, xd, LS_XNN_FLAG_EXTERNAL_INPUT, 0);
        uint32_t w = xb_const(&g, LS_XNN_DT_FP32, 2, xd, wv, sizeof wv);
        uint32_t y = xb_value(&g, LS_XNN_DT_FP32, 2, xd, LS_XNN_FLAG_EXTERNAL_OUTPUT, 1);
        ls_xnn_node *n = which == 2 ? xb_node(&g, LS_XNN_Add, (const uint32_t[]){x, w}, 2, y)
                                    : xb_node(&g, LS_XNN_FullyConnected, (const uint32_t[]){x, w, LS_XNN_INVALID_ID}, 3, y);
        n->has_min_max = true;
        n->out_min = which == 1 ? 0.5f : 1;
        n->out_max = which == 1 ? 0.5f : 0;
        ls_blob *blob = xb_finish(&g, 2);
        ck_assert_ptr_nonnull(blob);
        ls_error err;
        const char *why = init_refuses(blob, g.named, &err);
        if (which == 0) {
            ck_assert_msg(why && err.code == LS_ERR_INPUT, "%s", why ? why : "init took it");
            ck_assert_msg(tu_contains(why, "xnodes[0] (XNNFullyConnected") && tu_contains(why, "[1, 0]"), "%s", why);
        } else {
            ck_assert_msg(!why, "%s", why);
        }
        if (which == 1) {
            int64_t dims[2] = {1, 1};
            const float xv[1] = {3};
            ls_tensor *o = run1(blob, g.named, f32(2, dims, xv));
            ck_assert_float_eq(((float *)o->data)[0], 0.5f);
            ls_tensor_unref(o);
        }
        ls_blob_unref(blob);
        xb_free(&g);
    }
}
END_TEST

/* A static qs8 1x1 Conv2d whose values land on .5 at the clamp bounds. x qint8 [1, 1, 8, 1] at
 * 0.5, zero point 0; filter qcint8 1 at 1; no bias; y qint8 at 1, zero point 1; output_min_max
 * [-2.5, 3.5]. Requantization scale 0.5·1/1 = 0.5, acc = x.
 * Bounds, xnn_qs8_quantize (src/xnnpack/requantization.h) as create_convolution_operator
 * (subgraph/convolution-2d.c) applies it: lrintf(-2.5 + 1) = lrintf(-1.5) = -2 and
 * lrintf(3.5 + 1) = lrintf(4.5) = 4 (ties to even; the zero point added after rounding would
 * give -1 and 5). Values, xnn_qs8_requantize_fp32 (the same header; the fp32 GEMM kernels
 * compute it so: (float)acc·scale clamped to [min - zp, max - zp] = [-3, 3], lrintf, + zp):
 * x = 5: 2.5 → 2 → 3; 7: 3.5 → 3 → 4; 9: 4.5 → 3 → 4; 1: 0.5 → 0 → 1; -1: -0.5 → 0 → 1;
 * -5: -2.5 → -2 → -1; -7: -3.5 → -3 → -2; -9: -4.5 → -3 → -2. Rounding half away from zero
 * would give 4, 5, 5, 2, 0, -2, -3, -3 before the bounds; clamping the float result to
 * [-2.5, 3.5] before quantizing, 5, 5 for x = 7, 9 and -1 for x = -7, -9, which is what the
 * portable twin does, as the Edge program does: it is not compared here. */
START_TEST(xnn_qs8_conv_half_at_clamp_bounds)
{
    /* the same through Conv2d (int8 GEMM) and DepthwiseConv2d (computed in float, then
     * quantized and clamped in the output's steps) */
    for (int dw = 0; dw < 2; dw++) {
        xb_graph g = {0};
        uint32_t xd[4] = {1, 1, 8, 1}, wd[4] = {1, 1, 1, 1};
        const int8_t wq[1] = {1};
        uint32_t x = xb_value(&g, LS_XNN_DT_QINT8, 4, xd, LS_XNN_FLAG_EXTERNAL_INPUT, 0);
        g.v.v[x].quant = LS_XNN_Q_PER_TENSOR, g.v.v[x].scale = 0.5f, g.v.v[x].zero_point = 0;
        uint32_t w = xb_const(&g, LS_XNN_DT_QCINT8, 4, wd, wq, sizeof wq);
        g.v.v[w].quant = LS_XNN_Q_PER_CHANNEL, g.v.v[w].n_scales = 1, g.v.v[w].scales = malloc(4);
        g.v.v[w].scales[0] = 1;
        uint32_t y = xb_value(&g, LS_XNN_DT_QINT8, 4, xd, LS_XNN_FLAG_EXTERNAL_OUTPUT, 1);
        g.v.v[y].quant = LS_XNN_Q_PER_TENSOR, g.v.v[y].scale = 1, g.v.v[y].zero_point = 1;
        ls_xnn_node *n = xb_node(&g, dw ? LS_XNN_DepthwiseConv2d : LS_XNN_Conv2d,
                                 (const uint32_t[]){x, w, LS_XNN_INVALID_ID}, 3, y);
        n->p.conv = (__typeof__(n->p.conv)){.kernel_h = 1, .kernel_w = 1, .stride_h = 1, .stride_w = 1,
                                            .dilation_h = 1, .dilation_w = 1, .group_in = 1, .group_out = 1,
                                            .groups = 1};
        n->has_min_max = true, n->out_min = -2.5f, n->out_max = 3.5f;
        ls_blob *blob = xb_finish(&g, 2);
        ck_assert_ptr_nonnull(blob);
        int64_t dims[4] = {1, 1, 8, 1};
        ls_tensor *xt = ls_tensor_alloc(LS_DT_I8, 4, dims);
        const int8_t xv[8] = {5, 7, 9, 1, -1, -5, -7, -9}, want[8] = {3, 4, 4, 1, 1, -1, -2, -2};
        memcpy(xt->data, xv, sizeof xv);
        ls_tensor *o = run1(blob, g.named, xt);
        ck_assert_int_eq(o->dtype, LS_DT_I8);
        ck_assert_int_eq(o->numel, 8);
        for (int i = 0; i < 8; i++)
            ck_assert_msg(((int8_t *)o->data)[i] == want[i], "%s, x = %d: y = %d, not %d", dw ? "depthwise" : "conv",
                          xv[i], ((int8_t *)o->data)[i], want[i]);
        ls_tensor_unref(o);
        ls_blob_unref(blob);
        xb_free(&g);
    }
}
END_TEST

/* XNNPACK clamps with max(x, min) then min(·, max) (xnn_f32_vclamp_ukernel__scalar_u1), and
 * xnn_define_unary lets a Clamp with min 1 above max 0 through: every value becomes 0
 * (x = -1, 0.5, 2 → 0, 0, 0; clamping "below min → min" first would give 1 for -1). */
START_TEST(xnn_clamp_min_above_max_gives_max)
{
    xb_graph g = {0};
    uint32_t xd[1] = {3};
    uint32_t x = xb_value(&g, LS_XNN_DT_FP32, 1, xd, LS_XNN_FLAG_EXTERNAL_INPUT, 0);
    uint32_t y = xb_value(&g, LS_XNN_DT_FP32, 1, xd, LS_XNN_FLAG_EXTERNAL_OUTPUT, 1);
    ls_xnn_node *n = xb_node(&g, LS_XNN_Clamp, &x, 1, y);
    n->has_min_max = true, n->out_min = 1, n->out_max = 0;
    ls_blob *blob = xb_finish(&g, 2);
    ck_assert_ptr_nonnull(blob);
    int64_t dims[1] = {3};
    const float xv[3] = {-1, 0.5f, 2};
    ls_tensor *o = run1(blob, g.named, f32(1, dims, xv));
    for (int i = 0; i < 3; i++) ck_assert_msg(((float *)o->data)[i] == 0, "x = %g: y = %g", xv[i], ((float *)o->data)[i]);
    ls_tensor_unref(o);
    ls_blob_unref(blob);
    xb_free(&g);
}
END_TEST

Suite *xnnpack_semantics_suite(void)
{
    Suite *s = suite_create("xnnpack_semantics");
    TCase *tc = tcase_create("core");
    tcase_add_test(tc, xnn_avg_pool_ignores_dilation);
    tcase_add_test(tc, xnn_depthwise_multiplier_order);
    tcase_add_test(tc, xnn_qs8_fully_connected_clamps_in_steps);
    tcase_add_test(tc, xnn_qs8_fully_connected_bounds_round_with_zero_point);
    tcase_add_test(tc, xnn_blockwise_scales_are_bf16);
    tcase_add_test(tc, xnn_scale_buffer_refused);
    tcase_add_test(tc, xnn_dynamic_int8_per_token_by_hand);
    tcase_add_test(tc, xnn_requantization_scale_of_256_refused);
    tcase_add_test(tc, xnn_output_min_above_max_refused);
    tcase_add_test(tc, xnn_qs8_conv_half_at_clamp_bounds);
    tcase_add_test(tc, xnn_clamp_min_above_max_gives_max);
    suite_add_tcase(s, tc);
    return s;
}
