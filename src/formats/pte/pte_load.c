/* A read .pte as a program: one method's values, instructions and delegates turned back into
 * placeholders, call nodes and lowered submodules, so info, run and the UI work on ExecuTorch
 * files as on any program.
 *
 * Values and the nodes that stand for them: plan inputs become user-input placeholders,
 * constants (data_buffer_idx > 0, no allocation) constant placeholders, mutable tensors (planned
 * with an initial state, or read before anything writes them) buffer placeholders. A KernelCall
 * defines its out arguments, a DelegateCall the outputs at the end of its argument list. A
 * KernelCall of copy_ into a buffer is the write-back ExecuTorch inserts for a mutated buffer:
 * it becomes a BUFFER_MUTATION output again, as torch.export has it. */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "backend.h"
#include "build.h"
#include "dialect.h"
#include "named_data.h"
#include "namer.h"
#include "ops.h"
#include "pte_file.h"
#include "pte_internal.h"

enum { R_NONE, R_INPUT, R_CONST, R_STATE };

typedef struct loader {
    const char *where;
    ls_pte_file *file;
    const ls_pte *pte;
    const ls_pte_plan *plan;
    const char *method; /* interned */
    ls_program *p;
    ls_namer *names;
    uint32_t nvals;
    uint32_t *node_of; /* per value: the node id that stands for it (0: none yet) */
    uint8_t *role;
    LS_VEC(ls_node *) ph;     /* constant and buffer placeholders */
    LS_VEC(ls_input_spec) ph_specs;
    LS_VEC(ls_node *) user;   /* user-input placeholders, plan order */
    LS_VEC(ls_input_spec) user_specs;
    LS_VEC(ls_node *) body;
    LS_VEC(uint32_t) mut_node; /* buffer write-backs: the value written ... */
    LS_VEC(const char *) mut_target; /* ... into this buffer */
    uint32_t *sub_attr; /* per delegate: its get_attr node id (0: none yet) */
    uint32_t n_unknown;
    lsp_places *places; /* built on the first value no instruction writes */
    uint32_t call_node; /* the call node the instruction being read became (0: none) */
    bool missing_data;
    ls_error *err;
} loader;

static int lfail(loader *L, const char *fmt, ...) LS_PRINTF(2, 3);
static int lfail(loader *L, const char *fmt, ...)
{
    char msg[LS_ERR_MAX];
    va_list ap;
    va_start(ap, fmt);
    vsnprintf(msg, sizeof msg, fmt, ap);
    va_end(ap);
    return ls_fail(L->err, "%s: %s: %s", L->where, L->plan && L->plan->name ? L->plan->name : "plan", msg);
}

static const ls_pte_value *val(const loader *L, int64_t i)
{
    return i >= 0 && (uint64_t)i < L->nvals ? &L->plan->values.v[i] : NULL;
}

static bool is_tensor(const loader *L, int64_t i)
{
    const ls_pte_value *v = val(L, i);
    return v && v->kind == LS_PTE_VAL_TENSOR;
}

static int tensor_meta(loader *L, const ls_pte_tensor *t, ls_tmeta *m)
{
    if (t->sizes.n > LS_MAX_DIMS) return lfail(L, "a tensor of rank %u (at most %d)", t->sizes.n, LS_MAX_DIMS);
    int64_t sizes[LS_MAX_DIMS];
    for (uint32_t d = 0; d < t->sizes.n; d++) sizes[d] = t->sizes.v[d];
    ls_tmeta_init(m, ls_dtype_from_et(t->scalar_type), (int)t->sizes.n, sizes);
    if (t->dim_order.n == t->sizes.n)
        for (uint32_t d = 0; d < t->dim_order.n; d++) m->dim_order[d] = t->dim_order.v[d];
    m->requires_grad = t->requires_grad;
    if (t->shape_dynamism != LS_PTE_STATIC) /* sizes are upper bounds: every dim may be smaller */
        for (uint32_t d = 0; d < t->sizes.n; d++) m->sym[d] = ls_internf("<=%d", (int)t->sizes.v[d]);
    return 0;
}

/* ---- data */

/* The blob holding [data, data + size) among segs, or NULL. */
static ls_blob *blob_holding(const ls_pte_blob *segs, uint32_t n, const uint8_t *data, size_t size, size_t *offset)
{
    for (uint32_t s = 0; s < n; s++)
        if (segs[s].owner && data >= segs[s].v && data + size <= segs[s].v + segs[s].n) {
            *offset = (size_t)(data - segs[s].v);
            return segs[s].owner;
        }
    return NULL;
}

/* A tensor over bytes the .pte or a .ptd holds: shared with the segment's blob. */
static ls_tensor *tensor_over(loader *L, const ls_tmeta *m, const uint8_t *data, size_t size)
{
    if (m->dtype == LS_DT_UNKNOWN || ls_tmeta_numel(m) < 0) return NULL;
    if ((uint64_t)ls_tmeta_numel(m) * ls_dtype_size(m->dtype) != size) return NULL;
    size_t off = 0;
    ls_blob *b = blob_holding(L->pte->segment_data, L->pte->n_segment_data, data, size, &off);
    for (uint32_t k = 0; !b && k < L->file->n_ptds; k++)
        b = blob_holding(L->file->ptds[k].segment_data, L->file->ptds[k].n_segment_data, data, size, &off);
    if (b) return ls_tensor_from_blob(b, off, m->dtype, m->ndim, m->sizes);
    ls_tensor *t = ls_tensor_alloc(m->dtype, m->ndim, m->sizes); /* inline constant_buffer bytes */
    if (size) memcpy(t->data, data, size);
    return t;
}

