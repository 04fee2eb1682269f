/* The delegation table (delegation.h). */
#include "delegation.h"

#include <stdlib.h>
#include <string.h>

#include "ops.h"
#include "pte_file.h"
#include "ptrmap.h"

bool ls_deleg_is_compute(const ls_node *n)
{
    if (n->kind != LS_NODE_CALL) return false;
    if (!n->op) return true;
    return n->op->id != LS_OP_getitem && n->op->id != LS_OP_call_delegate && n->op->id != LS_OP_alloc;
}

const char *ls_deleg_op_label(const ls_node *n)
{
    if (!n->op) return ls_intern(ls_target_short(n->target));
    if (n->op->overload && strcmp(n->op->overload, "default") != 0) return ls_internf("%s.%s", n->op->name, n->op->overload);
    return ls_intern(n->op->name);
}

const char *ls_deleg_sub_tag(const ls_submodule *s)
{
    if (!s->program) return s->name;
    for (uint32_t i = 0; i < s->program->n_nodes; i++)
        if (s->program->nodes[i]->tag) return s->program->nodes[i]->tag;
    if (s->program->n_tags) return s->program->tags[0].tag;
    return s->name;
}

const char *ls_deleg_cpu_reason(const ls_history *h, uint32_t step, const ls_node *n)
{
    if (n->reason) return ls_cpu_reason_text((ls_cpu_reason)n->reason);
    if (!n->op) return "unknown op";
    uint32_t first = 1; /* the first partition step */
    while (first <= step && first < h->n && strcmp(h->steps[first].pass, "partition") != 0) first++;
    if (first > step || first >= h->n) {
        /* a recorded lowering (an ETRecord) has no partition step: past its to_backend, a CPU
         * node is one the lowering left there */
        if (step == 0 && h->n && ls_program_pte_file(h->steps[0].program)) /* a .pte as the file holds it */
            return "left on the CPU by the lowering that wrote the file";
        const ls_recorded *r = h->n ? ls_program_recorded(h->steps[h->n - 1].program) : NULL;
        for (uint32_t s = 1; r && s <= step && s < h->n; s++)
            if (!strcmp(h->steps[s].pass, "to_backend") || !strcmp(h->steps[s].pass, "to_executorch"))
                return ls_internf("left on the CPU by the lowering the %s recorded", r->source);
        return "not partitioned yet";
    }
    for (uint32_t s = step; s > first; s--) /* the step that made it (the to_executorch steps make write-backs) */
        for (uint32_t c = 0; c < h->steps[s].n_changes; c++) {
            const ls_change *ch = &h->steps[s].changes[c];
            if (ch->kind == LS_CHANGE_ADDED && !ch->program && ch->node_id == n->id)
                return ls_internf("added by %s, after partitioning", h->steps[s].pass);
        }
    return "added after partitioning";
}

const char *ls_deleg_cpu_why(const ls_history *h, uint32_t step, const ls_node *n)
{
    if (n->reason) return ls_cpu_why((ls_cpu_reason)n->reason, n->reason_detail);
    const char *why = ls_deleg_cpu_reason(h, step, n);
    return n->reason_detail ? ls_internf("%s (%s)", why, n->reason_detail) : why;
}

/* ---- building */

typedef struct builder {
    ls_deleg_table *t;
    ls_ptrmap col_ix, row_ix; /* tag → column, op label → row */
    ls_ptrmap label_of;       /* op (or target of an unknown op) → its label: one per op, not per node */
    uint32_t rows_cap, cols_cap; /* the rows' by_col arrays have cols_cap entries */
} builder;

/* Columns grow by doubling (a partitioned program of a million nodes has 20000 tags). */
static uint32_t column_of(builder *b, const char *tag, const char *backend)
{
    uintptr_t c;
    if (ls_ptrmap_get(&b->col_ix, tag, &c)) return (uint32_t)c;
    ls_deleg_table *t = b->t;
    c = t->n_cols++;
    if (t->n_cols > b->cols_cap) {
        b->cols_cap = b->cols_cap ? b->cols_cap * 2 : 16;
        t->cols = ls_realloc(t->cols, sizeof *t->cols * b->cols_cap);
        for (uint32_t r = 0; r < t->n_rows; r++) {
            t->rows[r].by_col = ls_realloc(t->rows[r].by_col, sizeof(uint32_t) * b->cols_cap);
            memset(t->rows[r].by_col + c, 0, sizeof(uint32_t) * (b->cols_cap - c));
        }
    }
    t->cols[c] = (ls_deleg_col){tag, backend, NULL, 0};
    ls_ptrmap_put(&b->col_ix, tag, c);
    return (uint32_t)c;
}

