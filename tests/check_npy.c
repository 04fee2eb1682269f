/* .npy reading and writing, and the run command end to end (text, JSON, --input, --save and
 * its error messages). */
#include <check.h>
#include <cjson/cJSON.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "npy.h"
#include "testutil.h"

static ls_tensor *parse(const char *bytes, size_t n, ls_error *err)
{
    ls_tensor *t = NULL;
    if (ls_npy_parse((const uint8_t *)bytes, n, "t.npy", &t, err) != 0) return NULL;
    return t;
}

/* a hand-made file: version major.0, the header text padded as given, then data */
static size_t make_npy(char *buf, int major, const char *header, const void *data, size_t n)
{
    size_t hl = strlen(header), pre = major == 1 ? 10 : 12;
    memcpy(buf, "\x93NUMPY", 6);
    buf[6] = (char)major;
    buf[7] = 0;
    if (major == 1) {
        buf[8] = (char)(hl & 0xff);
        buf[9] = (char)(hl >> 8);
    } else {
        for (int i = 0; i < 4; i++) buf[8 + i] = (char)(hl >> (8 * i));
    }
    memcpy(buf + pre, header, hl);
    memcpy(buf + pre + hl, data, n);
    return pre + hl + n;
}

START_TEST(roundtrip_every_dtype)
{
    ls_dtype dts[] = {LS_DT_F32, LS_DT_F64, LS_DT_F16, LS_DT_I64, LS_DT_I32, LS_DT_I16, LS_DT_I8, LS_DT_U8, LS_DT_BOOL};
    for (size_t k = 0; k < sizeof dts / sizeof dts[0]; k++) {
        ls_tensor *t = ls_tensor_alloc(dts[k], 2, (int64_t[]){2, 3});
        for (int i = 0; i < 6; i++) ls_tensor_set_f64(t, i, i % 2);
        size_t n;
        uint8_t *b = ls_npy_encode(t, &n);
        ck_assert_uint_eq((n - t->nbytes) % 64, 0); /* data starts on a 64-byte boundary */
        ls_tensor *u;
        ls_error err;
        ck_assert_msg(ls_npy_parse(b, n, "x", &u, &err) == 0, "%s", err.msg);
        ck_assert(ls_tensor_equal(t, u));
        ls_tensor_unref(u);
        ls_tensor_unref(t);
        free(b);
    }
    /* 0-dim and 1-dim shapes are written as () and (3,) */
    ls_tensor *s = ls_tensor_scalar_f64(LS_DT_F32, 2.5);
    size_t n;
    uint8_t *b = ls_npy_encode(s, &n);
    ck_assert(strstr((char *)b + 10, "'shape': (), }"));
    free(b);
    ls_tensor_unref(s);
    /* bfloat16 is written as float32 */
    ls_tensor *h = ls_tensor_alloc(LS_DT_BF16, 1, (int64_t[]){3});
    ls_tensor_set_f64(h, 1, 1.5);
    b = ls_npy_encode(h, &n);
    ck_assert(strstr((char *)b + 10, "'<f4'") && strstr((char *)b + 10, "(3,)"));
    ls_tensor *u;
    ls_error err;
    ck_assert_int_eq(ls_npy_parse(b, n, "x", &u, &err), 0);
    ck_assert_int_eq(u->dtype, LS_DT_F32);
    ck_assert_float_eq(((float *)u->data)[1], 1.5f);
    ls_tensor_unref(u);
    ls_tensor_unref(h);
    free(b);
}
END_TEST

