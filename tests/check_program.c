/* Tests of the program model and the operator table. */
#include <check.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "history.h"
#include "namer.h"
#include "ops.h"
#include "program.h"
#include "ptrmap.h"
#include "progfixtures.h"
#include "testutil.h"

START_TEST(every_table_schema_parses)
{
    for (int i = 0; i < LS_OP_COUNT; i++) {
        const ls_op *op = ls_op_get((ls_op_id)i);
        ck_assert_ptr_nonnull(op);
        ck_assert_ptr_eq(ls_op_find(op->ns, op->name, op->overload), op);
    }
    const ls_op *add = ls_op_get(LS_OP_add_Tensor);
    ck_assert_str_eq(add->qualname, "aten.add.Tensor");
    ck_assert_int_eq(add->schema.nparams, 3);
    ck_assert(add->schema.params[2].kwarg_only);
    ck_assert(add->schema.params[2].has_default);
    ck_assert_int_eq(add->schema.params[2].def.kind, LS_ARG_INT);
    const ls_op *nln = ls_op_get(LS_OP_native_layer_norm);
    ck_assert_int_eq(nln->schema.nreturns, 3);
    const ls_op *split = ls_op_get(LS_OP_split_Tensor);
    ck_assert(split->schema.returns_list);
    const ls_op *ip = ls_op_get(LS_OP_index_put_);
    ck_assert(ip->schema.params[0].mutated);
    ck_assert_int_eq(ip->schema.params[1].type, LS_PT_OPT_TENSOR_LIST);
    const ls_op *sum = ls_op_get(LS_OP_sum_dim_IntList);
    ck_assert(sum->schema.params[1].optional);
    ck_assert_int_eq(sum->schema.params[1].type, LS_PT_INT_LIST);
    const ls_op *gelu = ls_op_get(LS_OP_gelu);
    ck_assert_str_eq(gelu->schema.params[1].def.v.s, "none");
}
END_TEST

START_TEST(targets_of_both_dialects_map_to_one_entry)
{
    ls_dialect d;
    const ls_op *a = ls_op_from_target("torch.ops.aten.add.Tensor", &d);
    ck_assert_int_eq(d, LS_DIALECT_ATEN);
    const ls_op *e = ls_op_from_target("executorch.exir.dialects.edge.ops.aten.add.Tensor", &d);
    ck_assert_int_eq(d, LS_DIALECT_EDGE);
    ck_assert_ptr_eq(a, e);
    ck_assert_ptr_eq(ls_op_from_target("aten::add.Tensor", &d), a);
    ck_assert_ptr_eq(ls_op_from_target("torch.ops.aten.neg.default", &d), ls_op_get(LS_OP_neg));
    ck_assert_ptr_eq(ls_op_from_target("_operator.getitem", &d), ls_op_get(LS_OP_getitem));
    ck_assert_int_eq(d, LS_DIALECT_NONE);
    ck_assert_ptr_null(ls_op_from_target("torch.ops.mylib.frobnicate.default", &d));
    ck_assert_int_eq(d, LS_DIALECT_ATEN);
    ck_assert_str_eq(ls_target_short("torch.ops.mylib.frobnicate.default"), "frobnicate");
    ck_assert_str_eq(ls_op_target(a, LS_DIALECT_EDGE), "executorch.exir.dialects.edge.ops.aten.add.Tensor");
    ck_assert_str_eq(ls_op_target(a, LS_DIALECT_ATEN), "torch.ops.aten.add.Tensor");
    ck_assert_ptr_eq(ls_op_from_out_variant("aten::add", "out"), a);
    ck_assert_ptr_eq(ls_op_from_out_variant("aten::view_copy", "out"), ls_op_get(LS_OP_view_copy));
    ck_assert_ptr_eq(ls_op_from_out_variant("dim_order_ops::_to_dim_order_copy", "out"), ls_op_get(LS_OP__to_dim_order_copy));
    ck_assert_ptr_eq(ls_op_copy_form(ls_op_get(LS_OP_view)), ls_op_get(LS_OP_view_copy));
    ck_assert_ptr_eq(ls_op_copy_form(ls_op_get(LS_OP_permute)), ls_op_get(LS_OP_permute_copy));
    ck_assert_ptr_eq(ls_op_copy_form(ls_op_get(LS_OP_slice_Tensor)), ls_op_get(LS_OP_slice_copy_Tensor));
    ck_assert_ptr_eq(ls_op_copy_form(ls_op_get(LS_OP_reshape)), ls_op_get(LS_OP_view_copy));
    ck_assert_ptr_null(ls_op_copy_form(a));
}
END_TEST

