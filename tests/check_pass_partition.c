/* partition: CapabilityBasedPartitioner's grouping and numbering (exir-semantics §4.2-4.3),
 * tag_constant_data / tag_mutated_buffer (§3), the reasons of CPU nodes and the mask refusals
 * (D8), test 12 (Core ML's KV cache) and test 13 (two delegates with a buffer each). */
#include <check.h>
#include <stdlib.h>
#include <string.h>

#include "passtest.h"

static const int64_t TWO = 2;

static const char *tag_of(const ls_program *p, const char *name)
{
    return pt_must(p, name)->tag;
}

/* A chain of six supported adds visited from the output side is tag1 (ids 0, 1 tie → 1 wins). */
START_TEST(chain_of_six_adds_is_tag1)
{
    ls_builder *b = ls_builder_new("model", LS_DIALECT_EDGE);
    uint32_t x = pt_input(b, "x", LS_IN_USER_INPUT, NULL, false, LS_DT_F32, 1, &TWO);
    uint32_t h = x;
    for (int i = 0; i < 6; i++) h = pt_bin(b, LS_OP_add_Tensor, h, x);
    ls_build_output(b, &h, 1, NULL, NULL);
    ls_program *p = ls_builder_finish(b);
    pt_step(&p, ls_pass_partition, ls_profile_bundled());
    for (uint32_t i = 0; i < p->n_nodes; i++)
        if (p->nodes[i]->kind == LS_NODE_CALL) ck_assert_str_eq(p->nodes[i]->tag, "tag1");
    ck_assert_uint_eq(p->n_tags, 1);
    ck_assert_str_eq(p->tags[0].tag, "tag1");
    ck_assert_str_eq(p->tags[0].backend_id, "BundledBackend");
    ls_program_unref(p);
}
END_TEST

/* Two supported nodes split by an unsupported one: the one nearer the output is tag0. */
START_TEST(split_by_unsupported_numbers_from_output)
{
    ls_builder *b = ls_builder_new("model", LS_DIALECT_EDGE);
    uint32_t x = pt_input(b, "x", LS_IN_USER_INPUT, NULL, false, LS_DT_F32, 1, &TWO);
    uint32_t h = pt_unary(b, LS_OP_relu, x);
    h = pt_unary(b, LS_OP_sin, h);
    h = pt_unary(b, LS_OP_relu, h);
    ls_build_output(b, &h, 1, NULL, NULL);
    ls_program *p = ls_builder_finish(b);
    ls_report rep = {0};
    ls_program *q = pt_run(ls_pass_partition, p, ls_profile_bundled(), &rep, NULL);
    ck_assert_str_eq(tag_of(q, "aten_relu_default_1"), "tag0");
    ck_assert_str_eq(tag_of(q, "aten_relu_default"), "tag1");
    const ls_node *s = pt_must(q, "aten_sin_default");
    ck_assert_ptr_null(s->tag);
    ck_assert_int_eq(s->reason, LS_WHY_OP_UNSUPPORTED);
    ck_assert(pt_report_has(&rep, "`aten_sin_default` (aten.sin.default) stays on the CPU: op not supported"));
    ck_assert_str_eq(q->tags[0].tag, "tag0"); /* partition_tags in id order */
    ck_assert_str_eq(q->tags[1].tag, "tag1");
    /* the input is shared: partition copies only the nodes it changes */
    ck_assert_ptr_eq(q->nodes[0], p->nodes[0]);
    ls_report_free(&rep);
    ls_program_unref(q);
    ls_program_unref(p);
}
END_TEST

