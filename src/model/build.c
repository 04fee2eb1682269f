/* Making nodes and whole programs in C (the passes, the tests, the benchmark generator). */
#include "build.h"

#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "namer.h"
#include "ptrmap.h"

/* Edge base names, made once per op (interned strings never move, so a racing second writer
 * stores the same pointer). */
static const char *edge_base[LS_OP_COUNT + LS_MAX_CUSTOM_OPS];

const char *ls_op_node_base(const ls_op *op, ls_dialect dialect)
{
    if (op->id == LS_OP_getitem) return ls_intern("getitem");
    if (op->id == LS_OP_call_delegate) return ls_intern("executorch_call_delegate");
    if (dialect != LS_DIALECT_EDGE) return op->name;
    if (edge_base[op->id]) return edge_base[op->id];
    /* exir names Edge nodes from the op: aten_add_tensor, dim_order_ops__to_dim_order_copy_default */
    char b[192];
    snprintf(b, sizeof b, "%s_%s_%s", op->ns, op->name, op->overload);
    for (char *c = b; *c; c++)
        if (*c >= 'A' && *c <= 'Z') *c = (char)(*c - 'A' + 'a');
    return edge_base[op->id] = ls_intern(b);
}

const char *ls_op_target_cached(const ls_op *op, ls_dialect dialect)
{
    static const char *aten[LS_OP_COUNT + LS_MAX_CUSTOM_OPS], *edge[LS_OP_COUNT + LS_MAX_CUSTOM_OPS];
    if (dialect != LS_DIALECT_EDGE && dialect != LS_DIALECT_ATEN) return ls_op_target(op, dialect);
    const char **t = dialect == LS_DIALECT_EDGE ? &edge[op->id] : &aten[op->id];
    if (!*t) *t = ls_op_target(op, dialect);
    return *t;
}

ls_node *ls_node_new_getitem(ls_program *p, const char *name, uint32_t of, int64_t k)
{
    const ls_op *gi = ls_op_get(LS_OP_getitem);
    ls_node *g = ls_node_new(p, LS_NODE_CALL, name, ls_op_target(gi, LS_DIALECT_NONE));
    g->op = gi;
    ls_arg *args = ls_calloc(2, sizeof *args);
    args[0] = ls_arg_node(of);
    args[0].name = gi->schema.params[0].name;
    args[1] = ls_arg_int(k);
    args[1].name = gi->schema.params[1].name;
    ls_node_set_args(g, args, 2);
    return g;
}

ls_node *ls_node_new_call(ls_program *p, const char *name, const ls_op *op, ls_dialect dialect, ls_arg *args,
                          uint16_t nargs, const ls_tmeta *val, ls_error *err)
{
    ls_arg *norm = args;
    uint16_t nn = nargs;
    if (!(op->flags & LS_OPF_SPECIAL)) {
        /* positional in schema order: name them so keyword-only parameters are matched too */
        for (uint16_t i = 0; i < nargs && i < op->schema.nparams; i++) args[i].name = op->schema.params[i].name;
        if (nargs > op->schema.nparams) {
            for (uint16_t i = 0; i < nargs; i++) ls_arg_free(&args[i]);
            free(args);
            ls_fail(err, "%s takes %u arguments, got %u", op->qualname, op->schema.nparams, nargs);
            return NULL;
        }
        int rc = ls_op_normalize_args(op, args, nargs, &norm, &nn, err);
        for (uint16_t i = 0; i < nargs; i++) ls_arg_free(&args[i]);
        free(args);
        if (rc != 0) return NULL;
        /* arguments the caller gave are not defaults even when they were keyword-only */
        for (uint16_t i = 0; i < nargs && i < nn; i++) norm[i].flags &= (uint8_t)~LS_ARGF_DEFAULT;
    }
    ls_node *n = ls_node_new(p, LS_NODE_CALL, name, ls_op_target_cached(op, dialect));
    n->op = op;
    n->dialect = (uint8_t)((op->flags & LS_OPF_SPECIAL) ? LS_DIALECT_NONE : dialect);
    ls_node_set_args(n, norm, nn);
    if (val) ls_node_set_val(n, val);
    return n;
}

