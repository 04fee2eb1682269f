/* Help (`?`), generated from the action and binding tables (keys.c), the command table
 * (prompt.c) and the colour roles (colors.c): nothing here is written twice. */
#include <stdio.h>
#include <string.h>

#include "ui.h"

void ui_help_build(ui *u)
{
    ui_lines *l = &u->screen_lines;
    ui_lines_clear(l);
    uint32_t nb;
    const ui_binding *b = ui_bindings(&nb);
    const char *group = NULL;
    for (int a = 1; a < UI_A_COUNT; a++) {
        if (!group || strcmp(group, ui_action_group((ui_action)a)) != 0) {
            group = ui_action_group((ui_action)a);
            if (l->n) ui_lines_add(l, UI_R_NORMAL, -1, "%s", "");
            ui_lines_add(l, UI_R_TITLE, -1, "%s", group);
        }
        char keys[128] = "";
        for (uint32_t i = 0; i < nb; i++) {
            if (b[i].action != (ui_action)a) continue;
            size_t len = strlen(keys);
            snprintf(keys + len, sizeof keys - len, "%s%s", len ? " " : "", b[i].keys);
        }
        ui_line *ln = ui_lines_add(l, UI_R_NORMAL, -1, "  %-22s %s", keys, ui_action_help((ui_action)a));
        ln->indent = 24;
    }
    ui_lines_add(l, UI_R_NORMAL, -1, "%s", "");
    ui_lines_add(l, UI_R_TITLE, -1, "Commands (after :)");
    uint32_t nc;
    const ui_cmd_info *c = ui_commands(&nc);
    for (uint32_t i = 0; i < nc; i++) {
        ui_line *ln = ui_lines_add(l, UI_R_NORMAL, -1, "  %-22s %s", c[i].usage, c[i].help);
        ln->indent = 24;
    }
    ui_lines_add(l, UI_R_NORMAL, -1, "%s", "");
    ui_lines_add(l, UI_R_TITLE, -1, "Marks and colours");
    ui_lines_add(l, UI_R_ADDED, -1, "  +  added by this step");
    ui_lines_add(l, UI_R_CHANGED, -1, "  ~  changed by this step");
    ui_lines_add(l, UI_R_REMOVED, -1, "  -  removed by this step (dimmed)");
    ui_lines_add(l, UI_R_NORMAL, -1, "  [input] [param] [buffer] [const]  placeholders by kind");
    const ui_tagtab *tt = &u->dc.tags;
    for (uint32_t t = 0; t < tt->n; t++)
        ui_lines_add(l, UI_R_NORMAL, (int)t, "  %c  %s%s%s", ui_tag_letter((int)t), tt->tags[t], tt->backends[t] ? " → " : "",
                     tt->backends[t] ? tt->backends[t] : "");
    ui_lines_add(l, UI_R_DIM, -1, "  colours: %s (NO_COLOR or --no-color: tags as letters)",
                 u->colors == UI_COLORS_256 ? "256" : u->colors == UI_COLORS_8 ? "8" : "none");
}

static void title(ui *u, ls_buf *b)
{
    (void)u;
    ls_buf_puts(b, "Help · q back");
}

const ui_view_ops ui_help_ops = {
    .name = "help",
    .title = title,
    .count = ui_screen_count,
    .draw_row = ui_screen_draw_row,
    .match = ui_screen_match,
};
