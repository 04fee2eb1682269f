/* lowerscope diff FILE (--step S | --step A..B | --from A --to B) [--with OTHER] [--json]: what
 * the pipeline changed between two steps (one step: against the step before), one line per node:
 * "+" added, "-" removed, "~" changed (before and after), prefixed with the lowered module for
 * nodes inside one; then the steps' reports. With --with OTHER, the step beside the last step of
 * another file (a .pt2 and the .pte exported from it), nodes matched by identity (align.h), as
 * the UI's :compare FILE shows them. With --with-backend B..., the step beside the same step of
 * the loaded program lowered for other backends, nodes matched by identity, as the UI's
 * :compare backend FILE shows them. */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "align.h"
#include "cli.h"
#include "pipeline_cli.h"
#include "reader.h"

int ls_cmd_diff(int argc, char **argv);

#define USAGE                                                                                                          \
    "diff FILE (--step S | --step A..B | --from A --to B) [--with OTHER [--with-step S] | --with-backend NAME|FILE...] "\
    "[--json] "                                                                                                        \
    "[--backend NAME|FILE]... [--pipeline a,b,...] [--model NAME] [--metadata-only]"
static const char HELP[] =
    "usage: lowerscope " USAGE "\n"
    "\n"
    "What the lowering pipeline changed between two steps, one line per node: + added, - removed,\n"
    "~ changed (with the node before on a `was:` line); nodes inside a lowered module are prefixed\n"
    "with it. Then the reports of the steps in between. --step S compares step S with the step\n"
    "before it; --step A..B and --from A --to B compare any two (steps by number, pass name or\n"
    "pass:backend).\n"
    "\n"
    "options:\n" CLI_STEP_OPTION_HELP
    "  --from A --to B       the two steps (either alone: the other is the step before / the last)\n"
    "  --with OTHER          compare the step (--step S, --to B, else the last) with another file as\n"
    "                        it loads, nodes matched by input number, target, name and op (a .pt2 and\n"
    "                        the .pte exported from it); top-level nodes only: a delegate is its call\n"
    "  --with-step S         with --with: OTHER's step S instead (OTHER lowered with the same options;\n"
    "                        the UI's :compare FILE STEP)\n"
    "  --with-backend NAME|FILE\n"
    "                        (repeatable) compare the step (--step S, --to B, else the last) with the\n"
    "                        step of the same pass and round of the file lowered for these backends instead\n"
    "                        of --backend's (the UI's :compare backend); matched as --with matches,\n"
    "                        top-level nodes only, a node one side holds inside a lowered module said so\n"
    "  --json                one JSON document (format_version 1, docs/cli.md)\n" CLI_PIPELINE_OPTIONS_HELP
        CLI_LOAD_OPTIONS_HELP "  -h, --help            this help\n"
    "\n"
    "exit codes: 0 printed; 1 the step's pass failed (the program before it is shown), 3 the same\n"
    "when it stopped on what lowerscope lacks; 2 unreadable input, no such step or bad options\n";

static const ls_program *program_of(const ls_program *top, const char *sub)
{
    if (!top || !sub) return top;
    const ls_submodule *s = ls_program_sub(top, sub);
    return s ? s->program : NULL;
}

static char *describe(const ls_program *p, uint32_t id)
{
    const ls_node *n = p ? ls_program_node(p, id) : NULL;
    if (!n) return NULL;
    ls_buf b = {0};
    ls_node_describe(p, n, &b);
    return ls_buf_take(&b);
}

typedef struct change_text {
    char kind; /* + - ~ */
    const char *program, *node, *old_name;
    const char *inside; /* only on one side: the lowered module the other side holds it in */
    char *now, *was; /* NULL: none (or, for ~, the text did not change) */
} change_text;

static void json_step(ls_buf *b, const ls_history *h, int s)
{
    ls_buf_printf(b, "{\"step\": %d, \"pass\": ", s);
    ls_buf_json_str(b, h->steps[s].pass);
    ls_buf_puts(b, ", \"detail\": ");
    ls_buf_json_str(b, h->steps[s].detail);
    ls_buf_putc(b, '}');
}

