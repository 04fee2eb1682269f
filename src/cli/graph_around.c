/* lowerscope graph FILE --around NODE [--depth N]: the node, its producers above and its users
 * below (neighbourhood.h, the same computation as the UI's `x` screen), as boxes (the screen's
 * drawing), Graphviz DOT (one rank per level) or JSON. */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "delegation.h"
#include "graph_around.h"
#include "neighbourhood.h"
#include "ops.h"
#include "regions.h"

#define MAX_LEVEL 8 /* as the UI's screen: more than this a level and a box says how many more */

/* The program (top level or a lowered module's) holding `node`, and the node in it. */
const ls_node *cli_find_node(const ls_program *top, const char *node, const ls_program **in, const char **sub)
{
    *in = top;
    *sub = NULL;
    int32_t pos = ls_program_find(top, ls_intern(node));
    if (pos >= 0) return top->nodes[pos];
    const char *slash = strchr(node, '/');
    for (uint32_t i = 0; i < top->n_subs; i++) {
        const ls_submodule *m = &top->subs[i];
        if (!m->program) continue;
        const char *name = node;
        if (slash) {
            if (strlen(m->name) != (size_t)(slash - node) || strncmp(m->name, node, (size_t)(slash - node))) continue;
            name = slash + 1;
        }
        pos = ls_program_find(m->program, ls_intern(name));
        if (pos >= 0) {
            *in = m->program;
            *sub = m->name;
            return m->program->nodes[pos];
        }
    }
    return NULL;
}

/* The op as the UI's graph pane shows it: "[param]" for a placeholder, "add.Tensor" for a call. */
const char *cli_op_label(const ls_program *p, const ls_node *n)
{
    switch (n->kind) {
    case LS_NODE_PLACEHOLDER: {
        static const char *kinds[] = {"[input]", "[param]", "[buffer]", "[const]", "[object]", "[token]", "[const input]"};
        int32_t i = ls_program_input_spec(p, n->name);
        uint8_t k = i >= 0 ? p->inputs[i].kind : UINT8_MAX;
        return k < sizeof kinds / sizeof kinds[0] ? kinds[k] : "[placeholder]";
    }
    case LS_NODE_GET_ATTR: return "get_attr";
    case LS_NODE_OUTPUT: return "output";
    default:
        if (n->op) return n->op->id == LS_OP_call_delegate ? "call_delegate" : ls_op_short(n->op);
        return ls_target_short(n->target);
    }
}

/* The lowered module a delegate call (or its get_attr) calls, or NULL. */
static const ls_submodule *called_sub(const ls_program *p, const ls_node *n)
{
    if (n->kind == LS_NODE_GET_ATTR) return ls_program_sub(p, n->target);
    if (!n->op || n->op->id != LS_OP_call_delegate || !n->nargs || n->args[0].kind != LS_ARG_NODE) return NULL;
    const ls_node *ga = ls_program_node(p, n->args[0].v.node);
    return ga && ga->kind == LS_NODE_GET_ATTR ? ls_program_sub(p, ga->target) : NULL;
}

typedef struct where {
    const char *tag, *backend; /* the tag and its backend, or the lowered module's */
    const char *text;          /* "tag1 → BundledBackend", "lowered_module_0 → ...", "CPU", or NULL */
} where;

/* Where a node runs, as the UI's screen says it: its tag and backend, or those of the module a
 * delegate call calls or the node is in (the module's tag: the one it was lowered from), the CPU
 * for any other call; placeholders and outputs run nowhere. */
