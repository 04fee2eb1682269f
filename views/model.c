/* What the views show, derived from the history: the tag table (one colour per tag over the
 * whole history), the graph rows of the current step and scope (the program's nodes in graph
 * order with the nodes this step removed merged back in at their old place), the rows the
 * filter lets through, and the partitions summary. Built lazily, O(n) per step change; the
 * views format only the rows they draw. */
#include <inttypes.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "delegation.h"
#include "ops.h"
#include "ui.h"

/* ---- tags */

static void add_tag(ui *u, const char *tag, const char *backend)
{
    if (!tag) return;
    uint32_t i;
    if (ls_ptrmap_get_u32(&u->tag_ix, tag, &i)) {
        if (!u->tag_backends[i]) u->tag_backends[i] = backend;
        return;
    }
    if (u->n_tags == u->cap_tags) {
        u->cap_tags = u->cap_tags ? u->cap_tags * 2 : 16;
        u->tags = ls_realloc(u->tags, sizeof *u->tags * u->cap_tags);
        u->tag_backends = ls_realloc(u->tag_backends, sizeof *u->tag_backends * u->cap_tags);
    }
    ls_ptrmap_put(&u->tag_ix, tag, u->n_tags);
    u->tags[u->n_tags] = tag;
    u->tag_backends[u->n_tags++] = backend;
}

static void tags_of_program(ui *u, const ls_program *p, int depth)
{
    if (!p || depth > UI_MAX_DEPTH) return;
    for (uint32_t i = 0; i < p->n_tags; i++) add_tag(u, p->tags[i].tag, p->tags[i].backend_id);
    const char *last = NULL;
    for (uint32_t i = 0; i < p->n_nodes; i++) {
        const char *t = p->nodes[i]->tag;
        if (t && t != last) add_tag(u, t, ls_program_tag_backend(p, t));
        last = t;
    }
    for (uint32_t i = 0; i < p->n_subs; i++) {
        add_tag(u, ui_sub_tag(u, p, p->subs[i].name), p->subs[i].backend_id);
        tags_of_program(u, p->subs[i].program, depth + 1);
    }
}

void ui_tags_init(ui *u)
{
    for (uint32_t s = 0; s < u->h->n; s++) tags_of_program(u, u->h->steps[s].program, 0);
}

int ui_tag_index(const ui *u, const char *tag)
{
    uint32_t i;
    return ls_ptrmap_get_u32(&u->tag_ix, tag, &i) ? (int)i : -1;
}

void ui_tags_free(ui *u)
{
    free(u->tags);
    free(u->tag_backends);
    ls_ptrmap_free(&u->tag_ix);
    ls_ptrmap_free(&u->sub_tags);
    u->tags = NULL;
    u->tag_backends = NULL;
    u->n_tags = u->cap_tags = 0;
}

/* The tag a lowered submodule came from (ls_deleg_sub_tag), so it gets its tag's colour. */
const char *ui_sub_tag(const ui *u, const ls_program *p, const char *sub)
{
    const ls_submodule *s = ls_program_sub(p, sub);
    if (!s) return sub;
    if (!s->program) return s->name;
    /* ls_deleg_sub_tag reads the module's nodes up to a tagged one: once per module, as every
     * drawn row of a delegate asks (the cache is keyed by the module's program, which the steps
     * that keep the module share) */
    ui *mu = (ui *)u;
    uintptr_t tag;
    if (ls_ptrmap_get(&mu->sub_tags, s->program, &tag)) return (const char *)tag;
    const char *t = ls_deleg_sub_tag(s);
    ls_ptrmap_put(&mu->sub_tags, s->program, (uintptr_t)t);
    return t;
}

const char *ui_delegate_sub(const ls_program *p, const ls_node *n)
{
    if (n->kind != LS_NODE_CALL || !n->op || n->op->id != LS_OP_call_delegate || !n->nargs) return NULL;
    if (n->args[0].kind != LS_ARG_NODE) return NULL;
    const ls_node *ga = ls_program_node(p, n->args[0].v.node);
    return ga && ga->kind == LS_NODE_GET_ATTR ? ga->target : NULL;
}

