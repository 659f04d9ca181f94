// LARK's stand-in for the CUDA SDK's cuda_bf16.h (clang path; see cuda_prelude.h).
//
// __nv_bfloat16 is clang's __bf16: converting from float is cvt.rn.bf16.f32 (sm_80), to float a
// shift. Arithmetic goes through float and rounds back to bfloat16 once per operation, which
// is what sm_80's bf16 arithmetic (fma.rn.bf16) computes.
#pragma once

typedef __bf16 __nv_bfloat16;
typedef __nv_bfloat16 nv_bfloat16;
struct __attribute__((aligned(4))) __nv_bfloat162 {
  __nv_bfloat16 x, y;
};
typedef __nv_bfloat162 nv_bfloat162;

#define __LARK_BF16 static __host__ __device__ __forceinline__
#define __LARK_BF16_DEVICE static __device__ __forceinline__

// --- conversions ---
__LARK_BF16 __nv_bfloat16 __float2bfloat16(float f) { return (__nv_bfloat16)f; }
__LARK_BF16 __nv_bfloat16 __float2bfloat16_rn(float f) { return (__nv_bfloat16)f; }
__LARK_BF16 __nv_bfloat16 __double2bfloat16(double d) { return (__nv_bfloat16)(float)d; }
__LARK_BF16 float __bfloat162float(__nv_bfloat16 h) { return (float)h; }
__LARK_BF16 __nv_bfloat16 __int2bfloat16_rn(int i) { return (__nv_bfloat16)(float)i; }
__LARK_BF16 int __bfloat162int_rz(__nv_bfloat16 h) { return (int)(float)h; }
__LARK_BF16 __nv_bfloat162 __float2bfloat162_rn(float f) { return __nv_bfloat162{(__nv_bfloat16)f, (__nv_bfloat16)f}; }
__LARK_BF16 __nv_bfloat162 __floats2bfloat162_rn(float a, float b) { return __nv_bfloat162{(__nv_bfloat16)a, (__nv_bfloat16)b}; }
__LARK_BF16 __nv_bfloat162 __float22bfloat162_rn(float2 f) { return __nv_bfloat162{(__nv_bfloat16)f.x, (__nv_bfloat16)f.y}; }
__LARK_BF16 float2 __bfloat1622float2(__nv_bfloat162 h) { return float2{(float)h.x, (float)h.y}; }
__LARK_BF16 float __low2float(__nv_bfloat162 h) { return (float)h.x; }
__LARK_BF16 float __high2float(__nv_bfloat162 h) { return (float)h.y; }
__LARK_BF16 __nv_bfloat16 __low2bfloat16(__nv_bfloat162 h) { return h.x; }
__LARK_BF16 __nv_bfloat16 __high2bfloat16(__nv_bfloat162 h) { return h.y; }
__LARK_BF16 __nv_bfloat162 __halves2bfloat162(__nv_bfloat16 lo, __nv_bfloat16 hi) { return __nv_bfloat162{lo, hi}; }
__LARK_BF16 __nv_bfloat162 __bfloat162bfloat162(__nv_bfloat16 h) { return __nv_bfloat162{h, h}; }
__LARK_BF16 __nv_bfloat162 __lows2bfloat162(__nv_bfloat162 a, __nv_bfloat162 b) { return __nv_bfloat162{a.x, b.x}; }
__LARK_BF16 __nv_bfloat162 __highs2bfloat162(__nv_bfloat162 a, __nv_bfloat162 b) { return __nv_bfloat162{a.y, b.y}; }
__LARK_BF16 __nv_bfloat162 make_bfloat162(__nv_bfloat16 x, __nv_bfloat16 y) { return __nv_bfloat162{x, y}; }
__LARK_BF16 short __bfloat16_as_short(__nv_bfloat16 h) { return __builtin_bit_cast(short, h); }
__LARK_BF16 unsigned short __bfloat16_as_ushort(__nv_bfloat16 h) { return __builtin_bit_cast(unsigned short, h); }
__LARK_BF16 __nv_bfloat16 __short_as_bfloat16(short s) { return __builtin_bit_cast(__nv_bfloat16, s); }
__LARK_BF16 __nv_bfloat16 __ushort_as_bfloat16(unsigned short s) { return __builtin_bit_cast(__nv_bfloat16, s); }

