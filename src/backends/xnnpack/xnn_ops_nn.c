/* XNNPACK's GEMM-like nodes: fully connected, batch matrix multiply, scaled dot-product
 * attention, and the NHWC convolutions (Conv2d, DepthwiseConv2d, ConvTranspose2d), on the
 * runtime's GEMMs (gemm.h) with the weights packed at init (xnn_weights.c).
 *
 * Quantized semantics are XNNPACK's:
 *  - static qs8 (qint8 input, qint8/qcint8 filter, qint32/qcint32 bias, qint8 output):
 *    acc = bias + Σ (x - x_zp)·w in int32, y = round(acc · x_scale·w_scale[c] / y_scale) + y_zp,
 *    clamped to output_min/max in the output's steps and to int8;
 *  - dynamic qd8 (Convert to qdint8 with per-row scale and zero point, qcint8/qcint4 filter or
 *    qbint4 with a scale per block of inputs, float bias and output):
 *    y = Σ_blocks (Σ (x - zp_row)·w) · scale_row · w_scale + bias.
 * The dq_datatype marker of runtime_schema.fbs (an fp32 external input quantized at run time,
 * XNNCompiler's defineTensor "HACK") is the dynamic path with one non-batch dimension. */
#include <math.h>
#include <stdlib.h>
#include <string.h>

#include "gemm.h"
#include "xnn_internal.h"

#define XNN_FLAG_TRANSPOSE_B 0x1u

static void add_bias(float *o, int64_t M, int64_t N, int64_t ldo, const float *bias)
{
    if (!bias) return;
    for (int64_t m = 0; m < M; m++)
        for (int64_t n = 0; n < N; n++) o[m * ldo + n] += bias[n];
}

/* acc[M][ldc] (int32, for columns c0..c0+N) → int8 output rows of stride ldo, requantized. */
static void requantize(const ls_xnn_node *n, const int32_t *acc, int64_t M, int64_t N, int64_t ldc, int32_t x_zp,
                       float x_scale, const lsx_prep *p, int64_t c0, const ls_xnn_value *od, int8_t *out, int64_t ldo)
{
    int32_t lo, hi;
    lsx_q_bounds(n, od->scale, od->zero_point, &lo, &hi);
    for (int64_t m = 0; m < M; m++)
        for (int64_t j = 0; j < N; j++) {
            int64_t c = c0 + j;
            /* int32 arithmetic that wraps, as XNNPACK's does (a crafted bias or zero point
             * overflowed it: UB in C). Checked in google/XNNPACK: xnn_pack_qs8_gemm_goi_w
             * (src/reference/packing.cc) packs bias - ksum·izp in uint32; the microkernels
             * (xnn_qs8_gemm_minmax_fp32_ukernel_1x2__scalar_lrintf / __scalar_fmagic,
             * src/qs8-gemm/gen/1x2-minmax-fp32-scalar-*.c) add Σ x·w with plain int32 adds, then
             * (float)acc · scale (input·kernel[c]/output, fully-connected-nc.c), clamp to
             * output_min/max - zp in float, round half even (lrintf or magic bias), add zp.
             * Sums mod 2^32 in another order, so the same result. */
            int32_t a = (int32_t)((uint32_t)acc[m * ldc + j] - (uint32_t)x_zp * (uint32_t)p->wsum[c] +
                                  (uint32_t)(p->bias32 ? p->bias32[c] : 0));
            float y = lsx_round_q((float)a * (x_scale * p->wscale[c] / od->scale)) + (float)od->zero_point;
            out[m * ldo + c] = (int8_t)(y < lo ? lo : y > hi ? hi : y);
        }
}

