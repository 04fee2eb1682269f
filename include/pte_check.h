/* The checks ExecuTorch's runtime makes when it loads a program and each of its methods
 * (Program::load, Program::method_meta, validate_program, Method::init and parse_values, the
 * tensor parser, HierarchicalAllocator::get_offset_address, Method::resolve_operator), run on a
 * read .pte model, so that a file lowerscope writes, reads or runs is one the runtime loads.
 *
 * Every failure is reported (the runtime stops at the first), in the runtime's words, with the
 * place (method and value or instruction) and the rule's source (file and function in
 * pytorch/executorch) beside it. What a stock runtime lacks but another kernel library or
 * backend provides is a need, not a failure: "needs kernel cortex_m::pad.out from library
 * cortex_m", "needs backend BundledBackend". */
#ifndef LS_PTE_CHECK_H
#define LS_PTE_CHECK_H

#include <stdbool.h>
#include <stdint.h>

#include "common.h"
#include "pte.h"

typedef enum ls_pte_issue_kind {
    LS_PTE_FAILS = 0,     /* the runtime refuses the program or the method (or aborts running it) */
    LS_PTE_NEEDS_KERNEL,  /* an operator only a kernel library beyond portable/optimized registers */
    LS_PTE_NEEDS_BACKEND, /* a delegate whose backend a stock runtime does not register */
} ls_pte_issue_kind;

typedef struct ls_pte_issue {
    ls_pte_issue_kind kind;
    char *where;      /* "forward: values[3]", "program: constant_segment" (owned) */
    char *msg;        /* the runtime's words (owned) */
    const char *rule; /* the runtime source: "tensor_parser_exec_aten.cpp getMemPlannedPtr" (static) */
    const char *name; /* NEEDS_*: the kernel ("cortex_m::pad.out") or backend id (interned) */
    const char *library; /* NEEDS_KERNEL: the library that registers it (static) */
} ls_pte_issue;

typedef struct ls_pte_check_report {
    ls_pte_issue *v;     /* at most LS_PTE_CHECK_KEEP kept; the counts count them all */
    uint32_t n;
    uint32_t n_fails, n_needs;
    uint32_t methods, values, instructions, planned; /* what was checked */
} ls_pte_check_report;

#define LS_PTE_CHECK_KEEP 500

/* Runs every check on pte (read with ls_pte_read_file_unchecked, or built by emit). Returns
 * the number of failures (0: the runtime loads every method, given the kernels and backends
 * the report says it needs). */
uint32_t ls_pte_runtime_check(const ls_pte *pte, ls_pte_check_report *report);
void ls_pte_check_report_free(ls_pte_check_report *report);
/* One line per issue, "FILE: WHERE: error: MSG (RULE)", "FILE: WHERE: needs kernel ...", then
 * a summary line; the caller prints it. */
void ls_pte_check_report_text(const ls_pte_check_report *r, const char *file, ls_buf *out);
/* The same as JSON: {"loads": bool, "fails": N, "needs": N, "issues": [{kind, where, message,
 * rule, name, library}]}. */
void ls_pte_check_report_json(const ls_pte_check_report *r, ls_buf *out);

/* ---------------------------------------------------------------- what ExecuTorch registers */

/* The library registering kernel NAME (operator name, then "." and its overload when the
 * overload is not empty: "aten::add.out", "aten::copy_", "executorch_prim::et_view.default"),
 * as Method::resolve_operator looks it up; NULL when no library lowerscope knows does. The
 * list is data (src/formats/pte/et_kernels.def). */
const char *ls_et_kernel_library(const char *name);
/* True for the libraries a stock runtime build links (portable, optimized, the prim ops). */
bool ls_et_library_is_stock(const char *library);
/* True for a backend id ExecuTorch ships a runtime for ("XnnpackBackend", "QnnBackend", ...). */
bool ls_et_backend_is_stock(const char *backend_id);

#endif
