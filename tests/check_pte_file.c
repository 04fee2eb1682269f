/* Tests of a loaded .pte as lowerscope holds it (src/formats/pte/pte_file.c, include/pte_file.h):
 * every method with its kind, named data and its readers, external tensors and the .ptd files
 * that give them (--data, or beside the .pte as exir names them), checked against flatc's decode
 * of each real file and against the numbers of the projects the files come from. */
#include <check.h>
#include <math.h>
#include <cjson/cJSON.h>
#include <stdlib.h>
#include <string.h>

#include "passes.h"
#include "progfixtures.h"
#include "pte_file.h"
#include "pte_test.h"
#include "reader.h"
#include "runtime.h"
#include "testutil.h"

static cJSON *decoded(const char *name)
{
    char rel[256];
    snprintf(rel, sizeof rel, "data/pte/decoded/%s.json", name);
    const char *path = tu_shared(rel);
    size_t n;
    char *text = path ? (char *)pt_load(path, &n) : NULL;
    if (!text) return NULL;
    char *z = ls_strndup(text, n);
    free(text);
    cJSON *j = pt_parse_flatc(z);
    free(z);
    return j;
}

static ls_pte_file *open_real(const char *name, const char *const *data, uint32_t n_data)
{
    ls_pte_file *f = NULL;
    ls_error err;
    const char *path = pt_path(name, ".pte");
    ck_assert_msg(ls_pte_file_open(path, data, n_data, &f, &err) == 0, "%s", err.msg);
    return f;
}

static uint32_t json_len(const cJSON *a)
{
    return a ? (uint32_t)cJSON_GetArraySize(a) : 0;
}

/* Every method of every real file as flatc decodes it: names in plan order, inputs, outputs,
 * instructions; a constant method is one with neither inputs nor instructions (exir's
 * _emit_prim_getters emits them so). */
START_TEST(methods_match_the_decodes)
{
    if (!tu_shared("data/pte")) return;
    for (size_t i = 0; i < PT_NREAL; i++) {
        cJSON *j = decoded(pt_real_files[i]);
        ck_assert_ptr_nonnull(j);
        ls_pte_file *f = open_real(pt_real_files[i], NULL, 0);
        const cJSON *plans = cJSON_GetObjectItem(j, "execution_plan");
        ck_assert_uint_eq(f->n_methods, json_len(plans));
        for (uint32_t m = 0; m < f->n_methods; m++) {
            const cJSON *pl = cJSON_GetArrayItem(plans, (int)m);
            const ls_pte_method *me = &f->methods[m];
            ck_assert_str_eq(me->name, cJSON_GetObjectItem(pl, "name")->valuestring);
            ck_assert_uint_eq(me->n_inputs, json_len(cJSON_GetObjectItem(pl, "inputs")));
            ck_assert_uint_eq(me->n_outputs, json_len(cJSON_GetObjectItem(pl, "outputs")));
            uint32_t instr = 0;
            const cJSON *ch;
            cJSON_ArrayForEach(ch, cJSON_GetObjectItem(pl, "chains")) instr += json_len(cJSON_GetObjectItem(ch, "instructions"));
            ck_assert_uint_eq(me->n_instructions, instr);
            ck_assert_int_eq(me->kind, instr == 0 && me->n_inputs == 0 ? LS_PTE_METHOD_CONSTANT : LS_PTE_METHOD_RUN);
            ck_assert_ptr_eq(ls_pte_file_find_method(f, me->name), me);
        }
        ls_pte_file_unref(f);
        cJSON_Delete(j);
    }
}
END_TEST

