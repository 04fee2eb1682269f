/* Helpers shared by the .pte/.ptd suites: the real sample files, loading bytes, and comparing
 * JSON structurally (flatc's decodes against our dumps). */
#ifndef LS_PTE_TEST_H
#define LS_PTE_TEST_H

#include <cjson/cJSON.h>
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "common.h"
#include "pte.h"
#include "testutil.h"

/* Every real .pte in shared/data/pte with a flatc decode (djl_corrupt.pte has none). */
static const char *const pt_real_files[] LS_UNUSED = {
    "cc_add",
    "cc_const_methods",
    "cc_dynamic",
    "cc_quantized",
    "djl_add_unplanned",
    "djl_conv",
    "djl_med_output",
    "djl_openvino_tiny",
    "et_ModuleLinear-no-constant-segment",
    "et_android_xor",
    "et_apple_add",
    "et_arduino_AddModel",
    "et_arduino_KeywordSpotting",
    "et_stories260k_hybrid_llama_qnn",
    "node_mul",
    "rs_add",
    "rs_data_map_model",
};
#define PT_NREAL (sizeof pt_real_files / sizeof pt_real_files[0])

/* n bytes little-endian at p (the header fields ExecuTorch reads). */
static inline uint64_t pt_le(const uint8_t *p, int n)
{
    uint64_t v = 0;
    for (int i = 0; i < n; i++) v |= (uint64_t)p[i] << (8 * i);
    return v;
}


/* shared/data/pte/<name><ext>, or NULL when the shared folder is absent (callers skip). */
static inline const char *pt_path(const char *name, const char *ext)
{
    char rel[256];
    snprintf(rel, sizeof rel, "data/pte/%s%s", name, ext);
    return tu_shared(rel);
}

static inline uint8_t *pt_load(const char *path, size_t *size)
{
    uint8_t *data = NULL;
    ls_error err;
    if (ls_read_file(path, (size_t)1 << 30, &data, size, &err) < 0) return NULL;
    return data;
}

/* Parses flatc's JSON: flatc prints non-finite doubles as bare inf / -inf / nan, which is not
 * JSON; they become the strings our dump writes for them. */
static inline cJSON *pt_parse_flatc(const char *text)
{
    ls_buf b = {0};
    bool in_str = false;
    for (const char *p = text; *p; p++) {
        if (in_str) {
            ls_buf_putc(&b, *p);
            if (*p == '\\' && p[1]) ls_buf_putc(&b, *++p);
            else if (*p == '"') in_str = false;
            continue;
        }
        if (*p == '"') in_str = true;
        const char *words[] = {"-inf", "inf", "nan", "-nan"};
        bool done = false;
        for (int i = 0; i < 4 && !done; i++) {
            size_t n = strlen(words[i]);
            if (strncmp(p, words[i], n) == 0) {
                ls_buf_printf(&b, "\"%s\"", words[i][0] == '-' && words[i][1] == 'n' ? "nan" : words[i]);
                p += n - 1;
                done = true;
            }
        }
        if (!done) ls_buf_putc(&b, *p);
    }
    cJSON *j = cJSON_Parse(b.s ? b.s : "");
    ls_buf_free(&b);
    return j;
}

/* bytes written as tmpdir/NAME and decoded by flatc with tests/schema/SCHEMA (extra: more
 * flags, e.g. "--size-prefixed"), as parsed JSON; NULL when flatc is not installed. Fails the
 * test when flatc refuses the file. */
