/* The bundled backend's processed blob: the writer (from a lowered submodule); the checking
 * reader is blob_read.c.
 * Layout and rules: docs/bundled-backend.md. All integers are little-endian. The reader treats
 * the blob as untrusted: it checks every count against the bytes left before allocating, every
 * offset and length against the section that holds it, and every node reference against the
 * nodes decoded so far. */
#include "bundled_blob.h"

#include <inttypes.h>
#include <stdlib.h>
#include <string.h>
#include <xxhash.h>

#include "ops.h"
#include "ptrmap.h"

/* ================================================================ writer */

/* The writer appends to an ls_buf directly: a module's graph is a few thousand small fields,
 * and the to_backend step encodes one module per partition. */
static inline uint8_t *room(ls_buf *b, size_t n)
{
    if (b->len + n + 1 > b->cap) {
        size_t nc = b->cap ? b->cap : 1024;
        while (nc < b->len + n + 1) nc *= 2;
        b->s = ls_realloc(b->s, nc);
        b->cap = nc;
    }
    uint8_t *at = (uint8_t *)b->s + b->len;
    b->len += n;
    return at;
}

static inline void put_u8(ls_buf *b, uint8_t v)
{
    *room(b, 1) = v;
}

static inline void put_le(ls_buf *b, uint64_t v, int nbytes)
{
    ls_le_put(room(b, (size_t)nbytes), v, nbytes);
}

static void put_u16(ls_buf *b, uint16_t v) { put_le(b, v, 2); }
static void put_u32(ls_buf *b, uint32_t v) { put_le(b, v, 4); }
static void put_u64(ls_buf *b, uint64_t v) { put_le(b, v, 8); }
static void put_i64(ls_buf *b, int64_t v) { put_le(b, (uint64_t)v, 8); }

static void put_f64(ls_buf *b, double v)
{
    uint64_t u;
    memcpy(&u, &v, 8);
    put_le(b, u, 8);
}

static void put_str(ls_buf *b, const char *s)
{
    size_t n = s ? strlen(s) : 0;
    uint8_t *at = room(b, 4 + n);
    ls_le_put(at, (uint32_t)n, 4);
    if (n) memcpy(at + 4, s, n);
}

static uint8_t dtype_code(ls_dtype t)
{
    int c = ls_dtype_to_et(t);
    return c < 0 ? (uint8_t)LS_BB_DTYPE_UNKNOWN : (uint8_t)c;
}

static void put_meta(ls_buf *b, const ls_tmeta *m)
{
    put_u8(b, dtype_code(m->dtype));
    put_u8(b, m->ndim);
    for (int d = 0; d < m->ndim; d++) put_u8(b, m->dim_order[d]);
    for (int d = 0; d < m->ndim; d++) {
        put_i64(b, m->sizes[d]);
        put_str(b, m->sym[d]);
    }
}

typedef struct enc {
    const ls_program *p;
    ls_buf g;
    ls_error *err;
    ls_ptrmap pos_of_id; /* (void *)id → position: a module keeps its nodes' sparse ids */
} enc;

/* Node references are written as positions in the submodule (= blob node indices), and must
 * point to a node placed before `pos`. */
static int put_ref(enc *e, uint32_t id, uint32_t pos, const ls_node *user)
{
    uintptr_t v;
    int32_t at = ls_ptrmap_get(&e->pos_of_id, (const void *)(uintptr_t)id, &v) ? (int32_t)v : -1;
    if (at < 0 || (uint32_t)at >= pos || e->p->nodes[at]->kind == LS_NODE_OUTPUT)
        return ls_fail(e->err, "node %s uses node id %" PRIu32 ", which is not defined before it", user->name, id);
    put_u32(&e->g, (uint32_t)at);
    return 0;
}

