/* The rules a backend profile may name, and the check of one node against a profile (rules.h).
 *
 * Each predicate transcribes a condition of an ExecuTorch partitioner (the comment above it
 * names the file and function); a profile names it by spelling ("last_dim:dim") and the node
 * it refuses gets the sentence the predicate writes, ending in "(rule <spelling>)". */
#include "rules.h"

#include <math.h>
#include <stdarg.h>
#include <ctype.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "rules_gemm.h"

const ls_node *pr_producer(const pr_view *v, uint32_t id)
{
    int32_t pos = pu_pos(v->pos, id);
    return pos >= 0 ? v->p->nodes[pos] : NULL;
}

const ls_node *pr_arg_node(const pr_view *v, const ls_node *n, int arg)
{
    if (arg < 0 || arg >= n->nargs || n->args[arg].kind != LS_ARG_NODE) return NULL;
    return pr_producer(v, n->args[arg].v.node);
}

bool pr_is_const_data(const pr_view *v, const ls_node *n)
{
    if (!n || n->kind != LS_NODE_PLACEHOLDER) return false;
    const ls_input_spec *s = ls_sig_spec(v->sig, v->p, n);
    return s && ls_input_kind_holds_data(s->kind);
}

const char *pr_refusal(const pr_view *v, const ls_rule *r, const char *fmt, ...)
{
    char msg[384];
    va_list ap;
    va_start(ap, fmt);
    vsnprintf(msg, sizeof msg, fmt, ap);
    va_end(ap);
    return ls_internf("%s %s (rule %s)", v->prof->title ? v->prof->title : v->prof->backend_id, msg, r->spelling);
}

/* ---- what the predicates read */

/* The first tensor a node reads (the "input" the partitioners measure ranks by). */
static const ls_tmeta *first_input(const pr_view *v, const ls_node *n, const ls_node **src)
{
    for (uint16_t a = 0; a < n->nargs; a++) {
        if (n->args[a].kind != LS_ARG_NODE) continue;
        const ls_node *p = pr_producer(v, n->args[a].v.node);
        const ls_tmeta *m = ls_node_tval(p);
        if (m) {
            if (src) *src = p;
            return m;
        }
    }
    return NULL;
}

static bool arg_number(const ls_arg *a, double *f, bool *is_int)
{
    if (a->kind == LS_ARG_INT) *f = (double)a->v.i, *is_int = true;
    else if (a->kind == LS_ARG_FLOAT) *f = a->v.f, *is_int = false;
    else if (a->kind == LS_ARG_BOOL) *f = a->v.b, *is_int = true;
    else return false;
    return true;
}

static const char *param_name(const ls_node *n, int arg)
{
    return n->op && arg >= 0 && arg < n->op->schema.nparams ? n->op->schema.params[arg].name : "?";
}

/* "[2, 3]" of an int list argument (or of one int) into buf. */
static const char *ints_text(const ls_arg *a, char *buf, size_t cap)
{
    size_t len = 0;
    buf[0] = 0;
    if (a->kind == LS_ARG_INT) {
        snprintf(buf, cap, "%lld", (long long)a->v.i);
        return buf;
    }
    len += (size_t)snprintf(buf + len, cap - len, "[");
    for (uint32_t k = 0; k < a->n && len < cap; k++) {
        if (a->kind == LS_ARG_INTS) len += (size_t)snprintf(buf + len, cap - len, "%s%lld", k ? ", " : "", (long long)a->v.ints[k]);
        else if (a->kind == LS_ARG_SYMINTS)
            len += (size_t)snprintf(buf + len, cap - len, "%s%s", k ? ", " : "",
                                    a->v.symints[k].is_node ? "s" : ls_internf("%lld", (long long)a->v.symints[k].i));
    }
    if (len < cap) snprintf(buf + len, cap - len, "]");
    return buf;
}

/* The tensors a node reads and returns, for the rules that look at every one: calls fn with
 * each (the producing node for an input, NULL for the node's own outputs); stops at the first
 * refusal fn returns. */
typedef const char *(*tensor_fn)(const pr_view *v, const ls_rule *r, const ls_node *n, const ls_node *src,
                                 const ls_tmeta *m);
