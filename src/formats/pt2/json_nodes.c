/* The exported-program JSON reader, nodes: torch.export's serialized nodes (schema 8.x and the
 * old v1 form with every union member written out) into the program model, in one pass over
 * the cJSON tree. Names are interned once and resolved through hash maps, so loading is linear
 * in the size of the file. The rest: json_args.c (arguments), json_program.c (signature,
 * placeholders, outputs), weights.c (data). */
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "build.h"
#include "namer.h"
#include "ops.h"
#include "ptrmap.h"
#include "json_loader.h"

/* ---- small things */

static int node_fail(loader *L, const ls_node *n, uint32_t idx, const char *fmt, ...) LS_PRINTF(4, 5);
static int node_fail(loader *L, const ls_node *n, uint32_t idx, const char *fmt, ...)
{
    char what[LS_ERR_MAX / 2];
    va_list ap;
    va_start(ap, fmt);
    vsnprintf(what, sizeof what, fmt, ap);
    va_end(ap);
    if (n && n->name) return ls_fail(L->err, "%s: node '%s': %s", L->where, n->name, what);
    return ls_fail(L->err, "%s: graph node #%u (%s): %s", L->where, idx, n && n->target ? n->target : "?", what);
}

const char *ls_loader_intern(loader *L, const char *s)
{
    size_t n = strlen(s);
    uint64_t h = ls_strmap_hash(s, n);
    unsigned i = (unsigned)h & 511u;
    if (L->icache[i].s && L->icache[i].hash == h && L->icache[i].len == n && memcmp(L->icache[i].s, s, n) == 0)
        return L->icache[i].s;
    L->icache[i].s = ls_intern_n(s, n);
    L->icache[i].hash = h;
    L->icache[i].len = n;
    return L->icache[i].s;
}

uint32_t ls_loader_lookup(loader *L, const char *name)
{
    ls_strmap_slot *s = ls_strmap_find(&L->values, name, ls_strmap_hash(name, strlen(name)));
    return s ? (uint32_t)s->val : 0;
}

static int define_hashed(loader *L, ls_node *n, uint64_t h)
{
    bool added;
    ls_strmap_slot *s = ls_strmap_add(&L->values, n->name, h, n->id, &added);
    if (!added) {
        ls_node *prev = ls_program_node(L->p, (uint32_t)s->val);
        return ls_fail(L->err, "%s: node '%s': the name is already used by an earlier %s", L->where, n->name,
                       prev && prev->kind == LS_NODE_PLACEHOLDER ? "placeholder" : "node");
    }
    return 0;
}

int ls_loader_define(loader *L, ls_node *n, uint64_t *hash)
{
    uint64_t h = ls_strmap_hash(n->name, strlen(n->name));
    if (hash) *hash = h;
    return define_hashed(L, n, h);
}

/* ---- node metadata */

/* custom metadata: {"delegation_tag": "tag0", ...}. The tag goes to n->tag, the rest (if any)
 * stays as JSON text. json.dumps spacing makes the common case easy to read without cJSON. */
static void read_custom(loader *L, ls_node *n, ls_node_text *t, const char *s)
{
    static const char key[] = "\"delegation_tag\"";
    const char *p = s;
    while (*p == ' ') p++;
    if (*p == '{') {
        p++;
        while (*p == ' ') p++;
        if (strncmp(p, key, sizeof key - 1) == 0) {
            p += sizeof key - 1;
            while (*p == ' ') p++;
            if (*p == ':') {
                p++;
                while (*p == ' ') p++;
                const char *q = p + 1;
                if (*p == '"') {
                    while (*q && *q != '"' && *q != '\\') q++;
                    const char *e = q + (*q == '"');
                    while (*e == ' ') e++;
                    if (*q == '"' && e[0] == '}' && e[1] == 0) {
                        size_t tl = (size_t)(q - p - 1);
                        const char *last = L->last_tag;
                        if (last && strncmp(last, p + 1, tl) == 0 && last[tl] == 0) n->tag = last;
                        else n->tag = L->last_tag = ls_intern_n(p + 1, tl);
                        return;
                    }
                }
            }
        }
    }
    cJSON *c = cJSON_Parse(s);
    if (!c || !cJSON_IsObject(c)) {
        t->custom = ls_intern(s); /* not an object: keep the text as it is */
        ls_json_free(c);
        return;
    }
    const char *tag = ls_jstr(ls_jget(c, "delegation_tag"));
    if (tag) {
        n->tag = ls_intern(tag);
        cJSON_DeleteItemFromObjectCaseSensitive(c, "delegation_tag");
    }
    if (c->child) {
        char *rest = cJSON_PrintUnformatted(c);
        t->custom = ls_intern(rest);
        cJSON_free(rest);
    }
    ls_json_free(c);
    (void)L;
}

