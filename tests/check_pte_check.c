/* Tests of the runtime's load checks (pte_check.h): every real .pte of ../shared/data/pte loads
 * (ExecuTorch's runtime loads them: they come from its users' repositories and its own tests),
 * with the kernels and backends it needs named; a file with each defect the runtime refuses —
 * a planned tensor past its arena or at offset 2^64-1, memory_id 0, a "default" overload, an
 * operator, delegate, constant or value index out of range, a TensorList item that is not a
 * tensor, a KernelCall argument of the wrong kind — gets the runtime's message, from the
 * library and from `lowerscope verify` (exit 1), and `lowerscope run` refuses it (exit 1). */
#include <check.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "../src/formats/pte/pte_internal.h"
#include "ops.h"
#include "pte_check.h"
#include "pte_test.h"
#include "testutil.h"

static bool has_issue(const ls_pte_check_report *r, ls_pte_issue_kind kind, const char *text)
{
    for (uint32_t i = 0; i < r->n; i++)
        if (r->v[i].kind == kind && strstr(r->v[i].msg, text)) return true;
    return false;
}

static char *report_text(const ls_pte_check_report *r)
{
    ls_buf b = {0};
    ls_pte_check_report_text(r, "file", &b);
    return ls_buf_take(&b);
}

START_TEST(real_files_load)
{
    if (!tu_shared("data/pte")) return;
    for (size_t k = 0; k < PT_NREAL; k++) {
        ls_pte p;
        ls_error err;
        ck_assert_msg(ls_pte_read_file_unchecked(pt_path(pt_real_files[k], ".pte"), &p, &err) == 0, "%s", err.msg);
        ls_pte_check_report r;
        uint32_t fails = ls_pte_runtime_check(&p, &r);
        char *t = report_text(&r);
        ck_assert_msg(fails == 0, "%s: %s", pt_real_files[k], t);
        ck_assert_uint_eq(r.methods, p.execution_plan.n);
        if (!strcmp(pt_real_files[k], "et_arduino_KeywordSpotting")) {
            ck_assert(has_issue(&r, LS_PTE_NEEDS_KERNEL, "cortex_m::quantized_conv2d.out from library cortex_m"));
            ck_assert(!has_issue(&r, LS_PTE_NEEDS_KERNEL, "_clone_dim_order")); /* portable has it */
        }
        if (!strncmp(pt_real_files[k], "cc_add", 6)) ck_assert(has_issue(&r, LS_PTE_NEEDS_BACKEND, "XnnpackBackend (ExecuTorch ships it"));
        if (!strcmp(pt_real_files[k], "et_android_xor")) ck_assert_uint_gt(r.planned, 50);
        free(t);
        ls_pte_check_report_free(&r);
        ls_pte_free(&p);
    }
}
END_TEST

/* A read et_apple_add.pte (add(x, y): values 0..3, one KernelCall aten::add.out) to damage. */
static void read_add(ls_pte *p)
{
    ls_error err;
    ck_assert_msg(ls_pte_read_file_unchecked(pt_path("et_apple_add", ".pte"), p, &err) == 0, "%s", err.msg);
}

static ls_pte_tensor *first_planned(ls_pte *p, uint32_t *index)
{
    ls_pte_values *vs = &p->execution_plan.v[0].values;
    for (uint32_t i = 0; i < vs->n; i++)
        if (vs->v[i].kind == LS_PTE_VAL_TENSOR && vs->v[i].tensor.has_allocation_info) {
            *index = i;
            return &vs->v[i].tensor;
        }
    ck_abort_msg("no planned tensor");
    return NULL;
}

/* Checks p in process (the message must be there), then writes it and runs verify and run on it;
 * the file written (until the next call). */
