/* partition: one round of partitioning for one backend, as ExecuTorch's partitioners do it:
 * which nodes the backend takes (its profile: ops, dtypes, rules; rules.c), grouped and
 * numbered by the partitioner the profile names (torch's CapabilityBasedPartitioner,
 * partition_capability.c, or ExecuTorch's GroupBasedPartitioner with XNNPACK's node groups,
 * partition_group.c), then tag_constant_data and, for a backend with state, tag_mutated_buffer
 * (partition_data.c). Every compute node left on the CPU records why, naming the rule that
 * refused it. A profile with lower_full_graph fails the step when anything stays out, as
 * CoreMLPartitioner raises. */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "delegation.h"
#include "partition_internal.h"

/* ---- masks: what fold_masks can fold (exir-semantics §8.4) */

static bool mask_values(const pt_round *r, const ls_node *m, int64_t *trues, const char **detail)
{
    const ls_input_spec *s = ls_sig_spec(&r->sig, r->q, m);
    const ls_named_tensor *d = ls_sig_data(&r->sig, r->q, s);
    if (!d || !d->t) {
        *detail = "the mask's values are not loaded";
        return false;
    }
    *trues = 0;
    for (int64_t i = 0; i < d->t->numel; i++) *trues += ls_tensor_get_i64(d->t, i) != 0;
    return true;
}

/* exir-semantics §8.4: which boolean masks the backend may fold to their positions. */
static ls_cpu_reason check_mask(const pt_round *r, const ls_node *n, uint32_t *mask_id, const char **detail)
{
    *mask_id = 0;
    if (n->nargs < 2 || n->args[1].kind != LS_ARG_OPT_NODES) return LS_WHY_NONE;
    const ls_arg *ix = &n->args[1];
    uint32_t given = 0;
    for (uint32_t k = 0; k < ix->n; k++) {
        if (!ix->v.nodes[k]) continue;
        given++;
        const ls_tmeta *m = ls_node_tval(pt_producer(r, ix->v.nodes[k]));
        if (m && m->dtype == LS_DT_BOOL && !*mask_id) *mask_id = ix->v.nodes[k];
    }
    if (!*mask_id) return LS_WHY_NONE;
    const ls_node *m = pt_producer(r, *mask_id);
    if (given > 1) return LS_WHY_MASK_OTHER_INDEX;
    if (!m || m->kind != LS_NODE_PLACEHOLDER) return LS_WHY_MASK_COMPUTED;
    const ls_input_spec *s = ls_sig_spec(&r->sig, r->q, m);
    if (!s || !ls_input_kind_holds_data(s->kind)) return LS_WHY_MASK_INPUT;
    if (ls_sig_is_mutated(&r->sig, s)) return LS_WHY_MASK_MUTATED;
    /* parameters and persistent buffers are fake tensors while ExecuTorch partitions */
    if (ls_input_in_state(s->kind, s->persistent)) return LS_WHY_MASK_PARAMETER;
    int64_t trues;
    if (!mask_values(r, m, &trues, detail)) return LS_WHY_MASK_PARAMETER;
    if (trues == 0) return LS_WHY_MASK_ALL_FALSE;
    return LS_WHY_NONE;
}

/* Whether the backend takes the node at pos: masks first (fold_masks folds the mask of an
 * index.Tensor it takes), then the profile's op list, dtypes and rules. */
static ls_cpu_reason check_call(pt_round *r, const ls_node *n, const char **detail)
{
    *detail = NULL;
    uint32_t mask_id = 0;
    if (n->op && n->op->id == LS_OP_index_Tensor && r->prof->fold_masks && ls_profile_dtypes(r->prof, n->op)) {
        ls_cpu_reason why = check_mask(r, n, &mask_id, detail);
        if (why != LS_WHY_NONE) return why;
    }
    return pr_check_node(&r->view, n, mask_id, detail);
}

/* ---- the pass */

static int cmp_u32(const void *a, const void *b)
{
    uint32_t x = *(const uint32_t *)a, y = *(const uint32_t *)b;
    return x < y ? -1 : x > y;
}

