/* Tests of the shared basics: interning, buffers, dtype tables, atomic writes, tensor views. */
#include <check.h>
#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/resource.h>
#include <sys/stat.h>
#include <sys/wait.h>
#include <unistd.h>

#include "common.h"
#include "ptrmap.h"
#include "dtype.h"
#include "program.h"
#include "tensor.h"
#include "testutil.h"

START_TEST(intern_gives_one_pointer_per_content)
{
    char a[] = "add_1", b[] = "add_1";
    ck_assert_ptr_eq(ls_intern(a), ls_intern(b));
    ck_assert_ptr_ne(ls_intern("add"), ls_intern("add_1"));
    ck_assert_ptr_eq(ls_internf("%s_%d", "add", 1), ls_intern("add_1"));
    ck_assert_ptr_null(ls_intern(NULL));
    /* survive growth: many distinct strings keep their identity */
    const char *first = ls_intern("node_0");
    for (int i = 0; i < 20000; i++) ls_internf("node_%d", i);
    ck_assert_ptr_eq(first, ls_intern("node_0"));
}
END_TEST

/* The batch and the hashed forms give what the one-by-one forms give, also when the batch
 * grows the table, and a batch may hold the same text twice. */
START_TEST(intern_batch_and_hashed_match_one_by_one)
{
    enum { N = 6000 };
    static char texts[N][32];
    static ls_intern_item items[N];
    for (int i = 0; i < N; i++) {
        snprintf(texts[i], sizeof texts[i], "File \"m.py\", line %d", i / 2); /* each twice */
        items[i] = (ls_intern_item){.s = texts[i], .n = strlen(texts[i])};
    }
    const char *before = ls_intern_text_n(texts[0], strlen(texts[0]));
    ls_intern_text_batch(items, N); /* more than the first table holds: it grows inside */
    ck_assert_ptr_eq(items[0].interned, before);
    for (int i = 0; i < N; i++) {
        ck_assert_str_eq(items[i].interned, texts[i]);
        ck_assert_ptr_eq(items[i].interned, ls_intern_text_n(texts[i], strlen(texts[i])));
        ck_assert_uint_eq(items[i].hash, ls_intern_hash(texts[i], strlen(texts[i])));
    }
    ck_assert_ptr_eq(items[2].interned, items[3].interned);
    ck_assert_ptr_ne(items[0].interned, ls_intern(texts[0])); /* texts apart from names */
    ls_intern_text_batch(items, 0);
    const char *name = "add_17";
    ls_intern_prefetch(ls_intern_hash(name, 6));
    ck_assert_ptr_eq(ls_intern_n_hashed(name, 6, ls_intern_hash(name, 6)), ls_intern(name));
    /* the JSON loader interns a name with the hash of its value map (ls_strmap_hash) */
    for (int i = 0; i < N; i += 97) ck_assert_uint_eq(ls_strmap_hash(texts[i], strlen(texts[i])), ls_intern_hash(texts[i], strlen(texts[i])));
    ck_assert_ptr_eq(ls_intern_n_hashed(name, 6, ls_strmap_hash(name, 6)), ls_intern(name));
}
END_TEST

/* Whether the mapping that holds the middle of a new 96 MiB block carries the "hg" flag in
 * /proc/self/smaps (-1: no smaps to read). The block is kept in *keep, so that the next one
 * is new growth of the heap too. */
static int new_block_advised(char **keep)
{
    size_t n = (size_t)96 << 20;
    char *p = *keep = ls_malloc(n);
    uintptr_t mid = (uintptr_t)(p + n / 2);
    FILE *f = fopen("/proc/self/smaps", "r");
    if (!f) return -1;
    char line[512];
    bool inside = false, advised = false, found = false;
    while (fgets(line, sizeof line, f)) {
        unsigned long lo, hi;
        if (sscanf(line, "%lx-%lx ", &lo, &hi) == 2 && strchr(line, '-') < strchr(line, ' ')) {
            inside = mid >= lo && mid < hi;
            found |= inside;
        } else if (inside && strncmp(line, "VmFlags:", 8) == 0) {
            advised = strstr(line, " hg") != NULL;
        }
    }
    fclose(f);
    ck_assert(found);
    return advised;
}

/* After ls_memory_keep_freed with LS_HUGE_PAGES=1 the heap's growth is advised for huge pages,
 * and without it not. (Check runs each test in a child of its own, so the malloc settings and
 * the variable do not reach the other tests.) */
