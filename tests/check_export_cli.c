/* `lowerscope export` as a user runs it: every sample exported by the default pipeline and with
 * --portable loads as ExecuTorch's runtime checks it; a stand-in blob under a shipped backend's id
 * is said to be one; damaged exported files are refused by `lowerscope run` with a message and no
 * crash; files are not overwritten without --force; --compare-with tells a difference from
 * agreement. The exported .pte's content is check_export.c. */
#include <check.h>
#include <dirent.h>
#include <stdio.h>
#include <sys/resource.h>
#include <sys/stat.h>
#include <stdlib.h>
#include <string.h>

#include "export.h"
#include "progfixtures.h"
#include "pte_test.h"
#include "reader.h"
#include "testutil.h"

static void write_bytes(const char *path, const uint8_t *d, size_t n)
{
    ls_error err;
    ck_assert(ls_write_file_atomic(path, d, n, &err) == 0);
}

/* Every sample exported as a user would, by the default pipeline and with --portable: verify
 * says ExecuTorch's runtime loads it (exit 0), flatc decodes it with ExecuTorch's schema; the
 * portable file calls no delegate and needs nothing a stock runtime lacks; the default one
 * warns that it needs BundledBackend. */
START_TEST(every_sample_loads_in_executorch_from_the_cli)
{
    const char *dir = tu_tmpdir();
    bool flatc = system("command -v flatc >/dev/null 2>&1") == 0;
    for (size_t k = 0; k < PF_N_SAMPLES; k++)
        for (int portable = 0; portable < 2; portable++) {
            char sample[512], path[600], *out = NULL;
            snprintf(sample, sizeof sample, "samples/%s.pt2", pf_samples[k].name);
            snprintf(path, sizeof path, "%s/%s%s.pte", dir, pf_samples[k].name, portable ? "_portable" : "");
            int rc = tu_runf(&out, "export %s -o %s%s", tu_root(sample), path, portable ? " --portable" : "");
            ck_assert_msg(rc == 0, "%s: %s", path, out);
            ck_assert_msg(portable != tu_contains(out, "warning: ") && portable != tu_contains(out, "needs backend BundledBackend"),
                          "%s: %s", path, out);
            free(out);
            rc = tu_runf(&out, "verify %s", path);
            ck_assert_msg(rc == 0 && tu_contains(out, "ExecuTorch's runtime loads it"), "%s: exit %d\n%s", path, rc, out);
            /* a PT2E program's q/dq at the graph's edges run on ExecuTorch's quantized kernels
             * (kernels/quantized), which a runtime for such programs links */
            bool quantized = strcmp(pf_samples[k].name, "quantized_mlp") == 0;
            ck_assert_msg(!portable || !tu_contains(out, "needs ") ||
                              (quantized && tu_contains(out, "from library quantized") && !tu_contains(out, "needs backend")),
                          "%s: %s", path, out);
            free(out);
            if (flatc) {
                char cmd[2048];
                snprintf(cmd, sizeof cmd, "flatc --json --strict-json --defaults-json -o %s %s -- %s >/dev/null 2>&1", dir,
                         tu_root("tests/schema/program.fbs"), path);
                ck_assert_msg(system(cmd) == 0, "flatc does not decode %s", path);
            }
            ls_pte q;
            ls_error err;
            ck_assert(ls_pte_read_file(path, &q, &err) == 0);
            if (portable) ck_assert_uint_eq(q.execution_plan.v[0].delegates.n, 0);
            ls_pte_free(&q);
        }
}
END_TEST

/* A profile under an id ExecuTorch ships (coreml: CoreMLBackend) whose modules the bundled
 * delegate preprocessed: the file's delegate is in the bundled format (LSBB), which ExecuTorch's
 * CoreMLBackend does not read; export and verify say so instead of "ExecuTorch ships it", and a
 * real blob (xnnpack's) still reads "ExecuTorch ships it". */
