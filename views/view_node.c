/* The node pane: everything about the selected node — target, arguments and users (each one a
 * line Enter jumps to), tag and why it is or is not delegated, value type, the verifier's
 * findings about it, metadata (stack trace, module stack), and for a constant its dtype,
 * shape, bytes, hash, a preview of its values and which programs hold it or its copies.
 * Also the text-lines helpers the table, run and help screens share. */
#include <inttypes.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "delegation.h"
#include "held_by.h"
#include "ops.h"
#include "pte_file.h"
#include "ui.h"

/* ---- lines */

void ui_lines_clear(ui_lines *l)
{
    for (uint32_t i = 0; i < l->n; i++) free(l->v[i].text);
    l->n = 0;
}

ui_line *ui_lines_add(ui_lines *l, ui_role role, int color, const char *fmt, ...)
{
    if (l->n == l->cap) {
        l->cap = l->cap ? l->cap * 2 : 32;
        l->v = ls_realloc(l->v, sizeof *l->v * l->cap);
    }
    ui_line *ln = &l->v[l->n++];
    memset(ln, 0, sizeof *ln);
    va_list ap;
    va_start(ap, fmt);
    ls_buf b = {0};
    char tmp[2048];
    vsnprintf(tmp, sizeof tmp, fmt, ap);
    va_end(ap);
    ls_buf_puts(&b, tmp);
    ln->text = ls_buf_take(&b);
    ln->role = (int16_t)role;
    ln->color = (int16_t)color;
    return ln;
}

static ui_line *jump_line(ui_lines *l, const char *prog, const char *node, int color, int indent, const char *fmt, ...)
    LS_PRINTF(6, 7);
static ui_line *jump_line(ui_lines *l, const char *prog, const char *node, int color, int indent, const char *fmt, ...)
{
    char tmp[1024];
    va_list ap;
    va_start(ap, fmt);
    vsnprintf(tmp, sizeof tmp, fmt, ap);
    va_end(ap);
    ui_line *ln = ui_lines_add(l, UI_R_NORMAL, color, "%s", tmp);
    ln->jump_prog = prog;
    ln->jump_node = node;
    ln->has_jump = true;
    ln->indent = (int16_t)indent;
    return ln;
}

/* `left`: the columns of the text scrolled off to the left (< and >). */
void ui_lines_draw_row(ui *u, const ui_lines *l, uint32_t row, int y, int x, int w, bool cursor, uint32_t left)
{
    if (row >= l->n) return;
    const ui_line *ln = &l->v[row];
    short pair;
    attr_t a = ln->color >= 0 ? ui_tag_attr(u, ln->color, &pair) : ui_role_attr(u, (ui_role)ln->role, &pair);
    if (ln->color >= 0 && ln->role != UI_R_NORMAL) {
        short rp;
        a |= ui_role_attr(u, (ui_role)ln->role, &rp);
    }
    if (cursor) {
        a |= A_REVERSE;
        ui_fill(u, y, x, w, a, pair);
    }
    const char *t = ln->text;
    for (uint32_t c = 0; *t && c < left; c++) { /* one column a character */
        t++;
        while (((unsigned char)*t & 0xC0) == 0x80) t++;
    }
    size_t skipped = (size_t)(t - ln->text);
    int ind = ln->indent > 0 && (size_t)ln->indent <= strlen(ln->text) ? ln->indent : 0;
    if (ind > (int)skipped) {
        char head[256];
        snprintf(head, sizeof head, "%.*s", ind - (int)skipped, t);
        short kp;
        attr_t ka = ui_role_attr(u, UI_R_KEY, &kp);
        int used = ui_put(u, y, x + 1, w - 1, ka | (cursor ? A_REVERSE : 0), kp, head);
        ui_put_cut(u, y, x + 1 + used, w - 1 - used, a, pair, ln->text + ind); /* cut: ends in … */
    } else {
        ui_put_cut(u, y, x + 1, w - 1, a, pair, t);
    }
}

uint32_t ui_screen_count(ui *u)
{
    return u->screen_lines.n;
}

void ui_screen_draw_row(ui *u, uint32_t row, int y, int x, int w, bool cursor)
{
    ui_lines_draw_row(u, &u->screen_lines, row, y, x, w, cursor, ui_pane_of(u, UI_P_SCREEN)->left);
}