static const char *each_tensor(const pr_view *v, const ls_rule *r, const ls_node *n, tensor_fn fn)
{
    for (uint16_t a = 0; a < n->nargs; a++) {
        const ls_arg *arg = &n->args[a];
        uint32_t k_n = arg->kind == LS_ARG_NODE ? 1 : (arg->kind == LS_ARG_NODES || arg->kind == LS_ARG_OPT_NODES) ? arg->n : 0;
        for (uint32_t k = 0; k < k_n; k++) {
            uint32_t id = arg->kind == LS_ARG_NODE ? arg->v.node : arg->v.nodes[k];
            const ls_node *src = id ? pr_producer(v, id) : NULL;
            if (!src || src->val_kind != LS_VAL_TENSOR) continue;
            const char *why = fn(v, r, n, src, &src->vals[0]);
            if (why) return why;
        }
    }
    if (n->val_kind == LS_VAL_TENSOR || n->val_kind == LS_VAL_TENSORS)
        for (uint16_t k = 0; k < n->nvals; k++) {
            const char *why = fn(v, r, n, NULL, &n->vals[k]);
            if (why) return why;
        }
    return NULL;
}

static const char *who(const ls_node *n, const ls_node *src)
{
    return src ? ls_internf("`%s`", src->name) : ls_internf("its result `%s`", n->name);
}

/* ---- the predicates */

/* XNNPACK AddConfig / SubConfig.check_constraints (generic_node_configs.py): "alpha" in kwargs
 * and not isclose(alpha, 1); Core ML _OperatorsSupportedForCoreMLBackend.should_override_support
 * (coreml_partitioner.py): add/sub.Tensor with alpha != 1. */
static const char *p_alpha_one(const pr_view *v, const ls_rule *r, const ls_node *n)
{
    double f;
    bool is_int;
    if (r->arg < 0 || r->arg >= n->nargs || !arg_number(&n->args[r->arg], &f, &is_int)) return NULL;
    if (fabs(f - 1.0) <= 1e-9 + 1e-9 * 1.0) return NULL;
    return pr_refusal(v, r, "takes only alpha=1, not alpha=%g", f);
}

/* XNNPACK SoftmaxConfig.check_constraints: dim == -1 or dim == rank - 1 of the input. */
static const char *p_last_dim(const pr_view *v, const ls_rule *r, const ls_node *n)
{
    const ls_tmeta *m = first_input(v, n, NULL);
    if (!m || r->arg < 0 || r->arg >= n->nargs || n->args[r->arg].kind != LS_ARG_INT) return NULL;
    int64_t d = n->args[r->arg].v.i;
    if (d == -1 || d == (int64_t)m->ndim - 1) return NULL;
    return pr_refusal(v, r, "takes only the last dim, not %s=%lld of a rank-%d input", param_name(n, r->arg), (long long)d,
                      m->ndim);
}

/* XNNPACK PowConfig (exponent must be the int 2), SliceCopyConfig (step 1); Vulkan's reduce
 * check (keepdim): an argument equals a value. vals[0] is the value, nvals 0 means None. */
static const char *p_arg_is(const pr_view *v, const ls_rule *r, const ls_node *n)
{
    if (r->arg < 0 || r->arg >= n->nargs) return NULL;
    const ls_arg *a = &n->args[r->arg];
    const char *name = param_name(n, r->arg);
    if (!r->nvals) {
        if (a->kind == LS_ARG_NONE) return NULL;
        return pr_refusal(v, r, "takes only %s=None", name);
    }
    double f;
    bool is_int;
    if (arg_number(a, &f, &is_int) && is_int && (int64_t)f == r->vals[0]) return NULL;
    char got[64];
    if (a->kind == LS_ARG_FLOAT) snprintf(got, sizeof got, "%g (a float)", a->v.f);
    else if (a->kind == LS_ARG_BOOL) snprintf(got, sizeof got, "%s", a->v.b ? "True" : "False");
    else if (a->kind == LS_ARG_INT) snprintf(got, sizeof got, "%lld", (long long)a->v.i);
    else snprintf(got, sizeof got, "%s", ls_arg_kind_name((ls_arg_kind)a->kind));
    const ls_param *prm = n->op && r->arg < n->op->schema.nparams ? &n->op->schema.params[r->arg] : NULL;
    if (prm && prm->type == LS_PT_BOOL)
        return pr_refusal(v, r, "takes only %s=%s, not %s=%s", name, r->vals[0] ? "True" : "False", name, got);
    return pr_refusal(v, r, "takes only %s=%lld, not %s=%s", name, (long long)r->vals[0], name, got);
}

/* XNNPACK GEMMConfig._get_weight_deps / _get_bias_deps (gemm_configs.py): is_param_node. An
 * absent optional argument (a linear without bias) passes. */
