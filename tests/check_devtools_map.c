/* ETDump events placed on nodes, for two_delegates lowered and emitted: through a .pte's own
 * instructions, and through an ETRecord made from the same lowering (its debug handles and
 * delegate map). The ETDump is written from the .pte's instructions as ExecuTorch's
 * Method::execute records them (method.cpp: "OPERATOR_CALL" per KernelCall, "DELEGATE_CALL"
 * per DelegateCall with (chain, instruction) set, a delegate's own events with its debug id,
 * "Method::execute" around them all), plus an event for an instruction the program does not
 * have, which must be listed, not dropped. */
#include <check.h>
#include <cjson/cJSON.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <zip.h>

#include "bundled_blob.h"
#include "etdump.h"
#include "etrecord.h"
#include "export.h"
#include "ops.h"
#include "passes.h"
#include "devtools_fixture.h"
#include "progfixtures.h"
#include "reader.h"
#include "pte_test.h"
#include "testutil.h"

/* The node a .pte's instruction is about, read from the file: its operator or its delegate. */
static void check_instruction_node(const dt_fixture *f, const ls_program *p, uint32_t instr, const ls_node *n)
{
    const ls_pte_plan *pl = &f->pte.execution_plan.v[0];
    const ls_pte_instruction *in = &pl->chains.v[0].instructions.v[instr];
    ck_assert_ptr_nonnull(n);
    if (in->kind == LS_PTE_KERNEL_CALL) {
        const ls_pte_operator *o = &pl->operators.v[in->kernel_call.op_index];
        const char *want = ls_internf("%s.%s", o->name, o->overload);
        ck_assert_msg(n->target == want, "instruction %u is %s, its node %s is %s", instr, want, n->name, n->target);
    } else {
        ck_assert(n->op && n->op->id == LS_OP_call_delegate);
        const ls_node *ga = ls_program_node(p, n->args[0].v.node);
        const ls_submodule *s = ls_program_sub(p, ga->target);
        ck_assert_str_eq(s->backend_id, pl->delegates.v[in->delegate_call.delegate_index].id);
    }
}

