/* Bundled programs (.bpte): a file built with lowerscope's flatbuffer builder around the .pte
 * emitted for shared_constant decodes with flatc and ExecuTorch's schema, keeps the schema's
 * force_align, runs its cases (expected outputs computed here with libm, not by lowerscope) and
 * fails the case whose expected output is wrong; the comparison is the runtime's
 * tensors_are_close, checked on cases worked by hand from bundled_program.cpp. */
#include <check.h>
#include <cjson/cJSON.h>
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "bpte.h"
#include "bpte_run.h"
#include "export.h"
#include "flatbuf.h"
#include "devtools_fixture.h"
#include "progfixtures.h"
#include "pte_test.h"
#include "testutil.h"

/* ---- the comparison rule */

static ls_tensor *vec(ls_dtype dt, int n, const double *v)
{
    int64_t s[1] = {n};
    ls_tensor *t = ls_tensor_alloc(dt, 1, s);
    for (int i = 0; i < n; i++) ls_tensor_set_f64(t, i, v[i]);
    return t;
}

static bool close1(ls_dtype dt, double e, double a, double rtol, double atol)
{
    ls_tensor *x = vec(dt, 1, &e), *y = vec(dt, 1, &a);
    bool r = ls_bp_tensors_close(x, y, rtol, atol, NULL, 0, NULL);
    ls_tensor_unref(x);
    ls_tensor_unref(y);
    return r;
}

START_TEST(comparison_follows_tensors_are_close)
{
    /* |e - a| <= atol + |rtol * a|, a being the method's output (elem_is_close) */
    ck_assert(close1(LS_DT_F64, 1.0, 1.00001, 1e-5, 1e-8));        /* 1e-5 <= 1e-8 + 1.00001e-5 */
    ck_assert(!close1(LS_DT_F64, 1.0, 1.0000102, 1e-5, 1e-8));     /* 1.02e-5 > 1.0000102e-5 + 1e-8 */
    ck_assert(close1(LS_DT_F64, 0.0, 1e6, 1.0, 0));                /* allowed = |rtol * a| = 1e6 */
    ck_assert(!close1(LS_DT_F64, 1e6, 0.0, 1.0, 0));               /* the other way: allowed 0 */
    ck_assert(close1(LS_DT_F32, NAN, NAN, 0, 0));                  /* NaN == NaN */
    ck_assert(close1(LS_DT_F32, INFINITY, INFINITY, 0, 0));
    ck_assert(!close1(LS_DT_F32, -INFINITY, INFINITY, 1, 1));
    ck_assert(!close1(LS_DT_F32, 1.0, INFINITY, 1e-5, 1e-8));      /* the error is not finite */
    ck_assert(!close1(LS_DT_F32, 1.0, 1.0000001, 0, 0));           /* rtol = atol = 0: exact */
    ck_assert(close1(LS_DT_F16, 1.0, 1.0009765625, 1e-3, 0));      /* half: as doubles, with tolerance */
    /* float32's error is a float subtraction: 1 - 2^25 is -33554431, which float rounds to -2^25;
     * against 0.99999998 * 2^25 = 33554431.33 it fails, where float64's exact error passes */
    ck_assert(!close1(LS_DT_F32, 1.0, 33554432.0, 0.99999998, 0));
    ck_assert(close1(LS_DT_F64, 1.0, 33554432.0, 0.99999998, 0));
    /* bfloat16 and integers: byte for byte, whatever the tolerance */
    ck_assert(!close1(LS_DT_BF16, 1.0, 1.0078125, 1, 1));
    ck_assert(!close1(LS_DT_I64, 7, 8, 1, 1));
    ck_assert(close1(LS_DT_I64, 7, 7, 0, 0));
    /* different scalar types or sizes never match */
    ls_tensor *a = vec(LS_DT_F32, 1, (double[]){1}), *b = vec(LS_DT_F64, 1, (double[]){1}),
              *c = vec(LS_DT_F32, 2, (double[]){1, 1});
    char why[200];
    int64_t worst;
    ck_assert(!ls_bp_tensors_close(a, b, 1, 1, why, sizeof why, &worst));
    ck_assert_msg(tu_contains(why, "expected float32[1], the method gave float64[1]"), "%s", why);
    ck_assert(!ls_bp_tensors_close(a, c, 1, 1, NULL, 0, NULL));
    ls_tensor *d = vec(LS_DT_F32, 2, (double[]){1, 2.5});
    ck_assert(!ls_bp_tensors_close(c, d, 1e-5, 1e-8, why, sizeof why, &worst));
    ck_assert_int_eq(worst, 1);
    ck_assert_msg(tu_contains(why, "element 1: expected 1, the method gave 2.5"), "%s", why);
    ls_tensor_unref(a);
    ls_tensor_unref(b);
    ls_tensor_unref(c);
    ls_tensor_unref(d);
}
END_TEST

