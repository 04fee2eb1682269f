/* Tests of the .pte layer on the real files: every one reads and dumps to the same JSON as
 * flatc's decode, the data look-ups find constants, delegate blobs and named data, and a
 * write -> read round trip gives the same model in a file laid out as ExecuTorch lays it out
 * (which flatc decodes to the same JSON). */
#include <check.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

#include "flatbuf.h"
#include "pte.h"
#include "pte_test.h"
#include "tensor.h"

#define SKIP_WITHOUT_SHARED()                                                  \
    do {                                                                       \
        if (!tu_shared("data/pte")) return; /* recorded as a skip */          \
    } while (0)

static void read_ok(const char *name, ls_pte *p)
{
    ls_error err = {0};
    const char *path = pt_path(name, ".pte");
    ck_assert_ptr_nonnull(path);
    ck_assert_msg(ls_pte_read_file(path, p, &err) == 0, "%s: %s", name, err.msg);
}

START_TEST(real_files_match_flatc_decodes)
{
    SKIP_WITHOUT_SHARED();
    for (size_t i = 0; i < PT_NREAL; i++) {
        ls_pte p;
        read_ok(pt_real_files[i], &p);
        char *text = pt_dump_text(&p);
        cJSON *ours = cJSON_Parse(text);
        ck_assert_msg(ours != NULL, "%s: our dump is not JSON", pt_real_files[i]);
        size_t n;
        char rel[256];
        snprintf(rel, sizeof rel, "data/pte/decoded/%s.json", pt_real_files[i]);
        char *decoded = (char *)pt_load(tu_shared(rel), &n);
        ck_assert_ptr_nonnull(decoded);
        cJSON *want = pt_parse_flatc(decoded);
        ck_assert_ptr_nonnull(want);
        char where[600] = "";
        ck_assert_msg(pt_json_equal(ours, want, where, sizeof where), "%s: %s", pt_real_files[i], where);
        cJSON_Delete(ours);
        cJSON_Delete(want);
        free(decoded);
        free(text);
        ls_pte_free(&p);
    }
}
END_TEST

START_TEST(corrupt_and_foreign_files_are_refused)
{
    SKIP_WITHOUT_SHARED();
    ls_pte p;
    ls_error err;
    const char *path = pt_path("djl_corrupt", ".pte");
    ck_assert_int_eq(ls_pte_read_file(path, &p, &err), -1);
    ck_assert_msg(strncmp(err.msg, path, strlen(path)) == 0, "%s", err.msg);
    ck_assert_msg(strstr(err.msg, "not an ExecuTorch program") != NULL, "%s", err.msg);

    size_t size;
    uint8_t *data = pt_load(pt_path("et_apple_add", ".pte"), &size);
    memcpy(data + 4, "ET13", 4);
    ck_assert_int_eq(ls_pte_read_bytes(data, size, "v.pte", &p, &err), -1);
    ck_assert_msg(strstr(err.msg, "v.pte: incompatible program version") != NULL, "%s", err.msg);
    memcpy(data + 4, "FT01", 4);
    ck_assert_int_eq(ls_pte_read_bytes(data, size, "d.pte", &p, &err), -1);
    ck_assert_msg(strstr(err.msg, "d.pte: not an ExecuTorch program") != NULL, "%s", err.msg);
    ck_assert_int_eq(ls_pte_read_bytes(data, 3, "tiny.pte", &p, &err), -1);
    free(data);
    ck_assert_int_eq(ls_pte_read_file("/nonexistent/x.pte", &p, &err), -1);
    ck_assert_msg(strstr(err.msg, "/nonexistent/x.pte") != NULL, "%s", err.msg);
}
END_TEST

static const ls_pte_tensor *nth_constant(const ls_pte *p, uint32_t plan, uint32_t k)
{
    const ls_pte_values *vals = &p->execution_plan.v[plan].values;
    for (uint32_t i = 0; i < vals->n; i++)
        if (vals->v[i].kind == LS_PTE_VAL_TENSOR && vals->v[i].tensor.data_buffer_idx > 0 && k-- == 0)
            return &vals->v[i].tensor;
    return NULL;
}

