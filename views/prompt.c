/* The bottom-line prompt: the `:` command line, `/` incremental search and `f` filter input,
 * and the commands (as a table, for help). Search runs over the focused pane (every pane of the
 * main screen can be searched); a pattern without upper-case letters ignores case. Once found,
 * the matches are counted ("3/17"), and n/N say when they wrap. */
#include <ctype.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <strings.h>

#include "ui.h"

static const ui_cmd_info commands[] = {
    {"step N|PASS", "go to step N (0 = load) or to the step of a pass"},
    {"goto NAME", "select the node NAME (in this program or a lowered one)"},
    {"filter TAG|cpu|OP", "show only a tag's nodes, the CPU's, or one op (no argument: all)"},
    {"search REGEX", "search names and ops"},
    {"diff on|off", "diff marks"},
    {"run [FILE.npy ...]", "run this step and the loaded program; compare"},
    {"backend FILE", "lower again with a backend description"},
    {"relower", "lower a .pte again with the pipeline (a .pte opens as it is)"},
    {"method NAME", "open another method of a .pte (Tab completes its names)"},
    {"export PATH", "write this step's program (.pte, or .pt2)"},
    {"table", "delegation table"},
    {"graph", "partition graph (delegates and CPU islands as boxes)"},
    {"around [NAME]", "the neighbourhood of the selected node (or of NAME)"},
    {"compare STEP|FILE [S]", "side by side: a step, a file (its step S), or backend FILE (this step lowered for it)"},
    {"help", "this help"},
    {"save-display FILE", "write the screen as text (scripted tests)"},
    {"resize COLSxROWS", "resize the off-screen terminal (scripted tests)"},
    {"q, quit", "quit"},
};

const ui_cmd_info *ui_commands(uint32_t *n)
{
    *n = sizeof commands / sizeof commands[0];
    return commands;
}

static ui_pane *search_pane(ui *u)
{
    if (u->screen != UI_S_MAIN) return ui_pane_of(u, UI_P_SCREEN);
    ui_pane *p = ui_pane_of(u, u->focus);
    return p->ops->match ? p : ui_pane_of(u, UI_P_GRAPH);
}

void ui_prompt_open(ui *u, char kind)
{
    u->prompt_kind = kind;
    u->prompt[0] = 0;
    u->prompt_len = 0;
    u->prompt_hint[0] = 0;
    u->history_at = -1;
    u->msg[0] = 0;
    if (kind == '/') u->prompt_origin = search_pane(u)->sel;
}

/* A pattern without a character special to regular expressions is looked for as text (a
 * substring search: ten times faster than regexec on the million names of a big step). */
static bool compile(ui *u, const char *pattern)
{
    if (u->re_ok) regfree(&u->re);
    u->re_ok = false;
    ls_ptrmap_free(&u->search_ops);
    u->matches_valid = false;
    u->count.pending = false;
    if (!*pattern) return false;
    int flags = REG_EXTENDED | REG_NOSUB;
    bool upper = false;
    for (const char *c = pattern; *c; c++) upper |= isupper((unsigned char)*c) != 0;
    if (!upper) flags |= REG_ICASE;
    u->re_ok = regcomp(&u->re, pattern, flags) == 0;
    u->search_literal = strpbrk(pattern, ".[]()*+?{}|^$\\") == NULL;
    u->search_icase = !upper;
    return u->re_ok;
}

/* p has no upper-case letter (that is when the search ignores case) */
static bool contains_icase(const char *t, const char *p)
{
    size_t m = strlen(p);
    for (; *t; t++)
        if (tolower((unsigned char)*t) == p[0] && strncasecmp(t, p, m) == 0) return true;
    return false;
}

bool ui_search_matches(const ui *u, const char *text)
{
    if (!u->re_ok || !text) return false;
    if (u->search_literal) return u->search_icase ? contains_icase(text, u->search) : strstr(text, u->search) != NULL;
    return regexec(&u->re, text, 0, NULL, 0) == 0;
}

