/* Scripted mode, like tig's TIG_SCRIPT: a file names keys and :commands, one line each; the
 * UI runs them against an off-screen terminal (newterm on /dev/null) of a fixed size and
 * :save-display writes the screen as text. Lines:
 *     # a comment
 *     j                      keys: characters and <Name>s: <Enter> <Esc> <Tab> <S-Tab> <BS>
 *     /c_copy<Enter>         <Up> <Down> <Left> <Right> <PgUp> <PgDn> <Home> <End> <Space>
 *     <C-d>                  <lt> (a literal <), <Colon> (the : key), <C-x> (control keys), mouse events,
 *     g<Timeout>             <Timeout> (no key within the input timeout: a pending g acts alone)
 *     <Click:ROW,COL>        <Click:ROW,COL> <WheelUp:ROW,COL> <WheelDown:ROW,COL>
 *     :save-display a.screen a command, as typed after `:`
 * The script ends the UI when it runs out. Relative paths of save-display are taken from
 * LOWERSCOPE_DUMP_DIR when it is set.
 *
 * A dump line is two marks, a space and the row's text: the marks are the tag colour drawn
 * in the row's left column and main column (the tag's letter, `.` for none), so tests see
 * colours as well as text. */
#include <limits.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>
#include <wchar.h>

#include "ui.h"

typedef struct ev {
    int key; /* >= 0 a key, UI_KEY_CMD a command */
    char *cmd;
    char *label; /* the event as the script spells it ("<Right>", ":step 0"), for the key times */
    MEVENT mouse;
} ev;

struct ui_script {
    ev *v;
    uint32_t n, next;
    FILE *times; /* LOWERSCOPE_KEY_TIMES: one line per event, how long it took to act and redraw */
};

static int parse_mouse(const char **s, MEVENT *m)
{
    static const struct {
        const char *name;
        mmask_t mask;
    } kinds[] = {{"<Click:", BUTTON1_CLICKED}, {"<WheelUp:", BUTTON4_PRESSED}, {"<WheelDown:", BUTTON5_PRESSED}};
    for (size_t i = 0; i < sizeof kinds / sizeof kinds[0]; i++) {
        size_t l = strlen(kinds[i].name);
        int y, x, used = 0;
        if (strncmp(*s, kinds[i].name, l) == 0 && sscanf(*s + l, "%d,%d>%n", &y, &x, &used) == 2 && used > 0) {
            memset(m, 0, sizeof *m);
            m->y = y;
            m->x = x;
            m->bstate = kinds[i].mask;
            *s += l + (size_t)used;
            return 1;
        }
    }
    return 0;
}

int ui_script_open(ui *u, const char *path, ls_error *err)
{
    uint8_t *data;
    size_t size;
    if (ls_read_file(path, 1 << 20, &data, &size, err) != 0) return -1;
    ui_script *sc = ls_calloc(1, sizeof *sc);
    char *text = ls_strndup((const char *)data, size);
    free(data);
    int lineno = 0;
    for (char *line = text, *next; line; line = next) {
        next = strchr(line, '\n');
        if (next) *next++ = 0;
        lineno++;
        size_t len = strlen(line);
        while (len && (line[len - 1] == '\r' || line[len - 1] == ' ')) line[--len] = 0;
        while (*line == ' ') line++;
        if (!*line || *line == '#') continue;
        if (*line == ':') {
            sc->v = ls_realloc(sc->v, sizeof *sc->v * (sc->n + 1));
            sc->v[sc->n++] = (ev){.key = UI_KEY_CMD, .cmd = ls_strdup(line + 1), .label = ls_strdup(line)};
            continue;
        }
        const char *s = line;
        while (*s) {
            ev e = {0};
            const char *start = s;
            if (parse_mouse(&s, &e.mouse)) {
                e.key = UI_KEY_MOUSE;
            } else {
                e.key = ui_key_parse(&s);
                if (e.key == UI_KEY_NONE) {
                    ls_fail(err, "%s: line %d: unknown key name at '%s'", path, lineno, s);
                    free(text);
                    u->script = sc;
                    ui_script_free(u);
                    return -1;
                }
            }
            e.label = ls_strndup(start, (size_t)(s - start));
            sc->v = ls_realloc(sc->v, sizeof *sc->v * (sc->n + 1));
            sc->v[sc->n++] = e;
        }
    }
    free(text);
    u->script = sc;
    const char *times = getenv("LOWERSCOPE_KEY_TIMES");
    if (times && *times && !(sc->times = fopen(times, "w"))) {
        ls_fail(err, "LOWERSCOPE_KEY_TIMES=%s: cannot write it", times);
        ui_script_free(u);
        return -1;
    }
    return 0;
}

