/* The XNNPACK blob reader (include/xnnpack_blob.h): the XH00 header, then the XNNGraph
 * flatbuffer through flatbuf.h's verified reader, field by field in schema.fbs's vtable order,
 * then the checks ExecuTorch's XNNCompiler.cpp makes before it hands the graph to XNNPACK
 * (compileModel: identifier, xvalues and xnodes present, num_externs <= 4096; defineTensor:
 * value flags within EXTERNAL_INPUT | EXTERNAL_OUTPUT, constant index in range, blockwise scale
 * count; REMAP_ID: every id a node names was defined). */
#include <inttypes.h>
#include <math.h>
#include <stdlib.h>
#include <string.h>

#include "flatbuf.h"
#include "ptrmap.h"
#include "xnn_internal.h"

#define TRY(x)                        \
    do {                              \
        if ((x) < 0) return -1;       \
    } while (0)

struct ls_xnn_index {
    ls_ptrmap by_id; /* id + 1 → position */
};

bool ls_xnn_is_blob(const uint8_t *data, size_t size)
{
    if (!data || size < 8) return false;
    return !memcmp(data + 4, "XH00", 4) || !memcmp(data + 4, "XN00", 4) || !memcmp(data + 4, "XN01", 4);
}

int32_t ls_xnn_value_pos(const ls_xnn_graph *g, uint32_t id)
{
    uint32_t pos;
    if (!g->index || id == LS_XNN_INVALID_ID) return -1;
    if (!ls_ptrmap_get_u32(&g->index->by_id, (const void *)((uintptr_t)id + 1), &pos)) return -1;
    return (int32_t)pos;
}

void ls_xnn_graph_free(ls_xnn_graph *g)
{
    if (!g) return;
    for (uint32_t i = 0; i < g->n_values; i++) free(g->values[i].scales);
    free(g->values);
    free(g->nodes);
    free(g->input_ids);
    free(g->output_ids);
    free(g->constants);
    free(g->buffer_pos);
    free(g->buffer_size);
    if (g->index) ls_ptrmap_free(&g->index->by_id);
    free(g->index);
    free(g);
}

/* ---- field helpers */

static int f32_field(ls_fb_reader *r, const ls_fb_table *t, unsigned slot, const char *field, float def, float *out)
{
    uint32_t bits;
    *out = def;
    int rc = ls_fb_scalar(r, t, slot, field, 4, &bits);
    if (rc == 1) memcpy(out, &bits, 4);
    return rc;
}

static int i16_field(ls_fb_reader *r, const ls_fb_table *t, unsigned slot, const char *field, int16_t *out)
{
    uint16_t v = 0;
    int rc = ls_fb_scalar(r, t, slot, field, 2, &v);
    *out = (int16_t)v;
    return rc;
}

/* A [uint] vector of at most cap entries into out. */
static int u32s_field(ls_fb_reader *r, const ls_fb_table *t, unsigned slot, const char *field, uint32_t cap,
                      uint32_t *out, uint32_t *n)
{
    ls_fb_vec v;
    *n = 0;
    int rc = ls_fb_vector_field(r, t, slot, field, 4, &v);
    if (rc <= 0) return rc;
    if (v.n > cap) return ls_fb_fail(r, field, v.pos, "%u entries, more than the %u XNNPACK allows", v.n, cap);
    TRY(ls_fb_vec_copy(r, &v, field, out));
    *n = v.n;
    return 1;
}

/* A vector of any length into a new array (NULL when absent or empty). */
static int u32s_alloc(ls_fb_reader *r, const ls_fb_table *t, unsigned slot, const char *field, uint32_t **out,
                      uint32_t *n)
{
    ls_fb_vec v;
    *out = NULL;
    *n = 0;
    int rc = ls_fb_vector_field(r, t, slot, field, 4, &v);
    if (rc <= 0 || v.n == 0) return rc;
    *out = ls_malloc(sizeof **out * v.n);
    if (ls_fb_vec_copy(r, &v, field, *out) < 0) {
        free(*out);
        *out = NULL;
        return -1;
    }
    *n = v.n;
    return 1;
}

/* ---- values */

