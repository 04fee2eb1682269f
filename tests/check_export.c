/* Tests of export: every sample's exported .pte runs in the bundled runtime and matches the
 * reference (the loaded program run by the interpreter on the same inputs, rtol 1e-5, atol 1e-6),
 * reads back to the same plan, decodes with flatc and ExecuTorch's schema, lays its header and
 * segments out as the runtime wants; kv_cache keeps its state across steps from the .pte; real
 * ExecuTorch files export again. `lowerscope export` on the command line is check_export_cli.c,
 * the .pt2 writer check_export_pt2.c. */
#include <check.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "build.h"
#include "compare.h"
#include "export.h"
#include "ops.h"
#include "passes.h"
#include "progfixtures.h"
#include "pte_check.h"
#include "pte_test.h"
#include "reader.h"
#include "runtime.h"
#include "testutil.h"

/* Runs got and want `steps` times on the same seeded inputs; every output must match. */
static void same_results(const char *what, const ls_program *got, const ls_program *want, int steps, uint32_t *compared)
{
    ls_error err;
    ls_runner *rg = ls_runner_new(got, &err);
    ck_assert_msg(rg != NULL, "%s: %s", what, err.msg);
    ls_runner *rw = ls_runner_new(want, &err);
    ck_assert_msg(rw != NULL, "%s (reference): %s", what, err.msg);
    for (int s = 0; s < steps; s++) {
        ls_value *in, *in2, *og, *ow;
        uint32_t nin, nin2, ng, nw;
        ck_assert_msg(ls_make_inputs(want, 11, s, &in, &nin, &err) == 0, "%s", err.msg);
        ck_assert_msg(ls_make_inputs(got, 11, s, &in2, &nin2, &err) == 0, "%s", err.msg);
        ck_assert_uint_eq(nin, nin2);
        ck_assert_msg(ls_runner_run(rg, in2, nin2, &og, &ng, &err) == 0, "%s step %d: %s", what, s, err.msg);
        ck_assert_msg(ls_runner_run(rw, in, nin, &ow, &nw, &err) == 0, "%s step %d (reference): %s", what, s, err.msg);
        ck_assert_uint_eq(ng, nw);
        for (uint32_t k = 0; k < ng; k++) {
            ls_value_diff d;
            ls_compare_values(&og[k], &ow[k], LS_COMPARE_RTOL, LS_COMPARE_ATOL, &d);
            ck_assert_msg(d.pass, "%s step %d output %u: %s", what, s, k, d.why);
            (*compared)++;
        }
        pf_values_free(in, nin);
        pf_values_free(in2, nin2);
        pf_values_free(og, ng);
        pf_values_free(ow, nw);
    }
    ls_runner_free(rg);
    ls_runner_free(rw);
}

/* The file passes the checks ExecuTorch's runtime makes when it loads it (pte_check.h). */
static void loads_in_executorch(const char *path, const char *what)
{
    ls_pte pte;
    ls_error err;
    ck_assert_msg(ls_pte_read_file_unchecked(path, &pte, &err) == 0, "%s: %s", what, err.msg);
    ls_pte_check_report r;
    if (ls_pte_runtime_check(&pte, &r) != 0) {
        ls_buf b = {0};
        ls_pte_check_report_text(&r, path, &b);
        ck_abort_msg("%s: ExecuTorch's runtime would refuse it:\n%s", what, b.s);
    }
    ck_assert_uint_ge(r.methods, 1);
    ls_pte_check_report_free(&r);
    ls_pte_free(&pte);
}

static ls_program *export_and_load(const ls_history *h, int step, const char *path)
{
    ls_export_summary sum;
    ls_error err;
    ls_export_opts eo = {.force = true, .init_mutable_buffers = true};
    ck_assert_msg(ls_export_with(h, step, path, &eo, &sum, &err) == 0, "%s", err.msg);
    ck_assert_uint_gt(sum.bytes, 0);
    ls_export_summary_free(&sum);
    ls_program *back = NULL;
    ck_assert_msg(ls_load(path, NULL, &back, &err) == 0, "%s", err.msg);
    ck_assert_int_eq(back->dialect, LS_DIALECT_EXECUTORCH);
    return back;
}

/* pf_lower with --init-mutable-buffers: the .pte then starts from the buffers' initial data,
 * as the loaded program does (exir writes no initial state unless asked: et_init_buffer). */
