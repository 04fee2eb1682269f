/* The `:` command line's history (↑/↓ go through the lines run before, newest first) and Tab
 * completion: the command's name, then what it takes — node names for goto and around, steps
 * (numbers, passes, pass:backend) for step and compare, tags, cpu and ops for filter, backends
 * (bundled, the shipped profiles, JSON files) for backend, paths for export, run and compare.
 * Tab completes the longest prefix the candidates share; when several remain the status line
 * lists them. A node-name completion scans the program once per Tab (O(n)), as a search does. */
#include <dirent.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "ops.h"
#include "profile.h"
#include "ui.h"

/* ---- history */

void ui_history_add(ui *u, const char *line)
{
    if (!*line) return;
    if (u->n_history && !strcmp(u->history[u->n_history - 1], line)) return;
    if (u->n_history == UI_HISTORY) {
        free(u->history[0]);
        memmove(u->history, u->history + 1, sizeof *u->history * (UI_HISTORY - 1));
        u->n_history--;
    }
    u->history[u->n_history++] = ls_strdup(line);
}

void ui_history_free(ui *u)
{
    for (uint32_t i = 0; i < u->n_history; i++) free(u->history[i]);
    u->n_history = 0;
}

static void set_prompt(ui *u, const char *text)
{
    snprintf(u->prompt, sizeof u->prompt, "%s", text);
    u->prompt_len = strlen(u->prompt);
}

/* dir -1: an older line (↑), +1: a newer one (↓); past the newest, what was being typed. */
void ui_prompt_history(ui *u, int dir)
{
    if (!u->n_history) return;
    if (u->history_at < 0) { /* leaving what is typed for the history: keep it */
        if (dir > 0) return;
        snprintf(u->prompt_typed, sizeof u->prompt_typed, "%s", u->prompt);
        u->history_at = (int32_t)u->n_history;
    }
    int32_t at = u->history_at + dir;
    if (at < 0) at = 0;
    if (at >= (int32_t)u->n_history) {
        u->history_at = -1;
        set_prompt(u, u->prompt_typed);
        return;
    }
    u->history_at = at;
    set_prompt(u, u->history[at]);
}

/* ---- completion */

/* The candidates: how many, the longest prefix they share (kept as they come, so a program of a
 * million nodes costs one pass), and the first few for the status line. */
#define SHOWN 48
typedef struct cands {
    LS_VEC(const char *) v; /* the first SHOWN, interned or owned by `own` */
    LS_VEC(char *) own;
    uint32_t n;             /* all of them */
    const char *first;      /* the first, and how long a prefix every one shares with it */
    size_t common;
    const char *prefix;
    size_t plen;
    bool dirs; /* candidates are paths: a directory ends in '/', and takes no space after it */
} cands;

static void add(cands *c, const char *s)
{
    if (!s || strncmp(s, c->prefix, c->plen) != 0) return;
    for (uint32_t i = 0; i < c->v.n; i++) /* the same one twice (a name in two programs) */
        if (!strcmp(c->v.v[i], s)) return;
    if (!c->n) {
        c->first = s;
        c->common = strlen(s);
    } else {
        size_t k = 0;
        while (k < c->common && s[k] == c->first[k]) k++;
        c->common = k;
    }
    c->n++;
    if (c->v.n < SHOWN) ls_vec_push(&c->v, s);
}

static void add_own(cands *c, char *s)
{
    ls_vec_push(&c->own, s);
    add(c, s);
}

static void cands_free(cands *c)
{
    for (uint32_t i = 0; i < c->own.n; i++) free(c->own.v[i]);
    free(c->own.v);
    free(c->v.v);
}

/* This program's names, then its lowered modules' (goto finds a node in either). */
static void node_names(ui *u, cands *c)
{
    const ls_program *p = ui_scope_program(u, u->step);
    for (uint32_t i = 0; p && i < p->n_nodes; i++) add(c, p->nodes[i]->name);
    for (uint32_t s = 0; p && s < p->n_subs; s++)
        for (uint32_t i = 0; p->subs[s].program && i < p->subs[s].program->n_nodes; i++) add(c, p->subs[s].program->nodes[i]->name);
}

static void steps(ui *u, cands *c)
{
    for (uint32_t s = 0; s < u->h->n; s++) {
        const ls_step *st = &u->h->steps[s];
        add(c, ls_internf("%u", s));
        add(c, st->pass);
        if (st->detail) add(c, ls_internf("%s:%s", st->pass, st->detail));
    }
}

