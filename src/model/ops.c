/* The operator table: schema parsing, target spellings, argument normalisation. */
#include "ops.h"

#include <ctype.h>
#include <errno.h>
#include <pthread.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

typedef struct op_row {
    const char *ns, *schema, *out;
    uint32_t flags;
} op_row;

static const op_row rows[LS_OP_COUNT] = {
#define LS_OP(id, ns, schema, out, flags) [LS_OP_##id] = {ns, schema, out, flags},
#include "ops.def"
#undef LS_OP
};

static ls_op table[LS_OP_COUNT];
static pthread_once_t table_once = PTHREAD_ONCE_INIT;
/* operators a user's file declares (ls_op_register): ids LS_OP_COUNT + i */
static ls_op custom[LS_MAX_CUSTOM_OPS];
static int n_custom;

/* qualname → op and "ns.name.out_overload" → op, open addressing over interned pointers */
#define OP_HASH_CAP 1024
static const ls_op *by_qualname[OP_HASH_CAP];
static const ls_op *by_out[OP_HASH_CAP];

static size_t ptr_slot(const void *p)
{
    uintptr_t x = (uintptr_t)p;
    x ^= x >> 17;
    x *= 0x9E3779B97F4A7C15ull;
    return (size_t)(x >> 20) & (OP_HASH_CAP - 1);
}

/* ---- schema parsing */

static void skip_ws(const char **p)
{
    while (isspace((unsigned char)**p)) (*p)++;
}

static int parse_default(const char *text, size_t len, const ls_param *prm, ls_arg *out, ls_error *err)
{
    char buf[128];
    if (len >= sizeof buf) return ls_fail(err, "default too long");
    memcpy(buf, text, len);
    buf[len] = 0;
    memset(out, 0, sizeof *out);
    if (strcmp(buf, "None") == 0) {
        out->kind = LS_ARG_NONE;
        return 0;
    }
    if (strcmp(buf, "True") == 0 || strcmp(buf, "False") == 0) {
        out->kind = LS_ARG_BOOL;
        out->v.b = buf[0] == 'T';
        return 0;
    }
    if (buf[0] == '"' || buf[0] == '\'') {
        out->kind = LS_ARG_STRING;
        out->v.s = ls_intern_n(buf + 1, len >= 2 ? len - 2 : 0);
        return 0;
    }
    if (buf[0] == '[') {
        /* an int list: "[]", "[0, 1]"; a scalar default for int[1] ("dim=0") is handled below */
        int64_t vals[LS_MAX_DIMS];
        uint32_t n = 0;
        char *q = buf + 1;
        while (*q && *q != ']') {
            while (*q == ' ' || *q == ',') q++;
            if (*q == ']') break;
            if (n == LS_MAX_DIMS) return ls_fail(err, "default list too long");
            vals[n++] = strtoll(q, &q, 10);
        }
        *out = ls_arg_ints(vals, n);
        return 0;
    }
    char *end;
    bool is_float = strpbrk(buf, ".eE") != NULL || strcmp(buf, "inf") == 0;
    if (is_float || prm->type == LS_PT_FLOAT) {
        out->kind = LS_ARG_FLOAT;
        out->v.f = strtod(buf, &end);
    } else {
        out->kind = LS_ARG_INT;
        out->v.i = strtoll(buf, &end, 10);
    }
    if (*end) return ls_fail(err, "cannot read default '%s'", buf);
    if (prm->type == LS_PT_INT_LIST && out->kind == LS_ARG_INT) { /* int[1] dim=0 */
        int64_t v = out->v.i;
        *out = ls_arg_ints(&v, 1);
    }
    return 0;
}

