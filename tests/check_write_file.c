/* Writing the user's files (ls_write_file, export): never onto a device or a FIFO, even with
 * --force; an overwritten file keeps its mode; without --force the existence check cannot race
 * with the rename; and a real SIGINT, SIGTERM or SIGHUP during a large export leaves no
 * temporary file and ends the process with 128 + the signal. */
#include <check.h>
#include <dirent.h>
#include <fcntl.h>
#include <pthread.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <sys/wait.h>
#include <time.h>
#include <unistd.h>

#include "common.h"
#include "gen_program.h"
#include "testutil.h"

/* A file in dir whose name starts with prefix, or 0. */
static int has_file_starting(const char *dir, const char *prefix)
{
    DIR *d = opendir(dir);
    int found = 0;
    struct dirent *e;
    while (d && (e = readdir(d)))
        if (strncmp(e->d_name, prefix, strlen(prefix)) == 0) found = 1;
    if (d) closedir(d);
    return found;
}

START_TEST(devices_and_fifos_are_refused_even_with_force)
{
    const char *dir = tu_tmpdir();
    char fifo[4096];
    snprintf(fifo, sizeof fifo, "%s/out.pte", dir);
    ck_assert_int_eq(mkfifo(fifo, 0644), 0);
    const char *targets[] = {fifo, "/dev/null"};
    for (int i = 0; i < 2; i++) {
        char *out;
        ck_assert_int_eq(tu_runf(&out, "export %s -o %s --force", tu_root("samples/shared_constant.pt2"), targets[i]), 2);
        ck_assert_msg(tu_contains(out, "is not a regular file"), "%s", out);
        free(out);
        ls_error err;
        ck_assert_int_eq(ls_write_file(targets[i], "x", 1, LS_WRITE_REPLACE, &err), -1);
        ck_assert_msg(tu_contains(err.msg, "not a regular file"), "%s", err.msg);
    }
    struct stat st;
    ck_assert_int_eq(stat(fifo, &st), 0);
    ck_assert(S_ISFIFO(st.st_mode));
    ck_assert(S_ISCHR(stat("/dev/null", &st) == 0 ? st.st_mode : 0));
    ck_assert(!has_file_starting(dir, "out.pte.tmp."));
}
END_TEST

/* A symbolic link to nothing is there too: refused without --force, saying what it is (it said
 * the file "appeared while lowerscope wrote"); with --force the link is replaced by the file. */
START_TEST(a_dangling_link_is_named_as_such)
{
    char link[4096];
    snprintf(link, sizeof link, "%s/dangling.pte", tu_tmpdir());
    ck_assert_int_eq(symlink("/nonexistent/folder/x.pte", link), 0);
    ls_error err;
    ck_assert_int_eq(ls_write_file(link, "x", 1, 0, &err), -1);
    ck_assert_msg(tu_contains(err.msg, "dangling.pte is a symbolic link to a file that does not exist: give --force"), "%s",
                  err.msg);
    struct stat st;
    ck_assert_int_eq(lstat(link, &st), 0);
    ck_assert(S_ISLNK(st.st_mode)); /* left as it was */
    ck_assert_int_eq(ls_write_file(link, "x", 1, LS_WRITE_REPLACE, &err), 0);
    ck_assert_int_eq(lstat(link, &st), 0);
    ck_assert(S_ISREG(st.st_mode));
}
END_TEST

/* A name of 245 to 255 bytes, legal, had no room for ".tmp.XXXXXX" beside it ("File name too
 * long"): the temporary file takes a short name in the same folder, and nothing is left. */
START_TEST(a_name_near_name_max_is_written)
{
    const char *dir = tu_tmpdir();
    char name[256], path[4096];
    memset(name, 'n', 251);
    snprintf(name + 251, sizeof name - 251, ".pte");
    snprintf(path, sizeof path, "%s/%s", dir, name);
    ls_error err;
    ck_assert_msg(ls_write_file(path, "abc", 3, 0, &err) == 0, "%s", err.msg);
    struct stat st;
    ck_assert_int_eq(stat(path, &st), 0);
    ck_assert_int_eq(st.st_size, 3);
    DIR *d = opendir(dir);
    int entries = 0;
    for (struct dirent *e; (e = readdir(d));) entries += e->d_name[0] != '.' || strstr(e->d_name, "tmp") != NULL;
    closedir(d);
    ck_assert_int_eq(entries, 1); /* the file, no temporary one */
}
END_TEST

START_TEST(a_replaced_file_keeps_its_mode)
{
    const char *dir = tu_tmpdir();
    char path[4096];
    snprintf(path, sizeof path, "%s/keep.pte", dir);
    static const mode_t modes[] = {0600, 0640, 0755};
    for (int i = 0; i < 3; i++) {
        ls_error err;
        ck_assert_int_eq(ls_write_file(path, "old", 3, LS_WRITE_REPLACE, &err), 0);
        ck_assert_int_eq(chmod(path, modes[i]), 0);
        char *out;
        ck_assert_int_eq(tu_runf(&out, "export %s -o %s --force", tu_root("samples/shared_constant.pt2"), path), 0);
        free(out);
        struct stat st;
        ck_assert_int_eq(stat(path, &st), 0);
        ck_assert_int_eq(st.st_mode & 07777, modes[i]);
        ck_assert_int_gt(st.st_size, 3);
    }
    /* a new file: 0666 less the umask, as any program creating a file gives it */
    mode_t was = umask(027);
    snprintf(path, sizeof path, "%s/new.pte", dir);
    ls_error err;
    ck_assert_int_eq(ls_write_file(path, "new", 3, 0, &err), 0);
    umask(was);
    struct stat st;
    ck_assert_int_eq(stat(path, &st), 0);
    ck_assert_int_eq(st.st_mode & 07777, 0640);
    /* and without LS_WRITE_REPLACE an existing file is kept */
    ck_assert_int_eq(ls_write_file(path, "other", 5, 0, &err), -1);
    ck_assert_msg(tu_contains(err.msg, "exists: give --force"), "%s", err.msg);
    ck_assert_int_eq(stat(path, &st), 0);
    ck_assert_int_eq(st.st_size, 3);
}
END_TEST

