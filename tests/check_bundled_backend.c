/* Tests of the bundled delegate backend: its blob (round trip, the builder guard, what the
 * writer refuses, corrupted blobs refused with a message and never a crash) and the backend
 * through the registry (preprocess → init → execute: consumed constants, state kept across
 * calls, boolean gather refused, inputs checked, altered blobs). Submodule programs
 * are built by hand with program.h, shaped as to_backend leaves them (exir-semantics §6). */
#include <check.h>
#include <stdlib.h>
#include <string.h>

#include "backend.h"
#include "build.h"
#include "bundled_blob.h"
#include "ops.h"
#include "program.h"
#include "runtime.h"
#include "testutil.h"

/* ---- building submodule programs (include/build.h) */

/* An input with its data; the builder takes its own reference. */
static uint32_t input(ls_builder *b, const char *name, ls_input_kind kind, const char *target, ls_tensor *data)
{
    uint32_t id = ls_build_input(b, name, kind, target, true, NULL, data);
    ls_tensor_unref(data);
    return id;
}

static uint32_t user_input(ls_builder *b, const char *name, ls_dtype dt, int ndim, const int64_t *sizes)
{
    ls_tmeta m = ls_meta(dt, ndim, sizes);
    return ls_build_input(b, name, LS_IN_USER_INPUT, NULL, false, &m, NULL);
}

/* args: their lists are taken (the builder consumes a heap copy of the array) */
static uint32_t call(ls_builder *b, const char *name, ls_op_id op, const ls_arg *args, uint16_t nargs, ls_dtype dt,
                     int ndim, const int64_t *sizes)
{
    ls_tmeta m = ls_meta(dt, ndim, sizes);
    ls_arg *heap = ls_malloc(sizeof *heap * nargs);
    memcpy(heap, args, sizeof *heap * nargs);
    return ls_build_call(b, name, op, heap, nargs, &m);
}

static ls_output_spec out_spec(ls_output_kind kind, const char *name, const char *target)
{
    ls_output_spec s = {.kind = (uint8_t)kind, .name = ls_intern(name), .target = ls_intern(target)};
    return s;
}

static ls_tensor *tensor_f32(int ndim, const int64_t *sizes, const float *v)
{
    ls_tensor *t = ls_tensor_alloc(LS_DT_F32, ndim, sizes);
    if (v) memcpy(t->data, v, t->nbytes);
    return t;
}

/* x:[2,3] user input; c (tensor constant) and w (parameter) consumed: out = (x + c) + w */
static ls_program *chain_program(void)
{
    static const int64_t s23[] = {2, 3};
    static const float cv[] = {1, 2, 3, 4, 5, 6}, wv[] = {10, 20, 30, 40, 50, 60};
    ls_builder *b = ls_builder_new("lowered_module_0", LS_DIALECT_EDGE);
    uint32_t c = input(b, "c_c", LS_IN_CONSTANT_TENSOR, "c", tensor_f32(2, s23, cv));
    uint32_t w = input(b, "p_w", LS_IN_PARAMETER, "w", tensor_f32(2, s23, wv));
    uint32_t x = user_input(b, "x", LS_DT_F32, 2, s23);
    ls_arg a1[] = {ls_arg_node(x), ls_arg_node(c), ls_arg_int(1)};
    uint32_t add = call(b, "aten_add_tensor", LS_OP_add_Tensor, a1, 3, LS_DT_F32, 2, s23);
    ls_arg a2[] = {ls_arg_node(add), ls_arg_node(w), ls_arg_int(1)};
    uint32_t add1 = call(b, "aten_add_tensor_1", LS_OP_add_Tensor, a2, 3, LS_DT_F32, 2, s23);
    ls_build_output(b, &add1, 1, NULL, NULL);
    return ls_builder_finish(b);
}

/* exir-semantics §9 test 10 with a [4,3] cache: q:[1,3], k_val:[1,3], input_pos:[1] int64;
 * cache[input_pos] = k_val (BUFFER_MUTATION), out = mm(cache, q^T). With cache_out, the buffer
 * placeholder is a user output too; with inplace, the write is index_put_. */
static ls_program *kv_program_with(bool cache_out, bool inplace)
{
    static const int64_t s43[] = {4, 3}, s13[] = {1, 3}, s31[] = {3, 1}, s41[] = {4, 1}, s1[] = {1};
    ls_builder *b = ls_builder_new("lowered_module_0", LS_DIALECT_EDGE);
    uint32_t cache = input(b, "b_cache", LS_IN_BUFFER, "cache", tensor_f32(2, s43, NULL));
    uint32_t q = user_input(b, "q", LS_DT_F32, 2, s13);
    uint32_t k = user_input(b, "k_val", LS_DT_F32, 2, s13);
    uint32_t pos = user_input(b, "input_pos", LS_DT_I64, 1, s1);
    const int64_t perm[] = {1, 0};
    ls_arg a1[] = {ls_arg_node(q), ls_arg_ints(perm, 2)};
    uint32_t qt = call(b, "aten_permute_copy_default", LS_OP_permute_copy, a1, 2, LS_DT_F32, 2, s31);
    ls_arg a2[] = {ls_arg_node(cache), ls_arg_opt_nodes(&pos, 1), ls_arg_node(k), ls_arg_bool(false)};
    uint32_t put = call(b, "aten_index_put_default", inplace ? LS_OP_index_put_ : LS_OP_index_put, a2, 4, LS_DT_F32, 2,
                        s43);
    ls_arg a3[] = {ls_arg_node(put), ls_arg_node(qt)};
    uint32_t mm = call(b, "aten_mm_default", LS_OP_mm, a3, 2, LS_DT_F32, 2, s41);
    const uint32_t ids[] = {put, mm, cache};
    const ls_output_kind kinds[] = {LS_OUT_BUFFER_MUTATION, LS_OUT_USER_OUTPUT, LS_OUT_USER_OUTPUT};
    const char *const targets[] = {"cache", NULL, NULL};
    ls_build_output(b, ids, cache_out ? 3 : 2, kinds, targets);
    return ls_builder_finish(b);
}

