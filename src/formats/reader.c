/* ls_load: what kind of file is it? A folder (an unpacked .pt2), a zip (a .pt2 archive), an
 * exported-program JSON, or an ExecuTorch .pte. */
#include <errno.h>
#include <fcntl.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

#include "export.h"
#include "formats.h"

/* The ExecuTorch files that are not programs, by their identifiers (shared/reference/formats.md
 * §5; the schemas: extension/flat_tensor/serialize/flat_tensor.fbs FT01,
 * devtools/bundled_program/schema/bundled_program_schema.fbs BP08,
 * devtools/etdump/etdump_schema_flatcc.fbs ED00, size-prefixed so at byte 8). NULL: none of them. */
static const char *not_a_program(const unsigned char *head, size_t got)
{
    if (got >= 8 && memcmp(head + 4, "FT01", 4) == 0)
        return "an ExecuTorch external data file (.ptd, FlatTensor \"FT01\"): it holds a program's weights, not a "
               "program; open the .pte it belongs to, with --data FILE.ptd if it is not found beside it";
    if (got >= 12 && memcmp(head + 8, "ED00", 4) == 0)
        return "an ETDump (\"ED00\", the trace ExecuTorch's runtime writes of a run), not a program: give it to "
               "lowerscope run PROGRAM.pte --etdump FILE (or the ETRecord of the program)";
    return NULL;
}

static int load_file(const char *path, const ls_load_opts *opts, ls_program **out, ls_error *err);

int ls_load_check_data(const char *path, ls_error *err)
{
    if (!*path) return ls_fail(err, "--data: an empty path: give the .ptd file");
    struct stat st;
    const char *why = stat(path, &st) != 0       ? strerror(errno)
                      : !S_ISREG(st.st_mode)     ? ls_file_kind(st.st_mode)
                      : access(path, R_OK) != 0  ? strerror(errno)
                                                 : NULL;
    if (why) return ls_fail(err, "--data %s: cannot read it (%s)", path, why);
    /* a .ptd is a FlatTensor, "FT01" at byte 4 (extension/flat_tensor/serialize/flat_tensor.fbs):
     * anything else is refused before a word is said of the program */
    unsigned char head[8] = {0};
    if (ls_read_head(path, head, sizeof head) != sizeof head || memcmp(head + 4, "FT01", 4) != 0)
        return ls_fail(err, "--data %s: not an ExecuTorch data file (no \"FT01\" identifier at byte 4)", path);
    return 0;
}

/* --data names a .pte's external data; the other files carry their weights (or, a .bpte, the
 * program it embeds is read from its own bytes), so a --data given them would be ignored. */
static int refuse_data(const char *path, const ls_load_opts *opts, const char *what, ls_error *err)
{
    if (!opts || !opts->n_data) return 0;
    return ls_fail(err, "%s: --data %s: external data (.ptd) goes with a .pte; this is %s", path, opts->data[0], what);
}

int ls_load(const char *path, const ls_load_opts *opts, ls_program **out, ls_error *err)
{
    /* out of memory anywhere in the load names the file (the readers name the member) */
    const char *was = ls_reading(path); /* not interned: the first intern may be what fails */
    int rc = load_file(path, opts, out, err);
    ls_reading(was);
    return rc;
}

