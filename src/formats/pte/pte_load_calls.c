/* The instructions of a .pte method as nodes (pte_load.c reads the rest): their arguments by
 * the operator's schema, a KernelCall as a call of the functional op (out arguments dropped, the
 * values they write defined by the call), a copy_ into a buffer as its write-back, an operator
 * lowerscope does not know as an unknown call, and a DelegateCall as executorch_call_delegate
 * of a lowered submodule whose blob the delegate inspectors read (backend.h). */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "build.h"
#include "dialect.h"
#include "ops.h"
#include "pte_loader.h"

/* ---- arguments */

static int int_item(lsp_loader *L, int64_t idx, ls_symint *out)
{
    const ls_pte_value *v = lsp_val(L, idx);
    if (!v) return lsp_lfail(L, "list item %lld is not a value", (long long)idx);
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
        return lsp_read_tensor(L, idx, &out->node);
    }
    return lsp_lfail(L, "IntList item %lld is %s, not an Int", (long long)idx,
                 ls_pte_val_kind_name(v->kind) ? ls_pte_val_kind_name(v->kind) : "unknown");
}

/* Value vi as an argument. prm (may be NULL for unknown operators) says what the schema wants. */
int lsp_arg_of(lsp_loader *L, const ls_param *prm, int32_t vi, ls_arg *a)
{
    memset(a, 0, sizeof *a);
    const ls_pte_value *v = lsp_val(L, vi);
    if (!v) return lsp_lfail(L, "argument value %d does not exist", vi);
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
        if (lsp_read_tensor(L, vi, &id) != 0) return -1;
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
            if (lsp_read_tensor(L, item, &ids[k]) != 0) {
                free(ids);
                return -1;
            }
        }
        *a = ls_arg_nodes(ids, n, opt);
        free(ids);
        return 0;
    }
    }
    return lsp_lfail(L, "value %d has the unknown kind %d", vi, (int)v->kind);
}

void lsp_free_args(ls_arg *args, uint32_t n)
{
    for (uint32_t i = 0; i < n; i++) ls_arg_free(&args[i]);
    free(args);
}

/* ---- nodes */

static ls_node *getitem(lsp_loader *L, uint32_t of, uint32_t k, const ls_tmeta *m)
{
    ls_node *g = ls_node_new_getitem(L->p, ls_namer_take(L->names, "getitem"), of, k);
    if (m) ls_node_set_val(g, m);
    return g;
}

/* The node's value: the tensors it writes (outs[k], value indices); several get getitems. Takes
 * n (into the body, or released on failure). */
static int define_outputs(lsp_loader *L, ls_node *n, const int32_t *outs, uint32_t nouts, bool tuple)
{
    if (nouts > LS_MAX_NODE_ARGS) {
        ls_node_unref(n);
        return lsp_lfail(L, "a call writes %u values (at most %u)", nouts, LS_MAX_NODE_ARGS);
    }
    ls_tmeta *ms = ls_calloc(nouts ? nouts : 1, sizeof *ms);
    for (uint32_t k = 0; k < nouts; k++)
        if (lsp_is_tensor(L, outs[k]) && lsp_tensor_meta(L, &L->plan->values.v[outs[k]].tensor, &ms[k]) != 0) {
            free(ms);
            ls_node_unref(n);
            return -1;
        }
    if (!tuple && nouts == 1) {
        if (lsp_is_tensor(L, outs[0])) ls_node_set_val(n, &ms[0]);
        else if (lsp_val(L, outs[0])) n->val_kind = lsp_val(L, outs[0])->kind == LS_PTE_VAL_INT ? LS_VAL_SYMINT : LS_VAL_OTHER;
        L->node_of[outs[0]] = n->id;
        ls_vec_push(&L->body, n);
    } else {
        ls_node_set_vals(n, LS_VAL_TENSORS, ms, (uint16_t)nouts);
        ls_vec_push(&L->body, n);
        for (uint32_t k = 0; k < nouts; k++) {
            ls_node *g = getitem(L, n->id, k, lsp_is_tensor(L, outs[k]) ? &ms[k] : NULL);
            ls_vec_push(&L->body, g);
            L->node_of[outs[k]] = g->id;
        }
    }
    free(ms);
    return 0;
}

