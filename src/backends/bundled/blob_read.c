/* The bundled backend's processed blob: the checking reader. The blob is untrusted input: every
 * count is checked against the bytes left before anything is allocated from it, every offset
 * and length against the section that holds it, every node reference against the nodes decoded
 * so far, every op name against the operator table. Layout: docs/bundled-backend.md. */
#include "bundled_blob.h"

#include <inttypes.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <xxhash.h>

#include "ops.h"

typedef struct rd {
    const uint8_t *p;
    uint64_t n, pos;
    uint64_t base; /* offset of p in the blob, for messages */
    ls_error *err;
} rd;

static int rd_fail(rd *r, const char *fmt, ...) LS_PRINTF(2, 3);
static int rd_fail(rd *r, const char *fmt, ...)
{
    char msg[LS_ERR_MAX / 2];
    va_list ap;
    va_start(ap, fmt);
    vsnprintf(msg, sizeof msg, fmt, ap);
    va_end(ap);
    return ls_fail(r->err, "bundled blob: byte %" PRIu64 ": %s", r->base + r->pos, msg);
}

static int need(rd *r, uint64_t k, const char *what)
{
    if (k > r->n - r->pos)
        return rd_fail(r, "truncated: %s needs %" PRIu64 " bytes, %" PRIu64 " left in the graph section", what, k,
                       r->n - r->pos);
    return 0;
}

static uint64_t take_le(rd *r, int nbytes)
{
    uint64_t v = 0;
    for (int i = 0; i < nbytes; i++) v |= (uint64_t)r->p[r->pos + (uint64_t)i] << (8 * i);
    r->pos += (uint64_t)nbytes;
    return v;
}

static int rd_u8(rd *r, uint8_t *v, const char *what)
{
    if (need(r, 1, what) != 0) return -1;
    *v = (uint8_t)take_le(r, 1);
    return 0;
}

static int rd_u16(rd *r, uint16_t *v, const char *what)
{
    if (need(r, 2, what) != 0) return -1;
    *v = (uint16_t)take_le(r, 2);
    return 0;
}

static int rd_u32(rd *r, uint32_t *v, const char *what)
{
    if (need(r, 4, what) != 0) return -1;
    *v = (uint32_t)take_le(r, 4);
    return 0;
}

static int rd_u64(rd *r, uint64_t *v, const char *what)
{
    if (need(r, 8, what) != 0) return -1;
    *v = take_le(r, 8);
    return 0;
}

static int rd_i64(rd *r, int64_t *v, const char *what)
{
    uint64_t u;
    if (rd_u64(r, &u, what) != 0) return -1;
    memcpy(v, &u, 8);
    return 0;
}

static int rd_f64(rd *r, double *v, const char *what)
{
    uint64_t u;
    if (rd_u64(r, &u, what) != 0) return -1;
    memcpy(v, &u, 8);
    return 0;
}

/* A string: u32 length and bytes, no NUL inside. Empty strings read as "" (or NULL if
 * empty_is_null). */
static int rd_str(rd *r, const char **s, bool empty_is_null, const char *what)
{
    uint32_t len;
    if (rd_u32(r, &len, what) != 0 || need(r, len, what) != 0) return -1;
    const char *at = (const char *)r->p + r->pos;
    if (memchr(at, 0, len)) return rd_fail(r, "%s contains a NUL byte", what);
    r->pos += len;
    *s = len == 0 && empty_is_null ? NULL : ls_intern_n(at, len);
    return 0;
}

static int rd_name(rd *r, const char **s, const char *what)
{
    if (rd_str(r, s, false, what) != 0) return -1;
    if (!**s) return rd_fail(r, "%s is empty", what);
    return 0;
}

/* A count of entries that take at least min_each bytes each: refused before anything is
 * allocated when they cannot fit in what is left. */
