/* XnnpackBackend's preprocess: a lowered submodule (Edge dialect) to an XNNGraph blob, as
 * backends/xnnpack/xnnpack_preprocess.py makes it, with what its passes change in what is
 * serialized:
 *  - external ids: the user inputs in order, then the outputs (generate_node_to_external_map);
 *  - channels last (_passes/channels_last_tagged_reshape_pass.py): a convolution or mean.dim
 *    over H, W takes and gives NHWC; an elementwise node, cat, permute_copy and slice_copy are
 *    NHWC when all their inputs are, or when some are and all are 4-d (the others transposed),
 *    else NCHW, the last three with their axes remapped (op_cat.py, op_permute.py,
 *    op_slice_copy.py); outputs are NCHW; each layout change is an XNNStaticTranspose
 *    ([0, 2, 3, 1] to NHWC, [0, 3, 1, 2] back, debug handle 65535), made once per value (the
 *    pass's PARTNER_NODE). Other nodes take NCHW (view_copy, constant_pad_nd, whose visitors'
 *    handling of NHWC was not read: transposed back, the same numbers; softmax on purpose, see
 *    xnn_write_ops.c);
 *  - activations fused into the node before them (_passes/fuse_activation_pass.py: relu gives
 *    output_min_max [0, +inf], hardtanh [min, max], into a convolution, linear, add, sub or mul
 *    whose only user they are);
 *  - addmm and mm with a constant weight become fully connected nodes (convert_to_linear.py);
 *    a Python scalar operand becomes a constant [1] tensor (lift_constant_scalar_operands_pass.py);
 *    cat of more than five tensors a chain of concatenations (decompose_cat.py);
 *  - constants: each weight's bytes go into the named data keyed by their SHA-256 (what the
 *    real files' keys are), its constant_data entry {UINT64_MAX, size, key}; entry 0 reserved.
 * Then the blob (xnn_encode.c). A node it cannot write fails the preprocess naming it. */
#include <math.h>
#include <pthread.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/mman.h>

#include "sha256.h"
#include "xnn_write.h"

static int vfail(lsw *W, const ls_node *n, bool needs, const char *fmt, va_list ap)
{
    char msg[LS_ERR_MAX / 2];
    vsnprintf(msg, sizeof msg, fmt, ap);
    const char *what = n ? (n->op ? n->op->qualname : n->target ? n->target : n->name) : "";
    if (needs)
        return n ? ls_fail_needs(W->err, "node `%s` (%s): %s", n->name, what, msg) : ls_fail_needs(W->err, "%s", msg);
    return n ? ls_fail(W->err, "node `%s` (%s): %s", n->name, what, msg) : ls_fail(W->err, "%s", msg);
}

int lsw_fail(lsw *W, const ls_node *n, const char *fmt, ...)
{
    va_list ap;
    va_start(ap, fmt);
    vfail(W, n, false, fmt, ap);
    va_end(ap);
    return -1;
}

int lsw_needs(lsw *W, const ls_node *n, const char *fmt, ...)
{
    va_list ap;
    va_start(ap, fmt);
    vfail(W, n, true, fmt, ap);
    va_end(ap);
    return -1;
}

const ls_node *lsw_nd(lsw *W, uint32_t id) { return ls_program_node(W->p, id); }

uint8_t lsw_datatype(const ls_tmeta *m)
{
    if (!m) return 0;
    return m->dtype == LS_DT_F32 ? LS_XNN_DT_FP32 : m->dtype == LS_DT_F16 ? LS_XNN_DT_FP16 : 0;
}

uint32_t lsw_value(lsw *W, uint8_t datatype, int ndim, const int64_t *dims)
{
    ls_xnn_value v = {.id = W->values.n, .datatype = datatype, .external_id = LS_XNN_INVALID_ID};
    /* a 0-d tensor is serialized as [1] (node_visitor.py's define_tensor) */
    v.ndim = ndim ? (uint8_t)ndim : 1;
    v.dims[0] = 1;
    for (int i = 0; i < ndim && i < LS_XNN_MAX_DIMS; i++) v.dims[i] = (uint32_t)(dims[i] < 0 ? 0 : dims[i]);
    ls_vec_push(&W->values, v);
    return v.id;
}

