/* Tests of the delegation table (include/delegation.h) that `lowerscope partitions` prints and
 * the UI's `d` screen shows: what counts as a compute node (alloc nodes do not), the columns
 * per tag or per backend, and the reason given for each node left on the CPU. */
#include <check.h>
#include <stdlib.h>
#include <string.h>

#include "delegation.h"
#include "progfixtures.h"
#include "testutil.h"

static const ls_deleg_row *row(const ls_deleg_table *t, const char *op)
{
    for (uint32_t i = 0; i < t->n_rows; i++)
        if (strcmp(t->rows[i].op, op) == 0) return &t->rows[i];
    return NULL;
}

static const ls_node *node(const ls_program *p, const char *name)
{
    int32_t i = ls_program_find(p, name);
    ck_assert_msg(i >= 0, "no node %s", name);
    return p->nodes[i];
}

/* constant_mask after emit: the to_executorch steps added an alloc node per out argument and
 * a copy_ write-back of the mutated buffer; only the write-back is work. */
START_TEST(alloc_nodes_are_not_compute_nodes)
{
    ls_program *p = pf_sample("constant_mask");
    ls_history h = {0};
    pf_lower(p, NULL, &h);
    uint32_t last = h.n - 1;
    ck_assert_str_eq(h.steps[last].pass, "emit");
    const ls_program *q = h.steps[last].program;
    ls_deleg_table t;
    ls_deleg_table_build(q, &t);
    ck_assert_ptr_null(row(&t, "alloc"));
    uint32_t allocs = 0, calls = 0;
    for (uint32_t i = 0; i < q->n_nodes; i++) {
        allocs += q->nodes[i]->op && q->nodes[i]->op->id == LS_OP_alloc;
        calls += ls_deleg_is_compute(q->nodes[i]);
    }
    ck_assert_uint_gt(allocs, 0);
    ck_assert_uint_eq(t.cpu, 8); /* seven refused masks and the write-back */
    ck_assert_uint_eq(t.total - t.cpu, 7);
    ck_assert_uint_eq(calls, t.cpu); /* the delegated nodes are inside the lowered module */
    ck_assert_uint_eq(row(&t, "index.Tensor")->cpu, 7);
    ck_assert_uint_eq(row(&t, "index.Tensor")->by_col[0], 5);
    ck_assert_str_eq(t.cols[0].backend, "BundledBackend");
    /* why each stays on the CPU */
    ck_assert_str_eq(ls_deleg_cpu_reason(&h, last, node(q, "aten_index_tensor_6")), "mask refused: a user input");
    ck_assert_str_eq(ls_deleg_cpu_reason(&h, last, node(q, "aten_copy__default")),
                     "added by to_out_variant, after partitioning");
    ck_assert_str_eq(ls_deleg_cpu_reason(&h, 1, node(h.steps[1].program, "aten_index_tensor_6")), "not partitioned yet");
    ls_deleg_table_free(&t);
    ls_history_free(&h);
    ls_program_unref(p);
}
END_TEST

/* policy's two tags go to one backend: per backend, one column holding both. */
START_TEST(columns_per_backend_add_up_their_tags)
{
    ls_program *p = pf_sample("policy");
    ls_history h = {0};
    pf_lower(p, NULL, &h);
    ls_deleg_table t, b;
    ls_deleg_table_build(h.steps[h.n - 1].program, &t);
    ck_assert_uint_eq(t.n_cols, 2);
    ls_deleg_by_backend(&t, &b);
    ck_assert_uint_eq(b.n_cols, 1);
    ck_assert_str_eq(b.cols[0].tag, "BundledBackend");
    ck_assert_uint_eq(b.cols[0].nodes, t.cols[0].nodes + t.cols[1].nodes);
    ck_assert_uint_eq(b.total, t.total);
    ck_assert_uint_eq(b.cpu, t.cpu);
    ck_assert_uint_eq(b.n_rows, t.n_rows);
    for (uint32_t i = 0; i < t.n_rows; i++) {
        ck_assert_ptr_eq(b.rows[i].op, t.rows[i].op); /* same order */
        ck_assert_uint_eq(b.rows[i].by_col[0], t.rows[i].by_col[0] + t.rows[i].by_col[1]);
    }
    ls_deleg_table_free(&b);
    ls_deleg_table_free(&t);
    ls_history_free(&h);
    ls_program_unref(p);
}
END_TEST

/* A tag's column says what it was lowered as: partitions names lowered_module_N beside the
 * tag once to_backend has made it (text and --json), not before; a .pte's delegates are named by
 * their module already and say it once. */
