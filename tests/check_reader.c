/* Tests of the readers: the real .pt2 archive, its unpacked folder and the old v1 JSON from
 * ../shared (skipped when absent), the fixtures in tests/programs, the broken files in
 * tests/corpus (the messages of the loaders; check_corpus.c runs the binary on each) and the
 * samples. */
#include <check.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <sys/wait.h>
#include <unistd.h>
#include <zip.h>

#include "gen_program.h"
#include "ops.h"
#include "progress.h"
#include "program.h"
#include "reader.h"
#include "testutil.h"
#include "verify.h"
#include "history.h"
#include "../src/formats/pt2/pt2_internal.h" /* the whole-tree load, to compare the streamed one with */

static ls_program *load_ok(const char *path, const ls_load_opts *opts)
{
    ls_program *p = NULL;
    ls_error err = {0};
    int rc = ls_load(path, opts, &p, &err);
    ck_assert_msg(rc == 0, "loading %s: %s", path, err.msg);
    ck_assert_ptr_nonnull(p);
    return p;
}

static const ls_node *node_named(const ls_program *p, const char *name)
{
    int32_t pos = ls_program_find(p, name);
    ck_assert_msg(pos >= 0, "no node '%s'", name);
    return p->nodes[pos];
}

static uint32_t id_of(const ls_program *p, const char *name)
{
    return node_named(p, name)->id;
}

static void assert_meta(const ls_tmeta *m, ls_dtype dt, int ndim, int64_t d0, int64_t d1)
{
    ck_assert_int_eq(m->dtype, dt);
    ck_assert_int_eq(m->ndim, ndim);
    if (ndim > 0) ck_assert_int_eq(m->sizes[0], d0);
    if (ndim > 1) ck_assert_int_eq(m->sizes[1], d1);
}

/* linear_3's raw weight file equals the loaded tensor's bytes */
static void assert_bytes_match(const ls_tensor *t, const char *raw_rel)
{
    const char *raw = tu_shared(raw_rel);
    ck_assert_ptr_nonnull(raw);
    uint8_t *data;
    size_t size;
    ls_error err;
    ck_assert_int_eq(ls_read_file(raw, 1 << 20, &data, &size, &err), 0);
    ck_assert_uint_eq(t->nbytes, size);
    ck_assert(memcmp(t->data, data, size) == 0);
    free(data);
}

START_TEST(shared_archive_loads)
{
    const char *path = tu_shared("data/pt2/et_pt2_archive_test_linear.pt2");
    if (!path) return; /* ../shared absent: nothing to test against */
    ls_program *p = load_ok(path, NULL);
    ck_assert_str_eq(p->name, "model");
    ck_assert_int_eq(p->dialect, LS_DIALECT_ATEN);
    ck_assert_str_eq(p->verifier, "TRAINING");
    ck_assert_str_eq(p->torch_version, "2.9.0a0+fb");
    ck_assert_int_eq(p->schema_major, 8);
    ck_assert_int_eq(p->schema_minor, 12);
    ck_assert(p->has_weights);
    ck_assert_uint_eq(p->n_nodes, 5);
    const char *order[] = {"p_linear_weight", "p_linear_bias", "x", "linear", "output"};
    for (int i = 0; i < 5; i++) ck_assert_str_eq(p->nodes[i]->name, order[i]);
    for (int i = 0; i < 3; i++) ck_assert_int_eq(p->nodes[i]->kind, LS_NODE_PLACEHOLDER);
    const ls_node *lin = p->nodes[3];
    ck_assert_int_eq(lin->kind, LS_NODE_CALL);
    ck_assert_ptr_eq(lin->op, ls_op_get(LS_OP_linear));
    ck_assert_int_eq(lin->dialect, LS_DIALECT_ATEN);
    ck_assert_str_eq(lin->target, "torch.ops.aten.linear.default");
    ck_assert_uint_eq(lin->nargs, 3);
    ck_assert_uint_eq(ls_node_arg(lin, "input")->v.node, id_of(p, "x"));
    ck_assert_uint_eq(ls_node_arg(lin, "weight")->v.node, id_of(p, "p_linear_weight"));
    ck_assert_uint_eq(ls_node_arg(lin, "bias")->v.node, id_of(p, "p_linear_bias"));
    ck_assert_int_eq(lin->val_kind, LS_VAL_TENSOR);
    assert_meta(&lin->vals[0], LS_DT_F32, 1, 3, 0);
    ck_assert_ptr_nonnull(strstr(ls_node_texts(lin)->module_stack, "L__self__linear,linear,torch.nn.modules.linear.Linear"));
    ck_assert_ptr_nonnull(strstr(ls_node_texts(lin)->stack_trace, "F.linear(input, self.weight, self.bias)"));
    ck_assert_str_eq(ls_node_texts(lin)->torch_fn, "linear_1;builtin_function_or_method.linear");
    const ls_node *w = p->nodes[0];
    assert_meta(&w->vals[0], LS_DT_F32, 2, 3, 3);
    ck_assert(w->vals[0].requires_grad);
    const ls_node *out = p->nodes[4];
    ck_assert_int_eq(out->kind, LS_NODE_OUTPUT);
    ck_assert_uint_eq(out->nargs, 1);
    ck_assert_uint_eq(out->args[0].v.node, lin->id);
    /* signature */
    ck_assert_uint_eq(p->n_inputs, 3);
    ck_assert_int_eq(p->inputs[0].kind, LS_IN_PARAMETER);
    ck_assert_str_eq(p->inputs[0].name, "p_linear_weight");
    ck_assert_str_eq(p->inputs[0].target, "linear.weight");
    ck_assert_int_eq(p->inputs[1].kind, LS_IN_PARAMETER);
    ck_assert_str_eq(p->inputs[1].target, "linear.bias");
    ck_assert_int_eq(p->inputs[2].kind, LS_IN_USER_INPUT);
    ck_assert_str_eq(p->inputs[2].name, "x");
    ck_assert_uint_eq(p->n_outputs, 1);
    ck_assert_int_eq(p->outputs[0].kind, LS_OUT_USER_OUTPUT);
    ck_assert_str_eq(p->outputs[0].name, "linear");
    /* weights: the raw bytes, as float32 */
    ck_assert_uint_eq(p->n_state, 2);
    ls_named_tensor *wt = ls_program_state(p, "linear.weight"), *bt = ls_program_state(p, "linear.bias");
    ck_assert_ptr_nonnull(wt);
    ck_assert_ptr_nonnull(bt);
    ck_assert_int_eq(wt->t->dtype, LS_DT_F32);
    ck_assert_int_eq(wt->t->ndim, 2);
    ck_assert_int_eq(wt->t->numel, 9);
    ck_assert(wt->meta->requires_grad);
    assert_bytes_match(wt->t, "data/pt2/linear_3/data/weights/weight_0");
    assert_bytes_match(bt->t, "data/pt2/linear_3/data/weights/weight_1");
    ck_assert_ptr_nonnull(strstr(p->extra_json, "\"module_call_graph\""));
    ck_assert_ptr_nonnull(strstr(p->extra_json, "\"opset_version\":{\"aten\":10}"));
    ls_program_unref(p);
}
END_TEST

