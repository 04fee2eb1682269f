/* Fresh node names the way torch.fx makes them: "add", then "add_1", "add_2", ...; a base that
 * already ends in _N continues from N. A namer remembers what it handed out, so a pass can name
 * many new nodes before they are in the program, in time linear in their number. */
#ifndef LS_NAMER_H
#define LS_NAMER_H

#include <stdbool.h>
#include <stdint.h>

struct ls_program;
typedef struct ls_namer ls_namer;

ls_namer *ls_namer_new(const struct ls_program *p); /* p may be NULL: starts empty */
void ls_namer_room(ls_namer *nm, uint32_t n);          /* room for n more names without growing */
void ls_namer_reserve(ls_namer *nm, const char *name); /* mark a name as taken */
bool ls_namer_taken(const ls_namer *nm, const char *name); /* name interned */
const char *ls_namer_take(ls_namer *nm, const char *base); /* interned, now taken */
/* The same with an interned base (the passes name thousands of nodes: no hashing it again). */
const char *ls_namer_take_interned(ls_namer *nm, const char *base);
void ls_namer_free(ls_namer *nm);

#endif
