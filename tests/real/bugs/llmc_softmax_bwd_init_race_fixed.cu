// Reconstruction of a real synchronization bug, written for LARK's corpus (not the original code).
// Bug: karpathy/llm.c#847 "Fix data race between two writes on a shared memory in
// soft_max_autoregressive_backward_kernel": warp 0 zeroes block_acc[lane] (indexed by lane) while
// every warp writes its partial sum to block_acc[warp_id] (indexed by warp) with no barrier between,
// so warp 0's zeroing can overwrite another warp's partial.
// Pattern: the shared per-warp accumulator of the attention-softmax backward pass.
// This is the fixed version.
#include "../real_prelude.h"

extern "C" __global__ void softmax_bwd_block_acc_fixed(float* __restrict__ dpreatt, const float* __restrict__ datt,
                                                       const float* __restrict__ att, const int T, const float scale) {
  __shared__ float block_acc[32];
  const int warp = threadIdx.x / 32, lane = threadIdx.x % 32;
  const int t = blockIdx.x;  // one row of the T x T attention matrix per block
  const float* att_row = att + t * T;
  const float* datt_row = datt + t * T;
  if (warp == 0) block_acc[lane] = 0.0f;
  __syncthreads();  // the fix: zeroing is done before any warp stores its partial
  float local = 0.0f;
  for (int t2 = threadIdx.x; t2 <= t; t2 += blockDim.x) local += att_row[t2] * datt_row[t2];
  for (int o = 16; o > 0; o >>= 1) local += __shfl_xor_sync(0xffffffffu, local, o);
  if (lane == 0) block_acc[warp] = local;
  __syncthreads();
  float total = 0.0f;
  for (int w = 0; w < 32; ++w) total += block_acc[w];
  for (int t2 = threadIdx.x; t2 <= t; t2 += blockDim.x) dpreatt[t * T + t2] = scale * att_row[t2] * (datt_row[t2] - total);
}
