/* ETDump (.etdp): files built with lowerscope's builder decode with flatc and ExecuTorch's
 * schema (tests/schema/etdump_schema_flatcc.fbs) to what was put in, read back the same, and
 * every truncation or flipped byte of one is refused with a message, never a crash. */
#include <check.h>
#include <cjson/cJSON.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "etdump.h"
#include "pte_test.h"
#include "testutil.h"

/* Two runs as ETDumpGen leaves them: an allocator, the framework's Method::execute around
 * instruction events, a delegate's own event with metadata, an allocation and a debug event
 * holding a program output tensor. */
static void sample_dump(ls_etdump *d)
{
    static int64_t sizes[2] = {2, 3}, strides[2] = {3, 1};
    static uint8_t md[3] = {7, 8, 9};
    static const char *allocs[1];
    allocs[0] = ls_intern("method allocator");
    static ls_etd_event ev[2][5];
    memset(ev, 0, sizeof ev);
    for (int r = 0; r < 2; r++) {
        uint64_t t0 = 1000u * (uint64_t)(r + 1);
        ev[r][0] = (ls_etd_event){.kind = LS_ETD_PROFILE, .name = ls_intern("OPERATOR_CALL"), .instruction_id = 0,
                                  .delegate_debug_id_int = -1, .start_time = t0, .end_time = t0 + 250};
        ev[r][1] = (ls_etd_event){.kind = LS_ETD_PROFILE, .instruction_id = 1, .delegate_debug_id_int = 4,
                                  .metadata = md, .n_metadata = 3, .start_time = t0 + 300, .end_time = t0 + 400};
        ev[r][2] = (ls_etd_event){.kind = LS_ETD_PROFILE, .name = ls_intern("Method::execute"), .chain_index = -1,
                                  .instruction_id = 0, .delegate_debug_id_int = -1, .start_time = t0 - 10,
                                  .end_time = t0 + 500};
        ev[r][3] = (ls_etd_event){.kind = LS_ETD_ALLOCATION, .instruction_id = -1, .delegate_debug_id_int = -1,
                                  .allocator_id = 1, .allocation_size = 4096};
        ev[r][4] = (ls_etd_event){.kind = LS_ETD_DEBUG, .instruction_id = 1, .delegate_debug_id_int = -1,
                                  .has_debug_entry = true,
                                  .debug_entry = {.type = LS_ETD_TENSOR, .output = true,
                                                  .tensor = {.scalar_type = 6, .sizes = sizes, .strides = strides,
                                                             .ndim = 2, .nstrides = 2, .offset = 64}}};
    }
    static ls_etd_run runs[2];
    for (int r = 0; r < 2; r++)
        runs[r] = (ls_etd_run){.name = ls_intern("Execute"), .bundled_input_index = r ? 1 : -1,
                               .allocators = allocs, .n_allocators = 1, .events = ev[r], .n_events = 5};
    *d = (ls_etdump){.name = "sample.etdp", .version = 0, .runs = runs, .n_runs = 2};
}

static uint8_t *sample_bytes(size_t *n)
{
    ls_etdump d;
    sample_dump(&d);
    uint8_t *bytes;
    ls_error err;
    ck_assert_msg(ls_etdump_write(&d, &bytes, n, &err) == 0, "%s", err.msg);
    return bytes;
}

START_TEST(written_files_read_back)
{
    size_t n;
    uint8_t *bytes = sample_bytes(&n);
    /* flatcc's layout: a size prefix counting what follows, then the root offset and "ED00" */
    ck_assert_uint_eq(ls_le_get(bytes, 4), n - 4);
    ck_assert(memcmp(bytes + 8, "ED00", 4) == 0);
    ls_etdump d;
    ls_error err;
    ck_assert_msg(ls_etdump_read(bytes, n, "sample.etdp", &d, &err) == 0, "%s", err.msg);
    ck_assert_uint_eq(d.n_runs, 2);
    const ls_etd_run *r = &d.runs[1];
    ck_assert_str_eq(r->name, "Execute");
    ck_assert_int_eq(r->bundled_input_index, 1);
    ck_assert_int_eq(d.runs[0].bundled_input_index, -1);
    ck_assert_uint_eq(r->n_allocators, 1);
    ck_assert_str_eq(r->allocators[0], "method allocator");
    ck_assert_uint_eq(r->n_events, 5);
    ck_assert_str_eq(r->events[0].name, "OPERATOR_CALL");
    ck_assert_int_eq(r->events[0].instruction_id, 0);
    ck_assert_int_eq(r->events[0].delegate_debug_id_int, -1);
    ck_assert_int_eq(ls_etd_elapsed(&r->events[0]), 250);
    ck_assert_ptr_null(r->events[1].name);
    ck_assert_int_eq(r->events[1].delegate_debug_id_int, 4);
    ck_assert_uint_eq(r->events[1].n_metadata, 3);
    ck_assert_uint_eq(r->events[1].metadata[2], 9);
    ck_assert_int_eq(r->events[2].chain_index, -1);
    ck_assert_uint_eq(r->events[3].kind, LS_ETD_ALLOCATION);
    ck_assert_uint_eq(r->events[3].allocation_size, 4096);
    ck_assert_uint_eq(r->events[4].kind, LS_ETD_DEBUG);
    const ls_etd_value *v = &r->events[4].debug_entry;
    ck_assert(v->type == LS_ETD_TENSOR && v->output);
    ck_assert(v->tensor.ndim == 2 && v->tensor.sizes[1] == 3 && v->tensor.strides[0] == 3 && v->tensor.offset == 64);
    ls_etdump_free(&d);
    free(bytes);
}
END_TEST

