/* The lowering pipeline on generated programs of 50k, 100k and 200k nodes: the whole default
 * pipeline (every pass, the diff against the step before, the verifier after every step, the
 * bundled backend's preprocess), medians of 5 runs, and the ratio 200k / 100k.
 * Goal: 100k nodes under 1 s on the 2-core machine, ratio ≤ 2.3 (cost linear in the program).
 *
 * The programs (src/formats/pt2/gen_program.c): an ATen chain with parameters (linear layers, so to_edge
 * decomposes and constant_prop folds the weight transposes), split every partition by a `sin`
 * the bundled backend leaves on the CPU (nodes / 50 partitions), and nodes / 200 lifted
 * constants of which 10% are each read in 1000 partitions — the shape that made ExecuTorch's
 * to_backend take about an hour before PR #24481.
 *
 * Runs go round by round (50k, 100k, 200k, then again), and the ratio is also given as the
 * median of each round's own ratio, which a slow spell of the machine moves less.
 *
 * Each run is a child process of its own that generates and loads the program, then runs the
 * pipeline (only the pipeline is timed), so runs neither inherit each other's heap nor pay for
 * copy-on-write pages of a parent's program. Wall and CPU time are both printed: on a busy
 * machine the CPU time is the steadier of the two. Prints figures, never fails on timing. */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/resource.h>
#include <sys/wait.h>
#include <time.h>
#include <unistd.h>

#include "gen_program.h"
#include "passes.h"

#define RUNS 5
#define MAX_STEPS 32

typedef struct result {
    double wall, cpu, sys;
    long faults; /* minor page faults during the pipeline: fresh memory the kernel had to map */
    uint32_t n_steps;
    double step_seconds[MAX_STEPS];
    uint32_t nodes_after, subs_after, failed_step;
} result;

static double cpu_now(void)
{
    struct timespec ts;
    clock_gettime(CLOCK_PROCESS_CPUTIME_ID, &ts);
    return (double)ts.tv_sec + (double)ts.tv_nsec * 1e-9;
}

static int cmp_double(const void *a, const void *b)
{
    double x = *(const double *)a, y = *(const double *)b;
    return x < y ? -1 : x > y;
}

static double median(double *v, int n)
{
    qsort(v, (size_t)n, sizeof *v, cmp_double);
    return v[n / 2];
}

static ls_gen_opts opts_for(uint32_t nodes)
{
    ls_gen_opts o = ls_gen_defaults(nodes);
    o.partitions = nodes / 50;
    o.constants = nodes / 200;
    o.shared_fraction = 0.1;
    o.share_partitions = 1000;
    o.cpu_boundaries = true;
    o.with_data = true;
    return o;
}

/* One run in a child; the result comes back through a pipe. */
static int run_once(const ls_gen_opts *o, const ls_pipeline_opts *po, result *res)
{
    int fds[2];
    if (pipe(fds) != 0) return -1;
    pid_t pid = fork();
    if (pid < 0) return -1;
    if (pid == 0) {
        close(fds[0]);
        result r = {0};
        ls_memory_keep_freed(); /* as the lowerscope command does first */
        ls_history h;
        ls_error err;
        ls_program *p = ls_gen_program(o, &err);
        if (!p) {
            fprintf(stderr, "bench_pipeline: generating %u nodes: %s\n", o->nodes, err.msg);
            _exit(1);
        }
        struct rusage u0, u1;
        getrusage(RUSAGE_SELF, &u0);
        double w0 = ls_now(), c0 = cpu_now();
        int rc = ls_pipeline_run(p, po, &h, &err);
        r.wall = ls_now() - w0;
        r.cpu = cpu_now() - c0;
        getrusage(RUSAGE_SELF, &u1);
        r.sys = (double)(u1.ru_stime.tv_sec - u0.ru_stime.tv_sec) + (double)(u1.ru_stime.tv_usec - u0.ru_stime.tv_usec) * 1e-6;
        r.faults = u1.ru_minflt - u0.ru_minflt;
        r.failed_step = UINT32_MAX;
        if (rc == 0) {
            r.n_steps = h.n < MAX_STEPS ? h.n : MAX_STEPS;
            for (uint32_t i = 0; i < r.n_steps; i++) {
                r.step_seconds[i] = h.steps[i].seconds;
                if (h.steps[i].error && r.failed_step == UINT32_MAX) {
                    r.failed_step = i;
                    fprintf(stderr, "bench_pipeline: step %u (%s): %s\n", i, h.steps[i].pass, h.steps[i].error);
                }
            }
            r.nodes_after = h.steps[h.n - 1].program->n_nodes;
            r.subs_after = h.steps[h.n - 1].program->n_subs;
        } else {
            fprintf(stderr, "bench_pipeline: %s\n", err.msg);
        }
        ssize_t w = write(fds[1], &r, sizeof r);
        _exit(w == (ssize_t)sizeof r && rc == 0 ? 0 : 1);
    }
    close(fds[1]);
    ssize_t got = read(fds[0], res, sizeof *res);
    close(fds[0]);
    int status = 0;
    waitpid(pid, &status, 0);
    return got == (ssize_t)sizeof *res && WIFEXITED(status) && WEXITSTATUS(status) == 0 ? 0 : -1;
}

