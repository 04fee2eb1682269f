/* Backend profiles: the built-in one of the bundled delegate, the shipped ones (profiles/NAME.json,
 * compiled in) and JSON files (docs/backends.md lists every field and the source it mirrors). */
#include "profile.h"

#include <cjson/cJSON.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "profile_embed.h"
#include "rules.h"
#include "runtime.h"

#define FLOATS (LS_DTYPE_BIT(LS_DT_F16) | LS_DTYPE_BIT(LS_DT_BF16) | LS_DTYPE_BIT(LS_DT_F32))
#define INTS (LS_DTYPE_BIT(LS_DT_I32) | LS_DTYPE_BIT(LS_DT_I64))
#define BOOLS LS_DTYPE_BIT(LS_DT_BOOL)
#define ANY_DTYPE (((1u << LS_DT_COUNT) - 1u) & ~LS_DTYPE_BIT(LS_DT_UNKNOWN))

/* Ops no profile can take: builtins and in-place ops (a functional program has none). */
static bool never_delegated(const ls_op *op)
{
    /* ExecuTorch's prim ops compute scalars on the CPU runtime itself: no backend takes them */
    return (op->flags & (LS_OPF_SPECIAL | LS_OPF_INPLACE)) != 0 || op->ns == ls_intern("executorch_prim");
}

static void op_defaults(ls_profile *p)
{
    for (int i = 0; i < LS_OP_COUNT; i++) {
        ls_profile_op *po = &p->ops[i];
        memset(po, 0, sizeof *po);
        po->weight = po->bias = po->act = -1;
        for (int k = 0; k < LS_MAX_FUSED; k++) po->fused[k] = LS_OP_COUNT;
    }
}

/* The bundled delegate: everything the runtime runs except trigonometry (sin, cos, atan2
 * stay on the CPU and split partitions, which the samples rely on), in float16, bfloat16,
 * float32, and int32/int64/bool where the op means something for them. float64 stays on the
 * CPU: mobile backends do not compute in double. Quantization and convolution are left to
 * the backends that have them. */
static uint32_t bundled_dtypes(const ls_op *op)
{
    if (never_delegated(op) || !ls_kernel_for(op)) return 0; /* it runs the runtime's kernels */
    if (ls_op_is_quant_primitive(op)) return 0;
    switch (op->id) {
    case LS_OP_sin:
    case LS_OP_cos:
    case LS_OP_atan2:
    case LS_OP_convolution:
    case LS_OP_conv2d:
    case LS_OP_hardtanh: return 0;
    case LS_OP_pow_Tensor_Scalar:
    case LS_OP_pow_Tensor_Tensor:
    case LS_OP_pow_Scalar:
    case LS_OP_sqrt:
    case LS_OP_rsqrt:
    case LS_OP_exp:
    case LS_OP_log:
    case LS_OP_tanh:
    case LS_OP_sigmoid:
    case LS_OP_gelu:
    case LS_OP_silu:
    case LS_OP__softmax:
    case LS_OP_softmax_int:
    case LS_OP__log_softmax:
    case LS_OP_log_softmax_int:
    case LS_OP_mean:
    case LS_OP_mean_dim:
    case LS_OP_mm:
    case LS_OP_bmm:
    case LS_OP_addmm:
    case LS_OP_linear:
    case LS_OP_matmul:
    case LS_OP_layer_norm:
    case LS_OP_native_layer_norm:
    case LS_OP_sdpa: return FLOATS;
    case LS_OP_div_Tensor:
    case LS_OP_div_Tensor_mode:
    case LS_OP_div_Scalar:
    case LS_OP_div_Scalar_mode:
    case LS_OP_add_Tensor:
    case LS_OP_add_Scalar:
    case LS_OP_sub_Tensor:
    case LS_OP_sub_Scalar:
    case LS_OP_rsub_Scalar:
    case LS_OP_mul_Tensor:
    case LS_OP_mul_Scalar:
    case LS_OP_neg:
    case LS_OP_abs:
    case LS_OP_relu:
    case LS_OP_clamp:
    case LS_OP_clamp_Tensor:
    case LS_OP_amax:
    case LS_OP_amin:
    case LS_OP_argmax:
    case LS_OP_cumsum: return FLOATS | INTS;
    case LS_OP_sum:
    case LS_OP_sum_dim_IntList: return FLOATS | INTS | BOOLS;
    default: return FLOATS | INTS | BOOLS; /* comparisons, logic, where, shapes, copies, indexing, creation */
    }
}

