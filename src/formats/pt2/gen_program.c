/* Synthetic exported programs of any size (include/gen_program.h): the JSON torch.export would
 * write for a long chain of ops with parameters, shared lifted constants and delegation tags,
 * plus the weight data, loaded by the reader or packed into a .pt2. */
#include "gen_program.h"

#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <zip.h>

#include "pt2_internal.h"

enum { OP_LINEAR, OP_RELU, OP_MUL, OP_ADD, OP_TANH, OP_ADDC, OP_SPLIT, OP_CAT, OP_GETITEM, OP_SIN, OP_COUNT };

static const struct {
    const char *aten, *edge, *name, *edge_name, *fn;
} ops[OP_COUNT] = {
    [OP_LINEAR] = {"aten.linear.default", "aten.addmm.default", "linear", "aten_addmm_default", "linear"},
    [OP_RELU] = {"aten.relu.default", "aten.relu.default", "relu", "aten_relu_default", "relu"},
    [OP_MUL] = {"aten.mul.Tensor", "aten.mul.Tensor", "mul", "aten_mul_tensor", "mul"},
    [OP_ADD] = {"aten.add.Tensor", "aten.add.Tensor", "add", "aten_add_tensor", "add"},
    [OP_TANH] = {"aten.tanh.default", "aten.tanh.default", "tanh", "aten_tanh_default", "tanh"},
    [OP_ADDC] = {"aten.add.Tensor", "aten.add.Tensor", "add", "aten_add_tensor", "add"},
    [OP_SPLIT] = {"aten.split_with_sizes.default", "aten.split_with_sizes_copy.default", "split_with_sizes",
                  "aten_split_with_sizes_copy_default", "split"},
    [OP_CAT] = {"aten.cat.default", "aten.cat.default", "cat", "aten_cat_default", "cat"},
    [OP_GETITEM] = {"", "", "getitem", "getitem", "getitem"},
    [OP_SIN] = {"aten.sin.default", "aten.sin.default", "sin", "aten_sin_default", "sin"},
};

ls_gen_opts ls_gen_defaults(uint32_t nodes)
{
    ls_gen_opts o = {0};
    o.nodes = nodes;
    o.width = 8;
    o.params = nodes / 50 ? nodes / 50 : 1;
    o.constants = nodes / 100 ? nodes / 100 : 1;
    o.seed = 1;
    return o;
}

typedef struct gen {
    ls_gen_opts o;
    ls_buf out;
    bool first;         /* no comma before the next entry */
    uint32_t *use;      /* per node: constant index + 1, or 0 */
    uint32_t count[OP_COUNT]; /* names handed out per base, FX-style (add, add_1, ...) */
    uint32_t regions;
    bool *boundary;     /* per node: a CPU op opening a region (cpu_boundaries) */
} gen;

static int node_kind(const gen *g, uint32_t k)
{
    if (g->boundary && g->boundary[k]) return OP_SIN;
    uint32_t se = g->o.split_every;
    if (se >= 2 && k % se == se - 2) return OP_SPLIT;
    if (se >= 2 && k % se == se - 1) return OP_CAT;
    if (g->use[k]) return OP_ADDC;
    int kind = (int)(k % 5);
    if (kind == OP_LINEAR && !g->o.params) kind = OP_RELU;
    return kind;
}

static uint32_t region_start(const gen *g, uint32_t r)
{
    return (uint32_t)((uint64_t)r * g->o.nodes / g->regions);
}

/* A free node slot in region r for a constant use, or UINT32_MAX when the region is full. */
static uint32_t free_slot(gen *g, uint32_t r, uint32_t hash)
{
    uint32_t a = region_start(g, r), b = region_start(g, r + 1);
    if (b <= a) return UINT32_MAX;
    uint32_t len = b - a, s = a + hash % len;
    for (uint32_t i = 0; i < len; i++, s = s + 1 == b ? a : s + 1) {
        uint32_t se = g->o.split_every;
        bool split_slot = se >= 2 && (s % se == se - 2 || s % se == se - 1);
        if (!g->use[s] && !split_slot && !(g->boundary && g->boundary[s])) return s;
    }
    return UINT32_MAX;
}

