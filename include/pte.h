/* ExecuTorch program files (.pte) and external data files (.ptd) as plain C structs.
 *
 * The model mirrors the flatbuffer schema table by table (shared/reference/pte-layout.md), in
 * the same field order and with the same names. Everything is owned by the struct: strings,
 * vectors and segment bytes are copied out of the file, and ls_pte_free frees it all.
 *
 * Absent versus empty: FlatBuffers tells "no vector" from "empty vector" and flatc's JSON shows
 * the difference, so every vector carries `present` (a vector with n > 0 counts as present
 * whatever the flag says), strings are NULL when absent, and optional sub-tables carry a
 * `has_...` flag. Scalars absent from the file read as their schema default.
 *
 * Enum fields keep the raw value from the file (a newer writer may use values this reader does
 * not know); the named constants below are the values the schema defines. */
#ifndef LS_PTE_H
#define LS_PTE_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#include "common.h"

/* ---------------------------------------------------------------- vectors */

typedef struct ls_pte_u8s { uint8_t *v; uint32_t n; bool present; } ls_pte_u8s;
typedef struct ls_pte_i32s { int32_t *v; uint32_t n; bool present; } ls_pte_i32s;
typedef struct ls_pte_i64s { int64_t *v; uint32_t n; bool present; } ls_pte_i64s;
typedef struct ls_pte_u64s { uint64_t *v; uint32_t n; bool present; } ls_pte_u64s;
typedef struct ls_pte_f64s { double *v; uint32_t n; bool present; } ls_pte_f64s;
#define LS_PTE_VEC_OF(T, name) typedef struct name { T *v; uint32_t n; bool present; } name

/* ---------------------------------------------------------------- enums */

/* ScalarType (c10 numbering); ls_dtype_from_et() maps the common ones to ls_dtype. */
enum {
    LS_ET_BYTE = 0, LS_ET_CHAR = 1, LS_ET_SHORT = 2, LS_ET_INT = 3, LS_ET_LONG = 4, LS_ET_HALF = 5,
    LS_ET_FLOAT = 6, LS_ET_DOUBLE = 7, LS_ET_BOOL = 11, LS_ET_QINT8 = 12, LS_ET_QUINT8 = 13,
    LS_ET_QINT32 = 14, LS_ET_BFLOAT16 = 15, LS_ET_QUINT4X2 = 16, LS_ET_QUINT2X4 = 17, LS_ET_BITS16 = 22,
    LS_ET_FLOAT8E5M2 = 23, LS_ET_FLOAT8E4M3FN = 24, LS_ET_FLOAT8E5M2FNUZ = 25, LS_ET_FLOAT8E4M3FNUZ = 26,
    LS_ET_UINT16 = 27, LS_ET_UINT32 = 28, LS_ET_UINT64 = 29,
};
const char *ls_et_scalar_type_name(int code); /* "FLOAT"...; NULL when unknown */
size_t ls_et_scalar_type_size(int code);       /* bytes per element; 0 when unknown */

enum { LS_PTE_STATIC = 0, LS_PTE_DYNAMIC_BOUND = 1, LS_PTE_DYNAMIC_UNBOUND = 2 }; /* TensorShapeDynamism */
enum { LS_PTE_TENSOR_SEGMENT = 0, LS_PTE_TENSOR_EXTERNAL = 1 };                   /* TensorDataLocation */
enum { LS_PTE_DEVICE_CPU = 0, LS_PTE_DEVICE_CUDA = 1 };                           /* DeviceType */
enum { LS_PTE_INLINE = 0, LS_PTE_SEGMENT = 1 };                                   /* DataLocation */

