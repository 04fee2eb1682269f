/* emit, the last of to_executorch's steps (ExecuTorch's emitter): the program as an ExecuTorch
 * Program with one execution plan, "forward".
 *
 *   values        placeholders first, then what each node makes, in graph order: tensors with
 *                 ExecuTorch's scalar-type numbering (planned ones with allocation_info in arena
 *                 1, constants with data_buffer_idx into the constant segment, mutated buffers
 *                 with both and their initial value in a mutable data segment), Int, Double,
 *                 Bool, String, Null, and lists whose IntList/TensorList items are value indices
 *                 (emit_values.c)
 *   instructions  one chain: a KernelCall per call (schema inputs, out arguments, then the
 *                 return value again), a DelegateCall per executorch_call_delegate (inputs, then
 *                 outputs); allocs and getitems make no instruction (emit_calls.c)
 *   operators     name "aten::add" + overload "out", once each
 *   delegates     backend id, the processed blob in a segment, compile specs
 *   segments      [constants][mutable data][delegate blobs...] (pte_write.c lays them out)
 *
 * This file assembles the Program from what those two made. The memory plan comes from
 * memory_plan's step. */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "emitter.h"

#define CONST_ALIGN 16

/* ---- the program */

/* pytree specs as ExecuTorch's C++ pytree writes them: (args tuple, kwargs dict) for inputs,
 * one leaf or a tuple of leaves for outputs. */
static char *tree_spec(uint32_t leaves, bool args_kwargs)
{
    ls_buf b = {0};
    if (args_kwargs) ls_buf_printf(&b, "T2#%u#0(", leaves);
    if (!args_kwargs && leaves == 1) {
        ls_buf_puts(&b, "$");
    } else {
        ls_buf_printf(&b, "T%u", leaves);
        for (uint32_t i = 0; i < leaves; i++) ls_buf_puts(&b, "#1");
        ls_buf_putc(&b, '(');
        for (uint32_t i = 0; i < leaves; i++) ls_buf_puts(&b, i ? ",$" : "$");
        ls_buf_putc(&b, ')');
    }
    if (args_kwargs) ls_buf_puts(&b, ",D0())");
    return ls_buf_take(&b);
}

