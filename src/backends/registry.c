/* The backend registry: backends are found by id; the bundled backend registers itself on the
 * first lookup. */
#include "backend.h"

#include <pthread.h>
#include <string.h>

#include "bundled_blob.h"
#include "tensor.h"
#include "xnnpack_blob.h"

#define MAX_BACKENDS 16

static const ls_backend *registry[MAX_BACKENDS];
static int n_registered;
static pthread_once_t builtins_once = PTHREAD_ONCE_INIT;
static pthread_mutex_t lock = PTHREAD_MUTEX_INITIALIZER;

void ls_backend_register(const ls_backend *b)
{
    if (!b || !b->id) return;
    pthread_mutex_lock(&lock);
    int i = 0;
    while (i < n_registered && strcmp(registry[i]->id, b->id) != 0) i++;
    if (i < n_registered) registry[i] = b; /* a later registration replaces (tests use it) */
    else if (n_registered < MAX_BACKENDS) registry[n_registered++] = b;
    pthread_mutex_unlock(&lock);
}

static void register_builtins(void)
{
    ls_backend_register(&ls_bundled_backend); /* src/backends/bundled/bundled_backend.c */
    ls_backend_register(&ls_xnnpack_backend); /* src/backends/xnnpack/xnn_backend.c */
}

const ls_backend *ls_backend_find(const char *id)
{
    pthread_once(&builtins_once, register_builtins);
    if (!id) return NULL;
    const ls_backend *found = NULL;
    pthread_mutex_lock(&lock);
    for (int i = 0; i < n_registered && !found; i++)
        if (strcmp(registry[i]->id, id) == 0) found = registry[i];
    pthread_mutex_unlock(&lock);
    return found;
}

/* A backend lowerscope does not have (a profile's XnnpackBackend, CoreMLBackend) is stood in for
 * by the bundled delegate, so a program lowered for it still runs: at lowering the bundled
 * delegate preprocesses the module, and at load a blob in the bundled format (LS_BB_MAGIC) is
 * handed to it whatever id the module carries. */
const ls_backend *ls_backend_resolve(const char *id, const ls_blob *processed, bool *simulated)
{
    const ls_backend *be = ls_backend_find(id);
    if (simulated) *simulated = false;
    bool bundled_blob = processed && processed->size >= 4 && memcmp(processed->data, LS_BB_MAGIC, 4) == 0;
    /* a registered backend runs its own blobs, and lowers when it can preprocess */
    if (be && (processed ? !bundled_blob || be == &ls_bundled_backend : be->preprocess != NULL)) return be;
    if (processed && !bundled_blob) return NULL;
    if (simulated) *simulated = true;
    return &ls_bundled_backend;
}