START_TEST(heap_growth_is_advised_for_huge_pages_when_asked)
{
#if defined(__SANITIZE_ADDRESS__) || !defined(__GLIBC__)
    tu_skip("the allocator is not glibc's (ASan maps its own memory)");
    return;
#endif
    if (access("/sys/kernel/mm/transparent_hugepage/enabled", R_OK) != 0) {
        tu_skip("the kernel has no transparent huge pages");
        return;
    }
    unsetenv("LS_HUGE_PAGES");
    ls_memory_keep_freed();
    char *first = NULL, *second = NULL;
    int advised = new_block_advised(&first);
    if (advised < 0) {
        free(first);
        tu_skip("no /proc/self/smaps");
        return;
    }
    ck_assert_msg(advised == 0, "the heap was advised for huge pages unasked");
    setenv("LS_HUGE_PAGES", "1", 1);
    ls_memory_keep_freed();
    advised = new_block_advised(&second);
    free(first);
    free(second);
    ck_assert_msg(advised == 1, "the heap's new part is not advised for huge pages");
}
END_TEST

/* A hash table from ls_calloc_table is zero and already written: probing it at random (a
 * read, then a write) faults no page again. The same block from calloc is fresh zero pages,
 * and each page faults twice (ls_calloc_table's reason to be). Faults counted, not timed. */
static long minor_faults(void)
{
    struct rusage ru;
    getrusage(RUSAGE_SELF, &ru);
    return ru.ru_minflt;
}

static long probe_every_page(uint64_t *t, size_t n)
{
    long before = minor_faults();
    uint64_t seen = 0;
    for (size_t i = 0; i < n; i += 4096 / sizeof *t) {
        seen |= t[i]; /* the probe */
        t[i] = i + 1; /* the insert */
    }
    ck_assert_uint_eq(seen, 0);
    return minor_faults() - before;
}

START_TEST(calloc_table_faults_each_page_once)
{
    enum { BYTES = 64 << 20 };
    size_t n = BYTES / sizeof(uint64_t), pages = BYTES / 4096;
    uint64_t *t = ls_calloc_table(n, sizeof *t);
    for (size_t i = 0; i < n; i += 4099) ck_assert_uint_eq(t[i], 0);
    long again = probe_every_page(t, n);
    free(t);
    ck_assert_msg(again < (long)pages / 16, "%ld of %zu pages faulted again after ls_calloc_table", again, pages);
#if !defined(__SANITIZE_ADDRESS__) && defined(__GLIBC__)
    /* the control: glibc's calloc of a new mapping leaves the pages to be faulted by the probes
     * (in small pages: with transparent huge pages "always", one fault maps 512 of them) */
    FILE *thp = fopen("/sys/kernel/mm/transparent_hugepage/enabled", "r");
    char mode[128] = "";
    if (thp) {
        if (!fgets(mode, sizeof mode, thp)) mode[0] = 0;
        fclose(thp);
    }
    if (strstr(mode, "[always]")) return;
    uint64_t *c = calloc(n, sizeof *c);
    ck_assert_ptr_nonnull(c);
    long fresh = probe_every_page(c, n);
    free(c);
    ck_assert_msg(fresh >= (long)pages / 2, "calloc's %zu pages faulted only %ld times: the control did not", pages, fresh);
#endif
}
END_TEST

START_TEST(buf_escapes_json)
{
    ls_buf b = {0};
    ls_buf_json_str(&b, "a\"b\\c\n\x01");
    char *s = ls_buf_take(&b);
    ck_assert_str_eq(s, "\"a\\\"b\\\\c\\n\\u0001\"");
    free(s);
}
END_TEST

/* ls_buf_printf writes the simple conversions itself and hands the rest to vsnprintf: both
 * give what snprintf gives. */
#define SAME_AS_SNPRINTF(...)                                                                                  \
    do {                                                                                                       \
        char want[512];                                                                                        \
        snprintf(want, sizeof want, __VA_ARGS__);                                                              \
        ls_buf b = {0};                                                                                        \
        ls_buf_puts(&b, "<");                                                                                  \
        ls_buf_printf(&b, __VA_ARGS__);                                                                        \
        ck_assert_str_eq(b.s + 1, want);                                                                       \
        ck_assert_uint_eq(b.len, strlen(want) + 1);                                                            \
        ls_buf_free(&b);                                                                                       \
    } while (0)

