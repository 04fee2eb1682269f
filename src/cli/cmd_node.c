/* lowerscope node FILE NAME [--step S] [--json]: everything about one node at a step — the UI's
 * node pane as text or JSON (views/view_node.c shows the same facts): kind and target, schema,
 * value type, where it runs (its tag, the lowered module it calls or is in, or why it stays on
 * the CPU), the verifier's findings naming it, its output spec, arguments and users, for a
 * placeholder its input spec, data, hash, first values and who holds it or its copies
 * (held_by.h, the computation the pane uses), and where it came from (stack trace, module
 * stack, source_fn, torch_fn, debug handle). The facts are gathered once and printed either
 * way, so the text and the JSON say the same. */
#include <inttypes.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "backend.h"
#include "delegation.h"
#include "graph_around.h"
#include "held_by.h"
#include "pipeline_cli.h"
#include "pte_file.h"
#include "regions.h"
#include "tensor.h"

int ls_cmd_node(int argc, char **argv);

#define USAGE "node FILE NAME [--step S] [--json] [--method NAME] [--backend NAME|FILE]... [--pipeline a,b,...]"
static const char HELP[] =
    "usage: lowerscope " USAGE "\n"
    "\n"
    "Everything about one node at a step (default: the last), as the UI's node pane shows it: kind and\n"
    "target, schema, value type, where it runs (its tag and backend, the lowered module it calls or\n"
    "is in, or why it stays on the CPU), the verifier's findings naming it, its output spec, its\n"
    "arguments and users; for a placeholder its input spec, dtype and shape, bytes, content hash and\n"
    "first values, and which programs hold it or its copies (the same target, or the same bytes:\n"
    "duplicate_constants' copies); and where it came from: stack trace, module stack, source_fn,\n"
    "torch_fn, debug handle.\n"
    "NAME: a name at the top level, a name inside a lowered module, or lowered_module_0/NAME (as\n"
    "graph --around).\n"
    "\n"
    "options:\n" CLI_STEP_OPTION_HELP
    "  --json                one JSON document (format_version 1, docs/cli.md)\n" CLI_PIPELINE_OPTIONS_HELP CLI_LOAD_OPTIONS_HELP
    "  -h, --help            this help\n"
    "\n"
    "exit codes: 0 printed; 1 the step's pass failed (the program before it is shown), 3 the same\n"
    "when it stopped on what lowerscope lacks; 2 unreadable input, no such step or node, or bad options\n";

/* ---- the facts, gathered once */

typedef struct fact_line {
    const char *label; /* "users" ... for the list's entries: NULL */
    char *text;
} fact_line;

typedef struct arg_line {
    char *label;
    const char *node; /* the argument's node, or NULL for a value */
    char *text;       /* its type (a node) or value */
    bool is_default;
} arg_line;

typedef struct node_facts {
    const ls_program *p;
    const char *sub; /* the lowered module holding it, NULL: the top level */
    const ls_node *n;
    char value[256];
    /* where it runs: one of */
    const char *runs;   /* "delegate", "lowered_module", "tag", "cpu" or NULL (placeholders, outputs) */
    const char *module; /* delegate: the module it calls; lowered_module: the module it is in */
    const char *tag, *backend;
    int32_t module_nodes; /* delegate: the nodes inside, -1 when its blob is opaque */
    ls_delegate_facts blob;
    const char *cpu_reason, *cpu_detail;
    bool refused;
    LS_VEC(const ls_finding *) findings;
    const ls_output_spec *output;
    LS_VEC(arg_line) args;
    const uint32_t *users;
    uint32_t n_users;
    const ls_input_spec *spec;
    const ls_named_tensor *data;
    char data_type[128];
    uint64_t data_bytes;
    uint64_t hash;
    char *values;
    ls_held_index held;
    uint32_t *holders, n_holders;
    const ls_node_text *texts;
    const char *status; /* what the step did to it: "added", "changed" or NULL */
    char *now, *was;    /* a changed node as it is and as it was (ls_node_describe), when they differ */
} node_facts;

static const char *tag_backend(const cli_run *r, const ls_program *p, const char *tag)
{
    const char *be = ls_program_tag_backend(p, tag);
    if (be) return be;
    const char **tags, **backends;
    uint32_t nt = ls_history_tags(&r->h, &tags, &backends);
    for (uint32_t i = 0; i < nt; i++)
        if (tags[i] == tag) be = backends[i];
    free(tags);
    free(backends);
    return be;
}

