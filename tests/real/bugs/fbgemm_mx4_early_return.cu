// Reconstruction of a real synchronization bug, written for LARK's corpus (not the original code).
// Bug: pytorch/FBGEMM#5857 "Fix ROCm __syncthreads deadlock in quantize_float_to_mx4_kernel":
// threads whose linear id is past total_elems return early, before the block-wide __syncthreads of
// the shared max reduction; when the number of groups is not a multiple of the groups per block,
// the last block has whole groups that leave while the others wait (deadlock on ROCm, undefined
// behaviour on NVIDIA).
// Pattern: blockDim.y groups of 32 values per block, a shared exponent max per group, early return
// for threads past the end. `mx4_quant_fixed` masks the work instead of returning.
#include "../real_prelude.h"

extern "C" __global__ void mx4_quant_buggy(const float* __restrict__ input, unsigned char* __restrict__ out, const int total_elems) {
  __shared__ float group_max[8][32];
  const int g = threadIdx.y, lane = threadIdx.x;
  const int linear = (blockIdx.x * blockDim.y + g) * 32 + lane;
  if (linear >= total_elems) return;  // bug: these threads skip the barriers below
  float v = fabsf(input[linear]);
  group_max[g][lane] = v;
  for (int s = 16; s > 0; s >>= 1) {
    __syncthreads();
    if (lane < s) group_max[g][lane] = fmaxf(group_max[g][lane], group_max[g][lane + s]);
  }
  __syncthreads();
  const float scale = group_max[g][0] > 0.0f ? 6.0f / group_max[g][0] : 0.0f;
  out[linear] = (unsigned char)(int)rintf(input[linear] * scale);
}