/* The same for a text many rows share (an op's name): asked once per pattern. */
bool ui_search_matches_shared(ui *u, const char *text)
{
    uintptr_t v;
    if (ls_ptrmap_get(&u->search_ops, text, &v)) return v != 0;
    bool m = ui_search_matches(u, text);
    ls_ptrmap_put(&u->search_ops, text, m);
    return m;
}

/* ---- the search itself: a scan from a row in one direction, wrapping, made in slices of a few
 * milliseconds so that keys stay instant on a million rows (the event loop goes on with it
 * between keys; scripts finish it before their next event) */

#define SLICE_SECONDS 0.004

static const char *pane_name(ui *u, const ui_pane *p)
{
    return p == ui_pane_of(u, UI_P_SCREEN) ? "screen" : p->ops->name;
}

/* ---- how many rows match, and which of them is selected ("3/17"): every row of the pane read
 * once per pattern and step, in slices as the search itself, after the first match is found */

static uint32_t match_at_or_after(const ui *u, uint32_t row)
{
    uint32_t lo = 0, hi = u->n_matches;
    while (lo < hi) {
        uint32_t mid = lo + (hi - lo) / 2;
        if (u->matches[mid] < row) lo = mid + 1;
        else hi = mid;
    }
    return lo;
}

/* "/pat: 3/17 in the graph" (and where it wrapped), once the count is known; else "/pat". */
static void say_position(ui *u, ui_pane *p)
{
    if (!u->matches_valid || u->matches_ops != p->ops) {
        ui_message(u, false, "/%s%s", u->search, u->count.wrapped);
        return;
    }
    uint32_t k = match_at_or_after(u, p->sel);
    /* a screen of boxes counts the lines that match (a line may cross several boxes) */
    const char *unit = p->ops->match_next ? " lines" : "";
    if (k < u->n_matches && u->matches[k] == p->sel)
        ui_message(u, false, "/%s: %u/%u%s in the %s%s", u->search, k + 1, u->n_matches, unit, pane_name(u, p), u->count.wrapped);
    else ui_message(u, false, "/%s: %u match%s in the %s%s", u->search, u->n_matches, u->n_matches == 1 ? "" : "es",
                    pane_name(u, p), u->count.wrapped);
}

static void count_start(ui *u, ui_pane *p)
{
    uint32_t n = p->ops->count(u);
    if (u->matches_valid && u->matches_ops == p->ops && u->matches_rows == n && u->matches_step == u->step) {
        say_position(u, p);
        return;
    }
    u->matches_valid = false;
    u->n_matches = 0;
    u->count.pending = true;
    u->count.pane = p;
    u->count.i = 0;
    u->count.n = n;
}

/* One slice of the count; true while unfinished. */
static bool count_step(ui *u, double end)
{
    ui_pane *p = u->count.pane;
    uint32_t n = p->ops->count(u);
    if (n != u->count.n) { /* the rows changed under it: start over */
        u->count.n = n;
        u->count.i = 0;
        u->n_matches = 0;
    }
    while (u->count.i < n) {
        for (uint32_t k = 0; k < 512 && u->count.i < n; k++, u->count.i++)
            if (p->ops->match(u, u->count.i, &u->re)) {
                if (u->n_matches == u->matches_cap) {
                    u->matches_cap = u->matches_cap ? 2 * u->matches_cap : 64;
                    u->matches = ls_realloc(u->matches, sizeof *u->matches * u->matches_cap);
                }
                u->matches[u->n_matches++] = u->count.i;
            }
        if (ls_now() > end) return true;
    }
    u->count.pending = false;
    u->matches_valid = true;
    u->matches_ops = p->ops;
    u->matches_rows = n;
    u->matches_step = u->step;
    if (!u->prompt_kind) say_position(u, p);
    return false;
}

/* A search of the top-level graph that found nothing: the first node inside a lowered module
 * that matches (as :goto would find it), looked for within a few milliseconds so that a miss
 * on a big program stays a key's cost; NULL when there is none, or none in that time
 * (*partly: the modules were not all looked in, and "no match" would say more than is known). */