static inline cJSON *pt_flatc_json(const uint8_t *bytes, size_t n, const char *name, const char *schema, const char *extra)
{
    if (system("command -v flatc >/dev/null 2>&1") != 0) {
        fprintf(stderr, "flatc not found: %s is not decoded with it\n", name);
        return NULL;
    }
    const char *dir = tu_tmpdir();
    char file[512], rel[128], cmd[2048];
    snprintf(file, sizeof file, "%s/%s", dir, name);
    snprintf(rel, sizeof rel, "tests/schema/%s", schema);
    ls_error err;
    if (ls_write_file_atomic(file, bytes, n, &err) != 0) return NULL;
    snprintf(cmd, sizeof cmd, "flatc --json --strict-json %s -o %s %s -- %s 2>&1", extra ? extra : "", dir, tu_root(rel), file);
    if (system(cmd) != 0) {
        fprintf(stderr, "flatc refused %s\n", file);
        abort();
    }
    snprintf(file, sizeof file, "%s/%.*s.json", dir, (int)strcspn(name, "."), name);
    size_t tn;
    char *text = (char *)pt_load(file, &tn);
    cJSON *j = text ? pt_parse_flatc(text) : NULL;
    free(text);
    return j;
}

/* Structural equality; on a difference writes where it is into `where`. Numbers compare with a
 * tolerance for flatc's 12-decimal doubles. Object key order does not matter. */
static inline bool pt_json_equal_at(const cJSON *a, const cJSON *b, char *where, size_t cap, const char *path)
{
    char sub[512];
    if (!a || !b || (a->type & 0xff) != (b->type & 0xff)) {
        snprintf(where, cap, "%s: different kinds", path);
        return false;
    }
    if (cJSON_IsNumber(a)) {
        double x = a->valuedouble, y = b->valuedouble;
        if (fabs(x - y) <= 1e-11 + 1e-12 * fabs(x)) return true;
        snprintf(where, cap, "%s: %.17g vs %.17g", path, x, y);
        return false;
    }
    if (cJSON_IsString(a)) {
        if (strcmp(a->valuestring, b->valuestring) == 0) return true;
        snprintf(where, cap, "%s: \"%.60s\" vs \"%.60s\"", path, a->valuestring, b->valuestring);
        return false;
    }
    if (cJSON_IsArray(a)) {
        int n = cJSON_GetArraySize(a);
        if (n != cJSON_GetArraySize(b)) {
            snprintf(where, cap, "%s: %d vs %d elements", path, n, cJSON_GetArraySize(b));
            return false;
        }
        const cJSON *y = b->child;
        int i = 0;
        for (const cJSON *x = a->child; x; x = x->next, y = y->next, i++) {
            snprintf(sub, sizeof sub, "%s[%d]", path, i);
            if (!pt_json_equal_at(x, y, where, cap, sub)) return false;
        }
        return true;
    }
    if (cJSON_IsObject(a)) {
        if (cJSON_GetArraySize(a) != cJSON_GetArraySize(b)) {
            for (const cJSON *x = a->child; x; x = x->next)
                if (!cJSON_GetObjectItemCaseSensitive(b, x->string)) {
                    snprintf(where, cap, "%s.%s: only in the first", path, x->string);
                    return false;
                }
            for (const cJSON *y = b->child; y; y = y->next)
                if (!cJSON_GetObjectItemCaseSensitive(a, y->string)) {
                    snprintf(where, cap, "%s.%s: only in the second", path, y->string);
                    return false;
                }
        }
        for (const cJSON *x = a->child; x; x = x->next) {
            snprintf(sub, sizeof sub, "%s.%s", path, x->string);
            if (!pt_json_equal_at(x, cJSON_GetObjectItemCaseSensitive(b, x->string), where, cap, sub)) return false;
        }
        return true;
    }
    return true; /* true/false/null: the kinds matched */
}

static inline bool pt_json_equal(const cJSON *a, const cJSON *b, char *where, size_t cap)
{
    return pt_json_equal_at(a, b, where, cap, "$");
}

/* Our dump of a model, parsed. */
static inline cJSON *pt_dump(const ls_pte *p)
{
    ls_buf b = {0};
    ls_pte_to_json(p, &b);
    cJSON *j = cJSON_Parse(b.s);
    ls_buf_free(&b);
    return j;
}

static inline char *pt_dump_text(const ls_pte *p)
{
    ls_buf b = {0};
    ls_pte_to_json(p, &b);
    return ls_buf_take(&b);
}

#endif
