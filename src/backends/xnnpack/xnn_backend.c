/* XnnpackBackend: ExecuTorch's XNNPACK delegate, run by lowerscope's interpreter of its blob.
 *
 * init (XNNPACKBackend::init → XNNCompiler::compileModel) decodes and checks the blob, refuses
 * a node type the interpreter does not have by its name (exit 3) and what XNNPACK itself refuses
 * (xnn_define.c), makes each constant a tensor over the blob's or the named data's bytes and
 * packs the weights of the GEMM-like nodes once;
 * execute (XNNExecutor::prepare_args, forward, resize_outputs) binds the call's inputs by
 * external id, runs the nodes in order and returns the external outputs in external-id order;
 * preprocess is the writer (xnn_write.c). */
#include <inttypes.h>
#include <stdlib.h>
#include <string.h>

#include "xnn_internal.h"

typedef struct xnn_handle {
    ls_xnn_graph *g;
    ls_blob *blob;
    ls_named_data *named; /* the constants' bytes outside the blob */
    lsx_run R;
    uint32_t *last_use;   /* per value: the last node reading it (n_nodes: an output or a constant) */
    uint32_t n_in, n_out;
    int32_t *in_pos;      /* per delegate input (external id order): its value's position */
    int32_t *out_pos;
} xnn_handle;

static lsx_kernel kernel_of(uint8_t type)
{
    switch (type) {
    case LS_XNN_Add: case LS_XNN_Subtract: case LS_XNN_Multiply: case LS_XNN_Div: case LS_XNN_Minimum:
    case LS_XNN_Maximum: case LS_XNN_PReLU: return lsx_binary;
    case LS_XNN_Sigmoid: case LS_XNN_Clamp: case LS_XNN_Floor: case LS_XNN_SquareRoot: case LS_XNN_Ceiling:
    case LS_XNN_Hardswish: case LS_XNN_Negate: case LS_XNN_Square: case LS_XNN_Abs: case LS_XNN_ReciprocalSquareRoot:
    case LS_XNN_Log: case LS_XNN_Gelu: case LS_XNN_Tanh: case LS_XNN_Exp: case LS_XNN_Sin: case LS_XNN_ELU: case LS_XNN_LeakyReLU:
        return lsx_unary;
    case LS_XNN_Softmax: return lsx_softmax;
    case LS_XNN_Convert: return lsx_convert;
    case LS_XNN_FullyConnected: return lsx_fully_connected;
    case LS_XNN_BatchMatrixMultiply: return lsx_batch_matmul;
    case LS_XNN_ScaledDotProductAttention: return lsx_sdpa;
    case LS_XNN_Conv2d: case LS_XNN_DepthwiseConv2d: return lsx_conv2d;
    case LS_XNN_ConvTranspose2d: return lsx_deconv2d;
    case LS_XNN_AvgPooling2d: case LS_XNN_MaxPooling2d: case LS_XNN_ArgMaxPooling2d: return lsx_pool2d;
    case LS_XNN_GlobalAvgPooling2d: return lsx_global_avg_pool;
    case LS_XNN_StaticResizeBilinear2D: return lsx_resize_bilinear;
    case LS_XNN_StaticTranspose: return lsx_transpose;
    case LS_XNN_StaticReshape: return lsx_reshape;
    case LS_XNN_StaticSlice: return lsx_slice;
    case LS_XNN_Concatenate2: case LS_XNN_Concatenate3: case LS_XNN_Concatenate4: case LS_XNN_Concatenate5:
        return lsx_concat;
    case LS_XNN_StaticConstantPad: return lsx_pad;
    default: return NULL;
    }
}

static void xnn_destroy(void *hv)
{
    xnn_handle *h = hv;
    if (!h) return;
    for (uint32_t i = 0; h->R.vals && i < h->g->n_values; i++) {
        ls_tensor_unref(h->R.vals[i].t);
        free(h->R.vals[i].row_scale);
        free(h->R.vals[i].row_zp);
    }
    for (uint32_t i = 0; h->R.prep && i < h->g->n_nodes; i++) lsx_prep_free(&h->R.prep[i]);
    free(h->R.vals);
    free(h->R.prep);
    free(h->last_use);
    free(h->in_pos);
    free(h->out_pos);
    ls_xnn_graph_free(h->g);
    ls_blob_unref(h->blob);
    ls_named_data_unref((ls_named_data *)h->named);
    free(h);
}

