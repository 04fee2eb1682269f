/* duplicate_constants: PR #24481's duplicate_constant_nodes — one pass over every shared
 * constant (exir-semantics §5.4), not one pass per constant and tag.
 *
 * A tagged parameter, buffer or lifted constant read by more than one program is split by
 * program: its users are grouped by tag (untagged users, which stay on the CPU, are one
 * group); the group whose first user comes first in graph order keeps the original; every
 * other group gets one copy `<name>_copy_<k>` of the same kind with a target of its own,
 * placed right before the original, so no program lists a target twice. Untagged constants
 * are passed to the delegates as inputs and never copied, so a graph without tags gets no
 * copies. Mutable buffers are state and are never copied. */
#include <stdlib.h>
#include <string.h>

#include "pass_util.h"
#include "passes.h"

typedef struct group {
    const char *tag;
    uint32_t first; /* index into the users of the constant */
    uint32_t n;
    uint32_t copy_id; /* 0 for the group that keeps the original */
    const char *copy_name;
} group;

typedef LS_VEC(ls_named_tensor) named_vec;
typedef LS_VEC(ls_input_spec) spec_vec;

typedef struct dup {
    ls_program *q;
    ls_sig sig;
    pu_users users;
    pu_map names;   /* node names in use */
    pu_map targets; /* data targets in use */
    ls_node ***copies_before; /* per position: the copies to insert before it */
    uint32_t *n_copies;
    named_vec new_state, new_constants;
    ls_input_spec **specs_before; /* per input spec: the copies' specs */
    uint32_t *n_specs;
    uint32_t total_copies;
    bool output_edited;
} dup;

/* What a node is, as the sentences name it: its op ("add"), or "output". */
static const char *user_kind(const ls_node *n)
{
    if (n->kind == LS_NODE_OUTPUT) return "output";
    return n->op ? ls_op_short(n->op) : ls_target_short(n->target);
}

/* "`tag1` (add, mul)": the group's tag and the ops of its readers, each op once (×k when it reads
 * the constant k times), at most 3 ops named. */
static void describe_group(ls_buf *b, const dup *d, const group *g, const uint32_t *users)
{
    enum { SHOWN = 3 };
    const char *ops[SHOWN];
    uint32_t counts[SHOWN], n_ops = 0, others = 0;
    for (uint32_t k = 0; k < g->n; k++) {
        const char *op = user_kind(d->q->nodes[users[g->first + k]]);
        uint32_t j = 0;
        while (j < n_ops && strcmp(ops[j], op) != 0) j++;
        if (j < n_ops) counts[j]++;
        else if (n_ops < SHOWN) ops[n_ops] = op, counts[n_ops++] = 1;
        else others++;
    }
    if (g->tag) ls_buf_printf(b, "`%s` (", g->tag);
    else ls_buf_puts(b, "the CPU (");
    for (uint32_t j = 0; j < n_ops; j++) {
        ls_buf_printf(b, "%s%s", j ? ", " : "", ops[j]);
        if (counts[j] > 1) ls_buf_printf(b, " ×%u", counts[j]);
    }
    if (others) ls_buf_printf(b, ", %u more", others);
    ls_buf_putc(b, ')');
}

/* Who holds a copy: a tag, quoted as the sentences quote names, or the CPU. */
static void holder(ls_buf *b, const char *tag)
{
    if (tag) ls_buf_printf(b, "`%s`", tag);
    else ls_buf_puts(b, "the CPU");
}

