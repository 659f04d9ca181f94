// Index-buffer kernel for LARK's corpus: appending each running request's new token to the paged
// KV cache through its block table and its current length (the decode-step write of paged
// attention engines), written for this corpus: one block per request, the slot is
// block_tables[req][len / block_size] * block_size + len % block_size. Race-free when no two
// requests map their write position to the same physical slot (block tables that share a block at
// the written offset race, e.g. a prefix-cache block that was not copied on write).
#include "../real/real_prelude.h"

extern "C" __global__ void index_kv_append_block_table(const float* __restrict__ new_k, float* __restrict__ k_cache,
                                                       const int* __restrict__ block_tables, const int* __restrict__ seq_lens,
                                                       const int max_blocks_per_seq, const int block_size, const int head_dim) {
  const int req = blockIdx.x;
  const int pos = seq_lens[req];
  const int physical = block_tables[req * max_blocks_per_seq + pos / block_size];
  const long long slot = (long long)physical * block_size + pos % block_size;
  for (int i = threadIdx.x; i < head_dim; i += blockDim.x) k_cache[slot * head_dim + i] = new_k[req * head_dim + i];
}
