/* Tests of memory_plan against exir's algorithms (exir/memory_planning.py), on cases worked by
 * hand from its code: greedy (tensors sorted by aligned size, largest first, equal sizes the
 * later-found first; each into the first shared object none of whose tensors it overlaps, else
 * above the tensors it overlaps in an object where it fits, else a new object; objects laid out
 * in creation order), naive, the 64 bytes of XNNPACK padding, and the views ReplaceViewCopyWith
 * ViewPass makes (no memory of their own; each emitted as executorch_prim::et_view.default, as
 * exir's _emit_view does and ExecuTorch's test_remove_view_copy.py expects). */
#include <check.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "../src/export/export_internal.h"
#include "export.h"
#include "passes.h"
#include "progfixtures.h"
#include "pte_test.h"
#include "pte_check.h"
#include "reader.h"
#include "testutil.h"

/* The slot of node `name` (value k) in the plan of the history's memory_plan step. */
static const ls_mem_slot *slot_of(const ls_history *h, const char *name, uint32_t k)
{
    int s = -1;
    for (uint32_t i = 0; i < h->n; i++)
        if (!strcmp(h->steps[i].pass, "memory_plan")) s = (int)i;
    ck_assert_int_ge(s, 0);
    const ls_program *p = h->steps[s].program;
    const ls_mem_plan *m = ls_program_mem_plan(p);
    ck_assert_ptr_nonnull(m);
    int32_t pos = ls_program_find(p, name);
    ck_assert_msg(pos >= 0, "no node %s", name);
    uint32_t slot = ls_mem_plan_slot(m, p->nodes[pos]->id, k);
    ck_assert_msg(slot > 0, "%s is not planned", name);
    return &m->slots[slot - 1];
}

static const ls_mem_plan *plan_of(const ls_history *h)
{
    for (uint32_t i = h->n; i-- > 0;)
        if (!strcmp(h->steps[i].pass, "memory_plan")) return ls_program_mem_plan(h->steps[i].program);
    ck_abort_msg("no memory_plan step");
    return NULL;
}

/* kv_cache, default pipeline: the delegate owns the cache; the top level plans q [1,8] f32 (32
 * bytes), k_val [1,8] f32 (32), input_pos [1] i64 (16 aligned) and the delegate's output [4,1]
 * f32 (16), all four alive at the delegate call. Sorted: k_val, q (32, the later-found first),
 * the output, input_pos (16, the later-found first). k_val makes object 0; q overlaps it and
 * does not fit above it (32 + 32 > 32): object 1; the output overlaps both (alive from the
 * call, where the inputs end): object 2; input_pos overlaps all three: object 3. */
START_TEST(greedy_kv_cache_by_hand)
{
    ls_program *p = pf_sample("kv_cache");
    ls_history h;
    pf_lower(p, NULL, &h);
    const ls_mem_plan *m = plan_of(&h);
    ck_assert_int_eq(m->algo, LS_MEM_GREEDY);
    ck_assert_uint_eq(m->n_slots, 4);
    ck_assert_uint_eq(m->n_objects, 4);
    ck_assert_uint_eq(slot_of(&h, "k_val", 0)->offset, 0);
    ck_assert_uint_eq(slot_of(&h, "q", 0)->offset, 32);
    ck_assert_uint_eq(slot_of(&h, "getitem", 0)->offset, 64);
    ck_assert_uint_eq(slot_of(&h, "input_pos", 0)->offset, 80);
    ck_assert_uint_eq(slot_of(&h, "input_pos", 0)->size, 16);
    ck_assert_uint_eq(m->arena, 96);
    ck_assert_uint_eq(m->padding, 0);
    /* all four alive at the delegate call */
    const ls_program *last = h.steps[h.n - 1].program;
    uint32_t call = (uint32_t)ls_program_find(last, "executorch_call_delegate");
    for (uint32_t s = 0; s < m->n_slots; s++)
        ck_assert(m->slots[s].first <= call && call <= m->slots[s].last);
    /* the emitted values carry the same offsets, inside the arena */
    ls_emit_summary es;
    const ls_pte *pte = ls_program_emitted(last, &es);
    ck_assert_int_eq(pte->execution_plan.v[0].non_const_buffer_sizes.v[1], 96);
    ls_pte_check_report r;
    ck_assert_uint_eq(ls_pte_runtime_check(pte, &r), 0);
    ck_assert_uint_eq(r.planned, 4);
    ls_pte_check_report_free(&r);
    ls_history_free(&h);
    ls_program_unref(p);
}
END_TEST

/* --memory-planning naive: every tensor after the one before, in the order they are found
 * (q, k_val, input_pos, the delegate's output). */