START_TEST(tag_columns_name_their_lowered_module)
{
    const char *td = tu_root("samples/two_delegates.pt2");
    char *out = NULL;
    ck_assert_int_eq(tu_runf(&out, "partitions %s", td), 0);
    /* with each tag's share and, beside the ops no backend supports, what the backends took:
     * the lines the UI's table has */
    ck_assert_msg(tu_contains(out, "tag7: BundledBackend, lowered as lowered_module_0 · 6 nodes (37.5%)\n"
                                   "tag1: BundledBackend, lowered as lowered_module_1 · 6 nodes (37.5%)") &&
                      tu_contains(out, "op not supported: atan2 ×3, cos ×1\n         instead: BundledBackend took add, div, "
                                       "mul, sub"),
                  "%s", out);
    free(out);
    ck_assert_int_eq(tu_runf(&out, "partitions %s --step partition", td), 0);
    ck_assert_msg(tu_contains(out, "tag7: BundledBackend · 6 nodes") && !tu_contains(out, "lowered as"), "%s", out);
    free(out);
    ck_assert_int_eq(tu_runf(&out, "partitions %s --json", td), 0);
    ck_assert_msg(tu_contains(out, "{\"tag\": \"tag7\", \"backend\": \"BundledBackend\", \"module\": \"lowered_module_0\""), "%s", out);
    free(out);
    ck_assert_int_eq(tu_runf(&out, "partitions %s --json --step partition", td), 0);
    ck_assert_msg(tu_contains(out, "{\"tag\": \"tag7\", \"backend\": \"BundledBackend\", \"module\": null"), "%s", out);
    free(out);
    /* the UI's table says the same; the partitions pane counts the CPU's compute nodes as the table
     * does (4: three atan2 and the cos, none of the allocs to_out_variant added) */
    char *tab = tu_slurp(tu_root("tests/screens/graph_two-table-x.expected"));
    ck_assert_ptr_nonnull(tab);
    ck_assert_msg(tu_contains(tab, "B tag7: BundledBackend, lowered as lowered_module_0 · 6 nodes"), "%s", tab);
    free(tab);
    char *ov = tu_slurp(tu_root("tests/screens/overlay-first.expected"));
    ck_assert_ptr_nonnull(ov);
    ck_assert_msg(tu_contains(ov, "CPU             4n 3c 48B"), "%s", ov);
    free(ov);
}
END_TEST

START_TEST(partitions_command_leaves_alloc_out)
{
    char *out = NULL;
    ck_assert_int_eq(tu_runf(&out, "partitions %s", tu_root("samples/shared_constant.pt2")), 0);
    ck_assert_msg(tu_contains(out, "step 8 emit: 3 compute nodes, 2 delegated (66.7%) to 1 tag"), "%s", out);
    ck_assert_msg(!tu_contains(out, "alloc"), "%s", out);
    ck_assert_msg(tu_contains(out, "aten_atan2_default       atan2            op not supported"), "%s", out);
    free(out);
    ck_assert_int_eq(tu_runf(&out, "partitions %s", tu_root("samples/constant_mask.pt2")), 0);
    ck_assert_msg(tu_contains(out, "copy_            added by to_out_variant, after partitioning"), "%s", out);
    free(out);
}
END_TEST

/* The CPU nodes by reason: tiny_llama with XNNPACK puts every refused mm in one group (the rule
 * const_arg:1, whichever node computes each weight), every node is in exactly one group, and
 * the groups come largest first. */
START_TEST(cpu_nodes_grouped_by_rule)
{
    ls_program *p = pf_sample("tiny_llama");
    ls_history h = {0};
    pf_lower_backend(p, "xnnpack", &h);
    uint32_t step = (uint32_t)ls_history_find_step(&h, "partition", NULL);
    const ls_program *q = h.steps[step].program;
    ls_deleg_table t;
    ls_deleg_table_build(q, &t);
    ls_deleg_cpu_groups g;
    ls_deleg_cpu_groups_build(&h, step, &g);
    uint32_t sum = 0;
    const ls_deleg_cpu_group *mm = NULL;
    for (uint32_t k = 0; k < g.n; k++) {
        sum += g.v[k].n;
        if (k) ck_assert_uint_ge(g.v[k - 1].n, g.v[k].n);
        if (strcmp(g.v[k].why, "rule const_arg:1") == 0) mm = &g.v[k];
        for (uint32_t i = 0; i < g.v[k].n; i++) ck_assert(ls_deleg_on_cpu(q->nodes[g.v[k].nodes[i]]));
    }
    ck_assert_uint_eq(sum, t.cpu);
    ck_assert_ptr_nonnull(mm);
    ck_assert_uint_eq(mm->n, row(&t, "mm")->cpu);
    ck_assert_uint_eq(mm->n_ops, 1);
    ck_assert_str_eq(mm->ops[0], "mm");
    ck_assert(strstr(mm->example, "XNNPACK needs a constant weight: `mat2` (arg 1) is computed by"));
    ls_buf b = {0};
    ls_deleg_cpu_group_ops(mm, 6, &b);
    ck_assert_str_eq(b.s, ls_internf("mm ×%u", mm->n));
    ls_buf_free(&b);
    ls_deleg_cpu_groups_free(&g);
    ls_deleg_table_free(&t);
    ls_history_free(&h);
    ls_program_unref(p);
    char *out;
    ck_assert_int_eq(tu_runf(&out, "partitions %s --backend xnnpack", tu_root("samples/tiny_llama.pt2")), 0);
    /* samples/tiny_llama.py: 7 layers × 8 heads × 2 mm (q·kᵀ and probs·v), the largest group */
    ck_assert_msg(tu_contains(out, "On the CPU, by reason:\n    112  rule const_arg:1: mm ×112\n"), "%s", out);
    free(out);
}
END_TEST

Suite *delegation_suite(void)
{
    Suite *s = suite_create("delegation");
    TCase *tc = tcase_create("table");
    tcase_set_timeout(tc, 30);
    tcase_add_test(tc, alloc_nodes_are_not_compute_nodes);
    tcase_add_test(tc, columns_per_backend_add_up_their_tags);
    tcase_add_test(tc, partitions_command_leaves_alloc_out);
    tcase_add_test(tc, tag_columns_name_their_lowered_module);
    tcase_add_test(tc, cpu_nodes_grouped_by_rule);
    suite_add_tcase(s, tc);
    return s;
}