START_TEST(stand_in_blob_is_not_the_stock_backend)
{
    const char *dir = tu_tmpdir();
    char *out;
    int rc = tu_runf(&out, "export %s --backend coreml -o %s/kv.pte", tu_root("samples/kv_cache.pt2"), dir);
    ck_assert_msg(rc == 0, "%s", out);
    ck_assert_msg(tu_contains(out, "needs     backend CoreMLBackend, but its blob is lowerscope's bundled format") &&
                      tu_contains(out, "warning: ") && !tu_contains(out, "ExecuTorch ships it"),
                  "%s", out);
    free(out);
    rc = tu_runf(&out, "verify %s/kv.pte", dir);
    ck_assert_msg(rc == 0 && tu_contains(out, "bundled format (LSBB) standing in for it"), "%s", out);
    free(out);
    rc = tu_runf(&out, "export %s --backend coreml -o %s/kv2.pte --json", tu_root("samples/kv_cache.pt2"), dir);
    ck_assert_msg(rc == 0 && tu_contains(out, "\"stand_in\":true"), "%s", out);
    free(out);
    rc = tu_runf(&out, "export %s --backend xnnpack -o %s/q.pte", tu_root("samples/quantized_mlp.pt2"), dir);
    ck_assert_msg(rc == 0 && tu_contains(out, "XnnpackBackend (ExecuTorch ships it") && !tu_contains(out, "standing in"),
                  "%s", out);
    free(out);
}
END_TEST

/* Damaged exported files through `lowerscope run`: refused with a message naming the file, and
 * never a crash (the binary runs under ASan in make test-asan). */
START_TEST(damaged_exports_are_refused)
{
    const char *dir = tu_tmpdir();
    char path[512], bad[600];
    snprintf(path, sizeof path, "%s/good.pte", dir);
    snprintf(bad, sizeof bad, "%s/bad.pte", dir);
    char *out = NULL;
    ck_assert_int_eq(tu_runf(&out, "export %s -o %s", tu_root("samples/two_delegates.pt2"), path), 0);
    free(out);
    size_t size;
    uint8_t *d = pt_load(path, &size);
    ck_assert_ptr_nonnull(d);
    uint8_t *x = malloc(size);
    struct {
        const char *what;
        size_t len;
        size_t at;
        uint64_t val;
        int width;
    } cases[] = {
        {"truncated in the header", 20, 0, 0, 0},
        {"truncated in the program", 300, 0, 0, 0},
        {"truncated in the segments", 0, 0, 0, 0}, /* len set below */
        {"wrong identifier", 0, 4, 0x33315445, 4}, /* "ET13" */
        {"not ExecuTorch", 0, 4, 0x58585858, 4},   /* "XXXX" */
        {"root offset past the end", 0, 0, 0x7ffffff0, 4},
        {"segment base past the end", 0, 24, 1u << 30, 8},
        {"segment data size that overflows", 0, 32, UINT64_MAX - 64, 8},
        {"program size that overflows", 0, 16, UINT64_MAX, 8},
        {"header length", 0, 12, 0xffff, 4},
        {"a table whose vtable is itself", 0, SIZE_MAX, 0, 4},
    };
    cases[2].len = size - 100;
    for (size_t c = 0; c < sizeof cases / sizeof cases[0]; c++) {
        memcpy(x, d, size);
        size_t n = cases[c].len ? cases[c].len : size;
        if (cases[c].at == SIZE_MAX) ls_le_put(x + pt_le(x, 4), 0, 4); /* soffset 0: the vtable is the table */
        else if (cases[c].width) ls_le_put(x + cases[c].at, cases[c].val, cases[c].width);
        write_bytes(bad, x, n);
        int rc = tu_runf(&out, "run %s", bad);
        ck_assert_msg(rc == 2, "%s: exit %d: %s", cases[c].what, rc, out);
        ck_assert_msg(tu_contains(out, "bad.pte"), "%s: %s", cases[c].what, out);
        free(out);
    }
    /* a damaged delegate blob: the backend refuses it when the program is prepared */
    ls_pte q;
    ls_error err;
    ck_assert(ls_pte_read_bytes(d, size, "good.pte", &q, &err) == 0);
    uint64_t blob = pt_le(d + 24, 8) + q.segments.v[1].offset;
    ls_pte_free(&q);
    memcpy(x, d, size);
    x[blob] ^= 0xff;
    write_bytes(bad, x, size);
    ck_assert_int_eq(tu_runf(&out, "run %s", bad), 2);
    ck_assert_msg(tu_contains(out, "lowered_module_0"), "%s", out);
    free(out);
    /* seeded bit flips anywhere: a message or a run, never a crash */
    uint64_t s = 12345;
    for (int k = 0; k < 40; k++) {
        memcpy(x, d, size);
        for (int f = 0; f < 4; f++) {
            s = s * 6364136223846793005ull + 1442695040888963407ull;
            x[(s >> 33) % size] ^= (uint8_t)(1u << ((s >> 20) % 8));
        }
        write_bytes(bad, x, size);
        int rc = tu_runf(&out, "run %s", bad);
        /* 1: the runtime's load checks refuse it, and say so */
        ck_assert_msg(rc == 0 || rc == 2 || (rc == 1 && tu_contains(out, "ExecuTorch's runtime refuses it")),
                      "flip %d: exit %d: %s", k, rc, out);
        free(out);
    }
    free(x);
    free(d);
}
END_TEST

