/* What the two halves of the runtime's load checks share (pte_check.c: the program and the
 * values; pte_check_code.c: instructions, operators, delegates, the report). */
#ifndef LS_PTE_CHECK_INTERNAL_H
#define LS_PTE_CHECK_INTERNAL_H

#include "pte_check.h"

typedef struct lspc {
    const ls_pte *p;
    ls_pte_check_report *r;
    const ls_pte_plan *plan; /* the method being checked, NULL for the program */
    uint32_t plan_index;
    const char *plan_name;
} lspc;

/* Adds an issue at `where` (inside the current method, if any). */
void lspc_issue(lspc *C, ls_pte_issue_kind kind, const char *rule, const char *name, const char *library,
                const char *where, const char *fmt, ...) LS_PRINTF(7, 8);
#define lspc_fail(C, rule, where, ...) lspc_issue(C, LS_PTE_FAILS, rule, NULL, NULL, where, __VA_ARGS__)

const char *lspc_kind_name(int kind);
/* The method's chains, operators and delegates (Method::init, resolve_operator, execute). */
void lspc_check_code(lspc *C, const ls_pte_plan *pl);

#endif
