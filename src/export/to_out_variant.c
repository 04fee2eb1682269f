/* to_out_variant, the first of to_executorch's steps (ExecuTorch's insert_write_back_for_buffers_pass,
 * NormalizeViewCopyBasePass + ReplaceViewCopyWithViewPass, then ToOutVarPass, in the order
 * exir's edge_to_executorch_passes runs them with remove_view_copy=True, its default).
 *
 * A view_copy of a view_copy reads the first one's base instead (views of views collapse to
 * their root), a view_copy nothing reads any more goes, and every view_copy the output node
 * does not read becomes executorch.exir.memory.view(base, size): no memory of its own, its
 * base's memory seen with its sizes (exir keeps a view_copy the output reads: "the output
 * pointer could be modified at runtime"); emit writes it as executorch_prim::et_view.
 *
 * Then a call whose op has an out variant takes it, with its out
 * arguments made explicit as `alloc` nodes (executorch.exir.memory.alloc(size, dtype)) placed
 * right before it; memory planning then gives each alloc its place in the arena. Getitems of a
 * call returning several tensors keep reading the call (their memory is the matching alloc).
 * First, a buffer the top level mutates gets the write-back ExecuTorch inserts: copy_(buffer,
 * value), where insert_write_back_for_buffers_pass places it (write_back.c), and the
 * BUFFER_MUTATION output reads the copy_. Lowered submodules are left as they are: the backend
 * compiled them. */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "build.h"
#include "export_internal.h"
#include "namer.h"
#include "ptrmap.h"
#include "signature.h"

typedef struct conv {
    ls_program *q;
    ls_namer *names;
    lsx_bounds *bounds;
    ls_pass_ctx *ctx;
    LS_VEC(ls_node *) nodes; /* the new node array (owned references) */
    uint32_t converted, allocs;
    LS_VEC(const ls_op *) kept_ops; /* ops kept functional, once each */
} conv;

static void count_use(uint32_t id, void *ctx)
{
    ((uint32_t *)ctx)[id]++;
}

static bool convertible(const ls_node *n)
{
    if (n->kind != LS_NODE_CALL || !n->op) return false;
    /* already an out variant with its out arguments (a program read from a .pte has none) */
    if (n->dialect == LS_DIALECT_EXECUTORCH && n->nargs > n->op->schema.nparams) return false;
    return !(n->op->flags & (LS_OPF_SPECIAL | LS_OPF_INPLACE)) && n->op->id != LS_OP_sym_size_int &&
           n->op->id != LS_OP_memory_view;
}

/* An alloc node for a tensor of meta m (sizes at their upper bound). */
static ls_node *new_alloc(conv *c, const ls_tmeta *m)
{
    int64_t sizes[LS_MAX_DIMS];
    bool dyn;
    if (lsx_upper_sizes(c->bounds, m, sizes, &dyn) != 0 || m->dtype == LS_DT_UNKNOWN) return NULL;
    const ls_op *al = ls_op_get(LS_OP_alloc);
    ls_node *a = ls_node_new(c->q, LS_NODE_CALL, ls_namer_take(c->names, "alloc"), ls_op_target(al, LS_DIALECT_NONE));
    a->op = al;
    ls_arg *args = ls_calloc(2, sizeof *args);
    args[0] = ls_arg_ints(sizes, m->ndim);
    args[0].name = al->schema.params[0].name;
    args[1].kind = LS_ARG_DTYPE;
    args[1].v.i = m->dtype;
    args[1].name = al->schema.params[1].name;
    ls_node_set_args(a, args, 2);
    ls_node_set_val(a, m);
    return a;
}

static void note_kept(conv *c, const ls_node *n, const char *why)
{
    for (uint32_t i = 0; i < c->kept_ops.n; i++)
        if (c->kept_ops.v[i] == n->op) return;
    ls_vec_push(&c->kept_ops, n->op);
    ls_report_add(c->ctx->report, NULL, n->name, "`%s` (%s) stays a functional call: %s", n->name, n->op->qualname, why);
}

