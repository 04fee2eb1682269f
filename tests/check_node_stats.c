/* The per-node measurements of a run (node_stats.h) as the runtime fills them: time and the
 * range of every call node, NaN and Inf counted apart on a case worked by hand, and the
 * node-by-node comparison with the loaded program: nothing differs on a faithful lowering, and
 * on a lowered form that differs on purpose (two_delegates with its CPU cos made a sin) the
 * first divergence is that node, then the second delegate's output that reads it. */
#include <check.h>
#include <math.h>
#include <stdlib.h>
#include <string.h>

#include "compare.h"
#include "node_stats.h"
#include "progfixtures.h"

/* Runs p once beside ref on seeded inputs, node by node, into s. */
static void run_beside(const ls_program *p, const ls_program *ref, ls_node_stats *s)
{
    ls_error err;
    ls_runner *r = pf_runner(p);
    ls_node_stats_init(s, p, "bundled runtime");
    ls_runner_observe(r, s, true);
    ls_compare_run *c = ls_compare_run_new(ref, p, "the loaded program", NULL, &err);
    ck_assert_msg(c != NULL, "%s", err.msg);
    ls_compare_run_nodes(c, s);
    ls_value *in, *out;
    uint32_t n_in, n_out;
    ck_assert_msg(ls_make_inputs(p, 0, 0, &in, &n_in, &err) == 0, "%s", err.msg);
    ls_compare_run_inputs(c, in, n_in);
    ck_assert_msg(ls_runner_run(r, in, n_in, &out, &n_out, &err) == 0, "%s", err.msg);
    ck_assert_msg(ls_compare_run_step(c, out, n_out, NULL, r, &err) == 0, "%s", err.msg);
    pf_values_free(out, n_out);
    pf_values_free(in, n_in);
    ls_compare_run_free(c);
    ls_runner_free(r);
}

START_TEST(faithful_lowering_has_no_divergence)
{
    ls_history h = {0};
    ls_program *p = pf_sample("shared_constant");
    pf_lower(p, NULL, &h);
    int to_backend = ls_history_find_step(&h, "to_backend", NULL);
    ck_assert_int_gt(to_backend, 0);
    const ls_program *q = h.steps[to_backend].program;
    ls_node_stats s;
    run_beside(q, h.steps[0].program, &s);
    ck_assert_int_eq(s.runs, 1);
    uint32_t compared, calls = 0;
    ck_assert_uint_eq(ls_node_stats_differing(&s, &compared), 0);
    for (uint32_t i = 0; i < q->n_nodes; i++) {
        if (q->nodes[i]->kind != LS_NODE_CALL) continue;
        calls++;
        ck_assert_msg(s.v[i].timed && s.v[i].runs == 1, "%s was not measured", q->nodes[i]->name);
    }
    /* atan2 (CPU) and the delegate's getitem have a node of the same value in the loaded program */
    ck_assert_uint_ge(compared, 2);
    ck_assert_uint_le(compared, calls);
    int32_t g = ls_program_find(q, ls_intern("getitem"));
    ck_assert_int_ge(g, 0);
    ck_assert_msg(s.v[g].compared, "the delegate's output was not compared with the node it stands for");
    ck_assert_uint_eq(s.v[g].numel, 4); /* float32[4] */
    ck_assert(s.v[g].min <= s.v[g].max);
    ck_assert_int_eq(ls_node_stats_divergence(&s, -1, 1), -1);
    ls_node_stats_free(&s);
    ls_history_free(&h);
    ls_program_unref(p);
}
END_TEST

/* y = x * x on x = [1, -2, NaN, inf]: [1, 4, NaN, inf]: two finite values from 1 to 4. */
START_TEST(range_counts_nan_and_inf_apart)
{
    static const int64_t s4[] = {4};
    ls_builder *b = ls_builder_new("model", LS_DIALECT_EDGE);
    uint32_t x = pf_user_input(b, "x", LS_DT_F32, 1, s4);
    ls_arg a[] = {ls_arg_node(x), ls_arg_node(x)};
    uint32_t y = pf_call(b, "y", LS_OP_mul_Tensor, a, 2, LS_DT_F32, 1, s4);
    ls_build_output(b, &y, 1, NULL, NULL);
    ls_program *p = ls_builder_finish(b);
    const float xv[] = {1, -2, NAN, INFINITY};
    ls_value in = ls_value_tensor(pf_f32(1, s4, xv)), *out;
    uint32_t n_out;
    ls_error err;
    ls_runner *r = pf_runner(p);
    ls_node_stats s;
    ls_node_stats_init(&s, p, "bundled runtime");
    ls_runner_observe(r, &s, false);
    ck_assert_msg(ls_runner_run(r, &in, 1, &out, &n_out, &err) == 0, "%s", err.msg);
    pf_values_free(out, n_out);
    ck_assert_msg(ls_runner_run(r, &in, 1, &out, &n_out, &err) == 0, "%s", err.msg);
    pf_values_free(out, n_out);
    const ls_node_stat *st = ls_node_stats_of(&s, y);
    ck_assert_ptr_nonnull(st);
    ck_assert_uint_eq(st->runs, 2);
    ck_assert_uint_eq(st->numel, 8);
    ck_assert_uint_eq(st->finite, 4);
    ck_assert_uint_eq(st->nan, 2);
    ck_assert_uint_eq(st->inf, 2);
    ck_assert_double_eq(st->min, 1);
    ck_assert_double_eq(st->max, 4);
    ck_assert(!st->compared);
    ck_assert_ptr_null(ls_runner_value(r, 1)); /* not kept unless asked */
    ls_value_release(&in);
    ls_runner_free(r);
    ls_node_stats_free(&s);
    ls_program_unref(p);
}
END_TEST

START_TEST(first_divergence_is_where_the_lowered_form_goes_wrong)
{
    ls_history h = {0};
    const ls_node *cos;
    pf_diverging_history(&h, &cos);
    const ls_program *q = h.steps[h.n - 1].program;
    ls_node_stats s;
    run_beside(q, h.steps[0].program, &s);
    int32_t first = ls_node_stats_divergence(&s, -1, 1);
    ck_assert_int_eq(first, ls_program_pos(q, cos->id));
    /* then the output of lowered_module_0, which reads it */
    int32_t next = ls_node_stats_divergence(&s, first, 1);
    ck_assert_int_gt(next, first);
    const ls_node *g = q->nodes[next];
    ck_assert_msg(g->op && g->op->id == LS_OP_getitem, "%s diverges next", g->name);
    ck_assert_int_eq(ls_node_stats_divergence(&s, next, 1), -1);
    ck_assert_int_eq(ls_node_stats_divergence(&s, next, -1), first);
    /* the atan2 nodes and the first delegate read nothing that changed */
    uint32_t compared;
    ck_assert_uint_eq(ls_node_stats_differing(&s, &compared), 2);
    ck_assert_uint_ge(compared, 5);
    ck_assert(s.v[first].max_abs > 0.01);
    ck_assert_int_eq(s.v[first].first_bad_run, 0);
    ls_node_stats_free(&s);
    ls_history_free(&h);
}
END_TEST

Suite *node_stats_suite(void)
{
    Suite *s = suite_create("node_stats");
    TCase *tc = tcase_create("core");
    tcase_add_test(tc, faithful_lowering_has_no_divergence);
    tcase_add_test(tc, range_counts_nan_and_inf_apart);
    tcase_add_test(tc, first_divergence_is_where_the_lowered_form_goes_wrong);
    suite_add_tcase(s, tc);
    return s;
}
