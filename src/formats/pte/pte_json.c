/* JSON dumps of .pte and .ptd models in flatc's --strict-json --defaults-json shape, so they
 * compare with `flatc --json` decodes: schema field order, enums by name, unions as
 * <field>_type + value, every scalar of a present table, absent tables/vectors/strings left out. */
#include "pte.h"

#include <math.h>
#include <stdio.h>
#include <string.h>

typedef struct jw {
    ls_buf *b;
    int depth;
    bool comma; /* a value was written at this level: the next one needs a comma */
} jw;

static void newline(jw *w)
{
    ls_buf_putc(w->b, '\n');
    for (int i = 0; i < w->depth; i++) ls_buf_puts(w->b, "  ");
}

/* JSON string: valid UTF-8 passes through, control characters and stray bytes are escaped. */
static void put_str(ls_buf *b, const char *s)
{
    const unsigned char *p = (const unsigned char *)s;
    ls_buf_putc(b, '"');
    while (*p) {
        unsigned c = *p;
        int len = c < 0x80 ? 1 : (c >> 5) == 6 ? 2 : (c >> 4) == 14 ? 3 : (c >> 3) == 30 ? 4 : 0;
        bool ok = len > 0;
        for (int k = 1; ok && k < len; k++) ok = (p[k] & 0xc0) == 0x80;
        if (len > 1 && ok) {
            ls_buf_putn(b, (const char *)p, (size_t)len);
            p += len;
            continue;
        }
        if (c == '"') ls_buf_puts(b, "\\\"");
        else if (c == '\\') ls_buf_puts(b, "\\\\");
        else if (c == '\n') ls_buf_puts(b, "\\n");
        else if (c == '\r') ls_buf_puts(b, "\\r");
        else if (c == '\t') ls_buf_puts(b, "\\t");
        else if (c < 0x20 || c >= 0x80) ls_buf_printf(b, "\\u%04X", c);
        else ls_buf_putc(b, (char)c);
        p++;
    }
    ls_buf_putc(b, '"');
}

static void key(jw *w, const char *k)
{
    if (w->comma) ls_buf_putc(w->b, ',');
    newline(w);
    put_str(w->b, k);
    ls_buf_puts(w->b, ": ");
    w->comma = true;
}

static void elem(jw *w)
{
    if (w->comma) ls_buf_putc(w->b, ',');
    newline(w);
    w->comma = true;
}

static void open_(jw *w, char c)
{
    ls_buf_putc(w->b, c);
    w->depth++;
    w->comma = false;
}

static void close_(jw *w, char c)
{
    w->depth--;
    newline(w);
    ls_buf_putc(w->b, c);
    w->comma = true;
}

static void k_int(jw *w, const char *k, long long v)
{
    key(w, k);
    ls_buf_printf(w->b, "%lld", v);
}

static void k_uint(jw *w, const char *k, unsigned long long v)
{
    key(w, k);
    ls_buf_printf(w->b, "%llu", v);
}

static void k_bool(jw *w, const char *k, bool v)
{
    key(w, k);
    ls_buf_puts(w->b, v ? "true" : "false");
}

static void put_double(ls_buf *b, double d)
{
    if (isnan(d)) {
        ls_buf_puts(b, "\"nan\"");
        return;
    }
    if (isinf(d)) {
        ls_buf_puts(b, d > 0 ? "\"inf\"" : "\"-inf\"");
        return;
    }
    char s[40];
    snprintf(s, sizeof s, "%.17g", d);
    ls_buf_puts(b, s);
    if (!strpbrk(s, ".e")) ls_buf_puts(b, ".0");
}

static void k_str(jw *w, const char *k, const char *s)
{
    if (!s) return; /* absent strings are left out, as flatc does */
    key(w, k);
    put_str(w->b, s);
}

/* An enum: its name when the schema defines the value, else the number (as flatc prints it). */
static void k_enum(jw *w, const char *k, int v, const char *name)
{
    key(w, k);
    if (name) put_str(w->b, name);
    else ls_buf_printf(w->b, "%d", v);
}

