/* Two programs side by side (align.h) and `lowerscope diff --from/--to/--step A..B/--with/--json`:
 * shared_constant's steps 3 and 6 worked by hand (partition tags add and mul; to_backend moves
 * them into lowered_module_0, gives the CPU's c back its tag-less self and adds the delegate call
 * with its getitem); the .pte exported from it matched node for node by identity (x is the .pte's
 * input_0, c its c_c by target), the emit step's alloc only on the .pt2's side; bad ranges exit 2.
 * --with-backend: two_delegates lowered for samples/backends/arith.json (add and mul only, worked
 * from the profile) leaves the second region's sub/div on the CPU, which the bundled lowering
 * holds in lowered_module_1. */
#include <check.h>
#include <cjson/cJSON.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "align.h"
#include "history.h"
#include "ops.h"
#include "build.h"
#include "progfixtures.h"
#include "testutil.h"

static const ls_align_row *row_named(const ls_alignment *al, const ls_program *a, const ls_program *b, const char *name)
{
    for (uint32_t r = 0; r < al->n; r++) {
        const ls_align_row *x = &al->v[r];
        if ((x->a >= 0 && !strcmp(a->nodes[x->a]->name, name)) || (x->b >= 0 && !strcmp(b->nodes[x->b]->name, name)))
            return x;
    }
    return NULL;
}

START_TEST(two_steps_by_id)
{
    ls_history h = {0};
    ls_program *p = pf_sample("shared_constant");
    pf_lower(p, NULL, &h);
    const ls_program *a = h.steps[2].program, *b = h.steps[5].program;
    ls_alignment al;
    ls_align_programs(a, b, LS_ALIGN_BY_ID, &al);
    /* c (untagged now), output (reads getitem): changed; add and mul: gone into the delegate;
     * get_attr, call_delegate, getitem: new; x and atan2: the same nodes */
    ck_assert_uint_eq(al.changed, 2);
    ck_assert_uint_eq(al.only_a, 2);
    ck_assert_uint_eq(al.only_b, 3);
    ck_assert_uint_eq(al.same, 2);
    ck_assert_int_eq(row_named(&al, a, b, "c")->mark, LS_ALIGN_CHANGED);
    ck_assert_int_eq(row_named(&al, a, b, "c")->why, LS_ALIGN_WHY_TAG); /* tag0, then none */
    ck_assert_int_eq(row_named(&al, a, b, "aten_atan2_default")->why, LS_ALIGN_WHY_NONE);
    ck_assert_int_eq(row_named(&al, a, b, "aten_atan2_default")->mark, LS_ALIGN_SAME);
    ck_assert_int_eq(row_named(&al, a, b, "aten_mul_tensor")->mark, LS_ALIGN_ONLY_A);
    ck_assert_int_eq(row_named(&al, a, b, "getitem")->mark, LS_ALIGN_ONLY_B);
    /* every node of both sides has exactly one row, and the rows know it */
    ck_assert_uint_eq(al.n, a->n_nodes + al.only_b);
    for (uint32_t i = 0; i < a->n_nodes; i++) ck_assert_int_eq(al.v[al.row_of_a[i]].a, (int32_t)i);
    for (uint32_t j = 0; j < b->n_nodes; j++) ck_assert_int_eq(al.v[al.row_of_b[j]].b, (int32_t)j);
    /* the delegate's nodes come after atan2, where step 5 has them */
    const ls_align_row *atan2 = row_named(&al, a, b, "aten_atan2_default"), *ga = row_named(&al, a, b, "lowered_module_0");
    ck_assert(atan2 < ga);
    ls_alignment_free(&al);
    ls_history_free(&h);
    ls_program_unref(p);
}
END_TEST

/* Within one history, a call made its out variant differs (to_out_variant's atan2 gained
 * out=alloc), as `diff --from 6 --to 5` lists it; the alloc is only on its side. Across files
 * the same pair is the same (a_pt2_and_its_pte_by_identity: a .pte's calls are all out variants). */
