/* ExecuTorch ETRecords (a zip with ETRECORD_V0): the reader, the recorded steps through
 * everything fuzz_program does (the pipeline shows them as the file's history: ids matched,
 * diffs, verify; the last step that can run is run), the delegate table of its maps, and an
 * ETDump of every instruction id and delegate debug id the maps could name, placed on its Edge
 * program through the maps as `run --etdump` places one. Even-sized inputs have their members'
 * CRCs made right first (fuzz_zip_seal), so mutations inside the JSON get past the CRC check. */
#include <stdlib.h>
#include <string.h>

#include "etrecord.h"
#include "fuzz.h"

/* A dump with an event per instruction 0..N_INSTR-1 and, on each, a delegate's own events by int
 * and by string id: what a run of the program the maps describe would record. */
#define N_INSTR 12

static const ls_etdump *probe_dump(void)
{
    static ls_etd_event ev[1 + 3 * N_INSTR];
    static ls_etd_run run;
    static ls_etdump d;
    if (d.n_runs) return &d;
    uint32_t n = 0;
    ev[n++] = (ls_etd_event){.kind = LS_ETD_PROFILE, .name = ls_intern("Method::execute"), .chain_index = -1,
                             .instruction_id = -1, .delegate_debug_id_int = -1, .start_time = 0, .end_time = 5000};
    for (int32_t i = 0; i < N_INSTR; i++) {
        ev[n++] = (ls_etd_event){.kind = LS_ETD_PROFILE, .name = ls_intern(i % 2 ? "DELEGATE_CALL" : "OPERATOR_CALL"),
                                 .instruction_id = i, .delegate_debug_id_int = -1, .start_time = 10, .end_time = 20 + i};
        ev[n++] = (ls_etd_event){.kind = LS_ETD_PROFILE, .instruction_id = i, .delegate_debug_id_int = i % 4,
                                 .start_time = 30, .end_time = 31};
        ev[n++] = (ls_etd_event){.kind = LS_ETD_PROFILE, .instruction_id = i, .delegate_debug_id_int = -1,
                                 .delegate_debug_id_str = ls_intern(i % 2 ? "1" : "x"), .start_time = 40, .end_time = 41};
    }
    run = (ls_etd_run){.name = ls_intern("Execute"), .bundled_input_index = -1, .events = ev, .n_events = n};
    d = (ls_etdump){.name = "probe.etdp", .runs = &run, .n_runs = 1};
    return &d;
}

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
    if (size < 4 || data[0] != 'P' || data[1] != 'K') return 0; /* other bytes reach other readers */
    uint8_t *sealed = size & 1 ? NULL : fuzz_zip_seal(data, size); /* odd sizes meet the CRC check */
    ls_program *p;
    ls_error err;
    int rc = ls_etrecord_read(sealed ? sealed : data, size, "fuzz.etrecord", &p, &err);
    free(sealed);
    if (rc != 0) return 0;
    fuzz_program(p);
    ls_etr_delegates ds;
    if (ls_etr_delegates_of(p, &ds, &err) == 0) ls_etr_delegates_free(&ds);
    const ls_program *mapped;
    ls_etd_index *x = ls_etd_index_for(p, &mapped, &err);
    if (x) {
        ls_etd_profile pr;
        ls_etd_profile_build(probe_dump(), mapped, x, 1e9, &pr);
        ls_etd_profile_free(&pr);
        ls_etd_index_free(x);
    }
    ls_program_unref(p);
    return 0;
}
