/* The screen: curses set-up and restore, the layout (computed in one place, ui_resize), the
 * frame (header, panes, status line), the event loop and the actions. Views draw their rows
 * through the operations tables in ui.h; only visible rows are drawn.
 *
 * Restoring the terminal: SIGINT and SIGTERM only set a flag that the loop sees (it polls
 * input with a timeout), fatal signals and exit() paths call ui_restore(), which is safe to
 * call more than once. */
#include <locale.h>
#include <signal.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <wchar.h>

#include "ui.h"

#define MIN_ROWS 24
#define MIN_COLS 80

static volatile sig_atomic_t g_stop;
static SCREEN *g_screen; /* the active curses screen, for ui_restore */

ls_tui_export_fn ui_exporter;
void ls_tui_set_exporter(ls_tui_export_fn fn) { ui_exporter = fn; }

/* ncurses keeps its terminal description for the life of the process by design; that is not
 * a leak of ours, so LeakSanitizer (make test-asan) is told to skip allocations made inside it. */
const char *__lsan_default_suppressions(void);
const char *__lsan_default_suppressions(void) { return "leak:libncursesw.so\nleak:libtinfo.so\n"; }

void ui_restore(void)
{
    if (g_screen && !isendwin()) {
        endwin();
        fflush(stdout);
    }
}

static void on_stop(int sig)
{
    (void)sig;
    g_stop = 1;
}

static void on_fatal(int sig)
{
    ui_restore(); /* not async-signal-safe, but the process is dying; leave a usable terminal */
    signal(sig, SIG_DFL);
    raise(sig);
}

static void install_signals(void)
{
    struct sigaction sa;
    memset(&sa, 0, sizeof sa);
    sa.sa_handler = on_stop;
    sigemptyset(&sa.sa_mask);
    sigaction(SIGINT, &sa, NULL);
    sigaction(SIGTERM, &sa, NULL);
    sigaction(SIGHUP, &sa, NULL);
    sa.sa_handler = on_fatal;
    sa.sa_flags = SA_RESETHAND;
    sigaction(SIGSEGV, &sa, NULL);
    sigaction(SIGBUS, &sa, NULL);
    sigaction(SIGFPE, &sa, NULL);
    sigaction(SIGABRT, &sa, NULL);
}

/* ---- drawing helpers */

int ui_text_width(const char *s)
{
    mbstate_t st = {0};
    int w = 0;
    size_t len = strlen(s);
    while (len) {
        wchar_t wc;
        size_t n = mbrtowc(&wc, s, len, &st);
        if (n == (size_t)-1 || n == (size_t)-2) {
            memset(&st, 0, sizeof st);
            n = 1;
            wc = '?';
        }
        if (n == 0) break;
        int cw = wcwidth(wc);
        w += cw > 0 ? cw : 0;
        s += n;
        len -= n;
    }
    return w;
}

int ui_put(ui *u, int y, int x, int w, attr_t attr, short pair, const char *s)
{
    if (w <= 0 || y < 0 || y >= u->rows || x >= u->cols) return 0;
    if (x + w > u->cols) w = u->cols - x;
    wchar_t buf[512];
    int used = 0, nb = 0;
    mbstate_t st = {0};
    size_t len = strlen(s);
    while (len && nb < 511) {
        wchar_t wc;
        size_t n = mbrtowc(&wc, s, len, &st);
        if (n == (size_t)-1 || n == (size_t)-2) {
            memset(&st, 0, sizeof st);
            n = 1;
            wc = '?';
        }
        if (n == 0) break;
        if (wc == '\n' || wc == '\t') wc = ' ';
        int cw = wcwidth(wc);
        if (cw < 0) {
            wc = '?';
            cw = 1;
        }
        if (used + cw > w) break;
        buf[nb++] = wc;
        used += cw;
        s += n;
        len -= n;
    }
    buf[nb] = 0;
    attr_set(attr, pair, NULL);
    mvaddnwstr(y, x, buf, nb);
    attr_set(A_NORMAL, 0, NULL);
    return used;
}

int ui_putf(ui *u, int y, int x, int w, attr_t attr, short pair, const char *fmt, ...)
{
    char buf[1024];
    va_list ap;
    va_start(ap, fmt);
    vsnprintf(buf, sizeof buf, fmt, ap);
    va_end(ap);
    return ui_put(u, y, x, w, attr, pair, buf);
}