START_TEST(an_out_variant_differs_between_steps)
{
    ls_history h = {0};
    ls_program *p = pf_sample("shared_constant");
    pf_lower(p, NULL, &h);
    ck_assert_str_eq(h.steps[6].pass, "to_out_variant");
    const ls_program *a = h.steps[6].program, *b = h.steps[5].program;
    ls_alignment al;
    ls_align_programs(a, b, LS_ALIGN_BY_ID, &al);
    ck_assert_int_eq(row_named(&al, a, b, "aten_atan2_default")->mark, LS_ALIGN_CHANGED);
    ck_assert_int_eq(row_named(&al, a, b, "aten_atan2_default")->why, LS_ALIGN_WHY_OUT_VARIANT);
    ck_assert_int_eq(row_named(&al, a, b, "alloc")->mark, LS_ALIGN_ONLY_A);
    ck_assert_uint_eq(al.changed, 1);
    ck_assert_uint_eq(al.only_a, 1);
    ck_assert_uint_eq(al.only_b, 0);
    ls_alignment_free(&al);
    char *out;
    ck_assert_int_eq(tu_runf(&out, "diff %s --from 6 --to 5", tu_root("samples/shared_constant.pt2")), 0);
    ck_assert_msg(tu_contains(out, ": 2 changes") && tu_contains(out, "~ aten_atan2_default") && tu_contains(out, "- alloc"),
                  "%s", out);
    free(out);
    ls_history_free(&h);
    ls_program_unref(p);
}
END_TEST

/* The same step lowered for two backends: lowered_module_0 is BundledBackend's on one side and
 * ArithBackend's on the other, the pair differs and says so (LS_ALIGN_WHY_BACKEND), as
 * exir's LoweredBackendModule carries its backend_id (align.c same_backend). */
START_TEST(a_delegate_of_another_backend_differs)
{
    ls_history hb = {0}, ha = {0};
    ls_program *p = pf_sample("two_delegates");
    pf_lower_backend(p, "bundled", &hb);
    pf_lower_backend(p, tu_root("samples/backends/arith.json"), &ha);
    const ls_program *a = hb.steps[ls_history_same_pass_step(&ha, ha.n - 1, &hb)].program, *b = ha.steps[ha.n - 1].program;
    ls_alignment al;
    ls_align_programs(a, b, LS_ALIGN_BY_IDENTITY, &al);
    const ls_align_row *r = row_named(&al, a, b, "lowered_module_0");
    ck_assert_ptr_nonnull(r);
    ck_assert_int_eq(r->mark, LS_ALIGN_CHANGED);
    ck_assert_int_eq(r->why, LS_ALIGN_WHY_BACKEND);
    ls_alignment_free(&al);
    ls_history_free(&hb);
    ls_history_free(&ha);
    ls_program_unref(p);
}
END_TEST

static const char *export_pte(void)
{
    static char path[4096];
    snprintf(path, sizeof path, "%s/sc.pte", tu_tmpdir());
    char *out;
    int rc = tu_runf(&out, "export %s -o %s", tu_root("samples/shared_constant.pt2"), path);
    ck_assert_msg(rc == 0, "%s", out);
    free(out);
    return path;
}

START_TEST(a_pt2_and_its_pte_by_identity)
{
    const char *pte = export_pte();
    ls_history h = {0};
    ls_program *p = pf_sample("shared_constant"), *q = pf_load(pte);
    pf_lower(p, NULL, &h);
    const ls_program *a = h.steps[h.n - 1].program;
    ls_alignment al;
    ls_align_programs(a, q, LS_ALIGN_BY_IDENTITY, &al);
    const ls_align_row *x = row_named(&al, a, q, "x"), *c = row_named(&al, a, q, "c");
    ck_assert_ptr_nonnull(x);
    ck_assert_ptr_nonnull(c);
    ck_assert_msg(x->b >= 0, "x has no match in the .pte");
    ck_assert_str_eq(q->nodes[x->b]->name, "input_0"); /* the .pte names plan inputs by number */
    /* the constant: exir writes no FQN for it, so it is found by its bytes */
    ck_assert_str_eq(q->nodes[c->b]->name, "c__tensor_constant1");
    /* to_executorch's out variant: the .pte's functional atan2 is the same call; its alloc is not in the .pte */
    ck_assert_int_eq(row_named(&al, a, q, "aten_atan2_default")->mark, LS_ALIGN_SAME);
    ck_assert_uint_eq(al.changed, 0);
    ck_assert_uint_eq(al.only_a, 1);
    ck_assert_uint_eq(al.only_b, 0);
    ck_assert_int_eq(row_named(&al, a, q, "alloc")->mark, LS_ALIGN_ONLY_A);
    ls_alignment_free(&al);
    ls_history_free(&h);
    ls_program_unref(p);
    ls_program_unref(q);
}
END_TEST

