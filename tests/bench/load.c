/* Loading a generated 100k-node program, next to what cJSON alone takes to parse its JSON.
 * Goal: load ≤ 1.3 × parse. Prints figures (median of 5 runs), never fails on timing.
 *
 * Every run is made in a fresh child process, as `lowerscope FILE` loads a file once: nothing
 * is warm (heap, interned strings, the arena's pages), and neither side inherits the other's
 * heap. Wall time and CPU time are both printed: on a busy machine CPU time is the steadier. */
#include <cjson/cJSON.h>
#include <stdio.h>
#include <stdlib.h>

#include "../../src/read_internal.h" /* the arena, to show the parse and the walk apart */
#include "benchutil.h"
#include "gen_program.h"
#include "reader.h"

#define RUNS 5

enum { PARSE, PARSE_FREE, PARSE_ARENA, LOAD, LOAD_DATA };

typedef struct job {
    int what;
    const ls_gen_opts *o;
    const char *json;
    size_t len;
} job;

typedef struct result {
    double wall, cpu;
    uint32_t nodes;
} result;

/* One run, in a child process of its own (bench_in_child). */
static int measure(const void *arg, void *out)
{
    const job *j = arg;
    result *r = out;
    double w0 = ls_now(), c0 = bench_cpu_now();
    if (j->what == PARSE_ARENA) { /* what ls_load_json's parse costs, alone */
        ls_json_arena_begin();
        cJSON *root = cJSON_ParseWithLength(j->json, j->len);
        r->wall = ls_now() - w0;
        r->cpu = bench_cpu_now() - c0;
        ls_json_arena_end();
        return root ? 0 : -1;
    }
    if (j->what == PARSE || j->what == PARSE_FREE) {
        cJSON *root = cJSON_ParseWithLength(j->json, j->len);
        if (!root) return -1;
        if (j->what == PARSE_FREE) cJSON_Delete(root);
        r->wall = ls_now() - w0;
        r->cpu = bench_cpu_now() - c0;
        return 0;
    }
    ls_program *p;
    ls_error err;
    if (j->what == LOAD) {
        if (ls_load_json("generated", j->json, j->len, NULL, &p, &err) != 0) p = NULL;
    } else {
        p = ls_gen_program(j->o, &err);
    }
    r->wall = ls_now() - w0;
    r->cpu = bench_cpu_now() - c0;
    if (!p) {
        fprintf(stderr, "bench_load: %s\n", err.msg);
        return -1;
    }
    r->nodes = p->n_nodes;
    return 0;
}

/* The medians of RUNS runs, each in a fresh process. */
static int isolated(int what, const ls_gen_opts *o, const char *json, size_t len, double *wall, double *cpu,
                    uint32_t *nodes)
{
    job j = {what, o, json, len};
    double tw[RUNS], tc[RUNS];
    for (int k = 0; k < RUNS; k++) {
        result r = {0};
        if (bench_in_child(measure, &j, &r, sizeof r) != 0) return -1;
        tw[k] = r.wall;
        tc[k] = r.cpu;
        if (r.nodes) *nodes = r.nodes;
    }
    *wall = bench_median(tw, RUNS);
    *cpu = bench_median(tc, RUNS);
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