static void build_pte(emitter *E, ls_pte *pte)
{
    memset(pte, 0, sizeof *pte);
    pte->name = ls_strdup(E->p->name ? E->p->name : "program");
    pte->execution_plan.v = ls_calloc(1, sizeof *pte->execution_plan.v);
    pte->execution_plan.n = 1;
    pte->execution_plan.present = true;
    ls_pte_plan *pl = &pte->execution_plan.v[0];
    pl->name = ls_strdup(E->p->method ? E->p->method : "forward"); /* a .pte's method keeps its name */
    pl->has_container_meta_type = true;
    pl->container_meta_type.encoded_inp_str = tree_spec(E->inputs.n, true);
    pl->container_meta_type.encoded_out_str = tree_spec(E->user_outputs, false);
    pl->values = (ls_pte_values){E->values.v, E->values.n, true};
    pl->inputs = (ls_pte_i32s){E->inputs.v, E->inputs.n, true};
    pl->outputs = (ls_pte_i32s){E->outputs.v, E->outputs.n, true};
    pl->chains.v = ls_calloc(1, sizeof *pl->chains.v);
    pl->chains.n = 1;
    pl->chains.present = true;
    pl->chains.v[0].inputs.present = pl->chains.v[0].outputs.present = true;
    pl->chains.v[0].instructions = (ls_pte_instructions){E->instrs.v, E->instrs.n, true};
    pl->operators = (ls_pte_operators){E->ops.v, E->ops.n, true};
    pl->delegates = (ls_pte_delegates){E->dels.v, E->dels.n, true};
    pl->non_const_buffer_sizes.v = ls_calloc(2, sizeof(int64_t));
    pl->non_const_buffer_sizes.v[1] = (int64_t)E->plan->arena;
    pl->non_const_buffer_sizes.n = 2;
    pl->non_const_buffer_sizes.present = true;
    memset(&E->values, 0, sizeof E->values);
    memset(&E->inputs, 0, sizeof E->inputs);
    memset(&E->outputs, 0, sizeof E->outputs);
    memset(&E->instrs, 0, sizeof E->instrs);
    memset(&E->ops, 0, sizeof E->ops);
    memset(&E->dels, 0, sizeof E->dels);

    pte->constant_buffer.present = pte->backend_delegate_data.present = true;
    /* segment 0: the constants (ExecuTorch writes it even when empty) */
    E->segs.v[0] = (ls_pte_blob){(uint8_t *)E->consts.bytes.s, E->consts.bytes.len, 0, NULL};
    E->consts.bytes.s = NULL;
    pte->has_constant_segment = true;
    pte->constant_segment.segment_index = 0;
    pte->constant_segment.offsets = (ls_pte_u64s){E->consts.offsets.v, E->consts.offsets.n, true};
    memset(&E->consts.offsets, 0, sizeof E->consts.offsets);
    if (E->mut_seg >= 0) {
        E->segs.v[E->mut_seg] = (ls_pte_blob){(uint8_t *)E->muts.bytes.s, E->muts.bytes.len, 0, NULL};
        E->muts.bytes.s = NULL;
        pte->mutable_data_segments.v = ls_calloc(1, sizeof *pte->mutable_data_segments.v);
        pte->mutable_data_segments.n = 1;
        pte->mutable_data_segments.present = true;
        pte->mutable_data_segments.v[0].segment_index = (uint32_t)E->mut_seg;
        pte->mutable_data_segments.v[0].offsets = (ls_pte_u64s){E->muts.offsets.v, E->muts.offsets.n, true};
        memset(&E->muts.offsets, 0, sizeof E->muts.offsets);
    }
    /* named data after the delegates' blobs, a segment per key, as exir's emitter lays them out
     * (cc_quantized.pte: segments 2 and 3 are the two weights its XNNPACK blob names) */
    uint32_t n_named = ls_named_data_count(E->named), kept = 0;
    pte->named_data.v = ls_calloc(n_named ? n_named : 1, sizeof *pte->named_data.v);
    for (uint32_t i = 0; i < n_named; i++) {
        const char *key = ls_named_data_key(E->named, i);
        /* what the file's .ptd holds stays in the .ptd: the runtime merges it in by key
         * (extension/module/module.cpp: MergedDataMap) */
        const ls_pte_named *from = E->file ? ls_pte_file_named(E->file, key) : NULL;
        if (from && from->ptd >= 0) continue;
        ls_blob *b = (ls_blob *)ls_named_data_blob(E->named, i); /* a reference is taken, the bytes stay */
        pte->named_data.v[kept].key = ls_strdup(key);
        pte->named_data.v[kept++].segment_index = E->segs.n;
        ls_pte_blob seg = {b->data, b->size, ls_named_data_alignment(E->named, i), ls_blob_ref(b)};
        ls_vec_push(&E->segs, seg);
    }
    pte->named_data.n = kept;
    pte->named_data.present = kept > 0;
    pte->segments.v = ls_calloc(E->segs.n ? E->segs.n : 1, sizeof *pte->segments.v);
    pte->segments.n = E->segs.n;
    pte->segments.present = true;
    uint64_t at = 0; /* as pte_write.c lays them out: each at a multiple of 128 from the segment base */
    for (uint32_t i = 0; i < E->segs.n; i++) {
        pte->segments.v[i].offset = (at + 127) / 128 * 128;
        pte->segments.v[i].size = E->segs.v[i].n;
        at = pte->segments.v[i].offset + E->segs.v[i].n;
    }
    pte->segment_data = E->segs.v;
    pte->n_segment_data = E->segs.n;
    memset(&E->segs, 0, sizeof E->segs);
}