START_TEST(normalize_fills_defaults_and_orders_by_schema)
{
    const ls_op *add = ls_op_get(LS_OP_add_Tensor);
    ls_arg given[2] = {ls_arg_node(5), ls_arg_node(7)};
    given[0].name = ls_intern("self");
    given[1].name = ls_intern("other");
    ls_arg *out;
    uint16_t n;
    ls_error err;
    ck_assert_int_eq(ls_op_normalize_args(add, given, 2, &out, &n, &err), 0);
    ck_assert_int_eq(n, 3);
    ck_assert_uint_eq(out[0].v.node, 5);
    ck_assert_uint_eq(out[1].v.node, 7);
    ck_assert_int_eq(out[2].kind, LS_ARG_INT);
    ck_assert_int_eq(out[2].v.i, 1);
    ck_assert(out[2].flags & LS_ARGF_DEFAULT);
    for (int i = 0; i < n; i++) ls_arg_free(&out[i]);
    free(out);

    /* keyword given before a positional one, by name */
    ls_arg g2[2] = {ls_arg_int(2), ls_arg_node(3)};
    g2[0].name = ls_intern("alpha");
    g2[0].flags = LS_ARGF_KEYWORD;
    g2[1].name = NULL;
    ck_assert_int_eq(ls_op_normalize_args(add, g2, 2, &out, &n, &err), -1); /* other missing */
    ck_assert(tu_contains(err.msg, "missing argument 'other'"));
    ls_arg_free(&g2[0]);
    ls_arg_free(&g2[1]);

    ls_arg g3[1] = {ls_arg_node(1)};
    g3[0].name = ls_intern("bogus");
    ck_assert_int_eq(ls_op_normalize_args(add, g3, 1, &out, &n, &err), -1);
    ck_assert(tu_contains(err.msg, "'bogus' is not in the schema of aten.add.Tensor"));
}
END_TEST

static ls_program *chain(int len)
{
    ls_program *p = ls_program_new("m", LS_DIALECT_ATEN);
    ls_node *x = ls_node_new(p, LS_NODE_PLACEHOLDER, "x", NULL);
    ls_program_append(p, x);
    uint32_t prev = x->id;
    for (int i = 0; i < len; i++) {
        const char *name = ls_program_unique_name(p, "add");
        ls_node *n = ls_node_new(p, LS_NODE_CALL, name, "torch.ops.aten.add.Tensor");
        n->op = ls_op_get(LS_OP_add_Tensor);
        ls_arg *args = ls_calloc(2, sizeof *args);
        args[0] = ls_arg_node(prev);
        args[1] = ls_arg_node(x->id);
        ls_node_set_args(n, args, 2);
        ls_program_append(p, n);
        prev = n->id;
    }
    ls_node *out = ls_node_new(p, LS_NODE_OUTPUT, "output", NULL);
    ls_arg *oa = ls_calloc(1, sizeof *oa);
    oa[0] = ls_arg_node(prev);
    ls_node_set_args(out, oa, 1);
    ls_program_append(p, out);
    return p;
}

START_TEST(copies_share_nodes_until_edited)
{
    ls_program *p = chain(3);
    ck_assert_uint_eq(p->n_nodes, 5);
    ck_assert_str_eq(p->nodes[1]->name, "add");
    ck_assert_str_eq(p->nodes[2]->name, "add_1");
    ck_assert_str_eq(p->nodes[3]->name, "add_2");
    ls_program *q = ls_program_copy(p);
    ck_assert_ptr_eq(q->nodes[2], p->nodes[2]);
    ls_node *e = ls_program_edit(q, 2);
    ck_assert_ptr_ne(e, p->nodes[2]);
    ck_assert_uint_eq(e->id, p->nodes[2]->id);
    e->tag = ls_intern("tag0");
    ck_assert_ptr_null(p->nodes[2]->tag);
    ck_assert_ptr_eq(q->nodes[1], p->nodes[1]);
    ls_program_unref(p);
    ck_assert_str_eq(q->nodes[1]->name, "add"); /* survives the original */
    ls_program_unref(q);
}
END_TEST