bool ui_lines_match(const ui_lines *l, uint32_t row, const regex_t *re)
{
    return row < l->n && regexec(re, l->v[row].text, 0, NULL, 0) == 0;
}

bool ui_screen_match(ui *u, uint32_t row, const regex_t *re)
{
    return ui_lines_match(&u->screen_lines, row, re);
}

/* Errors can be long: wrapped at spaces to width, the lines after the first indented. */
void ui_lines_add_wrapped(ui_lines *l, ui_role role, const char *text, int width)
{
    if (width < 20) width = 20;
    const char *s = text;
    bool first = true;
    while (*s) {
        int n = (int)strlen(s);
        if (n > width) {
            n = width;
            while (n > width / 2 && s[n] != ' ') n--;
            if (s[n] != ' ') n = width;
            while (n > 1 && ((unsigned char)s[n] & 0xC0) == 0x80) n--; /* not inside a character */
        }
        ui_lines_add(l, role, -1, "%s%.*s", first ? "" : "  ", n, s);
        first = false;
        s += n;
        while (*s == ' ') s++;
    }
}

/* ---- the node */

static const char *scope_name(const ui *u) { return u->depth ? u->scope[u->depth - 1] : NULL; }

static void add_text_block(ui_lines *l, const char *label, const char *text)
{
    bool first = true;
    for (const char *s = text; s && *s;) {
        const char *e = strchr(s, '\n');
        size_t n = e ? (size_t)(e - s) : strlen(s);
        if (n) {
            ui_line *ln = ui_lines_add(l, UI_R_NORMAL, -1, "%-10s%.*s", first ? label : "", (int)n, s);
            ln->indent = 10;
            first = false;
        }
        s = e ? e + 1 : NULL;
    }
}

/* Through the step's index (held_by.h, built with the step's rows): the entries with the same
 * target, then those holding the same bytes, in the order of the programs. */
static void held_by(ui *u, ui_lines *l, const ls_program *own, const ls_input_spec *spec)
{
    const ui_step_rows *sr = ui_top_rows(u, u->step);
    if (!sr) return;
    const ls_held_index *ix = &sr->held;
    uint32_t *found = NULL;
    uint32_t n = ls_held_by(ix, own, spec, &found);
    int pw = (int)strlen("top level"), nw = (int)strlen("placeholder"); /* columns as wide as their entries */
    for (uint32_t i = 0; i < n; i++) {
        const ls_holder *e = &ix->v[found[i]];
        const char *pname = ls_holder_sub_name(ix, e);
        int a = pname ? (int)strlen(pname) : 0, b = (int)strlen(ls_holder_program(ix, e)->inputs[e->input].name);
        if (a > pw) pw = a;
        if (b > nw) nw = b;
    }
    for (uint32_t i = 0; i < n; i++) {
        const ls_holder *e = &ix->v[found[i]];
        const ls_program *p = ls_holder_program(ix, e);
        const char *pname = ls_holder_sub_name(ix, e);
        const ls_input_spec *o = &p->inputs[e->input];
        if (i == 0) {
            ui_lines_add(l, UI_R_TITLE, -1, "held by (same target or the same bytes)");
            ui_lines_add(l, UI_R_DIM, -1, "  %-*s %-*s %s", pw, "program", nw, "placeholder", "target");
        }
        int32_t pos = ls_program_find(p, o->name);
        int color = pos >= 0 ? ui_node_color(u, p, p->nodes[pos]) : -1;
        jump_line(l, pname, o->name, color, 0, "  %-*s %-*s %s", pw, pname ? pname : "top level", nw, o->name, o->target);
    }
    free(found);
}

