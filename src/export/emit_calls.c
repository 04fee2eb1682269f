/* emit's instructions (emit.c has the overview): a KernelCall per call with its operator once in
 * the table, a DelegateCall per lowered module's call with its delegate (preprocessed now when
 * the step did not), memory.view as exir's _emit_view, and the plan's outputs. */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <xxhash.h>

#include "backend.h"
#include "emitter.h"

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
            return lsx_emit_fail(E, g, "a getitem without tensor metadata cannot be emitted");
        }
        if (lsx_emit_tensor_value(E, g, ls_node_tval(g), g->id, 0, NULL, &v[k]) != 0) {
            free(v);
            return -1;
        }
        E->val_of[g->id] = v[k];
    }
    for (uint32_t k = 0; k < n; k++)
        if (v[k] < 0 && lsx_emit_tensor_value(E, call, &call->vals[k], 0, 0, NULL, &v[k]) != 0) {
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
            return lsx_emit_fail(E, n, "%s (%s) has no processed blob and no backend %s is here to make one", sub->name,
                         sub->backend_id, sub->backend_id);
        if (!E->named) E->named = ls_named_data_new();
        E->named = ls_named_data_own(E->named);
        if (be->preprocess(sub->program, &blob, &specs, &nspecs, E->named, &e2) != 0)
            return lsx_emit_fail(E, n, "%s: %s preprocess: %s", sub->name, sub->backend_id, e2.msg);
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
        d.compile_specs.v[k].value = (ls_pte_u8s){lsx_emit_dup(vn ? specs[k].value->data : NULL, vn), (uint32_t)vn, true};
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
    if (!sub) return lsx_emit_fail(E, n, "its lowered module is not in the program");
    int32_t di = -1;
    if (delegate_index(E, n, sub, &di) != 0) return -1;
    int32_t *outs;
    uint32_t nouts;
    if (tuple_values(E, n, pos, &outs, &nouts) != 0) return -1;
    uint32_t nin = n->nargs - 1u;
    int32_t *args = ls_malloc(sizeof *args * (nin + nouts + 1));
    for (uint32_t k = 0; k < nin; k++)
        if (lsx_emit_arg_value(E, n, &n->args[k + 1], &args[k]) != 0) {
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
        if (keep[k] < n->nargs) rc = lsx_emit_arg_value(E, n, &n->args[keep[k]], &args[na++]);
        else rc = lsx_emit_fail(E, n, "argument '%s' is missing", s->params[keep[k]].name);
    }
    if (rc == 0 && out_form) {
        uint32_t first_out = na;
        for (uint32_t k = 0; k < nextra && rc == 0; k++) rc = lsx_emit_arg_value(E, n, &n->args[s->nparams + k], &args[na++]);
        /* the return value (exir's _emit_operator): the out argument again, or for several one
         * TensorList of them */
        if (rc == 0 && nextra == 1) {
            args[na++] = args[first_out];
        } else if (rc == 0) {
            int32_t *items = ls_malloc(sizeof *items * nextra);
            memcpy(items, args + first_out, sizeof *items * nextra);
            ls_pte_value lv = {.kind = LS_PTE_VAL_TENSOR_LIST};
            lv.tensor_list = (ls_pte_i32s){items, nextra, true};
            args[na++] = lsx_emit_push_value(E, lv);
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
            rc = lsx_emit_tensor_value(E, n, ls_node_tval(n), n->id, 0, NULL, &ret);
        } else if (n->val_kind == LS_VAL_TENSORS) {
            int32_t *vals;
            uint32_t nv;
            rc = tuple_values(E, n, pos, &vals, &nv);
            if (rc == 0) {
                ls_pte_value lv = {.kind = LS_PTE_VAL_TENSOR_LIST};
                lv.tensor_list = (ls_pte_i32s){vals, nv, true};
                ret = lsx_emit_push_value(E, lv);
            }
        } else if (n->val_kind == LS_VAL_SYMINT) {
            ret = lsx_emit_int_value(E, 0);
        } else {
            ret = lsx_emit_push_value(E, (ls_pte_value){.kind = LS_PTE_VAL_NULL});
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

/* memory.view, as exir's _emit_view (exir/emit/_emitter.py): every view, static or not, is
 * executorch_prim::et_view.default(self, size, out), out the view's own spec: at its base's place
 * when the base is planned (its _ViewSpec shares the base's mem_id and offset), the base's bytes
 * when the base is a constant (the same storage, so the same data_buffer_idx). ExecuTorch's
 * exir/tests/test_remove_view_copy.py (test_spec) expects an et_view instruction for each of
 * its static views, of a parameter, an input and an intermediate. */
static int view(emitter *E, const ls_node *n)
{
    const ls_tmeta *m = ls_node_tval(n);
    if (!m || n->nargs < 2 || n->args[0].kind != LS_ARG_NODE) return lsx_emit_fail(E, n, "a memory.view without its base or sizes");
    int32_t bv;
    if (lsx_emit_node_value(E, n, n->args[0].v.node, &bv) != 0) return -1;
    const ls_pte_value *b = &E->values.v[bv];
    bool constant = b->kind == LS_PTE_VAL_TENSOR && b->tensor.data_buffer_idx > 0 && !b->tensor.has_allocation_info;
    uint32_t dbi = constant ? b->tensor.data_buffer_idx : 0;
    int32_t *args = ls_malloc(sizeof *args * 3);
    args[0] = bv;
    if (lsx_emit_arg_value(E, n, &n->args[1], &args[1]) != 0 || lsx_emit_tensor_value(E, n, m, n->id, dbi, NULL, &args[2]) != 0) {
        free(args);
        return -1;
    }
    E->val_of[n->id] = args[2];
    push_instr(E, LS_PTE_KERNEL_CALL, op_index(E, "executorch_prim::et_view", "default"), args, 3);
    return 0;
}

int lsx_emit_call(emitter *E, const ls_node *n, uint32_t pos)
{
    if (!n->op)
        return lsx_emit_fail(E, n, "operator %s is unknown to lowerscope: it cannot be emitted", n->target ? n->target : "?");
    E->cur_node = n->id;
    switch ((int)n->op->id) {
    case LS_OP_alloc:
        if (!ls_node_tval(n)) return lsx_emit_fail(E, n, "an alloc without tensor metadata");
        return lsx_emit_tensor_value(E, n, ls_node_tval(n), n->id, 0, NULL, &E->val_of[n->id]);
    case LS_OP_getitem:
        if (E->val_of[n->id] < 0) {
            const ls_node *of = n->nargs ? ls_program_node(E->p, n->args[0].v.node) : NULL;
            return lsx_emit_fail(E, n, "getitem of `%s`, which makes no tuple the emitter knows", of ? of->name : "?");
        }
        return 0;
    case LS_OP_call_delegate: return delegate_call(E, n, pos);
    case LS_OP_memory_view: return view(E, n);
    default: return kernel_call(E, n, pos);
    }
}

/* Every argument of the output node is a method output, as exir's _TopLevelEmitter.output
 * emits them (exir/emit/_emitter.py): the buffer write-backs that
 * insert_write_back_for_buffers_pass's _insert_copy put first (the buffer's value, which the
 * copy_ returns), then the user outputs. The pytree string (container_meta_type) comes from
 * call_spec.out_spec, which counts the user outputs only. */
int lsx_emit_output(emitter *E, const ls_node *n)
{
    for (uint16_t k = 0; k < n->nargs; k++) {
        uint8_t kind = k < E->p->n_outputs ? E->p->outputs[k].kind : LS_OUT_USER_OUTPUT;
        int32_t v;
        if (lsx_emit_arg_value(E, n, &n->args[k], &v) != 0) return -1;
        ls_vec_push(&E->outputs, v);
        if (kind == LS_OUT_USER_OUTPUT || kind == LS_OUT_LOSS_OUTPUT) E->user_outputs++;
    }
    return 0;
}
