/* Text from files made safe to show (safe_text.h): one decoder for the CLI's output filter, the
 * UI's drawing and JSON strings. */
#include "safe_text.h"

#include <stdint.h>
#include <string.h>

static const char hex[] = "0123456789abcdef";

/* The length of the valid UTF-8 character at s (RFC 3629: no overlong forms, no surrogates,
 * nothing past U+10FFFF), its code point in *cp; 0 when it is invalid (*bad: the offset of the
 * byte that makes it so); -k when the n bytes there are the first of a valid character of k
 * bytes. */
static int utf8_char_at(const unsigned char *s, size_t n, unsigned *cp, size_t *bad)
{
    *bad = 0;
    unsigned c = s[0];
    if (c < 0x80) {
        *cp = c;
        return 1;
    }
    int len;
    unsigned lo = 0x80, hi = 0xbf; /* the range of the second byte */
    if (c >= 0xc2 && c <= 0xdf) len = 2, *cp = c & 0x1f;
    else if (c >= 0xe0 && c <= 0xef) {
        len = 3, *cp = c & 0x0f;
        if (c == 0xe0) lo = 0xa0;
        if (c == 0xed) hi = 0x9f;
    } else if (c >= 0xf0 && c <= 0xf4) {
        len = 4, *cp = c & 0x07;
        if (c == 0xf0) lo = 0x90;
        if (c == 0xf4) hi = 0x8f;
    } else {
        return 0;
    }
    for (int k = 1; k < len; k++) {
        if ((size_t)k >= n) return -len;
        unsigned b = s[k];
        if (k == 1 ? (b < lo || b > hi) : (b & 0xc0) != 0x80) {
            *bad = (size_t)k;
            return 0;
        }
        *cp = (*cp << 6) | (b & 0x3f);
    }
    return len;
}

static int utf8_char(const unsigned char *s, size_t n, unsigned *cp)
{
    size_t bad;
    return utf8_char_at(s, n, cp, &bad);
}

size_t ls_utf8_check(const char *text, size_t n, const char **why)
{
    const unsigned char *s = (const unsigned char *)text;
    size_t i = 0;
    *why = NULL;
    while (i < n) {
        /* eight ASCII bytes at a time: most of any JSON */
        if (i + 8 <= n) {
            uint64_t w;
            memcpy(&w, s + i, 8);
            if (!(w & 0x8080808080808080ull)) {
                i += 8;
                continue;
            }
        }
        if (s[i] < 0x80) {
            i++;
            continue;
        }
        unsigned cp;
        size_t bad;
        int len = utf8_char_at(s + i, n - i, &cp, &bad);
        if (len > 0) {
            i += (size_t)len;
            continue;
        }
        /* CPython's words for it (its UTF-8 decoder is what torch's loader runs) */
        *why = len < 0 ? "unexpected end of data" : bad ? "invalid continuation byte" : "invalid start byte";
        return i; /* CPython names the byte that starts the sequence */
    }
    return n;
}

static bool is_bidi_control(unsigned cp)
{
    return (cp >= 0x202a && cp <= 0x202e) || (cp >= 0x2066 && cp <= 0x2069);
}

static size_t put_u(char *out, unsigned cp)
{
    out[0] = '\\', out[1] = 'u';
    for (int i = 0; i < 4; i++) out[2 + i] = hex[(cp >> (12 - 4 * i)) & 15];
    return 6;
}

size_t ls_safe_step(const char *s, size_t n, unsigned flags, bool final, char out[LS_SAFE_MAX], size_t *out_len)
{
    const unsigned char *p = (const unsigned char *)s;
    bool json = flags & LS_SAFE_JSON;
    unsigned cp;
    int len = utf8_char(p, n, &cp);
    if (len < 0 && !final) {
        *out_len = 0;
        return 0;
    }
    if (len <= 0) { /* a byte that does not start a valid character */
        size_t k = 0;
        if (json) out[k++] = '\\';
        out[k++] = '\\', out[k++] = 'x', out[k++] = hex[p[0] >> 4], out[k++] = hex[p[0] & 15];
        *out_len = k;
        return 1;
    }
    if (cp < 0x20 || cp == 0x7f) {
        if (cp == '\n' && (json || (flags & LS_SAFE_LAYOUT))) {
            if (json) memcpy(out, "\\n", 2), *out_len = 2;
            else out[0] = '\n', *out_len = 1;
        } else if (cp == '\t' && (json || (flags & LS_SAFE_LAYOUT))) {
            if (json) memcpy(out, "\\t", 2), *out_len = 2;
            else out[0] = '\t', *out_len = 1;
        } else if (json && cp == '\r') {
            memcpy(out, "\\r", 2), *out_len = 2;
        } else if (json) {
            *out_len = put_u(out, cp);
        } else {
            out[0] = '\\', out[1] = 'x', out[2] = hex[cp >> 4], out[3] = hex[cp & 15];
            *out_len = 4;
        }
        return 1;
    }
    if ((cp >= 0x80 && cp <= 0x9f) || is_bidi_control(cp)) {
        *out_len = put_u(out, cp);
        return (size_t)len;
    }
    if (json && (cp == '"' || cp == '\\')) {
        out[0] = '\\', out[1] = (char)cp;
        *out_len = 2;
        return 1;
    }
    memcpy(out, s, (size_t)len);
    *out_len = (size_t)len;
    return (size_t)len;
}

void ls_buf_put_safe(ls_buf *b, const char *s, size_t n, unsigned flags)
{
    while (n) {
        /* runs of plain ASCII in one copy: most text is */
        size_t run = 0;
        while (run < n && (unsigned char)s[run] >= 0x20 && (unsigned char)s[run] < 0x7f &&
               (!(flags & LS_SAFE_JSON) || (s[run] != '"' && s[run] != '\\')))
            run++;
        if (run) {
            ls_buf_putn(b, s, run);
            s += run;
            n -= run;
            continue;
        }
        char out[LS_SAFE_MAX];
        size_t len, used = ls_safe_step(s, n, flags, true, out, &len);
        ls_buf_putn(b, out, len);
        s += used;
        n -= used;
    }
}

size_t ls_safe_copy(const char *s, size_t n, unsigned flags, char *out, size_t cap)
{
    size_t w = 0;
    while (n) {
        char piece[LS_SAFE_MAX];
        size_t len, used = ls_safe_step(s, n, flags, true, piece, &len);
        if (w + len >= cap) break;
        memcpy(out + w, piece, len);
        w += len;
        s += used;
        n -= used;
    }
    out[w] = 0;
    return w;
}

bool ls_safe_is_plain(const char *s, size_t n, unsigned flags)
{
    while (n) {
        char piece[LS_SAFE_MAX];
        size_t len, used = ls_safe_step(s, n, flags, true, piece, &len);
        if (len != used || memcmp(piece, s, len) != 0) return false;
        s += used;
        n -= used;
    }
    return true;
}
