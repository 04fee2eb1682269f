/* Backend profiles (docs/backends.md): the parser, then the profile as the backend of a lowering
 * round over a small generated program (partition, fold_masks, duplicate_constants, to_backend,
 * to_executorch), and a run of what that made. */
#include <stdlib.h>

#include "fuzz.h"
#include "gen_program.h"
#include "passes.h"
#include "profile.h"

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
    static ls_program *prog;
    ls_error err;
    if (!prog) {
        ls_gen_opts o = ls_gen_defaults(40);
        o.constants = 4;
        o.shared_fraction = 0.5;
        o.share_partitions = 2;
        o.partitions = 3;
        o.cpu_boundaries = true;
        o.with_data = true;
        prog = ls_gen_program(&o, &err);
        if (!prog) abort();
    }
    ls_profile *prof;
    if (ls_profile_parse("fuzz.json", (const char *)data, size, &prof, &err) != 0) return 0;
    ls_pipeline_opts o;
    ls_pipeline_opts_init(&o);
    o.backends[o.n_backends++] = prof; /* freed with the options */
    ls_history h;
    if (ls_pipeline_run(prog, &o, &h, &err) == 0) {
        int last = (int)h.n - 1;
        while (last > 0 && h.steps[last].error) last--;
        if (last > 0) fuzz_run(h.steps[last].program);
        ls_history_free(&h);
    }
    ls_pipeline_opts_free(&o);
    return 0;
}