START_TEST(written_files_keep_the_schema_and_read_back)
{
    ls_bpte b, r;
    dt_bpte_make(&b);
    uint8_t *bytes;
    size_t size;
    dt_bpte_write(&b, &bytes, &size);
    ck_assert(memcmp(bytes + 4, "BP08", 4) == 0);
    /* force_align: the program's bytes at a multiple of 32 in the file, tensor data of 16 */
    ls_fb_reader fr;
    ls_fb_table root, suite, cs, val, tens;
    ls_fb_vec v;
    ls_error err;
    ck_assert(ls_fb_reader_init(&fr, bytes, size, "b", &err) == 0 && ls_fb_root(&fr, "BP08", &root) == 0);
    ck_assert_int_eq(ls_fb_vector_field(&fr, &root, 2, "program", 1, &v), 1);
    ck_assert_uint_eq(v.pos % 32, 0);
    ck_assert_uint_eq(v.n, b.program_size);
    ck_assert(memcmp(bytes + v.pos, b.program, b.program_size) == 0);
    ck_assert_int_eq(ls_fb_vector_field(&fr, &root, 1, "suites", 4, &v), 1);
    ck_assert(ls_fb_vec_table(&fr, &v, 0, "s", &suite) == 0);
    ck_assert_int_eq(ls_fb_vector_field(&fr, &suite, 1, "cases", 4, &v), 1);
    ck_assert(ls_fb_vec_table(&fr, &v, 1, "c", &cs) == 0);
    ck_assert_int_eq(ls_fb_vector_field(&fr, &cs, 0, "inputs", 4, &v), 1);
    ck_assert(ls_fb_vec_table(&fr, &v, 0, "i", &val) == 0);
    uint8_t tag;
    ck_assert_int_eq(ls_fb_union(&fr, &val, 0, "val", &tag, &tens), 1);
    ck_assert_uint_eq(tag, 1); /* Tensor */
    ck_assert_int_eq(ls_fb_vector_field(&fr, &tens, 2, "data", 1, &v), 1);
    ck_assert_uint_eq(v.pos % 16, 0);
    ck_assert(memcmp(bytes + v.pos, dt_cases_x[1], 16) == 0);

    ck_assert_msg(ls_bpte_read(bytes, size, "b.bpte", &r, &err) == 0, "%s", err.msg);
    ck_assert_uint_eq(r.n_suites, 1);
    ck_assert_str_eq(r.suites[0].method_name, "forward");
    ck_assert_uint_eq(r.suites[0].n_cases, 3);
    ck_assert_uint_eq(r.suites[0].cases[2].n_expected, 2);
    ck_assert_int_eq(r.suites[0].cases[2].expected[1].sizes[0], 4);
    ck_assert(memcmp(r.suites[0].cases[2].expected[1].data, b.suites[0].cases[2].expected[1].data, 16) == 0);
    ck_assert_uint_eq(r.program_size, b.program_size);
    ls_bpte_free(&r);

    cJSON *j = pt_flatc_json(bytes, size, "b.bpte", "bundled_program_schema.fbs", NULL);
    if (j) {
        const cJSON *s0 = cJSON_GetArrayItem(cJSON_GetObjectItem(j, "method_test_suites"), 0);
        ck_assert_str_eq(cJSON_GetObjectItem(s0, "method_name")->valuestring, "forward");
        const cJSON *c2 = cJSON_GetArrayItem(cJSON_GetObjectItem(s0, "test_cases"), 2);
        const cJSON *e1 = cJSON_GetArrayItem(cJSON_GetObjectItem(c2, "expected_outputs"), 1);
        ck_assert_str_eq(cJSON_GetObjectItem(e1, "val_type")->valuestring, "Tensor");
        const cJSON *t = cJSON_GetObjectItem(e1, "val");
        ck_assert_str_eq(cJSON_GetObjectItem(t, "scalar_type")->valuestring, "FLOAT");
        ck_assert_int_eq(cJSON_GetArrayItem(cJSON_GetObjectItem(t, "sizes"), 0)->valueint, 4);
        ck_assert_int_eq(cJSON_GetArraySize(cJSON_GetObjectItem(t, "data")), 16);
        ck_assert_int_eq(cJSON_GetArraySize(cJSON_GetObjectItem(j, "program")), (int)b.program_size);
        cJSON_Delete(j);
    }
    free(bytes);
    ls_bpte_free(&b);
}
END_TEST