static void lower_with_state(ls_program *p, const char *pipeline, ls_history *h)
{
    ls_pipeline_opts o;
    ls_pipeline_opts_init(&o);
    ls_error err;
    ck_assert(ls_pipeline_opt(&o, "--init-mutable-buffers", NULL, &err) == 1);
    if (pipeline) ck_assert_msg(ls_pipeline_opt(&o, "--pipeline", pipeline, &err) == 1, "%s", err.msg);
    ck_assert_msg(ls_pipeline_run(p, &o, h, &err) == 0, "%s", err.msg);
    for (uint32_t i = 0; i < h->n; i++) ck_assert_msg(!h->steps[i].error, "%s: %s", h->steps[i].pass, h->steps[i].error);
    ls_pipeline_opts_free(&o);
}

/* The default pipeline (delegates) and a CPU-only one (every call a KernelCall of its out
 * variant), each sample, each through the .pte. */
START_TEST(every_sample_exports_and_matches)
{
    const char *dir = tu_tmpdir();
    const char *pipelines[] = {NULL, "to_edge,constant_prop"};
    uint32_t compared = 0;
    for (size_t k = 0; k < PF_N_SAMPLES; k++)
        for (int pl = 0; pl < 2; pl++) {
            ls_program *p = pf_sample(pf_samples[k].name);
            ls_history h;
            lower_with_state(p, pipelines[pl], &h);
            char path[512];
            snprintf(path, sizeof path, "%s/%s_%d.pte", dir, pf_samples[k].name, pl);
            ls_program *back = export_and_load(&h, -1, path);
            loads_in_executorch(path, pf_samples[k].name);
            if (pl == 0) {
                ck_assert_str_eq(h.steps[h.n - 1].pass, "emit");
                ck_assert_uint_ge(back->n_subs, 1);
                for (uint32_t i = 0; i < back->n_subs; i++) {
                    ck_assert_str_eq(back->subs[i].backend_id, "BundledBackend");
                    ck_assert_ptr_nonnull(back->subs[i].program); /* decoded: the UI can enter it */
                }
            }
            char what[160];
            snprintf(what, sizeof what, "%s (%s)", pf_samples[k].name, pipelines[pl] ? pipelines[pl] : "default pipeline");
            same_results(what, back, p, 2, &compared);
            ls_program_unref(back);
            ls_history_free(&h);
            ls_program_unref(p);
        }
    ck_assert_uint_gt(compared, 50);
}
END_TEST

/* kv_cache: the delegate owns the cache; from the .pte it fills step by step as the loaded
 * program's buffer does, and the runner shows it. */
START_TEST(kv_cache_state_from_the_pte)
{
    const char *dir = tu_tmpdir();
    ls_program *p = pf_sample("kv_cache");
    ls_history h;
    pf_lower(p, NULL, &h);
    char path[512];
    snprintf(path, sizeof path, "%s/kv.pte", dir);
    ls_program *back = export_and_load(&h, -1, path);
    loads_in_executorch(path, "kv_cache");
    ls_error err;
    ls_runner *rg = ls_runner_new(back, &err), *rw = ls_runner_new(p, &err);
    ck_assert_ptr_nonnull(rg);
    ck_assert_ptr_nonnull(rw);
    for (int s = 0; s < 3; s++) {
        ls_value *in, *in2, *o1, *o2;
        uint32_t n, n2, k1, k2;
        ck_assert(ls_make_inputs(p, 5, s, &in, &n, &err) == 0);
        ck_assert(ls_make_inputs(back, 5, s, &in2, &n2, &err) == 0);
        ck_assert_msg(ls_runner_run(rg, in2, n2, &o1, &k1, &err) == 0, "%s", err.msg);
        ck_assert(ls_runner_run(rw, in, n, &o2, &k2, &err) == 0);
        pf_values_free(in, n);
        pf_values_free(in2, n2);
        pf_values_free(o1, k1);
        pf_values_free(o2, k2);
        ck_assert_uint_eq(ls_runner_state_count(rg), 1);
        ck_assert_str_eq(ls_runner_state_name(rg, 0), "lowered_module_0/cache");
        ck_assert_str_eq(ls_runner_state_name(rw, 0), "cache");
        ls_value a = ls_value_tensor(ls_tensor_ref(ls_runner_state(rg, 0)));
        ls_value b = ls_value_tensor(ls_tensor_ref(ls_runner_state(rw, 0)));
        ls_value_diff d;
        ls_compare_values(&a, &b, LS_COMPARE_RTOL, LS_COMPARE_ATOL, &d);
        ck_assert_msg(d.pass, "step %d: the cache differs: %s", s, d.why);
        ck_assert(ls_tensor_get_f64(a.t, s * 8) != 0); /* row s was written */
        ls_value_release(&a);
        ls_value_release(&b);
    }
    ls_runner_free(rg);
    ls_runner_free(rw);
    /* the same from the command line: the state is printed */
    char *out = NULL;
    ck_assert_int_eq(tu_runf(&out, "run %s --steps 2 --compare-with %s", path, tu_root("samples/kv_cache.pt2")), 0);
    ck_assert_msg(tu_contains(out, "lowered_module_0/cache") && tu_contains(out, "all within rtol 1e-5"), "%s", out);
    free(out);
    ls_program_unref(back);
    ls_history_free(&h);
    ls_program_unref(p);
}
END_TEST

