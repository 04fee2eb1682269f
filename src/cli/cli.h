/* The command line: one table of commands (cli.c), one file per command (cmd_*.c). */
#ifndef LS_CLI_H
#define LS_CLI_H

#include <stdbool.h>
#include <stdio.h>

#include "reader.h"

/* Exit codes shared by every command (docs/cli.md). */
enum {
    LS_EXIT_OK = 0,
    LS_EXIT_FINDINGS = 1, /* verifier errors, failed comparison */
    LS_EXIT_INPUT = 2,    /* unreadable or invalid input, bad usage */
    LS_EXIT_NEEDS = 3,    /* valid, but needs what lowerscope lacks (a backend, a kernel, an XNNPACK node type) */
};

int ls_cli_main(int argc, char **argv);

typedef struct ls_command {
    const char *name;
    int (*run)(int argc, char **argv); /* argv[0] is the command name */
    const char *usage;                 /* "info FILE [--json]" */
    const char *summary;               /* one line for --help */
} ls_command;

const ls_command *ls_cli_commands(int *count);

/* `lowerscope COMMAND --help` (or -h anywhere in its arguments): prints the command's help text,
 * kept next to its option parsing, to stdout and returns true; the command then exits 0. */
bool ls_cli_help(int argc, char **argv, const char *help);

/* FILE and the options of the commands that read one: --model NAME, --method NAME, --data FILE,
 * --metadata-only, and
 * --json and --step S (--step=S) for the commands that take them. */
typedef struct cli_args {
    const char *path;
    const char *step; /* --step S, or NULL */
    bool json;
    ls_load_opts load;
} cli_args;
enum { CLI_JSON = 1, CLI_STEP = 2 }; /* what a command takes besides FILE, --model, --metadata-only */
/* not an option: the command shows what the weights are, not their values (reader.h weight_sizes_only) */
enum { CLI_WEIGHT_SIZES = 4 };

/* The help lines of the options every command reading a .pte takes (ls_cli_load_opt). */
#define CLI_PTE_OPTIONS_HELP                                                                                           \
    "  --method NAME         which method of a .pte (default: forward, else the first that runs);\n"              \
    "                        lowerscope info lists them\n"                                                       \
    "  --data FILE.ptd       external data of a .pte (repeatable; default: FILE's stem .ptd or\n"               \
    "                        _default_external_constant.ptd beside it, as exir writes them)\n"            \
    "  --ops FILE            torch schemas of custom operators, one a line (my_ops::foo(Tensor x)\n"         \
    "                        -> Tensor, and its .out variant): typed, lowered, shown, never run\n"

/* A word that is not an option of the command: FILE, once. An unknown option, a flag given a
 * value, an empty name or a second file is said (naming the command) and refused: -1. */
int ls_cli_take_file(const char *cmd, const char *usage, const char *arg, const char **path);
/* One option of how FILE is read, at argv[*i]: --model NAME, --method NAME, --data FILE.ptd
 * (repeatable), --ops FILE (declares its operators at once) and, with metadata_only,
 * --metadata-only. Returns 1 when it was one (*i moved
 * past its value), 0 when not, -1 after printing what is wrong. */
int ls_cli_load_opt(const char *cmd, ls_load_opts *o, bool metadata_only, int argc, char **argv, int *i);

/* Parses argv[1..argc) (accept: CLI_JSON | CLI_STEP, what the command takes) and loads FILE into
 * *p (NULL on failure). Returns LS_EXIT_OK, or LS_EXIT_INPUT after printing the error. */
/* The parsing alone (the same messages), for a command that looks at the file first. */
int ls_cli_parse(const char *cmd, const char *usage, int argc, char **argv, unsigned accept, cli_args *a);
int ls_cli_load(const char *cmd, const char *usage, int argc, char **argv, unsigned accept, cli_args *a,
                ls_program **p);

/* Replaces stderr (and stdout with with_stdout; the terminal UI draws on stdout itself) by
 * streams that show text as safe_text.h says before it reaches the terminal (safe_output.c). */
void ls_cli_safe_output(bool with_stdout);
/* A command's exit code once its output is flushed: 2 with a message when writing it failed
 * (`info X --json > /dev/full`: "cannot write the output: No space left on device"), else rc. */
int ls_cli_output_done(int rc);
/* The exit code of a failure: 3 when it is a need (LS_ERR_NEEDS: out of memory, weights the load
 * left out, a backend or kernel lowerscope lacks), else 2. */
int ls_cli_exit_of(const ls_error *e);
/* The option an argument was the value of in --option=value, or NULL (the parsers see the two
 * apart: a flag given a value says so). */
const char *ls_cli_split_from(const char *arg);
/* When arg is the value of a --flag=value whose flag no option took (no option before took it):
 * says "CMD: --json=1: --json takes no value (usage: ...)" and returns true. */
bool ls_cli_refuse_flag_value(const char *cmd, const char *usage, const char *arg);
/* An option that names a file given an empty string: says so, naming the option and what it
 * wants (not "a file named by an empty string" from deep in a reader, with no option named). */
bool ls_cli_refuse_empty(const char *cmd, const char *opt, const char *value, const char *wants);

/* Prints "lowerscope: msg" to stderr. */
void ls_cli_error(const char *fmt, ...) __attribute__((format(printf, 1, 2)));
/* The message ls_cli_error printed last (without "lowerscope: "), "" before any. */
const char *ls_cli_last_error(void);

#endif