static void free_emitter(emitter *E)
{
    ls_pte scrap;
    memset(&scrap, 0, sizeof scrap);
    /* whatever was not handed to the pte: free it through a throwaway pte */
    scrap.execution_plan.v = ls_calloc(1, sizeof *scrap.execution_plan.v);
    scrap.execution_plan.n = 1;
    ls_pte_plan *pl = &scrap.execution_plan.v[0];
    pl->values = (ls_pte_values){E->values.v, E->values.n, true};
    pl->inputs = (ls_pte_i32s){E->inputs.v, E->inputs.n, true};
    pl->outputs = (ls_pte_i32s){E->outputs.v, E->outputs.n, true};
    pl->operators = (ls_pte_operators){E->ops.v, E->ops.n, true};
    pl->delegates = (ls_pte_delegates){E->dels.v, E->dels.n, true};
    pl->chains.v = ls_calloc(1, sizeof *pl->chains.v);
    pl->chains.n = 1;
    pl->chains.v[0].instructions = (ls_pte_instructions){E->instrs.v, E->instrs.n, true};
    scrap.segment_data = E->segs.v;
    scrap.n_segment_data = E->segs.n;
    ls_pte_free(&scrap);
    free(E->del_sub.v);
    ls_ptrmap_free(&E->blob_seg);
    ls_ptrmap_free(&E->sub_ix);
    ls_ptrmap_free(&E->del_ix);
    lsx_store_free(&E->consts);
    lsx_store_free(&E->muts);
    free(E->val_of);
    ls_named_data_unref(E->named);
    ls_sig_free(&E->sig);
    lsx_bounds_free(E->bounds);
}

/* Emits p with plan into pte; *instrs (when not NULL) receives what each instruction is made of. */
static int emit_program(const ls_program *p, const ls_mem_plan *plan, const ls_pass_ctx *ctx, ls_pte *pte,
                        ls_emit_summary *sum, ls_instr_map **instrs, ls_error *err)
{
    emitter E = {.p = p, .plan = plan, .err = err, .mut_seg = -1, .init_buffers = ctx->init_mutable_buffers,
                 .buffer_names = ctx->mutable_buffer_names, .named = ls_named_data_ref(p->named_data),
                 .file = ls_program_pte_file(p)};
    E.bounds = lsx_bounds_new(p);
    ls_sig_build(&E.sig, p);
    for (uint32_t i = 0; i < p->n_subs; i++) ls_ptrmap_put(&E.sub_ix, p->subs[i].name, i);
    E.val_of = ls_malloc(sizeof *E.val_of * (p->next_id ? p->next_id : 1));
    for (uint32_t i = 0; i < p->next_id; i++) E.val_of[i] = -1;
    ls_vec_push(&E.segs, ((ls_pte_blob){0})); /* the constant segment */
    lsx_store_init(&E.consts, CONST_ALIGN);
    lsx_store_init(&E.muts, 1);
    int rc = 0;
    for (uint32_t i = 0; i < p->n_nodes && rc == 0; i++) {
        const ls_node *n = p->nodes[i];
        switch ((ls_node_kind)n->kind) {
        case LS_NODE_PLACEHOLDER: rc = lsx_emit_placeholder(&E, n); break;
        case LS_NODE_CALL: rc = lsx_emit_call(&E, n, i); break;
        case LS_NODE_OUTPUT: rc = lsx_emit_output(&E, n); break;
        case LS_NODE_GET_ATTR: break;
        }
    }
    if (rc == 0) {
        memset(sum, 0, sizeof *sum);
        sum->values = E.values.n;
        sum->instructions = E.instrs.n;
        sum->kernel_calls = E.kernel_calls;
        sum->delegate_calls = E.delegate_calls;
        sum->operators = E.ops.n;
        sum->delegates = E.dels.n;
        sum->constants = E.constants;
        sum->externals = E.externals;
        sum->constant_bytes = E.consts.bytes.len;
        sum->arena = plan->arena;
        sum->tensor_bytes = plan->tensor_bytes;
        sum->planned_tensors = plan->n_slots;
        sum->buffers_unwritten = E.buffers_unwritten;
        sum->buffer_unwritten = E.buffer_unwritten;
        build_pte(&E, pte);
        for (uint32_t i = 0; i < pte->n_segment_data; i++) sum->segments += pte->segment_data[i].n > 0;
        size_t size;
        if (ls_pte_file_size(pte, &size, err) != 0) {
            ls_fail_prefix(err, "emit: the program does not check");
            ls_pte_free(pte);
            rc = -1;
        } else {
            sum->file_bytes = size;
        }
    }
    if (rc == 0 && instrs) {
        *instrs = ls_instr_map_new(&E.instr_node.n, 1);
        if (E.instr_node.n) memcpy((*instrs)->node, E.instr_node.v, sizeof *E.instr_node.v * E.instr_node.n);
    }
    free(E.instr_node.v);
    free_emitter(&E);
    return rc;
}