static void constant_info(ui *u, ui_lines *l, const ls_program *p, const ls_node *n, const ls_input_spec *spec)
{
    ui_line *ln = ui_lines_add(l, UI_R_NORMAL, -1, "%-10s%s%s%s", "spec", ls_input_kind_name((ls_input_kind)spec->kind),
                               spec->target ? " · target " : "", spec->target ? spec->target : "");
    ln->indent = 10;
    if (spec->kind == LS_IN_BUFFER) {
        ln = ui_lines_add(l, UI_R_NORMAL, -1, "%-10s%s", "buffer", spec->persistent ? "persistent" : "not persistent");
        ln->indent = 10;
    }
    const ls_named_tensor *nt = ls_program_spec_data(p, spec);
    if (!nt) {
        if (spec->kind != LS_IN_USER_INPUT) {
            ln = ui_lines_add(l, UI_R_WARN, -1, "%-10sno data for %s in this program", "data", spec->target ? spec->target : "?");
            ln->indent = 10;
        }
    } else {
        char t[128], bytes[32];
        ls_tmeta_str(nt->meta, t, sizeof t);
        ui_fmt_bytes(ls_tmeta_nbytes(nt->meta), bytes, sizeof bytes);
        if (nt->t) {
            ln = ui_lines_add(l, UI_R_NORMAL, -1, "%-10s%s · %s · hash %016" PRIx64, "data", t, bytes, ls_tensor_hash(nt->t));
            ln->indent = 10;
            ls_buf b = {0};
            ls_tensor_preview(nt->t, 8, &b);
            ln = ui_lines_add(l, UI_R_NORMAL, -1, "%-10s%s", "values", b.s);
            ln->indent = 10;
            ls_buf_free(&b);
        } else {
            ln = ui_lines_add(l, UI_R_NORMAL, -1, "%-10s%s · %s · no weights loaded", "data", t, bytes);
            ln->indent = 10;
        }
    }
    (void)n;
    held_by(u, l, p, spec);
}

/* What lowerscope can say about a delegate's blob (backend.h): size, magic, compile specs, and
 * what its header says when no reader opens it (a QNN context's graphs). */
static void delegate_facts(ui_lines *l, const ls_program *p, const ls_submodule *s, int color)
{
    ls_delegate_view v = ls_program_delegate_view(p, s);
    ls_delegate_facts facts = {0};
    ls_delegate_describe(&v, &facts);
    for (uint32_t k = 0; k < facts.n; k++) {
        if (facts.v[k].label == ls_intern("backend")) continue; /* on the line above */
        /* the facts are the CLI's too (lowerscope info): the key to press is said here */
        bool opens = facts.v[k].label == ls_intern("inside") && !strncmp(facts.v[k].text, "read:", 5);
        ui_line *ln = ui_lines_add(l, UI_R_NORMAL, color, "%-10s%s%s", facts.v[k].label, facts.v[k].text,
                                   opens ? " (Enter opens them)" : "");
        ln->indent = 10;
    }
    ls_delegate_facts_free(&facts);
}

static void add_field_wrapped(ui_lines *l, ui_role role, const char *label, const char *text, int pane_w);
static uint32_t add_field_wrapped_in(ui_lines *l, ui_role role, int color, const char *label, const char *text, int pane_w);

/* Where the node runs and, on the CPU, why: the first thing a partition's user asks, so it
 * comes first, wrapped to the pane (at 80×24 it was below a changed node's now/was lines, and
 * cut) */
static void why(ui *u, ui_lines *l, const ls_program *p, const ls_node *n, int color, int pane_w)
{
    const char *sub = ui_delegate_sub(p, n);
    if (!sub && n->kind == LS_NODE_GET_ATTR && ls_program_sub(p, n->target)) sub = n->target;
    if (sub) {
        const ls_submodule *s = ls_program_sub(p, sub);
        char text[512];
        if (s && s->program) {
            snprintf(text, sizeof text, "calls %s on %s · %u nodes inside — Enter opens it", sub,
                     s->backend_id ? s->backend_id : "?", s->program->n_nodes);
            for (uint32_t k = add_field_wrapped_in(l, UI_R_NORMAL, color, "delegate", text, pane_w); k < l->n; k++) {
                l->v[k].jump_prog = sub; /* Enter on any of its lines */
                l->v[k].has_jump = true;
            }
        } else {
            snprintf(text, sizeof text, "calls %s on %s · its blob is opaque to lowerscope", sub,
                     s && s->backend_id ? s->backend_id : "?");
            add_field_wrapped_in(l, UI_R_NORMAL, color, "delegate", text, pane_w);
        }
        if (s && !s->program) delegate_facts(l, p, s, color);
        return;
    }
    if (u->depth && (p == u->m.prog || p == u->m.prev)) {
        const ls_submodule *s = ls_program_sub(ui_scope_program_parent(u), scope_name(u));
        char text[512];
        snprintf(text, sizeof text, "inside %s: delegated to %s", scope_name(u), s && s->backend_id ? s->backend_id : "?");
        add_field_wrapped_in(l, UI_R_NORMAL, color, "where", text, pane_w);
        return;
    }
    if (n->tag) {
        const char *be = ls_program_tag_backend(p, n->tag);
        int ti = ui_tag_index(u, n->tag);
        if (!be && ti >= 0) be = u->dc.tags.backends[ti];
        char text[512];
        snprintf(text, sizeof text, "%s → %s (delegated)", n->tag, be ? be : "?");
        add_field_wrapped_in(l, UI_R_NORMAL, color, "tag", text, pane_w);
        return;
    }
    if (n->kind != LS_NODE_CALL) return;
    /* the reason the delegation table gives (the core's), refusals in the warning colour */
    bool refused = n->reason != LS_WHY_NONE || !n->op;
    ls_buf text = {0};
    ls_buf_printf(&text, "CPU: %s%s%s", ls_deleg_cpu_reason(u->h, u->step, n), n->reason_detail ? " — " : "",
                  n->reason_detail ? n->reason_detail : "");
    add_field_wrapped(l, refused ? UI_R_WARN : UI_R_NORMAL, "why", text.s, pane_w);
    ls_buf_free(&text);
}

