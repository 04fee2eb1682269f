/* ExecuTorch's ETDump (.etdp): what the runtime's ETDumpGen recorded while a program ran, and
 * its events mapped back to the program's instructions and nodes.
 *
 * The file is a size-prefixed flatbuffer with identifier "ED00" (schema
 * devtools/etdump/etdump_schema_flatcc.fbs, written by flatcc in etdump_flatcc.cpp): run_data,
 * one RunData per event block ("Execute" for each Method::execute), each with its events. A
 * ProfileEvent names an instruction by (chain_index, instruction_id): Method::execute sets them
 * around every instruction (runtime/executor/method.cpp) and the instruction's event is named
 * "OPERATOR_CALL" (KernelCall) or "DELEGATE_CALL"; a delegate's own events carry a
 * delegate_debug_id (int or string) as well. Framework events ("Method::execute",
 * "Program::load_method", "Method::init") have no instruction. Times are ticks (nanoseconds with
 * the default clock), as the Inspector assumes. */
#ifndef LS_ETDUMP_H
#define LS_ETDUMP_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#include "common.h"
#include "node_stats.h"
#include "program.h"
#include "ptrmap.h"

/* ValueType of a DebugEvent's entry */
enum { LS_ETD_NULL = 0, LS_ETD_INT, LS_ETD_BOOL, LS_ETD_FLOAT, LS_ETD_DOUBLE, LS_ETD_TENSOR, LS_ETD_TENSOR_LIST, LS_ETD_STRING };

typedef struct ls_etd_tensor {
    int8_t scalar_type; /* ExecuTorch ScalarType */
    int64_t *sizes, *strides;
    uint32_t ndim, nstrides;
    int64_t offset;     /* in the debug buffer, which is a separate file */
} ls_etd_tensor;

typedef struct ls_etd_value {
    int8_t type;          /* LS_ETD_* */
    bool output;          /* a program output (Value.output) */
    ls_etd_tensor tensor; /* TENSOR */
    ls_etd_tensor *tensors; /* TENSOR_LIST */
    uint32_t n_tensors;
    int64_t int_val;
    bool bool_val;
    double float_val; /* FLOAT and DOUBLE */
} ls_etd_value;

typedef enum ls_etd_kind { LS_ETD_PROFILE = 1, LS_ETD_ALLOCATION, LS_ETD_DEBUG } ls_etd_kind;

typedef struct ls_etd_event {
    uint8_t kind;                  /* ls_etd_kind */
    const char *name;              /* interned; NULL when absent */
    int64_t chain_index;
    int32_t instruction_id;        /* -1: none */
    int32_t delegate_debug_id_int; /* -1: none */
    const char *delegate_debug_id_str; /* interned; NULL when absent */
    uint8_t *metadata;             /* delegate_debug_metadata */
    uint32_t n_metadata;
    uint64_t start_time, end_time; /* PROFILE */
    int32_t allocator_id;          /* ALLOCATION */
    uint64_t allocation_size;
    bool has_debug_entry;          /* DEBUG */
    ls_etd_value debug_entry;
} ls_etd_event;

typedef struct ls_etd_run {
    const char *name;         /* interned ("Execute") */
    int32_t bundled_input_index; /* -1: not run on a bundled input */
    const char **allocators;  /* interned names */
    uint32_t n_allocators;
    ls_etd_event *events;
    uint32_t n_events;
} ls_etd_run;

typedef struct ls_etdump {
    const char *name; /* the file, for messages */
    uint32_t version;
    ls_etd_run *runs;
    uint32_t n_runs;
} ls_etdump;

/* Reads and verifies an ETDump: every offset and length is checked before it is followed, and
 * an error names the file, the place (run_data[0].events[3].profile_event) and the byte. On
 * failure *out is left empty (nothing to free). The fuzz harness's entry point. */
int ls_etdump_read(const uint8_t *data, size_t size, const char *name, ls_etdump *out, ls_error *err);
int ls_etdump_read_file(const char *path, ls_etdump *out, ls_error *err);
void ls_etdump_free(ls_etdump *d);
/* Writes the ETDump as flatcc lays it out (size-prefixed, "ED00"); the tests build their files
 * with it. */
