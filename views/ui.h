/* Internal to views/: the UI state, the view operations table, keys, colours and the derived
 * rows the views draw. The UI only reads the history; everything shown is computed from the
 * current step's program and report, lazily, O(n) per step change at most, and only the
 * visible rows are formatted and drawn. */
#ifndef LS_VIEWS_UI_H
#define LS_VIEWS_UI_H

#ifndef NCURSES_WIDECHAR
#define NCURSES_WIDECHAR 1
#endif
#include <curses.h>
#include <regex.h>
#include <stdbool.h>
#include <stdint.h>

#include "align.h"
#include "delegation.h"
#include "held_by.h"
#include "history.h"
#include "passes.h"
#include "ptrmap.h"
#include "regions.h"
#include "tui.h"

typedef struct ui ui;
typedef struct ui_compare_job ui_compare_job; /* view_compare.c */

typedef struct ui_rect {
    int y, x, h, w;
} ui_rect;

/* ---- colours (colors.c): semantic roles as data, tag palette by tag index */
#define UI_ROLES(X)                                                                                                  \
    X(NORMAL, "text")                                                                                                \
    X(HEADER, "header and status bars")                                                                              \
    X(TITLE, "pane titles")                                                                                          \
    X(TITLE_FOCUS, "title of the focused pane")                                                                      \
    X(CURSOR, "selected row")                                                                                        \
    X(DIM, "removed nodes, hints")                                                                                   \
    X(ADDED, "added mark")                                                                                           \
    X(CHANGED, "changed mark")                                                                                       \
    X(REMOVED, "removed mark")                                                                                       \
    X(ERROR, "errors")                                                                                               \
    X(WARN, "warnings")                                                                                              \
    X(OK, "verifier ok")                                                                                             \
    X(MATCH, "search matches")                                                                                       \
    X(KEY, "keys in help")                                                                                           \
    X(BORDER, "pane borders")

typedef enum ui_role {
#define X(id, help) UI_R_##id,
    UI_ROLES(X)
#undef X
        UI_R_COUNT
} ui_role;

typedef enum ui_color_mode { UI_COLORS_NONE = 0, UI_COLORS_8 = 8, UI_COLORS_256 = 256 } ui_color_mode;

void ui_colors_init(ui *u);                 /* after initscr/newterm */
attr_t ui_role_attr(const ui *u, ui_role r, short *pair);
attr_t ui_tag_attr(const ui *u, int tag, short *pair); /* tag < 0: the CPU (normal text) */
char ui_tag_letter(int tag);                 /* 'A'.. for tags, ' ' for the CPU */
int ui_tag_of_pair(const ui *u, short pair); /* tag index of a colour pair, -1 if none */

/* ---- keys (keys.c): one table of actions with their help, one table of bindings */
#define UI_ACTIONS(X)                                                                                                \
    X(DOWN, "Moving", "move down one row")                                                                           \
    X(UP, "Moving", "move up one row")                                                                               \
    X(HALF_DOWN, "Moving", "move down half a page")                                                                  \
    X(HALF_UP, "Moving", "move up half a page")                                                                      \
    X(PAGE_DOWN, "Moving", "move down a page")                                                                       \
    X(PAGE_UP, "Moving", "move up a page")                                                                           \
    X(FIRST, "Moving", "first row")                                                                                  \
    X(LAST, "Moving", "last row")                                                                                    \
    X(NEXT_PANE, "Moving", "focus the next pane")                                                                    \
    X(PANE_1, "Moving", "focus the partitions pane")                                                                 \
    X(PANE_2, "Moving", "focus the passes pane")                                                                     \
    X(PANE_3, "Moving", "focus the graph pane")                                                                      \
    X(PANE_4, "Moving", "focus the node pane")                                                                       \
    X(PANE_5, "Moving", "focus the changes pane")                                                                    \
    X(PREV_PANE, "Moving", "focus the previous pane")                                                                \
    X(STEP_NEXT, "Steps", "next pass step")                                                                         \
    X(STEP_PREV, "Steps", "previous pass step")                                                                     \
    X(STEP_FIRST, "Steps", "first step (load)")                                                                      \
    X(STEP_LAST, "Steps", "last step")                                                                               \
    X(SCROLL_LEFT, "Moving", "scroll the pane left (long names): graph, node pane, screens")                        \
    X(SCROLL_RIGHT, "Moving", "scroll the pane right (long names): graph, node pane, screens")                       \
    X(ENTER, "Graph", "open: a delegate call's graph, a change's node, an argument or user")                         \
    X(BACK, "Graph", "leave a delegate's graph")                                                                     \
    X(PRODUCER, "Graph", "go to the producer of an argument (again: the next argument)")                             \
    X(USERS, "Graph", "go to a user of the node (again: the next user)")                                            \
    X(DIFF, "Graph", "diff marks on/off (+ added, ~ changed, - removed)")                                            \
    X(OVERLAY, "Graph", "the run's columns on/off: time, range, NaN/Inf, difference from the reference")          \
    X(SORT, "Graph", "sort the graph by the next column: time, difference, size, graph order")                    \
    X(SORT_REVERSE, "Graph", "reverse the sort")                                                                     \
    X(AROUND, "Graph", "the node's neighbourhood: producers above, users below, two levels")                        \
    X(NEXT_DIFF, "Graph", "next difference (compare) or node that differs from the reference (after r)")          \
    X(PREV_DIFF, "Graph", "previous difference, or differing node")                                                 \
    X(SEARCH, "Search and filter", "incremental search in the focused pane (regex)")                                \
    X(SEARCH_NEXT, "Search and filter", "next match (3/17; a notice when it wraps)")                                 \
    X(SEARCH_PREV, "Search and filter", "previous match")                                                            \
    X(FILTER, "Search and filter", "filter by tag or op (empty: no filter)")                                         \
    X(CANCEL, "Search and filter", "clear search and filter; close a screen")                                        \
    X(TABLE, "Screens", "delegation table (ops per tag, with %)")                                                    \
    X(PARTGRAPH, "Screens", "partition graph: delegates and CPU islands as boxes, the tensors between them")         \
    X(COMPARE, "Screens", "compare this step with another step or file, side by side (asks which)")              \
    X(RUN, "Screens", "run this step and the loaded program side by side")                                         \
    X(HELP, "Screens", "this help")                                                                                  \
    X(EXPORT, "Screens", "export the program at this step (asks for a path)")                                        \
    X(METHOD, "Screens", "next method of a .pte that runs (:method NAME opens any)")                                  \
    X(COMMAND, "Screens", "command line (:step N, :goto NAME, :q ...)")                                              \
    X(REDRAW, "Screens", "redraw the screen")                                                                        \
    X(QUIT, "Screens", "quit (in a screen: back to the main screen)")

