/* Names and one-line descriptions of XNNPACK values and nodes (xnnpack_blob.h), the layout of
 * each node type's table, and the byte size and bytes of a constant. */
#include <inttypes.h>
#include <math.h>
#include <stdio.h>
#include <string.h>

#include "xnn_internal.h"

const char *ls_xnn_node_type_name(uint8_t type)
{
    switch (type) {
#define LS_XNN_NAME_(tag, name) \
    case tag: return "XNN" #name;
        LS_XNN_NODE_TYPES(LS_XNN_NAME_)
#undef LS_XNN_NAME_
    default: return NULL;
    }
}

const char *ls_xnn_datatype_name(uint8_t dt)
{
    static const char *const names[] = {"invalid", "fp32",   "fp16",   "qint8",  "quint8", "qint32", "qcint8", "qcint32",
                                        "qcint4",  "qdint8", "qbint4", "qpint8", "int32",  "pfp32",  "bf16"};
    return dt < sizeof names / sizeof names[0] ? names[dt] : "unknown datatype";
}

lsx_layout lsx_node_layout(uint8_t type)
{
    switch (type) {
    case LS_XNN_Add: case LS_XNN_Div: case LS_XNN_Minimum: case LS_XNN_Multiply: case LS_XNN_Subtract:
    case LS_XNN_Maximum: case LS_XNN_PReLU: case LS_XNN_BatchMatrixMultiply: return LSX_L_2X1;
    case LS_XNN_Softmax: case LS_XNN_Sigmoid: case LS_XNN_Clamp: case LS_XNN_Floor: case LS_XNN_Convert:
    case LS_XNN_GlobalAvgPooling2d: case LS_XNN_SquareRoot: case LS_XNN_Ceiling: case LS_XNN_Hardswish:
    case LS_XNN_Negate: case LS_XNN_Square: case LS_XNN_Abs: case LS_XNN_ReciprocalSquareRoot: case LS_XNN_Log:
    case LS_XNN_Gelu: case LS_XNN_Tanh: case LS_XNN_Exp: case LS_XNN_Sin: return LSX_L_1X1;
    case LS_XNN_FullyConnected: return LSX_L_FC;
    case LS_XNN_StaticTranspose: case LS_XNN_StaticReshape: return LSX_L_DIMS;
    case LS_XNN_StaticResizeBilinear2D: return LSX_L_RESIZE;
    case LS_XNN_StaticConstantPad: return LSX_L_PAD;
    case LS_XNN_Concatenate2: case LS_XNN_Concatenate3: case LS_XNN_Concatenate4: case LS_XNN_Concatenate5:
        return LSX_L_CAT;
    case LS_XNN_ELU: case LS_XNN_LeakyReLU: return LSX_L_ALPHA;
    case LS_XNN_Conv2d: case LS_XNN_DepthwiseConv2d: case LS_XNN_ConvTranspose2d: return LSX_L_CONV;
    case LS_XNN_AvgPooling2d: case LS_XNN_MaxPooling2d: return LSX_L_POOL;
    case LS_XNN_ArgMaxPooling2d: return LSX_L_ARGMAXPOOL;
    case LS_XNN_StaticSlice: return LSX_L_SLICE;
    case LS_XNN_ScaledDotProductAttention: return LSX_L_SDPA;
    default: return LSX_L_UNKNOWN;
    }
}

bool lsx_input_optional(uint8_t type, unsigned k)
{
    switch (lsx_node_layout(type)) {
    case LSX_L_FC:
    case LSX_L_CONV: return k == 2;
    case LSX_L_SDPA: return k == 4;
    default: return false;
    }
}

void lsx_show_magic(const uint8_t *p, char *out, size_t cap)
{
    size_t at = 0;
    for (int i = 0; i < 4 && at + 5 < cap; i++) {
        if (p[i] >= 0x20 && p[i] < 0x7f && p[i] != '\\' && p[i] != '\'') out[at++] = (char)p[i];
        else at += (size_t)snprintf(out + at, cap - at, "\\x%02x", p[i]);
    }
    out[at] = 0;
}

uint64_t ls_xnn_value_nbytes(const ls_xnn_value *v)
{
    uint64_t rows = 1, last = v->ndim ? v->dims[v->ndim - 1] : 1;
    for (unsigned i = 0; i + 1 < v->ndim; i++) {
        if (v->dims[i] && rows > UINT64_MAX / v->dims[i]) return 0;
        rows *= v->dims[i];
    }
    size_t es;
    switch (v->datatype) {
    case LS_XNN_DT_QCINT4:
    case LS_XNN_DT_QBINT4: /* two per byte along the last dimension, each row whole bytes */
        if (rows > UINT64_MAX / ((last + 1) / 2 + 1)) return 0;
        return rows * ((last + 1) / 2);
    case LS_XNN_DT_FP16:
    case LS_XNN_DT_BF16: es = 2; break;
    case LS_XNN_DT_QINT8:
    case LS_XNN_DT_QUINT8:
    case LS_XNN_DT_QCINT8:
    case LS_XNN_DT_QDINT8:
    case LS_XNN_DT_QPINT8: es = 1; break;
    default: es = 4; break;
    }
    if (last && rows > UINT64_MAX / last / es) return 0;
    return rows * last * es;
}

