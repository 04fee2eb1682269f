/* Node arguments: copies, equality, constructors and a walk over the node ids an argument
 * names. Lists own their element arrays; everything else is held by value. */
#include <inttypes.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "dtype.h"
#include "ops.h"
#include "program.h"

size_t ls_arg_elem_size(uint8_t kind)
{
    switch ((ls_arg_kind)kind) {
    case LS_ARG_NODES:
    case LS_ARG_OPT_NODES: return sizeof(uint32_t);
    case LS_ARG_INTS: return sizeof(int64_t);
    case LS_ARG_FLOATS: return sizeof(double);
    case LS_ARG_BOOLS: return sizeof(bool);
    case LS_ARG_STRINGS: return sizeof(const char *);
    case LS_ARG_SYMINTS: return sizeof(ls_symint);
    default: return 0;
    }
}

void ls_arg_copy(ls_arg *dst, const ls_arg *src)
{
    *dst = *src;
    size_t es = ls_arg_elem_size(src->kind);
    if (es) {
        void *p = ls_malloc(es * (src->n ? src->n : 1));
        if (src->n) memcpy(p, src->v.ints, es * src->n);
        dst->v.ints = p;
    }
}

void ls_arg_free(ls_arg *a)
{
    if (ls_arg_elem_size(a->kind)) free(a->v.ints);
    memset(a, 0, sizeof *a);
}

bool ls_arg_equal(const ls_arg *a, const ls_arg *b)
{
    if (a->kind != b->kind || a->n != b->n) return false;
    size_t es = ls_arg_elem_size(a->kind);
    if (es) {
        if (a->kind == LS_ARG_SYMINTS) {
            for (uint32_t i = 0; i < a->n; i++) {
                if (a->v.symints[i].is_node != b->v.symints[i].is_node) return false;
                if (a->v.symints[i].is_node ? a->v.symints[i].node != b->v.symints[i].node
                                            : a->v.symints[i].i != b->v.symints[i].i)
                    return false;
            }
            return true;
        }
        if (a->kind == LS_ARG_BOOLS) {
            for (uint32_t i = 0; i < a->n; i++)
                if (a->v.bools[i] != b->v.bools[i]) return false;
            return true;
        }
        return a->n == 0 || memcmp(a->v.ints, b->v.ints, es * a->n) == 0;
    }
    switch (a->kind) {
    case LS_ARG_NONE: return true;
    case LS_ARG_NODE: return a->v.node == b->v.node;
    case LS_ARG_FLOAT: return a->v.f == b->v.f || (a->v.f != a->v.f && b->v.f != b->v.f);
    case LS_ARG_BOOL: return a->v.b == b->v.b;
    case LS_ARG_STRING:
    case LS_ARG_DEVICE:
    case LS_ARG_RAW: return a->v.s == b->v.s;
    default: return a->v.i == b->v.i;
    }
}

ls_arg ls_arg_node(uint32_t id)
{
    ls_arg a = {.kind = LS_ARG_NODE};
    a.v.node = id;
    return a;
}

ls_arg ls_arg_int(int64_t v)
{
    ls_arg a = {.kind = LS_ARG_INT};
    a.v.i = v;
    return a;
}

ls_arg ls_arg_float(double v)
{
    ls_arg a = {.kind = LS_ARG_FLOAT};
    a.v.f = v;
    return a;
}

ls_arg ls_arg_bool(bool v)
{
    ls_arg a = {.kind = LS_ARG_BOOL};
    a.v.b = v;
    return a;
}

ls_arg ls_arg_none(void)
{
    ls_arg a = {.kind = LS_ARG_NONE};
    return a;
}

ls_arg ls_arg_ints(const int64_t *v, uint32_t n)
{
    ls_arg a = {.kind = LS_ARG_INTS, .n = n};
    a.v.ints = ls_malloc(sizeof(int64_t) * (n ? n : 1));
    if (n) memcpy(a.v.ints, v, sizeof(int64_t) * n);
    return a;
}

ls_arg ls_arg_nodes(const uint32_t *ids, uint32_t n, bool optional)
{
    ls_arg a = {.kind = optional ? LS_ARG_OPT_NODES : LS_ARG_NODES, .n = n};
    a.v.nodes = ls_malloc(sizeof(uint32_t) * (n ? n : 1));
    if (n) memcpy(a.v.nodes, ids, sizeof(uint32_t) * n);
    return a;
}

void ls_arg_each_node(const ls_arg *a, void (*fn)(uint32_t id, void *ctx), void *ctx)
{
    switch (a->kind) {
    case LS_ARG_NODE: fn(a->v.node, ctx); break;
    case LS_ARG_NODES:
    case LS_ARG_OPT_NODES:
        for (uint32_t i = 0; i < a->n; i++)
            if (a->v.nodes[i]) fn(a->v.nodes[i], ctx);
        break;
    case LS_ARG_SYMINTS:
        for (uint32_t i = 0; i < a->n; i++)
            if (a->v.symints[i].is_node) fn(a->v.symints[i].node, ctx);
        break;
    default: break;
    }
}

/* ---- text */

static void put_node_name(const ls_program *p, uint32_t id, ls_buf *b)
{
    const ls_node *n = ls_program_node(p, id);
    if (n) ls_buf_puts(b, n->name);
    else ls_buf_printf(b, "%%%" PRIu32, id);
}

