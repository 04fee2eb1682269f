/* emit's values (emit.c has the overview): tensors as ExecuTorch's Tensor values (sizes at their
 * upper bound, the memory plan's place, the constant or mutable segment's index), the literals
 * and lists of arguments, and one value per placeholder. */
#include <inttypes.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "emitter.h"

int lsx_emit_fail(emitter *E, const ls_node *n, const char *fmt, ...)
{
    char msg[LS_ERR_MAX];
    va_list ap;
    va_start(ap, fmt);
    vsnprintf(msg, sizeof msg, fmt, ap);
    va_end(ap);
    if (n) return ls_fail(E->err, "emit: node `%s`: %s", n->name, msg);
    return ls_fail(E->err, "emit: %s", msg);
}

void *lsx_emit_dup(const void *src, size_t n)
{
    void *d = ls_malloc(n ? n : 1);
    if (n) memcpy(d, src, n);
    return d;
}

int32_t lsx_emit_push_value(emitter *E, ls_pte_value v)
{
    ls_vec_push(&E->values, v);
    return (int32_t)E->values.n - 1;
}

int32_t lsx_emit_int_value(emitter *E, int64_t i)
{
    ls_pte_value v = {.kind = LS_PTE_VAL_INT};
    v.int_val = i;
    return lsx_emit_push_value(E, v);
}

int lsx_emit_tensor_value(emitter *E, const ls_node *n, const ls_tmeta *m, uint32_t node_id, uint32_t dbi,
                          const char *fqn, int32_t *out)
{
    int et = ls_dtype_to_et(m->dtype);
    if (et < 0) return lsx_emit_fail(E, n, "dtype %s has no ExecuTorch scalar type", ls_dtype_name(m->dtype));
    ls_pte_value v = {.kind = LS_PTE_VAL_TENSOR};
    ls_pte_tensor *t = &v.tensor;
    t->scalar_type = (int8_t)et;
    int64_t sizes[LS_MAX_DIMS];
    bool dyn = false;
    bool bounded = lsx_upper_sizes(E->bounds, m, sizes, &dyn) == 0;
    t->sizes.v = ls_malloc(sizeof *t->sizes.v * (m->ndim ? m->ndim : 1));
    t->dim_order.v = ls_malloc(m->ndim ? m->ndim : 1);
    t->sizes.n = t->dim_order.n = m->ndim;
    t->sizes.present = t->dim_order.present = true;
    for (int d = 0; d < m->ndim; d++) {
        int64_t s = bounded ? sizes[d] : m->sizes[d] < 0 ? 0 : m->sizes[d];
        if (s > INT32_MAX) {
            free(t->sizes.v);
            free(t->dim_order.v);
            return lsx_emit_fail(E, n, "size %" PRId64 " does not fit a .pte tensor", s);
        }
        t->sizes.v[d] = (int32_t)s;
        t->dim_order.v[d] = m->dim_order[d];
    }
    t->shape_dynamism = (int8_t)(!dyn ? LS_PTE_STATIC : bounded ? LS_PTE_DYNAMIC_BOUND : LS_PTE_DYNAMIC_UNBOUND);
    uint32_t slot = ls_mem_plan_slot(E->plan, node_id, 0);
    if (slot) {
        uint64_t off = E->plan->slots[slot - 1].offset;
        t->has_allocation_info = true;
        t->allocation_info.memory_id = 1;
        t->allocation_info.memory_offset_low = (uint32_t)off;
        t->allocation_info.memory_offset_high = (uint32_t)(off >> 32);
    }
    t->data_buffer_idx = dbi;
    if (fqn) {
        t->has_extra_tensor_info = true;
        t->extra_tensor_info.fully_qualified_name = ls_strdup(fqn);
        t->extra_tensor_info.location = LS_PTE_TENSOR_SEGMENT;
    }
    *out = lsx_emit_push_value(E, v);
    return 0;
}

/* ---- arguments */

int lsx_emit_node_value(emitter *E, const ls_node *n, uint32_t id, int32_t *out)
{
    int32_t v = id < E->p->next_id ? E->val_of[id] : -1;
    if (v < 0) {
        const ls_node *m = ls_program_node(E->p, id);
        return lsx_emit_fail(E, n, "it reads `%s`, which has no value in the emitted program", m ? m->name : "?");
    }
    *out = v;
    return 0;
}