static const char *expect(ls_pte *p, const char *name, const char *message)
{
    ls_pte_check_report r;
    uint32_t fails = ls_pte_runtime_check(p, &r);
    char *t = report_text(&r);
    ck_assert_msg(fails >= 1 && has_issue(&r, LS_PTE_FAILS, message), "%s: want \"%s\" in:\n%s", name, message, t);
    free(t);
    ls_pte_check_report_free(&r);

    uint8_t *bytes;
    size_t n;
    ls_error err;
    ck_assert_msg(lsp_pte_write_unchecked(p, &bytes, &n, &err) == 0, "%s: %s", name, err.msg);
    static char path[512];
    snprintf(path, sizeof path, "%s/%s.pte", tu_tmpdir(), name);
    FILE *f = fopen(path, "wb");
    ck_assert_ptr_nonnull(f);
    ck_assert_uint_eq(fwrite(bytes, 1, n, f), n);
    fclose(f);
    free(bytes);
    char *out = NULL;
    int rc = tu_runf(&out, "verify %s", path);
    ck_assert_msg(rc == 1 && tu_contains(out, message) && tu_contains(out, "ExecuTorch's runtime refuses it"),
                  "%s: verify exit %d:\n%s", name, rc, out);
    free(out);
    rc = tu_runf(&out, "run %s", path);
    ck_assert_msg(rc == 1 && tu_contains(out, "not run: ExecuTorch's runtime refuses it"), "%s: run exit %d:\n%s", name,
                  rc, out);
    free(out);
    /* --json writes a document that says so (it wrote nothing), after stderr's report */
    rc = tu_runf(&out, "run %s --json", path);
    const char *doc = out[0] == '{' ? out : strstr(out, "\n{");
    cJSON *j = doc ? cJSON_Parse(doc) : NULL;
    const cJSON *nr = cJSON_GetObjectItem(j, "not_run"), *ex = cJSON_GetObjectItem(j, "exit");
    ck_assert_msg(rc == 1 && cJSON_IsString(nr) && ex && ex->valueint == 1 &&
                      strstr(nr->valuestring, "not run: ExecuTorch's runtime refuses it"),
                  "%s: run --json exit %d:\n%s", name, rc, out);
    cJSON_Delete(j);
    free(out);
    return path;
}

START_TEST(planned_offset_past_the_arena)
{
    if (!tu_shared("data/pte")) return;
    ls_pte p;
    read_add(&p);
    uint32_t vi;
    ls_pte_tensor *t = first_planned(&p, &vi);
    int64_t arena = p.execution_plan.v[0].non_const_buffer_sizes.v[1];
    /* a float[1] tensor (4 bytes) at arena - 2: the runtime's check is offset + nbytes <= size;
     * getMemPlannedPtr hands get_offset_address memory_id - 1, which its message prints */
    t->allocation_info.memory_offset_low = (uint32_t)(arena - 2);
    char want[200];
    snprintf(want, sizeof want, "offset_bytes (%lld) + size_bytes (4) >= allocator size (%lld) for memory_id 0 (the file's memory_id 1, less 1)",
             (long long)(arena - 2), (long long)arena);
    expect(&p, "past_arena", want);
    ls_pte_free(&p);
}
END_TEST

START_TEST(planned_offset_overflows)
{
    if (!tu_shared("data/pte")) return;
    ls_pte p;
    read_add(&p);
    uint32_t vi;
    ls_pte_tensor *t = first_planned(&p, &vi);
    t->allocation_info.memory_offset_low = t->allocation_info.memory_offset_high = 0xffffffffu;
    expect(&p, "offset_max", "offset_bytes (18446744073709551615) + size_bytes (4) >= allocator size");
    ls_pte_free(&p);
    read_add(&p);
    t = first_planned(&p, &vi);
    t->allocation_info.memory_id = 0;
    expect(&p, "memory_id_0", "id 4294967295 >= 1 (memory_id 0 is reserved");
    ls_pte_free(&p);
    /* one past the plan's buffers: verify (exit 1) and info (exit 2, it cannot read it) count the
     * same way, the runtime's id being memory_id - 1 (info said "2 is out of range (2 ...)") */
    read_add(&p);
    t = first_planned(&p, &vi);
    ck_assert_uint_eq(p.execution_plan.v[0].non_const_buffer_sizes.n, 2);
    t->allocation_info.memory_id = 2;
    const char *path = expect(&p, "memory_id_past", "id 1 >= 1 (no such planned buffer in non_const_buffer_sizes)");
    ls_pte_free(&p);
    char *out;
    ck_assert_int_eq(tu_runf(&out, "info %s", path), 2);
    ck_assert_msg(tu_contains(out, "allocation_info.memory_id: 2 names no planned buffer: non_const_buffer_sizes has 2 "
                                   "entries, the first reserved (ExecuTorch's runtime: \"id 1 >= 1\")"),
                  "%s", out);
    free(out);
}
END_TEST

START_TEST(default_overload_and_missing_operators)
{
    if (!tu_shared("data/pte")) return;
    ls_pte p;
    read_add(&p);
    ls_pte_operator *o = &p.execution_plan.v[0].operators.v[0];
    free(o->name);
    free(o->overload);
    o->name = ls_strdup("aten::copy_");
    o->overload = ls_strdup("default");
    expect(&p, "copy_default",
           "Missing operator: [0] aten::copy_.default (the kernel is registered as aten::copy_: exir writes a default "
           "overload as \"\")");
    free(o->overload);
    o->overload = ls_strdup("");
    ls_pte_check_report r;
    ls_pte_runtime_check(&p, &r);
    ck_assert(!has_issue(&r, LS_PTE_FAILS, "Missing operator")); /* "" is how exir writes it */
    ls_pte_check_report_free(&r);
    free(o->name);
    o->name = ls_strdup("aten::silu");
    free(o->overload);
    o->overload = ls_strdup("out");
    expect(&p, "silu_out", "Missing operator: [0] aten::silu.out");
    free(o->name);
    o->name = ls_strdup("quantized_decomposed::add");
    ls_pte_runtime_check(&p, &r);
    ck_assert(has_issue(&r, LS_PTE_NEEDS_KERNEL, "needs kernel quantized_decomposed::add.out from library quantized"));
    ck_assert_uint_eq(r.n_fails, 0);
    ls_pte_check_report_free(&r);
    ls_pte_free(&p);
}
END_TEST