static void users_of(ui *u, ui_lines *l, const ls_program *p, const ls_node *n, const char *prog)
{
    int32_t pos = ls_program_pos(p, n->id);
    uint32_t cnt = 0;
    const uint32_t *us = pos >= 0 ? ls_program_users(p, (uint32_t)pos, &cnt) : NULL;
    ui_lines_add(l, UI_R_TITLE, -1, "users (%u)", cnt);
    for (uint32_t i = 0; i < cnt; i++) {
        const ls_node *un = p->nodes[us[i]];
        jump_line(l, prog, un->name, ui_node_color(u, p, un), 0, "  %-18s %s", un->name, ui_node_op(p, un));
    }
}

static void args_of(ui *u, ui_lines *l, const ls_program *p, const ls_node *n, const char *prog)
{
    if (!n->nargs) return;
    ui_lines_add(l, UI_R_TITLE, -1, "%s", n->kind == LS_NODE_OUTPUT ? "outputs" : "arguments");
    for (uint16_t i = 0; i < n->nargs; i++) {
        const ls_arg *a = &n->args[i];
        char label[64];
        if (a->name) snprintf(label, sizeof label, "%s", a->name);
        else snprintf(label, sizeof label, "%u", i);
        uint32_t cnt = a->kind == LS_ARG_NODE ? 1 : a->kind == LS_ARG_NODES || a->kind == LS_ARG_OPT_NODES ? a->n : 0;
        if (!cnt) {
            ls_buf b = {0};
            ls_arg_text(p, a, &b);
            ui_lines_add(l, (a->flags & LS_ARGF_DEFAULT) ? UI_R_DIM : UI_R_NORMAL, -1, "  %-18s %s%s", label, b.s,
                         (a->flags & LS_ARGF_DEFAULT) ? " (default)" : "");
            ls_buf_free(&b);
            continue;
        }
        for (uint32_t k = 0; k < cnt; k++) {
            uint32_t id = a->kind == LS_ARG_NODE ? a->v.node : a->v.nodes[k];
            char lab[80];
            if (cnt > 1 || a->kind != LS_ARG_NODE) snprintf(lab, sizeof lab, "%s[%u]", label, k);
            else snprintf(lab, sizeof lab, "%s", label);
            const ls_node *src = id ? ls_program_node(p, id) : NULL;
            if (!src) {
                ui_lines_add(l, UI_R_NORMAL, -1, "  %-18s %s", lab, id ? "(not in this program)" : "None");
                continue;
            }
            char t[96];
            ls_node_type_str(src, t, sizeof t);
            jump_line(l, prog, src->name, ui_node_color(u, p, src), 0, "  %-18s %-18s %s", lab, src->name, t);
        }
    }
}

/* The findings naming the node, through the step's index (rows.c). */
static void findings(ui *u, ui_lines *l, const ls_node *n)
{
    const ls_verify_result *v = &u->h->steps[u->step].verify;
    const ui_step_rows *sr = ui_top_rows(u, u->step);
    uintptr_t k = 0;
    if (sr && sr->finding_next) ls_ptrmap_get(&sr->finding_of_node, n->name, &k);
    for (; k; k = sr->finding_next[k - 1]) {
        uint32_t i = (uint32_t)k - 1;
        if (v->v[i].program == scope_name(u)) {
            bool err = v->v[i].severity == LS_SEV_ERROR;
            ui_line *ln = ui_lines_add(l, err ? UI_R_ERROR : UI_R_WARN, -1, "%-10s%s", err ? "error" : "warning", v->v[i].msg);
            ln->indent = 10;
        }
    }
}