START_TEST(events_land_on_the_pte_nodes_their_instructions_made)
{
    dt_fixture f;
    dt_fixture_make(&f);
    ls_program *p;
    ls_error err;
    ck_assert_msg(ls_load(f.pte_path, NULL, &p, &err) == 0, "%s", err.msg);
    const ls_program *mapped;
    ls_etd_index *x = ls_etd_index_for(p, &mapped, &err);
    ck_assert_msg(x && mapped == p, "%s", err.msg);
    ls_etd_profile pr;
    ls_etd_profile_build(&f.dump, p, x, 1e9, &pr);
    ck_assert_uint_eq(pr.runs, 2);
    ck_assert_uint_eq(pr.n_framework, 2);
    ck_assert_uint_eq(pr.n_unmatched, 2);
    ck_assert_uint_eq(pr.n_matched, 2 * f.n_ev);
    ck_assert_uint_eq(pr.n_in_delegate, 0);
    for (uint32_t i = 0; i < pr.n_events; i++) {
        const ls_etd_mapped *m = &pr.events[i];
        const ls_etd_event *e = &f.dump.runs[m->run].events[m->event];
        if (m->match == LS_ETD_FRAMEWORK) {
            ck_assert_str_eq(e->name, "Method::execute");
            continue;
        }
        if (m->match == LS_ETD_NO_INSTRUCTION) {
            ck_assert_int_eq(e->instruction_id, (int32_t)f.n_instr + 5);
            continue;
        }
        ck_assert_msg(m->match == LS_ETD_MATCHED, "event %u: %s", m->event, ls_etd_match_text((ls_etd_match)m->match));
        ck_assert_int_eq(m->instruction, e->instruction_id);
        if (e->delegate_debug_id_int < 0) {
            ck_assert_ptr_null(m->program);
            check_instruction_node(&f, p, (uint32_t)m->instruction, ls_program_node(p, m->node));
        } else {
            /* the node at that position of the delegate's graph, inside the lowered module */
            const ls_submodule *s = ls_program_sub(p, m->program);
            ck_assert_ptr_nonnull(s);
            ck_assert_uint_eq(s->program->nodes[e->delegate_debug_id_int]->id, m->node);
        }
    }
    /* a node's time: its two runs' events, in seconds (ticks are nanoseconds) */
    for (uint32_t k = 0; k < f.n_ev; k++) {
        if (f.ev_pos[k] >= 0) continue;
        uint32_t node = p->instrs->node[f.ev_instr[k]];
        const ls_node_stat *st = ls_node_stats_of(&pr.stats, node);
        ck_assert_ptr_nonnull(st);
        ck_assert_uint_eq(st->runs, 2);
        ck_assert_msg(fabs(st->seconds - (double)(dt_ticks(0, k) + dt_ticks(1, k)) / 1e9) < 1e-15, "%g", st->seconds);
    }
    ck_assert_uint_ge(pr.n_subs, 2);
    ls_etd_profile_free(&pr);
    ls_etd_index_free(x);
    ls_program_unref(p);

    /* the CLI: run --etdump, text and JSON */
    char *out;
    int rc = tu_runf(&out, "run %s --etdump %s", f.pte_path, f.etdp_path);
    ck_assert_msg(rc == 0, "%s", out);
    ck_assert_msg(tu_contains(out, "2 runs of forward") && tu_contains(out, "unmatched events (2)"), "%s", out);
    ck_assert_msg(tu_contains(out, "no such instruction"), "%s", out);
    free(out);
    rc = tu_runf(&out, "run %s --etdump %s --json", f.pte_path, f.etdp_path);
    cJSON *j = cJSON_Parse(out);
    ck_assert_msg(rc == 0 && j, "%s", out);
    ck_assert_str_eq(cJSON_GetObjectItem(j, "mapped_by")->valuestring, "instructions");
    const cJSON *un = cJSON_GetObjectItem(j, "unmatched");
    ck_assert_int_eq(cJSON_GetArraySize(un), 2);
    ck_assert_str_eq(cJSON_GetObjectItem(cJSON_GetArrayItem(un, 0), "reason")->valuestring, "no such instruction");
    const cJSON *nodes = cJSON_GetObjectItem(j, "nodes");
    ck_assert_int_eq(cJSON_GetArraySize(nodes), (int)f.n_ev);
    int delegates = 0;
    for (const cJSON *n = nodes->child; n; n = n->next) {
        ck_assert_int_eq(cJSON_GetObjectItem(n, "calls")->valueint, 2);
        delegates += cJSON_GetObjectItem(n, "delegate") != NULL;
    }
    ck_assert_int_eq(delegates, 2);
    cJSON_Delete(j);
    free(out);
    /* it runs nothing: an option about a run is refused, not ignored (--save made no folder) */
    static const char *const about_a_run[] = {"--save /tmp/x", "--steps 3", "--input x=a.npy", "--seed 4", "--nodes",
                                              "--compare", "--step 2"};
    for (size_t i = 0; i < sizeof about_a_run / sizeof about_a_run[0]; i++) {
        rc = tu_runf(&out, "run %s --etdump %s %s", f.pte_path, f.etdp_path, about_a_run[i]);
        char opt[32];
        snprintf(opt, sizeof opt, "it takes no %.*s", (int)strcspn(about_a_run[i], " "), about_a_run[i]);
        ck_assert_msg(rc == 2 && tu_contains(out, "runs nothing here") && tu_contains(out, opt), "%s: %s", about_a_run[i], out);
        free(out);
    }
    dt_fixture_free(&f);
}
END_TEST

