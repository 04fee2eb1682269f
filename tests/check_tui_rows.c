/* The rows a step derives for the UI, against their definitions: the rows by tag that a tag
 * filter shows (ui_rows_of_tag) are, for every sample, step, scope and tag, exactly the rows
 * whose node has the tag or calls a module lowered from it, in row order. */
#include <check.h>
#include <stdio.h>
#include <stdlib.h>

#include "progfixtures.h"
#include "testutil.h"
#include "../views/ui.h"

typedef struct coverage {
    uint32_t tags, rows, delegate_rows, removed_rows;
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

static void check_scope(ui_derive *d, const ls_history *h, uint32_t step, const ls_program *p, const ls_program *prev,
                        const char *scope, coverage *c)
{
    ui_part cpu = {.name = scope ? scope : "CPU", .color = -1};
    ui_step_rows *sr = ui_rows_build(d, h, step, p, prev, scope, &cpu);
    uint32_t indexed = 0;
    for (uint32_t t = 0; t < d->tags.n; t++) {
        const char *tag = d->tags.tags[t];
        const uint32_t *rows;
        uint32_t n = ui_rows_of_tag(sr, tag, &rows), k = 0;
        for (uint32_t r = 0; r < sr->n_rows; r++) {
            if (!row_has_tag(d, sr, r, tag, c)) continue;
            ck_assert_msg(k < n && rows[k] == r, "step %u %s, tag %s: row %u is missing from the index (%u of %u)", step,
                          scope ? scope : "top", tag, r, k, n);
            k++;
        }
        ck_assert_msg(k == n, "step %u, tag %s: %u rows indexed, %u have the tag", step, tag, n, k);
        indexed += n;
        c->tags += n > 0;
        c->rows += n;
    }
    const uint32_t *none;
    ck_assert_uint_eq(ui_rows_of_tag(sr, ls_intern("no such tag"), &none), 0);
    ck_assert_uint_ge(indexed, sr->tag_group.used); /* every group is some tag's */
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

START_TEST(rows_by_tag_are_the_rows_with_the_tag)
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
        }
    /* the samples reach every way a row has a tag: its node's, its module's, a removed node's */
    ck_assert_uint_gt(c.tags, 10);
    ck_assert_uint_gt(c.delegate_rows, 0);
    ck_assert_uint_gt(c.removed_rows, 0);
    ck_assert_uint_gt(c.rows, c.delegate_rows + c.removed_rows);
}
END_TEST

Suite *tui_rows_suite(void)
{
    Suite *s = suite_create("tui_rows");
    TCase *tc = tcase_create("rows");
    tcase_set_timeout(tc, 120);
    tcase_add_test(tc, rows_by_tag_are_the_rows_with_the_tag);
    suite_add_tcase(s, tc);
    return s;
}
