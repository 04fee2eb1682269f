/* Exporting a lowered program, and reading ExecuTorch programs back.
 *
 * A .pte is read (pte.h) and converted into a program (ls_program_from_pte) so that info, run
 * and the UI work on it like on any program: KernelCalls become call nodes of the functional op
 * (out args dropped, arguments in schema order), DelegateCalls become executorch_call_delegate
 * nodes with their lowered submodule (backend id, processed blob, compile specs), constants and
 * mutable tensors become placeholders with data shared with the file's segments.
 *
 * The to_executorch steps at the end of the pipeline (to_out_variant, memory_plan, emit) attach
 * their results to the program of their step (ls_program.exec); export writes the emitted
 * program of the step asked for, running those steps on it when it was not emitted yet. */
#ifndef LS_EXPORT_H
#define LS_EXPORT_H

#include <stdbool.h>
#include <stdint.h>

#include "common.h"
#include "history.h"
#include "passes.h"
#include "program.h"
#include "pte.h"

/* ---------------------------------------------------------------- .pte → program */

/* Converts one method of a read .pte ("forward" when method is NULL, else the first method with
 * instructions) into a program in the ExecuTorch dialect, holding the file as its origin
 * (pte_file.h). Takes all of *pte (left empty: freeing it is harmless). Unknown operators load
 * as unknown nodes (shown, never run); delegates whose blob no inspector reads as opaque calls
 * (no submodule program). `where` names the file in messages. */
int ls_program_from_pte(ls_pte *pte, const char *method, const char *where, ls_program **out, ls_error *err);
/* Reads PATH and converts one method (ls_pte_file_open, ls_pte_file_method): EXTERNAL tensors
 * take their bytes from the .ptd files given (data, n_data) or found beside it, else they are
 * left without data and the file says why when the runtime asks. */
int ls_load_pte(const char *path, const char *method, ls_program **out, ls_error *err);
int ls_load_pte_opts(const char *path, const char *method, const char *const *data, uint32_t n_data, ls_program **out,
                     ls_error *err);

/* ---------------------------------------------------------------- the to_executorch steps */

/* to_out_variant: every call whose op has an out variant takes it (target "...aten.add.out",
 * dialect ExecuTorch) with explicit out arguments pointing at new `alloc` nodes
 * (executorch.exir.memory.alloc, as ExecuTorch's ToOutVarPass makes them); a buffer the top level
 * mutates gets ExecuTorch's write-back, copy_(buffer, value), read by its BUFFER_MUTATION output. */
int ls_pass_to_out_variant(const ls_program *in, ls_program **out, ls_pass_ctx *ctx);
/* memory_plan: exir's MemoryPlanningPass, greedy (or naive: ctx->memory_planning), one arena
 * (memory_id 1), 16-byte aligned. The plan is attached to the step's program (ls_program_mem_plan). */
int ls_pass_memory_plan(const ls_program *in, ls_program **out, ls_pass_ctx *ctx);
/* emit: builds the ExecuTorch program (values, one chain of KernelCalls and DelegateCalls,
 * operators, delegates with their blobs in segments, constants in the constant segment),
 * attached to the step's program (ls_program_emitted). */
int ls_pass_emit(const ls_program *in, ls_program **out, ls_pass_ctx *ctx);

/* One planned tensor (exir's TensorSpec): the node whose value it is (a user input, a mutated
 * buffer, an alloc, a delegate call's output `index`, a call without out variant) and where it
 * lives. */
typedef struct ls_mem_slot {
    uint32_t node, index;
    uint32_t first, last; /* lifetime: node positions, inclusive (update_all_tensors_lifetime) */
    uint64_t offset;      /* in arena 1 */
    uint64_t nbytes;      /* at the upper bound of its sizes */
    uint64_t size;        /* nbytes aligned to 16 (allocated_memory) */
    uint32_t object;      /* the shared object it is in (greedy), its own index (naive) */
} ls_mem_slot;

typedef enum ls_mem_algo { LS_MEM_GREEDY = 0, LS_MEM_NAIVE = 1 } ls_mem_algo;

