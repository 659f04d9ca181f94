// Modelled on vllm-project/vllm csrc/layernorm_kernels.cu, rms_norm_kernel<scalar_t>, commit
// 0112cf233e0c60674c2844a09695ddeb2b901dc0, Apache-2.0 licence. Written for LARK's corpus from that
// kernel's structure (one block per token, strided sum of squares, block reduction, thread 0
// publishes the inverse RMS in shared memory, barrier, scaled write); not a copy of its text. The
// block reduction is vllm_block_reduce.h instead of cub::BlockReduce. Instantiated for half.
// Host launch in vLLM: grid num_tokens, block min(hidden_size, 1024).
#include "vllm_block_reduce.h"

namespace vllm {
template <typename scalar_t>
__global__ void rms_norm_kernel(scalar_t* __restrict__ out, const scalar_t* __restrict__ input, const long input_stride,
                                const scalar_t* __restrict__ weight, const float epsilon, const int num_tokens,
                                const int hidden_size) {
  __shared__ float s_inv_rms;
  float sum_sq = 0.0f;
  for (int i = threadIdx.x; i < hidden_size; i += blockDim.x) {
    const float x = (float)input[blockIdx.x * input_stride + i];
    sum_sq += x * x;
  }
  sum_sq = block_reduce_sum<float>(sum_sq);
  if (threadIdx.x == 0) s_inv_rms = rsqrtf(sum_sq / hidden_size + epsilon);
  __syncthreads();
  for (int i = threadIdx.x; i < hidden_size; i += blockDim.x) {
    float x = (float)input[blockIdx.x * input_stride + i];
    out[blockIdx.x * hidden_size + i] = ((scalar_t)(x * s_inv_rms)) * weight[i];
  }
}
template __global__ void rms_norm_kernel<half>(half*, const half*, const long, const half*, const float, const int, const int);
}  // namespace vllm
