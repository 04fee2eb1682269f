/* A loaded .pte as lowerscope holds it (pte_file.h): the file read once, its .ptd files, and
 * the tables of methods, named data and external tensors the CLI and the UI show. The
 * conversion of one method into a program is pte_load.c. */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>

#include "export.h"
#include "pte_file.h"
#include "pte_internal.h"
#include "ptrmap.h"

typedef struct file_index {
    ls_ptrmap named;    /* key → named index + 1 (the .pte's entry first) */
    ls_ptrmap ptd_key;  /* key → named index + 1 of the .ptd entry holding it */
    ls_ptrmap external; /* "method/key" → external index + 1 */
    ls_ptrmap external_key; /* key of any method's external tensor → 1 */
} file_index;

const char *ls_pte_method_kind_name(ls_pte_method_kind k)
{
    return k == LS_PTE_METHOD_CONSTANT ? "constant method" : "method";
}

/* ---- lifetime */

static void free_file(ls_pte_file *f)
{
    file_index *ix = f->index;
    if (ix) {
        ls_ptrmap_free(&ix->named);
        ls_ptrmap_free(&ix->ptd_key);
        ls_ptrmap_free(&ix->external);
        ls_ptrmap_free(&ix->external_key);
        free(ix);
    }
    ls_pte_free(&f->pte);
    for (uint32_t i = 0; i < f->n_ptds; i++) ls_ptd_free(&f->ptds[i]);
    free(f->ptds);
    free(f->ptd_paths);
    free(f->ptd_found);
    free(f->methods);
    free(f->method_names);
    for (uint32_t i = 0; i < f->n_named; i++) free(f->named[i].readers);
    free(f->named);
    free(f->externals);
    free(f);
}

static void destroy_origin(ls_origin *o)
{
    free_file((ls_pte_file *)o);
}

ls_pte_file *ls_pte_file_ref(ls_pte_file *f)
{
    if (f) ls_origin_ref(&f->origin);
    return f;
}

void ls_pte_file_unref(ls_pte_file *f)
{
    if (f) ls_origin_unref(&f->origin);
}

ls_delegate_view ls_program_delegate_view(const ls_program *p, const ls_submodule *s)
{
    const ls_pte_file *f = ls_program_pte_file(p);
    return ls_delegate_view_of(s, p->named_data, f ? f->method_names : NULL, f ? f->n_methods : 0);
}

ls_pte_file *ls_program_pte_file(const ls_program *p)
{
    return p && p->origin && p->origin->kind == LS_ORIGIN_PTE ? (ls_pte_file *)p->origin : NULL;
}

/* Segment bytes held by reference-counted blobs, so a program's tensors and delegate blobs
 * share them with the file's tables instead of taking them away. */
static void own_segments(ls_pte_blob *segs, uint32_t n)
{
    for (uint32_t i = 0; i < n; i++)
        if (!segs[i].owner && segs[i].v) {
            segs[i].owner = ls_blob_wrap(segs[i].v, (size_t)segs[i].n);
            segs[i].v = segs[i].owner->data;
        }
}

/* ---- what the runtime asks when a tensor has no bytes */

static const char *stem_ptd(const char *path)
{
    const char *base = strrchr(path, '/');
    base = base ? base + 1 : path;
    size_t n = strlen(base);
    if (n > 4 && strcmp(base + n - 4, ".pte") == 0) n -= 4;
    return ls_internf("%.*s.ptd", (int)n, base);
}