static ls_program *kv_program(void)
{
    return kv_program_with(false, false);
}

/* x:[4] user input; x[c_mask] with a constant boolean mask */
static ls_program *mask_program(void)
{
    static const int64_t s4[] = {4}, s2[] = {2};
    static const double mv[] = {1, 0, 1, 0};
    ls_builder *b = ls_builder_new("lowered_module_1", LS_DIALECT_EDGE);
    uint32_t m = input(b, "c_mask", LS_IN_CONSTANT_TENSOR, "mask", ls_tensor_of(LS_DT_BOOL, 1, s4, mv, 4));
    uint32_t x = user_input(b, "x", LS_DT_F32, 1, s4);
    ls_arg a[] = {ls_arg_node(x), ls_arg_opt_nodes(&m, 1)};
    uint32_t idx = call(b, "aten_index_tensor", LS_OP_index_Tensor, a, 2, LS_DT_F32, 1, s2);
    ls_build_output(b, &idx, 1, NULL, NULL);
    return ls_builder_finish(b);
}

static ls_blob *encode_ok(const ls_program *p)
{
    ls_blob *b = NULL;
    ls_error err = {{0}};
    int rc = ls_bb_encode(p, &b, &err);
    ck_assert_msg(rc == 0, "encode failed: %s", err.msg);
    return b;
}

static ls_blob *blob_copy(const ls_blob *b, size_t size)
{
    ls_blob *c = ls_blob_new(size);
    memcpy(c->data, b->data, size < b->size ? size : b->size);
    return c;
}

/* ---- the blob */

START_TEST(blob_round_trip_keeps_graph_and_data)
{
    ls_program *p = kv_program();
    ls_blob *b = encode_ok(p);
    ck_assert_mem_eq(b->data, "LSBB", 4);
    ck_assert_uint_eq(((uintptr_t)b->data) % 64, 0);
    ls_bb_graph *g;
    ls_error err;
    ck_assert_msg(ls_bb_decode(b, &g, &err) == 0, "%s", err.msg);
    ck_assert_str_eq(g->name, "lowered_module_0");
    ck_assert_uint_eq(g->n_nodes, p->n_nodes - 1);
    ck_assert_uint_eq(g->n_inputs, 3);
    ck_assert_uint_eq(g->n_constants, 0);
    ck_assert_uint_eq(g->n_states, 1);
    ck_assert_str_eq(g->states[0].name, "cache");
    ck_assert_uint_eq(g->states[0].offset % 64, 0);
    ck_assert_uint_eq(g->states[0].nbytes, 4 * 3 * 4);
    ck_assert_uint_eq(g->role[0], LS_BB_STATE);
    for (uint32_t k = 0; k < 3; k++) ck_assert_uint_eq(g->inputs[k], k + 1);
    /* Nodes were built with ids 1..n in order, so decoded ids and arguments equal the originals. */
    for (uint32_t i = 0; i < g->n_nodes; i++) {
        const ls_node *a = p->nodes[i], *d = g->nodes[i];
        ck_assert_uint_eq(d->id, a->id);
        ck_assert_str_eq(d->name, a->name);
        ck_assert_int_eq(d->kind, a->kind);
        ck_assert_ptr_eq(d->op, a->op);
        ck_assert_ptr_eq(d->target, a->target);
        ck_assert_uint_eq(d->nargs, a->nargs);
        for (uint16_t k = 0; k < a->nargs; k++) {
            ck_assert(ls_arg_equal(&d->args[k], &a->args[k]));
            ck_assert_ptr_eq(d->args[k].name, a->args[k].name);
        }
        ck_assert_uint_eq(d->nvals, 1);
        ck_assert(ls_tmeta_equal(&d->vals[0], &a->vals[0]));
    }
    ck_assert_uint_eq(g->n_outputs, 2);
    ck_assert_uint_eq(g->n_user_outputs, 1);
    ck_assert_int_eq(g->outputs[0].kind, LS_BB_OUT_STATE);
    ck_assert_uint_eq(g->outputs[0].state, 0);
    ck_assert_int_eq(g->outputs[1].kind, LS_BB_OUT_USER);
    ck_assert_uint_eq(g->output->args[0].v.node, p->nodes[5]->id);
    ck_assert_uint_eq(g->output->args[1].v.node, p->nodes[6]->id);
    ls_bb_graph_free(g);
    ls_blob_unref(b);
    ls_program_unref(p);

    /* constants keep their bytes */
    p = chain_program();
    b = encode_ok(p);
    ck_assert_msg(ls_bb_decode(b, &g, &err) == 0, "%s", err.msg);
    ck_assert_uint_eq(g->n_constants, 2);
    ck_assert_str_eq(g->constants[0].name, "c");
    ck_assert_str_eq(g->constants[1].name, "w");
    ck_assert_mem_eq(b->data + g->constants[0].offset, ls_program_constant(p, "c")->t->data, 24);
    ck_assert_mem_eq(b->data + g->constants[1].offset, ls_program_state(p, "w")->t->data, 24);
    ck_assert_uint_eq(g->constants[1].offset % 64, 0);
    ls_bb_graph_free(g);
    ls_blob_unref(b);
    ls_program_unref(p);
}
END_TEST

