/* XNNPACK's partitioner: ConfigerationBasedPartitioner's node groups and GroupBasedPartitioner's
 * numbering (exir/backend/canonical_partitioners/{config,group}_partitioner.py), worked by hand
 * from that code on small programs and compared with CapabilityBasedPartitioner's; the shipped
 * profile found by name from any directory; to_edge keeping linear for XNNPACK; the samples. */
#include <check.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "passtest.h"
#include "progfixtures.h"
#include "testutil.h"

static const int64_t FOUR = 4;

static ls_profile *xnnpack(void)
{
    ls_profile *p;
    ls_error err;
    if (ls_profile_load("xnnpack", &p, &err) != 0) ck_abort_msg("%s", err.msg);
    return p;
}

static bool is_op(const ls_node *n, ls_op_id id)
{
    return n->kind == LS_NODE_CALL && n->op && n->op->id == id;
}

static const char *tag_of(const ls_program *p, const char *name)
{
    return pt_must(p, name)->tag;
}

/* a = relu(x); w = where(m, a, x) (XNNPACK has no where); c = add(w, a); d = neg(y).
 * Reverse order: d → id 0, c → id 1, a → id 2. GroupBasedPartitioner: p1 = 0 absorbs 1 (c's only
 * outside user is the output), not 2 (a's user `where` reaches c): {d, c} tag0, {a} tag2.
 * CapabilityBasedPartitioner: c joins d horizontally and the tie keeps the new id 1: tag1, tag2. */
START_TEST(group_numbering_keeps_the_first_id)
{
    ls_builder *b = ls_builder_new("model", LS_DIALECT_EDGE);
    uint32_t x = pt_input(b, "x", LS_IN_USER_INPUT, NULL, false, LS_DT_F32, 1, &FOUR);
    uint32_t y = pt_input(b, "y", LS_IN_USER_INPUT, NULL, false, LS_DT_F32, 1, &FOUR);
    uint32_t m = pt_input(b, "m", LS_IN_USER_INPUT, NULL, false, LS_DT_BOOL, 1, &FOUR);
    uint32_t a = pt_unary(b, LS_OP_relu, x);
    ls_arg *wa = calloc(3, sizeof *wa);
    wa[0] = ls_arg_node(m);
    wa[1] = ls_arg_node(a);
    wa[2] = ls_arg_node(x);
    ls_tmeta mf = ls_meta(LS_DT_F32, 1, &FOUR);
    uint32_t w = ls_build_call(b, NULL, LS_OP_where_self, wa, 3, &mf);
    uint32_t o[2] = {pt_bin(b, LS_OP_add_Tensor, w, a), pt_unary(b, LS_OP_neg, y)};
    ls_build_output(b, o, 2, NULL, NULL);
    ls_program *p = ls_builder_finish(b);
    ls_profile *prof = xnnpack();
    ls_program *q = pt_run(ls_pass_partition, p, prof, NULL, NULL);
    ck_assert_msg(tag_of(q, "aten_add_tensor"), "%s", ls_cpu_why(pt_must(q, "aten_add_tensor")->reason, pt_must(q, "aten_add_tensor")->reason_detail));
    ck_assert_str_eq(tag_of(q, "aten_neg_default"), "tag0");
    ck_assert_str_eq(tag_of(q, "aten_add_tensor"), "tag0");
    ck_assert_str_eq(tag_of(q, "aten_relu_default"), "tag2");
    ck_assert_int_eq(pt_must(q, "aten_where_self")->reason, LS_WHY_OP_UNSUPPORTED);
    ck_assert_uint_eq(q->n_tags, 2);
    ck_assert_str_eq(q->tags[0].tag, "tag0");
    ck_assert_str_eq(q->tags[1].tag, "tag2");
    ls_program_unref(q);
    ls_profile *cap = pt_profile("{\"name\": \"cap\", \"backend_id\": \"CapBackend\", \"ops\": [\"relu\", \"add\", \"neg\"]}");
    q = pt_run(ls_pass_partition, p, cap, NULL, NULL);
    ck_assert_str_eq(tag_of(q, "aten_neg_default"), "tag1");
    ck_assert_str_eq(tag_of(q, "aten_add_tensor"), "tag1");
    ck_assert_str_eq(tag_of(q, "aten_relu_default"), "tag2");
    ls_program_unref(q);
    ls_profile_free(cap);
    ls_profile_free(prof);
    ls_program_unref(p);
}
END_TEST

static uint32_t linear(ls_builder *b, uint32_t x, uint32_t w)
{
    int64_t s[2] = {4, 4};
    ls_arg *a = calloc(2, sizeof *a);
    a[0] = ls_arg_node(x);
    a[1] = ls_arg_node(w);
    ls_tmeta m = ls_meta(LS_DT_F32, 2, s);
    return ls_build_call(b, NULL, LS_OP_linear, a, 2, &m);
}

