/* Keys as data: the actions (ui.h, UI_ACTIONS, with their help text) and one table of
 * bindings from key names to actions. Help is generated from these two tables, scripts use the
 * same key names, and multi-key sequences (gd, gu, gg) are resolved here. */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <wchar.h>

#include "ui.h"

static const struct {
    const char *name, *group, *help;
} actions[UI_A_COUNT] = {
    [UI_A_NONE] = {"none", "", ""},
#define X(id, grp, hlp) [UI_A_##id] = {#id, grp, hlp},
    UI_ACTIONS(X)
#undef X
};

/* When two bindings share a key, the first enabled one wins. */
static const ui_binding bindings[] = {
    {"j", UI_A_DOWN},
    {"<Down>", UI_A_DOWN},
    {"k", UI_A_UP},
    {"<Up>", UI_A_UP},
    {"<C-d>", UI_A_HALF_DOWN},
    {"<C-u>", UI_A_HALF_UP},
    {"<PgDn>", UI_A_PAGE_DOWN},
    {"<Space>", UI_A_PAGE_DOWN},
    {"<PgUp>", UI_A_PAGE_UP},
    {"g", UI_A_PARTGRAPH},
    {"gg", UI_A_FIRST},
    {"<Home>", UI_A_FIRST},
    {"G", UI_A_LAST},
    {"<End>", UI_A_LAST},
    {"<Tab>", UI_A_NEXT_PANE},
    {"<S-Tab>", UI_A_PREV_PANE},
    {"1", UI_A_PANE_1},
    {"2", UI_A_PANE_2},
    {"3", UI_A_PANE_3},
    {"4", UI_A_PANE_4},
    {"5", UI_A_PANE_5},
    {"<Right>", UI_A_STEP_NEXT},
    {"l", UI_A_STEP_NEXT},
    {"n", UI_A_SEARCH_NEXT},
    {"<Left>", UI_A_STEP_PREV},
    {"h", UI_A_STEP_PREV},
    {"p", UI_A_STEP_PREV},
    {"{", UI_A_STEP_FIRST},
    {"}", UI_A_STEP_LAST},
    {"<", UI_A_SCROLL_LEFT},
    {">", UI_A_SCROLL_RIGHT},
    {"<Enter>", UI_A_ENTER},
    {"<BS>", UI_A_BACK},
    {"gd", UI_A_PRODUCER},
    {"gu", UI_A_USERS},
    {"t", UI_A_DIFF},
    {"x", UI_A_AROUND},
    {"]", UI_A_NEXT_DIFF},
    {"[", UI_A_PREV_DIFF},
    {"c", UI_A_COMPARE},
    {"o", UI_A_OVERLAY},
    {"s", UI_A_SORT},
    {"S", UI_A_SORT_REVERSE},
    {"/", UI_A_SEARCH},
    {"N", UI_A_SEARCH_PREV},
    {"f", UI_A_FILTER},
    {"<Esc>", UI_A_CANCEL},
    {"d", UI_A_TABLE},
    {"r", UI_A_RUN},
    {"?", UI_A_HELP},
    {"e", UI_A_EXPORT},
    {"M", UI_A_METHOD},
    {":", UI_A_COMMAND},
    {"<C-l>", UI_A_REDRAW},
    {"q", UI_A_QUIT},
};
#define N_BINDINGS (sizeof bindings / sizeof bindings[0])

const ui_binding *ui_bindings(uint32_t *n)
{
    *n = N_BINDINGS;
    return bindings;
}
const char *ui_action_group(ui_action a) { return actions[a].group; }
const char *ui_action_help(ui_action a) { return actions[a].help; }

static const struct {
    const char *name;
    int key;
} named[] = {
    {"Enter", '\n'},
    {"Esc", 27},
    {"Tab", '\t'},
    {"S-Tab", UI_KEY_FN + KEY_BTAB},
    {"BS", UI_KEY_FN + KEY_BACKSPACE},
    {"Up", UI_KEY_FN + KEY_UP},
    {"Down", UI_KEY_FN + KEY_DOWN},
    {"Left", UI_KEY_FN + KEY_LEFT},
    {"Right", UI_KEY_FN + KEY_RIGHT},
    {"PgUp", UI_KEY_FN + KEY_PPAGE},
    {"PgDn", UI_KEY_FN + KEY_NPAGE},
    {"Home", UI_KEY_FN + KEY_HOME},
    {"End", UI_KEY_FN + KEY_END},
    {"Space", ' '},
    {"lt", '<'},
    {"Colon", ':'}, /* the key, typed into the UI (a line starting with ':' is a command) */
    {"Resize", UI_KEY_RESIZE},
    {"Timeout", UI_KEY_TIMEOUT}, /* scripts: the input timeout passes, so a lone prefix (g) acts alone */
};

