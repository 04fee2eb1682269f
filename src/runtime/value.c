/* Runtime values: what node arguments and results are while a program runs. */
#include <math.h>
#include <stdlib.h>

#include "runtime.h"

ls_value ls_value_tensor(ls_tensor *t)
{
    return (ls_value){.kind = t ? LS_V_TENSOR : LS_V_NONE, .t = t};
}

ls_value ls_value_int(int64_t x)
{
    return (ls_value){.kind = LS_V_INT, .i = x};
}

ls_value ls_value_float(double x)
{
    return (ls_value){.kind = LS_V_FLOAT, .f = x};
}

ls_value ls_value_bool(bool x)
{
    return (ls_value){.kind = LS_V_BOOL, .b = x};
}

ls_value ls_value_none(void)
{
    return (ls_value){.kind = LS_V_NONE};
}

ls_value ls_value_list(uint32_t n)
{
    ls_value v = {.kind = LS_V_LIST, .n = n};
    v.items = ls_calloc(n ? n : 1, sizeof *v.items); /* calloc: every item is LS_V_NONE */
    return v;
}

ls_value ls_value_copy(const ls_value *v)
{
    ls_value c = *v;
    if (v->kind == LS_V_TENSOR) {
        ls_tensor_ref(v->t);
    } else if (v->kind == LS_V_LIST) {
        c.items = ls_malloc(sizeof *c.items * (v->n ? v->n : 1));
        for (uint32_t i = 0; i < v->n; i++) c.items[i] = ls_value_copy(&v->items[i]);
    }
    return c;
}

void ls_value_release(ls_value *v)
{
    if (v->kind == LS_V_TENSOR) {
        ls_tensor_unref(v->t);
    } else if (v->kind == LS_V_LIST) {
        for (uint32_t i = 0; i < v->n; i++) ls_value_release(&v->items[i]);
        free(v->items);
    }
    *v = ls_value_none();
}

double ls_value_as_f64(const ls_value *v)
{
    switch (v->kind) {
    case LS_V_INT: return (double)v->i;
    case LS_V_FLOAT: return v->f;
    case LS_V_BOOL: return v->b;
    case LS_V_TENSOR: return v->t->numel == 1 ? ls_tensor_get_f64(v->t, 0) : NAN;
    default: return NAN;
    }
}

int64_t ls_value_as_i64(const ls_value *v)
{
    switch (v->kind) {
    case LS_V_INT: return v->i;
    case LS_V_FLOAT: return isfinite(v->f) && fabs(v->f) < 9.2e18 ? (int64_t)v->f : 0;
    case LS_V_BOOL: return v->b;
    case LS_V_TENSOR: return v->t->numel == 1 ? ls_tensor_get_i64(v->t, 0) : 0;
    default: return 0;
    }
}

const char *ls_value_kind_text(uint8_t kind)
{
    static const char *const names[] = {"None", "a tensor", "an int", "a float", "a bool", "a string", "a list"};
    return kind < sizeof names / sizeof names[0] ? names[kind] : "?";
}

void ls_value_scalar_text(const ls_value *v, ls_buf *b)
{
    switch (v->kind) {
    case LS_V_INT: ls_buf_printf(b, "int %lld", (long long)v->i); break;
    case LS_V_FLOAT: ls_buf_printf(b, "float %.9g", v->f); break;
    case LS_V_BOOL: ls_buf_puts(b, v->b ? "bool True" : "bool False"); break;
    case LS_V_STRING: ls_buf_printf(b, "string '%s'", v->s ? v->s : ""); break;
    case LS_V_LIST: ls_buf_printf(b, "list of %u", v->n); break;
    case LS_V_TENSOR: ls_buf_puts(b, "tensor"); break;
    default: ls_buf_puts(b, "None"); break;
    }
}
