/* A stored zip member mapped from the archive file (private to src/formats/pt2/). */
#ifndef LS_ZIP_MAP_H
#define LS_ZIP_MAP_H

#include <stdint.h>

#include "tensor.h"

/* Member `index` of the archive at path, named `name` in its central directory, stored (not
 * compressed) with `size` bytes and CRC-32 `crc`: a blob over a private read-write mapping of
 * its bytes, NUL-terminated after them (the page holding the NUL is copied; the file is never
 * written). 0 on success; 1 when the member cannot be mapped (compressed, damaged, an unusual
 * layout, a CRC that does not match): read it the ordinary way, which says what is wrong.
 * The file must not be truncated while the blob lives (its pages would be gone): hold it for
 * the load only. */
int ls_zip_map_stored(const char *path, uint64_t index, const char *name, uint64_t size, uint32_t crc,
                      ls_blob **out);

#endif
