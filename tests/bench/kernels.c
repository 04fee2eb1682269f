/* The runtime's speed, in one run (medians):
 *   1. elementwise add of 16M float32 as GB/s next to memcpy's GB/s on the same buffers
 *      (goal ≥ 50 % of memcpy), both through the allocation-free entry point and through the
 *      kernel table (which allocates its result);
 *   2. a 1024×1024×1024 float32 matmul in GFLOP/s (goal ≥ 20 on two cores);
 *   3. the tiny_llama sample's forward (one decode step) through the interpreter.
 * GB/s count the bytes each operation must move: add reads two buffers and writes one
 * (3 × 64 MiB), memcpy reads one and writes one (2 × 64 MiB). Never fails on timing. */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "benchutil.h"
#include "reader.h"
#include "runtime.h"

static void bench_add(void)
{
    enum { RUNS = 11 };
    int64_t n = 16 << 20;
    ls_tensor *a = ls_tensor_alloc(LS_DT_F32, 1, &n), *b = ls_tensor_alloc(LS_DT_F32, 1, &n);
    ls_tensor *c = ls_tensor_alloc(LS_DT_F32, 1, &n);
    for (int64_t i = 0; i < n; i++) ((float *)a->data)[i] = (float)(i & 1023), ((float *)b->data)[i] = 1.0f;
    double tm[RUNS], ta[RUNS], tk[RUNS];
    ls_error err;
    const ls_op *add = ls_op_get(LS_OP_add_Tensor);
    for (int r = 0; r < RUNS; r++) {
        double t0 = ls_now();
        memcpy(c->data, a->data, a->nbytes);
        tm[r] = ls_now() - t0;
        t0 = ls_now();
        if (ls_binary_into(LS_OP_add_Tensor, a, b, c, &err) != 0) {
            fprintf(stderr, "bench_kernels: %s\n", err.msg);
            exit(1);
        }
        ta[r] = ls_now() - t0;
        ls_value args[3] = {ls_value_tensor(a), ls_value_tensor(b), ls_value_int(1)}, out;
        t0 = ls_now();
        if (ls_kernel_call(add, NULL, args, 3, &out, &err) != 0) {
            fprintf(stderr, "bench_kernels: %s\n", err.msg);
            exit(1);
        }
        tk[r] = ls_now() - t0;
        ls_value_release(&out);
    }
    double bytes = (double)a->nbytes;
    double mem = 2 * bytes / bench_median(tm, RUNS) / 1e9, into = 3 * bytes / bench_median(ta, RUNS) / 1e9;
    double alloc = 3 * bytes / bench_median(tk, RUNS) / 1e9;
    printf("add 16M float32          %6.1f GB/s   memcpy %6.1f GB/s   = %3.0f%% of memcpy (goal >= 50%%)\n", into, mem,
           100 * into / mem);
    printf("  through the kernel table, result allocated: %.1f GB/s (%.0f%% of memcpy)\n", alloc, 100 * alloc / mem);
    ls_tensor_unref(a);
    ls_tensor_unref(b);
    ls_tensor_unref(c);
}

static void bench_matmul(void)
{
    enum { RUNS = 7, N = 1024 };
    float *A = ls_alloc_aligned(sizeof(float) * N * N), *B = ls_alloc_aligned(sizeof(float) * N * N);
    float *C = ls_alloc_aligned(sizeof(float) * N * N);
    for (int i = 0; i < N * N; i++) A[i] = (float)(i % 17) * 0.25f - 2, B[i] = (float)(i % 13) * 0.5f - 3;
    double t[RUNS];
    ls_sgemm(N, N, N, A, B, C); /* warm-up: page faults, thread start */
    for (int r = 0; r < RUNS; r++) {
        double t0 = ls_now();
        ls_sgemm(N, N, N, A, B, C);
        t[r] = ls_now() - t0;
    }
    /* spot-check one element against a plain dot product */
    double want = 0;
    for (int k = 0; k < N; k++) want += (double)A[5 * N + k] * B[k * N + 7];
    double m = bench_median(t, RUNS);
    printf("matmul 1024^3 float32    %6.1f GFLOP/s (%.1f ms, goal >= 20; %d thread%s)  check %s\n", 2.0 * N * N * N / m / 1e9,
           m * 1e3, ls_runtime_threads(), ls_runtime_threads() == 1 ? "" : "s",
           (C[5 * N + 7] - want) * (C[5 * N + 7] - want) < 1e-4 * (1 + want * want) ? "ok" : "WRONG");
    ls_free_aligned(A);
    ls_free_aligned(B);
    ls_free_aligned(C);
}

static void bench_tiny_llama(void)
{
    enum { RUNS = 21 };
    const char *root = getenv("LS_ROOT");
    char path[4096];
    snprintf(path, sizeof path, "%s/samples/tiny_llama.pt2", root ? root : ".");
    ls_program *p;
    ls_error err;
    if (ls_load(path, NULL, &p, &err) != 0) {
        printf("tiny_llama forward       skipped (%s)\n", err.msg);
        return;
    }
    ls_runner *r = ls_runner_new(p, &err);
    if (!r) {
        printf("tiny_llama forward       failed: %s\n", err.msg);
        ls_program_unref(p);
        return;
    }
    ls_value *in;
    uint32_t nin;
    if (ls_make_inputs(p, 0, 0, &in, &nin, &err) != 0) {
        printf("tiny_llama forward       failed: %s\n", err.msg);
        ls_runner_free(r);
        ls_program_unref(p);
        return;
    }
    double t[RUNS];
    for (int k = 0; k <= RUNS; k++) {
        ls_value *out;
        uint32_t nout;
        double t0 = ls_now();
        if (ls_runner_run(r, in, nin, &out, &nout, &err) != 0) {
            printf("tiny_llama forward       failed: %s\n", err.msg);
            break;
        }
        if (k) t[k - 1] = ls_now() - t0; /* the first run warms up */
        for (uint32_t i = 0; i < nout; i++) ls_value_release(&out[i]);
        free(out);
    }
    printf("tiny_llama forward       %6.3f ms (median of %d decode steps, %u nodes)\n", bench_median(t, RUNS) * 1e3, RUNS,
           p->n_nodes);
    for (uint32_t i = 0; i < nin; i++) ls_value_release(&in[i]);
    free(in);
    ls_runner_free(r);
    ls_program_unref(p);
}

int main(void)
{
    bench_print_header("kernels");
    bench_add();
    bench_matmul();
    bench_tiny_llama();
    return 0;
}
