/* to_edge: the ATen program becomes an Edge program, as exir.to_edge does: every ATen target
 * becomes its Edge spelling, view-like ops become their _copy forms (view → view_copy,
 * permute → permute_copy, reshape → view_copy, ...), a small decomposition table replaces
 * the composite ops the Edge dialect does not keep, and call nodes are renamed from their op
 * (aten_add_tensor, aten_add_tensor_1, ...) as re-tracing names them.
 *
 * Decompositions (docs/cli.md lists them too):
 *   linear(x, w, b)     → permute_copy(w, [1, 0]) + addmm(b, x, wᵀ)   (mm without bias;
 *                          x of rank > 2 is flattened with view_copy before and after)
 *   matmul(a, b)        → mm (2-D × 2-D) or bmm (3-D × 3-D, same batch)
 *   softmax.int         → _softmax(x, dim, False); log_softmax.int → _log_softmax
 *   layer_norm          → native_layer_norm + getitem 0
 *   chunk(x, c, dim)    → split_copy.Tensor(x, ceil(size / c), dim); an empty dimension gives
 *                          split_with_sizes_copy(x, [0] * c, dim), as ATen's chunk keeps c pieces
 *   conv2d(x, w, b, ...) → convolution(x, w, b, stride, padding, dilation, False, [0, 0], groups)
 *   silu(x)             → mul(x, sigmoid(x))
 *   arange.start(a, b)  → arange.start_step(a, b, 1)
 * A Python scalar given for a Tensor parameter becomes a lifted tensor constant
 * (ScalarToTensorPass, scalar_to_tensor.c).
 * The last node of a decomposition keeps the original node's id, so its readers are unchanged.
 * Composites outside the table (or with dynamic shapes) are kept and reported.
 *
 * A composite a backend of the pipeline takes whole is not decomposed, as
 * to_edge_transform_and_lower asks each partitioner's ops_to_not_decompose: the profile keeps
 * the op ("keep": XNNPACK's linear, from LinearConfig.get_original_aten) or everything it takes
 * ("keep": "supported": Core ML, MLX), and the node passes that profile's check (XNNPACK's
 * filter_fn is the config's check_constraints: a linear whose weight is computed decomposes). */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "build.h"
#include "pass_util.h"
#include "passes.h"
#include "rules.h"

typedef LS_VEC(ls_node *) node_vec;

typedef struct edge {
    ls_program *q;
    ls_namer *names;
    node_vec out;
    uint32_t decomposed, kept;
} edge;

static const ls_tmeta *val_of(const edge *E, const ls_arg *a)
{
    return a && a->kind == LS_ARG_NODE ? ls_node_tval(ls_program_node(E->q, a->v.node)) : NULL;
}

static bool static_shape(const ls_tmeta *m)
{
    return m && !ls_tmeta_is_dynamic(m);
}

/* A new Edge call named from its op; args positional, consumed. NULL when the op refuses the
 * arguments: the decomposition then gives up and the node is kept as it is. */
static ls_node *emit(edge *E, ls_op_id id, ls_arg *args, uint16_t nargs, const ls_tmeta *val)
{
    const ls_op *op = ls_op_get(id);
    ls_error err;
    ls_node *n = ls_node_new_call(E->q, ls_namer_take_interned(E->names, ls_op_node_base(op, LS_DIALECT_EDGE)), op, LS_DIALECT_EDGE,
                                  args, nargs, val, &err);
    if (n) ls_vec_push(&E->out, n);
    return n;
}

static ls_arg *args_of(uint16_t n)
{
    return ls_calloc(n ? n : 1, sizeof(ls_arg));
}

static ls_arg copy_arg(const ls_arg *a)
{
    ls_arg c;
    ls_arg_copy(&c, a);
    c.flags = 0;
    return c;
}

/* The last node of a decomposition stands for the original: same id and metadata. */
static void take_place(ls_node *n, const ls_node *orig)
{
    n->id = orig->id;
    n->text = orig->text;
    n->debug_handle = orig->debug_handle;
}

