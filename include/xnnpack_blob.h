/* ExecuTorch's XNNPACK delegate blob ("XnnpackBackend"), as pytorch/executorch defines it:
 *
 *   [XH00 header][XNNGraph flatbuffer, identifier XN00 or XN01][constant data]
 *
 * The header (runtime/XNNHeader.h, XNNHeader::Parse; serialization/xnnpack_graph_serialize.py,
 * XNNHeader.to_bytes): 4 zero bytes, "XH00" at byte 4 (where a bare flatbuffer has its
 * identifier, so a blob without the header is a bare XNNGraph), u16 header length (30), u32
 * flatbuffer offset, u32 flatbuffer size, u32 constant data offset, u64 constant data size,
 * little-endian. The graph (serialization/schema.fbs, our copy in tests/schema/xnnpack.fbs):
 * xvalues (tensors, with quantization parameters), xnodes (one XNNPACK operation each, with
 * its output clamp and the debug handle of the Edge node it came from), the external input and
 * output ids, and constant_data: per constant, an offset into the constant data or a named_key
 * into the program's named data (include/named_data.h).
 *
 * The blob is untrusted: the reader checks every offset and size (header, flatbuffer through
 * flatbuf.h's verified reader, constants) and every value id a node names, and fails with
 * "NAME: PATH: what is wrong". What it reads serves the interpreter (the backend), the portable
 * twin, the UI's view inside a delegate, and `info --json`. */
#ifndef LS_XNNPACK_BLOB_H
#define LS_XNNPACK_BLOB_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#include "common.h"
#include "compare.h"
#include "named_data.h"
#include "program.h"

#define LS_XNN_BACKEND_ID "XnnpackBackend"
#define LS_XNN_MAX_DIMS 6             /* XNN_MAX_TENSOR_DIMS */
#define LS_XNN_INVALID_ID 0xFFFFFFFFu /* XNN_INVALID_VALUE_ID: no value (a missing bias) */
#define LS_XNN_FLAG_EXTERNAL_INPUT 1u /* XNN_VALUE_FLAG_EXTERNAL_INPUT */
#define LS_XNN_FLAG_EXTERNAL_OUTPUT 2u
#define LS_XNN_HEADER_SIZE 30u        /* XNNHeader::kMinSize, and the length Python writes */
#define LS_XNN_CONSTANT_ALIGN 16u     /* CONSTANT_TENSOR_ALIGNMENT (xnnpack_graph_serialize.py) */
#define LS_XNN_DEFAULT_DEBUG_HANDLE 65535u /* DEFAULT_DEBUG_HANDLE (xnnpack_preprocess.py) */

/* XNNDatatype (schema.fbs) */
typedef enum ls_xnn_datatype {
    LS_XNN_DT_INVALID = 0,
    LS_XNN_DT_FP32 = 1,
    LS_XNN_DT_FP16 = 2,
    LS_XNN_DT_QINT8 = 3,   /* per-tensor int8 */
    LS_XNN_DT_QUINT8 = 4,  /* per-tensor uint8 */
    LS_XNN_DT_QINT32 = 5,  /* per-tensor int32 (biases) */
    LS_XNN_DT_QCINT8 = 6,  /* per-channel int8 (weights) */
    LS_XNN_DT_QCINT32 = 7, /* per-channel int32 (biases) */
    LS_XNN_DT_QCINT4 = 8,  /* per-channel int4, two per byte, zero point 8 */
    LS_XNN_DT_QDINT8 = 9,  /* int8 quantized at run time, per row (dynamic) */
    LS_XNN_DT_QBINT4 = 10, /* per-channel-group (blockwise) int4 */
    LS_XNN_DT_QPINT8 = 11,
    LS_XNN_DT_INT32 = 12,
    LS_XNN_DT_PFP32 = 13,
    LS_XNN_DT_BF16 = 14,
    LS_XNN_DT_COUNT
} ls_xnn_datatype;
const char *ls_xnn_datatype_name(uint8_t dt); /* "fp32", "qcint8", ...; "datatype 17" past the enum */

