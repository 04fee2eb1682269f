/* The graph signature looked up by name (include/signature.h). */
#include "signature.h"

#include <string.h>

void ls_sig_build(ls_sig *s, const ls_program *p)
{
    memset(s, 0, sizeof *s);
    /* sized once: grown by doubling, the maps of a million-node program were rehashed about 15 times
     * each, every time at the program's size (each pass builds one) */
    ls_ptrmap_reserve(&s->spec_of, p->n_inputs);
    ls_ptrmap_reserve(&s->state_ix, p->n_state);
    ls_ptrmap_reserve(&s->const_ix, p->n_constants);
    for (uint32_t i = 0; i < p->n_inputs; i++)
        if (!ls_ptrmap_has(&s->spec_of, p->inputs[i].name)) ls_ptrmap_put(&s->spec_of, p->inputs[i].name, i);
    for (uint32_t i = 0; i < p->n_outputs; i++) {
        const ls_output_spec *o = &p->outputs[i];
        if (o->kind == LS_OUT_BUFFER_MUTATION || o->kind == LS_OUT_PARAMETER_MUTATION) {
            if (o->target && !ls_ptrmap_has(&s->mutated_target, o->target)) ls_ptrmap_put(&s->mutated_target, o->target, i);
            if (o->name && !ls_ptrmap_has(&s->mutation_node, o->name)) ls_ptrmap_put(&s->mutation_node, o->name, i);
        }
    }
    for (uint32_t i = 0; i < p->n_state; i++) ls_ptrmap_put(&s->state_ix, p->state_dict[i].name, i);
    for (uint32_t i = 0; i < p->n_constants; i++) ls_ptrmap_put(&s->const_ix, p->constants[i].name, i);
}

void ls_sig_free(ls_sig *s)
{
    ls_ptrmap_free(&s->spec_of);
    ls_ptrmap_free(&s->mutated_target);
    ls_ptrmap_free(&s->mutation_node);
    ls_ptrmap_free(&s->state_ix);
    ls_ptrmap_free(&s->const_ix);
}

const ls_input_spec *ls_sig_spec(const ls_sig *s, const ls_program *p, const ls_node *ph)
{
    uint32_t i;
    if (!ph || ph->kind != LS_NODE_PLACEHOLDER || !ls_ptrmap_get_u32(&s->spec_of, ph->name, &i) || i >= p->n_inputs)
        return NULL;
    return &p->inputs[i];
}

ls_named_tensor *ls_sig_data(const ls_sig *s, const ls_program *p, const ls_input_spec *spec)
{
    uint32_t i;
    if (!spec || !spec->target) return NULL;
    bool in_state = ls_input_in_state(spec->kind, spec->persistent);
    bool in_const = spec->kind == LS_IN_CONSTANT_TENSOR || (spec->kind == LS_IN_BUFFER && !spec->persistent);
    if (in_state && ls_ptrmap_get_u32(&s->state_ix, spec->target, &i) && i < p->n_state) return &p->state_dict[i];
    if (in_const && ls_ptrmap_get_u32(&s->const_ix, spec->target, &i) && i < p->n_constants) return &p->constants[i];
    return NULL;
}

bool ls_sig_is_mutated(const ls_sig *s, const ls_input_spec *spec)
{
    return spec && spec->target && (spec->kind == LS_IN_BUFFER || spec->kind == LS_IN_PARAMETER) &&
           ls_ptrmap_has(&s->mutated_target, spec->target);
}
