/* The .pte model's enum names, its cross-reference check and the data look-ups the runtime
 * needs (segment bytes, delegate blobs, named data, tensor constants). */
#include "pte.h"

#include <stdio.h>
#include <string.h>

/* ---------------------------------------------------------------- enum names */

static const struct {
    int code;
    const char *name;
    size_t size;
} scalar_types[] = {
    {LS_ET_BYTE, "BYTE", 1},           {LS_ET_CHAR, "CHAR", 1},
    {LS_ET_SHORT, "SHORT", 2},         {LS_ET_INT, "INT", 4},
    {LS_ET_LONG, "LONG", 8},           {LS_ET_HALF, "HALF", 2},
    {LS_ET_FLOAT, "FLOAT", 4},         {LS_ET_DOUBLE, "DOUBLE", 8},
    {LS_ET_BOOL, "BOOL", 1},           {LS_ET_QINT8, "QINT8", 1},
    {LS_ET_QUINT8, "QUINT8", 1},       {LS_ET_QINT32, "QINT32", 4},
    {LS_ET_BFLOAT16, "BFLOAT16", 2},   {LS_ET_QUINT4X2, "QUINT4X2", 1},
    {LS_ET_QUINT2X4, "QUINT2X4", 1},   {LS_ET_BITS16, "BITS16", 2},
    {LS_ET_FLOAT8E5M2, "FLOAT8E5M2", 1}, {LS_ET_FLOAT8E4M3FN, "FLOAT8E4M3FN", 1},
    {LS_ET_FLOAT8E5M2FNUZ, "FLOAT8E5M2FNUZ", 1}, {LS_ET_FLOAT8E4M3FNUZ, "FLOAT8E4M3FNUZ", 1},
    {LS_ET_UINT16, "UINT16", 2},       {LS_ET_UINT32, "UINT32", 4},
    {LS_ET_UINT64, "UINT64", 8},
};

const char *ls_et_scalar_type_name(int code)
{
    for (size_t i = 0; i < sizeof scalar_types / sizeof scalar_types[0]; i++)
        if (scalar_types[i].code == code) return scalar_types[i].name;
    return NULL;
}

size_t ls_et_scalar_type_size(int code)
{
    for (size_t i = 0; i < sizeof scalar_types / sizeof scalar_types[0]; i++)
        if (scalar_types[i].code == code) return scalar_types[i].size;
    return 0;
}

const char *ls_pte_val_kind_name(int kind)
{
    static const char *names[] = {"NONE",   "Null",    "Int",        "Bool",     "Double",     "Tensor",
                                  "String", "IntList", "DoubleList", "BoolList", "TensorList", "OptionalTensorList"};
    return kind >= 0 && kind < (int)(sizeof names / sizeof names[0]) ? names[kind] : NULL;
}

const char *ls_pte_instr_kind_name(int kind)
{
    static const char *names[] = {"NONE", "KernelCall", "DelegateCall", "MoveCall", "JumpFalseCall", "FreeCall"};
    return kind >= 0 && kind < (int)(sizeof names / sizeof names[0]) ? names[kind] : NULL;
}

/* ---------------------------------------------------------------- cross references */

/* Size of segment i: its bytes when the model has them, else what segments[] says. */
static uint64_t segment_size(const ls_pte *p, uint32_t i)
{
    if (p->n_segment_data == p->segments.n && i < p->n_segment_data) return p->segment_data[i].n;
    return p->segments.v[i].size;
}

static int check_subsegments(const ls_pte *p, const ls_pte_subsegments *s, const char *name, const char *where,
                             ls_error *err)
{
    if (s->offsets.n == 0) return 0;
    if (s->segment_index >= p->segments.n)
        return ls_fail(err, "%s: %s.segment_index: %u is out of range (%u segments)", name, where, s->segment_index,
                       p->segments.n);
    uint64_t seg = segment_size(p, s->segment_index);
    for (uint32_t i = 0; i < s->offsets.n; i++)
        if (s->offsets.v[i] > seg)
            return ls_fail(err, "%s: %s.offsets[%u]: %llu is past the end of segment %u (%llu bytes)", name, where, i,
                           (unsigned long long)s->offsets.v[i], s->segment_index, (unsigned long long)seg);
    return 0;
}