uint32_t lsw_constant(lsw *W, const ls_tensor *t)
{
    char key[65];
    ls_sha256_hex(t->data, t->nbytes, key);
    ls_blob *b = ls_blob_new(t->nbytes);
    if (t->nbytes) memcpy(b->data, t->data, t->nbytes);
    ls_error e2;
    if (ls_named_data_put(W->named, key, b, 0, &e2) != 0) { /* the same key is the same bytes */
        ls_blob_unref(b);
        ls_fail(W->err, "%s", e2.msg);
        return UINT32_MAX;
    }
    ls_blob_unref(b);
    const char *k = ls_intern(key);
    ls_tmeta m;
    ls_tensor_meta(t, &m);
    uint32_t known;
    if (ls_ptrmap_get_u32(&W->const_of, k, &known)) { /* the same bytes again: the same value, if the same shape */
        const ls_xnn_value *v = &W->values.v[known - 1];
        bool same = v->ndim == (t->ndim ? t->ndim : 1) && v->datatype == lsw_datatype(&m);
        for (int i = 0; same && i < t->ndim; i++) same = v->dims[i] == (uint32_t)t->sizes[i];
        if (same) return known - 1;
    }
    ls_xnn_constant c = {.offset = UINT64_MAX, .size = t->nbytes, .named_key = k};
    ls_vec_push(&W->consts, c);
    uint32_t id = lsw_value(W, lsw_datatype(&m), t->ndim, t->sizes);
    W->values.v[id].constant_idx = W->consts.n - 1;
    ls_ptrmap_put(&W->const_of, k, id + 1);
    return id;
}

ls_xnn_node *lsw_node(lsw *W, uint8_t type, const ls_node *from)
{
    ls_xnn_node n = {.type = type, .debug_handle = from && from->debug_handle > 0 ? (uint32_t)from->debug_handle
                                                                                  : LS_XNN_DEFAULT_DEBUG_HANDLE,
                     .out_min = -INFINITY, .out_max = INFINITY};
    ls_vec_push(&W->nodes, n);
    return &W->nodes.v[W->nodes.n - 1];
}

ls_tensor *lsw_data(lsw *W, uint32_t id)
{
    const ls_node *n = lsw_nd(W, id);
    if (!n || n->kind != LS_NODE_PLACEHOLDER) return NULL;
    const ls_input_spec *s = ls_sig_spec(&W->sig, W->p, n);
    if (!s || !ls_input_kind_holds_data(s->kind)) return NULL;
    ls_named_tensor *d = ls_sig_data(&W->sig, W->p, s);
    return d ? d->t : NULL;
}

void lsw_set(lsw *W, const ls_node *n, uint32_t v, int lay)
{
    int32_t pos = ls_program_pos(W->p, n->id);
    W->val[lay][pos] = v + 1;
    W->native[pos] = (uint8_t)lay;
}

static int emit(lsw *W, uint32_t pos);

int lsw_native(lsw *W, uint32_t id)
{
    int32_t pos = ls_program_pos(W->p, id);
    if (pos < 0) return ls_fail(W->err, "value %%%u is not in the submodule", id);
    if (W->alias[pos] >= 0) pos = W->alias[pos];
    if (emit(W, (uint32_t)pos) != 0) return -1;
    return W->native[pos];
}

