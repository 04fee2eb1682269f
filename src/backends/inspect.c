/* Seeing inside a delegate (backend.h): the inspectors registered per backend id or by the
 * format they claim, and the facts every blob has (backend, size, magic, compile specs). */
#include <ctype.h>
#include <inttypes.h>
#include <pthread.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "backend.h"
#include "bundled_blob.h"
#include "inspectors.h"
#include "xnnpack_blob.h"

#define MAX_INSPECTORS 32

static const ls_delegate_inspector *inspectors[MAX_INSPECTORS];
static int n_inspectors;
static pthread_once_t builtins_once = PTHREAD_ONCE_INIT;
static pthread_mutex_t lock = PTHREAD_MUTEX_INITIALIZER;

static bool same_slot(const ls_delegate_inspector *a, const ls_delegate_inspector *b)
{
    if (a->backend_id && b->backend_id) return strcmp(a->backend_id, b->backend_id) == 0;
    return !a->backend_id && !b->backend_id && a->format && b->format && strcmp(a->format, b->format) == 0;
}

void ls_delegate_inspector_register(const ls_delegate_inspector *ins)
{
    if (!ins || (!ins->backend_id && !ins->claims)) return;
    pthread_mutex_lock(&lock);
    int i = 0;
    while (i < n_inspectors && !same_slot(inspectors[i], ins)) i++;
    if (i < n_inspectors) inspectors[i] = ins;
    else if (n_inspectors < MAX_INSPECTORS) inspectors[n_inspectors++] = ins;
    pthread_mutex_unlock(&lock);
}

static void register_builtins(void)
{
    ls_delegate_inspector_register(&ls_bundled_inspector); /* bundled/blob_program.c */
    ls_delegate_inspector_register(&lsd_qnn_inspector);    /* describe/qnn.c */
    ls_delegate_inspector_register(&lsd_coreml_inspector); /* describe/coreml.c */
    ls_delegate_inspector_register(&ls_xnnpack_inspector); /* xnnpack/xnn_inspect.c */
}

const ls_delegate_inspector *ls_delegate_inspector_find(const char *backend_id, const ls_blob *blob)
{
    pthread_once(&builtins_once, register_builtins);
    const ls_delegate_inspector *by_claim = NULL, *by_id = NULL;
    pthread_mutex_lock(&lock);
    for (int i = 0; i < n_inspectors && !by_claim; i++) {
        const ls_delegate_inspector *ins = inspectors[i];
        if (blob && ins->claims && ins->claims(blob)) by_claim = ins;
        else if (!by_id && backend_id && ins->backend_id && strcmp(ins->backend_id, backend_id) == 0) by_id = ins;
    }
    pthread_mutex_unlock(&lock);
    return by_claim ? by_claim : by_id;
}

ls_delegate_view ls_delegate_view_of(const ls_submodule *s, const ls_named_data *named, const char *const *methods,
                                     uint32_t n_methods)
{
    return (ls_delegate_view){.name = s->name,
                              .backend_id = s->backend_id,
                              .blob = s->processed,
                              .specs = s->specs,
                              .nspecs = s->nspecs,
                              .named = named,
                              .methods = methods,
                              .n_methods = n_methods};
}

int ls_delegate_read(const ls_delegate_view *d, ls_program **out, ls_error *err)
{
    *out = NULL;
    if (!d->blob) return 0;
    const ls_delegate_inspector *ins = ls_delegate_inspector_find(d->backend_id, d->blob);
    if (!ins || !ins->read) return 0;
    if (ins->read(d, out, err) != 0) {
        *out = NULL;
        return ls_fail_prefix(err, "%s (%s): %s", d->name ? d->name : "delegate", d->backend_id ? d->backend_id : "?",
                              ins->format ? ins->format : "blob");
    }
    return 1;
}

/* ---- facts */

void ls_delegate_fact_add(ls_delegate_facts *f, const char *label, const char *fmt, ...)
{
    va_list ap;
    va_start(ap, fmt);
    ls_buf b = {0};
    ls_buf_vprintf(&b, fmt, ap);
    va_end(ap);
    f->v = ls_realloc(f->v, sizeof *f->v * (f->n + 1));
    f->v[f->n++] = (ls_delegate_fact){ls_intern(label), ls_buf_take(&b)};
}