START_TEST(an_etrecord_opens_as_its_steps_and_places_the_same_events)
{
    dt_fixture f;
    dt_fixture_make(&f);
    ls_error err;
    dt_fixture_etrecord(&f);
    /* the members _etrecord.py's ETRecord.save writes, the marker first */
    int code;
    zip_t *za = zip_open(f.etr_path, ZIP_RDONLY, &code);
    ck_assert_ptr_nonnull(za);
    ck_assert_str_eq(zip_get_name(za, 0, 0), "ETRECORD_V0");
    const char *want[] = {"exported_program", "exported_program_state_dict", "exported_program_constants",
                          "exported_program_example_inputs", "edge_dialect_exported_program",
                          "edge_dialect_exported_program_state_dict", "debug_handle_map", "delegate_map"};
    for (size_t i = 0; i < sizeof want / sizeof want[0]; i++) ck_assert_msg(zip_name_locate(za, want[i], 0) >= 0, "%s", want[i]);
    zip_close(za);

    ls_program *p;
    ck_assert_msg(ls_load(f.etr_path, NULL, &p, &err) == 0, "%s", err.msg);
    ck_assert_ptr_nonnull(ls_program_recorded(p));
    ls_pipeline_opts o;
    ls_pipeline_opts_init(&o);
    ls_history h;
    ck_assert(ls_pipeline_run(p, &o, &h, &err) == 0);
    ck_assert_uint_eq(h.n, 2);
    ck_assert_str_eq(h.steps[0].pass, "export");
    ck_assert_str_eq(h.steps[1].pass, "to_backend");
    ck_assert_int_eq(h.steps[0].program->dialect, LS_DIALECT_ATEN);
    ck_assert_int_eq(h.steps[1].program->dialect, LS_DIALECT_EDGE);
    ck_assert_uint_eq(p->n_subs, 2);
    /* what to_backend changed, though the two members share no node ids: the twelve adds, muls,
     * subs and divs the delegates took are removed, the calls and getitems added, and a node
     * changed is the same op on both sides (the step said 'no node changed'; by raw ids the UI
     * showed cos as once a mul) */
    const ls_program *s0 = h.steps[0].program, *s1 = h.steps[1].program;
    uint32_t removed = 0, added = 0, changed = 0;
    for (uint32_t c = 0; c < h.steps[1].n_changes; c++) {
        const ls_change *ch = &h.steps[1].changes[c];
        if (ch->program) continue;
        if (ch->kind == LS_CHANGE_REMOVED) {
            const ls_node *n = ls_program_node(s0, ch->node_id);
            ck_assert_ptr_nonnull(n);
            ck_assert_msg(ls_program_pos(s1, ch->node_id) < 0, "%s removed but its id is in step 1", n->name);
            ck_assert(n->op && (n->op->id == LS_OP_add_Tensor || n->op->id == LS_OP_mul_Tensor || n->op->id == LS_OP_sub_Tensor ||
                               n->op->id == LS_OP_div_Tensor));
            removed++;
        } else if (ch->kind == LS_CHANGE_ADDED) {
            ck_assert_int_lt(ls_program_pos(s0, ch->node_id), 0);
            added++;
        } else {
            const ls_node *was = ls_program_node(s0, ch->node_id), *now = ls_program_node(s1, ch->node_id);
            ck_assert(was && now);
            ck_assert_msg(was->kind == now->kind && was->op == now->op, "%s was %s", now->name, was->name);
            changed++;
        }
    }
    ck_assert_uint_eq(removed, 12);
    ck_assert_uint_eq(added, 6); /* two get_attrs, two calls, two getitems */
    ck_assert_uint_ge(changed, 4); /* cos and the atan2s: now Edge ops */
    const ls_node *cos1 = s1->nodes[ls_program_find(s1, ls_intern("aten_cos_default"))];
    ck_assert_str_eq(ls_program_node(s0, cos1->id)->name, "cos");

    /* the delegate map links each delegate to the Edge nodes inside its lowered module */
    ls_etr_delegates ds;
    ck_assert_msg(ls_etr_delegates_of(p, &ds, &err) == 0, "%s", err.msg);
    ck_assert_uint_eq(ds.n, 2);
    for (uint32_t i = 0; i < ds.n; i++) {
        const ls_etr_delegate *d = &ds.v[i];
        ck_assert_str_eq(d->backend, "BundledBackend");
        ck_assert_ptr_nonnull(d->submodule);
        const ls_node *call = ls_program_node(p, d->call_node);
        ck_assert(call && call->op && call->op->id == LS_OP_call_delegate);
        ck_assert(ls_program_node(p, call->args[0].v.node)->target == d->submodule);
        const ls_program *sub = ls_program_sub(p, d->submodule)->program;
        ck_assert_uint_gt(d->n_links, 0);
        for (uint32_t k = 0; k < d->n_links; k++) {
            const ls_etr_link *l = &d->links[k];
            ck_assert_ptr_eq(l->program, d->submodule);
            const ls_node *n = ls_program_node(sub, l->node);
            ck_assert_ptr_nonnull(n);
            ck_assert(n->debug_handle == l->handle);
            /* the same op as the node at that position of the .pte's delegate graph */
            uint32_t pos = (uint32_t)atoi(l->delegate_id);
            const ls_pte_instruction *in = &f.pte.execution_plan.v[0].chains.v[0].instructions.v[d->instruction];
            ck_assert_int_eq(in->kind, LS_PTE_DELEGATE_CALL);
            ck_assert(pos < sub->n_nodes && sub->nodes[pos] == n);
        }
    }
    ls_etr_delegates_free(&ds);

    /* the ETDump through the ETRecord: the same instructions, now on the Edge program's nodes */
    ls_program *pte_p;
    ck_assert(ls_load(f.pte_path, NULL, &pte_p, &err) == 0);
    const ls_program *mapped;
    ls_etd_index *x = ls_etd_index_for(p, &mapped, &err);
    ck_assert_msg(x != NULL, "%s", err.msg);
    ck_assert_ptr_eq(mapped, p);
    ls_etd_profile pr;
    ls_etd_profile_build(&f.dump, mapped, x, 1e9, &pr);
    ck_assert_uint_eq(pr.n_unmatched, 2);
    ck_assert_uint_eq(pr.n_framework, 2);
    ck_assert_uint_eq(pr.n_matched, 2 * f.n_ev);
    for (uint32_t i = 0; i < pr.n_events; i++) {
        const ls_etd_mapped *m = &pr.events[i];
        const ls_etd_event *e = &f.dump.runs[m->run].events[m->event];
        if (m->match != LS_ETD_MATCHED) continue;
        const ls_node *viapte = ls_program_node(pte_p, pte_p->instrs->node[e->instruction_id]);
        if (e->delegate_debug_id_int >= 0) {
            const ls_node *n = ls_program_node(ls_program_sub(p, m->program)->program, m->node);
            ck_assert_ptr_nonnull(n);
            /* the .pte names its delegates by delegate index, to_backend by tag: the module the
             * instruction calls in the .pte */
            const ls_node *ga = ls_program_node(pte_p, viapte->args[0].v.node);
            const ls_program *psub = ls_program_sub(pte_p, ga->target)->program;
            ck_assert_ptr_eq(n->op, psub->nodes[e->delegate_debug_id_int]->op);
            ck_assert_str_eq(n->name, psub->nodes[e->delegate_debug_id_int]->name);
        } else {
            const ls_node *n = ls_program_node(p, m->node);
            ck_assert_ptr_nonnull(n);
            ck_assert_msg(n->op == viapte->op, "instruction %d: %s on the Edge side, %s in the .pte", e->instruction_id,
                          n->name, viapte->name);
        }
    }
    ls_etd_profile_free(&pr);
    ls_etd_index_free(x);

    char *out;
    int rc = tu_runf(&out, "run %s --etdump %s --json", f.etr_path, f.etdp_path);
    cJSON *j = cJSON_Parse(out);
    ck_assert_msg(rc == 0 && j, "%s", out);
    ck_assert_str_eq(cJSON_GetObjectItem(j, "mapped_by")->valuestring, "debug_handles");
    ck_assert_int_eq(cJSON_GetArraySize(cJSON_GetObjectItem(j, "unmatched")), 2);
    cJSON_Delete(j);
    free(out);
    rc = tu_runf(&out, "run %s --etdump %s", f.etr_path, f.etdp_path); /* the method that ran, not the model's name */
    ck_assert_msg(rc == 0 && tu_contains(out, ": 2 runs of forward recorded in "), "%s", out);
    free(out);
    rc = tu_runf(&out, "info %s", f.etr_path);
    ck_assert_msg(rc == 0 && tu_contains(out, "ETRecord, method forward: export (exported_program) → to_backend"), "%s", out);
    ck_assert_msg(tu_contains(out, ": BundledBackend → lowered_module_"), "%s", out);
    /* each delegate debug id with its Edge node, apart: the BundledBackend numbers its graph's
     * nodes by position, the first call (after 3 constants and the input) is 4 */
    ck_assert_msg(tu_contains(out, "lowered_module_0; delegate debug ids 4 → aten_add_tensor, 5 → aten_mul_tensor, "),
                  "%s", out);
    free(out);
    rc = tu_runf(&out, "passes %s", f.etr_path);
    ck_assert_msg(rc == 0 && tu_contains(out, "step 1 to_backend"), "%s", out);
    free(out);

    ls_history_free(&h);
    ls_pipeline_opts_free(&o);
    ls_program_unref(pte_p);
    ls_program_unref(p);
    dt_fixture_free(&f);
}
END_TEST

