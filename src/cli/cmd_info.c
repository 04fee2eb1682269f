/* lowerscope info FILE [--json] [--model NAME] [--metadata-only]: what a program holds, in a
 * few lines (or JSON, format_version 1, documented in docs/cli.md). */
#include <inttypes.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "cli.h"
#include "info_devtools.h"
#include "info_pte.h"
#include "named_data.h"
#include "ops.h"
#include "ptrmap.h"
#include "pte_file.h"
#include "verify.h"

int ls_cmd_info(int argc, char **argv);

#define USAGE "info FILE [--json] [--model NAME] [--metadata-only]"
static const char HELP[] =
    "usage: lowerscope " USAGE "\n"
    "\n"
    "What a program holds, in a few lines: nodes by kind, operators, inputs and outputs by kind,\n"
    "weights, delegation tags, lowered submodules and the verifier's result.\n"
    "\n"
    "options:\n"
    "  --json                one JSON document instead of the text (format_version 1, docs/cli.md)\n"
    "  --model NAME          which models/NAME.json of an archive holding several (default: model,\n"
    "                        or the only one)\n"
    "  --metadata-only       do not read the weights' configs either (info reads their sizes, never\n"
    "                        their bytes: a damaged weight, its CRC-32 wrong, is found by verify)\n"
    CLI_PTE_OPTIONS_HELP
    "  -h, --help            this help\n"
    "\n"
    "exit codes: 0 the file was read (whatever the verifier says), 2 unreadable input or bad usage,\n"
    "3 a file lowerscope cannot read the weights of (a big-endian archive: --metadata-only reads\n"
    "it without them), out of memory\n";

#define INFO_FORMAT_VERSION 1

/* ---- counting */

typedef struct count {
    const char *key; /* interned: target, kind or tag */
    uint32_t n;
    uint64_t bytes;
} count;

typedef struct counts {
    LS_VEC(count) v;
    ls_ptrmap ix;
} counts;

static count *bump(counts *c, const char *key, uint64_t bytes)
{
    uintptr_t i;
    if (!ls_ptrmap_get(&c->ix, key, &i)) {
        count z = {key, 0, 0};
        i = c->v.n;
        ls_ptrmap_put(&c->ix, key, i);
        ls_vec_push(&c->v, z);
    }
    c->v.v[i].n++;
    c->v.v[i].bytes += bytes;
    return &c->v.v[i];
}

static int by_count_desc(const void *a, const void *b)
{
    const count *x = a, *y = b;
    if (x->n != y->n) return x->n < y->n ? 1 : -1;
    return strcmp(x->key, y->key);
}

static void counts_free(counts *c)
{
    free(c->v.v);
    ls_ptrmap_free(&c->ix);
}

typedef struct summary {
    counts kinds, ops, inputs, outputs, tags;
    LS_VEC(const char *) unknown; /* distinct unknown targets */
    uint64_t weight_bytes;
    uint32_t weight_tensors;
} summary;

static void summarize(const ls_program *p, summary *s)
{
    memset(s, 0, sizeof *s);
    ls_ptrmap unknown_seen = {0};
    for (uint32_t i = 0; i < p->n_nodes; i++) {
        const ls_node *n = p->nodes[i];
        bump(&s->kinds, ls_intern(ls_node_kind_name((ls_node_kind)n->kind)), 0);
        if (n->tag) bump(&s->tags, n->tag, 0);
        if (n->kind != LS_NODE_CALL) continue;
        const char *target = n->target ? n->target : ls_intern("?");
        bump(&s->ops, target, 0);
        if (!n->op && !ls_ptrmap_get(&unknown_seen, target, NULL)) {
            ls_ptrmap_put(&unknown_seen, target, 1);
            ls_vec_push(&s->unknown, target);
        }
    }
    ls_ptrmap_free(&unknown_seen);
    for (uint32_t i = 0; i < p->n_inputs; i++) {
        const ls_input_spec *in = &p->inputs[i];
        int32_t pos = in->name ? ls_program_find(p, in->name) : -1;
        const ls_node *n = pos >= 0 ? p->nodes[pos] : NULL;
        uint64_t b = n && n->val_kind == LS_VAL_TENSOR ? ls_tmeta_nbytes(&n->vals[0]) : 0;
        bump(&s->inputs, ls_intern(ls_input_kind_name((ls_input_kind)in->kind)), b);
    }
    for (uint32_t i = 0; i < p->n_outputs; i++)
        bump(&s->outputs, ls_intern(ls_output_kind_name((ls_output_kind)p->outputs[i].kind)), 0);
    for (uint32_t i = 0; i < p->n_state; i++, s->weight_tensors++) s->weight_bytes += ls_tmeta_nbytes(p->state_dict[i].meta);
    for (uint32_t i = 0; i < p->n_constants; i++, s->weight_tensors++) s->weight_bytes += ls_tmeta_nbytes(p->constants[i].meta);
    if (s->ops.v.n > 1) qsort(s->ops.v.v, s->ops.v.n, sizeof(count), by_count_desc);
}

