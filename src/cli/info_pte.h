/* The parts of `lowerscope info` beyond the graph (info_pte.c): delegates with what lowerscope
 * can say about each blob, and a .pte's methods, named data and external data. */
#ifndef LS_INFO_PTE_H
#define LS_INFO_PTE_H

#include "common.h"
#include "program.h"

void info_delegates_text(const ls_program *p);
void info_delegates_json(ls_buf *b, const ls_program *p); /* ,"delegates":[...] */
void info_pte_text(const ls_program *p);                  /* nothing for a program not from a .pte */
void info_pte_json(ls_buf *b, const ls_program *p);       /* ,"method":...,"methods":[...],... */

#endif