START_TEST(export_command_and_overwrite)
{
    const char *dir = tu_tmpdir();
    char path[512];
    snprintf(path, sizeof path, "%s/sc.pte", dir);
    const char *sample = tu_root("samples/shared_constant.pt2");
    char *out = NULL;
    ck_assert_int_eq(tu_runf(&out, "export %s -o %s", sample, path), 0);
    ck_assert_msg(tu_contains(out, "wrote ") && tu_contains(out, "ExecuTorch program (ET12) of step 8 emit"), "%s", out);
    ck_assert(tu_contains(out, "delegates 1: BundledBackend"));
    ck_assert(tu_contains(out, "arena     48 bytes for 48 bytes of tensors (3 tensors)"));
    free(out);
    ck_assert_int_eq(tu_runf(&out, "export %s -o %s", sample, path), 2);
    ck_assert_msg(tu_contains(out, "exists: give --force"), "%s", out);
    free(out);
    ck_assert_int_eq(tu_runf(&out, "export %s -o %s --force --step partition --json", sample, path), 0);
    cJSON *j = cJSON_Parse(out);
    ck_assert_msg(j != NULL, "%s", out);
    ck_assert_str_eq(cJSON_GetObjectItem(j, "pass")->valuestring, "partition");
    ck_assert(cJSON_IsTrue(cJSON_GetObjectItem(j, "ran_to_executorch")));
    ck_assert_int_eq(cJSON_GetObjectItem(j, "delegate_calls")->valueint, 0);
    cJSON_Delete(j);
    free(out);
    ck_assert_int_eq(tu_runf(&out, "run %s --compare-with %s", path, sample), 0);
    free(out);
    ck_assert_int_eq(tu_runf(&out, "export %s", sample), 2);
    ck_assert(tu_contains(out, "-o OUT"));
    free(out);
    /* an empty name, -o=OUT: said as such (they said "lowerscope: : cannot rename ..." and "where to?") */
    const char *empty_out[] = {"export", sample, "-o", "", NULL}, *empty_file[] = {"info", "", NULL};
    ck_assert_int_eq(tu_run(&out, empty_out), 2);
    ck_assert_msg(tu_contains(out, "where to? give -o OUT.pte or -o OUT.pt2 (the name given is empty)"), "%s", out);
    free(out);
    ck_assert_int_eq(tu_run(&out, empty_file), 2);
    ck_assert_msg(tu_contains(out, "info: FILE is an empty name"), "%s", out);
    free(out);
    /* a newline or tab in a file name: one message, one line (the newline reached stderr raw) */
    const char *odd_name[] = {"verify", "/nonexistent/new\nline\t.pte", NULL};
    ck_assert_int_eq(tu_run(&out, odd_name), 2);
    ck_assert_msg(tu_contains(out, "lowerscope: /nonexistent/new\\nline\\t.pte: cannot open") &&
                      strchr(out, '\n') == out + strlen(out) - 1,
                  "%s", out);
    free(out);
    char ptd[600]; /* the head of a .ptd, enough for --data's check as it is given */
    snprintf(ptd, sizeof ptd, "%s/w.ptd", tu_tmpdir());
    ls_error werr;
    ck_assert_int_eq(ls_write_file_atomic(ptd, "\0\0\0\0FT01", 8, &werr), 0);
    /* each empty value is named by its option (they said "a program named by an empty string"
     * with no option, and `info --data ""` was taken without a word); the last string is what the
     * message must hold */
    const char *const empties[][8] = {
        {"run", "", NULL, "run: FILE is an empty name"},
        {"diff", sample, "--step", "3", "--with", "", NULL, "diff: --with: an empty path"},
        {"run", sample, "--compare-with", "", NULL, "run: --compare-with: an empty path"},
        {"run", sample, "--etdump", "", NULL, "run: --etdump: an empty path"},
        /* a device is not a file: /dev/zero was read as an empty ETDump */
        {"run", sample, "--etdump", "/dev/zero", NULL, "run: --etdump: /dev/zero: a character device, not a file"},
        /* the range says its top (it said "from 1 up" and refused 100000000) */
        {"run", sample, "--steps", "100000000", NULL, "run: --steps wants a whole number from 1 to 1000000, not '100000000'"},
        {"passes", sample, "--ops", "", NULL, "passes: --ops: an empty path"},
        {"run", sample, "--save", "", NULL, "run: --save: an empty path: give the folder to save into"},
        {sample, "--ops", "", NULL, "lowerscope: --ops: an empty path: give the file of custom operator schemas (one a line)"}, /* the UI */
        {"info", sample, "--data", "", NULL, "info: --data: an empty path"},
        {"verify", sample, "--data", "", NULL, "verify: --data: an empty path"},
        {sample, "--etdump", "", NULL, "lowerscope: --etdump: an empty path"}, /* the UI, before it opens */
        {sample, "--data", "", NULL, "lowerscope: --data: an empty path"},
        /* --data names a .pte's external weights: for a .pt2 it would be ignored */
        {"info", sample, "--data", ptd, NULL, "external data (.ptd) goes with a .pte; this is a .pt2 archive"},
        /* with no -o, a wrong option is said first (it said "where to?") */
        {"export", sample, "--bogus", NULL, "export: unknown option or missing value '--bogus'"},
        /* the second file's failure names its option (it read as if FILE could not be opened) */
        {"diff", sample, "--step", "3", "--with", "/nonexistent.pte", NULL, "diff: --with: /nonexistent.pte: cannot open"},
        {"run", sample, "--compare-with", "/nonexistent.pte", NULL, "run: --compare-with: /nonexistent.pte: cannot open"},
        {"run", sample, "--input", "x=/nonexistent.npy", NULL, "run: --input x: /nonexistent.npy"},
        {"run", sample, "--etdump", "/nonexistent.etdp", NULL, "run: --etdump: /nonexistent.etdp: cannot open"},
    };
    for (size_t i = 0; i < sizeof empties / sizeof empties[0]; i++) {
        size_t end = 0;
        while (empties[i][end]) end++;
        ck_assert_int_eq(tu_run(&out, empties[i]), 2);
        ck_assert_msg(tu_contains(out, empties[i][end + 1]) && !tu_contains(out, "lowerscope: : "), "%s: %s",
                      empties[i][0], out);
        free(out);
    }
    /* a name longer than its folder allows: said before the pipeline runs */
    char long_name[600];
    int k = snprintf(long_name, sizeof long_name, "%s/", tu_tmpdir());
    memset(long_name + k, 'd', 252);
    snprintf(long_name + k + 252, sizeof long_name - (size_t)k - 252, ".pte");
    ck_assert_int_eq(tu_runf(&out, "export %s -o %s", sample, long_name), 2);
    ck_assert_msg(tu_contains(out, "the file name is 256 bytes, more than the 255 its folder allows"), "%s", out);
    free(out);
    ck_assert_int_eq(tu_runf(&out, "export %s -o=%s", sample, path), 2);
    ck_assert_msg(tu_contains(out, "write -o OUT or --output=OUT"), "%s", out);
    free(out);
    /* the to_executorch steps show in the pipeline */
    ck_assert_int_eq(tu_runf(&out, "passes %s", sample), 0);
    ck_assert_msg(tu_contains(out, "memory_plan") && tu_contains(out, "greedy: arena 48 bytes for 48 bytes of tensors (3 tensors in 3 shared objects)"),
                  "%s", out);
    free(out);
}
END_TEST

