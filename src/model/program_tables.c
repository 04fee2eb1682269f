/* A program's tables beside its nodes: the graph signature (input and output specs), the state
 * dict, the constants, the lowered submodules and the delegation tags. The nodes are program.c's. */
#include "program.h"
#include <stddef.h>
#include <stdlib.h>
#include <string.h>
#include "named_data.h"
#include "namer.h"
#include "ptrmap.h"

/* ---- name lookups: the UI asks these tables by name for every row it draws and every step it
 * shows (a program of a million nodes has hundreds of thousands of constants and thousands of
 * lowered modules), so each table gets a map from the interned name to its first entry, built
 * on the first lookup. A map remembers the array and count it was built for and is built again
 * when they differ (a table replaced or resized); the functions below that change a table drop
 * its map or, when they append, keep it up to date (a pass adding constants one by one stays
 * linear). Programs in the history are read by the UI's thread while the pipeline's thread
 * reads them too, so maps are built under ls_cache_lock and published with a release store. */

enum { T_INPUTS, T_OUTPUTS, T_STATE, T_CONSTANTS, T_SUBS, T_TAGS, T_COUNT };

typedef struct name_map {
    const void *arr; /* the array and count the map describes */
    uint32_t n;
    bool built;
    ls_ptrmap map; /* interned name → index */
} name_map;

struct ls_tables {
    name_map m[T_COUNT];
};

typedef struct table_view {
    const void *arr;
    uint32_t n;
    size_t stride, name_off;
} table_view;

static table_view view_of(const ls_program *p, int which)
{
    switch (which) {
    case T_INPUTS: return (table_view){p->inputs, p->n_inputs, sizeof *p->inputs, offsetof(ls_input_spec, name)};
    case T_OUTPUTS: return (table_view){p->outputs, p->n_outputs, sizeof *p->outputs, offsetof(ls_output_spec, name)};
    case T_STATE: return (table_view){p->state_dict, p->n_state, sizeof *p->state_dict, offsetof(ls_named_tensor, name)};
    case T_CONSTANTS: return (table_view){p->constants, p->n_constants, sizeof *p->constants, offsetof(ls_named_tensor, name)};
    case T_SUBS: return (table_view){p->subs, p->n_subs, sizeof *p->subs, offsetof(ls_submodule, name)};
    default: return (table_view){p->tags, p->n_tags, sizeof *p->tags, offsetof(ls_tag_info, tag)};
    }
}

static const char *name_at(const table_view *v, uint32_t i)
{
    return *(const char *const *)((const char *)v->arr + v->stride * i + v->name_off);
}

static bool map_current(const name_map *m, const table_view *v)
{
    return __atomic_load_n(&m->built, __ATOMIC_ACQUIRE) && m->arr == v->arr && m->n == v->n;
}

static void map_fill(name_map *m, const table_view *v)
{
    ls_ptrmap_free(&m->map);
    ls_ptrmap_reserve(&m->map, v->n);
    for (uint32_t i = 0; i < v->n; i++) ls_ptrmap_add(&m->map, name_at(v, i), i, NULL);
    m->arr = v->arr;
    m->n = v->n;
}

/* Small tables are read through: a map pays from a few dozen entries. */
#define MAP_FROM 16

static int32_t table_find(const ls_program *p, int which, const char *iname)
{
    table_view v = view_of(p, which);
    if (!iname || !v.n) return -1;
    if (v.n < MAP_FROM) {
        for (uint32_t i = 0; i < v.n; i++)
            if (name_at(&v, i) == iname) return (int32_t)i;
        return -1;
    }
    ls_tables *tb = __atomic_load_n(&p->tables, __ATOMIC_ACQUIRE);
    name_map *m = tb ? &tb->m[which] : NULL;
    if (!m || !map_current(m, &v)) {
        ls_cache_lock();
        tb = p->tables;
        if (!tb) {
            tb = ls_calloc(1, sizeof *tb);
            __atomic_store_n(&((ls_program *)p)->tables, tb, __ATOMIC_RELEASE);
        }
        m = &tb->m[which];
        if (!map_current(m, &v)) {
            __atomic_store_n(&m->built, false, __ATOMIC_RELAXED);
            map_fill(m, &v);
            __atomic_store_n(&m->built, true, __ATOMIC_RELEASE);
        }
        ls_cache_unlock();
    }
    uint32_t i;
    return ls_ptrmap_get_u32(&m->map, iname, &i) ? (int32_t)i : -1;
}

