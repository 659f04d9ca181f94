// Modelled on karpathy/llm.c llmc/layernorm.cuh, layernorm_forward_kernel6, commit
// f1e2ace651495b74ae22d45d1723443fd00ecd3a, MIT licence. Written for LARK's corpus from that
// kernel's structure (block of (32, y) threads, weights and biases staged in dynamic shared memory
// before any thread may leave, one row per warp kept in shared memory, 128-bit accesses); not a copy
// of its text. floatX is float here (llm.c's FP32 build), so a 128-bit pack holds 4 values.
// Host launch in llm.c: block (32, 4), grid ceil(N / 4), dynamic shared (2 + 4) * C * sizeof(floatX).
#include "real_prelude.h"

extern "C" __global__ void llmc_layernorm_fwd_smem(float* __restrict__ out, float* __restrict__ mean,
                                                   float* __restrict__ rstd, const float* __restrict__ inp,
                                                   const float* __restrict__ weight, const float* __restrict__ bias,
                                                   int N, int C) {
  extern __shared__ float4 staged[];
  const int packs = C / 4;
  float4* w_s = staged;
  float4* b_s = staged + packs;
  float4* row_s = staged + (2 + threadIdx.y) * packs;

  // Every thread of the block helps to stage weight and bias, before the row guard below.
  for (int p = threadIdx.x + 32 * threadIdx.y; p < packs; p += 32 * blockDim.y) {
    w_s[p] = reinterpret_cast<const float4*>(weight)[p];
    b_s[p] = reinterpret_cast<const float4*>(bias)[p];
  }
  __syncthreads();

  int row = blockIdx.x * blockDim.y + threadIdx.y;
  if (row >= N) return;
  const float4* x = reinterpret_cast<const float4*>(inp + row * C);
  float4* y = reinterpret_cast<float4*>(out + row * C);

  float total = 0.0f;
  for (int p = threadIdx.x; p < packs; p += 32) {
    float4 v = __ldcs(x + p);
    total += v.x + v.y + v.z + v.w;
    row_s[p] = v;
  }
  total = cg::reduce(cg::tiled_partition<32>(cg::this_thread_block()), total, cg::plus<float>{});
  float mu = total / C;

  float var = 0.0f;
  for (int p = threadIdx.x; p < packs; p += 32) {
    float4 v = row_s[p];
    var += (v.x - mu) * (v.x - mu) + (v.y - mu) * (v.y - mu) + (v.z - mu) * (v.z - mu) + (v.w - mu) * (v.w - mu);
  }
  var = cg::reduce(cg::tiled_partition<32>(cg::this_thread_block()), var, cg::plus<float>{}) / C;
  float inv = rsqrtf(var + 1e-5f);

  for (int p = threadIdx.x; p < packs; p += 32) {
    float4 v = row_s[p], w = w_s[p], b = b_s[p];
    float4 r;
    r.x = inv * (v.x - mu) * w.x + b.x;
    r.y = inv * (v.y - mu) * w.y + b.y;
    r.z = inv * (v.z - mu) * w.z + b.z;
    r.w = inv * (v.w - mu) * w.w + b.w;
    __stcs(y + p, r);
  }
  if (threadIdx.x == 0 && mean != nullptr) __stcs(mean + row, mu);
  if (threadIdx.x == 0 && rstd != nullptr) __stcs(rstd + row, inv);
}
