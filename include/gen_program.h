/* Synthetic programs of any size for benchmarks and tests, written as torch.export writes
 * them (full TensorMeta for every value, node metadata, delegation tags in custom metadata),
 * so loading them costs what loading a real export of that size costs. Deterministic.
 *
 * The graph is one chain from a user input x: float32[1, width] through `nodes` call nodes
 * (linear with a parameter, relu, mul, add x, tanh in turn), with lifted tensor constants
 * added in. Tags split the chain into `partitions` contiguous runs. Of the constants,
 * `shared_fraction` are each used by nodes in `share_partitions` different partitions (the
 * shape that makes constant duplication expensive); the others are used once.
 *
 *   ls_gen_opts o = ls_gen_defaults(100000);
 *   o.partitions = 2000; o.constants = 1000; o.shared_fraction = 0.1; o.share_partitions = 1000;
 *   char *json = ls_gen_json(&o, &len);          // the exported-program JSON
 *   ls_program *p = ls_gen_program(&o, &err);     // loaded, with data when o.with_data
 */
#ifndef LS_GEN_PROGRAM_H
#define LS_GEN_PROGRAM_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#include "common.h"
#include "program.h"

typedef struct ls_gen_opts {
    uint32_t nodes;            /* call nodes in the file (the getitems of split nodes come on top) */
    uint32_t width;            /* every tensor is float32[1, width] (parameters [width, width]) */
    uint32_t params;           /* linear layers (weight + bias each); linear nodes cycle through them */
    uint32_t constants;        /* lifted tensor constants, each float32[1, width] */
    double shared_fraction;    /* share of the constants used in share_partitions partitions */
    uint32_t share_partitions; /* how many partitions use each shared constant (clamped to partitions) */
    uint32_t partitions;       /* delegation tags tag0..tagN-1 over contiguous runs; 0 = untagged */
    uint32_t split_every;      /* every N-th node is a split_with_sizes + getitems + cat; 0 = never */
    bool edge;                 /* Edge-dialect targets and node names (verifier EDGE) */
    bool cpu_boundaries;       /* no delegation tags: instead each partition after the first starts
                                * with a `sin`, which the bundled backend leaves on the CPU, so the
                                * partitioner finds the `partitions` regions itself */
    bool with_data;            /* ls_gen_program / ls_gen_write_pt2: weights and constants with values */
    uint64_t seed;
} ls_gen_opts;

/* Sensible defaults for n nodes: width 8, n/50 layers, n/100 constants, untagged. */
ls_gen_opts ls_gen_defaults(uint32_t nodes);

/* The exported-program JSON (malloc'd, NUL-terminated; *len its length). */
char *ls_gen_json(const ls_gen_opts *o, size_t *len);
/* The program, loaded by the reader (with weight data when o->with_data, else metadata only). */
ls_program *ls_gen_program(const ls_gen_opts *o, ls_error *err);
/* A .pt2 archive of the program (members stored, under the root folder "gen/"). */
int ls_gen_write_pt2(const ls_gen_opts *o, const char *path, ls_error *err);

#endif