/* Escape sequences of the keys people press, as VT220/xterm-style terminals send them: ncurses
 * turns into keys only the ones TERM's terminfo lists, and under a wrong TERM (xterm-256color
 * inside tmux, whose Home is ESC [ 1 ~) the rest arrived as Esc, '[', '1', '~': four actions. */
static const struct {
    const char *seq; /* after the ESC */
    int key;
} sequences[] = {
    {"[A", KEY_UP},     {"OA", KEY_UP},     {"[B", KEY_DOWN},  {"OB", KEY_DOWN},  {"[C", KEY_RIGHT},
    {"OC", KEY_RIGHT},  {"[D", KEY_LEFT},   {"OD", KEY_LEFT},  {"[H", KEY_HOME},  {"OH", KEY_HOME},
    {"[1~", KEY_HOME},  {"[7~", KEY_HOME},  {"[F", KEY_END},   {"OF", KEY_END},   {"[4~", KEY_END},
    {"[8~", KEY_END},   {"[5~", KEY_PPAGE}, {"[6~", KEY_NPAGE}, {"[3~", KEY_DC},   {"[2~", KEY_IC},
    {"[Z", KEY_BTAB},
};

bool ui_escape_complete(const char *seq, size_t n)
{
    if (n < 2) return false;
    if (seq[0] == 'O') return true;                             /* SS3: one final byte */
    return (unsigned char)seq[n - 1] >= 0x40 && (unsigned char)seq[n - 1] <= 0x7e; /* CSI: a final byte */
}

int ui_escape_key(const char *seq, size_t n)
{
    for (size_t i = 0; i < sizeof sequences / sizeof sequences[0]; i++)
        if (strlen(sequences[i].seq) == n && !memcmp(sequences[i].seq, seq, n)) return UI_KEY_FN + sequences[i].key;
    return UI_KEY_NONE;
}

int ui_key_parse(const char **s)
{
    const char *p = *s;
    if (!*p) return UI_KEY_NONE;
    if (*p == '<') {
        const char *end = strchr(p, '>');
        if (end && end > p + 1) {
            size_t len = (size_t)(end - p - 1);
            for (size_t i = 0; i < sizeof named / sizeof named[0]; i++)
                if (strlen(named[i].name) == len && strncmp(p + 1, named[i].name, len) == 0) {
                    *s = end + 1;
                    return named[i].key;
                }
            if (len == 3 && p[1] == 'C' && p[2] == '-') {
                *s = end + 1;
                return p[3] & 0x1f;
            }
            return UI_KEY_NONE;
        }
    }
    /* one UTF-8 character */
    mbstate_t st = {0};
    wchar_t wc;
    size_t n = mbrtowc(&wc, p, strlen(p), &st);
    if (n == (size_t)-1 || n == (size_t)-2 || n == 0) {
        *s = p + 1;
        return (unsigned char)*p;
    }
    *s = p + n;
    return (int)wc;
}

/* Bindings parsed once into key codes. */
static int seqs[N_BINDINGS][3];
static int seq_len[N_BINDINGS];
static bool parsed;

static void parse_bindings(void)
{
    if (parsed) return;
    for (size_t i = 0; i < N_BINDINGS; i++) {
        const char *s = bindings[i].keys;
        int n = 0;
        while (*s && n < 3) seqs[i][n++] = ui_key_parse(&s);
        seq_len[i] = n;
    }
    parsed = true;
}

static bool enabled(const ui *u, ui_action a)
{
    (void)u;
    (void)a;
    return true;
}

static ui_action lookup(ui *u, const int *seq, int n, bool *longer)
{
    parse_bindings();
    ui_action found = UI_A_NONE;
    *longer = false;
    for (size_t i = 0; i < N_BINDINGS; i++) {
        if (seq_len[i] < n || memcmp(seqs[i], seq, sizeof *seq * (size_t)n) != 0 || !enabled(u, bindings[i].action))
            continue;
        if (seq_len[i] == n) {
            if (found == UI_A_NONE) found = bindings[i].action;
        } else {
            *longer = true;
        }
    }
    return found;
}

ui_action ui_keys_feed(ui *u, int key)
{
    int seq[4];
    int n = u->n_pending;
    memcpy(seq, u->pending, sizeof *seq * (size_t)n);
    seq[n++] = key;
    bool longer;
    ui_action a = lookup(u, seq, n, &longer);
    if (longer && n < 3) {
        memcpy(u->pending, seq, sizeof *seq * (size_t)n);
        u->n_pending = n;
        return UI_A_NONE;
    }
    if (a != UI_A_NONE || u->n_pending == 0) {
        u->n_pending = 0;
        return a;
    }
    /* the pending prefix did not continue: it acts alone, then the key is read again */
    ui_action first = ui_keys_flush(u);
    u->refeed = key;
    return first;
}

ui_action ui_keys_flush(ui *u)
{
    if (!u->n_pending) return UI_A_NONE;
    bool longer;
    ui_action a = lookup(u, u->pending, u->n_pending, &longer);
    u->n_pending = 0;
    return a;
}
