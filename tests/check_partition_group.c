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
    ck_assert(pt_report_has(&rep, "`tag1` takes the constants its ops bring with them: `p_w`"));
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


static bool is_quant_node(const ls_node *n)
{
    return n->kind == LS_NODE_CALL && n->op && strcmp(n->op->ns, "quantized_decomposed") == 0;
}

/* samples/quantized_mlp with XNNPACK: each GEMM takes its dq'd activation, its weight's
 * dequantize_per_channel with the int8 constant, scales and zero points, its bias, the fused relu
 * and the q after it (GEMMConfig's static quantization); the quantize of each input and the
 * dequantize of each output stand alone and are taken too: QuantizedPerTensorConfig and
 * DeQuantizedPerTensorConfig (generic_node_configs.py) take a q/dq as [node], int8 being a valid
 * dtype for q/dq nodes (_check_node_has_valid_dtype), and the partitions merge into one (the
 * real cc_quantized.pte has its input's q and output's dq inside the delegate as XNNConvert). */
START_TEST(quantized_mlp_groups_inside)
{
    ls_program *p = pf_sample("quantized_mlp");
    ls_history h;
    pf_lower_backend(p, "xnnpack", &h);
    const ls_program *q = h.steps[ls_history_find_step(&h, "partition", NULL)].program;
    const char *tag = pt_must(q, "aten_linear_default")->tag;
    ck_assert_ptr_nonnull(tag);
    uint32_t cpu_q = 0, in_tag = 0;
    for (uint32_t i = 0; i < q->n_nodes; i++) {
        const ls_node *n = q->nodes[i];
        if (is_quant_node(n)) {
            if (n->tag) {
                ck_assert_str_eq(n->tag, tag);
                in_tag++;
            } else {
                cpu_q++;
            }
        }
        if (is_op(n, LS_OP_linear) || is_op(n, LS_OP_convolution) || is_op(n, LS_OP_relu)) ck_assert_str_eq(n->tag, tag);
    }
    ck_assert_uint_eq(cpu_q, 0);
    ck_assert_uint_eq(in_tag, 13); /* 3 activation dq, 3 weight dq, 3 q after the GEMMs; the q of x and y, the dq of both outputs */
    for (int k = 0; k < 3; k++) { /* the weights' constants come along (take_constants "deps") */
        ck_assert_str_eq(pt_must(q, ls_internf("c__frozen_param%d", k))->tag, tag);
        ck_assert_str_eq(pt_must(q, ls_internf("c__scale_%d", k))->tag, tag);
        ck_assert_str_eq(pt_must(q, ls_internf("c__zero_point_%d", k))->tag, tag);
    }
    ck_assert_str_eq(pt_must(q, "p_fc1_bias")->tag, tag);
    /* lowered: one delegate, and nothing computes at the top level (as in cc_quantized.pte) */
    const ls_program *low = h.steps[ls_history_find_step(&h, "to_backend", NULL)].program;
    ck_assert_uint_eq(pt_count_op(low, LS_OP_call_delegate), 1);
    ck_assert_uint_eq(pt_count_op(low, LS_OP_quantize_per_tensor) + pt_count_op(low, LS_OP_dequantize_per_tensor), 0);
    ck_assert_uint_eq(pt_count_op(low, LS_OP_dequantize_per_channel) + pt_count_op(low, LS_OP_linear), 0);
    ck_assert_uint_eq(pt_count_inputs(low, LS_IN_CONSTANT_TENSOR) + pt_count_inputs(low, LS_IN_PARAMETER), 0);
    ls_history_free(&h);
    ls_program_unref(p);
}
END_TEST

static uint32_t qcall(ls_builder *b, ls_op_id op, ls_arg *a, uint16_t n, ls_dtype dt, int nd, const int64_t *sz)
{
    ls_arg *args = calloc(n, sizeof *args);
    memcpy(args, a, sizeof *args * n);
    ls_tmeta m = ls_meta(dt, nd, sz);
    return ls_build_call(b, NULL, op, args, n, &m);
}

#define DT(d) ((ls_arg){.kind = LS_ARG_DTYPE, .v.i = (d)})

/* Dynamic quantization (GEMMConfig, DYNAMIC_QUANT): choose_qparams → getitem ×2 → q.tensor →
 * dq.tensor → linear with a per-channel weight: the whole chain is one group, nothing stays out.
 * A per-tensor weight with a dynamic activation is refused, and a quantized weight with a float
 * activation too (rule quant_pattern). */