START_TEST(builder_guard_refuses_second_placeholder_for_a_target)
{
    /* exir-semantics D9: c_k and c_k_copy_0 both name constant k */
    static const int64_t s2[] = {2};
    ls_builder *bld = ls_builder_new("lowered_module_0", LS_DIALECT_EDGE);
    ls_tensor *t = tensor_f32(1, s2, NULL);
    uint32_t k0 = ls_build_input(bld, "c_k", LS_IN_CONSTANT_TENSOR, "k", true, NULL, t);
    uint32_t k1 = ls_build_input(bld, "c_k_copy_0", LS_IN_CONSTANT_TENSOR, "k", true, NULL, t);
    ls_tensor_unref(t);
    uint32_t x = user_input(bld, "x", LS_DT_F32, 1, s2);
    ls_arg a1[] = {ls_arg_node(x), ls_arg_node(k0), ls_arg_int(1)};
    uint32_t s = call(bld, "aten_add_tensor", LS_OP_add_Tensor, a1, 3, LS_DT_F32, 1, s2);
    ls_arg a2[] = {ls_arg_node(s), ls_arg_node(k1)};
    uint32_t m = call(bld, "aten_mul_tensor", LS_OP_mul_Tensor, a2, 2, LS_DT_F32, 1, s2);
    ls_build_output(bld, &m, 1, NULL, NULL);
    ls_program *p = ls_builder_finish(bld);
    ls_blob *b = (ls_blob *)1;
    ls_error err;
    ck_assert_int_eq(ls_bb_encode(p, &b, &err), -1);
    ck_assert_ptr_null(b);
    ck_assert_msg(tu_contains(err.msg, "placeholder c_k_copy_0 names tensor_constant target 'k', which already has a "
                                       "slot (placeholder c_k)"),
                  "%s", err.msg);
    ls_program_unref(p);
}
END_TEST

START_TEST(writer_refuses_what_it_cannot_carry)
{
    ls_error err;
    ls_blob *b;
    /* weights absent */
    ls_program *p = chain_program();
    ls_program_put_constant(p, "c", NULL, &ls_program_constant(p, "c")->meta);
    ck_assert_int_eq(ls_bb_encode(p, &b, &err), -1);
    ck_assert_msg(tu_contains(err.msg, "placeholder c_c: 'c' has no data"), "%s", err.msg);
    ls_program_unref(p);

    /* data that does not match the placeholder */
    p = chain_program();
    static const int64_t s3[] = {3};
    ls_tensor *t = tensor_f32(1, s3, NULL);
    ls_program_put_state(p, "w", t, NULL);
    ls_tensor_unref(t);
    ck_assert_int_eq(ls_bb_encode(p, &b, &err), -1);
    ck_assert_msg(tu_contains(err.msg, "placeholder p_w declares float32[2, 3] but 'w' holds float32[3]"), "%s", err.msg);
    ls_program_unref(p);

    /* an unknown op */
    p = chain_program();
    ls_node *n = ls_program_edit(p, 3);
    n->op = NULL;
    n->target = ls_intern("torch.ops.mylib.frob.default");
    ck_assert_int_eq(ls_bb_encode(p, &b, &err), -1);
    ck_assert_msg(tu_contains(err.msg, "node aten_add_tensor: unknown operator torch.ops.mylib.frob.default"), "%s",
                  err.msg);
    ls_program_unref(p);

    /* a reference to a node defined later */
    p = chain_program();
    n = ls_program_edit(p, 3);
    n->args[0].v.node = p->nodes[4]->id;
    ls_program_touch(p);
    ck_assert_int_eq(ls_bb_encode(p, &b, &err), -1);
    ck_assert_msg(tu_contains(err.msg, "node aten_add_tensor uses node id 5, which is not defined before it"), "%s",
                  err.msg);
    ls_program_unref(p);

    /* a mutation of a buffer the submodule did not consume */
    p = kv_program();
    ls_output_spec outs[] = {out_spec(LS_OUT_BUFFER_MUTATION, "aten_index_put_default", "other"),
                             out_spec(LS_OUT_USER_OUTPUT, "aten_mm_default", NULL)};
    ls_program_set_outputs(p, outs, 2);
    ck_assert_int_eq(ls_bb_encode(p, &b, &err), -1);
    ck_assert_msg(tu_contains(err.msg, "output 0 mutates buffer 'other', which the submodule did not consume"), "%s",
                  err.msg);
    ls_program_unref(p);
}
END_TEST

