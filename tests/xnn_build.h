/* Hand-made XNNPACK blobs for the tests and the benchmark: values, constants (in the named data,
 * keyed by the SHA-256 of their bytes as ExecuTorch keys them) and nodes, then the blob
 * ls_xnn_encode writes. Value ids are their positions. */
#ifndef LS_XNN_BUILD_H
#define LS_XNN_BUILD_H

#include <math.h>
#include <stdlib.h>
#include <string.h>

#include "named_data.h"
#include "sha256.h"
#include "xnnpack_blob.h"

typedef struct xb_graph {
    LS_VEC(ls_xnn_value) v;
    LS_VEC(ls_xnn_node) n;
    LS_VEC(ls_xnn_constant) c;
    ls_named_data *named;
} xb_graph;

static inline uint32_t xb_value(xb_graph *g, uint8_t dt, int nd, const uint32_t *dims, uint32_t flags, uint32_t ext)
{
    ls_xnn_value x = {.id = g->v.n, .datatype = dt, .ndim = (uint8_t)nd, .flags = flags, .external_id = ext};
    memcpy(x.dims, dims, sizeof *dims * nd);
    ls_vec_push(&g->v, x);
    return x.id;
}

static inline uint32_t xb_const(xb_graph *g, uint8_t dt, int nd, const uint32_t *dims, const void *bytes, size_t n)
{
    if (!g->named) g->named = ls_named_data_new();
    char key[65];
    ls_sha256_hex(bytes, n, key);
    ls_blob *b = ls_blob_new(n);
    memcpy(b->data, bytes, n);
    ls_error err;
    ls_named_data_put(g->named, key, b, 0, &err);
    ls_blob_unref(b);
    ls_xnn_constant c = {.offset = UINT64_MAX, .size = n, .named_key = ls_intern(key)};
    if (!g->c.n) ls_vec_push(&g->c, ((ls_xnn_constant){0}));
    ls_vec_push(&g->c, c);
    uint32_t id = xb_value(g, dt, nd, dims, 0, LS_XNN_INVALID_ID);
    g->v.v[id].constant_idx = g->c.n - 1;
    return id;
}

/* A node with one output and no clamp; returns it for its parameters. */
static inline ls_xnn_node *xb_node(xb_graph *g, uint8_t type, const uint32_t *in, int nin, uint32_t out)
{
    ls_xnn_node x = {.type = type, .n_in = (uint8_t)nin, .n_out = 1, .out = {out}, .out_min = -INFINITY, .out_max = INFINITY};
    memcpy(x.in, in, sizeof *in * nin);
    ls_vec_push(&g->n, x);
    return &g->n.v[g->n.n - 1];
}

static inline ls_blob *xb_finish(xb_graph *g, uint32_t n_externs)
{
    LS_VEC(uint32_t) ins = {0}, outs = {0};
    for (uint32_t i = 0; i < g->v.n; i++) {
        if (g->v.v[i].flags & LS_XNN_FLAG_EXTERNAL_INPUT) ls_vec_push(&ins, i);
        if (g->v.v[i].flags & LS_XNN_FLAG_EXTERNAL_OUTPUT) ls_vec_push(&outs, i);
    }
    ls_xnn_graph x = {.version = ls_intern("0"), .values = g->v.v, .n_values = g->v.n, .nodes = g->n.v, .n_nodes = g->n.n,
                      .num_externs = n_externs, .input_ids = ins.v, .n_input_ids = ins.n, .output_ids = outs.v,
                      .n_output_ids = outs.n, .constants = g->c.v, .n_constants = g->c.n};
    ls_blob *blob;
    ls_error err;
    if (ls_xnn_encode(&x, NULL, 0, &blob, &err) != 0) blob = NULL;
    free(ins.v);
    free(outs.v);
    return blob;
}

static inline void xb_free(xb_graph *g)
{
    for (uint32_t i = 0; i < g->v.n; i++) free(g->v.v[i].scales);
    free(g->v.v);
    free(g->n.v);
    free(g->c.v);
    ls_named_data_unref(g->named);
}

#endif
