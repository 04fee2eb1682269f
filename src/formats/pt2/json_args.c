/* Arguments of exported-program nodes: the Argument union (both encodings) into ls_arg, with
 * every tensor it names resolved to a node defined earlier. */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "json_loader.h"

/* A value a node argument names: must be defined before the node. */
static int resolve(loader *L, const cJSON *name_json, uint32_t *id)
{
    const char *name = ls_jstr(name_json);
    if (!name) return ls_fail(L->err, "a tensor argument without a name");
    *id = ls_loader_lookup(L, name);
    if (!*id) return ls_fail(L->err, "'%s' is not defined before it", name);
    return 0;
}

/* The name of a value in an output or spec position: TensorArgument {name}, or an Argument
 * union holding as_tensor / as_sym_* / as_custom_obj. NULL for constants. */
const char *ls_arg_value_name(const cJSON *a)
{
    const cJSON *c = a ? a->child : NULL; /* the common case: {"as_tensor": {"name": N}} */
    if (c && !c->next && c->string && ls_key_is(c->string, "as_tensor") && c->child && !c->child->next &&
        c->child->string && ls_key_is(c->child->string, "name"))
        return ls_jstr(c->child);
    const char *s = ls_jstr(ls_jget(a, "name"));
    if (s) return s;
    const char *k;
    const cJSON *v = ls_junion(a, &k);
    if (!v) return NULL;
    if (ls_key_is(k, "as_tensor") || ls_key_is(k, "as_custom_obj") || ls_key_is(k, "as_token"))
        return ls_jstr(ls_jget(v, "name"));
    if (strncmp(k, "as_sym_", 7) == 0) return ls_jstr(ls_jget(v, "as_name"));
    return NULL;
}

static void raw_arg(const char *kind, const cJSON *v, ls_arg *out)
{
    char *text = cJSON_PrintUnformatted(v);
    ls_buf b = {0};
    ls_buf_printf(&b, "{\"%s\":%s}", kind, text ? text : "null");
    cJSON_free(text);
    out->kind = LS_ARG_RAW;
    out->v.s = ls_intern(b.s);
    ls_buf_free(&b);
}

static int read_list(loader *L, const cJSON *v, ls_arg_kind kind, ls_arg *out)
{
    if (!cJSON_IsArray(v)) return ls_fail(L->err, "expected a list");
    int n = cJSON_GetArraySize(v);
    out->kind = (uint8_t)kind;
    out->n = (uint32_t)n;
    switch (kind) {
    case LS_ARG_INTS: {
        int64_t *a = ls_malloc(sizeof *a * (size_t)(n ? n : 1));
        out->v.ints = a;
        for (const cJSON *c = v->child; c; c = c->next, a++)
            if (!ls_jint(c, a)) return ls_fail(L->err, "expected a list of integers");
        return 0;
    }
    case LS_ARG_FLOATS: {
        double *a = ls_malloc(sizeof *a * (size_t)(n ? n : 1));
        out->v.floats = a;
        for (const cJSON *c = v->child; c; c = c->next, a++)
            if (!ls_jfloat(c, a)) return ls_fail(L->err, "expected a list of floats");
        return 0;
    }
    case LS_ARG_BOOLS: {
        bool *a = ls_malloc(sizeof *a * (size_t)(n ? n : 1));
        out->v.bools = a;
        for (const cJSON *c = v->child; c; c = c->next, a++) {
            if (!cJSON_IsBool(c)) return ls_fail(L->err, "expected a list of booleans");
            *a = cJSON_IsTrue(c);
        }
        return 0;
    }
    case LS_ARG_STRINGS: {
        const char **a = ls_malloc(sizeof *a * (size_t)(n ? n : 1));
        out->v.strs = a;
        for (const cJSON *c = v->child; c; c = c->next, a++) {
            if (!ls_jstr(c)) return ls_fail(L->err, "expected a list of strings");
            *a = ls_intern(c->valuestring);
        }
        return 0;
    }
    case LS_ARG_NODES:
    case LS_ARG_OPT_NODES: {
        uint32_t *a = ls_calloc((size_t)(n ? n : 1), sizeof *a);
        out->v.nodes = a;
        for (const cJSON *c = v->child; c; c = c->next, a++) {
            const cJSON *t = c;
            if (kind == LS_ARG_OPT_NODES) { /* OptionalTensorArgument: as_tensor or as_none */
                const char *k;
                t = ls_junion(c, &k);
                if (!t || ls_key_is(k, "as_none")) continue;
                if (!ls_key_is(k, "as_tensor")) return ls_fail(L->err, "unexpected '%s' in a Tensor?[] list", k);
            }
            if (resolve(L, ls_jget(t, "name"), a) != 0) return -1;
        }
        return 0;
    }
    default: return ls_fail(L->err, "internal: list kind %d", kind);
    }
}