/* Two programs holding two constants with the same bytes, named differently in each (as a .pte
 * names them): the k-th pairs with the k-th in graph order (the first took every match, and the
 * second was "only in" both). */
static ls_program *two_equal_constants(const char *first, const char *second)
{
    static const int64_t s4[] = {4};
    static const float zeros[4] = {0};
    ls_builder *b = ls_builder_new("model", LS_DIALECT_EDGE);
    uint32_t c0 = pf_input(b, first, LS_IN_CONSTANT_TENSOR, first, pf_f32(1, s4, zeros));
    uint32_t c1 = pf_input(b, second, LS_IN_CONSTANT_TENSOR, second, pf_f32(1, s4, zeros));
    uint32_t x = pf_user_input(b, "x", LS_DT_F32, 1, s4);
    ls_arg a1[] = {ls_arg_node(x), ls_arg_node(c0), ls_arg_int(1)};
    uint32_t add = pf_call(b, "add", LS_OP_add_Tensor, a1, 3, LS_DT_F32, 1, s4);
    ls_arg a2[] = {ls_arg_node(add), ls_arg_node(c1), ls_arg_int(1)};
    uint32_t add1 = pf_call(b, "add_1", LS_OP_add_Tensor, a2, 3, LS_DT_F32, 1, s4);
    ls_build_output(b, &add1, 1, NULL, NULL);
    return ls_builder_finish(b);
}

START_TEST(equal_bytes_pair_in_order)
{
    ls_program *a = two_equal_constants("c_a", "c_b"), *q = two_equal_constants("k0", "k1");
    ls_alignment al;
    ls_align_programs(a, q, LS_ALIGN_BY_IDENTITY, &al);
    const ls_align_row *r0 = row_named(&al, a, q, "c_a"), *r1 = row_named(&al, a, q, "c_b");
    ck_assert_ptr_nonnull(r0);
    ck_assert_ptr_nonnull(r1);
    ck_assert_msg(r0->b >= 0 && r1->b >= 0, "a constant of the same bytes found no match");
    ck_assert_str_eq(q->nodes[r0->b]->name, "k0");
    ck_assert_str_eq(q->nodes[r1->b]->name, "k1");
    ck_assert_uint_eq(al.only_a, 0);
    ck_assert_uint_eq(al.only_b, 0);
    ls_alignment_free(&al);
    ls_program_unref(a);
    ls_program_unref(q);
}
END_TEST

