/* Damaged and hostile .pte files: truncations, seeded random byte flips, offsets and lengths
 * pointed past the end, a table that is its own vtable, shared offsets that would make the walk
 * explode, bad headers and bad cross references. Each must be refused with a message that starts
 * with the file name, or read successfully; never a crash, a hang or a leak (ASan runs these). */
#include <check.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "../src/formats/pte/pte_internal.h"
#include "flatbuf.h"
#include "pte.h"
#include "pte_test.h"

/* Reads; a successful read is also dumped and written, to walk the whole model. Returns 0 or -1. */
static int try_read(const uint8_t *data, size_t size, const char *name, ls_error *err)
{
    ls_pte p;
    err->msg[0] = 0;
    if (ls_pte_read_bytes(data, size, name, &p, err) < 0) {
        ck_assert_msg(strncmp(err->msg, name, strlen(name)) == 0 && err->msg[strlen(name)] == ':',
                      "message does not start with the file name: %s", err->msg);
        return -1;
    }
    ls_buf b = {0};
    ls_pte_to_json(&p, &b);
    ls_buf_free(&b);
    uint8_t *out;
    size_t n;
    if (ls_pte_write(&p, &out, &n, err) == 0) free(out);
    ls_pte_free(&p);
    return 0;
}

static uint8_t *load(const char *name, size_t *size)
{
    const char *path = pt_path(name, ".pte");
    return path ? pt_load(path, size) : NULL;
}

#define LOAD_OR_SKIP(var, name, size)                                                   \
    uint8_t *var = load(name, &size);                                                   \
    if (!var) return; /* ../shared absent: tu_shared recorded the skip */

static const char *const small_files[] = {"et_apple_add", "cc_add", "et_ModuleLinear-no-constant-segment",
                                          "rs_data_map_model", "et_arduino_AddModel", "cc_const_methods"};
#define NSMALL (sizeof small_files / sizeof small_files[0])

START_TEST(every_truncation_is_refused)
{
    ls_error err;
    for (size_t f = 0; f < NSMALL; f++) {
        size_t size;
        LOAD_OR_SKIP(data, small_files[f], size);
        for (size_t cut = 0; cut < size; cut++) {
            /* a copy of exactly `cut` bytes, so ASan sees any read past the end */
            uint8_t *copy = ls_malloc(cut);
            memcpy(copy, data, cut);
            ck_assert_int_eq(try_read(copy, cut, "cut.pte", &err), -1);
            free(copy);
        }
        free(data);
    }
    /* bigger files: a dense sample, and every length around the program/segment boundary */
    const char *big[] = {"et_arduino_KeywordSpotting", "et_stories260k_hybrid_llama_qnn"};
    for (size_t f = 0; f < 2; f++) {
        size_t size;
        LOAD_OR_SKIP(data, big[f], size);
        size_t step = size / 1500 + 1;
        for (size_t cut = 0; cut < size; cut += (cut < 512 ? 1 : step)) {
            uint8_t *copy = ls_malloc(cut);
            memcpy(copy, data, cut);
            ck_assert_int_eq(try_read(copy, cut, "cut.pte", &err), -1);
            free(copy);
        }
        ck_assert_int_eq(try_read(data, size - 1, "cut.pte", &err), -1);
        ck_assert_msg(strstr(err.msg, "runs past the end"), "%s", err.msg);
        free(data);
    }
}
END_TEST

static uint64_t rng_state = 0x9e3779b97f4a7c15ull;
static uint64_t rng(void)
{
    rng_state ^= rng_state << 13;
    rng_state ^= rng_state >> 7;
    rng_state ^= rng_state << 17;
    return rng_state;
}

START_TEST(random_byte_flips)
{
    ls_error err;
    rng_state = 0x9e3779b97f4a7c15ull; /* seeded: failures reproduce */
    const char *files[] = {"et_apple_add", "cc_quantized", "et_android_xor", "djl_openvino_tiny"};
    int refused = 0, read = 0;
    for (size_t f = 0; f < 4; f++) {
        size_t size;
        LOAD_OR_SKIP(data, files[f], size);
        uint8_t *buf = ls_malloc(size);
        for (int iter = 0; iter < 400; iter++) {
            memcpy(buf, data, size);
            int flips = 1 + (int)(rng() % 6);
            for (int k = 0; k < flips; k++) {
                /* mostly inside the flatbuffer, where the structure is */
                size_t limit = (iter & 3) ? (size < 4096 ? size : 4096) : size;
                buf[rng() % limit] ^= (uint8_t)(1u << (rng() % 8));
            }
            if (try_read(buf, size, "flip.pte", &err) < 0) refused++;
            else read++;
        }
        free(buf);
        free(data);
    }
    ck_assert_int_gt(refused, 0);
    ck_assert_int_gt(read, 0); /* flips in strings or data bytes still read */
}
END_TEST