/* A mutated buffer the program starts not all zero, exported without its starting value (as
 * exir does unless asked): the export says so, the emit step's report too, and the file then
 * computes otherwise than the step; --init-mutable-buffers writes it and the file agrees. */
START_TEST(a_nonzero_buffer_left_out_is_said)
{
    const char *cm = tu_root("samples/constant_mask.pt2");
    char path[600], *out;
    snprintf(path, sizeof path, "%s/cm.pte", tu_tmpdir());
    ck_assert_int_eq(tu_runf(&out, "export %s --portable -o %s", cm, path), 0);
    ck_assert_msg(tu_contains(out, "warning   buffer `mask_mut` starts not all zero in the program"), "%s", out);
    free(out);
    ck_assert_int_eq(tu_runf(&out, "run %s --compare-with %s", path, cm), 1); /* what the warning is about */
    free(out);
    ck_assert_int_eq(tu_runf(&out, "passes %s --portable", cm), 0);
    ck_assert_msg(tu_contains(out, "buffer `mask_mut` starts not all zero here, but the .pte holds no starting value"), "%s",
                  out);
    free(out);
    ck_assert_int_eq(tu_runf(&out, "export %s --portable --init-mutable-buffers -o %s --force", cm, path), 0);
    ck_assert_msg(!tu_contains(out, "warning   buffer"), "%s", out);
    free(out);
    ck_assert_int_eq(tu_runf(&out, "run %s --compare-with %s", path, cm), 0);
    free(out);
    /* a buffer that starts as zeros (a KV cache) is not said */
    ck_assert_int_eq(tu_runf(&out, "export %s -o %s --force", tu_root("samples/kv_cache.pt2"), path), 0);
    ck_assert_msg(!tu_contains(out, "warning   buffer"), "%s", out);
    free(out);
}
END_TEST

