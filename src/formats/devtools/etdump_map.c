/* ETDump events onto a program's nodes (etdump.h), the way ExecuTorch's Inspector joins them
 * (devtools/inspector/_inspector.py):
 *  - events are keyed by (instruction_id, chain_index, delegate_debug_id_int/str)
 *    (InstructionEventSignature); an id of -1 or an empty string means none;
 *  - a non-delegated event takes the debug handles of its instruction (EventBlock.
 *    _gen_resolve_debug_handles: handle_map[str(instruction_id)]);
 *  - a delegated event takes delegate_map[instruction]["delegate_map"][delegate id] (the int id,
 *    or its string form), and falls back to the instruction's handles when the delegate has no
 *    map;
 *  - framework events ("Method::init", "Program::load_method", "Method::execute": the
 *    Inspector's RESERVED_FRAMEWORK_EVENT_NAMES) belong to no node. "Method::step" wraps the
 *    same instruction as its OPERATOR_CALL, so it is counted as framework too, not twice.
 * Without an ETRecord, a .pte's own instruction map stands for the debug handles: instruction
 * (chain, id) is the node the .pte loader made of it. A delegate's event then finds its node
 * inside the delegate by the delegate id: an int is a position in the delegate's graph (what
 * lowerscope's BundledBackend numbers its nodes by), a string a node name. */
#include <cjson/cJSON.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "etdump.h"
#include "etrecord.h"
#include "ops.h"
#include "ptrmap.h"

typedef struct target {
    const char *program; /* NULL: the top level */
    uint32_t node;
} target;

typedef struct instr_entry {
    int64_t *handles; /* handles mode */
    uint32_t n_handles;
    cJSON *delegate_map; /* handles mode: this instruction's {"delegate id": handles}, borrowed from x->dmap */
} instr_entry;

struct ls_etd_index {
    const ls_program *p;
    bool by_handles;
    /* program mode: the .pte's instruction map */
    const ls_instr_map *im;
    /* handles mode */
    instr_entry *instrs; /* by instruction id */
    uint32_t n_instrs;
    /* debug handle → index into targets + 1, for the top level and for the lowered modules apart:
     * after to_backend a getitem at the top level may carry the handle of the node inside a
     * delegate whose value it reads */
    ls_ptrmap top_handle, sub_handle;
    LS_VEC(target) targets;
    cJSON *dmap_root;
    ls_ptrmap sub_call; /* submodule name → the top-level node calling it */
};

const char *ls_etd_match_text(ls_etd_match m)
{
    switch (m) {
    case LS_ETD_MATCHED: return "matched";
    case LS_ETD_FRAMEWORK: return "framework";
    case LS_ETD_IN_DELEGATE: return "in delegate";
    case LS_ETD_NO_INSTRUCTION: return "no such instruction";
    case LS_ETD_NO_NODE: return "instruction has no node";
    case LS_ETD_NO_HANDLE: return "no node with its debug handles";
    }
    return "?";
}

/* The submodule a delegate call node calls (its get_attr's target), NULL when not a delegate call. */
static const char *called_sub(const ls_program *p, uint32_t node)
{
    const ls_node *n = ls_program_node(p, node);
    if (!n || !n->op || n->op->id != LS_OP_call_delegate || !n->nargs || n->args[0].kind != LS_ARG_NODE) return NULL;
    const ls_node *ga = ls_program_node(p, n->args[0].v.node);
    return ga && ga->kind == LS_NODE_GET_ATTR ? ga->target : NULL;
}

static ls_etd_index *index_new(const ls_program *p)
{
    ls_etd_index *x = ls_calloc(1, sizeof *x);
    x->p = p;
    for (uint32_t i = 0; i < p->n_nodes; i++) {
        const char *sub = called_sub(p, p->nodes[i]->id);
        if (sub) ls_ptrmap_add(&x->sub_call, sub, p->nodes[i]->id, NULL);
    }
    return x;
}

ls_etd_index *ls_etd_index_for_program(const ls_program *p)
{
    ls_etd_index *x = index_new(p);
    x->im = p->instrs;
    return x;
}

/* ---- handles mode */

