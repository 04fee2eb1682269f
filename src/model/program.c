/* The program model: nodes shared between versions, programs, and the lazy index (positions,
 * names, users). The tables beside the nodes are program_tables.c's. */
#include "program.h"

#include <stddef.h>
#include <stdlib.h>
#include <string.h>

#include "named_data.h"
#include "namer.h"

struct ls_index {
    int32_t *pos_of_id; /* size id_cap, when ids are dense */
    uint32_t id_cap;
    /* when ids are sparse (a lowered module keeps the ids of its nodes in the program it came
     * from), an open-addressing table of ids instead, so the index stays O(nodes) */
    uint32_t *hash_ids; /* 0 = empty */
    int32_t *hash_pos;
    uint32_t hash_cap;
    int32_t *name_slots; /* open addressing over positions, -1 empty */
    uint32_t name_cap;
    uint32_t *user_off; /* CSR of users, built on first ls_program_users call */
    uint32_t *users;
};

static const char *const kind_names[] = {"placeholder", "call_function", "get_attr", "output"};
const char *ls_node_kind_name(ls_node_kind k)
{
    return (unsigned)k < 4 ? kind_names[k] : "?";
}

const char *ls_dialect_name(ls_dialect d)
{
    return d == LS_DIALECT_ATEN ? "ATen" : d == LS_DIALECT_EDGE ? "Edge" : d == LS_DIALECT_EXECUTORCH ? "ExecuTorch" : "-";
}

const char *ls_arg_kind_name(ls_arg_kind k)
{
    static const char *const names[] = {"none",   "node",    "nodes", "opt_nodes", "int",   "ints",
                                        "float",  "floats",  "bool",  "bools",     "string", "strings",
                                        "symints", "dtype", "layout", "memory_format", "device", "raw"};
    return (unsigned)k < sizeof names / sizeof names[0] ? names[k] : "?";
}

const char *ls_cpu_reason_text(ls_cpu_reason r)
{
    static const char *const texts[LS_WHY_COUNT] = {
        [LS_WHY_NONE] = "",
        [LS_WHY_OP_UNSUPPORTED] = "op not supported",
        [LS_WHY_DTYPE] = "dtype not supported",
        [LS_WHY_CYCLE] = "would form a cycle",
        [LS_WHY_MASK_COMPUTED] = "mask refused: computed in the graph",
        [LS_WHY_MASK_INPUT] = "mask refused: a user input",
        [LS_WHY_MASK_PARAMETER] = "mask refused: a parameter or persistent buffer",
        [LS_WHY_MASK_MUTATED] = "mask refused: a mutated buffer",
        [LS_WHY_MASK_OTHER_INDEX] = "mask refused: used with another index",
        [LS_WHY_MASK_ALL_FALSE] = "mask refused: all false",
        [LS_WHY_UNKNOWN_OP] = "unknown op",
        [LS_WHY_NOT_COMPUTE] = "not a compute node",
        [LS_WHY_RULE] = "refused by a rule",
    };
    return (unsigned)r < LS_WHY_COUNT && texts[r] ? texts[r] : "";
}

const char *ls_cpu_why(ls_cpu_reason r, const char *detail)
{
    if (r == LS_WHY_RULE && detail) return detail;
    if (!detail) return ls_intern(ls_cpu_reason_text(r));
    return ls_internf("%s (%s)", ls_cpu_reason_text(r), detail);
}

const char *ls_input_kind_name(ls_input_kind k)
{
    static const char *const names[] = {"user_input", "parameter", "buffer",        "tensor_constant",
                                        "custom_obj", "token",     "constant_input"};
    return (unsigned)k < sizeof names / sizeof names[0] ? names[k] : "?";
}

const char *ls_output_kind_name(ls_output_kind k)
{
    static const char *const names[] = {"user_output",           "loss_output",           "buffer_mutation",
                                        "parameter_mutation",    "gradient_to_parameter", "gradient_to_user_input",
                                        "user_input_mutation",   "token"};
    return (unsigned)k < sizeof names / sizeof names[0] ? names[k] : "?";
}