/* The operator index of `name` in a flatc-decoded plan, -1 when absent. */
static int flatc_op(const cJSON *plan, const char *name)
{
    int k = 0;
    const cJSON *o;
    cJSON_ArrayForEach(o, cJSON_GetObjectItem(plan, "operators")) {
        if (!strcmp(cJSON_GetObjectItem(o, "name")->valuestring, name)) return k;
        k++;
    }
    return -1;
}

/* The args of the first KernelCall of operator `op` in a flatc-decoded plan. */
static const cJSON *flatc_call_args(const cJSON *plan, int op)
{
    const cJSON *in;
    cJSON_ArrayForEach(in, cJSON_GetObjectItem(cJSON_GetArrayItem(cJSON_GetObjectItem(plan, "chains"), 0), "instructions")) {
        const cJSON *a = cJSON_GetObjectItem(in, "instr_args");
        if (!strcmp(cJSON_GetObjectItem(in, "instr_args_type")->valuestring, "KernelCall") &&
            cJSON_GetObjectItem(a, "op_index")->valueint == op)
            return cJSON_GetObjectItem(a, "args");
    }
    return NULL;
}

/* kv_cache --portable mutates its cache on the CPU. exir keeps the write-back among the method's
 * outputs: insert_write_back_for_buffers_pass's _insert_copy makes the output node (copy_,
 * user outputs) and _TopLevelEmitter.output emits every argument of it, the copy_ being the
 * buffer's value. So, worked by hand: outputs [the cache, mm's result], the cache being the
 * self argument of aten::copy_ and mm's result its out argument; the pytree string counts the
 * one user output (call_spec.out_spec): "$". Read by flatc; read back, the file has the cache's
 * BUFFER_MUTATION output and one user output, not the cache twice. */
START_TEST(mutated_buffer_is_a_method_output)
{
    char path[512];
    snprintf(path, sizeof path, "%s/kv_portable.pte", tu_tmpdir());
    char *out = NULL;
    ck_assert_int_eq(tu_runf(&out, "export %s -o %s --portable --force", tu_root("samples/kv_cache.pt2"), path), 0);
    free(out);
    size_t size;
    uint8_t *d = pt_load(path, &size);
    ck_assert_ptr_nonnull(d);
    cJSON *j = pt_flatc_json(d, size, "kv_portable.pte", "program.fbs", "--defaults-json");
    free(d);
    if (j) {
        const cJSON *plan = cJSON_GetArrayItem(cJSON_GetObjectItem(j, "execution_plan"), 0);
        const cJSON *outs = cJSON_GetObjectItem(plan, "outputs");
        ck_assert_int_eq(cJSON_GetArraySize(outs), 2);
        int copy = flatc_op(plan, "aten::copy_"), mm = flatc_op(plan, "aten::mm");
        ck_assert_int_ge(copy, 0);
        ck_assert_int_ge(mm, 0);
        const cJSON *ca = flatc_call_args(plan, copy), *ma = flatc_call_args(plan, mm);
        ck_assert_ptr_nonnull(ca);
        ck_assert_ptr_nonnull(ma);
        ck_assert_int_eq(cJSON_GetArrayItem(outs, 0)->valueint, cJSON_GetArrayItem(ca, 0)->valueint);
        ck_assert_int_eq(cJSON_GetArrayItem(outs, 1)->valueint, cJSON_GetArrayItem(ma, cJSON_GetArraySize(ma) - 1)->valueint);
        const cJSON *cm = cJSON_GetObjectItem(plan, "container_meta_type");
        ck_assert_str_eq(cJSON_GetObjectItem(cm, "encoded_out_str")->valuestring, "$");
        cJSON_Delete(j);
    } else {
        tu_skip("flatc is not installed: the exported plan's outputs are not decoded with it");
    }
    ck_assert_int_eq(tu_runf(&out, "info %s", path), 0);
    ck_assert_msg(tu_contains(out, "outputs   2: buffer_mutation 1 · user_output 1"), "%s", out);
    ck_assert_msg(tu_contains(out, "3 in, 2 out"), "%s", out);
    free(out);
    ck_assert_int_eq(tu_runf(&out, "run %s --steps 2 --compare-with %s", path, tu_root("samples/kv_cache.pt2")), 0);
    ck_assert_msg(tu_contains(out, "all within rtol 1e-5"), "%s", out);
    free(out);
}
END_TEST

