/* Re-exporting a loaded .pte is lossless: every file of ../shared/data/pte, opened as a user
 * opens it (step 0 of its history) and exported again, decodes with flatc and ExecuTorch's
 * program.fbs to the same JSON as the original's decode (shared/data/pte/decoded, made by flatc
 * 2.0.8), field by field: every method with its name, named_data and its keys, EXTERNAL tensors
 * with their keys, compile specs, segments (offsets and sizes: the layout is kept); every
 * segment's bytes are the same (named data by hash, delegate blobs byte for byte). */
#include <check.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <xxhash.h>

#include "export.h"
#include "history.h"
#include "passes.h"
#include "pte_check.h"
#include "pte_test.h"
#include "program.h"
#include "reader.h"
#include "testutil.h"

/* flatc's decode of path (NULL when flatc is missing). */
static cJSON *flatc_decode(const char *path, const char *dir)
{
    if (system("command -v flatc >/dev/null 2>&1") != 0) return NULL;
    char cmd[4096];
    snprintf(cmd, sizeof cmd, "flatc --json --strict-json --defaults-json -o %s %s -- %s 2>&1", dir,
             tu_root("tests/schema/program.fbs"), path);
    ck_assert_msg(system(cmd) == 0, "flatc does not decode %s", path);
    const char *base = strrchr(path, '/');
    char json[4096];
    snprintf(json, sizeof json, "%s/%.*s.json", dir, (int)(strlen(base + 1) - 4), base + 1);
    size_t n;
    char *text = (char *)pt_load(json, &n);
    ck_assert_ptr_nonnull(text);
    cJSON *j = pt_parse_flatc(text);
    free(text);
    ck_assert_ptr_nonnull(j);
    return j;
}

static uint64_t segment_hash(const ls_pte *p, uint32_t i)
{
    return XXH3_64bits(p->segment_data[i].v, (size_t)p->segment_data[i].n);
}

/* Every named data key of a is in b with the same bytes. */
static void assert_named_data_kept(const ls_pte *a, const ls_pte *b, const char *name)
{
    ls_error err;
    for (uint32_t i = 0; i < a->named_data.n; i++) {
        const uint8_t *x, *y;
        size_t nx, ny;
        ck_assert_int_eq(ls_pte_named_bytes(a, a->named_data.v[i].key, &x, &nx, &err), 1);
        ck_assert_msg(ls_pte_named_bytes(b, a->named_data.v[i].key, &y, &ny, &err) == 1, "%s: named data %s lost", name,
                      a->named_data.v[i].key);
        ck_assert_msg(nx == ny && XXH3_64bits(x, nx) == XXH3_64bits(y, ny), "%s: named data %s differs", name,
                      a->named_data.v[i].key);
    }
}

/* Plan m's delegates have the same blobs in a and b. */
static void assert_same_blobs(const ls_pte *a, const ls_pte *b, uint32_t m, const char *name)
{
    ls_error err;
    for (uint32_t d = 0; d < a->execution_plan.v[m].delegates.n; d++) {
        const uint8_t *x, *y;
        size_t nx, ny;
        ck_assert(ls_pte_delegate_blob(a, &a->execution_plan.v[m].delegates.v[d], &x, &nx, &err) == 0);
        ck_assert(ls_pte_delegate_blob(b, &b->execution_plan.v[m].delegates.v[d], &y, &ny, &err) == 0);
        ck_assert_msg(nx == ny && (!nx || !memcmp(x, y, nx)), "%s: delegate %u of method %u differs", name, d, m);
    }
}