static void assert_same_program(const ls_program *a, const ls_program *b)
{
    ck_assert_uint_eq(a->n_nodes, b->n_nodes);
    for (uint32_t i = 0; i < a->n_nodes; i++) {
        const ls_node *x = a->nodes[i], *y = b->nodes[i];
        ck_assert_ptr_eq(x->name, y->name);
        ck_assert_ptr_eq(x->target, y->target);
        ck_assert_int_eq(x->kind, y->kind);
        ck_assert_uint_eq(x->nargs, y->nargs);
        for (uint16_t j = 0; j < x->nargs; j++) ck_assert(ls_arg_equal(&x->args[j], &y->args[j]));
        ck_assert_uint_eq(x->nvals, y->nvals);
        for (uint16_t j = 0; j < x->nvals; j++) ck_assert(ls_tmeta_equal(&x->vals[j], &y->vals[j]));
    }
    ck_assert_uint_eq(a->n_inputs, b->n_inputs);
    for (uint32_t i = 0; i < a->n_inputs; i++) {
        ck_assert_ptr_eq(a->inputs[i].name, b->inputs[i].name);
        ck_assert_ptr_eq(a->inputs[i].target, b->inputs[i].target);
    }
    ck_assert_uint_eq(a->n_outputs, b->n_outputs);
    ck_assert_uint_eq(a->n_state, b->n_state);
    for (uint32_t i = 0; i < a->n_state; i++) {
        ck_assert_ptr_eq(a->state_dict[i].name, b->state_dict[i].name);
        ck_assert(ls_tensor_equal(a->state_dict[i].t, b->state_dict[i].t));
    }
    ck_assert_str_eq(a->extra_json, b->extra_json);
}

/* An archive's own members are checked in the folder it unpacks to as in the zip: byteorder
 * "big" is a need (exit 3) unless no weight is read (--metadata-only), archive_format another
 * format (the folder was let through, its weights read in the wrong order). */
static void unpack(const char *zip_path, const char *dir)
{
    zip_t *z = zip_open(zip_path, ZIP_RDONLY, NULL);
    ck_assert_ptr_nonnull(z);
    for (zip_int64_t i = 0; i < zip_get_num_entries(z, 0); i++) {
        char path[8200];
        snprintf(path, sizeof path, "%s/%s", dir, zip_get_name(z, (zip_uint64_t)i, 0));
        for (char *c = path + strlen(dir) + 1; *c; c++)
            if (*c == '/') {
                *c = 0;
                mkdir(path, 0700);
                *c = '/';
            }
        zip_stat_t st;
        ck_assert_int_eq(zip_stat_index(z, (zip_uint64_t)i, 0, &st), 0);
        char *data = malloc(st.size + 1);
        zip_file_t *f = zip_fopen_index(z, (zip_uint64_t)i, 0);
        ck_assert_int_eq(zip_fread(f, data, st.size), (zip_int64_t)st.size);
        zip_fclose(f);
        FILE *out = fopen(path, "wb");
        ck_assert_ptr_nonnull(out);
        ck_assert_uint_eq(fwrite(data, 1, st.size, out), st.size);
        fclose(out);
        free(data);
    }
    zip_close(z);
}