static void add_handles(ls_etd_index *x, const ls_program *p, const char *program)
{
    for (uint32_t i = 0; i < p->n_nodes; i++) {
        const ls_node *n = p->nodes[i];
        if (n->debug_handle <= 0 || n->kind != LS_NODE_CALL) continue;
        target t = {program, n->id};
        ls_vec_push(&x->targets, t);
        ls_ptrmap_add(program ? &x->sub_handle : &x->top_handle, (const void *)(uintptr_t)n->debug_handle, x->targets.n,
                      NULL);
    }
}

static bool json_handles(const cJSON *v, int64_t **out, uint32_t *n)
{
    *out = NULL;
    *n = 0;
    if (cJSON_IsNumber(v)) {
        *out = ls_malloc(sizeof **out);
        (*out)[(*n)++] = (int64_t)v->valuedouble;
        return true;
    }
    if (!cJSON_IsArray(v)) return false;
    int k = cJSON_GetArraySize(v);
    *out = ls_malloc(sizeof **out * (size_t)(k ? k : 1));
    for (const cJSON *c = v->child; c; c = c->next)
        if (cJSON_IsNumber(c)) (*out)[(*n)++] = (int64_t)c->valuedouble;
    return true;
}

/* A digit string that fits an instruction id. */
static bool instr_key(const char *k, uint32_t *id)
{
    if (!k || !*k) return false;
    uint64_t v = 0;
    for (const char *c = k; *c; c++) {
        if (*c < '0' || *c > '9') return false;
        v = v * 10 + (uint64_t)(*c - '0');
        if (v > 1u << 24) return false;
    }
    *id = (uint32_t)v;
    return true;
}

/* {method: {instr: ...}} or, from older writers, {instr: ...} directly. */
static const cJSON *method_map(const cJSON *root, const char *method)
{
    if (!cJSON_IsObject(root)) return NULL;
    const cJSON *m = cJSON_GetObjectItemCaseSensitive(root, method ? method : "forward");
    if (cJSON_IsObject(m)) return m;
    uint32_t id;
    return root->child && instr_key(root->child->string, &id) ? root : NULL;
}

static instr_entry *entry(ls_etd_index *x, uint32_t id)
{
    if (id >= x->n_instrs) {
        uint32_t nn = id + 1;
        x->instrs = ls_realloc(x->instrs, sizeof *x->instrs * nn);
        memset(x->instrs + x->n_instrs, 0, sizeof *x->instrs * (nn - x->n_instrs));
        x->n_instrs = nn;
    }
    return &x->instrs[id];
}

ls_etd_index *ls_etd_index_for_handles(const ls_program *p, const char *method, const char *debug_handle_map_json,
                                       const char *delegate_map_json, ls_error *err)
{
    ls_etd_index *x = index_new(p);
    x->by_handles = true;
    add_handles(x, p, NULL);
    for (uint32_t s = 0; s < p->n_subs; s++)
        if (p->subs[s].program) add_handles(x, p->subs[s].program, p->subs[s].name);
    if (debug_handle_map_json) {
        cJSON *root = cJSON_Parse(debug_handle_map_json);
        if (!root) {
            ls_etd_index_free(x);
            ls_fail(err, "debug_handle_map: not JSON");
            return NULL;
        }
        const cJSON *m = method_map(root, method);
        for (const cJSON *c = m ? m->child : NULL; c; c = c->next) {
            uint32_t id;
            if (!instr_key(c->string, &id)) continue;
            instr_entry *e = entry(x, id);
            free(e->handles);
            json_handles(c, &e->handles, &e->n_handles);
        }
        cJSON_Delete(root);
    }
    if (delegate_map_json) {
        x->dmap_root = cJSON_Parse(delegate_map_json);
        if (!x->dmap_root) {
            ls_etd_index_free(x);
            ls_fail(err, "delegate_map: not JSON");
            return NULL;
        }
        const cJSON *m = method_map(x->dmap_root, method);
        for (cJSON *c = m ? m->child : NULL; c; c = c->next) {
            uint32_t id;
            if (!instr_key(c->string, &id) || !cJSON_IsObject(c)) continue;
            entry(x, id)->delegate_map = cJSON_GetObjectItemCaseSensitive(c, "delegate_map");
        }
    }
    return x;
}

void ls_etd_index_free(ls_etd_index *x)
{
    if (!x) return;
    for (uint32_t i = 0; i < x->n_instrs; i++) free(x->instrs[i].handles);
    free(x->instrs);
    free(x->targets.v);
    ls_ptrmap_free(&x->top_handle);
    ls_ptrmap_free(&x->sub_handle);
    ls_ptrmap_free(&x->sub_call);
    cJSON_Delete(x->dmap_root);
    free(x);
}