/* The QNN llama: two methods that run and 27 constant ones; each opens as its own program. */
START_TEST(qnn_llama_opens_both_methods)
{
    if (!pt_path("et_stories260k_hybrid_llama_qnn", ".pte")) return;
    ls_pte_file *f = open_real("et_stories260k_hybrid_llama_qnn", NULL, 0);
    uint32_t run = 0, constant = 0;
    for (uint32_t m = 0; m < f->n_methods; m++) {
        if (f->methods[m].kind == LS_PTE_METHOD_RUN) run++;
        else constant++;
    }
    ck_assert_uint_eq(run, 2);
    ck_assert_uint_eq(constant, 27);
    ck_assert_str_eq(ls_pte_file_default_method(f)->name, "kv_forward"); /* no forward: the first that runs */
    const char *names[] = {"kv_forward", "prefill_forward"};
    ls_error err;
    for (int k = 0; k < 2; k++) {
        ls_program *p;
        ck_assert_msg(ls_pte_file_method(f, names[k], &p, &err) == 0, "%s", err.msg);
        ck_assert_str_eq(p->name, names[k]);
        ck_assert_ptr_eq(p->method, ls_intern(names[k]));
        ck_assert_ptr_eq(ls_program_pte_file(p), f);
        ck_assert_uint_eq(p->n_subs, 1);
        ck_assert_str_eq(p->subs[0].backend_id, "QnnBackend");
        ck_assert_uint_eq(p->subs[0].processed->size, 1331456); /* decoded: segments[1].size */
        /* a copy of the program (every later step) reaches the same file */
        ls_program *c = ls_program_copy(p);
        ck_assert_ptr_eq(ls_program_pte_file(c), f);
        ls_program_unref(c);
        ls_program_unref(p);
    }
    ls_program *p;
    ck_assert_int_ne(ls_pte_file_method(f, "nope", &p, &err), 0);
    ck_assert_msg(tu_contains(err.msg, "no method 'nope'") && tu_contains(err.msg, "prefill_forward") &&
                      tu_contains(err.msg, "27 constant methods"),
                  "%s", err.msg);
    /* a constant method is a program too: no input, its outputs the values stored */
    ck_assert(ls_pte_file_method(f, "get_max_seq_len", &p, &err) == 0);
    ck_assert_uint_eq(ls_program_user_inputs(p, NULL, 0), 0);
    ls_program_unref(p);
    ls_pte_file_unref(f);
}
END_TEST

/* cc_quantized keeps XNNPACK's weights in named_data: the keys and sizes flatc decodes, each one
 * named by the delegate's blob. */
START_TEST(named_data_and_its_readers)
{
    if (!tu_shared("data/pte")) return;
    const char *files[] = {"cc_quantized", "djl_conv"};
    for (int k = 0; k < 2; k++) {
        cJSON *j = decoded(files[k]);
        ls_pte_file *f = open_real(files[k], NULL, 0);
        const cJSON *nd = cJSON_GetObjectItem(j, "named_data"), *segs = cJSON_GetObjectItem(j, "segments");
        ck_assert_uint_eq(f->n_named, json_len(nd));
        ck_assert_uint_ge(f->n_named, 1);
        uint64_t total = 0;
        for (uint32_t i = 0; i < f->n_named; i++) {
            const cJSON *e = cJSON_GetArrayItem(nd, (int)i);
            const ls_pte_named *n = &f->named[i];
            ck_assert_str_eq(n->key, cJSON_GetObjectItem(e, "key")->valuestring);
            int seg = cJSON_GetObjectItem(e, "segment_index")->valueint;
            ck_assert_uint_eq(n->segment, (uint32_t)seg);
            ck_assert_uint_eq(n->bytes, (uint64_t)cJSON_GetObjectItem(cJSON_GetArrayItem(segs, seg), "size")->valuedouble);
            ck_assert_int_eq(n->ptd, -1);
            ck_assert_ptr_eq(ls_pte_file_named(f, n->key), n);
            ck_assert_uint_eq(n->n_readers, 1);
            ck_assert_str_eq(n->readers[0].name, "lowered_module_0");
            const uint8_t *data;
            size_t size;
            ls_error err;
            ck_assert(ls_pte_file_named_bytes(f, n, &data, &size, &err) == 0);
            ck_assert_uint_eq(size, n->bytes);
            total += n->bytes;
        }
        ck_assert_uint_eq(ls_pte_file_named_total(f), total);
        ck_assert_ptr_null(ls_pte_file_named(f, "no such key"));
        ls_pte_file_unref(f);
        cJSON_Delete(j);
    }
}
END_TEST

static void copy_file(const char *from, const char *to)
{
    size_t n;
    uint8_t *d = pt_load(from, &n);
    ck_assert_ptr_nonnull(d);
    ls_error err;
    ck_assert_msg(ls_write_file_atomic(to, d, n, &err) == 0, "%s", err.msg);
    free(d);
}

/* Runs rs_data_map_model's forward on [[1, 2], [3, 4]]: executorch-rs's example
 * (examples/data_map/src/main.rs) asserts [[5, 8], [11, 14]]. */