void ui_fill(ui *u, int y, int x, int w, attr_t attr, short pair)
{
    if (y < 0 || y >= u->rows || w <= 0) return;
    if (x + w > u->cols) w = u->cols - x;
    attr_set(attr, pair, NULL);
    mvhline(y, x, ' ', w);
    attr_set(A_NORMAL, 0, NULL);
}

void ui_message(ui *u, bool error, const char *fmt, ...)
{
    va_list ap;
    va_start(ap, fmt);
    vsnprintf(u->msg, sizeof u->msg, fmt, ap);
    va_end(ap);
    u->msg_error = error;
}

/* ---- panes */

ui_pane *ui_pane_of(ui *u, ui_pane_id id) { return &u->panes[id]; }

static ui_pane *focused_pane(ui *u)
{
    return u->screen == UI_S_MAIN ? &u->panes[u->focus] : &u->panes[UI_P_SCREEN];
}

static int pane_rows(const ui_pane *p) { return p->r.h > 1 ? p->r.h - 1 : 1; }

void ui_pane_clamp(ui *u, ui_pane *p)
{
    uint32_t n = p->ops->count(u);
    if (p->sel >= n) p->sel = n ? n - 1 : 0;
    uint32_t h = (uint32_t)pane_rows(p);
    if (p->sel < p->top) p->top = p->sel;
    if (p->sel >= p->top + h) p->top = p->sel - h + 1;
    if (p->top + h > n) p->top = n > h ? n - h : 0;
}

void ui_pane_select(ui *u, ui_pane *p, uint32_t row)
{
    uint32_t n = p->ops->count(u);
    if (!n) return;
    if (row >= n) row = n - 1;
    p->sel = row;
    ui_pane_clamp(u, p);
    if (p->ops->moved) p->ops->moved(u, row);
}

static void draw_pane(ui *u, ui_pane_id id)
{
    ui_pane *p = &u->panes[id];
    if (p->r.h <= 0 || p->r.w <= 0) return;
    bool focus = u->screen != UI_S_MAIN || u->focus == id;
    short pair;
    attr_t a = ui_role_attr(u, focus ? UI_R_TITLE_FOCUS : UI_R_TITLE, &pair);
    ls_buf b = {0};
    p->ops->title(u, &b);
    ui_fill(u, p->r.y, p->r.x, p->r.w, a, pair);
    ui_put(u, p->r.y, p->r.x + 1, p->r.w - 1, a, pair, b.s ? b.s : "");
    ls_buf_free(&b);
    ui_pane_clamp(u, p);
    uint32_t n = p->ops->count(u);
    for (int i = 0; i < pane_rows(p) && i + 1 < p->r.h + 0; i++) {
        uint32_t row = p->top + (uint32_t)i;
        if (row >= n) break;
        p->ops->draw_row(u, row, p->r.y + 1 + i, p->r.x, p->r.w, row == p->sel);
    }
}

/* ---- layout: the one place sizes are decided */

static void layout(ui *u)
{
    int R = u->rows, C = u->cols;
    u->too_small = R < MIN_ROWS || C < MIN_COLS;
    for (int i = 0; i < UI_P_ALL; i++) u->panes[i].r = (ui_rect){0, 0, 0, 0};
    u->left_w = 0;
    if (u->too_small) return;
    u->panes[UI_P_SCREEN].r = (ui_rect){1, 0, R - 2, C};
    int H = R - 2;
    int hc = H / 5;
    hc = hc < 4 ? 4 : hc > 10 ? 10 : hc;
    int HU = H - hc;
    int L = C * 3 / 10;
    L = L < 29 ? 29 : L > 44 ? 44 : L;
    u->left_w = L;
    ui_model_ensure(u);
    int hp = 1 + (int)(u->m.n_parts ? u->m.n_parts : 1);
    if (hp > HU / 2) hp = HU / 2;
    if (hp < 3) hp = 3;
    u->panes[UI_P_PARTITIONS].r = (ui_rect){1, 0, hp, L - 1};
    u->panes[UI_P_TIMELINE].r = (ui_rect){1 + hp, 0, HU - hp, L - 1};
    int hg = HU * 3 / 5;
    if (hg < 5) hg = 5;
    u->panes[UI_P_GRAPH].r = (ui_rect){1, L, hg, C - L};
    u->panes[UI_P_NODE].r = (ui_rect){1 + hg, L, HU - hg, C - L};
    u->panes[UI_P_CHANGES].r = (ui_rect){1 + HU, 0, hc, C};
}