static int rd_count(rd *r, uint32_t *n, uint64_t min_each, const char *what)
{
    if (rd_u32(r, n, what) != 0) return -1;
    if ((uint64_t)*n * min_each > r->n - r->pos)
        return rd_fail(r, "%" PRIu32 " %s cannot fit in the %" PRIu64 " bytes left", *n, what, r->n - r->pos);
    return 0;
}

static int rd_dtype(rd *r, ls_dtype *t, bool allow_unknown, const char *what)
{
    uint8_t c;
    if (rd_u8(r, &c, what) != 0) return -1;
    if (c == LS_BB_DTYPE_UNKNOWN && allow_unknown) {
        *t = LS_DT_UNKNOWN;
        return 0;
    }
    *t = ls_dtype_from_et(c);
    if (*t == LS_DT_UNKNOWN) {
        r->pos--;
        return rd_fail(r, "%s: unknown dtype code %u", what, c);
    }
    return 0;
}

static int rd_meta(rd *r, ls_tmeta *m)
{
    memset(m, 0, sizeof *m);
    uint8_t ndim;
    if (rd_dtype(r, &m->dtype, true, "value dtype") != 0 || rd_u8(r, &ndim, "value rank") != 0) return -1;
    if (ndim > LS_MAX_DIMS) return rd_fail(r, "value of rank %u (at most %d)", ndim, LS_MAX_DIMS);
    m->ndim = ndim;
    unsigned seen = 0;
    for (int d = 0; d < ndim; d++) {
        if (rd_u8(r, &m->dim_order[d], "dim order") != 0) return -1;
        if (m->dim_order[d] >= ndim || (seen & (1u << m->dim_order[d])))
            return rd_fail(r, "dim order is not a permutation of 0..%d", ndim - 1);
        seen |= 1u << m->dim_order[d];
    }
    for (int d = 0; d < ndim; d++) {
        if (rd_i64(r, &m->sizes[d], "size") != 0 || rd_str(r, &m->sym[d], true, "symbolic size") != 0) return -1;
        if (m->sizes[d] < -1) return rd_fail(r, "size %" PRId64 " in dimension %d", m->sizes[d], d);
    }
    return 0;
}

static int rd_tensor(rd *r, ls_bb_tensor *t, uint64_t data_off, uint64_t data_size)
{
    uint8_t ndim;
    int64_t sizes[LS_MAX_DIMS];
    ls_dtype dt;
    if (rd_name(r, &t->name, "tensor name") != 0 || rd_dtype(r, &dt, false, "tensor dtype") != 0 ||
        rd_u8(r, &ndim, "tensor rank") != 0)
        return -1;
    if (ndim > LS_MAX_DIMS) return rd_fail(r, "tensor '%s' of rank %u (at most %d)", t->name, ndim, LS_MAX_DIMS);
    for (int d = 0; d < ndim; d++)
        if (rd_i64(r, &sizes[d], "tensor size") != 0) return -1;
    ls_tmeta_init(&t->meta, dt, ndim, sizes);
    uint64_t rel, expect;
    if (rd_u64(r, &rel, "tensor offset") != 0 || rd_u64(r, &t->nbytes, "tensor length") != 0) return -1;
    char s[160];
    ls_tmeta_str(&t->meta, s, sizeof s);
    ls_error e2;
    if (ls_tmeta_check_size(&t->meta, data_size, &expect, &e2) != 0)
        return rd_fail(r, "tensor '%s': %s (the data section holds %" PRIu64 " bytes)", t->name, e2.msg, data_size);
    if (t->nbytes != expect)
        return rd_fail(r, "tensor '%s' is %s (%" PRIu64 " bytes) but its data is %" PRIu64 " bytes", t->name, s, expect,
                       t->nbytes);
    if (rel % LS_BB_ALIGN) return rd_fail(r, "tensor '%s': offset %" PRIu64 " is not 64-byte aligned", t->name, rel);
    if (rel > data_size || t->nbytes > data_size - rel)
        return rd_fail(r, "tensor '%s': bytes %" PRIu64 "..%" PRIu64 " lie outside the %" PRIu64 "-byte data section",
                       t->name, rel, rel + t->nbytes, data_size);
    t->offset = data_off + rel;
    return 0;
}

