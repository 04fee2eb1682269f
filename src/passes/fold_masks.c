/* fold_masks: PR #24481's constant boolean masks. For a backend that folds them, a constant
 * boolean mask used as the only index of a delegated index.Tensor becomes its integer
 * positions: a k-dimensional mask with n true elements becomes k int64 indices of length n
 * (the coordinates of the true elements in row-major order, nonzero(as_tuple) semantics), as
 * new lifted constants tagged like the index node. The result's data-dependent length becomes
 * n. The masks the PR refuses (computed, user input, parameter or persistent buffer, mutated,
 * with another index, all false) were left on the CPU by the partition round with their
 * reason; this pass lists them again. */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "build.h"
#include "pass_util.h"
#include "passes.h"

typedef struct folded {
    uint32_t mask_pos;
    uint32_t k;       /* mask dimensions */
    uint32_t ids[LS_MAX_DIMS];
    int64_t trues;
} folded;

static bool is_folded_mask(const ls_program *q, const ls_sig *sig, const ls_node *n, uint32_t *mask_id, uint32_t *slot)
{
    if (!pu_is_op(n, LS_OP_index_Tensor) || !n->tag || n->nargs < 2 || n->args[1].kind != LS_ARG_OPT_NODES) return false;
    const ls_arg *ix = &n->args[1];
    uint32_t given = 0;
    *mask_id = 0;
    for (uint32_t k = 0; k < ix->n; k++) {
        if (!ix->v.nodes[k]) continue;
        given++;
        const ls_node *m = ls_program_node(q, ix->v.nodes[k]);
        const ls_tmeta *v = ls_node_tval(m);
        if (v && v->dtype == LS_DT_BOOL) {
            *mask_id = ix->v.nodes[k];
            *slot = k;
        }
    }
    if (!*mask_id || given != 1) return false;
    const ls_node *m = ls_program_node(q, *mask_id);
    const ls_input_spec *s = ls_sig_spec(sig, q, m);
    const ls_named_tensor *d = ls_sig_data(sig, q, s);
    return s && (s->kind == LS_IN_CONSTANT_TENSOR || (s->kind == LS_IN_BUFFER && !s->persistent)) &&
           !ls_sig_is_mutated(sig, s) && d && d->t;
}

