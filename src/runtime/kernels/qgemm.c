/* int8 × int8 → int32 products (gemm.h) and the public entry to the strided float32 GEMM.
 *
 * ls_qgemm_s8 computes dot products of rows of A with rows of B. On a CPU with AVX-512 VNNI
 * (checked at run time) it packs the operands for vpdpbusd (below); elsewhere a 4×4 tile of C
 * takes four rows of A and four of B once per k and gives sixteen sums, written so GCC turns
 * each k-loop into widening multiply-adds, with K walked in blocks so the four B rows stay in
 * L1 while every row block of A passes over them. LS_NO_VNNI=1 forces the portable path. */
#include <stdlib.h>

#include "gemm.h"
#include "kernels.h"

#define QK 1024 /* bytes of K per block: 4 rows of B = 4 KiB stay in L1 */

void ls_sgemm_ex(int64_t M, int64_t N, int64_t K, float alpha, const float *A, int64_t rsa, int64_t csa,
                 const float *B, int64_t rsb, int64_t csb, float beta, float *C, int64_t ldc)
{
    lk_sgemm(M, N, K, alpha, A, rsa, csa, B, rsb, csb, beta, C, ldc);
}

LK_HOT static int32_t dot1(const int8_t *restrict a, const int8_t *restrict b, int64_t k)
{
    int32_t s = 0;
    for (int64_t i = 0; i < k; i++) s += (int32_t)a[i] * (int32_t)b[i];
    return s;
}

/* acc[r][c] += Σ_k a_r[k] · b_c[k] for a 4×4 tile */
LK_HOT static void tile4x4(const int8_t *restrict a0, const int8_t *restrict a1, const int8_t *restrict a2,
                           const int8_t *restrict a3, const int8_t *restrict b0, const int8_t *restrict b1,
                           const int8_t *restrict b2, const int8_t *restrict b3, int64_t k, int32_t acc[16])
{
    int32_t s00 = 0, s01 = 0, s02 = 0, s03 = 0, s10 = 0, s11 = 0, s12 = 0, s13 = 0;
    int32_t s20 = 0, s21 = 0, s22 = 0, s23 = 0, s30 = 0, s31 = 0, s32 = 0, s33 = 0;
    for (int64_t i = 0; i < k; i++) {
        int32_t x0 = a0[i], x1 = a1[i], x2 = a2[i], x3 = a3[i];
        int32_t y0 = b0[i], y1 = b1[i], y2 = b2[i], y3 = b3[i];
        s00 += x0 * y0, s01 += x0 * y1, s02 += x0 * y2, s03 += x0 * y3;
        s10 += x1 * y0, s11 += x1 * y1, s12 += x1 * y2, s13 += x1 * y3;
        s20 += x2 * y0, s21 += x2 * y1, s22 += x2 * y2, s23 += x2 * y3;
        s30 += x3 * y0, s31 += x3 * y1, s32 += x3 * y2, s33 += x3 * y3;
    }
    acc[0] += s00, acc[1] += s01, acc[2] += s02, acc[3] += s03;
    acc[4] += s10, acc[5] += s11, acc[6] += s12, acc[7] += s13;
    acc[8] += s20, acc[9] += s21, acc[10] += s22, acc[11] += s23;
    acc[12] += s30, acc[13] += s31, acc[14] += s32, acc[15] += s33;
}

typedef struct qjob {
    int64_t M, N, K, lda, ldb, ldc;
    const int8_t *A, *B;
    int32_t *C;
    bool by_cols;
} qjob;

static void q_range(void *vctx, int64_t lo, int64_t hi)
{
    const qjob *j = vctx;
    int64_t m0 = j->by_cols ? 0 : lo, m1 = j->by_cols ? j->M : hi;
    int64_t n0 = j->by_cols ? lo : 0, n1 = j->by_cols ? hi : j->N;
    for (int64_t m = m0; m < m1; m++)
        for (int64_t n = n0; n < n1; n++) j->C[m * j->ldc + n] = 0;
    for (int64_t k0 = 0; k0 < j->K; k0 += QK) {
        int64_t kc = j->K - k0 < QK ? j->K - k0 : QK;
        for (int64_t n = n0; n < n1; n += 4) {
            int64_t nr = n1 - n < 4 ? n1 - n : 4;
            const int8_t *b[4];
            for (int q = 0; q < 4; q++) b[q] = j->B + (n + (q < nr ? q : 0)) * j->ldb + k0;
            for (int64_t m = m0; m < m1; m += 4) {
                int64_t mr = m1 - m < 4 ? m1 - m : 4;
                if (mr == 4 && nr == 4) {
                    int32_t acc[16] = {0};
                    const int8_t *a = j->A + m * j->lda + k0;
                    tile4x4(a, a + j->lda, a + 2 * j->lda, a + 3 * j->lda, b[0], b[1], b[2], b[3], kc, acc);
                    for (int r = 0; r < 4; r++)
                        for (int q = 0; q < 4; q++) j->C[(m + r) * j->ldc + n + q] += acc[r * 4 + q];
                    continue;
                }
                for (int64_t r = 0; r < mr; r++)
                    for (int64_t q = 0; q < nr; q++)
                        j->C[(m + r) * j->ldc + n + q] += dot1(j->A + (m + r) * j->lda + k0, b[q], kc);
            }
        }
    }
}