static void runs_like_executorch_rs(ls_program *p)
{
    ls_error err;
    ls_runner *r = ls_runner_new(p, &err);
    ck_assert_msg(r, "%s", err.msg);
    int64_t sizes[2] = {2, 2};
    ls_tensor *x = ls_tensor_alloc(LS_DT_F32, 2, sizes);
    float in[4] = {1, 2, 3, 4}, want[4] = {5, 8, 11, 14};
    memcpy(x->data, in, sizeof in);
    ls_value v = ls_value_tensor(x);
    ls_value *outs;
    uint32_t nout;
    ck_assert_msg(ls_runner_run(r, &v, 1, &outs, &nout, &err) == 0, "%s", err.msg);
    ck_assert_uint_eq(nout, 1);
    const float *y = outs[0].t->data;
    for (int i = 0; i < 4; i++) ck_assert_msg(y[i] == want[i], "out[%d] = %g, want %g", i, y[i], want[i]);
    ls_value_release(&outs[0]);
    free(outs);
    ls_value_release(&v);
    ls_runner_free(r);
}

/* rs_data_map_model keeps both constants EXTERNAL: with --data they come from the .ptd; beside the
 * .pte under the names exir writes (STEM.ptd, _default_external_constant.ptd) they are found by
 * themselves; without one the run is refused naming the key and --data. */
START_TEST(external_data_given_found_or_missing)
{
    const char *pte = pt_path("rs_data_map_model", ".pte");
    if (!pte) return;
    char pte_path[4096], ptd_path[4096];
    snprintf(pte_path, sizeof pte_path, "%s", pte);
    snprintf(ptd_path, sizeof ptd_path, "%s", pt_path("rs_data_map__default_external_constant", ".ptd"));
    ls_error err;

    /* given */
    const char *data[] = {ptd_path};
    ls_pte_file *f = open_real("rs_data_map_model", data, 1);
    ck_assert_uint_eq(f->n_externals, 2);
    ck_assert_uint_eq(f->n_missing, 0);
    ck_assert_str_eq(f->externals[0].key, "a");
    ck_assert_str_eq(f->externals[1].key, "b");
    ck_assert(!f->ptd_found[0]);
    ck_assert_uint_eq(f->n_named, 2); /* the .ptd's entries: a and b */
    ck_assert_int_eq(f->named[0].ptd, 0);
    ls_program *p;
    ck_assert(ls_pte_file_method(f, NULL, &p, &err) == 0);
    runs_like_executorch_rs(p);
    ls_program_unref(p);
    ls_pte_file_unref(f);

    /* beside it, as exir names it: the default name, then the stem */
    const char *names[][2] = {{"model.pte", LS_PTD_DEFAULT_NAME}, {"model.pte", "model.ptd"}};
    for (int k = 0; k < 2; k++) {
        const char *dir = tu_tmpdir();
        char a[4200], b[4200];
        snprintf(a, sizeof a, "%s/%s", dir, names[k][0]);
        snprintf(b, sizeof b, "%s/%s", dir, names[k][1]);
        copy_file(pte_path, a);
        copy_file(ptd_path, b);
        ls_load_opts o = {0};
        ck_assert_msg(ls_load(a, &o, &p, &err) == 0, "%s", err.msg);
        ls_pte_file *g = ls_program_pte_file(p);
        ck_assert_uint_eq(g->n_ptds, 1);
        ck_assert(g->ptd_found[0]);
        ck_assert_str_eq(g->ptd_paths[0], b);
        runs_like_executorch_rs(p);
        ls_program_unref(p);
    }

    /* missing: the run names the key and what to give */
    ck_assert(ls_load(pte_path, NULL, &p, &err) == 0);
    ck_assert_uint_eq(ls_program_pte_file(p)->n_missing, 2);
    ck_assert(p->has_weights); /* not "metadata only": the file says what is missing */
    ls_runner *r = ls_runner_new(p, &err);
    ck_assert_ptr_null(r);
    ck_assert_msg(tu_contains(err.msg, "'a' is stored outside the program") && tu_contains(err.msg, "--data FILE.ptd") &&
                      tu_contains(err.msg, LS_PTD_DEFAULT_NAME),
                  "%s", err.msg);
    ls_program_unref(p);

    /* a .ptd given that holds other keys (the xor's): the message names it, not 'not given' */
    const char *other[] = {pt_path("et_android_xor", ".ptd")};
    f = open_real("rs_data_map_model", other, 1);
    ck_assert_uint_eq(f->n_missing, 2);
    ck_assert(ls_pte_file_method(f, NULL, &p, &err) == 0);
    ck_assert_ptr_null(ls_runner_new(p, &err));
    ck_assert_msg(tu_contains(err.msg, "'a' is stored outside the program, and no .ptd in use holds it (et_android_xor.ptd)") &&
                      !tu_contains(err.msg, "not given"),
                  "%s", err.msg);
    ls_program_unref(p);
    ls_pte_file_unref(f);

    /* the same key in two data files: refused as ExecuTorch's MergedDataMap refuses it */
    const char *twice[] = {ptd_path, ptd_path};
    ck_assert_int_ne(ls_pte_file_open(pte_path, twice, 2, &f, &err), 0);
    ck_assert_msg(tu_contains(err.msg, "duplicate key a in named data maps"), "%s", err.msg);
    /* a .ptd that is not one */
    const char *bad[] = {pte_path};
    ck_assert_int_ne(ls_pte_file_open(pte_path, bad, 1, &f, &err), 0);
    ck_assert_msg(tu_contains(err.msg, "rs_data_map_model.pte"), "%s", err.msg);

    /* the CLI: --data, and the missing case as bad input */
    char *out;
    ck_assert_int_eq(tu_runf(&out, "run %s --data %s", pte_path, ptd_path), 0);
    free(out);
    ck_assert_int_eq(tu_runf(&out, "run %s", pte_path), 2);
    ck_assert_msg(tu_contains(out, "--data FILE.ptd"), "%s", out);
    free(out);
}
END_TEST