/* The stored bytes of a constant or mutable tensor, or NULL (no data: metadata only). */
static int stored_tensor(loader *L, const ls_pte_tensor *t, const ls_tmeta *m, ls_tensor **out)
{
    *out = NULL;
    const uint8_t *data = NULL;
    size_t size = 0;
    int rc;
    if (t->has_extra_tensor_info && t->extra_tensor_info.location == LS_PTE_TENSOR_EXTERNAL) {
        /* no bytes when no .ptd holds it: the file's origin says why (pte_file.c: missing_data) */
        const char *key = t->extra_tensor_info.fully_qualified_name;
        const ls_pte_external *e = key ? ls_pte_file_external(L->file, L->method, key) : NULL;
        if (!e || e->ptd < 0) return 0;
        if (ls_ptd_tensor_bytes(&L->file->ptds[e->ptd], t, &data, &size, L->err) != 0)
            return ls_fail_prefix(L->err, "%s", L->where);
        *out = tensor_over(L, m, data, size);
        if (!*out) L->missing_data = true;
        return 0;
    }
    rc = ls_pte_tensor_bytes(L->pte, t, &data, &size, L->err);
    if (rc < 0) return -1;
    if (rc == 0) return 0;
    *out = tensor_over(L, m, data, size);
    if (!*out) L->missing_data = true;
    return 0;
}

/* ---- placeholders */

static const char *fqn_of(const ls_pte_tensor *t)
{
    return t->has_extra_tensor_info && t->extra_tensor_info.fully_qualified_name
               ? ls_intern(t->extra_tensor_info.fully_qualified_name)
               : NULL;
}

static ls_node *new_placeholder(loader *L, const char *name, const ls_tmeta *m)
{
    ls_node *n = ls_node_new(L->p, LS_NODE_PLACEHOLDER, ls_namer_take(L->names, name), NULL);
    if (m) ls_node_set_val(n, m);
    return n;
}

/* A constant or buffer placeholder for tensor value i, with its data. */
static int data_placeholder(loader *L, uint32_t i, bool buffer)
{
    const ls_pte_tensor *t = &L->plan->values.v[i].tensor;
    ls_tmeta m;
    if (tensor_meta(L, t, &m) != 0) return -1;
    const char *target = fqn_of(t);
    if (!target)
        target = buffer ? ls_internf("_buffer_%u", i) : ls_internf("_tensor_constant%u", t->data_buffer_idx);
    if (buffer ? ls_program_state(L->p, target) != NULL : ls_program_constant(L->p, target) != NULL)
        target = ls_internf("%s_%u", target, i); /* two values naming one tensor */
    ls_tensor *data = NULL;
    if (stored_tensor(L, t, &m, &data) != 0) return -1;
    if (!data && buffer && !(t->data_buffer_idx || (t->has_extra_tensor_info && t->extra_tensor_info.location))) {
        /* planned memory that is read before anything writes it: state starting at zero */
        uint64_t nbytes;
        ls_error e2;
        if (m.dtype != LS_DT_UNKNOWN && ls_tmeta_check_size(&m, (uint64_t)64 << 20, &nbytes, &e2) == 0)
            data = ls_tensor_alloc(m.dtype, m.ndim, m.sizes);
        else
            L->missing_data = true;
    }
    ls_node *n = new_placeholder(L, ls_sanitize_name(buffer ? "b_" : "c_", target), &m);
    ls_input_spec s = {.kind = (uint8_t)(buffer ? LS_IN_BUFFER : LS_IN_CONSTANT_TENSOR),
                       .persistent = buffer,
                       .name = n->name,
                       .target = target};
    if (buffer) ls_program_put_state(L->p, target, data, &m);
    else ls_program_put_constant(L->p, target, data, &m);
    ls_tensor_unref(data);
    ls_vec_push(&L->ph, n);
    ls_vec_push(&L->ph_specs, s);
    L->node_of[i] = n->id;
    L->role[i] = buffer ? R_STATE : R_CONST;
    return 0;
}

static int arg_of(loader *L, const ls_param *prm, int32_t vi, ls_arg *a);

