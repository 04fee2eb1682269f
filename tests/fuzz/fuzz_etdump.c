/* ExecuTorch ETDumps (.etdp, "ED00"): the verified reader, then every profile event placed on
 * a program as `run --etdump` places them: on two_delegates' emitted .pte by its instructions,
 * and on the same lowering's ETRecord by its debug handles and delegate map (both made once,
 * from samples/, at the first input; without the sample only the reader is fuzzed). */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "common.h"
#include "etdump.h"
#include "etrecord.h"
#include "fuzz.h"
#include "reader.h"

#define SAMPLE "samples/two_delegates.pt2"

static ls_program *targets[2]; /* the .pte's program, the ETRecord's */

static void make_targets(void)
{
    char dir[] = "/tmp/lowerscope-fuzz-etdump.XXXXXX";
    if (!mkdtemp(dir)) return;
    char pte_path[64], etr_path[64];
    snprintf(pte_path, sizeof pte_path, "%s/two.pte", dir);
    snprintf(etr_path, sizeof etr_path, "%s/two.etrecord", dir);
    uint8_t *bytes;
    size_t size;
    ls_error err;
    if (fuzz_lowered(SAMPLE, &bytes, &size, etr_path) == 0) {
        if (ls_write_file_atomic(pte_path, bytes, size, &err) == 0) ls_load(pte_path, NULL, &targets[0], &err);
        ls_load(etr_path, NULL, &targets[1], &err);
        free(bytes);
    } else {
        fprintf(stderr, "fuzz_etdump: %s does not lower here: fuzzing the reader only\n", SAMPLE);
    }
    unlink(pte_path);
    unlink(etr_path);
    rmdir(dir);
}

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
    static bool made;
    if (!made) {
        made = true;
        make_targets();
    }
    ls_etdump d;
    ls_error err;
    if (ls_etdump_read(data, size, "fuzz.etdp", &d, &err) != 0) return 0;
    volatile uint64_t ticks = 0; /* every event's time, as the profile takes it (wrapping: a sum, not a time) */
    for (uint32_t r = 0; r < d.n_runs; r++)
        for (uint32_t e = 0; e < d.runs[r].n_events; e++) ticks = ticks + (uint64_t)ls_etd_elapsed(&d.runs[r].events[e]);
    for (int k = 0; k < 2; k++) {
        const ls_program *mapped;
        ls_etd_index *x = targets[k] ? ls_etd_index_for(targets[k], &mapped, &err) : NULL;
        if (!x) continue;
        ls_etd_profile pr;
        ls_etd_profile_build(&d, mapped, x, 1e9, &pr);
        ls_etd_profile_free(&pr);
        ls_etd_index_free(x);
    }
    (void)ticks;
    ls_etdump_free(&d);
    return 0;
}