typedef struct ls_mem_plan {
    uint32_t refs;
    ls_mem_algo algo;
    ls_mem_slot *slots; /* in the order exir's collect_specs_from_nodes finds them */
    uint32_t n_slots, n_objects;
    /* node id → the slots of its values (through ls_mem_plan_slot) */
    uint32_t *slot_first, *slot_count, *slot_list;
    uint32_t n_ids;
    uint64_t arena;        /* bytes of arena 1, padding included */
    uint64_t padding;      /* the 64 bytes exir adds for an XNNPACK delegate, or 0 */
    uint64_t tensor_bytes; /* the sum of all planned tensors' sizes */
} ls_mem_plan;

/* The slot (index + 1) of value k of node id: a view's and an in-place call's are their base's,
 * an out-variant call's its out arguments'. 0 when not planned. */
uint32_t ls_mem_plan_slot(const ls_mem_plan *m, uint32_t node, uint32_t k);

/* What emit says about the program it built. */
typedef struct ls_emit_summary {
    uint64_t file_bytes;   /* the serialised .pte */
    uint32_t values, instructions, kernel_calls, delegate_calls, operators;
    uint32_t delegates, segments; /* segments holding bytes */
    uint32_t constants;
    uint32_t externals; /* tensors left in a .ptd, by key (EXTERNAL) */
    uint64_t constant_bytes;
    uint64_t arena, tensor_bytes;
    uint32_t planned_tensors;
    /* mutated buffers whose value in the program is not all zeros, emitted without it (exir
     * writes a mutated buffer's initial state only when asked: --init-mutable-buffers): the
     * runtime starts them as its planned memory is, so the file computes otherwise */
    uint32_t buffers_unwritten;
    const char *buffer_unwritten; /* the first one's target */
} ls_emit_summary;

/* The plan / the emitted program attached by memory_plan / emit (NULL when the step has none). */
const ls_mem_plan *ls_program_mem_plan(const ls_program *p);
const ls_pte *ls_program_emitted(const ls_program *p, ls_emit_summary *summary);

/* The maps ExecuTorch's emitter keeps for an ETRecord (src/export/debug_maps.c), for a program
 * that carries its instruction map (the emit step's, or a .pte's): debug_handle_map
 * {method: {instruction: handle | [handles]}} and delegate_map {method: {instruction:
 * {"name", "delegate_map"}}}, as JSON (malloc'd). */
int ls_debug_maps_json(const ls_program *p, const char *method, char **debug_handle_map, char **delegate_map,
                       ls_error *err);

/* ---------------------------------------------------------------- writing */

/* What an export wrote. */
typedef struct ls_export_segment {
    uint64_t bytes;
    const char *what; /* "constants", "mutable data", "delegate 0 (BundledBackend)" (interned) */
} ls_export_segment;

typedef struct ls_export_delegate {
    const char *backend_id; /* interned */
    uint32_t segment;
    uint64_t bytes;
} ls_export_delegate;

/* A kernel library or backend the written .pte needs (the runtime's load checks, pte_check.h). */
typedef struct ls_export_need {
    bool backend;        /* a backend, else a kernel */
    const char *name;    /* "BundledBackend", "cortex_m::pad.out" (interned) */
    const char *library; /* a kernel's library; for a backend "ExecuTorch" when ExecuTorch ships it, else NULL */
    bool stock;          /* a stock ExecuTorch runtime has it (portable kernels) or ExecuTorch ships it */
    bool stand_in;       /* a backend ExecuTorch ships, but the blob is the bundled delegate's standing in */
} ls_export_need;