/* The lowered module a delegate call (or its get_attr) calls: as the pane's `why`. */
static const char *called_module(const ls_program *p, const ls_node *n)
{
    if (n->kind == LS_NODE_GET_ATTR && ls_program_sub(p, n->target)) return n->target;
    if (n->kind != LS_NODE_CALL || !n->op || n->op->id != LS_OP_call_delegate || !n->nargs || n->args[0].kind != LS_ARG_NODE)
        return NULL;
    const ls_node *ga = ls_program_node(p, n->args[0].v.node);
    return ga && ga->kind == LS_NODE_GET_ATTR ? ga->target : NULL;
}

static void where_it_runs(const cli_run *r, int s, const ls_program *top, node_facts *f)
{
    const ls_program *p = f->p;
    const ls_node *n = f->n;
    f->module_nodes = -1;
    const char *mod = called_module(p, n);
    if (mod) {
        const ls_submodule *m = ls_program_sub(p, mod);
        f->runs = "delegate";
        f->module = mod;
        f->backend = m ? m->backend_id : NULL;
        if (m && m->program) f->module_nodes = (int32_t)m->program->n_nodes;
        if (m && !m->program) {
            ls_delegate_view v = ls_program_delegate_view(p, m);
            ls_delegate_describe(&v, &f->blob);
        }
        return;
    }
    if (f->sub) {
        const ls_submodule *m = ls_program_sub(top, f->sub);
        f->runs = "lowered_module";
        f->module = f->sub;
        f->backend = m ? m->backend_id : NULL;
        return;
    }
    if (n->tag) {
        f->runs = "tag";
        f->tag = n->tag;
        f->backend = tag_backend(r, p, n->tag);
        return;
    }
    if (n->kind != LS_NODE_CALL) return;
    f->runs = "cpu";
    f->refused = n->reason != LS_WHY_NONE || !n->op;
    f->cpu_reason = ls_deleg_cpu_reason(&r->h, (uint32_t)s, n);
    f->cpu_detail = n->reason_detail;
}

static void args_of(node_facts *f)
{
    const ls_program *p = f->p;
    const ls_node *n = f->n;
    for (uint16_t i = 0; i < n->nargs; i++) {
        const ls_arg *a = &n->args[i];
        char label[64];
        if (a->name) snprintf(label, sizeof label, "%s", a->name);
        else snprintf(label, sizeof label, "%u", i);
        uint32_t cnt = a->kind == LS_ARG_NODE ? 1 : a->kind == LS_ARG_NODES || a->kind == LS_ARG_OPT_NODES ? a->n : 0;
        if (!cnt) {
            ls_buf b = {0};
            ls_arg_text(p, a, &b);
            ls_vec_push(&f->args, ((arg_line){ls_strdup(label), NULL, ls_buf_take(&b), (a->flags & LS_ARGF_DEFAULT) != 0}));
            continue;
        }
        for (uint32_t k = 0; k < cnt; k++) {
            uint32_t id = a->kind == LS_ARG_NODE ? a->v.node : a->v.nodes[k];
            char lab[80];
            if (cnt > 1 || a->kind != LS_ARG_NODE) snprintf(lab, sizeof lab, "%s[%u]", label, k);
            else snprintf(lab, sizeof lab, "%s", label);
            const ls_node *src = id ? ls_program_node(p, id) : NULL;
            char t[256] = "";
            if (src) ls_node_type_str(src, t, sizeof t);
            ls_vec_push(&f->args, ((arg_line){ls_strdup(lab), src ? src->name : NULL,
                                              ls_strdup(src ? t : id ? "(not in this program)" : "None"), false}));
        }
    }
}

/* What the step did to the node, as the node pane says it: added, or changed (with the node
 * before it, as lowerscope diff describes the two). One pass over the step's changes. */
