/* The program model: what torch.export's ExportedProgram holds, as the passes need it.
 *
 * A program is an ordered array of node pointers plus the graph signature, the state dict,
 * the constants and the lowered submodules. Nodes are reference-counted and shared between
 * program versions: copying a program copies the pointer array (O(n) pointers, no node data),
 * and a pass that changes a node takes a private copy first (ls_program_edit). So a history of
 * steps shares every unchanged node and tensor, and node ids stay stable across steps.
 *
 * Arguments refer to other nodes by id (not pointer, not position), so inserting and removing
 * nodes never invalidates them. Positions, name lookup and users come from an index built on
 * demand and dropped whenever the node array changes. */
#ifndef LS_PROGRAM_H
#define LS_PROGRAM_H

#include <stdbool.h>
#include <stdint.h>

#include "common.h"
#include "tensor.h"

struct ls_op;

typedef enum ls_dialect {
    LS_DIALECT_NONE = 0, /* getitem, call_delegate, placeholders: belong to no dialect */
    LS_DIALECT_ATEN,     /* torch.ops.aten.* — torch.export output (verifier ATEN or TRAINING) */
    LS_DIALECT_EDGE,     /* executorch.exir.dialects.edge.ops.* — after to_edge */
    LS_DIALECT_EXECUTORCH, /* out variants, after to_executorch's to_out_variant and in programs read
                              from a .pte: target "executorch.exir.dialects.edge.ops.aten.add.out" or
                              "aten::add.out", op the functional entry (add.Tensor), explicit out args
                              after the schema's (named "out", "out0", ...) */
} ls_dialect;
const char *ls_dialect_name(ls_dialect d); /* "ATen", "Edge", "ExecuTorch", "-" */

typedef enum ls_node_kind {
    LS_NODE_PLACEHOLDER,
    LS_NODE_CALL,     /* call_function */
    LS_NODE_GET_ATTR, /* a lowered submodule: target names program->subs[i].name */
    LS_NODE_OUTPUT,   /* the last node; args[i] is the i-th output value */
} ls_node_kind;
const char *ls_node_kind_name(ls_node_kind k);

typedef enum ls_arg_kind {
    LS_ARG_NONE,
    LS_ARG_NODE,      /* a tensor (or SymInt) produced by a node: v.node */
    LS_ARG_NODES,     /* Tensor[]: v.nodes[n] */
    LS_ARG_OPT_NODES, /* Tensor?[]: v.nodes[n], 0 = None */
    LS_ARG_INT,
    LS_ARG_INTS,
    LS_ARG_FLOAT,
    LS_ARG_FLOATS,
    LS_ARG_BOOL,
    LS_ARG_BOOLS,
    LS_ARG_STRING,
    LS_ARG_STRINGS,
    LS_ARG_SYMINTS,   /* SymInt[] mixing ints and nodes: v.symints[n] */
    LS_ARG_DTYPE,     /* v.i = ls_dtype */
    LS_ARG_LAYOUT,    /* v.i = torch.export Layout code */
    LS_ARG_MEMFMT,    /* v.i = torch.export MemoryFormat code */
    LS_ARG_DEVICE,    /* v.s = "cpu", "cuda:0" */
    LS_ARG_RAW,       /* a JSON argument we keep but do not interpret: v.s = its JSON text */
} ls_arg_kind;
const char *ls_arg_kind_name(ls_arg_kind k);

typedef struct ls_symint {
    bool is_node;
    union {
        int64_t i;
        uint32_t node;
    };
} ls_symint;

enum {
    LS_ARGF_KEYWORD = 1, /* passed by keyword */
    LS_ARGF_DEFAULT = 2, /* not in the file: filled from the operator schema's default */
};

typedef struct ls_arg {
    uint8_t kind;  /* ls_arg_kind */
    uint8_t flags; /* LS_ARGF_* */
    uint32_t n;    /* list length */
    const char *name; /* schema argument name (interned), NULL when unknown */
    union {
        uint32_t node;
        int64_t i;
        double f;
        bool b;
        const char *s; /* interned */
        uint32_t *nodes;
        int64_t *ints;
        double *floats;
        bool *bools;
        const char **strs;
        ls_symint *symints;
    } v;
} ls_arg;

