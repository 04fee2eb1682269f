/* lowerscope graph FILE [--step S] [--text|--dot|--json]: the partition graph of a step — each
 * delegate, tag and island of CPU nodes in topological order with the tensors crossing between
 * them (regions.h) — drawn as text (the UI's `g` screen), as Graphviz DOT (one cluster per tag,
 * coloured as the UI colours it) or as JSON. */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "cli.h"
#include "graph_around.h"
#include "neighbourhood.h"
#include "pipeline_cli.h"
#include "regions.h"

int ls_cmd_graph(int argc, char **argv);

#define USAGE                                                                                                          \
    "graph FILE [--step S] [--around NODE [--depth N]] [--text|--dot|--json] [--ascii] [--no-fold] [--width N] "      \
    "[--backend NAME|FILE]... [--pipeline a,b,...]"
static const char HELP[] =
    "usage: lowerscope " USAGE "\n"
    "\n"
    "The partition graph of a step (default: the last): each lowered delegate, each tag not yet lowered\n"
    "and each island of CPU nodes, in topological order, with the tensors that cross between them\n"
    "(how many, how many bytes) and the constants and state each one holds. A CPU island is a\n"
    "connected group of CPU nodes between the same delegates: the CPU node that splits two partitions\n"
    "is drawn between them.\n"
    "With --around NODE, the node's neighbourhood instead (the UI's x screen): its producers above and\n"
    "its users below, DEPTH levels each way, at most 8 nodes a level (a box says how many more), the\n"
    "value's type on each edge.\n"
    "\n"
    "options:\n" CLI_STEP_OPTION_HELP
    "  --around NODE         the neighbourhood of NODE (a name at the top level, in a lowered module,\n"
    "                        or lowered_module_0/NAME)\n"
    "  --depth N             levels above and below NODE, 1 to 8 (default 2, as the UI)\n"
    "  --text                boxes drawn with box-drawing characters (the default; the UI's g screen)\n"
    "  --dot                 Graphviz DOT: one cluster per tag, coloured as the UI colours it\n"
    "                        (lowerscope graph F --dot | dot -Tsvg > graph.svg)\n"
    "  --json                one JSON document (format_version 1, docs/cli.md)\n"
    "  --ascii               draw with | - + v (terminals without UTF-8)\n"
    "  --no-fold             draw every region (past 40, runs of similar regions fold into one box);\n"
    "                        with --around, every node of a level\n"
    "  --width N             box width in columns (default: the widest line's, 30 to 56; 26 with\n"
    "                        --around, as the UI)\n" CLI_PIPELINE_OPTIONS_HELP CLI_LOAD_OPTIONS_HELP
    "  -h, --help            this help\n"
    "\n"
    "exit codes: 0 printed; 1 the step's pass failed (the program before it is shown), 3 the same\n"
    "when it stopped on what lowerscope lacks; 2 unreadable input, no such step or bad options\n";

static void print_text(const cli_run *r, int s, const ls_regions *rg, bool fold, bool ascii, int width)
{
    ls_buf t = {0};
    cli_step_title(&t, &r->h, s);
    uint32_t islands = 0, delegates = 0;
    for (uint32_t i = 0; i < rg->n; i++) {
        islands += rg->v[i].kind == LS_REGION_CPU;
        delegates += rg->v[i].kind == LS_REGION_TAG || rg->v[i].kind == LS_REGION_DELEGATE;
    }
    char a[32], b[32];
    printf("%s, %s: %u CPU island%s, %u delegate%s; %u node%s on the CPU, %u delegated; to the delegates %s, back %s\n",
           r->args.path, t.s, islands, islands == 1 ? "" : "s", delegates, delegates == 1 ? "" : "s", rg->cpu_nodes,
           rg->cpu_nodes == 1 ? "" : "s", rg->delegated_nodes, ls_fmt_bytes(rg->cpu_to_delegates, a, sizeof a),
           ls_fmt_bytes(rg->delegates_to_cpu, b, sizeof b));
    ls_buf_free(&t);
    ls_region_boxes bx;
    ls_region_boxes_build(rg, fold, ascii, &bx);
    /* as wide as the widest line, 30 to 56: "→ BundledBackend · 54 nodes" whole, not "54 nod…" */
    if (!width) width = ls_boxes_fit_width(bx.boxes, bx.n, 30, 56);
    ls_drawing d;
    ls_draw_boxes(bx.boxes, bx.n, bx.edges, bx.n_edges, width, ascii, &d);
    for (uint32_t i = 0; i < d.n_lines; i++) printf("%s\n", d.lines[i]);
    ls_drawing_free(&d);
    ls_region_boxes_free(&bx);
}

