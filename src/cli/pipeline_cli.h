/* What the passes, partitions and diff commands share: their options, loading the file and
 * running the pipeline, finding a step, describing nodes and writing programs as JSON. */
#ifndef LS_PIPELINE_CLI_H
#define LS_PIPELINE_CLI_H

#include <stdbool.h>

#include "cli.h"
#include "history.h"
#include "passes.h"

/* The help lines of the options every pipeline command takes (cli_run_pipeline). */
#define CLI_PIPELINE_OPTIONS_HELP                                                                                      \
    "  --backend NAME|FILE   a backend profile (repeatable; docs/backends.md): bundled, a shipped one\n"            \
    "                        (xnnpack, ...) or a JSON file; each adds a round of partition, fold_masks,\n"          \
    "                        duplicate_constants, to_backend (default: bundled)\n"                                  \
    "  --portable, --backend none\n"                                                                                  \
    "                        no backend: every op a KernelCall of ExecuTorch's portable kernels\n"                 \
    "  --pipeline a,b,...    the passes and their order: to_edge, constant_prop, partition, fold_masks,\n"            \
    "                        duplicate_constants, to_backend, to_out_variant, memory_plan, emit\n"                    \
    "  --init-mutable-buffers\n"                                                                                      \
    "                        emit the initial data of mutated buffers (exir writes none unless asked)\n"            \
    "  --mutable-buffer-names\n"                                                                                      \
    "                        and their names (exir's emit_mutable_buffer_names)\n"            \
    "  --relower             a .pte: run the lowering pipeline on the method opened (without it, or\n"              \
    "                        --backend, --portable or --pipeline, a .pte is its own step 0, as it is)\n"      \
    "  --memory-planning greedy|naive\n"                                                                              \
    "                        memory_plan's algorithm, as exir's MemoryPlanningPass (default greedy)\n"               \
    "                        (all three also as --opt=value)\n"
#define CLI_LOAD_OPTIONS_HELP                                                                                          \
    "  --model NAME          which models/NAME.json of an archive holding several\n"                                  \
    "  --metadata-only       do not read weight data even when the file has it (fast on big archives)\n"      \
    CLI_PTE_OPTIONS_HELP
#define CLI_STEP_OPTION_HELP                                                                                           \
    "  --step S              a step number, a pass name (its last step) or pass:backend (partition:bundled)\n"

typedef struct cli_run {
    cli_args args; /* FILE, --json, --step S, --model, --metadata-only */
    ls_pipeline_opts opts;
    ls_program *loaded;
    ls_history h;
} cli_run;

/* Parses FILE [--backend ...] [--pipeline ...] [--model NAME] [--metadata-only] and, as accept
 * says (CLI_JSON, CLI_STEP), [--json] [--step S]; loads the file and runs the pipeline. Returns
 * LS_EXIT_OK, or the exit code after printing the error. */
int cli_run_pipeline(const char *cmd, const char *usage, int argc, char **argv, unsigned accept, cli_run *r);
/* The same, calling step_done(ctx, r, k) as each step k is complete (before the next is made):
 * a command that only streams step reports renders step k there and may release step k-1
 * (cli_release_step). */
int cli_run_pipeline_watched(const char *cmd, const char *usage, int argc, char **argv, unsigned accept, cli_run *r,
                             void (*step_done)(void *ctx, cli_run *r, uint32_t k), void *ctx);
/* Drops step k's program, and the command's own reference to the loaded program (the history
 * holds one), so what no later step shares goes back to malloc for the next pass. Only for a
 * command that reads no program but the latest step's once it is rendered (docs/design.md,
 * history ownership); step k keeps its report, changes and verifier result, program NULL. */
void cli_release_step(cli_run *r, uint32_t k);
/* Drops step k's changes and report once the command has rendered them: the pipeline reads
 * neither again (the next step is made from step k's program and verifier result), and what
 * the command prints at the end comes from the steps' errors and findings. At a million nodes
 * the changes of the steps before to_backend are 84 MB of its peak. */
void cli_release_rendered(cli_run *r, uint32_t k);
void cli_run_free(cli_run *r);
/* "lowerscope: FILE: step 0 load: the verifier rejects ...": why only step 0 exists (stderr). */
void cli_note_not_run(const ls_history *h);
/* When step s's pass failed: says so on stderr ("lowerscope: CMD: FILE: step 6 to_out_variant
 * failed: ...; what is shown is the program before it", as the step holds it) and returns the
 * exit code (3 when it failed for want of something lowerscope lacks, else 1); when no pass ran
 * (the verifier rejects the loaded program's structure) says why and returns 1; else 0. */
int cli_note_step_failed(const char *cmd, const ls_history *h, int s);
/* The exit code of a step whose pass failed: 3 when it stopped on a need, else 1. */
int cli_step_failure_exit(const ls_step *st);

/* A step by number ("3"), pass name ("to_backend": the last one), or name:detail
 * ("partition:bundled"); -1 (message printed) when there is none. */
int cli_find_step(const ls_history *h, const char *spec);
/* The same, its message naming the option the step came from ("--from 99: the pipeline has ..."). */
int cli_find_step_of(const ls_history *h, const char *option, const char *spec);
/* cli_run_pipeline, then the step --step names (the last one without it) in *step; on any
 * failure r is freed and the exit code returned. */
int cli_run_pipeline_at_step(const char *cmd, const char *usage, int argc, char **argv, unsigned accept, cli_run *r,
                             int *step);

/* {"name", "backend", "placeholders": [...], "nodes": [...]} (docs/cli.md) */
void cli_json_program(ls_buf *b, const ls_program *p, const char *name, const char *backend);
/* "step 3 to_backend (bundled)" */
void cli_step_title(ls_buf *b, const ls_history *h, int s);

#endif
