/* What `lowerscope info` says beyond the program's graph: its delegates (each with what
 * lowerscope can say about its blob, backend.h's ls_delegate_describe) and, for a .pte, the
 * file's methods, named data and external data (pte_file.h). Text and JSON. */
#include "info_pte.h"

#include <inttypes.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "backend.h"
#include "delegation.h"
#include "pte_file.h"
#include "xnnpack_blob.h"

/* ---- delegates */

static void describe(const ls_program *p, const ls_submodule *s, ls_delegate_facts *facts)
{
    ls_delegate_view v = ls_program_delegate_view(p, s);
    ls_delegate_describe(&v, facts);
}

void info_delegates_text(const ls_program *p)
{
    ls_deleg_part *parts;
    uint32_t n;
    ls_deleg_parts(p, &parts, &n);
    char b1[32], b2[32], b3[32];
    for (uint32_t i = 0; i < n; i++) {
        const ls_deleg_part *pt = &parts[i];
        printf("  %-9s %s %s: %s blob, %u compile spec%s, %s", i ? "" : "delegates", pt->sub->name,
               pt->sub->backend_id ? pt->sub->backend_id : "?", ls_fmt_bytes(pt->blob_bytes, b1, sizeof b1), pt->sub->nspecs,
               pt->sub->nspecs == 1 ? "" : "s", pt->readable ? "read" : "opaque");
        if (pt->readable) printf(" (%u node%s inside)", pt->nodes, pt->nodes == 1 ? "" : "s");
        if (pt->call)
            printf("; %u in (%s), %u out (%s)", pt->io.n_in, ls_fmt_bytes(pt->io.in_bytes, b2, sizeof b2), pt->io.n_out,
                   ls_fmt_bytes(pt->io.out_bytes, b3, sizeof b3));
        printf("\n");
        ls_delegate_facts facts = {0};
        describe(p, pt->sub, &facts);
        for (uint32_t k = 0; k < facts.n; k++) {
            const char *l = facts.v[k].label;
            if (!strcmp(l, "backend") || !strcmp(l, "blob") || !strcmp(l, "specs")) continue; /* on the line above */
            printf("  %-9s   %-8s %s\n", "", l, facts.v[k].text);
        }
        ls_delegate_facts_free(&facts);
    }
    free(parts);
}

void info_delegates_json(ls_buf *b, const ls_program *p)
{
    ls_deleg_part *parts;
    uint32_t n;
    ls_deleg_parts(p, &parts, &n);
    ls_buf_puts(b, ",\"delegates\":[");
    for (uint32_t i = 0; i < n; i++) {
        const ls_deleg_part *pt = &parts[i];
        ls_buf_puts(b, i ? ",{\"name\":" : "{\"name\":");
        ls_buf_json_str(b, pt->sub->name);
        ls_buf_puts(b, ",\"backend_id\":");
        ls_buf_json_str(b, pt->sub->backend_id);
        ls_buf_printf(b, ",\"blob_bytes\":%" PRIu64 ",\"readable\":%s,\"nodes\":%u,\"calls\":%u", pt->blob_bytes,
                      pt->readable ? "true" : "false", pt->nodes, pt->n_calls);
        ls_buf_printf(b, ",\"inputs\":{\"count\":%u,\"bytes\":%" PRIu64 "},\"outputs\":{\"count\":%u,\"bytes\":%" PRIu64 "}",
                      pt->io.n_in, pt->io.in_bytes, pt->io.n_out, pt->io.out_bytes);
        ls_buf_puts(b, ",\"compile_specs\":[");
        for (uint32_t k = 0; k < pt->sub->nspecs; k++) {
            ls_buf_puts(b, k ? ",{\"key\":" : "{\"key\":");
            ls_buf_json_str(b, pt->sub->specs[k].key);
            ls_buf_printf(b, ",\"bytes\":%zu}", pt->sub->specs[k].value ? pt->sub->specs[k].value->size : (size_t)0);
        }
        ls_buf_puts(b, "],\"facts\":[");
        ls_delegate_facts facts = {0};
        describe(p, pt->sub, &facts);
        for (uint32_t k = 0; k < facts.n; k++) {
            ls_buf_puts(b, k ? ",{\"label\":" : "{\"label\":");
            ls_buf_json_str(b, facts.v[k].label);
            ls_buf_puts(b, ",\"text\":");
            ls_buf_json_str(b, facts.v[k].text);
            ls_buf_putc(b, '}');
        }
        ls_delegate_facts_free(&facts);
        ls_buf_putc(b, ']');
        if (pt->sub->processed && ls_xnn_is_blob(pt->sub->processed->data, pt->sub->processed->size)) {
            ls_buf xb = {0};
            if (ls_xnn_json(pt->sub->processed->data, pt->sub->processed->size, &xb) == 0) {
                ls_buf_puts(b, ",\"xnnpack\":");
                ls_buf_puts(b, xb.s);
            }
            ls_buf_free(&xb);
        }
        ls_buf_putc(b, '}');
    }
    ls_buf_putc(b, ']');
    free(parts);
}

