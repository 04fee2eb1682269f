/* lowerscope run FILE --etdump D.etdp: what the device measured, placed on FILE's nodes (a .pte
 * through its instructions, an ETRecord through its debug handles; etdump.h), per node and per
 * delegate, and every event that found no node listed with why (docs/cli.md). */
#include <inttypes.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "etrecord.h"
#include "ops.h"
#include "ptrmap.h"
#include "run_devtools.h"
#include "run_print.h"

typedef struct row {
    const char *program; /* NULL: the top level */
    const ls_node *node;
    const ls_node_stat *st;
    int32_t instruction;
    const char *backend; /* a delegate call: its backend */
    const char *sub;     /* a delegate call: the submodule */
} row;
typedef LS_VEC(row) rows_t;

static const char *node_target(const ls_node *n)
{
    if (n->op && n->op->id == LS_OP_call_delegate) return "executorch_call_delegate";
    return n->op ? n->op->qualname : n->target ? n->target : "?";
}

/* The submodule a delegate call calls. */
static const ls_submodule *called(const ls_program *p, const ls_node *n)
{
    if (!n->op || n->op->id != LS_OP_call_delegate || !n->nargs || n->args[0].kind != LS_ARG_NODE) return NULL;
    const ls_node *ga = ls_program_node(p, n->args[0].v.node);
    return ga && ga->kind == LS_NODE_GET_ATTR ? ls_program_sub(p, ga->target) : NULL;
}

/* One row per timed node, in graph order: the top level, each delegate's nodes after its call. */
static void collect(const ls_etd_profile *pr, const ls_program *p, const int32_t *instr_of, rows_t *rows)
{
    for (uint32_t i = 0; i < p->n_nodes; i++) {
        const ls_node *n = p->nodes[i];
        const ls_node_stat *st = &pr->stats.v[i];
        const ls_submodule *s = called(p, n);
        if (st->timed) {
            row r = {NULL, n, st, instr_of[n->id], s ? s->backend_id : NULL, s ? s->name : NULL};
            ls_vec_push(rows, r);
        }
        const ls_node_stats *ss = s ? ls_etd_profile_sub(pr, s->name) : NULL;
        for (uint32_t k = 0; ss && k < ss->n; k++)
            if (ss->v[k].timed) {
                row r = {s->name, ss->program->nodes[k], &ss->v[k], instr_of[n->id], NULL, NULL};
                ls_vec_push(rows, r);
            }
    }
}

static const char *event_name(const ls_etd_event *e, char *buf, size_t cap)
{
    if (e->delegate_debug_id_str) snprintf(buf, cap, "delegate event '%s'", e->delegate_debug_id_str);
    else if (e->delegate_debug_id_int >= 0) snprintf(buf, cap, "delegate event %d", e->delegate_debug_id_int);
    else snprintf(buf, cap, "%s", e->name ? e->name : "(no name)");
    return buf;
}

static void json_unmatched(ls_buf *b, const ls_etdump *d, const ls_etd_mapped *m, bool first)
{
    const ls_etd_event *e = &d->runs[m->run].events[m->event];
    ls_buf_printf(b, "%s\n    {\"run\": %u, \"event\": %u, \"name\": ", first ? "" : ",", m->run, m->event);
    ls_buf_json_str(b, e->name);
    ls_buf_printf(b, ", \"chain_index\": %" PRId64 ", \"instruction_id\": %d, \"delegate_debug_id\": ", e->chain_index,
                  e->instruction_id);
    if (e->delegate_debug_id_str) ls_buf_json_str(b, e->delegate_debug_id_str);
    else if (e->delegate_debug_id_int >= 0) ls_buf_printf(b, "%d", e->delegate_debug_id_int);
    else ls_buf_puts(b, "null");
    ls_buf_puts(b, ", \"reason\": ");
    ls_buf_json_str(b, ls_etd_match_text((ls_etd_match)m->match));
    ls_buf_puts(b, ", \"ms\": ");
    run_json_num(b, m->seconds * 1e3);
    ls_buf_puts(b, "}");
}