/* XNNQuantParams union tags (schema.fbs) */
typedef enum ls_xnn_quant_kind {
    LS_XNN_Q_NONE = 0,
    LS_XNN_Q_PER_CHANNEL = 1,
    LS_XNN_Q_PER_TENSOR = 2,
    LS_XNN_Q_PER_TOKEN_DYNAMIC = 3,
    LS_XNN_Q_PER_CHANNEL_GROUP = 4,
} ls_xnn_quant_kind;

/* XNodeUnion tags (schema.fbs; XNNTanh, XNNExp and XNNSin follow XNNGelu in the newest schema read:
 * runtime_schema.fbs at pytorch/executorch 0144bfeb). */
#define LS_XNN_NODE_TYPES(X)                                                                                   \
    X(1, Add) X(2, FullyConnected) X(3, Softmax) X(4, Sigmoid) X(5, StaticTranspose) X(6, Clamp) X(7, Conv2d) \
    X(8, Div) X(9, StaticResizeBilinear2D) X(10, StaticConstantPad) X(11, AvgPooling2d) X(12, Minimum)         \
    X(13, DepthwiseConv2d) X(14, MaxPooling2d) X(15, Multiply) X(16, Subtract) X(17, Floor) X(18, Convert)     \
    X(19, GlobalAvgPooling2d) X(20, StaticReshape) X(21, ArgMaxPooling2d) X(22, SquareRoot) X(23, Ceiling)     \
    X(24, Hardswish) X(25, LeakyReLU) X(26, Maximum) X(27, Negate) X(28, Square) X(29, ELU) X(30, Abs)         \
    X(31, PReLU) X(32, Concatenate2) X(33, Concatenate3) X(34, Concatenate4) X(35, StaticSlice)               \
    X(36, ScaledDotProductAttention) X(37, BatchMatrixMultiply) X(38, Concatenate5) X(39, ConvTranspose2d)    \
    X(40, ReciprocalSquareRoot) X(41, Log) X(42, Gelu) X(43, Tanh) X(44, Exp) X(45, Sin)
typedef enum ls_xnn_node_type {
#define LS_XNN_ENUM_(tag, name) LS_XNN_##name = tag,
    LS_XNN_NODE_TYPES(LS_XNN_ENUM_)
#undef LS_XNN_ENUM_
    LS_XNN_NODE_TYPE_MAX = 45
} ls_xnn_node_type;
/* "XNNConv2d"; NULL for a tag the schema lowerscope follows does not have. */
const char *ls_xnn_node_type_name(uint8_t type);

typedef struct ls_xnn_value {
    uint32_t id; /* id_out: what nodes and input_ids name it by */
    uint8_t datatype, dq_datatype; /* dq_datatype: runtime_schema.fbs's older dynamic-quant marker */
    uint8_t quant;                 /* ls_xnn_quant_kind */
    uint8_t ndim;
    uint32_t dims[LS_XNN_MAX_DIMS]; /* as serialized: NHWC where the XNNPACK passes made it so */
    uint32_t constant_idx;          /* into constants; 0: not a constant */
    uint32_t external_id;           /* the delegate call's argument index, or LS_XNN_INVALID_ID */
    uint32_t flags;                 /* LS_XNN_FLAG_EXTERNAL_INPUT / _OUTPUT */
    float scale;                    /* per tensor */
    int32_t zero_point;
    int32_t channel_dim, group_size, num_nonbatch_dims;
    uint32_t n_scales; /* per channel (one per channel_dim entry) / per group (oc * ic / group_size) */
    float *scales;     /* owned; bf16 group scales are widened */
    bool scales_bf16;
    uint32_t scale_buffer_idx; /* scales stored as a constant instead (newer writers) */
} ls_xnn_value;

