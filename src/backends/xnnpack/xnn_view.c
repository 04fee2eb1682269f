/* The inside of an XNNPACK delegate as a program to look at (ls_xnn_view): one call node per
 * xnode, its target the xnode's type ("XNNConv2d"), its arguments the node's fields by their
 * schema names (input ids as edges, padding, strides, groups, perm, output_min/max, flags),
 * its value the output's datatype and shape as serialized (NHWC where XNNPACK computes in
 * NHWC), and a string `out` saying its datatype and quantization; the debug handle links it to
 * the Edge node it came from. External inputs are user inputs, constants are constants holding
 * their bytes (so the UI shows their sizes and hashes), named after their named_data key or
 * their place in the blob. Its nodes have no operator: they are shown, never run. */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "namer.h"
#include "ptrmap.h"
#include "xnn_internal.h"

static ls_dtype view_dtype(uint8_t dt)
{
    ls_dtype d = lsx_storage(dt);
    return d == LS_DT_UNKNOWN ? LS_DT_U8 : d;
}

static ls_tmeta value_meta(const ls_xnn_value *v)
{
    int64_t dims[LS_XNN_MAX_DIMS];
    for (unsigned i = 0; i < v->ndim; i++) dims[i] = v->dims[i];
    ls_tmeta m;
    ls_tmeta_init(&m, view_dtype(v->datatype), v->ndim, dims);
    return m;
}

static ls_arg named_int(const char *name, int64_t v)
{
    ls_arg a = ls_arg_int(v);
    a.name = ls_intern(name);
    return a;
}

static ls_arg named_float(const char *name, double v)
{
    ls_arg a = ls_arg_float(v);
    a.name = ls_intern(name);
    return a;
}

static ls_arg named_ints(const char *name, const uint32_t *v, uint32_t n)
{
    int64_t w[LS_XNN_MAX_DIMS];
    for (uint32_t i = 0; i < n; i++) w[i] = v[i];
    ls_arg a = ls_arg_ints(w, n);
    a.name = ls_intern(name);
    return a;
}

/* the schema's names of a node's inputs, in n->in order */
static const char *in_name(uint8_t type, unsigned k)
{
    switch (lsx_node_layout(type)) {
    case LSX_L_2X1: return k ? "input2_id" : "input1_id";
    case LSX_L_FC:
    case LSX_L_CONV: return k == 0 ? "input1_id" : k == 1 ? "filter_id" : "bias_id";
    case LSX_L_CAT: {
        static const char *const n[] = {"input1_id", "input2_id", "input3_id", "input4_id", "input5_id"};
        return n[k < 5 ? k : 4];
    }
    case LSX_L_SDPA: {
        static const char *const n[] = {"query_id", "key_id", "value_id", "scale_id", "mask_id"};
        return n[k < 5 ? k : 4];
    }
    default: return "input_id";
    }
}