START_TEST(versions_orders_and_byte_orders)
{
    char buf[512];
    ls_error err;
    float f[6] = {0, 1, 2, 3, 4, 5};
    /* version 2.0 and 3.0 headers, keys in any order, no trailing comma */
    size_t n = make_npy(buf, 2, "{'shape': (2, 3), 'fortran_order': False, 'descr': '<f4'}\n", f, sizeof f);
    ls_tensor *t = parse(buf, n, &err);
    ck_assert_msg(t, "%s", err.msg);
    ck_assert_int_eq(t->sizes[1], 3);
    ls_tensor_unref(t);
    n = make_npy(buf, 3, "{\"descr\": \"<f4\", \"fortran_order\": False, \"shape\": (6,), }\n", f, sizeof f);
    ck_assert_ptr_nonnull(t = parse(buf, n, &err));
    ls_tensor_unref(t);
    /* Fortran order: the same values column by column → converted to C order */
    float fo[6] = {0, 3, 1, 4, 2, 5};
    n = make_npy(buf, 1, "{'descr': '<f4', 'fortran_order': True, 'shape': (2, 3), }\n", fo, sizeof fo);
    ck_assert_ptr_nonnull(t = parse(buf, n, &err));
    for (int i = 0; i < 6; i++) ck_assert_float_eq(((float *)t->data)[i], (float)i);
    ls_tensor_unref(t);
    /* big-endian int32 */
    uint8_t be[8] = {0, 0, 0, 1, 0xff, 0xff, 0xff, 0xfe};
    n = make_npy(buf, 1, "{'descr': '>i4', 'fortran_order': False, 'shape': (2,), }\n", be, sizeof be);
    ck_assert_ptr_nonnull(t = parse(buf, n, &err));
    ck_assert_int_eq(((int32_t *)t->data)[0], 1);
    ck_assert_int_eq(((int32_t *)t->data)[1], -2);
    ls_tensor_unref(t);
}
END_TEST

static void bad(const char *header, size_t data_bytes, const char *needle)
{
    char buf[512], data[64] = {0};
    ls_error err;
    size_t n = make_npy(buf, 1, header, data, data_bytes);
    ls_tensor *t = parse(buf, n, &err);
    ck_assert_msg(t == NULL, "'%s' was accepted", header);
    ck_assert_msg(strstr(err.msg, needle) && strncmp(err.msg, "t.npy: ", 7) == 0, "'%s': %s", header, err.msg);
}

START_TEST(wrong_files_say_which_and_why)
{
    ls_error err;
    ck_assert_ptr_null(parse("PK\3\4 not numpy at all", 20, &err));
    ck_assert_msg(strstr(err.msg, "not a .npy file"), "%s", err.msg);
    bad("{'descr': '<f4', 'fortran_order': False, 'shape': (2,), }\n", 4, "truncated data: float32[2] needs 8 bytes, the file has 4");
    bad("{'descr': '<f4', 'fortran_order': False, 'shape': (1,), }\n", 8, "too much data");
    bad("{'descr': '<c8', 'fortran_order': False, 'shape': (1,), }\n", 8, "unsupported dtype '<c8'");
    bad("{'descr': '|O', 'fortran_order': False, 'shape': (1,), }\n", 8, "unsupported dtype '|O'");
    bad("{'descr': [('a', '<f4')], 'fortran_order': False, 'shape': (1,), }\n", 4, "structured");
    bad("{'descr': '<f4', 'fortran_order': False, 'shape': (1,), 'extra': 1}\n", 4, "unexpected key 'extra'");
    bad("{'descr': '<f4', 'shape': (1,)}\n", 4, "lacks 'fortran_order'");
    bad("{'descr': '<f4', 'fortran_order': False, 'shape': (-1,), }\n", 4, "non-negative integers");
    bad("{'descr': '<f4', 'fortran_order': False, 'shape': (99999999999, 99999999999), }\n", 4, "shape");
    bad("['descr', '<f4']\n", 4, "corrupt header");
    char v9[32] = "\x93NUMPY\x09\x00\x00\x00";
    ck_assert_ptr_null(parse(v9, 12, &err));
    ck_assert_msg(strstr(err.msg, "unsupported .npy format version 9.0"), "%s", err.msg);
    char shorth[16] = "\x93NUMPY\x01\x00\xff\x00";
    ck_assert_ptr_null(parse(shorth, 12, &err));
    ck_assert_msg(strstr(err.msg, "truncated header"), "%s", err.msg);
}
END_TEST

/* ---- the run command */