START_TEST(an_unpacked_archive_is_checked_as_the_zip)
{
    char dir[4096];
    snprintf(dir, sizeof dir, "%s/big", tu_tmpdir());
    ck_assert_int_eq(mkdir(dir, 0700), 0);
    unpack(tu_root("tests/corpus/byteorder_big.pt2"), dir);
    ls_program *p = NULL;
    ls_error err = {0};
    ck_assert_int_ne(ls_load(dir, NULL, &p, &err), 0);
    ck_assert_int_eq(err.code, LS_ERR_NEEDS);
    ck_assert_msg(strstr(err.msg, "byteorder is \"big\": the weights are big-endian"), "%s", err.msg);
    ls_load_opts meta = {.metadata_only = true};
    ck_assert_msg(ls_load(dir, &meta, &p, &err) == 0, "%s", err.msg); /* no weight read: nothing read wrong */
    ls_program_unref(p);
    char *out;
    ck_assert_int_eq(tu_runf(&out, "verify --metadata-only %s", tu_root("tests/corpus/byteorder_big.pt2")), 0);
    free(out);
    char member[4200];
    snprintf(member, sizeof member, "%s/prog/archive_format", dir);
    ls_error werr;
    ck_assert_int_eq(ls_write_file_atomic(member, "zip", 3, &werr), 0);
    ck_assert_int_ne(ls_load(dir, &meta, &p, &err), 0);
    ck_assert_msg(strstr(err.msg, "archive_format is \"zip\", not \"pt2\""), "%s", err.msg);
    /* torch refuses an archive without archive_format and reads one without archive_version as
     * version 0 (PT2ArchiveReader.__init__, .archive_version): the folder the same */
    ck_assert_int_eq(unlink(member), 0);
    ck_assert_int_ne(ls_load(dir, &meta, &p, &err), 0);
    ck_assert_msg(strstr(err.msg, "prog: archive_format is missing: torch.export.load refuses"), "%s", err.msg);
    ck_assert_int_eq(ls_write_file_atomic(member, "pt2", 3, &werr), 0);
    snprintf(member, sizeof member, "%s/prog/archive_version", dir);
    ck_assert_int_eq(unlink(member), 0);
    ck_assert_msg(ls_load(dir, &meta, &p, &err) == 0, "%s", err.msg);
    ls_program_unref(p);
}
END_TEST

START_TEST(folder_loads_the_same_program)
{
    const char *zip = tu_shared("data/pt2/et_pt2_archive_test_linear.pt2");
    if (!zip) return;
    ls_program *a = load_ok(zip, NULL);
    ls_program *b = load_ok(tu_shared("data/pt2/linear_3"), NULL);
    assert_same_program(a, b);
    /* models/model.json inside the folder finds its weights two folders up */
    ls_program *c = load_ok(tu_shared("data/pt2/linear_3/models/model.json"), NULL);
    ck_assert(c->has_weights);
    assert_same_program(a, c);
    ls_program_unref(a);
    ls_program_unref(b);
    ls_program_unref(c);
}
END_TEST

START_TEST(v1_json_with_null_filled_unions)
{
    const char *path = tu_shared("data/pt2/exported_program_schema_v1_mul.json");
    if (!path) return;
    ls_program *p = load_ok(path, NULL);
    ck_assert_int_eq(p->schema_major, 1);
    ck_assert_int_eq(p->dialect, LS_DIALECT_ATEN);
    ck_assert_uint_eq(p->n_nodes, 4);
    ck_assert_str_eq(p->nodes[0]->name, "arg0_1");
    ck_assert_str_eq(p->nodes[1]->name, "arg1_1");
    const ls_node *mul = node_named(p, "mul");
    ck_assert_ptr_eq(mul->op, ls_op_get(LS_OP_mul_Tensor));
    ck_assert_uint_eq(mul->nargs, 2);
    ck_assert_int_eq(mul->args[0].kind, LS_ARG_NODE);
    ck_assert_uint_eq(mul->args[0].v.node, p->nodes[0]->id);
    ck_assert_uint_eq(mul->args[1].v.node, p->nodes[1]->id);
    assert_meta(&mul->vals[0], LS_DT_F32, 2, 3, 2);
    assert_meta(&p->nodes[0]->vals[0], LS_DT_F32, 2, 3, 2);
    ck_assert_str_eq(ls_node_texts(mul)->source_fn, "mul,_operator.mul");
    ck_assert_uint_eq(p->n_inputs, 2);
    ck_assert_int_eq(p->inputs[1].kind, LS_IN_USER_INPUT);
    ck_assert_str_eq(p->inputs[1].name, "arg1_1");
    ck_assert_uint_eq(p->n_outputs, 1);
    ck_assert_str_eq(p->outputs[0].name, "mul");
    ck_assert(p->has_weights); /* it needs none */
    ck_assert_ptr_nonnull(strstr(p->extra_json, "\"equality_constraints\":[]"));
    ls_verify_result vr;
    ls_verify(p, &vr);
    ck_assert_uint_eq(vr.n, 0);
    ls_verify_result_free(&vr);
    ls_program_unref(p);
}
END_TEST

START_TEST(tags_custom_metadata_and_unknown_ops)
{
    ls_program *p = load_ok(tu_root("tests/programs/tagged.json"), NULL);
    const ls_node *add = node_named(p, "add");
    ck_assert_str_eq(add->tag, "tag0");
    ck_assert_ptr_null(ls_node_texts(add)->custom);
    ck_assert_int_eq(add->debug_handle, 7);
    ck_assert_str_eq(ls_node_texts(add)->module_stack, "L__self__,,m.M");
    /* normalized: schema order, alpha given by keyword, nothing filled */
    ck_assert_uint_eq(add->nargs, 3);
    ck_assert_str_eq(add->args[2].name, "alpha");
    ck_assert_int_eq(add->args[2].kind, LS_ARG_INT);
    ck_assert_int_eq(add->args[2].v.i, 2);
    ck_assert(add->args[2].flags & LS_ARGF_KEYWORD);
    ck_assert(!(add->args[2].flags & LS_ARGF_DEFAULT));
    const ls_node *mul = node_named(p, "mul");
    ck_assert_str_eq(mul->tag, "tag1");
    ck_assert_str_eq(ls_node_texts(mul)->custom, "{\"note\":\"kept\"}");
    /* an unknown target loads with the file's arguments */
    const ls_node *fro = node_named(p, "frobnicate");
    ck_assert_ptr_null(fro->op);
    ck_assert_str_eq(fro->target, "torch.ops.mylib.frobnicate.default");
    ck_assert_uint_eq(fro->nargs, 2);
    ck_assert_str_eq(fro->args[0].name, "input");
    ck_assert_uint_eq(fro->args[0].v.node, mul->id);
    ck_assert_str_eq(fro->args[1].name, "scale");
    ck_assert_int_eq(fro->args[1].kind, LS_ARG_FLOAT);
    ck_assert(fro->args[1].flags & LS_ARGF_KEYWORD);
    ck_assert_uint_eq(p->n_tags, 2);
    ck_assert_str_eq(p->tags[0].tag, "tag0");
    ck_assert_str_eq(p->tags[1].tag, "tag1");
    ck_assert_ptr_null(p->tags[0].backend_id);
    ls_program_unref(p);
}
END_TEST