int ls_pass_emit(const ls_program *in, ls_program **out, ls_pass_ctx *ctx)
{
    const ls_mem_plan *plan = ls_program_mem_plan(in);
    if (!plan) return ls_fail(ctx->err, "emit needs the memory plan: run memory_plan before emit");
    ls_pte *pte = ls_calloc(1, sizeof *pte);
    ls_emit_summary sum;
    ls_instr_map *instrs = NULL;
    if (emit_program(in, plan, ctx, pte, &sum, &instrs, ctx->err) != 0) {
        free(pte);
        return -1;
    }
    char a[32], b[32];
    const ls_pte_plan *pl = &pte->execution_plan.v[0];
    ls_report_add(ctx->report, NULL, NULL,
                  "%s: %u values, %u instruction%s (%u KernelCall%s, %u DelegateCall%s), %u operator%s", pl->name, sum.values,
                  sum.instructions, sum.instructions == 1 ? "" : "s", sum.kernel_calls, sum.kernel_calls == 1 ? "" : "s", sum.delegate_calls,
                  sum.delegate_calls == 1 ? "" : "s", sum.operators, sum.operators == 1 ? "" : "s");
    for (uint32_t d = 0; d < pl->delegates.n; d++) {
        const ls_pte_delegate *dl = &pl->delegates.v[d];
        ls_fmt_bytes(pte->segment_data[dl->processed.index].n, a, sizeof a);
        ls_report_add(ctx->report, NULL, NULL, "delegate %u: %s, its %s blob in segment %u", d, dl->id, a,
                      dl->processed.index);
    }
    ls_fmt_bytes(sum.constant_bytes, a, sizeof a);
    ls_report_add(ctx->report, NULL, NULL, "%u constant%s, %s in the constant segment", sum.constants,
                  sum.constants == 1 ? "" : "s", a);
    ls_fmt_bytes(sum.file_bytes, a, sizeof a);
    ls_fmt_bytes(sum.arena, b, sizeof b);
    ls_report_add(ctx->report, NULL, NULL, "the .pte is %s with %u segment%s holding data; arena %s", a, sum.segments,
                  sum.segments == 1 ? "" : "s", b);
    if (sum.buffers_unwritten)
        ls_report_add(ctx->report, NULL, NULL,
                      "buffer `%s`%s starts not all zero here, but the .pte holds no starting value for %s: ExecuTorch's "
                      "runtime starts %s as its planned memory is (--init-mutable-buffers writes it, exir's "
                      "et_init_buffer)", sum.buffer_unwritten ? sum.buffer_unwritten : "?",
                      sum.buffers_unwritten > 1 ? ls_internf(" and %u more", sum.buffers_unwritten - 1) : "",
                      sum.buffers_unwritten > 1 ? "them" : "it", sum.buffers_unwritten > 1 ? "them" : "it");
    ls_program *q = ls_program_copy(in);
    lsx_exec_attach(q, (ls_mem_plan *)plan, pte, &sum);
    q->instrs = instrs; /* the emitted program's instructions, as a .pte's loader records them */
    *out = q;
    return 0;
}