START_TEST(run_prints_outputs_state_and_time)
{
    const char *kv = tu_root("samples/kv_cache.pt2");
    if (access(kv, R_OK) != 0) { /* samples absent: skip */
        tu_skip("samples/kv_cache.pt2 is absent (make samples)");
        return;
    }
    char *out;
    ck_assert_int_eq(tu_runf(&out, "run %s --steps 3", kv), 0);
    ck_assert_msg(tu_contains(out, "3 user inputs, 3 steps, 1 mutable buffer"), "%s", out);
    ck_assert_msg(tu_contains(out, "out 0 mm") && tu_contains(out, "float32[4, 1]"), "%s", out);
    ck_assert_msg(tu_contains(out, "state after step 2") && tu_contains(out, "cache  float32[4, 8]"), "%s", out);
    ck_assert_msg(tu_contains(out, "[2] [") && tu_contains(out, "[3] zeros"), "%s", out); /* three rows filled */
    ck_assert_msg(tu_contains(out, "median step"), "%s", out);
    free(out);
    ck_assert_int_eq(tu_runf(&out, "run %s --steps 2 --seed 3 --json", kv), 0);
    cJSON *j = cJSON_Parse(out);
    ck_assert_msg(j, "%s", out);
    ck_assert_int_eq(cJSON_GetObjectItem(j, "format_version")->valueint, 2);
    ck_assert(cJSON_IsNull(cJSON_GetObjectItem(j, "pipeline_step"))); /* the loaded program */
    ck_assert_int_eq(cJSON_GetArraySize(cJSON_GetObjectItem(j, "runs")), 2);
    cJSON *o = cJSON_GetArrayItem(cJSON_GetObjectItem(cJSON_GetArrayItem(cJSON_GetObjectItem(j, "runs"), 1), "outputs"), 0);
    ck_assert_str_eq(cJSON_GetObjectItem(o, "dtype")->valuestring, "float32");
    ck_assert_int_eq(cJSON_GetArraySize(cJSON_GetObjectItem(o, "shape")), 2);
    cJSON *st = cJSON_GetArrayItem(cJSON_GetObjectItem(j, "state"), 0);
    ck_assert_str_eq(cJSON_GetObjectItem(st, "name")->valuestring, "cache");
    ck_assert(cJSON_IsNumber(cJSON_GetObjectItem(cJSON_GetObjectItem(j, "time"), "median_step_seconds")));
    cJSON_Delete(j);
    free(out);
}
END_TEST

START_TEST(run_with_inputs_saves_what_the_golden_files_hold)
{
    const char *prog = tu_root("samples/folded_output.pt2");
    const char *gold = tu_root("tests/golden/folded_output/in_x.npy");
    if (access(prog, R_OK) != 0 || access(gold, R_OK) != 0) return;
    const char *dir = tu_tmpdir();
    char *out;
    ck_assert_int_eq(tu_runf(&out, "run %s --input x=%s --save %s/o", prog, gold, dir), 0);
    free(out);
    char path[512];
    snprintf(path, sizeof path, "%s/o/out_1.npy", dir);
    ls_tensor *got, *want;
    ls_error err;
    ck_assert_msg(ls_npy_load(path, &got, &err) == 0, "%s", err.msg);
    ck_assert_int_eq(ls_npy_load(tu_root("tests/golden/folded_output/out_1.npy"), &want, &err), 0);
    ck_assert(ls_tensor_equal(got, want)); /* a * 2 exactly */
    ls_tensor_unref(got);
    ls_tensor_unref(want);
    /* folders above it are made too (as mkdir -p); a file in the way is refused before the run */
    ck_assert_int_eq(tu_runf(&out, "run %s --input x=%s --save %s/p/q/r", prog, gold, dir), 0);
    free(out);
    snprintf(path, sizeof path, "%s/p/q/r/out_1.npy", dir);
    ck_assert_int_eq(access(path, R_OK), 0);
    /* a folder holding .npy files already: refused before the run, the files as they were,
     * unless --force (it replaced them without a word) */
    FILE *f = fopen(path, "w");
    ck_assert_ptr_nonnull(f);
    fputs("mine", f);
    fclose(f);
    ck_assert_int_eq(tu_runf(&out, "run %s --input x=%s --save %s/p/q/r", prog, gold, dir), 2);
    ck_assert_msg(tu_contains(out, "/p/q/r: the folder holds ") && tu_contains(out, "and 1 more .npy files already: give "
                                                                                   "--force") && !tu_contains(out, "step 0"),
                  "%s", out);
    free(out);
    char *mine = tu_slurp(path);
    ck_assert_str_eq(mine, "mine");
    free(mine);
    ck_assert_int_eq(tu_runf(&out, "run %s --input x=%s --save %s/p/q/r --force", prog, gold, dir), 0);
    free(out);
    ck_assert_msg(ls_npy_load(path, &got, &err) == 0, "%s", err.msg);
    ls_tensor_unref(got);
    ck_assert_int_eq(tu_runf(&out, "run %s --input x=%s --save %s/o/out_1.npy/s", prog, gold, dir), 2);
    ck_assert_msg(tu_contains(out, "o/out_1.npy is there and is not a folder") && !tu_contains(out, "step 0"), "%s", out);
    free(out);
    /* a folder no file can go in, before the run too (it printed the results, then failed):
     * /proc/1 is one even for root */
    if (access("/proc/1", F_OK) == 0 && access("/proc/1", W_OK) != 0) {
        ck_assert_int_eq(tu_runf(&out, "run %s --input x=%s --save /proc/1", prog, gold), 2);
        ck_assert_msg(tu_contains(out, "--save /proc/1: cannot write in the folder") && !tu_contains(out, "step 0"), "%s",
                      out);
        free(out);
    } else {
        tu_skip("/proc/1 is writable here: no folder to refuse --save in");
    }
}
END_TEST