static void report(dup *d, ls_pass_ctx *ctx, const ls_node *ph, const group *gs, uint32_t ng, const uint32_t *users)
{
    ls_buf b = {0};
    ls_buf_printf(&b, "`%s` is read by ", ph->name);
    /* tagged groups first, the CPU last, as one reads "... and by the CPU" */
    uint32_t shown = 0, tagged = 0;
    for (uint32_t k = 0; k < ng; k++) tagged += gs[k].tag != NULL;
    for (uint32_t k = 0; k < ng; k++) {
        if (!gs[k].tag) continue;
        if (shown == 4) {
            ls_buf_printf(&b, ", … (%u tags in all)", tagged);
            break;
        }
        if (shown) ls_buf_puts(&b, shown + 1 == tagged ? " and " : ", ");
        describe_group(&b, d, &gs[k], users);
        shown++;
    }
    for (uint32_t k = 0; k < ng; k++)
        if (!gs[k].tag) {
            ls_buf_puts(&b, tagged ? " and by " : "");
            describe_group(&b, d, &gs[k], users);
        }
    ls_buf_puts(&b, ": ");
    holder(&b, gs[0].tag);
    ls_buf_printf(&b, " keeps `%s`", ph->name);
    for (uint32_t k = 1; k < ng; k++) {
        if (k == 4 && ng > 5) {
            ls_buf_puts(&b, ", … , ");
            holder(&b, gs[ng - 1].tag);
            ls_buf_printf(&b, " gets `%s`", gs[ng - 1].copy_name);
            break;
        }
        ls_buf_puts(&b, ", ");
        holder(&b, gs[k].tag);
        ls_buf_printf(&b, " gets `%s`", gs[k].copy_name);
    }
    char *text = ls_buf_take(&b);
    ls_report_add(ctx->report, NULL, ph->name, "%s", text);
    free(text);
}

/* A copy's name and target: the first k for which both are free. */
static void copy_names(dup *d, const ls_node *ph, const ls_input_spec *s, uint32_t *k, const char **name,
                       const char **target)
{
    char nb[512], tb[512];
    size_t nl = strlen(ph->name), tl = strlen(s->target);
    if (nl > sizeof nb - 24) nl = sizeof nb - 24;
    if (tl > sizeof tb - 24) tl = sizeof tb - 24;
    memcpy(nb, ph->name, nl);
    memcpy(tb, s->target, tl);
    memcpy(nb + nl, "_copy_", 6);
    memcpy(tb + tl, "_copy_", 6);
    for (;; (*k)++) {
        char digits[12];
        size_t dn = 0;
        uint32_t v = *k;
        do digits[dn++] = (char)('0' + v % 10), v /= 10;
        while (v);
        for (size_t i = 0; i < dn; i++) nb[nl + 6 + i] = tb[tl + 6 + i] = digits[dn - 1 - i];
        /* both are new names, so both probes miss the cache at a million nodes: fetched together */
        uint64_t nh = ls_intern_hash(nb, nl + 6 + dn), th = ls_intern_hash(tb, tl + 6 + dn);
        ls_intern_prefetch(nh);
        ls_intern_prefetch(th);
        const char *nm = ls_intern_n_hashed(nb, nl + 6 + dn, nh);
        const char *tg = ls_intern_n_hashed(tb, tl + 6 + dn, th);
        if (pu_map_has(&d->names, nm) || pu_map_has(&d->targets, tg)) continue;
        pu_map_put(&d->names, nm, 1);
        pu_map_put(&d->targets, tg, 1);
        *name = nm;
        *target = tg;
        (*k)++;
        return;
    }
}

