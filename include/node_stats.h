/* What a run measured, node by node: time, the range of the values a node produced (with its
 * NaN and Inf counts), and how far they are from a reference run on the same inputs. One
 * structure whoever measured: the bundled runtime fills it (ls_runner_observe, runtime.h; the
 * node-by-node comparison: ls_compare_nodes, compare.h), and an ETDump's events map onto the
 * same records (one per node position of the program they describe). The UI's run overlay
 * (time, range, difference columns; the first divergence) reads only this.
 *
 * Depends on the model alone, so the file readers can fill it too. */
#ifndef LS_NODE_STATS_H
#define LS_NODE_STATS_H

#include <stdbool.h>
#include <stdint.h>

#include "program.h"
#include "tensor.h"

typedef struct ls_node_stat {
    uint32_t runs;          /* times the node was measured */
    double seconds;         /* time over those runs (a delegate call: the delegate's) */
    bool timed;             /* seconds is a measurement */
    /* the values it produced (every tensor of a tuple), over the runs */
    uint64_t numel;         /* elements seen; 0: no tensor output was measured */
    uint64_t finite, nan, inf;
    double min, max;        /* over the finite elements, when finite > 0 */
    /* against the reference's value of the same node */
    bool compared;
    bool differs;           /* beyond tolerance in some run */
    double max_abs, max_rel; /* the largest differences over the runs compared */
    int64_t first_bad_run;  /* the first run that differed (0-based), -1 none */
} ls_node_stat;

typedef struct ls_node_stats {
    ls_program *program;    /* the program measured (a reference held) */
    ls_node_stat *v;        /* one per node position of program */
    uint32_t n;
    int64_t runs;           /* runs measured */
    const char *source;     /* who measured: "bundled runtime", "ETDump" (interned) */
    double rtol, atol;      /* the tolerance of the comparison (< 0: by dtype) */
} ls_node_stats;

void ls_node_stats_init(ls_node_stats *s, const ls_program *p, const char *source);
void ls_node_stats_free(ls_node_stats *s);
/* The record of node id, NULL when the node is not in the program. O(1). */
ls_node_stat *ls_node_stats_of(const ls_node_stats *s, uint32_t id);

/* Adds one measurement to a node's record. */
void ls_node_stat_add_time(ls_node_stat *st, double seconds);
void ls_node_stat_add_tensor(ls_node_stat *st, const ls_tensor *t); /* range, NaN and Inf counts */
void ls_node_stat_add_diff(ls_node_stat *st, double max_abs, double max_rel, bool pass, int64_t run);

/* The position of the first node after (dir > 0) or before (dir < 0) position `from`, in graph
 * order, whose values differ from the reference's; from = -1 with dir > 0 gives the first one.
 * -1 when there is none. */
int32_t ls_node_stats_divergence(const ls_node_stats *s, int64_t from, int dir);
/* How many nodes were compared, and how many of them differ. */
uint32_t ls_node_stats_differing(const ls_node_stats *s, uint32_t *compared);

#endif