/* A call the emitted plan has an instruction for (not getitem, alloc or a buffer write-back). */
static bool instruction_node(const ls_node *n)
{
    return n->kind == LS_NODE_CALL && n->op && n->op->id != LS_OP_getitem && n->op->id != LS_OP_alloc &&
           n->op->id != LS_OP_copy_;
}

/* The file read back is the emitted plan; the loaded program has the emit step's calls. */
START_TEST(reading_back_gives_the_same_plan)
{
    const char *dir = tu_tmpdir();
    for (size_t k = 0; k < PF_N_SAMPLES; k++) {
        ls_program *p = pf_sample(pf_samples[k].name);
        ls_history h;
        pf_lower(p, NULL, &h);
        const ls_program *last = h.steps[h.n - 1].program;
        ls_emit_summary es;
        const ls_pte *emitted = ls_program_emitted(last, &es);
        ck_assert_ptr_nonnull(emitted);
        ck_assert_ptr_nonnull(ls_program_mem_plan(last));
        char path[512];
        snprintf(path, sizeof path, "%s/%s.pte", dir, pf_samples[k].name);
        ls_export_summary sum;
        ls_error err;
        ck_assert_msg(ls_export(&h, -1, path, false, &sum, &err) == 0, "%s", err.msg);
        ck_assert(!sum.ran_to_executorch);
        ck_assert_uint_eq(sum.bytes, es.file_bytes);
        ls_pte q;
        ck_assert_msg(ls_pte_read_file(path, &q, &err) == 0, "%s", err.msg);
        cJSON *a = pt_dump(emitted), *b = pt_dump(&q);
        char where[512];
        ck_assert_msg(pt_json_equal(a, b, where, sizeof where), "%s: %s", pf_samples[k].name, where);
        cJSON_Delete(a);
        cJSON_Delete(b);
        ck_assert_uint_eq(q.n_segment_data, emitted->n_segment_data);
        for (uint32_t i = 0; i < q.n_segment_data; i++) {
            ck_assert_uint_eq(q.segment_data[i].n, emitted->segment_data[i].n);
            if (q.segment_data[i].n) ck_assert(memcmp(q.segment_data[i].v, emitted->segment_data[i].v, q.segment_data[i].n) == 0);
        }
        /* the .pte as a program: its compute calls are the emit step's, in order */
        ls_program *back;
        ck_assert(ls_program_from_pte(&q, NULL, path, &back, &err) == 0);
        uint32_t i = 0, j = 0;
        for (;;) {
            while (i < last->n_nodes && !instruction_node(last->nodes[i])) i++;
            while (j < back->n_nodes && !instruction_node(back->nodes[j])) j++;
            if (i == last->n_nodes || j == back->n_nodes) break;
            ck_assert_msg(last->nodes[i]->op == back->nodes[j]->op, "%s: %s against %s", pf_samples[k].name, last->nodes[i]->name,
                          back->nodes[j]->name);
            i++, j++;
        }
        ck_assert_msg(i == last->n_nodes && j == back->n_nodes, "%s: the call counts differ", pf_samples[k].name);
        ls_program_unref(back);
        ls_pte_free(&q);
        ls_export_summary_free(&sum);
        ls_history_free(&h);
        ls_program_unref(p);
    }
}
END_TEST

/* What ExecuTorch's runtime checks before it reads a program: the identifier, the eh00 header,
 * 128-byte aligned segments inside the file; and flatc with ExecuTorch's schema decodes it. */
