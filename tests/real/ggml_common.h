// Warp reductions in the shape of llama.cpp's ggml/src/ggml-cuda/common.cuh (warp_reduce_sum,
// warp_reduce_max, templated on the width of the lane group). Written for LARK's corpus.
#pragma once
#include "real_prelude.h"

#define WARP_SIZE 32

template <int width = WARP_SIZE>
static __device__ __forceinline__ float warp_reduce_sum(float x) {
#pragma unroll
  for (int offset = width / 2; offset > 0; offset >>= 1) x += __shfl_xor_sync(0xffffffffu, x, offset, width);
  return x;
}
template <int width = WARP_SIZE>
static __device__ __forceinline__ float warp_reduce_max(float x) {
#pragma unroll
  for (int offset = width / 2; offset > 0; offset >>= 1) x = fmaxf(x, __shfl_xor_sync(0xffffffffu, x, offset, width));
  return x;
}
