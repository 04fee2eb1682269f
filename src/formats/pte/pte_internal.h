/* Pieces shared by the .pte and .ptd readers (not part of the public API). */
#ifndef LS_PTE_INTERNAL_H
#define LS_PTE_INTERNAL_H

#include "flatbuf.h"
#include "program.h"
#include "pte.h"

typedef int (*lsp_read_fn)(ls_fb_reader *r, const ls_fb_table *t, void *out);

/* Each returns 1 when the field is present, 0 when absent, -1 on error (message set). */
int lsp_read_string(ls_fb_reader *r, const ls_fb_table *t, unsigned slot, const char *field, char **out);
int lsp_read_scalars(ls_fb_reader *r, const ls_fb_table *t, unsigned slot, const char *field, uint32_t elem_size,
                     void **v, uint32_t *n, bool *present);
int lsp_read_tables(ls_fb_reader *r, const ls_fb_table *t, unsigned slot, const char *field, size_t esize,
                    lsp_read_fn fn, void **v, uint32_t *n, bool *present);
/* A sub-table, read with fn under the field's name in the path; *present says whether it was there. */
int lsp_read_sub(ls_fb_reader *r, const ls_fb_table *t, unsigned slot, const char *field, lsp_read_fn fn, void *out,
                 bool *present);
int lsp_read_data_segment(ls_fb_reader *r, const ls_fb_table *t, void *out);

#define LSP_READ_SCALARS(r, t, slot, field, vec) \
    lsp_read_scalars(r, t, slot, field, sizeof *(vec)->v, (void **)&(vec)->v, &(vec)->n, &(vec)->present)
#define LSP_READ_TABLES(r, t, slot, field, vec, fn) \
    lsp_read_tables(r, t, slot, field, sizeof *(vec)->v, fn, (void **)&(vec)->v, &(vec)->n, &(vec)->present)

/* Copies out the bytes of every segment: segment i is at base + segs[i].offset and must end by
 * `end`. have_base false means the file says nowhere where segments start: only empty
 * segments are then accepted. Sets *blobs (one per segment) even on failure, for freeing. */
int lsp_copy_segments(const uint8_t *data, uint64_t base, uint64_t end, bool have_base,
                      const ls_pte_data_segments *segs, ls_pte_blob **blobs, uint32_t *nblobs, const char *name,
                      ls_error *err);

/* ls_pte_write without the cross-reference check: lets tests make files with bad indices to
 * see the reader refuse them. */
int lsp_pte_write_unchecked(const ls_pte *pte, uint8_t **bytes, size_t *size, ls_error *err);

/* pte_views.c: planned tensor values by place, to find the base of a view exir elided (a value
 * no instruction writes, at the place of one written before with the same size): that value's
 * index, or -1. node_of: the node standing for each value so far (0: none). */
typedef struct lsp_places lsp_places;
lsp_places *lsp_places_new(const ls_pte_plan *pl);
void lsp_places_free(lsp_places *ps);
int32_t lsp_places_view_of(const lsp_places *ps, const ls_pte_plan *pl, uint32_t value, const uint32_t *node_of);

/* pte_load.c: execution plan `plan` of a loaded .pte as a program holding the file as its
 * origin. */
struct ls_pte_file;
int lsp_program_from_pte(struct ls_pte_file *f, uint32_t plan, ls_program **out, ls_error *err);

#endif
