/* The runtime's load checks for the commands that read a .pte (check_cli.h). */
#include "check_cli.h"

#include "bpte.h"

#include <string.h>

bool cli_is_pte(const char *path)
{
    unsigned char head[8] = {0};
    return ls_read_head(path, head, sizeof head) == sizeof head && head[4] == 'E' && head[5] == 'T';
}

bool cli_is_bpte(const char *path)
{
    return ls_bpte_is_file(path);
}

static int runtime_check(const char *path, ls_pte_check_report *r, ls_error *err)
{
    ls_pte pte;
    if (ls_bpte_is_file(path)) {
        ls_bpte b;
        if (ls_bpte_read_file(path, &b, err) != 0) return -1;
        int rc = ls_pte_read_bytes_unchecked(b.program, b.program_size, ls_internf("%s: program", path), &pte, err);
        ls_bpte_free(&b);
        if (rc != 0) return -1;
    } else if (ls_pte_read_file_unchecked(path, &pte, err) != 0) {
        return -1;
    }
    ls_pte_runtime_check(&pte, r);
    ls_pte_free(&pte);
    return 0;
}

int cli_runtime_check(const char *path, ls_pte_check_report *r, ls_error *err)
{
    memset(r, 0, sizeof *r);
    const char *was = ls_reading(path); /* out of memory while the file is read names it */
    int rc = runtime_check(path, r, err);
    ls_reading(was);
    return rc;
}
