/* The fuzz harnesses' shared steps (fuzz.h). */
#define _GNU_SOURCE /* memfd_create */
#include "fuzz.h"

#include <stdio.h>
#include <stdlib.h>
#include <sys/mman.h>
#include <string.h>
#include <unistd.h>
#include <zlib.h>

#include "backend.h"
#include "bundled_blob.h"
#include "delegation.h"
#include "etrecord.h"
#include "export.h"
#include "passes.h"
#include "pte.h"
#include "reader.h"
#include "runtime.h"
#include "verify.h"
#include "xnnpack_blob.h"

/* Programs past these sizes are verified only: the pipeline and the runtime are linear in the
 * nodes but not cheap, and a fuzzer wants thousands of runs a second. */
#define FUZZ_MAX_NODES 256
#define FUZZ_MAX_TENSOR_BYTES ((uint64_t)16 << 20)

const char *fuzz_path(const uint8_t *data, size_t size)
{
    static int fd = -1;
    static char path[64];
    if (fd < 0) {
        fd = memfd_create("lowerscope-fuzz", 0);
        if (fd < 0) abort();
        snprintf(path, sizeof path, "/proc/self/fd/%d", fd);
    }
    if (ftruncate(fd, 0) != 0 || pwrite(fd, data, size, 0) != (ssize_t)size) abort();
    return path;
}

/* What running p would allocate for its values, at most: the runtime makes every node's
 * value as its metadata says. */
static uint64_t value_bytes(const ls_program *p)
{
    uint64_t total = 0;
    for (uint32_t i = 0; i < p->n_nodes; i++) {
        const ls_node *n = p->nodes[i];
        for (uint16_t k = 0; k < n->nvals; k++) {
            ls_error err;
            uint64_t b;
            if (ls_tmeta_check_size(&n->vals[k], FUZZ_MAX_TENSOR_BYTES, &b, &err) != 0) return UINT64_MAX;
            total += b;
        }
    }
    for (uint32_t i = 0; i < p->n_subs && total != UINT64_MAX; i++) {
        const ls_submodule *s = &p->subs[i];
        uint64_t b = s->program ? value_bytes(s->program) : 0;
        /* an XNNPACK blob's values are its own, not its program's */
        ls_xnn_graph *g;
        ls_error err;
        if (b != UINT64_MAX && s->processed && ls_xnn_is_blob(s->processed->data, s->processed->size) &&
            ls_xnn_decode(s->processed->data, s->processed->size, "fuzz", &g, &err) == 0) {
            for (uint32_t k = 0; k < g->n_values && b != UINT64_MAX; k++) {
                uint64_t v = ls_xnn_value_nbytes(&g->values[k]);
                b = v == 0 && g->values[k].ndim ? UINT64_MAX : b + v;
            }
            ls_xnn_graph_free(g);
        }
        /* nor a bundled blob's: its graph computes what its own metadata says (a 5 KiB .pte's
         * delegate made float32[1, 8, 272, 8207] and took 12 s under ASan) */
        ls_bb_graph *bg;
        if (b != UINT64_MAX && s->processed && s->processed->size >= 4 && !memcmp(s->processed->data, LS_BB_MAGIC, 4) &&
            ls_bb_decode(s->processed, &bg, &err) == 0) {
            for (uint32_t k = 0; k < bg->n_nodes && b != UINT64_MAX; k++)
                for (uint16_t v = 0; v < bg->nodes[k]->nvals && b != UINT64_MAX; v++) {
                    uint64_t nb;
                    b = ls_tmeta_check_size(&bg->nodes[k]->vals[v], FUZZ_MAX_TENSOR_BYTES, &nb, &err) == 0 ? b + nb : UINT64_MAX;
                }
            ls_bb_graph_free(bg);
        }
        total = b == UINT64_MAX ? b : total + b;
    }
    return total;
}

bool fuzz_runnable(const ls_program *p)
{
    return p->n_nodes <= FUZZ_MAX_NODES && value_bytes(p) <= FUZZ_MAX_TENSOR_BYTES;
}

void fuzz_run(const ls_program *p)
{
    if (value_bytes(p) > FUZZ_MAX_TENSOR_BYTES) return;
    ls_error err;
    ls_runner *r = ls_runner_new(p, &err);
    if (!r) return;
    ls_value *in = NULL, *out = NULL;
    uint32_t nin = 0, nout = 0;
    if (ls_make_inputs(p, 1, 0, &in, &nin, &err) == 0 && ls_runner_run(r, in, nin, &out, &nout, &err) == 0) {
        for (uint32_t i = 0; i < nout; i++) ls_value_release(&out[i]);
    }
    free(out);
    for (uint32_t i = 0; i < nin; i++) ls_value_release(&in[i]);
    free(in);
    ls_runner_free(r);
}

