/* lowerscope partitions FILE [--step S] [--backend FILE]... [--pipeline ...] [--json]: the
 * delegation table of a step — per op type, how many nodes each tag (and its backend) took and
 * how many stayed on the CPU, % delegated — then every CPU node with its reason. Nodes already
 * lowered count for the tag they carry inside their delegate. Getitems, delegate calls,
 * placeholders and outputs are not compute nodes and are not counted. */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "../pass_util.h"
#include "cli.h"
#include "pipeline_cli.h"

int ls_cmd_partitions(int argc, char **argv);

#define PARTITIONS_FORMAT_VERSION 1
#define USAGE "partitions FILE [--step S] [--backend FILE]... [--pipeline a,b,...] [--json] [--model NAME] [--metadata-only]"
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
    "exit codes: 0 the table was printed, 1 the step's pass failed, 2 unreadable input or bad options\n";
#define MAX_COLUMNS 8 /* more tags than this: one column per backend */

typedef struct column {
    const char *label; /* tag */
    const char *backend;
    uint32_t total;
} column;

typedef struct row {
    const char *op;
    uint32_t cpu;
    uint32_t *by_col;
    uint32_t total;
} row;

typedef struct table {
    LS_VEC(column) cols;
    LS_VEC(row) rows;
    pu_map col_ix, row_ix;
    uint32_t cpu_total, all_total;
} table;

static const char *op_label(const ls_node *n)
{
    if (!n->op) return ls_target_short(n->target);
    if (n->op->overload && strcmp(n->op->overload, "default") != 0) return ls_internf("%s.%s", n->op->name, n->op->overload);
    return n->op->name;
}

static uint32_t column_of(table *t, const char *label, const char *backend)
{
    uint32_t c;
    if (pu_map_get(&t->col_ix, label, &c)) return c;
    column col = {label, backend, 0};
    c = t->cols.n;
    ls_vec_push(&t->cols, col);
    pu_map_put(&t->col_ix, label, c);
    for (uint32_t r = 0; r < t->rows.n; r++) {
        t->rows.v[r].by_col = ls_realloc(t->rows.v[r].by_col, sizeof(uint32_t) * t->cols.n);
        t->rows.v[r].by_col[c] = 0;
    }
    return c;
}

static row *row_of(table *t, const char *op)
{
    uint32_t r;
    if (!pu_map_get(&t->row_ix, op, &r)) {
        row nr = {op, 0, ls_calloc(t->cols.n ? t->cols.n : 1, sizeof(uint32_t)), 0};
        r = t->rows.n;
        ls_vec_push(&t->rows, nr);
        pu_map_put(&t->row_ix, op, r);
    }
    return &t->rows.v[r];
}

static void count_program(table *t, const ls_program *p, const char *sub_label, const char *sub_backend,
                          const ls_program *top)
{
    for (uint32_t i = 0; i < p->n_nodes; i++) {
        const ls_node *n = p->nodes[i];
        if (!pu_is_compute(n)) continue;
        const char *label = n->tag ? n->tag : sub_label;
        const char *backend = sub_backend ? sub_backend : label ? ls_program_tag_backend(top, label) : NULL;
        uint32_t c = label ? column_of(t, label, backend) : 0;
        row *r = row_of(t, op_label(n));
        r->total++;
        t->all_total++;
        if (!label) {
            r->cpu++;
            t->cpu_total++;
        } else {
            r->by_col[c]++;
            t->cols.v[c].total++;
        }
    }
}

static int by_total(const void *a, const void *b)
{
    const row *x = a, *y = b;
    if (x->total != y->total) return x->total < y->total ? 1 : -1;
    return strcmp(x->op, y->op);
}

static void build(table *t, const ls_program *p)
{
    memset(t, 0, sizeof *t);
    count_program(t, p, NULL, NULL, p);
    for (uint32_t s = 0; s < p->n_subs; s++) {
        const ls_submodule *sub = &p->subs[s];
        if (!sub->program) continue;
        /* a delegate's nodes keep their tag; a module without tags counts under its own name */
        count_program(t, sub->program, sub->name, sub->backend_id, p);
    }
    if (t->rows.n) qsort(t->rows.v, t->rows.n, sizeof *t->rows.v, by_total);
}

static void table_free(table *t)
{
    for (uint32_t r = 0; r < t->rows.n; r++) free(t->rows.v[r].by_col);
    free(t->rows.v);
    free(t->cols.v);
    pu_map_free(&t->col_ix);
    pu_map_free(&t->row_ix);
}