/* ---- matching one event */

static bool is_framework(const ls_etd_event *e)
{
    static const char *const names[] = {"Method::init", "Program::load_method", "Method::execute", "Method::step"};
    for (size_t i = 0; e->name && i < sizeof names / sizeof names[0]; i++)
        if (strcmp(e->name, names[i]) == 0) return true;
    return false;
}

static bool delegated(const ls_etd_event *e)
{
    return e->delegate_debug_id_int != -1 || (e->delegate_debug_id_str && *e->delegate_debug_id_str);
}

/* The top-level call of submodule `sub` (0: none). */
static uint32_t call_of_sub(const ls_etd_index *x, const char *sub)
{
    uint32_t id = 0;
    ls_ptrmap_get_u32(&x->sub_call, sub, &id);
    return id;
}

/* in_sub: the node inside a lowered module with that handle, else the top level's. */
static const target *handle_target(const ls_etd_index *x, int64_t h, bool in_sub)
{
    uint32_t k;
    if (h <= 0 || !ls_ptrmap_get_u32(in_sub ? &x->sub_handle : &x->top_handle, (const void *)(uintptr_t)h, &k)) return NULL;
    return &x->targets.v[k - 1];
}

/* The first of the handles that names a node (inside a lowered module when in_sub). */
static const target *first_target(const ls_etd_index *x, const int64_t *hs, uint32_t n, bool in_sub)
{
    const target *t = NULL;
    for (uint32_t i = 0; i < n && !t; i++) t = handle_target(x, hs[i], in_sub);
    return t;
}

/* Program mode: the node inside the delegate an id names. */
static uint32_t inner_node(const ls_program *sub, const ls_etd_event *e)
{
    if (!sub) return 0;
    if (e->delegate_debug_id_int >= 0)
        return (uint32_t)e->delegate_debug_id_int < sub->n_nodes ? sub->nodes[e->delegate_debug_id_int]->id : 0;
    int32_t pos = ls_program_find(sub, ls_intern(e->delegate_debug_id_str));
    return pos >= 0 ? sub->nodes[pos]->id : 0;
}

static void match_program(const ls_etd_index *x, const ls_etd_event *e, ls_etd_mapped *m)
{
    const ls_instr_map *im = x->im;
    if (!im || e->chain_index < 0 || (uint64_t)e->chain_index >= im->n_chains || e->instruction_id < 0 ||
        (uint32_t)e->instruction_id >= im->chain_first[e->chain_index + 1] - im->chain_first[e->chain_index]) {
        m->match = LS_ETD_NO_INSTRUCTION;
        return;
    }
    m->instruction = (int32_t)(im->chain_first[e->chain_index] + (uint32_t)e->instruction_id);
    uint32_t node = im->node[m->instruction];
    if (!node) {
        m->match = LS_ETD_NO_NODE;
        return;
    }
    if (!delegated(e)) {
        m->node = node;
        m->match = LS_ETD_MATCHED;
        return;
    }
    m->delegate = called_sub(x->p, node);
    const ls_submodule *s = m->delegate ? ls_program_sub(x->p, m->delegate) : NULL;
    uint32_t in = inner_node(s ? s->program : NULL, e);
    if (in) {
        m->program = m->delegate;
        m->node = in;
        m->match = LS_ETD_MATCHED;
    } else {
        m->node = node;
        m->match = LS_ETD_IN_DELEGATE;
    }
}

