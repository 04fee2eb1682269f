/* QnnBackend blobs, described (lowerscope does not read or run QNN context binaries):
 *
 * - the header ExecuTorch's QNN backend puts before the context binary
 *   (backends/qualcomm/runtime/backends/QnnCustomProtocol.h, QnnContextCustomProtocol): a 4-byte
 *   magic 0x5678ABCD, an 8-byte graph signature, the 8-byte size of the context binary, 236
 *   bytes of padding, then the binary;
 * - the graphs of the context: the file's methods the binary names (QNN stores a graph's name
 *   as a 32-bit length and the bytes; ExecuTorch names each graph after its method);
 * - the compile spec `qnn_compile_spec`, a QnnExecuTorchOptions flatbuffer
 *   (backends/qualcomm/serialization/qc_compiler_spec.fbs): soc_info (slot 0: soc_model,
 *   htp_info{htp_arch, vtcm_size_in_mb}), backend_options (slot 1: backend_type), graph_name
 *   (slot 2). */
#include <inttypes.h>
#include <string.h>

#include "../inspectors.h"
#include "flatbuf.h"

#define QNN_MAGIC 0x5678ABCDu
#define QNN_HEADER_BYTES 256u /* 4 + 8 + 8 + 236 */

static const char *chipset(int32_t v)
{
    static const struct {
        int32_t v;
        const char *name;
    } t[] = {{39, "SA8295"},   {36, "SM8450"},   {42, "SM8475"},   {43, "SM8550"},   {57, "SM8650"},
             {69, "SM8750"},   {46, "SSG2115P"}, {58, "SSG2125P"}, {45, "SXR1230P"}, {53, "SXR2230P"},
             {75, "SXR2330P"}, {77, "QCS9100"}};
    for (size_t i = 0; i < sizeof t / sizeof t[0]; i++)
        if (t[i].v == v) return t[i].name;
    return NULL;
}

static void header_facts(const ls_delegate_view *d, ls_delegate_facts *out, size_t *binary_at)
{
    const ls_blob *b = d->blob;
    *binary_at = 0;
    if (b->size < QNN_HEADER_BYTES || ls_le_get(b->data, 4) != QNN_MAGIC) {
        ls_delegate_fact_add(out, "header", "no QnnContextCustomProtocol header (magic 0x%08x is not 0x5678ABCD)",
                             b->size >= 4 ? (unsigned)ls_le_get(b->data, 4) : 0u);
        return;
    }
    uint64_t signature = ls_le_get(b->data + 4, 8), size = ls_le_get(b->data + 12, 8);
    char hb[32];
    if (size > b->size - QNN_HEADER_BYTES) {
        ls_delegate_fact_add(out, "header", "QnnContextCustomProtocol: the context binary's size (%" PRIu64
                             " bytes) runs past the blob", size);
        return;
    }
    ls_delegate_fact_add(out, "header", "QnnContextCustomProtocol: signature 0x%016" PRIx64 ", context binary %s at byte %u",
                         signature, ls_fmt_bytes(size, hb, sizeof hb), QNN_HEADER_BYTES);
    *binary_at = QNN_HEADER_BYTES;
}

/* Whether the binary holds `name` as a 32-bit length followed by its bytes. */
static bool names(const uint8_t *p, size_t n, const char *name)
{
    size_t len = strlen(name);
    if (!len || len + 4 > n) return false;
    for (size_t off = 4; off + len <= n; off++) {
        const uint8_t *hit = memchr(p + off, (unsigned char)name[0], n - off - len + 1);
        if (!hit) return false;
        off = (size_t)(hit - p);
        if (memcmp(hit, name, len) == 0 && ls_le_get(hit - 4, 4) == len) return true;
    }
    return false;
}

