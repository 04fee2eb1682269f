/* lowerscope run FILE: runs a program on the bundled CPU runtime and prints its outputs, the
 * time and the mutable state; with --step, the program of a step of the lowering pipeline;
 * with --compare / --compare-with, checks it against a reference run on the same inputs
 * (run_compare.c). docs/cli.md; JSON format_version 2. */
#include <dirent.h>
#include <errno.h>
#include <inttypes.h>
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

#include "check_cli.h"
#include "bpte.h"
#include "cli.h"
#include "progress.h"
#include "npy.h"
#include "passes.h"
#include "pipeline_cli.h"
#include "reader.h"
#include "run_compare.h"
#include "run_devtools.h"
#include "run_nodes.h"
#include "run_print.h"
#include "runtime.h"

int ls_cmd_run(int argc, char **argv);

#define RUN_FORMAT_VERSION 2
#define RUN_USAGE                                                                                                      \
    "run FILE [--steps N] [--input NAME=FILE.npy]... [--seed S] [--save DIR] [--json] [--model NAME] [--step S] "      \
    "[--compare | --compare-with REF] [--rtol R] [--atol A] [--nodes] [--backend NAME|FILE]... [--pipeline a,b,...] "     \
    "[--etdump FILE.etdp]"

static const char RUN_HELP[] =
    "usage: lowerscope " RUN_USAGE "\n"
    "\n"
    "Runs the program on the bundled CPU runtime and prints every user output (statistics and first\n"
    "values), the mutable state after the last step and where the time went.\n"
    "\n"
    "options:\n"
    "  --steps N             run N times (default 1); buffers the program mutates carry over\n"
    "  --input NAME=FILE.npy the value of user input NAME for every step (default: seeded inputs)\n"
    "  --seed S              seed of the generated floating-point inputs (default 0)\n"
    "  --save DIR            write every output and the final state as .npy files into DIR (a folder\n"
    "                        holding .npy files already is refused unless --force)\n"
    "  --json                one JSON document instead of the text (format_version 2, docs/cli.md)\n"
    "  --model NAME          which models/NAME.json of an archive holding several\n"
    CLI_PTE_OPTIONS_HELP
    "  --step S              run the program as it is after step S of the lowering pipeline: a number,\n"
    "                        a pass name (its last step) or pass:backend; 0 is the loaded program\n"
    CLI_PIPELINE_OPTIONS_HELP
    "  --compare             also run the loaded program (the reference) on the same inputs and compare\n"
    "                        every output and state tensor; without --step, the last step that can run\n"
    "  --compare-with REF    the same with REF's loaded program as the reference\n"
    "  --rtol R, --atol A    tolerance of floating-point comparisons (default: by dtype, float32\n"
    "                        rtol 1e-5, atol 1e-6; integers and bool are always compared exactly)\n"
    "  --nodes               what each node measured, as the UI's run overlay: its time a run, the\n"
    "                        range of its values (NaN and Inf counted), and with --compare its largest\n"
    "                        difference from the loaded program's value of the same node and the\n"
    "                        first node that differs (where a lowered program starts to go wrong)\n"
    "  --etdump FILE.etdp    do not run: show what a device measured (an ExecuTorch ETDump) on the\n"
    "                        program's nodes, FILE being the .pte that ran or its ETRecord; events\n"
    "                        that find no node are listed\n"
    "  -h, --help            this help\n"
    "\n"
    "A bundled program (.bpte) runs its test cases instead: each case's inputs, its outputs checked\n"
    "against the expected ones as ExecuTorch's verify_method_outputs does (--rtol 1e-5, --atol 1e-8\n"
    "unless given).\n"
    "\n"
    "exit codes: 0 ran (and matched the reference), 1 an output or state tensor differs from the\n"
    "reference, or a step fails at run time (a position past a cache's rows; the steps before it\n"
    "are reported), or a bundled case fails, or the verifier rejects the program or the step run\n"
    "failed (the runtime refuses a .pte); 2 bad input\n"
    "or usage; 3 the program is valid but needs what lowerscope lacks (a backend, a kernel, the\n"
    "weights of a program loaded without them)\n";

typedef struct given_input {
    const char *name, *file;
    ls_tensor *t;
} given_input;

typedef struct run_opts {
    const char *path, *save_dir;
    const char *compare_with; /* --compare-with REF */
    const char *step;         /* --step S */
    const char *etdump;       /* --etdump FILE */
    bool bundled;             /* FILE is a bundled program */
    bool compare;             /* --compare: the loaded program is the reference */
    bool json, pipeline_given;
    bool nodes;               /* --nodes: what each node measured (the UI's run overlay) */
    bool force;               /* --force: --save may replace .npy files already in its folder */
    ls_compare_opts tol;      /* --rtol, --atol (-1: by dtype) */
    ls_pipeline_opts pipeline;
    ls_load_opts load;
    int64_t steps;
    uint64_t seed;
    LS_VEC(given_input) given;
} run_opts;