static where where_of(const cli_run *r, const ls_program *p, const ls_node *n, const char *in_sub,
                      const ls_submodule *in_mod)
{
    where w = {0};
    const ls_submodule *m = called_sub(p, n);
    if (in_sub) {
        w.tag = in_mod ? ls_deleg_sub_tag(in_mod) : NULL;
        w.backend = in_mod ? in_mod->backend_id : NULL;
        if (n->kind == LS_NODE_CALL) w.text = ls_internf("%s → %s", w.tag ? w.tag : in_sub, w.backend ? w.backend : "?");
    } else if (m) {
        w.tag = ls_deleg_sub_tag(m);
        w.backend = m->backend_id;
        w.text = ls_internf("%s → %s", w.tag ? w.tag : m->name, m->backend_id ? m->backend_id : "?");
    } else if (n->tag) {
        w.tag = n->tag;
        const char **tags, **backends;
        uint32_t nt = ls_history_tags(&r->h, &tags, &backends);
        for (uint32_t i = 0; i < nt; i++)
            if (tags[i] == n->tag) w.backend = backends[i];
        free(tags);
        free(backends);
        w.text = ls_internf("%s → %s", n->tag, w.backend ? w.backend : "?");
    } else if (n->kind == LS_NODE_CALL) {
        w.text = "CPU";
    }
    return w;
}

void cli_dot_str(ls_buf *b, const char *s)
{
    ls_buf_putc(b, '"');
    for (; s && *s; s++) {
        if (*s == '"' || *s == '\\') ls_buf_putc(b, '\\');
        if (*s == '\n') ls_buf_puts(b, "\\n");
        else ls_buf_putc(b, *s);
    }
    ls_buf_putc(b, '"');
}

static int tag_index(const ls_history *h, const char *tag)
{
    const char **tags, **backends;
    uint32_t nt = ls_history_tags(h, &tags, &backends);
    int ix = -1;
    for (uint32_t i = 0; i < nt && ix < 0; i++)
        if (tags[i] == tag) ix = (int)i;
    free(tags);
    free(backends);
    return ix;
}

static void print_text(const cli_run *r, const ls_program *p, const ls_around *ar, const where *wh, bool ascii,
                       int width)
{
    uint32_t shown = ar->first[ar->n_levels], n = shown;
    for (uint32_t k = 0; k < ar->n_levels; k++) n += ar->more[k] ? 1 : 0;
    ls_box *boxes = ls_calloc(n + 1, sizeof *boxes);
    uint32_t *box_of = ls_malloc(sizeof *box_of * (shown + 1));
    uint32_t nb = 0;
    for (uint32_t k = 0; k < ar->n_levels; k++) {
        for (uint32_t i = ar->first[k]; i < ar->first[k + 1]; i++) {
            const ls_node *nd = ls_program_node(p, ar->ids[i]);
            char t[160];
            ls_node_type_str(nd, t, sizeof t);
            ls_box *b = &boxes[nb];
            b->rank = k;
            b->id = (int32_t)nd->id;
            b->fold = 1;
            b->text[0] = nd->name;
            b->text[1] = ls_intern(cli_op_label(p, nd));
            b->text[2] = t[0] ? ls_intern(t) : NULL;
            b->text[3] = wh[i].text;
            box_of[i] = nb++;
        }
        if (ar->more[k]) {
            ls_box *b = &boxes[nb++];
            b->rank = k;
            b->id = -1;
            b->fold = ar->more[k];
            b->text[0] = ls_internf("%u more", ar->more[k]);
            b->text[1] = (int)k < ar->depth ? "producers" : "users";
        }
    }
    LS_VEC(ls_box_edge) edges = {0};
    for (uint32_t e = 0; e < ar->n_edges; e++) {
        uint32_t a = box_of[ar->edges[e].from];
        ls_box_edge be = {a, box_of[ar->edges[e].to], boxes[a].text[2] ? boxes[a].text[2] : "value"};
        ls_vec_push(&edges, be);
    }
    ls_drawing d;
    ls_draw_boxes(boxes, nb, edges.v, edges.n, width, ascii, &d);
    for (uint32_t i = 0; i < d.n_lines; i++) printf("%s\n", d.lines[i]);
    (void)r;
    ls_drawing_free(&d);
    free(edges.v);
    free(box_of);
    free(boxes);
}

