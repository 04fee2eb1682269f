/* Helpers shared by the readers: JSON unions in both encodings, numbers, TensorMeta, parse
 * errors with a line and column, and the in-memory weight source. */
#include <inttypes.h>
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "ptrmap.h"
#include "read_internal.h"

const cJSON *ls_junion(const cJSON *obj, const char **kind)
{
    if (kind) *kind = NULL;
    if (!obj || !cJSON_IsObject(obj) || !obj->child) return NULL;
    const cJSON *first = obj->child;
    for (const cJSON *c = first; c; c = c->next)
        if (!cJSON_IsNull(c)) {
            if (kind) *kind = c->string;
            return c;
        }
    /* every member null: the member in use held null itself ({"as_none": null}) */
    if (kind) *kind = first->string;
    return first;
}

bool ls_jint(const cJSON *v, int64_t *out)
{
    if (!v || !cJSON_IsNumber(v)) return false;
    double d = v->valuedouble;
    if (d != d) return false;
    /* 2^63 does not fit: files write INT64_MAX for "to the end" (slice), which a double rounds up */
    if (d >= 9223372036854775807.0) *out = INT64_MAX;
    else if (d <= -9223372036854775807.0) *out = INT64_MIN;
    else *out = (int64_t)d;
    return true;
}

bool ls_jfloat(const cJSON *v, double *out)
{
    if (!v) return false;
    if (cJSON_IsNumber(v)) {
        *out = v->valuedouble;
        return true;
    }
    const char *s = ls_jstr(v);
    if (!s) return false;
    if (strcmp(s, "Infinity") == 0 || strcmp(s, "inf") == 0) *out = INFINITY;
    else if (strcmp(s, "-Infinity") == 0 || strcmp(s, "-inf") == 0) *out = -INFINITY;
    else if (strcmp(s, "NaN") == 0 || strcmp(s, "nan") == 0) *out = NAN;
    else return false;
    return true;
}

int ls_read_symint(const cJSON *s, int64_t *v, const char **sym, ls_error *err)
{
    *sym = NULL;
    *v = -1;
    if (s && cJSON_IsNumber(s)) return ls_jint(s, v) ? 0 : ls_fail(err, "bad integer");
    const char *kind;
    const cJSON *m = ls_junion(s, &kind);
    if (!m) return ls_fail(err, "expected a SymInt object");
    if (strcmp(kind, "as_int") == 0) {
        if (!ls_jint(m, v)) return ls_fail(err, "as_int is not a number");
        return 0;
    }
    if (strcmp(kind, "as_expr") == 0) {
        /* {"expr_str": "s0", "hint": {"as_int": 4}} — old files: "hint": 4, or the bare string */
        const char *expr = ls_jstr(m) ? ls_jstr(m) : ls_jstr(ls_jget(m, "expr_str"));
        if (!expr) return ls_fail(err, "as_expr without expr_str");
        *sym = ls_intern(expr);
        const cJSON *hint = ls_jget(m, "hint");
        if (hint && !ls_jint(hint, v)) {
            const char *hk;
            const cJSON *h = ls_junion(hint, &hk);
            if (!h || !ls_jint(h, v)) *v = -1;
        }
        return 0;
    }
    return ls_fail(err, "unexpected SymInt member '%s'", kind);
}

