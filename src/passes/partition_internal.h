/* The partition pass's pieces (private to src/passes/): one round of partitioning for one
 * backend, shared by the pass (partition.c), the two partitioners (partition_capability.c:
 * torch's CapabilityBasedPartitioner; partition_group.c: ExecuTorch's GroupBasedPartitioner
 * with ConfigerationBasedPartitioner's node groups) and the data tagging (partition_data.c:
 * tag_constant_data, tag_mutated_buffer). */
#ifndef LS_PARTITION_INTERNAL_H
#define LS_PARTITION_INTERNAL_H

#include "pass_util.h"
#include "passes.h"
#include "rules.h"

enum { CLS_CALL = 1, CLS_COMPUTE = 2, CLS_GETITEM = 4, CLS_PLACEHOLDER = 8 };

typedef struct pt_round {
    const ls_profile *prof;
    ls_program *q;
    ls_sig sig;
    pu_users users;
    pr_view view;
    uint32_t n;
    uint8_t *reason;          /* per position: LS_WHY_NONE when supported */
    const char **detail;      /* per position */
    int32_t *grp;             /* per position: partition number or -1 */
    uint8_t *cls;             /* per position: CLS_* (read once, so later sweeps skip the nodes) */
    uint16_t *op;             /* per position: the op id of a call with a known op, else LS_OP_COUNT */
    uint32_t *ids, ids_cap;   /* scratch */
} pt_round;

static inline bool pt_is_call(const pt_round *r, uint32_t pos)
{
    return r->cls[pos] & CLS_CALL;
}

static inline const ls_node *pt_producer(const pt_round *r, uint32_t id)
{
    int32_t pos = pu_pos(&r->users, id);
    return pos >= 0 ? r->q->nodes[pos] : NULL;
}

/* A partition: the id its partitioner gives it (the tag's number) and its size. */
typedef struct pt_part {
    uint32_t torch_id;
    uint32_t size;
} pt_part;

typedef struct pt_parts {
    pt_part *v;
    uint32_t n, cap;
} pt_parts;

uint32_t pt_new_part(pt_parts *ps, uint32_t torch_id);

/* CapabilityBasedPartitioner.propose_partitions: fills r->grp and ps from r->reason (a node is
 * supported when its reason is LS_WHY_NONE). */
void pt_capability_partition(pt_round *r, pt_parts *ps, ls_pass_ctx *ctx);
/* ConfigerationBasedPartitioner.get_matched_nodes_from_configs + GroupBasedPartitioner: every
 * supported node with the deps its op entry pulls in forms a group (overlapping groups merge;
 * constant data already in a group is left to it), then the groups become partitions and merge
 * as GroupBasedPartitioner merges them. Placeholders in groups get partition numbers too. */
void pt_group_partition(pt_round *r, pt_parts *ps);

/* The profile's boundary (TOSAPartitioner.partition after CapabilityBasedPartitioner): takes the
 * outermost q/dq and, integer-only, nodes with float inputs from outside back out of their
 * partitions, setting their reasons (partition_boundary.c). */
void pt_release_boundary(pt_round *r, pt_parts *ps);

/* tag_constant_data (take_constants "all") and tag_mutated_buffer (stateful): sets tags[] of
 * placeholders from their users' tags, with a sentence per decision. */
void pt_tag_data(pt_round *r, const char **tags, ls_pass_ctx *ctx);

#endif
