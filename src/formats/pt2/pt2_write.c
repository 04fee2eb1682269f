/* Writing a program as a .pt2 archive, as torch.export.save lays it out (the members of
 * shared/data/pt2/linear_3 and of the samples): models/model.json (the ExportedProgram JSON,
 * schema 8.x), data/weights/weight_<i> + model_weights_config.json (parameters, persistent
 * buffers), data/constants/tensor_<i> + model_constants_config.json (tensor constants,
 * non-persistent buffers), archive_format, archive_version, byteorder, .data/version,
 * .data/serialization_id, all under one root folder, STORED, data 64-byte aligned by an "FB"
 * extra field. Delegation tags go into each node's custom metadata {"delegation_tag": ...}.
 *
 * What torch.export's JSON cannot express is refused: lowered submodules (a call through
 * executorch_call_delegate has no ExportedProgram form torch would read back) and the
 * ExecuTorch dialect of the to_executorch steps (alloc nodes, out variants). */
#include <cjson/cJSON.h>
#include <inttypes.h>
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <xxhash.h>
#include <zip.h>

#include "../formats.h"
#include "dialect.h"
#include "export.h"
#include "ops.h"

#define ALIGNMENT 64

typedef struct pw {
    const ls_program *p;
    ls_buf *b;
    bool exir; /* as exir/serde writes it: lowered modules inline (ls_program_json_exir) */
} pw;

static char *program_json(const ls_program *p, bool exir);

static void str(ls_buf *b, const char *s)
{
    ls_buf_json_str(b, s ? s : "");
}

static void num(ls_buf *b, double v)
{
    if (isnan(v)) ls_buf_puts(b, "\"NaN\"");
    else if (isinf(v)) ls_buf_puts(b, v > 0 ? "\"Infinity\"" : "\"-Infinity\"");
    else ls_buf_printf(b, "%.17g", v);
}

static void tensor_meta(ls_buf *b, const ls_tmeta *m)
{
    ls_buf_printf(b, "{\"dtype\":%d,\"sizes\":[", ls_dtype_to_export(m->dtype));
    for (int d = 0; d < m->ndim; d++) {
        if (d) ls_buf_putc(b, ',');
        if (m->sym[d]) {
            ls_buf_puts(b, "{\"as_expr\":{\"expr_str\":");
            str(b, m->sym[d]);
            if (m->sizes[d] >= 0) ls_buf_printf(b, ",\"hint\":{\"as_int\":%" PRId64 "}}}", m->sizes[d]);
            else ls_buf_puts(b, ",\"hint\":null}}");
        } else {
            ls_buf_printf(b, "{\"as_int\":%" PRId64 "}", m->sizes[d]);
        }
    }
    /* strides of the memory order dim_order (outer to inner) */
    int64_t st[LS_MAX_DIMS], acc = 1;
    for (int k = m->ndim - 1; k >= 0; k--) {
        int d = m->dim_order[k] < m->ndim ? m->dim_order[k] : k;
        st[d] = acc;
        acc *= m->sizes[d] > 0 ? m->sizes[d] : 1;
    }
    ls_buf_printf(b, "],\"requires_grad\":%s,\"device\":{\"type\":\"cpu\",\"index\":null},\"strides\":[",
                  m->requires_grad ? "true" : "false");
    for (int d = 0; d < m->ndim; d++) ls_buf_printf(b, "%s{\"as_int\":%" PRId64 "}", d ? "," : "", st[d]);
    ls_buf_puts(b, "],\"storage_offset\":{\"as_int\":0},\"layout\":7}");
}

static const char *node_name(const ls_program *p, uint32_t id)
{
    const ls_node *n = ls_program_node(p, id);
    return n ? n->name : "?";
}

static void value_ref(pw *w, uint32_t id)
{
    const ls_node *n = ls_program_node(w->p, id);
    if (n && n->val_kind == LS_VAL_SYMINT) {
        ls_buf_puts(w->b, "{\"as_sym_int\":{\"as_name\":");
        str(w->b, n->name);
        ls_buf_puts(w->b, "}}");
    } else {
        ls_buf_puts(w->b, "{\"as_tensor\":{\"name\":");
        str(w->b, n ? n->name : "?");
        ls_buf_puts(w->b, "}}");
    }
}

