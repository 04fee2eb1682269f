/* Programs for the Check suites (progfixtures.h). */
#include "progfixtures.h"

#include <check.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "bundled_blob.h"
#include "passes.h"
#include "reader.h"
#include "testutil.h"
#include "tui.h"

ls_program *pf_load(const char *path)
{
    ls_program *p = NULL;
    ls_error err;
    ck_assert_msg(ls_load(path, NULL, &p, &err) == 0, "%s", err.msg);
    return p;
}

const pf_sample_info pf_samples[PF_N_SAMPLES] = {
    {"shared_constant", 1}, {"two_delegates", 1}, {"folded_output", 1}, {"constant_mask", 1},
    {"kv_cache", 3},        {"policy", 1},        {"tiny_llama", 3},      {"quantized_mlp", 1},
};

ls_program *pf_sample(const char *name)
{
    char rel[256];
    snprintf(rel, sizeof rel, "samples/%s.pt2", name);
    return pf_load(tu_root(rel));
}

static void lower(ls_program *p, const char *opt, const char *value, ls_history *h)
{
    ls_pipeline_opts o;
    ls_pipeline_opts_init(&o);
    ls_error err;
    if (value) ck_assert_msg(ls_pipeline_opt(&o, opt, value, &err) == 1, "%s", err.msg);
    ck_assert_msg(ls_pipeline_run(p, &o, h, &err) == 0, "%s", err.msg);
    for (uint32_t i = 0; i < h->n; i++)
        ck_assert_msg(!h->steps[i].error, "step %u %s: %s", i, h->steps[i].pass, h->steps[i].error);
    ls_pipeline_opts_free(&o);
}

void pf_lower(ls_program *p, const char *pipeline, ls_history *h)
{
    lower(p, "--pipeline", pipeline, h);
}

void pf_lower_backend(ls_program *p, const char *backend, ls_history *h)
{
    lower(p, "--backend", backend, h);
}

ls_runner *pf_runner(const ls_program *p)
{
    ls_error err;
    ls_runner *r = ls_runner_new(p, &err);
    ck_assert_msg(r != NULL, "%s", err.msg);
    return r;
}

void pf_values_free(ls_value *v, uint32_t n)
{
    for (uint32_t i = 0; i < n; i++) ls_value_release(&v[i]);
    free(v);
}

uint32_t pf_input(ls_builder *b, const char *name, ls_input_kind kind, const char *target, ls_tensor *data)
{
    uint32_t id = ls_build_input(b, name, kind, target, true, NULL, data);
    ls_tensor_unref(data);
    return id;
}

uint32_t pf_user_input(ls_builder *b, const char *name, ls_dtype dt, int ndim, const int64_t *sizes)
{
    ls_tmeta m = ls_meta(dt, ndim, sizes);
    return ls_build_input(b, name, LS_IN_USER_INPUT, NULL, false, &m, NULL);
}

uint32_t pf_call(ls_builder *b, const char *name, ls_op_id op, const ls_arg *args, uint16_t nargs, ls_dtype dt,
                 int ndim, const int64_t *sizes)
{
    ls_tmeta m = ls_meta(dt, ndim, sizes);
    ls_arg *heap = ls_malloc(sizeof *heap * nargs);
    memcpy(heap, args, sizeof *heap * nargs);
    return ls_build_call(b, name, op, heap, nargs, &m);
}

ls_output_spec pf_out_spec(ls_output_kind kind, const char *name, const char *target)
{
    ls_output_spec s = {.kind = (uint8_t)kind, .name = ls_intern(name), .target = ls_intern(target)};
    return s;
}

ls_tensor *pf_f32(int ndim, const int64_t *sizes, const float *v)
{
    ls_tensor *t = ls_tensor_alloc(LS_DT_F32, ndim, sizes);
    if (v) memcpy(t->data, v, t->nbytes);
    return t;
}