int ls_pass_fold_masks(const ls_program *in, ls_program **out, ls_pass_ctx *ctx)
{
    ls_program *q = ls_program_copy(in);
    *out = q;
    if (!ctx->profile || !ctx->profile->fold_masks) {
        ls_report_add(ctx->report, NULL, NULL, "%s does not fold boolean masks: nothing to do",
                      ctx->profile ? ctx->profile->backend_id : "this backend");
        return 0;
    }
    uint32_t n = q->n_nodes;
    /* most programs have no delegated index.Tensor at all: say so without building tables */
    bool any = false;
    for (uint32_t i = 0; i < n && !any; i++) any = pu_is_op(q->nodes[i], LS_OP_index_Tensor);
    if (!any) {
        ls_report_add(ctx->report, NULL, NULL, "no delegated index.Tensor uses a constant boolean mask");
        return 0;
    }
    ls_sig sig;
    ls_sig_build(&sig, q);
    pu_users users;
    pu_users_take(&users, q);
    pu_map names = {0}, targets = {0};
    /* only names with "_positions" in them can clash with the new constants' names */
    for (uint32_t i = 0; i < n; i++)
        if (strstr(q->nodes[i]->name, "_positions")) pu_map_put(&names, q->nodes[i]->name, 1);
    for (uint32_t i = 0; i < q->n_inputs; i++)
        if (q->inputs[i].target && strstr(q->inputs[i].target, "_positions")) pu_map_put(&targets, q->inputs[i].target, 1);
    for (uint32_t i = 0; i < q->n_constants; i++)
        if (strstr(q->constants[i].name, "_positions")) pu_map_put(&targets, q->constants[i].name, 1);
    for (uint32_t i = 0; i < q->n_state; i++)
        if (strstr(q->state_dict[i].name, "_positions")) pu_map_put(&targets, q->state_dict[i].name, 1);

    pu_map done = {0}; /* mask position + 1 → index in folds */
    LS_VEC(folded) folds = {0};
    ls_node ***after = ls_calloc(n ? n : 1, sizeof *after); /* new placeholders after a mask */
    uint32_t *n_after = ls_calloc(n ? n : 1, sizeof *n_after);
    LS_VEC(ls_input_spec) new_specs = {0};
    uint32_t *spec_after = NULL; /* spec index each new spec follows */
    uint32_t total_new = 0, rewritten = 0;
    bool *still_read = ls_calloc(n ? n : 1, sizeof *still_read);

    for (uint32_t i = 0; i < n; i++) {
        uint32_t mask_id, slot = 0;
        const ls_node *node = q->nodes[i];
        if (!is_folded_mask(q, &sig, node, &mask_id, &slot)) continue;
        uint32_t mpos = (uint32_t)ls_program_pos(q, mask_id);
        uint32_t fi;
        if (!pu_map_get(&done, (const void *)(uintptr_t)(mpos + 1), &fi)) {
            const ls_node *m = q->nodes[mpos];
            const ls_input_spec *s = ls_sig_spec(&sig, q, m);
            const ls_tensor *t = ls_sig_data(&sig, q, s)->t;
            folded f = {.mask_pos = mpos, .k = t->ndim};
            for (int64_t e = 0; e < t->numel; e++) f.trues += ls_tensor_get_i64(t, e) != 0;
            int64_t len = f.trues;
            after[mpos] = ls_malloc(sizeof **after * (f.k ? f.k : 1));
            ls_buf names_text = {0};
            for (uint32_t dim = 0; dim < f.k; dim++) {
                ls_tensor *pos_t = ls_tensor_alloc(LS_DT_I64, 1, &len);
                int64_t w = 0;
                for (int64_t e = 0; e < t->numel; e++) {
                    if (!ls_tensor_get_i64(t, e)) continue;
                    int64_t rem = e, coord = 0;
                    for (int dd = t->ndim - 1; dd >= 0; dd--) {
                        int64_t c = rem % t->sizes[dd];
                        rem /= t->sizes[dd];
                        if ((uint32_t)dd == dim) coord = c;
                    }
                    ((int64_t *)pos_t->data)[w++] = coord;
                }
                char base[256];
                if (f.k == 1) snprintf(base, sizeof base, "%s_positions", m->name);
                else snprintf(base, sizeof base, "%s_positions_%u", m->name, dim);
                const char *nm = ls_intern(base), *tg;
                for (uint32_t sfx = 1; pu_map_has(&names, nm); sfx++) nm = ls_internf("%s_%u", base, sfx);
                tg = nm;
                for (uint32_t sfx = 1; pu_map_has(&targets, tg); sfx++) tg = ls_internf("%s_%u", nm, sfx);
                pu_map_put(&names, nm, 1);
                pu_map_put(&targets, tg, 1);
                ls_tmeta pm;
                ls_tensor_meta(pos_t, &pm);
                ls_node *ph = ls_node_new_placeholder(q, nm, &pm);
                ph->tag = node->tag;
                f.ids[dim] = ph->id;
                after[mpos][n_after[mpos]++] = ph;
                ls_program_put_constant(q, tg, pos_t, &pm);
                ls_tensor_unref(pos_t);
                ls_input_spec ns = {.kind = LS_IN_CONSTANT_TENSOR, .persistent = true, .name = nm, .target = tg};
                ls_vec_push(&new_specs, ns);
                spec_after = ls_realloc(spec_after, sizeof *spec_after * new_specs.n);
                uint32_t si = 0;
                pu_map_get(&sig.spec_of, m->name, &si);
                spec_after[new_specs.n - 1] = si;
                total_new++;
                ls_buf_printf(&names_text, "%s`%s`", dim ? ", " : "", nm);
            }
            char *nt = ls_buf_take(&names_text);
            ls_report_add(ctx->report, NULL, m->name, "mask `%s` (%s, %lld true) folded into %s (int64[%lld]%s)", m->name,
                          pu_meta_str(ls_node_tval(m)), (long long)f.trues, nt, (long long)f.trues, f.k > 1 ? " each" : "");
            free(nt);
            fi = folds.n;
            ls_vec_push(&folds, f);
            pu_map_put(&done, (const void *)(uintptr_t)(mpos + 1), fi);
        }
        const folded *f = &folds.v[fi];
        /* the index list: the mask's entry becomes k position entries */
        ls_node *e = pu_edit(q, i);
        ls_arg *ix = &e->args[1];
        uint32_t nn = ix->n - 1 + f->k;
        uint32_t *ids = ls_malloc(sizeof *ids * nn);
        uint32_t w = 0;
        for (uint32_t k = 0; k < ix->n; k++) {
            if (k == slot)
                for (uint32_t dd = 0; dd < f->k; dd++) ids[w++] = f->ids[dd];
            else
                ids[w++] = ix->v.nodes[k];
        }
        free(ix->v.nodes);
        ix->v.nodes = ids;
        ix->n = nn;
        /* x.shape[:p] + [n] + x.shape[p+k:]: the data-dependent length is now known */
        if (e->val_kind == LS_VAL_TENSOR && e->nvals) {
            ls_tmeta *v = &ls_node_vals_mut(e)[0];
            if (slot < v->ndim) {
                v->sizes[slot] = f->trues;
                v->sym[slot] = NULL;
            }
        }
        rewritten++;
        ls_report_add(ctx->report, NULL, e->name, "`%s` now indexes with the positions of `%s`", e->name,
                      q->nodes[f->mask_pos]->name);
    }
    /* masks nobody reads any more leave the program */
    const char **best_tag = ls_calloc(folds.n ? folds.n : 1, sizeof *best_tag);
    for (uint32_t f = 0; f < folds.n; f++) {
        uint32_t mpos = folds.v[f].mask_pos;
        const ls_node *m = q->nodes[mpos];
        for (uint32_t u = users.off[mpos]; u < users.off[mpos + 1]; u++) {
            const ls_node *user = q->nodes[users.pos[u]];
            bool reads = false;
            for (uint16_t a = 0; a < user->nargs && !reads; a++) {
                const ls_arg *arg = &user->args[a];
                if (arg->kind == LS_ARG_NODE) reads = arg->v.node == m->id;
                else if (arg->kind == LS_ARG_NODES || arg->kind == LS_ARG_OPT_NODES)
                    for (uint32_t k = 0; k < arg->n; k++) reads |= arg->v.nodes[k] == m->id;
            }
            if (!reads) continue;
            still_read[mpos] = true;
            if (user->tag && pu_tag_cmp(user->tag, best_tag[f]) < 0) best_tag[f] = user->tag;
        }
        /* a mask still read elsewhere goes with its remaining readers (tag_constant_data's rule) */
        if (still_read[mpos] && m->tag != best_tag[f]) pu_edit(q, mpos)->tag = best_tag[f];
    }
    free(best_tag);
    /* the refusals, as the partition round recorded them */
    for (uint32_t i = 0; i < n; i++) {
        const ls_node *node = q->nodes[i];
        if (!pu_is_op(node, LS_OP_index_Tensor) || node->tag) continue;
        if (node->reason < LS_WHY_MASK_COMPUTED || node->reason > LS_WHY_MASK_ALL_FALSE) continue;
        ls_report_add(ctx->report, NULL, node->name, "`%s` stays on the CPU: %s%s%s%s", node->name,
                      ls_cpu_reason_text((ls_cpu_reason)node->reason), node->reason_detail ? " (" : "",
                      node->reason_detail ? node->reason_detail : "", node->reason_detail ? ")" : "");
    }
    if (total_new || folds.n) {
        ls_node **nodes = ls_malloc(sizeof *nodes * (n + total_new));
        uint32_t m = 0;
        pu_map dropped_specs = {0};
        for (uint32_t i = 0; i < n; i++) {
            bool drop = n_after[i] && !still_read[i];
            if (drop) {
                const ls_node *mk = q->nodes[i];
                const ls_input_spec *s = ls_sig_spec(&sig, q, mk);
                pu_map_put(&dropped_specs, mk->name, 1);
                ls_report_add(ctx->report, NULL, mk->name, "`%s` leaves the program: nothing reads it any more", mk->name);
                if (s && s->target) ls_program_drop_constant(q, s->target);
            } else {
                nodes[m++] = ls_node_ref(q->nodes[i]);
            }
            for (uint32_t k = 0; k < n_after[i]; k++) nodes[m++] = after[i][k];
        }
        ls_program_set_nodes(q, nodes, m);
        free(nodes);
        LS_VEC(ls_input_spec) specs = {0};
        for (uint32_t s = 0; s < q->n_inputs; s++) {
            if (!pu_map_has(&dropped_specs, q->inputs[s].name)) {
                ls_input_spec c = q->inputs[s];
                ls_arg_copy(&c.value, &q->inputs[s].value);
                ls_vec_push(&specs, c);
            }
            for (uint32_t k = 0; k < new_specs.n; k++)
                if (spec_after[k] == s) ls_vec_push(&specs, new_specs.v[k]);
        }
        ls_program_set_inputs(q, specs.v, specs.n);
        for (uint32_t s = 0; s < specs.n; s++) ls_arg_free(&specs.v[s].value);
        free(specs.v);
        pu_map_free(&dropped_specs);
    }
    ls_program_touch(q);
    if (!rewritten) ls_report_add(ctx->report, NULL, NULL, "no delegated index.Tensor uses a constant boolean mask");
    for (uint32_t i = 0; i < n; i++) free(after[i]);
    free(after);
    free(n_after);
    free(still_read);
    free(spec_after);
    free(new_specs.v);
    free(folds.v);
    pu_map_free(&done);
    pu_map_free(&names);
    pu_map_free(&targets);
    pu_users_free(&users);
    ls_sig_free(&sig);
    return 0;
}
