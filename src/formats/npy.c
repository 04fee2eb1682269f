/* NumPy .npy reading and writing (see include/npy.h). The header is a Python dict literal:
 *   {'descr': '<f4', 'fortran_order': False, 'shape': (2, 3), }
 * padded with spaces and a newline so the data starts on a 64-byte boundary. */
#include "npy.h"

#include <ctype.h>
#include <inttypes.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#define NPY_MAGIC "\x93NUMPY"
#define NPY_MAX_FILE ((size_t)1 << 36)

typedef struct hdr {
    char descr[32];
    bool fortran;
    int ndim;
    int64_t shape[LS_MAX_DIMS];
    bool has_descr, has_fortran, has_shape;
} hdr;

typedef struct cursor {
    const char *p, *end;
} cursor;

static void skip_ws(cursor *c)
{
    while (c->p < c->end && isspace((unsigned char)*c->p)) c->p++;
}

static bool eat(cursor *c, char ch)
{
    skip_ws(c);
    if (c->p < c->end && *c->p == ch) {
        c->p++;
        return true;
    }
    return false;
}

/* a quoted string ('...' or "...") into buf */
static bool parse_str(cursor *c, char *buf, size_t cap)
{
    skip_ws(c);
    if (c->p >= c->end || (*c->p != '\'' && *c->p != '"')) return false;
    char q = *c->p++;
    size_t n = 0;
    while (c->p < c->end && *c->p != q) {
        if (n + 1 >= cap) return false;
        buf[n++] = *c->p++;
    }
    if (c->p >= c->end) return false;
    c->p++;
    buf[n] = 0;
    return true;
}

static int parse_header(const char *text, size_t len, hdr *h, const char *where, ls_error *err)
{
    cursor c = {text, text + len};
    memset(h, 0, sizeof *h);
    if (!eat(&c, '{')) return ls_fail(err, "%s: corrupt header: it does not start with '{'", where);
    for (;;) {
        if (eat(&c, '}')) break;
        char key[32];
        if (!parse_str(&c, key, sizeof key)) return ls_fail(err, "%s: corrupt header: expected a quoted key", where);
        if (!eat(&c, ':')) return ls_fail(err, "%s: corrupt header: expected ':' after '%s'", where, key);
        skip_ws(&c);
        if (strcmp(key, "descr") == 0) {
            if (!parse_str(&c, h->descr, sizeof h->descr))
                return ls_fail(err, "%s: unsupported dtype: 'descr' is not a simple type string (structured arrays are not tensors)",
                               where);
            h->has_descr = true;
        } else if (strcmp(key, "fortran_order") == 0) {
            if ((size_t)(c.end - c.p) >= 4 && strncmp(c.p, "True", 4) == 0) h->fortran = true, c.p += 4;
            else if ((size_t)(c.end - c.p) >= 5 && strncmp(c.p, "False", 5) == 0) h->fortran = false, c.p += 5;
            else return ls_fail(err, "%s: corrupt header: 'fortran_order' is not True or False", where);
            h->has_fortran = true;
        } else if (strcmp(key, "shape") == 0) {
            if (!eat(&c, '(')) return ls_fail(err, "%s: corrupt header: 'shape' is not a tuple", where);
            h->ndim = 0;
            for (;;) {
                if (eat(&c, ')')) break;
                skip_ws(&c);
                if (c.p >= c.end || !isdigit((unsigned char)*c.p))
                    return ls_fail(err, "%s: corrupt header: 'shape' holds something other than non-negative integers", where);
                if (h->ndim == LS_MAX_DIMS)
                    return ls_fail(err, "%s: unsupported shape: more than %d dimensions", where, LS_MAX_DIMS);
                int64_t v = 0;
                while (c.p < c.end && isdigit((unsigned char)*c.p)) {
                    if (v > (INT64_MAX - 9) / 10) return ls_fail(err, "%s: corrupt header: a dimension overflows", where);
                    v = v * 10 + (*c.p++ - '0');
                }
                if (c.p < c.end && *c.p == 'L') c.p++; /* Python 2 longs */
                h->shape[h->ndim++] = v;
                if (!eat(&c, ',')) {
                    if (!eat(&c, ')')) return ls_fail(err, "%s: corrupt header: bad 'shape' tuple", where);
                    break;
                }
            }
            h->has_shape = true;
        } else {
            return ls_fail(err, "%s: corrupt header: unexpected key '%s'", where, key);
        }
        if (!eat(&c, ',')) {
            if (!eat(&c, '}')) return ls_fail(err, "%s: corrupt header: expected ',' or '}'", where);
            break;
        }
    }
    if (!h->has_descr || !h->has_fortran || !h->has_shape)
        return ls_fail(err, "%s: corrupt header: it lacks %s", where,
                       !h->has_descr ? "'descr'" : !h->has_fortran ? "'fortran_order'" : "'shape'");
    return 0;
}