ls_program *pf_chain_program(void)
{
    static const int64_t s23[] = {2, 3};
    static const float cv[] = {1, 2, 3, 4, 5, 6}, wv[] = {10, 20, 30, 40, 50, 60};
    ls_builder *b = ls_builder_new("lowered_module_0", LS_DIALECT_EDGE);
    uint32_t c = pf_input(b, "c_c", LS_IN_CONSTANT_TENSOR, "c", pf_f32(2, s23, cv));
    uint32_t w = pf_input(b, "p_w", LS_IN_PARAMETER, "w", pf_f32(2, s23, wv));
    uint32_t x = pf_user_input(b, "x", LS_DT_F32, 2, s23);
    ls_arg a1[] = {ls_arg_node(x), ls_arg_node(c), ls_arg_int(1)};
    uint32_t add = pf_call(b, "aten_add_tensor", LS_OP_add_Tensor, a1, 3, LS_DT_F32, 2, s23);
    ls_arg a2[] = {ls_arg_node(add), ls_arg_node(w), ls_arg_int(1)};
    uint32_t add1 = pf_call(b, "aten_add_tensor_1", LS_OP_add_Tensor, a2, 3, LS_DT_F32, 2, s23);
    ls_build_output(b, &add1, 1, NULL, NULL);
    return ls_builder_finish(b);
}

ls_program *pf_kv_program(bool cache_out, bool inplace)
{
    static const int64_t s43[] = {4, 3}, s13[] = {1, 3}, s31[] = {3, 1}, s41[] = {4, 1}, s1[] = {1};
    ls_builder *b = ls_builder_new("lowered_module_0", LS_DIALECT_EDGE);
    uint32_t cache = pf_input(b, "b_cache", LS_IN_BUFFER, "cache", pf_f32(2, s43, NULL));
    uint32_t q = pf_user_input(b, "q", LS_DT_F32, 2, s13);
    uint32_t k = pf_user_input(b, "k_val", LS_DT_F32, 2, s13);
    uint32_t pos = pf_user_input(b, "input_pos", LS_DT_I64, 1, s1);
    const int64_t perm[] = {1, 0};
    ls_arg a1[] = {ls_arg_node(q), ls_arg_ints(perm, 2)};
    uint32_t qt = pf_call(b, "aten_permute_copy_default", LS_OP_permute_copy, a1, 2, LS_DT_F32, 2, s31);
    ls_arg a2[] = {ls_arg_node(cache), ls_arg_opt_nodes(&pos, 1), ls_arg_node(k), ls_arg_bool(false)};
    uint32_t put =
        pf_call(b, "aten_index_put_default", inplace ? LS_OP_index_put_ : LS_OP_index_put, a2, 4, LS_DT_F32, 2, s43);
    ls_arg a3[] = {ls_arg_node(put), ls_arg_node(qt)};
    uint32_t mm = pf_call(b, "aten_mm_default", LS_OP_mm, a3, 2, LS_DT_F32, 2, s41);
    const uint32_t ids[] = {put, mm, cache};
    const ls_output_kind kinds[] = {LS_OUT_BUFFER_MUTATION, LS_OUT_USER_OUTPUT, LS_OUT_USER_OUTPUT};
    const char *const targets[] = {"cache", NULL, NULL};
    ls_build_output(b, ids, cache_out ? 3 : 2, kinds, targets);
    return ls_builder_finish(b);
}

ls_program *pf_mask_program(void)
{
    static const int64_t s4[] = {4}, s2[] = {2};
    static const double mv[] = {1, 0, 1, 0};
    ls_builder *b = ls_builder_new("lowered_module_1", LS_DIALECT_EDGE);
    uint32_t m = pf_input(b, "c_mask", LS_IN_CONSTANT_TENSOR, "mask", ls_tensor_of(LS_DT_BOOL, 1, s4, mv, 4));
    uint32_t x = pf_user_input(b, "x", LS_DT_F32, 1, s4);
    ls_arg a[] = {ls_arg_node(x), ls_arg_opt_nodes(&m, 1)};
    uint32_t idx = pf_call(b, "aten_index_tensor", LS_OP_index_Tensor, a, 2, LS_DT_F32, 1, s2);
    ls_build_output(b, &idx, 1, NULL, NULL);
    return ls_builder_finish(b);
}

