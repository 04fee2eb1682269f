/* The partition pass alone, per partitioner, on generated Edge programs of 50k, 100k and 200k
 * call nodes (src/formats/pt2/gen_program.c: a chain of linear, relu, mul, add and tanh, a `sin`
 * every 50 nodes): the bundled profile (CapabilityBasedPartitioner; sin stays on the CPU, so
 * nodes / 50 partitions) and XNNPACK (GroupBasedPartitioner with its node groups: linears bring
 * their weights; sin taken out with skip_ops, so as many partitions). Medians of 5 runs, each in
 * a fresh child process, and the ratio 200k / 100k. Goal: linear in the program (ratio near 2).
 * Prints figures, never fails on timing. */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "benchutil.h"
#include "gen_program.h"
#include "passes.h"

#define RUNS 5

typedef struct arg {
    uint32_t nodes;
    int group;
} arg;

typedef struct result {
    double cpu;
    uint32_t tags;
} result;

static int measure(const void *va, void *vr)
{
    const arg *a = va;
    result *r = vr;
    ls_gen_opts o = ls_gen_defaults(a->nodes);
    o.edge = true;
    o.cpu_boundaries = true;
    o.partitions = a->nodes / 50;
    ls_error err;
    ls_program *p = ls_gen_program(&o, &err);
    if (!p) {
        fprintf(stderr, "%s\n", err.msg);
        return -1;
    }
    ls_profile *prof = NULL;
    const char *json = "{\"extends\": \"xnnpack\", \"name\": \"xnnpack_no_sin\", \"skip_ops\": [\"sin\"]}";
    if (a->group && ls_profile_parse("bench", json, strlen(json), &prof, &err) != 0) {
        fprintf(stderr, "%s\n", err.msg);
        return -1;
    }
    ls_report rep = {0};
    ls_pass_ctx ctx = {.profile = a->group ? prof : ls_profile_bundled(), .report = &rep, .err = &err};
    ls_program *q = NULL;
    double t0 = bench_cpu_now();
    int rc = ls_pass_partition(p, &q, &ctx);
    r->cpu = bench_cpu_now() - t0;
    if (rc == 0) r->tags = q->n_tags;
    ls_report_free(&rep);
    ls_program_unref(q);
    ls_program_unref(p);
    ls_profile_free(prof);
    return rc;
}

int main(int argc, char **argv)
{
    int runs = argc > 1 && atoi(argv[1]) > 0 && atoi(argv[1]) <= RUNS ? atoi(argv[1]) : RUNS;
    const uint32_t sizes[3] = {50000, 100000, 200000};
    bench_print_header("partition");
    for (int group = 0; group < 2; group++) {
        double med[3];
        uint32_t tags[3] = {0};
        for (int s = 0; s < 3; s++) {
            double v[RUNS];
            for (int k = 0; k < runs; k++) {
                arg a = {sizes[s], group};
                result r = {0};
                if (bench_in_child(measure, &a, &r, sizeof r) != 0) return 1;
                v[k] = r.cpu;
                tags[s] = r.tags;
            }
            med[s] = bench_median(v, runs);
        }
        printf("%-10s %s: %6.3f s at 50k, %6.3f s at 100k, %6.3f s at 200k (%u, %u, %u partitions); 200k / 100k %.2f\n",
               group ? "xnnpack" : "bundled", group ? "GroupBasedPartitioner     " : "CapabilityBasedPartitioner", med[0],
               med[1], med[2], tags[0], tags[1], tags[2], med[1] > 0 ? med[2] / med[1] : 0);
    }
    return 0;
}
