// Modelled on karpathy/llm.c llmc/global_norm.cuh, global_norm_squared_kernel and
// global_norm_aggregate_kernel with blockReduce (llmc/cuda_utils.cuh), commit
// f1e2ace651495b74ae22d45d1723443fd00ecd3a, MIT licence. Written for LARK's corpus from those
// kernels' structure (grid-stride sum of squares, a block reduction through a 32-slot shared
// buffer, one partial per block accumulated by thread 0; then one block reduces the partials and
// thread 0 overwrites out[0], which other threads read before the reduction's barrier); not a
// copy of their text. Host launch in llm.c: block 512, grid (2 * SMs, slices); aggregate: 1 x 1024.
#include "real_prelude.h"

static __device__ __forceinline__ float warp_sum(float v) {
  for (int m = 16; m > 0; m /= 2) v += __shfl_xor_sync(0xffffffffu, v, m);
  return v;
}
static __device__ __forceinline__ float block_sum(float v) {
  __shared__ float per_warp[32];
  const int lane = threadIdx.x % 32, wid = threadIdx.x / 32, nwarps = blockDim.x / 32;
  float w = warp_sum(v);
  if (lane == 0) per_warp[wid] = w;
  __syncthreads();
  w = lane < nwarps ? per_warp[lane] : 0.0f;
  return warp_sum(w);
}

extern "C" __global__ void llmc_global_norm_squared(float* out, const float* data, unsigned long count, long stride) {
  const float* d = data + blockIdx.y * stride;
  unsigned long start = blockIdx.x * blockDim.x + threadIdx.x;
  unsigned long step = blockDim.x * gridDim.x;
  float acc = 0.0f;
  for (unsigned long i = start; i < count; i += step) acc += d[i] * d[i];
  float s = block_sum(acc);
  if (threadIdx.x == 0) {
    unsigned long slot = blockIdx.y * gridDim.x + blockIdx.x;
    out[slot] = out[slot] + s;
  }
}

extern "C" __global__ void llmc_global_norm_aggregate(float* out, unsigned long grid_size) {
  unsigned long i = threadIdx.x;
  float partial = i < grid_size ? out[i] : 0.0f;
  float s = block_sum(partial);
  if (threadIdx.x == 0) out[0] = s;
}