/* A name given to look up is nearly always interned already (a node's target, a tag): its
 * pointer is tried first, with no intern, which at a million nodes is a cache miss in the names
 * table (the UI's tag filter looked up every delegate's submodule so); a copy is interned and
 * looked up again. */
static int32_t table_find_name(const ls_program *p, int which, const char *name)
{
    if (!name) return -1;
    int32_t i = table_find(p, which, name);
    if (i >= 0) return i;
    const char *in = ls_intern(name);
    return in == name ? -1 : table_find(p, which, in);
}

/* After a table changed in place: its map is built again on the next lookup. */
static void table_changed(ls_program *p, int which)
{
    if (p->tables) p->tables->m[which].built = false;
}

/* After one entry was appended (the array may have moved): a map that described the table
 * before takes the entry too. */
static void table_appended(ls_program *p, int which, const void *old_arr)
{
    if (!p->tables) return;
    name_map *m = &p->tables->m[which];
    table_view v = view_of(p, which);
    if (!m->built || m->arr != old_arr || m->n + 1 != v.n) {
        m->built = false;
        return;
    }
    ls_ptrmap_add(&m->map, name_at(&v, v.n - 1), v.n - 1, NULL);
    m->arr = v.arr;
    m->n = v.n;
}

void ls_program_tables_touch(ls_program *p)
{
    for (int i = 0; i < T_COUNT; i++) table_changed(p, i);
}

void ls_program_tables_free(ls_program *p)
{
    if (!p->tables) return;
    for (int i = 0; i < T_COUNT; i++) ls_ptrmap_free(&p->tables->m[i].map);
    free(p->tables);
    p->tables = NULL;
}

/* ---- submodules */

void ls_submodule_copy(ls_submodule *d, const ls_submodule *s)
{
    *d = *s;
    d->program = ls_program_ref(s->program);
    d->processed = ls_blob_ref(s->processed);
    d->specs = NULL;
    if (s->nspecs) {
        d->specs = ls_malloc(sizeof *d->specs * s->nspecs);
        for (uint32_t i = 0; i < s->nspecs; i++) {
            d->specs[i].key = s->specs[i].key;
            d->specs[i].value = ls_blob_ref(s->specs[i].value);
        }
    }
}

void ls_submodule_release(ls_submodule *s)
{
    ls_program_unref(s->program);
    ls_blob_unref(s->processed);
    for (uint32_t i = 0; i < s->nspecs; i++) ls_blob_unref(s->specs[i].value);
    free(s->specs);
}

/* ---- signature and data */

int32_t ls_program_input_spec(const ls_program *p, const char *placeholder)
{
    return table_find_name(p, T_INPUTS, placeholder);
}

int32_t ls_program_output_spec(const ls_program *p, const char *name)
{
    return table_find_name(p, T_OUTPUTS, name);
}

void ls_program_set_inputs(ls_program *p, const ls_input_spec *specs, uint32_t n)
{
    ls_program_own_table(p, LS_SHARED_INPUTS); /* specs may be the shared array: still held */
    ls_input_spec *ns = ls_malloc(sizeof *ns * (n ? n : 1));
    for (uint32_t i = 0; i < n; i++) {
        ns[i] = specs[i];
        ls_arg_copy(&ns[i].value, &specs[i].value);
    }
    for (uint32_t i = 0; i < p->n_inputs; i++) ls_arg_free(&p->inputs[i].value);
    free(p->inputs);
    p->inputs = ns;
    p->n_inputs = n;
    table_changed(p, T_INPUTS);
}

void ls_program_set_outputs(ls_program *p, const ls_output_spec *specs, uint32_t n)
{
    ls_program_own_table(p, LS_SHARED_OUTPUTS);
    ls_output_spec *ns = ls_malloc(sizeof *ns * (n ? n : 1));
    if (n) memcpy(ns, specs, sizeof *ns * n);
    free(p->outputs);
    p->outputs = ns;
    p->n_outputs = n;
    table_changed(p, T_OUTPUTS);
}

static ls_named_tensor *find_named(const ls_program *p, int which, const char *target)
{
    int32_t i = table_find_name(p, which, target);
    return i < 0 ? NULL : which == T_STATE ? &p->state_dict[i] : &p->constants[i];
}

ls_named_tensor *ls_program_state(const ls_program *p, const char *target)
{
    return find_named(p, T_STATE, target);
}

ls_named_tensor *ls_program_constant(const ls_program *p, const char *target)
{
    return find_named(p, T_CONSTANTS, target);
}

ls_named_tensor *ls_program_spec_data(const ls_program *p, const ls_input_spec *s)
{
    if (!ls_input_kind_holds_data(s->kind)) return NULL;
    return ls_input_in_state(s->kind, s->persistent) ? ls_program_state(p, s->target) : ls_program_constant(p, s->target);
}

