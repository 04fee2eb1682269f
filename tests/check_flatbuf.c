/* Tests of the FlatBuffers layer: builder output read back through the checked reader, vtable
 * reuse, alignment (force_align 16), and the reader refusing malformed buffers with a path. */
#include <check.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "flatbuf.h"

/* A small schema for these tests:
 *   table Item { id: int; name: string; }
 *   table Root { a: ubyte; b: long; c: double; name: string; ints: [int]; blob: [ubyte] (force_align 16);
 *                items: [Item]; big: [long]; flag: bool = true; } */
static uint8_t *build_sample(size_t *size)
{
    ls_fbb b;
    ls_fbb_init(&b);
    ls_fb_ref items[3];
    for (int i = 0; i < 3; i++) {
        char nm[16];
        snprintf(nm, sizeof nm, "item%d", i);
        ls_fb_ref s = ls_fbb_string(&b, nm, strlen(nm));
        ls_fbb_table_start(&b);
        ls_fbb_add_i32(&b, 0, i * 10, 0);
        ls_fbb_add_ref(&b, 1, s);
        items[i] = ls_fbb_table_end(&b);
    }
    ls_fb_ref items_vec = ls_fbb_vector_refs(&b, items, 3);
    int32_t ints[] = {1, -2, 3};
    ls_fb_ref ints_vec = ls_fbb_vector(&b, ints, 3, 4, 4);
    uint8_t blob[5] = {9, 8, 7, 6, 5};
    ls_fb_ref blob_vec = ls_fbb_vector(&b, blob, 5, 1, 16);
    int64_t big[] = {INT64_MIN, 0, INT64_MAX};
    ls_fb_ref big_vec = ls_fbb_vector(&b, big, 3, 8, 8);
    ls_fb_ref name = ls_fbb_string(&b, "root", 4);
    ls_fbb_table_start(&b);
    ls_fbb_add_u8(&b, 0, 200, 0);
    ls_fbb_add_i64(&b, 1, -5, 0);
    ls_fbb_add_f64(&b, 2, 2.5, 0.0);
    ls_fbb_add_ref(&b, 3, name);
    ls_fbb_add_ref(&b, 4, ints_vec);
    ls_fbb_add_ref(&b, 5, blob_vec);
    ls_fbb_add_ref(&b, 6, items_vec);
    ls_fbb_add_ref(&b, 7, big_vec);
    ls_fbb_add_bool(&b, 8, true, true); /* equal to its default: left out */
    ls_fb_ref root = ls_fbb_table_end(&b);
    return ls_fbb_finish(&b, root, "TST1", size);
}

START_TEST(builder_output_reads_back)
{
    size_t size;
    uint8_t *buf = build_sample(&size);
    ck_assert_ptr_nonnull(buf);
    ck_assert_int_eq(size % 8, 0);
    ck_assert_mem_eq(buf + 4, "TST1", 4);

    ls_error err = {0};
    ls_fb_reader r;
    ls_fb_table root, item;
    ck_assert_int_eq(ls_fb_reader_init(&r, buf, size, "sample", &err), 0);
    ck_assert_int_eq(ls_fb_root(&r, "TST1", &root), 0);
    uint8_t a;
    int64_t bv;
    double c;
    bool flag;
    ck_assert_int_eq(ls_fb_u8(&r, &root, 0, "a", 0, &a), 1);
    ck_assert_int_eq(a, 200);
    ck_assert_int_eq(ls_fb_i64(&r, &root, 1, "b", 0, &bv), 1);
    ck_assert_int_eq(bv, -5);
    ck_assert_int_eq(ls_fb_f64(&r, &root, 2, "c", 0, &c), 1);
    ck_assert(c == 2.5);
    ck_assert_int_eq(ls_fb_bool(&r, &root, 8, "flag", true, &flag), 0); /* absent: default */
    ck_assert(flag);
    ck_assert_int_eq(ls_fb_bool(&r, &root, 20, "beyond", false, &flag), 0); /* past the vtable */

    const char *s;
    uint32_t len;
    ck_assert_int_eq(ls_fb_string_field(&r, &root, 3, "name", &s, &len), 1);
    ck_assert_str_eq(s, "root");

    ls_fb_vec v;
    int32_t ints[3];
    ck_assert_int_eq(ls_fb_vector_field(&r, &root, 4, "ints", 4, &v), 1);
    ck_assert_int_eq(v.n, 3);
    ck_assert_int_eq(ls_fb_vec_copy(&r, &v, "ints", ints), 0);
    ck_assert_int_eq(ints[1], -2);

    ck_assert_int_eq(ls_fb_vector_field(&r, &root, 5, "blob", 1, &v), 1);
    ck_assert_int_eq(v.pos % 16, 0); /* force_align 16 honoured */
    ck_assert_int_eq(buf[v.pos + 4], 5);

    int64_t big[3];
    ck_assert_int_eq(ls_fb_vector_field(&r, &root, 7, "big", 8, &v), 1);
    ck_assert_int_eq(ls_fb_vec_copy(&r, &v, "big", big), 0);
    ck_assert(big[0] == INT64_MIN && big[2] == INT64_MAX);

    ck_assert_int_eq(ls_fb_vector_field(&r, &root, 6, "items", 4, &v), 1);
    ck_assert_int_eq(v.n, 3);
    uint32_t vtab0 = 0;
    for (uint32_t i = 0; i < 3; i++) {
        int32_t id;
        ck_assert_int_eq(ls_fb_vec_table(&r, &v, i, "items", &item), 0);
        ck_assert_int_eq(ls_fb_i32(&r, &item, 0, "id", 0, &id), i == 0 ? 0 : 1); /* 0 is the default */
        ck_assert_int_eq(id, (int)i * 10);
        ck_assert_int_eq(ls_fb_string_field(&r, &item, 1, "name", &s, &len), 1);
        ck_assert_int_eq(s[4], '0' + (int)i);
        if (i == 1) vtab0 = item.vtab;
        if (i == 2) ck_assert_uint_eq(item.vtab, vtab0); /* same shape: one vtable */
    }
    free(buf);
}
END_TEST

