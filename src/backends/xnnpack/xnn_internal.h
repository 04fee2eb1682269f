/* Private to src/backends/xnnpack/: the layout of each XNodeUnion member's table, the
 * interpreter's pieces (xnn_exec*.c) and the writer's (xnn_write*.c). */
#ifndef LS_XNN_INTERNAL_H
#define LS_XNN_INTERNAL_H

#include "backend.h"
#include "xnnpack_blob.h"

/* preprocess: an Edge submodule to a blob (xnn_write.c). */
int lsx_preprocess(const ls_program *sub, ls_blob **processed, ls_compile_spec **specs, uint32_t *nspecs,
                   ls_named_data *named_out, ls_error *err);

/* Which table an XNodeUnion member is (schema.fbs: _XNNNode2x1, _XNNNode1x1, _XNNNodeConv, ...) */
typedef enum lsx_layout {
    LSX_L_UNKNOWN,
    LSX_L_2X1,
    LSX_L_1X1,
    LSX_L_FC,
    LSX_L_DIMS, /* StaticTranspose, StaticReshape */
    LSX_L_RESIZE,
    LSX_L_PAD,
    LSX_L_CAT,
    LSX_L_ALPHA, /* ELU, LeakyReLU */
    LSX_L_CONV,
    LSX_L_POOL,
    LSX_L_ARGMAXPOOL,
    LSX_L_SLICE,
    LSX_L_SDPA,
} lsx_layout;
lsx_layout lsx_node_layout(uint8_t type);
/* Whether input k of a node of this type may be XNN_INVALID_VALUE_ID (a bias, SDPA's mask). */
bool lsx_input_optional(uint8_t type, unsigned k);
/* Four bytes as text for a message: printable as they are, others as \xNN. */
void lsx_show_magic(const uint8_t *p, char *out, size_t cap);


/* ---- the interpreter (xnn_exec.c; the node kernels in xnn_ops_*.c) */

/* A value at run time. Tensors hold the value's elements in its storage type (lsx_storage):
 * float32, float16, bfloat16, int8 (qint8, qcint8, qdint8), uint8 (quint8), int32 (qint32,
 * qcint32); dims are the value's at this run (inputs may change size, as XNNExecutor's
 * prepare_args reshapes them). A qdint8 value carries its per-row parameters. */
typedef struct lsx_rval {
    ls_tensor *t;
    float *row_scale; /* qdint8: one per row */
    int32_t *row_zp;
    int64_t n_rows;
} lsx_rval;

/* What init prepares for a node (packed weights), kept across runs. */
typedef struct lsx_prep {
    float *w;        /* fp32 weights packed for ls_sgemm_ex: [K][N] per group */
    int8_t *w8;      /* int8 weights as [N][K] (int4 widened), for ls_qgemm_s8 */
    struct ls_qgemm_packed **wq; /* w8 packed for ls_qgemm_s8_packed, one per group of output channels */
    int64_t n_wq;
    int32_t *wsum;   /* per output channel: Σ_k w8 (for the input zero point) */
    float *wscale;   /* per output channel, or [N][K / group] for blockwise int4 */
    int32_t wzp;     /* the weights' zero point (per tensor) */
    int64_t K, N, group; /* group: blockwise int4 group size, 0 otherwise */
    float *bias;     /* float bias (fp32 / dequantized), NULL: none */
    int32_t *bias32; /* int32 bias of a static quantized node */
} lsx_prep;

typedef struct lsx_run {
    const ls_xnn_graph *g;
    const char *name;
    lsx_rval *vals;  /* per value position */
    lsx_prep *prep;  /* per node */
    ls_error *err;
} lsx_run;

/* The ls_dtype a value's elements are stored in (LS_DT_U8 for packed int4). */
ls_dtype lsx_storage(uint8_t datatype);
const ls_xnn_value *lsx_def(const lsx_run *R, uint32_t id); /* the value with this id (checked at decode) */
lsx_rval *lsx_val(lsx_run *R, uint32_t id);
/* Fails with "NAME: xnodes[i] (XNNConv2d, debug handle h): message". */
int lsx_fail(lsx_run *R, uint32_t node, const char *fmt, ...) LS_PRINTF(3, 4);
/* The same, for what XNNPACK refuses as unsupported (exit 3: a backend's limit, not bad input). */
int lsx_fail_needs(lsx_run *R, uint32_t node, const char *fmt, ...) LS_PRINTF(3, 4);
/* The tensor of input k of node i, which must have been computed. */
ls_tensor *lsx_in(lsx_run *R, uint32_t node, unsigned k);
/* A new tensor for output k of node i with these dims, in the value's storage type. */
ls_tensor *lsx_out(lsx_run *R, uint32_t node, unsigned k, int ndim, const int64_t *dims);
/* Input k as float32 (dequantized, widened), in *tmp when it is not float32 already (free
 * with ls_free_aligned). */
