// Modelled on karpathy/llm.c llmc/gelu.cuh, gelu_forward_kernel2 and gelu_backward_inplace_kernel,
// commit f1e2ace651495b74ae22d45d1723443fd00ecd3a, MIT licence. Written for LARK's corpus from those
// kernels' structure (tanh-approximated GELU over 128-bit packs with no bounds check: the host
// asserts N is a multiple of block * pack; the backward pass overwrites its gradient input in
// place); not a copy of their text. floatX is float, so a pack holds 4 values.
// Host launch in llm.c: block 512 (forward) / 128 (backward), grid N / (block * 4).
#include "real_prelude.h"

#define GELU_K 0.7978845608028654f  // sqrt(2 / pi)

extern "C" __global__ void llmc_gelu_fwd(float* out, const float* inp) {
  int i = (blockIdx.x * blockDim.x + threadIdx.x) * 4;
  float4 x = __ldcs(reinterpret_cast<const float4*>(inp + i));
  float4 y;
  y.x = 0.5f * x.x * (1.0f + tanhf(GELU_K * (x.x + 0.044715f * x.x * x.x * x.x)));
  y.y = 0.5f * x.y * (1.0f + tanhf(GELU_K * (x.y + 0.044715f * x.y * x.y * x.y)));
  y.z = 0.5f * x.z * (1.0f + tanhf(GELU_K * (x.z + 0.044715f * x.z * x.z * x.z)));
  y.w = 0.5f * x.w * (1.0f + tanhf(GELU_K * (x.w + 0.044715f * x.w * x.w * x.w)));
  *reinterpret_cast<float4*>(out + i) = y;
}

static __device__ __forceinline__ float gelu_grad(float x) {
  float arg = GELU_K * (x + 0.044715f * x * x * x);
  float t = tanhf(arg);
  float sech2 = 1.0f - t * t;
  return 0.5f * (1.0f + t) + x * 0.5f * sech2 * GELU_K * (1.0f + 3.0f * 0.044715f * x * x);
}

extern "C" __global__ void llmc_gelu_bwd_inplace(float* d_in_out, const float* inp) {
  int i = (blockIdx.x * blockDim.x + threadIdx.x) * 4;
  float4 x = __ldcs(reinterpret_cast<const float4*>(inp + i));
  float4 d = *reinterpret_cast<const float4*>(d_in_out + i);
  float4 r = make_float4(gelu_grad(x.x) * d.x, gelu_grad(x.y) * d.y, gelu_grad(x.z) * d.z, gelu_grad(x.w) * d.w);
  *reinterpret_cast<float4*>(d_in_out + i) = r;
}