static void argument(pw *w, const ls_arg *a)
{
    ls_buf *b = w->b;
    switch ((ls_arg_kind)a->kind) {
    case LS_ARG_NONE: ls_buf_puts(b, "{\"as_none\":true}"); break;
    case LS_ARG_NODE: value_ref(w, a->v.node); break;
    case LS_ARG_NODES:
        ls_buf_puts(b, "{\"as_tensors\":[");
        for (uint32_t i = 0; i < a->n; i++) {
            ls_buf_puts(b, i ? ",{\"name\":" : "{\"name\":");
            str(b, node_name(w->p, a->v.nodes[i]));
            ls_buf_putc(b, '}');
        }
        ls_buf_puts(b, "]}");
        break;
    case LS_ARG_OPT_NODES:
        ls_buf_puts(b, "{\"as_optional_tensors\":[");
        for (uint32_t i = 0; i < a->n; i++) {
            if (i) ls_buf_putc(b, ',');
            if (!a->v.nodes[i]) {
                ls_buf_puts(b, "{\"as_none\":true}");
            } else {
                ls_buf_puts(b, "{\"as_tensor\":{\"name\":");
                str(b, node_name(w->p, a->v.nodes[i]));
                ls_buf_puts(b, "}}");
            }
        }
        ls_buf_puts(b, "]}");
        break;
    case LS_ARG_INT: ls_buf_printf(b, "{\"as_int\":%" PRId64 "}", a->v.i); break;
    case LS_ARG_INTS:
        ls_buf_puts(b, "{\"as_ints\":[");
        for (uint32_t i = 0; i < a->n; i++) ls_buf_printf(b, "%s%" PRId64, i ? "," : "", a->v.ints[i]);
        ls_buf_puts(b, "]}");
        break;
    case LS_ARG_FLOAT:
        ls_buf_puts(b, "{\"as_float\":");
        num(b, a->v.f);
        ls_buf_putc(b, '}');
        break;
    case LS_ARG_FLOATS:
        ls_buf_puts(b, "{\"as_floats\":[");
        for (uint32_t i = 0; i < a->n; i++) {
            if (i) ls_buf_putc(b, ',');
            num(b, a->v.floats[i]);
        }
        ls_buf_puts(b, "]}");
        break;
    case LS_ARG_BOOL: ls_buf_printf(b, "{\"as_bool\":%s}", a->v.b ? "true" : "false"); break;
    case LS_ARG_BOOLS:
        ls_buf_puts(b, "{\"as_bools\":[");
        for (uint32_t i = 0; i < a->n; i++) ls_buf_printf(b, "%s%s", i ? "," : "", a->v.bools[i] ? "true" : "false");
        ls_buf_puts(b, "]}");
        break;
    case LS_ARG_STRING:
        ls_buf_puts(b, "{\"as_string\":");
        str(b, a->v.s);
        ls_buf_putc(b, '}');
        break;
    case LS_ARG_STRINGS:
        ls_buf_puts(b, "{\"as_strings\":[");
        for (uint32_t i = 0; i < a->n; i++) {
            if (i) ls_buf_putc(b, ',');
            str(b, a->v.strs[i]);
        }
        ls_buf_puts(b, "]}");
        break;
    case LS_ARG_SYMINTS:
        ls_buf_puts(b, "{\"as_sym_ints\":[");
        for (uint32_t i = 0; i < a->n; i++) {
            if (i) ls_buf_putc(b, ',');
            if (a->v.symints[i].is_node) {
                ls_buf_puts(b, "{\"as_name\":");
                str(b, node_name(w->p, a->v.symints[i].node));
                ls_buf_putc(b, '}');
            } else {
                ls_buf_printf(b, "{\"as_int\":%" PRId64 "}", a->v.symints[i].i);
            }
        }
        ls_buf_puts(b, "]}");
        break;
    case LS_ARG_DTYPE: ls_buf_printf(b, "{\"as_scalar_type\":%d}", ls_dtype_to_export((ls_dtype)a->v.i)); break;
    case LS_ARG_LAYOUT: ls_buf_printf(b, "{\"as_layout\":%" PRId64 "}", a->v.i); break;
    case LS_ARG_MEMFMT: ls_buf_printf(b, "{\"as_memory_format\":%" PRId64 "}", a->v.i); break;
    case LS_ARG_DEVICE: {
        const char *s = a->v.s ? a->v.s : "cpu";
        const char *colon = strchr(s, ':');
        ls_buf_puts(b, "{\"as_device\":{\"type\":");
        if (colon) {
            char type[64];
            snprintf(type, sizeof type, "%.*s", (int)(colon - s), s);
            str(b, type);
            ls_buf_printf(b, ",\"index\":%d}}", atoi(colon + 1));
        } else {
            str(b, s);
            ls_buf_puts(b, ",\"index\":null}}");
        }
        break;
    }
    case LS_ARG_RAW: ls_buf_puts(b, a->v.s ? a->v.s : "{\"as_none\":true}"); break;
    }
}

/* ---- nodes */