typedef struct racer {
    const char *path;
    size_t size;
    int rc;
    ls_error err;
} racer;

static void *write_big(void *arg)
{
    racer *r = arg;
    char *data = calloc(1, r->size);
    r->rc = ls_write_file(r->path, data, r->size, 0, &r->err);
    free(data);
    return NULL;
}

/* Without --force, a file that appears while lowerscope writes is not replaced: the other
 * writer's file stays (the rename is renameat2 RENAME_NOREPLACE). */
START_TEST(no_race_between_the_check_and_the_rename)
{
    const char *dir = tu_tmpdir();
    char path[4096];
    snprintf(path, sizeof path, "%s/race.pte", dir);
    bool raced = false;
    for (int attempt = 0; attempt < 5 && !raced; attempt++) {
        unlink(path);
        racer r = {.path = path, .size = (size_t)64 << 20};
        pthread_t t;
        ck_assert_int_eq(pthread_create(&t, NULL, write_big, &r), 0);
        struct timespec tick = {0, 200000};
        for (int i = 0; i < 20000 && !has_file_starting(dir, "race.pte.tmp."); i++) nanosleep(&tick, NULL);
        if (has_file_starting(dir, "race.pte.tmp.")) {
            ls_error err;
            ck_assert_int_eq(ls_write_file(path, "theirs", 6, 0, &err), 0); /* the other writer */
            raced = true;
        }
        pthread_join(t, NULL);
        if (!raced) continue;
        ck_assert_int_eq(r.rc, -1);
        ck_assert_msg(tu_contains(r.err.msg, "it appeared while lowerscope wrote"), "%s", r.err.msg);
        struct stat st;
        ck_assert_int_eq(stat(path, &st), 0);
        ck_assert_int_eq(st.st_size, 6);
        ck_assert(!has_file_starting(dir, "race.pte.tmp."));
    }
    ck_assert_msg(raced, "never saw the temporary file to race with");
}
END_TEST

/* A real signal in the middle of writing a large export: the temporary file goes, the target
 * is never made, the exit status is 128 + the signal. */
START_TEST(signals_remove_the_temporary_file)
{
    const char *dir = tu_tmpdir();
    char big[4096];
    snprintf(big, sizeof big, "%s/big.pt2", dir);
    ls_gen_opts o = ls_gen_defaults(24);
    o.width = 1024; /* 12 layers of 4 MiB weights: a 48 MiB archive */
    o.params = 12;
    o.constants = 0;
    o.with_data = true;
    ls_error err;
    ck_assert_msg(ls_gen_write_pt2(&o, big, &err) == 0, "%s", err.msg);
    static const int sigs[] = {SIGTERM, SIGINT, SIGHUP};
    for (int s = 0; s < 3; s++) {
        bool caught = false;
        for (int attempt = 0; attempt < 5 && !caught; attempt++) {
            char out[4096];
            snprintf(out, sizeof out, "%s/out.pt2", dir);
            unlink(out);
            pid_t pid = fork();
            if (pid == 0) {
                int null = open("/dev/null", O_WRONLY);
                dup2(null, 1);
                dup2(null, 2);
                const char *bin = getenv("LS_BIN");
                execl(bin ? bin : "build/lowerscope", "lowerscope", "export", big, "-o", out, "--pipeline", "to_edge",
                      (char *)NULL);
                _exit(127);
            }
            struct timespec tick = {0, 200000};
            int status = 0;
            pid_t done = 0;
            while (!(done = waitpid(pid, &status, WNOHANG)) && !has_file_starting(dir, "out.pt2.tmp."))
                nanosleep(&tick, NULL);
            if (done) continue; /* finished before the write was seen: again */
            kill(pid, sigs[s]);
            waitpid(pid, &status, 0);
            caught = true;
            ck_assert_msg(WIFEXITED(status) && WEXITSTATUS(status) == 128 + sigs[s], "signal %d: status %#x", sigs[s],
                          status);
            ck_assert_msg(!has_file_starting(dir, "out.pt2.tmp."), "signal %d left the temporary file", sigs[s]);
            struct stat st;
            ck_assert_msg(stat(out, &st) != 0, "signal %d: the export was written anyway", sigs[s]);
        }
        ck_assert_msg(caught, "signal %d: never saw the export's temporary file", sigs[s]);
    }
    unlink(big);
}
END_TEST

Suite *write_file_suite(void)
{
    Suite *s = suite_create("write_file");
    TCase *tc = tcase_create("write_file");
    tcase_set_timeout(tc, 120);
    tcase_add_test(tc, devices_and_fifos_are_refused_even_with_force);
    tcase_add_test(tc, a_replaced_file_keeps_its_mode);
    tcase_add_test(tc, a_dangling_link_is_named_as_such);
    tcase_add_test(tc, a_name_near_name_max_is_written);
    tcase_add_test(tc, no_race_between_the_check_and_the_rename);
    tcase_add_test(tc, signals_remove_the_temporary_file);
    suite_add_tcase(s, tc);
    return s;
}
