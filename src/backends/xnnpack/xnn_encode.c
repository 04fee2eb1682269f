/* Writing an XNNGraph (ls_xnn_encode): the flatbuffer in schema.fbs's vtable layout through
 * flatbuf.h's builder, then the blob as serialize_xnnpack_binary lays it out
 * (xnnpack_graph_serialize.py): the 30-byte XH00 header padded to 16, the flatbuffer padded to
 * 16, the constant data. Identifier XN01 (schema.fbs's file_identifier). */
#include <math.h>
#include <stdlib.h>
#include <string.h>

#include "flatbuf.h"
#include "xnn_internal.h"

static ls_fb_ref u32_vec(ls_fbb *b, const uint32_t *v, uint32_t n) { return ls_fbb_vector(b, v, n, 4, 4); }

static ls_fb_ref tensor_value(ls_fbb *b, const ls_xnn_value *v)
{
    ls_fb_ref dims = u32_vec(b, v->dims, v->ndim);
    ls_fbb_table_start(b);
    ls_fbb_add_i16(b, 0, (int16_t)v->datatype, 0);
    ls_fbb_add_u32(b, 1, v->ndim, 0);
    ls_fbb_add_ref(b, 2, dims);
    ls_fbb_add_u32(b, 3, v->constant_idx, 0);
    ls_fbb_add_u32(b, 4, v->external_id, 0);
    ls_fbb_add_u32(b, 5, v->flags, 0);
    ls_fbb_add_u32(b, 6, v->id, 0);
    ls_fbb_add_i16(b, 7, (int16_t)v->dq_datatype, 0);
    return ls_fbb_table_end(b);
}

static ls_fb_ref quant_params(ls_fbb *b, const ls_xnn_value *v)
{
    ls_fb_ref scales = v->n_scales ? ls_fbb_vector(b, v->scales, v->n_scales, 4, 4) : 0;
    ls_fbb_table_start(b);
    switch (v->quant) {
    case LS_XNN_Q_PER_TENSOR:
        ls_fbb_add_f32(b, 0, v->scale, 0);
        ls_fbb_add_i32(b, 1, v->zero_point, 0);
        break;
    case LS_XNN_Q_PER_TOKEN_DYNAMIC: ls_fbb_add_i32(b, 0, v->num_nonbatch_dims, 0); break;
    case LS_XNN_Q_PER_CHANNEL:
        ls_fbb_add_ref(b, 0, scales);
        ls_fbb_add_i32(b, 1, v->channel_dim, 0);
        ls_fbb_add_u32(b, 2, v->scale_buffer_idx, 0);
        break;
    case LS_XNN_Q_PER_CHANNEL_GROUP:
        ls_fbb_add_ref(b, 0, scales);
        ls_fbb_add_i32(b, 1, v->channel_dim, 0);
        ls_fbb_add_i32(b, 2, v->group_size, 0);
        ls_fbb_add_u32(b, 4, v->scale_buffer_idx, 0);
        break;
    default: break;
    }
    return ls_fbb_table_end(b);
}

static ls_fb_ref value(ls_fbb *b, const ls_xnn_value *v)
{
    ls_fb_ref u;
    uint8_t type = 1;
    if (v->quant) {
        ls_fb_ref t = tensor_value(b, v), q = quant_params(b, v);
        ls_fbb_table_start(b);
        ls_fbb_add_ref(b, 0, t);
        ls_fbb_add_u8(b, 1, v->quant, 0);
        ls_fbb_add_ref(b, 2, q);
        u = ls_fbb_table_end(b);
        type = 2;
    } else {
        u = tensor_value(b, v);
    }
    ls_fbb_table_start(b);
    ls_fbb_add_u8(b, 0, type, 0);
    ls_fbb_add_ref(b, 1, u);
    return ls_fbb_table_end(b);
}

static void ids(ls_fbb *b, const unsigned *slots, const uint32_t *v, unsigned n)
{
    for (unsigned k = 0; k < n; k++) ls_fbb_add_u32(b, slots[k], v[k], 0);
}

