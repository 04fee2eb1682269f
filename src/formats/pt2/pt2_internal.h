/* What the .pt2 readers share (private to src/formats/pt2/): the weight source behind ls_load_json, JSON helpers
 * that accept both the current union encoding ({"as_int": 3}) and the old one where every
 * member is spelled out with null except the one in use, and the loader's entry points. */
#ifndef LS_PT2_INTERNAL_H
#define LS_PT2_INTERNAL_H

#include <cjson/cJSON.h>
#include <stdbool.h>
#include <stdint.h>
#include <string.h>

#include "../formats.h"
#include "common.h"
#include "program.h"
#include "reader.h"
#include "tensor.h"

/* Limits on what a file may claim, checked before anything is allocated from it. */
#define LS_READ_MAX_JSON_BYTES ((size_t)1 << 32)
#define LS_READ_MAX_MEMBER_BYTES ((uint64_t)1 << 40)

/* Where the raw files of a .pt2 live: a zip archive, a folder, or memory (generated programs).
 * Paths are relative to the archive root: "data/weights/weight_0". */
struct ls_weight_source {
    const char *where; /* the archive or folder, for messages */
    const char *model; /* model name: picks data/weights/<model>_weights_config.json */
    bool (*has)(ls_weight_source *ws, const char *rel);
    /* Reads a member into a blob (64-byte aligned). Fails naming where and rel. */
    int (*read)(ls_weight_source *ws, const char *rel, ls_blob **out, ls_error *err);
    /* The same for a member the load needs only while it runs (the model JSON), NUL-terminated:
     * mapped from the file where it can be (zip_map.h). NULL: read it. */
    int (*read_text)(ls_weight_source *ws, const char *rel, ls_blob **out, ls_error *err);
    /* A member's size without reading it (NULL: read it to know). */
    int (*size)(ls_weight_source *ws, const char *rel, uint64_t *size, ls_error *err);
    void (*release)(ls_weight_source *ws);
    void *impl;
    bool sizes_only; /* ls_load_opts.weight_sizes_only: the weights' configs and sizes, not their bytes */
};

void ls_weight_source_free(ls_weight_source *ws);
/* In memory: members added by name (the generator uses it). */
ls_weight_source *ls_weight_source_memory(const char *where, const char *model);
void ls_weight_source_memory_add(ls_weight_source *ws, const char *rel, ls_blob *data); /* takes data */
/* A folder laid out like an archive's root. */
ls_weight_source *ls_weight_source_folder(const char *root, const char *model);

/* ---- loading */
/* ls_load_json with the options (model name for messages, metadata only) and the nesting of
 * lowered modules (a lowered module's program is loaded by the same code, depth + 1). */
int ls_load_json_ex(const char *where, const char *name, const char *json, size_t len, ls_weight_source *ws,
                    bool metadata_only, int depth, ls_program **out, ls_error *err);
/* The same for a text the caller gives up: a streamed load gives the pages of the nodes it
 * has read back to the kernel (madvise MADV_DONTNEED: anonymous pages read as zeros after), so
 * the load's peak is not the text and the whole program (the caller frees the text after). */
int ls_load_json_consuming(const char *where, const char *name, char *json, size_t len, ls_weight_source *ws,
                           bool metadata_only, ls_program **out, ls_error *err);
/* While a load runs, cJSON allocates from an arena (see json_util.c); trees parsed inside are
 * released with ls_json_free, which leaves them to the arena. Calls nest. */
void ls_json_arena_begin(void);
void ls_json_arena_end(void);
void ls_json_free(cJSON *j);
/* Where the arena is, and back to it: what was parsed since is dropped (a streamed load parses
 * each node's element, makes the node, and drops the element). The chunks taken since are kept
 * for what comes next. */