static int tag_index(const char **tags, uint32_t n, const char *tag)
{
    for (uint32_t i = 0; i < n; i++)
        if (tags[i] == tag) return (int)i;
    return -1;
}

static void dot_region(ls_buf *b, const ls_regions *rg, const ls_region_boxes *bx, uint32_t box, const char *indent)
{
    const ls_box *x = &bx->boxes[box];
    ls_buf label = {0};
    for (int k = 0; k < LS_BOX_LINES; k++)
        if (x->text[k]) ls_buf_printf(&label, "%s%s", k ? "\n" : "", x->text[k]);
    const ls_region *g = &rg->v[bx->region_of_box[box]];
    const char *shape = g->kind == LS_REGION_INPUTS || g->kind == LS_REGION_OUTPUTS ? "ellipse" : "box";
    ls_buf_printf(b, "%sb%u [shape=%s, label=", indent, box, shape);
    cli_dot_str(b, label.s);
    if (x->fold > 1) ls_buf_puts(b, ", style=dashed");
    ls_buf_puts(b, "];\n");
    ls_buf_free(&label);
}

static void print_dot(const cli_run *r, int s, const ls_regions *rg, bool fold)
{
    const char **tags, **backends;
    uint32_t n_tags = ls_history_tags(&r->h, &tags, &backends);
    ls_region_boxes bx;
    ls_region_boxes_build(rg, fold, false, &bx);
    ls_buf b = {0}, t = {0};
    cli_step_title(&t, &r->h, s);
    ls_buf_puts(&b, "digraph ");
    char title[1024];
    snprintf(title, sizeof title, "%s, %s", r->args.path, t.s);
    cli_dot_str(&b, title);
    ls_buf_puts(&b, " {\n  rankdir=TB;\n  node [fontname=\"monospace\", fontsize=10];\n  edge [fontname=\"monospace\", fontsize=9];\n");
    ls_buf_puts(&b, "  label=");
    cli_dot_str(&b, title);
    ls_buf_puts(&b, ";\n");
    /* one cluster per tag, its boxes inside, in the tag's colour */
    bool *done = ls_calloc(bx.n + 1, sizeof *done);
    for (uint32_t k = 0; k < bx.n; k++) {
        const ls_region *g = &rg->v[bx.region_of_box[k]];
        if (done[k] || !g->tag) continue;
        int ti = tag_index(tags, n_tags, g->tag);
        char rgb[8];
        ls_tag_rgb(ti, rgb);
        ls_buf_printf(&b, "  subgraph \"cluster_%u\" {\n    label=", k);
        ls_buf lab = {0};
        ls_buf_printf(&lab, "%s (%s)", g->tag, g->backend ? g->backend : ti >= 0 && backends[ti] ? backends[ti] : "?");
        cli_dot_str(&b, lab.s);
        ls_buf_free(&lab);
        ls_buf_printf(&b, ";\n    color=\"%s\"; fontcolor=\"%s\"; style=rounded;\n    node [color=\"%s\", fontcolor=\"%s\"];\n",
                      rgb, rgb, rgb, rgb);
        for (uint32_t j = k; j < bx.n; j++)
            if (!done[j] && rg->v[bx.region_of_box[j]].tag == g->tag) {
                dot_region(&b, rg, &bx, j, "    ");
                done[j] = true;
            }
        ls_buf_puts(&b, "  }\n");
    }
    for (uint32_t k = 0; k < bx.n; k++)
        if (!done[k]) dot_region(&b, rg, &bx, k, "  ");
    for (uint32_t e = 0; e < bx.n_edges; e++) {
        ls_buf_printf(&b, "  b%u -> b%u [label=", bx.edges[e].from, bx.edges[e].to);
        cli_dot_str(&b, bx.edges[e].label);
        ls_buf_puts(&b, "];\n");
    }
    ls_buf_puts(&b, "}\n");
    fputs(b.s, stdout);
    ls_buf_free(&b);
    ls_buf_free(&t);
    free(done);
    free(tags);
    free(backends);
    ls_region_boxes_free(&bx);
}