/* ---- nodes */

const ls_node_text *ls_node_text_intern(const ls_node_text *t)
{
    if (!t->stack_trace && !t->module_stack && !t->source_fn && !t->torch_fn && !t->custom) return NULL;
    return ls_intern_record(t, sizeof *t);
}

/* torch/_export/serde/serialize.py: GraphModuleSerializer.serialize_metadata writes each
 * entry as f"{key},{path},{type}" and joins them with ST_DELIMITER (";"), no escaping;
 * GraphModuleDeserializer.deserialize_metadata splits at every ';' and each entry at the
 * commas outside () and [] into exactly 3 parts, so a ';' in a name breaks torch's own reader.
 * A module's name reaches the path ("getattr(L['self'], 'a;b')", or a non-strict "a;b") and the
 * key, never the type (a class's __module__ and __qualname__): so an entry ends at the first
 * ';' after its second comma outside brackets. */
size_t ls_module_stack_entry(const char *s, const char **next)
{
    int depth = 0, commas = 0;
    for (const char *c = s; *c; c++) {
        if (*c == '(' || *c == '[') depth++;
        else if ((*c == ')' || *c == ']') && depth > 0) depth--;
        else if (*c == ',' && !depth) commas++;
        else if (*c == ';' && !depth && commas >= 2) {
            *next = c + 1;
            return (size_t)(c - s);
        }
    }
    *next = NULL;
    return strlen(s);
}

/* serialize_metadata writes each source_fn_stack entry as f"{name},{serialize_operator(fn)}"
 * and joins them with ST_DELIMITER; deserialize_metadata splits at every ';', then each entry at
 * its ','. Neither part holds a ';' (an fx node's name, an operator's or class's qualified
 * name), so every ';' ends an entry. torch_fn is one (name, qualified name) pair joined the
 * same way, and stays one line. */
size_t ls_source_fn_entry(const char *s, const char **next)
{
    const char *e = strchr(s, ';');
    *next = e ? e + 1 : NULL;
    return e ? (size_t)(e - s) : strlen(s);
}

ls_node *ls_node_new(ls_program *p, ls_node_kind kind, const char *name, const char *target)
{
    ls_node *n = ls_calloc(1, sizeof *n);
    n->refs = 1;
    n->id = p->next_id++;
    n->kind = (uint8_t)kind;
    n->name = ls_intern(name);
    n->target = ls_intern(target);
    return n;
}

/* Vals are held one of three ways (n->storage):
 *   - interned (LS_NODE_VALS_INTERNED): ls_node_set_vals keeps one copy of each distinct array,
 *     with the interned strings (ls_intern_record), never freed. Most nodes of a model share a
 *     handful of shapes and dtypes, and a load of 1M nodes held 168 bytes of vals a node;
 *   - reference-counted (LS_NODE_VALS_SHARED): a block of one node's own, the count before the
 *     array, shared by its clones (what ls_node_vals_mut makes to write to);
 *   - neither: a plain allocation (readers that build nodes themselves, blob_read.c). */
typedef struct vals_block {
    uint64_t refs; /* 8 bytes: the vals that follow stay 8-byte aligned */
    ls_tmeta v[];
} vals_block;

static vals_block *block_of(const ls_tmeta *vals)
{
    return (vals_block *)((char *)(uintptr_t)vals - offsetof(vals_block, v));
}

static ls_tmeta *vals_new(const ls_tmeta *ms, uint16_t count)
{
    vals_block *b = ls_malloc(sizeof *b + sizeof(ls_tmeta) * count);
    b->refs = 1;
    memcpy(b->v, ms, sizeof(ls_tmeta) * count);
    return b->v;
}

static void vals_release(ls_node *n)
{
    if (!n->vals) return;
    if (n->storage & LS_NODE_VALS_INTERNED) { /* the interner's */
    } else if (!(n->storage & LS_NODE_VALS_SHARED)) {
        free((void *)(uintptr_t)n->vals);
    } else if (--block_of(n->vals)->refs == 0) {
        free(block_of(n->vals));
    }
    n->vals = NULL;
    n->storage &= (uint8_t)~(LS_NODE_VALS_SHARED | LS_NODE_VALS_INTERNED);
}