static const char *p_const_arg(const pr_view *v, const ls_rule *r, const ls_node *n)
{
    if (r->arg < 0 || r->arg >= n->nargs || n->args[r->arg].kind == LS_ARG_NONE) return NULL;
    const ls_node *src = pr_arg_node(v, n, r->arg);
    if (pr_is_const_data(v, src)) return NULL;
    return pr_refusal(v, r, "needs `%s` (arg %d) to be a parameter, buffer or constant: it is %s", param_name(n, r->arg),
                      r->arg,
                      !src ? "not a tensor"
                      : src->kind == LS_NODE_PLACEHOLDER ? "a user input"
                                                         : ls_internf("computed by `%s`", src->name));
}

/* XNNPartitionerConfig._check_inputs_are_valid_dtypes (xnnpack_config.py): every tensor input
 * of one dtype ("does not support mixed input dtypes"). */
static const char *p_same_dtype(const pr_view *v, const ls_rule *r, const ls_node *n)
{
    ls_dtype first = LS_DT_UNKNOWN;
    for (uint16_t a = 0; a < n->nargs; a++) {
        const ls_arg *arg = &n->args[a];
        uint32_t k_n = arg->kind == LS_ARG_NODE ? 1 : (arg->kind == LS_ARG_NODES || arg->kind == LS_ARG_OPT_NODES) ? arg->n : 0;
        for (uint32_t k = 0; k < k_n; k++) {
            uint32_t id = arg->kind == LS_ARG_NODE ? arg->v.node : arg->v.nodes[k];
            const ls_tmeta *m = id ? ls_node_tval(pr_producer(v, id)) : NULL;
            if (!m || m->dtype == LS_DT_UNKNOWN) continue;
            if (first == LS_DT_UNKNOWN) first = m->dtype;
            else if (m->dtype != first)
                return pr_refusal(v, r, "takes no mixed input dtypes: %s and %s", ls_dtype_name(first), ls_dtype_name(m->dtype));
        }
    }
    return NULL;
}

/* An unbacked symbol (torch names them u0, u1, ...: data-dependent sizes) among the free symbols
 * of a size expression ("u0", "Symbol('u0', integer=True)", "2*u1"). */
static bool has_unbacked_symbol(const char *e)
{
    for (const char *c = e; c && *c;) {
        if (!(isalpha((unsigned char)*c) || *c == '_')) {
            c++;
            continue;
        }
        const char *t = c;
        while (isalnum((unsigned char)*c) || *c == '_') c++;
        if (t[0] == 'u' && c - t > 1) {
            const char *d = t + 1;
            while (d < c && isdigit((unsigned char)*d)) d++;
            if (d == c) return true;
        }
    }
    return false;
}

static const char *t_no_empty(const pr_view *v, const ls_rule *r, const ls_node *n, const ls_node *src, const ls_tmeta *m)
{
    if (!src) return NULL; /* its results are not checked (_check_outputs_are_valid_dtypes: dtypes only) */
    for (int d = 0; d < m->ndim; d++)
        if (has_unbacked_symbol(m->sym[d]))
            return pr_refusal(v, r, "takes no tensor of data-dependent size: `%s` has size %s in dim %d", src->name,
                              m->sym[d], d);
    if (ls_tmeta_numel(m) != 0) return NULL;
    return pr_refusal(v, r, "takes no empty tensors: `%s` has 0 elements", src->name);
}

/* XNNPartitionerConfig._check_inputs_are_valid_dtypes (xnnpack_config.py, the version with the
 * mixed-dtype check, newer than 2a8b752a): "XNNPACK does not support empty tensors. But we can't
 * get numel() for unbacked symints, so we conservatively bail out here if any dimension of the
 * tensor is unbacked symint" (has_free_unbacked_symbols). Its inputs only. */
static const char *p_no_empty(const pr_view *v, const ls_rule *r, const ls_node *n)
{
    return each_tensor(v, r, n, t_no_empty);
}

/* XNNPartitionerConfig._check_inputs_are_valid_dtypes / _check_outputs_are_valid_dtypes: an
 * input or a result that is not a tensor (a SymInt) refuses the node. */