static int put_arg(enc *e, const ls_arg *a, uint32_t pos, const ls_node *user)
{
    ls_buf *b = &e->g;
    put_u8(b, a->kind);
    put_u8(b, a->flags);
    switch (a->kind) {
    case LS_ARG_NONE: return 0;
    case LS_ARG_NODE: return put_ref(e, a->v.node, pos, user);
    case LS_ARG_NODES:
    case LS_ARG_OPT_NODES:
        put_u32(b, a->n);
        for (uint32_t i = 0; i < a->n; i++) {
            if (a->v.nodes[i] == 0 && a->kind == LS_ARG_OPT_NODES) put_u32(b, LS_BB_OPT_NONE);
            else if (put_ref(e, a->v.nodes[i], pos, user) != 0) return -1;
        }
        return 0;
    case LS_ARG_INT:
    case LS_ARG_LAYOUT:
    case LS_ARG_MEMFMT: put_i64(b, a->v.i); return 0;
    case LS_ARG_DTYPE: put_u8(b, dtype_code((ls_dtype)a->v.i)); return 0;
    case LS_ARG_INTS:
        put_u32(b, a->n);
        for (uint32_t i = 0; i < a->n; i++) put_i64(b, a->v.ints[i]);
        return 0;
    case LS_ARG_FLOAT: put_f64(b, a->v.f); return 0;
    case LS_ARG_FLOATS:
        put_u32(b, a->n);
        for (uint32_t i = 0; i < a->n; i++) put_f64(b, a->v.floats[i]);
        return 0;
    case LS_ARG_BOOL: put_u8(b, a->v.b ? 1 : 0); return 0;
    case LS_ARG_BOOLS:
        put_u32(b, a->n);
        for (uint32_t i = 0; i < a->n; i++) put_u8(b, a->v.bools[i] ? 1 : 0);
        return 0;
    case LS_ARG_STRING:
    case LS_ARG_DEVICE:
    case LS_ARG_RAW: put_str(b, a->v.s); return 0;
    case LS_ARG_STRINGS:
        put_u32(b, a->n);
        for (uint32_t i = 0; i < a->n; i++) put_str(b, a->v.strs[i]);
        return 0;
    case LS_ARG_SYMINTS:
        put_u32(b, a->n);
        for (uint32_t i = 0; i < a->n; i++) {
            put_u8(b, a->v.symints[i].is_node ? 1 : 0);
            if (!a->v.symints[i].is_node) put_i64(b, a->v.symints[i].i);
            else if (put_ref(e, a->v.symints[i].node, pos, user) != 0) return -1;
        }
        return 0;
    default: return ls_fail(e->err, "node %s: argument of unknown kind %d", user->name, a->kind);
    }
}

/* A consumed data placeholder: which slot, and where its bytes are. */
typedef struct slot {
    const char *target;
    const char *placeholder;
    ls_tensor *t;
    uint64_t rel; /* offset in the data section */
} slot;
typedef LS_VEC(slot) slot_vec;

static bool meta_matches(const ls_tmeta *m, const ls_tensor *t)
{
    return m->dtype != LS_DT_UNKNOWN && ls_tensor_fits(m, t); /* the blob records a known dtype */
}

static uint64_t align_up(uint64_t v)
{
    return (v + LS_BB_ALIGN - 1) & ~(uint64_t)(LS_BB_ALIGN - 1);
}

/* Lookups by interned pointer with a cursor: to_backend lists a module's placeholders, specs
 * and data in the same order, so the next entry is almost always the one wanted. */
static int32_t spec_of(const ls_program *p, const char *name, uint32_t *next)
{
    if (*next < p->n_inputs && p->inputs[*next].name == name) return (int32_t)(*next)++;
    for (uint32_t i = 0; i < p->n_inputs; i++)
        if (p->inputs[i].name == name) {
            *next = i + 1;
            return (int32_t)i;
        }
    return -1;
}

static ls_named_tensor *named_of(ls_named_tensor *v, uint32_t n, const char *target, uint32_t *next)
{
    if (*next < n && v[*next].name == target) return &v[(*next)++];
    for (uint32_t i = 0; i < n; i++)
        if (v[i].name == target) {
            *next = i + 1;
            return &v[i];
        }
    return NULL;
}

/* Where a spec's data lives (as ls_program_spec_data). */
static ls_named_tensor *spec_data(const ls_program *p, const ls_input_spec *s, uint32_t *next_state,
                                  uint32_t *next_const)
{
    bool in_state = ls_input_in_state(s->kind, s->persistent);
    bool in_const = s->kind == LS_IN_CONSTANT_TENSOR || (s->kind == LS_IN_BUFFER && !s->persistent);
    if (in_state) return named_of(p->state_dict, p->n_state, s->target, next_state);
    if (in_const) return named_of(p->constants, p->n_constants, s->target, next_const);
    return NULL;
}

