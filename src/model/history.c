/* Reports, the history of a pipeline run and the differences between two steps. */
#include "history.h"

#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "ptrmap.h"

void ls_report_add(ls_report *r, const char *program, const char *node, const char *fmt, ...)
{
    ls_buf b = {0};
    va_list ap;
    va_start(ap, fmt);
    ls_buf_vprintf(&b, fmt, ap);
    va_end(ap);
    size_t len = b.len;
    char *text = ls_realloc(ls_buf_take(&b), len + 1); /* the history keeps every sentence: no slack */
    if ((r->n & (r->n - 1)) == 0) /* grow at powers of two */
        r->v = ls_realloc(r->v, sizeof *r->v * (r->n ? r->n * 2 : 4));
    r->v[r->n].text = text;
    r->v[r->n].program = ls_intern(program);
    r->v[r->n].node = ls_intern(node);
    r->n++;
}

void ls_report_free(ls_report *r)
{
    for (uint32_t i = 0; i < r->n; i++) free(r->v[i].text);
    free(r->v);
    r->v = NULL;
    r->n = 0;
}

void ls_history_free(ls_history *h)
{
    if (!h) return;
    for (uint32_t i = 0; i < h->n; i++) {
        ls_step *s = &h->steps[i];
        ls_program_unref(s->program);
        ls_report_free(&s->report);
        free(s->changes);
        ls_verify_result_free(&s->verify);
        free(s->error);
    }
    free(h->steps);
    memset(h, 0, sizeof *h);
}

/* why a .pte has step 0 only (docs/cli.md: "A .pte is its own step 0") */
#define AS_HELD "a .pte is its own step 0, the program as the file holds it, and the pipeline runs on it only when it is relowered"

int ls_history_find_step(const ls_history *h, const char *spec, ls_error *err)
{
    char *end;
    long v = strtol(spec, &end, 10);
    if (*spec && !*end) {
        if ((v < 0 || v >= (long)h->n) && h->as_held) return ls_fail(err, "%s: no such step: %s", spec, AS_HELD);
        if ((v < 0 || v >= (long)h->n) && h->not_run) /* why there is step 0 only */
            return ls_fail(err, "%s: the pipeline has step 0 only: no pass ran (%s)", spec, h->not_run);
        if (v < 0 || v >= (long)h->n) return ls_fail(err, "%s: the pipeline has steps 0 to %u", spec, h->n - 1);
        return (int)v;
    }
    const char *colon = strchr(spec, ':');
    size_t len = colon ? (size_t)(colon - spec) : strlen(spec);
    for (int i = (int)h->n - 1; i >= 0; i--) {
        const ls_step *s = &h->steps[i];
        if (!s->pass || strlen(s->pass) != len || strncmp(s->pass, spec, len) != 0) continue;
        if (colon && (!s->detail || strcmp(s->detail, colon + 1) != 0)) continue;
        return i;
    }
    if (h->as_held) return ls_fail(err, "%s: no such step: %s", spec, AS_HELD);
    return ls_fail(err, "%s: no such step (give a number, a pass name or pass:backend)", spec);
}

uint32_t ls_history_same_pass_step(const ls_history *h, uint32_t s, const ls_history *other)
{
    const char *pass = s < h->n ? h->steps[s].pass : NULL;
    uint32_t round = 0; /* how many steps of this pass come before s: a backend set's round */
    for (uint32_t i = 0; pass && i < s; i++) round += h->steps[i].pass && !strcmp(h->steps[i].pass, pass);
    int64_t last = -1;
    for (uint32_t i = 0, k = 0; pass && i < other->n; i++) {
        if (!other->steps[i].pass || strcmp(other->steps[i].pass, pass) != 0) continue;
        if (k++ == round) return i;
        last = i;
    }
    if (last >= 0) return (uint32_t)last; /* fewer rounds there: its last */
    return other->n ? other->n - 1 : 0;
}

/* ---- differences */

typedef LS_VEC(ls_change) change_vec;

static bool vals_equal(const ls_node *a, const ls_node *b)
{
    if (a->val_kind != b->val_kind || a->nvals != b->nvals) return false;
    if (a->vals == b->vals) return true; /* a clone shares the vals of its source */
    for (uint16_t i = 0; i < a->nvals; i++)
        if (!ls_tmeta_equal(&a->vals[i], &b->vals[i])) return false;
    return true;
}

/* Same content: what a user sees of a node (shared nodes are equal without looking). */
static bool nodes_equal(const ls_node *a, const ls_node *b)
{
    if (a == b) return true;
    if (a->kind != b->kind || a->name != b->name || a->target != b->target || a->tag != b->tag ||
        a->reason != b->reason || a->reason_detail != b->reason_detail || a->nargs != b->nargs ||
        a->dialect != b->dialect || a->no_copy != b->no_copy)
        return false;
    for (uint16_t i = 0; i < a->nargs; i++)
        if (!ls_arg_equal(&a->args[i], &b->args[i])) return false;
    return vals_equal(a, b);
}

static void push(change_vec *v, ls_change_kind k, const char *program, const ls_node *n)
{
    ls_change c = {.kind = (uint8_t)k, .program = program, .node_id = n->id, .node = n->name};
    ls_vec_push(v, c);
}

/* Position by id in a table that grows when an id is not below its size (ids are below
 * next_id in programs the passes make; a hand-built one may hold others). */
