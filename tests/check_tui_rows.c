/* The rows a step derives for the UI, against their definitions: the groups of rows the
 * filters show (row_index.c) are, for every sample, backend, step, scope and key, exactly the
 * rows that the filter's test lets through, in row order: by tag the rows whose node has the
 * tag or calls a module lowered from it, the CPU's the calls with neither, by op the rows of
 * that op text. And the UI's reading of escape sequences its terminfo does not list. */
#include <check.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "progfixtures.h"
#include "testutil.h"
#include "../views/ui.h"

typedef struct coverage {
    uint32_t tags, rows, delegate_rows, removed_rows, cpu_rows, ops;
} coverage;

/* The definition, one row at a time (what the filter tested per row before the index). */
static bool row_has_tag(ui_derive *d, const ui_step_rows *sr, uint32_t r, const char *tag, coverage *c)
{
    ui_row row = ui_rows_at(sr, r);
    const ls_program *p = row.mark == UI_MARK_REMOVED ? sr->prev : sr->prog;
    const char *sub = ui_delegate_sub(p, row.node);
    bool by_sub = sub && ui_derive_sub_tag(d, p, sub) == tag;
    if (row.node->tag != tag && !by_sub) return false;
    c->delegate_rows += by_sub;
    c->removed_rows += row.mark == UI_MARK_REMOVED;
    return true;
}

static bool row_on_cpu(const ui_step_rows *sr, uint32_t r)
{
    ui_row row = ui_rows_at(sr, r);
    const ls_program *p = row.mark == UI_MARK_REMOVED ? sr->prev : sr->prog;
    return !row.node->tag && !ui_delegate_sub(p, row.node) && row.node->kind == LS_NODE_CALL;
}

static const char *row_op(const ui_step_rows *sr, uint32_t r)
{
    ui_row row = ui_rows_at(sr, r);
    return ui_node_op(row.mark == UI_MARK_REMOVED ? sr->prev : sr->prog, row.node);
}

/* A group against its definition, a row at a time. */
static void check_group(const ui_row_groups *g, const void *key, const ui_step_rows *sr, bool (*has)(const ui_step_rows *, uint32_t, const void *),
                        const void *arg, const char *what)
{
    const uint32_t *rows;
    uint32_t n = ui_row_groups_of(g, key, &rows), k = 0;
    for (uint32_t r = 0; r < sr->n_rows; r++) {
        if (!has(sr, r, arg)) continue;
        ck_assert_msg(k < n && rows[k] == r, "%s: row %u is missing (%u of %u)", what, r, k, n);
        k++;
    }
    ck_assert_msg(k == n, "%s: %u rows in the group, %u pass", what, n, k);
}

static bool cpu_has(const ui_step_rows *sr, uint32_t r, const void *arg)
{
    (void)arg;
    return row_on_cpu(sr, r);
}

static bool op_is(const ui_step_rows *sr, uint32_t r, const void *op)
{
    return row_op(sr, r) == op;
}

static void check_scope(ui_derive *d, const ls_history *h, uint32_t step, const ls_program *p, const ls_program *prev,
                        const char *scope, coverage *c)
{
    ui_part cpu = {.name = scope ? scope : "CPU", .color = -1};
    ui_step_rows *sr = ui_rows_build(d, h, step, p, prev, scope, &cpu);
    for (uint32_t t = 0; t < d->tags.n; t++) {
        const char *tag = d->tags.tags[t];
        const uint32_t *rows;
        uint32_t n = ui_row_groups_of(&sr->by_tag, tag, &rows), k = 0;
        for (uint32_t r = 0; r < sr->n_rows; r++) {
            if (!row_has_tag(d, sr, r, tag, c)) continue;
            ck_assert_msg(k < n && rows[k] == r, "step %u %s, tag %s: row %u is missing from the index (%u of %u)", step,
                          scope ? scope : "top", tag, r, k, n);
            k++;
        }
        ck_assert_msg(k == n, "step %u, tag %s: %u rows indexed, %u have the tag", step, tag, n, k);
        c->tags += n > 0;
        c->rows += n;
    }
    const uint32_t *none;
    ck_assert_uint_eq(ui_row_groups_of(&sr->by_tag, ls_intern("no such tag"), &none), 0);
    check_group(&sr->by_tag, ui_cpu_rows_key, sr, cpu_has, NULL, "the CPU's rows");
    c->cpu_rows += ui_row_groups_of(&sr->by_tag, ui_cpu_rows_key, &none);
    /* every op: its group holds the rows of that text's pointer, and the groups whose text a
     * filter by it matches hold, together, the rows whose op text it matches */
    uint32_t in_ops = 0;
    for (uint32_t k = 0; k < sr->by_op.n; k++) {
        const char *op = sr->by_op.keys[k];
        check_group(&sr->by_op, op, sr, op_is, op, op);
        uint32_t matched = 0, want = 0;
        for (uint32_t j = 0; j < sr->by_op.n; j++)
            if (ui_op_matches(sr->by_op.keys[j], op)) matched += sr->by_op.start[j + 1] - sr->by_op.start[j];
        for (uint32_t r = 0; r < sr->n_rows; r++) want += ui_op_matches(row_op(sr, r), op);
        ck_assert_uint_eq(matched, want);
        in_ops += sr->by_op.start[k + 1] - sr->by_op.start[k];
    }
    ck_assert_uint_eq(in_ops, sr->n_rows); /* each row has one op */
    c->ops += sr->by_op.n;
    uint32_t in_tags = 0;
    for (uint32_t k = 0; k < sr->by_tag.n; k++) in_tags += sr->by_tag.keys[k] != ui_cpu_rows_key;
    ck_assert_uint_le(in_tags, d->tags.n); /* every other group is some tag's */
    ui_rows_free(sr);
}