static void change_of(const cli_run *r, int s, node_facts *f)
{
    if (s == 0) return;
    const ls_step *st = &r->h.steps[s];
    const char *scope = f->sub ? ls_intern(f->sub) : NULL;
    const ls_change *c = NULL;
    for (uint32_t i = 0; i < st->n_changes && !c; i++)
        if (st->changes[i].program == scope && st->changes[i].node_id == f->n->id && st->changes[i].kind != LS_CHANGE_REMOVED)
            c = &st->changes[i];
    if (!c) return;
    f->status = c->kind == LS_CHANGE_ADDED ? "added" : "changed";
    const ls_program *prev = r->h.steps[s - 1].program;
    if (scope) {
        const ls_submodule *sm = ls_program_sub(prev, scope);
        prev = sm ? sm->program : NULL;
    }
    const ls_node *old_n = c->kind == LS_CHANGE_CHANGED && prev ? ls_program_node(prev, f->n->id) : NULL;
    if (!old_n) return;
    ls_buf now = {0}, was = {0};
    ls_node_describe(f->p, f->n, &now);
    ls_node_describe(prev, old_n, &was);
    if (strcmp(now.s, was.s) != 0) {
        f->now = ls_buf_take(&now);
        f->was = ls_buf_take(&was);
    }
    ls_buf_free(&now);
    ls_buf_free(&was);
}

static void gather(const cli_run *r, int s, node_facts *f)
{
    const ls_program *top = r->h.steps[s].program, *p = f->p;
    const ls_node *n = f->n;
    ls_node_type_str(n, f->value, sizeof f->value);
    where_it_runs(r, s, top, f);
    const ls_verify_result *v = &r->h.steps[s].verify;
    for (uint32_t i = 0; i < v->n; i++)
        if (v->v[i].node == n->name && v->v[i].program == f->sub) ls_vec_push(&f->findings, &v->v[i]);
    int32_t os = ls_program_output_spec(p, n->name);
    f->output = os >= 0 ? &p->outputs[os] : NULL;
    args_of(f);
    int32_t pos = ls_program_pos(p, n->id);
    if (pos >= 0) f->users = ls_program_users(p, (uint32_t)pos, &f->n_users);
    int32_t si = n->kind == LS_NODE_PLACEHOLDER ? ls_program_input_spec(p, n->name) : -1;
    f->spec = si >= 0 ? &p->inputs[si] : NULL;
    if (f->spec) {
        ls_named_tensor *nt = ls_program_spec_data(p, f->spec);
        f->data = nt;
        if (nt) {
            ls_tmeta_str(nt->meta, f->data_type, sizeof f->data_type);
            f->data_bytes = ls_tmeta_nbytes(nt->meta);
            if (nt->t) {
                f->hash = ls_tensor_hash(nt->t);
                ls_buf b = {0};
                ls_tensor_preview(nt->t, 8, &b);
                f->values = ls_buf_take(&b);
            }
        }
        ls_held_index_build(&f->held, top);
        f->n_holders = ls_held_by(&f->held, p, f->spec, &f->holders);
    }
    f->texts = ls_node_texts(n);
    change_of(r, s, f);
}

static void facts_free(node_facts *f)
{
    ls_delegate_facts_free(&f->blob);
    free(f->findings.v);
    for (uint32_t i = 0; i < f->args.n; i++) {
        free(f->args.v[i].label);
        free(f->args.v[i].text);
    }
    free(f->args.v);
    free(f->values);
    free(f->now);
    free(f->was);
    free(f->holders);
    if (f->spec) ls_held_index_free(&f->held);
}

/* ---- text: the pane's lines, labels in a column of 10 */

/* A label, then the text a line at a time (the first line beside the label). */
static void text_block(const char *label, const char *text)
{
    bool first = true;
    for (const char *s = text; s && *s;) {
        const char *e = strchr(s, '\n');
        size_t n = e ? (size_t)(e - s) : strlen(s);
        if (n) printf("%-10s%.*s\n", first ? label : "", (int)n, s);
        first = false;
        s = e ? e + 1 : NULL;
    }
}