uint32_t lsw_get(lsw *W, uint32_t id, int lay)
{
    int32_t pos = ls_program_pos(W->p, id);
    if (pos < 0) {
        ls_fail(W->err, "value %%%u is not in the submodule", id);
        return LSW_NONE;
    }
    if (W->alias[pos] >= 0) pos = W->alias[pos];
    if (emit(W, (uint32_t)pos) != 0) return LSW_NONE;
    if (W->val[lay][pos]) return W->val[lay][pos] - 1;
    /* the other layout: one transpose, remembered */
    uint32_t src = W->val[!lay][pos] - 1;
    const ls_xnn_value *sv = &W->values.v[src];
    if (sv->ndim != 4) {
        lsw_fail(W, W->p->nodes[pos], "a %u-d value cannot change to %s", sv->ndim, lay == LSW_NHWC ? "NHWC" : "NCHW");
        return LSW_NONE;
    }
    static const uint32_t to_nhwc[4] = {0, 2, 3, 1}, to_nchw[4] = {0, 3, 1, 2};
    const uint32_t *perm = lay == LSW_NHWC ? to_nhwc : to_nchw;
    int64_t dims[4];
    for (int i = 0; i < 4; i++) dims[i] = sv->dims[perm[i]];
    if (sv->quant != LS_XNN_Q_NONE && sv->quant != LS_XNN_Q_PER_TENSOR) {
        lsw_fail(W, W->p->nodes[pos], "a per-channel quantized value cannot change to %s", lay == LSW_NHWC ? "NHWC" : "NCHW");
        return LSW_NONE;
    }
    uint32_t v = lsw_value(W, sv->datatype, 4, dims);
    /* a quantized value keeps its scale and zero point (xnn_define_static_transpose checks that
     * the output's match the input's) */
    ls_xnn_value *tv = &W->values.v[v];
    sv = &W->values.v[src];
    tv->quant = sv->quant, tv->scale = sv->scale, tv->zero_point = sv->zero_point;
    ls_xnn_node *t = lsw_node(W, LS_XNN_StaticTranspose, NULL);
    t->n_in = t->n_out = 1;
    t->in[0] = src;
    t->out[0] = v;
    t->p.dims.n = 4;
    memcpy(t->p.dims.v, perm, sizeof to_nhwc);
    W->val[lay][pos] = v + 1;
    return v;
}

static int emit(lsw *W, uint32_t pos)
{
    if (W->state[pos] == 2) return 0;
    if (W->state[pos] == 1) return lsw_fail(W, W->p->nodes[pos], "the graph has a cycle");
    W->state[pos] = 1;
    const ls_node *n = W->p->nodes[pos];
    int rc = 0;
    if (n->kind == LS_NODE_PLACEHOLDER) {
        ls_tensor *t = lsw_data(W, n->id);
        if (!t) rc = lsw_fail(W, n, "an input of the submodule that is neither a user input nor data");
        else if (!lsw_datatype(ls_node_tval(n)))
            rc = lsw_needs(W, n, "%s constants are not written (float32, float16)", ls_dtype_name(t->dtype));
        else {
            uint32_t v = lsw_constant(W, t);
            if (v == UINT32_MAX) rc = -1;
            else lsw_set(W, n, v, LSW_NCHW);
        }
    } else if (n->kind == LS_NODE_CALL) {
        rc = lsw_emit_call(W, pos);
    } else {
        rc = lsw_fail(W, n, "not a value");
    }
    W->state[pos] = rc == 0 ? 2 : 0;
    return rc;
}

/* FuseActivationPass: relu / hardtanh whose input is a fuseable op used by them alone. */
static void plan_fusion(lsw *W)
{
    const ls_program *p = W->p;
    for (uint32_t i = 0; i < p->n_nodes; i++) {
        const ls_node *n = p->nodes[i];
        if (n->kind != LS_NODE_CALL || !n->op || !n->nargs || n->args[0].kind != LS_ARG_NODE) continue;
        bool relu = n->op->id == LS_OP_relu, ht = n->op->id == LS_OP_hardtanh;
        if (!relu && !ht) continue;
        int32_t src = ls_program_pos(p, n->args[0].v.node);
        if (src < 0) continue;
        const ls_node *s = p->nodes[src];
        if (s->kind != LS_NODE_CALL || !s->op || W->fused[src]) continue;
        ls_op_id id = s->op->id;
        if (id != LS_OP_convolution && id != LS_OP_add_Tensor && id != LS_OP_sub_Tensor && id != LS_OP_mul_Tensor &&
            id != LS_OP_linear && id != LS_OP_addmm && id != LS_OP_mm)
            continue;
        uint32_t nu;
        ls_program_users(p, (uint32_t)src, &nu);
        if (nu != 1) continue;
        float lo = 0, hi = INFINITY;
        if (ht) {
            const ls_arg *a = ls_node_arg(n, "min_val"), *b = ls_node_arg(n, "max_val");
            lo = a && a->kind == LS_ARG_FLOAT ? (float)a->v.f : a && a->kind == LS_ARG_INT ? (float)a->v.i : -1;
            hi = b && b->kind == LS_ARG_FLOAT ? (float)b->v.f : b && b->kind == LS_ARG_INT ? (float)b->v.i : 1;
        }
        W->fused[src] = true;
        W->fuse_min[src] = lo;
        W->fuse_max[src] = hi;
        W->alias[i] = src;
    }
}

