// Index-buffer kernel for LARK's corpus: gathering a sequence's keys from the paged KV cache
// through its block table (the access pattern of vLLM's gather_cache / the K loads of paged
// attention), written for this corpus: grid (seqs, max_blocks), each block copies one cache block
// of one sequence into a contiguous buffer. Reads only go through the table, so bounds depend on
// block ids < num_blocks.
#include "../real/real_prelude.h"

extern "C" __global__ void index_paged_kv_gather(const half* __restrict__ key_cache, const int* __restrict__ block_tables,
                                                 half* __restrict__ out, const int max_blocks_per_seq, const int block_numel) {
  const int seq = blockIdx.x;
  const int logical = blockIdx.y;
  const int physical = block_tables[seq * max_blocks_per_seq + logical];
  const long long src = (long long)physical * block_numel;
  const long long dst = ((long long)seq * max_blocks_per_seq + logical) * block_numel;
  for (int i = threadIdx.x; i < block_numel; i += blockDim.x) out[dst + i] = key_cache[src + i];
}