START_TEST(multi_output_nodes_get_getitems)
{
    ls_program *p = load_ok(tu_root("tests/programs/multi_output.json"), NULL);
    /* a Tensor[] return: the node is named FX-style, each value by a getitem */
    const ls_node *split = node_named(p, "split_with_sizes");
    ck_assert_int_eq(split->val_kind, LS_VAL_TENSORS);
    ck_assert_uint_eq(split->nvals, 2);
    const char *items[] = {"getitem", "getitem_1"};
    for (int i = 0; i < 2; i++) {
        const ls_node *g = node_named(p, items[i]);
        ck_assert_str_eq(g->target, "_operator.getitem");
        ck_assert_ptr_eq(g->op, ls_op_get(LS_OP_getitem));
        ck_assert_uint_eq(g->args[0].v.node, split->id);
        ck_assert_int_eq(g->args[1].v.i, i);
        ck_assert_int_eq(ls_program_pos(p, g->id), ls_program_pos(p, split->id) + 1 + i);
    }
    assert_meta(&node_named(p, "getitem")->vals[0], LS_DT_F32, 1, 2, 0);
    assert_meta(&node_named(p, "getitem_1")->vals[0], LS_DT_F32, 1, 4, 0);
    /* a tuple return with a node name from the file */
    const ls_node *ln = node_named(p, "native_layer_norm");
    ck_assert_uint_eq(ln->nvals, 3);
    ck_assert_uint_eq(node_named(p, "getitem_4")->args[0].v.node, ln->id);
    ck_assert_int_eq(node_named(p, "getitem_4")->args[1].v.i, 2);
    ck_assert_uint_eq(ls_node_arg(ln, "input")->v.node, id_of(p, "getitem_1"));
    /* INT64_MAX survives the double, symbolic sizes keep their expression */
    const ls_node *sl = node_named(p, "slice_1");
    ck_assert_int_eq(ls_node_arg(sl, "end")->v.i, INT64_MAX);
    ck_assert_int_eq(ls_node_arg(sl, "step")->v.i, 1);
    ck_assert(ls_node_arg(sl, "step")->flags & LS_ARGF_DEFAULT);
    const ls_tmeta *y = &node_named(p, "y")->vals[0];
    ck_assert_str_eq(y->sym[0], "s0");
    ck_assert_int_eq(y->sizes[0], 6);
    ck_assert_ptr_null(y->sym[1]);
    ck_assert_str_eq(sl->vals[0].sym[0], "s0 - 1");
    ls_verify_result vr;
    ls_verify(p, &vr);
    ck_assert_uint_eq(vr.n_errors, 0);
    ls_verify_result_free(&vr);
    ls_program_unref(p);
}
END_TEST

START_TEST(metadata_only_loads)
{
    ls_load_opts opts = {.metadata_only = true};
    ls_program *p = load_ok(tu_root("tests/programs/base.pt2"), &opts);
    ck_assert(!p->has_weights);
    ck_assert_uint_eq(p->n_state, 1);
    ck_assert_str_eq(p->state_dict[0].name, "w");
    ck_assert_ptr_null(p->state_dict[0].t);
    assert_meta(p->state_dict[0].meta, LS_DT_F32, 1, 4, 0);
    ls_program_unref(p);
    /* a bare JSON has no weight data at all */
    p = load_ok(tu_root("tests/programs/base.json"), NULL);
    ck_assert(!p->has_weights);
    ck_assert_ptr_null(ls_program_state(p, "w")->t);
    ls_verify_result vr;
    ls_verify(p, &vr);
    ck_assert_uint_eq(vr.n, 0);
    ls_verify_result_free(&vr);
    ls_program_unref(p);
    /* the same archive with its data */
    p = load_ok(tu_root("tests/programs/base.pt2"), NULL);
    ck_assert(p->has_weights);
    ck_assert_double_eq(ls_tensor_get_f64(ls_program_state(p, "w")->t, 3), 4.0);
    ls_program_unref(p);
}
END_TEST

START_TEST(strided_weights_become_contiguous)
{
    ls_program *p = load_ok(tu_root("tests/programs/strided.pt2"), NULL);
    const ls_tensor *w = ls_program_state(p, "w")->t, *b = ls_program_state(p, "b")->t;
    /* one file [0 1 2 3 4 5 10 11 12]: w is its first six elements with strides [1, 2] */
    const double want_w[] = {0, 2, 4, 1, 3, 5}, want_b[] = {10, 11, 12};
    ck_assert_int_eq(w->ndim, 2);
    for (int i = 0; i < 6; i++) ck_assert_double_eq(ls_tensor_get_f64(w, i), want_w[i]);
    for (int i = 0; i < 3; i++) ck_assert_double_eq(ls_tensor_get_f64(b, i), want_b[i]);
    ls_program_unref(p);
}
END_TEST

/* Deflated members (an archive repacked with zip -r) load as the stored ones, their CRCs checked
 * after inflating; info reads the weights' sizes, not their bytes. */
