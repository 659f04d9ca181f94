// LARK's stand-in for the CUDA SDK's cooperative_groups/reduce.h (clang path; see
// cuda_prelude.h): cg::reduce over a tile with cg::plus, less (the minimum), greater (the
// maximum), bit_and, bit_or, bit_xor or any callable, as a butterfly of shfl_xor (every lane ends
// with the result, as with the SDK).
#pragma once
#include <cooperative_groups.h>

namespace cooperative_groups {
template <class T>
struct plus {
  __device__ __forceinline__ T operator()(T a, T b) const { return a + b; }
};
template <class T>
struct less {
  __device__ __forceinline__ T operator()(T a, T b) const { return b < a ? b : a; }
};
template <class T>
struct greater {
  __device__ __forceinline__ T operator()(T a, T b) const { return a < b ? b : a; }
};
template <class T>
struct bit_and {
  __device__ __forceinline__ T operator()(T a, T b) const { return a & b; }
};
template <class T>
struct bit_or {
  __device__ __forceinline__ T operator()(T a, T b) const { return a | b; }
};
template <class T>
struct bit_xor {
  __device__ __forceinline__ T operator()(T a, T b) const { return a ^ b; }
};
template <unsigned N, class P, class T, class Op>
static __device__ __forceinline__ T reduce(const thread_block_tile<N, P>& g, T v, Op op) {
#pragma unroll
  for (unsigned m = N / 2; m > 0; m /= 2) v = op(v, g.shfl_xor(v, m));
  return v;
}
}  // namespace cooperative_groups
