/* The pipeline: option parsing shared by the CLI and the TUI, the plan (per-backend rounds),
 * and the run that builds the history. */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "align.h"
#include "export.h"
#include "passes.h"
#include "pte_file.h"
#include "ptrmap.h"
#include "verify.h"

static const ls_pass pass_table[] = {
    {"to_edge", "ATen targets become Edge targets; view ops become _copy ops; linear, matmul, softmax... decomposed",
     false, ls_pass_to_edge},
    {"constant_prop", "calls whose inputs are all constant are folded into _prop_tensor_constantN", false,
     ls_pass_constant_prop},
    {"partition", "tags what the backend supports (CapabilityBasedPartitioner), then its constants and state", true,
     ls_pass_partition},
    {"fold_masks", "constant boolean masks of delegated index.Tensor become int64 positions", true,
     ls_pass_fold_masks},
    {"duplicate_constants", "a constant read by several partitions gets one copy per delegate (PR #24481)", true,
     ls_pass_duplicate_constants},
    {"to_backend", "each tag becomes a lowered submodule called through executorch_call_delegate", true,
     ls_pass_to_backend},
    /* to_executorch (export.h) */
    {"to_out_variant", "calls take their out variants with alloc nodes for the out arguments; mutated buffers are written back by copy_",
     false, ls_pass_to_out_variant},
    {"memory_plan", "tensors get places in one arena: lifetimes from graph order, greedy best fit, 16-byte aligned", false,
     ls_pass_memory_plan},
    {"emit", "the ExecuTorch program: values, one chain of KernelCalls and DelegateCalls, delegates, constants", false,
     ls_pass_emit},
};

const ls_pass *ls_passes(uint32_t *count)
{
    *count = (uint32_t)(sizeof pass_table / sizeof pass_table[0]);
    return pass_table;
}

const ls_pass *ls_pass_find(const char *name)
{
    for (size_t i = 0; i < sizeof pass_table / sizeof pass_table[0]; i++)
        if (strcmp(pass_table[i].name, name) == 0) return &pass_table[i];
    return NULL;
}

void ls_pipeline_opts_init(ls_pipeline_opts *o)
{
    memset(o, 0, sizeof *o);
    o->verify = true;
}

void ls_pipeline_opts_free(ls_pipeline_opts *o)
{
    for (uint32_t i = 0; i < o->n_backends; i++) ls_profile_free(o->backends[i]);
    o->n_backends = 0;
    o->n_passes = 0;
}

static int parse_pipeline(ls_pipeline_opts *o, const char *value, ls_error *err)
{
    o->n_passes = 0;
    const char *p = value;
    while (*p) {
        const char *comma = strchr(p, ',');
        size_t len = comma ? (size_t)(comma - p) : strlen(p);
        char name[64];
        if (len == 0 || len >= sizeof name) return ls_fail(err, "--pipeline: empty or too long pass name in '%s'", value);
        memcpy(name, p, len);
        name[len] = 0;
        const ls_pass *pass = ls_pass_find(name);
        if (!pass) {
            uint32_t n;
            const ls_pass *all = ls_passes(&n);
            char known[256] = "";
            for (uint32_t i = 0; i < n; i++) {
                strncat(known, i ? ", " : "", sizeof known - strlen(known) - 1);
                strncat(known, all[i].name, sizeof known - strlen(known) - 1);
            }
            return ls_fail(err, "--pipeline: unknown pass '%s' (passes: %s)", name, known);
        }
        if (o->n_passes == LS_MAX_PIPELINE) return ls_fail(err, "--pipeline: more than %d passes", LS_MAX_PIPELINE);
        o->passes[o->n_passes++] = pass;
        p += len;
        if (*p == ',') p++;
    }
    if (!o->n_passes) return ls_fail(err, "--pipeline: no pass given");
    return 0;
}