/* The node's own table, field by field in schema order (the reader's read_node_fields mirrored). */
static ls_fb_ref node_table(ls_fbb *b, const ls_xnn_node *n)
{
    ls_fb_ref v0 = 0, v1 = 0;
    lsx_layout l = lsx_node_layout(n->type);
    if (l == LSX_L_DIMS) v0 = u32_vec(b, n->p.dims.v, n->p.dims.n);
    if (l == LSX_L_SLICE) v0 = u32_vec(b, n->p.slice.offsets, n->p.slice.n), v1 = u32_vec(b, n->p.slice.sizes, n->p.slice.n);
    if (l == LSX_L_PAD) v0 = u32_vec(b, n->p.pad.pre, n->p.pad.n), v1 = u32_vec(b, n->p.pad.post, n->p.pad.n);
    ls_fbb_table_start(b);
    switch (l) {
    case LSX_L_2X1:
        ids(b, (const unsigned[]){0, 1, 2}, (const uint32_t[]){n->in[0], n->in[1], n->out[0]}, 3);
        ls_fbb_add_u32(b, 3, n->flags, 0);
        break;
    case LSX_L_1X1:
        ids(b, (const unsigned[]){0, 1}, (const uint32_t[]){n->in[0], n->out[0]}, 2);
        ls_fbb_add_u32(b, 2, n->flags, 0);
        break;
    case LSX_L_FC:
        ids(b, (const unsigned[]){0, 1, 2, 3}, (const uint32_t[]){n->in[0], n->in[1], n->in[2], n->out[0]}, 4);
        ls_fbb_add_u32(b, 4, n->flags, 0);
        break;
    case LSX_L_DIMS:
        ls_fbb_add_u32(b, 0, n->p.dims.n, 0);
        ls_fbb_add_ref(b, 1, v0);
        ids(b, (const unsigned[]){2, 3}, (const uint32_t[]){n->in[0], n->out[0]}, 2);
        ls_fbb_add_u32(b, 4, n->flags, 0);
        break;
    case LSX_L_RESIZE:
        ls_fbb_add_u32(b, 0, n->p.resize.height, 0);
        ls_fbb_add_u32(b, 1, n->p.resize.width, 0);
        ids(b, (const unsigned[]){2, 3}, (const uint32_t[]){n->in[0], n->out[0]}, 2);
        ls_fbb_add_u32(b, 4, n->flags, 0);
        break;
    case LSX_L_PAD:
        ls_fbb_add_ref(b, 0, v0);
        ls_fbb_add_ref(b, 1, v1);
        ls_fbb_add_f32(b, 2, n->p.pad.value, 0);
        ids(b, (const unsigned[]){3, 4}, (const uint32_t[]){n->in[0], n->out[0]}, 2);
        ls_fbb_add_u32(b, 5, n->flags, 0);
        break;
    case LSX_L_CAT: {
        uint32_t in[5] = {0};
        memcpy(in, n->in, sizeof in[0] * n->n_in);
        ls_fbb_add_u32(b, 0, n->p.axis, 0);
        ids(b, (const unsigned[]){1, 2, 3, 4, 7, 5}, (const uint32_t[]){in[0], in[1], in[2], in[3], in[4], n->out[0]}, 6);
        ls_fbb_add_u32(b, 6, n->flags, 0);
        break;
    }
    case LSX_L_ALPHA:
        ls_fbb_add_f32(b, 0, n->p.alpha, 0);
        ids(b, (const unsigned[]){1, 2}, (const uint32_t[]){n->in[0], n->out[0]}, 2);
        ls_fbb_add_u32(b, 3, n->flags, 0);
        break;
    case LSX_L_CONV: {
        const uint32_t *f = &n->p.conv.pad_top;
        for (unsigned k = 0; k < 15; k++) ls_fbb_add_u32(b, k, f[k], 0);
        ids(b, (const unsigned[]){15, 16, 17, 18}, (const uint32_t[]){n->in[0], n->in[1], n->in[2], n->out[0]}, 4);
        ls_fbb_add_u32(b, 19, n->flags, 0);
        break;
    }
    case LSX_L_POOL: {
        const uint32_t *f = &n->p.pool.pad_top;
        for (unsigned k = 0; k < 10; k++) ls_fbb_add_u32(b, k, f[k], 0);
        ids(b, (const unsigned[]){10, 11}, (const uint32_t[]){n->in[0], n->out[0]}, 2);
        ls_fbb_add_u32(b, 12, n->flags, 0);
        break;
    }
    case LSX_L_ARGMAXPOOL: {
        const uint32_t *f = &n->p.pool.pad_top;
        for (unsigned k = 0; k < 6; k++) ls_fbb_add_u32(b, k, f[k], 0);
        ids(b, (const unsigned[]){6, 7, 8}, (const uint32_t[]){n->in[0], n->out[0], n->out[1]}, 3);
        ls_fbb_add_u32(b, 9, n->flags, 0);
        break;
    }
    case LSX_L_SLICE:
        ls_fbb_add_u32(b, 0, n->p.slice.n, 0);
        ls_fbb_add_ref(b, 1, v0);
        ls_fbb_add_ref(b, 2, v1);
        ids(b, (const unsigned[]){3, 4}, (const uint32_t[]){n->in[0], n->out[0]}, 2);
        ls_fbb_add_u32(b, 5, n->flags, 0);
        break;
    case LSX_L_SDPA:
        ids(b, (const unsigned[]){0, 1, 2, 3, 4, 5}, (const uint32_t[]){n->in[0], n->in[1], n->in[2], n->in[3], n->in[4], n->out[0]}, 6);
        ls_fbb_add_u32(b, 6, n->flags, 0);
        break;
    case LSX_L_UNKNOWN: break;
    }
    return ls_fbb_table_end(b);
}