/* Decodes a blob expected to be refused; the message must say what is wrong. */
static void refused(const ls_blob *b, const char *expect)
{
    ls_bb_graph *g = NULL;
    ls_error err = {{0}};
    int rc = ls_bb_decode(b, &g, &err);
    ck_assert_msg(rc == -1, "blob accepted, expected: %s", expect);
    ck_assert_ptr_null(g);
    ck_assert_msg(tu_contains(err.msg, expect), "expected '%s' in: %s", expect, err.msg);
}

static void put32(uint8_t *at, uint32_t v)
{
    for (int i = 0; i < 4; i++) at[i] = (uint8_t)(v >> (8 * i));
}

static void put64(uint8_t *at, uint64_t v)
{
    for (int i = 0; i < 8; i++) at[i] = (uint8_t)(v >> (8 * i));
}

static size_t find(const ls_blob *b, const char *s)
{
    size_t n = strlen(s);
    for (size_t i = 0; i + n <= b->size; i++)
        if (memcmp(b->data + i, s, n) == 0) return i;
    ck_abort_msg("'%s' not in the blob", s);
    return 0;
}

START_TEST(corrupted_blobs_are_refused_with_a_message)
{
    ls_program *p = chain_program();
    ls_blob *good = encode_ok(p);
    ls_blob *b;

    b = blob_copy(good, good->size);
    b->data[1] = 'X';
    refused(b, "bad magic");
    ls_blob_unref(b);

    b = blob_copy(good, good->size);
    put32(b->data + 4, 2);
    refused(b, "format version 2, this build reads version 1 only");
    ls_blob_unref(b);

    b = blob_copy(good, good->size - 1);
    refused(b, "truncated or padded");
    ls_blob_unref(b);
    b = blob_copy(good, 10);
    refused(b, "shorter than its 64-byte header");
    ls_blob_unref(b);

    b = blob_copy(good, good->size);
    b->data[b->size - 1] ^= 1; /* a byte of tensor data */
    refused(b, "checksum mismatch");
    ls_blob_unref(b);

    /* Past the checksum (resealed): the structure itself is checked. */
    b = blob_copy(good, good->size);
    put64(b->data + 32, 1u << 30); /* graph section larger than the blob */
    ls_bb_seal(b);
    refused(b, "graph section at 64");
    ls_blob_unref(b);

    b = blob_copy(good, good->size);
    put64(b->data + 40, 65); /* misaligned data section */
    ls_bb_seal(b);
    refused(b, "data section at 65");
    ls_blob_unref(b);

    b = blob_copy(good, good->size);
    memcpy(b->data + find(b, "aten.add.Tensor"), "aten.adX", 8);
    ls_bb_seal(b);
    refused(b, "node aten_add_tensor: unknown operator 'aten.adX.Tensor'");
    ls_blob_unref(b);

    /* the first add's first argument (x, node 2) made to point at node 4 (itself) */
    b = blob_copy(good, good->size);
    size_t at = find(b, "aten.add.Tensor") + strlen("aten.add.Tensor") + 2 /* nargs */ + 2 /* kind, flags */;
    ck_assert_uint_eq(b->data[at], 2);
    put32(b->data + at, 3);
    ls_bb_seal(b);
    refused(b, "node reference 3 is not a node defined before this one (3 are)");
    ls_blob_unref(b);

    /* the first constant ("c", float32[2, 3]) claims 25 bytes, then a size of 1000 */
    size_t entry = 64 + 4 + strlen("lowered_module_0") + 1 + 5 * 4; /* name, dialect, counts */
    ck_assert_mem_eq(good->data + entry + 4, "c", 1);
    size_t sizes_at = entry + 4 + 1 + 2, nbytes_at = sizes_at + 2 * 8 + 8;
    b = blob_copy(good, good->size);
    put64(b->data + nbytes_at, 25);
    ls_bb_seal(b);
    refused(b, "tensor 'c' is float32[2, 3] (24 bytes) but its data is 25 bytes");
    ls_blob_unref(b);
    b = blob_copy(good, good->size);
    put64(b->data + nbytes_at - 8, 128); /* offset: past the 128-byte data section */
    ls_bb_seal(b);
    refused(b, "tensor 'c': bytes 128..152 lie outside the 128-byte data section");
    ls_blob_unref(b);
    b = blob_copy(good, good->size);
    put64(b->data + sizes_at, (uint64_t)1 << 62);
    ls_bb_seal(b);
    refused(b, "more than the 128 bytes allowed");
    ls_blob_unref(b);
    /* a huge count must be refused before anything is allocated */
    b = blob_copy(good, good->size);
    put32(b->data + entry - 20, 0xFFFFFFFFu);
    ls_bb_seal(b);
    refused(b, "4294967295 constants cannot fit");
    ls_blob_unref(b);

    ls_blob_unref(good);
    ls_program_unref(p);
}
END_TEST

/* Every byte of the graph section altered (and the blob resealed) and every truncation: the
 * decoder fails with a "bundled blob:" message or decodes something consistent; it never
 * crashes or reads out of bounds (this suite runs under ASan too). */