int ls_pipeline_opt(ls_pipeline_opts *o, const char *opt, const char *value, ls_error *err)
{
    if (strcmp(opt, "--relower") == 0) {
        o->relower = true;
        return 1;
    }
    if (strcmp(opt, "--portable") == 0 || (strcmp(opt, "--backend") == 0 && value && strcmp(value, "none") == 0)) {
        /* every op a KernelCall of the portable library: what a stock ExecuTorch runtime runs */
        if (o->n_backends) return ls_fail(err, "%s: no backend at all, yet --backend %s is given too", opt,
                                          o->backends[0]->name);
        o->no_backends = o->chosen = true;
        return 1;
    }
    if (strcmp(opt, "--init-mutable-buffers") == 0) { /* exir's et_init_buffer on every mutated buffer */
        o->init_mutable_buffers = o->chosen = true;
        return 1;
    }
    if (strcmp(opt, "--mutable-buffer-names") == 0) { /* exir's emit_mutable_buffer_names */
        o->mutable_buffer_names = o->chosen = true;
        return 1;
    }
    o->chosen |= strcmp(opt, "--pipeline") == 0 || strcmp(opt, "--backend") == 0 || strcmp(opt, "--memory-planning") == 0;
    if (strcmp(opt, "--pipeline") == 0) {
        if (!value) return ls_fail(err, "--pipeline needs a comma-separated list of passes");
        return parse_pipeline(o, value, err) == 0 ? 1 : -1;
    }
    if (strcmp(opt, "--backend") == 0) {
        if (!value) return ls_fail(err, "--backend needs a profile name (bundled, xnnpack, coreml, ...) or a JSON file");
        if (o->no_backends) return ls_fail(err, "--backend %s: --portable (--backend none) asks for no backend", value);
        if (o->n_backends == LS_MAX_BACKENDS) return ls_fail(err, "--backend: at most %d backends", LS_MAX_BACKENDS);
        ls_profile *p;
        if (ls_profile_load(value, &p, err) != 0) return -1;
        for (uint32_t i = 0; i < o->n_backends; i++)
            if (o->backends[i]->backend_id == p->backend_id && o->backends[i]->tag_prefix == p->tag_prefix &&
                o->backends[i]->name == p->name) {
                ls_profile_free(p);
                return ls_fail(err, "--backend %s: backend %s is given twice", value, o->backends[i]->backend_id);
            }
        o->backends[o->n_backends++] = p;
        return 1;
    }
    if (strcmp(opt, "--memory-planning") == 0) { /* exir's MemoryPlanningPass algorithms */
        if (value && strcmp(value, "greedy") == 0) o->memory_planning = 0;
        else if (value && strcmp(value, "naive") == 0) o->memory_planning = 1;
        else return ls_fail(err, "--memory-planning: greedy (exir's default) or naive, not '%s'", value ? value : "");
        return 1;
    }
    return 0;
}

int ls_pipeline_opts_parse(ls_pipeline_opts *o, int *argc, char **argv, ls_error *err)
{
    int w = 1;
    for (int i = 1; i < *argc; i++) {
        const char *a = argv[i];
        const char *eq = strchr(a, '=');
        char opt[32];
        const char *value;
        bool inline_value = false;
        if (strncmp(a, "--", 2) == 0 && eq && (size_t)(eq - a) < sizeof opt) {
            memcpy(opt, a, (size_t)(eq - a));
            opt[eq - a] = 0;
            value = eq + 1;
            inline_value = true;
        } else {
            snprintf(opt, sizeof opt, "%s", a);
            value = i + 1 < *argc ? argv[i + 1] : NULL;
        }
        if (strcmp(a, "--relower") == 0 || strcmp(a, "--init-mutable-buffers") == 0 ||
            strcmp(a, "--mutable-buffer-names") == 0 || strcmp(a, "--portable") == 0) {
            if (ls_pipeline_opt(o, a, NULL, err) < 0) return -1;
            continue;
        }
        int rc = (strcmp(opt, "--pipeline") == 0 || strcmp(opt, "--backend") == 0 || strcmp(opt, "--memory-planning") == 0)
                     ? ls_pipeline_opt(o, opt, value, err)
                     : 0;
        if (rc < 0) return -1;
        if (rc == 0) {
            argv[w++] = argv[i];
            continue;
        }
        if (!inline_value) i++;
    }
    *argc = w;
    argv[w] = NULL;
    return 0;
}

/* The passes before the partition rounds: to_edge, and constant_prop where a backend's flow
 * runs it (before to_edge in the MLX recipe of PR #24481, on the ATen program). */
