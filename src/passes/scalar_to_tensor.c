/* Part of to_edge: exir's ScalarToTensorPass (exir/passes/scalar_to_tensor_pass.py, one of the
 * passes to_edge runs on every op): a Python scalar given where the schema wants a Tensor
 * (isinstance(arg.type, torch.TensorType): not an optional one) becomes torch.tensor(value), a
 * 0-dim float32, int64 or bool constant; lift_constant_tensor_pass then makes each a lifted
 * tensor constant `_lifted_tensor_constant<k>` placed before the first user input (k counting
 * on from the program's tensor constants). add.Tensor(x, 1e-6) reads a tensor afterwards, as
 * the portable kernel add.out requires. */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "build.h"
#include "pass_util.h"
#include "passes.h"
#include "signature.h"

static ls_tensor *scalar_tensor(const ls_arg *a, ls_tmeta *m)
{
    ls_dtype dt = a->kind == LS_ARG_FLOAT ? LS_DT_F32 : a->kind == LS_ARG_BOOL ? LS_DT_BOOL : LS_DT_I64;
    *m = ls_meta(dt, 0, NULL);
    ls_tensor *t = ls_tensor_alloc(dt, 0, NULL);
    if (dt == LS_DT_F32) ((float *)t->data)[0] = (float)a->v.f;
    else if (dt == LS_DT_BOOL) ((uint8_t *)t->data)[0] = a->v.b ? 1 : 0;
    else ((int64_t *)t->data)[0] = a->v.i;
    return t;
}

uint32_t pu_scalars_to_tensors(ls_program *q, ls_report *rep)
{
    uint32_t k = 0;
    for (uint32_t s = 0; s < q->n_inputs; s++) k += q->inputs[s].kind == LS_IN_CONSTANT_TENSOR;
    LS_VEC(ls_node *) made = {0};
    LS_VEC(ls_input_spec) specs = {0};
    for (uint32_t i = 0; i < q->n_nodes; i++) {
        const ls_node *n = q->nodes[i];
        if (n->kind != LS_NODE_CALL || !n->op || (n->op->flags & LS_OPF_SPECIAL)) continue;
        const ls_schema *s = &n->op->schema;
        for (uint16_t a = 0; a < n->nargs && a < s->nparams; a++) {
            const ls_arg *x = &n->args[a];
            if (s->params[a].type != LS_PT_TENSOR || s->params[a].optional ||
                (x->kind != LS_ARG_INT && x->kind != LS_ARG_FLOAT && x->kind != LS_ARG_BOOL))
                continue;
            const char *name;
            do name = ls_internf("_lifted_tensor_constant%u", k++);
            while (ls_program_find(q, name) >= 0 || ls_program_constant(q, name));
            ls_tmeta m;
            ls_tensor *t = scalar_tensor(x, &m);
            ls_node *ph = ls_node_new_placeholder(q, name, &m);
            ls_program_put_constant(q, name, t, &m);
            ls_tensor_unref(t);
            ls_input_spec sp = {.kind = LS_IN_CONSTANT_TENSOR, .name = name, .target = name};
            ls_vec_push(&specs, sp);
            ls_vec_push(&made, ph);
            ls_node *e = pu_edit(q, i);
            const char *an = e->args[a].name;
            uint8_t flags = e->args[a].flags & LS_ARGF_KEYWORD;
            ls_arg_free(&e->args[a]);
            e->args[a] = ls_arg_node(ph->id);
            e->args[a].name = an;
            e->args[a].flags = flags;
            n = e;
        }
    }
    if (!made.n) return 0;
    /* before the first user input (the very start when there is none) */
    ls_sig sig;
    ls_sig_build(&sig, q);
    int32_t first = -1;
    for (uint32_t i = 0; i < q->n_nodes && first < 0; i++) {
        const ls_input_spec *s = q->nodes[i]->kind == LS_NODE_PLACEHOLDER ? ls_sig_spec(&sig, q, q->nodes[i]) : NULL;
        if (s && s->kind == LS_IN_USER_INPUT) first = (int32_t)i;
    }
    ls_sig_free(&sig);
    LS_VEC(ls_node *) nodes = {0};
    ls_vec_reserve(&nodes, q->n_nodes + made.n);
    for (uint32_t i = 0; i < q->n_nodes; i++) {
        if ((int32_t)i == (first < 0 ? 0 : first))
            for (uint32_t j = 0; j < made.n; j++) ls_vec_push(&nodes, made.v[j]);
        ls_vec_push(&nodes, ls_node_ref(q->nodes[i]));
    }
    ls_program_set_nodes(q, nodes.v, nodes.n);
    free(nodes.v);
    /* their input specs go before the first user input's spec, in the same order */
    LS_VEC(ls_input_spec) all = {0};
    bool placed = false;
    for (uint32_t s = 0; s <= q->n_inputs; s++) {
        if (!placed && (s == q->n_inputs || q->inputs[s].kind == LS_IN_USER_INPUT)) {
            for (uint32_t j = 0; j < specs.n; j++) ls_vec_push(&all, specs.v[j]);
            placed = true;
        }
        if (s == q->n_inputs) break;
        ls_input_spec c = q->inputs[s];
        ls_arg_copy(&c.value, &q->inputs[s].value);
        ls_vec_push(&all, c);
    }
    ls_program_set_inputs(q, all.v, all.n);
    for (uint32_t j = 0; j < all.n; j++) ls_arg_free(&all.v[j].value);
    free(all.v);
    ls_buf b = {0};
    for (uint32_t j = 0; j < made.n && j < 4; j++) ls_buf_printf(&b, "%s`%s`", j ? ", " : "", made.v[j]->name);
    if (made.n > 4) ls_buf_printf(&b, " and %u more", made.n - 4);
    ls_report_add(rep, NULL, made.v[0]->name, "%u Python scalar%s given for a Tensor became %s (ScalarToTensorPass)",
                  made.n, made.n == 1 ? "" : "s", b.s);
    ls_buf_free(&b);
    uint32_t count = made.n;
    free(made.v);
    free(specs.v);
    return count;
}
