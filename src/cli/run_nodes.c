/* lowerscope run --nodes: the node-by-node measurements the UI's run overlay shows (node_stats.h),
 * printed for a terminal or a script. A node with nothing measured (a placeholder, a get_attr,
 * the output) is left out. */
#include <stdio.h>

#include "ops.h"
#include "run_nodes.h"
#include "run_print.h"

static bool measured(const ls_node_stat *s)
{
    return s->timed || s->numel || s->compared;
}

static const char *op_of(const ls_node *n)
{
    if (n->kind == LS_NODE_PLACEHOLDER) return "placeholder";
    if (!n->op) return n->target ? n->target : "?";
    return n->op->id == LS_OP_call_delegate ? "call_delegate" : ls_op_short(n->op);
}

void run_nodes_print(const ls_node_stats *st, bool compared)
{
    uint32_t n_compared, differ = ls_node_stats_differing(st, &n_compared);
    int32_t first = ls_node_stats_divergence(st, -1, 1);
    if (!compared) printf("node by node (%lld run%s, no reference):\n", (long long)st->runs, st->runs == 1 ? "" : "s");
    else if (first < 0)
        printf("node by node: %u node%s compared with the loaded program's, none differs\n", n_compared,
               n_compared == 1 ? "" : "s");
    else
        printf("node by node: %u of %u nodes differ from the loaded program's; the first: `%s` (max abs %.3g)\n", differ,
               n_compared, st->program->nodes[first]->name, st->v[first].max_abs);
    for (uint32_t i = 0; i < st->n; i++) {
        const ls_node_stat *s = &st->v[i];
        if (!measured(s)) continue;
        const ls_node *n = st->program->nodes[i];
        printf("  %-28s %-16s", n->name, op_of(n));
        if (s->timed && s->runs) printf(" %9.4f ms", s->seconds * 1e3 / (double)s->runs);
        else printf(" %12s", "");
        if (s->finite) printf("  %.4g..%.4g", s->min, s->max);
        else if (s->numel) printf("  (no finite value)");
        if (s->nan) printf("  %llu NaN", (unsigned long long)s->nan);
        if (s->inf) printf("  %llu Inf", (unsigned long long)s->inf);
        if (s->compared) printf("  Δ%.3g%s", s->max_abs, s->differs ? " DIFFERS" : "");
        if (s->differs && s->first_bad_run >= 0) printf(" (from step %lld)", (long long)s->first_bad_run);
        printf("\n");
    }
}

void run_nodes_json(const ls_node_stats *st, bool compared, ls_buf *js)
{
    uint32_t n_compared, differ = ls_node_stats_differing(st, &n_compared);
    int32_t first = ls_node_stats_divergence(st, -1, 1);
    ls_buf_printf(js, ",\n  \"nodes\": {\"runs\": %lld, \"reference\": %s, \"compared\": %u, \"differing\": %u, \"first_differing\": ",
                  (long long)st->runs, compared ? "\"the loaded program\"" : "null", n_compared, differ);
    ls_buf_json_str(js, first >= 0 ? st->program->nodes[first]->name : NULL);
    ls_buf_puts(js, ", \"nodes\": [");
    bool any = false;
    for (uint32_t i = 0; i < st->n; i++) {
        const ls_node_stat *s = &st->v[i];
        if (!measured(s)) continue;
        const ls_node *n = st->program->nodes[i];
        ls_buf_puts(js, any ? ",\n    {\"name\": " : "\n    {\"name\": ");
        any = true;
        ls_buf_json_str(js, n->name);
        ls_buf_puts(js, ", \"op\": ");
        ls_buf_json_str(js, op_of(n));
        ls_buf_puts(js, ", \"seconds_per_run\": ");
        if (s->timed && s->runs) run_json_num(js, s->seconds / (double)s->runs);
        else ls_buf_puts(js, "null");
        ls_buf_printf(js, ", \"elements\": %llu, \"min\": ", (unsigned long long)s->numel);
        if (s->finite) run_json_num(js, s->min);
        else ls_buf_puts(js, "null");
        ls_buf_puts(js, ", \"max\": ");
        if (s->finite) run_json_num(js, s->max);
        else ls_buf_puts(js, "null");
        ls_buf_printf(js, ", \"nan\": %llu, \"inf\": %llu, \"compared\": %s", (unsigned long long)s->nan,
                      (unsigned long long)s->inf, s->compared ? "true" : "false");
        if (s->compared) {
            ls_buf_puts(js, ", \"max_abs\": ");
            run_json_num(js, s->max_abs);
            ls_buf_puts(js, ", \"max_rel\": ");
            run_json_num(js, s->max_rel);
            ls_buf_printf(js, ", \"differs\": %s, \"first_differing_step\": ", s->differs ? "true" : "false");
            if (s->differs && s->first_bad_run >= 0) ls_buf_printf(js, "%lld", (long long)s->first_bad_run);
            else ls_buf_puts(js, "null");
        }
        ls_buf_putc(js, '}');
    }
    ls_buf_puts(js, "]}");
}