static int rd_ref(rd *r, uint32_t limit, uint32_t *id)
{
    uint32_t at;
    if (rd_u32(r, &at, "node reference") != 0) return -1;
    if (at >= limit) {
        r->pos -= 4;
        return rd_fail(r, "node reference %" PRIu32 " is not a node defined before this one (%" PRIu32 " are)", at,
                       limit);
    }
    *id = at + 1;
    return 0;
}

/* Minimum encoded bytes per list element, to bound counts before allocating. */
static uint64_t arg_min_encoded(uint8_t kind)
{
    switch (kind) {
    case LS_ARG_BOOLS:
    case LS_ARG_SYMINTS: return 1;
    case LS_ARG_NODES:
    case LS_ARG_OPT_NODES:
    case LS_ARG_STRINGS: return 4;
    default: return 8;
    }
}

/* Reads one argument into a (zeroed); on failure a stays freeable with ls_arg_free. */
static int rd_arg(rd *r, ls_arg *a, uint32_t limit)
{
    uint8_t kind, flags;
    if (rd_u8(r, &kind, "argument kind") != 0 || rd_u8(r, &flags, "argument flags") != 0) return -1;
    if (kind > LS_ARG_RAW) {
        r->pos -= 2;
        return rd_fail(r, "unknown argument kind %u", kind);
    }
    a->flags = flags & (LS_ARGF_KEYWORD | LS_ARGF_DEFAULT);
    size_t es = ls_arg_elem_size(kind);
    if (es) {
        uint32_t n;
        if (rd_count(r, &n, arg_min_encoded(kind), "list elements") != 0) return -1;
        a->v.ints = ls_malloc(es * (n ? n : 1));
        a->kind = kind;
        a->n = n;
    } else {
        a->kind = kind;
    }
    switch (kind) {
    case LS_ARG_NONE: return 0;
    case LS_ARG_NODE: return rd_ref(r, limit, &a->v.node);
    case LS_ARG_NODES:
    case LS_ARG_OPT_NODES:
        for (uint32_t i = 0; i < a->n; i++) {
            if (kind == LS_ARG_OPT_NODES) {
                if (need(r, 4, "node reference") != 0) return -1;
                if (take_le(r, 4) == LS_BB_OPT_NONE) {
                    a->v.nodes[i] = 0;
                    continue;
                }
                r->pos -= 4;
            }
            if (rd_ref(r, limit, &a->v.nodes[i]) != 0) return -1;
        }
        return 0;
    case LS_ARG_INT:
    case LS_ARG_LAYOUT:
    case LS_ARG_MEMFMT: return rd_i64(r, &a->v.i, "integer argument");
    case LS_ARG_DTYPE: {
        ls_dtype t;
        if (rd_dtype(r, &t, false, "dtype argument") != 0) return -1;
        a->v.i = t;
        return 0;
    }
    case LS_ARG_INTS:
        for (uint32_t i = 0; i < a->n; i++)
            if (rd_i64(r, &a->v.ints[i], "integer list") != 0) return -1;
        return 0;
    case LS_ARG_FLOAT: return rd_f64(r, &a->v.f, "float argument");
    case LS_ARG_FLOATS:
        for (uint32_t i = 0; i < a->n; i++)
            if (rd_f64(r, &a->v.floats[i], "float list") != 0) return -1;
        return 0;
    case LS_ARG_BOOL:
    case LS_ARG_BOOLS:
        for (uint32_t i = 0; i < (kind == LS_ARG_BOOL ? 1 : a->n); i++) {
            uint8_t v;
            if (rd_u8(r, &v, "bool") != 0) return -1;
            if (v > 1) return rd_fail(r, "bool value %u", v);
            if (kind == LS_ARG_BOOL) a->v.b = v;
            else a->v.bools[i] = v;
        }
        return 0;
    case LS_ARG_STRING:
    case LS_ARG_DEVICE:
    case LS_ARG_RAW: return rd_str(r, &a->v.s, false, "string argument");
    case LS_ARG_STRINGS:
        for (uint32_t i = 0; i < a->n; i++)
            if (rd_str(r, &a->v.strs[i], false, "string list") != 0) return -1;
        return 0;
    case LS_ARG_SYMINTS:
        for (uint32_t i = 0; i < a->n; i++) {
            uint8_t is_node;
            if (rd_u8(r, &is_node, "SymInt kind") != 0) return -1;
            if (is_node > 1) return rd_fail(r, "SymInt kind %u", is_node);
            a->v.symints[i].is_node = is_node;
            if (is_node ? rd_ref(r, limit, &a->v.symints[i].node) != 0
                        : rd_i64(r, &a->v.symints[i].i, "SymInt") != 0)
                return -1;
        }
        return 0;
    default: return 0;
    }
}