static void schedule_constants(gen *g)
{
    const ls_gen_opts *o = &g->o;
    g->use = ls_calloc(o->nodes ? o->nodes : 1, sizeof *g->use);
    uint32_t share = o->share_partitions ? o->share_partitions : 1;
    g->regions = o->partitions ? o->partitions : share;
    if (g->regions > o->nodes) g->regions = o->nodes ? o->nodes : 1;
    if (share > g->regions) share = g->regions;
    if (o->cpu_boundaries && o->partitions) {
        g->boundary = ls_calloc(o->nodes ? o->nodes : 1, sizeof *g->boundary);
        for (uint32_t r = 1; r < g->regions; r++) {
            uint32_t s = region_start(g, r);
            if (s < o->nodes) g->boundary[s] = true;
        }
    }
    uint32_t n_shared = (uint32_t)(o->constants * o->shared_fraction + 0.5);
    if (n_shared > o->constants) n_shared = o->constants;
    for (uint32_t j = 0; j < o->constants; j++) {
        uint32_t uses = j < n_shared ? share : 1;
        for (uint32_t t = 0; t < uses; t++) {
            uint32_t r = (uint32_t)(((uint64_t)j * 7919 + (uint64_t)t * (g->regions / uses)) % g->regions);
            uint32_t s = free_slot(g, r, j * 2654435761u + t);
            if (s != UINT32_MAX) g->use[s] = j + 1;
        }
    }
}

static const char *take_name(gen *g, int op, char *buf, size_t cap)
{
    const char *base = g->o.edge ? ops[op].edge_name : ops[op].name;
    int counter = op == OP_ADDC ? OP_ADD : op;
    uint32_t n = g->count[counter]++;
    if (n) snprintf(buf, cap, "%s_%u", base, n);
    else snprintf(buf, cap, "%s", base);
    return buf;
}

static void sep(gen *g)
{
    if (!g->first) ls_buf_putc(&g->out, ',');
    g->first = false;
}

static void tensor_meta(ls_buf *b, uint32_t d0, uint32_t d1, bool two, bool grad)
{
    if (two)
        ls_buf_printf(b,
                      "{\"dtype\":7,\"sizes\":[{\"as_int\":%u},{\"as_int\":%u}],\"requires_grad\":%s,"
                      "\"device\":{\"type\":\"cpu\",\"index\":null},\"strides\":[{\"as_int\":%u},{\"as_int\":1}],"
                      "\"storage_offset\":{\"as_int\":0},\"layout\":7}",
                      d0, d1, grad ? "true" : "false", d1);
    else
        ls_buf_printf(b,
                      "{\"dtype\":7,\"sizes\":[{\"as_int\":%u}],\"requires_grad\":%s,"
                      "\"device\":{\"type\":\"cpu\",\"index\":null},\"strides\":[{\"as_int\":1}],"
                      "\"storage_offset\":{\"as_int\":0},\"layout\":7}",
                      d0, grad ? "true" : "false");
}

static void arg_tensor(ls_buf *b, const char *pname, const char *value, bool last)
{
    ls_buf_printf(b, "{\"name\":\"%s\",\"arg\":{\"as_tensor\":{\"name\":\"%s\"}},\"kind\":1}%s", pname, value,
                  last ? "" : ",");
}

