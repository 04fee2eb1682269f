/* Helpers shared by the XNNPACK suites: flatc's decode of a blob with ExecuTorch's schema
 * (tests/schema/xnnpack.fbs) and the check that lowerscope's reader read the same. */
#ifndef LS_XNN_TEST_H
#define LS_XNN_TEST_H

#include <check.h>
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "pte_test.h"
#include "testutil.h"
#include "xnnpack_blob.h"

/* flatc's JSON of a blob's flatbuffer (the blob written to a file, decoded with our schema copy). */
static inline cJSON *xt_flatc_decode(const ls_blob *blob, const ls_xnn_graph *g, const char *tag)
{
    if (!tu_have_tool("flatc")) return NULL;
    char bin[512], cmd[2048], json[600], dir[300];
    snprintf(dir, sizeof dir, "%s", tu_tmpdir());
    snprintf(bin, sizeof bin, "%s/%s.xn", dir, tag);
    FILE *f = fopen(bin, "wb");
    ck_assert_ptr_nonnull(f);
    fwrite(blob->data + g->flatbuffer_offset, 1, g->flatbuffer_size, f);
    fclose(f);
    snprintf(cmd, sizeof cmd, "flatc --json --strict-json --defaults-json --raw-binary -o %s %s -- %s 2>&1", dir,
             tu_root("tests/schema/xnnpack.fbs"), bin);
    ck_assert_int_eq(system(cmd), 0);
    snprintf(json, sizeof json, "%s/%s.json", dir, tag);
    size_t n;
    uint8_t *raw = pt_load(json, &n);
    ck_assert_ptr_nonnull(raw);
    char *s = ls_strndup((const char *)raw, n);
    free(raw);
    cJSON *j = pt_parse_flatc(s);
    free(s);
    ck_assert_ptr_nonnull(j);
    return j;
}

static inline double xt_jnum(const cJSON *o, const char *k)
{
    const cJSON *v = cJSON_GetObjectItem(o, k);
    ck_assert_msg(v != NULL, "no field %s", k);
    return v->valuedouble;
}

/* Every node's type, ids and debug handle, every value's datatype, dims, ids, flags and
 * quantization, and the constants' keys (each in `named`): as flatc reads them from the blob.
 * Skips (returns) when flatc is absent. */