/* Independent supported nodes merge horizontally; a node that would close a cycle does not. */
START_TEST(horizontal_fusion_unless_cycle)
{
    ls_builder *b = ls_builder_new("model", LS_DIALECT_EDGE);
    uint32_t x = pt_input(b, "x", LS_IN_USER_INPUT, NULL, false, LS_DT_F32, 1, &TWO);
    uint32_t y = pt_input(b, "y", LS_IN_USER_INPUT, NULL, false, LS_DT_F32, 1, &TWO);
    uint32_t a = pt_unary(b, LS_OP_relu, x);       /* feeds sin and add: cannot join add's partition */
    uint32_t s = pt_unary(b, LS_OP_sin, a);
    uint32_t c = pt_bin(b, LS_OP_add_Tensor, s, a);
    uint32_t d = pt_unary(b, LS_OP_neg, y);         /* independent: joins add's partition */
    uint32_t o[2] = {c, d};
    ls_build_output(b, o, 2, NULL, NULL);
    ls_program *p = ls_builder_finish(b);
    pt_step(&p, ls_pass_partition, ls_profile_bundled());
    ck_assert_str_eq(tag_of(p, "aten_neg_default"), "tag1"); /* ids: neg 0, add 1 (tie: 1 kept) */
    ck_assert_str_eq(tag_of(p, "aten_add_tensor"), "tag1");
    ck_assert_str_eq(tag_of(p, "aten_relu_default"), "tag2");
    pt_step(&p, ls_pass_to_backend, NULL);
    ck_assert_uint_eq(p->n_subs, 2);
    ls_program_unref(p);
}
END_TEST

/* A profile with one partition only: the node that would form a cycle stays on the CPU. */
START_TEST(single_partition_cycle_reason)
{
    ls_builder *b = ls_builder_new("model", LS_DIALECT_EDGE);
    uint32_t x = pt_input(b, "x", LS_IN_USER_INPUT, NULL, false, LS_DT_F32, 1, &TWO);
    uint32_t a = pt_unary(b, LS_OP_relu, x);
    uint32_t s = pt_unary(b, LS_OP_sin, a);
    uint32_t c = pt_bin(b, LS_OP_add_Tensor, s, a);
    ls_build_output(b, &c, 1, NULL, NULL);
    ls_program *p = ls_builder_finish(b);
    ls_profile *prof = pt_profile("{\"name\": \"one\", \"backend_id\": \"OneBackend\", \"single_partition\": true, "
                                  "\"all_except\": [\"sin\"]}");
    pt_step(&p, ls_pass_partition, prof);
    ck_assert_str_eq(tag_of(p, "aten_add_tensor"), "tag0");
    const ls_node *r = pt_must(p, "aten_relu_default");
    ck_assert_ptr_null(r->tag);
    ck_assert_int_eq(r->reason, LS_WHY_CYCLE);
    ck_assert_str_eq(ls_cpu_reason_text(LS_WHY_CYCLE), "would form a cycle");
    ls_profile_free(prof);
    ls_program_unref(p);
}
END_TEST

/* dtype limits: float64 stays on the CPU with the dtype it refused; per-op limits from JSON. */
START_TEST(dtype_reasons)
{
    ls_builder *b = ls_builder_new("model", LS_DIALECT_EDGE);
    uint32_t x = pt_input(b, "x", LS_IN_USER_INPUT, NULL, false, LS_DT_F64, 1, &TWO);
    uint32_t y = pt_input(b, "y", LS_IN_USER_INPUT, NULL, false, LS_DT_F32, 1, &TWO);
    uint32_t o[2] = {pt_unary(b, LS_OP_relu, x), pt_unary(b, LS_OP_exp, y)};
    ls_build_output(b, o, 2, NULL, NULL);
    ls_program *p = ls_builder_finish(b);
    ls_program *q = pt_run(ls_pass_partition, p, ls_profile_bundled(), NULL, NULL);
    const ls_node *r = pt_must(q, "aten_relu_default");
    ck_assert_int_eq(r->reason, LS_WHY_DTYPE);
    ck_assert_str_eq(r->reason_detail, "float64 not supported");
    ck_assert_ptr_nonnull(tag_of(q, "aten_exp_default"));
    ls_program_unref(q);
    ls_profile *prof = pt_profile("{\"name\": \"f16\", \"backend_id\": \"HalfBackend\", \"tag_prefix\": \"half\", "
                                  "\"ops\": [{\"op\": \"relu\", \"dtypes\": [\"float64\"]}, {\"op\": \"aten.exp.default\", "
                                  "\"dtypes\": [\"float16\"]}]}");
    q = pt_run(ls_pass_partition, p, prof, NULL, NULL);
    ck_assert_str_eq(tag_of(q, "aten_relu_default"), "half0");
    ck_assert_int_eq(pt_must(q, "aten_exp_default")->reason, LS_WHY_DTYPE);
    ck_assert_str_eq(pt_must(q, "aten_exp_default")->reason_detail, "float32 not supported");
    ls_program_unref(q);
    ls_profile_free(prof);
    ls_program_unref(p);
}
END_TEST

