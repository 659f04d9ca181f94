// Modelled on ggml-org/llama.cpp ggml/src/ggml-cuda/norm.cu, rms_norm_f32<block_size> (the
// version with a 32-slot shared buffer for blocks wider than a warp), commit
// ab3713707ee21b42a954ba360adcf1076279739f, MIT licence. Written for LARK's corpus from that
// kernel's structure (one row per block, strided sum of squares, warp reduction, lane 0 of each
// warp stores its partial, barrier, every warp re-reduces all 32 slots, scaled write); not a copy
// of its text. Instantiated for block_size 1024, which llama.cpp launches when ncols >= 1024
// (every warp then writes its slot, so all 32 slots are defined).
// Host launch in llama.cpp: grid nrows, block 1024.
#include "ggml_common.h"

template <int block_size>
static __global__ void rms_norm_f32(const float* x, float* dst, const int ncols, const float eps) {
  const int row = blockIdx.x * blockDim.y + threadIdx.y;
  const int tid = threadIdx.x;
  float tmp = 0.0f;
  for (int col = tid; col < ncols; col += block_size) {
    const float xi = x[row * ncols + col];
    tmp += xi * xi;
  }
  tmp = warp_reduce_sum(tmp);
  if (block_size > WARP_SIZE) {
    __shared__ float s_sum[32];
    const int warp_id = threadIdx.x / WARP_SIZE;
    const int lane_id = threadIdx.x % WARP_SIZE;
    if (lane_id == 0) s_sum[warp_id] = tmp;
    __syncthreads();
    tmp = s_sum[lane_id];
    tmp = warp_reduce_sum(tmp);
  }
  const float scale = rsqrtf(tmp / ncols + eps);
  for (int col = tid; col < ncols; col += block_size) dst[row * ncols + col] = scale * x[row * ncols + col];
}

// The kernel is static in llama.cpp; this wrapper-free instantiation keeps its internal linkage.
template __global__ void rms_norm_f32<1024>(const float*, float*, const int, const float);