static ls_profile bundled;

const ls_profile *ls_profile_bundled(void)
{
    if (!bundled.name) {
        op_defaults(&bundled);
        for (int i = 0; i < LS_OP_COUNT; i++) bundled.ops[i].dtypes = bundled_dtypes(ls_op_get((ls_op_id)i));
        bundled.backend_id = ls_intern("BundledBackend");
        bundled.title = bundled.backend_id;
        bundled.tag_prefix = ls_intern("tag");
        bundled.stateful = true;
        bundled.fold_masks = true;
        bundled.take_constants = LS_TAKE_ALL;
        bundled.partitioner = LS_PARTITIONER_CAPABILITY;
        bundled.flow[bundled.n_flow++] = ls_intern("to_edge");
        bundled.name = ls_intern("bundled");
    }
    return &bundled;
}

void ls_profile_free(ls_profile *p)
{
    if (!p || p == &bundled) return;
    free(p->rules);
    free(p);
}

char *ls_dtype_mask_str(uint32_t mask, char *buf, size_t cap)
{
    size_t len = 0;
    buf[0] = 0;
    for (int d = 1; d < LS_DT_COUNT && len < cap; d++)
        if (mask & LS_DTYPE_BIT(d)) len += (size_t)snprintf(buf + len, cap - len, "%s%s", len ? ", " : "", ls_dtype_name((ls_dtype)d));
    return buf;
}

/* ---- shipped profiles */

const char *const *ls_profile_shipped(uint32_t *count)
{
    static const char *names[64];
    static uint32_t n;
    if (!n)
        for (unsigned i = 0; i < ls_embedded_profile_count && n < 64; i++) names[n++] = ls_embedded_profiles[i].name;
    *count = n;
    return names;
}

const char *ls_profile_shipped_json(const char *name, size_t *len)
{
    for (unsigned i = 0; i < ls_embedded_profile_count; i++)
        if (strcmp(ls_embedded_profiles[i].name, name) == 0) {
            *len = ls_embedded_profiles[i].len;
            return ls_embedded_profiles[i].json;
        }
    return NULL;
}

/* ---- JSON */

static int parse_dtypes(const char *where, const char *field, const cJSON *arr, uint32_t *mask, ls_error *err)
{
    if (!cJSON_IsArray(arr)) return ls_fail(err, "%s: %s: expected a list of dtype names", where, field);
    *mask = 0;
    int i = 0;
    for (const cJSON *e = arr->child; e; e = e->next, i++) {
        ls_dtype d = cJSON_IsString(e) ? ls_dtype_parse(e->valuestring) : LS_DT_UNKNOWN;
        if (d == LS_DT_UNKNOWN)
            return ls_fail(err, "%s: %s[%d]: unknown dtype %s%s%s", where, field, i, cJSON_IsString(e) ? "'" : "",
                           cJSON_IsString(e) ? e->valuestring : "(not a string)", cJSON_IsString(e) ? "'" : "");
        *mask |= LS_DTYPE_BIT(d);
    }
    return 0;
}

/* Every op a spelling names: one overload ("aten.add.Tensor", a full target, "add.Tensor") or
 * every overload of a name ("add"). Returns how many (at most cap) it wrote to ops. */
static int ops_named(const char *spelling, const ls_op **ops, int cap)
{
    ls_dialect d;
    const char *dot = strchr(spelling, '.');
    if (dot && !strchr(dot + 1, '.') && !strstr(spelling, "::")) { /* "add.Tensor": in any namespace */
        const char *name = ls_intern_n(spelling, (size_t)(dot - spelling)), *ovl = ls_intern(dot + 1);
        for (int i = 0; i < LS_OP_COUNT; i++) {
            const ls_op *o = ls_op_get((ls_op_id)i);
            if (o->name == name && o->overload == ovl && !never_delegated(o)) {
                ops[0] = o;
                return 1;
            }
        }
        return 0;
    }
    if (dot || strstr(spelling, "::")) {
        const ls_op *op = ls_op_from_target(spelling, &d);
        if (!op || never_delegated(op)) return 0;
        ops[0] = op;
        return 1;
    }
    int count = 0;
    const char *name = ls_intern(spelling);
    for (int i = 0; i < LS_OP_COUNT && count < cap; i++) {
        const ls_op *o = ls_op_get((ls_op_id)i);
        if (o->name == name && !never_delegated(o)) ops[count++] = o;
    }
    return count;
}