START_TEST(cases_run_and_a_wrong_expectation_fails)
{
    ls_bpte b;
    dt_bpte_make(&b);
    ls_bp_runner *r = ls_bp_runner_new(&b, LS_BP_RTOL, LS_BP_ATOL);
    ls_bp_case_result res[3];
    for (uint32_t k = 0; k < 3; k++) ls_bp_run_case(r, 0, k, &res[k]);
    ck_assert_msg(res[0].status == LS_BP_PASS, "%s %s", res[0].message, res[0].n_outputs ? res[0].outputs[0].why : "");
    ck_assert_msg(res[1].status == LS_BP_PASS, "%s %s", res[1].message, res[1].n_outputs > 1 ? res[1].outputs[1].why : "");
    ck_assert_int_eq(res[2].status, LS_BP_FAIL);
    ck_assert(res[2].outputs[0].pass && !res[2].outputs[1].pass);
    ck_assert_int_eq(res[2].outputs[1].worst, 1);
    ck_assert_msg(tu_contains(res[2].outputs[1].why, "element 1"), "%s", res[2].outputs[1].why);
    /* compute_method_output_error_stats: the one wrong element is 0.5 off */
    ck_assert(res[2].has_stats && fabs(res[2].max_abs - 0.5) < 1e-6);
    ck_assert(fabs(res[2].mean_abs - 0.5 / 8) < 1e-6);
    for (uint32_t k = 0; k < 3; k++) ls_bp_case_result_free(&res[k]);
    ls_bp_runner_free(r);

    /* the CLI: one line per case, exit 1 */
    const char *path = dt_bpte_write(&b, NULL, NULL);
    char *out;
    int rc = tu_runf(&out, "run %s", path);
    ck_assert_msg(rc == 1, "exit %d: %s", rc, out);
    ck_assert_msg(tu_contains(out, "forward case 0: pass") && tu_contains(out, "forward case 2: FAIL"), "%s", out);
    ck_assert_msg(tu_contains(out, "output 1: element 1"), "%s", out);
    ck_assert_msg(tu_contains(out, "3 cases: 2 passed, 1 failed"), "%s", out);
    free(out);
    rc = tu_runf(&out, "run %s --json", path);
    ck_assert_int_eq(rc, 1);
    cJSON *j = cJSON_Parse(out);
    ck_assert_msg(j != NULL, "%s", out);
    const cJSON *cases = cJSON_GetObjectItem(j, "cases");
    ck_assert_int_eq(cJSON_GetArraySize(cases), 3);
    ck_assert_str_eq(cJSON_GetObjectItem(cJSON_GetArrayItem(cases, 0), "status")->valuestring, "pass");
    ck_assert_str_eq(cJSON_GetObjectItem(cJSON_GetArrayItem(cases, 2), "status")->valuestring, "fail");
    ck_assert_int_eq(cJSON_GetObjectItem(cJSON_GetObjectItem(j, "summary"), "failed")->valueint, 1);
    cJSON_Delete(j);
    free(out);
    /* a looser tolerance lets the wrong element through: 0.5 <= 1 + rtol * |a| */
    rc = tu_runf(&out, "run %s --atol 1", path);
    ck_assert_msg(rc == 0, "exit %d: %s", rc, out);
    free(out);
    /* info lists the cases */
    rc = tu_runf(&out, "info %s", path);
    ck_assert_msg(rc == 0, "%s", out);
    ck_assert_msg(tu_contains(out, "3 test cases in 1 suite"), "%s", out);
    ck_assert_msg(tu_contains(out, "forward case 2: FLOAT[4] → FLOAT[4], FLOAT[4]"), "%s", out);
    free(out);
    rc = tu_runf(&out, "info %s --json", path);
    j = cJSON_Parse(out);
    ck_assert_msg(rc == 0 && j, "%s", out);
    ck_assert_int_eq(cJSON_GetArraySize(cJSON_GetObjectItem(cJSON_GetObjectItem(j, "bundled"), "cases")), 3);
    cJSON_Delete(j);
    free(out);
    ls_bpte_free(&b);
}
END_TEST

