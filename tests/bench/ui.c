/* The UI at the keyboard on generated programs of 100k and 1M call nodes: lowerscope runs a
 * script of keys (scripted mode, LOWERSCOPE_SCRIPT) and writes how long each key took, from
 * reading it to the screen drawn after it (LOWERSCOPE_KEY_TIMES); this prints, per kind of key,
 * the median and the worst next to the goals: every key ≤ 10 ms median and ≤ 50 ms worst at
 * any step, search ≤ 10 ms per typed character, the first screen within 1 s of the load.
 * A search goes on between keys in slices, a compare's alignment on a thread; the time until
 * its match (or the alignment) is shown is printed too.
 * The pipeline runs on its own thread; the script starts when it has made every step (the
 * first screen is drawn before, as soon as step 0 is ready). Prints figures, never fails on
 * timing. bench_ui [NODES...] measures those sizes only.
 *
 * A figure is one action: a script line is one (a :command, a key, or the keys of one command
 * such as gg or gd, whose times are summed: the prefix's redraw belongs to it), and a lone g is
 * written g<Timeout> (the input timeout that makes it act at the keyboard), else it would act
 * when the next key arrived and be charged to that key. */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "benchutil.h"
#include "common.h"
#include "passes.h"

#define MAX_EVENTS 4096
#define MAX_CLASSES 24

typedef struct script {
    ls_buf text;
    const char *cls[MAX_EVENTS]; /* the kind of each event, in order */
    int action[MAX_EVENTS];      /* the script line (one action) each event belongs to */
    int n, n_actions;
} script;

/* A script line is one action: a :command is one event, else each key (a character or a
 * <Name>) is one, timed apart by the UI and summed here. */
static void ev(script *s, const char *cls, const char *line)
{
    ls_buf_printf(&s->text, "%s\n", line);
    int keys = 1;
    if (line[0] != ':') {
        keys = 0;
        for (const char *c = line; *c; c++, keys++)
            if (*c == '<' && strchr(c, '>')) c = strchr(c, '>');
    }
    for (int k = 0; k < keys && s->n < MAX_EVENTS; k++) {
        s->cls[s->n] = cls;
        s->action[s->n++] = s->n_actions;
    }
    s->n_actions++;
}

static void evn(script *s, const char *cls, const char *line, int times)
{
    for (int i = 0; i < times; i++) ev(s, cls, line);
}

/* Typed text: each character one action. */
static void typed(script *s, const char *cls, const char *text)
{
    for (const char *c = text; *c; c++) {
        char k[2] = {*c, 0};
        ev(s, cls, *c == ' ' ? "<Space>" : k);
    }
}