static int classify(enc *e, slot_vec *consts, slot_vec *states, uint8_t *role, uint32_t *index)
{
    const ls_program *p = e->p;
    uint32_t n_user = 0, next_spec = 0, next_state = 0, next_const = 0;
    ls_ptrmap_reserve(&e->pos_of_id, p->n_nodes);
    for (uint32_t pos = 0; pos < p->n_nodes; pos++)
        if (p->nodes[pos]->id) ls_ptrmap_put(&e->pos_of_id, (const void *)(uintptr_t)p->nodes[pos]->id, pos);
    for (uint32_t pos = 0; pos < p->n_nodes; pos++) {
        const ls_node *n = p->nodes[pos];
        if (n->kind != LS_NODE_PLACEHOLDER) continue;
        int32_t si = spec_of(p, n->name, &next_spec);
        if (si < 0) return ls_fail(e->err, "placeholder %s has no input spec", n->name);
        const ls_input_spec *s = &p->inputs[si];
        if (s->kind == LS_IN_USER_INPUT) {
            role[pos] = LS_BB_USER_INPUT;
            index[pos] = n_user++;
            continue;
        }
        if (s->kind != LS_IN_PARAMETER && s->kind != LS_IN_BUFFER && s->kind != LS_IN_CONSTANT_TENSOR)
            return ls_fail(e->err, "placeholder %s is a %s input, which the bundled backend cannot carry", n->name,
                           ls_input_kind_name((ls_input_kind)s->kind));
        if (!s->target) return ls_fail(e->err, "placeholder %s (%s) has no target", n->name,
                                       ls_input_kind_name((ls_input_kind)s->kind));
        /* The builder guard: one slot per data target, never the same data stored twice. */
        for (int which = 0; which < 2; which++) {
            const slot_vec *v = which ? states : consts;
            for (uint32_t i = 0; i < v->n; i++)
                if (v->v[i].target == s->target)
                    return ls_fail(e->err,
                                   "placeholder %s names %s target '%s', which already has a slot (placeholder %s); "
                                   "a delegate takes each constant once",
                                   n->name, ls_input_kind_name((ls_input_kind)s->kind), s->target, v->v[i].placeholder);
        }
        ls_named_tensor *nt = spec_data(p, s, &next_state, &next_const);
        if (!nt) return ls_fail(e->err, "placeholder %s: %s '%s' is not in the submodule's %s", n->name,
                                ls_input_kind_name((ls_input_kind)s->kind), s->target,
                                ls_program_state(p, s->target) || ls_program_constant(p, s->target)
                                    ? "table where its kind says it lives"
                                    : "state dict or constants");
        if (!nt->t) /* valid, and the blob needs the bytes the load left out: a need (exit 3) */
            return ls_fail_needs(e->err, "placeholder %s: '%s' has no data (" LS_NO_WEIGHTS ")", n->name, s->target);
        if (n->val_kind == LS_VAL_TENSOR && n->nvals == 1 && n->vals[0].dtype != LS_DT_UNKNOWN &&
            !meta_matches(&n->vals[0], nt->t)) {
            char a[128], b[128];
            ls_tmeta tm;
            ls_tensor_meta(nt->t, &tm);
            return ls_fail(e->err, "placeholder %s declares %s but '%s' holds %s", n->name,
                           ls_tmeta_str(&n->vals[0], a, sizeof a), s->target, ls_tmeta_str(&tm, b, sizeof b));
        }
        bool mutated = false;
        for (uint32_t o = 0; o < p->n_outputs && s->kind == LS_IN_BUFFER; o++)
            if (p->outputs[o].kind == LS_OUT_BUFFER_MUTATION && p->outputs[o].target == s->target) mutated = true;
        slot sl = {.target = s->target, .placeholder = n->name, .t = nt->t};
        if (mutated) {
            role[pos] = LS_BB_STATE;
            index[pos] = states->n;
            ls_vec_push(states, sl);
        } else {
            role[pos] = LS_BB_CONSTANT;
            index[pos] = consts->n;
            ls_vec_push(consts, sl);
        }
    }
    return 0;
}

