/* Scanning JSON text without building a tree (json_stream.c reads a program's big arrays an
 * element at a time). The scanner checks what cJSON's parser checks, no less, so that a text it
 * passes is one cJSON parses too: whitespace is any byte up to the space (buffer_skip_whitespace),
 * numbers are what strtod takes of [0-9+-.eE] (parse_number), strings end at an unescaped quote
 * and their escapes are cJSON's (\" \\ \/ \b \f \n \r \t, \uXXXX with surrogates in pairs:
 * utf16_literal_to_utf8), and nesting counts against CJSON_NESTING_LIMIT. Where it refuses
 * anything, the caller parses the whole text with cJSON instead, for cJSON's own message. */
#include <cjson/cJSON.h>
#include <stdint.h>
#include <stdlib.h>
#include <string.h>

#include "progress.h"
#include "json_stream.h"

size_t ls_jscan_ws(const char *s, size_t len, size_t i)
{
    while (i < len && (unsigned char)s[i] <= 32) i++;
    return i;
}

static int hex4(const char *s, size_t len, size_t i)
{
    if (i + 4 > len) return -1;
    int v = 0;
    for (int k = 0; k < 4; k++) {
        char c = s[i + (size_t)k];
        int d = c >= '0' && c <= '9' ? c - '0' : c >= 'a' && c <= 'f' ? c - 'a' + 10 : c >= 'A' && c <= 'F' ? c - 'A' + 10 : -1;
        if (d < 0) return -1;
        v = v * 16 + d;
    }
    return v;
}

size_t ls_jscan_string(const char *s, size_t len, size_t i)
{
    if (i >= len || s[i] != '"') return SIZE_MAX;
    for (size_t j = i + 1; j < len;) {
        const char *q = memchr(s + j, '"', len - j);
        if (!q) return SIZE_MAX;
        const char *b = memchr(s + j, '\\', (size_t)(q - (s + j)));
        if (!b) return (size_t)(q - s) + 1; /* no escape before the closing quote */
        j = (size_t)(b - s) + 1; /* an escape */
        if (j >= len) return SIZE_MAX;
        switch (s[j]) {
        case '"': case '\\': case '/': case 'b': case 'f': case 'n': case 'r': case 't': j++; break;
        case 'u': {
            int c = hex4(s, len, j + 1);
            if (c < 0 || (c >= 0xDC00 && c <= 0xDFFF)) return SIZE_MAX;
            j += 5;
            if (c >= 0xD800 && c <= 0xDBFF) { /* a high surrogate takes its low one */
                if (j + 6 > len || s[j] != '\\' || s[j + 1] != 'u') return SIZE_MAX;
                int lo = hex4(s, len, j + 2);
                if (lo < 0xDC00 || lo > 0xDFFF) return SIZE_MAX;
                j += 6;
            }
            break;
        }
        default: return SIZE_MAX;
        }
    }
    return SIZE_MAX;
}

static size_t scan_number(const char *s, size_t len, size_t i)
{
    char buf[64];
    size_t n = 0;
    while (i + n < len && n < sizeof buf - 1 && strchr("0123456789+-.eE", s[i + n]) && s[i + n]) {
        buf[n] = s[i + n];
        n++;
    }
    if (!n || n == sizeof buf - 1) return SIZE_MAX; /* a number that long: let cJSON judge it */
    buf[n] = 0;
    char *end;
    strtod(buf, &end);
    return end == buf ? SIZE_MAX : i + (size_t)(end - buf);
}

static size_t scan_literal(const char *s, size_t len, size_t i)
{
    static const char *const lits[] = {"true", "false", "null"};
    for (int k = 0; k < 3; k++) {
        size_t l = strlen(lits[k]);
        if (i + l <= len && memcmp(s + i, lits[k], l) == 0) return i + l;
    }
    return SIZE_MAX;
}

static _Thread_local uint32_t values_scanned;

/* One value at s[i] (no whitespace before it), nested `depth` deep already. A load given up
 * (ls_cancelled, asked every 65536 values) ends the scan as a bad text would: the caller asks
 * ls_cancelled before it says so. */
static size_t scan_value(const char *s, size_t len, size_t i, int depth)
{
    if ((++values_scanned & 0xffff) == 0 && ls_cancelled()) return SIZE_MAX;
    if (i >= len) return SIZE_MAX;
    char c = s[i];
    if (c == '"') return ls_jscan_string(s, len, i);
    if (c == '-' || (c >= '0' && c <= '9')) return scan_number(s, len, i);
    if (c != '[' && c != '{') return scan_literal(s, len, i);
    if (depth + 1 >= CJSON_NESTING_LIMIT) return SIZE_MAX;
    char close = c == '[' ? ']' : '}';
    i = ls_jscan_ws(s, len, i + 1);
    if (i < len && s[i] == close) return i + 1;
    for (;;) {
        if (c == '{') {
            i = ls_jscan_string(s, len, i);
            if (i == SIZE_MAX) return SIZE_MAX;
            i = ls_jscan_ws(s, len, i);
            if (i >= len || s[i] != ':') return SIZE_MAX;
            i = ls_jscan_ws(s, len, i + 1);
        }
        i = scan_value(s, len, i, depth + 1);
        if (i == SIZE_MAX) return SIZE_MAX;
        i = ls_jscan_ws(s, len, i);
        if (i >= len) return SIZE_MAX;
        if (s[i] == close) return i + 1;
        if (s[i] != ',') return SIZE_MAX;
        i = ls_jscan_ws(s, len, i + 1);
    }
}

size_t ls_jscan_value(const char *s, size_t len, size_t i, int depth)
{
    return scan_value(s, len, ls_jscan_ws(s, len, i), depth);
}

/* The member `key` of the object at s[i] (its first occurrence, as cJSON_GetObjectItem finds
 * it): *at gets where its value starts. Every member before it is scanned; false when the object
 * has no such member or is not one. */
bool ls_jscan_member(const char *s, size_t len, size_t i, int depth, const char *key, size_t *at)
{
    i = ls_jscan_ws(s, len, i);
    if (i >= len || s[i] != '{') return false;
    size_t kl = strlen(key);
    i = ls_jscan_ws(s, len, i + 1);
    if (i < len && s[i] == '}') return false;
    for (;;) {
        size_t k = i, ke = ls_jscan_string(s, len, i);
        if (ke == SIZE_MAX || memchr(s + k, '\\', ke - k)) return false; /* an escaped key: cJSON compares it unescaped */
        i = ls_jscan_ws(s, len, ke);
        if (i >= len || s[i] != ':') return false;
        i = ls_jscan_ws(s, len, i + 1);
        if (ke - k - 2 == kl && memcmp(s + k + 1, key, kl) == 0) {
            *at = i;
            return true;
        }
        i = scan_value(s, len, i, depth + 1);
        if (i == SIZE_MAX) return false;
        i = ls_jscan_ws(s, len, i);
        if (i >= len || s[i] != ',') return false;
        i = ls_jscan_ws(s, len, i + 1);
    }
}