/* A tmeta of dtype float32 and the given sizes whose padding bytes are `fill`, as a loader
 * that never zeroed it may leave them: the interner must see through them. */
static ls_tmeta padded_meta(int fill, int ndim, const int64_t *sizes)
{
    ls_tmeta m, clean;
    memset(&m, fill, sizeof m);
    ls_tmeta_init(&clean, LS_DT_F32, ndim, sizes);
    m.dtype = clean.dtype;
    m.ndim = clean.ndim;
    m.requires_grad = clean.requires_grad;
    memcpy(m.dim_order, clean.dim_order, sizeof m.dim_order);
    memcpy(m.sizes, clean.sizes, sizeof m.sizes);
    memcpy(m.sym, clean.sym, sizeof m.sym);
    return m;
}

/* Equal vals are held once (interned, whatever the padding of the tmeta they came from), and a
 * node that writes to its vals gets a copy of its own: the other nodes keep theirs. */
START_TEST(equal_vals_are_held_once_until_written)
{
    ls_program *p = chain(3); /* x, add, add_1, add_2, output */
    int64_t sizes[2] = {4, 8};
    for (uint32_t i = 1; i <= 3; i++) { /* each from a tmeta of its own, with its own padding */
        ls_tmeta m = padded_meta((int)(0x11 * i), 2, sizes);
        ls_node_set_vals(p->nodes[i], LS_VAL_TENSOR, &m, 1);
    }
    const ls_node *a = p->nodes[1], *b = p->nodes[2];
    ck_assert_ptr_eq(a->vals, b->vals);
    ck_assert_ptr_eq(a->vals, p->nodes[3]->vals);
    ck_assert_int_eq(a->vals[0].sizes[1], 8);
    ls_program *q = ls_program_copy(p);
    ls_node *e = ls_program_edit(q, 3); /* a clone shares them */
    ck_assert_ptr_eq(e->vals, a->vals);
    ls_tmeta *own = ls_node_vals_mut(e);
    ck_assert_ptr_ne(own, a->vals);
    own->sizes[0] = 11;
    ck_assert_int_eq(a->vals[0].sizes[0], 4);
    ck_assert_int_eq(b->vals[0].sizes[0], 4);
    ck_assert_int_eq(p->nodes[3]->vals[0].sizes[0], 4);
    ls_node *c = ls_node_clone(e); /* shares e's copy, and writing to it copies again */
    ck_assert_ptr_eq(c->vals, e->vals);
    ls_node_vals_mut(c)->sizes[0] = 13;
    ck_assert_int_eq(e->vals[0].sizes[0], 11);
    ck_assert_int_eq(c->vals[0].sizes[0], 13);
    ls_node_unref(c);
    ls_program_unref(q);
    ls_program_unref(p);
}
END_TEST

START_TEST(users_come_in_graph_order_once_each)
{
    ls_program *p = chain(3);
    uint32_t n;
    const uint32_t *u = ls_program_users(p, 0, &n); /* x: used by every add */
    ck_assert_uint_eq(n, 3);
    ck_assert_uint_eq(u[0], 1);
    ck_assert_uint_eq(u[1], 2);
    ck_assert_uint_eq(u[2], 3);
    u = ls_program_users(p, 3, &n);
    ck_assert_uint_eq(n, 1);
    ck_assert_uint_eq(u[0], 4);
    /* a node reading x twice counts once */
    ls_node *first = ls_program_edit(p, 1);
    first->args[0] = ls_arg_node(p->nodes[0]->id);
    ls_program_users(p, 0, &n);
    ck_assert_uint_eq(n, 3);
    ck_assert_int_eq(ls_program_find(p, "add_1"), 2);
    ck_assert_int_eq(ls_program_find(p, "nope"), -1);
    ck_assert_int_eq(ls_program_pos(p, p->nodes[3]->id), 3);
    /* replace uses: every add now reads add (pos 1) instead of x */
    ls_program_replace_uses(p, p->nodes[0]->id, p->nodes[1]->id);
    ls_program_users(p, 0, &n);
    ck_assert_uint_eq(n, 0);
    ls_program_unref(p);
}
END_TEST