START_TEST(altered_blobs_never_crash_the_decoder)
{
    ls_program *progs[] = {chain_program(), kv_program(), mask_program()};
    static const uint8_t values[] = {0x00, 0xFF, 0x01, 0x80, 0x7F};
    uint64_t rng = 0x9E3779B97F4A7C15u;
    for (int pi = 0; pi < 3; pi++) {
        ls_blob *good = encode_ok(progs[pi]);
        uint64_t gsize = 0;
        for (int i = 0; i < 8; i++) gsize |= (uint64_t)good->data[32 + i] << (8 * i);
        int refused_count = 0, tries = 0;
        for (size_t at = 64; at < 64 + gsize; at++) {
            for (size_t v = 0; v < sizeof values; v++) {
                if (good->data[at] == values[v]) continue;
                ls_blob *b = blob_copy(good, good->size);
                b->data[at] = values[v];
                ls_bb_seal(b);
                ls_bb_graph *g = NULL;
                ls_error err = {{0}};
                tries++;
                if (ls_bb_decode(b, &g, &err) != 0) {
                    ck_assert_msg(strncmp(err.msg, "bundled blob: ", 14) == 0, "%s", err.msg);
                    refused_count++;
                } else {
                    ls_bb_graph_free(g);
                }
                ls_blob_unref(b);
            }
        }
        ck_assert_int_gt(refused_count, tries / 2);
        for (int it = 0; it < 1500; it++) { /* several random bytes at once */
            ls_blob *b = blob_copy(good, good->size);
            int k = 1 + (int)(rng % 4);
            for (int j = 0; j < k; j++) {
                rng = rng * 6364136223846793005u + 1442695040888963407u;
                b->data[64 + (rng >> 33) % gsize] = (uint8_t)(rng >> 17);
            }
            ls_bb_seal(b);
            ls_bb_graph *g = NULL;
            ls_error err;
            if (ls_bb_decode(b, &g, &err) == 0) ls_bb_graph_free(g);
            ls_blob_unref(b);
        }
        for (size_t len = 0; len < good->size; len++) { /* truncated, header patched to match */
            ls_blob *b = blob_copy(good, len);
            if (len >= 64) {
                put64(b->data + 16, len);
                if (len < 64 + gsize) put64(b->data + 32, len - 64);
                ls_bb_seal(b);
            }
            ls_bb_graph *g = NULL;
            ls_error err;
            ck_assert_int_eq(ls_bb_decode(b, &g, &err), -1);
            ls_blob_unref(b);
        }
        ls_blob_unref(good);
        ls_program_unref(progs[pi]);
    }
}
END_TEST

/* ---- the backend through the registry: preprocess → init → execute → destroy */

static const ls_backend *bundled(void)
{
    const ls_backend *b = ls_backend_find("BundledBackend");
    ck_assert_ptr_nonnull(b);
    return b;
}

static void *init_ok(const ls_program *p, ls_blob **blob)
{
    const ls_backend *be = bundled();
    ls_compile_spec *specs = (ls_compile_spec *)1;
    uint32_t nspecs = 7;
    ls_error err = {{0}};
    ck_assert_msg(be->preprocess(p, blob, &specs, &nspecs, &err) == 0, "%s", err.msg);
    ck_assert_ptr_null(specs);
    ck_assert_uint_eq(nspecs, 0);
    void *h = NULL;
    ck_assert_msg(be->init(*blob, NULL, 0, &h, &err) == 0, "%s", err.msg);
    ck_assert_ptr_nonnull(h);
    return h;
}

static void release_all(ls_value *v, uint32_t n)
{
    for (uint32_t i = 0; i < n; i++) ls_value_release(&v[i]);
    free(v);
}

START_TEST(registry_finds_backends_by_id)
{
    const ls_backend *b = ls_backend_find("BundledBackend");
    ck_assert_ptr_eq(b, &ls_bundled_backend);
    ck_assert_ptr_eq(ls_backend_find("BundledBackend"), b);
    ck_assert_str_eq(b->id, "BundledBackend");
    ck_assert_ptr_null(ls_backend_find("XnnpackBackend"));
    ck_assert_ptr_null(ls_backend_find(NULL));
    static const ls_backend fake = {.id = "TestFakeBackend"}, fake2 = {.id = "TestFakeBackend"};
    ls_backend_register(&fake);
    ck_assert_ptr_eq(ls_backend_find("TestFakeBackend"), &fake);
    ls_backend_register(&fake2); /* same id: replaces */
    ck_assert_ptr_eq(ls_backend_find("TestFakeBackend"), &fake2);
    ck_assert_ptr_eq(ls_backend_find("BundledBackend"), b);
}
END_TEST

