/* .pt2 archives (torch >= 2.8 torch.export.save: a zip of stored members, usually under one
 * root folder such as linear_3/) and the same layout unpacked into a folder: find the model
 * JSON, hand its members to the JSON reader as a weight source. Legacy archives (torch <= 2.7,
 * serialized_exported_program.json plus pickles) load as metadata only. */
#include <dirent.h>
#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <zip.h>
#include <zlib.h>

#include "progress.h"
#include "pt2_internal.h"
#include "safe_text.h"
#include "zip_map.h"

/* ---- the zip weight source */

typedef struct zip_src {
    zip_t *za;
    char *prefix; /* "linear_3/" or "" */
    char *path;   /* the archive (zip_read_text maps from it) */
    uint64_t member_cap; /* the most bytes one member may inflate to (member_cap_for) */
} zip_src;

/* How much one member may hold: a crafted archive of a few MB can declare, and deflate to,
 * gigabytes (a 12 MB file inflating models/model.json to 2.5 GiB). torch writes its members
 * stored, and what people repack compresses weights little and JSON some 10 to 20 times, so
 * 64 times the archive (and 64 MiB for the smallest) leaves room for every real archive while
 * the declared size is refused before anything is allocated or inflated. */
static uint64_t member_cap_for(const char *path)
{
    struct stat st;
    uint64_t size = stat(path, &st) == 0 ? (uint64_t)st.st_size : 0;
    uint64_t cap = size > LS_READ_MAX_MEMBER_BYTES / 64 ? LS_READ_MAX_MEMBER_BYTES : size * 64;
    return cap < ((uint64_t)64 << 20) ? (uint64_t)64 << 20 : cap;
}

static zip_int64_t zip_locate(zip_src *z, const char *rel)
{
    char name[1024];
    if ((size_t)snprintf(name, sizeof name, "%s%s", z->prefix, rel) >= sizeof name) return -1;
    return zip_name_locate(z->za, name, 0);
}

static bool zip_has(ls_weight_source *ws, const char *rel)
{
    return zip_locate(ws->impl, rel) >= 0;
}

/* A member's size, checked against what the archive can hold (member_cap_for). */
static int zip_member_size(zip_src *z, zip_int64_t idx, const char *where, const char *rel, zip_stat_t *st,
                           ls_error *err)
{
    if (zip_stat_index(z->za, (zip_uint64_t)idx, 0, st) != 0 || !(st->valid & ZIP_STAT_SIZE))
        return ls_fail(err, "%s: %s: cannot read the member's size: %s", where, rel, zip_strerror(z->za));
    if (st->size > z->member_cap) {
        char have[32], cap[32];
        return ls_fail(err, "%s: %s: the member claims %s uncompressed (%s compressed), more than the %s an archive of "
                            "this size may hold", where, rel, ls_fmt_bytes(st->size, have, sizeof have),
                       (st->valid & ZIP_STAT_COMP_SIZE) ? ls_fmt_bytes(st->comp_size, cap, sizeof cap) : "?",
                       ls_fmt_bytes(z->member_cap, (char[32]){0}, 32));
    }
    return 0;
}

/* Reads a member whole and checks its CRC-32 against the central directory's: libzip checks
 * it for deflated members only, and a flipped byte in a stored weight would load silently.
 * (torch's own reader checks none: PyTorch builds miniz with MINIZ_DISABLE_ZIP_READER_CRC32_CHECKS,
 * cmake/Dependencies.cmake; lowerscope is stricter, as a bad weight changes every result.) */