START_TEST(deflated_archive_and_sizes_only)
{
    ls_program *a = load_ok(tu_root("tests/programs/strided.pt2"), NULL);
    ls_program *b = load_ok(tu_root("tests/programs/deflated.pt2"), NULL);
    assert_same_program(a, b);
    ls_load_opts o = {.weight_sizes_only = true};
    ls_program *c = load_ok(tu_root("tests/programs/deflated.pt2"), &o);
    ck_assert(!c->has_weights && c->weights_unread);
    ck_assert_uint_eq(c->n_state, 2);
    for (uint32_t i = 0; i < c->n_state; i++) {
        const ls_named_tensor *e = ls_program_state(c, c->state_dict[i].name), *full = ls_program_state(a, e->name);
        ck_assert_ptr_null(e->t);
        ck_assert(ls_tmeta_equal(e->meta, full->meta));
    }
    ls_verify_result vr;
    ls_verify(c, &vr);
    ck_assert_msg(vr.n == 0, "%s", vr.n ? vr.v[0].msg : "");
    ls_verify_result_free(&vr);
    ls_program_unref(a);
    ls_program_unref(b);
    ls_program_unref(c);
}
END_TEST

START_TEST(lowered_program_loads)
{
    ls_program *p = load_ok(tu_root("tests/programs/lowered.json"), NULL);
    ck_assert_int_eq(p->dialect, LS_DIALECT_EDGE);
    const ls_node *ga = node_named(p, "lowered_module_0");
    ck_assert_int_eq(ga->kind, LS_NODE_GET_ATTR);
    ck_assert_str_eq(ga->target, "lowered_module_0");
    const ls_node *call = node_named(p, "executorch_call_delegate");
    ck_assert_ptr_eq(call->op, ls_op_get(LS_OP_call_delegate));
    ck_assert_uint_eq(call->nargs, 2);
    ck_assert_uint_eq(call->args[0].v.node, ga->id);
    ck_assert_uint_eq(call->args[1].v.node, id_of(p, "x"));
    ck_assert_uint_eq(node_named(p, "getitem")->args[0].v.node, call->id);
    ck_assert_int_eq(ls_program_pos(p, ga->id) + 1, ls_program_pos(p, call->id));
    /* the module ExecuTorch serialized inline is read; the other one is not in the file */
    ck_assert_uint_eq(p->n_subs, 1);
    const ls_submodule *sub = ls_program_sub(p, "lowered_module_0");
    ck_assert_ptr_nonnull(sub);
    ck_assert_str_eq(sub->backend_id, "BundledBackend");
    ck_assert_uint_eq(sub->program->n_nodes, 3);
    ck_assert_int_eq(sub->program->dialect, LS_DIALECT_EDGE);
    ck_assert_uint_eq(sub->processed->size, 3);
    ck_assert_uint_eq(sub->nspecs, 1);
    ck_assert_str_eq(sub->specs[0].key, "level");
    ck_assert_int_eq(sub->specs[0].value->data[0], '3');
    ck_assert_int_eq(node_named(p, "lowered_module_1")->kind, LS_NODE_GET_ATTR);
    ck_assert_ptr_null(ls_program_sub(p, "lowered_module_1"));
    ls_program_unref(p);
}
END_TEST

START_TEST(json_in_memory)
{
    static const char text[] = "{\"graph_module\": {\"graph\": {\"inputs\": [], \"outputs\": [{\"as_int\": 3}], "
                               "\"nodes\": [], \"tensor_values\": {}}, \"signature\": {\"input_specs\": [], "
                               "\"output_specs\": [{\"user_output\": {\"arg\": {\"as_int\": 3}}}]}}, "
                               "\"schema_version\": {\"major\": 8, \"minor\": 3}, \"verifiers\": [\"EDGE\"]}";
    ls_program *p;
    ls_error err;
    ck_assert_int_eq(ls_load_json("mem", text, sizeof text - 1, NULL, &p, &err), 0);
    ck_assert_int_eq(p->dialect, LS_DIALECT_EDGE);
    ck_assert_uint_eq(p->n_nodes, 1);
    ck_assert_int_eq(p->nodes[0]->args[0].kind, LS_ARG_INT);
    ck_assert_ptr_null(p->outputs[0].name);
    ls_program_unref(p);
    ck_assert_int_eq(ls_load_json("mem", text, 20, NULL, &p, &err), -1);
    ck_assert_ptr_null(p);
    ck_assert_msg(strncmp(err.msg, "mem: line 1", 11) == 0, "%s", err.msg);
}
END_TEST

static void expect_message(const char *file, const char *text)
{
    char rel[300];
    snprintf(rel, sizeof rel, "tests/corpus/%s", file);
    ls_program *p;
    ls_error err;
    ck_assert_int_eq(ls_load(tu_root(rel), NULL, &p, &err), -1);
    ck_assert_msg(strstr(err.msg, text) != NULL, "%s: got '%s', want '%s'", file, err.msg, text);
}

START_TEST(corpus_messages_name_the_place)
{
    expect_message("undefined_value.json", "undefined_value.json: node 'add_1' argument 'other': 'x2' is not defined before it");
    expect_message("null_arg.json", "null_arg.json: node 'add_1' argument 'other': no arg");
    expect_message("duplicate_names.json", ": node 'add': the name is already used by an earlier node");
    expect_message("unknown_schema.json", ": schema_version 99.0:");
    expect_message("negative_size.json", ": value 'x': negative size -3 in dimension 0");
    expect_message("huge_shape.json", ": value 'x': float32[1000000, 1000000] claims 1e+12 elements");
    expect_message("deep_nesting.json", "JSON nested deeper than 1000 levels");
    expect_message("invalid.json", "invalid.json: line 1, column 42: invalid JSON");
    expect_message("missing_weight.pt2", "models/model.json: input spec 0 ('p_w'): parameter 'w' has no data");
    expect_message("short_weight.pt2", "data/weights/weight_0 ('w'): the file has 8 bytes, but float32[4]");
    expect_message("no_model.pt2", "no models/<name>.json in the archive");
    expect_message("truncated.pt2", "not a readable zip archive");
}
END_TEST

