/* The loaders ls_load (reader.c) picks between by what a file holds; each format's own
 * internals stay in its folder (pt2/pt2_internal.h, pte/pte_internal.h). */
#ifndef LS_FORMATS_H
#define LS_FORMATS_H

#include "program.h"
#include "reader.h"

/* A .pt2 zip archive; the same layout unpacked into a folder (or a folder holding one). */
int ls_load_archive(const char *path, const ls_load_opts *opts, ls_program **out, ls_error *err);
int ls_load_folder(const char *path, const ls_load_opts *opts, ls_program **out, ls_error *err);
/* A bare exported-program JSON file; a models/<name>.json inside an unpacked archive takes its
 * weights from the archive's data/ two folders up. */
int ls_load_json_file(const char *path, const ls_load_opts *opts, ls_program **out, ls_error *err);

#endif