static int read_quant(ls_fb_reader *r, const ls_fb_table *qt, uint8_t kind, ls_xnn_value *v)
{
    ls_fb_vec sv;
    int rc;
    switch (kind) {
    case LS_XNN_Q_PER_TENSOR:
        TRY(f32_field(r, qt, 0, "scale", 0, &v->scale));
        TRY(ls_fb_i32(r, qt, 1, "zero_point", 0, &v->zero_point));
        return 0;
    case LS_XNN_Q_PER_TOKEN_DYNAMIC:
        TRY(ls_fb_i32(r, qt, 0, "num_nonbatch_dims", 0, &v->num_nonbatch_dims));
        return 0;
    case LS_XNN_Q_PER_CHANNEL:
    case LS_XNN_Q_PER_CHANNEL_GROUP: {
        bool group = kind == LS_XNN_Q_PER_CHANNEL_GROUP;
        TRY(ls_fb_i32(r, qt, 1, "channel_dim", 0, &v->channel_dim));
        if (group) TRY(ls_fb_i32(r, qt, 2, "group_size", 0, &v->group_size));
        TRY(ls_fb_u32(r, qt, group ? 4 : 2, "scale_buffer_idx", 0, &v->scale_buffer_idx));
        TRY(rc = ls_fb_vector_field(r, qt, 0, "scale", 4, &sv));
        if (rc == 1 && sv.n) {
            v->scales = ls_malloc(sizeof *v->scales * sv.n);
            TRY(ls_fb_vec_copy(r, &sv, "scale", v->scales));
            v->n_scales = sv.n;
        } else if (group) {
            TRY(rc = ls_fb_vector_field(r, qt, 3, "scale_bf16", 2, &sv));
            if (rc == 1 && sv.n) {
                uint16_t *raw = ls_malloc(sizeof *raw * sv.n);
                if (ls_fb_vec_copy(r, &sv, "scale_bf16", raw) < 0) {
                    free(raw);
                    return -1;
                }
                v->scales = ls_malloc(sizeof *v->scales * sv.n);
                for (uint32_t i = 0; i < sv.n; i++) v->scales[i] = ls_bf16_to_f32(raw[i]);
                free(raw);
                v->n_scales = sv.n;
                v->scales_bf16 = true;
            }
        }
        return 0;
    }
    default: return ls_fb_fail(r, "quant_params_type", 0, "unknown quantization kind %u", kind);
    }
}

static int read_tensor_value(ls_fb_reader *r, const ls_fb_table *t, ls_xnn_value *v)
{
    int16_t dt = 0, dq = 0;
    TRY(i16_field(r, t, 0, "datatype", &dt));
    TRY(i16_field(r, t, 7, "dq_datatype", &dq));
    if (dt < 0 || dt >= LS_XNN_DT_COUNT) return ls_fb_fail(r, "datatype", 0, "unknown XNNDatatype %d", dt);
    if (dq < 0 || dq >= LS_XNN_DT_COUNT) return ls_fb_fail(r, "dq_datatype", 0, "unknown XNNDatatype %d", dq);
    v->datatype = (uint8_t)dt;
    v->dq_datatype = (uint8_t)dq;
    uint32_t n = 0;
    TRY(u32s_field(r, t, 2, "dims", LS_XNN_MAX_DIMS, v->dims, &n));
    v->ndim = (uint8_t)n;
    TRY(ls_fb_u32(r, t, 3, "constant_buffer_idx", 0, &v->constant_idx));
    TRY(ls_fb_u32(r, t, 4, "external_id", 0, &v->external_id));
    TRY(ls_fb_u32(r, t, 5, "flags", 0, &v->flags));
    TRY(ls_fb_u32(r, t, 6, "id_out", 0, &v->id));
    /* defineTensor: "Tensor value has unsupported flag bits" */
    if (v->flags & ~(LS_XNN_FLAG_EXTERNAL_INPUT | LS_XNN_FLAG_EXTERNAL_OUTPUT))
        return ls_fb_fail(r, "flags", 0, "unsupported flag bits 0x%x (only external input 1 and output 2)", v->flags);
    return 0;
}

static int read_value(ls_fb_reader *r, const ls_fb_table *xv, ls_xnn_value *v)
{
    uint8_t type;
    ls_fb_table u;
    int rc;
    TRY(rc = ls_fb_union(r, xv, 0, "xvalue_union", &type, &u));
    if (rc == 0 || (type != 1 && type != 2))
        return ls_fb_fail(r, "xvalue_union", xv->pos, rc == 0 ? "missing" : "unknown value type %u", type);
    if (type == 1) return read_tensor_value(r, &u, v);
    ls_fb_table tv, qt;
    TRY(rc = ls_fb_table_field(r, &u, 0, "tensor_value", &tv));
    if (rc == 0) return ls_fb_fail(r, "tensor_value", u.pos, "missing");
    TRY(ls_fb_push(r, ".tensor_value"));
    TRY(read_tensor_value(r, &tv, v));
    ls_fb_pop(r);
    uint8_t qk;
    TRY(rc = ls_fb_union(r, &u, 1, "quant_params", &qk, &qt));
    if (rc == 0) return ls_fb_fail(r, "quant_params", u.pos, "a quantized value without quantization parameters");
    TRY(ls_fb_push(r, ".quant_params"));
    TRY(read_quant(r, &qt, qk, v));
    ls_fb_pop(r);
    v->quant = qk;
    return 0;
}