static void metadata(pw *w, const ls_node *n)
{
    ls_buf *b = w->b;
    ls_buf_puts(b, "\"metadata\":{");
    bool first = true;
#define META(key, val)                                   \
    do {                                                 \
        if (val) {                                       \
            ls_buf_printf(b, "%s\"%s\":", first ? "" : ",", key); \
            str(b, val);                                 \
            first = false;                               \
        }                                                \
    } while (0)
    const ls_node_text *tx = ls_node_texts(n);
    META("stack_trace", tx->stack_trace);
    META("nn_module_stack", tx->module_stack);
    META("source_fn_stack", tx->source_fn);
    META("torch_fn", tx->torch_fn);
    if (n->tag || tx->custom) {
        /* custom metadata as torch's json.dumps writes it: the tag first */
        ls_buf c = {0};
        ls_buf_putc(&c, '{');
        if (n->tag) {
            ls_buf_puts(&c, "\"delegation_tag\": ");
            ls_buf_json_str(&c, n->tag);
        }
        const char *rest = tx->custom ? strchr(tx->custom, '{') : NULL;
        if (rest) {
            rest++;
            while (*rest == ' ') rest++;
            if (*rest && *rest != '}') ls_buf_printf(&c, "%s%s", n->tag ? ", " : "", rest);
            else ls_buf_putc(&c, '}');
        } else {
            ls_buf_putc(&c, '}');
        }
        META("custom", c.s);
        ls_buf_free(&c);
    }
    if (n->debug_handle) {
        char handle[32];
        snprintf(handle, sizeof handle, "%" PRId64, n->debug_handle);
        const char *hs = handle;
        META("debug_handle", hs);
    }
    if (n->no_copy) META("no_copy", "True");
#undef META
    ls_buf_putc(b, '}');
}

/* The getitem reading output k of a multi-output node (NULL when none does). */
static const ls_node *getitem_of(const ls_program *p, uint32_t pos, int64_t k)
{
    uint32_t nu;
    const uint32_t *users = ls_program_users(p, pos, &nu);
    for (uint32_t u = 0; u < nu; u++) {
        const ls_node *g = p->nodes[users[u]];
        if (g->op && g->op->id == LS_OP_getitem && g->nargs == 2 && g->args[0].kind == LS_ARG_NODE &&
            g->args[0].v.node == p->nodes[pos]->id && g->args[1].kind == LS_ARG_INT && g->args[1].v.i == k)
            return g;
    }
    return NULL;
}

static bool folded_getitem(const ls_program *p, const ls_node *n)
{
    if (!n->op || n->op->id != LS_OP_getitem || n->nargs != 2 || n->args[0].kind != LS_ARG_NODE) return false;
    const ls_node *of = ls_program_node(p, n->args[0].v.node);
    return of && of->kind == LS_NODE_CALL && of->val_kind == LS_VAL_TENSORS;
}

static void outputs(pw *w, const ls_node *n, uint32_t pos, ls_buf *tvals)
{
    ls_buf *b = w->b;
    ls_buf_puts(b, "\"outputs\":[");
    if (n->val_kind == LS_VAL_TENSOR || n->val_kind == LS_VAL_SYMINT) {
        value_ref(w, n->id);
    } else if (n->val_kind == LS_VAL_TENSORS) {
        bool list = n->op && n->op->schema.returns_list;
        /* exir's serialize_arbitrary_outputs: one value is a list of tensors, several are a tuple */
        if (w->exir && n->op && n->op->id == LS_OP_call_delegate) list = n->nvals == 1;
        if (list) ls_buf_puts(b, "{\"as_tensors\":[");
        for (uint16_t k = 0; k < n->nvals; k++) {
            const ls_node *g = getitem_of(w->p, pos, k);
            /* an output nothing reads: torch names it <node>_unused_<k> (reading it back makes
             * a getitem nothing uses) */
            const char *gname = g ? g->name : ls_internf("%s_unused_%u", n->name, k);
            if (k) ls_buf_putc(b, ',');
            if (!g && n->vals[k].dtype == LS_DT_UNKNOWN) {
                ls_buf_puts(b, "{\"as_none\":true}");
                continue;
            }
            ls_buf_puts(b, list ? "{\"name\":" : "{\"as_tensor\":{\"name\":");
            str(b, gname);
            ls_buf_puts(b, list ? "}" : "}}");
            if (!g) { /* its value only: the reader makes a getitem for it */
                ls_buf_putc(tvals, tvals->len > 1 ? ',' : ' ');
                str(tvals, gname);
                ls_buf_putc(tvals, ':');
                tensor_meta(tvals, &n->vals[k]);
            }
        }
        if (list) ls_buf_puts(b, "]}");
    }
    ls_buf_putc(b, ']');
}

