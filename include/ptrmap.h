/* Maps from pointers (interned strings, nodes) and from strings (by content) to pointer-sized
 * values: open addressing, power-of-two tables, O(1) inserts and lookups. Header-only: the
 * model, the readers, the passes, the runtime and the CLI share them. */
#ifndef LS_PTRMAP_H
#define LS_PTRMAP_H

#include <stdbool.h>
#include <stdint.h>
#include <stdlib.h>
#include <string.h>
#include <xxhash.h>

#include "common.h"

typedef struct ls_ptrmap {
    const void **keys;
    uintptr_t *vals;
    uint32_t cap, used;
} ls_ptrmap;

static inline uint32_t ls_ptrmap_hash(const void *k)
{
    uint64_t x = (uint64_t)(uintptr_t)k;
    x ^= x >> 29;
    x *= 0xBF58476D1CE4E5B9ull;
    x ^= x >> 32;
    return (uint32_t)x;
}

static inline void ls_ptrmap_reserve(ls_ptrmap *m, uint32_t want)
{
    if ((uint64_t)(want + 1) * 2 <= m->cap) return;
    uint32_t nc = m->cap ? m->cap : 64;
    while ((uint64_t)(want + 1) * 2 > nc) nc *= 2;
    const void **nk = ls_calloc_table(nc, sizeof *nk);
    uintptr_t *nv = ls_malloc(sizeof *nv * nc);
    for (uint32_t i = 0; i < m->cap; i++) {
        if (!m->keys[i]) continue;
        uint32_t j = ls_ptrmap_hash(m->keys[i]) & (nc - 1);
        while (nk[j]) j = (j + 1) & (nc - 1);
        nk[j] = m->keys[i];
        nv[j] = m->vals[i];
    }
    free(m->keys);
    free(m->vals);
    m->keys = nk;
    m->vals = nv;
    m->cap = nc;
}

/* The value for key, or false when absent. */
static inline bool ls_ptrmap_get(const ls_ptrmap *m, const void *key, uintptr_t *val)
{
    if (!m->cap || !key) return false;
    for (uint32_t j = ls_ptrmap_hash(key) & (m->cap - 1); m->keys[j]; j = (j + 1) & (m->cap - 1))
        if (m->keys[j] == key) {
            if (val) *val = m->vals[j];
            return true;
        }
    return false;
}

/* Inserts key → val unless key is present; returns false (and leaves the map) if it was,
 * with *old set to the value already there. A NULL key is never stored (true, nothing done). */
static inline bool ls_ptrmap_add(ls_ptrmap *m, const void *key, uintptr_t val, uintptr_t *old)
{
    if (!key) return true;
    ls_ptrmap_reserve(m, m->used + 1);
    uint32_t j = ls_ptrmap_hash(key) & (m->cap - 1);
    for (; m->keys[j]; j = (j + 1) & (m->cap - 1))
        if (m->keys[j] == key) {
            if (old) *old = m->vals[j];
            return false;
        }
    m->keys[j] = key;
    m->vals[j] = val;
    m->used++;
    return true;
}

/* Inserts or replaces (a NULL key: nothing). */
static inline void ls_ptrmap_put(ls_ptrmap *m, const void *key, uintptr_t val)
{
    if (!key) return;
    ls_ptrmap_reserve(m, m->used + 1);
    uint32_t j = ls_ptrmap_hash(key) & (m->cap - 1);
    for (; m->keys[j]; j = (j + 1) & (m->cap - 1))
        if (m->keys[j] == key) {
            m->vals[j] = val;
            return;
        }
    m->keys[j] = key;
    m->vals[j] = val;
    m->used++;
}

static inline bool ls_ptrmap_has(const ls_ptrmap *m, const void *key)
{
    return ls_ptrmap_get(m, key, NULL);
}

/* The value as an index (what most maps hold). */
/* A set of pointers: the keys of a map alone, half its bytes, and one probe to add a key
 * (a namer's set of taken names holds every node name of a program: at a million nodes each
 * probe of it is a cache miss). */
typedef struct ls_ptrset {
    const void **keys;
    uint32_t cap, used;
} ls_ptrset;

static inline void ls_ptrset_reserve(ls_ptrset *s, uint32_t want)
{
    if ((uint64_t)(want + 1) * 2 <= s->cap) return;
    uint32_t nc = s->cap ? s->cap : 64;
    while ((uint64_t)(want + 1) * 2 > nc) nc *= 2;
    const void **nk = ls_calloc_table(nc, sizeof *nk);
    for (uint32_t i = 0; i < s->cap; i++) {
        if (!s->keys[i]) continue;
        uint32_t j = ls_ptrmap_hash(s->keys[i]) & (nc - 1);
        while (nk[j]) j = (j + 1) & (nc - 1);
        nk[j] = s->keys[i];
    }
    free(s->keys);
    s->keys = nk;
    s->cap = nc;
}

