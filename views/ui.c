/* The screen: curses set-up and restore, the layout (computed in one place, ui_resize), the
 * panes (the header and the status line are frame.c's), the event loop and the actions. Views
 * draw their rows through the operations tables in ui.h; only visible rows are drawn.
 *
 * Restoring the terminal: SIGINT and SIGTERM only set a flag that the loop sees (it polls
 * input with a timeout), fatal signals and exit() paths call ui_restore(), which is safe to
 * call more than once. */
#include <locale.h>
#include <signal.h>
#include <stdarg.h>
#include <limits.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>
#include <unistd.h>
#include <wchar.h>

#include "safe_text.h"
#include "ui.h"

#define MIN_ROWS 24
#define MIN_COLS 80

static volatile sig_atomic_t g_stop;
static SCREEN *g_screen; /* the active curses screen, for ui_restore */

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
    g_stop = sig; /* the exit is 128 + it, as a shell reports the signal (SIGTERM: 143) */
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

/* The character at s (len bytes left) into *wc; returns its length in bytes, 0 at a NUL. A
 * byte that does not start a valid character reads as '?'. */
static size_t next_char(const char *s, size_t len, mbstate_t *st, wchar_t *wc)
{
    size_t n = mbrtowc(wc, s, len, st);
    if (n == (size_t)-1 || n == (size_t)-2) {
        memset(st, 0, sizeof *st);
        *wc = '?';
        return 1;
    }
    return n;
}

/* Text is drawn as safe_text.h shows it (a control, a bidi override or a stray byte from a file
 * as \x1b, \u202e): each piece ls_safe_step gives is the character itself or its escape. */
typedef struct text_walk {
    const char *s;
    size_t len;
    mbstate_t st;
    char piece[LS_SAFE_MAX];
    size_t plen, pat; /* the piece being drawn and where in it */
} text_walk;

/* The next character to draw, 0 at the end. */
static wchar_t walk_next(text_walk *t)
{
    while (t->pat == t->plen) {
        if (!t->len) return 0;
        size_t used = ls_safe_step(t->s, t->len, LS_SAFE_LAYOUT, true, t->piece, &t->plen);
        t->pat = 0;
        t->s += used;
        t->len -= used;
    }
    wchar_t wc;
    size_t n = next_char(t->piece + t->pat, t->plen - t->pat, &t->st, &wc);
    t->pat += n ? n : 1;
    if (wc == '\n' || wc == '\t') wc = ' ';
    return wc ? wc : '?';
}

int ui_text_width(const char *s)
{
    text_walk t = {.s = s, .len = strlen(s)};
    int w = 0;
    for (wchar_t wc; (wc = walk_next(&t));) {
        int cw = wcwidth(wc);
        w += cw < 0 ? 1 : cw;
    }
    return w;
}

/* A text as drawn (safe_text's escapes in place, an ASCII terminal's stand-ins, '?' for what has
 * no width), each character's width beside it: ui_put draws its first columns, ui_put_fit
 * measures and cuts the whole. */
typedef struct drawn {
    wchar_t *c;
    int *w, n, width;
    wchar_t small_c[256];
    int small_w[256];
} drawn;

/* Past `stop` columns the rest is not needed (ui_put): it stops there. */
static void drawn_make(const ui *u, const char *s, int stop, drawn *d)
{
    size_t cap = 256;
    d->c = d->small_c;
    d->w = d->small_w;
    d->n = d->width = 0;
    text_walk t = {.s = s, .len = strlen(s)};
    for (wchar_t wc; d->width <= stop && (wc = walk_next(&t));) {
        if (!u->utf8 && wc >= 0x80) wc = (wchar_t)ls_ascii_of((uint32_t)wc); /* TERM=vt100, a locale not UTF-8 */
        int width = wcwidth(wc);
        if (width < 0) {
            wc = '?';
            width = 1;
        }
        if ((size_t)d->n + 1 >= cap) { /* room for the ellipsis too */
            size_t ncap = cap * 2;
            wchar_t *nc = ls_malloc(sizeof *nc * ncap);
            int *nw = ls_malloc(sizeof *nw * ncap);
            memcpy(nc, d->c, sizeof *nc * (size_t)d->n);
            memcpy(nw, d->w, sizeof *nw * (size_t)d->n);
            if (d->c != d->small_c) {
                free(d->c);
                free(d->w);
            }
            d->c = nc;
            d->w = nw;
            cap = ncap;
        }
        d->c[d->n] = wc;
        d->w[d->n++] = width;
        d->width += width;
    }
}

