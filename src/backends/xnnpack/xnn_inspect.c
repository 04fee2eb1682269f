/* Seeing inside an XNNPACK delegate (backend.h's inspector): a blob with XH00, XN00 or XN01 at
 * byte 4 is read into the view program (ls_xnn_view: a row per xnode), and described: the
 * header, the graph's counts, its xnodes by type, its constants by where they live. */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "xnn_internal.h"

static bool xnn_claims(const ls_blob *blob) { return ls_xnn_is_blob(blob->data, blob->size); }

static int xnn_read_view(const ls_delegate_view *d, ls_program **out, ls_error *err)
{
    ls_xnn_graph *g;
    if (ls_xnn_decode(d->blob->data, d->blob->size, d->name ? d->name : "XNNPACK blob", &g, err) != 0) return -1;
    int rc = ls_xnn_view(g, d->blob, d->named, d->name, out, err);
    ls_xnn_graph_free(g);
    return rc;
}

void ls_xnn_types_text(const ls_xnn_graph *g, ls_buf *b)
{
    uint32_t count[256] = {0};
    for (uint32_t i = 0; i < g->n_nodes; i++) count[g->nodes[i].type]++;
    bool first = true;
    for (unsigned t = 0; t < 256; t++) {
        if (!count[t]) continue;
        const char *tn = ls_xnn_node_type_name((uint8_t)t);
        if (tn) ls_buf_printf(b, "%s%s %u", first ? "" : ", ", tn, count[t]);
        else ls_buf_printf(b, "%sxnode type %u: %u", first ? "" : ", ", t, count[t]);
        first = false;
    }
    if (first) ls_buf_puts(b, "none");
}

/* What the describer and the JSON count. */
typedef struct xnn_counts {
    uint32_t by_type[256], n_in, n_out, n_q, named, in_blob;
    uint64_t named_bytes, in_blob_bytes;
} xnn_counts;

static void count(const ls_xnn_graph *g, xnn_counts *c)
{
    memset(c, 0, sizeof *c);
    for (uint32_t i = 0; i < g->n_nodes; i++) c->by_type[g->nodes[i].type]++;
    for (uint32_t i = 0; i < g->n_values; i++) {
        c->n_in += (g->values[i].flags & LS_XNN_FLAG_EXTERNAL_INPUT) != 0;
        c->n_out += (g->values[i].flags & LS_XNN_FLAG_EXTERNAL_OUTPUT) != 0;
        c->n_q += g->values[i].quant != LS_XNN_Q_NONE;
    }
    for (uint32_t i = 1; i < g->n_constants; i++) {
        if (g->constants[i].named_key) c->named++, c->named_bytes += g->constants[i].size;
        else c->in_blob++, c->in_blob_bytes += g->constants[i].size;
    }
}

static void xnn_describe(const ls_delegate_view *d, ls_delegate_facts *out)
{
    ls_xnn_graph *g;
    ls_error err;
    if (ls_xnn_decode(d->blob->data, d->blob->size, d->name ? d->name : "XNNPACK blob", &g, &err) != 0) {
        ls_delegate_fact_add(out, "xnngraph", "unreadable: %s", err.msg);
        return;
    }
    if (g->has_header)
        ls_delegate_fact_add(out, "header", "XH00: flatbuffer %u bytes at %u, constant data %llu bytes at %u",
                             g->flatbuffer_size, g->flatbuffer_offset, (unsigned long long)g->constant_data_size,
                             g->constant_data_offset);
    else
        ls_delegate_fact_add(out, "header", "none (a bare flatbuffer)");
    xnn_counts c;
    count(g, &c);
    ls_delegate_fact_add(out, "xnngraph", "%s, version '%s': %u xnodes, %u values (%u quantized), %u inputs, %u outputs",
                         g->identifier, g->version ? g->version : "", g->n_nodes, g->n_values, c.n_q, c.n_in, c.n_out);
    ls_buf b = {0};
    ls_xnn_types_text(g, &b);
    ls_delegate_fact_add(out, "xnodes", "%s", b.s);
    ls_buf_free(&b);
    char hb[32], hb2[32];
    ls_delegate_fact_add(out, "constants", "%u in the named data (%s), %u in the blob (%s)", c.named,
                         ls_fmt_bytes(c.named_bytes, hb, sizeof hb), c.in_blob, ls_fmt_bytes(c.in_blob_bytes, hb2, sizeof hb2));
    for (uint32_t i = 1; i < g->n_constants; i++)
        if (g->constants[i].named_key && !ls_named_data_get(d->named, g->constants[i].named_key))
            ls_delegate_fact_add(out, "missing", "constant %u: key %s is not in the program's named data", i,
                                 g->constants[i].named_key);
    ls_xnn_graph_free(g);
}

int ls_xnn_json(const uint8_t *data, size_t size, ls_buf *b)
{
    ls_xnn_graph *g;
    ls_error err;
    if (!ls_xnn_is_blob(data, size) || ls_xnn_decode(data, size, "blob", &g, &err) != 0) return -1;
    xnn_counts c;
    count(g, &c);
    ls_buf_puts(b, "{\"identifier\":");
    ls_buf_json_str(b, g->identifier);
    ls_buf_puts(b, ",\"version\":");
    ls_buf_json_str(b, g->version ? g->version : "");
    ls_buf_printf(b, ",\"xnodes\":%u,\"xnodes_by_type\":{", g->n_nodes);
    bool first = true;
    for (unsigned t = 0; t < 256; t++) {
        if (!c.by_type[t]) continue;
        char tag[32];
        const char *tn = ls_xnn_node_type_name((uint8_t)t);
        if (!tn) snprintf(tag, sizeof tag, "xnode type %u", t), tn = tag;
        if (!first) ls_buf_putc(b, ',');
        ls_buf_json_str(b, tn);
        ls_buf_printf(b, ":%u", c.by_type[t]);
        first = false;
    }
    ls_buf_printf(b,
                  "},\"values\":%u,\"quantized_values\":%u,\"external_inputs\":%u,\"external_outputs\":%u,"
                  "\"constants\":{\"named\":%u,\"named_bytes\":%llu,\"in_blob\":%u,\"in_blob_bytes\":%llu}}",
                  g->n_values, c.n_q, c.n_in, c.n_out, c.named, (unsigned long long)c.named_bytes, c.in_blob,
                  (unsigned long long)c.in_blob_bytes);
    ls_xnn_graph_free(g);
    return 0;
}

const ls_delegate_inspector ls_xnnpack_inspector = {
    .backend_id = LS_XNN_BACKEND_ID,
    .format = "XNNGraph flatbuffer (ExecuTorch's XNNPACK delegate)",
    .claims = xnn_claims,
    .read = xnn_read_view,
    .describe = xnn_describe,
};
