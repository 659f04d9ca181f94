// Modelled on vllm-project/vllm csrc/layernorm_kernels.cu, fused_add_rms_norm_kernel<scalar_t, 0>
// (the generic, non-vectorised variant), commit 0112cf233e0c60674c2844a09695ddeb2b901dc0,
// Apache-2.0 licence. Written for LARK's corpus from that kernel's structure (residual += input
// written back in place, sum of squares, block reduction, shared inverse RMS, barrier, normalised
// residual written over the input); not a copy of its text. Instantiated for __nv_bfloat16.
// Host launch in vLLM: grid num_tokens, block min(hidden_size, num_tokens < 256 ? 1024 : 256).
#include "vllm_block_reduce.h"

namespace vllm {
template <typename scalar_t, int width>
__global__ void fused_add_rms_norm_kernel(scalar_t* __restrict__ input, const long input_stride, scalar_t* __restrict__ residual,
                                          const scalar_t* __restrict__ weight, const float epsilon, const int num_tokens,
                                          const int hidden_size) {
  __shared__ float s_inv_rms;
  float sum_sq = 0.0f;
  for (int i = threadIdx.x; i < hidden_size; i += blockDim.x) {
    scalar_t z = input[blockIdx.x * input_stride + i];
    z += residual[blockIdx.x * hidden_size + i];
    float x = (float)z;
    sum_sq += x * x;
    residual[blockIdx.x * hidden_size + i] = z;
  }
  sum_sq = block_reduce_sum<float>(sum_sq);
  if (threadIdx.x == 0) s_inv_rms = rsqrtf(sum_sq / hidden_size + epsilon);
  __syncthreads();
  for (int i = threadIdx.x; i < hidden_size; i += blockDim.x) {
    float x = (float)residual[blockIdx.x * hidden_size + i];
    input[blockIdx.x * input_stride + i] = ((scalar_t)(x * s_inv_rms)) * weight[i];
  }
}
template __global__ void fused_add_rms_norm_kernel<__nv_bfloat16, 0>(__nv_bfloat16*, const long, __nv_bfloat16*, const __nv_bfloat16*,
                                                                     const float, const int, const int);
}  // namespace vllm