static int width_of(const drawn *d, int from, int to)
{
    int w = 0;
    for (int k = from; k < to; k++) w += d->w[k];
    return w;
}

static void drawn_free(drawn *d)
{
    if (d->c != d->small_c) {
        free(d->c);
        free(d->w);
    }
}

int ui_put(ui *u, int y, int x, int w, attr_t attr, short pair, const char *s)
{
    if (w <= 0 || y < 0 || y >= u->rows || x >= u->cols) return 0;
    if (x + w > u->cols) w = u->cols - x;
    drawn d;
    drawn_make(u, s, w, &d);
    int used = 0, n = 0;
    while (n < d.n && used + d.w[n] <= w) used += d.w[n++];
    attr_set(attr, pair, NULL);
    mvaddnwstr(y, x, d.c, n);
    attr_set(A_NORMAL, 0, NULL);
    drawn_free(&d);
    return used;
}

/* s in w columns: whole, else its first (or, keep_end, its last) w - 1 columns of what is drawn
 * and an ellipsis; an op's namespace (aten::) goes first. Measured and cut in the drawn text
 * (escapes in place, an ASCII terminal's stand-ins), so that an escape (\x1b) is never split
 * nor counted as one column, and a long name keeps its end. */
static int put_fit(ui *u, int y, int x, int w, attr_t attr, short pair, const char *s, bool keep_end, bool drop_ns)
{
    if (w <= 0 || y < 0 || y >= u->rows || x >= u->cols) return 0;
    if (x + w > u->cols) w = u->cols - x;
    drawn d;
    drawn_make(u, s, INT_MAX, &d);
    const char *ns = d.width > w && drop_ns ? strstr(s, "::") : NULL;
    if (ns) { /* without its namespace */
        drawn_free(&d);
        drawn_make(u, ns + 2, INT_MAX, &d);
    }
    int used = 0, from = 0, to = d.n;
    bool cut = d.width > w;
    if (cut && keep_end) { /* the last w - 1 columns */
        from = d.n;
        while (from > 0 && used + d.w[from - 1] <= w - 1) used += d.w[--from];
    } else if (cut) { /* the first w - 1 columns */
        to = 0;
        while (to < d.n && used + d.w[to] <= w - 1) used += d.w[to++];
    } else {
        used = d.width;
    }
    wchar_t ell = u->utf8 ? L'\u2026' : L'~';
    attr_set(attr, pair, NULL);
    move(y, x);
    if (cut && keep_end) addnwstr(&ell, 1);
    addnwstr(d.c + from, to - from);
    if (cut && !keep_end) addnwstr(&ell, 1);
    attr_set(A_NORMAL, 0, NULL);
    drawn_free(&d);
    return used + cut;
}

int ui_put_fit(ui *u, int y, int x, int w, attr_t attr, short pair, const char *s, bool keep_end)
{
    return put_fit(u, y, x, w, attr, pair, s, keep_end, !keep_end);
}

int ui_put_cut(ui *u, int y, int x, int w, attr_t attr, short pair, const char *s)
{
    return put_fit(u, y, x, w, attr, pair, s, false, false);
}

