/* Two programs side by side, node by node: which node of one is which node of the other, and
 * whether it differs. The UI's compare screen (`:compare STEP|FILE`: two steps, two backends,
 * two files) and its selection kept in sync read it.
 *
 * Two steps of one history match by node id (ids are stable from step to step). Two files
 * (a .pt2 and the .pte exported from it) share no ids, so they match by identity: a user input
 * by its place among the user inputs, a parameter, buffer or constant by its target, any other
 * node by its name, and what is left by its op and how many of that op came before it (the
 * third atan2 with the third atan2); a memory.alloc node, which only the ExecuTorch dialect
 * has, pairs with the alloc in the same out argument of its call's match. A matched pair
 * differs when its kind, tag, op, attribute, lowered module's backend, value's dtype and shape
 * or arguments differ (an argument naming a node is the same when it names the matched node;
 * out arguments are left out, so a call matches its functional twin in a .pte, but within one
 * lineage a call that became its out variant differs); the row says which (ls_align_why), so
 * the compare screen and its CLI twin say why without testing again. O(n) with hashes. */
#ifndef LS_ALIGN_H
#define LS_ALIGN_H

#include <stdbool.h>
#include <stdint.h>

#include "program.h"
#include "ptrmap.h"

typedef enum ls_align_mark {
    LS_ALIGN_SAME,    /* on both sides, alike */
    LS_ALIGN_CHANGED, /* on both sides, different */
    LS_ALIGN_ONLY_A,  /* only in the first program */
    LS_ALIGN_ONLY_B,  /* only in the second */
} ls_align_mark;

/* Why a pair on both sides differs: the first rule it breaks, in the order they are tested. */
typedef enum ls_align_why {
    LS_ALIGN_WHY_NONE,        /* the same, or not a pair */
    LS_ALIGN_WHY_KIND,        /* placeholder, call, get_attr, output */
    LS_ALIGN_WHY_TAG,         /* its delegation tag */
    LS_ALIGN_WHY_OP,          /* a call's op (or, without one, its target) */
    LS_ALIGN_WHY_TARGET,      /* a get_attr's attribute */
    LS_ALIGN_WHY_BACKEND,     /* a lowered module's backend_id */
    LS_ALIGN_WHY_META,        /* its value's dtype and shape */
    LS_ALIGN_WHY_OUT_VARIANT, /* within one lineage: a call made its out variant on one side */
    LS_ALIGN_WHY_ARGS,        /* its arguments */
} ls_align_why;

typedef struct ls_align_row {
    int32_t a, b; /* node positions, -1 on the side it is missing from */
    uint8_t mark; /* ls_align_mark */
    uint8_t why;  /* ls_align_why, for LS_ALIGN_CHANGED */
} ls_align_row;

typedef enum ls_align_by { LS_ALIGN_BY_ID, LS_ALIGN_BY_IDENTITY } ls_align_by;

typedef struct ls_alignment {
    ls_align_row *v; /* in the first program's order; a node only in the second follows the row of
                        the matched node before it in the second program */
    uint32_t n;
    uint32_t *row_of_a, *row_of_b; /* per node position: its row */
    uint32_t same, changed, only_a, only_b;
} ls_alignment;

void ls_align_programs(const ls_program *a, const ls_program *b, ls_align_by by, ls_alignment *out);
void ls_alignment_free(ls_alignment *al);

/* Within one lineage (two steps, or one loaded program lowered for two backend sets) the
 * alignment is of the top levels, and a node only on one side may be inside a lowered module on
 * the other: m maps the node ids inside p's lowered modules to the module's name, and
 * ls_align_sub_holding says which module holds id (NULL: none). The compare screen and
 * `lowerscope diff --with-backend` say it ("inside lowered_module_0"). */
void ls_align_index_subs(const ls_program *p, ls_ptrmap *m);
const char *ls_align_sub_holding(const ls_ptrmap *m, uint32_t id);

#endif