int ui_node_color(const ui *u, const ls_program *p, const ls_node *n)
{
    if (n->tag) return ui_tag_index(u, n->tag);
    const char *sub = ui_delegate_sub(p, n);
    if (sub) return ui_tag_index(u, ui_sub_tag(u, p, sub));
    if (n->kind == LS_NODE_GET_ATTR && ls_program_sub(p, n->target)) return ui_tag_index(u, ui_sub_tag(u, p, n->target));
    if (u->depth > 0 && (p == u->m.prog || p == u->m.prev)) return ui_tag_index(u, ui_sub_tag(u, ui_scope_program_parent(u), u->scope[u->depth - 1]));
    return -1;
}

/* ---- scope */

const ls_program *ui_scope_program(const ui *u, uint32_t step)
{
    if (step >= u->h->n) return NULL;
    const ls_program *p = u->h->steps[step].program;
    for (int i = 0; i < u->depth && p; i++) {
        const ls_submodule *s = ls_program_sub(p, u->scope[i]);
        p = s ? s->program : NULL;
    }
    return p;
}

const ls_program *ui_scope_program_parent(const ui *u)
{
    const ls_program *p = u->h->steps[u->step].program;
    for (int i = 0; i + 1 < u->depth && p; i++) {
        const ls_submodule *s = ls_program_sub(p, u->scope[i]);
        p = s ? s->program : NULL;
    }
    return p;
}

const ls_program *ui_row_program(const ui *u, const ui_row *r)
{
    return r->mark == UI_MARK_REMOVED ? u->m.prev : u->m.prog;
}

/* ---- node text */

const ls_input_spec *ui_input_spec(const ls_program *p, const ls_node *n)
{
    if (n->kind != LS_NODE_PLACEHOLDER) return NULL;
    int32_t i = ls_program_input_spec(p, n->name);
    return i >= 0 ? &p->inputs[i] : NULL;
}

const char *ui_node_op(const ls_program *p, const ls_node *n)
{
    return ui_node_op_spec(n, n->kind == LS_NODE_PLACEHOLDER ? ui_input_spec(p, n) : NULL);
}

const char *ui_node_op_spec(const ls_node *n, const ls_input_spec *s)
{
    switch (n->kind) {
    case LS_NODE_PLACEHOLDER: {
        if (!s) return "[placeholder]";
        static const char *kinds[] = {"[input]", "[param]", "[buffer]", "[const]", "[object]", "[token]", "[const input]"};
        return s->kind < sizeof kinds / sizeof kinds[0] ? kinds[s->kind] : "[placeholder]";
    }
    case LS_NODE_GET_ATTR: return "get_attr";
    case LS_NODE_OUTPUT: return "output";
    default:
        if (n->op) return n->op->id == LS_OP_call_delegate ? "call_delegate" : ls_op_short(n->op);
        return ls_target_short(n->target);
    }
}

void ui_fmt_args(const ls_program *p, const ls_node *n, ls_buf *b)
{
    if (n->kind == LS_NODE_PLACEHOLDER) {
        const ls_input_spec *s = ui_input_spec(p, n);
        if (s && s->target) ls_buf_printf(b, "%s", s->target);
        return;
    }
    if (n->kind == LS_NODE_GET_ATTR) {
        const ls_submodule *s = ls_program_sub(p, n->target);
        ls_buf_printf(b, "%s%s%s", n->target ? n->target : "", s ? " " : "", s && s->backend_id ? s->backend_id : "");
        return;
    }
    bool first = true;
    for (uint16_t i = 0; i < n->nargs; i++) {
        const ls_arg *a = &n->args[i];
        if (a->flags & LS_ARGF_DEFAULT) continue;
        if (!first) ls_buf_puts(b, ", ");
        first = false;
        if ((a->flags & LS_ARGF_KEYWORD) && a->name) ls_buf_printf(b, "%s=", a->name);
        ls_arg_text(p, a, b);
    }
}

void ui_fmt_type(const ls_node *n, char *buf, size_t cap)
{
    buf[0] = 0;
    if (n->val_kind == LS_VAL_TENSOR && n->nvals) ls_tmeta_str(&n->vals[0], buf, cap);
    else if (n->val_kind == LS_VAL_TENSORS) {
        size_t len = (size_t)snprintf(buf, cap, "(");
        for (uint16_t i = 0; i < n->nvals && len + 2 < cap; i++) {
            char one[96];
            len += (size_t)snprintf(buf + len, cap - len, "%s%s", i ? ", " : "", ls_tmeta_str(&n->vals[i], one, sizeof one));
        }
        if (len + 1 < cap) snprintf(buf + len, cap - len, ")");
    } else if (n->val_kind == LS_VAL_SYMINT) snprintf(buf, cap, "SymInt");
    else if (n->val_kind == LS_VAL_OTHER) snprintf(buf, cap, "object");
}

