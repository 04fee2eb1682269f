/* Matrix products: a cache-blocked float32 GEMM (packing + a register-blocked micro-kernel
 * written with GCC vector extensions so it becomes AVX2/FMA code under -march=native and SSE
 * code otherwise), generic loops for float64 and integers, and the kernels mm, bmm, addmm,
 * linear and matmul on top.
 *
 * Blocking (Goto/BLIS): C is computed in NC-column panels; for each KC-deep slice B is packed
 * into NR-wide strips that stay in L2/L3, A into MR-high strips of an MC-row block that stays in
 * L2, and the micro-kernel keeps an MR×NR tile of C in registers while it streams both strips
 * from L1. Large products run on two threads, each taking half of the columns (or rows). */
#include <math.h>
#include <pthread.h>
#include <stdatomic.h>
#include <stdio.h>
#include <stdlib.h>

#include "kernels.h"

#ifdef __AVX__
#define VL 8
#else
#define VL 4
#endif
#define MR 6
#define NR (2 * VL)
#define KC 256
#define MC 120
#define NC 3072

typedef float vf __attribute__((vector_size(VL * 4)));
typedef float vfu __attribute__((vector_size(VL * 4), aligned(4))); /* unaligned access to C */

#if defined(__GNUC__) && !defined(__clang__)
#define LK_GEMM __attribute__((optimize("O3", "fp-contract=fast")))
#else
#define LK_GEMM
#endif

/* acc (MR×NR) = Ap strip (kc×MR) · Bp strip (kc×NR); then C = alpha·acc + (first ? beta·C : C). */
LK_GEMM static void micro_kernel(int64_t kc, const float *restrict a, const float *restrict b, float *restrict c,
                                 int64_t ldc, int mr, int nr, float alpha, float beta, bool first)
{
    vf c0[MR], c1[MR];
    for (int r = 0; r < MR; r++) c0[r] = c1[r] = (vf){0};
    for (int64_t k = 0; k < kc; k++) {
        const vf b0 = *(const vf *)b, b1 = *(const vf *)(b + VL);
        for (int r = 0; r < MR; r++) {
            c0[r] += b0 * a[r];
            c1[r] += b1 * a[r];
        }
        a += MR;
        b += NR;
    }
    if (mr == MR && nr == NR) {
        for (int r = 0; r < MR; r++) {
            vfu *p0 = (vfu *)(c + r * ldc), *p1 = (vfu *)(c + r * ldc + VL);
            if (first && beta == 0) {
                *p0 = c0[r] * alpha;
                *p1 = c1[r] * alpha;
            } else {
                float bb = first ? beta : 1.0f;
                *p0 = c0[r] * alpha + *p0 * bb;
                *p1 = c1[r] * alpha + *p1 * bb;
            }
        }
        return;
    }
    float tile[MR][NR] __attribute__((aligned(32)));
    for (int r = 0; r < MR; r++) {
        *(vf *)&tile[r][0] = c0[r];
        *(vf *)&tile[r][VL] = c1[r];
    }
    for (int r = 0; r < mr; r++)
        for (int j = 0; j < nr; j++) {
            float *p = &c[r * ldc + j];
            *p = (first && beta == 0) ? alpha * tile[r][j] : alpha * tile[r][j] + (first ? beta : 1.0f) * *p;
        }
}

LK_HOT static void pack_a(int64_t mc, int64_t kc, const float *A, int64_t rsa, int64_t csa, float *restrict ap)
{
    for (int64_t i = 0; i < mc; i += MR) {
        int m = (int)(mc - i < MR ? mc - i : MR);
        for (int64_t k = 0; k < kc; k++) {
            for (int r = 0; r < m; r++) ap[r] = A[(i + r) * rsa + k * csa];
            for (int r = m; r < MR; r++) ap[r] = 0;
            ap += MR;
        }
    }
}

LK_HOT static void pack_b(int64_t kc, int64_t nc, const float *B, int64_t rsb, int64_t csb, float *restrict bp)
{
    for (int64_t j = 0; j < nc; j += NR) {
        int n = (int)(nc - j < NR ? nc - j : NR);
        if (n == NR && csb == 1) {
            for (int64_t k = 0; k < kc; k++) {
                const float *src = B + k * rsb + j;
                for (int q = 0; q < NR; q++) bp[q] = src[q];
                bp += NR;
            }
            continue;
        }
        for (int64_t k = 0; k < kc; k++) {
            for (int q = 0; q < n; q++) bp[q] = B[k * rsb + (j + q) * csb];
            for (int q = n; q < NR; q++) bp[q] = 0;
            bp += NR;
        }
    }
}

