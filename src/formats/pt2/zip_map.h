/* A stored zip member mapped from the archive file (private to src/formats/pt2/). */
#ifndef LS_ZIP_MAP_H
#define LS_ZIP_MAP_H

#include <stdbool.h>
#include <stdint.h>

#include "tensor.h"

/* Member `index` of the archive at path, named `name` in its central directory, stored (not
 * compressed) with `size` bytes and CRC-32 `crc`: a blob over a private read-write mapping of
 * its bytes, NUL-terminated after them (the page holding the NUL is copied; the file is never
 * written). 0 on success; 1 when the member cannot be mapped (compressed, damaged, an unusual
 * layout, a CRC that does not match): read it the ordinary way, which says what is wrong.
 * Hold it for the load only, and end with ls_zip_map_done before the last unref: if the file is
 * truncated meanwhile, the pages past its end read as zeros instead of raising SIGBUS (zip_map.c). */
int ls_zip_map_stored(const char *path, uint64_t index, const char *name, uint64_t size, uint32_t crc,
                      ls_blob **out);
/* Stops watching b's mapping (any blob may be given: false for one not mapped): true when the
 * file shrank under it, so that what was read of it is not the member. */
bool ls_zip_map_done(const ls_blob *b);
/* Tests only: called, when set, between mapping the model JSON and parsing it (to truncate it). */
extern void (*ls_zip_map_test_after_map)(const char *path);
/* Tests only: called, when set, between mapping a member and summing it (its CRC). */
extern void (*ls_zip_map_test_before_sum)(const char *path);

#endif
