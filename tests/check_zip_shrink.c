/* An archive truncated by another process while its mapped model JSON is read (zip_map.c):
 * the load fails with a message naming the file and the member, the process lives on, and the
 * SIGBUS action there was before is back. The truncation is an event, not an input, so there is
 * no corpus file: the test hook between mapping and parsing truncates a copy of a sample. */
#include <check.h>
#include <pthread.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "program.h"
#include "reader.h"
#include "testutil.h"

#include "../src/formats/pt2/zip_map.h"

static off_t keep_bytes; /* what the hook leaves of the file */
static int truncations;

static void truncate_now(const char *path)
{
    ck_assert_msg(truncate(path, keep_bytes) == 0, "truncate %s", path);
    truncations++;
}

/* A copy of samples/tiny_llama.pt2 (its model.json, stored, is 1.5 MB: hundreds of pages) and
 * where its model.json's local header is. */
static const char *copy_sample(off_t *json_at)
{
    size_t n = 0;
    FILE *f = fopen(tu_root("samples/tiny_llama.pt2"), "rb");
    ck_assert(f);
    char *bytes = malloc(8 << 20);
    ck_assert(bytes);
    n = fread(bytes, 1, 8 << 20, f);
    fclose(f);
    static char path[4200];
    snprintf(path, sizeof path, "%s/shrinks.pt2", tu_tmpdir());
    FILE *o = fopen(path, "wb");
    ck_assert(o && fwrite(bytes, 1, n, o) == n && fclose(o) == 0);
    const char *name = "tiny_llama/models/model.json";
    size_t at = 0, len = strlen(name); /* the local header comes before the directory */
    while (at + len <= n && memcmp(bytes + at, name, len) != 0) at++;
    ck_assert(at + len <= n);
    *json_at = (off_t)at;
    free(bytes);
    return path;
}

static void sentinel(int sig)
{
    (void)sig;
}

static void expect_shrank(const char *path)
{
    ls_program *p = NULL;
    ls_error err = {0};
    truncations = 0;
    ls_zip_map_test_after_map = truncate_now;
    int rc = ls_load(path, NULL, &p, &err);
    ls_zip_map_test_after_map = NULL;
    ck_assert_int_eq(truncations, 1);
    ck_assert_int_eq(rc, -1);
    ck_assert(p == NULL);
    ck_assert_int_eq(err.code, LS_ERR_INPUT);
    char want[4400];
    snprintf(want, sizeof want, "%s: the file shrank while it was being read (member tiny_llama/models/model.json)",
             path);
    ck_assert_str_eq(err.msg, want);
}

/* A SIGBUS action of the test's own before a load, to see that the load puts it back. */
static struct sigaction sentinel_set(void)
{
    struct sigaction mine = {.sa_handler = sentinel}, before;
    sigemptyset(&mine.sa_mask);
    ck_assert(sigaction(SIGBUS, &mine, &before) == 0);
    return before;
}

/* The sentinel is back after the load, nothing the load held is left held (an intact copy
 * loads), and the action before the test is restored. */
static void sentinel_back_and_loads(struct sigaction before)
{
    struct sigaction after;
    ck_assert(sigaction(SIGBUS, NULL, &after) == 0);
    ck_assert_msg(after.sa_handler == sentinel, "the SIGBUS action before the load is not back");
    off_t json_at;
    const char *path = copy_sample(&json_at);
    ls_program *p = NULL;
    ls_error err = {0};
    ck_assert_msg(ls_load(path, NULL, &p, &err) == 0, "%s", err.msg);
    ls_program_unref(p);
    sigaction(SIGBUS, &before, NULL);
}

START_TEST(truncated_while_parsed_fails_cleanly)
{
    struct sigaction before = sentinel_set();
    off_t json_at;
    const char *path = copy_sample(&json_at);
    keep_bytes = json_at + 100000; /* mid-text: the parse has read some of it when the fault comes */
    expect_shrank(path);
    sentinel_back_and_loads(before);
}
END_TEST

START_TEST(truncated_to_nothing_fails_cleanly)
{
    off_t json_at;
    const char *path = copy_sample(&json_at);
    keep_bytes = 0;
    expect_shrank(path);
}
END_TEST

static void *load_on_a_thread(void *path)
{
    expect_shrank(path);
    return NULL;
}

/* the UI loads on a thread of its own: the fault is taken there */
START_TEST(truncated_under_a_thread_fails_cleanly)
{
    off_t json_at;
    const char *path = copy_sample(&json_at);
    keep_bytes = json_at + 300000;
    pthread_t t;
    ck_assert(pthread_create(&t, NULL, load_on_a_thread, (void *)path) == 0);
    ck_assert(pthread_join(t, NULL) == 0);
}
END_TEST

/* Truncated while its sum is taken: the pages past the end read as zeros, so the sum differs
 * and the load goes to libzip, which finds the member short. The same clean failure, the
 * SIGBUS action back, no mapping left watched. */
START_TEST(truncated_while_summed_fails_cleanly)
{
    struct sigaction before = sentinel_set();
    off_t json_at;
    const char *path = copy_sample(&json_at);
    keep_bytes = json_at + 100000;
    truncations = 0;
    ls_zip_map_test_before_sum = truncate_now;
    ls_program *p = NULL;
    ls_error err = {0};
    int rc = ls_load(path, NULL, &p, &err);
    ls_zip_map_test_before_sum = NULL;
    ck_assert_int_eq(truncations, 1);
    ck_assert_int_eq(rc, -1);
    ck_assert(p == NULL);
    ck_assert_int_eq(err.code, LS_ERR_INPUT);
    ck_assert_msg(strncmp(err.msg, path, strlen(path)) == 0 && strstr(err.msg, ": models/model.json: the member is damaged or truncated (read "),
                  "%s", err.msg);
    sentinel_back_and_loads(before);
}
END_TEST

Suite *zip_shrink_suite(void)
{
    Suite *s = suite_create("zip_shrink");
    TCase *tc = tcase_create("zip_shrink");
    tcase_set_timeout(tc, 60);
    tcase_add_test(tc, truncated_while_parsed_fails_cleanly);
    tcase_add_test(tc, truncated_to_nothing_fails_cleanly);
    tcase_add_test(tc, truncated_under_a_thread_fails_cleanly);
    tcase_add_test(tc, truncated_while_summed_fails_cleanly);
    suite_add_tcase(s, tc);
    return s;
}