int lsx_fully_connected(lsx_run *R, uint32_t node)
{
    const ls_xnn_node *n = &R->g->nodes[node];
    const lsx_prep *p = &R->prep[node];
    ls_tensor *in = lsx_in(R, node, 0);
    if (!in) return -1;
    int64_t K = p->K, N = p->N;
    if (!in->ndim || in->sizes[in->ndim - 1] != K)
        return lsx_fail(R, node, "the input's last dim is %lld, the filter takes %lld", in->ndim ? (long long)in->sizes[in->ndim - 1] : 0LL,
                        (long long)K);
    int64_t M = K ? in->numel / K : 0, dims[LS_XNN_MAX_DIMS];
    memcpy(dims, in->sizes, sizeof(int64_t) * in->ndim);
    dims[in->ndim - 1] = N;
    const ls_xnn_value *id = lsx_def(R, n->in[0]), *od = lsx_def(R, n->out[0]);
    if (p->w) { /* float input */
        void *tmp;
        const float *x = lsx_in_f32(R, node, 0, &tmp);
        if (!x) return -1;
        ls_tensor *out = lsx_out(R, node, 0, in->ndim, dims);
        float *o = lsx_out_f32(R, node, out);
        if (!o) {
            ls_free_aligned(tmp);
            return -1;
        }
        ls_sgemm_ex(M, N, K, 1.0f, x, K, 1, p->w, N, 1, 0.0f, o, N);
        add_bias(o, M, N, N, p->bias);
        lsx_clamp(n, o, M * N);
        lsx_out_done(R, node, out, o);
        ls_free_aligned(tmp);
        return 0;
    }
    int32_t *acc = ls_alloc_aligned((size_t)(M * N) * 4 + 4);
    if (!acc) return lsx_fail(R, node, "out of memory");
    bool dynamic = id->datatype == LS_XNN_DT_QDINT8 || id->dq_datatype == LS_XNN_DT_QINT8;
    if (!dynamic) { /* static qs8 */
        if (in->dtype != LS_DT_I8 || od->datatype != LS_XNN_DT_QINT8) {
            ls_free_aligned(acc);
            return lsx_fail(R, node, "a static quantized fully connected node needs qint8 in and out (%s, %s)",
                            ls_xnn_datatype_name(id->datatype), ls_xnn_datatype_name(od->datatype));
        }
        ls_tensor *out = lsx_out(R, node, 0, in->ndim, dims);
        if (!out) {
            ls_free_aligned(acc);
            return -1;
        }
        ls_qgemm_s8_packed(M, in->data, K, p->wq[0], acc, N);
        requantize(n, acc, M, N, N, id->zero_point, id->scale, p, 0, od, out->data, N);
        ls_free_aligned(acc);
        return 0;
    }
    /* dynamic: int8 rows with their own scale and zero point */
    const int8_t *xq = in->data;
    const float *rs;
    const int32_t *rz;
    int8_t *own_q = NULL;
    float *own_s = NULL;
    int32_t *own_z = NULL;
    if (id->dq_datatype == LS_XNN_DT_QINT8 && in->dtype == LS_DT_F32) {
        own_q = ls_alloc_aligned((size_t)(M * K) + 64);
        own_s = ls_malloc(sizeof *own_s * (size_t)(M + 1));
        own_z = ls_malloc(sizeof *own_z * (size_t)(M + 1));
        /* the legacy marker quantizes per token (defineTensor: num_nonbatch_dims 1) */
        for (int64_t m = 0; m < M; m++) lsx_qd8_row((const float *)in->data + m * K, K, own_q + m * K, &own_s[m], &own_z[m]);
        xq = own_q, rs = own_s, rz = own_z;
    } else {
        const lsx_rval *v = lsx_val(R, n->in[0]);
        /* parameters per batch element (num_nonbatch_dims of the input), each over M / n_rows rows */
        if (in->dtype != LS_DT_I8 || !v->row_scale || !v->n_rows || M % v->n_rows) {
            ls_free_aligned(acc);
            return lsx_fail(R, node, "the dynamically quantized input has no per-row parameters for its %lld rows", (long long)M);
        }
        if (v->n_rows == M) {
            rs = v->row_scale, rz = v->row_zp;
        } else {
            int64_t per = M / v->n_rows;
            own_s = ls_malloc(sizeof *own_s * (size_t)(M + 1));
            own_z = ls_malloc(sizeof *own_z * (size_t)(M + 1));
            for (int64_t m = 0; m < M; m++) own_s[m] = v->row_scale[m / per], own_z[m] = v->row_zp[m / per];
            rs = own_s, rz = own_z;
        }
    }
    ls_tensor *out = lsx_out(R, node, 0, in->ndim, dims);
    float *o = lsx_out_f32(R, node, out);
    int rc = 0;
    if (!o) rc = out ? lsx_fail(R, node, "out of memory") : -1;
    if (rc == 0 && !p->group) {
        ls_qgemm_s8_packed(M, xq, K, p->wq[0], acc, N);
        for (int64_t m = 0; m < M; m++)
            for (int64_t c = 0; c < N; c++)
                o[m * N + c] = (float)(acc[m * N + c] - rz[m] * p->wsum[c]) * (rs[m] * p->wscale[c]);
    } else if (rc == 0) { /* blockwise: one product per block of inputs, each with its scale */
        int64_t G = p->group, groups = K / G;
        for (int64_t i = 0; i < M * N; i++) o[i] = 0;
        for (int64_t b = 0; b < groups; b++) {
            ls_qgemm_s8(M, N, G, xq + b * G, K, p->w8 + b * G, K, acc, N);
            for (int64_t c = 0; c < N; c++) {
                int32_t gs = 0;
                for (int64_t k = 0; k < G; k++) gs += p->w8[c * K + b * G + k];
                float ws = p->wscale[c * groups + b];
                for (int64_t m = 0; m < M; m++) o[m * N + c] += (float)(acc[m * N + c] - rz[m] * gs) * (rs[m] * ws);
            }
        }
    }
    if (rc == 0) {
        add_bias(o, M, N, N, p->bias);
        lsx_clamp(n, o, M * N);
        lsx_out_done(R, node, out, o);
    }
    ls_free_aligned(acc);
    ls_free_aligned(own_q);
    free(own_s);
    free(own_z);
    return rc;
}

