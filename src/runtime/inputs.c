/* A program's user inputs and outputs, and seeded inputs for running it without .npy files. */
#include <math.h>
#include <stdlib.h>

#include "runtime.h"

uint32_t ls_program_user_inputs(const ls_program *p, const ls_node **nodes, uint32_t max)
{
    uint32_t n = 0, k = 0;
    for (uint32_t i = 0; i < p->n_nodes; i++) {
        const ls_node *nd = p->nodes[i];
        if (nd->kind != LS_NODE_PLACEHOLDER) continue;
        bool user = p->n_inputs == 0 || (k < p->n_inputs && p->inputs[k].kind == LS_IN_USER_INPUT);
        k++;
        if (!user) continue;
        if (n < max && nodes) nodes[n] = nd;
        n++;
    }
    return n;
}

uint32_t ls_program_user_outputs(const ls_program *p, const char **names, uint32_t max)
{
    const ls_node *out = ls_program_output(p);
    if (!out) return 0;
    uint32_t n = 0;
    for (uint16_t k = 0; k < out->nargs; k++) {
        uint8_t kind = p->n_outputs && k < p->n_outputs ? p->outputs[k].kind : LS_OUT_USER_OUTPUT;
        if (kind != LS_OUT_USER_OUTPUT && kind != LS_OUT_LOSS_OUTPUT) continue;
        if (n < max && names) {
            const ls_arg *a = &out->args[k];
            const ls_node *src = a->kind == LS_ARG_NODE ? ls_program_node(p, a->v.node) : NULL;
            names[n] = src ? src->name : NULL;
        }
        n++;
    }
    return n;
}

/* splitmix64: small, good enough for test inputs, and the same everywhere */
static uint64_t next_u64(uint64_t *s)
{
    uint64_t z = (*s += 0x9E3779B97F4A7C15ull);
    z = (z ^ (z >> 30)) * 0xBF58476D1CE4E5B9ull;
    z = (z ^ (z >> 27)) * 0x94D049BB133111EBull;
    return z ^ (z >> 31);
}

static double next_normal(uint64_t *s)
{
    /* Box-Muller on two uniforms in (0, 1] */
    double u1 = ((double)(next_u64(s) >> 11) + 1.0) / 9007199254740992.0;
    double u2 = (double)(next_u64(s) >> 11) / 9007199254740992.0;
    return sqrt(-2.0 * log(u1)) * cos(2.0 * M_PI * u2);
}

int ls_make_inputs(const ls_program *p, uint64_t seed, int64_t step, ls_value **inputs, uint32_t *n, ls_error *err)
{
    *inputs = NULL;
    *n = 0;
    uint32_t count = ls_program_user_inputs(p, NULL, 0);
    const ls_node **nodes = ls_calloc(count ? count : 1, sizeof *nodes);
    ls_program_user_inputs(p, nodes, count);
    ls_value *vals = ls_calloc(count ? count : 1, sizeof *vals);
    for (uint32_t k = 0; k < count; k++) {
        const ls_node *ph = nodes[k];
        if (ph->val_kind != LS_VAL_TENSOR || ph->nvals < 1 || ph->vals[0].dtype == LS_DT_UNKNOWN) {
            for (uint32_t j = 0; j < k; j++) ls_value_release(&vals[j]);
            free(vals);
            free(nodes);
            return ls_fail(err, "%s: input '%s' has no dtype and shape in the program; give it a value from a .npy file",
                           p->path ? p->path : p->name, ph->name);
        }
        ls_tmeta m = ph->vals[0];
        for (int d = 0; d < m.ndim; d++)
            if (m.sizes[d] < 0) m.sizes[d] = 1;
        ls_error e2;
        ls_tensor *t = ls_tensor_new(m.dtype, m.ndim, m.sizes, &e2);
        if (!t) {
            for (uint32_t j = 0; j < k; j++) ls_value_release(&vals[j]);
            free(vals);
            free(nodes);
            /* out of memory stays a need */
            return ls_fail_kind(err, e2.code, "%s: input '%s': %s", p->path ? p->path : p->name, ph->name, e2.msg);
        }
        uint64_t s = seed * 0x2545F4914F6CDD1Dull ^ (uint64_t)step * 0x9E3779B97F4A7C15ull ^ (uint64_t)(k + 1) << 32;
        for (int64_t i = 0; i < t->numel; i++) {
            if (ls_dtype_is_float(m.dtype)) ls_tensor_set_f64(t, i, next_normal(&s));
            else if (m.dtype == LS_DT_BOOL) ls_tensor_set_f64(t, i, i % 2 == 0);
            else ls_tensor_set_f64(t, i, (double)step);
        }
        vals[k] = ls_value_tensor(t);
    }
    free(nodes);
    *inputs = vals;
    *n = count;
    return 0;
}
