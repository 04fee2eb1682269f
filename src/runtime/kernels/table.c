/* The kernel table (one kernel per op id, shared by an op's ATen, Edge, _copy and out-variant
 * spellings), argument evaluation and checking against the schema, and ls_eval_node. */
#include <inttypes.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>

#include "kernels.h"

enum { LK_SCALARS = 1 }; /* Tensor parameters may hold Python scalars (wrapped numbers) */

static const struct {
    ls_kernel_fn fn;
    uint8_t flags;
} table[LS_OP_COUNT] = {
    [LS_OP_getitem] = {k_getitem, 0},
    [LS_OP_alloc] = {k_alloc, 0}, /* memory.alloc(size, dtype): an out argument's memory, never read */
    [LS_OP_memory_view] = {k_view, 0}, /* memory.view(self, size): view_copy's result, in its base's memory */
    [LS_OP_sym_size_int] = {k_sym_size, 0},
    [LS_OP_add_Tensor] = {k_add, LK_SCALARS},
    [LS_OP_add_Scalar] = {k_add, LK_SCALARS},
    [LS_OP_sub_Tensor] = {k_sub, LK_SCALARS},
    [LS_OP_sub_Scalar] = {k_sub, LK_SCALARS},
    [LS_OP_rsub_Scalar] = {k_rsub, LK_SCALARS},
    [LS_OP_mul_Tensor] = {k_mul, LK_SCALARS},
    [LS_OP_mul_Scalar] = {k_mul, LK_SCALARS},
    [LS_OP_div_Tensor] = {k_div, LK_SCALARS},
    [LS_OP_div_Tensor_mode] = {k_div, LK_SCALARS},
    [LS_OP_div_Scalar] = {k_div, LK_SCALARS},
    [LS_OP_div_Scalar_mode] = {k_div, LK_SCALARS},
    [LS_OP_neg] = {k_neg, 0},
    [LS_OP_pow_Tensor_Scalar] = {k_pow, LK_SCALARS},
    [LS_OP_pow_Tensor_Tensor] = {k_pow, LK_SCALARS},
    [LS_OP_pow_Scalar] = {k_pow, LK_SCALARS},
    [LS_OP_sqrt] = {k_sqrt, 0},
    [LS_OP_rsqrt] = {k_rsqrt, 0},
    [LS_OP_exp] = {k_exp, 0},
    [LS_OP_log] = {k_log, 0},
    [LS_OP_sin] = {k_sin, 0},
    [LS_OP_cos] = {k_cos, 0},
    [LS_OP_atan2] = {k_atan2, LK_SCALARS},
    [LS_OP_tanh] = {k_tanh, 0},
    [LS_OP_sigmoid] = {k_sigmoid, 0},
    [LS_OP_relu] = {k_relu, 0},
    [LS_OP_gelu] = {k_gelu, 0},
    [LS_OP_silu] = {k_silu, 0},
    [LS_OP_abs] = {k_abs, 0},
    [LS_OP_clamp] = {k_clamp, 0},
    [LS_OP_clamp_Tensor] = {k_clamp_tensor, LK_SCALARS},
    [LS_OP_eq_Tensor] = {k_eq, LK_SCALARS},
    [LS_OP_eq_Scalar] = {k_eq, LK_SCALARS},
    [LS_OP_ne_Tensor] = {k_ne, LK_SCALARS},
    [LS_OP_ne_Scalar] = {k_ne, LK_SCALARS},
    [LS_OP_gt_Tensor] = {k_gt, LK_SCALARS},
    [LS_OP_gt_Scalar] = {k_gt, LK_SCALARS},
    [LS_OP_ge_Tensor] = {k_ge, LK_SCALARS},
    [LS_OP_ge_Scalar] = {k_ge, LK_SCALARS},
    [LS_OP_lt_Tensor] = {k_lt, LK_SCALARS},
    [LS_OP_lt_Scalar] = {k_lt, LK_SCALARS},
    [LS_OP_le_Tensor] = {k_le, LK_SCALARS},
    [LS_OP_le_Scalar] = {k_le, LK_SCALARS},
    [LS_OP_logical_and] = {k_logical_and, 0},
    [LS_OP_logical_or] = {k_logical_or, 0},
    [LS_OP_logical_not] = {k_logical_not, 0},
    [LS_OP_where_self] = {k_where, LK_SCALARS},
    [LS_OP_where_ScalarOther] = {k_where, LK_SCALARS},
    [LS_OP_where_ScalarSelf] = {k_where, LK_SCALARS},
    [LS_OP_masked_fill_Scalar] = {k_masked_fill, LK_SCALARS},
    [LS_OP_sum_dim_IntList] = {k_sum_dim, 0},
    [LS_OP_sum] = {k_sum, 0},
    [LS_OP_mean_dim] = {k_mean_dim, 0},
    [LS_OP_mean] = {k_mean, 0},
    [LS_OP_amax] = {k_amax, 0},
    [LS_OP_amin] = {k_amin, 0},
    [LS_OP_argmax] = {k_argmax, 0},
    [LS_OP_cumsum] = {k_cumsum, 0},
    [LS_OP__softmax] = {k__softmax, 0},
    [LS_OP_softmax_int] = {k_softmax, 0},
    [LS_OP__log_softmax] = {k__log_softmax, 0},
    [LS_OP_log_softmax_int] = {k_log_softmax, 0},
    [LS_OP_quantize_per_tensor] = {k_quantize_per_tensor, 0},
    [LS_OP_quantize_per_tensor_tensor] = {k_quantize_per_tensor, 0},
    [LS_OP_dequantize_per_tensor] = {k_dequantize_per_tensor, 0},
    [LS_OP_dequantize_per_tensor_tensor] = {k_dequantize_per_tensor, 0},
    [LS_OP_quantize_per_channel] = {k_quantize_per_channel, 0},
    [LS_OP_dequantize_per_channel] = {k_dequantize_per_channel, 0},
    [LS_OP_choose_qparams_tensor] = {k_choose_qparams, 0},
    [LS_OP_convolution] = {k_convolution, 0},
    [LS_OP_conv2d] = {k_conv2d, 0},
    [LS_OP_hardtanh] = {k_clamp, 0}, /* hardtanh(x, min_val, max_val) is clamp with both bounds */
    [LS_OP_mm] = {k_mm, 0},
    [LS_OP_bmm] = {k_bmm, 0},
    [LS_OP_addmm] = {k_addmm, 0},
    [LS_OP_linear] = {k_linear, 0},
    [LS_OP_matmul] = {k_matmul, 0},
    [LS_OP_view] = {k_view, 0},
    [LS_OP_view_copy] = {k_view, 0},
    [LS_OP_reshape] = {k_view, 0},
    [LS_OP__unsafe_view] = {k_view, 0},
    [LS_OP_permute] = {k_permute, 0},
    [LS_OP_permute_copy] = {k_permute, 0},
    [LS_OP_transpose_int] = {k_transpose, 0},
    [LS_OP_transpose_copy_int] = {k_transpose, 0},
    [LS_OP_t] = {k_t, 0},
    [LS_OP_t_copy] = {k_t, 0},
    [LS_OP_unsqueeze] = {k_unsqueeze, 0},
    [LS_OP_unsqueeze_copy] = {k_unsqueeze, 0},
    [LS_OP_squeeze] = {k_squeeze, 0},
    [LS_OP_squeeze_copy] = {k_squeeze, 0},
    [LS_OP_squeeze_dim] = {k_squeeze_dims, 0},
    [LS_OP_squeeze_copy_dim] = {k_squeeze_dims, 0},
    [LS_OP_squeeze_dims] = {k_squeeze_dims, 0},
    [LS_OP_squeeze_copy_dims] = {k_squeeze_dims, 0},
    [LS_OP_expand] = {k_expand, 0},
    [LS_OP_expand_copy] = {k_expand, 0},
    [LS_OP_slice_Tensor] = {k_slice, 0},
    [LS_OP_slice_copy_Tensor] = {k_slice, 0},
    [LS_OP_select_int] = {k_select, 0},
    [LS_OP_select_copy_int] = {k_select, 0},
    [LS_OP_split_Tensor] = {k_split, 0},
    [LS_OP_split_copy_Tensor] = {k_split, 0},
    [LS_OP_split_with_sizes] = {k_split_with_sizes, 0},
    [LS_OP_split_with_sizes_copy] = {k_split_with_sizes, 0},
    [LS_OP_chunk] = {k_chunk, 0},
    [LS_OP_cat] = {k_cat, 0},
    [LS_OP_stack] = {k_stack, 0},
    [LS_OP_constant_pad_nd] = {k_constant_pad_nd, 0},
    [LS_OP_index_Tensor] = {k_index, 0},
    [LS_OP_index_put] = {k_index_put, 0},
    [LS_OP_index_put_] = {k_index_put_, 0},
    [LS_OP_index_select] = {k_index_select, 0},
    [LS_OP_gather] = {k_gather, 0},
    [LS_OP_scatter_src] = {k_scatter_src, 0},
    [LS_OP_scatter_value] = {k_scatter_value, 0},
    [LS_OP_scatter_add] = {k_scatter_add, 0},
    [LS_OP_max_pool2d_with_indices] = {k_max_pool2d_with_indices, 0},
    [LS_OP_prim_add_Scalar] = {k_prim_add, 0},
    [LS_OP_prim_sub_Scalar] = {k_prim_sub, 0},
    [LS_OP_prim_mul_Scalar] = {k_prim_mul, 0},
    [LS_OP_prim_floordiv_Scalar] = {k_prim_floordiv, 0},
    [LS_OP_prim_truediv_Scalar] = {k_prim_truediv, 0},
    [LS_OP_prim_eq_Scalar] = {k_prim_eq, 0},
    [LS_OP_prim_gt_Scalar] = {k_prim_gt, 0},
    [LS_OP_prim_lt_Scalar] = {k_prim_lt, 0},
    [LS_OP_prim_ge_Scalar] = {k_prim_ge, 0},
    [LS_OP_prim_le_Scalar] = {k_prim_le, 0},
    [LS_OP_prim_floordiv_int] = {k_prim_floordiv_int, 0},
    [LS_OP_sym_numel] = {k_sym_numel, 0},
    [LS_OP_local_scalar_dense] = {k_local_scalar_dense, 0},
    [LS_OP_embedding] = {k_embedding, 0},
    [LS_OP_copy] = {k_copy, 0},
    [LS_OP_copy_] = {k_copy_, 0},
    [LS_OP_clone] = {k_clone, 0},
    [LS_OP_alias] = {k_alias, 0},
    [LS_OP_alias_copy] = {k_alias, 0},
    [LS_OP_lift_fresh_copy] = {k_clone, 0},
    [LS_OP__to_copy] = {k_to_copy, 0},
    [LS_OP__to_dim_order_copy] = {k_to_copy, 0},
    [LS_OP__clone_dim_order] = {k_clone, 0},
    [LS_OP_full] = {k_full, 0},
    [LS_OP_zeros] = {k_zeros, 0},
    [LS_OP_ones] = {k_ones, 0},
    [LS_OP_arange] = {k_arange, 0},
    [LS_OP_arange_start] = {k_arange_start, 0},
    [LS_OP_arange_start_step] = {k_arange_start_step, 0},
    [LS_OP_scalar_tensor] = {k_scalar_tensor, 0},
    [LS_OP_full_like] = {k_full_like, 0},
    [LS_OP_zeros_like] = {k_zeros_like, 0},
    [LS_OP_ones_like] = {k_ones_like, 0},
    [LS_OP_layer_norm] = {k_layer_norm, 0},
    [LS_OP_native_layer_norm] = {k_native_layer_norm, 0},
    [LS_OP_sdpa] = {k_sdpa, 0},
    /* call_delegate has no kernel: the interpreter runs it through the backend */
};