static void tval(ls_buf *tvals, const ls_node *n)
{
    if (n->val_kind != LS_VAL_TENSOR || !n->nvals) return;
    ls_buf_putc(tvals, tvals->len > 1 ? ',' : ' ');
    str(tvals, n->name);
    ls_buf_putc(tvals, ':');
    tensor_meta(tvals, &n->vals[0]);
}

/* exir's serialize_lowered_module: the LoweredBackendModule as a JSON string, bytes base64. */
static void b64(ls_buf *b, const ls_blob *blob)
{
    static const char abc[] = "ABCDEFGHIJKLMNOPQRSTUVWXYZabcdefghijklmnopqrstuvwxyz0123456789+/";
    const uint8_t *d = blob ? blob->data : NULL;
    size_t n = blob ? blob->size : 0;
    ls_buf_putc(b, '"');
    for (size_t i = 0; i < n; i += 3) {
        uint32_t v = (uint32_t)d[i] << 16 | (i + 1 < n ? (uint32_t)d[i + 1] << 8 : 0) | (i + 2 < n ? d[i + 2] : 0);
        char q[4] = {abc[v >> 18 & 63], abc[v >> 12 & 63], i + 1 < n ? abc[v >> 6 & 63] : '=', i + 2 < n ? abc[v & 63] : '='};
        ls_buf_putn(b, q, 4);
    }
    ls_buf_putc(b, '"');
}

static void lowered_module_input(pw *w, const ls_node *ga)
{
    const ls_submodule *s = ga ? ls_program_sub(w->p, ga->target) : NULL;
    ls_buf m = {0};
    ls_buf_puts(&m, "{\"backend_id\": ");
    ls_buf_json_str(&m, s ? s->backend_id : "");
    ls_buf_puts(&m, ", \"processed_bytes\": ");
    b64(&m, s ? s->processed : NULL);
    ls_buf_puts(&m, ", \"compile_specs\": [");
    for (uint32_t k = 0; s && k < s->nspecs; k++) {
        ls_buf_puts(&m, k ? ", {\"key\": " : "{\"key\": ");
        ls_buf_json_str(&m, s->specs[k].key);
        ls_buf_puts(&m, ", \"value\": ");
        b64(&m, s->specs[k].value);
        ls_buf_putc(&m, '}');
    }
    ls_buf_puts(&m, "], \"original_module\": ");
    char *orig = s && s->program ? program_json(s->program, true) : NULL;
    ls_buf_puts(&m, orig ? orig : "null");
    free(orig);
    ls_buf_puts(&m, ", \"original_state_dict\": \"\"}");
    ls_buf_puts(w->b, "{\"name\":");
    str(w->b, ga ? ga->target : "");
    ls_buf_puts(w->b, ",\"arg\":{\"as_string\":");
    ls_buf_json_str(w->b, m.s);
    ls_buf_puts(w->b, "},\"kind\":1}");
    ls_buf_free(&m);
}

static void call_node(pw *w, const ls_node *n, uint32_t pos, bool first, ls_buf *tvals)
{
    ls_buf *b = w->b;
    ls_buf_puts(b, first ? "{\"target\":" : ",{\"target\":");
    str(b, n->target);
    ls_buf_puts(b, ",\"inputs\":[");
    bool any = false;
    if (w->exir && n->op && n->op->id == LS_OP_call_delegate && n->nargs && n->args[0].kind == LS_ARG_NODE) {
        /* serialize_call_delegate_inputs: the module, then delegate_arg_<i> */
        lowered_module_input(w, ls_program_node(w->p, n->args[0].v.node));
        for (uint16_t i = 1; i < n->nargs; i++) {
            ls_buf_printf(b, ",{\"name\":\"delegate_arg_%u\",\"arg\":", (unsigned)(i - 1));
            argument(w, &n->args[i]);
            ls_buf_puts(b, ",\"kind\":1}");
        }
        any = true;
    }
    for (uint16_t i = any ? n->nargs : 0; i < n->nargs; i++) {
        const ls_arg *a = &n->args[i];
        if (a->flags & LS_ARGF_DEFAULT) continue; /* torch leaves out what was not given */
        ls_buf_puts(b, any ? ",{\"name\":" : "{\"name\":");
        str(b, a->name);
        ls_buf_puts(b, ",\"arg\":");
        argument(w, a);
        ls_buf_printf(b, ",\"kind\":%d}", (a->flags & LS_ARGF_KEYWORD) ? 2 : 1);
        any = true;
    }
    ls_buf_puts(b, "],");
    outputs(w, n, pos, tvals);
    ls_buf_putc(b, ',');
    metadata(w, n);
    ls_buf_puts(b, ",\"is_hop_single_tensor_return\":null,\"name\":");
    str(b, n->name);
    ls_buf_putc(b, '}');
}

