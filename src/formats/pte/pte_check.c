/* The runtime's load checks (include/pte_check.h): what Program::load, Program::method_meta,
 * validate_program, Method::parse_values and the tensor parser check of the program and of
 * each method's values. The instructions, operators and delegates are pte_check_code.c.
 * Every rule names the pytorch/executorch file and function it transcribes; messages keep
 * the runtime's words (its format strings), with what lowerscope adds after them. */
#include <inttypes.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "pte_check_internal.h"
#include "ptrmap.h"

void lspc_issue(lspc *C, ls_pte_issue_kind kind, const char *rule, const char *name, const char *library,
                const char *where, const char *fmt, ...)
{
    ls_pte_check_report *r = C->r;
    if (kind == LS_PTE_FAILS) r->n_fails++;
    else r->n_needs++;
    if (r->n >= LS_PTE_CHECK_KEEP) return;
    char msg[LS_ERR_MAX];
    va_list ap;
    va_start(ap, fmt);
    vsnprintf(msg, sizeof msg, fmt, ap);
    va_end(ap);
    char at[300];
    if (C->plan) snprintf(at, sizeof at, "%s%s%s", C->plan_name, where && *where ? ": " : "", where ? where : "");
    else snprintf(at, sizeof at, "%s", where && *where ? where : "program");
    ls_pte_issue is = {kind, ls_strdup(at), ls_strdup(msg), rule, name ? ls_intern(name) : NULL, library};
    if (r->n % 64 == 0) r->v = ls_realloc(r->v, sizeof *r->v * (r->n + 64));
    r->v[r->n++] = is;
}

/* ---------------------------------------------------------------- the program */

static uint64_t segment_size(const ls_pte *p, uint32_t i)
{
    if (p->n_segment_data == p->segments.n && i < p->n_segment_data) return p->segment_data[i].n;
    return p->segments.v[i].size;
}

static void check_program(lspc *C)
{
    const ls_pte *p = C->p;
    /* Program::load: constants live in constant_segment when it has more than the placeholder
     * offset, else in constant_buffer; not both. */
    if (p->has_constant_segment && p->constant_segment.offsets.n > 1) {
        if (p->constant_buffer.n > 0)
            lspc_fail(C, "program.cpp Program::load", "constant_buffer",
                      "constant_buffer contains %u items, constant_segment.offsets contains %u items. Only one should "
                      "be used.", p->constant_buffer.n, p->constant_segment.offsets.n);
        if (p->segments.n == 0)
            lspc_fail(C, "program.cpp Program::load", "segments", "No segments in program");
        else if (p->constant_segment.segment_index >= p->segments.n)
            lspc_fail(C, "program.cpp Program::load", "constant_segment.segment_index",
                      "Constant segment index %u invalid for program segments range %u",
                      p->constant_segment.segment_index, p->segments.n);
    }
    /* Program::LoadSegment / the DataLoader: a segment lies inside the segment data. */
    if (p->has_extended_header && p->segment_data_size > 0)
        for (uint32_t i = 0; i < p->segments.n; i++) {
            uint64_t end;
            if (__builtin_add_overflow(p->segments.v[i].offset, p->segments.v[i].size, &end) ||
                end > p->segment_data_size) {
                char w[48];
                snprintf(w, sizeof w, "segments[%u]", i);
                lspc_fail(C, "program.cpp Program::LoadSegment", w,
                          "segment %u (%" PRIu64 " bytes at offset %" PRIu64 ") runs past the %" PRIu64
                          " bytes of segment data: the data loader cannot load it", i, p->segments.v[i].size,
                          p->segments.v[i].offset, p->segment_data_size);
            }
        }
    /* PteDataMap (pte_data_map.cpp): each named entry is a segment of the program. */
    for (uint32_t i = 0; i < p->named_data.n; i++) {
        const ls_pte_named_data *nd = &p->named_data.v[i];
        char w[48];
        snprintf(w, sizeof w, "named_data[%u]", i);
        if (!nd->key) lspc_fail(C, "pte_data_map.cpp PteDataMap::get_data", w, "named data without a key");
        if (nd->segment_index >= p->segments.n)
            lspc_fail(C, "pte_data_map.cpp PteDataMap::get_data", w,
                      "Segment index %u out of range (>= %u) for named data \"%s\"", nd->segment_index,
                      p->segments.n, nd->key ? nd->key : "");
    }
    if (!p->execution_plan.present && p->execution_plan.n == 0)
        lspc_fail(C, "program_validation.cpp validate_program", "execution_plan", "Program has null execution_plan");
}

