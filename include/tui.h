/* The terminal UI: the entry points the CLI and the tests call. Everything else in views/ is
 * internal (views/ui.h). The UI only reads what the core produced: a history of steps. */
#ifndef LS_TUI_H
#define LS_TUI_H

#include <stdbool.h>

#include "common.h"
#include "history.h"

/* `lowerscope FILE [--no-color] [--step S]`: loads FILE, runs the pipeline and opens the UI.
 * argv[0] is the program name. Returns an exit code (0, or 2 for bad input). */
int ls_tui_main(int argc, char **argv);

typedef struct ls_tui_opts {
    bool no_color;          /* tags as letters, no colours (also NO_COLOR in the environment) */
    const char *script;     /* scripted mode: a file of keys and :commands (LOWERSCOPE_SCRIPT) */
    int rows, cols;         /* scripted mode screen size (LOWERSCOPE_SIZE, default 80x24) */
    const char *start_step; /* step shown first (ls_history_find_step); NULL = the last step */
    bool headless;          /* draw into an off-screen terminal (implied by script) */
    bool script_no_wait;    /* scripted mode on a history still being made: start at once (a script
                             * otherwise waits for the whole pipeline before its first event) */
    const char *etdump;     /* --etdump FILE: a device's measurements over the step they describe */
} ls_tui_opts;

/* Fills opts from the environment: NO_COLOR, LOWERSCOPE_SCRIPT, LOWERSCOPE_SIZE. */
void ls_tui_opts_env(ls_tui_opts *opts);

/* Runs the UI on a history (borrowed; not freed). Returns 0, or 2 when the UI could not start
 * (err says why). Scripted mode runs the script and returns without reading the keyboard. */
int ls_tui_run(const ls_history *h, const ls_tui_opts *opts, ls_error *err);

#endif