static const char *name_of(int v, const char *const *names, int n)
{
    return v >= 0 && v < n ? names[v] : NULL;
}
#define NAME(v, ...) \
    name_of(v, (const char *const[]){__VA_ARGS__}, sizeof((const char *const[]){__VA_ARGS__}) / sizeof(char *))

/* Vectors of scalars, given as (pointer, count, present). */
#define K_VEC(w, k, vec, fmt, cast)                                                   \
    do {                                                                              \
        if ((vec).present || (vec).n) {                                               \
            key(w, k);                                                                \
            open_(w, '[');                                                            \
            for (uint32_t i_ = 0; i_ < (vec).n; i_++) {                               \
                elem(w);                                                              \
                ls_buf_printf((w)->b, fmt, (cast)(vec).v[i_]);                        \
            }                                                                         \
            close_(w, ']');                                                           \
        }                                                                             \
    } while (0)

static void k_bools(jw *w, const char *k, const ls_pte_u8s *v)
{
    if (!v->present && !v->n) return;
    key(w, k);
    open_(w, '[');
    for (uint32_t i = 0; i < v->n; i++) {
        elem(w);
        ls_buf_puts(w->b, v->v[i] ? "true" : "false");
    }
    close_(w, ']');
}

static void k_doubles(jw *w, const char *k, const ls_pte_f64s *v)
{
    if (!v->present && !v->n) return;
    key(w, k);
    open_(w, '[');
    for (uint32_t i = 0; i < v->n; i++) {
        elem(w);
        put_double(w->b, v->v[i]);
    }
    close_(w, ']');
}

/* ---------------------------------------------------------------- .pte */

static void tensor_json(jw *w, const ls_pte_tensor *t)
{
    k_enum(w, "scalar_type", t->scalar_type, ls_et_scalar_type_name(t->scalar_type));
    k_int(w, "storage_offset", t->storage_offset);
    K_VEC(w, "sizes", t->sizes, "%d", int);
    K_VEC(w, "dim_order", t->dim_order, "%u", unsigned);
    k_bool(w, "requires_grad", t->requires_grad);
    k_uint(w, "data_buffer_idx", t->data_buffer_idx);
    if (t->has_allocation_info) {
        key(w, "allocation_info");
        open_(w, '{');
        k_uint(w, "memory_id", t->allocation_info.memory_id);
        k_uint(w, "memory_offset_low", t->allocation_info.memory_offset_low);
        k_uint(w, "memory_offset_high", t->allocation_info.memory_offset_high);
        close_(w, '}');
    }
    k_int(w, "layout", t->layout);
    k_enum(w, "shape_dynamism", t->shape_dynamism,
           NAME(t->shape_dynamism, "STATIC", "DYNAMIC_BOUND", "DYNAMIC_UNBOUND"));
    if (t->has_extra_tensor_info) {
        const ls_pte_extra_tensor_info *x = &t->extra_tensor_info;
        key(w, "extra_tensor_info");
        open_(w, '{');
        k_uint(w, "mutable_data_segments_idx", (unsigned long long)x->mutable_data_segments_idx);
        k_str(w, "fully_qualified_name", x->fully_qualified_name);
        k_enum(w, "location", x->location, NAME(x->location, "SEGMENT", "EXTERNAL"));
        k_enum(w, "device_type", x->device_type, NAME(x->device_type, "CPU", "CUDA"));
        k_int(w, "device_index", x->device_index);
        close_(w, '}');
    }
}

static void value_json(jw *w, const ls_pte_value *v)
{
    k_enum(w, "val_type", v->kind, ls_pte_val_kind_name(v->kind));
    if (v->kind == LS_PTE_VAL_NONE) return;
    key(w, "val");
    open_(w, '{');
    switch (v->kind) {
    case LS_PTE_VAL_INT: k_int(w, "int_val", (long long)v->int_val); break;
    case LS_PTE_VAL_BOOL: k_bool(w, "bool_val", v->bool_val); break;
    case LS_PTE_VAL_DOUBLE:
        key(w, "double_val");
        put_double(w->b, v->double_val);
        break;
    case LS_PTE_VAL_TENSOR: tensor_json(w, &v->tensor); break;
    case LS_PTE_VAL_STRING: k_str(w, "string_val", v->string_val); break;
    case LS_PTE_VAL_INT_LIST: K_VEC(w, "items", v->int_list, "%lld", long long); break;
    case LS_PTE_VAL_DOUBLE_LIST: k_doubles(w, "items", &v->double_list); break;
    case LS_PTE_VAL_BOOL_LIST: k_bools(w, "items", &v->bool_list); break;
    case LS_PTE_VAL_TENSOR_LIST:
    case LS_PTE_VAL_OPTIONAL_TENSOR_LIST: K_VEC(w, "items", v->tensor_list, "%d", int); break;
    default: break;
    }
    close_(w, '}');
}

