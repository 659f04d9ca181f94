// Reconstruction of a real synchronization bug, written for LARK's corpus (not the original code).
// Bug: pytorch/FBGEMM#5857 "Fix ROCm __syncthreads deadlock in quantize_float_to_mx4_kernel". This
// is the fixed version of fbgemm_mx4_early_return.cu: threads past the end stay, contribute the
// neutral value 0 to the max, and skip only their load and store, so every thread reaches every
// barrier (the fix the PR describes).
#include "../real_prelude.h"

extern "C" __global__ void mx4_quant_fixed(const float* __restrict__ input, unsigned char* __restrict__ out, const int total_elems) {
  __shared__ float group_max[8][32];
  const int g = threadIdx.y, lane = threadIdx.x;
  const int linear = (blockIdx.x * blockDim.y + g) * 32 + lane;
  const bool active = linear < total_elems;
  float v = active ? fabsf(input[linear]) : 0.0f;
  group_max[g][lane] = v;
  for (int s = 16; s > 0; s >>= 1) {
    __syncthreads();
    if (lane < s) group_max[g][lane] = fmaxf(group_max[g][lane], group_max[g][lane + s]);
  }
  __syncthreads();
  const float scale = group_max[g][0] > 0.0f ? 6.0f / group_max[g][0] : 0.0f;
  if (active) out[linear] = (unsigned char)(int)rintf(input[linear] * scale);
}