/* The xor training program: its four trainable weights are EXTERNAL and memory-planned, in
 * et_android_xor.ptd beside it (its stem), under the keys SOURCES.md lists. */
START_TEST(xor_weights_come_from_its_ptd)
{
    if (!pt_path("et_android_xor", ".pte")) return;
    ls_pte_file *f = open_real("et_android_xor", NULL, 0);
    ck_assert_uint_eq(f->n_ptds, 1);
    ck_assert(f->ptd_found[0]);
    ck_assert_uint_eq(f->n_externals, 4);
    ck_assert_uint_eq(f->n_missing, 0);
    const char *keys[] = {"net.linear.weight", "net.linear.bias", "net.linear2.weight", "net.linear2.bias"};
    for (int k = 0; k < 4; k++) {
        const ls_pte_external *e = ls_pte_file_external(f, ls_intern("forward"), keys[k]);
        ck_assert_msg(e, "%s", keys[k]);
        ck_assert(e->trainable);
        ck_assert_int_eq(e->ptd, 0);
    }
    uint32_t constant = 0;
    for (uint32_t m = 0; m < f->n_methods; m++) constant += f->methods[m].kind == LS_PTE_METHOD_CONSTANT;
    ck_assert_uint_eq(constant, 3); /* __et_training_* */
    ls_pte_file_unref(f);
}
END_TEST

/* The xor training step run with its weights from et_android_xor.ptd: loss, prediction and the
 * four gradients against the same network worked by hand (the ops the file calls: addmm, sigmoid,
 * addmm, log_softmax, the nll loss by gather and its backward by scatter.value):
 * h = sigmoid(W1 x + b1), z = W2 h + b2, loss = -log softmax(z)[y]; dz = softmax(z) - onehot(y),
 * dW2 = dz h^T, db2 = dz, dh = W2^T dz, dz1 = dh h (1 - h), dW1 = dz1 x^T, db1 = dz1. */
