/* The views exir elides (exir/emit/_emitter.py _emit_view): a static view of planned memory is
 * a value with its own sizes at its base's memory_id and offset, which no instruction writes.
 * Reading a .pte, such a value is a view of the tensor last written at the same place with the
 * same size (a mutable buffer read before it is written has its place to itself: greedy keeps a
 * mutable buffer alive over the whole program). */
#include <stdlib.h>

#include "pte_internal.h"

typedef struct place {
    uint32_t mem;
    uint64_t offset, nbytes;
    uint32_t value;
} place;

struct lsp_places {
    place *v;
    uint32_t n;
};

static int by_place(const void *a, const void *b)
{
    const place *x = a, *y = b;
    if (x->mem != y->mem) return x->mem < y->mem ? -1 : 1;
    if (x->offset != y->offset) return x->offset < y->offset ? -1 : 1;
    return x->value < y->value ? -1 : x->value > y->value;
}

static bool place_of(const ls_pte_value *v, uint32_t i, place *p)
{
    if (v->kind != LS_PTE_VAL_TENSOR || !v->tensor.has_allocation_info) return false;
    const ls_pte_tensor *t = &v->tensor;
    if (ls_pte_tensor_nbytes(t, &p->nbytes, NULL) != 0) return false;
    p->mem = t->allocation_info.memory_id;
    p->offset = (uint64_t)t->allocation_info.memory_offset_high << 32 | t->allocation_info.memory_offset_low;
    p->value = i;
    return true;
}

lsp_places *lsp_places_new(const ls_pte_plan *pl)
{
    lsp_places *ps = ls_calloc(1, sizeof *ps);
    ps->v = ls_malloc(sizeof *ps->v * (pl->values.n ? pl->values.n : 1));
    for (uint32_t i = 0; i < pl->values.n; i++)
        if (place_of(&pl->values.v[i], i, &ps->v[ps->n])) ps->n++;
    qsort(ps->v, ps->n, sizeof *ps->v, by_place);
    return ps;
}

void lsp_places_free(lsp_places *ps)
{
    if (!ps) return;
    free(ps->v);
    free(ps);
}

int32_t lsp_places_view_of(const lsp_places *ps, const ls_pte_plan *pl, uint32_t value, const uint32_t *node_of)
{
    place want;
    if (value >= pl->values.n || !place_of(&pl->values.v[value], value, &want)) return -1;
    uint32_t lo = 0, hi = ps->n;
    while (lo < hi) { /* the first entry at want's place */
        uint32_t mid = lo + (hi - lo) / 2;
        const place *m = &ps->v[mid];
        if (m->mem < want.mem || (m->mem == want.mem && m->offset < want.offset)) lo = mid + 1;
        else hi = mid;
    }
    int32_t best = -1;
    for (uint32_t k = lo; k < ps->n && ps->v[k].mem == want.mem && ps->v[k].offset == want.offset; k++) {
        const place *c = &ps->v[k];
        /* node ids grow as the loader defines values: the largest is the latest write */
        if (c->value != value && c->nbytes == want.nbytes && node_of[c->value] &&
            (best < 0 || node_of[c->value] > node_of[best]))
            best = (int32_t)c->value;
    }
    return best;
}