static int check_indices(const int32_t *v, uint32_t n, uint32_t limit, bool allow_none, const char *name,
                         const char *where, const char *what, ls_error *err)
{
    for (uint32_t i = 0; i < n; i++) {
        if (allow_none && v[i] == -1) continue;
        if (v[i] < 0 || (uint32_t)v[i] >= limit)
            return ls_fail(err, "%s: %s[%u]: %s index %d is out of range (%u %ss)", name, where, i, what, v[i], limit,
                           what);
    }
    return 0;
}

static int check_index(int64_t v, uint32_t limit, const char *name, const char *where, const char *what,
                       ls_error *err)
{
    if (v < 0 || (uint64_t)v >= limit)
        return ls_fail(err, "%s: %s: %s index %lld is out of range (%u %ss)", name, where, what, (long long)v, limit,
                       what);
    return 0;
}

static int check_tensor(const ls_pte *p, const ls_pte_plan *plan, const ls_pte_tensor *t, const char *name,
                        const char *where, ls_error *err)
{
    if (t->has_allocation_info && t->allocation_info.memory_id >= plan->non_const_buffer_sizes.n)
        /* counted as verify counts it (pte_check.c check_planned): entry 0 is reserved, and the
         * runtime asks for buffer memory_id - 1 of the n - 1 after it */
        return ls_fail(err, "%s: %s.allocation_info.memory_id: %u names no planned buffer: non_const_buffer_sizes has %u "
                       "entr%s, the first reserved (ExecuTorch's runtime: \"id %u >= %u\")", name, where,
                       t->allocation_info.memory_id, plan->non_const_buffer_sizes.n,
                       plan->non_const_buffer_sizes.n == 1 ? "y" : "ies", t->allocation_info.memory_id - 1u,
                       plan->non_const_buffer_sizes.n ? plan->non_const_buffer_sizes.n - 1 : 0);
    if (t->data_buffer_idx == 0) return 0;
    if (t->has_extra_tensor_info && t->extra_tensor_info.location == LS_PTE_TENSOR_EXTERNAL) return 0;
    uint32_t idx = t->data_buffer_idx;
    if (t->has_allocation_info) {
        uint64_t m = t->has_extra_tensor_info ? t->extra_tensor_info.mutable_data_segments_idx : 0;
        if (m >= p->mutable_data_segments.n)
            return ls_fail(err, "%s: %s.data_buffer_idx: a mutable tensor with initial data, but mutable data segment "
                           "%llu does not exist (%u mutable_data_segments)", name, where, (unsigned long long)m,
                           p->mutable_data_segments.n);
        if (idx >= p->mutable_data_segments.v[m].offsets.n)
            return ls_fail(err,
                           "%s: %s.data_buffer_idx: %u is out of range (%u offsets in mutable_data_segments[%llu])",
                           name, where, idx, p->mutable_data_segments.v[m].offsets.n, (unsigned long long)m);
        return 0;
    }
    if (p->has_constant_segment && p->constant_segment.offsets.n > 0) {
        if (idx >= p->constant_segment.offsets.n)
            return ls_fail(err, "%s: %s.data_buffer_idx: %u is out of range (%u constant_segment offsets)", name,
                           where, idx, p->constant_segment.offsets.n);
    } else if (idx >= p->constant_buffer.n) {
        return ls_fail(err, "%s: %s.data_buffer_idx: %u is out of range (%u constant_buffer entries)", name, where,
                       idx, p->constant_buffer.n);
    }
    return 0;
}

