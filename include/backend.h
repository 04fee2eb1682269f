/* The backend interface, like ExecuTorch's: at lowering, preprocess turns a lowered submodule
 * into a processed blob plus compile specs; at load, init builds the backend's handle from the
 * blob; per call, execute; at the end, destroy. Backends are found by id in a registry. */
#ifndef LS_BACKEND_H
#define LS_BACKEND_H

#include "named_data.h"
#include "program.h"
#include "runtime.h"

typedef struct ls_backend {
    const char *id; /* "BundledBackend" */
    /* named_out: where the backend stores data it keeps outside its blob, by key (exir's
     * PreprocessResult.data_store_output; XNNPACK's weights); the caller adds it to the program's
     * named data. */
    int (*preprocess)(const ls_program *sub, ls_blob **processed, ls_compile_spec **specs, uint32_t *nspecs,
                      ls_named_data *named_out, ls_error *err);
    /* named: the program's named data (ExecuTorch's BackendInitContext::get_named_data_map), may
     * be NULL. What init keeps from it, it keeps a reference to. */
    int (*init)(const ls_blob *processed, const ls_compile_spec *specs, uint32_t nspecs, const ls_named_data *named,
                void **handle, ls_error *err);
    /* inputs: the delegate's user inputs in order; outputs: its user outputs (caller frees). */
    int (*execute)(void *handle, const ls_value *inputs, uint32_t n_inputs, ls_value **outputs, uint32_t *n_outputs,
                   ls_error *err);
    /* State the delegate keeps across calls (its consumed mutable buffers). */
    uint32_t (*state_count)(void *handle);
    const char *(*state_name)(void *handle, uint32_t i);
    ls_tensor *(*state_get)(void *handle, uint32_t i); /* borrowed */
    void (*destroy)(void *handle);
} ls_backend;

const ls_backend *ls_backend_find(const char *id);
void ls_backend_register(const ls_backend *b); /* the bundled backend registers itself on first lookup */
/* The backend that handles a module of backend `id`: the registered one, else the bundled
 * delegate standing in for it (*simulated set) — at lowering (processed NULL) always, at load
 * only when `processed` is a bundled blob. NULL when nothing can run it. */
const ls_backend *ls_backend_resolve(const char *id, const ls_blob *processed, bool *simulated);

/* ---------------------------------------------------------------- seeing inside a delegate
 *
 * A delegate of a .pte is a blob in its backend's own format. An inspector, registered per
 * backend id (or recognising its format by its bytes), may read a blob into a viewable program
 * (the graph Enter opens, whose compute nodes the delegation table counts) and may describe what
 * a blob's header says when it cannot read the rest (a Core ML blob's model names, a QNN
 * context's graph names). Backends lowerscope runs and backends it only shows register alike:
 * the bundled format reads (src/backends/bundled/blob_program.c), QNN and Core ML describe
 * (src/backends/describe/). A blob no inspector reads is shown as an opaque call with the
 * generic facts (ls_delegate_describe): backend, size, magic bytes, compile specs. */

/* What an inspector is given of one delegate. */
typedef struct ls_delegate_view {
    const char *name;           /* "lowered_module_0" */
    const char *backend_id;     /* "XnnpackBackend" */
    const ls_blob *blob;        /* the processed bytes, never NULL (untrusted: check every offset) */
    const ls_compile_spec *specs;
    uint32_t nspecs;
    const ls_named_data *named; /* the program's named data (XNNPACK's weights by key), may be NULL */
    const char *const *methods; /* the methods of the file it is in (a QNN context holds one graph per method), may be NULL */
    uint32_t n_methods;
} ls_delegate_view;

/* One fact about a delegate, as the node pane and `info --json` show it: a label ("format",
 * "graphs") and a text. */
typedef struct ls_delegate_fact {
    const char *label; /* interned */
    char *text;        /* owned */
} ls_delegate_fact;
typedef struct ls_delegate_facts {
    ls_delegate_fact *v;
    uint32_t n;
} ls_delegate_facts;
void ls_delegate_fact_add(ls_delegate_facts *f, const char *label, const char *fmt, ...) LS_PRINTF(3, 4);
void ls_delegate_facts_free(ls_delegate_facts *f);

typedef struct ls_delegate_inspector {
    const char *backend_id; /* the id whose blobs it handles; NULL: only those it claims */
    const char *format;     /* what it knows the blob as: "XNNGraph flatbuffer" */
    /* Whether the blob is in its format whatever id the delegate carries (a magic number at a
     * known place): a program lowered for a backend lowerscope lacks carries the bundled format
     * under the profile's id. NULL: by backend id only. */
    bool (*claims)(const ls_blob *blob);
    /* The program inside the blob, with its constants' data where the blob or the named data
     * holds them. NULL: it cannot read the format. A blob of its format it cannot read fails
     * with why (never a guess). */
    int (*read)(const ls_delegate_view *d, ls_program **out, ls_error *err);
    /* What the blob's header and the compile specs say, appended to the generic facts. NULL:
     * nothing more. Never fails: what it cannot make out it says so. */
    void (*describe)(const ls_delegate_view *d, ls_delegate_facts *out);
} ls_delegate_inspector;

/* A later registration for the same backend id (or the same format) replaces the earlier one. */
void ls_delegate_inspector_register(const ls_delegate_inspector *ins);
/* The inspector for a blob: the first registered that claims it, else the one registered for
 * backend_id; NULL when none. */
const ls_delegate_inspector *ls_delegate_inspector_find(const char *backend_id, const ls_blob *blob);
/* The view of a lowered submodule with a processed blob (named: its program's named data;
 * methods: the methods of its file, or NULL). */
ls_delegate_view ls_delegate_view_of(const ls_submodule *s, const ls_named_data *named, const char *const *methods,
                                     uint32_t n_methods);
/* The program inside a delegate: 1 read (*out set), 0 no inspector reads this format, -1 its
 * reader failed (err says why). */
int ls_delegate_read(const ls_delegate_view *d, ls_program **out, ls_error *err);
/* Everything lowerscope can say about a delegate: backend, blob size, magic bytes, each compile
 * spec (key, size, the value as text when it is text), the format when an inspector knows it,
 * whether lowerscope reads it (and why not when its reader fails), then the inspector's own. */
void ls_delegate_describe(const ls_delegate_view *d, ls_delegate_facts *out);

#endif