START_TEST(xor_training_step_matches_the_network_by_hand)
{
    if (!pt_path("et_android_xor", ".pte")) return;
    ls_pte_file *f = open_real("et_android_xor", NULL, 0);
    ls_program *p;
    ls_error err;
    ck_assert(ls_pte_file_method(f, NULL, &p, &err) == 0);
    const float *W1 = ls_program_state(p, ls_intern("net.linear.weight"))->t->data;
    const float *b1 = ls_program_state(p, ls_intern("net.linear.bias"))->t->data;
    const float *W2 = ls_program_state(p, ls_intern("net.linear2.weight"))->t->data;
    const float *b2 = ls_program_state(p, ls_intern("net.linear2.bias"))->t->data;
    double x[2] = {1, 0}, h[10], z[2], pz[2], dz[2], dz1[10];
    int y = 1;
    for (int i = 0; i < 10; i++) h[i] = 1 / (1 + exp(-(W1[2 * i] * x[0] + W1[2 * i + 1] * x[1] + b1[i])));
    for (int j = 0; j < 2; j++) {
        z[j] = b2[j];
        for (int i = 0; i < 10; i++) z[j] += W2[10 * j + i] * h[i];
    }
    double mx = z[0] > z[1] ? z[0] : z[1], sum = exp(z[0] - mx) + exp(z[1] - mx);
    for (int j = 0; j < 2; j++) pz[j] = exp(z[j] - mx) / sum, dz[j] = pz[j] - (j == y);
    double loss = -log(pz[y]);
    for (int i = 0; i < 10; i++) {
        double dh = W2[i] * dz[0] + W2[10 + i] * dz[1];
        dz1[i] = dh * h[i] * (1 - h[i]);
    }
    ls_runner *r = ls_runner_new(p, &err);
    ck_assert_msg(r, "%s", err.msg);
    int64_t xs[2] = {1, 2}, ys = 1;
    ls_tensor *xt = ls_tensor_alloc(LS_DT_F32, 2, xs), *yt = ls_tensor_alloc(LS_DT_I64, 1, &ys);
    ((float *)xt->data)[0] = 1, ((float *)xt->data)[1] = 0;
    ((int64_t *)yt->data)[0] = y;
    ls_value in[2] = {ls_value_tensor(xt), ls_value_tensor(yt)};
    ls_value *outs;
    uint32_t nout;
    ck_assert_msg(ls_runner_run(r, in, 2, &outs, &nout, &err) == 0, "%s", err.msg);
    ck_assert_uint_eq(nout, 10);
    ck_assert_msg(fabs(ls_tensor_get_f64(outs[0].t, 0) - loss) < 1e-5, "loss %g, by hand %g", ls_tensor_get_f64(outs[0].t, 0), loss);
    ck_assert_int_eq((int)ls_tensor_get_f64(outs[1].t, 0), z[1] > z[0] ? 1 : 0);
    for (int i = 0; i < 10; i++) {
        for (int k = 0; k < 2; k++) ck_assert(fabs(ls_tensor_get_f64(outs[2].t, 2 * i + k) - dz1[i] * x[k]) < 1e-5);
        ck_assert(fabs(ls_tensor_get_f64(outs[3].t, i) - dz1[i]) < 1e-5);
        for (int j = 0; j < 2; j++) ck_assert(fabs(ls_tensor_get_f64(outs[4].t, 10 * j + i) - dz[j] * h[i]) < 1e-5);
    }
    for (int j = 0; j < 2; j++) ck_assert(fabs(ls_tensor_get_f64(outs[5].t, j) - dz[j]) < 1e-5);
    pf_values_free(outs, nout);
    ls_value_release(&in[0]);
    ls_value_release(&in[1]);
    ls_runner_free(r);
    ls_program_unref(p);
    ls_pte_file_unref(f);
    char *out;
    ck_assert_int_eq(tu_runf(&out, "run %s --data %s", pt_path("et_android_xor", ".pte"), "/dev/null"), 2); /* not a .ptd */
    free(out);
}
END_TEST

/* Every real file at step 0 in the CLI: passes runs no pass, partitions and diff work there, and
 * each delegate shows up with the blob size and the compile specs flatc decodes. */