/* The set of pointers the namer keeps: each key once, found after the table grows, NULL never. */
START_TEST(ptrset_holds_each_key_once)
{
    ls_ptrset s = {0};
    static char keys[1000];
    for (int i = 0; i < 1000; i++) ck_assert(ls_ptrset_add(&s, &keys[i]));
    for (int i = 0; i < 1000; i++) ck_assert(!ls_ptrset_add(&s, &keys[i]));
    ck_assert_uint_eq(s.used, 1000);
    ck_assert_uint_ge(s.cap, 2002); /* grown at most half full */
    for (int i = 0; i < 1000; i++) ck_assert(ls_ptrset_has(&s, &keys[i]));
    ck_assert(!ls_ptrset_has(&s, &s));
    ck_assert(!ls_ptrset_add(&s, NULL));
    ck_assert(!ls_ptrset_has(&s, NULL));
    ls_ptrset_free(&s);
    ck_assert(!ls_ptrset_has(&s, &keys[0]));
}
END_TEST

START_TEST(namer_follows_fx)
{
    ls_program *p = chain(2);
    ls_namer *nm = ls_namer_new(p);
    ck_assert_str_eq(ls_namer_take(nm, "add"), "add_2");
    ck_assert_str_eq(ls_namer_take(nm, "add"), "add_3");
    ck_assert_str_eq(ls_namer_take(nm, "add_1"), "add_4");
    ck_assert_str_eq(ls_namer_take(nm, "mul"), "mul");
    ck_assert_str_eq(ls_namer_take(nm, "mul"), "mul_1");
    ck_assert_str_eq(ls_namer_take(nm, "c_copy_0"), "c_copy_0");
    ck_assert(ls_namer_taken(nm, ls_intern("mul_1")));
    ck_assert(!ls_namer_taken(nm, ls_intern("mul_2")));
    /* a long name keeps all of it */
    char stem[700];
    memset(stem, 'a', sizeof stem - 1);
    stem[sizeof stem - 1] = 0;
    ck_assert_str_eq(ls_namer_take(nm, stem), stem);
    const char *second = ls_namer_take_interned(nm, ls_intern(stem));
    ck_assert_uint_eq(strlen(second), strlen(stem) + 2);
    ck_assert(strncmp(second, stem, strlen(stem)) == 0 && strcmp(second + strlen(stem), "_1") == 0);
    ls_namer_free(nm);
    ls_program_unref(p);
}
END_TEST

START_TEST(data_tables_share_tensors)
{
    ls_program *p = ls_program_new("m", LS_DIALECT_ATEN);
    int64_t sz[1] = {4};
    ls_tensor *t = ls_tensor_alloc(LS_DT_F32, 1, sz);
    ls_program_put_constant(p, "c", t, NULL);
    ls_program *q = ls_program_copy(p);
    ck_assert_ptr_eq(ls_program_constant(q, "c")->t, t);
    ck_assert_uint_eq(t->refs, 3);
    ck_assert(ls_program_drop_constant(q, "c"));
    ck_assert_ptr_null(ls_program_constant(q, "c"));
    ck_assert_ptr_nonnull(ls_program_constant(p, "c"));
    ck_assert_uint_eq(ls_program_weight_bytes(p), 16);
    ls_tensor_unref(t);
    ls_program_unref(p);
    ls_program_unref(q);
}
END_TEST

/* Table entries hold interned metadata: equal metadata (whatever the padding of the tmeta it
 * came from, or taken from the tensor) is one pointer, an entry is three pointers, and a copied
 * table that takes new metadata for one entry leaves the source's alone. */
