/* The .pt2 writer: every step of every sample before to_backend written as a torch.export
 * archive reads back node for node (names, ops, args, values, signature), and a lowered step is
 * refused saying why (torch.export's JSON cannot express a lowered module). */
#include <check.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "export.h"
#include "progfixtures.h"
#include "pte_test.h"
#include "reader.h"
#include "testutil.h"

/* Node by node: same names, ops, args and values, apart from what torch.export's JSON does not
 * keep (placeholder tags; getitems torch adds for outputs nothing reads). */
static void same_program(const char *what, const ls_program *a, const ls_program *b)
{
    uint32_t j = 0;
    for (uint32_t i = 0; i < a->n_nodes; i++, j++) {
        while (j < b->n_nodes && strstr(b->nodes[j]->name, "_unused_")) j++;
        ck_assert_msg(j < b->n_nodes, "%s: %s is missing", what, a->nodes[i]->name);
        const ls_node *x = a->nodes[i], *y = b->nodes[j];
        ck_assert_msg(x->name == y->name && x->kind == y->kind && x->op == y->op && x->nargs == y->nargs,
                      "%s: %s against %s", what, x->name, y->name);
        if (x->kind != LS_NODE_PLACEHOLDER) ck_assert_msg(x->tag == y->tag, "%s: %s: tag", what, x->name);
        ck_assert_msg(x->val_kind == y->val_kind && x->nvals == y->nvals, "%s: %s: value", what, x->name);
        for (uint16_t k = 0; k < x->nvals; k++) ck_assert(ls_tmeta_equal(&x->vals[k], &y->vals[k]));
        for (uint16_t k = 0; k < x->nargs; k++) {
            ls_arg u = x->args[k], v = y->args[k];
            if (u.kind == LS_ARG_NODE && v.kind == LS_ARG_NODE) { /* ids differ; names must not */
                ck_assert_ptr_eq(ls_program_node(a, u.v.node)->name, ls_program_node(b, v.v.node)->name);
                continue;
            }
            if (u.kind == LS_ARG_NODES || u.kind == LS_ARG_OPT_NODES) continue;
            ck_assert_msg(ls_arg_equal(&u, &v), "%s: %s argument %u", what, x->name, k);
        }
    }
    ck_assert_uint_eq(a->n_inputs, b->n_inputs);
    for (uint32_t i = 0; i < a->n_inputs; i++) {
        ck_assert_ptr_eq(a->inputs[i].name, b->inputs[i].name);
        ck_assert_int_eq(a->inputs[i].kind, b->inputs[i].kind);
        ck_assert_ptr_eq(a->inputs[i].target, b->inputs[i].target);
        const ls_named_tensor *ea = ls_program_spec_data(a, &a->inputs[i]), *eb = ls_program_spec_data(b, &b->inputs[i]);
        ck_assert((ea == NULL) == (eb == NULL));
        if (ea && ea->t) ck_assert(ls_tensor_equal(ea->t, eb->t));
    }
    ck_assert_uint_eq(a->n_outputs, b->n_outputs);
    for (uint32_t i = 0; i < a->n_outputs; i++) {
        ck_assert_int_eq(a->outputs[i].kind, b->outputs[i].kind);
        ck_assert_ptr_eq(a->outputs[i].name, b->outputs[i].name);
        ck_assert_ptr_eq(a->outputs[i].target, b->outputs[i].target);
    }
}

START_TEST(pt2_round_trip)
{
    const char *dir = tu_tmpdir();
    for (size_t k = 0; k < PF_N_SAMPLES; k++) {
        ls_program *p = pf_sample(pf_samples[k].name);
        ls_history h;
        pf_lower(p, NULL, &h);
        for (uint32_t s = 0; s < h.n; s++) {
            char path[512];
            snprintf(path, sizeof path, "%s/%s_%u.pt2", dir, pf_samples[k].name, s);
            ls_export_summary sum;
            ls_error err;
            int rc = ls_export(&h, (int)s, path, true, &sum, &err);
            bool lowered = h.steps[s].program->n_subs > 0;
            if (lowered) { /* refused, saying why */
                ck_assert_int_ne(rc, 0);
                ck_assert_msg(tu_contains(err.msg, "torch.export's JSON cannot express") &&
                                  tu_contains(err.msg, h.steps[s].pass),
                              "%s", err.msg);
                continue;
            }
            ck_assert_msg(rc == 0, "%s step %u: %s", pf_samples[k].name, s, err.msg);
            ck_assert(sum.pt2);
            ls_export_summary_free(&sum);
            ls_program *back;
            ck_assert_msg(ls_load(path, NULL, &back, &err) == 0, "%s", err.msg);
            char what[160];
            snprintf(what, sizeof what, "%s step %u (%s)", pf_samples[k].name, s, h.steps[s].pass);
            same_program(what, h.steps[s].program, back);
            ls_program_unref(back);
        }
        ls_history_free(&h);
        ls_program_unref(p);
    }
    /* the members of torch.export.save's layout, data 64-byte aligned */
    char path[512];
    snprintf(path, sizeof path, "%s/kv.pt2", dir);
    char *out = NULL;
    ck_assert_int_eq(tu_runf(&out, "export %s -o %s --step to_edge", tu_root("samples/kv_cache.pt2"), path), 0);
    free(out);
    size_t size;
    uint8_t *d = pt_load(path, &size);
    const char *want[] = {"kv/data/weights/weight_0",  "kv/data/weights/model_weights_config.json",
                          "kv/data/constants/model_constants_config.json", "kv/models/model.json",
                          "kv/archive_format",         "kv/archive_version",
                          "kv/.data/version",          "kv/byteorder",
                          "kv/.data/serialization_id"};
    size_t off = 0, m = 0;
    while (off + 30 <= size && pt_le(d + off, 4) == 0x04034b50) {
        size_t nl = pt_le(d + off + 26, 2), el = pt_le(d + off + 28, 2), cs = pt_le(d + off + 18, 4);
        ck_assert_uint_eq(pt_le(d + off + 8, 2), 0); /* stored */
        ck_assert_msg(m < 9 && strlen(want[m]) == nl && memcmp(d + off + 30, want[m], nl) == 0, "member %zu", m);
        ck_assert_uint_eq((off + 30 + nl + el) % 64, 0);
        off += 30 + nl + el + cs;
        m++;
    }
    ck_assert_uint_eq(m, 9);
    free(d);
}
END_TEST

Suite *export_pt2_suite(void)
{
    Suite *s = suite_create("export_pt2");
    TCase *tc = tcase_create("pt2");
    tcase_set_timeout(tc, 300);
    tcase_add_test(tc, pt2_round_trip);
    suite_add_tcase(s, tc);
    return s;
}