START_TEST(chain_with_consumed_constants_runs)
{
    static const int64_t s23[] = {2, 3}, s32[] = {3, 2};
    ls_program *p = chain_program();
    ls_blob *blob;
    void *h = init_ok(p, &blob);
    const ls_backend *be = bundled();
    ck_assert_uint_eq(be->state_count(h), 0);
    const float xv[] = {0.5f, -1, 2, 0, 3, -4};
    ls_value in = ls_value_tensor(tensor_f32(2, s23, xv));
    ls_error err;
    for (int call = 0; call < 2; call++) {
        ls_value *out;
        uint32_t nout;
        ck_assert_msg(be->execute(h, &in, 1, &out, &nout, &err) == 0, "%s", err.msg);
        ck_assert_uint_eq(nout, 1);
        ck_assert_int_eq(out[0].kind, LS_V_TENSOR);
        ck_assert_int_eq(out[0].t->dtype, LS_DT_F32);
        ck_assert_int_eq(out[0].t->ndim, 2);
        for (int i = 0; i < 6; i++)
            ck_assert_double_eq_tol(ls_tensor_get_f64(out[0].t, i), xv[i] + (i + 1) + 10 * (i + 1), 1e-6);
        release_all(out, nout);
    }
    ls_value_release(&in);

    /* inputs are checked against what the blob declares, naming the input */
    ls_value *out = (ls_value *)1;
    uint32_t nout = 9;
    ck_assert_int_eq(be->execute(h, NULL, 0, &out, &nout, &err), -1);
    ck_assert_ptr_null(out);
    ck_assert_uint_eq(nout, 0);
    ck_assert_msg(tu_contains(err.msg, "BundledBackend: lowered_module_0: 0 inputs given, the delegate takes 1"), "%s",
                  err.msg);
    ls_value bad = ls_value_tensor(ls_tensor_alloc(LS_DT_I64, 2, s23));
    ck_assert_int_eq(be->execute(h, &bad, 1, &out, &nout, &err), -1);
    ck_assert_msg(tu_contains(err.msg, "input 0 (x): expected float32[2, 3], got int64[2, 3]"), "%s", err.msg);
    ls_value_release(&bad);
    bad = ls_value_tensor(ls_tensor_alloc(LS_DT_F32, 2, s32));
    ck_assert_int_eq(be->execute(h, &bad, 1, &out, &nout, &err), -1);
    ck_assert_msg(tu_contains(err.msg, "input 0 (x): expected float32[2, 3], got float32[3, 2]"), "%s", err.msg);
    ls_value_release(&bad);
    bad = ls_value_int(3);
    ck_assert_int_eq(be->execute(h, &bad, 1, &out, &nout, &err), -1);
    ck_assert_msg(tu_contains(err.msg, "input 0 (x): expected float32[2, 3], got an int"), "%s", err.msg);

    be->destroy(h);
    ls_blob_unref(blob);
    ls_program_unref(p);
}
END_TEST

/* exir-semantics §9 test 10, called three times: the cache fills row by row inside the
 * delegate and the output is mm(cache, q^T) over the rows filled so far. */
START_TEST(state_lives_in_the_delegate_across_calls)
{
    static const int64_t s13[] = {1, 3}, s1[] = {1};
    ls_program *p = kv_program();
    ls_blob *blob;
    void *h = init_ok(p, &blob);
    const ls_backend *be = bundled();
    ck_assert_uint_eq(be->state_count(h), 1);
    ck_assert_str_eq(be->state_name(h, 0), "cache");
    ck_assert_ptr_null(be->state_name(h, 1));
    ck_assert_ptr_null(be->state_get(h, 1));
    const float qv[] = {1, 0.5f, 0.25f};
    ls_error err;
    for (int step = 0; step < 3; step++) {
        const float kv[] = {(float)(step + 1), 10.0f * (float)(step + 1), 100.0f * (float)(step + 1)};
        ls_tensor *pos = ls_tensor_alloc(LS_DT_I64, 1, s1);
        ((int64_t *)pos->data)[0] = step;
        ls_value in[3] = {ls_value_tensor(tensor_f32(2, s13, qv)), ls_value_tensor(tensor_f32(2, s13, kv)),
                          ls_value_tensor(pos)};
        ls_value *out;
        uint32_t nout;
        ck_assert_msg(be->execute(h, in, 3, &out, &nout, &err) == 0, "step %d: %s", step, err.msg);
        ck_assert_uint_eq(nout, 1); /* the mutation stays inside: user outputs only */
        ck_assert_int_eq(out[0].t->ndim, 2);
        ck_assert_int_eq(out[0].t->sizes[0], 4);
        ck_assert_int_eq(out[0].t->sizes[1], 1);
        const ls_tensor *cache = be->state_get(h, 0);
        ck_assert_int_eq(cache->numel, 12);
        for (int r = 0; r < 4; r++) {
            double row_dot = r <= step ? (r + 1) * (1 * 1 + 10 * 0.5 + 100 * 0.25) : 0;
            ck_assert_double_eq_tol(ls_tensor_get_f64(out[0].t, r), row_dot, 1e-4);
            for (int c = 0; c < 3; c++) {
                double want = r <= step ? (r + 1) * (c == 0 ? 1 : c == 1 ? 10 : 100) : 0;
                ck_assert_double_eq_tol(ls_tensor_get_f64(cache, r * 3 + c), want, 1e-6);
            }
        }
        release_all(out, nout);
        for (int i = 0; i < 3; i++) ls_value_release(&in[i]);
    }
    /* A second handle from the same blob starts from the initial value: the blob is unchanged. */
    void *h2 = NULL;
    ck_assert_int_eq(be->init(blob, NULL, 0, &h2, &err), 0);
    for (int i = 0; i < 12; i++) ck_assert_double_eq(ls_tensor_get_f64(be->state_get(h2, 0), i), 0);
    ck_assert_double_eq(ls_tensor_get_f64(be->state_get(h, 0), 0), 1);
    be->destroy(h2);
    be->destroy(h);
    ls_blob_unref(blob);
    ls_program_unref(p);
}
END_TEST

/* Runs kv_program_with(true, inplace) for three steps and returns the cache output of each
 * (all kept alive until the end). */
