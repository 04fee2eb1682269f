/* A .pte as lowerscope holds it once loaded: the file as it is, and what it says about itself.
 *
 * The file as it is: every table of the Program flatbuffer (`pte`, pte.h, exactly as read), the
 * bytes of every segment, and the .ptd files that gave its external data. Nothing is dropped
 * or rewritten, so a writer can put the file back together losslessly from here: every method,
 * named_data with its keys, EXTERNAL tensors with their keys, delegate blobs byte for byte,
 * compile specs.
 *
 * What it says about itself, in the terms people look for:
 *   - its methods (execution plans): name, inputs, outputs, kind (a method that runs, or one of
 *     ExecuTorch's constant methods, which only return values the file stores);
 *   - its named data: the key-addressed bytes delegates read at init (XNNPACK keeps weights
 *     there, keyed by content hash), from the .pte's segments and from each .ptd, with the
 *     delegates whose blob names each key;
 *   - its external tensors: the constants and trainable weights stored in a .ptd by key
 *     (TensorDataLocation EXTERNAL), with the .ptd that gave each, or none.
 *
 * One method at a time becomes a program (ls_pte_file_method): ExecuTorch dialect, the file's
 * own instructions, step 0 of a history. The program holds the file as its origin (program.h),
 * and so does every copy of it, so every step reaches the other methods and what the program
 * does not model. The program's tensors and delegate blobs share the segments' bytes with
 * `pte` (segment_data[i].owner): a file is read once and held once.
 *
 * External data, as ExecuTorch's Module finds it (extension/module/module.cpp: data files are
 * given explicitly and merged by MergedDataMap, which refuses a key found in two files): the
 * .ptd files given (--data, in order), then, while an EXTERNAL tensor has no data, the files
 * exir writes beside the .pte (ExecutorchProgramManager.write_tensor_data_to_file writes
 * `<tag>.ptd`, the tag `_default_external_constant` unless renamed, and the export scripts
 * rename it to the model's stem): STEM.ptd, then _default_external_constant.ptd in the .pte's
 * folder. */
#ifndef LS_PTE_FILE_H
#define LS_PTE_FILE_H

#include <stdbool.h>
#include <stdint.h>

#include "backend.h"
#include "common.h"
#include "program.h"
#include "pte.h"

/* The name exir gives the data file of external constants when nothing renames it. */
#define LS_PTD_DEFAULT_NAME "_default_external_constant.ptd"

typedef enum ls_pte_method_kind {
    LS_PTE_METHOD_RUN,      /* has instructions: forward, kv_forward, prefill_forward */
    LS_PTE_METHOD_CONSTANT, /* no inputs and no instructions: it returns values the file stores
                               (exir's _emit_prim_getters: get_max_seq_len, __et_training_fqn_forward) */
} ls_pte_method_kind;
const char *ls_pte_method_kind_name(ls_pte_method_kind k); /* "method", "constant method" */

typedef struct ls_pte_method {
    const char *name;  /* interned */
    uint32_t plan;     /* index into pte.execution_plan */
    uint8_t kind;      /* ls_pte_method_kind */
    uint32_t n_inputs, n_outputs;
    uint32_t n_instructions, n_kernel_calls, n_delegate_calls, n_delegates;
} ls_pte_method;

/* A delegate of a method, named as the method's program names it (lowered_module_<index>). */
typedef struct ls_pte_delegate_ref {
    const char *method; /* interned */
    uint32_t index;     /* into that plan's delegates */
    const char *name;   /* "lowered_module_0" (interned) */
} ls_pte_delegate_ref;

/* One named_data entry: of the .pte itself (ptd -1) or of the .ptd files[ptd]. */
typedef struct ls_pte_named {
    const char *key;  /* interned */
    int32_t ptd;      /* -1: the .pte's own segments; else an index into ptd_paths */
    uint32_t segment; /* the segment holding it (of the .pte, or of that .ptd) */
    uint64_t bytes;
    ls_pte_delegate_ref *readers; /* the delegates whose blob names this key */
    uint32_t n_readers;
} ls_pte_named;

/* A tensor stored outside the .pte by key (TensorDataLocation EXTERNAL). */
typedef struct ls_pte_external {
    const char *key;    /* fully_qualified_name (interned) */
    const char *method; /* interned */
    uint32_t value;     /* its value index in that method's plan */
    bool trainable;     /* memory-planned with initial bytes (a weight training updates) */
    uint64_t bytes;     /* its size by metadata */
    int32_t ptd;        /* the .ptd that holds it (index into ptd_paths), -1: none given or found */
} ls_pte_external;