static ls_fb_ref node(ls_fbb *b, const ls_xnn_node *n)
{
    ls_fb_ref t = node_table(b, n), mm = 0;
    if (n->has_min_max) {
        ls_fbb_table_start(b);
        ls_fbb_add_f32(b, 0, n->out_min, 0);
        ls_fbb_add_f32(b, 1, n->out_max, 0);
        mm = ls_fbb_table_end(b);
    }
    ls_fbb_table_start(b);
    ls_fbb_add_u8(b, 0, n->type, 0);
    ls_fbb_add_ref(b, 1, t);
    ls_fbb_add_u32(b, 2, n->debug_handle, 0);
    ls_fbb_add_ref(b, 3, mm);
    return ls_fbb_table_end(b);
}

int ls_xnn_encode(const ls_xnn_graph *g, const uint8_t *constant_data, uint64_t constant_size, ls_blob **out,
                  ls_error *err)
{
    *out = NULL;
    ls_fbb b;
    ls_fbb_init(&b);
    ls_fb_ref *refs = ls_malloc(sizeof *refs * (size_t)(g->n_values + g->n_nodes + g->n_constants + 1));
    for (uint32_t i = 0; i < g->n_nodes; i++) refs[i] = node(&b, &g->nodes[i]);
    ls_fb_ref nodes = ls_fbb_vector_refs(&b, refs, g->n_nodes);
    for (uint32_t i = 0; i < g->n_values; i++) refs[i] = value(&b, &g->values[i]);
    ls_fb_ref values = ls_fbb_vector_refs(&b, refs, g->n_values);
    for (uint32_t i = 0; i < g->n_constants; i++) {
        const ls_xnn_constant *c = &g->constants[i];
        /* a named_key field present, even empty, sends XNNCompiler's getConstantDataPtr to the
         * named data: only entry 0 (never read) carries an empty one, as the real files do */
        ls_fb_ref key = c->named_key ? ls_fbb_string(&b, c->named_key, strlen(c->named_key)) : i == 0 ? ls_fbb_string(&b, "", 0) : 0;
        ls_fbb_table_start(&b);
        ls_fbb_add_u64(&b, 0, c->offset, 0);
        ls_fbb_add_u64(&b, 1, c->size, 0);
        ls_fbb_add_ref(&b, 2, key);
        refs[i] = ls_fbb_table_end(&b);
    }
    ls_fb_ref consts = ls_fbb_vector_refs(&b, refs, g->n_constants);
    free(refs);
    ls_fb_ref ins = u32_vec(&b, g->input_ids, g->n_input_ids), outs = u32_vec(&b, g->output_ids, g->n_output_ids);
    const char *ver = g->version ? g->version : "0";
    ls_fb_ref version = ls_fbb_string(&b, ver, strlen(ver));
    ls_fbb_table_start(&b);
    ls_fbb_add_ref(&b, 0, version);
    ls_fbb_add_ref(&b, 1, nodes);
    ls_fbb_add_ref(&b, 2, values);
    ls_fbb_add_u32(&b, 3, g->num_externs, 0);
    ls_fbb_add_ref(&b, 4, ins);
    ls_fbb_add_ref(&b, 5, outs);
    ls_fbb_add_ref(&b, 8, consts);
    ls_fb_ref root = ls_fbb_table_end(&b);
    size_t fb_size;
    uint8_t *fb = ls_fbb_finish(&b, root, "XN01", &fb_size);
    ls_fbb_free(&b);
    if (!fb) return ls_fail(err, "XnnpackBackend: the graph passes the 2 GiB a flatbuffer can hold");
    /* serialize_xnnpack_binary: header and flatbuffer each padded to CONSTANT_TENSOR_ALIGNMENT */
    size_t head = (LS_XNN_HEADER_SIZE + 15) / 16 * 16, fb_padded = (fb_size + 15) / 16 * 16;
    ls_blob *blob = ls_blob_new(head + fb_padded + (size_t)constant_size);
    if (!blob) {
        free(fb);
        return ls_fail(err, "XnnpackBackend: cannot hold a %zu-byte blob", head + fb_padded + (size_t)constant_size);
    }
    uint8_t *p = blob->data;
    memcpy(p + 4, "XH00", 4);
    ls_le_put(p + 8, LS_XNN_HEADER_SIZE, 2);
    ls_le_put(p + 10, head, 4);
    ls_le_put(p + 14, fb_size, 4);
    ls_le_put(p + 18, head + fb_padded, 4);
    ls_le_put(p + 22, constant_size, 8);
    memcpy(p + head, fb, fb_size);
    if (constant_size) memcpy(p + head + fb_padded, constant_data, (size_t)constant_size);
    free(fb);
    *out = blob;
    return 0;
}
