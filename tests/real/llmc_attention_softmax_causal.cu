// Modelled on karpathy/llm.c llmc/attention.cuh, softmax_forward_kernel5, commit
// f1e2ace651495b74ae22d45d1723443fd00ecd3a, MIT licence. Written for LARK's corpus from that
// kernel's structure (autoregressive attention softmax: one warp per (head, query) row, blocks
// walked in reverse order, only the causal prefix read in packs of 4, online max/sum in registers,
// warp reductions, streaming stores); not a copy of its text. floatX is float here.
// Host launch in llm.c: block 256, grid ceil(N * T * 32 / 256) with N = B * NH.
#include "real_prelude.h"

static __device__ __forceinline__ float warp_max(float v) {
  for (int m = 16; m > 0; m /= 2) v = fmaxf(v, __shfl_xor_sync(0xffffffffu, v, m));
  return v;
}
static __device__ __forceinline__ float warp_sum(float v) {
  for (int m = 16; m > 0; m /= 2) v += __shfl_xor_sync(0xffffffffu, v, m);
  return v;
}

extern "C" __global__ void llmc_attention_softmax_causal(float* out, float inv_temperature, const float* inp, int N, int T) {
  const int lane = threadIdx.x % 32, wid = threadIdx.x / 32, nwarps = blockDim.x / 32;
  // Last block first: the longest rows start early.
  int row = (gridDim.x - blockIdx.x - 1) * nwarps + wid;
  if (row >= N * T) return;
  int pos = row % T;
  int packs = pos / 4;
  const float* x = inp + row * T;

  float hi = -FLT_MAX, sum = 0.0f;
  for (int p = lane; p < packs; p += 32) {
    float v0 = x[4 * p], v1 = x[4 * p + 1], v2 = x[4 * p + 2], v3 = x[4 * p + 3];
    float old = hi;
    hi = fmaxf(fmaxf(hi, fmaxf(v0, v1)), fmaxf(v2, v3));
    sum *= expf(inv_temperature * (old - hi));
    sum += expf(inv_temperature * (v0 - hi)) + expf(inv_temperature * (v1 - hi)) + expf(inv_temperature * (v2 - hi)) +
           expf(inv_temperature * (v3 - hi));
  }
  // The tail of the causal prefix: up to 3 lanes take one more element each.
  if (4 * packs + lane <= pos) {
    float old = hi;
    float v = x[4 * packs + lane];
    hi = fmaxf(hi, v);
    sum = sum * expf(inv_temperature * (old - hi)) + expf(inv_temperature * (v - hi));
  }

  float row_max = warp_max(hi);
  sum *= expf(inv_temperature * (hi - row_max));
  float norm = 1.0f / warp_sum(sum);

  for (int i = lane; i <= pos; i += 32) {
    float e = expf(inv_temperature * (__ldcs(x + i) - row_max));
    __stcs(out + row * T + i, e * norm);
  }
}
