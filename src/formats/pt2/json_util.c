/* Helpers shared by the readers: JSON unions in both encodings, numbers, TensorMeta, parse
 * errors with a line and column, and the in-memory weight source. */
#include <inttypes.h>
#include <math.h>
#include <pthread.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "ptrmap.h"
#include "pt2_internal.h"
#include "safe_text.h"

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
    if (ls_key_is(s, "Infinity") || ls_key_is(s, "inf")) *out = INFINITY;
    else if (ls_key_is(s, "-Infinity") || ls_key_is(s, "-inf")) *out = -INFINITY;
    else if (ls_key_is(s, "NaN") || ls_key_is(s, "nan")) *out = NAN;
    else return false;
    return true;
}

int ls_read_symint(const cJSON *s, int64_t *v, const char **sym, ls_error *err)
{
    *sym = NULL;
    *v = -1;
    const cJSON *c = s ? s->child : NULL; /* the common case: {"as_int": N} */
    if (c && !c->next && c->string && cJSON_IsNumber(c) && ls_key_is(c->string, "as_int") && ls_jint(c, v))
        return 0;
    if (s && cJSON_IsNumber(s)) return ls_jint(s, v) ? 0 : ls_fail(err, "bad integer");
    const char *kind;
    const cJSON *m = ls_junion(s, &kind);
    if (!m) return ls_fail(err, "expected a SymInt object");
    if (ls_key_is(kind, "as_int")) {
        if (!ls_jint(m, v)) return ls_fail(err, "as_int is not a number");
        return 0;
    }
    if (ls_key_is(kind, "as_expr")) {
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
    /* one pass over the members; schema 1 wraps them: {"meta": TensorMeta} */
    const cJSON *dtype = NULL, *sizes = NULL, *rg = NULL, *sa = NULL, *so = NULL, *meta = NULL;
    for (int round = 0; round < 2 && tm; round++) {
        for (const cJSON *c = tm->child; c; c = c->next) {
            const char *k = c->string;
            if (!k || cJSON_IsNull(c)) continue;
            if (ls_key_is(k, "dtype")) dtype = c;
            else if (ls_key_is(k, "sizes")) sizes = c;
            else if (ls_key_is(k, "strides")) sa = c;
            else if (ls_key_is(k, "storage_offset")) so = c;
            else if (ls_key_is(k, "requires_grad")) rg = c;
            else if (ls_key_is(k, "meta")) meta = c;
        }
        tm = !dtype && meta && cJSON_IsObject(meta) ? meta : NULL;
    }
    int64_t code;
    if (!ls_jint(dtype, &code)) return ls_fail(err, "TensorMeta without a dtype");
    m->dtype = ls_dtype_from_export((int)code);
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
    if (ls_read_check_shape(m, err) != 0) return -1;
    m->requires_grad = rg && cJSON_IsTrue(rg);
    int64_t st[LS_MAX_DIMS];
    bool have_strides = false;
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
        const char *sym;
        if (so && (ls_read_symint(so, offset, &sym, err) != 0 || sym || *offset < 0))
            return ls_fail(err, "bad storage_offset");
    }
    return 0;
}

/* ---- an arena for cJSON while a program loads
 *
 * cJSON allocates every item and string with malloc; for a big program that is millions of
 * small allocations to make and, with cJSON_Delete, to free again, which costs as much as the
 * parse itself. While a load runs, cJSON allocates from large chunks instead, and the tree is
 * dropped in one go at the end. cJSON's hooks are global: loads take a lock around them, and
 * nothing else in lowerscope may parse JSON on another thread while a load runs. */

typedef struct arena_chunk {
    struct arena_chunk *next;
    size_t cap;
    max_align_t data[];
} arena_chunk;

static pthread_mutex_t arena_lock = PTHREAD_MUTEX_INITIALIZER;
static arena_chunk *arena_head; /* chunks in use by the load under way */
static _Thread_local int arena_depth;

#define ARENA_CHUNK_MAX ((size_t)64 << 20)

/* Chunks come from the heap, even the large ones: the command keeps freed heap memory
 * (ls_memory_keep_freed), so once the load is done the passes reuse the chunks' pages, as a
 * second load would. Chunks mapped on their own sat unused after the load (MADV_FREE gives
 * pages back only when the kernel runs short), and at a million nodes the passes faulted in
 * 165 MB of fresh pages beside them (the peak RSS: 1808 -> 1643 MB). */
