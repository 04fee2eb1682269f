/* The bundled format read back as a program (backend.h's delegate inspector for it): the
 * decoded blob's placeholders (user inputs, constants and state with their data viewing the
 * blob), calls and output, with the blob's ids, so the UI can enter a BundledBackend delegate
 * of a .pte and the delegation table counts what is inside. A blob in this format is read
 * whatever backend id its delegate carries (a profile's XnnpackBackend stood in for). */
#include <stdlib.h>
#include <string.h>

#include "backend.h"
#include "bundled_blob.h"

/* The decoded blob as a program: its placeholders (user inputs, constants and state with their
 * data viewing the blob), calls and output, with the blob's ids. */
static ls_program *program_from_graph(const ls_bb_graph *g, ls_blob *blob, const char *name)
{
    ls_program *p = ls_program_new(name, (ls_dialect)g->dialect);
    LS_VEC(ls_input_spec) ins = {0};
    for (uint32_t i = 0; i < g->n_nodes; i++) {
        ls_node *n = ls_node_clone(g->nodes[i]);
        if (n->kind == LS_NODE_PLACEHOLDER) {
            ls_input_spec s = {.kind = LS_IN_USER_INPUT, .name = n->name};
            const ls_bb_tensor *t = NULL;
            if (g->role[i] == LS_BB_CONSTANT) s.kind = LS_IN_CONSTANT_TENSOR, t = &g->constants[g->role_index[i]];
            if (g->role[i] == LS_BB_STATE) s.kind = LS_IN_BUFFER, s.persistent = true, t = &g->states[g->role_index[i]];
            if (t) {
                s.target = t->name;
                ls_tensor *x = ls_tensor_from_blob(blob, (size_t)t->offset, t->meta.dtype, t->meta.ndim, t->meta.sizes);
                if (s.kind == LS_IN_BUFFER) ls_program_put_state(p, t->name, x, &t->meta);
                else ls_program_put_constant(p, t->name, x, &t->meta);
                ls_tensor_unref(x);
            }
            ls_vec_push(&ins, s);
        }
        ls_program_append(p, n);
    }
    ls_node *out = ls_node_clone(g->output);
    ls_output_spec *os = ls_calloc(g->n_outputs ? g->n_outputs : 1, sizeof *os);
    for (uint32_t k = 0; k < g->n_outputs; k++) {
        const ls_node *v = out->args[k].kind == LS_ARG_NODE && out->args[k].v.node >= 1 && out->args[k].v.node <= g->n_nodes
                               ? g->nodes[out->args[k].v.node - 1]
                               : NULL;
        os[k].name = v ? v->name : NULL;
        os[k].kind = LS_OUT_USER_OUTPUT;
        if (g->outputs[k].kind == LS_BB_OUT_STATE) {
            os[k].kind = LS_OUT_BUFFER_MUTATION;
            os[k].target = g->states[g->outputs[k].state].name;
        }
    }
    ls_program_append(p, out);
    ls_program_set_inputs(p, ins.v, ins.n);
    ls_program_set_outputs(p, os, g->n_outputs);
    free(ins.v);
    free(os);
    return p;
}

static bool bb_claims(const ls_blob *blob)
{
    return blob->size >= 4 && memcmp(blob->data, LS_BB_MAGIC, 4) == 0;
}

static int bb_read(const ls_delegate_view *d, ls_program **out, ls_error *err)
{
    ls_bb_graph *g = NULL;
    if (ls_bb_decode(d->blob, &g, err) != 0) return -1;
    *out = program_from_graph(g, (ls_blob *)d->blob, d->name ? d->name : "lowered_module");
    ls_bb_graph_free(g);
    return 0;
}

const ls_delegate_inspector ls_bundled_inspector = {
    .backend_id = "BundledBackend",
    .format = "lowerscope's bundled blob (LSBB, docs/bundled-backend.md)",
    .claims = bb_claims,
    .read = bb_read,
};