typedef enum ui_action {
    UI_A_NONE = 0,
#define X(id, group, help) UI_A_##id,
    UI_ACTIONS(X)
#undef X
        UI_A_COUNT
} ui_action;

/* Key codes: characters as themselves, curses function keys offset by UI_KEY_FN, mouse events
 * as UI_KEY_MOUSE with the event in ui.mouse. */
#define UI_KEY_FN 0x200000
#define UI_KEY_MOUSE (UI_KEY_FN + KEY_MOUSE)
#define UI_KEY_RESIZE (UI_KEY_FN + KEY_RESIZE)
#define UI_KEY_NONE (-1)
#define UI_KEY_TIMEOUT (-2) /* no key within the input timeout */
#define UI_KEY_CMD (-3)     /* a scripted :command */

typedef struct ui_binding {
    const char *keys; /* key names: "j", "<Down>", "gd", "<C-d>" */
    ui_action action;
} ui_binding;

const ui_binding *ui_bindings(uint32_t *n);
const char *ui_action_group(ui_action a);
const char *ui_action_help(ui_action a);
/* Parses one key at *s ("<Enter>", "<C-d>", "x"); advances *s. Returns UI_KEY_NONE when bad. */
int ui_key_parse(const char **s);
/* An escape sequence ncurses did not turn into a key (seq: the bytes after ESC): whether it is
 * complete (a CSI's final byte, SS3's one byte), and the key it is, or UI_KEY_NONE. */
bool ui_escape_complete(const char *seq, size_t n);
int ui_escape_key(const char *seq, size_t n);
/* Feeds one key; returns the action to run (UI_A_NONE while a sequence is pending). */
ui_action ui_keys_feed(ui *u, int key);
/* The pending prefix alone ("g" with no second key): its own action or NONE. */
ui_action ui_keys_flush(ui *u);

/* ---- derived data (rows.c: once per step and scope; model.c: what the views ask) */
enum { UI_MARK_NONE, UI_MARK_ADDED, UI_MARK_CHANGED, UI_MARK_REMOVED };

typedef struct ui_row {
    const ls_node *node;
    uint8_t mark;
} ui_row;

typedef struct ui_part {
    const char *name;    /* "CPU", a tag, or a lowered submodule */
    const char *tag;     /* tag to filter by (NULL: the CPU) */
    const char *backend; /* backend id or NULL */
    const char *sub;     /* lowered submodule name (Enter opens it) or NULL */
    int color;           /* tag index, -1 for the CPU */
    uint32_t nodes, consts, states;
    uint64_t const_bytes;
    bool opaque;         /* a lowered delegate whose blob lowerscope cannot read */
    uint64_t blob_bytes; /* its blob */
} ui_part;

/* The history's tags in order of first appearance: the index is the tag's colour. */
typedef struct ui_tagtab {
    const char **tags;
    const char **backends;
    uint32_t n, cap;
    ls_ptrmap ix; /* tag → index */
} ui_tagtab;

/* What deriving rows needs beside the history: the tag table so far and a cache of the tag
 * each lowered module came from. The pipeline's thread has one, the UI's thread its own. */
typedef struct ui_derive {
    ui_tagtab tags;
    ls_ptrmap sub_tags; /* a lowered module's program → its tag */
} ui_derive;

/* The rows of one step in one scope. Row r is position r of prog when row is NULL (the step
 * removed nothing); else row[r] < prog->n_nodes is a position and the rest index removed. */
/* Rows grouped by a key (an interned tag, an op text), for the filters. */
typedef struct ui_row_groups {
    ls_ptrmap group;   /* key → its group */
    const void **keys; /* group → key */
    uint32_t n, cap_keys;
    uint32_t *start, *rows; /* group g's rows: rows[start[g] .. start[g + 1]) */
} ui_row_groups;