START_TEST(diff_range_text_and_json)
{
    const char *sc = tu_root("samples/shared_constant.pt2");
    char *a, *b;
    ck_assert_int_eq(tu_runf(&a, "diff %s --step 2..5", sc), 0);
    ck_assert_int_eq(tu_runf(&b, "diff %s --from partition --to to_backend", sc), 0);
    ck_assert_str_eq(a, b);
    ck_assert_msg(tu_contains(a, "step 2 partition (bundled) to step 5 to_backend (bundled)"), "%s", a);
    ck_assert(tu_contains(a, "- aten_add_tensor: edge.aten.add.Tensor(x, c) [tag1]\n"));
    ck_assert(tu_contains(a, "~ c: placeholder tensor_constant c\n      was: placeholder tensor_constant c [tag1]\n"));
    ck_assert(tu_contains(a, "+ getitem: getitem.default(executorch_call_delegate, 0)\n"));
    ck_assert(tu_contains(a, "  · step 4: `c` is read by `tag1`"));
    free(a);
    free(b);
    /* one step: as before, against the step before, the report unnumbered */
    ck_assert_int_eq(tu_runf(&a, "diff %s --step 4", sc), 0);
    ck_assert(tu_contains(a, "step 4 duplicate_constants (bundled): 4 changes"));
    ck_assert(tu_contains(a, "\n  · `c` is read by `tag1`"));
    free(a);
    ck_assert_int_eq(tu_runf(&a, "diff %s --step 2..5 --json", sc), 0);
    cJSON *j = cJSON_Parse(a);
    ck_assert_msg(j != NULL, "not JSON:\n%s", a);
    ck_assert_int_eq(cJSON_GetObjectItem(cJSON_GetObjectItem(j, "from"), "step")->valueint, 2);
    ck_assert_int_eq(cJSON_GetObjectItem(cJSON_GetObjectItem(j, "to"), "step")->valueint, 5);
    const cJSON *ch = cJSON_GetObjectItem(j, "changes");
    int added = 0, removed = 0, changed = 0;
    for (int i = 0; i < cJSON_GetArraySize(ch); i++) {
        const char *k = cJSON_GetObjectItem(cJSON_GetArrayItem(ch, i), "kind")->valuestring;
        added += !strcmp(k, "added");
        removed += !strcmp(k, "removed");
        changed += !strcmp(k, "changed");
    }
    /* top level: 3 added, 2 removed, 2 changed; inside lowered_module_0: 5 added */
    ck_assert_int_eq(added, 8);
    ck_assert_int_eq(removed, 2);
    ck_assert_int_eq(changed, 2);
    ck_assert_int_eq(cJSON_GetArraySize(cJSON_GetObjectItem(j, "reports")), 3);
    cJSON_Delete(j);
    free(a);
}
END_TEST

START_TEST(diff_with_the_exported_pte)
{
    const char *pte = export_pte();
    char *out;
    ck_assert_int_eq(tu_runf(&out, "diff %s --with %s", tu_root("samples/shared_constant.pt2"), pte), 0);
    ck_assert_msg(tu_contains(out, ": 7 same, 0 changed, 1 only in") && tu_contains(out, "- alloc: memory.alloc"), "%s", out);
    /* both have lowered_module_0, whose own nodes --with does not compare: the first line says so */
    ck_assert_msg(tu_contains(out, "(top-level nodes: a delegate is its call)"), "%s", out);
    free(out);
    ck_assert_int_eq(tu_runf(&out, "diff %s --step to_backend --with %s --json", tu_root("samples/shared_constant.pt2"), pte), 0);
    cJSON *j = cJSON_Parse(out);
    ck_assert_msg(j != NULL, "%s", out);
    ck_assert_int_eq(cJSON_GetObjectItem(j, "same")->valueint, 7);
    ck_assert_str_eq(cJSON_GetObjectItem(j, "scope")->valuestring, "top_level");
    ck_assert_int_eq(cJSON_GetArraySize(cJSON_GetObjectItem(j, "changes")), 0);
    cJSON_Delete(j);
    free(out);
}
END_TEST

/* cmd (a command line of words) exits `rc`, saying `want` (NULL: anything). */
static void exits_saying(const char *cmd, int rc, const char *want)
{
    char *out;
    int got = tu_runf(&out, "%s", cmd);
    ck_assert_msg(got == rc && (!want || tu_contains(out, want)), "%s: exit %d: %s", cmd, got, out);
    free(out);
}