void ui_fmt_bytes(uint64_t n, char *buf, size_t cap)
{
    if (n < 1024) snprintf(buf, cap, "%" PRIu64 "B", n);
    else if (n < 1024 * 1024) snprintf(buf, cap, "%.1fK", (double)n / 1024);
    else if (n < 1024ull * 1024 * 1024) snprintf(buf, cap, "%.1fM", (double)n / (1024.0 * 1024));
    else snprintf(buf, cap, "%.2fG", (double)n / (1024.0 * 1024 * 1024));
}

static bool ui_row_filtered_in(const ui *u, const ls_program *p, const ls_node *n)
{
    switch (u->filter) {
    case UI_FILTER_NONE: return true;
    case UI_FILTER_TAG: {
        if (n->tag == u->filter_value) return true;
        const char *sub = ui_delegate_sub(p, n);
        return sub && ui_sub_tag(u, p, sub) == u->filter_value;
    }
    case UI_FILTER_CPU: return !n->tag && !ui_delegate_sub(p, n) && n->kind == LS_NODE_CALL;
    case UI_FILTER_IDS: return n->id < u->filter_ids_n && u->filter_ids[n->id];
    case UI_FILTER_OP: {
        const char *op = ui_node_op(p, n);
        if (strcmp(op, u->filter_value) == 0) return true;
        size_t l = strlen(u->filter_value);
        return op[0] == '[' && strncmp(op + 1, u->filter_value, l) == 0 && op[l + 1] == ']';
    }
    }
    return true;
}

/* ---- rows */

void ui_model_free(ui_model *m)
{
    free(m->rows);
    free(m->vis);
    free(m->slot_id);
    free(m->slot_vis);
    free(m->parts);
    free(m->spec_of_pos);
    memset(m, 0, sizeof *m);
}

void ui_model_invalidate(ui *u)
{
    u->m.valid = false;
    u->node_valid = false;
}

void ui_model_refilter(ui *u)
{
    u->m.vis_valid = false;
    u->node_valid = false;
}

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

static const char *scope_name(const ui *u)
{
    return u->depth ? u->scope[u->depth - 1] : NULL;
}

static void build_rows(ui *u)
{
    ui_model *m = &u->m;
    const ls_step *st = &u->h->steps[u->step];
    m->prog = ui_scope_program(u, u->step);
    m->prev = u->step > 0 ? ui_scope_program(u, u->step - 1) : NULL;
    m->n_rows = m->n_added = m->n_changed = m->n_removed = 0;
    if (!m->prog) return;
    const ls_program *p = m->prog;
    const char *scope = scope_name(u);
    uint8_t *mark = ls_calloc((size_t)p->next_id + 1, 1);
    uint8_t *gone = m->prev ? ls_calloc((size_t)m->prev->next_id + 1, 1) : NULL;
    uint32_t n_gone = 0;
    for (uint32_t i = 0; i < st->n_changes; i++) {
        const ls_change *c = &st->changes[i];
        if (c->program != scope) continue;
        if (c->kind == LS_CHANGE_REMOVED) {
            if (gone && c->node_id <= m->prev->next_id && ls_program_pos(m->prev, c->node_id) >= 0 &&
                ls_program_pos(p, c->node_id) < 0 && !gone[c->node_id]) {
                gone[c->node_id] = 1;
                n_gone++;
            }
        } else if (c->node_id <= p->next_id) {
            mark[c->node_id] = c->kind == LS_CHANGE_ADDED ? UI_MARK_ADDED : UI_MARK_CHANGED;
        }
    }
    removed_row *rem = n_gone ? ls_malloc(sizeof *rem * n_gone) : NULL;
    uint32_t nr = 0;
    if (n_gone) {
        int64_t anchor = -1;
        for (uint32_t i = 0; i < m->prev->n_nodes; i++) {
            const ls_node *n = m->prev->nodes[i];
            if (gone[n->id]) {
                rem[nr] = (removed_row){n, anchor, nr};
                nr++;
            } else {
                int32_t pos = ls_program_pos(p, n->id);
                if (pos >= 0) anchor = pos;
            }
        }
        qsort(rem, nr, sizeof *rem, cmp_removed);
    }
    m->rows = ls_malloc(sizeof *m->rows * ((size_t)p->n_nodes + nr + 1));
    uint32_t r = 0;
    while (r < nr && rem[r].anchor < 0) m->rows[m->n_rows++] = (ui_row){rem[r++].node, UI_MARK_REMOVED};
    for (uint32_t i = 0; i < p->n_nodes; i++) {
        const ls_node *n = p->nodes[i];
        uint8_t k = mark[n->id];
        m->rows[m->n_rows++] = (ui_row){n, k};
        if (k == UI_MARK_ADDED) m->n_added++;
        else if (k == UI_MARK_CHANGED) m->n_changed++;
        while (r < nr && rem[r].anchor == (int64_t)i) m->rows[m->n_rows++] = (ui_row){rem[r++].node, UI_MARK_REMOVED};
    }
    while (r < nr) m->rows[m->n_rows++] = (ui_row){rem[r++].node, UI_MARK_REMOVED};
    m->n_removed = nr;
    free(rem);
    free(mark);
    free(gone);
    m->spec_of_pos = ls_malloc(sizeof *m->spec_of_pos * (p->n_nodes + 1));
    memset(m->spec_of_pos, 0xff, sizeof *m->spec_of_pos * (p->n_nodes + 1));
    for (uint32_t i = 0; i < p->n_inputs; i++) {
        int32_t pos = p->inputs[i].name ? ls_program_find(p, p->inputs[i].name) : -1;
        if (pos >= 0 && m->spec_of_pos[pos] < 0) m->spec_of_pos[pos] = (int32_t)i;
    }
}