START_TEST(dynamic_quantization_chain_is_one_group)
{
    int64_t sx[2] = {2, 4}, sw[2] = {3, 4}, three = 3, one = 1, sy[2] = {2, 3};
    for (int variant = 0; variant < 3; variant++) {
        ls_builder *b = ls_builder_new("model", LS_DIALECT_EDGE);
        uint32_t w = pt_input(b, "c_w", LS_IN_CONSTANT_TENSOR, "w", false, LS_DT_I8, 2, sw);
        uint32_t ws = pt_input(b, "c_ws", LS_IN_CONSTANT_TENSOR, "ws", false, LS_DT_F32, 1, &three);
        uint32_t wz = pt_input(b, "c_wz", LS_IN_CONSTANT_TENSOR, "wz", false, LS_DT_I64, 1, &three);
        uint32_t x = pt_input(b, "x", LS_IN_USER_INPUT, NULL, false, LS_DT_F32, 2, sx);
        ls_arg cq[5] = {ls_arg_node(x), ls_arg_int(-128), ls_arg_int(127), ls_arg_float(1e-5), DT(LS_DT_I8)};
        uint32_t ch = qcall(b, LS_OP_choose_qparams_tensor, cq, 5, LS_DT_F64, 1, &one);
        ls_program *bp = ls_builder_program(b);
        ls_tmeta two[2] = {ls_meta(LS_DT_F64, 1, &one), ls_meta(LS_DT_I64, 1, &one)};
        ls_node_set_vals(bp->nodes[bp->n_nodes - 1], LS_VAL_TENSORS, two, 2);
        ls_arg g0[2] = {ls_arg_node(ch), ls_arg_int(0)}, g1[2] = {ls_arg_node(ch), ls_arg_int(1)};
        uint32_t s = qcall(b, LS_OP_getitem, g0, 2, LS_DT_F64, 1, &one), z = qcall(b, LS_OP_getitem, g1, 2, LS_DT_I64, 1, &one);
        ls_arg qa[6] = {ls_arg_node(x), ls_arg_node(s), ls_arg_node(z), ls_arg_int(-128), ls_arg_int(127), DT(LS_DT_I8)};
        uint32_t qx = qcall(b, LS_OP_quantize_per_tensor_tensor, qa, 6, LS_DT_I8, 2, sx);
        qa[0] = ls_arg_node(qx);
        uint32_t act = variant == 2 ? x : qcall(b, LS_OP_dequantize_per_tensor_tensor, qa, 6, LS_DT_F32, 2, sx);
        ls_arg wa[7] = {ls_arg_node(w), ls_arg_node(ws), ls_arg_node(wz), ls_arg_int(0), ls_arg_int(-127), ls_arg_int(127), DT(LS_DT_I8)};
        ls_arg wt[6] = {ls_arg_node(w), ls_arg_float(0.02), ls_arg_int(0), ls_arg_int(-127), ls_arg_int(127), DT(LS_DT_I8)};
        uint32_t wdq = variant == 1 ? qcall(b, LS_OP_dequantize_per_tensor, wt, 6, LS_DT_F32, 2, sw)
                                    : qcall(b, LS_OP_dequantize_per_channel, wa, 7, LS_DT_F32, 2, sw);
        ls_arg la[2] = {ls_arg_node(act), ls_arg_node(wdq)};
        uint32_t y = qcall(b, LS_OP_linear, la, 2, LS_DT_F32, 2, sy);
        uint32_t outs[2] = {y, qx};
        ls_build_output(b, outs, variant == 2 ? 2 : 1, NULL, NULL);
        ls_program *p = ls_builder_finish(b);
        ls_profile *prof = xnnpack();
        pt_step(&p, ls_pass_partition, prof);
        const ls_node *lin = pt_must(p, "aten_linear_default");
        if (variant == 0) {
            ck_assert_str_eq(lin->tag, "tag0");
            for (uint32_t i = 0; i < p->n_nodes; i++)
                if (p->nodes[i]->kind == LS_NODE_CALL) ck_assert_msg(p->nodes[i]->tag, "%s left out", p->nodes[i]->name);
            ck_assert_str_eq(pt_must(p, "c_w")->tag, "tag0");
        } else {
            ck_assert_ptr_null(lin->tag);
            ck_assert_str_eq(lin->reason_detail,
                             variant == 1 ? "XNNPACK does not take per-tensor quantized weights with dynamically quantized "
                                            "activations (rule quant_pattern)"
                                          : "XNNPACK needs a dequantized activation (a dq node in front of it) (rule quant_pattern)");
        }
        ls_profile_free(prof);
        ls_program_unref(p);
    }
}
END_TEST