static const char *p_tensor_args(const pr_view *v, const ls_rule *r, const ls_node *n)
{
    for (uint16_t a = 0; a < n->nargs; a++) {
        const ls_arg *arg = &n->args[a];
        if (arg->kind == LS_ARG_SYMINTS)
            for (uint32_t k = 0; k < arg->n; k++)
                if (arg->v.symints[k].is_node) {
                    const ls_node *src = pr_producer(v, arg->v.symints[k].node);
                    return pr_refusal(v, r, "takes only tensor inputs: `%s` is a SymInt", src ? src->name : "?");
                }
        if (arg->kind != LS_ARG_NODE) continue;
        const ls_node *src = pr_producer(v, arg->v.node);
        if (src && src->val_kind != LS_VAL_TENSOR && src->val_kind != LS_VAL_TENSORS && src->val_kind != LS_VAL_NONE)
            return pr_refusal(v, r, "takes only tensor inputs: `%s` is %s", src->name,
                              src->val_kind == LS_VAL_SYMINT ? "a SymInt" : "not a tensor");
    }
    if (n->val_kind == LS_VAL_SYMINT || n->val_kind == LS_VAL_OTHER)
        return pr_refusal(v, r, "returns only tensors: `%s` is %s", n->name, n->val_kind == LS_VAL_SYMINT ? "a SymInt" : "not a tensor");
    return NULL;
}

static const char *t_static(const pr_view *v, const ls_rule *r, const ls_node *n, const ls_node *src, const ls_tmeta *m)
{
    for (int d = 0; d < m->ndim; d++)
        if (m->sym[d]) return pr_refusal(v, r, "takes only static shapes: %s has size %s in dim %d", who(n, src), m->sym[d], d);
    return NULL;
}

static const char *t_no_zero_dim(const pr_view *v, const ls_rule *r, const ls_node *n, const ls_node *src,
                                 const ls_tmeta *m)
{
    for (int d = 0; d < m->ndim; d++)
        if (!m->sym[d] && m->sizes[d] == 0)
            return pr_refusal(v, r, "takes no dimension of size 0: %s has size 0 in dim %d", who(n, src), d);
    return NULL;
}

/* XNNPACK SliceCopyConfig.check_constraints (generic_node_configs.py): every dimension of the
 * input and of the output an int and not 0 ("output tensor has invalid shape ... Expecting
 * non-zero, int values."), the output too, which the common no_empty does not check. */
static const char *p_no_zero_dim(const pr_view *v, const ls_rule *r, const ls_node *n)
{
    return each_tensor(v, r, n, t_no_zero_dim);
}

/* XNNPACK SliceCopyConfig and UpsampleBilinear2dConfig (is_shape_dynamic), ViewCopyConfig
 * (symbolic reshape): no symbolic size in what the node reads or returns. */
static const char *p_static_shape(const pr_view *v, const ls_rule *r, const ls_node *n)
{
    return each_tensor(v, r, n, t_static);
}

static const char *t_max_rank(const pr_view *v, const ls_rule *r, const ls_node *n, const ls_node *src, const ls_tmeta *m)
{
    if (m->ndim <= r->vals[0]) return NULL;
    return pr_refusal(v, r, "takes tensors of rank at most %lld: %s has rank %d", (long long)r->vals[0], who(n, src), m->ndim);
}

/* Vulkan VulkanSupportedOperators._check_node_support: "op does not support high dim tensors"
 * (utils.op_contains_high_dim_tensor: rank above 4) unless the op supports it. */
static const char *p_max_rank(const pr_view *v, const ls_rule *r, const ls_node *n)
{
    return each_tensor(v, r, n, t_max_rank);
}

/* XNNPACK MeanDimConfig (input rank 4), PreluConfig; ConvolutionConfig (weight rank - 2 <= 2):
 * the rank of a tensor argument, exactly (rank_is) or at most (rank_le). */
static const char *p_rank(const pr_view *v, const ls_rule *r, const ls_node *n, bool at_most)
{
    const ls_tmeta *m = ls_node_tval(pr_arg_node(v, n, r->arg));
    if (!m) return NULL;
    if (at_most ? m->ndim <= r->vals[0] : m->ndim == r->vals[0]) return NULL;
    return pr_refusal(v, r, "takes `%s` of rank %s%lld only, not rank %d", param_name(n, r->arg), at_most ? "at most " : "",
                      (long long)r->vals[0], m->ndim);
}
static const char *p_rank_is(const pr_view *v, const ls_rule *r, const ls_node *n)
{
    return p_rank(v, r, n, false);
}
static const char *p_rank_le(const pr_view *v, const ls_rule *r, const ls_node *n)
{
    return p_rank(v, r, n, true);
}

