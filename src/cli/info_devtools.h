/* What info adds for ExecuTorch's devtools files (info_devtools.c): a bundled program's test
 * cases, an ETRecord's recorded steps and delegate map. */
#ifndef LS_INFO_DEVTOOLS_H
#define LS_INFO_DEVTOOLS_H

#include <stdbool.h>

#include "common.h"
#include "program.h"

/* Text lines after the program's (printed), or JSON members (",\"bundled\":{...}") appended
 * to json. Returns -1 with the message printed when the file cannot be read again. */
int cli_info_devtools(const char *path, const ls_program *p, ls_buf *json);

#endif