static void put_slots(ls_buf *b, slot *v, uint32_t n, uint64_t *data_end)
{
    for (uint32_t i = 0; i < n; i++) {
        ls_tensor *t = v[i].t;
        v[i].rel = align_up(*data_end);
        *data_end = v[i].rel + t->nbytes;
        put_str(b, v[i].target);
        put_u8(b, dtype_code(t->dtype));
        put_u8(b, t->ndim);
        for (int d = 0; d < t->ndim; d++) put_i64(b, t->sizes[d]);
        put_u64(b, v[i].rel);
        put_u64(b, t->nbytes);
    }
}

static int encode_graph(enc *e, slot_vec *consts, slot_vec *states, uint64_t *data_size)
{
    const ls_program *p = e->p;
    const ls_node *out = p->n_nodes ? p->nodes[p->n_nodes - 1] : NULL;
    if (!out || out->kind != LS_NODE_OUTPUT) return ls_fail(e->err, "the last node is not the output node");
    uint32_t n_body = p->n_nodes - 1;
    uint8_t *role = ls_calloc(p->n_nodes, 1);
    uint32_t *index = ls_calloc(p->n_nodes, sizeof *index);
    int rc = -1;
    if (classify(e, consts, states, role, index) != 0) goto done;

    uint32_t n_user_inputs = 0;
    for (uint32_t i = 0; i < n_body; i++)
        if (p->nodes[i]->kind == LS_NODE_PLACEHOLDER && role[i] == LS_BB_USER_INPUT) n_user_inputs++;
    if (out->nargs != p->n_outputs) {
        ls_fail(e->err, "the output node has %u values but the signature lists %" PRIu32 " outputs", out->nargs,
                p->n_outputs);
        goto done;
    }

    ls_buf *b = &e->g;
    put_str(b, p->name);
    put_u8(b, p->dialect);
    put_u32(b, consts->n);
    put_u32(b, states->n);
    put_u32(b, n_user_inputs);
    put_u32(b, n_body);
    put_u32(b, p->n_outputs);
    uint64_t end = 0;
    put_slots(b, consts->v, consts->n, &end);
    put_slots(b, states->v, states->n, &end);
    *data_size = align_up(end);

    for (uint32_t pos = 0; pos < n_body; pos++) {
        const ls_node *n = p->nodes[pos];
        if (n->kind == LS_NODE_PLACEHOLDER) {
            put_u8(b, LS_BB_NODE_PLACEHOLDER);
            put_str(b, n->name);
            put_u8(b, role[pos]);
            put_u32(b, index[pos]);
        } else if (n->kind == LS_NODE_CALL) {
            if (!n->op) {
                ls_fail(e->err, "node %s: unknown operator %s", n->name, n->target ? n->target : "(none)");
                goto done;
            }
            if (n->op->id == LS_OP_call_delegate) {
                ls_fail(e->err, "node %s: a delegate call inside a delegate is not supported", n->name);
                goto done;
            }
            if (n->nargs > n->op->schema.nparams) {
                ls_fail(e->err, "node %s: %u arguments, but %s takes %u", n->name, n->nargs, n->op->qualname,
                        n->op->schema.nparams);
                goto done;
            }
            put_u8(b, LS_BB_NODE_CALL);
            put_str(b, n->name);
            put_str(b, n->op->qualname);
            put_u16(b, n->nargs);
            for (uint16_t i = 0; i < n->nargs; i++)
                if (put_arg(e, &n->args[i], pos, n) != 0) goto done;
        } else {
            ls_fail(e->err, "node %s: a %s node cannot be delegated", n->name, ls_node_kind_name((ls_node_kind)n->kind));
            goto done;
        }
        put_u8(b, n->val_kind);
        put_u16(b, n->nvals);
        for (uint16_t i = 0; i < n->nvals; i++) put_meta(b, &n->vals[i]);
    }

    bool *written = ls_calloc(states->n ? states->n : 1, sizeof *written);
    uint32_t k;
    for (k = 0; k < p->n_outputs; k++) {
        const ls_output_spec *s = &p->outputs[k];
        if (s->kind == LS_OUT_USER_OUTPUT || s->kind == LS_OUT_LOSS_OUTPUT) {
            put_u8(b, LS_BB_OUT_USER);
        } else if (s->kind == LS_OUT_BUFFER_MUTATION) {
            uint32_t si = 0;
            while (si < states->n && states->v[si].target != s->target) si++;
            if (si == states->n) {
                ls_fail(e->err, "output %" PRIu32 " mutates buffer '%s', which the submodule did not consume", k,
                        s->target ? s->target : "(none)");
                break;
            }
            if (written[si]) {
                ls_fail(e->err, "output %" PRIu32 " mutates buffer '%s' a second time", k, s->target);
                break;
            }
            written[si] = true;
            put_u8(b, LS_BB_OUT_STATE);
            put_u32(b, si);
        } else {
            ls_fail(e->err, "output %" PRIu32 " is a %s, which the bundled backend cannot carry", k,
                    ls_output_kind_name((ls_output_kind)s->kind));
            break;
        }
        if (put_arg(e, &out->args[k], p->n_nodes - 1, out) != 0) break;
    }
    free(written);
    if (k == p->n_outputs) rc = 0;
done:
    free(role);
    free(index);
    return rc;
}

