/* The `:` command line's history (↑/↓ go through the lines run before, newest first) and Tab
 * completion: the command's name, then what it takes — node names for goto and around, steps
 * (numbers, passes, pass:backend) for step and compare, tags, cpu and ops for filter, backends
 * (bundled, the shipped profiles, JSON files) for backend, paths for export, run and compare.
 * Tab completes the longest prefix the candidates share; when several remain the status line
 * lists them. A node-name completion scans the program once per Tab, as a search does: in
 * slices between keys (ui_complete_step), so a million names keep the keys instant; a key
 * typed meanwhile drops it. */
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

/* A node-name completion under way: this program's names, then its lowered modules' (goto
 * finds a node in either), from where the last slice stopped. */
struct ui_completion {
    cands c;
    char prefix[512];
    char line[sizeof ((ui *)0)->prompt]; /* the line as Tab found it, and where its word starts */
    size_t wstart;
    const ls_program *p;
    uint32_t sub, node; /* sub 0: the program itself; s + 1: its module s */
};

/* Scans until `end` (ls_now) or `most` names; true when every name has been read. */
static bool node_names(struct ui_completion *j, double end, uint32_t most)
{
    const ls_program *p = j->p;
    uint32_t k = 0;
    while (p && j->sub <= p->n_subs) {
        const ls_program *q = j->sub ? p->subs[j->sub - 1].program : p;
        for (; q && j->node < q->n_nodes; k++, j->node++) {
            if (k == most || ((k & 4095) == 4095 && ls_now() > end)) return false;
            add(&j->c, q->nodes[j->node]->name);
        }
        j->sub++;
        j->node = 0;
    }
    return true;
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

static void methods(ui *u, cands *c)
{
    const char *const *names;
    uint32_t n = ui_core_methods(u->h, &names);
    for (uint32_t i = 0; i < n; i++) add(c, names[i]);
}

/* The entries of the folder the prefix names; with ext, only folders and files ending in it. */
static void paths_ending(cands *c, const char *ext)
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
        size_t nl = strlen(e->d_name), el = ext ? strlen(ext) : 0;
        if (ext && !is_dir && (nl < el || strcmp(e->d_name + nl - el, ext) != 0)) continue;
        snprintf(full, sizeof full, "%s%s%s", dir, e->d_name, is_dir ? "/" : "");
        add_own(c, ls_strdup(full));
    }
    closedir(d);
    c->dirs = true;
}

static void paths(cands *c)
{
    paths_ending(c, NULL);
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
    paths_ending(c, ".json"); /* a profile file (or a folder holding one) */
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

static void apply(ui *u, cands *c, const char *line, size_t wstart, const char *prefix);

bool ui_complete_pending(const ui *u)
{
    return u->completion != NULL;
}

void ui_complete_cancel(ui *u)
{
    if (!u->completion) return;
    cands_free(&u->completion->c);
    free(u->completion);
    u->completion = NULL;
}

/* `most`: names a slice reads at most (UINT32_MAX: as many as `seconds` allow) */
static bool complete_slice(ui *u, double seconds, uint32_t most)
{
    struct ui_completion *j = u->completion;
    if (!j) return false;
    if (u->prompt_kind != ':') { /* the prompt closed some other way: nothing to complete */
        ui_complete_cancel(u);
        return false;
    }
    if (!node_names(j, ls_now() + seconds, most)) {
        snprintf(u->prompt_hint, sizeof u->prompt_hint, "completing '%.200s': %u so far…", j->prefix, j->c.n);
        return true;
    }
    u->completion = NULL;
    apply(u, &j->c, j->line, j->wstart, j->prefix);
    free(j);
    return false;
}

bool ui_complete_step(ui *u, double seconds)
{
    return complete_slice(u, seconds, UINT32_MAX);
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
    ui_complete_cancel(u);
    if (!first && (!strcmp(cmd, "goto") || !strcmp(cmd, "around"))) {
        struct ui_completion *j = ls_calloc(1, sizeof *j);
        snprintf(j->prefix, sizeof j->prefix, "%s", prefix);
        snprintf(j->line, sizeof j->line, "%.*s", (int)len, line);
        j->wstart = wstart;
        j->c = (cands){.prefix = j->prefix, .plen = strlen(j->prefix)};
        j->p = ui_scope_program(u, u->step);
        u->completion = j;
        complete_slice(u, 0.004, 1u << 16); /* a program of up to 65536 names is done at once */
        return;
    }
    cands c = {.prefix = prefix, .plen = strlen(prefix)};
    if (first) command_names(&c);
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
    else if (!strcmp(cmd, "method")) methods(u, &c);
    else if (!strcmp(cmd, "backend")) backends(&c);
    else if (!strcmp(cmd, "export") || !strcmp(cmd, "run") || !strcmp(cmd, "save-display")) paths(&c);
    else if (!strcmp(cmd, "diff")) {
        add(&c, "on");
        add(&c, "off");
    }
    apply(u, &c, line, wstart, prefix);
}

/* The line with the word completed as far as the candidates agree; the rest listed. */
static void apply(ui *u, cands *cp, const char *line, size_t wstart, const char *prefix)
{
    cands c = *cp;
    if (!c.n) {
        snprintf(u->prompt_hint, sizeof u->prompt_hint, "no completion for '%.200s'", prefix);
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
