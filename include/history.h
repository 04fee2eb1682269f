/* The lowering history: the loaded program, then one step per pass, each keeping its program
 * (sharing unchanged nodes and tensors with the step before), what it changed (node ids stable
 * across steps), one sentence per change and the verifier's findings. Everything the UI and the
 * passes/diff/partitions commands show comes from here. */
#ifndef LS_HISTORY_H
#define LS_HISTORY_H

#include <stdint.h>

#include "program.h"
#include "verify.h"

typedef enum ls_change_kind { LS_CHANGE_ADDED, LS_CHANGE_REMOVED, LS_CHANGE_CHANGED } ls_change_kind;

typedef struct ls_change { /* 24 bytes: a step of a large program records hundreds of thousands */
    const char *program; /* NULL: top level; else the submodule name ("lowered_module_0") */
    const char *node;    /* node name (interned) */
    uint32_t node_id;    /* id in that program (in the step before for REMOVED) */
    uint8_t kind;        /* ls_change_kind */
} ls_change;

/* One sentence of a step's report, e.g. "`c` is read by tag0 (add, mul) and by the CPU (sin):
 * the CPU keeps `c`, tag0 gets `c_copy_0`". It names at most one node, which the UI can jump to. */
typedef struct ls_sentence {
    char *text;          /* owned */
    const char *program; /* where the named node lives (NULL: top level) */
    const char *node;    /* the node it names, or NULL */
} ls_sentence;

typedef struct ls_report {
    ls_sentence *v;
    uint32_t n;
} ls_report;

void ls_report_add(ls_report *r, const char *program, const char *node, const char *fmt, ...) LS_PRINTF(4, 5);
void ls_report_free(ls_report *r);

typedef struct ls_step {
    const char *pass;    /* "load", "to_edge", "constant_prop", "partition", ... (interned) */
    const char *detail;  /* e.g. the backend of a partition round, or NULL */
    ls_program *program; /* the program after this step */
    ls_report report;
    ls_change *changes;  /* against the step before (all programs); empty for the first step */
    uint32_t n_changes;
    ls_verify_result verify;
    char *error;         /* the pass failed: its message; program is the step before's */
    uint8_t error_kind;  /* LS_ERR_NEEDS: it failed on what lowerscope lacks (a kernel, an out variant) */
    double seconds;
} ls_step;

/* While ls_pipeline_run fills a history on another thread (the UI's), steps[0..n) are complete
 * and never change again: read n with an acquire load (ls_history_ready). The array is sized for
 * the whole plan before the first step, and every planned step has its pass and detail from the
 * start, so a reader can name the steps still to come. */
typedef struct ls_history {
    const char *path; /* the file loaded */
    ls_step *steps;
    uint32_t n;         /* complete steps */
    uint32_t n_planned; /* steps the pipeline means to make (n once it has stopped) */
    bool done;          /* the pipeline has stopped (all planned steps made, or one failed) */
    /* Why no pass ran (interned: "the verifier rejects the program's structure (1 error)"), or
     * NULL: the loaded program has structural verifier errors (ls_finding.structural). */
    const char *not_run;
    bool as_held; /* a .pte as the file holds it: its one step, step 0, by design (not a failure) */
} ls_history;

/* How many steps are complete, and whether the pipeline has stopped, as another thread sees it
 * (a history built by hand, with steps but no plan, is complete). */
static inline uint32_t ls_history_ready(const ls_history *h, bool *done)
{
    bool d = __atomic_load_n(&h->done, __ATOMIC_ACQUIRE);
    uint32_t n = __atomic_load_n(&h->n, __ATOMIC_ACQUIRE);
    if (done) *done = d || (n && __atomic_load_n(&h->n_planned, __ATOMIC_RELAXED) == 0);
    return n;
}

void ls_history_free(ls_history *h);
/* The step a user names: a number, a pass ("partition": its last step) or pass:backend
 * ("partition:bundled"). -1 with a message when there is no such step. The CLI's --step and
 * the UI's --step and :step all go through it. */
int ls_history_find_step(const ls_history *h, const char *spec, ls_error *err);
/* The step of `other` (the same program lowered another way) that stands where step s stands in
 * h: the step of the same pass in the same round (the k-th partition beside the k-th: each
 * backend set is a round of partition, fold_masks, duplicate_constants, to_backend), else the
 * last of that pass when other has fewer rounds, else other's last step. The UI's `:compare
 * backend` and `lowerscope diff --with-backend` put that step beside s. */
uint32_t ls_history_same_pass_step(const ls_history *h, uint32_t s, const ls_history *other);
/* Computes what changed from a to b (both programs and their submodules, matched by name),
 * as used for ls_step.changes. */
void ls_diff_programs(const ls_program *a, const ls_program *b, ls_change **changes, uint32_t *n);

#endif