static const ls_node *match_inside(ui *u, const ls_submodule **in, bool *partly)
{
    const ls_program *p = u->m.prog;
    *partly = false;
    if (u->depth || !p) return NULL;
    double end = ls_now() + 0.02;
    uint32_t seen = 0; /* over all the modules: many small ones look at the clock too */
    for (uint32_t s = 0; s < p->n_subs; s++) {
        const ls_program *sub = p->subs[s].program;
        for (uint32_t i = 0; sub && i < sub->n_nodes; i++) {
            const ls_node *n = sub->nodes[i];
            if (ui_search_matches(u, n->name) || ui_search_matches_shared(u, ui_node_op(sub, n))) {
                *in = &p->subs[s];
                return n;
            }
            if ((++seen & 1023) == 0 && ls_now() > end) {
                *partly = true;
                return NULL;
            }
        }
    }
    return NULL;
}

static void search_done(ui *u, bool found, uint32_t row)
{
    ui_search_job *j = &u->sjob;
    j->pending = false;
    if (found) {
        ui_pane_select(u, j->pane, row);
        /* n went past the last match (or N before the first) */
        u->count.wrapped[0] = 0;
        if (j->next && !j->backward && row <= j->origin) snprintf(u->count.wrapped, sizeof u->count.wrapped, " (wrapped to the top)");
        if (j->next && j->backward && row >= j->origin) snprintf(u->count.wrapped, sizeof u->count.wrapped, " (wrapped to the bottom)");
        if (!j->incremental) count_start(u, j->pane);
        if (!j->incremental && !u->count.pending) say_position(u, j->pane);
        else if (!j->incremental) ui_message(u, false, "/%s%s", u->search, u->count.wrapped);
        return;
    }
    const ls_submodule *in = NULL;
    bool partly = false;
    const ls_node *inside = !j->incremental && j->pane == ui_pane_of(u, UI_P_GRAPH) ? match_inside(u, &in, &partly) : NULL;
    if (inside) /* the search looks at the graph shown; say where the match is rather than "none" */
        ui_message(u, true, "/%s: none in this graph; %s is inside %s (:goto %s)", u->search, inside->name, in->name,
                   inside->name);
    else if (partly)
        ui_message(u, true, "/%s: none in this graph, nor in the lowered modules looked in; :goto NAME looks in all",
                   u->search);
    else ui_message(u, true, "/%s: no match in the %s", u->search, pane_name(u, j->pane));
    /* back where the search began, for a search typed anew (as you type, or its Enter: a fast
     * burst left the cursor on a partial match); n and N stay */
    if (j->incremental || !j->next) ui_pane_select(u, j->pane, j->origin);
}

bool ui_search_step(ui *u, double seconds)
{
    ui_search_job *j = &u->sjob;
    if (!j->pending) return u->count.pending && count_step(u, ls_now() + seconds);
    ui_pane *p = j->pane;
    uint32_t n = p->ops->count(u);
    if (n != j->n || !u->re_ok || !p->ops->match) { /* the rows changed under it: start over */
        j->n = n;
        j->i = 0;
        if (!n || !u->re_ok || !p->ops->match) {
            search_done(u, false, 0);
            return false;
        }
    }
    double end = ls_now() + seconds;
    while (j->i < n) {
        for (uint32_t k = 0; k < 512 && j->i < n; k++, j->i++) {
            uint32_t row = j->backward ? (j->from + n - (j->i % n)) % n : (j->from + j->i) % n;
            if (p->ops->match(u, row, &u->re)) {
                search_done(u, true, row);
                return false;
            }
        }
        if (ls_now() > end) return true;
    }
    search_done(u, false, 0);
    return false;
}

static void search_start(ui *u, ui_pane *p, uint32_t from, bool backward, bool incremental, bool next, uint32_t origin)
{
    u->sjob = (ui_search_job){.pending = true, .pane = p, .from = from, .n = p->ops->count(u), .backward = backward,
                              .incremental = incremental, .next = next, .origin = origin, .started = ls_now()};
    ui_search_step(u, SLICE_SECONDS);
}

