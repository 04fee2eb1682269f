/* The program around the nodes: schema version, dialect, graph signature, placeholders, the
 * output node, the parts a writer needs back (extra_json), then the weights. The nodes
 * themselves are read by json_nodes.c. */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "json_loader.h"
#include "progress.h"

static int read_schema_version(loader *L, const cJSON *root)
{
    const cJSON *sv = ls_jget(root, "schema_version");
    if (!sv) return 0; /* not written: keep the model's default */
    int64_t major = -99, minor = 0;
    if (cJSON_IsNumber(sv)) {
        ls_jint(sv, &major);
    } else if (!ls_jint(ls_jget(sv, "major"), &major) || !ls_jint(ls_jget(sv, "minor"), &minor)) {
        return ls_fail(L->err, "%s: schema_version: expected {\"major\": N, \"minor\": M}", L->where);
    }
    /* ExecuTorch writes -1.-1 for the programs inside lowered modules */
    bool inner = L->depth > 0 && major == -1;
    if (!inner && (major < 1 || major > 8))
        return ls_fail(L->err,
                       "%s: schema_version %lld.%lld: lowerscope reads torch.export schema versions 1 to 8.x",
                       L->where, (long long)major, (long long)minor);
    L->p->schema_major = (int)major;
    L->p->schema_minor = (int)minor;
    return 0;
}

/* The spec's argument name: TensorArgument {name}, CustomObjArgument, TokenArgument, or an
 * Argument union (user inputs and outputs). */
static const char *spec_arg_name(const cJSON *spec)
{
    const char *s = ls_arg_value_name(ls_jget(spec, "arg"));
    return s ? ls_intern(s) : NULL;
}

static int read_input_spec(loader *L, const cJSON *js, uint32_t i, ls_input_spec *s)
{
    memset(s, 0, sizeof *s);
    const char *k;
    const cJSON *v = ls_junion(js, &k);
    if (!v) return ls_fail(L->err, "%s: input spec %u: expected an InputSpec object", L->where, i);
    s->name = spec_arg_name(v);
    static const struct {
        const char *kind, *target_key;
        ls_input_kind ik;
    } kinds[] = {
        {"user_input", NULL, LS_IN_USER_INPUT},
        {"parameter", "parameter_name", LS_IN_PARAMETER},
        {"buffer", "buffer_name", LS_IN_BUFFER},
        {"tensor_constant", "tensor_constant_name", LS_IN_CONSTANT_TENSOR},
        {"custom_obj", "custom_obj_name", LS_IN_CUSTOM_OBJ},
        {"token", NULL, LS_IN_TOKEN},
        {"constant_input", NULL, LS_IN_CONSTANT_INPUT},
    };
    for (size_t j = 0; j < sizeof kinds / sizeof kinds[0]; j++) {
        if (strcmp(k, kinds[j].kind) != 0) continue;
        s->kind = (uint8_t)kinds[j].ik;
        if (kinds[j].target_key) s->target = ls_intern(ls_jstr(ls_jget(v, kinds[j].target_key)));
        break;
    }
    if (s->kind == LS_IN_USER_INPUT && !ls_key_is(k, "user_input"))
        return ls_fail(L->err, "%s: input spec %u: unknown kind '%s'", L->where, i, k);
    if (s->kind == LS_IN_BUFFER) {
        const cJSON *pers = ls_jget(v, "persistent");
        s->persistent = !pers || cJSON_IsTrue(pers);
    } else if (s->kind == LS_IN_CUSTOM_OBJ) {
        s->class_fqn = ls_intern(ls_jstr(ls_jget(ls_jget(v, "arg"), "class_fqn")));
    } else if (s->kind == LS_IN_CONSTANT_INPUT) {
        s->name = ls_intern(ls_jstr(ls_jget(v, "name")));
        const cJSON *val = ls_jget(v, "value");
        const char *vk;
        const cJSON *vv = ls_junion(val, &vk);
        if (vv && !ls_key_is(vk, "as_none") && ls_loader_read_arg(L, val, &s->value) != 0)
            return ls_fail_prefix(L->err, "%s: input spec %u (constant_input)", L->where, i);
    }
    return 0;
}