/* A FIFO is refused at once, by the reader (its open would wait for a writer, forever when
 * there is none: `:compare FIFO` could not be quit) and by the command line (exit 2). */
START_TEST(a_fifo_is_not_read)
{
    char path[4096];
    snprintf(path, sizeof path, "%s/model.pt2", tu_tmpdir());
    ck_assert_int_eq(mkfifo(path, 0600), 0);
    ls_program *p = NULL;
    ls_error err = {0};
    ck_assert_int_ne(ls_load(path, NULL, &p, &err), 0);
    ck_assert_msg(strstr(err.msg, path) && strstr(err.msg, "a FIFO (named pipe), not a file"), "%s", err.msg);
    char *out;
    ck_assert_int_eq(tu_runf(&out, "info %s", path), 2);
    ck_assert_msg(tu_contains(out, "not a file"), "%s", out);
    free(out);
    unlink(path);
    /* a FIFO named .pte: verify and run sniffed it for the runtime's checks first, and their
     * open waited for a writer */
    snprintf(path, sizeof path, "%s/model.pte", tu_tmpdir());
    ck_assert_int_eq(mkfifo(path, 0600), 0);
    static const char *const commands[] = {"verify", "run", "info", "passes", "partitions", "graph"};
    for (size_t i = 0; i < sizeof commands / sizeof commands[0]; i++) {
        ck_assert_int_eq(tu_runf(&out, "%s %s", commands[i], path), 2);
        ck_assert_msg(tu_contains(out, "a FIFO (named pipe), not a file"), "%s: %s", commands[i], out);
        free(out);
    }
    unlink(path);
    /* and inside a folder: its models/model.json (the folder itself was let through, and hung) */
    char dir[4096], member[4200];
    snprintf(dir, sizeof dir, "%s/folder", tu_tmpdir());
    snprintf(member, sizeof member, "%s/models", dir);
    ck_assert_int_eq(mkdir(dir, 0700), 0);
    ck_assert_int_eq(mkdir(member, 0700), 0);
    snprintf(member, sizeof member, "%s/archive_format", dir);
    FILE *f = fopen(member, "w");
    ck_assert_ptr_nonnull(f);
    fputs("pt2", f);
    fclose(f);
    snprintf(member, sizeof member, "%s/models/model.json", dir);
    ck_assert_int_eq(mkfifo(member, 0600), 0);
    ck_assert_int_ne(ls_load(dir, NULL, &p, &err), 0);
    ck_assert_msg(strstr(err.msg, "models/model.json: a FIFO (named pipe), not a file"), "%s", err.msg);
    unlink(member);
}
END_TEST

/* A folder the user cannot read is said as such (it said "a folder without archive_format or
 * models/: not an unpacked .pt2"). Root reads any folder: the check runs as nobody then. */
START_TEST(an_unreadable_folder_says_so)
{
    char dir[4096];
    const char *tmp = tu_tmpdir();
    snprintf(dir, sizeof dir, "%s/locked", tmp);
    ck_assert_int_eq(mkdir(dir, 0700), 0);
    ck_assert_int_eq(chmod(dir, 0), 0);
    ck_assert_int_eq(chmod(tmp, 0755), 0); /* nobody must reach it */
    pid_t pid = fork();
    if (pid == 0) {
        if (geteuid() == 0 && (setgid(65534) != 0 || setuid(65534) != 0)) _exit(3);
        ls_program *p = NULL;
        ls_error err;
        if (ls_load(dir, NULL, &p, &err) == 0) _exit(4);
        _exit(strstr(err.msg, ": cannot open the folder: Permission denied") ? 0 : 5);
    }
    int status;
    ck_assert_int_eq(waitpid(pid, &status, 0), pid);
    chmod(dir, 0700);
    ck_assert_msg(WIFEXITED(status) && WEXITSTATUS(status) == 0, "status %d", status);
}
END_TEST

/* A load given up before it starts (ls_cancel_on, the compare screen's job when the user leaves
 * it): an archive's mapped model stops at its CRC-32 and is not read again through libzip; the
 * message says so, nothing is left mapped or allocated (ASan), and the same file loads after. */
START_TEST(a_cancelled_archive_load_fails_cleanly)
{
    bool stop = true;
    ls_cancel_on(&stop);
    ls_program *p = NULL;
    ls_error err = {0};
    const char *path = tu_root("samples/shared_constant.pt2");
    ck_assert_int_ne(ls_load(path, NULL, &p, &err), 0);
    ls_cancel_on(NULL);
    ck_assert_ptr_null(p);
    ck_assert_msg(strstr(err.msg, "the load was cancelled"), "%s", err.msg);
    ck_assert_int_eq(ls_load(path, NULL, &p, &err), 0);
    ck_assert_uint_gt(p->n_nodes, 0);
    ls_program_unref(p);
}
END_TEST

START_TEST(samples_load_and_info_works)
{
    static const char *const samples[] = {"shared_constant", "two_delegates", "folded_output", "constant_mask",
                                          "kv_cache", "policy", "tiny_llama"};
    for (size_t i = 0; i < sizeof samples / sizeof samples[0]; i++) {
        char rel[128];
        snprintf(rel, sizeof rel, "samples/%s.pt2", samples[i]);
        FILE *f = fopen(tu_root(rel), "rb");
        if (!f) continue; /* not generated yet */
        fclose(f);
        ls_program *p = load_ok(tu_root(rel), NULL);
        ck_assert(p->has_weights);
        ls_verify_result vr;
        ls_verify(p, &vr);
        ck_assert_msg(vr.n_errors == 0, "%s: %s", rel, vr.n ? vr.v[0].msg : "");
        ls_verify_result_free(&vr);
        ls_program_unref(p);
        char *out = NULL;
        const char *argv[] = {"info", tu_root(rel), NULL};
        ck_assert_msg(tu_run(&out, argv) == 0, "%s: %s", rel, out);
        ck_assert(tu_contains(out, "verifier  ok"));
        free(out);
    }
}
END_TEST