void ui_resize(ui *u, int rows, int cols)
{
    if (u->headless) resize_term(rows, cols);
    u->rows = rows;
    u->cols = cols;
    layout(u);
    for (int i = 0; i < UI_P_ALL; i++)
        if (u->panes[i].ops && u->panes[i].r.h > 0) ui_pane_clamp(u, &u->panes[i]);
    clearok(curscr, TRUE);
}

/* ---- frame */

static void draw_header(ui *u)
{
    short pair;
    attr_t a = ui_role_attr(u, UI_R_HEADER, &pair);
    ui_fill(u, 0, 0, u->cols, a, pair);
    const ls_step *st = &u->h->steps[u->step];
    const ls_program *p = st->program;
    char buf[512];
    int x = 1;
    snprintf(buf, sizeof buf, "%s │ %s │ step %u/%u %s%s%s │ ", u->file, ls_dialect_name(p->dialect), u->step,
             u->h->n ? u->h->n - 1 : 0, st->pass, st->detail ? " " : "", st->detail ? st->detail : "");
    x += ui_put(u, 0, x, u->cols - x, a, pair, buf);
    short vp;
    attr_t va;
    if (st->error) {
        va = ui_role_attr(u, UI_R_ERROR, &vp);
        x += ui_put(u, 0, x, u->cols - x, va | A_REVERSE, vp, "pass failed");
    } else if (st->verify.n_errors) {
        va = ui_role_attr(u, UI_R_ERROR, &vp);
        snprintf(buf, sizeof buf, "verify: %u error%s", st->verify.n_errors, st->verify.n_errors == 1 ? "" : "s");
        x += ui_put(u, 0, x, u->cols - x, va | A_REVERSE, vp, buf);
    } else {
        x += ui_put(u, 0, x, u->cols - x, a, pair, "verify: ok");
    }
    if (u->depth) {
        const ls_submodule *s = ls_program_sub(ui_scope_program_parent(u), u->scope[u->depth - 1]);
        snprintf(buf, sizeof buf, " │ in %s (%s)", u->scope[u->depth - 1], s && s->backend_id ? s->backend_id : "?");
        ui_put(u, 0, x, u->cols - x, a, pair, buf);
    }
}

static const char *hint_main = "q quit ? help ←/→ step Tab pane / search f filter Enter open d table r run";

static void draw_status(ui *u)
{
    int y = u->rows - 1;
    short pair;
    attr_t a = ui_role_attr(u, UI_R_HEADER, &pair);
    ui_fill(u, y, 0, u->cols, A_NORMAL, 0);
    if (u->prompt_kind) {
        char buf[600];
        snprintf(buf, sizeof buf, "%s%s", u->prompt_kind == 'f' ? "filter (tag, cpu or op): " : u->prompt_kind == '/' ? "/" : ":",
                 u->prompt);
        int w = ui_put(u, y, 0, u->cols - 1, A_NORMAL, 0, buf);
        ui_put(u, y, w, 1, A_REVERSE, 0, " ");
        return;
    }
    if (u->msg[0]) {
        short ep;
        attr_t ea = ui_role_attr(u, u->msg_error ? UI_R_ERROR : UI_R_NORMAL, &ep);
        ui_put(u, y, 0, u->cols, ea, ep, u->msg);
        return;
    }
    const char *hint = u->screen == UI_S_MAIN ? hint_main : "q/Esc back  j/k move  / search  ? help";
    ui_fill(u, y, 0, u->cols, a, pair);
    ui_put(u, y, 1, u->cols - 1, a, pair, hint);
}

static void draw_too_small(ui *u)
{
    char buf[160];
    snprintf(buf, sizeof buf, "terminal too small: %d×%d", u->cols, u->rows);
    int y = u->rows / 2 - 1;
    short pair;
    attr_t a = ui_role_attr(u, UI_R_WARN, &pair);
    int w = ui_text_width(buf);
    ui_put(u, y < 0 ? 0 : y, w < u->cols ? (u->cols - w) / 2 : 0, u->cols, a | A_BOLD, pair, buf);
    snprintf(buf, sizeof buf, "lowerscope needs at least %d×%d — enlarge it, or q to quit", MIN_COLS, MIN_ROWS);
    w = ui_text_width(buf);
    ui_put(u, y + 1, w < u->cols ? (u->cols - w) / 2 : 0, u->cols, A_NORMAL, 0, buf);
}

