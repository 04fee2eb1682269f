/* A bare exported-program JSON (schema 8.x, the old v1 form, lowered modules inside), read from
 * memory, then everything fuzz_program does with the program. */
#include "fuzz.h"
#include "reader.h"

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
    ls_program *p;
    ls_error err;
    if (ls_load_json("fuzz.json", (const char *)data, size, NULL, &p, &err) == 0) {
        fuzz_program(p);
        ls_program_unref(p);
    }
    return 0;
}
