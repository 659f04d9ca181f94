// Reconstruction of a real synchronization bug, written for LARK's corpus (not the original code).
// Bug: sgl-project/sglang#37663 "Fix shared-memory race in MoE alignment kernel": in
// moe_align_block_size_kernel, threads write prefix[tid] = scan_buf[tid] for tid < num_experts and
// later every thread binary-searches prefix[] while filling expert_ids, with no barrier between the
// stores and the search.
// Pattern: a block scan of padded expert counts into shared memory, then a binary search over the
// prefix array by every thread. `moe_align_prefix_fixed` has the barrier before the search.
#include "../real_prelude.h"

#define CEILDIV(x, y) (((x) + (y) - 1) / (y))

extern "C" __global__ void moe_align_prefix_buggy(const int* __restrict__ expert_counts, int* __restrict__ expert_ids,
                                                  const int num_experts, const int block_size, const int num_blocks_out) {
  __shared__ int scan_buf[64];
  __shared__ int prefix[65];
  const int tid = threadIdx.x;
  // padded counts, then an inclusive Hillis-Steele scan (barriers between rounds)
  scan_buf[tid] = tid < num_experts ? CEILDIV(expert_counts[tid], block_size) : 0;
  __syncthreads();
  for (int d = 1; d < 64; d <<= 1) {
    int add = tid >= d ? scan_buf[tid - d] : 0;
    __syncthreads();
    scan_buf[tid] += add;
    __syncthreads();
  }
  if (tid == 0) prefix[0] = 0;
  if (tid < num_experts) prefix[tid + 1] = scan_buf[tid];
  // bug: no barrier between the prefix stores and the searches below
  for (int b = tid; b < num_blocks_out; b += blockDim.x) {
    int lo = 0, hi = num_experts;  // the expert e with prefix[e] <= b < prefix[e + 1]
    while (lo < hi) {
      int mid = (lo + hi + 1) / 2;
      if (prefix[mid] <= b) lo = mid;
      else hi = mid - 1;
    }
    expert_ids[b] = lo < num_experts ? lo : 0;
  }
}
