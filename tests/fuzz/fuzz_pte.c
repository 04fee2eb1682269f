/* ExecuTorch .pte files: the verified flatbuffer reader, the runtime's load checks, each method
 * as a program (pte_file.h), then everything fuzz_program does with it. */
#include <string.h>

#include "fuzz.h"
#include "pte.h"
#include "pte_file.h"

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
    if (size < 8 || memcmp(data + 4, "ET", 2) != 0) return 0; /* other bytes reach other readers */
    ls_pte_file *f;
    ls_error err;
    if (ls_pte_file_open(fuzz_path(data, size), NULL, 0, &f, &err) != 0) return 0;
    ls_buf b = {0};
    ls_pte_file_methods_text(f, &b);
    ls_buf_free(&b);
    for (uint32_t m = 0; m < f->n_methods && m < 4; m++) {
        ls_program *p;
        if (ls_pte_file_method(f, f->methods[m].name, &p, &err) != 0) continue;
        fuzz_program(p);
        ls_program_unref(p);
    }
    ls_pte_file_unref(f);
    return 0;
}
