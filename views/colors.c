/* Colours as data: one table of semantic roles, one palette of tag colours, each with a
 * 256-colour and an 8-colour entry. Backgrounds stay the terminal's own (-1), and the tag
 * colours are mid-tones, so they read on dark and light terminals alike. With NO_COLOR (or
 * --no-color) no pair is used: tags show as letters, marks as characters, emphasis as
 * attributes. Pair numbers: roles 1..UI_R_COUNT, then one per palette entry. */
#include <stdlib.h>

#include "ui.h"

typedef struct role_color {
    short fg256, fg8; /* -1: terminal default */
    attr_t attr;      /* attributes in every mode */
    attr_t attr_mono; /* extra attributes when there are no colours */
} role_color;

static const role_color roles[UI_R_COUNT] = {
    [UI_R_NORMAL] = {-1, -1, A_NORMAL, A_NORMAL},
    [UI_R_HEADER] = {-1, -1, A_REVERSE, A_NORMAL},
    [UI_R_TITLE] = {-1, -1, A_BOLD, A_NORMAL},
    [UI_R_TITLE_FOCUS] = {-1, -1, A_BOLD | A_REVERSE, A_NORMAL},
    [UI_R_CURSOR] = {-1, -1, A_REVERSE, A_NORMAL},
    [UI_R_DIM] = {244, COLOR_WHITE, A_NORMAL, A_DIM},
    [UI_R_ADDED] = {34, COLOR_GREEN, A_BOLD, A_NORMAL},
    [UI_R_CHANGED] = {136, COLOR_YELLOW, A_BOLD, A_NORMAL},
    [UI_R_REMOVED] = {160, COLOR_RED, A_BOLD, A_NORMAL},
    [UI_R_ERROR] = {160, COLOR_RED, A_BOLD, A_NORMAL},
    [UI_R_WARN] = {136, COLOR_YELLOW, A_NORMAL, A_NORMAL},
    [UI_R_OK] = {34, COLOR_GREEN, A_NORMAL, A_NORMAL},
    [UI_R_MATCH] = {-1, -1, A_UNDERLINE | A_BOLD, A_NORMAL},
    [UI_R_KEY] = {-1, -1, A_BOLD, A_NORMAL},
    [UI_R_BORDER] = {244, COLOR_WHITE, A_NORMAL, A_DIM},
};

/* Tag palette: 16 mid-tone xterm-256 colours, then the 8-colour fallback (6 hues, then bold). */
static const short palette256[] = {33, 166, 34, 163, 37, 136, 99, 160, 30, 130, 69, 28, 169, 172, 61, 131};
#define N256 (int)(sizeof palette256 / sizeof palette256[0])
static const short palette8[] = {COLOR_BLUE, COLOR_MAGENTA, COLOR_GREEN, COLOR_CYAN, COLOR_RED, COLOR_YELLOW};
#define N8 (int)(sizeof palette8 / sizeof palette8[0])

void ui_colors_init(ui *u)
{
    if (u->no_color || !has_colors()) {
        u->colors = UI_COLORS_NONE;
        return;
    }
    start_color();
    use_default_colors();
    u->colors = COLORS >= 256 ? UI_COLORS_256 : UI_COLORS_8;
    if (COLORS < 8) {
        u->colors = UI_COLORS_NONE;
        return;
    }
    for (int r = 0; r < UI_R_COUNT; r++) {
        short fg = u->colors == UI_COLORS_256 ? roles[r].fg256 : roles[r].fg8;
        init_pair((short)(r + 1), fg, -1);
    }
    u->pair_base_tag = (short)(UI_R_COUNT + 1);
    if (u->colors == UI_COLORS_256)
        for (int i = 0; i < N256; i++) init_pair((short)(u->pair_base_tag + i), palette256[i], -1);
    else
        for (int i = 0; i < N8; i++) init_pair((short)(u->pair_base_tag + i), palette8[i], -1);
}

attr_t ui_role_attr(const ui *u, ui_role r, short *pair)
{
    const role_color *c = &roles[r];
    if (u->colors == UI_COLORS_NONE) {
        *pair = 0;
        return c->attr | c->attr_mono;
    }
    short fg = u->colors == UI_COLORS_256 ? c->fg256 : c->fg8;
    *pair = fg >= 0 ? (short)(r + 1) : 0;
    return c->attr;
}

attr_t ui_tag_attr(const ui *u, int tag, short *pair)
{
    *pair = 0;
    if (tag < 0 || u->colors == UI_COLORS_NONE) return A_NORMAL;
    if (u->colors == UI_COLORS_256) {
        *pair = (short)(u->pair_base_tag + tag % N256);
        return tag >= N256 ? A_UNDERLINE : A_NORMAL;
    }
    *pair = (short)(u->pair_base_tag + tag % N8);
    attr_t a = (tag / N8) % 2 ? A_BOLD : A_NORMAL;
    return tag >= 2 * N8 ? a | A_UNDERLINE : a;
}

int ui_tag_of_pair(const ui *u, short pair)
{
    if (u->colors == UI_COLORS_NONE || pair < u->pair_base_tag) return -1;
    int n = u->colors == UI_COLORS_256 ? N256 : N8;
    return pair - u->pair_base_tag < n ? pair - u->pair_base_tag : -1;
}

char ui_tag_letter(int tag)
{
    if (tag < 0) return ' ';
    if (tag < 26) return (char)('A' + tag);
    if (tag < 52) return (char)('a' + tag - 26);
    return '*';
}
