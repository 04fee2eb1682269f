/* What ExecuTorch's runtime registers (the data is et_kernels.def): kernel names by library,
 * and the backend ids ExecuTorch ships. Looked up by hash, built once. */
#include <string.h>

#include "pte_check.h"
#include "ptrmap.h"

static const struct {
    const char *name, *library;
} kernels[] = {
#define ET_KERNEL(n, lib) {n, lib},
#define ET_NAMESPACE(ns, lib)
#define ET_BACKEND(id)
#include "et_kernels.def"
#undef ET_KERNEL
#undef ET_NAMESPACE
#undef ET_BACKEND
};

static const struct {
    const char *ns, *library;
} namespaces[] = {
#define ET_KERNEL(n, lib)
#define ET_NAMESPACE(ns, lib) {ns, lib},
#define ET_BACKEND(id)
#include "et_kernels.def"
#undef ET_KERNEL
#undef ET_NAMESPACE
#undef ET_BACKEND
};

static const char *const backends[] = {
#define ET_KERNEL(n, lib)
#define ET_NAMESPACE(ns, lib)
#define ET_BACKEND(id) id,
#include "et_kernels.def"
#undef ET_KERNEL
#undef ET_NAMESPACE
#undef ET_BACKEND
};

static ls_ptrmap by_name; /* interned kernel name → library */

static void build(void)
{
    if (by_name.used) return;
    for (size_t i = 0; i < sizeof kernels / sizeof kernels[0]; i++)
        ls_ptrmap_put(&by_name, ls_intern(kernels[i].name), (uintptr_t)kernels[i].library);
}

const char *ls_et_kernel_library(const char *name)
{
    if (!name) return NULL;
    build();
    uintptr_t lib;
    if (ls_ptrmap_get(&by_name, ls_intern(name), &lib)) return (const char *)lib;
    const char *sep = strstr(name, "::");
    if (!sep) return NULL;
    size_t n = (size_t)(sep - name);
    for (size_t i = 0; i < sizeof namespaces / sizeof namespaces[0]; i++)
        if (strlen(namespaces[i].ns) == n && !memcmp(namespaces[i].ns, name, n)) return namespaces[i].library;
    return NULL;
}

bool ls_et_library_is_stock(const char *library)
{
    return library && (!strcmp(library, "portable") || !strcmp(library, "optimized") || !strcmp(library, "prim ops"));
}

bool ls_et_backend_is_stock(const char *backend_id)
{
    for (size_t i = 0; backend_id && i < sizeof backends / sizeof backends[0]; i++)
        if (!strcmp(backends[i], backend_id)) return true;
    return false;
}
