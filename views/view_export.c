/* Export (`e`, `:export PATH`): writes the program at the current step with the core's writer
 * (export.h: a .pte, or a .pt2 archive when PATH ends in .pt2) and shows what was written on a
 * screen of its own (or why it was not written, wrapped). An existing file is never replaced
 * without asking: the prompt line asks "PATH exists — overwrite? (y: yes; n, q or Esc: no)" and y exports again
 * with force. */
#include <stdio.h>
#include <string.h>
#include <sys/stat.h>

#include "export.h"
#include "ui.h"

void ui_export(ui *u, const char *path, bool force)
{
    const ls_step *st = &u->h->steps[u->step];
    if (st->error) {
        ui_message(u, true, "step %u %s failed (%s): export an earlier step", u->step, st->pass, st->error);
        return;
    }
    struct stat sb;
    if (!force && stat(path, &sb) == 0 && S_ISREG(sb.st_mode)) {
        snprintf(u->export_path, sizeof u->export_path, "%s", path);
        u->prompt_kind = 'y';
        u->msg[0] = 0;
        return;
    }
    ls_export_summary sum;
    ls_error err = {0};
    ui_lines *l = &u->screen_lines;
    ui_lines_clear(l);
    if (ls_export_program(st->program, path, force, &sum, &err) != 0) { /* long messages: wrapped on the screen */
        ui_lines_add(l, UI_R_ERROR, -1, "%s was not written:", path);
        ui_lines_add_wrapped(l, UI_R_ERROR, err.msg, u->cols - 4);
        u->screen = UI_S_MAIN;
        ui_open_screen(u, UI_S_EXPORT);
        ui_message(u, true, "export failed: %s was not written", path);
        return;
    }
    sum.step = (int)u->step; /* the program came from this step of the history */
    sum.pass = st->pass;
    ls_buf text = {0};
    ls_export_summary_text(&sum, &text);
    for (char *s = text.s; s && *s;) {
        char *e = strchr(s, '\n');
        if (e) *e = 0;
        ui_lines_add_wrapped(l, l->n ? UI_R_NORMAL : UI_R_OK, s, u->cols - 4);
        s = e ? e + 1 : s + strlen(s);
    }
    if (!sum.pt2) {
        ui_lines_add(l, UI_R_NORMAL, -1, "%s", "");
        ui_lines_add(l, UI_R_DIM, -1, "to check it against the loaded program:");
        /* the path as it was given, so the command works from here (u->file is the name only) */
        ui_lines_add(l, UI_R_DIM, -1, "  lowerscope run %s --compare-with %s", path, u->h->path ? u->h->path : u->file);
    }
    ls_buf_free(&text);
    ls_export_summary_free(&sum);
    u->screen = UI_S_MAIN;
    ui_open_screen(u, UI_S_EXPORT);
    ui_message(u, false, "wrote %s%s", path, force ? " (replaced)" : "");
}

void ui_export_answer(ui *u, int key)
{
    if (key == 'y' || key == 'Y') {
        u->prompt_kind = 0;
        ui_export(u, u->export_path, true);
    } else if (key == 'n' || key == 'N' || key == 'q' || key == 'Q' || key == 27 || key == 3 || key == '\n') {
        u->prompt_kind = 0;
        ui_message(u, false, "%s not written: it is left as it was", u->export_path);
    }
    /* any other key: the question stays (it says which keys answer it) */
}

static void title(ui *u, ls_buf *b)
{
    ls_buf_printf(b, "Export · step %u %s · q back", u->step, u->h->steps[u->step].pass);
}

const ui_view_ops ui_export_ops = {
    .name = "export",
    .title = title,
    .count = ui_screen_count,
    .draw_row = ui_screen_draw_row,
    .match = ui_screen_match,
};