START_TEST(profile_json_errors)
{
    ls_profile *p;
    ls_error err;
    const char *bad[][2] = {
        {"{\"backend_id\": \"B\", \"ops\": []}", "'name' is missing"},
        {"{\"name\": \"n\", \"ops\": []}", "'backend_id' is missing"},
        {"{\"name\": \"n\", \"backend_id\": \"B\"}", "give 'ops'"},
        {"{\"name\": \"n\", \"backend_id\": \"B\", \"ops\": [\"frobnicate\"]}", "ops[0]: unknown operator 'frobnicate'"},
        {"{\"name\": \"n\", \"backend_id\": \"B\", \"ops\": [{\"op\": \"add\", \"dtypes\": [\"float128\"]}]}",
         "ops[0].dtypes[0]: unknown dtype 'float128'"},
        {"{\"name\": \"n\", \"backend_id\": \"B\", \"ops\": [], \"stateful\": 1}", "'stateful' must be true or false"},
        {"{\"name\": \"n\", \"backend_id\": \"B\", \"opz\": []}", "unknown field 'opz'"},
        {"{\"name\": ", "not valid JSON"},
    };
    for (size_t i = 0; i < sizeof bad / sizeof bad[0]; i++) {
        ck_assert_int_eq(ls_profile_parse("p.json", bad[i][0], strlen(bad[i][0]), &p, &err), -1);
        ck_assert_msg(strstr(err.msg, bad[i][1]) && strncmp(err.msg, "p.json: ", 8) == 0, "%s", err.msg);
    }
    ck_assert_int_eq(ls_profile_load("bundled", &p, &err), 0);
    ck_assert_ptr_eq(p, ls_profile_bundled());
    ck_assert_uint_eq(ls_profile_dtypes(p, ls_op_get(LS_OP_sin)), 0);
    ck_assert_uint_eq(ls_profile_dtypes(p, ls_op_get(LS_OP_cos)), 0);
    ck_assert_uint_ne(ls_profile_dtypes(p, ls_op_get(LS_OP_add_Tensor)) & LS_DTYPE_BIT(LS_DT_F32), 0);
    ck_assert_uint_eq(ls_profile_dtypes(p, ls_op_get(LS_OP_add_Tensor)) & LS_DTYPE_BIT(LS_DT_F64), 0);
    ck_assert(p->stateful && p->fold_masks);
    ck_assert_int_eq(ls_profile_load("/nonexistent/profile.json", &p, &err), -1);
    ck_assert(strstr(err.msg, "/nonexistent/profile.json"));
}
END_TEST

/* tag_constant_data: a constant goes with the smallest tag of its readers ("tag10" < "tag2");
 * an untagged reader does not prevent it. */
START_TEST(tag_constant_data_min_tag)
{
    ls_builder *b = ls_builder_new("model", LS_DIALECT_EDGE);
    uint32_t c = pt_input(b, "c", LS_IN_CONSTANT_TENSOR, "c", true, LS_DT_F32, 1, &TWO);
    uint32_t x = pt_input(b, "x", LS_IN_USER_INPUT, NULL, false, LS_DT_F32, 1, &TWO);
    /* 11 relu/sin pairs so that tags reach two digits */
    uint32_t h = pt_bin(b, LS_OP_add_Tensor, x, c);
    for (int i = 0; i < 11; i++) h = pt_unary(b, LS_OP_relu, pt_unary(b, LS_OP_sin, h));
    h = pt_bin(b, LS_OP_mul_Tensor, h, c);
    ls_build_output(b, &h, 1, NULL, NULL);
    ls_program *p = ls_builder_finish(b);
    pt_step(&p, ls_pass_partition, ls_profile_bundled());
    const char *t_add = tag_of(p, "aten_add_tensor"), *t_mul = tag_of(p, "aten_mul_tensor");
    ck_assert_str_eq(t_mul, "tag1");  /* ids 0 (mul) and 1 (relu): tie */
    ck_assert_str_eq(t_add, "tag12");
    ck_assert_str_eq(tag_of(p, "c"), "tag1"); /* min("tag12", "tag1") */
    ls_program_unref(p);
}
END_TEST