START_TEST(every_real_file_at_step_0_in_the_cli)
{
    if (!tu_shared("data/pte")) return;
    for (size_t i = 0; i < PT_NREAL; i++) {
        char path[4200];
        snprintf(path, sizeof path, "%s", pt_path(pt_real_files[i], ".pte"));
        char *out;
        int rc = tu_runf(&out, "passes %s", path);
        ck_assert_msg(rc == 0 && tu_contains(out, ": 1 step") && tu_contains(out, "step 0 load") &&
                          tu_contains(out, "not lowered again unless asked"),
                      "%s: exit %d: %s", pt_real_files[i], rc, out);
        if (!strcmp(pt_real_files[i], "et_android_xor")) /* its .ptd holds tensors, no delegate's data */
            ck_assert_msg(!tu_contains(out, "named data") && tu_contains(out, "4 tensors (208 B) stored outside"), "%s", out);
        free(out);
        ck_assert_int_eq(tu_runf(&out, "diff %s --step 0", path), 0);
        free(out);
        rc = tu_runf(&out, "partitions %s --step 0 --json", path);
        ck_assert_msg(rc == 0, "%s: %s", pt_real_files[i], out);
        cJSON *pj = cJSON_Parse(out);
        ck_assert_msg(pj, "%s: partitions --json is not JSON", pt_real_files[i]);
        free(out);
        /* a kernel the file runs on the CPU was left there by the lowering that wrote the file,
         * not 'not partitioned yet' */
        const cJSON *cpu_rows = cJSON_GetObjectItem(pj, "cpu");
        for (uint32_t k = 0; k < json_len(cpu_rows); k++) {
            const char *why = cJSON_GetObjectItem(cJSON_GetArrayItem(cpu_rows, (int)k), "why")->valuestring;
            ck_assert_msg(!strcmp(why, "left on the CPU by the lowering that wrote the file") || tu_contains(why, "unknown op"),
                          "%s: %s", pt_real_files[i], why);
        }
        /* the partition graph counts what the delegation table counts: an opaque delegate as one
         * call (the QNN and OpenVINO files drew 'QnnBackend · 0 nodes', '0 delegated') */
        ck_assert_int_eq(tu_runf(&out, "graph %s --json", path), 0);
        cJSON *gj = cJSON_Parse(out);
        free(out);
        ck_assert_ptr_nonnull(gj);
        double cpu = cJSON_GetObjectItem(pj, "cpu_nodes")->valuedouble, all = cJSON_GetObjectItem(pj, "compute_nodes")->valuedouble;
        ck_assert_msg(cJSON_GetObjectItem(gj, "cpu_nodes")->valuedouble == cpu &&
                          cJSON_GetObjectItem(gj, "delegated_nodes")->valuedouble == all - cpu,
                      "%s: graph %g on the CPU, %g delegated; partitions %g of %g on the CPU", pt_real_files[i],
                      cJSON_GetObjectItem(gj, "cpu_nodes")->valuedouble, cJSON_GetObjectItem(gj, "delegated_nodes")->valuedouble,
                      cpu, all);
        cJSON_Delete(gj);
        cJSON_Delete(pj);
        ck_assert_int_eq(tu_runf(&out, "info %s --json", path), 0);
        cJSON *info = cJSON_Parse(out);
        free(out);
        ck_assert_ptr_nonnull(info);
        cJSON *dec = decoded(pt_real_files[i]);
        const cJSON *plan = cJSON_GetArrayItem(cJSON_GetObjectItem(dec, "execution_plan"), 0);
        const cJSON *dels = cJSON_GetObjectItem(plan, "delegates"), *segs = cJSON_GetObjectItem(dec, "segments");
        const cJSON *got = cJSON_GetObjectItem(info, "delegates");
        ck_assert_uint_eq(json_len(got), json_len(dels));
        ck_assert_uint_eq(json_len(cJSON_GetObjectItem(info, "methods")), json_len(cJSON_GetObjectItem(dec, "execution_plan")));
        /* named data is the .pte's own (a .ptd's entries that are external tensors are weights,
         * not counted again: et_android_xor's four came out as 208 B of named data besides) */
        double named = 0;
        const cJSON *nd = cJSON_GetObjectItem(dec, "named_data");
        for (uint32_t k = 0; k < json_len(nd); k++)
            named += cJSON_GetObjectItem(cJSON_GetArrayItem(segs, cJSON_GetObjectItem(cJSON_GetArrayItem(nd, (int)k),
                                                                                        "segment_index")->valueint),
                                         "size")->valuedouble;
        ck_assert_msg(cJSON_GetObjectItem(info, "named_data_bytes")->valuedouble == named, "%s: named_data_bytes %g, want %g",
                      pt_real_files[i], cJSON_GetObjectItem(info, "named_data_bytes")->valuedouble, named);
        for (uint32_t d = 0; d < json_len(dels); d++) {
            const cJSON *want = cJSON_GetArrayItem(dels, (int)d), *have = cJSON_GetArrayItem(got, (int)d);
            ck_assert_str_eq(cJSON_GetObjectItem(have, "backend_id")->valuestring, cJSON_GetObjectItem(want, "id")->valuestring);
            int seg = cJSON_GetObjectItem(cJSON_GetObjectItem(want, "processed"), "index")->valueint;
            ck_assert_double_eq(cJSON_GetObjectItem(have, "blob_bytes")->valuedouble,
                                cJSON_GetObjectItem(cJSON_GetArrayItem(segs, seg), "size")->valuedouble);
            const cJSON *ws = cJSON_GetObjectItem(want, "compile_specs"), *hs = cJSON_GetObjectItem(have, "compile_specs");
            ck_assert_uint_eq(json_len(hs), json_len(ws));
            for (uint32_t k = 0; k < json_len(ws); k++) {
                ck_assert_str_eq(cJSON_GetObjectItem(cJSON_GetArrayItem(hs, (int)k), "key")->valuestring,
                                 cJSON_GetObjectItem(cJSON_GetArrayItem(ws, (int)k), "key")->valuestring);
                ck_assert_uint_eq((uint32_t)cJSON_GetObjectItem(cJSON_GetArrayItem(hs, (int)k), "bytes")->valueint,
                                  json_len(cJSON_GetObjectItem(cJSON_GetArrayItem(ws, (int)k), "value")));
            }
        }
        cJSON_Delete(dec);
        cJSON_Delete(info);
    }
}
END_TEST