static int rd_args(rd *r, ls_node *n, uint16_t nargs, uint32_t limit)
{
    n->args = ls_calloc(nargs ? nargs : 1, sizeof *n->args);
    n->nargs = nargs;
    for (uint16_t k = 0; k < nargs; k++) {
        if (rd_arg(r, &n->args[k], limit) != 0) return -1;
        if (n->op && k < n->op->schema.nparams) n->args[k].name = n->op->schema.params[k].name;
    }
    return 0;
}

static int rd_node(rd *r, ls_bb_graph *g, uint32_t i, bool *used[3], const uint32_t counts[3])
{
    ls_node *n = ls_calloc(1, sizeof *n);
    n->refs = 1;
    n->id = i + 1;
    g->nodes[g->n_nodes++] = n;
    uint8_t kind;
    if (rd_u8(r, &kind, "node kind") != 0 || rd_name(r, &n->name, "node name") != 0) return -1;
    if (kind == LS_BB_NODE_PLACEHOLDER) {
        n->kind = LS_NODE_PLACEHOLDER;
        n->target = n->name; /* as torch.fx: a placeholder's target is its name */
        uint8_t role;
        uint32_t idx;
        if (rd_u8(r, &role, "placeholder role") != 0 || rd_u32(r, &idx, "placeholder slot") != 0) return -1;
        static const char *const what[3] = {"user input", "constant", "state"};
        if (role > LS_BB_STATE) return rd_fail(r, "placeholder %s: unknown role %u", n->name, role);
        if (idx >= counts[role])
            return rd_fail(r, "placeholder %s: %s %" PRIu32 " does not exist (%" PRIu32 " declared)", n->name,
                           what[role], idx, counts[role]);
        if (used[role][idx])
            return rd_fail(r, "placeholder %s: %s %" PRIu32 " is taken by an earlier placeholder", n->name, what[role],
                           idx);
        used[role][idx] = true;
        g->role[i] = role;
        g->role_index[i] = idx;
        if (role == LS_BB_USER_INPUT) g->inputs[idx] = i;
    } else if (kind == LS_BB_NODE_CALL) {
        n->kind = LS_NODE_CALL;
        const char *q;
        uint16_t nargs;
        if (rd_name(r, &q, "operator name") != 0) return -1;
        n->op = ls_op_by_qualname(q);
        if (!n->op) return rd_fail(r, "node %s: unknown operator '%s'", n->name, q);
        if (n->op->id == LS_OP_call_delegate)
            return rd_fail(r, "node %s: a delegate call inside a delegate is not supported", n->name);
        n->dialect = (n->op->flags & LS_OPF_SPECIAL) ? LS_DIALECT_NONE : g->dialect;
        n->target = ls_op_target(n->op, (ls_dialect)n->dialect);
        if (rd_u16(r, &nargs, "argument count") != 0) return -1;
        if (nargs > n->op->schema.nparams)
            return rd_fail(r, "node %s: %u arguments, but %s takes %u", n->name, nargs, q, n->op->schema.nparams);
        if (rd_args(r, n, nargs, i) != 0) return -1;
    } else {
        return rd_fail(r, "node %s: unknown node kind %u", n->name, kind);
    }
    uint8_t vk;
    uint16_t nvals;
    if (rd_u8(r, &vk, "value kind") != 0) return -1;
    if (vk > LS_VAL_OTHER) return rd_fail(r, "node %s: unknown value kind %u", n->name, vk);
    if (rd_u16(r, &nvals, "value count") != 0) return -1;
    if ((uint64_t)nvals * 2 > r->n - r->pos)
        return rd_fail(r, "node %s: %u values cannot fit in the bytes left", n->name, nvals);
    n->val_kind = vk;
    ls_tmeta *vals = ls_calloc(nvals ? nvals : 1, sizeof *vals);
    n->vals = vals; /* the node's own (storage 0): freed with it */
    n->nvals = nvals;
    for (uint16_t k = 0; k < nvals; k++)
        if (rd_meta(r, &vals[k]) != 0) return -1;
    if (n->kind != LS_NODE_PLACEHOLDER) return 0;

    /* What a placeholder declares must agree with what it stands for. */
    bool tensor = vk == LS_VAL_TENSOR && nvals == 1 && n->vals[0].dtype != LS_DT_UNKNOWN;
    if (g->role[i] == LS_BB_USER_INPUT) {
        if (!tensor && vk != LS_VAL_SYMINT)
            return rd_fail(r, "user input %s declares neither a tensor nor a SymInt", n->name);
        return 0;
    }
    const ls_bb_tensor *t = g->role[i] == LS_BB_CONSTANT ? &g->constants[g->role_index[i]] : &g->states[g->role_index[i]];
    if (!tensor) return 0;
    if (!ls_tmeta_fits(&n->vals[0], &t->meta)) {
        char a[128], b[128];
        return rd_fail(r, "placeholder %s declares %s but its tensor '%s' is %s", n->name,
                       ls_tmeta_str(&n->vals[0], a, sizeof a), t->name, ls_tmeta_str(&t->meta, b, sizeof b));
    }
    return 0;
}