/* The out-variant form of call n: allocs appended to c->nodes, then the edited call. */
static void convert_call(conv *c, ls_node *n)
{
    const ls_op *op = n->op;
    if (!op->out_overload) {
        note_kept(c, n, "lowerscope's operator table knows no out variant of it");
        ls_vec_push(&c->nodes, ls_node_ref(n));
        return;
    }
    uint32_t nout = ls_out_count(op);
    uint32_t nvals = op->schema.returns_list ? n->nvals : nout;
    if ((op->schema.returns_list && n->val_kind != LS_VAL_TENSORS) ||
        (!op->schema.returns_list && (n->nvals < nout || (nout == 1 && n->val_kind != LS_VAL_TENSOR)))) {
        note_kept(c, n, "its value has no tensor metadata to allocate its out argument from");
        ls_vec_push(&c->nodes, ls_node_ref(n));
        return;
    }
    ls_node **allocs = ls_calloc(nvals ? nvals : 1, sizeof *allocs);
    for (uint32_t k = 0; k < nvals; k++) {
        allocs[k] = new_alloc(c, &n->vals[k]);
        if (!allocs[k]) {
            for (uint32_t j = 0; j < k; j++) ls_node_unref(allocs[j]);
            free(allocs);
            note_kept(c, n, "the size of its value has no upper bound to plan memory for");
            ls_vec_push(&c->nodes, ls_node_ref(n));
            return;
        }
    }
    ls_node *m = ls_node_clone(n);
    uint16_t na = m->nargs;
    uint16_t extra = (uint16_t)(op->schema.returns_list ? 1 : nout);
    ls_arg *args = ls_calloc((size_t)na + extra, sizeof *args);
    for (uint16_t i = 0; i < na; i++) ls_arg_copy(&args[i], &m->args[i]);
    if (op->schema.returns_list) {
        uint32_t *ids = ls_calloc(nvals ? nvals : 1, sizeof *ids);
        for (uint32_t k = 0; k < nvals; k++) ids[k] = allocs[k]->id;
        args[na] = ls_arg_nodes(ids, nvals, false);
        args[na].name = ls_out_name(op, 0);
        args[na].flags = LS_ARGF_KEYWORD;
        free(ids);
    } else {
        for (uint32_t k = 0; k < nout; k++) {
            args[na + k] = ls_arg_node(allocs[k]->id);
            args[na + k].name = ls_out_name(op, k);
            args[na + k].flags = LS_ARGF_KEYWORD;
        }
    }
    ls_node_set_args(m, args, (uint16_t)(na + extra));
    m->target = ls_op_target(op, LS_DIALECT_EXECUTORCH);
    m->dialect = LS_DIALECT_EXECUTORCH;
    for (uint32_t k = 0; k < nvals; k++) ls_vec_push(&c->nodes, allocs[k]);
    ls_vec_push(&c->nodes, m);
    free(allocs);
    c->converted++;
    c->allocs += nvals;
}

static bool is_view_copy(const ls_node *n)
{
    return n && n->kind == LS_NODE_CALL && n->op && n->op->id == LS_OP_view_copy;
}

/* Whether the output node reads node `id` (ReplaceViewCopyWithViewPass keeps such a view_copy:
 * the runtime may point an output elsewhere). An older pass asked only whether the output node
 * came next, which made the first of two view_copy outputs a view of its base. */
static bool read_by_output(const ls_program *q, uint32_t id)
{
    for (uint32_t i = q->n_nodes; i-- > 0;) {
        const ls_node *o = q->nodes[i];
        if (o->kind != LS_NODE_OUTPUT) continue;
        for (uint16_t a = 0; a < o->nargs; a++)
            if (o->args[a].kind == LS_ARG_NODE && o->args[a].v.node == id) return true;
        return false;
    }
    return false;
}

