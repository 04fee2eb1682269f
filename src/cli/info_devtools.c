/* info on a bundled program: its test cases (method, inputs and expected outputs by dtype and
 * shape); on an ETRecord: the steps it recorded and its delegate map, each delegate debug id
 * with the Edge node it stands for (etrecord.h). */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "bpte.h"
#include "etrecord.h"
#include "info_devtools.h"
#include "pte.h"
#include "run_devtools.h"

static void value_text(const ls_bp_value *v, char *buf, size_t cap)
{
    if (!v->has_val) {
        snprintf(buf, cap, "(empty)");
    } else if (v->kind == LS_BP_TENSOR) {
        const char *st = ls_et_scalar_type_name(v->scalar_type);
        int n = snprintf(buf, cap, "%s[", st ? st : "?");
        for (uint32_t d = 0; d < v->ndim && n > 0 && (size_t)n < cap; d++)
            n += snprintf(buf + n, cap - (size_t)n, "%s%d", d ? ", " : "", v->sizes[d]);
        if (n > 0 && (size_t)n < cap) snprintf(buf + n, cap - (size_t)n, "]");
    } else if (v->kind == LS_BP_INT) {
        snprintf(buf, cap, "Int %lld", (long long)v->int_val);
    } else if (v->kind == LS_BP_DOUBLE) {
        snprintf(buf, cap, "Double %g", v->double_val);
    } else if (v->kind == LS_BP_BOOL) {
        snprintf(buf, cap, "Bool %s", v->bool_val ? "true" : "false");
    } else {
        snprintf(buf, cap, "tag %u (unknown)", v->kind);
    }
}

static void values_text(const ls_bp_value *v, uint32_t n, ls_buf *b)
{
    char one[160];
    for (uint32_t i = 0; i < n; i++) {
        value_text(&v[i], one, sizeof one);
        ls_buf_printf(b, "%s%s", i ? ", " : "", one);
    }
    if (!n) ls_buf_puts(b, "none");
}

static void values_json(const ls_bp_value *v, uint32_t n, ls_buf *b)
{
    char one[160];
    ls_buf_putc(b, '[');
    for (uint32_t i = 0; i < n; i++) {
        value_text(&v[i], one, sizeof one);
        if (i) ls_buf_putc(b, ',');
        ls_buf_json_str(b, one);
    }
    ls_buf_putc(b, ']');
}

static int bundled(const char *path, ls_buf *json)
{
    ls_bpte b;
    ls_error err;
    if (ls_bpte_read_file(path, &b, &err) != 0) {
        ls_cli_error("%s", err.msg);
        return -1;
    }
    uint32_t total = 0;
    for (uint32_t s = 0; s < b.n_suites; s++) total += b.suites[s].n_cases;
    if (json) {
        ls_buf_printf(json, ",\"bundled\":{\"version\":%u,\"program_bytes\":%zu,\"cases\":[", b.version, b.program_size);
        bool first = true;
        for (uint32_t s = 0; s < b.n_suites; s++)
            for (uint32_t c = 0; c < b.suites[s].n_cases; c++) {
                const ls_bp_case *k = &b.suites[s].cases[c];
                ls_buf_puts(json, first ? "{\"method\":" : ",{\"method\":");
                first = false;
                ls_buf_json_str(json, b.suites[s].method_name);
                ls_buf_printf(json, ",\"suite\":%u,\"case\":%u,\"inputs\":", s, c);
                values_json(k->inputs, k->n_inputs, json);
                ls_buf_puts(json, ",\"expected_outputs\":");
                values_json(k->expected, k->n_expected, json);
                ls_buf_putc(json, '}');
            }
        ls_buf_puts(json, "]}");
    } else {
        char hb[32];
        printf("  %-9s %u test case%s in %u suite%s (BP08 version %u, the program %s): lowerscope run %s runs them\n",
               "bundled", total, total == 1 ? "" : "s", b.n_suites, b.n_suites == 1 ? "" : "s", b.version,
               ls_fmt_bytes(b.program_size, hb, sizeof hb), path);
        for (uint32_t s = 0; s < b.n_suites; s++)
            for (uint32_t c = 0; c < b.suites[s].n_cases; c++) {
                const ls_bp_case *k = &b.suites[s].cases[c];
                ls_buf t = {0};
                values_text(k->inputs, k->n_inputs, &t);
                ls_buf_puts(&t, " → ");
                values_text(k->expected, k->n_expected, &t);
                printf("  %-9s %s case %u: %s\n", "", b.suites[s].method_name ? b.suites[s].method_name : "?", c, t.s);
                ls_buf_free(&t);
            }
    }
    ls_bpte_free(&b);
    return 0;
}