/* The dtype of a descr; big-endian descrs are mapped to the same type and flagged. */
static ls_dtype descr_dtype(const char *descr, bool *swap)
{
    *swap = false;
    char d[32];
    snprintf(d, sizeof d, "%s", descr);
    if (d[0] == '>' || d[0] == '!') {
        *swap = true;
        d[0] = '<';
    }
    ls_dtype t = ls_dtype_from_npy_descr(d);
    if (t != LS_DT_UNKNOWN && ls_dtype_size(t) == 1) *swap = false;
    return t;
}

static void byteswap(uint8_t *p, size_t es, size_t n)
{
    for (size_t i = 0; i < n; i++, p += es)
        for (size_t a = 0, b = es - 1; a < b; a++, b--) {
            uint8_t t = p[a];
            p[a] = p[b];
            p[b] = t;
        }
}

int ls_npy_parse(const uint8_t *data, size_t size, const char *where, ls_tensor **out, ls_error *err)
{
    *out = NULL;
    if (size < 10 || memcmp(data, NPY_MAGIC, 6) != 0) return ls_fail(err, "%s: not a .npy file (no \\x93NUMPY magic)", where);
    int major = data[6], minor = data[7];
    size_t hlen, hstart;
    if (major == 1) {
        hlen = (size_t)ls_le_get(data + 8, 2);
        hstart = 10;
    } else if (major == 2 || major == 3) {
        if (size < 12) return ls_fail(err, "%s: truncated header", where);
        hlen = (size_t)ls_le_get(data + 8, 4);
        hstart = 12;
    } else {
        return ls_fail(err, "%s: unsupported .npy format version %d.%d (1.0, 2.0 and 3.0 are read)", where, major, minor);
    }
    if (hlen > size - hstart) return ls_fail(err, "%s: truncated header (%zu bytes announced, %zu present)", where, hlen, size - hstart);
    hdr h;
    if (parse_header((const char *)data + hstart, hlen, &h, where, err) != 0) return -1;
    bool swap;
    ls_dtype dt = descr_dtype(h.descr, &swap);
    if (dt == LS_DT_UNKNOWN)
        return ls_fail(err, "%s: unsupported dtype '%s' (bool, int8/16/32/64, uint8/16/32/64, float16/32/64 are read)", where,
                       h.descr);
    ls_tmeta m;
    ls_tmeta_init(&m, dt, h.ndim, h.shape);
    uint64_t nbytes;
    ls_error e2;
    if (ls_tmeta_check_size(&m, NPY_MAX_FILE, &nbytes, &e2) != 0) return ls_fail(err, "%s: shape %s", where, e2.msg);
    size_t avail = size - hstart - hlen;
    char ms[128];
    if (avail != nbytes)
        return ls_fail(err, "%s: %s data: %s needs %" PRIu64 " bytes, the file has %zu", where,
                       avail < nbytes ? "truncated" : "too much", ls_tmeta_str(&m, ms, sizeof ms), nbytes, avail);
    const uint8_t *src = data + hstart + hlen;
    ls_tensor *t;
    /* no elements: nothing to reorder (and the stride product of the other sizes can overflow) */
    if (h.fortran && h.ndim > 1 && nbytes) {
        int64_t st[LS_MAX_DIMS], s = 1;
        for (int d = 0; d < h.ndim; d++) st[d] = s, s *= h.shape[d];
        uint8_t *tmp = NULL;
        if (((uintptr_t)src % ls_dtype_size(dt)) != 0 || swap) { /* aligned (and swapped) source */
            tmp = ls_malloc(nbytes ? nbytes : 1);
            memcpy(tmp, src, nbytes);
            if (swap) byteswap(tmp, ls_dtype_size(dt), nbytes / ls_dtype_size(dt));
            src = tmp;
            swap = false;
        }
        t = ls_tensor_from_strided(src, dt, h.ndim, h.shape, st);
        free(tmp);
    } else {
        t = ls_tensor_new(dt, h.ndim, h.shape, &e2);
        if (!t) return ls_fail(err, "%s: %s", where, e2.msg);
        if (nbytes) memcpy(t->data, src, nbytes);
    }
    if (swap) byteswap(t->data, ls_dtype_size(dt), (size_t)t->numel);
    *out = t;
    return 0;
}

