/* The regions of a program, as the partition graph draws them (`lowerscope graph`, the UI's
 * `g`): each lowered delegate, each tag not yet lowered, and each island of CPU nodes, plus the
 * user inputs and the outputs, in topological order, with the tensors that cross between them
 * (how many, how many bytes) and what each holds (constants, and the state a delegate keeps).
 *
 * A CPU island is a connected group of CPU compute nodes that sit between the same delegates:
 * a node's stage is the number of delegates on the longest path from the inputs to it, and CPU
 * nodes joined by an edge at the same stage are one island. So the CPU node that splits two
 * partitions is an island drawn between them, and the region graph has no cycle (a stage only
 * grows along an edge that leaves a delegate). getitem nodes go with the delegate they read,
 * get_attr with its delegate call; memory.alloc nodes and data placeholders are no region (a
 * constant is counted in each region that reads it). Built in O(n) with hashes. */
#ifndef LS_REGIONS_H
#define LS_REGIONS_H

#include <stdbool.h>
#include <stdint.h>

#include "common.h"
#include "history.h"
#include "program.h"

typedef enum ls_region_kind {
    LS_REGION_INPUTS,   /* the user inputs */
    LS_REGION_CPU,      /* an island of CPU compute nodes */
    LS_REGION_TAG,      /* the nodes of a delegation tag, before to_backend */
    LS_REGION_DELEGATE, /* a lowered module's call (its getitems and get_attr) */
    LS_REGION_OUTPUTS,  /* the output node */
} ls_region_kind;
const char *ls_region_kind_name(ls_region_kind k); /* "inputs", "cpu", "tag", "delegate", "outputs" */

typedef struct ls_region {
    uint8_t kind;        /* ls_region_kind */
    const char *name;    /* "inputs", "CPU 1", "tag1", "lowered_module_0", "outputs" (interned) */
    const char *tag;     /* the tag (a delegate: the tag it came from); NULL otherwise */
    const char *backend; /* backend id of a tag or delegate; NULL otherwise */
    const char *sub;     /* a delegate's lowered module; NULL otherwise */
    const char *ops;     /* "add ×3, mul ×3" (most first, three at most, then "+N more"); interned */
    uint32_t rank;       /* layer of the drawing: the longest path from a region with no input */
    uint32_t stage;      /* delegates on the longest path to it */
    uint32_t n_nodes;    /* compute nodes (a delegate's: inside its lowered module); inputs: tensors */
    uint32_t first;      /* position of its first node */
    uint32_t member0, n_members; /* its node positions: members[member0 .. member0 + n_members) */
    uint32_t consts, states;     /* constants it reads (a delegate: holds), buffers it mutates */
    uint64_t const_bytes, state_bytes;
} ls_region;

typedef struct ls_region_edge {
    uint32_t from, to;   /* region indexes */
    uint32_t tensors;    /* distinct values crossing */
    uint64_t bytes;      /* their size (a symbolic size counts its hint) */
} ls_region_edge;

typedef struct ls_regions {
    ls_region *v;        /* topological order */
    uint32_t n;
    ls_region_edge *edges; /* by destination, then source, in region order */
    uint32_t n_edges;
    uint32_t *members;   /* node positions grouped by region, graph order within each */
    int32_t *of_pos;     /* per node position: region index, -1 for none */
    uint32_t n_pos;
    uint32_t n_ranks;
    uint32_t cpu_nodes, delegated_nodes; /* compute nodes on the CPU, and in tags or delegates */
    uint64_t cpu_to_delegates, delegates_to_cpu; /* bytes crossing between the CPU and delegates */
} ls_regions;

void ls_regions_build(const ls_program *p, ls_regions *r);
void ls_regions_free(ls_regions *r);
/* The region index of a node id, -1 for none. */
int32_t ls_regions_of_node(const ls_regions *r, const ls_program *p, uint32_t id);
/* "1 tensor · 16 B", "3 tensors · 1.2 KiB" */
void ls_region_edge_label(const ls_region_edge *e, ls_buf *b);
/* Whether two regions draw the same (kind, backend, ops, nodes, constants, state): runs of
 * them fold. */
bool ls_region_similar(const ls_region *a, const ls_region *b);

/* ---- the drawing: boxes in layers, as text (shared by the CLI's --text and the UI) */

/* One box: up to four lines of text (the first is its title, drawn in the top border). */
#define LS_BOX_LINES 4
typedef struct ls_box {
    uint32_t rank;
    int32_t id;          /* the caller's (a region index, a node position); -1 for none */
    uint32_t fold;       /* > 1: this box stands for so many similar ones */
    uint32_t weight;     /* in its row, heavier boxes come first (the order given on ties) */
    const char *text[LS_BOX_LINES]; /* interned or borrowed; NULL: no line */
} ls_box;

