/* Export: the program of a step written as an ExecuTorch .pte (the step's emitted program, or
 * the step run through to_out_variant, memory_plan and emit first) or as a .pt2 archive; what
 * was written, for the export command and the UI. */
#include <errno.h>
#include <inttypes.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

#include "export.h"
#include "export_internal.h"
#include "pte_check.h"
#include "pte_file.h"

void ls_export_summary_free(ls_export_summary *s)
{
    if (!s) return;
    free(s->segments);
    free(s->delegates);
    free(s->needs);
    s->segments = NULL;
    s->delegates = NULL;
    s->needs = NULL;
    s->n_segments = s->n_delegates = s->n_needs = 0;
}

static bool ends_with(const char *s, const char *suffix)
{
    size_t n = strlen(s), m = strlen(suffix);
    return n >= m && strcmp(s + n - m, suffix) == 0;
}

/* The emitted program of p: its own, or one made by running the to_executorch steps on it. */
static int emitted(const ls_program *p, const ls_export_opts *o, ls_program **keep, const ls_pte **pte,
                   ls_emit_summary *es, bool *ran, bool *ran_edge, ls_error *err)
{
    *keep = NULL;
    *ran = *ran_edge = false;
    *pte = ls_program_emitted(p, es);
    if (*pte) return 0;
    *ran = true;
    static const struct {
        const char *name;
        ls_pass_fn fn;
    } steps[] = {{"to_edge", ls_pass_to_edge},
                 {"to_out_variant", ls_pass_to_out_variant},
                 {"memory_plan", ls_pass_memory_plan},
                 {"emit", ls_pass_emit}};
    ls_program *cur = ls_program_ref((ls_program *)p);
    for (size_t i = 0; i < sizeof steps / sizeof steps[0]; i++) {
        /* exir's to_executorch takes an Edge program: an ATen one goes through to_edge first */
        if (i == 0 && cur->dialect != LS_DIALECT_ATEN) continue;
        if (i < 3 && ls_program_mem_plan(cur)) continue; /* planned already: to_out_variant ran */
        if (i == 0) *ran_edge = true;
        ls_report rep = {0};
        ls_error e2;
        e2.msg[0] = 0;
        e2.code = LS_ERR_INPUT;
        ls_pass_ctx ctx = {.memory_planning = o->memory_planning, .init_mutable_buffers = o->init_mutable_buffers,
                           .mutable_buffer_names = o->mutable_buffer_names, .report = &rep, .err = &e2};
        ls_program *next = NULL;
        int rc = steps[i].fn(cur, &next, &ctx);
        ls_report_free(&rep);
        ls_program_unref(cur);
        if (rc != 0) { /* its kind kept (a need: exit 3), its name once (emit's messages start "emit: ") */
            size_t nl = strlen(steps[i].name);
            bool named = !strncmp(e2.msg, steps[i].name, nl) && e2.msg[nl] == ':';
            return ls_fail_kind(err, e2.code, "%s%s%s", named ? "" : steps[i].name, named ? "" : ": ", e2.msg);
        }
        cur = next;
    }
    *keep = cur;
    *pte = ls_program_emitted(cur, es);
    return *pte ? 0 : ls_fail(err, "emit made no program");
}

static void describe_pte(const ls_pte *pte, uint32_t plan, ls_export_summary *s)
{
    s->n_segments = pte->n_segment_data;
    s->segments = ls_calloc(s->n_segments ? s->n_segments : 1, sizeof *s->segments);
    for (uint32_t i = 0; i < pte->n_segment_data; i++) {
        s->segments[i].bytes = pte->segment_data[i].n;
        s->segments[i].what = ls_intern("data");
    }
    if (pte->has_constant_segment && pte->constant_segment.segment_index < s->n_segments)
        s->segments[pte->constant_segment.segment_index].what = ls_intern("constants");
    for (uint32_t i = 0; i < pte->mutable_data_segments.n; i++)
        if (pte->mutable_data_segments.v[i].segment_index < s->n_segments)
            s->segments[pte->mutable_data_segments.v[i].segment_index].what = ls_intern("mutable data");
    const ls_pte_plan *pl = plan < pte->execution_plan.n ? &pte->execution_plan.v[plan] : NULL;
    s->method = ls_intern(pl && pl->name ? pl->name : "forward");
    for (uint32_t k = 0; k < pte->execution_plan.n; k++)
        for (uint32_t i = 0; i < pte->execution_plan.v[k].values.n; i++) {
            const ls_pte_value *v = &pte->execution_plan.v[k].values.v[i];
            s->external_tensors += v->kind == LS_PTE_VAL_TENSOR && v->tensor.has_extra_tensor_info &&
                                   v->tensor.extra_tensor_info.location == LS_PTE_TENSOR_EXTERNAL;
        }
    s->n_delegates = pl ? pl->delegates.n : 0;
    s->delegates = ls_calloc(s->n_delegates ? s->n_delegates : 1, sizeof *s->delegates);
    for (uint32_t d = 0; d < s->n_delegates; d++) {
        const ls_pte_delegate *dl = &pl->delegates.v[d];
        s->delegates[d].backend_id = ls_intern(dl->id ? dl->id : "?");
        s->delegates[d].segment = dl->processed.index;
        if (dl->processed.location == LS_PTE_SEGMENT && dl->processed.index < s->n_segments) {
            s->delegates[d].bytes = s->segments[dl->processed.index].bytes;
            s->segments[dl->processed.index].what = ls_internf("delegate %u (%s)", d, s->delegates[d].backend_id);
        }
    }
}

