/* Tests of export: every sample's exported .pte runs in the bundled runtime and matches the
 * reference (the loaded program run by the interpreter on the same inputs, rtol 1e-5, atol 1e-6),
 * reads back to the same plan, decodes with flatc and ExecuTorch's schema, lays its header and
 * segments out as the runtime wants; kv_cache keeps its state across steps from the .pte; the
 * .pt2 writer round-trips; damaged exported files are refused by `lowerscope run` with a message
 * and no crash; files are not overwritten without --force. */
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

static uint64_t le(const uint8_t *p, int n)
{
    uint64_t v = 0;
    for (int i = 0; i < n; i++) v |= (uint64_t)p[i] << (8 * i);
    return v;
}

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
    ck_assert_uint_eq(le(d + 12, 4), 32);
    uint64_t program_size = le(d + 16, 8), base = le(d + 24, 8), seg_size = le(d + 32, 8);
    ck_assert_uint_le(program_size, base);
    ck_assert_uint_eq(base % 128, 0);
    ck_assert_uint_eq(base + seg_size, size);
    ck_assert_uint_lt(le(d, 4), program_size); /* the root table lies in the flatbuffer */
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

/* Every sample exported as a user would, by the default pipeline and with --portable: verify
 * says ExecuTorch's runtime loads it (exit 0), flatc decodes it with ExecuTorch's schema; the
 * portable file calls no delegate and needs nothing a stock runtime lacks; the default one
 * warns that it needs BundledBackend. */
START_TEST(every_sample_loads_in_executorch_from_the_cli)
{
    const char *dir = tu_tmpdir();
    bool flatc = system("command -v flatc >/dev/null 2>&1") == 0;
    for (size_t k = 0; k < PF_N_SAMPLES; k++)
        for (int portable = 0; portable < 2; portable++) {
            char sample[512], path[600], *out = NULL;
            snprintf(sample, sizeof sample, "samples/%s.pt2", pf_samples[k].name);
            snprintf(path, sizeof path, "%s/%s%s.pte", dir, pf_samples[k].name, portable ? "_portable" : "");
            int rc = tu_runf(&out, "export %s -o %s%s", tu_root(sample), path, portable ? " --portable" : "");
            ck_assert_msg(rc == 0, "%s: %s", path, out);
            ck_assert_msg(portable != tu_contains(out, "warning: ") && portable != tu_contains(out, "needs backend BundledBackend"),
                          "%s: %s", path, out);
            free(out);
            rc = tu_runf(&out, "verify %s", path);
            ck_assert_msg(rc == 0 && tu_contains(out, "ExecuTorch's runtime loads it"), "%s: exit %d\n%s", path, rc, out);
            /* a PT2E program's q/dq at the graph's edges run on ExecuTorch's quantized kernels
             * (kernels/quantized), which a runtime for such programs links */
            bool quantized = strcmp(pf_samples[k].name, "quantized_mlp") == 0;
            ck_assert_msg(!portable || !tu_contains(out, "needs ") ||
                              (quantized && tu_contains(out, "from library quantized") && !tu_contains(out, "needs backend")),
                          "%s: %s", path, out);
            free(out);
            if (flatc) {
                char cmd[2048];
                snprintf(cmd, sizeof cmd, "flatc --json --strict-json --defaults-json -o %s %s -- %s >/dev/null 2>&1", dir,
                         tu_root("tests/schema/program.fbs"), path);
                ck_assert_msg(system(cmd) == 0, "flatc does not decode %s", path);
            }
            ls_pte q;
            ls_error err;
            ck_assert(ls_pte_read_file(path, &q, &err) == 0);
            if (portable) ck_assert_uint_eq(q.execution_plan.v[0].delegates.n, 0);
            ls_pte_free(&q);
        }
}
END_TEST

static void write_bytes(const char *path, const uint8_t *d, size_t n)
{
    ls_error err;
    ck_assert(ls_write_file_atomic(path, d, n, &err) == 0);
}

/* Damaged exported files through `lowerscope run`: refused with a message naming the file, and
 * never a crash (the binary runs under ASan in make test-asan). */
