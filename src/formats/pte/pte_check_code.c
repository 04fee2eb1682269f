/* The runtime's load checks, second half: a method's chains and instructions (Method::init,
 * and what Method::execute_instruction assumes of them), its operators (Method::
 * resolve_operator against the kernels ExecuTorch registers) and delegates
 * (BackendDelegate::Init); and the report as text and JSON. */
#include <inttypes.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "bundled_blob.h"
#include "dialect.h"
#include "ops.h"
#include "pte_check_internal.h"
#include "ptrmap.h"

/* What a kernel's boxed wrapper reads from argument k (the schema lowerscope's op table has
 * for it): the generated wrapper unboxes each EValue with toTensor(), toInt(), ... which abort
 * on another kind. */
typedef struct op_shape {
    bool known, resolved;
    uint32_t nargs; /* arguments the wrapper reads */
    uint8_t type[LS_MAX_PARAMS + LS_MAX_RETURNS];
    bool optional[LS_MAX_PARAMS + LS_MAX_RETURNS];
    const char *arg_name[LS_MAX_PARAMS + LS_MAX_RETURNS];
    char full[160];
} op_shape;

static void shape_of(const ls_pte_operator *o, op_shape *s)
{
    memset(s, 0, sizeof *s);
    const char *ovl = o->overload ? o->overload : "";
    snprintf(s->full, sizeof s->full, "%s%s%s", o->name ? o->name : "", *ovl ? "." : "", ovl);
    if (!o->name) return;
    const ls_op *op = ls_op_from_out_variant(o->name, ovl);
    bool out_form = op != NULL;
    if (!op) {
        const char *sep = strstr(o->name, "::");
        if (!sep) return;
        char ns[64];
        snprintf(ns, sizeof ns, "%.*s", (int)(sep - o->name), o->name);
        op = ls_op_find(ns, sep + 2, *ovl ? ovl : "default");
        if (!op || (op->flags & LS_OPF_SPECIAL)) return;
    }
    s->known = true;
    if (out_form) {
        uint8_t keep[LS_MAX_PARAMS];
        uint32_t nk = ls_out_params(op, keep);
        for (uint32_t k = 0; k < nk; k++) {
            const ls_param *p = &op->schema.params[keep[k]];
            s->type[s->nargs] = p->type;
            s->optional[s->nargs] = p->optional;
            s->arg_name[s->nargs++] = p->name;
        }
        uint32_t nout = ls_out_count(op);
        for (uint32_t k = 0; k < nout; k++) {
            s->type[s->nargs] = op->schema.returns_list ? LS_PT_TENSOR_LIST : op->schema.returns[k];
            s->arg_name[s->nargs++] = ls_out_name(op, k);
        }
    } else {
        for (uint32_t k = 0; k < op->schema.nparams; k++) {
            s->type[s->nargs] = op->schema.params[k].type;
            s->optional[s->nargs] = op->schema.params[k].optional;
            s->arg_name[s->nargs++] = op->schema.params[k].name;
        }
    }
}

static bool kind_fits(uint8_t type, bool optional, int kind)
{
    if (optional && kind == LS_PTE_VAL_NULL) return true;
    switch ((ls_ptype)type) {
    case LS_PT_TENSOR: return kind == LS_PTE_VAL_TENSOR;
    case LS_PT_TENSOR_LIST: return kind == LS_PTE_VAL_TENSOR_LIST;
    case LS_PT_OPT_TENSOR_LIST: return kind == LS_PTE_VAL_OPTIONAL_TENSOR_LIST;
    case LS_PT_INT:
    case LS_PT_DTYPE:
    case LS_PT_LAYOUT:
    case LS_PT_MEMFMT: return kind == LS_PTE_VAL_INT;
    case LS_PT_INT_LIST: return kind == LS_PTE_VAL_INT_LIST;
    case LS_PT_FLOAT: return kind == LS_PTE_VAL_DOUBLE;
    case LS_PT_FLOAT_LIST: return kind == LS_PTE_VAL_DOUBLE_LIST;
    case LS_PT_SCALAR: return kind == LS_PTE_VAL_INT || kind == LS_PTE_VAL_DOUBLE || kind == LS_PTE_VAL_BOOL;
    case LS_PT_BOOL: return kind == LS_PTE_VAL_BOOL;
    case LS_PT_BOOL_LIST: return kind == LS_PTE_VAL_BOOL_LIST;
    case LS_PT_STR:
    case LS_PT_DEVICE: return kind == LS_PTE_VAL_STRING;
    case LS_PT_ANY: return true;
    }
    return true;
}