static bool parse_int(const char *s, int64_t *out)
{
    char *end;
    errno = 0;
    long long v = strtoll(s, &end, 10);
    if (errno || end == s || *end) return false;
    *out = v;
    return true;
}

static bool parse_tolerance(const char *opt, const char *s, double *out)
{
    char *end;
    errno = 0;
    double v = strtod(s, &end);
    if (errno || end == s || *end || !(v >= 0) || isinf(v)) {
        ls_cli_error("run: %s wants a number from 0 up, not '%s'", opt, s);
        return false;
    }
    *out = v;
    return true;
}

static int parse_opts(int argc, char **argv, run_opts *o)
{
    ls_error err;
    int before = argc;
    if (ls_pipeline_opts_parse(&o->pipeline, &argc, argv, &err) != 0) {
        ls_cli_error("run: %s", err.msg);
        return -1;
    }
    o->pipeline_given = argc != before;
    int lo;
    for (int i = 1; i < argc; i++) {
        const char *a = argv[i];
        bool has_next = i + 1 < argc;
        if (strcmp(a, "--json") == 0) {
            o->json = true;
        } else if (strcmp(a, "--steps") == 0 && has_next) {
            if (!parse_int(argv[++i], &o->steps) || o->steps < 1 || o->steps > 1000000) {
                ls_cli_error("run: --steps wants a whole number from 1 to 1000000, not '%s'", argv[i]);
                return -1;
            }
        } else if (strcmp(a, "--seed") == 0 && has_next) {
            int64_t s;
            if (!parse_int(argv[++i], &s)) {
                ls_cli_error("run: --seed wants a whole number, not '%s'", argv[i]);
                return -1;
            }
            o->seed = (uint64_t)s;
        } else if (strcmp(a, "--step") == 0 && has_next) {
            o->step = argv[++i];
        } else if (strncmp(a, "--step=", 7) == 0) {
            o->step = a + 7;
        } else if (strcmp(a, "--etdump") == 0 && has_next) {
            o->etdump = argv[++i];
            if (ls_cli_refuse_empty("run", "--etdump", o->etdump, "the ETDump (.etdp) a device wrote")) return -1;
        } else if (strcmp(a, "--compare") == 0) {
            o->compare = true;
        } else if (strcmp(a, "--nodes") == 0) {
            o->nodes = true;
        } else if (strcmp(a, "--compare-with") == 0 && has_next) {
            o->compare_with = argv[++i];
            if (ls_cli_refuse_empty("run", "--compare-with", o->compare_with, "the reference program")) return -1;
        } else if ((strcmp(a, "--rtol") == 0 || strcmp(a, "--atol") == 0) && has_next) {
            if (!parse_tolerance(a, argv[++i], a[2] == 'r' ? &o->tol.rtol : &o->tol.atol)) return -1;
        } else if (strcmp(a, "--force") == 0) {
            o->force = true;
        } else if (strcmp(a, "--save") == 0 && has_next) {
            o->save_dir = argv[++i];
            if (ls_cli_refuse_empty("run", "--save", o->save_dir, "the folder to save into")) return -1;
        } else if ((lo = ls_cli_load_opt("run", &o->load, false, argc, argv, &i)) != 0) {
            if (lo < 0) return -1;
        } else if (strcmp(a, "--input") == 0 && has_next) {
            const char *spec = argv[++i], *eq = strchr(spec, '=');
            if (!eq || eq == spec || !eq[1]) {
                ls_cli_error("run: --input wants NAME=FILE.npy, not '%s'", spec);
                return -1;
            }
            given_input g = {ls_intern_n(spec, (size_t)(eq - spec)), eq + 1, NULL};
            ls_vec_push(&o->given, g);
        } else if (ls_cli_take_file("run", RUN_USAGE, a, &o->path) != 0) {
            return -1;
        }
    }
    if (!o->path) {
        ls_cli_error("run: which file? (usage: lowerscope %s)", RUN_USAGE);
        return -1;
    }
    if (o->compare && o->compare_with) {
        ls_cli_error("run: --compare (with the loaded program) and --compare-with REF: one reference at a time");
        return -1;
    }
    o->bundled = ls_bpte_is_file(o->path);
    /* a bundled program's ETDump (its RunData say which case ran) is placed on its embedded .pte,
     * as the UI places it: the cases do not run then */
    /* it runs nothing here: an option about a run would be ignored (split_equals made every
     * --option=value two words, so the options are whole words) */
    static const char *const about_a_run[] = {"--steps", "--seed", "--step",  "--compare", "--nodes",
                                              "--compare-with", "--save", "--input"};
    for (int i = 1; o->etdump && i < argc; i++)
        for (size_t k = 0; k < sizeof about_a_run / sizeof about_a_run[0]; k++)
            if (!strcmp(argv[i], about_a_run[k])) {
                ls_cli_error("run: --etdump shows what ran on a device, and runs nothing here: it takes no %s", argv[i]);
                return -1;
            }
    if ((o->tol.rtol >= 0 || o->tol.atol >= 0) && !o->compare && !o->compare_with && !o->bundled) {
        ls_cli_error("run: --rtol and --atol are the tolerance of --compare or --compare-with; give one of them");
        return -1;
    }
    if (o->pipeline_given && !o->step && !o->compare) {
        ls_cli_error("run: --backend and --pipeline choose the pipeline of --step or --compare; give one of them");
        return -1;
    }
    return 0;
}