/* What ls_emit_summary says, for execution plan `plan` of a file written back as read. */
static void summarize_plan(const ls_pte *pte, uint32_t plan, ls_emit_summary *e)
{
    memset(e, 0, sizeof *e);
    if (plan >= pte->execution_plan.n) return;
    const ls_pte_plan *pl = &pte->execution_plan.v[plan];
    e->values = pl->values.n;
    e->operators = pl->operators.n;
    e->delegates = pl->delegates.n;
    for (uint32_t c = 0; c < pl->chains.n; c++)
        for (uint32_t i = 0; i < pl->chains.v[c].instructions.n; i++) {
            e->instructions++;
            e->kernel_calls += pl->chains.v[c].instructions.v[i].kind == LS_PTE_KERNEL_CALL;
            e->delegate_calls += pl->chains.v[c].instructions.v[i].kind == LS_PTE_DELEGATE_CALL;
        }
    for (uint32_t i = 1; i < pl->non_const_buffer_sizes.n; i++)
        if (pl->non_const_buffer_sizes.v[i] > 0) e->arena += (uint64_t)pl->non_const_buffer_sizes.v[i];
    for (uint32_t i = 0; i < pl->values.n; i++) {
        const ls_pte_value *v = &pl->values.v[i];
        if (v->kind != LS_PTE_VAL_TENSOR) continue;
        uint64_t nb = 0;
        if (v->tensor.has_allocation_info && ls_pte_tensor_nbytes(&v->tensor, &nb, NULL) == 0) {
            e->planned_tensors++;
            e->tensor_bytes += nb;
        }
    }
    const ls_pte_subsegments *cs = &pte->constant_segment;
    if (pte->has_constant_segment && cs->offsets.n > 1) {
        e->constants = cs->offsets.n - 1;
        if (cs->segment_index < pte->n_segment_data) e->constant_bytes = pte->segment_data[cs->segment_index].n;
    } else if (pte->constant_buffer.n > 1) {
        e->constants = pte->constant_buffer.n - 1;
        for (uint32_t i = 1; i < pte->constant_buffer.n; i++) e->constant_bytes += pte->constant_buffer.v[i].storage.n;
    }
    for (uint32_t i = 0; i < pte->n_segment_data; i++) e->segments += pte->segment_data[i].n > 0;
}

/* The runtime's load checks on the program about to be written: a failure is lowerscope's bug,
 * reported and nothing written (a file written back as read is the user's: written as it was);
 * the needs go into the summary. */
static int loads_in_executorch(const ls_pte *pte, bool refuse, ls_export_summary *s, ls_error *err)
{
    ls_pte_check_report r;
    if (ls_pte_runtime_check(pte, &r) != 0 && refuse) {
        const ls_pte_issue *f = NULL;
        for (uint32_t i = 0; i < r.n && !f; i++)
            if (r.v[i].kind == LS_PTE_FAILS) f = &r.v[i];
        int rc = ls_fail(err, "ExecuTorch's runtime would refuse the program (%u error%s, nothing was written): %s: %s [%s]",
                         r.n_fails, r.n_fails == 1 ? "" : "s", f ? f->where : "?", f ? f->msg : "?", f ? f->rule : "?");
        ls_pte_check_report_free(&r);
        return rc;
    }
    s->needs = ls_calloc(r.n ? r.n : 1, sizeof *s->needs);
    for (uint32_t i = 0; i < r.n; i++) {
        const ls_pte_issue *is = &r.v[i];
        bool backend = is->kind == LS_PTE_NEEDS_BACKEND;
        bool dup = false;
        for (uint32_t k = 0; k < s->n_needs && !dup; k++) dup = s->needs[k].name == is->name; /* a few per file */
        if (dup || is->kind == LS_PTE_FAILS) continue;
        s->needs[s->n_needs++] = (ls_export_need){backend, is->name, is->library,
                                                  backend ? is->library != NULL : ls_et_library_is_stock(is->library),
                                                  backend && !is->library && ls_et_backend_is_stock(is->name)};
    }
    ls_pte_check_report_free(&r);
    return 0;
}

