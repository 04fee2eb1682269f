/* Backend profiles: what a backend takes, as data. The partitioner asks a profile which ops
 * (and which dtypes of their tensors) a backend supports, which argument conditions refuse a
 * node (rules: predicates from a small table, src/passes/rules.c), which partitioner numbers
 * the partitions (torch's CapabilityBasedPartitioner or ExecuTorch's GroupBasedPartitioner),
 * which constants and buffers go into its delegates, what to_edge must keep whole for it
 * (ops_to_not_decompose) and which passes its documented flow runs before partitioning. One
 * profile is built in ("bundled", the bundled delegate); the profiles of real backends ship
 * with lowerscope (profiles/NAME.json, compiled into the binary: --backend xnnpack) and others
 * load from JSON files. docs/backends.md documents every field and the source it mirrors. */
#ifndef LS_PROFILE_H
#define LS_PROFILE_H

#include <stdbool.h>
#include <stdint.h>

#include "common.h"
#include "dtype.h"
#include "ops.h"

#define LS_DTYPE_BIT(d) (1u << (unsigned)(d))

/* Which partitioner groups the supported nodes into partitions and numbers them. */
typedef enum ls_partitioner_kind {
    LS_PARTITIONER_CAPABILITY, /* torch.fx CapabilityBasedPartitioner (Core ML, MLX, Vulkan, QNN) */
    LS_PARTITIONER_GROUP,      /* ExecuTorch GroupBasedPartitioner through ConfigerationBasedPartitioner (XNNPACK) */
} ls_partitioner_kind;

/* Which constant data (parameters, buffers, lifted constants) a delegate takes. */
typedef enum ls_take_kind {
    LS_TAKE_NONE, /* none: every constant is passed in as a delegate input */
    LS_TAKE_ALL,  /* tag_constant_data: every constant read by a partition */
    LS_TAKE_DEPS, /* only what the op entries pull in (GEMM weights and biases, quantization parameters) */
} ls_take_kind;

/* A rule: a predicate of the C table (rules.c) with its arguments, as the profile spells it. */
typedef struct ls_rule {
    uint8_t pred;   /* the predicate (rules.c) */
    int8_t arg;     /* the schema argument it reads, -1 for none */
    uint8_t nvals;
    int64_t vals[4]; /* integer or boolean values (dims, a rank, an exponent) */
    const char *spelling; /* "const_arg:1", "last_dim:dim" (interned) */
} ls_rule;

enum {
    LS_POP_KEEP = 1 << 0,  /* ops_to_not_decompose: to_edge keeps the composite when the profile takes the node */
    LS_POP_QUANT = 1 << 1, /* static quantization: dq inputs and the q after it (and a fused activation) join it */
    LS_POP_GEMM = 1 << 2,  /* a GEMM: weight and bias must be constant (or dq of constants), and come along */
};

#define LS_MAX_FUSED 3

/* What a profile says about one operator. */
typedef struct ls_profile_op {
    uint32_t dtypes;     /* the dtypes its tensors may have (LS_DTYPE_BIT mask); 0 = not supported */
    uint32_t first_rule; /* its rules: rules[first_rule .. first_rule + n_rules) */
    uint16_t n_rules;
    uint8_t flags;       /* LS_POP_* */
    int8_t weight, bias, act; /* LS_POP_GEMM: the schema positions of weight, bias (-1: none) and activation */
    uint16_t fused[LS_MAX_FUSED]; /* ops whose single user fuses into it (XNNPACK's fused_act), LS_OP_COUNT = none */
} ls_profile_op;

#define LS_MAX_FLOW 4

typedef struct ls_profile {
    const char *name;       /* "bundled", "xnnpack" (interned) */
    const char *title;      /* how messages name the backend: "XNNPACK" (interned) */
    const char *backend_id; /* "BundledBackend" (interned) */
    const char *tag_prefix; /* "tag": tags are tag0, tag1, ... as the partitioner numbers them */
    const char *path;       /* the JSON file it came from; "<embedded>/NAME.json" for a shipped one; NULL when built in */
    const char *follows;    /* the ExecuTorch commit and files it mirrors (interned), NULL for none */
    bool snapshot;          /* the op list is a snapshot of what a compiler the backend runs accepts */
    bool stateful;          /* tag_mutated_buffer: mutable buffers become the delegate's state */
    bool fold_masks;        /* constant boolean masks of index.Tensor are folded to positions */
    bool single_partition;  /* one partition only; nodes that would form a cycle stay on the CPU */
    bool lower_full_graph;  /* Core ML's lower_full_graph: the partition step fails when a node stays out */
    /* boundary: what TOSAPartitioner.partition (backends/arm/tosa_partitioner.py) does after
     * CapabilityBasedPartitioner has tagged the partitions (partition_boundary.c) */
    bool release_qdq;       /* a q with an input outside its partition, a dq with a user outside, go back out */
    bool integer_edges;     /* integer-only: a node with a floating-point input from outside goes back out */
    bool keep_supported;    /* ops_to_not_decompose: every composite the profile takes (Core ML, MLX) */
    uint8_t partitioner;    /* ls_partitioner_kind */
    uint8_t take_constants; /* ls_take_kind */
    /* passes the backend's documented flow runs before partitioning, in order (to_edge included) */
    const char *flow[LS_MAX_FLOW];
    uint8_t n_flow;
    /* rules every node must pass (rules[0 .. n_node_rules)), then the per-op rules */
    uint32_t n_node_rules;
    ls_rule *rules;
    uint32_t n_rules, rules_cap;
    ls_profile_op ops[LS_OP_COUNT];
} ls_profile;

/* The built-in profile of the bundled delegate (static, never freed). */
const ls_profile *ls_profile_bundled(void);
/* "bundled" (the built-in one), the name of a shipped profile ("xnnpack", ls_profile_shipped)
 * or a JSON file. Errors name the file and the place. */
int ls_profile_load(const char *name_or_path, ls_profile **out, ls_error *err);
/* Parses a profile from JSON text; `where` names it in messages. */
int ls_profile_parse(const char *where, const char *json, size_t len, ls_profile **out, ls_error *err);
void ls_profile_free(ls_profile *p); /* no-op for the built-in profile */

/* The profiles shipped with lowerscope (profiles/NAME.json, compiled in): their names in order,
 * and the JSON text of one (NULL when there is none of that name). */
const char *const *ls_profile_shipped(uint32_t *count);
const char *ls_profile_shipped_json(const char *name, size_t *len);

/* Whether the profile supports op at all, and the allowed dtype mask. */
static inline uint32_t ls_profile_dtypes(const ls_profile *p, const ls_op *op)
{
    return op ? p->ops[op->id].dtypes : 0;
}

/* "float32, int64, bool" for a mask, into buf. */
char *ls_dtype_mask_str(uint32_t mask, char *buf, size_t cap);

#endif