void fuzz_program(const ls_program *p)
{
    ls_verify_result vr;
    ls_verify(p, &vr);
    ls_verify_result_free(&vr);
    if (p->n_nodes > FUZZ_MAX_NODES) return;
    fuzz_run(p);
    ls_error err;
    uint8_t *bytes;
    size_t size;
    if (ls_pt2_bytes(p, "fuzz.pt2", &bytes, &size, &err) == 0) free(bytes);
    ls_pipeline_opts o;
    ls_pipeline_opts_init(&o);
    ls_history h;
    if (ls_pipeline_run((ls_program *)p, &o, &h, &err) == 0) {
        int last = (int)h.n - 1;
        while (last > 0 && h.steps[last].error) last--;
        const ls_program *lp = h.steps[last].program;
        ls_deleg_table t;
        ls_deleg_table_build(lp, &t);
        ls_deleg_table_free(&t);
        if (last > 0) fuzz_run(lp);
        /* what emit made, written and read back */
        const ls_pte *pte = ls_program_emitted(lp, NULL);
        if (pte && ls_pte_write(pte, &bytes, &size, &err) == 0) {
            ls_pte back;
            if (ls_pte_read_bytes(bytes, size, "emitted", &back, &err) == 0) ls_pte_free(&back);
            free(bytes);
        }
        ls_history_free(&h);
    }
    ls_pipeline_opts_free(&o);
}

void fuzz_backend(const ls_backend *be, const ls_blob *blob, const ls_value *in, uint32_t nin)
{
    void *h = NULL;
    ls_error err;
    if (be->init(blob, NULL, 0, NULL, &h, &err) != 0) return;
    ls_value *out = NULL;
    uint32_t nout = 0;
    if (be->execute(h, in, nin, &out, &nout, &err) == 0)
        for (uint32_t i = 0; i < nout; i++) ls_value_release(&out[i]);
    free(out);
    be->destroy(h);
}

int fuzz_lowered(const char *path, uint8_t **pte_bytes, size_t *pte_size, const char *etrecord)
{
    *pte_bytes = NULL;
    ls_program *p;
    ls_error err;
    if (ls_load(path, NULL, &p, &err) != 0) return -1;
    ls_pipeline_opts o;
    ls_pipeline_opts_init(&o);
    ls_history h;
    int rc = -1;
    if (ls_pipeline_run(p, &o, &h, &err) == 0) {
        const ls_program *last = h.steps[h.n - 1].program;
        const ls_pte *pte = ls_program_emitted(last, NULL);
        rc = pte ? ls_pte_write(pte, pte_bytes, pte_size, &err) : -1;
        int edge = ls_history_find_step(&h, "to_backend", &err);
        char *dhm = NULL, *dm = NULL;
        if (rc == 0 && etrecord &&
            (edge < 0 || ls_debug_maps_json(last, "forward", &dhm, &dm, &err) != 0 ||
             ls_etrecord_write(&(ls_etrecord_parts){.exported = h.steps[0].program, .edge = h.steps[edge].program,
                                                    .debug_handle_map = dhm, .delegate_map = dm},
                               etrecord, &err) != 0))
            rc = -1;
        free(dhm);
        free(dm);
        ls_history_free(&h);
    }
    ls_pipeline_opts_free(&o);
    ls_program_unref(p);
    if (rc != 0) {
        free(*pte_bytes);
        *pte_bytes = NULL;
    }
    return rc;
}

static uint32_t rd16(const uint8_t *p) { return (uint32_t)p[0] | (uint32_t)p[1] << 8; }
static uint32_t rd32(const uint8_t *p) { return rd16(p) | rd16(p + 2) << 16; }
static void wr32(uint8_t *p, uint32_t v)
{
    for (int i = 0; i < 4; i++) p[i] = (uint8_t)(v >> (8 * i));
}

uint8_t *fuzz_zip_seal(const uint8_t *data, size_t size)
{
    uint8_t *z = malloc(size ? size : 1);
    if (!z) return NULL;
    memcpy(z, data, size);
    /* the end of central directory record: its signature within the last 64 KiB + 22 bytes */
    size_t eocd = SIZE_MAX;
    for (size_t i = size >= 22 ? size - 22 : 0; size >= 22 && i + 65557 >= size; i--) {
        if (rd32(z + i) == 0x06054b50) {
            eocd = i;
            break;
        }
        if (i == 0) break;
    }
    if (eocd == SIZE_MAX) return z;
    uint32_t n = rd16(z + eocd + 10), cd = rd32(z + eocd + 16);
    for (uint32_t k = 0; k < n && (size_t)cd + 46 <= size && rd32(z + cd) == 0x02014b50; k++) {
        uint32_t method = rd16(z + cd + 10), csize = rd32(z + cd + 20), local = rd32(z + cd + 42);
        size_t next = (size_t)cd + 46 + rd16(z + cd + 28) + rd16(z + cd + 30) + rd16(z + cd + 32);
        if (method == 0 && (size_t)local + 30 <= size && rd32(z + local) == 0x04034b50) {
            size_t at = (size_t)local + 30 + rd16(z + local + 26) + rd16(z + local + 28);
            if (at <= size && csize <= size - at) {
                uint32_t crc = (uint32_t)crc32(0L, z + at, csize);
                wr32(z + cd + 16, crc);
                wr32(z + local + 14, crc);
            }
        }
        cd = (uint32_t)next;
    }
    return z;
}
