// LARK's stand-in for the CUDA SDK's cuda_fp16.h (clang path; see cuda_prelude.h).
//
// __half is clang's _Float16, so half arithmetic and comparisons are the language's own (the
// .f16 instructions on sm_80) and converting to and from float is a cast (cvt.rn.f16.f32,
// cvt.f32.f16). __half2 is a pair. The half math functions (hexp, hsqrt, ...) go through float
// with the prelude's functions, which is what their precision amounts to.
#pragma once

typedef _Float16 __half;
typedef __half half;
struct __attribute__((aligned(4))) __half2 {
  __half x, y;
};
typedef __half2 half2;
struct __half_raw {
  unsigned short x;
};
struct __half2_raw {
  unsigned short x, y;
};

#define __LARK_FP16 static __host__ __device__ __forceinline__
#define __LARK_FP16_DEVICE static __device__ __forceinline__

// --- conversions ---
__LARK_FP16 __half __float2half(float f) { return (__half)f; }
__LARK_FP16 __half __float2half_rn(float f) { return (__half)f; }
__LARK_FP16 __half __double2half(double d) { return (__half)d; }
__LARK_FP16 float __half2float(__half h) { return (float)h; }
__LARK_FP16 __half __int2half_rn(int i) { return (__half)i; }
__LARK_FP16 __half __uint2half_rn(unsigned i) { return (__half)i; }
__LARK_FP16 int __half2int_rz(__half h) { return (int)h; }
__LARK_FP16_DEVICE int __half2int_rn(__half h) { return __nvvm_f2i_rn((float)h); }
__LARK_FP16 __half2 __float2half2_rn(float f) { return __half2{(__half)f, (__half)f}; }
__LARK_FP16 __half2 __floats2half2_rn(float a, float b) { return __half2{(__half)a, (__half)b}; }
__LARK_FP16 __half2 __float22half2_rn(float2 f) { return __half2{(__half)f.x, (__half)f.y}; }
__LARK_FP16 float2 __half22float2(__half2 h) { return float2{(float)h.x, (float)h.y}; }
__LARK_FP16 float __low2float(__half2 h) { return (float)h.x; }
__LARK_FP16 float __high2float(__half2 h) { return (float)h.y; }
__LARK_FP16 __half __low2half(__half2 h) { return h.x; }
__LARK_FP16 __half __high2half(__half2 h) { return h.y; }
__LARK_FP16 __half2 __halves2half2(__half lo, __half hi) { return __half2{lo, hi}; }
__LARK_FP16 __half2 __half2half2(__half h) { return __half2{h, h}; }
__LARK_FP16 __half2 __low2half2(__half2 h) { return __half2{h.x, h.x}; }
__LARK_FP16 __half2 __high2half2(__half2 h) { return __half2{h.y, h.y}; }
__LARK_FP16 __half2 __lows2half2(__half2 a, __half2 b) { return __half2{a.x, b.x}; }
__LARK_FP16 __half2 __highs2half2(__half2 a, __half2 b) { return __half2{a.y, b.y}; }
__LARK_FP16 __half2 __lowhigh2highlow(__half2 h) { return __half2{h.y, h.x}; }
__LARK_FP16 __half2 make_half2(__half x, __half y) { return __half2{x, y}; }
__LARK_FP16 short __half_as_short(__half h) { return __builtin_bit_cast(short, h); }
__LARK_FP16 unsigned short __half_as_ushort(__half h) { return __builtin_bit_cast(unsigned short, h); }
__LARK_FP16 __half __short_as_half(short s) { return __builtin_bit_cast(__half, s); }
__LARK_FP16 __half __ushort_as_half(unsigned short s) { return __builtin_bit_cast(__half, s); }

// --- arithmetic and comparisons (scalar: the language's own; pairs: one half at a time) ---
__LARK_FP16 __half __hadd(__half a, __half b) { return a + b; }
__LARK_FP16 __half __hsub(__half a, __half b) { return a - b; }
__LARK_FP16 __half __hmul(__half a, __half b) { return a * b; }
__LARK_FP16 __half __hdiv(__half a, __half b) { return a / b; }
__LARK_FP16 __half __hfma(__half a, __half b, __half c) { return __builtin_fmaf16(a, b, c); }
__LARK_FP16 __half __hneg(__half a) { return -a; }
__LARK_FP16 __half __habs(__half a) { return __builtin_fabsf16(a); }
__LARK_FP16 __half __hmax(__half a, __half b) { return __builtin_fmaxf16(a, b); }
__LARK_FP16 __half __hmin(__half a, __half b) { return __builtin_fminf16(a, b); }
__LARK_FP16 bool __heq(__half a, __half b) { return a == b; }
__LARK_FP16 bool __hne(__half a, __half b) { return a != b; }
__LARK_FP16 bool __hlt(__half a, __half b) { return a < b; }
__LARK_FP16 bool __hle(__half a, __half b) { return a <= b; }
__LARK_FP16 bool __hgt(__half a, __half b) { return a > b; }
__LARK_FP16 bool __hge(__half a, __half b) { return a >= b; }
__LARK_FP16 bool __hisnan(__half a) { return a != a; }
__LARK_FP16 int __hisinf(__half a) { return a == (__half)__builtin_inff() ? 1 : a == -(__half)__builtin_inff() ? -1 : 0; }
#define __LARK_HALF2_BINARY(NAME, OP) \
  __LARK_FP16 __half2 NAME(__half2 a, __half2 b) { return __half2{OP(a.x, b.x), OP(a.y, b.y)}; }