/* What the runtime refuses is said per case: fewer inputs than the method takes, no expected
 * outputs, an expected output that is not a tensor. */
START_TEST(cases_the_runtime_refuses_say_why)
{
    ls_bpte b;
    dt_bpte_make(&b);
    ls_bp_case *c = b.suites[0].cases;
    c[0].n_inputs = 0;
    c[1].n_expected = 0;
    c[2].expected[0].kind = LS_BP_INT;
    ls_bp_runner *r = ls_bp_runner_new(&b, LS_BP_RTOL, LS_BP_ATOL);
    ls_bp_case_result res;
    ls_bp_run_case(r, 0, 0, &res);
    ck_assert_int_eq(res.status, LS_BP_ERROR);
    ck_assert_msg(tu_contains(res.message, "forward case 0: 0 inputs for the method's 1"), "%s", res.message);
    ls_bp_case_result_free(&res);
    ls_bp_run_case(r, 0, 1, &res);
    ck_assert_msg(res.status == LS_BP_ERROR && tu_contains(res.message, "no expected outputs"), "%s", res.message);
    ls_bp_case_result_free(&res);
    ls_bp_run_case(r, 0, 2, &res);
    ck_assert_msg(res.status == LS_BP_ERROR && tu_contains(res.message, "data type Int not supported"), "%s", res.message);
    ls_bp_case_result_free(&res);
    ls_bp_runner_free(r);
    /* the CLI: each case's line says why once (it read 'forward case 0: error: FILE: forward case
     * 0: ...'), and the summary is one line */
    const char *path = dt_bpte_write(&b, NULL, NULL);
    char *out;
    int rc = tu_runf(&out, "run %s", path);
    ck_assert_msg(rc == 1, "exit %d: %s", rc, out);
    ck_assert_msg(tu_contains(out, "  forward case 0: error: 0 inputs for the method's 1\n") &&
                      tu_contains(out, "  forward case 1: error: no expected outputs") &&
                      tu_contains(out, "\n3 cases: 0 passed, 0 failed, 3 could not be checked\n"),
                  "%s", out);
    free(out);
    c[0].n_inputs = 1;
    c[1].n_expected = 2;
    ls_bpte_free(&b);
}
END_TEST

START_TEST(truncated_and_flipped_files_are_refused_cleanly)
{
    ls_bpte b, r;
    dt_bpte_make(&b);
    uint8_t *bytes;
    size_t size;
    dt_bpte_write(&b, &bytes, &size);
    ls_error err;
    /* the flatbuffer part (the program's bytes, 32-aligned at the end, are copied whatever they hold) */
    size_t head = size > 1024 ? 1024 : size;
    for (size_t k = 0; k < head; k++) {
        ck_assert_int_ne(ls_bpte_read(bytes, k, "cut.bpte", &r, &err), 0);
        ck_assert_msg(strncmp(err.msg, "cut.bpte: ", 10) == 0, "%s", err.msg);
    }
    for (size_t k = 0; k < size; k += (k < head ? 1 : 7)) {
        bytes[k] ^= 0x41;
        if (ls_bpte_read(bytes, size, "flip.bpte", &r, &err) == 0) ls_bpte_free(&r);
        else ck_assert_msg(strncmp(err.msg, "flip.bpte: ", 11) == 0, "%s", err.msg);
        bytes[k] ^= 0x41;
    }
    free(bytes);
    ls_bpte_free(&b);
}
END_TEST

/* A bundled program whose method needs a backend lowerscope lacks (the QNN llama's bytes with
 * kv_forward's cases): each case cannot run, the summary says so on its line, exit 3. */