/* Test 13: two regions with a buffer each, split by an unsupported mul: two delegates, each
 * with one buffer in its state dict and two placeholders. */
START_TEST(test13_partitioner_with_attributes)
{
    int64_t s13[2] = {1, 3};
    ls_builder *b = ls_builder_new("model", LS_DIALECT_EDGE);
    uint32_t one_a = pt_input(b, "b_a_one", LS_IN_BUFFER, "a.one", true, LS_DT_F32, 2, s13);
    uint32_t one_b = pt_input(b, "b_b_one", LS_IN_BUFFER, "b.one", true, LS_DT_F32, 2, s13);
    uint32_t x = pt_input(b, "x", LS_IN_USER_INPUT, NULL, false, LS_DT_F32, 2, s13);
    uint32_t y = pt_input(b, "y", LS_IN_USER_INPUT, NULL, false, LS_DT_F32, 2, s13);
    uint32_t h = pt_bin(b, LS_OP_add_Tensor, x, one_a);
    h = pt_bin(b, LS_OP_mul_Tensor, h, y);
    h = pt_bin(b, LS_OP_add_Tensor, h, one_b);
    ls_build_output(b, &h, 1, NULL, NULL);
    ls_program *p = ls_builder_finish(b);
    ls_profile *prof = pt_profile("{\"name\": \"adds\", \"backend_id\": \"AddBackend\", \"ops\": [\"add\"]}");
    pt_step(&p, ls_pass_partition, prof);
    ck_assert_str_eq(tag_of(p, "aten_add_tensor_1"), "tag0"); /* nearer the output: id 0 */
    ck_assert_str_eq(tag_of(p, "aten_add_tensor"), "tag1");
    ck_assert_str_eq(tag_of(p, "b_a_one"), "tag1");
    ck_assert_str_eq(tag_of(p, "b_b_one"), "tag0");
    ck_assert_int_eq(pt_must(p, "aten_mul_tensor")->reason, LS_WHY_OP_UNSUPPORTED);
    pt_step(&p, ls_pass_duplicate_constants, prof);
    pt_step(&p, ls_pass_to_backend, prof);
    ck_assert_uint_eq(p->n_subs, 2);
    for (uint32_t s = 0; s < 2; s++) {
        ck_assert_uint_eq(p->subs[s].program->n_state, 1);
        ck_assert_uint_eq(pt_count_kind(p->subs[s].program, LS_NODE_PLACEHOLDER), 2);
        ck_assert_str_eq(p->subs[s].backend_id, "AddBackend");
    }
    ck_assert_uint_eq(p->n_state, 0);
    ls_profile_free(prof);
    ls_program_unref(p);
}
END_TEST

/* Test 12 (Core ML test_buffer) with the bundled backend: the KV cache becomes the delegate's
 * state and the top level keeps only executorch_call_delegate and one getitem. */