static uint32_t flow_passes(const ls_profile *const *profiles, uint32_t nb, const ls_pass **out)
{
    bool before = false, after = false;
    for (uint32_t b = 0; b < nb; b++) {
        bool seen_edge = false;
        for (uint32_t k = 0; k < profiles[b]->n_flow; k++) {
            if (strcmp(profiles[b]->flow[k], "to_edge") == 0) seen_edge = true;
            else if (strcmp(profiles[b]->flow[k], "constant_prop") == 0) {
                if (seen_edge) after = true;
                else before = true;
            }
        }
    }
    uint32_t n = 0;
    if (before) out[n++] = ls_pass_find("constant_prop");
    out[n++] = ls_pass_find("to_edge");
    if (after && !before) out[n++] = ls_pass_find("constant_prop");
    return n;
}

uint32_t ls_pipeline_plan(const ls_pipeline_opts *o, ls_plan_step *steps, uint32_t max)
{
    const ls_profile *bundled = ls_profile_bundled();
    const ls_profile *const *profiles = o->n_backends ? (const ls_profile *const *)o->backends : &bundled;
    uint32_t nb = o->no_backends ? 0 : o->n_backends ? o->n_backends : 1;
    uint32_t n = 0;
#define PLAN(PASS, PROFILE)                                                                                            \
    do {                                                                                                               \
        if (n < max) steps[n] = (ls_plan_step){(PASS), (PROFILE)};                                                     \
        n++;                                                                                                           \
    } while (0)
    if (!o->n_passes) {
        /* ExecuTorch's default flow: to_edge_transform_and_lower(partitioner=[...]) (to_edge,
         * then to_backend once per partitioner: partition, the mask fold of a backend that
         * folds masks, constant duplication, lowering), then to_executorch */
        const ls_pass *pre[3];
        uint32_t np = flow_passes(profiles, nb, pre);
        for (uint32_t i = 0; i < np; i++) PLAN(pre[i], NULL);
        for (uint32_t b = 0; b < nb; b++) {
            PLAN(ls_pass_find("partition"), profiles[b]);
            if (profiles[b]->fold_masks) PLAN(ls_pass_find("fold_masks"), profiles[b]);
            PLAN(ls_pass_find("duplicate_constants"), profiles[b]);
            PLAN(ls_pass_find("to_backend"), profiles[b]);
        }
        PLAN(ls_pass_find("to_out_variant"), NULL);
        PLAN(ls_pass_find("memory_plan"), NULL);
        PLAN(ls_pass_find("emit"), NULL);
        return n;
    }
    for (uint32_t i = 0; i < o->n_passes;) {
        if (!o->passes[i]->per_backend) {
            PLAN(o->passes[i], NULL);
            i++;
            continue;
        }
        uint32_t j = i;
        while (j < o->n_passes && o->passes[j]->per_backend) j++;
        for (uint32_t b = 0; b < nb; b++)
            for (uint32_t k = i; k < j; k++) PLAN(o->passes[k], profiles[b]);
        i = j;
    }
#undef PLAN
    return n;
}

/* The steps are made in an array sized for the whole plan, each named from the start: a
 * reader on another thread (the UI) reads steps[0..n) while the next one is being made. */
static void plan_steps(ls_history *h, const ls_plan_step *plan, uint32_t n)
{
    h->steps = ls_calloc(n + 1, sizeof *h->steps);
    h->n_planned = n + 1;
    h->steps[0].pass = ls_intern("load");
    for (uint32_t i = 0; i < n; i++) {
        h->steps[i + 1].pass = ls_intern(plan[i].pass->name);
        h->steps[i + 1].detail = plan[i].profile ? ls_intern(plan[i].profile->name) : NULL;
    }
}

static void publish(ls_history *h, const ls_pipeline_opts *opts, uint32_t k)
{
    /* a step that left the signature or the data alone holds the step before's tables */
    ls_program_share_tables(h->steps[k].program, k ? h->steps[k - 1].program : NULL);
    if (opts->watch && opts->watch->step_done) opts->watch->step_done(opts->watch->ctx, h, k);
    __atomic_store_n(&h->n, k + 1, __ATOMIC_RELEASE);
}

/* The verifier after a step: the submodules it shares with the step before keep their findings. */
static void verify_step(const ls_pipeline_opts *opts, ls_step *s, const ls_step *before)
{
    if (opts->verify) ls_verify_next(s->program, before->program, &before->verify, &s->verify);
}