START_TEST(empty_and_union_shapes)
{
    ls_fbb b;
    ls_fbb_init(&b);
    ls_fbb_table_start(&b);
    ls_fb_ref empty = ls_fbb_table_end(&b);
    ls_fb_ref vec = ls_fbb_vector(&b, NULL, 0, 4, 4);
    ls_fbb_table_start(&b);
    ls_fbb_add_u8(&b, 0, 3, 0);
    ls_fbb_add_ref(&b, 1, empty);
    ls_fbb_add_ref(&b, 2, vec);
    ls_fb_ref root = ls_fbb_table_end(&b);
    size_t size;
    uint8_t *buf = ls_fbb_finish(&b, root, NULL, &size);

    ls_fb_reader r;
    ls_fb_table t, sub;
    ls_error err;
    ck_assert_int_eq(ls_fb_reader_init(&r, buf, size, "u", &err), 0);
    ck_assert_int_eq(ls_fb_root(&r, NULL, &t), 0);
    uint8_t type;
    ck_assert_int_eq(ls_fb_union(&r, &t, 0, "val", &type, &sub), 1);
    ck_assert_int_eq(type, 3);
    ck_assert_int_eq(sub.vt_size, 4);
    ls_fb_vec v;
    ck_assert_int_eq(ls_fb_vector_field(&r, &t, 2, "v", 4, &v), 1);
    ck_assert_int_eq(v.n, 0);
    free(buf);
}
END_TEST

/* Runs the sample's full read with reader r; returns -1 at the first refusal. */
static int walk_sample(ls_fb_reader *r)
{
    ls_fb_table root, item;
    ls_fb_vec v;
    const char *s;
    uint32_t len;
    if (ls_fb_root(r, "TST1", &root) < 0) return -1;
    if (ls_fb_string_field(r, &root, 3, "name", &s, &len) < 0) return -1;
    int rc = ls_fb_vector_field(r, &root, 6, "items", 4, &v);
    if (rc < 0) return -1;
    for (uint32_t i = 0; rc == 1 && i < v.n; i++) {
        if (ls_fb_push(r, "items[%u]", i) < 0 || ls_fb_vec_table(r, &v, i, NULL, &item) < 0) return -1;
        if (ls_fb_string_field(r, &item, 1, "name", &s, &len) < 0) return -1;
        ls_fb_pop(r);
    }
    int64_t big[3];
    rc = ls_fb_vector_field(r, &root, 7, "big", 8, &v);
    if (rc < 0) return -1;
    if (rc == 1 && v.n == 3 && ls_fb_vec_copy(r, &v, "big", big) < 0) return -1;
    return 0;
}

