/* Reading a .pte file as a program: the file, the .ptd beside it for EXTERNAL tensors (the
 * conversion itself is pte_load.c), and a BundledBackend blob decoded back into the lowered
 * module's program so the UI can enter it. */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>

#include "bundled_blob.h"
#include "export.h"
#include "pte_internal.h"

/* The decoded blob as a program: its placeholders (user inputs, constants and state with their
 * data viewing the blob), calls and output, with the blob's ids. */
ls_program *lsp_program_from_bb(const ls_bb_graph *g, ls_blob *blob, const char *name)
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

static bool has_external(const ls_pte *pte)
{
    for (uint32_t i = 0; i < pte->execution_plan.n; i++) {
        const ls_pte_values *vs = &pte->execution_plan.v[i].values;
        for (uint32_t k = 0; k < vs->n; k++)
            if (vs->v[k].kind == LS_PTE_VAL_TENSOR && vs->v[k].tensor.has_extra_tensor_info &&
                vs->v[k].tensor.extra_tensor_info.location == LS_PTE_TENSOR_EXTERNAL)
                return true;
    }
    return false;
}

/* A .ptd beside the .pte: PATH.ptd for PATH.pte, then ExecuTorch's default name in its folder. */
static bool sibling_ptd(const char *path, ls_ptd *ptd)
{
    char cand[3][4200];
    size_t n = strlen(path);
    size_t stem = n > 4 && strcmp(path + n - 4, ".pte") == 0 ? n - 4 : n;
    const char *slash = strrchr(path, '/');
    int dir = slash ? (int)(slash - path + 1) : 0;
    snprintf(cand[0], sizeof cand[0], "%.*s.ptd", (int)stem, path);
    snprintf(cand[1], sizeof cand[1], "%.*s_default_external_constant.ptd", dir, path);
    snprintf(cand[2], sizeof cand[2], "%.*s__default_external_constant.ptd", (int)stem, path);
    for (int i = 0; i < 3; i++) {
        struct stat st;
        ls_error e2;
        if (stat(cand[i], &st) == 0 && S_ISREG(st.st_mode) && ls_ptd_read_file(cand[i], ptd, &e2) == 0) return true;
    }
    return false;
}

int ls_load_pte(const char *path, const char *method, ls_program **out, ls_error *err)
{
    *out = NULL;
    ls_pte pte;
    if (ls_pte_read_file(path, &pte, err) != 0) return -1;
    ls_ptd ptd;
    bool with_ptd = has_external(&pte) && sibling_ptd(path, &ptd);
    int rc = lsp_program_from_pte(&pte, with_ptd ? &ptd : NULL, method, path, out, err);
    if (with_ptd) ls_ptd_free(&ptd);
    ls_pte_free(&pte);
    return rc;
}
