/* Private to the kernel files (every file of src/runtime/kernels/): argument access, output
 * allocation, dtype conversion, broadcasting and the small thread helper.
 *
 * Kernels receive their arguments already checked against the operator schema by
 * ls_eval_node (kernels/table.c): a Tensor parameter holds a TENSOR (or a Python scalar for the
 * elementwise kernels flagged LK_SCALARS), an int a INT, a list a LIST of the right items,
 * a ScalarType an INT holding an ls_dtype, None only where the schema allows it. So kernels
 * read their arguments directly and only check what the schema cannot say (shapes, ranges). */
#ifndef LS_KERNELS_H
#define LS_KERNELS_H

#include <stdbool.h>
#include <stdint.h>
#include <string.h>

#include "runtime.h"

#if defined(__GNUC__) && !defined(__clang__)
/* The hot loops are written for the vectoriser; the library is built with -O2, so the kernel
 * files ask GCC for -O3 (loop vectorisation with the dynamic cost model). */
#define LK_HOT __attribute__((optimize("O3", "no-math-errno")))
#else
#define LK_HOT
#endif

/* ---- argument access (schema-checked, see above) */
static inline bool lk_none(const ls_value *a) { return a->kind == LS_V_NONE; }
static inline int64_t lk_int(const ls_value *a) { return ls_value_as_i64(a); }
static inline double lk_f64(const ls_value *a) { return ls_value_as_f64(a); }
static inline bool lk_bool(const ls_value *a) { return a->kind == LS_V_BOOL ? a->b : ls_value_as_i64(a) != 0; }
/* A ScalarType argument, or dflt when None. */
static inline ls_dtype lk_dtype_or(const ls_value *a, ls_dtype dflt) { return lk_none(a) ? dflt : (ls_dtype)a->i; }
/* An int list (LIST of INT, or one INT for int[1]) into out[cap]; -1 with a message when longer. */
int lk_ints(ls_kctx *c, const ls_value *a, const char *what, int64_t *out, int cap, int *n);

/* ---- shapes */
/* Wraps a possibly negative dim into [0, ndim) (ndim 0 accepts -1 and 0, as torch does). */
int lk_dim(ls_kctx *c, int64_t dim, int ndim, int *out);
/* "[2, 3]" into buf. */
const char *lk_shape_str(int ndim, const int64_t *sizes, char *buf, size_t cap);
int64_t lk_numel(int ndim, const int64_t *sizes);
/* Broadcast two shapes (right-aligned). Fails naming both shapes. */
int lk_broadcast_shape(ls_kctx *c, int na, const int64_t *sa, int nb, const int64_t *sb, int *nout, int64_t *out);
/* Contiguous strides in elements. */
void lk_strides(int ndim, const int64_t *sizes, int64_t *strides);

/* ---- outputs: uninitialised (kernels write every element), size-checked */
ls_tensor *lk_new(ls_kctx *c, ls_dtype dt, int ndim, const int64_t *sizes);
ls_tensor *lk_new_like(ls_kctx *c, const ls_tensor *t, ls_dtype dt);
/* Stores a tensor result (takes the reference). */
static inline int lk_ret(ls_value *out, ls_tensor *t)
{
    *out = ls_value_tensor(t);
    return 0;
}

/* ---- dtypes */
/* The type arithmetic runs in: float32 for float16/bfloat16/float32, float64, int64 for
 * every integer type and bool. */
ls_dtype lk_compute_type(ls_dtype t);
/* Converts n elements (C's conversions; float to integer saturates NaN/out-of-range to the
 * type's minimum like x86; to bool is != 0; float16/bfloat16 round to nearest even). */
void lk_convert(void *dst, ls_dtype dt, const void *src, ls_dtype st, int64_t n);
/* A tensor's data in dtype dt: t->data itself when it already is, else a converted copy in
 * *tmp (free with ls_free_aligned). */
const void *lk_as(const ls_tensor *t, ls_dtype dt, void **tmp);
/* Scratch memory for a kernel (64-byte aligned, released with ls_free_aligned); running out
 * of memory ends the program with a message, as every allocation in lowerscope does. */
void *lk_alloc_tmp(size_t n);
/* Converts a tensor to dt (new reference; the same tensor when it already is). */
ls_tensor *lk_to_dtype(ls_kctx *c, ls_tensor *t, ls_dtype dt);
/* One scalar in a compute type (f32, f64 or i64) into *dst. */
void lk_scalar_store(void *dst, ls_dtype ct, double f, int64_t i, bool is_int);