int lsx_emit_arg_value(emitter *E, const ls_node *n, const ls_arg *a, int32_t *out)
{
    ls_pte_value v = {.kind = LS_PTE_VAL_NULL};
    switch ((ls_arg_kind)a->kind) {
    case LS_ARG_NONE: break;
    case LS_ARG_NODE: return lsx_emit_node_value(E, n, a->v.node, out);
    case LS_ARG_NODES:
    case LS_ARG_OPT_NODES: {
        int32_t *items = ls_malloc(sizeof *items * (a->n ? a->n : 1));
        for (uint32_t i = 0; i < a->n; i++) {
            if (a->kind == LS_ARG_OPT_NODES && !a->v.nodes[i]) items[i] = -1;
            else if (lsx_emit_node_value(E, n, a->v.nodes[i], &items[i]) != 0) {
                free(items);
                return -1;
            }
        }
        v.kind = a->kind == LS_ARG_NODES ? LS_PTE_VAL_TENSOR_LIST : LS_PTE_VAL_OPTIONAL_TENSOR_LIST;
        v.tensor_list = (ls_pte_i32s){items, a->n, true};
        break;
    }
    case LS_ARG_INT: v.kind = LS_PTE_VAL_INT, v.int_val = a->v.i; break;
    case LS_ARG_FLOAT: v.kind = LS_PTE_VAL_DOUBLE, v.double_val = a->v.f; break;
    case LS_ARG_BOOL: v.kind = LS_PTE_VAL_BOOL, v.bool_val = a->v.b; break;
    case LS_ARG_DTYPE: {
        int et = ls_dtype_to_et((ls_dtype)a->v.i);
        if (et < 0) return lsx_emit_fail(E, n, "argument '%s': dtype %s has no ExecuTorch scalar type", a->name ? a->name : "?",
                                 ls_dtype_name((ls_dtype)a->v.i));
        v.kind = LS_PTE_VAL_INT, v.int_val = et;
        break;
    }
    case LS_ARG_LAYOUT: v.kind = LS_PTE_VAL_INT, v.int_val = ls_layout_to_c10(a->v.i); break;
    case LS_ARG_MEMFMT: v.kind = LS_PTE_VAL_INT, v.int_val = ls_memfmt_to_c10(a->v.i); break;
    case LS_ARG_STRING:
    case LS_ARG_DEVICE: v.kind = LS_PTE_VAL_STRING, v.string_val = ls_strdup(a->v.s ? a->v.s : ""); break;
    case LS_ARG_INTS:
    case LS_ARG_SYMINTS: {
        int64_t *items = ls_malloc(sizeof *items * (a->n ? a->n : 1));
        for (uint32_t i = 0; i < a->n; i++) {
            if (a->kind == LS_ARG_INTS || !a->v.symints[i].is_node) {
                items[i] = lsx_emit_int_value(E, a->kind == LS_ARG_INTS ? a->v.ints[i] : a->v.symints[i].i);
            } else {
                int32_t vi = -1;
                if (lsx_emit_node_value(E, n, a->v.symints[i].node, &vi) != 0) {
                    free(items);
                    return -1;
                }
                items[i] = vi;
            }
        }
        v.kind = LS_PTE_VAL_INT_LIST;
        v.int_list = (ls_pte_i64s){items, a->n, true};
        break;
    }
    case LS_ARG_FLOATS:
        v.kind = LS_PTE_VAL_DOUBLE_LIST;
        v.double_list = (ls_pte_f64s){lsx_emit_dup(a->v.floats, sizeof(double) * a->n), a->n, true};
        break;
    case LS_ARG_BOOLS: {
        uint8_t *b = ls_malloc(a->n ? a->n : 1);
        for (uint32_t i = 0; i < a->n; i++) b[i] = a->v.bools[i];
        v.kind = LS_PTE_VAL_BOOL_LIST;
        v.bool_list = (ls_pte_u8s){b, a->n, true};
        break;
    }
    case LS_ARG_STRINGS:
    case LS_ARG_RAW:
        return lsx_emit_fail(E, n, "argument '%s' (%s) has no ExecuTorch value", a->name ? a->name : "?",
                     ls_arg_kind_name((ls_arg_kind)a->kind));
    }
    *out = lsx_emit_push_value(E, v);
    return 0;
}

/* ---- placeholders */

/* The external tensor of the program's .pte method that input s reads, or NULL. */
static const ls_pte_external *external_of(const emitter *E, const ls_input_spec *s)
{
    if (!E->file || !E->p->method || !s->target || !ls_pte_file_find_method(E->file, E->p->method)) return NULL;
    return ls_pte_file_external(E->file, E->p->method, s->target);
}