static const char *get_str(const cJSON *root, const char *key)
{
    const cJSON *v = cJSON_GetObjectItemCaseSensitive(root, key);
    return cJSON_IsString(v) ? v->valuestring : NULL;
}

static int get_bool(const char *where, const cJSON *root, const char *key, bool *out, ls_error *err)
{
    const cJSON *v = cJSON_GetObjectItemCaseSensitive(root, key);
    if (!v) return 0; /* keep what it is (the default, or the profile it extends) */
    if (!cJSON_IsBool(v)) return ls_fail(err, "%s: '%s' must be true or false", where, key);
    *out = cJSON_IsTrue(v);
    return 0;
}

static int check_fields(const char *where, const char *what, const cJSON *obj, const char *const *known, size_t n, ls_error *err)
{
    for (const cJSON *e = obj->child; e; e = e->next) {
        bool ok = false;
        for (size_t i = 0; i < n; i++) ok |= strcmp(e->string, known[i]) == 0;
        if (!ok) return ls_fail(err, "%s: %sunknown field '%s' (docs/backends.md lists them)", where, what, e->string);
    }
    return 0;
}

static uint32_t add_rule(ls_profile *p, const ls_rule *r)
{
    if (p->n_rules == p->rules_cap) {
        p->rules_cap = p->rules_cap ? 2 * p->rules_cap : 16;
        p->rules = ls_realloc(p->rules, sizeof *p->rules * p->rules_cap);
    }
    p->rules[p->n_rules] = *r;
    return p->n_rules++;
}

static int parse_rules(const char *where, const char *field, const cJSON *arr, const ls_op *op, ls_profile *p, ls_error *err)
{
    if (!cJSON_IsArray(arr)) return ls_fail(err, "%s: %s: expected a list of rules", where, field);
    int i = 0;
    for (const cJSON *e = arr->child; e; e = e->next, i++) {
        char place[96];
        snprintf(place, sizeof place, "%s: %s[%d]", where, field, i);
        if (!cJSON_IsString(e)) return ls_fail(err, "%s: expected a rule name", place);
        ls_rule r;
        if (pr_parse_rule(place, e->valuestring, op, &r, err) != 0) return -1;
        add_rule(p, &r);
    }
    return 0;
}

static int schema_index(const char *where, const ls_op *op, const cJSON *v, int8_t *out, ls_error *err)
{
    if (!v) return 0;
    if (cJSON_IsNumber(v) && v->valueint >= 0 && v->valueint < op->schema.nparams) {
        *out = (int8_t)v->valueint;
        return 0;
    }
    if (cJSON_IsString(v))
        for (int i = 0; i < op->schema.nparams; i++)
            if (strcmp(op->schema.params[i].name, v->valuestring) == 0) {
                *out = (int8_t)i;
                return 0;
            }
    return ls_fail(err, "%s: %s has no such argument", where, op->qualname);
}