/* Every kind of key, on the first step, the steps in between and the last. */
static void build_script(script *s, int n_steps)
{
    ev(s, "step: { } (first, last)", "{");
    evn(s, "move: Down PgDn PgUp G gg", "<Down>", 10);
    evn(s, "move: Down PgDn PgUp G gg", "<PgDn>", 5);
    evn(s, "move: Down PgDn PgUp G gg", "<PgUp>", 3);
    ev(s, "move: Down PgDn PgUp G gg", "G");
    ev(s, "move: Down PgDn PgUp G gg", "gg");
    evn(s, "step: Right Left", "<Right>", n_steps - 1);
    evn(s, "step: Right Left", "<Left>", n_steps - 1);
    for (int k = 0; k < 3; k++) { /* on every step, twice */
        ev(s, "step: { } (first, last)", "}");
        ev(s, "step: { } (first, last)", "{");
    }
    ev(s, "step: :step N", ":step 2");
    ev(s, "step: :step N", ":step 0");
    for (int k = 0; k < n_steps; k++) {
        char cmd[32];
        snprintf(cmd, sizeof cmd, ":step %d", k);
        ev(s, "step: :step N", cmd);
        evn(s, "move: Down PgDn PgUp G gg", "<Down>", 3);
        ev(s, "move: Down PgDn PgUp G gg", "<PgDn>");
        ev(s, "screen: d (table), q", "d");
        ev(s, "screen: d (table), q", "<PgDn>");
        ev(s, "screen: d (table), q", "q");
        evn(s, "pane: Tab", "<Tab>", 5);
    }
    /* search at step 0 (a million rows): a name far from the cursor, then one that is nowhere */
    ev(s, "step: { } (first, last)", "{");
    ev(s, "search: / and Esc", "/");
    typed(s, "search: per typed character", "sin_99");
    ev(s, "search: per typed character", "<Enter>");
    ev(s, "search: n N", "n");
    ev(s, "search: n N", "N");
    ev(s, "search: / and Esc", "/");
    typed(s, "search: per typed character", "zzq");
    ev(s, "search: / and Esc", "<Esc>");
    ev(s, "search: / and Esc", "<Esc>");
    /* Tab completing a node name at step 0: the key, and the scan between keys */
    ev(s, "prompt: : and typed characters, Esc", "<Colon>");
    typed(s, "prompt: : and typed characters, Esc", "goto sin_99");
    ev(s, "prompt: Tab (a node name)", "<Tab>");
    ev(s, "prompt: : and typed characters, Esc", "<Esc>");
    /* into a lowered module and back, at the last step */
    ev(s, "step: { } (first, last)", "}");
    ev(s, "search: / and Esc", "/");
    typed(s, "search: per typed character", "delegate_7");
    ev(s, "search: per typed character", "<Enter>");
    for (int k = 0; k < 5; k++) {
        ev(s, "module: Enter, BS", "<Enter>");
        evn(s, "move: Down PgDn PgUp G gg", "<Down>", 3);
        ev(s, "module: Enter, BS", "<BS>");
    }
    ev(s, "graph: gd gu", "gd");
    ev(s, "graph: gd gu", "gu");
    ev(s, "graph: gd gu", "gd");
    ev(s, "search: / and Esc", "<Esc>");
    ev(s, "screen: g (partition graph), x, q", "g<Timeout>");
    ev(s, "screen: g (partition graph), x, q", "q");
    ev(s, "screen: g (partition graph), x, q", "x");
    ev(s, "screen: g (partition graph), x, q", "q");
    ev(s, "screen: d (table), q", "d");
    ev(s, "screen: d (table), q", "G");
    ev(s, "screen: d (table), q", "q");
    /* the compare screen at the last step: beside step 0 and beside the step before (the
     * alignment is made on a thread; the time until it is shown is printed apart) */
    ev(s, "screen: :compare, ], q", ":compare 0");
    ev(s, "screen: :compare, ], q", "]");
    ev(s, "screen: :compare, ], q", "<PgDn>");
    ev(s, "screen: :compare, ], q", "q");
    ev(s, "screen: :compare, ], q", ":compare");
    ev(s, "screen: :compare, ], q", "]");
    ev(s, "screen: :compare, ], q", "q");
    /* the prompt's keys apart from the one that filters: each figure the cost of one of them */
    ev(s, "filter: f and typed characters", "f");
    typed(s, "filter: f and typed characters", "tag1");
    ev(s, "filter: Enter (filters), Esc", "<Enter>");
    ev(s, "filter: Enter (filters), Esc", "<Esc>");
    /* by an op and by the CPU, at the step in the middle (duplicate_constants' in the default
     * pipeline: the most rows, placeholders among them) */
    char mid[32];
    snprintf(mid, sizeof mid, ":step %d", n_steps / 2);
    ev(s, "step: :step N", mid);
    const char *values[] = {"add", "cpu"};
    for (int v = 0; v < 2; v++) {
        ev(s, "filter: f and typed characters", "f");
        typed(s, "filter: f and typed characters", values[v]);
        ev(s, "filter: Enter (filters), Esc", "<Enter>");
        ev(s, "filter: Enter (filters), Esc", "<Esc>");
    }
    /* and by a region of the partition graph (Enter on its second box: the first tag's) */
    ev(s, "screen: g (partition graph), x, q", "g<Timeout>");
    ev(s, "move: Down PgDn PgUp G gg", "<Down>");
    ev(s, "filter: Enter (filters), Esc", "<Enter>");
    ev(s, "filter: Enter (filters), Esc", "<Esc>");
}

typedef struct klass {
    const char *name;
    double *ms, *cpu;
    int n;
} klass;