static void check_history(const ls_history *h, coverage *c)
{
    ui_derive d = {0};
    for (uint32_t s = 0; s < h->n; s++) {
        const ls_program *p = h->steps[s].program, *prev = s ? h->steps[s - 1].program : NULL;
        ui_derive_tags(&d, p, NULL);
        check_scope(&d, h, s, p, prev, NULL, c);
        for (uint32_t i = 0; i < p->n_subs; i++) {
            const ls_submodule *sub = &p->subs[i];
            if (!sub->program) continue;
            const ls_submodule *before = prev ? ls_program_sub(prev, sub->name) : NULL;
            check_scope(&d, h, s, sub->program, before ? before->program : NULL, sub->name, c);
        }
    }
    ui_derive_free(&d);
}

START_TEST(row_groups_are_the_rows_each_filter_lets_through)
{
    const char *backends[] = {NULL, "xnnpack", "samples/backends/arith.json"};
    coverage c = {0};
    for (int i = 0; i < PF_N_SAMPLES; i++)
        for (int b = 0; b < 3; b++) {
            ls_program *p = pf_sample(pf_samples[i].name);
            ls_history h = {0};
            if (backends[b]) pf_lower_backend(p, b == 2 ? tu_root(backends[b]) : backends[b], &h);
            else pf_lower(p, NULL, &h);
            check_history(&h, &c);
            ls_history_free(&h);
            ls_program_unref(p);
        }
    /* the samples reach every way a row has a tag: its node's, its module's, a removed node's */
    ck_assert_uint_gt(c.tags, 10);
    ck_assert_uint_gt(c.delegate_rows, 0);
    ck_assert_uint_gt(c.removed_rows, 0);
    ck_assert_uint_gt(c.rows, c.delegate_rows + c.removed_rows);
    ck_assert_uint_gt(c.cpu_rows, 0);
    ck_assert_uint_gt(c.ops, 20);
}
END_TEST

/* Escape sequences a terminfo does not list (views/keys.c, ui_escape_key): the keys of xterm's
 * and VT220's spellings, complete at a CSI's final byte or after SS3's one byte; others none. */
START_TEST(escape_sequences_read_whole)
{
    static const struct {
        const char *seq;
        int key;
    } known[] = {{"[1~", KEY_HOME}, {"[4~", KEY_END}, {"OH", KEY_HOME}, {"[F", KEY_END},
                 {"[5~", KEY_PPAGE}, {"[6~", KEY_NPAGE}, {"OA", KEY_UP}, {"[D", KEY_LEFT}};
    for (size_t i = 0; i < sizeof known / sizeof known[0]; i++) {
        size_t n = strlen(known[i].seq);
        ck_assert_msg(ui_escape_complete(known[i].seq, n), "%s", known[i].seq);
        for (size_t k = 1; k < n; k++) ck_assert_msg(!ui_escape_complete(known[i].seq, k), "%s after %zu", known[i].seq, k);
        ck_assert_int_eq(ui_escape_key(known[i].seq, n), UI_KEY_FN + known[i].key);
    }
    ck_assert(ui_escape_complete("[1;5Q", 5));
    ck_assert_int_eq(ui_escape_key("[1;5Q", 5), UI_KEY_NONE); /* complete, and not a key: dropped with a message */
    ck_assert_int_eq(ui_escape_key("[99~", 4), UI_KEY_NONE);
}
END_TEST

Suite *tui_rows_suite(void)
{
    Suite *s = suite_create("tui_rows");
    TCase *tc = tcase_create("rows");
    tcase_set_timeout(tc, 120);
    tcase_add_test(tc, row_groups_are_the_rows_each_filter_lets_through);
    tcase_add_test(tc, escape_sequences_read_whole);
    suite_add_tcase(s, tc);
    return s;
}