START_TEST(constants_delegates_and_named_data)
{
    SKIP_WITHOUT_SHARED();
    ls_pte p;
    ls_error err;
    const uint8_t *data;
    size_t size;

    /* deprecated inline constant_buffer: 2x2 floats of 3.0 */
    read_ok("et_ModuleLinear-no-constant-segment", &p);
    const ls_pte_tensor *t = nth_constant(&p, 0, 0);
    ck_assert_ptr_nonnull(t);
    ck_assert_int_eq(ls_pte_tensor_bytes(&p, t, &data, &size, &err), 1);
    ck_assert_uint_eq(size, 16);
    float f;
    memcpy(&f, data, 4);
    ck_assert(f == 3.0f);
    ck_assert_ptr_eq(data, p.constant_buffer.v[t->data_buffer_idx].storage.v);
    ls_pte_free(&p);

    /* constant_segment: offsets [0, 0] into segment 0 of 4 bytes */
    read_ok("et_arduino_AddModel", &p);
    t = nth_constant(&p, 0, 0);
    ck_assert_int_eq(ls_pte_tensor_bytes(&p, t, &data, &size, &err), 1);
    ck_assert_uint_eq(size, 4);
    ck_assert_ptr_eq(data, p.segment_data[0].v);
    /* a planned tensor has no stored bytes */
    for (uint32_t i = 0; i < p.execution_plan.v[0].values.n; i++) {
        const ls_pte_value *v = &p.execution_plan.v[0].values.v[i];
        if (v->kind == LS_PTE_VAL_TENSOR && v->tensor.has_allocation_info)
            ck_assert_int_eq(ls_pte_tensor_bytes(&p, &v->tensor, &data, &size, &err), 0);
    }
    ls_pte_free(&p);

    /* 83 constants of the quantized model, all inside their segment */
    read_ok("et_arduino_KeywordSpotting", &p);
    uint32_t found = 0;
    for (uint32_t k = 0; (t = nth_constant(&p, 0, k)) != NULL; k++) {
        ck_assert_msg(ls_pte_tensor_bytes(&p, t, &data, &size, &err) == 1, "%s", err.msg);
        found++;
    }
    ck_assert_uint_eq(found, 83);
    ls_pte_free(&p);

    /* XNNPACK delegate blob in segment 1: "XH00" header at byte 4 */
    read_ok("cc_add", &p);
    const ls_pte_delegate *d = &p.execution_plan.v[0].delegates.v[0];
    ck_assert_str_eq(d->id, "XnnpackBackend");
    ck_assert_int_eq(ls_pte_delegate_blob(&p, d, &data, &size, &err), 0);
    ck_assert_uint_eq(size, 432);
    ck_assert_mem_eq(data + 4, "XH00", 4);
    ck_assert_int_eq(ls_pte_segment_bytes(&p, 9, &data, &size, &err), -1);
    ls_pte_free(&p);

    /* QNN blob shared by both real methods */
    read_ok("et_stories260k_hybrid_llama_qnn", &p);
    const uint8_t *first = NULL;
    for (uint32_t i = 0; i < p.execution_plan.n; i++) {
        const ls_pte_plan *plan = &p.execution_plan.v[i];
        for (uint32_t k = 0; k < plan->delegates.n; k++) {
            ck_assert_int_eq(ls_pte_delegate_blob(&p, &plan->delegates.v[k], &data, &size, &err), 0);
            ck_assert_uint_eq(size, 1331456);
            static const uint8_t magic[] = {0xcd, 0xab, 0x78, 0x56};
            ck_assert_mem_eq(data, magic, 4);
            if (first) ck_assert_ptr_eq(first, data);
            first = data;
        }
    }
    ck_assert_ptr_nonnull(first);
    ls_pte_free(&p);

    /* XNNPACK weights as named data (sha256 keys) */
    read_ok("cc_quantized", &p);
    ck_assert_uint_eq(p.named_data.n, 2);
    for (uint32_t i = 0; i < p.named_data.n; i++) {
        ck_assert_int_eq(ls_pte_named_bytes(&p, p.named_data.v[i].key, &data, &size, &err), 1);
        ck_assert_uint_eq(size, p.segments.v[p.named_data.v[i].segment_index].size);
    }
    ck_assert_int_eq(ls_pte_named_bytes(&p, "no such key", &data, &size, &err), 0);
    ls_pte_free(&p);

    /* a 512 MiB planned arena is only a number in the model */
    read_ok("djl_med_output", &p);
    ck_assert_int_eq(p.execution_plan.v[0].non_const_buffer_sizes.v[1], 536870928);
    ls_pte_free(&p);
}
END_TEST