static void read_metadata(loader *L, ls_node *n, const cJSON *md)
{
    if (!md) return;
    ls_node_text t = {0};
    /* the texts are interned together at the end (ls_intern_text_batch); a key given twice
     * keeps its last text, as one by one */
    ls_intern_item items[4];
    const char **dest[4];
    size_t nitems = 0;
#define TEXT(field)                                                   \
    do {                                                              \
        size_t at = 0;                                                \
        while (at < nitems && dest[at] != &t.field) at++;             \
        items[at] = (ls_intern_item){.s = s, .n = strlen(s)};         \
        dest[at] = &t.field;                                          \
        if (at == nitems) nitems++;                                   \
    } while (0)
    for (const cJSON *c = md->child; c; c = c->next) {
        const char *k = c->string, *s = ls_jstr(c);
        if (!k || !s) continue;
        switch (k[0]) {
        case 's':
            if (ls_key_is(k, "stack_trace")) TEXT(stack_trace);
            else if (ls_key_is(k, "source_fn_stack")) TEXT(source_fn);
            break;
        case 'n':
            if (ls_key_is(k, "nn_module_stack")) TEXT(module_stack);
            else if (ls_key_is(k, "no_copy")) n->no_copy = ls_key_is(s, "True") || ls_key_is(s, "true");
            break;
        case 't':
            if (ls_key_is(k, "torch_fn")) TEXT(torch_fn);
            break;
        case 'c':
            if (ls_key_is(k, "custom")) read_custom(L, n, &t, s);
            break;
        case 'd':
            if (ls_key_is(k, "debug_handle")) n->debug_handle = strtoll(s, NULL, 10);
            else if (ls_key_is(k, "delegation_tag")) n->tag = ls_loader_intern(L, s);
            break;
        default: break;
        }
    }
#undef TEXT
    ls_intern_text_batch(items, nitems);
    for (size_t i = 0; i < nitems; i++) *dest[i] = items[i].interned;
    n->text = ls_node_text_intern(&t);
}

static void note_tag(loader *L, const char *tag)
{
    uintptr_t dummy;
    if (!tag || ls_ptrmap_get(&L->tag_seen, tag, &dummy)) return;
    ls_ptrmap_put(&L->tag_seen, tag, 1);
    ls_vec_push(&L->tag_order, tag);
}

/* ---- values */

/* The entry of tensor_values for `name`: torch writes them in graph order, so the one after the
 * last found usually is it; otherwise a hash map of all of them, made once. */
static const cJSON *find_tval(loader *L, const char *name, uint64_t hash)
{
    if (L->js) return ls_loader_stream_tval(L, name);
    const cJSON *c = L->tv_cursor;
    if (c && c->string && strcmp(c->string, name) == 0) {
        L->tv_cursor = c->next;
        return c;
    }
    if (!L->tv_all) return NULL;
    if (!L->tvals.cap) {
        ls_strmap_reserve(&L->tvals, (uint32_t)cJSON_GetArraySize(L->tv_all));
        bool added;
        for (const cJSON *t = L->tv_all->child; t; t = t->next)
            if (t->string) ls_strmap_add(&L->tvals, t->string, ls_strmap_hash(t->string, strlen(t->string)), (uintptr_t)t, &added);
    }
    ls_strmap_slot *s = ls_strmap_find(&L->tvals, name, hash);
    if (!s) return NULL;
    c = (const cJSON *)s->val;
    L->tv_cursor = c->next;
    return c;
}