static void metadata(gen *g, uint32_t k, int op, const char *name)
{
    ls_buf *b = &g->out;
    uint32_t layer = k / 5;
    ls_buf_printf(b,
                  ",\"metadata\":{\"stack_trace\":\"File \\\"/work/models/generated.py\\\", line %u, in forward\\n    "
                  "x = self.layers[%u].%s(x)\",\"nn_module_stack\":\"L__self__,,generated.Model;L__self___layers_%u,"
                  "layers.%u,generated.Block\",\"source_fn_stack\":\"%s,torch.%s\",\"torch_fn\":\"%s_%u;"
                  "builtin_function_or_method.%s\"",
                  40 + op * 3, layer, ops[op].fn, layer, layer, name, ops[op].fn, ops[op].fn, k, ops[op].fn);
    if (g->o.partitions && !g->o.cpu_boundaries)
        ls_buf_printf(b, ",\"custom\":\"{\\\"delegation_tag\\\": \\\"tag%u\\\"}\"",
                      (uint32_t)((uint64_t)k * g->o.partitions / g->o.nodes));
    ls_buf_puts(b, "}");
}

static void begin_node(gen *g, int op, const char *name)
{
    sep(g);
    ls_buf_printf(&g->out, "{\"target\":\"%s%s\",\"name\":\"%s\",\"inputs\":[",
                  g->o.edge ? "executorch.exir.dialects.edge.ops." : "torch.ops.", g->o.edge ? ops[op].edge : ops[op].aten,
                  name);
}

/* The nodes; returns the name of the last value (the output). */
static void write_nodes(gen *g, ls_buf *tvals, char *last, size_t cap)
{
    const ls_gen_opts *o = &g->o;
    uint32_t d = o->width, h = d / 2;
    char prev[64] = "x", name[64], a[64], b2[64];
    for (uint32_t k = 0; k < o->nodes; k++) {
        int op = node_kind(g, k);
        take_name(g, op, name, sizeof name);
        begin_node(g, op, name);
        ls_buf *b = &g->out;
        uint32_t layer = o->params ? (k / 5) % o->params : 0;
        switch (op) {
        case OP_LINEAR:
            if (o->edge) {
                ls_buf_printf(b, "{\"name\":\"self\",\"arg\":{\"as_tensor\":{\"name\":\"p_layers_%u_bias\"}},\"kind\":1},", layer);
                arg_tensor(b, "mat1", prev, false);
                ls_buf_printf(b, "{\"name\":\"mat2\",\"arg\":{\"as_tensor\":{\"name\":\"p_layers_%u_weight\"}},\"kind\":1}", layer);
            } else {
                arg_tensor(b, "input", prev, false);
                ls_buf_printf(b, "{\"name\":\"weight\",\"arg\":{\"as_tensor\":{\"name\":\"p_layers_%u_weight\"}},\"kind\":1},", layer);
                ls_buf_printf(b, "{\"name\":\"bias\",\"arg\":{\"as_tensor\":{\"name\":\"p_layers_%u_bias\"}},\"kind\":1}", layer);
            }
            break;
        case OP_RELU:
        case OP_TANH:
        case OP_SIN: arg_tensor(b, "self", prev, true); break;
        case OP_MUL:
            arg_tensor(b, "self", prev, false);
            arg_tensor(b, "other", prev, true);
            break;
        case OP_ADD:
            arg_tensor(b, "self", prev, false);
            arg_tensor(b, "other", "x", true);
            break;
        case OP_ADDC: {
            char c[64];
            snprintf(c, sizeof c, "c_const_%u", g->use[k] - 1);
            arg_tensor(b, "self", prev, false);
            arg_tensor(b, "other", c, true);
            break;
        }
        case OP_SPLIT:
            arg_tensor(b, "self", prev, false);
            ls_buf_printf(b, "{\"name\":\"split_sizes\",\"arg\":{\"as_ints\":[%u,%u]},\"kind\":1},"
                             "{\"name\":\"dim\",\"arg\":{\"as_int\":1},\"kind\":1}", h, d - h);
            break;
        case OP_CAT:
            ls_buf_printf(b, "{\"name\":\"tensors\",\"arg\":{\"as_tensors\":[{\"name\":\"%s\"},{\"name\":\"%s\"}]},"
                             "\"kind\":1},{\"name\":\"dim\",\"arg\":{\"as_int\":1},\"kind\":1}", a, b2);
            break;
        default: break;
        }
        ls_buf_puts(b, "],\"outputs\":[");
        if (op == OP_SPLIT) { /* a Tensor[] return: the values are named as FX names the getitems */
            take_name(g, OP_GETITEM, a, sizeof a);
            take_name(g, OP_GETITEM, b2, sizeof b2);
            ls_buf_printf(b, "{\"as_tensors\":[{\"name\":\"%s\"},{\"name\":\"%s\"}]}]", a, b2);
            ls_buf_printf(tvals, ",\"%s\":", a);
            tensor_meta(tvals, 1, h, true, false);
            ls_buf_printf(tvals, ",\"%s\":", b2);
            tensor_meta(tvals, 1, d - h, true, false);
        } else {
            ls_buf_printf(b, "{\"as_tensor\":{\"name\":\"%s\"}}]", name);
            ls_buf_printf(tvals, ",\"%s\":", name);
            tensor_meta(tvals, 1, d, true, false);
            snprintf(prev, sizeof prev, "%s", name);
        }
        metadata(g, k, op, name);
        ls_buf_puts(b, ",\"is_hop_single_tensor_return\":null}");
    }
    snprintf(last, cap, "%s", prev);
}

