/* Private to src/formats/pt2/: reading an exported program's JSON a part at a time. The
 * document minus graph.nodes and graph.tensor_values is parsed as one cJSON tree (the skeleton:
 * a few megabytes for a program of a million nodes); the nodes are then parsed one element at
 * a time and each element's tree dropped once its node is made, and tensor_values' entries are
 * parsed when a value is looked up. So a load needs the text and the program, not a tree of the
 * whole document (6.5 times the text at a million nodes). json_scan.c checks the parts that are
 * not parsed as a whole as cJSON would; a text it refuses is parsed whole, for cJSON's message. */
#ifndef LS_JSON_STREAM_H
#define LS_JSON_STREAM_H

#include <stdbool.h>
#include <stddef.h>

#include "pt2_internal.h"
#include "ptrmap.h"

/* ---- json_scan.c: index past what starts at s[i], SIZE_MAX where cJSON would refuse it */
size_t ls_jscan_ws(const char *s, size_t len, size_t i);
size_t ls_jscan_string(const char *s, size_t len, size_t i);
/* a value (after whitespace) nested in `depth` containers */
size_t ls_jscan_value(const char *s, size_t len, size_t i, int depth);
/* the first member `key` of the object at s[i] (nested in `depth`): *at = where its value starts */
bool ls_jscan_member(const char *s, size_t len, size_t i, int depth, const char *key, size_t *at);

/* ---- json_stream.c */
typedef struct ls_jstream {
    const char *text;
    size_t len;
    size_t nodes_at, nodes_end; /* graph.nodes: its '[' and past its ']' */
    size_t tv_at, tv_end;       /* graph.tensor_values: its '{' and past its '}'; 0 when absent */
    size_t tv_next;             /* the entry after the last one read (torch writes them in graph order) */
    bool tv_indexed;
    ls_strmap tv_index; /* interned name → where its value starts, made on the first miss */
    /* The text is the loader's to give back (ls_load_json_consuming): the pages before given_to
     * are gone, and pos counts lines and columns up to an element boundary past them (for a
     * message about a later element). */
    bool give_back;
    size_t given_to;
    ls_json_pos pos;
} ls_jstream;

/* Finds the parts to stream in text; false when the document is not laid out for it (no
 * graph.nodes array, or something the scanner refuses): then parse it whole. */
bool ls_jstream_plan(ls_jstream *js, const char *text, size_t len);
/* The document with graph.nodes and graph.tensor_values emptied ("[]", "{}"): malloc'd, *n its length. */
char *ls_jstream_skeleton(const ls_jstream *js, size_t *n);
void ls_jstream_free(ls_jstream *js);

#endif
