/* NumPy .npy files (run --input): the parser, then the tensor written back and read again,
 * which must give the same tensor. */
#include <stdlib.h>

#include "fuzz.h"
#include "npy.h"
#include "tensor.h"

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
    ls_tensor *t;
    ls_error err;
    if (ls_npy_parse(data, size, "fuzz.npy", &t, &err) != 0) return 0;
    size_t n;
    uint8_t *bytes = ls_npy_encode(t, &n);
    ls_tensor *back;
    if (ls_npy_parse(bytes, n, "encoded", &back, &err) != 0) abort();
    if (t->dtype != LS_DT_BF16 && !ls_tensor_equal(t, back)) abort();
    ls_tensor_unref(back);
    free(bytes);
    ls_tensor_unref(t);
    return 0;
}