/* Reads a type like "Tensor(a!)", "Tensor?[]", "int[1]?", "SymInt[]", "ScalarType?". */
static int parse_type(const char **pp, ls_param *prm, ls_error *err)
{
    const char *p = *pp;
    const char *start = p;
    while (isalnum((unsigned char)*p) || *p == '_') p++;
    size_t n = (size_t)(p - start);
    char base[32];
    if (n == 0 || n >= sizeof base) return ls_fail(err, "expected a type at '%.20s'", start);
    memcpy(base, start, n);
    base[n] = 0;
    if (*p == '(') { /* alias annotation */
        const char *close = strchr(p, ')');
        if (!close) return ls_fail(err, "unclosed alias annotation");
        prm->mutated = memchr(p, '!', (size_t)(close - p)) != NULL;
        p = close + 1;
    }
    bool opt_elem = false, list = false;
    if (*p == '?') {
        opt_elem = true;
        p++;
    }
    if (*p == '[') {
        list = true;
        p++;
        if (isdigit((unsigned char)*p)) prm->fixed_len = (int)strtol(p, (char **)&p, 10);
        if (*p != ']') return ls_fail(err, "bad list type");
        p++;
        if (*p == '?') {
            prm->optional = true;
            p++;
        }
    } else if (opt_elem) {
        prm->optional = true;
    }
    ls_ptype t;
    if (strcmp(base, "Tensor") == 0) t = list ? (opt_elem ? LS_PT_OPT_TENSOR_LIST : LS_PT_TENSOR_LIST) : LS_PT_TENSOR;
    else if (strcmp(base, "int") == 0 || strcmp(base, "SymInt") == 0) t = list ? LS_PT_INT_LIST : LS_PT_INT;
    else if (strcmp(base, "float") == 0 || strcmp(base, "SymFloat") == 0) t = list ? LS_PT_FLOAT_LIST : LS_PT_FLOAT;
    else if (strcmp(base, "bool") == 0 || strcmp(base, "SymBool") == 0) t = list ? LS_PT_BOOL_LIST : LS_PT_BOOL;
    else if (strcmp(base, "Scalar") == 0) t = LS_PT_SCALAR;
    else if (strcmp(base, "str") == 0) t = LS_PT_STR;
    else if (strcmp(base, "ScalarType") == 0) t = LS_PT_DTYPE;
    else if (strcmp(base, "Layout") == 0) t = LS_PT_LAYOUT;
    else if (strcmp(base, "Device") == 0) t = LS_PT_DEVICE;
    else if (strcmp(base, "MemoryFormat") == 0) t = LS_PT_MEMFMT;
    else if (strcmp(base, "Any") == 0) t = LS_PT_ANY;
    else return ls_fail(err, "unknown type '%s'", base);
    if (list && opt_elem && t != LS_PT_OPT_TENSOR_LIST) prm->optional = true;
    prm->type = (uint8_t)t;
    *pp = p;
    return 0;
}

int ls_schema_parse(const char *text, ls_schema *out, ls_error *err)
{
    memset(out, 0, sizeof *out);
    const char *p = strchr(text, '(');
    if (!p) return ls_fail(err, "schema '%s': no '('", text);
    p++;
    bool kwonly = false;
    for (;;) {
        skip_ws(&p);
        if (*p == ')') {
            p++;
            break;
        }
        if (*p == '*') {
            kwonly = true;
            p++;
            skip_ws(&p);
            if (*p == ',') p++;
            continue;
        }
        if (out->nparams == LS_MAX_PARAMS) return ls_fail(err, "schema '%s': too many parameters", text);
        ls_param *prm = &out->params[out->nparams];
        memset(prm, 0, sizeof *prm);
        if (parse_type(&p, prm, err) != 0) return ls_fail_prefix(err, "schema '%s'", text);
        skip_ws(&p);
        const char *nstart = p;
        while (isalnum((unsigned char)*p) || *p == '_') p++;
        if (p == nstart) return ls_fail(err, "schema '%s': parameter without a name", text);
        prm->name = ls_intern_n(nstart, (size_t)(p - nstart));
        prm->kwarg_only = kwonly;
        skip_ws(&p);
        if (*p == '=') {
            p++;
            skip_ws(&p);
            const char *dstart = p;
            int depth = 0;
            while (*p && (depth > 0 || (*p != ',' && *p != ')'))) {
                if (*p == '[') depth++;
                if (*p == ']') depth--;
                p++;
            }
            size_t dl = (size_t)(p - dstart);
            while (dl && isspace((unsigned char)dstart[dl - 1])) dl--;
            if (parse_default(dstart, dl, prm, &prm->def, err) != 0) return ls_fail_prefix(err, "schema '%s'", text);
            prm->has_default = true;
        }
        out->nparams++;
        skip_ws(&p);
        if (*p == ',') p++;
        else if (*p != ')') return ls_fail(err, "schema '%s': expected ',' or ')' at '%.10s'", text, p);
    }
    skip_ws(&p);
    if (strncmp(p, "->", 2) != 0) return ls_fail(err, "schema '%s': no '->'", text);
    p += 2;
    skip_ws(&p);
    bool tuple = *p == '(';
    if (tuple) p++;
    for (;;) {
        skip_ws(&p);
        if (*p == ')' || *p == 0) break;
        if (out->nreturns == LS_MAX_RETURNS) return ls_fail(err, "schema '%s': too many returns", text);
        ls_param r = {0};
        if (parse_type(&p, &r, err) != 0) return ls_fail_prefix(err, "schema '%s'", text);
        if (r.type == LS_PT_TENSOR_LIST) out->returns_list = true;
        out->returns[out->nreturns++] = r.type;
        skip_ws(&p);
        while (isalnum((unsigned char)*p) || *p == '_') p++; /* optional return name */
        skip_ws(&p);
        if (*p == ',') p++;
        else break;
    }
    return 0;
}

