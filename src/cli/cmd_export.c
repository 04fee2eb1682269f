/* lowerscope export FILE -o OUT [--backend NAME|FILE]... [--pipeline a,b,...] [--step S] [--force]
 * [--json] [--model NAME]: runs the pipeline and writes the program of a step (the last one by
 * default) as an ExecuTorch .pte, or as a .pt2 archive when OUT ends in .pt2; prints what it
 * wrote (docs/cli.md). */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "cli.h"
#include "export.h"
#include "pipeline_cli.h"

int ls_cmd_export(int argc, char **argv);

#define USAGE                                                                                                          \
    "export FILE -o OUT [--portable | --backend NAME|FILE...] [--pipeline a,b,...] [--step S] [--force] [--json] "  \
    "[--model NAME] "        \
    "[--metadata-only]"
static const char HELP[] =
    "usage: lowerscope " USAGE "\n"
    "\n"
    "Runs the lowering pipeline and writes the program of a step (the last one unless --step) as an\n"
    "ExecuTorch program (.pte: any name not ending in .pt2) or, when OUT ends in .pt2, as a .pt2\n"
    "archive. The file is written whole or not at all (a temporary file, then a rename, which never\n"
    "replaces a file without --force); a device or a FIFO is never written, even with --force.\n"
    "A .pte goes through ExecuTorch's load checks first (lowerscope verify); the backends and\n"
    "kernels it needs are listed, and one ExecuTorch does not ship (BundledBackend) is warned about:\n"
    "--portable writes a file of portable kernels only, which a stock runtime runs.\n"
    "\n"
    "options:\n"
    "  -o OUT, --output OUT  where to write (--output=OUT too)\n"
    "  --force               replace OUT when it exists (else the export is refused)\n"
    CLI_STEP_OPTION_HELP CLI_PIPELINE_OPTIONS_HELP
    "  --json                what was written, as one JSON document (format_version 1, docs/cli.md)\n"
    CLI_LOAD_OPTIONS_HELP
    "  -h, --help            this help\n"
    "\n"
    "exit codes: 0 written; 2 bad usage, unreadable input, a failed step, an existing OUT without\n"
    "--force, or a program that cannot be written in the format asked for; 3 the step needs what\n"
    "lowerscope lacks (the weights of a program loaded without them, a kernel); 128 + N stopped\n"
    "by signal N (SIGTERM: 143) while writing, the temporary file removed\n";
#define EXPORT_FORMAT_VERSION 1

static void print_json(const ls_export_summary *s)
{
    ls_buf b = {0};
    ls_buf_printf(&b, "{\"format_version\":%d,\"path\":", EXPORT_FORMAT_VERSION);
    ls_buf_json_str(&b, s->path);
    ls_buf_printf(&b, ",\"format\":\"%s\",\"step\":%d,\"pass\":", s->pt2 ? "pt2" : "pte", s->step);
    ls_buf_json_str(&b, s->pass);
    ls_buf_printf(&b, ",\"bytes\":%llu", (unsigned long long)s->bytes);
    if (!s->pt2) {
        const ls_emit_summary *e = &s->emit;
        ls_buf_printf(&b,
                      ",\"ran_to_executorch\":%s,\"values\":%u,\"instructions\":%u,\"kernel_calls\":%u,"
                      "\"delegate_calls\":%u,\"operators\":%u,\"constants\":%u,\"constant_bytes\":%llu,"
                      "\"arena_bytes\":%llu,\"tensor_bytes\":%llu,\"planned_tensors\":%u,\"segments\":[",
                      s->ran_to_executorch ? "true" : "false", e->values, e->instructions, e->kernel_calls,
                      e->delegate_calls, e->operators, e->constants, (unsigned long long)e->constant_bytes,
                      (unsigned long long)e->arena, (unsigned long long)e->tensor_bytes, e->planned_tensors);
        for (uint32_t i = 0; i < s->n_segments; i++) {
            ls_buf_printf(&b, "%s{\"index\":%u,\"bytes\":%llu,\"holds\":", i ? "," : "", i,
                          (unsigned long long)s->segments[i].bytes);
            ls_buf_json_str(&b, s->segments[i].what);
            ls_buf_putc(&b, '}');
        }
        ls_buf_puts(&b, "],\"delegates\":[");
        for (uint32_t d = 0; d < s->n_delegates; d++) {
            ls_buf_printf(&b, "%s{\"index\":%u,\"backend_id\":", d ? "," : "", d);
            ls_buf_json_str(&b, s->delegates[d].backend_id);
            ls_buf_printf(&b, ",\"segment\":%u,\"bytes\":%llu}", s->delegates[d].segment,
                          (unsigned long long)s->delegates[d].bytes);
        }
        ls_buf_puts(&b, "],\"needs\":[");
        for (uint32_t k = 0; k < s->n_needs; k++) {
            ls_buf_printf(&b, "%s{\"kind\":\"%s\",\"name\":", k ? "," : "", s->needs[k].backend ? "backend" : "kernel");
            ls_buf_json_str(&b, s->needs[k].name);
            ls_buf_puts(&b, ",\"library\":");
            ls_buf_json_str(&b, s->needs[k].library);
            ls_buf_printf(&b, ",\"stock\":%s,\"stand_in\":%s}", s->needs[k].stock ? "true" : "false",
                          s->needs[k].stand_in ? "true" : "false");
        }
        ls_buf_printf(&b, "],\"buffers_unwritten\":%u", e->buffers_unwritten); /* mutated buffers started nonzero, left out */
    }
    ls_buf_puts(&b, "}\n");
    fputs(b.s, stdout);
    ls_buf_free(&b);
}