bool ls_pipeline_as_held(const ls_program *loaded, const ls_pipeline_opts *opts)
{
    return ls_program_pte_file(loaded) && !opts->relower && !opts->chosen;
}

static void finish(ls_history *h)
{
    __atomic_store_n(&h->n_planned, h->n, __ATOMIC_RELAXED);
    __atomic_store_n(&h->done, true, __ATOMIC_RELEASE);
}

/* Programs a file recorded apart (an ETRecord's members) share no node ids: b's nodes take the
 * ids of a's they match by identity, as `diff --with` matches two files (align.h), the others
 * new ones (*fresh counts them, past every id a step has, its lowered modules' too), and so do
 * the nodes of each lowered module of b that a has too. A lowered module a does not have (a was
 * recorded before to_backend) holds nodes of a's top level, as to_backend's modules hold the
 * nodes they took: its nodes take the ids of a's top-level nodes they match, unless b's top
 * level or another module has that id already (`claimed`), so the UI's compare says a node of a
 * is inside the module that really took it. Then a step's changes, the UI's marks and "was:"
 * lines are by id as after any pass. */
static void match_ids_into(const ls_program *a, ls_program *b, ls_ptrmap *claimed, uint32_t *fresh)
{
    ls_alignment al;
    ls_align_programs(a, b, LS_ALIGN_BY_IDENTITY, &al);
    uint32_t *ids = ls_malloc(sizeof *ids * (b->n_nodes + 1));
    for (uint32_t j = 0; j < b->n_nodes; j++) {
        const ls_align_row *row = &al.v[al.row_of_b[j]];
        uint32_t id = row->a >= 0 ? a->nodes[row->a]->id : 0;
        const void *key = (const void *)(uintptr_t)id;
        if (!id || (claimed && ls_ptrmap_has(claimed, key))) id = (*fresh)++;
        ids[j] = id;
    }
    ls_alignment_free(&al);
    ls_program_renumber(b, ids);
    free(ids);
}

static uint32_t max_id(const ls_program *p)
{
    uint32_t m = p->next_id;
    for (uint32_t k = 0; k < p->n_subs; k++)
        if (p->subs[k].program && max_id(p->subs[k].program) > m) m = max_id(p->subs[k].program);
    return m;
}

static void match_ids_from(const ls_program *a, ls_program *b, uint32_t *fresh)
{
    match_ids_into(a, b, NULL, fresh);
    ls_ptrmap claimed = {0};
    for (uint32_t i = 0; i < b->n_nodes; i++) ls_ptrmap_put(&claimed, (const void *)(uintptr_t)b->nodes[i]->id, 1);
    for (uint32_t k = 0; k < b->n_subs; k++) {
        ls_program *sb = b->subs[k].program;
        if (!sb) continue;
        const ls_submodule *sa = ls_program_sub(a, b->subs[k].name);
        if (sa && sa->program) {
            match_ids_from(sa->program, sb, fresh);
            continue;
        }
        match_ids_into(a, sb, &claimed, fresh);
        for (uint32_t i = 0; i < sb->n_nodes; i++) ls_ptrmap_put(&claimed, (const void *)(uintptr_t)sb->nodes[i]->id, 1);
    }
    ls_ptrmap_free(&claimed);
    if (*fresh > b->next_id) b->next_id = *fresh;
}

static void match_ids(const ls_program *a, ls_program *b)
{
    uint32_t fresh = max_id(a);
    match_ids_from(a, b, &fresh);
}

/* The steps a file recorded (an ETRecord): its programs as they are, in order, the loaded one
 * last, each step's changes by the ids match_ids gives them (once: a second pipeline run on the
 * same file, the UI's :backend, finds them matched). */