static const char *missing_data(const ls_origin *o, const char *target)
{
    const ls_pte_file *f = (const ls_pte_file *)o;
    for (uint32_t i = 0; i < f->n_externals; i++) {
        const ls_pte_external *e = &f->externals[i];
        if (e->key != target || e->ptd >= 0) continue;
        if (f->n_ptds) { /* data files were given or found, but none holds this key */
            ls_buf b = {0};
            for (uint32_t k = 0; k < f->n_ptds; k++) {
                const char *slash = strrchr(f->ptd_paths[k], '/');
                ls_buf_printf(&b, "%s%s", k ? ", " : "", slash ? slash + 1 : f->ptd_paths[k]);
            }
            const char *msg = ls_internf("'%s' is stored outside the program, and no .ptd in use holds it (%s): give "
                                         "the one that does with --data FILE.ptd",
                                         e->key, b.s);
            ls_buf_free(&b);
            return msg;
        }
        return ls_internf("'%s' is stored outside the program, in a .ptd data file that was not given: "
                          "run with --data FILE.ptd (exir writes it beside the .pte as %s or " LS_PTD_DEFAULT_NAME ")",
                          e->key, stem_ptd(f->path));
    }
    return NULL;
}

/* ---- tables */

static uint32_t count_instr(const ls_pte_plan *pl, int kind)
{
    uint32_t n = 0;
    for (uint32_t c = 0; c < pl->chains.n; c++)
        for (uint32_t i = 0; i < pl->chains.v[c].instructions.n; i++)
            n += kind < 0 || (int)pl->chains.v[c].instructions.v[i].kind == kind;
    return n;
}

static void build_methods(ls_pte_file *f)
{
    const ls_pte_plans *ps = &f->pte.execution_plan;
    f->methods = ls_calloc(ps->n ? ps->n : 1, sizeof *f->methods);
    f->method_names = ls_calloc(ps->n ? ps->n : 1, sizeof *f->method_names);
    for (uint32_t i = 0; i < ps->n; i++) {
        const ls_pte_plan *pl = &ps->v[i];
        ls_pte_method *m = &f->methods[f->n_methods++];
        m->name = ls_intern(pl->name ? pl->name : "");
        m->plan = i;
        m->n_inputs = pl->inputs.n;
        m->n_outputs = pl->outputs.n;
        m->n_instructions = count_instr(pl, -1);
        m->n_kernel_calls = count_instr(pl, LS_PTE_KERNEL_CALL);
        m->n_delegate_calls = count_instr(pl, LS_PTE_DELEGATE_CALL);
        m->n_delegates = pl->delegates.n;
        m->kind = m->n_instructions == 0 && m->n_inputs == 0 ? LS_PTE_METHOD_CONSTANT : LS_PTE_METHOD_RUN;
        f->method_names[i] = m->name;
    }
}

static void add_named(ls_pte_file *f, const char *key, int32_t ptd, uint32_t segment, uint64_t bytes)
{
    f->named = ls_realloc(f->named, sizeof *f->named * (f->n_named + 1));
    f->named[f->n_named++] = (ls_pte_named){.key = ls_intern(key ? key : ""), .ptd = ptd, .segment = segment, .bytes = bytes};
}

static void named_of_pte(ls_pte_file *f)
{
    const ls_pte *p = &f->pte;
    for (uint32_t i = 0; i < p->named_data.n; i++) {
        const ls_pte_named_data *nd = &p->named_data.v[i];
        uint64_t bytes = nd->segment_index < p->segments.n ? p->segments.v[nd->segment_index].size : 0;
        add_named(f, nd->key, -1, nd->segment_index, bytes);
    }
}

/* A .ptd's entries can join the file's: each one's bytes are there, and no key is one another
 * .ptd already holds (extension/named_data_map/merged_data_map.cpp: MergedDataMap::load refuses
 * "Duplicate key %s in named data maps"). */
static int check_ptd(const ls_pte_file *f, const ls_ptd *d, const char *path, ls_error *err)
{
    const file_index *ix = f->index;
    for (uint32_t i = 0; i < d->named_data.n; i++) {
        const ls_ptd_entry *e = &d->named_data.v[i];
        const uint8_t *data;
        size_t size;
        if (ls_ptd_entry_bytes(d, e, &data, &size, err) != 0) return -1;
        uintptr_t prev;
        if (ls_ptrmap_get(&ix->ptd_key, ls_intern(e->key ? e->key : ""), &prev))
            return ls_fail(err, "%s: duplicate key %s in named data maps: %s holds it too", path, e->key ? e->key : "",
                           f->ptd_paths[f->named[prev - 1].ptd]);
    }
    return 0;
}

