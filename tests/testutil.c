#include "testutil.h"

#include <check.h>
#include <dirent.h>
#include <fcntl.h>
#include <ftw.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <sys/wait.h>
#include <unistd.h>

#include "common.h"

static const char *joined(const char *base, const char *rel)
{
    static char slots[8][4096];
    static int next;
    char *s = slots[next++ % 8];
    snprintf(s, sizeof slots[0], "%s/%s", base, rel);
    return s;
}

const char *tu_root(const char *rel)
{
    const char *r = getenv("LS_ROOT");
    return joined(r ? r : ".", rel);
}

void tu_skip(const char *why)
{
    const char *log = getenv("LS_SKIP_LOG");
    if (!log) return;
    int fd = open(log, O_WRONLY | O_APPEND | O_CREAT, 0644);
    if (fd < 0) return;
    char line[1024];
    int n = snprintf(line, sizeof line, "%s\t%s\n", tcase_name(), why);
    if (n > 0) (void)!write(fd, line, (size_t)n < sizeof line ? (size_t)n : sizeof line - 1);
    close(fd);
}

const char *tu_shared(const char *rel)
{
    const char *s = getenv("LS_SHARED");
    if (!s) s = "../shared";
    const char *p = joined(s, rel);
    struct stat st;
    if (stat(p, &st) == 0) return p;
    char why[4200];
    if (stat(s, &st) != 0) snprintf(why, sizeof why, "../shared is absent (LS_SHARED=%s)", s);
    else snprintf(why, sizeof why, "%s is absent", p);
    tu_skip(why);
    return NULL;
}

bool tu_have_tool(const char *name)
{
    char cmd[512];
    snprintf(cmd, sizeof cmd, "command -v %s >/dev/null 2>&1", name);
    if (system(cmd) == 0) return true;
    snprintf(cmd, sizeof cmd, "%s is not installed (make deps installs it)", name);
    tu_skip(cmd);
    return false;
}

/* The folders tu_tmpdir made, removed when the process that made them exits (Check runs each
 * test in a child of its own; a child a test forks execs or leaves with _exit, so it removes
 * nothing). They were left behind: 15 thousand in /tmp after a day of test runs. */
#define TMPDIR_PREFIX "/tmp/lowerscope-test-"
static char **made_dirs; /* each a string of its own: a caller may keep one while making more */
static size_t n_made_dirs;
static pid_t made_by;

static int remove_entry(const char *path, const struct stat *st, int flag, struct FTW *ftw)
{
    (void)st, (void)flag, (void)ftw;
    remove(path);
    return 0;
}

static void remove_made_dirs(void)
{
    if (getpid() != made_by) return;
    for (size_t i = 0; i < n_made_dirs; i++) {
        nftw(made_dirs[i], remove_entry, 16, FTW_DEPTH | FTW_PHYS);
        free(made_dirs[i]);
    }
    free(made_dirs);
    made_dirs = NULL;
    n_made_dirs = 0;
}

const char *tu_tmpdir(void)
{
    if (made_by != getpid()) { /* a new test's process: what the parent made is the parent's */
        if (!made_by) atexit(remove_made_dirs);
        made_dirs = NULL;
        n_made_dirs = 0;
        made_by = getpid();
    }
    char *s = strdup(TMPDIR_PREFIX "XXXXXX");
    char **grown = s ? realloc(made_dirs, sizeof *made_dirs * (n_made_dirs + 1)) : NULL;
    if (!grown || !mkdtemp(s)) {
        free(s);
        return "/tmp";
    }
    made_dirs = grown;
    made_dirs[n_made_dirs++] = s;
    return s;
}