/* A field whose text runs past the pane, wrapped at spaces under its text (now and was: at 80
 * columns both showed the same start and the difference was past the edge). */
/* The same in a tag's colour; returns the index of its first line (the lines may move as more
 * are added: an index, not a pointer). */
static uint32_t add_field_wrapped_in(ui_lines *l, ui_role role, int color, const char *label, const char *text, int pane_w)
{
    uint32_t first_line = l->n;
    int w = pane_w - 11 < 24 ? 24 : pane_w - 11;
    bool first = true;
    for (const char *s = text; *s;) {
        int n = (int)strlen(s);
        if (n > w) { /* after the last space or '(' that fits, else at the width */
            int k = w;
            while (k > w / 3 && s[k] != ' ' && s[k - 1] != '(') k--;
            n = k > w / 3 ? k : w;
        }
        ui_line *ln = ui_lines_add(l, role, color, "%-10s%.*s", first ? label : "", n, s);
        ln->indent = 10;
        first = false;
        s += n;
        while (*s == ' ') s++;
    }
    return first_line;
}

static void add_field_wrapped(ui_lines *l, ui_role role, const char *label, const char *text, int pane_w)
{
    (void)add_field_wrapped_in(l, role, -1, label, text, pane_w);
}

uint64_t ui_node_lines_built;

/* Once per selection (step, scope, node) and pane width: the pane's count, rows, search and
 * Enter all read these lines. */
void ui_node_lines_build(ui *u)
{
    int pane_w = ui_pane_of(u, UI_P_NODE)->r.w;
    /* keyed by the node shown, not by u->sel_id: the layout counts the pane's lines before the
     * first selection sets sel_id, and the first screen made them twice for one node */
    const ls_program *p;
    uint8_t mark = UI_MARK_NONE;
    const ls_node *n = ui_selected_node(u, &p, &mark);
    if (u->node_valid && u->node_key_step == u->step && u->node_key_node == n && u->node_key_mark == mark &&
        u->node_key_scope == scope_name(u) && u->node_key_w == pane_w)
        return;
    ui_node_lines_built++;
    ui_lines *l = &u->node_lines;
    ui_lines_clear(l);
    u->node_valid = true;
    u->node_key_w = pane_w;
    u->node_key_step = u->step;
    u->node_key_node = n;
    u->node_key_mark = mark;
    u->node_key_scope = scope_name(u);
    if (!n) {
        ui_lines_add(l, UI_R_DIM, -1, "no node selected");
        return;
    }
    const char *prog = scope_name(u);
    int color = ui_node_color(u, p, n);
    ui_line *ln;
    static const char *status[] = {NULL, "added by this step", "changed by this step", "removed by this step (as it was before)"};
    if (mark != UI_MARK_NONE) {
        ln = ui_lines_add(l, mark == UI_MARK_ADDED ? UI_R_ADDED : mark == UI_MARK_CHANGED ? UI_R_CHANGED : UI_R_REMOVED, -1,
                          "%-10s%s", "status", status[mark]);
        ln->indent = 10;
    }
    why(u, l, p, n, color, pane_w);
    if (mark == UI_MARK_CHANGED && u->m.prev) { /* what it was, as lowerscope diff says it */
        const ls_node *old_n = ls_program_node(u->m.prev, n->id);
        ls_buf now = {0}, was = {0};
        ls_node_describe(p, n, &now);
        if (old_n) ls_node_describe(u->m.prev, old_n, &was);
        if (old_n && strcmp(now.s, was.s) != 0) {
            add_field_wrapped(l, UI_R_NORMAL, "now", now.s, pane_w);
            add_field_wrapped(l, UI_R_CHANGED, "was:", was.s, pane_w);
        }
        ls_buf_free(&now);
        ls_buf_free(&was);
    }
    ln = ui_lines_add(l, UI_R_NORMAL, -1, "%-10s%s%s%s", "kind", ls_node_kind_name((ls_node_kind)n->kind),
                      n->target ? " · " : "", n->target ? n->target : "");
    ln->indent = 10;
    if (n->kind == LS_NODE_CALL && n->op) {
        ln = ui_lines_add(l, UI_R_DIM, -1, "%-10s%s", "schema", n->op->schema_text);
        ln->indent = 10;
    }
    char t[256];
    ls_node_type_str(n, t, sizeof t);
    if (t[0]) {
        ln = ui_lines_add(l, UI_R_NORMAL, -1, "%-10s%s", "value", t);
        ln->indent = 10;
    }
    ui_measured_lines(u, p, n, l); /* what a run or an ETDump measured (view_etdump.c) */
    findings(u, l, n);
    int32_t os = ls_program_output_spec(p, n->name);
    if (os >= 0) {
        const ls_output_spec *o = &p->outputs[os];
        ln = ui_lines_add(l, UI_R_NORMAL, -1, "%-10s%s%s%s", "output", ls_output_kind_name((ls_output_kind)o->kind),
                          o->target ? " · " : "", o->target ? o->target : "");
        ln->indent = 10;
    }
    /* what it reads and who reads it come before a constant's data, so they stay in the first
     * lines of a short pane ("users (2)" with both users under it) */
    args_of(u, l, p, n, prog);
    users_of(u, l, p, n, prog);
    const ls_input_spec *spec = ui_input_spec(p, n);
    if (spec) constant_info(u, l, p, n, spec);
    const ls_node_text *tx = ls_node_texts(n);
    if (tx->stack_trace) add_text_block(l, "stack", tx->stack_trace);
    /* "key,path,type;..." → one line per module, a ';' in a name kept (program.h) */
    for (const char *m = tx->module_stack, *e = m, *label = "modules"; m; m = e) {
        size_t len = ls_module_stack_entry(m, &e);
        if (!len) continue;
        ln = ui_lines_add(l, UI_R_NORMAL, -1, "%-10s%.*s", label, (int)len, m);
        ln->indent = 10;
        label = "";
    }
    for (const char *m = tx->source_fn, *e = m, *label = "source_fn"; m; m = e) { /* an entry a line */
        size_t len = ls_source_fn_entry(m, &e);
        if (!len) continue;
        ln = ui_lines_add(l, UI_R_NORMAL, -1, "%-10s%.*s", label, (int)len, m);
        ln->indent = 10;
        label = "";
    }
    if (tx->torch_fn) add_text_block(l, "torch_fn", tx->torch_fn);
    if (n->debug_handle) {
        ln = ui_lines_add(l, UI_R_NORMAL, -1, "%-10s%" PRId64, "debug", n->debug_handle);
        ln->indent = 10;
    }
    if (n->no_copy) {
        ln = ui_lines_add(l, UI_R_NORMAL, -1, "%-10sno_copy: never duplicated", "meta");
        ln->indent = 10;
    }
}

