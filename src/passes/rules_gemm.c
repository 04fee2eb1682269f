/* Quantized patterns and GEMM dependencies (rules_gemm.h), transcribed from
 * backends/xnnpack/partition/config/gemm_configs.py (GEMMConfig) and generic_node_configs.py
 * (GenericNodePartitionerConfig), with the q/dq predicates of backends/xnnpack/utils/quant_utils.py.
 * Not transcribed: AddmmConfig's source partitions (a linear decomposed into addmm/mm is taken
 * whole; lowerscope's to_edge keeps linear for XNNPACK, as to_edge_transform_and_lower does),
 * ConvolutionConfig's constant_pad_nd fusion for quantized convolutions, and
 * force_non_static_weights_for_f32_linear. */
#include "rules_gemm.h"

#include <string.h>

bool pr_is_quant(const ls_node *n)
{
    return pu_is_op(n, LS_OP_quantize_per_tensor) || pu_is_op(n, LS_OP_quantize_per_tensor_tensor) ||
           pu_is_op(n, LS_OP_quantize_per_channel);
}

bool pr_is_dequant(const ls_node *n)
{
    return pu_is_op(n, LS_OP_dequantize_per_tensor) || pu_is_op(n, LS_OP_dequantize_per_tensor_tensor) ||
           pu_is_op(n, LS_OP_dequantize_per_channel);
}

bool pr_is_qparam(const ls_node *n)
{
    return pu_is_op(n, LS_OP_choose_qparams_tensor);
}

bool pr_is_per_channel(const ls_node *n)
{
    return pu_is_op(n, LS_OP_quantize_per_channel) || pu_is_op(n, LS_OP_dequantize_per_channel);
}

static const ls_node *input_of(const pr_view *v, const ls_node *n, int arg)
{
    return n ? pr_arg_node(v, n, arg) : NULL;
}

bool pr_is_dynamic_qdq(const pr_view *v, const ls_node *n)
{
    if (!pr_is_quant(n) && !pr_is_dequant(n)) return false;
    const ls_node *scale = input_of(v, n, 1), *zp = input_of(v, n, 2);
    if (!pu_is_op(scale, LS_OP_getitem) || !pu_is_op(zp, LS_OP_getitem)) return false;
    return pr_is_qparam(input_of(v, scale, 0)) && pr_is_qparam(input_of(v, zp, 0));
}

static void add(pr_deps *d, const ls_node *n)
{
    if (!d || !n) return;
    for (uint32_t i = 0; i < d->n; i++)
        if (d->ids[i] == n->id) return;
    if (d->n < PR_MAX_DEPS) d->ids[d->n++] = n->id;
}

/* The single user of a node, or NULL (also when it has none or several). */
static const ls_node *single_user(const pr_view *v, const ls_node *n)
{
    int32_t pos = pu_pos(v->pos, n->id);
    if (pos < 0 || pu_nusers(v->pos, (uint32_t)pos) != 1) return NULL;
    return v->p->nodes[v->pos->pos[v->pos->off[pos]]];
}

static bool is_fused_act(const pr_view *v, const ls_node *n, const ls_node *act)
{
    if (!act || act->kind != LS_NODE_CALL || !act->op) return false;
    const ls_profile_op *po = &v->prof->ops[n->op->id];
    for (int k = 0; k < LS_MAX_FUSED; k++)
        if (po->fused[k] == act->op->id) return true;
    return false;
}

enum { FP32, STATIC_QUANT, DYNAMIC_QUANT };

static ls_cpu_reason refuse(const pr_view *v, const char *rule, const char **detail, const char *msg)
{
    ls_rule r = {.arg = -1, .spelling = ls_intern(rule)};
    *detail = pr_refusal(v, &r, "%s", msg);
    return LS_WHY_RULE;
}

static ls_cpu_reason need_const(const pr_view *v, const ls_node *n, int arg, const ls_node *data, const char *what,
                                const char **detail)
{
    if (pr_is_const_data(v, data)) return LS_WHY_NONE;
    const char *it = !data ? "not a tensor" : data->kind == LS_NODE_PLACEHOLDER ? "a user input" : ls_internf("computed by `%s`", data->name);
    return refuse(v, ls_internf("const_arg:%d", arg), detail,
                  ls_internf("needs a constant %s: `%s` (arg %d) is %s", what,
                             n->op->schema.params[arg].name, arg, it));
}

