/* The pass timeline: every step with its change count; the cursor is the current step, so
 * moving in this pane steps through the history like ←/→ do. */
#include <stdio.h>

#include "ui.h"

static void title(ui *u, ls_buf *b)
{
    ls_buf_printf(b, "Passes · %u step%s", u->h->n, u->h->n == 1 ? "" : "s");
    if (ui_running(u)) ls_buf_printf(b, " of %u", u->snap.n_planned);
    if (u->h->not_run) ls_buf_puts(b, " (no pass)");
}

/* The steps still to come are listed too while the pipeline runs. */
static uint32_t count(ui *u)
{
    return ui_running(u) ? u->snap.n_planned : u->h->n;
}

static void draw_row(ui *u, uint32_t row, int y, int x, int w, bool cursor)
{
    const ls_step *st = &u->h->steps[row];
    if (row >= u->h->n) { /* not made yet: only its name is known */
        short dp;
        attr_t da = ui_role_attr(u, UI_R_DIM, &dp);
        char left[128];
        snprintf(left, sizeof left, " %2u %s", row, st->pass ? st->pass : "?");
        const char *right = row == u->h->n ? (u->utf8 ? "running…" : "running") : u->utf8 ? "…" : "...";
        int rw = ui_text_width(right);
        ui_put(u, y, x, w - rw - 3, da, dp, left);
        ui_put(u, y, x + w - rw - 1, rw, da, dp, right);
        return;
    }
    bool focus = u->focus == UI_P_TIMELINE;
    short pair = 0;
    attr_t a = A_NORMAL;
    if (row == u->step) a = focus ? A_REVERSE : A_BOLD;
    if (row == u->step && focus) ui_fill(u, y, x, w, a, 0);
    (void)cursor;
    char left[128], right[32];
    snprintf(left, sizeof left, "%s%2u %s", row == u->step ? "▶" : " ", row, st->pass ? st->pass : "?");
    /* the load's size, then what each step changed: "±48" is not a node count (it read as one) */
    uint32_t nodes = st->program ? st->program->n_nodes : 0;
    if (row == 0) snprintf(right, sizeof right, "%u node%s", nodes, nodes == 1 ? "" : "s");
    else snprintf(right, sizeof right, "%s%u", u->utf8 ? "±" : "+-", st->n_changes);
    int rw = ui_text_width(right);
    ui_put(u, y, x, w - rw - 3, a, pair, left);
    if (st->error || st->verify.n_errors) {
        short ep;
        attr_t ea = ui_role_attr(u, UI_R_ERROR, &ep);
        ui_put(u, y, x + w - rw - 3, 1, ea | (a & A_REVERSE), ep, u->utf8 ? "✗" : "x");
    }
    ui_put(u, y, x + w - rw - 1, rw, a, pair, right);
}

static void moved(ui *u, uint32_t row)
{
    if (row >= u->h->n) {
        ui_message(u, false, "step %u (%s) is not ready yet", row, u->h->steps[row].pass);
        ui_pane_of(u, UI_P_TIMELINE)->sel = u->step;
        return;
    }
    if (row != u->step) ui_set_step(u, row);
}

/* Enter on a step: what it changed, in the Changes pane (the cursor is already the step, so
 * Enter did nothing, without a word) */
static void activate(ui *u, uint32_t row)
{
    if (row >= u->h->n) {
        ui_message(u, false, "step %u (%s) is not ready yet", row, u->h->steps[row].pass);
        return;
    }
    if (row != u->step) ui_set_step(u, row);
    u->focus = UI_P_CHANGES;
    ui_message(u, false, "step %u %s: what it changed (Enter on a line goes to the node it names; 2 comes back)", row,
               u->h->steps[row].pass);
}

/* / in this pane finds a step by its pass (and backend) */
static bool match(ui *u, uint32_t row, const regex_t *re)
{
    if (row >= u->h->n) return false;
    const ls_step *st = &u->h->steps[row];
    return (st->pass && regexec(re, st->pass, 0, NULL, 0) == 0) || (st->detail && regexec(re, st->detail, 0, NULL, 0) == 0);
}

const ui_view_ops ui_timeline_ops = {
    .name = "passes",
    .title = title,
    .count = count,
    .draw_row = draw_row,
    .moved = moved,
    .activate = activate,
    .match = match,
};