/* ---- the .pte's own tables */

void info_pte_text(const ls_program *p)
{
    const ls_pte_file *f = ls_program_pte_file(p);
    if (!f) return;
    char hb[32];
    printf("  %-9s %u:", "methods", f->n_methods);
    uint32_t constants = 0;
    for (uint32_t m = 0; m < f->n_methods; m++) constants += f->methods[m].kind == LS_PTE_METHOD_CONSTANT;
    bool fold = constants > 4, first = true;
    for (uint32_t m = 0; m < f->n_methods; m++) {
        const ls_pte_method *me = &f->methods[m];
        if (fold && me->kind == LS_PTE_METHOD_CONSTANT) continue;
        printf("%s%s%s (%s, %u in, %u out", first ? " " : " · ", me->name, me->name == p->method ? "*" : "",
               ls_pte_method_kind_name((ls_pte_method_kind)me->kind), me->n_inputs, me->n_outputs);
        if (me->kind == LS_PTE_METHOD_RUN) printf(", %u instruction%s", me->n_instructions, me->n_instructions == 1 ? "" : "s");
        printf(")");
        first = false;
    }
    const ls_pte_method *open = ls_pte_file_find_method(f, p->method);
    if (fold && open && open->kind == LS_PTE_METHOD_CONSTANT) /* the one opened stays marked */
        printf("%s%u constant methods (%s* among them; info --json lists them)", first ? " " : " · ", constants, open->name);
    else if (fold) printf("%s%u constant methods (info --json lists them)", first ? " " : " · ", constants);
    printf("\n");
    /* named data: the .pte's, and a .ptd's entries no external tensor is (a delegate's data) */
    uint32_t shown = 0, listed = 0;
    uint64_t named_bytes = 0;
    for (uint32_t i = 0; i < f->n_named; i++) {
        const ls_pte_named *e = &f->named[i];
        if (ls_pte_named_is_tensor(f, e)) continue;
        listed++;
        named_bytes += e->bytes;
    }
    if (listed) {
        printf("  %-9s %u entr%s, %s:", "named", listed, listed == 1 ? "y" : "ies", ls_fmt_bytes(named_bytes, hb, sizeof hb));
        for (uint32_t i = 0; i < f->n_named && shown < 4; i++) {
            const ls_pte_named *e = &f->named[i];
            if (ls_pte_named_is_tensor(f, e)) continue;
            printf("%s%.16s%s %s", shown++ ? " · " : " ", e->key, strlen(e->key) > 16 ? "…" : "", ls_fmt_bytes(e->bytes, hb, sizeof hb));
            for (uint32_t r = 0; r < e->n_readers && r < 2; r++) printf("%s%s", r ? ", " : " → ", e->readers[r].name);
            if (e->ptd >= 0) printf(" (%s)", f->ptd_paths[e->ptd]);
        }
        printf("%s\n", listed > shown ? " · ..." : "");
    }
    uint32_t ext = 0, missing = 0;
    uint64_t bytes = 0;
    for (uint32_t i = 0; i < f->n_externals; i++)
        if (f->externals[i].method == p->method) {
            ext++;
            bytes += f->externals[i].bytes;
            missing += f->externals[i].ptd < 0;
        }
    if (ext) {
        printf("  %-9s %u tensor%s, %s, by key:", "external", ext, ext == 1 ? "" : "s", ls_fmt_bytes(bytes, hb, sizeof hb));
        shown = 0;
        for (uint32_t i = 0; i < f->n_externals && shown < 6; i++) {
            const ls_pte_external *e = &f->externals[i];
            if (e->method != p->method) continue;
            printf("%s%s%s", shown++ ? ", " : " ", e->key, e->trainable ? " (trainable)" : "");
        }
        printf("%s\n", ext > shown ? ", ..." : "");
        for (uint32_t k = 0; k < f->n_ptds; k++)
            printf("  %-9s from %s (%s)\n", "", f->ptd_paths[k], f->ptd_found[k] ? "found beside the .pte" : "--data");
        if (missing)
            printf("  %-9s %u without data: no .ptd given or found holds them (--data FILE.ptd; exir writes it as "
                   "the .pte's stem .ptd or " LS_PTD_DEFAULT_NAME ")\n",
                   "", missing);
    }
}