/* Operands of an elementwise op: tensors or Python scalars (wrapped numbers). */
typedef struct lk_operand {
    const ls_tensor *t; /* NULL for a scalar */
    bool is_scalar, scalar_is_int, scalar_is_bool;
    double f;  /* scalar value */
    int64_t i; /* scalar value when integer / bool */
} lk_operand;
void lk_operand_from(lk_operand *o, const ls_value *v);
/* torch.result_type over operands: dimensioned tensors over zero-dim tensors over scalars,
 * a lower kind never demoting a higher category (int tensor + 2.5 → float32). */
ls_dtype lk_result_type(const lk_operand *ops, int n);

/* ---- broadcast iteration: up to 4 operands (operand 0 is usually the output) over a
 * common shape, with dims merged where every operand is contiguous across them. The inner
 * dimension is walked by the kernels' own loops with a per-operand stride of 0 or 1 (or any
 * stride after a permutation); the outer ones by lk_iter_next, computed once per row. */
#define LK_ITER_MAX 4
typedef struct lk_iter {
    int nops, ndim;
    int64_t shape[LS_MAX_DIMS];
    int64_t strides[LK_ITER_MAX][LS_MAX_DIMS]; /* in elements, 0 where broadcast */
    int64_t inner;                             /* shape[ndim-1] (1 for 0-dim) */
    int64_t rows;                              /* product of the other dims */
    int64_t idx[LS_MAX_DIMS];
    int64_t off[LK_ITER_MAX];                  /* element offsets of the current row */
} lk_iter;
/* shapes[k]/ndims[k] of each operand, right-aligned against the out shape. */
void lk_iter_init(lk_iter *it, int nops, int ndim, const int64_t *shape, const int *ndims,
                  const int64_t *const *shapes);
static inline int64_t lk_iter_stride(const lk_iter *it, int op) { return it->ndim ? it->strides[op][it->ndim - 1] : 0; }
/* Advances off[] to the next row; lk_iter_seek positions it at a row. */
void lk_iter_next(lk_iter *it);
void lk_iter_seek(lk_iter *it, int64_t row);

/* ---- threads: runs fn over [0, n) in up to two parts when n * cost_per_item is large. */
typedef void (*lk_range_fn)(void *ctx, int64_t lo, int64_t hi);
void lk_parallel(int64_t n, double cost_per_item, lk_range_fn fn, void *ctx);
int lk_threads(void); /* 1 or 2 (LS_THREADS overrides) */

/* ---- strided copies (permute, expand, slice, pad, cat all reduce to one) */
/* Copies the ndim-d block `sizes` from src (element strides src_st) to dst (strides dst_st);
 * es is the element size. Dims are merged where both sides allow and rows become memcpy or
 * typed strided loops. */
void lk_copy_nd(void *dst, const int64_t *dst_st, const void *src, const int64_t *src_st, size_t es, int ndim,
                const int64_t *sizes);
/* A contiguous tensor holding t viewed at element offset with the given sizes/strides.
 * For the view ops (not their _copy forms) a result that is contiguous in t's memory shares
 * t's storage instead of copying. */
ls_tensor *lk_view_result(ls_kctx *c, ls_tensor *t, int64_t offset, int ndim, const int64_t *sizes,
                          const int64_t *strides);
/* Fills n elements of dtype dt with a scalar value. */
void lk_fill(void *dst, ls_dtype dt, int64_t n, double f, int64_t i, bool is_int);
/* Whether the kernel runs as the aliasing view op (shares storage) rather than its _copy form. */
bool lk_is_view_op(const ls_kctx *c);

/* ---- shared pieces of kernels other families reuse */
/* out = contiguous copy of t laid out with its dims permuted by perm. */
ls_tensor *lk_permute(ls_kctx *c, const ls_tensor *t, const int *perm);
/* out = t broadcast to (ndim, sizes) (a copy). */
ls_tensor *lk_expand(ls_kctx *c, const ls_tensor *t, int ndim, const int64_t *sizes);
/* C[M,N] = A[M,K] · B[K,N] (+ beta·C) for float32 with arbitrary row/column strides of A and
 * B; C is row-major with row stride ldc. */
void lk_sgemm(int64_t M, int64_t N, int64_t K, float alpha, const float *A, int64_t rsa, int64_t csa,
              const float *B, int64_t rsb, int64_t csb, float beta, float *C, int64_t ldc);
/* Batched matmul for any dtype: a [B?, M, K] × b [B?, K, N] with batch broadcasting. */
int lk_matmul(ls_kctx *c, const ls_tensor *a, const ls_tensor *b, ls_value *out);
/* Softmax / log-softmax of float32 rows of length n, in place allowed. */
void lk_softmax_row(const float *x, float *y, int64_t n, bool log);