static int zip_read_index(zip_src *z, zip_int64_t idx, const char *where, const char *rel, ls_blob **out, ls_error *err)
{
    zip_t *za = z->za;
    zip_stat_t st;
    if (zip_member_size(z, idx, where, rel, &st, err) != 0) return -1;
    const char *was = ls_reading(ls_internf("%s: %s", where, rel));
    uint8_t *buf = ls_alloc_aligned((size_t)st.size + 1);
    if (!buf) {
        ls_reading(was);
        return ls_fail_needs(err, "%s: %s: out of memory: cannot allocate %llu bytes", where, rel, (unsigned long long)st.size);
    }
    zip_file_t *zf = zip_fopen_index(za, (zip_uint64_t)idx, 0);
    if (!zf) {
        ls_free_aligned(buf);
        ls_reading(was);
        return ls_fail(err, "%s: %s: cannot open the member: %s", where, rel, zip_strerror(za));
    }
    zip_uint64_t got = 0;
    while (got < st.size) {
        zip_int64_t r = zip_fread(zf, buf + got, st.size - got);
        if (r <= 0) break;
        got += (zip_uint64_t)r;
    }
    int bad = got != st.size;
    char why[256];
    snprintf(why, sizeof why, "%s", bad ? zip_error_strerror(zip_file_get_error(zf)) : "");
    zip_fclose(zf);
    ls_reading(was);
    if (bad) {
        ls_free_aligned(buf);
        return ls_fail(err, "%s: %s: the member is damaged or truncated (read %llu of %llu bytes: %s)", where, rel,
                       (unsigned long long)got, (unsigned long long)st.size, why);
    }
    if (st.valid & ZIP_STAT_CRC) {
        uLong crc = crc32_z(0L, Z_NULL, 0);
        crc = crc32_z(crc, buf, (z_size_t)st.size);
        if ((uint32_t)crc != st.crc) {
            ls_free_aligned(buf);
            return ls_fail(err, "%s: %s: the member is damaged: its CRC-32 is %08x, the archive's directory says %08x",
                           where, rel, (unsigned)crc, (unsigned)st.crc);
        }
    }
    buf[st.size] = 0;
    *out = ls_blob_wrap(buf, (size_t)st.size);
    return 0;
}

int ls_zip_read_member(zip_t *za, int64_t idx, const char *path, const char *rel, ls_blob **out, ls_error *err)
{
    zip_src z = {.za = za, .prefix = (char *)"", .member_cap = member_cap_for(path)};
    return zip_read_index(&z, idx, path, rel, out, err);
}

static int zip_read(ls_weight_source *ws, const char *rel, ls_blob **out, ls_error *err)
{
    zip_src *z = ws->impl;
    zip_int64_t idx = zip_locate(z, rel);
    if (idx < 0) return ls_fail(err, "%s: no member %s%s", ws->where, z->prefix, rel);
    return zip_read_index(z, idx, ws->where, rel, out, err);
}

static int zip_read_text(ls_weight_source *ws, const char *rel, ls_blob **out, ls_error *err)
{
    zip_src *z = ws->impl;
    zip_int64_t idx = zip_locate(z, rel);
    if (idx < 0) return ls_fail(err, "%s: no member %s%s", ws->where, z->prefix, rel);
    zip_stat_t st;
    if (zip_member_size(z, idx, ws->where, rel, &st, err) != 0) return -1;
    const char *raw = zip_get_name(z->za, (zip_uint64_t)idx, ZIP_FL_ENC_RAW);
    if (raw && (st.valid & ZIP_STAT_COMP_METHOD) && st.comp_method == ZIP_CM_STORE && (st.valid & ZIP_STAT_CRC) &&
        ls_zip_map_stored(z->path, (uint64_t)idx, raw, st.size, st.crc, out) == 0)
        return 0;
    if (ls_cancelled()) return ls_fail_cancelled(err, ws->where); /* not read again */
    return zip_read_index(z, idx, ws->where, rel, out, err);
}

static int zip_size(ls_weight_source *ws, const char *rel, uint64_t *size, ls_error *err)
{
    zip_src *z = ws->impl;
    zip_int64_t idx = zip_locate(z, rel);
    if (idx < 0) return ls_fail(err, "%s: no member %s%s", ws->where, z->prefix, rel);
    zip_stat_t st;
    if (zip_member_size(z, idx, ws->where, rel, &st, err) != 0) return -1;
    *size = st.size;
    return 0;
}

static void zip_release(ls_weight_source *ws)
{
    zip_src *z = ws->impl;
    zip_discard(z->za);
    free(z->prefix);
    free(z->path);
    free(z);
}

/* ---- the folder weight source */

typedef struct dir_src {
    char *root;
} dir_src;

static bool dir_has(ls_weight_source *ws, const char *rel)
{
    dir_src *d = ws->impl;
    char path[4096];
    struct stat st;
    snprintf(path, sizeof path, "%s/%s", d->root, rel);
    return stat(path, &st) == 0 && S_ISREG(st.st_mode);
}