static void paths(cands *c)
{
    const char *slash = strrchr(c->prefix, '/');
    char dir[1024];
    if (slash) snprintf(dir, sizeof dir, "%.*s", (int)(slash - c->prefix + 1), c->prefix);
    else dir[0] = 0;
    DIR *d = opendir(dir[0] ? dir : ".");
    if (!d) return;
    struct dirent *e;
    while ((e = readdir(d))) {
        if (e->d_name[0] == '.' && (!slash || slash[1] != '.')) continue;
        char full[2048];
        bool is_dir = e->d_type == DT_DIR;
        snprintf(full, sizeof full, "%s%s%s", dir, e->d_name, is_dir ? "/" : "");
        add_own(c, ls_strdup(full));
    }
    closedir(d);
    c->dirs = true;
}

static void filters(ui *u, cands *c)
{
    add(c, "cpu");
    for (uint32_t t = 0; t < u->dc.tags.n; t++) add(c, u->dc.tags.tags[t]);
    const ls_program *p = ui_scope_program(u, u->step);
    for (uint32_t i = 0; p && i < p->n_nodes && c->v.n < 512; i++) add(c, ls_intern(ui_node_op(p, p->nodes[i])));
}

static void backends(cands *c)
{
    add(c, "bundled");
    uint32_t n;
    const char *const *shipped = ls_profile_shipped(&n);
    for (uint32_t i = 0; i < n; i++) add(c, shipped[i]);
    paths(c);
    c->dirs = true;
}

/* The commands' names: the first word of each usage ("q, quit" gives both). */
static void command_names(cands *c)
{
    uint32_t n;
    const ui_cmd_info *cmds = ui_commands(&n);
    for (uint32_t i = 0; i < n; i++) {
        const char *s = cmds[i].usage;
        while (*s) {
            size_t len = strcspn(s, " ,");
            add_own(c, ls_strndup(s, len));
            if (s[len] != ',') break;
            s += len + 1;
            while (*s == ' ') s++;
        }
    }
}

void ui_prompt_complete(ui *u)
{
    /* the word being typed, and the command before it */
    char *line = u->prompt;
    size_t len = u->prompt_len;
    size_t wstart = len;
    while (wstart && line[wstart - 1] != ' ') wstart--;
    char cmd[64] = {0};
    size_t cl = strcspn(line, " ");
    bool first = wstart == 0;
    if (!first) snprintf(cmd, sizeof cmd, "%.*s", (int)(cl < sizeof cmd ? cl : sizeof cmd - 1), line);
    char prefix[512];
    snprintf(prefix, sizeof prefix, "%s", line + wstart);
    cands c = {.prefix = prefix, .plen = strlen(prefix)};
    if (first) command_names(&c);
    else if (!strcmp(cmd, "goto") || !strcmp(cmd, "around")) node_names(u, &c);
    else if (!strcmp(cmd, "step")) steps(u, &c);
    else if (!strcmp(cmd, "compare")) {
        steps(u, &c);
        if (!strncmp(line + cl, " backend ", 9)) {
            c.v.n = c.n = 0;
            backends(&c);
        } else {
            add(&c, "backend");
            paths(&c);
        }
    } else if (!strcmp(cmd, "filter")) filters(u, &c);
    else if (!strcmp(cmd, "backend")) backends(&c);
    else if (!strcmp(cmd, "export") || !strcmp(cmd, "run") || !strcmp(cmd, "save-display")) paths(&c);
    else if (!strcmp(cmd, "diff")) {
        add(&c, "on");
        add(&c, "off");
    }
    if (!c.n) {
        snprintf(u->prompt_hint, sizeof u->prompt_hint, "no completion for '%s'", prefix);
        cands_free(&c);
        return;
    }
    size_t common = c.common;
    char done[sizeof u->prompt];
    snprintf(done, sizeof done, "%.*s%.*s%s", (int)wstart, line, (int)common, c.first,
             c.n == 1 && !(c.dirs && common && c.first[common - 1] == '/') ? " " : "");
    set_prompt(u, done);
    u->prompt_hint[0] = 0;
    if (c.n > 1) { /* what is left to choose from */
        ls_buf b = {0};
        ls_buf_printf(&b, "%u:", c.n);
        for (uint32_t i = 0; i < c.v.n && b.len < sizeof u->prompt_hint - 24; i++) ls_buf_printf(&b, " %s", c.v.v[i]);
        if (b.len >= sizeof u->prompt_hint - 24 || c.n > c.v.n) ls_buf_puts(&b, " …");
        snprintf(u->prompt_hint, sizeof u->prompt_hint, "%s", b.s);
        ls_buf_free(&b);
    }
    cands_free(&c);
}