const float *lsx_in_f32(lsx_run *R, uint32_t node, unsigned k, void **tmp);
/* Stores float32 results into output k: rounded to fp16/bf16, or quantized with the value's
 * parameters. */
void lsx_store_f32(lsx_run *R, uint32_t node, unsigned k, ls_tensor *out, const float *src);
/* Where a node computes its output 0 in float32: the tensor's own data when it is float32,
 * else scratch that lsx_out_done stores (rounded or quantized) and frees. NULL (message set)
 * when out is NULL or memory is refused. lsx_out_drop frees the scratch on a failure. */
float *lsx_out_f32(lsx_run *R, uint32_t node, ls_tensor *out);
void lsx_out_done(lsx_run *R, uint32_t node, ls_tensor *out, float *o);
void lsx_out_drop(ls_tensor *out, float *o);
/* The usual start of a float node: input 0 as float32 (*tmp to free), output 0 made with these
 * dims and its float32 buffer. 0, or -1 with what it made released. */
int lsx_float_io(lsx_run *R, uint32_t node, int ndim, const int64_t *dims, const float **x, void **tmp, ls_tensor **out,
                 float **o);
/* XNNPACK's output clamp of a node (min/max from output_min_max) applied in place. */
void lsx_clamp(const ls_xnn_node *n, float *x, int64_t count);
/* lsx_out_done for a convolution computed in float: a qint8 output is quantized, then clamped in
 * its steps to lsx_q_bounds, as XNNPACK's qs8 convolutions clamp (create_convolution_operator in
 * subgraph/depthwise-convolution-2d.c quantizes the bounds with xnn_qs8_quantize; the qs8
 * deconvolution operator takes int8 bounds too); any other output is clamped in float first. */
void lsx_out_done_clamped(lsx_run *R, uint32_t node, ls_tensor *out, float *o);
float lsx_round_q(float x); /* round half to even, as XNNPACK's and ExecuTorch's quantizers do */
/* The int8 bounds output_min/max give a quantized output of scale and zero point zp (XNNPACK
 * quantizes the clamp): [-128, 127] without them. */
void lsx_q_bounds(const ls_xnn_node *n, float scale, int32_t zp, int32_t *lo, int32_t *hi);

/* One row of XNNPACK's dynamic int8 quantization (qd8: xnn_qd8_asymmetric_quantization_params):
 * n values into q, with the row's scale and zero point (xnn_ops_elem.c). */
void lsx_qd8_row(const float *x, int64_t n, int8_t *q, float *scale, int32_t *zp);
/* Node kernels: 0, or -1 with R->err set. Exit 3 cases set *unsupported. */
typedef int (*lsx_kernel)(lsx_run *R, uint32_t node);
int lsx_binary(lsx_run *R, uint32_t node);       /* Add, Subtract, Multiply, Div, Minimum, Maximum, PReLU */
int lsx_unary(lsx_run *R, uint32_t node);        /* the 1x1 ops, ELU, LeakyReLU */
int lsx_softmax(lsx_run *R, uint32_t node);
int lsx_convert(lsx_run *R, uint32_t node);
int lsx_fully_connected(lsx_run *R, uint32_t node);
int lsx_batch_matmul(lsx_run *R, uint32_t node);
int lsx_sdpa(lsx_run *R, uint32_t node);
int lsx_conv2d(lsx_run *R, uint32_t node);      /* Conv2d and DepthwiseConv2d */
int lsx_deconv2d(lsx_run *R, uint32_t node);
int lsx_pool2d(lsx_run *R, uint32_t node);      /* AvgPooling2d, MaxPooling2d, ArgMaxPooling2d */
int lsx_global_avg_pool(lsx_run *R, uint32_t node);
int lsx_resize_bilinear(lsx_run *R, uint32_t node);
int lsx_transpose(lsx_run *R, uint32_t node);
int lsx_reshape(lsx_run *R, uint32_t node);
int lsx_slice(lsx_run *R, uint32_t node);
int lsx_concat(lsx_run *R, uint32_t node);
int lsx_pad(lsx_run *R, uint32_t node);
/* Scale `at` of a blockwise (qbint4) weight as XNNPACK gets it: XNNCompiler.cpp's defineTensor
 * passes bf16 scales, and fp32 ones through convertF32TensorToBF16 (×1.00389105, truncated). */
float lsx_block_scale(const ls_xnn_value *d, int64_t at);
/* XNNPACK's own refusals at init (xnn_define.c): a node's output range as its xnn_define_*
 * checks it (exit 2), and a static quantized GEMM's requantization scale as its operator's
 * xnn_create_* checks it (exit 3). 0, or -1 with R->err set. */
int lsx_check_output_range(lsx_run *R, uint32_t node);
int lsx_check_requantization(lsx_run *R, uint32_t node);
/* Packing at init for the nodes with weights (FullyConnected, the convolutions). */
int lsx_prepare_weights(lsx_run *R, uint32_t node);
void lsx_prep_free(lsx_prep *p);

#endif