ls_kernel_fn ls_kernel_for(const ls_op *op)
{
    return op && (unsigned)op->id < LS_OP_COUNT ? table[op->id].fn : NULL;
}

int ls_kfail(ls_kctx *ctx, const char *fmt, ...)
{
    char msg[LS_ERR_MAX];
    va_list ap;
    va_start(ap, fmt);
    vsnprintf(msg, sizeof msg, fmt, ap);
    va_end(ap);
    const ls_op *op = ctx->op ? ctx->op : ctx->node ? ctx->node->op : NULL;
    const char *opname = op ? op->qualname : ctx->node && ctx->node->target ? ctx->node->target : "?";
    if (ctx->node) return ls_fail(ctx->err, "node %s (%s): %s", ctx->node->name, opname, msg);
    return ls_fail(ctx->err, "%s: %s", opname, msg);
}

/* ---- arguments to values */

static int node_value(uint32_t id, ls_value_lookup lookup, void *lctx, ls_value *out, ls_error *err)
{
    const ls_value *v = lookup(id, lctx);
    if (!v) return ls_fail(err, "the value of node #%u is not available", id);
    *out = ls_value_copy(v);
    return 0;
}

static int arg_value(const ls_arg *a, ls_value_lookup lookup, void *lctx, ls_value *out, ls_error *err)
{
    *out = ls_value_none();
    switch ((ls_arg_kind)a->kind) {
    case LS_ARG_NONE: return 0;
    case LS_ARG_NODE: return node_value(a->v.node, lookup, lctx, out, err);
    case LS_ARG_NODES:
    case LS_ARG_OPT_NODES:
        *out = ls_value_list(a->n);
        for (uint32_t i = 0; i < a->n; i++) {
            if (a->kind == LS_ARG_OPT_NODES && a->v.nodes[i] == 0) continue;
            if (node_value(a->v.nodes[i], lookup, lctx, &out->items[i], err) != 0) return -1;
        }
        return 0;
    case LS_ARG_INT: *out = ls_value_int(a->v.i); return 0;
    case LS_ARG_FLOAT: *out = ls_value_float(a->v.f); return 0;
    case LS_ARG_BOOL: *out = ls_value_bool(a->v.b); return 0;
    case LS_ARG_STRING:
    case LS_ARG_DEVICE:
        out->kind = LS_V_STRING;
        out->s = a->v.s;
        return 0;
    case LS_ARG_INTS:
    case LS_ARG_FLOATS:
    case LS_ARG_BOOLS:
    case LS_ARG_STRINGS:
    case LS_ARG_SYMINTS:
        *out = ls_value_list(a->n);
        for (uint32_t i = 0; i < a->n; i++) {
            ls_value *it = &out->items[i];
            switch (a->kind) {
            case LS_ARG_INTS: *it = ls_value_int(a->v.ints[i]); break;
            case LS_ARG_FLOATS: *it = ls_value_float(a->v.floats[i]); break;
            case LS_ARG_BOOLS: *it = ls_value_bool(a->v.bools[i]); break;
            case LS_ARG_STRINGS:
                it->kind = LS_V_STRING;
                it->s = a->v.strs[i];
                break;
            default:
                if (!a->v.symints[i].is_node) {
                    *it = ls_value_int(a->v.symints[i].i);
                } else {
                    ls_value v;
                    if (node_value(a->v.symints[i].node, lookup, lctx, &v, err) != 0) return -1;
                    *it = ls_value_int(ls_value_as_i64(&v));
                    ls_value_release(&v);
                }
            }
        }
        return 0;
    case LS_ARG_DTYPE:
    case LS_ARG_LAYOUT:
    case LS_ARG_MEMFMT: *out = ls_value_int(a->v.i); return 0;
    case LS_ARG_RAW: return ls_fail(err, "argument '%s' cannot be interpreted (%s)", a->name ? a->name : "?", a->v.s);
    }
    return ls_fail(err, "argument kind %d unknown", a->kind);
}