/* Kernel entry points, one per family file, looked up by kernels/table.c. */
#define LK_DECL(name) int name(ls_kctx *c, const ls_value *args, uint32_t nargs, ls_value *out)
/* kernels/binary.c */
LK_DECL(k_atan2); LK_DECL(k_add); LK_DECL(k_sub); LK_DECL(k_rsub); LK_DECL(k_mul); LK_DECL(k_pow); LK_DECL(k_div);
LK_DECL(k_eq); LK_DECL(k_ne); LK_DECL(k_gt); LK_DECL(k_ge); LK_DECL(k_lt); LK_DECL(k_le);
LK_DECL(k_logical_and); LK_DECL(k_logical_or); LK_DECL(k_where); LK_DECL(k_masked_fill); LK_DECL(k_clamp_tensor);
/* kernels/unary.c */
LK_DECL(k_neg); LK_DECL(k_abs); LK_DECL(k_relu); LK_DECL(k_sqrt); LK_DECL(k_rsqrt); LK_DECL(k_exp);
LK_DECL(k_log); LK_DECL(k_sin); LK_DECL(k_cos); LK_DECL(k_tanh); LK_DECL(k_sigmoid); LK_DECL(k_silu);
LK_DECL(k_gelu); LK_DECL(k_logical_not); LK_DECL(k_clamp);
/* kernels/reduce.c */
LK_DECL(k_sum_dim); LK_DECL(k_sum); LK_DECL(k_mean_dim); LK_DECL(k_mean); LK_DECL(k_amax); LK_DECL(k_amin);
LK_DECL(k_argmax); LK_DECL(k_cumsum); LK_DECL(k__softmax); LK_DECL(k__log_softmax); LK_DECL(k_softmax); LK_DECL(k_log_softmax);
/* kernels/matmul.c */
LK_DECL(k_mm); LK_DECL(k_bmm); LK_DECL(k_matmul); LK_DECL(k_addmm); LK_DECL(k_linear);
/* kernels/shape.c */
LK_DECL(k_view); LK_DECL(k_alias); LK_DECL(k_permute); LK_DECL(k_transpose); LK_DECL(k_t); LK_DECL(k_unsqueeze);
LK_DECL(k_squeeze); LK_DECL(k_squeeze_dims); LK_DECL(k_expand); LK_DECL(k_slice); LK_DECL(k_select); LK_DECL(k_split);
LK_DECL(k_chunk); LK_DECL(k_split_with_sizes); LK_DECL(k_cat); LK_DECL(k_stack); LK_DECL(k_constant_pad_nd);
/* kernels/index.c */
LK_DECL(k_index); LK_DECL(k_index_put); LK_DECL(k_index_put_); LK_DECL(k_index_select); LK_DECL(k_embedding); LK_DECL(k_gather);
/* kernels/nn.c */
LK_DECL(k_layer_norm); LK_DECL(k_native_layer_norm); LK_DECL(k_sdpa);
/* kernels/quant.c */
LK_DECL(k_quantize_per_tensor); LK_DECL(k_dequantize_per_tensor); LK_DECL(k_quantize_per_channel);
LK_DECL(k_dequantize_per_channel); LK_DECL(k_choose_qparams);
/* kernels/scatter.c, kernels/pool.c, kernels/prim.c */
LK_DECL(k_scatter_src); LK_DECL(k_scatter_value); LK_DECL(k_scatter_add); LK_DECL(k_max_pool2d_with_indices);
LK_DECL(k_prim_add); LK_DECL(k_prim_sub); LK_DECL(k_prim_mul); LK_DECL(k_prim_floordiv); LK_DECL(k_prim_truediv);
LK_DECL(k_prim_eq); LK_DECL(k_prim_gt); LK_DECL(k_prim_lt); LK_DECL(k_prim_ge); LK_DECL(k_prim_le);
LK_DECL(k_prim_floordiv_int); LK_DECL(k_sym_numel); LK_DECL(k_local_scalar_dense);
/* kernels/conv.c */
LK_DECL(k_convolution); LK_DECL(k_conv2d);
/* kernels/create.c */
LK_DECL(k_alloc); LK_DECL(k_full); LK_DECL(k_zeros); LK_DECL(k_ones); LK_DECL(k_full_like); LK_DECL(k_zeros_like); LK_DECL(k_ones_like);
LK_DECL(k_scalar_tensor); LK_DECL(k_arange); LK_DECL(k_arange_start); LK_DECL(k_arange_start_step); LK_DECL(k_clone); LK_DECL(k_to_copy);
LK_DECL(k_copy); LK_DECL(k_copy_); LK_DECL(k_sym_size); LK_DECL(k_getitem);

#endif