int lsx_batch_matmul(lsx_run *R, uint32_t node)
{
    const ls_xnn_node *n = &R->g->nodes[node];
    ls_tensor *ta = lsx_in(R, node, 0), *tb = lsx_in(R, node, 1);
    if (!ta || !tb) return -1;
    if (ta->ndim < 2 || tb->ndim < 2) return lsx_fail(R, node, "batch matrix multiply of a %d-d and a %d-d tensor", ta->ndim, tb->ndim);
    if (n->flags & ~XNN_FLAG_TRANSPOSE_B)
        return ls_fail_needs(R->err, "%s: xnodes[%u] (XNNBatchMatrixMultiply): flags 0x%x are not supported", R->name, node, n->flags);
    bool tr = n->flags & XNN_FLAG_TRANSPOSE_B;
    int64_t M = ta->sizes[ta->ndim - 2], K = ta->sizes[ta->ndim - 1];
    int64_t KB = tb->sizes[tb->ndim - (tr ? 1 : 2)], N = tb->sizes[tb->ndim - (tr ? 2 : 1)];
    if (K != KB) return lsx_fail(R, node, "inner dims %lld and %lld differ", (long long)K, (long long)KB);
    int nd = ta->ndim > tb->ndim ? ta->ndim : tb->ndim;
    int64_t dims[LS_XNN_MAX_DIMS], batch = 1;
    for (int i = 0; i < nd - 2; i++) {
        int ia = i - (nd - ta->ndim), ib = i - (nd - tb->ndim);
        int64_t da = ia >= 0 ? ta->sizes[ia] : 1, db = ib >= 0 ? tb->sizes[ib] : 1;
        if (da != db && da != 1 && db != 1) return lsx_fail(R, node, "batch dims do not broadcast");
        dims[i] = da == 1 ? db : da;
        batch *= dims[i];
    }
    dims[nd - 2] = M;
    dims[nd - 1] = N;
    void *tmpa, *tmpb;
    const float *a = lsx_in_f32(R, node, 0, &tmpa);
    const float *b = a ? lsx_in_f32(R, node, 1, &tmpb) : NULL;
    ls_tensor *out = b ? lsx_out(R, node, 0, nd, dims) : NULL;
    float *o = lsx_out_f32(R, node, out);
    if (!o) {
        ls_free_aligned(tmpa);
        if (b) ls_free_aligned(tmpb);
        return -1;
    }
    for (int64_t bi = 0; bi < batch; bi++) {
        /* the batch offsets of a and b, broadcast */
        int64_t rem = bi, oa = 0, ob = 0, sa = 1, sb = 1;
        for (int i = nd - 3; i >= 0; i--) {
            int64_t idx = rem % dims[i];
            rem /= dims[i];
            int ia = i - (nd - ta->ndim), ib = i - (nd - tb->ndim);
            if (ia >= 0) {
                if (ta->sizes[ia] != 1) oa += idx * sa;
                sa *= ta->sizes[ia];
            }
            if (ib >= 0) {
                if (tb->sizes[ib] != 1) ob += idx * sb;
                sb *= tb->sizes[ib];
            }
        }
        const float *A = a + oa * M * K, *B = b + ob * K * N;
        ls_sgemm_ex(M, N, K, 1.0f, A, K, 1, B, tr ? 1 : N, tr ? K : 1, 0.0f, o + bi * M * N, N);
    }
    lsx_out_done(R, node, out, o);
    ls_free_aligned(tmpa);
    ls_free_aligned(tmpb);
    return 0;
}