/* ---- the table */

static const char *out_key(const char *ns, const char *name, const char *overload)
{
    return ls_internf("%s.%s.%s", ns, name, overload);
}

/* The first op to claim an out variant keeps it (the table's order, then the user's file's). */
static void index_out(const ls_op *op)
{
    if (!op->out_overload) return;
    const char *k = out_key(op->ns, op->name, op->out_overload);
    size_t s = ptr_slot(k);
    for (; by_out[s]; s = (s + 1) & (OP_HASH_CAP - 1))
        if (out_key(by_out[s]->ns, by_out[s]->name, by_out[s]->out_overload) == k) return;
    by_out[s] = op;
}

static const ls_op *find_out(const char *ns, const char *name, const char *overload)
{
    const char *k = out_key(ns, name, overload);
    for (size_t s = ptr_slot(k); by_out[s]; s = (s + 1) & (OP_HASH_CAP - 1))
        if (by_out[s]->ns == ls_intern(ns) && by_out[s]->name == ls_intern(name) && by_out[s]->out_overload &&
            strcmp(by_out[s]->out_overload, overload) == 0)
            return by_out[s];
    return NULL;
}

static void init_table(void)
{
    for (int i = 0; i < LS_OP_COUNT; i++) {
        ls_op *op = &table[i];
        const op_row *r = &rows[i];
        op->id = (ls_op_id)i;
        op->ns = ls_intern(r->ns);
        op->schema_text = r->schema;
        op->out_overload = r->out;
        op->flags = r->flags;
        const char *paren = strchr(r->schema, '(');
        const char *dot = memchr(r->schema, '.', (size_t)(paren - r->schema));
        if (dot) {
            op->name = ls_intern_n(r->schema, (size_t)(dot - r->schema));
            op->overload = ls_intern_n(dot + 1, (size_t)(paren - dot - 1));
        } else {
            op->name = ls_intern_n(r->schema, (size_t)(paren - r->schema));
            op->overload = ls_intern("default");
        }
        op->qualname = op->ns[0] ? ls_internf("%s.%s.%s", op->ns, op->name, op->overload)
                                 : ls_internf("%s.%s", op->name, op->overload);
        ls_error err;
        if (ls_schema_parse(r->schema, &op->schema, &err) != 0) {
            /* The table is ours: a bad row is a bug caught by the tests' first call. */
            fprintf(stderr, "lowerscope: internal operator table: %s\n", err.msg);
            abort();
        }
        size_t s = ptr_slot(op->qualname);
        while (by_qualname[s]) s = (s + 1) & (OP_HASH_CAP - 1);
        by_qualname[s] = op;
    }
    for (int i = 0; i < LS_OP_COUNT; i++) index_out(&table[i]);
}

static void ensure_table(void)
{
    pthread_once(&table_once, init_table);
}

const ls_op *ls_op_get(ls_op_id id)
{
    ensure_table();
    if ((unsigned)id < LS_OP_COUNT) return &table[id];
    return (unsigned)id - LS_OP_COUNT < (unsigned)n_custom ? &custom[(unsigned)id - LS_OP_COUNT] : NULL;
}

static const ls_op *find_qualname(const char *q)
{
    for (size_t s = ptr_slot(q); by_qualname[s]; s = (s + 1) & (OP_HASH_CAP - 1))
        if (by_qualname[s]->qualname == q) return by_qualname[s];
    return NULL;
}

const ls_op *ls_op_by_qualname(const char *qualname)
{
    ensure_table();
    return qualname ? find_qualname(qualname) : NULL;
}

