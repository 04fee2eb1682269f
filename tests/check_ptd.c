/* Tests of the .ptd (FlatTensor, FT01) reader: the real files in the current layout match
 * flatc's decodes, a program's EXTERNAL tensors resolve against them, and the February 2025
 * layout (same identifier, other fields) is recognised and read in both of its physical forms. */
#include <check.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "flatbuf.h"
#include "pte.h"
#include "pte_test.h"

static bool shared_absent(const char *fn)
{
    (void)fn;
    return !tu_shared("data/pte");
}

static const char *const real_ptd[] = {"et_android_xor", "rs_data_map__default_external_constant"};

START_TEST(real_ptd_files_match_flatc_decodes)
{
    if (shared_absent(__func__)) return;
    for (size_t i = 0; i < 2; i++) {
        ls_ptd d;
        ls_error err;
        const char *path = pt_path(real_ptd[i], ".ptd");
        ck_assert_msg(ls_ptd_read_file(path, &d, &err) == 0, "%s", err.msg);
        ck_assert(!d.feb2025);
        ck_assert(d.has_header);
        ls_buf b = {0};
        ls_ptd_to_json(&d, &b);
        cJSON *ours = cJSON_Parse(b.s);
        char rel[256];
        snprintf(rel, sizeof rel, "data/pte/decoded/%s.ptd.json", real_ptd[i]);
        size_t n;
        char *text = (char *)pt_load(tu_shared(rel), &n);
        cJSON *want = pt_parse_flatc(text);
        char where[600] = "";
        ck_assert_msg(pt_json_equal(ours, want, where, sizeof where), "%s: %s", real_ptd[i], where);
        cJSON_Delete(ours);
        cJSON_Delete(want);
        free(text);
        ls_buf_free(&b);
        ls_ptd_free(&d);
    }
}
END_TEST

START_TEST(external_tensors_resolve)
{
    if (shared_absent(__func__)) return;
    ls_pte p;
    ls_ptd d;
    ls_error err;
    uint32_t count = 0;

    ck_assert(ls_pte_read_file(pt_path("rs_data_map_model", ".pte"), &p, &err) == 0);
    ck_assert(ls_ptd_read_file(pt_path("rs_data_map__default_external_constant", ".ptd"), &d, &err) == 0);
    ck_assert_msg(ls_pte_resolve_external(&p, &d, &count, &err) == 0, "%s", err.msg);
    ck_assert_uint_eq(count, 2);
    /* "a" is a 2x2 float: 16 bytes, the whole of its segment */
    const ls_ptd_entry *a = ls_ptd_find(&d, "a");
    ck_assert_ptr_nonnull(a);
    for (uint32_t i = 0; i < p.execution_plan.v[0].values.n; i++) {
        ls_pte_value *v = &p.execution_plan.v[0].values.v[i];
        if (v->kind != LS_PTE_VAL_TENSOR || !v->tensor.has_extra_tensor_info) continue;
        const uint8_t *data;
        size_t size;
        ck_assert_int_eq(ls_ptd_tensor_bytes(&d, &v->tensor, &data, &size, &err), 0);
        ck_assert_uint_eq(size, 16);
        const ls_ptd_entry *e = ls_ptd_find(&d, v->tensor.extra_tensor_info.fully_qualified_name);
        ck_assert_ptr_eq(data, d.segment_data[e->segment_index].v);
        /* the program asking for another shape is refused with both layouts named */
        v->tensor.sizes.v[0] = 3;
        ck_assert_int_eq(ls_ptd_tensor_bytes(&d, &v->tensor, &data, &size, &err), -1);
        ck_assert_msg(strstr(err.msg, "the program expects FLOAT [3, 2], the data file has FLOAT [2, 2]"), "%s",
                      err.msg);
        ck_assert_int_eq(ls_pte_resolve_external(&p, &d, NULL, &err), -1);
        v->tensor.sizes.v[0] = 2;
        /* an unknown key */
        char *fqn = v->tensor.extra_tensor_info.fully_qualified_name;
        v->tensor.extra_tensor_info.fully_qualified_name = "zzz";
        ck_assert_int_eq(ls_ptd_tensor_bytes(&d, &v->tensor, &data, &size, &err), -1);
        ck_assert_msg(strstr(err.msg, "no entry \"zzz\""), "%s", err.msg);
        v->tensor.extra_tensor_info.fully_qualified_name = fqn;
    }
    /* a constant that lives elsewhere says so */
    const uint8_t *data;
    size_t size;
    ls_pte_tensor *t = NULL;
    for (uint32_t i = 0; i < p.execution_plan.v[0].values.n && !t; i++) {
        ls_pte_value *v = &p.execution_plan.v[0].values.v[i];
        if (v->kind == LS_PTE_VAL_TENSOR && v->tensor.has_extra_tensor_info) t = &v->tensor;
    }
    ck_assert_ptr_nonnull(t);
    ck_assert_int_eq(ls_pte_tensor_bytes(&p, t, &data, &size, &err), -1);
    ck_assert_msg(strstr(err.msg, "EXTERNAL"), "%s", err.msg);
    ls_pte_free(&p);
    ls_ptd_free(&d);

    /* training weights of the xor model: mutable tensors kept in the .ptd */
    ck_assert(ls_pte_read_file(pt_path("et_android_xor", ".pte"), &p, &err) == 0);
    ck_assert(ls_ptd_read_file(pt_path("et_android_xor", ".ptd"), &d, &err) == 0);
    ck_assert_msg(ls_pte_resolve_external(&p, &d, &count, &err) == 0, "%s", err.msg);
    ck_assert_uint_ge(count, 4);
    ck_assert_ptr_nonnull(ls_ptd_find(&d, "net.linear2.bias"));
    ls_pte_free(&p);
    ls_ptd_free(&d);
}
END_TEST