/* With many tags, the text table shows one column per backend. */
static void merge_by_backend(const table *t, table *m)
{
    memset(m, 0, sizeof *m);
    uint32_t *map = ls_malloc(sizeof *map * (t->cols.n ? t->cols.n : 1));
    for (uint32_t c = 0; c < t->cols.n; c++) {
        const char *b = t->cols.v[c].backend ? t->cols.v[c].backend : t->cols.v[c].label;
        map[c] = column_of(m, b, b);
        m->cols.v[map[c]].total += t->cols.v[c].total;
    }
    for (uint32_t r = 0; r < t->rows.n; r++) {
        row *nr = row_of(m, t->rows.v[r].op);
        nr->cpu = t->rows.v[r].cpu;
        nr->total = t->rows.v[r].total;
        for (uint32_t c = 0; c < t->cols.n; c++) nr->by_col[map[c]] += t->rows.v[r].by_col[c];
    }
    m->cpu_total = t->cpu_total;
    m->all_total = t->all_total;
    free(map);
}

static double pct(uint32_t part, uint32_t total)
{
    return total ? 100.0 * part / total : 0.0;
}

static void print_text(const cli_run *r, int s, const table *full)
{
    const ls_program *p = r->h.steps[s].program;
    table merged;
    const table *t = full;
    bool by_backend = full->cols.n > MAX_COLUMNS;
    if (by_backend) {
        merge_by_backend(full, &merged);
        t = &merged;
    }
    ls_buf title = {0};
    cli_step_title(&title, &r->h, s);
    char *ts = ls_buf_take(&title);
    printf("%s, %s: %u compute node%s, %u delegated (%.1f%%) to %u tag%s\n\n", r->args.path, ts, full->all_total,
           full->all_total == 1 ? "" : "s", full->all_total - full->cpu_total, pct(full->all_total - full->cpu_total, full->all_total),
           full->cols.n, full->cols.n == 1 ? "" : "s");
    free(ts);
    int opw = 10;
    for (uint32_t i = 0; i < t->rows.n; i++)
        if ((int)strlen(t->rows.v[i].op) > opw) opw = (int)strlen(t->rows.v[i].op);
    printf("%-*s", opw, "op");
    for (uint32_t c = 0; c < t->cols.n; c++) {
        int w = (int)strlen(t->cols.v[c].label) < 6 ? 6 : (int)strlen(t->cols.v[c].label);
        printf("  %*s", w, t->cols.v[c].label);
    }
    printf("  %6s  %9s\n", "CPU", "delegated");
    for (uint32_t i = 0; i <= t->rows.n; i++) {
        const row *rw = i < t->rows.n ? &t->rows.v[i] : NULL;
        printf("%-*s", opw, rw ? rw->op : "total");
        for (uint32_t c = 0; c < t->cols.n; c++) {
            int w = (int)strlen(t->cols.v[c].label) < 6 ? 6 : (int)strlen(t->cols.v[c].label);
            printf("  %*u", w, rw ? rw->by_col[c] : t->cols.v[c].total);
        }
        uint32_t cpu = rw ? rw->cpu : t->cpu_total, tot = rw ? rw->total : t->all_total;
        printf("  %6u  %8.1f%%\n", cpu, pct(tot - cpu, tot));
    }
    if (!by_backend && t->cols.n) {
        printf("\n");
        for (uint32_t c = 0; c < t->cols.n; c++)
            printf("%s: %s\n", t->cols.v[c].label, t->cols.v[c].backend ? t->cols.v[c].backend : "?");
    }
    if (full->cpu_total) printf("\nOn the CPU:\n");
    for (uint32_t i = 0; i < p->n_nodes; i++) {
        const ls_node *n = p->nodes[i];
        if (!pu_is_compute(n) || n->tag) continue;
        printf("  %-24s %-16s %s%s%s%s\n", n->name, op_label(n),
               n->reason ? ls_cpu_reason_text((ls_cpu_reason)n->reason) : "not partitioned yet", n->reason_detail ? " (" : "",
               n->reason_detail ? n->reason_detail : "", n->reason_detail ? ")" : "");
    }
    if (by_backend) table_free(&merged);
}

