/* emit, the last of to_executorch's steps (ExecuTorch's emitter): the program as an ExecuTorch
 * Program with one execution plan, "forward".
 *
 *   values        placeholders first, then what each node makes, in graph order: tensors with
 *                 ExecuTorch's scalar-type numbering (planned ones with allocation_info in arena
 *                 1, constants with data_buffer_idx into the constant segment, mutated buffers
 *                 with both and their initial value in a mutable data segment), Int, Double,
 *                 Bool, String, Null, and lists whose IntList/TensorList items are value indices
 *   instructions  one chain: a KernelCall per call (schema inputs, out arguments, then the
 *                 return value again), a DelegateCall per executorch_call_delegate (inputs, then
 *                 outputs); allocs and getitems make no instruction
 *   operators     name "aten::add" + overload "out", once each
 *   delegates     backend id, the processed blob in a segment, compile specs
 *   segments      [constants][mutable data][delegate blobs...] (pte_write.c lays them out)
 *
 * The memory plan comes from memory_plan's step. */
#include <inttypes.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <xxhash.h>

#include "backend.h"
#include "bundled_blob.h"
#include "export_internal.h"
#include "namer.h"
#include "pte_file.h"
#include "ptrmap.h"
#include "signature.h"

#define CONST_ALIGN 16

typedef LS_VEC(uint64_t) u64_vec;

typedef struct emitter {
    const ls_program *p;
    const ls_mem_plan *plan;
    lsx_bounds *bounds;
    ls_sig sig;
    ls_error *err;
    LS_VEC(ls_pte_value) values;
    int32_t *val_of; /* by node id: its value index, -1 none */
    LS_VEC(ls_pte_instruction) instrs;
    LS_VEC(uint32_t) instr_node; /* per instruction: the node it is made of */
    uint32_t cur_node;
    LS_VEC(ls_pte_operator) ops;
    LS_VEC(ls_pte_delegate) dels;
    LS_VEC(const char *) del_sub; /* submodule name of each delegate */
    ls_ptrmap sub_ix, del_ix;     /* submodule name → its index in p->subs, its delegate's index */
    LS_VEC(ls_pte_blob) segs;
    lsx_store consts, muts; /* the constant and mutable data segments, by content */
    int32_t mut_seg;        /* segment of mutable data, -1 none */
    bool init_buffers;      /* mutable buffers keep their initial data (exir's et_init_buffer) */
    bool buffer_names;      /* and their FQNs (exir's emit_mutable_buffer_names) */
    ls_ptrmap blob_seg;     /* delegate blob (interned by content) → its segment + 1 */
    ls_named_data *named; /* the program's named data and what preprocess adds here: one segment each */
    const ls_pte_file *file; /* the .pte the program came from, or NULL: its external data stays external */
    LS_VEC(int32_t) inputs;
    LS_VEC(int32_t) outputs;
    uint32_t kernel_calls, delegate_calls, constants, externals;
} emitter;

static int efail(emitter *E, const ls_node *n, const char *fmt, ...) LS_PRINTF(3, 4);
static int efail(emitter *E, const ls_node *n, const char *fmt, ...)
{
    char msg[LS_ERR_MAX];
    va_list ap;
    va_start(ap, fmt);
    vsnprintf(msg, sizeof msg, fmt, ap);
    va_end(ap);
    if (n) return ls_fail(E->err, "emit: node `%s`: %s", n->name, msg);
    return ls_fail(E->err, "emit: %s", msg);
}

static void *dup_bytes(const void *src, size_t n)
{
    void *d = ls_malloc(n ? n : 1);
    if (n) memcpy(d, src, n);
    return d;
}

static int32_t push_value(emitter *E, ls_pte_value v)
{
    ls_vec_push(&E->values, v);
    return (int32_t)E->values.n - 1;
}

static int32_t int_value(emitter *E, int64_t i)
{
    ls_pte_value v = {.kind = LS_PTE_VAL_INT};
    v.int_val = i;
    return push_value(E, v);
}

/* A Tensor value of meta m; the plan gives node_id's memory; dbi / fqn for stored data. */
static int tensor_value(emitter *E, const ls_node *n, const ls_tmeta *m, uint32_t node_id, uint32_t dbi, const char *fqn,
                        int32_t *out)
{
    int et = ls_dtype_to_et(m->dtype);
    if (et < 0) return efail(E, n, "dtype %s has no ExecuTorch scalar type", ls_dtype_name(m->dtype));
    ls_pte_value v = {.kind = LS_PTE_VAL_TENSOR};
    ls_pte_tensor *t = &v.tensor;
    t->scalar_type = (int8_t)et;
    int64_t sizes[LS_MAX_DIMS];
    bool dyn = false;
    bool bounded = lsx_upper_sizes(E->bounds, m, sizes, &dyn) == 0;
    t->sizes.v = ls_malloc(sizeof *t->sizes.v * (m->ndim ? m->ndim : 1));
    t->dim_order.v = ls_malloc(m->ndim ? m->ndim : 1);
    t->sizes.n = t->dim_order.n = m->ndim;
    t->sizes.present = t->dim_order.present = true;
    for (int d = 0; d < m->ndim; d++) {
        int64_t s = bounded ? sizes[d] : m->sizes[d] < 0 ? 0 : m->sizes[d];
        if (s > INT32_MAX) {
            free(t->sizes.v);
            free(t->dim_order.v);
            return efail(E, n, "size %" PRId64 " does not fit a .pte tensor", s);
        }
        t->sizes.v[d] = (int32_t)s;
        t->dim_order.v[d] = m->dim_order[d];
    }
    t->shape_dynamism = (int8_t)(!dyn ? LS_PTE_STATIC : bounded ? LS_PTE_DYNAMIC_BOUND : LS_PTE_DYNAMIC_UNBOUND);
    uint32_t slot = ls_mem_plan_slot(E->plan, node_id, 0);
    if (slot) {
        uint64_t off = E->plan->slots[slot - 1].offset;
        t->has_allocation_info = true;
        t->allocation_info.memory_id = 1;
        t->allocation_info.memory_offset_low = (uint32_t)off;
        t->allocation_info.memory_offset_high = (uint32_t)(off >> 32);
    }
    t->data_buffer_idx = dbi;
    if (fqn) {
        t->has_extra_tensor_info = true;
        t->extra_tensor_info.fully_qualified_name = ls_strdup(fqn);
        t->extra_tensor_info.location = LS_PTE_TENSOR_SEGMENT;
    }
    *out = push_value(E, v);
    return 0;
}

