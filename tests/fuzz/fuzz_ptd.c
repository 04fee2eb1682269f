/* ExecuTorch .ptd external data files (FlatTensor, FT01, both layouts): the reader, then every
 * entry's bytes as a tensor of its layout. */
#include <stdlib.h>

#include "fuzz.h"
#include "pte.h"
#include "tensor.h"

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
    ls_ptd ptd;
    ls_error err;
    if (ls_ptd_read_bytes(data, size, "fuzz.ptd", &ptd, &err) != 0) return 0;
    for (uint32_t i = 0; i < ptd.named_data.n; i++) {
        const ls_ptd_entry *e = &ptd.named_data.v[i];
        const uint8_t *bytes;
        size_t n;
        if (ls_ptd_entry_bytes(&ptd, e, &bytes, &n, &err) != 0) continue;
        volatile uint8_t sum = 0; /* every byte the reader says is there is readable */
        for (size_t k = 0; k < n; k++) sum ^= bytes[k];
        (void)sum;
    }
    ls_ptd_free(&ptd);
    return 0;
}
