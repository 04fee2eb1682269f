/* The rows of a step, derived once per step and scope: the graph rows (the program's nodes in
 * graph order with the nodes the step removed merged back in at their old place, and the diff
 * mark of each), the partitions summary, and the tags the step brought. Everything here is a
 * function of the history and a derive context, never of the UI's state, so the pipeline's
 * thread derives each top-level step as it finishes (core_link.c) and stepping through the
 * history costs O(visible rows); the UI's thread derives a lowered module's rows when one is
 * opened. The cost is O(nodes + changes) per step, with hash lookups only. */
#include <stdlib.h>
#include <string.h>

#include "delegation.h"
#include "ops.h"
#include "ui.h"

/* ---- the history's tags, in order of first appearance (index = colour) */

/* Adds a tag (or gives a known one its backend); returns whether the table changed. */
static bool tagtab_put(ui_tagtab *t, const char *tag, const char *backend)
{
    if (!tag) return false;
    uint32_t i;
    if (ls_ptrmap_get_u32(&t->ix, tag, &i)) {
        if (t->backends[i] || !backend) return false;
        t->backends[i] = backend;
        return true;
    }
    if (t->n == t->cap) {
        t->cap = t->cap ? t->cap * 2 : 16;
        t->tags = ls_realloc(t->tags, sizeof *t->tags * t->cap);
        t->backends = ls_realloc(t->backends, sizeof *t->backends * t->cap);
    }
    ls_ptrmap_put(&t->ix, tag, t->n);
    t->tags[t->n] = tag;
    t->backends[t->n++] = backend;
    return true;
}

void ui_tagtab_add(ui_tagtab *t, const char *tag, const char *backend)
{
    tagtab_put(t, tag, backend);
}

int ui_tagtab_index(const ui_tagtab *t, const char *tag)
{
    uint32_t i;
    return ls_ptrmap_get_u32(&t->ix, tag, &i) ? (int)i : -1;
}

void ui_tagtab_free(ui_tagtab *t)
{
    free(t->tags);
    free(t->backends);
    ls_ptrmap_free(&t->ix);
    memset(t, 0, sizeof *t);
}

void ui_derive_free(ui_derive *d)
{
    ui_tagtab_free(&d->tags);
    ls_ptrmap_free(&d->sub_tags);
}

/* The tag a lowered submodule came from (ls_deleg_sub_tag reads the module's nodes up to a
 * tagged one): once per module, as every drawn row of a delegate asks. Keyed by the module's
 * program, which the steps that keep the module share. */
const char *ui_derive_sub_tag(ui_derive *d, const ls_program *p, const char *sub)
{
    const ls_submodule *s = ls_program_sub(p, sub);
    if (!s) return sub;
    if (!s->program) return s->name;
    uintptr_t tag;
    if (ls_ptrmap_get(&d->sub_tags, s->program, &tag)) return (const char *)tag;
    const char *t = ls_deleg_sub_tag(s);
    ls_ptrmap_put(&d->sub_tags, s->program, (uintptr_t)t);
    return t;
}

/* What changed the table is also written to `log` (the step's rows carry it to the UI's own
 * table, which then stays the same as the deriving thread's without sharing it). */
static void put_tag(ui_derive *d, const char *tag, const char *backend, ui_tagtab *log)
{
    if (tagtab_put(&d->tags, tag, backend) && log) {
        if (log->n == log->cap) {
            log->cap = log->cap ? log->cap * 2 : 8;
            log->tags = ls_realloc(log->tags, sizeof *log->tags * log->cap);
            log->backends = ls_realloc(log->backends, sizeof *log->backends * log->cap);
        }
        log->tags[log->n] = tag;
        log->backends[log->n++] = backend;
    }
}

static void tags_of_program(ui_derive *d, const ls_program *p, int depth, ui_tagtab *log)
{
    if (!p || depth > UI_MAX_DEPTH) return;
    for (uint32_t i = 0; i < p->n_tags; i++) put_tag(d, p->tags[i].tag, p->tags[i].backend_id, log);
    const char *last = NULL;
    for (uint32_t i = 0; i < p->n_nodes; i++) {
        const char *t = p->nodes[i]->tag;
        if (t && t != last) put_tag(d, t, ls_program_tag_backend(p, t), log);
        last = t;
    }
    for (uint32_t i = 0; i < p->n_subs; i++) {
        put_tag(d, ui_derive_sub_tag(d, p, p->subs[i].name), p->subs[i].backend_id, log);
        tags_of_program(d, p->subs[i].program, depth + 1, log);
    }
}

