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

#endif
