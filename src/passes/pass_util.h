/* Helpers shared by the passes (private to src/passes/): pointer maps, private node copies
 * that keep the index, the users and positions of every node, and small report helpers. The
 * signature facts every pass needs are the model's (signature.h). Everything here is linear in
 * the program: the passes look facts up in these tables instead of scanning the signature. */
#ifndef LS_PASS_UTIL_H
#define LS_PASS_UTIL_H

#include <stdbool.h>
#include <stdint.h>

#include "common.h"
#include "history.h"
#include "namer.h"
#include "ops.h"
#include "program.h"
#include "ptrmap.h"
#include "signature.h"

/* ---- a map from pointers (interned strings, nodes) to uint32: the core's pointer map */
typedef ls_ptrmap pu_map;

/* Room for n keys without growing (a map grows by rehashing everything). */
static inline void pu_map_reserve(pu_map *m, uint32_t n)
{
    ls_ptrmap_reserve(m, n);
}
static inline void pu_map_put(pu_map *m, const void *key, uint32_t val)
{
    ls_ptrmap_put(m, key, val);
}
static inline bool pu_map_get(const pu_map *m, const void *key, uint32_t *val)
{
    return ls_ptrmap_get_u32(m, key, val);
}
static inline bool pu_map_has(const pu_map *m, const void *key)
{
    return ls_ptrmap_has(m, key);
}
static inline void pu_map_free(pu_map *m)
{
    ls_ptrmap_free(m);
}

/* ---- nodes */
/* The node at pos made private to p without dropping p's index (the caller calls
 * ls_program_touch once its edits are done and must not rely on users meanwhile). */
ls_node *pu_edit(ls_program *p, uint32_t pos);
bool pu_is_op(const ls_node *n, ls_op_id id);
/* Ids of the nodes a node reads, in argument order (duplicates kept); returns the count. */
uint32_t pu_inputs(const ls_node *n, uint32_t **ids, uint32_t *cap);

/* The users of every node, as positions in graph order (deduplicated per user), and the
 * position of every node id, taken once so the passes can edit nodes afterwards without
 * rebuilding the program's index (which also hashes every name). */
typedef struct pu_users {
    uint32_t *off; /* n + 1 */
    uint32_t *pos;
    int32_t *at;   /* id → position when ids are dense, else NULL */
    uint32_t id_cap;
    pu_map sparse; /* (void *)id → position when ids are sparse (a lowered module's) */
    const ls_program *p;
} pu_users;
void pu_users_take(pu_users *u, const ls_program *p);
/* Only the positions (no users): pu_pos works, pu_nusers does not. */
void pu_pos_take(pu_users *u, const ls_program *p);
void pu_users_free(pu_users *u);
static inline uint32_t pu_nusers(const pu_users *u, uint32_t pos)
{
    return u->off[pos + 1] - u->off[pos];
}
/* The position of a node id in the program the users were taken from, or -1. */
static inline int32_t pu_pos(const pu_users *u, uint32_t id)
{
    if (u->at) return id < u->id_cap ? u->at[id] : -1;
    uint32_t v;
    return pu_map_get(&u->sparse, (const void *)(uintptr_t)id, &v) ? (int32_t)v : -1;
}


/* The edges from[e] → to[e] over nv vertices as adjacency lists (compressed rows): the
 * successors of v are adj[off[v] .. off[v + 1]). Free both. */
void pu_csr(uint32_t nv, const uint32_t *from, const uint32_t *to, uint32_t n_edges, uint32_t **off, uint32_t **adj);

/* Tags compare as exir's min() compares them: strings, "tag10" < "tag2"; NULL (None) apart. */
int pu_tag_cmp(const char *a, const char *b);
const char *pu_tag_text(const char *tag); /* "None" for NULL */

/* Appends "`a`, `b`, `c` and 4 more" (at most max names) to b. */
void pu_names(ls_buf *b, const char *const *names, uint32_t n, uint32_t max);
/* "float32[4, 5]" in a static ring of buffers (for report sentences). */
const char *pu_meta_str(const ls_tmeta *m);

/* to_edge's ScalarToTensorPass (scalar_to_tensor.c): scalars given for Tensor parameters become
 * lifted tensor constants. Returns how many. */
uint32_t pu_scalars_to_tensors(ls_program *q, ls_report *rep);

#endif