typedef struct ui_step_rows {
    const ls_program *prog; /* the program in scope at this step (NULL: the scope is gone) */
    const ls_program *prev; /* the same program at the step before (for removed nodes) */
    uint32_t n_rows;
    uint32_t *row, *row_of_pos;
    uint8_t *mark_of_pos; /* UI_MARK_* of each position */
    const ls_node **removed;
    uint32_t *removed_ids; /* (id, row) pairs sorted by id */
    uint32_t n_removed, n_added, n_changed;
    /* at the top level, the step's changes inside lowered modules, which the CLI's and the
     * timeline's counts include: the graph's title adds them, so its count is theirs */
    uint32_t inside_added, inside_changed, inside_removed;
    ui_part *parts;
    uint32_t n_parts, cap_parts;
    ui_tagtab tag_log; /* what this step added to the tag table (tags and arrays only) */
    int name_w, op_w;  /* the widest name and op text of the rows */
    int type_w;        /* the widest value type ("float32[1, 3, 16, 16]"), up to 24 */
    int part_name_w, part_backend_w, part_details_w; /* the widest of the parts' (partitions pane) */
    /* at the top level: the step's delegation table (the d screen) and the positions of the
     * nodes on the CPU, in graph order */
    bool has_table;
    ls_deleg_table table;
    uint32_t *cpu_pos, n_cpu;
    ls_deleg_cpu_groups cpu_groups; /* the CPU list by reason */
    ls_regions regions;             /* the partition graph's regions (the g screen) */
    ls_region_boxes boxes;          /* and its boxes, folded, drawn with box-drawing characters */
    ls_box_layout layout;           /* their layout: the g screen draws the rows it shows, at any
                                     * width, so opening it is not O(regions) */
    uint32_t n_islands, n_delegates; /* its CPU islands and delegates (tags too): the g screen's title */
    /* at the top level: who holds each constant of the step's programs (held_by.h, the node
     * pane's "held by") */
    ls_held_index held;
    /* the step's verifier findings by the node they name: first finding + 1, chained by next */
    ls_ptrmap finding_of_node;
    uint32_t *finding_next;
    /* the rows by what a filter asks (row_index.c), each group's rows in row order: by tag (a
     * node's own, or the tag of the module a delegate call runs; the CPU's rows under
     * ui_cpu_rows_key) and by op text (ui_node_op) */
    ui_row_groups by_tag, by_op;
} ui_step_rows;


int ui_tagtab_index(const ui_tagtab *t, const char *tag);
void ui_tagtab_add(ui_tagtab *t, const char *tag, const char *backend);
void ui_tagtab_free(ui_tagtab *t);
void ui_derive_free(ui_derive *d);
void ui_derive_tags(ui_derive *d, const ls_program *p, ui_tagtab *log);
const char *ui_derive_sub_tag(ui_derive *d, const ls_program *p, const char *sub);
/* The rows of step `step` for prog (the scope's program there) and prev (the step before);
 * scope names the lowered module (NULL: top level); cpu is the first part (the CPU's, or the
 * module's own inside one). Call ui_derive_tags for the step first. */
ui_step_rows *ui_rows_build(ui_derive *d, const ls_history *h, uint32_t step, const ls_program *prog,
                            const ls_program *prev, const char *scope, const ui_part *cpu);
void ui_rows_free(ui_step_rows *sr);
/* The node pane's findings of a top-level step, by the node they name (once the step is verified). */
void ui_rows_add_findings(ui_step_rows *sr, const ls_verify_result *v);
ui_row ui_rows_at(const ui_step_rows *sr, uint32_t r);
int64_t ui_rows_find(const ui_step_rows *sr, uint32_t id); /* the row of a node id, -1 */
bool ui_rows_is_removed(const ui_step_rows *sr, uint32_t r);
int ui_cmp_u32(const void *a, const void *b); /* qsort: uint32_t ascending */
/* row_index.c: a step's rows by tag and by op, and its column widths (ui_rows_build calls it) */
extern const char ui_cpu_rows_key[];
void ui_rows_index(ui_derive *d, ui_step_rows *sr);
/* group `key`'s rows in row order; returns how many */
uint32_t ui_row_groups_of(const ui_row_groups *g, const void *key, const uint32_t **rows);
void ui_row_groups_free(ui_row_groups *g);
/* whether a row of op text `op` passes a filter by op `value` ("add"; "param" for [param]) */
bool ui_op_matches(const char *op, const char *value);

/* UI_FILTER_IDS: the nodes of a region of the partition graph, by id (ids are stable across
 * steps, so the filter still means those nodes at other steps). */
typedef enum ui_filter_kind { UI_FILTER_NONE, UI_FILTER_TAG, UI_FILTER_CPU, UI_FILTER_OP, UI_FILTER_IDS } ui_filter_kind;

typedef enum ui_sort { UI_SORT_GRAPH, UI_SORT_TIME, UI_SORT_DIFF, UI_SORT_SIZE, UI_SORT_COUNT } ui_sort;

/* What the graph pane shows now: the rows of the step and scope, through the filter. */
typedef struct ui_model {
    bool valid, vis_valid;
    uint32_t step;
    const ls_program *prog; /* the program in scope at this step (NULL: the scope is gone) */
    const ls_program *prev; /* the same program at the step before (for removed nodes) */
    const ui_step_rows *sr; /* the step cache's at the top level, own inside a lowered module */
    ui_step_rows *own;
    /* visible rows: vis[v] is a row; without vis, v is the row itself (no filter, marks on) or
     * a position in prog (no filter, marks off: vis_pos) */
    uint32_t *vis;
    uint32_t n_vis;
    bool vis_pos;
    uint32_t *vis_of_row; /* with vis sorted: row -> its index in vis, UINT32_MAX when filtered out
                           * (in row order, ui_model_find bisects vis) */
    const ui_part *parts;
    uint32_t n_parts;
    uint32_t n_added, n_changed, n_removed;
    uint32_t inside_added, inside_changed, inside_removed; /* ui_step_rows' */
} ui_model;