static int classify(loader *L)
{
    const ls_pte_plan *pl = L->plan;
    for (uint32_t k = 0; k < pl->inputs.n; k++) {
        int32_t i = pl->inputs.v[k];
        const ls_pte_value *v = val(L, i);
        if (!v) return lfail(L, "input %u is value %d, which does not exist", k, i);
        if (L->node_of[i]) return lfail(L, "value %d is listed twice as an input", i);
        ls_tmeta m;
        if (v->kind == LS_PTE_VAL_TENSOR && tensor_meta(L, &v->tensor, &m) != 0) return -1;
        ls_node *n = new_placeholder(L, ls_internf("input_%u", k), v->kind == LS_PTE_VAL_TENSOR ? &m : NULL);
        if (v->kind != LS_PTE_VAL_TENSOR) n->val_kind = v->kind == LS_PTE_VAL_INT ? LS_VAL_SYMINT : LS_VAL_OTHER;
        ls_input_spec s = {.kind = LS_IN_USER_INPUT, .name = n->name};
        /* A scalar input is a value the file stores: ExecuTorch's Method::set_input takes it only
         * equal to the traced one (an Int, Bool or String exactly, a Double within atol 1e-4 +
         * rtol 1e-5; runtime/executor/method.cpp), so it is not an input to ask for. */
        if (v->kind != LS_PTE_VAL_TENSOR && v->kind != LS_PTE_VAL_TENSOR_LIST && v->kind != LS_PTE_VAL_OPTIONAL_TENSOR_LIST) {
            s.kind = LS_IN_CONSTANT_INPUT;
            if (arg_of(L, NULL, i, &s.value) != 0) {
                ls_node_unref(n);
                return -1;
            }
        }
        ls_vec_push(&L->user, n);
        ls_vec_push(&L->user_specs, s);
        L->node_of[i] = n->id;
        L->role[i] = R_INPUT;
    }
    for (uint32_t i = 0; i < L->nvals; i++) {
        const ls_pte_value *v = &pl->values.v[i];
        if (v->kind != LS_PTE_VAL_TENSOR || L->role[i]) continue;
        const ls_pte_tensor *t = &v->tensor;
        bool external = t->has_extra_tensor_info && t->extra_tensor_info.location == LS_PTE_TENSOR_EXTERNAL;
        if (!t->data_buffer_idx && !external) continue;
        if (data_placeholder(L, i, t->has_allocation_info) != 0) return -1;
    }
    return 0;
}

/* A tensor value that is read: its node, or a new buffer placeholder when nothing defined it. */
/* A planned value nothing wrote at the place of one written before: a view exir elided. */
static bool elided_view(loader *L, uint32_t i)
{
    const ls_pte_tensor *t = &L->plan->values.v[i].tensor;
    if (!t->has_allocation_info || t->data_buffer_idx) return false;
    if (!L->places) L->places = lsp_places_new(L->plan);
    int32_t base = lsp_places_view_of(L->places, L->plan, i, L->node_of);
    ls_tmeta m;
    if (base < 0 || tensor_meta(L, t, &m) != 0) return false;
    ls_arg *a = ls_calloc(2, sizeof *a);
    a[0] = ls_arg_node(L->node_of[base]);
    a[1] = ls_arg_ints(m.sizes, m.ndim);
    const ls_op *view = ls_op_get(LS_OP_memory_view);
    a[0].name = view->schema.params[0].name;
    a[1].name = view->schema.params[1].name;
    ls_node *n = ls_node_new(L->p, LS_NODE_CALL, ls_namer_take(L->names, "view"), ls_op_target(view, LS_DIALECT_EXECUTORCH));
    n->op = view;
    n->dialect = LS_DIALECT_EXECUTORCH;
    ls_node_set_args(n, a, 2);
    ls_node_set_val(n, &m);
    ls_vec_push(&L->body, n);
    L->node_of[i] = n->id;
    return true;
}

static int read_tensor(loader *L, int64_t i, uint32_t *id)
{
    if (!is_tensor(L, i)) return lfail(L, "value %lld is not a tensor", (long long)i);
    if (!L->node_of[i] && !elided_view(L, (uint32_t)i) && data_placeholder(L, (uint32_t)i, true) != 0) return -1;
    *id = L->node_of[i];
    return 0;
}

/* ---- arguments */

static int int_item(loader *L, int64_t idx, ls_symint *out)
{
    const ls_pte_value *v = val(L, idx);
    if (!v) return lfail(L, "list item %lld is not a value", (long long)idx);
    if (v->kind == LS_PTE_VAL_INT && L->node_of[idx]) { /* computed at run time */
        out->is_node = true;
        out->node = L->node_of[idx];
        return 0;
    }
    if (v->kind == LS_PTE_VAL_INT) {
        out->is_node = false;
        out->i = v->int_val;
        return 0;
    }
    if (v->kind == LS_PTE_VAL_TENSOR) { /* a SymInt computed at run time */
        out->is_node = true;
        return read_tensor(L, idx, &out->node);
    }
    return lfail(L, "IntList item %lld is %s, not an Int", (long long)idx,
                 ls_pte_val_kind_name(v->kind) ? ls_pte_val_kind_name(v->kind) : "unknown");
}

