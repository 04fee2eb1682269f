/* Command dispatch, --help and --version. */
#define _GNU_SOURCE /* vasprintf */
#include "cli.h"
#include "progress.h"

#include <stdarg.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "common.h"
#include "ops.h"
#include "tui.h"

int ls_cmd_info(int, char **), ls_cmd_verify(int, char **);
int ls_cmd_passes(int, char **), ls_cmd_partitions(int, char **), ls_cmd_diff(int, char **);
int ls_cmd_run(int, char **), ls_cmd_export(int, char **), ls_cmd_graph(int, char **), ls_cmd_node(int, char **);
/* The summaries fit --help's 80 columns next to a 20-column usage; "\n" continues under them. */
static const ls_command commands[] = {
    {"info", ls_cmd_info, "info FILE", "what a program holds: nodes, ops, inputs, tags, verifier"},
    {"verify", ls_cmd_verify, "verify FILE", "the verifier's findings (exit 1 when it finds errors)"},
    {"passes", ls_cmd_passes, "passes FILE", "run the lowering pipeline and report each step"},
    {"partitions", ls_cmd_partitions, "partitions FILE", "the delegation table: per op, what each tag took and\n"
                                                         "what stayed on the CPU, and why"},
    {"diff", ls_cmd_diff, "diff FILE --step S", "what a step (or A..B, or --with another file) changed,\n"
                                                "as +/-/~ lines"},
    {"graph", ls_cmd_graph, "graph FILE", "the partition graph: delegates, CPU islands and the\n"
                                          "tensors between them (--dot for Graphviz)"},
    {"node", ls_cmd_node, "node FILE NAME", "one node at a step, as the UI's node pane: where it runs,\n"
                                            "arguments, users, data, who holds it, stack trace"},
    {"run", ls_cmd_run, "run FILE", "run the program or a step's on the bundled CPU runtime;\n"
                                    "--compare checks it against the loaded program"},
    {"export", ls_cmd_export, "export FILE -o OUT", "write a step's program as an ExecuTorch .pte (or .pt2)"},
    {"help", NULL, "help [COMMAND]", "this help, or a command's (as COMMAND --help)"},
};

const ls_command *ls_cli_commands(int *count)
{
    *count = (int)(sizeof commands / sizeof commands[0]);
    return commands;
}

bool ls_cli_help(int argc, char **argv, const char *help)
{
    for (int i = 1; i < argc; i++)
        if (strcmp(argv[i], "--help") == 0 || strcmp(argv[i], "-h") == 0) {
            fputs(help, stdout);
            return true;
        }
    return false;
}

static char last_error[LS_ERR_MAX]; /* what ls_cli_error said last, for a --json document */

void ls_cli_error(const char *fmt, ...)
{
    va_list ap, copy;
    va_start(ap, fmt);
    va_copy(copy, ap);
    vsnprintf(last_error, sizeof last_error, fmt, copy); /* a copy: stderr gets it whole, however long */
    va_end(copy);
    char *msg = NULL;
    if (vasprintf(&msg, fmt, ap) < 0) msg = NULL;
    va_end(ap);
    /* one message, one line: a newline or tab in it came from a file name or a string the user
     * gave (stderr's stream escapes every other control, and lets layout through) */
    fputs("lowerscope: ", stderr);
    for (const char *c = msg ? msg : fmt; *c; c++) {
        if (*c == '\n') fputs("\\n", stderr);
        else if (*c == '\r') fputs("\\r", stderr);
        else if (*c == '\t') fputs("\\t", stderr);
        else fputc(*c, stderr);
    }
    fputc('\n', stderr);
    free(msg);
}

const char *ls_cli_last_error(void)
{
    return last_error;
}

int ls_cli_take_file(const char *cmd, const char *usage, const char *arg, const char **path)
{
    if (arg[0] == '-' && arg[1]) {
        ls_cli_error("%s: unknown option or missing value '%s' (usage: lowerscope %s)", cmd, arg, usage);
        return -1;
    }
    if (ls_cli_refuse_flag_value(cmd, usage, arg)) return -1;
    if (*path) {
        ls_cli_error("%s: one FILE at a time ('%s' is a second one)", cmd, arg);
        return -1;
    }
    if (!*arg) {
        ls_cli_error("%s: FILE is an empty name (usage: lowerscope %s)", cmd, usage);
        return -1;
    }
    *path = arg;
    return 0;
}