typedef struct id_table {
    int32_t *at;
    uint32_t cap;
} id_table;

static void id_table_set(id_table *t, uint32_t id, int32_t pos)
{
    if (id >= t->cap) {
        uint64_t nc = t->cap ? t->cap : 1024;
        while (nc <= id) nc *= 2;
        t->at = ls_realloc(t->at, sizeof *t->at * (size_t)nc);
        memset(t->at + t->cap, 0xff, sizeof *t->at * (size_t)(nc - t->cap));
        t->cap = (uint32_t)(nc > UINT32_MAX ? UINT32_MAX : nc);
    }
    t->at[id] = pos;
}

static int32_t id_table_get(const id_table *t, uint32_t id)
{
    return id < t->cap ? t->at[id] : -1;
}

/* Node ids are stable across steps, so a position table per id pairs the nodes: O(n), each
 * node read once per program; nodes shared between the steps compare by pointer. */
static void diff_one(const ls_program *a, const ls_program *b, const char *program, change_vec *v)
{
    if (a == b) return;
    if (!a) {
        for (uint32_t i = 0; i < b->n_nodes; i++) push(v, LS_CHANGE_ADDED, program, b->nodes[i]);
        return;
    }
    if (!b) {
        for (uint32_t i = 0; i < a->n_nodes; i++) push(v, LS_CHANGE_REMOVED, program, a->nodes[i]);
        return;
    }
    if (a->n_nodes == b->n_nodes && memcmp(a->nodes, b->nodes, sizeof *a->nodes * a->n_nodes) == 0) return;
    id_table in_a = {0};
    uint32_t cap = (a->next_id > b->next_id ? a->next_id : b->next_id) + 1;
    in_a.at = ls_malloc(sizeof *in_a.at * cap);
    memset(in_a.at, 0xff, sizeof *in_a.at * cap);
    in_a.cap = cap;
    for (uint32_t i = 0; i < a->n_nodes; i++) id_table_set(&in_a, a->nodes[i]->id, (int32_t)i);
    /* the node of a each node of b pairs with (-1: none), marking the nodes of a that stay */
    int32_t *match = ls_malloc(sizeof *match * (b->n_nodes ? b->n_nodes : 1));
    bool *seen = ls_calloc(a->n_nodes ? a->n_nodes : 1, sizeof *seen);
    for (uint32_t i = 0; i < b->n_nodes; i++) {
        const ls_node *n = b->nodes[i];
        int32_t j = i < a->n_nodes && a->nodes[i] == n ? (int32_t)i : id_table_get(&in_a, n->id);
        match[i] = j;
        if (j >= 0) seen[j] = true;
    }
    /* room for every change this can find (removed, and what is not shared with a) */
    uint32_t most = v->n;
    for (uint32_t i = 0; i < a->n_nodes; i++) most += !seen[i];
    for (uint32_t i = 0; i < b->n_nodes; i++) most += match[i] < 0 || a->nodes[match[i]] != b->nodes[i];
    ls_vec_reserve(v, most);
    /* removed first (in a's order), then added and changed in b's order */
    for (uint32_t i = 0; i < a->n_nodes; i++)
        if (!seen[i]) push(v, LS_CHANGE_REMOVED, program, a->nodes[i]);
    for (uint32_t i = 0; i < b->n_nodes; i++) {
        const ls_node *n = b->nodes[i];
        int32_t j = match[i];
        if (j < 0) push(v, LS_CHANGE_ADDED, program, n);
        else if (!nodes_equal(a->nodes[j], n)) push(v, LS_CHANGE_CHANGED, program, n);
    }
    free(match);
    free(seen);
    free(in_a.at);
}

void ls_diff_programs(const ls_program *a, const ls_program *b, ls_change **changes, uint32_t *n)
{
    change_vec v = {0};
    diff_one(a, b, NULL, &v);
    /* submodules, matched by name: those of a (removed or changed), then those new in b */
    if (a && b && a != b) {
        ls_ptrmap in_a = {0}, in_b = {0};
        for (uint32_t i = 0; i < a->n_subs; i++) ls_ptrmap_put(&in_a, a->subs[i].name, i);
        for (uint32_t i = 0; i < b->n_subs; i++) ls_ptrmap_put(&in_b, b->subs[i].name, i);
        for (uint32_t i = 0; i < a->n_subs; i++) {
            uint32_t j;
            bool there = ls_ptrmap_get_u32(&in_b, a->subs[i].name, &j);
            diff_one(a->subs[i].program, there ? b->subs[j].program : NULL, a->subs[i].name, &v);
        }
        for (uint32_t i = 0; i < b->n_subs; i++)
            if (!ls_ptrmap_has(&in_a, b->subs[i].name)) diff_one(NULL, b->subs[i].program, b->subs[i].name, &v);
        ls_ptrmap_free(&in_a);
        ls_ptrmap_free(&in_b);
    }
    /* a step keeps its changes as long as the history: not the room reserved for them (an
     * upper bound, doubled; at a million nodes up to 24 MB a step) */
    if (v.n < v.cap) {
        if (v.n) {
            v.v = ls_realloc(v.v, sizeof *v.v * v.n);
        } else {
            free(v.v);
            v.v = NULL;
        }
    }
    *changes = v.v;
    *n = v.n;
}