ls_node *ls_node_clone(const ls_node *src)
{
    /* one block: the node, then its args (an 8-byte aligned type) */
    size_t args_bytes = sizeof(ls_arg) * src->nargs;
    ls_node *n = ls_malloc(sizeof *n + args_bytes);
    *n = *src;
    n->refs = 1;
    n->storage = 0;
    n->args = NULL;
    n->vals = NULL;
    if (src->nargs) {
        n->args = (ls_arg *)(n + 1);
        n->storage |= LS_NODE_ARGS_INLINE;
        for (uint16_t i = 0; i < src->nargs; i++) ls_arg_copy(&n->args[i], &src->args[i]);
    }
    if (src->nvals) {
        if (src->storage & LS_NODE_VALS_INTERNED) {
            n->vals = src->vals;
            n->storage |= LS_NODE_VALS_INTERNED;
        } else if (src->storage & LS_NODE_VALS_SHARED) {
            block_of(src->vals)->refs++;
            n->vals = src->vals;
            n->storage |= LS_NODE_VALS_SHARED;
        } else {
            n->vals = vals_new(src->vals, src->nvals);
            n->storage |= LS_NODE_VALS_SHARED;
        }
    }
    return n;
}

ls_node *ls_node_ref(ls_node *n)
{
    if (n) n->refs++;
    return n;
}

void ls_node_unref(ls_node *n)
{
    if (!n || --n->refs) return;
    for (uint16_t i = 0; i < n->nargs; i++) ls_arg_free(&n->args[i]);
    if (!(n->storage & LS_NODE_ARGS_INLINE)) free(n->args);
    vals_release(n);
    free(n);
}

void ls_node_set_args(ls_node *n, ls_arg *args, uint16_t nargs)
{
    for (uint16_t i = 0; i < n->nargs; i++) ls_arg_free(&n->args[i]);
    if (!(n->storage & LS_NODE_ARGS_INLINE)) free(n->args);
    n->storage &= (uint8_t)~LS_NODE_ARGS_INLINE;
    n->args = args;
    n->nargs = nargs;
}

const ls_arg *ls_node_arg(const ls_node *n, const char *name)
{
    const char *iname = ls_intern(name);
    for (uint16_t i = 0; i < n->nargs; i++)
        if (n->args[i].name == iname) return &n->args[i];
    return NULL;
}

void ls_node_set_val(ls_node *n, const ls_tmeta *m)
{
    ls_node_set_vals(n, m ? LS_VAL_TENSOR : LS_VAL_NONE, m, m ? 1 : 0);
}

void ls_node_set_vals(ls_node *n, ls_val_kind kind, const ls_tmeta *ms, uint16_t count)
{
    const ls_tmeta *nv = count ? ls_tmeta_intern(ms, count) : NULL; /* before the release: ms may be n's own */
    vals_release(n);
    n->val_kind = (uint8_t)kind;
    n->nvals = count;
    n->vals = nv;
    if (nv) n->storage |= LS_NODE_VALS_INTERNED;
}

ls_tmeta *ls_node_vals_mut(ls_node *n)
{
    if (n->vals && (n->storage & LS_NODE_VALS_INTERNED)) {
        n->vals = vals_new(n->vals, n->nvals);
        n->storage = (uint8_t)((n->storage & ~LS_NODE_VALS_INTERNED) | LS_NODE_VALS_SHARED);
    } else if (n->vals && (n->storage & LS_NODE_VALS_SHARED) && block_of(n->vals)->refs > 1) {
        ls_tmeta *own = vals_new(n->vals, n->nvals);
        block_of(n->vals)->refs--;
        n->vals = own;
    }
    return (ls_tmeta *)(uintptr_t)n->vals; /* the node's own block now, or NULL */
}

