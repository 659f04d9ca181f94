// Extra CUDA definitions for the kernels in tests/real, tests/real/bugs and tests/index.
//
// The files there are compiled with LARK's own prelude (server/cuda/src/cuda_prelude.h, passed
// with -include) and include this header for what real serving and training code takes from the
// CUDA SDK headers, which are not installed here: vector types, half/bfloat16 conversions, the
// __ldg/__ldcs/__stcs cache hints, more shuffles, votes and atomics, a few math functions, and a
// minimal cooperative_groups (thread_block, thread_block_tile<N>, cg::reduce). Everything maps
// onto clang NVPTX builtins or the same inline PTX the SDK headers use, so the PTX has no calls.
//
// Math functions use the approximate PTX instructions (as `nvcc -use_fast_math` does): the SDK's
// precise expf/tanhf/logf are libdevice calls that need the SDK. Exact arithmetic is LARK's
// contract anyway; what matters here is which instructions and memory accesses the kernels have.
//
// Every function is __forceinline__ (nodebug in LARK's prelude), so its instructions carry the
// .loc of the calling line of the kernel's .cu file.
#pragma once

#define __launch_bounds__(...) __attribute__((launch_bounds(__VA_ARGS__)))

typedef unsigned char uint8_t;
typedef signed char int8_t;
typedef unsigned short uint16_t;
typedef short int16_t;
typedef unsigned int uint32_t;
typedef int int32_t;
typedef unsigned long long uint64_t;
typedef long long int64_t;

// --- vector types (CUDA's vector_types.h) ---
struct __attribute__((aligned(8))) float2 { float x, y; };
struct __attribute__((aligned(16))) float4 { float x, y, z, w; };
struct __attribute__((aligned(16))) int4 { int x, y, z, w; };
struct __attribute__((aligned(16))) uint4 { unsigned x, y, z, w; };
struct __attribute__((aligned(8))) uint2 { unsigned x, y; };
struct __attribute__((aligned(4))) char4 { signed char x, y, z, w; };
static __device__ __forceinline__ float2 make_float2(float x, float y) { return float2{x, y}; }
static __device__ __forceinline__ float4 make_float4(float x, float y, float z, float w) { return float4{x, y, z, w}; }

// --- half and bfloat16 (cuda_fp16.h / cuda_bf16.h): clang's _Float16 and __bf16 ---
typedef _Float16 __half;
typedef _Float16 half;
typedef __bf16 __nv_bfloat16;
struct __attribute__((aligned(4))) __half2 { __half x, y; };
struct __attribute__((aligned(4))) __nv_bfloat162 { __nv_bfloat16 x, y; };
static __device__ __forceinline__ float __half2float(__half h) { return (float)h; }
static __device__ __forceinline__ __half __float2half(float f) { return (__half)f; }
static __device__ __forceinline__ float __bfloat162float(__nv_bfloat16 h) { return (float)h; }
static __device__ __forceinline__ __nv_bfloat16 __float2bfloat16(float f) { return (__nv_bfloat16)f; }
static __device__ __forceinline__ float2 __half22float2(__half2 h) { return float2{(float)h.x, (float)h.y}; }
static __device__ __forceinline__ __half2 __float22half2_rn(float2 f) { return __half2{(__half)f.x, (__half)f.y}; }
static __device__ __forceinline__ float2 __bfloat1622float2(__nv_bfloat162 h) { return float2{(float)h.x, (float)h.y}; }
static __device__ __forceinline__ __nv_bfloat162 __float22bfloat162_rn(float2 f) {
  return __nv_bfloat162{(__nv_bfloat16)f.x, (__nv_bfloat16)f.y};
}

// --- bit casts ---
static __device__ __forceinline__ float __int_as_float(int i) { return __builtin_bit_cast(float, i); }
static __device__ __forceinline__ int __float_as_int(float f) { return __builtin_bit_cast(int, f); }
static __device__ __forceinline__ unsigned __float_as_uint(float f) { return __builtin_bit_cast(unsigned, f); }
static __device__ __forceinline__ float __uint_as_float(unsigned u) { return __builtin_bit_cast(float, u); }

