/* .pt2 archives (torch.export.save's zip): the archive reader, the JSON reader behind it, the
 * weights, then everything fuzz_program does with the program. Even-sized inputs have their
 * members' CRCs made right first (fuzz_zip_seal): a flipped byte in the JSON or a weight then
 * reaches the readers instead of the CRC check. */
#include <stdlib.h>

#include "fuzz.h"
#include "reader.h"

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
    if (size < 4 || data[0] != 'P' || data[1] != 'K') return 0; /* other bytes reach other readers */
    uint8_t *sealed = size & 1 ? NULL : fuzz_zip_seal(data, size); /* odd sizes meet the CRC check */
    const char *path = fuzz_path(sealed ? sealed : data, size);
    free(sealed);
    ls_program *p;
    ls_error err;
    if (ls_load(path, NULL, &p, &err) == 0) {
        fuzz_program(p);
        ls_program_unref(p);
    }
    return 0;
}