typedef struct gemm_args {
    int64_t M, N, K;
    float alpha, beta;
    const float *A, *B;
    int64_t rsa, csa, rsb, csb;
    float *C;
    int64_t ldc;
} gemm_args;

/* The blocked loops over one part of C: rows [m0, m1), columns [n0, n1). */
static void gemm_part(const gemm_args *g, int64_t m0, int64_t m1, int64_t n0, int64_t n1)
{
    int64_t M = m1 - m0, N = n1 - n0;
    if (M <= 0 || N <= 0) return;
    int64_t ncap = N < NC ? N : NC, kcap = g->K < KC ? g->K : KC, mcap = M < MC ? M : MC;
    ncap = (ncap + NR - 1) / NR * NR;
    mcap = (mcap + MR - 1) / MR * MR;
    float *bp = lk_alloc_tmp(sizeof(float) * (size_t)(ncap * kcap));
    float *ap = lk_alloc_tmp(sizeof(float) * (size_t)(mcap * kcap));
    for (int64_t jc = n0; jc < n1; jc += NC) {
        int64_t nc = n1 - jc < NC ? n1 - jc : NC;
        for (int64_t pc = 0; pc < g->K; pc += KC) {
            int64_t kc = g->K - pc < KC ? g->K - pc : KC;
            pack_b(kc, nc, g->B + pc * g->rsb + jc * g->csb, g->rsb, g->csb, bp);
            for (int64_t ic = m0; ic < m1; ic += MC) {
                int64_t mc = m1 - ic < MC ? m1 - ic : MC;
                pack_a(mc, kc, g->A + ic * g->rsa + pc * g->csa, g->rsa, g->csa, ap);
                for (int64_t jr = 0; jr < nc; jr += NR)
                    for (int64_t ir = 0; ir < mc; ir += MR)
                        micro_kernel(kc, ap + ir * kc, bp + jr * kc, g->C + (ic + ir) * g->ldc + jc + jr, g->ldc,
                                     (int)(mc - ir < MR ? mc - ir : MR), (int)(nc - jr < NR ? nc - jr : NR), g->alpha,
                                     g->beta, pc == 0);
            }
        }
    }
    ls_free_aligned(ap);
    ls_free_aligned(bp);
}

/* Few rows (a matrix-vector product in disguise): packing would cost as much as the product,
 * so go straight through B, a row of C at a time. */
LK_HOT static void gemm_small_m(const gemm_args *g)
{
    for (int64_t i = 0; i < g->M; i++) {
        float *crow = g->C + i * g->ldc;
        const float *arow = g->A + i * g->rsa;
        if (g->csb == 1) { /* rows of B are contiguous: C row = Σ a_k · B row k */
            float *acc = lk_alloc_tmp(sizeof(float) * (size_t)g->N + 64);
            for (int64_t j = 0; j < g->N; j++) acc[j] = 0;
            for (int64_t k = 0; k < g->K; k++) {
                const float av = arow[k * g->csa];
                const float *restrict brow = g->B + k * g->rsb;
                for (int64_t j = 0; j < g->N; j++) acc[j] += av * brow[j];
            }
            for (int64_t j = 0; j < g->N; j++)
                crow[j] = g->beta == 0 ? g->alpha * acc[j] : g->alpha * acc[j] + g->beta * crow[j];
            ls_free_aligned(acc);
        } else { /* columns of B are contiguous (B transposed, as linear has it): dot products */
            for (int64_t j = 0; j < g->N; j++) {
                const float *restrict bcol = g->B + j * g->csb;
                float lanes[16] = {0};
                int64_t k = 0;
                if (g->csa == 1 && g->rsb == 1) {
                    for (; k + 16 <= g->K; k += 16)
                        for (int q = 0; q < 16; q++) lanes[q] += arow[k + q] * bcol[k + q];
                }
                float s = 0;
                for (int q = 0; q < 16; q++) s += lanes[q];
                for (; k < g->K; k++) s += arow[k * g->csa] * bcol[k * g->rsb];
                crow[j] = g->beta == 0 ? g->alpha * s : g->alpha * s + g->beta * crow[j];
            }
        }
    }
}

/* Two threads share the product in chunks of columns (or rows, when there are few columns)
 * handed out one at a time: when the machine is busy and one thread runs slower, the other
 * simply takes more chunks, so two threads are never much worse than one. */