/* NormalizeViewCopyBasePass, the dead views it leaves, and ReplaceViewCopyWithViewPass. */
static void views(conv *c)
{
    ls_program *q = c->q;
    uint32_t *base = ls_calloc(q->next_id ? q->next_id : 1, sizeof *base); /* by id: a view_copy's root */
    uint32_t normalized = 0;
    for (uint32_t i = 0; i < q->n_nodes; i++) {
        const ls_node *n = q->nodes[i];
        if (!is_view_copy(n) || !n->nargs || n->args[0].kind != LS_ARG_NODE) continue;
        uint32_t b = n->args[0].v.node;
        base[n->id] = b < q->next_id && base[b] ? base[b] : b;
        if (base[n->id] != b) {
            ls_node *e = ls_program_edit(q, i);
            e->args[0].v.node = base[n->id];
            normalized++;
        }
    }
    /* a view_copy only a view_copy read is dead now (dead_code_elimination_pass) */
    uint32_t *uses = ls_calloc(q->next_id ? q->next_id : 1, sizeof *uses);
    for (uint32_t i = 0; i < q->n_nodes; i++)
        for (uint16_t a = 0; a < q->nodes[i]->nargs; a++) ls_arg_each_node(&q->nodes[i]->args[a], count_use, uses);
    LS_VEC(ls_node *) keep = {0};
    uint32_t dead = 0;
    for (uint32_t i = 0; i < q->n_nodes; i++) {
        ls_node *n = q->nodes[i];
        if (is_view_copy(n) && !uses[n->id]) {
            dead++;
            continue;
        }
        ls_vec_push(&keep, ls_node_ref(n));
    }
    if (dead) ls_program_set_nodes(q, keep.v, keep.n);
    else
        for (uint32_t i = 0; i < keep.n; i++) ls_node_unref(keep.v[i]);
    free(keep.v);
    uint32_t replaced = 0, kept = 0;
    const ls_op *view = ls_op_get(LS_OP_memory_view);
    for (uint32_t i = 0; i + 1 < q->n_nodes; i++) {
        const ls_node *n = q->nodes[i];
        if (!is_view_copy(n)) continue;
        if (read_by_output(q, n->id)) { /* any(u.op == "output" for u in node.users) */
            kept++;
            continue;
        }
        const ls_node *b = n->nargs ? ls_program_node(q, n->args[0].v.node) : NULL;
        const ls_tmeta *bm = b ? ls_node_tval(b) : NULL, *vm = ls_node_tval(n);
        /* _ViewSpec: same dtype, same bytes, same dynamism as its base */
        if (!bm || !vm || bm->dtype != vm->dtype || ls_tmeta_is_dynamic(bm) != ls_tmeta_is_dynamic(vm) ||
            ls_tmeta_numel(bm) != ls_tmeta_numel(vm)) {
            kept++;
            continue;
        }
        ls_node *e = ls_program_edit(q, i);
        e->op = view;
        e->target = ls_op_target(view, LS_DIALECT_EXECUTORCH);
        e->dialect = LS_DIALECT_EXECUTORCH;
        for (uint16_t a = 0; a < e->nargs && a < view->schema.nparams; a++) e->args[a].name = view->schema.params[a].name;
        replaced++;
    }
    if (replaced || normalized || dead) {
        ls_buf b = {0};
        ls_buf_printf(&b, "%u view_copy call%s become%s executorch.exir.memory.view, in %s base's memory", replaced,
                      replaced == 1 ? "" : "s", replaced == 1 ? "s" : "", replaced == 1 ? "its" : "their");
        if (normalized) ls_buf_printf(&b, "; %u read%s its root base instead of a view", normalized, normalized == 1 ? "s" : "");
        if (dead) ls_buf_printf(&b, "; %u view%s of views no longer read removed", dead, dead == 1 ? "" : "s");
        if (kept) ls_buf_printf(&b, "; %u stay%s view_copy (the output reads it)", kept, kept == 1 ? "s" : "");
        ls_report_add(c->ctx->report, NULL, NULL, "%s", b.s);
        ls_buf_free(&b);
    }
    free(base);
    free(uses);
}

static int by_name(const void *a, const void *b)
{
    return strcmp(*(const char *const *)a, *(const char *const *)b);
}

/* "my_ops::foo" of a target lowerscope does not know ("torch.ops.my_ops.foo.default",
 * "executorch.exir.dialects.edge.ops.my_ops.foo.default", "my_ops::foo.out"). */