void ui_draw(ui *u)
{
    erase();
    if (u->too_small) {
        draw_too_small(u);
    } else {
        draw_header(u);
        if (u->screen == UI_S_MAIN) {
            ui_model_ensure(u);
            short bp;
            attr_t ba = ui_role_attr(u, UI_R_BORDER, &bp);
            attr_set(ba, bp, NULL);
            for (int y = 1; y < u->panes[UI_P_CHANGES].r.y; y++) mvaddstr(y, u->left_w - 1, u->utf8 ? "│" : "|");
            attr_set(A_NORMAL, 0, NULL);
            for (int i = 0; i < UI_P_COUNT; i++) draw_pane(u, (ui_pane_id)i);
        } else {
            draw_pane(u, UI_P_SCREEN);
        }
        draw_status(u);
    }
    refresh();
}

/* ---- selection and navigation */

const ls_node *ui_selected_node(ui *u, const ls_program **p, uint8_t *mark)
{
    ui_model_ensure(u);
    ui_pane *g = &u->panes[UI_P_GRAPH];
    if (!u->m.n_vis) return NULL;
    if (g->sel >= u->m.n_vis) g->sel = u->m.n_vis - 1;
    const ui_row *r = &u->m.rows[u->m.vis[g->sel]];
    if (p) *p = ui_row_program(u, r);
    if (mark) *mark = r->mark;
    return r->node;
}

/* Puts the graph cursor back on the selected node after the rows changed; when the node is
 * gone, the cursor keeps its position. */
static void reselect(ui *u)
{
    ui_model_ensure(u);
    ui_pane *g = &u->panes[UI_P_GRAPH];
    int32_t v = ui_model_find(u, u->sel_id);
    if (v >= 0) g->sel = (uint32_t)v;
    if (g->r.h > 0) ui_pane_clamp(u, g);
    else if (g->sel >= u->m.n_vis) g->sel = u->m.n_vis ? u->m.n_vis - 1 : 0;
    if (u->m.n_vis) u->sel_id = u->m.rows[u->m.vis[g->sel]].node->id;
    u->node_valid = false;
    u->panes[UI_P_NODE].sel = u->panes[UI_P_NODE].top = 0;
}

void ui_select_id(ui *u, uint32_t id)
{
    if (ui_model_find(u, id) < 0 && u->filter != UI_FILTER_NONE) {
        u->filter = UI_FILTER_NONE;
        ui_model_refilter(u);
        ui_message(u, false, "filter cleared to show the node");
    }
    u->sel_id = id;
    reselect(u);
}

void ui_set_step(ui *u, uint32_t step)
{
    if (step >= u->h->n) step = u->h->n - 1;
    while (u->depth > 0 && !ui_scope_program(u, step)) {
        u->depth--;
        u->sel_id = u->scope_sel[u->depth];
    }
    u->step = step;
    ui_model_invalidate(u);
    reselect(u);
    u->panes[UI_P_TIMELINE].sel = step;
    u->panes[UI_P_CHANGES].sel = u->panes[UI_P_CHANGES].top = 0;
    u->panes[UI_P_PARTITIONS].sel = 0;
    layout(u);
}

bool ui_enter_sub(ui *u, const char *sub)
{
    const ls_program *p = ui_scope_program(u, u->step);
    const ls_submodule *s = p ? ls_program_sub(p, sub) : NULL;
    if (!s || !s->program || u->depth >= UI_MAX_DEPTH) {
        ui_message(u, true, "%s: no such lowered module at this step", sub ? sub : "?");
        return false;
    }
    u->scope_sel[u->depth] = u->sel_id;
    u->scope[u->depth++] = s->name;
    u->sel_id = 0;
    u->filter = UI_FILTER_NONE;
    ui_model_invalidate(u);
    u->panes[UI_P_GRAPH].sel = u->panes[UI_P_GRAPH].top = 0;
    reselect(u);
    layout(u);
    ui_message(u, false, "in %s (%s) — Backspace returns", s->name, s->backend_id ? s->backend_id : "?");
    return true;
}

void ui_leave_sub(ui *u)
{
    if (!u->depth) {
        ui_message(u, false, "already at the top-level program");
        return;
    }
    u->depth--;
    u->sel_id = u->scope_sel[u->depth];
    u->filter = UI_FILTER_NONE;
    ui_model_invalidate(u);
    reselect(u);
    layout(u);
    ui_message(u, false, "back in %s", u->depth ? u->scope[u->depth - 1] : "the top-level program");
}