START_TEST(buf_printf_matches_snprintf)
{
    const char *volatile null_str = NULL; /* volatile: the compiler would warn about a NULL %s */
    SAME_AS_SNPRINTF("plain text, no conversion");
    SAME_AS_SNPRINTF("%s", "");
    SAME_AS_SNPRINTF("`%s` is read by %s (%s ×%u) and by %s", "c", "tag1", "add", 3u, "the CPU");
    SAME_AS_SNPRINTF("%d %i %u %c %%", -7, 42, 4000000000u, 'x');
    SAME_AS_SNPRINTF("%ld %lu %lld %llu", -1234567890123L, 18446744073709551615UL, (long long)INT64_MIN,
                     18446744073709551615ULL);
    SAME_AS_SNPRINTF("%zu %zd|", (size_t)0, (ptrdiff_t)-5);
    SAME_AS_SNPRINTF("%d%d%d", 0, -0, 10);
    ls_buf nb = {0};
    ls_buf_printf(&nb, "%s", null_str); /* as glibc prints it */
    ck_assert_str_eq(nb.s, "(null)");
    ls_buf_free(&nb);
    SAME_AS_SNPRINTF("trailing %%");
    /* vsnprintf's: widths, precision, floats */
    SAME_AS_SNPRINTF("%5u|%-6s|%.3f|%g|%08.2f|%x", 7u, "ab", 3.14159, 1e-5, -2.5, 255u);
    SAME_AS_SNPRINTF("%.*s and %s", 3, "abcdef", "more");
    /* long output, so the buffer grows in both paths */
    char big[300];
    memset(big, 'q', sizeof big - 1);
    big[sizeof big - 1] = 0;
    SAME_AS_SNPRINTF("%s|%s|%d", big, "x", 1);
    SAME_AS_SNPRINTF("%s|%.1f", big, 0.25);
}
END_TEST

START_TEST(tmeta_str_names_dtype_and_sizes)
{
    char buf[64];
    ls_tmeta m;
    ls_tmeta_init(&m, LS_DT_F32, 3, (int64_t[]){2, 0, 1234567890123});
    ck_assert_str_eq(ls_tmeta_str(&m, buf, sizeof buf), "float32[2, 0, 1234567890123]");
    m.sym[1] = ls_intern("s0");
    m.sizes[2] = -5; /* bad input reaches messages too */
    ck_assert_str_eq(ls_tmeta_str(&m, buf, sizeof buf), "float32[2, s0, -5]");
    ls_tmeta_init(&m, LS_DT_BOOL, 0, NULL);
    ck_assert_str_eq(ls_tmeta_str(&m, buf, sizeof buf), "bool[]");
    ls_tmeta_init(&m, LS_DT_I64, 2, (int64_t[]){100, 200});
    char small[8];
    ck_assert_str_eq(ls_tmeta_str(&m, small, sizeof small), "int64[1"); /* cut, still terminated */
}
END_TEST

/* A tensor's bytes from its metadata: a scalar is one element; an empty, unknown-size or
 * overflowing count is 0 bytes. */
START_TEST(tmeta_nbytes_counts_what_is_known)
{
    ls_tmeta m;
    ls_tmeta_init(&m, LS_DT_F32, 2, (int64_t[]){3, 5});
    ck_assert_uint_eq(ls_tmeta_nbytes(&m), 60);
    ls_tmeta_init(&m, LS_DT_I64, 0, NULL);
    ck_assert_uint_eq(ls_tmeta_nbytes(&m), 8);
    ls_tmeta_init(&m, LS_DT_F16, 2, (int64_t[]){4, 0});
    ck_assert_uint_eq(ls_tmeta_nbytes(&m), 0);
    ls_tmeta_init(&m, LS_DT_F32, 2, (int64_t[]){-1, 8});
    ck_assert_uint_eq(ls_tmeta_nbytes(&m), 0);
    ls_tmeta_init(&m, LS_DT_U8, 2, (int64_t[]){INT64_MAX / 2, 3});
    ck_assert_uint_eq(ls_tmeta_nbytes(&m), 0);
}
END_TEST

START_TEST(byte_counts_read_as_people_read_them)
{
    char b[32];
    ck_assert_str_eq(ls_fmt_bytes(0, b, sizeof b), "0 B");
    ck_assert_str_eq(ls_fmt_bytes(1023, b, sizeof b), "1023 B");
    ck_assert_str_eq(ls_fmt_bytes(1741, b, sizeof b), "1.7 KiB");
    ck_assert_str_eq(ls_fmt_bytes(2u << 20, b, sizeof b), "2.0 MiB");
    ck_assert_str_eq(ls_fmt_bytes((uint64_t)3 << 30, b, sizeof b), "3.0 GiB");
}
END_TEST