/* ---- which program runs */

typedef struct run_target {
    ls_program *loaded;
    ls_history h;
    int step;            /* the pipeline step run; -1: the loaded program (no pipeline) */
    const ls_program *p; /* the program run */
    ls_runner *r;
    bool lacks;          /* it cannot run because lowerscope lacks a backend or a kernel (exit 3) */
} run_target;

/* The loaded program, step --step of the pipeline, or (--compare without --step) the last step
 * whose program can run here. Prints the error and returns the exit code when there is none. */
static int choose_program(const run_opts *o, run_target *t)
{
    ls_error err;
    t->step = -1;
    if (!o->step && !o->compare) {
        /* the runtime, like a pass, needs a well-formed program */
        ls_verify_result vr;
        ls_verify(t->loaded, &vr);
        uint32_t structural = vr.n_structural;
        ls_verify_result_free(&vr);
        if (structural) {
            ls_cli_error("%s: the verifier rejects the program's structure (%u error%s): it cannot run (lowerscope verify "
                         "%s lists the errors)", o->path, structural, structural == 1 ? "" : "s", o->path);
            return LS_EXIT_FINDINGS; /* the verifier's findings, as verify and passes exit */
        }
        t->p = t->loaded;
        if (!(t->r = ls_runner_new(t->p, &err))) ls_cli_error("%s", err.msg);
        return t->r ? 0 : ls_cli_exit_of(&err);
    }
    ls_pipeline_opts po = o->pipeline;
    ls_pipeline_watch watch = {.step_begin = ls_progress_step}; /* a progress line on a terminal */
    if (!po.watch) po.watch = &watch;
    ls_progress_tty_begin();
    int prc = ls_pipeline_run(t->loaded, &po, &t->h, &err);
    ls_progress_tty_end();
    if (prc != 0) {
        ls_cli_error("run: %s", err.msg);
        return -1;
    }
    const ls_history *h = &t->h;
    if (h->not_run) {
        cli_note_not_run(h);
        return LS_EXIT_FINDINGS;
    }
    if (o->step) {
        int s = cli_find_step(h, o->step);
        if (s < 0) return -1;
        if (h->steps[s].error) {
            ls_cli_error("run: --step %s: step %d %s failed (%s): there is no program to run", o->step, s, h->steps[s].pass,
                         h->steps[s].error);
            return cli_step_failure_exit(&h->steps[s]); /* as passes exits for the step: 1, or 3 on a need */
        }
        t->step = s;
        t->p = h->steps[s].program;
        if (!(t->r = ls_runner_new(t->p, &err))) ls_cli_error("%s", err.msg);
        return t->r ? 0 : ls_cli_exit_of(&err);
    }
    /* the last step that can run: a failed pass ends the pipeline; a delegate whose backend is
     * not here keeps its step (and the ones after) from running */
    char why[2 * LS_ERR_MAX] = "";
    int why_exit = LS_EXIT_FINDINGS; /* the first reason's: a failed step (1, or 3 on a need), a step that cannot run here */
    int last = (int)h->n - 1;
    for (int s = last; s >= 1 && !t->r; s--) {
        const ls_step *st = &h->steps[s];
        if (st->error) {
            if (!why[0]) {
                snprintf(why, sizeof why, "step %d %s failed: %s", s, st->pass, st->error);
                why_exit = cli_step_failure_exit(st);
            }
            continue;
        }
        if ((t->r = ls_runner_new(st->program, &err))) {
            t->step = s;
            t->p = st->program;
        } else if (!why[0]) {
            snprintf(why, sizeof why, "step %d %s cannot run here: %s", s, st->pass, err.msg);
            why_exit = ls_cli_exit_of(&err);
        }
    }
    if (!t->r && h->n == 1) { /* a .pte: nothing is lowered after it is loaded */
        ls_cli_error("run: --compare compares the last step of the pipeline with the loaded program, and %s has "
                     "only the load (a .pte is lowered already): --relower lowers it again, --compare-with REF "
                     "runs another file as the reference", o->path);
        return -1;
    }
    if (!t->r) {
        ls_cli_error("run: --compare: no step of the pipeline after load can run here (%s)", why[0] ? why : "none");
        return why_exit;
    }
    if (t->step != last) fprintf(stderr, "lowerscope: note: %s; comparing step %d %s\n", why, t->step, h->steps[t->step].pass);
    return 0;
}