START_TEST(naive_kv_cache_by_hand)
{
    ls_program *p = pf_sample("kv_cache");
    ls_pipeline_opts o;
    ls_pipeline_opts_init(&o);
    ls_error err;
    ck_assert_int_eq(ls_pipeline_opt(&o, "--memory-planning", "naive", &err), 1);
    ck_assert_int_eq(ls_pipeline_opt(&o, "--memory-planning", "best", &err), -1);
    ck_assert(tu_contains(err.msg, "greedy (exir's default) or naive"));
    ls_history h;
    ck_assert(ls_pipeline_run(p, &o, &h, &err) == 0);
    const ls_mem_plan *m = plan_of(&h);
    ck_assert_int_eq(m->algo, LS_MEM_NAIVE);
    ck_assert_uint_eq(slot_of(&h, "q", 0)->offset, 0);
    ck_assert_uint_eq(slot_of(&h, "k_val", 0)->offset, 32);
    ck_assert_uint_eq(slot_of(&h, "input_pos", 0)->offset, 64);
    ck_assert_uint_eq(slot_of(&h, "getitem", 0)->offset, 80);
    ck_assert_uint_eq(m->arena, 96);
    ls_history_free(&h);
    ls_pipeline_opts_free(&o);
    ls_program_unref(p);
}
END_TEST

/* The algorithm alone, cases worked from pick_shared_obj. */
START_TEST(greedy_by_hand)
{
    /* yield order t0..t4: sorted t3, t1 (64; the later-found first), t2, t0 (32), t4 (16).
     * t3 [4,6] makes object 0; t1 [1,3] fits it (no overlap); t2 [3,5] overlaps both there and
     * 64 + 32 > 64: object 1; t0 [0,2] is free in object 1; t4 [6,7] overlaps t3 in object 0,
     * not object 1's [0,5]. */
    lsx_mem_tensor a[] = {
        {.size = 32, .first = 0, .last = 2, .order = 0}, {.size = 64, .first = 1, .last = 3, .order = 1},
        {.size = 32, .first = 3, .last = 5, .order = 2}, {.size = 64, .first = 4, .last = 6, .order = 3},
        {.size = 16, .first = 6, .last = 7, .order = 4},
    };
    uint32_t objs;
    ck_assert_uint_eq(lsx_mem_greedy(a, 5, 0, &objs), 96);
    ck_assert_uint_eq(objs, 2);
    const uint64_t want[] = {64, 0, 64, 0, 64};
    for (int i = 0; i < 5; i++) ck_assert_uint_eq(a[i].offset, want[i]);
    /* _find_max_overlapping_allocations_offset: t2 (found later) takes object 0 at 0 beside
     * t0's lifetime; t1 overlaps t2 there, whose end 32 + 32 fits in 64: t1 at 32 */
    lsx_mem_tensor b[] = {
        {.size = 64, .first = 0, .last = 1, .order = 0},
        {.size = 32, .first = 5, .last = 6, .order = 1},
        {.size = 32, .first = 5, .last = 6, .order = 2},
    };
    ck_assert_uint_eq(lsx_mem_greedy(b, 3, 0, &objs), 64);
    ck_assert_uint_eq(objs, 1);
    ck_assert_uint_eq(b[0].offset, 0);
    ck_assert_uint_eq(b[2].offset, 0);
    ck_assert_uint_eq(b[1].offset, 32);
    /* padding goes after the objects; with nothing to plan there is none ([0, 0]) */
    ck_assert_uint_eq(lsx_mem_greedy(b, 3, 64, &objs), 128);
    ck_assert_uint_eq(lsx_mem_greedy(b, 0, 64, &objs), 0);
    /* naive: one after the other */
    lsx_mem_tensor c[] = {{.size = 16}, {.size = 48}, {.size = 32}};
    ck_assert_uint_eq(lsx_mem_naive(c, 3), 96);
    ck_assert_uint_eq(c[1].offset, 16);
    ck_assert_uint_eq(c[2].offset, 64);
}
END_TEST

/* exir's greedy as written in memory_planning.py (lists scanned, bisect.insort then reverse),
 * to hold mem_algo.c's trees to it on random cases. */
