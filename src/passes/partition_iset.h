/* Sets of partition numbers as sorted, disjoint, non-touching intervals [lo, hi) (private to
 * src/passes/): what a node reaches downstream, kept small because the partitions a node
 * reaches are, in practice, contiguous runs of the partitions numbered from the output side.
 * Both partitioners use them to answer "does this node reach that partition?" in O(log). */
#ifndef LS_PARTITION_ISET_H
#define LS_PARTITION_ISET_H

#include <stdbool.h>
#include <stdint.h>

typedef struct ivl {
    uint32_t lo, hi;
} ivl;
typedef struct iset {
    ivl *v;
    uint32_t n, cap;
} iset;

void iset_free(iset *s);
bool iset_has(const iset *s, uint32_t x);
uint64_t iset_count(const iset *s);
/* dst := dst ∪ src ∪ [lo, hi) (lo == hi for none; src may be NULL); scratch holds the merge. */
void iset_merge(iset *dst, const iset *src, uint32_t lo, uint32_t hi, iset *scratch);
/* The smallest number in [0, limit) not in s, or limit. */
uint32_t iset_first_gap(const iset *s, uint32_t limit);
/* Whether s has a number in [lo, hi); whether two sets share a number. */
bool iset_any_in(const iset *s, uint32_t lo, uint32_t hi);
bool iset_meets(const iset *a, const iset *b);

#endif
