/* lowerscope run --nodes, the CLI twin of the UI's run overlay (node_stats.h): two_delegates' three
 * atan2 stay within [-π, π] and its cos within [-1, 1] (their ranges); within the default tolerance nothing differs from the
 * loaded program; policy lowered for XNNPACK with --rtol 0 --atol 0 differs somewhere (XNNPACK's
 * GEMMs sum in another order), and the first node the JSON names as differing is the first in
 * graph order whose record says so, the count the number of such records; the text says the same. */
#include <check.h>
#include <cjson/cJSON.h>
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "testutil.h"

static cJSON *run_json(const char *args)
{
    char *out;
    int rc = tu_runf(&out, "run %s --nodes --json", args);
    ck_assert_msg(rc == 0 || rc == 1, "exit %d: %s", rc, out);
    cJSON *j = cJSON_Parse(out);
    ck_assert_msg(j != NULL, "not JSON:\n%s", out);
    free(out);
    return j;
}

static const cJSON *node_named(const cJSON *nodes, const char *name)
{
    for (int i = 0; i < cJSON_GetArraySize(nodes); i++)
        if (!strcmp(cJSON_GetObjectItem(cJSON_GetArrayItem(nodes, i), "name")->valuestring, name))
            return cJSON_GetArrayItem(nodes, i);
    return NULL;
}

START_TEST(atan2_values_stay_in_its_range)
{
    char args[4096];
    snprintf(args, sizeof args, "%s --compare --steps 3", tu_root("samples/two_delegates.pt2"));
    cJSON *j = run_json(args);
    const cJSON *nd = cJSON_GetObjectItem(j, "nodes"), *nodes = cJSON_GetObjectItem(nd, "nodes");
    ck_assert_int_eq(cJSON_GetObjectItem(nd, "runs")->valueint, 3);
    ck_assert_int_eq(cJSON_GetObjectItem(nd, "differing")->valueint, 0);
    ck_assert(cJSON_IsNull(cJSON_GetObjectItem(nd, "first_differing")));
    ck_assert_int_gt(cJSON_GetObjectItem(nd, "compared")->valueint, 0);
    const char *atan2s[] = {"aten_atan2_default", "aten_atan2_default_1", "aten_atan2_default_2"};
    for (int k = 0; k < 3; k++) {
        const cJSON *a = node_named(nodes, atan2s[k]);
        ck_assert_msg(a != NULL, "no %s", atan2s[k]);
        ck_assert_int_eq(cJSON_GetObjectItem(a, "elements")->valueint, 3 * 4); /* float32[4] over 3 runs */
        ck_assert(cJSON_GetObjectItem(a, "min")->valuedouble >= -M_PI);
        ck_assert(cJSON_GetObjectItem(a, "max")->valuedouble <= M_PI);
        ck_assert(cJSON_IsTrue(cJSON_GetObjectItem(a, "compared")));
        ck_assert(cJSON_IsNumber(cJSON_GetObjectItem(a, "seconds_per_run")));
    }
    cJSON_Delete(j);
    /* without a reference: ranges and times only */
    j = run_json(tu_root("samples/two_delegates.pt2"));
    nd = cJSON_GetObjectItem(j, "nodes");
    ck_assert(cJSON_IsNull(cJSON_GetObjectItem(nd, "reference")));
    ck_assert_int_eq(cJSON_GetObjectItem(nd, "compared")->valueint, 0);
    const cJSON *cos = node_named(cJSON_GetObjectItem(nd, "nodes"), "cos"); /* the loaded program's names */
    ck_assert_ptr_nonnull(cos);
    ck_assert(cJSON_IsFalse(cJSON_GetObjectItem(cos, "compared")));
    ck_assert(cJSON_GetObjectItem(cos, "min")->valuedouble >= -1 && cJSON_GetObjectItem(cos, "max")->valuedouble <= 1);
    cJSON_Delete(j);
}
END_TEST

START_TEST(exact_tolerance_finds_where_xnnpack_parts)
{
    char args[4096];
    snprintf(args, sizeof args, "%s --backend xnnpack --compare --rtol 0 --atol 0", tu_root("samples/policy.pt2"));
    cJSON *j = run_json(args);
    const cJSON *nd = cJSON_GetObjectItem(j, "nodes"), *nodes = cJSON_GetObjectItem(nd, "nodes");
    int differing = 0;
    const char *first = NULL;
    for (int i = 0; i < cJSON_GetArraySize(nodes); i++) {
        const cJSON *n = cJSON_GetArrayItem(nodes, i);
        if (!cJSON_IsTrue(cJSON_GetObjectItem(n, "differs"))) continue;
        if (!first) first = cJSON_GetObjectItem(n, "name")->valuestring;
        differing++;
        ck_assert(cJSON_GetObjectItem(n, "max_abs")->valuedouble > 0);
    }
    ck_assert_int_gt(differing, 0);
    ck_assert_int_eq(cJSON_GetObjectItem(nd, "differing")->valueint, differing);
    ck_assert_str_eq(cJSON_GetObjectItem(nd, "first_differing")->valuestring, first);
    char *out;
    tu_runf(&out, "run %s --nodes", args);
    char verdict[512];
    snprintf(verdict, sizeof verdict, "node by node: %d of %d nodes differ from the loaded program's; the first: `%s`",
             differing, cJSON_GetObjectItem(nd, "compared")->valueint, first);
    ck_assert_msg(tu_contains(out, verdict), "no '%s' in:\n%s", verdict, out);
    free(out);
    cJSON_Delete(j);
}
END_TEST

Suite *run_nodes_suite(void)
{
    Suite *s = suite_create("run_nodes");
    TCase *tc = tcase_create("cli");
    tcase_add_test(tc, atan2_values_stay_in_its_range);
    tcase_add_test(tc, exact_tolerance_finds_where_xnnpack_parts);
    tcase_set_timeout(tc, 60);
    suite_add_tcase(s, tc);
    return s;
}