/* Why a node stays on the CPU after partitioning (the partition pass sets it). */
typedef enum ls_cpu_reason {
    LS_WHY_NONE = 0,
    LS_WHY_OP_UNSUPPORTED,
    LS_WHY_DTYPE,
    LS_WHY_CYCLE,
    LS_WHY_MASK_COMPUTED,
    LS_WHY_MASK_INPUT,
    LS_WHY_MASK_PARAMETER,
    LS_WHY_MASK_MUTATED,
    LS_WHY_MASK_OTHER_INDEX,
    LS_WHY_MASK_ALL_FALSE,
    LS_WHY_UNKNOWN_OP,
    LS_WHY_NOT_COMPUTE, /* placeholders, outputs, getitems follow their producer */
    LS_WHY_RULE,        /* a rule of the profile refused it: the detail names the rule */
    LS_WHY_COUNT
} ls_cpu_reason;
const char *ls_cpu_reason_text(ls_cpu_reason r); /* "op not supported", "mask is computed", ... */
/* How the detail of LS_WHY_UNKNOWN_OP starts when the op is known but the call's arguments do not
 * fit its schema (the reader keeps the node as an unknown op; the verifier warns of it). */
#define LS_SCHEMA_MISFIT "arguments do not fit the schema lowerscope has for it"

/* The whole reason as the CLI and the UI print it (interned): a rule's sentence ("XNNPACK takes
 * only alpha=1, not alpha=2 (rule alpha_one)"), else the reason with its detail in parentheses
 * ("dtype not supported (float64 not supported)"). */
const char *ls_cpu_why(ls_cpu_reason r, const char *detail);

/* What a node produces. */
typedef enum ls_val_kind {
    LS_VAL_NONE,    /* output node, or nothing known */
    LS_VAL_TENSOR,  /* one tensor: vals[0] */
    LS_VAL_TENSORS, /* a Tensor[] (split) or a tuple (native_layer_norm, call_delegate): vals[nvals] */
    LS_VAL_SYMINT,  /* sym_size and friends */
    LS_VAL_OTHER,   /* custom objects, tokens */
} ls_val_kind;

/* What torch.export recorded about where a node came from: texts the readers set, the UI shows
 * and the .pt2 writer writes back, and no pass changes. A node holds them through one pointer to
 * an interned record, so the node clones every step makes stay small. */
typedef struct ls_node_text {
    const char *stack_trace;
    const char *module_stack; /* nn_module_stack as torch serializes it: "key,path,type;..." */
    const char *source_fn;
    const char *torch_fn;
    const char *custom; /* custom metadata JSON without delegation_tag, kept for writing */
} ls_node_text;

/* The one record with these texts (each interned, or NULL); NULL when every text is NULL. */
const ls_node_text *ls_node_text_intern(const ls_node_text *t);

/* One entry of a module_stack text, from s: its length, and in *next where the entry after it
 * starts (NULL after the last). torch joins "key,path,type" entries with ';' and escapes
 * nothing, so a ';' in a module's name or path is no separator: only one after an entry's
 * two commas is (the CLI's node and the UI's node pane list a module a line). */
size_t ls_module_stack_entry(const char *s, const char **next);
/* One entry of a source_fn_stack text ("name,target;name,target"), as ls_module_stack_entry:
 * torch splits at every ';' (the CLI's node and the UI's node pane list an entry a line). */
size_t ls_source_fn_entry(const char *s, const char **next);

/* ls_node counts its args and vals in 16 bits; readers refuse more than this. */
#define LS_MAX_NODE_ARGS 60000