START_TEST(reader_refuses_malformed_buffers)
{
    size_t size;
    uint8_t *good = build_sample(&size);
    uint8_t *buf = malloc(size);
    ls_error err;
    ls_fb_reader r;

    /* every truncation is refused, none crashes */
    for (size_t n = 0; n < size; n++) {
        memcpy(buf, good, size);
        ls_fb_reader_init(&r, buf, n, "cut", &err);
        err.msg[0] = 0;
        if (walk_sample(&r) < 0) ck_assert_msg(strncmp(err.msg, "cut: ", 5) == 0, "message: %s", err.msg);
    }
    /* wrong identifier */
    ls_fb_reader_init(&r, good, size, "id", &err);
    ls_fb_table root;
    ck_assert_int_eq(ls_fb_root(&r, "XXXX", &root), -1);
    ck_assert_msg(strstr(err.msg, "identifier") != NULL, "%s", err.msg);

    /* a vtable offset of 0: the table is its own vtable */
    memcpy(buf, good, size);
    uint32_t rootpos = ls_fb_le32(buf);
    memset(buf + rootpos, 0, 4);
    ls_fb_reader_init(&r, buf, size, "self", &err);
    ck_assert_int_eq(ls_fb_root(&r, "TST1", &root), -1);
    ck_assert_msg(strstr(err.msg, "vtable") != NULL, "%s", err.msg);

    /* every 32-bit word set to hostile values: refused or read, never out of bounds */
    static const uint32_t hostile[] = {0xffffffffu, 0x7ffffff0u, 0x40000000u, 1, 3};
    for (size_t pos = 0; pos + 4 <= size; pos += 2)
        for (size_t k = 0; k < sizeof hostile / sizeof hostile[0]; k++) {
            memcpy(buf, good, size);
            for (int i = 0; i < 4; i++) buf[pos + i] = (uint8_t)(hostile[k] >> (8 * i));
            ls_fb_reader_init(&r, buf, size, "hostile", &err);
            if (walk_sample(&r) < 0) ck_assert_msg(strncmp(err.msg, "hostile: ", 9) == 0, "%s", err.msg);
        }
    free(buf);
    free(good);
}
END_TEST

START_TEST(reader_names_the_path)
{
    size_t size;
    uint8_t *buf = build_sample(&size);
    ls_error err;
    ls_fb_reader r;
    ls_fb_table root, item;
    ls_fb_vec v;
    ls_fb_reader_init(&r, buf, size, "f.bin", &err);
    ck_assert_int_eq(ls_fb_root(&r, "TST1", &root), 0);
    ck_assert_int_eq(ls_fb_vector_field(&r, &root, 6, "items", 4, &v), 1);
    /* break item 2's name: its string length now runs past the end */
    ck_assert_int_eq(ls_fb_vec_table(&r, &v, 2, "items", &item), 0);
    uint32_t fo = ls_fb_le16(buf + item.vtab + 6);
    uint32_t spos = item.pos + fo + ls_fb_le32(buf + item.pos + fo);
    memset(buf + spos, 0xff, 4);
    ls_fb_push(&r, "items[2]");
    const char *s;
    uint32_t len;
    ck_assert_int_eq(ls_fb_string_field(&r, &item, 1, "name", &s, &len), -1);
    ck_assert_msg(strncmp(err.msg, "f.bin: items[2].name: string of", 31) == 0, "%s", err.msg);
    ck_assert_msg(strstr(err.msg, "(byte ") != NULL, "%s", err.msg);
    free(buf);
}
END_TEST

START_TEST(depth_and_table_caps)
{
    size_t size;
    uint8_t *buf = build_sample(&size);
    ls_error err;
    ls_fb_reader r;
    ls_fb_reader_init(&r, buf, size, "deep", &err);
    int rc = 0;
    for (int i = 0; i < LS_FB_DEPTH_MAX + 1 && rc == 0; i++) rc = ls_fb_push(&r, "[%d]", i);
    ck_assert_int_eq(rc, -1);
    ck_assert_msg(strstr(err.msg, "nesting deeper") != NULL, "%s", err.msg);

    /* opening the same table over and over stops at the cap */
    ls_fb_reader_init(&r, buf, size, "loop", &err);
    ls_fb_table t;
    rc = 0;
    for (uint64_t i = 0; i < r.max_tables + 2 && rc == 0; i++) rc = ls_fb_root(&r, "TST1", &t);
    ck_assert_int_eq(rc, -1);
    ck_assert_msg(strstr(err.msg, "shared or cyclic") != NULL, "%s", err.msg);
    free(buf);
}
END_TEST

Suite *flatbuf_suite(void)
{
    Suite *s = suite_create("flatbuf");
    TCase *tc = tcase_create("core");
    tcase_add_test(tc, builder_output_reads_back);
    tcase_add_test(tc, empty_and_union_shapes);
    tcase_add_test(tc, reader_refuses_malformed_buffers);
    tcase_add_test(tc, reader_names_the_path);
    tcase_add_test(tc, depth_and_table_caps);
    suite_add_tcase(s, tc);
    return s;
}