static char *build_json(gen *g, size_t *len)
{
    const ls_gen_opts *o = &g->o;
    uint32_t d = o->width;
    ls_buf tvals = {0};
    ls_buf *b = &g->out;
    ls_buf_puts(b, "{\"graph_module\":{\"graph\":{\"inputs\":[");
    g->first = true;
    char n[96];
    for (uint32_t i = 0; i < o->params; i++) {
        sep(g);
        ls_buf_printf(b, "{\"as_tensor\":{\"name\":\"p_layers_%u_weight\"}},{\"as_tensor\":{\"name\":\"p_layers_%u_bias\"}}", i, i);
    }
    for (uint32_t j = 0; j < o->constants; j++) {
        sep(g);
        ls_buf_printf(b, "{\"as_tensor\":{\"name\":\"c_const_%u\"}}", j);
    }
    sep(g);
    ls_buf_puts(b, "{\"as_tensor\":{\"name\":\"x\"}}],\"nodes\":[");
    /* tensor_values of the placeholders first; the nodes add theirs */
    /* in graph order, as torch writes them */
    for (uint32_t i = 0; i < o->params; i++) {
        ls_buf_printf(&tvals, "\"p_layers_%u_weight\":", i);
        tensor_meta(&tvals, d, d, true, true);
        ls_buf_printf(&tvals, ",\"p_layers_%u_bias\":", i);
        tensor_meta(&tvals, d, 0, false, true);
        ls_buf_putc(&tvals, ',');
    }
    for (uint32_t j = 0; j < o->constants; j++) {
        ls_buf_printf(&tvals, "\"c_const_%u\":", j);
        tensor_meta(&tvals, 1, d, true, false);
        ls_buf_putc(&tvals, ',');
    }
    ls_buf_puts(&tvals, "\"x\":");
    tensor_meta(&tvals, 1, d, true, false);
    g->first = true;
    char last[64];
    write_nodes(g, &tvals, last, sizeof last);
    ls_buf_printf(b, "],\"outputs\":[{\"as_tensor\":{\"name\":\"%s\"}}],\"tensor_values\":{", last);
    ls_buf_putn(b, tvals.s, tvals.len);
    ls_buf_free(&tvals);
    ls_buf_puts(b, "},\"sym_int_values\":{},\"sym_bool_values\":{},\"is_single_tensor_return\":false,"
                   "\"custom_obj_values\":{},\"sym_float_values\":{}},\"signature\":{\"input_specs\":[");
    g->first = true;
    for (uint32_t i = 0; i < o->params; i++) {
        sep(g);
        ls_buf_printf(b, "{\"parameter\":{\"arg\":{\"name\":\"p_layers_%u_weight\"},\"parameter_name\":\"layers.%u.weight\"}},"
                         "{\"parameter\":{\"arg\":{\"name\":\"p_layers_%u_bias\"},\"parameter_name\":\"layers.%u.bias\"}}",
                      i, i, i, i);
    }
    for (uint32_t j = 0; j < o->constants; j++) {
        sep(g);
        ls_buf_printf(b, "{\"tensor_constant\":{\"arg\":{\"name\":\"c_const_%u\"},\"tensor_constant_name\":\"const_%u\"}}", j, j);
    }
    sep(g);
    ls_buf_puts(b, "{\"user_input\":{\"arg\":{\"as_tensor\":{\"name\":\"x\"}}}}],\"output_specs\":[");
    snprintf(n, sizeof n, "%s", last);
    ls_buf_printf(b, "{\"user_output\":{\"arg\":{\"as_tensor\":{\"name\":\"%s\"}}}}]}", n);
    ls_buf_puts(b, ",\"module_call_graph\":[{\"fqn\":\"\",\"signature\":null}],\"metadata\":{},"
                   "\"treespec_namedtuple_fields\":{}},\"opset_version\":{\"aten\":10},\"range_constraints\":{},"
                   "\"schema_version\":{\"major\":8,\"minor\":12},");
    ls_buf_printf(b, "\"verifiers\":[\"%s\"],\"torch_version\":\"2.9.0+generated\"}", o->edge ? "EDGE" : "ATEN");
    *len = b->len;
    return ls_buf_take(b);
}