ls_node *ls_node_new_placeholder(ls_program *p, const char *name, const ls_tmeta *val)
{
    ls_node *n = ls_node_new(p, LS_NODE_PLACEHOLDER, name, NULL);
    n->target = n->name;
    if (val) ls_node_set_val(n, val);
    return n;
}

/* ---- whole programs */

typedef LS_VEC(ls_named_tensor) named_vec;

struct ls_builder {
    ls_program *p;
    ls_namer *names;
    LS_VEC(ls_input_spec) inputs;
    /* data tables, handed to the program at the end (appending one by one would be quadratic) */
    named_vec state, constants;
    ls_ptrmap state_ix, const_ix; /* target → index */
};

static void put_data(named_vec *v, ls_ptrmap *ix, const char *target, ls_tensor *t, const ls_tmeta *m)
{
    uint32_t i;
    ls_named_tensor e = {.name = target, .t = ls_tensor_ref(t), .meta = ls_tmeta_intern(m, 1)};
    if (ls_ptrmap_get_u32(ix, target, &i)) {
        ls_tensor_unref(v->v[i].t);
        v->v[i] = e;
        return;
    }
    ls_ptrmap_put(ix, target, v->n);
    ls_vec_push(v, e);
}

/* FX never names a node after a Python builtin: the first `slice` is `slice_1`. */
static const char *const python_builtins[] = {"abs", "all", "any", "bool", "dict", "divmod", "filter", "float",
                                              "format", "hash", "id", "input", "int", "iter", "len", "list", "map",
                                              "max", "min", "next", "object", "pow", "print", "range", "round",
                                              "set", "slice", "sorted", "str", "sum", "tuple", "type", "zip"};

ls_builder *ls_builder_new(const char *name, ls_dialect dialect)
{
    ls_builder *b = ls_calloc(1, sizeof *b);
    b->p = ls_program_new(name, dialect);
    b->names = ls_namer_new(NULL);
    for (size_t i = 0; i < sizeof python_builtins / sizeof python_builtins[0]; i++)
        ls_namer_reserve(b->names, python_builtins[i]);
    return b;
}

ls_program *ls_builder_program(ls_builder *b)
{
    return b->p;
}

uint32_t ls_build_input(ls_builder *b, const char *name, ls_input_kind kind, const char *target, bool persistent,
                        const ls_tmeta *meta, ls_tensor *data)
{
    ls_tmeta m;
    if (meta) m = *meta;
    else if (data) ls_tensor_meta(data, &m);
    else ls_tmeta_init(&m, LS_DT_F32, 0, NULL);
    ls_node *n = ls_node_new_placeholder(b->p, ls_namer_take(b->names, name), &m);
    ls_program_append(b->p, n);
    ls_input_spec s = {.kind = (uint8_t)kind, .persistent = persistent, .name = n->name};
    s.target = kind == LS_IN_USER_INPUT ? NULL : ls_intern(target ? target : name);
    ls_vec_push(&b->inputs, s);
    bool in_state = ls_input_in_state(kind, persistent);
    bool in_constants = kind == LS_IN_CONSTANT_TENSOR || (kind == LS_IN_BUFFER && !persistent);
    if (in_state) put_data(&b->state, &b->state_ix, s.target, data, &m);
    else if (in_constants) put_data(&b->constants, &b->const_ix, s.target, data, &m);
    if ((in_state || in_constants) && !data) b->p->has_weights = false;
    return n->id;
}