/* ---- nodes: the layout of each XNodeUnion member's table */

static int ids(ls_fb_reader *r, const ls_fb_table *t, const unsigned *slots, const char *const *names, unsigned n,
               uint32_t *out)
{
    for (unsigned k = 0; k < n; k++) /* absent: the schema's default, 0 */
        TRY(ls_fb_u32(r, t, slots[k], names[k], 0, &out[k]));
    return 0;
}

#define U32(slot, name, dst) TRY(ls_fb_u32(r, t, slot, name, 0, dst))
#define LSX_MAX_WINDOW 65535u    /* kernel, stride, dilation, padding: far past any real network */
#define LSX_MAX_CHANNELS (1u << 24)

/* A convolution's or pooling's size field, bounded so that the products the geometry takes
 * (window × dilation, padded sizes) stay far inside 64 bits. */
static int geometry_field(ls_fb_reader *r, const ls_fb_table *t, const char *name, uint32_t v, bool window)
{
    uint32_t cap = window ? LSX_MAX_WINDOW : LSX_MAX_CHANNELS;
    if (v > cap) return ls_fb_fail(r, name, t->pos, "%u is past what lowerscope takes (%u)", v, cap);
    return 0;
}

static int read_node_fields(ls_fb_reader *r, const ls_fb_table *t, ls_xnn_node *n)
{
    static const char *const io2[] = {"input1_id", "input2_id", "output_id"};
    static const char *const io1[] = {"input_id", "output_id"};
    uint32_t tmp[8];
    switch (lsx_node_layout(n->type)) {
    case LSX_L_2X1:
        TRY(ids(r, t, (const unsigned[]){0, 1, 2}, io2, 3, tmp));
        n->n_in = 2, n->in[0] = tmp[0], n->in[1] = tmp[1];
        n->n_out = 1, n->out[0] = tmp[2];
        U32(3, "flags", &n->flags);
        return 0;
    case LSX_L_1X1:
        TRY(ids(r, t, (const unsigned[]){0, 1}, io1, 2, tmp));
        n->n_in = 1, n->in[0] = tmp[0], n->n_out = 1, n->out[0] = tmp[1];
        U32(2, "flags", &n->flags);
        return 0;
    case LSX_L_FC:
        TRY(ids(r, t, (const unsigned[]){0, 1, 2, 3}, (const char *const[]){"input1_id", "filter_id", "bias_id", "output_id"},
                4, tmp));
        n->n_in = 3, memcpy(n->in, tmp, 3 * 4), n->n_out = 1, n->out[0] = tmp[3];
        U32(4, "flags", &n->flags);
        return 0;
    case LSX_L_DIMS: /* StaticTranspose, StaticReshape: num_dims, perm/new_shape, input, output, flags */
        TRY(u32s_field(r, t, 1, n->type == LS_XNN_StaticTranspose ? "perm" : "new_shape", LS_XNN_MAX_DIMS, n->p.dims.v,
                       &n->p.dims.n));
        TRY(ids(r, t, (const unsigned[]){2, 3}, io1, 2, tmp));
        n->n_in = 1, n->in[0] = tmp[0], n->n_out = 1, n->out[0] = tmp[1];
        U32(4, "flags", &n->flags);
        return 0;
    case LSX_L_RESIZE:
        U32(0, "new_height", &n->p.resize.height);
        U32(1, "new_width", &n->p.resize.width);
        TRY(ids(r, t, (const unsigned[]){2, 3}, io1, 2, tmp));
        n->n_in = 1, n->in[0] = tmp[0], n->n_out = 1, n->out[0] = tmp[1];
        U32(4, "flags", &n->flags);
        return 0;
    case LSX_L_PAD: {
        uint32_t npost = 0;
        TRY(u32s_field(r, t, 0, "pre_paddings", LS_XNN_MAX_DIMS, n->p.pad.pre, &n->p.pad.n));
        TRY(u32s_field(r, t, 1, "post_paddings", LS_XNN_MAX_DIMS, n->p.pad.post, &npost));
        if (npost != n->p.pad.n)
            return ls_fb_fail(r, "post_paddings", t->pos, "%u entries for %u pre_paddings", npost, n->p.pad.n);
        TRY(f32_field(r, t, 2, "padding_value", 0, &n->p.pad.value));
        TRY(ids(r, t, (const unsigned[]){3, 4}, io1, 2, tmp));
        n->n_in = 1, n->in[0] = tmp[0], n->n_out = 1, n->out[0] = tmp[1];
        U32(5, "flags", &n->flags);
        return 0;
    }
    case LSX_L_CAT: {
        unsigned k = n->type == LS_XNN_Concatenate2 ? 2 : n->type == LS_XNN_Concatenate3 ? 3 : n->type == LS_XNN_Concatenate4 ? 4 : 5;
        U32(0, "axis", &n->p.axis);
        TRY(ids(r, t, (const unsigned[]){1, 2, 3, 4, 7, 5},
                (const char *const[]){"input1_id", "input2_id", "input3_id", "input4_id", "input5_id", "output_id"}, 6, tmp));
        n->n_in = (uint8_t)k;
        memcpy(n->in, tmp, 4 * k);
        n->n_out = 1, n->out[0] = tmp[5];
        U32(6, "flags", &n->flags);
        return 0;
    }
    case LSX_L_ALPHA: /* ELU alpha, LeakyReLU negative_slope: the float, input, output, flags */
        TRY(f32_field(r, t, 0, n->type == LS_XNN_ELU ? "alpha" : "negative_slope", 0, &n->p.alpha));
        TRY(ids(r, t, (const unsigned[]){1, 2}, io1, 2, tmp));
        n->n_in = 1, n->in[0] = tmp[0], n->n_out = 1, n->out[0] = tmp[1];
        U32(3, "flags", &n->flags);
        return 0;
    case LSX_L_CONV: {
        uint32_t *f = &n->p.conv.pad_top;
        static const char *const names[] = {"padding_top",    "padding_right",      "padding_bottom",        "padding_left",
                                            "kernel_height",  "kernel_width",       "subsampling_height",    "subsampling_width",
                                            "dilation_height", "dilation_width",    "group_input_channels", "group_output_channels",
                                            "groups",          "adjustment_height", "adjustment_width"};
        for (unsigned k = 0; k < 15; k++) U32(k, names[k], &f[k]);
        for (unsigned k = 0; k < 15; k++) TRY(geometry_field(r, t, names[k], f[k], k < 10 || k > 12));
        TRY(ids(r, t, (const unsigned[]){15, 16, 17, 18}, (const char *const[]){"input1_id", "filter_id", "bias_id", "output_id"},
                4, tmp));
        n->n_in = 3, memcpy(n->in, tmp, 3 * 4), n->n_out = 1, n->out[0] = tmp[3];
        U32(19, "flags", &n->flags);
        return 0;
    }
    case LSX_L_POOL: {
        uint32_t *f = &n->p.pool.pad_top;
        static const char *const names[] = {"padding_top",    "padding_right", "padding_bottom", "padding_left",
                                            "pooling_height", "pooling_width", "stride_height",  "stride_width",
                                            "dilation_height", "dilation_width"};
        for (unsigned k = 0; k < 10; k++) U32(k, names[k], &f[k]);
        for (unsigned k = 0; k < 10; k++) TRY(geometry_field(r, t, names[k], f[k], true));
        TRY(ids(r, t, (const unsigned[]){10, 11}, io1, 2, tmp));
        n->n_in = 1, n->in[0] = tmp[0], n->n_out = 1, n->out[0] = tmp[1];
        U32(12, "flags", &n->flags);
        return 0;
    }
    case LSX_L_ARGMAXPOOL: {
        uint32_t *f = &n->p.pool.pad_top;
        static const char *const names[] = {"padding_top", "padding_right", "padding_bottom", "padding_left",
                                            "pooling_height", "pooling_width"};
        for (unsigned k = 0; k < 6; k++) U32(k, names[k], &f[k]);
        for (unsigned k = 0; k < 6; k++) TRY(geometry_field(r, t, names[k], f[k], true));
        n->p.pool.stride_h = n->p.pool.pool_h; /* XNNPACK's argmax pooling strides by its window */
        n->p.pool.stride_w = n->p.pool.pool_w;
        n->p.pool.dilation_h = n->p.pool.dilation_w = 1;
        TRY(ids(r, t, (const unsigned[]){6, 7, 8}, (const char *const[]){"input_id", "output_value_id", "output_index_id"}, 3,
                tmp));
        n->n_in = 1, n->in[0] = tmp[0], n->n_out = 2, n->out[0] = tmp[1], n->out[1] = tmp[2];
        U32(9, "flags", &n->flags);
        return 0;
    }
    case LSX_L_SLICE: {
        uint32_t nsizes = 0;
        TRY(u32s_field(r, t, 1, "offsets", LS_XNN_MAX_DIMS, n->p.slice.offsets, &n->p.slice.n));
        TRY(u32s_field(r, t, 2, "sizes", LS_XNN_MAX_DIMS, n->p.slice.sizes, &nsizes));
        /* defineStaticSliceNode: "offsets size %zu does not match sizes size %zu" */
        if (nsizes != n->p.slice.n)
            return ls_fb_fail(r, "sizes", t->pos, "%u sizes for %u offsets", nsizes, n->p.slice.n);
        TRY(ids(r, t, (const unsigned[]){3, 4}, io1, 2, tmp));
        n->n_in = 1, n->in[0] = tmp[0], n->n_out = 1, n->out[0] = tmp[1];
        U32(5, "flags", &n->flags);
        return 0;
    }
    case LSX_L_SDPA:
        TRY(ids(r, t, (const unsigned[]){0, 1, 2, 3, 4, 5},
                (const char *const[]){"query_id", "key_id", "value_id", "scale_id", "mask_id", "output_id"}, 6, tmp));
        n->n_in = 5, memcpy(n->in, tmp, 5 * 4), n->n_out = 1, n->out[0] = tmp[5];
        U32(6, "flags", &n->flags);
        return 0;
    case LSX_L_UNKNOWN: return 0;
    }
    return 0;
}
#undef U32