int ls_etdump_write(const ls_etdump *d, uint8_t **bytes, size_t *size, ls_error *err);

/* Elapsed ticks of a profile event, as the Inspector's _calculate_elapsed_time: end - start,
 * or a 32-bit clock's wrap-around when start > end (both must fit 32 bits; else -1). */
int64_t ls_etd_elapsed(const ls_etd_event *e);

/* ---------------------------------------------------------------- mapping events to nodes */

/* How one profile event was placed. */
typedef enum ls_etd_match {
    LS_ETD_MATCHED = 0,    /* an instruction and its node (for a delegate's own event: a node inside) */
    LS_ETD_FRAMEWORK,      /* Method::execute and the like: no instruction, by design */
    LS_ETD_IN_DELEGATE,    /* a delegate's own event whose node inside is not known: given to the delegate call */
    LS_ETD_NO_INSTRUCTION, /* no instruction with that (chain, id) in the program */
    LS_ETD_NO_NODE,        /* the instruction became no node (a move, a free, a buffer write-back) */
    LS_ETD_NO_HANDLE,      /* (ETRecord) the debug handles of the instruction name no node */
} ls_etd_match;
const char *ls_etd_match_text(ls_etd_match m); /* "matched", "framework", ... */

typedef struct ls_etd_mapped {
    uint32_t run, event;    /* where it is in the dump */
    uint8_t match;          /* ls_etd_match */
    int32_t instruction;    /* the flat instruction index over the method's chains, -1 none */
    const char *program;    /* NULL: the top level; else the lowered submodule holding `node` */
    uint32_t node;          /* node id (0: none) */
    const char *delegate;   /* the delegate call's submodule, for a delegate's own events */
    double seconds;         /* its time */
} ls_etd_mapped;

/* Where instructions and debug handles lead in the program that ran. */
typedef struct ls_etd_index ls_etd_index;

/* For a program read from a .pte: its instruction map (program.h, ls_instr_map). */
ls_etd_index *ls_etd_index_for_program(const ls_program *p);
/* For an ETRecord's program: instruction id → debug handles (debug_handle_map of the method)
 * and, for delegates, the delegate's map (delegate id → handles), both as JSON text (NULL: none),
 * looked up in `p` and its submodules by the nodes' debug handles. */
ls_etd_index *ls_etd_index_for_handles(const ls_program *p, const char *method, const char *debug_handle_map_json,
                                       const char *delegate_map_json, ls_error *err);
void ls_etd_index_free(ls_etd_index *x);

typedef struct ls_etd_profile {
    ls_etd_mapped *events; /* every profile event of every run, in file order */
    uint32_t n_events;
    uint32_t n_matched, n_framework, n_in_delegate, n_unmatched;
    uint32_t runs;          /* runs with profile events */
    double execute_seconds; /* the Method::execute events' time (0: none) */
    ls_node_stats stats;    /* the top level, per node: its events' time (a delegate call: the delegate's) */
    ls_node_stats *subs;    /* per lowered submodule with a program: what the delegate said of its nodes */
    const char **sub_names; /* their submodule names (interned) */
    uint32_t n_subs;
    ls_ptrmap sub_index;    /* submodule name → index in subs */
} ls_etd_profile;

/* Maps every profile event of d onto p's nodes through x (allocation and debug events are not
 * timed). ticks_per_second converts the events' ticks (1e9: nanoseconds, the runtime's default
 * clock and the Inspector's default source time scale). */
void ls_etd_profile_build(const ls_etdump *d, const ls_program *p, const ls_etd_index *x, double ticks_per_second,
                          ls_etd_profile *out);
/* The stats of submodule `name` (interned), NULL when the profile has none for it. */
const ls_node_stats *ls_etd_profile_sub(const ls_etd_profile *pr, const char *name);
void ls_etd_profile_free(ls_etd_profile *pr);

#endif