typedef struct ls_export_summary {
    const char *path;   /* interned */
    bool pt2;           /* a .pt2 archive, else a .pte */
    int step;           /* the history step exported (-1: a program given directly) */
    const char *pass;   /* its pass ("emit", "to_backend", ...), or NULL */
    uint64_t bytes;     /* the file's size */
    bool ran_to_executorch; /* .pte of a step before emit: to_out_variant, memory_plan and emit ran for it */
    bool ran_to_edge;       /* and to_edge before them (an ATen program: to_executorch takes Edge ones) */
    const char *as_read;    /* a .pte's program as read, the file written back as it was: its methods ("kv_forward, prefill_forward and 27 constant methods"), else NULL */
    const char *kept;       /* a re-lowered method of a .pte: the file's other methods, kept as read ("prefill_forward and 27 constant methods"), else NULL */
    const char *method;     /* .pte: the execution plan described ("forward", "kv_forward") */
    uint32_t external_tensors; /* .pte: tensors it keeps outside by key (EXTERNAL), in every method */
    uint32_t external_keys;    /* .pte: named data its delegates read from a .ptd */
    const char *data_files;    /* the .ptd files that hold them, as the program was opened with ("et_android_xor.ptd"), else NULL */
    ls_emit_summary emit;   /* .pte: values, instructions, arena, ... */
    ls_export_segment *segments; /* .pte: every segment, in file order */
    uint32_t n_segments;
    ls_export_delegate *delegates;
    uint32_t n_delegates;
    ls_export_need *needs; /* .pte: the backends and non-portable kernels it needs */
    uint32_t n_needs;
} ls_export_summary;

void ls_export_summary_free(ls_export_summary *s);
/* The lines `lowerscope export` prints (and the UI shows):
 *   wrote out.pte: 5.9 KiB ExecuTorch program (step 9 emit)
 *   ... */
void ls_export_summary_text(const ls_export_summary *s, ls_buf *out);

/* How the to_executorch steps an export runs itself (for a step before emit) are set, as the
 * pipeline's options set them: exir's MemoryPlanningPass algorithm, et_init_buffer on every
 * mutated buffer, emit_mutable_buffer_names. */
typedef struct ls_export_opts {
    bool force;                /* replace PATH when it exists */
    uint8_t memory_planning;   /* 0 greedy, 1 naive */
    bool init_mutable_buffers; /* the initial data of mutated buffers in the file */
    bool mutable_buffer_names; /* their FQNs in the file */
} ls_export_opts;

/* Writes program p to PATH: a .pt2 archive when PATH ends in .pt2, else a .pte (the emitted
 * program p carries, or p run through to_out_variant, memory_plan and emit first) once it
 * passes the checks ExecuTorch's runtime makes when it loads it (pte_check.h; a program they
 * refuse is not written); what it needs from the runtime is in the summary. Writes a
 * temporary file and renames it; refuses to replace an existing file unless force. sum may be
 * NULL (else the caller frees it with ls_export_summary_free). */
int ls_export_program(const ls_program *p, const char *path, bool force, ls_export_summary *sum, ls_error *err);
/* The same for step `step` of a history (-1: the last step). A step whose pass failed is refused. */
int ls_export(const ls_history *h, int step, const char *path, bool force, ls_export_summary *sum, ls_error *err);
/* ls_export_program and ls_export with every option (NULL: the defaults). */
int ls_export_program_with(const ls_program *p, const char *path, const ls_export_opts *o, ls_export_summary *sum,
                           ls_error *err);
int ls_export_with(const ls_history *h, int step, const char *path, const ls_export_opts *o, ls_export_summary *sum,
                   ls_error *err);

/* A .pt2 archive of the program as torch.export.save writes it (src/formats/pt2/pt2_write.c), through a
 * temporary file and a rename. Refuses programs torch.export's JSON cannot express: lowered
 * submodules (after to_backend) and the ExecuTorch dialect (after to_out_variant). *written
 * (may be NULL) receives the archive's size. */
int ls_write_pt2(const ls_program *p, const char *path, uint64_t *written, ls_error *err);
/* The archive's bytes (malloc'd) without writing them: the root folder is named after path. */
int ls_pt2_bytes(const ls_program *p, const char *path, uint8_t **bytes, size_t *size, ls_error *err);
/* The exported-program JSON of p as ExecuTorch's exir/serde serializer writes it (an
 * ETRecord's programs): lowered modules inline, as the first input of their
 * executorch_call_delegate, a JSON string of the LoweredBackendModule (backend_id,
 * processed_bytes and compile spec values base64, original_module, an empty
 * original_state_dict), the delegate's other inputs named delegate_arg_<i>. NULL with err for
 * the ExecuTorch dialect. */
char *ls_program_json_exir(const ls_program *p, ls_error *err);
/* 0 when torch.export's JSON can hold the program; else -1 and why (no file named). */
int ls_pt2_expressible(const ls_program *p, ls_error *err);

#endif