static void recorded_steps(ls_program *loaded, const ls_pipeline_opts *opts, ls_history *h)
{
    ls_recorded *r = ls_program_recorded(loaded);
    h->steps = ls_calloc(r->n + 1, sizeof *h->steps);
    h->n_planned = r->n + 1;
    for (uint32_t i = 0; i <= r->n; i++) {
        ls_program *p = i < r->n ? r->programs[i] : loaded;
        ls_step *s = &h->steps[i];
        s->pass = i < r->n ? r->passes[i] : r->pass;
        s->program = ls_program_ref(p);
        ls_report_add(&s->report, NULL, NULL, "the program the %s recorded as `%s`: %u nodes%s", r->source,
                      i < r->n ? r->members[i] : r->member, p->n_nodes,
                      (int32_t)i == r->handles_step ? "; its nodes carry the debug handles the maps name" : "");
        if (!i) {
            ls_verify(s->program, &s->verify);
        } else {
            if (!r->ids_matched) match_ids(h->steps[i - 1].program, p);
            ls_diff_programs(h->steps[i - 1].program, p, &s->changes, &s->n_changes);
            verify_step(opts, s, &h->steps[i - 1]);
        }
        publish(h, opts, i);
    }
    r->ids_matched = true;
    finish(h);
}

int ls_pipeline_run(ls_program *loaded, const ls_pipeline_opts *opts, ls_history *h, ls_error *err)
{
    memset(h, 0, sizeof *h);
    if (!loaded) {
        finish(h);
        return ls_fail(err, "no program to lower");
    }
    h->path = loaded->path;
    if (ls_program_recorded(loaded)) {
        recorded_steps(loaded, opts, h);
        return 0;
    }
    ls_plan_step plan[LS_MAX_PIPELINE * LS_MAX_BACKENDS];
    uint32_t n = ls_pipeline_plan(opts, plan, sizeof plan / sizeof plan[0]);
    if (n > sizeof plan / sizeof plan[0]) {
        finish(h);
        return ls_fail(err, "the pipeline has too many steps (%u)", n);
    }
    const ls_pipeline_watch *w = opts->watch;
    double t_start = ls_now();
    plan_steps(h, plan, n);
    ls_step *s0 = &h->steps[0];
    s0->program = ls_program_ref(loaded);
    /* the loaded program is always verified: a pass assumes a well-formed program (every
     * reference defined, the signature matching the graph), so one the verifier rejects
     * structurally stays at step 0 with its findings */
    ls_verify(s0->program, &s0->verify);
    if (s0->verify.n_structural) {
        h->not_run = ls_internf("the verifier rejects the program's structure (%u error%s)",
                                s0->verify.n_structural, s0->verify.n_structural == 1 ? "" : "s");
        publish(h, opts, 0);
        finish(h);
        return 0;
    }
    if (ls_program_pte_file(loaded)) ls_pte_load_report(loaded, !ls_pipeline_as_held(loaded, opts), &s0->report);
    if (ls_pipeline_as_held(loaded, opts)) { /* a .pte: the program as the file holds it */
        h->as_held = true;
        publish(h, opts, 0);
        finish(h);
        return 0;
    }
    publish(h, opts, 0);
    for (uint32_t i = 0; i < n; i++) {
        if (w && w->stop && __atomic_load_n(w->stop, __ATOMIC_ACQUIRE)) break;
        uint32_t k = i + 1;
        if (w && w->step_begin) w->step_begin(w->ctx, h, k, ls_now() - t_start);
        ls_program *prev = h->steps[k - 1].program;
        ls_step *s = &h->steps[k];
        ls_error perr;
        perr.msg[0] = 0;
        perr.code = LS_ERR_INPUT;
        ls_pass_ctx ctx = {.profile = plan[i].profile, .memory_planning = opts->memory_planning,
                           .init_mutable_buffers = opts->init_mutable_buffers,
                           .mutable_buffer_names = opts->mutable_buffer_names, .report = &s->report, .err = &perr};
        const ls_profile *bundled = ls_profile_bundled();
        ctx.backends = opts->n_backends ? (const ls_profile *const *)opts->backends : &bundled;
        ctx.n_backends = opts->no_backends ? 0 : opts->n_backends ? opts->n_backends : 1;
        ls_program *out = NULL;
        double t0 = ls_now();
        int rc = plan[i].pass->run(prev, &out, &ctx);
        s->seconds = ls_now() - t0;
        if (rc != 0) {
            s->error = ls_strdup(perr.msg[0] ? perr.msg : "failed");
            s->error_kind = (uint8_t)perr.code;
            s->program = ls_program_ref(prev);
            publish(h, opts, k);
            break;
        }
        s->program = out;
        ls_diff_programs(prev, out, &s->changes, &s->n_changes);
        verify_step(opts, s, &h->steps[k - 1]);
        publish(h, opts, k);
    }
    finish(h);
    return 0;
}
