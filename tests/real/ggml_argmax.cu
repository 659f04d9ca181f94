// Modelled on ggml-org/llama.cpp ggml/src/ggml-cuda/argmax.cu, argmax_f32, commit
// 02838c7abfab171d96f642e217f59349ed58c100, MIT licence. Written for LARK's corpus from that
// kernel's structure (one row per block, strided scan keeping the first maximum, butterfly
// (value, index) reduction with ties to the smaller index, per-warp results in two 32-slot shared
// arrays, warp 0 reduces them, lanes past the warp count keep their own partial); not a copy of its
// text. Host launch in llama.cpp: grid nrows, block min(1024, ncols rounded up to 32).
#include "ggml_common.h"

static __global__ void argmax_f32(const float* __restrict__ x, int32_t* __restrict__ dst, const long long ncols) {
  const long long row = blockIdx.x;
  float best = -FLT_MAX;
  int best_col = -1;
  const float* rowx = x + row * ncols;
  for (int32_t col = threadIdx.x; col < ncols; col += blockDim.x) {
    const float v = rowx[col];
    if (v > best) {
      best = v;
      best_col = col;
    }
  }
#pragma unroll
  for (int offset = WARP_SIZE / 2; offset > 0; offset >>= 1) {
    const float v = __shfl_xor_sync(0xffffffffu, best, offset, WARP_SIZE);
    const int c = __nvvm_shfl_sync_bfly_i32(0xffffffffu, best_col, offset, 0x1f);
    if (v > best || (v == best && c < best_col)) {
      best = v;
      best_col = c;
    }
  }
  const int n_warps = blockDim.x / WARP_SIZE;
  const int lane_id = threadIdx.x % WARP_SIZE;
  const int warp_id = threadIdx.x / WARP_SIZE;
  if (n_warps > 1) {
    constexpr int max_warps = 1024 / WARP_SIZE;
    __shared__ float shared_max[max_warps];
    __shared__ int shared_arg[max_warps];
    if (lane_id == 0) {
      shared_max[warp_id] = best;
      shared_arg[warp_id] = best_col;
    }
    __syncthreads();
    if (warp_id == 0) {
      if (lane_id < n_warps) {
        best = shared_max[lane_id];
        best_col = shared_arg[lane_id];
      }
#pragma unroll
      for (int offset = WARP_SIZE / 2; offset > 0; offset >>= 1) {
        const float v = __shfl_xor_sync(0xffffffffu, best, offset, WARP_SIZE);
        const int c = __nvvm_shfl_sync_bfly_i32(0xffffffffu, best_col, offset, 0x1f);
        if (v > best || (v == best && c < best_col)) {
          best = v;
          best_col = c;
        }
      }
    }
  }
  if (warp_id == 0 && lane_id == 0) dst[row] = best_col;
}
