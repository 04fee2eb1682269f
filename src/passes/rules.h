/* What a backend profile decides about one node (private to src/passes/): the predicate table
 * its rules name, and the check the partitioner and to_edge (ops_to_not_decompose) share: the
 * op is listed, its tensors have allowed dtypes, the profile's and the op's rules hold. Every
 * refusal says which rule refused, with the node's own values ("dim=0 of a rank-3 input"). */
#ifndef LS_RULES_H
#define LS_RULES_H

#include <stdbool.h>
#include <stdint.h>

#include "pass_util.h"
#include "profile.h"

/* What a rule reads: the program, its signature and the position of every node id. */
typedef struct pr_view {
    const ls_program *p;
    const ls_sig *sig;
    const pu_users *pos; /* pu_pos_take (positions are enough) */
    const ls_profile *prof;
} pr_view;

const ls_node *pr_producer(const pr_view *v, uint32_t id);
/* The node an argument names (LS_ARG_NODE), or NULL. */
const ls_node *pr_arg_node(const pr_view *v, const ls_node *n, int arg);
/* A parameter, buffer or lifted constant placeholder (torch's is_param / is_buffer /
 * is_lifted_tensor_constant: what XNNPACK's is_param_node and exir's is_constant_data ask). */
bool pr_is_const_data(const pr_view *v, const ls_node *n);

/* Parses one rule spelling ("const_arg:1", "last_dim:dim", "arg_is:exponent=2") for op (NULL
 * for a rule every node must pass). `where` names the place in messages. */
int pr_parse_rule(const char *where, const char *spelling, const ls_op *op, ls_rule *out, ls_error *err);
/* The predicate names, for messages ("alpha_one, arg_is, ..."). */
const char *pr_rule_names(void);

/* Whether the profile takes the node, before masks and the partitioner's grouping: LS_WHY_NONE,
 * or the reason with *detail (interned). `skip_id` is an input the caller accounts for itself (a
 * mask fold_masks turns into int64 positions), 0 for none. */
ls_cpu_reason pr_check_node(const pr_view *v, const ls_node *n, uint32_t skip_id, const char **detail);

/* A refusal by rule `r`: "<title> <message> (rule <spelling>)", interned. */
const char *pr_refusal(const pr_view *v, const ls_rule *r, const char *fmt, ...) __attribute__((format(printf, 3, 4)));

#endif