/* ---- inputs */

/* Loads each --input file and checks it against its placeholder. */
static int load_given(run_opts *o, const ls_node **ins, uint32_t nin)
{
    ls_error err;
    for (uint32_t g = 0; g < o->given.n; g++) {
        given_input *gi = &o->given.v[g];
        const ls_node *ph = NULL;
        for (uint32_t i = 0; i < nin && !ph; i++)
            if (ins[i]->name == gi->name) ph = ins[i];
        if (!ph) {
            ls_buf b = {0};
            for (uint32_t i = 0; i < nin; i++) ls_buf_printf(&b, "%s%s", i ? ", " : "", ins[i]->name);
            ls_cli_error("run: --input %s: the program has no user input of that name (its inputs: %s)", gi->name,
                         nin ? b.s : "none");
            ls_buf_free(&b);
            return -1;
        }
        if (ls_npy_load(gi->file, &gi->t, &err) != 0) {
            ls_cli_error("run: --input %s: %s", gi->name, err.msg); /* which option's file */
            return -1;
        }
        if (ph->val_kind == LS_VAL_TENSOR && ph->nvals) {
            const ls_tmeta *m = &ph->vals[0];
            if (!ls_tensor_fits(m, gi->t)) {
                char s1[128], s2[128];
                ls_tmeta got;
                ls_tensor_meta(gi->t, &got);
                int64_t bound = ls_tmeta_numel_bound(m);
                char why[160] = "";
                if (bound >= 0 && got.ndim == m->ndim)
                    snprintf(why, sizeof why, " (ExecuTorch: \"Attempted to resize a bounded tensor with a maximum capacity "
                             "of %lld elements to %lld elements.\")", (long long)bound, (long long)ls_tmeta_numel(&got));
                ls_cli_error("run: --input %s: %s: the input expects %s, the file holds %s%s", gi->name, gi->file,
                             ls_tmeta_str(m, s1, sizeof s1), ls_tmeta_str(&got, s2, sizeof s2), why);
                return -1;
            }
        }
    }
    return 0;
}

/* Step k's inputs: generated, with the --input files in their places. 0, -1 (message printed)
 * or -3 (the same, of a need: out of memory). */
static int step_inputs(const run_opts *o, const ls_program *p, const ls_node **ins, uint32_t nin, int64_t k,
                       ls_value **vals, uint32_t *n)
{
    ls_error err;
    if (ls_make_inputs(p, o->seed, k, vals, n, &err) != 0) {
        /* only an input without metadata fails here; it is fine when the user gave it */
        for (uint32_t i = 0; i < nin; i++) {
            bool given = false;
            for (uint32_t j = 0; j < o->given.n; j++) given |= o->given.v[j].name == ins[i]->name;
            if (!given && err.code == LS_ERR_NEEDS) { /* out of memory: no --input helps */
                ls_cli_error("%s", err.msg);
                return -3;
            }
            if (!given) { /* the core says what is missing, the command how to give it */
                ls_cli_error("%s (--input NAME=FILE.npy)", err.msg);
                return -1;
            }
        }
        *vals = ls_calloc(nin + 1, sizeof **vals);
        *n = nin;
    }
    for (uint32_t i = 0; i < *n; i++)
        for (uint32_t g = 0; g < o->given.n; g++)
            if (o->given.v[g].name == ins[i]->name) {
                ls_value_release(&(*vals)[i]);
                (*vals)[i] = ls_value_tensor(ls_tensor_ref(o->given.v[g].t));
            }
    return 0;
}

static int save_tensor(const char *dir, const char *name, const ls_tensor *t, ls_buf *saved)
{
    char path[4096];
    snprintf(path, sizeof path, "%s/%s.npy", dir, name);
    ls_error err;
    if (ls_npy_save(path, t, &err) != 0) {
        ls_cli_error("%s", err.msg);
        return -1;
    }
    if (saved->len) ls_buf_puts(saved, ", ");
    ls_buf_json_str(saved, path);
    return 0;
}

static int cmp_double(const void *a, const void *b)
{
    double x = *(const double *)a, y = *(const double *)b;
    return x < y ? -1 : x > y;
}

static void free_values(ls_value *v, uint32_t n)
{
    for (uint32_t i = 0; i < n; i++) ls_value_release(&v[i]);
    free(v);
}

/* ---- the command */