typedef struct gemm_job {
    const gemm_args *g;
    bool by_cols;
    int64_t chunk, n_chunks;
    atomic_int_fast64_t next;
} gemm_job;

static void *gemm_thread(void *p)
{
    gemm_job *j = p;
    for (;;) {
        int64_t c = atomic_fetch_add(&j->next, 1);
        if (c >= j->n_chunks) break;
        int64_t lo = c * j->chunk;
        if (j->by_cols) gemm_part(j->g, 0, j->g->M, lo, lo + j->chunk < j->g->N ? lo + j->chunk : j->g->N);
        else gemm_part(j->g, lo, lo + j->chunk < j->g->M ? lo + j->chunk : j->g->M, 0, j->g->N);
    }
    return NULL;
}

static void sgemm(const gemm_args *g, bool allow_threads)
{
    if (g->M <= 0 || g->N <= 0) return;
    if (g->K == 0) { /* an empty sum: C = beta·C */
        for (int64_t i = 0; i < g->M; i++)
            for (int64_t j = 0; j < g->N; j++) {
                float *p = &g->C[i * g->ldc + j];
                *p = g->beta == 0 ? 0 : g->beta * *p;
            }
        return;
    }
    if (g->M <= 4) {
        gemm_small_m(g);
        return;
    }
    double flops = 2.0 * (double)g->M * (double)g->N * (double)g->K;
    if (!allow_threads || lk_threads() < 2 || flops < 4e6) {
        gemm_part(g, 0, g->M, 0, g->N);
        return;
    }
    /* about eight chunks, each a whole number of micro-tiles (more would repack A too often) */
    gemm_job j = {.g = g, .by_cols = g->N >= 4 * NR};
    int64_t extent = j.by_cols ? g->N : g->M, unit = j.by_cols ? NR : MR;
    j.chunk = (extent / 8 + unit - 1) / unit * unit;
    if (j.chunk < unit) j.chunk = unit;
    j.n_chunks = (extent + j.chunk - 1) / j.chunk;
    atomic_init(&j.next, 0);
    pthread_t th;
    if (pthread_create(&th, NULL, gemm_thread, &j) != 0) {
        gemm_thread(&j);
        return;
    }
    gemm_thread(&j);
    pthread_join(th, NULL);
}

void lk_sgemm(int64_t M, int64_t N, int64_t K, float alpha, const float *A, int64_t rsa, int64_t csa,
              const float *B, int64_t rsb, int64_t csb, float beta, float *C, int64_t ldc)
{
    gemm_args g = {M, N, K, alpha, beta, A, B, rsa, csa, rsb, csb, C, ldc};
    sgemm(&g, true);
}

void ls_sgemm(int64_t M, int64_t N, int64_t K, const float *A, const float *B, float *C)
{
    lk_sgemm(M, N, K, 1.0f, A, K, 1, B, N, 1, 0.0f, C, N);
}

/* ---- other dtypes: plain i-k-j loops in the compute type */

LK_HOT static void gemm_f64(int64_t M, int64_t N, int64_t K, const double *A, int64_t rsa, int64_t csa,
                            const double *B, int64_t rsb, int64_t csb, double *restrict C)
{
    for (int64_t i = 0; i < M; i++) {
        double *restrict crow = C + i * N;
        for (int64_t j = 0; j < N; j++) crow[j] = 0;
        for (int64_t k = 0; k < K; k++) {
            const double av = A[i * rsa + k * csa];
            const double *brow = B + k * rsb;
            for (int64_t j = 0; j < N; j++) crow[j] += av * brow[j * csb];
        }
    }
}

LK_HOT static void gemm_i64(int64_t M, int64_t N, int64_t K, const int64_t *A, int64_t rsa, int64_t csa,
                            const int64_t *B, int64_t rsb, int64_t csb, int64_t *restrict C)
{
    for (int64_t i = 0; i < M; i++) {
        uint64_t *restrict crow = (uint64_t *)(C + i * N);
        for (int64_t j = 0; j < N; j++) crow[j] = 0;
        for (int64_t k = 0; k < K; k++) {
            const uint64_t av = (uint64_t)A[i * rsa + k * csa];
            const int64_t *brow = B + k * rsb;
            for (int64_t j = 0; j < N; j++) crow[j] += av * (uint64_t)brow[j * csb];
        }
    }
}

/* ---- batched products with broadcasting batch dims */

