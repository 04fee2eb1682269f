/* lowerscope partitions FILE [--step S] [--backend NAME|FILE]... [--pipeline ...] [--json]: the
 * delegation table of a step — per op type, how many nodes each tag (and its backend) took and
 * how many stayed on the CPU, % delegated — then every CPU node with its reason. Nodes already
 * lowered count for the tag they carry inside their delegate. The table itself is the core's
 * (delegation.h), shared with the UI's delegation table. */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "cli.h"
#include "delegation.h"
#include "pipeline_cli.h"

int ls_cmd_partitions(int argc, char **argv);

#define PARTITIONS_FORMAT_VERSION 1
#define USAGE "partitions FILE [--step S] [--backend NAME|FILE]... [--pipeline a,b,...] [--json] [--model NAME] [--metadata-only]"
static const char HELP[] =
    "usage: lowerscope " USAGE "\n"
    "\n"
    "The delegation table of one step (default: the last): per op type, how many nodes each tag took\n"
    "and how many stayed on the CPU, the share delegated, then every compute node left on the CPU\n"
    "with its reason (docs/backends.md).\n"
    "\n"
    "options:\n" CLI_STEP_OPTION_HELP CLI_PIPELINE_OPTIONS_HELP
    "  --json                one JSON document instead of the text (format_version 1, docs/cli.md)\n"
    CLI_LOAD_OPTIONS_HELP
    "  -h, --help            this help\n"
    "\n"
    "exit codes: 0 the table was printed, 1 the step's pass failed or no pass ran (the\n"
    "verifier rejects the program's structure), 3 the pass stopped on what lowerscope lacks,\n"
    "2 unreadable input or bad options\n";
#define pct ls_deleg_pct

static void print_text(const cli_run *r, int s, const ls_deleg_table *full)
{
    const ls_program *p = r->h.steps[s].program;
    ls_deleg_table merged;
    const ls_deleg_table *t;
    bool by_backend = ls_deleg_shown(full, &merged, &t);
    ls_buf title = {0};
    cli_step_title(&title, &r->h, s);
    ls_buf_puts(&title, ": ");
    ls_deleg_summary(full, &title);
    printf("%s, %s\n\n", r->args.path, title.s);
    ls_buf_free(&title);
    int opw = 10;
    for (uint32_t i = 0; i < t->n_rows; i++)
        if ((int)strlen(t->rows[i].op) > opw) opw = (int)strlen(t->rows[i].op);
    printf("%-*s", opw, "op");
    for (uint32_t c = 0; c < t->n_cols; c++) {
        int w = (int)strlen(t->cols[c].tag) < 6 ? 6 : (int)strlen(t->cols[c].tag);
        printf("  %*s", w, t->cols[c].tag);
    }
    printf("  %6s  %9s\n", "CPU", "delegated");
    for (uint32_t i = 0; i <= t->n_rows; i++) {
        const ls_deleg_row *rw = i < t->n_rows ? &t->rows[i] : NULL;
        printf("%-*s", opw, rw ? rw->op : "total");
        for (uint32_t c = 0; c < t->n_cols; c++) {
            int w = (int)strlen(t->cols[c].tag) < 6 ? 6 : (int)strlen(t->cols[c].tag);
            printf("  %*u", w, rw ? rw->by_col[c] : t->cols[c].nodes);
        }
        uint32_t cpu = rw ? rw->cpu : t->cpu, tot = rw ? rw->total : t->total;
        printf("  %6u  %8.1f%%\n", cpu, pct(tot - cpu, tot));
    }
    if (t->n_cols) { /* each column's share, as the table screen says it */
        printf("\n");
        for (uint32_t c = 0; c < t->n_cols; c++) {
            const ls_deleg_col *col = &t->cols[c];
            const char *module = by_backend ? NULL : ls_deleg_col_module(col);
            if (by_backend) printf("%s", col->tag);
            else printf("%s: %s%s%s", col->tag, col->backend ? col->backend : "?", module ? ", lowered as " : "", module ? module : "");
            printf(" · %u node%s (%.1f%%)\n", col->nodes, col->nodes == 1 ? "" : "s", pct(col->nodes, t->total));
        }
    }
    if (full->cpu) {
        ls_deleg_cpu_groups g;
        ls_deleg_cpu_groups_build(&r->h, (uint32_t)s, &g);
        ls_buf took = {0}; /* beside "op not supported": what the backends did take */
        ls_deleg_backends_took(full, &took);
        const char *unsupported = ls_cpu_reason_text(LS_WHY_OP_UNSUPPORTED);
        printf("\nOn the CPU, by reason:\n");
        for (uint32_t k = 0; k < g.n; k++) {
            ls_buf ops = {0};
            ls_deleg_cpu_group_ops(&g.v[k], 6, &ops);
            printf("  %5u  %s: %s\n", g.v[k].n, g.v[k].why, ops.s ? ops.s : "");
            if (g.v[k].example != g.v[k].why) printf("         e.g. %s\n", g.v[k].example);
            if (took.s && !strncmp(g.v[k].why, unsupported, strlen(unsupported))) printf("         instead: %s\n", took.s);
            ls_buf_free(&ops);
        }
        ls_deleg_cpu_groups_free(&g);
        ls_buf_free(&took);
        printf("\nOn the CPU:\n");
    }
    int namew = 24, labelw = 16; /* the columns as wide as their longest entry */
    for (uint32_t i = 0; i < p->n_nodes; i++) {
        const ls_node *n = p->nodes[i];
        if (!ls_deleg_on_cpu(n)) continue;
        if ((int)strlen(n->name) > namew) namew = (int)strlen(n->name);
        if ((int)strlen(ls_deleg_op_label(n)) > labelw) labelw = (int)strlen(ls_deleg_op_label(n));
    }
    for (uint32_t i = 0; i < p->n_nodes; i++) {
        const ls_node *n = p->nodes[i];
        if (!ls_deleg_on_cpu(n)) continue;
        printf("  %-*s %-*s %s\n", namew, n->name, labelw, ls_deleg_op_label(n), ls_deleg_cpu_why(&r->h, (uint32_t)s, n));
    }
    if (by_backend) ls_deleg_table_free(&merged);
}