static void print_text(const cli_run *r, int s, const node_facts *f)
{
    const ls_node *n = f->n;
    const ls_program *p = f->p;
    ls_buf t = {0};
    cli_step_title(&t, &r->h, s);
    printf("%s, %s: node %s%s%s\n", r->args.path, t.s, f->sub ? f->sub : "", f->sub ? "/" : "", n->name);
    ls_buf_free(&t);
    if (f->status) printf("%-10s%s by this step\n", "status", f->status);
    /* where it runs and why first, then what it was, as the node pane has them */
    if (f->runs && !strcmp(f->runs, "delegate")) {
        if (f->module_nodes >= 0)
            printf("%-10scalls %s on %s · %d nodes inside\n", "delegate", f->module, f->backend ? f->backend : "?", f->module_nodes);
        else printf("%-10scalls %s on %s · its blob is opaque to lowerscope\n", "delegate", f->module, f->backend ? f->backend : "?");
        for (uint32_t k = 0; k < f->blob.n; k++)
            if (f->blob.v[k].label != ls_intern("backend")) printf("%-10s%s\n", f->blob.v[k].label, f->blob.v[k].text);
    } else if (f->runs && !strcmp(f->runs, "lowered_module")) {
        printf("%-10sinside %s: delegated to %s\n", "where", f->module, f->backend ? f->backend : "?");
    } else if (f->runs && !strcmp(f->runs, "tag")) {
        printf("%-10s%s → %s (delegated)\n", "tag", f->tag, f->backend ? f->backend : "?");
    } else if (f->runs) {
        printf("%-10sCPU: %s%s%s\n", "why", f->cpu_reason, f->cpu_detail ? " — " : "", f->cpu_detail ? f->cpu_detail : "");
    }
    if (f->now) printf("%-10s%s\n%-10s%s\n", "now", f->now, "was:", f->was);
    printf("%-10s%s%s%s\n", "kind", ls_node_kind_name((ls_node_kind)n->kind), n->target ? " · " : "", n->target ? n->target : "");
    if (n->kind == LS_NODE_CALL && n->op) printf("%-10s%s\n", "schema", n->op->schema_text);
    if (f->value[0]) printf("%-10s%s\n", "value", f->value);
    for (uint32_t i = 0; i < f->findings.n; i++)
        printf("%-10s%s\n", f->findings.v[i]->severity == LS_SEV_ERROR ? "error" : "warning", f->findings.v[i]->msg);
    if (f->output)
        printf("%-10s%s%s%s\n", "output", ls_output_kind_name((ls_output_kind)f->output->kind), f->output->target ? " · " : "",
               f->output->target ? f->output->target : "");
    if (f->args.n) printf("%s\n", n->kind == LS_NODE_OUTPUT ? "outputs" : "arguments");
    for (uint32_t i = 0; i < f->args.n; i++) {
        const arg_line *a = &f->args.v[i];
        if (a->node) printf("  %-18s %-18s %s\n", a->label, a->node, a->text);
        else printf("  %-18s %s%s\n", a->label, a->text, a->is_default ? " (default)" : "");
    }
    printf("users (%u)\n", f->n_users);
    for (uint32_t i = 0; i < f->n_users; i++) {
        const ls_node *un = p->nodes[f->users[i]];
        printf("  %-18s %s\n", un->name, cli_op_label(p, un));
    }
    if (f->spec) {
        printf("%-10s%s%s%s\n", "spec", ls_input_kind_name((ls_input_kind)f->spec->kind), f->spec->target ? " · target " : "",
               f->spec->target ? f->spec->target : "");
        if (f->spec->kind == LS_IN_BUFFER) printf("%-10s%s\n", "buffer", f->spec->persistent ? "persistent" : "not persistent");
        char bytes[32];
        if (!f->data) {
            if (f->spec->kind != LS_IN_USER_INPUT)
                printf("%-10sno data for %s in this program\n", "data", f->spec->target ? f->spec->target : "?");
        } else if (f->values) {
            printf("%-10s%s · %s · hash %016" PRIx64 "\n", "data", f->data_type, ls_fmt_bytes(f->data_bytes, bytes, sizeof bytes), f->hash);
            printf("%-10s%s\n", "values", f->values);
        } else {
            printf("%-10s%s · %s · no weights loaded\n", "data", f->data_type, ls_fmt_bytes(f->data_bytes, bytes, sizeof bytes));
        }
    }
    if (f->n_holders) {
        int pw = (int)strlen("top level"), nw = (int)strlen("placeholder");
        for (uint32_t i = 0; i < f->n_holders; i++) {
            const ls_holder *e = &f->held.v[f->holders[i]];
            const char *pn = ls_holder_sub_name(&f->held, e);
            int a = pn ? (int)strlen(pn) : 0, b = (int)strlen(ls_holder_program(&f->held, e)->inputs[e->input].name);
            if (a > pw) pw = a;
            if (b > nw) nw = b;
        }
        printf("held by (same target or the same bytes)\n  %-*s %-*s %s\n", pw, "program", nw, "placeholder", "target");
        for (uint32_t i = 0; i < f->n_holders; i++) {
            const ls_holder *e = &f->held.v[f->holders[i]];
            const char *pn = ls_holder_sub_name(&f->held, e);
            const ls_input_spec *o = &ls_holder_program(&f->held, e)->inputs[e->input];
            printf("  %-*s %-*s %s\n", pw, pn ? pn : "top level", nw, o->name, o->target);
        }
    }
    const ls_node_text *tx = f->texts;
    if (tx->stack_trace) text_block("stack", tx->stack_trace);
    if (tx->module_stack) /* "key,path,type;..." → a line each, a ';' in a name kept (program.h) */
        for (const char *m = tx->module_stack, *e = m, *label = "modules"; m; m = e) {
            size_t len = ls_module_stack_entry(m, &e);
            if (!len) continue;
            printf("%-10s%.*s\n", label, (int)len, m);
            label = "";
        }
    for (const char *m = tx->source_fn, *e = m, *label = "source_fn"; m; m = e) { /* an entry a line */
        size_t len = ls_source_fn_entry(m, &e);
        if (!len) continue;
        printf("%-10s%.*s\n", label, (int)len, m);
        label = "";
    }
    if (tx->torch_fn) text_block("torch_fn", tx->torch_fn);
    if (n->debug_handle) printf("%-10s%" PRId64 "\n", "debug", n->debug_handle);
    if (n->no_copy) printf("%-10sno_copy: never duplicated\n", "meta");
}