static void summary_free(summary *s)
{
    counts_free(&s->kinds);
    counts_free(&s->ops);
    counts_free(&s->inputs);
    counts_free(&s->outputs);
    counts_free(&s->tags);
    free(s->unknown.v);
}

/* The named data delegates read by key: a .ptd's entries that are the file's external tensors
 * are weights, counted with the tensors, not twice. */
static uint32_t delegate_named_data(const ls_program *p, uint64_t *bytes)
{
    const ls_pte_file *f = ls_program_pte_file(p);
    uint32_t n = 0;
    *bytes = 0;
    for (uint32_t i = 0; i < ls_named_data_count(p->named_data); i++) {
        if (f && ls_pte_file_is_external(f, ls_named_data_key(p->named_data, i))) continue;
        n++;
        *bytes += ls_named_data_blob(p->named_data, i)->size;
    }
    return n;
}

static uint32_t sub_nodes(const ls_submodule *sub)
{
    return sub->program ? sub->program->n_nodes : 0;
}

/* ---- the human form */

static void print_counts(const char *label, uint32_t total, const counts *c, bool with_bytes, uint32_t max)
{
    printf("  %-9s %u", label, total);
    char hb[32];
    for (uint32_t i = 0; i < c->v.n && i < max; i++) {
        printf("%s%s %u", i ? " · " : ": ", c->v.v[i].key, c->v.v[i].n);
        if (with_bytes && c->v.v[i].bytes) printf(" (%s)", ls_fmt_bytes(c->v.v[i].bytes, hb, sizeof hb));
    }
    if (c->v.n > max) printf(" · %u more", c->v.n - max);
    printf("\n");
}

