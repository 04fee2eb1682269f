/* Loading programs from the files people have: a .pt2 archive (torch.export.save, torch >= 2.8),
 * the same layout unpacked into a folder, a bare exported-program JSON (schema 8.x or the old
 * v1 form), and an ExecuTorch .pte. */
#ifndef LS_READER_H
#define LS_READER_H

#include "common.h"
#include "program.h"

#define LS_MAX_DATA_FILES 16

typedef struct ls_load_opts {
    bool metadata_only; /* do not read weight bytes even when present */
    /* Read what the weights are (their configs: dtype, shape, which file, the file's size) but
     * not their bytes: what `info` shows. The program gets weights_unread and no tensors. */
    bool weight_sizes_only;
    const char *model;  /* which models/<name>.json of an archive; NULL = "model" or the only one */
    const char *method; /* which method of a .pte (pte_file.h); NULL = "forward", else the first
                           with instructions. A .pte given --model NAME takes it as the method. */
    const char *data[LS_MAX_DATA_FILES]; /* .ptd files for a .pte's external data (--data) */
    uint32_t n_data;
} ls_load_opts;

/* Sniffs the file (zip, folder, JSON, .pte) and loads it. On failure err names the file, the
 * place and what is wrong, and *out is NULL. opts may be NULL. */
int ls_load(const char *path, const ls_load_opts *opts, ls_program **out, ls_error *err);

/* Whether a --data path can be read (a regular file the user may read), checked when the option
 * is given so that a wrong path is named before the program is loaded, in the CLI and the UI
 * alike. */
int ls_load_check_data(const char *path, ls_error *err);

/* Loads an exported-program JSON already in memory. Weights come from `weights` (may be NULL:
 * the program is then metadata-only). `where` names the source in messages. */
typedef struct ls_weight_source ls_weight_source;
int ls_load_json(const char *where, const char *json, size_t len, ls_weight_source *weights, ls_program **out,
                 ls_error *err);

#endif
