// Reconstruction of a real synchronization bug, written for LARK's corpus (not the original code).
// Bug: pytorch/pytorch#5276 "Fix __syncthread in SpatialClassNLLCriterion.cu": two reduceBlock
// calls in a row reuse the shared partial_sums buffer, and a barrier is needed between them (the
// same hazard ngimel flagged in pytorch/pytorch#27634 for two back-to-back BlockReduceSum calls).
// Pattern: a block reduction whose result is read by thread 0 from partial_sums[0]; the second
// reduction's stores into partial_sums race with that read. This is the fixed version.
#include "../real_prelude.h"

// always_inline without nodebug: the accesses keep this helper's own lines.
static __device__ __attribute__((always_inline)) inline float reduce_block(float* partial_sums, float v) {
  partial_sums[threadIdx.x] = v;
  __syncthreads();
  if (threadIdx.x == 0) {
    float s = 0.0f;
    for (int i = 0; i < blockDim.x; ++i) s += partial_sums[i];
    v = s;
  }
  return v;
}

extern "C" __global__ void nll_two_sums_fixed(const float* __restrict__ input, const long long* __restrict__ target,
                                              const float* __restrict__ weights, float* __restrict__ output, float* __restrict__ total_weight,
                                              const int n) {
  __shared__ float partial_sums[128];
  float input_sum = 0.0f, acc_weight = 0.0f;
  for (int i = threadIdx.x; i < n; i += blockDim.x) {
    const long long t = target[i];
    const float w = weights[t];
    input_sum -= input[i * 16 + t] * w;
    acc_weight += w;
  }
  input_sum = reduce_block(partial_sums, input_sum);
  __syncthreads();  // the fix: thread 0 has read partial_sums before it is reused
  acc_weight = reduce_block(partial_sums, acc_weight);
  if (threadIdx.x == 0) {
    output[blockIdx.x] = input_sum;
    total_weight[blockIdx.x] = acc_weight;
  }
}