/* xnn_define_scaled_dot_product_attention: query [.., T, C] scaled per channel by scale [C],
 * key [.., S, C], value [.., S, D], additive mask [T, S]; out = softmax(q·kᵀ + mask)·v. */
int lsx_sdpa(lsx_run *R, uint32_t node)
{
    ls_tensor *tq = lsx_in(R, node, 0), *tk = lsx_in(R, node, 1), *tv = lsx_in(R, node, 2), *ts = lsx_in(R, node, 3);
    const ls_xnn_node *n = &R->g->nodes[node];
    ls_tensor *tm = n->in[4] != LS_XNN_INVALID_ID ? lsx_in(R, node, 4) : NULL;
    if (!tq || !tk || !tv || !ts || (n->in[4] != LS_XNN_INVALID_ID && !tm)) return -1;
    int nd = tq->ndim;
    if (nd < 3 || tk->ndim != nd || tv->ndim != nd) return lsx_fail(R, node, "query, key and value need the same rank (3 or 4)");
    int64_t T = tq->sizes[nd - 2], C = tq->sizes[nd - 1], S = tk->sizes[nd - 2], D = tv->sizes[nd - 1];
    int64_t heads = T * C != 0 ? tq->numel / (T * C) : 0;
    if (tk->sizes[nd - 1] != C || tv->sizes[nd - 2] != S || tk->numel != heads * S * C || tv->numel != heads * S * D ||
        ts->numel != C || (tm && tm->numel != T * S))
        return lsx_fail(R, node, "query, key, value, scale and mask shapes do not agree");
    void *t0 = NULL, *t1 = NULL, *t2 = NULL, *t3 = NULL, *t4 = NULL;
    const float *q = lsx_in_f32(R, node, 0, &t0), *k = lsx_in_f32(R, node, 1, &t1), *v = lsx_in_f32(R, node, 2, &t2);
    const float *sc = lsx_in_f32(R, node, 3, &t3), *mask = tm ? lsx_in_f32(R, node, 4, &t4) : NULL;
    int64_t dims[LS_XNN_MAX_DIMS];
    memcpy(dims, tq->sizes, sizeof(int64_t) * nd);
    dims[nd - 1] = D;
    ls_tensor *out = q && k && v && sc && (!tm || mask) ? lsx_out(R, node, 0, nd, dims) : NULL;
    float *o = lsx_out_f32(R, node, out);
    float *qs = o ? ls_alloc_aligned((size_t)(T * C) * 4 + 4) : NULL, *w = qs ? ls_alloc_aligned((size_t)(T * S) * 4 + 4) : NULL;
    int rc = 0;
    if (!w) rc = out ? lsx_fail(R, node, "out of memory") : -1;
    for (int64_t h = 0; rc == 0 && h < heads; h++) {
        for (int64_t t = 0; t < T; t++)
            for (int64_t c = 0; c < C; c++) qs[t * C + c] = q[(h * T + t) * C + c] * sc[c];
        ls_sgemm_ex(T, S, C, 1.0f, qs, C, 1, k + h * S * C, 1, C, 0.0f, w, S);
        for (int64_t t = 0; t < T; t++) {
            float *row = w + t * S, m = -INFINITY, s = 0;
            for (int64_t j = 0; j < S; j++) {
                if (mask) row[j] += mask[t * S + j];
                m = row[j] > m ? row[j] : m;
            }
            for (int64_t j = 0; j < S; j++) s += row[j] = expf(row[j] - m);
            for (int64_t j = 0; j < S; j++) row[j] /= s;
        }
        ls_sgemm_ex(T, D, S, 1.0f, w, S, 1, v + h * S * D, D, 1, 0.0f, o + h * T * D, D);
    }
    if (rc == 0) lsx_out_done(R, node, out, o);
    else lsx_out_drop(out, o);
    ls_free_aligned(qs);
    ls_free_aligned(w);
    ls_free_aligned(t0);
    ls_free_aligned(t1);
    ls_free_aligned(t2);
    ls_free_aligned(t3);
    ls_free_aligned(t4);
    return rc;
}