/* The one rule for "is this tensor what the metadata says" (runtime, bundled delegate, run). */
START_TEST(tensors_fit_their_metadata)
{
    ls_tmeta want, have;
    ls_tmeta_init(&want, LS_DT_F32, 2, (int64_t[]){2, 3});
    ls_tmeta_init(&have, LS_DT_F32, 2, (int64_t[]){2, 3});
    ck_assert(ls_tmeta_fits(&want, &have));
    have.sizes[1] = 4;
    ck_assert(!ls_tmeta_fits(&want, &have));
    want.sym[1] = ls_intern("s0"); /* a symbolic size takes any */
    ck_assert(ls_tmeta_fits(&want, &have));
    have.dtype = LS_DT_I64;
    ck_assert(!ls_tmeta_fits(&want, &have));
    want.dtype = LS_DT_UNKNOWN; /* an unknown dtype takes any */
    ck_assert(ls_tmeta_fits(&want, &have));
    ls_tmeta_init(&have, LS_DT_F32, 1, (int64_t[]){2});
    ck_assert(!ls_tmeta_fits(&want, &have)); /* never another rank */
    ls_tensor *t = ls_tensor_alloc(LS_DT_F32, 2, (int64_t[]){2, 7});
    ls_tmeta_init(&want, LS_DT_F32, 2, (int64_t[]){2, -1}); /* a size below zero: unknown */
    ck_assert(ls_tensor_fits(&want, t));
    want.sizes[0] = 3;
    ck_assert(!ls_tensor_fits(&want, t));
    ls_tensor_unref(t);
    /* a .pte's bounded [<=2, <=3] (6 elements): any [a, b] with a·b <= 6, as ExecuTorch resizes */
    ls_tmeta_init(&want, LS_DT_F32, 2, (int64_t[]){2, 3});
    want.sym[0] = ls_intern("<=2"), want.sym[1] = ls_intern("<=3");
    ck_assert_int_eq(ls_tmeta_numel_bound(&want), 6);
    ls_tmeta_init(&have, LS_DT_F32, 2, (int64_t[]){1, 6});
    ck_assert(ls_tmeta_fits(&want, &have));
    have.sizes[0] = 2, have.sizes[1] = 2;
    ck_assert(ls_tmeta_fits(&want, &have));
    have.sizes[1] = 4; /* 8 elements */
    ck_assert(!ls_tmeta_fits(&want, &have));
    have.sizes[0] = INT64_MAX / 2; /* no overflow on the way */
    ck_assert(!ls_tmeta_fits(&want, &have));
    want.sym[0] = ls_intern("s0"), want.sym[1] = NULL; /* torch's symbols are not bounds */
    ck_assert_int_eq(ls_tmeta_numel_bound(&want), -1);
}
END_TEST

/* Node texts are records of interned pointers, interned themselves: equal texts, one record. */
START_TEST(node_texts_are_interned_records)
{
    ls_node_text none = {0};
    ck_assert_ptr_null(ls_node_text_intern(&none));
    ls_node_text a = {.stack_trace = ls_intern_text_n("File \"m.py\", line 3", 19), .custom = ls_intern("{}")};
    ls_node_text b = a;
    const ls_node_text *ra = ls_node_text_intern(&a), *rb = ls_node_text_intern(&b);
    ck_assert_ptr_nonnull(ra);
    ck_assert_ptr_eq(ra, rb);
    ck_assert_ptr_ne(ra, &a);
    ck_assert_uint_eq((uintptr_t)ra % 8, 0);
    ck_assert_ptr_eq(ra->stack_trace, a.stack_trace);
    b.torch_fn = ls_intern("add_1;add");
    const ls_node_text *rc = ls_node_text_intern(&b);
    ck_assert_ptr_ne(rc, ra);
    ck_assert_str_eq(rc->torch_fn, "add_1;add");
    /* a string first, then a record: the record still lands 8-byte aligned */
    ls_intern("odd");
    b.source_fn = ls_intern("x");
    ck_assert_uint_eq((uintptr_t)ls_node_text_intern(&b) % 8, 0);
}
END_TEST

