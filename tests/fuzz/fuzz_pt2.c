/* .pt2 archives (torch.export.save's zip): the archive reader, the JSON reader behind it, the
 * weights, then everything fuzz_program does with the program. */
#include "fuzz.h"
#include "reader.h"

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
    if (size < 4 || data[0] != 'P' || data[1] != 'K') return 0; /* other bytes reach other readers */
    ls_program *p;
    ls_error err;
    if (ls_load(fuzz_path(data, size), NULL, &p, &err) == 0) {
        fuzz_program(p);
        ls_program_unref(p);
    }
    return 0;
}
