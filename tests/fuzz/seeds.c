/* Seeds for the fuzzers that no file in the repository or ../shared is (make fuzz runs it):
 * the .pte a sample exports to, and the delegate blobs inside samples and real .pte files,
 * each into OUT/<harness>/. Usage: fuzz_seeds OUT FILE... */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "bundled_blob.h"
#include "export.h"
#include "passes.h"
#include "pte.h"
#include "pte_file.h"
#include "reader.h"
#include "xnnpack_blob.h"

int main(int argc, char **argv);

static int n_written;

static void put(const char *out, const char *file, const char *what, unsigned k, const uint8_t *data, size_t size)
{
    const char *base = strrchr(file, '/') ? strrchr(file, '/') + 1 : file;
    const char *harness = ls_xnn_is_blob(data, size) ? "xnnpack_blob"
                          : size >= 4 && !memcmp(data, LS_BB_MAGIC, 4) ? "bundled_blob" : what;
    if (!strcmp(harness, "delegate")) return; /* a blob of a backend lowerscope has no reader for */
    char path[4096];
    snprintf(path, sizeof path, "%s/%s/%s_%u", out, harness, base, k);
    ls_error err;
    if (ls_write_file_atomic(path, data, size, &err) != 0) fprintf(stderr, "fuzz_seeds: %s\n", err.msg);
    else n_written++;
}

static void from_pte(const char *out, const char *file)
{
    ls_pte_file *f;
    ls_error err;
    if (ls_pte_file_open(file, NULL, 0, &f, &err) != 0) return;
    unsigned k = 0;
    for (uint32_t p = 0; p < f->pte.execution_plan.n; p++) {
        const ls_pte_plan *pl = &f->pte.execution_plan.v[p];
        for (uint32_t d = 0; d < pl->delegates.n; d++) {
            const uint8_t *data;
            size_t size;
            if (ls_pte_delegate_blob(&f->pte, &pl->delegates.v[d], &data, &size, &err) == 0)
                put(out, file, "delegate", k++, data, size);
        }
    }
    ls_pte_file_unref(f);
}

static void from_program(const char *out, const char *file)
{
    ls_program *p;
    ls_error err;
    if (ls_load(file, NULL, &p, &err) != 0) return;
    ls_pipeline_opts o;
    ls_pipeline_opts_init(&o);
    ls_history h;
    if (ls_pipeline_run(p, &o, &h, &err) == 0) {
        const ls_program *last = h.steps[h.n - 1].program;
        for (uint32_t i = 0; i < last->n_subs; i++)
            if (last->subs[i].processed)
                put(out, file, "delegate", i, last->subs[i].processed->data, last->subs[i].processed->size);
        const ls_pte *pte = ls_program_emitted(last, NULL);
        uint8_t *bytes;
        size_t size;
        if (pte && ls_pte_write(pte, &bytes, &size, &err) == 0) {
            put(out, file, "pte", 0, bytes, size);
            free(bytes);
        }
        ls_history_free(&h);
    }
    ls_pipeline_opts_free(&o);
    ls_program_unref(p);
}

int main(int argc, char **argv)
{
    if (argc < 2) {
        fprintf(stderr, "usage: fuzz_seeds OUT FILE...\n");
        return 2;
    }
    for (int i = 2; i < argc; i++) {
        size_t l = strlen(argv[i]);
        if (l > 4 && !strcmp(argv[i] + l - 4, ".pte")) from_pte(argv[1], argv[i]);
        else from_program(argv[1], argv[i]);
    }
    printf("fuzz_seeds: %d seeds\n", n_written);
    return 0;
}