static const char *label_of(builder *b, const ls_node *n)
{
    const void *key = n->op ? (const void *)n->op : (const void *)n->target;
    uintptr_t l;
    if (key && ls_ptrmap_get(&b->label_of, key, &l)) return (const char *)l;
    const char *label = ls_deleg_op_label(n);
    if (key) ls_ptrmap_put(&b->label_of, key, (uintptr_t)label);
    return label;
}

static ls_deleg_row *row_of(builder *b, const char *op)
{
    uintptr_t r;
    ls_deleg_table *t = b->t;
    if (!ls_ptrmap_get(&b->row_ix, op, &r)) {
        if (t->n_rows == b->rows_cap) {
            b->rows_cap = b->rows_cap ? 2 * b->rows_cap : 16;
            t->rows = ls_realloc(t->rows, sizeof *t->rows * b->rows_cap);
        }
        r = t->n_rows++;
        t->rows[r] = (ls_deleg_row){op, 0, 0, ls_calloc(b->cols_cap ? b->cols_cap : 1, sizeof(uint32_t))};
        ls_ptrmap_put(&b->row_ix, op, r);
    }
    return &t->rows[r];
}

static void count(builder *b, const char *op, const char *tag, const char *backend, uint32_t nodes)
{
    uint32_t c = tag ? column_of(b, tag, backend) : 0;
    ls_deleg_row *r = row_of(b, op);
    r->total += nodes;
    b->t->total += nodes;
    if (tag) {
        r->by_col[c] += nodes;
        b->t->cols[c].nodes += nodes;
    } else {
        r->cpu += nodes;
        b->t->cpu += nodes;
    }
}

/* The submodule a call_delegate node calls, or NULL. */
static const ls_submodule *called_sub(const ls_program *p, const ls_node *n)
{
    if (n->kind != LS_NODE_CALL || !n->op || n->op->id != LS_OP_call_delegate || !n->nargs || n->args[0].kind != LS_ARG_NODE)
        return NULL;
    const ls_node *ga = ls_program_node(p, n->args[0].v.node);
    return ga && ga->kind == LS_NODE_GET_ATTR ? ls_program_sub(p, ga->target) : NULL;
}

const char *ls_deleg_opaque_label(const ls_submodule *s)
{
    return ls_internf("%s delegate (opaque)", s->backend_id && *s->backend_id ? s->backend_id : "?");
}

/* The column of tag names the lowered module its nodes are in. */
static void held_in(builder *b, const char *tag, const char *backend, const ls_submodule *sub)
{
    uint32_t c = column_of(b, tag, backend);
    if (!b->t->cols[c].module) b->t->cols[c].module = sub->name;
}

static void count_program(builder *b, const ls_program *p, const ls_submodule *sub, const ls_program *top)
{
    const char *sub_tag = sub ? ls_deleg_sub_tag(sub) : NULL, *held = NULL;
    for (uint32_t i = 0; i < p->n_nodes; i++) {
        const ls_node *n = p->nodes[i];
        const ls_submodule *callee = called_sub(p, n);
        if (callee && !callee->program) { /* a blob lowerscope cannot read: one opaque call */
            count(b, ls_deleg_opaque_label(callee), ls_deleg_sub_tag(callee), callee->backend_id, 1);
            held_in(b, ls_deleg_sub_tag(callee), callee->backend_id, callee);
            b->t->n_opaque++;
            continue;
        }
        if (!ls_deleg_is_compute(n)) continue;
        const char *tag = n->tag ? n->tag : sub_tag;
        /* the backend names a new column only: looked up once per tag, not once per node */
        const char *backend = NULL;
        if (sub) backend = sub->backend_id;
        else if (tag && !ls_ptrmap_get(&b->col_ix, tag, NULL)) backend = ls_program_tag_backend(top, tag);
        count(b, label_of(b, n), tag, backend, 1);
        if (sub && tag && tag != held) held_in(b, tag, backend, sub); /* once per run of a tag, not per node */
        held = sub ? tag : NULL;
    }
}