/* What the written file reads from the .ptd files the program was opened with: its EXTERNAL
 * tensors (counted by describe_pte) and the named data of the .ptd files that is not one. */
static void data_files(const ls_pte_file *f, ls_export_summary *s)
{
    if (!f) return;
    for (uint32_t i = 0; i < f->n_named; i++)
        s->external_keys += f->named[i].ptd >= 0 && !ls_pte_file_is_external(f, f->named[i].key);
    if (!s->external_tensors && !s->external_keys) return;
    ls_buf b = {0};
    for (uint32_t i = 0; i < f->n_ptds; i++) {
        const char *slash = strrchr(f->ptd_paths[i], '/');
        ls_buf_printf(&b, "%s%s", i ? ", " : "", slash ? slash + 1 : f->ptd_paths[i]);
    }
    s->data_files = b.s ? ls_intern(b.s) : NULL;
    ls_buf_free(&b);
}

/* "prefill_forward and 27 constant methods" (the file's methods but m), or NULL: none. */
static const char *kept_text(const ls_pte_file *f, const ls_pte_method *m)
{
    uint32_t run = 0, constant = 0;
    const char *one = NULL;
    for (uint32_t i = 0; i < f->n_methods; i++) {
        if (&f->methods[i] == m) continue;
        if (f->methods[i].kind == LS_PTE_METHOD_CONSTANT) constant++;
        else if (!run++) one = f->methods[i].name;
    }
    if (!run && !constant) return NULL;
    ls_buf b = {0};
    if (run == 1) ls_buf_printf(&b, "%s", one);
    else if (run) ls_buf_printf(&b, "%u methods", run);
    if (constant) ls_buf_printf(&b, "%s%u constant method%s", run ? " and " : "", constant, constant == 1 ? "" : "s");
    const char *t = ls_intern(b.s);
    ls_buf_free(&b);
    return t;
}

/* Before any work: what ls_write_file would refuse at the end (it checks again, with no race). */
static int refuse_existing(const char *path, bool force, ls_error *err)
{
    struct stat st;
    if (stat(path, &st) != 0) return 0;
    if (S_ISDIR(st.st_mode)) return ls_fail(err, "%s is a folder: give a file name", path);
    if (!S_ISREG(st.st_mode))
        return ls_fail(err, "%s is not a regular file (a device, a FIFO, ...): lowerscope writes only files, even with "
                            "--force (nothing was written)", path);
    if (!force) return ls_fail(err, "%s exists: give --force to replace it (nothing was written)", path);
    return 0;
}

int ls_export_program(const ls_program *p, const char *path, bool force, ls_export_summary *sum, ls_error *err)
{
    ls_export_opts o = {.force = force};
    return ls_export_program_with(p, path, &o, sum, err);
}