/* KernelTypes union tags (EValue.val_type). */
typedef enum ls_pte_val_kind {
    LS_PTE_VAL_NONE = 0,
    LS_PTE_VAL_NULL = 1,
    LS_PTE_VAL_INT = 2,
    LS_PTE_VAL_BOOL = 3,
    LS_PTE_VAL_DOUBLE = 4,
    LS_PTE_VAL_TENSOR = 5,
    LS_PTE_VAL_STRING = 6,
    LS_PTE_VAL_INT_LIST = 7,
    LS_PTE_VAL_DOUBLE_LIST = 8,
    LS_PTE_VAL_BOOL_LIST = 9,
    LS_PTE_VAL_TENSOR_LIST = 10,
    LS_PTE_VAL_OPTIONAL_TENSOR_LIST = 11,
} ls_pte_val_kind;
const char *ls_pte_val_kind_name(int kind); /* "Tensor"...; NULL when unknown */

/* InstructionArguments union tags (Instruction.instr_args_type). */
typedef enum ls_pte_instr_kind {
    LS_PTE_INSTR_NONE = 0,
    LS_PTE_KERNEL_CALL = 1,
    LS_PTE_DELEGATE_CALL = 2,
    LS_PTE_MOVE_CALL = 3,
    LS_PTE_JUMP_FALSE_CALL = 4,
    LS_PTE_FREE_CALL = 5,
} ls_pte_instr_kind;
const char *ls_pte_instr_kind_name(int kind);

/* ---------------------------------------------------------------- tables */

typedef struct ls_pte_allocation {
    uint32_t memory_id;          /* arena: index into non_const_buffer_sizes */
    uint32_t memory_offset_low;  /* offset in the arena = high << 32 | low */
    uint32_t memory_offset_high;
} ls_pte_allocation;

typedef struct ls_pte_extra_tensor_info {
    uint64_t mutable_data_segments_idx;
    char *fully_qualified_name; /* key in a .ptd when location is EXTERNAL */
    int8_t location;            /* LS_PTE_TENSOR_SEGMENT / _EXTERNAL */
    int8_t device_type;         /* default CPU */
    int8_t device_index;
} ls_pte_extra_tensor_info;

typedef struct ls_pte_tensor {
    int8_t scalar_type; /* ExecuTorch ScalarType code */
    int32_t storage_offset;
    ls_pte_i32s sizes;
    ls_pte_u8s dim_order;
    bool requires_grad;
    uint32_t data_buffer_idx; /* > 0: constant (or initial mutable state), see ls_pte_tensor_bytes */
    bool has_allocation_info;
    ls_pte_allocation allocation_info; /* planned: lives in an arena */
    int8_t layout;
    int8_t shape_dynamism;
    bool has_extra_tensor_info;
    ls_pte_extra_tensor_info extra_tensor_info;
} ls_pte_tensor;

typedef struct ls_pte_value {
    ls_pte_val_kind kind; /* the union tag; a kind other than NONE always has its value */
    union {
        int64_t int_val;
        bool bool_val;
        double double_val;
        char *string_val;       /* NULL when the String table has no string */
        ls_pte_tensor tensor;
        ls_pte_i64s int_list;   /* items are value indices (boxed ints), not literals */
        ls_pte_f64s double_list;
        ls_pte_u8s bool_list;   /* 0 / 1 */
        ls_pte_i32s tensor_list; /* TensorList and OptionalTensorList: value indices, -1 = None */
    };
} ls_pte_value;
LS_PTE_VEC_OF(ls_pte_value, ls_pte_values);

typedef struct ls_pte_instruction {
    ls_pte_instr_kind kind;
    union {
        struct { int32_t op_index; ls_pte_i32s args; } kernel_call;
        struct { int32_t delegate_index; ls_pte_i32s args; } delegate_call;
        struct { int32_t move_from, move_to; } move_call;
        struct { int32_t cond_value_index, destination_instruction; } jump_false_call;
        struct { int32_t value_index; } free_call;
    };
} ls_pte_instruction;
LS_PTE_VEC_OF(ls_pte_instruction, ls_pte_instructions);

