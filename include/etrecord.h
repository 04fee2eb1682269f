/* ExecuTorch's ETRecord: the "debug symbols" of a lowering, a zip that generate_etrecord
 * writes (devtools/etrecord/_etrecord.py, ETRecordReservedFileNames):
 *   ETRECORD_V0                       empty: the marker
 *   exported_program                  torch.export's program (ATen), optional
 *   edge_dialect_exported_program     the Edge program as given (after to_backend: its lowered
 *                                     modules inline, as exir/serde writes them); older writers
 *                                     add "/<method>"
 *   et_dialect_graph_module/<method>  the ExecuTorch dialect program (older writers only)
 *   <module>/<method>                 extra recorded programs (graph_map)
 *   <each program>_state_dict, _constants, _example_inputs   torch.save pickles (not read)
 *   debug_handle_map                  JSON {method: {instruction id: handle or [handles]}}
 *   delegate_map                      JSON {method: {instruction id: {"name": backend,
 *                                     "delegate_map": {delegate debug id: [handles]}}}}
 *   export_graph_id, reference_outputs, representative_inputs
 * Every program is exported-program JSON (ExportedProgramSerializer), read as a .pt2's model.
 * reader.h opens an ETRecord as its last program with the others as the steps before it
 * (program.h, ls_recorded). */
#ifndef LS_ETRECORD_H
#define LS_ETRECORD_H

#include <stdbool.h>
#include <stdint.h>

#include "common.h"
#include "etdump.h"
#include "program.h"

/* An ETRecord held in memory (the fuzz harness's entry point; reader.h's ls_load opens one from
 * a file): its last program, with the others recorded before it. */
int ls_etrecord_read(const uint8_t *data, size_t size, const char *name, ls_program **out, ls_error *err);

/* The program of the recorded step whose nodes carry the maps' debug handles (the Edge
 * program), or NULL when `loaded` has no recorded maps. */
const ls_program *ls_recorded_handles_program(const ls_program *loaded);

/* An ETDump index for what was loaded: the ETRecord's maps over its Edge program, or a .pte's
 * own instruction map. *mapped is the program the events land on. NULL (err set) when the
 * program has neither (a .pt2: nothing says which instruction is which node). */
ls_etd_index *ls_etd_index_for(const ls_program *loaded, const ls_program **mapped, ls_error *err);

/* A delegate the maps describe and the Edge nodes each of its debug ids stands for. */
typedef struct ls_etr_link {
    const char *delegate_id; /* the key in the delegate's map (interned) */
    int64_t handle;          /* the first of its handles that names a node */
    const char *program;     /* the lowered module holding the node (NULL: the top level) */
    uint32_t node;           /* 0: no node has those handles */
} ls_etr_link;

typedef struct ls_etr_delegate {
    int32_t instruction;
    const char *backend;   /* "name" (interned) */
    const char *submodule; /* the lowered module its instruction's handles lead to (NULL: none) */
    uint32_t call_node;    /* the top-level executorch_call_delegate calling it (0: none) */
    ls_etr_link *links;
    uint32_t n_links;
} ls_etr_delegate;

typedef struct ls_etr_delegates {
    ls_etr_delegate *v;
    uint32_t n;
} ls_etr_delegates;

/* Every delegate of the recorded maps, in instruction order. -1 with err when the program has
 * no recorded maps or they are not JSON. */
int ls_etr_delegates_of(const ls_program *loaded, ls_etr_delegates *out, ls_error *err);
void ls_etr_delegates_free(ls_etr_delegates *d);

/* Writing one (the tests make theirs from a lowered sample): the programs as exir's serializer
 * writes them, lowered modules inline (ls_program_json_exir, export.h); no pickles (the
 * _state_dict, _constants and _example_inputs members are empty, which torch reads as none). */
typedef struct ls_etrecord_parts {
    const ls_program *exported;     /* may be NULL */
    const ls_program *edge;         /* required */
    const char *debug_handle_map;   /* JSON, may be NULL */
    const char *delegate_map;       /* JSON, may be NULL */
} ls_etrecord_parts;
int ls_etrecord_write(const ls_etrecord_parts *parts, const char *path, ls_error *err);

#endif
