// Modelled on karpathy/llm.c llmc/layernorm.cuh, fused_residual_forward_kernel5, commit
// f1e2ace651495b74ae22d45d1723443fd00ecd3a, MIT licence. Written for LARK's corpus from that
// kernel's structure (residual = inp1 + inp2 written out, then LayerNorm of the residual, weights
// staged in dynamic shared memory, one row per warp of a (32, y) block); not a copy of its text.
// floatX is float here. Host launch in llm.c: block (32, 4), grid ceil(N / 4),
// dynamic shared (2 + 4) * C * sizeof(floatX).
#include "real_prelude.h"

extern "C" __global__ void llmc_fused_residual_fwd(float* residual, float* normed, float* mean, float* rstd,
                                                   const float* inp1, const float* inp2, const float* weight,
                                                   const float* bias, int N, int C) {
  extern __shared__ float4 staged[];
  const int packs = C / 4;
  float4* w_s = staged;
  float4* b_s = staged + packs;
  float4* row_s = staged + (2 + threadIdx.y) * packs;

  for (int p = threadIdx.x + 32 * threadIdx.y; p < packs; p += 32 * blockDim.y) {
    w_s[p] = reinterpret_cast<const float4*>(weight)[p];
    b_s[p] = reinterpret_cast<const float4*>(bias)[p];
  }
  __syncthreads();

  int row = blockIdx.x * blockDim.y + threadIdx.y;
  if (row > N) return;  // llm.c guards with `idx > N` here; the launch makes row < N anyway
  const int base = row * packs;

  float total = 0.0f;
  for (int p = threadIdx.x; p < packs; p += 32) {
    float4 a = reinterpret_cast<const float4*>(inp1)[base + p];
    float4 b = reinterpret_cast<const float4*>(inp2)[base + p];
    float4 s = make_float4(a.x + b.x, a.y + b.y, a.z + b.z, a.w + b.w);
    total += s.x + s.y + s.z + s.w;
    row_s[p] = s;
    reinterpret_cast<float4*>(residual)[base + p] = s;
  }
  cg::thread_block_tile<32> warp = cg::tiled_partition<32>(cg::this_thread_block());
  float mu = cg::reduce(warp, total, cg::plus<float>{}) / C;

  float var = 0.0f;
  for (int p = threadIdx.x; p < packs; p += 32) {
    float4 s = row_s[p];
    var += (s.x - mu) * (s.x - mu) + (s.y - mu) * (s.y - mu) + (s.z - mu) * (s.z - mu) + (s.w - mu) * (s.w - mu);
  }
  float inv = rsqrtf(cg::reduce(warp, var, cg::plus<float>{}) / C + 1e-5f);

  for (int p = threadIdx.x; p < packs; p += 32) {
    float4 s = row_s[p], w = w_s[p], b = b_s[p];
    float4 r = make_float4(inv * (s.x - mu) * w.x + b.x, inv * (s.y - mu) * w.y + b.y, inv * (s.z - mu) * w.z + b.z,
                           inv * (s.w - mu) * w.w + b.w);
    reinterpret_cast<float4*>(normed)[base + p] = r;
  }
  if (threadIdx.x == 0) {
    mean[row] = mu;
    rstd[row] = inv;
  }
}