// --- cache-hinted loads and stores (the SDK writes these as inline PTX too) ---
static __device__ __forceinline__ float __ldg(const float* p) { return __nvvm_ldg_f(p); }
static __device__ __forceinline__ int __ldg(const int* p) { return __nvvm_ldg_i(p); }
static __device__ __forceinline__ long long __ldg(const long long* p) { return __nvvm_ldg_ll(p); }
static __device__ __forceinline__ __nv_bfloat16 __ldg(const __nv_bfloat16* p) {
  unsigned short r;
  asm("ld.global.nc.b16 %0, [%1];" : "=h"(r) : "l"(p));
  return __builtin_bit_cast(__nv_bfloat16, r);
}
static __device__ __forceinline__ half __ldg(const half* p) {
  unsigned short r;
  asm("ld.global.nc.b16 %0, [%1];" : "=h"(r) : "l"(p));
  return __builtin_bit_cast(half, r);
}
static __device__ __forceinline__ float4 __ldg(const float4* p) {
  float4 r;
  asm("ld.global.nc.v4.f32 {%0, %1, %2, %3}, [%4];" : "=f"(r.x), "=f"(r.y), "=f"(r.z), "=f"(r.w) : "l"(p));
  return r;
}
static __device__ __forceinline__ float __ldcs(const float* p) {
  float r;
  asm("ld.global.cs.f32 %0, [%1];" : "=f"(r) : "l"(p));
  return r;
}
static __device__ __forceinline__ void __stcs(float* p, float v) { asm("st.global.cs.f32 [%0], %1;" ::"l"(p), "f"(v) : "memory"); }
static __device__ __forceinline__ float4 __ldcs(const float4* p) {
  float4 r;
  asm("ld.global.cs.v4.f32 {%0, %1, %2, %3}, [%4];" : "=f"(r.x), "=f"(r.y), "=f"(r.z), "=f"(r.w) : "l"(p));
  return r;
}
static __device__ __forceinline__ void __stcs(float4* p, float4 v) {
  asm("st.global.cs.v4.f32 [%0], {%1, %2, %3, %4};" ::"l"(p), "f"(v.x), "f"(v.y), "f"(v.z), "f"(v.w) : "memory");
}

// --- warp shuffles, votes, lane masks ---
static __device__ __forceinline__ float __shfl_up_sync(unsigned mask, float v, unsigned d) {
  return __nvvm_shfl_sync_up_f32(mask, v, d, 0);
}
static __device__ __forceinline__ int __shfl_up_sync(unsigned mask, int v, unsigned d) { return __nvvm_shfl_sync_up_i32(mask, v, d, 0); }
static __device__ __forceinline__ int __shfl_sync(unsigned mask, int v, int src) { return __nvvm_shfl_sync_idx_i32(mask, v, src, 0x1f); }
static __device__ __forceinline__ unsigned __shfl_down_sync(unsigned mask, unsigned v, unsigned d) {
  return (unsigned)__nvvm_shfl_sync_down_i32(mask, (int)v, d, 0x1f);
}
static __device__ __forceinline__ unsigned __shfl_xor_sync(unsigned mask, unsigned v, int m) {
  return (unsigned)__nvvm_shfl_sync_bfly_i32(mask, (int)v, m, 0x1f);
}
// Shuffles within sub-warps of `width` lanes (the SDK's optional width argument).
static __device__ __forceinline__ float __shfl_xor_sync(unsigned mask, float v, int m, int width) {
  return __nvvm_shfl_sync_bfly_f32(mask, v, m, ((32 - width) << 8) | 0x1f);
}
static __device__ __forceinline__ float __shfl_sync(unsigned mask, float v, int src, int width) {
  return __nvvm_shfl_sync_idx_f32(mask, v, src, ((32 - width) << 8) | 0x1f);
}
static __device__ __forceinline__ unsigned __ballot_sync(unsigned mask, int pred) { return __nvvm_vote_ballot_sync(mask, pred); }
static __device__ __forceinline__ int __any_sync(unsigned mask, int pred) { return __nvvm_vote_any_sync(mask, pred); }
static __device__ __forceinline__ int __all_sync(unsigned mask, int pred) { return __nvvm_vote_all_sync(mask, pred); }
static __device__ __forceinline__ unsigned __activemask() { return __nvvm_activemask(); }
static __device__ __forceinline__ unsigned __lanemask_lt() {
  unsigned r;
  asm("mov.u32 %0, %%lanemask_lt;" : "=r"(r));
  return r;
}
static __device__ __forceinline__ int __popc(unsigned x) { return __builtin_popcount(x); }
static __device__ __forceinline__ int __ffs(unsigned x) { return __builtin_ffs((int)x); }
static __device__ __forceinline__ int __clz(unsigned x) { return __builtin_clz(x); }

