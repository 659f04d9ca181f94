// Minimal CUDA prelude for compiling device code with clang-19 without the CUDA SDK:
//   clang-19 --cuda-device-only --cuda-gpu-arch=sm_80 -nocudainc -nocudalib \
//            -include cuda_prelude.h -O2 -gline-tables-only -S k.cu -o k.ptx
// Everything maps onto clang NVPTX builtins, so the PTX contains no external calls.
#define __global__ __attribute__((global))
#define __device__ __attribute__((device))
#define __host__ __attribute__((host))
#define __shared__ __attribute__((shared))
#define __constant__ __attribute__((constant))
// nodebug: the inlined bodies of these wrappers carry no debug locations of their own, so their
// instructions (shfl.sync, atom, ex2.approx, ...) get the .loc of the calling .cu line. Without it,
// clang-19 gives them this header's lines and PTX has no inlined_at to recover the call site.
#define __forceinline__ __inline__ __attribute__((always_inline, nodebug))
#include <__clang_cuda_builtin_vars.h>

#define warpSize 32
#define FULL_MASK 0xffffffffu

// --- barriers / warp synchronization ---
// __syncthreads() is a clang NVPTX builtin (bar.sync 0).
static __device__ __forceinline__ void __syncwarp(unsigned mask = FULL_MASK) { __nvvm_bar_warp_sync(mask); }

// --- warp shuffles (width = 32) ---
static __device__ __forceinline__ float __shfl_down_sync(unsigned mask, float v, unsigned d) {
  return __nvvm_shfl_sync_down_f32(mask, v, d, 0x1f);
}
static __device__ __forceinline__ int __shfl_down_sync(unsigned mask, int v, unsigned d) {
  return __nvvm_shfl_sync_down_i32(mask, v, d, 0x1f);
}
static __device__ __forceinline__ float __shfl_xor_sync(unsigned mask, float v, int m) {
  return __nvvm_shfl_sync_bfly_f32(mask, v, m, 0x1f);
}
static __device__ __forceinline__ int __shfl_xor_sync(unsigned mask, int v, int m) {
  return __nvvm_shfl_sync_bfly_i32(mask, v, m, 0x1f);
}
static __device__ __forceinline__ float __shfl_sync(unsigned mask, float v, int src) {
  return __nvvm_shfl_sync_idx_f32(mask, v, src, 0x1f);
}

// --- atomics (generic address space, relaxed, gpu scope) ---
static __device__ __forceinline__ float atomicAdd(float* p, float v) { return __nvvm_atom_add_gen_f(p, v); }
static __device__ __forceinline__ int atomicAdd(int* p, int v) { return __nvvm_atom_add_gen_i(p, v); }
static __device__ __forceinline__ unsigned atomicAdd(unsigned* p, unsigned v) {
  return (unsigned)__nvvm_atom_add_gen_i((int*)p, (int)v);
}
static __device__ __forceinline__ int atomicMax(int* p, int v) { return __nvvm_atom_max_gen_i(p, v); }

// --- math (approximate PTX instructions, like nvcc -use_fast_math) ---
static __device__ __forceinline__ float __expf(float x) { return __nvvm_ex2_approx_f(x * 1.4426950408889634f); }
static __device__ __forceinline__ float rsqrtf(float x) { return __nvvm_rsqrt_approx_f(x); }
static __device__ __forceinline__ float sqrtf(float x) { return __nvvm_sqrt_rn_f(x); }
static __device__ __forceinline__ float fmaxf(float a, float b) { return __nvvm_fmax_f(a, b); }
static __device__ __forceinline__ float fminf(float a, float b) { return __nvvm_fmin_f(a, b); }
static __device__ __forceinline__ float __fdividef(float a, float b) { return __nvvm_div_approx_f(a, b); }
static __device__ __forceinline__ int min(int a, int b) { return a < b ? a : b; }
static __device__ __forceinline__ int max(int a, int b) { return a > b ? a : b; }
#define INFINITY __builtin_inff()
typedef unsigned long size_t;
static __device__ __forceinline__ float fabsf(float x) { return __nvvm_fabs_f(x); }