/* Sets every 4-byte word of the flatbuffer in turn to hostile values: offsets past the end,
 * huge vector and string lengths, offsets to odd places. */
START_TEST(hostile_words_everywhere)
{
    ls_error err;
    static const uint32_t hostile[] = {0xffffffffu, 0x7ffffff0u, 0x80000000u, 0x3fffffffu, 2};
    int past_end = 0;
    for (size_t f = 0; f < 4; f++) {
        size_t size;
        LOAD_OR_SKIP(data, small_files[f], size);
        uint8_t *buf = ls_malloc(size);
        size_t end = size < 4096 ? size : 4096;
        for (size_t pos = 0; pos + 4 <= end; pos += 4)
            for (size_t k = 0; k < sizeof hostile / sizeof hostile[0]; k++) {
                memcpy(buf, data, size);
                for (int i = 0; i < 4; i++) buf[pos + i] = (uint8_t)(hostile[k] >> (8 * i));
                if (try_read(buf, size, "word.pte", &err) < 0 && strstr(err.msg, "past the end")) past_end++;
            }
        free(buf);
        free(data);
    }
    ck_assert_int_gt(past_end, 0);
}
END_TEST

START_TEST(self_vtable_and_bad_headers)
{
    ls_error err;
    size_t size;
    LOAD_OR_SKIP(data, "cc_add", size);
    uint8_t *buf = ls_malloc(size);

    /* the root table's vtable offset is 0: the table would be its own vtable */
    memcpy(buf, data, size);
    memset(buf + ls_fb_le32(buf), 0, 4);
    ck_assert_int_eq(try_read(buf, size, "self.pte", &err), -1);
    ck_assert_msg(strstr(err.msg, "vtable"), "%s", err.msg);

    /* eh00 fields: program_size past the end, segment base inside the program, data past the end */
    struct {
        size_t at;
        uint64_t value;
        const char *says;
    } cases[] = {
        {12, 8, "length 8"},
        {16, (uint64_t)size + 1, "program_size"},
        {16, 4, "program_size"},
        {24, 100, "segment_base_offset"},
        {24, UINT64_MAX - 10, "segment_base_offset"},
        {32, UINT64_MAX - 100, "segment data"},
        {32, 1u << 30, "segment data"},
    };
    for (size_t i = 0; i < sizeof cases / sizeof cases[0]; i++) {
        memcpy(buf, data, size);
        int n = cases[i].at == 12 ? 4 : 8;
        for (int k = 0; k < n; k++) buf[cases[i].at + k] = (uint8_t)(cases[i].value >> (8 * k));
        ck_assert_int_eq(try_read(buf, size, "hdr.pte", &err), -1);
        ck_assert_msg(strstr(err.msg, cases[i].says), "case %zu: %s", i, err.msg);
    }
    free(buf);
    free(data);
}
END_TEST

/* A program whose plans all share one plan whose values all share one value: legal offsets,
 * but a walk that follows them all does n^2 work. The table cap refuses it quickly. */
START_TEST(shared_offsets_cannot_explode)
{
    enum { N = 3000 };
    ls_fbb b;
    ls_fbb_init(&b);
    ls_fbb_table_start(&b);
    ls_fbb_add_i64(&b, 0, 7, 0);
    ls_fb_ref ival = ls_fbb_table_end(&b);
    ls_fbb_table_start(&b);
    ls_fbb_add_ref(&b, 1, ival);
    ls_fbb_add_u8(&b, 0, LS_PTE_VAL_INT, 0);
    ls_fb_ref value = ls_fbb_table_end(&b);
    ls_fb_ref *refs = ls_malloc(N * sizeof *refs);
    for (int i = 0; i < N; i++) refs[i] = value;
    ls_fb_ref values = ls_fbb_vector_refs(&b, refs, N);
    ls_fbb_table_start(&b);
    ls_fbb_add_ref(&b, 2, values);
    ls_fb_ref plan = ls_fbb_table_end(&b);
    for (int i = 0; i < N; i++) refs[i] = plan;
    ls_fb_ref plans = ls_fbb_vector_refs(&b, refs, N);
    ls_fbb_table_start(&b);
    ls_fbb_add_ref(&b, 1, plans);
    ls_fb_ref root = ls_fbb_table_end(&b);
    size_t size;
    uint8_t *bytes = ls_fbb_finish(&b, root, "ET12", &size);
    free(refs);

    ls_error err;
    ck_assert_int_eq(try_read(bytes, size, "shared.pte", &err), -1);
    ck_assert_msg(strstr(err.msg, "shared or cyclic"), "%s", err.msg);
    free(bytes);

    /* uoffsets only point forward, so a true cycle needs a signed offset: an execution_plan
     * element of 0 points at itself, a "table" whose vtable offset 0 makes it its own vtable */
    LOAD_OR_SKIP(real, "et_apple_add", size);
    ls_fb_reader r;
    ls_fb_table t;
    ls_fb_vec v;
    ck_assert_int_eq(ls_fb_reader_init(&r, real, size, "x", &err), 0);
    ck_assert_int_eq(ls_fb_root(&r, "ET12", &t), 0);
    ck_assert_int_eq(ls_fb_vector_field(&r, &t, 1, "execution_plan", 4, &v), 1);
    memset(real + v.pos, 0, 4);
    ck_assert_int_eq(try_read(real, size, "cycle.pte", &err), -1);
    ck_assert_msg(strstr(err.msg, "cycle.pte: execution_plan[0]: vtable"), "%s", err.msg);
    free(real);
}
END_TEST