static void print_json(const cli_run *r, int s, const ls_program *p, const ls_regions *rg)
{
    ls_buf b = {0};
    ls_buf_puts(&b, "{\"format_version\": 1, \"file\": ");
    ls_buf_json_str(&b, r->args.path);
    ls_buf_printf(&b, ", \"step\": %d, \"pass\": ", s);
    ls_buf_json_str(&b, r->h.steps[s].pass);
    ls_buf_puts(&b, ", \"detail\": ");
    ls_buf_json_str(&b, r->h.steps[s].detail);
    ls_buf_printf(&b, ", \"cpu_nodes\": %u, \"delegated_nodes\": %u, \"cpu_to_delegates_bytes\": %llu, "
                      "\"delegates_to_cpu_bytes\": %llu, \"regions\": [",
                  rg->cpu_nodes, rg->delegated_nodes, (unsigned long long)rg->cpu_to_delegates,
                  (unsigned long long)rg->delegates_to_cpu);
    for (uint32_t i = 0; i < rg->n; i++) {
        const ls_region *g = &rg->v[i];
        ls_buf_printf(&b, "%s\n  {\"index\": %u, \"kind\": \"%s\", \"name\": ", i ? "," : "", i,
                      ls_region_kind_name((ls_region_kind)g->kind));
        ls_buf_json_str(&b, g->name);
        ls_buf_puts(&b, ", \"tag\": ");
        ls_buf_json_str(&b, g->tag);
        ls_buf_puts(&b, ", \"backend\": ");
        ls_buf_json_str(&b, g->backend);
        ls_buf_puts(&b, ", \"lowered_module\": ");
        ls_buf_json_str(&b, g->sub);
        ls_buf_printf(&b, ", \"rank\": %u, \"stage\": %u, \"compute_nodes\": %u, \"ops\": ", g->rank, g->stage, g->n_nodes);
        ls_buf_json_str(&b, g->ops);
        ls_buf_printf(&b, ", \"constants\": %u, \"constant_bytes\": %llu, \"state\": %u, \"state_bytes\": %llu, \"nodes\": [",
                      g->consts, (unsigned long long)g->const_bytes, g->states, (unsigned long long)g->state_bytes);
        for (uint32_t k = 0; k < g->n_members; k++) {
            if (k) ls_buf_puts(&b, ", ");
            ls_buf_json_str(&b, p->nodes[rg->members[g->member0 + k]]->name);
        }
        ls_buf_puts(&b, "]}");
    }
    ls_buf_puts(&b, "],\n \"edges\": [");
    for (uint32_t e = 0; e < rg->n_edges; e++)
        ls_buf_printf(&b, "%s\n  {\"from\": %u, \"to\": %u, \"tensors\": %u, \"bytes\": %llu}", e ? "," : "", rg->edges[e].from,
                      rg->edges[e].to, rg->edges[e].tensors, (unsigned long long)rg->edges[e].bytes);
    ls_buf_puts(&b, "]}\n");
    fputs(b.s, stdout);
    ls_buf_free(&b);
}