/* Value vi as an argument. prm (may be NULL for unknown operators) says what the schema wants. */
static int arg_of(loader *L, const ls_param *prm, int32_t vi, ls_arg *a)
{
    memset(a, 0, sizeof *a);
    const ls_pte_value *v = val(L, vi);
    if (!v) return lfail(L, "argument value %d does not exist", vi);
    uint8_t want = prm ? prm->type : LS_PT_ANY;
    /* a scalar an instruction computed (a prim op's result, a sym_size) or a stored scalar input:
     * the node that stands for it, not the value the file holds before the run */
    if ((v->kind == LS_PTE_VAL_INT || v->kind == LS_PTE_VAL_DOUBLE || v->kind == LS_PTE_VAL_BOOL) && L->node_of[vi]) {
        *a = ls_arg_node(L->node_of[vi]);
        return 0;
    }
    switch (v->kind) {
    case LS_PTE_VAL_NONE:
    case LS_PTE_VAL_NULL: a->kind = LS_ARG_NONE; return 0;
    case LS_PTE_VAL_INT:
        if (want == LS_PT_DTYPE) {
            a->kind = LS_ARG_DTYPE;
            a->v.i = ls_dtype_from_et((int)v->int_val);
        } else if (want == LS_PT_LAYOUT) {
            a->kind = LS_ARG_LAYOUT;
            a->v.i = ls_layout_from_c10(v->int_val);
        } else if (want == LS_PT_MEMFMT) {
            a->kind = LS_ARG_MEMFMT;
            a->v.i = ls_memfmt_from_c10(v->int_val);
        } else if (want == LS_PT_FLOAT) {
            *a = ls_arg_float((double)v->int_val);
        } else if (want == LS_PT_INT_LIST) {
            *a = ls_arg_ints(&v->int_val, 1);
        } else if (want == LS_PT_BOOL) {
            *a = ls_arg_bool(v->int_val != 0);
        } else {
            *a = ls_arg_int(v->int_val);
        }
        return 0;
    case LS_PTE_VAL_BOOL: *a = ls_arg_bool(v->bool_val); return 0;
    case LS_PTE_VAL_DOUBLE: *a = ls_arg_float(v->double_val); return 0;
    case LS_PTE_VAL_STRING:
        a->kind = want == LS_PT_DEVICE ? LS_ARG_DEVICE : LS_ARG_STRING;
        a->v.s = ls_intern(v->string_val ? v->string_val : "");
        return 0;
    case LS_PTE_VAL_TENSOR: {
        uint32_t id;
        if (read_tensor(L, vi, &id) != 0) return -1;
        *a = ls_arg_node(id);
        return 0;
    }
    case LS_PTE_VAL_INT_LIST: {
        uint32_t n = v->int_list.n;
        ls_symint *items = ls_calloc(n ? n : 1, sizeof *items);
        bool nodes = false;
        for (uint32_t k = 0; k < n; k++) {
            if (int_item(L, v->int_list.v[k], &items[k]) != 0) {
                free(items);
                return -1;
            }
            nodes |= items[k].is_node;
        }
        if (nodes) {
            a->kind = LS_ARG_SYMINTS;
            a->n = n;
            a->v.symints = items;
            return 0;
        }
        int64_t *ints = ls_calloc(n ? n : 1, sizeof *ints);
        for (uint32_t k = 0; k < n; k++) ints[k] = items[k].i;
        *a = ls_arg_ints(ints, n);
        free(ints);
        free(items);
        return 0;
    }
    case LS_PTE_VAL_DOUBLE_LIST:
        a->kind = LS_ARG_FLOATS;
        a->n = v->double_list.n;
        a->v.floats = ls_calloc(a->n ? a->n : 1, sizeof *a->v.floats);
        if (a->n) memcpy(a->v.floats, v->double_list.v, sizeof *a->v.floats * a->n);
        return 0;
    case LS_PTE_VAL_BOOL_LIST:
        a->kind = LS_ARG_BOOLS;
        a->n = v->bool_list.n;
        a->v.bools = ls_calloc(a->n ? a->n : 1, sizeof *a->v.bools);
        for (uint32_t k = 0; k < a->n; k++) a->v.bools[k] = v->bool_list.v[k] != 0;
        return 0;
    case LS_PTE_VAL_TENSOR_LIST:
    case LS_PTE_VAL_OPTIONAL_TENSOR_LIST: {
        bool opt = v->kind == LS_PTE_VAL_OPTIONAL_TENSOR_LIST;
        uint32_t n = v->tensor_list.n;
        uint32_t *ids = ls_calloc(n ? n : 1, sizeof *ids);
        for (uint32_t k = 0; k < n; k++) {
            int32_t item = v->tensor_list.v[k];
            if (opt && item < 0) continue;
            if (read_tensor(L, item, &ids[k]) != 0) {
                free(ids);
                return -1;
            }
        }
        *a = ls_arg_nodes(ids, n, opt);
        free(ids);
        return 0;
    }
    }
    return lfail(L, "value %d has the unknown kind %d", vi, (int)v->kind);
}

static void free_args(ls_arg *args, uint32_t n)
{
    for (uint32_t i = 0; i < n; i++) ls_arg_free(&args[i]);
    free(args);
}

/* ---- nodes */

static ls_node *getitem(loader *L, uint32_t of, uint32_t k, const ls_tmeta *m)
{
    ls_node *g = ls_node_new_getitem(L->p, ls_namer_take(L->names, "getitem"), of, k);
    if (m) ls_node_set_val(g, m);
    return g;
}

/* The node's value: the tensors it writes (outs[k], value indices); several get getitems. Takes
 * n (into the body, or released on failure). */
static int define_outputs(loader *L, ls_node *n, const int32_t *outs, uint32_t nouts, bool tuple)
{
    if (nouts > LS_MAX_NODE_ARGS) {
        ls_node_unref(n);
        return lfail(L, "a call writes %u values (at most %u)", nouts, LS_MAX_NODE_ARGS);
    }
    ls_tmeta *ms = ls_calloc(nouts ? nouts : 1, sizeof *ms);
    for (uint32_t k = 0; k < nouts; k++)
        if (is_tensor(L, outs[k]) && tensor_meta(L, &L->plan->values.v[outs[k]].tensor, &ms[k]) != 0) {
            free(ms);
            ls_node_unref(n);
            return -1;
        }
    if (!tuple && nouts == 1) {
        if (is_tensor(L, outs[0])) ls_node_set_val(n, &ms[0]);
        else if (val(L, outs[0])) n->val_kind = val(L, outs[0])->kind == LS_PTE_VAL_INT ? LS_VAL_SYMINT : LS_VAL_OTHER;
        L->node_of[outs[0]] = n->id;
        ls_vec_push(&L->body, n);
    } else {
        ls_node_set_vals(n, LS_VAL_TENSORS, ms, (uint16_t)nouts);
        ls_vec_push(&L->body, n);
        for (uint32_t k = 0; k < nouts; k++) {
            ls_node *g = getitem(L, n->id, k, is_tensor(L, outs[k]) ? &ms[k] : NULL);
            ls_vec_push(&L->body, g);
            L->node_of[outs[k]] = g->id;
        }
    }
    free(ms);
    return 0;
}

