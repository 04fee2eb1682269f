/* What XNNPACK itself refuses while ExecuTorch builds its runtime from a blob
 * (XNNCompiler::compileModel: each node's xnn_define_*, then xnn_create_runtime, which creates
 * every node's operator), so that the interpreter refuses the same blobs at init. Transcribed
 * from google/XNNPACK (the newest versions read; older ones differ, see docs/xnnpack.md):
 *
 *  - define time, src/subgraph/validation.c, xnn_subgraph_check_output_min_max, called by
 *    xnn_define_fully_connected (fully-connected.c), xnn_define_convolution_2d
 *    (convolution-2d.c), xnn_define_deconvolution_2d (deconvolution-2d.c) and
 *    xnn_define_max_pooling_2d (max-pooling-2d.c): a NaN bound, or output_min > output_max,
 *    is xnn_status_invalid_parameter ("lower bound must be less than or equal to upper bound";
 *    equal bounds pass). The older define functions of depthwise-convolution-2d.c,
 *    global-average-pooling-2d.c and average pooling refused output_min >= output_max; here
 *    they take the same check as the others. Binary nodes and Clamp are not checked:
 *    xnn_define_binary (src/subgraph/binary.c) and xnn_define_unary check neither bound.
 *  - create time, the static quantized GEMM operators: src/operators/fully-connected-nc.c,
 *    xnn_create_fully_connected_nc_qs8, create_fully_connected_nc_qx8_qc8w (per output
 *    channel) and xnn_create_fully_connected_nc_qu8; src/operators/convolution-nhwc.c,
 *    init_requantization_scale_qx8_qc8w (Conv2d, and DepthwiseConv2d, which
 *    depthwise-convolution-2d.c creates with xnn_create_convolution2d_nhwc_qs8 / _qs8_qc8w);
 *    src/operators/deconvolution-nhwc.c, xnn_create_deconvolution2d_nhwc_qs8. The
 *    requantization scale input_scale * kernel_scale[c] / output_scale, in float and in that
 *    order, >= 256.0f is xnn_status_unsupported_parameter ("requantization scale %.7g is greater
 *    or equal to 256.0"). There is no lower bound at create time: the 0x1.0p-32f of
 *    src/xnnpack/requantization.h (xnn_qs8_requantize_fp32) is an assert of the reference.
 *    The quantized elementwise nodes are not bounded either: the newest
 *    src/operators/binary-elementwise-nd.cc (init_binary_elementwise_nd) checks only that the
 *    scales are finite and positive, which the reader already does.
 *
 * XNNPACK's invalid_parameter is lowerscope's bad input (exit 2); its unsupported_parameter a
 * valid blob that needs what the backend lacks (exit 3). */
#include <math.h>
#include <stdio.h>

#include "xnn_internal.h"

/* The nodes whose define function hands output_min/max to xnn_subgraph_check_output_min_max. */
static bool checks_output_range(uint8_t type)
{
    switch (type) {
    case LS_XNN_FullyConnected:
    case LS_XNN_Conv2d:
    case LS_XNN_DepthwiseConv2d:
    case LS_XNN_ConvTranspose2d:
    case LS_XNN_MaxPooling2d:
    case LS_XNN_AvgPooling2d:
    case LS_XNN_GlobalAvgPooling2d: return true;
    default: return false;
    }
}

int lsx_check_output_range(lsx_run *R, uint32_t node)
{
    const ls_xnn_node *n = &R->g->nodes[node];
    /* without output_min_max XNNCompiler's getOutputMinMax passes -inf, +inf */
    if (!n->has_min_max || !checks_output_range(n->type)) return 0;
    if (isnan(n->out_min)) return lsx_fail(R, node, "output_min is NaN: XNNPACK refuses a NaN lower bound (invalid parameter)");
    if (isnan(n->out_max)) return lsx_fail(R, node, "output_max is NaN: XNNPACK refuses a NaN upper bound (invalid parameter)");
    if (n->out_min > n->out_max)
        return lsx_fail(R, node,
                        "output range [%.7g, %.7g]: XNNPACK refuses a lower bound above the upper bound (invalid parameter)",
                        n->out_min, n->out_max);
    return 0;
}

static bool is_static_q8(const ls_xnn_value *d)
{
    return (d->datatype == LS_XNN_DT_QINT8 || d->datatype == LS_XNN_DT_QUINT8) && d->dq_datatype != LS_XNN_DT_QINT8 &&
           d->quant == LS_XNN_Q_PER_TENSOR;
}

int lsx_check_requantization(lsx_run *R, uint32_t node)
{
    const ls_xnn_node *n = &R->g->nodes[node];
    if (n->type != LS_XNN_FullyConnected && n->type != LS_XNN_Conv2d && n->type != LS_XNN_DepthwiseConv2d &&
        n->type != LS_XNN_ConvTranspose2d)
        return 0;
    const ls_xnn_value *in = lsx_def(R, n->in[0]), *w = lsx_def(R, n->in[1]), *out = lsx_def(R, n->out[0]);
    if (!in || !w || !out || !is_static_q8(in) || !is_static_q8(out)) return 0; /* float or dynamic (qd8) */
    bool per_channel = w->quant == LS_XNN_Q_PER_CHANNEL && w->scales;
    if (!per_channel && w->quant != LS_XNN_Q_PER_TENSOR) return 0;
    uint32_t channels = per_channel ? w->n_scales : 1;
    for (uint32_t c = 0; c < channels; c++) {
        float kernel_scale = per_channel ? w->scales[c] : w->scale;
        float requantization_scale = in->scale * kernel_scale / out->scale;
        if (requantization_scale >= 256.0f) {
            char which[48] = "";
            if (per_channel) snprintf(which, sizeof which, " of output channel %u", c);
            return lsx_fail_needs(R, node,
                                    "requantization scale %.7g%s (input scale %.7g x kernel scale %.7g / output scale "
                                    "%.7g) is 256 or more, which XNNPACK does not support (unsupported parameter)",
                                    requantization_scale, which, in->scale, kernel_scale, out->scale);
        }
    }
    return 0;
}