bool ls_loader_tmeta(loader *L, const char *name, uint64_t hash, ls_tmeta *m)
{
    const cJSON *tv = find_tval(L, name, hash);
    if (!tv) return false;
    ls_error e;
    if (ls_read_tmeta(tv, m, NULL, NULL, &e) != 0) {
        if (!L->deferred_fail) {
            L->deferred_fail = true;
            ls_fail(L->err, "%s: value '%s': %s", L->where, name, e.msg);
        }
        return false;
    }
    return true;
}

/* ---- call nodes */

static const ls_op *target_op(loader *L, const char *target, uint8_t *dialect)
{
    uintptr_t v;
    if (ls_ptrmap_get(&L->targets, target, &v)) {
        *dialect = (uint8_t)(v & 3);
        return (const ls_op *)(v & ~(uintptr_t)3);
    }
    ls_dialect d;
    const ls_op *op = ls_op_from_target(target, &d);
    ls_ptrmap_put(&L->targets, target, (uintptr_t)op | (uintptr_t)d);
    *dialect = (uint8_t)d;
    return op;
}

/* The interned name of an argument: for a known op, its schema's (no hashing). */
static const char *arg_name(loader *L, const ls_op *op, const char *name)
{
    if (op)
        for (int i = 0; i < op->schema.nparams; i++)
            if (ls_key_is(name, op->schema.params[i].name)) return op->schema.params[i].name;
    return ls_loader_intern(L, name);
}

/* Reads a node's NamedArguments as the file has them (names, keyword flags) into buf when
 * they fit (most nodes: no allocation), else into a new array; *heap says which. */
static int read_inputs(loader *L, ls_node *n, uint32_t idx, const cJSON *inputs, bool skip_first, ls_arg *buf,
                       int bufcap, ls_arg **out, uint16_t *nout, bool *heap)
{
    int count = inputs ? cJSON_GetArraySize(inputs) : 0;
    if (count > LS_MAX_NODE_ARGS) return node_fail(L, n, idx, "%d arguments", count);
    *heap = count > bufcap;
    ls_arg *given = *heap ? ls_calloc((size_t)count, sizeof *given) : buf;
    uint16_t g = 0;
    int i = 0;
    for (const cJSON *in = inputs ? inputs->child : NULL; in; in = in->next, i++) {
        if (skip_first && i == 0) continue;
        const char *aname = NULL;
        const cJSON *arg = NULL;
        int64_t kind = 0;
        for (const cJSON *c = in->child; c; c = c->next) {
            if (!c->string) continue;
            if (c->string[0] == 'n' && ls_key_is(c->string, "name")) aname = ls_jstr(c);
            else if (c->string[0] == 'a' && ls_key_is(c->string, "arg")) arg = cJSON_IsNull(c) ? NULL : c;
            else if (c->string[0] == 'k' && ls_key_is(c->string, "kind")) ls_jint(c, &kind);
        }
        if (!arg || ls_loader_read_arg(L, arg, &given[g]) != 0) {
            if (!arg) ls_fail(L->err, "no arg");
            char argplace[96];
            if (aname && *aname) snprintf(argplace, sizeof argplace, "argument '%s'", aname);
            else snprintf(argplace, sizeof argplace, "argument %d", i);
            if (n->name) ls_fail_prefix(L->err, "%s: node '%s' %s", L->where, n->name, argplace);
            else ls_fail_prefix(L->err, "%s: graph node #%u (%s) %s", L->where, idx, n->target, argplace);
            /* given[g] holds something only when the reader ran (it clears it on failure) */
            for (uint16_t j = 0; j < g + (arg != NULL); j++) ls_arg_free(&given[j]);
            if (*heap) free(given);
            return -1;
        }
        given[g].name = aname && *aname ? arg_name(L, n->op, aname) : NULL;
        if (kind == 2) given[g].flags |= LS_ARGF_KEYWORD;
        g++;
    }
    *out = given;
    *nout = g;
    return 0;
}