int ls_export_program_with(const ls_program *p, const char *path, const ls_export_opts *opts, ls_export_summary *sum,
                           ls_error *err)
{
    ls_export_opts defaults = {0};
    if (!opts) opts = &defaults;
    bool force = opts->force;
    ls_export_summary local;
    ls_export_summary *s = sum ? sum : &local;
    memset(s, 0, sizeof *s);
    s->step = -1;
    s->path = ls_intern(path);
    s->pt2 = ends_with(path, ".pt2");
    if (refuse_existing(path, force, err) != 0) return -1;
    int rc;
    unsigned flags = force ? LS_WRITE_REPLACE : 0;
    if (s->pt2) {
        uint8_t *bytes;
        size_t size;
        rc = ls_pt2_bytes(p, path, &bytes, &size, err);
        if (rc == 0) {
            rc = ls_write_file(path, bytes, size, flags, err);
            free(bytes);
            s->bytes = size;
        }
    } else {
        ls_program *keep = NULL;
        const ls_pte *pte;
        ls_pte merged;
        bool have_merged = false;
        uint32_t plan = 0;
        /* a .pte's program as read: the file goes back as it was (every method, named data,
         * external references, blobs, compile specs, its segments' layout) */
        ls_pte_file *f = p->as_read ? ls_program_pte_file(p) : NULL;
        if (f) {
            pte = &f->pte;
            const ls_pte_method *m = p->method ? ls_pte_file_find_method(f, p->method) : NULL;
            plan = m ? m->plan : 0;
            summarize_plan(pte, plan, &s->emit);
            ls_buf mb = {0};
            ls_pte_file_methods_text(f, &mb);
            s->as_read = ls_intern(mb.s ? mb.s : "");
            ls_buf_free(&mb);
            rc = 0;
        } else {
            rc = emitted(p, opts, &keep, &pte, &s->emit, &s->ran_to_executorch, &s->ran_to_edge, err);
            /* a method of a .pte re-lowered: it replaces its plan in the file, the rest stays */
            ls_pte_file *from = ls_program_pte_file(p);
            const ls_pte_method *m = from && p->method ? ls_pte_file_find_method(from, p->method) : NULL;
            if (rc == 0 && m) {
                rc = lsx_pte_merge(&from->pte, m->plan, pte, &merged, err);
                if (rc == 0) {
                    pte = &merged;
                    plan = m->plan;
                    have_merged = true;
                    s->kept = kept_text(from, m);
                }
            }
        }
        if (rc != 0) {
            ls_fail_prefix(err, "%s", path);
        } else {
            uint8_t *bytes = NULL;
            size_t size = 0;
            rc = loads_in_executorch(pte, !f, s, err);
            if (rc == 0) rc = ls_pte_write(pte, &bytes, &size, err);
            if (rc == 0) {
                rc = ls_write_file(path, bytes, size, flags, err);
                free(bytes);
                s->bytes = size;
            } else {
                ls_fail_prefix(err, "%s", path);
            }
            if (rc == 0) {
                describe_pte(pte, plan, s);
                data_files(ls_program_pte_file(p), s);
            }
            if (rc == 0 && f) s->emit.file_bytes = size;
        }
        if (have_merged) lsx_pte_merged_free(&merged);
        ls_program_unref(keep);
    }
    if (!sum || rc != 0) ls_export_summary_free(s);
    return rc;
}

int ls_export(const ls_history *h, int step, const char *path, bool force, ls_export_summary *sum, ls_error *err)
{
    ls_export_opts o = {.force = force};
    return ls_export_with(h, step, path, &o, sum, err);
}

int ls_export_with(const ls_history *h, int step, const char *path, const ls_export_opts *o, ls_export_summary *sum,
                   ls_error *err)
{
    if (!h || !h->n) return ls_fail(err, "nothing to export: no program is loaded");
    if (step < 0) step = (int)h->n - 1;
    if ((uint32_t)step >= h->n) return ls_fail(err, "step %d does not exist (steps 0 to %u)", step, h->n - 1);
    const ls_step *st = &h->steps[step];
    if (h->not_run) return ls_fail(err, "%s: step 0 load: no pass ran: %s, so there is nothing to export", h->path ? h->path : "the program", h->not_run);
    if (st->error) { /* a step that failed for a need (weights the load left out) stays one: exit 3 */
        return ls_fail_kind(err, st->error_kind == LS_ERR_NEEDS ? LS_ERR_NEEDS : LS_ERR_INPUT,
                            "%s: step %d %s failed (%s): export an earlier step", h->path ? h->path : "the program", step,
                            st->pass, st->error);
    }
    /* a step torch.export's JSON cannot hold: the message says which step */
    if (ends_with(path, ".pt2") && ls_pt2_expressible(st->program, err) != 0)
        return ls_fail_prefix(err, "%s: step %d %s", path, step, st->pass);
    int rc = ls_export_program_with(st->program, path, o, sum, err);
    if (rc == 0 && sum) {
        sum->step = step;
        sum->pass = st->pass;
    }
    return rc;
}