bool ls_op_is_quant_primitive(const ls_op *op)
{
    switch (op ? op->id : LS_OP_COUNT) {
    case LS_OP_quantize_per_tensor:
    case LS_OP_quantize_per_tensor_tensor:
    case LS_OP_dequantize_per_tensor:
    case LS_OP_dequantize_per_tensor_tensor:
    case LS_OP_quantize_per_channel:
    case LS_OP_dequantize_per_channel:
    case LS_OP_choose_qparams_tensor: return true;
    default: return false;
    }
}

const ls_op *ls_op_find(const char *ns, const char *name, const char *overload)
{
    ensure_table();
    if (!overload || !*overload) overload = "default";
    const char *q = ns && *ns ? ls_internf("%s.%s.%s", ns, name, overload) : ls_internf("%s.%s", name, overload);
    return find_qualname(q);
}

static const struct {
    const char *prefix;
    ls_dialect dialect;
} target_prefixes[] = {
    {"executorch.exir.dialects.edge.ops.", LS_DIALECT_EDGE},
    {"torch.ops.", LS_DIALECT_ATEN},
};

const ls_op *ls_op_from_target(const char *target, ls_dialect *dialect)
{
    ensure_table();
    ls_dialect d = LS_DIALECT_NONE;
    if (dialect) *dialect = d;
    if (!target) return NULL;
    if (strcmp(target, "_operator.getitem") == 0 || strcmp(target, "getitem") == 0 ||
        strcmp(target, "operator.getitem") == 0)
        return &table[LS_OP_getitem];
    if (strstr(target, "executorch_call_delegate")) return &table[LS_OP_call_delegate];
    if (strcmp(target, "executorch.exir.memory.alloc") == 0) return &table[LS_OP_alloc];
    if (strcmp(target, "executorch.exir.memory.view") == 0) return &table[LS_OP_memory_view];
    const char *rest = target;
    for (size_t i = 0; i < sizeof target_prefixes / sizeof target_prefixes[0]; i++) {
        size_t pl = strlen(target_prefixes[i].prefix);
        if (strncmp(target, target_prefixes[i].prefix, pl) == 0) {
            rest = target + pl;
            d = target_prefixes[i].dialect;
            break;
        }
    }
    /* rest: "aten.add.Tensor", "aten::add.Tensor", "aten.add" */
    char buf[256];
    size_t n = strlen(rest);
    if (n >= sizeof buf) return NULL;
    memcpy(buf, rest, n + 1);
    char *ns = buf, *name, *ovl;
    char *sep = strstr(buf, "::");
    if (sep) {
        *sep = 0;
        name = sep + 2;
    } else {
        sep = strchr(buf, '.');
        if (!sep) return NULL;
        *sep = 0;
        name = sep + 1;
    }
    if (d == LS_DIALECT_NONE) d = LS_DIALECT_ATEN; /* "aten.add.Tensor" spellings */
    if (dialect) *dialect = d;
    ovl = strchr(name, '.');
    if (ovl) *ovl++ = 0;
    const ls_op *op = ls_op_find(ns, name, ovl);
    if (op || !ovl) return op;
    /* an out variant ("aten::add.out", "executorch.exir.dialects.edge.ops.aten.add.out"): the
     * functional entry, in the ExecuTorch dialect */
    const ls_op *o = find_out(ns, name, ovl);
    if (o && dialect) *dialect = LS_DIALECT_EXECUTORCH;
    return o;
}

const char *ls_op_target(const ls_op *op, ls_dialect dialect)
{
    if (op->id == LS_OP_getitem) return ls_intern("_operator.getitem");
    if (op->id == LS_OP_call_delegate) return ls_intern("torch.ops.higher_order.executorch_call_delegate");
    if (op->id == LS_OP_alloc) return ls_intern("executorch.exir.memory.alloc");
    if (op->id == LS_OP_memory_view) return ls_intern("executorch.exir.memory.view");
    if (dialect == LS_DIALECT_EDGE)
        return ls_internf("executorch.exir.dialects.edge.ops.%s.%s.%s", op->ns, op->name, op->overload);
    if (dialect == LS_DIALECT_EXECUTORCH)
        return ls_internf("executorch.exir.dialects.edge.ops.%s.%s.%s", op->ns, op->name,
                          op->out_overload ? op->out_overload : op->overload);
    return ls_internf("torch.ops.%s.%s.%s", op->ns, op->name, op->overload);
}