/* A .pte is its own step 0: the pipeline does not run on it unless asked. */
START_TEST(pte_is_its_own_step_zero)
{
    const char *path = pt_path("et_apple_add", ".pte");
    if (!path) return;
    ls_program *p = pf_load(path);
    ls_pipeline_opts o;
    ls_pipeline_opts_init(&o);
    ls_history h;
    ls_error err;
    ck_assert(ls_pipeline_run(p, &o, &h, &err) == 0);
    ck_assert_uint_eq(h.n, 1);
    ck_assert_ptr_eq(h.steps[0].program, p);
    ck_assert_uint_ge(h.steps[0].report.n, 2);
    ck_assert_msg(tu_contains(h.steps[0].report.v[0].text, "`forward`"), "%s", h.steps[0].report.v[0].text);
    ls_history_free(&h);
    o.relower = true;
    ck_assert(ls_pipeline_run(p, &o, &h, &err) == 0);
    ck_assert_uint_gt(h.n, 1);
    ls_history_free(&h);
    ls_pipeline_opts_free(&o);
    ls_program_unref(p);
}
END_TEST

/* Every constant method of every real file (exir's _emit_prim_getters: Int, Double, Bool, String
 * and Tensor values) runs to exactly the values flatc decodes: the QNN llama's
 * get_kv_output_<i>_quant_attr returns a String ('torch.uint8') after its scale and zero point,
 * which once came back as None. */