static const char *type_words(uint8_t type)
{
    switch ((ls_ptype)type) {
    case LS_PT_TENSOR: return "a Tensor";
    case LS_PT_TENSOR_LIST: return "a TensorList";
    case LS_PT_OPT_TENSOR_LIST: return "an OptionalTensorList";
    case LS_PT_INT_LIST: return "an IntList";
    case LS_PT_FLOAT: return "a Double";
    case LS_PT_FLOAT_LIST: return "a DoubleList";
    case LS_PT_SCALAR: return "a Scalar (Int, Double or Bool)";
    case LS_PT_BOOL: return "a Bool";
    case LS_PT_BOOL_LIST: return "a BoolList";
    case LS_PT_STR:
    case LS_PT_DEVICE: return "a String";
    case LS_PT_ANY: return "any value";
    default: return "an Int";
    }
}

/* Method::resolve_operator: the kernel registered under the operator's name, once per operator
 * an instruction uses. */
static void resolve(lspc *C, uint32_t oi, op_shape *s)
{
    s->resolved = true;
    const ls_pte_operator *o = &C->plan->operators.v[oi];
    char w[48];
    snprintf(w, sizeof w, "operators[%u]", oi);
    const char *rule = "method.cpp Method::resolve_operator";
    if (!o->name) {
        lspc_fail(C, rule, w, "Missing operator name");
        return;
    }
    size_t len = strlen(s->full);
    if (len >= 100) { /* kTempBufferSizeForName */
        lspc_fail(C, rule, w, "Operator name %s with length %zu truncated to 100 due to internal buffer limit.", s->full,
                  len);
        return;
    }
    const char *lib = ls_et_kernel_library(s->full);
    const ls_op *declared = lib ? NULL : ls_op_from_out_variant(o->name, o->overload && *o->overload ? o->overload : "default");
    if (declared && (declared->flags & LS_OPF_CUSTOM)) { /* --ops: the user's own kernel library registers it */
        lspc_issue(C, LS_PTE_NEEDS_KERNEL, rule, s->full, "the user's (declared by --ops)", w, "needs kernel %s from library %s",
                   s->full, "the user's (declared by --ops)");
    } else if (!lib) {
        char hint[200] = "";
        size_t nl = strlen(o->name);
        if (o->overload && !strcmp(o->overload, "default") && ls_et_kernel_library(o->name))
            snprintf(hint, sizeof hint, " (the kernel is registered as %s: exir writes a default overload as \"\")",
                     o->name);
        else if (nl > 0 && !strstr(o->name, "::"))
            snprintf(hint, sizeof hint, " (an operator name has its namespace: \"aten::%s\")", o->name);
        lspc_fail(C, rule, w, "Missing operator: [%u] %s%s", oi, s->full, hint);
    } else if (!ls_et_library_is_stock(lib)) {
        lspc_issue(C, LS_PTE_NEEDS_KERNEL, rule, s->full, lib, w, "needs kernel %s from library %s", s->full, lib);
    }
}

static void check_args(lspc *C, const ls_pte_i32s *args, const char *w)
{
    for (uint32_t k = 0; k < args->n; k++)
        if (args->v[k] < 0 || (uint32_t)args->v[k] >= C->plan->values.n)
            lspc_fail(C, "method.cpp gen_instruction_arguments", w, "Arg index %d >= %u (argument %u)", args->v[k],
                      C->plan->values.n, k);
}

static bool value_ok(lspc *C, int32_t x)
{
    return x >= 0 && (uint32_t)x < C->plan->values.n;
}

