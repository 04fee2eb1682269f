/* Bundled programs (bpte.h): reading and writing the BP08 flatbuffer, a bundled tensor as a
 * tensor, and the runtime's comparison rule. Slots (bundled_program_schema.fbs):
 *   BundledProgram 0 version, 1 method_test_suites, 2 program (force_align 32)
 *   BundledMethodTestSuite 0 method_name, 1 test_cases
 *   BundledMethodTestCase  0 inputs, 1 expected_outputs
 *   Value 0 val_type, 1 val (ValueUnion: 1 Tensor, 2 Int, 3 Bool, 4 Double)
 *   Tensor 0 scalar_type, 1 sizes [int], 2 data [ubyte] (force_align 16), 3 dim_order [ubyte]
 *   Int 0 int_val; Bool 0 bool_val; Double 0 double_val */
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "bpte.h"
#include "flatbuf.h"
#include "pte.h"

const char *ls_bp_kind_name(int kind)
{
    static const char *const names[] = {"NONE", "Tensor", "Int", "Bool", "Double"};
    return kind >= 0 && kind <= 4 ? names[kind] : "?";
}

bool ls_bpte_is_file(const char *path)
{
    uint8_t head[8];
    return ls_read_head(path, head, sizeof head) == sizeof head && memcmp(head + 4, "BP08", 4) == 0;
}

/* ---- reading */

static int copy_vec(ls_fb_reader *r, const ls_fb_table *t, unsigned slot, const char *field, uint32_t esize, void **v,
                    uint32_t *n, bool *present)
{
    ls_fb_vec vec;
    int rc = ls_fb_vector_field(r, t, slot, field, esize, &vec);
    if (rc != 1) return rc;
    *v = ls_malloc((size_t)vec.n * esize + 1);
    *n = vec.n;
    if (present) *present = true;
    return ls_fb_vec_copy(r, &vec, field, *v) == 0 ? 1 : -1;
}

static int read_value(ls_fb_reader *r, const ls_fb_table *t, ls_bp_value *v)
{
    ls_fb_table val;
    int rc = ls_fb_union(r, t, 0, "val", &v->kind, &val);
    if (rc < 0) return -1;
    v->has_val = rc == 1;
    if (!v->has_val) return 0;
    if (ls_fb_push(r, "val") != 0) return -1;
    switch (v->kind) {
    case LS_BP_TENSOR:
        if (ls_fb_i8(r, &val, 0, "scalar_type", 0, &v->scalar_type) < 0 ||
            copy_vec(r, &val, 1, "sizes", 4, (void **)&v->sizes, &v->ndim, NULL) < 0 ||
            copy_vec(r, &val, 2, "data", 1, (void **)&v->data, &v->nbytes, &v->has_data) < 0 ||
            copy_vec(r, &val, 3, "dim_order", 1, (void **)&v->dim_order, &v->n_dim_order, NULL) < 0)
            return -1;
        break;
    case LS_BP_INT: rc = ls_fb_i64(r, &val, 0, "int_val", 0, &v->int_val); break;
    case LS_BP_BOOL: rc = ls_fb_bool(r, &val, 0, "bool_val", false, &v->bool_val); break;
    case LS_BP_DOUBLE: rc = ls_fb_f64(r, &val, 0, "double_val", 0, &v->double_val); break;
    default: break; /* a tag this schema does not know: kept, refused when used */
    }
    if (rc < 0) return -1;
    ls_fb_pop(r);
    return 0;
}

static int read_values(ls_fb_reader *r, const ls_fb_table *t, unsigned slot, const char *field, ls_bp_value **out,
                       uint32_t *n)
{
    ls_fb_vec vec;
    int rc = ls_fb_vector_field(r, t, slot, field, 4, &vec);
    if (rc != 1) return rc;
    if (ls_fb_charge(r, field, (uint64_t)vec.n * sizeof(ls_bp_value)) != 0) return -1;
    *out = ls_calloc(vec.n ? vec.n : 1, sizeof **out);
    for (uint32_t i = 0; i < vec.n; i++) {
        ls_fb_table vt;
        if (ls_fb_push(r, ".%s[%u]", field, i) != 0) return -1;
        *n = i + 1;
        if (ls_fb_vec_table(r, &vec, i, NULL, &vt) != 0 || read_value(r, &vt, &(*out)[i]) != 0) return -1;
        ls_fb_pop(r);
    }
    return 1;
}

