/* Helpers shared by the passes: maps, private node copies, users and positions, report text. */
#include "pass_util.h"

#include <stdio.h>
#include <stdlib.h>
#include <string.h>

void pu_csr(uint32_t nv, const uint32_t *from, const uint32_t *to, uint32_t n_edges, uint32_t **off, uint32_t **adj)
{
    uint32_t *o = ls_calloc(nv + 1, sizeof *o);
    for (uint32_t e = 0; e < n_edges; e++) o[from[e] + 1]++;
    for (uint32_t v = 0; v < nv; v++) o[v + 1] += o[v];
    uint32_t *a = ls_malloc(sizeof *a * (n_edges ? n_edges : 1));
    uint32_t *fill = ls_malloc(sizeof *fill * (nv ? nv : 1));
    memcpy(fill, o, sizeof *fill * nv);
    for (uint32_t e = 0; e < n_edges; e++) a[fill[from[e]]++] = to[e];
    free(fill);
    *off = o;
    *adj = a;
}

/* ---- nodes */

ls_node *pu_edit(ls_program *p, uint32_t pos)
{
    ls_node *n = p->nodes[pos];
    if (n->refs > 1) {
        ls_node *c = ls_node_clone(n);
        ls_node_unref(n);
        p->nodes[pos] = c;
        n = c;
    }
    return n;
}


bool pu_is_op(const ls_node *n, ls_op_id id)
{
    return n && n->kind == LS_NODE_CALL && n->op && n->op->id == id;
}

typedef struct ids_ctx {
    uint32_t **ids;
    uint32_t *cap;
    uint32_t n;
} ids_ctx;

static void push_id(uint32_t id, void *vctx)
{
    ids_ctx *c = vctx;
    if (c->n == *c->cap) {
        *c->cap = *c->cap ? *c->cap * 2 : 16;
        *c->ids = ls_realloc(*c->ids, sizeof **c->ids * *c->cap);
    }
    (*c->ids)[c->n++] = id;
}

uint32_t pu_inputs(const ls_node *n, uint32_t **ids, uint32_t *cap)
{
    ids_ctx c = {ids, cap, 0};
    for (uint16_t a = 0; a < n->nargs; a++) ls_arg_each_node(&n->args[a], push_id, &c);
    return c.n;
}

/* Calls fn(ctx, id) for every node id a node reads (inline, no callback per argument). */
#define EACH_INPUT(NODE_, ID, BODY)                                                             \
    for (uint16_t a_ = 0; a_ < (NODE_)->nargs; a_++) {                                          \
        const ls_arg *arg_ = &(NODE_)->args[a_];                                                \
        if (arg_->kind == LS_ARG_NODE) {                                                       \
            uint32_t ID = arg_->v.node;                                                        \
            BODY                                                                               \
        } else if (arg_->kind == LS_ARG_NODES || arg_->kind == LS_ARG_OPT_NODES) {             \
            for (uint32_t k_ = 0; k_ < arg_->n; k_++) {                                        \
                uint32_t ID = arg_->v.nodes[k_];                                               \
                if (ID) BODY                                                                   \
            }                                                                                  \
        } else if (arg_->kind == LS_ARG_SYMINTS) {                                             \
            for (uint32_t k_ = 0; k_ < arg_->n; k_++)                                          \
                if (arg_->v.symints[k_].is_node) {                                             \
                    uint32_t ID = arg_->v.symints[k_].node;                                    \
                    BODY                                                                       \
                }                                                                              \
        }                                                                                      \
    }

/* Positions by id: a dense table sized by next_id (ids below it), else a map. Returns false
 * when a node's id is not below next_id (a program built by hand): the caller falls back to
 * the map. */
static bool dense_positions(pu_users *u, const ls_program *p)
{
    uint32_t n = p->n_nodes;
    if (p->next_id > 4u * n + 1024u) return false;
    u->id_cap = p->next_id + 1;
    u->at = ls_malloc(sizeof *u->at * u->id_cap);
    memset(u->at, 0xff, sizeof *u->at * u->id_cap);
    for (uint32_t i = 0; i < n; i++) {
        uint32_t id = p->nodes[i]->id;
        if (id >= u->id_cap) {
            free(u->at);
            u->at = NULL;
            u->id_cap = 0;
            return false;
        }
        u->at[id] = (int32_t)i;
    }
    return true;
}