/* ---- signature */

static void input_spec(pw *w, const ls_input_spec *s, const ls_node *ph)
{
    ls_buf *b = w->b;
    const char *nm = s->name;
    switch (s->kind) {
    case LS_IN_PARAMETER:
    case LS_IN_BUFFER:
    case LS_IN_CONSTANT_TENSOR: {
        const char *kind = s->kind == LS_IN_PARAMETER ? "parameter" : s->kind == LS_IN_BUFFER ? "buffer" : "tensor_constant";
        const char *key = s->kind == LS_IN_PARAMETER ? "parameter_name" : s->kind == LS_IN_BUFFER ? "buffer_name" : "tensor_constant_name";
        ls_buf_printf(b, "{\"%s\":{\"arg\":{\"name\":", kind);
        str(b, nm);
        ls_buf_printf(b, "},\"%s\":", key);
        str(b, s->target);
        if (s->kind == LS_IN_BUFFER) ls_buf_printf(b, ",\"persistent\":%s", s->persistent ? "true" : "false");
        ls_buf_puts(b, "}}");
        break;
    }
    case LS_IN_CUSTOM_OBJ:
        ls_buf_puts(b, "{\"custom_obj\":{\"arg\":{\"name\":");
        str(b, nm);
        ls_buf_puts(b, ",\"class_fqn\":");
        str(b, s->class_fqn);
        ls_buf_puts(b, "},\"custom_obj_name\":");
        str(b, s->target);
        ls_buf_puts(b, "}}");
        break;
    case LS_IN_TOKEN:
        ls_buf_puts(b, "{\"token\":{\"arg\":{\"name\":");
        str(b, nm);
        ls_buf_puts(b, "}}}");
        break;
    case LS_IN_CONSTANT_INPUT:
        ls_buf_puts(b, "{\"constant_input\":{\"name\":");
        str(b, nm);
        ls_buf_puts(b, ",\"value\":");
        argument(w, &s->value);
        ls_buf_puts(b, "}}");
        break;
    default:
        ls_buf_puts(b, "{\"user_input\":{\"arg\":");
        if (ph) value_ref(w, ph->id);
        else ls_buf_puts(b, "{\"as_none\":true}");
        ls_buf_puts(b, "}}");
        break;
    }
}

static void output_spec(pw *w, const ls_output_spec *s, const ls_arg *a)
{
    static const char *const kinds[] = {"user_output", "loss_output", "buffer_mutation", "parameter_mutation",
                                        "gradient_to_parameter", "gradient_to_user_input", "user_input_mutation",
                                        "token"};
    static const char *const keys[] = {NULL, NULL, "buffer_name", "parameter_name", "parameter_name", "user_input_name",
                                       "user_input_name", NULL};
    ls_buf *b = w->b;
    uint8_t k = s->kind < 8 ? s->kind : 0;
    ls_buf_printf(b, "{\"%s\":{\"arg\":", kinds[k]);
    if (k == LS_OUT_USER_OUTPUT) {
        argument(w, a);
    } else {
        ls_buf_puts(b, "{\"name\":");
        str(b, s->name);
        ls_buf_putc(b, '}');
    }
    if (keys[k]) {
        ls_buf_printf(b, ",\"%s\":", keys[k]);
        str(b, s->target);
    }
    ls_buf_puts(b, "}}");
}

/* ---- the extras kept from the file (extra_json) */

static void extras(ls_buf *b, const char *json, const char *level, const char *fallback)
{
    cJSON *root = json ? cJSON_Parse(json) : NULL;
    const cJSON *obj = cJSON_GetObjectItemCaseSensitive(root, level);
    if (!obj || !obj->child) {
        ls_buf_puts(b, fallback);
    } else {
        for (const cJSON *c = obj->child; c; c = c->next) {
            char *t = cJSON_PrintUnformatted(c);
            ls_buf_putc(b, ',');
            str(b, c->string);
            ls_buf_putc(b, ':');
            ls_buf_puts(b, t ? t : "null");
            cJSON_free(t);
        }
    }
    cJSON_Delete(root);
}