static int check_plan(const ls_pte *p, const ls_pte_plan *plan, uint32_t pi, const char *name, ls_error *err)
{
    char where[256];
    uint32_t nv = plan->values.n;
    snprintf(where, sizeof where, "execution_plan[%u].inputs", pi);
    if (check_indices(plan->inputs.v, plan->inputs.n, nv, false, name, where, "value", err) < 0) return -1;
    snprintf(where, sizeof where, "execution_plan[%u].outputs", pi);
    if (check_indices(plan->outputs.v, plan->outputs.n, nv, false, name, where, "value", err) < 0) return -1;

    for (uint32_t vi = 0; vi < nv; vi++) {
        const ls_pte_value *v = &plan->values.v[vi];
        snprintf(where, sizeof where, "execution_plan[%u].values[%u].val", pi, vi);
        int rc = 0;
        switch (v->kind) {
        case LS_PTE_VAL_TENSOR: rc = check_tensor(p, plan, &v->tensor, name, where, err); break;
        case LS_PTE_VAL_INT_LIST:
            strncat(where, ".items", sizeof where - strlen(where) - 1);
            for (uint32_t i = 0; i < v->int_list.n && rc == 0; i++) {
                int64_t x = v->int_list.v[i];
                if (x < 0 || (uint64_t)x >= nv)
                    rc = ls_fail(err, "%s: %s[%u]: value index %lld is out of range (%u values; IntList items are "
                                 "value indices)", name, where, i, (long long)x, nv);
            }
            break;
        case LS_PTE_VAL_TENSOR_LIST:
        case LS_PTE_VAL_OPTIONAL_TENSOR_LIST:
            strncat(where, ".items", sizeof where - strlen(where) - 1);
            rc = check_indices(v->tensor_list.v, v->tensor_list.n, nv, v->kind == LS_PTE_VAL_OPTIONAL_TENSOR_LIST, name,
                               where, "value", err);
            break;
        default:
            if ((unsigned)v->kind > LS_PTE_VAL_OPTIONAL_TENSOR_LIST)
                rc = ls_fail(err, "%s: %s_type: unknown KernelTypes tag %d", name, where, (int)v->kind);
            break;
        }
        if (rc < 0) return -1;
    }

    for (uint32_t ci = 0; ci < plan->chains.n; ci++) {
        const ls_pte_chain *c = &plan->chains.v[ci];
        snprintf(where, sizeof where, "execution_plan[%u].chains[%u].inputs", pi, ci);
        if (check_indices(c->inputs.v, c->inputs.n, nv, false, name, where, "value", err) < 0) return -1;
        snprintf(where, sizeof where, "execution_plan[%u].chains[%u].outputs", pi, ci);
        if (check_indices(c->outputs.v, c->outputs.n, nv, false, name, where, "value", err) < 0) return -1;
        for (uint32_t ii = 0; ii < c->instructions.n; ii++) {
            const ls_pte_instruction *in = &c->instructions.v[ii];
            char at[160];
            snprintf(at, sizeof at, "execution_plan[%u].chains[%u].instructions[%u].instr_args", pi, ci, ii);
            int rc = 0;
            switch (in->kind) {
            case LS_PTE_KERNEL_CALL:
                snprintf(where, sizeof where, "%s.op_index", at);
                rc = check_index(in->kernel_call.op_index, plan->operators.n, name, where, "operator", err);
                snprintf(where, sizeof where, "%s.args", at);
                if (rc == 0)
                    rc = check_indices(in->kernel_call.args.v, in->kernel_call.args.n, nv, false, name, where, "value",
                                       err);
                break;
            case LS_PTE_DELEGATE_CALL:
                snprintf(where, sizeof where, "%s.delegate_index", at);
                rc = check_index(in->delegate_call.delegate_index, plan->delegates.n, name, where, "delegate", err);
                snprintf(where, sizeof where, "%s.args", at);
                if (rc == 0)
                    rc = check_indices(in->delegate_call.args.v, in->delegate_call.args.n, nv, false, name, where,
                                       "value", err);
                break;
            case LS_PTE_MOVE_CALL:
                snprintf(where, sizeof where, "%s.move_from", at);
                rc = check_index(in->move_call.move_from, nv, name, where, "value", err);
                snprintf(where, sizeof where, "%s.move_to", at);
                if (rc == 0) rc = check_index(in->move_call.move_to, nv, name, where, "value", err);
                break;
            case LS_PTE_JUMP_FALSE_CALL:
                snprintf(where, sizeof where, "%s.cond_value_index", at);
                rc = check_index(in->jump_false_call.cond_value_index, nv, name, where, "value", err);
                /* Jumping to one past the last instruction ends the chain. */
                snprintf(where, sizeof where, "%s.destination_instruction", at);
                if (rc == 0)
                    rc = check_index(in->jump_false_call.destination_instruction, c->instructions.n + 1, name, where,
                                     "instruction", err);
                break;
            case LS_PTE_FREE_CALL:
                snprintf(where, sizeof where, "%s.value_index", at);
                rc = check_index(in->free_call.value_index, nv, name, where, "value", err);
                break;
            default:
                if ((unsigned)in->kind > LS_PTE_FREE_CALL)
                    rc = ls_fail(err, "%s: %s_type: unknown InstructionArguments tag %d", name, at, (int)in->kind);
                break;
            }
            if (rc < 0) return -1;
        }
    }

    for (uint32_t di = 0; di < plan->delegates.n; di++) {
        const ls_pte_delegate *d = &plan->delegates.v[di];
        snprintf(where, sizeof where, "execution_plan[%u].delegates[%u].processed", pi, di);
        if (!d->has_processed) return ls_fail(err, "%s: %s: missing (where the delegate's data is)", name, where);
        if (d->processed.location == LS_PTE_INLINE) {
            if (d->processed.index >= p->backend_delegate_data.n)
                return ls_fail(err, "%s: %s.index: %u is out of range (%u backend_delegate_data entries)", name, where,
                               d->processed.index, p->backend_delegate_data.n);
        } else if (d->processed.location == LS_PTE_SEGMENT) {
            if (d->processed.index >= p->segments.n)
                return ls_fail(err, "%s: %s.index: %u is out of range (%u segments)", name, where, d->processed.index,
                               p->segments.n);
        } else {
            return ls_fail(err, "%s: %s.location: unknown DataLocation %d", name, where, d->processed.location);
        }
    }
    return 0;
}