static int dir_read(ls_weight_source *ws, const char *rel, ls_blob **out, ls_error *err)
{
    dir_src *d = ws->impl;
    char path[4096];
    snprintf(path, sizeof path, "%s/%s", d->root, rel);
    uint8_t *data;
    size_t size;
    if (ls_read_file(path, (size_t)LS_READ_MAX_MEMBER_BYTES, &data, &size, err) != 0) return -1;
    *out = ls_blob_wrap(data, size);
    return 0;
}

static int dir_size(ls_weight_source *ws, const char *rel, uint64_t *size, ls_error *err)
{
    dir_src *d = ws->impl;
    char path[4096];
    struct stat st;
    snprintf(path, sizeof path, "%s/%s", d->root, rel);
    if (stat(path, &st) != 0 || !S_ISREG(st.st_mode)) return ls_fail(err, "%s: cannot stat %s", ws->where, rel);
    *size = (uint64_t)st.st_size;
    return 0;
}

static void dir_release(ls_weight_source *ws)
{
    dir_src *d = ws->impl;
    free(d->root);
    free(d);
}

ls_weight_source *ls_weight_source_folder(const char *root, const char *model)
{
    ls_weight_source *ws = ls_calloc(1, sizeof *ws);
    dir_src *d = ls_calloc(1, sizeof *d);
    d->root = ls_strdup(root);
    ws->where = ls_intern(root);
    ws->model = ls_intern(model ? model : "model");
    ws->has = dir_has;
    ws->read = dir_read;
    ws->size = dir_size;
    ws->release = dir_release;
    ws->impl = d;
    return ws;
}

/* ---- choosing the model */

typedef LS_VEC(const char *) name_list;

static int pick_model(const char *where, const name_list *models, const ls_load_opts *opts, const char **model,
                      ls_error *err)
{
    const char *want = opts && opts->model ? ls_intern(opts->model) : NULL;
    const char *deflt = ls_intern("model");
    *model = NULL;
    for (uint32_t i = 0; i < models->n; i++) {
        if (want && models->v[i] == want) *model = want;
        if (!want && models->v[i] == deflt) *model = deflt;
    }
    if (!*model && !want && models->n == 1) *model = models->v[0];
    if (*model) return 0;
    ls_buf b = {0};
    for (uint32_t i = 0; i < models->n; i++) ls_buf_printf(&b, "%s%s", i ? ", " : "", models->v[i]);
    if (want) ls_fail(err, "%s: no model '%s' in models/ (it has: %s)", where, want, b.s ? b.s : "none");
    else ls_fail(err, "%s: several models (%s): choose one with --model NAME", where, b.s);
    ls_buf_free(&b);
    return -1;
}

static int load_model(ls_weight_source *ws, const char *where, bool folder, const char *model,
                      const ls_load_opts *opts, ls_program **out, ls_error *err)
{
    const char *rel = ls_internf("models/%s.json", model);
    ls_blob *json;
    if ((ws->read_text ? ws->read_text : ws->read)(ws, rel, &json, err) != 0) return -1;
    ws->model = model;
    if (json->map && ls_zip_map_test_after_map) ls_zip_map_test_after_map(where);
    const char *w = ls_internf(folder ? "%s/%s" : "%s: %s", where, rel);
    /* the text is read for this load alone: its nodes' pages go back as they are read */
    int rc = json->refs == 1 ? ls_load_json_consuming(w, model, (char *)json->data, json->size, ws,
                                                      opts && opts->metadata_only, out, err)
                             : ls_load_json_ex(w, model, (const char *)json->data, json->size, ws,
                                               opts && opts->metadata_only, 0, out, err);
    if (ls_zip_map_done(json)) { /* only zip_read_text maps: ws is an archive */
        if (rc == 0) ls_program_unref(*out);
        *out = NULL;
        rc = ls_fail(err, "%s: the file shrank while it was being read (member %s%s)", where,
                     ((zip_src *)ws->impl)->prefix, rel);
    }
    ls_blob_unref(json);
    return rc;
}

/* ---- zip archives */

static bool ends_with(const char *s, const char *suffix)
{
    size_t a = strlen(s), b = strlen(suffix);
    return a >= b && strcmp(s + a - b, suffix) == 0;
}