uint32_t ls_build_call(ls_builder *b, const char *name, ls_op_id op_id, ls_arg *args, uint16_t nargs,
                       const ls_tmeta *val)
{
    const ls_op *op = ls_op_get(op_id);
    ls_tmeta first;
    bool have_first = false;
    if (!val) {
        for (uint16_t i = 0; i < nargs && !have_first; i++) {
            uint32_t id = 0;
            if (args[i].kind == LS_ARG_NODE) id = args[i].v.node;
            else if ((args[i].kind == LS_ARG_NODES || args[i].kind == LS_ARG_OPT_NODES) && args[i].n) id = args[i].v.nodes[0];
            const ls_node *src = id ? ls_program_node(b->p, id) : NULL;
            if (src && src->val_kind == LS_VAL_TENSOR && src->nvals) {
                first = src->vals[0];
                have_first = true;
            }
        }
    }
    const char *nm = ls_namer_take(b->names, name ? name : ls_op_node_base(op, (ls_dialect)b->p->dialect));
    ls_error err;
    ls_node *n = ls_node_new_call(b->p, nm, op, (ls_dialect)b->p->dialect, args, nargs,
                                  val ? val : have_first ? &first : NULL, &err);
    if (!n) {
        fprintf(stderr, "lowerscope: ls_build_call %s: %s\n", op->qualname, err.msg);
        abort();
    }
    ls_program_append(b->p, n);
    return n->id;
}

void ls_build_output(ls_builder *b, const uint32_t *ids, uint32_t n, const ls_output_kind *kinds,
                     const char *const *targets)
{
    ls_node *out = ls_node_new(b->p, LS_NODE_OUTPUT, ls_namer_take(b->names, "output"), NULL);
    ls_arg *args = ls_calloc(n ? n : 1, sizeof *args);
    ls_output_spec *specs = ls_calloc(n ? n : 1, sizeof *specs);
    for (uint32_t i = 0; i < n; i++) {
        args[i] = ls_arg_node(ids[i]);
        const ls_node *v = ls_program_node(b->p, ids[i]);
        specs[i].kind = (uint8_t)(kinds ? kinds[i] : LS_OUT_USER_OUTPUT);
        specs[i].name = v ? v->name : NULL;
        specs[i].target = targets && targets[i] ? ls_intern(targets[i]) : NULL;
    }
    ls_node_set_args(out, args, (uint16_t)n);
    ls_program_append(b->p, out);
    ls_program_set_outputs(b->p, specs, n);
    free(specs);
}

ls_program *ls_builder_finish(ls_builder *b)
{
    ls_program *p = b->p;
    ls_program_set_inputs(p, b->inputs.v, b->inputs.n);
    free(b->inputs.v);
    for (uint32_t i = 0; i < p->n_state; i++) ls_tensor_unref(p->state_dict[i].t);
    free(p->state_dict);
    p->state_dict = b->state.v;
    p->n_state = b->state.n;
    for (uint32_t i = 0; i < p->n_constants; i++) ls_tensor_unref(p->constants[i].t);
    free(p->constants);
    p->constants = b->constants.v;
    p->n_constants = b->constants.n;
    ls_program_tables_touch(p);
    ls_ptrmap_free(&b->state_ix);
    ls_ptrmap_free(&b->const_ix);
    ls_namer_free(b->names);
    free(b);
    return p;
}

ls_arg ls_arg_opt_nodes(const uint32_t *ids, uint32_t n)
{
    return ls_arg_nodes(ids, n, true);
}

ls_tmeta ls_meta(ls_dtype dtype, int ndim, const int64_t *sizes)
{
    ls_tmeta m;
    ls_tmeta_init(&m, dtype, ndim, sizes);
    return m;
}

ls_tensor *ls_tensor_of(ls_dtype dtype, int ndim, const int64_t *sizes, const double *values, int64_t n)
{
    ls_tensor *t = ls_tensor_alloc(dtype, ndim, sizes);
    for (int64_t i = 0; i < n && i < t->numel; i++) ls_tensor_set_f64(t, i, values[i]);
    return t;
}
