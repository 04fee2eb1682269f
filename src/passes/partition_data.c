/* Tagging data after the partitioner (exir-semantics §3.1, §3.2): exir.backend.utils'
 * tag_constant_data (a parameter, buffer or lifted constant goes with the smallest tag among its
 * users) and tag_mutated_buffer (a mutable buffer goes with its users' partition, when they are
 * all in one). */
#include <stdlib.h>
#include <string.h>

#include "partition_internal.h"

/* ---- tagging data: tag_constant_data and tag_mutated_buffer (exir-semantics §3.1, §3.2) */

static const char *min_user_tag(const pt_round *r, const char **tags, uint32_t pos, bool *all_same, bool *any_cpu)
{
    const char *best = NULL;
    const char *first = NULL;
    *all_same = true;
    *any_cpu = false;
    bool have = false;
    for (uint32_t u = r->users.off[pos]; u < r->users.off[pos + 1]; u++) {
        const char *t = tags[r->users.pos[u]];
        if (!have) first = t, have = true;
        else if (t != first) *all_same = false;
        if (!t) *any_cpu = true;
        else if (pu_tag_cmp(t, best) < 0) best = t;
    }
    return best;
}

typedef struct sole {
    const char *tag;
    uint32_t pos;
} sole;

static int cmp_sole(const void *a, const void *b)
{
    const sole *x = a, *y = b;
    int c = strcmp(x->tag, y->tag);
    return c ? c : (x->pos < y->pos ? -1 : x->pos > y->pos);
}

void pt_tag_data(pt_round *r, const char **tags, ls_pass_ctx *ctx)
{
    LS_VEC(sole) alone = {0}; /* constants one tag alone reads: one sentence per tag */
    for (uint32_t i = 0; i < r->n; i++) {
        if (!(r->cls[i] & CLS_PLACEHOLDER) || tags[i]) continue; /* tagged already: a group's constant */
        const ls_node *ph = r->q->nodes[i];
        const ls_input_spec *s = ls_sig_spec(&r->sig, r->q, ph);
        if (!s || !ls_input_kind_holds_data(s->kind) || !pu_nusers(&r->users, i)) continue;
        bool all_same, any_cpu;
        const char *t = min_user_tag(r, tags, i, &all_same, &any_cpu);
        if (!t) continue;
        if (ls_sig_is_mutated(&r->sig, s)) {
            if (!r->prof->stateful || s->kind != LS_IN_BUFFER) continue;
            if (!all_same) {
                ls_report_add(ctx->report, NULL, ph->name,
                              "buffer `%s` stays at the top level: it is read by `%s`%s and more than one program would "
                              "hold its state",
                              ph->name, t, any_cpu ? " and by the CPU" : " and other tags");
                continue;
            }
            tags[i] = t;
            ls_report_add(ctx->report, NULL, ph->name, "mutable buffer `%s` goes with `%s` (tag_mutated_buffer)", ph->name, t);
            continue;
        }
        if (r->prof->take_constants != LS_TAKE_ALL) continue;
        tags[i] = t;
        if (all_same) {
            sole so = {t, i};
            ls_vec_push(&alone, so);
        } else {
            ls_report_add(ctx->report, NULL, ph->name,
                          "%s `%s` is read by several partitions: tagged `%s` (the smallest tag), duplicate_constants "
                          "gives the others a copy",
                          ls_input_kind_name((ls_input_kind)s->kind), ph->name, t);
        }
    }
    if (alone.n) qsort(alone.v, alone.n, sizeof *alone.v, cmp_sole);
    for (uint32_t a = 0; a < alone.n;) {
        uint32_t b = a;
        while (b < alone.n && alone.v[b].tag == alone.v[a].tag) b++;
        const char **names = ls_malloc(sizeof *names * (b - a));
        for (uint32_t k = a; k < b; k++) names[k - a] = r->q->nodes[alone.v[k].pos]->name;
        ls_buf buf = {0};
        ls_buf_printf(&buf, "`%s` takes the constant data only it reads (tag_constant_data): ", alone.v[a].tag);
        pu_names(&buf, names, b - a, 6);
        char *text = ls_buf_take(&buf);
        ls_report_add(ctx->report, NULL, names[0], "%s", text);
        free(text);
        free(names);
        a = b;
    }
    free(alone.v);
}