static int read_output_spec(loader *L, const cJSON *js, uint32_t i, ls_output_spec *s)
{
    memset(s, 0, sizeof *s);
    const char *k;
    const cJSON *v = ls_junion(js, &k);
    if (!v) return ls_fail(L->err, "%s: output spec %u: expected an OutputSpec object", L->where, i);
    static const struct {
        const char *kind, *target_key;
        ls_output_kind ok;
    } kinds[] = {
        {"user_output", NULL, LS_OUT_USER_OUTPUT},
        {"loss_output", NULL, LS_OUT_LOSS_OUTPUT},
        {"buffer_mutation", "buffer_name", LS_OUT_BUFFER_MUTATION},
        {"parameter_mutation", "parameter_name", LS_OUT_PARAMETER_MUTATION},
        {"gradient_to_parameter", "parameter_name", LS_OUT_GRADIENT_TO_PARAMETER},
        {"gradient_to_user_input", "user_input_name", LS_OUT_GRADIENT_TO_USER_INPUT},
        {"user_input_mutation", "user_input_name", LS_OUT_USER_INPUT_MUTATION},
        {"token", NULL, LS_OUT_TOKEN},
    };
    for (size_t j = 0; j < sizeof kinds / sizeof kinds[0]; j++) {
        if (strcmp(k, kinds[j].kind) != 0) continue;
        s->kind = (uint8_t)kinds[j].ok;
        s->name = spec_arg_name(v);
        if (kinds[j].target_key) s->target = ls_intern(ls_jstr(ls_jget(v, kinds[j].target_key)));
        return 0;
    }
    return ls_fail(L->err, "%s: output spec %u: unknown kind '%s'", L->where, i, k);
}

static int read_placeholders(loader *L, const cJSON *inputs, const ls_input_spec *specs, uint32_t nspecs)
{
    if (!inputs) return 0;
    if (!cJSON_IsArray(inputs)) return ls_fail(L->err, "%s: graph.inputs is not a list", L->where);
    uint32_t i = 0;
    for (const cJSON *in = inputs->child; in; in = in->next, i++) {
        const char *k;
        const cJSON *v = ls_junion(in, &k);
        if (!v) return ls_fail(L->err, "%s: graph input %u: expected an Argument object", L->where, i);
        const char *name = ls_arg_value_name(in);
        if (!name) /* a constant input: its spec names it */
            name = i < nspecs && specs[i].name ? specs[i].name : ls_internf("arg%u", i);
        ls_node *n = ls_node_new(L->p, LS_NODE_PLACEHOLDER, name, name);
        ls_program_append(L->p, n);
        uint64_t h;
        if (ls_loader_define(L, n, &h) != 0) return -1;
        if (ls_key_is(k, "as_tensor")) {
            ls_tmeta m;
            if (ls_loader_tmeta(L, n->name, h, &m)) ls_node_set_val(n, &m);
            else if (L->deferred_fail) return -1;
        } else {
            n->val_kind = strncmp(k, "as_sym_", 7) == 0 ? LS_VAL_SYMINT : LS_VAL_OTHER;
        }
    }
    return 0;
}

static int read_output_node(loader *L, const cJSON *outputs)
{
    if (outputs && !cJSON_IsArray(outputs)) return ls_fail(L->err, "%s: graph.outputs is not a list", L->where);
    int count = outputs ? cJSON_GetArraySize(outputs) : 0;
    if (count > LS_MAX_NODE_ARGS) return ls_fail(L->err, "%s: graph.outputs: %d outputs", L->where, count);
    ls_node *o = ls_node_new(L->p, LS_NODE_OUTPUT, NULL, "output");
    ls_arg *args = ls_calloc((size_t)(count ? count : 1), sizeof *args);
    int i = 0;
    for (const cJSON *a = outputs ? outputs->child : NULL; a; a = a->next, i++) {
        if (ls_loader_read_arg(L, a, &args[i]) != 0) {
            for (int j = 0; j <= i; j++) ls_arg_free(&args[j]);
            free(args);
            ls_node_unref(o);
            return ls_fail_prefix(L->err, "%s: graph output %d", L->where, i);
        }
    }
    ls_node_set_args(o, args, (uint16_t)count);
    if (ls_loader_lookup(L, "output")) { /* a node took the name: pick another at the end */
        ls_vec_push(&L->unnamed, o);
    } else {
        o->name = ls_intern("output");
        ls_loader_define(L, o, NULL);
    }
    ls_program_append(L->p, o);
    return 0;
}

/* What the model does not hold but a writer needs back, as one JSON object:
 * {"exported_program": {...}, "graph_module": {...}, "graph": {...}}, each with the members of
 * that level that are not modelled (opset_version, range_constraints, module_call_graph, ...). */