/* ---------------------------------------------------------------- values */

/* Element size of a ScalarType the runtime accepts (isValid), 0 when it does not. c10's
 * complex types are valid though lowerscope does not compute with them. */
static size_t elem_size(int code)
{
    size_t s = ls_et_scalar_type_size(code);
    if (s) return s;
    if (code == 8) return 4;  /* ComplexHalf */
    if (code == 9) return 8;  /* ComplexFloat */
    if (code == 10) return 16; /* ComplexDouble */
    return 0;
}

static void check_planned(lspc *C, const ls_pte_plan *pl, const ls_pte_tensor *t, uint64_t nbytes, const char *w)
{
    C->r->planned++;
    /* getMemPlannedPtr (tensor_parser_exec_aten.cpp) asks buffer memory_id - 1, an index into
     * the buffers MethodMeta sizes from non_const_buffer_sizes[1..] (method_meta.cpp
     * memory_planned_buffer_size): memory_id 0 wraps to 4294967295. */
    uint32_t id = t->allocation_info.memory_id - 1u;
    uint32_t nbuf = pl->non_const_buffer_sizes.n ? pl->non_const_buffer_sizes.n - 1 : 0;
    if (id >= nbuf) {
        lspc_fail(C, "hierarchical_allocator.h HierarchicalAllocator::get_offset_address", w,
                  "id %" PRIu32 " >= %" PRIu32 "%s", id, nbuf,
                  t->allocation_info.memory_id == 0 ? " (memory_id 0 is reserved: planned memory_ids start at 1)"
                                                    : " (no such planned buffer in non_const_buffer_sizes)");
        return;
    }
    uint64_t off = (uint64_t)t->allocation_info.memory_offset_high << 32 | t->allocation_info.memory_offset_low;
    int64_t size = pl->non_const_buffer_sizes.v[t->allocation_info.memory_id];
    uint64_t end;
    bool over = __builtin_add_overflow(off, nbytes, &end);
    /* the message is get_offset_address's, which is given the id less 1 and prints that */
    if (over || size < 0 || end > (uint64_t)size)
        lspc_fail(C, "hierarchical_allocator.h HierarchicalAllocator::get_offset_address", w,
                  "offset_bytes (%" PRIu64 ") + size_bytes (%" PRIu64 ") >= allocator size (%" PRId64
                  ") for memory_id %" PRIu32 " (the file's memory_id %" PRIu32 ", less 1)%s", off, nbytes, size, id,
                  t->allocation_info.memory_id, over ? " (the sum overflows 64 bits)" : "");
}

/* Program::get_constant_buffer_data (program.cpp): the constant segment when Program::load
 * loaded one (more than the placeholder offset), else the deprecated constant_buffer. */
static void check_constant(lspc *C, const ls_pte_tensor *t, uint64_t nbytes, const char *w)
{
    const ls_pte *p = C->p;
    uint32_t idx = t->data_buffer_idx;
    if (p->has_constant_segment && p->constant_segment.offsets.n > 1) {
        const ls_pte_subsegments *s = &p->constant_segment;
        if (idx >= s->offsets.n) {
            lspc_fail(C, "program.cpp Program::get_constant_buffer_data", w,
                      "Constant segment buffer index %u invalid for program constant segment range %u", idx,
                      s->offsets.n);
            return;
        }
        if (s->segment_index >= p->segments.n) return; /* reported with the program */
        uint64_t seg = segment_size(p, s->segment_index), end;
        if (__builtin_add_overflow(s->offsets.v[idx], nbytes, &end) || end > seg)
            lspc_fail(C, "program.cpp Program::get_constant_buffer_data", w,
                      "Constant segment offset %" PRIu64 " + size_bytes %" PRIu64
                      " invalid for program constant segment size %" PRIu64, s->offsets.v[idx], nbytes, seg);
        return;
    }
    if (idx >= p->constant_buffer.n) {
        lspc_fail(C, "program.cpp Program::get_constant_buffer_data", w,
                  "Constant buffer index %u invalid for program constant buffer range %u", idx, p->constant_buffer.n);
        return;
    }
    if (p->constant_buffer.v[idx].storage.n > nbytes)
        lspc_fail(C, "program.cpp Program::get_constant_buffer_data", w,
                  "Constant buffer size %u larger than allocated nbytes %" PRIu64, p->constant_buffer.v[idx].storage.n,
                  nbytes);
}

/* Program::load_mutable_subsegment_into (program.cpp), which the tensor parser calls with
 * mutable_data_segments index 0 for a planned tensor with initial data. */