void ui_model_free(ui_model *m);
void ui_model_invalidate(ui *u);     /* step or scope changed */
void ui_model_refilter(ui *u);       /* filter or diff marks changed */
void ui_model_ensure(ui *u);
ui_row ui_model_row(ui *u, uint32_t v);    /* visible row v (< m.n_vis) */
int32_t ui_model_find(ui *u, uint32_t id); /* vis index of a node id, -1 */
const ls_program *ui_scope_program(const ui *u, uint32_t step);
const ls_program *ui_scope_program_parent(const ui *u); /* the program holding the scope */
const ls_program *ui_row_program(const ui *u, const ui_row *r); /* prog, or prev for removed rows */
void ui_tags_init(ui *u);
void ui_tags_free(ui *u);
void ui_step_rows_free_all(ui *u); /* the step cache, when this thread made it */
const ui_step_rows *ui_top_rows(ui *u, uint32_t step); /* a step's rows at the top level */
int ui_tag_index(const ui *u, const char *tag); /* -1 for NULL or unknown */
int ui_node_color(const ui *u, const ls_program *p, const ls_node *n);
const char *ui_node_op(const ls_program *p, const ls_node *n); /* short op, "[param]", ... */
const char *ui_node_op_spec(const ls_node *n, const ls_input_spec *spec); /* same, spec known */
const char *ui_sub_tag(const ui *u, const ls_program *p, const char *sub);
void ui_fmt_args(const ls_program *p, const ls_node *n, ls_buf *b);
void ui_fmt_bytes(uint64_t n, char *buf, size_t cap);
const ls_input_spec *ui_input_spec(const ls_program *p, const ls_node *n);
const char *ui_delegate_sub(const ls_program *p, const ls_node *n); /* submodule a call_delegate calls */

/* ---- views (view_*.c): each one table of operations, like tig's view_ops */
typedef struct ui_view_ops {
    const char *name;
    /* a key's action, before the generic one; true: handled (NULL: none of its own) */
    bool (*action)(ui *u, ui_action a);
    void (*title)(ui *u, ls_buf *b);
    uint32_t (*count)(ui *u);
    /* draws row `row` at screen line y, columns [x, x+w); cursor: the row is selected */
    void (*draw_row)(ui *u, uint32_t row, int y, int x, int w, bool cursor);
    void (*activate)(ui *u, uint32_t row); /* Enter */
    void (*moved)(ui *u, uint32_t row);    /* the selection moved onto row */
    bool (*match)(ui *u, uint32_t row, const regex_t *re); /* search; NULL: not searchable */
    /* n/N on a row holding several things (a row of boxes): the next/previous match in the
     * selected row first; true: it moved there */
    bool (*match_next)(ui *u, uint32_t row, bool backward);
    /* the node the selection is on, for x (the neighbourhood); NULL op: the rows are not nodes.
     * *top_level: the node is of the step's top-level program (else of the scope the graph
     * pane shows) */
    const ls_node *(*node)(ui *u, bool *top_level);
} ui_view_ops;

extern const ui_view_ops ui_graph_ops, ui_partitions_ops, ui_node_ops, ui_timeline_ops, ui_changes_ops,
    ui_table_ops, ui_run_ops, ui_help_ops, ui_export_ops, ui_partgraph_ops, ui_around_ops, ui_compare_ops;

typedef enum ui_pane_id {
    UI_P_PARTITIONS,
    UI_P_TIMELINE,
    UI_P_GRAPH,
    UI_P_NODE,
    UI_P_CHANGES,
    UI_P_COUNT,
    UI_P_SCREEN = UI_P_COUNT, /* the full-screen list of the table, run and help screens */
    UI_P_ALL
} ui_pane_id;

typedef struct ui_pane {
    const ui_view_ops *ops;
    uint32_t sel, top;
    uint32_t left; /* columns scrolled off to the left (< and >) */
    ui_rect r; /* title line + rows */
} ui_pane;

typedef enum ui_screen {
    UI_S_MAIN,
    UI_S_TABLE,
    UI_S_RUN,
    UI_S_HELP,
    UI_S_EXPORT,
    UI_S_PARTGRAPH,
    UI_S_AROUND,
    UI_S_COMPARE
} ui_screen;

/* ---- boxes.c: a drawing of boxes (regions.h) as a scrollable screen with one box selected;
 * the partition graph and the neighbourhood screens are two of them. The drawing is its
 * layout (ls_box_layout: the step's, or made for the screen); a row of boxes is drawn when a
 * line of it is first shown or searched, so opening and each key cost the rows on screen. */
typedef struct ui_boxview {
    bool valid;
    const ls_box_layout *L;  /* the step's (rows.c) or &own */
    ls_box_layout own;
    ls_box *own_boxes;       /* what own borrows, ours (the neighbourhood's); NULL when L is the step's */
    ls_box_edge *own_edges;
    int box_w;
    bool ascii;
    ls_ptrmap drawn;         /* rank + 1 → its lines (char **), drawn when first needed */
    uint32_t width;          /* the widest line, once < or > needed it */
    bool width_known;
    int32_t *color;          /* per box: tag index, -1 none, -2 dimmed (a folded box); or NULL: */
    int32_t (*color_of)(ui *u, uint32_t box); /* the same, asked for the boxes drawn */
    uint32_t sel;            /* the selected box */
} ui_boxview;
/* Borrows L (the step's); takes boxes and edges, then L is made from them (the neighbourhood). */
void ui_boxview_set_layout(ui_boxview *v, const ls_box_layout *L, int box_w, bool ascii);
void ui_boxview_set_boxes(ui_boxview *v, ls_box *boxes, uint32_t n, ls_box_edge *edges, uint32_t n_edges, int box_w,
                          bool ascii);
