/* The state of pte_load.c while it turns one method of a .pte into a program, shared with
 * pte_load_calls.c, which reads its instructions' arguments, kernel calls and delegate calls.
 * Private to src/formats/pte/. */
#ifndef LS_PTE_LOADER_H
#define LS_PTE_LOADER_H

#include "common.h"
#include "namer.h"
#include "program.h"
#include "pte.h"
#include "pte_file.h"
#include "pte_internal.h"

enum { R_NONE, R_INPUT, R_CONST, R_STATE };

typedef struct lsp_loader {
    const char *where;
    ls_pte_file *file;
    const ls_pte *pte;
    const ls_pte_plan *plan;
    const char *method; /* interned */
    ls_program *p;
    ls_namer *names;
    uint32_t nvals;
    uint32_t *node_of; /* per value: the node id that stands for it (0: none yet) */
    uint8_t *role;
    LS_VEC(ls_node *) ph;     /* constant and buffer placeholders */
    LS_VEC(ls_input_spec) ph_specs;
    LS_VEC(ls_node *) user;   /* user-input placeholders, plan order */
    LS_VEC(ls_input_spec) user_specs;
    LS_VEC(ls_node *) body;
    LS_VEC(uint32_t) mut_node; /* buffer write-backs: the value written ... */
    LS_VEC(const char *) mut_target; /* ... into this buffer */
    LS_VEC(int32_t) mut_buf, mut_ret; /* ... whose value is this, and the copy_'s return value */
    uint32_t *sub_attr; /* per delegate: its get_attr node id (0: none yet) */
    uint32_t n_unknown;
    lsp_places *places; /* built on the first value no instruction writes */
    uint32_t call_node; /* the call node the instruction being read became (0: none) */
    bool missing_data;
    ls_error *err;
} lsp_loader;

/* pte_load.c: "FILE: METHOD: msg" into L->err; returns -1 */
int lsp_lfail(lsp_loader *L, const char *fmt, ...) LS_PRINTF(2, 3);
const ls_pte_value *lsp_val(const lsp_loader *L, int64_t i); /* value i, or NULL out of range */
bool lsp_is_tensor(const lsp_loader *L, int64_t i);
int lsp_tensor_meta(lsp_loader *L, const ls_pte_tensor *t, ls_tmeta *m);
/* The node standing for tensor value i (a placeholder made for it if nothing defined it yet). */
int lsp_read_tensor(lsp_loader *L, int64_t i, uint32_t *id);
/* Value i as a view exir elided (pte_views.c) of a tensor written before, made a memory.view
 * node standing for it; false when it is none. */
bool lsp_elided_view(lsp_loader *L, uint32_t i);

/* pte_load_calls.c: value vi as the argument of schema parameter prm (NULL: untyped) */
int lsp_arg_of(lsp_loader *L, const ls_param *prm, int32_t vi, ls_arg *a);
void lsp_free_args(ls_arg *args, uint32_t n);
/* Instruction `at` as a call node (a KernelCall, or a DelegateCall of a lowered module). */
int lsp_kernel_call(lsp_loader *L, uint32_t at, const ls_pte_instruction *in);
int lsp_delegate_call(lsp_loader *L, uint32_t at, const ls_pte_instruction *in);

#endif
