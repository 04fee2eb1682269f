/* What the benchmarks share (benchutil.h). */
#include "benchutil.h"

#include "gen_program.h"
#include "runtime.h"

#include <fcntl.h>
#include <sys/mman.h>
#include <sys/resource.h>

#include <stdio.h>
#include <stdlib.h>
#include <sys/wait.h>
#include <time.h>
#include <unistd.h>

double bench_cpu_now(void)
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

double bench_median(double *v, int n)
{
    qsort(v, (size_t)n, sizeof *v, cmp_double);
    return n % 2 ? v[n / 2] : (v[n / 2 - 1] + v[n / 2]) / 2;
}

int bench_in_child(int (*measure)(const void *arg, void *result), const void *arg, void *result, size_t result_size)
{
    int fds[2];
    if (pipe(fds) != 0) return -1;
    pid_t pid = fork();
    if (pid < 0) {
        close(fds[0]);
        close(fds[1]);
        return -1;
    }
    if (pid == 0) {
        close(fds[0]);
        int rc = measure(arg, result);
        if (rc == 0 && write(fds[1], result, result_size) != (ssize_t)result_size) rc = -1;
        _exit(rc == 0 ? 0 : 1); /* the process ends: nothing to free */
    }
    close(fds[1]);
    size_t got = 0;
    for (ssize_t n; got < result_size && (n = read(fds[0], (char *)result + got, result_size - got)) > 0;)
        got += (size_t)n;
    close(fds[0]);
    int status = 0;
    waitpid(pid, &status, 0);
    return got == result_size && WIFEXITED(status) && WEXITSTATUS(status) == 0 ? 0 : -1;
}

void bench_print_header(const char *name)
{
    FILE *f = fopen("/proc/loadavg", "r");
    double load = -1;
    if (f) {
        if (fscanf(f, "%lf", &load) != 1) load = -1;
        fclose(f);
    }
    printf("%s benchmark: %d thread%s for large work, load average %.2f\n", name, ls_runtime_threads(),
           ls_runtime_threads() == 1 ? "" : "s", load);
}

int bench_gen_pt2(unsigned nodes, const char *dir, char *path, size_t cap, size_t *json_bytes)
{
    ls_gen_opts o = ls_gen_defaults(nodes);
    o.partitions = nodes / 50;
    o.constants = nodes / 200;
    o.shared_fraction = 0.1;
    o.share_partitions = 1000;
    o.cpu_boundaries = true;
    o.with_data = true;
    snprintf(path, cap, "%s/gen%u.pt2", dir, nodes);
    if (json_bytes) {
        size_t len;
        free(ls_gen_json(&o, &len));
        *json_bytes = len;
    }
    ls_error err;
    if (ls_gen_write_pt2(&o, path, &err) != 0) {
        fprintf(stderr, "bench: %s\n", err.msg);
        return -1;
    }
    return 0;
}

int bench_run(char *const argv[], char *const env[], double *cpu, long *peak_kb)
{
    double user = 0, sys = 0;
    int rc = bench_run_split(argv, env, &user, &sys, peak_kb);
    if (cpu) *cpu = user + sys;
    return rc;
}

int bench_run_split(char *const argv[], char *const env[], double *user, double *sys, long *peak_kb)
{
    pid_t pid = fork();
    if (pid < 0) return -1;
    if (pid == 0) {
        for (int i = 0; env && env[i]; i++) putenv(env[i]);
        int null = open("/dev/null", O_WRONLY);
        if (null >= 0) dup2(null, 1);
        execv(argv[0], argv);
        _exit(127);
    }
    int status = 0;
    struct rusage ru;
    if (wait4(pid, &status, 0, &ru) < 0) return -1;
    *user = (double)ru.ru_utime.tv_sec + (double)ru.ru_utime.tv_usec * 1e-6;
    *sys = (double)ru.ru_stime.tv_sec + (double)ru.ru_stime.tv_usec * 1e-6;
    if (peak_kb) *peak_kb = ru.ru_maxrss;
    return WIFEXITED(status) ? WEXITSTATUS(status) : -1;
}

double bench_first_touch(long kb)
{
    pid_t pid = fork();
    if (pid < 0) return -1;
    if (pid == 0) {
        size_t n = (size_t)kb << 10;
        volatile char *p = mmap(NULL, n, PROT_READ | PROT_WRITE, MAP_PRIVATE | MAP_ANONYMOUS, -1, 0);
        if (p == MAP_FAILED) _exit(1);
        for (size_t i = 0; i < n; i += 4096) p[i] = 1;
        _exit(0);
    }
    int status = 0;
    struct rusage ru;
    if (wait4(pid, &status, 0, &ru) < 0 || !WIFEXITED(status) || WEXITSTATUS(status) != 0) return -1;
    return (double)(ru.ru_utime.tv_sec + ru.ru_stime.tv_sec) + (double)(ru.ru_utime.tv_usec + ru.ru_stime.tv_usec) * 1e-6;
}
