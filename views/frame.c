/* The frame around the panes: the header (file, dialect, step, pass, the verifier's state, the
 * lowered module the graph is in) and the status line (the prompt, a message, the running
 * pipeline's progress or the main keys, and where the selection is in the focused pane). */
#include <stdio.h>
#include <string.h>

#include "ui.h"

/* What matters most is kept when the line is short: the verifier's state and the lowered module
 * the graph is in come before the file's name (the user typed it): the name gives up columns
 * first (keeping its start), then the module's backend. */
void ui_draw_header(ui *u)
{
    short pair;
    attr_t a = ui_role_attr(u, UI_R_HEADER, &pair);
    ui_fill(u, 0, 0, u->cols, a, pair);
    const ls_step *st = &u->h->steps[u->step];
    const ls_program *p = st->program;
    char method[256] = "", mid[512], verify[64], scope[512] = "", scope_short[512] = "";
    if (p->method) snprintf(method, sizeof method, " · %s", p->method);
    snprintf(mid, sizeof mid, " │ %s │ step %u/%u %s%s%s │ ", ls_dialect_name(p->dialect), u->step,
             ui_running(u) ? u->snap.n_planned - 1 : u->h->n ? u->h->n - 1 : 0, st->pass, st->detail ? " " : "",
             st->detail ? st->detail : "");
    short vp = pair;
    attr_t va = a;
    if (st->error) {
        va = ui_role_attr(u, UI_R_ERROR, &vp) | A_REVERSE;
        snprintf(verify, sizeof verify, "pass failed");
    } else if (st->verify.n_errors) {
        va = ui_role_attr(u, UI_R_ERROR, &vp) | A_REVERSE;
        snprintf(verify, sizeof verify, "verify: %u error%s", st->verify.n_errors, st->verify.n_errors == 1 ? "" : "s");
    } else if (st->verify.n > st->verify.n_errors) { /* "ok" beside a node pane's warning read as a contradiction */
        uint32_t w = st->verify.n - st->verify.n_errors;
        snprintf(verify, sizeof verify, "verify: %u warning%s", w, w == 1 ? "" : "s");
    } else {
        snprintf(verify, sizeof verify, "verify: ok");
    }
    if (u->depth) {
        const ls_submodule *s = ls_program_sub(ui_scope_program_parent(u), u->scope[u->depth - 1]);
        snprintf(scope, sizeof scope, " │ in %s (%s)", u->scope[u->depth - 1], s && s->backend_id ? s->backend_id : "?");
        snprintf(scope_short, sizeof scope_short, " │ in %s", u->scope[u->depth - 1]);
    }
    int room = u->cols - 1, fw = ui_text_width(u->file);
    int rest = ui_text_width(method) + ui_text_width(mid) + ui_text_width(verify);
    const char *in = scope;
    if (fw + rest + ui_text_width(scope) > room && u->depth) in = scope_short;
    int file_w = room - rest - ui_text_width(in);
    int min_w = fw < 6 ? fw : 6;
    if (file_w < min_w) file_w = min_w;
    int x = 1;
    x += ui_put_fit(u, 0, x, file_w, a, pair, u->file, false);
    x += ui_put(u, 0, x, u->cols - x, a, pair, method);
    x += ui_put(u, 0, x, u->cols - x, a, pair, mid);
    x += ui_put(u, 0, x, u->cols - x, va, vp, verify);
    ui_put(u, 0, x, u->cols - x, a, pair, in);
}

/* In ASCII the arrows would read as < and >, which scroll: the letter keys are named instead. */
/* The key hints, one item each: as many as fit are shown, whole (one cut mid-word, "r ru",
 * reads as a key that is not there). */
static const char *const hint_main[] = {"q quit", "? help", "←/→ step", "1-5 pane", "/ search", "f filter", "g graph",
                                        "r run", NULL};
static const char *const hint_main_ascii[] = {"q quit", "? help", "h/l step", "1-5 pane", "/ search", "f filter",
                                              "g graph", "r run", NULL};
static const char *const hint_run[] = {"r run again", "q/Esc back", "j/k move", "/ search", "? help", NULL};
static const char *const hint_screen[] = {"q/Esc back", "j/k move", "/ search", "? help", NULL};

static void fit_hints(const char *const *items, const char *sep, int room, char *out, size_t cap)
{
    out[0] = 0;
    for (int i = 0; items[i]; i++) {
        char next[256];
        int len = snprintf(next, sizeof next, "%s%s%s", out, i ? sep : "", items[i]);
        if (len < 0 || (size_t)len >= cap || ui_text_width(next) > room) break;
        memcpy(out, next, (size_t)len + 1);
    }
}