static void check_initial_state(lspc *C, const ls_pte_tensor *t, uint64_t nbytes, const char *w)
{
    const ls_pte *p = C->p;
    const char *rule = "program.cpp Program::load_mutable_subsegment_into";
    if (p->segments.n == 0) {
        lspc_fail(C, rule, w, "No segments in program");
        return;
    }
    if (p->mutable_data_segments.n == 0) {
        lspc_fail(C, rule, w, "No mutable data segments in program");
        return;
    }
    const ls_pte_subsegments *s = &p->mutable_data_segments.v[0];
    if (!s->offsets.present && s->offsets.n == 0) {
        lspc_fail(C, rule, w, "No offsets in mutable data segment");
        return;
    }
    if (t->data_buffer_idx >= s->offsets.n) {
        lspc_fail(C, rule, w, "offset index %u out of range >= %u", t->data_buffer_idx, s->offsets.n);
        return;
    }
    if (s->segment_index >= p->segments.n) {
        lspc_fail(C, rule, w, "Segment index %u out of range (>= %u)", s->segment_index, p->segments.n);
        return;
    }
    uint64_t seg = segment_size(p, s->segment_index), off = s->offsets.v[t->data_buffer_idx], end;
    if (__builtin_add_overflow(off, nbytes, &end) || end > seg)
        lspc_fail(C, rule, w, "offset %" PRIu64 " + size %" PRIu64 " out of range > %" PRIu64, off, nbytes, seg);
}

static void check_tensor(lspc *C, const ls_pte_plan *pl, const ls_pte_tensor *t, const char *w)
{
    const char *parse = "tensor_parser_portable.cpp parseTensor";
    if (t->storage_offset != 0)
        lspc_fail(C, parse, w, "Non-zero storage offset %" PRId32 " not supported", t->storage_offset);
    size_t es = elem_size(t->scalar_type);
    if (!es) lspc_fail(C, parse, w, "Invalid or unsupported ScalarType %d", t->scalar_type);
    if (t->shape_dynamism == LS_PTE_DYNAMIC_UNBOUND)
        lspc_fail(C, parse, w, "Fully dynamic tensor shapes not yet supported: T175194371");
    if (!t->sizes.present && t->sizes.n == 0) {
        lspc_fail(C, parse, w, "Missing sizes field");
        return;
    }
    if (t->sizes.n > 16)
        lspc_fail(C, parse, w, "Tensor rank too large %u > 16", t->sizes.n); /* kTensorDimensionLimit */
    if (!t->dim_order.present && t->dim_order.n == 0)
        lspc_fail(C, parse, w, "Missing dim_order field");
    else if (t->dim_order.n != t->sizes.n)
        lspc_fail(C, parse, w, "dim_order size %u != dim %u", t->dim_order.n, t->sizes.n);
    else {
        /* dim_order_to_stride (dim_order_util.h) wants a permutation of 0..dim-1 */
        uint32_t seen = 0;
        bool perm = true;
        for (uint32_t d = 0; d < t->dim_order.n && perm; d++) {
            uint8_t v = t->dim_order.v[d];
            if (v >= t->dim_order.n || v >= 32 || (seen >> v & 1u)) perm = false;
            else seen |= 1u << v;
        }
        if (!perm) lspc_fail(C, parse, w, "dim_order_to_stride returned invalid status (dim_order is not a permutation)");
    }
    uint64_t numel = 1;
    bool bad = false;
    for (uint32_t d = 0; d < t->sizes.n; d++) {
        if (t->sizes.v[d] < 0) {
            lspc_fail(C, parse, w, "Negative size[%u] %" PRId32, d, t->sizes.v[d]);
            bad = true;
            break;
        }
        if (__builtin_mul_overflow(numel, (uint64_t)t->sizes.v[d], &numel) || numel > INT64_MAX) {
            lspc_fail(C, "program_validation.cpp validate_tensor", w, "numel overflowed at dimension %u with size %d",
                      d, t->sizes.v[d]);
            bad = true;
            break;
        }
    }
    uint64_t nbytes = 0;
    if (!bad && es && __builtin_mul_overflow(numel, (uint64_t)es, &nbytes)) {
        lspc_fail(C, "program_validation.cpp validate_tensor", w, "nbytes overflowed: numel %" PRIu64
                  " with element size %zu", numel, es);
        bad = true;
    }
    if (bad || !es) return;
    /* getTensorDataPtr (tensor_parser_exec_aten.cpp): where the tensor's bytes come from */
    bool external = t->has_extra_tensor_info && t->extra_tensor_info.location == LS_PTE_TENSOR_EXTERNAL;
    if (external) {
        if (!t->extra_tensor_info.fully_qualified_name)
            lspc_fail(C, "tensor_parser_exec_aten.cpp getTensorDataPtr", w,
                      "Fully qualified name of external tensor is null");
        if (t->has_allocation_info) check_planned(C, pl, t, nbytes, w);
        return;
    }
    if (t->data_buffer_idx > 0 && !t->has_allocation_info) {
        check_constant(C, t, nbytes, w);
    } else if (t->has_allocation_info) {
        check_planned(C, pl, t, nbytes, w);
        if (t->data_buffer_idx > 0) check_initial_state(C, t, nbytes, w);
    }
}