static void put_named(ls_program *p, int which, const char *target, ls_tensor *t, const ls_tmeta *meta)
{
    ls_program_own_table(p, which == T_STATE ? LS_SHARED_STATE : LS_SHARED_CONSTANTS);
    ls_named_tensor **v = which == T_STATE ? &p->state_dict : &p->constants;
    uint32_t *n = which == T_STATE ? &p->n_state : &p->n_constants;
    ls_named_tensor *e = find_named(p, which, target);
    if (!e) {
        const void *old = *v;
        *v = ls_realloc(*v, sizeof **v * (*n + 1));
        e = &(*v)[(*n)++];
        e->name = ls_intern(target);
        e->t = NULL;
        e->meta = NULL;
        table_appended(p, which, old);
    }
    ls_tensor *prev = e->t;
    e->t = ls_tensor_ref(t);
    ls_tensor_unref(prev);
    ls_tmeta m = {0}; /* neither meta nor t: no metadata, but always a tmeta to read */
    if (meta) m = *meta;
    else if (t) ls_tensor_meta(t, &m);
    else if (e->meta) return;
    e->meta = ls_tmeta_intern(&m, 1);
}

static bool drop_named(ls_program *p, int which, const char *target)
{
    ls_program_own_table(p, which == T_STATE ? LS_SHARED_STATE : LS_SHARED_CONSTANTS);
    ls_named_tensor *v = which == T_STATE ? p->state_dict : p->constants;
    uint32_t *n = which == T_STATE ? &p->n_state : &p->n_constants;
    ls_named_tensor *e = find_named(p, which, target);
    if (!e) return false;
    ls_tensor_unref(e->t);
    size_t i = (size_t)(e - v);
    memmove(v + i, v + i + 1, sizeof *v * (*n - i - 1));
    (*n)--;
    table_changed(p, which);
    return true;
}

void ls_program_put_state(ls_program *p, const char *target, ls_tensor *t, const ls_tmeta *meta)
{
    put_named(p, T_STATE, target, t, meta);
}

void ls_program_put_constant(ls_program *p, const char *target, ls_tensor *t, const ls_tmeta *meta)
{
    put_named(p, T_CONSTANTS, target, t, meta);
}

bool ls_program_drop_state(ls_program *p, const char *target)
{
    return drop_named(p, T_STATE, target);
}

bool ls_program_drop_constant(ls_program *p, const char *target)
{
    return drop_named(p, T_CONSTANTS, target);
}

ls_submodule *ls_program_sub(const ls_program *p, const char *name)
{
    int32_t i = table_find_name(p, T_SUBS, name);
    return i >= 0 ? &p->subs[i] : NULL;
}

void ls_program_add_sub(ls_program *p, const ls_submodule *sub)
{
    const void *old = p->subs;
    p->subs = ls_realloc(p->subs, sizeof *p->subs * (p->n_subs + 1));
    ls_submodule_copy(&p->subs[p->n_subs++], sub);
    table_appended(p, T_SUBS, old);
}

uint64_t ls_program_weight_bytes(const ls_program *p)
{
    uint64_t total = 0;
    for (uint32_t i = 0; i < p->n_state; i++) total += ls_tmeta_nbytes(p->state_dict[i].meta);
    for (uint32_t i = 0; i < p->n_constants; i++) total += ls_tmeta_nbytes(p->constants[i].meta);
    return total;
}

const char *ls_program_tag_backend(const ls_program *p, const char *tag)
{
    int32_t i = table_find_name(p, T_TAGS, tag);
    return i >= 0 ? p->tags[i].backend_id : NULL;
}

void ls_program_add_tag(ls_program *p, const char *tag, const char *backend_id)
{
    const char *t = ls_intern(tag);
    int32_t i = table_find(p, T_TAGS, t);
    if (i >= 0) {
        p->tags[i].backend_id = ls_intern(backend_id);
        return;
    }
    const void *old = p->tags;
    p->tags = ls_realloc(p->tags, sizeof *p->tags * (p->n_tags + 1));
    p->tags[p->n_tags].tag = t;
    p->tags[p->n_tags].backend_id = ls_intern(backend_id);
    p->n_tags++;
    table_appended(p, T_TAGS, old);
}

ls_named_data *ls_program_named_data_mut(ls_program *p)
{
    p->named_data = p->named_data ? ls_named_data_own(p->named_data) : ls_named_data_new();
    return p->named_data;
}
