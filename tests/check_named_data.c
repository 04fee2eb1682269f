/* Named data (include/named_data.h): a .pte's named_data table is read into the program with
 * each key's bytes (checked against flatc's decode of the real file and the file's segments),
 * travels with program copies, is written back one segment per key, and keeps a key to one
 * set of bytes as exir's NamedDataStore does. */
#include <check.h>
#include <stdlib.h>
#include <string.h>

#include "export.h"
#include "named_data.h"
#include "progfixtures.h"
#include "pte.h"
#include "pte_test.h"
#include "reader.h"
#include "testutil.h"

/* The keys and sizes flatc's decode gives for a real file's named_data. */
static uint32_t decoded_keys(const char *name, const char *keys[8], uint64_t sizes[8], cJSON **keep)
{
    size_t n;
    char rel[256];
    snprintf(rel, sizeof rel, "data/pte/decoded/%s.json", name);
    uint8_t *raw = pt_load(tu_shared(rel), &n);
    ck_assert_ptr_nonnull(raw);
    char *s = ls_strndup((const char *)raw, n);
    free(raw);
    cJSON *j = pt_parse_flatc(s);
    free(s);
    ck_assert_ptr_nonnull(j);
    cJSON *nd = cJSON_GetObjectItem(j, "named_data"), *segs = cJSON_GetObjectItem(j, "segments");
    uint32_t k = 0;
    cJSON *e;
    cJSON_ArrayForEach(e, nd)
    {
        keys[k] = cJSON_GetObjectItem(e, "key")->valuestring;
        int seg = cJSON_GetObjectItem(e, "segment_index")->valueint;
        sizes[k] = (uint64_t)cJSON_GetObjectItem(cJSON_GetArrayItem(segs, seg), "size")->valuedouble;
        k++;
    }
    *keep = j;
    return k;
}

START_TEST(named_data_read_from_real_files)
{
    if (!tu_shared("data/pte")) return;
    const char *files[] = {"cc_quantized", "djl_conv"};
    for (int f = 0; f < 2; f++) {
        const char *keys[8];
        uint64_t sizes[8];
        cJSON *j;
        uint32_t n = decoded_keys(files[f], keys, sizes, &j);
        ck_assert_uint_eq(n, 2);
        ls_program *p = pf_load(pt_path(files[f], ".pte"));
        ck_assert_uint_eq(ls_named_data_count(p->named_data), n);
        for (uint32_t k = 0; k < n; k++) {
            const ls_blob *b = ls_named_data_get(p->named_data, keys[k]);
            ck_assert_msg(b != NULL, "%s: key %s", files[f], keys[k]);
            ck_assert_uint_eq(b->size, sizes[k]);
        }
        ck_assert_ptr_null(ls_named_data_get(p->named_data, "no such key"));
        /* a copy shares the table; making it its own leaves the original alone */
        ls_program *q = ls_program_copy(p);
        ck_assert_ptr_eq(q->named_data, p->named_data);
        ls_named_data *mine = ls_program_named_data_mut(q);
        ck_assert_ptr_ne(mine, p->named_data);
        ls_blob *extra = ls_blob_new(4);
        ls_error err;
        ck_assert_int_eq(ls_named_data_put(mine, "extra", extra, 16, &err), 0);
        ls_blob_unref(extra);
        ck_assert_uint_eq(ls_named_data_count(q->named_data), n + 1);
        ck_assert_uint_eq(ls_named_data_count(p->named_data), n);
        ls_program_unref(q);
        ls_program_unref(p);
        cJSON_Delete(j);
    }
    /* files without named_data have none */
    ls_program *p = pf_load(pt_path("cc_add", ".pte"));
    ck_assert_uint_eq(ls_named_data_count(p->named_data), 0);
    ls_program_unref(p);
}
END_TEST

START_TEST(named_data_one_key_one_content)
{
    ls_named_data *nd = ls_named_data_new();
    ls_blob *a = ls_blob_new(8), *b = ls_blob_new(8), *c = ls_blob_new(8);
    c->data[0] = 1;
    ls_error err;
    ck_assert_int_eq(ls_named_data_put(nd, "w", a, 0, &err), 0);
    ck_assert_int_eq(ls_named_data_put(nd, "w", b, 0, &err), 0); /* same bytes: kept once */
    ck_assert_uint_eq(ls_named_data_count(nd), 1);
    ck_assert_int_eq(ls_named_data_put(nd, "w", c, 0, &err), -1);
    ck_assert_msg(tu_contains(err.msg, "'w' is already used by other data"), "%s", err.msg);
    ck_assert_ptr_eq(ls_named_data_get(nd, "w"), a);
    ls_blob_unref(a);
    ls_blob_unref(b);
    ls_blob_unref(c);
    ls_named_data_unref(nd);
}
END_TEST

/* A loaded file exported again keeps its named data: same keys, each in a segment of its own
 * holding the same bytes (read back through the .pte reader, not through our program). */
START_TEST(named_data_written_back)
{
    if (!tu_shared("data/pte")) return;
    ls_program *p = pf_load(pt_path("cc_quantized", ".pte"));
    char out[512];
    snprintf(out, sizeof out, "%s/cc_quantized.pte", tu_tmpdir());
    char *text = NULL;
    ck_assert_int_eq(tu_runf(&text, "export %s -o %s --step 0", pt_path("cc_quantized", ".pte"), out), 0);
    free(text);
    ls_pte pte;
    ls_error err;
    ck_assert_msg(ls_pte_read_file(out, &pte, &err) == 0, "%s", err.msg);
    ck_assert_uint_eq(pte.named_data.n, ls_named_data_count(p->named_data));
    for (uint32_t i = 0; i < pte.named_data.n; i++) {
        const ls_blob *want = ls_named_data_get(p->named_data, pte.named_data.v[i].key);
        ck_assert_ptr_nonnull(want);
        const ls_pte_blob *seg = &pte.segment_data[pte.named_data.v[i].segment_index];
        ck_assert_uint_eq(seg->n, want->size);
        ck_assert(memcmp(seg->v, want->data, want->size) == 0);
    }
    ls_pte_free(&pte);
    ls_program_unref(p);
}
END_TEST

Suite *named_data_suite(void)
{
    Suite *s = suite_create("named_data");
    TCase *tc = tcase_create("core");
    tcase_set_timeout(tc, 60);
    tcase_add_test(tc, named_data_read_from_real_files);
    tcase_add_test(tc, named_data_one_key_one_content);
    tcase_add_test(tc, named_data_written_back);
    suite_add_tcase(s, tc);
    return s;
}
