/* Unique node names (torch.fx's rule), with per-base counters so naming stays linear. */
#include "namer.h"

#include <ctype.h>
#include <stdlib.h>
#include <string.h>

#include "common.h"
#include "program.h"

typedef struct slot {
    const char *key; /* interned */
    uint32_t next;   /* for counters: next suffix to try */
} slot;

typedef struct set {
    slot *slots;
    uint32_t cap, used;
} set;

struct ls_namer {
    set taken;    /* names in use */
    set counters; /* base → next suffix */
};

static uint32_t hash_ptr(const char *s)
{
    uintptr_t x = (uintptr_t)s;
    x ^= x >> 15;
    x *= 0x9E3779B97F4A7C15ull;
    return (uint32_t)(x >> 24);
}

static slot *lookup(set *st, const char *key, bool insert)
{
    if (insert && (st->used + 1) * 2 > st->cap) {
        uint32_t nc = st->cap ? st->cap * 2 : 64;
        slot *ns = ls_calloc(nc, sizeof *ns);
        for (uint32_t i = 0; i < st->cap; i++) {
            if (!st->slots[i].key) continue;
            uint32_t j = hash_ptr(st->slots[i].key) & (nc - 1);
            while (ns[j].key) j = (j + 1) & (nc - 1);
            ns[j] = st->slots[i];
        }
        free(st->slots);
        st->slots = ns;
        st->cap = nc;
    }
    if (!st->cap) return NULL;
    uint32_t j = hash_ptr(key) & (st->cap - 1);
    while (st->slots[j].key) {
        if (st->slots[j].key == key) return &st->slots[j];
        j = (j + 1) & (st->cap - 1);
    }
    if (!insert) return NULL;
    st->slots[j].key = key;
    st->slots[j].next = 1;
    st->used++;
    return &st->slots[j];
}

ls_namer *ls_namer_new(const ls_program *p)
{
    ls_namer *nm = ls_calloc(1, sizeof *nm);
    if (p)
        for (uint32_t i = 0; i < p->n_nodes; i++) ls_namer_reserve(nm, p->nodes[i]->name);
    return nm;
}

void ls_namer_reserve(ls_namer *nm, const char *name)
{
    if (name) lookup(&nm->taken, ls_intern(name), true);
}

const char *ls_namer_take(ls_namer *nm, const char *base_in)
{
    const char *base = ls_intern(base_in);
    if (!lookup(&nm->taken, base, false)) {
        lookup(&nm->taken, base, true);
        return base;
    }
    /* "add_3" continues from 4 under the base "add" */
    size_t len = strlen(base);
    size_t k = len;
    while (k > 0 && isdigit((unsigned char)base[k - 1])) k--;
    uint32_t start = 1;
    const char *stem = base;
    if (k < len && k > 1 && base[k - 1] == '_') {
        stem = ls_intern_n(base, k - 1);
        start = (uint32_t)strtoul(base + k, NULL, 10) + 1;
    }
    slot *c = lookup(&nm->counters, stem, true);
    if (c->next < start) c->next = start;
    for (;;) {
        const char *cand = ls_internf("%s_%u", stem, c->next++);
        if (!lookup(&nm->taken, cand, false)) {
            lookup(&nm->taken, cand, true);
            return cand;
        }
    }
}

void ls_namer_free(ls_namer *nm)
{
    if (!nm) return;
    free(nm->taken.slots);
    free(nm->counters.slots);
    free(nm);
}