/* bench_pipeline [RUNS [NODES]]: by default 5 runs of each size; with NODES, that size only
 * (e.g. `valgrind --tool=callgrind build/bench/bench_pipeline 1 50000`). */
int main(int argc, char **argv)
{
    uint32_t sizes[3] = {50000, 100000, 200000};
    int n_sizes = 3, runs = RUNS;
    if (argc > 1) runs = atoi(argv[1]) > 0 && atoi(argv[1]) <= RUNS ? atoi(argv[1]) : RUNS;
    if (argc > 2 && atoi(argv[2]) > 0) {
        sizes[0] = (uint32_t)atoi(argv[2]);
        n_sizes = 1;
    }
    double med_wall[3] = {0}, med_cpu[3] = {0};
    ls_pipeline_opts po;
    ls_pipeline_opts_init(&po);
    ls_plan_step plan[MAX_STEPS];
    uint32_t n_plan = ls_pipeline_plan(&po, plan, MAX_STEPS);
    printf("bench_pipeline: the default pipeline (%u passes, verifier after every step), median of %d runs\n", n_plan, runs);
    /* rounds outside, sizes inside: a slow spell of the shared machine hits every size of a
     * round alike, and the ratio of each round is taken before the median */
    static double wall[3][RUNS], cpu[3][RUNS], sys[3][RUNS], faults[3][RUNS], steps[3][MAX_STEPS][RUNS], rest[3][RUNS];
    static result last[3];
    for (int k = 0; k < runs; k++) {
        for (int s = 0; s < n_sizes; s++) {
            ls_gen_opts o = opts_for(sizes[s]);
            result r = {0};
            if (run_once(&o, &po, &r) != 0) {
                fprintf(stderr, "bench_pipeline: run %d on %u nodes failed\n", k, sizes[s]);
                return 1;
            }
            wall[s][k] = r.wall;
            cpu[s][k] = r.cpu;
            sys[s][k] = r.sys;
            faults[s][k] = (double)r.faults;
            rest[s][k] = r.wall;
            for (uint32_t i = 0; i < r.n_steps; i++) {
                steps[s][i][k] = r.step_seconds[i];
                rest[s][k] -= r.step_seconds[i];
            }
            last[s] = r;
        }
    }
    double ratio_wall[RUNS], ratio_cpu[RUNS], ratio_user[RUNS];
    for (int k = 0; k < runs && n_sizes == 3; k++) {
        ratio_wall[k] = wall[2][k] / wall[1][k];
        ratio_cpu[k] = cpu[2][k] / cpu[1][k];
        ratio_user[k] = (cpu[2][k] - sys[2][k]) / (cpu[1][k] - sys[1][k]);
    }
    for (int s = 0; s < n_sizes; s++) {
        ls_gen_opts o = opts_for(sizes[s]);
        const result *r = &last[s];
        med_wall[s] = median(wall[s], runs);
        med_cpu[s] = median(cpu[s], runs);
        printf("\n%6u call nodes (%u constants, %u partitions): %.3f s wall, %.3f s CPU\n", o.nodes, o.constants,
               o.partitions, med_wall[s], med_cpu[s]);
        printf("        after: %u top-level nodes, %u lowered modules; %.3f s of the CPU time in the kernel, %.0f page faults\n",
               r->nodes_after, r->subs_after, median(sys[s], runs), median(faults[s], runs));
        printf("        passes (median, without diff and verifier):");
        for (uint32_t i = 1; i < r->n_steps && i <= n_plan; i++)
            printf("%s %s %.3f", i == 1 ? "" : ",", plan[i - 1].pass->name, median(steps[s][i], runs));
        printf("\n        the rest (diff against the step before, verifier after every step): %.3f s\n",
               median(rest[s], runs));
    }
    if (n_sizes == 1) {
        ls_pipeline_opts_free(&po);
        return 0;
    }
    printf("\nmedians: 50k %.3f s, 100k %.3f s, 200k %.3f s (wall); %.3f / %.3f / %.3f s (CPU)\n", med_wall[0],
           med_wall[1], med_wall[2], med_cpu[0], med_cpu[1], med_cpu[2]);
    printf("ratio 200k/100k: %.2f wall, %.2f CPU; median of the rounds' own ratios %.2f wall, %.2f CPU\n"
           "(goal: 100k under 1 s, ratio <= 2.3)\n",
           med_wall[2] / med_wall[1], med_cpu[2] / med_cpu[1], median(ratio_wall, runs), median(ratio_cpu, runs));
    /* the kernel's share is the fresh pages the steps take; on a VM what one costs varies with the
     * host from run to run (the same page-fault counts have cost 0.3 s and 1.1 s at 200k) */
    printf("without the kernel's time (user CPU only): ratio %.2f (median of the rounds' own ratios)\n",
           median(ratio_user, runs));
    ls_pipeline_opts_free(&po);
    return 0;
}