static int cmp_i64(const void *a, const void *b)
{
    int64_t x = *(const int64_t *)a, y = *(const int64_t *)b;
    return x < y ? -1 : x > y;
}

/* XNNPACK MeanDimConfig: normalize_mean_dims(dims, rank) sorted == [2, 3]. */
static const char *p_dims_are(const pr_view *v, const ls_rule *r, const ls_node *n)
{
    const ls_tmeta *m = first_input(v, n, NULL);
    if (!m || r->arg < 0 || r->arg >= n->nargs) return NULL;
    const ls_arg *a = &n->args[r->arg];
    int64_t got[8];
    uint32_t k = 0;
    if (a->kind == LS_ARG_INT) got[k++] = a->v.i;
    else if (a->kind == LS_ARG_INTS)
        for (uint32_t i = 0; i < a->n && k < 8; i++) got[k++] = a->v.ints[i];
    for (uint32_t i = 0; i < k; i++)
        if (got[i] < 0) got[i] += m->ndim;
    qsort(got, k, sizeof *got, cmp_i64);
    bool same = k == r->nvals;
    for (uint32_t i = 0; same && i < k; i++) same = got[i] == r->vals[i];
    if (same) return NULL;
    char want[64], have[64];
    size_t wl = 0;
    want[0] = 0;
    for (uint32_t i = 0; i < r->nvals; i++) wl += (size_t)snprintf(want + wl, sizeof want - wl, "%s%lld", i ? ", " : "", (long long)r->vals[i]);
    return pr_refusal(v, r, "takes only %s [%s] (of a rank-%d input), not %s", param_name(n, r->arg), want, m->ndim,
                      ints_text(a, have, sizeof have));
}

/* Vulkan's check_reduce_node (op_registry.py): a dim list of exactly one entry. */
static const char *p_list_len(const pr_view *v, const ls_rule *r, const ls_node *n)
{
    if (r->arg < 0 || r->arg >= n->nargs) return NULL;
    const ls_arg *a = &n->args[r->arg];
    if (a->kind != LS_ARG_INTS && a->kind != LS_ARG_SYMINTS) return NULL; /* "isinstance(dim_list, list)" */
    if ((int64_t)a->n == r->vals[0]) return NULL;
    char have[64];
    return pr_refusal(v, r, "takes %s of %lld entr%s only, not %s", param_name(n, r->arg), (long long)r->vals[0],
                      r->vals[0] == 1 ? "y" : "ies", ints_text(a, have, sizeof have));
}

/* XNNPACK CatConfig: len(node.all_input_nodes) >= 2. */
static const char *p_min_inputs(const pr_view *v, const ls_rule *r, const ls_node *n)
{
    uint32_t ids[64], k = 0;
    for (uint16_t a = 0; a < n->nargs; a++) {
        const ls_arg *arg = &n->args[a];
        uint32_t k_n = arg->kind == LS_ARG_NODE ? 1 : (arg->kind == LS_ARG_NODES || arg->kind == LS_ARG_OPT_NODES) ? arg->n : 0;
        for (uint32_t j = 0; j < k_n; j++) {
            uint32_t id = arg->kind == LS_ARG_NODE ? arg->v.node : arg->v.nodes[j];
            bool seen = !id;
            for (uint32_t s = 0; s < k && !seen; s++) seen = ids[s] == id;
            if (!seen && k < 64) ids[k++] = id;
        }
    }
    if ((int64_t)k >= r->vals[0]) return NULL;
    return pr_refusal(v, r, "takes at least %lld input tensors, not %u", (long long)r->vals[0], k);
}

/* XNNPACK ToDimOrderCopyConfig; Vulkan check_dim_order_copy_node: no dtype conversion. */
static const char *p_same_io_dtype(const pr_view *v, const ls_rule *r, const ls_node *n)
{
    const ls_tmeta *in = first_input(v, n, NULL), *out = ls_node_tval(n);
    if (!in || !out || in->dtype == out->dtype) return NULL;
    return pr_refusal(v, r, "takes no dtype conversion: %s to %s", ls_dtype_name(in->dtype), ls_dtype_name(out->dtype));
}

