/* ExecuTorch's XNNPACK delegate blobs (XH00 header + XNNGraph flatbuffer + constants): the
 * checking decoder, then, for small graphs, the blob run by XnnpackBackend beside its portable
 * twin on the same seeded inputs (ls_xnn_compare_twin). */
#include <stdlib.h>
#include <string.h>

#include "fuzz.h"
#include "xnnpack_blob.h"

#define MAX_BYTES ((uint64_t)16 << 20)

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
    ls_xnn_graph *g;
    ls_error err;
    if (ls_xnn_decode(data, size, "fuzz", &g, &err) != 0) return 0;
    uint64_t total = 0;
    for (uint32_t i = 0; i < g->n_values && total <= MAX_BYTES; i++) {
        uint64_t b = ls_xnn_value_nbytes(&g->values[i]);
        total = b == 0 && g->values[i].ndim ? UINT64_MAX : total + b;
    }
    ls_buf b = {0};
    for (uint32_t i = 0; i < g->n_nodes && i < 64; i++) ls_xnn_node_text(g, &g->nodes[i], &b);
    for (uint32_t i = 0; i < g->n_values && i < 64; i++) ls_xnn_value_text(&g->values[i], &b);
    ls_buf_free(&b);
    bool small = total <= MAX_BYTES && g->n_nodes <= 64;
    ls_xnn_graph_free(g);
    if (!small) return 0;
    ls_blob *blob = ls_blob_new(size);
    if (!blob) return 0;
    if (size) memcpy(blob->data, data, size);
    ls_value_diff *diffs = NULL;
    uint32_t nd = 0;
    ls_xnn_compare_twin(blob, NULL, NULL, 0, 1, 1e-3, 1e-3, &diffs, &nd, &err);
    free(diffs);
    ls_blob_unref(blob);
    return 0;
}
