/* The graph signature looked up by name: which input spec a placeholder has, where its data
 * lives, and which buffers a mutation output writes. Built once per program in O(n) (hash maps
 * over the specs, the state dict and the constants), so a pass or a writer asks per node in
 * O(1) instead of scanning the specs. */
#ifndef LS_SIGNATURE_H
#define LS_SIGNATURE_H

#include <stdbool.h>

#include "program.h"
#include "ptrmap.h"

typedef struct ls_sig {
    ls_ptrmap spec_of;        /* placeholder name → input spec index */
    ls_ptrmap mutated_target; /* buffer / parameter target written by a mutation output → output index */
    ls_ptrmap mutation_node;  /* node name named by a BUFFER_MUTATION / PARAMETER_MUTATION output → output index */
    ls_ptrmap state_ix;       /* state dict target → index */
    ls_ptrmap const_ix;       /* constants target → index */
} ls_sig;

void ls_sig_build(ls_sig *s, const ls_program *p);
void ls_sig_free(ls_sig *s);
/* The input spec of a placeholder, or NULL. */
const ls_input_spec *ls_sig_spec(const ls_sig *s, const ls_program *p, const ls_node *ph);
/* Where the spec's data lives, or NULL. */
ls_named_tensor *ls_sig_data(const ls_sig *s, const ls_program *p, const ls_input_spec *spec);
/* A buffer (or parameter) whose target a mutation output writes. */
bool ls_sig_is_mutated(const ls_sig *s, const ls_input_spec *spec);

#endif