/* --compare-with tells a difference (exit 1) from agreement (exit 0). */
/* Past a file size limit (ulimit -f 10): the write fails and says so, the file the user had
 * stays, and no temporary file is left (SIGXFSZ ended the process and left one). */
START_TEST(a_file_size_limit_replaces_nothing)
{
    char dir[4096], out[4200];
    snprintf(dir, sizeof dir, "%s/limited", tu_tmpdir());
    ck_assert_int_eq(mkdir(dir, 0700), 0);
    snprintf(out, sizeof out, "%s/keep.pte", dir);
    ls_error werr;
    ck_assert_int_eq(ls_write_file_atomic(out, "precious\n", 9, &werr), 0);
    struct rlimit was, small;
    ck_assert_int_eq(getrlimit(RLIMIT_FSIZE, &was), 0);
    small = was;
    small.rlim_cur = 10240; /* policy's .pte is larger */
    ck_assert_int_eq(setrlimit(RLIMIT_FSIZE, &small), 0);
    char *text;
    int rc = tu_runf(&text, "export %s -o %s --force", tu_root("samples/policy.pt2"), out);
    ck_assert_int_eq(setrlimit(RLIMIT_FSIZE, &was), 0);
    ck_assert_msg(rc == 2 && tu_contains(text, "write failed: File too large (nothing was replaced)"), "exit %d: %s", rc,
                  text);
    free(text);
    char *kept = tu_slurp(out);
    ck_assert_str_eq(kept, "precious\n");
    free(kept);
    DIR *d = opendir(dir);
    int files = 0;
    for (struct dirent *e; (e = readdir(d));) files += e->d_name[0] != '.';
    closedir(d);
    ck_assert_int_eq(files, 1);
}
END_TEST

START_TEST(compare_with_finds_differences)
{
    const char *dir = tu_tmpdir();
    char a[512], b[512];
    int64_t four = 4;
    for (int k = 0; k < 2; k++) {
        ls_builder *bd = ls_builder_new("model", LS_DIALECT_ATEN);
        ls_tmeta m = ls_meta(LS_DT_F32, 1, &four);
        uint32_t x = ls_build_input(bd, "x", LS_IN_USER_INPUT, NULL, false, &m, NULL);
        ls_arg *args = ls_calloc(2, sizeof *args);
        args[0] = ls_arg_node(x);
        args[1] = ls_arg_float(k ? 2.0 : 1.0);
        uint32_t y = ls_build_call(bd, NULL, LS_OP_mul_Scalar, args, 2, NULL);
        ls_build_output(bd, &y, 1, NULL, NULL);
        ls_program *p = ls_builder_finish(bd);
        snprintf(k ? b : a, 512, "%s/m%d.pt2", dir, k);
        ls_error err;
        ck_assert_msg(ls_write_pt2(p, k ? b : a, NULL, &err) == 0, "%s", err.msg);
        ls_program_unref(p);
    }
    char *out = NULL;
    ck_assert_int_eq(tu_runf(&out, "run %s --compare-with %s", a, a), 0);
    free(out);
    ck_assert_int_eq(tu_runf(&out, "run %s --steps 2 --compare-with %s", a, b), 1);
    ck_assert_msg(tu_contains(out, "DIFFERS") && tu_contains(out, "2 differ"), "%s", out);
    free(out);
}
END_TEST

Suite *export_cli_suite(void)
{
    Suite *s = suite_create("export_cli");
    TCase *tc = tcase_create("cli");
    tcase_set_timeout(tc, 300);
    tcase_add_test(tc, every_sample_loads_in_executorch_from_the_cli);
    tcase_add_test(tc, stand_in_blob_is_not_the_stock_backend);
    tcase_add_test(tc, damaged_exports_are_refused);
    tcase_add_test(tc, export_command_and_overwrite);
    tcase_add_test(tc, compare_with_finds_differences);
    tcase_add_test(tc, a_nonzero_buffer_left_out_is_said);
    tcase_add_test(tc, a_file_size_limit_replaces_nothing);
    suite_add_tcase(s, tc);
    return s;
}