static void json_change(ls_buf *b, const change_text *c, bool first, bool with_inside)
{
    static const char *kinds[] = {['+'] = "added", ['-'] = "removed", ['~'] = "changed"};
    ls_buf_printf(b, "%s\n  {\"kind\": \"%s\", \"program\": ", first ? "" : ",", kinds[(int)c->kind]);
    ls_buf_json_str(b, c->program);
    ls_buf_puts(b, ", \"node\": ");
    ls_buf_json_str(b, c->node);
    ls_buf_puts(b, ", \"was_named\": ");
    ls_buf_json_str(b, c->old_name);
    ls_buf_puts(b, ", \"now\": ");
    ls_buf_json_str(b, c->now);
    ls_buf_puts(b, ", \"was\": ");
    ls_buf_json_str(b, c->was);
    if (with_inside) {
        ls_buf_puts(b, ", \"inside\": ");
        ls_buf_json_str(b, c->inside);
    }
    ls_buf_putc(b, '}');
}

static void print_change(const change_text *c, const char *left, const char *right)
{
    const char *sep = c->program ? "/" : "";
    const char *where = c->program ? c->program : "";
    if (c->kind == '~' && c->old_name && c->old_name != c->node)
        printf("~ %s%s%s (was %s): %s\n", where, sep, c->node, c->old_name, c->now ? c->now : "?");
    else printf("%c %s%s%s: %s\n", c->kind, where, sep, c->node, c->kind == '-' ? (c->was ? c->was : "?") : c->now ? c->now : "?");
    if (c->kind == '~' && c->was) printf("      was: %s\n", c->was);
    if (c->inside) printf("      with %s: inside %s\n", c->kind == '-' ? right : left, c->inside);
}

/* The changes from step a to step b of one history (by node id), as text. */
static change_text *step_changes(const ls_history *h, int a, int b, uint32_t *n_out)
{
    const ls_program *before = h->steps[a].program, *after = h->steps[b].program;
    ls_change *ch = NULL;
    uint32_t n = 0;
    bool own = b != a + 1;
    if (own) ls_diff_programs(before, after, &ch, &n);
    else {
        ch = h->steps[b].changes;
        n = h->steps[b].n_changes;
    }
    change_text *v = ls_calloc(n + 1, sizeof *v);
    for (uint32_t i = 0; i < n; i++) {
        const ls_change *c = &ch[i];
        change_text *t = &v[i];
        t->program = c->program;
        t->node = c->node;
        const ls_program *pb = program_of(before, c->program), *pa = program_of(after, c->program);
        if (c->kind == LS_CHANGE_ADDED) {
            t->kind = '+';
            t->now = describe(pa, c->node_id);
        } else if (c->kind == LS_CHANGE_REMOVED) {
            t->kind = '-';
            t->was = describe(pb, c->node_id);
        } else {
            t->kind = '~';
            t->now = describe(pa, c->node_id);
            t->was = describe(pb, c->node_id);
            const ls_node *old = pb ? ls_program_node(pb, c->node_id) : NULL;
            if (old && old->name != c->node) t->old_name = old->name;
            if (t->now && t->was && !strcmp(t->now, t->was)) {
                free(t->was);
                t->was = NULL;
            }
        }
    }
    if (own) free(ch);
    *n_out = n;
    return v;
}

/* The rows of two programs that differ, by identity (align.h: input number, target, name, op).
 * For one loaded program lowered twice (lineage_ids: its next_id; 0 for two files), a node of
 * the loaded program only on one side says which lowered module holds it on the other: those
 * ids are common to both lowerings. What the passes made is matched by name, not by id: each
 * lowering numbers its new nodes on its own, so an id made on both sides names two things. */