static int count_slashes(const char *s)
{
    int n = 0;
    for (; *s; s++) n += *s == '/';
    return n;
}

/* The archive's own three members, as torch reads them (torch/export/pt2_archive/_package.py):
 * PT2ArchiveReader asserts archive_format is "pt2" ("Invalid archive format"), load_pt2 refuses
 * an archive_version other than ARCHIVE_VERSION_VALUE "0" ("Saved archive version V does not
 * match our current archive version 0."). byteorder is what PyTorchFileWriter records of the
 * machine that wrote it: weights are raw bytes in that order, and lowerscope reads
 * little-endian ones, so "big" is a need (exit 3) when weights are read, not numbers read
 * wrong. Without archive_format torch refuses the archive (PT2ArchiveReader.__init__ reads it
 * with get_record, which raises; torch.export.load's legacy fallback then wants a top-level
 * "version"); without archive_version it assumes 0 (PT2ArchiveReader.archive_version), and
 * without byteorder nothing is checked, so those two are let through. The same for a zip and
 * for the folder it unpacks to; `shown` is the root as messages name it ("linear_3/"). */
static int check_archive_members(ls_weight_source *ws, const char *path, const char *shown, bool weights_read,
                                 ls_error *err)
{
    static const struct {
        const char *member, *want;
    } members[] = {{"archive_format", "pt2"}, {"archive_version", "0"}, {"byteorder", "little"}};
    for (size_t i = 0; i < sizeof members / sizeof members[0]; i++) {
        if (!ws->has(ws, members[i].member)) {
            if (i == 0)
                return ls_fail(err, "%s: %sarchive_format is missing: torch.export.load refuses such an archive "
                                    "(PT2ArchiveReader reads archive_format first and wants \"pt2\")", path, shown);
            continue;
        }
        ls_blob *b;
        if (ws->read(ws, members[i].member, &b, err) != 0) return -1;
        size_t n = b->size;
        bool same = n == strlen(members[i].want) && memcmp(b->data, members[i].want, n) == 0;
        bool big = n == 3 && memcmp(b->data, "big", 3) == 0;
        char got[160]; /* escaped as every string from a file is: "pt2\x0a", not "pt2?" */
        ls_safe_copy((const char *)b->data, n < 32 ? n : 32, 0, got, sizeof got);
        ls_blob_unref(b);
        const char *more = n > 32 ? "…" : "";
        if (same) continue;
        if (i == 0)
            return ls_fail(err, "%s: %sarchive_format is \"%s%s\", not \"pt2\": not a .pt2 archive (torch: \"Invalid "
                                "archive format\")", path, shown, got, more);
        if (i == 1)
            return ls_fail(err, "%s: %sarchive_version is \"%s%s\": torch.export.load reads version 0 only (\"Saved "
                                "archive version %s does not match our current archive version 0.\")", path, shown,
                           got, more, got);
        if (big) {
            if (!weights_read) continue; /* --metadata-only: no weight is read in the wrong order */
            return ls_fail_needs(err, "%s: %sbyteorder is \"big\": the weights are big-endian, and lowerscope reads "
                                      "little-endian weights only (--metadata-only reads the program without them)",
                                 path, shown);
        }
        return ls_fail(err, "%s: %sbyteorder is \"%s%s\", neither \"little\" nor \"big\"", path, shown, got, more);
    }
    return 0;
}

