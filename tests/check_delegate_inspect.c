/* Tests of seeing inside a delegate (backend.h: inspectors, ls_delegate_describe): a registered
 * reader opens a blob, a format is claimed by its bytes whatever id it carries, the facts of the
 * real QNN, XNNPACK and OpenVINO files read as ExecuTorch's sources lay their blobs out, a Core
 * ML blob made by hand the way ExecuTorch's in-memory filesystem serialises it; the exit code 3
 * of a valid program lowerscope cannot run; the files that are not programs named by what they
 * are; a scalar input stored in the file is a value, not an input to ask for. */
#include <check.h>
#include <stdlib.h>
#include <string.h>
#include <zip.h>

#include "backend.h"
#include "build.h"
#include "bundled_blob.h"
#include "export.h"
#include "progfixtures.h"
#include "pte_file.h"
#include "pte_test.h"
#include "reader.h"
#include "runtime.h"
#include "testutil.h"

static const char *fact(const ls_delegate_facts *f, const char *label)
{
    for (uint32_t i = 0; i < f->n; i++)
        if (strcmp(f->v[i].label, label) == 0) return f->v[i].text;
    return NULL;
}

/* ---- the registry */

static int test_read(const ls_delegate_view *d, ls_program **out, ls_error *err)
{
    if (d->blob->size < 4 || memcmp(d->blob->data, "TST1", 4) != 0) return ls_fail(err, "not TST1");
    ls_program *p = ls_program_new("inside", LS_DIALECT_EDGE);
    ls_program_append(p, ls_node_new(p, LS_NODE_OUTPUT, ls_intern("output"), NULL));
    *out = p;
    return 0;
}

static void test_describe(const ls_delegate_view *d, ls_delegate_facts *out)
{
    ls_delegate_fact_add(out, "graphs", "%zu bytes said hello", d->blob->size);
}

static const ls_delegate_inspector test_inspector = {
    .backend_id = "TestInspectBackend", .format = "TST1 test blob", .read = test_read, .describe = test_describe};

static ls_submodule sub_with(const char *backend, const void *bytes, size_t n)
{
    ls_submodule s = {.name = ls_intern("lowered_module_0"), .backend_id = ls_intern(backend)};
    s.processed = ls_blob_new(n);
    memcpy(s.processed->data, bytes, n);
    return s;
}

START_TEST(registered_inspector_reads_and_describes)
{
    ls_delegate_inspector_register(&test_inspector);
    ls_submodule s = sub_with("TestInspectBackend", "TST1 and more", 13);
    ls_delegate_view v = ls_delegate_view_of(&s, NULL, NULL, 0);
    ls_program *p = NULL;
    ls_error err;
    ck_assert_int_eq(ls_delegate_read(&v, &p, &err), 1);
    ck_assert_str_eq(p->name, "inside");
    ls_program_unref(p);
    ls_delegate_facts f = {0};
    ls_delegate_describe(&v, &f);
    ck_assert_str_eq(fact(&f, "backend"), "TestInspectBackend");
    ck_assert_str_eq(fact(&f, "blob"), "13 B (13 bytes)");
    ck_assert_str_eq(fact(&f, "format"), "TST1 test blob");
    ck_assert_str_eq(fact(&f, "graphs"), "13 bytes said hello");
    ck_assert(tu_contains(fact(&f, "magic"), "54 53 54 31 20 61") && tu_contains(fact(&f, "magic"), "TST1 and more"));
    ck_assert(tu_contains(fact(&f, "inside"), "read: 1 node, 0 calls"));
    ls_delegate_facts_free(&f);
    ls_submodule_release(&s);

    /* a blob of the format it cannot read: the reader says why, and the delegate stays opaque */
    s = sub_with("TestInspectBackend", "XXXX", 4);
    v = ls_delegate_view_of(&s, NULL, NULL, 0);
    ck_assert_int_eq(ls_delegate_read(&v, &p, &err), -1);
    ck_assert_msg(tu_contains(err.msg, "lowered_module_0 (TestInspectBackend)") && tu_contains(err.msg, "not TST1"), "%s", err.msg);
    ls_delegate_describe(&v, &f);
    ck_assert(tu_contains(fact(&f, "inside"), "unreadable"));
    ls_delegate_facts_free(&f);
    ls_submodule_release(&s);

    /* no inspector: opaque, the generic facts only */
    s = sub_with("NobodysBackend", "\x01\x02", 2);
    v = ls_delegate_view_of(&s, NULL, NULL, 0);
    ck_assert_int_eq(ls_delegate_read(&v, &p, &err), 0);
    ls_delegate_describe(&v, &f);
    ck_assert(tu_contains(fact(&f, "inside"), "opaque"));
    ck_assert_ptr_null(fact(&f, "format"));
    ck_assert_str_eq(fact(&f, "specs"), "no compile specs");
    ls_delegate_facts_free(&f);
    ls_submodule_release(&s);
}
END_TEST