static void put_header_u32(uint8_t *at, uint32_t v)
{
    ls_le_put(at, v, 4);
}

static void put_header_u64(uint8_t *at, uint64_t v)
{
    ls_le_put(at, v, 8);
}

void ls_bb_seal(ls_blob *blob)
{
    if (!blob || blob->size < LS_BB_HEADER_SIZE) return;
    put_header_u64(blob->data + 56, XXH3_64bits(blob->data + LS_BB_HEADER_SIZE, blob->size - LS_BB_HEADER_SIZE));
}

int ls_bb_encode(const ls_program *sub, ls_blob **out, ls_error *err)
{
    *out = NULL;
    enc e = {.p = sub, .err = err};
    /* a node takes about 150 bytes (names, op, arguments, value metadata): grow once at most */
    e.g.cap = 192 * (size_t)sub->n_nodes + 64 * (size_t)sub->n_inputs + 256;
    e.g.s = ls_malloc(e.g.cap);
    slot_vec consts = {0};
    slot_vec states = {0};
    uint64_t data_size = 0;
    int rc = encode_graph(&e, &consts, &states, &data_size);
    if (rc == 0) {
        uint64_t graph_off = LS_BB_HEADER_SIZE, graph_size = e.g.len;
        uint64_t data_off = align_up(graph_off + graph_size);
        uint64_t total = data_off + data_size;
        /* every byte is written below: the header and the sections, and zeros in the gaps */
        uint8_t *bytes = ls_alloc_aligned((size_t)total);
        ls_blob *b = bytes ? ls_blob_wrap(bytes, (size_t)total) : NULL;
        if (!b) {
            rc = ls_fail_needs(err, "out of memory: cannot allocate a blob of %" PRIu64 " bytes", total);
        } else {
            memcpy(b->data, LS_BB_MAGIC, 4);
            put_header_u32(b->data + 4, LS_BB_VERSION);
            put_header_u32(b->data + 8, LS_BB_HEADER_SIZE);
            put_header_u32(b->data + 12, 0);
            put_header_u64(b->data + 16, total);
            put_header_u64(b->data + 24, graph_off);
            put_header_u64(b->data + 32, graph_size);
            put_header_u64(b->data + 40, data_off);
            put_header_u64(b->data + 48, data_size);
            if (graph_size) memcpy(b->data + graph_off, e.g.s, graph_size);
            uint64_t at = graph_off + graph_size; /* the first byte not written yet */
            for (int which = 0; which < 2; which++) {
                const slot_vec *v = which ? &states : &consts;
                for (uint32_t i = 0; i < v->n; i++) {
                    uint64_t off = data_off + v->v[i].rel;
                    memset(b->data + at, 0, (size_t)(off - at));
                    memcpy(b->data + off, v->v[i].t->data, v->v[i].t->nbytes);
                    at = off + v->v[i].t->nbytes;
                }
            }
            memset(b->data + at, 0, (size_t)(total - at));
            ls_bb_seal(b);
            *out = b;
        }
    }
    ls_buf_free(&e.g);
    ls_ptrmap_free(&e.pos_of_id);
    free(consts.v);
    free(states.v);
    return rc;
}