static bool defined(const loader *L, int32_t vi)
{
    return vi >= 0 && (uint32_t)vi < L->nvals && (L->node_of[vi] || !is_tensor(L, vi));
}

/* An operator the table does not know (cortex_m::, quantized_decomposed::, ...): shown with its
 * inputs in file order; it defines the tensors it writes (its last argument, the return, and any
 * tensor no one wrote before). Never run. */
static int unknown_call(loader *L, const char *target, const ls_pte_i32s *args)
{
    if (args->n > LS_MAX_NODE_ARGS) return lfail(L, "a call of %s with %u arguments (at most %u)", target, args->n, LS_MAX_NODE_ARGS);
    char base[160];
    snprintf(base, sizeof base, "%s", target);
    for (char *c = base; *c; c++) *c = *c >= 'A' && *c <= 'Z' ? (char)(*c - 'A' + 'a') : *c;
    char *cc = strstr(base, "::");
    if (cc) memmove(cc, cc + 1, strlen(cc + 1) + 1); /* "cortex_m::pad.out" → cortex_m_pad_out */
    ls_node *n = ls_node_new(L->p, LS_NODE_CALL, ls_namer_take(L->names, ls_sanitize_name(NULL, base)), target);
    n->dialect = LS_DIALECT_EXECUTORCH;
    L->call_node = n->id;
    int32_t ret = args->n ? args->v[args->n - 1] : -1;
    ls_arg *a = ls_calloc(args->n ? args->n : 1, sizeof *a);
    uint32_t na = 0;
    for (uint32_t k = 0; k + 1 < args->n; k++) {
        int32_t vi = args->v[k];
        if (vi == ret || !defined(L, vi)) continue; /* written by this call */
        if (arg_of(L, NULL, vi, &a[na]) != 0) {
            free_args(a, na);
            ls_node_unref(n);
            return -1;
        }
        na++;
    }
    ls_node_set_args(n, a, (uint16_t)na);
    for (uint32_t k = 0; k + 1 < args->n; k++)
        if (!defined(L, args->v[k])) L->node_of[args->v[k]] = n->id; /* scratch and out tensors */
    L->n_unknown++;
    if (ret >= 0 && is_tensor(L, ret)) return define_outputs(L, n, &ret, 1, false);
    ls_vec_push(&L->body, n);
    return 0;
}