typedef struct bmm_job {
    ls_dtype ct;
    int nb;                       /* batch dims */
    int64_t bshape[LS_MAX_DIMS];  /* broadcast batch shape */
    int64_t sa[LS_MAX_DIMS], sb[LS_MAX_DIMS]; /* batch strides of a and b (elements, 0 = broadcast) */
    int64_t M, N, K;
    int64_t rsa, csa, rsb, csb;
    const uint8_t *a, *b;
    uint8_t *c;
    bool threads_inside;
} bmm_job;

static void bmm_range(void *vctx, int64_t lo, int64_t hi)
{
    bmm_job *j = vctx;
    size_t es = ls_dtype_size(j->ct);
    for (int64_t bi = lo; bi < hi; bi++) {
        int64_t oa = 0, ob = 0, r = bi;
        for (int d = j->nb - 1; d >= 0; d--) {
            int64_t idx = r % j->bshape[d];
            r /= j->bshape[d];
            oa += idx * j->sa[d];
            ob += idx * j->sb[d];
        }
        const uint8_t *a = j->a + (size_t)oa * es, *b = j->b + (size_t)ob * es;
        uint8_t *c = j->c + (size_t)(bi * j->M * j->N) * es;
        if (j->ct == LS_DT_F32) {
            gemm_args g = {j->M, j->N, j->K, 1.0f, 0.0f, (const float *)a, (const float *)b, j->rsa, j->csa,
                           j->rsb, j->csb, (float *)c, j->N};
            sgemm(&g, j->threads_inside);
        } else if (j->ct == LS_DT_F64) {
            gemm_f64(j->M, j->N, j->K, (const double *)a, j->rsa, j->csa, (const double *)b, j->rsb, j->csb,
                     (double *)c);
        } else {
            gemm_i64(j->M, j->N, j->K, (const int64_t *)a, j->rsa, j->csa, (const int64_t *)b, j->rsb, j->csb,
                     (int64_t *)c);
        }
    }
}

/* a: [..., M, K], b: [..., K, N] (both at least 2-d); out: [broadcast(...), M, N]. */
int lk_matmul(ls_kctx *c, const ls_tensor *a, const ls_tensor *b, ls_value *out)
{
    char s1[96], s2[96];
    if (a->ndim < 2 || b->ndim < 2) return ls_kfail(c, "matrix product of %d-d and %d-d tensors", a->ndim, b->ndim);
    int64_t M = a->sizes[a->ndim - 2], K = a->sizes[a->ndim - 1], N = b->sizes[b->ndim - 1];
    if (b->sizes[b->ndim - 2] != K)
        return ls_kfail(c, "shapes %s and %s cannot be multiplied (%lld != %lld)",
                        lk_shape_str(a->ndim, a->sizes, s1, sizeof s1), lk_shape_str(b->ndim, b->sizes, s2, sizeof s2),
                        (long long)K, (long long)b->sizes[b->ndim - 2]);
    bmm_job j;
    memset(&j, 0, sizeof j);
    if (lk_broadcast_shape(c, a->ndim - 2, a->sizes, b->ndim - 2, b->sizes, &j.nb, j.bshape) != 0) return -1;
    ls_dtype rt = ls_dtype_promote(a->dtype, b->dtype);
    if (rt == LS_DT_BOOL) return ls_kfail(c, "matrix product of bool tensors is not supported");
    j.ct = lk_compute_type(rt);
    int64_t oshape[LS_MAX_DIMS];
    memcpy(oshape, j.bshape, sizeof(int64_t) * (size_t)j.nb);
    oshape[j.nb] = M;
    oshape[j.nb + 1] = N;
    if (j.nb + 2 > LS_MAX_DIMS) return ls_kfail(c, "too many dimensions");
    ls_tensor *res = lk_new(c, rt, j.nb + 2, oshape);
    if (!res) return -1;
    int64_t batches = lk_numel(j.nb, j.bshape);
    /* batch strides, right-aligned */
    int64_t sa = M * K, sb = K * N;
    for (int d = j.nb - 1; d >= 0; d--) {
        int da = d - (j.nb - (a->ndim - 2)), db = d - (j.nb - (b->ndim - 2));
        int64_t za = da >= 0 ? a->sizes[da] : 1, zb = db >= 0 ? b->sizes[db] : 1;
        j.sa[d] = za == 1 ? 0 : sa;
        j.sb[d] = zb == 1 ? 0 : sb;
        sa *= za;
        sb *= zb;
    }
    j.M = M, j.N = N, j.K = K;
    j.rsa = K, j.csa = 1, j.rsb = N, j.csb = 1;
    void *ta, *tb, *tc = NULL;
    j.a = lk_as(a, j.ct, &ta);
    j.b = lk_as(b, j.ct, &tb);
    j.c = res->data;
    if (j.ct != rt) j.c = tc = lk_alloc_tmp((size_t)res->numel * ls_dtype_size(j.ct) + 1);
    double per = 2.0 * (double)M * (double)N * (double)K;
    j.threads_inside = batches == 1 || per >= 4e6;
    if (j.threads_inside) bmm_range(&j, 0, batches);
    else lk_parallel(batches, per, bmm_range, &j);
    if (tc) lk_convert(res->data, rt, tc, j.ct, res->numel);
    ls_free_aligned(ta);
    ls_free_aligned(tb);
    ls_free_aligned(tc);
    return lk_ret(out, res);
}