START_TEST(data_tables_intern_metadata)
{
    ls_program *p = ls_program_new("m", LS_DIALECT_ATEN);
    int64_t sz[2] = {4, 8};
    ls_tensor *t = ls_tensor_alloc(LS_DT_F32, 2, sz);
    ls_tmeta m = padded_meta(0x5a, 2, sz);
    ls_tmeta clean;
    ls_tmeta_init(&clean, LS_DT_F32, 2, sz);
    ls_program_put_constant(p, "a", NULL, &m);
    ls_program_put_constant(p, "b", t, NULL);
    ls_program_put_state(p, "w", NULL, &clean);
    ck_assert_uint_eq(sizeof(ls_named_tensor), 3 * sizeof(void *));
    const ls_tmeta *a = ls_program_constant(p, "a")->meta;
    ck_assert_ptr_eq(ls_program_constant(p, "b")->meta, a);
    ck_assert_ptr_eq(ls_program_state(p, "w")->meta, a);
    ck_assert_int_eq(a->sizes[1], 8);
    ls_program *q = ls_program_copy(p);
    ck_assert_ptr_eq(ls_program_constant(q, "a")->meta, a);
    int64_t other[1] = {3};
    ls_tmeta_init(&m, LS_DT_I64, 1, other);
    ls_program_put_constant(q, "a", NULL, &m);
    ck_assert_int_eq(ls_program_constant(q, "a")->meta->dtype, LS_DT_I64);
    ck_assert_ptr_eq(ls_program_constant(q, "b")->meta, a);
    ck_assert_ptr_eq(ls_program_constant(p, "a")->meta, a);
    ck_assert_int_eq(a->dtype, LS_DT_F32);
    ck_assert_int_eq(a->sizes[0], 4);
    ls_program_put_constant(q, "b", NULL, NULL); /* no tensor, no metadata: b keeps its own */
    ck_assert_ptr_eq(ls_program_constant(q, "b")->meta, a);
    ls_program_put_constant(q, "none", NULL, NULL); /* a new entry still has a tmeta to read */
    ck_assert_int_eq(ls_program_constant(q, "none")->meta->dtype, LS_DT_UNKNOWN);
    ck_assert_uint_eq(ls_program_weight_bytes(p), 3 * 32 * 4);
    ck_assert_uint_eq(ls_program_weight_bytes(q), 24 + 128 + 128);
    ls_tensor_unref(t);
    ls_program_unref(q);
    ls_program_unref(p);
}
END_TEST

/* Name lookups of the tables go through maps past a few entries: they must give what a scan
 * gives (the first entry of a name) after appends, drops, replaced tables and copies. */
START_TEST(table_lookups_follow_every_change)
{
    ls_program *p = ls_program_new("m", LS_DIALECT_ATEN);
    int64_t sz[1] = {2};
    ls_tensor *t = ls_tensor_alloc(LS_DT_F32, 1, sz);
    char name[32];
    for (int i = 0; i < 300; i++) {
        snprintf(name, sizeof name, "c%d", i);
        ck_assert_ptr_null(ls_program_constant(p, name)); /* a lookup before each append */
        ls_program_put_constant(p, name, t, NULL);
        ck_assert_ptr_eq(ls_program_constant(p, name), &p->constants[i]);
        snprintf(name, sizeof name, "tag%d", i);
        ls_program_add_tag(p, name, i % 2 ? "A" : NULL);
    }
    ck_assert_ptr_eq(ls_program_constant(p, "c0"), &p->constants[0]);
    ck_assert(ls_program_drop_constant(p, "c10"));
    ck_assert_ptr_null(ls_program_constant(p, "c10"));
    ck_assert_str_eq(ls_program_constant(p, "c11")->name, "c11");
    ck_assert_ptr_eq(ls_program_constant(p, "c299"), &p->constants[298]);
    ck_assert_str_eq(ls_program_tag_backend(p, "tag7"), "A");
    ck_assert_ptr_null(ls_program_tag_backend(p, "tag8"));
    ls_program_add_tag(p, "tag8", "B"); /* an existing tag takes the backend */
    ck_assert_uint_eq(p->n_tags, 300);
    ck_assert_str_eq(ls_program_tag_backend(p, "tag8"), "B");
    /* inputs: a replaced table is looked up afresh, twice the same name gives the first */
    ls_input_spec specs[40];
    memset(specs, 0, sizeof specs);
    for (int i = 0; i < 40; i++) {
        snprintf(name, sizeof name, "in%d", i % 39);
        specs[i].name = ls_intern(name);
    }
    ls_program_set_inputs(p, specs, 40);
    ck_assert_int_eq(ls_program_input_spec(p, "in0"), 0);
    ck_assert_int_eq(ls_program_input_spec(p, "in38"), 38);
    for (int i = 0; i < 40; i++) {
        snprintf(name, sizeof name, "x%d", i);
        specs[i].name = ls_intern(name);
    }
    ls_program_set_inputs(p, specs, 40);
    ck_assert_int_eq(ls_program_input_spec(p, "in0"), -1);
    ck_assert_int_eq(ls_program_input_spec(p, "x39"), 39);
    /* a copy has maps of its own */
    ls_program *q = ls_program_copy(p);
    ls_program_put_constant(q, "only_in_q", t, NULL);
    ck_assert_ptr_nonnull(ls_program_constant(q, "only_in_q"));
    ck_assert_ptr_null(ls_program_constant(p, "only_in_q"));
    ck_assert_ptr_eq(ls_program_constant(q, "c5"), &q->constants[5]);
    ls_tensor_unref(t);
    ls_program_unref(q);
    ls_program_unref(p);
}
END_TEST