static void print_dot(const cli_run *r, const char *title, const ls_program *p, const ls_around *ar, const where *wh)
{
    ls_buf b = {0};
    ls_buf_puts(&b, "digraph ");
    cli_dot_str(&b, title);
    ls_buf_puts(&b, " {\n  rankdir=TB;\n  node [shape=box, fontname=\"monospace\", fontsize=10];\n"
                    "  edge [fontname=\"monospace\", fontsize=9];\n  label=");
    cli_dot_str(&b, title);
    ls_buf_puts(&b, ";\n");
    for (uint32_t k = 0; k < ar->n_levels; k++) {
        ls_buf_puts(&b, "  { rank=same;\n");
        for (uint32_t i = ar->first[k]; i < ar->first[k + 1]; i++) {
            const ls_node *nd = ls_program_node(p, ar->ids[i]);
            char t[160];
            ls_node_type_str(nd, t, sizeof t);
            ls_buf label = {0};
            ls_buf_printf(&label, "%s\n%s%s%s%s%s", nd->name, cli_op_label(p, nd), t[0] ? "\n" : "", t, wh[i].text ? "\n" : "",
                          wh[i].text ? wh[i].text : "");
            ls_buf_printf(&b, "    n%u [label=", i);
            cli_dot_str(&b, label.s);
            ls_buf_free(&label);
            int ti = wh[i].tag ? tag_index(&r->h, wh[i].tag) : -1;
            if (ti >= 0) {
                char rgb[8];
                ls_tag_rgb(ti, rgb);
                ls_buf_printf(&b, ", color=\"%s\", fontcolor=\"%s\"", rgb, rgb);
            }
            if (nd->id == ar->center) ls_buf_puts(&b, ", penwidth=2, style=bold");
            ls_buf_puts(&b, "];\n");
        }
        if (ar->more[k]) {
            ls_buf_printf(&b, "    more%u [shape=plaintext, label=\"%u more %s\"];\n", k, ar->more[k],
                          (int)k < ar->depth ? "producers" : "users");
        }
        ls_buf_puts(&b, "  }\n");
    }
    for (uint32_t e = 0; e < ar->n_edges; e++) {
        char t[160];
        ls_node_type_str(ls_program_node(p, ar->ids[ar->edges[e].from]), t, sizeof t);
        ls_buf_printf(&b, "  n%u -> n%u [label=", ar->edges[e].from, ar->edges[e].to);
        cli_dot_str(&b, t[0] ? t : "value");
        ls_buf_puts(&b, "];\n");
    }
    ls_buf_puts(&b, "}\n");
    fputs(b.s, stdout);
    ls_buf_free(&b);
}