static void report_parts(const pt_round *r, const pt_parts *ps, const char **tag_of_part, ls_pass_ctx *ctx)
{
    uint32_t np = ps->n ? ps->n : 1;
    /* the compute nodes of each partition, by a counting sort (linear) */
    uint32_t *start = ls_calloc(np + 1, sizeof *start);
    uint32_t *first = ls_malloc(sizeof *first * np);
    memset(first, 0xff, sizeof *first * np);
    for (uint32_t i = 0; i < r->n; i++) {
        if (r->grp[i] < 0) continue;
        uint32_t g = (uint32_t)r->grp[i];
        if (first[g] == UINT32_MAX) first[g] = i;
        if (r->cls[i] & CLS_COMPUTE) start[g + 1]++;
    }
    for (uint32_t g = 0; g < ps->n; g++) start[g + 1] += start[g];
    uint32_t *ops = ls_malloc(sizeof *ops * (start[ps->n] ? start[ps->n] : 1));
    uint32_t *fill = ls_malloc(sizeof *fill * np);
    memcpy(fill, start, sizeof *fill * np);
    for (uint32_t i = 0; i < r->n; i++)
        if (r->grp[i] >= 0 && (r->cls[i] & CLS_COMPUTE)) ops[fill[r->grp[i]]++] = r->op[i];
    /* one sentence per partition, in tag order (ascending ids, as partition_tags is built) */
    uint32_t *order = ls_malloc(sizeof *order * np);
    for (uint32_t g = 0; g < ps->n; g++) order[g] = g;
    for (uint32_t a = 1; a < ps->n; a++) { /* insertion sort by id: the ids come almost in order */
        uint32_t x = order[a], b = a;
        while (b > 0 && ps->v[order[b - 1]].torch_id > ps->v[x].torch_id) order[b] = order[b - 1], b--;
        order[b] = x;
    }
    uint32_t count[LS_OP_COUNT + 1] = {0}, touched[LS_OP_COUNT + 1];
    for (uint32_t k = 0; k < ps->n; k++) {
        uint32_t g = order[k];
        if (!ps->v[g].size) continue;
        uint32_t nt = 0, compute = start[g + 1] - start[g];
        for (uint32_t e = start[g]; e < start[g + 1]; e++)
            if (count[ops[e]]++ == 0) touched[nt++] = ops[e];
        qsort(touched, nt, sizeof *touched, cmp_u32);
        ls_buf b = {0};
        ls_buf_printf(&b, "`%s` (%s) takes %u node%s", tag_of_part[g], r->prof->backend_id, compute, compute == 1 ? "" : "s");
        for (uint32_t t = 0; t < nt; t++) {
            if (t < 6) {
                const char *nm = touched[t] < LS_OP_COUNT ? ls_op_short(ls_op_get((ls_op_id)touched[t])) : "?";
                ls_buf_printf(&b, "%s%s ×%u", t ? ", " : ": ", nm, count[touched[t]]);
            } else if (t == 6) {
                ls_buf_puts(&b, ", …");
            }
            count[touched[t]] = 0;
        }
        char *text = ls_buf_take(&b);
        ls_report_add(ctx->report, NULL, first[g] != UINT32_MAX ? r->q->nodes[first[g]]->name : NULL, "%s", text);
        free(text);
    }
    free(order);
    free(fill);
    free(ops);
    free(start);
    free(first);
}

/* taken: the tags earlier rounds (other backends) registered; a name of theirs is prefixed */
static const char *tag_name(const pt_round *r, const pu_map *taken, uint32_t id)
{
    const char *t = ls_internf("%s%u", r->prof->tag_prefix, id);
    if (pu_map_has(taken, t)) t = ls_internf("%s_%s%u", r->prof->name, r->prof->tag_prefix, id);
    return t;
}

/* ls_program_add_tag for each tag_of_part[order[k]], with the program's tags in a map (a round
 * registers one tag per partition). */
static void add_tags(ls_program *q, const char **tag_of_part, const uint32_t *order, uint32_t n, const char *backend_id)
{
    pu_map known = {0};
    for (uint32_t i = 0; i < q->n_tags; i++)
        if (!pu_map_has(&known, q->tags[i].tag)) pu_map_put(&known, q->tags[i].tag, i);
    q->tags = ls_realloc(q->tags, sizeof *q->tags * (q->n_tags + n + 1));
    for (uint32_t k = 0; k < n; k++) {
        const char *t = tag_of_part[order[k]];
        uint32_t at;
        if (pu_map_get(&known, t, &at)) {
            q->tags[at].backend_id = backend_id;
            continue;
        }
        pu_map_put(&known, t, q->n_tags);
        q->tags[q->n_tags].tag = t;
        q->tags[q->n_tags].backend_id = backend_id;
        q->n_tags++;
    }
    pu_map_free(&known);
}