static void json_counts(ls_buf *b, const ls_deleg_table *t, const ls_deleg_row *rw)
{
    bool first = true;
    for (uint32_t c = 0; c < t->n_cols; c++) {
        if (!rw->by_col[c]) continue;
        if (!first) ls_buf_puts(b, ", ");
        first = false;
        ls_buf_json_str(b, t->cols[c].tag);
        ls_buf_printf(b, ": %u", rw->by_col[c]);
    }
}

static void print_json(const cli_run *r, int s, const ls_deleg_table *t)
{
    const ls_program *p = r->h.steps[s].program;
    ls_deleg_table per_backend; /* the same rows in the same order (same totals and ops) */
    ls_deleg_by_backend(t, &per_backend);
    ls_buf b = {0};
    ls_buf_printf(&b, "{\"format\": \"lowerscope-partitions\", \"format_version\": %d, \"file\": ", PARTITIONS_FORMAT_VERSION);
    ls_buf_json_str(&b, r->args.path);
    ls_buf_printf(&b, ", \"step\": %d, \"pass\": ", s);
    ls_buf_json_str(&b, r->h.steps[s].pass);
    ls_buf_puts(&b, ", \"backend\": ");
    ls_buf_json_str(&b, r->h.steps[s].detail);
    ls_buf_printf(&b, ",\n\"compute_nodes\": %u, \"cpu_nodes\": %u, \"delegated_percent\": %.2f,\n\"tags\": [", t->total,
                  t->cpu, pct(t->total - t->cpu, t->total));
    for (uint32_t c = 0; c < t->n_cols; c++) {
        ls_buf_puts(&b, c ? ", {\"tag\": " : "{\"tag\": ");
        ls_buf_json_str(&b, t->cols[c].tag);
        ls_buf_puts(&b, ", \"backend\": ");
        ls_buf_json_str(&b, t->cols[c].backend);
        ls_buf_puts(&b, ", \"module\": ");
        ls_buf_json_str(&b, t->cols[c].module);
        ls_buf_printf(&b, ", \"nodes\": %u}", t->cols[c].nodes);
    }
    ls_buf_puts(&b, "],\n\"ops\": [");
    for (uint32_t i = 0; i < t->n_rows; i++) {
        const ls_deleg_row *rw = &t->rows[i];
        ls_buf_puts(&b, i ? ",\n {\"op\": " : "\n {\"op\": ");
        ls_buf_json_str(&b, rw->op);
        ls_buf_printf(&b, ", \"total\": %u, \"cpu\": %u, \"delegated_percent\": %.2f, \"by_tag\": {", rw->total, rw->cpu,
                      pct(rw->total - rw->cpu, rw->total));
        json_counts(&b, t, rw);
        ls_buf_puts(&b, "}, \"by_backend\": {");
        json_counts(&b, &per_backend, &per_backend.rows[i]);
        ls_buf_puts(&b, "}}");
    }
    ls_buf_puts(&b, "],\n\"cpu_by_reason\": [");
    ls_deleg_cpu_groups g;
    ls_deleg_cpu_groups_build(&r->h, (uint32_t)s, &g);
    for (uint32_t k = 0; k < g.n; k++) {
        ls_buf_puts(&b, k ? ",\n {\"reason\": " : "\n {\"reason\": ");
        ls_buf_json_str(&b, g.v[k].why);
        ls_buf_puts(&b, ", \"example\": ");
        ls_buf_json_str(&b, g.v[k].example);
        ls_buf_printf(&b, ", \"nodes\": %u, \"ops\": {", g.v[k].n);
        for (uint32_t o = 0; o < g.v[k].n_ops; o++) {
            if (o) ls_buf_puts(&b, ", ");
            ls_buf_json_str(&b, g.v[k].ops[o]);
            ls_buf_printf(&b, ": %u", g.v[k].op_count[o]);
        }
        ls_buf_puts(&b, "}}");
    }
    ls_deleg_cpu_groups_free(&g);
    ls_buf_puts(&b, "],\n\"cpu\": [");
    bool first = true;
    for (uint32_t i = 0; i < p->n_nodes; i++) {
        const ls_node *n = p->nodes[i];
        if (!ls_deleg_on_cpu(n)) continue;
        ls_buf_puts(&b, first ? "\n {\"node\": " : ",\n {\"node\": ");
        first = false;
        ls_buf_json_str(&b, n->name);
        ls_buf_puts(&b, ", \"op\": ");
        ls_buf_json_str(&b, ls_deleg_op_label(n));
        ls_buf_puts(&b, ", \"reason\": ");
        ls_buf_json_str(&b, n->reason ? ls_cpu_reason_text((ls_cpu_reason)n->reason) : NULL);
        ls_buf_puts(&b, ", \"detail\": ");
        ls_buf_json_str(&b, n->reason_detail);
        ls_buf_puts(&b, ", \"why\": ");
        ls_buf_json_str(&b, ls_deleg_cpu_why(&r->h, (uint32_t)s, n));
        ls_buf_putc(&b, '}');
    }
    ls_buf_puts(&b, "]}\n");
    fwrite(b.s, 1, b.len, stdout);
    ls_buf_free(&b);
    ls_deleg_table_free(&per_backend);
}

int ls_cmd_partitions(int argc, char **argv)
{
    if (ls_cli_help(argc, argv, HELP)) return LS_EXIT_OK;
    cli_run r;
    int rc = cli_run_pipeline("partitions", USAGE, argc, argv, CLI_JSON | CLI_STEP, &r);
    if (rc == LS_EXIT_OK) {
        int s = cli_find_step(&r.h, r.args.step);
        if (s < 0) {
            rc = LS_EXIT_INPUT;
        } else {
            ls_deleg_table t;
            ls_deleg_table_build(r.h.steps[s].program, &t);
            if (r.args.json) print_json(&r, s, &t);
            else print_text(&r, s, &t);
            ls_deleg_table_free(&t);
            rc = cli_note_step_failed("partitions", &r.h, s); /* and why no pass ran, if none did */
        }
    }
    cli_run_free(&r);
    return rc;
}
