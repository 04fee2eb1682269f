/* ExecuTorch's bundled programs (.bpte): a .pte with test cases for its methods, each case
 * the inputs to give and the outputs to expect (devtools/bundled_program/schema/
 * bundled_program_schema.fbs, identifier "BP08"; layout in shared/reference/pte-layout.md §4).
 *
 * The program is read as any .pte (reader.h opens a .bpte as its embedded program); running
 * the cases is bpte_run.h. The comparison follows the runtime's verify_method_outputs
 * (devtools/bundled_program/bundled_program.cpp): ls_bp_tensors_close. */
#ifndef LS_BPTE_H
#define LS_BPTE_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#include "common.h"
#include "tensor.h"

/* ValueUnion tags */
enum { LS_BP_NONE = 0, LS_BP_TENSOR = 1, LS_BP_INT = 2, LS_BP_BOOL = 3, LS_BP_DOUBLE = 4 };
const char *ls_bp_kind_name(int kind); /* "Tensor", "Int", ...; "?" when unknown */

typedef struct ls_bp_value {
    uint8_t kind;       /* LS_BP_*: the union tag as stored (unknown tags are kept) */
    bool has_val;       /* the union's table is there */
    int64_t int_val;
    bool bool_val;
    double double_val;
    /* TENSOR */
    int8_t scalar_type; /* ExecuTorch ScalarType */
    int32_t *sizes;
    uint32_t ndim;
    uint8_t *data;
    uint32_t nbytes;
    bool has_data;
    uint8_t *dim_order;
    uint32_t n_dim_order;
} ls_bp_value;

typedef struct ls_bp_case {
    ls_bp_value *inputs;
    uint32_t n_inputs;
    ls_bp_value *expected; /* expected_outputs */
    uint32_t n_expected;
} ls_bp_case;

typedef struct ls_bp_suite {
    const char *method_name; /* interned; NULL when absent */
    ls_bp_case *cases;
    uint32_t n_cases;
} ls_bp_suite;

typedef struct ls_bpte {
    const char *name; /* the file, for messages (interned) */
    uint32_t version;
    ls_bp_suite *suites;
    uint32_t n_suites;
    uint8_t *program; /* the embedded .pte (owned copy) */
    size_t program_size;
} ls_bpte;

/* Whether the file at PATH is a bundled program ("BP08" at byte 4, where flatbuffers keep
 * their identifier: bundled_program.cpp's is_bundled_program). */
bool ls_bpte_is_file(const char *path);

/* Reads and verifies a bundled program (every offset checked; errors name the file, the field
 * path and the byte). On failure *out is empty. The fuzz harness's entry point. */
int ls_bpte_read(const uint8_t *data, size_t size, const char *name, ls_bpte *out, ls_error *err);
int ls_bpte_read_file(const char *path, ls_bpte *out, ls_error *err);
void ls_bpte_free(ls_bpte *b);
/* Serialises it as ExecuTorch's serializer lays it out: tensor data 16-byte and the program
 * 32-byte aligned (the schema's force_align). The tests build their files with it. */
int ls_bpte_write(const ls_bpte *b, uint8_t **bytes, size_t *size, ls_error *err);

/* The embedded .pte's method (NULL: "forward", else the first with instructions) as a program. */
struct ls_program;
int ls_bpte_program(const ls_bpte *b, const char *method, struct ls_program **out, ls_error *err);

/* A bundled tensor as a contiguous tensor, checked as the runtime's impl_like checks it: known
 * scalar type, sizes >= 0, at most LS_MAX_DIMS dims, data present and at least numel x element
 * size bytes; a dim_order other than 0..n-1 says how the bytes are laid out. `where` prefixes
 * messages ("x.bpte: forward case 0 input 1"). */
int ls_bp_value_tensor(const ls_bp_value *v, const char *where, ls_tensor **out, ls_error *err);

/* verify_method_outputs' defaults (bundled_program.h) */
#define LS_BP_RTOL 1e-5
#define LS_BP_ATOL 1e-8

/* ExecuTorch's tensors_are_close (bundled_program.cpp): the same scalar type and sizes, then
 * float, double and half element by element with elem_is_close (NaN equals NaN, infinities of
 * the same sign are equal, rtol = atol = 0 is exact, else |e - a| <= atol + |rtol * a| with a the
 * method's output), every other type byte for byte. On a mismatch `why` says where (may be
 * NULL); *worst (may be NULL) receives the first mismatching element or -1. */
bool ls_bp_tensors_close(const ls_tensor *expected, const ls_tensor *actual, double rtol, double atol, char *why,
                         size_t cap, int64_t *worst);

#endif