/* "tag0 (XNNPACK) takes the constants its ops bring: `p_w`, `p_b`" (group partitioner). */
static void report_group_constants(const pt_round *r, const char **tags, ls_pass_ctx *ctx)
{
    pu_map first = {0}; /* tag → the slot of its list */
    LS_VEC(const char *) tag_order = {0};
    LS_VEC(uint32_t) pos = {0};
    for (uint32_t i = 0; i < r->n; i++) {
        if (!(r->cls[i] & CLS_PLACEHOLDER) || !tags[i] || !pr_is_const_data(&r->view, r->q->nodes[i])) continue;
        if (!pu_map_has(&first, tags[i])) {
            pu_map_put(&first, tags[i], tag_order.n);
            ls_vec_push(&tag_order, tags[i]);
        }
        ls_vec_push(&pos, i);
    }
    for (uint32_t t = 0; t < tag_order.n; t++) {
        LS_VEC(const char *) names = {0};
        for (uint32_t k = 0; k < pos.n; k++)
            if (tags[pos.v[k]] == tag_order.v[t]) ls_vec_push(&names, r->q->nodes[pos.v[k]]->name);
        ls_buf b = {0};
        ls_buf_printf(&b, "`%s` takes the constants its ops bring with them: ", tag_order.v[t]);
        pu_names(&b, names.v, names.n, 6);
        char *text = ls_buf_take(&b);
        ls_report_add(ctx->report, NULL, names.v[0], "%s", text);
        free(text);
        free(names.v);
    }
    pu_map_free(&first);
    free(tag_order.v);
    free(pos.v);
}

static void round_free(pt_round *r)
{
    free(r->reason);
    free(r->detail);
    free(r->grp);
    free(r->cls);
    free(r->op);
    free(r->ids);
    pu_users_free(&r->users);
    ls_sig_free(&r->sig);
}

/* The partitions in ascending id order (partition_tags is built so). */
static uint32_t parts_in_order(const pt_parts *ps, uint32_t *order)
{
    uint32_t live = 0;
    for (uint32_t g = 0; g < ps->n; g++)
        if (ps->v[g].size) order[live++] = g;
    for (uint32_t a = 1; a < live; a++) { /* insertion sort by id: the ids come almost in order */
        uint32_t x = order[a], b = a;
        while (b > 0 && ps->v[order[b - 1]].torch_id > ps->v[x].torch_id) order[b] = order[b - 1], b--;
        order[b] = x;
    }
    return live;
}