START_TEST(test12_kv_cache_state)
{
    int64_t s23[2] = {2, 3}, s13[2] = {1, 3}, s1 = 1;
    ls_builder *b = ls_builder_new("model", LS_DIALECT_EDGE);
    uint32_t cache = pt_input(b, "b_cache", LS_IN_BUFFER, "cache", true, LS_DT_F32, 2, s23);
    uint32_t q = pt_input(b, "q", LS_IN_USER_INPUT, NULL, false, LS_DT_F32, 2, s13);
    uint32_t k = pt_input(b, "k_val", LS_IN_USER_INPUT, NULL, false, LS_DT_F32, 2, s13);
    uint32_t pos = pt_input(b, "input_pos", LS_IN_USER_INPUT, NULL, false, LS_DT_I64, 1, &s1);
    int64_t perm[2] = {1, 0}, s31[2] = {3, 1}, s21[2] = {2, 1};
    ls_arg *a = calloc(2, sizeof *a);
    a[0] = ls_arg_node(q);
    a[1] = ls_arg_ints(perm, 2);
    ls_tmeta m = ls_meta(LS_DT_F32, 2, s31);
    uint32_t qt = ls_build_call(b, NULL, LS_OP_permute_copy, a, 2, &m);
    a = calloc(3, sizeof *a);
    a[0] = ls_arg_node(cache);
    a[1] = ls_arg_opt_nodes(&pos, 1);
    a[2] = ls_arg_node(k);
    uint32_t put = ls_build_call(b, NULL, LS_OP_index_put, a, 3, NULL);
    m = ls_meta(LS_DT_F32, 2, s21);
    uint32_t mm = pt_bin(b, LS_OP_mm, put, qt);
    ls_node_vals_mut(ls_program_edit(ls_builder_program(b), ls_builder_program(b)->n_nodes - 1))[0] = m;
    uint32_t o[2] = {put, mm};
    ls_output_kind kinds[2] = {LS_OUT_BUFFER_MUTATION, LS_OUT_USER_OUTPUT};
    const char *t[2] = {"cache", NULL};
    ls_build_output(b, o, 2, kinds, t);
    ls_program *p = ls_builder_finish(b);
    ls_report rep = {0};
    ls_program *p1 = pt_run(ls_pass_partition, p, ls_profile_bundled(), &rep, NULL);
    ck_assert(pt_report_has(&rep, "mutable buffer `b_cache` goes with `tag1` (tag_mutated_buffer)"));
    ls_report_free(&rep);
    pt_step(&p1, ls_pass_to_backend, ls_profile_bundled());
    char *ops = pt_call_ops(p1);
    ck_assert_str_eq(ops, "executorch_call_delegate,getitem");
    free(ops);
    ck_assert_uint_eq(p1->n_state, 0);
    ck_assert_uint_eq(pt_count_outputs(p1, LS_OUT_BUFFER_MUTATION), 0);
    ck_assert_uint_eq(pt_sub(p1, "lowered_module_0")->n_state, 1);
    ls_program_unref(p1);
    /* a backend without state leaves the buffer at the top level */
    ls_profile *stateless = pt_profile("{\"name\": \"nostate\", \"backend_id\": \"B\", \"all_except\": []}");
    p1 = pt_run(ls_pass_partition, p, stateless, NULL, NULL);
    ck_assert_ptr_null(tag_of(p1, "b_cache"));
    pt_step(&p1, ls_pass_to_backend, stateless);
    ck_assert_uint_eq(pt_count_outputs(p1, LS_OUT_BUFFER_MUTATION), 1);
    ck_assert_str_eq(p1->outputs[0].name, "getitem"); /* the delegate returns the new value */
    ls_program_unref(p1);
    ls_profile_free(stateless);
    ls_program_unref(p);
}
END_TEST