/* A copy of the ETRecord `from` with member `name` replaced by `text` (added when absent), as
 * out_name beside it (from may be that file: it is changed in place). */
static const char *etrecord_with(const char *from, const char *name, const char *text, const char *out_name)
{
    static char path[4200];
    char from_copy[4200];
    snprintf(from_copy, sizeof from_copy, "%s", from); /* from may be path itself */
    from = from_copy;
    snprintf(path, sizeof path, "%.*s/%s", (int)(strrchr(from, '/') - from), from, out_name);
    if (strcmp(path, from) != 0) {
        size_t n;
        uint8_t *bytes = pt_load(from, &n);
        ls_error err;
        ck_assert(ls_write_file_atomic(path, bytes, n, &err) == 0);
        free(bytes);
    }
    zip_t *z = zip_open(path, 0, NULL);
    ck_assert_ptr_nonnull(z);
    zip_source_t *src = zip_source_buffer(z, text, strlen(text), 0);
    ck_assert_int_ge(zip_file_add(z, name, src, ZIP_FL_OVERWRITE), 0);
    ck_assert_int_eq(zip_close(z), 0);
    return path;
}

/* What a hostile ETRecord can hold: a cut file, a program that is not JSON, maps that are not
 * JSON or hold the wrong kinds; each is refused with a message or read as far as it makes
 * sense, never a crash (the sanitizer run checks the reads). The in-memory entry point too. */