static bool defined(const lsp_loader *L, int32_t vi)
{
    return vi >= 0 && (uint32_t)vi < L->nvals && (L->node_of[vi] || !lsp_is_tensor(L, vi));
}

/* An operator the table does not know (cortex_m::, quantized_decomposed::, ...): shown with its
 * inputs in file order; it defines the tensors it writes (its last argument, the return, and any
 * tensor no one wrote before). Never run. */
static int unknown_call(lsp_loader *L, const char *target, const ls_pte_i32s *args)
{
    if (args->n > LS_MAX_NODE_ARGS) return lsp_lfail(L, "a call of %s with %u arguments (at most %u)", target, args->n, LS_MAX_NODE_ARGS);
    char base[160];
    snprintf(base, sizeof base, "%s", target);
    for (char *c = base; *c; c++) *c = *c >= 'A' && *c <= 'Z' ? (char)(*c - 'A' + 'a') : *c;
    char *cc = strstr(base, "::");
    if (cc) memmove(cc, cc + 1, strlen(cc + 1) + 1); /* "cortex_m::pad.out" → cortex_m_pad_out */
    ls_node *n = ls_node_new(L->p, LS_NODE_CALL, ls_namer_take(L->names, ls_sanitize_name(NULL, base)), target);
    n->dialect = LS_DIALECT_EXECUTORCH;
    L->call_node = n->id;
    int32_t ret = args->n ? args->v[args->n - 1] : -1;
    /* An out variant's schema puts its out (and scratch) tensors after every input: a tensor no
     * one wrote that comes before one someone did is an input, a view exir elided
     * (_emit_view: KeywordSpotting's quantized_linear reads its [1, 64] input that way, at the
     * place of avg_pool2d's [1, 64, 1, 1] output). */
    uint32_t last_read = 0;
    for (uint32_t k = 0; k + 1 < args->n; k++)
        if (args->v[k] != ret && lsp_is_tensor(L, args->v[k]) && defined(L, args->v[k])) last_read = k + 1;
    for (uint32_t k = 0; k + 1 < last_read; k++)
        if (!defined(L, args->v[k]) && lsp_is_tensor(L, args->v[k])) lsp_elided_view(L, (uint32_t)args->v[k]);
    ls_arg *a = ls_calloc(args->n ? args->n : 1, sizeof *a);
    uint32_t na = 0;
    for (uint32_t k = 0; k + 1 < args->n; k++) {
        int32_t vi = args->v[k];
        if (vi == ret || !defined(L, vi)) continue; /* written by this call */
        if (lsp_arg_of(L, NULL, vi, &a[na]) != 0) {
            lsp_free_args(a, na);
            ls_node_unref(n);
            return -1;
        }
        na++;
    }
    ls_node_set_args(n, a, (uint16_t)na);
    for (uint32_t k = 0; k + 1 < args->n; k++)
        if (!defined(L, args->v[k])) L->node_of[args->v[k]] = n->id; /* scratch and out tensors */
    L->n_unknown++;
    if (ret >= 0 && lsp_is_tensor(L, ret)) return define_outputs(L, n, &ret, 1, false);
    ls_vec_push(&L->body, n);
    return 0;
}