static int read_node(ls_fb_reader *r, const ls_fb_table *xn, ls_xnn_node *n)
{
    ls_fb_table u, mm;
    int rc;
    TRY(rc = ls_fb_union(r, xn, 0, "xnode_union", &n->type, &u));
    if (n->type == 0) return ls_fb_fail(r, "xnode_union_type", xn->pos, "a node without an operation (NONE)");
    TRY(ls_fb_u32(r, xn, 2, "debug_handle", 0, &n->debug_handle));
    n->out_min = -INFINITY;
    n->out_max = INFINITY;
    TRY(rc = ls_fb_table_field(r, xn, 3, "output_min_max", &mm));
    if (rc == 1) {
        n->has_min_max = true;
        TRY(ls_fb_push(r, ".output_min_max"));
        TRY(f32_field(r, &mm, 0, "output_min", 0, &n->out_min));
        TRY(f32_field(r, &mm, 1, "output_max", 0, &n->out_max));
        ls_fb_pop(r);
    }
    if (n->type > LS_XNN_NODE_TYPE_MAX) return 0; /* kept as it is: the run refuses it by its tag */
    TRY(rc = ls_fb_table_field(r, xn, 1, "xnode_union", &u));
    if (rc == 0) return ls_fb_fail(r, "xnode_union", xn->pos, "%s without its table", ls_xnn_node_type_name(n->type));
    TRY(ls_fb_push(r, ".xnode_union"));
    TRY(read_node_fields(r, &u, n));
    ls_fb_pop(r);
    return 0;
}