static const char *node_name(const ls_program *edge, const ls_etr_link *l)
{
    const ls_submodule *s = l->program ? ls_program_sub(edge, l->program) : NULL;
    const ls_program *p = s ? s->program : l->program ? NULL : edge;
    const ls_node *n = p && l->node ? ls_program_node(p, l->node) : NULL;
    return n ? n->name : NULL;
}

static int recorded(const ls_program *p, ls_buf *json)
{
    const ls_recorded *r = ls_program_recorded(p);
    const ls_program *edge = ls_recorded_handles_program(p);
    ls_etr_delegates ds = {0};
    ls_error err;
    bool have_maps = edge && r->delegate_map && ls_etr_delegates_of(p, &ds, &err) == 0;
    if (json) {
        ls_buf_puts(json, ",\"recorded\":{\"source\":");
        ls_buf_json_str(json, r->source);
        ls_buf_puts(json, ",\"method\":");
        ls_buf_json_str(json, r->method);
        ls_buf_puts(json, ",\"steps\":[");
        for (uint32_t i = 0; i <= r->n; i++) {
            ls_buf_puts(json, i ? ",{\"step\":" : "{\"step\":");
            ls_buf_json_str(json, i < r->n ? r->passes[i] : r->pass);
            ls_buf_puts(json, ",\"member\":");
            ls_buf_json_str(json, i < r->n ? r->members[i] : r->member);
            ls_buf_printf(json, ",\"nodes\":%u}", i < r->n ? r->programs[i]->n_nodes : p->n_nodes);
        }
        ls_buf_printf(json, "],\"debug_handle_map\":%s,\"delegates\":[", r->debug_handle_map ? "true" : "false");
        for (uint32_t i = 0; i < ds.n; i++) {
            const ls_etr_delegate *d = &ds.v[i];
            ls_buf_printf(json, "%s{\"instruction\":%d,\"backend\":", i ? "," : "", d->instruction);
            ls_buf_json_str(json, d->backend);
            ls_buf_puts(json, ",\"submodule\":");
            ls_buf_json_str(json, d->submodule);
            ls_buf_puts(json, ",\"links\":[");
            for (uint32_t k = 0; k < d->n_links; k++) {
                ls_buf_puts(json, k ? ",{\"delegate_id\":" : "{\"delegate_id\":");
                ls_buf_json_str(json, d->links[k].delegate_id);
                ls_buf_printf(json, ",\"handle\":%lld,\"program\":", (long long)d->links[k].handle);
                ls_buf_json_str(json, d->links[k].program);
                ls_buf_puts(json, ",\"node\":");
                ls_buf_json_str(json, node_name(edge, &d->links[k]));
                ls_buf_putc(json, '}');
            }
            ls_buf_puts(json, "]}");
        }
        ls_buf_puts(json, "]}");
    } else {
        printf("  %-9s %s, method %s:", "recorded", r->source, r->method);
        for (uint32_t i = 0; i <= r->n; i++)
            printf("%s%s (%s)", i ? " → " : " ", i < r->n ? r->passes[i] : r->pass, i < r->n ? r->members[i] : r->member);
        printf("\n  %-9s debug_handle_map %s, delegate_map %s\n", "", r->debug_handle_map ? "present" : "absent",
               r->delegate_map ? "present" : "absent");
        for (uint32_t i = 0; i < ds.n; i++) {
            const ls_etr_delegate *d = &ds.v[i];
            printf("  %-9s instruction %d: %s → %s%s", "", d->instruction, d->backend ? d->backend : "?",
                   d->submodule ? d->submodule : "(no lowered module has its handles)",
                   d->n_links ? "; delegate debug ids " : "");
            for (uint32_t k = 0; k < d->n_links && k < 12; k++) {
                const char *nm = node_name(edge, &d->links[k]);
                printf("%s%s → %s", k ? ", " : "", d->links[k].delegate_id, nm ? nm : "(no node)");
            }
            printf("%s\n", d->n_links > 12 ? ", ..." : d->n_links ? "" : ": no delegate debug ids");
        }
    }
    if (edge && r->delegate_map && !have_maps && !json) printf("  %-9s the delegate map is unreadable: %s\n", "", err.msg);
    ls_etr_delegates_free(&ds);
    return 0;
}

int cli_info_devtools(const char *path, const ls_program *p, ls_buf *json)
{
    if (ls_bpte_is_file(path) && bundled(path, json) != 0) return -1;
    if (ls_program_recorded(p) && recorded(p, json) != 0) return -1;
    return 0;
}
