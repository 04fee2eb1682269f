/* Loading a generated 100k-node program, next to what cJSON alone takes to parse its JSON.
 * Goal: load ≤ 1.3 × parse. Prints figures (medians of 5 rounds), never fails on timing.
 *
 * Every run is made in a fresh child process, as `lowerscope FILE` loads a file once: nothing
 * is warm (heap, interned strings, the arena's pages), and neither side inherits the other's
 * heap. Wall time and CPU time are both printed: on a busy machine CPU time is the steadier. */
#include <cjson/cJSON.h>
#include <stdio.h>
#include <stdlib.h>

#include "../../src/formats/pt2/pt2_internal.h" /* the arena, to show the parse and the walk apart */
#include "benchutil.h"
#include "gen_program.h"
#include "reader.h"

#define RUNS 5
#define MAX_RUNS 25

enum { PARSE, PARSE_FREE, PARSE_ARENA, LOAD, LOAD_DATA, KINDS };

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

/* bench_load [RUNS]: RUNS rounds (default 5, at most MAX_RUNS), each measuring every kind once in
 * a fresh process; the kinds alternate so that a busy moment of the machine falls on all of
 * them alike, and the ratio load / parse is taken within each round, then its median. */
int main(int argc, char **argv)
{
    int runs = argc > 1 && atoi(argv[1]) > 0 ? atoi(argv[1]) : RUNS;
    if (runs > MAX_RUNS) runs = MAX_RUNS;
    ls_gen_opts o = ls_gen_defaults(100000);
    o.partitions = 100;
    o.split_every = 100;
    o.constants = 1000;
    o.shared_fraction = 0.1;
    o.share_partitions = 50;
    ls_gen_opts od = o;
    od.with_data = true;
    size_t len;
    char *json = ls_gen_json(&o, &len);
    static const char *const what[KINDS] = {"cJSON parse", "cJSON parse + free", "cJSON parse (arena)", "ls_load_json",
                                            "ls_gen_program"};
    double w[KINDS][MAX_RUNS], c[KINDS][MAX_RUNS], ratio_w[MAX_RUNS], ratio_c[MAX_RUNS];
    uint32_t nodes = 0;
    for (int k = 0; k < runs; k++) {
        for (int m = 0; m < KINDS; m++) {
            job j = {m, m == LOAD_DATA ? &od : &o, m == LOAD_DATA ? NULL : json, m == LOAD_DATA ? 0 : len};
            result r = {0};
            if (bench_in_child(measure, &j, &r, sizeof r) != 0) {
                fprintf(stderr, "bench_load: %s failed\n", what[m]);
                return 1;
            }
            w[m][k] = r.wall;
            c[m][k] = r.cpu;
            if (m == LOAD) nodes = r.nodes;
        }
        ratio_w[k] = w[LOAD][k] / w[PARSE][k];
        ratio_c[k] = c[LOAD][k] / c[PARSE][k];
    }
    double mw[KINDS], mc[KINDS];
    for (int m = 0; m < KINDS; m++) {
        mw[m] = bench_median(w[m], runs) * 1e3;
        mc[m] = bench_median(c[m], runs) * 1e3;
    }
    printf("load: a generated program of %u call nodes (%u nodes loaded, %u partitions), %.1f MB of JSON\n", o.nodes,
           nodes, o.partitions, (double)len / 1e6);
    printf("  median of %d runs, each in a fresh process     wall ms    CPU ms\n", runs);
    printf("  cJSON parse alone                             %8.1f  %8.1f\n", mw[PARSE], mc[PARSE]);
    printf("  cJSON parse + cJSON_Delete                    %8.1f  %8.1f\n", mw[PARSE_FREE], mc[PARSE_FREE]);
    printf("  lowerscope load (ls_load_json, metadata only) %8.1f  %8.1f   %.2fx / %.2fx parse (goal <= 1.3x)\n",
           mw[LOAD], mc[LOAD], bench_median(ratio_w, runs), bench_median(ratio_c, runs));
    printf("    of which: cJSON parse into the load's arena %8.1f  %8.1f\n", mw[PARSE_ARENA], mc[PARSE_ARENA]);
    printf("              the walk (load - arena parse)     %8.1f  %8.1f\n", mw[LOAD] - mw[PARSE_ARENA],
           mc[LOAD] - mc[PARSE_ARENA]);
    printf("  generate + load with weight data              %8.1f  %8.1f   (%u parameters, %u constants)\n",
           mw[LOAD_DATA], mc[LOAD_DATA], o.params * 2, o.constants);
    free(json);
    ls_intern_release_all();
    return 0;
}