bool ls_node_replace_input(ls_node *n, uint32_t old_id, uint32_t new_id)
{
    bool changed = false;
    for (uint16_t i = 0; i < n->nargs; i++) {
        ls_arg *a = &n->args[i];
        switch (a->kind) {
        case LS_ARG_NODE:
            if (a->v.node == old_id) a->v.node = new_id, changed = true;
            break;
        case LS_ARG_NODES:
        case LS_ARG_OPT_NODES:
            for (uint32_t j = 0; j < a->n; j++)
                if (a->v.nodes[j] == old_id) a->v.nodes[j] = new_id, changed = true;
            break;
        case LS_ARG_SYMINTS:
            for (uint32_t j = 0; j < a->n; j++)
                if (a->v.symints[j].is_node && a->v.symints[j].node == old_id) a->v.symints[j].node = new_id, changed = true;
            break;
        default: break;
        }
    }
    return changed;
}

/* ---- programs */

ls_program *ls_program_new(const char *name, ls_dialect dialect)
{
    ls_program *p = ls_calloc(1, sizeof *p);
    p->refs = 1;
    p->name = ls_intern(name);
    p->dialect = (uint8_t)dialect;
    p->verifier = ls_intern(dialect == LS_DIALECT_EDGE ? "EDGE" : "ATEN");
    p->next_id = 1;
    p->has_weights = true;
    p->schema_major = 8;
    p->schema_minor = 12;
    return p;
}

static void drop_index(ls_program *p)
{
    if (!p->index) return;
    free(p->index->pos_of_id);
    free(p->index->hash_ids);
    free(p->index->hash_pos);
    free(p->index->name_slots);
    free(p->index->user_off);
    free(p->index->users);
    free(p->index);
    p->index = NULL;
}

static ls_named_tensor *copy_named(const ls_named_tensor *src, uint32_t n)
{
    if (!n) return NULL;
    ls_named_tensor *d = ls_malloc(sizeof *d * n);
    memcpy(d, src, sizeof *d * n);
    for (uint32_t i = 0; i < n; i++) ls_tensor_ref(d[i].t);
    return d;
}

ls_program *ls_program_copy(const ls_program *src)
{
    ls_program *p = ls_malloc(sizeof *p);
    *p = *src;
    p->refs = 1;
    p->index = NULL;
    p->tables = NULL;
    for (int w = 0; w < LS_SHARED_TABLES; w++) p->shared[w] = NULL; /* each table is copied below */
    p->nodes = ls_malloc(sizeof *p->nodes * (src->n_nodes ? src->n_nodes : 1));
    p->cap_nodes = src->n_nodes ? src->n_nodes : 1;
    for (uint32_t i = 0; i < src->n_nodes; i++) p->nodes[i] = ls_node_ref(src->nodes[i]);
    p->inputs = NULL;
    p->outputs = NULL;
    p->n_inputs = p->n_outputs = 0;
    ls_program_set_inputs(p, src->inputs, src->n_inputs);
    ls_program_set_outputs(p, src->outputs, src->n_outputs);
    p->state_dict = copy_named(src->state_dict, src->n_state);
    p->constants = copy_named(src->constants, src->n_constants);
    p->subs = NULL;
    if (src->n_subs) {
        p->subs = ls_malloc(sizeof *p->subs * src->n_subs);
        for (uint32_t i = 0; i < src->n_subs; i++) ls_submodule_copy(&p->subs[i], &src->subs[i]);
    }
    p->extra_json = src->extra_json ? ls_strdup(src->extra_json) : NULL;
    ls_named_data_ref(p->named_data);
    ls_origin_ref(p->origin);
    p->instrs = NULL;
    p->exec = NULL;
    p->exec_free = NULL;
    p->as_read = false;
    p->tags = NULL;
    if (src->n_tags) {
        p->tags = ls_malloc(sizeof *p->tags * src->n_tags);
        memcpy(p->tags, src->tags, sizeof *p->tags * src->n_tags);
    }
    return p;
}

ls_origin *ls_origin_ref(ls_origin *o)
{
    if (o) o->refs++;
    return o;
}