static void graph_facts(const ls_delegate_view *d, ls_delegate_facts *out, size_t at)
{
    if (!at || !d->n_methods) return;
    ls_buf g = {0};
    uint32_t found = 0;
    for (uint32_t m = 0; m < d->n_methods; m++)
        if (names(d->blob->data + at, d->blob->size - at, d->methods[m])) ls_buf_printf(&g, "%s%s", found++ ? ", " : "", d->methods[m]);
    if (found) ls_delegate_fact_add(out, "graphs", "%s (the file's methods the context binary names)", g.s);
    else ls_delegate_fact_add(out, "graphs", "the context binary names none of the file's methods");
    ls_buf_free(&g);
}

static void options_facts(const ls_compile_spec *cs, ls_delegate_facts *out)
{
    ls_fb_reader r;
    ls_fb_table root, soc, htp, be;
    ls_error err;
    if (!cs->value || ls_fb_reader_init(&r, cs->value->data, cs->value->size, "qnn_compile_spec", &err) != 0 ||
        ls_fb_root(&r, NULL, &root) != 0) {
        ls_delegate_fact_add(out, "options", "qnn_compile_spec is not a QnnExecuTorchOptions flatbuffer");
        return;
    }
    ls_buf b = {0};
    int32_t v = 0;
    if (ls_fb_table_field(&r, &root, 0, "soc_info", &soc) == 1) {
        if (ls_fb_i32(&r, &soc, 0, "soc_model", 0, &v) >= 0) {
            const char *name = chipset(v);
            ls_buf_printf(&b, "SoC %s (%d)", name ? name : "unknown", (int)v);
        }
        if (ls_fb_table_field(&r, &soc, 1, "htp_info", &htp) == 1) {
            uint32_t vtcm = 0;
            if (ls_fb_i32(&r, &htp, 0, "htp_arch", 0, &v) >= 0) ls_buf_printf(&b, ", HTP arch V%d", (int)v);
            if (ls_fb_u32(&r, &htp, 1, "vtcm_size_in_mb", 0, &vtcm) >= 0 && vtcm) ls_buf_printf(&b, ", VTCM %u MB", vtcm);
        }
    }
    if (ls_fb_table_field(&r, &root, 1, "backend_options", &be) == 1 && ls_fb_i32(&r, &be, 0, "backend_type", 0, &v) >= 0) {
        static const char *types[] = {"undefined", "GPU", "HTP", "DSP"};
        ls_buf_printf(&b, "%sbackend %s", b.len ? ", " : "", v >= 0 && v < 4 ? types[v] : "unknown");
    }
    ls_fb_vec gv;
    if (ls_fb_vector_field(&r, &root, 2, "graph_name", 4, &gv) == 1 && gv.n) {
        ls_buf_printf(&b, "%sgraph_name", b.len ? ", " : "");
        for (uint32_t i = 0; i < gv.n && i < 16; i++) {
            uint32_t at = gv.pos + 4 * i, so = at + ls_fb_le32(r.buf + at);
            if (so + 4 > r.size) break;
            uint32_t len = ls_fb_le32(r.buf + so);
            if (len > r.size - so - 4) break;
            ls_buf_printf(&b, " %.*s", (int)len, (const char *)r.buf + so + 4);
        }
    }
    ls_delegate_fact_add(out, "options", "QnnExecuTorchOptions: %s", b.len ? b.s : "nothing set");
    ls_buf_free(&b);
}

static void qnn_describe(const ls_delegate_view *d, ls_delegate_facts *out)
{
    size_t at;
    header_facts(d, out, &at);
    graph_facts(d, out, at);
    for (uint32_t k = 0; k < d->nspecs; k++)
        if (d->specs[k].key && strcmp(d->specs[k].key, "qnn_compile_spec") == 0) options_facts(&d->specs[k], out);
}

const ls_delegate_inspector lsd_qnn_inspector = {
    .backend_id = "QnnBackend",
    .format = "QNN context binary behind ExecuTorch's QnnContextCustomProtocol header",
    .describe = qnn_describe,
};