START_TEST(real_files_come_back_as_they_were)
{
    if (!tu_shared("data/pte")) return;
    const char *dir = tu_tmpdir();
    for (size_t k = 0; k < PT_NREAL; k++) {
        const char *name = pt_real_files[k];
        const char *src = pt_path(name, ".pte");
        ls_program *p;
        ls_error err;
        ck_assert_msg(ls_load(src, NULL, &p, &err) == 0, "%s: %s", name, err.msg);
        ls_pipeline_opts o;
        ls_pipeline_opts_init(&o);
        ls_history h;
        ck_assert_msg(ls_pipeline_run(p, &o, &h, &err) == 0, "%s: %s", name, err.msg);
        ck_assert_uint_eq(h.n, 1); /* a .pte is its own step 0 */
        char path[600];
        snprintf(path, sizeof path, "%s/%s.pte", dir, name);
        ls_export_summary sum;
        ck_assert_msg(ls_export(&h, 0, path, true, &sum, &err) == 0, "%s: %s", name, err.msg);
        ck_assert_msg(sum.as_read != NULL, "%s was emitted again instead of written as read", name);
        ls_export_summary_free(&sum);

        /* field by field, against the decode of the original */
        char want_path[600];
        snprintf(want_path, sizeof want_path, "data/pte/decoded/%s.json", name);
        size_t n;
        char *text = (char *)pt_load(tu_shared(want_path), &n);
        ck_assert_ptr_nonnull(text);
        cJSON *want = pt_parse_flatc(text);
        free(text);
        cJSON *got = flatc_decode(path, dir);
        if (got) {
            char where[512];
            ck_assert_msg(pt_json_equal(want, got, where, sizeof where), "%s: the re-export differs at %s", name, where);
            cJSON_Delete(got);
        }
        cJSON_Delete(want);

        /* the bytes: every segment, named data by its key's bytes, delegates' blobs */
        ls_pte a, b;
        ck_assert(ls_pte_read_file(src, &a, &err) == 0);
        ck_assert(ls_pte_read_file(path, &b, &err) == 0);
        ck_assert_uint_eq(a.n_segment_data, b.n_segment_data);
        for (uint32_t i = 0; i < a.n_segment_data; i++)
            ck_assert_msg(segment_hash(&a, i) == segment_hash(&b, i), "%s: segment %u differs", name, i);
        ck_assert_uint_eq(a.named_data.n, b.named_data.n);
        assert_named_data_kept(&a, &b, name);
        for (uint32_t m = 0; m < a.execution_plan.n; m++) assert_same_blobs(&a, &b, m, name);
        /* and ExecuTorch's runtime loads it as it loaded the original */
        ls_pte_check_report r;
        ck_assert_uint_eq(ls_pte_runtime_check(&b, &r), 0);
        ls_pte_check_report_free(&r);
        ls_pte_free(&a);
        ls_pte_free(&b);
        ls_history_free(&h);
        ls_pipeline_opts_free(&o);
        ls_program_unref(p);
    }
}
END_TEST

/* The same from the command line, on the file with the most to lose: the QNN llama's 29
 * methods and its 1.3 MB blob shared by two of them. */
START_TEST(export_command_keeps_every_method)
{
    if (!tu_shared("data/pte")) return;
    char path[600], *out = NULL;
    snprintf(path, sizeof path, "%s/qnn.pte", tu_tmpdir());
    int rc = tu_runf(&out, "export %s -o %s", pt_path("et_stories260k_hybrid_llama_qnn", ".pte"), path);
    ck_assert_msg(rc == 0 && tu_contains(out, "kept      the file as read: kv_forward, prefill_forward and 27 constant methods"),
                  "%s", out);
    free(out);
    ls_pte q;
    ls_error err;
    ck_assert(ls_pte_read_file(path, &q, &err) == 0);
    ck_assert_uint_eq(q.execution_plan.n, 29);
    /* the segments as they were: the same bytes after the program (the flatbuffer itself may
     * differ in size: another builder packs it) */
    ls_pte orig;
    ck_assert(ls_pte_read_file(pt_path("et_stories260k_hybrid_llama_qnn", ".pte"), &orig, &err) == 0);
    ck_assert_uint_eq(q.segment_data_size, orig.segment_data_size);
    ck_assert_uint_eq(q.segments.n, orig.segments.n);
    ck_assert_uint_eq(q.segments.v[q.segments.n - 1].offset, orig.segments.v[orig.segments.n - 1].offset);
    ls_pte_free(&orig);
    ls_pte_free(&q);
}
END_TEST

/* The indices a merge renumbers (a constant's data_buffer_idx, a delegate's segment) taken out
 * of a plan's decode: what stays must be as the file had it. */
static void strip_indices(cJSON *plan)
{
    cJSON *v;
    cJSON_ArrayForEach(v, cJSON_GetObjectItem(plan, "values"))
    {
        cJSON *t = cJSON_GetObjectItem(v, "val");
        cJSON *x = t ? cJSON_GetObjectItem(t, "extra_tensor_info") : NULL;
        cJSON *loc = x ? cJSON_GetObjectItem(x, "location") : NULL;
        if (t && !(loc && cJSON_IsString(loc) && !strcmp(loc->valuestring, "EXTERNAL")))
            cJSON_DeleteItemFromObject(t, "data_buffer_idx");
    }
    cJSON_ArrayForEach(v, cJSON_GetObjectItem(plan, "delegates"))
    {
        cJSON *pr = cJSON_GetObjectItem(v, "processed");
        if (pr) cJSON_DeleteItemFromObject(pr, "index");
    }
}

/* Every file's default method re-lowered (the default pipeline and --portable) and exported:
 * that method's plan is replaced, under its own name, and everything else is the file's: the
 * other methods field by field (their data by bytes: the merge renumbers constants and
 * segments), every named data key with its bytes, the EXTERNAL tensors still by key (with no
 * bytes in the .pte: the .ptd stays valid), segments at the file's alignment; the runtime's
 * load checks pass. */
