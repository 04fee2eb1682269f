/* Named data (include/named_data.h): an array of entries in insertion order and a map from the
 * interned key to the entry. */
#include "named_data.h"

#include <stdlib.h>
#include <string.h>

#include "ptrmap.h"

typedef struct entry {
    const char *key; /* interned */
    ls_blob *data;
    uint32_t alignment;
} entry;

struct ls_named_data {
    uint32_t refs;
    LS_VEC(entry) e;
    ls_ptrmap by_key; /* interned key → index */
};

ls_named_data *ls_named_data_new(void)
{
    ls_named_data *nd = ls_calloc(1, sizeof *nd);
    nd->refs = 1;
    return nd;
}

ls_named_data *ls_named_data_ref(ls_named_data *nd)
{
    if (nd) nd->refs++;
    return nd;
}

void ls_named_data_unref(ls_named_data *nd)
{
    if (!nd || --nd->refs) return;
    for (uint32_t i = 0; i < nd->e.n; i++) ls_blob_unref(nd->e.v[i].data);
    free(nd->e.v);
    ls_ptrmap_free(&nd->by_key);
    free(nd);
}

ls_named_data *ls_named_data_copy(const ls_named_data *src)
{
    ls_named_data *nd = ls_named_data_new();
    for (uint32_t i = 0; src && i < src->e.n; i++) {
        entry e = src->e.v[i];
        ls_blob_ref(e.data);
        ls_vec_push(&nd->e, e);
        ls_ptrmap_put(&nd->by_key, e.key, i);
    }
    return nd;
}

ls_named_data *ls_named_data_own(ls_named_data *nd)
{
    if (nd->refs == 1) return nd;
    ls_named_data *own = ls_named_data_copy(nd);
    ls_named_data_unref(nd);
    return own;
}

int ls_named_data_put(ls_named_data *nd, const char *key, ls_blob *data, uint32_t alignment, ls_error *err)
{
    if (!key || !data) return ls_fail(err, "named data: an entry without a key or bytes");
    const char *k = ls_intern(key);
    uint32_t at;
    if (ls_ptrmap_get_u32(&nd->by_key, k, &at)) {
        const ls_blob *old = nd->e.v[at].data;
        if (old == data || (old->size == data->size && memcmp(old->data, data->data, data->size) == 0)) return 0;
        return ls_fail(err, "named data: key '%s' is already used by other data (%zu bytes, now %zu)", k, old->size,
                       data->size);
    }
    ls_vec_push(&nd->e, ((entry){k, ls_blob_ref(data), alignment}));
    ls_ptrmap_put(&nd->by_key, k, nd->e.n - 1);
    return 0;
}

int ls_named_data_merge(ls_named_data *dst, const ls_named_data *src, ls_error *err)
{
    for (uint32_t i = 0; src && i < src->e.n; i++)
        if (ls_named_data_put(dst, src->e.v[i].key, src->e.v[i].data, src->e.v[i].alignment, err) != 0) return -1;
    return 0;
}

const ls_blob *ls_named_data_get(const ls_named_data *nd, const char *key)
{
    uint32_t at;
    if (!nd || !key || !ls_ptrmap_get_u32(&nd->by_key, ls_intern(key), &at)) return NULL;
    return nd->e.v[at].data;
}

uint32_t ls_named_data_count(const ls_named_data *nd) { return nd ? nd->e.n : 0; }
const char *ls_named_data_key(const ls_named_data *nd, uint32_t i) { return nd->e.v[i].key; }
const ls_blob *ls_named_data_blob(const ls_named_data *nd, uint32_t i) { return nd->e.v[i].data; }
uint32_t ls_named_data_alignment(const ls_named_data *nd, uint32_t i) { return nd->e.v[i].alignment; }
