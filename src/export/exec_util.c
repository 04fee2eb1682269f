/* What the to_executorch steps share: upper bounds of symbolic sizes, and the memory plan and
 * emitted program they attach to a program (ls_program.exec). */
#include <cjson/cJSON.h>
#include <ctype.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "export_internal.h"

/* ---- size bounds */

struct lsx_bounds {
    cJSON *root;
    const cJSON *ranges; /* range_constraints */
};

lsx_bounds *lsx_bounds_new(const ls_program *p)
{
    lsx_bounds *b = ls_calloc(1, sizeof *b);
    if (p->extra_json) b->root = cJSON_Parse(p->extra_json);
    const cJSON *ep = b->root ? cJSON_GetObjectItemCaseSensitive(b->root, "exported_program") : NULL;
    b->ranges = cJSON_GetObjectItemCaseSensitive(ep ? ep : b->root, "range_constraints");
    return b;
}

void lsx_bounds_free(lsx_bounds *b)
{
    if (!b) return;
    cJSON_Delete(b->root);
    free(b);
}

/* "Symbol('u0', integer=True)" or "u0" → its max_val; false when unknown. */
static bool range_max(const lsx_bounds *b, const char *sym, int64_t *max)
{
    if (!b || !b->ranges || !sym) return false;
    char name[64];
    const char *s = strstr(sym, "Symbol('");
    const char *start = s ? s + 8 : sym;
    size_t n = 0;
    while (start[n] && (isalnum((unsigned char)start[n]) || start[n] == '_') && n + 1 < sizeof name) n++;
    if (!n || (s && start[n] != '\'') || (!s && start[n])) return false;
    memcpy(name, start, n);
    name[n] = 0;
    const cJSON *r = cJSON_GetObjectItemCaseSensitive(b->ranges, name);
    const cJSON *mx = r ? cJSON_GetObjectItemCaseSensitive(r, "max_val") : NULL;
    if (!cJSON_IsNumber(mx) || mx->valuedouble < 0 || mx->valuedouble > 9.0e15) return false;
    *max = (int64_t)mx->valuedouble;
    return true;
}

int lsx_upper_sizes(lsx_bounds *b, const ls_tmeta *m, int64_t sizes[LS_MAX_DIMS], bool *dynamic)
{
    *dynamic = false;
    for (int d = 0; d < m->ndim; d++) {
        sizes[d] = m->sizes[d];
        if (!m->sym[d]) continue;
        *dynamic = true;
        int64_t mx;
        if (range_max(b, m->sym[d], &mx)) sizes[d] = mx;
        if (sizes[d] < 0) return -1;
    }
    for (int d = 0; d < m->ndim; d++)
        if (sizes[d] < 0) return -1;
    return 0;
}

int64_t lsx_upper_nbytes(lsx_bounds *b, const ls_tmeta *m)
{
    int64_t sizes[LS_MAX_DIMS];
    bool dyn;
    if (m->dtype == LS_DT_UNKNOWN || lsx_upper_sizes(b, m, sizes, &dyn) != 0) return -1;
    int64_t n = (int64_t)ls_dtype_size(m->dtype);
    for (int d = 0; d < m->ndim; d++)
        if (__builtin_mul_overflow(n, sizes[d], &n) || n > ((int64_t)1 << 46)) return -1;
    return n;
}

/* ---- what the to_executorch steps attach */

ls_mem_plan *lsx_plan_ref(ls_mem_plan *m)
{
    if (m) m->refs++;
    return m;
}

void lsx_plan_unref(ls_mem_plan *m)
{
    if (!m || --m->refs) return;
    free(m->slots);
    free(m->slot_first);
    free(m->slot_count);
    free(m->slot_list);
    free(m);
}

static void exec_free(void *v)
{
    lsx_exec *x = v;
    if (!x) return;
    lsx_plan_unref(x->plan);
    if (x->pte) {
        ls_pte_free(x->pte);
        free(x->pte);
    }
    free(x);
}

void lsx_exec_attach(ls_program *p, ls_mem_plan *plan, ls_pte *pte, const ls_emit_summary *summary)
{
    if (p->exec_free) p->exec_free(p->exec);
    lsx_exec *x = ls_calloc(1, sizeof *x);
    x->plan = lsx_plan_ref(plan);
    x->pte = pte;
    if (summary) x->summary = *summary;
    p->exec = x;
    p->exec_free = exec_free;
}

const ls_mem_plan *ls_program_mem_plan(const ls_program *p)
{
    const lsx_exec *x = p && p->exec_free == exec_free ? p->exec : NULL;
    return x ? x->plan : NULL;
}

const ls_pte *ls_program_emitted(const ls_program *p, ls_emit_summary *summary)
{
    const lsx_exec *x = p && p->exec_free == exec_free ? p->exec : NULL;
    if (x && x->pte && summary) *summary = x->summary;
    return x ? x->pte : NULL;
}