int ls_pass_partition(const ls_program *in, ls_program **out, ls_pass_ctx *ctx)
{
    if (!ctx->profile) return ls_fail(ctx->err, "partition: no backend profile given");
    pt_round r = {.prof = ctx->profile};
    r.q = ls_program_copy(in);
    r.n = r.q->n_nodes;
    ls_sig_build(&r.sig, r.q);
    pu_users_take(&r.users, r.q);
    r.view = (pr_view){r.q, &r.sig, &r.users, r.prof};
    uint32_t n1 = r.n ? r.n : 1;
    r.reason = ls_calloc(n1, sizeof *r.reason);
    r.detail = ls_calloc(n1, sizeof *r.detail);
    r.grp = ls_malloc(sizeof *r.grp * n1);
    r.cls = ls_calloc(n1, sizeof *r.cls);
    r.op = ls_malloc(sizeof *r.op * n1);
    bool grouped = r.prof->partitioner == LS_PARTITIONER_GROUP;

    /* what the backend supports; a getitem follows its producer (CapabilityBasedPartitioner's
     * post-pass; the group partitioner brings them with their producer) */
    for (uint32_t i = 0; i < r.n; i++) {
        const ls_node *n = r.q->nodes[i];
        r.op[i] = n->kind == LS_NODE_CALL && n->op && (unsigned)n->op->id < LS_OP_COUNT ? (uint16_t)n->op->id
                                                                                       : (uint16_t)LS_OP_COUNT;
        r.cls[i] = (uint8_t)((n->kind == LS_NODE_CALL ? CLS_CALL : 0) | (ls_deleg_is_compute(n) ? CLS_COMPUTE : 0) |
                             (pu_is_op(n, LS_OP_getitem) ? CLS_GETITEM : 0) |
                             (n->kind == LS_NODE_PLACEHOLDER ? CLS_PLACEHOLDER : 0));
        r.grp[i] = -1;
        if (n->kind != LS_NODE_CALL) continue;
        if (pu_is_op(n, LS_OP_getitem)) {
            const ls_node *src = n->nargs ? pt_producer(&r, n->args[0].v.node) : NULL;
            int32_t sp = src ? pu_pos(&r.users, src->id) : -1;
            r.reason[i] = (uint8_t)(!grouped && sp >= 0 && r.reason[sp] == LS_WHY_NONE && src->kind == LS_NODE_CALL
                                        ? LS_WHY_NONE
                                        : LS_WHY_NOT_COMPUTE);
        } else if (pu_is_op(n, LS_OP_call_delegate)) {
            r.reason[i] = LS_WHY_NOT_COMPUTE;
        } else {
            r.reason[i] = (uint8_t)check_call(&r, n, &r.detail[i]);
        }
    }
    pt_parts ps = {0};
    if (grouped) pt_group_partition(&r, &ps);
    else pt_capability_partition(&r, &ps, ctx);
    pt_release_boundary(&r, &ps);

    /* tags, in ascending id order (partition_tags) */
    const char **tag_of_part = ls_malloc(sizeof *tag_of_part * (ps.n ? ps.n : 1));
    pu_map taken = {0};
    for (uint32_t i = 0; i < r.q->n_tags; i++)
        if (r.q->tags[i].backend_id) pu_map_put(&taken, r.q->tags[i].tag, i);
    for (uint32_t g = 0; g < ps.n; g++) tag_of_part[g] = tag_name(&r, &taken, ps.v[g].torch_id);
    pu_map_free(&taken);
    const char **tags = ls_calloc(n1, sizeof *tags);
    for (uint32_t i = 0; i < r.n; i++)
        if (r.grp[i] >= 0) tags[i] = tag_of_part[r.grp[i]];
    report_parts(&r, &ps, tag_of_part, ctx);
    const ls_node *left_out = NULL;
    for (uint32_t i = 0; i < r.n; i++) {
        if (!(r.cls[i] & CLS_COMPUTE) || r.grp[i] >= 0) continue;
        const ls_node *n = r.q->nodes[i];
        if (!left_out) left_out = n;
        ls_report_add(ctx->report, NULL, n->name, "`%s` (%s) stays on the CPU: %s", n->name,
                      n->op ? n->op->qualname : ls_target_short(n->target), ls_cpu_why((ls_cpu_reason)r.reason[i], r.detail[i]));
    }
    if (grouped) report_group_constants(&r, tags, ctx);
    pt_tag_data(&r, tags, ctx);

    if (left_out && r.prof->lower_full_graph) {
        int32_t lp = pu_pos(&r.users, left_out->id);
        int rc = ls_fail(ctx->err,
                         "partition (%s): lower_full_graph is set and `%s` (%s) stays on the CPU: %s (CoreMLPartitioner "
                         "raises NotImplementedError here)",
                         r.prof->name, left_out->name, ls_deleg_op_label(left_out),
                         ls_cpu_why((ls_cpu_reason)r.reason[lp], r.detail[lp]));
        free(tags);
        free(tag_of_part);
        free(ps.v);
        ls_program_unref(r.q);
        round_free(&r);
        return rc;
    }

    /* write tags and reasons, copying only the nodes that change */
    for (uint32_t i = 0; i < r.n; i++) {
        const ls_node *n = r.q->nodes[i];
        uint8_t why = LS_WHY_NONE;
        const char *detail = NULL;
        if ((r.cls[i] & CLS_COMPUTE) && !tags[i]) {
            why = r.reason[i];
            detail = r.detail[i];
        } else if (n->kind == LS_NODE_CALL && !tags[i]) {
            why = n->reason; /* getitems and delegate calls keep what they had */
            detail = n->reason_detail;
        }
        if (n->tag == tags[i] && n->reason == why && n->reason_detail == detail) continue;
        ls_node *e = pu_edit(r.q, i);
        e->tag = tags[i];
        e->reason = why;
        e->reason_detail = detail;
    }
    ls_program_touch(r.q);
    uint32_t *order = ls_malloc(sizeof *order * (ps.n ? ps.n : 1));
    uint32_t live_parts = parts_in_order(&ps, order);
    add_tags(r.q, tag_of_part, order, live_parts, r.prof->backend_id);
    if (!live_parts) ls_report_add(ctx->report, NULL, NULL, "%s takes nothing: no node is supported", r.prof->backend_id);

    free(order);
    free(tags);
    free(tag_of_part);
    free(ps.v);
    *out = r.q;
    round_free(&r);
    return 0;
}
