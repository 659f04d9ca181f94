// Reconstruction of a real synchronization bug, written for LARK's corpus (not the original code).
// Bug: ggml-org/ggml#1498 "ggml-cuda: missing __syncthreads() in ssm-scan.cu" (commit 43e6301
// removed the second barrier of ssm_scan_f32's time loop); fixed in ggml-org/llama.cpp#24360
// "CUDA: Fix ssm_scan_f32 data-races".
// Pattern: per time step, the block stages B and C rows in shared memory, syncs, and every thread
// reads all of them; without a barrier at the end of the step, a fast thread overwrites smemB/smemC
// for step i + 1 while slow threads still read step i. `ssm_scan_fixed` has that barrier.
#include "../real_prelude.h"

#define D_STATE 16

extern "C" __global__ void ssm_scan_buggy(const float* __restrict__ x, const float* __restrict__ B, const float* __restrict__ C,
                                          const float* __restrict__ A, float* __restrict__ y, const int L) {
  __shared__ float smemB[D_STATE];
  __shared__ float smemC[D_STATE];
  float state[D_STATE];
  for (int j = 0; j < D_STATE; ++j) state[j] = 0.0f;
  const int d = blockIdx.x * blockDim.x + threadIdx.x;
  for (int i = 0; i < L; ++i) {
    if (threadIdx.x < D_STATE) {
      smemB[threadIdx.x] = B[i * D_STATE + threadIdx.x];
      smemC[threadIdx.x] = C[i * D_STATE + threadIdx.x];
    }
    __syncthreads();
    float out = 0.0f;
    const float xi = x[i * gridDim.x * blockDim.x + d];
    for (int j = 0; j < D_STATE; ++j) {
      state[j] = state[j] * A[d * D_STATE + j] + smemB[j] * xi;
      out += state[j] * smemC[j];
    }
    y[i * gridDim.x * blockDim.x + d] = out;
  }
}