int ls_npy_load(const char *path, ls_tensor **out, ls_error *err)
{
    uint8_t *data;
    size_t size;
    *out = NULL;
    if (ls_read_file(path, NPY_MAX_FILE, &data, &size, err) != 0) return -1;
    int rc = ls_npy_parse(data, size, path, out, err);
    free(data);
    return rc;
}

uint8_t *ls_npy_encode(const ls_tensor *t, size_t *size)
{
    ls_dtype dt = t->dtype == LS_DT_BF16 ? LS_DT_F32 : t->dtype;
    const char *descr = ls_dtype_npy_descr(dt);
    if (!descr) descr = "|u1";
    ls_buf h = {0};
    ls_buf_printf(&h, "{'descr': '%s', 'fortran_order': False, 'shape': (", descr);
    for (int d = 0; d < t->ndim; d++) ls_buf_printf(&h, "%" PRId64 "%s", t->sizes[d], t->ndim == 1 ? "," : d + 1 < t->ndim ? ", " : "");
    ls_buf_puts(&h, "), }");
    size_t pre = h.len + 1 < 65536 - 10 ? 10 : 12;
    while ((pre + h.len + 1) % 64 != 0) ls_buf_putc(&h, ' ');
    ls_buf_putc(&h, '\n');
    size_t es = ls_dtype_size(dt), nbytes = (size_t)t->numel * es;
    uint8_t *out = ls_malloc(pre + h.len + nbytes + 1);
    memcpy(out, NPY_MAGIC, 6);
    out[6] = pre == 10 ? 1 : 2;
    out[7] = 0;
    ls_le_put(out + 8, h.len, pre == 10 ? 2 : 4);
    memcpy(out + pre, h.s, h.len);
    uint8_t *d = out + pre + h.len;
    if (t->dtype == LS_DT_BF16) {
        for (int64_t i = 0; i < t->numel; i++) {
            float f = ls_bf16_to_f32(((const uint16_t *)t->data)[i]);
            memcpy(d + (size_t)i * 4, &f, 4);
        }
    } else if (nbytes) {
        memcpy(d, t->data, nbytes);
    }
    *size = pre + h.len + nbytes;
    ls_buf_free(&h);
    return out;
}

int ls_npy_save(const char *path, const ls_tensor *t, ls_error *err)
{
    size_t size;
    uint8_t *bytes = ls_npy_encode(t, &size);
    int rc = ls_write_file_atomic(path, bytes, size, err);
    free(bytes);
    return rc;
}