const ls_op *ls_op_from_out_variant(const char *ns_name, const char *overload)
{
    ensure_table();
    const char *sep = strstr(ns_name, "::");
    if (!sep || !overload) return NULL;
    size_t nsl = (size_t)(sep - ns_name);
    char ns[64];
    if (nsl >= sizeof ns) return NULL;
    memcpy(ns, ns_name, nsl);
    ns[nsl] = 0;
    const ls_op *op = find_out(ns, sep + 2, overload);
    /* some .pte files name the functional overload directly ("aten::add.Tensor") */
    return op ? op : ls_op_find(ns, sep + 2, overload);
}

/* ---- operators a user declares (--ops FILE) */

static bool is_out_schema(const ls_schema *s, const char *overload)
{
    for (uint32_t i = 0; i < s->nparams; i++)
        if (s->params[i].kwarg_only && s->params[i].mutated && s->params[i].type == LS_PT_TENSOR) return true;
    return strcmp(overload, "out") == 0;
}

int ls_op_register(const char *text, ls_error *err)
{
    ensure_table();
    while (isspace((unsigned char)*text)) text++;
    const char *sep = strstr(text, "::"), *paren = strchr(text, '(');
    if (!sep || !paren || sep > paren)
        return ls_fail(err, "'%s': a schema is namespace::name[.overload](arguments) -> returns", text);
    ls_schema sc;
    if (ls_schema_parse(text, &sc, err) != 0) return -1;
    const char *ns = ls_intern_n(text, (size_t)(sep - text)), *nm = sep + 2;
    const char *dot = memchr(nm, '.', (size_t)(paren - nm));
    const char *name = ls_intern_n(nm, (size_t)((dot ? dot : paren) - nm));
    const char *overload = dot ? ls_intern_n(dot + 1, (size_t)(paren - dot - 1)) : ls_intern("default");
    if (!*ns || !*name || !*overload) return ls_fail(err, "'%s': a namespace, a name and an overload are needed", text);
    if (is_out_schema(&sc, overload)) { /* the out variant of a functional op of the same name */
        const ls_op *fn = NULL;
        for (int i = 0; i < n_custom && !fn; i++)
            if (custom[i].ns == ns && custom[i].name == name && !custom[i].out_overload) fn = &custom[i];
        if (!fn) return ls_fail(err, "'%s': the out variant of %s::%s comes before (or without) its functional schema", text, ns, name);
        ((ls_op *)fn)->out_overload = overload;
        index_out(fn);
        return 0;
    }
    const char *q = ls_internf("%s.%s.%s", ns, name, overload);
    if (find_qualname(q)) return ls_fail(err, "'%s': %s::%s.%s is already an operator", text, ns, name, overload);
    if (n_custom == LS_MAX_CUSTOM_OPS) return ls_fail(err, "'%s': at most %d operators can be declared", text, LS_MAX_CUSTOM_OPS);
    ls_op *op = &custom[n_custom];
    memset(op, 0, sizeof *op);
    op->id = (ls_op_id)(LS_OP_COUNT + n_custom);
    op->ns = ns;
    op->name = name;
    op->overload = overload;
    op->qualname = q;
    op->schema_text = ls_intern(text);
    op->flags = LS_OPF_CUSTOM;
    op->schema = sc;
    size_t s = ptr_slot(q);
    while (by_qualname[s]) s = (s + 1) & (OP_HASH_CAP - 1);
    by_qualname[s] = op;
    n_custom++;
    return 0;
}

int ls_ops_load_file(const char *path, ls_error *err)
{
    uint8_t *data;
    size_t size;
    if (ls_read_file(path, (size_t)16 << 20, &data, &size, err) != 0) return -1;
    char *text = ls_strndup((const char *)data, size);
    free(data);
    int rc = 0, line = 0;
    for (char *p = text, *e; rc == 0 && p && *p; p = e ? e + 1 : NULL) {
        e = strchr(p, '\n');
        if (e) *e = 0;
        line++;
        char *hash = strchr(p, '#');
        if (hash) *hash = 0;
        while (isspace((unsigned char)*p)) p++;
        size_t n = strlen(p);
        while (n && isspace((unsigned char)p[n - 1])) p[--n] = 0;
        if (!n) continue;
        if (ls_op_register(p, err) != 0) rc = ls_fail_prefix(err, "%s: line %d", path, line);
    }
    free(text);
    return rc;
}