int ui_put_wrapped(ui *u, int y_last, int max_lines, attr_t attr, short pair, const char *s, int *last_width)
{
    enum { MOST = 16, INDENT = 2 };
    int width = u->cols;
    if (max_lines > MOST) max_lines = MOST;
    if (max_lines < 1) max_lines = 1;
    *last_width = 0;
    if (width <= INDENT + 8 || y_last < 0 || y_last >= u->rows) return 0;
    drawn d;
    drawn_make(u, s, INT_MAX, &d);
    int from[MOST], to[MOST], n_lines = 0, i = 0;
    while (i < d.n && n_lines < max_lines) {
        int room = n_lines ? width - INDENT : width, used = 0, j = i, space = -1;
        while (j < d.n && used + d.w[j] <= room) {
            if (d.c[j] == L' ') space = j;
            used += d.w[j++];
        }
        int end = j < d.n && space > i + (j - i) / 2 ? space : j; /* at a space, unless the word is half the line */
        if (end == i) end = i + 1;                               /* a character wider than the line */
        from[n_lines] = i;
        to[n_lines++] = end;
        i = end;
        while (i < d.n && d.c[i] == L' ') i++;
    }
    bool cut = i < d.n;
    int top = y_last - n_lines + 1;
    if (top < 0) top = 0;
    wchar_t ell = u->utf8 ? L'\u2026' : L'~';
    for (int k = 0; k < n_lines && top + k <= y_last; k++) {
        int x = k ? INDENT : 0, y = top + k, end = to[k];
        bool last = k == n_lines - 1;
        if (last && cut) /* room for the ellipsis */
            while (end > from[k] && x + width_of(&d, from[k], end) + 1 > width) end--;
        int used = width_of(&d, from[k], end);
        ui_fill(u, y, 0, width, A_NORMAL, 0);
        attr_set(attr, pair, NULL);
        mvaddnwstr(y, x, d.c + from[k], end - from[k]);
        if (last && cut) addnwstr(&ell, 1);
        attr_set(A_NORMAL, 0, NULL);
        if (last) *last_width = x + used + (cut ? 1 : 0);
    }
    drawn_free(&d);
    return y_last - top + 1;
}

void ui_put_mark_swatch(ui *u, int y, int x, char mark, ui_role mark_role, int tag, attr_t a, short pair, bool cursor)
{
    short mp;
    char mk[2] = {mark, 0};
    attr_t ma = ui_role_attr(u, mark_role, &mp); /* before mp is read */
    ui_put(u, y, x, 1, ma | (cursor ? A_REVERSE : 0), mp, mk);
    if (tag < 0) return;
    char sw[8]; /* the tag's colour, or its letter without colours */
    if (u->colors == UI_COLORS_NONE) snprintf(sw, sizeof sw, "%c", ui_tag_letter(tag));
    else snprintf(sw, sizeof sw, "%s", u->utf8 ? "▌" : "|");
    ui_put(u, y, x + 1, 1, a, pair, sw);
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

ui_pane *ui_focused_pane(ui *u)
{
    return u->screen == UI_S_MAIN ? &u->panes[u->focus] : &u->panes[UI_P_SCREEN];
}

int ui_pane_rows(const ui_pane *p) { return p->r.h > 1 ? p->r.h - 1 : 1; }

void ui_pane_clamp(ui *u, ui_pane *p)
{
    uint32_t n = p->ops->count(u);
    if (p->sel >= n) p->sel = n ? n - 1 : 0;
    uint32_t h = (uint32_t)ui_pane_rows(p);
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
    ui_put_cut(u, p->r.y, p->r.x + 1, p->r.w - 1, a, pair, b.s ? b.s : ""); /* a title cut ends in … */
    ls_buf_free(&b);
    ui_pane_clamp(u, p);
    uint32_t n = p->ops->count(u);
    for (int i = 0; i < ui_pane_rows(p) && i + 1 < p->r.h + 0; i++) {
        uint32_t row = p->top + (uint32_t)i;
        if (row >= n) break;
        p->ops->draw_row(u, row, p->r.y + 1 + i, p->r.x, p->r.w, row == p->sel);
    }
}

/* ---- layout: the one place sizes are decided */

void ui_layout(ui *u)
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
    L = L < 29 ? 29 : L > 56 ? 56 : L; /* at 56 the partitions pane has room for the backends */
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
    ui_layout(u);
    if (u->screen == UI_S_HELP) ui_help_build(u); /* wrapped to the width */
    for (int i = 0; i < UI_P_ALL; i++)
        if (u->panes[i].ops && u->panes[i].r.h > 0) ui_pane_clamp(u, &u->panes[i]);
    clearok(curscr, TRUE);
}

/* ---- frame: the header and the status line are frame.c's */