/* One entry of "ops": a name, or {"op", "dtypes", "rules", "quant", "gemm", "fuse", "keep"}. */
static int parse_op(const char *where, int i, const cJSON *e, uint32_t def, ls_profile *p, ls_error *err)
{
    static const char *const known[] = {"op", "dtypes", "rules", "quant", "gemm", "fuse", "keep", "comment"};
    char place[64];
    snprintf(place, sizeof place, "%s: ops[%d]", where, i);
    const char *spelling = cJSON_IsString(e) ? e->valuestring : cJSON_IsObject(e) ? get_str(e, "op") : NULL;
    if (!spelling) return ls_fail(err, "%s: expected \"name\" or {\"op\": \"name\", ...}", place);
    if (cJSON_IsObject(e) && check_fields(place, "", e, known, sizeof known / sizeof known[0], err) != 0) return -1;
    const ls_op *ops[16];
    int nops = ops_named(spelling, ops, 16);
    if (nops == 0) return ls_fail(err, "%s: unknown operator '%s'", place, spelling);
    uint32_t mask = def;
    const cJSON *d = cJSON_IsObject(e) ? cJSON_GetObjectItemCaseSensitive(e, "dtypes") : NULL;
    char field[48];
    snprintf(field, sizeof field, "ops[%d].dtypes", i);
    if (d && parse_dtypes(where, field, d, &mask, err) != 0) return -1;
    if (d && !mask) return ls_fail(err, "%s: %s: empty (leave the op out instead)", where, field);
    for (int k = 0; k < nops; k++) {
        ls_profile_op *po = &p->ops[ops[k]->id];
        po->dtypes = mask;
        if (!cJSON_IsObject(e)) continue;
        bool flag;
        flag = po->flags & LS_POP_QUANT;
        if (get_bool(place, e, "quant", &flag, err) != 0) return -1;
        po->flags = (uint8_t)(flag ? po->flags | LS_POP_QUANT : po->flags & ~LS_POP_QUANT);
        flag = po->flags & LS_POP_KEEP;
        if (get_bool(place, e, "keep", &flag, err) != 0) return -1;
        po->flags = (uint8_t)(flag ? po->flags | LS_POP_KEEP : po->flags & ~LS_POP_KEEP);
        const cJSON *rules = cJSON_GetObjectItemCaseSensitive(e, "rules");
        if (rules) {
            snprintf(field, sizeof field, "ops[%d].rules", i);
            po->first_rule = p->n_rules;
            if (parse_rules(where, field, rules, ops[k], p, err) != 0) return -1;
            po->n_rules = (uint16_t)(p->n_rules - po->first_rule);
        }
        const cJSON *gemm = cJSON_GetObjectItemCaseSensitive(e, "gemm");
        if (gemm) {
            static const char *const gk[] = {"weight", "bias", "act"};
            char gp[80];
            snprintf(gp, sizeof gp, "%s.gemm", place);
            if (!cJSON_IsObject(gemm) || check_fields(gp, "", gemm, gk, 3, err) != 0)
                return ls_fail(err, "%s: expected {\"weight\": ARG, \"bias\": ARG, \"act\": ARG}", gp);
            if (schema_index(gp, ops[k], cJSON_GetObjectItemCaseSensitive(gemm, "weight"), &po->weight, err) != 0 ||
                schema_index(gp, ops[k], cJSON_GetObjectItemCaseSensitive(gemm, "bias"), &po->bias, err) != 0 ||
                schema_index(gp, ops[k], cJSON_GetObjectItemCaseSensitive(gemm, "act"), &po->act, err) != 0)
                return -1;
            if (po->weight < 0 || po->act < 0) return ls_fail(err, "%s: give the weight and act arguments", gp);
            po->flags |= LS_POP_GEMM;
        }
        const cJSON *fuse = cJSON_GetObjectItemCaseSensitive(e, "fuse");
        if (fuse) {
            if (!cJSON_IsArray(fuse) || cJSON_GetArraySize(fuse) > LS_MAX_FUSED)
                return ls_fail(err, "%s.fuse: expected a list of at most %d operator names", place, LS_MAX_FUSED);
            int f = 0;
            for (const cJSON *x = fuse->child; x; x = x->next, f++) {
                const ls_op *fo[1];
                if (!cJSON_IsString(x) || ops_named(x->valuestring, fo, 1) != 1)
                    return ls_fail(err, "%s.fuse[%d]: unknown operator", place, f);
                po->fused[f] = (uint16_t)fo[0]->id;
            }
        }
    }
    return 0;
}

/* {"commit": "...", "files": ["..."]} or a string: "pytorch/executorch@COMMIT: a.py, b.py". */
static const char *parse_follows(const cJSON *v)
{
    if (cJSON_IsString(v)) return ls_intern(v->valuestring);
    if (!cJSON_IsObject(v)) return NULL;
    ls_buf b = {0};
    const char *commit = get_str(v, "commit");
    ls_buf_printf(&b, "%s@%s", get_str(v, "repo") ? get_str(v, "repo") : "pytorch/executorch", commit ? commit : "?");
    const cJSON *files = cJSON_GetObjectItemCaseSensitive(v, "files");
    int i = 0;
    for (const cJSON *f = files ? files->child : NULL; f; f = f->next, i++)
        if (cJSON_IsString(f)) ls_buf_printf(&b, "%s%s", i ? ", " : ": ", f->valuestring);
    char *s = ls_buf_take(&b);
    const char *out = ls_intern(s);
    free(s);
    return out;
}

static int parse_profile(const char *where, const cJSON *root, ls_profile *p, int depth, ls_error *err);

