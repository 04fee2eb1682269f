/* The inspectors of backends lowerscope shows but does not run (describe/), for inspect.c to
 * register; private to src/backends/ and its subfolders. */
#ifndef LS_BACKENDS_INSPECTORS_H
#define LS_BACKENDS_INSPECTORS_H

#include "backend.h"

extern const ls_delegate_inspector lsd_qnn_inspector;    /* describe/qnn.c */
extern const ls_delegate_inspector lsd_coreml_inspector; /* describe/coreml.c */

/* Bytes as people read them: 'text' when they are text, else hex of the first `max`. */
void lsd_bytes_text(ls_buf *b, const uint8_t *p, size_t n, size_t max);

#endif