static void match_handles(const ls_etd_index *x, const ls_etd_event *e, ls_etd_mapped *m)
{
    if (e->instruction_id < 0 || (uint32_t)e->instruction_id >= x->n_instrs ||
        (!x->instrs[e->instruction_id].handles && !x->instrs[e->instruction_id].delegate_map)) {
        m->match = LS_ETD_NO_INSTRUCTION;
        return;
    }
    m->instruction = e->instruction_id;
    const instr_entry *ie = &x->instrs[e->instruction_id];
    /* a delegate's instruction: its handles are those of the nodes inside its lowered module */
    const target *in_sub = first_target(x, ie->handles, ie->n_handles, true);
    if (!delegated(e)) {
        const target *t = in_sub ? NULL : first_target(x, ie->handles, ie->n_handles, false);
        if (in_sub) {
            m->delegate = in_sub->program;
            m->node = call_of_sub(x, in_sub->program);
        } else if (t) {
            m->node = t->node;
        }
        m->match = m->node ? LS_ETD_MATCHED : in_sub ? LS_ETD_NO_NODE : LS_ETD_NO_HANDLE;
        return;
    }
    /* the delegate's own event: its id in the delegate's map, else (as the Inspector falls back)
     * the instruction's handles, which name the delegate call */
    const cJSON *v = NULL;
    if (ie->delegate_map) {
        char key[32];
        const char *k = e->delegate_debug_id_str;
        if (e->delegate_debug_id_int >= 0) {
            snprintf(key, sizeof key, "%d", e->delegate_debug_id_int);
            k = key;
        }
        v = cJSON_GetObjectItemCaseSensitive(ie->delegate_map, k);
    }
    int64_t *dh = NULL;
    uint32_t nh = 0;
    const target *t = v && json_handles(v, &dh, &nh) ? first_target(x, dh, nh, true) : NULL;
    free(dh);
    if (t) {
        m->program = m->delegate = t->program;
        m->node = t->node;
        m->match = LS_ETD_MATCHED;
    } else if (in_sub) {
        m->delegate = in_sub->program;
        m->node = call_of_sub(x, in_sub->program);
        m->match = m->node ? LS_ETD_IN_DELEGATE : LS_ETD_NO_NODE;
    } else {
        m->match = LS_ETD_NO_HANDLE;
    }
}

/* ---- the profile */

static ls_node_stats *sub_stats(ls_etd_profile *pr, const ls_program *p, const char *name)
{
    ls_node_stats *have = (ls_node_stats *)ls_etd_profile_sub(pr, name);
    if (have) return have;
    const ls_submodule *s = ls_program_sub(p, name);
    if (!s || !s->program) return NULL;
    pr->subs = ls_realloc(pr->subs, sizeof *pr->subs * (pr->n_subs + 1));
    pr->sub_names = ls_realloc(pr->sub_names, sizeof *pr->sub_names * (pr->n_subs + 1));
    ls_node_stats_init(&pr->subs[pr->n_subs], s->program, "ETDump");
    pr->sub_names[pr->n_subs] = name;
    ls_ptrmap_put(&pr->sub_index, name, pr->n_subs);
    return &pr->subs[pr->n_subs++];
}

void ls_etd_profile_build(const ls_etdump *d, const ls_program *p, const ls_etd_index *x, double ticks_per_second,
                          ls_etd_profile *out)
{
    memset(out, 0, sizeof *out);
    ls_node_stats_init(&out->stats, p, "ETDump");
    if (!(ticks_per_second > 0)) ticks_per_second = 1e9;
    LS_VEC(ls_etd_mapped) ev = {0};
    for (uint32_t r = 0; r < d->n_runs; r++) {
        bool any = false;
        for (uint32_t k = 0; k < d->runs[r].n_events; k++) {
            const ls_etd_event *e = &d->runs[r].events[k];
            if (e->kind != LS_ETD_PROFILE) continue;
            any = true;
            int64_t ticks = ls_etd_elapsed(e);
            ls_etd_mapped m = {.run = r, .event = k, .instruction = -1, .seconds = ticks > 0 ? (double)ticks / ticks_per_second : 0};
            if (is_framework(e) && !delegated(e)) {
                m.match = LS_ETD_FRAMEWORK;
                if (e->name && strcmp(e->name, "Method::execute") == 0) out->execute_seconds += m.seconds;
            } else if (x->by_handles) {
                match_handles(x, e, &m);
            } else {
                match_program(x, e, &m);
            }
            ls_vec_push(&ev, m);
            if (m.match == LS_ETD_FRAMEWORK) {
                out->n_framework++;
                continue;
            }
            if (m.match != LS_ETD_MATCHED && m.match != LS_ETD_IN_DELEGATE) {
                out->n_unmatched++;
                continue;
            }
            if (m.match == LS_ETD_MATCHED) out->n_matched++;
            else out->n_in_delegate++;
            /* a delegate's own events are inside its DELEGATE_CALL's time: they go to the nodes
             * inside, never again to the call */
            ls_node_stats *st = m.program ? sub_stats(out, p, m.program) : delegated(e) ? NULL : &out->stats;
            ls_node_stat *ns = st ? ls_node_stats_of(st, m.node) : NULL;
            if (ns) {
                ls_node_stat_add_time(ns, m.seconds);
                ns->runs++;
            }
        }
        if (any) out->runs++;
    }
    out->stats.runs = out->runs;
    for (uint32_t i = 0; i < out->n_subs; i++) out->subs[i].runs = out->runs;
    out->events = ev.v;
    out->n_events = ev.n;
}