/* SymInt[] / SymBool[] / SymFloat[]: plain values unless some element names a node. */
static int read_sym_list(loader *L, const char *kind, const cJSON *v, ls_arg *out)
{
    if (!cJSON_IsArray(v)) return ls_fail(L->err, "expected a list");
    bool any_node = false;
    for (const cJSON *c = v->child; c; c = c->next)
        if (ls_jget(c, "as_name")) any_node = true;
    int n = cJSON_GetArraySize(v);
    if (ls_key_is(kind, "as_sym_ints")) {
        if (any_node) {
            out->kind = LS_ARG_SYMINTS;
            out->n = (uint32_t)n;
            ls_symint *a = ls_calloc((size_t)(n ? n : 1), sizeof *a);
            out->v.symints = a;
            for (const cJSON *c = v->child; c; c = c->next, a++) {
                const char *k;
                const cJSON *e = ls_junion(c, &k);
                if (e && ls_key_is(k, "as_name")) {
                    a->is_node = true;
                    if (resolve(L, e, &a->node) != 0) return -1;
                } else if (!e || !ls_jint(e, &a->i)) {
                    return ls_fail(L->err, "bad SymInt list element");
                }
            }
            return 0;
        }
        out->kind = LS_ARG_INTS;
        out->n = (uint32_t)n;
        int64_t *a = ls_malloc(sizeof *a * (size_t)(n ? n : 1));
        out->v.ints = a;
        for (const cJSON *c = v->child; c; c = c->next, a++)
            if (!ls_jint(ls_junion(c, NULL), a)) return ls_fail(L->err, "bad SymInt list element");
        return 0;
    }
    if (any_node) {
        raw_arg(kind, v, out);
        return 0;
    }
    bool is_bool = ls_key_is(kind, "as_sym_bools");
    out->kind = is_bool ? LS_ARG_BOOLS : LS_ARG_FLOATS;
    out->n = (uint32_t)n;
    if (is_bool) out->v.bools = ls_malloc(sizeof(bool) * (size_t)(n ? n : 1));
    else out->v.floats = ls_malloc(sizeof(double) * (size_t)(n ? n : 1));
    int i = 0;
    for (const cJSON *c = v->child; c; c = c->next, i++) {
        const cJSON *e = ls_junion(c, NULL);
        if (is_bool) {
            if (!cJSON_IsBool(e)) return ls_fail(L->err, "bad SymBool list element");
            out->v.bools[i] = cJSON_IsTrue(e);
        } else if (!ls_jfloat(e, &out->v.floats[i])) {
            return ls_fail(L->err, "bad SymFloat list element");
        }
    }
    return 0;
}

/* A single SymInt/SymBool/SymFloat argument: a node or a plain value. */
static int read_sym(loader *L, const cJSON *v, ls_arg_kind plain, ls_arg *out)
{
    const char *k;
    const cJSON *e = ls_junion(v, &k);
    if (!e) return ls_fail(L->err, "expected a symbolic argument object");
    if (ls_key_is(k, "as_name")) {
        out->kind = LS_ARG_NODE;
        return resolve(L, e, &out->v.node);
    }
    out->kind = (uint8_t)plain;
    if (plain == LS_ARG_INT && ls_jint(e, &out->v.i)) return 0;
    if (plain == LS_ARG_FLOAT && ls_jfloat(e, &out->v.f)) return 0;
    if (plain == LS_ARG_BOOL && cJSON_IsBool(e)) {
        out->v.b = cJSON_IsTrue(e);
        return 0;
    }
    return ls_fail(L->err, "bad value in '%s'", k);
}