/* lk_parallel's parts are groups of four rows (or columns), so each half keeps whole tiles */
static void q_parts(void *vctx, int64_t lo, int64_t hi)
{
    const qjob *j = vctx;
    int64_t end = j->by_cols ? j->N : j->M;
    q_range(vctx, lo * 4, hi * 4 < end ? hi * 4 : end);
}

#if defined(__x86_64__) && defined(__GNUC__) && !defined(__clang__)
#include <immintrin.h>
#define LS_QGEMM_VNNI 1

/* The AVX-512 VNNI path, chosen at run time on CPUs that have it: vpdpbusd multiplies 64
 * unsigned by signed bytes and adds each group of four into an int32 lane, so A is made
 * unsigned (+128, taken back with 128·Σ_k B[n][k]) and B packed 16 columns × 4 k at a time. */
typedef struct vjob {
    int64_t M, N, K4; /* K rounded up to a multiple of 4 */
    const uint8_t *a; /* [M][K4], A + 128 */
    const int8_t *b;  /* [N/16 blocks][K4/4][16][4] */
    const int32_t *bsum; /* 128 · Σ_k B[n][k], per padded column */
    int32_t *C;
    int64_t ldc;
} vjob;

__attribute__((target("avx512f,avx512bw,avx512vnni"))) static void vnni_rows(void *vctx, int64_t lo, int64_t hi)
{
    const vjob *j = vctx;
    int64_t nblocks = (j->N + 15) / 16, kq = j->K4 / 4;
    for (int64_t nb = 0; nb < nblocks; nb++) {
        const int8_t *bp = j->b + nb * kq * 64;
        int64_t cols = j->N - nb * 16 < 16 ? j->N - nb * 16 : 16;
        for (int64_t m = lo; m < hi; m += 6) {
            int mr = (int)(hi - m < 6 ? hi - m : 6);
            __m512i acc[6];
            for (int r = 0; r < 6; r++) acc[r] = _mm512_setzero_si512();
            const uint8_t *ap = j->a + m * j->K4;
            for (int64_t q = 0; q < kq; q++) {
                __m512i bv = _mm512_loadu_si512((const void *)(bp + q * 64));
                for (int r = 0; r < mr; r++) {
                    int32_t quad;
                    memcpy(&quad, ap + r * j->K4 + q * 4, 4);
                    acc[r] = _mm512_dpbusd_epi32(acc[r], _mm512_set1_epi32(quad), bv);
                }
            }
            __m512i corr = _mm512_loadu_si512((const void *)(j->bsum + nb * 16));
            for (int r = 0; r < mr; r++) {
                int32_t tmp[16];
                _mm512_storeu_si512((void *)tmp, _mm512_sub_epi32(acc[r], corr));
                memcpy(j->C + (m + r) * j->ldc + nb * 16, tmp, sizeof(int32_t) * (size_t)cols);
            }
        }
    }
}

static int vnni_here(void)
{
    static int known = -1;
    if (known < 0) {
        __builtin_cpu_init();
        known = __builtin_cpu_supports("avx512vnni") && __builtin_cpu_supports("avx512bw") ? 1 : 0;
    }
    return known;
}