/* A constant value as a tensor over its bytes (shared with the blob or the named data). */
static int constant_tensor(xnn_handle *h, uint32_t pos, ls_error *err)
{
    const ls_xnn_value *v = &h->g->values[pos];
    uint64_t size = 0;
    ls_error e2;
    e2.msg[0] = 0;
    const uint8_t *bytes = ls_xnn_constant_bytes(h->g, h->blob, h->named, v->constant_idx, &size, &e2);
    if (!bytes) return ls_fail(err, "%s: xvalues[%u] (id %u): %s", h->R.name, pos, v->id, e2.msg[0] ? e2.msg : "no bytes");
    uint64_t need = ls_xnn_value_nbytes(v);
    ls_dtype dt = lsx_storage(v->datatype);
    if (dt == LS_DT_UNKNOWN)
        return ls_fail_needs(err, "%s: xvalues[%u]: constants of datatype %s are not supported", h->R.name, pos,
                             ls_xnn_datatype_name(v->datatype));
    if (!need && v->ndim) need = 0;
    if (size < need)
        return ls_fail(err, "%s: xvalues[%u] (id %u): %s needs %" PRIu64 " bytes, its constant %u has %" PRIu64,
                       h->R.name, pos, v->id, ls_xnn_datatype_name(v->datatype), need, v->constant_idx, size);
    int64_t dims[LS_XNN_MAX_DIMS];
    int nd = v->ndim;
    for (int i = 0; i < nd; i++) dims[i] = v->dims[i];
    if (v->datatype == LS_XNN_DT_QCINT4 || v->datatype == LS_XNN_DT_QBINT4) dims[nd - 1] = (dims[nd - 1] + 1) / 2;
    ls_tensor *t = ls_tensor_new(dt, nd, dims, &e2);
    if (!t) return ls_fail(err, "%s: xvalues[%u]: %s", h->R.name, pos, e2.msg);
    memcpy(t->data, bytes, t->nbytes); /* a copy: named data and blob bytes need not be aligned */
    h->R.vals[pos].t = t;
    return 0;
}

static int find_externals(xnn_handle *h, ls_error *err)
{
    const ls_xnn_graph *g = h->g;
    for (uint32_t i = 0; i < g->n_values; i++) {
        if (g->values[i].flags & LS_XNN_FLAG_EXTERNAL_INPUT) h->n_in++;
        if (g->values[i].flags & LS_XNN_FLAG_EXTERNAL_OUTPUT) h->n_out++;
    }
    h->in_pos = ls_malloc(sizeof *h->in_pos * (h->n_in + 1));
    h->out_pos = ls_malloc(sizeof *h->out_pos * (h->n_out + 1));
    for (uint32_t k = 0; k < h->n_in; k++) h->in_pos[k] = -1;
    for (uint32_t k = 0; k < h->n_out; k++) h->out_pos[k] = -1;
    /* external ids are argument indices: inputs 0..n_in-1, outputs after them (generate_node_
     * to_external_map numbers placeholders, then outputs; XNNExecutor reads args[ext_id]) */
    for (uint32_t i = 0; i < g->n_values; i++) {
        const ls_xnn_value *v = &g->values[i];
        if (!(v->flags & (LS_XNN_FLAG_EXTERNAL_INPUT | LS_XNN_FLAG_EXTERNAL_OUTPUT))) continue;
        bool in = v->flags & LS_XNN_FLAG_EXTERNAL_INPUT;
        uint32_t k = in ? v->external_id : v->external_id - h->n_in;
        if ((in && v->external_id >= h->n_in) || (!in && (v->external_id < h->n_in || k >= h->n_out)))
            return ls_fail(err, "%s: xvalues[%u]: external id %u of an external %s is outside %s (%u inputs, %u outputs)",
                           h->R.name, i, v->external_id, in ? "input" : "output", in ? "the inputs" : "the outputs",
                           h->n_in, h->n_out);
        int32_t *slot = in ? &h->in_pos[k] : &h->out_pos[k];
        if (*slot >= 0)
            return ls_fail(err, "%s: xvalues[%u] and xvalues[%d] have the same external id %u", h->R.name, i, *slot,
                           v->external_id);
        if (v->constant_idx) return ls_fail(err, "%s: xvalues[%u]: an external value with constant data", h->R.name, i);
        *slot = (int32_t)i;
    }
    return 0;
}