int ls_load_archive(const char *path, const ls_load_opts *opts, ls_program **out, ls_error *err)
{
    *out = NULL;
    int code;
    /* ZIP_CHECKCONS: each local header is checked against the central directory (libzip's
     * zip_open(3): "perform additional stricter consistency checks on the archive"), so a
     * corrupt local signature or a member whose two headers disagree is refused */
    zip_t *za = zip_open(path, ZIP_RDONLY | ZIP_CHECKCONS, &code);
    if (!za) {
        zip_error_t ze;
        zip_error_init_with_code(&ze, code);
        /* readable without the consistency checks: say which of them failed */
        zip_t *lax = zip_open(path, ZIP_RDONLY, &(int){0});
        if (lax)
            ls_fail(err, "%s: a damaged zip archive (%s): a member's local header does not match the central "
                         "directory", path, zip_error_strerror(&ze));
        else
            ls_fail(err, "%s: not a readable zip archive (%s): the file is truncated or damaged", path,
                    zip_error_strerror(&ze));
        if (lax) zip_discard(lax);
        zip_error_fini(&ze);
        return -1;
    }
    zip_int64_t n = zip_get_num_entries(za, 0);
    const char *prefix = NULL, *legacy = NULL;
    bool etrecord = false;
    for (zip_int64_t i = 0; i < n; i++) {
        const char *name = zip_get_name(za, (zip_uint64_t)i, 0);
        if (!name) continue;
        if (!prefix && ends_with(name, "archive_format") && count_slashes(name) <= 1 &&
            (strcmp(name, "archive_format") == 0 || ends_with(name, "/archive_format")))
            prefix = ls_intern_n(name, strlen(name) - strlen("archive_format"));
        if (!legacy && ends_with(name, "serialized_exported_program.json") && count_slashes(name) <= 1)
            legacy = ls_intern(name);
        if (ends_with(name, "ETRECORD_V0")) etrecord = true;
    }
    if (!prefix && !legacy) { /* no archive_format: accept models/ at the top or under one folder */
        for (zip_int64_t i = 0; i < n && !prefix; i++) {
            const char *name = zip_get_name(za, (zip_uint64_t)i, 0);
            const char *m = name ? strstr(name, "models/") : NULL;
            if (m && (m == name || m[-1] == '/') && count_slashes(name) <= 2) prefix = ls_intern_n(name, (size_t)(m - name));
        }
    }
    ls_weight_source *ws = ls_calloc(1, sizeof *ws);
    zip_src *z = ls_calloc(1, sizeof *z);
    z->za = za;
    z->prefix = ls_strdup(prefix ? prefix : "");
    z->path = ls_strdup(path);
    z->member_cap = member_cap_for(path);
    ws->where = ls_intern(path);
    ws->has = zip_has;
    ws->read = zip_read;
    ws->read_text = zip_read_text;
    ws->size = zip_size;
    ws->sizes_only = opts && opts->weight_sizes_only;
    ws->release = zip_release;
    ws->impl = z;
    int rc;
    name_list models = {0};
    if (prefix) {
        size_t pl = strlen(prefix);
        for (zip_int64_t i = 0; i < n; i++) {
            const char *name = zip_get_name(za, (zip_uint64_t)i, 0);
            if (!name || strncmp(name, prefix, pl) != 0 || strncmp(name + pl, "models/", 7) != 0) continue;
            const char *base = name + pl + 7;
            if (!strchr(base, '/') && ends_with(base, ".json") && strlen(base) > 5)
                ls_vec_push(&models, ls_intern_n(base, strlen(base) - 5));
        }
    }
    const char *model;
    if (models.n) {
        rc = check_archive_members(ws, path, z->prefix, !(opts && opts->metadata_only), err);
        if (rc == 0) rc = pick_model(path, &models, opts, &model, err);
        if (rc == 0) rc = load_model(ws, path, false, model, opts, out, err);
    } else if (legacy) { /* torch <= 2.7: the weights are pickles lowerscope does not read */
        ls_blob *json;
        free(z->prefix);
        z->prefix = ls_strdup("");
        rc = zip_read(ws, legacy, &json, err);
        if (rc == 0) {
            rc = ls_load_json_ex(ls_internf("%s: %s", path, legacy), "model", (const char *)json->data, json->size,
                                 NULL, true, 0, out, err);
            ls_blob_unref(json);
        }
    } else if (etrecord) {
        rc = ls_load_etrecord(za, path, opts, out, err);
    } else {
        ls_buf b = {0};
        for (zip_int64_t i = 0; i < n && i < 8; i++) ls_buf_printf(&b, "%s%s", i ? ", " : "", zip_get_name(za, (zip_uint64_t)i, 0));
        if (n > 8) ls_buf_printf(&b, ", ... (%lld members)", (long long)n);
        rc = ls_fail(err, "%s: no models/<name>.json in the archive: not a .pt2 program (members: %s)", path,
                     b.s ? b.s : "none");
        ls_buf_free(&b);
    }
    free(models.v);
    ls_weight_source_free(ws);
    return rc;
}

/* ---- folders */

