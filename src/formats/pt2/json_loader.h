/* The exported-program loader's state, shared by json_nodes.c (nodes and arguments) and
 * json_program.c (the program around them: signature, placeholders, outputs, extras). */
#ifndef LS_JSON_LOADER_H
#define LS_JSON_LOADER_H

#include "json_stream.h"
#include "ops.h"
#include "ptrmap.h"
#include "pt2_internal.h"

typedef struct loader {
    const char *where; /* "FILE" or "ARCHIVE: MEMBER", the start of every message */
    ls_program *p;
    ls_error *err;
    int depth;          /* 0, or how deep inside lowered modules */
    ls_strmap values;   /* value name → node id (keys: the interned node names) */
    ls_jstream *js;         /* a streamed load (json_stream.c): nodes and tensor_values come from the text */
    const cJSON *tv_all;    /* graph.tensor_values */
    const cJSON *tv_cursor; /* where the next value's entry probably is: writers list them in graph order */
    ls_strmap tvals;        /* value name → its TensorMeta (keys: the file's strings), built on the first miss */
    ls_ptrmap targets;  /* interned target → op pointer | dialect */
    ls_ptrmap tag_seen; /* delegation tags met so far */
    LS_VEC(const char *) tag_order;
    LS_VEC(ls_node *) unnamed; /* nodes named at the end (ls_loader_name_rest) */
    bool deferred_fail;        /* err was set inside a lookup that cannot return it */
    const char *lowered_module_name;
    const char *last_tag;
    struct {
        const char *s; /* interned */
        uint64_t hash;
        size_t len;
    } icache[512]; /* strings met recently (arg names, targets, metadata) */
} loader;

uint32_t ls_loader_lookup(loader *L, const char *name); /* node id, 0 if undefined */
/* Defines n's name (failing on a duplicate); *hash gets the name's hash for ls_loader_tmeta. */
int ls_loader_define(loader *L, ls_node *n, uint64_t *hash);
int ls_loader_read_arg(loader *L, const cJSON *a, ls_arg *out);
/* The TensorMeta tensor_values gives the value `name` (hash: ls_strmap_hash of it). False when
 * there is none, or when it is invalid: then L->deferred_fail is set with the message. */
bool ls_loader_tmeta(loader *L, const char *name, uint64_t hash, ls_tmeta *m);
/* ls_intern through a small cache of recent strings: most names and metadata repeat. */
const char *ls_loader_intern(loader *L, const char *s);
int ls_loader_read_nodes(loader *L, const cJSON *nodes);
int ls_loader_read_node(loader *L, const cJSON *sn, uint32_t idx);
/* json_stream.c: the same from L->js */
int ls_loader_read_nodes_stream(loader *L);
const cJSON *ls_loader_stream_tval(loader *L, const char *name);
void ls_loader_name_rest(loader *L);
const char *ls_arg_value_name(const cJSON *a);

#endif