static void sparse_positions(pu_users *u, const ls_program *p)
{
    uint32_t n = p->n_nodes;
    uint32_t max_id = 0;
    for (uint32_t i = 0; i < n; i++)
        if (p->nodes[i]->id > max_id) max_id = p->nodes[i]->id;
    if (max_id <= 4u * n + 1024u) {
        u->id_cap = max_id + 1;
        u->at = ls_malloc(sizeof *u->at * u->id_cap);
        memset(u->at, 0xff, sizeof *u->at * u->id_cap);
        for (uint32_t i = 0; i < n; i++) u->at[p->nodes[i]->id] = (int32_t)i;
        return;
    }
    for (uint32_t i = 0; i < n; i++)
        if (p->nodes[i]->id) pu_map_put(&u->sparse, (const void *)(uintptr_t)p->nodes[i]->id, i);
}

void pu_pos_take(pu_users *u, const ls_program *p)
{
    memset(u, 0, sizeof *u);
    u->p = p;
    if (!dense_positions(u, p)) sparse_positions(u, p);
}

void pu_users_take(pu_users *u, const ls_program *p)
{
    uint32_t n = p->n_nodes;
    pu_pos_take(u, p);
    /* the ids each node reads, in one sweep over the arguments; then users by counting sort
     * (a node reading a value twice counts once) */
    LS_VEC(uint32_t) ref_id = {0}, ref_user = {0};
    ls_vec_reserve(&ref_id, 3 * n + 16);
    ls_vec_reserve(&ref_user, 3 * n + 16);
    for (uint32_t i = 0; i < n; i++) {
        const ls_node *nd = p->nodes[i];
        EACH_INPUT(nd, id, {
            ls_vec_push(&ref_id, id);
            ls_vec_push(&ref_user, i);
        })
    }
    uint32_t *last = ls_malloc(sizeof *last * (n ? n : 1));
    memset(last, 0xff, sizeof *last * (n ? n : 1));
    u->off = ls_calloc(n + 1, sizeof *u->off);
    for (uint32_t r = 0; r < ref_id.n; r++) {
        int32_t s = pu_pos(u, ref_id.v[r]);
        uint32_t user = ref_user.v[r];
        if (s < 0 || last[s] == user) {
            ref_id.v[r] = UINT32_MAX; /* not counted */
            continue;
        }
        last[s] = user;
        ref_id.v[r] = (uint32_t)s;
        u->off[s + 1]++;
    }
    for (uint32_t i = 0; i < n; i++) u->off[i + 1] += u->off[i];
    u->pos = ls_malloc(sizeof *u->pos * (u->off[n] ? u->off[n] : 1));
    uint32_t *fill = last; /* reused: where the next user of each node goes */
    memcpy(fill, u->off, sizeof *fill * n);
    for (uint32_t r = 0; r < ref_id.n; r++)
        if (ref_id.v[r] != UINT32_MAX) u->pos[fill[ref_id.v[r]]++] = ref_user.v[r];
    free(last);
    free(ref_id.v);
    free(ref_user.v);
}

void pu_users_free(pu_users *u)
{
    free(u->off);
    free(u->pos);
    free(u->at);
    pu_map_free(&u->sparse);
    memset(u, 0, sizeof *u);
}

int pu_tag_cmp(const char *a, const char *b)
{
    if (a == b) return 0;
    if (!a) return 1;
    if (!b) return -1;
    return strcmp(a, b);
}

const char *pu_tag_text(const char *tag)
{
    return tag ? tag : "None";
}

void pu_names(ls_buf *b, const char *const *names, uint32_t n, uint32_t max)
{
    uint32_t shown = n < max ? n : max;
    for (uint32_t i = 0; i < shown; i++) {
        if (i) ls_buf_puts(b, i + 1 == n ? " and " : ", ");
        ls_buf_printf(b, "`%s`", names[i]);
    }
    if (n > shown) ls_buf_printf(b, " and %u more", n - shown);
}

const char *pu_meta_str(const ls_tmeta *m)
{
    static char ring[8][96];
    static unsigned next;
    char *s = ring[next++ % 8];
    if (!m) {
        snprintf(s, sizeof ring[0], "?");
        return s;
    }
    return ls_tmeta_str(m, s, sizeof ring[0]);
}
