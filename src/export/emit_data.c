/* What emit stores for tensors (export_internal.h lsx_store): the constant segment and the
 * mutable data segment, each entry once per distinct bytes, as exir's emitter keeps them
 * (_tensor_spec_to_evalue: a constant whose bytes were stored before, by sha256 of the bytes,
 * takes the same buffer index; cached_spec_hash_values for constants,
 * cached_spec_mutable_hash_values for mutable buffers). Index 0 is the reserved empty entry.
 * Laid out as the serializer does (_extract_constant_segment): constants padded to 16 bytes
 * between entries, mutable data unpadded (it is copied when a method loads). Bytes are matched
 * by XXH3 then compared, not sha256: the same bytes are the same either way. */
#include <string.h>
#include <xxhash.h>

#include "export_internal.h"

void lsx_store_init(lsx_store *s, uint32_t alignment)
{
    memset(s, 0, sizeof *s);
    s->alignment = alignment;
    ls_vec_push(&s->offsets, 0); /* index 0: the placeholder */
}

uint32_t lsx_store_put(lsx_store *s, const void *data, size_t n, bool *added)
{
    uint64_t h = XXH3_64bits(data, n) | 1; /* never 0: a ptrmap key */
    uintptr_t at;
    if (ls_ptrmap_get(&s->by_hash, (const void *)(uintptr_t)h, &at))
        for (uint32_t k = (uint32_t)at; k != UINT32_MAX; k = s->entries.v[k].next) {
            const lsx_store_entry *e = &s->entries.v[k];
            if (e->size == n && (!n || !memcmp(s->bytes.s + s->offsets.v[e->index], data, n))) {
                if (added) *added = false;
                return e->index;
            }
        }
    /* _extract_constant_segment pads between entries, not after the last */
    if (s->alignment > 1 && s->offsets.n > 1)
        while (s->bytes.len % s->alignment) ls_buf_putc(&s->bytes, 0);
    uint32_t index = s->offsets.n;
    ls_vec_push(&s->offsets, (uint64_t)s->bytes.len);
    if (n) ls_buf_putn(&s->bytes, data, n);
    lsx_store_entry e = {.index = index, .size = n, .next = ls_ptrmap_get(&s->by_hash, (const void *)(uintptr_t)h, &at) ? (uint32_t)at : UINT32_MAX};
    ls_vec_push(&s->entries, e);
    ls_ptrmap_put(&s->by_hash, (const void *)(uintptr_t)h, s->entries.n - 1);
    if (added) *added = true;
    return index;
}

void lsx_store_free(lsx_store *s)
{
    ls_buf_free(&s->bytes);
    free(s->offsets.v);
    free(s->entries.v);
    ls_ptrmap_free(&s->by_hash);
    memset(s, 0, sizeof *s);
}
