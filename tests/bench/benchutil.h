/* What the benchmarks share: CPU time, medians, and a measurement made in a fresh process. */
#ifndef LS_BENCHUTIL_H
#define LS_BENCHUTIL_H

#include <stddef.h>

/* CPU seconds of this process (steadier than the wall clock, ls_now, on a busy machine). */
double bench_cpu_now(void);

/* Prints "NAME benchmark: 2 threads for large work, load average 1.23": timings on a shared
 * machine mean little without its load. */
void bench_print_header(const char *name);

/* The median of v[0..n) (sorts v); of an even count, the mean of the middle two. */
double bench_median(double *v, int n);

/* Runs measure(arg, result) in a child process and copies its result (result_size bytes, plain
 * data) back: the measurement starts cold, as a command-line run does, and neither the parent
 * nor the next run shares its heap. Returns 0, or -1 when the child could not be started or
 * measure returned nonzero. */
int bench_in_child(int (*measure)(const void *arg, void *result), const void *arg, void *result, size_t result_size);

/* A generated program as a .pt2 in dir (the pipeline bench's shape: nodes / 50 partitions split
 * by a sin the bundled backend leaves on the CPU, nodes / 200 constants, 10% of them read in 1000
 * partitions); path gets its name. Returns 0, or -1 with a message on stderr. *json_bytes: the
 * size of its model JSON. */
int bench_gen_pt2(unsigned nodes, const char *dir, char *path, size_t cap, size_t *json_bytes);

/* Runs argv (argv[0] a path) with the extra environment `env` ("NAME=VALUE", NULL-terminated;
 * may be NULL) and its output to /dev/null; *cpu the child's user + system seconds, *peak_kb its
 * largest resident size. Returns its exit code, or -1 when it could not run. */
int bench_run(char *const argv[], char *const env[], double *cpu, long *peak_kb);
/* The same with the user and system seconds apart. */
int bench_run_split(char *const argv[], char *const env[], double *user, double *sys, long *peak_kb);

/* What the machine charges for first touching `kb` of fresh memory: a child that maps that
 * much and writes each page once; its user + system seconds (-1 when it failed). On a VM whose
 * free memory goes back to the host (a balloon's free page reporting), a page the guest has not
 * used lately costs a fault in the host as well, and that cost grows faster than the memory. */
double bench_first_touch(long kb);

#endif