START_TEST(constant_methods_return_what_the_file_stores)
{
    if (!tu_shared("data/pte")) return;
    uint32_t checked = 0, strings = 0;
    for (size_t i = 0; i < PT_NREAL; i++) {
        cJSON *j = decoded(pt_real_files[i]);
        ck_assert_ptr_nonnull(j);
        ls_pte_file *f = open_real(pt_real_files[i], NULL, 0);
        const cJSON *plans = cJSON_GetObjectItem(j, "execution_plan");
        for (uint32_t m = 0; m < f->n_methods; m++) {
            if (f->methods[m].kind != LS_PTE_METHOD_CONSTANT) continue;
            const cJSON *plan = cJSON_GetArrayItem(plans, (int)m);
            const cJSON *vals = cJSON_GetObjectItem(plan, "values"), *outs = cJSON_GetObjectItem(plan, "outputs");
            ls_program *p;
            ls_error err;
            ck_assert_msg(ls_pte_file_method(f, f->methods[m].name, &p, &err) == 0, "%s", err.msg);
            ls_runner *r = ls_runner_new(p, &err);
            ck_assert_msg(r, "%s: %s", f->methods[m].name, err.msg);
            ls_value *ov;
            uint32_t nout;
            ck_assert_msg(ls_runner_run(r, NULL, 0, &ov, &nout, &err) == 0, "%s: %s", f->methods[m].name, err.msg);
            ck_assert_uint_eq(nout, json_len(outs));
            for (uint32_t k = 0; k < nout; k++) {
                const cJSON *v = cJSON_GetArrayItem(vals, cJSON_GetArrayItem(outs, (int)k)->valueint);
                const char *type = cJSON_GetObjectItem(v, "val_type")->valuestring;
                const cJSON *val = cJSON_GetObjectItem(v, "val");
                const char *where = f->methods[m].name;
                if (!strcmp(type, "Int")) {
                    ck_assert_msg(ov[k].kind == LS_V_INT, "%s out %u: kind %d", where, k, ov[k].kind);
                    ck_assert_int_eq(ov[k].i, (int64_t)cJSON_GetObjectItem(val, "int_val")->valuedouble);
                } else if (!strcmp(type, "Bool")) {
                    ck_assert_msg(ov[k].kind == LS_V_BOOL, "%s out %u: kind %d", where, k, ov[k].kind);
                    ck_assert(ov[k].b == cJSON_IsTrue(cJSON_GetObjectItem(val, "bool_val")));
                } else if (!strcmp(type, "Double")) { /* flatc prints 12 decimal places */
                    ck_assert_msg(ov[k].kind == LS_V_FLOAT, "%s out %u: kind %d", where, k, ov[k].kind);
                    double want = cJSON_GetObjectItem(val, "double_val")->valuedouble;
                    ck_assert_msg(fabs(ov[k].f - want) <= 5e-13 + 1e-11 * fabs(want), "%s out %u: %.17g, want %.17g", where, k,
                                  ov[k].f, want);
                } else if (!strcmp(type, "String")) {
                    ck_assert_msg(ov[k].kind == LS_V_STRING, "%s out %u: kind %d, want a String", where, k, ov[k].kind);
                    ck_assert_str_eq(ov[k].s, cJSON_GetObjectItem(val, "string_val")->valuestring);
                    strings++;
                } else if (!strcmp(type, "Tensor")) {
                    ck_assert_msg(ov[k].kind == LS_V_TENSOR, "%s out %u: kind %d", where, k, ov[k].kind);
                    const cJSON *sz = cJSON_GetObjectItem(val, "sizes");
                    ck_assert_uint_eq(ov[k].t->ndim, json_len(sz));
                    for (uint32_t d = 0; d < ov[k].t->ndim; d++)
                        ck_assert_int_eq(ov[k].t->sizes[d], cJSON_GetArrayItem(sz, (int)d)->valueint);
                } else {
                    ck_abort_msg("%s out %u: a %s value this test does not know", where, k, type);
                }
                checked++;
            }
            for (uint32_t k = 0; k < nout; k++) ls_value_release(&ov[k]);
            free(ov);
            ls_runner_free(r);
            ls_program_unref(p);
        }
        ls_pte_file_unref(f);
        cJSON_Delete(j);
    }
    ck_assert_uint_ge(checked, 60); /* 27 constant methods of the llama, 4 of cc_const_methods, 3 of xor */
    ck_assert_uint_eq(strings, 14); /* get_kv_output_0..9_quant_attr, __et_training_fqn_forward's 4 names */
    /* info marks the method opened, a constant one among the folded too */
    char *out;
    ck_assert_int_eq(tu_runf(&out, "info %s --method get_dim", pt_path("et_stories260k_hybrid_llama_qnn", ".pte")), 0);
    ck_assert_msg(tu_contains(out, "27 constant methods (get_dim* among them"), "%s", out);
    free(out);
}
END_TEST

Suite *pte_file_suite(void)
{
    Suite *s = suite_create("pte_file");
    TCase *tc = tcase_create("pte_file");
    tcase_set_timeout(tc, 120);
    tcase_add_test(tc, methods_match_the_decodes);
    tcase_add_test(tc, qnn_llama_opens_both_methods);
    tcase_add_test(tc, named_data_and_its_readers);
    tcase_add_test(tc, external_data_given_found_or_missing);
    tcase_add_test(tc, xor_weights_come_from_its_ptd);
    tcase_add_test(tc, xor_training_step_matches_the_network_by_hand);
    tcase_add_test(tc, every_real_file_at_step_0_in_the_cli);
    tcase_add_test(tc, pte_is_its_own_step_zero);
    tcase_add_test(tc, constant_methods_return_what_the_file_stores);
    suite_add_tcase(s, tc);
    return s;
}