bool ui_jump(ui *u, const char *prog, const char *node)
{
    if (!node) return false;
    const char *cur = u->depth ? u->scope[u->depth - 1] : NULL;
    if (prog != cur) {
        while (u->depth) ui_leave_sub(u);
        if (prog && !ui_enter_sub(u, prog)) return false;
    }
    ui_model_ensure(u);
    const ls_program *sets[2] = {u->m.prog, u->m.prev};
    for (int i = 0; i < 2; i++) {
        if (!sets[i]) continue;
        int32_t pos = ls_program_find(sets[i], node);
        if (pos < 0) continue;
        uint32_t id = sets[i]->nodes[pos]->id;
        if (ui_model_find(u, id) < 0 && !u->diff_marks && i == 1) {
            u->diff_marks = true;
            ui_model_refilter(u);
        }
        ui_select_id(u, id);
        if (ui_model_find(u, id) >= 0) return true;
    }
    ui_message(u, true, "%s: no node of that name at this step", node);
    return false;
}

void ui_open_screen(ui *u, ui_screen s)
{
    if (u->screen == s) {
        u->screen = UI_S_MAIN;
        return;
    }
    u->screen = s;
    ui_pane *p = &u->panes[UI_P_SCREEN];
    p->ops = s == UI_S_TABLE ? &ui_table_ops : s == UI_S_RUN ? &ui_run_ops : &ui_help_ops;
    p->sel = p->top = 0;
    if (s == UI_S_TABLE) ui_table_build(u);
    else if (s == UI_S_RUN) ui_run_build(u);
    else ui_help_build(u);
}

/* gd / gu: pressed again, they go through the other arguments / users of the node where the
 * cycle started. */
static void cycle_related(ui *u, bool users)
{
    const ls_program *p;
    uint8_t mark;
    const ls_node *n = ui_selected_node(u, &p, &mark);
    if (!n) return;
    ui_action a = users ? UI_A_USERS : UI_A_PRODUCER;
    if (u->last_action == a && u->cycle_origin) {
        u->cycle_index++;
    } else {
        u->cycle_origin = n->id;
        u->cycle_index = 0;
    }
    const ls_node *o = ls_program_node(p, u->cycle_origin);
    if (!o) {
        p = u->m.prog;
        o = p ? ls_program_node(p, u->cycle_origin) : NULL;
    }
    if (!o) return;
    uint32_t ids[256], n_ids = 0;
    if (users) {
        int32_t pos = ls_program_pos(p, o->id);
        uint32_t cnt = 0;
        const uint32_t *us = pos >= 0 ? ls_program_users(p, (uint32_t)pos, &cnt) : NULL;
        for (uint32_t i = 0; i < cnt && n_ids < 256; i++) ids[n_ids++] = p->nodes[us[i]]->id;
    } else {
        for (uint16_t i = 0; i < o->nargs; i++) {
            const ls_arg *ar = &o->args[i];
            uint32_t one = ar->kind == LS_ARG_NODE ? ar->v.node : 0;
            uint32_t cnt = ar->kind == LS_ARG_NODES || ar->kind == LS_ARG_OPT_NODES ? ar->n : one ? 1 : 0;
            for (uint32_t k = 0; k < cnt && n_ids < 256; k++) {
                uint32_t id = one ? one : ar->v.nodes[k];
                bool dup = !id;
                for (uint32_t j = 0; j < n_ids && !dup; j++) dup = ids[j] == id;
                if (!dup) ids[n_ids++] = id;
            }
        }
    }
    if (!n_ids) {
        ui_message(u, false, "%s has no %s", o->name, users ? "users" : "arguments from other nodes");
        return;
    }
    uint32_t k = u->cycle_index % n_ids;
    const ls_node *t = ls_program_node(p, ids[k]);
    ui_select_id(u, ids[k]);
    ui_message(u, false, "%s %u/%u of %s: %s", users ? "user" : "argument", k + 1, n_ids, o->name, t ? t->name : "?");
}

static void move_sel(ui *u, int64_t delta)
{
    ui_pane *p = focused_pane(u);
    uint32_t n = p->ops->count(u);
    if (!n) return;
    int64_t s = (int64_t)p->sel + delta;
    if (s < 0) s = 0;
    if (s >= (int64_t)n) s = n - 1;
    ui_pane_select(u, p, (uint32_t)s);
}