__LARK_HALF2_BINARY(__hadd2, __hadd)
__LARK_HALF2_BINARY(__hsub2, __hsub)
__LARK_HALF2_BINARY(__hmul2, __hmul)
__LARK_HALF2_BINARY(__h2div, __hdiv)
__LARK_HALF2_BINARY(__hmax2, __hmax)
__LARK_HALF2_BINARY(__hmin2, __hmin)
#undef __LARK_HALF2_BINARY
__LARK_FP16 __half2 __hfma2(__half2 a, __half2 b, __half2 c) { return __half2{__hfma(a.x, b.x, c.x), __hfma(a.y, b.y, c.y)}; }
__LARK_FP16 __half2 __hneg2(__half2 a) { return __half2{-a.x, -a.y}; }
__LARK_FP16 __half2 __habs2(__half2 a) { return __half2{__habs(a.x), __habs(a.y)}; }
__LARK_FP16 __half2 operator+(__half2 a, __half2 b) { return __hadd2(a, b); }
__LARK_FP16 __half2 operator-(__half2 a, __half2 b) { return __hsub2(a, b); }
__LARK_FP16 __half2 operator*(__half2 a, __half2 b) { return __hmul2(a, b); }
__LARK_FP16 __half2 operator/(__half2 a, __half2 b) { return __h2div(a, b); }
__LARK_FP16 __half2 operator-(__half2 a) { return __hneg2(a); }
__LARK_FP16 __half2& operator+=(__half2& a, __half2 b) { return a = a + b; }
__LARK_FP16 __half2& operator-=(__half2& a, __half2 b) { return a = a - b; }
__LARK_FP16 __half2& operator*=(__half2& a, __half2 b) { return a = a * b; }
__LARK_FP16 __half2& operator/=(__half2& a, __half2 b) { return a = a / b; }
__LARK_FP16 bool operator==(__half2 a, __half2 b) { return a.x == b.x && a.y == b.y; }
__LARK_FP16 bool operator!=(__half2 a, __half2 b) { return !(a == b); }

// --- math (through float) ---
#define __LARK_HALF_MATH(NAME, NAME2, F)                                                   \
  __LARK_FP16_DEVICE __half NAME(__half a) { return (__half)F((float)a); }                 \
  __LARK_FP16_DEVICE __half2 NAME2(__half2 a) { return __half2{NAME(a.x), NAME(a.y)}; }
__LARK_HALF_MATH(hexp, h2exp, expf)
__LARK_HALF_MATH(hexp2, h2exp2, exp2f)
__LARK_HALF_MATH(hlog, h2log, logf)
__LARK_HALF_MATH(hlog2, h2log2, log2f)
__LARK_HALF_MATH(hsqrt, h2sqrt, sqrtf)
__LARK_HALF_MATH(hrsqrt, h2rsqrt, rsqrtf)
__LARK_HALF_MATH(hrcp, h2rcp, __frcp_rn)
__LARK_HALF_MATH(hsin, h2sin, sinf)
__LARK_HALF_MATH(hcos, h2cos, cosf)
__LARK_HALF_MATH(htanh, h2tanh, tanhf)
__LARK_HALF_MATH(hfloor, h2floor, floorf)
__LARK_HALF_MATH(hceil, h2ceil, ceilf)
__LARK_HALF_MATH(htrunc, h2trunc, truncf)
__LARK_HALF_MATH(hrint, h2rint, rintf)
#undef __LARK_HALF_MATH

// --- warp shuffles and atomics on halves (the 16 or 32 bits through the int shuffle) ---
#define __LARK_HALF_SHUFFLE(NAME, LANE)                                                                          \
  __LARK_FP16_DEVICE __half NAME(unsigned mask, __half v, LANE l, int width = warpSize) {                         \
    return __ushort_as_half((unsigned short)NAME(mask, (int)__half_as_ushort(v), l, width));                     \
  }                                                                                                              \
  __LARK_FP16_DEVICE __half2 NAME(unsigned mask, __half2 v, LANE l, int width = warpSize) {                       \
    return __builtin_bit_cast(__half2, NAME(mask, __builtin_bit_cast(int, v), l, width));                        \
  }
__LARK_HALF_SHUFFLE(__shfl_sync, int)
__LARK_HALF_SHUFFLE(__shfl_up_sync, unsigned)
__LARK_HALF_SHUFFLE(__shfl_down_sync, unsigned)
__LARK_HALF_SHUFFLE(__shfl_xor_sync, int)
#undef __LARK_HALF_SHUFFLE
__LARK_FP16_DEVICE __half2 atomicAdd(__half2* p, __half2 v) {
  unsigned r;
  __asm__ __volatile__("atom.add.noftz.f16x2 %0, [%1], %2;" : "=r"(r) : "l"(p), "r"(__builtin_bit_cast(unsigned, v)) : "memory");
  return __builtin_bit_cast(__half2, r);
}
__LARK_FP16_DEVICE __half atomicAdd(__half* p, __half v) {
  unsigned short r;
  __asm__ __volatile__("atom.add.noftz.f16 %0, [%1], %2;" : "=h"(r) : "l"(p), "h"(__half_as_ushort(v)) : "memory");
  return __ushort_as_half(r);
}
#undef __LARK_FP16
#undef __LARK_FP16_DEVICE
