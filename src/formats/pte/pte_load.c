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
#include <stddef.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "../formats.h"
#include "dialect.h"
#include "named_data.h"
#include "namer.h"
#include "ops.h"
#include "pte_file.h"
#include "pte_internal.h"
#include "pte_loader.h"

int lsp_lfail(lsp_loader *L, const char *fmt, ...)
{
    char msg[LS_ERR_MAX];
    va_list ap;
    va_start(ap, fmt);
    vsnprintf(msg, sizeof msg, fmt, ap);
    va_end(ap);
    return ls_fail(L->err, "%s: %s: %s", L->where, L->plan && L->plan->name ? L->plan->name : "plan", msg);
}

const ls_pte_value *lsp_val(const lsp_loader *L, int64_t i)
{
    return i >= 0 && (uint64_t)i < L->nvals ? &L->plan->values.v[i] : NULL;
}

bool lsp_is_tensor(const lsp_loader *L, int64_t i)
{
    const ls_pte_value *v = lsp_val(L, i);
    return v && v->kind == LS_PTE_VAL_TENSOR;
}

int lsp_tensor_meta(lsp_loader *L, const ls_pte_tensor *t, ls_tmeta *m)
{
    if (t->sizes.n > LS_MAX_DIMS) return lsp_lfail(L, "a tensor of rank %u (at most %d)", t->sizes.n, LS_MAX_DIMS);
    int64_t sizes[LS_MAX_DIMS];
    for (uint32_t d = 0; d < t->sizes.n; d++) sizes[d] = t->sizes.v[d];
    ls_tmeta_init(m, ls_dtype_from_et(t->scalar_type), (int)t->sizes.n, sizes);
    if (t->dim_order.n == t->sizes.n)
        for (uint32_t d = 0; d < t->dim_order.n; d++) m->dim_order[d] = t->dim_order.v[d];
    m->requires_grad = t->requires_grad;
    /* as the .pt2 reader refuses it: a shape whose elements overflow or pass what lowerscope
     * accepts (the runtime's own check, validate_tensor's numel overflow, is a finding of
     * pte_check; nothing past the loader could size or stride this one) */
    ls_error e;
    if (ls_read_check_shape(m, &e) != 0) {
        const ls_pte_value *v = (const ls_pte_value *)(const void *)((const char *)t - offsetof(ls_pte_value, tensor));
        if (v >= L->plan->values.v && v < L->plan->values.v + L->plan->values.n)
            return lsp_lfail(L, "values[%u]: %s", (unsigned)(v - L->plan->values.v), e.msg);
        return lsp_lfail(L, "%s", e.msg);
    }
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
static ls_tensor *tensor_over(lsp_loader *L, const ls_tmeta *m, const uint8_t *data, size_t size)
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
static int stored_tensor(lsp_loader *L, const ls_pte_tensor *t, const ls_tmeta *m, ls_tensor **out)
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

static ls_node *new_placeholder(lsp_loader *L, const char *name, const ls_tmeta *m)
{
    ls_node *n = ls_node_new(L->p, LS_NODE_PLACEHOLDER, ls_namer_take(L->names, name), NULL);
    if (m) ls_node_set_val(n, m);
    return n;
}

/* A constant or buffer placeholder for tensor value i, with its data. */
static int data_placeholder(lsp_loader *L, uint32_t i, bool buffer)
{
    const ls_pte_tensor *t = &L->plan->values.v[i].tensor;
    ls_tmeta m;
    if (lsp_tensor_meta(L, t, &m) != 0) return -1;
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


static int classify(lsp_loader *L)
{
    const ls_pte_plan *pl = L->plan;
    for (uint32_t k = 0; k < pl->inputs.n; k++) {
        int32_t i = pl->inputs.v[k];
        const ls_pte_value *v = lsp_val(L, i);
        if (!v) return lsp_lfail(L, "input %u is value %d, which does not exist", k, i);
        if (L->node_of[i]) return lsp_lfail(L, "value %d is listed twice as an input", i);
        ls_tmeta m;
        if (v->kind == LS_PTE_VAL_TENSOR && lsp_tensor_meta(L, &v->tensor, &m) != 0) return -1;
        ls_node *n = new_placeholder(L, ls_internf("input_%u", k), v->kind == LS_PTE_VAL_TENSOR ? &m : NULL);
        if (v->kind != LS_PTE_VAL_TENSOR) n->val_kind = v->kind == LS_PTE_VAL_INT ? LS_VAL_SYMINT : LS_VAL_OTHER;
        ls_input_spec s = {.kind = LS_IN_USER_INPUT, .name = n->name};
        /* A scalar input is a value the file stores: ExecuTorch's Method::set_input takes it only
         * equal to the traced one (an Int, Bool or String exactly, a Double within atol 1e-4 +
         * rtol 1e-5; runtime/executor/method.cpp), so it is not an input to ask for. */
        if (v->kind != LS_PTE_VAL_TENSOR && v->kind != LS_PTE_VAL_TENSOR_LIST && v->kind != LS_PTE_VAL_OPTIONAL_TENSOR_LIST) {
            s.kind = LS_IN_CONSTANT_INPUT;
            if (lsp_arg_of(L, NULL, i, &s.value) != 0) {
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
bool lsp_elided_view(lsp_loader *L, uint32_t i)
{
    const ls_pte_tensor *t = &L->plan->values.v[i].tensor;
    if (!t->has_allocation_info || t->data_buffer_idx) return false;
    if (!L->places) L->places = lsp_places_new(L->plan);
    int32_t base = lsp_places_view_of(L->places, L->plan, i, L->node_of);
    ls_tmeta m;
    if (base < 0 || lsp_tensor_meta(L, t, &m) != 0) return false;
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

int lsp_read_tensor(lsp_loader *L, int64_t i, uint32_t *id)
{
    if (!lsp_is_tensor(L, i)) return lsp_lfail(L, "value %lld is not a tensor", (long long)i);
    if (!L->node_of[i] && !lsp_elided_view(L, (uint32_t)i) && data_placeholder(L, (uint32_t)i, true) != 0) return -1;
    *id = L->node_of[i];
    return 0;
}

/* ---- the program */

static int convert(lsp_loader *L)
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
            case LS_PTE_KERNEL_CALL: rc = lsp_kernel_call(L, at, in); break;
            case LS_PTE_DELEGATE_CALL: rc = lsp_delegate_call(L, at, in); break;
            case LS_PTE_MOVE_CALL:
                if (!lsp_val(L, in->move_call.move_from) || !lsp_val(L, in->move_call.move_to))
                    return lsp_lfail(L, "instruction %u moves value %d to %d", at, in->move_call.move_from,
                                 in->move_call.move_to);
                L->node_of[in->move_call.move_to] = L->node_of[in->move_call.move_from];
                break;
            case LS_PTE_FREE_CALL: break;
            case LS_PTE_JUMP_FALSE_CALL:
                return lsp_lfail(L, "instruction %u is a JumpFalseCall: control flow is not supported", at);
            default: return lsp_lfail(L, "instruction %u has the unknown kind %d", at, (int)in->kind);
            }
            if (rc != 0) return -1;
            im->node[at] = L->call_node;
        }
    }
    /* outputs: buffer write-backs first (torch's order), then the plan's outputs. exir lists a
     * write-back among the plan's outputs too (_insert_copy makes the copy_ an output, and
     * _TopLevelEmitter.output emits every one): a plan output that is the buffer a copy_ wrote,
     * or that copy_'s return, is that write-back, not a user output. */
    const ls_pte_plan *pl = L->plan;
    uint32_t nout = L->mut_node.n + pl->outputs.n;
    ls_arg *oa = ls_calloc(nout ? nout : 1, sizeof *oa);
    ls_output_spec *os = ls_calloc(nout ? nout : 1, sizeof *os);
    bool *claimed = ls_calloc(L->mut_node.n ? L->mut_node.n : 1, sizeof *claimed);
    int rc = 0;
    for (uint32_t k = 0; k < L->mut_node.n; k++) {
        oa[k] = ls_arg_node(L->mut_node.v[k]);
        os[k] = (ls_output_spec){.kind = LS_OUT_BUFFER_MUTATION, .target = L->mut_target.v[k]};
    }
    uint32_t at_out = L->mut_node.n;
    for (uint32_t k = 0; k < pl->outputs.n && rc == 0; k++) {
        int32_t vi = pl->outputs.v[k];
        if (!lsp_val(L, vi)) {
            rc = lsp_lfail(L, "output %u is value %d, which does not exist", k, vi);
            break;
        }
        int32_t wb = -1;
        for (uint32_t m = 0; m < L->mut_node.n && wb < 0; m++)
            if (!claimed[m] && (L->mut_buf.v[m] == vi || L->mut_ret.v[m] == vi)) wb = (int32_t)m;
        if (wb >= 0) {
            claimed[wb] = true;
            continue;
        }
        rc = lsp_arg_of(L, NULL, vi, &oa[at_out]);
        os[at_out++].kind = LS_OUT_USER_OUTPUT;
    }
    free(claimed);
    nout = at_out;
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
    if (oa) lsp_free_args(oa, nout);
    free(os);
    return rc;
}

int lsp_program_from_pte(ls_pte_file *f, uint32_t plan, ls_program **out, ls_error *err)
{
    *out = NULL;
    lsp_loader L = {.where = f->path, .file = f, .pte = &f->pte, .err = err};
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
    free(L.mut_buf.v);
    free(L.mut_ret.v);
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