static change_text *file_changes(const ls_program *a, const ls_program *b, uint32_t lineage_ids, ls_alignment *al,
                                 uint32_t *n_out)
{
    ls_align_programs(a, b, LS_ALIGN_BY_IDENTITY, al);
    ls_ptrmap sub_a = {0}, sub_b = {0};
    if (lineage_ids) {
        ls_align_index_subs(a, &sub_a);
        ls_align_index_subs(b, &sub_b);
    }
    change_text *v = ls_calloc(al->n + 1, sizeof *v);
    uint32_t n = 0;
    for (uint32_t r = 0; r < al->n; r++) {
        const ls_align_row *row = &al->v[r];
        if (row->mark == LS_ALIGN_SAME) continue;
        change_text *t = &v[n++];
        const ls_node *na = row->a >= 0 ? a->nodes[row->a] : NULL, *nb = row->b >= 0 ? b->nodes[row->b] : NULL;
        t->kind = row->mark == LS_ALIGN_CHANGED ? '~' : row->mark == LS_ALIGN_ONLY_A ? '-' : '+';
        t->node = nb ? nb->name : na->name;
        if (na && nb && na->name != nb->name) t->old_name = na->name;
        if (na) t->was = describe(a, na->id);
        if (nb) t->now = describe(b, nb->id);
        if (!nb && na->id < lineage_ids) t->inside = ls_align_sub_holding(&sub_b, na->id);
        if (!na && nb->id < lineage_ids) t->inside = ls_align_sub_holding(&sub_a, nb->id);
        if (t->kind == '~' && t->now && t->was && !strcmp(t->now, t->was)) { /* what differs is not in the text */
            free(t->was);
            t->was = NULL;
        }
    }
    ls_ptrmap_free(&sub_a);
    ls_ptrmap_free(&sub_b);
    *n_out = n;
    return v;
}

/* "bundled", "xnnpack,arith": the backend profiles a pipeline ran with, by name. */
static void backends_label(const ls_pipeline_opts *o, ls_buf *b)
{
    if (o->no_backends) ls_buf_puts(b, "none");
    else if (!o->n_backends) ls_buf_puts(b, "bundled");
    for (uint32_t i = 0; !o->no_backends && i < o->n_backends; i++)
        ls_buf_printf(b, "%s%s", i ? "," : "", o->backends[i]->name);
}

static void json_backends(ls_buf *b, const ls_pipeline_opts *o)
{
    ls_buf_putc(b, '[');
    if (!o->no_backends && !o->n_backends) ls_buf_puts(b, "\"bundled\"");
    for (uint32_t i = 0; !o->no_backends && i < o->n_backends; i++) {
        if (i) ls_buf_puts(b, ", ");
        ls_buf_json_str(b, o->backends[i]->name);
    }
    ls_buf_putc(b, ']');
}

/* The same file lowered again for other backends (--with-backend), with the other pipeline
 * options as given: the loaded program's lineage, so node ids stay comparable. */
static int lower_for(const cli_run *r, const char *const *backends, int n_backends, ls_pipeline_opts *o, ls_history *h)
{
    ls_error err;
    ls_pipeline_opts_init(o);
    memcpy(o->passes, r->opts.passes, sizeof o->passes);
    o->n_passes = r->opts.n_passes;
    o->verify = r->opts.verify;
    o->memory_planning = r->opts.memory_planning;
    o->init_mutable_buffers = r->opts.init_mutable_buffers;
    o->mutable_buffer_names = r->opts.mutable_buffer_names;
    o->relower = true;
    for (int i = 0; i < n_backends; i++)
        if (ls_pipeline_opt(o, "--backend", backends[i], &err) != 1) {
            ls_cli_error("diff: --with-backend %s: %s", backends[i], err.msg);
            return LS_EXIT_INPUT;
        }
    if (ls_pipeline_run(r->h.steps[0].program, o, h, &err) != 0) {
        ls_cli_error("diff: --with-backend: %s", err.msg);
        return LS_EXIT_INPUT;
    }
    return LS_EXIT_OK;
}

static int step_of(const ls_history *h, const char *option, const char *spec, int dflt)
{
    return spec ? cli_find_step_of(h, option, spec) : dflt;
}

