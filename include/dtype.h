/* Element types, their sizes and names, and the two numberings files use for them:
 * torch.export's ScalarType (FLOAT = 7) and ExecuTorch's (FLOAT = 6, c10's numbering). */
#ifndef LS_DTYPE_H
#define LS_DTYPE_H

#include <stdbool.h>
#include <stddef.h>

typedef enum ls_dtype {
    LS_DT_UNKNOWN = 0,
    LS_DT_U8,
    LS_DT_I8,
    LS_DT_I16,
    LS_DT_I32,
    LS_DT_I64,
    LS_DT_F16,
    LS_DT_BF16,
    LS_DT_F32,
    LS_DT_F64,
    LS_DT_BOOL,
    LS_DT_U16,
    LS_DT_U32,
    LS_DT_U64,
    LS_DT_COUNT
} ls_dtype;

size_t ls_dtype_size(ls_dtype t);      /* bytes per element; 0 for unknown */
const char *ls_dtype_name(ls_dtype t); /* "float32", "int64", "bool", ... */
ls_dtype ls_dtype_parse(const char *name); /* accepts "float32", "f32", "float", "torch.float32" */
bool ls_dtype_is_float(ls_dtype t);    /* f16, bf16, f32, f64 */
bool ls_dtype_is_int(ls_dtype t);      /* signed or unsigned integers, not bool */
/* PyTorch's result type of a binary op on two tensors of these types (same category ranks). */
ls_dtype ls_dtype_promote(ls_dtype a, ls_dtype b);

/* torch.export serde ScalarType: UNKNOWN 0, BYTE 1, CHAR 2, SHORT 3, INT 4, LONG 5, HALF 6,
 * FLOAT 7, DOUBLE 8, BOOL 12, BFLOAT16 13, UINT16 28. Returns LS_DT_UNKNOWN / -1 if none. */
ls_dtype ls_dtype_from_export(int code);
int ls_dtype_to_export(ls_dtype t);
/* ExecuTorch ScalarType: BYTE 0, CHAR 1, SHORT 2, INT 3, LONG 4, HALF 5, FLOAT 6, DOUBLE 7,
 * BOOL 11, BFLOAT16 15, UINT16 27, UINT32 28, UINT64 29. */
ls_dtype ls_dtype_from_et(int code);
int ls_dtype_to_et(ls_dtype t);
/* NumPy descr ("<f4", "|b1", ...) for .npy files; NULL when NumPy has none (bfloat16). */
const char *ls_dtype_npy_descr(ls_dtype t);
ls_dtype ls_dtype_from_npy_descr(const char *descr);

/* float16 / bfloat16 conversions (round to nearest even). */
float ls_f16_to_f32(unsigned short h);
unsigned short ls_f32_to_f16(float f);
float ls_bf16_to_f32(unsigned short h);
unsigned short ls_f32_to_bf16(float f);

#endif
