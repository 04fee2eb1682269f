/* Reading an ETRecord (etrecord.h): its programs become the steps of the history (ls_recorded),
 * the last one the program loaded; its debug-handle and delegate maps stay as JSON for the
 * ETDump mapping (etdump_map.c). Member names follow _etrecord.py's ETRecordReservedFileNames
 * and parse_etrecord: a member that is not reserved and has none of the three pickle suffixes
 * is a program. */
#include <stdlib.h>
#include <string.h>
#include <zip.h>

#include "../formats.h"
#include "etrecord.h"

enum { M_EXPORTED, M_EXTRA, M_EDGE, M_ET, M_KINDS };

typedef struct member {
    int kind;
    const char *name;   /* interned */
    const char *method; /* after the '/', or NULL */
    zip_int64_t idx;
} member;

static bool ends_with(const char *s, const char *suffix)
{
    size_t n = strlen(s), k = strlen(suffix);
    return n >= k && strcmp(s + n - k, suffix) == 0;
}

static bool starts_with_member(const char *s, const char *base, const char **method)
{
    size_t k = strlen(base);
    if (strncmp(s, base, k) != 0 || (s[k] && s[k] != '/')) return false;
    *method = s[k] == '/' && s[k + 1] ? s + k + 1 : NULL;
    return true;
}

static int classify(const char *name, member *m)
{
    static const char *const reserved[] = {"ETRECORD_V0", "debug_handle_map", "delegate_map", "export_graph_id",
                                           "reference_outputs", "representative_inputs"};
    for (size_t i = 0; i < sizeof reserved / sizeof reserved[0]; i++)
        if (strcmp(name, reserved[i]) == 0) return -1;
    if (ends_with(name, "state_dict") || ends_with(name, "constants") || ends_with(name, "example_inputs") ||
        ends_with(name, "/"))
        return -1;
    const char *method = NULL;
    if (strcmp(name, "exported_program") == 0) m->kind = M_EXPORTED;
    else if (starts_with_member(name, "edge_dialect_exported_program", &method)) m->kind = M_EDGE;
    else if (starts_with_member(name, "et_dialect_graph_module", &method)) m->kind = M_ET;
    else m->kind = M_EXTRA;
    m->name = ls_intern(name);
    m->method = method ? ls_intern(method) : NULL;
    return 0;
}

static int read_text(zip_t *za, const char *path, const char *name, char **out, ls_error *err)
{
    *out = NULL;
    zip_int64_t idx = zip_name_locate(za, name, 0);
    if (idx < 0) return 0;
    ls_blob *b;
    if (ls_zip_read_member(za, idx, path, name, &b, err) != 0) return -1;
    *out = ls_strndup((const char *)b->data, b->size);
    ls_blob_unref(b);
    return 0;
}

static int load_member(zip_t *za, const char *path, const member *m, ls_program **out, ls_error *err)
{
    ls_blob *b;
    if (ls_zip_read_member(za, m->idx, path, m->name, &b, err) != 0) return -1;
    int rc = ls_load_json(ls_internf("%s: %s", path, m->name), (const char *)b->data, b->size, NULL, out, err);
    ls_blob_unref(b);
    if (rc == 0) (*out)->path = ls_intern(path);
    return rc;
}

static const char *step_name(const member *m, const ls_program *p)
{
    switch (m->kind) {
    case M_EXPORTED: return ls_intern("export");
    case M_EDGE: return ls_intern(p->n_subs ? "to_backend" : "to_edge");
    case M_ET: return ls_intern("to_executorch");
    default: return m->name;
    }
}

/* Programs of one method: an Edge or ExecuTorch dialect program of another method is left out. */
static bool of_method(const member *m, const char *method)
{
    return (m->kind != M_EDGE && m->kind != M_ET) || !m->method || !method || strcmp(m->method, method) == 0;
}