/* Two linears share one weight, split by silu (not an XNNPACK op). Groups in graph order: the
 * first linear takes w; the second leaves it ("partitioner infra copies constant data across
 * partitions"). Reverse order: linear_1 → id 0, {w, linear} → id 1; silu keeps them apart. */
START_TEST(group_shared_weight_stays_with_the_first_gemm)
{
    int64_t s[2] = {4, 4};
    ls_builder *b = ls_builder_new("model", LS_DIALECT_EDGE);
    uint32_t w = pt_input(b, "p_w", LS_IN_PARAMETER, "w", true, LS_DT_F32, 2, s);
    uint32_t x = pt_input(b, "x", LS_IN_USER_INPUT, NULL, false, LS_DT_F32, 2, s);
    uint32_t h = linear(b, pt_unary(b, LS_OP_silu, linear(b, x, w)), w);
    ls_build_output(b, &h, 1, NULL, NULL);
    ls_program *p = ls_builder_finish(b);
    ls_profile *prof = xnnpack();
    ls_report rep = {0};
    ls_program *q = pt_run(ls_pass_partition, p, prof, &rep, NULL);
    ck_assert_str_eq(tag_of(q, "aten_linear_default_1"), "tag0");
    ck_assert_str_eq(tag_of(q, "aten_linear_default"), "tag1");
    ck_assert_str_eq(tag_of(q, "p_w"), "tag1");
    ck_assert(pt_report_has(&rep, "tag1 takes the constants its ops bring with them: `p_w`"));
    ls_report_free(&rep);
    /* duplicate_constants gives tag0 its own copy (PR #24481) */
    pt_step(&q, ls_pass_duplicate_constants, prof);
    pt_step(&q, ls_pass_to_backend, prof);
    ck_assert_uint_eq(pt_count_op(q, LS_OP_call_delegate), 2);
    ck_assert(!pt_target_twice(q));
    ls_program_unref(q);
    ls_profile_free(prof);
    ls_program_unref(p);
}
END_TEST

/* kv_cache (the Core ML issue's model) with XNNPACK: only the transpose is taken, as tag0; mm
 * reads the updated cache (computed) and index_put has no XNNPACK config. */
START_TEST(kv_cache_with_xnnpack)
{
    ls_program *p = pf_sample("kv_cache");
    ls_history h;
    pf_lower_backend(p, "xnnpack", &h);
    ls_error err;
    int s = ls_history_find_step(&h, "partition:xnnpack", &err);
    ck_assert_int_ge(s, 0);
    const ls_program *q = h.steps[s].program;
    ck_assert_str_eq(tag_of(q, "aten_permute_copy_default"), "tag0");
    ck_assert_int_eq(pt_must(q, "aten_index_put_default")->reason, LS_WHY_OP_UNSUPPORTED);
    ck_assert_str_eq(ls_cpu_why((ls_cpu_reason)pt_must(q, "aten_mm_default")->reason, pt_must(q, "aten_mm_default")->reason_detail),
                     "XNNPACK needs a constant weight: `mat2` (arg 1) is computed by `aten_permute_copy_default` (rule const_arg:1)");
    ck_assert_ptr_null(tag_of(q, "b_cache")); /* XNNPACK keeps no state */
    ls_history_free(&h);
    ls_program_unref(p);
}
END_TEST

/* to_edge keeps linear whole for XNNPACK (LinearConfig.get_original_aten, filtered by its
 * check_constraints): with a parameter weight it stays linear; with a computed weight it is
 * decomposed, as without the backend. */
START_TEST(to_edge_keeps_linear_for_xnnpack)
{
    int64_t s[2] = {4, 4};
    ls_builder *b = ls_builder_new("model", LS_DIALECT_ATEN);
    uint32_t w = pt_input(b, "p_w", LS_IN_PARAMETER, "w", true, LS_DT_F32, 2, s);
    uint32_t x = pt_input(b, "x", LS_IN_USER_INPUT, NULL, false, LS_DT_F32, 2, s);
    uint32_t h = linear(b, x, w);
    uint32_t h2 = linear(b, h, pt_unary(b, LS_OP_relu, x));
    uint32_t o[2] = {h, h2};
    ls_build_output(b, o, 2, NULL, NULL);
    ls_program *p = ls_builder_finish(b);
    ls_profile *prof = xnnpack();
    const ls_profile *backends[1] = {prof};
    ls_report rep = {0};
    ls_error err;
    ls_pass_ctx ctx = {.report = &rep, .err = &err, .backends = backends, .n_backends = 1};
    ls_program *q = NULL;
    ck_assert_int_eq(ls_pass_to_edge(p, &q, &ctx), 0);
    ck_assert_uint_eq(pt_count_op(q, LS_OP_linear), 1);
    ck_assert_uint_eq(pt_count_op(q, LS_OP_mm), 1);
    ck_assert(pt_report_has(&rep, "`linear` (aten.linear.default) is kept whole for xnnpack (ops_to_not_decompose)"));
    ls_report_free(&rep);
    ls_program_unref(q);
    ctx.n_backends = 0;
    ck_assert_int_eq(ls_pass_to_edge(p, &q, &ctx), 0);
    ck_assert_uint_eq(pt_count_op(q, LS_OP_linear), 0);
    ls_program_unref(q);
    ls_report_free(&rep);
    ls_profile_free(prof);
    ls_program_unref(p);
}
END_TEST