static uint64_t literal_greedy(const lsx_mem_tensor *in, uint32_t n, uint64_t *offsets)
{
    uint32_t sorted[64], ns = 0;
    for (uint32_t i = 0; i < n; i++) { /* insort (right) by size, ascending */
        uint32_t at = ns;
        while (at > 0 && in[sorted[at - 1]].size > in[i].size) at--;
        memmove(sorted + at + 1, sorted + at, sizeof *sorted * (ns - at));
        sorted[at] = i;
        ns++;
    }
    uint64_t osize[64], inside[64];
    uint32_t obj_of[64], nobj = 0;
    for (uint32_t r = ns; r-- > 0;) { /* reversed */
        uint32_t x = sorted[r];
        int32_t pick = -1;
        for (uint32_t j = 0; j < nobj && pick < 0; j++) {
            bool free_ = true;
            for (uint32_t r2 = ns; r2-- > r + 1;) {
                uint32_t a = sorted[r2];
                if (obj_of[a] == j && !(in[x].last < in[a].first || in[x].first > in[a].last)) free_ = false;
            }
            if (free_) pick = (int32_t)j, inside[x] = 0;
        }
        for (uint32_t j = 0; j < nobj && pick < 0; j++) {
            uint64_t m = 0;
            for (uint32_t r2 = ns; r2-- > r + 1;) {
                uint32_t a = sorted[r2];
                if (obj_of[a] == j && !(in[x].last < in[a].first || in[x].first > in[a].last) && inside[a] + in[a].size > m)
                    m = inside[a] + in[a].size;
            }
            if (m > 0 && m + in[x].size <= osize[j]) pick = (int32_t)j, inside[x] = m;
        }
        if (pick < 0) {
            osize[nobj] = in[x].size;
            pick = (int32_t)nobj++;
            inside[x] = 0;
        }
        obj_of[x] = (uint32_t)pick;
    }
    uint64_t base[64], total = 0;
    for (uint32_t j = 0; j < nobj; j++) base[j] = total, total += osize[j];
    for (uint32_t i = 0; i < n; i++) offsets[i] = base[obj_of[i]] + inside[i];
    return total;
}

START_TEST(greedy_matches_exirs_code_on_random_cases)
{
    uint64_t seed = 7;
    for (int c = 0; c < 2000; c++) {
        lsx_mem_tensor t[64];
        uint32_t n = 1 + (uint32_t)(seed >> 33) % 40;
        for (uint32_t i = 0; i < n; i++) {
            seed = seed * 6364136223846793005ull + 1442695040888963407ull;
            uint32_t a = (uint32_t)(seed >> 40) % 30, len = (uint32_t)(seed >> 20) % 8;
            t[i] = (lsx_mem_tensor){.size = 16 * ((seed >> 50) % 5), .first = a, .last = a + len, .order = i};
        }
        uint64_t want[64];
        uint64_t total = literal_greedy(t, n, want);
        uint32_t objs;
        ck_assert_uint_eq(lsx_mem_greedy(t, n, 0, &objs), total);
        for (uint32_t i = 0; i < n; i++) ck_assert_msg(t[i].offset == want[i], "case %d tensor %u: %llu, exir %llu", c, i,
                                                       (unsigned long long)t[i].offset, (unsigned long long)want[i]);
    }
}
END_TEST

/* A program calling an XNNPACK delegate gets exir's 64 bytes after its tensors; the same
 * program with another backend id does not. */
START_TEST(xnnpack_padding)
{
    uint64_t arena[2];
    const char *ids[] = {"XnnpackBackend", "ArithBackend"};
    for (int k = 0; k < 2; k++) {
        char path[512];
        snprintf(path, sizeof path, "%s/p%d.json", tu_tmpdir(), k);
        FILE *f = fopen(path, "w");
        ck_assert_ptr_nonnull(f);
        fprintf(f, "{\"name\": \"b%d\", \"backend_id\": \"%s\", \"tag_prefix\": \"b%d_\", \"dtypes\": [\"float32\"], "
                   "\"ops\": [\"add\", \"mul\"]}\n", k, ids[k], k);
        fclose(f);
        ls_pipeline_opts o;
        ls_pipeline_opts_init(&o);
        ls_error err;
        ck_assert_msg(ls_pipeline_opt(&o, "--backend", path, &err) == 1, "%s", err.msg);
        ls_program *p = pf_sample("two_delegates");
        ls_history h;
        ck_assert(ls_pipeline_run(p, &o, &h, &err) == 0);
        const ls_mem_plan *m = plan_of(&h);
        ck_assert_uint_eq(m->padding, k == 0 ? 64 : 0);
        arena[k] = m->arena;
        if (k == 0) {
            bool said = false;
            for (uint32_t s = 0; s < h.n; s++)
                if (!strcmp(h.steps[s].pass, "memory_plan"))
                    for (uint32_t i = 0; i < h.steps[s].report.n; i++)
                        said |= tu_contains(h.steps[s].report.v[i].text, "64 bytes of padding");
            ck_assert(said);
        }
        ls_history_free(&h);
        ls_pipeline_opts_free(&o);
        ls_program_unref(p);
    }
    ck_assert_uint_eq(arena[0], arena[1] + 64);
}
END_TEST