/* Files whose structure is fine but whose indices point nowhere. */
START_TEST(bad_cross_references_are_refused)
{
    ls_error err;
    size_t size;
    LOAD_OR_SKIP(data, "et_arduino_KeywordSpotting", size);
    ls_pte p;
    ck_assert(ls_pte_read_bytes(data, size, "ks.pte", &p, &err) == 0);
    free(data);
    ls_pte_plan *plan = &p.execution_plan.v[0];
    ls_pte_instruction *k = NULL;
    ls_pte_value *list = NULL;
    ls_pte_tensor *constant = NULL;
    for (uint32_t i = 0; i < plan->chains.v[0].instructions.n && !k; i++)
        if (plan->chains.v[0].instructions.v[i].kind == LS_PTE_KERNEL_CALL) k = &plan->chains.v[0].instructions.v[i];
    for (uint32_t i = 0; i < plan->values.n; i++) {
        ls_pte_value *v = &plan->values.v[i];
        if (v->kind == LS_PTE_VAL_INT_LIST && v->int_list.n && !list) list = v;
        if (v->kind == LS_PTE_VAL_TENSOR && v->tensor.data_buffer_idx > 0 && !constant) constant = &v->tensor;
    }
    ck_assert(k && list && constant);

    struct {
        int32_t *i32;
        int64_t *i64;
        uint32_t *u32;
        int64_t bad;
        const char *says;
    } cases[] = {
        {&k->kernel_call.op_index, NULL, NULL, 9999, "instr_args.op_index: operator index 9999 is out of range"},
        {&k->kernel_call.args.v[0], NULL, NULL, -5, "instr_args.args[0]: value index -5 is out of range"},
        {&plan->inputs.v[0], NULL, NULL, 289, "execution_plan[0].inputs[0]: value index 289"},
        {NULL, &list->int_list.v[0], NULL, 100000, "IntList items are value indices"},
        {NULL, NULL, &constant->data_buffer_idx, 64, "data_buffer_idx: 64 is out of range (64 constant_segment"},
        {NULL, NULL, &p.constant_segment.segment_index, 3, "constant_segment.segment_index: 3 is out of range"},
    };
    for (size_t i = 0; i < sizeof cases / sizeof cases[0]; i++) {
        int64_t keep = cases[i].i32 ? *cases[i].i32 : cases[i].i64 ? *cases[i].i64 : *cases[i].u32;
        if (cases[i].i32) *cases[i].i32 = (int32_t)cases[i].bad;
        if (cases[i].i64) *cases[i].i64 = cases[i].bad;
        if (cases[i].u32) *cases[i].u32 = (uint32_t)cases[i].bad;
        uint8_t *bytes;
        size_t n;
        /* the checked writer refuses the model; written anyway, the reader refuses the file */
        ck_assert_int_eq(ls_pte_write(&p, &bytes, &n, &err), -1);
        ck_assert_int_eq(lsp_pte_write_unchecked(&p, &bytes, &n, &err), 0);
        ck_assert_int_eq(try_read(bytes, n, "xref.pte", &err), -1);
        ck_assert_msg(strstr(err.msg, cases[i].says), "case %zu: %s", i, err.msg);
        free(bytes);
        if (cases[i].i32) *cases[i].i32 = (int32_t)keep;
        if (cases[i].i64) *cases[i].i64 = keep;
        if (cases[i].u32) *cases[i].u32 = (uint32_t)keep;
    }
    ls_pte_free(&p);
}
END_TEST

Suite *pte_corrupt_suite(void)
{
    Suite *s = suite_create("pte_corrupt");
    TCase *tc = tcase_create("core");
    tcase_set_timeout(tc, 60);
    tcase_add_test(tc, every_truncation_is_refused);
    tcase_add_test(tc, random_byte_flips);
    tcase_add_test(tc, hostile_words_everywhere);
    tcase_add_test(tc, self_vtable_and_bad_headers);
    tcase_add_test(tc, shared_offsets_cannot_explode);
    tcase_add_test(tc, bad_cross_references_are_refused);
    suite_add_tcase(s, tc);
    return s;
}