/* ---- kernels */

LK_DECL(k_mm)
{
    const ls_tensor *a = args[0].t, *b = args[1].t;
    if (a->ndim != 2 || b->ndim != 2) return ls_kfail(c, "expects 2-d tensors, got %d-d and %d-d", a->ndim, b->ndim);
    return lk_matmul(c, a, b, out);
}

LK_DECL(k_bmm)
{
    const ls_tensor *a = args[0].t, *b = args[1].t;
    if (a->ndim != 3 || b->ndim != 3) return ls_kfail(c, "expects 3-d tensors, got %d-d and %d-d", a->ndim, b->ndim);
    if (a->sizes[0] != b->sizes[0])
        return ls_kfail(c, "batch sizes differ: %lld and %lld", (long long)a->sizes[0], (long long)b->sizes[0]);
    return lk_matmul(c, a, b, out);
}

/* torch.matmul: 1-d operands are promoted to matrices and the added dim removed after. */
LK_DECL(k_matmul)
{
    ls_tensor *a = args[0].t, *b = args[1].t;
    if (a->ndim == 0 || b->ndim == 0) return ls_kfail(c, "both arguments to matmul need to be at least 1-d");
    int64_t sz[LS_MAX_DIMS];
    ls_tensor *a2 = NULL, *b2 = NULL;
    if (a->ndim == 1) {
        sz[0] = 1, sz[1] = a->sizes[0];
        a = a2 = ls_tensor_reshape(a, 2, sz);
    }
    if (b->ndim == 1) {
        sz[0] = b->sizes[0], sz[1] = 1;
        b = b2 = ls_tensor_reshape(b, 2, sz);
    }
    ls_value r;
    int rc = lk_matmul(c, a, b, &r);
    if (rc == 0 && (a2 || b2)) {
        ls_tensor *t = r.t;
        int nd = 0;
        for (int d = 0; d < t->ndim; d++) {
            if (a2 && d == t->ndim - 2) continue;
            if (b2 && d == t->ndim - 1) continue;
            sz[nd++] = t->sizes[d];
        }
        r.t = ls_tensor_reshape(t, nd, sz);
        ls_tensor_unref(t);
    }
    ls_tensor_unref(a2);
    ls_tensor_unref(b2);
    if (rc == 0) *out = r;
    return rc;
}