/* What enters a box: one line each under the box above it, "▼ label ← from". */
typedef struct ls_box_edge {
    uint32_t from, to;   /* box indexes */
    const char *label;   /* borrowed */
} ls_box_edge;

/* Where a box landed in the drawing. */
typedef struct ls_box_place {
    uint32_t line, col;  /* its top-left corner (display columns) */
    uint32_t h, w;
} ls_box_place;

typedef struct ls_drawing {
    char **lines;        /* UTF-8 (or ASCII), no trailing newline */
    uint32_t n_lines;
    uint32_t width;      /* display columns of the widest line */
    ls_box_place *place; /* per box */
    uint32_t n_boxes;
} ls_drawing;

/* Lays the boxes out, one row of boxes per rank (boxes of a rank side by side, heaviest first,
 * else in the order given), each box box_w columns wide, and between rows one line per edge entering a box of
 * the row below (its label, and the source box's title when that is not the box right above).
 * ascii: | - + v instead of box-drawing characters. */
/* The box width that shows every line of the boxes whole (its cells as drawn, and the border
 * and padding), within lo..hi. */
int ls_boxes_fit_width(const ls_box *boxes, uint32_t n, int lo, int hi);
void ls_draw_boxes(const ls_box *boxes, uint32_t n, const ls_box_edge *edges, uint32_t n_edges, int box_w, bool ascii,
                   ls_drawing *d);
void ls_drawing_free(ls_drawing *d);

/* The same drawing a row at a time, for a screen that shows a few rows of a big one: the
 * layout apart from the boxes' width (rows by rank in drawing order, each row's first line and
 * band, the edges entering each box), made once in O(boxes + edges) with no text; then any box
 * is placed in O(1), and a row drawn, at any width. It borrows boxes and edges. */
typedef struct ls_box_layout {
    const ls_box *boxes;
    const ls_box_edge *edges;
    uint32_t n_boxes, n_edges, n_ranks, n_lines;
    uint32_t *rank_start;          /* row r: by_rank[rank_start[r] .. rank_start[r + 1]) */
    uint32_t *by_rank;             /* the boxes row by row, left to right: the reading order */
    uint32_t *order_of;            /* per box: its index in by_rank */
    uint32_t *in_start, *in_edges; /* edges entering box b: in_edges[in_start[b] .. in_start[b + 1]) */
    uint32_t *line0;               /* per rank: its first line (n_ranks + 1 of them) */
    uint32_t *band;                /* per rank: its lines above the boxes */
} ls_box_layout;
void ls_box_layout_build(const ls_box *boxes, uint32_t n, const ls_box_edge *edges, uint32_t n_edges, ls_box_layout *L);
void ls_box_layout_free(ls_box_layout *L);
ls_box_place ls_box_layout_place(const ls_box_layout *L, uint32_t box, int box_w);
uint32_t ls_box_layout_rank_of_line(const ls_box_layout *L, uint32_t line); /* line < n_lines */
uint32_t ls_box_layout_lines_of(const ls_box_layout *L, uint32_t rank);
/* Rank r's lines, as ls_draw_boxes draws them, into out[0 .. lines_of(r)) (malloc'd); *width
 * grows to the widest. */
void ls_box_layout_draw(const ls_box_layout *L, uint32_t rank, int box_w, bool ascii, char **out, uint32_t *width);
/* The drawing's width (its widest line) without drawing it: O(edges). */
uint32_t ls_box_layout_width(const ls_box_layout *L, int box_w);

/* The partition graph of a program as boxes (one per region, runs of similar regions folded
 * into one box saying how many) and their edges, ready for ls_draw_boxes. box_of_region maps
 * every region to its box (several regions to one folded box). Strings live in the interned
 * pool or in *store (free with ls_region_boxes_free). */
typedef struct ls_region_boxes {
    ls_box *boxes;
    uint32_t n;
    ls_box_edge *edges;
    uint32_t n_edges;
    uint32_t *box_of_region;
    uint32_t *region_of_box; /* the first region of each box */
    char **store;
    uint32_t n_store;
} ls_region_boxes;
void ls_region_boxes_build(const ls_regions *r, bool fold, bool ascii, ls_region_boxes *out);
void ls_region_boxes_free(ls_region_boxes *b);

/* The tags of a history in the order they first appear (steps, then each program's tags, its
 * nodes' tags and its lowered modules' tags): the order the UI colours them by, and the DOT
 * output too. *tags and *backends are malloc'd (free both). */
uint32_t ls_history_tags(const ls_history *h, const char ***tags, const char ***backends);
/* The UI's colour of tag index i (its 16-colour palette of xterm-256 colours) as "#rrggbb". */
extern const short ls_tag_palette256[16];
void ls_tag_rgb(int tag, char hex[8]);

#endif
