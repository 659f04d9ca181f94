// Modelled on vllm-project/vllm csrc/activation_kernels.cu, act_and_mul_kernel<scalar_t,
// silu_kernel, true>, commit 00ccbd42dc1f40412cc711c5737cc4be0e7a8145, Apache-2.0 licence. Written
// for LARK's corpus from that kernel's structure (one block per token, input [.., 2, d] read through
// the read-only cache, out = silu(x) * y); not a copy of its text. Instantiated for __nv_bfloat16.
// Host launch in vLLM: grid num_tokens, block min(d, 1024).
#include "real_prelude.h"

namespace vllm {
template <typename T>
__device__ __forceinline__ T silu(const T& x) {
  return (T)(((float)x) / (1.0f + expf((float)-x)));
}

template <typename scalar_t>
__global__ void silu_and_mul_kernel(scalar_t* __restrict__ out, const scalar_t* __restrict__ input, const int d) {
  const long token = blockIdx.x;
  for (long i = threadIdx.x; i < d; i += blockDim.x) {
    const scalar_t x = __ldg(&input[token * 2 * d + i]);
    const scalar_t y = __ldg(&input[token * 2 * d + d + i]);
    out[token * d + i] = silu(x) * y;
  }
}
template __global__ void silu_and_mul_kernel<__nv_bfloat16>(__nv_bfloat16*, const __nv_bfloat16*, const int);
}  // namespace vllm
