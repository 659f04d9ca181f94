// Modelled on karpathy/llm.c dev/cuda/softmax_forward.cu, softmax_forward_online_kernel2, commit
// f1e2ace651495b74ae22d45d1723443fd00ecd3a, MIT licence. Written for LARK's corpus from that
// kernel's structure (one warp per row via cooperative groups, online max/sum pairs combined with
// cg::reduce over an 8-byte struct, streaming stores); not a copy of its text.
// Host launch in llm.c: block 256 (8 rows per block), grid ceil(N * 32 / 256).
#include "real_prelude.h"

struct __attribute__((aligned(8))) MaxSum {
  float hi;
  float sum;
};

static __device__ __forceinline__ MaxSum combine(MaxSum a, MaxSum b) {
  MaxSum big = a.hi > b.hi ? a : b;
  MaxSum small = a.hi > b.hi ? b : a;
  return MaxSum{big.hi, big.sum + small.sum * expf(small.hi - big.hi)};
}

// cg::reduce over a two-float struct: the SDK shuffles such values one 32-bit word at a time.
static __device__ __forceinline__ MaxSum warp_combine(const cg::thread_block_tile<32>& warp, MaxSum v) {
  for (unsigned m = 16; m > 0; m /= 2) {
    MaxSum other{warp.shfl_xor(v.hi, m), warp.shfl_xor(v.sum, m)};
    v = combine(v, other);
  }
  return v;
}

extern "C" __global__ void llmc_softmax_online_cg(float* out, const float* inp, int N, int C) {
  cg::thread_block block = cg::this_thread_block();
  cg::thread_block_tile<32> warp = cg::tiled_partition<32>(block);
  int row = blockIdx.x * warp.meta_group_size() + warp.meta_group_rank();
  if (row >= N) return;
  const float* x = inp + row * C;

  MaxSum acc{-INFINITY, 0.0f};
  for (int i = warp.thread_rank(); i < C; i += warp.size()) acc = combine(acc, MaxSum{x[i], 1.0f});
  MaxSum total = warp_combine(warp, acc);

  for (int i = warp.thread_rank(); i < C; i += warp.size()) __stcs(out + row * C + i, expf(x[i] - total.hi) / total.sum);
}