START_TEST(diff_refuses_bad_ranges)
{
    const char *sc = tu_root("samples/shared_constant.pt2");
    char *out;
    ck_assert_int_eq(tu_runf(&out, "diff %s", sc), 2);
    ck_assert(tu_contains(out, "which steps?"));
    free(out);
    ck_assert_int_eq(tu_runf(&out, "diff %s --step 2 --from 1", sc), 2);
    free(out);
    ck_assert_int_eq(tu_runf(&out, "diff %s --from nope --to 3", sc), 2);
    ck_assert(tu_contains(out, "nope"));
    free(out);
    ck_assert_int_eq(tu_runf(&out, "diff %s --with /nonexistent.pte", sc), 2);
    free(out);
    /* the message names the option the step came from (it said --step 99) */
    ck_assert_int_eq(tu_runf(&out, "diff %s --from 99 --to 2", sc), 2);
    ck_assert_msg(tu_contains(out, "--from 99: the pipeline has steps 0 to 8"), "%s", out);
    ck_assert_msg(tu_contains(out, sc), "the message names the file: %s", out);
    free(out);
    /* a range with an end left out names the range, not an empty step */
    char cmd[1200];
    snprintf(cmd, sizeof cmd, "diff %s --step 2..", sc);
    exits_saying(cmd, 2, "--step 2..: a range names both ends, A..B");
    snprintf(cmd, sizeof cmd, "diff %s --step ..3", sc);
    exits_saying(cmd, 2, "--step ..3: a range names both ends");
    /* a .pte has step 0 only, and the message says why rather than "steps 0 to 0" */
    char pte[512];
    snprintf(pte, sizeof pte, "%s/diff_steps.pte", tu_tmpdir());
    snprintf(cmd, sizeof cmd, "export %s -o %s", sc, pte);
    exits_saying(cmd, 0, NULL);
    snprintf(cmd, sizeof cmd, "diff %s --step 1", pte);
    exits_saying(cmd, 2, "--step 1: no such step: a .pte is its own step 0");
    snprintf(cmd, sizeof cmd, "diff %s --step partition", pte);
    exits_saying(cmd, 2, "only when it is relowered");
    snprintf(cmd, sizeof cmd, "diff %s --step partition --relower", pte); /* relowered: it has one */
    exits_saying(cmd, 0, NULL);
    /* --with compares one step with OTHER's: a --from was ignored */
    ck_assert_int_eq(tu_runf(&out, "diff %s --from 4 --with %s", sc, sc), 2);
    ck_assert_msg(tu_contains(out, "--with OTHER compares one step"), "%s", out);
    free(out);
}
END_TEST