/* Adds the tags of a step's program (and its lowered modules) to d->tags; what changed the
 * table goes to log too (may be NULL). */
void ui_derive_tags(ui_derive *d, const ls_program *p, ui_tagtab *log)
{
    tags_of_program(d, p, 0, log);
}

/* ---- graph rows */

typedef struct removed_row {
    const ls_node *node;
    int64_t anchor; /* position in prog of the last surviving node before it; -1: none */
    uint32_t order;
} removed_row;

static int cmp_removed(const void *a, const void *b)
{
    const removed_row *x = a, *y = b;
    if (x->anchor != y->anchor) return x->anchor < y->anchor ? -1 : 1;
    return x->order < y->order ? -1 : x->order > y->order;
}

static int cmp_id_row(const void *a, const void *b)
{
    const uint32_t *x = a, *y = b;
    return x[0] < y[0] ? -1 : x[0] > y[0];
}

static void build_rows(ui_step_rows *sr, const ls_step *st, const char *scope)
{
    const ls_program *p = sr->prog, *prev = sr->prev;
    uint8_t *mark = ls_calloc((size_t)p->next_id + 1, 1);
    uint8_t *gone = prev ? ls_calloc((size_t)prev->next_id + 1, 1) : NULL;
    uint32_t n_gone = 0;
    for (uint32_t i = 0; i < st->n_changes; i++) {
        const ls_change *c = &st->changes[i];
        if (!scope && c->program) {
            sr->inside_added += c->kind == LS_CHANGE_ADDED;
            sr->inside_removed += c->kind == LS_CHANGE_REMOVED;
            sr->inside_changed += c->kind != LS_CHANGE_ADDED && c->kind != LS_CHANGE_REMOVED;
        }
        if (c->program != scope) continue;
        if (c->kind == LS_CHANGE_REMOVED) {
            if (gone && c->node_id <= prev->next_id && !gone[c->node_id] && ls_program_pos(prev, c->node_id) >= 0 &&
                ls_program_pos(p, c->node_id) < 0) {
                gone[c->node_id] = 1;
                n_gone++;
            }
        } else if (c->node_id <= p->next_id) {
            mark[c->node_id] = c->kind == LS_CHANGE_ADDED ? UI_MARK_ADDED : UI_MARK_CHANGED;
        }
    }
    sr->mark_of_pos = ls_malloc((size_t)p->n_nodes + 1);
    for (uint32_t i = 0; i < p->n_nodes; i++) {
        uint8_t k = p->nodes[i]->id <= p->next_id ? mark[p->nodes[i]->id] : 0;
        sr->mark_of_pos[i] = k;
        sr->n_added += k == UI_MARK_ADDED;
        sr->n_changed += k == UI_MARK_CHANGED;
    }
    free(mark);
    sr->n_rows = p->n_nodes;
    if (!n_gone) {
        free(gone);
        return; /* row r is position r */
    }
    removed_row *rem = ls_malloc(sizeof *rem * n_gone);
    uint32_t nr = 0;
    int64_t anchor = -1;
    for (uint32_t i = 0; i < prev->n_nodes; i++) {
        const ls_node *n = prev->nodes[i];
        if (n->id <= prev->next_id && gone[n->id]) {
            rem[nr] = (removed_row){n, anchor, nr};
            nr++;
        } else {
            int32_t pos = ls_program_pos(p, n->id);
            if (pos >= 0) anchor = pos;
        }
    }
    free(gone);
    qsort(rem, nr, sizeof *rem, cmp_removed);
    sr->n_removed = nr;
    sr->n_rows = p->n_nodes + nr;
    sr->removed = ls_malloc(sizeof *sr->removed * (nr ? nr : 1));
    sr->row = ls_malloc(sizeof *sr->row * sr->n_rows);
    sr->row_of_pos = ls_malloc(sizeof *sr->row_of_pos * ((size_t)p->n_nodes + 1));
    sr->removed_ids = ls_malloc(sizeof *sr->removed_ids * 2 * (nr ? nr : 1));
    uint32_t r = 0, k = 0;
    for (; k < nr && rem[k].anchor < 0; k++) sr->row[r++] = p->n_nodes + k;
    for (uint32_t i = 0; i < p->n_nodes; i++) {
        sr->row_of_pos[i] = r;
        sr->row[r++] = i;
        for (; k < nr && rem[k].anchor == (int64_t)i; k++) sr->row[r++] = p->n_nodes + k;
    }
    for (; k < nr; k++) sr->row[r++] = p->n_nodes + k;
    for (uint32_t i = 0; i < sr->n_rows; i++)
        if (sr->row[i] >= p->n_nodes) {
            uint32_t j = sr->row[i] - p->n_nodes;
            sr->removed[j] = rem[j].node;
            sr->removed_ids[2 * j] = rem[j].node->id;
            sr->removed_ids[2 * j + 1] = i;
        }
    qsort(sr->removed_ids, nr, 2 * sizeof *sr->removed_ids, cmp_id_row);
    free(rem);
}