/* Checks the physical layout of a written file against what the model says. */
static void check_layout(const char *name, const uint8_t *data, size_t size, const ls_pte *q)
{
    uint64_t seg_bytes = 0;
    for (uint32_t i = 0; i < q->n_segment_data; i++) seg_bytes += q->segment_data[i].n;
    if (seg_bytes == 0) {
        ck_assert_msg(memcmp(data + 8, "eh00", 4) != 0, "%s: header without segment data", name);
        return;
    }
    ck_assert_msg(memcmp(data + 8, "eh00", 4) == 0, "%s: no eh00 header", name);
    ck_assert_uint_eq(ls_fb_le32(data + 12), 32);
    uint64_t program_size = ls_fb_le64(data + 16), base = ls_fb_le64(data + 24), seg_size = ls_fb_le64(data + 32);
    ck_assert_uint_eq(base % 128, 0);
    ck_assert_uint_ge(base, program_size);
    ck_assert_uint_lt(base - program_size, 128);
    ck_assert_uint_eq(base + seg_size, size);
    ck_assert_uint_eq(ls_fb_le32(data) % 4, 0);
    ck_assert_uint_ge(ls_fb_le32(data), 40); /* the root table is past the header */
    for (uint32_t i = 0; i < q->segments.n; i++) {
        ck_assert_uint_eq(q->segments.v[i].offset % 128, 0);
        if (q->segments.v[i].size)
            ck_assert(memcmp(data + base + q->segments.v[i].offset, q->segment_data[i].v, q->segments.v[i].size) == 0);
    }
}

static bool have_flatc(void)
{
    return tu_have_tool("flatc");
}

/* Decodes a file with flatc and our schema; NULL when flatc fails. */
static cJSON *flatc_decode(const char *file, const char *dir)
{
    char cmd[2048];
    snprintf(cmd, sizeof cmd,
             "flatc --json --strict-json --defaults-json --raw-binary -o %s %s -- %s >/dev/null 2>&1", dir,
             tu_root("tests/schema/program.fbs"), file);
    if (system(cmd) != 0) return NULL;
    const char *base = strrchr(file, '/');
    base = base ? base + 1 : file;
    char out[1024];
    snprintf(out, sizeof out, "%s/%.*s.json", dir, (int)(strcspn(base, ".")), base);
    size_t n;
    char *text = (char *)pt_load(out, &n);
    if (!text) return NULL;
    cJSON *j = pt_parse_flatc(text);
    free(text);
    return j;
}

START_TEST(write_read_round_trip)
{
    SKIP_WITHOUT_SHARED();
    const char *dir = tu_tmpdir();
    bool flatc = have_flatc();
    if (!flatc) fprintf(stderr, "flatc not found: written files are not decoded with it\n");
    for (size_t i = 0; i < PT_NREAL; i++) {
        const char *name = pt_real_files[i];
        ls_pte p, q;
        ls_error err;
        read_ok(name, &p);
        char out[512];
        snprintf(out, sizeof out, "%s/%s.pte", dir, name);
        ck_assert_msg(ls_pte_write_file(&p, out, &err) == 0, "%s: %s", name, err.msg);
        ck_assert_msg(ls_pte_read_file(out, &q, &err) == 0, "%s: rewritten: %s", name, err.msg);

        char *a = pt_dump_text(&p), *b = pt_dump_text(&q);
        ck_assert_msg(strcmp(a, b) == 0, "%s: the model changed in the round trip", name);
        ck_assert_uint_eq(p.n_segment_data, q.n_segment_data);
        for (uint32_t k = 0; k < p.n_segment_data; k++) {
            ck_assert_uint_eq(p.segment_data[k].n, q.segment_data[k].n);
            if (p.segment_data[k].n)
                ck_assert(memcmp(p.segment_data[k].v, q.segment_data[k].v, p.segment_data[k].n) == 0);
        }
        size_t size;
        uint8_t *data = pt_load(out, &size);
        check_layout(name, data, size, &q);
        free(data);

        if (flatc) {
            cJSON *theirs = flatc_decode(out, dir), *ours = cJSON_Parse(b);
            ck_assert_msg(theirs != NULL, "%s: flatc could not decode the written file", name);
            char where[600] = "";
            ck_assert_msg(pt_json_equal(ours, theirs, where, sizeof where), "%s: %s", name, where);
            cJSON_Delete(theirs);
            cJSON_Delete(ours);
        }
        free(a);
        free(b);
        ls_pte_free(&p);
        ls_pte_free(&q);
        unlink(out);
    }
}
END_TEST

