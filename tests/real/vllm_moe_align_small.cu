// Modelled on vllm-project/vllm csrc/moe/moe_align_sum_kernels.cu,
// moe_align_block_size_small_batch_expert_kernel<scalar_t> (taken by vLLM from sgl-project/sglang),
// commit 00e6fb6d7193804fd96d84c850fd6505574e8e0d, Apache-2.0 licence. Written for LARK's corpus
// from that kernel's structure (a single block; per-thread expert counters in dynamic shared memory
// indexed by the loaded expert ids, a column prefix sum by the first num_experts threads, a padded
// cumulative sum by thread 0, then expert_ids filled per block of tokens and every token scattered
// to its rank); not a copy of its text. Instantiated for int32 topk_ids.
// Race freedom needs expert ids in [0, num_experts): lark.toml declares in_range(0, num_experts).
// Host launch in vLLM: 1 block of max(num_experts, 32) threads, dynamic shared
// ((threads + 1) * num_experts + (num_experts + 1)) * 4 bytes.
#include "real_prelude.h"

#define CEILDIV(x, y) (((x) + (y) - 1) / (y))

namespace vllm {
namespace moe {
template <typename scalar_t>
__global__ void moe_align_block_size_small_batch_expert_kernel(const scalar_t* __restrict__ topk_ids, int32_t* __restrict__ sorted_token_ids,
                                                               int32_t* __restrict__ expert_ids, int32_t* __restrict__ total_tokens_post_pad,
                                                               int32_t num_experts, int32_t block_size, unsigned long numel,
                                                               int32_t max_num_tokens_padded) {
  for (unsigned long it = threadIdx.x; it < max_num_tokens_padded; it += blockDim.x) sorted_token_ids[it] = numel;

  extern __shared__ int32_t shared_mem[];
  int32_t* cumsum = shared_mem;
  int32_t* counts = shared_mem + num_experts + 1;  // (blockDim.x + 1) rows of num_experts counters

  for (int e = 0; e < num_experts; ++e) counts[(threadIdx.x + 1) * num_experts + e] = 0;
  for (unsigned long i = threadIdx.x; i < numel; i += blockDim.x) ++counts[(threadIdx.x + 1) * num_experts + topk_ids[i]];
  __syncthreads();

  if (threadIdx.x < num_experts) {
    counts[threadIdx.x] = 0;
    for (int t = 1; t <= blockDim.x; ++t) counts[t * num_experts + threadIdx.x] += counts[(t - 1) * num_experts + threadIdx.x];
  }
  __syncthreads();

  if (threadIdx.x == 0) {
    cumsum[0] = 0;
    for (int e = 1; e <= num_experts; ++e)
      cumsum[e] = cumsum[e - 1] + CEILDIV(counts[blockDim.x * num_experts + e - 1], block_size) * block_size;
    *total_tokens_post_pad = cumsum[num_experts];
  }
  __syncthreads();

  if (threadIdx.x < num_experts)
    for (int i = cumsum[threadIdx.x]; i < cumsum[threadIdx.x + 1]; i += block_size) expert_ids[i / block_size] = threadIdx.x;

  const unsigned long fill_start = cumsum[num_experts] / block_size + threadIdx.x;
  const unsigned long n_blocks = CEILDIV(max_num_tokens_padded, block_size);
  for (unsigned long i = fill_start; i < n_blocks; i += blockDim.x) expert_ids[i] = 0;

  for (unsigned long i = threadIdx.x; i < numel; i += blockDim.x) {
    int32_t expert = topk_ids[i];
    int32_t rank = counts[threadIdx.x * num_experts + expert] + cumsum[expert];
    sorted_token_ids[rank] = i;
    ++counts[threadIdx.x * num_experts + expert];
  }
}
template __global__ void moe_align_block_size_small_batch_expert_kernel<int32_t>(const int32_t*, int32_t*, int32_t*, int32_t*, int32_t, int32_t,
                                                                                 unsigned long, int32_t);
}  // namespace moe
}  // namespace vllm
