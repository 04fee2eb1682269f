/* Lowered modules as ExecuTorch's exir serde writes them: the first argument of an
 * executorch_call_delegate node is a JSON string holding the LoweredBackendModule
 * (backend_id, base64 processed_bytes and compile specs, and the original ExportedProgram).
 * torch.export's own JSON has no such thing; there the get_attr stays without a submodule. */
#include <stdlib.h>
#include <string.h>

#include "pt2_internal.h"

static int b64_value(unsigned char c)
{
    if (c >= 'A' && c <= 'Z') return c - 'A';
    if (c >= 'a' && c <= 'z') return c - 'a' + 26;
    if (c >= '0' && c <= '9') return c - '0' + 52;
    if (c == '+' || c == '-') return 62;
    if (c == '/' || c == '_') return 63;
    return -1;
}

/* Standard or URL-safe base64 into a blob; NULL on a bad character. */
static ls_blob *b64_decode(const char *s)
{
    size_t n = strlen(s);
    uint8_t *out = ls_malloc(n / 4 * 3 + 4);
    size_t o = 0;
    uint32_t acc = 0;
    int bits = 0;
    for (size_t i = 0; i < n; i++) {
        unsigned char c = (unsigned char)s[i];
        if (c == '=' || c == '\n' || c == '\r' || c == ' ') continue;
        int v = b64_value(c);
        if (v < 0) {
            free(out);
            return NULL;
        }
        acc = (acc << 6) | (uint32_t)v;
        bits += 6;
        if (bits >= 8) {
            bits -= 8;
            out[o++] = (uint8_t)(acc >> bits);
        }
    }
    return ls_blob_wrap(out, o);
}

int ls_read_lowered_module(const char *where, const char *name, const char *json, int depth, ls_submodule *sub,
                           ls_error *err)
{
    memset(sub, 0, sizeof *sub);
    const char *w = ls_internf("%s: lowered module '%s'", where, name);
    cJSON *root = ls_json_parse(w, json, strlen(json), err);
    if (!root) return -1;
    int rc = 0;
    const cJSON *orig = ls_jget(root, "original_module");
    const char *backend = ls_jstr(ls_jget(root, "backend_id"));
    if (!orig || !backend) {
        rc = ls_fail(err, "%s: not a LoweredBackendModule (no original_module or backend_id)", w);
    } else {
        sub->name = ls_intern(name);
        sub->backend_id = ls_intern(backend);
        /* its state dict is a torch.save pickle: the submodule is metadata only */
        rc = ls_load_json_tree(w, name, orig, NULL, true, depth, &sub->program, err);
    }
    const char *processed = rc == 0 ? ls_jstr(ls_jget(root, "processed_bytes")) : NULL;
    if (processed) sub->processed = b64_decode(processed);
    const cJSON *specs = rc == 0 ? ls_jget(root, "compile_specs") : NULL;
    int n = specs && cJSON_IsArray(specs) ? cJSON_GetArraySize(specs) : 0;
    if (n > 0) {
        sub->specs = ls_calloc((size_t)n, sizeof *sub->specs);
        for (const cJSON *c = specs->child; c; c = c->next) {
            const char *key = ls_jstr(ls_jget(c, "key")), *val = ls_jstr(ls_jget(c, "value"));
            ls_blob *b = val ? b64_decode(val) : NULL;
            if (!key || !b) {
                ls_blob_unref(b);
                continue;
            }
            sub->specs[sub->nspecs].key = ls_intern(key);
            sub->specs[sub->nspecs++].value = b;
        }
    }
    ls_json_free(root);
    if (rc != 0) {
        ls_submodule_release(sub);
        memset(sub, 0, sizeof *sub);
    }
    return rc;
}