static int by_total(const void *a, const void *b)
{
    const ls_deleg_row *x = a, *y = b;
    if (x->total != y->total) return x->total < y->total ? 1 : -1;
    return strcmp(x->op, y->op);
}

static void finish(builder *b)
{
    if (b->t->n_rows) qsort(b->t->rows, b->t->n_rows, sizeof *b->t->rows, by_total);
    ls_ptrmap_free(&b->col_ix);
    ls_ptrmap_free(&b->row_ix);
    ls_ptrmap_free(&b->label_of);
}

const char *ls_deleg_col_module(const ls_deleg_col *c)
{
    return c->module && strcmp(c->module, c->tag) != 0 ? c->module : NULL;
}

void ls_deleg_table_build(const ls_program *p, ls_deleg_table *t)
{
    memset(t, 0, sizeof *t);
    builder b = {.t = t};
    count_program(&b, p, NULL, p);
    for (uint32_t s = 0; s < p->n_subs; s++)
        if (p->subs[s].program) count_program(&b, p->subs[s].program, &p->subs[s], p);
    finish(&b);
}

void ls_deleg_by_backend(const ls_deleg_table *t, ls_deleg_table *out)
{
    memset(out, 0, sizeof *out);
    builder b = {.t = out};
    const char **be = ls_malloc(sizeof *be * (t->n_cols ? t->n_cols : 1));
    for (uint32_t c = 0; c < t->n_cols; c++) { /* the backends in the order of their first tag */
        be[c] = ls_intern(t->cols[c].backend ? t->cols[c].backend : t->cols[c].tag);
        column_of(&b, be[c], be[c]);
    }
    for (uint32_t r = 0; r < t->n_rows; r++) {
        const ls_deleg_row *row = &t->rows[r];
        if (row->cpu) count(&b, row->op, NULL, NULL, row->cpu);
        for (uint32_t c = 0; c < t->n_cols; c++)
            if (row->by_col[c]) count(&b, row->op, be[c], be[c], row->by_col[c]);
    }
    free(be);
    finish(&b);
}

void ls_deleg_table_free(ls_deleg_table *t)
{
    for (uint32_t r = 0; r < t->n_rows; r++) free(t->rows[r].by_col);
    free(t->rows);
    free(t->cols);
    memset(t, 0, sizeof *t);
}

bool ls_deleg_on_cpu(const ls_node *n)
{
    return ls_deleg_is_compute(n) && !n->tag;
}

double ls_deleg_pct(uint32_t part, uint32_t total)
{
    return total ? 100.0 * part / total : 0.0;
}

bool ls_deleg_shown(const ls_deleg_table *full, ls_deleg_table *merged, const ls_deleg_table **shown)
{
    bool by_backend = full->n_cols > LS_DELEG_MAX_TAG_COLUMNS;
    if (by_backend) ls_deleg_by_backend(full, merged);
    *shown = by_backend ? merged : full;
    return by_backend;
}

void ls_deleg_summary(const ls_deleg_table *full, ls_buf *b)
{
    uint32_t delegated = full->total - full->cpu;
    ls_buf_printf(b, "%u compute node%s, %u delegated (%.1f%%) to %u tag%s", full->total, full->total == 1 ? "" : "s",
                  delegated, ls_deleg_pct(delegated, full->total), full->n_cols, full->n_cols == 1 ? "" : "s");
    if (full->n_opaque)
        ls_buf_printf(b, "; %u delegate call%s opaque to lowerscope, counted as one call each", full->n_opaque,
                      full->n_opaque == 1 ? "" : "s");
}

