// Modelled on karpathy/llm.c dev/cuda/softmax_forward.cu, softmax_forward_kernel4, commit
// f1e2ace651495b74ae22d45d1723443fd00ecd3a, MIT licence. Written for LARK's corpus from that
// kernel's structure (one block per row, warp shuffles, per-warp partials in dynamic shared memory
// combined by thread 0 and broadcast, out written twice: exp, then normalised); not a copy of its
// text. Host launch in llm.c: grid N, block 256 (any multiple of 32), shared warps * sizeof(float).
#include "real_prelude.h"

static __device__ __forceinline__ float warp_max(float v) {
  for (int m = 16; m > 0; m /= 2) v = fmaxf(v, __shfl_xor_sync(0xffffffffu, v, m));
  return v;
}
static __device__ __forceinline__ float warp_sum(float v) {
  for (int m = 16; m > 0; m /= 2) v += __shfl_xor_sync(0xffffffffu, v, m);
  return v;
}

extern "C" __global__ void llmc_softmax_fwd_block(float* out, const float* inp, int N, int C) {
  extern __shared__ float partial[];
  const int row = blockIdx.x;
  const int tid = threadIdx.x;
  const int lane = tid % 32, wid = tid / 32, nwarps = blockDim.x / 32;
  const float* x = inp + row * C;

  float m = -INFINITY;
  for (int i = tid; i < C; i += blockDim.x) m = fmaxf(m, x[i]);
  m = warp_max(m);
  if (lane == 0) partial[wid] = m;
  __syncthreads();
  if (tid == 0) {
    float v = partial[0];
    for (int w = 1; w < nwarps; w++) v = fmaxf(v, partial[w]);
    partial[0] = v;
  }
  __syncthreads();
  float shift = partial[0];

  for (int i = tid; i < C; i += blockDim.x) out[row * C + i] = expf(x[i] - shift);

  // The row of `out` is read back by the same thread that wrote each element.
  const float* e = out + row * C;
  float s = 0.0f;
  for (int i = tid; i < C; i += blockDim.x) s += e[i];
  s = warp_sum(s);
  if (lane == 0) partial[wid] = s;
  __syncthreads();
  if (tid == 0) {
    float v = partial[0];
    for (int w = 1; w < nwarps; w++) v += partial[w];
    partial[0] = v;
  }
  __syncthreads();
  float total = partial[0];
  for (int i = tid; i < C; i += blockDim.x) out[row * C + i] = e[i] / total;
}