/* ---------------------------------------------------------------- the Feb-2025 layout */

static ls_fb_ref tensor_metadata(ls_fbb *b, const char *fqn, int32_t n, uint64_t offset)
{
    ls_fb_ref name = ls_fbb_string(b, fqn, strlen(fqn));
    ls_fb_ref sizes = ls_fbb_vector(b, &n, 1, 4, 4);
    uint8_t zero = 0;
    ls_fb_ref dim_order = ls_fbb_vector(b, &zero, 1, 1, 1);
    ls_fbb_table_start(b);
    ls_fbb_add_u64(b, 5, offset, 0);
    ls_fbb_add_ref(b, 0, name);
    ls_fbb_add_ref(b, 2, sizes);
    ls_fbb_add_ref(b, 3, dim_order);
    ls_fbb_add_u32(b, 4, 0, 0);
    ls_fbb_add_i8(b, 1, LS_ET_FLOAT, 0);
    return ls_fbb_table_end(b);
}

/* FlatTensor{version 0, tensor_alignment 16, tensors [w: float[2] at 0, b: float[1] at 16],
 * segments [{0, 32}]}: with FH01 at byte 0 and the flatbuffer after it (header_first), or with
 * FH01 inside the flatbuffer at byte 8 as current files have it. */
static uint8_t *build_feb2025(bool header_first, size_t *size)
{
    ls_fbb b;
    ls_fbb_init(&b);
    ls_fb_ref t[2] = {tensor_metadata(&b, "w", 2, 0), tensor_metadata(&b, "b", 1, 16)};
    ls_fb_ref tensors = ls_fbb_vector_refs(&b, t, 2);
    ls_fbb_table_start(&b);
    ls_fbb_add_u64(&b, 1, 32, 0);
    ls_fb_ref seg = ls_fbb_table_end(&b);
    ls_fb_ref segs = ls_fbb_vector_refs(&b, &seg, 1);
    ls_fbb_table_start(&b);
    ls_fbb_add_u32(&b, 1, 16, 0);
    ls_fbb_add_ref(&b, 2, tensors);
    ls_fbb_add_ref(&b, 3, segs);
    ls_fb_ref root = ls_fbb_table_end(&b);
    size_t fb_size;
    uint8_t *fb = ls_fbb_finish(&b, root, "FT01", &fb_size);

    float data[8] = {1.0f, 2.0f, 0, 0, 3.0f, 0, 0, 0};
    size_t fb_off = header_first ? 48 : 0;
    size_t fb_end = header_first ? 48 + fb_size : fb_size + 40;
    size_t base = (fb_end + 127) / 128 * 128;
    *size = base + 32;
    uint8_t *out = ls_calloc(1, *size);
    uint8_t *h = header_first ? out : out + 8;
    memcpy(h, "FH01", 4);
    ls_le_put(h + 4, 40, 4);
    ls_le_put(h + 8, header_first ? 48 : 48, 8);
    ls_le_put(h + 16, header_first ? fb_size : fb_size - 8, 8);
    ls_le_put(h + 24, base, 8);
    ls_le_put(h + 32, 32, 8);
    if (header_first) {
        memcpy(out + fb_off, fb, fb_size);
    } else {
        ls_le_put(out, ls_fb_le32(fb) + 40, 4);
        memcpy(out + 4, fb + 4, 4);
        memcpy(out + 48, fb + 8, fb_size - 8);
    }
    memcpy(out + base, data, 32);
    free(fb);
    return out;
}

