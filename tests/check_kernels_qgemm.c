/* The int8 GEMM (gemm.h: ls_qgemm_s8) against plain dot products, on sizes that leave partial
 * tiles in every direction and on row strides wider than K, through the AVX-512 VNNI path (on a
 * CPU that has it) and the portable one (LS_NO_VNNI=1); and ls_sgemm_ex with transposed B. */
#include <check.h>
#include <stdlib.h>

#include "gemm.h"

static int8_t rnd8(uint32_t *s)
{
    *s = *s * 1103515245u + 12345u;
    return (int8_t)(*s >> 16);
}

static void check_sizes(int64_t M, int64_t N, int64_t K)
{
    int64_t lda = K + 3, ldb = K + 5, ldc = N + 2;
    int8_t *A = malloc((size_t)(M * lda)), *B = malloc((size_t)(N * ldb));
    int32_t *C = malloc(sizeof *C * (size_t)(M * ldc));
    uint32_t s = (uint32_t)(M * 131 + N * 17 + K);
    for (int64_t i = 0; i < M * lda; i++) A[i] = rnd8(&s);
    for (int64_t i = 0; i < N * ldb; i++) B[i] = rnd8(&s);
    /* extremes in one row and column: -128 · -128 sums must not overflow */
    for (int64_t k = 0; k < K; k++) A[k] = -128, B[k] = -128;
    ls_qgemm_s8(M, N, K, A, lda, B, ldb, C, ldc);
    for (int64_t m = 0; m < M; m++)
        for (int64_t n = 0; n < N; n++) {
            int32_t want = 0;
            for (int64_t k = 0; k < K; k++) want += (int32_t)A[m * lda + k] * B[n * ldb + k];
            ck_assert_msg(C[m * ldc + n] == want, "%lldx%lldx%lld at (%lld, %lld): %d, want %d", (long long)M,
                          (long long)N, (long long)K, (long long)m, (long long)n, C[m * ldc + n], want);
        }
    free(A);
    free(B);
    free(C);
}

START_TEST(qgemm_matches_dot_products)
{
    const int64_t sizes[][3] = {{1, 1, 1}, {7, 19, 13}, {6, 16, 4}, {13, 33, 70}, {64, 48, 257}, {3, 5, 1031}};
    for (int pass = 0; pass < 2; pass++) {
        if (pass) setenv("LS_NO_VNNI", "1", 1);
        for (size_t i = 0; i < sizeof sizes / sizeof sizes[0]; i++) check_sizes(sizes[i][0], sizes[i][1], sizes[i][2]);
    }
    unsetenv("LS_NO_VNNI");
}
END_TEST

START_TEST(sgemm_ex_transposed_b)
{
    enum { M = 5, N = 7, K = 9 };
    float A[M * K], B[N * K], C[M * N];
    for (int i = 0; i < M * K; i++) A[i] = (float)(i % 7) - 3;
    for (int i = 0; i < N * K; i++) B[i] = (float)(i % 5) * 0.5f;
    ls_sgemm_ex(M, N, K, 1.0f, A, K, 1, B, 1, K, 0.0f, C, N); /* B stored [N][K] */
    for (int m = 0; m < M; m++)
        for (int n = 0; n < N; n++) {
            float want = 0;
            for (int k = 0; k < K; k++) want += A[m * K + k] * B[n * K + k];
            ck_assert_float_eq_tol(C[m * N + n], want, 1e-4);
        }
}
END_TEST

Suite *kernels_qgemm_suite(void)
{
    Suite *s = suite_create("kernels_qgemm");
    TCase *tc = tcase_create("core");
    tcase_add_test(tc, qgemm_matches_dot_products);
    tcase_add_test(tc, sgemm_ex_transposed_b);
    suite_add_tcase(s, tc);
    return s;
}
