/* Helpers for the pass tests (header-only, static: each suite takes what it uses).
 * Programs are built with the core's builder (build.h); these helpers run one pass, find
 * nodes and count what the exir tests count. */
#ifndef LS_PASSTEST_H
#define LS_PASSTEST_H

#include <check.h>
#include <stdlib.h>
#include <string.h>

#include "build.h"
#include "passes.h"
#include "profile.h"

#define PT_UNUSED __attribute__((unused))

/* Runs one pass. Returns the new program (the caller unrefs) or NULL with *err set. The report
 * is kept in *rep (the caller frees it with ls_report_free) when rep is given. */
static PT_UNUSED ls_program *pt_run(ls_pass_fn fn, const ls_program *in, const ls_profile *prof, ls_report *rep,
                                    ls_error *err)
{
    ls_report local = {0};
    ls_error e;
    e.msg[0] = 0;
    ls_pass_ctx ctx = {.profile = prof, .report = rep ? rep : &local, .err = err ? err : &e};
    ls_program *out = NULL;
    int rc = fn(in, &out, &ctx);
    ls_report_free(&local);
    if (rc != 0) return NULL;
    ck_assert_ptr_nonnull(out);
    ck_assert_ptr_ne(out, in);
    return out;
}

/* Runs a pass that must succeed and replaces *p by its result. */
static PT_UNUSED void pt_step(ls_program **p, ls_pass_fn fn, const ls_profile *prof)
{
    ls_error err;
    err.msg[0] = 0;
    ls_program *out = pt_run(fn, *p, prof, NULL, &err);
    if (!out) ck_abort_msg("pass failed: %s", err.msg);
    ls_program_unref(*p);
    *p = out;
}

static PT_UNUSED const ls_node *pt_node(const ls_program *p, const char *name)
{
    int32_t i = ls_program_find(p, name);
    return i >= 0 ? p->nodes[i] : NULL;
}

static PT_UNUSED const ls_node *pt_must(const ls_program *p, const char *name)
{
    const ls_node *n = pt_node(p, name);
    if (!n) ck_abort_msg("no node %s in %s", name, p->name);
    return n;
}

/* Sets a node's tag (NULL: untag), registering the tag with the bundled backend. */
static PT_UNUSED void pt_tag(ls_program *p, const char *name, const char *tag)
{
    int32_t i = ls_program_find(p, name);
    if (i < 0) ck_abort_msg("no node %s to tag", name);
    ls_node *n = ls_program_edit(p, (uint32_t)i);
    n->tag = ls_intern(tag);
    if (tag && !ls_program_tag_backend(p, tag)) ls_program_add_tag(p, tag, "BundledBackend");
}

static PT_UNUSED uint32_t pt_count_kind(const ls_program *p, ls_node_kind k)
{
    uint32_t c = 0;
    for (uint32_t i = 0; i < p->n_nodes; i++) c += p->nodes[i]->kind == k;
    return c;
}

static PT_UNUSED uint32_t pt_count_inputs(const ls_program *p, ls_input_kind k)
{
    uint32_t c = 0;
    for (uint32_t i = 0; i < p->n_inputs; i++) c += p->inputs[i].kind == k;
    return c;
}

static PT_UNUSED uint32_t pt_count_outputs(const ls_program *p, ls_output_kind k)
{
    uint32_t c = 0;
    for (uint32_t i = 0; i < p->n_outputs; i++) c += p->outputs[i].kind == k;
    return c;
}

static PT_UNUSED uint32_t pt_count_op(const ls_program *p, ls_op_id id)
{
    uint32_t c = 0;
    for (uint32_t i = 0; i < p->n_nodes; i++) c += p->nodes[i]->op && p->nodes[i]->op->id == id;
    return c;
}