START_TEST(header_segments_and_flatc)
{
    const char *dir = tu_tmpdir();
    ls_program *p = pf_sample("two_delegates");
    ls_history h;
    pf_lower(p, NULL, &h);
    char path[512];
    snprintf(path, sizeof path, "%s/two.pte", dir);
    ls_error err;
    ck_assert(ls_export(&h, -1, path, false, NULL, &err) == 0);
    size_t size;
    uint8_t *d = pt_load(path, &size);
    ck_assert_ptr_nonnull(d);
    ck_assert_uint_ge(size, 64);
    ck_assert(memcmp(d + 4, "ET12", 4) == 0);
    ck_assert(memcmp(d + 8, "eh00", 4) == 0);
    ck_assert_uint_eq(pt_le(d + 12, 4), 32);
    uint64_t program_size = pt_le(d + 16, 8), base = pt_le(d + 24, 8), seg_size = pt_le(d + 32, 8);
    ck_assert_uint_le(program_size, base);
    ck_assert_uint_eq(base % 128, 0);
    ck_assert_uint_eq(base + seg_size, size);
    ck_assert_uint_lt(pt_le(d, 4), program_size); /* the root table lies in the flatbuffer */
    ls_pte q;
    ck_assert(ls_pte_read_bytes(d, size, "two.pte", &q, &err) == 0);
    ck_assert_uint_eq(q.segments.n, 3); /* constants, two delegate blobs */
    for (uint32_t i = 0; i < q.segments.n; i++) ck_assert_uint_eq(q.segments.v[i].offset % 128, 0);
    const ls_pte_plan *pl = &q.execution_plan.v[0];
    ck_assert_str_eq(pl->name, "forward");
    ck_assert_uint_eq(pl->non_const_buffer_sizes.n, 2);
    ck_assert_int_eq(pl->non_const_buffer_sizes.v[0], 0);
    ck_assert_str_eq(pl->container_meta_type.encoded_inp_str, "T2#1#0(T1#1($),D0())");
    ck_assert_str_eq(pl->container_meta_type.encoded_out_str, "T4#1#1#1#1($,$,$,$)");
    ck_assert_str_eq(pl->operators.v[0].name, "aten::atan2");
    ck_assert_str_eq(pl->operators.v[0].overload, "out");
    ck_assert_uint_eq(q.constant_segment.offsets.v[0], 0); /* index 0 is reserved */
    /* KernelCall args: schema inputs, the out argument, the return value again */
    const ls_pte_instruction *in = &pl->chains.v[0].instructions.v[0];
    ck_assert_int_eq(in->kind, LS_PTE_KERNEL_CALL);
    ck_assert_uint_eq(in->kernel_call.args.n, 4);
    ck_assert_int_eq(in->kernel_call.args.v[2], in->kernel_call.args.v[3]);
    const ls_pte_value *out = &pl->values.v[in->kernel_call.args.v[2]];
    ck_assert_int_eq(out->kind, LS_PTE_VAL_TENSOR);
    ck_assert(out->tensor.has_allocation_info);
    ck_assert_uint_eq(out->tensor.allocation_info.memory_id, 1);
    ck_assert_int_eq(out->tensor.scalar_type, LS_ET_FLOAT);
    ck_assert_str_eq(pl->delegates.v[0].id, "BundledBackend");
    ck_assert_int_eq(pl->delegates.v[0].processed.location, LS_PTE_SEGMENT);
    ls_pte_free(&q);
    free(d);
    if (tu_have_tool("flatc")) {
        char cmd[2048];
        snprintf(cmd, sizeof cmd, "flatc --json --strict-json --defaults-json -o %s %s -- %s 2>&1", dir,
                 tu_root("tests/schema/program.fbs"), path);
        ck_assert_int_eq(system(cmd), 0);
        char json[600];
        snprintf(json, sizeof json, "%s/two.json", dir);
        char *text = (char *)pt_load(json, &size);
        ck_assert_ptr_nonnull(text);
        cJSON *j = pt_parse_flatc(text);
        free(text);
        ls_pte q2;
        ck_assert(ls_pte_read_file(path, &q2, &err) == 0);
        cJSON *ours = pt_dump(&q2);
        char where[512];
        ck_assert_msg(pt_json_equal(j, ours, where, sizeof where), "flatc and lowerscope disagree at %s", where);
        cJSON_Delete(j);
        cJSON_Delete(ours);
        ls_pte_free(&q2);
    } else {
        fprintf(stderr, "flatc not found: the exported file is not decoded with it\n");
    }
    ls_history_free(&h);
    ls_program_unref(p);
}
END_TEST