typedef struct ls_node {
    uint32_t refs; /* shared between program versions; edit through ls_program_edit */
    uint32_t id;   /* stable across steps; 0 is never a node */
    uint8_t kind;  /* ls_node_kind */
    uint8_t dialect;
    uint8_t val_kind;
    uint8_t reason; /* ls_cpu_reason */
    uint16_t nargs;
    uint16_t nvals;
    const char *name;   /* interned, unique in its program */
    const char *target; /* interned: "torch.ops.aten.add.Tensor", submodule name, NULL */
    const struct ls_op *op; /* NULL for unknown targets (shown, never run or delegated) */
    ls_arg *args;       /* schema order for known ops, file order otherwise */
    const ls_tmeta *vals; /* written only through ls_node_vals_mut: they may be shared */
    /* metadata, all interned strings or NULL */
    const char *tag;          /* delegation tag */
    const char *reason_detail; /* more about `reason` ("float64 not supported") */
    const struct ls_node_text *text; /* where it came from (ls_node_texts); NULL: nothing recorded */
    bool no_copy;             /* meta["no_copy"]: this constant must not be duplicated */
    uint8_t storage;          /* LS_NODE_ARGS_INLINE | LS_NODE_VALS_SHARED: how args and vals are held */
    int64_t debug_handle;     /* 0 when none */
} ls_node;

/* Passes clone up to every node of a program, so a clone is cheap: ls_node_clone allocates the
 * node and its args array in one block (LS_NODE_ARGS_INLINE) and shares the vals of the node it
 * copies (ls_node_set_vals interns them, one copy of each distinct array: LS_NODE_VALS_INTERNED;
 * ls_node_vals_mut gives a node a reference-counted copy of its own: LS_NODE_VALS_SHARED). Set
 * args and vals through ls_node_set_args / ls_node_set_vals (never by assigning the pointers of
 * a node made by them), and change a node's vals in place only through ls_node_vals_mut. */
enum { LS_NODE_ARGS_INLINE = 1, LS_NODE_VALS_SHARED = 2, LS_NODE_VALS_INTERNED = 4 };

typedef enum ls_input_kind {
    LS_IN_USER_INPUT,
    LS_IN_PARAMETER,
    LS_IN_BUFFER,
    LS_IN_CONSTANT_TENSOR,
    LS_IN_CUSTOM_OBJ,
    LS_IN_TOKEN,
    LS_IN_CONSTANT_INPUT,
} ls_input_kind;
const char *ls_input_kind_name(ls_input_kind k); /* torch's spelling: "user_input", "parameter", ... */

typedef struct ls_input_spec {
    uint8_t kind;
    bool persistent;    /* buffers */
    const char *name;   /* the placeholder's name */
    const char *target; /* FQN of the parameter / buffer / constant; NULL for user inputs */
    const char *class_fqn; /* custom objects */
    ls_arg value;       /* constant_input: the value */
} ls_input_spec;

/* Whether the input is data the program holds (a parameter, buffer or lifted constant). */
static inline bool ls_input_kind_holds_data(uint8_t kind)
{
    return kind == LS_IN_PARAMETER || kind == LS_IN_BUFFER || kind == LS_IN_CONSTANT_TENSOR;
}
/* Where that data lives: the state dict (parameters, persistent buffers) or the constants. */
static inline bool ls_input_in_state(uint8_t kind, bool persistent)
{
    return kind == LS_IN_PARAMETER || (kind == LS_IN_BUFFER && persistent);
}

typedef enum ls_output_kind {
    LS_OUT_USER_OUTPUT,
    LS_OUT_LOSS_OUTPUT,
    LS_OUT_BUFFER_MUTATION,
    LS_OUT_PARAMETER_MUTATION,
    LS_OUT_GRADIENT_TO_PARAMETER,
    LS_OUT_GRADIENT_TO_USER_INPUT,
    LS_OUT_USER_INPUT_MUTATION,
    LS_OUT_TOKEN,
} ls_output_kind;
const char *ls_output_kind_name(ls_output_kind k);

typedef struct ls_output_spec {
    uint8_t kind;
    const char *name;   /* the output value's node name; NULL for a constant output */
    const char *target; /* mutated buffer / parameter / user input, gradient target */
} ls_output_spec;

/* A named tensor of the state dict or the constants table. t is NULL when the file held no
 * weight data (metadata-only programs); meta is always set, to an interned tmeta
 * (ls_tmeta_intern): passes copy these tables whole, and a program of 1M nodes holds some
 * 650k entries of a few distinct shapes. Give an entry new metadata by interning it. */
typedef struct ls_named_tensor {
    const char *name;
    ls_tensor *t;
    const ls_tmeta *meta;
} ls_named_tensor;