static void append_ptd(ls_pte_file *f, ls_ptd *d, const char *path, bool found)
{
    file_index *ix = f->index;
    own_segments(d->segment_data, d->n_segment_data);
    uint32_t k = f->n_ptds++;
    f->ptds = ls_realloc(f->ptds, sizeof *f->ptds * f->n_ptds);
    f->ptd_paths = ls_realloc(f->ptd_paths, sizeof *f->ptd_paths * f->n_ptds);
    f->ptd_found = ls_realloc(f->ptd_found, sizeof *f->ptd_found * f->n_ptds);
    f->ptds[k] = *d;
    f->ptd_paths[k] = ls_intern(path);
    f->ptd_found[k] = found;
    for (uint32_t i = 0; i < d->named_data.n; i++) {
        const ls_ptd_entry *e = &d->named_data.v[i];
        const uint8_t *data;
        size_t size = 0;
        ls_ptd_entry_bytes(d, e, &data, &size, NULL); /* checked by check_ptd */
        const char *key = ls_intern(e->key ? e->key : "");
        add_named(f, key, (int32_t)k, e->segment_index, size);
        if (!ls_ptrmap_get(&ix->ptd_key, key, NULL)) ls_ptrmap_put(&ix->ptd_key, key, f->n_named);
        if (!ls_ptrmap_get(&ix->named, key, NULL)) ls_ptrmap_put(&ix->named, key, f->n_named);
    }
}

static void index_pte_named(ls_pte_file *f)
{
    file_index *ix = f->index;
    for (uint32_t i = 0; i < f->n_named; i++)
        if (f->named[i].ptd < 0 && !ls_ptrmap_get(&ix->named, f->named[i].key, NULL))
            ls_ptrmap_put(&ix->named, f->named[i].key, i + 1);
}

static void build_externals(ls_pte_file *f)
{
    file_index *ix = f->index;
    for (uint32_t m = 0; m < f->n_methods; m++) {
        const ls_pte_plan *pl = &f->pte.execution_plan.v[f->methods[m].plan];
        for (uint32_t v = 0; v < pl->values.n; v++) {
            const ls_pte_value *val = &pl->values.v[v];
            if (val->kind != LS_PTE_VAL_TENSOR || !val->tensor.has_extra_tensor_info ||
                val->tensor.extra_tensor_info.location != LS_PTE_TENSOR_EXTERNAL)
                continue;
            const ls_pte_tensor *t = &val->tensor;
            uint64_t bytes = 0;
            if (ls_pte_tensor_nbytes(t, &bytes, NULL) != 0) bytes = 0;
            const char *key = ls_intern(t->extra_tensor_info.fully_qualified_name ? t->extra_tensor_info.fully_qualified_name : "");
            f->externals = ls_realloc(f->externals, sizeof *f->externals * (f->n_externals + 1));
            f->externals[f->n_externals++] = (ls_pte_external){.key = key,
                                                               .method = f->methods[m].name,
                                                               .value = v,
                                                               .trainable = t->has_allocation_info,
                                                               .bytes = bytes,
                                                               .ptd = -1};
            ls_ptrmap_put(&ix->external, ls_internf("%s/%s", f->methods[m].name, key), f->n_externals);
            ls_ptrmap_put(&ix->external_key, key, 1);
        }
    }
}

static uint32_t resolve_externals(ls_pte_file *f)
{
    file_index *ix = f->index;
    uint32_t missing = 0;
    for (uint32_t i = 0; i < f->n_externals; i++) {
        uintptr_t k;
        ls_pte_external *e = &f->externals[i];
        e->ptd = ls_ptrmap_get(&ix->ptd_key, e->key, &k) ? f->named[k - 1].ptd : -1;
        missing += e->ptd < 0;
    }
    return missing;
}