/* ---- the graph */

static int read_constants(ls_fb_reader *r, const ls_fb_table *root, ls_xnn_graph *g)
{
    ls_fb_vec v;
    int rc;
    TRY(rc = ls_fb_vector_field(r, root, 8, "constant_data", 4, &v));
    if (rc == 1 && v.n) {
        TRY(ls_fb_charge(r, "constant_data", (uint64_t)v.n * sizeof *g->constants));
        g->constants = ls_calloc(v.n, sizeof *g->constants);
        g->n_constants = v.n;
        for (uint32_t i = 0; i < v.n; i++) {
            ls_fb_table c;
            TRY(ls_fb_vec_table(r, &v, i, "constant_data", &c));
            TRY(ls_fb_push(r, ".constant_data[%u]", i));
            TRY(ls_fb_u64(r, &c, 0, "offset", 0, &g->constants[i].offset));
            TRY(ls_fb_u64(r, &c, 1, "size", 0, &g->constants[i].size));
            const char *key = NULL;
            uint32_t len = 0;
            TRY(rc = ls_fb_string_field(r, &c, 2, "named_key", &key, &len));
            /* getConstantDataPtr: a present named_key (even empty, as Python writes for offsets)
             * means the bytes are in the named data, unless the offset says otherwise */
            if (rc == 1 && len > 0) g->constants[i].named_key = ls_intern_n(key, len);
            ls_fb_pop(r);
        }
    }
    TRY(rc = ls_fb_vector_field(r, root, 6, "constant_buffer", 4, &v));
    if (rc == 1 && v.n) {
        TRY(ls_fb_charge(r, "constant_buffer", (uint64_t)v.n * 16));
        g->buffer_pos = ls_calloc(v.n, sizeof *g->buffer_pos);
        g->buffer_size = ls_calloc(v.n, sizeof *g->buffer_size);
        g->n_buffers = v.n;
        for (uint32_t i = 0; i < v.n; i++) {
            ls_fb_table b;
            ls_fb_vec s;
            TRY(ls_fb_vec_table(r, &v, i, "constant_buffer", &b));
            TRY(ls_fb_push(r, ".constant_buffer[%u]", i));
            TRY(rc = ls_fb_vector_field(r, &b, 0, "storage", 1, &s));
            if (rc == 1) g->buffer_pos[i] = s.pos, g->buffer_size[i] = s.n;
            ls_fb_pop(r);
        }
    }
    return 0;
}