static int duplicate(dup *d, ls_pass_ctx *ctx, uint32_t pos, uint32_t spec_ix)
{
    ls_program *q = d->q;
    const ls_node *ph = q->nodes[pos];
    const ls_input_spec *s = &q->inputs[spec_ix];
    const uint32_t *users = d->users.pos + d->users.off[pos];
    uint32_t nu = pu_nusers(&d->users, pos);
    /* group the users by tag, in order of their first user (users come in graph order) */
    pu_map of_tag = {0};
    group *gs = ls_malloc(sizeof *gs * nu);
    uint32_t ng = 0;
    uint32_t *member = ls_malloc(sizeof *member * nu); /* group of each user */
    const void *untagged_key = &of_tag;               /* NULL is not a key */
    for (uint32_t u = 0; u < nu; u++) {
        const char *t = q->nodes[users[u]]->tag;
        uint32_t g;
        if (!pu_map_get(&of_tag, t ? (const void *)t : untagged_key, &g)) {
            g = ng++;
            gs[g] = (group){.tag = t, .first = u};
            pu_map_put(&of_tag, t ? (const void *)t : untagged_key, g);
        }
        member[u] = g;
        gs[g].n++;
    }
    pu_map_free(&of_tag);
    int rc = 0;
    if (ng > 1 && ph->no_copy) {
        /* exir's _maybe_duplicate_constant_nodes refuses to copy a no_copy constant */
        for (uint32_t u = 0; u < nu; u++)
            if (q->nodes[users[u]]->tag != ph->tag) {
                rc = ls_fail(ctx->err, "constant data node (%s) is tagged with (%s) but has user (%s) which has tag (%s)",
                             ph->name, pu_tag_text(ph->tag), q->nodes[users[u]]->name,
                             pu_tag_text(q->nodes[users[u]]->tag));
                break;
            }
    }
    if (ng > 1 && rc == 0) {
        /* users listed in group order for the report */
        uint32_t *sorted = ls_malloc(sizeof *sorted * nu);
        uint32_t *fill = ls_calloc(ng + 1, sizeof *fill);
        for (uint32_t g = 0; g < ng; g++) fill[g + 1] = fill[g] + gs[g].n;
        for (uint32_t g = 0; g < ng; g++) gs[g].first = fill[g];
        for (uint32_t u = 0; u < nu; u++) sorted[fill[member[u]]++] = users[u];
        free(fill);
        const ls_named_tensor *data = ls_sig_data(&d->sig, q, s);
        bool in_state = ls_input_in_state(s->kind, s->persistent);
        uint32_t k = 0;
        d->copies_before[pos] = ls_malloc(sizeof **d->copies_before * (ng - 1));
        d->specs_before[spec_ix] = ls_malloc(sizeof **d->specs_before * (ng - 1));
        for (uint32_t g = 1; g < ng; g++) {
            const char *name, *target;
            copy_names(d, ph, s, &k, &name, &target);
            ls_node *c = ls_node_clone(ph);
            c->id = q->next_id++;
            c->name = name;
            c->target = name;
            c->tag = gs[g].tag;
            c->no_copy = false;
            gs[g].copy_id = c->id;
            gs[g].copy_name = name;
            d->copies_before[pos][d->n_copies[pos]++] = c;
            ls_input_spec cs = *s;
            cs.name = name;
            cs.target = target;
            memset(&cs.value, 0, sizeof cs.value);
            d->specs_before[spec_ix][d->n_specs[spec_ix]++] = cs;
            /* the same bytes under the copy's own target (shared by reference, not copied) */
            static const ls_tmeta no_meta;
            const ls_tmeta *meta = ls_node_tval(ph) ? ls_node_tval(ph) : &no_meta;
            ls_named_tensor e = {.name = target, .t = ls_tensor_ref(data ? data->t : NULL),
                                 .meta = data ? data->meta : ls_tmeta_intern(meta, 1)};
            if (in_state) ls_vec_push(&d->new_state, e);
            else ls_vec_push(&d->new_constants, e);
            for (uint32_t u = gs[g].first; u < gs[g].first + gs[g].n; u++) {
                ls_node *e2 = pu_edit(q, sorted[u]);
                ls_node_replace_input(e2, ph->id, c->id);
                if (e2->kind == LS_NODE_OUTPUT) d->output_edited = true;
            }
            d->total_copies++;
        }
        report(d, ctx, ph, gs, ng, sorted);
        if (ph->tag != gs[0].tag) pu_edit(q, pos)->tag = gs[0].tag; /* the original follows the first group */
        free(sorted);
    }
    free(member);
    free(gs);
    return rc;
}