// --- arithmetic and comparisons (through float, one rounding to bfloat16 per operation) ---
__LARK_BF16 __nv_bfloat16 __hadd(__nv_bfloat16 a, __nv_bfloat16 b) { return (__nv_bfloat16)((float)a + (float)b); }
__LARK_BF16 __nv_bfloat16 __hsub(__nv_bfloat16 a, __nv_bfloat16 b) { return (__nv_bfloat16)((float)a - (float)b); }
__LARK_BF16 __nv_bfloat16 __hmul(__nv_bfloat16 a, __nv_bfloat16 b) { return (__nv_bfloat16)((float)a * (float)b); }
__LARK_BF16 __nv_bfloat16 __hdiv(__nv_bfloat16 a, __nv_bfloat16 b) { return (__nv_bfloat16)((float)a / (float)b); }
__LARK_BF16 __nv_bfloat16 __hfma(__nv_bfloat16 a, __nv_bfloat16 b, __nv_bfloat16 c) {
  return (__nv_bfloat16)__builtin_fmaf((float)a, (float)b, (float)c);
}
__LARK_BF16 __nv_bfloat16 __hneg(__nv_bfloat16 a) { return __ushort_as_bfloat16(__bfloat16_as_ushort(a) ^ 0x8000); }
__LARK_BF16 __nv_bfloat16 __habs(__nv_bfloat16 a) { return __ushort_as_bfloat16(__bfloat16_as_ushort(a) & 0x7fff); }
__LARK_BF16 __nv_bfloat16 __hmax(__nv_bfloat16 a, __nv_bfloat16 b) { return (__nv_bfloat16)__builtin_fmaxf((float)a, (float)b); }
__LARK_BF16 __nv_bfloat16 __hmin(__nv_bfloat16 a, __nv_bfloat16 b) { return (__nv_bfloat16)__builtin_fminf((float)a, (float)b); }
__LARK_BF16 bool __heq(__nv_bfloat16 a, __nv_bfloat16 b) { return (float)a == (float)b; }
__LARK_BF16 bool __hne(__nv_bfloat16 a, __nv_bfloat16 b) { return (float)a != (float)b; }
__LARK_BF16 bool __hlt(__nv_bfloat16 a, __nv_bfloat16 b) { return (float)a < (float)b; }
__LARK_BF16 bool __hle(__nv_bfloat16 a, __nv_bfloat16 b) { return (float)a <= (float)b; }
__LARK_BF16 bool __hgt(__nv_bfloat16 a, __nv_bfloat16 b) { return (float)a > (float)b; }
__LARK_BF16 bool __hge(__nv_bfloat16 a, __nv_bfloat16 b) { return (float)a >= (float)b; }
__LARK_BF16 bool __hisnan(__nv_bfloat16 a) { return (float)a != (float)a; }
#define __LARK_BF162_BINARY(NAME, OP)                                                         \
  __LARK_BF16 __nv_bfloat162 NAME(__nv_bfloat162 a, __nv_bfloat162 b) { return __nv_bfloat162{OP(a.x, b.x), OP(a.y, b.y)}; }