static void kernel_call(lspc *C, const ls_pte_instruction *in, op_shape *shapes, const char *w)
{
    const ls_pte_plan *pl = C->plan;
    if (!in->kernel_call.args.present && in->kernel_call.args.n == 0) {
        lspc_fail(C, "method.cpp Method::init", w, "KernelCall args missing");
        return;
    }
    check_args(C, &in->kernel_call.args, w);
    int32_t oi = in->kernel_call.op_index;
    if (oi < 0 || (uint32_t)oi >= pl->operators.n) {
        lspc_fail(C, "method.cpp Method::resolve_operator", w, "Op index %" PRIu32 " out of range", (uint32_t)oi);
        return;
    }
    op_shape *s = &shapes[oi];
    if (!s->resolved) resolve(C, (uint32_t)oi, s);
    if (!s->known) return;
    if (in->kernel_call.args.n < s->nargs) {
        lspc_fail(C, "the kernel's generated wrapper", w, "KernelCall of %s passes %u arguments; its kernel reads %u",
                  s->full, in->kernel_call.args.n, s->nargs);
        return;
    }
    for (uint32_t k = 0; k < s->nargs; k++) {
        int32_t x = in->kernel_call.args.v[k];
        if (!value_ok(C, x)) continue;
        int kind = pl->values.v[x].kind;
        if (!kind_fits(s->type[k], s->optional[k], kind))
            lspc_fail(C, "the kernel's generated wrapper (EValue::to<T>)", w,
                      "argument %u (%s) of %s is value %d, a %s: the kernel unboxes %s", k, s->arg_name[k], s->full, x,
                      lspc_kind_name(kind), type_words(s->type[k]));
    }
}

static void check_chains(lspc *C, const ls_pte_plan *pl)
{
    if (pl->chains.n == 0) {
        lspc_fail(C, "method.cpp Method::init", "chains", "No chains");
        return;
    }
    op_shape *shapes = ls_calloc(pl->operators.n ? pl->operators.n : 1, sizeof *shapes);
    for (uint32_t i = 0; i < pl->operators.n; i++) shape_of(&pl->operators.v[i], &shapes[i]);
    uint32_t nv = pl->values.n;
    const char *idx_rule = "method.cpp Method::init (ET_CHECK_VALID_VALUE_INDEX)";
    for (uint32_t ci = 0; ci < pl->chains.n; ci++) {
        const ls_pte_chain *c = &pl->chains.v[ci];
        char w[96];
        if (!c->instructions.present && c->instructions.n == 0) {
            snprintf(w, sizeof w, "chains[%u]", ci);
            lspc_fail(C, "method.cpp Method::init", w, "Missing instructions in chain %u", ci);
            continue;
        }
        for (uint32_t ii = 0; ii < c->instructions.n; ii++) {
            const ls_pte_instruction *in = &c->instructions.v[ii];
            snprintf(w, sizeof w, "chains[%u].instructions[%u]", ci, ii);
            C->r->instructions++;
            switch ((int)in->kind) {
            case LS_PTE_KERNEL_CALL: kernel_call(C, in, shapes, w); break;
            case LS_PTE_DELEGATE_CALL:
                if (!in->delegate_call.args.present && in->delegate_call.args.n == 0)
                    lspc_fail(C, "method.cpp Method::init", w, "DelegateCall args missing");
                check_args(C, &in->delegate_call.args, w);
                if (in->delegate_call.delegate_index < 0 || (uint32_t)in->delegate_call.delegate_index >= pl->delegates.n)
                    lspc_fail(C, "method.cpp Method::execute_instruction", w,
                              "DELEGATE_CALL index %" PRIu32 " >= num delegates %u at instruction %u",
                              (uint32_t)in->delegate_call.delegate_index, pl->delegates.n, ii);
                break;
            case LS_PTE_JUMP_FALSE_CALL: {
                int32_t x = in->jump_false_call.cond_value_index;
                if (!value_ok(C, x)) {
                    lspc_fail(C, idx_rule, w, "Index %d negative or >= %u", x, nv);
                    break;
                }
                const ls_pte_value *v = &pl->values.v[x];
                if (v->kind != LS_PTE_VAL_TENSOR && v->kind != LS_PTE_VAL_BOOL)
                    lspc_fail(C, "method.cpp parse_cond_value", w, "Unsupported JF EValue type (value %d is a %s)", x,
                              lspc_kind_name(v->kind));
                else if (v->kind == LS_PTE_VAL_TENSOR && v->tensor.scalar_type != LS_ET_BOOL)
                    lspc_fail(C, "method.cpp parse_cond_value", w, "Expected dtype of %d got %d", LS_ET_BOOL,
                              v->tensor.scalar_type);
                break;
            }
            case LS_PTE_MOVE_CALL:
                if (!value_ok(C, in->move_call.move_from))
                    lspc_fail(C, idx_rule, w, "Index %d negative or >= %u", in->move_call.move_from, nv);
                if (!value_ok(C, in->move_call.move_to))
                    lspc_fail(C, idx_rule, w, "Index %d negative or >= %u", in->move_call.move_to, nv);
                break;
            case LS_PTE_FREE_CALL:
                if (!value_ok(C, in->free_call.value_index))
                    lspc_fail(C, idx_rule, w, "Index %d negative or >= %u", in->free_call.value_index, nv);
                else if (pl->values.v[in->free_call.value_index].kind != LS_PTE_VAL_TENSOR)
                    lspc_fail(C, "method.cpp Method::execute_instruction", w, "FreeCall target at index %d is not a Tensor",
                              in->free_call.value_index);
                break;
            case LS_PTE_INSTR_NONE: lspc_fail(C, "method.cpp Method::init", w, "Null instruction at index %u", ii); break;
            default: lspc_fail(C, "method.cpp Method::init", w, "Invalid instruction type %d", (int)in->kind); break;
            }
        }
    }
    free(shapes);
}