START_TEST(relowered_method_replaces_its_plan_only)
{
    if (!tu_shared("data/pte")) return;
    const char *dir = tu_tmpdir();
    uint32_t exported = 0;
    for (int portable = 0; portable < 2; portable++)
        for (size_t k = 0; k < PT_NREAL; k++) {
            const char *name = pt_real_files[k];
            const char *src = pt_path(name, ".pte");
            ls_program *p;
            ls_error err;
            ck_assert_msg(ls_load(src, NULL, &p, &err) == 0, "%s: %s", name, err.msg);
            ls_pipeline_opts o;
            ls_pipeline_opts_init(&o);
            o.relower = true;
            o.no_backends = portable;
            ls_history h;
            ck_assert_msg(ls_pipeline_run(p, &o, &h, &err) == 0, "%s: %s", name, err.msg);
            char path[600];
            snprintf(path, sizeof path, "%s/%s_relowered%d.pte", dir, name, portable);
            ls_export_summary sum;
            int rc = ls_export(&h, (int)h.n - 1, path, true, &sum, &err);
            if (rc != 0) {
                /* a step lowerscope cannot run on this file, said so: operators it does not know
                 * have no out variant (exir's ToOutVarPass: Missing out variants; --ops gives
                 * them), a backend's preprocess needs a weight no .ptd gave */
                ck_assert_msg(strstr(err.msg, "Missing out variants") || (!portable && strstr(err.msg, "has no data")),
                              "%s%s: %s", name, portable ? " --portable" : "", err.msg);
                ls_history_free(&h);
                ls_pipeline_opts_free(&o);
                ls_program_unref(p);
                continue;
            }
            exported++;
            ck_assert_ptr_null(sum.as_read);
            ls_export_summary_free(&sum);
            ls_pte a, b;
            ck_assert(ls_pte_read_file(src, &a, &err) == 0);
            ck_assert_msg(ls_pte_read_file(path, &b, &err) == 0, "%s: %s", name, err.msg);
            const char *method = p->method;
            ck_assert_uint_eq(a.execution_plan.n, b.execution_plan.n);
            char want_path[600];
            snprintf(want_path, sizeof want_path, "data/pte/decoded/%s.json", name);
            size_t n;
            char *text = (char *)pt_load(tu_shared(want_path), &n);
            cJSON *want = pt_parse_flatc(text);
            free(text);
            cJSON *got = flatc_decode(path, dir);
            for (uint32_t m = 0; m < a.execution_plan.n; m++) {
                ck_assert_str_eq(a.execution_plan.v[m].name, b.execution_plan.v[m].name);
                if (!strcmp(a.execution_plan.v[m].name, method)) continue;
                if (got) {
                    cJSON *x = cJSON_GetArrayItem(cJSON_GetObjectItem(want, "execution_plan"), (int)m);
                    cJSON *y = cJSON_GetArrayItem(cJSON_GetObjectItem(got, "execution_plan"), (int)m);
                    strip_indices(x);
                    strip_indices(y);
                    char where[512];
                    ck_assert_msg(pt_json_equal(x, y, where, sizeof where), "%s: method %s differs at %s", name,
                                  a.execution_plan.v[m].name, where);
                }
                const ls_pte_plan *pa = &a.execution_plan.v[m], *pb = &b.execution_plan.v[m];
                for (uint32_t i = 0; i < pa->values.n; i++) {
                    if (pa->values.v[i].kind != LS_PTE_VAL_TENSOR) continue;
                    const uint8_t *x, *y;
                    size_t nx, ny;
                    int ra = ls_pte_tensor_bytes(&a, &pa->values.v[i].tensor, &x, &nx, NULL);
                    int rb = ls_pte_tensor_bytes(&b, &pb->values.v[i].tensor, &y, &ny, NULL);
                    ck_assert_int_eq(ra, rb);
                    if (ra == 1) ck_assert_msg(nx == ny && (!nx || !memcmp(x, y, nx)), "%s: value %u's data", name, i);
                }
                assert_same_blobs(&a, &b, m, name);
            }
            cJSON_Delete(got);
            cJSON_Delete(want);
            assert_named_data_kept(&a, &b, name); /* every named data key, with its bytes */
            /* the re-lowered method's external tensors: by key, when no backend took them */
            uint32_t ma = 0, mb = 0;
            while (strcmp(a.execution_plan.v[ma].name, method)) ma++;
            while (strcmp(b.execution_plan.v[mb].name, method)) mb++;
            for (uint32_t i = 0; portable && i < a.execution_plan.v[ma].values.n; i++) {
                const ls_pte_tensor *t = &a.execution_plan.v[ma].values.v[i].tensor;
                if (a.execution_plan.v[ma].values.v[i].kind != LS_PTE_VAL_TENSOR || !t->has_extra_tensor_info ||
                    t->extra_tensor_info.location != LS_PTE_TENSOR_EXTERNAL)
                    continue;
                bool found = false;
                for (uint32_t j = 0; j < b.execution_plan.v[mb].values.n && !found; j++) {
                    const ls_pte_tensor *u = &b.execution_plan.v[mb].values.v[j].tensor;
                    found = b.execution_plan.v[mb].values.v[j].kind == LS_PTE_VAL_TENSOR && u->has_extra_tensor_info &&
                            u->extra_tensor_info.location == LS_PTE_TENSOR_EXTERNAL &&
                            !strcmp(u->extra_tensor_info.fully_qualified_name, t->extra_tensor_info.fully_qualified_name) &&
                            u->has_allocation_info == t->has_allocation_info;
                }
                ck_assert_msg(found, "%s: external %s is no longer external (or lost its planning)", name,
                              t->extra_tensor_info.fully_qualified_name);
            }
            /* the file's segment alignment */
            uint64_t align = ls_pte_segment_alignment(&a);
            for (uint32_t i = 0; i < b.segments.n; i++)
                ck_assert_msg(b.segments.v[i].offset % align == 0, "%s: segment %u at %llu, the file aligns to %llu", name, i,
                              (unsigned long long)b.segments.v[i].offset, (unsigned long long)align);
            ls_pte_check_report r;
            ck_assert_msg(ls_pte_runtime_check(&b, &r) == 0, "%s: the runtime would refuse the re-export", name);
            ls_pte_check_report_free(&r);
            ls_pte_free(&a);
            ls_pte_free(&b);
            ls_history_free(&h);
            ls_pipeline_opts_free(&o);
            ls_program_unref(p);
        }
    ck_assert_uint_ge(exported, PT_NREAL * 2 - 4);
}
END_TEST