/* ---- JSON */

static void json_field(ls_buf *b, const char *key, const char *value)
{
    ls_buf_printf(b, ", \"%s\": ", key);
    ls_buf_json_str(b, value);
}

static void print_json(const cli_run *r, int s, const node_facts *f)
{
    const ls_node *n = f->n;
    const ls_program *p = f->p;
    ls_buf b = {0};
    ls_buf_puts(&b, "{\"format_version\": 1");
    json_field(&b, "file", r->args.path);
    ls_buf_printf(&b, ", \"step\": %d", s);
    json_field(&b, "pass", r->h.steps[s].pass);
    json_field(&b, "detail", r->h.steps[s].detail);
    json_field(&b, "lowered_module", f->sub);
    json_field(&b, "name", n->name);
    json_field(&b, "kind", ls_node_kind_name((ls_node_kind)n->kind));
    json_field(&b, "target", n->target);
    json_field(&b, "op", cli_op_label(p, n));
    json_field(&b, "schema", n->kind == LS_NODE_CALL && n->op ? n->op->schema_text : NULL);
    json_field(&b, "value", f->value[0] ? f->value : NULL);
    json_field(&b, "status", f->status);
    json_field(&b, "now", f->now);
    json_field(&b, "was", f->was);
    ls_buf_puts(&b, ",\n \"runs\": ");
    if (!f->runs) ls_buf_puts(&b, "null");
    else {
        ls_buf_puts(&b, "{\"on\": ");
        ls_buf_json_str(&b, f->runs);
        if (f->module) json_field(&b, "lowered_module", f->module);
        if (f->tag) json_field(&b, "tag", f->tag);
        if (strcmp(f->runs, "cpu") != 0) json_field(&b, "backend", f->backend);
        if (!strcmp(f->runs, "delegate")) {
            if (f->module_nodes >= 0) ls_buf_printf(&b, ", \"nodes\": %d", f->module_nodes);
            else ls_buf_puts(&b, ", \"nodes\": null");
            ls_buf_puts(&b, ", \"facts\": [");
            for (uint32_t k = 0, w = 0; k < f->blob.n; k++) {
                if (f->blob.v[k].label == ls_intern("backend")) continue;
                ls_buf_puts(&b, w++ ? ", {\"label\": " : "{\"label\": ");
                ls_buf_json_str(&b, f->blob.v[k].label);
                json_field(&b, "text", f->blob.v[k].text);
                ls_buf_putc(&b, '}');
            }
            ls_buf_putc(&b, ']');
        }
        if (!strcmp(f->runs, "cpu")) {
            json_field(&b, "reason", f->cpu_reason);
            json_field(&b, "detail", f->cpu_detail);
            ls_buf_printf(&b, ", \"refused\": %s", f->refused ? "true" : "false");
        }
        ls_buf_putc(&b, '}');
    }
    ls_buf_puts(&b, ",\n \"findings\": [");
    for (uint32_t i = 0; i < f->findings.n; i++) {
        ls_buf_printf(&b, "%s{\"severity\": \"%s\", \"message\": ", i ? ", " : "",
                      f->findings.v[i]->severity == LS_SEV_ERROR ? "error" : "warning");
        ls_buf_json_str(&b, f->findings.v[i]->msg);
        ls_buf_putc(&b, '}');
    }
    ls_buf_puts(&b, "],\n \"output\": ");
    if (!f->output) ls_buf_puts(&b, "null");
    else {
        ls_buf_puts(&b, "{\"kind\": ");
        ls_buf_json_str(&b, ls_output_kind_name((ls_output_kind)f->output->kind));
        json_field(&b, "target", f->output->target);
        ls_buf_putc(&b, '}');
    }
    ls_buf_puts(&b, ",\n \"arguments\": [");
    for (uint32_t i = 0; i < f->args.n; i++) {
        const arg_line *a = &f->args.v[i];
        ls_buf_puts(&b, i ? ",\n  {\"label\": " : "\n  {\"label\": ");
        ls_buf_json_str(&b, a->label);
        json_field(&b, "node", a->node);
        json_field(&b, a->node ? "type" : "value", a->text);
        ls_buf_printf(&b, ", \"default\": %s}", a->is_default ? "true" : "false");
    }
    ls_buf_puts(&b, "],\n \"users\": [");
    for (uint32_t i = 0; i < f->n_users; i++) {
        const ls_node *un = p->nodes[f->users[i]];
        ls_buf_puts(&b, i ? ", {\"name\": " : "{\"name\": ");
        ls_buf_json_str(&b, un->name);
        json_field(&b, "op", cli_op_label(p, un));
        ls_buf_putc(&b, '}');
    }
    ls_buf_puts(&b, "],\n \"input_spec\": ");
    if (!f->spec) ls_buf_puts(&b, "null");
    else {
        ls_buf_puts(&b, "{\"kind\": ");
        ls_buf_json_str(&b, ls_input_kind_name((ls_input_kind)f->spec->kind));
        json_field(&b, "target", f->spec->target);
        if (f->spec->kind == LS_IN_BUFFER) ls_buf_printf(&b, ", \"persistent\": %s", f->spec->persistent ? "true" : "false");
        ls_buf_puts(&b, ", \"data\": ");
        if (!f->data) ls_buf_puts(&b, "null");
        else {
            ls_buf_puts(&b, "{\"type\": ");
            ls_buf_json_str(&b, f->data_type);
            ls_buf_printf(&b, ", \"bytes\": %" PRIu64 ", \"hash\": ", f->data_bytes);
            if (f->values) ls_buf_printf(&b, "\"%016" PRIx64 "\"", f->hash);
            else ls_buf_puts(&b, "null");
            json_field(&b, "values", f->values);
            ls_buf_putc(&b, '}');
        }
        ls_buf_puts(&b, "}");
    }
    ls_buf_puts(&b, ",\n \"held_by\": [");
    for (uint32_t i = 0; i < f->n_holders; i++) {
        const ls_holder *e = &f->held.v[f->holders[i]];
        const ls_input_spec *o = &ls_holder_program(&f->held, e)->inputs[e->input];
        ls_buf_puts(&b, i ? ", {\"program\": " : "{\"program\": ");
        ls_buf_json_str(&b, ls_holder_sub_name(&f->held, e));
        json_field(&b, "placeholder", o->name);
        json_field(&b, "target", o->target);
        ls_buf_putc(&b, '}');
    }
    ls_buf_puts(&b, "]");
    const ls_node_text *tx = f->texts;
    json_field(&b, "stack_trace", tx->stack_trace);
    json_field(&b, "module_stack", tx->module_stack);
    json_field(&b, "source_fn", tx->source_fn);
    json_field(&b, "torch_fn", tx->torch_fn);
    if (n->debug_handle) ls_buf_printf(&b, ", \"debug_handle\": %" PRId64, n->debug_handle);
    else ls_buf_puts(&b, ", \"debug_handle\": null");
    ls_buf_printf(&b, ", \"no_copy\": %s}\n", n->no_copy ? "true" : "false");
    fputs(b.s, stdout);
    ls_buf_free(&b);
}