static int rd_graph(rd *r, ls_bb_graph *g, uint64_t data_off, uint64_t data_size)
{
    uint8_t dialect;
    uint32_t n_nodes;
    if (rd_name(r, &g->name, "program name") != 0 || rd_u8(r, &dialect, "dialect") != 0) return -1;
    if (dialect > LS_DIALECT_EDGE) return rd_fail(r, "unknown dialect %u", dialect);
    g->dialect = dialect;
    /* smallest encodings: tensor entry 4+1+1+8+8, node 1+4+1+...+3, output 1+2 */
    if (rd_count(r, &g->n_constants, 22, "constants") != 0) return -1;
    if (rd_count(r, &g->n_states, 22, "states") != 0) return -1;
    if (rd_count(r, &g->n_inputs, 6, "user inputs") != 0) return -1;
    if (rd_count(r, &n_nodes, 9, "nodes") != 0) return -1;
    if (rd_count(r, &g->n_outputs, 3, "outputs") != 0) return -1;
    if (g->n_inputs > n_nodes)
        return rd_fail(r, "%" PRIu32 " user inputs but only %" PRIu32 " nodes", g->n_inputs, n_nodes);
    g->constants = ls_calloc(g->n_constants ? g->n_constants : 1, sizeof *g->constants);
    g->states = ls_calloc(g->n_states ? g->n_states : 1, sizeof *g->states);
    for (uint32_t i = 0; i < g->n_constants; i++)
        if (rd_tensor(r, &g->constants[i], data_off, data_size) != 0) return -1;
    for (uint32_t i = 0; i < g->n_states; i++)
        if (rd_tensor(r, &g->states[i], data_off, data_size) != 0) return -1;
    for (uint32_t i = 0; i < g->n_constants + g->n_states; i++) { /* one slot per target */
        const ls_bb_tensor *a = i < g->n_constants ? &g->constants[i] : &g->states[i - g->n_constants];
        for (uint32_t j = 0; j < i; j++) {
            const ls_bb_tensor *b = j < g->n_constants ? &g->constants[j] : &g->states[j - g->n_constants];
            if (a->name == b->name) return rd_fail(r, "tensor '%s' is stored twice", a->name);
        }
    }

    g->nodes = ls_calloc(n_nodes ? n_nodes : 1, sizeof *g->nodes);
    g->role = ls_calloc(n_nodes ? n_nodes : 1, 1);
    g->role_index = ls_calloc(n_nodes ? n_nodes : 1, sizeof *g->role_index);
    g->inputs = ls_calloc(g->n_inputs ? g->n_inputs : 1, sizeof *g->inputs);
    const uint32_t counts[3] = {g->n_inputs, g->n_constants, g->n_states};
    bool *used[3];
    for (int k = 0; k < 3; k++) used[k] = ls_calloc(counts[k] ? counts[k] : 1, sizeof(bool));
    int rc = 0;
    for (uint32_t i = 0; i < n_nodes && rc == 0; i++) rc = rd_node(r, g, i, used, counts);
    static const char *const what[3] = {"user input", "constant", "state"};
    for (int k = 0; k < 3 && rc == 0; k++)
        for (uint32_t j = 0; j < counts[k] && rc == 0; j++)
            if (!used[k][j]) rc = rd_fail(r, "%s %" PRIu32 " has no placeholder", what[k], j);
    for (int k = 0; k < 3; k++) free(used[k]);
    if (rc != 0) return -1;

    ls_node *out = ls_calloc(1, sizeof *out);
    out->refs = 1;
    out->id = n_nodes + 1;
    out->kind = LS_NODE_OUTPUT;
    out->name = ls_intern("output");
    g->output = out;
    g->outputs = ls_calloc(g->n_outputs ? g->n_outputs : 1, sizeof *g->outputs);
    out->args = ls_calloc(g->n_outputs ? g->n_outputs : 1, sizeof *out->args);
    out->nargs = (uint16_t)(g->n_outputs > UINT16_MAX ? UINT16_MAX : g->n_outputs);
    if (g->n_outputs > UINT16_MAX) return rd_fail(r, "%" PRIu32 " outputs (at most 65535)", g->n_outputs);
    bool *written = ls_calloc(g->n_states ? g->n_states : 1, sizeof *written);
    for (uint32_t k = 0; k < g->n_outputs && rc == 0; k++) {
        uint8_t kind = 0;
        rc = rd_u8(r, &kind, "output kind");
        if (rc == 0 && kind > LS_BB_OUT_STATE) rc = rd_fail(r, "output %" PRIu32 ": unknown kind %u", k, kind);
        if (rc == 0 && kind == LS_BB_OUT_STATE) {
            uint32_t s;
            rc = rd_u32(r, &s, "output state");
            if (rc == 0 && s >= g->n_states)
                rc = rd_fail(r, "output %" PRIu32 " writes state %" PRIu32 " (%" PRIu32 " declared)", k, s, g->n_states);
            else if (rc == 0 && written[s])
                rc = rd_fail(r, "output %" PRIu32 " writes state '%s' a second time", k, g->states[s].name);
            if (rc == 0) written[s] = true, g->outputs[k].state = s;
        }
        g->outputs[k].kind = kind;
        if (rc == 0) rc = rd_arg(r, &out->args[k], n_nodes);
        if (rc == 0 && kind == LS_BB_OUT_USER) g->n_user_outputs++;
    }
    free(written);
    if (rc != 0) return -1;
    if (r->pos != r->n) return rd_fail(r, "%" PRIu64 " unread bytes at the end of the graph section", r->n - r->pos);
    return 0;
}