/* ---- arguments */

static int node_value(emitter *E, const ls_node *n, uint32_t id, int32_t *out)
{
    int32_t v = id < E->p->next_id ? E->val_of[id] : -1;
    if (v < 0) {
        const ls_node *m = ls_program_node(E->p, id);
        return efail(E, n, "it reads `%s`, which has no value in the emitted program", m ? m->name : "?");
    }
    *out = v;
    return 0;
}

/* The value of an argument (a new value for literals). */
static int arg_value(emitter *E, const ls_node *n, const ls_arg *a, int32_t *out)
{
    ls_pte_value v = {.kind = LS_PTE_VAL_NULL};
    switch ((ls_arg_kind)a->kind) {
    case LS_ARG_NONE: break;
    case LS_ARG_NODE: return node_value(E, n, a->v.node, out);
    case LS_ARG_NODES:
    case LS_ARG_OPT_NODES: {
        int32_t *items = ls_malloc(sizeof *items * (a->n ? a->n : 1));
        for (uint32_t i = 0; i < a->n; i++) {
            if (a->kind == LS_ARG_OPT_NODES && !a->v.nodes[i]) items[i] = -1;
            else if (node_value(E, n, a->v.nodes[i], &items[i]) != 0) {
                free(items);
                return -1;
            }
        }
        v.kind = a->kind == LS_ARG_NODES ? LS_PTE_VAL_TENSOR_LIST : LS_PTE_VAL_OPTIONAL_TENSOR_LIST;
        v.tensor_list = (ls_pte_i32s){items, a->n, true};
        break;
    }
    case LS_ARG_INT: v.kind = LS_PTE_VAL_INT, v.int_val = a->v.i; break;
    case LS_ARG_FLOAT: v.kind = LS_PTE_VAL_DOUBLE, v.double_val = a->v.f; break;
    case LS_ARG_BOOL: v.kind = LS_PTE_VAL_BOOL, v.bool_val = a->v.b; break;
    case LS_ARG_DTYPE: {
        int et = ls_dtype_to_et((ls_dtype)a->v.i);
        if (et < 0) return efail(E, n, "argument '%s': dtype %s has no ExecuTorch scalar type", a->name ? a->name : "?",
                                 ls_dtype_name((ls_dtype)a->v.i));
        v.kind = LS_PTE_VAL_INT, v.int_val = et;
        break;
    }
    case LS_ARG_LAYOUT: v.kind = LS_PTE_VAL_INT, v.int_val = ls_layout_to_c10(a->v.i); break;
    case LS_ARG_MEMFMT: v.kind = LS_PTE_VAL_INT, v.int_val = ls_memfmt_to_c10(a->v.i); break;
    case LS_ARG_STRING:
    case LS_ARG_DEVICE: v.kind = LS_PTE_VAL_STRING, v.string_val = ls_strdup(a->v.s ? a->v.s : ""); break;
    case LS_ARG_INTS:
    case LS_ARG_SYMINTS: {
        int64_t *items = ls_malloc(sizeof *items * (a->n ? a->n : 1));
        for (uint32_t i = 0; i < a->n; i++) {
            if (a->kind == LS_ARG_INTS || !a->v.symints[i].is_node) {
                items[i] = int_value(E, a->kind == LS_ARG_INTS ? a->v.ints[i] : a->v.symints[i].i);
            } else {
                int32_t vi = -1;
                if (node_value(E, n, a->v.symints[i].node, &vi) != 0) {
                    free(items);
                    return -1;
                }
                items[i] = vi;
            }
        }
        v.kind = LS_PTE_VAL_INT_LIST;
        v.int_list = (ls_pte_i64s){items, a->n, true};
        break;
    }
    case LS_ARG_FLOATS:
        v.kind = LS_PTE_VAL_DOUBLE_LIST;
        v.double_list = (ls_pte_f64s){dup_bytes(a->v.floats, sizeof(double) * a->n), a->n, true};
        break;
    case LS_ARG_BOOLS: {
        uint8_t *b = ls_malloc(a->n ? a->n : 1);
        for (uint32_t i = 0; i < a->n; i++) b[i] = a->v.bools[i];
        v.kind = LS_PTE_VAL_BOOL_LIST;
        v.bool_list = (ls_pte_u8s){b, a->n, true};
        break;
    }
    case LS_ARG_STRINGS:
    case LS_ARG_RAW:
        return efail(E, n, "argument '%s' (%s) has no ExecuTorch value", a->name ? a->name : "?",
                     ls_arg_kind_name((ls_arg_kind)a->kind));
    }
    *out = push_value(E, v);
    return 0;
}