uint32_t ui_boxview_lines(const ui_boxview *v);
uint32_t ui_boxview_boxes(const ui_boxview *v);
/* The partition graph's box width when the terminal has no room for wider boxes. */
#define UI_PG_BOX_W 30
void ui_boxview_free(ui_boxview *v);
void ui_boxview_draw_row(ui *u, ui_boxview *v, const ui_pane *p, uint32_t row, int y, int x, int w);
void ui_boxview_select(ui *u, ui_boxview *v, ui_pane *p, uint32_t box); /* scrolls it into view */
/* j/k, pages, first/last between boxes (in reading order), < and > across; true: handled. */
bool ui_boxview_move(ui *u, ui_boxview *v, ui_pane *p, ui_action a);
void ui_boxview_moved(ui *u, ui_boxview *v, uint32_t row);         /* a search landed on row */
bool ui_boxview_match_next(ui *u, ui_boxview *v, uint32_t row, bool backward); /* n/N: another box of row */
bool ui_boxview_match(ui *u, ui_boxview *v, uint32_t row); /* the search matches row */
extern uint64_t ui_boxview_rows_drawn; /* rows of boxes drawn so far (tests: only those shown) */

/* One line of a text view (node pane, table, run, help): text, role or tag colour, a jump. */
typedef struct ui_line {
    char *text;
    int16_t role;   /* ui_role */
    int16_t color;  /* tag index, or -1 */
    int16_t indent; /* where the coloured part of the text starts (keys in help) */
    const char *jump_prog; /* jump target: program (NULL top level) ... */
    const char *jump_node; /* ... and node name; NULL: no jump */
    bool has_jump;
    int32_t fold; /* a line Enter folds or unfolds: its group + 1; 0 none */
} ui_line;

typedef struct ui_lines {
    ui_line *v;
    uint32_t n, cap;
} ui_lines;
void ui_lines_clear(ui_lines *l);
ui_line *ui_lines_add(ui_lines *l, ui_role role, int color, const char *fmt, ...) LS_PRINTF(4, 5);
void ui_lines_add_wrapped(ui_lines *l, ui_role role, const char *text, int width);

#define UI_MAX_DEPTH 8

typedef struct ui_script ui_script;

/* A search scanning the rows of a pane, a slice at a time (prompt.c). */
typedef struct ui_search_job {
    bool pending, backward, incremental, next;
    struct ui_pane *pane;
    uint32_t from, i, n, origin;
    double started;
} ui_search_job;
/* Counting the rows that match, a slice at a time (prompt.c). */
typedef struct ui_search_count {
    bool pending;
    struct ui_pane *pane;
    uint32_t i, n;
    char wrapped[32]; /* " (wrapped to the top)" when the last n went round */
} ui_search_count;
typedef struct ui_live ui_live;
typedef struct ui_run_session ui_run_session;

