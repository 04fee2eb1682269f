/* Reading an exported program's JSON a part at a time (json_stream.h): where the big parts
 * are, the skeleton without them, the nodes element by element and tensor_values by entry. */
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/mman.h>
#include <unistd.h>

#include "json_loader.h"
#include "json_stream.h"
#include "progress.h"

bool ls_jstream_plan(ls_jstream *js, const char *s, size_t len)
{
    memset(js, 0, sizeof *js);
    js->text = s;
    js->len = len;
    size_t gm, graph, nodes, tv;
    /* the root (depth 0) holds graph_module (1), which holds graph (2), which holds both (3) */
    if (!ls_jscan_member(s, len, 0, 0, "graph_module", &gm) || !ls_jscan_member(s, len, gm, 1, "graph", &graph) ||
        !ls_jscan_member(s, len, graph, 2, "nodes", &nodes) || s[nodes] != '[')
        return false;
    size_t end = ls_jscan_value(s, len, nodes, 3);
    if (end == SIZE_MAX) return false;
    js->nodes_at = nodes;
    js->nodes_end = end;
    if (ls_jscan_member(s, len, graph, 2, "tensor_values", &tv) && s[tv] == '{') {
        end = ls_jscan_value(s, len, tv, 3);
        if (end == SIZE_MAX) return false;
        js->tv_at = tv;
        js->tv_end = end;
        js->tv_next = ls_jscan_ws(s, len, tv + 1);
    }
    return true;
}

char *ls_jstream_skeleton(const ls_jstream *js, size_t *n)
{
    /* the two spans in text order, each replaced by its brackets */
    size_t cut[2][2] = {{js->nodes_at, js->nodes_end}, {js->tv_at, js->tv_end}};
    int nc = js->tv_end ? 2 : 1;
    if (nc == 2 && cut[1][0] < cut[0][0]) {
        size_t t0 = cut[0][0], t1 = cut[0][1];
        cut[0][0] = cut[1][0], cut[0][1] = cut[1][1];
        cut[1][0] = t0, cut[1][1] = t1;
    }
    size_t total = js->len + 4;
    for (int c = 0; c < nc; c++) total -= cut[c][1] - cut[c][0];
    char *out = ls_malloc(total + 1);
    size_t o = 0, from = 0;
    for (int c = 0; c < nc; c++) {
        memcpy(out + o, js->text + from, cut[c][0] - from);
        o += cut[c][0] - from;
        out[o++] = js->text[cut[c][0]];         /* [ or { */
        out[o++] = js->text[cut[c][1] - 1];     /* ] or } */
        from = cut[c][1];
    }
    memcpy(out + o, js->text + from, js->len - from);
    o += js->len - from;
    out[o] = 0;
    *n = o;
    return out;
}

void ls_jstream_free(ls_jstream *js)
{
    ls_strmap_free(&js->tv_index);
}

/* ---- nodes */

/* Gives the pages of the nodes read, before element boundary `at`, back to the kernel: at a
 * million nodes the text is 800 MB, which the load held beside the whole program. Lines and
 * columns are counted up to `at` first (memchr: a tenth of a second at 800 MB); between two
 * elements the nesting is that of the nodes array (root, graph_module, graph, nodes). */
static void give_back_read(ls_jstream *js, size_t at)
{
    const char *s = js->text;
    for (const char *p = s + js->pos.at, *nl; p < s + at && (nl = memchr(p, '\n', (size_t)(s + at - p))); p = nl + 1) {
        js->pos.line++;
        js->pos.col = 1;
        js->pos.at = (size_t)(nl + 1 - s);
    }
    js->pos.col += at - js->pos.at;
    js->pos.at = at;
    js->pos.depth = js->pos.max_depth = 4;
    uintptr_t page = (uintptr_t)sysconf(_SC_PAGESIZE), base = (uintptr_t)s;
    uintptr_t from = (base + (js->given_to > js->nodes_at ? js->given_to : js->nodes_at + 1) + page - 1) & ~(page - 1);
    uintptr_t to = (base + at) & ~(page - 1);
    if (to <= from) return;
    if (madvise((void *)from, to - from, MADV_DONTNEED) == 0) js->given_to = to - base;
}