/* The delegates whose blob names a key: a flatbuffer string (a 32-bit length, the bytes, a NUL)
 * equal to the key, found by reading the blob once at every 4-byte boundary (flatbuffers align
 * a string's length to 4). XNNPACK's blob names its named_data keys this way
 * (backends/xnnpack/serialization/schema.fbs: ConstantDataOffset.named_key). */
static void find_readers(ls_pte_file *f)
{
    if (!f->n_named) return;
    ls_strmap keys = {0};
    uint8_t lengths[512] = {0}; /* bitset of key lengths below 4096 */
    for (uint32_t i = 0; i < f->n_named; i++) {
        bool added;
        size_t n = strlen(f->named[i].key);
        ls_strmap_add(&keys, f->named[i].key, ls_strmap_hash(f->named[i].key, n), i, &added);
        if (n < 4096) lengths[n >> 3] |= (uint8_t)(1u << (n & 7));
    }
    for (uint32_t m = 0; m < f->n_methods; m++) {
        const ls_pte_plan *pl = &f->pte.execution_plan.v[f->methods[m].plan];
        for (uint32_t d = 0; d < pl->delegates.n; d++) {
            const uint8_t *blob;
            size_t size;
            if (ls_pte_delegate_blob(&f->pte, &pl->delegates.v[d], &blob, &size, NULL) != 0 || !blob) continue;
            ls_pte_delegate_ref ref = {f->methods[m].name, d, ls_internf("lowered_module_%u", d)};
            for (size_t off = 0; off + 5 <= size; off += 4) {
                uint32_t len = (uint32_t)ls_le_get(blob + off, 4);
                if (len >= 4096 || !(lengths[len >> 3] & (1u << (len & 7))) || len > size - off - 5) continue;
                const char *s = (const char *)blob + off + 4;
                if (s[len] != 0 || memchr(s, 0, len)) continue;
                ls_strmap_slot *slot = ls_strmap_find(&keys, s, ls_strmap_hash(s, len));
                if (!slot) continue;
                ls_pte_named *e = &f->named[slot->val];
                bool seen = false;
                for (uint32_t r = 0; r < e->n_readers && !seen; r++)
                    seen = e->readers[r].method == ref.method && e->readers[r].index == d;
                if (seen) continue;
                e->readers = ls_realloc(e->readers, sizeof *e->readers * (e->n_readers + 1));
                e->readers[e->n_readers++] = ref;
            }
        }
    }
    ls_strmap_free(&keys);
}

/* ---- opening */

static ls_pte_file *new_file(const char *where)
{
    ls_pte_file *f = ls_calloc(1, sizeof *f);
    f->origin = (ls_origin){.refs = 1, .kind = LS_ORIGIN_PTE, .destroy = destroy_origin, .missing_data = missing_data};
    f->path = ls_intern(where ? where : "program.pte");
    f->index = ls_calloc(1, sizeof(file_index));
    return f;
}

/* A .ptd given by the user: one that cannot be read or joined is an error. */
static int add_ptd(ls_pte_file *f, const char *path, ls_error *err)
{
    ls_ptd d;
    if (ls_ptd_read_file(path, &d, err) != 0) return -1;
    if (check_ptd(f, &d, path, err) != 0) {
        ls_ptd_free(&d);
        return -1;
    }
    append_ptd(f, &d, path, false);
    return 0;
}

static bool is_file(const char *path)
{
    struct stat st;
    return stat(path, &st) == 0 && S_ISREG(st.st_mode);
}