/* BackendDelegate::Init (method.cpp): the backend, its processed data, its compile specs. */
/* A delegate whose processed bytes are the bundled delegate's format (bundled_blob.h's magic at
 * their start): a profile named a backend lowerscope does not have, and the bundled delegate
 * preprocessed the module in its place (docs/backends.md). */
static bool stand_in_blob(const ls_pte *p, const ls_pte_delegate *d)
{
    const uint8_t *b = NULL;
    uint64_t n = 0;
    if (!d->has_processed) return false;
    if (d->processed.location == LS_PTE_INLINE && d->processed.index < p->backend_delegate_data.n) {
        b = p->backend_delegate_data.v[d->processed.index].storage.v;
        n = p->backend_delegate_data.v[d->processed.index].storage.n;
    } else if (d->processed.location == LS_PTE_SEGMENT && d->processed.index < p->n_segment_data) {
        b = p->segment_data[d->processed.index].v;
        n = p->segment_data[d->processed.index].n;
    }
    return b && n >= 4 && memcmp(b, LS_BB_MAGIC, 4) == 0;
}

static void check_delegates(lspc *C, const ls_pte_plan *pl)
{
    const ls_pte *p = C->p;
    if (!pl->delegates.present && pl->delegates.n == 0) {
        lspc_fail(C, "method.cpp Method::init", "delegates", "Missing delegates field");
        return;
    }
    ls_ptrmap seen = {0};
    const char *rule = "method.cpp BackendDelegate::Init";
    for (uint32_t di = 0; di < pl->delegates.n; di++) {
        const ls_pte_delegate *d = &pl->delegates.v[di];
        char w[48];
        snprintf(w, sizeof w, "delegates[%u]", di);
        if (!d->id) {
            lspc_fail(C, rule, w, "Missing backend id");
        } else if (!ls_ptrmap_has(&seen, ls_intern(d->id))) {
            ls_ptrmap_put(&seen, ls_intern(d->id), 1);
            bool stock = ls_et_backend_is_stock(d->id);
            if (stock && stand_in_blob(p, d)) /* the id is ExecuTorch's, the bytes are ours */
                lspc_issue(C, LS_PTE_NEEDS_BACKEND, rule, d->id, NULL, w,
                           "needs backend %s, but its blob is lowerscope's bundled format (LSBB) standing in for it, "
                           "which ExecuTorch's %s does not read: only lowerscope runs this delegate",
                           d->id, d->id);
            else
                lspc_issue(C, LS_PTE_NEEDS_BACKEND, rule, d->id, stock ? "ExecuTorch" : NULL, w,
                           stock ? "needs backend %s (ExecuTorch ships it: the runtime must link it, else \"Backend %s is "
                                   "not registered.\")"
                                 : "needs backend %s, which ExecuTorch does not ship (a stock runtime says \"Backend %s is "
                                   "not registered.\")",
                           d->id, d->id);
        }
        if (!d->has_processed) {
            lspc_fail(C, "method.cpp BackendDelegate::GetProcessedData", w,
                      "no processed data reference (the runtime reads it without checking)");
        } else if (d->processed.location == LS_PTE_INLINE) {
            if (d->processed.index >= p->backend_delegate_data.n)
                lspc_fail(C, "program.cpp Program::get_backend_delegate_data", w, "index %u >= list size %u",
                          d->processed.index, p->backend_delegate_data.n);
        } else if (d->processed.location == LS_PTE_SEGMENT) {
            if (p->segments.n == 0)
                lspc_fail(C, "program.cpp Program::LoadSegment", w, "No segments in program: requested index %u",
                          d->processed.index);
            else if (d->processed.index >= p->segments.n)
                lspc_fail(C, "program.cpp Program::LoadSegment", w, "Segment index %u out of range (>= %u)",
                          d->processed.index, p->segments.n);
        } else {
            lspc_fail(C, "method.cpp BackendDelegate::GetProcessedData", w, "Unknown data location %u",
                      (unsigned)d->processed.location);
        }
        if (!d->compile_specs.present && d->compile_specs.n == 0)
            lspc_fail(C, "method.cpp BackendDelegate::PopulateCompileSpecs", w,
                      "compile_specs missing (the runtime reads its size without checking)");
        for (uint32_t k = 0; k < d->compile_specs.n; k++)
            if (!d->compile_specs.v[k].key || (!d->compile_specs.v[k].value.present && !d->compile_specs.v[k].value.n))
                lspc_fail(C, "method.cpp BackendDelegate::PopulateCompileSpecs", w,
                          "compile_specs[%u] has no %s (the runtime reads it without checking)", k,
                          d->compile_specs.v[k].key ? "value" : "key");
    }
    ls_ptrmap_free(&seen);
}