static bool decompose_linear(edge *E, const ls_node *n)
{
    const ls_tmeta *x = val_of(E, &n->args[0]), *w = val_of(E, &n->args[1]), *y = ls_node_tval(n);
    bool bias = n->nargs > 2 && n->args[2].kind == LS_ARG_NODE;
    if (!static_shape(x) || !static_shape(w) || !y || w->ndim != 2 || x->ndim < 2) return false;
    int64_t in = w->sizes[1], outf = w->sizes[0];
    int64_t lead = 1;
    for (int d = 0; d < x->ndim - 1; d++) lead *= x->sizes[d];
    int64_t wt_sizes[2] = {in, outf};
    ls_tmeta wt = ls_meta(w->dtype, 2, wt_sizes);
    ls_arg *pa = args_of(2);
    pa[0] = copy_arg(&n->args[1]);
    int64_t perm[2] = {1, 0};
    pa[1] = ls_arg_ints(perm, 2);
    ls_node *wT = emit(E, LS_OP_permute_copy, pa, 2, &wt);
    if (!wT) return false;
    uint32_t x2 = n->args[0].v.node;
    if (x->ndim > 2) {
        int64_t s2[2] = {lead, in};
        ls_tmeta m2 = ls_meta(x->dtype, 2, s2);
        ls_arg *va = args_of(2);
        va[0] = copy_arg(&n->args[0]);
        va[1] = ls_arg_ints(s2, 2);
        ls_node *v = emit(E, LS_OP_view_copy, va, 2, &m2);
        if (!v) return false;
        x2 = v->id;
    }
    int64_t ys[2] = {lead, outf};
    ls_tmeta y2 = ls_meta(y->dtype, 2, ys);
    ls_node *mm;
    if (bias) {
        ls_arg *aa = args_of(3);
        aa[0] = copy_arg(&n->args[2]);
        aa[1] = ls_arg_node(x2);
        aa[2] = ls_arg_node(wT->id);
        mm = emit(E, LS_OP_addmm, aa, 3, &y2);
    } else {
        ls_arg *ma = args_of(2);
        ma[0] = ls_arg_node(x2);
        ma[1] = ls_arg_node(wT->id);
        mm = emit(E, LS_OP_mm, ma, 2, &y2);
    }
    if (!mm) return false;
    ls_node *last = mm;
    if (x->ndim > 2) {
        ls_arg *va = args_of(2);
        va[0] = ls_arg_node(mm->id);
        va[1] = ls_arg_ints(y->sizes, y->ndim);
        last = emit(E, LS_OP_view_copy, va, 2, y);
        if (!last) return false;
    }
    take_place(last, n);
    return true;
}

static bool decompose_matmul(edge *E, const ls_node *n)
{
    const ls_tmeta *a = val_of(E, &n->args[0]), *b = val_of(E, &n->args[1]);
    if (!a || !b) return false;
    ls_op_id id;
    if (a->ndim == 2 && b->ndim == 2) id = LS_OP_mm;
    else if (a->ndim == 3 && b->ndim == 3 && a->sizes[0] == b->sizes[0] && !a->sym[0] && !b->sym[0]) id = LS_OP_bmm;
    else return false;
    ls_arg *ma = args_of(2);
    ma[0] = copy_arg(&n->args[0]);
    ma[1] = copy_arg(&n->args[1]);
    ls_node *m = emit(E, id, ma, 2, ls_node_tval(n));
    if (!m) return false;
    take_place(m, n);
    return true;
}

static bool decompose_softmax(edge *E, const ls_node *n, ls_op_id to)
{
    if (n->nargs > 2 && n->args[2].kind != LS_ARG_NONE) return false; /* a dtype: keep */
    ls_arg *sa = args_of(3);
    sa[0] = copy_arg(&n->args[0]);
    sa[1] = copy_arg(&n->args[1]);
    sa[2] = ls_arg_bool(false);
    ls_node *m = emit(E, to, sa, 3, ls_node_tval(n));
    if (!m) return false;
    take_place(m, n);
    return true;
}

/* conv2d(x, w, b, stride, padding, dilation, groups) → convolution(x, w, b, stride, padding,
 * dilation, False, [0, 0], groups), as torch's conv2d decomposition writes it (a one-value list
 * stands for both spatial dims). */
static bool decompose_conv2d(edge *E, const ls_node *n)
{
    ls_arg *ca = args_of(9);
    for (int k = 0; k < 3; k++) ca[k] = copy_arg(&n->args[k]);
    for (int k = 3; k < 6; k++) {
        const ls_arg *a = &n->args[k];
        if (a->kind == LS_ARG_INTS && a->n == 1) {
            int64_t two[2] = {a->v.ints[0], a->v.ints[0]};
            ca[k] = ls_arg_ints(two, 2);
        } else if (a->kind == LS_ARG_INT) {
            int64_t two[2] = {a->v.i, a->v.i};
            ca[k] = ls_arg_ints(two, 2);
        } else {
            ca[k] = copy_arg(a);
        }
    }
    ca[6] = ls_arg_bool(false);
    int64_t zeros[2] = {0, 0};
    ca[7] = ls_arg_ints(zeros, 2);
    ca[8] = copy_arg(&n->args[6]);
    ls_node *c = emit(E, LS_OP_convolution, ca, 9, ls_node_tval(n));
    if (!c) return false;
    take_place(c, n);
    return true;
}