START_TEST(cases_of_a_method_lowerscope_cannot_run_exit_3)
{
    const char *qnn = pt_path("et_stories260k_hybrid_llama_qnn", ".pte");
    if (!qnn) return;
    ls_bpte b;
    dt_bpte_make(&b);
    free(b.program);
    b.program = pt_load(qnn, &b.program_size);
    ck_assert_ptr_nonnull(b.program);
    b.suites[0].method_name = ls_intern("kv_forward");
    const char *path = dt_bpte_write(&b, NULL, NULL);
    char *out;
    int rc = tu_runf(&out, "run %s", path);
    ck_assert_msg(rc == 3, "exit %d: %s", rc, out);
    ck_assert_msg(tu_contains(out, "kv_forward case 0: cannot run: ") && tu_contains(out, "needs QnnBackend") &&
                      tu_contains(out, "\n3 cases: 0 passed, 0 failed, 3 need what lowerscope lacks\n"),
                  "%s", out);
    free(out);
    ls_bpte_free(&b);
}
END_TEST

/* A bundled program's ETDump (a device ran its embedded .pte) is placed on that program's
 * instructions, as the UI places it: instruction 0 is the atan2 the CPU runs, 1 the delegate
 * call. run refused the pair. */
START_TEST(an_etdump_of_a_bundled_program_lands_on_its_program)
{
    ls_bpte b;
    dt_bpte_make(&b);
    const char *path = dt_bpte_write(&b, NULL, NULL);
    ls_etd_event ev[3] = {
        {.kind = LS_ETD_PROFILE, .name = ls_intern("OPERATOR_CALL"), .instruction_id = 0, .delegate_debug_id_int = -1,
         .start_time = 1000, .end_time = 201000},
        {.kind = LS_ETD_PROFILE, .name = ls_intern("DELEGATE_CALL"), .instruction_id = 1, .delegate_debug_id_int = -1,
         .start_time = 201000, .end_time = 501000},
        {.kind = LS_ETD_PROFILE, .name = ls_intern("OPERATOR_CALL"), .instruction_id = 9, .delegate_debug_id_int = -1,
         .start_time = 501000, .end_time = 502000},
    };
    ls_etd_run run = {.name = ls_intern("Execute"), .bundled_input_index = 0, .events = ev, .n_events = 3};
    ls_etdump d = {.name = "sc.etdp", .runs = &run, .n_runs = 1};
    uint8_t *bytes;
    size_t size;
    ls_error err;
    ck_assert_msg(ls_etdump_write(&d, &bytes, &size, &err) == 0, "%s", err.msg);
    char etdp[4200];
    snprintf(etdp, sizeof etdp, "%.*s/sc.etdp", (int)(strrchr(path, '/') - path), path);
    ck_assert(ls_write_file_atomic(etdp, bytes, size, &err) == 0);
    free(bytes);
    char *out;
    int rc = tu_runf(&out, "run %s --etdump %s", path, etdp);
    ck_assert_msg(rc == 0 && tu_contains(out, "placed by the program's instructions"), "%s", out);
    ck_assert_msg(tu_contains(out, "3 profile events: 2 on a node, 0 framework, 0 inside a delegate with no node of their own, 1 unmatched"), "%s", out);
    ck_assert_msg(tu_contains(out, "aten_atan2_default                           0      1     0.2000"), "%s", out);
    ck_assert_msg(tu_contains(out, "executorch_call_delegate                     1      1     0.3000"), "%s", out);
    ck_assert_msg(tu_contains(out, "instruction 9: no such instruction"), "%s", out);
    free(out);
    ls_bpte_free(&b);
}
END_TEST

Suite *bpte_suite(void)
{
    Suite *s = suite_create("bpte");
    TCase *tc = tcase_create("core");
    tcase_set_timeout(tc, 120);
    tcase_add_test(tc, comparison_follows_tensors_are_close);
    tcase_add_test(tc, written_files_keep_the_schema_and_read_back);
    tcase_add_test(tc, cases_run_and_a_wrong_expectation_fails);
    tcase_add_test(tc, cases_the_runtime_refuses_say_why);
    tcase_add_test(tc, cases_of_a_method_lowerscope_cannot_run_exit_3);
    tcase_add_test(tc, truncated_and_flipped_files_are_refused_cleanly);
    tcase_add_test(tc, an_etdump_of_a_bundled_program_lands_on_its_program);
    suite_add_tcase(s, tc);
    return s;
}