static int read_suite(ls_fb_reader *r, const ls_fb_table *t, ls_bp_suite *s)
{
    const char *name;
    uint32_t len;
    int rc = ls_fb_string_field(r, t, 0, "method_name", &name, &len);
    if (rc < 0) return -1;
    if (rc == 1) s->method_name = ls_intern_n(name, len);
    ls_fb_vec vec;
    if ((rc = ls_fb_vector_field(r, t, 1, "test_cases", 4, &vec)) < 0) return -1;
    if (rc == 0) return 0;
    if (ls_fb_charge(r, "test_cases", (uint64_t)vec.n * sizeof(ls_bp_case)) != 0) return -1;
    s->cases = ls_calloc(vec.n ? vec.n : 1, sizeof *s->cases);
    for (uint32_t i = 0; i < vec.n; i++) {
        ls_fb_table ct;
        if (ls_fb_push(r, ".test_cases[%u]", i) != 0) return -1;
        s->n_cases = i + 1;
        ls_bp_case *c = &s->cases[i];
        if (ls_fb_vec_table(r, &vec, i, NULL, &ct) != 0 || read_values(r, &ct, 0, "inputs", &c->inputs, &c->n_inputs) < 0 ||
            read_values(r, &ct, 1, "expected_outputs", &c->expected, &c->n_expected) < 0)
            return -1;
        ls_fb_pop(r);
    }
    return 0;
}

static void free_values(ls_bp_value *v, uint32_t n)
{
    for (uint32_t i = 0; i < n; i++) {
        free(v[i].sizes);
        free(v[i].data);
        free(v[i].dim_order);
    }
    free(v);
}

void ls_bpte_free(ls_bpte *b)
{
    for (uint32_t s = 0; s < b->n_suites; s++) {
        for (uint32_t c = 0; c < b->suites[s].n_cases; c++) {
            free_values(b->suites[s].cases[c].inputs, b->suites[s].cases[c].n_inputs);
            free_values(b->suites[s].cases[c].expected, b->suites[s].cases[c].n_expected);
        }
        free(b->suites[s].cases);
    }
    free(b->suites);
    free(b->program);
    memset(b, 0, sizeof *b);
}

int ls_bpte_read(const uint8_t *data, size_t size, const char *name, ls_bpte *out, ls_error *err)
{
    memset(out, 0, sizeof *out);
    out->name = ls_intern(name ? name : "program.bpte");
    ls_fb_reader r;
    ls_fb_table root;
    if (ls_fb_reader_init(&r, data, size, out->name, err) != 0 || ls_fb_root(&r, "BP08", &root) != 0) return -1;
    if (ls_fb_u32(&r, &root, 0, "version", 0, &out->version) < 0) goto fail;
    ls_fb_vec vec;
    int rc = ls_fb_vector_field(&r, &root, 1, "method_test_suites", 4, &vec);
    if (rc < 0) goto fail;
    if (rc == 1) {
        if (ls_fb_charge(&r, "method_test_suites", (uint64_t)vec.n * sizeof(ls_bp_suite)) != 0) goto fail;
        out->suites = ls_calloc(vec.n ? vec.n : 1, sizeof *out->suites);
        for (uint32_t i = 0; i < vec.n; i++) {
            ls_fb_table st;
            if (ls_fb_push(&r, "method_test_suites[%u]", i) != 0) goto fail;
            out->n_suites = i + 1;
            if (ls_fb_vec_table(&r, &vec, i, NULL, &st) != 0 || read_suite(&r, &st, &out->suites[i]) != 0) goto fail;
            ls_fb_pop(&r);
        }
    }
    uint32_t n = 0;
    if ((rc = copy_vec(&r, &root, 2, "program", 1, (void **)&out->program, &n, NULL)) < 0) goto fail;
    out->program_size = n;
    if (rc == 0) {
        ls_fail(err, "%s: program: absent (a bundled program holds its .pte there)", out->name);
        goto fail;
    }
    return 0;
fail:
    ls_bpte_free(out);
    return -1;
}

int ls_bpte_read_file(const char *path, ls_bpte *out, ls_error *err)
{
    uint8_t *data;
    size_t size;
    memset(out, 0, sizeof *out);
    if (ls_read_file(path, (size_t)1 << 31, &data, &size, err) != 0) return -1;
    int rc = ls_bpte_read(data, size, path, out, err);
    free(data);
    return rc;
}

/* ---- writing */

static ls_fb_ref write_value(ls_fbb *b, const ls_bp_value *v)
{
    ls_fb_ref val = 0;
    if (v->kind == LS_BP_TENSOR) {
        ls_fb_ref sizes = ls_fbb_vector(b, v->sizes, v->ndim, 4, 4);
        ls_fb_ref data = v->has_data || v->nbytes ? ls_fbb_vector(b, v->data, v->nbytes, 1, 16) : 0;
        ls_fb_ref dims = ls_fbb_vector(b, v->dim_order, v->n_dim_order, 1, 1);
        ls_fbb_table_start(b);
        ls_fbb_add_i8(b, 0, v->scalar_type, 0);
        ls_fbb_add_ref(b, 1, sizes);
        ls_fbb_add_ref(b, 2, data);
        ls_fbb_add_ref(b, 3, dims);
        val = ls_fbb_table_end(b);
    } else if (v->kind >= LS_BP_INT && v->kind <= LS_BP_DOUBLE) {
        ls_fbb_table_start(b);
        if (v->kind == LS_BP_INT) ls_fbb_add_i64(b, 0, v->int_val, 0);
        if (v->kind == LS_BP_BOOL) ls_fbb_add_bool(b, 0, v->bool_val, false);
        if (v->kind == LS_BP_DOUBLE) ls_fbb_add_f64(b, 0, v->double_val, 0);
        val = ls_fbb_table_end(b);
    }
    ls_fbb_table_start(b);
    ls_fbb_add_u8(b, 0, v->kind, 0);
    ls_fbb_add_ref(b, 1, val);
    return ls_fbb_table_end(b);
}

