// Modelled on karpathy/llm.c llmc/layernorm.cuh, layernorm_forward_kernel3 (and dev/cuda
// layernorm_forward.cu kernel3), commit f1e2ace651495b74ae22d45d1723443fd00ecd3a, MIT licence.
// Written for LARK's corpus from that kernel's structure (one warp per row, cooperative-groups
// warp reductions, streaming stores of mean/rstd by lane 0); not a copy of its text.
// Host launch in llm.c: block 512 (here 256), grid ceil(N * 32 / block).
#include "real_prelude.h"

extern "C" __global__ void llmc_layernorm_fwd_warp(float* __restrict__ out, float* __restrict__ mean,
                                                   float* __restrict__ rstd, const float* __restrict__ inp,
                                                   const float* __restrict__ weight, const float* __restrict__ bias,
                                                   int N, int C) {
  cg::thread_block block = cg::this_thread_block();
  cg::thread_block_tile<32> warp = cg::tiled_partition<32>(block);
  int row = blockIdx.x * warp.meta_group_size() + warp.meta_group_rank();
  if (row >= N) return;
  const float* x = inp + row * C;

  float acc = 0.0f;
  for (int c = warp.thread_rank(); c < C; c += warp.size()) acc += x[c];
  acc = cg::reduce(warp, acc, cg::plus<float>{});
  float mu = acc / C;
  if (warp.thread_rank() == 0 && mean != nullptr) __stcs(mean + row, mu);

  acc = 0.0f;
  for (int c = warp.thread_rank(); c < C; c += warp.size()) {
    float d = x[c] - mu;
    acc += d * d;
  }
  acc = cg::reduce(warp, acc, cg::plus<float>{});
  float inv = rsqrtf(acc / C + 1e-5f);
  if (warp.thread_rank() == 0 && rstd != nullptr) __stcs(rstd + row, inv);

  float* o = out + row * C;
  for (int c = warp.thread_rank(); c < C; c += warp.size()) {
    float n = inv * (__ldcs(x + c) - mu);
    __stcs(o + c, n * weight[c] + bias[c]);
  }
}
