/* Weights and constants of a .pt2: the PayloadConfig JSONs (FQN → raw file + TensorMeta) and
 * the raw files under data/weights/ and data/constants/. Several tensors may share one file
 * (views: sizes, strides, storage offset into it); each file is read once. Contiguous tensors
 * view the file's bytes; strided ones are made contiguous once, here. Without weight data the
 * program is metadata only: entries carry the placeholders' metadata and no tensor. */
#include <inttypes.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "ptrmap.h"
#include "pt2_internal.h"

typedef struct wctx {
    ls_program *p;
    const char *where;
    ls_weight_source *ws;
    ls_error *err;
    ls_ptrmap blobs; /* interned member path → ls_blob* */
} wctx;

/* Appends to a table whose array the caller sized beforehand (see reserve_entries). */
static void push_entry(ls_named_tensor **v, uint32_t *n, const char *name, ls_tensor *t, const ls_tmeta *m)
{
    (*v)[*n].name = name;
    (*v)[*n].t = t;
    (*v)[*n].meta = ls_tmeta_intern(m, 1);
    (*n)++;
}

static void reserve_entries(ls_named_tensor **v, uint32_t n, uint32_t more)
{
    *v = ls_realloc(*v, sizeof **v * (n + more ? n + more : 1));
}

/* Metadata only: one entry per target, described by its placeholder's value. */
static void metadata_entries(ls_program *p)
{
    ls_ptrmap seen = {0};
    reserve_entries(&p->state_dict, p->n_state, p->n_inputs);
    reserve_entries(&p->constants, p->n_constants, p->n_inputs);
    for (uint32_t i = 0; i < p->n_inputs; i++) {
        const ls_input_spec *s = &p->inputs[i];
        if (!ls_input_kind_holds_data(s->kind) || !s->target) continue;
        uintptr_t dummy;
        if (ls_ptrmap_get(&seen, s->target, &dummy)) continue;
        ls_ptrmap_put(&seen, s->target, 1);
        ls_tmeta m;
        memset(&m, 0, sizeof m);
        int32_t pos = s->name ? ls_program_find(p, s->name) : -1;
        if (pos >= 0 && p->nodes[pos]->val_kind == LS_VAL_TENSOR) m = p->nodes[pos]->vals[0];
        if (ls_input_in_state(s->kind, s->persistent)) push_entry(&p->state_dict, &p->n_state, s->target, NULL, &m);
        else push_entry(&p->constants, &p->n_constants, s->target, NULL, &m);
    }
    ls_ptrmap_free(&seen);
}

static int get_blob(wctx *c, const char *rel, ls_blob **out)
{
    const char *key = ls_intern(rel);
    uintptr_t v;
    if (ls_ptrmap_get(&c->blobs, key, &v)) {
        *out = (ls_blob *)v;
        return 0;
    }
    if (!c->ws->has(c->ws, rel)) return ls_fail(c->err, "%s: %s is missing", c->ws->where, rel);
    if (c->ws->read(c->ws, rel, out, c->err) != 0) return -1;
    ls_ptrmap_put(&c->blobs, key, (uintptr_t)*out);
    return 0;
}

static bool is_contiguous(const ls_tmeta *m, const int64_t *strides)
{
    int64_t expect = 1;
    for (int d = m->ndim - 1; d >= 0; d--) {
        if (m->sizes[d] != 1 && strides[d] != expect) return false;
        expect *= m->sizes[d];
    }
    return true;
}

/* Every byte the tensor `fqn` reaches (tensor_meta's sizes, strides, storage offset) is in the
 * file of `have` bytes. */
static int check_extent(wctx *c, const char *rel, const char *fqn, uint64_t have, const ls_tmeta *m,
                        const int64_t *strides, int64_t offset)
{
    size_t es = ls_dtype_size(m->dtype);
    if (ls_tmeta_numel(m) == 0) return 0;
    /* the last element's index in the file: offset + sum (size - 1) * stride */
    uint64_t last = (uint64_t)offset;
    for (int d = 0; d < m->ndim; d++) {
        uint64_t step = (uint64_t)(m->sizes[d] - 1), st = (uint64_t)strides[d];
        if (st > LS_READ_MAX_TENSOR_BYTES || step * st > LS_READ_MAX_TENSOR_BYTES) last = UINT64_MAX / 2;
        else last += step * st;
    }
    uint64_t need = last >= UINT64_MAX / 16 ? UINT64_MAX : (last + 1) * es;
    if (need > have) {
        char s[160];
        ls_buf b = {0};
        for (int d = 0; d < m->ndim; d++) ls_buf_printf(&b, "%s%" PRId64, d ? ", " : "", strides[d]);
        ls_fail(c->err, "%s: %s ('%s'): the file has %" PRIu64 " bytes, but %s with strides [%s] from element %" PRId64
                        " needs %" PRIu64,
                c->ws->where, rel, fqn, have, ls_tmeta_str(m, s, sizeof s), b.s ? b.s : "", offset, need);
        ls_buf_free(&b);
        return -1;
    }
    return 0;
}