static int kernel_call(loader *L, uint32_t at, const ls_pte_instruction *in)
{
    const ls_pte_i32s *args = &in->kernel_call.args;
    int32_t oi = in->kernel_call.op_index;
    if (oi < 0 || (uint32_t)oi >= L->plan->operators.n)
        return lfail(L, "instruction %u calls operator %d (%u operators)", at, oi, L->plan->operators.n);
    const ls_pte_operator *po = &L->plan->operators.v[oi];
    const char *name = po->name ? po->name : "?", *ovl = po->overload ? po->overload : "";
    const char *target = *ovl ? ls_internf("%s.%s", name, ovl) : ls_intern(name);
    const ls_op *op = ls_op_from_out_variant(name, *ovl ? ovl : "default");
    if (!strcmp(name, "executorch_prim::et_view") && !strcmp(ovl, "default") && args->n == 3)
        op = ls_op_get(LS_OP_memory_view); /* et_view(self, size, out): memory.view's kernel (exir _emit_view) */
    else if (!op || (op->flags & LS_OPF_SPECIAL)) return unknown_call(L, target, args);
    bool out_form = op->out_overload && strcmp(op->out_overload, ovl) == 0;
    uint8_t keep[LS_MAX_PARAMS];
    uint32_t nkeep = op->schema.nparams, nout = 0;
    for (uint32_t k = 0; k < nkeep; k++) keep[k] = (uint8_t)k;
    if (out_form) {
        nkeep = ls_out_params(op, keep);
        nout = ls_out_count(op);
    }
    if (args->n < nkeep + nout) return unknown_call(L, target, args); /* not the schema we know */

    /* write-back of a mutated buffer: copy_(buffer, value) */
    if (op->id == LS_OP_copy_ && !out_form && args->n >= 2 && is_tensor(L, args->v[0]) && L->role[args->v[0]] == R_STATE &&
        is_tensor(L, args->v[1])) {
        uint32_t src;
        if (read_tensor(L, args->v[1], &src) != 0) return -1;
        int32_t b = -1;
        for (uint32_t k = 0; k < L->ph.n && b < 0; k++)
            if (L->ph.v[k]->id == L->node_of[args->v[0]]) b = (int32_t)k;
        if (b >= 0) {
            ls_vec_push(&L->mut_target, L->ph_specs.v[b].target);
            ls_vec_push(&L->mut_node, src);
            L->node_of[args->v[0]] = src; /* later reads see the new value */
            if (args->n > 3) L->node_of[args->v[args->n - 1]] = src;
            return 0;
        }
    }

    const ls_schema *s = &op->schema;
    ls_arg *a = ls_calloc(s->nparams ? s->nparams : 1, sizeof *a);
    bool *set = ls_calloc(s->nparams ? s->nparams : 1, sizeof *set);
    int rc = 0;
    for (uint32_t k = 0; k < nkeep && rc == 0; k++) {
        const ls_param *prm = &s->params[keep[k]];
        rc = arg_of(L, prm, args->v[k], &a[keep[k]]);
        a[keep[k]].flags = prm->kwarg_only ? LS_ARGF_KEYWORD : 0;
        set[keep[k]] = true;
    }
    const int32_t *outs = args->n ? args->v + nkeep : NULL;
    int32_t one_out = args->n > nkeep ? args->v[args->n - 1] : -1; /* functional form: the return */
    for (uint32_t i = 0; i < s->nparams && rc == 0; i++) {
        if (set[i]) continue;
        const ls_param *prm = &s->params[i];
        if (out_form && !strcmp(prm->name, "dtype") && nout && is_tensor(L, outs[0])) {
            a[i].kind = LS_ARG_DTYPE; /* the out tensor says it */
            a[i].v.i = ls_dtype_from_et(L->plan->values.v[outs[0]].tensor.scalar_type);
        } else if (prm->has_default) {
            ls_arg_copy(&a[i], &prm->def);
            a[i].flags = LS_ARGF_DEFAULT;
        } else if (prm->optional) {
            a[i].kind = LS_ARG_NONE;
            a[i].flags = LS_ARGF_DEFAULT;
        } else {
            rc = lfail(L, "instruction %u (%s): argument '%s' is missing", at, target, prm->name);
        }
        a[i].flags |= prm->kwarg_only ? LS_ARGF_KEYWORD : 0;
    }
    free(set);
    if (rc != 0) {
        free_args(a, s->nparams);
        return -1;
    }
    for (uint32_t i = 0; i < s->nparams; i++) a[i].name = s->params[i].name;
    ls_node *n = ls_node_new(L->p, LS_NODE_CALL, ls_namer_take(L->names, ls_op_node_base(op, LS_DIALECT_EDGE)), target);
    n->op = op;
    L->call_node = n->id;
    n->dialect = LS_DIALECT_EXECUTORCH;
    ls_node_set_args(n, a, s->nparams);
    if (!out_form) {
        if (one_out < 0) {
            ls_vec_push(&L->body, n);
            return 0;
        }
        if (op->flags & LS_OPF_INPLACE && args->n && is_tensor(L, args->v[0])) L->node_of[args->v[0]] = n->id;
        return define_outputs(L, n, &one_out, 1, false);
    }
    if (s->returns_list) { /* one Tensor[] out: its items */
        const ls_pte_value *lv = val(L, outs[0]);
        if (!lv || lv->kind != LS_PTE_VAL_TENSOR_LIST) {
            ls_node_unref(n);
            return lfail(L, "instruction %u (%s): the out argument is not a TensorList", at, target);
        }
        return define_outputs(L, n, lv->tensor_list.v, lv->tensor_list.n, true);
    }
    return define_outputs(L, n, outs, nout, nout > 1);
}

/* ---- delegates */

static int add_submodule(loader *L, uint32_t di, const char *name)
{
    const ls_pte_delegate *d = &L->plan->delegates.v[di];
    const uint8_t *data;
    size_t size;
    if (ls_pte_delegate_blob(L->pte, d, &data, &size, L->err) != 0) return -1;
    ls_submodule sub = {.name = name, .backend_id = ls_intern(d->id ? d->id : "")};
    if (d->processed.location == LS_PTE_SEGMENT && d->processed.index < L->pte->n_segment_data &&
        L->pte->segment_data[d->processed.index].owner)
        sub.processed = ls_blob_ref(L->pte->segment_data[d->processed.index].owner);
    else if ((sub.processed = ls_blob_new(size)) != NULL && size)
        memcpy(sub.processed->data, data, size);
    if (!sub.processed) return lfail(L, "delegate %u: cannot hold its %zu-byte blob", di, size);
    sub.nspecs = d->compile_specs.n;
    sub.specs = sub.nspecs ? ls_calloc(sub.nspecs, sizeof *sub.specs) : NULL;
    for (uint32_t k = 0; k < sub.nspecs; k++) {
        const ls_pte_compile_spec *cs = &d->compile_specs.v[k];
        sub.specs[k].key = ls_intern(cs->key ? cs->key : "");
        sub.specs[k].value = ls_blob_new(cs->value.n);
        if (sub.specs[k].value && cs->value.n) memcpy(sub.specs[k].value->data, cs->value.v, cs->value.n);
    }
    /* the graph inside when an inspector reads the blob (backend.h); else an opaque call. A
     * reader's failure is not the file's: the node pane says why (ls_delegate_describe). */
    ls_delegate_view view = ls_delegate_view_of(&sub, L->p->named_data, L->file->method_names, L->file->n_methods);
    ls_error e2;
    if (ls_delegate_read(&view, &sub.program, &e2) < 0) sub.program = NULL;
    ls_program_add_sub(L->p, &sub);
    ls_submodule_release(&sub);
    return 0;
}

