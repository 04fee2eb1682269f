/* The bundled delegate's blob (docs/bundled-backend.md): the checking decoder, then, for small
 * graphs, the backend's init and a run on zero inputs shaped as the blob's placeholders say.
 * The header checksum is made right first (ls_bb_seal), so mutations reach what it guards. */
#include <stdlib.h>
#include <string.h>

#include "bundled_blob.h"
#include "fuzz.h"
#include "runtime.h"

#define MAX_BYTES ((uint64_t)16 << 20)

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
    ls_blob *blob = ls_blob_new(size);
    if (!blob) return 0;
    if (size) memcpy(blob->data, data, size);
    if (size >= LS_BB_HEADER_SIZE) ls_bb_seal(blob);
    ls_bb_graph *g;
    ls_error err;
    if (ls_bb_decode(blob, &g, &err) != 0) {
        ls_blob_unref(blob);
        return 0;
    }
    uint64_t total = 0;
    for (uint32_t i = 0; i < g->n_nodes && total <= MAX_BYTES; i++)
        for (uint16_t k = 0; k < g->nodes[i]->nvals; k++) {
            uint64_t b;
            total = ls_tmeta_check_size(&g->nodes[i]->vals[k], MAX_BYTES, &b, &err) == 0 ? total + b : UINT64_MAX;
        }
    uint32_t nin = g->n_inputs;
    ls_value *in = calloc(nin ? nin : 1, sizeof *in);
    bool ok = total <= MAX_BYTES && g->n_nodes <= 256;
    for (uint32_t i = 0; i < nin && ok; i++) {
        const ls_node *ph = g->nodes[g->inputs[i]];
        ls_tensor *t = ph->nvals ? ls_tensor_new(ph->vals[0].dtype, ph->vals[0].ndim, ph->vals[0].sizes, &err) : NULL;
        if (!t) ok = false;
        else in[i] = ls_value_tensor(t);
    }
    ls_bb_graph_free(g);
    if (ok) fuzz_backend(&ls_bundled_backend, blob, in, nin);
    for (uint32_t i = 0; i < nin; i++) ls_value_release(&in[i]);
    free(in);
    ls_blob_unref(blob);
    return 0;
}