/* validate_program (program_validation.cpp) and Method::parse_values (method.cpp). */
static void check_values(lspc *C, const ls_pte_plan *pl)
{
    uint32_t nv = pl->values.n;
    if (!pl->values.present && nv == 0)
        lspc_fail(C, "program_validation.cpp validate_program", "values", "Execution plan %u has null values table",
                  C->plan_index);
    const char *parse = "method.cpp Method::parse_values";
    for (uint32_t i = 0; i < nv; i++) {
        const ls_pte_value *v = &pl->values.v[i];
        char w[64];
        snprintf(w, sizeof w, "values[%u]", i);
        C->r->values++;
        switch ((int)v->kind) {
        case LS_PTE_VAL_NONE: lspc_fail(C, "method.cpp Method::get_num_external_constants", w, "Null value at index %u", i); break;
        case LS_PTE_VAL_TENSOR: check_tensor(C, pl, &v->tensor, w); break;
        case LS_PTE_VAL_STRING:
            if (!v->string_val) lspc_fail(C, parse, w, "Missing string at index %u", i);
            break;
        case LS_PTE_VAL_INT_LIST:
            if (!v->int_list.present && v->int_list.n == 0) lspc_fail(C, parse, w, "Missing list at index %u", i);
            for (uint32_t j = 0; j < v->int_list.n; j++) {
                int64_t x = v->int_list.v[j];
                if (x < 0 || (uint64_t)x >= nv)
                    lspc_fail(C, parse, w, "Invalid value index %" PRId64 " for IntList %u index %u", x, i, j);
                else if (pl->values.v[x].kind != LS_PTE_VAL_INT)
                    /* BoxedEvalueList<int64_t>::get unboxes every item with toInt() (evalue.h) */
                    lspc_fail(C, "evalue.h BoxedEvalueList::get", w,
                              "IntList %u item %u is value %" PRId64 ", a %s: the list unboxes it as an Int", i, j, x,
                              lspc_kind_name(pl->values.v[x].kind));
            }
            break;
        case LS_PTE_VAL_DOUBLE_LIST:
        case LS_PTE_VAL_BOOL_LIST:
            if (!v->double_list.present && v->double_list.n == 0 && v->kind == LS_PTE_VAL_DOUBLE_LIST)
                lspc_fail(C, parse, w, "Missing list at index %u", i);
            if (!v->bool_list.present && v->bool_list.n == 0 && v->kind == LS_PTE_VAL_BOOL_LIST)
                lspc_fail(C, parse, w, "Missing list at index %u", i);
            break;
        case LS_PTE_VAL_TENSOR_LIST:
        case LS_PTE_VAL_OPTIONAL_TENSOR_LIST: {
            bool opt = v->kind == LS_PTE_VAL_OPTIONAL_TENSOR_LIST;
            if (!v->tensor_list.present && v->tensor_list.n == 0)
                lspc_fail(C, parse, w, "Missing list at index %u", i);
            for (uint32_t j = 0; j < v->tensor_list.n; j++) {
                int32_t x = v->tensor_list.v[j];
                if (opt && x == -1) continue;
                if (x < 0 || (uint32_t)x >= nv)
                    lspc_fail(C, "program_validation.cpp validate_program", w,
                              "TensorList item %u has out-of-bounds index %d (values size %u) in execution plan %u", j,
                              x, nv, C->plan_index);
                else if (pl->values.v[x].kind != LS_PTE_VAL_TENSOR)
                    lspc_fail(C, "program_validation.cpp validate_program", w,
                              "TensorList item %u references non-Tensor evalue (type %d) at index %d in execution plan %u",
                              j, (int)pl->values.v[x].kind, x, C->plan_index);
            }
            break;
        }
        case LS_PTE_VAL_NULL:
        case LS_PTE_VAL_INT:
        case LS_PTE_VAL_BOOL:
        case LS_PTE_VAL_DOUBLE: break;
        default: lspc_fail(C, parse, w, "Unknown KernelTypes value %u at index %u", (unsigned)v->kind - 1, i); break;
        }
    }
}

