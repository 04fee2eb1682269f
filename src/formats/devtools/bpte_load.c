/* A bundled program opened as what it carries: its embedded .pte, the method its first test
 * suite exercises (or the one asked for). The test cases themselves are run by bpte_run.h. */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "bpte.h"
#include "export.h"
#include "../formats.h"
#include "pte.h"
#include "pte_file.h"

int ls_bpte_program(const ls_bpte *b, const char *method, ls_program **out, ls_error *err)
{
    *out = NULL;
    const char *where = ls_internf("%s: program", b->name);
    ls_pte pte;
    if (ls_pte_read_bytes(b->program, b->program_size, where, &pte, err) != 0) return -1;
    /* held as a .pte is (pte_file.h): its own step 0, every method reachable */
    ls_pte_file *f = ls_pte_file_adopt(&pte, where);
    int rc = ls_pte_file_method(f, method, out, err);
    ls_pte_file_unref(f);
    return rc;
}

int ls_load_bpte(const char *path, const ls_load_opts *opts, ls_program **out, ls_error *err)
{
    *out = NULL;
    ls_bpte b;
    if (ls_bpte_read_file(path, &b, err) != 0) {
        /* "PATH: PLACE: what" from the reader, said as what the file is */
        size_t n = strlen(path);
        const char *rest = strncmp(err->msg, path, n) == 0 && err->msg[n] == ':' ? err->msg + n + 2 : err->msg;
        char inner[LS_ERR_MAX];
        snprintf(inner, sizeof inner, "%s", rest);
        return ls_fail(err, "%s: an ExecuTorch bundled program (.bpte, \"BP08\") that does not read: %s", path, inner);
    }
    const char *method = opts ? opts->method ? opts->method : opts->model : NULL;
    if (!method && b.n_suites && b.suites[0].method_name) method = b.suites[0].method_name;
    int rc = ls_bpte_program(&b, method, out, err);
    ls_bpte_free(&b);
    return rc;
}