static int32_t op_index(emitter *E, const char *name, const char *overload)
{
    for (uint32_t i = 0; i < E->ops.n; i++)
        if (!strcmp(E->ops.v[i].name, name) && !strcmp(E->ops.v[i].overload, overload)) return (int32_t)i;
    ls_pte_operator o = {ls_strdup(name), ls_strdup(overload)};
    ls_vec_push(&E->ops, o);
    return (int32_t)E->ops.n - 1;
}

static void push_instr(emitter *E, ls_pte_instr_kind kind, int32_t index, int32_t *args, uint32_t nargs)
{
    ls_pte_instruction in = {.kind = kind};
    if (kind == LS_PTE_KERNEL_CALL) {
        in.kernel_call.op_index = index;
        in.kernel_call.args = (ls_pte_i32s){args, nargs, true};
        E->kernel_calls++;
    } else {
        in.delegate_call.delegate_index = index;
        in.delegate_call.args = (ls_pte_i32s){args, nargs, true};
        E->delegate_calls++;
    }
    ls_vec_push(&E->instrs, in);
    ls_vec_push(&E->instr_node, E->cur_node);
}

/* ---- placeholders */

/* The external tensor of the program's .pte method that input s reads, or NULL. */
static const ls_pte_external *external_of(const emitter *E, const ls_input_spec *s)
{
    if (!E->file || !E->p->method || !s->target || !ls_pte_file_find_method(E->file, E->p->method)) return NULL;
    return ls_pte_file_external(E->file, E->p->method, s->target);
}

static int placeholder(emitter *E, const ls_node *n)
{
    const ls_input_spec *s = ls_sig_spec(&E->sig, E->p, n);
    const ls_tmeta *m = ls_node_tval(n);
    if (s && s->kind == LS_IN_USER_INPUT && n->val_kind == LS_VAL_SYMINT) { /* an int input */
        E->val_of[n->id] = int_value(E, 0);
        ls_vec_push(&E->inputs, E->val_of[n->id]);
        return 0;
    }
    if (!s || !m) return efail(E, n, "a placeholder without tensor metadata or input spec cannot be emitted");
    int32_t vi;
    if (s->kind == LS_IN_USER_INPUT) {
        if (tensor_value(E, n, m, n->id, 0, NULL, &vi) != 0) return -1;
        ls_vec_push(&E->inputs, vi);
    } else if (ls_input_kind_holds_data(s->kind) && external_of(E, s)) {
        /* a tensor the file's .ptd holds by key stays there: EXTERNAL with its name, no bytes in
         * the .pte, the index the file gave it (exir: _save_new_const_tensor's
         * external_constant_buffer; the runtime finds the data by name, tensor_parser_portable.cpp
         * getTensorDataPtr) */
        const ls_pte_external *x = external_of(E, s);
        const ls_pte_plan *opl = &E->file->pte.execution_plan.v[ls_pte_file_find_method(E->file, E->p->method)->plan];
        uint32_t dbi = opl->values.v[x->value].tensor.data_buffer_idx;
        if (tensor_value(E, n, m, n->id, dbi, s->target, &vi) != 0) return -1;
        E->values.v[vi].tensor.extra_tensor_info.location = LS_PTE_TENSOR_EXTERNAL;
        E->externals++;
    } else if (s->kind == LS_IN_BUFFER && ls_sig_is_mutated(&E->sig, s) && !E->init_buffers) {
        /* exir (_TopLevelEmitter.placeholder): a mutated buffer is planned memory with no data
         * unless et_init_buffer asks for its initial state, and no name unless
         * emit_mutable_buffer_names */
        if (tensor_value(E, n, m, n->id, 0, E->buffer_names ? s->target : NULL, &vi) != 0) return -1;
    } else if (ls_input_kind_holds_data(s->kind)) {
        const ls_named_tensor *d = ls_sig_data(&E->sig, E->p, s);
        if (!d || !d->t)
            return efail(E, n, "%s `%s` has no data (the program was loaded as metadata only)", ls_input_kind_name((ls_input_kind)s->kind),
                         s->target ? s->target : "?");
        bool mutated = s->kind == LS_IN_BUFFER && ls_sig_is_mutated(&E->sig, s);
        bool added;
        uint32_t dbi;
        if (mutated) {
            if (E->mut_seg < 0) {
                E->mut_seg = (int32_t)E->segs.n;
                ls_vec_push(&E->segs, ((ls_pte_blob){0}));
            }
            dbi = lsx_store_put(&E->muts, d->t->data, d->t->nbytes, &added);
        } else {
            dbi = lsx_store_put(&E->consts, d->t->data, d->t->nbytes, &added);
            E->constants += added;
        }
        /* exir writes no FQN for a constant stored in the file (extra_tensor_info only for
         * external data, EXTERNAL with its name) */
        if (tensor_value(E, n, m, n->id, dbi, mutated && E->buffer_names ? s->target : NULL, &vi) != 0) return -1;
    } else {
        return efail(E, n, "a %s input cannot be emitted", ls_input_kind_name((ls_input_kind)s->kind));
    }
    E->val_of[n->id] = vi;
    return 0;
}

/* ---- calls */

/* Values for the getitems of a call making several values (a delegate, a functional call with a
 * tuple result); an output no getitem reads gets an unnamed value of its metadata. */