typedef struct run_state {
    run_opts o;
    run_target t;
    const ls_node **ins;
    uint32_t nin;
    const char **onames;
    uint32_t n_onames;
    double *times;
    int64_t done; /* steps that ran */
    run_compare *cmp;
    ls_node_stats stats; /* --nodes */
    ls_buf js, saved;
    bool json_written; /* the document is out */
    /* a step the runtime refused (a position past a cache's rows): the runs stop there and what
     * ran before it is reported, not thrown away */
    int64_t failed_step; /* -1: none */
    bool failed_ref_too; /* with a reference, it failed on the same inputs */
    char failed_msg[LS_ERR_MAX];
} run_state;

/* A .npy file already in the folder (the first, and how many), which --save would replace. */
static const char *npy_already_in(const char *dir, unsigned *count)
{
    static char first[256];
    *count = 0;
    DIR *d = opendir(dir);
    for (struct dirent *e; d && (e = readdir(d));) {
        size_t l = strlen(e->d_name);
        if (l <= 4 || strcmp(e->d_name + l - 4, ".npy") != 0) continue;
        if (!(*count)++) snprintf(first, sizeof first, "%s", e->d_name);
    }
    if (d) closedir(d);
    return *count ? first : NULL;
}

/* --save DIR: the folder and the ones above it, as `mkdir -p` makes them; a path that is there
 * and is not a folder, a folder the user cannot write in, or one holding .npy files already
 * (without --force: what the user saved before is theirs, as export's -o is), is refused
 * before anything runs. */
static int make_folders(const char *dir, bool force)
{
    char path[4096]; /* an empty one was refused with the option */
    if (snprintf(path, sizeof path, "%s", dir) >= (int)sizeof path) {
        ls_cli_error("run: --save %s: the path is too long", dir);
        return -1;
    }
    for (char *p = path + 1;; p++) {
        bool end = !*p;
        if (*p != '/' && !end) continue;
        *p = 0;
        struct stat st;
        if (mkdir(path, 0777) != 0 && errno != EEXIST) {
            ls_cli_error("run: --save %s: cannot create the folder %s: %s", dir, path, strerror(errno));
            return -1;
        }
        if (stat(path, &st) != 0 || !S_ISDIR(st.st_mode)) {
            ls_cli_error("run: --save %s: %s is there and is not a folder", dir, path);
            return -1;
        }
        if (end) {
            /* the files go in as they are made: a folder they cannot go in is said before the run
             * (it printed every result, then failed on the first file) */
            if (access(path, W_OK | X_OK) != 0) {
                ls_cli_error("run: --save %s: cannot write in the folder: %s", dir, strerror(errno));
                return -1;
            }
            unsigned n;
            const char *there = force ? NULL : npy_already_in(path, &n);
            if (there) {
                ls_cli_error("run: --save %s: the folder holds %s%s already: give --force to replace files of the "
                             "same names, or another folder", dir, there, n > 1 ? ls_internf(" and %u more .npy files", n - 1) : "");
                return -1;
            }
            return 0;
        }
        *p = '/';
    }
}

/* One step: inputs, the run, its outputs printed, saved and compared. 0, 1 (the program failed
 * where the reference ran: stop, a finding), 2 (the runtime refused the step, and the reference
 * too if there is one: stop, reported as failed_step), -1 (error printed) or -3 (the same, of a
 * need: out of memory, a kernel). */