/* ---- the command */

/* The options taking a value, so NAME is told from them (FILE is the first word, NAME the second). */
static bool takes_value(const char *a)
{
    static const char *const opts[] = {"--step", "--model", "--method", "--data", "--ops", "--backend", "--pipeline",
                                       "--memory-planning"};
    for (size_t i = 0; i < sizeof opts / sizeof opts[0]; i++)
        if (!strcmp(a, opts[i])) return true;
    return false;
}

/* An option node knows that takes no value (--json, --relower, --metadata-only, ...). */
static bool is_flag(const char *a)
{
    if (!strcmp(a, "--json") || !strcmp(a, "--metadata-only")) return true;
    ls_pipeline_opts o;
    ls_pipeline_opts_init(&o);
    ls_error err;
    bool flag = ls_pipeline_opt(&o, a, NULL, &err) == 1;
    ls_pipeline_opts_free(&o);
    return flag;
}

int ls_cmd_node(int argc, char **argv)
{
    if (ls_cli_help(argc, argv, HELP)) return LS_EXIT_OK;
    const char *name = NULL;
    int words = 0, n = 0;
    char **rest = ls_malloc(sizeof *rest * (size_t)(argc + 1));
    for (int i = 0; i < argc; i++) {
        if (i && takes_value(argv[i]) && i + 1 < argc) {
            rest[n++] = argv[i++];
            rest[n++] = argv[i];
            continue;
        }
        /* the value of an --option=value no option above took: a flag's says so; an unknown
         * option's goes on with it, and the options' parser names the option */
        if (i && ls_cli_split_from(argv[i]) && is_flag(ls_cli_split_from(argv[i])) &&
            ls_cli_refuse_flag_value("node", USAGE, argv[i])) {
            free(rest);
            return LS_EXIT_INPUT;
        }
        if (i && ls_cli_split_from(argv[i])) {
            rest[n++] = argv[i];
            continue;
        }
        if (i && (argv[i][0] != '-' || !argv[i][1]) && ++words == 2) {
            name = argv[i];
            continue;
        }
        /* a word after an option this loop does not know goes on with it: the option may be
         * unknown, and the options' parser says so ("unknown option '--depth'") */
        bool after_option = i && argv[i - 1][0] == '-' && argv[i - 1][1] && !is_flag(argv[i - 1]);
        if (i && words > 2 && argv[i][0] != '-' && !after_option) {
            ls_cli_error("node: one NAME at a time ('%s' is a second one; usage: lowerscope %s)", argv[i], USAGE);
            free(rest);
            return LS_EXIT_INPUT;
        }
        rest[n++] = argv[i];
    }
    rest[n] = NULL;
    if (words == 1) {
        ls_cli_error("node: which node? (usage: lowerscope %s)", USAGE);
        free(rest);
        return LS_EXIT_INPUT;
    }
    cli_run r;
    int s;
    int rc = cli_run_pipeline_at_step("node", USAGE, n, rest, CLI_STEP | CLI_JSON, &r, &s);
    free(rest);
    if (rc != LS_EXIT_OK) return rc;
    node_facts f = {0};
    f.n = cli_find_node(r.h.steps[s].program, name, &f.p, &f.sub);
    if (!f.n) {
        ls_buf t = {0};
        cli_step_title(&t, &r.h, s);
        ls_cli_error("node: %s: no node `%s` at %s, at the top level or in a lowered module", r.args.path, name, t.s);
        ls_buf_free(&t);
        cli_run_free(&r);
        return LS_EXIT_INPUT;
    }
    gather(&r, s, &f);
    if (r.args.json) print_json(&r, s, &f);
    else print_text(&r, s, &f);
    facts_free(&f);
    rc = cli_note_step_failed("node", &r.h, s);
    cli_run_free(&r);
    return rc;
}