static uint64_t hdr_u64(const uint8_t *at)
{
    uint64_t v = 0;
    for (int i = 0; i < 8; i++) v |= (uint64_t)at[i] << (8 * i);
    return v;
}

static uint32_t hdr_u32(const uint8_t *at)
{
    return (uint32_t)ls_le_get(at, 4);
}

int ls_bb_decode(const ls_blob *blob, ls_bb_graph **out, ls_error *err)
{
    *out = NULL;
    if (!blob || !blob->data) return ls_fail(err, "bundled blob: missing (the submodule was never preprocessed)");
    const uint8_t *d = blob->data;
    if (blob->size < LS_BB_HEADER_SIZE)
        return ls_fail(err, "bundled blob: %zu bytes, shorter than its %u-byte header", blob->size, LS_BB_HEADER_SIZE);
    if (memcmp(d, LS_BB_MAGIC, 4) != 0) return ls_fail(err, "bundled blob: bad magic (this is not a BundledBackend blob)");
    uint32_t version = hdr_u32(d + 4);
    if (version != LS_BB_VERSION)
        return ls_fail(err, "bundled blob: format version %" PRIu32 ", this build reads version %u only", version,
                       LS_BB_VERSION);
    if (hdr_u32(d + 8) != LS_BB_HEADER_SIZE)
        return ls_fail(err, "bundled blob: header size %" PRIu32 " (version 1 has %u)", hdr_u32(d + 8), LS_BB_HEADER_SIZE);
    if (hdr_u32(d + 12) != 0) return ls_fail(err, "bundled blob: unknown flags 0x%" PRIx32, hdr_u32(d + 12));
    uint64_t total = hdr_u64(d + 16), goff = hdr_u64(d + 24), gsize = hdr_u64(d + 32);
    uint64_t doff = hdr_u64(d + 40), dsize = hdr_u64(d + 48), sum = hdr_u64(d + 56);
    if (total != blob->size)
        return ls_fail(err, "bundled blob: the header says %" PRIu64 " bytes but the blob has %zu (truncated or padded)",
                       total, blob->size);
    if (goff != LS_BB_HEADER_SIZE || gsize > total - goff)
        return ls_fail(err, "bundled blob: graph section at %" PRIu64 " (+%" PRIu64 ") is not inside the %" PRIu64
                            "-byte blob right after the header", goff, gsize, total);
    if (doff % LS_BB_ALIGN || doff < goff + gsize || doff > total || dsize != total - doff)
        return ls_fail(err, "bundled blob: data section at %" PRIu64 " (+%" PRIu64 ") is not 64-byte aligned after the "
                            "graph section and running to the end of the %" PRIu64 "-byte blob", doff, dsize, total);
    uint64_t have = XXH3_64bits(d + LS_BB_HEADER_SIZE, blob->size - LS_BB_HEADER_SIZE);
    if (have != sum)
        return ls_fail(err, "bundled blob: checksum mismatch (stored %016" PRIx64 ", computed %016" PRIx64
                            "): the blob is corrupted", sum, have);
    ls_bb_graph *g = ls_calloc(1, sizeof *g);
    rd r = {.p = d + goff, .n = gsize, .base = goff, .err = err};
    if (rd_graph(&r, g, doff, dsize) != 0) {
        ls_bb_graph_free(g);
        return -1;
    }
    *out = g;
    return 0;
}

void ls_bb_graph_free(ls_bb_graph *g)
{
    if (!g) return;
    for (uint32_t i = 0; i < g->n_nodes; i++) ls_node_unref(g->nodes[i]);
    free(g->nodes);
    ls_node_unref(g->output);
    free(g->role);
    free(g->role_index);
    free(g->inputs);
    free(g->constants);
    free(g->states);
    free(g->outputs);
    free(g);
}