/* A profile under an id ExecuTorch ships (coreml: CoreMLBackend) whose modules the bundled
 * delegate preprocessed: the file's delegate is in the bundled format (LSBB), which ExecuTorch's
 * CoreMLBackend does not read; export and verify say so instead of "ExecuTorch ships it", and a
 * real blob (xnnpack's) still reads "ExecuTorch ships it". */
START_TEST(stand_in_blob_is_not_the_stock_backend)
{
    const char *dir = tu_tmpdir();
    char *out;
    int rc = tu_runf(&out, "export %s --backend coreml -o %s/kv.pte", tu_root("samples/kv_cache.pt2"), dir);
    ck_assert_msg(rc == 0, "%s", out);
    ck_assert_msg(tu_contains(out, "needs     backend CoreMLBackend, but its blob is lowerscope's bundled format") &&
                      tu_contains(out, "warning: ") && !tu_contains(out, "ExecuTorch ships it"),
                  "%s", out);
    free(out);
    rc = tu_runf(&out, "verify %s/kv.pte", dir);
    ck_assert_msg(rc == 0 && tu_contains(out, "bundled format (LSBB) standing in for it"), "%s", out);
    free(out);
    rc = tu_runf(&out, "export %s --backend coreml -o %s/kv2.pte --json", tu_root("samples/kv_cache.pt2"), dir);
    ck_assert_msg(rc == 0 && tu_contains(out, "\"stand_in\":true"), "%s", out);
    free(out);
    rc = tu_runf(&out, "export %s --backend xnnpack -o %s/q.pte", tu_root("samples/quantized_mlp.pt2"), dir);
    ck_assert_msg(rc == 0 && tu_contains(out, "XnnpackBackend (ExecuTorch ships it") && !tu_contains(out, "standing in"),
                  "%s", out);
    free(out);
}
END_TEST

START_TEST(damaged_exports_are_refused)
{
    const char *dir = tu_tmpdir();
    char path[512], bad[600];
    snprintf(path, sizeof path, "%s/good.pte", dir);
    snprintf(bad, sizeof bad, "%s/bad.pte", dir);
    char *out = NULL;
    ck_assert_int_eq(tu_runf(&out, "export %s -o %s", tu_root("samples/two_delegates.pt2"), path), 0);
    free(out);
    size_t size;
    uint8_t *d = pt_load(path, &size);
    ck_assert_ptr_nonnull(d);
    uint8_t *x = malloc(size);
    struct {
        const char *what;
        size_t len;
        size_t at;
        uint64_t val;
        int width;
    } cases[] = {
        {"truncated in the header", 20, 0, 0, 0},
        {"truncated in the program", 300, 0, 0, 0},
        {"truncated in the segments", 0, 0, 0, 0}, /* len set below */
        {"wrong identifier", 0, 4, 0x33315445, 4}, /* "ET13" */
        {"not ExecuTorch", 0, 4, 0x58585858, 4},   /* "XXXX" */
        {"root offset past the end", 0, 0, 0x7ffffff0, 4},
        {"segment base past the end", 0, 24, 1u << 30, 8},
        {"segment data size that overflows", 0, 32, UINT64_MAX - 64, 8},
        {"program size that overflows", 0, 16, UINT64_MAX, 8},
        {"header length", 0, 12, 0xffff, 4},
        {"a table whose vtable is itself", 0, SIZE_MAX, 0, 4},
    };
    cases[2].len = size - 100;
    for (size_t c = 0; c < sizeof cases / sizeof cases[0]; c++) {
        memcpy(x, d, size);
        size_t n = cases[c].len ? cases[c].len : size;
        if (cases[c].at == SIZE_MAX) ls_le_put(x + le(x, 4), 0, 4); /* soffset 0: the vtable is the table */
        else if (cases[c].width) ls_le_put(x + cases[c].at, cases[c].val, cases[c].width);
        write_bytes(bad, x, n);
        int rc = tu_runf(&out, "run %s", bad);
        ck_assert_msg(rc == 2, "%s: exit %d: %s", cases[c].what, rc, out);
        ck_assert_msg(tu_contains(out, "bad.pte"), "%s: %s", cases[c].what, out);
        free(out);
    }
    /* a damaged delegate blob: the backend refuses it when the program is prepared */
    ls_pte q;
    ls_error err;
    ck_assert(ls_pte_read_bytes(d, size, "good.pte", &q, &err) == 0);
    uint64_t blob = le(d + 24, 8) + q.segments.v[1].offset;
    ls_pte_free(&q);
    memcpy(x, d, size);
    x[blob] ^= 0xff;
    write_bytes(bad, x, size);
    ck_assert_int_eq(tu_runf(&out, "run %s", bad), 2);
    ck_assert_msg(tu_contains(out, "lowered_module_0"), "%s", out);
    free(out);
    /* seeded bit flips anywhere: a message or a run, never a crash */
    uint64_t s = 12345;
    for (int k = 0; k < 40; k++) {
        memcpy(x, d, size);
        for (int f = 0; f < 4; f++) {
            s = s * 6364136223846793005ull + 1442695040888963407ull;
            x[(s >> 33) % size] ^= (uint8_t)(1u << ((s >> 20) % 8));
        }
        write_bytes(bad, x, size);
        int rc = tu_runf(&out, "run %s", bad);
        /* 1: the runtime's load checks refuse it, and say so */
        ck_assert_msg(rc == 0 || rc == 2 || (rc == 1 && tu_contains(out, "ExecuTorch's runtime refuses it")),
                      "flip %d: exit %d: %s", k, rc, out);
        free(out);
    }
    free(x);
    free(d);
}
END_TEST