static arena_chunk *chunk_new(size_t cap)
{
    arena_chunk *c = ls_malloc(sizeof(arena_chunk) + cap);
    c->cap = cap;
    return c;
}

/* cJSON asks for millions of items (64 bytes) and short strings: 8-byte granules are enough for
 * both (no cJSON field needs more), and the common case is a pointer bump. */
static char *arena_next, *arena_end; /* free space of arena_head */

/* A new chunk for n bytes and more; kept out of arena_malloc so its fast path stays a bump. */
static arena_chunk *arena_reuse; /* chunks a rewind gave back, for the next growth */

static __attribute__((noinline)) void *arena_grow(size_t n)
{
    size_t cap = arena_head ? arena_head->cap * 2 : (size_t)1 << 20;
    if (cap > ARENA_CHUNK_MAX) cap = ARENA_CHUNK_MAX;
    if (cap < n) cap = n;
    arena_chunk *c = NULL;
    if (arena_reuse && arena_reuse->cap >= n) {
        c = arena_reuse;
        arena_reuse = c->next;
    } else {
        c = chunk_new(cap);
    }
    c->next = arena_head;
    arena_head = c;
    arena_next = (char *)c->data + n;
    arena_end = (char *)c->data + c->cap;
    return c->data;
}

static void *arena_malloc(size_t n)
{
    n = (n + 7) & ~(size_t)7;
    if ((size_t)(arena_end - arena_next) < n) return arena_grow(n);
    void *p = arena_next;
    arena_next += n;
    return p;
}

static void arena_free(void *p)
{
    (void)p; /* everything goes at ls_json_arena_end */
}

void ls_json_arena_begin(void)
{
    if (arena_depth++) return; /* a lowered module's program inside a load: same arena */
    pthread_mutex_lock(&arena_lock);
    cJSON_Hooks hooks = {arena_malloc, arena_free};
    cJSON_InitHooks(&hooks);
}

void ls_json_arena_end(void)
{
    if (--arena_depth) return;
    cJSON_InitHooks(NULL);
    arena_next = arena_end = NULL;
    while (arena_head) {
        arena_chunk *next = arena_head->next;
        free(arena_head);
        arena_head = next;
    }
    while (arena_reuse) {
        arena_chunk *next = arena_reuse->next;
        free(arena_reuse);
        arena_reuse = next;
    }
    pthread_mutex_unlock(&arena_lock);
}

ls_json_mark ls_json_arena_mark(void)
{
    return (ls_json_mark){arena_head, arena_next, arena_end};
}

void ls_json_arena_rewind(ls_json_mark m)
{
    if (!arena_depth) return;
    while (arena_head && arena_head != (arena_chunk *)m.head) { /* newer chunks: kept for reuse */
        arena_chunk *c = arena_head;
        arena_head = c->next;
        c->next = arena_reuse;
        arena_reuse = c;
    }
    arena_next = m.next;
    arena_end = m.end;
}

void ls_json_free(cJSON *j)
{
    if (!arena_depth) cJSON_Delete(j); /* in an arena the tree goes with it */
}

/* ---- parsing with a useful message */

/* Line and column of byte `at` of text, for messages. */
static void line_col(const char *text, size_t at, size_t *line, size_t *col)
{
    *line = 1;
    const char *start = text;
    for (const char *p = text; p < text + at; p++)
        if (*p == '\n') (*line)++, start = p + 1;
    *col = (size_t)(text + at - start) + 1;
}

/* The first byte below 0x20 that is not a tab, newline or carriage return, or len. JSON has
 * such a byte nowhere (RFC 8259: outside strings only those three and space are whitespace,
 * inside strings every control is escaped), and torch's json.loads (strict) refuses it; cJSON
 * skips it as whitespace, or keeps it in a string, and a NUL there cuts a name short. Eight bytes
 * at a time: a word with no byte below 0x20 is passed at once (most words of an indented file). */
