/* ExecuTorch's lowering as a pipeline of passes. Each pass takes a program and returns a new
 * one (sharing every node and tensor it does not change) plus a report of what it changed;
 * the pipeline keeps every step in a history (history.h) so the user can step forward and back.
 *
 * Default order, ExecuTorch's default flow (to_edge_transform_and_lower, then to_executorch):
 * to_edge (keeping what the backends take whole), then per backend: partition, fold_masks (for a
 * backend that folds masks), duplicate_constants, to_backend; then to_executorch's steps:
 * to_out_variant, memory_plan, emit (declared in export.h). constant_prop runs where a
 * backend's documented flow runs it (the MLX profile's, before to_edge). --pipeline composes
 * any order. Semantics, names and error texts follow
 * ../shared/reference/exir-semantics.md and PR #24481 (the fixed behaviour). */
#ifndef LS_PASSES_H
#define LS_PASSES_H

#include <stdbool.h>
#include <stdint.h>

#include "common.h"
#include "history.h"
#include "profile.h"
#include "program.h"

typedef struct ls_pass_ctx {
    const ls_profile *profile; /* the backend of a partition round (per-backend passes), else NULL */
    /* every backend of the pipeline, in order (to_edge keeps the composites they take whole:
     * their ops_to_not_decompose); none for a pass run alone */
    const ls_profile *const *backends;
    uint32_t n_backends;
    uint8_t memory_planning;   /* memory_plan's algorithm: 0 greedy (exir's default), 1 naive */
    bool init_mutable_buffers; /* emit: mutated buffers keep their initial data (exir's et_init_buffer) */
    bool mutable_buffer_names; /* emit: and their FQNs (exir's emit_mutable_buffer_names) */
    ls_report *report;         /* one sentence per change */
    ls_error *err;
} ls_pass_ctx;

/* Returns 0 with *out the new program (never `in` itself), or -1 with ctx->err set. */
typedef int (*ls_pass_fn)(const ls_program *in, ls_program **out, ls_pass_ctx *ctx);

typedef struct ls_pass {
    const char *name;    /* "to_edge" */
    const char *summary; /* one line for help and the UI */
    bool per_backend;    /* needs ctx->profile; repeats once per backend */
    ls_pass_fn run;
} ls_pass;

/* The passes in default order. */
const ls_pass *ls_passes(uint32_t *count);
const ls_pass *ls_pass_find(const char *name);

/* The passes themselves (one per file, src/pass_<name>.c). */
int ls_pass_to_edge(const ls_program *in, ls_program **out, ls_pass_ctx *ctx);
int ls_pass_constant_prop(const ls_program *in, ls_program **out, ls_pass_ctx *ctx);
int ls_pass_partition(const ls_program *in, ls_program **out, ls_pass_ctx *ctx);
int ls_pass_fold_masks(const ls_program *in, ls_program **out, ls_pass_ctx *ctx);
int ls_pass_duplicate_constants(const ls_program *in, ls_program **out, ls_pass_ctx *ctx);
int ls_pass_to_backend(const ls_program *in, ls_program **out, ls_pass_ctx *ctx);

/* ---- the pipeline */
#define LS_MAX_PIPELINE 32
#define LS_MAX_BACKENDS 8

/* Whoever watches a run (the UI runs the pipeline on a thread of its own; the CLI prints a
 * progress line): both are called on the pipeline's thread. */
typedef struct ls_pipeline_watch {
    /* step k is about to be made (k >= 1), after `seconds` since the run started */
    void (*step_begin)(void *ctx, const ls_history *h, uint32_t k, double seconds);
    /* step k is complete; it is published (h->n = k + 1) when this returns */
    void (*step_done)(void *ctx, const ls_history *h, uint32_t k);
    void *ctx;
    const bool *stop; /* when set and true, no further step is started */
} ls_pipeline_watch;

typedef struct ls_pipeline_opts {
    const ls_pass *passes[LS_MAX_PIPELINE]; /* --pipeline a,b,...; n_passes 0: the default order */
    uint32_t n_passes;
    ls_profile *backends[LS_MAX_BACKENDS]; /* --backend, in order; none given: the bundled profile */
    uint32_t n_backends;
    bool verify;                           /* run the verifier after every step (default true) */
    /* A .pte is its own step 0 (the program as the file holds it) and the pipeline does not run
     * on it unless asked: --relower, or --pipeline or --backend given (chosen). */
    bool relower, chosen;
    uint8_t memory_planning;               /* --memory-planning greedy|naive (0 greedy) */
    bool init_mutable_buffers;             /* --init-mutable-buffers */
    bool mutable_buffer_names;             /* --mutable-buffer-names */
    const ls_pipeline_watch *watch;        /* NULL: nobody watches */
    bool no_backends;                      /* --portable, --backend none: no partition round at all */
} ls_pipeline_opts;

void ls_pipeline_opts_init(ls_pipeline_opts *o);
void ls_pipeline_opts_free(ls_pipeline_opts *o);
/* One option and its value: "--pipeline" "to_edge,partition", "--backend" "FILE|bundled",
 * "--backend" "none" (no round: portable kernels only), "--memory-planning" "greedy|naive",
 * "--relower", "--portable" (= --backend none), "--init-mutable-buffers" and
 * "--mutable-buffer-names" (no value).
 * Returns 1 when the option is one of these (consumed), 0 when it is not, -1 on a bad value. */
int ls_pipeline_opt(ls_pipeline_opts *o, const char *opt, const char *value, ls_error *err);
/* Consumes every --pipeline/--backend (also --opt=value) and --relower from argv[1..], compacting argv.
 * The CLI and the TUI share it. */
int ls_pipeline_opts_parse(ls_pipeline_opts *o, int *argc, char **argv, ls_error *err);

/* The steps a pipeline will run: the passes in order, per-backend ones repeated per backend
 * (each contiguous run of per-backend passes is one round, repeated for every backend). */
typedef struct ls_plan_step {
    const ls_pass *pass;
    const ls_profile *profile; /* NULL for passes that are not per backend */
} ls_plan_step;
uint32_t ls_pipeline_plan(const ls_pipeline_opts *o, ls_plan_step *steps, uint32_t max);

/* Runs the pipeline on a loaded program: step 0 "load" is the program itself, then one step
 * per planned pass with its program, changes, report, verifier result and time. A program read
 * from a .pte is step 0 alone (its report says what the file holds) unless opts ask to lower it
 * again (relower, chosen). A failing pass
 * records its message in its step (program = the step before's) and stops the pipeline; that
 * is not an error of this function, which fails only on bad options. The history holds its own
 * reference to `loaded`. */
int ls_pipeline_run(ls_program *loaded, const ls_pipeline_opts *opts, ls_history *h, ls_error *err);
/* Step 0's report for a program read from a .pte (load_report.c): what the file holds — the
 * method and the others, each delegate with its backend, blob, compile specs and what it passes,
 * the kernels on the CPU, named and external data — and, unless relowered, that the pipeline
 * runs only when asked. */
void ls_pte_load_report(const ls_program *p, bool relowered, ls_report *r);
/* Whether ls_pipeline_run stops at step 0 for this program: a .pte not asked to be lowered again. */
bool ls_pipeline_as_held(const ls_program *loaded, const ls_pipeline_opts *opts);

#endif
