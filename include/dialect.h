/* The ExecuTorch dialect's spellings that its readers and writers share: which parameters an
 * op's out variant keeps and what its out arguments are called (torchgen's rules), c10's enum
 * codes beside torch.export's, and names made safe for a graph. */
#ifndef LS_DIALECT_H
#define LS_DIALECT_H

#include <stdint.h>

#include "ops.h"

/* The functional parameters an op's out variant keeps, in order (indices into op->schema.params).
 * torchgen drops the TensorOptions group (dtype, layout, device, pin_memory) from out variants of
 * ops that have one (full.out, _to_dim_order_copy.out, scalar_tensor.out): the out tensor gives
 * them. Returns the count. */
uint32_t ls_out_params(const ls_op *op, uint8_t keep[LS_MAX_PARAMS]);
/* How many out arguments the out variant takes: one per returned tensor, one Tensor[] for a list. */
uint32_t ls_out_count(const ls_op *op);
/* The name of out argument k: "out" for one, "out0", "out1", ... for several. Interned. */
const char *ls_out_name(const ls_op *op, uint32_t k);

/* Layout and MemoryFormat codes: c10's (what a .pte holds) and torch.export's (LS_ARG_LAYOUT,
 * LS_ARG_MEMFMT). */
int64_t ls_layout_from_c10(int64_t c10);
int64_t ls_layout_to_c10(int64_t code);
int64_t ls_memfmt_from_c10(int64_t c10);
int64_t ls_memfmt_to_c10(int64_t code);

/* A name usable as a node name: dots and other punctuation become underscores. Interned. */
const char *ls_sanitize_name(const char *prefix, const char *s);

#endif