START_TEST(dtype_numberings_round_trip)
{
    ck_assert_int_eq(ls_dtype_from_export(7), LS_DT_F32);
    ck_assert_int_eq(ls_dtype_from_export(5), LS_DT_I64);
    ck_assert_int_eq(ls_dtype_from_export(12), LS_DT_BOOL);
    ck_assert_int_eq(ls_dtype_from_export(13), LS_DT_BF16);
    ck_assert_int_eq(ls_dtype_from_et(6), LS_DT_F32);
    ck_assert_int_eq(ls_dtype_from_et(11), LS_DT_BOOL);
    ck_assert_int_eq(ls_dtype_from_et(15), LS_DT_BF16);
    for (int t = 1; t < LS_DT_COUNT; t++) {
        ck_assert_int_eq(ls_dtype_from_et(ls_dtype_to_et((ls_dtype)t)), t);
        if (ls_dtype_to_export((ls_dtype)t) > 0) ck_assert_int_eq(ls_dtype_from_export(ls_dtype_to_export((ls_dtype)t)), t);
        ck_assert_int_eq(ls_dtype_parse(ls_dtype_name((ls_dtype)t)), t);
    }
    ck_assert_int_eq(ls_dtype_from_export(0), LS_DT_UNKNOWN);
    ck_assert_int_eq(ls_dtype_from_export(99), LS_DT_UNKNOWN);
}
END_TEST

START_TEST(dtype_promotion_follows_torch)
{
    ck_assert_int_eq(ls_dtype_promote(LS_DT_I64, LS_DT_F32), LS_DT_F32);
    ck_assert_int_eq(ls_dtype_promote(LS_DT_BOOL, LS_DT_I32), LS_DT_I32);
    ck_assert_int_eq(ls_dtype_promote(LS_DT_U8, LS_DT_I8), LS_DT_I16);
    ck_assert_int_eq(ls_dtype_promote(LS_DT_F16, LS_DT_BF16), LS_DT_F32);
    ck_assert_int_eq(ls_dtype_promote(LS_DT_F32, LS_DT_F64), LS_DT_F64);
    ck_assert_int_eq(ls_dtype_promote(LS_DT_I32, LS_DT_I64), LS_DT_I64);
}
END_TEST

START_TEST(half_precision_conversions)
{
    const float vals[] = {0.0f, 1.0f, -2.5f, 65504.0f, 6.1035156e-05f, 5.9604645e-08f};
    for (size_t i = 0; i < sizeof vals / sizeof vals[0]; i++)
        ck_assert_float_eq(ls_f16_to_f32(ls_f32_to_f16(vals[i])), vals[i]);
    ck_assert(isinf(ls_f16_to_f32(ls_f32_to_f16(1e6f))));
    ck_assert(isnan(ls_f16_to_f32(ls_f32_to_f16(NAN))));
    ck_assert_float_eq(ls_bf16_to_f32(ls_f32_to_bf16(1.5f)), 1.5f);
    ck_assert_float_eq(ls_bf16_to_f32(ls_f32_to_bf16(3.140625f)), 3.140625f);
    ck_assert(isnan(ls_bf16_to_f32(ls_f32_to_bf16(NAN))));
}
END_TEST

START_TEST(atomic_write_replaces_only_on_success)
{
    const char *dir = tu_tmpdir();
    char path[512];
    snprintf(path, sizeof path, "%s/out.bin", dir);
    ls_error err;
    ck_assert_int_eq(ls_write_file_atomic(path, "hello", 5, &err), 0);
    uint8_t *data;
    size_t n;
    ck_assert_int_eq(ls_read_file(path, 1 << 20, &data, &n, &err), 0);
    ck_assert_uint_eq(n, 5);
    ck_assert(memcmp(data, "hello", 5) == 0);
    free(data);
    /* a folder that does not exist: error names the path, nothing created */
    ck_assert_int_eq(ls_write_file_atomic("/nonexistent-dir/x.bin", "x", 1, &err), -1);
    ck_assert(tu_contains(err.msg, "/nonexistent-dir/x.bin"));
    ck_assert_int_eq(ls_read_file("/nonexistent-file", 10, &data, &n, &err), -1);
    ck_assert(tu_contains(err.msg, "/nonexistent-file: cannot open"));
    unlink(path);
    rmdir(dir);
}
END_TEST