static int run_step(run_state *s, int64_t k)
{
    const run_opts *o = &s->o;
    ls_value *vals, *outs;
    uint32_t n, nout;
    ls_error err;
    int in_rc = step_inputs(o, s->t.p, s->ins, s->nin, k, &vals, &n);
    if (in_rc != 0) return in_rc;
    if (s->cmp) run_compare_inputs(s->cmp, vals, n);
    double t0 = ls_now();
    int ok = ls_runner_run(s->t.r, vals, n, &outs, &nout, &err);
    s->times[k] = ls_now() - t0;
    free_values(vals, n);
    if (ok != 0) {
        /* which step, and after the first what a user does next: the seeded inputs follow the
         * step and the state carries over (the UI's run screen says the same) */
        const char *next = k == 0 ? ""
                                  : o->given.n ? "; the .npy inputs are the same at every step and the state carries over"
                                               : "; seeded inputs follow the step and the state carries over: a position "
                                                 "past a cache's rows fails (give fewer --steps)";
        if (err.code == LS_ERR_NEEDS) { /* out of memory, a kernel lowerscope lacks: nothing to report */
            ls_cli_error("run: step %" PRId64 " failed: %s%s", k, err.msg, next);
            return -3;
        }
        s->failed_step = k;
        snprintf(s->failed_msg, sizeof s->failed_msg, "%s", err.msg);
        if (!s->cmp) {
            ls_cli_error("run: step %" PRId64 " failed: %s%s", k, err.msg, next);
            if (!o->json) printf("step %" PRId64 "  FAILED: %s\n", k, err.msg);
            return 2;
        }
        ls_error ref_err; /* a difference only when the reference runs on these inputs */
        if (run_compare_step(s->cmp, NULL, 0, NULL, NULL, false, &ref_err) != 0) {
            ls_cli_error("run: step %" PRId64 ": the program and the reference both fail on these inputs: %s%s", k,
                         ref_err.msg, next);
            if (!o->json) printf("step %" PRId64 "  FAILED, the reference too: %s\n", k, err.msg);
            s->failed_ref_too = true;
            return 2;
        }
        run_compare_program_failed(s->cmp, k, err.msg);
        if (!o->json) printf("step %" PRId64 "  FAILED: %s\n", k, err.msg);
        return 1;
    }
    s->done = k + 1;
    if (!o->json) printf("step %" PRId64 "  %.3f ms\n", k, s->times[k] * 1e3);
    ls_buf_printf(&s->js, "%s\n    {\"step\": %" PRId64 ", \"seconds\": %.9f, \"outputs\": [", k ? "," : "", k, s->times[k]);
    int rc = 0;
    for (uint32_t i = 0; i < nout && rc == 0; i++) {
        const char *name = i < s->n_onames && s->onames[i] ? s->onames[i] : "(constant)";
        if (!o->json) {
            char label[96];
            snprintf(label, sizeof label, "out %u %s", i, name);
            run_print_value(label, &outs[i]);
        }
        ls_buf_printf(&s->js, "%s\n      {\"index\": %u, \"name\": ", i ? "," : "", i);
        ls_buf_json_str(&s->js, name);
        ls_buf_puts(&s->js, ", ");
        run_json_value(&s->js, &outs[i]);
        ls_buf_puts(&s->js, "}");
        if (o->save_dir && outs[i].kind == LS_V_TENSOR) {
            char fname[64];
            if (o->steps > 1) snprintf(fname, sizeof fname, "step%" PRId64 "_out_%u", k, i);
            else snprintf(fname, sizeof fname, "out_%u", i);
            if (save_tensor(o->save_dir, fname, outs[i].t, &s->saved) != 0) rc = -1;
        }
    }
    ls_buf_puts(&s->js, "]}");
    if (rc == 0 && s->cmp && run_compare_step(s->cmp, outs, nout, s->onames, s->t.r, !o->json, &err) != 0) {
        ls_cli_error("%s", err.msg);
        rc = -1;
    }
    free_values(outs, nout);
    return rc;
}

/* The state after the last step, then the time. */
static int finish(run_state *s)
{
    const run_opts *o = &s->o;
    ls_runner *r = s->t.r;
    ls_buf *js = &s->js;
    ls_buf_puts(js, "\n  ],\n  \"state\": [");
    uint32_t nst = ls_runner_state_count(r);
    if (!o->json && nst && s->done) printf("state after step %" PRId64 "\n", s->done - 1);
    bool first = true;
    for (uint32_t i = 0; i < nst && s->done; i++) {
        const char *name = ls_runner_state_name(r, i);
        ls_tensor *t = ls_runner_state(r, i);
        if (!t) continue; /* a delegate that does not show its state */
        if (!o->json) run_print_state(name, t, nst <= 4 ? 8 : 3); /* many buffers: fewer rows each */
        ls_buf_puts(js, first ? "\n    {\"name\": " : ",\n    {\"name\": ");
        first = false;
        ls_buf_json_str(js, name);
        ls_buf_puts(js, ", ");
        run_json_tensor(js, t, false);
        ls_buf_puts(js, "}");
        if (o->save_dir) {
            char fname[300];
            snprintf(fname, sizeof fname, "state_%s", name);
            for (char *c = fname; *c; c++)
                if (*c == '/') *c = '.';
            if (save_tensor(o->save_dir, fname, t, &s->saved) != 0) return -1;
        }
    }
    /* time: the median step, then where it went */
    double median = 0;
    if (s->done) {
        qsort(s->times, (size_t)s->done, sizeof *s->times, cmp_double);
        median = s->done % 2 ? s->times[s->done / 2] : (s->times[s->done / 2 - 1] + s->times[s->done / 2]) / 2;
    }
    const ls_run_stats *st = ls_runner_stats(r);
    ls_buf_printf(js, "%s],\n  \"time\": {\"median_step_seconds\": %.9f, \"cpu_kernel_seconds\": %.9f, \"delegates\": ",
                  nst && s->done ? "\n  " : "", median, st->cpu_seconds);
    run_json_delegate_times(js, st);
    if (!o->json) {
        printf("time  median step %.3f ms (%" PRId64 " step%s); on the CPU outside delegates %.3f ms in all", median * 1e3, s->done,
               s->done == 1 ? "" : "s", st->cpu_seconds * 1e3);
        run_print_delegate_times(st);
        printf("\n");
    }
    ls_buf_printf(js, "},\n  \"saved\": [%s]", s->saved.s ? s->saved.s : "");
    return 0;
}

