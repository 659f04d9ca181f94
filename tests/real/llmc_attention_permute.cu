// Modelled on karpathy/llm.c llmc/attention.cuh, permute_kernel and unpermute_kernel, commit
// f1e2ace651495b74ae22d45d1723443fd00ecd3a, MIT licence. Written for LARK's corpus from those
// kernels' index arithmetic (QKV of shape (B, T, 3, NH, d) split into Q, K, V of shape
// (B, NH, T, d), and back); not a copy of their text. floatX is float here.
// Host launch in llm.c: block 256, grid ceil(B * NH * T * d / 256).
#include "real_prelude.h"

extern "C" __global__ void llmc_attention_permute(float* q, float* k, float* v, const float* inp, int B, int N, int NH, int d) {
  int idx = blockIdx.x * blockDim.x + threadIdx.x;
  if (idx >= B * NH * N * d) return;
  int b = idx / (NH * N * d);
  int r = idx % (NH * N * d);
  int h = r / (N * d);
  r %= N * d;
  int n = r / d;
  int j = r % d;
  int src = b * N * 3 * NH * d + n * 3 * NH * d + h * d + j;
  q[idx] = __ldcs(inp + src);
  k[idx] = __ldcs(inp + src + NH * d);
  v[idx] = __ldcs(inp + src + 2 * NH * d);
}

extern "C" __global__ void llmc_attention_unpermute(const float* inp, float* out, int B, int N, int NH, int d) {
  int idx = blockIdx.x * blockDim.x + threadIdx.x;
  if (idx >= B * NH * N * d) return;
  int b = idx / (NH * N * d);
  int r = idx % (NH * N * d);
  int h = r / (N * d);
  r %= N * d;
  int n = r / d;
  int j = r % d;
  int dst = b * NH * N * d + n * NH * d + h * d + j;
  out[dst] = __ldcs(inp + idx);
}