ls_blob *pf_encode(const ls_program *p)
{
    ls_blob *b = NULL;
    ls_error err = {0};
    int rc = ls_bb_encode(p, &b, &err);
    ck_assert_msg(rc == 0, "encode failed: %s", err.msg);
    return b;
}

ls_blob *pf_blob_copy(const ls_blob *b, size_t size)
{
    ls_blob *c = ls_blob_new(size);
    memcpy(c->data, b->data, size < b->size ? size : b->size);
    return c;
}


void pf_diverging_history(ls_history *h, const ls_node **cos)
{
    ls_program *p = pf_sample("two_delegates");
    pf_lower(p, "to_edge,constant_prop,partition,fold_masks,duplicate_constants,to_backend", h);
    ls_program_unref(p);
    ls_program *q = ls_program_copy(h->steps[h->n - 1].program);
    int32_t pos = ls_program_find(q, ls_intern("aten_cos_default"));
    ck_assert_int_ge(pos, 0);
    ls_node *n = ls_program_edit(q, (uint32_t)pos);
    n->op = ls_op_get(LS_OP_sin);
    n->target = ls_op_target(n->op, (ls_dialect)n->dialect);
    ls_program_touch(q);
    h->steps = ls_realloc(h->steps, sizeof *h->steps * (h->n + 1));
    ls_step *st = &h->steps[h->n];
    memset(st, 0, sizeof *st);
    st->pass = ls_intern("wrong_on_purpose");
    st->program = q;
    ls_diff_programs(h->steps[h->n - 1].program, q, &st->changes, &st->n_changes);
    ls_report_add(&st->report, NULL, n->name, "`%s` computes sin instead of cos (a test of the run overlay)", n->name);
    h->n++;
    if (cos) *cos = n;
}

void pf_screens(ls_history *h, const char *name, int cols, int rows, const char *dir)
{
    if (!dir) dir = tu_tmpdir();
    setenv("LOWERSCOPE_DUMP_DIR", dir, 1);
    char keys[512], cwd[4096];
    snprintf(keys, sizeof keys, "tests/screens/%s.keys", name);
    ls_tui_opts to = {.script = tu_root(keys), .rows = rows, .cols = cols, .headless = true};
    ls_error err = {0};
    ck_assert_ptr_nonnull(getcwd(cwd, sizeof cwd));
    ck_assert_int_eq(chdir(dir), 0);
    int rc = ls_tui_run(h, &to, &err);
    ck_assert_int_eq(chdir(cwd), 0);
    ck_assert_msg(rc == 0, "ls_tui_run: %d %s", rc, err.msg);
    tu_compare_screens(dir, name);
}

void pf_screens_file(const char *path, const char *shown, const char *backend, const char *name, int cols, int rows,
                     const char *dir)
{
    ls_program *p = pf_load(path);
    ls_history h = {0};
    ls_pipeline_opts o;
    ls_pipeline_opts_init(&o);
    ls_error err = {0};
    if (backend) /* a profile file from the repository's root, or a shipped profile's name */
        ck_assert_msg(ls_pipeline_opt(&o, "--backend", strchr(backend, '/') ? tu_root(backend) : backend, &err) == 1, "%s",
                      err.msg);
    ck_assert_msg(ls_pipeline_run(p, &o, &h, &err) == 0, "%s", err.msg);
    ls_pipeline_opts_free(&o);
    h.path = ls_intern(shown);
    pf_screens(&h, name, cols, rows, dir);
    ls_history_free(&h);
    ls_program_unref(p);
}
