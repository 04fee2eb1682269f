/* What to_backend's two files share (private to src/passes/): to_backend.c gathers the tags,
 * checks them, orders them as exir lowers them, lowers them (to_backend_module.c, one tag into
 * its lowered module) and rebuilds the top level around the delegate calls. */
#ifndef LS_PASSES_TO_BACKEND_H
#define LS_PASSES_TO_BACKEND_H

#include "namer.h"
#include "pass_util.h"
#include "passes.h"

typedef struct tagrun {
    const char *tag;
    const char *backend_id;
    LS_VEC(uint32_t) members; /* positions, graph order */
} tagrun;

typedef struct block {
    ls_node *get_attr, *call;
    ls_node **getitems;
    uint32_t n_getitems;
    uint32_t key;    /* where it goes: the position of the partition's last node */
    uint32_t *ext;   /* positions of the values it reads (in the step before) */
    uint32_t n_ext;
} block;

typedef struct lower {
    ls_program *q;
    ls_pass_ctx *ctx;
    uint32_t n;
    ls_sig sig;
    pu_users users;
    ls_namer *names;
    int32_t *tix;         /* per position: tag index or -1 */
    uint32_t *stamp;      /* per position scratch */
    int32_t *spec_ix;     /* per position: input spec of a placeholder, -1 none, -2 not looked up */
    uint32_t *ids, ids_cap;
    uint32_t *repl_id;    /* per position: the getitem standing for it now, 0 if none */
    const char **repl_name;
    bool *drop_output;    /* per output spec: a consumed buffer mutation */
    bool *drop_input;     /* per input spec */
    uint32_t *spec_next;  /* output specs naming the same node, chained */
    pu_map spec_first;    /* node name → first output spec index */
    int64_t debug_handle;
    uint32_t module_index;
    const char *getitem, *call_delegate; /* interned once */
    LS_VEC(ls_submodule) subs;
} lower;

static inline int32_t tb_pos_of(const lower *L, uint32_t id)
{
    return pu_pos(&L->users, id);
}

/* The input spec of the placeholder at pos, or NULL (looked up once per placeholder). */
const ls_input_spec *tb_spec_at(lower *L, uint32_t pos);
/* Tag t (its members tr) becomes a lowered submodule in L->subs; bk receives its get_attr,
 * call and getitems for the new top level (to_backend_module.c). */
int tb_lower_one(lower *L, uint32_t t, tagrun *tr, block *bk);

#endif
