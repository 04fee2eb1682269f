/* Quantized patterns and GEMM dependencies (private to src/passes/): the nodes XNNPACK's
 * partitioner configs take along with a node (ConfigerationBasedPartitioner.get_partition):
 * a GEMM's constant weight and bias, the dq nodes in front of a quantized op and the q after
 * it, a fused activation, dynamic quantization's choose_qparams chain. */
#ifndef LS_RULES_GEMM_H
#define LS_RULES_GEMM_H

#include "rules.h"

#define PR_MAX_DEPS 24

/* Node ids a node takes into its partition (itself not included). */
typedef struct pr_deps {
    uint32_t ids[PR_MAX_DEPS];
    uint32_t n;
} pr_deps;

/* quant_utils.py: is_quant, is_dequant, is_qparam, is_per_channel, is_dynamic_qdq. */
bool pr_is_quant(const ls_node *n);
bool pr_is_dequant(const ls_node *n);
bool pr_is_qparam(const ls_node *n);
bool pr_is_per_channel(const ls_node *n);
bool pr_is_dynamic_qdq(const pr_view *v, const ls_node *n);

/* GEMMConfig.get_deps (gemm_configs.py) for an op with LS_POP_GEMM: the precision from its
 * weight and activation (fp32, static or dynamic quantization), then the deps each needs.
 * LS_WHY_NONE with the deps (deps may be NULL), or LS_WHY_RULE with *detail. v->pos must hold
 * the users too (pu_users_take): the output side looks at them. */
ls_cpu_reason pr_gemm_deps(const pr_view *v, const ls_node *n, pr_deps *deps, const char **detail);

/* GenericNodePartitionerConfig.get_node_and_deps (generic_node_configs.py) for an op with
 * LS_POP_QUANT: when every input is a dq and the single user (through a fused activation) is a
 * q, those come along. Adds nothing otherwise. */
void pr_quant_deps(const pr_view *v, const ls_node *n, pr_deps *deps);

#endif