int ls_loader_read_nodes_stream(loader *L)
{
    ls_jstream *js = L->js;
    const char *s = js->text;
    size_t end = js->nodes_end, p = ls_jscan_ws(s, end, js->nodes_at + 1);
    if (p < end && s[p] == ']') return 0;
    char what[300];
    snprintf(what, sizeof what, "reading %s", L->where);
    for (uint32_t idx = 0;; idx++) {
        if ((idx & 4095) == 0 && L->depth == 0) {
            ls_progress(what, p, js->len);
            if (ls_cancelled()) return ls_fail_cancelled(L->err, L->where);
            if (js->give_back && idx) give_back_read(js, p);
        }
        ls_json_mark m = ls_json_arena_mark();
        const char *after = NULL;
        cJSON *sn = cJSON_ParseWithLengthOpts(s + p, end - p, &after, false);
        if (!sn) { /* json_scan.c passed it: cJSON should not refuse it either */
            if (js->given_to) ls_json_fail_from(L->where, s, js->len, &js->pos, cJSON_GetErrorPtr(), L->err);
            else ls_json_fail_at(L->where, s, js->len, cJSON_GetErrorPtr(), L->err);
            return -1;
        }
        int rc = ls_loader_read_node(L, sn, idx);
        ls_json_arena_rewind(m); /* the element's tree: the node holds nothing of it */
        if (rc != 0) return -1;
        p = ls_jscan_ws(s, end, (size_t)(after - s));
        if (p >= end || s[p] != ',') return 0;
        p = ls_jscan_ws(s, end, p + 1);
    }
}

/* ---- tensor_values */

/* The value that starts at v; the entry after it becomes the next one expected. */
static const cJSON *tval_at(ls_jstream *js, size_t v)
{
    const char *after = NULL;
    cJSON *val = cJSON_ParseWithLengthOpts(js->text + v, js->tv_end - v, &after, false);
    if (!val) return NULL;
    size_t p = ls_jscan_ws(js->text, js->tv_end, (size_t)(after - js->text));
    if (p < js->tv_end && js->text[p] == ',') p = ls_jscan_ws(js->text, js->tv_end, p + 1);
    js->tv_next = p;
    return val;
}

/* The entry's key at k: its name, interned (an escaped key is read through cJSON), and where
 * its value starts. False at the end of the object. */
static bool entry_at(const ls_jstream *js, size_t k, const char **name, size_t *value)
{
    const char *s = js->text;
    if (k >= js->tv_end || s[k] != '"') return false;
    size_t ke = ls_jscan_string(s, js->tv_end, k);
    if (ke == SIZE_MAX) return false;
    if (memchr(s + k, '\\', ke - k)) {
        cJSON *str = cJSON_ParseWithLength(s + k, ke - k);
        *name = ls_intern(ls_jstr(str));
        ls_json_free(str);
    } else {
        *name = ls_intern_n(s + k + 1, ke - k - 2);
    }
    size_t c = ls_jscan_ws(s, js->tv_end, ke);
    *value = ls_jscan_ws(s, js->tv_end, c + 1); /* after the ':' */
    return true;
}

const cJSON *ls_loader_stream_tval(loader *L, const char *name)
{
    ls_jstream *js = L->js;
    if (!js->tv_end) return NULL;
    const char *s = js->text;
    size_t k = js->tv_next, nl = strlen(name);
    if (k < js->tv_end && s[k] == '"' && k + nl + 1 < js->tv_end && s[k + 1 + nl] == '"' &&
        memcmp(s + k + 1, name, nl) == 0 && !memchr(s + k + 1, '\\', nl)) {
        size_t c = ls_jscan_ws(s, js->tv_end, k + nl + 2);
        return tval_at(js, ls_jscan_ws(s, js->tv_end, c + 1));
    }
    if (!js->tv_indexed) { /* out of graph order: every entry by name, once (the first of a name wins) */
        js->tv_indexed = true;
        size_t p = ls_jscan_ws(s, js->tv_end, js->tv_at + 1);
        const char *key;
        size_t v;
        while (entry_at(js, p, &key, &v)) {
            bool added;
            if (key) ls_strmap_add(&js->tv_index, key, ls_strmap_hash(key, strlen(key)), v, &added);
            p = ls_jscan_value(s, js->tv_end, v, 4);
            if (p == SIZE_MAX) break;
            p = ls_jscan_ws(s, js->tv_end, p);
            if (p >= js->tv_end || s[p] != ',') break;
            p = ls_jscan_ws(s, js->tv_end, p + 1);
        }
    }
    const char *iname = ls_intern(name);
    ls_strmap_slot *slot = ls_strmap_find(&js->tv_index, iname, ls_strmap_hash(iname, strlen(iname)));
    return slot ? tval_at(js, slot->val) : NULL;
}