/* x [2,6]; v1 = view_copy(x, [3,4]); v2 = view_copy(v1, [12]); r = relu(v2); v3 = view_copy(r,
 * [2,6]); output v3. exir: v2 reads x (NormalizeViewCopyBasePass), v1 is dead, v2 becomes
 * memory.view (relu follows it), v3 stays a view_copy (the output follows it). Planned: x (48),
 * relu's alloc (48), view_copy's alloc (48); x alive to the relu (through the view) [0,3], relu's
 * [2,5], view_copy's [4,6]. Sorted later-found first: view_copy's (object 0), relu's (overlaps:
 * object 1), x (free in object 0, which is busy [4,6] only). Arena 96. */
static uint32_t call2(ls_builder *b, ls_op_id op, ls_arg x, ls_arg y, uint16_t n, const ls_tmeta *m)
{
    ls_arg *a = ls_calloc(2, sizeof *a); /* the builder takes the array */
    a[0] = x;
    a[1] = y;
    return ls_build_call(b, NULL, op, a, n, m);
}

static ls_program *views_program(bool dynamic)
{
    ls_builder *b = ls_builder_new("views", LS_DIALECT_EDGE);
    int64_t s26[] = {2, 6}, s34[] = {3, 4}, s12[] = {12};
    ls_tmeta mx = ls_meta(LS_DT_F32, 2, s26), m34 = ls_meta(LS_DT_F32, 2, s34), m12 = ls_meta(LS_DT_F32, 1, s12);
    if (dynamic) {
        mx.sym[0] = ls_intern("s0");
        m34.sym[0] = ls_intern("3*s0/2");
        m12.sym[0] = ls_intern("6*s0");
    }
    uint32_t x = ls_build_input(b, "x", LS_IN_USER_INPUT, NULL, false, &mx, NULL);
    uint32_t v1 = call2(b, LS_OP_view_copy, ls_arg_node(x), ls_arg_ints(s34, 2), 2, &m34);
    uint32_t v2 = call2(b, LS_OP_view_copy, ls_arg_node(v1), ls_arg_ints(s12, 1), 2, &m12);
    uint32_t r = call2(b, LS_OP_relu, ls_arg_node(v2), ls_arg_none(), 1, &m12);
    uint32_t v3 = call2(b, LS_OP_view_copy, ls_arg_node(r), ls_arg_ints(s26, 2), 2, &mx);
    ls_build_output(b, &v3, 1, NULL, NULL);
    return ls_builder_finish(b);
}

static bool has_operator(const ls_pte *pte, const char *name, const char *overload)
{
    const ls_pte_plan *pl = &pte->execution_plan.v[0];
    for (uint32_t i = 0; i < pl->operators.n; i++)
        if (!strcmp(pl->operators.v[i].name, name) && !strcmp(pl->operators.v[i].overload, overload)) return true;
    return false;
}