static void instruction_json(jw *w, const ls_pte_instruction *in)
{
    k_enum(w, "instr_args_type", in->kind, ls_pte_instr_kind_name(in->kind));
    if (in->kind == LS_PTE_INSTR_NONE) return;
    key(w, "instr_args");
    open_(w, '{');
    switch (in->kind) {
    case LS_PTE_KERNEL_CALL:
        k_int(w, "op_index", in->kernel_call.op_index);
        K_VEC(w, "args", in->kernel_call.args, "%d", int);
        break;
    case LS_PTE_DELEGATE_CALL:
        k_int(w, "delegate_index", in->delegate_call.delegate_index);
        K_VEC(w, "args", in->delegate_call.args, "%d", int);
        break;
    case LS_PTE_MOVE_CALL:
        k_int(w, "move_from", in->move_call.move_from);
        k_int(w, "move_to", in->move_call.move_to);
        break;
    case LS_PTE_JUMP_FALSE_CALL:
        k_int(w, "cond_value_index", in->jump_false_call.cond_value_index);
        k_int(w, "destination_instruction", in->jump_false_call.destination_instruction);
        break;
    default: k_int(w, "value_index", in->free_call.value_index); break;
    }
    close_(w, '}');
}

/* Vectors of tables: `vec` has v, n, present; `body` writes one element `e`. */
#define K_TABLES(w, k, vec, e, body)                       \
    do {                                                   \
        if ((vec).present || (vec).n) {                    \
            key(w, k);                                     \
            open_(w, '[');                                 \
            for (uint32_t j_ = 0; j_ < (vec).n; j_++) {    \
                const __typeof__(*(vec).v) *e = &(vec).v[j_]; \
                elem(w);                                   \
                open_(w, '{');                             \
                body;                                      \
                close_(w, '}');                            \
            }                                              \
            close_(w, ']');                                \
        }                                                  \
    } while (0)

static void frame_list_json(jw *w, const ls_pte_frame_list *fl)
{
    K_TABLES(w, "items", fl->items, f, {
        k_str(w, "filename", f->filename);
        k_int(w, "lineno", f->lineno);
        k_str(w, "name", f->name);
        k_str(w, "context", f->context);
    });
}

static void chain_json(jw *w, const ls_pte_chain *c)
{
    K_VEC(w, "inputs", c->inputs, "%d", int);
    K_VEC(w, "outputs", c->outputs, "%d", int);
    K_TABLES(w, "instructions", c->instructions, in, instruction_json(w, in));
    K_TABLES(w, "stacktrace", c->stacktrace, fl, frame_list_json(w, fl));
}

static void delegate_json(jw *w, const ls_pte_delegate *d)
{
    k_str(w, "id", d->id);
    if (d->has_processed) {
        key(w, "processed");
        open_(w, '{');
        k_enum(w, "location", d->processed.location, NAME(d->processed.location, "INLINE", "SEGMENT"));
        k_uint(w, "index", d->processed.index);
        close_(w, '}');
    }
    K_TABLES(w, "compile_specs", d->compile_specs, cs, {
        k_str(w, "key", cs->key);
        K_VEC(w, "value", cs->value, "%u", unsigned);
    });
}