static char *program_json(const ls_program *p, bool exir)
{
    ls_buf b = {0}, tvals = {0};
    pw w = {.p = p, .b = &b, .exir = exir};
    ls_buf_putc(&tvals, '{');
    ls_buf_puts(&b, "{\"graph_module\":{\"graph\":{\"inputs\":[");
    bool first = true;
    for (uint32_t i = 0; i < p->n_nodes; i++) {
        const ls_node *n = p->nodes[i];
        if (n->kind != LS_NODE_PLACEHOLDER) continue;
        if (!first) ls_buf_putc(&b, ',');
        int32_t s = ls_program_input_spec(p, n->name);
        if (s >= 0 && p->inputs[s].kind == LS_IN_CONSTANT_INPUT) argument(&w, &p->inputs[s].value);
        else if (s >= 0 && p->inputs[s].kind == LS_IN_CUSTOM_OBJ) {
            ls_buf_puts(&b, "{\"as_custom_obj\":{\"name\":");
            str(&b, n->name);
            ls_buf_puts(&b, ",\"class_fqn\":");
            str(&b, p->inputs[s].class_fqn);
            ls_buf_puts(&b, "}}");
        } else value_ref(&w, n->id);
        tval(&tvals, n);
        first = false;
    }
    const ls_node *out = ls_program_output(p);
    ls_buf_puts(&b, "],\"outputs\":[");
    for (uint16_t k = 0; out && k < out->nargs; k++) {
        if (k) ls_buf_putc(&b, ',');
        argument(&w, &out->args[k]);
    }
    ls_buf_puts(&b, "],\"nodes\":[");
    first = true;
    for (uint32_t i = 0; i < p->n_nodes; i++) {
        const ls_node *n = p->nodes[i];
        if (n->kind != LS_NODE_CALL) continue;
        tval(&tvals, n);
        if (folded_getitem(p, n)) continue;
        call_node(&w, n, i, first, &tvals);
        first = false;
    }
    ls_buf_puts(&tvals, "}");
    ls_buf_puts(&b, "],\"tensor_values\":");
    ls_buf_puts(&b, tvals.s);
    ls_buf_free(&tvals);
    extras(&b, p->extra_json, "graph",
           ",\"sym_int_values\":{},\"sym_bool_values\":{},\"is_single_tensor_return\":false,"
           "\"custom_obj_values\":{},\"sym_float_values\":{}");
    ls_buf_puts(&b, "},\"signature\":{\"input_specs\":[");
    for (uint32_t i = 0; i < p->n_inputs; i++) {
        if (i) ls_buf_putc(&b, ',');
        int32_t pos = p->inputs[i].name ? ls_program_find(p, p->inputs[i].name) : -1;
        input_spec(&w, &p->inputs[i], pos >= 0 ? p->nodes[pos] : NULL);
    }
    ls_buf_puts(&b, "],\"output_specs\":[");
    for (uint32_t i = 0; i < p->n_outputs; i++) {
        if (i) ls_buf_putc(&b, ',');
        ls_arg none = ls_arg_none();
        output_spec(&w, &p->outputs[i], out && i < out->nargs ? &out->args[i] : &none);
    }
    ls_buf_puts(&b, "]}");
    extras(&b, p->extra_json, "graph_module",
           ",\"module_call_graph\":[{\"fqn\":\"\",\"signature\":null}],\"metadata\":{},\"treespec_namedtuple_fields\":{}");
    ls_buf_putc(&b, '}');
    extras(&b, p->extra_json, "exported_program", ",\"opset_version\":{\"aten\":10},\"range_constraints\":{}");
    ls_buf_printf(&b, ",\"schema_version\":{\"major\":%d,\"minor\":%d},\"verifiers\":[", p->schema_major > 0 ? p->schema_major : 8,
                  p->schema_major > 0 ? p->schema_minor : 12);
    str(&b, p->verifier ? p->verifier : p->dialect == LS_DIALECT_EDGE ? "EDGE" : "ATEN");
    ls_buf_puts(&b, "],\"torch_version\":");
    if (p->torch_version) str(&b, p->torch_version);
    else ls_buf_puts(&b, "null");
    ls_buf_putc(&b, '}');
    return ls_buf_take(&b);
}

char *ls_program_json_exir(const ls_program *p, ls_error *err)
{
    for (uint32_t i = 0; i < p->n_nodes; i++) {
        const ls_node *n = p->nodes[i];
        if (n->dialect == LS_DIALECT_EXECUTORCH || (n->op && n->op->id == LS_OP_alloc)) {
            ls_fail(err, "node `%s` is in the ExecuTorch dialect, which lowerscope writes only as a .pte", n->name);
            return NULL;
        }
    }
    return program_json(p, true);
}

/* ---- what torch.export's JSON cannot hold */