/* The tensor `fqn` viewing `blob` as tensor_meta says, after checking every byte it reaches is
 * in the file. */
static int make_tensor(wctx *c, const char *rel, const char *fqn, ls_blob *blob, const ls_tmeta *m,
                       const int64_t *strides, int64_t offset, ls_tensor **out)
{
    size_t es = ls_dtype_size(m->dtype);
    *out = NULL;
    if (ls_tmeta_numel(m) == 0) {
        *out = ls_tensor_new(m->dtype, m->ndim, m->sizes, c->err);
        return *out ? 0 : -1;
    }
    if (check_extent(c, rel, fqn, blob->size, m, strides, offset) != 0) return -1;
    if (is_contiguous(m, strides)) *out = ls_tensor_from_blob(blob, (size_t)offset * es, m->dtype, m->ndim, m->sizes);
    else *out = ls_tensor_from_strided(blob->data + (size_t)offset * es, m->dtype, m->ndim, m->sizes, strides);
    if (!*out) return ls_fail(c->err, "%s: %s ('%s'): cannot make the tensor", c->ws->where, rel, fqn);
    return 0;
}

/* An entry's error names the entry: "ARCHIVE: 'fqn' of CONFIG: ..." — once, when the error the
 * read gave names the archive already ("ARCHIVE: data/weights/weight_6: out of memory ...", which
 * a plain prefix made "ARCHIVE: CONFIG: 'fqn': ARCHIVE: data/weights/weight_6: ..."). */
static void name_entry(wctx *c, const char *where, const char *cfg_rel, const char *fqn)
{
    if (strstr(c->err->msg, ls_internf("'%s'", fqn))) return; /* quoted: a short name ('w') is in any path */
    size_t wl = strlen(c->ws->where);
    if (!strncmp(c->err->msg, c->ws->where, wl) && !strncmp(c->err->msg + wl, ": ", 2)) {
        char rest[LS_ERR_MAX];
        snprintf(rest, sizeof rest, "%s", c->err->msg + wl + 2);
        ls_fail_kind(c->err, c->err->code, "%s: '%s' of %s: %s", c->ws->where, fqn, cfg_rel, rest);
    } else {
        ls_fail_prefix(c->err, "%s: '%s'", where, fqn);
    }
}

/* One PayloadConfig: every entry into the state dict (weights) or the constants table. */
static int read_config(wctx *c, const char *dir, const char *cfg_rel, bool constants, ls_ptrmap *index)
{
    ls_blob *cb;
    if (c->ws->read(c->ws, cfg_rel, &cb, c->err) != 0) return -1;
    char *where = ls_strdup(ls_internf("%s: %s", c->ws->where, cfg_rel));
    cJSON *root = ls_json_parse(where, (const char *)cb->data, cb->size, c->err);
    ls_blob_unref(cb);
    int rc = 0;
    const cJSON *config = ls_jget(root, "config");
    if (root && !cJSON_IsObject(config)) rc = ls_fail(c->err, "%s: no \"config\" object", where);
    if (!root) rc = -1;
    if (rc == 0) {
        uint32_t count = (uint32_t)cJSON_GetArraySize(config);
        if (constants) reserve_entries(&c->p->constants, c->p->n_constants, count);
        else reserve_entries(&c->p->state_dict, c->p->n_state, count);
    }
    for (const cJSON *e = rc == 0 ? config->child : NULL; e && rc == 0; e = e->next) {
        const char *fqn = ls_intern(e->string);
        const cJSON *tm = ls_jget(e, "tensor_meta");
        if (!fqn || !tm) continue; /* custom objects: pickled, no tensor */
        ls_tmeta m;
        int64_t strides[LS_MAX_DIMS], offset = 0;
        if (ls_read_tmeta(tm, &m, strides, &offset, c->err) != 0) {
            rc = ls_fail_prefix(c->err, "%s: '%s'", where, fqn);
            break;
        }
        ls_tensor *t = NULL;
        const cJSON *pickled = ls_jget(e, "use_pickle");
        const char *path = ls_jstr(ls_jget(e, "path_name"));
        /* tensor subclasses (pickled), dtypes without a C type, symbolic shapes: metadata only */
        bool readable = !(pickled && cJSON_IsTrue(pickled)) && ls_dtype_size(m.dtype) && !ls_tmeta_is_dynamic(&m);
        if (readable) {
            if (!path || !*path || strstr(path, "..")) {
                rc = ls_fail(c->err, "%s: '%s': no usable path_name", where, fqn);
                break;
            }
            const char *rel = ls_internf("%s/%s", dir, path);
            ls_blob *blob;
            uint64_t have;
            if (c->ws->sizes_only && c->ws->size) { /* what it is and that the file holds it, no more */
                bool there = c->ws->has(c->ws, rel); /* said as get_blob says it, whichever command reads it */
                if (!there) ls_fail(c->err, "%s: %s is missing", c->ws->where, rel);
                if (!there || c->ws->size(c->ws, rel, &have, c->err) != 0 ||
                    check_extent(c, rel, fqn, have, &m, strides, offset) != 0) {
                    name_entry(c, where, cfg_rel, fqn);
                    rc = -1;
                    break;
                }
                for (int d = 0; d < LS_MAX_DIMS; d++) m.dim_order[d] = (uint8_t)d; /* as the tensor will be */
            } else if (get_blob(c, rel, &blob) != 0 || make_tensor(c, rel, fqn, blob, &m, strides, offset, &t) != 0) {
                name_entry(c, where, cfg_rel, fqn);
                rc = -1;
                break;
            } else {
                bool rg = m.requires_grad;
                ls_tensor_meta(t, &m);
                m.requires_grad = rg;
            }
        }
        uintptr_t old;
        if (!ls_ptrmap_add(index, fqn, constants ? c->p->n_constants : c->p->n_state, &old)) {
            ls_tensor_unref(t);
            rc = ls_fail(c->err, "%s: '%s' is listed twice", where, fqn);
            break;
        }
        if (constants) push_entry(&c->p->constants, &c->p->n_constants, fqn, t, &m);
        else push_entry(&c->p->state_dict, &c->p->n_state, fqn, t, &m);
    }
    ls_json_free(root);
    free(where);
    return rc;
}