/* A name the copies' names could equal: "..._copy_<digits>". */
static bool copy_like(const char *name)
{
    if (!name) return false;
    size_t len = strlen(name), k = len;
    while (k > 0 && name[k - 1] >= '0' && name[k - 1] <= '9') k--;
    return k < len && k >= 6 && memcmp(name + k - 6, "_copy_", 6) == 0;
}

/* Room for every copy the pass could make (each reader of a shared constant but the first),
 * so the new data entries are not moved while they are added. */
static void reserve_copies(dup *d)
{
    const ls_program *q = d->q;
    uint32_t in_state = 0, in_const = 0;
    for (uint32_t i = 0; i < q->n_nodes; i++) {
        const ls_node *ph = q->nodes[i];
        uint32_t nu = pu_nusers(&d->users, i), spec_ix;
        if (ph->kind != LS_NODE_PLACEHOLDER || !ph->tag || nu < 2 || !pu_map_get(&d->sig.spec_of, ph->name, &spec_ix))
            continue;
        const ls_input_spec *s = &q->inputs[spec_ix];
        if (ls_input_in_state(s->kind, s->persistent)) in_state += nu - 1;
        else in_const += nu - 1;
    }
    ls_vec_reserve(&d->new_state, in_state);
    ls_vec_reserve(&d->new_constants, in_const);
    uint32_t copies = in_state + in_const < q->n_nodes ? in_state + in_const : q->n_nodes;
    pu_map_reserve(&d->names, d->names.used + copies);
    pu_map_reserve(&d->targets, d->targets.used + copies);
}