int tu_run(char **out, const char *const argv[])
{
    const char *bin = getenv("LS_BIN");
    if (!bin) bin = "build/lowerscope";
    int fds[2];
    if (pipe(fds) != 0) return -1;
    pid_t pid = fork();
    if (pid == 0) {
        dup2(fds[1], 1);
        dup2(fds[1], 2);
        close(fds[0]);
        close(fds[1]);
        int n = 0;
        while (argv[n]) n++;
        char **av = calloc((size_t)n + 2, sizeof *av);
        av[0] = (char *)bin;
        for (int i = 0; i < n; i++) av[i + 1] = (char *)argv[i];
        execv(bin, av);
        perror("exec lowerscope");
        _exit(127);
    }
    close(fds[1]);
    ls_buf b = {0};
    char chunk[4096];
    ssize_t r;
    while ((r = read(fds[0], chunk, sizeof chunk)) > 0) ls_buf_putn(&b, chunk, (size_t)r);
    close(fds[0]);
    int status = 0;
    waitpid(pid, &status, 0);
    if (out) *out = ls_buf_take(&b);
    else ls_buf_free(&b);
    return WIFEXITED(status) ? WEXITSTATUS(status) : -1;
}

int tu_runf(char **out, const char *fmt, ...)
{
    char line[8192];
    va_list ap;
    va_start(ap, fmt);
    vsnprintf(line, sizeof line, fmt, ap);
    va_end(ap);
    /* split on spaces; tests pass paths without spaces */
    const char *argv[128];
    int n = 0;
    for (char *tok = strtok(line, " "); tok && n < 127; tok = strtok(NULL, " ")) argv[n++] = tok;
    argv[n] = NULL;
    return tu_run(out, argv);
}

bool tu_contains(const char *haystack, const char *needle)
{
    return haystack && needle && strstr(haystack, needle) != NULL;
}


/* ---- screen tests (tests/screens) */

char *tu_slurp(const char *path)
{
    uint8_t *d;
    size_t n;
    ls_error err;
    if (ls_read_file(path, 1 << 22, &d, &n, &err) != 0) return NULL;
    char *s = ls_strndup((const char *)d, n);
    free(d);
    return s;
}

/* Compares every NAME*.screen the script saved in dir with tests/screens/NAME*.expected. */
void tu_compare_screens(const char *dir, const char *name)
{
    DIR *d = opendir(dir);
    ck_assert_ptr_nonnull(d);
    int seen = 0;
    struct dirent *e;
    while ((e = readdir(d))) {
        size_t l = strlen(e->d_name);
        if (l < 8 || strcmp(e->d_name + l - 7, ".screen") || strncmp(e->d_name, name, strlen(name))) continue;
        seen++;
        char actual_path[4096], expected_rel[512];
        snprintf(actual_path, sizeof actual_path, "%s/%s", dir, e->d_name);
        snprintf(expected_rel, sizeof expected_rel, "tests/screens/%.*s.expected", (int)(l - 7), e->d_name);
        char *actual = tu_slurp(actual_path);
        ck_assert_ptr_nonnull(actual);
        if (getenv("LS_UPDATE_SCREENS")) {
            ls_error err;
            ls_write_file_atomic(tu_root(expected_rel), actual, strlen(actual), &err);
        }
        char *expected = tu_slurp(tu_root(expected_rel));
        if (!expected) ck_abort_msg("%s is missing; the UI drew (%s):\n%s", expected_rel, actual_path, actual);
        if (strcmp(actual, expected) != 0) {
            /* the first differing line, both ways, then the whole screen */
            const char *a = actual, *x = expected;
            int line = 1;
            while (*a && *x) {
                const char *ae = strchr(a, '\n'), *xe = strchr(x, '\n');
                size_t al = ae ? (size_t)(ae - a) : strlen(a), xl = xe ? (size_t)(xe - x) : strlen(x);
                if (al != xl || memcmp(a, x, al)) break;
                a += al + (ae ? 1 : 0);
                x += xl + (xe ? 1 : 0);
                line++;
            }
            ck_abort_msg("%s differs at line %d\nexpected: %.*s\nactual:   %.*s\nwhole screen (%s):\n%s", expected_rel, line,
                         (int)strcspn(x, "\n"), x, (int)strcspn(a, "\n"), a, actual_path, actual);
        }
        free(actual);
        free(expected);
    }
    closedir(d);
    ck_assert_msg(seen > 0, "the script %s saved no screen", name);
}