static int tuple_values(emitter *E, const ls_node *call, uint32_t pos, int32_t **vals, uint32_t *nvals)
{
    uint32_t n = call->nvals;
    int32_t *v = ls_malloc(sizeof *v * (n ? n : 1));
    for (uint32_t k = 0; k < n; k++) v[k] = -1;
    uint32_t nu;
    const uint32_t *users = ls_program_users(E->p, pos, &nu);
    for (uint32_t u = 0; u < nu; u++) {
        const ls_node *g = E->p->nodes[users[u]];
        if (!g->op || g->op->id != LS_OP_getitem || g->nargs != 2 || g->args[1].kind != LS_ARG_INT) continue;
        int64_t k = g->args[1].v.i;
        if (k < 0 || (uint64_t)k >= n || v[k] >= 0) continue;
        if (!ls_node_tval(g)) {
            free(v);
            return efail(E, g, "a getitem without tensor metadata cannot be emitted");
        }
        if (tensor_value(E, g, ls_node_tval(g), g->id, 0, NULL, &v[k]) != 0) {
            free(v);
            return -1;
        }
        E->val_of[g->id] = v[k];
    }
    for (uint32_t k = 0; k < n; k++)
        if (v[k] < 0 && tensor_value(E, call, &call->vals[k], 0, 0, NULL, &v[k]) != 0) {
            free(v);
            return -1;
        }
    *vals = v;
    *nvals = n;
    return 0;
}

/* The segment of a delegate's processed blob: one per distinct bytes (exir's emitter keeps
 * processed bytes once by their hash, backend_delegate_data_cache; its serializer moves each to
 * a segment, and two methods' identical blobs share one, as in the QNN llama of
 * ../shared/data/pte). */
static uint32_t blob_segment(emitter *E, ls_blob *blob)
{
    uint64_t h = XXH3_64bits(blob->data, blob->size) | 1;
    uintptr_t at;
    if (ls_ptrmap_get(&E->blob_seg, (const void *)(uintptr_t)h, &at)) {
        const ls_pte_blob *b = &E->segs.v[at - 1];
        if (b->n == blob->size && (!b->n || !memcmp(b->v, blob->data, b->n))) return (uint32_t)at - 1;
    }
    ls_pte_blob seg = {blob->data, blob->size, 0, ls_blob_ref(blob)}; /* shared, not copied */
    ls_vec_push(&E->segs, seg);
    ls_ptrmap_put(&E->blob_seg, (const void *)(uintptr_t)h, E->segs.n);
    return E->segs.n - 1;
}

static int delegate_index(emitter *E, const ls_node *n, const ls_submodule *sub, int32_t *out)
{
    uintptr_t known;
    if (ls_ptrmap_get(&E->del_ix, sub->name, &known)) return *out = (int32_t)known, 0;
    ls_blob *blob = ls_blob_ref(sub->processed);
    ls_compile_spec *specs = sub->specs;
    uint32_t nspecs = sub->nspecs;
    bool own_specs = false;
    if (!blob) { /* not preprocessed yet: the backend does it now */
        const ls_backend *be = ls_backend_resolve(sub->backend_id, NULL, NULL);
        ls_error e2;
        if (!be || !be->preprocess || !sub->program)
            return efail(E, n, "%s (%s) has no processed blob and no backend %s is here to make one", sub->name,
                         sub->backend_id, sub->backend_id);
        if (!E->named) E->named = ls_named_data_new();
        E->named = ls_named_data_own(E->named);
        if (be->preprocess(sub->program, &blob, &specs, &nspecs, E->named, &e2) != 0)
            return efail(E, n, "%s: %s preprocess: %s", sub->name, sub->backend_id, e2.msg);
        own_specs = true;
    }
    ls_pte_delegate d = {.id = ls_strdup(sub->backend_id), .has_processed = true};
    d.processed.location = LS_PTE_SEGMENT;
    d.processed.index = blob_segment(E, blob);
    d.compile_specs.present = true;
    d.compile_specs.n = nspecs;
    d.compile_specs.v = ls_calloc(nspecs ? nspecs : 1, sizeof *d.compile_specs.v);
    for (uint32_t k = 0; k < nspecs; k++) {
        d.compile_specs.v[k].key = ls_strdup(specs[k].key ? specs[k].key : "");
        size_t vn = specs[k].value ? specs[k].value->size : 0;
        d.compile_specs.v[k].value = (ls_pte_u8s){dup_bytes(vn ? specs[k].value->data : NULL, vn), (uint32_t)vn, true};
    }
    if (own_specs) {
        for (uint32_t k = 0; k < nspecs; k++) ls_blob_unref(specs[k].value);
        free(specs);
    }
    ls_blob_unref(blob);
    ls_vec_push(&E->dels, d);
    ls_vec_push(&E->del_sub, sub->name);
    ls_ptrmap_put(&E->del_ix, sub->name, E->dels.n - 1);
    *out = (int32_t)E->dels.n - 1;
    return 0;
}

static int delegate_call(emitter *E, const ls_node *n, uint32_t pos)
{
    const ls_node *ga = n->nargs && n->args[0].kind == LS_ARG_NODE ? ls_program_node(E->p, n->args[0].v.node) : NULL;
    uintptr_t si;
    const ls_submodule *sub =
        ga && ga->kind == LS_NODE_GET_ATTR && ls_ptrmap_get(&E->sub_ix, ga->target, &si) ? &E->p->subs[si] : NULL;
    if (!sub) return efail(E, n, "its lowered module is not in the program");
    int32_t di = -1;
    if (delegate_index(E, n, sub, &di) != 0) return -1;
    int32_t *outs;
    uint32_t nouts;
    if (tuple_values(E, n, pos, &outs, &nouts) != 0) return -1;
    uint32_t nin = n->nargs - 1u;
    int32_t *args = ls_malloc(sizeof *args * (nin + nouts + 1));
    for (uint32_t k = 0; k < nin; k++)
        if (arg_value(E, n, &n->args[k + 1], &args[k]) != 0) {
            free(args);
            free(outs);
            return -1;
        }
    memcpy(args + nin, outs, sizeof *outs * nouts);
    free(outs);
    push_instr(E, LS_PTE_DELEGATE_CALL, di, args, nin + nouts);
    return 0;
}

