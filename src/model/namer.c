/* Unique node names (torch.fx's rule), with per-stem counters so naming stays linear: the
 * readers, the .pte loader and every pass that makes nodes name them here. */
#include "namer.h"

#include <stdlib.h>
#include <string.h>

#include "common.h"
#include "program.h"
#include "ptrmap.h"

struct ls_namer {
    ls_ptrset taken; /* interned names in use */
    ls_ptrmap next;  /* interned stem → next suffix to try */
};

ls_namer *ls_namer_new(const ls_program *p)
{
    ls_namer *nm = ls_calloc(1, sizeof *nm);
    if (p) {
        ls_ptrset_reserve(&nm->taken, p->n_nodes);
        for (uint32_t i = 0; i < p->n_nodes; i++) ls_ptrset_add(&nm->taken, p->nodes[i]->name);
    }
    return nm;
}

void ls_namer_room(ls_namer *nm, uint32_t n)
{
    ls_ptrset_reserve(&nm->taken, nm->taken.used + n);
}

void ls_namer_reserve(ls_namer *nm, const char *name)
{
    if (name) ls_ptrset_add(&nm->taken, ls_intern(name));
}

bool ls_namer_taken(const ls_namer *nm, const char *name)
{
    return ls_ptrset_has(&nm->taken, name);
}

const char *ls_namer_take(ls_namer *nm, const char *base)
{
    return ls_namer_take_interned(nm, ls_intern(base));
}

static size_t put_uint(char *out, uint32_t v)
{
    char tmp[12];
    size_t n = 0;
    do tmp[n++] = (char)('0' + v % 10);
    while ((v /= 10) != 0);
    for (size_t i = 0; i < n; i++) out[i] = tmp[n - 1 - i];
    return n;
}

const char *ls_namer_take_interned(ls_namer *nm, const char *base)
{
    if (!base) return NULL;
    if (ls_ptrset_add(&nm->taken, base)) return base; /* one probe: free, and now taken */
    /* "add_3" continues from 4 under the stem "add" */
    size_t len = strlen(base), k = len;
    while (k > 0 && base[k - 1] >= '0' && base[k - 1] <= '9') k--;
    const char *stem = base;
    size_t stem_len = len;
    uint32_t start = 1;
    if (k < len && k > 1 && base[k - 1] == '_') {
        stem_len = k - 1;
        stem = ls_intern_n(base, stem_len);
        start = (uint32_t)strtoul(base + k, NULL, 10) + 1;
    }
    uintptr_t next = 1;
    ls_ptrmap_get(&nm->next, stem, &next);
    if (next < start) next = start;
    char small[256];
    char *buf = stem_len + 16 <= sizeof small ? small : ls_malloc(stem_len + 16);
    memcpy(buf, stem, stem_len);
    buf[stem_len] = '_';
    const char *cand;
    for (;;) {
        size_t n = stem_len + 1 + put_uint(buf + stem_len + 1, (uint32_t)next++);
        cand = ls_intern_n(buf, n);
        if (ls_ptrset_add(&nm->taken, cand)) break;
    }
    ls_ptrmap_put(&nm->next, stem, next);
    if (buf != small) free(buf);
    return cand;
}

void ls_namer_free(ls_namer *nm)
{
    if (!nm) return;
    ls_ptrset_free(&nm->taken);
    ls_ptrmap_free(&nm->next);
    free(nm);
}