/* ---- partitions */

/* A new row of the partitions pane (the array grows by doubling: a step has a part per tag). */
static ui_part *new_part(ui_model *m)
{
    if (m->n_parts == m->cap_parts) {
        m->cap_parts = m->cap_parts ? m->cap_parts * 2 : 16;
        m->parts = ls_realloc(m->parts, sizeof *m->parts * m->cap_parts);
    }
    ui_part *pt = &m->parts[m->n_parts++];
    memset(pt, 0, sizeof *pt);
    return pt;
}

/* The part of a tag (NULL: the CPU, or the scope's delegate inside a lowered module), found
 * through part_ix (tag → part index; the CPU's part is always the first). */
static ui_part *part_for(ui *u, ls_ptrmap *part_ix, const char *tag)
{
    ui_model *m = &u->m;
    uint32_t at;
    if (!tag && m->n_parts && !m->parts[0].tag && !m->parts[0].sub) return &m->parts[0];
    if (tag && ls_ptrmap_get_u32(part_ix, tag, &at)) return &m->parts[at];
    if (tag) ls_ptrmap_put(part_ix, tag, m->n_parts);
    ui_part *pt = new_part(m);
    pt->tag = tag;
    pt->color = ui_tag_index(u, tag);
    if (tag) {
        pt->name = tag;
        pt->backend = pt->color >= 0 ? u->tag_backends[pt->color] : NULL;
        if (!pt->backend) pt->backend = ls_program_tag_backend(m->prog, tag);
    } else if (u->depth) {
        pt->name = u->scope[u->depth - 1];
        const ls_submodule *s = ls_program_sub(ui_scope_program_parent(u), pt->name);
        pt->backend = s ? s->backend_id : NULL;
        pt->color = ui_tag_index(u, ui_sub_tag(u, ui_scope_program_parent(u), pt->name));
    } else {
        pt->name = "CPU";
        pt->backend = "portable";
    }
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
    const ls_tmeta *meta = nt ? &nt->meta : n->nvals ? &n->vals[0] : NULL;
    if (!meta) return 0;
    int64_t numel = ls_tmeta_numel(meta);
    return numel > 0 ? (uint64_t)numel * ls_dtype_size(meta->dtype) : 0;
}

/* Counts one program's data into a part: constants (params, buffers, tensor constants) and
 * the buffers it mutates (state). */
static void count_data(ui_part *pt, const ls_program *p, const ls_node *n, const ls_input_spec *s)
{
    if (!s || s->kind == LS_IN_USER_INPUT || s->kind == LS_IN_TOKEN || s->kind == LS_IN_CONSTANT_INPUT ||
        s->kind == LS_IN_CUSTOM_OBJ)
        return;
    if (s->kind == LS_IN_BUFFER && is_mutated(p, s->target)) pt->states++;
    else pt->consts++;
    pt->const_bytes += spec_bytes(p, s, n);
}

