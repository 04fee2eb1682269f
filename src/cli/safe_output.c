/* The commands' standard output and error, made safe for the terminal at the one place all
 * their text passes: stdout and stderr are replaced by streams whose writes go through
 * ls_safe_step (safe_text.h) on their way to file descriptors 1 and 2. Every printf of every
 * command, and of what a command calls, is covered, including the ones written later. */
#define _GNU_SOURCE /* fopencookie */
#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "cli.h"
#include "safe_text.h"

typedef struct safe_sink {
    int fd;
    char pending[4]; /* the start of a character the last write cut */
    size_t npending;
    int failed; /* errno of the first write that failed, 0 */
} safe_sink;

static safe_sink sinks[2] = {{1, {0}, 0, 0}, {2, {0}, 0, 0}};
static FILE *streams[2];

static int write_all(int fd, const char *s, size_t n)
{
    while (n) {
        ssize_t w = write(fd, s, n);
        if (w < 0 && errno == EINTR) continue;
        if (w <= 0) return -1;
        s += w;
        n -= (size_t)w;
    }
    return 0;
}

/* Escapes s[0..n) (after what the last write left) to the descriptor; a character cut at the
 * end waits for the next write unless `final`. */
static int sink_put(safe_sink *k, const char *s, size_t n, bool final)
{
    char out[8192];
    size_t w = 0;
    char joined[4 + LS_SAFE_MAX];
    /* finish the character the last write cut, byte by byte until it is whole or invalid */
    while (k->npending && (n || final)) {
        size_t take = n < sizeof joined - k->npending ? n : sizeof joined - k->npending;
        memcpy(joined, k->pending, k->npending);
        memcpy(joined + k->npending, s, take);
        char piece[LS_SAFE_MAX];
        size_t len, used = ls_safe_step(joined, k->npending + take, LS_SAFE_LAYOUT, final, piece, &len);
        if (!used) { /* still cut: keep all of it */
            memcpy(k->pending + k->npending, s, take);
            k->npending += take;
            return 0;
        }
        memcpy(out + w, piece, len);
        w += len;
        if (used >= k->npending) {
            s += used - k->npending;
            n -= used - k->npending;
            k->npending = 0;
        } else { /* an invalid first byte: the rest is looked at again */
            memmove(k->pending, k->pending + used, k->npending - used);
            k->npending -= used;
        }
    }
    while (n) {
        if (w > sizeof out - LS_SAFE_MAX) {
            if (write_all(k->fd, out, w) != 0) return -1;
            w = 0;
        }
        /* plain ASCII and the layout characters, as they are: nearly all of any output */
        size_t run = 0;
        while (run < n && w + run < sizeof out &&
               (((unsigned char)s[run] >= 0x20 && (unsigned char)s[run] < 0x7f) || s[run] == '\n' || s[run] == '\t'))
            run++;
        if (run) {
            memcpy(out + w, s, run);
            w += run;
            s += run;
            n -= run;
            continue;
        }
        char piece[LS_SAFE_MAX];
        size_t len, used = ls_safe_step(s, n, LS_SAFE_LAYOUT, final, piece, &len);
        if (!used) { /* n < 4 here: the start of a character */
            memcpy(k->pending, s, n);
            k->npending = n;
            break;
        }
        memcpy(out + w, piece, len);
        w += len;
        s += used;
        n -= used;
    }
    return w ? write_all(k->fd, out, w) : 0;
}

static ssize_t sink_write(void *cookie, const char *buf, size_t size)
{
    safe_sink *k = cookie;
    if (sink_put(k, buf, size, false) == 0) return (ssize_t)size;
    if (!k->failed) k->failed = errno ? errno : EIO;
    return -1;
}

static int sink_close(void *cookie)
{
    return sink_put(cookie, "", 0, true);
}

int ls_cli_output_done(int rc)
{
    int failed = 0;
    errno = 0;
    if (fflush(stdout) != 0 || ferror(stdout)) failed = errno ? errno : EIO;
    if (streams[0]) {
        if (sink_put(&sinks[0], "", 0, true) != 0 && !sinks[0].failed) sinks[0].failed = errno ? errno : EIO;
        if (sinks[0].failed) failed = sinks[0].failed;
    }
    if (!failed) return rc;
    /* a full disk or a closed pipe must not pass for a complete result */
    ls_cli_error("cannot write the output (standard output): %s", strerror(failed));
    return LS_EXIT_INPUT;
}

/* At exit: what the streams hold, then a character left cut (shown as invalid bytes). */
static void flush_at_exit(void)
{
    for (int i = 0; i < 2; i++)
        if (streams[i]) {
            fflush(streams[i]);
            sink_put(&sinks[i], "", 0, true);
        }
}

void ls_cli_safe_output(bool with_stdout)
{
    cookie_io_functions_t io = {.write = sink_write, .close = sink_close};
    bool any = false;
    for (int i = with_stdout ? 0 : 1; i < 2; i++) {
        if (streams[i]) continue;
        FILE *f = fopencookie(&sinks[i], "w", io);
        if (!f) continue; /* then the text goes out as it is: better than none */
        /* as the streams they replace: stderr unbuffered, stdout by lines on a terminal */
        fflush(i ? stderr : stdout);
        if (i) setvbuf(f, NULL, _IONBF, 0);
        else setvbuf(f, NULL, isatty(1) ? _IOLBF : _IOFBF, 0);
        streams[i] = f;
        if (i) stderr = f;
        else stdout = f;
        any = true;
    }
    static bool registered;
    if (any && !registered) atexit(flush_at_exit);
    registered |= any;
}