/* D8: masks the bundled backend refuses to fold, each with its reason. */
START_TEST(d8_mask_refusals)
{
    int64_t s45[2] = {4, 5}, four = 4;
    ls_builder *b = ls_builder_new("model", LS_DIALECT_EDGE);
    uint32_t mp = pt_input(b, "p_mask_param", LS_IN_PARAMETER, "mask_param", true, LS_DT_BOOL, 1, &four);
    uint32_t mpb = pt_input(b, "b_mask_pbuf", LS_IN_BUFFER, "mask_pbuf", true, LS_DT_BOOL, 1, &four);
    uint32_t mm = pt_input(b, "b_mask_mut", LS_IN_BUFFER, "mask_mut", false, LS_DT_BOOL, 1, &four);
    uint32_t mc = pt_input(b, "c_mask", LS_IN_CONSTANT_TENSOR, "mask", true, LS_DT_BOOL, 1, &four);
    uint32_t idx = pt_input(b, "c_index", LS_IN_CONSTANT_TENSOR, "index", true, LS_DT_I64, 1, &TWO);
    uint32_t mf = pt_input(b, "c_mask_false", LS_IN_CONSTANT_TENSOR, "mask_false", true, LS_DT_BOOL, 1, &four);
    uint32_t x = pt_input(b, "x", LS_IN_USER_INPUT, NULL, false, LS_DT_F32, 2, s45);
    uint32_t min = pt_input(b, "mask_in", LS_IN_USER_INPUT, NULL, false, LS_DT_BOOL, 1, &four);
    int64_t u0 = 2;
    ls_tmeta out = ls_meta(LS_DT_F32, 2, (int64_t[]){u0, 5});
    uint32_t outs[7];
    uint32_t masks[6] = {0, min, mp, mpb, mm, mf};
    ls_arg *a = calloc(2, sizeof *a);
    a[0] = ls_arg_node(x);
    a[1] = ls_arg_float(0);
    ls_tmeta bm = ls_meta(LS_DT_BOOL, 2, s45);
    masks[0] = ls_build_call(b, NULL, LS_OP_gt_Scalar, a, 2, &bm);
    for (int i = 0; i < 6; i++) {
        a = calloc(2, sizeof *a);
        a[0] = ls_arg_node(x);
        a[1] = ls_arg_opt_nodes(&masks[i], 1);
        outs[i] = ls_build_call(b, NULL, LS_OP_index_Tensor, a, 2, &out);
    }
    a = calloc(2, sizeof *a);
    a[0] = ls_arg_node(x);
    uint32_t two[2] = {mc, idx};
    a[1] = ls_arg_opt_nodes(two, 2);
    outs[6] = ls_build_call(b, NULL, LS_OP_index_Tensor, a, 2, &out);
    uint32_t mut = pt_unary(b, LS_OP_logical_not, mm);
    uint32_t all[8] = {mut, outs[0], outs[1], outs[2], outs[3], outs[4], outs[5], outs[6]};
    ls_output_kind kinds[8] = {LS_OUT_BUFFER_MUTATION};
    const char *targets[8] = {"mask_mut"};
    ls_build_output(b, all, 8, kinds, targets);
    ls_program *p = ls_builder_finish(b);
    ls_named_tensor *f = ls_program_constant(p, "mask_false");
    for (int64_t i = 0; i < f->t->numel; i++) ls_tensor_set_f64(f->t, i, 0);
    pt_step(&p, ls_pass_partition, ls_profile_bundled());
    const ls_cpu_reason want[7] = {LS_WHY_MASK_COMPUTED, LS_WHY_MASK_INPUT,     LS_WHY_MASK_PARAMETER,
                                   LS_WHY_MASK_PARAMETER, LS_WHY_MASK_MUTATED, LS_WHY_MASK_ALL_FALSE,
                                   LS_WHY_MASK_OTHER_INDEX};
    for (int i = 0; i < 7; i++) {
        const ls_node *n = ls_program_node(p, outs[i]);
        ck_assert_ptr_null(n->tag);
        ck_assert_msg(n->reason == want[i], "%s: %s", n->name, ls_cpu_reason_text((ls_cpu_reason)n->reason));
    }
    ck_assert_str_eq(ls_cpu_reason_text(LS_WHY_MASK_ALL_FALSE), "mask refused: all false");
    ck_assert_ptr_nonnull(ls_program_node(p, masks[0])->tag); /* gt itself is delegated */
    ls_report rep = {0};
    ls_program *q = pt_run(ls_pass_fold_masks, p, ls_profile_bundled(), &rep, NULL);
    ck_assert(pt_report_has(&rep, "stays on the CPU: mask refused: a mutated buffer"));
    ls_report_free(&rep);
    ls_program_unref(q);
    ls_program_unref(p);
}
END_TEST

/* ---- a quadratic reference of CapabilityBasedPartitioner (exir-semantics §4.2): at every node
 * from the output side, the new one-node partition then every partition in creation order are
 * merged into the running first one unless the contracted graph would get a cycle (checked
 * exactly, by a search through the partitions as single vertices); the larger side keeps its
 * id, the running one on a tie. The pass must give the same partitions and ids. */