typedef struct ls_xnn_node {
    uint8_t type; /* ls_xnn_node_type, or a tag past LS_XNN_NODE_TYPE_MAX (kept, refused at run) */
    uint32_t debug_handle;
    bool has_min_max;
    float out_min, out_max; /* -inf, +inf without output_min_max (XNNCompiler getOutputMinMax) */
    uint32_t flags;
    uint8_t n_in, n_out;
    uint32_t in[5];  /* value ids in schema order (input, filter, bias, ...); LS_XNN_INVALID_ID: none */
    uint32_t out[2]; /* ArgMaxPooling2d has two */
    union {
        struct {
            uint32_t pad_top, pad_right, pad_bottom, pad_left, kernel_h, kernel_w, stride_h, stride_w, dilation_h,
                dilation_w, group_in, group_out, groups, adjust_h, adjust_w;
        } conv;
        struct {
            uint32_t pad_top, pad_right, pad_bottom, pad_left, pool_h, pool_w, stride_h, stride_w, dilation_h,
                dilation_w;
        } pool;
        struct {
            uint32_t n, v[LS_XNN_MAX_DIMS];
        } dims; /* StaticTranspose perm, StaticReshape new_shape */
        struct {
            uint32_t n, offsets[LS_XNN_MAX_DIMS], sizes[LS_XNN_MAX_DIMS];
        } slice;
        struct {
            uint32_t n, pre[LS_XNN_MAX_DIMS], post[LS_XNN_MAX_DIMS];
            float value;
        } pad;
        struct {
            uint32_t height, width;
        } resize;
        uint32_t axis; /* Concatenate* */
        float alpha;   /* ELU alpha, LeakyReLU negative_slope */
    } p;
} ls_xnn_node;

typedef struct ls_xnn_constant {
    uint64_t offset;       /* into the header's constant data; UINT64_MAX with a named key */
    uint64_t size;
    const char *named_key; /* interned, NULL when the bytes are in the blob */
} ls_xnn_constant;

typedef struct ls_xnn_index ls_xnn_index;

typedef struct ls_xnn_graph {
    char identifier[5]; /* "XN00" or "XN01" */
    bool has_header;
    uint32_t flatbuffer_offset, flatbuffer_size, constant_data_offset;
    uint64_t constant_data_size;
    const char *version; /* interned */
    ls_xnn_value *values;
    uint32_t n_values;
    ls_xnn_node *nodes;
    uint32_t n_nodes;
    uint32_t num_externs;
    uint32_t *input_ids, n_input_ids; /* value ids */
    uint32_t *output_ids, n_output_ids;
    ls_xnn_constant *constants; /* constant_data; entry 0 is the reserved "not a constant" */
    uint32_t n_constants;
    /* the deprecated constant_buffer (constants inside the flatbuffer): each entry's bytes, as
     * positions in the blob */
    uint64_t *buffer_pos, *buffer_size;
    uint32_t n_buffers;
    ls_xnn_index *index; /* value id → position */
} ls_xnn_graph;

/* The backend object; the registry (src/backends/registry.c) registers it. And the inspector
 * that reads its blobs into a view program (src/backends/inspect.c registers it). */
struct ls_backend;
extern const struct ls_backend ls_xnnpack_backend;
struct ls_delegate_inspector;
extern const struct ls_delegate_inspector ls_xnnpack_inspector;

/* Whether the bytes look like an XNNPACK blob: "XH00", "XN00" or "XN01" at byte 4. */
bool ls_xnn_is_blob(const uint8_t *data, size_t size);
/* Decodes and checks a blob. name is used in messages ("lowered_module_0"). */
int ls_xnn_decode(const uint8_t *data, size_t size, const char *name, ls_xnn_graph **out, ls_error *err);
void ls_xnn_graph_free(ls_xnn_graph *g);
/* The position of the value with this id, or -1. O(1). */
int32_t ls_xnn_value_pos(const ls_xnn_graph *g, uint32_t id);
/* The bytes of a constant value (constant_idx != 0) in the blob or in named (NULL with a message
 * when they are missing or shorter than the value needs). */
