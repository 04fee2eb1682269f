/* Element types: sizes, names, promotion and the numberings of the file formats. */
#include "dtype.h"

#include <stdint.h>
#include <string.h>

typedef struct dtype_info {
    const char *name;
    const char *short_name;
    size_t size;
    int export_code; /* torch.export serde ScalarType */
    int et_code;     /* ExecuTorch / c10 ScalarType */
    const char *npy;
} dtype_info;

static const dtype_info infos[LS_DT_COUNT] = {
    [LS_DT_UNKNOWN] = {"unknown", "?", 0, 0, -1, NULL},
    [LS_DT_U8] = {"uint8", "u8", 1, 1, 0, "|u1"},
    [LS_DT_I8] = {"int8", "i8", 1, 2, 1, "|i1"},
    [LS_DT_I16] = {"int16", "i16", 2, 3, 2, "<i2"},
    [LS_DT_I32] = {"int32", "i32", 4, 4, 3, "<i4"},
    [LS_DT_I64] = {"int64", "i64", 8, 5, 4, "<i8"},
    [LS_DT_F16] = {"float16", "f16", 2, 6, 5, "<f2"},
    [LS_DT_BF16] = {"bfloat16", "bf16", 2, 13, 15, NULL},
    [LS_DT_F32] = {"float32", "f32", 4, 7, 6, "<f4"},
    [LS_DT_F64] = {"float64", "f64", 8, 8, 7, "<f8"},
    [LS_DT_BOOL] = {"bool", "b8", 1, 12, 11, "|b1"},
    [LS_DT_U16] = {"uint16", "u16", 2, 28, 27, "<u2"},
    [LS_DT_U32] = {"uint32", "u32", 4, -1, 28, "<u4"},
    [LS_DT_U64] = {"uint64", "u64", 8, -1, 29, "<u8"},
};

size_t ls_dtype_size(ls_dtype t)
{
    return (unsigned)t < LS_DT_COUNT ? infos[t].size : 0;
}

const char *ls_dtype_name(ls_dtype t)
{
    return (unsigned)t < LS_DT_COUNT ? infos[t].name : "unknown";
}

ls_dtype ls_dtype_parse(const char *name)
{
    if (!name) return LS_DT_UNKNOWN;
    if (strncmp(name, "torch.", 6) == 0) name += 6;
    for (int i = 1; i < LS_DT_COUNT; i++)
        if (strcmp(name, infos[i].name) == 0 || strcmp(name, infos[i].short_name) == 0) return (ls_dtype)i;
    static const struct { const char *alias; ls_dtype t; } aliases[] = {
        {"float", LS_DT_F32}, {"double", LS_DT_F64}, {"half", LS_DT_F16}, {"long", LS_DT_I64},
        {"int", LS_DT_I32},   {"short", LS_DT_I16},  {"byte", LS_DT_U8},  {"char", LS_DT_I8},
    };
    for (size_t i = 0; i < sizeof aliases / sizeof aliases[0]; i++)
        if (strcmp(name, aliases[i].alias) == 0) return aliases[i].t;
    return LS_DT_UNKNOWN;
}

bool ls_dtype_is_float(ls_dtype t)
{
    return t == LS_DT_F16 || t == LS_DT_BF16 || t == LS_DT_F32 || t == LS_DT_F64;
}

bool ls_dtype_is_int(ls_dtype t)
{
    return t == LS_DT_U8 || t == LS_DT_I8 || t == LS_DT_I16 || t == LS_DT_I32 || t == LS_DT_I64 ||
           t == LS_DT_U16 || t == LS_DT_U32 || t == LS_DT_U64;
}

/* PyTorch's promotion between two tensor operands: bool < integers < floats; within integers
 * the wider wins and uint8 with a signed type goes to the signed type that holds both;
 * float16 with bfloat16 gives float32. */
ls_dtype ls_dtype_promote(ls_dtype a, ls_dtype b)
{
    if (a == b) return a;
    if (a == LS_DT_UNKNOWN || b == LS_DT_UNKNOWN) return LS_DT_UNKNOWN;
    if (a == LS_DT_BOOL) return b;
    if (b == LS_DT_BOOL) return a;
    bool fa = ls_dtype_is_float(a), fb = ls_dtype_is_float(b);
    if (fa && !fb) return a;
    if (fb && !fa) return b;
    if (fa && fb) {
        if ((a == LS_DT_F16 && b == LS_DT_BF16) || (a == LS_DT_BF16 && b == LS_DT_F16)) return LS_DT_F32;
        return infos[a].size >= infos[b].size ? a : b;
    }
    /* both integers */
    bool ua = a == LS_DT_U8 || a == LS_DT_U16 || a == LS_DT_U32 || a == LS_DT_U64;
    bool ub = b == LS_DT_U8 || b == LS_DT_U16 || b == LS_DT_U32 || b == LS_DT_U64;
    if (ua == ub) return infos[a].size >= infos[b].size ? a : b;
    ls_dtype s = ua ? b : a, u = ua ? a : b;
    if (infos[s].size > infos[u].size) return s;
    if (infos[u].size == 1) return LS_DT_I16;
    if (infos[u].size == 2) return LS_DT_I32;
    return LS_DT_I64;
}