static void cycle_focus(ui *u, int dir)
{
    static const ui_pane_id order[] = {UI_P_GRAPH, UI_P_NODE, UI_P_CHANGES, UI_P_PARTITIONS, UI_P_TIMELINE};
    int n = (int)(sizeof order / sizeof order[0]), i = 0;
    while (i < n && order[i] != u->focus) i++;
    u->focus = order[((i + dir) % n + n) % n];
}

void ui_run_action(ui *u, ui_action a)
{
    ui_pane *p = focused_pane(u);
    int page = pane_rows(p);
    if (u->too_small && a != UI_A_QUIT && a != UI_A_REDRAW && a != UI_A_COMMAND) {
        u->last_action = a;
        return; /* nothing to act on until the terminal is big enough */
    }
    switch (a) {
    case UI_A_NONE: break;
    case UI_A_DOWN: move_sel(u, 1); break;
    case UI_A_UP: move_sel(u, -1); break;
    case UI_A_HALF_DOWN: move_sel(u, page / 2 ? page / 2 : 1); break;
    case UI_A_HALF_UP: move_sel(u, -(page / 2 ? page / 2 : 1)); break;
    case UI_A_PAGE_DOWN: move_sel(u, page); break;
    case UI_A_PAGE_UP: move_sel(u, -page); break;
    case UI_A_FIRST: move_sel(u, -(int64_t)p->ops->count(u)); break;
    case UI_A_LAST: move_sel(u, p->ops->count(u)); break;
    case UI_A_NEXT_PANE:
    case UI_A_PREV_PANE:
        if (u->screen == UI_S_MAIN) cycle_focus(u, a == UI_A_NEXT_PANE ? 1 : -1);
        break;
    case UI_A_STEP_NEXT:
        if (u->step + 1 < u->h->n) ui_set_step(u, u->step + 1);
        else ui_message(u, false, "last step");
        break;
    case UI_A_STEP_PREV:
        if (u->step > 0) ui_set_step(u, u->step - 1);
        else ui_message(u, false, "first step");
        break;
    case UI_A_STEP_FIRST: ui_set_step(u, 0); break;
    case UI_A_STEP_LAST: ui_set_step(u, u->h->n - 1); break;
    case UI_A_ENTER:
        if (p->ops->activate && p->ops->count(u)) p->ops->activate(u, p->sel);
        break;
    case UI_A_BACK:
        if (u->screen != UI_S_MAIN) u->screen = UI_S_MAIN;
        else ui_leave_sub(u);
        break;
    case UI_A_PRODUCER: cycle_related(u, false); break;
    case UI_A_USERS: cycle_related(u, true); break;
    case UI_A_DIFF:
        u->diff_marks = !u->diff_marks;
        ui_model_refilter(u);
        reselect(u);
        ui_message(u, false, "diff marks %s", u->diff_marks ? "on" : "off");
        break;
    case UI_A_SEARCH: ui_prompt_open(u, '/'); break;
    case UI_A_SEARCH_NEXT: ui_search_next(u, false); break;
    case UI_A_SEARCH_PREV: ui_search_next(u, true); break;
    case UI_A_FILTER: ui_prompt_open(u, 'f'); break;
    case UI_A_CANCEL:
        if (u->screen != UI_S_MAIN) {
            u->screen = UI_S_MAIN;
        } else {
            u->search_active = false;
            u->search[0] = 0;
            if (u->filter != UI_FILTER_NONE) {
                u->filter = UI_FILTER_NONE;
                ui_model_refilter(u);
                reselect(u);
            }
            ui_message(u, false, "search and filter cleared");
        }
        break;
    case UI_A_TABLE: ui_open_screen(u, UI_S_TABLE); break;
    case UI_A_RUN: ui_open_screen(u, UI_S_RUN); break;
    case UI_A_HELP: ui_open_screen(u, UI_S_HELP); break;
    case UI_A_EXPORT:
        ui_prompt_open(u, ':');
        snprintf(u->prompt, sizeof u->prompt, "export ");
        u->prompt_len = strlen(u->prompt);
        break;
    case UI_A_COMMAND: ui_prompt_open(u, ':'); break;
    case UI_A_REDRAW: clearok(curscr, TRUE); break;
    case UI_A_QUIT:
        if (u->screen != UI_S_MAIN) u->screen = UI_S_MAIN;
        else u->quit = true;
        break;
    default: break;
    }
    u->last_action = a;
}

/* ---- mouse */