START_TEST(feb2025_layout_is_read)
{
    for (int form = 0; form < 2; form++) {
        size_t size;
        uint8_t *bytes = build_feb2025(form == 0, &size);
        ls_ptd d;
        ls_error err;
        ck_assert_msg(ls_ptd_read_bytes(bytes, size, "old.ptd", &d, &err) == 0, "form %d: %s", form, err.msg);
        ck_assert(d.feb2025);
        ck_assert_uint_eq(d.tensor_alignment, 16);
        ck_assert_uint_eq(d.named_data.n, 2);
        const ls_ptd_entry *e = ls_ptd_find(&d, "b");
        ck_assert_ptr_nonnull(e);
        ck_assert_uint_eq(e->offset, 16);
        const uint8_t *data;
        size_t n;
        ck_assert_int_eq(ls_ptd_entry_bytes(&d, e, &data, &n, &err), 0);
        ck_assert_uint_eq(n, 4);
        float f;
        memcpy(&f, data, 4);
        ck_assert(f == 3.0f);

        /* a program's EXTERNAL tensor "w" (float[2]) resolves against it */
        ls_pte_tensor t = {0};
        int32_t two = 2;
        t.scalar_type = LS_ET_FLOAT;
        t.sizes = (ls_pte_i32s){&two, 1, true};
        t.has_extra_tensor_info = true;
        t.extra_tensor_info.location = LS_PTE_TENSOR_EXTERNAL;
        t.extra_tensor_info.fully_qualified_name = "w";
        ck_assert_int_eq(ls_ptd_tensor_bytes(&d, &t, &data, &n, &err), 0);
        ck_assert_uint_eq(n, 8);
        memcpy(&f, data + 4, 4);
        ck_assert(f == 2.0f);

        ls_buf b = {0};
        ls_ptd_to_json(&d, &b);
        cJSON *j = cJSON_Parse(b.s);
        ck_assert_ptr_nonnull(cJSON_GetObjectItem(j, "tensors"));
        ck_assert_int_eq(cJSON_GetObjectItem(j, "tensor_alignment")->valueint, 16);
        cJSON_Delete(j);
        ls_buf_free(&b);
        ls_ptd_free(&d);

        /* every truncation is refused cleanly */
        for (size_t cut = 0; cut < size; cut++) {
            if (ls_ptd_read_bytes(bytes, cut, "old.ptd", &d, &err) == 0) ls_ptd_free(&d);
            else ck_assert_msg(strncmp(err.msg, "old.ptd: ", 9) == 0, "%s", err.msg);
        }
        free(bytes);
    }
}
END_TEST

START_TEST(damaged_ptd_files_are_refused)
{
    ls_ptd d;
    ls_error err;
    ck_assert_int_eq(ls_ptd_read_bytes((const uint8_t *)"hello, world", 12, "x.ptd", &d, &err), -1);
    ck_assert_msg(strstr(err.msg, "x.ptd: not an ExecuTorch data file"), "%s", err.msg);
    if (shared_absent(__func__)) return;
    for (size_t i = 0; i < 2; i++) {
        size_t size;
        uint8_t *good = pt_load(pt_path(real_ptd[i], ".ptd"), &size);
        uint8_t *buf = malloc(size);
        for (size_t cut = 0; cut < size; cut++) {
            if (ls_ptd_read_bytes(good, cut, "cut.ptd", &d, &err) == 0) ls_ptd_free(&d);
            else ck_assert_msg(strncmp(err.msg, "cut.ptd: ", 9) == 0, "%s", err.msg);
        }
        static const uint32_t hostile[] = {0xffffffffu, 0x7ffffff0u, 0x80000000u, 0};
        for (size_t pos = 0; pos + 4 <= size; pos += 4)
            for (size_t k = 0; k < 4; k++) {
                memcpy(buf, good, size);
                ls_le_put(buf + pos, hostile[k], 4);
                if (ls_ptd_read_bytes(buf, size, "bad.ptd", &d, &err) == 0) ls_ptd_free(&d);
                else ck_assert_msg(strncmp(err.msg, "bad.ptd: ", 9) == 0, "%s", err.msg);
            }
        free(buf);
        free(good);
    }
}
END_TEST

Suite *ptd_suite(void)
{
    Suite *s = suite_create("ptd");
    TCase *tc = tcase_create("core");
    tcase_set_timeout(tc, 30);
    tcase_add_test(tc, real_ptd_files_match_flatc_decodes);
    tcase_add_test(tc, external_tensors_resolve);
    tcase_add_test(tc, feb2025_layout_is_read);
    tcase_add_test(tc, damaged_ptd_files_are_refused);
    suite_add_tcase(s, tc);
    return s;
}