static int preprocess_here(const ls_program *sub, ls_blob **processed, ls_compile_spec **specs, uint32_t *nspecs,
                           ls_named_data *named_out, ls_error *err)
{
    *processed = NULL;
    if (specs) *specs = NULL;
    if (nspecs) *nspecs = 0;
    const char *name = sub->name ? sub->name : "submodule";
    lsw W = {.p = sub, .err = err, .named = named_out ? ls_named_data_ref(named_out) : ls_named_data_new()};
    ls_sig_build(&W.sig, sub);
    uint32_t n = sub->n_nodes ? sub->n_nodes : 1;
    W.val[0] = ls_calloc(n, sizeof *W.val[0]);
    W.val[1] = ls_calloc(n, sizeof *W.val[1]);
    W.native = ls_calloc(n, 1);
    W.state = ls_calloc(n, 1);
    W.alias = ls_malloc(sizeof *W.alias * n);
    W.fuse_min = ls_calloc(n, sizeof *W.fuse_min);
    W.fuse_max = ls_calloc(n, sizeof *W.fuse_max);
    W.fused = ls_calloc(n, sizeof *W.fused);
    W.out_q = ls_malloc(sizeof *W.out_q * n);
    W.fval[0] = ls_calloc(n, sizeof *W.fval[0]);
    W.fval[1] = ls_calloc(n, sizeof *W.fval[1]);
    for (uint32_t i = 0; i < n; i++) W.alias[i] = -1;
    ls_vec_push(&W.consts, ((ls_xnn_constant){0})); /* entry 0: "not a constant" */
    plan_fusion(&W);
    lsw_plan_quant(&W);
    int rc = 0;
    /* the user inputs, in signature order: external ids 0.. */
    const ls_node **ins = ls_malloc(sizeof *ins * n);
    W.n_in = ls_program_user_inputs(sub, ins, n);
    for (uint32_t k = 0; k < W.n_in && rc == 0; k++) {
        const ls_tmeta *m = ls_node_tval(ins[k]);
        uint8_t dt = lsw_datatype(m);
        float qs = 0;
        int32_t qz = 0;
        if (m && m->dtype == LS_DT_I8) { /* an int8 input: the parameters of the dequantize reading it */
            int32_t ip = ls_program_pos(sub, ins[k]->id);
            uint32_t nu;
            const uint32_t *us = ls_program_users(sub, (uint32_t)ip, &nu);
            for (uint32_t u = 0; u < nu && !dt; u++)
                if (lsw_qparams(sub->nodes[us[u]], &qs, &qz) && sub->nodes[us[u]]->op->id == LS_OP_dequantize_per_tensor)
                    dt = LS_XNN_DT_QINT8;
        }
        if (!dt) {
            rc = lsw_needs(&W, ins[k], "a %s input: XNNPACK values here are float32 or float16",
                           m ? ls_dtype_name(m->dtype) : "non-tensor");
            break;
        }
        uint32_t v = lsw_value(&W, dt, m->ndim, m->sizes);
        if (dt == LS_XNN_DT_QINT8) W.values.v[v].quant = LS_XNN_Q_PER_TENSOR, W.values.v[v].scale = qs, W.values.v[v].zero_point = qz;
        W.values.v[v].flags = LS_XNN_FLAG_EXTERNAL_INPUT;
        W.values.v[v].external_id = k;
        lsw_set(&W, ins[k], v, LSW_NCHW);
        W.state[ls_program_pos(sub, ins[k]->id)] = 2;
    }
    free(ins);
    /* the outputs, in order: external ids after the inputs, NCHW */
    const ls_node *out = ls_program_output(sub);
    uint32_t n_out = out ? out->nargs : 0;
    for (uint32_t k = 0; k < sub->n_outputs && rc == 0; k++)
        if (sub->outputs[k].kind != LS_OUT_USER_OUTPUT)
            rc = lsw_needs(&W, NULL, "%s: output %u is a %s: XNNPACK keeps no state", name, k,
                           ls_output_kind_name(sub->outputs[k].kind));
    for (uint32_t k = 0; k < n_out && rc == 0; k++) {
        if (out->args[k].kind != LS_ARG_NODE) {
            rc = lsw_needs(&W, out, "output %u is not a tensor", k);
            break;
        }
        /* a float output read from a quantized value (a dequantize the partitioner took on its own,
         * DeQuantizedPerTensorConfig) is an XNNConvert back to fp32; an int8 one stays quantized */
        const ls_node *on = lsw_nd(&W, out->args[k].v.node);
        const ls_tmeta *om = on ? ls_node_tval(on) : NULL;
        uint32_t v = om && ls_dtype_is_float(om->dtype) ? lsw_get_f(&W, out->args[k].v.node, LSW_NCHW)
                                                        : lsw_get(&W, out->args[k].v.node, LSW_NCHW);
        if (v == LSW_NONE) {
            rc = -1;
            break;
        }
        ls_xnn_value *xv = &W.values.v[v];
        if (xv->flags || xv->constant_idx) { /* an input, a constant or an output already: a copy of it */
            uint32_t c = lsw_value(&W, xv->datatype, xv->ndim, (const int64_t[]){xv->dims[0], xv->dims[1], xv->dims[2],
                                                                                   xv->dims[3], xv->dims[4], xv->dims[5]});
            ls_xnn_node *r = lsw_node(&W, LS_XNN_StaticReshape, NULL);
            r->n_in = r->n_out = 1;
            r->in[0] = v;
            r->out[0] = c;
            r->p.dims.n = W.values.v[c].ndim;
            memcpy(r->p.dims.v, W.values.v[c].dims, sizeof r->p.dims.v);
            v = c;
            xv = &W.values.v[v];
        }
        xv->flags = LS_XNN_FLAG_EXTERNAL_OUTPUT;
        xv->external_id = W.n_in + k;
    }
    if (rc == 0 && !n_out) rc = lsw_fail(&W, NULL, "%s has no outputs", name);
    if (rc == 0) {
        ls_xnn_graph g = {.version = ls_intern("0"), .values = W.values.v, .n_values = W.values.n, .nodes = W.nodes.v,
                          .n_nodes = W.nodes.n, .num_externs = W.n_in + n_out, .constants = W.consts.v,
                          .n_constants = W.consts.n};
        LS_VEC(uint32_t) gi = {0}, go = {0};
        for (uint32_t i = 0; i < W.values.n; i++) {
            if (W.values.v[i].flags & LS_XNN_FLAG_EXTERNAL_INPUT) ls_vec_push(&gi, i);
            if (W.values.v[i].flags & LS_XNN_FLAG_EXTERNAL_OUTPUT) ls_vec_push(&go, i);
        }
        g.input_ids = gi.v, g.n_input_ids = gi.n, g.output_ids = go.v, g.n_output_ids = go.n;
        rc = ls_xnn_encode(&g, NULL, 0, processed, err);
        free(gi.v);
        free(go.v);
    }
    if (rc != 0 && err) ls_fail_prefix(err, "XnnpackBackend: preprocess `%s`", name);
    for (uint32_t i = 0; i < W.values.n; i++) free(W.values.v[i].scales);
    free(W.values.v);
    free(W.out_q);
    free(W.fval[0]);
    free(W.fval[1]);
    free(W.nodes.v);
    free(W.consts.v);
    free(W.val[0]);
    free(W.val[1]);
    free(W.native);
    free(W.state);
    free(W.alias);
    free(W.fuse_min);
    free(W.fuse_max);
    free(W.fused);
    ls_sig_free(&W.sig);
    ls_ptrmap_free(&W.const_of);
    ls_named_data_unref(W.named);
    return rc;
}