START_TEST(tensor_views_share_their_blob)
{
    int64_t sizes[LS_MAX_DIMS + 1] = {2, 3, 1, 1, 1, 1, 1, 1, 1};
    ls_tensor *t = ls_tensor_alloc(LS_DT_F32, 2, sizes);
    for (int i = 0; i < 6; i++) ls_tensor_set_f64(t, i, i);
    int64_t flat = 6;
    ls_tensor *r = ls_tensor_reshape(t, 1, &flat);
    ck_assert_ptr_eq(r->data, t->data);
    ck_assert_uint_eq(r->owner->refs, 2);
    ck_assert_ptr_null(ls_tensor_reshape(t, LS_MAX_DIMS + 1, sizes));
    ck_assert_ptr_null(ls_tensor_reshape(t, -1, sizes));
    ls_tensor *v = ls_tensor_from_blob(t->owner, 4 * sizeof(float), LS_DT_F32, 1, (int64_t[]){2});
    ck_assert_double_eq(ls_tensor_get_f64(v, 1), 5);
    ck_assert_uint_eq(t->owner->refs, 3);
    ck_assert_ptr_null(ls_tensor_from_blob(t->owner, 0, LS_DT_F32, LS_MAX_DIMS + 1, sizes));
    ck_assert_ptr_null(ls_tensor_from_blob(t->owner, 5 * sizeof(float), LS_DT_F32, 1, (int64_t[]){2}));
    ls_tensor_unref(v);
    ls_tensor_unref(r);
    ck_assert_uint_eq(t->owner->refs, 1);
    ls_tensor_unref(t);
}
END_TEST

/* The tests' own helper: a folder tu_tmpdir made goes, with what is in it, when the process that
 * made it exits (each test runs in a process of its own). They were left behind: 15 thousand in
 * /tmp after a day of test runs. */
START_TEST(test_folders_go_with_their_process)
{
    int fds[2];
    ck_assert_int_eq(pipe(fds), 0);
    pid_t pid = fork();
    ck_assert_int_ge(pid, 0);
    if (pid == 0) {
        const char *d = tu_tmpdir();
        char f[512];
        snprintf(f, sizeof f, "%s/sub", d);
        mkdir(f, 0700);
        snprintf(f, sizeof f, "%s/sub/file", d);
        FILE *fp = fopen(f, "w");
        if (fp) fclose(fp);
        ssize_t w = write(fds[1], d, strlen(d) + 1);
        exit(w > 0 ? 0 : 1);
    }
    close(fds[1]);
    char path[512] = {0};
    ck_assert_int_gt(read(fds[0], path, sizeof path - 1), 0);
    close(fds[0]);
    int status;
    waitpid(pid, &status, 0);
    ck_assert(WIFEXITED(status) && WEXITSTATUS(status) == 0);
    ck_assert_msg(strncmp(path, "/tmp/lowerscope-test-", 21) == 0, "%s", path);
    struct stat st;
    ck_assert_msg(stat(path, &st) != 0, "%s is still there", path);
    /* and one this process makes stays while it runs */
    const char *mine = tu_tmpdir();
    ck_assert_int_eq(stat(mine, &st), 0);
}
END_TEST

Suite *common_suite(void)
{
    Suite *s = suite_create("common");
    TCase *tc = tcase_create("core");
    tcase_add_test(tc, intern_gives_one_pointer_per_content);
    tcase_add_test(tc, intern_batch_and_hashed_match_one_by_one);
    tcase_add_test(tc, heap_growth_is_advised_for_huge_pages_when_asked);
    tcase_add_test(tc, calloc_table_faults_each_page_once);
    tcase_add_test(tc, buf_escapes_json);
    tcase_add_test(tc, test_folders_go_with_their_process);
    tcase_add_test(tc, buf_printf_matches_snprintf);
    tcase_add_test(tc, tmeta_str_names_dtype_and_sizes);
    tcase_add_test(tc, tmeta_nbytes_counts_what_is_known);
    tcase_add_test(tc, tensors_fit_their_metadata);
    tcase_add_test(tc, byte_counts_read_as_people_read_them);
    tcase_add_test(tc, node_texts_are_interned_records);
    tcase_add_test(tc, dtype_numberings_round_trip);
    tcase_add_test(tc, dtype_promotion_follows_torch);
    tcase_add_test(tc, half_precision_conversions);
    tcase_add_test(tc, atomic_write_replaces_only_on_success);
    tcase_add_test(tc, tensor_views_share_their_blob);
    suite_add_tcase(s, tc);
    return s;
}