int ls_pte_check(const ls_pte *p, const char *name, ls_error *err)
{
    if (!name) name = p->name ? p->name : "program";
    if (p->n_segment_data != 0 && p->n_segment_data != p->segments.n)
        return ls_fail(err, "%s: %u segment blobs for %u segments", name, p->n_segment_data, p->segments.n);
    if (p->has_constant_segment && check_subsegments(p, &p->constant_segment, name, "constant_segment", err) < 0)
        return -1;
    for (uint32_t i = 0; i < p->mutable_data_segments.n; i++) {
        char where[64];
        snprintf(where, sizeof where, "mutable_data_segments[%u]", i);
        if (check_subsegments(p, &p->mutable_data_segments.v[i], name, where, err) < 0) return -1;
    }
    for (uint32_t i = 0; i < p->named_data.n; i++)
        if (p->named_data.v[i].segment_index >= p->segments.n)
            return ls_fail(err, "%s: named_data[%u].segment_index: %u is out of range (%u segments)", name, i,
                           p->named_data.v[i].segment_index, p->segments.n);
    for (uint32_t i = 0; i < p->execution_plan.n; i++)
        if (check_plan(p, &p->execution_plan.v[i], i, name, err) < 0) return -1;
    return 0;
}

/* ---------------------------------------------------------------- data look-ups */

static const char *pname(const ls_pte *p)
{
    return p->name ? p->name : "program";
}

int ls_pte_segment_bytes(const ls_pte *p, uint32_t index, const uint8_t **data, size_t *size, ls_error *err)
{
    if (index >= p->n_segment_data)
        return ls_fail(err, "%s: segment %u does not exist (%u segments)", pname(p), index, p->n_segment_data);
    *data = p->segment_data[index].v;
    *size = (size_t)p->segment_data[index].n;
    return 0;
}

int ls_pte_delegate_blob(const ls_pte *p, const ls_pte_delegate *d, const uint8_t **data, size_t *size,
                         ls_error *err)
{
    const char *id = d->id ? d->id : "?";
    if (!d->has_processed) return ls_fail(err, "%s: delegate %s: no processed data reference", pname(p), id);
    if (d->processed.location == LS_PTE_INLINE) {
        if (d->processed.index >= p->backend_delegate_data.n)
            return ls_fail(err, "%s: delegate %s: inline data %u does not exist (%u entries)", pname(p), id,
                           d->processed.index, p->backend_delegate_data.n);
        *data = p->backend_delegate_data.v[d->processed.index].storage.v;
        *size = p->backend_delegate_data.v[d->processed.index].storage.n;
        return 0;
    }
    if (d->processed.location == LS_PTE_SEGMENT) {
        if (d->processed.index >= p->n_segment_data)
            return ls_fail(err, "%s: delegate %s: segment %u does not exist (%u segments)", pname(p), id,
                           d->processed.index, p->n_segment_data);
        return ls_pte_segment_bytes(p, d->processed.index, data, size, err);
    }
    return ls_fail(err, "%s: delegate %s: unknown data location %d", pname(p), id, d->processed.location);
}

int ls_pte_named_bytes(const ls_pte *p, const char *key, const uint8_t **data, size_t *size, ls_error *err)
{
    for (uint32_t i = 0; i < p->named_data.n; i++) {
        const ls_pte_named_data *nd = &p->named_data.v[i];
        if (!nd->key || strcmp(nd->key, key) != 0) continue;
        if (ls_pte_segment_bytes(p, nd->segment_index, data, size, err) < 0) return -1;
        return 1;
    }
    *data = NULL;
    *size = 0;
    return 0;
}