/* ---- checking values against the schema */

static bool is_scalar_kind(uint8_t k)
{
    return k == LS_V_INT || k == LS_V_FLOAT || k == LS_V_BOOL;
}

/* A Python scalar where a tensor is expected becomes a 0-dim tensor (int64, float32, bool). */
static void scalar_to_tensor(ls_value *v)
{
    ls_dtype dt = v->kind == LS_V_INT ? LS_DT_I64 : v->kind == LS_V_BOOL ? LS_DT_BOOL : LS_DT_F32;
    ls_tensor *t = ls_tensor_alloc(dt, 0, NULL);
    if (v->kind == LS_V_INT) *(int64_t *)t->data = v->i;
    else ls_tensor_set_f64(t, 0, ls_value_as_f64(v));
    *v = ls_value_tensor(t);
}

static int check_arg(ls_kctx *c, const ls_param *p, bool scalars_ok, ls_value *v)
{
    if (v->kind == LS_V_NONE) {
        if (p->optional || p->type == LS_PT_ANY || (p->has_default && p->def.kind == LS_ARG_NONE)) return 0;
        return ls_kfail(c, "argument '%s' is None", p->name);
    }
    switch ((ls_ptype)p->type) {
    case LS_PT_TENSOR:
        if (v->kind == LS_V_TENSOR) return 0;
        if (is_scalar_kind(v->kind)) {
            if (!scalars_ok) scalar_to_tensor(v);
            return 0;
        }
        break;
    case LS_PT_TENSOR_LIST:
    case LS_PT_OPT_TENSOR_LIST:
        if (v->kind != LS_V_LIST) break;
        for (uint32_t i = 0; i < v->n; i++) {
            ls_value *it = &v->items[i];
            if (it->kind == LS_V_NONE && p->type == LS_PT_OPT_TENSOR_LIST) continue;
            if (is_scalar_kind(it->kind)) scalar_to_tensor(it);
            if (it->kind != LS_V_TENSOR)
                return ls_kfail(c, "argument '%s'[%u] is %s, expected a tensor", p->name, i, ls_value_kind_text(it->kind));
        }
        return 0;
    case LS_PT_INT:
    case LS_PT_DTYPE:
    case LS_PT_LAYOUT:
    case LS_PT_MEMFMT:
        if (v->kind == LS_V_INT) return 0;
        if (v->kind == LS_V_BOOL || (v->kind == LS_V_TENSOR && v->t->numel == 1 && !ls_dtype_is_float(v->t->dtype))) {
            ls_value n = ls_value_int(ls_value_as_i64(v));
            ls_value_release(v);
            *v = n;
            return 0;
        }
        break;
    case LS_PT_INT_LIST:
        if (v->kind == LS_V_INT) return 0; /* int[1] given as one int: kernels accept both */
        if (v->kind != LS_V_LIST) break;
        for (uint32_t i = 0; i < v->n; i++)
            if (v->items[i].kind != LS_V_INT && v->items[i].kind != LS_V_BOOL)
                return ls_kfail(c, "argument '%s'[%u] is %s, expected an int", p->name, i, ls_value_kind_text(v->items[i].kind));
        return 0;
    case LS_PT_FLOAT:
    case LS_PT_SCALAR:
        if (is_scalar_kind(v->kind)) {
            if (p->type == LS_PT_FLOAT && v->kind != LS_V_FLOAT) *v = ls_value_float(ls_value_as_f64(v));
            return 0;
        }
        if (v->kind == LS_V_TENSOR && v->t->numel == 1) {
            /* a SymFloat / 0-dim tensor standing for a scalar */
            ls_value n = ls_dtype_is_float(v->t->dtype) ? ls_value_float(ls_value_as_f64(v))
                         : v->t->dtype == LS_DT_BOOL    ? ls_value_bool(ls_value_as_i64(v) != 0)
                                                        : ls_value_int(ls_value_as_i64(v));
            ls_value_release(v);
            *v = n;
            return 0;
        }
        break;
    case LS_PT_BOOL:
        if (v->kind == LS_V_BOOL) return 0;
        if (v->kind == LS_V_INT) {
            *v = ls_value_bool(v->i != 0);
            return 0;
        }
        break;
    case LS_PT_STR:
    case LS_PT_DEVICE:
        if (v->kind == LS_V_STRING) return 0;
        break;
    default: return 0;
    }
    return ls_kfail(c, "argument '%s' is %s, which does not fit the schema", p->name, ls_value_kind_text(v->kind));
}