static const char *spec_kind_text(const ls_input_spec *s)
{
    if (s->kind == LS_IN_BUFFER) return s->persistent ? "buffer" : "non-persistent buffer";
    return s->kind == LS_IN_PARAMETER ? "parameter" : "tensor constant";
}

int ls_read_weights(ls_program *p, const char *where, ls_weight_source *ws, bool metadata_only, ls_error *err)
{
    bool needs = false;
    for (uint32_t i = 0; i < p->n_inputs; i++) needs |= ls_input_kind_holds_data(p->inputs[i].kind);
    const char *wcfg = NULL, *ccfg = NULL;
    if (ws && !metadata_only) {
        const char *model = ws->model ? ws->model : "model";
        wcfg = ls_internf("data/weights/%s_weights_config.json", model);
        if (!ws->has(ws, wcfg)) wcfg = ls_internf("data/weights/%s_model_param_config.json", model);
        if (!ws->has(ws, wcfg)) wcfg = NULL;
        ccfg = ls_internf("data/constants/%s_constants_config.json", model);
        if (!ws->has(ws, ccfg)) ccfg = NULL;
    }
    if (!wcfg && !ccfg) {
        /* no weight data: metadata only (complete anyway when the program needs none) */
        metadata_entries(p);
        ls_program_tables_touch(p);
        p->has_weights = !needs;
        return 0;
    }
    wctx c = {.p = p, .where = where, .ws = ws, .err = err};
    ls_ptrmap state_ix = {0}, const_ix = {0};
    int rc = 0;
    if (wcfg) rc = read_config(&c, "data/weights", wcfg, false, &state_ix);
    if (rc == 0 && ccfg) rc = read_config(&c, "data/constants", ccfg, true, &const_ix);
    for (uint32_t i = 0; i < c.blobs.cap; i++)
        if (c.blobs.keys[i]) ls_blob_unref((ls_blob *)c.blobs.vals[i]);
    ls_ptrmap_free(&c.blobs);
    ls_program_tables_touch(p);
    /* every parameter, buffer and constant the signature names must have its data */
    for (uint32_t i = 0; i < p->n_inputs && rc == 0; i++) {
        const ls_input_spec *s = &p->inputs[i];
        if (!ls_input_kind_holds_data(s->kind)) continue;
        bool state = ls_input_in_state(s->kind, s->persistent);
        const char *cfg = state ? wcfg : ccfg;
        if (!s->target) {
            rc = ls_fail(err, "%s: input spec %u ('%s', %s): no target", where, i, s->name ? s->name : "?",
                         spec_kind_text(s));
        } else if (!ls_ptrmap_get(state ? &state_ix : &const_ix, s->target, NULL)) {
            rc = ls_fail(err, "%s: input spec %u ('%s'): %s '%s' has no data: it is not in %s", where, i,
                         s->name ? s->name : "?", spec_kind_text(s), s->target,
                         cfg ? cfg : state ? "the weights (no data/weights/*_weights_config.json)"
                                           : "the constants (no data/constants/*_constants_config.json)");
        }
    }
    ls_ptrmap_free(&state_ix);
    ls_ptrmap_free(&const_ix);
    p->has_weights = !ws->sizes_only;
    p->weights_unread = ws->sizes_only;
    return rc;
}