static void on_mouse(ui *u)
{
    MEVENT *e = &u->mouse;
    ui_pane_id hit = UI_P_ALL;
    int first = u->screen == UI_S_MAIN ? 0 : UI_P_SCREEN, last = u->screen == UI_S_MAIN ? UI_P_COUNT : UI_P_ALL;
    for (int i = first; i < last; i++) {
        ui_rect r = u->panes[i].r;
        if (e->y >= r.y && e->y < r.y + r.h && e->x >= r.x && e->x < r.x + r.w) hit = (ui_pane_id)i;
    }
    if (hit == UI_P_ALL) return;
    ui_pane *p = &u->panes[hit];
    if (u->screen == UI_S_MAIN) u->focus = hit;
    if (e->bstate & (BUTTON4_PRESSED | BUTTON5_PRESSED)) {
        int d = e->bstate & BUTTON4_PRESSED ? -3 : 3;
        uint32_t n = p->ops->count(u);
        int64_t top = (int64_t)p->top + d, h = pane_rows(p);
        if (top > (int64_t)n - h) top = (int64_t)n - h;
        if (top < 0) top = 0;
        p->top = (uint32_t)top;
        if (p->sel < p->top) ui_pane_select(u, p, p->top);
        else if (p->sel >= p->top + (uint32_t)h) ui_pane_select(u, p, p->top + (uint32_t)h - 1);
        return;
    }
    if (e->y > p->r.y) {
        uint32_t row = p->top + (uint32_t)(e->y - p->r.y - 1);
        if (row < p->ops->count(u)) {
            ui_pane_select(u, p, row);
            if (e->bstate & BUTTON1_DOUBLE_CLICKED) ui_run_action(u, UI_A_ENTER);
        }
    }
}

/* ---- input */

static int read_key(ui *u, char *cmd, size_t cap)
{
    if (u->refeed != UI_KEY_NONE) {
        int k = u->refeed;
        u->refeed = UI_KEY_NONE;
        return k;
    }
    if (u->script) return ui_script_next(u, cmd, cap);
    wint_t wc;
    int r = get_wch(&wc);
    if (r == ERR) return UI_KEY_TIMEOUT;
    int key = r == KEY_CODE_YES ? UI_KEY_FN + (int)wc : (int)wc;
    if (key == UI_KEY_MOUSE && getmouse(&u->mouse) != OK) return UI_KEY_TIMEOUT;
    return key;
}

static int normalize(int key)
{
    if (key == '\r' || key == UI_KEY_FN + KEY_ENTER) return '\n';
    if (key == 127 || key == 8) return UI_KEY_FN + KEY_BACKSPACE;
    return key;
}

static void handle_key(ui *u, int key)
{
    if (key == UI_KEY_RESIZE) {
        int r, c;
        getmaxyx(stdscr, r, c);
        ui_resize(u, r, c);
        return;
    }
    if (key == UI_KEY_MOUSE) {
        if (!u->too_small && !u->prompt_kind) on_mouse(u);
        return;
    }
    if (u->prompt_kind) {
        ui_prompt_key(u, key);
        return;
    }
    u->msg[0] = 0;
    ui_action a = ui_keys_feed(u, key);
    ui_run_action(u, a);
    if (u->refeed != UI_KEY_NONE) {
        int k = u->refeed;
        u->refeed = UI_KEY_NONE;
        handle_key(u, k);
    }
}

static void event_loop(ui *u)
{
    char cmd[1024];
    while (!u->quit && !g_stop) {
        ui_draw(u);
        int key = read_key(u, cmd, sizeof cmd);
        if (key == UI_KEY_NONE) { /* end of the script */
            ui_run_action(u, ui_keys_flush(u));
            break;
        }
        if (key == UI_KEY_TIMEOUT) { /* a lone prefix (g) acts alone */
            if (u->n_pending) ui_run_action(u, ui_keys_flush(u));
            continue;
        }
        if (key == UI_KEY_CMD) {
            if (u->n_pending) ui_run_action(u, ui_keys_flush(u));
            if (ui_command(u, cmd) == 1) u->quit = true;
            continue;
        }
        handle_key(u, normalize(key));
    }
}

/* ---- set-up */