int ls_cmd_graph(int argc, char **argv)
{
    if (ls_cli_help(argc, argv, HELP)) return LS_EXIT_OK;
    graph_format f = GRAPH_TEXT;
    bool ascii = false, fold = true;
    int width = 0, n = 0, depth = 2;
    const char *around = NULL;
    char **rest = ls_malloc(sizeof *rest * (size_t)(argc + 1));
    const char *format_given = NULL; /* --text, --dot and --json are one choice */
    for (int i = 0; i < argc; i++) { /* this command's own options; the rest are the pipeline's */
        int g = !i ? -1 : !strcmp(argv[i], "--text") ? GRAPH_TEXT : !strcmp(argv[i], "--dot") ? GRAPH_DOT
                        : !strcmp(argv[i], "--json") ? GRAPH_JSON : -1;
        if (g >= 0 && format_given && (graph_format)g != f) {
            ls_cli_error("graph: %s and %s are two formats: give one (usage: lowerscope %s)", format_given, argv[i], USAGE);
            free(rest);
            return LS_EXIT_INPUT;
        }
        if (g >= 0) {
            f = (graph_format)g;
            format_given = argv[i];
        } else if (i && !strcmp(argv[i], "--ascii")) ascii = true;
        else if (i && !strcmp(argv[i], "--no-fold")) fold = false;
        else if (i && !strcmp(argv[i], "--around")) {
            if (i + 1 >= argc) {
                ls_cli_error("graph: --around takes a node's name (usage: lowerscope %s)", USAGE);
                free(rest);
                return LS_EXIT_INPUT;
            }
            around = argv[++i];
        } else if (i && !strcmp(argv[i], "--depth")) {
            char *end = NULL;
            long d = i + 1 < argc ? strtol(argv[i + 1], &end, 10) : 0;
            if (!end || end == argv[i + 1] || *end || d < 1 || d > LS_AROUND_MAX_DEPTH) {
                ls_cli_error("graph: --depth takes a number of levels from 1 to %d (usage: lowerscope %s)",
                             LS_AROUND_MAX_DEPTH, USAGE);
                free(rest);
                return LS_EXIT_INPUT;
            }
            depth = (int)d;
            i++;
        } else if (i && !strcmp(argv[i], "--width")) {
            char *end = NULL;
            long w = i + 1 < argc ? strtol(argv[i + 1], &end, 10) : 0;
            if (!end || *end || w < 16 || w > 200) {
                ls_cli_error("graph: --width takes a number of columns from 16 to 200 (usage: lowerscope %s)", USAGE);
                free(rest);
                return LS_EXIT_INPUT;
            }
            width = (int)w;
            i++;
        } else rest[n++] = argv[i];
    }
    rest[n] = NULL;
    if (depth != 2 && !around) {
        ls_cli_error("graph: --depth goes with --around NODE (usage: lowerscope %s)", USAGE);
        free(rest);
        return LS_EXIT_INPUT;
    }
    cli_run r;
    int s;
    int rc = cli_run_pipeline_at_step("graph", USAGE, n, rest, CLI_STEP, &r, &s);
    free(rest);
    if (rc != LS_EXIT_OK) return rc;
    if (around) {
        rc = cli_graph_around(&r, s, around, depth, f, fold, ascii, width ? width : 26);
        if (rc == LS_EXIT_OK) rc = cli_note_step_failed("graph", &r.h, s);
        cli_run_free(&r);
        return rc;
    }
    const ls_program *p = r.h.steps[s].program;
    ls_regions rg;
    ls_regions_build(p, &rg);
    if (f == GRAPH_DOT) print_dot(&r, s, &rg, fold);
    else if (f == GRAPH_JSON) print_json(&r, s, p, &rg);
    else print_text(&r, s, &rg, fold, ascii, width);
    ls_regions_free(&rg);
    rc = cli_note_step_failed("graph", &r.h, s);
    cli_run_free(&r);
    return rc;
}