typedef struct ls_compile_spec {
    const char *key;
    ls_blob *value;
} ls_compile_spec;

/* A lowered submodule: a program inside a program, called through executorch_call_delegate. */
typedef struct ls_submodule {
    const char *name;       /* "lowered_module_0" (the get_attr target) */
    const char *backend_id; /* "BundledBackend", "XnnpackBackend" */
    struct ls_program *program;
    ls_compile_spec *specs;
    uint32_t nspecs;
    ls_blob *processed; /* backend blob from preprocess; NULL until then */
} ls_submodule;

/* A delegation tag handed out by a partitioner, with the backend it stands for
 * (PartitionResult.partition_tags). */
typedef struct ls_tag_info {
    const char *tag;
    const char *backend_id;
} ls_tag_info;

typedef struct ls_index ls_index;
typedef struct ls_tables ls_tables;

/* The file a program was read from, when that file holds more than the one program: a .pte's
 * other methods, its named data, its external-data references and every table as read
 * (pte_file.h: ls_pte_file embeds this as its first member). Reference-counted and shared by
 * every copy of the program, so every step of a history can reach the file its step 0 came
 * from (a writer re-exports what the program does not model from it). */
enum { LS_ORIGIN_PTE = 1, LS_ORIGIN_RECORDED = 2 };
typedef struct ls_origin {
    uint32_t refs;
    uint8_t kind; /* LS_ORIGIN_PTE, LS_ORIGIN_RECORDED */
    void (*destroy)(struct ls_origin *o);
    /* Why the file gave no bytes for the tensor `target` of the state dict or constants (a
     * .ptd that was not given), as a sentence naming what would; NULL when it has no reason.
     * The runtime asks before it refuses to run without the data. May be NULL. */
    const char *(*missing_data)(const struct ls_origin *o, const char *target);
} ls_origin;
ls_origin *ls_origin_ref(ls_origin *o);
void ls_origin_unref(ls_origin *o);

/* What a file recorded of the lowering that made its program (an ETRecord does), as the
 * program's origin (kind LS_ORIGIN_RECORDED): the programs of the steps before it, oldest
 * first, with their steps' names, the name of the program's own step, and the file's maps from
 * instructions to debug handles (JSON as ExecuTorch wrote them). The pipeline makes these the
 * history's steps instead of running its passes. */
typedef struct ls_recorded {
    ls_origin origin;         /* first member */
    const char *source;       /* what recorded it: "ETRecord" (interned) */
    struct ls_program **programs; /* the earlier steps (references held) */
    const char **passes;      /* their steps: "export", "to_edge", "to_backend" (interned) */
    const char **members;     /* where each came from in the file (interned) */
    uint32_t n;
    const char *pass, *member; /* the program's own step and member */
    const char *method;       /* the method the maps describe ("forward") */
    char *debug_handle_map;   /* {method: {instruction: handle(s)}}; NULL when absent */
    char *delegate_map;       /* {method: {instruction: {"name", "delegate_map"}}}; NULL when absent */
    int32_t handles_step;     /* the step (0..n, n: the program itself) whose nodes carry the maps' handles; -1 none */
    bool ids_matched;         /* the programs' node ids follow one another (the pipeline matches them once) */
} ls_recorded;
ls_recorded *ls_recorded_new(const char *source); /* one reference, through .origin */
/* The steps p's file recorded, or NULL. */
ls_recorded *ls_program_recorded(const struct ls_program *p);


/* Where the instructions of a program read from a .pte went (the .pte loader sets it; a copy of
 * the program does not carry it): instruction k of chain c is flat index chain_first[c] + k,
 * which became node node[flat] (0: no node of its own, e.g. a MoveCall, a FreeCall or a
 * buffer's write-back). ETDump events name instructions by (chain_index, instruction_id). */
typedef struct ls_instr_map {
    uint32_t n_chains;
    uint32_t *chain_first; /* n_chains + 1 entries: the last is the number of instructions */
    uint32_t *node;
} ls_instr_map;
/* An empty map: chain c holds chain_sizes[c] instructions, every node 0 to begin with. */
ls_instr_map *ls_instr_map_new(const uint32_t *chain_sizes, uint32_t n_chains);
void ls_instr_map_free(ls_instr_map *m);

