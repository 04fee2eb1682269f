/* The operator table: one entry per operator overload the project knows, with its schema as
 * torch writes it ("add.Tensor(Tensor self, Tensor other, *, Scalar alpha=1) -> Tensor").
 * ATen targets (torch.ops.aten.add.Tensor), Edge targets
 * (executorch.exir.dialects.edge.ops.aten.add.Tensor) and .pte operator names (aten::add +
 * overload "out") all map to the same entry; the dialect is a property of the node's target.
 * The table itself is data: src/model/ops.def. */
#ifndef LS_OPS_H
#define LS_OPS_H

#include <stdbool.h>
#include <stdint.h>

#include "program.h"

/* The most pieces a split or chunk makes: the kernels refuse more, to_edge does not decompose
 * a chunk into more. */
#define LS_SPLIT_MAX_PIECES 65536

typedef enum ls_op_id {
#define LS_OP(id, ns, schema, out, flags) LS_OP_##id,
#include "../src/model/ops.def"
#undef LS_OP
    LS_OP_COUNT
} ls_op_id;

enum {
    LS_OPF_VIEW = 1 << 0,     /* aliases its input; to_edge turns it into its _copy form */
    LS_OPF_INPLACE = 1 << 1,  /* mutates its first argument (index_put_, copy_) */
    LS_OPF_CREATION = 1 << 2, /* makes a tensor from nothing (full, zeros, arange) */
    LS_OPF_SPECIAL = 1 << 3,  /* not an operator call: getitem, executorch_call_delegate */
    LS_OPF_COMPOSITE = 1 << 4, /* to_edge decomposes it (linear, matmul, softmax.int ...) */
    LS_OPF_CUSTOM = 1 << 5,    /* declared by the user's file of schemas (--ops): shown, never run */
};

/* Types of schema parameters and returns. */
typedef enum ls_ptype {
    LS_PT_TENSOR,
    LS_PT_TENSOR_LIST,     /* Tensor[] */
    LS_PT_OPT_TENSOR_LIST, /* Tensor?[] */
    LS_PT_INT,             /* int, SymInt */
    LS_PT_INT_LIST,        /* int[], SymInt[], int[1] */
    LS_PT_FLOAT,
    LS_PT_FLOAT_LIST,
    LS_PT_SCALAR,          /* int or float */
    LS_PT_BOOL,
    LS_PT_BOOL_LIST,
    LS_PT_STR,
    LS_PT_DTYPE,           /* ScalarType */
    LS_PT_LAYOUT,
    LS_PT_DEVICE,
    LS_PT_MEMFMT,
    LS_PT_ANY,
} ls_ptype;

#define LS_MAX_PARAMS 12
#define LS_MAX_RETURNS 4

typedef struct ls_param {
    const char *name; /* interned */
    uint8_t type;     /* ls_ptype */
    bool optional;    /* "Tensor?", "int?" */
    bool kwarg_only;  /* after "*" */
    bool mutated;     /* "Tensor(a!)" */
    bool has_default;
    int fixed_len;    /* int[2] → 2; 0 when not fixed */
    ls_arg def;       /* the default when has_default (LS_ARG_NONE for None) */
} ls_param;

typedef struct ls_schema {
    uint8_t nparams;
    uint8_t nreturns;
    bool returns_list; /* "-> Tensor[]" */
    ls_param params[LS_MAX_PARAMS];
    uint8_t returns[LS_MAX_RETURNS]; /* ls_ptype of each return */
} ls_schema;

typedef struct ls_op {
    ls_op_id id;
    const char *ns;       /* "aten", "dim_order_ops", "" for builtins */
    const char *name;     /* "add" */
    const char *overload; /* "Tensor", "default" */
    const char *qualname; /* "aten.add.Tensor" (interned) */
    const char *schema_text;
    const char *out_overload; /* overload of the out variant a .pte names ("out"), or NULL */
    uint32_t flags;
    ls_schema schema;
} ls_op;

/* The table (parsed once, on first use; schema texts are checked by the tests). */
const ls_op *ls_op_get(ls_op_id id);
const ls_op *ls_op_find(const char *ns, const char *name, const char *overload);
/* One of exir's _QUANT_PRIMITIVES (exir/operator/util.py) that lowerscope knows: quantize and
 * dequantize per tensor (and .tensor) and per channel, choose_qparams.tensor. */
bool ls_op_is_quant_primitive(const ls_op *op);
/* Parses a node target. Known spellings: "torch.ops.aten.add.Tensor",
 * "executorch.exir.dialects.edge.ops.aten.add.Tensor", "aten.add.Tensor", "aten::add.Tensor",
 * "_operator.getitem", "torch.ops.higher_order.executorch_call_delegate", and out variants
 * ("aten::add.out", "executorch.exir.dialects.edge.ops.aten.add.out": the functional entry,
 * *dialect LS_DIALECT_EXECUTORCH).
 * Returns NULL for an unknown operator; *dialect tells which spelling it was in any case. */
const ls_op *ls_op_from_target(const char *target, ls_dialect *dialect);
/* The target string of op in a dialect (interned): ATen "torch.ops.aten.add.Tensor",
 * Edge "executorch.exir.dialects.edge.ops.aten.add.Tensor", ExecuTorch (its out variant)
 * "executorch.exir.dialects.edge.ops.aten.add.out". */
const char *ls_op_target(const ls_op *op, ls_dialect dialect);
/* The op of an interned qualified name ("aten.add.Tensor"), or NULL. */
const ls_op *ls_op_by_qualname(const char *qualname);
/* The functional op whose out variant a .pte names: ("aten::add", "out") → add.Tensor. */
const ls_op *ls_op_from_out_variant(const char *ns_name, const char *overload);
/* The Edge _copy form of a view op (view → view_copy), or NULL. */
const ls_op *ls_op_copy_form(const ls_op *op);
/* Short display name: "add.Tensor" → "add", "view_copy.default" → "view_copy". */
const char *ls_op_short(const ls_op *op);
/* Short display name of any node target, known or not ("aten.foo.default" → "foo"). */
const char *ls_target_short(const char *target);

/* Operators the user declares (--ops FILE): torch schema strings that then type a node's
 * arguments like the table's own, "my_ops::foo(Tensor x, float s) -> Tensor", and give it an
 * out variant, "my_ops::foo.out(Tensor x, float s, *, Tensor(a!) out) -> Tensor(a!)" (after its
 * functional schema; an overload "out" or a keyword-only mutated Tensor makes a schema one).
 * They have ids from LS_OP_COUNT on and no kernel. Call before the first file is loaded. */
#define LS_MAX_CUSTOM_OPS 256
int ls_op_register(const char *schema, ls_error *err);
/* One schema per line; blank lines and '#' comments are skipped. Messages name the line. */
int ls_ops_load_file(const char *path, ls_error *err);

/* Parses a schema text (exposed for tests). */
int ls_schema_parse(const char *text, ls_schema *out, ls_error *err);

/* Normalises a node's args into schema order: positional and keyword args matched by name or
 * position, missing ones filled from defaults (flag LS_ARGF_DEFAULT). Fails naming the first
 * missing required or unknown argument. Args given are consumed (moved into the result). */
int ls_op_normalize_args(const ls_op *op, ls_arg *given, uint16_t ngiven, ls_arg **out, uint16_t *nout,
                         ls_error *err);

#endif