static const char *schema_name(const char *target)
{
    const char *t = target ? target : "?";
    static const char *prefixes[] = {"executorch.exir.dialects.edge.ops.", "torch.ops."};
    for (size_t i = 0; i < 2; i++)
        if (strncmp(t, prefixes[i], strlen(prefixes[i])) == 0) t += strlen(prefixes[i]);
    const char *sep = strstr(t, "::");
    if (sep) {
        const char *dot = strchr(sep + 2, '.');
        return dot ? ls_intern_n(t, (size_t)(dot - t)) : ls_intern(t);
    }
    const char *d1 = strchr(t, '.');
    if (!d1) return ls_intern(t);
    const char *d2 = strchr(d1 + 1, '.');
    return ls_internf("%.*s::%.*s", (int)(d1 - t), t, (int)((d2 ? d2 : d1 + strlen(d1)) - d1 - 1), d1 + 1);
}

/* ExecuTorch's ToOutVarPass stops on a call whose out variant it cannot find, naming every such
 * operator: RuntimeError("Missing out variants: {'my_ops::foo'}") (exir/passes/__init__.py). An
 * operator lowerscope does not know, or one declared (--ops) without an out variant, is such a
 * call; --ops FILE with its .out schema gives it. Names sorted (Python prints a set unordered). */
static int missing_out_variants(const ls_program *p, ls_pass_ctx *ctx)
{
    LS_VEC(const char *) names = {0};
    ls_ptrmap seen = {0};
    for (uint32_t i = 0; i < p->n_nodes; i++) {
        const ls_node *n = p->nodes[i];
        if (n->kind != LS_NODE_CALL || (n->op && !((n->op->flags & LS_OPF_CUSTOM) && !n->op->out_overload))) continue;
        const char *nm = n->op ? ls_internf("%s::%s", n->op->ns, n->op->name) : schema_name(n->target);
        if (ls_ptrmap_get(&seen, nm, NULL)) continue;
        ls_ptrmap_put(&seen, nm, 1);
        ls_vec_push(&names, nm);
    }
    ls_ptrmap_free(&seen);
    if (!names.n) return 0;
    qsort(names.v, names.n, sizeof *names.v, by_name);
    ls_buf b = {0};
    for (uint32_t i = 0; i < names.n; i++) ls_buf_printf(&b, "%s'%s'", i ? ", " : "", names.v[i]);
    ls_fail_needs(ctx->err, "Missing out variants: {%s}", b.s);
    ls_buf_free(&b);
    free(names.v);
    return -1;
}

int ls_pass_to_out_variant(const ls_program *in, ls_program **out, ls_pass_ctx *ctx)
{
    if (missing_out_variants(in, ctx) != 0) return -1;
    conv c = {.ctx = ctx};
    c.q = ls_program_copy(in);
    c.names = ls_namer_new(c.q);
    c.bounds = lsx_bounds_new(c.q);
    ls_program *q = c.q;
    lsx_insert_write_backs(q, c.names, ctx->report);
    views(&c);
    for (uint32_t i = 0; i < q->n_nodes; i++) {
        ls_node *n = q->nodes[i];
        if (convertible(n)) convert_call(&c, n);
        else ls_vec_push(&c.nodes, ls_node_ref(n));
    }
    ls_program_set_nodes(q, c.nodes.v, c.nodes.n);
    q->dialect = LS_DIALECT_EXECUTORCH;
    if (c.converted == 1)
        ls_report_add(ctx->report, NULL, NULL, "1 call takes its out variant, with %u alloc node%s for its out argument%s",
                      c.allocs, c.allocs == 1 ? "" : "s", c.allocs == 1 ? "" : "s");
    else
        ls_report_add(ctx->report, NULL, NULL, "%u calls take their out variant, with %u alloc node%s for their out arguments",
                      c.converted, c.allocs, c.allocs == 1 ? "" : "s");
    free(c.nodes.v);
    free(c.kept_ops.v);
    lsx_bounds_free(c.bounds);
    ls_namer_free(c.names);
    *out = q;
    return 0;
}