ui_row ui_rows_at(const ui_step_rows *sr, uint32_t r)
{
    uint32_t e = sr->row ? sr->row[r] : r;
    if (e >= sr->prog->n_nodes) return (ui_row){sr->removed[e - sr->prog->n_nodes], UI_MARK_REMOVED};
    return (ui_row){sr->prog->nodes[e], sr->mark_of_pos ? sr->mark_of_pos[e] : UI_MARK_NONE};
}

int64_t ui_rows_find(const ui_step_rows *sr, uint32_t id)
{
    int32_t pos = ls_program_pos(sr->prog, id);
    if (pos >= 0) return sr->row_of_pos ? (int64_t)sr->row_of_pos[pos] : pos;
    uint32_t lo = 0, hi = sr->n_removed;
    while (lo < hi) {
        uint32_t mid = lo + (hi - lo) / 2;
        if (sr->removed_ids[2 * mid] < id) lo = mid + 1;
        else hi = mid;
    }
    return lo < sr->n_removed && sr->removed_ids[2 * lo] == id ? (int64_t)sr->removed_ids[2 * lo + 1] : -1;
}

bool ui_rows_is_removed(const ui_step_rows *sr, uint32_t r)
{
    return sr->row && sr->row[r] >= sr->prog->n_nodes;
}

/* ---- partitions */

typedef struct parts_builder {
    ui_step_rows *sr;
    ls_ptrmap ix; /* tag → part index; the CPU's part (tag NULL, no sub) is the first */
} parts_builder;

static ui_part *new_part(ui_step_rows *sr)
{
    if (sr->n_parts == sr->cap_parts) {
        sr->cap_parts = sr->cap_parts ? sr->cap_parts * 2 : 16;
        sr->parts = ls_realloc(sr->parts, sizeof *sr->parts * sr->cap_parts);
    }
    ui_part *pt = &sr->parts[sr->n_parts++];
    memset(pt, 0, sizeof *pt);
    return pt;
}

static ui_part *part_for(ui_derive *d, parts_builder *b, const char *tag)
{
    ui_step_rows *sr = b->sr;
    uint32_t at;
    if (!tag) return &sr->parts[0];
    if (ls_ptrmap_get_u32(&b->ix, tag, &at)) return &sr->parts[at];
    ls_ptrmap_put(&b->ix, tag, sr->n_parts);
    ui_part *pt = new_part(sr);
    pt->tag = pt->name = tag;
    pt->color = ui_tagtab_index(&d->tags, tag);
    pt->backend = pt->color >= 0 ? d->tags.backends[pt->color] : NULL;
    if (!pt->backend) pt->backend = ls_program_tag_backend(sr->prog, tag);
    return pt;
}

static bool is_mutated(const ls_program *p, const char *target)
{
    for (uint32_t i = 0; i < p->n_outputs; i++)
        if (p->outputs[i].kind == LS_OUT_BUFFER_MUTATION && p->outputs[i].target == target) return true;
    return false;
}

static uint64_t spec_bytes(const ls_program *p, const ls_input_spec *s, const ls_node *n)
{
    const ls_named_tensor *nt = ls_program_spec_data(p, s);
    const ls_tmeta *meta = nt ? nt->meta : n->nvals ? &n->vals[0] : NULL;
    return meta ? ls_tmeta_nbytes(meta) : 0;
}

/* Counts one program's data into a part: constants (params, buffers, tensor constants) and
 * the buffers it mutates (state). `mutated`: the targets of BUFFER_MUTATION outputs. */