/* The data files exir writes beside a .pte (pte_file.h): STEM.ptd, then the default name. */
static void find_beside(ls_pte_file *f)
{
    const char *path = f->path;
    size_t n = strlen(path);
    size_t stem = n > 4 && strcmp(path + n - 4, ".pte") == 0 ? n - 4 : n;
    const char *slash = strrchr(path, '/');
    int dir = slash ? (int)(slash - path + 1) : 0;
    const char *cand[2] = {ls_internf("%.*s.ptd", (int)stem, path), ls_internf("%.*s" LS_PTD_DEFAULT_NAME, dir, path)};
    for (int i = 0; i < 2 && f->n_missing; i++) {
        bool given = false;
        for (uint32_t k = 0; k < f->n_ptds && !given; k++) given = f->ptd_paths[k] == cand[i];
        if (given || !is_file(cand[i])) continue;
        ls_error e2;
        ls_ptd d;
        if (ls_ptd_read_file(cand[i], &d, &e2) != 0) continue; /* not a data file after all: leave it */
        if (check_ptd(f, &d, cand[i], &e2) != 0) {
            ls_ptd_free(&d);
            continue;
        }
        append_ptd(f, &d, cand[i], true);
        f->n_missing = resolve_externals(f);
    }
}

static void finish_tables(ls_pte_file *f)
{
    build_methods(f);
    named_of_pte(f);
    index_pte_named(f);
}

ls_pte_file *ls_pte_file_adopt(ls_pte *pte, const char *where)
{
    ls_pte_file *f = new_file(where);
    f->pte = *pte;
    memset(pte, 0, sizeof *pte);
    own_segments(f->pte.segment_data, f->pte.n_segment_data);
    finish_tables(f);
    build_externals(f);
    f->n_missing = resolve_externals(f);
    find_readers(f);
    return f;
}

int ls_pte_file_open(const char *path, const char *const *data, uint32_t n_data, ls_pte_file **out, ls_error *err)
{
    *out = NULL;
    ls_pte_file *f = new_file(path);
    if (ls_pte_read_file(path, &f->pte, err) != 0) {
        free_file(f);
        return -1;
    }
    own_segments(f->pte.segment_data, f->pte.n_segment_data);
    finish_tables(f);
    for (uint32_t i = 0; i < n_data; i++)
        if (add_ptd(f, data[i], err) != 0) {
            free_file(f);
            return -1;
        }
    build_externals(f);
    f->n_missing = resolve_externals(f);
    find_beside(f);
    find_readers(f);
    *out = f;
    return 0;
}

/* ---- lookups */

const ls_pte_method *ls_pte_file_find_method(const ls_pte_file *f, const char *name)
{
    if (!name) return NULL;
    for (uint32_t i = 0; i < f->n_methods; i++) /* a few methods; the QNN llama's 29 at most so far */
        if (strcmp(f->methods[i].name, name) == 0) return &f->methods[i];
    return NULL;
}

const ls_pte_method *ls_pte_file_default_method(const ls_pte_file *f)
{
    const ls_pte_method *m = ls_pte_file_find_method(f, "forward");
    for (uint32_t i = 0; i < f->n_methods && !m; i++)
        if (f->methods[i].n_instructions) m = &f->methods[i];
    return m ? m : f->n_methods ? &f->methods[0] : NULL;
}

void ls_pte_file_methods_text(const ls_pte_file *f, ls_buf *b)
{
    uint32_t shown = 0, constants = 0;
    for (uint32_t i = 0; i < f->n_methods; i++) constants += f->methods[i].kind == LS_PTE_METHOD_CONSTANT;
    bool fold = constants > 4; /* many constant methods: counted, not listed */
    for (uint32_t i = 0; i < f->n_methods; i++) {
        if (fold && f->methods[i].kind == LS_PTE_METHOD_CONSTANT) continue;
        ls_buf_printf(b, "%s%s", shown++ ? ", " : "", f->methods[i].name);
    }
    if (fold) ls_buf_printf(b, "%s%u constant methods", shown ? " and " : "", constants);
    if (!f->n_methods) ls_buf_puts(b, "none");
}