int ls_xnn_view(const ls_xnn_graph *g, const ls_blob *blob, const ls_named_data *named, const char *name,
                ls_program **out, ls_error *err)
{
    (void)err;
    ls_program *p = ls_program_new(name ? name : "xnnpack", LS_DIALECT_NONE);
    ls_namer *names = ls_namer_new(NULL);
    uint32_t *node_of = ls_calloc(g->n_values ? g->n_values : 1, sizeof *node_of);
    LS_VEC(ls_input_spec) ins = {0};
    ls_ptrmap targets = {0};
    /* external inputs in external-id order, then constants */
    for (uint32_t pass = 0; pass < 2; pass++)
        for (uint32_t i = 0; i < g->n_values; i++) {
            const ls_xnn_value *v = &g->values[i];
            bool input = v->flags & LS_XNN_FLAG_EXTERNAL_INPUT;
            if (pass == 0 ? !input : !v->constant_idx) continue;
            ls_tmeta m = value_meta(v);
            char nm[48];
            snprintf(nm, sizeof nm, input ? "input_%u" : "const_%u", input ? v->external_id : v->id);
            ls_node *ph = ls_node_new(p, LS_NODE_PLACEHOLDER, ls_namer_take(names, nm), NULL);
            ls_node_set_val(ph, &m);
            ls_input_spec s = {.kind = input ? LS_IN_USER_INPUT : LS_IN_CONSTANT_TENSOR, .name = ph->name};
            if (!input) {
                ls_buf t = {0};
                const ls_xnn_constant *c = v->constant_idx < g->n_constants ? &g->constants[v->constant_idx] : NULL;
                if (c && c->named_key) ls_buf_puts(&t, c->named_key);
                else ls_buf_printf(&t, "constant_data[%u]", v->constant_idx);
                /* a target names one constant of the program: bytes two values share get the value's id */
                if (ls_ptrmap_has(&targets, ls_intern(t.s))) ls_buf_printf(&t, " (value %u)", v->id);
                ls_ptrmap_put(&targets, ls_intern(t.s), 1);
                if (v->quant) {
                    ls_buf_puts(&t, " (");
                    ls_xnn_value_text(v, &t);
                    ls_buf_putc(&t, ')');
                }
                s.target = ls_intern(t.s);
                ls_buf_free(&t);
                uint64_t size;
                ls_error e2;
                const uint8_t *bytes = ls_xnn_constant_bytes(g, blob, named, v->constant_idx, &size, &e2);
                ls_tensor *data = NULL;
                if (bytes && v->datatype != LS_XNN_DT_QCINT4 && v->datatype != LS_XNN_DT_QBINT4 && size >= ls_xnn_value_nbytes(v)) {
                    ls_error e3;
                    data = ls_tensor_new(m.dtype, m.ndim, m.sizes, &e3);
                    if (data) memcpy(data->data, bytes, data->nbytes);
                }
                ls_program_put_constant(p, s.target, data, &m);
                ls_tensor_unref(data);
            }
            ls_vec_push(&ins, s);
            node_of[i] = ph->id;
            ls_program_append(p, ph);
        }
    for (uint32_t i = 0; i < g->n_nodes; i++) {
        const ls_xnn_node *n = &g->nodes[i];
        const char *tn = ls_xnn_node_type_name(n->type);
        char tbuf[48];
        if (!tn) snprintf(tbuf, sizeof tbuf, "xnode_type_%u", n->type), tn = tbuf;
        char base[64];
        snprintf(base, sizeof base, "%s", tn);
        for (char *c = base; *c; c++) *c = (char)(*c >= 'A' && *c <= 'Z' ? *c - 'A' + 'a' : *c);
        ls_node *cn = ls_node_new(p, LS_NODE_CALL, ls_namer_take(names, base), ls_intern(tn));
        LS_VEC(ls_arg) a = {0};
        for (unsigned k = 0; k < n->n_in; k++) {
            int32_t pos = ls_xnn_value_pos(g, n->in[k]);
            ls_arg x = pos >= 0 && node_of[pos] ? ls_arg_node(node_of[pos]) : ls_arg_none();
            x.name = ls_intern(in_name(n->type, k));
            ls_vec_push(&a, x);
        }
        switch (lsx_node_layout(n->type)) {
        case LSX_L_CONV: {
            static const char *const f[] = {"padding_top",     "padding_right",  "padding_bottom",       "padding_left",
                                            "kernel_height",   "kernel_width",   "subsampling_height",   "subsampling_width",
                                            "dilation_height", "dilation_width", "group_input_channels", "group_output_channels",
                                            "groups",          "adjustment_height", "adjustment_width"};
            const uint32_t *v = &n->p.conv.pad_top;
            for (unsigned k = 0; k < 15; k++)
                if (k < 13 || n->type == LS_XNN_ConvTranspose2d) ls_vec_push(&a, named_int(f[k], v[k]));
            break;
        }
        case LSX_L_POOL:
        case LSX_L_ARGMAXPOOL: {
            static const char *const f[] = {"padding_top",    "padding_right", "padding_bottom", "padding_left",
                                            "pooling_height", "pooling_width", "stride_height",  "stride_width",
                                            "dilation_height", "dilation_width"};
            const uint32_t *v = &n->p.pool.pad_top;
            for (unsigned k = 0; k < (n->type == LS_XNN_ArgMaxPooling2d ? 6u : 10u); k++) ls_vec_push(&a, named_int(f[k], v[k]));
            break;
        }
        case LSX_L_DIMS:
            ls_vec_push(&a, named_ints(n->type == LS_XNN_StaticTranspose ? "perm" : "new_shape", n->p.dims.v, n->p.dims.n));
            break;
        case LSX_L_SLICE:
            ls_vec_push(&a, named_ints("offsets", n->p.slice.offsets, n->p.slice.n));
            ls_vec_push(&a, named_ints("sizes", n->p.slice.sizes, n->p.slice.n));
            break;
        case LSX_L_PAD:
            ls_vec_push(&a, named_ints("pre_paddings", n->p.pad.pre, n->p.pad.n));
            ls_vec_push(&a, named_ints("post_paddings", n->p.pad.post, n->p.pad.n));
            ls_vec_push(&a, named_float("padding_value", n->p.pad.value));
            break;
        case LSX_L_RESIZE:
            ls_vec_push(&a, named_int("new_height", n->p.resize.height));
            ls_vec_push(&a, named_int("new_width", n->p.resize.width));
            break;
        case LSX_L_CAT: ls_vec_push(&a, named_int("axis", n->p.axis)); break;
        case LSX_L_ALPHA: ls_vec_push(&a, named_float(n->type == LS_XNN_ELU ? "alpha" : "negative_slope", n->p.alpha)); break;
        default: break;
        }
        if (n->has_min_max) {
            ls_vec_push(&a, named_float("output_min", n->out_min));
            ls_vec_push(&a, named_float("output_max", n->out_max));
        }
        if (n->flags) ls_vec_push(&a, named_int("flags", n->flags));
        if (n->n_out) {
            ls_buf t = {0};
            ls_xnn_value_text(&g->values[ls_xnn_value_pos(g, n->out[0])], &t);
            ls_arg s = {.kind = LS_ARG_STRING, .name = ls_intern("out")};
            s.v.s = ls_intern(t.s);
            ls_buf_free(&t);
            ls_vec_push(&a, s);
        }
        ls_node_set_args(cn, a.v, (uint16_t)a.n);
        cn->debug_handle = n->debug_handle;
        if (n->n_out == 1) {
            ls_tmeta m = value_meta(&g->values[ls_xnn_value_pos(g, n->out[0])]);
            ls_node_set_val(cn, &m);
            node_of[ls_xnn_value_pos(g, n->out[0])] = cn->id;
            ls_program_append(p, cn);
        } else if (n->n_out == 2) {
            ls_tmeta m[2] = {value_meta(&g->values[ls_xnn_value_pos(g, n->out[0])]),
                             value_meta(&g->values[ls_xnn_value_pos(g, n->out[1])])};
            ls_node_set_vals(cn, LS_VAL_TENSORS, m, 2);
            uint32_t cid = cn->id;
            ls_program_append(p, cn);
            for (unsigned k = 0; k < 2; k++) {
                ls_node *gi = ls_node_new(p, LS_NODE_CALL, ls_namer_take(names, "getitem"), ls_intern("getitem"));
                gi->op = ls_op_get(LS_OP_getitem);
                ls_arg *ga = ls_malloc(sizeof *ga * 2);
                ga[0] = ls_arg_node(cid);
                ga[1] = ls_arg_int(k);
                ls_node_set_args(gi, ga, 2);
                ls_node_set_val(gi, &m[k]);
                node_of[ls_xnn_value_pos(g, n->out[k])] = gi->id;
                ls_program_append(p, gi);
            }
        } else {
            ls_program_append(p, cn);
        }
    }
    /* the output node: the external outputs in external-id order */
    LS_VEC(uint32_t) outs = {0};
    for (uint32_t i = 0; i < g->n_values; i++)
        if (g->values[i].flags & LS_XNN_FLAG_EXTERNAL_OUTPUT) ls_vec_push(&outs, i);
    for (uint32_t a = 1; a < outs.n; a++) /* few outputs: insertion sort by external id */
        for (uint32_t b = a; b > 0 && g->values[outs.v[b - 1]].external_id > g->values[outs.v[b]].external_id; b--) {
            uint32_t t = outs.v[b];
            outs.v[b] = outs.v[b - 1];
            outs.v[b - 1] = t;
        }
    ls_node *o = ls_node_new(p, LS_NODE_OUTPUT, ls_namer_take(names, "output"), NULL);
    ls_arg *oa = ls_calloc(outs.n ? outs.n : 1, sizeof *oa);
    ls_output_spec *os = ls_calloc(outs.n ? outs.n : 1, sizeof *os);
    for (uint32_t k = 0; k < outs.n; k++) {
        uint32_t id = node_of[outs.v[k]];
        oa[k] = id ? ls_arg_node(id) : ls_arg_none();
        const ls_node *src = id ? ls_program_node(p, id) : NULL;
        os[k] = (ls_output_spec){.kind = LS_OUT_USER_OUTPUT, .name = src ? src->name : NULL};
    }
    ls_node_set_args(o, oa, (uint16_t)outs.n);
    ls_program_append(p, o);
    ls_program_set_inputs(p, ins.v, ins.n);
    ls_program_set_outputs(p, os, outs.n);
    free(os);
    free(outs.v);
    free(ins.v);
    free(node_of);
    ls_ptrmap_free(&targets);
    ls_namer_free(names);
    *out = p;
    return 0;
}