// --- atomics ---
static __device__ __forceinline__ int atomicSub(int* p, int v) { return __nvvm_atom_add_gen_i(p, -v); }
static __device__ __forceinline__ int atomicCAS(int* p, int cmp, int v) { return __nvvm_atom_cas_gen_i(p, cmp, v); }
static __device__ __forceinline__ unsigned atomicCAS(unsigned* p, unsigned cmp, unsigned v) {
  return (unsigned)__nvvm_atom_cas_gen_i((int*)p, (int)cmp, (int)v);
}
static __device__ __forceinline__ int atomicExch(int* p, int v) { return __nvvm_atom_xchg_gen_i(p, v); }
static __device__ __forceinline__ int atomicMin(int* p, int v) { return __nvvm_atom_min_gen_i(p, v); }
static __device__ __forceinline__ unsigned atomicInc(unsigned* p, unsigned v) { return __nvvm_atom_inc_gen_ui(p, v); }
static __device__ __forceinline__ void __threadfence() { __nvvm_membar_gl(); }
static __device__ __forceinline__ void __threadfence_block() { __nvvm_membar_cta(); }

// --- math (approximate instructions, see the header comment) ---
#define M_LOG2E_F 1.4426950408889634f
#define M_LN2_F 0.6931471805599453f
static __device__ __forceinline__ float expf(float x) { return __nvvm_ex2_approx_f(x * M_LOG2E_F); }
static __device__ __forceinline__ float exp2f(float x) { return __nvvm_ex2_approx_f(x); }
static __device__ __forceinline__ float logf(float x) { return __nvvm_lg2_approx_f(x) * M_LN2_F; }
static __device__ __forceinline__ float __logf(float x) { return __nvvm_lg2_approx_f(x) * M_LN2_F; }
static __device__ __forceinline__ float log2f(float x) { return __nvvm_lg2_approx_f(x); }
static __device__ __forceinline__ float sinf(float x) { return __nvvm_sin_approx_f(x); }
static __device__ __forceinline__ float cosf(float x) { return __nvvm_cos_approx_f(x); }
static __device__ __forceinline__ float __sinf(float x) { return __nvvm_sin_approx_f(x); }
static __device__ __forceinline__ float __cosf(float x) { return __nvvm_cos_approx_f(x); }
static __device__ __forceinline__ float powf(float b, float e) { return __nvvm_ex2_approx_f(e * __nvvm_lg2_approx_f(b)); }
static __device__ __forceinline__ float tanhf(float x) {
  // tanh(x) = 1 - 2 / (exp(2x) + 1)
  return 1.0f - __nvvm_div_approx_f(2.0f, __nvvm_ex2_approx_f(2.0f * M_LOG2E_F * x) + 1.0f);
}
static __device__ __forceinline__ float erff(float x) {
  // Abramowitz-Stegun 7.1.26: enough for GELU's instruction mix, not for accuracy.
  float s = x < 0.0f ? -1.0f : 1.0f;
  float a = __nvvm_fabs_f(x);
  float t = __nvvm_div_approx_f(1.0f, 1.0f + 0.3275911f * a);
  float y = 1.0f - (((((1.061405429f * t - 1.453152027f) * t) + 1.421413741f) * t - 0.284496736f) * t + 0.254829592f) * t *
                       __nvvm_ex2_approx_f(-a * a * M_LOG2E_F);
  return s * y;
}
static __device__ __forceinline__ float roundf(float x) { return __nvvm_round_f(x); }
static __device__ __forceinline__ float rintf(float x) { return __builtin_rintf(x); }
static __device__ __forceinline__ float floorf(float x) { return __nvvm_floor_f(x); }
static __device__ __forceinline__ float ceilf(float x) { return __nvvm_ceil_f(x); }
static __device__ __forceinline__ float __frcp_rn(float x) { return __nvvm_rcp_rn_f(x); }
static __device__ __forceinline__ float __saturatef(float x) { return __nvvm_saturate_f(x); }
static __device__ __forceinline__ float fmaf(float a, float b, float c) { return __nvvm_fma_rn_f(a, b, c); }
static __device__ __forceinline__ float copysignf(float a, float b) { return __builtin_copysignf(a, b); }
static __device__ __forceinline__ float max(float a, float b) { return __nvvm_fmax_f(a, b); }
static __device__ __forceinline__ float min(float a, float b) { return __nvvm_fmin_f(a, b); }
static __device__ __forceinline__ long long max(long long a, long long b) { return a > b ? a : b; }
static __device__ __forceinline__ long long min(long long a, long long b) { return a < b ? a : b; }
static __device__ __forceinline__ unsigned umin(unsigned a, unsigned b) { return a < b ? a : b; }
static __device__ __forceinline__ int abs(int a) { return a < 0 ? -a : a; }
#define FLT_MAX 3.402823466e+38f
#define INT_MAX 2147483647