int ls_pt2_expressible(const ls_program *p, ls_error *err)
{
    if (p->n_subs) {
        ls_buf b = {0};
        for (uint32_t i = 0; i < p->n_subs && i < 4; i++) ls_buf_printf(&b, "%s%s", i ? ", " : "", p->subs[i].name);
        if (p->n_subs > 4) ls_buf_printf(&b, " and %u more", p->n_subs - 4);
        int rc = ls_fail(err,
                         "the program holds lowered submodules (%s), which torch.export's JSON cannot express: export a "
                         "step before to_backend as .pt2, or write a .pte",
                         b.s);
        ls_buf_free(&b);
        return rc;
    }
    for (uint32_t i = 0; i < p->n_nodes; i++) {
        const ls_node *n = p->nodes[i];
        if (n->kind == LS_NODE_GET_ATTR || (n->op && n->op->id == LS_OP_call_delegate))
            return ls_fail(err, "node `%s` calls a lowered module, which torch.export's JSON cannot express: export a step "
                                "before to_backend as .pt2, or write a .pte",
                           n->name);
        if (n->dialect == LS_DIALECT_EXECUTORCH || (n->op && n->op->id == LS_OP_alloc))
            return ls_fail(err, "node `%s` is in the ExecuTorch dialect (out variants and allocs of to_executorch), which "
                                "torch.export's JSON cannot express: export a step before to_out_variant as .pt2, or "
                                "write a .pte",
                           n->name);
    }
    return 0;
}

/* ---- the archive */

typedef ls_zip_member member;

typedef LS_VEC(member) members;

static void add_member(members *m, const char *root, const char *rel, const void *data, size_t size)
{
    member x = {.size = size};
    x.name = ls_strdup(ls_internf("%s/%s", root, rel));
    x.data = ls_malloc(size ? size : 1);
    if (size) memcpy(x.data, data, size);
    ls_vec_push(m, x);
}

static int table_members(members *m, const char *root, const ls_program *p, bool constants, ls_error *err)
{
    const ls_named_tensor *v = constants ? p->constants : p->state_dict;
    uint32_t n = constants ? p->n_constants : p->n_state;
    const char *folder = constants ? "constants" : "weights";
    ls_buf cfg = {0};
    ls_buf_puts(&cfg, "{\"config\": {");
    for (uint32_t i = 0; i < n; i++) {
        if (!v[i].t)
            return ls_buf_free(&cfg), ls_fail_needs(err, "%s `%s` has no data (" LS_NO_WEIGHTS ")",
                                                    constants ? "constant" : "weight", v[i].name);
        char path[64];
        snprintf(path, sizeof path, "%s_%u", constants ? "tensor" : "weight", i);
        add_member(m, root, ls_internf("data/%s/%s", folder, path), v[i].t->data, v[i].t->nbytes);
        bool param = false;
        for (uint32_t k = 0; k < p->n_inputs; k++)
            if (p->inputs[k].kind == LS_IN_PARAMETER && p->inputs[k].target == v[i].name) param = true;
        ls_tmeta meta;
        ls_tensor_meta(v[i].t, &meta);
        meta.requires_grad = v[i].meta->requires_grad;
        if (i) ls_buf_puts(&cfg, ", ");
        str(&cfg, v[i].name);
        ls_buf_printf(&cfg, ": {\"path_name\": \"%s\", \"is_param\": %s, \"use_pickle\": false, \"tensor_meta\": ", path,
                      param ? "true" : "false");
        tensor_meta(&cfg, &meta);
        ls_buf_putc(&cfg, '}');
    }
    ls_buf_puts(&cfg, "}}");
    add_member(m, root, ls_internf("data/%s/model_%s_config.json", folder, folder), cfg.s, cfg.len);
    ls_buf_free(&cfg);
    return 0;
}