static int kernel_call(emitter *E, const ls_node *n, uint32_t pos)
{
    const ls_op *op = n->op;
    const ls_schema *s = &op->schema;
    bool out_form = n->dialect == LS_DIALECT_EXECUTORCH && op->out_overload && n->nargs > s->nparams;
    char name[160];
    snprintf(name, sizeof name, "%s::%s", op->ns, op->name);
    /* exir's _emit_operator writes a default overload as "" (the kernel registers as
     * "aten::copy_", Method::resolve_operator appends ".overload" only when it is not empty) */
    const char *overload = out_form ? op->out_overload : op->overload;
    int32_t oi = op_index(E, name, strcmp(overload, "default") ? overload : "");
    uint8_t keep[LS_MAX_PARAMS];
    uint32_t nkeep = s->nparams;
    for (uint32_t k = 0; k < nkeep; k++) keep[k] = (uint8_t)k;
    if (out_form) nkeep = ls_out_params(op, keep);
    uint32_t nextra = out_form ? (uint32_t)(n->nargs - s->nparams) : 0;
    int32_t *args = ls_malloc(sizeof *args * (nkeep + 2 * nextra + n->nvals + 2));
    uint32_t na = 0;
    int rc = 0;
    for (uint32_t k = 0; k < nkeep && rc == 0; k++) {
        if (keep[k] < n->nargs) rc = arg_value(E, n, &n->args[keep[k]], &args[na++]);
        else rc = efail(E, n, "argument '%s' is missing", s->params[keep[k]].name);
    }
    if (rc == 0 && out_form) {
        uint32_t first_out = na;
        for (uint32_t k = 0; k < nextra && rc == 0; k++) rc = arg_value(E, n, &n->args[s->nparams + k], &args[na++]);
        /* the return value (exir's _emit_operator): the out argument again, or for several one
         * TensorList of them */
        if (rc == 0 && nextra == 1) {
            args[na++] = args[first_out];
        } else if (rc == 0) {
            int32_t *items = ls_malloc(sizeof *items * nextra);
            memcpy(items, args + first_out, sizeof *items * nextra);
            ls_pte_value lv = {.kind = LS_PTE_VAL_TENSOR_LIST};
            lv.tensor_list = (ls_pte_i32s){items, nextra, true};
            args[na++] = push_value(E, lv);
        }
        if (rc == 0 && nextra == 1 && !s->returns_list) E->val_of[n->id] = args[first_out];
        if (rc == 0 && s->returns_list) { /* getitems read the out list's items */
            const ls_pte_value *lv = &E->values.v[args[first_out]];
            uint32_t nu;
            const uint32_t *users = ls_program_users(E->p, pos, &nu);
            for (uint32_t u = 0; u < nu; u++) {
                const ls_node *g = E->p->nodes[users[u]];
                if (g->op && g->op->id == LS_OP_getitem && g->nargs == 2 && g->args[1].kind == LS_ARG_INT &&
                    g->args[1].v.i >= 0 && (uint64_t)g->args[1].v.i < lv->tensor_list.n)
                    E->val_of[g->id] = lv->tensor_list.v[g->args[1].v.i];
            }
        } else if (rc == 0 && nextra > 1) {
            uint32_t nu;
            const uint32_t *users = ls_program_users(E->p, pos, &nu);
            for (uint32_t u = 0; u < nu; u++) {
                const ls_node *g = E->p->nodes[users[u]];
                if (g->op && g->op->id == LS_OP_getitem && g->nargs == 2 && g->args[1].kind == LS_ARG_INT &&
                    g->args[1].v.i >= 0 && (uint64_t)g->args[1].v.i < nextra)
                    E->val_of[g->id] = args[first_out + g->args[1].v.i];
            }
        }
    } else if (rc == 0) { /* a functional call: its return value follows the inputs */
        int32_t ret = -1;
        if (op->flags & LS_OPF_INPLACE) {
            ret = args[0];
        } else if (n->val_kind == LS_VAL_TENSOR && ls_node_tval(n)) {
            rc = tensor_value(E, n, ls_node_tval(n), n->id, 0, NULL, &ret);
        } else if (n->val_kind == LS_VAL_TENSORS) {
            int32_t *vals;
            uint32_t nv;
            rc = tuple_values(E, n, pos, &vals, &nv);
            if (rc == 0) {
                ls_pte_value lv = {.kind = LS_PTE_VAL_TENSOR_LIST};
                lv.tensor_list = (ls_pte_i32s){vals, nv, true};
                ret = push_value(E, lv);
            }
        } else if (n->val_kind == LS_VAL_SYMINT) {
            ret = int_value(E, 0);
        } else {
            ret = push_value(E, (ls_pte_value){.kind = LS_PTE_VAL_NULL});
        }
        if (rc == 0) {
            args[na++] = ret;
            E->val_of[n->id] = ret;
        }
    }
    if (rc != 0) {
        free(args);
        return -1;
    }
    push_instr(E, LS_PTE_KERNEL_CALL, oi, args, na);
    return 0;
}

/* memory.view, as exir's _emit_view: a static view of planned memory (or of a constant) is a
 * value of its own sizes at its base's place and no instruction; any other runs
 * executorch_prim::et_view.default(self, size, out). */
