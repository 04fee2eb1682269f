/* The bundled delegate backend ("BundledBackend") and its processed blob.
 *
 * The blob is a self-contained, versioned serialisation of a lowered submodule: its nodes
 * (op, arguments in schema order, value metadata), its user inputs and outputs, which outputs
 * write which state buffer, the constants it consumed and the initial values of its state.
 * The byte layout, the versioning rule and what the decoder checks are in
 * docs/bundled-backend.md. The decoder treats the blob as untrusted input: every count,
 * length and offset is checked before it is used, and a bad blob fails with a message. */
#ifndef LS_BUNDLED_BLOB_H
#define LS_BUNDLED_BLOB_H

#include <stdint.h>

#include "backend.h"
#include "common.h"
#include "program.h"
#include "tensor.h"

#define LS_BB_MAGIC "LSBB"
#define LS_BB_VERSION 1u
#define LS_BB_HEADER_SIZE 64u
#define LS_BB_ALIGN 64u
#define LS_BB_OPT_NONE 0xFFFFFFFFu  /* a None hole in a Tensor?[] list */
#define LS_BB_DTYPE_UNKNOWN 255u    /* value metadata whose dtype is not known */
enum { LS_BB_NODE_PLACEHOLDER = 0, LS_BB_NODE_CALL = 1 };

/* The backend object; ls_backend_find("BundledBackend") registers and returns it. */
extern const ls_backend ls_bundled_backend;
/* The inspector reading a blob of this format back as a program (blob_program.c). */
extern const ls_delegate_inspector ls_bundled_inspector;

/* What a placeholder of the submodule stands for. */
typedef enum ls_bb_role {
    LS_BB_USER_INPUT = 0, /* index = position among the delegate's user inputs */
    LS_BB_CONSTANT = 1,   /* index into constants: a consumed parameter, buffer or tensor constant */
    LS_BB_STATE = 2,      /* index into states: a consumed buffer the submodule mutates */
} ls_bb_role;

/* A tensor stored in the data section. */
typedef struct ls_bb_tensor {
    const char *name; /* the spec target (FQN), interned */
    ls_tmeta meta;    /* static shape */
    uint64_t offset;  /* from the start of the blob, 64-byte aligned */
    uint64_t nbytes;
} ls_bb_tensor;

typedef enum ls_bb_out_kind {
    LS_BB_OUT_USER = 0,  /* returned by execute, in order */
    LS_BB_OUT_STATE = 1, /* written into states[state] after the graph ran */
} ls_bb_out_kind;

typedef struct ls_bb_output {
    uint8_t kind;   /* ls_bb_out_kind */
    uint32_t state; /* LS_BB_OUT_STATE: the state written */
} ls_bb_output;

/* A decoded blob. Nodes are placeholders and calls in graph order; node i has id i + 1 and its
 * arguments refer to ids of earlier nodes, so ls_eval_node can run it with a lookup by id.
 * `output` is an LS_NODE_OUTPUT node whose args[k] is the value of outputs[k]. */
typedef struct ls_bb_graph {
    const char *name; /* the submodule program's name, for messages */
    uint8_t dialect;
    ls_node **nodes;
    uint32_t n_nodes;
    uint8_t *role;       /* per node; placeholders only */
    uint32_t *role_index; /* per node; placeholders only */
    uint32_t *inputs;    /* node index of each user input, in order */
    uint32_t n_inputs;
    ls_bb_tensor *constants;
    uint32_t n_constants;
    ls_bb_tensor *states;
    uint32_t n_states;
    ls_node *output;
    ls_bb_output *outputs;
    uint32_t n_outputs;
    uint32_t n_user_outputs;
} ls_bb_graph;

/* Serialises a lowered submodule. Fails (never stores silently) on what the backend cannot
 * carry: unknown ops, nested delegates, weights absent, a second placeholder for a data
 * target that already has a slot, a mutation of something that is not a consumed buffer. */
int ls_bb_encode(const ls_program *sub, ls_blob **out, ls_error *err);
/* Checks and decodes a blob. The graph refers to no byte of the blob (tensors are read from
 * it later with the offsets in constants/states). */
int ls_bb_decode(const ls_blob *blob, ls_bb_graph **out, ls_error *err);
void ls_bb_graph_free(ls_bb_graph *g);
/* Recomputes the header checksum (tests use it to get altered blobs past the checksum). */
void ls_bb_seal(ls_blob *blob);

#endif