/* XNNPACK ConstantPadConfig: "XNNPACK does not support negative padding values". */
static const char *p_nonneg(const pr_view *v, const ls_rule *r, const ls_node *n)
{
    if (r->arg < 0 || r->arg >= n->nargs) return NULL;
    const ls_arg *a = &n->args[r->arg];
    bool neg = false;
    for (uint32_t k = 0; k < a->n; k++)
        neg |= (a->kind == LS_ARG_INTS && a->v.ints[k] < 0) ||
               (a->kind == LS_ARG_SYMINTS && !a->v.symints[k].is_node && a->v.symints[k].i < 0);
    if (!neg) return NULL;
    char have[96];
    return pr_refusal(v, r, "takes no negative %s: %s", param_name(n, r->arg), ints_text(a, have, sizeof have));
}

/* XNNPACK ViewCopyConfig: no symbolic size and at most one inferred (-1) dimension. */
static const char *p_one_inferred(const pr_view *v, const ls_rule *r, const ls_node *n)
{
    if (r->arg < 0 || r->arg >= n->nargs) return NULL;
    const ls_arg *a = &n->args[r->arg];
    uint32_t inferred = 0;
    char have[96];
    for (uint32_t k = 0; k < a->n; k++) {
        if (a->kind == LS_ARG_SYMINTS && a->v.symints[k].is_node)
            return pr_refusal(v, r, "takes no symbolic reshape: %s %s", param_name(n, r->arg), ints_text(a, have, sizeof have));
        int64_t s = a->kind == LS_ARG_INTS ? a->v.ints[k] : a->kind == LS_ARG_SYMINTS ? a->v.symints[k].i : 0;
        inferred += s == -1;
    }
    if (inferred <= 1) return NULL;
    return pr_refusal(v, r, "takes only one inferred dimension, not %u in %s", inferred, ints_text(a, have, sizeof have));
}

static const char *t_no_bool(const pr_view *v, const ls_rule *r, const ls_node *n, const ls_node *src, const ls_tmeta *m)
{
    if (m->dtype != LS_DT_BOOL) return NULL;
    return pr_refusal(v, r, "takes no bool tensors: %s is bool", who(n, src));
}

/* Vulkan VulkanSupportedOperators.op_node_is_compatible with skip_bool_tensors:
 * utils.op_contains_bool_tensor. */
static const char *p_no_bool(const pr_view *v, const ls_rule *r, const ls_node *n)
{
    return each_tensor(v, r, n, t_no_bool);
}

/* Vulkan VulkanSupportedOperators.is_linear_permute: a permute or t whose single user is an mm
 * or addmm is taken only when that GEMM is ("Skip so that the permute can be fused into a linear
 * by another backend"). */
static const char *p_linear_permute(const pr_view *v, const ls_rule *r, const ls_node *n)
{
    int32_t pos = pu_pos(v->pos, n->id);
    if (pos < 0 || !v->pos->off || pu_nusers(v->pos, (uint32_t)pos) != 1) return NULL;
    const ls_node *u = v->p->nodes[v->pos->pos[v->pos->off[pos]]];
    if (!pu_is_op(u, LS_OP_mm) && !pu_is_op(u, LS_OP_addmm)) return NULL;
    const char *why;
    if (pr_check_node(v, u, 0, &why) == LS_WHY_NONE) return NULL;
    return pr_refusal(v, r, "leaves a permute that feeds a GEMM it does not take (`%s`) to a backend that fuses it into a linear",
                      u->name);
}

/* ---- the table */

enum { AK_NONE, AK_ARG, AK_INT, AK_ARG_VALUE, AK_ARG_INTS, AK_ARG_INT };
typedef const char *(*pred_fn)(const pr_view *v, const ls_rule *r, const ls_node *n);
static const struct pred {
    const char *name;
    uint8_t form; /* AK_*: what follows the colon */
    pred_fn fn;
} preds[] = {
    {"alpha_one", AK_NONE, p_alpha_one},         {"last_dim", AK_ARG, p_last_dim},
    {"arg_is", AK_ARG_VALUE, p_arg_is},          {"const_arg", AK_ARG, p_const_arg},
    {"same_dtype", AK_NONE, p_same_dtype},       {"no_empty", AK_NONE, p_no_empty},
    {"tensor_args", AK_NONE, p_tensor_args},     {"static_shape", AK_NONE, p_static_shape},
    {"max_rank", AK_INT, p_max_rank},            {"rank_is", AK_ARG_INT, p_rank_is},
    {"rank_le", AK_ARG_INT, p_rank_le},          {"dims_are", AK_ARG_INTS, p_dims_are},
    {"list_len", AK_ARG_INT, p_list_len},        {"min_inputs", AK_INT, p_min_inputs},
    {"same_io_dtype", AK_NONE, p_same_io_dtype}, {"nonneg", AK_ARG, p_nonneg},
    {"one_inferred", AK_ARG, p_one_inferred},    {"no_bool", AK_NONE, p_no_bool},
    {"linear_permute", AK_NONE, p_linear_permute}, {"no_zero_dim", AK_NONE, p_no_zero_dim},
};
#define NPREDS (sizeof preds / sizeof preds[0])