enum { LS_SHARED_INPUTS, LS_SHARED_OUTPUTS, LS_SHARED_STATE, LS_SHARED_CONSTANTS, LS_SHARED_TABLES };

typedef struct ls_program {
    uint32_t refs;
    const char *name;     /* model name ("model") or submodule name */
    const char *path;     /* file it came from (for messages), interned */
    uint8_t dialect;      /* ls_dialect of the program */
    const char *verifier; /* as in the file: "ATEN", "TRAINING", "EDGE" */
    ls_node **nodes;
    uint32_t n_nodes, cap_nodes;
    ls_input_spec *inputs;
    uint32_t n_inputs;
    ls_output_spec *outputs;
    uint32_t n_outputs;
    ls_named_tensor *state_dict;
    uint32_t n_state;
    ls_named_tensor *constants;
    uint32_t n_constants;
    ls_submodule *subs;
    uint32_t n_subs;
    struct ls_named_data *named_data; /* blobs by key delegates read at init (named_data.h); NULL: none */
    ls_instr_map *instrs; /* read from a .pte: what each instruction became; NULL otherwise (owned) */
    ls_tag_info *tags; /* partition_tags of the partitioning rounds so far */
    uint32_t n_tags;
    uint32_t next_id;   /* next free node id (ids are never reused within a lineage) */
    bool has_weights;   /* false: loaded as metadata only */
    /* The file has the weights and the load read their metadata and sizes only (reader.h,
     * weight_sizes_only): the state dict and constants hold each entry's meta, no tensor. */
    bool weights_unread;
    /* The file it came from when that holds more (a .pte: every method, named data, .ptd
     * references; pte_file.h), and which of the file's methods this program is (interned;
     * NULL for a file of one program). ls_program_copy carries both. */
    ls_origin *origin;
    const char *method;
    /* The program exactly as its origin file holds it (the method a .pte reader made), so a
     * writer may put the file back as it was; ls_program_copy clears it: a pass's result, or
     * any edit, is another program. */
    bool as_read;
    /* kept from the file so a written .pt2 carries them back */
    const char *torch_version;
    int schema_major, schema_minor;
    char *extra_json; /* module_call_graph, range_constraints, opset_version... (owned) */
    /* What the to_executorch steps attach (export.h: the memory plan, the emitted .pte). Owned,
     * released with exec_free; ls_program_copy does not carry it (a new version may change what
     * it describes). */
    void *exec;
    void (*exec_free)(void *exec);
    ls_index *index;  /* built on demand, dropped on change */
    ls_tables *tables; /* name lookups of the tables beside the nodes (program_tables.c), on demand */
    /* Who holds the input specs, output specs, state dict and constants arrays once the program
     * is a step of a history (ls_program_share_tables): NULL while the program holds its own
     * (as every fresh copy does); else a reference-counted holder that steps which did not change
     * the table share. */
    struct ls_shared_table *shared[LS_SHARED_TABLES];
} ls_program;

/* ---- lifetime */
ls_program *ls_program_new(const char *name, ls_dialect dialect);
/* A new version sharing every node, tensor and submodule with p (each by reference). */
ls_program *ls_program_copy(const ls_program *p);
ls_program *ls_program_ref(ls_program *p);
void ls_program_unref(ls_program *p);
/* Before a program becomes a step of a history (the pipeline calls it): each of its input
 * specs, output specs, state dict and constants that holds the same entries as `before`'s
 * (the step before, already shared this way; may be NULL) is dropped for a reference to
 * before's, so a step that leaves a table alone costs no copy of it. A pass still works on
 * its own copies (ls_program_copy copies each table); the ls_program_set_* / put / drop
 * functions give a program its own table again first. Whether p and q share table `which`: */
void ls_program_share_tables(ls_program *p, const ls_program *before);
bool ls_program_shares_table(const ls_program *p, const ls_program *q, int which);
/* Table `which` (LS_SHARED_*) made p's own (copied if another program shares it), to be
 * changed in place. */
void ls_program_own_table(ls_program *p, int which);
/* Frees p's own tables and releases the shared ones (ls_program_unref's part). */
void ls_program_release_tables(ls_program *p);