static void print_human(const char *path, const ls_program *p, const summary *s, const ls_verify_result *vr)
{
    char hb[32];
    printf("%s\n", path);
    printf("  program   %s · %s (%s)", p->name, ls_dialect_name((ls_dialect)p->dialect), p->verifier ? p->verifier : "-");
    if (p->torch_version) printf(" · torch %s", p->torch_version);
    printf(" · schema %d.%d\n", p->schema_major, p->schema_minor);
    print_counts("nodes", p->n_nodes, &s->kinds, false, 8);
    /* ops by count, short names */
    uint32_t calls = 0;
    for (uint32_t i = 0; i < s->ops.v.n; i++) calls += s->ops.v.v[i].n;
    printf("  %-9s %u", "ops", calls);
    for (uint32_t i = 0; i < s->ops.v.n && i < 8; i++) {
        ls_dialect d;
        const ls_op *op = ls_op_from_target(s->ops.v.v[i].key, &d);
        printf("%s%s%s %u", i ? " · " : ": ", ls_target_short(s->ops.v.v[i].key), op ? "" : "?", s->ops.v.v[i].n);
    }
    if (s->ops.v.n > 8) printf(" · %u more", s->ops.v.n - 8);
    printf("\n");
    if (s->unknown.n) {
        printf("  %-9s %u op%s lowerscope does not know (shown, never run or delegated):", "unknown", s->unknown.n,
               s->unknown.n == 1 ? "" : "s");
        for (uint32_t i = 0; i < s->unknown.n && i < 4; i++) printf("%s %s", i ? "," : "", s->unknown.v[i]);
        printf("%s\n", s->unknown.n > 4 ? ", ..." : "");
    }
    print_counts("inputs", p->n_inputs, &s->inputs, true, 8);
    print_counts("outputs", p->n_outputs, &s->outputs, false, 8);
    uint64_t named_bytes;
    uint32_t n_named = delegate_named_data(p, &named_bytes);
    if (!p->has_weights && !p->weights_unread) printf("  %-9s metadata only: no weight data (none in the file, or --metadata-only)\n", "weights");
    else if (s->weight_tensors || n_named) {
        printf("  %-9s %s in %u tensor%s", "weights", ls_fmt_bytes(s->weight_bytes, hb, sizeof hb), s->weight_tensors,
               s->weight_tensors == 1 ? "" : "s");
        if (n_named) /* what delegates read by key (XNNPACK's weights) */
            printf(", %s in %u named data entr%s", ls_fmt_bytes(named_bytes, hb, sizeof hb), n_named, n_named == 1 ? "y" : "ies");
        printf("\n");
    }
    if (s->tags.v.n) {
        printf("  %-9s %u", "tags", s->tags.v.n);
        for (uint32_t i = 0; i < s->tags.v.n && i < 8; i++) {
            const char *be = ls_program_tag_backend(p, s->tags.v.v[i].key);
            printf("%s%s %u node%s%s%s", i ? " · " : ": ", s->tags.v.v[i].key, s->tags.v.v[i].n,
                   s->tags.v.v[i].n == 1 ? "" : "s", be ? " → " : "", be ? be : "");
        }
        printf("%s\n", s->tags.v.n > 8 ? " · ..." : "");
    } else {
        printf("  %-9s none\n", "tags");
    }
    uint32_t getattrs = 0;
    for (uint32_t i = 0; i < p->n_nodes; i++) getattrs += p->nodes[i]->kind == LS_NODE_GET_ATTR;
    if (p->n_subs) info_delegates_text(p);
    if (getattrs > p->n_subs) {
        printf("  %-9s", "lowered");
        uint32_t shown = 0;
        for (uint32_t i = 0; i < p->n_nodes && shown < 6; i++) {
            const ls_node *n = p->nodes[i];
            if (n->kind != LS_NODE_GET_ATTR || ls_program_sub(p, n->target)) continue;
            printf("%s%s (not in the file)", shown++ ? " · " : " ", n->target ? n->target : n->name);
        }
        printf("\n");
    }
    info_pte_text(p);
    uint32_t warnings = vr->n - vr->n_errors;
    if (!vr->n) {
        printf("  %-9s ok\n", "verifier");
    } else {
        printf("  %-9s %u error%s, %u warning%s", "verifier", vr->n_errors, vr->n_errors == 1 ? "" : "s", warnings,
               warnings == 1 ? "" : "s");
        const ls_finding *f = vr->v;
        for (uint32_t i = 0; i < vr->n; i++)
            if (vr->v[i].severity == LS_SEV_ERROR) {
                f = &vr->v[i];
                break;
            }
        int len = (int)strlen(f->msg);
        printf(": %s%s%.*s%s\n", f->program ? f->program : "", f->program ? ": " : "", len > 100 ? 100 : len, f->msg,
               len > 100 ? "..." : "");
        printf("  %-9s lowerscope verify %s lists %s\n", "", path, vr->n == 1 ? "it" : "them all");
    }
}

/* ---- the JSON form */

static void json_counts(ls_buf *b, const char *key, const counts *c, bool with_bytes)
{
    ls_buf_printf(b, ",\"%s\":{", key);
    for (uint32_t i = 0; i < c->v.n; i++) {
        if (i) ls_buf_putc(b, ',');
        ls_buf_json_str(b, c->v.v[i].key);
        if (with_bytes) ls_buf_printf(b, ":{\"count\":%u,\"bytes\":%" PRIu64 "}", c->v.v[i].n, c->v.v[i].bytes);
        else ls_buf_printf(b, ":%u", c->v.v[i].n);
    }
    ls_buf_putc(b, '}');
}