void ls_origin_unref(ls_origin *o)
{
    if (o && --o->refs == 0 && o->destroy) o->destroy(o);
}

ls_instr_map *ls_instr_map_new(const uint32_t *chain_sizes, uint32_t n_chains)
{
    ls_instr_map *m = ls_calloc(1, sizeof *m);
    m->n_chains = n_chains;
    m->chain_first = ls_calloc(n_chains + 1, sizeof *m->chain_first);
    for (uint32_t c = 0; c < n_chains; c++) m->chain_first[c + 1] = m->chain_first[c] + chain_sizes[c];
    m->node = ls_calloc(m->chain_first[n_chains] ? m->chain_first[n_chains] : 1, sizeof *m->node);
    return m;
}

void ls_instr_map_free(ls_instr_map *m)
{
    if (!m) return;
    free(m->chain_first);
    free(m->node);
    free(m);
}

static void recorded_destroy(ls_origin *o)
{
    ls_recorded *r = (ls_recorded *)o;
    for (uint32_t i = 0; i < r->n; i++) ls_program_unref(r->programs[i]);
    free(r->programs);
    free(r->passes);
    free(r->members);
    free(r->debug_handle_map);
    free(r->delegate_map);
    free(r);
}

ls_recorded *ls_recorded_new(const char *source)
{
    ls_recorded *r = ls_calloc(1, sizeof *r);
    r->origin = (ls_origin){.refs = 1, .kind = LS_ORIGIN_RECORDED, .destroy = recorded_destroy};
    r->source = ls_intern(source);
    r->handles_step = -1;
    return r;
}

ls_recorded *ls_program_recorded(const ls_program *p)
{
    return p && p->origin && p->origin->kind == LS_ORIGIN_RECORDED ? (ls_recorded *)p->origin : NULL;
}

ls_program *ls_program_ref(ls_program *p)
{
    if (p) p->refs++;
    return p;
}

void ls_program_unref(ls_program *p)
{
    if (!p || --p->refs) return;
    for (uint32_t i = 0; i < p->n_nodes; i++) ls_node_unref(p->nodes[i]);
    free(p->nodes);
    ls_program_release_tables(p);
    for (uint32_t i = 0; i < p->n_subs; i++) ls_submodule_release(&p->subs[i]);
    free(p->subs);
    free(p->extra_json);
    ls_named_data_unref(p->named_data);
    ls_origin_unref(p->origin);
    ls_instr_map_free(p->instrs);
    if (p->exec_free) p->exec_free(p->exec);
    free(p->tags);
    drop_index(p);
    ls_program_tables_free(p);
    free(p);
}

void ls_program_touch(ls_program *p)
{
    drop_index(p);
}

static void renumber_arg(ls_arg *a, const uint32_t *to, uint32_t cap)
{
#define RENUMBER(x) ((x) && (x) < cap && to[x] ? to[x] : (x))
    switch (a->kind) {
    case LS_ARG_NODE: a->v.node = RENUMBER(a->v.node); break;
    case LS_ARG_NODES:
    case LS_ARG_OPT_NODES:
        for (uint32_t k = 0; k < a->n; k++) a->v.nodes[k] = RENUMBER(a->v.nodes[k]);
        break;
    case LS_ARG_SYMINTS:
        for (uint32_t k = 0; k < a->n; k++)
            if (a->v.symints[k].is_node) a->v.symints[k].node = RENUMBER(a->v.symints[k].node);
        break;
    default: break;
    }
#undef RENUMBER
}

void ls_program_renumber(ls_program *p, const uint32_t *ids)
{
    uint32_t cap = p->next_id, next = 1;
    for (uint32_t i = 0; i < p->n_nodes; i++)
        if (p->nodes[i]->id >= cap) cap = p->nodes[i]->id + 1;
    uint32_t *to = ls_calloc(cap, sizeof *to);
    for (uint32_t i = 0; i < p->n_nodes; i++) {
        to[p->nodes[i]->id] = ids[i];
        if (ids[i] >= next) next = ids[i] + 1;
    }
    for (uint32_t i = 0; i < p->n_nodes; i++) {
        ls_node *n = ls_program_edit(p, i);
        for (uint16_t k = 0; k < n->nargs; k++) renumber_arg(&n->args[k], to, cap);
        n->id = ids[i];
    }
    free(to);
    p->next_id = next;
    drop_index(p);
}