/* The time the last event took, from reading it to the screen drawn after it (the benches read
 * these lines: label, milliseconds, the step and scope depth it ended on, and the milliseconds
 * of CPU this thread spent: on a busy machine the wall clock also counts the time others ran). */
void ui_script_timed(ui *u, double seconds, double cpu_seconds)
{
    ui_script *sc = u->script;
    if (!sc || !sc->times || !sc->next) return;
    fprintf(sc->times, "%s\t%.3f\t%u\t%d\t%.3f\n", sc->v[sc->next - 1].label, seconds * 1e3, u->step, u->depth,
            cpu_seconds * 1e3);
    fflush(sc->times);
}

void ui_script_note(ui *u, const char *label, double seconds, double cpu_seconds)
{
    if (u->script && u->script->times) {
        fprintf(u->script->times, "%s\t%.3f\t%u\t%d\t%.3f\n", label, seconds * 1e3, u->step, u->depth, cpu_seconds * 1e3);
        fflush(u->script->times);
    }
}

double ui_thread_cpu(void)
{
    struct timespec ts;
    clock_gettime(CLOCK_THREAD_CPUTIME_ID, &ts);
    return (double)ts.tv_sec + (double)ts.tv_nsec * 1e-9;
}

void ui_script_free(ui *u)
{
    if (!u->script) return;
    for (uint32_t i = 0; i < u->script->n; i++) {
        free(u->script->v[i].cmd);
        free(u->script->v[i].label);
    }
    if (u->script->times) fclose(u->script->times);
    free(u->script->v);
    free(u->script);
    u->script = NULL;
}

int ui_script_next(ui *u, char *cmd, size_t cap)
{
    ui_script *sc = u->script;
    if (sc->next >= sc->n) return UI_KEY_NONE;
    ev *e = &sc->v[sc->next++];
    if (e->key == UI_KEY_CMD) {
        snprintf(cmd, cap, "%s", e->cmd);
        return UI_KEY_CMD;
    }
    if (e->key == UI_KEY_MOUSE) u->mouse = e->mouse;
    return e->key;
}

/* The first tag colour drawn in columns [x0, x1) of row y, as a mark. */
static char region_mark(ui *u, int y, int x0, int x1)
{
    for (int x = x0; x < x1 && x < u->cols; x++) {
        cchar_t cc;
        if (mvin_wch(y, x, &cc) == ERR) continue;
        wchar_t wch[CCHARW_MAX + 1];
        attr_t attrs;
        short pair;
        getcchar(&cc, wch, &attrs, &pair, NULL);
        int tag = ui_tag_of_pair(u, pair);
        if (tag >= 0) return ui_tag_letter(tag);
    }
    return '.';
}

int ui_save_display(ui *u, const char *path, ls_error *err)
{
    if (!*path) return ls_fail(err, "save-display FILE: which file?");
    char full[4096];
    const char *dir = getenv("LOWERSCOPE_DUMP_DIR");
    if (path[0] != '/' && dir && *dir) snprintf(full, sizeof full, "%s/%s", dir, path);
    else snprintf(full, sizeof full, "%s", path);
    ui_draw(u);
    ls_buf b = {0};
    bool split = u->screen == UI_S_MAIN && !u->too_small && u->left_w > 0;
    for (int y = 0; y < u->rows; y++) {
        char marks[2] = {'.', '.'};
        if (split && y > 0 && y < u->rows - 1) {
            marks[0] = region_mark(u, y, 0, u->left_w - 1);
            marks[1] = region_mark(u, y, u->left_w, u->cols);
        } else {
            marks[1] = region_mark(u, y, 0, u->cols);
        }
        ls_buf_putc(&b, marks[0]);
        ls_buf_putc(&b, marks[1]);
        ls_buf_putc(&b, ' ');
        size_t start = b.len;
        for (int x = 0; x < u->cols; x++) {
            cchar_t cc;
            if (mvin_wch(y, x, &cc) == ERR) {
                ls_buf_putc(&b, ' ');
                continue;
            }
            wchar_t wch[CCHARW_MAX + 1] = {0};
            attr_t attrs;
            short pair;
            getcchar(&cc, wch, &attrs, &pair, NULL);
            wchar_t c = wch[0] ? wch[0] : L' ';
            char mb[MB_LEN_MAX + 1];
            mbstate_t st = {0};
            size_t n = wcrtomb(mb, c, &st);
            if (n == (size_t)-1) {
                mb[0] = '?';
                n = 1;
            }
            ls_buf_putn(&b, mb, n);
            if (wcwidth(c) == 2) x++; /* the next cell continues this character */
        }
        while (b.len >= start && b.s[b.len - 1] == ' ') b.len--; /* the separator too when the row is empty */
        ls_buf_putc(&b, '\n');
    }
    int rc = ls_write_file_atomic(full, b.s, b.len, err);
    ls_buf_free(&b);
    return rc;
}