START_TEST(bad_indices)
{
    if (!tu_shared("data/pte")) return;
    ls_pte p;
    read_add(&p);
    ls_pte_instruction *in = &p.execution_plan.v[0].chains.v[0].instructions.v[0];
    in->kernel_call.op_index = 5;
    expect(&p, "op_index", "Op index 5 out of range");
    in->kernel_call.op_index = 0;
    in->kernel_call.args.v[1] = 99;
    expect(&p, "arg_index", "Arg index 99 >= 4");
    ls_pte_free(&p);

    /* a constant past the constant segment's offsets (et_arduino_AddModel: offsets [0, 0]) */
    ck_assert(ls_pte_read_file_unchecked(pt_path("et_arduino_AddModel", ".pte"), &p, &(ls_error){0}) == 0);
    ls_pte_values *vs = &p.execution_plan.v[0].values;
    bool done = false;
    for (uint32_t i = 0; i < vs->n && !done; i++)
        if (vs->v[i].kind == LS_PTE_VAL_TENSOR && vs->v[i].tensor.data_buffer_idx > 0) {
            vs->v[i].tensor.data_buffer_idx = 7;
            done = true;
        }
    ck_assert(done);
    /* the constant segment has only the placeholder offset and the constant: Program::load keeps
     * it as a segment, so the index is checked against its two offsets */
    expect(&p, "constant_index", "Constant segment buffer index 7 invalid for program constant segment range 2");
    ls_pte_free(&p);

    /* a delegate call naming a delegate that does not exist (cc_add: one XNNPACK delegate) */
    ck_assert(ls_pte_read_file_unchecked(pt_path("cc_add", ".pte"), &p, &(ls_error){0}) == 0);
    in = &p.execution_plan.v[0].chains.v[0].instructions.v[0];
    ck_assert_int_eq(in->kind, LS_PTE_DELEGATE_CALL);
    in->delegate_call.delegate_index = 3;
    expect(&p, "delegate_index", "DELEGATE_CALL index 3 >= num delegates 1 at instruction 0");
    in->delegate_call.delegate_index = 0;
    p.execution_plan.v[0].delegates.v[0].processed.index = 9;
    expect(&p, "segment_index", "Segment index 9 out of range (>= ");
    ls_pte_free(&p);
}
END_TEST

START_TEST(values_of_the_wrong_kind)
{
    if (!tu_shared("data/pte")) return;
    ls_pte p;
    read_add(&p);
    ls_pte_plan *pl = &p.execution_plan.v[0];
    /* argument 1 of add.out ("other") becomes an Int: the kernel's wrapper unboxes a Tensor */
    uint32_t k = pl->values.n;
    pl->values.v = ls_realloc(pl->values.v, sizeof *pl->values.v * (k + 2));
    pl->values.n = k + 2;
    pl->values.v[k] = (ls_pte_value){.kind = LS_PTE_VAL_INT, .int_val = 3};
    /* and a TensorList whose item is that Int */
    int32_t *items = ls_malloc(sizeof *items);
    items[0] = (int32_t)k;
    pl->values.v[k + 1] = (ls_pte_value){.kind = LS_PTE_VAL_TENSOR_LIST};
    pl->values.v[k + 1].tensor_list = (ls_pte_i32s){items, 1, true};
    ls_pte_instruction *in = &pl->chains.v[0].instructions.v[0];
    in->kernel_call.args.v[1] = (int32_t)k;
    char want[160];
    snprintf(want, sizeof want, "argument 1 (other) of aten::add.out is value %u, a Int: the kernel unboxes a Tensor", k);
    expect(&p, "wrong_kind", want);
    snprintf(want, sizeof want, "TensorList item 0 references non-Tensor evalue (type 2) at index %u", k);
    expect(&p, "list_item", want);
    ls_pte_free(&p);
}
END_TEST