static int delegate_call(loader *L, uint32_t at, const ls_pte_instruction *in)
{
    const ls_pte_i32s *args = &in->delegate_call.args;
    int32_t di = in->delegate_call.delegate_index;
    if (di < 0 || (uint32_t)di >= L->plan->delegates.n)
        return lfail(L, "instruction %u calls delegate %d (%u delegates)", at, di, L->plan->delegates.n);
    if (args->n > LS_MAX_NODE_ARGS) return lfail(L, "instruction %u: a delegate call with %u arguments (at most %u)", at, args->n,
                                             LS_MAX_NODE_ARGS);
    for (uint32_t k = 0; k < args->n; k++)
        if (!val(L, args->v[k])) return lfail(L, "instruction %u: argument value %d does not exist", at, args->v[k]);
    /* inputs, then outputs: the outputs are the tensors at the end that nothing defined yet */
    uint32_t nin = args->n;
    while (nin > 0 && is_tensor(L, args->v[nin - 1]) && !L->node_of[args->v[nin - 1]]) nin--;
    const char *mod = ls_internf("lowered_module_%d", di);
    if (!L->sub_attr[di]) {
        if (add_submodule(L, (uint32_t)di, mod) != 0) return -1;
        ls_node *ga = ls_node_new(L->p, LS_NODE_GET_ATTR, ls_namer_take(L->names, mod), mod);
        ls_vec_push(&L->body, ga);
        L->sub_attr[di] = ga->id;
    }
    ls_arg *a = ls_calloc(nin + 1, sizeof *a);
    a[0] = ls_arg_node(L->sub_attr[di]);
    a[0].name = ls_intern("lowered_module");
    for (uint32_t k = 0; k < nin; k++)
        if (arg_of(L, NULL, args->v[k], &a[k + 1]) != 0) {
            free_args(a, k + 1);
            return -1;
        }
    const ls_op *cd = ls_op_get(LS_OP_call_delegate);
    ls_node *n = ls_node_new(L->p, LS_NODE_CALL, ls_namer_take(L->names, "executorch_call_delegate"),
                             ls_op_target(cd, LS_DIALECT_NONE));
    n->op = cd;
    L->call_node = n->id;
    ls_node_set_args(n, a, (uint16_t)(nin + 1));
    /* no arguments at all is a valid DelegateCall (the runtime takes a list of any length) */
    return define_outputs(L, n, args->n ? args->v + nin : NULL, args->n - nin, true);
}

/* ---- the program */

static int convert(loader *L)
{
    if (classify(L) != 0) return -1;
    uint32_t at = 0;
    uint32_t *sizes = ls_calloc(L->plan->chains.n + 1, sizeof *sizes); /* what each instruction becomes (ETDump) */
    for (uint32_t c = 0; c < L->plan->chains.n; c++) sizes[c] = L->plan->chains.v[c].instructions.n;
    ls_instr_map *im = L->p->instrs = ls_instr_map_new(sizes, L->plan->chains.n);
    free(sizes);
    for (uint32_t c = 0; c < L->plan->chains.n; c++) {
        const ls_pte_chain *ch = &L->plan->chains.v[c];
        for (uint32_t i = 0; i < ch->instructions.n; i++, at++) {
            const ls_pte_instruction *in = &ch->instructions.v[i];
            int rc = 0;
            L->call_node = 0;
            switch (in->kind) {
            case LS_PTE_KERNEL_CALL: rc = kernel_call(L, at, in); break;
            case LS_PTE_DELEGATE_CALL: rc = delegate_call(L, at, in); break;
            case LS_PTE_MOVE_CALL:
                if (!val(L, in->move_call.move_from) || !val(L, in->move_call.move_to))
                    return lfail(L, "instruction %u moves value %d to %d", at, in->move_call.move_from,
                                 in->move_call.move_to);
                L->node_of[in->move_call.move_to] = L->node_of[in->move_call.move_from];
                break;
            case LS_PTE_FREE_CALL: break;
            case LS_PTE_JUMP_FALSE_CALL:
                return lfail(L, "instruction %u is a JumpFalseCall: control flow is not supported", at);
            default: return lfail(L, "instruction %u has the unknown kind %d", at, (int)in->kind);
            }
            if (rc != 0) return -1;
            im->node[at] = L->call_node;
        }
    }
    /* outputs: buffer write-backs first (torch's order), then the plan's outputs */
    const ls_pte_plan *pl = L->plan;
    uint32_t nout = L->mut_node.n + pl->outputs.n;
    ls_arg *oa = ls_calloc(nout ? nout : 1, sizeof *oa);
    ls_output_spec *os = ls_calloc(nout ? nout : 1, sizeof *os);
    int rc = 0;
    for (uint32_t k = 0; k < L->mut_node.n; k++) {
        oa[k] = ls_arg_node(L->mut_node.v[k]);
        os[k] = (ls_output_spec){.kind = LS_OUT_BUFFER_MUTATION, .target = L->mut_target.v[k]};
    }
    for (uint32_t k = 0; k < pl->outputs.n && rc == 0; k++) {
        int32_t vi = pl->outputs.v[k];
        if (!val(L, vi)) {
            rc = lfail(L, "output %u is value %d, which does not exist", k, vi);
            break;
        }
        rc = arg_of(L, NULL, vi, &oa[L->mut_node.n + k]);
        os[L->mut_node.n + k].kind = LS_OUT_USER_OUTPUT;
    }
    if (rc == 0) {
        ls_node *on = ls_node_new(L->p, LS_NODE_OUTPUT, ls_namer_take(L->names, "output"), NULL);
        ls_node_set_args(on, oa, (uint16_t)nout);
        oa = NULL;
        LS_VEC(ls_node *) all = {0};
        for (uint32_t k = 0; k < L->ph.n; k++) ls_vec_push(&all, L->ph.v[k]);
        for (uint32_t k = 0; k < L->user.n; k++) ls_vec_push(&all, L->user.v[k]);
        for (uint32_t k = 0; k < L->body.n; k++) ls_vec_push(&all, L->body.v[k]);
        ls_vec_push(&all, on);
        L->ph.n = L->user.n = L->body.n = 0; /* the program holds them now */
        ls_program_set_nodes(L->p, all.v, all.n);
        free(all.v);
        for (uint32_t k = 0; k < nout; k++) {
            const ls_arg *a = &L->p->nodes[L->p->n_nodes - 1]->args[k];
            const ls_node *v = a->kind == LS_ARG_NODE ? ls_program_node(L->p, a->v.node) : NULL;
            os[k].name = v ? v->name : NULL;
        }
        LS_VEC(ls_input_spec) specs = {0};
        for (uint32_t k = 0; k < L->ph_specs.n; k++) ls_vec_push(&specs, L->ph_specs.v[k]);
        for (uint32_t k = 0; k < L->user_specs.n; k++) ls_vec_push(&specs, L->user_specs.v[k]);
        ls_program_set_inputs(L->p, specs.v, specs.n);
        ls_program_set_outputs(L->p, os, nout);
        free(specs.v);
    }
    if (oa) free_args(oa, nout);
    free(os);
    return rc;
}