START_TEST(export_command_and_overwrite)
{
    const char *dir = tu_tmpdir();
    char path[512];
    snprintf(path, sizeof path, "%s/sc.pte", dir);
    const char *sample = tu_root("samples/shared_constant.pt2");
    char *out = NULL;
    ck_assert_int_eq(tu_runf(&out, "export %s -o %s", sample, path), 0);
    ck_assert_msg(tu_contains(out, "wrote ") && tu_contains(out, "ExecuTorch program (ET12) of step 8 emit"), "%s", out);
    ck_assert(tu_contains(out, "delegates 1: BundledBackend"));
    ck_assert(tu_contains(out, "arena     48 bytes for 48 bytes of tensors (3 tensors)"));
    free(out);
    ck_assert_int_eq(tu_runf(&out, "export %s -o %s", sample, path), 2);
    ck_assert_msg(tu_contains(out, "exists: give --force"), "%s", out);
    free(out);
    ck_assert_int_eq(tu_runf(&out, "export %s -o %s --force --step partition --json", sample, path), 0);
    cJSON *j = cJSON_Parse(out);
    ck_assert_msg(j != NULL, "%s", out);
    ck_assert_str_eq(cJSON_GetObjectItem(j, "pass")->valuestring, "partition");
    ck_assert(cJSON_IsTrue(cJSON_GetObjectItem(j, "ran_to_executorch")));
    ck_assert_int_eq(cJSON_GetObjectItem(j, "delegate_calls")->valueint, 0);
    cJSON_Delete(j);
    free(out);
    ck_assert_int_eq(tu_runf(&out, "run %s --compare-with %s", path, sample), 0);
    free(out);
    ck_assert_int_eq(tu_runf(&out, "export %s", sample), 2);
    ck_assert(tu_contains(out, "-o OUT"));
    free(out);
    /* the to_executorch steps show in the pipeline */
    ck_assert_int_eq(tu_runf(&out, "passes %s", sample), 0);
    ck_assert_msg(tu_contains(out, "memory_plan") && tu_contains(out, "greedy: arena 48 bytes for 48 bytes of tensors (3 tensors in 3 shared objects)"),
                  "%s", out);
    free(out);
}
END_TEST

