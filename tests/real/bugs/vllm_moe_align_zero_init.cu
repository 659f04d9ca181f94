// Reconstruction of a real synchronization bug, written for LARK's corpus (not the original code).
// Bug: vllm-project/vllm#13140 "Add sync in moe_align kernel to prevent garbled inference results":
// sgl_moe_align_block_size_kernel zeroed its shared counters and then counted tokens with
// atomicAdd without a __syncthreads between, so a late zeroing store could wipe counts already added
// by other warps (garbled DeepSeek-R1 output).
// Pattern: shared per-expert counters zeroed by the first threads, then shared atomics from every
// thread. `moe_count_fixed` has the barrier between the two.
#include "../real_prelude.h"

extern "C" __global__ void moe_count_buggy(const int* __restrict__ topk_ids, int* __restrict__ counts_out, const int numel, const int num_experts) {
  __shared__ int counts[256];
  if (threadIdx.x < num_experts) counts[threadIdx.x] = 0;
  // bug: no barrier between the zeroing stores and the atomics
  for (int i = threadIdx.x; i < numel; i += blockDim.x) atomicAdd(&counts[topk_ids[i]], 1);
  __syncthreads();
  if (threadIdx.x < num_experts) counts_out[threadIdx.x] = counts[threadIdx.x];
}