static void count_data(ui_part *pt, const ls_program *p, const ls_node *n, const ls_input_spec *s, const ls_ptrmap *mutated)
{
    if (!s || s->kind == LS_IN_USER_INPUT || s->kind == LS_IN_TOKEN || s->kind == LS_IN_CONSTANT_INPUT ||
        s->kind == LS_IN_CUSTOM_OBJ)
        return;
    bool state = s->kind == LS_IN_BUFFER && (mutated ? ls_ptrmap_has(mutated, s->target) : is_mutated(p, s->target));
    if (state) pt->states++;
    else pt->consts++;
    pt->const_bytes += spec_bytes(p, s, n);
}

/* Each input spec's placeholder, once (the first spec naming a placeholder counts). */
static void each_spec(const ls_program *p, void (*fn)(void *ctx, const ls_node *n, const ls_input_spec *s), void *ctx)
{
    uint8_t *seen = ls_calloc((size_t)p->n_nodes + 1, 1);
    for (uint32_t i = 0; i < p->n_inputs; i++) {
        int32_t pos = p->inputs[i].name ? ls_program_find(p, p->inputs[i].name) : -1;
        if (pos < 0 || seen[pos] || p->nodes[pos]->kind != LS_NODE_PLACEHOLDER) continue;
        seen[pos] = 1;
        fn(ctx, p->nodes[pos], &p->inputs[i]);
    }
    free(seen);
}

typedef struct data_ctx {
    ui_derive *d;
    parts_builder *b;
    ui_part *only; /* a lowered module's part: everything counts there */
    const ls_program *p;
    ls_ptrmap mutated;
} data_ctx;

static void count_spec(void *vctx, const ls_node *n, const ls_input_spec *s)
{
    data_ctx *c = vctx;
    count_data(c->only ? c->only : part_for(c->d, c->b, n->tag), c->p, n, s, &c->mutated);
}

static void mutated_of(const ls_program *p, ls_ptrmap *m)
{
    for (uint32_t i = 0; i < p->n_outputs; i++)
        if (p->outputs[i].kind == LS_OUT_BUFFER_MUTATION) ls_ptrmap_put(m, p->outputs[i].target, 1);
}

/* `in_sub`: the rows of a lowered module, whose nodes all run on its backend (they keep the tag
 * they were partitioned with): one part, the module's own (`cpu`), counts them all. */
static void build_parts(ui_derive *d, ui_step_rows *sr, const ui_part *cpu, bool in_sub)
{
    const ls_program *p = sr->prog;
    parts_builder b = {.sr = sr};
    *new_part(sr) = *cpu;
    ls_ptrmap present = {0};
    for (uint32_t i = 0; i < p->n_nodes && !in_sub; i++) ls_ptrmap_put(&present, p->nodes[i]->tag, 1);
    for (uint32_t t = 0; t < d->tags.n && present.used; t++) /* tags in history order, only those present */
        if (ls_ptrmap_has(&present, d->tags.tags[t])) part_for(d, &b, d->tags.tags[t]);
    ls_ptrmap_free(&present);
    for (uint32_t i = 0; i < p->n_nodes; i++) {
        const ls_node *n = p->nodes[i];
        if (ls_deleg_is_compute(n) && !ui_delegate_sub(p, n)) /* compute nodes, as the table counts them */
            part_for(d, &b, in_sub ? NULL : n->tag)->nodes++;
    }
    data_ctx dc = {.d = d, .b = &b, .only = in_sub ? &sr->parts[0] : NULL, .p = p};
    mutated_of(p, &dc.mutated);
    each_spec(p, count_spec, &dc);
    ls_ptrmap_free(&dc.mutated);
    ls_ptrmap_free(&b.ix);
    for (uint32_t s = 0; s < p->n_subs; s++) {
        const ls_submodule *sub = &p->subs[s];
        ui_part *pt = new_part(sr);
        pt->name = pt->sub = sub->name;
        pt->backend = sub->backend_id;
        pt->tag = ui_derive_sub_tag(d, p, sub->name);
        pt->color = ui_tagtab_index(&d->tags, pt->tag);
        pt->opaque = !sub->program;
        pt->blob_bytes = sub->processed ? sub->processed->size : 0;
        const ls_program *sp = sub->program;
        if (!sp) continue;
        for (uint32_t i = 0; i < sp->n_nodes; i++) {
            const ls_node *n = sp->nodes[i];
            if (ls_deleg_is_compute(n)) pt->nodes++;
        }
        data_ctx sc = {.d = d, .only = pt, .p = sp};
        mutated_of(sp, &sc.mutated);
        each_spec(sp, count_spec, &sc);
        ls_ptrmap_free(&sc.mutated);
    }
}