static int read_graph(ls_fb_reader *r, ls_xnn_graph *g)
{
    ls_fb_table root;
    TRY(ls_fb_root(r, NULL, &root));
    const char *ver = NULL;
    uint32_t len = 0;
    int rc;
    TRY(rc = ls_fb_string_field(r, &root, 0, "version", &ver, &len));
    g->version = rc == 1 ? ls_intern_n(ver, len) : NULL;
    TRY(ls_fb_u32(r, &root, 3, "num_externs", 0, &g->num_externs));
    /* compileModel: "num_externs (%u) which exceeds maximum (4096)" */
    if (g->num_externs > 4096)
        return ls_fb_fail(r, "num_externs", root.pos, "%u external values, more than the 4096 ExecuTorch accepts",
                          g->num_externs);
    TRY(u32s_alloc(r, &root, 4, "input_ids", &g->input_ids, &g->n_input_ids));
    TRY(u32s_alloc(r, &root, 5, "output_ids", &g->output_ids, &g->n_output_ids));

    ls_fb_vec xv, xn;
    int hv, hn;
    TRY(hv = ls_fb_vector_field(r, &root, 2, "xvalues", 4, &xv));
    TRY(hn = ls_fb_vector_field(r, &root, 1, "xnodes", 4, &xn));
    if (hv == 0 || hn == 0) /* compileModel: "null graph, xvalues, or xnodes" */
        return ls_fb_fail(r, hv == 0 ? "xvalues" : "xnodes", root.pos, "missing");
    TRY(ls_fb_charge(r, "xvalues", (uint64_t)xv.n * sizeof *g->values));
    TRY(ls_fb_charge(r, "xnodes", (uint64_t)xn.n * sizeof *g->nodes));
    g->values = ls_calloc(xv.n ? xv.n : 1, sizeof *g->values);
    g->n_values = xv.n;
    for (uint32_t i = 0; i < xv.n; i++) {
        ls_fb_table t;
        TRY(ls_fb_vec_table(r, &xv, i, "xvalues", &t));
        TRY(ls_fb_push(r, ".xvalues[%u]", i));
        TRY(read_value(r, &t, &g->values[i]));
        ls_fb_pop(r);
    }
    g->nodes = ls_calloc(xn.n ? xn.n : 1, sizeof *g->nodes);
    g->n_nodes = xn.n;
    for (uint32_t i = 0; i < xn.n; i++) {
        ls_fb_table t;
        TRY(ls_fb_vec_table(r, &xn, i, "xnodes", &t));
        TRY(ls_fb_push(r, ".xnodes[%u]", i));
        TRY(read_node(r, &t, &g->nodes[i]));
        ls_fb_pop(r);
    }
    return read_constants(r, &root, g);
}

/* What the graph says must agree with itself: ids defined once and named ids defined, constant
 * indices in range, quantization parameters that fit their tensor. */
