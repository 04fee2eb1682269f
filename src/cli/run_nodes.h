/* lowerscope run --nodes (run_nodes.c): what the run measured node by node — the UI's run overlay
 * (time, the range of the values with NaN and Inf counts, the difference from the loaded
 * program's value of the same node, the first node that differs) — from node_stats.h. */
#ifndef LS_RUN_NODES_H
#define LS_RUN_NODES_H

#include <stdbool.h>

#include "node_stats.h"

/* The verdict line ("node by node: 2 of 9 nodes differ from the loaded program's; the first:
 * `aten_cos_default` (max abs 1.04)"), then one line per node measured, in graph order. */
void run_nodes_print(const ls_node_stats *st, bool compared);
/* Appends `"nodes": {...}` (docs/cli.md, run --json). */
void run_nodes_json(const ls_node_stats *st, bool compared, ls_buf *js);

#endif