/* ---- a step */

ui_step_rows *ui_rows_build(ui_derive *d, const ls_history *h, uint32_t step, const ls_program *prog,
                            const ls_program *prev, const char *scope, const ui_part *cpu)
{
    ui_step_rows *sr = ls_calloc(1, sizeof *sr);
    sr->prog = prog;
    sr->prev = prev;
    if (!prog) return sr;
    build_rows(sr, &h->steps[step], scope);
    ui_rows_index(d, sr); /* and the column widths (row_index.c) */
    build_parts(d, sr, cpu, scope != NULL);
    for (uint32_t i = 0; i < sr->n_parts; i++) { /* the partitions pane's columns */
        const ui_part *pt = &sr->parts[i];
        char details[64];
        int nw = (int)strlen(pt->name), bw = pt->backend ? (int)strlen(pt->backend) : 0,
            dw = ui_part_details(pt, details, sizeof details);
        if (nw > sr->part_name_w) sr->part_name_w = nw;
        if (bw > sr->part_backend_w) sr->part_backend_w = bw;
        if (dw > sr->part_details_w) sr->part_details_w = dw;
    }
    if (!scope) { /* the d screen's table and CPU list, at the top level */
        ls_deleg_table_build(prog, &sr->table);
        sr->has_table = true;
        sr->cpu_pos = ls_malloc(sizeof *sr->cpu_pos * ((size_t)prog->n_nodes + 1));
        for (uint32_t i = 0; i < prog->n_nodes; i++)
            if (ls_deleg_on_cpu(prog->nodes[i])) sr->cpu_pos[sr->n_cpu++] = i;
        ls_held_index_build(&sr->held, prog);
        ls_deleg_cpu_groups_build(h, step, &sr->cpu_groups);
        ls_regions_build(prog, &sr->regions);
        ls_region_boxes_build(&sr->regions, true, false, &sr->boxes); /* the g screen's first view */
        /* and their layout: the screen draws the rows of boxes it shows (drawing every box of a
         * million-node program cost the UI thread 100 ms each time g opened, bench_ui) */
        ls_box_layout_build(sr->boxes.boxes, sr->boxes.n, sr->boxes.edges, sr->boxes.n_edges, &sr->layout);
        for (uint32_t g = 0; g < sr->regions.n; g++) {
            sr->n_islands += sr->regions.v[g].kind == LS_REGION_CPU;
            sr->n_delegates += sr->regions.v[g].kind == LS_REGION_TAG || sr->regions.v[g].kind == LS_REGION_DELEGATE;
        }
    }
    return sr;
}

void ui_rows_add_findings(ui_step_rows *sr, const ls_verify_result *v)
{
    free(sr->finding_next);
    ls_ptrmap_free(&sr->finding_of_node);
    sr->finding_next = ls_calloc(v->n + 1, sizeof *sr->finding_next);
    for (uint32_t i = v->n; i-- > 0;) {
        uintptr_t next = 0;
        ls_ptrmap_get(&sr->finding_of_node, v->v[i].node, &next);
        sr->finding_next[i] = (uint32_t)next;
        ls_ptrmap_put(&sr->finding_of_node, v->v[i].node, i + 1);
    }
}

void ui_rows_free(ui_step_rows *sr)
{
    if (!sr) return;
    free(sr->mark_of_pos);
    free(sr->row);
    free(sr->row_of_pos);
    free(sr->removed);
    free(sr->removed_ids);
    free(sr->parts);
    if (sr->has_table) {
        ls_deleg_table_free(&sr->table);
        ls_deleg_cpu_groups_free(&sr->cpu_groups);
        ls_regions_free(&sr->regions);
        ls_region_boxes_free(&sr->boxes);
        ls_box_layout_free(&sr->layout);
    }
    free(sr->cpu_pos);
    ls_held_index_free(&sr->held);
    free(sr->finding_next);
    ls_ptrmap_free(&sr->finding_of_node);
    ui_row_groups_free(&sr->by_tag);
    ui_row_groups_free(&sr->by_op);
    free(sr->tag_log.tags);
    free(sr->tag_log.backends);
    free(sr);
}
