/* Helpers shared by the Check suites: where the samples and shared data are, and running the
 * lowerscope binary as a user would. */
#ifndef LS_TESTUTIL_H
#define LS_TESTUTIL_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

/* $LS_ROOT/rel (the repository), $LS_SHARED/rel (../shared), in a static buffer per call slot. */
const char *tu_root(const char *rel);
/* NULL when the shared data folder (or that file in it) is absent: the caller skips (tests must
 * pass without it), and the skip is recorded for the summary (tu_skip). */
const char *tu_shared(const char *rel);
/* Records that the running test skips some or all of what it checks, and why ("flatc is not
 * installed"): check_main prints how many tests skipped, and why, beside Check's summary. The
 * tests run in child processes, so the record goes to the file $LS_SKIP_LOG. */
void tu_skip(const char *why);
/* Whether a program is on PATH; when it is not, the skip is recorded. */
bool tu_have_tool(const char *name);
/* A fresh temporary folder for one test (removed by the OS's tmp cleaning; tests keep it small). */
const char *tu_tmpdir(void);

/* Runs the lowerscope binary ($LS_BIN) with the arguments, captures stdout+stderr (malloc'd,
 * NUL-terminated) and returns the exit code (-1 if it died from a signal). */
int tu_run(char **out, const char *const argv[]);
/* Same with a shell-style command line appended to the binary: tu_runf(&out, "info %s", path). */
int tu_runf(char **out, const char *fmt, ...) __attribute__((format(printf, 2, 3)));

bool tu_contains(const char *haystack, const char *needle);

/* A file's contents, NUL-terminated (malloc'd), or NULL. */
char *tu_slurp(const char *path);
/* Compares every NAME*.screen a UI script saved in dir with tests/screens/NAME*.expected, failing
 * with the first differing line and the whole screen; LS_UPDATE_SCREENS=1 rewrites the expected
 * files from what the UI drew. */
void tu_compare_screens(const char *dir, const char *name);


#endif
