// Modelled on karpathy/llm.c dev/cuda/matmul_backward_bias.cu, matmul_backward_bias_kernel4,
// commit f1e2ace651495b74ae22d45d1723443fd00ecd3a, MIT licence. Written for LARK's corpus from that
// kernel's structure (a block owns 32 output channels, lane = channel, each warp sums every
// vstep-th row into dynamic shared memory laid out [warp][lane], warp 0 adds the columns up and
// accumulates into dbias); not a copy of its text. floatX is float.
// Host launch in llm.c: block 128 (any multiple of 32), grid OC / 32, shared block * sizeof(float).
#include "real_prelude.h"

extern "C" __global__ void llmc_matmul_bias_bwd(float* dbias, const float* dout, int B, int T, int OC) {
  extern __shared__ float colsum[];
  const int wid = threadIdx.x / 32, lane = threadIdx.x % 32;
  const int first = blockIdx.x * 32;
  const int nwarps = blockDim.x / 32;
  const float* col = dout + first + lane;

  float acc = 0.0f;
  for (int r = wid; r < B * T; r += nwarps) acc += col[r * OC];
  colsum[lane + wid * 32] = acc;
  __syncthreads();

  if (wid == 0) {
    float total = 0.0f;
    for (int w = 0; w < nwarps; w++) total += colsum[lane + w * 32];
    dbias[first + lane] = dbias[first + lane] + total;
  }
}