/* The generator: the program asked for, loadable, valid; shared constants really are shared
 * by the number of partitions asked for. */
START_TEST(generated_programs)
{
    ls_gen_opts o = ls_gen_defaults(3000);
    o.partitions = 100;
    o.constants = 40;
    o.shared_fraction = 0.25;
    o.share_partitions = 30;
    o.split_every = 50;
    o.with_data = true;
    ls_error err;
    ls_program *p = ls_gen_program(&o, &err);
    ck_assert_msg(p != NULL, "%s", err.msg);
    ck_assert(p->has_weights);
    ck_assert_uint_eq(p->n_tags, 100);
    ck_assert_uint_eq(p->n_constants, 40);
    ck_assert_uint_eq(p->n_state, 2 * o.params);
    uint32_t calls = 0;
    for (uint32_t i = 0; i < p->n_nodes; i++) calls += p->nodes[i]->kind == LS_NODE_CALL && p->nodes[i]->op != ls_op_get(LS_OP_getitem);
    ck_assert_uint_eq(calls, 3000);
    ls_verify_result vr;
    ls_verify(p, &vr);
    ck_assert_msg(vr.n == 0, "%s", vr.n ? vr.v[0].msg : "");
    ls_verify_result_free(&vr);
    /* constants 0..9 are the shared ones: count the distinct tags of their users */
    for (uint32_t j = 0; j < 40; j++) {
        int32_t pos = ls_program_find(p, ls_internf("c_const_%u", j));
        ck_assert_int_ge(pos, 0);
        uint32_t nu;
        const uint32_t *users = ls_program_users(p, (uint32_t)pos, &nu);
        const char *seen[64];
        uint32_t ntags = 0;
        for (uint32_t u = 0; u < nu; u++) {
            const char *t = p->nodes[users[u]]->tag;
            bool dup = false;
            for (uint32_t k = 0; k < ntags; k++) dup |= seen[k] == t;
            if (!dup && ntags < 64) seen[ntags++] = t;
        }
        if (j < 10) ck_assert_msg(ntags >= 30, "constant %u: %u partitions", j, ntags);
        else ck_assert_uint_eq(nu, 1);
    }
    ls_program_unref(p);
    /* and as a .pt2 archive */
    char path[512];
    snprintf(path, sizeof path, "%s/gen.pt2", tu_tmpdir());
    o.nodes = 200;
    ck_assert_int_eq(ls_gen_write_pt2(&o, path, &err), 0);
    p = load_ok(path, NULL);
    ck_assert(p->has_weights);
    ck_assert_uint_eq(p->n_constants, 40);
    ls_program_unref(p);
    o.edge = true;
    o.with_data = false;
    p = ls_gen_program(&o, &err);
    ck_assert_int_eq(p->dialect, LS_DIALECT_EDGE);
    ck_assert(!p->has_weights);
    ls_verify(p, &vr);
    ck_assert_msg(vr.n_errors == 0, "%s", vr.n ? vr.v[0].msg : "");
    ls_verify_result_free(&vr);
    ls_program_unref(p);
}
END_TEST

/* The streamed load (json_stream.c: nodes a element at a time, tensor_values by entry) gives
 * the program the whole tree gives: same nodes, ids and contents (no difference by
 * ls_diff_programs), with tensor_values in graph order or reversed, and the same message for a
 * text broken inside the nodes. */
static ls_program *load_whole(const char *text, size_t len, ls_error *err)
{
    ls_json_arena_begin();
    cJSON *root = ls_json_parse("t.json", text, len, err);
    ls_program *p = NULL;
    if (root && ls_load_json_tree("t.json", "model", root, NULL, true, 0, &p, err) != 0) p = NULL;
    ls_json_arena_end();
    return p;
}

static void same_both_ways(const char *text, size_t len)
{
    ls_error e1, e2;
    ls_program *a = NULL, *b = load_whole(text, len, &e2);
    int rc = ls_load_json("t.json", text, len, NULL, &a, &e1);
    if (!b) { /* refused: refused the same way */
        ck_assert_int_ne(rc, 0);
        ck_assert_str_eq(e1.msg, e2.msg);
        return;
    }
    ck_assert_msg(rc == 0, "%s", e1.msg);
    ck_assert_uint_eq(a->n_nodes, b->n_nodes);
    ck_assert_uint_eq(a->n_inputs, b->n_inputs);
    ck_assert_uint_eq(a->n_tags, b->n_tags);
    ls_change *ch;
    uint32_t n;
    ls_diff_programs(b, a, &ch, &n);
    ck_assert_msg(n == 0, "%u differences, the first: %s", n, n ? ch[0].node : "");
    free(ch);
    for (uint32_t i = 0; i < a->n_nodes; i++) {
        ck_assert_ptr_eq(a->nodes[i]->name, b->nodes[i]->name);
        ck_assert_uint_eq(a->nodes[i]->id, b->nodes[i]->id);
        ck_assert_uint_eq(a->nodes[i]->nvals, b->nodes[i]->nvals);
        if (a->nodes[i]->nvals) ck_assert(ls_tmeta_equal(&a->nodes[i]->vals[0], &b->nodes[i]->vals[0]));
    }
    ls_program_unref(a);
    ls_program_unref(b);
}

