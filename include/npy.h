/* NumPy .npy files: the inputs `lowerscope run --input` reads, the outputs `--save` writes and
 * the golden files the tests compare against.
 *
 * Reading accepts format versions 1.0, 2.0 and 3.0, little- and big-endian data (big-endian
 * is byte-swapped), C order, and Fortran order (converted to C order once). It refuses what a
 * tensor cannot hold (object, string, complex and structured dtypes) and anything inconsistent
 * (bad magic, a header that is not the dict NumPy writes, a shape whose size overflows, data
 * shorter or longer than the shape says), naming the file and the reason.
 * Writing produces version 1.0 (2.0 for a header over 64 KiB) in C order, little-endian;
 * bfloat16, which NumPy has no dtype for, is written as float32. */
#ifndef LS_NPY_H
#define LS_NPY_H

#include <stddef.h>
#include <stdint.h>

#include "common.h"
#include "tensor.h"

/* Reads PATH into a new tensor. Messages read "PATH: what is wrong". */
int ls_npy_load(const char *path, ls_tensor **out, ls_error *err);
/* Parses .npy bytes already in memory; `where` names them in messages. */
int ls_npy_parse(const uint8_t *data, size_t size, const char *where, ls_tensor **out, ls_error *err);
/* The bytes of a .npy file holding t (malloc'd). */
uint8_t *ls_npy_encode(const ls_tensor *t, size_t *size);
/* Writes t to PATH (atomically: a temporary file, then a rename). */
int ls_npy_save(const char *path, const ls_tensor *t, ls_error *err);

#endif