static bool start_curses(ui *u, const ls_tui_opts *o, ls_error *err)
{
    if (u->headless) {
        u->scr_out = fopen("/dev/null", "w");
        u->scr_in = fopen("/dev/null", "r");
        const char *term = getenv("LOWERSCOPE_TERM");
        if (u->scr_out && u->scr_in) u->scr = newterm(term ? term : "xterm-256color", u->scr_out, u->scr_in);
    } else {
        u->scr = newterm(NULL, stdout, stdin);
    }
    if (!u->scr) {
        if (u->scr_out) fclose(u->scr_out);
        if (u->scr_in) fclose(u->scr_in);
        ls_fail(err, "cannot start the terminal UI (TERM=%s)", getenv("TERM") ? getenv("TERM") : "unset");
        return false;
    }
    set_term(u->scr);
    g_screen = u->scr;
    cbreak();
    noecho();
    nonl();
    keypad(stdscr, TRUE);
    curs_set(0);
    set_escdelay(50);
    if (!u->headless) {
        mousemask(BUTTON1_CLICKED | BUTTON1_PRESSED | BUTTON1_DOUBLE_CLICKED | BUTTON4_PRESSED | BUTTON5_PRESSED, NULL);
        mouseinterval(0);
        timeout(400);
    }
    ui_colors_init(u);
    int r, c;
    if (u->headless) {
        r = o->rows > 0 ? o->rows : 24;
        c = o->cols > 0 ? o->cols : 80;
    } else {
        getmaxyx(stdscr, r, c);
    }
    ui_resize(u, r, c);
    return true;
}

static void setup_locale(ui *u)
{
    const char *loc = setlocale(LC_ALL, "");
    const char *cs = setlocale(LC_CTYPE, NULL);
    u->utf8 = cs && (strstr(cs, "UTF-8") || strstr(cs, "utf8") || strstr(cs, "UTF8"));
    if (!u->utf8 || !loc) {
        /* box drawing and the × in messages need UTF-8; C.UTF-8 is always there on Debian */
        if (setlocale(LC_CTYPE, "C.UTF-8")) u->utf8 = true;
    }
}

void ls_tui_opts_env(ls_tui_opts *o)
{
    const char *nc = getenv("NO_COLOR");
    if (nc && *nc) o->no_color = true;
    const char *s = getenv("LOWERSCOPE_SCRIPT");
    if (s && *s) o->script = s;
    const char *size = getenv("LOWERSCOPE_SIZE");
    int c, r;
    if (size && sscanf(size, "%dx%d", &c, &r) == 2 && c > 0 && r > 0) {
        o->cols = c;
        o->rows = r;
    }
}

int ls_tui_run(const ls_history *h, const ls_tui_opts *o, ls_error *err)
{
    if (!h || !h->n) return ls_fail(err, "nothing to show: the history is empty"), 2;
    ui *u = ls_calloc(1, sizeof *u);
    u->h = h;
    const char *slash = h->path ? strrchr(h->path, '/') : NULL;
    u->file = slash ? slash + 1 : h->path ? h->path : "(program)";
    u->no_color = o->no_color;
    u->headless = o->headless || o->script;
    u->diff_marks = true;
    u->refeed = UI_KEY_NONE;
    u->focus = UI_P_GRAPH;
    u->panes[UI_P_PARTITIONS].ops = &ui_partitions_ops;
    u->panes[UI_P_TIMELINE].ops = &ui_timeline_ops;
    u->panes[UI_P_GRAPH].ops = &ui_graph_ops;
    u->panes[UI_P_NODE].ops = &ui_node_ops;
    u->panes[UI_P_CHANGES].ops = &ui_changes_ops;
    u->panes[UI_P_SCREEN].ops = &ui_help_ops;
    ui_tags_init(u);
    u->step = o->start_step >= 0 && (uint32_t)o->start_step < h->n ? (uint32_t)o->start_step : h->n - 1;
    u->panes[UI_P_TIMELINE].sel = u->step;
    int rc = 0;
    if (o->script && ui_script_open(u, o->script, err) != 0) {
        rc = 2;
        goto out;
    }
    setup_locale(u);
    install_signals();
    atexit(ui_restore);
    if (!start_curses(u, o, err)) {
        rc = 2;
        goto out;
    }
    reselect(u);
    event_loop(u);
    ui_restore();
    delscreen(u->scr);
    g_screen = NULL;
    if (u->scr_out) fclose(u->scr_out);
    if (u->scr_in) fclose(u->scr_in);
    if (g_stop) rc = 130;
out:
    ui_script_free(u);
    ui_model_free(&u->m);
    ui_lines_clear(&u->node_lines);
    ui_lines_clear(&u->screen_lines);
    free(u->node_lines.v);
    free(u->screen_lines.v);
    if (u->re_ok) regfree(&u->re);
    free(u->tags);
    free(u->tag_backends);
    free(u);
    return rc;
}
