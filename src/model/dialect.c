/* How the ExecuTorch dialect spells an op's out variant (include/dialect.h). */
#include "dialect.h"

#include <ctype.h>
#include <stdio.h>
#include <string.h>

uint32_t ls_out_params(const ls_op *op, uint8_t keep[LS_MAX_PARAMS])
{
    const ls_schema *s = &op->schema;
    bool options = false;
    for (int i = 0; i < s->nparams; i++)
        if (strcmp(s->params[i].name, "pin_memory") == 0) options = true;
    uint32_t n = 0;
    for (int i = 0; i < s->nparams; i++) {
        const char *nm = s->params[i].name;
        if (options && (!strcmp(nm, "dtype") || !strcmp(nm, "layout") || !strcmp(nm, "device") || !strcmp(nm, "pin_memory")))
            continue;
        keep[n++] = (uint8_t)i;
    }
    return n;
}

uint32_t ls_out_count(const ls_op *op)
{
    if (op->schema.returns_list) return 1;
    return op->schema.nreturns;
}

const char *ls_out_name(const ls_op *op, uint32_t k)
{
    if (ls_out_count(op) <= 1) return ls_intern("out");
    return ls_internf("out%u", k);
}

/* c10::Layout: Strided 0, Sparse 1, SparseCsr 2, Mkldnn 3, SparseCsc 4, SparseBsr 5, SparseBsc 6.
 * torch.export: Unknown 0, SparseCoo 1, SparseCsr 2, SparseCsc 3, SparseBsr 4, SparseBsc 5,
 * _mkldnn 6, Strided 7. */
static const int64_t layout_c10_to_export[] = {7, 1, 2, 6, 3, 4, 5};

int64_t ls_layout_from_c10(int64_t c10)
{
    return c10 >= 0 && c10 < 7 ? layout_c10_to_export[c10] : 0;
}

int64_t ls_layout_to_c10(int64_t code)
{
    for (int i = 0; i < 7; i++)
        if (layout_c10_to_export[i] == code) return i;
    return 0;
}

/* c10::MemoryFormat: Contiguous 0, Preserve 1, ChannelsLast 2, ChannelsLast3d 3.
 * torch.export: Unknown 0, ContiguousFormat 1, ChannelsLast 2, ChannelsLast3d 3, PreserveFormat 4. */
static const int64_t memfmt_c10_to_export[] = {1, 4, 2, 3};

int64_t ls_memfmt_from_c10(int64_t c10)
{
    return c10 >= 0 && c10 < 4 ? memfmt_c10_to_export[c10] : 0;
}

int64_t ls_memfmt_to_c10(int64_t code)
{
    for (int i = 0; i < 4; i++)
        if (memfmt_c10_to_export[i] == code) return i;
    return 0;
}

const char *ls_sanitize_name(const char *prefix, const char *s)
{
    char b[256];
    snprintf(b, sizeof b, "%s%s", prefix ? prefix : "", s ? s : "");
    for (char *c = b; *c; c++)
        if (!isalnum((unsigned char)*c) && *c != '_') *c = '_';
    if (isdigit((unsigned char)b[0])) {
        char t[260];
        snprintf(t, sizeof t, "_%s", b);
        return ls_intern(t);
    }
    return ls_intern(b);
}