int ls_zip_build(const ls_zip_member *mv, uint32_t n, unsigned align, uint8_t **bytes, size_t *size, ls_error *err)
{
    zip_error_t ze;
    zip_error_init(&ze);
    zip_source_t *mem = zip_source_buffer_create(NULL, 0, 0, &ze);
    zip_t *za = mem ? zip_open_from_source(mem, ZIP_TRUNCATE, &ze) : NULL;
    if (!za) {
        int rc = ls_fail(err, "cannot start the archive: %s", zip_error_strerror(&ze));
        if (mem) zip_source_free(mem);
        zip_error_fini(&ze);
        return rc;
    }
    zip_source_keep(mem);
    uint64_t pos = 0;
    int rc = 0;
    for (uint32_t i = 0; i < n && rc == 0; i++) {
        const member *x = &mv[i];
        zip_source_t *src = zip_source_buffer(za, x->data, x->size, 0);
        zip_int64_t idx = src ? zip_file_add(za, x->name, src, ZIP_FL_ENC_UTF_8) : -1;
        if (idx < 0) {
            if (src) zip_source_free(src);
            rc = ls_fail(err, "cannot add %s: %s", x->name, zip_strerror(za));
            break;
        }
        zip_set_file_compression(za, (zip_uint64_t)idx, ZIP_CM_STORE, 0);
        zip_file_set_dostime(za, (zip_uint64_t)idx, 0, 0x21, 0); /* 1980-01-01 00:00 */
        if (!align) continue;
        /* data aligned: an "FB" extra field pads the local header, as torch does */
        size_t fixed = 30 + strlen(x->name) + 4;
        size_t pad = (size_t)((align - (pos + fixed) % align) % align);
        uint8_t zs[256];
        memset(zs, 'Z', sizeof zs);
        zip_file_extra_field_set(za, (zip_uint64_t)idx, 0x4246, ZIP_EXTRA_FIELD_NEW, zs, (zip_uint16_t)pad, ZIP_FL_LOCAL);
        pos += fixed + pad + x->size;
    }
    if (rc == 0 && zip_close(za) != 0) rc = ls_fail(err, "cannot write the archive: %s", zip_strerror(za));
    if (rc != 0) zip_discard(za);
    if (rc == 0) {
        zip_stat_t st;
        if (zip_source_stat(mem, &st) != 0 || zip_source_open(mem) != 0) {
            rc = ls_fail(err, "cannot read the archive back from memory");
        } else {
            *size = (size_t)st.size;
            *bytes = ls_malloc(*size ? *size : 1);
            zip_int64_t got = zip_source_read(mem, *bytes, st.size);
            zip_source_close(mem);
            if (got < 0 || (zip_uint64_t)got != st.size) {
                free(*bytes);
                *bytes = NULL;
                rc = ls_fail(err, "cannot read the archive back from memory");
            }
        }
    }
    zip_source_free(mem);
    zip_error_fini(&ze);
    return rc;
}

int ls_pt2_bytes(const ls_program *p, const char *path, uint8_t **out, size_t *out_size, ls_error *err)
{
    if (ls_pt2_expressible(p, err) != 0) return ls_fail_prefix(err, "%s", path);
    /* the root folder: the archive's name, as torch.export.save names it */
    const char *base = strrchr(path, '/') ? strrchr(path, '/') + 1 : path;
    size_t bl = strlen(base);
    if (bl > 4 && strcmp(base + bl - 4, ".pt2") == 0) bl -= 4;
    char rootbuf[128];
    snprintf(rootbuf, sizeof rootbuf, "%.*s", (int)(bl < 100 ? bl : 100), base);
    const char *root = ls_sanitize_name(NULL, rootbuf[0] ? rootbuf : "model");
    members m = {0};
    int rc = table_members(&m, root, p, false, err);
    if (rc == 0) rc = table_members(&m, root, p, true, err);
    if (rc == 0) {
        char *json = program_json(p, false);
        add_member(&m, root, "models/model.json", json, strlen(json));
        free(json);
        add_member(&m, root, "archive_format", "pt2", 3);
        add_member(&m, root, "archive_version", "0", 1);
        add_member(&m, root, ".data/version", "6\n", 2);
        add_member(&m, root, "byteorder", "little", 6);
        /* PyTorchFileWriter writes a 40-digit id: derived from the content, so the same
         * program gives the same archive */
        XXH3_state_t *h = XXH3_createState();
        XXH3_64bits_reset(h);
        for (uint32_t i = 0; i < m.n; i++) XXH3_64bits_update(h, m.v[i].data, m.v[i].size);
        uint64_t d = XXH3_64bits_digest(h);
        XXH3_freeState(h);
        char id[48];
        snprintf(id, sizeof id, "%020" PRIu64 "%020" PRIu64, (uint64_t)(d % 10000000000000000000ull),
                 (uint64_t)((d >> 7) % 10000000000000000000ull));
        add_member(&m, root, ".data/serialization_id", id, 40);
    }
    uint8_t *bytes = NULL;
    size_t size = 0;
    if (rc == 0) rc = ls_zip_build(m.v, m.n, ALIGNMENT, &bytes, &size, err);
    for (uint32_t i = 0; i < m.n; i++) {
        free(m.v[i].name);
        free(m.v[i].data);
    }
    free(m.v);
    if (rc != 0) return ls_fail_prefix(err, "%s", path);
    *out = bytes;
    *out_size = size;
    return 0;
}

int ls_write_pt2(const ls_program *p, const char *path, uint64_t *written, ls_error *err)
{
    uint8_t *bytes;
    size_t size;
    if (ls_pt2_bytes(p, path, &bytes, &size, err) != 0) return -1;
    int rc = ls_write_file_atomic(path, bytes, size, err);
    free(bytes);
    if (rc == 0 && written) *written = size;
    return rc;
}