static inline bool ls_ptrset_has(const ls_ptrset *s, const void *key)
{
    if (!s->cap || !key) return false;
    for (uint32_t j = ls_ptrmap_hash(key) & (s->cap - 1); s->keys[j]; j = (j + 1) & (s->cap - 1))
        if (s->keys[j] == key) return true;
    return false;
}

/* Adds key; false when it was there already. A NULL key is never stored (false). */
static inline bool ls_ptrset_add(ls_ptrset *s, const void *key)
{
    if (!key) return false;
    ls_ptrset_reserve(s, s->used + 1);
    uint32_t j = ls_ptrmap_hash(key) & (s->cap - 1);
    for (; s->keys[j]; j = (j + 1) & (s->cap - 1))
        if (s->keys[j] == key) return false;
    s->keys[j] = key;
    s->used++;
    return true;
}

static inline void ls_ptrset_free(ls_ptrset *s)
{
    free(s->keys);
    memset(s, 0, sizeof *s);
}

static inline bool ls_ptrmap_get_u32(const ls_ptrmap *m, const void *key, uint32_t *val)
{
    uintptr_t v;
    if (!ls_ptrmap_get(m, key, &v)) return false;
    if (val) *val = (uint32_t)v;
    return true;
}

static inline void ls_ptrmap_free(ls_ptrmap *m)
{
    free(m->keys);
    free(m->vals);
    m->keys = NULL;
    m->vals = NULL;
    m->cap = m->used = 0;
}


/* ---- a map from strings (by content) to pointer-sized values. Keys are not copied: they
 * must outlive the map (interned strings, or a JSON tree being read). */

typedef struct ls_strmap_slot {
    uint64_t hash;
    const char *key;
    uintptr_t val;
} ls_strmap_slot;

typedef struct ls_strmap {
    ls_strmap_slot *slots;
    uint32_t cap, used;
} ls_strmap;

/* The intern pool's hash too (ls_intern_hash, checked by a test): the JSON loader hashes a
 * node's name once for its value map and for interning it. */
static inline uint64_t ls_strmap_hash(const char *s, size_t n)
{
    return XXH3_64bits(s, n);
}

static inline void ls_strmap_reserve(ls_strmap *m, uint32_t want)
{
    if ((uint64_t)(want + 1) * 2 <= m->cap) return;
    uint32_t nc = m->cap ? m->cap : 64;
    while ((uint64_t)(want + 1) * 2 > nc) nc *= 2;
    ls_strmap_slot *ns = ls_calloc_table(nc, sizeof *ns);
    for (uint32_t i = 0; i < m->cap; i++) {
        if (!m->slots[i].key) continue;
        uint32_t j = (uint32_t)m->slots[i].hash & (nc - 1);
        while (ns[j].key) j = (j + 1) & (nc - 1);
        ns[j] = m->slots[i];
    }
    free(m->slots);
    m->slots = ns;
    m->cap = nc;
}

/* The slot of key (hash given), or NULL when absent. */
static inline ls_strmap_slot *ls_strmap_find(const ls_strmap *m, const char *key, uint64_t hash)
{
    if (!m->cap) return NULL;
    for (uint32_t j = (uint32_t)hash & (m->cap - 1); m->slots[j].key; j = (j + 1) & (m->cap - 1))
        if (m->slots[j].hash == hash && (m->slots[j].key == key || strcmp(m->slots[j].key, key) == 0))
            return &m->slots[j];
    return NULL;
}

/* Inserts key → val unless present: returns the slot holding key either way and sets *added. */
static inline ls_strmap_slot *ls_strmap_add(ls_strmap *m, const char *key, uint64_t hash, uintptr_t val, bool *added)
{
    ls_strmap_reserve(m, m->used + 1);
    uint32_t j = (uint32_t)hash & (m->cap - 1);
    for (; m->slots[j].key; j = (j + 1) & (m->cap - 1))
        if (m->slots[j].hash == hash && (m->slots[j].key == key || strcmp(m->slots[j].key, key) == 0)) {
            *added = false;
            return &m->slots[j];
        }
    m->slots[j].hash = hash;
    m->slots[j].key = key;
    m->slots[j].val = val;
    m->used++;
    *added = true;
    return &m->slots[j];
}

static inline void ls_strmap_free(ls_strmap *m)
{
    free(m->slots);
    m->slots = NULL;
    m->cap = m->used = 0;
}

#endif