ls_node *ls_program_edit(ls_program *p, uint32_t pos)
{
    p->as_read = false;
    ls_node *n = p->nodes[pos];
    if (n->refs > 1) {
        ls_node *c = ls_node_clone(n);
        ls_node_unref(n);
        p->nodes[pos] = c;
        n = c;
    }
    drop_index(p);
    return n;
}

static void reserve_nodes(ls_program *p, uint32_t want)
{
    if (want <= p->cap_nodes) return;
    uint32_t nc = p->cap_nodes ? p->cap_nodes : 16;
    while (nc < want) nc *= 2;
    p->nodes = ls_realloc(p->nodes, sizeof *p->nodes * nc);
    p->cap_nodes = nc;
}

void ls_program_insert(ls_program *p, uint32_t pos, ls_node *n)
{
    if (pos > p->n_nodes) pos = p->n_nodes;
    reserve_nodes(p, p->n_nodes + 1);
    memmove(p->nodes + pos + 1, p->nodes + pos, sizeof *p->nodes * (p->n_nodes - pos));
    p->nodes[pos] = n;
    p->n_nodes++;
    if (n->id >= p->next_id) p->next_id = n->id + 1;
    drop_index(p);
}

void ls_program_append(ls_program *p, ls_node *n)
{
    ls_program_insert(p, p->n_nodes, n);
}

void ls_program_remove(ls_program *p, uint32_t pos)
{
    if (pos >= p->n_nodes) return;
    ls_node_unref(p->nodes[pos]);
    memmove(p->nodes + pos, p->nodes + pos + 1, sizeof *p->nodes * (p->n_nodes - pos - 1));
    p->n_nodes--;
    drop_index(p);
}

void ls_program_set_nodes(ls_program *p, ls_node **nodes, uint32_t n)
{
    p->as_read = false;
    ls_node **old = p->nodes;
    uint32_t n_old = p->n_nodes;
    p->nodes = ls_malloc(sizeof *p->nodes * (n ? n : 1));
    memcpy(p->nodes, nodes, sizeof *p->nodes * n);
    p->n_nodes = p->cap_nodes = n;
    if (!p->cap_nodes) p->cap_nodes = 1;
    for (uint32_t i = 0; i < n; i++)
        if (nodes[i]->id >= p->next_id) p->next_id = nodes[i]->id + 1;
    for (uint32_t i = 0; i < n_old; i++) ls_node_unref(old[i]);
    free(old);
    drop_index(p);
}

/* ---- index */

static uint32_t name_hash(const char *s)
{
    uintptr_t x = (uintptr_t)s;
    x ^= x >> 15;
    x *= 0x9E3779B97F4A7C15ull;
    return (uint32_t)(x >> 24);
}

static uint32_t id_slot(uint32_t id, uint32_t cap)
{
    return (uint32_t)(((uint64_t)id * 0x9E3779B97F4A7C15ull) >> 32) & (cap - 1);
}

static int32_t index_pos(const ls_index *ix, uint32_t id)
{
    if (ix->pos_of_id) return id < ix->id_cap ? ix->pos_of_id[id] : -1;
    if (!id) return -1;
    for (uint32_t s = id_slot(id, ix->hash_cap); ix->hash_ids[s]; s = (s + 1) & (ix->hash_cap - 1))
        if (ix->hash_ids[s] == id) return ix->hash_pos[s];
    return -1;
}

static ls_index *build_index(ls_program *p);

/* The index is a cache: building it does not change p. Programs of the history are shared by
 * the UI's thread and the pipeline's, so it is built under the cache lock and published with a
 * release store (a program is never changed once it is in the history). */