int cli_run_etdump(const cli_devtools_run *o)
{
    ls_error err;
    ls_program *loaded = NULL;
    if (ls_load(o->path, &o->load, &loaded, &err) != 0) {
        ls_cli_error("%s", err.msg);
        return ls_cli_exit_of(&err);
    }
    ls_etdump d;
    if (ls_etdump_read_file(o->etdump, &d, &err) != 0) {
        ls_cli_error("run: --etdump: %s", err.msg); /* which option's file */
        ls_program_unref(loaded);
        return LS_EXIT_INPUT;
    }
    const ls_program *p;
    ls_etd_index *x = ls_etd_index_for(loaded, &p, &err);
    if (!x) {
        ls_cli_error("%s", err.msg);
        ls_etdump_free(&d);
        ls_program_unref(loaded);
        return LS_EXIT_INPUT;
    }
    ls_etd_profile pr;
    ls_etd_profile_build(&d, p, x, o->ticks_per_second, &pr);
    /* each top-level node's instruction: from the first event placed on it (or on a node inside it) */
    int32_t *instr_of = ls_malloc(sizeof *instr_of * (p->next_id + 1));
    for (uint32_t i = 0; i <= p->next_id; i++) instr_of[i] = -1;
    ls_ptrmap call_of = {0}; /* submodule name → its call */
    for (uint32_t k = 0; k < p->n_nodes; k++) {
        const ls_submodule *s = called(p, p->nodes[k]);
        if (s) ls_ptrmap_add(&call_of, s->name, p->nodes[k]->id, NULL);
    }
    for (uint32_t i = 0; i < pr.n_events; i++) {
        const ls_etd_mapped *m = &pr.events[i];
        uint32_t top = m->program ? 0 : m->node;
        if (m->program) ls_ptrmap_get_u32(&call_of, m->program, &top);
        if (top && top <= p->next_id && instr_of[top] < 0) instr_of[top] = m->instruction;
    }
    ls_ptrmap_free(&call_of);
    rows_t rows = {0};
    collect(&pr, p, instr_of, &rows);
    bool by_handles = ls_recorded_handles_program(loaded) != NULL;
    ls_buf b = {0};
    if (o->json) {
        ls_buf_puts(&b, "{\n  \"format_version\": 1,\n  \"file\": ");
        ls_buf_json_str(&b, o->path);
        ls_buf_puts(&b, ",\n  \"etdump\": ");
        ls_buf_json_str(&b, o->etdump);
        ls_buf_puts(&b, ",\n  \"program\": ");
        ls_buf_json_str(&b, p->name);
        ls_buf_printf(&b, ",\n  \"mapped_by\": \"%s\",\n  \"runs\": %u,\n  \"execute_ms\": ", by_handles ? "debug_handles" : "instructions",
                      pr.runs);
        run_json_num(&b, pr.runs ? pr.execute_seconds * 1e3 / pr.runs : 0);
        ls_buf_printf(&b, ",\n  \"events\": {\"profile\": %u, \"matched\": %u, \"framework\": %u, \"in_delegate\": %u, \"unmatched\": %u},\n  \"nodes\": [",
                      pr.n_events, pr.n_matched, pr.n_framework, pr.n_in_delegate, pr.n_unmatched);
        for (uint32_t i = 0; i < rows.n; i++) {
            const row *r = &rows.v[i];
            ls_buf_puts(&b, i ? ",\n    {\"program\": " : "\n    {\"program\": ");
            ls_buf_json_str(&b, r->program);
            ls_buf_puts(&b, ", \"node\": ");
            ls_buf_json_str(&b, r->node->name);
            ls_buf_printf(&b, ", \"id\": %u, \"target\": ", r->node->id);
            ls_buf_json_str(&b, node_target(r->node));
            ls_buf_printf(&b, ", \"instruction\": %d, \"calls\": %u, \"total_ms\": ", r->instruction, r->st->runs);
            run_json_num(&b, r->st->seconds * 1e3);
            ls_buf_puts(&b, ", \"mean_ms\": ");
            run_json_num(&b, r->st->runs ? r->st->seconds * 1e3 / r->st->runs : 0);
            if (r->sub) {
                ls_buf_puts(&b, ", \"delegate\": {\"submodule\": ");
                ls_buf_json_str(&b, r->sub);
                ls_buf_puts(&b, ", \"backend\": ");
                ls_buf_json_str(&b, r->backend);
                ls_buf_puts(&b, "}");
            }
            ls_buf_puts(&b, "}");
        }
        ls_buf_puts(&b, "\n  ],\n  \"unmatched\": [");
        bool first = true;
        for (uint32_t i = 0; i < pr.n_events; i++) {
            const ls_etd_mapped *m = &pr.events[i];
            if (m->match == LS_ETD_MATCHED || m->match == LS_ETD_FRAMEWORK || m->match == LS_ETD_IN_DELEGATE) continue;
            json_unmatched(&b, &d, m, first);
            first = false;
        }
        ls_buf_puts(&b, "\n  ]\n}\n");
        fputs(b.s, stdout);
    } else {
        const ls_recorded *rec = ls_program_recorded(loaded); /* the method the runs ran, not the program's name */
        const char *method = p->method ? p->method : rec && rec->method ? rec->method : p->name;
        printf("%s: %u run%s of %s recorded in %s, placed by %s\n", o->path, pr.runs, pr.runs == 1 ? "" : "s", method,
               o->etdump, by_handles ? "the ETRecord's debug handles" : "the program's instructions");
        if (pr.execute_seconds > 0) printf("  Method::execute  %.3f ms a run\n", pr.execute_seconds * 1e3 / (pr.runs ? pr.runs : 1));
        printf("  %u profile events: %u on a node, %u framework, %u inside a delegate with no node of their own, %u unmatched\n",
               pr.n_events, pr.n_matched, pr.n_framework, pr.n_in_delegate, pr.n_unmatched);
        if (rows.n) printf("  %-40s %5s %6s %10s\n", "node", "instr", "calls", "mean ms");
        for (uint32_t i = 0; i < rows.n; i++) {
            const row *r = &rows.v[i];
            char name[160];
            snprintf(name, sizeof name, "%s%s%s", r->program ? "  " : "", r->program ? "· " : "", r->node->name);
            printf("  %-40s %5d %6u %10.4f  %s", name, r->instruction, r->st->runs,
                   r->st->runs ? r->st->seconds * 1e3 / r->st->runs : 0, node_target(r->node));
            if (r->sub) printf(" (%s, %s)", r->sub, r->backend ? r->backend : "?");
            putchar('\n');
        }
        if (pr.n_unmatched) printf("unmatched events (%u):\n", pr.n_unmatched);
        for (uint32_t i = 0; i < pr.n_events; i++) {
            const ls_etd_mapped *m = &pr.events[i];
            if (m->match == LS_ETD_MATCHED || m->match == LS_ETD_FRAMEWORK || m->match == LS_ETD_IN_DELEGATE) continue;
            const ls_etd_event *e = &d.runs[m->run].events[m->event];
            char nb[96];
            printf("  run %u event %u: %s at chain %" PRId64 " instruction %d: %s (%.4f ms)\n", m->run, m->event,
                   event_name(e, nb, sizeof nb), e->chain_index, e->instruction_id, ls_etd_match_text((ls_etd_match)m->match),
                   m->seconds * 1e3);
        }
    }
    ls_buf_free(&b);
    free(rows.v);
    free(instr_of);
    ls_etd_profile_free(&pr);
    ls_etd_index_free(x);
    ls_etdump_free(&d);
    ls_program_unref(loaded);
    return LS_EXIT_OK;
}