START_TEST(hostile_etrecords_are_refused_cleanly)
{
    dt_fixture f;
    dt_fixture_make(&f);
    dt_fixture_etrecord(&f);
    size_t n;
    uint8_t *bytes = pt_load(f.etr_path, &n);
    ls_program *p;
    ls_error err;
    ck_assert_msg(ls_etrecord_read(bytes, n, "mem.etrecord", &p, &err) == 0, "%s", err.msg);
    ck_assert_ptr_nonnull(ls_program_recorded(p));
    ls_program_unref(p);
    for (size_t k = 0; k < n; k += n / 23 + 1) {
        if (ls_etrecord_read(bytes, k, "cut.etrecord", &p, &err) == 0) ls_program_unref(p);
        else ck_assert_msg(strncmp(err.msg, "cut.etrecord: ", 14) == 0, "%s", err.msg);
    }
    free(bytes);
    const char *bad = etrecord_with(f.etr_path, "edge_dialect_exported_program", "{\"graph_module\": [", "bad_json.etrecord");
    ck_assert_int_ne(ls_load(bad, NULL, &p, &err), 0);
    ck_assert_msg(tu_contains(err.msg, "edge_dialect_exported_program"), "%s", err.msg);
    /* maps that are not JSON: the program opens, the ETDump says why it cannot be placed */
    bad = etrecord_with(f.etr_path, "debug_handle_map", "[1, 2", "bad_map.etrecord");
    ck_assert_msg(ls_load(bad, NULL, &p, &err) == 0, "%s", err.msg);
    const ls_program *mapped;
    ck_assert_ptr_null(ls_etd_index_for(p, &mapped, &err));
    ck_assert_msg(tu_contains(err.msg, "debug_handle_map: not JSON"), "%s", err.msg);
    ls_program_unref(p);
    /* the wrong kinds: strings for handles, keys that are no instruction, a name that is a number */
    bad = etrecord_with(f.etr_path, "debug_handle_map", "{\"forward\": {\"0\": \"x\", \"abc\": [1], \"99999999999\": 3, \"1\": [true, 2]}}",
                        "kinds.etrecord");
    bad = etrecord_with(bad, "delegate_map", "{\"forward\": {\"3\": {\"name\": 5, \"delegate_map\": [1]}, \"x\": 1}}", "kinds.etrecord");
    ck_assert_msg(ls_load(bad, NULL, &p, &err) == 0, "%s", err.msg);
    ls_etd_index *x = ls_etd_index_for(p, &mapped, &err);
    ck_assert_msg(x != NULL, "%s", err.msg);
    ls_etd_profile pr;
    ls_etd_profile_build(&f.dump, mapped, x, 1e9, &pr);
    ck_assert_uint_eq(pr.n_matched + pr.n_in_delegate + pr.n_unmatched + pr.n_framework, pr.n_events);
    ck_assert_uint_gt(pr.n_unmatched, 2); /* instruction 0 names no node now */
    ls_etd_profile_free(&pr);
    ls_etd_index_free(x);
    ls_etr_delegates ds;
    ck_assert_msg(ls_etr_delegates_of(p, &ds, &err) == 0, "%s", err.msg);
    ck_assert_uint_eq(ds.n, 1);
    ck_assert_ptr_null(ds.v[0].backend);
    ck_assert_uint_eq(ds.v[0].n_links, 0);
    ls_etr_delegates_free(&ds);
    ls_program_unref(p);
    dt_fixture_free(&f);
}
END_TEST