/* The args array a node keeps: on the heap, with room for `extra` more in front. */
static ls_arg *heap_args(ls_arg *given, uint16_t n, bool heap, uint16_t extra)
{
    if (heap && !extra) return given;
    ls_arg *a = ls_calloc((size_t)n + extra ? (size_t)n + extra : 1, sizeof *a);
    if (n) memcpy(a + extra, given, sizeof *a * n);
    if (heap) free(given);
    return a;
}

static void drop_args(ls_arg *given, uint16_t n, bool heap)
{
    for (uint16_t i = 0; i < n; i++) ls_arg_free(&given[i]);
    if (heap) free(given);
}

static ls_node *new_getitem(loader *L, ls_node *parent, const char *name, int64_t idx)
{
    ls_node *g = ls_node_new_getitem(L->p, name, parent->id, idx);
    /* torch gives a getitem its producer's metadata */
    g->text = parent->text;
    g->tag = parent->tag;
    return g;
}

/* A multi-output node: one getitem per value, named as the file names the values, in the
 * order FX's deserializer makes them. elements: Argument unions, or TensorArguments when
 * the node returned a Tensor[] (as_tensors). */
static int add_getitems(loader *L, ls_node *parent, uint32_t idx, const cJSON *elements, bool plain)
{
    int count = cJSON_GetArraySize(elements);
    if (count > LS_MAX_NODE_ARGS) return node_fail(L, parent, idx, "%d outputs", count);
    ls_tmeta *ms = ls_calloc((size_t)(count ? count : 1), sizeof *ms);
    int i = 0, rc = 0;
    for (const cJSON *e = elements->child; e && rc == 0; e = e->next, i++) {
        const char *k = "as_tensor";
        const cJSON *v = e;
        if (!plain) v = ls_junion(e, &k);
        if (!v || ls_key_is(k, "as_none")) continue;
        if (ls_key_is(k, "as_tensors")) { /* a list inside a tuple: getitem, then its items */
            ls_node *lg = new_getitem(L, parent, NULL, i);
            ls_vec_push(&L->unnamed, lg);
            ls_program_append(L->p, lg);
            rc = add_getitems(L, lg, idx, v, true);
            continue;
        }
        const char *name = plain ? ls_jstr(ls_jget(v, "name")) : ls_arg_value_name(e);
        if (!name) {
            rc = node_fail(L, parent, idx, "output %d has no name", i);
            break;
        }
        ls_node *g = new_getitem(L, parent, name, i);
        ls_program_append(L->p, g);
        uint64_t h;
        rc = ls_loader_define(L, g, &h);
        if (rc != 0) break;
        if (strncmp(k, "as_sym_", 7) == 0) g->val_kind = LS_VAL_SYMINT;
        else if (ls_loader_tmeta(L, g->name, h, &ms[i])) ls_node_set_val(g, &ms[i]);
        else if (L->deferred_fail) rc = -1;
    }
    ls_node_set_vals(parent, LS_VAL_TENSORS, ms, (uint16_t)count);
    free(ms);
    return rc;
}

/* executorch_call_delegate's first input names the lowered module; ExecuTorch's serializer
 * writes the module itself there as a JSON string. The node becomes FX's get_attr + call. */
static int lowered_module_arg(loader *L, ls_node *call, const cJSON *first, uint32_t *getattr_id)
{
    const char *name = ls_jstr(ls_jget(first, "name"));
    const char *k;
    const cJSON *v = ls_junion(ls_jget(first, "arg"), &k);
    if (!name || !*name || !v || !ls_key_is(k, "as_string")) return 0;
    uint32_t have = ls_loader_lookup(L, name);
    ls_node *prev = have ? ls_program_node(L->p, have) : NULL;
    if (prev && prev->kind == LS_NODE_GET_ATTR) { /* the same module called again */
        *getattr_id = have;
        return 1;
    }
    ls_node *ga = ls_node_new(L->p, LS_NODE_GET_ATTR, name, name);
    ls_program_append(L->p, ga);
    if (ls_loader_define(L, ga, NULL) != 0) return -1;
    *getattr_id = ga->id;
    if (L->depth < 4 && ls_jstr(v)) {
        ls_submodule sub = {0};
        ls_error e;
        if (ls_read_lowered_module(L->where, name, v->valuestring, L->depth + 1, &sub, &e) == 0) {
            ls_program_add_sub(L->p, &sub);
            ls_submodule_release(&sub);
        }
        /* otherwise the get_attr stays without a submodule: shown as unknown */
    }
    (void)call;
    return 1;
}