START_TEST(views_share_their_base)
{
    ls_program *p = views_program(false);
    ls_history h;
    pf_lower(p, "to_out_variant,memory_plan,emit", &h);
    const ls_program *q = h.steps[1].program;
    ck_assert_int_eq(ls_program_find(q, "aten_view_copy_default"), -1); /* v1: dead */
    const ls_node *v2 = q->nodes[ls_program_find(q, "aten_view_copy_default_1")];
    ck_assert_int_eq(v2->op->id, LS_OP_memory_view);
    ck_assert_str_eq(v2->target, "executorch.exir.memory.view");
    ck_assert_str_eq(ls_program_node(q, v2->args[0].v.node)->name, "x");
    const ls_node *v3 = q->nodes[ls_program_find(q, "aten_view_copy_default_2")];
    ck_assert_int_eq(v3->op->id, LS_OP_view_copy);
    const ls_mem_plan *m = plan_of(&h);
    ck_assert_uint_eq(m->n_slots, 3);
    ck_assert_ptr_eq(slot_of(&h, "aten_view_copy_default_1", 0), slot_of(&h, "x", 0));
    ck_assert_uint_eq(slot_of(&h, "x", 0)->offset, 0);
    ck_assert_uint_eq(slot_of(&h, "aten_relu_default", 0)->offset, 48);
    ck_assert_uint_eq(slot_of(&h, "aten_view_copy_default_2", 0)->offset, 0);
    ck_assert_uint_eq(m->arena, 96);
    /* emitted: the static view is executorch_prim::et_view (exir's _emit_view), out at x's place */
    ls_emit_summary es;
    const ls_pte *pte = ls_program_emitted(h.steps[h.n - 1].program, &es);
    ck_assert(has_operator(pte, "executorch_prim::et_view", "default"));
    ck_assert(has_operator(pte, "aten::relu", "out") && has_operator(pte, "aten::view_copy", "out"));
    ck_assert_uint_eq(es.kernel_calls, 3);
    ls_pte_check_report r;
    ck_assert_uint_eq(ls_pte_runtime_check(pte, &r), 0);
    ls_pte_check_report_free(&r);
    /* the file reads back to the same results: the view is found again at x's place */
    char path[512];
    snprintf(path, sizeof path, "%s/views.pte", tu_tmpdir());
    ls_error err;
    ck_assert_msg(ls_export(&h, -1, path, true, NULL, &err) == 0, "%s", err.msg);
    char *out = NULL;
    int rc = tu_runf(&out, "run %s --steps 2", path);
    ck_assert_msg(rc == 0, "%s", out);
    free(out);
    ls_program *back;
    ck_assert(ls_load(path, NULL, &back, &err) == 0);
    ls_runner *ra = pf_runner(back), *rb = pf_runner(p);
    ls_value *ia, *ib, *oa, *ob;
    uint32_t na, nb, noa, nob;
    ck_assert(ls_make_inputs(p, 3, 0, &ib, &nb, &err) == 0 && ls_make_inputs(back, 3, 0, &ia, &na, &err) == 0);
    ck_assert(ls_runner_run(ra, ia, na, &oa, &noa, &err) == 0);
    ck_assert(ls_runner_run(rb, ib, nb, &ob, &nob, &err) == 0);
    ck_assert_uint_eq(noa, 1);
    ck_assert_int_eq(memcmp(oa[0].t->data, ob[0].t->data, 48), 0);
    pf_values_free(ia, na);
    pf_values_free(ib, nb);
    pf_values_free(oa, noa);
    pf_values_free(ob, nob);
    ls_runner_free(ra);
    ls_runner_free(rb);
    ls_program_unref(back);
    ls_history_free(&h);
    ls_program_unref(p);

    /* dynamic sizes: the view is executorch_prim::et_view.default(x, size, out), out at x's place */
    p = views_program(true);
    pf_lower(p, "to_out_variant,memory_plan,emit", &h);
    pte = ls_program_emitted(h.steps[h.n - 1].program, &es);
    ck_assert(has_operator(pte, "executorch_prim::et_view", "default"));
    ck_assert_uint_eq(ls_pte_runtime_check(pte, &r), 0);
    ls_pte_check_report_free(&r);
    ls_history_free(&h);
    ls_program_unref(p);
}
END_TEST

/* ExecuTorch's own case: exir/tests/test_remove_view_copy.py, TestModel1 and test_spec.
 * v1 = parameter [5,6] viewed [6,5]; v2 = x viewed [6,5]; v3 = mul(v1, v2) viewed [30];
 * v4 = mul(v3, parameter2); outputs v4 viewed [6,5] and [2,15]. exir expects operators
 * et_view, mul, view_copy and seven instructions by operator index 0 0 1 0 1 2 2 (the two views
 * the output reads stay view_copy), the mul's lifetime [5, 9] (extended through its view), the
 * view of the mul at the mul's place, and the view of the parameter a constant on its bytes. */
