/* The exported-program loader's state, shared by read_json.c (nodes and arguments) and
 * read_program.c (the program around them: signature, placeholders, outputs, extras). */
#ifndef LS_READ_JSON_H
#define LS_READ_JSON_H

#include "ops.h"
#include "ptrmap.h"
#include "read_internal.h"

typedef struct loader {
    const char *where; /* "FILE" or "ARCHIVE: MEMBER", the start of every message */
    ls_program *p;
    ls_error *err;
    int depth;          /* 0, or how deep inside lowered modules */
    ls_ptrmap values;   /* interned value name → node id */
    ls_ptrmap tvals;    /* interned value name → its TensorMeta (const cJSON *) */
    ls_ptrmap targets;  /* interned target → op pointer | dialect */
    ls_ptrmap tag_seen; /* delegation tags met so far */
    LS_VEC(const char *) tag_order;
    LS_VEC(ls_node *) unnamed; /* nodes named at the end (ls_loader_name_rest) */
    bool deferred_fail;        /* err was set inside a lookup that cannot return it */
    const ls_op *getitem_op;
    const char *getitem_target;
    const char *lowered_module_name;
} loader;

uint32_t ls_loader_lookup(loader *L, const char *name); /* node id, 0 if undefined */
int ls_loader_define(loader *L, ls_node *n);           /* fails on a duplicate name */
int ls_loader_read_arg(loader *L, const cJSON *a, ls_arg *out);
bool ls_loader_tmeta(loader *L, const char *name, ls_tmeta *m);
int ls_loader_read_nodes(loader *L, const cJSON *nodes);
void ls_loader_name_rest(loader *L);
const char *ls_arg_value_name(const cJSON *a);

#endif
