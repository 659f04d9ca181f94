// Index-buffer kernel for LARK's corpus: vLLM's copy_blocks_kernel (vllm-project/vllm
// csrc/cache_kernels.cu, Apache-2.0), written for this corpus after its structure: grid
// (layers, pairs), block_mapping holds (src, dst) block numbers, each block copies one cache block
// of one layer. Race-free when no destination block repeats and no destination is also a source
// (otherwise one block reads what another writes, in the same launch).
// The caches of all layers are one buffer here (layer-major) instead of a table of pointers.
#include "../real/real_prelude.h"

extern "C" __global__ void index_copy_blocks(float* key_cache, float* value_cache, const long long* __restrict__ block_mapping,
                                             const int numel_per_block, const long long layer_stride) {
  const int layer = blockIdx.x;
  const int pair = blockIdx.y;
  float* k = key_cache + layer * layer_stride;
  float* v = value_cache + layer * layer_stride;
  const long long src = block_mapping[2 * pair] * numel_per_block;
  const long long dst = block_mapping[2 * pair + 1] * numel_per_block;
  for (int i = threadIdx.x; i < numel_per_block; i += blockDim.x) k[dst + i] = k[src + i];
  for (int i = threadIdx.x; i < numel_per_block; i += blockDim.x) v[dst + i] = v[src + i];
}