int ls_loader_read_arg(loader *L, const cJSON *a, ls_arg *out)
{
    memset(out, 0, sizeof *out);
    const char *k;
    const cJSON *v = ls_junion(a, &k);
    if (!v) return ls_fail(L->err, "expected an Argument object");
    if (strncmp(k, "as_", 3) != 0) return ls_fail(L->err, "unknown argument kind '%s'", k);
    const char *s = k + 3;
    switch (s[0]) {
    case 't':
        if (ls_key_is(s, "tensor")) {
            out->kind = LS_ARG_NODE;
            return resolve(L, ls_jget(v, "name"), &out->v.node);
        }
        if (ls_key_is(s, "tensors")) return read_list(L, v, LS_ARG_NODES, out);
        break;
    case 'i':
        if (ls_key_is(s, "int")) {
            out->kind = LS_ARG_INT;
            return ls_jint(v, &out->v.i) ? 0 : ls_fail(L->err, "as_int is not an integer");
        }
        if (ls_key_is(s, "ints")) return read_list(L, v, LS_ARG_INTS, out);
        break;
    case 'n':
        if (ls_key_is(s, "none")) return 0;
        break;
    case 'f':
        if (ls_key_is(s, "float")) {
            out->kind = LS_ARG_FLOAT;
            return ls_jfloat(v, &out->v.f) ? 0 : ls_fail(L->err, "as_float is not a number");
        }
        if (ls_key_is(s, "floats")) return read_list(L, v, LS_ARG_FLOATS, out);
        break;
    case 'b':
        if (ls_key_is(s, "bool")) {
            if (!cJSON_IsBool(v)) return ls_fail(L->err, "as_bool is not a boolean");
            out->kind = LS_ARG_BOOL;
            out->v.b = cJSON_IsTrue(v);
            return 0;
        }
        if (ls_key_is(s, "bools")) return read_list(L, v, LS_ARG_BOOLS, out);
        break;
    case 's':
        if (ls_key_is(s, "string")) {
            if (!ls_jstr(v)) return ls_fail(L->err, "as_string is not a string");
            out->kind = LS_ARG_STRING;
            out->v.s = ls_intern(v->valuestring);
            return 0;
        }
        if (ls_key_is(s, "strings")) return read_list(L, v, LS_ARG_STRINGS, out);
        if (ls_key_is(s, "scalar_type")) {
            int64_t code;
            if (!ls_jint(v, &code)) return ls_fail(L->err, "as_scalar_type is not a number");
            ls_dtype dt = ls_dtype_from_export((int)code);
            if (dt == LS_DT_UNKNOWN) break; /* complex, float8: kept as written */
            out->kind = LS_ARG_DTYPE;
            out->v.i = dt;
            return 0;
        }
        if (ls_key_is(s, "sym_int")) return read_sym(L, v, LS_ARG_INT, out);
        if (ls_key_is(s, "sym_bool")) return read_sym(L, v, LS_ARG_BOOL, out);
        if (ls_key_is(s, "sym_float")) return read_sym(L, v, LS_ARG_FLOAT, out);
        if (ls_key_is(s, "sym_ints") || ls_key_is(s, "sym_bools") || ls_key_is(s, "sym_floats"))
            return read_sym_list(L, k, v, out);
        break;
    case 'o':
        if (ls_key_is(s, "optional_tensors")) return read_list(L, v, LS_ARG_OPT_NODES, out);
        if (ls_key_is(s, "optional_tensor")) {
            const char *ok;
            const cJSON *t = ls_junion(v, &ok);
            if (!t || ls_key_is(ok, "as_none")) return 0;
            out->kind = LS_ARG_NODE;
            return resolve(L, ls_jget(t, "name"), &out->v.node);
        }
        break;
    case 'l':
    case 'm':
        if (ls_key_is(s, "layout") || ls_key_is(s, "memory_format")) {
            out->kind = s[0] == 'l' ? LS_ARG_LAYOUT : LS_ARG_MEMFMT;
            return ls_jint(v, &out->v.i) ? 0 : ls_fail(L->err, "%s is not a number", k);
        }
        break;
    case 'd':
        if (ls_key_is(s, "device")) {
            const char *type = ls_jstr(ls_jget(v, "type"));
            int64_t index;
            if (!type) return ls_fail(L->err, "as_device without a type");
            out->kind = LS_ARG_DEVICE;
            out->v.s = ls_jint(ls_jget(v, "index"), &index) ? ls_internf("%s:%lld", type, (long long)index)
                                                              : ls_intern(type);
            return 0;
        }
        break;
    case 'c':
        if (ls_key_is(s, "custom_obj")) { /* a lifted custom object is a placeholder */
            uint32_t id = ls_jstr(ls_jget(v, "name")) ? ls_loader_lookup(L, ls_jstr(ls_jget(v, "name"))) : 0;
            if (id) {
                out->kind = LS_ARG_NODE;
                out->v.node = id;
                return 0;
            }
        }
        break;
    default: break;
    }
    raw_arg(k, v, out); /* as_graph, as_operator, as_complex, ...: kept, not interpreted */
    return 0;
}
