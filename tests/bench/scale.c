/* The whole default pipeline at 100k and 1M call nodes (the benches' generated program,
 * benchutil.c), against issue 17's goals:
 *   - `lowerscope passes FILE > /dev/null`: CPU time at 1M / at 100k ≤ 10.5 (the ratio taken in
 *     each round, then its median), and at 100k ≤ 1 s of pipeline time beside the load;
 *   - the load's peak resident size ≤ 2 × the JSON's size;
 *   - each stored step ≤ 100 bytes per node it did not change;
 *   - 1M nodes through the whole pipeline (`passes`) ≤ 2.5 GB peak.
 *
 * Two kinds of run, each a fresh process:
 *   - the command itself (bench_run): its CPU time and peak resident size, repeated (5 rounds,
 *     1M in 3 of them: one takes tens of seconds and GBs; never two at once);
 *   - the same load and pipeline in a child of this bench (once per size), to take the load and
 *     the pipeline apart: the load's CPU time and peak (ru_maxrss when it returns), the
 *     pipeline's CPU time, and the heap in use after each step is published (mallinfo2, with one
 *     malloc arena so that the pipeline's worker threads count too). What a step stores is the
 *     heap it leaves behind: its program's node array, the indexes built on it, its changes,
 *     report and findings, and the nodes it cloned; divided by the nodes it did not change, that
 *     is an upper bound of what an unchanged node costs a step.
 * Beside each run that takes the ratio, a control (bench_first_touch): a process that only writes
 * once each page of as much fresh memory as the run's peak. On the VMs we run on, that costs
 * about 2.5 s per GB when the memory has been idle (free memory goes back to the host, and its
 * first touch faults there too) and a tenth of that at 100k's size, so part of the ratio is the
 * machine's; the ratio less the control's time is printed beside the ratio, never instead of it.
 * And the instructions the command executes at each size (valgrind's cachegrind, once: the count
 * does not vary), so that the ratio of the work itself is printed beside the ratio of its time.
 * Prints figures, never fails on timing. bench_scale [NODES...] measures those sizes only (the
 * ratio needs two). */
#include <malloc.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/resource.h>
#include <sys/stat.h>
#include <unistd.h>

#include "benchutil.h"
#include "history.h"
#include "passes.h"
#include "reader.h"

#define ROUNDS 5
#define BIG_ROUNDS 3 /* of the 1M runs: rounds 0..BIG_ROUNDS-1 */
#define BIG 1000000u
#define MAX_STEPS 32
#define MAX_SIZES 4
#define TOUCH_PAUSE_S 4 /* the kernel reports free memory to the host 2 s after it is freed */

typedef struct step_mem {
    uint32_t nodes, changed; /* nodes after the step, lowered modules' too; of them added or changed */
    uint32_t top;            /* the top level's nodes */
    long long heap;          /* in use once the step is published */
} step_mem;

typedef struct split {
    double load_cpu, load_wall, pipe_cpu, pipe_wall;
    long load_peak_kb, peak_kb;
    long long heap_before; /* in use before the load */
    uint32_t n_steps;
    char pass[MAX_STEPS][32];
    step_mem step[MAX_STEPS];
} split;

static long long heap_in_use(void)
{
    struct mallinfo2 mi = mallinfo2();
    return (long long)mi.uordblks + (long long)mi.hblkhd;
}

static long maxrss_kb(void)
{
    struct rusage ru;
    getrusage(RUSAGE_SELF, &ru);
    return ru.ru_maxrss;
}

static void on_step_done(void *ctx, const ls_history *h, uint32_t k)
{
    split *r = ctx;
    if (k >= MAX_STEPS) return;
    const ls_step *s = &h->steps[k];
    step_mem *m = &r->step[k];
    m->top = s->program->n_nodes;
    m->nodes = s->program->n_nodes;
    for (uint32_t i = 0; i < s->program->n_subs; i++) m->nodes += s->program->subs[i].program->n_nodes;
    for (uint32_t i = 0; i < s->n_changes; i++)
        if (s->changes[i].kind != LS_CHANGE_REMOVED) m->changed++;
    m->heap = heap_in_use();
    snprintf(r->pass[k], sizeof r->pass[k], "%s%s%s", s->pass, s->detail ? ":" : "", s->detail ? s->detail : "");
    r->n_steps = k + 1;
}