/* --compare-with tells a difference (exit 1) from agreement (exit 0). */
START_TEST(compare_with_finds_differences)
{
    const char *dir = tu_tmpdir();
    char a[512], b[512];
    int64_t four = 4;
    for (int k = 0; k < 2; k++) {
        ls_builder *bd = ls_builder_new("model", LS_DIALECT_ATEN);
        ls_tmeta m = ls_meta(LS_DT_F32, 1, &four);
        uint32_t x = ls_build_input(bd, "x", LS_IN_USER_INPUT, NULL, false, &m, NULL);
        ls_arg *args = ls_calloc(2, sizeof *args);
        args[0] = ls_arg_node(x);
        args[1] = ls_arg_float(k ? 2.0 : 1.0);
        uint32_t y = ls_build_call(bd, NULL, LS_OP_mul_Scalar, args, 2, NULL);
        ls_build_output(bd, &y, 1, NULL, NULL);
        ls_program *p = ls_builder_finish(bd);
        snprintf(k ? b : a, 512, "%s/m%d.pt2", dir, k);
        ls_error err;
        ck_assert_msg(ls_write_pt2(p, k ? b : a, NULL, &err) == 0, "%s", err.msg);
        ls_program_unref(p);
    }
    char *out = NULL;
    ck_assert_int_eq(tu_runf(&out, "run %s --compare-with %s", a, a), 0);
    free(out);
    ck_assert_int_eq(tu_runf(&out, "run %s --steps 2 --compare-with %s", a, b), 1);
    ck_assert_msg(tu_contains(out, "DIFFERS") && tu_contains(out, "2 differ"), "%s", out);
    free(out);
}
END_TEST

/* Node by node: same names, ops, args and values, apart from what torch.export's JSON does not
 * keep (placeholder tags; getitems torch adds for outputs nothing reads). */
static void same_program(const char *what, const ls_program *a, const ls_program *b)
{
    uint32_t j = 0;
    for (uint32_t i = 0; i < a->n_nodes; i++, j++) {
        while (j < b->n_nodes && strstr(b->nodes[j]->name, "_unused_")) j++;
        ck_assert_msg(j < b->n_nodes, "%s: %s is missing", what, a->nodes[i]->name);
        const ls_node *x = a->nodes[i], *y = b->nodes[j];
        ck_assert_msg(x->name == y->name && x->kind == y->kind && x->op == y->op && x->nargs == y->nargs,
                      "%s: %s against %s", what, x->name, y->name);
        if (x->kind != LS_NODE_PLACEHOLDER) ck_assert_msg(x->tag == y->tag, "%s: %s: tag", what, x->name);
        ck_assert_msg(x->val_kind == y->val_kind && x->nvals == y->nvals, "%s: %s: value", what, x->name);
        for (uint16_t k = 0; k < x->nvals; k++) ck_assert(ls_tmeta_equal(&x->vals[k], &y->vals[k]));
        for (uint16_t k = 0; k < x->nargs; k++) {
            ls_arg u = x->args[k], v = y->args[k];
            if (u.kind == LS_ARG_NODE && v.kind == LS_ARG_NODE) { /* ids differ; names must not */
                ck_assert_ptr_eq(ls_program_node(a, u.v.node)->name, ls_program_node(b, v.v.node)->name);
                continue;
            }
            if (u.kind == LS_ARG_NODES || u.kind == LS_ARG_OPT_NODES) continue;
            ck_assert_msg(ls_arg_equal(&u, &v), "%s: %s argument %u", what, x->name, k);
        }
    }
    ck_assert_uint_eq(a->n_inputs, b->n_inputs);
    for (uint32_t i = 0; i < a->n_inputs; i++) {
        ck_assert_ptr_eq(a->inputs[i].name, b->inputs[i].name);
        ck_assert_int_eq(a->inputs[i].kind, b->inputs[i].kind);
        ck_assert_ptr_eq(a->inputs[i].target, b->inputs[i].target);
        const ls_named_tensor *ea = ls_program_spec_data(a, &a->inputs[i]), *eb = ls_program_spec_data(b, &b->inputs[i]);
        ck_assert((ea == NULL) == (eb == NULL));
        if (ea && ea->t) ck_assert(ls_tensor_equal(ea->t, eb->t));
    }
    ck_assert_uint_eq(a->n_outputs, b->n_outputs);
    for (uint32_t i = 0; i < a->n_outputs; i++) {
        ck_assert_int_eq(a->outputs[i].kind, b->outputs[i].kind);
        ck_assert_ptr_eq(a->outputs[i].name, b->outputs[i].name);
        ck_assert_ptr_eq(a->outputs[i].target, b->outputs[i].target);
    }
}