int ls_cli_load_opt(const char *cmd, ls_load_opts *o, bool metadata_only, int argc, char **argv, int *i)
{
    const char *a = argv[*i];
    bool has_value = *i + 1 < argc;
    if (metadata_only && strcmp(a, "--metadata-only") == 0) {
        o->metadata_only = true;
        return 1;
    }
    if ((strcmp(a, "--model") == 0 || strcmp(a, "--method") == 0) && has_value) {
        if (a[4] == 'd') o->model = argv[++*i];
        else o->method = argv[++*i];
        return 1;
    }
    if (strcmp(a, "--ops") == 0 && has_value) { /* declared before the file is read: they type its calls */
        if (ls_cli_refuse_empty(cmd, "--ops", argv[*i + 1], "the file of custom operator schemas (one a line)")) return -1;
        ls_error err;
        if (ls_ops_load_file(argv[++*i], &err) != 0) {
            ls_cli_error("%s: --ops: %s", cmd, err.msg);
            return -1;
        }
        return 1;
    }
    if (strcmp(a, "--data") == 0 && has_value) {
        if (o->n_data == LS_MAX_DATA_FILES) {
            ls_cli_error("%s: at most %d --data files", cmd, LS_MAX_DATA_FILES);
            return -1;
        }
        ls_error err;
        if (ls_load_check_data(argv[++*i], &err) != 0) {
            ls_cli_error("%s: %s", cmd, err.msg);
            return -1;
        }
        o->data[o->n_data++] = argv[*i];
        return 1;
    }
    return 0;
}

int ls_cli_parse(const char *cmd, const char *usage, int argc, char **argv, unsigned accept, cli_args *a)
{
    memset(a, 0, sizeof *a);
    int lo;
    for (int i = 1; i < argc; i++) {
        if ((accept & CLI_JSON) && strcmp(argv[i], "--json") == 0) a->json = true;
        else if ((accept & CLI_STEP) && strcmp(argv[i], "--step") == 0 && i + 1 < argc) a->step = argv[++i];
        else if ((accept & CLI_STEP) && strncmp(argv[i], "--step=", 7) == 0) a->step = argv[i] + 7;
        else if ((lo = ls_cli_load_opt(cmd, &a->load, true, argc, argv, &i)) != 0) {
            if (lo < 0) return LS_EXIT_INPUT;
        } else if (ls_cli_take_file(cmd, usage, argv[i], &a->path) != 0) {
            return LS_EXIT_INPUT;
        }
    }
    if (!a->path) {
        ls_cli_error("%s: which file? (usage: lowerscope %s)", cmd, usage);
        return LS_EXIT_INPUT;
    }
    return LS_EXIT_OK;
}

int ls_cli_load(const char *cmd, const char *usage, int argc, char **argv, unsigned accept, cli_args *a,
                ls_program **p)
{
    *p = NULL;
    if (ls_cli_parse(cmd, usage, argc, argv, accept, a) != LS_EXIT_OK) return LS_EXIT_INPUT;
    ls_error err;
    a->load.weight_sizes_only = (accept & CLI_WEIGHT_SIZES) != 0;
    ls_progress_tty_begin(); /* a load over a second says how far it is, on a terminal */
    int rc = ls_load(a->path, &a->load, p, &err);
    ls_progress_tty_end();
    if (rc != 0) {
        ls_cli_error("%s", err.msg);
        return ls_cli_exit_of(&err);
    }
    return LS_EXIT_OK;
}

/* Kept to 80 columns (tests/check_cli.c). */
static void print_help(FILE *f)
{
    fprintf(f, "lowerscope %s — what ExecuTorch lowering does to a program, pass by pass\n\n", LS_VERSION);
    fprintf(f, "usage: lowerscope FILE               the terminal UI (.pt2, its JSON, .pte)\n");
    fprintf(f, "       lowerscope COMMAND FILE ...   one of the commands below\n\ncommands:\n");
    int n;
    const ls_command *c = ls_cli_commands(&n);
    for (int i = 0; i < n; i++) {
        fprintf(f, "  %-20s ", c[i].usage);
        for (const char *s = c[i].summary; *s; s++) {
            fputc(*s, f);
            if (*s == '\n') fprintf(f, "%23s", "");
        }
        fputc('\n', f);
    }
    fprintf(f, "\nlowerscope COMMAND --help lists a command's options: --json, --step S,\n"
               "--backend NAME|FILE, --pipeline a,b,..., --model NAME and the command's own.\n"
               "exit codes: 0 ok, 1 findings (verifier errors, a failed step or comparison),\n"
               "2 bad input or usage, 3 valid but needs what lowerscope lacks (a backend, a\n"
               "kernel). docs/cli.md documents every command and JSON format.\n");
}

/* Whether the arguments open the terminal UI: not a command, help or --version, but a file
 * (or the UI's options). */
static bool opens_the_ui(int argc, char **argv)
{
    if (argc < 2 || !strcmp(argv[1], "--help") || !strcmp(argv[1], "-h") || !strcmp(argv[1], "help") ||
        !strcmp(argv[1], "--version"))
        return false;
    int n;
    const ls_command *c = ls_cli_commands(&n);
    for (int i = 0; i < n; i++)
        if (c[i].run && strcmp(argv[1], c[i].name) == 0) return false;
    return argv[1][0] == '-' || strchr(argv[1], '.') || strchr(argv[1], '/') || access(argv[1], F_OK) == 0;
}