typedef struct ls_json_mark {
    void *head;
    char *next, *end;
} ls_json_mark;
ls_json_mark ls_json_arena_mark(void);
void ls_json_arena_rewind(ls_json_mark m);
/* The same from a parsed tree (a lowered module's program sits inside another JSON). */
int ls_load_json_tree(const char *where, const char *name, const cJSON *root, ls_weight_source *ws,
                      bool metadata_only, int depth, ls_program **out, ls_error *err);
/* Parses JSON text, failing with "WHERE: invalid JSON at line L, column C: ..." and a clear
 * message when the nesting is deeper than cJSON accepts. */
cJSON *ls_json_parse(const char *where, const char *text, size_t len, ls_error *err);
/* ls_json_parse's checks and messages apart: the text is UTF-8 without \u0000 (0, or -1 with
 * err set); and the message for a parse that failed at `end` of text. */
int ls_json_check_text(const char *where, const char *text, size_t len, ls_error *err);
void ls_json_fail_at(const char *where, const char *text, size_t len, const char *end, ls_error *err);
/* Where a count of lines, columns and nesting stands in a text (ls_json_fail_at counts from the
 * start; a streamed load that gave the text before `at` back counts from where it stopped). */
typedef struct ls_json_pos {
    size_t at, line, col;
    int depth, max_depth;
} ls_json_pos;
void ls_json_fail_from(const char *where, const char *text, size_t len, const ls_json_pos *from, const char *end,
                       ls_error *err);

/* Fills the state dict and constants of p from the weight source (or, without one or with
 * metadata_only, from the placeholders' metadata: has_weights = false). Checks that each
 * parameter, buffer and constant spec finds its data. */
int ls_read_weights(ls_program *p, const char *where, ls_weight_source *ws, bool metadata_only, ls_error *err);

/* Reads a lowered module serialized by ExecuTorch's exir serde (the as_string argument of an
 * executorch_call_delegate node) into sub. Returns -1 (err set) if it cannot. */
int ls_read_lowered_module(const char *where, const char *name, const char *json, int depth, ls_submodule *sub,
                           ls_error *err);

/* ---- JSON helpers */
/* k == lit, for JSON member names: the readers compare millions of them, and most differ in
 * their first two characters (checked inline before any call). */
static inline bool ls_key_is(const char *k, const char *lit)
{
    return k && k[0] == lit[0] && (!lit[0] || (k[1] == lit[1] && (!lit[1] || strcmp(k + 2, lit + 2) == 0)));
}
/* obj[key], or NULL when absent or JSON null. */
static inline const cJSON *ls_jget(const cJSON *obj, const char *key)
{
    if (!obj || !cJSON_IsObject(obj)) return NULL;
    const cJSON *v = cJSON_GetObjectItemCaseSensitive(obj, key);
    return v && !cJSON_IsNull(v) ? v : NULL;
}
static inline const char *ls_jstr(const cJSON *v)
{
    return v && cJSON_IsString(v) ? v->valuestring : NULL;
}
/* The member in use of a union object: the only member, or the first that is not null
 * (old writers spelled every member out). *kind gets its key. NULL if obj is not an object. */
const cJSON *ls_junion(const cJSON *obj, const char **kind);
/* An integer (clamped to int64 when the double is out of range); false if not a number. */
bool ls_jint(const cJSON *v, int64_t *out);
/* A float: a number, or "Infinity", "-Infinity", "NaN" as strings. */
bool ls_jfloat(const cJSON *v, double *out);
/* A TensorMeta (or the v1 {"meta": TensorMeta}) into m. Fails with a message about the value
 * (the caller prefixes the place). strides (may be NULL) receives the strides, *offset the
 * storage offset (may be NULL). */
int ls_read_tmeta(const cJSON *tm, ls_tmeta *m, int64_t *strides, int64_t *offset, ls_error *err);
/* A SymInt ({"as_int": 3} or {"as_expr": {"expr_str": "s0", "hint": ...}}): *sym is NULL or the
 * interned expression, *v the value or hint (-1 without hint). */
int ls_read_symint(const cJSON *s, int64_t *v, const char **sym, ls_error *err);

#endif
