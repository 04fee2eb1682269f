/* Who holds a constant at a step: every data input of a program and its lowered modules, by
 * target and by the bytes it holds (duplicate_constants' copies share the original's storage
 * whatever their target is called). Built once per step; the UI's node pane and
 * `lowerscope node` ask it the same question. */
#ifndef LS_HELD_BY_H
#define LS_HELD_BY_H

#include <stdint.h>

#include "program.h"
#include "ptrmap.h"

typedef struct ls_holder {
    int32_t sub;    /* -1: the top level; else the lowered module's index in the top program */
    uint32_t input; /* the input spec's index in that program */
    uint32_t next_target, next_data; /* the next entry + 1 with the same target / bytes, 0: none */
} ls_holder;

typedef struct ls_held_index {
    const ls_program *top;
    ls_holder *v; /* the top level's data inputs, then each lowered module's, in order */
    uint32_t n;
    ls_ptrmap by_target, by_data; /* target / data pointer → first entry + 1 */
} ls_held_index;

/* O(inputs) over top and its lowered modules; top must outlive the index. */
void ls_held_index_build(ls_held_index *ix, const ls_program *top);
void ls_held_index_free(ls_held_index *ix);

/* The entries holding `spec`'s target or the same bytes as it holds in `own` (a program of the
 * index: the top level or one of its lowered modules), each once, in the order of the programs.
 * Returns how many; *out (free it) gets their indexes into ix->v. Equal contents are not enough
 * (every empty KV cache is zeros): the same storage is. */
uint32_t ls_held_by(const ls_held_index *ix, const ls_program *own, const ls_input_spec *spec, uint32_t **out);

/* An entry's program and its name (NULL: the top level). */
const ls_program *ls_holder_program(const ls_held_index *ix, const ls_holder *e);
const char *ls_holder_sub_name(const ls_held_index *ix, const ls_holder *e);

#endif