static void plan_json(jw *w, const ls_pte_plan *p)
{
    k_str(w, "name", p->name);
    if (p->has_container_meta_type) {
        key(w, "container_meta_type");
        open_(w, '{');
        k_str(w, "encoded_inp_str", p->container_meta_type.encoded_inp_str);
        k_str(w, "encoded_out_str", p->container_meta_type.encoded_out_str);
        close_(w, '}');
    }
    K_TABLES(w, "values", p->values, v, value_json(w, v));
    K_VEC(w, "inputs", p->inputs, "%d", int);
    K_VEC(w, "outputs", p->outputs, "%d", int);
    K_TABLES(w, "chains", p->chains, c, chain_json(w, c));
    K_TABLES(w, "operators", p->operators, op, {
        k_str(w, "name", op->name);
        k_str(w, "overload", op->overload);
    });
    K_TABLES(w, "delegates", p->delegates, d, delegate_json(w, d));
    K_VEC(w, "non_const_buffer_sizes", p->non_const_buffer_sizes, "%lld", long long);
    K_TABLES(w, "non_const_buffer_device", p->non_const_buffer_device, bd, {
        k_int(w, "buffer_idx", bd->buffer_idx);
        k_enum(w, "device_type", bd->device_type, NAME(bd->device_type, "CPU", "CUDA"));
        k_int(w, "device_index", bd->device_index);
    });
}

static void subsegments_json(jw *w, const ls_pte_subsegments *s)
{
    k_uint(w, "segment_index", s->segment_index);
    K_VEC(w, "offsets", s->offsets, "%llu", unsigned long long);
}

static void data_segments_json(jw *w, const ls_pte_data_segments *segs)
{
    K_TABLES(w, "segments", *segs, s, {
        k_uint(w, "offset", (unsigned long long)s->offset);
        k_uint(w, "size", (unsigned long long)s->size);
    });
}

void ls_pte_to_json(const ls_pte *p, ls_buf *out)
{
    jw w = {out, 0, false};
    open_(&w, '{');
    k_uint(&w, "version", p->version);
    K_TABLES(&w, "execution_plan", p->execution_plan, plan, plan_json(&w, plan));
    K_TABLES(&w, "constant_buffer", p->constant_buffer, b, K_VEC(&w, "storage", b->storage, "%u", unsigned));
    K_TABLES(&w, "backend_delegate_data", p->backend_delegate_data, b, K_VEC(&w, "data", b->storage, "%u", unsigned));
    data_segments_json(&w, &p->segments);
    if (p->has_constant_segment) {
        key(&w, "constant_segment");
        open_(&w, '{');
        subsegments_json(&w, &p->constant_segment);
        close_(&w, '}');
    }
    K_TABLES(&w, "mutable_data_segments", p->mutable_data_segments, s, subsegments_json(&w, s));
    K_TABLES(&w, "named_data", p->named_data, nd, {
        k_str(&w, "key", nd->key);
        k_uint(&w, "segment_index", nd->segment_index);
    });
    close_(&w, '}');
    ls_buf_putc(out, '\n');
}

/* ---------------------------------------------------------------- .ptd */

static void layout_json(jw *w, const ls_ptd_entry *e)
{
    k_enum(w, "scalar_type", e->scalar_type, ls_et_scalar_type_name(e->scalar_type));
    K_VEC(w, "sizes", e->sizes, "%d", int);
    K_VEC(w, "dim_order", e->dim_order, "%u", unsigned);
}

void ls_ptd_to_json(const ls_ptd *d, ls_buf *out)
{
    jw w = {out, 0, false};
    open_(&w, '{');
    k_uint(&w, "version", d->version);
    if (d->feb2025) {
        k_uint(&w, "tensor_alignment", d->tensor_alignment);
        K_TABLES(&w, "tensors", d->named_data, e, {
            k_str(&w, "fully_qualified_name", e->key);
            layout_json(&w, e);
            k_uint(&w, "segment_index", e->segment_index);
            k_uint(&w, "offset", (unsigned long long)e->offset);
        });
        data_segments_json(&w, &d->segments);
    } else {
        data_segments_json(&w, &d->segments);
        K_TABLES(&w, "named_data", d->named_data, e, {
            k_str(&w, "key", e->key);
            k_uint(&w, "segment_index", e->segment_index);
            if (e->has_tensor_layout) {
                key(&w, "tensor_layout");
                open_(&w, '{');
                layout_json(&w, e);
                close_(&w, '}');
            }
        });
    }
    close_(&w, '}');
    ls_buf_putc(out, '\n');
}