// --- a minimal cooperative_groups (cooperative_groups.h, cooperative_groups/reduce.h) ---
// Enough for the block/tile reductions of llm.c and cuda-samples: thread_block, statically
// sized tiles of up to 32 lanes, and cg::reduce with cg::plus/cg::greater. Tile shuffles are
// width-limited shuffles over the tile's member mask, as the SDK implements them.
namespace cooperative_groups {
struct thread_block {
  __device__ __forceinline__ void sync() const { __syncthreads(); }
  __device__ __forceinline__ unsigned thread_rank() const { return threadIdx.x + blockDim.x * (threadIdx.y + blockDim.y * threadIdx.z); }
  __device__ __forceinline__ unsigned size() const { return blockDim.x * blockDim.y * blockDim.z; }
  __device__ __forceinline__ unsigned num_threads() const { return size(); }
};
static __device__ __forceinline__ thread_block this_thread_block() { return thread_block(); }

template <unsigned N>
struct thread_block_tile {
  static_assert(N >= 1 && N <= 32 && (N & (N - 1)) == 0, "tile size is a power of two up to 32");
  __device__ __forceinline__ unsigned block_rank() const { return this_thread_block().thread_rank(); }
  __device__ __forceinline__ unsigned thread_rank() const { return block_rank() & (N - 1); }
  __device__ __forceinline__ unsigned meta_group_rank() const { return block_rank() / N; }
  __device__ __forceinline__ unsigned meta_group_size() const { return (this_thread_block().size() + N - 1) / N; }
  __device__ __forceinline__ static constexpr unsigned size() { return N; }
  __device__ __forceinline__ static constexpr unsigned num_threads() { return N; }
  // The lanes of this tile inside its warp.
  __device__ __forceinline__ unsigned mask() const {
    return N == 32 ? 0xffffffffu : (((1u << (N & 31u)) - 1u) << ((block_rank() & 31u) & ~(N - 1)));
  }
  __device__ __forceinline__ void sync() const { __nvvm_bar_warp_sync(mask()); }
  __device__ __forceinline__ float shfl_down(float v, unsigned d) const {
    return __nvvm_shfl_sync_down_f32(mask(), v, d, ((32 - N) << 8) | 0x1f);
  }
  __device__ __forceinline__ float shfl_xor(float v, unsigned m) const {
    return __nvvm_shfl_sync_bfly_f32(mask(), v, m, ((32 - N) << 8) | 0x1f);
  }
  __device__ __forceinline__ float shfl(float v, int src) const { return __nvvm_shfl_sync_idx_f32(mask(), v, src, ((32 - N) << 8) | 0x1f); }
  __device__ __forceinline__ int shfl_down(int v, unsigned d) const {
    return __nvvm_shfl_sync_down_i32(mask(), v, d, ((32 - N) << 8) | 0x1f);
  }
  __device__ __forceinline__ int shfl_xor(int v, unsigned m) const {
    return __nvvm_shfl_sync_bfly_i32(mask(), v, m, ((32 - N) << 8) | 0x1f);
  }
  __device__ __forceinline__ int shfl(int v, int src) const { return __nvvm_shfl_sync_idx_i32(mask(), v, src, ((32 - N) << 8) | 0x1f); }
  __device__ __forceinline__ unsigned ballot(int pred) const { return __nvvm_vote_ballot_sync(mask(), pred); }
  __device__ __forceinline__ int any(int pred) const { return __nvvm_vote_any_sync(mask(), pred); }
};
template <unsigned N>
static __device__ __forceinline__ thread_block_tile<N> tiled_partition(const thread_block&) {
  return thread_block_tile<N>();
}

template <typename T>
struct plus {
  __device__ __forceinline__ T operator()(T a, T b) const { return a + b; }
};
template <typename T>
struct greater {
  __device__ __forceinline__ T operator()(T a, T b) const { return a > b ? a : b; }
};
template <typename T>
struct less {
  __device__ __forceinline__ T operator()(T a, T b) const { return a < b ? a : b; }
};
// Butterfly reduction over the tile: every lane ends with the result.
template <unsigned N, typename T, typename Op>
static __device__ __forceinline__ T reduce(const thread_block_tile<N>& g, T v, Op op) {
#pragma unroll
  for (unsigned m = N / 2; m > 0; m /= 2) v = op(v, g.shfl_xor(v, m));
  return v;
}
}  // namespace cooperative_groups
namespace cg = cooperative_groups;
