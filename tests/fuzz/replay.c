/* Runs a fuzz harness's entry point over files, without libFuzzer: make check replays every
 * file of tests/corpus and of tests/fuzz/crashes/ through every harness under ASan+UBSan (built
 * with gcc), so what a fuzzer once found stays fixed. Arguments: files or folders (one level). */
#include <dirent.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>

#include "common.h"
#include "fuzz.h"

int main(int argc, char **argv);

static int replay_file(const char *path)
{
    uint8_t *data;
    size_t size;
    ls_error err;
    if (ls_read_file(path, (size_t)1 << 30, &data, &size, &err) != 0) {
        fprintf(stderr, "replay: %s\n", err.msg);
        return 1;
    }
    LLVMFuzzerTestOneInput(data, size);
    free(data);
    return 0;
}

int main(int argc, char **argv)
{
    int files = 0, bad = 0;
    for (int i = 1; i < argc; i++) {
        struct stat st;
        if (stat(argv[i], &st) != 0) continue;
        if (!S_ISDIR(st.st_mode)) {
            bad += replay_file(argv[i]);
            files++;
            continue;
        }
        DIR *d = opendir(argv[i]);
        struct dirent *e;
        while (d && (e = readdir(d))) {
            if (e->d_name[0] == '.') continue;
            char p[4096];
            snprintf(p, sizeof p, "%s/%s", argv[i], e->d_name);
            if (stat(p, &st) == 0 && S_ISREG(st.st_mode)) {
                bad += replay_file(p);
                files++;
            }
        }
        if (d) closedir(d);
    }
    printf("%s: %d file%s replayed\n", argv[0], files, files == 1 ? "" : "s");
    ls_intern_release_all();
    return bad ? 1 : 0;
}