/* The load and the pipeline as `passes` makes them, in a child (bench_in_child). */
static int measure_split(const void *arg, void *out)
{
    const char *file = arg;
    split *r = out;
    memset(r, 0, sizeof *r);
    ls_memory_keep_freed(); /* as main does first */
    mallopt(M_ARENA_MAX, 1);
    r->heap_before = heap_in_use();
    ls_program *p;
    ls_error err;
    double w0 = ls_now(), c0 = bench_cpu_now();
    if (ls_load(file, NULL, &p, &err) != 0) {
        fprintf(stderr, "bench_scale: %s\n", err.msg);
        return -1;
    }
    r->load_wall = ls_now() - w0;
    r->load_cpu = bench_cpu_now() - c0;
    r->load_peak_kb = maxrss_kb();
    ls_pipeline_opts po;
    ls_pipeline_opts_init(&po);
    ls_pipeline_watch watch = {.step_done = on_step_done, .ctx = r};
    po.watch = &watch;
    ls_history h;
    w0 = ls_now();
    c0 = bench_cpu_now();
    int rc = ls_pipeline_run(p, &po, &h, &err);
    r->pipe_wall = ls_now() - w0;
    r->pipe_cpu = bench_cpu_now() - c0;
    r->peak_kb = maxrss_kb();
    if (rc != 0) {
        fprintf(stderr, "bench_scale: %s\n", err.msg);
        return -1;
    }
    for (uint32_t k = 0; k < h.n; k++)
        if (h.steps[k].error) fprintf(stderr, "bench_scale: step %u (%s): %s\n", k, h.steps[k].pass, h.steps[k].error);
    return 0;
}

/* The path of `name` on PATH, or NULL. */
static const char *on_path(const char *name, char *buf, size_t cap)
{
    const char *path = getenv("PATH");
    while (path && *path) {
        size_t len = strcspn(path, ":");
        snprintf(buf, cap, "%.*s/%s", (int)len, path, name);
        if (len && access(buf, X_OK) == 0) return buf;
        path += len + (path[len] == ':');
    }
    return NULL;
}

/* The instructions `bin passes file` executes, user space and libraries (valgrind's cachegrind
 * counts them as it runs them, threads included); 0 when it could not. Unlike its time, the
 * count does not depend on what the machine charges for memory: its ratio between two sizes is
 * the ratio of the work. bin must run under valgrind (no AVX-512: the plain build). */
static double instructions(const char *valgrind, const char *bin, const char *file, const char *dir, unsigned nodes)
{
    char out[600], opt[640];
    snprintf(out, sizeof out, "%s/cachegrind.%u", dir, nodes);
    snprintf(opt, sizeof opt, "--cachegrind-out-file=%s", out);
    char *args[] = {(char *)valgrind, "-q", "--log-file=/dev/null", "--tool=cachegrind", "--cache-sim=no", "--branch-sim=no", opt,
                    (char *)bin, "passes", (char *)file, NULL};
    double cpu;
    if (bench_run(args, NULL, &cpu, NULL) != 0) return 0;
    FILE *f = fopen(out, "r");
    double ir = 0;
    char line[512];
    while (f && fgets(line, sizeof line, f))
        if (!strncmp(line, "summary:", 8)) ir = strtod(line + 8, NULL);
    if (f) fclose(f);
    unlink(out);
    return ir;
}

static const char *verdict(bool holds)
{
    return holds ? "holds" : "MISSED";
}

