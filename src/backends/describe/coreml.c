/* CoreMLBackend blobs, described (lowerscope does not read or run Core ML models).
 *
 * ExecuTorch's Core ML preprocess flattens a folder (the model package and its metadata.json)
 * into one buffer with its in-memory filesystem (backends/apple/coreml/runtime/inmemoryfs:
 * InMemoryFileSystem::serialize, inmemory_filesystem_utils.cpp): the files' bytes first, then
 * the filesystem's metadata as JSON written *reversed* at the end, read back from the last byte
 * (make_from_buffer reads it through a ReversedIMemoryStream):
 *   {"nodes": [{"name": N, "dataRegion": {"offset": O, "size": S}, "children": {NAME: INDEX},
 *               "kind": K}, ...]}
 * (inmemory_filesystem_metadata_keys.hpp). The folder names in it are the models the blob holds;
 * a metadata.json among the files says more (its string fields are shown). */
#include <cjson/cJSON.h>
#include <stdlib.h>
#include <string.h>

#include "../inspectors.h"

#define MAX_METADATA (1u << 20) /* the tail read back as metadata */

/* The metadata JSON at the end of the blob, un-reversed, or NULL. */
static cJSON *fs_metadata(const ls_blob *b)
{
    if (!b->size || b->data[b->size - 1] != '{') return NULL;
    size_t n = b->size < MAX_METADATA ? b->size : MAX_METADATA;
    char *s = ls_malloc(n + 1);
    for (size_t i = 0; i < n; i++) s[i] = (char)b->data[b->size - 1 - i];
    /* the object ends where its braces balance (outside strings) */
    size_t depth = 0, end = 0;
    bool in_str = false;
    for (size_t i = 0; i < n && !end; i++) {
        char c = s[i];
        if (in_str) {
            if (c == '\\') i++;
            else if (c == '"') in_str = false;
        } else if (c == '"') {
            in_str = true;
        } else if (c == '{') {
            depth++;
        } else if (c == '}' && --depth == 0) {
            end = i + 1;
        }
    }
    cJSON *j = end ? cJSON_ParseWithLength(s, end) : NULL;
    free(s);
    return j;
}

typedef struct fs {
    cJSON *nodes;
    int n;
} fs;

static const char *node_name(const fs *f, int i)
{
    const cJSON *nm = cJSON_GetObjectItem(cJSON_GetArrayItem(f->nodes, i), "name");
    return cJSON_IsString(nm) ? nm->valuestring : "?";
}

static bool has_suffix(const char *s, const char *suf)
{
    size_t a = strlen(s), b = strlen(suf);
    return a >= b && strcmp(s + a - b, suf) == 0;
}

/* metadata.json's string fields (identifier, ...), read from its data region. */
static void metadata_file(const ls_blob *b, const cJSON *node, ls_delegate_facts *out)
{
    const cJSON *region = cJSON_GetObjectItem(node, "dataRegion");
    const cJSON *off = cJSON_GetObjectItem(region, "offset"), *size = cJSON_GetObjectItem(region, "size");
    if (!cJSON_IsNumber(off) || !cJSON_IsNumber(size) || off->valuedouble < 0 || size->valuedouble < 0 ||
        off->valuedouble + size->valuedouble > (double)b->size)
        return;
    cJSON *j = cJSON_ParseWithLength((const char *)b->data + (size_t)off->valuedouble, (size_t)size->valuedouble);
    if (!j) return;
    ls_buf t = {0};
    const cJSON *it;
    cJSON_ArrayForEach(it, j) if (cJSON_IsString(it) && it->string) ls_buf_printf(&t, "%s%s %s", t.len ? ", " : "", it->string, it->valuestring);
    if (t.len) ls_delegate_fact_add(out, "metadata", "metadata.json: %s", t.s);
    ls_buf_free(&t);
    cJSON_Delete(j);
}

static void coreml_describe(const ls_delegate_view *d, ls_delegate_facts *out)
{
    cJSON *meta = fs_metadata(d->blob);
    fs f = {cJSON_GetObjectItem(meta, "nodes"), 0};
    f.n = cJSON_IsArray(f.nodes) ? cJSON_GetArraySize(f.nodes) : 0;
    if (!f.n) {
        ls_delegate_fact_add(out, "files", "no in-memory filesystem metadata at the end of the blob");
        cJSON_Delete(meta);
        return;
    }
    bool *is_child = ls_calloc((size_t)f.n, sizeof *is_child);
    for (int i = 0; i < f.n; i++) {
        const cJSON *c;
        cJSON_ArrayForEach(c, cJSON_GetObjectItem(cJSON_GetArrayItem(f.nodes, i), "children"))
            if (cJSON_IsNumber(c) && c->valuedouble >= 0 && c->valuedouble < f.n) is_child[(int)c->valuedouble] = true;
    }
    int root = 0;
    while (root < f.n && is_child[root]) root++;
    if (root == f.n) root = 0;
    ls_buf files = {0}, models = {0};
    const cJSON *c;
    cJSON_ArrayForEach(c, cJSON_GetObjectItem(cJSON_GetArrayItem(f.nodes, root), "children"))
    {
        if (!cJSON_IsNumber(c) || c->valuedouble < 0 || c->valuedouble >= f.n) continue;
        int k = (int)c->valuedouble;
        const char *name = node_name(&f, k);
        bool dir = cJSON_GetArraySize(cJSON_GetObjectItem(cJSON_GetArrayItem(f.nodes, k), "children")) > 0;
        ls_buf_printf(&files, "%s%s%s", files.len ? ", " : "", name, dir ? "/" : "");
        if (dir || has_suffix(name, ".mlpackage") || has_suffix(name, ".mlmodelc"))
            ls_buf_printf(&models, "%s%s", models.len ? ", " : "", name);
        if (strcmp(name, "metadata.json") == 0) metadata_file(d->blob, cJSON_GetArrayItem(f.nodes, k), out);
    }
    if (models.len) ls_delegate_fact_add(out, "models", "%s", models.s);
    ls_delegate_fact_add(out, "files", "%d in the blob's filesystem; at its root: %s", f.n - 1, files.len ? files.s : "none");
    ls_buf_free(&files);
    ls_buf_free(&models);
    free(is_child);
    cJSON_Delete(meta);
}

const ls_delegate_inspector lsd_coreml_inspector = {
    .backend_id = "CoreMLBackend",
    .format = "Core ML model folder in ExecuTorch's in-memory filesystem (metadata reversed at the end)",
    .describe = coreml_describe,
};