typedef struct ls_pte_file {
    ls_origin origin; /* first member: a program's origin points here (kind LS_ORIGIN_PTE) */
    const char *path; /* interned */
    ls_pte pte;       /* the file as read; segment_data[i].owner holds segment i's bytes */
    /* the .ptd files in use: those given, then those found beside the .pte */
    ls_ptd *ptds;
    const char **ptd_paths; /* interned */
    bool *ptd_found;        /* found beside the .pte rather than given */
    uint32_t n_ptds;
    ls_pte_method *methods; /* plan order */
    const char **method_names; /* the same names, as the delegate inspectors take them */
    uint32_t n_methods;
    ls_pte_named *named; /* the .pte's named_data, then each .ptd's, in file order */
    uint32_t n_named;
    ls_pte_external *externals; /* per method, in value order */
    uint32_t n_externals, n_missing; /* n_missing: externals no .ptd holds */
    void *index;                     /* key lookups (private) */
} ls_pte_file;

/* Reads PATH and the .ptd files given (data[0..n_data), may be 0), then looks beside it for the
 * ones ExecuTorch names while an external tensor has no data. A given .ptd that cannot be read,
 * or a key two data files both hold, is an error naming the file. */
int ls_pte_file_open(const char *path, const char *const *data, uint32_t n_data, ls_pte_file **out, ls_error *err);
/* The same for a .pte already read: takes all of *pte (left empty). where names it in messages. */
ls_pte_file *ls_pte_file_adopt(ls_pte *pte, const char *where);
ls_pte_file *ls_pte_file_ref(ls_pte_file *f);
void ls_pte_file_unref(ls_pte_file *f);

/* The method called `name`, or NULL. */
const ls_pte_method *ls_pte_file_find_method(const ls_pte_file *f, const char *name);
/* The method opened when none is named, as ExecuTorch's Module::forward does: "forward"; else
 * the first with instructions; else the first. NULL when the file has no method. */
const ls_pte_method *ls_pte_file_default_method(const ls_pte_file *f);
/* "kv_forward, prefill_forward and 27 constant methods" */
void ls_pte_file_methods_text(const ls_pte_file *f, ls_buf *b);

/* One method as a program (method NULL: the default one), holding f as its origin. A method
 * the file does not have is an error listing the ones it has. */
int ls_pte_file_method(ls_pte_file *f, const char *method, ls_program **out, ls_error *err);

/* What the delegate inspectors (backend.h) are given of a delegate of p: its blob and compile
 * specs, p's named data and, for a program from a .pte, the file's method names. */
ls_delegate_view ls_program_delegate_view(const ls_program *p, const ls_submodule *s);

/* The file a program came from, or NULL when it did not come from a .pte. */
ls_pte_file *ls_program_pte_file(const ls_program *p);

/* The named data entry `key` (the .pte's first, then the .ptd files'), or NULL; its bytes. */
const ls_pte_named *ls_pte_file_named(const ls_pte_file *f, const char *key);
int ls_pte_file_named_bytes(const ls_pte_file *f, const ls_pte_named *e, const uint8_t **data, size_t *size,
                            ls_error *err);
/* The external tensor of method `method` keyed `key`, or NULL. */
const ls_pte_external *ls_pte_file_external(const ls_pte_file *f, const char *method, const char *key);
/* Whether some method's external tensor has this key (a .ptd entry that is not a delegate's). */
bool ls_pte_file_is_external(const ls_pte_file *f, const char *key);
/* Bytes of all named data of the .pte and its .ptd files. */
uint64_t ls_pte_file_named_total(const ls_pte_file *f);
/* Whether entry e is one of the file's external tensors: a .ptd entry an EXTERNAL tensor reads,
 * whose bytes count as that tensor's (a weight), not as data a delegate reads by key. */
bool ls_pte_named_is_tensor(const ls_pte_file *f, const ls_pte_named *e);
/* The named data that is no external tensor (what delegates read by key): how many entries,
 * and their bytes in *bytes. */
uint32_t ls_pte_file_delegate_data(const ls_pte_file *f, uint64_t *bytes);

#endif