int lsp_kernel_call(lsp_loader *L, uint32_t at, const ls_pte_instruction *in)
{
    const ls_pte_i32s *args = &in->kernel_call.args;
    int32_t oi = in->kernel_call.op_index;
    if (oi < 0 || (uint32_t)oi >= L->plan->operators.n)
        return lsp_lfail(L, "instruction %u calls operator %d (%u operators)", at, oi, L->plan->operators.n);
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
    if (op->id == LS_OP_copy_ && !out_form && args->n >= 2 && lsp_is_tensor(L, args->v[0]) && L->role[args->v[0]] == R_STATE &&
        lsp_is_tensor(L, args->v[1])) {
        uint32_t src;
        if (lsp_read_tensor(L, args->v[1], &src) != 0) return -1;
        int32_t b = -1;
        for (uint32_t k = 0; k < L->ph.n && b < 0; k++)
            if (L->ph.v[k]->id == L->node_of[args->v[0]]) b = (int32_t)k;
        if (b >= 0) {
            ls_vec_push(&L->mut_target, L->ph_specs.v[b].target);
            ls_vec_push(&L->mut_node, src);
            ls_vec_push(&L->mut_buf, args->v[0]);
            ls_vec_push(&L->mut_ret, args->n > 3 ? args->v[args->n - 1] : args->v[0]);
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
        rc = lsp_arg_of(L, prm, args->v[k], &a[keep[k]]);
        a[keep[k]].flags = prm->kwarg_only ? LS_ARGF_KEYWORD : 0;
        set[keep[k]] = true;
    }
    const int32_t *outs = args->n ? args->v + nkeep : NULL;
    int32_t one_out = args->n > nkeep ? args->v[args->n - 1] : -1; /* functional form: the return */
    for (uint32_t i = 0; i < s->nparams && rc == 0; i++) {
        if (set[i]) continue;
        const ls_param *prm = &s->params[i];
        if (out_form && !strcmp(prm->name, "dtype") && nout && lsp_is_tensor(L, outs[0])) {
            a[i].kind = LS_ARG_DTYPE; /* the out tensor says it */
            a[i].v.i = ls_dtype_from_et(L->plan->values.v[outs[0]].tensor.scalar_type);
        } else if (prm->has_default) {
            ls_arg_copy(&a[i], &prm->def);
            a[i].flags = LS_ARGF_DEFAULT;
        } else if (prm->optional) {
            a[i].kind = LS_ARG_NONE;
            a[i].flags = LS_ARGF_DEFAULT;
        } else {
            rc = lsp_lfail(L, "instruction %u (%s): argument '%s' is missing", at, target, prm->name);
        }
        a[i].flags |= prm->kwarg_only ? LS_ARGF_KEYWORD : 0;
    }
    free(set);
    if (rc != 0) {
        lsp_free_args(a, s->nparams);
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
        if (op->flags & LS_OPF_INPLACE && args->n && lsp_is_tensor(L, args->v[0])) L->node_of[args->v[0]] = n->id;
        return define_outputs(L, n, &one_out, 1, false);
    }
    if (s->returns_list) { /* one Tensor[] out: its items */
        const ls_pte_value *lv = lsp_val(L, outs[0]);
        if (!lv || lv->kind != LS_PTE_VAL_TENSOR_LIST) {
            ls_node_unref(n);
            return lsp_lfail(L, "instruction %u (%s): the out argument is not a TensorList", at, target);
        }
        return define_outputs(L, n, lv->tensor_list.v, lv->tensor_list.n, true);
    }
    return define_outputs(L, n, outs, nout, nout > 1);
}

/* ---- delegates */

static int add_submodule(lsp_loader *L, uint32_t di, const char *name)
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
    if (!sub.processed) return lsp_lfail(L, "delegate %u: cannot hold its %zu-byte blob", di, size);
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

int lsp_delegate_call(lsp_loader *L, uint32_t at, const ls_pte_instruction *in)
{
    const ls_pte_i32s *args = &in->delegate_call.args;
    int32_t di = in->delegate_call.delegate_index;
    if (di < 0 || (uint32_t)di >= L->plan->delegates.n)
        return lsp_lfail(L, "instruction %u calls delegate %d (%u delegates)", at, di, L->plan->delegates.n);
    if (args->n > LS_MAX_NODE_ARGS) return lsp_lfail(L, "instruction %u: a delegate call with %u arguments (at most %u)", at, args->n,
                                             LS_MAX_NODE_ARGS);
    for (uint32_t k = 0; k < args->n; k++)
        if (!lsp_val(L, args->v[k])) return lsp_lfail(L, "instruction %u: argument value %d does not exist", at, args->v[k]);
    /* inputs, then outputs: the outputs are the tensors at the end that nothing defined yet */
    uint32_t nin = args->n;
    while (nin > 0 && lsp_is_tensor(L, args->v[nin - 1]) && !L->node_of[args->v[nin - 1]]) nin--;
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
        if (lsp_arg_of(L, NULL, args->v[k], &a[k + 1]) != 0) {
            lsp_free_args(a, k + 1);
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