static bool decompose_layer_norm(edge *E, const ls_node *n)
{
    const ls_tmeta *x = val_of(E, &n->args[0]), *y = ls_node_tval(n);
    if (!x || !y || n->args[1].kind != LS_ARG_INTS) return false;
    uint32_t k = n->args[1].n;
    if (k > x->ndim) return false;
    ls_tmeta vals[3];
    vals[0] = *y;
    ls_tmeta stat = *x;
    for (uint32_t d = x->ndim - k; d < x->ndim; d++) {
        stat.sizes[d] = 1;
        stat.sym[d] = NULL;
    }
    vals[1] = vals[2] = stat;
    ls_arg *la = args_of(5);
    for (int i = 0; i < 5; i++) la[i] = i < n->nargs ? copy_arg(&n->args[i]) : ls_arg_none();
    ls_node *nl = emit(E, LS_OP_native_layer_norm, la, 5, NULL);
    if (!nl) return false;
    ls_node_set_vals(nl, LS_VAL_TENSORS, vals, 3);
    ls_node *g = ls_node_new_getitem(E->q, ls_namer_take_interned(E->names, ls_intern("getitem")), nl->id, 0);
    ls_node_set_val(g, y);
    ls_vec_push(&E->out, g);
    take_place(g, n);
    return true;
}

static bool decompose_chunk(edge *E, const ls_node *n)
{
    const ls_tmeta *x = val_of(E, &n->args[0]);
    if (!x || n->args[1].kind != LS_ARG_INT || n->args[2].kind != LS_ARG_INT) return false;
    int64_t dim = n->args[2].v.i < 0 ? n->args[2].v.i + x->ndim : n->args[2].v.i;
    int64_t chunks = n->args[1].v.i;
    if (dim < 0 || dim >= x->ndim || x->sym[dim] || chunks <= 0) return false;
    if (x->sizes[dim] == 0 && chunks > LS_SPLIT_MAX_PIECES) return false;
    int64_t size = (x->sizes[dim] + chunks - 1) / chunks;
    ls_arg *sa = args_of(3);
    sa[0] = copy_arg(&n->args[0]);
    sa[2] = ls_arg_int(dim);
    ls_node *s;
    if (x->sizes[dim] == 0) {
        /* an empty dimension keeps its `chunks` pieces (ATen's chunk takes split_with_sizes there) */
        int64_t *zeros = ls_calloc((size_t)chunks, sizeof *zeros);
        sa[1] = ls_arg_ints(zeros, (uint32_t)chunks);
        free(zeros);
        s = emit(E, LS_OP_split_with_sizes_copy, sa, 3, NULL);
    } else {
        sa[1] = ls_arg_int(size);
        s = emit(E, LS_OP_split_copy_Tensor, sa, 3, NULL);
    }
    if (!s) return false;
    ls_node_set_vals(s, (ls_val_kind)n->val_kind, n->vals, n->nvals);
    take_place(s, n);
    return true;
}

/* The backend that keeps n whole (its ops_to_not_decompose), or NULL. */
static const ls_profile *kept_for(const ls_pass_ctx *ctx, const pr_view *base, const ls_node *n)
{
    for (uint32_t b = 0; b < ctx->n_backends; b++) {
        const ls_profile *p = ctx->backends[b];
        if (!(p->ops[n->op->id].flags & LS_POP_KEEP) && !p->keep_supported) continue;
        pr_view v = *base;
        v.prof = p;
        const char *detail;
        if (pr_check_node(&v, n, 0, &detail) == LS_WHY_NONE) return p;
    }
    return NULL;
}

/* silu(x) → mul(x, sigmoid(x)), torch's decomposition (torch/_decomp/decompositions.py silu,
 * in the core ATen table exir decomposes with; the portable library has no silu.out) */
static bool decompose_silu(edge *E, const ls_node *n)
{
    const ls_tmeta *y = ls_node_tval(n);
    if (!y || !n->nargs) return false;
    ls_arg *sa = args_of(1);
    sa[0] = copy_arg(&n->args[0]);
    ls_node *sg = emit(E, LS_OP_sigmoid, sa, 1, y);
    if (!sg) return false;
    ls_arg *ma = args_of(2);
    ma[0] = copy_arg(&n->args[0]);
    ma[1] = ls_arg_node(sg->id);
    ls_node *m = emit(E, LS_OP_mul_Tensor, ma, 2, y);
    if (!m) return false;
    take_place(m, n);
    return true;
}