int ls_pte_file_method(ls_pte_file *f, const char *method, ls_program **out, ls_error *err)
{
    *out = NULL;
    const ls_pte_method *m = method ? ls_pte_file_find_method(f, method) : ls_pte_file_default_method(f);
    if (!m) {
        ls_buf b = {0};
        ls_pte_file_methods_text(f, &b);
        int rc = method ? ls_fail(err, "%s: no method '%s' (methods: %s)", f->path, method, b.s)
                        : ls_fail(err, "%s: the program has no execution plan", f->path);
        ls_buf_free(&b);
        return rc;
    }
    int rc = lsp_program_from_pte(f, m->plan, out, err);
    if (rc == 0) (*out)->as_read = true; /* until a pass or an edit makes another program */
    return rc;
}

const ls_pte_named *ls_pte_file_named(const ls_pte_file *f, const char *key)
{
    uintptr_t i;
    const file_index *ix = f->index;
    return key && ls_ptrmap_get(&ix->named, ls_intern(key), &i) ? &f->named[i - 1] : NULL;
}

int ls_pte_file_named_bytes(const ls_pte_file *f, const ls_pte_named *e, const uint8_t **data, size_t *size,
                            ls_error *err)
{
    if (e->ptd < 0) return ls_pte_segment_bytes(&f->pte, e->segment, data, size, err);
    const ls_ptd *d = &f->ptds[e->ptd];
    for (uint32_t i = 0; i < d->named_data.n; i++)
        if (d->named_data.v[i].key && ls_intern(d->named_data.v[i].key) == e->key)
            return ls_ptd_entry_bytes(d, &d->named_data.v[i], data, size, err);
    return ls_fail(err, "%s: no entry \"%s\"", f->ptd_paths[e->ptd], e->key);
}

const ls_pte_external *ls_pte_file_external(const ls_pte_file *f, const char *method, const char *key)
{
    uintptr_t i;
    const file_index *ix = f->index;
    if (!method || !key) return NULL;
    return ls_ptrmap_get(&ix->external, ls_internf("%s/%s", method, key), &i) ? &f->externals[i - 1] : NULL;
}

bool ls_pte_file_is_external(const ls_pte_file *f, const char *key)
{
    const file_index *ix = f->index;
    return key && ls_ptrmap_get(&ix->external_key, ls_intern(key), NULL);
}

uint64_t ls_pte_file_named_total(const ls_pte_file *f)
{
    uint64_t n = 0;
    for (uint32_t i = 0; i < f->n_named; i++) n += f->named[i].bytes;
    return n;
}

bool ls_pte_named_is_tensor(const ls_pte_file *f, const ls_pte_named *e)
{
    return e->ptd >= 0 && ls_pte_file_is_external(f, e->key);
}

uint32_t ls_pte_file_delegate_data(const ls_pte_file *f, uint64_t *bytes)
{
    uint32_t n = 0;
    *bytes = 0;
    for (uint32_t i = 0; i < f->n_named; i++)
        if (!ls_pte_named_is_tensor(f, &f->named[i])) {
            n++;
            *bytes += f->named[i].bytes;
        }
    return n;
}

/* ---- the loader reader.c calls */

int ls_load_pte_opts(const char *path, const char *method, const char *const *data, uint32_t n_data, ls_program **out,
                     ls_error *err)
{
    *out = NULL;
    ls_pte_file *f;
    if (ls_pte_file_open(path, data, n_data, &f, err) != 0) return -1;
    int rc = ls_pte_file_method(f, method, out, err);
    ls_pte_file_unref(f); /* the program holds it */
    return rc;
}

int ls_load_pte(const char *path, const char *method, ls_program **out, ls_error *err)
{
    return ls_load_pte_opts(path, method, NULL, 0, out, err);
}

int ls_program_from_pte(ls_pte *pte, const char *method, const char *where, ls_program **out, ls_error *err)
{
    ls_pte_file *f = ls_pte_file_adopt(pte, where);
    int rc = ls_pte_file_method(f, method, out, err);
    ls_pte_file_unref(f);
    return rc;
}