static ls_fb_ref write_values(ls_fbb *b, const ls_bp_value *v, uint32_t n)
{
    ls_fb_ref *refs = ls_calloc(n ? n : 1, sizeof *refs);
    for (uint32_t i = 0; i < n; i++) refs[i] = write_value(b, &v[i]);
    ls_fb_ref vec = ls_fbb_vector_refs(b, refs, n);
    free(refs);
    return vec;
}

int ls_bpte_write(const ls_bpte *bp, uint8_t **bytes, size_t *size, ls_error *err)
{
    ls_fbb b;
    ls_fbb_init(&b);
    /* the program first: the largest object, at the end of the file as ExecuTorch's writer has it */
    ls_fb_ref program = ls_fbb_vector(&b, bp->program, bp->program_size, 1, 32);
    ls_fb_ref *suites = ls_calloc(bp->n_suites ? bp->n_suites : 1, sizeof *suites);
    for (uint32_t s = 0; s < bp->n_suites; s++) {
        const ls_bp_suite *su = &bp->suites[s];
        ls_fb_ref *cases = ls_calloc(su->n_cases ? su->n_cases : 1, sizeof *cases);
        for (uint32_t c = 0; c < su->n_cases; c++) {
            ls_fb_ref in = write_values(&b, su->cases[c].inputs, su->cases[c].n_inputs);
            ls_fb_ref ex = write_values(&b, su->cases[c].expected, su->cases[c].n_expected);
            ls_fbb_table_start(&b);
            ls_fbb_add_ref(&b, 0, in);
            ls_fbb_add_ref(&b, 1, ex);
            cases[c] = ls_fbb_table_end(&b);
        }
        ls_fb_ref cv = ls_fbb_vector_refs(&b, cases, su->n_cases);
        free(cases);
        ls_fb_ref name = su->method_name ? ls_fbb_string(&b, su->method_name, strlen(su->method_name)) : 0;
        ls_fbb_table_start(&b);
        ls_fbb_add_ref(&b, 0, name);
        ls_fbb_add_ref(&b, 1, cv);
        suites[s] = ls_fbb_table_end(&b);
    }
    ls_fb_ref sv = ls_fbb_vector_refs(&b, suites, bp->n_suites);
    free(suites);
    ls_fbb_table_start(&b);
    ls_fbb_add_u32(&b, 0, bp->version, 0);
    ls_fbb_add_ref(&b, 1, sv);
    ls_fbb_add_ref(&b, 2, program);
    ls_fb_ref root = ls_fbb_table_end(&b);
    *bytes = ls_fbb_finish(&b, root, "BP08", size);
    if (!*bytes) return ls_fail(err, "%s: the bundled program passed the 2 GiB a flatbuffer can hold", bp->name ? bp->name : "bpte");
    return 0;
}

/* ---- values */