static void build_parts(ui *u)
{
    ui_model *m = &u->m;
    m->n_parts = 0;
    if (!m->prog) return;
    const ls_program *p = m->prog;
    ls_ptrmap part_ix = {0}, present = {0};
    part_for(u, &part_ix, NULL);
    for (uint32_t i = 0; i < p->n_nodes; i++) ls_ptrmap_put(&present, p->nodes[i]->tag, 1);
    for (uint32_t t = 0; t < u->n_tags && present.used; t++) /* tags in history order, only those present */
        if (ls_ptrmap_has(&present, u->tags[t])) part_for(u, &part_ix, u->tags[t]);
    for (uint32_t i = 0; i < p->n_nodes; i++) {
        const ls_node *n = p->nodes[i];
        if (n->kind == LS_NODE_CALL && !ui_delegate_sub(p, n)) {
            if (!n->op || n->op->id != LS_OP_getitem) part_for(u, &part_ix, n->tag)->nodes++; /* compute nodes */
        }
        else if (n->kind == LS_NODE_PLACEHOLDER && m->spec_of_pos[i] >= 0)
            count_data(part_for(u, &part_ix, n->tag), p, n, &p->inputs[m->spec_of_pos[i]]);
    }
    ls_ptrmap_free(&part_ix);
    ls_ptrmap_free(&present);
    for (uint32_t s = 0; s < p->n_subs; s++) {
        const ls_submodule *sub = &p->subs[s];
        ui_part *pt = new_part(m);
        pt->name = pt->sub = sub->name;
        pt->backend = sub->backend_id;
        pt->tag = ui_sub_tag(u, p, sub->name);
        pt->color = ui_tag_index(u, pt->tag);
        pt->opaque = !sub->program;
        pt->blob_bytes = sub->processed ? sub->processed->size : 0;
        const ls_program *sp = sub->program;
        for (uint32_t i = 0; sp && i < sp->n_nodes; i++) {
            const ls_node *n = sp->nodes[i];
            if (n->kind == LS_NODE_CALL && (!n->op || n->op->id != LS_OP_getitem)) pt->nodes++;
            else if (n->kind == LS_NODE_PLACEHOLDER) count_data(pt, sp, n, ui_input_spec(sp, n));
        }
    }
}

/* ---- visible rows */

static void build_vis(ui *u)
{
    ui_model *m = &u->m;
    free(m->vis);
    m->vis = ls_malloc(sizeof *m->vis * (m->n_rows + 1));
    m->n_vis = 0;
    for (uint32_t i = 0; i < m->n_rows; i++) {
        const ui_row *r = &m->rows[i];
        if (!u->diff_marks && r->mark == UI_MARK_REMOVED) continue;
        if (!ui_row_filtered_in(u, ui_row_program(u, r), r->node)) continue;
        m->vis[m->n_vis++] = i;
    }
    ui_sort_vis(u, m->vis, m->n_vis); /* by a run's column, when asked (overlay.c) */
    uint32_t cap = 16;
    while (cap < m->n_vis * 2 + 2) cap *= 2;
    free(m->slot_id);
    free(m->slot_vis);
    m->slot_cap = cap;
    m->slot_id = ls_calloc(cap, sizeof *m->slot_id); /* id 0 is never a node: empty slot */
    m->slot_vis = ls_malloc(sizeof *m->slot_vis * cap);
    for (uint32_t v = 0; v < m->n_vis; v++) {
        uint32_t id = m->rows[m->vis[v]].node->id;
        uint32_t s = (id * 2654435761u) & (cap - 1);
        while (m->slot_id[s]) s = (s + 1) & (cap - 1);
        m->slot_id[s] = id;
        m->slot_vis[s] = v;
    }
    m->vis_valid = true;
}

void ui_model_ensure(ui *u)
{
    ui_model *m = &u->m;
    if (!m->valid || m->step != u->step) {
        free(m->rows);
        m->rows = NULL;
        free(m->spec_of_pos);
        m->spec_of_pos = NULL;
        m->step = u->step;
        build_rows(u);
        build_parts(u);
        m->valid = true;
        m->vis_valid = false;
    }
    if (!m->vis_valid) build_vis(u);
}

int32_t ui_model_find(ui *u, uint32_t id)
{
    ui_model_ensure(u);
    ui_model *m = &u->m;
    if (!id || !m->slot_cap) return -1;
    for (uint32_t s = (id * 2654435761u) & (m->slot_cap - 1); m->slot_id[s]; s = (s + 1) & (m->slot_cap - 1))
        if (m->slot_id[s] == id) return (int32_t)m->slot_vis[s];
    return -1;
}