START_TEST(verify_json_and_needs)
{
    if (!tu_shared("data/pte")) return;
    char *out = NULL;
    int rc = tu_runf(&out, "verify --json %s", pt_path("cc_add", ".pte"));
    ck_assert_int_eq(rc, 0);
    cJSON *j = cJSON_Parse(out);
    ck_assert_ptr_nonnull(j);
    const cJSON *rt = cJSON_GetObjectItem(j, "runtime");
    ck_assert(cJSON_IsTrue(cJSON_GetObjectItem(rt, "loads")));
    const cJSON *is = cJSON_GetArrayItem(cJSON_GetObjectItem(rt, "issues"), 0);
    ck_assert_str_eq(cJSON_GetObjectItem(is, "kind")->valuestring, "needs_backend");
    ck_assert_str_eq(cJSON_GetObjectItem(is, "name")->valuestring, "XnnpackBackend");
    ck_assert(cJSON_IsTrue(cJSON_GetObjectItem(cJSON_GetObjectItem(j, "verify"), "ok")));
    cJSON_Delete(j);
    free(out);
    rc = tu_runf(&out, "verify %s", pt_path("et_arduino_KeywordSpotting", ".pte"));
    ck_assert_msg(rc == 0 && tu_contains(out, "needs kernel cortex_m::pad.out from library cortex_m") &&
                      tu_contains(out, "ExecuTorch's runtime loads it"),
                  "%s", out);
    free(out);
}
END_TEST

START_TEST(kernel_table)
{
    ck_assert_str_eq(ls_et_kernel_library("aten::add.out"), "portable");
    ck_assert_str_eq(ls_et_kernel_library("aten::copy_"), "portable");
    ck_assert_str_eq(ls_et_kernel_library("executorch_prim::et_view.default"), "prim ops");
    ck_assert_str_eq(ls_et_kernel_library("aten::linear.out"), "optimized");
    ck_assert_str_eq(ls_et_kernel_library("cortex_m::pad.out"), "cortex_m");
    ck_assert_ptr_null(ls_et_kernel_library("aten::copy_.default"));
    ck_assert_ptr_null(ls_et_kernel_library("aten::add.Tensor"));
    ck_assert(ls_et_library_is_stock("portable") && !ls_et_library_is_stock("cortex_m"));
    ck_assert(ls_et_backend_is_stock("XnnpackBackend") && !ls_et_backend_is_stock("BundledBackend"));
}
END_TEST

/* kernels/quantized/quantized.yaml registers quantize_per_tensor.Tensor_out (and
 * dequantize_per_tensor.Tensor_out, choose_qparams.Tensor_out): capital T. A name it does not
 * declare is a missing operator, not a kernel of the quantized library. */
START_TEST(quantized_kernel_names)
{
    ck_assert_str_eq(ls_et_kernel_library("quantized_decomposed::quantize_per_tensor.Tensor_out"), "quantized");
    ck_assert_str_eq(ls_et_kernel_library("quantized_decomposed::dequantize_per_tensor.Tensor_out"), "quantized");
    ck_assert_str_eq(ls_et_kernel_library("quantized_decomposed::choose_qparams.Tensor_out"), "quantized");
    ck_assert_str_eq(ls_et_kernel_library("quantized_decomposed::dequantize_per_channel.out"), "quantized");
    ck_assert_ptr_null(ls_et_kernel_library("quantized_decomposed::quantize_per_tensor.tensor_out"));
    ck_assert_ptr_null(ls_et_kernel_library("quantized_decomposed::quantize_per_tensor.tensor"));
    /* every quantized_decomposed op of the table writes an out variant the library registers */
    unsigned seen = 0;
    for (int id = 0; id < LS_OP_COUNT; id++) {
        const ls_op *op = ls_op_get((ls_op_id)id);
        if (!op || strcmp(op->ns, "quantized_decomposed") != 0 || !op->out_overload) continue;
        char name[160];
        snprintf(name, sizeof name, "%s::%s.%s", op->ns, op->name, op->out_overload);
        ck_assert_msg(ls_et_kernel_library(name) != NULL, "%s (from %s) is no kernel quantized.yaml declares", name,
                      op->qualname);
        seen++;
    }
    ck_assert_uint_ge(seen, 7);
}
END_TEST

Suite *pte_check_suite(void)
{
    Suite *s = suite_create("pte_check");
    TCase *tc = tcase_create("pte_check");
    tcase_set_timeout(tc, 60);
    tcase_add_test(tc, real_files_load);
    tcase_add_test(tc, planned_offset_past_the_arena);
    tcase_add_test(tc, planned_offset_overflows);
    tcase_add_test(tc, default_overload_and_missing_operators);
    tcase_add_test(tc, bad_indices);
    tcase_add_test(tc, values_of_the_wrong_kind);
    tcase_add_test(tc, verify_json_and_needs);
    tcase_add_test(tc, kernel_table);
    tcase_add_test(tc, quantized_kernel_names);
    suite_add_tcase(s, tc);
    return s;
}
