/* The neighbourhood of a node (Model Explorer's "expand around a node"): the node, its producers
 * up to `depth` levels above and its users up to `depth` levels below, each node once (at the
 * level it is first reached from), at most `max_level` nodes a level and a count of the rest.
 * Computed here once for the UI's `x` screen and `lowerscope graph --around`; O(degree² · depth)
 * for a drawing, never O(n) beyond the users index the program keeps. */
#ifndef LS_NEIGHBOURHOOD_H
#define LS_NEIGHBOURHOOD_H

#include <stdint.h>

#include "program.h"

#define LS_AROUND_MAX_DEPTH 8

typedef struct ls_around_edge {
    uint32_t from, to; /* indexes into ids: `to` reads `from`, which is on the level above it */
} ls_around_edge;

typedef struct ls_around {
    uint32_t center; /* node id */
    int depth;
    uint32_t n_levels; /* 2 * depth + 1: level k is k - depth from the node (negative: producers) */
    uint32_t *ids;     /* node ids shown, level by level, in the order they were reached */
    uint32_t *first;   /* per level its first index in ids; first[n_levels] is how many */
    uint32_t *more;    /* per level: nodes it has beyond max_level (each counted once) */
    ls_around_edge *edges;
    uint32_t n_edges;
} ls_around;

/* The neighbourhood of node `center` in p. Producers leave out memory.alloc nodes (an out
 * argument's buffer is not data flowing in). Returns -1 when p has no such node (out empty). */
int ls_around_build(const ls_program *p, uint32_t center, int depth, uint32_t max_level, ls_around *out);
void ls_around_free(ls_around *a);
/* The level of ids[i], from -depth (producers) to +depth (users). */
int ls_around_level_of(const ls_around *a, uint32_t i);

#endif