/* Program::method_meta (program.cpp) and MethodMeta::input_tag / output_tag (method_meta.cpp). */
static void check_meta(lspc *C, const ls_pte_plan *pl)
{
    const char *rule = "program.cpp Program::method_meta";
    if (!pl->name) lspc_fail(C, rule, "name", "Missing name field");
    if (!pl->non_const_buffer_sizes.present && pl->non_const_buffer_sizes.n == 0)
        lspc_fail(C, rule, "non_const_buffer_sizes", "Missing non_const_buffer_sizes field");
    for (uint32_t i = 1; i < pl->non_const_buffer_sizes.n; i++)
        if (pl->non_const_buffer_sizes.v[i] < 0)
            lspc_fail(C, "method_meta.cpp MethodMeta::memory_planned_buffer_size", "non_const_buffer_sizes",
                      "buffer %u has size %" PRId64 ": no buffer can be allocated for it", i - 1,
                      pl->non_const_buffer_sizes.v[i]);
    if (!pl->inputs.present && pl->inputs.n == 0) lspc_fail(C, rule, "inputs", "Missing inputs field");
    if (!pl->outputs.present && pl->outputs.n == 0) lspc_fail(C, rule, "outputs", "Missing outputs field");
    for (int io = 0; io < 2; io++) {
        const ls_pte_i32s *v = io ? &pl->outputs : &pl->inputs;
        for (uint32_t i = 0; i < v->n; i++) {
            char w[48];
            snprintf(w, sizeof w, "%s[%u]", io ? "outputs" : "inputs", i);
            int32_t x = v->v[i];
            if (x < 0 || (uint32_t)x >= pl->values.n) {
                lspc_fail(C, io ? "method_meta.cpp MethodMeta::output_tag" : "method_meta.cpp MethodMeta::input_tag", w,
                          "internal value index %d out of range [0,%u) for %s %u", x, pl->values.n,
                          io ? "output" : "input", i);
                continue;
            }
            int k = pl->values.v[x].kind;
            if (!io && k != LS_PTE_VAL_TENSOR && k != LS_PTE_VAL_NULL && k != LS_PTE_VAL_INT && k != LS_PTE_VAL_BOOL &&
                k != LS_PTE_VAL_DOUBLE && k != LS_PTE_VAL_STRING)
                lspc_fail(C, "method.cpp Method::set_input", w,
                          "Input %u was expected to be a Tensor or primitive but was %s.", i, lspc_kind_name(k));
        }
    }
}

/* ---------------------------------------------------------------- the whole file */

const char *lspc_kind_name(int kind)
{
    const char *n = ls_pte_val_kind_name(kind);
    return n ? n : "unknown kind";
}

uint32_t ls_pte_runtime_check(const ls_pte *pte, ls_pte_check_report *report)
{
    memset(report, 0, sizeof *report);
    lspc C = {.p = pte, .r = report};
    check_program(&C);
    ls_strmap names = {0};
    for (uint32_t i = 0; i < pte->execution_plan.n; i++) {
        const ls_pte_plan *pl = &pte->execution_plan.v[i];
        char pname[160];
        snprintf(pname, sizeof pname, "%s", pl->name ? pl->name : "");
        if (!pl->name) snprintf(pname, sizeof pname, "execution_plan[%u]", i);
        C.plan = pl;
        C.plan_index = i;
        C.plan_name = pname;
        report->methods++;
        if (pl->name) {
            bool added;
            ls_strmap_add(&names, pl->name, ls_strmap_hash(pl->name, strlen(pl->name)), i, &added);
            if (!added)
                lspc_fail(&C, "program.cpp get_execution_plan", "name",
                          "a second method named '%s': Program::load_method finds the first one only", pl->name);
        }
        check_meta(&C, pl);
        check_values(&C, pl);
        lspc_check_code(&C, pl);
    }
    ls_strmap_free(&names);
    return report->n_fails;
}

void ls_pte_check_report_free(ls_pte_check_report *r)
{
    for (uint32_t i = 0; i < r->n; i++) {
        free(r->v[i].where);
        free(r->v[i].msg);
    }
    free(r->v);
    memset(r, 0, sizeof *r);
}