typedef struct ls_pte_frame {
    char *filename;
    int32_t lineno;
    char *name;
    char *context;
} ls_pte_frame;
LS_PTE_VEC_OF(ls_pte_frame, ls_pte_frames);

typedef struct ls_pte_frame_list { ls_pte_frames items; } ls_pte_frame_list;
LS_PTE_VEC_OF(ls_pte_frame_list, ls_pte_frame_lists);

typedef struct ls_pte_chain {
    ls_pte_i32s inputs, outputs;
    ls_pte_instructions instructions;
    ls_pte_frame_lists stacktrace; /* one FrameList per instruction, when emitted */
} ls_pte_chain;
LS_PTE_VEC_OF(ls_pte_chain, ls_pte_chains);

typedef struct ls_pte_operator { char *name, *overload; } ls_pte_operator;
LS_PTE_VEC_OF(ls_pte_operator, ls_pte_operators);

typedef struct ls_pte_compile_spec { char *key; ls_pte_u8s value; } ls_pte_compile_spec;
LS_PTE_VEC_OF(ls_pte_compile_spec, ls_pte_compile_specs);

typedef struct ls_pte_delegate {
    char *id; /* backend name, e.g. "XnnpackBackend" */
    bool has_processed;
    struct {
        int8_t location; /* LS_PTE_INLINE: backend_delegate_data[index]; LS_PTE_SEGMENT: segments[index] */
        uint32_t index;
    } processed;
    ls_pte_compile_specs compile_specs;
} ls_pte_delegate;
LS_PTE_VEC_OF(ls_pte_delegate, ls_pte_delegates);

typedef struct ls_pte_buffer_device {
    int32_t buffer_idx;
    int8_t device_type;
    int8_t device_index;
} ls_pte_buffer_device;
LS_PTE_VEC_OF(ls_pte_buffer_device, ls_pte_buffer_devices);

typedef struct ls_pte_plan {
    char *name;
    bool has_container_meta_type;
    struct { char *encoded_inp_str, *encoded_out_str; } container_meta_type; /* pytree specs */
    ls_pte_values values;
    ls_pte_i32s inputs, outputs; /* value indices */
    ls_pte_chains chains;
    ls_pte_operators operators;
    ls_pte_delegates delegates;
    ls_pte_i64s non_const_buffer_sizes; /* arena sizes by memory_id; [0] is a placeholder */
    ls_pte_buffer_devices non_const_buffer_device;
} ls_pte_plan;
LS_PTE_VEC_OF(ls_pte_plan, ls_pte_plans);

typedef struct ls_pte_buffer { ls_pte_u8s storage; } ls_pte_buffer; /* Buffer and BackendDelegateInlineData */
LS_PTE_VEC_OF(ls_pte_buffer, ls_pte_buffers);

typedef struct ls_pte_data_segment { uint64_t offset, size; } ls_pte_data_segment;
LS_PTE_VEC_OF(ls_pte_data_segment, ls_pte_data_segments);

typedef struct ls_pte_subsegments {
    uint32_t segment_index;
    ls_pte_u64s offsets; /* entry i starts at offsets[i] inside the segment */
} ls_pte_subsegments;
LS_PTE_VEC_OF(ls_pte_subsegments, ls_pte_subsegments_list);

typedef struct ls_pte_named_data { char *key; uint32_t segment_index; } ls_pte_named_data;
LS_PTE_VEC_OF(ls_pte_named_data, ls_pte_named_data_list);

/* The bytes of one segment and the alignment it asks for when written (0: the default 128):
 * owned (freed with free) or, with owner set, borrowed from a reference-counted blob (the
 * emitter hands a delegate's processed blob over without copying it). */
typedef struct ls_pte_blob {
    uint8_t *v;
    uint64_t n;
    uint32_t alignment;
    struct ls_blob *owner;
} ls_pte_blob;
/* Releases a segment's bytes, whichever way they are held. */
void ls_pte_blob_release(ls_pte_blob *b);

