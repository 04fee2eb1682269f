/* Text from files, made safe to show. Names, targets, tags, stack traces and messages come
 * from strangers' files; written raw, an ESC sequence in one sets the terminal's title, writes
 * the clipboard (OSC 52) or clears the screen, and a bidirectional override makes a line read
 * differently from what it holds. Every byte that could do that is shown escaped instead:
 *
 *   C0 controls and DEL          \x00 .. \x1f, \x7f   (with LS_SAFE_LAYOUT: \n and \t kept)
 *   C1 controls U+0080..U+009F   \u0080 .. \u009f
 *   bidi embeddings, overrides   \u202a .. \u202e
 *   and isolates                 \u2066 .. \u2069
 *   a byte of invalid UTF-8      \xNN (each byte that does not start a valid character)
 *
 * The CLI's standard output and error go through it as a whole (cli.c: one filter under every
 * command's printf, so new output inherits it), the terminal UI's drawing through it in
 * ui_put, and JSON strings through ls_buf_json_str, which writes the same characters as JSON
 * escapes (an invalid byte as the text \xNN) so --json is valid JSON and valid UTF-8. */
#ifndef LS_SAFE_TEXT_H
#define LS_SAFE_TEXT_H

#include <stdbool.h>
#include <stddef.h>

#include "common.h"

enum {
    LS_SAFE_LAYOUT = 1, /* keep \n and \t: the text is a whole output with its own lines */
    LS_SAFE_JSON = 2,   /* inside a JSON string: escapes in JSON's spelling, " and \ escaped too */
};
#define LS_SAFE_MAX 12 /* the longest thing one step writes ("\\u202e" in JSON: 6 bytes) */

/* One character of s (n > 0 bytes left): what to show for it into out (not NUL-terminated,
 * *out_len bytes) and the bytes of s it stands for. When s holds only the start of a valid
 * character (a stream cut mid-character), returns 0 unless `final` (then the first byte is
 * invalid and escaped). */
size_t ls_safe_step(const char *s, size_t n, unsigned flags, bool final, char out[LS_SAFE_MAX], size_t *out_len);
/* s[0..n) as it is shown, appended to b. */
void ls_buf_put_safe(ls_buf *b, const char *s, size_t n, unsigned flags);
/* The same into out (cap > 0 bytes), NUL-terminated, cut at a whole shown character; returns
 * its length. */
size_t ls_safe_copy(const char *s, size_t n, unsigned flags, char *out, size_t cap);
/* Where text[0..n) stops being valid UTF-8 (RFC 3629), or n; *why then says what is wrong in
 * CPython's words ("invalid start byte", "invalid continuation byte", "unexpected end of
 * data"), which torch's loader reports for the same bytes. */
size_t ls_utf8_check(const char *text, size_t n, const char **why);
/* True when s[0..n) is shown as it is. */
bool ls_safe_is_plain(const char *s, size_t n, unsigned flags);

#endif
