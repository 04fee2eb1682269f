/* lowerscope graph FILE --around NODE (graph_around.c): the neighbourhood of one node, as the
 * UI's `x` screen draws it, from the core's neighbourhood.h. */
#ifndef LS_CLI_GRAPH_AROUND_H
#define LS_CLI_GRAPH_AROUND_H

#include <stdbool.h>

#include "pipeline_cli.h"

typedef enum { GRAPH_TEXT, GRAPH_DOT, GRAPH_JSON } graph_format;

/* Prints the neighbourhood of `node` (a name at the top level, SUB/NAME, or a name inside a
 * lowered module) at step s, depth levels each way; fold: at most 8 nodes a level. Returns an
 * exit code (2 with a message when there is no such node). */
int cli_graph_around(const cli_run *r, int s, const char *node, int depth, graph_format f, bool fold, bool ascii,
                     int width);

/* The program (top level or a lowered module's) holding `node` — a name at the top level,
 * SUB/NAME, or a name inside a lowered module — and the node in it (NULL: none). *sub: the
 * module's name, NULL at the top level. graph --around and node find nodes so. */
const ls_node *cli_find_node(const ls_program *top, const char *node, const ls_program **in, const char **sub);
/* The op as the UI's graph pane shows it ("[param]", "add.Tensor"); a node's value type is
 * ls_node_type_str (program.h). */
const char *cli_op_label(const ls_program *p, const ls_node *n);
/* A DOT string: quoted, with \ " escaped and lines joined by \n (graph --dot, --around --dot). */
void cli_dot_str(ls_buf *b, const char *s);

#endif
