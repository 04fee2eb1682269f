/* Tests of the bundled delegate's blob: round trip, the builder guard, what the writer refuses,
 * corrupted and altered blobs refused with a message and never a crash. The submodule programs
 * (progfixtures.h) are shaped as to_backend leaves them (exir-semantics §6). */
#include <check.h>
#include <stdlib.h>
#include <string.h>

#include "backend.h"
#include "bundled_blob.h"
#include "xnnpack_blob.h"
#include "progfixtures.h"
#include "testutil.h"

START_TEST(blob_round_trip_keeps_graph_and_data)
{
    ls_program *p = pf_kv_program(false, false);
    ls_blob *b = pf_encode(p);
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
    p = pf_chain_program();
    b = pf_encode(p);
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
    ls_tensor *t = pf_f32(1, s2, NULL);
    uint32_t k0 = ls_build_input(bld, "c_k", LS_IN_CONSTANT_TENSOR, "k", true, NULL, t);
    uint32_t k1 = ls_build_input(bld, "c_k_copy_0", LS_IN_CONSTANT_TENSOR, "k", true, NULL, t);
    ls_tensor_unref(t);
    uint32_t x = pf_user_input(bld, "x", LS_DT_F32, 1, s2);
    ls_arg a1[] = {ls_arg_node(x), ls_arg_node(k0), ls_arg_int(1)};
    uint32_t s = pf_call(bld, "aten_add_tensor", LS_OP_add_Tensor, a1, 3, LS_DT_F32, 1, s2);
    ls_arg a2[] = {ls_arg_node(s), ls_arg_node(k1)};
    uint32_t m = pf_call(bld, "aten_mul_tensor", LS_OP_mul_Tensor, a2, 2, LS_DT_F32, 1, s2);
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
    ls_program *p = pf_chain_program();
    ls_program_put_constant(p, "c", NULL, ls_program_constant(p, "c")->meta);
    ck_assert_int_eq(ls_bb_encode(p, &b, &err), -1);
    ck_assert_msg(tu_contains(err.msg, "placeholder c_c: 'c' has no data"), "%s", err.msg);
    ls_program_unref(p);

    /* data that does not match the placeholder */
    p = pf_chain_program();
    static const int64_t s3[] = {3};
    ls_tensor *t = pf_f32(1, s3, NULL);
    ls_program_put_state(p, "w", t, NULL);
    ls_tensor_unref(t);
    ck_assert_int_eq(ls_bb_encode(p, &b, &err), -1);
    ck_assert_msg(tu_contains(err.msg, "placeholder p_w declares float32[2, 3] but 'w' holds float32[3]"), "%s", err.msg);
    ls_program_unref(p);

    /* an unknown op */
    p = pf_chain_program();
    ls_node *n = ls_program_edit(p, 3);
    n->op = NULL;
    n->target = ls_intern("torch.ops.mylib.frob.default");
    ck_assert_int_eq(ls_bb_encode(p, &b, &err), -1);
    ck_assert_msg(tu_contains(err.msg, "node aten_add_tensor: unknown operator torch.ops.mylib.frob.default"), "%s",
                  err.msg);
    ls_program_unref(p);

    /* a reference to a node defined later */
    p = pf_chain_program();
    n = ls_program_edit(p, 3);
    n->args[0].v.node = p->nodes[4]->id;
    ls_program_touch(p);
    ck_assert_int_eq(ls_bb_encode(p, &b, &err), -1);
    ck_assert_msg(tu_contains(err.msg, "node aten_add_tensor uses node id 5, which is not defined before it"), "%s",
                  err.msg);
    ls_program_unref(p);

    /* a mutation of a buffer the submodule did not consume */
    p = pf_kv_program(false, false);
    ls_output_spec outs[] = {pf_out_spec(LS_OUT_BUFFER_MUTATION, "aten_index_put_default", "other"),
                             pf_out_spec(LS_OUT_USER_OUTPUT, "aten_mm_default", NULL)};
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
    ls_error err = {0};
    int rc = ls_bb_decode(b, &g, &err);
    ck_assert_msg(rc == -1, "blob accepted, expected: %s", expect);
    ck_assert_ptr_null(g);
    ck_assert_msg(tu_contains(err.msg, expect), "expected '%s' in: %s", expect, err.msg);
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
    ls_program *p = pf_chain_program();
    ls_blob *good = pf_encode(p);
    ls_blob *b;

    b = pf_blob_copy(good, good->size);
    b->data[1] = 'X';
    refused(b, "bad magic");
    ls_blob_unref(b);

    b = pf_blob_copy(good, good->size);
    ls_le_put(b->data + 4, 2, 4);
    refused(b, "format version 2, this build reads version 1 only");
    ls_blob_unref(b);

    b = pf_blob_copy(good, good->size - 1);
    refused(b, "truncated or padded");
    ls_blob_unref(b);
    b = pf_blob_copy(good, 10);
    refused(b, "shorter than its 64-byte header");
    ls_blob_unref(b);

    b = pf_blob_copy(good, good->size);
    b->data[b->size - 1] ^= 1; /* a byte of tensor data */
    refused(b, "checksum mismatch");
    ls_blob_unref(b);

    /* Past the checksum (resealed): the structure itself is checked. */
    b = pf_blob_copy(good, good->size);
    ls_le_put(b->data + 32, 1u << 30, 8); /* graph section larger than the blob */
    ls_bb_seal(b);
    refused(b, "graph section at 64");
    ls_blob_unref(b);

    b = pf_blob_copy(good, good->size);
    ls_le_put(b->data + 40, 65, 8); /* misaligned data section */
    ls_bb_seal(b);
    refused(b, "data section at 65");
    ls_blob_unref(b);

    b = pf_blob_copy(good, good->size);
    memcpy(b->data + find(b, "aten.add.Tensor"), "aten.adX", 8);
    ls_bb_seal(b);
    refused(b, "node aten_add_tensor: unknown operator 'aten.adX.Tensor'");
    ls_blob_unref(b);

    /* the first add's first argument (x, node 2) made to point at node 4 (itself) */
    b = pf_blob_copy(good, good->size);
    size_t at = find(b, "aten.add.Tensor") + strlen("aten.add.Tensor") + 2 /* nargs */ + 2 /* kind, flags */;
    ck_assert_uint_eq(b->data[at], 2);
    ls_le_put(b->data + at, 3, 4);
    ls_bb_seal(b);
    refused(b, "node reference 3 is not a node defined before this one (3 are)");
    ls_blob_unref(b);

    /* the first constant ("c", float32[2, 3]) claims 25 bytes, then a size of 1000 */
    size_t entry = 64 + 4 + strlen("lowered_module_0") + 1 + 5 * 4; /* name, dialect, counts */
    ck_assert_mem_eq(good->data + entry + 4, "c", 1);
    size_t sizes_at = entry + 4 + 1 + 2, nbytes_at = sizes_at + 2 * 8 + 8;
    b = pf_blob_copy(good, good->size);
    ls_le_put(b->data + nbytes_at, 25, 8);
    ls_bb_seal(b);
    refused(b, "tensor 'c' is float32[2, 3] (24 bytes) but its data is 25 bytes");
    ls_blob_unref(b);
    b = pf_blob_copy(good, good->size);
    ls_le_put(b->data + nbytes_at - 8, 128, 8); /* offset: past the 128-byte data section */
    ls_bb_seal(b);
    refused(b, "tensor 'c': bytes 128..152 lie outside the 128-byte data section");
    ls_blob_unref(b);
    b = pf_blob_copy(good, good->size);
    ls_le_put(b->data + sizes_at, (uint64_t)1 << 62, 8);
    ls_bb_seal(b);
    refused(b, "more than the 128 bytes allowed");
    ls_blob_unref(b);
    /* a huge count must be refused before anything is allocated */
    b = pf_blob_copy(good, good->size);
    ls_le_put(b->data + entry - 20, 0xFFFFFFFFu, 4);
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
    ls_program *progs[] = {pf_chain_program(), pf_kv_program(false, false), pf_mask_program()};
    static const uint8_t values[] = {0x00, 0xFF, 0x01, 0x80, 0x7F};
    uint64_t rng = 0x9E3779B97F4A7C15u;
    for (int pi = 0; pi < 3; pi++) {
        ls_blob *good = pf_encode(progs[pi]);
        uint64_t gsize = 0;
        for (int i = 0; i < 8; i++) gsize |= (uint64_t)good->data[32 + i] << (8 * i);
        int refused_count = 0, tries = 0;
        for (size_t at = 64; at < 64 + gsize; at++) {
            for (size_t v = 0; v < sizeof values; v++) {
                if (good->data[at] == values[v]) continue;
                ls_blob *b = pf_blob_copy(good, good->size);
                b->data[at] = values[v];
                ls_bb_seal(b);
                ls_bb_graph *g = NULL;
                ls_error err = {0};
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
            ls_blob *b = pf_blob_copy(good, good->size);
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
            ls_blob *b = pf_blob_copy(good, len);
            if (len >= 64) {
                ls_le_put(b->data + 16, len, 8);
                if (len < 64 + gsize) ls_le_put(b->data + 32, len - 64, 8);
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

/* A backend lowerscope does not have is stood in for by the bundled delegate: always when
 * preprocessing, at load only for a blob in the bundled format. */
START_TEST(unknown_backends_are_stood_in_for_only_with_a_bundled_blob)
{
    bool sim = false;
    ck_assert_ptr_eq(ls_backend_resolve("BundledBackend", NULL, &sim), &ls_bundled_backend);
    ck_assert(!sim);
    ck_assert_ptr_eq(ls_backend_resolve("CoreMLBackend", NULL, &sim), &ls_bundled_backend);
    ck_assert(sim);
    ls_program *p = pf_chain_program();
    ls_blob *ours = pf_encode(p);
    ck_assert_ptr_eq(ls_backend_resolve("CoreMLBackend", ours, &sim), &ls_bundled_backend);
    ck_assert(sim);
    ls_blob *theirs = ls_blob_new(64);
    memcpy(theirs->data, "XN00", 4);
    ck_assert_ptr_null(ls_backend_resolve("CoreMLBackend", theirs, &sim));
    ls_blob *tiny = ls_blob_new(2);
    ck_assert_ptr_null(ls_backend_resolve("CoreMLBackend", tiny, &sim));
    /* XnnpackBackend is here: it runs its own blobs; a bundled blob under its id still goes to
     * the bundled delegate (what lowerscope wrote for it before it had XNNPACK's format) */
    ck_assert_ptr_eq(ls_backend_resolve("XnnpackBackend", theirs, &sim), &ls_xnnpack_backend);
    ck_assert(!sim);
    ck_assert_ptr_eq(ls_backend_resolve("XnnpackBackend", ours, &sim), &ls_bundled_backend);
    ck_assert(sim);
    ls_blob_unref(tiny);
    ls_blob_unref(theirs);
    ls_blob_unref(ours);
    ls_program_unref(p);
}
END_TEST

Suite *bundled_blob_suite(void)
{
    Suite *s = suite_create("bundled_blob");
    TCase *tc = tcase_create("blob");
    tcase_set_timeout(tc, 60);
    tcase_add_test(tc, blob_round_trip_keeps_graph_and_data);
    tcase_add_test(tc, unknown_backends_are_stood_in_for_only_with_a_bundled_blob);
    tcase_add_test(tc, builder_guard_refuses_second_placeholder_for_a_target);
    tcase_add_test(tc, writer_refuses_what_it_cannot_carry);
    tcase_add_test(tc, corrupted_blobs_are_refused_with_a_message);
    tcase_add_test(tc, altered_blobs_never_crash_the_decoder);
    suite_add_tcase(s, tc);
    return s;
}