struct ui {
    const ls_history *h;
    ls_history *owned_h; /* a history the UI made itself (:backend), freed with it */
    const char *file; /* basename of the loaded file */
    uint32_t step;
    /* scope: the program shown in the graph pane; depth 0 = top level */
    const char *scope[UI_MAX_DEPTH];
    uint32_t scope_sel[UI_MAX_DEPTH]; /* selected node id in the scope above, to come back */
    int depth;
    uint32_t sel_id; /* selected node (id in the scope program) */
    ui_model m;
    /* tags seen over the history, in order (dc.tags; index = colour), and the tag of each module */
    ui_derive dc;
    /* the rows of each step at the top level: made by the pipeline's thread as steps finish
     * (live), else by this thread on the first visit */
    ui_step_rows **step_rows;
    uint32_t n_step_rows;
    bool own_step_rows;
    /* a pipeline still running on its own thread (core_link.c), and the history as far as it
     * has gone (h points to it then) */
    ui_live *live;
    ls_history snap;
    bool follow;          /* show each step as it finishes, until the user picks a step */
    bool script_no_wait;
    double step_seen_at;  /* when the newest step appeared (the progress line's clock) */
    /* panes and screens */
    ui_pane panes[UI_P_ALL];
    ui_pane_id focus;
    ui_screen screen;
    bool diff_marks;
    ui_filter_kind filter;
    const char *filter_value; /* tag (interned) or op name; for UI_FILTER_IDS the region's name */
    uint32_t *filter_ids;     /* UI_FILTER_IDS: the node ids, ascending, once each */
    uint32_t filter_ids_n;
    /* search */
    char search[256];
    regex_t re;
    bool re_ok, search_active;
    ui_screen search_screen; /* the screen it was typed on: it searches there only */
    bool search_literal, search_icase; /* no special character: a substring search */
    ls_ptrmap search_ops;              /* texts many rows share (ops) → whether they match */
    ui_search_job sjob;                /* the scan under way */
    struct ui_completion *completion;  /* a Tab's scan of node names under way (complete.c) */
    /* the rows of the searched pane that match, counted once per search and step in slices
     * after the first match (prompt.c): "3/17", and n/N's place among them */
    uint32_t *matches, n_matches, matches_cap;
    const ui_view_ops *matches_ops;
    uint32_t matches_rows, matches_step;
    bool matches_valid;
    ui_search_count count;
    /* prompt (:, /, f; y: the answer to "overwrite?") */
    char prompt_kind; /* 0 when closed */
    char prompt[512];
    size_t prompt_len;
    uint32_t prompt_origin; /* selection when / was pressed */
    char prompt_hint[256];  /* beside the prompt: what Tab could complete, which pane / searches */
    /* the command line's history (complete.c), oldest first; history_at: the line shown, -1 none */
#define UI_HISTORY 64
    char *history[UI_HISTORY];
    uint32_t n_history;
    int32_t history_at;
    char prompt_typed[512]; /* what was typed before ↑ went into the history */
    /* keys */
    int pending[4];
    int n_pending;
    int refeed; /* a key to read again after a prefix resolved alone (UI_KEY_NONE: none) */
    ui_action last_action;
    uint32_t cycle_origin, cycle_index; /* gd / gu cycling */
    MEVENT mouse;
    /* status line message */
    char msg[512];
    bool msg_error;
    /* display */
    SCREEN *scr;
    FILE *scr_out, *scr_in;
    int rows, cols;
    bool too_small;
    ui_color_mode colors;
    bool no_color, headless, utf8, quit;
    short pair_base_tag;
    int left_w; /* width of the left column (0: single column) */
    /* text views' lines */
    ui_lines node_lines;
    uint32_t node_key_step;
    const ls_node *node_key_node; /* the node its lines are about (NULL: none selected), with its mark */
    uint8_t node_key_mark;
    const char *node_key_scope;
    int node_key_w;       /* the node pane's width its lines were made for (now/was wrap to it) */
    bool node_valid;
    ui_lines screen_lines; /* table, run, export */
    ui_lines help_lines;   /* help's own, so that the screen under it keeps its lines */
    /* the full screens a screen was opened over (help over compare, x over the partition graph),
     * the last on top, each with its pane: q goes back to them in turn */
    struct {
        ui_screen screen;
        ui_pane pane;
    } under[4];
    uint32_t n_under;
    uint32_t table_cpu_from, table_n_cpu; /* the table screen's CPU list: rows after screen_lines */
    int table_name_w, table_op_w;          /* its name and op columns */
    ui_script *script;
    char run_args[512]; /* .npy files for the run screen */
    ui_run_session *run; /* the run screen's runners, carried from one run to the next */
    char export_path[512]; /* the file an export asks to overwrite */
    /* the partition graph screen (view_partgraph.c) and the neighbourhood (view_around.c) */
    ui_boxview pg, around;
    ls_regions pg_regions;
    bool pg_boxes_shared; /* pg_boxes are the step's (rows.c) */
    ls_region_boxes pg_boxes;
    ls_box_layout pg_layout; /* pg_boxes' layout when they are not the step's (unfolded) */
    uint32_t pg_islands, pg_delegates; /* the step's, for the title */
    const ls_program *pg_text_w_prog;  /* the step whose boxes' widest text pg_text_w is */
    bool pg_text_w_unfold;
    int pg_text_w;
    uint32_t pg_step;
    int pg_cols;          /* the terminal width the boxes were drawn for */
    bool pg_unfold;       /* Enter on a folded box: draw every region */
    uint32_t around_id;   /* the node in the middle of the neighbourhood */
    const char *around_scope;
    uint32_t around_step;
    /* the run overlay (overlay.c) */
    bool overlay;      /* the graph pane shows the run's columns (on after a run) */
    struct ui_etdump *etdump; /* --etdump: what a device measured, over one step (view_etdump.c) */
    ui_sort sort;      /* the graph pane's order */
    bool sort_reverse; /* smallest first */
    uint32_t *around_ids; /* per box: the node id it shows (0: a "+N more" box) */
    /* the delegation table's CPU groups (view_table.c) */
    uint32_t table_groups_from; /* the row of the first group line */
    /* the compare screen (view_compare.c): this step on the left, another on the right */
    ls_history *cmp_h;     /* another file's or backend's history (owned); NULL: this history */
    uint32_t cmp_step;     /* the step on the right (of cmp_h, or of this history) */
    bool cmp_before;       /* the right side is the step before the left one, and follows it (`:compare`) */
    char cmp_label[256];   /* what the right side is: "step 3 partition", "sc.pte" */
    char cmp_other[208];   /* another file's name or another lowering's backend */
    ls_align_by cmp_by;
    ls_alignment cmp;
    uint32_t cmp_left;     /* the step the alignment was made for */
    ls_ptrmap cmp_sub_a, cmp_sub_b; /* within a lineage: node id -> the lowered module holding it on that side */
    uint32_t cmp_lineage_ids;       /* ids below it are the same node on both sides (0: two files) */
    bool cmp_valid;
    ui_compare_job *cmp_job;        /* the alignment being made on a thread (view_compare.c) */
    uint32_t cmp_want_id;           /* the node the selection goes to when it is ready (0: the first row) */
    bool cmp_want_sel;
};

/* ---- ui.c: screen, layout, loop; actions.c: what keys and the mouse do */
void ui_draw(ui *u);
void ui_draw_header(ui *u); /* frame.c: the first line */
int ui_part_details(const ui_part *pt, char *buf, size_t cap); /* view_partitions.c: "2n 1c 16B" */
void ui_draw_status(ui *u); /* frame.c: the last line */
void ui_layout(ui *u);
void ui_reselect(ui *u); /* graph cursor back on the selected node after the rows changed */
ui_pane *ui_focused_pane(ui *u);
int ui_pane_rows(const ui_pane *p);
void ui_on_mouse(ui *u);
void ui_resize(ui *u, int rows, int cols); /* the one place a size change is handled */
void ui_message(ui *u, bool error, const char *fmt, ...) LS_PRINTF(3, 4);
/* how long a read waits for a key: a pending prefix (g) acts alone after it */
#define UI_INPUT_TIMEOUT_MS 400
void ui_run_action(ui *u, ui_action a);
void ui_set_step(ui *u, uint32_t step);
bool ui_jump(ui *u, const char *prog, const char *node); /* to a node by name, any scope */
bool ui_enter_sub(ui *u, const char *sub);
void ui_leave_sub(ui *u);
void ui_select_id(ui *u, uint32_t id);
void ui_open_screen(ui *u, ui_screen s);
/* Leaves the full screen: back to the screen it was opened over, else the main one. */
void ui_close_screen(ui *u);
/* The full screen s over the one showing (which q then returns to): ui_open_screen, without
 * its toggle. The neighbourhood (UI_S_AROUND) centres on u->around_id. */
