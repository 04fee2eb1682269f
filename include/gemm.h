/* Matrix products for callers that lay out their own operands: the XNNPACK interpreter's fully
 * connected, convolution and batch-matmul nodes (src/backends/xnnpack/), and the benchmarks.
 * The kernels are the runtime's (src/runtime/kernels/matmul.c for float32, qgemm.c for int8). */
#ifndef LS_GEMM_H
#define LS_GEMM_H

#include <stdint.h>

/* C[M,N] = alpha·A·B + beta·C in float32, A[i,k] at A[i*rsa + k*csa], B[k,j] at B[k*rsb + j*csb],
 * C row-major with row stride ldc (the blocked, two-thread GEMM behind mm and linear). */
void ls_sgemm_ex(int64_t M, int64_t N, int64_t K, float alpha, const float *A, int64_t rsa, int64_t csa,
                 const float *B, int64_t rsb, int64_t csb, float beta, float *C, int64_t ldc);

/* C[m,n] = Σ_k A[m*lda + k] · B[n*ldb + k] in int32, A and B int8: rows of A against rows of B
 * (B is a weight laid out [output channel][input channel], as XNNPACK's filters are). Large
 * products run on two threads. */
void ls_qgemm_s8(int64_t M, int64_t N, int64_t K, const int8_t *A, int64_t lda, const int8_t *B, int64_t ldb,
                 int32_t *C, int64_t ldc);

/* The same with B packed once (the weights of a layer, packed when it is prepared): packing
 * follows the path this CPU takes (AVX-512 VNNI or portable), so pack and run on one machine. */
typedef struct ls_qgemm_packed ls_qgemm_packed;
ls_qgemm_packed *ls_qgemm_pack(int64_t N, int64_t K, const int8_t *B, int64_t ldb);
void ls_qgemm_packed_free(ls_qgemm_packed *p);
void ls_qgemm_s8_packed(int64_t M, const int8_t *A, int64_t lda, const ls_qgemm_packed *B, int32_t *C, int64_t ldc);

#endif