int lsp_program_from_pte(ls_pte_file *f, uint32_t plan, ls_program **out, ls_error *err)
{
    *out = NULL;
    loader L = {.where = f->path, .file = f, .pte = &f->pte, .err = err};
    if (plan >= f->pte.execution_plan.n) return ls_fail(err, "%s: no execution plan %u", f->path, plan);
    L.plan = &f->pte.execution_plan.v[plan];
    L.method = ls_intern(L.plan->name ? L.plan->name : "forward");
    L.nvals = L.plan->values.n;
    L.node_of = ls_calloc(L.nvals ? L.nvals : 1, sizeof *L.node_of);
    L.role = ls_calloc(L.nvals ? L.nvals : 1, 1);
    L.sub_attr = ls_calloc(L.plan->delegates.n ? L.plan->delegates.n : 1, sizeof *L.sub_attr);
    L.p = ls_program_new(L.method, LS_DIALECT_EXECUTORCH);
    L.p->verifier = ls_intern("EXECUTORCH");
    L.p->path = f->path;
    L.p->origin = ls_origin_ref(&f->origin);
    L.p->method = L.method;
    L.names = ls_namer_new(NULL);
    int rc = 0;
    /* named_data: each key names a whole segment (checked against the segments by the reader);
     * the .ptd files' entries too, as ExecuTorch's Method::init merges the program's data map
     * with the external one for the delegates' BackendInitContext */
    for (uint32_t i = 0; rc == 0 && i < f->pte.named_data.n; i++) {
        const ls_pte_named_data *nd = &f->pte.named_data.v[i];
        if (nd->segment_index >= f->pte.n_segment_data || !f->pte.segment_data[nd->segment_index].owner) continue;
        if (ls_named_data_put(ls_program_named_data_mut(L.p), nd->key ? nd->key : "",
                              f->pte.segment_data[nd->segment_index].owner, 0, err) != 0)
            rc = ls_fail_prefix(err, "%s: named_data[%u]", L.where, i);
    }
    for (uint32_t i = 0; rc == 0 && i < f->n_named; i++) {
        const ls_pte_named *e = &f->named[i];
        if (e->ptd < 0 || ls_named_data_get(L.p->named_data, e->key)) continue;
        const uint8_t *data;
        size_t size;
        if (ls_pte_file_named_bytes(f, e, &data, &size, err) != 0) {
            rc = -1;
            break;
        }
        ls_blob *b = ls_blob_new(size);
        if (!b) {
            rc = ls_fail(err, "%s: named data '%s' of %zu bytes cannot be held", L.where, e->key, size);
            break;
        }
        if (size) memcpy(b->data, data, size);
        rc = ls_named_data_put(ls_program_named_data_mut(L.p), e->key, b, 0, err);
        ls_blob_unref(b);
    }
    if (rc == 0) rc = convert(&L); /* after the named data: delegate inspectors read it */
    if (rc == 0 && L.missing_data) L.p->has_weights = false;
    for (uint32_t k = 0; k < L.ph.n; k++) ls_node_unref(L.ph.v[k]);
    for (uint32_t k = 0; k < L.user.n; k++) ls_node_unref(L.user.v[k]);
    for (uint32_t k = 0; k < L.body.n; k++) ls_node_unref(L.body.v[k]);
    free(L.ph.v);
    free(L.ph_specs.v);
    free(L.user.v);
    for (uint32_t k = 0; k < L.user_specs.n; k++) ls_arg_free(&L.user_specs.v[k].value);
    free(L.user_specs.v);
    free(L.body.v);
    free(L.mut_node.v);
    free(L.mut_target.v);
    free(L.node_of);
    free(L.role);
    free(L.sub_attr);
    lsp_places_free(L.places);
    ls_namer_free(L.names);
    if (rc != 0) {
        ls_program_unref(L.p);
        return -1;
    }
    *out = L.p;
    return 0;
}
