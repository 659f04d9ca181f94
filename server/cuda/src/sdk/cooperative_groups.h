// LARK's stand-in for the CUDA SDK's cooperative_groups.h (clang path; see cuda_prelude.h).
//
// The block and its statically sized tiles: this_thread_block(), tiled_partition<N>(block or
// tile) with N a power of two up to 32, and the tile's shuffles, votes and sync. A tile's
// operations are the warp intrinsics over the tile's lanes (its member mask, `width` N), as the
// SDK implements them. Not here: this_grid() and grid sync, coalesced_threads(), dynamically
// sized tiled_partition(block, n), the scan and memcpy_async headers.
#pragma once

namespace cooperative_groups {
struct thread_block {
  __device__ __forceinline__ void sync() const { __syncthreads(); }
  __device__ __forceinline__ unsigned thread_rank() const { return threadIdx.x + blockDim.x * (threadIdx.y + blockDim.y * threadIdx.z); }
  __device__ __forceinline__ unsigned size() const { return blockDim.x * blockDim.y * blockDim.z; }
  __device__ __forceinline__ unsigned num_threads() const { return size(); }
  __device__ __forceinline__ dim3 group_index() const { return blockIdx; }
  __device__ __forceinline__ dim3 thread_index() const { return threadIdx; }
  __device__ __forceinline__ dim3 group_dim() const { return blockDim; }
  __device__ __forceinline__ dim3 dim_threads() const { return blockDim; }
};
static __device__ __forceinline__ thread_block this_thread_block() { return thread_block(); }

// A tile of N consecutive threads (by block rank) of the block or of a larger tile.
// thread_block_tile<N, Parent> is what tiled_partition returns; it converts to
// thread_block_tile<N>, which knows its parent's size from the run (0: the block).
template <unsigned N, class Parent = void>
struct thread_block_tile;
template <unsigned N>
struct thread_block_tile<N, void> {
  static_assert(N >= 1 && N <= 32 && (N & (N - 1)) == 0, "LARK: tile sizes are powers of two up to 32");
  unsigned __lark_parent_size;
  __device__ __forceinline__ explicit thread_block_tile(unsigned parent_size = 0) : __lark_parent_size(parent_size) {}
  __device__ __forceinline__ unsigned __lark_block_rank() const { return this_thread_block().thread_rank(); }
  __device__ __forceinline__ unsigned thread_rank() const { return __lark_block_rank() & (N - 1); }
  __device__ __forceinline__ static constexpr unsigned size() { return N; }
  __device__ __forceinline__ static constexpr unsigned num_threads() { return N; }
  // Which tile of its parent this is, and how many tiles the parent has.
  __device__ __forceinline__ unsigned meta_group_rank() const {
    return __lark_parent_size == 0 ? __lark_block_rank() / N : (__lark_block_rank() & (__lark_parent_size - 1)) / N;
  }
  __device__ __forceinline__ unsigned meta_group_size() const {
    return __lark_parent_size == 0 ? (this_thread_block().size() + N - 1) / N : __lark_parent_size / N;
  }
  // The lanes of this tile inside its warp.
  __device__ __forceinline__ unsigned __lark_first_lane() const { return (__lark_block_rank() & 31u) & ~(N - 1); }
  __device__ __forceinline__ unsigned __lark_mask() const { return N == 32 ? 0xffffffffu : ((1u << (N & 31u)) - 1u) << __lark_first_lane(); }
  __device__ __forceinline__ void sync() const { __syncwarp(__lark_mask()); }
  template <class T>
  __device__ __forceinline__ T shfl(T v, int src) const {
    return __shfl_sync(__lark_mask(), v, src, N);
  }
  template <class T>
  __device__ __forceinline__ T shfl_down(T v, unsigned d) const {
    return __shfl_down_sync(__lark_mask(), v, d, N);
  }
  template <class T>
  __device__ __forceinline__ T shfl_up(T v, unsigned d) const {
    return __shfl_up_sync(__lark_mask(), v, d, N);
  }
  template <class T>
  __device__ __forceinline__ T shfl_xor(T v, unsigned m) const {
    return __shfl_xor_sync(__lark_mask(), v, (int)m, N);
  }
  // The tile's own bits, from its first lane on (as the SDK returns them).
  __device__ __forceinline__ unsigned ballot(int pred) const { return (__ballot_sync(__lark_mask(), pred) & __lark_mask()) >> __lark_first_lane(); }
  __device__ __forceinline__ int any(int pred) const { return __any_sync(__lark_mask(), pred); }
  __device__ __forceinline__ int all(int pred) const { return __all_sync(__lark_mask(), pred); }
};
template <unsigned N, class Parent>
struct thread_block_tile : thread_block_tile<N, void> {
  __device__ __forceinline__ explicit thread_block_tile(unsigned parent_size) : thread_block_tile<N, void>(parent_size) {}
};
template <unsigned N>
static __device__ __forceinline__ thread_block_tile<N, thread_block> tiled_partition(const thread_block&) {
  return thread_block_tile<N, thread_block>(0);
}
template <unsigned N, unsigned M, class P>
static __device__ __forceinline__ thread_block_tile<N, thread_block_tile<M, P>> tiled_partition(const thread_block_tile<M, P>&) {
  static_assert(N <= M, "LARK: a tile is partitioned into smaller tiles");
  return thread_block_tile<N, thread_block_tile<M, P>>(M);
}
template <class Group>
static __device__ __forceinline__ void sync(const Group& g) {
  g.sync();
}
template <class Group>
static __device__ __forceinline__ unsigned thread_rank(const Group& g) {
  return g.thread_rank();
}
template <class Group>
static __device__ __forceinline__ unsigned group_size(const Group& g) {
  return g.size();
}
}  // namespace cooperative_groups