int lsx_emit_placeholder(emitter *E, const ls_node *n)
{
    const ls_input_spec *s = ls_sig_spec(&E->sig, E->p, n);
    const ls_tmeta *m = ls_node_tval(n);
    if (s && s->kind == LS_IN_USER_INPUT && n->val_kind == LS_VAL_SYMINT) { /* an int input */
        E->val_of[n->id] = lsx_emit_int_value(E, 0);
        ls_vec_push(&E->inputs, E->val_of[n->id]);
        return 0;
    }
    if (!s || !m) return lsx_emit_fail(E, n, "a placeholder without tensor metadata or input spec cannot be emitted");
    int32_t vi;
    if (s->kind == LS_IN_USER_INPUT) {
        if (lsx_emit_tensor_value(E, n, m, n->id, 0, NULL, &vi) != 0) return -1;
        ls_vec_push(&E->inputs, vi);
    } else if (ls_input_kind_holds_data(s->kind) && external_of(E, s)) {
        /* a tensor the file's .ptd holds by key stays there: EXTERNAL with its name, no bytes in
         * the .pte, the index the file gave it (exir: _save_new_const_tensor's
         * external_constant_buffer; the runtime finds the data by name, tensor_parser_portable.cpp
         * getTensorDataPtr) */
        const ls_pte_external *x = external_of(E, s);
        const ls_pte_plan *opl = &E->file->pte.execution_plan.v[ls_pte_file_find_method(E->file, E->p->method)->plan];
        uint32_t dbi = opl->values.v[x->value].tensor.data_buffer_idx;
        if (lsx_emit_tensor_value(E, n, m, n->id, dbi, s->target, &vi) != 0) return -1;
        E->values.v[vi].tensor.extra_tensor_info.location = LS_PTE_TENSOR_EXTERNAL;
        E->externals++;
    } else if (s->kind == LS_IN_BUFFER && ls_sig_is_mutated(&E->sig, s) && !E->init_buffers) {
        /* exir (_TopLevelEmitter.placeholder): a mutated buffer is planned memory with no data
         * unless et_init_buffer asks for its initial state, and no name unless
         * emit_mutable_buffer_names */
        if (lsx_emit_tensor_value(E, n, m, n->id, 0, E->buffer_names ? s->target : NULL, &vi) != 0) return -1;
        /* a value the program starts from that the file leaves out is said (the emitted step ran
         * from it, the file's runtime does not) */
        const ls_named_tensor *d = ls_sig_data(&E->sig, E->p, s);
        bool nonzero = false;
        for (size_t k = 0; d && d->t && k < d->t->nbytes && !nonzero; k++) nonzero = ((const uint8_t *)d->t->data)[k] != 0;
        if (nonzero && !E->buffers_unwritten++) E->buffer_unwritten = s->target;
    } else if (ls_input_kind_holds_data(s->kind)) {
        const ls_named_tensor *d = ls_sig_data(&E->sig, E->p, s);
        if (!d || !d->t) { /* valid, and the file needs the bytes the load left out: a need (exit 3) */
            lsx_emit_fail(E, n, "%s `%s` has no data (" LS_NO_WEIGHTS ")", ls_input_kind_name((ls_input_kind)s->kind),
                          s->target ? s->target : "?");
            if (E->err) E->err->code = LS_ERR_NEEDS;
            return -1;
        }
        bool mutated = s->kind == LS_IN_BUFFER && ls_sig_is_mutated(&E->sig, s);
        bool added;
        uint32_t dbi;
        if (mutated) {
            if (E->mut_seg < 0) {
                E->mut_seg = (int32_t)E->segs.n;
                ls_vec_push(&E->segs, ((ls_pte_blob){0}));
            }
            dbi = lsx_store_put(&E->muts, d->t->data, d->t->nbytes, &added);
        } else {
            dbi = lsx_store_put(&E->consts, d->t->data, d->t->nbytes, &added);
            E->constants += added;
        }
        /* exir writes no FQN for a constant stored in the file (extra_tensor_info only for
         * external data, EXTERNAL with its name) */
        if (lsx_emit_tensor_value(E, n, m, n->id, dbi, mutated && E->buffer_names ? s->target : NULL, &vi) != 0) return -1;
    } else {
        return lsx_emit_fail(E, n, "a %s input cannot be emitted", ls_input_kind_name((ls_input_kind)s->kind));
    }
    E->val_of[n->id] = vi;
    return 0;
}