/* One action's figure: the summed times of its events. */
typedef struct figure {
    int action; /* the script line, -1 for none */
    const char *cls;
    double ms, cpu_ms;
    char where[64]; /* "STEP\tDEPTH\t..." as the times file says where it ended */
} figure;

static void add_figure(klass *cls, int *n_cls, const figure *fg)
{
    if (!fg->cls) return;
    if (fg->ms > 10 && getenv("BENCH_UI_SLOW"))
        printf("  slow: action %d (%s) %.1f ms, step/depth %s", fg->action, fg->cls, fg->ms, fg->where);
    int k = 0;
    while (k < *n_cls && strcmp(cls[k].name, fg->cls)) k++;
    if (k == *n_cls && *n_cls < MAX_CLASSES) cls[(*n_cls)++] = (klass){fg->cls, NULL, NULL, 0};
    if (k == MAX_CLASSES) return;
    cls[k].ms = ls_realloc(cls[k].ms, sizeof *cls[k].ms * (size_t)(cls[k].n + 1));
    cls[k].cpu = ls_realloc(cls[k].cpu, sizeof *cls[k].cpu * (size_t)(cls[k].n + 1));
    cls[k].ms[cls[k].n] = fg->ms;
    cls[k].cpu[cls[k].n++] = fg->cpu_ms;
}

static double median_of(double *v, int n)
{
    return n % 2 ? v[n / 2] : (v[n / 2 - 1] + v[n / 2]) / 2;
}

static int cmp_ms(const void *a, const void *b)
{
    double x = *(const double *)a, y = *(const double *)b;
    return x < y ? -1 : x > y;
}