/* From the command line: the QNN llama's kv_forward re-lowered for portable kernels keeps its
 * name, prefill_forward and the 27 constant methods; a trainable program's weights stay in its
 * .ptd, planned, and the re-export runs with it as the original does. */
START_TEST(export_of_a_relowered_method_from_the_cli)
{
    if (!tu_shared("data/pte")) return;
    char path[600], *out = NULL;
    snprintf(path, sizeof path, "%s/qnn_relowered.pte", tu_tmpdir());
    int rc = tu_runf(&out, "export %s -o %s --relower", pt_path("et_stories260k_hybrid_llama_qnn", ".pte"), path);
    ck_assert_msg(rc == 0 && tu_contains(out, "kept      prefill_forward and 27 constant methods as the file holds them") &&
                      tu_contains(out, "plan      kv_forward: "),
                  "%s", out);
    free(out);
    /* the emit step's report names the method it emitted, as the plan does */
    rc = tu_runf(&out, "passes %s --relower --method prefill_forward", pt_path("et_stories260k_hybrid_llama_qnn", ".pte"));
    ck_assert_msg(rc == 0 && tu_contains(out, "prefill_forward: 24 values, 1 instruction") && !tu_contains(out, "· forward: 24 values"),
                  "%s", out);
    free(out);
    snprintf(path, sizeof path, "%s/xor_relowered.pte", tu_tmpdir());
    rc = tu_runf(&out, "export %s -o %s --relower --portable", pt_path("et_android_xor", ".pte"), path);
    ck_assert_msg(rc == 0 && tu_contains(out, "kept      3 constant methods as the file holds them") &&
                      tu_contains(out, "needs     data by key from a .ptd (4 tensors): et_android_xor.ptd"),
                  "%s", out);
    free(out);
    char *want = NULL;
    ck_assert_int_eq(tu_runf(&want, "run %s", pt_path("et_android_xor", ".pte")), 0);
    rc = tu_runf(&out, "run %s --data %s", path, pt_path("et_android_xor", ".ptd"));
    ck_assert_msg(rc == 0, "%s", out);
    /* the same outputs, and the weights still state (b_, planned), not constants */
    const char *w = strstr(want, "  out 9 b_net_linear2_bias float32[2]"), *g = strstr(out, "  out 9 b_net_linear2_bias float32[2]");
    ck_assert_msg(w && g, "%s\n---\n%s", want, out);
    ck_assert(!strncmp(w, g, strcspn(w, "\n") + 1 + strcspn(w + strcspn(w, "\n") + 1, "\n")));
    free(want);
    free(out);
}
END_TEST

Suite *pte_reexport_suite(void)
{
    Suite *s = suite_create("pte_reexport");
    TCase *tc = tcase_create("pte_reexport");
    tcase_set_timeout(tc, 120);
    tcase_add_test(tc, real_files_come_back_as_they_were);
    tcase_add_test(tc, export_command_keeps_every_method);
    tcase_add_test(tc, relowered_method_replaces_its_plan_only);
    tcase_add_test(tc, export_of_a_relowered_method_from_the_cli);
    suite_add_tcase(s, tc);
    return s;
}