void ls_deleg_call_io(const ls_program *p, const ls_node *call, ls_deleg_io *io)
{
    memset(io, 0, sizeof *io);
    for (uint16_t a = 1; a < call->nargs; a++) {
        const ls_arg *arg = &call->args[a];
        if (arg->kind == LS_ARG_NODE) {
            io->n_in++;
            const ls_tmeta *m = ls_node_tval(ls_program_node(p, arg->v.node));
            if (m) io->in_bytes += ls_tmeta_nbytes(m);
        } else if (arg->kind != LS_ARG_NONE) {
            io->n_in++; /* a scalar passed by value */
        }
    }
    for (uint16_t k = 0; k < call->nvals; k++) {
        io->n_out++;
        io->out_bytes += ls_tmeta_nbytes(&call->vals[k]);
    }
}

static uint32_t compute_nodes(const ls_program *p)
{
    uint32_t n = 0;
    for (uint32_t i = 0; i < p->n_nodes; i++) n += ls_deleg_is_compute(p->nodes[i]);
    return n;
}

void ls_deleg_parts(const ls_program *p, ls_deleg_part **parts, uint32_t *n)
{
    *n = p->n_subs;
    *parts = p->n_subs ? ls_calloc(p->n_subs, sizeof **parts) : NULL;
    ls_ptrmap at = {0}; /* submodule → its entry */
    for (uint32_t s = 0; s < p->n_subs; s++) {
        ls_deleg_part *pt = &(*parts)[s];
        pt->sub = &p->subs[s];
        pt->blob_bytes = p->subs[s].processed ? p->subs[s].processed->size : 0;
        pt->readable = p->subs[s].program != NULL;
        pt->nodes = pt->readable ? compute_nodes(p->subs[s].program) : 0;
        ls_ptrmap_put(&at, pt->sub, s);
    }
    for (uint32_t i = 0; i < p->n_nodes; i++) {
        const ls_submodule *callee = called_sub(p, p->nodes[i]);
        uintptr_t s;
        if (!callee || !ls_ptrmap_get(&at, callee, &s)) continue;
        ls_deleg_part *pt = &(*parts)[s];
        if (!pt->n_calls++) {
            pt->call = p->nodes[i];
            ls_deleg_call_io(p, pt->call, &pt->io);
        }
    }
    ls_ptrmap_free(&at);
}

uint32_t ls_deleg_cpu_count(const ls_program *p)
{
    uint32_t n = 0;
    for (uint32_t i = 0; i < p->n_nodes; i++) n += ls_deleg_on_cpu(p->nodes[i]);
    return n;
}

/* ---- CPU nodes by reason */

/* The rule a refusal names ("... (rule const_arg:1)" → "rule const_arg:1"), or NULL. */
static const char *rule_of(const ls_node *n)
{
    if (n->reason != LS_WHY_RULE || !n->reason_detail) return NULL;
    const char *r = strstr(n->reason_detail, "(rule "), *next;
    while (r && (next = strstr(r + 1, "(rule "))) r = next; /* the last one */
    if (!r) return NULL;
    size_t len = strlen(r + 1);
    if (len && r[1 + len - 1] == ')') len--;
    return ls_intern_n(r + 1, len);
}

static int by_size(const void *a, const void *b)
{
    const ls_deleg_cpu_group *x = a, *y = b;
    if (x->n != y->n) return x->n < y->n ? 1 : -1;
    return strcmp(x->why, y->why);
}

static void group_ops(const ls_program *p, ls_deleg_cpu_group *g)
{
    ls_ptrmap ix = {0};
    g->ops = ls_malloc(sizeof *g->ops * g->n);
    g->op_count = ls_calloc(g->n, sizeof *g->op_count);
    for (uint32_t k = 0; k < g->n; k++) {
        const char *op = ls_deleg_op_label(p->nodes[g->nodes[k]]);
        uintptr_t at;
        if (!ls_ptrmap_get(&ix, op, &at)) {
            at = g->n_ops++;
            g->ops[at] = op;
            ls_ptrmap_put(&ix, op, at);
        }
        g->op_count[at]++;
    }
    ls_ptrmap_free(&ix);
    for (uint32_t a = 1; a < g->n_ops; a++) { /* few ops per group: insertion sort, most first */
        const char *op = g->ops[a];
        uint32_t c = g->op_count[a], b = a;
        while (b > 0 && (g->op_count[b - 1] < c || (g->op_count[b - 1] == c && strcmp(g->ops[b - 1], op) > 0))) {
            g->ops[b] = g->ops[b - 1];
            g->op_count[b] = g->op_count[b - 1];
            b--;
        }
        g->ops[b] = op;
        g->op_count[b] = c;
    }
}