/* A wrapped 32-bit clock, as the Inspector's _calculate_elapsed_time handles it. */
START_TEST(elapsed_time_wraps_like_the_inspector)
{
    ls_etd_event e = {.start_time = 4294967290u, .end_time = 5};
    ck_assert_int_eq(ls_etd_elapsed(&e), 10); /* (2^32 - 1 - start) + end */
    e.start_time = (uint64_t)1 << 40;
    ck_assert_int_eq(ls_etd_elapsed(&e), -1);
}
END_TEST

static const cJSON *at(const cJSON *j, const char *path)
{
    char buf[256];
    snprintf(buf, sizeof buf, "%s", path);
    for (char *tok = strtok(buf, "."); tok && j; tok = strtok(NULL, ".")) {
        char *br = strchr(tok, '[');
        if (br) *br = 0;
        j = cJSON_GetObjectItemCaseSensitive(j, tok);
        if (br) j = cJSON_GetArrayItem(j, atoi(br + 1));
    }
    return j;
}

START_TEST(flatc_decodes_them_with_executorchs_schema)
{
    size_t n;
    uint8_t *bytes = sample_bytes(&n);
    cJSON *j = pt_flatc_json(bytes, n, "sample.etdp", "etdump_schema_flatcc.fbs", "--size-prefixed");
    if (!j) {
        free(bytes);
        return;
    }
    /* what sample_dump put in, field by field as the schema names them */
    ck_assert_str_eq(at(j, "run_data[0].name")->valuestring, "Execute");
    ck_assert_ptr_null(at(j, "run_data[0].bundled_input_index")); /* the default -1 is not written */
    ck_assert_int_eq(at(j, "run_data[1].bundled_input_index")->valueint, 1);
    ck_assert_str_eq(at(j, "run_data[0].allocators[0].name")->valuestring, "method allocator");
    ck_assert_str_eq(at(j, "run_data[0].events[0].profile_event.name")->valuestring, "OPERATOR_CALL");
    ck_assert_int_eq(at(j, "run_data[0].events[0].profile_event.start_time")->valueint, 1000);
    ck_assert_int_eq(at(j, "run_data[0].events[0].profile_event.end_time")->valueint, 1250);
    ck_assert_int_eq(at(j, "run_data[1].events[1].profile_event.instruction_id")->valueint, 1);
    ck_assert_int_eq(at(j, "run_data[1].events[1].profile_event.delegate_debug_id_int")->valueint, 4);
    ck_assert_int_eq(at(j, "run_data[1].events[1].profile_event.delegate_debug_metadata[1]")->valueint, 8);
    ck_assert_int_eq(at(j, "run_data[0].events[2].profile_event.chain_index")->valueint, -1);
    ck_assert_int_eq(at(j, "run_data[0].events[3].allocation_event.allocator_id")->valueint, 1);
    ck_assert_int_eq(at(j, "run_data[0].events[3].allocation_event.allocation_size")->valueint, 4096);
    ck_assert_str_eq(at(j, "run_data[0].events[4].debug_event.debug_entry.val")->valuestring, "Tensor");
    ck_assert_str_eq(at(j, "run_data[0].events[4].debug_event.debug_entry.tensor.scalar_type")->valuestring, "FLOAT");
    ck_assert_int_eq(at(j, "run_data[0].events[4].debug_event.debug_entry.tensor.sizes[1]")->valueint, 3);
    ck_assert(cJSON_IsTrue(at(j, "run_data[0].events[4].debug_event.debug_entry.output.bool_val")));
    cJSON_Delete(j);
    free(bytes);
}
END_TEST