START_TEST(run_errors_exit_2_with_a_reason)
{
    const char *prog = tu_root("samples/folded_output.pt2");
    if (access(prog, R_OK) != 0) return;
    const char *dir = tu_tmpdir();
    char path[512], *out;
    /* an int64 file for a float32 input */
    ls_tensor *t = ls_tensor_alloc(LS_DT_I64, 1, (int64_t[]){4});
    snprintf(path, sizeof path, "%s/wrong.npy", dir);
    ls_error err;
    ck_assert_int_eq(ls_npy_save(path, t, &err), 0);
    ls_tensor_unref(t);
    ck_assert_int_eq(tu_runf(&out, "run %s --input x=%s", prog, path), 2);
    ck_assert_msg(tu_contains(out, "run: --input x: ") && tu_contains(out, "wrong.npy: the input expects float32") && tu_contains(out, "the file holds int64[4]"), "%s", out);
    free(out);
    /* a corrupt header */
    snprintf(path, sizeof path, "%s/corrupt.npy", dir);
    FILE *f = fopen(path, "wb");
    fwrite("\x93NUMPY\x01\x00\x10\x00{'descr': '<f4'!", 1, 26, f);
    fclose(f);
    ck_assert_int_eq(tu_runf(&out, "run %s --input x=%s", prog, path), 2);
    ck_assert_msg(tu_contains(out, "corrupt.npy: corrupt header"), "%s", out);
    free(out);
    ck_assert_int_eq(tu_runf(&out, "run %s --input nosuch=%s", prog, path), 2);
    ck_assert_msg(tu_contains(out, "no user input of that name (its inputs: x)"), "%s", out);
    free(out);
    ck_assert_int_eq(tu_runf(&out, "run %s --steps 0", prog), 2);
    free(out);
    ck_assert_int_eq(tu_runf(&out, "run"), 2);
    free(out);
    ck_assert_int_eq(tu_runf(&out, "run %s/none.pt2", dir), 2);
    free(out);
    /* weights in a .ptd that is not there: the message names the tensor and how to give it */
    const char *ptd_model = tu_shared("data/pte/rs_data_map_model.pte");
    if (ptd_model) {
        ck_assert_int_eq(tu_runf(&out, "run %s", ptd_model), 2);
        ck_assert_msg(tu_contains(out, "tensor_constant a (placeholder c_a): 'a' is stored outside the program") &&
                          tu_contains(out, "--data FILE.ptd"),
                      "%s", out);
        free(out);
    }
}
END_TEST

Suite *npy_suite(void)
{
    Suite *s = suite_create("npy");
    TCase *tc = tcase_create("core");
    tcase_set_timeout(tc, 30);
    tcase_add_test(tc, roundtrip_every_dtype);
    tcase_add_test(tc, versions_orders_and_byte_orders);
    tcase_add_test(tc, wrong_files_say_which_and_why);
    tcase_add_test(tc, run_prints_outputs_state_and_time);
    tcase_add_test(tc, run_with_inputs_saves_what_the_golden_files_hold);
    tcase_add_test(tc, run_errors_exit_2_with_a_reason);
    suite_add_tcase(s, tc);
    return s;
}