static ls_program *remove_view_copy_model(void)
{
    ls_builder *b = ls_builder_new("TestModel1", LS_DIALECT_EDGE);
    int64_t s56[] = {5, 6}, s65[] = {6, 5}, s30[] = {30}, s215[] = {2, 15};
    float pv[30], p2v[30];
    for (int i = 0; i < 30; i++) pv[i] = 0.1f * (float)i, p2v[i] = 1.0f - 0.05f * (float)i;
    uint32_t p = pf_input(b, "p_parameter", LS_IN_PARAMETER, "parameter", pf_f32(2, s56, pv));
    uint32_t p2 = pf_input(b, "p_parameter2", LS_IN_PARAMETER, "parameter2", pf_f32(1, s30, p2v));
    uint32_t x = pf_user_input(b, "x", LS_DT_F32, 2, s56);
    ls_arg a1[] = {ls_arg_node(p), ls_arg_ints(s65, 2)};
    uint32_t v1 = pf_call(b, "aten_view_copy_default", LS_OP_view_copy, a1, 2, LS_DT_F32, 2, s65);
    ls_arg a2[] = {ls_arg_node(x), ls_arg_ints(s65, 2)};
    uint32_t v2 = pf_call(b, "aten_view_copy_default_1", LS_OP_view_copy, a2, 2, LS_DT_F32, 2, s65);
    ls_arg a3[] = {ls_arg_node(v1), ls_arg_node(v2)};
    uint32_t m = pf_call(b, "aten_mul_tensor", LS_OP_mul_Tensor, a3, 2, LS_DT_F32, 2, s65);
    ls_arg a4[] = {ls_arg_node(m), ls_arg_ints(s30, 1)};
    uint32_t v3 = pf_call(b, "aten_view_copy_default_2", LS_OP_view_copy, a4, 2, LS_DT_F32, 1, s30);
    ls_arg a5[] = {ls_arg_node(v3), ls_arg_node(p2)};
    uint32_t m2 = pf_call(b, "aten_mul_tensor_1", LS_OP_mul_Tensor, a5, 2, LS_DT_F32, 1, s30);
    ls_arg a6[] = {ls_arg_node(m2), ls_arg_ints(s65, 2)};
    uint32_t v5 = pf_call(b, "aten_view_copy_default_3", LS_OP_view_copy, a6, 2, LS_DT_F32, 2, s65);
    ls_arg a7[] = {ls_arg_node(m2), ls_arg_ints(s215, 2)};
    uint32_t v6 = pf_call(b, "aten_view_copy_default_4", LS_OP_view_copy, a7, 2, LS_DT_F32, 2, s215);
    const uint32_t outs[] = {v5, v6};
    ls_build_output(b, outs, 2, NULL, NULL);
    return ls_builder_finish(b);
}

START_TEST(executorchs_remove_view_copy_case)
{
    ls_program *p = remove_view_copy_model();
    ls_history h;
    pf_lower(p, "to_out_variant,memory_plan,emit", &h);
    const ls_program *q = h.steps[1].program;
    ck_assert_int_eq(q->nodes[ls_program_find(q, "aten_view_copy_default_3")]->op->id, LS_OP_view_copy);
    ck_assert_int_eq(q->nodes[ls_program_find(q, "aten_view_copy_default_4")]->op->id, LS_OP_view_copy);
    ck_assert_int_eq(q->nodes[ls_program_find(q, "aten_view_copy_default_2")]->op->id, LS_OP_memory_view);
    const ls_mem_slot *mul = slot_of(&h, "aten_mul_tensor", 0);
    ck_assert_uint_eq(mul->first, 5);
    ck_assert_uint_eq(mul->last, 9);
    ck_assert_ptr_eq(slot_of(&h, "aten_view_copy_default_2", 0), mul);
    ls_emit_summary es;
    const ls_pte *pte = ls_program_emitted(h.steps[h.n - 1].program, &es);
    const ls_pte_plan *pl = &pte->execution_plan.v[0];
    ck_assert_uint_eq(pl->operators.n, 3);
    ck_assert_str_eq(pl->operators.v[0].name, "executorch_prim::et_view");
    ck_assert_str_eq(pl->operators.v[0].overload, "default");
    ck_assert_str_eq(pl->operators.v[1].name, "aten::mul");
    ck_assert_str_eq(pl->operators.v[2].name, "aten::view_copy");
    const ls_pte_instructions *ins = &pl->chains.v[0].instructions;
    const uint32_t want[] = {0, 0, 1, 0, 1, 2, 2};
    ck_assert_uint_eq(ins->n, 7);
    for (uint32_t i = 0; i < 7; i++) {
        ck_assert_int_eq(ins->v[i].kind, LS_PTE_KERNEL_CALL);
        ck_assert_uint_eq(ins->v[i].kernel_call.op_index, want[i]);
    }
    /* the parameter's view: a constant on the parameter's bytes */
    const ls_pte_tensor *base = &pl->values.v[ins->v[0].kernel_call.args.v[0]].tensor;
    const ls_pte_tensor *v1 = &pl->values.v[ins->v[0].kernel_call.args.v[2]].tensor;
    ck_assert_uint_gt(base->data_buffer_idx, 0);
    ck_assert_uint_eq(v1->data_buffer_idx, base->data_buffer_idx);
    ck_assert(!v1->has_allocation_info);
    /* the mul's view: at the mul's place */
    const ls_pte_i32s *ma = &ins->v[2].kernel_call.args, *va = &ins->v[3].kernel_call.args;
    const ls_pte_tensor *mt = &pl->values.v[ma->v[ma->n - 1]].tensor, *vt = &pl->values.v[va->v[2]].tensor;
    ck_assert(mt->has_allocation_info && vt->has_allocation_info);
    ck_assert_uint_eq(vt->allocation_info.memory_offset_low, mt->allocation_info.memory_offset_low);
    ck_assert_int_eq(va->v[0], ma->v[ma->n - 1]);
    ls_pte_check_report r;
    ck_assert_uint_eq(ls_pte_runtime_check(pte, &r), 0);
    ls_pte_check_report_free(&r);
    /* exported and read back, it computes what the program does */
    char path[512];
    snprintf(path, sizeof path, "%s/remove_view_copy.pte", tu_tmpdir());
    ls_error err;
    ck_assert_msg(ls_export(&h, -1, path, true, NULL, &err) == 0, "%s", err.msg);
    ls_program *back;
    ck_assert_msg(ls_load(path, NULL, &back, &err) == 0, "%s", err.msg);
    ls_runner *ra = pf_runner(back), *rb = pf_runner(p);
    ls_value *ia, *ib, *oa, *ob;
    uint32_t na, nb, noa, nob;
    ck_assert(ls_make_inputs(p, 3, 0, &ib, &nb, &err) == 0 && ls_make_inputs(back, 3, 0, &ia, &na, &err) == 0);
    ck_assert_msg(ls_runner_run(ra, ia, na, &oa, &noa, &err) == 0, "%s", err.msg);
    ck_assert(ls_runner_run(rb, ib, nb, &ob, &nob, &err) == 0);
    ck_assert_uint_eq(noa, 2);
    for (uint32_t k = 0; k < 2; k++) ck_assert_int_eq(memcmp(oa[k].t->data, ob[k].t->data, 120), 0);
    pf_values_free(ia, na);
    pf_values_free(ib, nb);
    pf_values_free(oa, noa);
    pf_values_free(ob, nob);
    ls_runner_free(ra);
    ls_runner_free(rb);
    ls_program_unref(back);
    ls_history_free(&h);
    ls_program_unref(p);
}
END_TEST

