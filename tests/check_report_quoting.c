/* The passes' report sentences quote what they name with backquotes — nodes, constants, modules
 * and tags alike (`c` is read by `tag1` ...): the Changes pane folds sentences alike but for
 * their backquoted names, and a name left bare reads as prose. Every sentence of every step of
 * every sample, lowered for the bundled delegate, XNNPACK and arith.json, is checked: no tag of
 * the history and no name of the step's programs with an underscore in it (`aten_add_tensor`,
 * `lowered_module_0`; a bare `x` or `output` is a word too) appears outside backquotes. */
#include <check.h>
#include <ctype.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "progfixtures.h"
#include "regions.h"
#include "testutil.h"

static bool word_char(char c)
{
    return isalnum((unsigned char)c) || c == '_' || c == '.';
}

/* The sentence with every backquoted span blanked out. */
static char *unquoted(const char *s)
{
    char *u = ls_strdup(s);
    bool in = false;
    for (char *c = u; *c; c++) {
        if (*c == '`') in = !in;
        if (in || *c == '`') *c = ' ';
    }
    return u;
}

/* Whether `name` occurs in text as a word of its own. */
static bool has_word(const char *text, const char *name)
{
    size_t n = strlen(name);
    for (const char *p = strstr(text, name); p; p = strstr(p + 1, name))
        if ((p == text || !word_char(p[-1])) && !word_char(p[n])) return true;
    return false;
}

static void check_program_names(const ls_program *p, const char *bare, const char *sentence, const char *where)
{
    for (uint32_t i = 0; p && i < p->n_nodes; i++) {
        const char *nm = p->nodes[i]->name;
        if (strchr(nm, '_') && has_word(bare, nm)) ck_abort_msg("%s: `%s` unquoted in: %s", where, nm, sentence);
    }
    for (uint32_t s = 0; p && s < p->n_subs; s++) {
        if (has_word(bare, p->subs[s].name)) ck_abort_msg("%s: `%s` unquoted in: %s", where, p->subs[s].name, sentence);
        check_program_names(p->subs[s].program, bare, sentence, where);
    }
}

static void check_history(const ls_history *h, const char *sample, const char *backend)
{
    const char **tags, **backends;
    uint32_t nt = ls_history_tags(h, &tags, &backends);
    for (uint32_t s = 0; s < h->n; s++) {
        const ls_step *st = &h->steps[s];
        char where[256];
        snprintf(where, sizeof where, "%s for %s, step %u %s", sample, backend, s, st->pass ? st->pass : "?");
        for (uint32_t k = 0; k < st->report.n; k++) {
            const char *text = st->report.v[k].text;
            char *bare = unquoted(text);
            for (uint32_t t = 0; t < nt; t++)
                if (has_word(bare, tags[t])) ck_abort_msg("%s: tag %s unquoted in: %s", where, tags[t], text);
            check_program_names(st->program, bare, text, where);
            if (s) check_program_names(h->steps[s - 1].program, bare, text, where); /* what the step removed */
            free(bare);
        }
    }
    free(tags);
    free(backends);
}

START_TEST(report_sentences_quote_tags_and_names)
{
    const char *backends[] = {"bundled", "xnnpack", "samples/backends/arith.json"};
    const char *samples[] = {"shared_constant", "two_delegates", "folded_output", "constant_mask",
                             "kv_cache",        "policy",        "quantized_mlp"};
    for (size_t i = 0; i < sizeof samples / sizeof samples[0]; i++)
        for (size_t b = 0; b < sizeof backends / sizeof backends[0]; b++) {
            ls_program *p = pf_sample(samples[i]);
            ls_history h = {0};
            pf_lower_backend(p, strchr(backends[b], '/') ? tu_root(backends[b]) : backends[b], &h);
            check_history(&h, samples[i], backends[b]);
            ls_history_free(&h);
            ls_program_unref(p);
        }
}
END_TEST

START_TEST(has_word_sees_whole_words_only)
{
    ck_assert(has_word("goes with tag1 (x)", "tag1"));
    ck_assert(!has_word("goes with tag10 (x)", "tag1"));
    ck_assert(!has_word("tag_mutated_buffer", "tag"));
    char *u = unquoted("`tag1` becomes `lowered_module_0` (BundledBackend)");
    ck_assert(!has_word(u, "tag1") && !has_word(u, "lowered_module_0") && has_word(u, "BundledBackend"));
    free(u);
}
END_TEST

Suite *report_quoting_suite(void)
{
    Suite *s = suite_create("report_quoting");
    TCase *tc = tcase_create("core");
    tcase_add_test(tc, has_word_sees_whole_words_only);
    tcase_add_test(tc, report_sentences_quote_tags_and_names);
    tcase_set_timeout(tc, 120);
    suite_add_tcase(s, tc);
    return s;
}