START_TEST(diff_with_backend_leaves_the_second_region_on_the_cpu)
{
    const char *td = tu_root("samples/two_delegates.pt2");
    char arith[4096];
    snprintf(arith, sizeof arith, "%s", tu_root("samples/backends/arith.json"));
    char *out;
    ck_assert_int_eq(tu_runf(&out, "diff %s --step to_backend --with-backend %s", td, arith), 0);
    /* same: x, the weight, offset and scale, three atan2, cos and the first delegate's call and
     * getitem; changed: that delegate's get_attr (lowered_module_0 is BundledBackend's on one side,
     * ArithBackend's on the other: align.c's same_backend) and the output, which reads div_2
     * instead of getitem_1; only with bundled: the second delegate's three; only with arith: its
     * six nodes */
    ck_assert_msg(tu_contains(out, "with bundled against ") && tu_contains(out, "to_backend (arith) with arith"), "%s", out);
    ck_assert_msg(tu_contains(out, ": 10 same, 2 changed, 3 only with bundled, 6 only with arith"), "%s", out);
    ck_assert_msg(tu_contains(out, "+ aten_div_tensor_2: edge.aten.div.Tensor(aten_sub_tensor_2, p_weight)\n") ||
                      tu_contains(out, "+ aten_div_tensor_2: edge.aten.div.Tensor(aten_sub_tensor_2, p_weight) "),
                  "%s", out);
    ck_assert_msg(tu_contains(out, "      with bundled: inside lowered_module_1"), "%s", out);
    ck_assert_msg(tu_contains(out, "~ lowered_module_0: get_attr lowered_module_0"), "%s", out);
    ck_assert_msg(tu_contains(out, "- executorch_call_delegate_1: executorch_call_delegate(lowered_module_1, aten_cos_default)"),
                  "%s", out);
    free(out);
    ck_assert_int_eq(tu_runf(&out, "diff %s --step to_backend --with-backend %s --json", td, arith), 0);
    cJSON *j = cJSON_Parse(out);
    ck_assert_msg(j != NULL, "%s", out);
    ck_assert_str_eq(cJSON_GetObjectItem(cJSON_GetObjectItem(j, "to"), "pass")->valuestring, "to_backend");
    const cJSON *be = cJSON_GetObjectItem(j, "backends");
    ck_assert_str_eq(cJSON_GetArrayItem(cJSON_GetObjectItem(be, "from"), 0)->valuestring, "bundled");
    ck_assert_str_eq(cJSON_GetArrayItem(cJSON_GetObjectItem(be, "to"), 0)->valuestring, "arith");
    ck_assert_int_eq(cJSON_GetObjectItem(j, "only_to")->valueint, 6);
    int inside = 0;
    const cJSON *ch = cJSON_GetObjectItem(j, "changes");
    for (int i = 0; i < cJSON_GetArraySize(ch); i++) {
        const cJSON *c = cJSON_GetArrayItem(ch, i), *in = cJSON_GetObjectItem(c, "inside");
        if (!strcmp(cJSON_GetObjectItem(c, "kind")->valuestring, "added")) {
            ck_assert_msg(cJSON_IsString(in) && !strcmp(in->valuestring, "lowered_module_1"), "%s", out);
            inside++;
        }
    }
    ck_assert_int_eq(inside, 6);
    cJSON_Delete(j);
    free(out);
    /* one step, one other side */
    ck_assert_int_eq(tu_runf(&out, "diff %s --step 2..5 --with-backend %s", td, arith), 2);
    ck_assert(tu_contains(out, "not a range"));
    free(out);
    ck_assert_int_eq(tu_runf(&out, "diff %s --with %s --with-backend %s", td, td, arith), 2);
    free(out);
    ck_assert_int_eq(tu_runf(&out, "diff %s --with-backend /nonexistent.json", td), 2);
    ck_assert(tu_contains(out, "/nonexistent.json"));
    free(out);
}
END_TEST

/* --with OTHER --with-step S (the UI's :compare FILE STEP): shared_constant's partition step
 * written as a .pt2 (its tags kept) and lowered again reaches the same to_backend, node for node;
 * as it loads, OTHER is still the tagged program (add and mul on the top level). */
START_TEST(diff_with_another_files_step)
{
    const char *sc = tu_root("samples/shared_constant.pt2");
    char other[4096], *out;
    snprintf(other, sizeof other, "%s/tagged.pt2", tu_tmpdir());
    ck_assert_int_eq(tu_runf(&out, "export %s -o %s --step partition", sc, other), 0);
    free(out);
    ck_assert_int_eq(tu_runf(&out, "diff %s --step to_backend --with %s --with-step to_backend", sc, other), 0);
    ck_assert_msg(tu_contains(out, " at step 5 to_backend (bundled)") && tu_contains(out, ": 7 same, 0 changed, 0 only in"),
                  "%s", out);
    free(out);
    ck_assert_int_eq(tu_runf(&out, "diff %s --step to_backend --with %s --json", sc, other), 0);
    cJSON *j = cJSON_Parse(out);
    ck_assert_msg(j != NULL, "%s", out);
    ck_assert_int_eq(cJSON_GetObjectItem(j, "only_to")->valueint, 2); /* the tagged add and mul */
    ck_assert_ptr_null(cJSON_GetObjectItem(j, "to_step"));
    cJSON_Delete(j);
    free(out);
    ck_assert_int_eq(tu_runf(&out, "diff %s --with %s --with-step 2 --json", sc, other), 0);
    j = cJSON_Parse(out);
    ck_assert_msg(j != NULL, "%s", out);
    ck_assert_str_eq(cJSON_GetObjectItem(cJSON_GetObjectItem(j, "to_step"), "pass")->valuestring, "partition");
    cJSON_Delete(j);
    free(out);
    ck_assert_int_eq(tu_runf(&out, "diff %s --with %s --with-step nope", sc, other), 2);
    ck_assert_msg(tu_contains(out, "--with-step nope: no such step"), "%s", out);
    free(out);
    ck_assert_int_eq(tu_runf(&out, "diff %s --with-step 2", sc), 2);
    free(out);
}
END_TEST

