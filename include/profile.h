/* Backend profiles: what a backend takes, as data. The partitioner asks a profile which ops
 * (and which dtypes of their tensors) a backend supports, whether it keeps state (mutable
 * buffers move into its delegates) and whether it folds constant boolean masks. One profile
 * is built in ("bundled", the bundled delegate); others load from JSON files, documented in
 * docs/backends.md. */
#ifndef LS_PROFILE_H
#define LS_PROFILE_H

#include <stdbool.h>
#include <stdint.h>

#include "common.h"
#include "dtype.h"
#include "ops.h"

#define LS_DTYPE_BIT(d) (1u << (unsigned)(d))

typedef struct ls_profile {
    const char *name;       /* "bundled" (interned) */
    const char *backend_id; /* "BundledBackend" (interned) */
    const char *tag_prefix; /* "tag": tags are tag0, tag1, ... as CapabilityBasedPartitioner numbers them */
    const char *path;       /* the JSON file it came from; NULL when built in */
    bool stateful;          /* tag_mutated_buffer: mutable buffers become the delegate's state */
    bool fold_masks;        /* constant boolean masks of index.Tensor are folded to positions */
    bool take_constants;    /* tag_constant_data: constants used by a delegate move into it */
    bool single_partition;  /* one partition only; nodes that would form a cycle stay on the CPU */
    /* per operator: the dtypes its tensors may have (LS_DTYPE_BIT mask); 0 = not supported */
    uint32_t op_dtypes[LS_OP_COUNT];
} ls_profile;

/* The built-in profile of the bundled delegate (static, never freed). */
const ls_profile *ls_profile_bundled(void);
/* "bundled" (the built-in one) or a JSON file. Errors name the file and the place. */
int ls_profile_load(const char *name_or_path, ls_profile **out, ls_error *err);
/* Parses a profile from JSON text; `where` names it in messages. */
int ls_profile_parse(const char *where, const char *json, size_t len, ls_profile **out, ls_error *err);
void ls_profile_free(ls_profile *p); /* no-op for the built-in profile */

/* Whether the profile supports op at all, and the allowed dtype mask. */
static inline uint32_t ls_profile_dtypes(const ls_profile *p, const ls_op *op)
{
    return op ? p->op_dtypes[op->id] : 0;
}

/* "float32, int64, bool" for a mask, into buf. */
char *ls_dtype_mask_str(uint32_t mask, char *buf, size_t cap);

#endif