static int view(emitter *E, const ls_node *n)
{
    const ls_tmeta *m = ls_node_tval(n);
    if (!m || n->nargs < 2 || n->args[0].kind != LS_ARG_NODE) return efail(E, n, "a memory.view without its base or sizes");
    int32_t bv;
    if (node_value(E, n, n->args[0].v.node, &bv) != 0) return -1;
    const ls_pte_value *b = &E->values.v[bv];
    bool constant = b->kind == LS_PTE_VAL_TENSOR && b->tensor.data_buffer_idx > 0 && !b->tensor.has_allocation_info;
    bool planned = ls_mem_plan_slot(E->plan, n->id, 0) != 0;
    int64_t sizes[LS_MAX_DIMS];
    bool dyn = false;
    bool bounded = lsx_upper_sizes(E->bounds, m, sizes, &dyn) == 0;
    if (bounded && !dyn && (planned || constant))
        return tensor_value(E, n, m, n->id, constant ? b->tensor.data_buffer_idx : 0, NULL, &E->val_of[n->id]);
    int32_t *args = ls_malloc(sizeof *args * 3);
    args[0] = bv;
    if (arg_value(E, n, &n->args[1], &args[1]) != 0 || tensor_value(E, n, m, n->id, 0, NULL, &args[2]) != 0) {
        free(args);
        return -1;
    }
    E->val_of[n->id] = args[2];
    push_instr(E, LS_PTE_KERNEL_CALL, op_index(E, "executorch_prim::et_view", "default"), args, 3);
    return 0;
}

static int call(emitter *E, const ls_node *n, uint32_t pos)
{
    if (!n->op)
        return efail(E, n, "operator %s is unknown to lowerscope: it cannot be emitted", n->target ? n->target : "?");
    E->cur_node = n->id;
    switch ((int)n->op->id) {
    case LS_OP_alloc:
        if (!ls_node_tval(n)) return efail(E, n, "an alloc without tensor metadata");
        return tensor_value(E, n, ls_node_tval(n), n->id, 0, NULL, &E->val_of[n->id]);
    case LS_OP_getitem:
        if (E->val_of[n->id] < 0) {
            const ls_node *of = n->nargs ? ls_program_node(E->p, n->args[0].v.node) : NULL;
            return efail(E, n, "getitem of `%s`, which makes no tuple the emitter knows", of ? of->name : "?");
        }
        return 0;
    case LS_OP_call_delegate: return delegate_call(E, n, pos);
    case LS_OP_memory_view: return view(E, n);
    default: return kernel_call(E, n, pos);
    }
}

static int output(emitter *E, const ls_node *n)
{
    for (uint16_t k = 0; k < n->nargs; k++) {
        uint8_t kind = k < E->p->n_outputs ? E->p->outputs[k].kind : LS_OUT_USER_OUTPUT;
        if (kind != LS_OUT_USER_OUTPUT && kind != LS_OUT_LOSS_OUTPUT) continue;
        int32_t v;
        if (arg_value(E, n, &n->args[k], &v) != 0) return -1;
        ls_vec_push(&E->outputs, v);
    }
    return 0;
}

/* ---- the program */

/* pytree specs as ExecuTorch's C++ pytree writes them: (args tuple, kwargs dict) for inputs,
 * one leaf or a tuple of leaves for outputs. */
static char *tree_spec(uint32_t leaves, bool args_kwargs)
{
    ls_buf b = {0};
    if (args_kwargs) ls_buf_printf(&b, "T2#%u#0(", leaves);
    if (!args_kwargs && leaves == 1) {
        ls_buf_puts(&b, "$");
    } else {
        ls_buf_printf(&b, "T%u", leaves);
        for (uint32_t i = 0; i < leaves; i++) ls_buf_puts(&b, "#1");
        ls_buf_putc(&b, '(');
        for (uint32_t i = 0; i < leaves; i++) ls_buf_puts(&b, i ? ",$" : "$");
        ls_buf_putc(&b, ')');
    }
    if (args_kwargs) ls_buf_puts(&b, ",D0())");
    return ls_buf_take(&b);
}