/* beta·self + alpha·(m1 · m2), self broadcast to [M, N]. */
static int addmm_impl(ls_kctx *c, const ls_tensor *self, const ls_tensor *m1, const ls_tensor *m2, double beta,
                      double alpha, bool m2_transposed, ls_value *out)
{
    int64_t M = m1->sizes[0], K = m1->sizes[1];
    int64_t N = m2_transposed ? m2->sizes[0] : m2->sizes[1], K2 = m2_transposed ? m2->sizes[1] : m2->sizes[0];
    char s1[96], s2[96];
    if (K != K2)
        return ls_kfail(c, "shapes %s and %s cannot be multiplied (%lld != %lld)",
                        lk_shape_str(m1->ndim, m1->sizes, s1, sizeof s1),
                        lk_shape_str(m2->ndim, m2->sizes, s2, sizeof s2), (long long)K, (long long)K2);
    ls_dtype rt = ls_dtype_promote(m1->dtype, m2->dtype);
    if (self) rt = ls_dtype_promote(rt, self->dtype);
    int64_t oshape[2] = {M, N};
    ls_tensor *res = NULL;
    if (self) {
        int nd;
        int64_t bs[LS_MAX_DIMS];
        if (lk_broadcast_shape(c, self->ndim, self->sizes, 2, oshape, &nd, bs) != 0) return -1;
        if (nd != 2 || bs[0] != M || bs[1] != N)
            return ls_kfail(c, "bias of shape %s does not broadcast to [%lld, %lld]",
                            lk_shape_str(self->ndim, self->sizes, s1, sizeof s1), (long long)M, (long long)N);
    }
    if (lk_compute_type(rt) == LS_DT_F32) {
        /* float32 (and halves): the bias is broadcast into C first, then C = alpha·AB + beta·C */
        res = lk_new(c, rt, 2, oshape);
        if (!res) return -1;
        float *C = rt == LS_DT_F32 ? res->data : lk_alloc_tmp(sizeof(float) * (size_t)(M * N) + 4);
        if (self) {
            ls_tensor *e = lk_expand(c, self, 2, oshape);
            if (!e) {
                if (C != res->data) ls_free_aligned(C); /* before res goes: C may be its data */
                ls_tensor_unref(res);
                return -1;
            }
            lk_convert(C, LS_DT_F32, e->data, e->dtype, M * N);
            ls_tensor_unref(e);
        }
        void *ta, *tb;
        const float *A = lk_as(m1, LS_DT_F32, &ta), *B = lk_as(m2, LS_DT_F32, &tb);
        lk_sgemm(M, N, K, (float)alpha, A, K, 1, B, m2_transposed ? 1 : N, m2_transposed ? K : 1,
                 self ? (float)beta : 0.0f, C, N);
        if (rt != LS_DT_F32) {
            lk_convert(res->data, rt, C, LS_DT_F32, M * N);
            ls_free_aligned(C);
        }
        ls_free_aligned(ta);
        ls_free_aligned(tb);
        return lk_ret(out, res);
    }
    /* other dtypes: through the generic product, then the scaled sum */
    ls_value prod;
    int rc;
    if (m2_transposed) {
        ls_tensor *m2t = lk_permute(c, m2, (const int[]){1, 0});
        if (!m2t) return -1;
        rc = lk_matmul(c, m1, m2t, &prod);
        ls_tensor_unref(m2t);
    } else {
        rc = lk_matmul(c, m1, m2, &prod);
    }
    if (rc) return -1;
    res = prod.t;
    ls_tensor *e = self ? lk_expand(c, self, 2, oshape) : NULL;
    if (self && !e) {
        ls_tensor_unref(res);
        return -1;
    }
    for (int64_t i = 0; i < M * N; i++) {
        double v = alpha * ls_tensor_get_f64(res, i);
        if (e) v += beta * ls_tensor_get_f64(e, i);
        ls_tensor_set_f64(res, i, v);
    }
    ls_tensor_unref(e);
    return lk_ret(out, res);
}

LK_DECL(k_addmm)
{
    const ls_tensor *m1 = args[1].t, *m2 = args[2].t;
    if (m1->ndim != 2 || m2->ndim != 2) return ls_kfail(c, "expects 2-d matrices, got %d-d and %d-d", m1->ndim, m2->ndim);
    return addmm_impl(c, args[0].t, m1, m2, lk_f64(&args[3]), lk_f64(&args[4]), false, out);
}

/* linear(x[..., K], W[N, K], b[N]?) = x Wᵀ + b: W is read transposed in place. */
LK_DECL(k_linear)
{
    ls_tensor *x = args[0].t;
    const ls_tensor *w = args[1].t, *bias = lk_none(&args[2]) ? NULL : args[2].t;
    if (w->ndim != 2) return ls_kfail(c, "weight must be 2-d, got %d-d", w->ndim);
    if (x->ndim < 1) return ls_kfail(c, "input must be at least 1-d");
    int64_t K = x->sizes[x->ndim - 1], rows = K ? x->numel / K : 0;
    if (K == 0) rows = lk_numel(x->ndim - 1, x->sizes);
    ls_tensor *x2 = ls_tensor_reshape(x, 2, (int64_t[]){rows, K});
    ls_value r;
    int rc = addmm_impl(c, bias, x2, w, 1.0, 1.0, true, &r);
    ls_tensor_unref(x2);
    if (rc) return -1;
    int64_t sz[LS_MAX_DIMS];
    memcpy(sz, x->sizes, sizeof(int64_t) * x->ndim);
    sz[x->ndim - 1] = w->sizes[0];
    *out = ls_value_tensor(ls_tensor_reshape(r.t, x->ndim, sz));
    ls_tensor_unref(r.t);
    return 0;
}