const char *pr_rule_names(void)
{
    static char names[512];
    if (!names[0]) {
        size_t len = 0;
        for (size_t i = 0; i < NPREDS; i++) len += (size_t)snprintf(names + len, sizeof names - len, "%s%s", i ? ", " : "", preds[i].name);
    }
    return names;
}

/* An argument by schema position or name. */
static int parse_arg(const char *where, const char *spelling, const char *text, size_t len, const ls_op *op, int8_t *out,
                     ls_error *err)
{
    if (!op) return ls_fail(err, "%s: rule '%s' names an argument: give it in an op's \"rules\"", where, spelling);
    char buf[64];
    if (len == 0 || len >= sizeof buf) return ls_fail(err, "%s: rule '%s': no argument", where, spelling);
    memcpy(buf, text, len);
    buf[len] = 0;
    char *end;
    long k = strtol(buf, &end, 10);
    if (*end == 0) {
        if (k < 0 || k >= op->schema.nparams)
            return ls_fail(err, "%s: rule '%s': %s has no argument %ld", where, spelling, op->qualname, k);
        *out = (int8_t)k;
        return 0;
    }
    for (int i = 0; i < op->schema.nparams; i++)
        if (strcmp(op->schema.params[i].name, buf) == 0) {
            *out = (int8_t)i;
            return 0;
        }
    return ls_fail(err, "%s: rule '%s': %s has no argument '%s'", where, spelling, op->qualname, buf);
}

static int parse_int(const char *where, const char *spelling, const char *text, int64_t *out, ls_error *err)
{
    char *end;
    long long v = strtoll(text, &end, 10);
    if (end == text || (*end && *end != ',')) return ls_fail(err, "%s: rule '%s': '%s' is not an integer", where, spelling, text);
    *out = v;
    return 0;
}

int pr_parse_rule(const char *where, const char *spelling, const ls_op *op, ls_rule *out, ls_error *err)
{
    memset(out, 0, sizeof *out);
    out->arg = -1;
    out->spelling = ls_intern(spelling);
    const char *colon = strchr(spelling, ':');
    size_t nl = colon ? (size_t)(colon - spelling) : strlen(spelling);
    const struct pred *pd = NULL;
    for (size_t i = 0; i < NPREDS && !pd; i++)
        if (strlen(preds[i].name) == nl && strncmp(preds[i].name, spelling, nl) == 0) pd = &preds[i];
    if (!pd) return ls_fail(err, "%s: unknown rule '%s' (rules: %s)", where, spelling, pr_rule_names());
    out->pred = (uint8_t)(pd - preds);
    const char *rest = colon ? colon + 1 : NULL;
    if (pd->form == AK_NONE) {
        if (rest) return ls_fail(err, "%s: rule '%s' takes no argument", where, spelling);
        if (pd->fn == p_alpha_one) { /* reads the schema's "alpha" */
            if (!op) return ls_fail(err, "%s: rule 'alpha_one' belongs to an op's \"rules\"", where);
            for (int i = 0; i < op->schema.nparams; i++)
                if (strcmp(op->schema.params[i].name, "alpha") == 0) out->arg = (int8_t)i;
            if (out->arg < 0) return ls_fail(err, "%s: rule 'alpha_one': %s has no alpha", where, op->qualname);
        }
        return 0;
    }
    if (!rest || !*rest) return ls_fail(err, "%s: rule '%s' needs an argument after ':'", where, spelling);
    if (pd->form == AK_INT) {
        out->nvals = 1;
        return parse_int(where, spelling, rest, &out->vals[0], err);
    }
    const char *eq = strchr(rest, '=');
    if (pd->form == AK_ARG) {
        if (eq) return ls_fail(err, "%s: rule '%s' takes an argument, no '='", where, spelling);
        return parse_arg(where, spelling, rest, strlen(rest), op, &out->arg, err);
    }
    if (!eq) return ls_fail(err, "%s: rule '%s' needs ARG=VALUE", where, spelling);
    if (parse_arg(where, spelling, rest, (size_t)(eq - rest), op, &out->arg, err) != 0) return -1;
    const char *val = eq + 1;
    if (pd->form == AK_ARG_VALUE) {
        if (strcmp(val, "none") == 0 || strcmp(val, "None") == 0) return 0; /* nvals 0: None */
        out->nvals = 1;
        if (strcmp(val, "true") == 0 || strcmp(val, "True") == 0) return (out->vals[0] = 1), 0;
        if (strcmp(val, "false") == 0 || strcmp(val, "False") == 0) return (out->vals[0] = 0), 0;
        return parse_int(where, spelling, val, &out->vals[0], err);
    }
    if (pd->form == AK_ARG_INT) {
        out->nvals = 1;
        return parse_int(where, spelling, val, &out->vals[0], err);
    }
    /* AK_ARG_INTS: "a,b,c" */
    for (const char *p = val; *p;) {
        if (out->nvals == 4) return ls_fail(err, "%s: rule '%s': at most 4 values", where, spelling);
        if (parse_int(where, spelling, p, &out->vals[out->nvals++], err) != 0) return -1;
        const char *c = strchr(p, ',');
        if (!c) break;
        p = c + 1;
    }
    qsort(out->vals, out->nvals, sizeof out->vals[0], cmp_i64);
    return 0;
}