const ls_node_stats *ls_etd_profile_sub(const ls_etd_profile *pr, const char *name)
{
    uint32_t i;
    return ls_ptrmap_get_u32(&pr->sub_index, name, &i) ? &pr->subs[i] : NULL;
}

void ls_etd_profile_free(ls_etd_profile *pr)
{
    free(pr->events);
    ls_node_stats_free(&pr->stats);
    for (uint32_t i = 0; i < pr->n_subs; i++) ls_node_stats_free(&pr->subs[i]);
    free(pr->subs);
    free(pr->sub_names);
    ls_ptrmap_free(&pr->sub_index);
    memset(pr, 0, sizeof *pr);
}

/* ---- the delegates of an ETRecord's maps (etrecord.h) */

static int by_instruction(const void *a, const void *b)
{
    int32_t x = ((const ls_etr_delegate *)a)->instruction, y = ((const ls_etr_delegate *)b)->instruction;
    return (x > y) - (x < y);
}

int ls_etr_delegates_of(const ls_program *loaded, ls_etr_delegates *out, ls_error *err)
{
    memset(out, 0, sizeof *out);
    const ls_program *edge = ls_recorded_handles_program(loaded);
    const ls_recorded *r = ls_program_recorded(loaded);
    if (!edge) return ls_fail(err, "%s: no recorded debug-handle maps (not an ETRecord)", loaded ? loaded->path : "program");
    ls_etd_index *x = ls_etd_index_for_handles(edge, r->method, r->debug_handle_map, r->delegate_map, err);
    if (!x) return ls_fail_prefix(err, "%s", loaded->path);
    LS_VEC(ls_etr_delegate) v = {0};
    const cJSON *m = method_map(x->dmap_root, r->method);
    for (const cJSON *c = m ? m->child : NULL; c; c = c->next) {
        uint32_t id;
        if (!instr_key(c->string, &id) || !cJSON_IsObject(c)) continue;
        ls_etr_delegate d = {.instruction = (int32_t)id};
        const cJSON *name = cJSON_GetObjectItemCaseSensitive(c, "name");
        d.backend = cJSON_IsString(name) ? ls_intern(name->valuestring) : NULL;
        const instr_entry *ie = id < x->n_instrs ? &x->instrs[id] : NULL;
        for (uint32_t k = 0; ie && k < ie->n_handles && !d.submodule; k++) {
            const target *t = handle_target(x, ie->handles[k], true);
            if (t) d.submodule = t->program;
        }
        const cJSON *dm = ie ? ie->delegate_map : NULL;
        int nl = cJSON_IsObject(dm) ? cJSON_GetArraySize(dm) : 0;
        d.links = ls_calloc(nl ? (size_t)nl : 1, sizeof *d.links);
        for (const cJSON *e = nl ? dm->child : NULL; e; e = e->next) {
            ls_etr_link *l = &d.links[d.n_links++];
            l->delegate_id = ls_intern(e->string ? e->string : "");
            int64_t *hs;
            uint32_t nh;
            if (!json_handles(e, &hs, &nh)) continue;
            for (uint32_t k = 0; k < nh && !l->node; k++) {
                const target *t = handle_target(x, hs[k], true);
                if (!t) t = handle_target(x, hs[k], false);
                if (!t) continue;
                l->handle = hs[k];
                l->program = t->program;
                l->node = t->node;
                if (!d.submodule && t->program) d.submodule = t->program;
            }
            if (!l->handle && nh) l->handle = hs[0];
            free(hs);
        }
        d.call_node = d.submodule ? call_of_sub(x, d.submodule) : 0;
        ls_vec_push(&v, d);
    }
    if (v.n > 1) qsort(v.v, v.n, sizeof *v.v, by_instruction); /* the JSON keeps the writer's order */
    ls_etd_index_free(x);
    out->v = v.v;
    out->n = v.n;
    return 0;
}

void ls_etr_delegates_free(ls_etr_delegates *d)
{
    for (uint32_t i = 0; i < d->n; i++) free(d->v[i].links);
    free(d->v);
    memset(d, 0, sizeof *d);
}
