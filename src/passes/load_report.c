/* Step 0 of a .pte: the report says what the file holds, in the sentences the UI's changes
 * pane and `lowerscope passes` show (each naming at most one node, to jump to). */
#include <inttypes.h>
#include <stdlib.h>
#include <string.h>

#include "delegation.h"
#include "passes.h"
#include "pte_file.h"

static void specs_text(const ls_submodule *s, ls_buf *b)
{
    char hb[32];
    if (!s->nspecs) {
        ls_buf_puts(b, "no compile specs");
        return;
    }
    ls_buf_printf(b, "compile spec%s ", s->nspecs == 1 ? "" : "s");
    for (uint32_t k = 0; k < s->nspecs && k < 4; k++)
        ls_buf_printf(b, "%s%s (%s)", k ? ", " : "", s->specs[k].key, ls_fmt_bytes(s->specs[k].value ? s->specs[k].value->size : 0, hb, sizeof hb));
    if (s->nspecs > 4) ls_buf_printf(b, " and %u more", s->nspecs - 4);
}

static void delegate_sentence(ls_report *r, const ls_program *p, const ls_deleg_part *pt)
{
    char b1[32], b2[32], b3[32];
    ls_buf b = {0};
    ls_buf_printf(&b, "`%s` (%s): %s blob, ", pt->sub->name, pt->sub->backend_id ? pt->sub->backend_id : "?",
                  ls_fmt_bytes(pt->blob_bytes, b1, sizeof b1));
    specs_text(pt->sub, &b);
    if (pt->call)
        ls_buf_printf(&b, "; takes %u value%s (%s), gives %u (%s)", pt->io.n_in, pt->io.n_in == 1 ? "" : "s",
                      ls_fmt_bytes(pt->io.in_bytes, b2, sizeof b2), pt->io.n_out, ls_fmt_bytes(pt->io.out_bytes, b3, sizeof b3));
    if (pt->readable) ls_buf_printf(&b, "; lowerscope reads its blob: %u node%s inside", pt->nodes, pt->nodes == 1 ? "" : "s");
    else ls_buf_puts(&b, "; its blob is opaque to lowerscope: counted as one call");
    ls_report_add(r, NULL, pt->call ? pt->call->name : NULL, "%s", b.s);
    ls_buf_free(&b);
    (void)p;
}

static void data_sentences(ls_report *r, const ls_pte_file *f, const char *method)
{
    char hb[32];
    uint64_t named_bytes;
    uint32_t n_named = ls_pte_file_delegate_data(f, &named_bytes); /* a .ptd's tensors are counted below */
    if (n_named) {
        uint32_t read = 0;
        for (uint32_t i = 0; i < f->n_named; i++) read += !ls_pte_named_is_tensor(f, &f->named[i]) && f->named[i].n_readers > 0;
        ls_report_add(r, NULL, NULL, "named data: %u entr%s, %s; %u named by a delegate's blob", n_named,
                      n_named == 1 ? "y" : "ies", ls_fmt_bytes(named_bytes, hb, sizeof hb), read);
    }
    uint32_t ext = 0, missing = 0;
    uint64_t bytes = 0;
    const char *first_missing = NULL;
    for (uint32_t i = 0; i < f->n_externals; i++) {
        const ls_pte_external *e = &f->externals[i];
        if (e->method != method) continue;
        ext++;
        bytes += e->bytes;
        if (e->ptd < 0 && !missing++) first_missing = e->key;
    }
    if (!ext) return;
    if (!missing) {
        const ls_pte_external *e0 = NULL;
        for (uint32_t i = 0; i < f->n_externals && !e0; i++)
            if (f->externals[i].method == method) e0 = &f->externals[i];
        const char *ptd = f->ptd_paths[e0->ptd], *base = strrchr(ptd, '/');
        ls_report_add(r, NULL, NULL, "%u tensor%s (%s) stored outside the program, read from %s%s", ext, ext == 1 ? "" : "s",
                      ls_fmt_bytes(bytes, hb, sizeof hb), base ? base + 1 : ptd, f->n_ptds > 1 ? " and the other data files" : "");
    } else {
        ls_report_add(r, NULL, NULL,
                      "%u tensor%s (%s) stored outside the program; %u without data (first: `%s`): no .ptd given or found "
                      "beside the .pte holds %s",
                      ext, ext == 1 ? "" : "s", ls_fmt_bytes(bytes, hb, sizeof hb), missing, first_missing,
                      missing == 1 ? "it" : "them");
    }
}

void ls_pte_load_report(const ls_program *p, bool relowered, ls_report *r)
{
    const ls_pte_file *f = ls_program_pte_file(p);
    if (!f) return;
    const ls_pte_method *m = ls_pte_file_find_method(f, p->method);
    ls_buf b = {0};
    ls_pte_file_methods_text(f, &b);
    if (m && m->kind == LS_PTE_METHOD_CONSTANT) /* exir's _emit_prim_getters: no instruction, values stored */
        ls_report_add(r, NULL, NULL, "`%s`, a constant method: no instructions, it returns %u value%s the file stores; its methods: %s",
                      m->name, m->n_outputs, m->n_outputs == 1 ? "" : "s", b.s);
    else if (m)
        ls_report_add(r, NULL, NULL, "`%s`, a %s of %u instruction%s (%u kernel call%s, %u delegate call%s), as the file holds it; its methods: %s",
                      m->name, ls_pte_method_kind_name((ls_pte_method_kind)m->kind), m->n_instructions,
                      m->n_instructions == 1 ? "" : "s", m->n_kernel_calls, m->n_kernel_calls == 1 ? "" : "s",
                      m->n_delegate_calls, m->n_delegate_calls == 1 ? "" : "s", b.s);
    ls_buf_free(&b);
    ls_deleg_part *parts;
    uint32_t np;
    ls_deleg_parts(p, &parts, &np);
    for (uint32_t i = 0; i < np; i++) delegate_sentence(r, p, &parts[i]);
    free(parts);
    /* a view exir elided (_emit_view) is a node the loader makes, but no instruction runs it */
    uint32_t cpu = ls_deleg_cpu_count(p), views = 0;
    for (uint32_t i = 0; i < p->n_nodes; i++)
        views += ls_deleg_on_cpu(p->nodes[i]) && p->nodes[i]->op == ls_op_get(LS_OP_memory_view);
    cpu -= views;
    if (views)
        ls_report_add(r, NULL, NULL, "%u kernel%s on the CPU, and %u view%s of planned memory no instruction runs", cpu,
                      cpu == 1 ? "" : "s", views, views == 1 ? "" : "s");
    else if (np || cpu)
        ls_report_add(r, NULL, NULL, "%u kernel%s on the CPU", cpu, cpu == 1 ? "" : "s");
    data_sentences(r, f, p->method);
    if (!relowered) ls_report_add(r, NULL, NULL, "a .pte is not lowered again unless asked (--relower; :relower in the UI)");
}