static void draw_too_small(ui *u)
{
    /* the notice in as many lines as the width needs: two, or four short ones (cut, it read
     * "lowerscope needs at least 80×2", a minimum that reads as real); on fewer rows than
     * that the last lines, which say what to do */
    char size[64], need[96];
    snprintf(size, sizeof size, "terminal too small: %d×%d", u->cols, u->rows);
    snprintf(need, sizeof need, "lowerscope needs at least %d×%d — enlarge it, or q to quit", MIN_COLS, MIN_ROWS);
    const char *wide[] = {size, need}, *narrow[4];
    char needs[32];
    snprintf(needs, sizeof needs, "needs %d×%d", MIN_COLS, MIN_ROWS);
    narrow[0] = "too small:";
    snprintf(size, sizeof size, "%d×%d", u->cols, u->rows);
    narrow[1] = size;
    narrow[2] = needs;
    narrow[3] = "q quits";
    bool fits = ui_text_width(need) <= u->cols;
    if (fits) snprintf(size, sizeof size, "terminal too small: %d×%d", u->cols, u->rows);
    const char **lines = fits ? wide : narrow;
    int n = fits ? 2 : 4, skip = n > u->rows ? n - u->rows : 0;
    lines += skip;
    n -= skip;
    int y = (u->rows - n) / 2;
    short pair;
    attr_t warn = ui_role_attr(u, UI_R_WARN, &pair);
    for (int i = 0; i < n; i++) {
        int w = ui_text_width(lines[i]);
        bool first = fits ? i + skip == 0 : i + skip < 2;
        ui_put_cut(u, y + i < 0 ? 0 : y + i, w < u->cols ? (u->cols - w) / 2 : 0, u->cols, first ? warn | A_BOLD : A_NORMAL,
                   first ? pair : 0, lines[i]);
    }
}

void ui_draw(ui *u)
{
    erase();
    if (u->too_small) {
        draw_too_small(u);
    } else {
        ui_draw_header(u);
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
        ui_draw_status(u);
    }
    refresh();
}

/* ---- input */

/* An ESC ncurses gave as it is: a lone Esc, Alt and a key (Esc, then the key), or a sequence
 * TERM does not list, read whole (its bytes are already in, or come within milliseconds over
 * SSH) and made the key it is, or dropped with a message rather than acted on byte by byte. */
