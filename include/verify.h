/* The verifier: the checks torch.export's signature verifier makes (ExecuTorch's wording where
 * it has one), plus the ones unlifting and the dialect checker would fail on later: a constant or
 * buffer target listed twice in one program, an op of the other dialect. Runs on a program and
 * each of its lowered submodules. */
#ifndef LS_VERIFY_H
#define LS_VERIFY_H

#include <stdint.h>

#include "program.h"

typedef enum ls_severity { LS_SEV_ERROR, LS_SEV_WARNING } ls_severity;

typedef struct ls_finding {
    uint8_t severity;
    const char *program; /* NULL for the top level, else the submodule name */
    const char *node;    /* the node it is about (interned) or NULL */
    char *msg;           /* owned */
    /* An error that leaves the program malformed (a dangling reference, a signature that does
     * not match the graph, a spec without a target...): no pass runs on such a program. The
     * others (an op of the other dialect, a target listed twice) are problems ExecuTorch meets
     * in a later step, and the pipeline runs to show where. */
    bool structural;
} ls_finding;

typedef struct ls_verify_result {
    ls_finding *v;
    uint32_t n;
    uint32_t n_errors;
    uint32_t n_structural; /* errors with `structural` set */
} ls_verify_result;

void ls_verify(const ls_program *p, ls_verify_result *out);
/* The same findings as ls_verify(p), for a program that shares lowered submodules with `prev`
 * (the step before in a history, whose findings are prev_result): a submodule prev holds under
 * the same name, as the same program, keeps its findings instead of being checked again, so a
 * step costs its top level and the submodules it made. prev may be NULL. */
void ls_verify_next(const ls_program *p, const ls_program *prev, const ls_verify_result *prev_result,
                    ls_verify_result *out);
void ls_verify_result_free(ls_verify_result *r);

#endif