void ls_export_summary_text(const ls_export_summary *s, ls_buf *b)
{
    char sz[32];
    ls_fmt_bytes(s->bytes, sz, sizeof sz);
    ls_buf_printf(b, "wrote %s: %s, %s", s->path, sz, s->pt2 ? ".pt2 archive (torch.export)" : "ExecuTorch program (ET12)");
    if (s->step >= 0) ls_buf_printf(b, " of step %d %s", s->step, s->pass ? s->pass : "");
    ls_buf_putc(b, '\n');
    if (s->pt2) return;
    if (s->as_read) ls_buf_printf(b, "  kept      the file as read: %s, named data, blobs and layout\n", s->as_read);
    if (s->kept) ls_buf_printf(b, "  kept      %s as the file holds %s, and its named data\n", s->kept, strchr(s->kept, ' ') ? "them" : "it");
    if (s->ran_to_executorch)
        ls_buf_printf(b, "  steps     %sto_out_variant, memory_plan and emit ran for the export\n",
                      s->ran_to_edge ? "to_edge, " : "");
    const ls_emit_summary *e = &s->emit;
    ls_buf_printf(b, "  plan      %s: %u values, %u instruction%s (%u KernelCall%s, %u DelegateCall%s), %u operator%s\n",
                  s->method ? s->method : "forward", e->values, e->instructions, e->instructions == 1 ? "" : "s", e->kernel_calls,
                  e->kernel_calls == 1 ? "" : "s", e->delegate_calls, e->delegate_calls == 1 ? "" : "s", e->operators,
                  e->operators == 1 ? "" : "s");
    ls_buf_printf(b, "  segments  %u:", s->n_segments);
    for (uint32_t i = 0; i < s->n_segments; i++) {
        ls_fmt_bytes(s->segments[i].bytes, sz, sizeof sz);
        ls_buf_printf(b, "%s %s %s", i ? " ·" : "", s->segments[i].what, sz);
    }
    ls_buf_putc(b, '\n');
    ls_buf_printf(b, "  delegates %u", s->n_delegates);
    for (uint32_t d = 0; d < s->n_delegates; d++) {
        ls_fmt_bytes(s->delegates[d].bytes, sz, sizeof sz);
        ls_buf_printf(b, "%s %s (%s in segment %u)", d ? " ·" : ":", s->delegates[d].backend_id, sz, s->delegates[d].segment);
    }
    ls_buf_putc(b, '\n');
    ls_buf_printf(b, "  constants %u (", e->constants);
    ls_fmt_bytes(e->constant_bytes, sz, sizeof sz);
    ls_buf_printf(b, "%s)\n", sz);
    ls_buf_printf(b, "  arena     %" PRIu64 " bytes for %" PRIu64 " bytes of tensors (%u tensor%s)\n", e->arena,
                  e->tensor_bytes, e->planned_tensors, e->planned_tensors == 1 ? "" : "s");
    if (e->buffers_unwritten)
        ls_buf_printf(b, "  warning   buffer `%s`%s starts not all zero in the program; the file holds no starting value, "
                         "so ExecuTorch's runtime starts it as planned memory is (--init-mutable-buffers writes it)\n",
                      e->buffer_unwritten ? e->buffer_unwritten : "?",
                      e->buffers_unwritten > 1 ? ls_internf(" and %u more", e->buffers_unwritten - 1) : "");
    if (s->external_tensors || s->external_keys) {
        ls_buf_printf(b, "  needs     data by key from a .ptd (");
        if (s->external_tensors) ls_buf_printf(b, "%u tensor%s", s->external_tensors, s->external_tensors == 1 ? "" : "s");
        if (s->external_keys)
            ls_buf_printf(b, "%s%u named data entr%s", s->external_tensors ? ", " : "", s->external_keys,
                          s->external_keys == 1 ? "y" : "ies");
        ls_buf_printf(b, "): %s%s\n", s->data_files ? s->data_files : "no .ptd was given",
                      s->data_files ? ", given with --data or beside the file" : "");
    }
    for (uint32_t i = 0; i < s->n_needs; i++) {
        const ls_export_need *nd = &s->needs[i];
        if (nd->backend && nd->stand_in)
            ls_buf_printf(b, "  needs     backend %s, but its blob is lowerscope's bundled format standing in for it, which "
                             "ExecuTorch's %s does not read: only lowerscope runs the file (--portable lowers for "
                             "portable kernels only)\n", nd->name, nd->name);
        else if (nd->backend)
            ls_buf_printf(b, "  needs     backend %s%s\n", nd->name,
                          nd->stock ? " (ExecuTorch ships it: the runtime must link it)"
                                    : ", which ExecuTorch does not ship: a stock runtime refuses the file (--portable "
                                      "lowers for portable kernels only)");
        else
            ls_buf_printf(b, "  needs     kernel %s from library %s\n", nd->name, nd->library ? nd->library : "?");
    }
}