int main(int argc, char **argv)
{
    const char *bin = getenv("LS_BIN");
    if (!bin) {
        fprintf(stderr, "bench_scale: LS_BIN names the lowerscope binary (make bench sets it)\n");
        return 1;
    }
    unsigned sizes[MAX_SIZES] = {100000, BIG};
    int n_sizes = 2;
    if (argc > 1) {
        n_sizes = 0;
        for (int i = 1; i < argc && n_sizes < MAX_SIZES; i++)
            if (atoi(argv[i]) > 0) sizes[n_sizes++] = (unsigned)atoi(argv[i]);
    }
    bench_print_header("bench_scale");
    char dir[] = "/tmp/lowerscope-bench-scale-XXXXXX";
    if (!mkdtemp(dir)) return 1;
    char file[MAX_SIZES][512];
    size_t json[MAX_SIZES];
    long long file_bytes[MAX_SIZES];
    for (int s = 0; s < n_sizes; s++) {
        if (bench_gen_pt2(sizes[s], dir, file[s], sizeof file[s], &json[s]) != 0) return 1;
        struct stat st;
        file_bytes[s] = stat(file[s], &st) == 0 ? (long long)st.st_size : 0;
    }

    /* the command, round by round: a slow spell of the machine falls on both sizes of a round */
    static double cpu[MAX_SIZES][ROUNDS], user[MAX_SIZES][ROUNDS], sys[MAX_SIZES][ROUNDS], peak[MAX_SIZES][ROUNDS];
    static double touch[MAX_SIZES][ROUNDS], ratio[ROUNDS], user_ratio[ROUNDS], less_touch_ratio[ROUNDS];
    int runs[MAX_SIZES] = {0}, n_ratio = 0;
    for (int k = 0; k < ROUNDS; k++) {
        for (int s = 0; s < n_sizes; s++) {
            if (sizes[s] >= BIG && k >= BIG_ROUNDS) continue;
            char *args[] = {(char *)bin, "passes", file[s], NULL};
            double u, y;
            long kb;
            int rc = bench_run_split(args, NULL, &u, &y, &kb);
            if (rc != 0) {
                fprintf(stderr, "bench_scale: lowerscope passes exited %d on %u nodes\n", rc, sizes[s]);
                return 1;
            }
            user[s][runs[s]] = u;
            sys[s][runs[s]] = y;
            cpu[s][runs[s]] = u + y;
            peak[s][runs[s]] = (double)kb;
            /* the control, in the rounds that take the ratio: as much fresh memory as the run's
             * peak, first touched after the memory freed by the run has had time to go back */
            if (k < BIG_ROUNDS) {
                sleep(TOUCH_PAUSE_S);
                double t = bench_first_touch(kb);
                touch[s][runs[s]] = t > 0 ? t : 0; /* a control that could not run subtracts nothing */
            }
            runs[s]++;
        }
        if (n_sizes == 2 && k < BIG_ROUNDS) {
            ratio[n_ratio] = cpu[1][k] / cpu[0][k];
            user_ratio[n_ratio] = user[1][k] / user[0][k];
            less_touch_ratio[n_ratio++] = (cpu[1][k] - touch[1][k]) / (cpu[0][k] - touch[0][k]);
        }
    }
    /* the same work counted in instructions, once per size (it does not vary from run to run) */
    double ir[MAX_SIZES] = {0};
    char vg_buf[4096];
    const char *valgrind = on_path("valgrind", vg_buf, sizeof vg_buf), *plain = getenv("LS_PLAIN_BIN");
    for (int s = 0; s < n_sizes && valgrind && plain; s++) ir[s] = instructions(valgrind, plain, file[s], dir, sizes[s]);
    static split sp[MAX_SIZES];
    for (int s = 0; s < n_sizes; s++)
        if (bench_in_child(measure_split, file[s], &sp[s], sizeof sp[s]) != 0) {
            fprintf(stderr, "bench_scale: the load and pipeline of %u nodes failed\n", sizes[s]);
            return 1;
        }

    printf("\n`lowerscope passes FILE > /dev/null`, the default pipeline (verifier after every step); medians\n"
           "of %d runs at 100k nodes, %d at 1M, each a fresh process\n", ROUNDS, BIG_ROUNDS);
    printf("  %9s %8s %8s %8s %7s %7s %8s %8s %8s %9s %9s\n", "nodes", "JSON MB", "file MB", "CPU s", "user",
           "system", "peak MB", "touch s", "load CPU", "pipe CPU", "pipe wall");
    double med_cpu[MAX_SIZES], med_peak[MAX_SIZES];
    for (int s = 0; s < n_sizes; s++) {
        med_cpu[s] = bench_median(cpu[s], runs[s]);
        med_peak[s] = bench_median(peak[s], runs[s]) / 1024.0;
        int n_touch = runs[s] < BIG_ROUNDS ? runs[s] : BIG_ROUNDS;
        printf("  %9u %8.0f %8.0f %8.2f %7.2f %7.2f %8.0f %8.2f %8.2f %9.2f %9.2f\n", sizes[s], json[s] / 1e6,
               file_bytes[s] / 1e6, med_cpu[s], bench_median(user[s], runs[s]), bench_median(sys[s], runs[s]),
               med_peak[s], bench_median(touch[s], n_touch), sp[s].load_cpu, sp[s].pipe_cpu, sp[s].pipe_wall);
    }
    printf("  (load and pipe: one run of the load and the pipeline in a process of the bench's own; touch: the\n"
           "  control, a process that only writes once each page of as much fresh memory as the run's peak,\n"
           "  %d s after the run: what this machine charges for that much memory, whoever asks)\n\n", TOUCH_PAUSE_S);
    printf("goals:\n");
    if (n_sizes == 2 && sizes[0] == 100000 && sizes[1] == BIG) {
        double r = bench_median(ratio, n_ratio);
        printf("  CPU time 1M / 100k of `passes`:        %6.2f (median of %d rounds' own ratios; of the medians %.2f)"
               "   goal <= 10.5: %s\n", r, n_ratio, med_cpu[1] / med_cpu[0], verdict(r <= 10.5));
        printf("    the same in user time alone:         %6.2f; less the control's first touch of the peak: %.2f\n",
               bench_median(user_ratio, n_ratio), bench_median(less_touch_ratio, n_ratio));
        if (ir[0] > 0 && ir[1] > 0)
            printf("    the same in instructions executed:   %6.2f (%.2f G at 100k, %.2f G at 1M, counted by valgrind's\n"
                   "      cachegrind: the work itself; what the CPU time adds to it is what each instruction costs, the\n"
                   "      memory's misses and faults, not more work)\n", ir[1] / ir[0], ir[0] / 1e9, ir[1] / 1e9);
        else
            printf("    the same in instructions executed:   not counted (%s)\n",
                   !valgrind ? "valgrind is not installed: make deps installs it" : !plain ? "LS_PLAIN_BIN is not set: make bench sets it"
                                                                                          : "valgrind failed");
    }
    for (int s = 0; s < n_sizes; s++)
        if (sizes[s] == 100000)
            printf("  pipeline time beside the load at 100k: %6.2f s CPU, %.2f s wall"
                   "                        goal <= 1 s: %s\n", sp[s].pipe_cpu, sp[s].pipe_wall,
                   verdict(sp[s].pipe_cpu <= 1.0));
    for (int s = 0; s < n_sizes; s++) {
        double x = sp[s].load_peak_kb * 1024.0 / (double)json[s];
        printf("  load's peak / the JSON's size at %4uk: %6.2f (%.0f MB for %.0f MB of JSON; %.0f MB of weights"
               " beside it)   goal <= 2: %s\n", sizes[s] / 1000, x, sp[s].load_peak_kb / 1024.0, json[s] / 1e6,
               (file_bytes[s] - (long long)json[s]) / 1e6, verdict(x <= 2.0));
    }
    for (int s = 0; s < n_sizes; s++)
        if (sizes[s] == BIG)
            printf("  peak of 1M nodes through `passes`:     %6.0f MB (median; worst %.0f MB)"
                   "                            goal <= 2500 MB: %s\n", med_peak[s],
                   peak[s][runs[s] - 1] / 1024.0 > med_peak[s] ? peak[s][runs[s] - 1] / 1024.0 : med_peak[s],
                   verdict(med_peak[s] <= 2500));

    for (int s = 0; s < n_sizes; s++) {
        const split *r = &sp[s];
        printf("\nwhat each step stores at %u nodes (the heap in use once it is published, less the step before's;\n"
               "  nodes: the lowered modules' too; B/unchanged: those bytes over the nodes the step did not add\n"
               "  or change, an upper bound, judged on steps that left at least half the nodes unchanged)\n", sizes[s]);
        printf("  %-28s %9s %9s %9s %11s %12s\n", "step", "nodes", "top level", "changed", "stored MB", "B/unchanged");
        double worst = 0;
        for (uint32_t k = 0; k < r->n_steps; k++) {
            const step_mem *m = &r->step[k];
            long long stored = m->heap - (k ? r->step[k - 1].heap : r->heap_before);
            uint32_t unchanged = m->nodes > m->changed ? m->nodes - m->changed : 0;
            double per = unchanged ? (double)stored / unchanged : 0;
            bool judged = k && unchanged >= m->nodes / 2;
            if (judged && per > worst) worst = per;
            printf("  %-28s %9u %9u %9u %11.1f ", r->pass[k], m->nodes, m->top, m->changed, stored / 1e6);
            if (!k)
                printf("%12s  (the load)\n", "");
            else if (judged)
                printf("%12.1f\n", per);
            else
                printf("%12s  (most nodes changed)\n", "");
        }
        printf("  worst step that left most nodes unchanged: %.1f B per unchanged node   goal <= 100 B: %s\n", worst,
               verdict(worst <= 100));
    }
    for (int s = 0; s < n_sizes; s++) unlink(file[s]);
    rmdir(dir);
    return 0;
}