typedef struct ls_pte {
    char *name; /* the file name given to the reader, for messages (may be NULL) */

    /* Program */
    uint32_t version;
    ls_pte_plans execution_plan;
    ls_pte_buffers constant_buffer;       /* deprecated inline constants */
    ls_pte_buffers backend_delegate_data; /* inline delegate blobs (.data) */
    ls_pte_data_segments segments;        /* offsets relative to segment_base_offset */
    bool has_constant_segment;
    ls_pte_subsegments constant_segment;
    ls_pte_subsegments_list mutable_data_segments;
    ls_pte_named_data_list named_data;

    /* segment_data[i] holds the bytes of segments.v[i]; n_segment_data == segments.n after a read.
     * The writer lays the segments out from these and recomputes segments[] offsets and sizes. */
    ls_pte_blob *segment_data;
    uint32_t n_segment_data;

    /* The file around the flatbuffer, as read (the writer fills in its own). */
    bool has_extended_header;
    uint64_t program_size, segment_base_offset, segment_data_size;
} ls_pte;

/* ---------------------------------------------------------------- reading and writing */

/* Reads and verifies a whole .pte. name is used in messages ("FILE: PLACE: problem"). On error
 * *pte is left empty (nothing to free). The bytes are not kept. */
int ls_pte_read_bytes(const uint8_t *data, size_t size, const char *name, ls_pte *pte, ls_error *err);
int ls_pte_read_file(const char *path, ls_pte *pte, ls_error *err);
/* The same without the cross-reference check (the flatbuffer is still verified, so every field
 * is safe to read): for the runtime's load checks (pte_check.h), which report every bad
 * reference in the runtime's words rather than stop at the first. */
int ls_pte_read_file_unchecked(const char *path, ls_pte *pte, ls_error *err);
int ls_pte_read_bytes_unchecked(const uint8_t *data, size_t size, const char *name, ls_pte *pte, ls_error *err);
void ls_pte_free(ls_pte *pte);

/* Checks the cross references of a model (value, operator, delegate, segment and buffer
 * indices); the readers run it, the writer too. name prefixes messages. */
int ls_pte_check(const ls_pte *pte, const char *name, ls_error *err);

/* Serialises the model: the Program flatbuffer, then (when any segment has bytes) the 32-byte
 * eh00 extended header inserted after the identifier and the segments, each aligned to 128
 * bytes (or lcm with the blob's alignment), as ExecuTorch's own writer lays them out. */
int ls_pte_write(const ls_pte *pte, uint8_t **bytes, size_t *size, ls_error *err);
/* The size ls_pte_write would give, after the same checks, without building the file. */
int ls_pte_file_size(const ls_pte *pte, size_t *size, ls_error *err);
int ls_pte_write_file(const ls_pte *pte, const char *path, ls_error *err);
/* The segment alignment of a file read (has_extended_header): the largest power of two, up to
 * 64 KiB, dividing every segment offset that is not 0 (what its writer aligned segments to, exir's
 * segment_alignment), at least ExecuTorch's 128; 128 for a model made here. */
uint64_t ls_pte_segment_alignment(const ls_pte *pte);

/* flatc-style JSON (--strict-json --defaults-json): enums by name, unions as <field>_type +
 * value, absent tables/vectors/strings left out. Non-finite doubles are written as the strings
 * "inf", "-inf", "nan" (flatc writes bare inf/nan, which is not JSON). */
void ls_pte_to_json(const ls_pte *pte, ls_buf *out);

/* ---------------------------------------------------------------- data the runtime needs */

/* Bytes of segment i (NULL/0 for an empty segment). */
int ls_pte_segment_bytes(const ls_pte *pte, uint32_t index, const uint8_t **data, size_t *size, ls_error *err);
/* A delegate's processed blob, INLINE or SEGMENT. */
int ls_pte_delegate_blob(const ls_pte *pte, const ls_pte_delegate *d, const uint8_t **data, size_t *size,
                         ls_error *err);