/* The executorch_call_delegate nodes' argument count (lowered_module included), nth one. */
static PT_UNUSED const ls_node *pt_delegate_call(const ls_program *p, uint32_t nth)
{
    for (uint32_t i = 0; i < p->n_nodes; i++)
        if (p->nodes[i]->op && p->nodes[i]->op->id == LS_OP_call_delegate && nth-- == 0) return p->nodes[i];
    return NULL;
}

static PT_UNUSED const ls_program *pt_sub(const ls_program *p, const char *name)
{
    const ls_submodule *s = ls_program_sub(p, name);
    if (!s) ck_abort_msg("no submodule %s", name);
    return s->program;
}

/* Whether some program (top level or a lowered module) lists a target twice. */
static PT_UNUSED bool pt_target_twice(const ls_program *p)
{
    for (uint32_t i = 0; i < p->n_inputs; i++)
        for (uint32_t j = i + 1; j < p->n_inputs; j++)
            if (p->inputs[i].target && p->inputs[i].target == p->inputs[j].target) return true;
    for (uint32_t s = 0; s < p->n_subs; s++)
        if (pt_target_twice(p->subs[s].program)) return true;
    return false;
}

static PT_UNUSED bool pt_report_has(const ls_report *r, const char *text)
{
    for (uint32_t i = 0; i < r->n; i++)
        if (strstr(r->v[i].text, text)) return true;
    return false;
}

/* Names of the call_function nodes' ops ("executorch_call_delegate,getitem") for comparisons. */
static PT_UNUSED char *pt_call_ops(const ls_program *p)
{
    ls_buf b = {0};
    for (uint32_t i = 0; i < p->n_nodes; i++) {
        const ls_node *n = p->nodes[i];
        if (n->kind != LS_NODE_CALL) continue;
        if (b.len) ls_buf_putc(&b, ',');
        ls_buf_puts(&b, n->op ? (n->op->id == LS_OP_call_delegate ? "executorch_call_delegate" : n->op->name) : "?");
    }
    return ls_buf_take(&b);
}

static PT_UNUSED ls_tensor *pt_f32(int64_t n, double v0, double step)
{
    ls_tensor *t = ls_tensor_alloc(LS_DT_F32, 1, &n);
    for (int64_t i = 0; i < n; i++) ls_tensor_set_f64(t, i, v0 + step * (double)i);
    return t;
}

/* An input with fresh data (the builder takes its own reference). */
static PT_UNUSED uint32_t pt_input(ls_builder *b, const char *name, ls_input_kind kind, const char *target, bool persistent,
                                   ls_dtype dt, int ndim, const int64_t *sizes)
{
    ls_tmeta m = ls_meta(dt, ndim, sizes);
    ls_tensor *t = kind == LS_IN_USER_INPUT ? NULL : ls_tensor_alloc(dt, ndim, sizes);
    if (t)
        for (int64_t i = 0; i < t->numel; i++) ls_tensor_set_f64(t, i, 0.5 + (double)i);
    uint32_t id = ls_build_input(b, name, kind, target, persistent, &m, t);
    ls_tensor_unref(t);
    return id;
}

/* add.Tensor(a, b) and friends, two node ids. */
static PT_UNUSED uint32_t pt_bin(ls_builder *b, ls_op_id op, uint32_t x, uint32_t y)
{
    ls_arg *a = calloc(2, sizeof *a);
    a[0] = ls_arg_node(x);
    a[1] = ls_arg_node(y);
    return ls_build_call(b, NULL, op, a, 2, NULL);
}

/* A Tensor-Scalar op: add.Tensor(x, 1) written as in torch.export (other as a scalar is not a
 * node: exported programs use add.Tensor with a lifted constant or add.Scalar). */
static PT_UNUSED uint32_t pt_scalar(ls_builder *b, ls_op_id op, uint32_t x, double v)
{
    ls_arg *a = calloc(2, sizeof *a);
    a[0] = ls_arg_node(x);
    a[1] = ls_arg_float(v);
    return ls_build_call(b, NULL, op, a, 2, NULL);
}