int ls_load_etrecord(zip_t *za, const char *path, const ls_load_opts *opts, ls_program **out, ls_error *err)
{
    *out = NULL;
    zip_int64_t n = zip_get_num_entries(za, 0);
    LS_VEC(member) ms = {0};
    const char *methods = NULL;
    for (zip_int64_t i = 0; i < n; i++) {
        const char *name = zip_get_name(za, (zip_uint64_t)i, 0);
        member m = {.idx = i};
        if (!name || classify(name, &m) != 0) continue;
        if ((m.kind == M_EDGE || m.kind == M_ET) && m.method && !methods) methods = m.method;
        ls_vec_push(&ms, m);
    }
    const char *method = opts && opts->model ? ls_intern(opts->model) : NULL;
    if (!method) {
        for (uint32_t i = 0; i < ms.n && !method; i++)
            if (ms.v[i].kind == M_EDGE && ms.v[i].method == ls_intern("forward")) method = ms.v[i].method;
        if (!method) method = methods;
    }
    /* the order of a lowering: export, the extra programs (by name), Edge, ExecuTorch */
    member *order[64];
    uint32_t no = 0;
    bool have_edge = false;
    for (int kind = 0; kind < M_KINDS; kind++) {
        uint32_t start = no;
        for (uint32_t i = 0; i < ms.n && no < 64; i++)
            if (ms.v[i].kind == kind && of_method(&ms.v[i], method)) order[no++] = &ms.v[i];
        for (uint32_t a = start + 1; a < no; a++) /* a few members: insertion sort by name */
            for (uint32_t b = a; b > start && strcmp(order[b - 1]->name, order[b]->name) > 0; b--) {
                member *t = order[b];
                order[b] = order[b - 1];
                order[b - 1] = t;
            }
        if (kind == M_EDGE && no > start) {
            have_edge = true;
            no = start + 1; /* one Edge program per method */
        }
    }
    if (!have_edge) {
        free(ms.v);
        if (method && opts && opts->model)
            return ls_fail(err, "%s: an ETRecord with no edge_dialect_exported_program for method '%s'", path, method);
        return ls_fail(err, "%s: an ETRecord (a zip with ETRECORD_V0: the debug record exir writes beside a .pte) without "
                            "edge_dialect_exported_program: no program to open; open the .pte it describes", path);
    }
    ls_recorded *r = ls_recorded_new("ETRecord");
    r->method = method ? method : ls_intern("forward");
    r->programs = ls_calloc(no, sizeof *r->programs);
    r->passes = ls_calloc(no, sizeof *r->passes);
    r->members = ls_calloc(no, sizeof *r->members);
    ls_program *last = NULL;
    int rc = 0;
    for (uint32_t i = 0; i < no && rc == 0; i++) {
        ls_program *p;
        if ((rc = load_member(za, path, order[i], &p, err)) != 0) break;
        if (order[i]->kind == M_EDGE) r->handles_step = (int32_t)i;
        if (i + 1 < no) {
            r->programs[r->n] = p;
            r->passes[r->n] = step_name(order[i], p);
            r->members[r->n++] = order[i]->name;
        } else {
            last = p;
            r->pass = step_name(order[i], p);
            r->member = order[i]->name;
        }
    }
    free(ms.v);
    if (rc == 0) rc = read_text(za, path, "debug_handle_map", &r->debug_handle_map, err);
    if (rc == 0) rc = read_text(za, path, "delegate_map", &r->delegate_map, err);
    if (rc != 0) {
        ls_origin_unref(&r->origin);
        ls_program_unref(last);
        return -1;
    }
    last->origin = &r->origin; /* the program holds the reference */
    *out = last;
    return 0;
}

int ls_etrecord_read(const uint8_t *data, size_t size, const char *name, ls_program **out, ls_error *err)
{
    *out = NULL;
    name = name ? name : "etrecord";
    zip_error_t ze;
    zip_error_init(&ze);
    zip_source_t *src = zip_source_buffer_create(data, size, 0, &ze);
    zip_t *za = src ? zip_open_from_source(src, ZIP_RDONLY | ZIP_CHECKCONS, &ze) : NULL;
    if (!za) {
        int rc = ls_fail(err, "%s: not a readable zip archive (%s)", name, zip_error_strerror(&ze));
        if (src) zip_source_free(src);
        zip_error_fini(&ze);
        return rc;
    }
    int rc;
    if (zip_name_locate(za, "ETRECORD_V0", 0) < 0) rc = ls_fail(err, "%s: no ETRECORD_V0 member: not an ETRecord", name);
    else rc = ls_load_etrecord(za, name, NULL, out, err);
    zip_discard(za); /* frees the source too */
    zip_error_fini(&ze);
    return rc;
}

const ls_program *ls_recorded_handles_program(const ls_program *loaded)
{
    const ls_recorded *r = ls_program_recorded(loaded);
    if (!r || r->handles_step < 0) return NULL;
    return (uint32_t)r->handles_step < r->n ? r->programs[r->handles_step] : loaded;
}

ls_etd_index *ls_etd_index_for(const ls_program *loaded, const ls_program **mapped, ls_error *err)
{
    *mapped = NULL;
    const ls_program *edge = ls_recorded_handles_program(loaded);
    if (edge) {
        const ls_recorded *r = ls_program_recorded(loaded);
        if (!r->debug_handle_map) {
            ls_fail(err, "%s: the %s has no debug_handle_map: its events cannot be placed", loaded->path, r->source);
            return NULL;
        }
        ls_etd_index *x = ls_etd_index_for_handles(edge, r->method, r->debug_handle_map, r->delegate_map, err);
        if (!x) {
            ls_fail_prefix(err, "%s", loaded->path);
            return NULL;
        }
        *mapped = edge;
        return x;
    }
    if (!loaded->instrs) {
        ls_fail(err, "%s: not a .pte or an ETRecord: nothing says which of its nodes an ETDump's instruction ids are", loaded->path);
        return NULL;
    }
    *mapped = loaded;
    return ls_etd_index_for_program(loaded);
}