static void print_json(const cli_run *r, int s, const table *t)
{
    const ls_program *p = r->h.steps[s].program;
    ls_buf b = {0};
    ls_buf_printf(&b, "{\"format\": \"lowerscope-partitions\", \"format_version\": %d, \"file\": ", PARTITIONS_FORMAT_VERSION);
    ls_buf_json_str(&b, r->args.path);
    ls_buf_printf(&b, ", \"step\": %d, \"pass\": ", s);
    ls_buf_json_str(&b, r->h.steps[s].pass);
    ls_buf_puts(&b, ", \"backend\": ");
    ls_buf_json_str(&b, r->h.steps[s].detail);
    ls_buf_printf(&b, ",\n\"compute_nodes\": %u, \"cpu_nodes\": %u, \"delegated_percent\": %.2f,\n\"tags\": [", t->all_total,
                  t->cpu_total, pct(t->all_total - t->cpu_total, t->all_total));
    for (uint32_t c = 0; c < t->cols.n; c++) {
        ls_buf_puts(&b, c ? ", {\"tag\": " : "{\"tag\": ");
        ls_buf_json_str(&b, t->cols.v[c].label);
        ls_buf_puts(&b, ", \"backend\": ");
        ls_buf_json_str(&b, t->cols.v[c].backend);
        ls_buf_printf(&b, ", \"nodes\": %u}", t->cols.v[c].total);
    }
    ls_buf_puts(&b, "],\n\"ops\": [");
    for (uint32_t i = 0; i < t->rows.n; i++) {
        const row *rw = &t->rows.v[i];
        ls_buf_puts(&b, i ? ",\n {\"op\": " : "\n {\"op\": ");
        ls_buf_json_str(&b, rw->op);
        ls_buf_printf(&b, ", \"total\": %u, \"cpu\": %u, \"delegated_percent\": %.2f, \"by_tag\": {", rw->total, rw->cpu,
                      pct(rw->total - rw->cpu, rw->total));
        bool first = true;
        for (uint32_t c = 0; c < t->cols.n; c++) {
            if (!rw->by_col[c]) continue;
            if (!first) ls_buf_puts(&b, ", ");
            first = false;
            ls_buf_json_str(&b, t->cols.v[c].label);
            ls_buf_printf(&b, ": %u", rw->by_col[c]);
        }
        ls_buf_puts(&b, "}, \"by_backend\": {");
        first = true;
        for (uint32_t c = 0; c < t->cols.n; c++) {
            /* sum per backend, written at its first column */
            const char *be = t->cols.v[c].backend ? t->cols.v[c].backend : t->cols.v[c].label;
            bool seen = false;
            for (uint32_t e = 0; e < c && !seen; e++)
                seen = (t->cols.v[e].backend ? t->cols.v[e].backend : t->cols.v[e].label) == be;
            if (seen) continue;
            uint32_t sum = 0;
            for (uint32_t e = c; e < t->cols.n; e++)
                if ((t->cols.v[e].backend ? t->cols.v[e].backend : t->cols.v[e].label) == be) sum += rw->by_col[e];
            if (!sum) continue;
            if (!first) ls_buf_puts(&b, ", ");
            first = false;
            ls_buf_json_str(&b, be);
            ls_buf_printf(&b, ": %u", sum);
        }
        ls_buf_puts(&b, "}}");
    }
    ls_buf_puts(&b, "],\n\"cpu\": [");
    bool first = true;
    for (uint32_t i = 0; i < p->n_nodes; i++) {
        const ls_node *n = p->nodes[i];
        if (!pu_is_compute(n) || n->tag) continue;
        ls_buf_puts(&b, first ? "\n {\"node\": " : ",\n {\"node\": ");
        first = false;
        ls_buf_json_str(&b, n->name);
        ls_buf_puts(&b, ", \"op\": ");
        ls_buf_json_str(&b, op_label(n));
        ls_buf_puts(&b, ", \"reason\": ");
        ls_buf_json_str(&b, n->reason ? ls_cpu_reason_text((ls_cpu_reason)n->reason) : NULL);
        ls_buf_puts(&b, ", \"detail\": ");
        ls_buf_json_str(&b, n->reason_detail);
        ls_buf_putc(&b, '}');
    }
    ls_buf_puts(&b, "]}\n");
    fwrite(b.s, 1, b.len, stdout);
    ls_buf_free(&b);
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
            table t;
            build(&t, r.h.steps[s].program);
            if (r.args.json) print_json(&r, s, &t);
            else print_text(&r, s, &t);
            table_free(&t);
            if (r.h.steps[s].error) {
                fprintf(stderr, "lowerscope: partitions: step %d failed: %s\n", s, r.h.steps[s].error);
                rc = LS_EXIT_FINDINGS;
            }
        }
    }
    cli_run_free(&r);
    return rc;
}