static void run_cache_out(bool inplace, ls_tensor *seen[3])
{
    static const int64_t s13[] = {1, 3}, s1[] = {1};
    ls_program *p = kv_program_with(true, inplace);
    ls_blob *blob;
    void *h = init_ok(p, &blob);
    const ls_backend *be = bundled();
    ls_error err;
    for (int step = 0; step < 3; step++) {
        const float kv[] = {(float)(step + 1), (float)(step + 1), (float)(step + 1)};
        ls_tensor *pos = ls_tensor_alloc(LS_DT_I64, 1, s1);
        ((int64_t *)pos->data)[0] = step;
        ls_value in[3] = {ls_value_tensor(tensor_f32(2, s13, kv)), ls_value_tensor(tensor_f32(2, s13, kv)),
                          ls_value_tensor(pos)};
        ls_value *out;
        uint32_t nout;
        ck_assert_msg(be->execute(h, in, 3, &out, &nout, &err) == 0, "%s", err.msg);
        ck_assert_uint_eq(nout, 2);
        seen[step] = ls_tensor_ref(out[1].t);
        ck_assert_ptr_ne(seen[step], be->state_get(h, 0));
        release_all(out, nout);
        for (int i = 0; i < 3; i++) ls_value_release(&in[i]);
    }
    be->destroy(h);
    ls_blob_unref(blob);
    ls_program_unref(p);
}

/* Rows of a [4,3] cache that hold a value (row r holds r + 1 once written). */
static int rows_written(const ls_tensor *t)
{
    int n = 0;
    for (int r = 0; r < 4; r++) n += ls_tensor_get_f64(t, r * 3) == r + 1;
    return n;
}

START_TEST(outputs_never_alias_the_state)
{
    ls_tensor *seen[3];
    /* functional: the buffer's output is its value before the call's write */
    run_cache_out(false, seen);
    for (int step = 0; step < 3; step++) {
        ck_assert_int_eq(rows_written(seen[step]), step);
        ls_tensor_unref(seen[step]);
    }
    /* index_put_ writes the state in place: the buffer's output is the written value, and it does
     * not change with later calls */
    run_cache_out(true, seen);
    for (int step = 0; step < 3; step++) {
        ck_assert_int_eq(rows_written(seen[step]), step + 1);
        ls_tensor_unref(seen[step]);
    }
}
END_TEST

START_TEST(inplace_ops_never_write_the_blob)
{
    /* copy_(c, x) on a consumed constant: the handle's constant changes, the blob does not */
    static const int64_t s2[] = {2};
    static const float cv[] = {5, 7}, xv[] = {1, 2};
    ls_builder *b = ls_builder_new("lowered_module_0", LS_DIALECT_EDGE);
    uint32_t c = input(b, "c_c", LS_IN_CONSTANT_TENSOR, "c", tensor_f32(1, s2, cv));
    uint32_t x = user_input(b, "x", LS_DT_F32, 1, s2);
    ls_arg a1[] = {ls_arg_node(c), ls_arg_node(x), ls_arg_bool(false)};
    uint32_t cp = call(b, "aten_copy_default", LS_OP_copy_, a1, 3, LS_DT_F32, 1, s2);
    ls_arg a2[] = {ls_arg_node(cp), ls_arg_node(x), ls_arg_int(1)};
    uint32_t add = call(b, "aten_add_tensor", LS_OP_add_Tensor, a2, 3, LS_DT_F32, 1, s2);
    ls_build_output(b, &add, 1, NULL, NULL);
    ls_program *p = ls_builder_finish(b);
    ls_blob *blob;
    void *h = init_ok(p, &blob);
    ls_blob *before = blob_copy(blob, blob->size);
    const ls_backend *be = bundled();
    ls_value in = ls_value_tensor(tensor_f32(1, s2, xv)), *out;
    uint32_t nout;
    ls_error err;
    ck_assert_msg(be->execute(h, &in, 1, &out, &nout, &err) == 0, "%s", err.msg);
    ck_assert_double_eq(ls_tensor_get_f64(out[0].t, 1), 4);
    release_all(out, nout);
    ck_assert_mem_eq(blob->data, before->data, blob->size);
    ls_value_release(&in);
    be->destroy(h);
    ls_blob_unref(before);
    ls_blob_unref(blob);
    ls_program_unref(p);
}
END_TEST