const uint8_t *ls_xnn_constant_bytes(const ls_xnn_graph *g, const ls_blob *blob, const ls_named_data *named,
                                     uint32_t constant_idx, uint64_t *size, ls_error *err);
/* Writes a graph as a blob (XH00 header, XN01 flatbuffer, then constant_data's bytes), as
 * serialize_xnnpack_binary lays it out. g->index and the header fields are not read. */
int ls_xnn_encode(const ls_xnn_graph *g, const uint8_t *constant_data, uint64_t constant_size, ls_blob **out,
                  ls_error *err);
/* Bytes a value of this datatype and shape holds (int4 kinds: two per byte, each row rounded
 * up, as XNNPACK packs them); 0 when it overflows. */
uint64_t ls_xnn_value_nbytes(const ls_xnn_value *v);

/* "XNNConv2d 3x3 stride 1 pad 1,1,1,1 groups 1, min 0 max inf": one line about a node for the
 * UI and the CLI (ids as %N). */
void ls_xnn_node_text(const ls_xnn_graph *g, const ls_xnn_node *n, ls_buf *b);
/* "XNNConv2d 1, XNNStaticTranspose 2": the graph's xnodes by type, in tag order. */
void ls_xnn_types_text(const ls_xnn_graph *g, ls_buf *b);
/* A blob's graph as JSON for `info --json`: {"identifier", "version", "xnodes": N,
 * "xnodes_by_type": {"XNNConv2d": 1, ...}, "values", "quantized_values", "external_inputs",
 * "external_outputs", "constants": {"named": N, "named_bytes", "in_blob": N, "in_blob_bytes"}}.
 * -1 (nothing written) when the blob does not decode. */
int ls_xnn_json(const uint8_t *data, size_t size, ls_buf *b);
/* "fp32[1, 16, 16, 3]", "qint8[2, 8] scale 0.00799 zp -27", "qcint8[8, 3, 3, 3] 8 scales on dim 0" */
void ls_xnn_value_text(const ls_xnn_value *v, ls_buf *b);

/* The inside of a blob as a program to look at (the UI's view inside a delegate): a call node
 * per xnode with its type as target ("XNNConv2d"), its fields as named arguments, its output's
 * datatype and shape as its value and its debug handle; external inputs and constants (with
 * their bytes, named by their named_data key) as placeholders. The nodes have no operator:
 * shown, never run. */
int ls_xnn_view(const ls_xnn_graph *g, const ls_blob *blob, const ls_named_data *named, const char *name,
                ls_program **out, ls_error *err);

/* The portable twin: a program in the Edge dialect computing what the blob computes, with the
 * same inputs and outputs, from lowerscope's portable kernels (NHWC values become NCHW, XNNPACK's
 * clamps become clamp nodes, quantized values go through quantize/dequantize). named gives the
 * constants kept outside the blob. Fails naming the node it cannot express. */
int ls_xnn_twin(const ls_xnn_graph *g, const ls_blob *blob, const ls_named_data *named, const char *name,
                ls_program **out, ls_error *err);

/* The oracle: the blob run by XnnpackBackend and its portable twin run by the runtime, on the
 * same inputs (NULL: seeded ones made for the twin's placeholders, seed `seed`). Each external
 * output is compared with ls_compare_values at (rtol, atol); diffs[k] (caller frees the array)
 * says how output k fared. Returns the number of outputs that differ, or -1 with err set when
 * either side cannot run. */
int ls_xnn_compare_twin(const ls_blob *blob, const ls_named_data *named, const ls_value *inputs, uint32_t n_inputs,
                        uint64_t seed, double rtol, double atol, ls_value_diff **diffs, uint32_t *n_diffs,
                        ls_error *err);

#endif
