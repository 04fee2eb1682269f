/* lowerscope run on ExecuTorch's devtools files: a bundled program's test cases
 * (run_bundled.c) and a program's profile from an ETDump (run_etdump.c). cmd_run.c parses the
 * options and hands over. */
#ifndef LS_RUN_DEVTOOLS_H
#define LS_RUN_DEVTOOLS_H

#include <stdbool.h>

#include "cli.h"

typedef struct cli_devtools_run {
    const char *path;
    const char *etdump;    /* --etdump FILE */
    bool json;
    double rtol, atol;     /* < 0: ExecuTorch's defaults */
    double ticks_per_second; /* --ticks-per-ms x 1000; 0: nanoseconds */
    ls_load_opts load;
} cli_devtools_run;

/* Runs every test case; exit 0 all passed, 1 a case failed (or could not be checked), 2 bad
 * input, 3 the program needs what lowerscope lacks. */
int cli_run_bundled(const cli_devtools_run *o);
/* The ETDump's events on the program's nodes; exit 0, or 2 for bad input. */
int cli_run_etdump(const cli_devtools_run *o);

#endif