/* Two equal lowered programs: constant_mask loaded twice (so no node ids in common) and lowered
 * for bundled, whose emit steps hold 7 allocs (to_out_variant.c: one per out argument, right
 * before its call). Each alloc pairs with the one in the same out argument of the matched call
 * (align.c's match_allocs): all rows the same, none only on one side (allocs were left out of
 * the matching, and read as one removed and one added each). */
START_TEST(two_lowerings_pair_their_allocs)
{
    ls_history ha = {0}, hb = {0};
    ls_program *p = pf_sample("constant_mask"), *q = pf_sample("constant_mask");
    pf_lower(p, NULL, &ha);
    pf_lower(q, NULL, &hb);
    const ls_program *a = ha.steps[ha.n - 1].program, *b = hb.steps[hb.n - 1].program;
    ls_alignment al;
    ls_align_programs(a, b, LS_ALIGN_BY_IDENTITY, &al);
    uint32_t allocs = 0;
    for (uint32_t r = 0; r < al.n; r++) {
        const ls_align_row *x = &al.v[r];
        const ls_node *n = x->a >= 0 ? a->nodes[x->a] : b->nodes[x->b];
        if (!n->op || n->op->id != LS_OP_alloc) continue;
        allocs++;
        ck_assert_msg(x->mark == LS_ALIGN_SAME, "%s: mark %d", n->name, x->mark);
        ck_assert_str_eq(b->nodes[x->b]->name, n->name); /* one lowering names them as the other */
    }
    ck_assert_uint_eq(allocs, 7);
    ck_assert_uint_eq(al.only_a + al.only_b + al.changed, 0);
    ls_alignment_free(&al);
    ls_history_free(&ha);
    ls_history_free(&hb);
    ls_program_unref(p);
    ls_program_unref(q);
    /* the CLI twin: a file beside its own emit step, and beside itself lowered for the same backend */
    const char *td = tu_root("samples/two_delegates.pt2");
    char *out;
    ck_assert_int_eq(tu_runf(&out, "diff %s --with %s --with-step emit", td, td), 0);
    ck_assert_msg(tu_contains(out, " 0 changed, 0 only in ") && !tu_contains(out, "alloc"), "%s", out);
    free(out);
    ck_assert_int_eq(tu_runf(&out, "diff %s --with-backend bundled --json", td), 0);
    cJSON *j = cJSON_Parse(out);
    ck_assert_msg(j != NULL, "%s", out);
    ck_assert_int_eq(cJSON_GetArraySize(cJSON_GetObjectItem(j, "changes")), 0);
    cJSON_Delete(j);
    free(out);
}
END_TEST

Suite *diff_suite(void)
{
    Suite *s = suite_create("diff");
    TCase *tc = tcase_create("core");
    tcase_set_timeout(tc, 60);
    tcase_add_test(tc, two_steps_by_id);
    tcase_add_test(tc, an_out_variant_differs_between_steps);
    tcase_add_test(tc, a_delegate_of_another_backend_differs);
    tcase_add_test(tc, a_pt2_and_its_pte_by_identity);
    tcase_add_test(tc, equal_bytes_pair_in_order);
    tcase_add_test(tc, diff_range_text_and_json);
    tcase_add_test(tc, diff_with_the_exported_pte);
    tcase_add_test(tc, diff_refuses_bad_ranges);
    tcase_add_test(tc, diff_with_backend_leaves_the_second_region_on_the_cpu);
    tcase_add_test(tc, diff_with_another_files_step);
    tcase_add_test(tc, two_lowerings_pair_their_allocs);
    suite_add_tcase(s, tc);
    return s;
}