/* ---- the check */

static ls_cpu_reason dtype_reason(ls_dtype d, uint32_t allowed, const char **detail)
{
    if (d == LS_DT_UNKNOWN || (allowed & LS_DTYPE_BIT(d))) return LS_WHY_NONE;
    *detail = ls_internf("%s not supported", ls_dtype_name(d));
    return LS_WHY_DTYPE;
}

ls_cpu_reason pr_check_node(const pr_view *v, const ls_node *n, uint32_t skip_id, const char **detail)
{
    *detail = NULL;
    if (!n->op) {
        *detail = n->reason == LS_WHY_UNKNOWN_OP ? n->reason_detail
                                                 : ls_internf("%s is not in lowerscope's operator table", n->target ? n->target : "?");
        return LS_WHY_UNKNOWN_OP;
    }
    if ((unsigned)n->op->id >= LS_OP_COUNT) { /* declared by --ops: no profile lists it */
        *detail = ls_internf("%s is a custom operator (--ops): no backend profile takes it", n->op->qualname);
        return LS_WHY_OP_UNSUPPORTED;
    }
    const ls_profile_op *po = &v->prof->ops[n->op->id];
    uint32_t allowed = po->dtypes;
    if (!allowed) return LS_WHY_OP_UNSUPPORTED;
    for (uint16_t a = 0; a < n->nargs; a++) {
        const ls_arg *arg = &n->args[a];
        uint32_t k_n = arg->kind == LS_ARG_NODE ? 1 : (arg->kind == LS_ARG_NODES || arg->kind == LS_ARG_OPT_NODES) ? arg->n : 0;
        for (uint32_t k = 0; k < k_n; k++) {
            uint32_t id = arg->kind == LS_ARG_NODE ? arg->v.node : arg->v.nodes[k];
            if (!id || id == skip_id) continue; /* a mask folded to int64 positions */
            const ls_node *src = pr_producer(v, id);
            if (!src || src->val_kind != LS_VAL_TENSOR) continue;
            ls_cpu_reason why = dtype_reason(src->vals[0].dtype, allowed, detail);
            if (why != LS_WHY_NONE) return why;
        }
    }
    if (n->val_kind == LS_VAL_TENSOR || n->val_kind == LS_VAL_TENSORS)
        for (uint16_t k = 0; k < n->nvals; k++) {
            ls_cpu_reason why = dtype_reason(n->vals[k].dtype, allowed, detail);
            if (why != LS_WHY_NONE) return why;
        }
    for (uint32_t i = 0; i < v->prof->n_node_rules; i++) {
        const ls_rule *r = &v->prof->rules[i];
        if ((*detail = preds[r->pred].fn(v, r, n)) != NULL) return LS_WHY_RULE;
    }
    for (uint32_t i = 0; i < po->n_rules; i++) {
        const ls_rule *r = &v->prof->rules[po->first_rule + i];
        if ((*detail = preds[r->pred].fn(v, r, n)) != NULL) return LS_WHY_RULE;
    }
    if (po->flags & LS_POP_GEMM) return pr_gemm_deps(v, n, NULL, detail);
    return LS_WHY_NONE;
}
