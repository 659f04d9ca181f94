// A block-wide sum and max in the shape of vLLM's csrc/reduction_utils.cuh (warp butterfly, one
// slot per warp in shared memory, then the first warp reduces the slots), which vLLM used before
// it switched to cub::BlockReduce; cub is not available here. Written for LARK's corpus.
#pragma once
#include "real_prelude.h"

namespace vllm {
template <typename T>
__device__ __forceinline__ T warp_reduce_sum(T v) {
#pragma unroll
  for (int m = 16; m > 0; m >>= 1) v += __shfl_xor_sync(0xffffffffu, v, m);
  return v;
}
template <typename T>
__device__ __forceinline__ T warp_reduce_max(T v) {
#pragma unroll
  for (int m = 16; m > 0; m >>= 1) v = fmaxf(v, __shfl_xor_sync(0xffffffffu, v, m));
  return v;
}
// Every thread gets the block's sum. The barrier at the end lets a caller reuse the slots.
template <typename T>
__device__ __forceinline__ T block_reduce_sum(T v) {
  static __shared__ T slots[32];
  int lane = threadIdx.x & 31, wid = threadIdx.x >> 5;
  v = warp_reduce_sum<T>(v);
  if (lane == 0) slots[wid] = v;
  __syncthreads();
  v = (threadIdx.x < (blockDim.x + 31) / 32) ? slots[lane] : (T)0.0f;
  v = warp_reduce_sum<T>(v);
  return v;
}
template <typename T>
__device__ __forceinline__ T block_reduce_max(T v) {
  static __shared__ T slots[32];
  int lane = threadIdx.x & 31, wid = threadIdx.x >> 5;
  v = warp_reduce_max<T>(v);
  if (lane == 0) slots[wid] = v;
  __syncthreads();
  v = (threadIdx.x < (blockDim.x + 31) / 32) ? slots[lane] : -FLT_MAX;
  v = warp_reduce_max<T>(v);
  return v;
}
}  // namespace vllm