static ls_index *index_of(const ls_program *cp)
{
    ls_program *p = (ls_program *)cp;
    ls_index *ix = __atomic_load_n(&p->index, __ATOMIC_ACQUIRE);
    if (ix) return ix;
    ls_cache_lock();
    ix = p->index;
    if (!ix) {
        ix = build_index(p);
        __atomic_store_n(&p->index, ix, __ATOMIC_RELEASE);
    }
    ls_cache_unlock();
    return ix;
}

static ls_index *build_index(ls_program *p)
{
    ls_index *ix = ls_calloc(1, sizeof *ix);
    uint32_t max_id = p->next_id;
    for (uint32_t i = 0; i < p->n_nodes; i++)
        if (p->nodes[i]->id >= max_id) max_id = p->nodes[i]->id + 1;
    if (max_id <= 4u * p->n_nodes + 1024u) {
        ix->id_cap = max_id + 1;
        ix->pos_of_id = ls_malloc(sizeof *ix->pos_of_id * ix->id_cap);
        memset(ix->pos_of_id, 0xff, sizeof *ix->pos_of_id * ix->id_cap);
    } else {
        uint32_t hc = 16;
        while (hc < p->n_nodes * 2 + 2) hc *= 2;
        ix->hash_cap = hc;
        ix->hash_ids = ls_calloc_table(hc, sizeof *ix->hash_ids);
        ix->hash_pos = ls_malloc(sizeof *ix->hash_pos * hc);
    }
    uint32_t cap = 16;
    while (cap < p->n_nodes * 2 + 2) cap *= 2;
    ix->name_cap = cap;
    ix->name_slots = ls_malloc(sizeof *ix->name_slots * cap);
    memset(ix->name_slots, 0xff, sizeof *ix->name_slots * cap);
    for (uint32_t i = 0; i < p->n_nodes; i++) {
        const ls_node *n = p->nodes[i];
        if (ix->pos_of_id) {
            if (n->id < ix->id_cap) ix->pos_of_id[n->id] = (int32_t)i;
        } else if (n->id) {
            uint32_t h = id_slot(n->id, ix->hash_cap);
            while (ix->hash_ids[h] && ix->hash_ids[h] != n->id) h = (h + 1) & (ix->hash_cap - 1);
            ix->hash_ids[h] = n->id;
            ix->hash_pos[h] = (int32_t)i;
        }
        uint32_t s = name_hash(n->name) & (cap - 1);
        while (ix->name_slots[s] >= 0) s = (s + 1) & (cap - 1);
        ix->name_slots[s] = (int32_t)i;
    }
    return ix;
}

int32_t ls_program_find(const ls_program *p, const char *name)
{
    const char *iname = ls_intern(name);
    if (!iname) return -1;
    ls_index *ix = index_of(p);
    for (uint32_t s = name_hash(iname) & (ix->name_cap - 1); ix->name_slots[s] >= 0; s = (s + 1) & (ix->name_cap - 1))
        if (p->nodes[ix->name_slots[s]]->name == iname) return ix->name_slots[s];
    return -1;
}

int32_t ls_program_pos(const ls_program *p, uint32_t id)
{
    return index_pos(index_of(p), id);
}

ls_node *ls_program_node(const ls_program *p, uint32_t id)
{
    int32_t pos = ls_program_pos(p, id);
    return pos >= 0 ? p->nodes[pos] : NULL;
}

ls_node *ls_program_output(const ls_program *p)
{
    for (uint32_t i = p->n_nodes; i-- > 0;)
        if (p->nodes[i]->kind == LS_NODE_OUTPUT) return p->nodes[i];
    return NULL;
}

typedef struct user_ctx {
    ls_index *ix;
    uint32_t user_pos;
    uint32_t *last_user; /* per source: the last user recorded, so a node reading a value twice counts once */
    uint32_t *cursor;    /* pass 1: counts; pass 2: fill positions */
    uint32_t *users;     /* NULL in pass 1 */
} user_ctx;