/* The diff pairs shared nodes without reading them, wherever they moved, and reads only what
 * a step made or changed: a node inserted in front shifts every other one. */
START_TEST(diff_sees_through_shifted_nodes)
{
    ls_program *a = pf_chain_program();
    ls_program *b = ls_program_copy(a);
    ls_program_insert(b, 0, ls_node_new(b, LS_NODE_PLACEHOLDER, "new_ph", NULL));
    int32_t pos = ls_program_find(b, "aten_add_tensor_1");
    ck_assert_int_ge(pos, 0);
    ls_program_edit(b, (uint32_t)pos)->tag = ls_intern("tag0");
    int32_t gone = ls_program_find(b, "c_c");
    ck_assert_int_ge(gone, 0);
    ls_program_remove(b, (uint32_t)gone);
    ls_change *ch;
    uint32_t n;
    ls_diff_programs(a, b, &ch, &n);
    ck_assert_uint_eq(n, 3);
    ck_assert_int_eq(ch[0].kind, LS_CHANGE_REMOVED);
    ck_assert_str_eq(ch[0].node, "c_c");
    ck_assert_int_eq(ch[1].kind, LS_CHANGE_ADDED);
    ck_assert_str_eq(ch[1].node, "new_ph");
    ck_assert_int_eq(ch[2].kind, LS_CHANGE_CHANGED);
    ck_assert_str_eq(ch[2].node, "aten_add_tensor_1");
    free(ch);
    /* an edit that changes nothing a user sees is no change */
    ls_program *c = ls_program_copy(b);
    ls_program_edit(c, (uint32_t)ls_program_find(c, "x"));
    ls_diff_programs(b, c, &ch, &n);
    ck_assert_uint_eq(n, 0);
    free(ch);
    ls_program_unref(c);
    ls_program_unref(b);
    ls_program_unref(a);
}
END_TEST

Suite *program_suite(void)
{
    Suite *s = suite_create("program");
    TCase *tc = tcase_create("model");
    tcase_add_test(tc, every_table_schema_parses);
    tcase_add_test(tc, targets_of_both_dialects_map_to_one_entry);
    tcase_add_test(tc, normalize_fills_defaults_and_orders_by_schema);
    tcase_add_test(tc, copies_share_nodes_until_edited);
    tcase_add_test(tc, equal_vals_are_held_once_until_written);
    tcase_add_test(tc, users_come_in_graph_order_once_each);
    tcase_add_test(tc, namer_follows_fx);
    tcase_add_test(tc, ptrset_holds_each_key_once);
    tcase_add_test(tc, data_tables_share_tensors);
    tcase_add_test(tc, data_tables_intern_metadata);
    tcase_add_test(tc, table_lookups_follow_every_change);
    tcase_add_test(tc, diff_sees_through_shifted_nodes);
    suite_add_tcase(s, tc);
    return s;
}
