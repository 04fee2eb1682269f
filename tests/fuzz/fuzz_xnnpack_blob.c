/* ExecuTorch's XNNPACK delegate blob (include/xnnpack_blob.h): the reader, then the view and
 * describer the UI uses, the portable twin, and, for small graphs, XnnpackBackend's init and a
 * run on zero inputs shaped as the blob's external inputs say (named data: none, so constants
 * that name keys are refused at init, as a blob without its program would be). */
#include <stdlib.h>
#include <string.h>

#include "backend.h"
#include "fuzz.h"
#include "runtime.h"
#include "xnnpack_blob.h"

#define MAX_ELEMS ((int64_t)1 << 20)

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
    ls_blob *blob = ls_blob_new(size);
    if (!blob) return 0;
    if (size) memcpy(blob->data, data, size);
    ls_xnn_graph *g;
    ls_error err;
    if (ls_xnn_decode(blob->data, blob->size, "fuzz", &g, &err) != 0) {
        ls_blob_unref(blob);
        return 0;
    }
    ls_program *p = NULL;
    if (ls_xnn_view(g, blob, NULL, "fuzz", &p, &err) == 0) ls_program_unref(p);
    ls_buf b = {0};
    ls_xnn_json(blob->data, blob->size, &b);
    for (uint32_t i = 0; i < g->n_nodes; i++) ls_xnn_node_text(g, &g->nodes[i], &b);
    ls_buf_free(&b);
    /* zero inputs by external id, when every value is small */
    bool small = g->n_nodes <= 64;
    for (uint32_t i = 0; i < g->n_values && small; i++) {
        int64_t e = 1;
        for (unsigned d = 0; d < g->values[i].ndim && small; d++) small = (e *= g->values[i].dims[d] ? g->values[i].dims[d] : 1) <= MAX_ELEMS;
    }
    uint32_t nin = 0;
    for (uint32_t i = 0; i < g->n_values; i++) nin += (g->values[i].flags & LS_XNN_FLAG_EXTERNAL_INPUT) != 0;
    ls_value *in = calloc(nin ? nin : 1, sizeof *in);
    for (uint32_t i = 0, k = 0; i < g->n_values && small; i++) {
        const ls_xnn_value *v = &g->values[i];
        if (!(v->flags & LS_XNN_FLAG_EXTERNAL_INPUT) || v->external_id >= nin) continue;
        int64_t dims[LS_XNN_MAX_DIMS];
        for (unsigned d = 0; d < v->ndim; d++) dims[d] = v->dims[d];
        ls_dtype dt = v->datatype == LS_XNN_DT_FP16 ? LS_DT_F16 : v->datatype == LS_XNN_DT_QINT8 ? LS_DT_I8 : LS_DT_F32;
        ls_tensor *t = ls_tensor_new(dt, v->ndim, dims, &err);
        if (t && in[v->external_id].kind == LS_V_NONE) in[v->external_id] = ls_value_tensor(t), k++;
        else ls_tensor_unref(t);
    }
    if (small) {
        ls_program *tw = NULL;
        if (ls_xnn_twin(g, blob, NULL, "fuzz", &tw, &err) == 0) ls_program_unref(tw);
        fuzz_backend(&ls_xnnpack_backend, blob, in, nin);
    }
    for (uint32_t i = 0; i < nin; i++) ls_value_release(&in[i]);
    free(in);
    ls_xnn_graph_free(g);
    ls_blob_unref(blob);
    return 0;
}
