/* Named data: blobs by key that delegates read when they are initialised, as ExecuTorch has
 * them (a .pte's `named_data` table, each key naming a segment; exir's NamedDataStore filled by
 * a backend's preprocess; the runtime's NamedDataMap handed to BackendInterface::init). XNNPACK
 * keeps its weights there, keyed by the SHA-256 of their bytes.
 *
 * A table is reference-counted and shared between program versions like tensors are; a pass
 * that adds to it takes a private copy first (ls_program_named_data_mut). Lookups by key are
 * O(1). Keys are interned. */
#ifndef LS_NAMED_DATA_H
#define LS_NAMED_DATA_H

#include <stdint.h>

#include "common.h"
#include "tensor.h"

typedef struct ls_named_data ls_named_data;

ls_named_data *ls_named_data_new(void);
ls_named_data *ls_named_data_ref(ls_named_data *nd);
void ls_named_data_unref(ls_named_data *nd);
/* A private copy sharing every blob by reference. */
ls_named_data *ls_named_data_copy(const ls_named_data *nd);
/* nd itself when nothing else holds it, else a private copy (the caller's reference moves to it). */
ls_named_data *ls_named_data_own(ls_named_data *nd);

/* Adds key → data (taking a new reference to data). alignment is what the bytes ask for when
 * written (0: the writer's default). The same key with the same bytes again is kept once, as
 * NamedDataStore does; the same key with other bytes fails ("key 'k' is already used by other
 * data"). */
int ls_named_data_put(ls_named_data *nd, const char *key, ls_blob *data, uint32_t alignment, ls_error *err);
/* Adds every entry of src to dst (ls_named_data_put for each). */
int ls_named_data_merge(ls_named_data *dst, const ls_named_data *src, ls_error *err);
/* The bytes stored under key (borrowed), or NULL; nd may be NULL. */
const ls_blob *ls_named_data_get(const ls_named_data *nd, const char *key);

/* Entries in the order they were added; nd may be NULL (0 entries). */
uint32_t ls_named_data_count(const ls_named_data *nd);
const char *ls_named_data_key(const ls_named_data *nd, uint32_t i);
const ls_blob *ls_named_data_blob(const ls_named_data *nd, uint32_t i);
uint32_t ls_named_data_alignment(const ls_named_data *nd, uint32_t i);

#endif