/* ---- nodes */
/* A new node with the next id (not yet in the graph). */
ls_node *ls_node_new(ls_program *p, ls_node_kind kind, const char *name, const char *target);
/* A private copy of a node (same id), refs = 1. */
ls_node *ls_node_clone(const ls_node *n);
ls_node *ls_node_ref(ls_node *n);
void ls_node_unref(ls_node *n);
/* The node at pos, made private to p (copied if shared) so it may be modified. */
ls_node *ls_program_edit(ls_program *p, uint32_t pos);
/* Inserts n at pos (taking the caller's reference); shifts later nodes. */
void ls_program_insert(ls_program *p, uint32_t pos, ls_node *n);
void ls_program_append(ls_program *p, ls_node *n);
/* Removes and releases the node at pos. */
void ls_program_remove(ls_program *p, uint32_t pos);
/* Replaces the whole node array (takes the references in nodes; the array is copied). */
void ls_program_set_nodes(ls_program *p, ls_node **nodes, uint32_t n);
/* Call after changing a node's args or name in place (after ls_program_edit). */
void ls_program_touch(ls_program *p);
/* Gives the node at position i the id ids[i] (distinct, non-zero) and rewrites every argument
 * naming a node to match (nodes another program shares are copied first). For a program read
 * apart from the steps before it (an ETRecord's members), so that its ids say which node is
 * which from step to step, as they do in a history the passes made. */
void ls_program_renumber(ls_program *p, const uint32_t *ids);

/* ---- lookups (O(1) after the index is built; the index is rebuilt lazily after changes) */
int32_t ls_program_find(const ls_program *p, const char *name); /* position or -1 */
int32_t ls_program_pos(const ls_program *p, uint32_t id);        /* position or -1 */
ls_node *ls_program_node(const ls_program *p, uint32_t id);       /* NULL if absent */
ls_node *ls_program_output(const ls_program *p);                  /* the output node or NULL */
/* Positions of the nodes that use the node at pos, in graph order. */
const uint32_t *ls_program_users(const ls_program *p, uint32_t pos, uint32_t *count);
/* A name not used in p: base, base_1, base_2, ... (FX's rule). Interned. */
const char *ls_program_unique_name(const ls_program *p, const char *base);

/* Calls fn for every node id an argument refers to (including inside lists). */
void ls_arg_each_node(const ls_arg *a, void (*fn)(uint32_t id, void *ctx), void *ctx);
/* Rewrites every reference to old_id in the node's args to new_id (node must be private). */
bool ls_node_replace_input(ls_node *n, uint32_t old_id, uint32_t new_id);
/* Rewrites uses of old_id to new_id in every node of p (output node included). */
void ls_program_replace_uses(ls_program *p, uint32_t old_id, uint32_t new_id);

/* ---- arguments */
void ls_arg_copy(ls_arg *dst, const ls_arg *src); /* deep copy of lists */
size_t ls_arg_elem_size(uint8_t kind); /* bytes per element of a list kind, 0 for other kinds */
/* An argument as the CLI and the UI show it: node names (%ID for an id p lacks), numbers,
 * 'strings', dtypes, lists in brackets, None. */
void ls_arg_text(const struct ls_program *p, const ls_arg *a, ls_buf *b);
/* What a node's value is, as the CLI and the UI label it: "float32[2, 3]", a tuple of them in
 * parentheses, "SymInt", "object", or "" for none. */
void ls_node_type_str(const ls_node *n, char *buf, size_t cap);
/* A node on one line, as `lowerscope diff` prints it and the UI's node pane shows what a changed
 * node was: "edge.aten.add.Tensor(x, c_copy_0) [tag0]", "placeholder tensor_constant c [tag0]",
 * "get_attr lowered_module_0", "output(getitem, atan2)"; a CPU reason in braces. */