const ls_op *ls_op_copy_form(const ls_op *op)
{
    if (!op || !(op->flags & LS_OPF_VIEW)) return NULL;
    if (op->id == LS_OP_reshape) return ls_op_get(LS_OP_view_copy);
    char name[96];
    snprintf(name, sizeof name, "%s_copy", op->name);
    return ls_op_find(op->ns, name, op->overload);
}

const char *ls_op_short(const ls_op *op)
{
    return op->name;
}

const char *ls_target_short(const char *target)
{
    if (!target) return "";
    ls_dialect d;
    const ls_op *op = ls_op_from_target(target, &d);
    if (op) return op->name;
    /* unknown: drop a known prefix and the overload */
    const char *rest = target;
    for (size_t i = 0; i < sizeof target_prefixes / sizeof target_prefixes[0]; i++) {
        size_t pl = strlen(target_prefixes[i].prefix);
        if (strncmp(target, target_prefixes[i].prefix, pl) == 0) rest = target + pl;
    }
    const char *first = strchr(rest, '.');
    const char *last = strrchr(rest, '.');
    if (first && last > first) return ls_intern_n(first + 1, (size_t)(last - first - 1));
    return ls_intern(rest);
}

/* ---- argument normalisation */

int ls_op_normalize_args(const ls_op *op, ls_arg *given, uint16_t ngiven, ls_arg **out, uint16_t *nout,
                         ls_error *err)
{
    const ls_schema *s = &op->schema;
    if (op->flags & LS_OPF_SPECIAL) { /* getitem, call_delegate: keep as given */
        ls_arg *res = ls_calloc(ngiven ? ngiven : 1, sizeof *res);
        memcpy(res, given, sizeof *res * ngiven);
        memset(given, 0, sizeof *given * ngiven);
        *out = res;
        *nout = ngiven;
        return 0;
    }
    ls_arg *res = ls_calloc(s->nparams ? s->nparams : 1, sizeof *res);
    bool *set = ls_calloc(s->nparams ? s->nparams : 1, sizeof *set);
    int next_pos = 0, rc = 0;
    for (uint16_t g = 0; g < ngiven && rc == 0; g++) {
        int idx = -1;
        if (given[g].name) {
            for (int i = 0; i < s->nparams; i++)
                if (s->params[i].name == given[g].name) idx = i;
            if (idx < 0)
                rc = ls_fail(err, "argument '%s' is not in the schema of %s", given[g].name, op->qualname);
        } else if (!(given[g].flags & LS_ARGF_KEYWORD)) {
            while (next_pos < s->nparams && (set[next_pos] || s->params[next_pos].kwarg_only)) next_pos++;
            if (next_pos >= s->nparams) rc = ls_fail(err, "%s takes %d arguments, got more", op->qualname, s->nparams);
            idx = next_pos;
        } else {
            rc = ls_fail(err, "keyword argument without a name for %s", op->qualname);
        }
        if (rc) break;
        if (set[idx]) {
            rc = ls_fail(err, "argument '%s' of %s given twice", s->params[idx].name, op->qualname);
            break;
        }
        res[idx] = given[g];
        res[idx].name = s->params[idx].name;
        memset(&given[g], 0, sizeof given[g]);
        set[idx] = true;
        if (!(res[idx].flags & LS_ARGF_KEYWORD)) next_pos = idx + 1;
    }
    for (int i = 0; i < s->nparams && rc == 0; i++) {
        if (set[i]) continue;
        const ls_param *prm = &s->params[i];
        if (prm->has_default) {
            ls_arg_copy(&res[i], &prm->def);
        } else if (prm->optional) {
            res[i].kind = LS_ARG_NONE;
        } else {
            rc = ls_fail(err, "%s: missing argument '%s'", op->qualname, prm->name);
            break;
        }
        res[i].name = prm->name;
        res[i].flags = LS_ARGF_DEFAULT | (prm->kwarg_only ? LS_ARGF_KEYWORD : 0);
    }
    free(set);
    if (rc != 0) {
        for (int i = 0; i < s->nparams; i++) ls_arg_free(&res[i]);
        free(res);
        return -1;
    }
    *out = res;
    *nout = s->nparams;
    return 0;
}