/* arange.start(start, end, ...) → arange.start_step(start, end, 1, ...): the core ATen form
 * (torch's decomposition table; portable registers arange.start_out, start_step's out variant) */
static bool decompose_arange_start(edge *E, const ls_node *n)
{
    if (n->nargs < 2) return false;
    ls_arg *a = args_of(7);
    a[0] = copy_arg(&n->args[0]);
    a[1] = copy_arg(&n->args[1]);
    a[2] = ls_arg_int(1);
    for (int k = 2; k < 6; k++) a[k + 1] = k < n->nargs ? copy_arg(&n->args[k]) : ls_arg_none();
    ls_node *m = emit(E, LS_OP_arange_start_step, a, 7, ls_node_tval(n));
    if (!m) return false;
    take_place(m, n);
    return true;
}

static bool decompose(edge *E, const ls_node *n)
{
    switch (n->op->id) {
    case LS_OP_silu: return decompose_silu(E, n);
    case LS_OP_arange_start: return decompose_arange_start(E, n);
    case LS_OP_linear: return decompose_linear(E, n);
    case LS_OP_matmul: return decompose_matmul(E, n);
    case LS_OP_softmax_int: return decompose_softmax(E, n, LS_OP__softmax);
    case LS_OP_log_softmax_int: return decompose_softmax(E, n, LS_OP__log_softmax);
    case LS_OP_layer_norm: return decompose_layer_norm(E, n);
    case LS_OP_chunk: return decompose_chunk(E, n);
    case LS_OP_conv2d: return decompose_conv2d(E, n);
    default: return false;
    }
}

/* ExecuTorch's to_edge ends with DebugHandleGeneratorPass (exir/passes/
 * debug_handle_generator_pass.py): every node but placeholders and the output gets the handle
 * of its oldest source node, numbered from 1 in graph order as sources are first met, so the
 * nodes a decomposition made of one ATen node share its handle. The emitter's debug_handle_map
 * and an ETDump's events lead back to nodes through them. */
static void give_debug_handles(edge *E, ls_node *const *orig, uint32_t n, const uint32_t *first_out)
{
    int64_t next = 0;
    for (uint32_t i = 0; i < n; i++) {
        if (orig[i]->kind != LS_NODE_CALL) continue;
        int64_t h = ++next;
        for (uint32_t k = first_out[i]; k < first_out[i + 1]; k++) {
            ls_node *m = E->out.v[k];
            if (m->debug_handle == h) continue;
            if (m->refs > 1) { /* shared with the ATen step: this step's own copy */
                ls_node *c = ls_node_clone(m);
                ls_node_unref(m);
                E->out.v[k] = m = c;
            }
            m->debug_handle = h;
        }
    }
}