/* with_be: room for the --with-backend values (argc + 1), freed by the caller on every path. */
static int diff_main(int argc, char **argv, const char **with_be)
{
    const char *from = NULL, *to = NULL, *with = NULL, *with_step = NULL;
    bool json = false;
    char **rest = ls_malloc(sizeof *rest * (size_t)(argc + 1));
    int n = 0, n_with_be = 0;
    for (int i = 0; i < argc; i++) {
        if (i && !strcmp(argv[i], "--json")) json = true;
        else if (i && i + 1 < argc && !strcmp(argv[i], "--from")) from = argv[++i];
        else if (i && i + 1 < argc && !strcmp(argv[i], "--to")) to = argv[++i];
        else if (i && i + 1 < argc && !strcmp(argv[i], "--with")) with = argv[++i];
        else if (i && i + 1 < argc && !strcmp(argv[i], "--with-step")) with_step = argv[++i];
        else if (i && i + 1 < argc && !strcmp(argv[i], "--with-backend")) with_be[n_with_be++] = argv[++i];
        else if (i && !strncmp(argv[i], "--with-backend=", 15)) with_be[n_with_be++] = argv[i] + 15;
        else rest[n++] = argv[i];
    }
    rest[n] = NULL;
    if (with && ls_cli_refuse_empty("diff", "--with", with, "the other program")) {
        free(rest);
        return LS_EXIT_INPUT;
    }
    if (with_step && !with) {
        ls_cli_error("diff: --with-step goes with --with OTHER (usage: lowerscope %s)", USAGE);
        free(rest);
        return LS_EXIT_INPUT;
    }
    if (with && n_with_be) {
        ls_cli_error("diff: --with OTHER or --with-backend, not both (usage: lowerscope %s)", USAGE);
        free(rest);
        return LS_EXIT_INPUT;
    }
    cli_run r;
    int rc = cli_run_pipeline("diff", USAGE, n, rest, CLI_STEP, &r);
    free(rest);
    if (rc != LS_EXIT_OK) {
        cli_run_free(&r);
        return rc;
    }
    if ((n_with_be || with) && (from || (r.args.step && strstr(r.args.step, "..")))) {
        ls_cli_error("diff: %s compares one step (--step S or --to B), not a range (usage: lowerscope %s)",
                     n_with_be ? "--with-backend" : "--with OTHER", USAGE);
        cli_run_free(&r);
        return LS_EXIT_INPUT;
    }
    /* --step S, --step A..B, --from/--to */
    char range[256] = {0};
    const char *dots = r.args.step ? strstr(r.args.step, "..") : NULL;
    if (r.args.step && (from || to)) {
        ls_cli_error("diff: --step or --from/--to, not both (usage: lowerscope %s)", USAGE);
        cli_run_free(&r);
        return LS_EXIT_INPUT;
    }
    if (dots) {
        snprintf(range, sizeof range, "%.*s", (int)(dots - r.args.step), r.args.step);
        from = range;
        to = dots + 2;
        if (!*from || !*to) {
            ls_cli_error("diff: --step %s: a range names both ends, A..B (usage: lowerscope %s)", r.args.step, USAGE);
            cli_run_free(&r);
            return LS_EXIT_INPUT;
        }
    } else if (r.args.step) {
        to = r.args.step;
    }
    if (!from && !to && !with && !n_with_be) {
        ls_cli_error("diff: which steps? --step S, --step A..B or --from A --to B (usage: lowerscope %s)", USAGE);
        cli_run_free(&r);
        return LS_EXIT_INPUT;
    }
    const char *to_opt = r.args.step ? "--step" : "--to", *from_opt = r.args.step ? "--step" : "--from";
    int b = step_of(&r.h, to_opt, to, (int)r.h.n - 1);
    if (b < 0) {
        cli_run_free(&r);
        return LS_EXIT_INPUT;
    }
    int a = from ? step_of(&r.h, from_opt, from, 0) : b > 0 ? b - 1 : 0;
    if (a < 0) {
        cli_run_free(&r);
        return LS_EXIT_INPUT;
    }
    change_text *ch;
    uint32_t n_ch;
    ls_alignment al = {0};
    ls_program *other = NULL;
    ls_buf out = {0}, ta = {0}, tb = {0}, la = {0}, lb = {0};
    ls_pipeline_opts o2;
    ls_history h2 = {0}, h3 = {0}; /* --with-backend's lowering, --with-step's lowering of OTHER */
    int b2 = -1, b3 = -1;
    const ls_program *other_p = NULL;
    cli_step_title(&tb, &r.h, b);
    if (n_with_be) {
        rc = lower_for(&r, with_be, n_with_be, &o2, &h2);
        b2 = rc != LS_EXIT_OK ? -1 : (int)ls_history_same_pass_step(&r.h, (uint32_t)b, &h2);
        if (b2 < 0) {
            ls_history_free(&h2);
            ls_pipeline_opts_free(&o2);
            cli_run_free(&r);
            ls_buf_free(&tb);
            return LS_EXIT_INPUT;
        }
        backends_label(&r.opts, &la);
        backends_label(&o2, &lb);
        cli_step_title(&ta, &h2, b2);
        ch = file_changes(r.h.steps[b].program, h2.steps[b2].program, r.h.steps[0].program->next_id, &al, &n_ch);
    } else if (with) {
        ls_error err;
        if (ls_load(with, NULL, &other, &err) != 0) {
            ls_cli_error("diff: --with: %s", err.msg); /* which of the two files */
            cli_run_free(&r);
            ls_buf_free(&tb);
            return ls_cli_exit_of(&err);
        }
        other_p = other;
        if (with_step) {
            if (ls_pipeline_run(other, &r.opts, &h3, &err) != 0) {
                ls_cli_error("diff: --with %s: %s", with, err.msg);
                b3 = -2;
            } else if ((b3 = ls_history_find_step(&h3, with_step, &err)) < 0) {
                ls_cli_error("diff: --with-step %s in %s", err.msg, with);
            } else {
                other_p = h3.steps[b3].program;
                cli_step_title(&ta, &h3, b3);
            }
            if (b3 < 0) {
                if (h3.n) ls_history_free(&h3);
                ls_program_unref(other);
                cli_run_free(&r);
                ls_buf_free(&tb);
                return LS_EXIT_INPUT;
            }
        }
        ch = file_changes(r.h.steps[b].program, other_p, 0, &al, &n_ch);
    } else {
        ch = step_changes(&r.h, a, b, &n_ch);
        cli_step_title(&ta, &r.h, a);
    }
    bool beside = with || n_with_be; /* a step beside another program: no reports */
    if (json) {
        ls_buf_puts(&out, "{\"format\": \"lowerscope-diff\", \"format_version\": 1, \"file\": ");
        ls_buf_json_str(&out, r.args.path);
        ls_buf_puts(&out, ", \"from\": ");
        if (beside) json_step(&out, &r.h, b);
        else json_step(&out, &r.h, a);
        ls_buf_puts(&out, ", \"to\": ");
        if (with) ls_buf_json_str(&out, with);
        else if (n_with_be) json_step(&out, &h2, b2);
        else json_step(&out, &r.h, b);
        if (b3 >= 0) {
            ls_buf_puts(&out, ", \"to_step\": ");
            json_step(&out, &h3, b3);
        }
        if (n_with_be) {
            ls_buf_puts(&out, ", \"backends\": {\"from\": ");
            json_backends(&out, &r.opts);
            ls_buf_puts(&out, ", \"to\": ");
            json_backends(&out, &o2);
            ls_buf_putc(&out, '}');
        }
        if (beside)
            ls_buf_printf(&out, ", \"scope\": \"top_level\", \"same\": %u, \"changed\": %u, \"only_from\": %u, \"only_to\": %u",
                          al.same, al.changed, al.only_a, al.only_b);
        ls_buf_puts(&out, ", \"changes\": [");
        for (uint32_t i = 0; i < n_ch; i++) json_change(&out, &ch[i], i == 0, n_with_be > 0);
        ls_buf_puts(&out, "],\n \"reports\": [");
        bool first = true;
        for (int s = a + 1; !beside && s <= b; s++)
            for (uint32_t k = 0; k < r.h.steps[s].report.n; k++) {
                const ls_sentence *se = &r.h.steps[s].report.v[k];
                ls_buf_printf(&out, "%s\n  {\"step\": %d, \"program\": ", first ? "" : ",", s);
                ls_buf_json_str(&out, se->program);
                ls_buf_puts(&out, ", \"node\": ");
                ls_buf_json_str(&out, se->node);
                ls_buf_puts(&out, ", \"text\": ");
                ls_buf_json_str(&out, se->text);
                ls_buf_putc(&out, '}');
                first = false;
            }
        ls_buf_puts(&out, "]}\n");
        fputs(out.s, stdout);
    } else {
        if (n_with_be)
            printf("%s, %s with %s against %s with %s%s: %u same, %u changed, %u only with %s, %u only with %s\n", r.args.path,
                   tb.s, la.s, ta.s, lb.s,
                   r.h.steps[b].program->n_subs || h2.steps[b2].program->n_subs ? " (top-level nodes: a delegate is its call)" : "",
                   al.same, al.changed, al.only_a, la.s, al.only_b, lb.s);
        else if (with)
            printf("%s, %s against %s%s%s%s: %u same, %u changed, %u only in %s, %u only in %s\n", r.args.path, tb.s, with,
                   b3 >= 0 ? " at " : "", b3 >= 0 ? ta.s : "",
                   r.h.steps[b].program->n_subs || other_p->n_subs ? " (top-level nodes: a delegate is its call)" : "",
                   al.same, al.changed, al.only_a, r.args.path, al.only_b, with);
        else if (b == a + 1) printf("%s, %s: %u change%s\n", r.args.path, tb.s, n_ch, n_ch == 1 ? "" : "s");
        else printf("%s, %s to %s: %u change%s\n", r.args.path, ta.s, tb.s, n_ch, n_ch == 1 ? "" : "s");
        for (int s = a + 1; !beside && s <= b; s++)
            if (r.h.steps[s].error) printf("✗ step %d: %s\n", s, r.h.steps[s].error);
        for (uint32_t i = 0; i < n_ch; i++) print_change(&ch[i], la.s, lb.s);
        for (int s = a + 1; !beside && s <= b; s++)
            for (uint32_t k = 0; k < r.h.steps[s].report.n; k++) {
                if (b == a + 1) printf("  · %s\n", r.h.steps[s].report.v[k].text);
                else printf("  · step %d: %s\n", s, r.h.steps[s].report.v[k].text);
            }
    }
    for (uint32_t i = 0; i < n_ch; i++) {
        free(ch[i].now);
        free(ch[i].was);
    }
    free(ch);
    ls_alignment_free(&al);
    if (other) ls_program_unref(other);
    if (h3.n) ls_history_free(&h3);
    if (n_with_be) {
        ls_history_free(&h2);
        ls_pipeline_opts_free(&o2);
    }
    ls_buf_free(&la);
    ls_buf_free(&lb);
    ls_buf_free(&out);
    ls_buf_free(&ta);
    ls_buf_free(&tb);
    /* a step shown whose pass failed (the later one said first); beside another file or lowering,
     * this history shows step b only */
    rc = cli_note_step_failed("diff", &r.h, b);
    if (rc == LS_EXIT_OK && a != b && !with && !n_with_be) rc = cli_note_step_failed("diff", &r.h, a);
    cli_run_free(&r);
    return rc;
}

int ls_cmd_diff(int argc, char **argv)
{
    if (ls_cli_help(argc, argv, HELP)) return LS_EXIT_OK;
    const char **with_be = ls_malloc(sizeof *with_be * (size_t)(argc + 1));
    int rc = diff_main(argc, argv, with_be);
    free(with_be);
    return rc;
}