static inline void xt_agrees_with_flatc(const ls_blob *blob, const ls_xnn_graph *g, const ls_named_data *named,
                                        const char *tag)
{
    cJSON *j = xt_flatc_decode(blob, g, tag);
    if (!j) return;
    const cJSON *nodes = cJSON_GetObjectItem(j, "xnodes"), *values = cJSON_GetObjectItem(j, "xvalues");
    ck_assert_int_eq(cJSON_GetArraySize(nodes), g->n_nodes);
    ck_assert_int_eq(cJSON_GetArraySize(values), g->n_values);
    ck_assert_uint_eq((uint32_t)xt_jnum(j, "num_externs"), g->num_externs);
    for (uint32_t i = 0; i < g->n_nodes; i++) {
        const cJSON *jn = cJSON_GetArrayItem(nodes, (int)i), *u = cJSON_GetObjectItem(jn, "xnode_union");
        ck_assert_str_eq(cJSON_GetObjectItem(jn, "xnode_union_type")->valuestring,
                         ls_xnn_node_type_name(g->nodes[i].type));
        ck_assert_uint_eq((uint32_t)xt_jnum(jn, "debug_handle"), g->nodes[i].debug_handle);
        const char *outk = cJSON_GetObjectItem(u, "output_id") ? "output_id" : "output_value_id";
        ck_assert_uint_eq((uint32_t)xt_jnum(u, outk), g->nodes[i].out[0]);
        const char *ink = cJSON_GetObjectItem(u, "input_id") ? "input_id" : "input1_id";
        ck_assert_uint_eq((uint32_t)xt_jnum(u, ink), g->nodes[i].in[0]);
        if (cJSON_GetObjectItem(u, "filter_id")) ck_assert_uint_eq((uint32_t)xt_jnum(u, "filter_id"), g->nodes[i].in[1]);
        if (cJSON_GetObjectItem(u, "bias_id")) ck_assert_uint_eq((uint32_t)xt_jnum(u, "bias_id"), g->nodes[i].in[2]);
        if (cJSON_GetObjectItem(u, "kernel_height")) {
            ck_assert_uint_eq((uint32_t)xt_jnum(u, "kernel_height"), g->nodes[i].p.conv.kernel_h);
            ck_assert_uint_eq((uint32_t)xt_jnum(u, "padding_left"), g->nodes[i].p.conv.pad_left);
            ck_assert_uint_eq((uint32_t)xt_jnum(u, "group_output_channels"), g->nodes[i].p.conv.group_out);
        }
        if (cJSON_GetObjectItem(u, "perm")) {
            const cJSON *perm = cJSON_GetObjectItem(u, "perm");
            ck_assert_int_eq(cJSON_GetArraySize(perm), g->nodes[i].p.dims.n);
            for (uint32_t k = 0; k < g->nodes[i].p.dims.n; k++)
                ck_assert_uint_eq((uint32_t)cJSON_GetArrayItem(perm, (int)k)->valuedouble, g->nodes[i].p.dims.v[k]);
        }
        const cJSON *mm = cJSON_GetObjectItem(jn, "output_min_max");
        ck_assert(!!mm == g->nodes[i].has_min_max);
        if (mm) ck_assert(xt_jnum(mm, "output_min") == g->nodes[i].out_min);
    }
    for (uint32_t i = 0; i < g->n_values; i++) {
        const cJSON *jv = cJSON_GetArrayItem(values, (int)i), *u = cJSON_GetObjectItem(jv, "xvalue_union");
        const cJSON *t = cJSON_GetObjectItem(u, "tensor_value") ? cJSON_GetObjectItem(u, "tensor_value") : u;
        const ls_xnn_value *v = &g->values[i];
        char dt[40];
        snprintf(dt, sizeof dt, "xnn_datatype_%s", ls_xnn_datatype_name(v->datatype));
        ck_assert_str_eq(cJSON_GetObjectItem(t, "datatype")->valuestring, dt);
        const cJSON *dims = cJSON_GetObjectItem(t, "dims");
        ck_assert_int_eq(cJSON_GetArraySize(dims), v->ndim);
        for (unsigned d = 0; d < v->ndim; d++)
            ck_assert_uint_eq((uint32_t)cJSON_GetArrayItem(dims, (int)d)->valuedouble, v->dims[d]);
        ck_assert_uint_eq((uint32_t)xt_jnum(t, "id_out"), v->id);
        ck_assert_uint_eq((uint32_t)xt_jnum(t, "external_id"), v->external_id);
        ck_assert_uint_eq((uint32_t)xt_jnum(t, "flags"), v->flags);
        ck_assert_uint_eq((uint32_t)xt_jnum(t, "constant_buffer_idx"), v->constant_idx);
        const cJSON *q = cJSON_GetObjectItem(u, "quant_params");
        if (q && cJSON_GetObjectItem(q, "zero_point")) {
            ck_assert_int_eq((int)xt_jnum(q, "zero_point"), v->zero_point);
            ck_assert(fabs(xt_jnum(q, "scale") - v->scale) <= 5.01e-7); /* flatc prints six decimals */
        }
    }
    const cJSON *cd = cJSON_GetObjectItem(j, "constant_data");
    ck_assert_int_eq(cJSON_GetArraySize(cd), g->n_constants);
    for (uint32_t i = 0; i < g->n_constants; i++) {
        const cJSON *k = cJSON_GetObjectItem(cJSON_GetArrayItem(cd, (int)i), "named_key");
        const char *key = k ? k->valuestring : "";
        ck_assert_str_eq(key, g->constants[i].named_key ? g->constants[i].named_key : "");
        if (g->constants[i].named_key) ck_assert_ptr_nonnull(ls_named_data_get(named, key));
    }
    cJSON_Delete(j);
}

#endif