START_TEST(boolean_gather_is_refused_at_execute_time)
{
    static const int64_t s4[] = {4}, s2[] = {2};
    ls_program *p = mask_program();
    ls_blob *blob;
    void *h = init_ok(p, &blob); /* lowering and loading accept it: MLX fails when it runs */
    const ls_backend *be = bundled();
    const float xv[] = {1, 2, 3, 4};
    ls_value in = ls_value_tensor(tensor_f32(1, s4, xv));
    ls_value *out;
    uint32_t nout;
    ls_error err;
    ck_assert_int_eq(be->execute(h, &in, 1, &out, &nout, &err), -1);
    ck_assert_str_eq(err.msg, "BundledBackend: lowered_module_1: node aten_index_tensor (aten.index.Tensor): "
                              "[Gather] Boolean indices not supported");
    be->destroy(h);
    ls_blob_unref(blob);

    /* the same gather with the mask folded to its integer positions (fold_masks) runs */
    ls_tensor *pos = ls_tensor_alloc(LS_DT_I64, 1, s2);
    ((int64_t *)pos->data)[0] = 0;
    ((int64_t *)pos->data)[1] = 2;
    ls_program_drop_constant(p, "mask");
    ls_program_put_constant(p, "mask", pos, NULL);
    ls_tensor_unref(pos);
    ls_tmeta m;
    ls_tmeta_init(&m, LS_DT_I64, 1, s2);
    ls_node_set_val(ls_program_edit(p, 0), &m);
    h = init_ok(p, &blob);
    ck_assert_msg(be->execute(h, &in, 1, &out, &nout, &err) == 0, "%s", err.msg);
    ck_assert_uint_eq(nout, 1);
    ck_assert_int_eq(out[0].t->numel, 2);
    ck_assert_double_eq(ls_tensor_get_f64(out[0].t, 0), 1);
    ck_assert_double_eq(ls_tensor_get_f64(out[0].t, 1), 3);
    release_all(out, nout);
    ls_value_release(&in);
    be->destroy(h);
    ls_blob_unref(blob);
    ls_program_unref(p);
}
END_TEST

START_TEST(preprocess_and_init_refuse_with_clear_messages)
{
    const ls_backend *be = bundled();
    ls_error err;
    ls_blob *blob = NULL;
    ls_compile_spec *specs;
    uint32_t nspecs;
    ls_program *p = kv_program();
    ls_output_spec outs[] = {out_spec(LS_OUT_BUFFER_MUTATION, "aten_index_put_default", "other"),
                             out_spec(LS_OUT_USER_OUTPUT, "aten_mm_default", NULL)};
    ls_program_set_outputs(p, outs, 2);
    ck_assert_int_eq(be->preprocess(p, &blob, &specs, &nspecs, &err), -1);
    ck_assert_msg(tu_contains(err.msg, "BundledBackend: preprocess lowered_module_0: output 0 mutates buffer 'other'"),
                  "%s", err.msg);
    ls_program_unref(p);

    p = kv_program();
    ls_blob *good = encode_ok(p);
    void *h = (void *)1;
    ls_blob *b = blob_copy(good, good->size - 7);
    ck_assert_int_eq(be->init(b, NULL, 0, &h, &err), -1);
    ck_assert_ptr_null(h);
    ck_assert_msg(tu_contains(err.msg, "BundledBackend: init: bundled blob: the header says"), "%s", err.msg);
    ls_blob_unref(b);
    ck_assert_int_eq(be->init(NULL, NULL, 0, &h, &err), -1);
    ck_assert_msg(tu_contains(err.msg, "never preprocessed"), "%s", err.msg);

    /* altered blobs (resealed) either fail at init or load and run or fail with a message */
    static const int64_t s13[] = {1, 3}, s1[] = {1};
    uint64_t gsize = 0;
    for (int i = 0; i < 8; i++) gsize |= (uint64_t)good->data[32 + i] << (8 * i);
    for (size_t at = 64; at < 64 + gsize; at++) {
        b = blob_copy(good, good->size);
        b->data[at] ^= 0x5A;
        ls_bb_seal(b);
        h = NULL;
        if (be->init(b, NULL, 0, &h, &err) == 0) {
            ls_value in[3] = {ls_value_tensor(tensor_f32(2, s13, NULL)), ls_value_tensor(tensor_f32(2, s13, NULL)),
                              ls_value_tensor(ls_tensor_alloc(LS_DT_I64, 1, s1))};
            ls_value *out;
            uint32_t nout;
            if (be->execute(h, in, 3, &out, &nout, &err) == 0) release_all(out, nout);
            for (int i = 0; i < 3; i++) ls_value_release(&in[i]);
            be->destroy(h);
        } else {
            ck_assert_msg(strncmp(err.msg, "BundledBackend: init", 20) == 0, "%s", err.msg);
        }
        ls_blob_unref(b);
    }
    ls_blob_unref(good);
    ls_program_unref(p);
}
END_TEST

Suite *bundled_backend_suite(void)
{
    Suite *s = suite_create("bundled_backend");
    TCase *tc = tcase_create("blob");
    tcase_set_timeout(tc, 60);
    tcase_add_test(tc, blob_round_trip_keeps_graph_and_data);
    tcase_add_test(tc, builder_guard_refuses_second_placeholder_for_a_target);
    tcase_add_test(tc, writer_refuses_what_it_cannot_carry);
    tcase_add_test(tc, corrupted_blobs_are_refused_with_a_message);
    tcase_add_test(tc, altered_blobs_never_crash_the_decoder);
    suite_add_tcase(s, tc);
    TCase *be = tcase_create("backend");
    tcase_set_timeout(be, 60);
    tcase_add_test(be, registry_finds_backends_by_id);
    tcase_add_test(be, chain_with_consumed_constants_runs);
    tcase_add_test(be, state_lives_in_the_delegate_across_calls);
    tcase_add_test(be, outputs_never_alias_the_state);
    tcase_add_test(be, inplace_ops_never_write_the_blob);
    tcase_add_test(be, boolean_gather_is_refused_at_execute_time);
    tcase_add_test(be, preprocess_and_init_refuse_with_clear_messages);
    suite_add_tcase(s, be);
    return s;
}