/* The shipped profiles are in the binary: --backend xnnpack works from any directory. */
START_TEST(shipped_profiles_from_any_directory)
{
    const char *bin = getenv("LS_BIN");
    if (!bin) return;
    char cmd[2048];
    snprintf(cmd, sizeof cmd, "cd '%s' && '%s' partitions '%s' --backend xnnpack 2>&1", tu_tmpdir(), bin,
             tu_root("samples/kv_cache.pt2"));
    FILE *f = popen(cmd, "r");
    ck_assert_ptr_nonnull(f);
    char buf[8192];
    size_t n = fread(buf, 1, sizeof buf - 1, f);
    buf[n] = 0;
    ck_assert_int_eq(pclose(f), 0);
    ck_assert_msg(strstr(buf, "tag0: XnnpackBackend"), "%s", buf);
    char *out;
    ck_assert_int_eq(tu_runf(&out, "passes %s --backend nosuch", tu_root("samples/kv_cache.pt2")), 2);
    ck_assert_msg(tu_contains(out, "no backend profile named 'nosuch' (profiles: bundled, "), "%s", out);
    ck_assert_msg(tu_contains(out, "xnnpack"), "%s", out);
    free(out);
    uint32_t count;
    const char *const *names = ls_profile_shipped(&count);
    for (uint32_t i = 0; i < count; i++) {
        ls_profile *p;
        ls_error err;
        ck_assert_msg(ls_profile_load(names[i], &p, &err) == 0, "%s: %s", names[i], err.msg);
        ck_assert_msg(p->follows && strstr(p->follows, "pytorch/executorch@"), "%s names no ExecuTorch commit", names[i]);
        ls_profile_free(p);
    }
}
END_TEST

/* tiny_llama with XNNPACK: attention's q·kᵀ and probs·v (two computed operands) stay on the
 * CPU, each with the rule's reason; every linear is delegated. */
START_TEST(tiny_llama_attention_mm_on_cpu)
{
    char *out;
    ck_assert_int_eq(tu_runf(&out, "partitions %s --backend xnnpack", tu_root("samples/tiny_llama.pt2")), 0);
    ck_assert_msg(tu_contains(out, "XNNPACK needs a constant weight: `mat2` (arg 1) is computed by `aten_permute_copy_default` "
                                   "(rule const_arg:1)"),
                  "%s", out);
    free(out);
    ls_program *p = pf_sample("tiny_llama");
    ls_history h;
    pf_lower_backend(p, "xnnpack", &h);
    ls_error err;
    int s = ls_history_find_step(&h, "partition:xnnpack", &err);
    const ls_program *q = h.steps[s].program;
    uint32_t mm_cpu = 0, mm = 0, lin = 0, lin_cpu = 0;
    for (uint32_t i = 0; i < q->n_nodes; i++) {
        const ls_node *n = q->nodes[i];
        if (is_op(n, LS_OP_mm)) {
            mm++;
            if (!n->tag) {
                mm_cpu++;
                ck_assert_int_eq(n->reason, LS_WHY_RULE);
                ck_assert(strstr(n->reason_detail, "(rule const_arg:1)"));
            }
        }
        if (is_op(n, LS_OP_linear)) lin++, lin_cpu += !n->tag;
    }
    ck_assert_uint_eq(mm, mm_cpu); /* every mm of tiny_llama multiplies two computed tensors */
    ck_assert_uint_gt(mm, 0);
    ck_assert_uint_gt(lin, 0);
    ck_assert_uint_eq(lin_cpu, 0);
    ls_history_free(&h);
    ls_program_unref(p);
}
END_TEST

Suite *partition_group_suite(void)
{
    Suite *s = suite_create("partition_group");
    TCase *tc = tcase_create("group");
    tcase_set_timeout(tc, 30);
    tcase_add_test(tc, group_numbering_keeps_the_first_id);
    tcase_add_test(tc, group_shared_weight_stays_with_the_first_gemm);
    tcase_add_test(tc, kv_cache_with_xnnpack);
    tcase_add_test(tc, to_edge_keeps_linear_for_xnnpack);
    tcase_add_test(tc, shipped_profiles_from_any_directory);
    tcase_add_test(tc, tiny_llama_attention_mm_on_cpu);
    suite_add_tcase(s, tc);
    return s;
}