/* Bytes of named data entry `key` in the program's own segments; 0 when there is no such key. */
int ls_pte_named_bytes(const ls_pte *pte, const char *key, const uint8_t **data, size_t *size, ls_error *err);
/* Bytes a tensor's elements take: product of sizes x element size, overflow-checked. */
int ls_pte_tensor_nbytes(const ls_pte_tensor *t, uint64_t *nbytes, ls_error *err);
/* The stored bytes of a tensor value: a constant (data_buffer_idx > 0, no allocation_info) from
 * constant_segment or the deprecated constant_buffer, or the initial state of a mutable tensor
 * (data_buffer_idx > 0 with allocation_info) from mutable_data_segments. *size is the tensor's
 * nbytes, checked to fit. Returns 1 when found, 0 when the tensor has no stored bytes (planned
 * or runtime-provided memory), -1 on error (EXTERNAL tensors: use ls_ptd_tensor_bytes). */
int ls_pte_tensor_bytes(const ls_pte *pte, const ls_pte_tensor *t, const uint8_t **data, size_t *size,
                        ls_error *err);

/* ---------------------------------------------------------------- .ptd (FlatTensor, FT01) */

typedef struct ls_ptd_entry {
    char *key;              /* NamedData.key, or TensorMetadata.fully_qualified_name (Feb-2025) */
    uint32_t segment_index;
    uint64_t offset;        /* inside the segment: TensorMetadata.offset (Feb-2025), else 0 */
    bool has_tensor_layout;
    int8_t scalar_type;
    ls_pte_i32s sizes;
    ls_pte_u8s dim_order;
} ls_ptd_entry;
LS_PTE_VEC_OF(ls_ptd_entry, ls_ptd_entries);

typedef struct ls_ptd {
    char *name;                /* for messages */
    bool feb2025;              /* the older layout: FlatTensor{version, tensor_alignment, tensors, segments} */
    uint32_t version;
    uint32_t tensor_alignment; /* Feb-2025 layout only */
    ls_pte_data_segments segments;
    ls_ptd_entries named_data; /* named_data, or tensors in the Feb-2025 layout */
    ls_pte_blob *segment_data; /* one per segments[i] */
    uint32_t n_segment_data;
    bool has_header; /* FH01 */
    uint64_t flatbuffer_offset, flatbuffer_size, segment_base_offset, segment_data_size;
} ls_ptd;

int ls_ptd_read_bytes(const uint8_t *data, size_t size, const char *name, ls_ptd *ptd, ls_error *err);
int ls_ptd_read_file(const char *path, ls_ptd *ptd, ls_error *err);
void ls_ptd_free(ls_ptd *ptd);
const ls_ptd_entry *ls_ptd_find(const ls_ptd *ptd, const char *key);
/* The bytes of an entry: the whole segment, or (Feb-2025, or with a tensor layout) exactly the
 * tensor's nbytes from its offset, checked to fit. */
int ls_ptd_entry_bytes(const ls_ptd *ptd, const ls_ptd_entry *e, const uint8_t **data, size_t *size, ls_error *err);
/* The bytes of an EXTERNAL tensor of a program: looked up by fully_qualified_name, checked
 * against the entry's layout (element type and sizes) and size. */
int ls_ptd_tensor_bytes(const ls_ptd *ptd, const ls_pte_tensor *t, const uint8_t **data, size_t *size, ls_error *err);
/* Resolves every EXTERNAL tensor of every plan against the .ptd; fails on the first that does
 * not resolve. *count (may be NULL) receives how many were resolved. */
int ls_pte_resolve_external(const ls_pte *pte, const ls_ptd *ptd, uint32_t *count, ls_error *err);
/* flatc-style JSON of the current layout (the Feb-2025 layout dumps in its own field names). */
void ls_ptd_to_json(const ls_ptd *ptd, ls_buf *out);

#endif