/* Every prefix of the file and every byte flipped: an error naming the file, or a dump that
 * reads; never a crash (the sanitizer run checks the reads). */
START_TEST(truncated_and_flipped_files_are_refused_cleanly)
{
    size_t n;
    uint8_t *bytes = sample_bytes(&n);
    ls_error err;
    ls_etdump d;
    for (size_t k = 0; k < n; k++) {
        uint8_t *cut = ls_malloc(k ? k : 1);
        memcpy(cut, bytes, k);
        ck_assert_int_ne(ls_etdump_read(cut, k, "cut.etdp", &d, &err), 0);
        ck_assert_msg(strncmp(err.msg, "cut.etdp: ", 10) == 0, "%s", err.msg);
        free(cut);
    }
    for (size_t k = 0; k < n; k++) {
        for (int bit = 0; bit < 8; bit += 3) {
            bytes[k] ^= (uint8_t)(1u << bit);
            if (ls_etdump_read(bytes, n, "flip.etdp", &d, &err) == 0) ls_etdump_free(&d);
            else ck_assert_msg(strncmp(err.msg, "flip.etdp: ", 11) == 0, "%s", err.msg);
            bytes[k] ^= (uint8_t)(1u << bit);
        }
    }
    /* without the size prefix (a plain FinishBuffer): said so */
    ck_assert_int_ne(ls_etdump_read(bytes + 4, n - 4, "plain.etdp", &d, &err), 0);
    ck_assert_msg(tu_contains(err.msg, "without its size prefix"), "%s", err.msg);
    free(bytes);
}
END_TEST

/* Another ExecuTorch file given as an ETDump is named by what it is and where it goes, as
 * reader.c names files that are not programs (a .pte said 'file identifier is "eh00", expected
 * "ED00" (byte 8)'). The real .pte and .ptd files, and a zip. */
START_TEST(other_files_given_as_an_etdump_are_named)
{
    ls_etdump d;
    ls_error err;
    for (size_t i = 0; i < PT_NREAL && tu_shared("data/pte"); i++) {
        size_t n;
        uint8_t *bytes = pt_load(pt_path(pt_real_files[i], ".pte"), &n);
        ck_assert_ptr_nonnull(bytes);
        ck_assert_int_ne(ls_etdump_read(bytes, n, "x.etdp", &d, &err), 0);
        ck_assert_msg(tu_contains(err.msg, "not an ETDump (\"ED00\") but an ExecuTorch program (.pte): give it as FILE"),
                      "%s: %s", pt_real_files[i], err.msg);
        free(bytes);
    }
    if (tu_shared("data/pte")) {
        size_t n;
        uint8_t *bytes = pt_load(pt_path("et_android_xor", ".ptd"), &n);
        ck_assert_int_ne(ls_etdump_read(bytes, n, "x.etdp", &d, &err), 0);
        ck_assert_msg(tu_contains(err.msg, "an external data file (.ptd, \"FT01\"): give it with --data"), "%s", err.msg);
        free(bytes);
    }
    const uint8_t zip[8] = {'P', 'K', 3, 4, 0, 0, 0, 0}, bpte[12] = {0, 0, 0, 0, 'B', 'P', '0', '8'};
    ck_assert_int_ne(ls_etdump_read(zip, sizeof zip, "x.etdp", &d, &err), 0);
    ck_assert_msg(tu_contains(err.msg, "a zip archive (an ETRecord or a .pt2)"), "%s", err.msg);
    ck_assert_int_ne(ls_etdump_read(bpte, sizeof bpte, "x.etdp", &d, &err), 0);
    ck_assert_msg(tu_contains(err.msg, "a bundled program (.bpte"), "%s", err.msg);
}
END_TEST

Suite *etdump_suite(void)
{
    Suite *s = suite_create("etdump");
    TCase *tc = tcase_create("core");
    tcase_set_timeout(tc, 60);
    tcase_add_test(tc, written_files_read_back);
    tcase_add_test(tc, elapsed_time_wraps_like_the_inspector);
    tcase_add_test(tc, flatc_decodes_them_with_executorchs_schema);
    tcase_add_test(tc, truncated_and_flipped_files_are_refused_cleanly);
    tcase_add_test(tc, other_files_given_as_an_etdump_are_named);
    suite_add_tcase(s, tc);
    return s;
}