static void run_size(const char *bin, const char *dir, unsigned nodes)
{
    char file[512], keys[512], times[512];
    size_t json;
    if (bench_gen_pt2(nodes, dir, file, sizeof file, &json) != 0) return;
    ls_pipeline_opts po;
    ls_pipeline_opts_init(&po);
    ls_plan_step plan[64];
    int n_steps = (int)ls_pipeline_plan(&po, plan, 64) + 1; /* the default pipeline's, load included */
    script s = {0};
    build_script(&s, n_steps);
    snprintf(keys, sizeof keys, "%s/ui%u.keys", dir, nodes);
    snprintf(times, sizeof times, "%s/ui%u.times", dir, nodes);
    ls_error err;
    if (ls_write_file_atomic(keys, s.text.s, s.text.len, &err) != 0) {
        fprintf(stderr, "bench_ui: %s\n", err.msg);
        return;
    }
    char e1[600], e2[600], e3[64];
    snprintf(e1, sizeof e1, "LOWERSCOPE_SCRIPT=%s", keys);
    snprintf(e2, sizeof e2, "LOWERSCOPE_KEY_TIMES=%s", times);
    snprintf(e3, sizeof e3, "LOWERSCOPE_SIZE=120x40");
    char *env[] = {e1, e2, e3, NULL};
    char *argv[] = {(char *)bin, file, NULL};
    double cpu;
    long peak;
    double t0 = ls_now();
    int rc = bench_run(argv, env, &cpu, &peak);
    double wall = ls_now() - t0;
    if (rc != 0) {
        fprintf(stderr, "bench_ui: lowerscope exited %d on %u nodes\n", rc, nodes);
        return;
    }
    /* the times: one line per event, in order, with notes (first-screen, search-done) between;
     * the events of one action (a script line) are summed into one figure */
    FILE *f = fopen(times, "r");
    if (!f) return;
    klass cls[MAX_CLASSES] = {{0}};
    int n_cls = 0;
    double first = -1;
    char line[1024];
    int event = 0, actions = 0;
    const char *last_cls = NULL;
    figure open = {-1, NULL, 0, 0, ""};
    while (fgets(line, sizeof line, f)) {
        char *tab = strchr(line, '\t');
        if (!tab) continue;
        *tab = 0;
        double ms = atof(tab + 1), cpu_ms = ms;
        const char *f3 = strchr(tab + 1, '\t'), *f4 = f3 ? strchr(f3 + 1, '\t') : NULL, *f5 = f4 ? strchr(f4 + 1, '\t') : NULL;
        if (f5) cpu_ms = atof(f5 + 1);
        if (!strcmp(line, "first-screen")) {
            first = ms;
        } else if (!strcmp(line, "search-done")) {
            if (last_cls && !strncmp(last_cls, "search", 6))
                add_figure(cls, &n_cls, &(figure){-1, "search: until the match is shown", ms, cpu_ms, ""});
        } else if (!strcmp(line, "complete-done")) {
            add_figure(cls, &n_cls, &(figure){-1, "prompt: until completed", ms, cpu_ms, ""});
        } else if (!strcmp(line, "compare-done")) {
            add_figure(cls, &n_cls, &(figure){-1, "compare: until aligned", ms, cpu_ms, ""});
        } else if (event < s.n) {
            if (open.action != s.action[event]) { /* the action before is whole */
                actions += open.action >= 0;
                add_figure(cls, &n_cls, &open);
                open = (figure){s.action[event], s.cls[event], 0, 0, ""};
            }
            open.ms += ms;
            open.cpu_ms += cpu_ms;
            snprintf(open.where, sizeof open.where, "%s", f3 ? f3 + 1 : "\n"); /* step and depth it ended on */
            last_cls = s.cls[event];
            event++;
        }
    }
    actions += open.action >= 0;
    add_figure(cls, &n_cls, &open);
    fclose(f);
    printf("\n%u call nodes (%.0f MB of JSON): %d keys (%d actions) in %.1f s wall, %.1f s CPU (load and pipeline "
           "included), peak %.0f MB\n", nodes, json / 1e6, event, actions, wall, cpu, peak / 1024.0);
    printf("  (an action: a key, a :command, or the keys of one command (gg, g<Timeout>) summed; wall: from\n"
           "   reading the key to the screen drawn; CPU: the UI thread's, which the machine's other\n"
           "   work does not inflate)\n");
    printf("  %-34s %5s %10s %10s %10s %10s   %s\n", "action", "count", "median", "worst", "CPU med.", "CPU worst", "goal (wall)");
    printf("  %-34s %5d %7.1f ms %10s %10s %10s   <= 1000 ms: %s\n", "first screen after the load", 1, first, "", "", "",
           first >= 0 && first <= 1000 ? "holds" : "MISSED");
    for (int k = 0; k < n_cls; k++) {
        qsort(cls[k].ms, (size_t)cls[k].n, sizeof *cls[k].ms, cmp_ms);
        qsort(cls[k].cpu, (size_t)cls[k].n, sizeof *cls[k].cpu, cmp_ms);
        double med = median_of(cls[k].ms, cls[k].n), worst = cls[k].ms[cls[k].n - 1];
        bool result = !strcmp(cls[k].name, "search: until the match is shown") ||
                      !strcmp(cls[k].name, "prompt: until completed") || !strcmp(cls[k].name, "compare: until aligned");
        bool holds = med <= 10 && worst <= 50;
        printf("  %-34s %5d %7.2f ms %7.2f ms %7.2f ms %7.2f ms   %s\n", cls[k].name, cls[k].n, med, worst,
               median_of(cls[k].cpu, cls[k].n), cls[k].cpu[cls[k].n - 1],
               result ? "(work between keys)" : holds ? "<= 10 / <= 50 ms: holds" : "<= 10 / <= 50 ms: MISSED");
        free(cls[k].ms);
        free(cls[k].cpu);
    }
    ls_buf_free(&s.text);
    unlink(keys);
    unlink(times);
    unlink(file);
}

int main(int argc, char **argv)
{
    const char *bin = getenv("LS_BIN");
    if (!bin) {
        fprintf(stderr, "bench_ui: LS_BIN names the lowerscope binary (make bench sets it)\n");
        return 1;
    }
    bench_print_header("bench_ui");
    char dir[] = "/tmp/lowerscope-bench-ui-XXXXXX";
    if (!mkdtemp(dir)) return 1;
    if (argc > 1) {
        for (int i = 1; i < argc; i++) run_size(bin, dir, (unsigned)atoi(argv[i]));
    } else {
        run_size(bin, dir, 100000);
        run_size(bin, dir, 1000000);
    }
    rmdir(dir);
    return 0;
}
