/* Backend profiles: the built-in one of the bundled delegate and JSON files (docs/backends.md). */
#include "profile.h"

#include "runtime.h"

#include <cjson/cJSON.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#define FLOATS (LS_DTYPE_BIT(LS_DT_F16) | LS_DTYPE_BIT(LS_DT_BF16) | LS_DTYPE_BIT(LS_DT_F32))
#define INTS (LS_DTYPE_BIT(LS_DT_I32) | LS_DTYPE_BIT(LS_DT_I64))
#define BOOLS LS_DTYPE_BIT(LS_DT_BOOL)
#define ANY_DTYPE (((1u << LS_DT_COUNT) - 1u) & ~LS_DTYPE_BIT(LS_DT_UNKNOWN))

/* Ops no profile can take: builtins and in-place ops (a functional program has none). */
static bool never_delegated(const ls_op *op)
{
    return (op->flags & (LS_OPF_SPECIAL | LS_OPF_INPLACE)) != 0;
}

/* The bundled delegate: everything the runtime runs except trigonometry (sin, cos, atan2
 * stay on the CPU and split partitions, which the samples rely on), in float16, bfloat16,
 * float32, and int32/int64/bool where the op means something for them. float64 stays on the
 * CPU: mobile backends do not compute in double. */
static uint32_t bundled_dtypes(const ls_op *op)
{
    if (never_delegated(op) || !ls_kernel_for(op)) return 0; /* it runs the runtime's kernels */
    switch (op->id) {
    case LS_OP_sin:
    case LS_OP_cos:
    case LS_OP_atan2: return 0;
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
        for (int i = 0; i < LS_OP_COUNT; i++) bundled.op_dtypes[i] = bundled_dtypes(ls_op_get((ls_op_id)i));
        bundled.backend_id = ls_intern("BundledBackend");
        bundled.tag_prefix = ls_intern("tag");
        bundled.stateful = true;
        bundled.fold_masks = true;
        bundled.take_constants = true;
        bundled.name = ls_intern("bundled");
    }
    return &bundled;
}

void ls_profile_free(ls_profile *p)
{
    if (p && p != &bundled) free(p);
}