static void record_use(uint32_t id, void *vctx)
{
    user_ctx *c = vctx;
    int32_t at = index_pos(c->ix, id);
    if (at < 0) return;
    uint32_t src = (uint32_t)at;
    if (c->last_user[src] == c->user_pos) return;
    c->last_user[src] = c->user_pos;
    if (c->users) c->users[c->cursor[src]++] = c->user_pos;
    else c->cursor[src]++;
}

static void users_pass(const ls_program *p, user_ctx *c)
{
    memset(c->last_user, 0xff, sizeof *c->last_user * (p->n_nodes ? p->n_nodes : 1));
    for (uint32_t i = 0; i < p->n_nodes; i++) {
        c->user_pos = i;
        for (uint16_t a = 0; a < p->nodes[i]->nargs; a++) ls_arg_each_node(&p->nodes[i]->args[a], record_use, c);
    }
}

static void build_users(const ls_program *p, ls_index *ix);

const uint32_t *ls_program_users(const ls_program *p, uint32_t pos, uint32_t *count)
{
    ls_index *ix = index_of(p);
    if (!__atomic_load_n(&ix->user_off, __ATOMIC_ACQUIRE)) {
        ls_cache_lock();
        if (!ix->user_off) build_users(p, ix);
        ls_cache_unlock();
    }
    if (pos >= p->n_nodes) {
        *count = 0;
        return NULL;
    }
    *count = ix->user_off[pos + 1] - ix->user_off[pos];
    return ix->users + ix->user_off[pos];
}

static void build_users(const ls_program *p, ls_index *ix)
{
    {
        uint32_t n = p->n_nodes;
        user_ctx c = {.ix = ix};
        c.last_user = ls_malloc(sizeof *c.last_user * (n ? n : 1));
        c.cursor = ls_calloc(n + 1, sizeof *c.cursor);
        users_pass(p, &c);
        uint32_t *off = ls_malloc(sizeof *off * (n + 1));
        uint32_t total = 0;
        for (uint32_t i = 0; i < n; i++) {
            off[i] = total;
            total += c.cursor[i];
            c.cursor[i] = off[i];
        }
        off[n] = total;
        ix->users = ls_malloc(sizeof *ix->users * (total ? total : 1));
        c.users = ix->users;
        users_pass(p, &c);
        free(c.last_user);
        free(c.cursor);
        __atomic_store_n(&ix->user_off, off, __ATOMIC_RELEASE); /* last: readers test it */
    }
}

typedef struct id_probe {
    uint32_t id;
    bool found;
} id_probe;

static void probe_id(uint32_t id, void *ctx)
{
    id_probe *pr = ctx;
    pr->found |= id == pr->id;
}

static bool node_reads(const ls_node *n, uint32_t id)
{
    id_probe pr = {id, false};
    for (uint16_t a = 0; a < n->nargs && !pr.found; a++) ls_arg_each_node(&n->args[a], probe_id, &pr);
    return pr.found;
}

void ls_program_replace_uses(ls_program *p, uint32_t old_id, uint32_t new_id)
{
    int32_t src = ls_program_pos(p, old_id);
    if (src < 0) {
        /* not in this program (an outside value): every node that reads it gets a private copy */
        for (uint32_t i = 0; i < p->n_nodes; i++)
            if (node_reads(p->nodes[i], old_id)) ls_node_replace_input(ls_program_edit(p, i), old_id, new_id);
        return;
    }
    uint32_t n;
    const uint32_t *users = ls_program_users(p, (uint32_t)src, &n);
    uint32_t *copy = ls_malloc(sizeof *copy * (n ? n : 1));
    if (n) memcpy(copy, users, sizeof *copy * n);
    for (uint32_t i = 0; i < n; i++) ls_node_replace_input(ls_program_edit(p, copy[i]), old_id, new_id);
    free(copy);
    drop_index(p);
}

const char *ls_program_unique_name(const ls_program *p, const char *base)
{
    ls_namer *nm = ls_namer_new(p);
    const char *r = ls_namer_take(nm, base);
    ls_namer_free(nm);
    return r;
}