static void title(ui *u, ls_buf *b)
{
    const ls_program *p;
    const ls_node *n = ui_selected_node(u, &p, NULL);
    if (!n) {
        ls_buf_puts(b, "Node");
        return;
    }
    ls_buf_printf(b, "Node %s · %s", n->name, ui_node_op(p, n));
}

static uint32_t count(ui *u)
{
    ui_node_lines_build(u);
    return u->node_lines.n;
}

static void draw_row(ui *u, uint32_t row, int y, int x, int w, bool cursor)
{
    ui_node_lines_build(u);
    ui_lines_draw_row(u, &u->node_lines, row, y, x, w, cursor && u->focus == UI_P_NODE, ui_pane_of(u, UI_P_NODE)->left);
}

static void activate(ui *u, uint32_t row)
{
    ui_node_lines_build(u);
    if (row >= u->node_lines.n) return;
    const ui_line *ln = &u->node_lines.v[row];
    if (!ln->has_jump) { /* a line that names no node: say what Enter does, rather than nothing */
        ui_message(u, false, "this line names no node to go to (Enter goes to an argument, a user, a holder)");
        return;
    }
    if (!ln->jump_node) {
        ui_enter_sub(u, ln->jump_prog);
        u->focus = UI_P_GRAPH;
        return;
    }
    const char *prog = ln->jump_prog, *node = ln->jump_node;
    ui_jump(u, prog, node);
}

static bool match(ui *u, uint32_t row, const regex_t *re)
{
    ui_node_lines_build(u);
    return row < u->node_lines.n && regexec(re, u->node_lines.v[row].text, 0, NULL, 0) == 0;
}

const ui_view_ops ui_node_ops = {
    .name = "node",
    .title = title,
    .count = count,
    .draw_row = draw_row,
    .activate = activate,
    .match = match,
};
