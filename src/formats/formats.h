/* The loaders ls_load (reader.c) picks between by what a file holds; each format's own
 * internals stay in its folder (pt2/pt2_internal.h, pte/pte_internal.h). */
#ifndef LS_FORMATS_H
#define LS_FORMATS_H

#include "program.h"
#include "reader.h"

/* The most bytes one tensor may claim, data or metadata, whatever the reader: past it, and
 * when its element count overflows 64 bits, the file is refused at load (later code sizes,
 * strides and allocates from the shape). */
#define LS_READ_MAX_TENSOR_BYTES ((uint64_t)1 << 40)
/* "float32[1000000, 1000000] claims 1e+12 elements (4e+12 bytes), more than the 1.1e+12 bytes
 * lowerscope accepts"; symbolic dims without a hint (negative) count as 0. */
int ls_read_check_shape(const ls_tmeta *m, ls_error *err);

/* A .pt2 zip archive; the same layout unpacked into a folder (or a folder holding one). */
int ls_load_archive(const char *path, const ls_load_opts *opts, ls_program **out, ls_error *err);
int ls_load_folder(const char *path, const ls_load_opts *opts, ls_program **out, ls_error *err);
/* A bare exported-program JSON file; a models/<name>.json inside an unpacked archive takes its
 * weights from the archive's data/ two folders up. */
int ls_load_json_file(const char *path, const ls_load_opts *opts, ls_program **out, ls_error *err);

/* devtools/: a bundled program (.bpte, "BP08") as its embedded program; an ETRecord (a zip
 * with ETRECORD_V0) as the programs it holds, the last one returned with the others as the
 * steps before it (etrecord.h). */
int ls_load_bpte(const char *path, const ls_load_opts *opts, ls_program **out, ls_error *err);
struct zip;
int ls_load_etrecord(struct zip *za, const char *path, const ls_load_opts *opts, ls_program **out, ls_error *err);

/* Member idx of the open zip of file PATH, read whole into a blob (NUL-terminated past its
 * size) as the .pt2 reader reads its members: the claimed size checked against what an archive
 * of that size may hold before anything is allocated, the CRC-32 checked. rel names it. */
int ls_zip_read_member(struct zip *za, int64_t idx, const char *path, const char *rel, ls_blob **out, ls_error *err);

/* A zip archive in memory (pt2/pt2_write.c): the members STORED, in order, dated 1980-01-01;
 * with align > 0 (at most 256), each member's data starts at a multiple of align, padded by an
 * "FB" extra field as torch's PyTorchFileWriter does; 0 lays them out as Python's zipfile. */
typedef struct ls_zip_member {
    char *name;
    uint8_t *data; /* owned by whoever made the list */
    size_t size;
} ls_zip_member;
int ls_zip_build(const ls_zip_member *m, uint32_t n, unsigned align, uint8_t **bytes, size_t *size, ls_error *err);

#endif