ls_cpu_reason pr_gemm_deps(const pr_view *v, const ls_node *n, pr_deps *deps, const char **detail)
{
    const ls_profile_op *po = &v->prof->ops[n->op->id];
    const ls_node *weight = input_of(v, n, po->weight);
    int precision = FP32;
    if (pr_is_dequant(weight)) precision = pr_is_dynamic_qdq(v, input_of(v, n, po->act)) ? DYNAMIC_QUANT : STATIC_QUANT;

    /* _get_bias_deps: "if len(node.all_input_nodes) > 2 and self.bias_idx is not None" */
    uint32_t distinct = 0, seen[8];
    for (uint16_t a = 0; a < n->nargs; a++)
        if (n->args[a].kind == LS_ARG_NODE) {
            bool dup = false;
            for (uint32_t s = 0; s < distinct && s < 8; s++) dup |= seen[s] == n->args[a].v.node;
            if (!dup && distinct < 8) seen[distinct++] = n->args[a].v.node;
        }
    if (distinct > 2 && po->bias >= 0 && po->bias < n->nargs && n->args[po->bias].kind == LS_ARG_NODE) {
        const ls_node *bias = input_of(v, n, po->bias);
        if (need_const(v, n, po->bias, bias, "bias", detail) != LS_WHY_NONE) return LS_WHY_RULE;
        add(deps, bias);
    }

    /* _get_weight_deps */
    if (precision == FP32) {
        if (need_const(v, n, po->weight, weight, "weight", detail) != LS_WHY_NONE) return LS_WHY_RULE;
        add(deps, weight);
    } else {
        const ls_node *w = input_of(v, weight, 0);
        if (!pr_is_const_data(v, w))
            return refuse(v, ls_internf("const_arg:%d", po->weight), detail,
                          ls_internf("needs a constant weight behind `%s`: its input is %s", weight->name,
                                     !w ? "not a tensor" : w->kind == LS_NODE_PLACEHOLDER ? "a user input" : ls_internf("computed by `%s`", w->name)));
        add(deps, weight);
        add(deps, w);
        if (!pr_is_per_channel(weight) && precision == DYNAMIC_QUANT)
            return refuse(v, "quant_pattern", detail, "does not take per-tensor quantized weights with dynamically quantized activations");
        if (pr_is_per_channel(weight)) {
            /* dequant_node.all_input_nodes[1:3]: the scales and zero points */
            add(deps, input_of(v, weight, 1));
            add(deps, input_of(v, weight, 2));
        }
    }

    /* _get_act_deps */
    if (precision != FP32) {
        const ls_node *dq = input_of(v, n, po->act);
        if (!pr_is_dequant(dq)) return refuse(v, "quant_pattern", detail, "needs a dequantized activation (a dq node in front of it)");
        add(deps, dq);
        if (precision == DYNAMIC_QUANT) {
            const ls_node *q = input_of(v, dq, 0);
            if (!pr_is_quant(q)) return refuse(v, "quant_pattern", detail, "needs a quantize node in front of the activation's dq");
            const ls_node *g1 = input_of(v, q, 1), *g2 = input_of(v, q, 2);
            const ls_node *cq = input_of(v, g1, 0);
            add(deps, q);
            add(deps, g1);
            add(deps, g2);
            add(deps, cq);
        }
    }

    /* _get_output_deps */
    const ls_node *user = single_user(v, n);
    if (precision == STATIC_QUANT) {
        if (!user) return refuse(v, "quant_pattern", detail, "needs a quantized node to have a single user");
        const ls_node *out = user;
        if (is_fused_act(v, n, user)) {
            add(deps, user);
            const ls_node *next = single_user(v, user);
            if (next) out = next;
        }
        if (!pr_is_quant(out)) return refuse(v, "quant_pattern", detail, "needs a quantize node after a quantized GEMM");
        add(deps, out);
    } else if (precision == FP32 && user && is_fused_act(v, n, user)) {
        add(deps, user);
    }
    return LS_WHY_NONE;
}

void pr_quant_deps(const pr_view *v, const ls_node *n, pr_deps *deps)
{
    pr_deps q = {.n = 0};
    for (uint16_t a = 0; a < n->nargs; a++) {
        const ls_arg *arg = &n->args[a];
        uint32_t k_n = arg->kind == LS_ARG_NODE ? 1 : (arg->kind == LS_ARG_NODES || arg->kind == LS_ARG_OPT_NODES) ? arg->n : 0;
        for (uint32_t k = 0; k < k_n; k++) {
            uint32_t id = arg->kind == LS_ARG_NODE ? arg->v.node : arg->v.nodes[k];
            if (!id) continue;
            const ls_node *src = pr_producer(v, id);
            if (!pr_is_dequant(src)) return; /* not every input is a dq: not quantized */
            add(&q, src);
        }
    }
    const ls_node *out = single_user(v, n);
    if (!out) return;
    if (is_fused_act(v, n, out)) {
        add(&q, out);
        const ls_node *next = single_user(v, out);
        if (next) out = next;
    }
    if (!pr_is_quant(out)) return;
    add(&q, out);
    for (uint32_t i = 0; i < q.n; i++)
        if (deps && deps->n < PR_MAX_DEPS) deps->ids[deps->n++] = q.ids[i];
}