int ls_pass_to_edge(const ls_program *in, ls_program **out, ls_pass_ctx *ctx)
{
    ls_program *q = ls_program_copy(in);
    *out = q;
    if (in->dialect == LS_DIALECT_EDGE) {
        ls_report_add(ctx->report, NULL, NULL, "the program is already in the Edge dialect: nothing to do");
        return 0;
    }
    edge E = {.q = q};
    uint32_t n = q->n_nodes;
    E.names = ls_namer_new(NULL);
    ls_namer_room(E.names, n + n / 4); /* every call is renamed; decompositions add a few */
    ls_vec_reserve(&E.out, n + n / 4);
    for (uint32_t i = 0; i < n; i++) {
        const ls_node *nd = q->nodes[i];
        /* placeholders, getitems, delegate calls and unknown ops keep their names */
        if (nd->kind != LS_NODE_CALL || !nd->op || (nd->op->flags & LS_OPF_SPECIAL)) ls_namer_reserve(E.names, nd->name);
    }
    uint32_t converted = 0, views = 0, unknown = 0, preserved = 0;
    ls_sig sig;
    pu_users users;
    ls_sig_build(&sig, in);
    pu_users_take(&users, in);
    pr_view view = {in, &sig, &users, NULL};
    uint32_t *first_out = ls_malloc(sizeof *first_out * (n + 1)); /* where each node's Edge nodes start in E.out */
    for (uint32_t i = 0; i < n; i++) {
        ls_node *nd = q->nodes[i];
        first_out[i] = E.out.n;
        if (nd->kind != LS_NODE_CALL) {
            ls_vec_push(&E.out, ls_node_ref(nd));
            continue;
        }
        if (!nd->op) {
            ls_vec_push(&E.out, ls_node_ref(nd));
            unknown++;
            ls_report_add(ctx->report, NULL, nd->name, "`%s` (%s) is not a known op: kept as it is", nd->name,
                          nd->target ? nd->target : "?");
            continue;
        }
        if (nd->op->flags & LS_OPF_SPECIAL) {
            ls_vec_push(&E.out, ls_node_ref(nd));
            continue;
        }
        const ls_profile *keeper = nd->op->flags & LS_OPF_COMPOSITE ? kept_for(ctx, &view, nd) : NULL;
        if (keeper) {
            preserved++;
            ls_report_add(ctx->report, NULL, nd->name, "`%s` (%s) is kept whole for %s (ops_to_not_decompose)", nd->name,
                          nd->op->qualname, keeper->name);
        } else if (nd->op->flags & LS_OPF_COMPOSITE) {
            uint32_t before = E.out.n;
            const char *old = nd->name;
            if (decompose(&E, nd)) {
                E.decomposed++;
                ls_buf b = {0};
                for (uint32_t k = before; k < E.out.n; k++)
                    ls_buf_printf(&b, "%s`%s`", k > before ? " + " : "", E.out.v[k]->name);
                char *text = ls_buf_take(&b);
                ls_report_add(ctx->report, NULL, E.out.v[E.out.n - 1]->name, "`%s` (%s) decomposed into %s", old,
                              nd->op->qualname, text);
                free(text);
                continue;
            }
            for (uint32_t k = before; k < E.out.n; k++) ls_node_unref(E.out.v[k]);
            E.out.n = before;
            E.kept++;
            ls_report_add(ctx->report, NULL, nd->name, "`%s` (%s) has no decomposition for these shapes: kept", nd->name,
                          nd->op->qualname);
        }
        const ls_op *op = nd->op;
        const ls_op *copy = ls_op_copy_form(op);
        ls_node *c = ls_node_clone(nd);
        if (copy) {
            c->op = copy;
            for (uint16_t a = 0; a < c->nargs && a < copy->schema.nparams; a++) c->args[a].name = copy->schema.params[a].name;
            views++;
        }
        c->target = ls_op_target_cached(c->op, LS_DIALECT_EDGE);
        c->dialect = LS_DIALECT_EDGE;
        c->name = ls_namer_take_interned(E.names, ls_op_node_base(c->op, LS_DIALECT_EDGE));
        ls_vec_push(&E.out, c);
        converted++;
    }
    ls_sig_free(&sig);
    pu_users_free(&users);
    first_out[n] = E.out.n;
    give_debug_handles(&E, q->nodes, n, first_out);
    free(first_out);
    ls_program_set_nodes(q, E.out.v, E.out.n);
    free(E.out.v);
    ls_namer_free(E.names);
    /* output specs name the output values: they follow the renaming (positionally) */
    const ls_node *o = ls_program_output(q);
    for (uint32_t i = 0; o && i < o->nargs && i < q->n_outputs; i++)
        if (o->args[i].kind == LS_ARG_NODE) {
            const ls_node *v = ls_program_node(q, o->args[i].v.node);
            if (v) q->outputs[i].name = v->name;
        }
    pu_scalars_to_tensors(q, ctx->report);
    ls_program_touch(q); /* the lookups above built an index: the history keeps the step without it */
    q->dialect = LS_DIALECT_EDGE;
    q->verifier = ls_intern("EDGE");
    /* the counts that are not 0 (every program said "0 view ops became _copy ops, ... 0 unknown") */
    char more[256] = "";
    size_t m = 0;
    if (views)
        m += (size_t)snprintf(more + m, sizeof more - m, " (%u view op%s became _copy op%s)", views, views == 1 ? "" : "s",
                              views == 1 ? "" : "s");
    if (E.decomposed && m < sizeof more) m += (size_t)snprintf(more + m, sizeof more - m, ", %u decomposed", E.decomposed);
    if (E.kept && m < sizeof more) m += (size_t)snprintf(more + m, sizeof more - m, ", %u kept whole as composite%s", E.kept, E.kept == 1 ? "" : "s");
    if (unknown && m < sizeof more) snprintf(more + m, sizeof more - m, ", %u unknown", unknown);
    ls_report_add(ctx->report, NULL, NULL, "%u call%s now Edge ops%s", converted + E.decomposed,
                  converted + E.decomposed == 1 ? "" : "s", more);
    if (preserved)
        ls_report_add(ctx->report, NULL, NULL, "%u composite%s kept whole for the backends (ops_to_not_decompose)", preserved,
                      preserved == 1 ? "" : "s");
    return 0;
}