void ui_push_screen(ui *u, ui_screen s);
/* Forgets s among the screens to go back to (its state is gone: a comparison that failed). */
void ui_forget_screen(ui *u, ui_screen s);
void ui_replace_history(ui *u, ls_history *h); /* takes ownership */
void ui_open_method(ui *u, const char *method); /* another method of the .pte (:method, M) */
void ui_restore(void); /* leaves curses mode; safe to call twice, from atexit and signals */
/* A live history: takes the steps finished since the last call (true if anything changed). */
bool ui_sync(ui *u);
bool ui_running(const ui *u); /* the pipeline is still making steps */
void ui_wait_pipeline(ui *u);
void ui_progress_text(const ui *u, char *buf, size_t cap);
bool ui_refuse_while_running(ui *u, const char *what); /* true (and a message) while running */
const ls_node *ui_selected_node(ui *u, const ls_program **p, uint8_t *mark);
ui_pane *ui_pane_of(ui *u, ui_pane_id id);
void ui_pane_clamp(ui *u, ui_pane *p);
void ui_pane_select(ui *u, ui_pane *p, uint32_t row);

/* drawing helpers: clip to w display columns; return columns used */
int ui_put(ui *u, int y, int x, int w, attr_t attr, short pair, const char *utf8);
/* The same, a text too long shortened so what tells it apart stays: keep_end keeps its end
 * ("…copy_tensor_12"); else an op drops its namespace ("quantized_add" for
 * "cortex_m::quantized_add") before losing its end to an ellipsis. */
int ui_put_fit(ui *u, int y, int x, int w, attr_t attr, short pair, const char *utf8, bool keep_end);
/* ui_put, a text too long ending in … where it is cut (so a cut value does not pass for whole). */
int ui_put_cut(ui *u, int y, int x, int w, attr_t attr, short pair, const char *utf8);
/* s over whole rows, wrapped at spaces (the lines after the first indented by two), its last
 * line on row y_last and the others on the rows above; past max_lines rows the last one shown
 * ends in an ellipsis. Returns the rows used; *last_width: the columns the last line takes. */
int ui_put_wrapped(ui *u, int y_last, int max_lines, attr_t attr, short pair, const char *utf8, int *last_width);
void ui_fill(ui *u, int y, int x, int w, attr_t attr, short pair);
/* A row's diff mark at x and its tag's swatch at x + 1 (the tag's letter without colours). */
void ui_put_mark_swatch(ui *u, int y, int x, char mark, ui_role mark_role, int tag, attr_t a, short pair, bool cursor);
int ui_text_width(const char *utf8);

/* ---- prompt.c: the command line, search and filter input */
void ui_prompt_open(ui *u, char kind);
void ui_prompt_key(ui *u, int key);
int ui_command(ui *u, const char *line); /* runs one :command; 1 = quit */
void ui_search_set(ui *u, const char *pattern, uint32_t origin, bool incremental);
void ui_search_next(ui *u, bool backward);
bool ui_search_matches(const ui *u, const char *text); /* the pattern (text or regex) matches */
bool ui_search_matches_shared(ui *u, const char *text); /* the same, cached by the text's address */
bool ui_search_step(ui *u, double seconds); /* goes on with the scan; true while unfinished */
bool ui_search_pending(const ui *u);
void ui_search_cancel(ui *u);
/* The search ends, as Esc ends it: entering or leaving a lowered module is another graph, where
 * its pattern would show in the title and n would look for it. */
void ui_search_forget(ui *u);
void ui_filter_set(ui *u, const char *value);
/* complete.c: the command line's history (↑/↓) and Tab completion */
void ui_history_add(ui *u, const char *line);
void ui_history_free(ui *u);
void ui_prompt_history(ui *u, int dir);
void ui_prompt_complete(ui *u);
/* A node-name completion goes on between keys, a slice at a time: one slice of `seconds`; true
 * while unfinished. Any key at the prompt cancels it. */
bool ui_complete_step(ui *u, double seconds);
bool ui_complete_pending(const ui *u);
void ui_complete_cancel(ui *u);
/* The commands, as data, for help. */
typedef struct ui_cmd_info {
    const char *usage, *help;
} ui_cmd_info;
const ui_cmd_info *ui_commands(uint32_t *n);

/* ---- script.c: scripted mode */
int ui_script_open(ui *u, const char *path, ls_error *err);
void ui_script_free(ui *u);
/* Next scripted event: a key (>= 0), or UI_KEY_CMD with the :command in *cmd; UI_KEY_NONE at the end. */
int ui_script_next(ui *u, char *cmd, size_t cap);
/* With LOWERSCOPE_KEY_TIMES=FILE: the last event took `seconds` (acting and drawing); a note
 * of something else timed (the first screen). */
void ui_script_timed(ui *u, double seconds, double cpu_seconds);
void ui_script_note(ui *u, const char *label, double seconds, double cpu_seconds);
double ui_thread_cpu(void); /* CPU seconds of the calling thread */
int ui_save_display(ui *u, const char *path, ls_error *err);

/* ---- text screens */
void ui_node_lines_build(ui *u);
extern uint64_t ui_node_lines_built; /* how many times the node pane's lines were made (tests) */
void ui_table_build(ui *u);
void ui_run_build(ui *u); /* a fresh run of the program at this step (and of the loaded program beside it) */
void ui_run_again(ui *u); /* one more run, state carrying over (a fresh one for another step) */
void ui_run_session_free(ui_run_session *s);
/* A bundled program's test cases, run (view_run_cases.c); false when the file is not one. */
bool ui_run_cases_lines(ui *u, ui_lines *out);
struct ls_node_stats;
struct ls_node_stat;
/* What the run of this step measured node by node (view_run.c), NULL when it was not run. */
const struct ls_node_stats *ui_run_stats(const ui *u);
/* Whether the run screen's program runs (r runs it again), or it cannot (the screen says why). */
bool ui_run_can_run(const ui *u);
/* overlay.c: the graph pane's run columns, sorting and divergence jumps */
const struct ls_node_stats *ui_overlay_stats(ui *u); /* NULL unless shown here */
const struct ls_node_stat *ui_stat_of(ui *u, const ls_node *n);
void ui_overlay_cells(ui *u, const struct ls_node_stat *st, const struct ls_node_stats *s, char *time, char *range,
                      char *diff, size_t cap);
