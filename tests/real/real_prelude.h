// Extra CUDA definitions for the kernels in tests/real, tests/real/bugs and tests/index.
//
// The files there are compiled with LARK's own prelude (server/cuda/src/cuda_prelude.h, passed
// with -include), which declares the CUDA device API nvcc makes available without an #include
// (vector types, __ldg/__ldcs/__stcs, shuffles, votes, atomics, math). This header adds what the
// kernels take from headers they would include: half and bfloat16 (cuda_fp16.h, cuda_bf16.h) and
// a minimal cooperative_groups. LARK's stand-ins for those headers have the same things and more,
// but regen.sh compiles with the prelude alone, so the kernels keep their own copy here.
//
// Two math functions keep the versions the committed PTX was generated with, which differ from
// the prelude's: tanhf as 1 - 2 / (exp(2x) + 1) (the prelude: tanh.approx.f32) and roundf as
// cvt.rni, half-way cases to even (the prelude's rounds them away from zero, as C does). Being
// plain functions, they take precedence over the prelude's (see __LARK_DEVICE there).
//
// Every function is __forceinline__ (nodebug in LARK's prelude), so its instructions carry the
// .loc of the calling line of the kernel's .cu file.
#pragma once

#define M_LOG2E_F 1.4426950408889634f
#define M_LN2_F 0.6931471805599453f

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

// --- math kept as the committed PTX has it (see the header comment) ---
static __device__ __forceinline__ float tanhf(float x) {
  // tanh(x) = 1 - 2 / (exp(2x) + 1)
  return 1.0f - __nvvm_div_approx_f(2.0f, __nvvm_ex2_approx_f(2.0f * M_LOG2E_F * x) + 1.0f);
}
static __device__ __forceinline__ float roundf(float x) { return __nvvm_round_f(x); }

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
