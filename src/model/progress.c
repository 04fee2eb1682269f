/* Progress reports (progress.h) and the terminal's progress line. */
#include "progress.h"

#include <pthread.h>
#include <stdbool.h>
#include <stdio.h>
#include <string.h>
#include <sys/ioctl.h>
#include <time.h>
#include <unistd.h>

static ls_progress_fn report_fn;
static void *report_ctx;

void ls_progress_set(ls_progress_fn fn, void *ctx)
{
    report_fn = fn;
    report_ctx = ctx;
}

void ls_progress(const char *what, uint64_t done, uint64_t total)
{
    if (report_fn) report_fn(report_ctx, what, done, total);
}

static _Thread_local const bool *cancel_flag;

void ls_cancel_on(const bool *flag)
{
    cancel_flag = flag;
}

bool ls_cancelled(void)
{
    return cancel_flag && __atomic_load_n(cancel_flag, __ATOMIC_ACQUIRE);
}

int ls_fail_cancelled(ls_error *err, const char *where)
{
    return ls_fail(err, "%s: the load was cancelled", where);
}

/* The terminal's line is drawn by a thread of its own, ten times a second: a step that takes a
 * minute reports once, when it begins, and its line must still appear once the first second has
 * passed and say how long the step has taken. The reporter only keeps the latest report. */
static struct {
    pthread_mutex_t lock;
    pthread_t thread;
    bool running, stop, fresh;
    int fd, cols;
    int width; /* of the line on the terminal, to clear it */
    double started, delay, reported_at;
    char what[160];
    uint64_t done, total;
} tty = {.lock = PTHREAD_MUTEX_INITIALIZER};

void ls_progress_line(char *buf, size_t cap, int cols, const char *what, uint64_t done, uint64_t total, double seconds)
{
    char tail[64] = "";
    if (total)
        snprintf(tail, sizeof tail, ": %.0f%% (%.0f of %.0f MB)", 100.0 * (double)done / (double)total,
                 (double)done / 1e6, (double)total / 1e6);
    else if (seconds >= 1)
        snprintf(tail, sizeof tail, " (%.0f s)", seconds);
    if (cols < 20) cols = 20;
    if ((size_t)cols >= cap) cols = (int)cap - 1;
    /* the numbers always fit: the text before them gives up its end */
    size_t room = (size_t)cols - strlen("lowerscope: ") - strlen(tail);
    size_t n = strlen(what);
    if (n > room) n = room > 3 ? room - 3 : 0;
    snprintf(buf, cap, "lowerscope: %.*s%s%s", (int)n, what, n < strlen(what) ? "..." : "", tail);
    /* the text printed as text: a file name's control characters are not the terminal's business */
    for (char *c = buf; *c; c++)
        if ((unsigned char)*c < 32 || *c == 127) *c = '?';
}

static void tty_write(const char *s, size_t n)
{
    while (n) {
        ssize_t w = write(tty.fd, s, n);
        if (w <= 0) return;
        s += w;
        n -= (size_t)w;
    }
}

/* Draws the latest report (tty.lock held), in place of the line before. */
static void tty_draw(double now)
{
    char line[200], out[420];
    ls_progress_line(line, sizeof line, tty.cols, tty.what, tty.done, tty.total, now - tty.reported_at);
    int n = (int)strlen(line);
    int len = snprintf(out, sizeof out, "\r%s%*s", line, tty.width > n ? tty.width - n : 0, "");
    if (n > tty.width) tty.width = n;
    tty_write(out, len > 0 && (size_t)len < sizeof out ? (size_t)len : 0);
}

static void *tty_ticker(void *arg)
{
    (void)arg;
    pthread_mutex_lock(&tty.lock);
    while (!tty.stop) {
        pthread_mutex_unlock(&tty.lock);
        struct timespec tick = {0, 100 * 1000 * 1000};
        nanosleep(&tick, NULL);
        pthread_mutex_lock(&tty.lock);
        double now = ls_now();
        if (!tty.stop && tty.what[0] && now - tty.started >= tty.delay && (tty.fresh || !tty.total)) {
            tty_draw(now);
            tty.fresh = false;
        }
    }
    pthread_mutex_unlock(&tty.lock);
    return NULL;
}

static void tty_report(void *ctx, const char *what, uint64_t done, uint64_t total)
{
    (void)ctx;
    pthread_mutex_lock(&tty.lock);
    if (strcmp(tty.what, what) || !total) tty.reported_at = ls_now();
    snprintf(tty.what, sizeof tty.what, "%s", what);
    tty.done = done;
    tty.total = total;
    tty.fresh = true;
    pthread_mutex_unlock(&tty.lock);
}

void ls_progress_tty_begin_on(int fd, double delay)
{
    if (tty.running || !isatty(fd)) return;
    tty.fd = fd;
    tty.cols = 80;
    struct winsize ws;
    if (ioctl(fd, TIOCGWINSZ, &ws) == 0 && ws.ws_col > 0) tty.cols = ws.ws_col - 1; /* no wrap at the last column */
    tty.width = 0;
    tty.what[0] = 0;
    tty.stop = tty.fresh = false;
    tty.started = ls_now();
    tty.delay = delay;
    if (pthread_create(&tty.thread, NULL, tty_ticker, NULL) != 0) return;
    tty.running = true;
    ls_progress_set(tty_report, NULL);
}

void ls_progress_tty_begin(void)
{
    ls_progress_tty_begin_on(2, 1.0);
}

void ls_progress_tty_end(void)
{
    if (!tty.running) return;
    if (report_fn == tty_report) ls_progress_set(NULL, NULL);
    pthread_mutex_lock(&tty.lock);
    tty.stop = true;
    pthread_mutex_unlock(&tty.lock);
    pthread_join(tty.thread, NULL);
    tty.running = false;
    if (tty.width) {
        char out[420];
        int len = snprintf(out, sizeof out, "\r%*s\r", tty.width < 400 ? tty.width : 400, "");
        tty_write(out, len > 0 ? (size_t)len : 0);
    }
    tty.width = 0;
}

void ls_progress_step(void *ctx, const ls_history *h, uint32_t k, double seconds)
{
    (void)ctx;
    (void)seconds;
    if (!report_fn) return;
    const ls_step *s = &h->steps[k];
    char what[128];
    snprintf(what, sizeof what, "step %u of %u: %s%s%s%s", k, h->n_planned - 1, s->pass, s->detail ? " (" : "",
             s->detail ? s->detail : "", s->detail ? ")" : "");
    ls_progress(what, 0, 0);
}