static void gen_init(gen *g, const ls_gen_opts *o)
{
    memset(g, 0, sizeof *g);
    g->o = *o;
    if (!g->o.width) g->o.width = 8;
    if (g->o.width < 2) g->o.width = 2;
    if (g->o.partitions > g->o.nodes) g->o.partitions = g->o.nodes;
    schedule_constants(g);
}

char *ls_gen_json(const ls_gen_opts *o, size_t *len)
{
    gen g;
    gen_init(&g, o);
    char *json = build_json(&g, len);
    free(g.use);
    free(g.boundary);
    return json;
}

/* ---- data */

static ls_blob *random_floats(uint64_t *state, uint32_t n)
{
    ls_blob *b = ls_blob_new((size_t)n * 4);
    float *f = (float *)b->data;
    for (uint32_t i = 0; i < n; i++) {
        uint64_t x = *state;
        x ^= x << 13, x ^= x >> 7, x ^= x << 17;
        *state = x;
        f[i] = (float)((double)(x >> 11) / 9007199254740992.0 * 0.2 - 0.1);
    }
    return b;
}

typedef void (*member_fn)(void *ctx, const char *rel, ls_blob *data); /* takes data */

static void config_entry(ls_buf *b, bool first, const char *fqn, const char *path, bool param, uint32_t d0, uint32_t d1,
                         bool two)
{
    ls_buf_printf(b, "%s\"%s\":{\"path_name\":\"%s\",\"is_param\":%s,\"use_pickle\":false,\"tensor_meta\":", first ? "" : ",",
                  fqn, path, param ? "true" : "false");
    tensor_meta(b, d0, d1, two, param);
    ls_buf_putc(b, '}');
}