static void put_extras(ls_buf *b, const char *level, const cJSON *obj, const char *const *skip)
{
    ls_buf_printf(b, "%s\"%s\":{", level[0] == 'e' ? "" : ",", level);
    bool first = true;
    for (const cJSON *c = obj ? obj->child : NULL; c; c = c->next) {
        bool known = false;
        for (const char *const *s = skip; *s; s++)
            if (c->string && strcmp(c->string, *s) == 0) known = true;
        if (known || !c->string) continue;
        char *text = cJSON_PrintUnformatted(c);
        if (!first) ls_buf_putc(b, ',');
        ls_buf_json_str(b, c->string);
        ls_buf_putc(b, ':');
        ls_buf_puts(b, text ? text : "null");
        cJSON_free(text);
        first = false;
    }
    ls_buf_putc(b, '}');
}

static char *extras_json(const cJSON *root, const cJSON *gm, const cJSON *graph)
{
    static const char *const top[] = {"graph_module", "schema_version", "verifiers", "torch_version", NULL};
    static const char *const mod[] = {"graph", "signature", NULL};
    static const char *const gr[] = {"inputs", "outputs", "nodes", "tensor_values", NULL};
    ls_buf b = {0};
    ls_buf_putc(&b, '{');
    put_extras(&b, "exported_program", root, top);
    put_extras(&b, "graph_module", gm, mod);
    put_extras(&b, "graph", graph, gr);
    ls_buf_putc(&b, '}');
    return ls_buf_take(&b);
}

static int load_root(loader *L, const cJSON *root, const char *name, ls_weight_source *ws, bool metadata_only)
{
    if (!cJSON_IsObject(root))
        return ls_fail(L->err, "%s: not an exported program (the JSON is not an object)", L->where);
    const cJSON *gm = ls_jget(root, "graph_module");
    const cJSON *graph = ls_jget(gm, "graph");
    if (!gm || !graph) {
        if (ls_jget(root, "config"))
            return ls_fail(L->err, "%s: a weights or constants config, not an exported program", L->where);
        return ls_fail(L->err, "%s: not an exported program: no graph_module.graph", L->where);
    }
    const cJSON *vers = ls_jget(root, "verifiers");
    const char *verifier = vers && cJSON_IsArray(vers) ? ls_jstr(vers->child) : NULL;
    if (!verifier) verifier = ls_jstr(ls_jget(root, "dialect")); /* older writers */
    ls_dialect dialect = verifier && ls_key_is(verifier, "EDGE") ? LS_DIALECT_EDGE : LS_DIALECT_ATEN;
    L->p = ls_program_new(name, dialect);
    L->p->path = ls_intern(L->where);
    if (verifier) L->p->verifier = ls_intern(verifier);
    L->p->torch_version = ls_intern(ls_jstr(ls_jget(root, "torch_version")));
    if (read_schema_version(L, root) != 0) return -1;

    const cJSON *tv = ls_jget(graph, "tensor_values");
    if (tv && !cJSON_IsObject(tv) && !cJSON_IsNull(tv)) /* a list was read as no metadata at all */
        return ls_fail(L->err, "%s: graph.tensor_values is not an object (name: tensor meta)", L->where);
    if (tv && cJSON_IsObject(tv)) {
        L->tv_all = tv;
        L->tv_cursor = tv->child;
    }

    const cJSON *sig = ls_jget(gm, "signature");
    const cJSON *ins = ls_jget(sig, "input_specs"), *outs = ls_jget(sig, "output_specs");
    uint32_t nin = ins && cJSON_IsArray(ins) ? (uint32_t)cJSON_GetArraySize(ins) : 0;
    uint32_t nout = outs && cJSON_IsArray(outs) ? (uint32_t)cJSON_GetArraySize(outs) : 0;
    ls_input_spec *in_specs = ls_calloc(nin ? nin : 1, sizeof *in_specs);
    ls_output_spec *out_specs = ls_calloc(nout ? nout : 1, sizeof *out_specs);
    int rc = 0;
    uint32_t i = 0;
    for (const cJSON *s = nin ? ins->child : NULL; s && rc == 0; s = s->next, i++)
        rc = read_input_spec(L, s, i, &in_specs[i]);
    i = 0;
    for (const cJSON *s = nout ? outs->child : NULL; s && rc == 0; s = s->next, i++)
        rc = read_output_spec(L, s, i, &out_specs[i]);
    const cJSON *nodes = ls_jget(graph, "nodes");
    ls_strmap_reserve(&L->values, nin + (nodes ? (uint32_t)cJSON_GetArraySize(nodes) : 0) + 16);
    if (rc == 0) rc = read_placeholders(L, ls_jget(graph, "inputs"), in_specs, nin);
    if (rc == 0) rc = L->js ? ls_loader_read_nodes_stream(L) : ls_loader_read_nodes(L, nodes);
    if (rc == 0) rc = read_output_node(L, ls_jget(graph, "outputs"));
    if (rc == 0) {
        ls_program_set_inputs(L->p, in_specs, nin);
        ls_program_set_outputs(L->p, out_specs, nout);
    }
    for (i = 0; i < nin; i++) ls_arg_free(&in_specs[i].value);
    free(in_specs);
    free(out_specs);
    if (rc != 0) return -1;

    ls_loader_name_rest(L);
    for (i = 0; i < L->tag_order.n; i++) ls_program_add_tag(L->p, L->tag_order.v[i], NULL);
    L->p->extra_json = extras_json(root, gm, graph);
    return ls_read_weights(L->p, L->where, ws, metadata_only, L->err);
}