void ui_sort_vis(ui *u, uint32_t *vis, uint32_t n); /* model.c's visible rows, in the sort's order */
void ui_sort_next(ui *u, bool reverse);
const char *ui_sort_name(ui_sort s);
bool ui_overlay_jump(ui *u, int dir); /* ] and [: the next / previous node that differs */
/* view_etdump.c: --etdump FILE placed on the step whose program it describes; its stats at that
 * step (the top level, or the open lowered module's), NULL elsewhere; the node pane's lines */
int ui_etdump_open(ui *u, const char *path, ls_error *err);
const struct ls_node_stats *ui_etdump_stats(ui *u);
uint32_t ui_etdump_step(const ui *u); /* the step it describes */
void ui_etdump_free(ui *u);
void ui_measured_lines(ui *u, const ls_program *p, const ls_node *n, ui_lines *l);
void ui_help_build(ui *u);
void ui_partgraph_build(ui *u); /* the partition graph of this step (view_partgraph.c) */
void ui_partgraph_free(ui *u);
void ui_around_build(ui *u);    /* the neighbourhood of the selected node (view_around.c) */
void ui_around_free(ui *u);
/* :compare STEP | FILE [STEP] | backend FILE: the compare screen (view_compare.c) */
int ui_compare_open(ui *u, const char *arg);
void ui_compare_free(ui *u);
bool ui_compare_pending(const ui *u); /* an alignment is being made */
bool ui_compare_loading(const ui *u); /* the other side is being loaded or lowered */
void ui_compare_poll(ui *u);          /* a finished one becomes the screen's */
bool ui_compare_unfinished(const ui *u); /* a job whose results the screen has not taken */
void ui_compare_finish(ui *u);        /* waits for it and takes them (scripts) */
void ui_compare_reaped(void);         /* waits for another file's history to be freed (at the end) */
/* The graph pane shows only these node ids (a region's); name says which in the title. */
void ui_filter_ids(ui *u, const char *name, const uint32_t *ids, uint32_t n);
/* The filter changed: the selection moves into it (the next visible node in graph order). */
void ui_filter_moved(ui *u);
/* view_export.c: writes the program at this step to path (export.h) and shows what was written;
 * an existing file is replaced only when force, else the prompt line asks first. */
void ui_export(ui *u, const char *path, bool force);
void ui_export_answer(ui *u, int key); /* a key typed at "PATH exists — overwrite? (y: yes; n, q or Esc: no)" */
void ui_lines_draw_row(ui *u, const ui_lines *l, uint32_t row, int y, int x, int w, bool cursor, uint32_t left);
bool ui_lines_match(const ui_lines *l, uint32_t row, const regex_t *re); /* search in a row of lines */
/* The operations of a full screen whose rows are u->screen_lines (table, run, help, export). */
uint32_t ui_screen_count(ui *u);
void ui_screen_draw_row(ui *u, uint32_t row, int y, int x, int w, bool cursor);
bool ui_screen_match(ui *u, uint32_t row, const regex_t *re);

/* ---- core_link.c: loading a file and running the lowering pipeline on it */
int ui_core_options(int *argc, char **argv, ls_error *err); /* consumes --pipeline, --backend */
/* Loads a file and runs its pipeline (a history made whole: the compare screen's other file, on
 * the compare job's thread, after ui_core_prepare on the UI's has set the options it reads). */
void ui_core_prepare(void);
int ui_core_open(const char *path, const bool *stop, ls_history **h, ls_error *err); /* stop: NULL, or set to give up */
/* Loads a file and starts its pipeline on a thread of its own: *h is live (ui_core_live). */
int ui_core_open_live(const char *path, ls_history **h, ls_error *err);
int ui_core_start(ls_program *p, const ls_pipeline_opts *opts, ls_history **h, ls_error *err);
void ui_core_free(ls_history *h);
void ui_core_done(void); /* frees the pipeline options */
double ui_core_loaded_at(void); /* ls_now() when the file had been read (0: none yet) */
/* The live pipeline behind a history ui_core_open gave (NULL: a history made whole). */
ui_live *ui_core_live(const ls_history *h);
const ls_history *ui_live_history(const ui_live *L); /* being filled: read it with ls_history_ready */
uint32_t ui_live_making(const ui_live *L); /* the step being made */
ui_step_rows **ui_live_rows(ui_live *L);   /* rows of the published steps */
const char *ui_live_error(const ui_live *L); /* the pipeline could not run at all */
/* The loaded program (step 0 of old) lowered again with one backend (a profile file or "bundled"). */
int ui_core_relower(const ls_history *old, const char *backend, const bool *stop, ls_history **out, ls_error *err);
/* The loaded program lowered again with the pipeline the UI was started with (:relower: a .pte
 * is otherwise step 0 alone). */
int ui_core_relower_all(const ls_history *old, ls_history **out, ls_error *err);
/* Method `method` of the .pte step 0 of old came from, as a new history (lowered again when old
 * was); the next method that runs after the current one (M), NULL when there is no other. */
int ui_core_method(const ls_history *old, const char *method, ls_history **out, ls_error *err);
const char *ui_core_next_method(const ls_history *h);
/* The methods of the .pte loaded (plan order; constant methods too), or 0 of another file. */
uint32_t ui_core_methods(const ls_history *h, const char *const **names);

#endif
