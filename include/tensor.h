/* Tensors: metadata (dtype, shape, dim order) and reference-counted contiguous data.
 * Parameters, buffers and constants are shared between program versions by reference, never
 * copied without need, and identified by an XXH3-64 hash of their content. */
#ifndef LS_TENSOR_H
#define LS_TENSOR_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#include "common.h"
#include "dtype.h"

#define LS_MAX_DIMS 8

/* What a node's `val` or a placeholder says about a tensor, without data.
 * sym[i] names a symbolic size ("s0", "s0 + 1") when the dimension is dynamic; sizes[i] then
 * holds the hint (or -1 when there is none). dim_order is the memory order, outer to inner
 * (0,1,...,n-1 when contiguous), as ExecuTorch stores it instead of strides. */
typedef struct ls_tmeta {
    ls_dtype dtype;
    uint8_t ndim;
    bool requires_grad;
    uint8_t dim_order[LS_MAX_DIMS];
    int64_t sizes[LS_MAX_DIMS];
    const char *sym[LS_MAX_DIMS]; /* interned, NULL for static dims */
} ls_tmeta;

void ls_tmeta_init(ls_tmeta *m, ls_dtype dtype, int ndim, const int64_t *sizes);
int64_t ls_tmeta_numel(const ls_tmeta *m); /* -1 when a dim is symbolic without hint */
/* Its bytes (numel x the dtype's size); 0 when the element count is unknown or overflows. */
uint64_t ls_tmeta_nbytes(const ls_tmeta *m);
bool ls_tmeta_is_dynamic(const ls_tmeta *m);
bool ls_tmeta_equal(const ls_tmeta *a, const ls_tmeta *b);
/* Whether a tensor of metadata `have` (or a tensor, ls_tensor_fits) is one `want` describes: the same dtype
 * (any when want's is unknown), the same rank, and the same size in every dimension want
 * knows (symbolic and negative sizes match anything), and for a bounded want (a .pte's dynamic
 * tensor) no more elements than its bound. One rule for the runtime, the bundled delegate and
 * the run command. */
bool ls_tmeta_fits(const ls_tmeta *want, const ls_tmeta *have);
/* A .pte's DYNAMIC_BOUND or DYNAMIC_UNBOUND tensor, whose dims pte_load marks "<=N": the most
 * elements ExecuTorch resizes it to (its serialized numel: TensorImpl::internal_resize_contiguous,
 * "Attempted to resize a bounded tensor with a maximum capacity of %zu elements to %zu
 * elements."; any shape of the same rank within it). -1 for other metadata. */
int64_t ls_tmeta_numel_bound(const ls_tmeta *m);
/* "float32[4, 5]", "bool[]", "float32[s0, 8]" into buf; returns buf. */
char *ls_tmeta_str(const ls_tmeta *m, char *buf, size_t cap);
/* The one copy of the array ms[0..count) (count >= 1), kept with the interned strings
 * (ls_intern_record) and never freed: equal metadata gives the same pointer, whatever the
 * padding of the tmeta it came from. Thread-safe. */
const ls_tmeta *ls_tmeta_intern(const ls_tmeta *ms, uint16_t count);
/* Checks that the element count and byte size fit (no overflow, below limit_bytes). */
int ls_tmeta_check_size(const ls_tmeta *m, uint64_t limit_bytes, uint64_t *nbytes, ls_error *err);

/* A tensor with data. Always contiguous in row-major order (loaders convert strided data once).
 * data points into `owner`, a reference-counted blob (its own allocation, a file read into
 * memory, a .pte segment), so reshapes and constants share bytes without copying. */
typedef struct ls_tensor {
    uint32_t refs;
    ls_dtype dtype;
    uint8_t ndim;
    int64_t sizes[LS_MAX_DIMS];
    int64_t numel;
    size_t nbytes;
    void *data;
    struct ls_blob *owner; /* holds data; never NULL */
    uint64_t hash;         /* XXH3-64 of dtype, sizes and bytes; valid when hash_valid */
    bool hash_valid;
} ls_tensor;
bool ls_tensor_fits(const ls_tmeta *want, const ls_tensor *t); /* ls_tmeta_fits for a tensor */

/* Reference-counted bytes: a file read into memory, a .pte segment, a delegate blob. */
typedef struct ls_blob {
    uint32_t refs;
    uint8_t *data;
    size_t size;
    void *map;      /* a mapping data lies in (ls_blob_mapped), unmapped with the blob; NULL: data is malloc'd */
    size_t map_len;
} ls_blob;

ls_blob *ls_blob_new(size_t size); /* zero-filled, 64-byte aligned; NULL if refused */
ls_blob *ls_blob_wrap(uint8_t *data, size_t size); /* takes ownership of malloc'd data (freed with free) */
/* Takes ownership of the mapping [map, map + map_len) that data lies in (munmap'd with the blob). */
ls_blob *ls_blob_mapped(void *map, size_t map_len, uint8_t *data, size_t size);
ls_blob *ls_blob_ref(ls_blob *b);
void ls_blob_unref(ls_blob *b);

/* New zero-filled tensor; NULL (with err) when the size overflows or memory is refused. */
ls_tensor *ls_tensor_new(ls_dtype dtype, int ndim, const int64_t *sizes, ls_error *err);
/* Same, but for code paths whose sizes are already checked: exits on failure. */
ls_tensor *ls_tensor_alloc(ls_dtype dtype, int ndim, const int64_t *sizes);
ls_tensor *ls_tensor_scalar_f64(ls_dtype dtype, double v); /* 0-dim */
/* A tensor viewing bytes inside a blob (no copy), or a copy of them when they are not aligned to
 * the element size. NULL when the shape does not fit in the blob (or has more than LS_MAX_DIMS
 * dimensions). */
ls_tensor *ls_tensor_from_blob(ls_blob *blob, size_t offset, ls_dtype dtype, int ndim, const int64_t *sizes);
/* Copies `strides`-laid-out elements starting at src into a new contiguous tensor. */
ls_tensor *ls_tensor_from_strided(const void *src, ls_dtype dtype, int ndim, const int64_t *sizes,
                                  const int64_t *strides);
ls_tensor *ls_tensor_ref(ls_tensor *t);
void ls_tensor_unref(ls_tensor *t);
ls_tensor *ls_tensor_clone(const ls_tensor *t);
/* Same data, other shape (numel must match): shares the data by reference. */
ls_tensor *ls_tensor_reshape(ls_tensor *t, int ndim, const int64_t *sizes);

void ls_tensor_meta(const ls_tensor *t, ls_tmeta *m);
uint64_t ls_tensor_hash(ls_tensor *t);
bool ls_tensor_equal(const ls_tensor *a, const ls_tensor *b); /* dtype, shape and bytes */

/* Element i (flat, row-major) as double / as int64, whatever the dtype. */
double ls_tensor_get_f64(const ls_tensor *t, int64_t i);
int64_t ls_tensor_get_i64(const ls_tensor *t, int64_t i);
void ls_tensor_set_f64(ls_tensor *t, int64_t i, double v);
/* Writes the first max_values elements as "[0.1, 2, ...]" into b. */
void ls_tensor_preview(const ls_tensor *t, int max_values, ls_buf *b);

#endif