int ls_loader_read_node(loader *L, const cJSON *sn, uint32_t idx)
{
    /* one pass over the node's members (cJSON's lookups compare every key) */
    const char *target = NULL, *given_name = NULL;
    bool wrong_target = false; /* there, but not a string: said so, not "no target" */
    const cJSON *outputs = NULL, *inputs = NULL, *metadata = NULL;
    for (const cJSON *c = sn ? sn->child : NULL; c; c = c->next) {
        const char *k = c->string;
        if (!k || cJSON_IsNull(c)) continue;
        switch (k[0]) {
        case 't':
            if (ls_key_is(k, "target")) target = ls_jstr(c), wrong_target = !target;
            break;
        case 'i': if (ls_key_is(k, "inputs")) inputs = c; break;
        case 'o': if (ls_key_is(k, "outputs")) outputs = c; break;
        case 'm': if (ls_key_is(k, "metadata")) metadata = c; break;
        case 'n': if (ls_key_is(k, "name")) given_name = ls_jstr(c); break;
        default: break;
        }
    }
    if (wrong_target) return ls_fail(L->err, "%s: graph node #%u: target is not a string", L->where, idx);
    if (!target) return ls_fail(L->err, "%s: graph node #%u: no target", L->where, idx);
    if (outputs && !cJSON_IsArray(outputs)) return ls_fail(L->err, "%s: graph node #%u: outputs is not a list", L->where, idx);
    if (inputs && !cJSON_IsArray(inputs)) return ls_fail(L->err, "%s: graph node #%u: inputs is not a list", L->where, idx);

    /* How the node returns: one value names the node; several become getitems. */
    int nout = outputs ? cJSON_GetArraySize(outputs) : 0;
    const char *ok = NULL, *name = NULL;
    const cJSON *single = NULL;
    if (nout == 1) single = ls_junion(outputs->child, &ok);
    bool one_value = single && (ls_key_is(ok, "as_tensor") || strncmp(ok, "as_sym_", 7) == 0);
    if (one_value) name = ls_arg_value_name(outputs->child);
    /* a tensor output is looked up by its name in tensor_values: without one there is nothing
     * to look up (inputs are refused the same way, json_args.c) */
    if (one_value && !name && ls_key_is(ok, "as_tensor"))
        return ls_fail(L->err, "%s: graph node #%u (%s): output 0: a tensor output without a name", L->where, idx, target);
    if (!name && given_name && *given_name) name = given_name;

    /* the name's hash serves the intern pool and the value map (one hash: ptrmap.h); their
     * slots are fetched while the metadata is read */
    size_t name_len = name ? strlen(name) : 0;
    uint64_t h = name ? ls_strmap_hash(name, name_len) : 0;
    if (name) {
        ls_strmap_reserve(&L->values, L->values.used + 1);
        __builtin_prefetch(&L->values.slots[(uint32_t)h & (L->values.cap - 1)]);
        ls_intern_prefetch(h);
    }
    ls_node *n = ls_node_new(L->p, LS_NODE_CALL, NULL, NULL);
    n->target = ls_loader_intern(L, target);
    uint8_t dialect;
    n->op = target_op(L, n->target, &dialect);
    n->dialect = dialect;
    read_metadata(L, n, metadata);
    note_tag(L, n->tag);
    if (name) n->name = ls_intern_n_hashed(name, name_len, h);

    uint32_t getattr_id = 0;
    bool delegate = n->op && n->op->id == LS_OP_call_delegate && inputs && inputs->child;
    int lm = delegate ? lowered_module_arg(L, n, inputs->child, &getattr_id) : 0;
    if (lm < 0) {
        ls_node_unref(n);
        return -1;
    }
    ls_arg buf[16], *given;
    uint16_t ng;
    bool heap;
    if (read_inputs(L, n, idx, inputs, lm == 1, buf, 16, &given, &ng, &heap) != 0) {
        ls_node_unref(n);
        return -1;
    }
    if (lm == 1) { /* FX's args: (lowered_module, *inputs) */
        given = heap_args(given, ng, heap, 1);
        heap = true;
        given[0] = ls_arg_node(getattr_id);
        given[0].name = L->lowered_module_name;
        for (uint16_t i = 1; i <= ng; i++) given[i].name = NULL;
        ng++;
    }
    if (n->op && !(n->op->flags & LS_OPF_SPECIAL)) {
        ls_arg *norm;
        uint16_t nn;
        ls_error e;
        if (ls_op_normalize_args(n->op, given, ng, &norm, &nn, &e) == 0) {
            drop_args(given, ng, heap); /* what normalisation left: nothing but the array */
            given = norm;
            ng = nn;
            heap = true;
        } else {
            /* The file's schema differs from ours (another torch version): keep the node as
             * written, as an unknown op, and say why. */
            drop_args(given, ng, heap);
            if (read_inputs(L, n, idx, inputs, false, buf, 16, &given, &ng, &heap) != 0) {
                ls_node_unref(n);
                return -1;
            }
            n->op = NULL;
            n->reason = LS_WHY_UNKNOWN_OP;
            n->reason_detail = ls_internf(LS_SCHEMA_MISFIT " (its own, or an --ops file's): %s", e.msg);
        }
    }
    given = heap_args(given, ng, heap, 0);
    ls_node_set_args(n, given, ng);

    if (n->name && define_hashed(L, n, h) != 0) {
        ls_node_unref(n);
        return -1;
    }
    ls_program_append(L->p, n);
    if (!n->name) ls_vec_push(&L->unnamed, n);

    if (one_value) {
        if (strncmp(ok, "as_sym_", 7) == 0) {
            n->val_kind = LS_VAL_SYMINT;
        } else {
            ls_tmeta m;
            if (ls_loader_tmeta(L, n->name, h, &m)) ls_node_set_val(n, &m);
            else if (L->deferred_fail) return -1;
        }
        return 0;
    }
    if (single && ls_key_is(ok, "as_tensors")) return add_getitems(L, n, idx, single, true);
    if (nout > 1) return add_getitems(L, n, idx, outputs, false);
    return 0;
}