void info_pte_json(ls_buf *b, const ls_program *p)
{
    const ls_pte_file *f = ls_program_pte_file(p);
    if (!f) return;
    ls_buf_puts(b, ",\"method\":");
    ls_buf_json_str(b, p->method);
    ls_buf_puts(b, ",\"methods\":[");
    for (uint32_t m = 0; m < f->n_methods; m++) {
        const ls_pte_method *me = &f->methods[m];
        ls_buf_puts(b, m ? ",{\"name\":" : "{\"name\":");
        ls_buf_json_str(b, me->name);
        ls_buf_printf(b, ",\"kind\":\"%s\",\"inputs\":%u,\"outputs\":%u,\"instructions\":%u,\"kernel_calls\":%u,"
                         "\"delegate_calls\":%u,\"delegates\":%u}",
                      ls_pte_method_kind_name((ls_pte_method_kind)me->kind), me->n_inputs, me->n_outputs, me->n_instructions,
                      me->n_kernel_calls, me->n_delegate_calls, me->n_delegates);
    }
    ls_buf_puts(b, "],\"named_data\":[");
    for (uint32_t i = 0; i < f->n_named; i++) {
        const ls_pte_named *e = &f->named[i];
        ls_buf_puts(b, i ? ",{\"key\":" : "{\"key\":");
        ls_buf_json_str(b, e->key);
        ls_buf_printf(b, ",\"bytes\":%" PRIu64 ",\"file\":", e->bytes);
        ls_buf_json_str(b, e->ptd >= 0 ? f->ptd_paths[e->ptd] : NULL);
        ls_buf_puts(b, ",\"read_by\":[");
        for (uint32_t r = 0; r < e->n_readers; r++) {
            if (r) ls_buf_putc(b, ',');
            ls_buf_json_str(b, ls_internf("%s/%s", e->readers[r].method, e->readers[r].name));
        }
        ls_buf_puts(b, "]}");
    }
    ls_buf_puts(b, "],\"data_files\":[");
    for (uint32_t k = 0; k < f->n_ptds; k++) {
        ls_buf_puts(b, k ? ",{\"path\":" : "{\"path\":");
        ls_buf_json_str(b, f->ptd_paths[k]);
        ls_buf_printf(b, ",\"found_beside\":%s}", f->ptd_found[k] ? "true" : "false");
    }
    ls_buf_puts(b, "],\"external_data\":[");
    bool first = true;
    for (uint32_t i = 0; i < f->n_externals; i++) {
        const ls_pte_external *e = &f->externals[i];
        ls_buf_puts(b, first ? "{\"key\":" : ",{\"key\":");
        first = false;
        ls_buf_json_str(b, e->key);
        ls_buf_puts(b, ",\"method\":");
        ls_buf_json_str(b, e->method);
        ls_buf_printf(b, ",\"bytes\":%" PRIu64 ",\"trainable\":%s,\"file\":", e->bytes, e->trainable ? "true" : "false");
        ls_buf_json_str(b, e->ptd >= 0 ? f->ptd_paths[e->ptd] : NULL);
        ls_buf_putc(b, '}');
    }
    ls_buf_putc(b, ']');
}