/* ---------------------------------------------------------------- a model built by hand */

static void *dup_mem(const void *p, size_t n)
{
    void *d = ls_malloc(n);
    memcpy(d, p, n);
    return d;
}

#define SET_VEC(vec, ...)                                                                  \
    do {                                                                                   \
        __typeof__(*(vec).v) tmp_[] = {__VA_ARGS__};                                       \
        (vec).v = dup_mem(tmp_, sizeof tmp_);                                              \
        (vec).n = sizeof tmp_ / sizeof tmp_[0];                                            \
        (vec).present = true;                                                              \
    } while (0)

/* Every union member, instruction kind and optional table the real files do not have. */
static void build_everything(ls_pte *p)
{
    memset(p, 0, sizeof *p);
    p->name = ls_strdup("hand.pte");
    p->version = 7;
    p->execution_plan.v = ls_calloc(1, sizeof(ls_pte_plan));
    p->execution_plan.n = 1;
    ls_pte_plan *plan = &p->execution_plan.v[0];
    plan->name = ls_strdup("forward");
    plan->has_container_meta_type = true;
    plan->container_meta_type.encoded_inp_str = ls_strdup("T1#1($)");
    plan->values.n = 12;
    plan->values.v = ls_calloc(12, sizeof(ls_pte_value));
    ls_pte_value *v = plan->values.v;
    v[0].kind = LS_PTE_VAL_NONE;
    v[1].kind = LS_PTE_VAL_NULL;
    v[2].kind = LS_PTE_VAL_INT, v[2].int_val = -1234567890123LL;
    v[3].kind = LS_PTE_VAL_BOOL, v[3].bool_val = true;
    v[4].kind = LS_PTE_VAL_DOUBLE, v[4].double_val = INFINITY;
    v[5].kind = LS_PTE_VAL_STRING, v[5].string_val = ls_strdup("h\xc3\xa9llo \"q\"\n");
    v[6].kind = LS_PTE_VAL_INT_LIST;
    SET_VEC(v[6].int_list, 2, 3);
    v[7].kind = LS_PTE_VAL_DOUBLE_LIST;
    SET_VEC(v[7].double_list, 0.5, -2.25);
    v[8].kind = LS_PTE_VAL_BOOL_LIST;
    SET_VEC(v[8].bool_list, 1, 0, 1);
    v[9].kind = LS_PTE_VAL_OPTIONAL_TENSOR_LIST;
    SET_VEC(v[9].tensor_list, 10, -1);
    v[10].kind = LS_PTE_VAL_TENSOR; /* a constant in the constant segment */
    ls_pte_tensor *t = &v[10].tensor;
    t->scalar_type = LS_ET_FLOAT;
    SET_VEC(t->sizes, 2);
    SET_VEC(t->dim_order, 0);
    t->data_buffer_idx = 1;
    t->has_extra_tensor_info = true;
    t->extra_tensor_info.fully_qualified_name = ls_strdup("w");
    t->extra_tensor_info.device_type = LS_PTE_DEVICE_CUDA;
    v[11].kind = LS_PTE_VAL_TENSOR; /* mutable with an initial state */
    t = &v[11].tensor;
    t->scalar_type = LS_ET_LONG;
    SET_VEC(t->sizes, 1);
    t->data_buffer_idx = 1;
    t->has_allocation_info = true;
    t->allocation_info.memory_id = 1;
    t->allocation_info.memory_offset_low = 64;
    t->shape_dynamism = LS_PTE_DYNAMIC_BOUND;
    SET_VEC(plan->inputs, 10);
    SET_VEC(plan->outputs, 11);
    SET_VEC(plan->non_const_buffer_sizes, 0, 128);
    plan->non_const_buffer_device.v = ls_calloc(1, sizeof(ls_pte_buffer_device));
    plan->non_const_buffer_device.n = 1;
    plan->non_const_buffer_device.v[0].buffer_idx = 1;
    plan->non_const_buffer_device.v[0].device_type = LS_PTE_DEVICE_CUDA;
    plan->operators.v = ls_calloc(1, sizeof(ls_pte_operator));
    plan->operators.n = 1;
    plan->operators.v[0].name = ls_strdup("aten::add");
    plan->operators.v[0].overload = ls_strdup("out");
    plan->delegates.v = ls_calloc(1, sizeof(ls_pte_delegate));
    plan->delegates.n = 1;
    ls_pte_delegate *d = &plan->delegates.v[0];
    d->id = ls_strdup("TestBackend");
    d->has_processed = true;
    d->processed.location = LS_PTE_INLINE;
    d->compile_specs.v = ls_calloc(1, sizeof(ls_pte_compile_spec));
    d->compile_specs.n = 1;
    d->compile_specs.v[0].key = ls_strdup("k");
    SET_VEC(d->compile_specs.v[0].value, 1, 2, 3);

    plan->chains.v = ls_calloc(1, sizeof(ls_pte_chain));
    plan->chains.n = 1;
    ls_pte_chain *c = &plan->chains.v[0];
    SET_VEC(c->inputs, 10);
    SET_VEC(c->outputs, 11);
    c->instructions.n = 6;
    c->instructions.v = ls_calloc(6, sizeof(ls_pte_instruction));
    ls_pte_instruction *in = c->instructions.v;
    in[0].kind = LS_PTE_KERNEL_CALL;
    SET_VEC(in[0].kernel_call.args, 10, 10, 2, 11, 11);
    in[1].kind = LS_PTE_DELEGATE_CALL;
    SET_VEC(in[1].delegate_call.args, 10, 11);
    in[2].kind = LS_PTE_MOVE_CALL, in[2].move_call.move_from = 10, in[2].move_call.move_to = 11;
    in[3].kind = LS_PTE_JUMP_FALSE_CALL, in[3].jump_false_call.cond_value_index = 3;
    in[3].jump_false_call.destination_instruction = 5;
    in[4].kind = LS_PTE_FREE_CALL, in[4].free_call.value_index = 10;
    in[5].kind = LS_PTE_INSTR_NONE;
    c->stacktrace.n = 1;
    c->stacktrace.v = ls_calloc(1, sizeof(ls_pte_frame_list));
    c->stacktrace.v[0].items.n = 1;
    c->stacktrace.v[0].items.v = ls_calloc(1, sizeof(ls_pte_frame));
    c->stacktrace.v[0].items.v[0].filename = ls_strdup("model.py");
    c->stacktrace.v[0].items.v[0].lineno = 42;
    c->stacktrace.v[0].items.v[0].name = ls_strdup("forward");

    p->backend_delegate_data.n = 1;
    p->backend_delegate_data.v = ls_calloc(1, sizeof(ls_pte_buffer));
    SET_VEC(p->backend_delegate_data.v[0].storage, 0xde, 0xad);
    p->constant_buffer.present = true;
    /* segments: constants, mutable state, a named blob asking for 512-byte alignment */
    p->segments.n = 3;
    p->segments.v = ls_calloc(3, sizeof(ls_pte_data_segment));
    p->n_segment_data = 3;
    p->segment_data = ls_calloc(3, sizeof(ls_pte_blob));
    float w[2] = {1.5f, -2.0f};
    int64_t m = 99;
    p->segment_data[0] = (ls_pte_blob){ls_malloc(16 + 8), 24, 0, NULL};
    memset(p->segment_data[0].v, 0, 24);
    memcpy(p->segment_data[0].v + 16, w, 8);
    p->segment_data[1] = (ls_pte_blob){dup_mem(&m, 8), 8, 0, NULL};
    ls_blob *shared = ls_blob_new(300); /* borrowed from a blob, as the emitter hands delegates over */
    p->segment_data[2] = (ls_pte_blob){shared->data, 300, 512, shared};
    p->has_constant_segment = true;
    SET_VEC(p->constant_segment.offsets, 0, 16);
    p->mutable_data_segments.n = 1;
    p->mutable_data_segments.v = ls_calloc(1, sizeof(ls_pte_subsegments));
    p->mutable_data_segments.v[0].segment_index = 1;
    SET_VEC(p->mutable_data_segments.v[0].offsets, 0, 0);
    p->named_data.n = 1;
    p->named_data.v = ls_calloc(1, sizeof(ls_pte_named_data));
    p->named_data.v[0].key = ls_strdup("blob");
    p->named_data.v[0].segment_index = 2;
}

