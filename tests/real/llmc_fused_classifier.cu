// Modelled on karpathy/llm.c llmc/fused_classifier.cuh, fused_classifier_kernel5 with
// prepare_softmax_blockwide3 and blockReduce (llmc/cuda_utils.cuh), commit
// f1e2ace651495b74ae22d45d1723443fd00ecd3a, MIT licence. Written for LARK's corpus from that
// kernel's structure (one 1024-thread block per row in reverse order, a backwards bounds-checked
// tail loop then an unchecked 128-bit loop for the online softmax, two block reductions through a
// 32-slot shared buffer, thread 0 reading the target logit before the barrier that precedes the
// in-place overwrite of the logits with their gradients, and a remainder loop); not a copy of its
// text. floatX is float (packs of 4).
//
// Note on the remainder loop: like the original it advances `i` by 1, so when V % 4 > 1 several
// threads of a block handle (and write) the same tail elements while others still read them. With
// GPT-2's V = 50257 only thread 0 enters it (50257 % 4 == 1); with other vocabulary sizes it races.
// Host launch in llm.c: grid B * T, block 1024.
#include "real_prelude.h"

static __device__ __forceinline__ float warp_max(float v) {
  for (int m = 16; m > 0; m /= 2) v = fmaxf(v, __shfl_xor_sync(0xffffffffu, v, m));
  return v;
}
static __device__ __forceinline__ float warp_sum(float v) {
  for (int m = 16; m > 0; m /= 2) v += __shfl_xor_sync(0xffffffffu, v, m);
  return v;
}
// Warp, then across warps through shared memory, then warp again (llm.c's blockReduce).
template <bool IsMax>
static __device__ __forceinline__ float block_reduce(float v, float neutral) {
  __shared__ float per_warp[32];
  const int lane = threadIdx.x % 32, wid = threadIdx.x / 32, nwarps = blockDim.x / 32;
  float w = IsMax ? warp_max(v) : warp_sum(v);
  if (lane == 0) per_warp[wid] = w;
  __syncthreads();
  w = lane < nwarps ? per_warp[lane] : neutral;
  return IsMax ? warp_max(w) : warp_sum(w);
}

extern "C" __global__ void llmc_fused_classifier(float* logits, float* losses, const float dloss, const int* targets, int B, int T,
                                                 int V, int P) {
  long row = gridDim.x - (blockIdx.x + 1);
  int target = targets[row];
  const float* x = logits + row * P;

  float hi = -INFINITY, sum = 0.0f;
  int p = (V + 3) / 4 + threadIdx.x - blockDim.x;
  while ((p + 1) * 4 > V) {  // the last, partly valid packs, bounds-checked against V
    for (int k = 0; k < 4; ++k) {
      if (p * 4 + k >= V) break;
      float v = x[p * 4 + k];
      float old = hi;
      hi = fmaxf(hi, v);
      sum = sum * expf(old - hi) + expf(v - hi);
    }
    p -= blockDim.x;
  }
  for (; p >= 0; p -= blockDim.x) {
    float4 v4 = *reinterpret_cast<const float4*>(x + p * 4);
    float vs[4] = {v4.x, v4.y, v4.z, v4.w};
    for (int k = 0; k < 4; ++k) {
      float old = hi;
      hi = fmaxf(hi, vs[k]);
      sum = sum * expf(old - hi) + expf(vs[k] - hi);
    }
  }
  float row_max = block_reduce<true>(hi, -INFINITY);
  sum *= expf(hi - row_max);
  float scale = 1.0f / block_reduce<false>(sum, 0.0f);

  if (threadIdx.x == 0) {
    float prob = expf(x[target] - row_max) * scale;
    losses[row] -= logf(prob);
  }
  // Thread 0 has read logits[target]; the loop below overwrites the row.
  __syncthreads();

  for (int q = threadIdx.x; q < V / 4; q += blockDim.x) {
    float4 v4 = *reinterpret_cast<const float4*>(x + q * 4);
    float vs[4] = {v4.x, v4.y, v4.z, v4.w};
    for (int k = 0; k < 4; ++k) {
      float prob = expf(vs[k] - row_max) * scale;
      vs[k] = (prob - (q * 4 + k == target ? 1.0f : 0.0f)) * dloss;
    }
    __stcs(reinterpret_cast<float4*>(logits + row * P + q * 4), make_float4(vs[0], vs[1], vs[2], vs[3]));
  }
  int tail = V & ~3;
  for (int i = threadIdx.x + tail; i < V; i++) {
    float prob = expf(x[i] - row_max) * scale;
    __stcs(logits + row * P + i, (prob - (i == target ? 1.0f : 0.0f)) * dloss);
  }
}