/* A program lowered for a backend lowerscope lacks carries the bundled blob under the profile's
 * id: the bundled format is claimed by its magic, whatever the id. */
START_TEST(bundled_format_is_claimed_by_its_bytes)
{
    ls_history h;
    ls_program *loaded = pf_sample("shared_constant");
    pf_lower(loaded, NULL, &h);
    const ls_program *last = h.steps[h.n - 1].program;
    ck_assert_uint_ge(last->n_subs, 1);
    ls_submodule s;
    ls_submodule_copy(&s, &last->subs[0]);
    s.backend_id = ls_intern("XnnpackBackend");
    ls_program *p = NULL;
    ls_error err;
    ls_delegate_view v = ls_delegate_view_of(&s, NULL, NULL, 0);
    ck_assert_int_eq(ls_delegate_read(&v, &p, &err), 1);
    ck_assert_uint_eq(p->n_nodes, last->subs[0].program->n_nodes);
    ls_program_unref(p);
    ck_assert_ptr_eq(ls_delegate_inspector_find("XnnpackBackend", s.processed), &ls_bundled_inspector);
    ls_submodule_release(&s);
    ls_history_free(&h);
    ls_program_unref(loaded);
}
END_TEST

/* ---- the real files */

static ls_program *real(const char *name, const char *method)
{
    const char *path = pt_path(name, ".pte");
    if (!path) return NULL;
    ls_load_opts o = {.method = method};
    ls_program *p;
    ls_error err;
    ck_assert_msg(ls_load(path, &o, &p, &err) == 0, "%s", err.msg);
    return p;
}

static void describe_sub(const ls_program *p, uint32_t i, ls_delegate_facts *f)
{
    ls_delegate_view v = ls_program_delegate_view(p, &p->subs[i]);
    ls_delegate_describe(&v, f);
}

/* The QNN llama's one delegate (both methods call it): the header ExecuTorch's
 * QnnContextCustomProtocol writes (magic 0x5678ABCD, then the signature, then the context
 * binary's size: 1331200 + the 256-byte header = the 1331456-byte segment flatc decodes), the
 * graphs named after the methods, and QnnExecuTorchOptions decoded with qc_compiler_spec.fbs
 * (soc_model 57 = SM8650, htp_arch 75, backend_type 2 = kHtpBackend, worked from its bytes). */
START_TEST(qnn_blob_facts)
{
    const char *methods[] = {"kv_forward", "prefill_forward"};
    for (int k = 0; k < 2; k++) {
        ls_program *p = real("et_stories260k_hybrid_llama_qnn", methods[k]);
        if (!p) return;
        ck_assert_uint_eq(p->n_subs, 1);
        ck_assert_ptr_null(p->subs[0].program); /* opaque */
        ls_delegate_facts f = {0};
        describe_sub(p, 0, &f);
        ck_assert_str_eq(fact(&f, "blob"), "1.3 MiB (1331456 bytes)");
        ck_assert_msg(tu_contains(fact(&f, "header"), "signature 0x18b62574de078e16, context binary 1.3 MiB at byte 256"), "%s",
                      fact(&f, "header"));
        ck_assert_str_eq(fact(&f, "graphs"), "kv_forward, prefill_forward (the file's methods the context binary names)");
        ck_assert_msg(tu_contains(fact(&f, "options"), "SoC SM8650 (57), HTP arch V75") && tu_contains(fact(&f, "options"), "backend HTP"),
                      "%s", fact(&f, "options"));
        ck_assert(tu_contains(fact(&f, "spec"), "qnn_compile_spec (200 B)"));
        ck_assert(tu_contains(fact(&f, "magic"), "cd ab 78 56"));
        ls_delegate_facts_free(&f);
        ls_program_unref(p);
    }
}
END_TEST