static const char **split_values, **split_options; /* what split_equals made, for the messages */
static int n_split;

const char *ls_cli_split_from(const char *arg)
{
    for (int i = 0; i < n_split; i++)
        if (split_values[i] == arg) return split_options[i];
    return NULL;
}

bool ls_cli_refuse_flag_value(const char *cmd, const char *usage, const char *arg)
{
    const char *flag = ls_cli_split_from(arg);
    if (flag) ls_cli_error("%s: %s=%s: %s takes no value (usage: lowerscope %s)", cmd, flag, arg, flag, usage);
    return flag != NULL;
}

bool ls_cli_refuse_empty(const char *cmd, const char *opt, const char *value, const char *wants)
{
    ls_error err;
    if (ls_refuse_empty_path(opt, value, wants, &err) == 0) return false;
    ls_cli_error("%s: %s", cmd, err.msg);
    return true;
}

/* --name=value becomes --name value, for every option of every command (GNU style), from
 * argv[first] on: the parsers see one spelling. A "--" ends the options: it is dropped, and a
 * word after it that starts with "-" is passed as "./WORD", a path to every parser. The array
 * is the caller's to free; its strings are argv's or live until exit. */
static char **split_equals(int argc, char **argv, int first, int *n_out)
{
    split_values = ls_calloc((size_t)argc + 1, sizeof *split_values);
    split_options = ls_calloc((size_t)argc + 1, sizeof *split_options);
    char **v = ls_malloc(sizeof *v * (size_t)(2 * argc + 1));
    int n = 0;
    bool options = true;
    for (int i = 0; i < argc; i++) {
        const char *a = argv[i];
        const char *eq = options && i >= first && a[0] == '-' && a[1] == '-' && a[2] ? strchr(a, '=') : NULL;
        if (options && i >= first && !strcmp(a, "--")) { /* the end of the options: dropped, and what */
            options = false;                               /* follows is a file, however it starts */
            continue;
        }
        if (!options && a[0] == '-') { /* "-x.pt2" after "--": the parsers see "./-x.pt2", a path */
            v[n++] = (char *)ls_internf("./%s", a);
            continue;
        }
        if (eq && eq > a + 2) {
            v[n++] = (char *)ls_intern_n(a, (size_t)(eq - a));
            v[n++] = (char *)(eq + 1);
            split_options[n_split] = v[n - 2];
            split_values[n_split++] = v[n - 1];
        } else {
            v[n++] = argv[i];
        }
    }
    v[n] = NULL;
    *n_out = n;
    return v;
}

int ls_cli_exit_of(const ls_error *e)
{
    return e->code == LS_ERR_NEEDS ? LS_EXIT_NEEDS : LS_EXIT_INPUT;
}

int ls_cli_main(int argc, char **argv)
{
    /* whatever is printed from here on is shown safely; the UI keeps stdout to draw on */
    bool ui = opens_the_ui(argc, argv);
    ls_cli_safe_output(!ui);
    if (ui) { /* lowerscope FILE --step=2: the UI's options take the form too */
        char **args = split_equals(argc, argv, 1, &argc);
        int rc = ls_tui_main(argc, args);
        free(args);
        return rc;
    }
    int n;
    const ls_command *c = ls_cli_commands(&n);
    if (argc == 3 && strcmp(argv[1], "help") == 0) { /* help COMMAND: the command's own --help */
        for (int i = 0; i < n; i++)
            if (c[i].run && strcmp(argv[2], c[i].name) == 0) return ls_cli_output_done(c[i].run(2, (char *[]){argv[2], "--help", NULL}));
        ls_cli_error("help: no command '%s' (lowerscope --help lists them)", argv[2]);
        return LS_EXIT_INPUT;
    }
    if (argc < 2 || strcmp(argv[1], "--help") == 0 || strcmp(argv[1], "-h") == 0 || strcmp(argv[1], "help") == 0) {
        print_help(stdout);
        return ls_cli_output_done(argc < 2 ? LS_EXIT_INPUT : LS_EXIT_OK);
    }
    if (strcmp(argv[1], "--version") == 0) {
        printf("lowerscope %s\n", LS_VERSION);
        return ls_cli_output_done(LS_EXIT_OK);
    }
    for (int i = 0; i < n; i++)
        if (c[i].run && strcmp(argv[1], c[i].name) == 0) {
            char **args = split_equals(argc, argv, 2, &argc);
            int rc = ls_cli_output_done(c[i].run(argc - 1, args + 1));
            free(args);
            return rc;
        }
    ls_cli_error("unknown command '%s' (lowerscope --help lists them)", argv[1]);
    return LS_EXIT_INPUT;
}