/* ---- the stack the writer needs
 *
 * A value is written on demand, its inputs first (emit -> lsw_emit_call -> lsw_get -> emit), so
 * the recursion goes as deep as the submodule's longest chain of nodes: a partition of 75k
 * nodes in a chain (the benches' 100k program lowered for XNNPACK) overflowed a thread's 8 MiB
 * and crashed. A level takes under 1.5 KiB (gcc -fstack-usage: lsw_emit_call 528 B, lsw_get_f
 * 208, lsw_constant 1344 at a leaf); each nested emit is another node (a cycle is refused), so
 * a big submodule is written on a thread whose stack holds one level per node, reserved and
 * not committed: the kernel maps only the pages the recursion reaches. */
#if defined(__SANITIZE_ADDRESS__)
#define STACK_PER_NODE ((size_t)32 << 10) /* ASan's redzones around every frame's locals */
#else
#define STACK_PER_NODE ((size_t)4 << 10)
#endif
#define STACK_SPARE ((size_t)1 << 20)
#define INLINE_NODES 1000 /* this many levels fit in any thread's stack */

typedef struct preprocess_job {
    const ls_program *sub;
    ls_blob **processed;
    ls_compile_spec **specs;
    uint32_t *nspecs;
    ls_named_data *named_out;
    ls_error *err;
    int rc;
} preprocess_job;

