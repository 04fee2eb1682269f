/* Private to the XNNPACK writer (xnn_write.c, xnn_write_ops.c): the state of one submodule's
 * serialization into an XNNGraph. */
#ifndef LS_XNN_WRITE_H
#define LS_XNN_WRITE_H

#include "signature.h"
#include "xnn_internal.h"

enum { LSW_NCHW = 0, LSW_NHWC = 1 };

typedef struct lsw {
    const ls_program *p; /* the submodule */
    ls_sig sig;
    ls_error *err;
    ls_named_data *named; /* where the weights go, keyed by their SHA-256 */
    LS_VEC(ls_xnn_value) values;
    LS_VEC(ls_xnn_node) nodes;
    LS_VEC(ls_xnn_constant) consts;
    uint32_t *val[2];     /* per node position: its value id + 1 in NCHW / NHWC (0: none yet) */
    uint8_t *native;      /* per node position: the layout its producer made */
    uint8_t *state;       /* 0 not emitted, 1 being emitted, 2 done */
    int32_t *alias;       /* a fused activation: the position whose value it is (-1: none) */
    float *fuse_min, *fuse_max; /* per position: the activation fused into it */
    bool *fused;
    uint32_t n_in;        /* external inputs */
    ls_ptrmap const_of;   /* interned key → value id + 1: a constant is defined once (vals_to_ids) */
    int32_t *out_q;       /* per position: the quantize node its op's quantized output takes the place of (-1) */
    uint32_t *fval[2];    /* per position: its quantized value dequantized by an XNNConvert (id + 1) */
} lsw;

/* Fails naming the node: "NAME: node `n` (aten.x): message". */
int lsw_fail(lsw *W, const ls_node *n, const char *fmt, ...) LS_PRINTF(3, 4);
int lsw_needs(lsw *W, const ls_node *n, const char *fmt, ...) LS_PRINTF(3, 4);
/* A new value (returns its id) of the node's tensor type with these dims. */
uint32_t lsw_value(lsw *W, uint8_t datatype, int ndim, const int64_t *dims);
/* A constant value holding a tensor's bytes (stored in the named data under their SHA-256). */
uint32_t lsw_constant(lsw *W, const ls_tensor *t);
/* A new node appended (its in/out set by the caller); returns it. */
ls_xnn_node *lsw_node(lsw *W, uint8_t type, const ls_node *from);
#define LSW_NONE UINT32_MAX
/* The value of node id `id` in layout `lay`, emitting its producer first and a transpose when
 * it was made in the other layout. LSW_NONE (with W->err) when it cannot be written. */
uint32_t lsw_get(lsw *W, uint32_t id, int lay);
/* The layout node `id` was made in (emitting it). -1 on failure. */
int lsw_native(lsw *W, uint32_t id);
/* Records a node's result: value id v made in layout lay. */
void lsw_set(lsw *W, const ls_node *n, uint32_t v, int lay);
/* The XNNPACK datatype of a tensor metadata (fp32, fp16), 0 when XNNPACK here has none. */
uint8_t lsw_datatype(const ls_tmeta *m);
/* The constant data of a placeholder (a consumed weight), or NULL. */
ls_tensor *lsw_data(lsw *W, uint32_t id);
/* A node of the submodule by id. */
const ls_node *lsw_nd(lsw *W, uint32_t id);

/* Emits a call node (xnn_write_ops.c). */
int lsw_emit_call(lsw *W, uint32_t pos);

/* ---- quantization (xnn_write_quant.c): PT2E's quantize / dequantize as XNNPACK's quantized
 * values (node_visitor.py's QuantParams) */

/* lsw_get, then an XNNConvert to fp32 (made once) when the value is quantized. */
uint32_t lsw_get_f(lsw *W, uint32_t id, int lay);
/* Which ops give a quantized output in place of the quantize after them (the static pattern
 * dq → op → q the partitioner took whole). */
void lsw_plan_quant(lsw *W);
/* The quantize/dequantize/choose_qparams nodes: 1 when n is none of them (nothing done), else
 * 0 or -1. */
int lsw_emit_quant(lsw *W, uint32_t pos);
/* A per-tensor q/dq node's scale and zero point. */
bool lsw_qparams(const ls_node *q, float *scale, int32_t *zp);
/* The weight of a GEMM as a quantized constant when it is a dequantize of an int8 constant:
 * its value id (the tensor's dims, or `dims` when given: the layout the node wants), else
 * LSW_NONE with *is_q false (a float weight). perm: the filter layout change for convolutions
 * (NULL: none), channel_dim: the output channels' dim in that layout. */
uint32_t lsw_quant_weight(lsw *W, const ls_node *n, uint32_t w, int conv_kind, bool *is_q, float **scales,
                          uint32_t *n_scales);
/* A float bias quantized to int32 at scale in_scale · w_scale[c] (QuantParams.from_bias). */
uint32_t lsw_quant_bias(lsw *W, const ls_node *n, uint32_t b, float in_scale, const float *w_scales, uint32_t n_w);

#endif