static void build_pte(emitter *E, ls_pte *pte)
{
    memset(pte, 0, sizeof *pte);
    pte->name = ls_strdup(E->p->name ? E->p->name : "program");
    pte->execution_plan.v = ls_calloc(1, sizeof *pte->execution_plan.v);
    pte->execution_plan.n = 1;
    pte->execution_plan.present = true;
    ls_pte_plan *pl = &pte->execution_plan.v[0];
    pl->name = ls_strdup(E->p->method ? E->p->method : "forward"); /* a .pte's method keeps its name */
    pl->has_container_meta_type = true;
    pl->container_meta_type.encoded_inp_str = tree_spec(E->inputs.n, true);
    pl->container_meta_type.encoded_out_str = tree_spec(E->outputs.n, false);
    pl->values = (ls_pte_values){E->values.v, E->values.n, true};
    pl->inputs = (ls_pte_i32s){E->inputs.v, E->inputs.n, true};
    pl->outputs = (ls_pte_i32s){E->outputs.v, E->outputs.n, true};
    pl->chains.v = ls_calloc(1, sizeof *pl->chains.v);
    pl->chains.n = 1;
    pl->chains.present = true;
    pl->chains.v[0].inputs.present = pl->chains.v[0].outputs.present = true;
    pl->chains.v[0].instructions = (ls_pte_instructions){E->instrs.v, E->instrs.n, true};
    pl->operators = (ls_pte_operators){E->ops.v, E->ops.n, true};
    pl->delegates = (ls_pte_delegates){E->dels.v, E->dels.n, true};
    pl->non_const_buffer_sizes.v = ls_calloc(2, sizeof(int64_t));
    pl->non_const_buffer_sizes.v[1] = (int64_t)E->plan->arena;
    pl->non_const_buffer_sizes.n = 2;
    pl->non_const_buffer_sizes.present = true;
    memset(&E->values, 0, sizeof E->values);
    memset(&E->inputs, 0, sizeof E->inputs);
    memset(&E->outputs, 0, sizeof E->outputs);
    memset(&E->instrs, 0, sizeof E->instrs);
    memset(&E->ops, 0, sizeof E->ops);
    memset(&E->dels, 0, sizeof E->dels);

    pte->constant_buffer.present = pte->backend_delegate_data.present = true;
    /* segment 0: the constants (ExecuTorch writes it even when empty) */
    E->segs.v[0] = (ls_pte_blob){(uint8_t *)E->consts.bytes.s, E->consts.bytes.len, 0, NULL};
    E->consts.bytes.s = NULL;
    pte->has_constant_segment = true;
    pte->constant_segment.segment_index = 0;
    pte->constant_segment.offsets = (ls_pte_u64s){E->consts.offsets.v, E->consts.offsets.n, true};
    memset(&E->consts.offsets, 0, sizeof E->consts.offsets);
    if (E->mut_seg >= 0) {
        E->segs.v[E->mut_seg] = (ls_pte_blob){(uint8_t *)E->muts.bytes.s, E->muts.bytes.len, 0, NULL};
        E->muts.bytes.s = NULL;
        pte->mutable_data_segments.v = ls_calloc(1, sizeof *pte->mutable_data_segments.v);
        pte->mutable_data_segments.n = 1;
        pte->mutable_data_segments.present = true;
        pte->mutable_data_segments.v[0].segment_index = (uint32_t)E->mut_seg;
        pte->mutable_data_segments.v[0].offsets = (ls_pte_u64s){E->muts.offsets.v, E->muts.offsets.n, true};
        memset(&E->muts.offsets, 0, sizeof E->muts.offsets);
    }
    /* named data after the delegates' blobs, a segment per key, as exir's emitter lays them out
     * (cc_quantized.pte: segments 2 and 3 are the two weights its XNNPACK blob names) */
    uint32_t n_named = ls_named_data_count(E->named), kept = 0;
    pte->named_data.v = ls_calloc(n_named ? n_named : 1, sizeof *pte->named_data.v);
    for (uint32_t i = 0; i < n_named; i++) {
        const char *key = ls_named_data_key(E->named, i);
        /* what the file's .ptd holds stays in the .ptd: the runtime merges it in by key
         * (extension/module/module.cpp: MergedDataMap) */
        const ls_pte_named *from = E->file ? ls_pte_file_named(E->file, key) : NULL;
        if (from && from->ptd >= 0) continue;
        ls_blob *b = (ls_blob *)ls_named_data_blob(E->named, i); /* a reference is taken, the bytes stay */
        pte->named_data.v[kept].key = ls_strdup(key);
        pte->named_data.v[kept++].segment_index = E->segs.n;
        ls_pte_blob seg = {b->data, b->size, ls_named_data_alignment(E->named, i), ls_blob_ref(b)};
        ls_vec_push(&E->segs, seg);
    }
    pte->named_data.n = kept;
    pte->named_data.present = kept > 0;
    pte->segments.v = ls_calloc(E->segs.n ? E->segs.n : 1, sizeof *pte->segments.v);
    pte->segments.n = E->segs.n;
    pte->segments.present = true;
    uint64_t at = 0; /* as pte_write.c lays them out: each at a multiple of 128 from the segment base */
    for (uint32_t i = 0; i < E->segs.n; i++) {
        pte->segments.v[i].offset = (at + 127) / 128 * 128;
        pte->segments.v[i].size = E->segs.v[i].n;
        at = pte->segments.v[i].offset + E->segs.v[i].n;
    }
    pte->segment_data = E->segs.v;
    pte->n_segment_data = E->segs.n;
    memset(&E->segs, 0, sizeof E->segs);
}

static void free_emitter(emitter *E)
{
    ls_pte scrap;
    memset(&scrap, 0, sizeof scrap);
    /* whatever was not handed to the pte: free it through a throwaway pte */
    scrap.execution_plan.v = ls_calloc(1, sizeof *scrap.execution_plan.v);
    scrap.execution_plan.n = 1;
    ls_pte_plan *pl = &scrap.execution_plan.v[0];
    pl->values = (ls_pte_values){E->values.v, E->values.n, true};
    pl->inputs = (ls_pte_i32s){E->inputs.v, E->inputs.n, true};
    pl->outputs = (ls_pte_i32s){E->outputs.v, E->outputs.n, true};
    pl->operators = (ls_pte_operators){E->ops.v, E->ops.n, true};
    pl->delegates = (ls_pte_delegates){E->dels.v, E->dels.n, true};
    pl->chains.v = ls_calloc(1, sizeof *pl->chains.v);
    pl->chains.n = 1;
    pl->chains.v[0].instructions = (ls_pte_instructions){E->instrs.v, E->instrs.n, true};
    scrap.segment_data = E->segs.v;
    scrap.n_segment_data = E->segs.n;
    ls_pte_free(&scrap);
    free(E->del_sub.v);
    ls_ptrmap_free(&E->blob_seg);
    ls_ptrmap_free(&E->sub_ix);
    ls_ptrmap_free(&E->del_ix);
    lsx_store_free(&E->consts);
    lsx_store_free(&E->muts);
    free(E->val_of);
    ls_named_data_unref(E->named);
    ls_sig_free(&E->sig);
    lsx_bounds_free(E->bounds);
}