/* exir's own plans, in real files: a .pte re-lowered for portable kernels (memory_plan's greedy
 * on the program the file holds) against flatc's decode of the file exir wrote
 * (shared/data/pte/decoded). et_android_xor (66 KernelCalls, 72 planned tensors: a 2025 exir),
 * cc_const_methods and ModuleLinear: every instruction's operator and each planned argument's
 * sizes and offset, and the arena. rs_add, node_mul and et_apple_add come from an older exir,
 * whose greedy took the tensors in graph order without sorting them by size (x 0, y 16, out
 * 32, where today's gives out 0): the same arena, other offsets; only the arena is held. The
 * XNNPACK files (cc_add, cc_dynamic, cc_quantized, djl_conv) lowered to XNNPACK again: the
 * delegate call's tensors at exir's offsets (cc_add: out 0, y 16, x 32, equal sizes the
 * later-found first) and the arena with _contains_xnnpack_delegate's 64 bytes. */
static void planned_args(const cJSON *plan, const cJSON *args, ls_buf *b)
{
    const cJSON *a;
    cJSON_ArrayForEach(a, args) {
        const cJSON *v = cJSON_GetArrayItem(cJSON_GetObjectItem(plan, "values"), a->valueint);
        const cJSON *t = cJSON_GetObjectItem(v, "val"), *ai = cJSON_GetObjectItem(t, "allocation_info");
        if (strcmp(cJSON_GetObjectItem(v, "val_type")->valuestring, "Tensor") || !ai || cJSON_IsNull(ai)) continue;
        ls_buf_puts(b, " [");
        const cJSON *d;
        cJSON_ArrayForEach(d, cJSON_GetObjectItem(t, "sizes")) ls_buf_printf(b, "%d,", d->valueint);
        ls_buf_printf(b, "]@%d", cJSON_GetObjectItem(ai, "memory_offset_low")->valueint);
    }
}

/* One line per instruction: the operator and its planned arguments' sizes and offsets. */
static char *plan_lines(const cJSON *plan)
{
    ls_buf b = {0};
    const cJSON *in;
    cJSON_ArrayForEach(in, cJSON_GetObjectItem(cJSON_GetArrayItem(cJSON_GetObjectItem(plan, "chains"), 0), "instructions")) {
        const cJSON *a = cJSON_GetObjectItem(in, "instr_args");
        if (strcmp(cJSON_GetObjectItem(in, "instr_args_type")->valuestring, "KernelCall")) {
            ls_buf_puts(&b, cJSON_GetObjectItem(in, "instr_args_type")->valuestring);
            planned_args(plan, cJSON_GetObjectItem(a, "args"), &b); /* a DelegateCall's inputs and outputs */
            ls_buf_putc(&b, '\n');
            continue;
        }
        const cJSON *op = cJSON_GetArrayItem(cJSON_GetObjectItem(plan, "operators"), cJSON_GetObjectItem(a, "op_index")->valueint);
        ls_buf_printf(&b, "%s.%s", cJSON_GetObjectItem(op, "name")->valuestring, cJSON_GetObjectItem(op, "overload")->valuestring);
        planned_args(plan, cJSON_GetObjectItem(a, "args"), &b);
        ls_buf_putc(&b, '\n');
    }
    return ls_buf_take(&b);
}