void ls_arg_text(const ls_program *p, const ls_arg *a, ls_buf *b)
{
    switch (a->kind) {
    case LS_ARG_NONE: ls_buf_puts(b, "None"); break;
    case LS_ARG_NODE: put_node_name(p, a->v.node, b); break;
    case LS_ARG_NODES:
    case LS_ARG_OPT_NODES:
        ls_buf_putc(b, '[');
        for (uint32_t i = 0; i < a->n; i++) {
            if (i) ls_buf_puts(b, ", ");
            if (a->v.nodes[i]) put_node_name(p, a->v.nodes[i], b);
            else ls_buf_puts(b, "None");
        }
        ls_buf_putc(b, ']');
        break;
    case LS_ARG_INT: ls_buf_printf(b, "%" PRId64, a->v.i); break;
    case LS_ARG_FLOAT: ls_buf_printf(b, "%g", a->v.f); break;
    case LS_ARG_BOOL: ls_buf_puts(b, a->v.b ? "True" : "False"); break;
    case LS_ARG_STRING:
    case LS_ARG_DEVICE: ls_buf_printf(b, "'%s'", a->v.s ? a->v.s : ""); break;
    case LS_ARG_RAW: ls_buf_puts(b, a->v.s ? a->v.s : "?"); break;
    case LS_ARG_DTYPE: ls_buf_puts(b, ls_dtype_name((ls_dtype)a->v.i)); break;
    case LS_ARG_LAYOUT:
    case LS_ARG_MEMFMT: ls_buf_printf(b, "%" PRId64, a->v.i); break;
    case LS_ARG_INTS:
    case LS_ARG_FLOATS:
    case LS_ARG_BOOLS:
    case LS_ARG_STRINGS:
    case LS_ARG_SYMINTS:
        ls_buf_putc(b, '[');
        for (uint32_t i = 0; i < a->n; i++) {
            if (i) ls_buf_puts(b, ", ");
            if (a->kind == LS_ARG_INTS) ls_buf_printf(b, "%" PRId64, a->v.ints[i]);
            else if (a->kind == LS_ARG_FLOATS) ls_buf_printf(b, "%g", a->v.floats[i]);
            else if (a->kind == LS_ARG_BOOLS) ls_buf_puts(b, a->v.bools[i] ? "True" : "False");
            else if (a->kind == LS_ARG_STRINGS) ls_buf_printf(b, "'%s'", a->v.strs[i] ? a->v.strs[i] : "");
            else if (a->v.symints[i].is_node) put_node_name(p, a->v.symints[i].node, b);
            else ls_buf_printf(b, "%" PRId64, a->v.symints[i].i);
        }
        ls_buf_putc(b, ']');
        break;
    default: ls_buf_puts(b, "?"); break;
    }
}

/* One line per node, as lowerscope diff prints it and the UI's node pane shows what a node was. */
void ls_node_describe(const ls_program *p, const ls_node *n, ls_buf *b)
{
    if (n->kind == LS_NODE_PLACEHOLDER) {
        int32_t s = ls_program_input_spec(p, n->name);
        const ls_input_spec *sp = s >= 0 ? &p->inputs[s] : NULL;
        ls_buf_printf(b, "placeholder %s", sp ? ls_input_kind_name((ls_input_kind)sp->kind) : "?");
        if (sp && sp->target) ls_buf_printf(b, " %s", sp->target);
    } else if (n->kind == LS_NODE_GET_ATTR) {
        ls_buf_printf(b, "get_attr %s", n->target ? n->target : "?");
    } else if (n->kind == LS_NODE_OUTPUT) {
        ls_buf_puts(b, "output(");
        for (uint16_t a = 0; a < n->nargs; a++) {
            if (a) ls_buf_puts(b, ", ");
            ls_arg_text(p, &n->args[a], b);
        }
        ls_buf_putc(b, ')');
    } else {
        const char *op = n->op ? (n->op->id == LS_OP_call_delegate ? "executorch_call_delegate" : n->op->qualname)
                               : ls_target_short(n->target);
        ls_buf_printf(b, "%s%s(", n->dialect == LS_DIALECT_EDGE ? "edge." : "", op);
        bool first = true;
        for (uint16_t a = 0; a < n->nargs; a++) {
            if (n->args[a].flags & LS_ARGF_DEFAULT) continue;
            if (!first) ls_buf_puts(b, ", ");
            first = false;
            ls_arg_text(p, &n->args[a], b);
        }
        ls_buf_putc(b, ')');
    }
    if (n->tag) ls_buf_printf(b, " [%s]", n->tag);
    if (n->reason) ls_buf_printf(b, " {CPU: %s}", ls_cpu_reason_text((ls_cpu_reason)n->reason));
}

void ls_node_type_str(const ls_node *n, char *buf, size_t cap)
{
    buf[0] = 0;
    if (n->val_kind == LS_VAL_TENSOR && n->nvals) ls_tmeta_str(&n->vals[0], buf, cap);
    else if (n->val_kind == LS_VAL_TENSORS) {
        size_t len = (size_t)snprintf(buf, cap, "(");
        for (uint16_t i = 0; i < n->nvals && len + 2 < cap; i++) {
            char one[96];
            len += (size_t)snprintf(buf + len, cap - len, "%s%s", i ? ", " : "", ls_tmeta_str(&n->vals[i], one, sizeof one));
        }
        if (len + 1 < cap) snprintf(buf + len, cap - len, ")");
    } else if (n->val_kind == LS_VAL_SYMINT) snprintf(buf, cap, "SymInt");
    else if (n->val_kind == LS_VAL_OTHER) snprintf(buf, cap, "object");
}