static int load_tree(const char *where, const char *name, const cJSON *root, ls_jstream *js, ls_weight_source *ws,
                     bool metadata_only, int depth, ls_program **out, ls_error *err)
{
    *out = NULL;
    loader L = {.where = ls_intern(where), .err = err, .depth = depth, .js = js};
    L.lowered_module_name = ls_intern("lowered_module");
    int rc = load_root(&L, root, name ? name : "model", ws, metadata_only);
    ls_strmap_free(&L.values);
    ls_strmap_free(&L.tvals);
    ls_ptrmap_free(&L.targets);
    ls_ptrmap_free(&L.tag_seen);
    free(L.tag_order.v);
    free(L.unnamed.v);
    if (rc != 0) {
        ls_program_unref(L.p);
        return -1;
    }
    *out = L.p;
    return 0;
}

int ls_load_json_tree(const char *where, const char *name, const cJSON *root, ls_weight_source *ws,
                      bool metadata_only, int depth, ls_program **out, ls_error *err)
{
    return load_tree(where, name, root, NULL, ws, metadata_only, depth, out, err);
}

/* The document streamed (json_stream.h) when it is laid out for it, else parsed whole; either
 * way the same program, or the same message. */
static int load_json(const char *where, const char *name, const char *json, size_t len, ls_weight_source *ws,
                     bool metadata_only, int depth, bool give_back, ls_program **out, ls_error *err)
{
    *out = NULL;
    ls_json_arena_begin();
    ls_jstream js;
    cJSON *root = NULL;
    bool streamed = false;
    bool planned = len && ls_jstream_plan(&js, json, len);
    if (ls_cancelled()) { /* the plan's scan gives up when asked: no whole parse after it */
        if (planned) ls_jstream_free(&js);
        ls_json_arena_end();
        return ls_fail_cancelled(err, where);
    }
    if (planned) {
        if (ls_json_check_text(where, json, len, err) != 0) {
            ls_json_arena_end();
            return -1;
        }
        size_t n;
        char *skeleton = ls_jstream_skeleton(&js, &n);
        const char *end = NULL;
        root = cJSON_ParseWithLengthOpts(skeleton, n, &end, false);
        if (root) { /* only whitespace may follow, as ls_json_parse wants */
            while (end < skeleton + n && (unsigned char)*end <= 32) end++;
            if (end != skeleton + n) root = NULL;
        }
        free(skeleton);
        streamed = root != NULL;
        js.give_back = give_back;
        if (!streamed) ls_jstream_free(&js); /* something else is wrong: the whole parse says what */
    }
    if (!streamed) root = ls_json_parse(where, json, len, err);
    int rc = root ? load_tree(where, name, root, streamed ? &js : NULL, ws, metadata_only, depth, out, err) : -1;
    ls_json_free(root);
    if (streamed) ls_jstream_free(&js);
    ls_json_arena_end();
    return rc;
}

int ls_load_json_ex(const char *where, const char *name, const char *json, size_t len, ls_weight_source *ws,
                    bool metadata_only, int depth, ls_program **out, ls_error *err)
{
    return load_json(where, name, json, len, ws, metadata_only, depth, false, out, err);
}

int ls_load_json_consuming(const char *where, const char *name, char *json, size_t len, ls_weight_source *ws,
                           bool metadata_only, ls_program **out, ls_error *err)
{
    return load_json(where, name, json, len, ws, metadata_only, 0, true, out, err);
}

int ls_load_json(const char *where, const char *json, size_t len, ls_weight_source *weights, ls_program **out,
                 ls_error *err)
{
    return ls_load_json_ex(where, weights ? weights->model : NULL, json, len, weights, false, 0, out, err);
}