/* "row 3 of 40" of the focused pane ("box 3 of 8" on a screen of boxes), or "" when it is empty. */
static void position_text(ui *u, char *buf, size_t cap)
{
    buf[0] = 0;
    ui_pane *p = ui_focused_pane(u);
    if (!p->ops || p->r.h <= 0) return;
    const ui_boxview *bv = u->screen == UI_S_PARTGRAPH ? &u->pg : u->screen == UI_S_AROUND ? &u->around : NULL;
    if (bv) {
        if (bv->valid && bv->L->n_boxes)
            snprintf(buf, cap, "box %u of %u", bv->L->order_of[bv->sel] + 1, bv->L->n_boxes);
        return;
    }
    uint32_t n = p->ops->count(u);
    if (n) snprintf(buf, cap, "row %u of %u", (p->sel < n ? p->sel : n - 1) + 1, n);
}

void ui_draw_status(ui *u)
{
    int y = u->rows - 1;
    short pair;
    attr_t a = ui_role_attr(u, UI_R_HEADER, &pair);
    ui_fill(u, y, 0, u->cols, A_NORMAL, 0);
    if (u->prompt_kind) {
        char buf[1200];
        if (u->prompt_kind == 'y')
            snprintf(buf, sizeof buf, "%s exists — overwrite? (y: yes; n, q or Esc: no) ", u->export_path);
        else
            snprintf(buf, sizeof buf, "%s%s", u->prompt_kind == 'f' ? "filter (tag, cpu or op): " : u->prompt_kind == '/' ? "/" : ":",
                     u->prompt);
        int w = ui_put(u, y, 0, u->cols - 1, A_NORMAL, 0, buf);
        ui_put(u, y, w, 1, A_REVERSE, 0, " ");
        if (u->prompt_hint[0]) { /* what Tab could complete */
            short dp;
            attr_t da = ui_role_attr(u, UI_R_DIM, &dp);
            ui_put_cut(u, y, w + 2, u->cols - w - 3, da, dp, u->prompt_hint); /* more than fit: … */
        }
        if (u->prompt_kind == '/') { /* which pane it searches */
            ui_pane *sp = u->screen != UI_S_MAIN ? ui_pane_of(u, UI_P_SCREEN) : u->panes[u->focus].ops->match ? &u->panes[u->focus] : ui_pane_of(u, UI_P_GRAPH);
            char where[64];
            snprintf(where, sizeof where, "searching the %s", sp == ui_pane_of(u, UI_P_SCREEN) ? "screen" : sp->ops->name);
            int ww = ui_text_width(where);
            if (w + 2 + ww < u->cols) ui_put(u, y, u->cols - ww - 1, ww, A_DIM, 0, where);
        }
        return;
    }
    /* the position, right-aligned, when the message or the hint leaves room for it */
    char pos[64];
    position_text(u, pos, sizeof pos);
    int pw = pos[0] ? ui_text_width(pos) + 2 : 0;
    if (u->msg[0]) {
        /* a message wider than the terminal takes the rows above the status line too, over
         * the panes, until the next key clears it: an error is read whole, never cut */
        short ep;
        attr_t ea = ui_role_attr(u, u->msg_error ? UI_R_ERROR : UI_R_NORMAL, &ep);
        int used = 0, lines = ui_put_wrapped(u, y, u->rows / 3, ea, ep, u->msg, &used);
        if (lines == 1 && pw && used + pw <= u->cols) ui_put(u, y, u->cols - pw + 1, pw - 1, A_NORMAL, 0, pos);
        return;
    }
    if (ui_running(u)) {
        char p[200];
        ui_progress_text(u, p, sizeof p);
        ui_fill(u, y, 0, u->cols, a, pair);
        ui_put(u, y, 1, u->cols - 1, a, pair, p);
        return;
    }
    bool main = u->screen == UI_S_MAIN;
    const char *const *items = main                                             ? (u->utf8 ? hint_main : hint_main_ascii)
                               : u->screen == UI_S_RUN && ui_run_can_run(u) ? hint_run
                                                                            : hint_screen;
    ui_fill(u, y, 0, u->cols, a, pair);
    char fit[256];
    int room = u->cols - 1 - pw;
    fit_hints(items, main ? " " : "  ", room, fit, sizeof fit);
    int used = ui_put(u, y, 1, room, a, pair, fit);
    if (pw && 1 + used + pw <= u->cols) ui_put(u, y, u->cols - pw + 1, pw - 1, a, pair, pos);
}