void ls_node_describe(const struct ls_program *p, const ls_node *n, ls_buf *b);
void ls_arg_free(ls_arg *a);
bool ls_arg_equal(const ls_arg *a, const ls_arg *b);
ls_arg ls_arg_node(uint32_t id);
ls_arg ls_arg_int(int64_t v);
ls_arg ls_arg_float(double v);
ls_arg ls_arg_bool(bool v);
ls_arg ls_arg_none(void);
ls_arg ls_arg_ints(const int64_t *v, uint32_t n);
ls_arg ls_arg_nodes(const uint32_t *ids, uint32_t n, bool optional);
/* Sets a node's args (takes ownership of the array and its lists). */
void ls_node_set_args(ls_node *n, ls_arg *args, uint16_t nargs);
/* The argument named `name` (schema name) or NULL. */
const ls_arg *ls_node_arg(const ls_node *n, const char *name);
/* Sets the node's value to one tensor. */
void ls_node_set_val(ls_node *n, const ls_tmeta *m);
void ls_node_set_vals(ls_node *n, ls_val_kind kind, const ls_tmeta *ms, uint16_t count);
/* The node's vals made its own (copied if another node shares them), to be changed in place. */
ls_tmeta *ls_node_vals_mut(ls_node *n);

/* ---- signature and data (looked up by name through maps built on the first lookup) */
/* Call after assigning a table's array or entries' names directly (the functions below keep
 * their maps themselves). */
void ls_program_tables_touch(ls_program *p);
void ls_program_tables_free(ls_program *p);
int32_t ls_program_input_spec(const ls_program *p, const char *placeholder); /* index or -1 */
int32_t ls_program_output_spec(const ls_program *p, const char *name);      /* first index or -1 */
void ls_program_set_inputs(ls_program *p, const ls_input_spec *specs, uint32_t n);   /* copies */
void ls_program_set_outputs(ls_program *p, const ls_output_spec *specs, uint32_t n); /* copies */
/* The state dict / constants entry with this target, or NULL. */
ls_named_tensor *ls_program_state(const ls_program *p, const char *target);
ls_named_tensor *ls_program_constant(const ls_program *p, const char *target);
/* Where a spec's data lives: the state dict for parameters and persistent buffers, the
 * constants table for tensor constants and non-persistent buffers. NULL if absent. */
ls_named_tensor *ls_program_spec_data(const ls_program *p, const ls_input_spec *s);
/* Adds or replaces an entry (takes a new reference to t; t may be NULL with meta given). */
void ls_program_put_state(ls_program *p, const char *target, ls_tensor *t, const ls_tmeta *meta);
void ls_program_put_constant(ls_program *p, const char *target, ls_tensor *t, const ls_tmeta *meta);
bool ls_program_drop_state(ls_program *p, const char *target);
bool ls_program_drop_constant(ls_program *p, const char *target);
/* The lowered submodule with this name, or NULL. */
ls_submodule *ls_program_sub(const ls_program *p, const char *name);
void ls_program_add_sub(ls_program *p, const ls_submodule *sub); /* copies, refs the program */
/* A copy of a submodule holding its own references (program, blob, compile specs). */
void ls_submodule_copy(ls_submodule *dst, const ls_submodule *src);
/* Drops what a submodule holds (program, blob, compile specs): the caller's copy after
 * ls_program_add_sub, or one that was never added. */
void ls_submodule_release(ls_submodule *s);

/* The program's named data made its own (created, or copied if another version shares it),
 * to be added to (to_backend does, with what a backend's preprocess stores). */
struct ls_named_data *ls_program_named_data_mut(ls_program *p);

/* The backend of a tag (NULL if the tag is not in p->tags). */
const char *ls_program_tag_backend(const ls_program *p, const char *tag);
void ls_program_add_tag(ls_program *p, const char *tag, const char *backend_id);

/* Bytes of all tensors a program holds (state dict + constants). */
uint64_t ls_program_weight_bytes(const ls_program *p);

/* A node's texts, never NULL (all NULL when it has none). */
/* The tensor value of a node (vals[0] of a single tensor), or NULL. */
static inline const ls_tmeta *ls_node_tval(const ls_node *n)
{
    return n && n->val_kind == LS_VAL_TENSOR && n->nvals ? &n->vals[0] : NULL;
}
static inline const ls_node_text *ls_node_texts(const ls_node *n)
{
    static const ls_node_text none;
    return n->text ? n->text : &none;
}

#endif