static int check_graph(ls_xnn_graph *g, const char *name, ls_error *err)
{
    g->index = ls_calloc(1, sizeof *g->index);
    for (uint32_t i = 0; i < g->n_values; i++) {
        const ls_xnn_value *v = &g->values[i];
        uintptr_t old;
        if (v->id == LS_XNN_INVALID_ID)
            return ls_fail(err, "%s: xvalues[%u]: id_out is XNN_INVALID_VALUE_ID", name, i);
        if (!ls_ptrmap_add(&g->index->by_id, (const void *)((uintptr_t)v->id + 1), i, &old))
            return ls_fail(err, "%s: xvalues[%u]: id %u is already the id of xvalues[%u]", name, i, v->id, (unsigned)old);
        if (v->constant_idx) {
            bool in_data = g->n_constants > 0;
            uint32_t limit = in_data ? g->n_constants : g->n_buffers;
            /* getConstantDataPtr: "buffer_idx %u out of bounds for constant_data of size %u" */
            if (v->constant_idx >= limit)
                return ls_fail(err, "%s: xvalues[%u]: constant_buffer_idx %u is out of range (%u entries in %s)", name, i,
                               v->constant_idx, limit, in_data ? "constant_data" : "constant_buffer");
        }
        if (v->flags & LS_XNN_FLAG_EXTERNAL_INPUT && v->flags & LS_XNN_FLAG_EXTERNAL_OUTPUT)
            return ls_fail(err, "%s: xvalues[%u]: both an external input and an external output", name, i);
        if ((v->flags & (LS_XNN_FLAG_EXTERNAL_INPUT | LS_XNN_FLAG_EXTERNAL_OUTPUT)) &&
            v->external_id >= g->num_externs)
            return ls_fail(err, "%s: xvalues[%u]: external_id %u is not below num_externs %u", name, i, v->external_id,
                           g->num_externs);
        /* xnn_define_quantized_tensor_value and _channelwise_: "scale must be finite,
         * normalized, and positive" */
        if (v->quant == LS_XNN_Q_PER_TENSOR && !(isnormal(v->scale) && v->scale > 0))
            return ls_fail(err, "%s: xvalues[%u]: scale %g (XNNPACK takes a finite, normal, positive scale)", name, i,
                           (double)v->scale);
        for (uint32_t k = 0; v->quant == LS_XNN_Q_PER_CHANNEL && v->scales && k < v->n_scales; k++)
            if (!(isnormal(v->scales[k]) && v->scales[k] > 0))
                return ls_fail(err, "%s: xvalues[%u]: scale %u is %g (XNNPACK takes finite, normal, positive scales)", name,
                               i, k, (double)v->scales[k]);
        if (v->quant == LS_XNN_Q_PER_CHANNEL && !v->scale_buffer_idx) {
            if (v->channel_dim < 0 || v->channel_dim >= v->ndim)
                return ls_fail(err, "%s: xvalues[%u]: channel_dim %d of a %u-d tensor", name, i, v->channel_dim, v->ndim);
            if (v->n_scales != v->dims[v->channel_dim])
                return ls_fail(err, "%s: xvalues[%u]: %u scales for %u channels on dim %d", name, i, v->n_scales,
                               v->dims[v->channel_dim], v->channel_dim);
        }
        /* defineTensor (XNNCompiler.cpp), PerTokenDynamicQuant: "Dynamically quantized tensor should
         * not have constant data" and "... currently only support per token quantization" */
        if (v->quant == LS_XNN_Q_PER_TOKEN_DYNAMIC && v->constant_idx)
            return ls_fail(err, "%s: xvalues[%u]: a dynamically quantized value with constant data", name, i);
        if (v->quant == LS_XNN_Q_PER_TOKEN_DYNAMIC && v->num_nonbatch_dims != 1)
            return ls_fail(err,
                           "%s: xvalues[%u]: num_nonbatch_dims %d (ExecuTorch's XNNPACK delegate quantizes dynamically "
                           "per token only: 1)",
                           name, i, v->num_nonbatch_dims);
        if (v->quant == LS_XNN_Q_PER_CHANNEL_GROUP) {
            /* defineTensor: qbint4 only; "scale size != output channels * input channels / group size" */
            if (v->datatype != LS_XNN_DT_QBINT4)
                return ls_fail(err, "%s: xvalues[%u]: per-channel-group quantization of %s (only qbint4)", name, i,
                               ls_xnn_datatype_name(v->datatype));
            if (v->ndim != 2 || v->group_size <= 0 || v->dims[1] % (uint32_t)v->group_size)
                return ls_fail(err, "%s: xvalues[%u]: group size %d does not divide a [%u, %u] weight", name, i,
                               v->group_size, v->ndim ? v->dims[0] : 0, v->ndim > 1 ? v->dims[1] : 0);
            uint64_t want = (uint64_t)v->dims[0] * (v->dims[1] / (uint32_t)v->group_size);
            if (!v->scale_buffer_idx && v->n_scales != want)
                return ls_fail(err, "%s: xvalues[%u]: %u scales, %" PRIu64 " expected (%u channels, groups of %d)", name,
                               i, v->n_scales, want, v->dims[0], v->group_size);
        }
    }
    for (uint32_t i = 0; i < g->n_input_ids; i++)
        if (ls_xnn_value_pos(g, g->input_ids[i]) < 0)
            return ls_fail(err, "%s: input_ids[%u]: no value has id %u", name, i, g->input_ids[i]);
    for (uint32_t i = 0; i < g->n_output_ids; i++)
        if (ls_xnn_value_pos(g, g->output_ids[i]) < 0)
            return ls_fail(err, "%s: output_ids[%u]: no value has id %u", name, i, g->output_ids[i]);
    /* Every value is written at most once, by one node, and never read by the node that writes
     * it: XNNPACK's subgraph is single-assignment (ExecuTorch's serializer gives every Edge node's
     * output a fresh id), and the interpreter frees a value's old tensor when it writes it. */
    uint8_t *written = ls_calloc(g->n_values ? g->n_values : 1, 1);
    for (uint32_t i = 0; i < g->n_nodes; i++) {
        const ls_xnn_node *n = &g->nodes[i];
        for (unsigned k = 0; k < n->n_out; k++) {
            int32_t pos = ls_xnn_value_pos(g, n->out[k]);
            if (pos < 0) continue; /* reported below */
            const char *why = NULL;
            for (unsigned j = 0; !why && j < n->n_in; j++)
                if (n->in[j] == n->out[k]) why = "is also one of its inputs";
            if (!why && written[pos]) why = "is already written by an earlier node";
            if (!why && g->values[pos].flags & LS_XNN_FLAG_EXTERNAL_INPUT) why = "is an external input";
            if (why) {
                free(written);
                return ls_fail(err, "%s: xnodes[%u] (%s): output %u (value %u) %s", name, i,
                               ls_xnn_node_type_name(n->type), k, n->out[k], why);
            }
            written[pos] = 1;
        }
    }
    free(written);
    for (uint32_t i = 0; i < g->n_nodes; i++) {
        const ls_xnn_node *n = &g->nodes[i];
        for (unsigned k = 0; k < n->n_in; k++) {
            if (n->in[k] == LS_XNN_INVALID_ID && lsx_input_optional(n->type, k)) continue;
            if (ls_xnn_value_pos(g, n->in[k]) < 0) /* REMAP_ID: "Remapped id not found for key %u" */
                return ls_fail(err, "%s: xnodes[%u] (%s): input %u names value %u, which is not defined", name, i,
                               ls_xnn_node_type_name(n->type), k, n->in[k]);
        }
        for (unsigned k = 0; k < n->n_out; k++)
            if (ls_xnn_value_pos(g, n->out[k]) < 0)
                return ls_fail(err, "%s: xnodes[%u] (%s): output names value %u, which is not defined", name, i,
                               ls_xnn_node_type_name(n->type), n->out[k]);
    }
    for (uint32_t i = 1; i < g->n_constants; i++) {
        const ls_xnn_constant *c = &g->constants[i];
        if (c->named_key) continue;
        if (c->offset > g->constant_data_size || c->size > g->constant_data_size - c->offset)
            return ls_fail(err,
                           "%s: constant_data[%u]: bytes %" PRIu64 "..%" PRIu64 " lie outside the %" PRIu64
                           "-byte constant data",
                           name, i, c->offset, c->offset + c->size, g->constant_data_size);
    }
    return 0;
}

