/* The runtime's load checks for the commands that read a .pte (check_cli.h). */
#include "check_cli.h"

#include <fcntl.h>
#include <string.h>
#include <unistd.h>

bool cli_is_pte(const char *path)
{
    unsigned char head[8] = {0};
    int fd = open(path, O_RDONLY);
    if (fd < 0) return false;
    ssize_t got = read(fd, head, sizeof head);
    close(fd);
    return got == 8 && head[4] == 'E' && head[5] == 'T';
}

int cli_runtime_check(const char *path, ls_pte_check_report *r, ls_error *err)
{
    memset(r, 0, sizeof *r);
    ls_pte pte;
    if (ls_pte_read_file_unchecked(path, &pte, err) != 0) return -1;
    ls_pte_runtime_check(&pte, r);
    ls_pte_free(&pte);
    return 0;
}
