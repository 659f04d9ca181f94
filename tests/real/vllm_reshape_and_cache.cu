// Modelled on vllm-project/vllm csrc/cache_kernels.cu, reshape_and_cache_kernel<scalar_t, cache_t,
// kAuto> (the paged KV-cache write), commit 002a0ba9645e705311e4cbaab24282448240419a, Apache-2.0
// licence. Written for LARK's corpus from that kernel's structure (one block per token, the token's
// slot read from `slot_mapping`, padding tokens (slot < 0) leave, every (head, offset) element of
// key and value scattered into the 5-D key cache [blocks, heads, head_size/x, block_size, x] and the
// 4-D value cache [blocks, heads, head_size, block_size]); not a copy of its text. Instantiated for
// half without FP8. Race freedom needs distinct slots: lark.toml declares slot_mapping injective.
// Host launch in vLLM: grid num_tokens, block min(num_heads * head_size, 512).
#include "real_prelude.h"

namespace vllm {
template <typename scalar_t, typename cache_t>
__global__ void reshape_and_cache_kernel(const scalar_t* __restrict__ key, const scalar_t* __restrict__ value,
                                         cache_t* __restrict__ key_cache, cache_t* __restrict__ value_cache,
                                         const long long* __restrict__ slot_mapping, const int key_stride, const int value_stride,
                                         const int num_heads, const int head_size, const int block_size, const int x) {
  const long long token = blockIdx.x;
  const long long slot = slot_mapping[token];
  if (slot < 0) return;  // a padding token
  const long long block = slot / block_size;
  const long long block_offset = slot % block_size;
  const int n = num_heads * head_size;
  for (int i = threadIdx.x; i < n; i += blockDim.x) {
    const int head = i / head_size;
    const int head_offset = i % head_size;
    const int x_idx = head_offset / x;
    const int x_offset = head_offset % x;
    const long long key_dst = block * num_heads * (head_size / x) * block_size * x + head * (head_size / x) * block_size * x +
                              x_idx * block_size * x + block_offset * x + x_offset;
    const long long value_dst = block * num_heads * head_size * block_size + head * head_size * block_size + head_offset * block_size +
                                block_offset;
    key_cache[key_dst] = key[token * key_stride + i];
    value_cache[value_dst] = value[token * value_stride + i];
  }
}
template __global__ void reshape_and_cache_kernel<half, half>(const half*, const half*, half*, half*, const long long*, const int, const int,
                                                              const int, const int, const int, const int);
}  // namespace vllm
