/* The per-node measurements of a run (node_stats.h): one record per node position, filled by
 * whoever measured (the runtime, an ETDump) and read by the UI's run overlay. */
#include <math.h>
#include <stdlib.h>
#include <string.h>

#include "node_stats.h"

void ls_node_stats_init(ls_node_stats *s, const ls_program *p, const char *source)
{
    memset(s, 0, sizeof *s);
    s->program = ls_program_ref((ls_program *)p);
    s->n = p->n_nodes;
    s->v = ls_calloc(s->n ? s->n : 1, sizeof *s->v);
    for (uint32_t i = 0; i < s->n; i++) s->v[i].first_bad_run = -1;
    s->source = ls_intern(source);
    s->rtol = s->atol = -1;
}

void ls_node_stats_free(ls_node_stats *s)
{
    if (!s) return;
    free(s->v);
    if (s->program) ls_program_unref(s->program);
    memset(s, 0, sizeof *s);
}

ls_node_stat *ls_node_stats_of(const ls_node_stats *s, uint32_t id)
{
    if (!s || !s->program) return NULL;
    int32_t pos = ls_program_pos(s->program, id);
    return pos >= 0 && (uint32_t)pos < s->n ? &s->v[pos] : NULL;
}

void ls_node_stat_add_time(ls_node_stat *st, double seconds)
{
    st->seconds += seconds;
    st->timed = true;
}

void ls_node_stat_add_tensor(ls_node_stat *st, const ls_tensor *t)
{
    if (!t) return;
    bool floating = ls_dtype_is_float(t->dtype);
    for (int64_t i = 0; i < t->numel; i++) {
        double v = floating ? ls_tensor_get_f64(t, i) : (double)ls_tensor_get_i64(t, i);
        if (isnan(v)) st->nan++;
        else if (isinf(v)) st->inf++;
        else {
            if (!st->finite || v < st->min) st->min = v;
            if (!st->finite || v > st->max) st->max = v;
            st->finite++;
        }
    }
    st->numel += (uint64_t)t->numel;
}

void ls_node_stat_add_diff(ls_node_stat *st, double max_abs, double max_rel, bool pass, int64_t run)
{
    if (!st->compared || max_abs > st->max_abs) st->max_abs = max_abs;
    if (!st->compared || max_rel > st->max_rel) st->max_rel = max_rel;
    st->compared = true;
    if (!pass && !st->differs) {
        st->differs = true;
        st->first_bad_run = run;
    }
}

int32_t ls_node_stats_divergence(const ls_node_stats *s, int64_t from, int dir)
{
    if (!s || !s->n) return -1;
    if (dir >= 0) {
        for (int64_t i = from < 0 ? 0 : from + 1; i < (int64_t)s->n; i++)
            if (s->v[i].differs) return (int32_t)i;
    } else {
        for (int64_t i = (from > (int64_t)s->n ? (int64_t)s->n : from) - 1; i >= 0; i--)
            if (s->v[i].differs) return (int32_t)i;
    }
    return -1;
}

uint32_t ls_node_stats_differing(const ls_node_stats *s, uint32_t *compared)
{
    uint32_t c = 0, d = 0;
    for (uint32_t i = 0; s && i < s->n; i++) {
        c += s->v[i].compared;
        d += s->v[i].differs;
    }
    if (compared) *compared = c;
    return d;
}
