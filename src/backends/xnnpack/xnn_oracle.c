/* The oracle (xnnpack_blob.h: ls_xnn_compare_twin): a blob run by the interpreter beside its
 * portable twin run by the runtime's portable kernels, output by output. */
#include <stdlib.h>

#include "compare.h"
#include "xnn_internal.h"

static void values_free(ls_value *v, uint32_t n)
{
    for (uint32_t i = 0; v && i < n; i++) ls_value_release(&v[i]);
    free(v);
}

int ls_xnn_compare_twin(const ls_blob *blob, const ls_named_data *named, const ls_value *inputs, uint32_t n_inputs,
                        uint64_t seed, double rtol, double atol, ls_value_diff **diffs, uint32_t *n_diffs, ls_error *err)
{
    *diffs = NULL;
    *n_diffs = 0;
    ls_xnn_graph *g = NULL;
    ls_program *tw = NULL;
    ls_runner *r = NULL;
    void *h = NULL;
    ls_value *made = NULL, *want = NULL, *got = NULL;
    uint32_t n_made = 0, n_want = 0, n_got = 0;
    int rc = -1;
    if (ls_xnn_decode(blob->data, blob->size, "XNNPACK blob", &g, err) != 0) goto done;
    if (ls_xnn_twin(g, blob, named, "xnnpack_twin", &tw, err) != 0) goto done;
    if (!inputs) {
        if (ls_make_inputs(tw, seed, 0, &made, &n_made, err) != 0) goto done;
        inputs = made;
        n_inputs = n_made;
    }
    if (!(r = ls_runner_new(tw, err))) goto done;
    if (ls_runner_run(r, inputs, n_inputs, &want, &n_want, err) != 0) {
        ls_fail_prefix(err, "the portable twin");
        goto done;
    }
    if (ls_xnnpack_backend.init(blob, NULL, 0, named, &h, err) != 0) goto done;
    if (ls_xnnpack_backend.execute(h, inputs, n_inputs, &got, &n_got, err) != 0) goto done;
    if (n_got != n_want) {
        ls_fail(err, "the blob gives %u outputs, its twin %u", n_got, n_want);
        goto done;
    }
    *diffs = ls_calloc(n_got ? n_got : 1, sizeof **diffs);
    *n_diffs = n_got;
    rc = 0;
    for (uint32_t k = 0; k < n_got; k++) {
        ls_compare_values(&got[k], &want[k], rtol, atol, &(*diffs)[k]);
        rc += !(*diffs)[k].pass;
    }
done:
    if (h) ls_xnnpack_backend.destroy(h);
    values_free(made, n_made);
    values_free(want, n_want);
    values_free(got, n_got);
    ls_runner_free(r);
    ls_program_unref(tw);
    ls_xnn_graph_free(g);
    return rc;
}