void lspc_check_code(lspc *C, const ls_pte_plan *pl)
{
    check_delegates(C, pl);
    check_chains(C, pl);
}

/* ---------------------------------------------------------------- the report */

void ls_pte_check_report_text(const ls_pte_check_report *r, const char *file, ls_buf *out)
{
    if (!file) file = "program";
    for (uint32_t i = 0; i < r->n; i++) {
        const ls_pte_issue *is = &r->v[i];
        ls_buf_printf(out, "%s: %s: %s%s [%s]\n", file, is->where, is->kind == LS_PTE_FAILS ? "error: " : "", is->msg,
                      is->rule);
    }
    if (r->n_fails + r->n_needs > r->n)
        ls_buf_printf(out, "%s: ... %u more not listed\n", file, r->n_fails + r->n_needs - r->n);
    if (r->n_fails)
        ls_buf_printf(out, "%s: ExecuTorch's runtime refuses it: %u error%s (%u method%s checked)\n", file, r->n_fails,
                      r->n_fails == 1 ? "" : "s", r->methods, r->methods == 1 ? "" : "s");
    else
        ls_buf_printf(out, "%s: ExecuTorch's runtime loads it: %u method%s, %u value%s, %u instruction%s, %u planned "
                      "tensor%s checked%s\n", file, r->methods, r->methods == 1 ? "" : "s", r->values, r->values == 1 ? "" : "s",
                      r->instructions, r->instructions == 1 ? "" : "s", r->planned, r->planned == 1 ? "" : "s",
                      r->n_needs ? " (with the kernels and backends listed)" : "");
}

void ls_pte_check_report_json(const ls_pte_check_report *r, ls_buf *out)
{
    ls_buf_printf(out, "{\"loads\": %s, \"fails\": %u, \"needs\": %u, \"methods\": %u, \"values\": %u, "
                  "\"instructions\": %u, \"planned\": %u, \"issues\": [", r->n_fails ? "false" : "true", r->n_fails,
                  r->n_needs, r->methods, r->values, r->instructions, r->planned);
    static const char *kinds[] = {"error", "needs_kernel", "needs_backend"};
    for (uint32_t i = 0; i < r->n; i++) {
        const ls_pte_issue *is = &r->v[i];
        ls_buf_printf(out, "%s{\"kind\": \"%s\", \"where\": ", i ? ", " : "", kinds[is->kind]);
        ls_buf_json_str(out, is->where);
        ls_buf_puts(out, ", \"message\": ");
        ls_buf_json_str(out, is->msg);
        ls_buf_puts(out, ", \"rule\": ");
        ls_buf_json_str(out, is->rule);
        ls_buf_puts(out, ", \"name\": ");
        ls_buf_json_str(out, is->name);
        ls_buf_puts(out, ", \"library\": ");
        ls_buf_json_str(out, is->library);
        ls_buf_putc(out, '}');
    }
    ls_buf_puts(out, "]}");
}