/* The first lines of the JSON document and of the text. */
static void start_output(run_state *s)
{
    const run_opts *o = &s->o;
    const run_target *t = &s->t;
    ls_buf title = {0};
    if (t->step >= 0) cli_step_title(&title, &t->h, t->step);
    uint32_t nst = ls_runner_state_count(t->r);
    if (!o->json) {
        printf("%s%s%s: %u user input%s, %" PRId64 " step%s, %u mutable buffer%s", o->path, title.s ? " at " : "",
               title.s ? title.s : "", s->nin, s->nin == 1 ? "" : "s", o->steps, o->steps == 1 ? "" : "s", nst,
               nst == 1 ? "" : "s");
        if (o->compare) printf(", compared with the loaded program");
        else if (o->compare_with) printf(", compared with %s", o->compare_with);
        printf("\n");
    }
    ls_buf *js = &s->js;
    ls_buf_printf(js, "{\n  \"format_version\": %d,\n  \"file\": ", RUN_FORMAT_VERSION);
    ls_buf_json_str(js, o->path);
    ls_buf_puts(js, ",\n  \"pipeline_step\": ");
    if (t->step >= 0) {
        const ls_step *st = &t->h.steps[t->step];
        ls_buf_printf(js, "{\"index\": %d, \"pass\": ", t->step);
        ls_buf_json_str(js, st->pass);
        ls_buf_puts(js, ", \"backend\": ");
        ls_buf_json_str(js, st->detail);
        ls_buf_putc(js, '}');
    } else {
        ls_buf_puts(js, "null");
    }
    ls_buf_printf(js, ",\n  \"steps\": %" PRId64 ",\n  \"seed\": %" PRIu64 ",\n  \"inputs\": [", o->steps, o->seed);
    for (uint32_t i = 0; i < s->nin; i++) {
        const char *src = "generated";
        for (uint32_t g = 0; g < o->given.n; g++)
            if (o->given.v[g].name == s->ins[i]->name) src = o->given.v[g].file;
        ls_buf_puts(js, i ? ", {\"name\": " : "{\"name\": ");
        ls_buf_json_str(js, s->ins[i]->name);
        ls_buf_puts(js, ", \"source\": ");
        ls_buf_json_str(js, src);
        ls_buf_puts(js, "}");
    }
    ls_buf_puts(js, "],\n  \"runs\": [");
    ls_buf_free(&title);
}

