/* The profile's `boundary` step: what TOSAPartitioner.partition (backends/arm/tosa_partitioner.py,
 * pytorch/executorch 0016af85) does to each partition after CapabilityBasedPartitioner has tagged
 * it, so that int8 crosses the delegate's edges and float does not. Transcribed from its second
 * `for node in partition.nodes` loop, with the closure is_partitioned(node, tag) (a node is inside
 * when its delegation_tag is this partition's tag) and the module's is_quant_node / is_dequant_node:
 *  - release_qdq: a quantize (is_quant_node) with an input outside the partition, and a
 *    dequantize (is_dequant_node) with a user outside it, lose their tag ("De-tag outmost q-nodes
 *    upwards and dq-nodes downwards");
 *  - integer_edges (a TOSA specification without tosa_spec.support_float()): a node still tagged
 *    with an input from outside whose first tensor (get_first_fake_tensor, _passes/arm_pass_utils.py)
 *    has a floating-point dtype loses its tag ("Was first node in partition and input ... had fp
 *    dtype"). A q or dq kept falls through to this check there too (no `continue` at 0016af85).
 * "Outside" is the partition's own tag: a node of another partition is outside, and so are
 * placeholders (tag_constant_data runs after this) and the output node.
 * TOSAPartitioner walks partition.nodes, and a node de-tagged early is outside for the nodes
 * visited after it. That is a set in torch's partitioner as read (005a1272, no order); where it is
 * an ordered dict, each new node's partition absorbs the one it merges with, so a chain comes in
 * graph order, which is the order walked here. The order
 * matters only when a node's input is itself taken out (a dq with users inside and out, read by a
 * node with integer_edges; a q reading a node taken out).
 * Later ExecuTorch (backends/arm/tosa/partitioner.py, TOSAPartitioner._tag_module, read at
 * 00f16074) walks module.graph.nodes in graph order, `continue`s after a q or dq, and also drops a
 * partition whose nodes are all q/dq or no-ops (is_noop_clone, is_noop_alias_copy, is_noop_expand,
 * is_noop_to_dim_order_copy; reject_partition): that last rule is not transcribed here. */
#include "partition_internal.h"

#include <stdio.h>

static bool is_quant(const ls_node *n)
{
    return pu_is_op(n, LS_OP_quantize_per_tensor) || pu_is_op(n, LS_OP_quantize_per_tensor_tensor) ||
           pu_is_op(n, LS_OP_quantize_per_channel);
}

static bool is_dequant(const ls_node *n)
{
    return pu_is_op(n, LS_OP_dequantize_per_tensor) || pu_is_op(n, LS_OP_dequantize_per_tensor_tensor) ||
           pu_is_op(n, LS_OP_dequantize_per_channel);
}

static const char *op_label(const ls_node *n)
{
    return n->op ? ls_op_short(n->op) : ls_target_short(n->target);
}

static void release(pt_round *r, pt_parts *ps, uint32_t pos, const char *why)
{
    ps->v[r->grp[pos]].size--;
    r->grp[pos] = -1;
    r->reason[pos] = LS_WHY_RULE;
    r->detail[pos] = ls_intern(why);
}

/* The first input of the node at pos outside partition g (float ones only when float_only), or NULL. */
static const ls_node *input_outside(pt_round *r, uint32_t pos, int32_t g, bool float_only)
{
    uint32_t k = pu_inputs(r->q->nodes[pos], &r->ids, &r->ids_cap);
    for (uint32_t a = 0; a < k; a++) {
        int32_t ip = pu_pos(&r->users, r->ids[a]);
        if (ip < 0 || r->grp[ip] == g) continue;
        const ls_node *in = r->q->nodes[ip];
        const ls_tmeta *m = in->nvals ? &in->vals[0] : NULL; /* get_first_fake_tensor */
        if (!float_only || (m && ls_dtype_is_float(m->dtype))) return in;
    }
    return NULL;
}

void pt_release_boundary(pt_round *r, pt_parts *ps)
{
    const ls_profile *p = r->prof;
    if (!p->release_qdq && !p->integer_edges) return;
    char buf[512];
    for (uint32_t i = 0; i < r->n; i++) {
        int32_t g = r->grp[i];
        if (g < 0 || !pt_is_call(r, i)) continue;
        const ls_node *n = r->q->nodes[i];
        if (p->release_qdq && is_quant(n)) {
            const ls_node *in = input_outside(r, i, g, false);
            if (in) {
                snprintf(buf, sizeof buf,
                         "%s: %s takes a partition's outermost quantize back out when its input (`%s`) is outside "
                         "it (boundary release_qdq, tosa_partitioner.py)",
                         op_label(n), p->title, in->name);
                release(r, ps, i, buf);
                continue;
            }
        }
        if (p->release_qdq && is_dequant(n)) {
            const ls_node *out = NULL;
            for (uint32_t u = r->users.off[i]; u < r->users.off[i + 1] && !out; u++) {
                uint32_t up = r->users.pos[u];
                if (r->grp[up] != g) out = r->q->nodes[up];
            }
            if (out) {
                snprintf(buf, sizeof buf,
                         "%s: %s takes a partition's outermost dequantize back out when its user (`%s`) is outside "
                         "it (boundary release_qdq, tosa_partitioner.py)",
                         op_label(n), p->title, out->name);
                release(r, ps, i, buf);
                continue;
            }
        }
        if (p->integer_edges) {
            const ls_node *in = input_outside(r, i, g, true);
            if (in) {
                snprintf(buf, sizeof buf,
                         "%s: %s (integer-only) takes a partition's first node back out when an input from outside "
                         "(`%s`) is %s (boundary integer_edges, tosa_partitioner.py)",
                         op_label(n), p->title, in->name, ls_dtype_name(in->vals[0].dtype));
                release(r, ps, i, buf);
            }
        }
    }
}