int ls_cmd_export(int argc, char **argv)
{
    if (ls_cli_help(argc, argv, HELP)) return LS_EXIT_OK;
    /* -o OUT and --force are ours; the rest is the pipeline's (cli_run_pipeline) */
    const char *out = NULL;
    bool force = false;
    int w = 1;
    for (int i = 1; i < argc; i++) {
        if ((!strcmp(argv[i], "-o") || !strcmp(argv[i], "--output")) && i + 1 < argc) out = argv[++i];
        else if (!strncmp(argv[i], "--output=", 9)) out = argv[i] + 9;
        else if (!strcmp(argv[i], "--force")) force = true;
        else if (!strncmp(argv[i], "-o=", 3)) {
            ls_cli_error("export: '%s': write -o OUT or --output=OUT (usage: lowerscope %s)", argv[i], USAGE);
            return LS_EXIT_INPUT;
        }
        else if (!strcmp(argv[i], "-o") || !strcmp(argv[i], "--output")) {
            ls_cli_error("export: %s needs a file name (usage: lowerscope %s)", argv[i], USAGE);
            return LS_EXIT_INPUT;
        } else argv[w++] = argv[i];
    }
    argc = w;
    argv[argc] = NULL;
    if (!out) { /* a wrong option first, as with -o given: what else is wrong is said before "where to?" */
        char **copy = ls_malloc(sizeof *copy * (size_t)(argc + 1));
        memcpy(copy, argv, sizeof *copy * (size_t)(argc + 1));
        int n = argc;
        ls_pipeline_opts po;
        ls_pipeline_opts_init(&po);
        ls_error perr;
        cli_args a;
        bool bad = ls_pipeline_opts_parse(&po, &n, copy, &perr) != 0;
        if (bad) ls_cli_error("export: %s", perr.msg);
        else bad = ls_cli_parse("export", USAGE, n, copy, CLI_JSON | CLI_STEP, &a) != LS_EXIT_OK;
        ls_pipeline_opts_free(&po);
        free(copy);
        if (bad) return LS_EXIT_INPUT;
    }
    if (!out || !*out) {
        ls_cli_error("export: where to? give -o OUT.pte or -o OUT.pt2%s (usage: lowerscope %s)",
                     out ? " (the name given is empty)" : "", USAGE);
        return LS_EXIT_INPUT;
    }
    /* a name the folder cannot hold is said before the pipeline runs (it ran, then the rename
     * failed: File name too long) */
    const char *base = strrchr(out, '/');
    base = base ? base + 1 : out;
    char dir[4096];
    snprintf(dir, sizeof dir, "%.*s", base > out ? (int)(base - out) : 1, base > out ? out : ".");
    long name_max = pathconf(dir, _PC_NAME_MAX);
    if (name_max > 0 && (long)strlen(base) > name_max) {
        ls_cli_error("export: %s: the file name is %zu bytes, more than the %ld its folder allows (nothing was written)",
                     out, strlen(base), name_max);
        return LS_EXIT_INPUT;
    }
    cli_run r;
    int s;
    int rc = cli_run_pipeline_at_step("export", USAGE, argc, argv, CLI_JSON | CLI_STEP, &r, &s);
    if (rc != LS_EXIT_OK) return rc;
    ls_export_summary sum;
    ls_error err;
    ls_export_opts eo = {.force = force, .memory_planning = r.opts.memory_planning,
                         .init_mutable_buffers = r.opts.init_mutable_buffers,
                         .mutable_buffer_names = r.opts.mutable_buffer_names};
    if (ls_export_with(&r.h, s, out, &eo, &sum, &err) != 0) {
        ls_cli_error("%s", err.msg);
        cli_run_free(&r);
        return ls_cli_exit_of(&err);
    }
    if (r.args.json) {
        print_json(&sum);
    } else {
        ls_buf b = {0};
        ls_export_summary_text(&sum, &b);
        fputs(b.s, stdout);
        ls_buf_free(&b);
    }
    /* a backend no stock ExecuTorch runtime has: the file runs only where it is linked */
    for (uint32_t k = 0; k < sum.n_needs; k++)
        if (sum.needs[k].backend && sum.needs[k].stand_in)
            ls_cli_error("warning: %s's %s delegate is lowerscope's bundled format standing in for it: ExecuTorch's %s "
                         "does not read it (export with --portable for a file a stock runtime runs)", out,
                         sum.needs[k].name, sum.needs[k].name);
        else if (sum.needs[k].backend && !sum.needs[k].stock)
            ls_cli_error("warning: %s needs backend %s, which ExecuTorch does not ship: a stock runtime refuses it "
                         "(export with --portable for one)", out, sum.needs[k].name);
    ls_export_summary_free(&sum);
    cli_run_free(&r);
    return LS_EXIT_OK;
}