void ls_delegate_facts_free(ls_delegate_facts *f)
{
    for (uint32_t i = 0; i < f->n; i++) free(f->v[i].text);
    free(f->v);
    f->v = NULL;
    f->n = 0;
}

static bool is_text(const uint8_t *p, size_t n)
{
    if (!n) return false;
    for (size_t i = 0; i < n; i++)
        if (!(isprint(p[i]) || (i + 1 == n && p[i] == 0))) return false;
    return true;
}

/* Bytes as people read them: 'text' when they are text, else hex (the first `max`). */
void lsd_bytes_text(ls_buf *b, const uint8_t *p, size_t n, size_t max)
{
    if (is_text(p, n) && n <= 200) {
        ls_buf_printf(b, "'%.*s'", (int)(p[n - 1] == 0 ? n - 1 : n), (const char *)p);
        return;
    }
    for (size_t i = 0; i < n && i < max; i++) ls_buf_printf(b, "%s%02x", i ? " " : "", p[i]);
    if (n > max) ls_buf_puts(b, " ...");
}

void ls_delegate_describe(const ls_delegate_view *d, ls_delegate_facts *out)
{
    char hb[32];
    const ls_blob *blob = d->blob;
    const ls_delegate_inspector *ins = blob ? ls_delegate_inspector_find(d->backend_id, blob) : NULL;
    ls_delegate_fact_add(out, "backend", "%s", d->backend_id && *d->backend_id ? d->backend_id : "(none)");
    if (!blob) ls_delegate_fact_add(out, "blob", "none (not preprocessed)");
    else ls_delegate_fact_add(out, "blob", "%s (%zu bytes)", ls_fmt_bytes(blob->size, hb, sizeof hb), blob->size);
    if (ins && ins->format) ls_delegate_fact_add(out, "format", "%s", ins->format);
    if (blob && ins && ins->read) {
        ls_program *p = NULL;
        ls_error err;
        if (ins->read(d, &p, &err) == 0) {
            uint32_t calls = 0;
            for (uint32_t i = 0; i < p->n_nodes; i++) calls += p->nodes[i]->kind == LS_NODE_CALL;
            ls_delegate_fact_add(out, "inside", "read: %u node%s, %u call%s", p->n_nodes,
                                 p->n_nodes == 1 ? "" : "s", calls, calls == 1 ? "" : "s");
            ls_program_unref(p);
        } else {
            ls_delegate_fact_add(out, "inside", "unreadable: %s", err.msg);
        }
    } else if (blob) {
        ls_delegate_fact_add(out, "inside", "opaque: lowerscope cannot read %s blobs; the delegation table counts each call as one",
                             d->backend_id && *d->backend_id ? d->backend_id : "these");
    }
    if (blob && ins && ins->describe) ins->describe(d, out); /* what the header says, before the raw bytes */
    if (!d->nspecs) ls_delegate_fact_add(out, "specs", "no compile specs");
    for (uint32_t k = 0; k < d->nspecs; k++) {
        const ls_compile_spec *cs = &d->specs[k];
        ls_buf v = {0};
        size_t n = cs->value ? cs->value->size : 0;
        ls_buf_printf(&v, "%s (%s)", cs->key ? cs->key : "?", ls_fmt_bytes(n, hb, sizeof hb));
        if (n) {
            ls_buf_puts(&v, ": ");
            lsd_bytes_text(&v, cs->value->data, n, 16);
        }
        ls_delegate_fact_add(out, "spec", "%s", v.s);
        ls_buf_free(&v);
    }
    if (blob) {
        ls_buf m = {0};
        size_t n = blob->size < 16 ? blob->size : 16;
        for (size_t i = 0; i < n; i++) ls_buf_printf(&m, "%s%02x", i ? " " : "", blob->data[i]);
        ls_buf_puts(&m, "  ");
        for (size_t i = 0; i < n; i++) ls_buf_putc(&m, isprint(blob->data[i]) ? (char)blob->data[i] : '.');
        ls_delegate_fact_add(out, "magic", "%s", m.s ? m.s : "(empty)");
        ls_buf_free(&m);
    }
}