int ls_bp_value_tensor(const ls_bp_value *v, const char *where, ls_tensor **out, ls_error *err)
{
    *out = NULL;
    if (v->kind != LS_BP_TENSOR || !v->has_val)
        return ls_fail(err, "%s: a %s, not a tensor", where, v->has_val ? ls_bp_kind_name(v->kind) : "value without its table");
    ls_dtype dt = ls_dtype_from_et(v->scalar_type);
    const char *et = ls_et_scalar_type_name(v->scalar_type);
    if (dt == LS_DT_UNKNOWN)
        return ls_fail(err, "%s: scalar type %s is not one lowerscope computes with", where, et ? et : "unknown");
    if (v->ndim > LS_MAX_DIMS) return ls_fail(err, "%s: %u dimensions (at most %d)", where, v->ndim, LS_MAX_DIMS);
    int64_t sizes[LS_MAX_DIMS];
    for (uint32_t d = 0; d < v->ndim; d++) {
        if (v->sizes[d] < 0) return ls_fail(err, "%s: size %d of dimension %u", where, v->sizes[d], d);
        sizes[d] = v->sizes[d];
    }
    ls_tmeta m;
    ls_tmeta_init(&m, dt, (int)v->ndim, sizes);
    uint64_t nbytes;
    if (ls_tmeta_check_size(&m, (uint64_t)1 << 32, &nbytes, err) != 0) return ls_fail_prefix(err, "%s", where);
    if (!v->has_data) return ls_fail(err, "%s: the tensor has no data field", where);
    if (v->nbytes < nbytes)
        return ls_fail(err, "%s: %u bytes of data, a %s tensor of this shape needs %llu", where, v->nbytes, ls_dtype_name(dt),
                       (unsigned long long)nbytes);
    bool contiguous = true;
    if (v->n_dim_order && v->n_dim_order != v->ndim)
        return ls_fail(err, "%s: dim_order has %u entries for %u dimensions", where, v->n_dim_order, v->ndim);
    bool seen[LS_MAX_DIMS] = {false};
    for (uint32_t d = 0; d < v->n_dim_order; d++) {
        if (v->dim_order[d] >= v->ndim || seen[v->dim_order[d]])
            return ls_fail(err, "%s: dim_order is not a permutation of 0..%u", where, v->ndim ? v->ndim - 1 : 0);
        seen[v->dim_order[d]] = true;
        contiguous &= v->dim_order[d] == d;
    }
    if (contiguous) {
        ls_tensor *t = ls_tensor_new(dt, (int)v->ndim, sizes, err);
        if (!t) return ls_fail_prefix(err, "%s", where);
        if (nbytes) memcpy(t->data, v->data, nbytes);
        *out = t;
        return 0;
    }
    /* strides from the dim order (dim_order_to_stride): the innermost dimension is the last listed */
    int64_t strides[LS_MAX_DIMS], acc = 1;
    for (uint32_t k = v->ndim; k-- > 0;) {
        strides[v->dim_order[k]] = acc;
        acc *= sizes[v->dim_order[k]];
    }
    *out = ls_tensor_from_strided(v->data, dt, (int)v->ndim, sizes, strides);
    return 0;
}

/* elem_is_close of bundled_program.cpp: e the bundled (expected) element, a the method's. It is a
 * template on the element type: for float32 `std::abs(ai - bi)` is a float subtraction, rounded to
 * float before it is held against the double `atol + |rtol * bi|` (half goes through double). */
static bool elem_close(double e, double a, bool as_float, double rtol, double atol)
{
    if (isnan(e) && isnan(a)) return true;
    if (!isfinite(e) && !isfinite(a) && ((e > 0) == (a > 0))) return true;
    if (rtol == 0 && atol == 0) return e == a;
    double allowed = atol + fabs(rtol * a);
    double actual = as_float ? (double)fabsf((float)e - (float)a) : fabs(e - a);
    return isfinite(actual) && actual <= allowed;
}

bool ls_bp_tensors_close(const ls_tensor *expected, const ls_tensor *actual, double rtol, double atol, char *why,
                         size_t cap, int64_t *worst)
{
    char es[96], as[96];
    ls_tmeta em, am;
    if (worst) *worst = -1;
    ls_tensor_meta(expected, &em);
    ls_tensor_meta(actual, &am);
    bool same_shape = expected->ndim == actual->ndim;
    for (int d = 0; same_shape && d < expected->ndim; d++) same_shape = expected->sizes[d] == actual->sizes[d];
    if (expected->dtype != actual->dtype || !same_shape) {
        if (why)
            snprintf(why, cap, "expected %s, the method gave %s", ls_tmeta_str(&em, es, sizeof es),
                     ls_tmeta_str(&am, as, sizeof as));
        return false;
    }
    if (expected->nbytes == 0) return true;
    ls_dtype dt = expected->dtype;
    if (dt == LS_DT_F32 || dt == LS_DT_F64 || dt == LS_DT_F16) {
        for (int64_t i = 0; i < expected->numel; i++) {
            double e = ls_tensor_get_f64(expected, i), a = ls_tensor_get_f64(actual, i);
            if (elem_close(e, a, dt == LS_DT_F32, rtol, atol)) continue;
            if (worst) *worst = i;
            if (why) snprintf(why, cap, "element %lld: expected %.9g, the method gave %.9g", (long long)i, e, a);
            return false;
        }
        return true;
    }
    /* bfloat16 too: the runtime compares every other type byte for byte */
    const uint8_t *x = expected->data, *y = actual->data;
    for (size_t i = 0; i < expected->nbytes; i++) {
        if (x[i] == y[i]) continue;
        int64_t el = (int64_t)(i / ls_dtype_size(dt));
        if (worst) *worst = el;
        if (why)
            snprintf(why, cap, "element %lld: expected %.9g, the method gave %.9g (compared byte for byte)", (long long)el,
                     ls_tensor_get_f64(expected, el), ls_tensor_get_f64(actual, el));
        return false;
    }
    return true;
}
