/* Progress reports (progress.h) and the terminal's progress line. */
#include "progress.h"

#include <stdio.h>
#include <string.h>
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

static struct {
    double started, drawn;
    int width; /* of the line on the terminal, to clear it */
} tty;

static void tty_report(void *ctx, const char *what, uint64_t done, uint64_t total)
{
    (void)ctx;
    double now = ls_now();
    if (now - tty.started < 1.0 || now - tty.drawn < 0.1) return;
    tty.drawn = now;
    char line[160];
    int n;
    if (total)
        n = snprintf(line, sizeof line, "lowerscope: %s: %.0f%% (%.0f of %.0f MB)", what, 100.0 * (double)done / (double)total,
                     (double)done / 1e6, (double)total / 1e6);
    else
        n = snprintf(line, sizeof line, "lowerscope: %s", what);
    if (n < 0) return;
    if (n > 79) n = 79, line[79] = 0;
    /* the text printed as text: a file name's control characters are not the terminal's business */
    for (char *c = line; *c; c++)
        if ((unsigned char)*c < 32 || *c == 127) *c = '?';
    fprintf(stderr, "\r%s%*s", line, tty.width > n ? tty.width - n : 0, "");
    if (n > tty.width) tty.width = n;
    fflush(stderr);
}

void ls_progress_tty_begin(void)
{
    memset(&tty, 0, sizeof tty);
    tty.started = ls_now();
    if (isatty(2)) ls_progress_set(tty_report, NULL);
}

void ls_progress_tty_end(void)
{
    if (report_fn == tty_report) ls_progress_set(NULL, NULL);
    if (tty.width) {
        fprintf(stderr, "\r%*s\r", tty.width, "");
        fflush(stderr);
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
