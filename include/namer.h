/* Fresh node names the way torch.fx makes them: "add", then "add_1", "add_2", ...; a base that
 * already ends in _N continues from N. A namer remembers what it handed out, so a pass can name
 * many new nodes before they are in the program, in time linear in their number. */
#ifndef LS_NAMER_H
#define LS_NAMER_H

struct ls_program;
typedef struct ls_namer ls_namer;

ls_namer *ls_namer_new(const struct ls_program *p); /* p may be NULL: starts empty */
void ls_namer_reserve(ls_namer *nm, const char *name); /* mark a name as taken */
const char *ls_namer_take(ls_namer *nm, const char *base); /* interned, now taken */
void ls_namer_free(ls_namer *nm);

#endif
