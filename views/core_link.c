/* The only place the UI calls core parts that other developers are still writing: loading a
 * file and running the pass pipeline (reader.h, passes.h), freeing a history (history.h) and
 * running a program (runtime.h). Each is switched on here once it is in the repository, so a
 * missing symbol never breaks the build; until then the UI says what is missing. */
#include <stdio.h>

#include "ui.h"

int ui_core_open(const char *path, ls_history **h, ls_error *err)
{
    *h = NULL;
    return ls_fail(err, "%s: this build cannot open files yet (the reader and the pass pipeline are not in it)", path);
}

void ui_core_free(ls_history *h)
{
    (void)h;
}

void ui_core_run(ui *u, const ls_program *p, const char *const *npy, int n_npy, ui_lines *out)
{
    (void)u;
    (void)p;
    (void)npy;
    (void)n_npy;
    ui_lines_add(out, UI_R_WARN, -1, "the bundled runtime is not in this build yet: nothing was run");
}