char *ls_dtype_mask_str(uint32_t mask, char *buf, size_t cap)
{
    size_t len = 0;
    buf[0] = 0;
    for (int d = 1; d < LS_DT_COUNT && len < cap; d++)
        if (mask & LS_DTYPE_BIT(d)) len += (size_t)snprintf(buf + len, cap - len, "%s%s", len ? ", " : "", ls_dtype_name((ls_dtype)d));
    return buf;
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

/* Sets mask for every op the spelling names: one overload ("aten.add.Tensor", a full target,
 * "add.Tensor") or every overload of a name ("add"). Returns how many ops it named. */
static int apply_op(ls_profile *p, const char *spelling, uint32_t mask)
{
    ls_dialect d;
    const ls_op *op = NULL;
    if (strchr(spelling, '.') || strstr(spelling, "::")) {
        op = ls_op_from_target(spelling, &d);
        if (!op) {
            char buf[256];
            snprintf(buf, sizeof buf, "aten.%s", spelling);
            op = ls_op_from_target(buf, &d);
        }
        if (!op || never_delegated(op)) return 0;
        p->op_dtypes[op->id] = mask;
        return 1;
    }
    int count = 0;
    const char *name = ls_intern(spelling);
    for (int i = 0; i < LS_OP_COUNT; i++) {
        const ls_op *o = ls_op_get((ls_op_id)i);
        if (o->name == name && !never_delegated(o)) {
            p->op_dtypes[i] = mask;
            count++;
        }
    }
    return count;
}

static const char *get_str(const cJSON *root, const char *key)
{
    const cJSON *v = cJSON_GetObjectItemCaseSensitive(root, key);
    return cJSON_IsString(v) ? v->valuestring : NULL;
}

static int get_bool(const char *where, const cJSON *root, const char *key, bool def, bool *out, ls_error *err)
{
    const cJSON *v = cJSON_GetObjectItemCaseSensitive(root, key);
    if (!v) {
        *out = def;
        return 0;
    }
    if (!cJSON_IsBool(v)) return ls_fail(err, "%s: '%s' must be true or false", where, key);
    *out = cJSON_IsTrue(v);
    return 0;
}

static int parse_profile(const char *where, const cJSON *root, ls_profile *p, ls_error *err)
{
    static const char *const known[] = {"name",          "backend_id", "tag_prefix", "stateful", "fold_masks",
                                        "take_constants", "single_partition", "dtypes", "ops", "all_except",
                                        "comment"};
    if (!cJSON_IsObject(root)) return ls_fail(err, "%s: a profile is a JSON object", where);
    for (const cJSON *e = root->child; e; e = e->next) {
        bool ok = false;
        for (size_t i = 0; i < sizeof known / sizeof known[0]; i++) ok |= strcmp(e->string, known[i]) == 0;
        if (!ok) return ls_fail(err, "%s: unknown field '%s' (docs/backends.md lists them)", where, e->string);
    }
    const char *name = get_str(root, "name"), *bid = get_str(root, "backend_id"), *prefix = get_str(root, "tag_prefix");
    if (!name || !*name) return ls_fail(err, "%s: 'name' is missing or not a string", where);
    if (!bid || !*bid) return ls_fail(err, "%s: 'backend_id' is missing or not a string", where);
    if (cJSON_GetObjectItemCaseSensitive(root, "tag_prefix") && (!prefix || !*prefix))
        return ls_fail(err, "%s: 'tag_prefix' must be a non-empty string", where);
    p->name = ls_intern(name);
    p->backend_id = ls_intern(bid);
    p->tag_prefix = ls_intern(prefix ? prefix : "tag");
    if (get_bool(where, root, "stateful", false, &p->stateful, err) || get_bool(where, root, "fold_masks", false, &p->fold_masks, err) ||
        get_bool(where, root, "take_constants", true, &p->take_constants, err) ||
        get_bool(where, root, "single_partition", false, &p->single_partition, err))
        return -1;
    uint32_t def = ANY_DTYPE;
    const cJSON *dt = cJSON_GetObjectItemCaseSensitive(root, "dtypes");
    if (dt && parse_dtypes(where, "dtypes", dt, &def, err) != 0) return -1;
    const cJSON *ops = cJSON_GetObjectItemCaseSensitive(root, "ops");
    const cJSON *except = cJSON_GetObjectItemCaseSensitive(root, "all_except");
    if (!ops && !except) return ls_fail(err, "%s: give 'ops' (what the backend takes) or 'all_except' (what it does not)", where);
    if (except) {
        if (!cJSON_IsArray(except)) return ls_fail(err, "%s: 'all_except' must be a list of operator names", where);
        for (int i = 0; i < LS_OP_COUNT; i++)
            if (!never_delegated(ls_op_get((ls_op_id)i))) p->op_dtypes[i] = def;
        int i = 0;
        for (const cJSON *e = except->child; e; e = e->next, i++) {
            if (!cJSON_IsString(e)) return ls_fail(err, "%s: all_except[%d]: expected an operator name", where, i);
            if (apply_op(p, e->valuestring, 0) == 0)
                return ls_fail(err, "%s: all_except[%d]: unknown operator '%s'", where, i, e->valuestring);
        }
    }
    if (ops) {
        if (!cJSON_IsArray(ops)) return ls_fail(err, "%s: 'ops' must be a list", where);
        int i = 0;
        for (const cJSON *e = ops->child; e; e = e->next, i++) {
            const char *spelling = NULL;
            uint32_t mask = def;
            if (cJSON_IsString(e)) {
                spelling = e->valuestring;
            } else if (cJSON_IsObject(e)) {
                spelling = get_str(e, "op");
                const cJSON *d = cJSON_GetObjectItemCaseSensitive(e, "dtypes");
                char field[32];
                snprintf(field, sizeof field, "ops[%d].dtypes", i);
                if (d && parse_dtypes(where, field, d, &mask, err) != 0) return -1;
                if (d && !mask) return ls_fail(err, "%s: %s: empty (leave the op out instead)", where, field);
            }
            if (!spelling) return ls_fail(err, "%s: ops[%d]: expected \"name\" or {\"op\": \"name\", \"dtypes\": [...]}", where, i);
            if (apply_op(p, spelling, mask) == 0)
                return ls_fail(err, "%s: ops[%d]: unknown operator '%s'", where, i, spelling);
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
    p->path = ls_intern(where);
    int rc = parse_profile(where, root, p, err);
    cJSON_Delete(root);
    if (rc != 0) {
        free(p);
        return -1;
    }
    *out = p;
    return 0;
}

int ls_profile_load(const char *name_or_path, ls_profile **out, ls_error *err)
{
    *out = NULL;
    if (strcmp(name_or_path, "bundled") == 0) {
        *out = (ls_profile *)ls_profile_bundled();
        return 0;
    }
    uint8_t *data;
    size_t size;
    if (ls_read_file(name_or_path, 1u << 20, &data, &size, err) != 0) return -1;
    int rc = ls_profile_parse(name_or_path, (const char *)data, size, out, err);
    free(data);
    return rc;
}