/* Emits p with plan into pte; *instrs (when not NULL) receives what each instruction is made of. */
static int emit_program(const ls_program *p, const ls_mem_plan *plan, const ls_pass_ctx *ctx, ls_pte *pte,
                        ls_emit_summary *sum, ls_instr_map **instrs, ls_error *err)
{
    emitter E = {.p = p, .plan = plan, .err = err, .mut_seg = -1, .init_buffers = ctx->init_mutable_buffers,
                 .buffer_names = ctx->mutable_buffer_names, .named = ls_named_data_ref(p->named_data),
                 .file = ls_program_pte_file(p)};
    E.bounds = lsx_bounds_new(p);
    ls_sig_build(&E.sig, p);
    for (uint32_t i = 0; i < p->n_subs; i++) ls_ptrmap_put(&E.sub_ix, p->subs[i].name, i);
    E.val_of = ls_malloc(sizeof *E.val_of * (p->next_id ? p->next_id : 1));
    for (uint32_t i = 0; i < p->next_id; i++) E.val_of[i] = -1;
    ls_vec_push(&E.segs, ((ls_pte_blob){0})); /* the constant segment */
    lsx_store_init(&E.consts, CONST_ALIGN);
    lsx_store_init(&E.muts, 1);
    int rc = 0;
    for (uint32_t i = 0; i < p->n_nodes && rc == 0; i++) {
        const ls_node *n = p->nodes[i];
        switch ((ls_node_kind)n->kind) {
        case LS_NODE_PLACEHOLDER: rc = placeholder(&E, n); break;
        case LS_NODE_CALL: rc = call(&E, n, i); break;
        case LS_NODE_OUTPUT: rc = output(&E, n); break;
        case LS_NODE_GET_ATTR: break;
        }
    }
    if (rc == 0) {
        memset(sum, 0, sizeof *sum);
        sum->values = E.values.n;
        sum->instructions = E.instrs.n;
        sum->kernel_calls = E.kernel_calls;
        sum->delegate_calls = E.delegate_calls;
        sum->operators = E.ops.n;
        sum->delegates = E.dels.n;
        sum->constants = E.constants;
        sum->externals = E.externals;
        sum->constant_bytes = E.consts.bytes.len;
        sum->arena = plan->arena;
        sum->tensor_bytes = plan->tensor_bytes;
        sum->planned_tensors = plan->n_slots;
        build_pte(&E, pte);
        for (uint32_t i = 0; i < pte->n_segment_data; i++) sum->segments += pte->segment_data[i].n > 0;
        size_t size;
        if (ls_pte_file_size(pte, &size, err) != 0) {
            ls_fail_prefix(err, "emit: the program does not check");
            ls_pte_free(pte);
            rc = -1;
        } else {
            sum->file_bytes = size;
        }
    }
    if (rc == 0 && instrs) {
        *instrs = ls_instr_map_new(&E.instr_node.n, 1);
        if (E.instr_node.n) memcpy((*instrs)->node, E.instr_node.v, sizeof *E.instr_node.v * E.instr_node.n);
    }
    free(E.instr_node.v);
    free_emitter(&E);
    return rc;
}

int ls_pass_emit(const ls_program *in, ls_program **out, ls_pass_ctx *ctx)
{
    const ls_mem_plan *plan = ls_program_mem_plan(in);
    if (!plan) return ls_fail(ctx->err, "emit needs the memory plan: run memory_plan before emit");
    ls_pte *pte = ls_calloc(1, sizeof *pte);
    ls_emit_summary sum;
    ls_instr_map *instrs = NULL;
    if (emit_program(in, plan, ctx, pte, &sum, &instrs, ctx->err) != 0) {
        free(pte);
        return -1;
    }
    char a[32], b[32];
    ls_report_add(ctx->report, NULL, NULL,
                  "forward: %u values, %u instruction%s (%u KernelCall%s, %u DelegateCall%s), %u operator%s", sum.values,
                  sum.instructions, sum.instructions == 1 ? "" : "s", sum.kernel_calls, sum.kernel_calls == 1 ? "" : "s", sum.delegate_calls,
                  sum.delegate_calls == 1 ? "" : "s", sum.operators, sum.operators == 1 ? "" : "s");
    const ls_pte_plan *pl = &pte->execution_plan.v[0];
    for (uint32_t d = 0; d < pl->delegates.n; d++) {
        const ls_pte_delegate *dl = &pl->delegates.v[d];
        ls_fmt_bytes(pte->segment_data[dl->processed.index].n, a, sizeof a);
        ls_report_add(ctx->report, NULL, NULL, "delegate %u: %s, its %s blob in segment %u", d, dl->id, a,
                      dl->processed.index);
    }
    ls_fmt_bytes(sum.constant_bytes, a, sizeof a);
    ls_report_add(ctx->report, NULL, NULL, "%u constant%s, %s in the constant segment", sum.constants,
                  sum.constants == 1 ? "" : "s", a);
    ls_fmt_bytes(sum.file_bytes, a, sizeof a);
    ls_fmt_bytes(sum.arena, b, sizeof b);
    ls_report_add(ctx->report, NULL, NULL, "the .pte is %s with %u segment%s holding data; arena %s", a, sum.segments,
                  sum.segments == 1 ? "" : "s", b);
    ls_program *q = ls_program_copy(in);
    lsx_exec_attach(q, (ls_mem_plan *)plan, pte, &sum);
    q->instrs = instrs; /* the emitted program's instructions, as a .pte's loader records them */
    *out = q;
    return 0;
}