/* OpenVINO's one compile spec is text (device "CPU", 3 bytes in the decode); XNNPACK's blob starts
 * with its XH00 header at byte 4 (backends/xnnpack/runtime/XNNHeader.h). */
START_TEST(openvino_and_xnnpack_facts)
{
    ls_program *p = real("djl_openvino_tiny", NULL);
    if (!p) return;
    ls_delegate_facts f = {0};
    describe_sub(p, 0, &f);
    ck_assert_str_eq(fact(&f, "backend"), "OpenvinoBackend");
    ck_assert_str_eq(fact(&f, "blob"), "3.7 KiB (3769 bytes)");
    ck_assert_str_eq(fact(&f, "spec"), "device (3 B): 'CPU'");
    ls_delegate_facts_free(&f);
    ls_program_unref(p);
    p = real("cc_add", NULL);
    describe_sub(p, 0, &f);
    ck_assert_str_eq(fact(&f, "blob"), "432 B (432 bytes)");
    ck_assert(tu_contains(fact(&f, "magic"), "00 00 00 00 58 48 30 30"));
    ls_delegate_facts_free(&f);
    ls_program_unref(p);
}
END_TEST

/* A Core ML blob as ExecuTorch's in-memory filesystem serialises it (inmemoryfs:
 * InMemoryFileSystem::serialize writes the files' bytes, then the metadata JSON reversed at the
 * end; make_from_buffer reads it back from the last byte): a model package and a metadata.json. */
START_TEST(coreml_blob_facts)
{
    const char *meta_file = "{\"identifier\":\"abc123\",\"kind\":\"model\"}";
    const char *fs = "{\"nodes\":[{\"name\":\"\",\"dataRegion\":{\"offset\":0,\"size\":0},"
                     "\"children\":{\"lowered_module.mlpackage\":1,\"metadata.json\":2},\"kind\":1},"
                     "{\"name\":\"lowered_module.mlpackage\",\"dataRegion\":{\"offset\":0,\"size\":0},"
                     "\"children\":{\"Manifest.json\":3},\"kind\":1},"
                     "{\"name\":\"metadata.json\",\"dataRegion\":{\"offset\":0,\"size\":38},\"children\":{},\"kind\":0},"
                     "{\"name\":\"Manifest.json\",\"dataRegion\":{\"offset\":64,\"size\":2},\"children\":{},\"kind\":0}]}";
    size_t mlen = strlen(meta_file), flen = strlen(fs);
    ck_assert_uint_eq(mlen, 38);
    size_t at = 128, n = at + flen; /* the files, then the metadata at an aligned place */
    uint8_t *blob = ls_calloc(1, n);
    memcpy(blob, meta_file, mlen);
    memcpy(blob + 64, "{}", 2);
    for (size_t i = 0; i < flen; i++) blob[at + i] = (uint8_t)fs[flen - 1 - i];
    ls_submodule s = sub_with("CoreMLBackend", blob, n);
    free(blob);
    ls_delegate_view v = ls_delegate_view_of(&s, NULL, NULL, 0);
    ls_delegate_facts f = {0};
    ls_delegate_describe(&v, &f);
    ck_assert_str_eq(fact(&f, "models"), "lowered_module.mlpackage");
    ck_assert_str_eq(fact(&f, "metadata"), "metadata.json: identifier abc123, kind model");
    ck_assert_str_eq(fact(&f, "files"), "3 in the blob's filesystem; at its root: lowered_module.mlpackage/, metadata.json");
    ck_assert(tu_contains(fact(&f, "inside"), "opaque"));
    ls_delegate_facts_free(&f);
    ls_submodule_release(&s);
    /* not that format: said so, no crash */
    s = sub_with("CoreMLBackend", "garbage}", 8);
    v = ls_delegate_view_of(&s, NULL, NULL, 0);
    ls_delegate_describe(&v, &f);
    ck_assert(tu_contains(fact(&f, "files"), "no in-memory filesystem metadata"));
    ls_delegate_facts_free(&f);
    ls_submodule_release(&s);
}
END_TEST