static int xnn_init(const ls_blob *processed, const ls_compile_spec *specs, uint32_t nspecs, const ls_named_data *named,
                    void **handle, ls_error *err)
{
    (void)specs;
    (void)nspecs; /* ExecuTorch's XNNPACK backend reads none that change what is computed */
    *handle = NULL;
    if (!processed) return ls_fail(err, "XnnpackBackend: init: no blob");
    ls_xnn_graph *g;
    if (ls_xnn_decode(processed->data, processed->size, "XnnpackBackend blob", &g, err) != 0) return -1;
    xnn_handle *h = ls_calloc(1, sizeof *h);
    h->g = g;
    h->blob = ls_blob_ref((ls_blob *)processed); /* the reference count is not the blob's content */
    h->named = ls_named_data_ref((ls_named_data *)named);
    h->R = (lsx_run){.g = g, .name = "XnnpackBackend"};
    h->R.vals = ls_calloc(g->n_values ? g->n_values : 1, sizeof *h->R.vals);
    h->R.prep = ls_calloc(g->n_nodes ? g->n_nodes : 1, sizeof *h->R.prep);
    h->R.err = err;
    int rc = 0;
    for (uint32_t i = 0; i < g->n_nodes && rc == 0; i++)
        if (!kernel_of(g->nodes[i].type)) {
            const char *tn = ls_xnn_node_type_name(g->nodes[i].type);
            rc = tn ? ls_fail_needs(err, "XnnpackBackend: xnodes[%u]: %s is not supported by lowerscope's interpreter", i, tn)
                    : ls_fail_needs(err,
                                    "XnnpackBackend: xnodes[%u]: xnode type %u is not in the XNNPACK schema lowerscope "
                                    "follows (its last type is XNNSin, 45)",
                                    i, g->nodes[i].type);
        }
    /* newer writers may keep a weight's scales in a constant (scale_buffer_idx, runtime_schema.fbs
     * at 0144bfeb); whether those are fp32 or bf16 is not in the sources read: refused, never guessed */
    for (uint32_t i = 0; i < g->n_values && rc == 0; i++)
        if (g->values[i].scale_buffer_idx && !g->values[i].scales)
            rc = ls_fail_needs(err, "XnnpackBackend: xvalues[%u]: scales kept in constant %u (scale_buffer_idx), which "
                               "lowerscope's interpreter does not read", i, g->values[i].scale_buffer_idx);
    /* XNNCompiler defines every node, then xnn_create_runtime creates their operators: what
     * XNNPACK refuses at either step is refused here (xnn_define.c) */
    for (uint32_t i = 0; i < g->n_nodes && rc == 0; i++) rc = lsx_check_output_range(&h->R, i);
    for (uint32_t i = 0; i < g->n_nodes && rc == 0; i++) rc = lsx_check_requantization(&h->R, i);
    for (uint32_t i = 0; i < g->n_values && rc == 0; i++)
        if (g->values[i].constant_idx) rc = constant_tensor(h, i, err);
    if (rc == 0) rc = find_externals(h, err);
    for (uint32_t i = 0; i < g->n_nodes && rc == 0; i++) rc = lsx_prepare_weights(&h->R, i);
    if (rc == 0) {
        h->last_use = ls_malloc(sizeof *h->last_use * (g->n_values ? g->n_values : 1));
        for (uint32_t i = 0; i < g->n_values; i++) h->last_use[i] = g->values[i].constant_idx ? g->n_nodes : 0;
        for (uint32_t i = 0; i < g->n_nodes; i++)
            for (unsigned k = 0; k < g->nodes[i].n_in; k++) {
                int32_t p = ls_xnn_value_pos(g, g->nodes[i].in[k]);
                if (p >= 0 && h->last_use[p] < i) h->last_use[p] = i;
            }
        for (uint32_t k = 0; k < h->n_out; k++) h->last_use[h->out_pos[k]] = g->n_nodes;
    }
    h->R.err = NULL;
    if (rc != 0) {
        xnn_destroy(h);
        return -1;
    }
    *handle = h;
    return 0;
}