static int read_escape(ui *u)
{
    char seq[16];
    size_t n = 0;
    timeout(15);
    while (n < sizeof seq) {
        wint_t c;
        int r = get_wch(&c);
        if (r == ERR) break;
        if (r != OK || c > 0x7e || (n == 0 && c != '[' && c != 'O')) { /* not a sequence: Esc, then this key */
            u->refeed = r == KEY_CODE_YES ? UI_KEY_FN + (int)c : (int)c;
            return 27;
        }
        seq[n++] = (char)c;
        if (ui_escape_complete(seq, n)) break;
    }
    if (!n) return 27;
    if (n == 2 && seq[0] == '[' && seq[1] == 'M') { /* an X10 mouse report TERM does not list: its 3 bytes go too */
        for (int k = 0; k < 3; k++) {
            wint_t c;
            if (get_wch(&c) == ERR) break;
        }
        return UI_KEY_TIMEOUT;
    }
    int key = ui_escape_key(seq, n);
    if (key != UI_KEY_NONE) return key;
    char shown[64];
    int w = snprintf(shown, sizeof shown, "ESC");
    for (size_t i = 0; i < n && w < (int)sizeof shown - 4; i++)
        w += snprintf(shown + w, sizeof shown - (size_t)w, " %c", seq[i] >= 0x20 && seq[i] < 0x7f ? seq[i] : '?');
    ui_message(u, true, "ignored a key sequence this terminal type does not list (%s): is TERM (%s) right?", shown,
               getenv("TERM") ? getenv("TERM") : "unset");
    return UI_KEY_TIMEOUT;
}

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
    if (r == OK && wc == 27) return read_escape(u);
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
        u->msg[0] = 0;
        if (!u->too_small && !u->prompt_kind) ui_on_mouse(u);
        return;
    }
    if (u->too_small) {
        /* the screen shows the notice alone, no pane and no prompt: quit (q, from the bindings)
         * ends the UI whatever is open under it, as the notice says; a redraw redraws; any other
         * key waits for a bigger terminal rather than act unseen */
        ui_action a = ui_keys_feed(u, key);
        if (a == UI_A_QUIT) u->quit = true;
        else if (a == UI_A_REDRAW) clearok(curscr, TRUE);
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
    double t0 = 0, c0 = 0;
    bool timing = false, first = true;
    while (!u->quit && !g_stop) {
        ui_sync(u);
        ui_compare_poll(u);
        /* a search under way goes on between keys, a slice at a time */
        if (ui_search_pending(u) && !u->script) ui_search_step(u, 0.008);
        else if (ui_complete_pending(u) && !u->script) ui_complete_step(u, 0.008); /* and a completion */
        if (!u->headless)
            timeout(ui_search_pending(u) || ui_complete_pending(u) ? 0
                    : ui_compare_pending(u)                         ? 20
                    : ui_running(u)                                 ? 100
                                                                    : UI_INPUT_TIMEOUT_MS);
        ui_draw(u);
        if (first && ui_core_loaded_at() > 0) ui_script_note(u, "first-screen", ls_now() - ui_core_loaded_at(), 0);
        if (first && u->script && !u->script_no_wait) ui_wait_pipeline(u); /* scripts see the whole history */
        first = false;
        if (timing) ui_script_timed(u, ls_now() - t0, ui_thread_cpu() - c0);
        if (u->script && ui_search_pending(u)) { /* a script's next event sees the search done */
            while (ui_search_step(u, 1.0)) {
            }
            ui_draw(u);
            ui_script_note(u, "search-done", ls_now() - t0, ui_thread_cpu() - c0);
        }
        if (u->script && ui_complete_pending(u)) {
            while (ui_complete_step(u, 1.0)) {
            }
            ui_draw(u);
            ui_script_note(u, "complete-done", ls_now() - t0, ui_thread_cpu() - c0);
        }
        if (u->script && ui_compare_unfinished(u)) {
            ui_compare_finish(u);
            ui_draw(u);
            ui_script_note(u, "compare-done", ls_now() - t0, ui_thread_cpu() - c0);
        }
        int key = read_key(u, cmd, sizeof cmd);
        t0 = ls_now();
        c0 = ui_thread_cpu();
        timing = u->script != NULL;
        if (key == UI_KEY_NONE) { /* end of the script */
            ui_run_action(u, ui_keys_flush(u));
            break;
        }
        if (key == UI_KEY_TIMEOUT) { /* a lone prefix (g) acts alone */
            if (u->n_pending && !ui_search_pending(u)) ui_run_action(u, ui_keys_flush(u));
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
    } else if (!isatty(STDIN_FILENO) || !isatty(STDOUT_FILENO)) {
        /* curses on a pipe or /dev/null writes escapes into it and takes end-of-file for no key,
         * forever */
        ls_fail(err,
                "the terminal UI needs a terminal, and standard %s is not one; the commands print to pipes and "
                "files (lowerscope passes FILE, info, diff, graph ...: lowerscope --help), and LOWERSCOPE_SCRIPT "
                "runs the UI without one (docs/tui.md)",
                !isatty(STDIN_FILENO) ? "input" : "output");
        return false;
    } else {
        u->scr = newterm(NULL, stdout, stdin);
    }
    if (!u->scr) {
        if (u->scr_out) fclose(u->scr_out);
        if (u->scr_in) fclose(u->scr_in);
        ls_fail(err, "cannot start the terminal UI: TERM=%s is not a terminal type this system's terminfo knows "
                     "(use one such as xterm-256color)", getenv("TERM") ? getenv("TERM") : "unset");
        return false;
    }
    set_term(u->scr);
    /* a terminal that cannot move the cursor (TERM=dumb) draws only the last row, and what it
     * drew stays after the UI ends: refused as an unknown one is */
    const char *cup = tigetstr("cup");
    if (!u->headless && (!cup || cup == (const char *)-1)) {
        endwin();
        delscreen(u->scr);
        u->scr = NULL;
        ls_fail(err, "cannot start the terminal UI: TERM=%s cannot move the cursor (use a terminal such as xterm-256color)",
                getenv("TERM") ? getenv("TERM") : "unset");
        return false;
    }
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
        timeout(UI_INPUT_TIMEOUT_MS);
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

static bool is_utf8(const char *cs)
{
    return cs && (strstr(cs, "UTF-8") || strstr(cs, "utf8") || strstr(cs, "UTF8") || strstr(cs, "utf-8"));
}

/* Terminals that draw ASCII only (no box drawing, no UTF-8). */
static bool ascii_terminal(const char *term)
{
    return term && (!strncmp(term, "vt", 2) || !strcmp(term, "dumb") || !strcmp(term, "ansi"));
}

/* Text is processed as UTF-8 (C.UTF-8 is always there on Debian); it is drawn as UTF-8 unless the
 * terminal is an ASCII one or the locale is not UTF-8, in which case every non-ASCII character is
 * drawn with an ASCII one (ls_ascii_of: | > # .). A scripted run draws on an off-screen terminal
 * named by LOWERSCOPE_TERM in the locale LOWERSCOPE_LOCALE names (UTF-8 when unset), so screen
 * dumps do not depend on the machine's own TERM and LANG. */
static void setup_locale(ui *u)
{
    const char *loc = setlocale(LC_ALL, "");
    bool utf8 = loc && is_utf8(setlocale(LC_CTYPE, NULL));
    if (!utf8) setlocale(LC_CTYPE, "C.UTF-8");
    const char *term = getenv("TERM");
    if (u->headless) {
        const char *l = getenv("LOWERSCOPE_LOCALE");
        utf8 = !l || !*l || is_utf8(l);
        term = getenv("LOWERSCOPE_TERM");
    }
    u->utf8 = utf8 && !ascii_terminal(term);
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

/* ---- a live history: steps appear as the pipeline's thread finishes them */

static void sleep_ms(int ms)
{
    struct timespec ts = {0, ms * 1000000L};
    nanosleep(&ts, NULL);
}

bool ui_sync(ui *u)
{
    ui_live *L = u->live;
    if (!L) return false;
    const ls_history *lh = ui_live_history(L);
    bool done;
    uint32_t n = ls_history_ready(lh, &done);
    if (n == u->snap.n && done == u->snap.done) return false;
    ui_step_rows **rows = ui_live_rows(L);
    for (uint32_t k = u->snap.n; k < n; k++) {
        const ui_tagtab *log = &rows[k]->tag_log;
        for (uint32_t i = 0; i < log->n; i++) ui_tagtab_add(&u->dc.tags, log->tags[i], log->backends[i]);
    }
    u->snap.path = lh->path;
    u->snap.steps = lh->steps;
    u->snap.not_run = n ? lh->not_run : NULL;
    u->snap.n_planned = done ? n : __atomic_load_n(&lh->n_planned, __ATOMIC_RELAXED);
    u->snap.done = done;
    bool more = n != u->snap.n;
    u->snap.n = n;
    u->step_rows = rows;
    u->n_step_rows = n;
    u->own_step_rows = false;
    if (more) u->step_seen_at = ls_now();
    if (more && u->follow && n && u->step != n - 1 && u->scr) {
        ui_set_step(u, n - 1);
        u->follow = true;
    }
    return true;
}

bool ui_running(const ui *u)
{
    return u->live && !u->snap.done;
}

void ui_wait_pipeline(ui *u)
{
    while (ui_running(u)) {
        sleep_ms(2);
        ui_sync(u);
    }
}

/* The progress line of a running pipeline: "step 4 of 10: partition (bundled) · 3.2 s". */
void ui_progress_text(const ui *u, char *buf, size_t cap)
{
    uint32_t k = u->snap.n < u->snap.n_planned ? u->snap.n : u->snap.n_planned - 1;
    const ls_step *st = &u->snap.steps[k];
    snprintf(buf, cap, "pipeline: step %u of %u: %s%s%s%s · %.1f s", k, u->snap.n_planned - 1, st->pass,
             st->detail ? " (" : "", st->detail ? st->detail : "", st->detail ? ")" : "", ls_now() - u->step_seen_at);
}

/* Refuses what would take references to the programs the pipeline's thread is copying. */
bool ui_refuse_while_running(ui *u, const char *what)
{
    if (ui_compare_loading(u)) { /* its thread takes references to the loaded program's nodes too */
        ui_message(u, true, "%s waits for the comparison to load", what);
        return true;
    }
    if (!ui_running(u)) return false;
    char p[160];
    ui_progress_text(u, p, sizeof p);
    ui_message(u, true, "%s waits for the pipeline to finish (%s)", what, p + strlen("pipeline: "));
    return true;
}

int ls_tui_run(const ls_history *h, const ls_tui_opts *o, ls_error *err)
{
    ui_live *live = ui_core_live(h);
    ui *u = NULL;
    if (live) {
        /* the first screen shows step 0 as soon as it is verified; --step S waits for the whole pipeline */
        bool done = false;
        while (ls_history_ready(h, &done) == 0 && !done) sleep_ms(2);
        if (o->start_step || o->etdump) /* an ETDump's step may come after the first */
            while (!done) {
                sleep_ms(5);
                ls_history_ready(h, &done);
            }
        if (!ls_history_ready(h, NULL))
            return ls_fail(err, "%s", ui_live_error(live) ? ui_live_error(live) : "nothing to show: the history is empty"), 2;
        u = ls_calloc(1, sizeof *u);
        u->live = live;
        ui_sync(u);
        h = &u->snap;
    }
    if (!h || !h->n) return ls_fail(err, "nothing to show: the history is empty"), 2;
    int first = o->start_step ? ls_history_find_step(h, o->start_step, err) : (int)h->n - 1;
    if (first < 0) { /* "--step nope: no such step", as the commands say it */
        char why[LS_ERR_MAX];
        snprintf(why, sizeof why, "%s", err->msg);
        if (u) ui_tags_free(u);
        free(u);
        return ls_fail(err, "--step %s", why), 2;
    }
    if (!u) u = ls_calloc(1, sizeof *u);
    u->h = h;
    u->follow = live && !o->start_step && !o->etdump;
    u->script_no_wait = o->script_no_wait;
    u->step_seen_at = ls_now();
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
    if (!live) ui_tags_init(u); /* a live history's tags come with its steps (ui_sync) */
    u->step = (uint32_t)first;
    u->panes[UI_P_TIMELINE].sel = u->step;
    /* why the timeline holds the load step only; the changes pane lists the findings */
    if (h->not_run) ui_message(u, true, "no pass ran: %s", h->not_run);
    int rc = 0;
    if (o->etdump) {
        if (ui_etdump_open(u, o->etdump, err) != 0) {
            rc = 2;
            goto out;
        }
        if (!o->start_step) u->step = ui_etdump_step(u); /* where its times are */
        u->panes[UI_P_TIMELINE].sel = u->step;
    }
    if (o->script && ui_script_open(u, o->script, err) != 0) {
        rc = 2;
        goto out;
    }
    setup_locale(u);
    install_signals();
    static bool registered;
    if (!registered) atexit(ui_restore);
    registered = true;
    if (!start_curses(u, o, err)) {
        rc = 2;
        goto out;
    }
    ui_reselect(u);
    event_loop(u);
    ui_restore();
    delscreen(u->scr);
    g_screen = NULL;
    if (u->scr_out) fclose(u->scr_out);
    if (u->scr_in) fclose(u->scr_in);
    if (g_stop) rc = 128 + g_stop;
out:
    ui_run_session_free(u->run);
    ui_etdump_free(u);
    ui_partgraph_free(u);
    ui_around_free(u);
    ui_compare_free(u);
    ui_compare_reaped();
    free(u->filter_ids);
    free(u->matches);
    ui_history_free(u);
    ui_complete_cancel(u);
    if (u->owned_h) ui_core_free(u->owned_h);
    ui_script_free(u);
    ui_model_free(&u->m);
    ui_lines_clear(&u->node_lines);
    ui_lines_clear(&u->screen_lines);
    ui_lines_clear(&u->help_lines);
    free(u->node_lines.v);
    free(u->screen_lines.v);
    free(u->help_lines.v);
    if (u->re_ok) regfree(&u->re);
    ls_ptrmap_free(&u->search_ops);
    ui_step_rows_free_all(u);
    ui_tags_free(u);
    free(u);
    return rc;
}