bool ui_search_pending(const ui *u)
{
    return u->sjob.pending || u->count.pending;
}

void ui_search_cancel(ui *u)
{
    u->sjob.pending = false;
    u->count.pending = false;
}

void ui_search_forget(ui *u)
{
    ui_search_cancel(u);
    u->search_active = false;
    u->search[0] = 0;
}

void ui_search_set(ui *u, const char *pattern, uint32_t origin, bool incremental)
{
    snprintf(u->search, sizeof u->search, "%s", pattern);
    ui_pane *p = search_pane(u);
    u->sjob.pending = false;
    if (!compile(u, pattern)) {
        u->search_active = false;
        if (*pattern) ui_message(u, true, "/%s: not a valid regular expression", pattern);
        if (incremental) ui_pane_select(u, p, origin);
        return;
    }
    u->search_active = true;
    u->search_screen = u->screen;
    search_start(u, p, origin, false, incremental, false, origin);
}

void ui_search_next(ui *u, bool backward)
{
    if (!u->search_active || !u->re_ok || u->search_screen != u->screen) {
        ui_message(u, false, "%s: no search active here — / starts one", backward ? "N" : "n");
        return;
    }
    ui_pane *p = search_pane(u);
    uint32_t n = p->ops->count(u);
    if (!n) return;
    if (p->ops->match_next && p->ops->match_next(u, p->sel, backward)) { /* another box of the row */
        u->count.wrapped[0] = 0;
        say_position(u, p);
        return;
    }
    uint32_t from = backward ? (p->sel + n - 1) % n : (p->sel + 1) % n;
    search_start(u, p, from, backward, false, true, p->sel);
}

void ui_filter_set(ui *u, const char *value)
{
    while (*value == ' ') value++;
    if (!*value) {
        u->filter = UI_FILTER_NONE;
        ui_message(u, false, "filter off");
    } else if (strcmp(value, "cpu") == 0 || strcmp(value, "CPU") == 0) {
        u->filter = UI_FILTER_CPU;
        u->filter_value = ls_intern("cpu");
    } else if (ui_tag_index(u, ls_intern(value)) >= 0) {
        u->filter = UI_FILTER_TAG;
        u->filter_value = ls_intern(value);
    } else {
        u->filter = UI_FILTER_OP;
        u->filter_value = ls_intern(value);
    }
    ui_model_refilter(u);
    ui_filter_moved(u); /* the filter keeps itself; the selection goes into it */
    if (u->filter == UI_FILTER_NONE) return;
    if (!u->m.n_vis) ui_message(u, true, "filter %s: no node matches at this step — Esc clears it", value);
    else ui_message(u, false, "filter %s: %u node%s — Esc clears it", value, u->m.n_vis, u->m.n_vis == 1 ? "" : "s");
}

static void prompt_done(ui *u)
{
    char line[sizeof u->prompt];
    memcpy(line, u->prompt, sizeof line);
    char kind = u->prompt_kind;
    u->prompt_kind = 0;
    if (kind == ':') {
        ui_history_add(u, line);
        if (ui_command(u, line) == 1) u->quit = true;
    } else if (kind == '/') {
        if (line[0]) ui_search_set(u, line, u->prompt_origin, false);
        else u->search_active = false;
    } else if (kind == 'f') {
        ui_filter_set(u, line);
    }
}

