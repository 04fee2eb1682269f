/* `passes` releases each step's program once the next step is made and it has been rendered
 * (cmd_passes.c, docs/design.md "history ownership"): its output must be the same, byte for byte
 * but the times, as with every step kept (LS_KEEP_STEPS=1, the history the UI keeps). Run on
 * every sample, text and --json, and on the real .pte files of ../shared relowered. */
#include <check.h>
#include <dirent.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "testutil.h"

/* The times drop out: ", 12 ms" in the text (left out under 0.1 ms, so the whole clause) and
 * the digits of "seconds": in the JSON. */
static void drop_times(char *s)
{
    char *w = s;
    for (char *r = s; *r;) {
        if (!strncmp(r, "\"seconds\": ", 11)) {
            memmove(w, r, 11); /* w trails r in the same text */
            w += 11;
            r += 11;
            while ((*r >= '0' && *r <= '9') || *r == '.') r++;
            continue;
        }
        if (r[0] == ',' && r[1] == ' ' && r[2] >= '0' && r[2] <= '9') {
            char *e = r + 2;
            while ((*e >= '0' && *e <= '9') || *e == '.') e++;
            if (!strncmp(e, " ms", 3)) {
                r = e + 3;
                continue;
            }
        }
        *w++ = *r++;
    }
    *w = 0;
}

/* Runs `passes path [extra]` releasing and keeping; returns how many bytes matched (fails on a
 * difference, naming the first differing line). */
static size_t same_both_ways(const char *path, const char *extra)
{
    char *released = NULL, *kept = NULL;
    unsetenv("LS_KEEP_STEPS");
    int rc_released = tu_runf(&released, "passes %s %s", path, extra);
    setenv("LS_KEEP_STEPS", "1", 1);
    int rc_kept = tu_runf(&kept, "passes %s %s", path, extra);
    unsetenv("LS_KEEP_STEPS");
    ck_assert_msg(rc_released >= 0 && rc_released <= 3, "%s %s: exit %d", path, extra, rc_released);
    ck_assert_int_eq(rc_released, rc_kept);
    drop_times(released);
    drop_times(kept);
    size_t at = 0;
    while (released[at] && released[at] == kept[at]) at++;
    const char *line = released + at;
    while (line > released && line[-1] != '\n') line--;
    ck_assert_msg(released[at] == kept[at], "%s %s: released and kept differ at byte %zu, line: %.200s", path, extra, at,
                  line);
    size_t n = strlen(released);
    free(released);
    free(kept);
    return n;
}

static unsigned each_file(const char *dir, const char *ext, const char *extra)
{
    DIR *d = opendir(dir);
    ck_assert_msg(d != NULL, "%s", dir);
    unsigned n = 0;
    struct dirent *e;
    while ((e = readdir(d))) {
        size_t len = strlen(e->d_name), el = strlen(ext);
        if (len <= el || strcmp(e->d_name + len - el, ext)) continue;
        char path[4096];
        snprintf(path, sizeof path, "%s/%s", dir, e->d_name);
        ck_assert_uint_gt(same_both_ways(path, extra), 0);
        char json[64];
        snprintf(json, sizeof json, "%s --json", extra);
        ck_assert_uint_gt(same_both_ways(path, json), 0);
        n++;
    }
    closedir(d);
    return n;
}

START_TEST(samples_print_the_same_released_or_kept)
{
    ck_assert_uint_ge(each_file(tu_root("samples"), ".pt2", ""), 8);
}
END_TEST

START_TEST(real_pte_files_print_the_same_released_or_kept)
{
    const char *dir = tu_shared("data/pte");
    if (!dir) return;
    ck_assert_uint_ge(each_file(dir, ".pte", "--relower"), 1);
}
END_TEST

Suite *passes_release_suite(void)
{
    Suite *s = suite_create("passes_release");
    TCase *tc = tcase_create("release");
    tcase_set_timeout(tc, 240);
    tcase_add_test(tc, samples_print_the_same_released_or_kept);
    tcase_add_test(tc, real_pte_files_print_the_same_released_or_kept);
    suite_add_tcase(s, tc);
    return s;
}