int ls_loader_read_nodes(loader *L, const cJSON *nodes)
{
    if (!nodes) return 0;
    if (!cJSON_IsArray(nodes)) return ls_fail(L->err, "%s: graph.nodes is not a list", L->where);
    uint32_t idx = 0;
    for (const cJSON *sn = nodes->child; sn; sn = sn->next, idx++)
        if (ls_loader_read_node(L, sn, idx) != 0) return -1;
    return 0;
}

/* Names for the nodes the file left unnamed (multi-output nodes of older writers, nested list
 * getitems, the output node), FX-style from the op, once every file name is known. */
void ls_loader_name_rest(loader *L)
{
    if (!L->unnamed.n) return;
    ls_namer *nm = ls_namer_new(L->p);
    for (uint32_t i = 0; i < L->unnamed.n; i++) {
        ls_node *n = L->unnamed.v[i];
        const char *base;
        if (n->kind == LS_NODE_OUTPUT) base = "output";
        else if (n->op && n->dialect == LS_DIALECT_EDGE && !(n->op->flags & LS_OPF_SPECIAL)) {
            char b[160];
            snprintf(b, sizeof b, "%s_%s_%s", n->op->ns, n->op->name, n->op->overload);
            for (char *c = b; *c; c++)
                if (*c >= 'A' && *c <= 'Z') *c = (char)(*c - 'A' + 'a');
            base = ls_intern(b);
        } else if (n->op) base = n->op->id == LS_OP_call_delegate ? "executorch_call_delegate" : n->op->name;
        else base = ls_target_short(n->target);
        n->name = ls_namer_take(nm, base && *base ? base : "node");
    }
    ls_namer_free(nm);
    ls_program_touch(L->p);
}