void ui_prompt_key(ui *u, int key)
{
    ui_complete_cancel(u); /* the line it completes changes (or Tab starts it again) */
    if (u->prompt_kind == 'y') {
        ui_export_answer(u, key);
        return;
    }
    if (key == '\n') {
        prompt_done(u);
        return;
    }
    if (key == 27 || key == 3) { /* Esc, Ctrl-C */
        if (u->prompt_kind == '/') {
            ui_pane_select(u, search_pane(u), u->prompt_origin);
            u->search_active = false;
        }
        u->prompt_kind = 0;
        return;
    }
    if (u->prompt_kind == ':' && (key == '\t' || key == UI_KEY_FN + KEY_UP || key == UI_KEY_FN + KEY_DOWN)) {
        if (key == '\t') ui_prompt_complete(u);
        else ui_prompt_history(u, key == UI_KEY_FN + KEY_UP ? -1 : 1);
        return;
    }
    u->prompt_hint[0] = 0;
    if (key == UI_KEY_FN + KEY_BACKSPACE) {
        if (!u->prompt_len) {
            u->prompt_kind = 0;
            return;
        }
        do u->prompt_len--;
        while (u->prompt_len && ((unsigned char)u->prompt[u->prompt_len] & 0xC0) == 0x80);
        u->prompt[u->prompt_len] = 0;
    } else if (key == 21) { /* Ctrl-U */
        u->prompt_len = 0;
        u->prompt[0] = 0;
    } else if (key >= 32 && key < UI_KEY_FN) {
        char mb[8];
        wchar_t w[2] = {(wchar_t)key, 0};
        size_t n = wcstombs(mb, w, sizeof mb);
        if (n == (size_t)-1 || u->prompt_len + n + 1 >= sizeof u->prompt) return;
        memcpy(u->prompt + u->prompt_len, mb, n);
        u->prompt_len += n;
        u->prompt[u->prompt_len] = 0;
    } else {
        return;
    }
    if (u->prompt_kind == '/') ui_search_set(u, u->prompt, u->prompt_origin, true);
}

static int cmd_step(ui *u, const char *arg)
{
    ls_error err;
    int s = ls_history_find_step(u->h, arg, &err);
    if (s < 0) ui_message(u, true, "step %s", err.msg);
    else ui_set_step(u, (uint32_t)s);
    return 0;
}