static int8_t *vnni_pack_b(int64_t N, int64_t K, const int8_t *B, int64_t ldb, int32_t **bsum_out)
{
    int64_t K4 = (K + 3) / 4 * 4, nblocks = (N + 15) / 16;
    int8_t *b = lk_alloc_tmp((size_t)(nblocks * 16 * K4) + 64);
    int32_t *bsum = lk_alloc_tmp(sizeof(int32_t) * (size_t)(nblocks * 16) + 64);
    memset(b, 0, (size_t)(nblocks * 16 * K4));
    for (int64_t n = 0; n < nblocks * 16; n++) {
        int32_t s = 0;
        int64_t nb = n / 16, col = n % 16;
        for (int64_t k = 0; n < N && k < K; k++) {
            int8_t v = B[n * ldb + k];
            b[((nb * (K4 / 4) + k / 4) * 16 + col) * 4 + k % 4] = v;
            s += v;
        }
        bsum[n] = 128 * s;
    }
    *bsum_out = bsum;
    return b;
}

static void vnni_run(int64_t M, int64_t N, int64_t K, const int8_t *A, int64_t lda, const int8_t *b, const int32_t *bsum,
                     int32_t *C, int64_t ldc)
{
    int64_t K4 = (K + 3) / 4 * 4;
    uint8_t *a = lk_alloc_tmp((size_t)(M * K4) + 64);
    for (int64_t m = 0; m < M; m++) {
        for (int64_t k = 0; k < K; k++) a[m * K4 + k] = (uint8_t)(A[m * lda + k] + 128);
        for (int64_t k = K; k < K4; k++) a[m * K4 + k] = 128; /* pairs with a zero b */
    }
    vjob j = {M, N, K4, a, b, bsum, C, ldc};
    lk_parallel(M, 2.0 * (double)N * (double)K4, vnni_rows, &j);
    ls_free_aligned(a);
}

static bool use_vnni(void)
{
    return getenv("LS_NO_VNNI") == NULL && vnni_here();
}
#endif

static void portable(int64_t M, int64_t N, int64_t K, const int8_t *A, int64_t lda, const int8_t *B, int64_t ldb,
                     int32_t *C, int64_t ldc)
{
    qjob j = {M, N, K, lda, ldb, ldc, A, B, C, M < 8};
    int64_t parts = j.by_cols ? (N + 3) / 4 : (M + 3) / 4;
    lk_parallel(parts, 4.0 * (double)(j.by_cols ? M : N) * (double)K, q_parts, &j);
}

void ls_qgemm_s8(int64_t M, int64_t N, int64_t K, const int8_t *A, int64_t lda, const int8_t *B, int64_t ldb,
                 int32_t *C, int64_t ldc)
{
    if (M <= 0 || N <= 0) return;
#ifdef LS_QGEMM_VNNI
    if (use_vnni() && K > 0) {
        int32_t *bsum;
        int8_t *b = vnni_pack_b(N, K, B, ldb, &bsum);
        vnni_run(M, N, K, A, lda, b, bsum, C, ldc);
        ls_free_aligned(b);
        ls_free_aligned(bsum);
        return;
    }
#endif
    portable(M, N, K, A, lda, B, ldb, C, ldc);
}

struct ls_qgemm_packed {
    int64_t N, K;
    int8_t *b;     /* VNNI layout, or the rows as given (ldb = K) */
    int32_t *bsum; /* VNNI only */
};

ls_qgemm_packed *ls_qgemm_pack(int64_t N, int64_t K, const int8_t *B, int64_t ldb)
{
    ls_qgemm_packed *p = ls_calloc(1, sizeof *p);
    p->N = N;
    p->K = K;
#ifdef LS_QGEMM_VNNI
    if (use_vnni() && N > 0 && K > 0) {
        p->b = vnni_pack_b(N, K, B, ldb, &p->bsum);
        return p;
    }
#endif
    p->b = lk_alloc_tmp((size_t)(N * K) + 64);
    for (int64_t n = 0; n < N; n++) memcpy(p->b + n * K, B + n * ldb, (size_t)K);
    return p;
}

void ls_qgemm_packed_free(ls_qgemm_packed *p)
{
    if (!p) return;
    ls_free_aligned(p->b);
    ls_free_aligned(p->bsum);
    free(p);
}

void ls_qgemm_s8_packed(int64_t M, const int8_t *A, int64_t lda, const ls_qgemm_packed *B, int32_t *C, int64_t ldc)
{
    if (M <= 0 || B->N <= 0) return;
#ifdef LS_QGEMM_VNNI
    if (B->bsum) {
        vnni_run(M, B->N, B->K, A, lda, B->b, B->bsum, C, ldc);
        return;
    }
#endif
    portable(M, B->N, B->K, A, lda, B->b, B->K, C, ldc);
}
