/* The run screen (`r`, `:run [FILE.npy ...]`): runs the program at the current step with the
 * bundled runtime and shows the inputs, outputs, state and time. Errors are shown here, never
 * fatal. In scripted mode times are masked (—) so screen dumps stay stable. */
#include <stdio.h>
#include <string.h>

#include "ui.h"

void ui_run_build(ui *u)
{
    ui_lines *l = &u->screen_lines;
    ui_lines_clear(l);
    const ls_step *st = &u->h->steps[u->step];
    ui_lines_add(l, UI_R_TITLE, -1, "step %u %s · %s", u->step, st->pass, u->file);
    if (st->error) ui_lines_add(l, UI_R_WARN, -1, "this pass failed; running the program of the step before it");
    const char *npy[16];
    int n_npy = 0;
    static char args[sizeof u->run_args];
    snprintf(args, sizeof args, "%s", u->run_args);
    for (char *s = args, *tok; (tok = strtok_r(s, " ", &s)) && n_npy < 16;) npy[n_npy++] = tok;
    ui_core_run(u, st->program, npy, n_npy, l);
}

static void title(ui *u, ls_buf *b)
{
    ls_buf_printf(b, "Run · step %u %s · q back", u->step, u->h->steps[u->step].pass);
}

static uint32_t count(ui *u) { return u->screen_lines.n; }

static void draw_row(ui *u, uint32_t row, int y, int x, int w, bool cursor)
{
    ui_lines_draw_row(u, &u->screen_lines, row, y, x, w, cursor);
}

static bool match(ui *u, uint32_t row, const regex_t *re)
{
    return row < u->screen_lines.n && regexec(re, u->screen_lines.v[row].text, 0, NULL, 0) == 0;
}

const ui_view_ops ui_run_ops = {
    .name = "run",
    .title = title,
    .count = count,
    .draw_row = draw_row,
    .match = match,
};
