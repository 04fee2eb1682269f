/* Progress of long work (a load of a big file, the pipeline) for whoever shows it: the CLI on
 * stderr when it is a terminal and the work takes over a second, the UI in its status line.
 * Work reports through ls_progress(); nothing is shown unless a reporter is set. */
#ifndef LS_PROGRESS_H
#define LS_PROGRESS_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#include "history.h"

/* what: "reading FILE" (done and total in bytes) or a step ("step 4 of 9: partition (bundled)",
 * total 0). Called often: a reporter keeps what it needs and returns. */
typedef void (*ls_progress_fn)(void *ctx, const char *what, uint64_t done, uint64_t total);

void ls_progress_set(ls_progress_fn fn, void *ctx); /* NULL: none */
void ls_progress(const char *what, uint64_t done, uint64_t total);

/* Work a thread may give up: ls_cancel_on(flag) makes ls_cancelled() read *flag on the calling
 * thread (NULL: never cancelled). Long loops check it where they report progress (the streamed
 * load of a model JSON, every 4096 nodes) and fail with a message saying so. */
void ls_cancel_on(const bool *flag);
bool ls_cancelled(void);
/* The failure a cancelled load returns: "WHERE: the load was cancelled". */
int ls_fail_cancelled(ls_error *err, const char *where);

/* The terminal reporter: one line on stderr, redrawn in place 10 times a second by a thread of
 * its own (a step that reports once still shows how long it has taken), shown only when stderr
 * is a terminal and once a second has passed since ls_progress_tty_begin; ls_progress_tty_end
 * stops the thread and clears the line (nothing is left behind on the terminal). */
void ls_progress_tty_begin(void);
void ls_progress_tty_end(void);
/* The same on terminal fd, shown once `delay` seconds have passed (tests). */
void ls_progress_tty_begin_on(int fd, double delay);

/* The line as drawn, at most cols columns: "lowerscope: WHAT: 42% (34 of 80 MB)" for bytes,
 * "lowerscope: WHAT (3 s)" for a step seconds after it began; WHAT loses its end to the figures,
 * control characters become '?'. */
void ls_progress_line(char *buf, size_t cap, int cols, const char *what, uint64_t done, uint64_t total, double seconds);

/* A watch for ls_pipeline_run that reports each step as it begins ("step k of n: pass (backend)"). */
void ls_progress_step(void *ctx, const ls_history *h, uint32_t k, double seconds);

#endif
