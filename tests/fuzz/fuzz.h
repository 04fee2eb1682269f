/* What the fuzz harnesses share (tests/fuzz/; docs/design.md says how to add one). Each
 * harness is one file defining LLVMFuzzerTestOneInput for one reader; libFuzzer drives it
 * (make fuzz, clang), and replay.c drives it over files (make check, gcc, under ASan+UBSan).
 * A harness goes past parsing: what it read is verified, lowered (small programs) and run on
 * generated inputs, so a reader that accepts what later code cannot take is found too. */
#ifndef LS_FUZZ_H
#define LS_FUZZ_H

#include <stddef.h>
#include <stdint.h>

#include "backend.h"
#include "program.h"

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size);

/* A path whose file holds data[0..size) (a memory file, rewritten per call), for the readers
 * that take a path. */
const char *fuzz_path(const uint8_t *data, size_t size);
/* Verifies p; when it is small, runs it on generated inputs, runs the default pipeline, runs
 * its last step that can run, builds its .pt2 and reads back its emitted .pte. Takes nothing. */
void fuzz_program(const ls_program *p);
/* p run once on generated inputs, when its tensors are small enough to allocate. */
void fuzz_run(const ls_program *p);
/* Whether p is small enough to run (fuzz_run's bound): its nodes and its values' bytes. */
bool fuzz_runnable(const ls_program *p);
/* A delegate blob through a backend: init, one execute on in[0..nin) when init takes it,
 * destroy. Takes nothing. */
void fuzz_backend(const ls_backend *be, const ls_blob *blob, const ls_value *in, uint32_t nin);

/* A zip in data[0..size) with each STORED member's CRC-32 made right, in its local header and
 * its central directory entry (torch's and lowerscope's archives store their members), so a
 * mutation reaches what the CRC guards instead of being refused for it. Returns a malloc'd
 * copy; the harnesses seal every other input and leave the rest to the CRC check. */
uint8_t *fuzz_zip_seal(const uint8_t *data, size_t size);

/* The file at path (a .pt2) lowered by the default pipeline: its emitted .pte's bytes (malloc'd),
 * and, when etrecord is not NULL, its ETRecord written there (the export step's and the
 * to_backend step's programs, the emitter's maps), as the devtools tests make theirs. -1 when
 * any of it fails. The ETDump harness and fuzz_seeds use it. */
int fuzz_lowered(const char *path, uint8_t **pte, size_t *pte_size, const char *etrecord);

#endif