START_TEST(streamed_load_is_the_whole_load)
{
    ls_gen_opts o = ls_gen_defaults(2000);
    o.partitions = 40;
    o.constants = 20;
    o.split_every = 7;
    size_t len;
    char *json = ls_gen_json(&o, &len);
    same_both_ways(json, len);
    /* tensor_values backwards: every lookup misses the cursor and goes through the index */
    cJSON *root = cJSON_Parse(json);
    cJSON *graph = cJSON_GetObjectItem(cJSON_GetObjectItem(root, "graph_module"), "graph");
    cJSON *tv = cJSON_DetachItemFromObject(graph, "tensor_values"), *rev = cJSON_CreateObject();
    while (tv->child) {
        cJSON *last = tv->child;
        while (last->next) last = last->next;
        char *key = ls_strdup(last->string);
        cJSON_AddItemToObject(rev, key, cJSON_DetachItemViaPointer(tv, last));
        free(key);
    }
    cJSON_Delete(tv);
    cJSON_AddItemToObject(graph, "tensor_values", rev);
    char *back = cJSON_Print(root);
    same_both_ways(back, strlen(back));
    free(back);
    cJSON_Delete(root);
    /* broken inside a node: the same message both ways */
    char *bad = ls_strdup(json);
    char *t = strstr(bad, "\"target\"");
    ck_assert_ptr_nonnull(t);
    t[1] = 'X'; /* "Xarget": the node then has no target */
    same_both_ways(bad, len);
    t[1] = '\x01'; /* a control byte inside a key: refused before a node is read, both ways */
    same_both_ways(bad, len);
    memcpy(t, " \"target", 8); /* and between tokens, where cJSON and the scanner took it for whitespace */
    t[0] = '\x02';
    same_both_ways(bad, len);
    free(bad);
    bad = ls_strdup(json);
    t = strstr(strstr(bad, "\"nodes\""), "{\"target\"");
    ck_assert_ptr_nonnull(t);
    t[0] = '[';
    ls_error e1, e2;
    ls_program *p = NULL;
    ck_assert_int_ne(ls_load_json("t.json", bad, len, NULL, &p, &e1), 0);
    ck_assert_ptr_null(load_whole(bad, len, &e2));
    ck_assert_str_eq(e1.msg, e2.msg);
    ck_assert(strstr(e1.msg, "invalid JSON"));
    free(bad);
    free(json);
}
END_TEST

/* A text the load may give up (ls_load_json_consuming, what an archive's model JSON is): the
 * pages of the nodes read go back to the kernel as the load goes (every 4096 nodes), and the
 * program and the messages are those of a load that keeps the text. */
static char *copy_of(const char *s, size_t len)
{
    char *c = ls_malloc(len + 1);
    memcpy(c, s, len + 1);
    return c;
}

START_TEST(consuming_load_gives_the_read_nodes_back)
{
    ls_gen_opts o = ls_gen_defaults(20000);
    size_t len;
    char *json = ls_gen_json(&o, &len);
    ls_error e1, e2;
    ls_program *a = NULL, *b = load_whole(json, len, &e2);
    ck_assert_msg(b != NULL, "%s", e2.msg);
    char *text = copy_of(json, len);
    ck_assert_int_eq(ls_load_json_consuming("t.json", "model", text, len, NULL, true, &a, &e1), 0);
    ck_assert(json[len / 4] != 0);
    ck_assert_int_eq(text[len / 4], 0); /* a quarter in: among the 16384 nodes given back */
    free(text);
    ck_assert_uint_eq(a->n_nodes, b->n_nodes);
    ls_change *ch;
    uint32_t n;
    ls_diff_programs(b, a, &ch, &n);
    ck_assert_msg(n == 0, "%u differences, the first: %s", n, n ? ch[0].node : "");
    free(ch);
    ls_program_unref(a);
    ls_program_unref(b);
    /* the last node broken (its target key spoilt): the message a load keeping the text gives */
    char *bad = copy_of(json, len), *t = NULL;
    for (char *at = bad; (at = strstr(at, "\"target\"")); at++) t = at;
    ck_assert_ptr_nonnull(t);
    t[1] = 'X'; /* "Xarget": a raw control byte is refused before any node is read */
    ck_assert_int_ne(ls_load_json("t.json", bad, len, NULL, &a, &e2), 0);
    text = copy_of(bad, len);
    ck_assert_int_ne(ls_load_json_consuming("t.json", "model", text, len, NULL, true, &a, &e1), 0);
    ck_assert_int_eq(text[len / 4], 0);
    ck_assert_str_eq(e1.msg, e2.msg);
    free(text);
    free(bad);
    free(json);
}
END_TEST

Suite *reader_suite(void)
{
    Suite *s = suite_create("reader");
    TCase *tc = tcase_create("reader");
    tcase_set_timeout(tc, 60);
    tcase_add_test(tc, shared_archive_loads);
    tcase_add_test(tc, a_fifo_is_not_read);
    tcase_add_test(tc, an_unreadable_folder_says_so);
    tcase_add_test(tc, a_cancelled_archive_load_fails_cleanly);
    tcase_add_test(tc, folder_loads_the_same_program);
    tcase_add_test(tc, an_unpacked_archive_is_checked_as_the_zip);
    tcase_add_test(tc, v1_json_with_null_filled_unions);
    tcase_add_test(tc, tags_custom_metadata_and_unknown_ops);
    tcase_add_test(tc, multi_output_nodes_get_getitems);
    tcase_add_test(tc, metadata_only_loads);
    tcase_add_test(tc, strided_weights_become_contiguous);
    tcase_add_test(tc, lowered_program_loads);
    tcase_add_test(tc, deflated_archive_and_sizes_only);
    tcase_add_test(tc, json_in_memory);
    tcase_add_test(tc, corpus_messages_name_the_place);
    tcase_add_test(tc, samples_load_and_info_works);
    tcase_add_test(tc, generated_programs);
    tcase_add_test(tc, streamed_load_is_the_whole_load);
    tcase_add_test(tc, consuming_load_gives_the_read_nodes_back);
    suite_add_tcase(s, tc);
    return s;
}