ls_dtype ls_dtype_from_export(int code)
{
    for (int i = 1; i < LS_DT_COUNT; i++)
        if (infos[i].export_code == code && code > 0) return (ls_dtype)i;
    return LS_DT_UNKNOWN;
}

int ls_dtype_to_export(ls_dtype t)
{
    return (unsigned)t < LS_DT_COUNT ? infos[t].export_code : -1;
}

ls_dtype ls_dtype_from_et(int code)
{
    for (int i = 1; i < LS_DT_COUNT; i++)
        if (infos[i].et_code == code && code >= 0) return (ls_dtype)i;
    return LS_DT_UNKNOWN;
}

int ls_dtype_to_et(ls_dtype t)
{
    return (unsigned)t < LS_DT_COUNT && t != LS_DT_UNKNOWN ? infos[t].et_code : -1;
}

const char *ls_dtype_npy_descr(ls_dtype t)
{
    return (unsigned)t < LS_DT_COUNT ? infos[t].npy : NULL;
}

ls_dtype ls_dtype_from_npy_descr(const char *descr)
{
    if (!descr) return LS_DT_UNKNOWN;
    for (int i = 1; i < LS_DT_COUNT; i++) {
        const char *n = infos[i].npy;
        if (!n) continue;
        if (strcmp(descr, n) == 0) return (ls_dtype)i;
        /* single-byte types may be written with '<' or '=' as well as '|' */
        if (n[0] == '|' && (descr[0] == '<' || descr[0] == '=') && strcmp(descr + 1, n + 1) == 0) return (ls_dtype)i;
        if (n[0] == '<' && descr[0] == '=' && strcmp(descr + 1, n + 1) == 0) return (ls_dtype)i;
    }
    return LS_DT_UNKNOWN;
}

float ls_f16_to_f32(unsigned short h)
{
    unsigned sign = (h >> 15) & 1, exp = (h >> 10) & 0x1f, man = h & 0x3ff;
    uint32_t bits;
    if (exp == 0) {
        if (man == 0) {
            bits = sign << 31;
        } else { /* subnormal: normalise */
            int e = -1;
            do {
                e++;
                man <<= 1;
            } while (!(man & 0x400));
            bits = (sign << 31) | ((uint32_t)(127 - 15 - e) << 23) | ((man & 0x3ff) << 13);
        }
    } else if (exp == 0x1f) {
        bits = (sign << 31) | 0x7f800000u | (man << 13);
    } else {
        bits = (sign << 31) | ((exp + 112) << 23) | (man << 13);
    }
    float f;
    memcpy(&f, &bits, 4);
    return f;
}

unsigned short ls_f32_to_f16(float f)
{
    uint32_t x;
    memcpy(&x, &f, 4);
    uint32_t sign = (x >> 16) & 0x8000;
    int32_t exp = (int32_t)((x >> 23) & 0xff);
    uint32_t man = x & 0x7fffff;
    if (exp == 0xff) return (unsigned short)(sign | 0x7c00 | (man ? 0x200 : 0));
    int32_t e = exp - 127 + 15;
    if (e >= 0x1f) return (unsigned short)(sign | 0x7c00);
    if (e <= 0) {
        if (e < -10) return (unsigned short)sign;
        man |= 0x800000;
        uint32_t shift = (uint32_t)(14 - e);
        uint32_t half = man >> shift;
        uint32_t rem = man & ((1u << shift) - 1), mid = 1u << (shift - 1);
        if (rem > mid || (rem == mid && (half & 1))) half++;
        return (unsigned short)(sign | half);
    }
    uint32_t half = sign | ((uint32_t)e << 10) | (man >> 13);
    uint32_t rem = man & 0x1fff;
    if (rem > 0x1000 || (rem == 0x1000 && (half & 1))) half++;
    return (unsigned short)half;
}

float ls_bf16_to_f32(unsigned short h)
{
    uint32_t bits = (uint32_t)h << 16;
    float f;
    memcpy(&f, &bits, 4);
    return f;
}

unsigned short ls_f32_to_bf16(float f)
{
    uint32_t x;
    memcpy(&x, &f, 4);
    if ((x & 0x7fffffff) > 0x7f800000) return (unsigned short)((x >> 16) | 0x40); /* quiet NaN */
    uint32_t lsb = (x >> 16) & 1;
    x += 0x7fff + lsb;
    return (unsigned short)(x >> 16);
}