/* ---- exit codes and files that are not programs */

START_TEST(valid_but_lacking_exits_3)
{
    if (!tu_shared("data/pte")) return;
    struct {
        const char *file, *needs;
    } cases[] = {
        {"et_stories260k_hybrid_llama_qnn", "valid, but delegate lowered_module_0 needs QnnBackend"},
        {"djl_openvino_tiny", "valid, but delegate lowered_module_0 needs OpenvinoBackend"},
        {"et_arduino_KeywordSpotting", "needs a kernel for cortex_m::"},
    };
    for (size_t i = 0; i < sizeof cases / sizeof cases[0]; i++) {
        char *out;
        ck_assert_int_eq(tu_runf(&out, "run %s", pt_path(cases[i].file, ".pte")), 3);
        ck_assert_msg(tu_contains(out, cases[i].needs), "%s: %s", cases[i].file, out);
        free(out);
    }
}
END_TEST

static void write_bytes(const char *path, const void *d, size_t n)
{
    ls_error err;
    ck_assert_msg(ls_write_file_atomic(path, d, n, &err) == 0, "%s", err.msg);
}

START_TEST(files_that_are_not_programs_are_named)
{
    const char *dir = tu_tmpdir();
    char bpte[4200], etdp[4200], etr[4200];
    snprintf(bpte, sizeof bpte, "%s/model.bpte", dir);
    snprintf(etdp, sizeof etdp, "%s/run.etdp", dir);
    snprintf(etr, sizeof etr, "%s/etrecord.bin", dir);
    /* the identifiers where the schemas put them: a flatbuffer's at byte 4, ETDump size-prefixed at 8 */
    write_bytes(bpte, "\x0c\x00\x00\x00" "BP08" "\x00\x00\x00\x00\x00\x00\x00\x00", 16);
    write_bytes(etdp, "\x10\x00\x00\x00\x0c\x00\x00\x00" "ED00" "\x00\x00\x00\x00", 16);
    zip_t *z = zip_open(etr, ZIP_CREATE | ZIP_TRUNCATE, NULL);
    ck_assert_ptr_nonnull(z);
    zip_source_t *src = zip_source_buffer(z, "", 0, 0);
    ck_assert_int_ge(zip_file_add(z, "ETRECORD_V0", src, ZIP_FL_OVERWRITE), 0);
    ck_assert_int_eq(zip_close(z), 0);
    struct {
        const char *path, *says;
    } cases[] = {
        {bpte, "an ExecuTorch bundled program (.bpte, \"BP08\""},
        {etdp, "an ETDump (\"ED00\""},
        {etr, "an ETRecord (a zip with ETRECORD_V0"},
        {pt_path("et_android_xor", ".ptd"), "an ExecuTorch external data file (.ptd, FlatTensor \"FT01\")"},
        {pt_path("rs_data_map__default_external_constant", ".ptd"), "an ExecuTorch external data file (.ptd"},
    };
    for (size_t i = 0; i < sizeof cases / sizeof cases[0]; i++) {
        if (!cases[i].path) continue;
        char path[4200];
        snprintf(path, sizeof path, "%s", cases[i].path);
        ls_program *p;
        ls_error err;
        ck_assert_int_ne(ls_load(path, NULL, &p, &err), 0);
        ck_assert_msg(tu_contains(err.msg, cases[i].says) && !tu_contains(err.msg, "not a .pt2 archive"), "%s", err.msg);
        char *out;
        ck_assert_int_eq(tu_runf(&out, "info %s", path), 2);
        ck_assert_msg(tu_contains(out, cases[i].says), "%s", out);
        free(out);
        ck_assert_int_eq(tu_runf(&out, "%s", path), 2); /* the UI says the same before it starts */
        ck_assert_msg(tu_contains(out, cases[i].says), "%s", out);
        free(out);
    }
}
END_TEST