static void *preprocess_main(void *arg)
{
    preprocess_job *j = arg;
    j->rc = preprocess_here(j->sub, j->processed, j->specs, j->nspecs, j->named_out, j->err);
    return NULL;
}

int lsx_preprocess(const ls_program *sub, ls_blob **processed, ls_compile_spec **specs, uint32_t *nspecs,
                   ls_named_data *named_out, ls_error *err)
{
    if (sub->n_nodes <= INLINE_NODES) return preprocess_here(sub, processed, specs, nspecs, named_out, err);
    size_t page = 4096, size = ((size_t)sub->n_nodes * STACK_PER_NODE + STACK_SPARE + page - 1) & ~(page - 1);
    /* NORESERVE: the reservation is not charged until touched; the lowest page stays unmapped
     * (PROT_NONE), so running past the end faults rather than writing over the heap */
    void *stack = mmap(NULL, size, PROT_READ | PROT_WRITE, MAP_PRIVATE | MAP_ANONYMOUS | MAP_NORESERVE | MAP_STACK, -1, 0);
    preprocess_job j = {sub, processed, specs, nspecs, named_out, err, -1};
    pthread_attr_t attr;
    bool started = false;
    pthread_t th;
    if (stack != MAP_FAILED && mprotect(stack, page, PROT_NONE) == 0 && pthread_attr_init(&attr) == 0) {
        started = pthread_attr_setstack(&attr, stack, size) == 0 && pthread_create(&th, &attr, preprocess_main, &j) == 0;
        pthread_attr_destroy(&attr);
    }
    if (started) pthread_join(th, NULL);
    if (stack != MAP_FAILED) munmap(stack, size);
    if (!started) {
        *processed = NULL;
        if (specs) *specs = NULL;
        if (nspecs) *nspecs = 0;
        return ls_fail(err, "XnnpackBackend: preprocess `%s`: cannot start a writer with %zu MiB of stack for its %u nodes",
                       sub->name ? sub->name : "submodule", size >> 20, sub->n_nodes);
    }
    return j.rc;
}
