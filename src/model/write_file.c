/* Writing the files the user asked for (common.h: ls_write_file): whole or not at all, never
 * onto something that is not a regular file, keeping an overwritten file's mode, without a race
 * between "does it exist?" and the rename, and without a temporary file left behind when the
 * user interrupts it. */
#define _GNU_SOURCE /* renameat2 */
#include <errno.h>
#include <fcntl.h>
#include <limits.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

#include "common.h"

/* ---- temporary files and the signals that would leave them behind */

#define MAX_TEMPS 8
static char *volatile temps[MAX_TEMPS]; /* paths of the temporary files being written */
static struct sigaction saved[3], saved_xfsz;
static const int caught[3] = {SIGINT, SIGTERM, SIGHUP};
static int n_live;

/* SIGINT, SIGTERM or SIGHUP while a temporary file exists: it goes (unlink is async-signal
 * safe), then the signal does what it did before: the default ends the process with 128 + the
 * signal (SIGTERM: 143), as a shell reports it. */
static void on_signal(int sig)
{
    for (int i = 0; i < MAX_TEMPS; i++)
        if (temps[i]) unlink(temps[i]);
    for (int i = 0; i < 3; i++) {
        if (caught[i] != sig) continue;
        if (saved[i].sa_handler == SIG_IGN) return;
        if (saved[i].sa_handler != SIG_DFL && !(saved[i].sa_flags & SA_SIGINFO)) {
            saved[i].sa_handler(sig); /* the UI's: it restores the terminal */
            return;
        }
    }
    _exit(128 + sig);
}

static void block(sigset_t *old)
{
    sigset_t s;
    sigemptyset(&s);
    for (int i = 0; i < 3; i++) sigaddset(&s, caught[i]);
    sigprocmask(SIG_BLOCK, &s, old);
}

/* The temporary file `path` is being written: removed if the process is told to stop. */
static int temp_add(char *path)
{
    sigset_t old;
    block(&old);
    int slot = -1;
    for (int i = 0; i < MAX_TEMPS && slot < 0; i++)
        if (!temps[i]) slot = i;
    if (slot >= 0) {
        temps[slot] = path;
        if (n_live++ == 0) {
            struct sigaction sa;
            memset(&sa, 0, sizeof sa);
            sa.sa_handler = on_signal;
            sigemptyset(&sa.sa_mask);
            for (int i = 0; i < 3; i++) sigaction(caught[i], &sa, &saved[i]);
            /* past a file size limit (ulimit -f) the write fails with EFBIG, said and cleaned up
             * as any failed write, rather than SIGXFSZ ending the process with the file left */
            sa.sa_handler = SIG_IGN;
            sigaction(SIGXFSZ, &sa, &saved_xfsz);
        }
    }
    sigprocmask(SIG_SETMASK, &old, NULL);
    return slot;
}

static void temp_done(int slot)
{
    if (slot < 0) return;
    sigset_t old;
    block(&old);
    temps[slot] = NULL;
    if (--n_live == 0) {
        for (int i = 0; i < 3; i++) sigaction(caught[i], &saved[i], NULL);
        sigaction(SIGXFSZ, &saved_xfsz, NULL);
    }
    sigprocmask(SIG_SETMASK, &old, NULL);
}

/* ---- the target */

const char *ls_file_kind(unsigned mode)
{
    mode_t m = (mode_t)mode;
    if (S_ISDIR(m)) return "a folder";
    if (S_ISFIFO(m)) return "a FIFO (named pipe)";
    if (S_ISCHR(m)) return "a character device";
    if (S_ISBLK(m)) return "a block device";
    if (S_ISSOCK(m)) return "a socket";
    return "not a regular file";
}

int ls_refuse_stream(const char *path, unsigned mode, ls_error *err)
{
    mode_t m = (mode_t)mode;
    if (!S_ISFIFO(m) && !S_ISSOCK(m)) return 0;
    return ls_fail(err, "%s: %s, not a file", path, ls_file_kind(mode));
}

/* Renames tmp to path unless path exists, atomically: renameat2(RENAME_NOREPLACE), or where the
 * file system lacks it, link (which fails on an existing name) and unlink. */