int ls_xnn_decode(const uint8_t *data, size_t size, const char *name, ls_xnn_graph **out, ls_error *err)
{
    *out = NULL;
    if (!name) name = "XNNPACK blob";
    if (!data || size < 8) return ls_fail(err, "%s: %zu bytes, too short for an XNNPACK blob", name, size);
    ls_xnn_graph *g = ls_calloc(1, sizeof *g);
    const uint8_t *fb = data;
    size_t fb_size = size;
    if (!memcmp(data + 4, "XH00", 4)) { /* XNNHeader::Parse */
        if (size < LS_XNN_HEADER_SIZE) {
            ls_xnn_graph_free(g);
            return ls_fail(err, "%s: %zu bytes, too short for the %u-byte XH00 header", name, size, LS_XNN_HEADER_SIZE);
        }
        g->has_header = true;
        g->flatbuffer_offset = (uint32_t)ls_le_get(data + 10, 4);
        g->flatbuffer_size = (uint32_t)ls_le_get(data + 14, 4);
        g->constant_data_offset = (uint32_t)ls_le_get(data + 18, 4);
        g->constant_data_size = ls_le_get(data + 22, 8);
        if ((uint64_t)g->flatbuffer_offset + g->flatbuffer_size > size || g->flatbuffer_size < 8) {
            ls_fail(err, "%s: header: flatbuffer at %u, %u bytes, does not fit in the %zu-byte blob", name,
                    g->flatbuffer_offset, g->flatbuffer_size, size);
            ls_xnn_graph_free(g);
            return -1;
        }
        if (g->constant_data_offset > size || g->constant_data_size > size - g->constant_data_offset) {
            ls_fail(err, "%s: header: constant data at %u, %" PRIu64 " bytes, does not fit in the %zu-byte blob", name,
                    g->constant_data_offset, g->constant_data_size, size);
            ls_xnn_graph_free(g);
            return -1;
        }
        fb = data + g->flatbuffer_offset;
        fb_size = g->flatbuffer_size;
    }
    memcpy(g->identifier, fb + 4, 4);
    if (memcmp(g->identifier, "XN00", 4) && memcmp(g->identifier, "XN01", 4)) {
        char shown[24];
        lsx_show_magic(fb + 4, shown, sizeof shown);
        ls_fail(err, "%s: the XNNPACK serialization identifier is '%s', not XN00 or XN01", name, shown);
        ls_xnn_graph_free(g);
        return -1;
    }
    ls_fb_reader r;
    int rc = ls_fb_reader_init(&r, fb, fb_size, name, err);
    if (rc == 0) rc = read_graph(&r, g);
    if (rc == 0) rc = check_graph(g, name, err);
    if (rc != 0) {
        ls_xnn_graph_free(g);
        return -1;
    }
    if (g->has_header) /* deprecated buffers are positions in the flatbuffer: make them blob positions */
        for (uint32_t i = 0; i < g->n_buffers; i++) g->buffer_pos[i] += g->flatbuffer_offset;
    *out = g;
    return 0;
}