static void json_meta(ls_buf *b, const ls_node *n)
{
    if (!n || n->val_kind != LS_VAL_TENSOR) {
        ls_buf_puts(b, ",\"dtype\":null,\"shape\":null,\"bytes\":null");
        return;
    }
    const ls_tmeta *m = &n->vals[0];
    ls_buf_puts(b, ",\"dtype\":");
    ls_buf_json_str(b, ls_dtype_name(m->dtype));
    ls_buf_puts(b, ",\"shape\":[");
    for (int d = 0; d < m->ndim; d++) {
        if (d) ls_buf_putc(b, ',');
        if (m->sym[d]) ls_buf_json_str(b, m->sym[d]);
        else ls_buf_printf(b, "%" PRId64, m->sizes[d]);
    }
    ls_buf_printf(b, "],\"bytes\":%" PRIu64, ls_tmeta_nbytes(m));
}

static void print_json(const char *path, const ls_program *p, const summary *s, const ls_verify_result *vr,
                       const char *extra)
{
    ls_buf b = {0};
    ls_buf_printf(&b, "{\"format_version\":%d,\"file\":", INFO_FORMAT_VERSION);
    ls_buf_json_str(&b, path);
    ls_buf_puts(&b, ",\"name\":");
    ls_buf_json_str(&b, p->name);
    ls_buf_puts(&b, ",\"dialect\":");
    ls_buf_json_str(&b, ls_dialect_name((ls_dialect)p->dialect));
    ls_buf_puts(&b, ",\"verifier\":");
    ls_buf_json_str(&b, p->verifier);
    ls_buf_puts(&b, ",\"torch_version\":");
    ls_buf_json_str(&b, p->torch_version);
    ls_buf_printf(&b, ",\"schema_version\":\"%d.%d\",\"has_weights\":%s,\"weight_bytes\":%" PRIu64, p->schema_major,
                  p->schema_minor, p->has_weights || p->weights_unread ? "true" : "false", s->weight_bytes);
    uint64_t named_bytes;
    delegate_named_data(p, &named_bytes);
    ls_buf_printf(&b, ",\"named_data_bytes\":%" PRIu64, named_bytes);
    ls_buf_printf(&b, ",\"nodes\":{\"total\":%u", p->n_nodes);
    json_counts(&b, "by_kind", &s->kinds, false);
    json_counts(&b, "by_target", &s->ops, false);
    ls_buf_puts(&b, "},\"unknown_targets\":[");
    for (uint32_t i = 0; i < s->unknown.n; i++) {
        if (i) ls_buf_putc(&b, ',');
        ls_buf_json_str(&b, s->unknown.v[i]);
    }
    ls_buf_puts(&b, "]");
    json_counts(&b, "inputs_by_kind", &s->inputs, true);
    ls_buf_puts(&b, ",\"inputs\":[");
    for (uint32_t i = 0; i < p->n_inputs; i++) {
        const ls_input_spec *in = &p->inputs[i];
        int32_t pos = in->name ? ls_program_find(p, in->name) : -1;
        ls_buf_puts(&b, i ? ",{\"name\":" : "{\"name\":");
        ls_buf_json_str(&b, in->name);
        ls_buf_puts(&b, ",\"kind\":");
        ls_buf_json_str(&b, ls_input_kind_name((ls_input_kind)in->kind));
        ls_buf_puts(&b, ",\"target\":");
        ls_buf_json_str(&b, in->target);
        if (in->kind == LS_IN_BUFFER) ls_buf_printf(&b, ",\"persistent\":%s", in->persistent ? "true" : "false");
        json_meta(&b, pos >= 0 ? p->nodes[pos] : NULL);
        ls_buf_putc(&b, '}');
    }
    ls_buf_puts(&b, "]");
    json_counts(&b, "outputs_by_kind", &s->outputs, false);
    ls_buf_puts(&b, ",\"outputs\":[");
    for (uint32_t i = 0; i < p->n_outputs; i++) {
        ls_buf_puts(&b, i ? ",{\"name\":" : "{\"name\":");
        ls_buf_json_str(&b, p->outputs[i].name);
        ls_buf_puts(&b, ",\"kind\":");
        ls_buf_json_str(&b, ls_output_kind_name((ls_output_kind)p->outputs[i].kind));
        ls_buf_puts(&b, ",\"target\":");
        ls_buf_json_str(&b, p->outputs[i].target);
        ls_buf_putc(&b, '}');
    }
    ls_buf_puts(&b, "],\"tags\":[");
    for (uint32_t i = 0; i < s->tags.v.n; i++) {
        ls_buf_puts(&b, i ? ",{\"tag\":" : "{\"tag\":");
        ls_buf_json_str(&b, s->tags.v.v[i].key);
        ls_buf_puts(&b, ",\"backend\":");
        ls_buf_json_str(&b, ls_program_tag_backend(p, s->tags.v.v[i].key));
        ls_buf_printf(&b, ",\"nodes\":%u}", s->tags.v.v[i].n);
    }
    ls_buf_puts(&b, "],\"submodules\":[");
    for (uint32_t i = 0; i < p->n_subs; i++) {
        ls_buf_puts(&b, i ? ",{\"name\":" : "{\"name\":");
        ls_buf_json_str(&b, p->subs[i].name);
        ls_buf_puts(&b, ",\"backend_id\":");
        ls_buf_json_str(&b, p->subs[i].backend_id);
        ls_buf_printf(&b, ",\"nodes\":%u}", sub_nodes(&p->subs[i]));
    }
    ls_buf_putc(&b, ']');
    info_delegates_json(&b, p);
    info_pte_json(&b, p);
    ls_buf_printf(&b, ",\"verify\":{\"ok\":%s,\"errors\":%u,\"warnings\":%u,\"findings\":[",
                  vr->n_errors ? "false" : "true", vr->n_errors, vr->n - vr->n_errors);
    for (uint32_t i = 0; i < vr->n; i++) {
        const ls_finding *f = &vr->v[i];
        ls_buf_printf(&b, "%s{\"severity\":\"%s\",\"program\":", i ? "," : "",
                      f->severity == LS_SEV_ERROR ? "error" : "warning");
        ls_buf_json_str(&b, f->program);
        ls_buf_puts(&b, ",\"node\":");
        ls_buf_json_str(&b, f->node);
        ls_buf_puts(&b, ",\"message\":");
        ls_buf_json_str(&b, f->msg);
        ls_buf_putc(&b, '}');
    }
    ls_buf_puts(&b, "]}");
    if (extra) ls_buf_puts(&b, extra);
    ls_buf_puts(&b, "}\n");
    fputs(b.s, stdout);
    ls_buf_free(&b);
}

int ls_cmd_info(int argc, char **argv)
{
    if (ls_cli_help(argc, argv, HELP)) return LS_EXIT_OK;
    cli_args a;
    ls_program *p;
    /* info shows the weights' sizes, never their values: it does not read their bytes */
    int loaded = ls_cli_load("info", USAGE, argc, argv, CLI_JSON | CLI_WEIGHT_SIZES, &a, &p);
    if (loaded != LS_EXIT_OK) return loaded;
    ls_verify_result vr;
    ls_verify(p, &vr);
    summary s;
    summarize(p, &s);
    ls_buf extra = {0};
    int rc = LS_EXIT_OK;
    if (a.json) {
        if (cli_info_devtools(a.path, p, &extra) != 0) rc = LS_EXIT_INPUT;
        else print_json(a.path, p, &s, &vr, extra.s);
    } else {
        print_human(a.path, p, &s, &vr);
        if (cli_info_devtools(a.path, p, NULL) != 0) rc = LS_EXIT_INPUT;
    }
    ls_buf_free(&extra);
    summary_free(&s);
    ls_verify_result_free(&vr);
    ls_program_unref(p);
    return rc;
}