static void data_members(const ls_gen_opts *o, member_fn add, void *ctx)
{
    uint64_t st = o->seed * 0x9E3779B97F4A7C15ull + 1;
    uint32_t d = o->width ? o->width : 8;
    ls_buf w = {0}, c = {0};
    ls_buf_puts(&w, "{\"config\":{");
    ls_buf_puts(&c, "{\"config\":{");
    char fqn[64], path[64];
    for (uint32_t i = 0; i < o->params; i++) {
        snprintf(fqn, sizeof fqn, "layers.%u.weight", i);
        snprintf(path, sizeof path, "weight_%u", 2 * i);
        config_entry(&w, i == 0, fqn, path, true, d, d, true);
        add(ctx, ls_internf("data/weights/%s", path), random_floats(&st, d * d));
        snprintf(fqn, sizeof fqn, "layers.%u.bias", i);
        snprintf(path, sizeof path, "weight_%u", 2 * i + 1);
        config_entry(&w, false, fqn, path, true, d, 0, false);
        add(ctx, ls_internf("data/weights/%s", path), random_floats(&st, d));
    }
    for (uint32_t j = 0; j < o->constants; j++) {
        snprintf(fqn, sizeof fqn, "const_%u", j);
        snprintf(path, sizeof path, "tensor_%u", j);
        config_entry(&c, j == 0, fqn, path, false, 1, d, true);
        add(ctx, ls_internf("data/constants/%s", path), random_floats(&st, d));
    }
    ls_buf_puts(&w, "}}");
    ls_buf_puts(&c, "}}");
    size_t wl = w.len, cl = c.len;
    add(ctx, "data/weights/model_weights_config.json", ls_blob_wrap((uint8_t *)ls_buf_take(&w), wl));
    add(ctx, "data/constants/model_constants_config.json", ls_blob_wrap((uint8_t *)ls_buf_take(&c), cl));
}

static void add_to_source(void *ctx, const char *rel, ls_blob *data)
{
    ls_weight_source_memory_add(ctx, rel, data);
}

ls_program *ls_gen_program(const ls_gen_opts *o, ls_error *err)
{
    size_t len;
    char *json = ls_gen_json(o, &len);
    ls_weight_source *ws = NULL;
    if (o->with_data) {
        ws = ls_weight_source_memory("generated", "model");
        data_members(o, add_to_source, ws);
    }
    ls_program *p = NULL;
    ls_load_json_ex("generated", "model", json, len, ws, !o->with_data, 0, &p, err);
    ls_weight_source_free(ws);
    free(json);
    return p;
}

/* ---- .pt2 */

typedef struct zip_ctx {
    zip_t *za;
    LS_VEC(ls_blob *) keep; /* libzip reads the buffers at zip_close */
    bool failed;
} zip_ctx;

static void add_to_zip(void *vctx, const char *rel, ls_blob *data)
{
    zip_ctx *z = vctx;
    ls_vec_push(&z->keep, data);
    char name[256];
    snprintf(name, sizeof name, "gen/%s", rel);
    zip_source_t *src = zip_source_buffer(z->za, data->data, data->size, 0);
    zip_int64_t idx = src ? zip_file_add(z->za, name, src, ZIP_FL_OVERWRITE) : -1;
    if (idx < 0) {
        if (src) zip_source_free(src);
        z->failed = true;
        return;
    }
    zip_set_file_compression(z->za, (zip_uint64_t)idx, ZIP_CM_STORE, 0);
}

int ls_gen_write_pt2(const ls_gen_opts *o, const char *path, ls_error *err)
{
    int code;
    zip_ctx z = {0};
    z.za = zip_open(path, ZIP_CREATE | ZIP_TRUNCATE, &code);
    if (!z.za) return ls_fail(err, "%s: cannot create the archive", path);
    size_t len;
    char *json = ls_gen_json(o, &len);
    add_to_zip(&z, "archive_format", ls_blob_wrap((uint8_t *)ls_strdup("pt2"), 3));
    add_to_zip(&z, "models/model.json", ls_blob_wrap((uint8_t *)json, len));
    if (o->with_data) data_members(o, add_to_zip, &z);
    int rc = 0;
    if (z.failed) {
        rc = ls_fail(err, "%s: cannot add a member: %s", path, zip_strerror(z.za));
        zip_discard(z.za);
    } else if (zip_close(z.za) != 0) {
        rc = ls_fail(err, "%s: cannot write the archive: %s", path, zip_strerror(z.za));
        zip_discard(z.za);
    }
    for (uint32_t i = 0; i < z.keep.n; i++) ls_blob_unref(z.keep.v[i]);
    free(z.keep.v);
    return rc;
}
