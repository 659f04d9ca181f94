// Index-buffer kernel for LARK's corpus: the paged KV-cache write of vLLM's
// reshape_and_cache_flash_kernel (vllm-project/vllm csrc/cache_kernels.cu, Apache-2.0), written for
// this corpus after its structure: one block per token, the token's slot read from slot_mapping
// (negative = padding), key and value rows scattered into [num_blocks, block_size, heads, head_size].
// Race-free exactly when the non-negative slots are distinct.
#include "../real/real_prelude.h"

extern "C" __global__ void index_reshape_and_cache_flash(const half* __restrict__ key, const half* __restrict__ value,
                                                         half* __restrict__ key_cache, half* __restrict__ value_cache,
                                                         const long long* __restrict__ slot_mapping, const int block_stride,
                                                         const int key_stride, const int value_stride, const int num_heads,
                                                         const int head_size, const int block_size) {
  const long long token = blockIdx.x;
  const long long slot = slot_mapping[token];
  if (slot < 0) return;
  const long long block = slot / block_size;
  const long long offset = slot % block_size;
  const int n = num_heads * head_size;
  for (int i = threadIdx.x; i < n; i += blockDim.x) {
    const long long dst = block * block_stride + offset * num_heads * head_size + i;
    key_cache[dst] = key[token * key_stride + i];
    value_cache[dst] = value[token * value_stride + i];
  }
}
