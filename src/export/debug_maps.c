/* The maps ExecuTorch's emitter keeps for an ETRecord (exir/emit/_emitter.py): _add_debug_handle
 * gives every instruction the debug handle of its node (a KernelCall: the node's own, when it
 * has one; a DelegateCall: the handles of every call_function of the lowered module's
 * original program), and _add_delegate_map gives every delegate instruction {"name": the
 * backend id, "delegate_map": the lowered module's meta["debug_handle_map"]}. lowerscope's
 * BundledBackend numbers the nodes of its graph by position, so its map takes each call's
 * position to that call's handle. The JSON is written as Python's json.dumps writes the dicts
 * (int keys as strings, ", " and ": " separators). */
#include <inttypes.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "export.h"
#include "ops.h"

static const ls_submodule *called_sub(const ls_program *p, const ls_node *n)
{
    if (!n->op || n->op->id != LS_OP_call_delegate || !n->nargs || n->args[0].kind != LS_ARG_NODE) return NULL;
    const ls_node *ga = ls_program_node(p, n->args[0].v.node);
    return ga && ga->kind == LS_NODE_GET_ATTR ? ls_program_sub(p, ga->target) : NULL;
}

int ls_debug_maps_json(const ls_program *p, const char *method, char **debug_handle_map, char **delegate_map,
                       ls_error *err)
{
    *debug_handle_map = *delegate_map = NULL;
    const ls_instr_map *im = p->instrs;
    if (!im) return ls_fail(err, "%s: the program was not emitted: no instructions to map", p->name ? p->name : "program");
    ls_buf h = {0}, d = {0};
    ls_buf_puts(&h, "{");
    ls_buf_json_str(&h, method ? method : "forward");
    ls_buf_puts(&h, ": {");
    ls_buf_puts(&d, "{");
    ls_buf_json_str(&d, method ? method : "forward");
    ls_buf_puts(&d, ": {");
    bool hfirst = true, dfirst = true;
    uint32_t total = im->chain_first[im->n_chains];
    for (uint32_t i = 0; i < total; i++) {
        const ls_node *n = im->node[i] ? ls_program_node(p, im->node[i]) : NULL;
        if (!n) continue;
        const ls_submodule *s = called_sub(p, n);
        if (!s && !n->debug_handle) continue;
        ls_buf_printf(&h, "%s\"%u\": ", hfirst ? "" : ", ", i);
        hfirst = false;
        if (!s) {
            ls_buf_printf(&h, "%" PRId64, n->debug_handle);
            continue;
        }
        ls_buf_puts(&h, "[");
        ls_buf_printf(&d, "%s\"%u\": {\"name\": ", dfirst ? "" : ", ", i);
        dfirst = false;
        ls_buf_json_str(&d, s->backend_id);
        ls_buf_puts(&d, ", \"delegate_map\": {");
        bool first = true, dm_first = true;
        for (uint32_t k = 0; s->program && k < s->program->n_nodes; k++) {
            const ls_node *m = s->program->nodes[k];
            if (m->kind != LS_NODE_CALL || !m->debug_handle) continue;
            ls_buf_printf(&h, "%s%" PRId64, first ? "" : ", ", m->debug_handle);
            first = false;
            ls_buf_printf(&d, "%s\"%u\": [%" PRId64 "]", dm_first ? "" : ", ", k, m->debug_handle);
            dm_first = false;
        }
        ls_buf_puts(&h, "]");
        ls_buf_puts(&d, "}}");
    }
    ls_buf_puts(&h, "}}");
    ls_buf_puts(&d, "}}");
    *debug_handle_map = ls_buf_take(&h);
    *delegate_map = ls_buf_take(&d);
    return 0;
}