static int run_all(run_state *s)
{
    run_opts *o = &s->o;
    run_target *t = &s->t;
    ls_error err;
    if (o->bundled || o->etdump) {
        cli_devtools_run d = {.path = o->path, .etdump = o->etdump, .json = o->json, .rtol = o->tol.rtol,
                              .atol = o->tol.atol, .load = o->load};
        return o->etdump ? cli_run_etdump(&d) : cli_run_bundled(&d);
    }
    /* A .pte ExecuTorch's runtime would refuse is not run either: what it computes here would
     * say nothing of what the file does on a device. */
    if (cli_is_pte(o->path)) {
        ls_pte_check_report rep;
        if (cli_runtime_check(o->path, &rep, &err) == 0 && rep.n_fails) {
            ls_buf b = {0};
            ls_pte_check_report_text(&rep, o->path, &b);
            fputs(b.s, stderr);
            ls_buf_free(&b);
            ls_pte_check_report_free(&rep);
            ls_cli_error("%s: not run: ExecuTorch's runtime refuses it (lowerscope verify lists why)", o->path);
            return LS_EXIT_FINDINGS;
        }
        ls_pte_check_report_free(&rep);
    }
    if (ls_load(o->path, &o->load, &t->loaded, &err) != 0) {
        ls_cli_error("%s", err.msg);
        return ls_cli_exit_of(&err);
    }
    int chosen = choose_program(o, t);
    if (chosen != 0) return chosen < 0 ? LS_EXIT_INPUT : chosen;
    s->nin = ls_program_user_inputs(t->p, NULL, 0);
    s->ins = ls_calloc(s->nin + 1, sizeof *s->ins);
    ls_program_user_inputs(t->p, s->ins, s->nin);
    if (load_given(o, s->ins, s->nin) != 0) return LS_EXIT_INPUT;
    if (o->save_dir && make_folders(o->save_dir, o->force) != 0) return LS_EXIT_INPUT;
    if (o->compare) s->cmp = run_compare_loaded(t->loaded, o->path, t->p, &o->tol, &err);
    else if (o->compare_with) s->cmp = run_compare_open(o->compare_with, t->p, &o->tol, &err);
    if ((o->compare || o->compare_with) && !s->cmp) {
        ls_cli_error("run: %s", err.msg);
        return ls_cli_exit_of(&err);
    }
    if (o->nodes) { /* node by node: time and range always, the difference against the loaded program */
        ls_node_stats_init(&s->stats, t->p, "bundled runtime");
        ls_runner_observe(t->r, &s->stats, o->compare);
        if (o->compare) run_compare_nodes(s->cmp, &s->stats);
    }
    start_output(s);
    s->n_onames = ls_program_user_outputs(t->p, NULL, 0);
    s->onames = ls_calloc(s->n_onames + 1, sizeof *s->onames);
    ls_program_user_outputs(t->p, s->onames, s->n_onames);
    s->times = ls_calloc((size_t)o->steps, sizeof *s->times);
    for (int64_t k = 0; k < o->steps; k++) {
        int rc = run_step(s, k);
        if (rc < 0) return rc == -3 ? LS_EXIT_NEEDS : LS_EXIT_INPUT;
        if (rc > 0) break; /* the program failed where the reference ran, or the runtime refused the step */
    }
    if (finish(s) != 0) return LS_EXIT_INPUT;
    ls_buf_puts(&s->js, ",\n  \"failed\": ");
    if (s->failed_step >= 0) {
        ls_buf_printf(&s->js, "{\"step\": %" PRId64 ", \"error\": ", s->failed_step);
        ls_buf_json_str(&s->js, s->failed_msg);
        ls_buf_printf(&s->js, ", \"reference_fails_too\": %s}", s->failed_ref_too ? "true" : "false");
    } else {
        ls_buf_puts(&s->js, "null");
    }
    if (o->nodes) {
        run_nodes_json(&s->stats, o->compare, &s->js);
        if (!o->json) run_nodes_print(&s->stats, o->compare);
    }
    int rc = LS_EXIT_OK;
    if (s->cmp) {
        if (o->compare_with) {
            ls_buf_puts(&s->js, ",\n  \"compare_with\": ");
            ls_buf_json_str(&s->js, o->compare_with);
        }
        run_compare_json(s->cmp, &s->js);
        if (!o->json) run_compare_print(s->cmp, s->done);
        if (run_compare_failed(s->cmp)) rc = LS_EXIT_FINDINGS;
    }
    if (s->failed_step >= 0) rc = LS_EXIT_FINDINGS;
    ls_buf_puts(&s->js, "\n}\n");
    s->json_written = true;
    if (o->json) fputs(s->js.s, stdout);
    else if (s->saved.len) printf("saved %s\n", o->save_dir);
    return rc;
}

int ls_cmd_run(int argc, char **argv)
{
    if (ls_cli_help(argc, argv, RUN_HELP)) return LS_EXIT_OK;
    run_state s = {.o = {.steps = 1, .tol = {-1, -1}}, .failed_step = -1};
    ls_pipeline_opts_init(&s.o.pipeline);
    int rc = parse_opts(argc, argv, &s.o) != 0 ? LS_EXIT_INPUT : run_all(&s);
    /* a program that does not run (the runtime refuses the .pte, a kernel or backend it needs):
     * --json still writes a document, as the other commands do for exit 1 and 3; exit 2 writes
     * none, for every command */
    if (s.o.json && !s.json_written && !s.o.bundled && !s.o.etdump && (rc == LS_EXIT_FINDINGS || rc == LS_EXIT_NEEDS)) {
        ls_buf b = {0};
        /* not_run is a string, as in passes --json; the exit code beside it */
        ls_buf_printf(&b, "{\"format_version\": %d, \"file\": ", RUN_FORMAT_VERSION);
        ls_buf_json_str(&b, s.o.path);
        ls_buf_printf(&b, ", \"runs\": [], \"exit\": %d, \"not_run\": ", rc);
        ls_buf_json_str(&b, ls_cli_last_error());
        ls_buf_puts(&b, "}\n");
        fputs(b.s, stdout);
        ls_buf_free(&b);
    }
    for (uint32_t g = 0; g < s.o.given.n; g++) ls_tensor_unref(s.o.given.v[g].t);
    free(s.o.given.v);
    free(s.ins);
    free(s.onames);
    free(s.times);
    ls_buf_free(&s.js);
    ls_buf_free(&s.saved);
    run_compare_free(s.cmp);
    ls_runner_free(s.t.r);
    if (s.o.nodes) ls_node_stats_free(&s.stats);
    if (s.t.h.n) ls_history_free(&s.t.h);
    ls_program_unref(s.t.loaded);
    ls_pipeline_opts_free(&s.o.pipeline);
    return rc;
}
