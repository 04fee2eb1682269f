/* Help (`?`), generated from the action and binding tables (keys.c), the command table
 * (prompt.c) and the colour roles (colors.c): nothing here is written twice. */
#include <stdio.h>
#include <string.h>

#include "ui.h"

/* One key or command: its keys in the first 24 columns, its help beside them, wrapped at spaces to
 * the screen's width (the lines after the first start under the help). */
static void add_entry(ui_lines *l, const char *keys, const char *help, int width)
{
    int w = width - 24 - 3;
    if (w < 20) w = 20;
    bool first = true;
    for (const char *s = help; first || *s;) {
        int n = (int)strlen(s);
        if (n > w) {
            n = w;
            while (n > w / 2 && s[n] != ' ') n--;
            if (s[n] != ' ') n = w;
        }
        if (first) {
            ui_line *ln = ui_lines_add(l, UI_R_NORMAL, -1, "  %-22s %.*s", keys, n, s);
            ln->indent = 24;
        } else {
            ui_lines_add(l, UI_R_NORMAL, -1, "%24s %.*s", "", n, s);
        }
        first = false;
        s += n;
        while (*s == ' ') s++;
    }
}

void ui_help_build(ui *u)
{
    ui_lines *l = &u->help_lines;
    ui_lines_clear(l);
    uint32_t nb;
    const ui_binding *b = ui_bindings(&nb);
    /* groups in the order they first appear in the action table, each once with all its actions */
    for (int g = 1; g < UI_A_COUNT; g++) {
        const char *group = ui_action_group((ui_action)g);
        bool seen = false;
        for (int e = 1; e < g && !seen; e++) seen = strcmp(ui_action_group((ui_action)e), group) == 0;
        if (seen) continue;
        if (l->n) ui_lines_add(l, UI_R_NORMAL, -1, "%s", "");
        ui_lines_add(l, UI_R_TITLE, -1, "%s", group);
        for (int a = g; a < UI_A_COUNT; a++) {
            if (strcmp(ui_action_group((ui_action)a), group) != 0) continue;
            char keys[128] = "";
            for (uint32_t i = 0; i < nb; i++) {
                if (b[i].action != (ui_action)a) continue;
                size_t len = strlen(keys);
                snprintf(keys + len, sizeof keys - len, "%s%s", len ? " " : "", b[i].keys);
            }
            add_entry(l, keys, ui_action_help((ui_action)a), u->cols);
        }
    }
    ui_lines_add(l, UI_R_NORMAL, -1, "%s", "");
    ui_lines_add(l, UI_R_TITLE, -1, "Commands (after :)");
    uint32_t nc;
    const ui_cmd_info *c = ui_commands(&nc);
    for (uint32_t i = 0; i < nc; i++) {
        add_entry(l, c[i].usage, c[i].help, u->cols);
    }
    ui_lines_add(l, UI_R_NORMAL, -1, "%s", "");
    ui_lines_add(l, UI_R_TITLE, -1, "Marks and colours");
    ui_lines_add(l, UI_R_ADDED, -1, "  +  added by this step");
    ui_lines_add(l, UI_R_CHANGED, -1, "  ~  changed by this step");
    ui_lines_add(l, UI_R_REMOVED, -1, "  -  removed by this step (dimmed)");
    ui_lines_add(l, UI_R_NORMAL, -1, "  [input] [param] [buffer] [const]  placeholders by kind");
    /* the partitions pane's short figures (view_partitions.c details_at), said once here */
    add_entry(l, "6n 3c 1s 48B", "a partition's nodes, constants, state buffers and their bytes (K KiB, M MiB, G GiB); "
                                 "opaque 1.1K: a delegate read from a .pte, its blob's size", u->cols);
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

static uint32_t count(ui *u)
{
    return u->help_lines.n;
}

static void draw_row(ui *u, uint32_t row, int y, int x, int w, bool cursor)
{
    ui_lines_draw_row(u, &u->help_lines, row, y, x, w, cursor, ui_pane_of(u, UI_P_SCREEN)->left);
}

static bool match(ui *u, uint32_t row, const regex_t *re)
{
    return ui_lines_match(&u->help_lines, row, re);
}

const ui_view_ops ui_help_ops = {
    .name = "help",
    .title = title,
    .count = count,
    .draw_row = draw_row,
    .match = match,
};