int ui_command(ui *u, const char *line)
{
    while (*line == ' ' || *line == ':') line++;
    char cmd[64] = {0};
    size_t i = 0;
    while (line[i] && line[i] != ' ' && i + 1 < sizeof cmd) {
        cmd[i] = line[i];
        i++;
    }
    const char *arg = line + i;
    while (*arg == ' ') arg++;
    char argbuf[1024];
    snprintf(argbuf, sizeof argbuf, "%s", arg);
    for (size_t k = strlen(argbuf); k && argbuf[k - 1] == ' ';) argbuf[--k] = 0;
    arg = argbuf;
    if (!cmd[0]) return 0;
    if (!strcmp(cmd, "q") || !strcmp(cmd, "quit") || !strcmp(cmd, "q!")) return 1;
    if (!strcmp(cmd, "step")) return cmd_step(u, arg);
    if (!strcmp(cmd, "goto")) {
        if (!*arg) ui_message(u, true, "goto NAME: which node?");
        else if (ui_jump(u, u->depth ? u->scope[u->depth - 1] : NULL, arg) || ui_jump(u, NULL, arg)) u->msg[0] = 0;
        else {
            /* look in the lowered modules of this step */
            const ls_program *top = u->h->steps[u->step].program;
            for (uint32_t s = 0; s < top->n_subs; s++)
                if (top->subs[s].program && ls_program_find(top->subs[s].program, arg) >= 0) {
                    if (ui_jump(u, top->subs[s].name, arg)) u->msg[0] = 0;
                    return 0;
                }
        }
        return 0;
    }
    if (!strcmp(cmd, "filter")) {
        ui_filter_set(u, arg);
        return 0;
    }
    if (!strcmp(cmd, "search")) {
        ui_search_set(u, arg, ui_pane_of(u, UI_P_GRAPH)->sel, false);
        return 0;
    }
    if (!strcmp(cmd, "diff")) {
        /* :diff alone switches the marks, as the key does; on and off set them; anything else says so */
        if (*arg && strcasecmp(arg, "on") != 0 && strcasecmp(arg, "off") != 0) {
            ui_message(u, true, "diff %s: give on or off (or nothing, to switch the marks)", arg);
            return 0;
        }
        bool on = *arg ? strcasecmp(arg, "on") == 0 : !u->diff_marks;
        if (on != u->diff_marks) ui_run_action(u, UI_A_DIFF);
        else ui_message(u, false, "diff marks are %s already", on ? "on" : "off");
        return 0;
    }
    if (!strcmp(cmd, "table")) {
        if (u->screen != UI_S_TABLE) ui_open_screen(u, UI_S_TABLE);
        return 0;
    }
    if (!strcmp(cmd, "graph")) {
        if (u->screen != UI_S_PARTGRAPH) {
            u->screen = UI_S_MAIN;
            ui_open_screen(u, UI_S_PARTGRAPH);
        }
        return 0;
    }
    if (!strcmp(cmd, "compare")) return ui_compare_open(u, arg);
    if (!strcmp(cmd, "around")) {
        if (*arg && !ui_jump(u, u->depth ? u->scope[u->depth - 1] : NULL, arg)) return 0;
        u->screen = UI_S_MAIN;
        ui_open_screen(u, UI_S_AROUND);
        return 0;
    }
    if (!strcmp(cmd, "help")) {
        if (u->screen != UI_S_HELP) ui_open_screen(u, UI_S_HELP);
        return 0;
    }
    if ((!strcmp(cmd, "run") || !strcmp(cmd, "export") || !strcmp(cmd, "backend")) &&
        ui_refuse_while_running(u, !strcmp(cmd, "run") ? "running a step" : cmd))
        return 0;
    if (!strcmp(cmd, "run")) {
        snprintf(u->run_args, sizeof u->run_args, "%.*s", (int)sizeof u->run_args - 1, arg);
        if (u->screen == UI_S_RUN) u->screen = UI_S_MAIN;
        ui_open_screen(u, UI_S_RUN);
        return 0;
    }
    if (!strcmp(cmd, "export")) {
        if (!*arg) ui_message(u, true, "export PATH: where to write? (.pte, or .pt2 for a step before to_backend)");
        else ui_export(u, arg, false);
        return 0;
    }
    if (!strcmp(cmd, "backend")) {
        ls_error err = {0};
        ls_history *nh;
        if (!*arg) ui_message(u, true, "backend FILE: a profile file, or bundled");
        else if (ui_core_relower(u->h, arg, NULL, &nh, &err) != 0) ui_message(u, true, "%s", err.msg);
        else {
            ui_replace_history(u, nh);
            ui_message(u, false, "lowered again for %s: %u steps", arg, nh->n);
        }
        return 0;
    }
    if (!strcmp(cmd, "relower")) {
        ls_error err = {0};
        ls_history *nh;
        if (ui_refuse_while_running(u, "relower")) return 0;
        if (u->h->n > 1) ui_message(u, true, "relower: the pipeline has run already (%u steps)", u->h->n);
        else if (ui_core_relower_all(u->h, &nh, &err) != 0) ui_message(u, true, "%s", err.msg);
        else {
            ui_replace_history(u, nh);
            ui_message(u, false, "lowered again: %u steps", nh->n);
        }
        return 0;
    }
    if (!strcmp(cmd, "method")) {
        ui_open_method(u, arg);
        return 0;
    }
    if (!strcmp(cmd, "save-display")) {
        ls_error err;
        if (ui_save_display(u, arg, &err) != 0) ui_message(u, true, "%s", err.msg);
        return 0;
    }
    if (!strcmp(cmd, "resize")) {
        int c, r;
        if (sscanf(arg, "%dx%d", &c, &r) == 2 && c > 0 && r > 0 && c < 1000 && r < 1000) {
            if (u->headless) ui_resize(u, r, c);
            else ui_message(u, true, "resize works in scripted mode only");
        } else {
            ui_message(u, true, "resize COLSxROWS, e.g. resize 80x24");
        }
        return 0;
    }
    ui_message(u, true, ":%s: unknown command (? lists them)", cmd);
    return 0;
}
