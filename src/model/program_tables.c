/* A program's tables beside its nodes: the graph signature (input and output specs), the state
 * dict, the constants, the lowered submodules and the delegation tags. The nodes are program.c's. */
#include "program.h"
#include <stddef.h>
#include <stdlib.h>
#include <string.h>
#include "named_data.h"
#include "namer.h"

/* ---- submodules */

void ls_submodule_copy(ls_submodule *d, const ls_submodule *s)
{
    *d = *s;
    d->program = ls_program_ref(s->program);
    d->processed = ls_blob_ref(s->processed);
    d->specs = NULL;
    if (s->nspecs) {
        d->specs = ls_malloc(sizeof *d->specs * s->nspecs);
        for (uint32_t i = 0; i < s->nspecs; i++) {
            d->specs[i].key = s->specs[i].key;
            d->specs[i].value = ls_blob_ref(s->specs[i].value);
        }
    }
}

void ls_submodule_release(ls_submodule *s)
{
    ls_program_unref(s->program);
    ls_blob_unref(s->processed);
    for (uint32_t i = 0; i < s->nspecs; i++) ls_blob_unref(s->specs[i].value);
    free(s->specs);
}

/* ---- signature and data */

int32_t ls_program_input_spec(const ls_program *p, const char *placeholder)
{
    const char *n = ls_intern(placeholder);
    for (uint32_t i = 0; i < p->n_inputs; i++)
        if (p->inputs[i].name == n) return (int32_t)i;
    return -1;
}

int32_t ls_program_output_spec(const ls_program *p, const char *name)
{
    const char *n = ls_intern(name);
    for (uint32_t i = 0; i < p->n_outputs; i++)
        if (p->outputs[i].name == n) return (int32_t)i;
    return -1;
}

void ls_program_set_inputs(ls_program *p, const ls_input_spec *specs, uint32_t n)
{
    ls_input_spec *ns = ls_malloc(sizeof *ns * (n ? n : 1));
    for (uint32_t i = 0; i < n; i++) {
        ns[i] = specs[i];
        ls_arg_copy(&ns[i].value, &specs[i].value);
    }
    for (uint32_t i = 0; i < p->n_inputs; i++) ls_arg_free(&p->inputs[i].value);
    free(p->inputs);
    p->inputs = ns;
    p->n_inputs = n;
}

void ls_program_set_outputs(ls_program *p, const ls_output_spec *specs, uint32_t n)
{
    ls_output_spec *ns = ls_malloc(sizeof *ns * (n ? n : 1));
    if (n) memcpy(ns, specs, sizeof *ns * n);
    free(p->outputs);
    p->outputs = ns;
    p->n_outputs = n;
}

static ls_named_tensor *find_named(ls_named_tensor *v, uint32_t n, const char *target)
{
    const char *t = ls_intern(target);
    for (uint32_t i = 0; i < n; i++)
        if (v[i].name == t) return &v[i];
    return NULL;
}

ls_named_tensor *ls_program_state(const ls_program *p, const char *target)
{
    return find_named(p->state_dict, p->n_state, target);
}

ls_named_tensor *ls_program_constant(const ls_program *p, const char *target)
{
    return find_named(p->constants, p->n_constants, target);
}

ls_named_tensor *ls_program_spec_data(const ls_program *p, const ls_input_spec *s)
{
    if (!ls_input_kind_holds_data(s->kind)) return NULL;
    return ls_input_in_state(s->kind, s->persistent) ? ls_program_state(p, s->target) : ls_program_constant(p, s->target);
}

static void put_named(ls_named_tensor **v, uint32_t *n, const char *target, ls_tensor *t, const ls_tmeta *meta)
{
    ls_named_tensor *e = find_named(*v, *n, target);
    if (!e) {
        *v = ls_realloc(*v, sizeof **v * (*n + 1));
        e = &(*v)[(*n)++];
        e->name = ls_intern(target);
        e->t = NULL;
    }
    ls_tensor *old = e->t;
    e->t = ls_tensor_ref(t);
    ls_tensor_unref(old);
    if (meta) e->meta = *meta;
    else if (t) ls_tensor_meta(t, &e->meta);
}

static bool drop_named(ls_named_tensor *v, uint32_t *n, const char *target)
{
    ls_named_tensor *e = find_named(v, *n, target);
    if (!e) return false;
    ls_tensor_unref(e->t);
    size_t i = (size_t)(e - v);
    memmove(v + i, v + i + 1, sizeof *v * (*n - i - 1));
    (*n)--;
    return true;
}

void ls_program_put_state(ls_program *p, const char *target, ls_tensor *t, const ls_tmeta *meta)
{
    put_named(&p->state_dict, &p->n_state, target, t, meta);
}

void ls_program_put_constant(ls_program *p, const char *target, ls_tensor *t, const ls_tmeta *meta)
{
    put_named(&p->constants, &p->n_constants, target, t, meta);
}

bool ls_program_drop_state(ls_program *p, const char *target)
{
    return drop_named(p->state_dict, &p->n_state, target);
}

bool ls_program_drop_constant(ls_program *p, const char *target)
{
    return drop_named(p->constants, &p->n_constants, target);
}

ls_submodule *ls_program_sub(const ls_program *p, const char *name)
{
    const char *n = ls_intern(name);
    for (uint32_t i = 0; i < p->n_subs; i++)
        if (p->subs[i].name == n) return &p->subs[i];
    return NULL;
}

void ls_program_add_sub(ls_program *p, const ls_submodule *sub)
{
    p->subs = ls_realloc(p->subs, sizeof *p->subs * (p->n_subs + 1));
    ls_submodule_copy(&p->subs[p->n_subs++], sub);
}

uint64_t ls_program_weight_bytes(const ls_program *p)
{
    uint64_t total = 0;
    for (uint32_t i = 0; i < p->n_state; i++) {
        int64_t n = ls_tmeta_numel(&p->state_dict[i].meta);
        if (n > 0) total += (uint64_t)n * ls_dtype_size(p->state_dict[i].meta.dtype);
    }
    for (uint32_t i = 0; i < p->n_constants; i++) {
        int64_t n = ls_tmeta_numel(&p->constants[i].meta);
        if (n > 0) total += (uint64_t)n * ls_dtype_size(p->constants[i].meta.dtype);
    }
    return total;
}

const char *ls_program_tag_backend(const ls_program *p, const char *tag)
{
    const char *t = ls_intern(tag);
    for (uint32_t i = 0; i < p->n_tags; i++)
        if (p->tags[i].tag == t) return p->tags[i].backend_id;
    return NULL;
}

void ls_program_add_tag(ls_program *p, const char *tag, const char *backend_id)
{
    const char *t = ls_intern(tag);
    for (uint32_t i = 0; i < p->n_tags; i++)
        if (p->tags[i].tag == t) {
            p->tags[i].backend_id = ls_intern(backend_id);
            return;
        }
    p->tags = ls_realloc(p->tags, sizeof *p->tags * (p->n_tags + 1));
    p->tags[p->n_tags].tag = t;
    p->tags[p->n_tags].backend_id = ls_intern(backend_id);
    p->n_tags++;
}

ls_named_data *ls_program_named_data_mut(ls_program *p)
{
    p->named_data = p->named_data ? ls_named_data_own(p->named_data) : ls_named_data_new();
    return p->named_data;
}
