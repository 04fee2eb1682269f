/* Who holds a constant at a step (held_by.h): the data inputs of a program and its lowered
 * modules chained by target and by data pointer, so a lookup costs the holders it finds. */
#include <stdlib.h>

#include "held_by.h"
#include "tensor.h"

const ls_program *ls_holder_program(const ls_held_index *ix, const ls_holder *e)
{
    return e->sub < 0 ? ix->top : ix->top->subs[e->sub].program;
}

const char *ls_holder_sub_name(const ls_held_index *ix, const ls_holder *e)
{
    return e->sub < 0 ? NULL : ix->top->subs[e->sub].name;
}

void ls_held_index_build(ls_held_index *ix, const ls_program *top)
{
    memset(ix, 0, sizeof *ix);
    ix->top = top;
    uint32_t cap = 0;
    for (int32_t s = -1; s < (int32_t)top->n_subs; s++) {
        const ls_program *p = s < 0 ? top : top->subs[s].program;
        if (p) cap += p->n_inputs;
    }
    ix->v = ls_malloc(sizeof *ix->v * (cap ? cap : 1));
    const void **data = ls_malloc(sizeof *data * (cap ? cap : 1));
    for (int32_t s = -1; s < (int32_t)top->n_subs; s++) {
        const ls_program *p = s < 0 ? top : top->subs[s].program;
        for (uint32_t i = 0; p && i < p->n_inputs; i++) {
            const ls_input_spec *o = &p->inputs[i];
            if (!o->name || !o->target || o->kind == LS_IN_USER_INPUT) continue;
            const ls_named_tensor *nt = ls_program_spec_data(p, o);
            data[ix->n] = nt && nt->t ? nt->t->data : NULL;
            ix->v[ix->n++] = (ls_holder){s, i, 0, 0};
        }
    }
    /* chains in order: the entries are pushed in front from the last one */
    ls_ptrmap_reserve(&ix->by_target, ix->n);
    for (uint32_t k = ix->n; k-- > 0;) {
        const ls_program *p = ls_holder_program(ix, &ix->v[k]);
        const char *target = p->inputs[ix->v[k].input].target;
        uintptr_t next = 0;
        ls_ptrmap_get(&ix->by_target, target, &next);
        ix->v[k].next_target = (uint32_t)next;
        ls_ptrmap_put(&ix->by_target, target, k + 1);
        if (!data[k]) continue;
        next = 0;
        ls_ptrmap_get(&ix->by_data, data[k], &next);
        ix->v[k].next_data = (uint32_t)next;
        ls_ptrmap_put(&ix->by_data, data[k], k + 1);
    }
    free(data);
}

void ls_held_index_free(ls_held_index *ix)
{
    free(ix->v);
    ls_ptrmap_free(&ix->by_target);
    ls_ptrmap_free(&ix->by_data);
    memset(ix, 0, sizeof *ix);
}

/* The same bytes: a copy shares the original's storage (duplicate_constants). */
static bool same_data(const ls_tensor *a, const ls_tensor *b)
{
    if (!a || !b) return false;
    return a == b || (a->data == b->data && a->nbytes == b->nbytes);
}

static int cmp_u32(const void *a, const void *b)
{
    uint32_t x = *(const uint32_t *)a, y = *(const uint32_t *)b;
    return x < y ? -1 : x > y;
}

uint32_t ls_held_by(const ls_held_index *ix, const ls_program *own, const ls_input_spec *spec, uint32_t **out)
{
    *out = NULL;
    if (!spec->target || !ix->v) return 0;
    const ls_named_tensor *mine = ls_program_spec_data(own, spec);
    LS_VEC(uint32_t) found = {0};
    uintptr_t k = 0;
    ls_ptrmap_get(&ix->by_target, spec->target, &k);
    for (; k; k = ix->v[k - 1].next_target) ls_vec_push(&found, (uint32_t)k - 1);
    k = 0;
    if (mine && mine->t) ls_ptrmap_get(&ix->by_data, mine->t->data, &k);
    for (; k; k = ix->v[k - 1].next_data) {
        const ls_holder *e = &ix->v[k - 1];
        const ls_program *p = ls_holder_program(ix, e);
        const ls_named_tensor *nt = ls_program_spec_data(p, &p->inputs[e->input]);
        if (nt && same_data(mine->t, nt->t)) ls_vec_push(&found, (uint32_t)k - 1);
    }
    if (found.n) qsort(found.v, found.n, sizeof *found.v, cmp_u32);
    uint32_t n = 0;
    for (uint32_t i = 0; i < found.n; i++)
        if (!n || found.v[i] != found.v[n - 1]) found.v[n++] = found.v[i];
    if (!n) free(found.v);
    else *out = found.v;
    return n;
}