/* The hook the UI calls: a program and a path. */
START_TEST(export_program_directly)
{
    const char *dir = tu_tmpdir();
    ls_program *p = pf_sample("folded_output");
    char path[512];
    snprintf(path, sizeof path, "%s/f.pte", dir);
    ls_export_summary sum;
    ls_error err;
    ck_assert_msg(ls_export_program(p, path, false, &sum, &err) == 0, "%s", err.msg);
    ck_assert(sum.ran_to_executorch);
    ck_assert_int_eq(sum.step, -1);
    ls_buf b = {0};
    ls_export_summary_text(&sum, &b);
    ck_assert_msg(tu_contains(b.s, "KernelCall") && tu_contains(b.s, "segments"), "%s", b.s);
    ls_buf_free(&b);
    ls_export_summary_free(&sum);
    ck_assert_int_ne(ls_export_program(p, path, false, NULL, &err), 0);
    ck_assert(tu_contains(err.msg, "exists"));
    ck_assert_int_ne(ls_export_program(p, dir, true, NULL, &err), 0);
    ck_assert(tu_contains(err.msg, "is a folder"));
    ls_program *back;
    ck_assert(ls_load(path, NULL, &back, &err) == 0);
    uint32_t compared = 0;
    same_results("folded_output (ATen, exported directly)", back, p, 1, &compared);
    ls_program_unref(back);
    ls_program_unref(p);
}
END_TEST

/* Real ExecuTorch files written again: the same instructions and operators, the same results. */
START_TEST(real_pte_files_export_again)
{
    const char *names[] = {"et_apple_add", "et_arduino_AddModel", "cc_const_methods", "node_mul", "rs_add",
                           "et_ModuleLinear-no-constant-segment"};
    if (!tu_shared("data/pte")) return;
    const char *dir = tu_tmpdir();
    for (size_t k = 0; k < sizeof names / sizeof names[0]; k++) {
        const char *src = pt_path(names[k], ".pte");
        ls_program *p = NULL;
        ls_error err;
        ck_assert_msg(ls_load(src, NULL, &p, &err) == 0, "%s", err.msg);
        char path[512];
        snprintf(path, sizeof path, "%s/%s.pte", dir, names[k]);
        ck_assert_msg(ls_export_program(p, path, false, NULL, &err) == 0, "%s: %s", names[k], err.msg);
        loads_in_executorch(path, names[k]);
        ls_pte a, b;
        ck_assert(ls_pte_read_file(src, &a, &err) == 0);
        ck_assert(ls_pte_read_file(path, &b, &err) == 0);
        const ls_pte_plan *pa = &a.execution_plan.v[0], *pb = &b.execution_plan.v[0];
        ck_assert_uint_eq(pa->chains.v[0].instructions.n, pb->chains.v[0].instructions.n);
        ck_assert_uint_eq(pa->operators.n, pb->operators.n);
        for (uint32_t i = 0; i < pa->operators.n; i++) {
            ck_assert_str_eq(pa->operators.v[i].name, pb->operators.v[i].name);
            ck_assert_str_eq(pa->operators.v[i].overload, pb->operators.v[i].overload);
        }
        for (uint32_t i = 0; i < pa->chains.v[0].instructions.n; i++)
            ck_assert_uint_eq(pa->chains.v[0].instructions.v[i].kernel_call.args.n,
                              pb->chains.v[0].instructions.v[i].kernel_call.args.n);
        ls_pte_free(&a);
        ls_pte_free(&b);
        ls_program *back;
        ck_assert(ls_load(path, NULL, &back, &err) == 0);
        uint32_t compared = 0;
        same_results(names[k], back, p, 1, &compared);
        ls_program_unref(back);
        ls_program_unref(p);
    }
}
END_TEST

Suite *export_suite(void)
{
    Suite *s = suite_create("export");
    TCase *tc = tcase_create("export");
    tcase_set_timeout(tc, 300);
    tcase_add_test(tc, every_sample_exports_and_matches);
    tcase_add_test(tc, kv_cache_state_from_the_pte);
    tcase_add_test(tc, mutated_buffer_is_a_method_output);
    tcase_add_test(tc, reading_back_gives_the_same_plan);
    tcase_add_test(tc, header_segments_and_flatc);
    tcase_add_test(tc, export_program_directly);
    tcase_add_test(tc, real_pte_files_export_again);
    suite_add_tcase(s, tc);
    return s;
}