#define REF_MAX PT_DAG_MAX
typedef struct refg {
    pt_dag d;
    int part[REF_MAX], order[REF_MAX], alive[REF_MAX];
} refg;

static bool ref_can_merge(const refg *g, int a, int b)
{
    bool seen[REF_MAX] = {0};
    int q[REF_MAX * REF_MAX], h = 0, t = 0;
    for (int v = 0; v < g->d.n; v++)
        if (g->part[v] == a || g->part[v] == b)
            for (int k = 0; k < g->d.nus[v]; k++) {
                int u = g->d.users[v][k];
                if (g->part[u] != a && g->part[u] != b && !seen[u]) seen[u] = true, q[t++] = u;
            }
    while (h < t) {
        int v = q[h++];
        if (g->part[v] == a || g->part[v] == b) return false;
        for (int w = 0; w < g->d.n; w++) {
            if (w != v && (g->part[v] < 0 || g->part[w] != g->part[v])) continue;
            for (int k = 0; k < g->d.nus[w]; k++) {
                int u = g->d.users[w][k];
                if (!seen[u]) seen[u] = true, q[t++] = u;
            }
        }
    }
    return true;
}

static void ref_partition(refg *g)
{
    int next = 0;
    for (int v = 0; v < g->d.n; v++) g->part[v] = -1;
    for (int v = g->d.n - 1; v >= 0; v--) {
        int cands[REF_MAX], nc = 0;
        if (g->d.sup[v]) {
            g->part[v] = next;
            g->alive[next] = 1;
            g->order[next] = next;
            cands[nc++] = next++;
        }
        for (int o = 0; o < next; o++)
            for (int p = 0; p < next; p++)
                if (g->alive[p] && g->order[p] == o && (!nc || cands[0] != p)) cands[nc++] = p;
        for (int c = 1, self = nc ? cands[0] : -1; c < nc; c++) {
            int other = cands[c];
            if (!g->alive[other] || other == self || !ref_can_merge(g, self, other)) continue;
            int ss = 0, os = 0;
            for (int w = 0; w < g->d.n; w++) ss += g->part[w] == self, os += g->part[w] == other;
            int keep = ss < os ? other : self, gone = keep == self ? other : self;
            for (int w = 0; w < g->d.n; w++)
                if (g->part[w] == gone) g->part[w] = keep;
            g->alive[gone] = 0;
            if (g->order[gone] < g->order[keep]) g->order[keep] = g->order[gone];
            self = keep;
        }
    }
}

START_TEST(random_graphs_match_reference)
{
    unsigned seed = 12345;
    for (int trial = 0; trial < 400; trial++) {
        refg g;
        memset(&g, 0, sizeof g);
        pt_dag_random(&g.d, &seed, 1 + trial % 6);
        uint32_t id[REF_MAX];
        ls_program *p = pt_dag_program(&g.d, LS_OP_add_Tensor, LS_OP_atan2, id);
        pt_step(&p, ls_pass_partition, ls_profile_bundled());
        ref_partition(&g);
        pt_dag_expect_tags(p, id, g.part, g.d.n, trial);
        pt_step(&p, ls_pass_to_backend, ls_profile_bundled()); /* every partition is convex */
        ls_program_unref(p);
    }
}
END_TEST

Suite *pass_partition_suite(void)
{
    Suite *s = suite_create("pass_partition");
    TCase *tc = tcase_create("capability");
    tcase_add_test(tc, chain_of_six_adds_is_tag1);
    tcase_add_test(tc, split_by_unsupported_numbers_from_output);
    tcase_add_test(tc, horizontal_fusion_unless_cycle);
    tcase_add_test(tc, single_partition_cycle_reason);
    tcase_add_test(tc, dtype_reasons);
    tcase_add_test(tc, profile_json_errors);
    tcase_add_test(tc, tag_constant_data_min_tag);
    tcase_add_test(tc, test13_partitioner_with_attributes);
    tcase_add_test(tc, test12_kv_cache_state);
    tcase_add_test(tc, d8_mask_refusals);
    tcase_add_test(tc, random_graphs_match_reference);
    suite_add_tcase(s, tc);
    return s;
}
