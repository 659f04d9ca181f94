// Modelled on vllm-project/vllm csrc/quantization/compressed_tensors/int8_quant_kernels.cu,
// dynamic_scaled_int8_quant_kernel<scalar_t, scale_type> with float_to_int8_rn, commit
// fc4a42832215fcd219b0ab0d4b5b99e41baf8d45, Apache-2.0 licence. Written for LARK's corpus from that
// kernel's structure (one block per token, absolute max by a block reduction, thread 0 stores the
// per-token scale and publishes it in shared memory, barrier, every element rounded and saturated
// to int8 with cvt.rni.sat.s8.f32 as vLLM does in inline PTX); not a copy of its text. The block
// reduction is vllm_block_reduce.h instead of cub. Instantiated for half.
// Host launch in vLLM: grid num_tokens, block min(hidden_size, 1024).
#include "vllm_block_reduce.h"

namespace vllm {
static __device__ __forceinline__ int8_t float_to_int8_rn(float x) {
  unsigned int dst;
  asm volatile("cvt.rni.sat.s8.f32 %0, %1;" : "=r"(dst) : "f"(x));
  return reinterpret_cast<const int8_t&>(dst);
}

template <typename scalar_t, typename scale_type>
__global__ void dynamic_scaled_int8_quant_kernel(scalar_t const* __restrict__ input, int8_t* __restrict__ out,
                                                 scale_type* scale, const int hidden_size) {
  const int tid = threadIdx.x;
  const long token = blockIdx.x;
  __shared__ float s_scale;
  float absmax = 0.0f;
  for (int i = tid; i < hidden_size; i += blockDim.x) {
    float x = (float)input[token * hidden_size + i];
    absmax = fmaxf(absmax, fabsf(x));
  }
  float block_max = block_reduce_max<float>(absmax);
  if (tid == 0) {
    scale[token] = block_max / 127.0f;
    s_scale = block_max;
  }
  __syncthreads();
  const float inv = 127.0f / s_scale;
  for (int i = tid; i < hidden_size; i += blockDim.x) out[token * hidden_size + i] = float_to_int8_rn((float)input[token * hidden_size + i] * inv);
}
template __global__ void dynamic_scaled_int8_quant_kernel<half, float>(half const*, int8_t*, float*, const int);
}  // namespace vllm