static int xnn_execute(void *hv, const ls_value *inputs, uint32_t n_inputs, ls_value **outputs, uint32_t *n_outputs,
                       ls_error *err)
{
    xnn_handle *h = hv;
    const ls_xnn_graph *g = h->g;
    *outputs = NULL;
    *n_outputs = 0;
    if (n_inputs != h->n_in)
        return ls_fail(err, "XnnpackBackend: called with %u inputs, the blob has %u external inputs", n_inputs, h->n_in);
    h->R.err = err;
    int rc = 0;
    for (uint32_t k = 0; k < h->n_in && rc == 0; k++) {
        const ls_xnn_value *d = &g->values[h->in_pos[k]];
        const ls_value *v = &inputs[k];
        ls_dtype want = lsx_storage(d->datatype);
        /* any shape: XNNExecutor::prepare_args reshapes the external value to the tensor given
         * (a 0-d tensor for a value serialized as [1], define_tensor's "dims = [1]") */
        if (v->kind != LS_V_TENSOR || v->t->dtype != want || v->t->ndim > LS_XNN_MAX_DIMS)
            rc = ls_fail(err, "XnnpackBackend: input %u: expected a %s tensor of at most %d dims (value %u), got %s%s", k,
                         ls_dtype_name(want), LS_XNN_MAX_DIMS, d->id,
                         v->kind == LS_V_TENSOR ? ls_dtype_name(v->t->dtype) : "",
                         v->kind == LS_V_TENSOR ? "" : ls_value_kind_text(v->kind));
        else
            h->R.vals[h->in_pos[k]].t = ls_tensor_ref(v->t);
    }
    for (uint32_t i = 0; i < g->n_nodes && rc == 0; i++) {
        rc = kernel_of(g->nodes[i].type)(&h->R, i);
        /* values no later node reads are dropped now (constants and outputs stay) */
        for (unsigned k = 0; k < g->nodes[i].n_in && rc == 0; k++) {
            int32_t p = ls_xnn_value_pos(g, g->nodes[i].in[k]);
            if (p >= 0 && h->last_use[p] == i) {
                ls_tensor_unref(h->R.vals[p].t);
                h->R.vals[p].t = NULL;
            }
        }
    }
    if (rc == 0) {
        ls_value *outs = ls_calloc(h->n_out ? h->n_out : 1, sizeof *outs);
        for (uint32_t k = 0; k < h->n_out && rc == 0; k++) {
            lsx_rval *v = &h->R.vals[h->out_pos[k]];
            if (!v->t) {
                rc = ls_fail(err, "XnnpackBackend: output %u (value %u) is computed by no node", k, g->values[h->out_pos[k]].id);
                break;
            }
            outs[k] = ls_value_tensor(v->t);
            v->t = NULL;
        }
        if (rc == 0) {
            *outputs = outs;
            *n_outputs = h->n_out;
        } else {
            for (uint32_t k = 0; k < h->n_out; k++) ls_value_release(&outs[k]);
            free(outs);
        }
    }
    /* what this run made goes; constants stay */
    for (uint32_t i = 0; i < g->n_values; i++)
        if (!g->values[i].constant_idx) {
            ls_tensor_unref(h->R.vals[i].t);
            free(h->R.vals[i].row_scale);
            free(h->R.vals[i].row_zp);
            h->R.vals[i] = (lsx_rval){0};
        }
    h->R.err = NULL;
    return rc;
}

const ls_backend ls_xnnpack_backend = {
    .id = LS_XNN_BACKEND_ID,
    .preprocess = lsx_preprocess,
    .init = xnn_init,
    .execute = xnn_execute,
    .destroy = xnn_destroy,
};