static int parse_base(const char *where, const char *base, ls_profile *p, int depth, ls_error *err)
{
    if (depth > 4) return ls_fail(err, "%s: 'extends' goes deeper than 4 profiles", where);
    if (strcmp(base, "bundled") == 0) {
        const ls_profile *b = ls_profile_bundled();
        free(p->rules);
        *p = *b;
        p->rules = NULL;
        p->n_rules = p->rules_cap = 0;
        return 0;
    }
    size_t len;
    const char *json = ls_profile_shipped_json(base, &len);
    if (!json) return ls_fail(err, "%s: 'extends': no shipped profile '%s'", where, base);
    cJSON *root = cJSON_ParseWithLength(json, len);
    if (!root) return ls_fail(err, "%s: 'extends': the shipped profile '%s' is not valid JSON", where, base);
    char bw[96];
    snprintf(bw, sizeof bw, "<embedded>/%s.json", base);
    int rc = parse_profile(bw, root, p, depth + 1, err);
    cJSON_Delete(root);
    return rc;
}

static int parse_profile(const char *where, const cJSON *root, ls_profile *p, int depth, ls_error *err)
{
    static const char *const known[] = {"name", "title", "backend_id", "tag_prefix", "stateful", "fold_masks",
                                        "take_constants", "single_partition", "lower_full_graph", "partitioner",
                                        "flow", "dtypes", "rules", "ops", "all_except", "skip_ops", "extends",
                                        "follows", "snapshot", "keep", "boundary", "comment"};
    if (!cJSON_IsObject(root)) return ls_fail(err, "%s: a profile is a JSON object", where);
    if (check_fields(where, "", root, known, sizeof known / sizeof known[0], err) != 0) return -1;
    const char *base = get_str(root, "extends");
    if (cJSON_GetObjectItemCaseSensitive(root, "extends") && !base) return ls_fail(err, "%s: 'extends' must be a profile name", where);
    if (base) {
        if (parse_base(where, base, p, depth, err) != 0) return -1;
    } else {
        op_defaults(p);
        p->take_constants = LS_TAKE_ALL;
        p->partitioner = LS_PARTITIONER_CAPABILITY;
        p->n_flow = 0;
        p->flow[p->n_flow++] = ls_intern("to_edge");
    }
    const char *name = get_str(root, "name"), *bid = get_str(root, "backend_id"), *prefix = get_str(root, "tag_prefix");
    if ((!name || !*name) && !p->name) return ls_fail(err, "%s: 'name' is missing or not a string", where);
    if ((!bid || !*bid) && !p->backend_id) return ls_fail(err, "%s: 'backend_id' is missing or not a string", where);
    if (cJSON_GetObjectItemCaseSensitive(root, "tag_prefix") && (!prefix || !*prefix))
        return ls_fail(err, "%s: 'tag_prefix' must be a non-empty string", where);
    if (name && *name) p->name = ls_intern(name);
    if (bid && *bid) p->backend_id = ls_intern(bid);
    if (prefix) p->tag_prefix = ls_intern(prefix);
    if (!p->tag_prefix) p->tag_prefix = ls_intern("tag");
    const char *title = get_str(root, "title");
    if (title) p->title = ls_intern(title);
    if (!p->title || (bid && !title && !base)) p->title = p->backend_id;
    const cJSON *follows = cJSON_GetObjectItemCaseSensitive(root, "follows");
    if (follows) p->follows = parse_follows(follows);
    if (get_bool(where, root, "stateful", &p->stateful, err) || get_bool(where, root, "fold_masks", &p->fold_masks, err) ||
        get_bool(where, root, "single_partition", &p->single_partition, err) ||
        get_bool(where, root, "lower_full_graph", &p->lower_full_graph, err) ||
        get_bool(where, root, "snapshot", &p->snapshot, err))
        return -1;
    const cJSON *boundary = cJSON_GetObjectItemCaseSensitive(root, "boundary");
    if (boundary) {
        static const char *const bknown[] = {"release_qdq", "integer_edges"};
        if (!cJSON_IsObject(boundary)) return ls_fail(err, "%s: 'boundary' must be an object (release_qdq, integer_edges)", where);
        char bw[160];
        snprintf(bw, sizeof bw, "%s: boundary", where);
        if (check_fields(where, "boundary: ", boundary, bknown, 2, err) != 0 ||
            get_bool(bw, boundary, "release_qdq", &p->release_qdq, err) ||
            get_bool(bw, boundary, "integer_edges", &p->integer_edges, err))
            return -1;
    }
    const cJSON *take = cJSON_GetObjectItemCaseSensitive(root, "take_constants");
    if (take) {
        const char *t = cJSON_IsString(take) ? take->valuestring : NULL;
        if (cJSON_IsBool(take)) p->take_constants = cJSON_IsTrue(take) ? LS_TAKE_ALL : LS_TAKE_NONE;
        else if (t && strcmp(t, "all") == 0) p->take_constants = LS_TAKE_ALL;
        else if (t && strcmp(t, "none") == 0) p->take_constants = LS_TAKE_NONE;
        else if (t && strcmp(t, "deps") == 0) p->take_constants = LS_TAKE_DEPS;
        else return ls_fail(err, "%s: 'take_constants' must be true, false, \"all\", \"none\" or \"deps\"", where);
    }
    const char *part = get_str(root, "partitioner");
    if (cJSON_GetObjectItemCaseSensitive(root, "partitioner")) {
        if (part && strcmp(part, "capability") == 0) p->partitioner = LS_PARTITIONER_CAPABILITY;
        else if (part && strcmp(part, "group") == 0) p->partitioner = LS_PARTITIONER_GROUP, p->take_constants = LS_TAKE_DEPS;
        else return ls_fail(err, "%s: 'partitioner' must be \"capability\" or \"group\"", where);
    }
    const cJSON *flow = cJSON_GetObjectItemCaseSensitive(root, "flow");
    if (flow) {
        if (!cJSON_IsArray(flow)) return ls_fail(err, "%s: 'flow' must be a list of pass names", where);
        p->n_flow = 0;
        bool edge = false;
        int i = 0;
        for (const cJSON *e = flow->child; e; e = e->next, i++) {
            const char *s = cJSON_IsString(e) ? e->valuestring : "";
            if (strcmp(s, "to_edge") != 0 && strcmp(s, "constant_prop") != 0)
                return ls_fail(err, "%s: flow[%d]: '%s' is not a pass run before partitioning (to_edge, constant_prop)", where, i, s);
            if (p->n_flow == LS_MAX_FLOW) return ls_fail(err, "%s: flow: at most %d passes", where, LS_MAX_FLOW);
            edge |= strcmp(s, "to_edge") == 0;
            p->flow[p->n_flow++] = ls_intern(s);
        }
        if (!edge) return ls_fail(err, "%s: flow must include to_edge", where);
    }
    uint32_t def = ANY_DTYPE;
    const cJSON *dt = cJSON_GetObjectItemCaseSensitive(root, "dtypes");
    if (dt && parse_dtypes(where, "dtypes", dt, &def, err) != 0) return -1;
    const cJSON *rules = cJSON_GetObjectItemCaseSensitive(root, "rules");
    if (rules) {
        if (base) return ls_fail(err, "%s: 'rules' cannot change the rules of the profile it extends", where);
        if (parse_rules(where, "rules", rules, NULL, p, err) != 0) return -1;
        p->n_node_rules = p->n_rules;
    }
    const cJSON *ops = cJSON_GetObjectItemCaseSensitive(root, "ops");
    const cJSON *except = cJSON_GetObjectItemCaseSensitive(root, "all_except");
    const cJSON *skip = cJSON_GetObjectItemCaseSensitive(root, "skip_ops");
    if (!ops && !except && !base)
        return ls_fail(err, "%s: give 'ops' (what the backend takes) or 'all_except' (what it does not)", where);
    if (except) {
        if (!cJSON_IsArray(except)) return ls_fail(err, "%s: 'all_except' must be a list of operator names", where);
        for (int i = 0; i < LS_OP_COUNT; i++)
            if (!never_delegated(ls_op_get((ls_op_id)i))) p->ops[i].dtypes = def;
        int i = 0;
        for (const cJSON *e = except->child; e; e = e->next, i++) {
            const ls_op *named[16];
            int k = cJSON_IsString(e) ? ops_named(e->valuestring, named, 16) : -1;
            if (k < 0) return ls_fail(err, "%s: all_except[%d]: expected an operator name", where, i);
            if (k == 0) return ls_fail(err, "%s: all_except[%d]: unknown operator '%s'", where, i, e->valuestring);
            for (int j = 0; j < k; j++) p->ops[named[j]->id].dtypes = 0;
        }
    }
    if (ops) {
        if (!cJSON_IsArray(ops)) return ls_fail(err, "%s: 'ops' must be a list", where);
        int i = 0;
        for (const cJSON *e = ops->child; e; e = e->next, i++)
            if (parse_op(where, i, e, def, p, err) != 0) return -1;
    }
    const cJSON *keep = cJSON_GetObjectItemCaseSensitive(root, "keep");
    if (keep) { /* ops_to_not_decompose: a list of composites, or "supported" */
        if (cJSON_IsString(keep) && strcmp(keep->valuestring, "supported") == 0) {
            p->keep_supported = true;
        } else if (cJSON_IsArray(keep)) {
            int i = 0;
            for (const cJSON *e = keep->child; e; e = e->next, i++) {
                const ls_op *named[16];
                int k = cJSON_IsString(e) ? ops_named(e->valuestring, named, 16) : 0;
                if (k == 0) return ls_fail(err, "%s: keep[%d]: unknown operator", where, i);
                for (int j = 0; j < k; j++) p->ops[named[j]->id].flags |= LS_POP_KEEP;
            }
        } else {
            return ls_fail(err, "%s: 'keep' must be a list of operator names or \"supported\"", where);
        }
    }
    if (skip) { /* Core ML's skip_ops_for_coreml_delegation, Vulkan's operator_blocklist, QNN's skip_node_op_set */
        if (!cJSON_IsArray(skip)) return ls_fail(err, "%s: 'skip_ops' must be a list of operator names", where);
        int i = 0;
        for (const cJSON *e = skip->child; e; e = e->next, i++) {
            const ls_op *named[16];
            int k = cJSON_IsString(e) ? ops_named(e->valuestring, named, 16) : 0;
            if (k == 0) return ls_fail(err, "%s: skip_ops[%d]: unknown operator", where, i);
            for (int j = 0; j < k; j++) p->ops[named[j]->id].dtypes = 0;
        }
    }
    return 0;
}