/* An older writer's et_dialect_graph_module/forward (_etrecord.py no longer writes one) is the
 * last step, after the Edge program whose nodes the maps name; a graph_map program of another
 * name comes between export and Edge. Their contents here are the Edge program's JSON: what is
 * checked is where each member goes. */
START_TEST(recorded_members_take_the_order_of_a_lowering)
{
    dt_fixture f;
    dt_fixture_make(&f);
    dt_fixture_etrecord(&f);
    int code;
    zip_t *z = zip_open(f.etr_path, ZIP_RDONLY, &code);
    zip_int64_t idx = zip_name_locate(z, "edge_dialect_exported_program", 0);
    zip_stat_t st;
    ck_assert(idx >= 0 && zip_stat_index(z, (zip_uint64_t)idx, 0, &st) == 0);
    char *edge = ls_malloc(st.size + 1);
    zip_file_t *zf = zip_fopen_index(z, (zip_uint64_t)idx, 0);
    ck_assert_int_eq(zip_fread(zf, edge, st.size), (zip_int64_t)st.size);
    edge[st.size] = 0;
    zip_fclose(zf);
    zip_close(z);
    const char *path = etrecord_with(f.etr_path, "et_dialect_graph_module/forward", edge, "older.etrecord");
    path = etrecord_with(path, "aten_dialect_output/forward", edge, "older.etrecord");
    ls_program *p;
    ls_error err;
    ck_assert_msg(ls_load(path, NULL, &p, &err) == 0, "%s", err.msg);
    const ls_recorded *r = ls_program_recorded(p);
    ck_assert_uint_eq(r->n, 3);
    ck_assert_str_eq(r->passes[0], "export");
    ck_assert_str_eq(r->passes[1], "aten_dialect_output/forward");
    ck_assert_str_eq(r->passes[2], "to_backend");
    ck_assert_str_eq(r->pass, "to_executorch");
    ck_assert_int_eq(r->handles_step, 2);
    ck_assert_ptr_eq(ls_recorded_handles_program(p), r->programs[2]);
    ls_program_unref(p);
    free(edge);
    dt_fixture_free(&f);
}
END_TEST

Suite *devtools_map_suite(void)
{
    Suite *s = suite_create("devtools_map");
    TCase *tc = tcase_create("core");
    tcase_set_timeout(tc, 120);
    tcase_add_test(tc, events_land_on_the_pte_nodes_their_instructions_made);
    tcase_add_test(tc, an_etrecord_opens_as_its_steps_and_places_the_same_events);
    tcase_add_test(tc, hostile_etrecords_are_refused_cleanly);
    tcase_add_test(tc, recorded_members_take_the_order_of_a_lowering);
    suite_add_tcase(s, tc);
    return s;
}