/* Checks and coerces vals[0..n) (owned by the caller, n = the schema's count) and runs the
 * kernel. */
static int call_checked(const ls_op *op, const ls_node *node, ls_value *vals, uint32_t nargs, uint32_t n, ls_value *out,
                        ls_error *err)
{
    ls_kctx c = {.node = node, .op = op, .err = err};
    bool special = op->flags & LS_OPF_SPECIAL;
    for (uint32_t i = 0; i < n; i++) {
        if (i >= nargs) {
            const ls_param *p = &op->schema.params[i];
            if (p->has_default) {
                if (arg_value(&p->def, NULL, NULL, &vals[i], err) != 0) return -1;
            } else if (!p->optional) {
                return ls_kfail(&c, "missing argument '%s'", p->name);
            }
        }
        if (!special && check_arg(&c, &op->schema.params[i], table[op->id].flags & LK_SCALARS, &vals[i]) != 0) return -1;
    }
    return table[op->id].fn(&c, vals, n, out);
}

static int arg_count(const ls_op *op, uint32_t nargs, uint32_t *n, ls_kctx *c)
{
    bool special = op->flags & LS_OPF_SPECIAL;
    *n = special ? nargs : op->schema.nparams;
    if (special && nargs < 2) return ls_kfail(c, "expects 2 arguments, got %u", nargs);
    if (!special && nargs > *n) return ls_kfail(c, "%u arguments given, the schema has %u", nargs, *n);
    return 0;
}