static bool is_archive_root(const char *dir)
{
    char p[4200];
    struct stat st;
    snprintf(p, sizeof p, "%s/archive_format", dir);
    if (stat(p, &st) == 0) return true;
    snprintf(p, sizeof p, "%s/models", dir);
    return stat(p, &st) == 0 && S_ISDIR(st.st_mode);
}

int ls_load_folder(const char *path, const ls_load_opts *opts, ls_program **out, ls_error *err)
{
    *out = NULL;
    char root[4096];
    snprintf(root, sizeof root, "%s", path);
    DIR *top = opendir(path); /* one the user cannot read is said as such, not as "not a .pt2" */
    if (!top) return ls_fail(err, "%s: cannot open the folder: %s", path, strerror(errno));
    closedir(top);
    if (!is_archive_root(root)) { /* unzip -d X puts the root folder (linear_3/) inside X */
        DIR *d = opendir(path);
        int found = 0;
        struct dirent *e;
        while (d && (e = readdir(d))) {
            if (e->d_name[0] == '.') continue;
            char sub[4096];
            snprintf(sub, sizeof sub, "%s/%s", path, e->d_name);
            if (is_archive_root(sub)) {
                found++;
                snprintf(root, sizeof root, "%s", sub);
            }
        }
        if (d) closedir(d);
        if (found != 1)
            return ls_fail(err, "%s: a folder without archive_format or models/: not an unpacked .pt2", path);
    }
    name_list models = {0};
    char mdir[4200];
    snprintf(mdir, sizeof mdir, "%s/models", root);
    DIR *d = opendir(mdir);
    struct dirent *e;
    while (d && (e = readdir(d))) {
        size_t l = strlen(e->d_name);
        if (l > 5 && ends_with(e->d_name, ".json")) ls_vec_push(&models, ls_intern_n(e->d_name, l - 5));
    }
    if (d) closedir(d);
    int rc;
    if (!models.n) {
        rc = ls_fail(err, "%s: no models/<name>.json in the folder: not an unpacked .pt2 program", root);
    } else {
        const char *model;
        rc = pick_model(root, &models, opts, &model, err);
        if (rc == 0) {
            ls_weight_source *ws = ls_weight_source_folder(root, model);
            ws->sizes_only = opts && opts->weight_sizes_only;
            rc = check_archive_members(ws, root, "", !(opts && opts->metadata_only), err);
            if (rc == 0) rc = load_model(ws, root, true, model, opts, out, err);
            ls_weight_source_free(ws);
        }
    }
    free(models.v);
    return rc;
}

/* A models/<name>.json inside an unpacked archive: its weights are two folders up. */
static ls_weight_source *sibling_weights(const char *path, const char **model)
{
    const char *slash = strrchr(path, '/');
    const char *base = slash ? slash + 1 : path;
    size_t bl = strlen(base);
    if (bl <= 5 || strcmp(base + bl - 5, ".json") != 0 || !slash || slash - path < 6 ||
        strncmp(slash - 6, "models", 6) != 0 || (slash - 6 > path && slash[-7] != '/'))
        return NULL;
    char root[4096];
    size_t rl = (size_t)(slash - 6 - path);
    if (rl >= sizeof root) return NULL;
    memcpy(root, path, rl);
    root[rl] = 0;
    if (!rl) snprintf(root, sizeof root, ".");
    char probe[4200];
    struct stat st;
    snprintf(probe, sizeof probe, "%s/data", root);
    if (stat(probe, &st) != 0 || !S_ISDIR(st.st_mode)) return NULL;
    *model = ls_intern_n(base, bl - 5);
    return ls_weight_source_folder(root, *model);
}

int ls_load_json_file(const char *path, const ls_load_opts *opts, ls_program **out, ls_error *err)
{
    uint8_t *data;
    size_t size;
    if (ls_read_file(path, LS_READ_MAX_JSON_BYTES, &data, &size, err) != 0) return -1;
    const char *model = "model";
    ls_weight_source *ws = sibling_weights(path, &model);
    if (ws) ws->sizes_only = opts && opts->weight_sizes_only;
    int rc = ls_load_json_consuming(path, model, (char *)data, size, ws, opts && opts->metadata_only, out, err);
    ls_weight_source_free(ws);
    free(data);
    return rc;
}