static PT_UNUSED uint32_t pt_unary(ls_builder *b, ls_op_id op, uint32_t x)
{
    ls_arg *a = calloc(1, sizeof *a);
    a[0] = ls_arg_node(x);
    return ls_build_call(b, NULL, op, a, 1, NULL);
}

/* A JSON profile, parsed (the test frees it). */
static PT_UNUSED ls_profile *pt_profile(const char *json)
{
    ls_profile *p;
    ls_error err;
    if (ls_profile_parse("test-profile", json, strlen(json), &p, &err) != 0) ck_abort_msg("profile: %s", err.msg);
    return p;
}

/* ---- random DAGs for the partitioners' reference tests: node v reads one or two earlier nodes
 * (node 0 the input), is supported or not, and the program is built with sup_op / cpu_op. */
#define PT_DAG_MAX 48
typedef struct pt_dag {
    int n, nus[PT_DAG_MAX], users[PT_DAG_MAX][PT_DAG_MAX], nin[PT_DAG_MAX], in[PT_DAG_MAX][2];
    bool sup[PT_DAG_MAX];
} pt_dag;

static PT_UNUSED unsigned pt_rnd(unsigned *seed)
{
    *seed = *seed * 1103515245u + 12345u;
    return (*seed >> 16) & 0x7fff;
}

/* density 1..6: the share of unsupported nodes grows with it */
static PT_UNUSED void pt_dag_random(pt_dag *g, unsigned *seed, int density)
{
    memset(g, 0, sizeof *g);
    g->n = 3 + (int)(pt_rnd(seed) % (PT_DAG_MAX - 3));
    for (int v = 0; v < g->n; v++) {
        g->sup[v] = (int)(pt_rnd(seed) % 10) >= density;
        g->nin[v] = v == 0 ? 0 : 1 + (v > 1 && pt_rnd(seed) % 2);
        for (int k = 0; k < g->nin[v]; k++) g->in[v][k] = (int)(pt_rnd(seed) % (unsigned)v);
        if (g->nin[v] == 2 && g->in[v][0] == g->in[v][1]) g->nin[v] = 1;
        for (int k = 0; k < g->nin[v]; k++) g->users[g->in[v][k]][g->nus[g->in[v][k]]++] = v;
    }
}

/* The DAG as an Edge program of binary ops; id[v] is node v's id. */
static PT_UNUSED ls_program *pt_dag_program(const pt_dag *g, ls_op_id sup_op, ls_op_id cpu_op, uint32_t *id)
{
    static const int64_t two = 2;
    ls_builder *b = ls_builder_new("m", LS_DIALECT_EDGE);
    uint32_t x = pt_input(b, "x", LS_IN_USER_INPUT, NULL, false, LS_DT_F32, 1, &two);
    uint32_t outs[PT_DAG_MAX], no = 0;
    for (int v = 0; v < g->n; v++) {
        uint32_t a0 = g->nin[v] ? id[g->in[v][0]] : x, a1 = g->nin[v] > 1 ? id[g->in[v][1]] : a0;
        id[v] = pt_bin(b, g->sup[v] ? sup_op : cpu_op, a0, a1);
    }
    for (int v = 0; v < g->n; v++)
        if (!g->nus[v]) outs[no++] = id[v];
    ls_build_output(b, outs, no, NULL, NULL);
    return ls_builder_finish(b);
}

/* Each node's tag is tag<part[v]>, or none when part[v] < 0. */
static PT_UNUSED void pt_dag_expect_tags(const ls_program *p, const uint32_t *id, const int *part, int n, int trial)
{
    for (int v = 0; v < n; v++) {
        const char *got = ls_program_node(p, id[v])->tag;
        if (part[v] < 0) ck_assert_msg(!got, "trial %d node %d: CPU expected, got %s", trial, v, got);
        else ck_assert_msg(got && strcmp(got, ls_internf("tag%d", part[v])) == 0, "trial %d node %d: tag%d expected, got %s",
                           trial, v, part[v], got ? got : "CPU");
    }
}

#endif