int ls_read_tmeta(const cJSON *tm, ls_tmeta *m, int64_t *strides, int64_t *offset, ls_error *err)
{
    memset(m, 0, sizeof *m);
    if (!tm || !cJSON_IsObject(tm)) return ls_fail(err, "expected a TensorMeta object");
    if (!ls_jget(tm, "dtype") && ls_jget(tm, "meta")) tm = ls_jget(tm, "meta"); /* schema 1 */
    int64_t code;
    if (!ls_jint(ls_jget(tm, "dtype"), &code)) return ls_fail(err, "TensorMeta without a dtype");
    m->dtype = ls_dtype_from_export((int)code);
    const cJSON *sizes = ls_jget(tm, "sizes");
    if (!sizes || !cJSON_IsArray(sizes)) return ls_fail(err, "TensorMeta without sizes");
    int nd = cJSON_GetArraySize(sizes);
    if (nd > LS_MAX_DIMS) return ls_fail(err, "%d dimensions, more than the %d lowerscope supports", nd, LS_MAX_DIMS);
    m->ndim = (uint8_t)nd;
    int d = 0;
    for (const cJSON *s = sizes->child; s; s = s->next, d++) {
        if (ls_read_symint(s, &m->sizes[d], &m->sym[d], err) != 0) return ls_fail_prefix(err, "size %d", d);
        if (!m->sym[d] && m->sizes[d] < 0)
            return ls_fail(err, "negative size %" PRId64 " in dimension %d", m->sizes[d], d);
        m->dim_order[d] = (uint8_t)d;
    }
    /* what the shape claims, before anyone allocates from it */
    uint64_t numel = 1;
    bool overflow = false;
    for (d = 0; d < nd; d++) {
        uint64_t s = m->sizes[d] < 0 ? 0 : (uint64_t)m->sizes[d];
        if (s && numel > UINT64_MAX / s) overflow = true;
        else numel *= s;
    }
    size_t es = ls_dtype_size(m->dtype) ? ls_dtype_size(m->dtype) : 1;
    if (overflow || numel > LS_READ_MAX_TENSOR_BYTES / es) {
        char s[160];
        return ls_fail(err, "%s claims %s%.3g elements (%.3g bytes), more than the %.3g bytes lowerscope accepts",
                       ls_tmeta_str(m, s, sizeof s), overflow ? "over " : "", overflow ? 1.8e19 : (double)numel,
                       overflow ? 1.8e19 : (double)numel * (double)es, (double)LS_READ_MAX_TENSOR_BYTES);
    }
    const cJSON *rg = ls_jget(tm, "requires_grad");
    m->requires_grad = rg && cJSON_IsTrue(rg);
    int64_t st[LS_MAX_DIMS];
    bool have_strides = false;
    const cJSON *sa = ls_jget(tm, "strides");
    if (sa && cJSON_IsArray(sa) && cJSON_GetArraySize(sa) == nd) {
        have_strides = true;
        d = 0;
        for (const cJSON *s = sa->child; s; s = s->next, d++) {
            const char *sym;
            if (ls_read_symint(s, &st[d], &sym, err) != 0) return ls_fail_prefix(err, "stride %d", d);
            if (sym || st[d] < 0) have_strides = false; /* symbolic: treat as contiguous */
        }
    }
    if (!have_strides) { /* contiguous */
        int64_t acc = 1;
        for (d = nd - 1; d >= 0; d--) {
            st[d] = acc;
            acc *= m->sizes[d] > 0 ? m->sizes[d] : 1;
        }
    } else {
        /* dim order: dimensions by decreasing stride, ties in index order (insertion sort) */
        for (int i = 1; i < nd; i++) {
            uint8_t di = m->dim_order[i];
            int j = i - 1;
            while (j >= 0 && st[m->dim_order[j]] < st[di]) {
                m->dim_order[j + 1] = m->dim_order[j];
                j--;
            }
            m->dim_order[j + 1] = di;
        }
    }
    if (strides) memcpy(strides, st, sizeof(int64_t) * (size_t)nd);
    if (offset) {
        *offset = 0;
        const cJSON *so = ls_jget(tm, "storage_offset");
        const char *sym;
        if (so && (ls_read_symint(so, offset, &sym, err) != 0 || sym || *offset < 0))
            return ls_fail(err, "bad storage_offset");
    }
    return 0;
}

/* ---- parsing with a useful message */