START_TEST(hand_built_model_round_trips)
{
    ls_pte p, q;
    ls_error err;
    build_everything(&p);
    uint8_t *bytes;
    size_t size;
    ck_assert_msg(ls_pte_write(&p, &bytes, &size, &err) == 0, "%s", err.msg);
    size_t predicted = 0;
    ck_assert_msg(ls_pte_file_size(&p, &predicted, &err) == 0, "%s", err.msg);
    ck_assert_uint_eq(predicted, size);
    ck_assert_msg(ls_pte_read_bytes(bytes, size, "hand.pte", &q, &err) == 0, "%s", err.msg);
    /* the writer placed the segments; the model given to it had no offsets */
    ck_assert_uint_eq(q.segments.v[1].offset, 128);
    ck_assert_uint_eq(q.segments.v[2].offset, 512);
    ck_assert_uint_eq(q.segment_data[2].alignment, 512); /* inferred back from the placement */
    for (uint32_t i = 0; i < 3; i++) p.segments.v[i] = q.segments.v[i];
    char *a = pt_dump_text(&p), *b = pt_dump_text(&q);
    ck_assert_str_eq(a, b);
    ck_assert_msg(strstr(b, "\"double_val\": \"inf\"") != NULL, "%s", b);

    const uint8_t *data;
    size_t n;
    ck_assert_int_eq(ls_pte_tensor_bytes(&q, &q.execution_plan.v[0].values.v[10].tensor, &data, &n, &err), 1);
    ck_assert_uint_eq(n, 8);
    ck_assert(memcmp(data, (float[]){1.5f, -2.0f}, 8) == 0);
    ck_assert_int_eq(ls_pte_tensor_bytes(&q, &q.execution_plan.v[0].values.v[11].tensor, &data, &n, &err), 1);
    ck_assert_uint_eq(n, 8);
    ck_assert_int_eq(data[0], 99);
    ck_assert_int_eq(ls_pte_delegate_blob(&q, &q.execution_plan.v[0].delegates.v[0], &data, &n, &err), 0);
    ck_assert_uint_eq(n, 2);
    ck_assert_int_eq(data[0], 0xde);
    check_layout("hand.pte", bytes, size, &q);

    if (have_flatc()) {
        const char *dir = tu_tmpdir();
        char out[512];
        snprintf(out, sizeof out, "%s/hand.pte", dir);
        ck_assert_int_eq(ls_write_file_atomic(out, bytes, size, &err), 0);
        cJSON *theirs = flatc_decode(out, dir), *ours = cJSON_Parse(b);
        ck_assert_ptr_nonnull(theirs);
        char where[600] = "";
        ck_assert_msg(pt_json_equal(ours, theirs, where, sizeof where), "%s", where);
        cJSON_Delete(theirs);
        cJSON_Delete(ours);
        unlink(out);
    }
    free(a);
    free(b);
    free(bytes);
    ls_pte_free(&p);
    ls_pte_free(&q);
}
END_TEST

Suite *pte_suite(void)
{
    Suite *s = suite_create("pte");
    TCase *tc = tcase_create("real");
    tcase_set_timeout(tc, 30);
    tcase_add_test(tc, real_files_match_flatc_decodes);
    tcase_add_test(tc, corrupt_and_foreign_files_are_refused);
    tcase_add_test(tc, constants_delegates_and_named_data);
    tcase_add_test(tc, write_read_round_trip);
    tcase_add_test(tc, hand_built_model_round_trips);
    suite_add_tcase(s, tc);
    return s;
}