static size_t first_raw_control(const char *text, size_t len)
{
    const unsigned char *s = (const unsigned char *)text;
    size_t i = 0;
    for (; i + 8 <= len; i += 8) {
        uint64_t w;
        memcpy(&w, s + i, 8);
        if (!((w - 0x2020202020202020ull) & ~w & 0x8080808080808080ull)) continue;
        for (size_t k = i; k < i + 8; k++)
            if (s[k] < 0x20 && s[k] != '\t' && s[k] != '\n' && s[k] != '\r') return k;
    }
    for (; i < len; i++)
        if (s[i] < 0x20 && s[i] != '\t' && s[i] != '\n' && s[i] != '\r') return i;
    return len;
}

/* What cJSON would accept but lowerscope must not: bytes that are not UTF-8 (torch's loader
 * decodes the file as UTF-8 first and fails on them: torch/_export/serde/serialize.py,
 * deserialize, artifact.exported_program.decode("utf-8")), a raw control byte (above), and \u0000 in a string, which a C
 * string would cut short. Escapes only occur inside strings, so a scan of backslashes finds
 * every \u0000 without following the strings themselves. */
int ls_json_check_text(const char *where, const char *text, size_t len, ls_error *err)
{
    const char *why;
    size_t bad = ls_utf8_check(text, len, &why), line, col;
    if (bad < len) {
        line_col(text, bad, &line, &col);
        return ls_fail(err, "%s: byte %zu (line %zu, column %zu): invalid UTF-8 (byte 0x%02x: %s), which torch's loader "
                       "refuses too", where, bad, line, col, (unsigned char)text[bad], why);
    }
    bad = first_raw_control(text, len);
    if (bad < len) {
        line_col(text, bad, &line, &col);
        return ls_fail(err, "%s: byte %zu (line %zu, column %zu): a raw control byte 0x%02x, which JSON allows nowhere "
                       "(a string spells it \\u%04x) and torch's loader refuses (json.loads is strict)", where, bad, line, col, (unsigned char)text[bad], (unsigned char)text[bad]);
    }
    for (const char *p = memchr(text, '\\', len); p; p = memchr(p, '\\', len - (size_t)(p - text))) {
        if (p + 6 <= text + len && memcmp(p + 1, "u0000", 5) == 0) {
            line_col(text, (size_t)(p - text), &line, &col);
            return ls_fail(err, "%s: byte %zu (line %zu, column %zu): \\u0000 in a string: lowerscope's names end at a NUL, "
                           "so the file is refused rather than a name cut short", where, (size_t)(p - text), line, col);
        }
        p += 2; /* the escaped character: \\ is one backslash */
        if (p >= text + len) break;
    }
    return 0;
}

cJSON *ls_json_parse(const char *where, const char *text, size_t len, ls_error *err)
{
    if (len == 0) {
        ls_fail(err, "%s: empty file", where);
        return NULL;
    }
    if (ls_json_check_text(where, text, len, err) != 0) return NULL;
    const char *was = ls_reading(ls_intern(where)); /* parsing: the tree can be 10x the text */
    const char *end = NULL;
    cJSON *root = cJSON_ParseWithLengthOpts(text, len, &end, false);
    ls_reading(was);
    if (root) {
        /* only whitespace may follow the value */
        const char *p = end;
        while (p < text + len && (*p == ' ' || *p == '\n' || *p == '\r' || *p == '\t' || *p == 0)) p++;
        if (p == text + len) return root;
        ls_json_free(root);
        end = p;
    } else {
        end = cJSON_GetErrorPtr();
    }
    ls_json_fail_at(where, text, len, end, err);
    return NULL;
}

void ls_json_fail_at(const char *where, const char *text, size_t len, const char *end, ls_error *err)
{
    ls_json_pos start = {.line = 1, .col = 1};
    ls_json_fail_from(where, text, len, &start, end, err);
}

void ls_json_fail_from(const char *where, const char *text, size_t len, const ls_json_pos *from, const char *end,
                       ls_error *err)
{
    if (!end || end < text || end > text + len) end = text + len;
    if (end < text + from->at) end = text + from->at;
    /* Line and column of the failure, and how deep the nesting was there: cJSON refuses more
     * than CJSON_NESTING_LIMIT levels, which deserves its own message. */
    size_t line = from->line, col = from->col;
    int depth = from->depth, max_depth = from->max_depth;
    bool in_str = false; /* `from` is never inside a string */
    for (const char *p = text + from->at; p < end; p++) {
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