/* et_apple_add with its alpha made a Double 2.0 and listed as a third input: the file stores the
 * value (ExecuTorch's Method::set_input accepts only it back), so it runs with the two tensors
 * alone and gives a + 2 b. */
START_TEST(stored_scalar_input_is_a_value)
{
    const char *path = pt_path("et_apple_add", ".pte");
    if (!path) return;
    ls_pte pte;
    ls_error err;
    ck_assert(ls_pte_read_file(path, &pte, &err) == 0);
    ls_pte_plan *pl = &pte.execution_plan.v[0];
    ck_assert_int_eq(pl->values.v[3].kind, LS_PTE_VAL_INT); /* alpha, as the decode shows */
    pl->values.v[3].kind = LS_PTE_VAL_DOUBLE;
    pl->values.v[3].double_val = 2.0;
    pl->inputs.v = ls_realloc(pl->inputs.v, 3 * sizeof *pl->inputs.v);
    pl->inputs.v[2] = 3;
    pl->inputs.n = 3;
    ls_program *p;
    ck_assert_msg(ls_program_from_pte(&pte, NULL, "alpha.pte", &p, &err) == 0, "%s", err.msg);
    ls_pte_free(&pte);
    ck_assert_uint_eq(ls_program_user_inputs(p, NULL, 0), 2);
    ck_assert_int_eq(p->inputs[p->n_inputs - 1].kind, LS_IN_CONSTANT_INPUT);
    ck_assert_int_eq(p->inputs[p->n_inputs - 1].value.kind, LS_ARG_FLOAT);
    ck_assert_double_eq(p->inputs[p->n_inputs - 1].value.v.f, 2.0);
    ls_runner *r = ls_runner_new(p, &err);
    ck_assert_msg(r, "%s", err.msg);
    int64_t one = 1;
    ls_value in[2] = {ls_value_tensor(ls_tensor_of(LS_DT_F32, 1, &one, (double[]){2}, 1)),
                      ls_value_tensor(ls_tensor_of(LS_DT_F32, 1, &one, (double[]){3}, 1))};
    ls_value *outs;
    uint32_t nout;
    ck_assert_msg(ls_runner_run(r, in, 2, &outs, &nout, &err) == 0, "%s", err.msg);
    ck_assert_double_eq(ls_tensor_get_f64(outs[0].t, 0), 8.0);
    ls_value_release(&outs[0]);
    free(outs);
    ls_value_release(&in[0]);
    ls_value_release(&in[1]);
    ls_runner_free(r);
    ls_program_unref(p);
}
END_TEST

Suite *delegate_inspect_suite(void)
{
    Suite *s = suite_create("delegate_inspect");
    TCase *tc = tcase_create("delegate_inspect");
    tcase_set_timeout(tc, 60);
    tcase_add_test(tc, registered_inspector_reads_and_describes);
    tcase_add_test(tc, bundled_format_is_claimed_by_its_bytes);
    tcase_add_test(tc, qnn_blob_facts);
    tcase_add_test(tc, openvino_and_xnnpack_facts);
    tcase_add_test(tc, coreml_blob_facts);
    tcase_add_test(tc, valid_but_lacking_exits_3);
    tcase_add_test(tc, files_that_are_not_programs_are_named);
    tcase_add_test(tc, stored_scalar_input_is_a_value);
    suite_add_tcase(s, tc);
    return s;
}