int ls_pass_duplicate_constants(const ls_program *in, ls_program **out, ls_pass_ctx *ctx)
{
    dup d = {0};
    d.q = ls_program_copy(in);
    ls_program *q = d.q;
    uint32_t n = q->n_nodes;
    ls_sig_build(&d.sig, q);
    pu_users_take(&d.users, q);
    /* only names ending in "_copy_<digits>" can clash with the copies' names */
    for (uint32_t i = 0; i < n; i++)
        if (copy_like(q->nodes[i]->name)) pu_map_put(&d.names, q->nodes[i]->name, 1);
    for (uint32_t i = 0; i < q->n_state; i++)
        if (copy_like(q->state_dict[i].name)) pu_map_put(&d.targets, q->state_dict[i].name, 1);
    for (uint32_t i = 0; i < q->n_constants; i++)
        if (copy_like(q->constants[i].name)) pu_map_put(&d.targets, q->constants[i].name, 1);
    for (uint32_t i = 0; i < q->n_inputs; i++)
        if (copy_like(q->inputs[i].target)) pu_map_put(&d.targets, q->inputs[i].target, 1);
    reserve_copies(&d);
    d.copies_before = ls_calloc(n ? n : 1, sizeof *d.copies_before);
    d.n_copies = ls_calloc(n ? n : 1, sizeof *d.n_copies);
    d.specs_before = ls_calloc(q->n_inputs ? q->n_inputs : 1, sizeof *d.specs_before);
    d.n_specs = ls_calloc(q->n_inputs ? q->n_inputs : 1, sizeof *d.n_specs);
    int rc = 0;
    uint32_t skipped_state = 0;
    for (uint32_t i = 0; i < n && rc == 0; i++) {
        const ls_node *ph = q->nodes[i];
        if (ph->kind != LS_NODE_PLACEHOLDER || !ph->tag || pu_nusers(&d.users, i) < 2) continue;
        uint32_t spec_ix;
        if (!pu_map_get(&d.sig.spec_of, ph->name, &spec_ix)) continue;
        const ls_input_spec *s = &q->inputs[spec_ix];
        if (!ls_input_kind_holds_data(s->kind)) {
            rc = ls_fail(ctx->err, "placeholder node for non-params, non-buffer, and non-tensor constants should not be tagged: %s ",
                         ph->name);
            break;
        }
        bool crosses = false;
        for (uint32_t u = d.users.off[i]; u < d.users.off[i + 1] && !crosses; u++)
            crosses = q->nodes[d.users.pos[u]]->tag != ph->tag;
        if (!crosses) continue;
        if (ls_sig_is_mutated(&d.sig, s)) {
            ls_report_add(ctx->report, NULL, ph->name,
                          "`%s` is a mutable buffer read by several partitions: not copied (copies of state would "
                          "diverge)",
                          ph->name);
            skipped_state++;
            continue;
        }
        rc = duplicate(&d, ctx, i, spec_ix);
    }
    if (rc == 0 && d.total_copies) {
        /* one rebuild of the node array, the signature and the data tables */
        ls_node **nodes = ls_malloc(sizeof *nodes * (n + d.total_copies));
        uint32_t m = 0;
        for (uint32_t i = 0; i < n; i++) {
            for (uint32_t c = 0; c < d.n_copies[i]; c++) nodes[m++] = d.copies_before[i][c];
            nodes[m++] = ls_node_ref(q->nodes[i]);
        }
        ls_program_set_nodes(q, nodes, m);
        free(nodes);
        spec_vec specs = {0};
        for (uint32_t i = 0; i < q->n_inputs; i++) {
            for (uint32_t c = 0; c < d.n_specs[i]; c++) ls_vec_push(&specs, d.specs_before[i][c]);
            ls_vec_push(&specs, q->inputs[i]);
        }
        ls_program_set_inputs(q, specs.v, specs.n);
        free(specs.v);
        if (d.new_state.n) {
            q->state_dict = ls_realloc(q->state_dict, sizeof *q->state_dict * (q->n_state + d.new_state.n));
            memcpy(q->state_dict + q->n_state, d.new_state.v, sizeof *d.new_state.v * d.new_state.n);
            q->n_state += d.new_state.n;
        }
        if (d.new_constants.n) {
            q->constants = ls_realloc(q->constants, sizeof *q->constants * (q->n_constants + d.new_constants.n));
            memcpy(q->constants + q->n_constants, d.new_constants.v, sizeof *d.new_constants.v * d.new_constants.n);
            q->n_constants += d.new_constants.n;
        }
        d.new_state.n = d.new_constants.n = 0;
        if (d.output_edited) {
            /* an output read a constant that now has a copy: the spec names follow */
            const ls_node *o = ls_program_output(q);
            for (uint32_t i = 0; o && i < o->nargs && i < q->n_outputs; i++)
                if (o->args[i].kind == LS_ARG_NODE) {
                    const ls_node *v = ls_program_node(q, o->args[i].v.node);
                    if (v) q->outputs[i].name = v->name;
                }
        }
    }
    ls_program_touch(q);
    if (rc == 0 && !d.total_copies && !skipped_state)
        ls_report_add(ctx->report, NULL, NULL, "no tagged constant is read by more than one program: nothing to copy");
    for (uint32_t i = 0; i < n; i++) {
        if (rc != 0)
            for (uint32_t c = 0; c < d.n_copies[i]; c++) ls_node_unref(d.copies_before[i][c]);
        free(d.copies_before[i]);
    }
    for (uint32_t i = 0; i < in->n_inputs; i++) free(d.specs_before[i]);
    for (uint32_t i = 0; i < d.new_state.n; i++) ls_tensor_unref(d.new_state.v[i].t);
    for (uint32_t i = 0; i < d.new_constants.n; i++) ls_tensor_unref(d.new_constants.v[i].t);
    free(d.new_state.v);
    free(d.new_constants.v);
    free(d.copies_before);
    free(d.n_copies);
    free(d.specs_before);
    free(d.n_specs);
    pu_map_free(&d.names);
    pu_map_free(&d.targets);
    pu_users_free(&d.users);
    ls_sig_free(&d.sig);
    if (rc != 0) {
        ls_program_unref(q);
        return -1;
    }
    *out = q;
    return 0;
}
