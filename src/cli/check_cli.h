/* The runtime's load checks for the commands that read a .pte (verify, run, export). */
#ifndef LS_CHECK_CLI_H
#define LS_CHECK_CLI_H

#include <stdbool.h>

#include "pte_check.h"

/* True when PATH holds an ExecuTorch program ("ET" at byte 4, as ls_load sniffs it). */
bool cli_is_pte(const char *path);
/* True when PATH holds a bundled program ("BP08" at byte 4). */
bool cli_is_bpte(const char *path);
/* Reads PATH without the reader's cross-reference check and runs the runtime's load checks on
 * it; a bundled program (.bpte) on the program it embeds, which ExecuTorch loads as any
 * (bundled_program.cpp get_program_data, then Program::load). -1 (err set) when the file cannot
 * be read as a flatbuffer at all. */
int cli_runtime_check(const char *path, ls_pte_check_report *r, ls_error *err);

#endif