int ls_pte_tensor_nbytes(const ls_pte_tensor *t, uint64_t *nbytes, ls_error *err)
{
    size_t es = ls_et_scalar_type_size(t->scalar_type);
    if (!es) return ls_fail(err, "tensor has an unknown scalar type %d", t->scalar_type);
    uint64_t n = es;
    for (uint32_t i = 0; i < t->sizes.n; i++) {
        if (t->sizes.v[i] < 0) return ls_fail(err, "tensor size %d in dimension %u is negative", t->sizes.v[i], i);
        if (__builtin_mul_overflow(n, (uint64_t)t->sizes.v[i], &n))
            return ls_fail(err, "tensor of %u dimensions has more bytes than 64 bits can count", t->sizes.n);
    }
    *nbytes = n;
    return 0;
}

/* Bytes [start, start + nbytes) of segment seg, checked to lie inside it. */
static int subsegment_bytes(const ls_pte *p, uint32_t seg, uint64_t start, uint64_t nbytes, const char *what,
                            const uint8_t **data, size_t *size, ls_error *err)
{
    if (seg >= p->n_segment_data)
        return ls_fail(err, "%s: %s: segment %u does not exist (%u segments)", pname(p), what, seg, p->n_segment_data);
    const ls_pte_blob *b = &p->segment_data[seg];
    if (start > b->n || nbytes > b->n - start)
        return ls_fail(err, "%s: %s: %llu bytes at offset %llu do not fit in segment %u (%llu bytes)", pname(p), what,
                       (unsigned long long)nbytes, (unsigned long long)start, seg, (unsigned long long)b->n);
    *data = b->v ? b->v + start : NULL;
    *size = (size_t)nbytes;
    return 0;
}

int ls_pte_tensor_bytes(const ls_pte *p, const ls_pte_tensor *t, const uint8_t **data, size_t *size, ls_error *err)
{
    *data = NULL;
    *size = 0;
    if (t->has_extra_tensor_info && t->extra_tensor_info.location == LS_PTE_TENSOR_EXTERNAL)
        return ls_fail(err, "%s: tensor \"%s\" is EXTERNAL: its bytes are in a .ptd file", pname(p),
                       t->extra_tensor_info.fully_qualified_name ? t->extra_tensor_info.fully_qualified_name : "");
    uint32_t idx = t->data_buffer_idx;
    if (idx == 0) return 0;
    uint64_t nbytes;
    if (ls_pte_tensor_nbytes(t, &nbytes, err) < 0) return ls_fail_prefix(err, "%s: data_buffer_idx %u", pname(p), idx);
    char what[80];
    if (t->has_allocation_info) {
        uint64_t m = t->has_extra_tensor_info ? t->extra_tensor_info.mutable_data_segments_idx : 0;
        snprintf(what, sizeof what, "mutable data %u", idx);
        if (m >= p->mutable_data_segments.n || idx >= p->mutable_data_segments.v[m].offsets.n)
            return ls_fail(err, "%s: %s: not in mutable_data_segments[%llu]", pname(p), what, (unsigned long long)m);
        const ls_pte_subsegments *s = &p->mutable_data_segments.v[m];
        if (subsegment_bytes(p, s->segment_index, s->offsets.v[idx], nbytes, what, data, size, err) < 0) return -1;
        return 1;
    }
    snprintf(what, sizeof what, "constant %u", idx);
    if (p->has_constant_segment && p->constant_segment.offsets.n > 0) {
        const ls_pte_subsegments *s = &p->constant_segment;
        if (idx >= s->offsets.n)
            return ls_fail(err, "%s: %s: out of range (%u constant_segment offsets)", pname(p), what, s->offsets.n);
        if (subsegment_bytes(p, s->segment_index, s->offsets.v[idx], nbytes, what, data, size, err) < 0) return -1;
        return 1;
    }
    if (idx >= p->constant_buffer.n)
        return ls_fail(err, "%s: %s: out of range (%u constant_buffer entries)", pname(p), what, p->constant_buffer.n);
    const ls_pte_u8s *st = &p->constant_buffer.v[idx].storage;
    if (nbytes > st->n)
        return ls_fail(err, "%s: %s: tensor needs %llu bytes, constant_buffer[%u] has %u", pname(p), what,
                       (unsigned long long)nbytes, idx, st->n);
    *data = st->v;
    *size = (size_t)nbytes;
    return 1;
}