static void print_json(const cli_run *r, int s, const char *sub, const ls_program *p, const ls_around *ar,
                       const where *wh)
{
    ls_buf b = {0};
    ls_buf_puts(&b, "{\"format_version\": 1, \"file\": ");
    ls_buf_json_str(&b, r->args.path);
    ls_buf_printf(&b, ", \"step\": %d, \"pass\": ", s);
    ls_buf_json_str(&b, r->h.steps[s].pass);
    ls_buf_puts(&b, ", \"detail\": ");
    ls_buf_json_str(&b, r->h.steps[s].detail);
    ls_buf_puts(&b, ", \"program\": ");
    ls_buf_json_str(&b, sub);
    ls_buf_puts(&b, ", \"center\": ");
    ls_buf_json_str(&b, ls_program_node(p, ar->center)->name);
    ls_buf_printf(&b, ", \"depth\": %d, \"levels\": [", ar->depth);
    for (uint32_t k = 0; k < ar->n_levels; k++) {
        ls_buf_printf(&b, "%s\n  {\"level\": %d, \"more\": %u, \"nodes\": [", k ? "," : "", (int)k - ar->depth, ar->more[k]);
        for (uint32_t i = ar->first[k]; i < ar->first[k + 1]; i++) {
            const ls_node *nd = ls_program_node(p, ar->ids[i]);
            char t[160];
            ls_node_type_str(nd, t, sizeof t);
            ls_buf_puts(&b, i > ar->first[k] ? ",\n    {\"name\": " : "\n    {\"name\": ");
            ls_buf_json_str(&b, nd->name);
            ls_buf_puts(&b, ", \"op\": ");
            ls_buf_json_str(&b, cli_op_label(p, nd));
            ls_buf_puts(&b, ", \"target\": ");
            ls_buf_json_str(&b, nd->target);
            ls_buf_puts(&b, ", \"type\": ");
            ls_buf_json_str(&b, t[0] ? t : NULL);
            ls_buf_puts(&b, ", \"tag\": ");
            ls_buf_json_str(&b, wh[i].tag);
            ls_buf_puts(&b, ", \"backend\": ");
            ls_buf_json_str(&b, wh[i].backend);
            ls_buf_puts(&b, ", \"runs_on\": ");
            ls_buf_json_str(&b, wh[i].text);
            ls_buf_putc(&b, '}');
        }
        ls_buf_puts(&b, "]}");
    }
    ls_buf_puts(&b, "],\n \"edges\": [");
    for (uint32_t e = 0; e < ar->n_edges; e++) {
        const ls_node *from = ls_program_node(p, ar->ids[ar->edges[e].from]);
        char t[160];
        ls_node_type_str(from, t, sizeof t);
        ls_buf_puts(&b, e ? ",\n  {\"from\": " : "\n  {\"from\": ");
        ls_buf_json_str(&b, from->name);
        ls_buf_puts(&b, ", \"to\": ");
        ls_buf_json_str(&b, ls_program_node(p, ar->ids[ar->edges[e].to])->name);
        ls_buf_puts(&b, ", \"type\": ");
        ls_buf_json_str(&b, t[0] ? t : NULL);
        ls_buf_putc(&b, '}');
    }
    ls_buf_puts(&b, "]}\n");
    fputs(b.s, stdout);
    ls_buf_free(&b);
}

int cli_graph_around(const cli_run *r, int s, const char *node, int depth, graph_format f, bool fold, bool ascii,
                     int width)
{
    const ls_program *top = r->h.steps[s].program, *p;
    const char *sub;
    const ls_node *center = cli_find_node(top, node, &p, &sub);
    ls_buf t = {0};
    cli_step_title(&t, &r->h, s);
    if (!center) {
        ls_cli_error("graph: --around %s: no node `%s` at %s, at the top level or in a lowered module", node, node, t.s);
        ls_buf_free(&t);
        return LS_EXIT_INPUT;
    }
    ls_around ar;
    ls_around_build(p, center->id, depth, fold ? MAX_LEVEL : UINT32_MAX, &ar);
    const ls_submodule *in_mod = sub ? ls_program_sub(top, sub) : NULL;
    uint32_t shown = ar.first[ar.n_levels];
    where *wh = ls_calloc(shown + 1, sizeof *wh);
    for (uint32_t i = 0; i < shown; i++) wh[i] = where_of(r, p, ls_program_node(p, ar.ids[i]), sub, in_mod);
    uint32_t above = ar.first[ar.depth] - ar.first[0], below = shown - ar.first[ar.depth + 1];
    uint32_t more_above = 0, more_below = 0;
    for (int k = 0; k < ar.depth; k++) more_above += ar.more[k];
    for (uint32_t k = (uint32_t)ar.depth + 1; k < ar.n_levels; k++) more_below += ar.more[k];
    char title[1024];
    snprintf(title, sizeof title, "%s, %s: around %s%s%s, %d level%s: %u producer%s above, %u user%s below", r->args.path,
             t.s, sub ? sub : "", sub ? "/" : "", center->name, ar.depth, ar.depth == 1 ? "" : "s", above + more_above,
             above + more_above == 1 ? "" : "s", below + more_below, below + more_below == 1 ? "" : "s");
    if (f == GRAPH_JSON) print_json(r, s, sub, p, &ar, wh);
    else if (f == GRAPH_DOT) print_dot(r, title, p, &ar, wh);
    else {
        printf("%s\n", title);
        print_text(r, p, &ar, wh, ascii, width);
    }
    free(wh);
    ls_around_free(&ar);
    ls_buf_free(&t);
    return LS_EXIT_OK;
}