__LARK_BF162_BINARY(__hadd2, __hadd)
__LARK_BF162_BINARY(__hsub2, __hsub)
__LARK_BF162_BINARY(__hmul2, __hmul)
__LARK_BF162_BINARY(__h2div, __hdiv)
__LARK_BF162_BINARY(__hmax2, __hmax)
__LARK_BF162_BINARY(__hmin2, __hmin)
#undef __LARK_BF162_BINARY
__LARK_BF16 __nv_bfloat162 __hfma2(__nv_bfloat162 a, __nv_bfloat162 b, __nv_bfloat162 c) {
  return __nv_bfloat162{__hfma(a.x, b.x, c.x), __hfma(a.y, b.y, c.y)};
}
__LARK_BF16 __nv_bfloat162 __hneg2(__nv_bfloat162 a) { return __nv_bfloat162{__hneg(a.x), __hneg(a.y)}; }
__LARK_BF16 __nv_bfloat162 operator+(__nv_bfloat162 a, __nv_bfloat162 b) { return __hadd2(a, b); }
__LARK_BF16 __nv_bfloat162 operator-(__nv_bfloat162 a, __nv_bfloat162 b) { return __hsub2(a, b); }
__LARK_BF16 __nv_bfloat162 operator*(__nv_bfloat162 a, __nv_bfloat162 b) { return __hmul2(a, b); }
__LARK_BF16 __nv_bfloat162 operator/(__nv_bfloat162 a, __nv_bfloat162 b) { return __h2div(a, b); }
__LARK_BF16 __nv_bfloat162& operator+=(__nv_bfloat162& a, __nv_bfloat162 b) { return a = a + b; }
__LARK_BF16 __nv_bfloat162& operator*=(__nv_bfloat162& a, __nv_bfloat162 b) { return a = a * b; }

// --- math (through float) ---
#define __LARK_BF16_MATH(NAME, NAME2, F)                                                                        \
  __LARK_BF16_DEVICE __nv_bfloat16 NAME(__nv_bfloat16 a) { return (__nv_bfloat16)F((float)a); }                 \
  __LARK_BF16_DEVICE __nv_bfloat162 NAME2(__nv_bfloat162 a) { return __nv_bfloat162{NAME(a.x), NAME(a.y)}; }
__LARK_BF16_MATH(hexp, h2exp, expf)
__LARK_BF16_MATH(hexp2, h2exp2, exp2f)
__LARK_BF16_MATH(hlog, h2log, logf)
__LARK_BF16_MATH(hlog2, h2log2, log2f)
__LARK_BF16_MATH(hsqrt, h2sqrt, sqrtf)
__LARK_BF16_MATH(hrsqrt, h2rsqrt, rsqrtf)
__LARK_BF16_MATH(hrcp, h2rcp, __frcp_rn)
__LARK_BF16_MATH(hsin, h2sin, sinf)
__LARK_BF16_MATH(hcos, h2cos, cosf)
__LARK_BF16_MATH(htanh, h2tanh, tanhf)
__LARK_BF16_MATH(hfloor, h2floor, floorf)
__LARK_BF16_MATH(hceil, h2ceil, ceilf)
__LARK_BF16_MATH(htrunc, h2trunc, truncf)
__LARK_BF16_MATH(hrint, h2rint, rintf)
#undef __LARK_BF16_MATH

// --- warp shuffles and atomics ---
#define __LARK_BF16_SHUFFLE(NAME, LANE)                                                                               \
  __LARK_BF16_DEVICE __nv_bfloat16 NAME(unsigned mask, __nv_bfloat16 v, LANE l, int width = warpSize) {               \
    return __ushort_as_bfloat16((unsigned short)NAME(mask, (int)__bfloat16_as_ushort(v), l, width));                  \
  }                                                                                                                   \
  __LARK_BF16_DEVICE __nv_bfloat162 NAME(unsigned mask, __nv_bfloat162 v, LANE l, int width = warpSize) {             \
    return __builtin_bit_cast(__nv_bfloat162, NAME(mask, __builtin_bit_cast(int, v), l, width));                      \
  }
__LARK_BF16_SHUFFLE(__shfl_sync, int)
__LARK_BF16_SHUFFLE(__shfl_up_sync, unsigned)
__LARK_BF16_SHUFFLE(__shfl_down_sync, unsigned)
__LARK_BF16_SHUFFLE(__shfl_xor_sync, int)
#undef __LARK_BF16_SHUFFLE
#undef __LARK_BF16
#undef __LARK_BF16_DEVICE