const uint8_t *ls_xnn_constant_bytes(const ls_xnn_graph *g, const ls_blob *blob, const ls_named_data *named,
                                     uint32_t idx, uint64_t *size, ls_error *err)
{
    *size = 0;
    if (g->n_constants) {
        if (idx == 0 || idx >= g->n_constants) return NULL;
        const ls_xnn_constant *c = &g->constants[idx];
        if (c->named_key) {
            const ls_blob *b = ls_named_data_get(named, c->named_key);
            if (!b) {
                ls_fail(err, "constant %u: key %s is not in the program's named data", idx, c->named_key);
                return NULL;
            }
            *size = b->size;
            return b->data;
        }
        *size = c->size;
        return blob->data + g->constant_data_offset + c->offset; /* range checked by the reader */
    }
    if (idx == 0 || idx >= g->n_buffers) return NULL;
    *size = g->buffer_size[idx];
    return blob->data + g->buffer_pos[idx];
}

void ls_xnn_value_text(const ls_xnn_value *v, ls_buf *b)
{
    ls_buf_printf(b, "%s[", ls_xnn_datatype_name(v->datatype));
    for (unsigned i = 0; i < v->ndim; i++) ls_buf_printf(b, "%s%u", i ? ", " : "", v->dims[i]);
    ls_buf_putc(b, ']');
    switch (v->quant) {
    case LS_XNN_Q_PER_TENSOR: ls_buf_printf(b, " scale %.6g zp %d", v->scale, v->zero_point); break;
    case LS_XNN_Q_PER_CHANNEL: ls_buf_printf(b, " %u scales on dim %d", v->n_scales, v->channel_dim); break;
    case LS_XNN_Q_PER_CHANNEL_GROUP:
        ls_buf_printf(b, " %u %sscales, groups of %d on dim %d", v->n_scales, v->scales_bf16 ? "bf16 " : "",
                      v->group_size, v->channel_dim);
        break;
    case LS_XNN_Q_PER_TOKEN_DYNAMIC: ls_buf_printf(b, " dynamic, %d non-batch dims", v->num_nonbatch_dims); break;
    default: break;
    }
    if (v->dq_datatype) ls_buf_printf(b, " (quantized to %s at run time)", ls_xnn_datatype_name(v->dq_datatype));
}

static void ids_text(ls_buf *b, const uint32_t *ids, unsigned n)
{
    for (unsigned k = 0; k < n; k++) {
        if (ids[k] == LS_XNN_INVALID_ID) ls_buf_printf(b, "%s-", k ? ", " : "");
        else ls_buf_printf(b, "%s%%%u", k ? ", " : "", ids[k]);
    }
}

static void dims_text(ls_buf *b, const char *what, const uint32_t *v, uint32_t n)
{
    ls_buf_printf(b, " %s [", what);
    for (uint32_t i = 0; i < n; i++) ls_buf_printf(b, "%s%u", i ? ", " : "", v[i]);
    ls_buf_putc(b, ']');
}

void ls_xnn_node_text(const ls_xnn_graph *g, const ls_xnn_node *n, ls_buf *b)
{
    (void)g;
    const char *name = ls_xnn_node_type_name(n->type);
    if (!name) {
        ls_buf_printf(b, "xnode type %u (not in the XNNPACK schema lowerscope reads)", n->type);
        return;
    }
    ls_buf_printf(b, "%s(", name);
    ids_text(b, n->in, n->n_in);
    ls_buf_puts(b, ") -> ");
    ids_text(b, n->out, n->n_out);
    switch (lsx_node_layout(n->type)) {
    case LSX_L_CONV: {
        const __typeof__(n->p.conv) *c = &n->p.conv;
        ls_buf_printf(b, " kernel %ux%u stride %u,%u pad %u,%u,%u,%u dilation %u,%u groups %u (%u->%u channels each)",
                      c->kernel_h, c->kernel_w, c->stride_h, c->stride_w, c->pad_top, c->pad_right, c->pad_bottom,
                      c->pad_left, c->dilation_h, c->dilation_w, c->groups, c->group_in, c->group_out);
        if (n->type == LS_XNN_ConvTranspose2d) ls_buf_printf(b, " adjustment %u,%u", c->adjust_h, c->adjust_w);
        break;
    }
    case LSX_L_POOL:
    case LSX_L_ARGMAXPOOL: {
        const __typeof__(n->p.pool) *p = &n->p.pool;
        ls_buf_printf(b, " window %ux%u stride %u,%u pad %u,%u,%u,%u", p->pool_h, p->pool_w, p->stride_h, p->stride_w,
                      p->pad_top, p->pad_right, p->pad_bottom, p->pad_left);
        if (n->type != LS_XNN_ArgMaxPooling2d) ls_buf_printf(b, " dilation %u,%u", p->dilation_h, p->dilation_w);
        break;
    }
    case LSX_L_DIMS: dims_text(b, n->type == LS_XNN_StaticTranspose ? "perm" : "shape", n->p.dims.v, n->p.dims.n); break;
    case LSX_L_SLICE:
        dims_text(b, "offsets", n->p.slice.offsets, n->p.slice.n);
        dims_text(b, "sizes", n->p.slice.sizes, n->p.slice.n);
        break;
    case LSX_L_PAD:
        dims_text(b, "pre", n->p.pad.pre, n->p.pad.n);
        dims_text(b, "post", n->p.pad.post, n->p.pad.n);
        ls_buf_printf(b, " value %g", n->p.pad.value);
        break;
    case LSX_L_RESIZE: ls_buf_printf(b, " to %ux%u", n->p.resize.height, n->p.resize.width); break;
    case LSX_L_CAT: ls_buf_printf(b, " axis %u", n->p.axis); break;
    case LSX_L_ALPHA: ls_buf_printf(b, " %s %g", n->type == LS_XNN_ELU ? "alpha" : "slope", n->p.alpha); break;
    default: break;
    }
    if (n->has_min_max) ls_buf_printf(b, ", min %g max %g", n->out_min, n->out_max);
    if (n->flags) ls_buf_printf(b, ", flags 0x%x", n->flags);
}