void ls_deleg_cpu_groups_build(const ls_history *h, uint32_t step, ls_deleg_cpu_groups *out)
{
    memset(out, 0, sizeof *out);
    const ls_program *p = h->steps[step].program;
    ls_ptrmap ix = {0};
    uint32_t cap = 0;
    for (uint32_t i = 0; i < p->n_nodes; i++) {
        const ls_node *n = p->nodes[i];
        if (!ls_deleg_on_cpu(n)) continue;
        const char *key = rule_of(n);
        if (!key) key = ls_deleg_cpu_why(h, step, n);
        uintptr_t at;
        if (!ls_ptrmap_get(&ix, key, &at)) {
            if (out->n == cap) {
                cap = cap ? 2 * cap : 8;
                out->v = ls_realloc(out->v, sizeof *out->v * cap);
            }
            at = out->n++;
            out->v[at] = (ls_deleg_cpu_group){.why = key, .example = ls_deleg_cpu_why(h, step, n)};
            ls_ptrmap_put(&ix, key, at);
        }
        ls_deleg_cpu_group *g = &out->v[at];
        if ((g->n & (g->n - 1)) == 0) g->nodes = ls_realloc(g->nodes, sizeof *g->nodes * (g->n ? 2 * g->n : 1));
        g->nodes[g->n++] = i;
    }
    ls_ptrmap_free(&ix);
    for (uint32_t k = 0; k < out->n; k++) group_ops(p, &out->v[k]);
    if (out->n) qsort(out->v, out->n, sizeof *out->v, by_size);
}

void ls_deleg_cpu_groups_free(ls_deleg_cpu_groups *g)
{
    for (uint32_t k = 0; k < g->n; k++) {
        free(g->v[k].nodes);
        free(g->v[k].ops);
        free(g->v[k].op_count);
    }
    free(g->v);
    memset(g, 0, sizeof *g);
}

void ls_deleg_cpu_group_ops(const ls_deleg_cpu_group *g, uint32_t max, ls_buf *b)
{
    for (uint32_t k = 0; k < g->n_ops; k++) {
        if (k == max) {
            ls_buf_puts(b, ", …");
            break;
        }
        ls_buf_printf(b, "%s%s ×%u", k ? ", " : "", g->ops[k], g->op_count[k]);
    }
}

/* What each backend took, by op ("BundledBackend took add, tanh, +3 more"): beside the nodes an
 * op not supported left on the CPU, in the table screen and `partitions` alike. */
void ls_deleg_backends_took(const ls_deleg_table *full, ls_buf *b)
{
    const char *done[16];
    uint32_t n_done = 0;
    for (uint32_t c = 0; c < full->n_cols && n_done < 16; c++) {
        const char *be = full->cols[c].backend ? full->cols[c].backend : full->cols[c].tag;
        bool seen = false;
        for (uint32_t k = 0; k < n_done; k++) seen |= done[k] == be;
        if (seen) continue;
        done[n_done++] = be;
        ls_buf_printf(b, "%s%s took ", n_done > 1 ? "; " : "", be);
        uint32_t listed = 0, more = 0;
        for (uint32_t r = 0; r < full->n_rows; r++) {
            uint32_t here = 0;
            for (uint32_t c2 = 0; c2 < full->n_cols; c2++) {
                const char *be2 = full->cols[c2].backend ? full->cols[c2].backend : full->cols[c2].tag;
                if (be2 == be) here += full->rows[r].by_col[c2];
            }
            if (!here) continue;
            const char *op = full->rows[r].op; /* without its overload: "add", as the reports say it */
            if (listed < 6) ls_buf_printf(b, "%s%.*s", listed ? ", " : "", (int)strcspn(op, "."), op);
            else more++;
            listed++;
        }
        if (more) ls_buf_printf(b, ", +%u more", more);
    }
}