START_TEST(pt2_round_trip)
{
    const char *dir = tu_tmpdir();
    for (size_t k = 0; k < PF_N_SAMPLES; k++) {
        ls_program *p = pf_sample(pf_samples[k].name);
        ls_history h;
        pf_lower(p, NULL, &h);
        for (uint32_t s = 0; s < h.n; s++) {
            char path[512];
            snprintf(path, sizeof path, "%s/%s_%u.pt2", dir, pf_samples[k].name, s);
            ls_export_summary sum;
            ls_error err;
            int rc = ls_export(&h, (int)s, path, true, &sum, &err);
            bool lowered = h.steps[s].program->n_subs > 0;
            if (lowered) { /* refused, saying why */
                ck_assert_int_ne(rc, 0);
                ck_assert_msg(tu_contains(err.msg, "torch.export's JSON cannot express") &&
                                  tu_contains(err.msg, h.steps[s].pass),
                              "%s", err.msg);
                continue;
            }
            ck_assert_msg(rc == 0, "%s step %u: %s", pf_samples[k].name, s, err.msg);
            ck_assert(sum.pt2);
            ls_export_summary_free(&sum);
            ls_program *back;
            ck_assert_msg(ls_load(path, NULL, &back, &err) == 0, "%s", err.msg);
            char what[160];
            snprintf(what, sizeof what, "%s step %u (%s)", pf_samples[k].name, s, h.steps[s].pass);
            same_program(what, h.steps[s].program, back);
            ls_program_unref(back);
        }
        ls_history_free(&h);
        ls_program_unref(p);
    }
    /* the members of torch.export.save's layout, data 64-byte aligned */
    char path[512];
    snprintf(path, sizeof path, "%s/kv.pt2", dir);
    char *out = NULL;
    ck_assert_int_eq(tu_runf(&out, "export %s -o %s --step to_edge", tu_root("samples/kv_cache.pt2"), path), 0);
    free(out);
    size_t size;
    uint8_t *d = pt_load(path, &size);
    const char *want[] = {"kv/data/weights/weight_0",  "kv/data/weights/model_weights_config.json",
                          "kv/data/constants/model_constants_config.json", "kv/models/model.json",
                          "kv/archive_format",         "kv/archive_version",
                          "kv/.data/version",          "kv/byteorder",
                          "kv/.data/serialization_id"};
    size_t off = 0, m = 0;
    while (off + 30 <= size && le(d + off, 4) == 0x04034b50) {
        size_t nl = le(d + off + 26, 2), el = le(d + off + 28, 2), cs = le(d + off + 18, 4);
        ck_assert_uint_eq(le(d + off + 8, 2), 0); /* stored */
        ck_assert_msg(m < 9 && strlen(want[m]) == nl && memcmp(d + off + 30, want[m], nl) == 0, "member %zu", m);
        ck_assert_uint_eq((off + 30 + nl + el) % 64, 0);
        off += 30 + nl + el + cs;
        m++;
    }
    ck_assert_uint_eq(m, 9);
    free(d);
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
    tcase_add_test(tc, every_sample_loads_in_executorch_from_the_cli);
    tcase_add_test(tc, stand_in_blob_is_not_the_stock_backend);
    tcase_add_test(tc, damaged_exports_are_refused);
    tcase_add_test(tc, export_command_and_overwrite);
    tcase_add_test(tc, compare_with_finds_differences);
    tcase_add_test(tc, pt2_round_trip);
    tcase_add_test(tc, export_program_directly);
    tcase_add_test(tc, real_pte_files_export_again);
    suite_add_tcase(s, tc);
    return s;
}