/* ---- a direct transcription of GroupBasedPartitioner (group_partitioner.py), all pairs, full
 * downstream sets, for graphs of single-node groups */
#define GREF_MAX PT_DAG_MAX
typedef struct gref {
    pt_dag d;
    bool down[GREF_MAX][GREF_MAX]; /* _DependencyViewer.downstreams */
    int part[GREF_MAX];            /* the partition id of each node, -1 on the CPU */
} gref;

static void gref_partition(gref *g)
{
    for (int v = g->d.n; v-- > 0;)
        for (int k = 0; k < g->d.nus[v]; k++) {
            int u = g->d.users[v][k];
            g->down[v][u] = true;
            for (int w = 0; w < g->d.n; w++) g->down[v][w] |= g->down[u][w];
        }
    int owner[GREF_MAX], nparts = 0; /* _process_all_nodes: reversed graph order */
    for (int v = g->d.n; v-- > 0;) owner[v] = g->d.sup[v] ? nparts++ : -1;
    for (int v = 0; v < g->d.n; v++) g->part[v] = owner[v];
    bool gone[GREF_MAX] = {false};
    for (int p1 = 0; p1 < nparts; p1++) { /* _merge_partitions */
        if (gone[p1]) continue;
        for (int p2 = p1 + 1; p2 < nparts; p2++) {
            if (gone[p2]) continue;
            bool ok = true; /* _can_merge_partitions: p2's users outside p1 ∪ p2 must not reach either */
            for (int x = 0; x < g->d.n && ok; x++) {
                if (g->part[x] != p2) continue;
                for (int k = 0; k < g->d.nus[x] && ok; k++) {
                    int u = g->d.users[x][k];
                    if (g->part[u] == p1 || g->part[u] == p2) continue;
                    for (int w = 0; w < g->d.n && ok; w++) ok = !(g->down[u][w] && (g->part[w] == p1 || g->part[w] == p2));
                }
            }
            if (!ok) continue;
            for (int x = 0; x < g->d.n; x++)
                if (g->part[x] == p2) g->part[x] = p1;
            gone[p2] = true;
        }
    }
}

/* Random graphs of supported (add) and unsupported (atan2) nodes: the tags are the ids of
 * the transcription above; then to_backend takes every partition (none has a cycle). */
START_TEST(random_graphs_match_group_partitioner)
{
    unsigned seed = 4242;
    ls_profile *prof = pt_profile("{\"name\": \"grp\", \"backend_id\": \"GroupBackend\", \"partitioner\": \"group\", "
                                  "\"ops\": [\"add.Tensor\"]}");
    for (int trial = 0; trial < 400; trial++) {
        gref g;
        memset(&g, 0, sizeof g);
        pt_dag_random(&g.d, &seed, 1 + trial % 6);
        uint32_t id[GREF_MAX];
        ls_program *p = pt_dag_program(&g.d, LS_OP_add_Tensor, LS_OP_atan2, id);
        pt_step(&p, ls_pass_partition, prof);
        gref_partition(&g);
        pt_dag_expect_tags(p, id, g.part, g.d.n, trial);
        pt_step(&p, ls_pass_to_backend, prof);
        ls_program_unref(p);
    }
    ls_profile_free(prof);
}
END_TEST

Suite *partition_group_suite(void)
{
    Suite *s = suite_create("partition_group");
    TCase *tc = tcase_create("group");
    tcase_set_timeout(tc, 30);
    tcase_add_test(tc, group_numbering_keeps_the_first_id);
    tcase_add_test(tc, random_graphs_match_group_partitioner);
    tcase_add_test(tc, group_shared_weight_stays_with_the_first_gemm);
    tcase_add_test(tc, kv_cache_with_xnnpack);
    tcase_add_test(tc, to_edge_keeps_linear_for_xnnpack);
    tcase_add_test(tc, shipped_profiles_from_any_directory);
    tcase_add_test(tc, tiny_llama_attention_mm_on_cpu);
    tcase_add_test(tc, quantized_mlp_groups_inside);
    tcase_add_test(tc, dynamic_quantization_chain_is_one_group);
    suite_add_tcase(s, tc);
    return s;
}