static int load_file(const char *path, const ls_load_opts *opts, ls_program **out, ls_error *err)
{
    *out = NULL;
    if (!*path) return ls_fail(err, "a program named by an empty string: give its path"); /* not "lowerscope: : ..." */
    struct stat st;
    if (stat(path, &st) != 0) return ls_fail(err, "%s: cannot open: %s", path, strerror(errno));
    /* before the open, which a FIFO would hold (`:compare FIFO` could not be quit) */
    if (ls_refuse_stream(path, st.st_mode, err) != 0) return -1;
    int rc;
    if (S_ISDIR(st.st_mode)) {
        if (refuse_data(path, opts, "an unpacked .pt2 folder, whose weights are in it", err) != 0) return -1;
        rc = ls_load_folder(path, opts, out, err);
    } else {
        unsigned char head[16] = {0};
        const char *what;
        int fd = open(path, O_RDONLY);
        if (fd < 0) return ls_fail(err, "%s: cannot open: %s", path, strerror(errno));
        ssize_t got = read(fd, head, sizeof head);
        close(fd);
        if (got <= 0) return ls_fail(err, "%s: empty file", path);
        size_t i = 0;
        if (got >= 3 && head[0] == 0xEF && head[1] == 0xBB && head[2] == 0xBF) i = 3; /* UTF-8 BOM */
        while (i < (size_t)got && (head[i] == ' ' || head[i] == '\n' || head[i] == '\r' || head[i] == '\t')) i++;
        if (got >= 4 && head[0] == 'P' && head[1] == 'K' && (head[2] == 3 || head[2] == 5)) {
            rc = refuse_data(path, opts, "a .pt2 archive, whose weights are in it", err) != 0 ? -1
                 : ls_load_archive(path, opts, out, err);
        } else if (got >= 8 && memcmp(head + 4, "BP08", 4) == 0) {
            rc = refuse_data(path, opts, "a bundled program (.bpte), whose program is read as it is embedded", err) != 0
                     ? -1
                     : ls_load_bpte(path, opts, out, err);
        } else if ((what = not_a_program(head, (size_t)got)) != NULL) {
            rc = ls_fail(err, "%s: %s", path, what);
        } else if (got >= 8 && memcmp(head + 4, "ET", 2) == 0) { /* ET12, or another version: its reader says */
            const char *method = opts ? opts->method ? opts->method : opts->model : NULL;
            rc = ls_load_pte_opts(path, method, opts ? opts->data : NULL, opts ? opts->n_data : 0, out, err);
        } else if (i < (size_t)got && (head[i] == '{' || head[i] == '[') ) {
            rc = refuse_data(path, opts, "an exported-program JSON", err) != 0 ? -1 : ls_load_json_file(path, opts, out, err);
        } else {
            /* the bytes the file has, up to 4 (a 1-byte file shows one) */
            char starts[48];
            int w = got < 4 ? snprintf(starts, sizeof starts, "it is %zd byte%s long:", got, got == 1 ? "" : "s")
                            : snprintf(starts, sizeof starts, "it starts with");
            for (ssize_t k = 0; k < got && k < 4; k++) w += snprintf(starts + w, sizeof starts - (size_t)w, " %02x", head[k]);
            size_t pl = strlen(path);
            if (pl > 4 && strcmp(path + pl - 4, ".pte") == 0)
                rc = ls_fail(err, "%s: not an ExecuTorch program: no \"ET12\" identifier at byte 4 (%s)", path, starts);
            else
                rc = ls_fail(err, "%s: not a .pt2 archive, an exported-program JSON or a .pte (%s)", path, starts);
        }
    }
    if (rc == 0) (*out)->path = ls_intern(path);
    return rc;
}

int ls_read_check_shape(const ls_tmeta *m, ls_error *err)
{
    uint64_t numel = 1;
    bool overflow = false;
    for (int d = 0; d < m->ndim; d++) {
        uint64_t s = m->sizes[d] < 0 ? 0 : (uint64_t)m->sizes[d];
        if (s && numel > UINT64_MAX / s) overflow = true;
        else numel *= s;
    }
    size_t es = ls_dtype_size(m->dtype) ? ls_dtype_size(m->dtype) : 1;
    if (!overflow && numel <= LS_READ_MAX_TENSOR_BYTES / es) return 0;
    char s[160];
    return ls_fail(err, "%s claims %s%.3g elements (%.3g bytes), more than the %.3g bytes lowerscope accepts",
                   ls_tmeta_str(m, s, sizeof s), overflow ? "over " : "", overflow ? 1.8e19 : (double)numel,
                   overflow ? 1.8e19 : (double)numel * (double)es, (double)LS_READ_MAX_TENSOR_BYTES);
}
