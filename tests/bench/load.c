/* Loading a generated 100k-node program, next to what cJSON alone takes to parse its JSON.
 * Goal: load ≤ 1.3 × parse. Prints figures (median of 5 runs), never fails on timing.
 *
 * Every run is made in a fresh child process, as `lowerscope FILE` loads a file once: nothing
 * is warm (heap, interned strings, the arena's pages), and neither side inherits the other's
 * heap. Wall time and CPU time are both printed: on a busy machine CPU time is the steadier. */
#include <cjson/cJSON.h>
#include <stdio.h>
#include <stdlib.h>
#include <sys/wait.h>
#include <time.h>
#include <unistd.h>

#include "../../src/read_internal.h" /* the arena, to show the parse and the walk apart */
#include "gen_program.h"
#include "reader.h"

#define RUNS 5

enum { PARSE, PARSE_FREE, PARSE_ARENA, LOAD, LOAD_DATA };

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

static double median(double *v)
{
    qsort(v, RUNS, sizeof *v, cmp_double);
    return v[RUNS / 2];
}

/* One run; returns 0 or -1 with the wall and CPU seconds. */
static int measure(int what, const ls_gen_opts *o, const char *json, size_t len, double *wall, double *cpu,
                   uint32_t *nodes)
{
    double w0 = ls_now(), c0 = cpu_now();
    if (what == PARSE_ARENA) { /* what ls_load_json's parse costs, alone */
        ls_json_arena_begin();
        cJSON *root = cJSON_ParseWithLength(json, len);
        *wall = ls_now() - w0;
        *cpu = cpu_now() - c0;
        ls_json_arena_end();
        return root ? 0 : -1;
    }
    if (what == PARSE || what == PARSE_FREE) {
        cJSON *root = cJSON_ParseWithLength(json, len);
        if (!root) return -1;
        if (what == PARSE_FREE) cJSON_Delete(root);
        *wall = ls_now() - w0;
        *cpu = cpu_now() - c0;
        return 0;
    }
    ls_program *p;
    ls_error err;
    if (what == LOAD) {
        if (ls_load_json("generated", json, len, NULL, &p, &err) != 0) p = NULL;
    } else {
        p = ls_gen_program(o, &err);
    }
    *wall = ls_now() - w0;
    *cpu = cpu_now() - c0;
    if (!p) {
        fprintf(stderr, "bench_load: %s\n", err.msg);
        return -1;
    }
    *nodes = p->n_nodes;
    return 0; /* the process ends: nothing to free */
}

/* RUNS runs, each in a child process; the parent reads the times back through a pipe. */
static int isolated(int what, const ls_gen_opts *o, const char *json, size_t len, double *wall, double *cpu,
                    uint32_t *nodes)
{
    double tw[RUNS], tc[RUNS];
    for (int r = 0; r < RUNS; r++) {
        int fds[2];
        if (pipe(fds) != 0) return -1;
        pid_t pid = fork();
        if (pid < 0) return -1;
        if (pid == 0) {
            close(fds[0]);
            double t[2];
            uint32_t n = 0;
            int rc = measure(what, o, json, len, &t[0], &t[1], &n);
            if (rc == 0 && (write(fds[1], t, sizeof t) != (ssize_t)sizeof t || write(fds[1], &n, sizeof n) != sizeof n))
                rc = -1;
            _exit(rc == 0 ? 0 : 1);
        }
        close(fds[1]);
        double t[2];
        uint32_t n = 0;
        ssize_t got = read(fds[0], t, sizeof t);
        ssize_t got2 = read(fds[0], &n, sizeof n);
        close(fds[0]);
        int status;
        waitpid(pid, &status, 0);
        if (got != (ssize_t)sizeof t || got2 != sizeof n || !WIFEXITED(status) || WEXITSTATUS(status)) return -1;
        tw[r] = t[0];
        tc[r] = t[1];
        if (n) *nodes = n;
    }
    *wall = median(tw);
    *cpu = median(tc);
    return 0;
}

int main(void)
{
    ls_gen_opts o = ls_gen_defaults(100000);
    o.partitions = 100;
    o.split_every = 100;
    o.constants = 1000;
    o.shared_fraction = 0.1;
    o.share_partitions = 50;
    size_t len;
    char *json = ls_gen_json(&o, &len);
    double w[5], c[5];
    uint32_t nodes = 0;
    static const char *const what[] = {"cJSON parse", "cJSON parse + free", "cJSON parse (arena)", "ls_load_json",
                                       "ls_gen_program"};
    for (int m = PARSE; m <= LOAD; m++) {
        if (isolated(m, &o, json, len, &w[m], &c[m], &nodes) != 0) {
            fprintf(stderr, "bench_load: %s failed\n", what[m]);
            return 1;
        }
    }
    ls_gen_opts od = o;
    od.with_data = true;
    if (isolated(LOAD_DATA, &od, NULL, 0, &w[LOAD_DATA], &c[LOAD_DATA], &nodes) != 0) return 1;
    printf("load: a generated program of %u call nodes (%u nodes loaded, %u partitions), %.1f MB of JSON\n", o.nodes,
           nodes, o.partitions, (double)len / 1e6);
    printf("  median of %d runs, each in a fresh process     wall ms    CPU ms\n", RUNS);
    printf("  cJSON parse alone                             %8.1f  %8.1f\n", w[PARSE] * 1e3, c[PARSE] * 1e3);
    printf("  cJSON parse + cJSON_Delete                    %8.1f  %8.1f\n", w[PARSE_FREE] * 1e3, c[PARSE_FREE] * 1e3);
    printf("  lowerscope load (ls_load_json, metadata only) %8.1f  %8.1f   %.2fx / %.2fx parse (goal <= 1.3x)\n",
           w[LOAD] * 1e3, c[LOAD] * 1e3, w[LOAD] / w[PARSE], c[LOAD] / c[PARSE]);
    printf("    of which: cJSON parse into the load's arena %8.1f  %8.1f\n", w[PARSE_ARENA] * 1e3, c[PARSE_ARENA] * 1e3);
    printf("              the walk (load - arena parse)     %8.1f  %8.1f\n", (w[LOAD] - w[PARSE_ARENA]) * 1e3,
           (c[LOAD] - c[PARSE_ARENA]) * 1e3);
    printf("  generate + load with weight data              %8.1f  %8.1f   (%u parameters, %u constants)\n",
           w[LOAD_DATA] * 1e3, c[LOAD_DATA] * 1e3, o.params * 2, o.constants);
    free(json);
    ls_intern_release_all();
    return 0;
}
