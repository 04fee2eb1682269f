/* Tests of the info command: the human summary and the --json document (format_version 1). */
#include <check.h>
#include <cjson/cJSON.h>
#include <stdlib.h>
#include <string.h>

#include "testutil.h"

START_TEST(info_human_summary)
{
    char *out = NULL;
    const char *argv[] = {"info", tu_root("tests/programs/tagged.json"), NULL};
    ck_assert_int_eq(tu_run(&out, argv), 0);
    ck_assert_msg(tu_contains(out, "program   model · ATen (ATEN) · torch 2.9.0 · schema 8.12"), "%s", out);
    ck_assert(tu_contains(out, "nodes     5: placeholder 1 · call_function 3 · output 1"));
    ck_assert(tu_contains(out, "frobnicate? 1"));
    ck_assert(tu_contains(out, "unknown   1 op"));
    ck_assert(tu_contains(out, "tags      2: tag0 1 node · tag1 1 node"));
    ck_assert(tu_contains(out, "verifier  ok"));
    free(out);
    const char *argv2[] = {"info", tu_root("tests/programs/base.pt2"), NULL};
    ck_assert_int_eq(tu_run(&out, argv2), 0);
    ck_assert_msg(tu_contains(out, "inputs    2: parameter 1 (16 B) · user_input 1 (16 B)"), "%s", out);
    ck_assert(tu_contains(out, "weights   16 B in 1 tensor"));
    free(out);
    const char *argv3[] = {"info", tu_root("tests/programs/listed_twice.json"), NULL};
    ck_assert_int_eq(tu_run(&out, argv3), 0);
    ck_assert(tu_contains(out, "verifier  1 error, 0 warnings: `c` is not a buffer"));
    ck_assert(tu_contains(out, "metadata only"));
    free(out);
}
END_TEST

START_TEST(info_json_document)
{
    char *out = NULL;
    const char *argv[] = {"info", tu_root("tests/programs/lowered.json"), "--json", NULL};
    ck_assert_int_eq(tu_run(&out, argv), 0);
    cJSON *j = cJSON_Parse(out);
    ck_assert_msg(j != NULL, "not JSON: %s", out);
    ck_assert_int_eq(cJSON_GetObjectItem(j, "format_version")->valueint, 1);
    ck_assert_str_eq(cJSON_GetObjectItem(j, "dialect")->valuestring, "Edge");
    const cJSON *nodes = cJSON_GetObjectItem(j, "nodes");
    ck_assert_int_eq(cJSON_GetObjectItem(nodes, "total")->valueint, 7);
    ck_assert_int_eq(cJSON_GetObjectItem(cJSON_GetObjectItem(nodes, "by_kind"), "get_attr")->valueint, 2);
    ck_assert_int_eq(
        cJSON_GetObjectItem(cJSON_GetObjectItem(nodes, "by_target"), "torch.ops.higher_order.executorch_call_delegate")
            ->valueint,
        2);
    const cJSON *subs = cJSON_GetObjectItem(j, "submodules");
    ck_assert_int_eq(cJSON_GetArraySize(subs), 1);
    ck_assert_str_eq(cJSON_GetObjectItem(cJSON_GetArrayItem(subs, 0), "backend_id")->valuestring, "BundledBackend");
    const cJSON *v = cJSON_GetObjectItem(j, "verify");
    ck_assert(cJSON_IsTrue(cJSON_GetObjectItem(v, "ok")));
    ck_assert_int_eq(cJSON_GetObjectItem(v, "warnings")->valueint, 1);
    const cJSON *in0 = cJSON_GetArrayItem(cJSON_GetObjectItem(j, "inputs"), 0);
    ck_assert_str_eq(cJSON_GetObjectItem(in0, "kind")->valuestring, "user_input");
    ck_assert_int_eq(cJSON_GetArrayItem(cJSON_GetObjectItem(in0, "shape"), 0)->valueint, 4);
    cJSON_Delete(j);
    free(out);
}
END_TEST

START_TEST(info_usage_errors)
{
    char *out = NULL;
    const char *none[] = {"info", NULL};
    ck_assert_int_eq(tu_run(&out, none), 2);
    free(out);
    const char *bad[] = {"info", "--frobnicate", NULL};
    ck_assert_int_eq(tu_run(&out, bad), 2);
    ck_assert(tu_contains(out, "unknown option"));
    free(out);
    const char *missing[] = {"info", "/nonexistent/x.pt2", NULL};
    ck_assert_int_eq(tu_run(&out, missing), 2);
    ck_assert(tu_contains(out, "/nonexistent/x.pt2: cannot open"));
    free(out);
    /* the commands share their parsing, each taking only its own options */
    ck_assert_int_eq(tu_runf(&out, "verify %s --step 1", tu_root("samples/kv_cache.pt2")), 2);
    ck_assert_msg(tu_contains(out, "verify: unknown option or missing value '--step'"), "%s", out);
    free(out);
    ck_assert_int_eq(tu_runf(&out, "diff %s --step 1 --force", tu_root("samples/kv_cache.pt2")), 2);
    ck_assert_msg(tu_contains(out, "diff: unknown option or missing value '--force'"), "%s", out);
    free(out);
    ck_assert_int_eq(tu_runf(&out, "info %s --model", tu_root("samples/kv_cache.pt2")), 2);
    ck_assert_msg(tu_contains(out, "info: unknown option or missing value '--model'"), "%s", out);
    free(out);
    ck_assert_int_eq(tu_runf(&out, "verify %s %s", tu_root("samples/kv_cache.pt2"), tu_root("samples/kv_cache.pt2")), 2);
    ck_assert_msg(tu_contains(out, "verify: one FILE at a time"), "%s", out);
    free(out);
}
END_TEST

Suite *info_suite(void)
{
    Suite *s = suite_create("info");
    TCase *tc = tcase_create("info");
    tcase_set_timeout(tc, 30);
    tcase_add_test(tc, info_human_summary);
    tcase_add_test(tc, info_json_document);
    tcase_add_test(tc, info_usage_errors);
    suite_add_tcase(s, tc);
    return s;
}