static int rename_noreplace(const char *tmp, const char *path)
{
    if (renameat2(AT_FDCWD, tmp, AT_FDCWD, path, RENAME_NOREPLACE) == 0) return 0;
    if (errno != EINVAL && errno != ENOSYS && errno != ENOTSUP) return -1;
    if (link(tmp, path) != 0) return -1;
    unlink(tmp);
    return 0;
}

int ls_write_file(const char *path, const void *data, size_t size, unsigned flags, ls_error *err)
{
    /* where the bytes go: a symbolic link is followed, so the link stays and its file changes */
    struct stat st;
    bool exists = stat(path, &st) == 0;
    char real[PATH_MAX];
    const char *target = path;
    struct stat lst;
    if (exists && lstat(path, &lst) == 0 && S_ISLNK(lst.st_mode) && realpath(path, real)) target = real;
    if (exists && !S_ISREG(st.st_mode))
        return ls_fail(err, "%s: %s, not a regular file: lowerscope writes only files (nothing was written)", path,
                       ls_file_kind(st.st_mode));
    if (exists && !(flags & LS_WRITE_REPLACE))
        return ls_fail(err, "%s exists: give --force to replace it (nothing was written)", path);
    if (!exists && lstat(path, &lst) == 0 && S_ISLNK(lst.st_mode) && !(flags & LS_WRITE_REPLACE))
        return ls_fail(err, "%s is a symbolic link to a file that does not exist: give --force to replace the link "
                            "(nothing was written)", path);
    size_t tlen = strlen(target);
    char *tmp = ls_malloc(tlen + 32);
    snprintf(tmp, tlen + 32, "%s.tmp.XXXXXX", target);
    /* a name within 11 bytes of NAME_MAX has no room for ".tmp.XXXXXX": then a short one in the
     * same folder (the rename stays in one file system) */
    const char *base = strrchr(target, '/');
    base = base ? base + 1 : target;
    if (strlen(base) + strlen(".tmp.XXXXXX") > NAME_MAX)
        snprintf(tmp, tlen + 32, "%.*s.lowerscope.tmp.XXXXXX", (int)(base - target), target);
    sigset_t old;
    block(&old); /* the file and its registration together: a signal between leaves nothing */
    int fd = mkstemp(tmp);
    int slot = fd >= 0 ? temp_add(tmp) : -1;
    sigprocmask(SIG_SETMASK, &old, NULL);
    if (fd < 0) {
        int e = errno;
        free(tmp);
        return ls_fail(err, "%s: cannot create a temporary file next to it: %s", path, strerror(e));
    }
    const char *failed = NULL;
    int e = 0;
    const uint8_t *p = data;
    size_t done = 0;
    while (done < size && !failed) {
        ssize_t w = write(fd, p + done, size - done);
        if (w < 0 && errno == EINTR) continue;
        if (w < 0) failed = "write failed", e = errno;
        else done += (size_t)w;
    }
    /* the mode a new file gets (0666 less the umask), or the one the file it replaces had */
    mode_t mask = umask(0);
    umask(mask);
    mode_t mode = exists ? st.st_mode & 07777 : 0666 & ~mask;
    if (!failed && fchmod(fd, mode) != 0) failed = "cannot set its mode", e = errno;
    if (!failed && exists && (st.st_uid != geteuid() || st.st_gid != getegid()))
        (void)!fchown(fd, st.st_uid, st.st_gid); /* as root: keep the owner; else it stays ours */
    if (!failed && fsync(fd) != 0) failed = "write failed", e = errno;
    if (close(fd) != 0 && !failed) failed = "write failed", e = errno;
    if (!failed) {
        int rc = (flags & LS_WRITE_REPLACE) ? rename(tmp, target) : rename_noreplace(tmp, target);
        if (rc != 0) {
            e = errno;
            failed = e == EEXIST ? NULL : "cannot rename the finished file into place";
            if (e == EEXIST) {
                unlink(tmp);
                temp_done(slot);
                free(tmp);
                return ls_fail(err, "%s exists (it appeared while lowerscope wrote): give --force to replace it "
                                    "(nothing was written)", path);
            }
        }
    }
    if (failed) unlink(tmp);
    temp_done(slot);
    free(tmp);
    if (failed) return ls_fail(err, "%s: %s: %s (nothing was replaced)", path, failed, strerror(e));
    return 0;
}

int ls_write_file_atomic(const char *path, const void *data, size_t size, ls_error *err)
{
    return ls_write_file(path, data, size, LS_WRITE_REPLACE, err);
}
