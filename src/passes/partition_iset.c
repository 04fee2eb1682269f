/* Sets of partition numbers as sorted interval lists (partition_iset.h). */
#include "partition_iset.h"

#include <stdlib.h>
#include <string.h>

#include "common.h"

void iset_free(iset *s)
{
    free(s->v);
    s->v = NULL;
    s->n = s->cap = 0;
}

bool iset_has(const iset *s, uint32_t x)
{
    uint32_t lo = 0, hi = s->n;
    while (lo < hi) {
        uint32_t mid = (lo + hi) / 2;
        if (s->v[mid].hi <= x) lo = mid + 1;
        else if (s->v[mid].lo > x) hi = mid;
        else return true;
    }
    return false;
}

uint64_t iset_count(const iset *s)
{
    uint64_t c = 0;
    for (uint32_t i = 0; i < s->n; i++) c += s->v[i].hi - s->v[i].lo;
    return c;
}

static void iset_reserve(iset *s, uint32_t want)
{
    if (want <= s->cap) return;
    uint32_t nc = s->cap ? s->cap : 4;
    while (nc < want) nc *= 2;
    s->v = ls_realloc(s->v, sizeof *s->v * nc);
    s->cap = nc;
}

/* dst := dst ∪ src ∪ [lo, hi) (lo == hi for none); scratch holds the merge (no allocation
 * once it is big enough, so the partitioner does not call malloc per edge). */
void iset_merge(iset *dst, const iset *src, uint32_t lo, uint32_t hi, iset *scratch)
{
    uint32_t ns = src ? src->n : 0;
    if (!ns && lo >= hi) return;
    if (!dst->n && ns && lo >= hi) { /* a plain copy */
        iset_reserve(dst, ns);
        memcpy(dst->v, src->v, sizeof *dst->v * ns);
        dst->n = ns;
        return;
    }
    ivl extra = {lo, hi};
    iset_reserve(scratch, dst->n + ns + 1);
    ivl *out = scratch->v;
    uint32_t n = 0, i = 0, j = 0;
    bool extra_done = lo >= hi;
    for (;;) {
        const ivl *a = i < dst->n ? &dst->v[i] : NULL;
        const ivl *b = j < ns ? &src->v[j] : NULL;
        const ivl *next = a;
        if (b && (!next || b->lo < next->lo)) next = b;
        if (!extra_done && (!next || extra.lo < next->lo)) next = &extra;
        if (!next) break;
        if (next == a) i++;
        else if (next == b) j++;
        else extra_done = true;
        if (n && out[n - 1].hi >= next->lo) {
            if (next->hi > out[n - 1].hi) out[n - 1].hi = next->hi;
        } else {
            out[n++] = *next;
        }
    }
    iset_reserve(dst, n);
    memcpy(dst->v, out, sizeof *out * n);
    dst->n = n;
}

/* The smallest number in [0, limit) not in s, or limit. */
uint32_t iset_first_gap(const iset *s, uint32_t limit)
{
    uint32_t x = 0;
    for (uint32_t i = 0; i < s->n && s->v[i].lo <= x; i++)
        if (s->v[i].hi > x) x = s->v[i].hi;
    return x < limit ? x : limit;
}

/* ---- the partitioner */


bool iset_any_in(const iset *s, uint32_t lo, uint32_t hi)
{
    uint32_t a = 0, b = s->n; /* the first interval ending after lo */
    while (a < b) {
        uint32_t mid = (a + b) / 2;
        if (s->v[mid].hi <= lo) a = mid + 1;
        else b = mid;
    }
    return a < s->n && s->v[a].lo < hi;
}

bool iset_meets(const iset *a, const iset *b)
{
    const iset *small = a->n <= b->n ? a : b, *big = small == a ? b : a;
    for (uint32_t i = 0; i < small->n; i++)
        if (iset_any_in(big, small->v[i].lo, small->v[i].hi)) return true;
    return false;
}