int ls_profile_parse(const char *where, const char *json, size_t len, ls_profile **out, ls_error *err)
{
    *out = NULL;
    const char *end = NULL;
    cJSON *root = cJSON_ParseWithLengthOpts(json, len, &end, false);
    if (!root) {
        size_t at = end && end >= json ? (size_t)(end - json) : 0;
        return ls_fail(err, "%s: not valid JSON (near byte %zu)", where, at);
    }
    ls_profile *p = ls_calloc(1, sizeof *p);
    int rc = parse_profile(where, root, p, 0, err);
    p->path = ls_intern(where);
    cJSON_Delete(root);
    if (rc != 0) {
        ls_profile_free(p);
        return -1;
    }
    *out = p;
    return 0;
}

/* A shipped profile's name: letters, digits and '_' only (a path has '/' or '.'). */
static bool is_profile_name(const char *s)
{
    for (; *s; s++)
        if (!((*s >= 'a' && *s <= 'z') || (*s >= 'A' && *s <= 'Z') || (*s >= '0' && *s <= '9') || *s == '_')) return false;
    return true;
}

int ls_profile_load(const char *name_or_path, ls_profile **out, ls_error *err)
{
    *out = NULL;
    if (strcmp(name_or_path, "bundled") == 0) {
        *out = (ls_profile *)ls_profile_bundled();
        return 0;
    }
    size_t len;
    const char *json = ls_profile_shipped_json(name_or_path, &len);
    if (json) {
        char where[96];
        snprintf(where, sizeof where, "<embedded>/%s.json", name_or_path);
        return ls_profile_parse(where, json, len, out, err);
    }
    if (is_profile_name(name_or_path)) {
        uint32_t n;
        const char *const *names = ls_profile_shipped(&n);
        char list[256] = "bundled";
        for (uint32_t i = 0; i < n; i++) {
            strncat(list, ", ", sizeof list - strlen(list) - 1);
            strncat(list, names[i], sizeof list - strlen(list) - 1);
        }
        return ls_fail(err, "no backend profile named '%s' (profiles: %s; or give a JSON file)", name_or_path, list);
    }
    uint8_t *data;
    size_t size;
    if (ls_read_file(name_or_path, 1u << 20, &data, &size, err) != 0) return -1;
    int rc = ls_profile_parse(name_or_path, (const char *)data, size, out, err);
    free(data);
    return rc;
}