int ls_kernel_call(const ls_op *op, const ls_node *node, const ls_value *args, uint32_t nargs, ls_value *out,
                   ls_error *err)
{
    ls_kctx c = {.node = node, .op = op, .err = err};
    *out = ls_value_none();
    if (!ls_kernel_for(op)) return ls_kfail(&c, "no kernel for %s", op ? op->qualname : "an unknown operator");
    uint32_t n;
    if (arg_count(op, nargs, &n, &c) != 0) return -1;
    ls_value *vals = ls_calloc(n ? n : 1, sizeof *vals);
    for (uint32_t i = 0; i < n && i < nargs; i++) vals[i] = ls_value_copy(&args[i]);
    int rc = call_checked(op, node, vals, nargs, n, out, err);
    for (uint32_t i = 0; i < n; i++) ls_value_release(&vals[i]);
    free(vals);
    return rc;
}

int ls_eval_node(const ls_node *n, ls_value_lookup lookup, void *lookup_ctx, ls_value *out, ls_error *err)
{
    *out = ls_value_none();
    ls_kctx c = {.node = n, .op = n->op, .err = err};
    if (n->kind != LS_NODE_CALL) return ls_kfail(&c, "is a %s, not an operator call", ls_node_kind_name(n->kind));
    if (!n->op) return ls_fail(err, "node %s: operator %s is unknown, so it has no kernel", n->name, n->target);
    if (n->op->id == LS_OP_call_delegate)
        return ls_kfail(&c, "a delegate call is run by the interpreter through its backend, not as a kernel");
    if (!ls_kernel_for(n->op)) return ls_kfail(&c, "no kernel for %s", n->op->qualname);
    /* an out variant (ExecuTorch dialect) carries its out arguments after the schema's: the
     * kernel computes the functional result; where it lives is the memory plan's business */
    uint16_t nargs = n->nargs;
    if (n->dialect == LS_DIALECT_EXECUTORCH && !(n->op->flags & LS_OPF_SPECIAL) && nargs > n->op->schema.nparams)
        nargs = n->op->schema.nparams;
    uint32_t cnt;
    if (arg_count(n->op, nargs, &cnt, &c) != 0) return -1;
    /* the arguments of almost every node fit on the stack */
    ls_value stack[16], *vals = cnt <= 16 ? stack : ls_malloc(sizeof *vals * cnt);
    for (uint32_t i = 0; i < cnt; i++) vals[i] = ls_value_none();
    int rc = 0;
    for (uint16_t i = 0; i < nargs && rc == 0; i++) {
        rc = arg_value(&n->args[i], lookup, lookup_ctx, &vals[i], err);
        if (rc) ls_fail_prefix(err, "node %s (%s): argument %u", n->name, n->op->qualname, i);
    }
    if (rc == 0) rc = call_checked(n->op, n, vals, nargs, cnt, out, err);
    for (uint32_t i = 0; i < cnt; i++) ls_value_release(&vals[i]);
    if (vals != stack) free(vals);
    return rc;
}