START_TEST(greedy_plans_real_files_as_exir_did)
{
    if (!tu_shared("data/pte/decoded")) return;
    const struct {
        const char *name;
        bool offsets, xnnpack;
        int64_t arena;
    } files[] = {
        {"et_android_xor", true, false, 624}, {"cc_const_methods", true, false, 48},
        {"et_ModuleLinear-no-constant-segment", true, false, 32},
        {"rs_add", false, false, 48}, {"node_mul", false, false, 96}, {"et_apple_add", false, false, 48},
        /* lowered to XNNPACK again: the delegate call's tensors and the 64 bytes of padding */
        {"cc_add", true, true, 112}, {"cc_dynamic", true, true, 128}, {"cc_quantized", true, true, 192},
        {"djl_conv", true, true, 11328},
    };
    for (size_t k = 0; k < sizeof files / sizeof files[0]; k++) {
        ls_program *p;
        ls_error err;
        ck_assert_msg(ls_load(pt_path(files[k].name, ".pte"), NULL, &p, &err) == 0, "%s: %s", files[k].name, err.msg);
        ls_pipeline_opts o;
        ls_pipeline_opts_init(&o);
        o.relower = true;
        if (files[k].xnnpack)
            ck_assert(ls_pipeline_opt(&o, "--backend", "xnnpack", &err) == 1);
        else
            o.no_backends = true;
        ls_history h;
        ck_assert_msg(ls_pipeline_run(p, &o, &h, &err) == 0, "%s: %s", files[k].name, err.msg);
        char path[600];
        snprintf(path, sizeof path, "%s/%s_replanned.pte", tu_tmpdir(), files[k].name);
        ck_assert_msg(ls_export(&h, -1, path, true, NULL, &err) == 0, "%s: %s", files[k].name, err.msg);
        size_t n;
        uint8_t *d = pt_load(path, &n);
        cJSON *got = pt_flatc_json(d, n, "replanned.pte", "program.fbs", "--defaults-json");
        free(d);
        char rel[300];
        snprintf(rel, sizeof rel, "data/pte/decoded/%s.json", files[k].name);
        char *text = (char *)pt_load(tu_shared(rel), &n);
        cJSON *want = pt_parse_flatc(text);
        free(text);
        if (!got) {
            tu_skip("flatc is not installed: re-planned real files are not compared with exir's plans");
        } else {
            const cJSON *pw = cJSON_GetArrayItem(cJSON_GetObjectItem(want, "execution_plan"), 0);
            const cJSON *pg = cJSON_GetArrayItem(cJSON_GetObjectItem(got, "execution_plan"), 0);
            ck_assert_int_eq(cJSON_GetArrayItem(cJSON_GetObjectItem(pw, "non_const_buffer_sizes"), 1)->valueint, files[k].arena);
            ck_assert_int_eq(cJSON_GetArrayItem(cJSON_GetObjectItem(pg, "non_const_buffer_sizes"), 1)->valueint, files[k].arena);
            if (files[k].offsets) {
                char *lw = plan_lines(pw), *lg = plan_lines(pg);
                ck_assert_msg(!strcmp(lw, lg), "%s: exir planned\n%s\nlowerscope\n%s", files[k].name, lw, lg);
                free(lw);
                free(lg);
            }
            cJSON_Delete(got);
        }
        cJSON_Delete(want);
        ls_history_free(&h);
        ls_pipeline_opts_free(&o);
        ls_program_unref(p);
    }
}
END_TEST

Suite *memory_plan_suite(void)
{
    Suite *s = suite_create("memory_plan");
    TCase *tc = tcase_create("memory_plan");
    tcase_set_timeout(tc, 60);
    tcase_add_test(tc, greedy_kv_cache_by_hand);
    tcase_add_test(tc, naive_kv_cache_by_hand);
    tcase_add_test(tc, greedy_by_hand);
    tcase_add_test(tc, greedy_matches_exirs_code_on_random_cases);
    tcase_add_test(tc, xnnpack_padding);
    tcase_add_test(tc, views_share_their_base);
    tcase_add_test(tc, executorchs_remove_view_copy_case);
    tcase_add_test(tc, greedy_plans_real_files_as_exir_did);
    suite_add_tcase(s, tc);
    return s;
}