cJSON *ls_json_parse(const char *where, const char *text, size_t len, ls_error *err)
{
    if (len == 0) {
        ls_fail(err, "%s: empty file", where);
        return NULL;
    }
    const char *end = NULL;
    cJSON *root = cJSON_ParseWithLengthOpts(text, len, &end, false);
    if (root) {
        /* only whitespace may follow the value */
        const char *p = end;
        while (p < text + len && (*p == ' ' || *p == '\n' || *p == '\r' || *p == '\t' || *p == 0)) p++;
        if (p == text + len) return root;
        cJSON_Delete(root);
        end = p;
    } else {
        end = cJSON_GetErrorPtr();
    }
    if (!end || end < text || end > text + len) end = text + len;
    /* Line and column of the failure, and how deep the nesting was there: cJSON refuses more
     * than CJSON_NESTING_LIMIT levels, which deserves its own message. */
    size_t line = 1, col = 1;
    int depth = 0, max_depth = 0;
    bool in_str = false;
    for (const char *p = text; p < end; p++) {
        if (*p == '\n') line++, col = 1;
        else col++;
        if (in_str) {
            if (*p == '\\' && p + 1 < end) p++, col++;
            else if (*p == '"') in_str = false;
        } else if (*p == '"') in_str = true;
        else if (*p == '[' || *p == '{') {
            if (++depth > max_depth) max_depth = depth;
        } else if (*p == ']' || *p == '}') depth--;
    }
    if (max_depth >= CJSON_NESTING_LIMIT)
        ls_fail(err, "%s: line %zu, column %zu: JSON nested deeper than %d levels, more than the JSON parser accepts",
                where, line, col, CJSON_NESTING_LIMIT);
    else if (end >= text + len)
        ls_fail(err, "%s: line %zu, column %zu: invalid JSON: the text ends before the value is complete", where, line,
                col);
    else {
        char near[24];
        size_t n = 0;
        for (const char *p = end; p < text + len && n < 16 && *p != '\n'; p++) near[n++] = *p;
        near[n] = 0;
        ls_fail(err, "%s: line %zu, column %zu: invalid JSON near '%s'", where, line, col, near);
    }
    return NULL;
}

/* ---- weight sources */

void ls_weight_source_free(ls_weight_source *ws)
{
    if (!ws) return;
    if (ws->release) ws->release(ws);
    free(ws);
}

typedef struct mem_entry {
    const char *rel; /* interned */
    ls_blob *data;
} mem_entry;

typedef struct mem_source {
    LS_VEC(mem_entry) entries;
    ls_ptrmap index; /* rel → position in entries */
} mem_source;

static mem_entry *mem_find(ls_weight_source *ws, const char *rel)
{
    mem_source *m = ws->impl;
    uintptr_t i;
    return ls_ptrmap_get(&m->index, ls_intern(rel), &i) ? &m->entries.v[i] : NULL;
}

static bool mem_has(ls_weight_source *ws, const char *rel)
{
    return mem_find(ws, rel) != NULL;
}

static int mem_read(ls_weight_source *ws, const char *rel, ls_blob **out, ls_error *err)
{
    mem_entry *e = mem_find(ws, rel);
    if (!e) return ls_fail(err, "%s: no member %s", ws->where, rel);
    *out = ls_blob_ref(e->data);
    return 0;
}

static void mem_release(ls_weight_source *ws)
{
    mem_source *m = ws->impl;
    for (uint32_t i = 0; i < m->entries.n; i++) ls_blob_unref(m->entries.v[i].data);
    free(m->entries.v);
    ls_ptrmap_free(&m->index);
    free(m);
}

ls_weight_source *ls_weight_source_memory(const char *where, const char *model)
{
    ls_weight_source *ws = ls_calloc(1, sizeof *ws);
    ws->where = ls_intern(where);
    ws->model = ls_intern(model ? model : "model");
    ws->has = mem_has;
    ws->read = mem_read;
    ws->release = mem_release;
    ws->impl = ls_calloc(1, sizeof(mem_source));
    return ws;
}

void ls_weight_source_memory_add(ls_weight_source *ws, const char *rel, ls_blob *data)
{
    mem_source *m = ws->impl;
    mem_entry e = {ls_intern(rel), data};
    mem_entry *old = mem_find(ws, rel);
    if (old) {
        ls_blob_unref(old->data);
        *old = e;
        return;
    }
    ls_ptrmap_put(&m->index, e.rel, m->entries.n);
    ls_vec_push(&m->entries, e);
}
