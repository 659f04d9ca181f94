// Reconstruction of a real synchronization bug, written for LARK's corpus (not the original code).
// Bug: sgl-project/sglang#37287 "[Kernel] Fix shared-memory reuse race in CuTe DSL DSV3 fused-A
// GEMM": the kernel reuses its A/B staging shared memory for split-K partial accumulators (sC
// aliases sA stage 0); a barrier after the sC stores protected the reduction, but none ensured that
// every warp had finished reading sA before another warp overwrote it through sC. The original
// CUDA implementation had both barriers; the port dropped the first.
// Pattern: warps split K, each reads the whole A tile from shared memory, then writes its partial
// sums into the same bytes, then warp 0 adds the partials. This is the fixed version.
#include "../real_prelude.h"

#define M_TILE 16
#define K_TILE 128

extern "C" __global__ void fused_a_splitk_fixed(const float* __restrict__ A, const float* __restrict__ B, float* __restrict__ C, const int N) {
  __shared__ float smem[M_TILE * K_TILE];
  float* sA = smem;  // stage 0: the A tile, [M_TILE][K_TILE]
  float* sC = smem;  // reused: per-warp partial results, [warps][M_TILE][32]
  const int warp = threadIdx.x / 32, lane = threadIdx.x % 32, nwarps = blockDim.x / 32;
  for (int i = threadIdx.x; i < M_TILE * K_TILE; i += blockDim.x) sA[i] = A[blockIdx.x * M_TILE * K_TILE + i];
  __syncthreads();

  const int k_per_warp = K_TILE / nwarps;
  float acc[M_TILE];
  for (int m = 0; m < M_TILE; ++m) {
    acc[m] = 0.0f;
    for (int k = warp * k_per_warp; k < (warp + 1) * k_per_warp; ++k) acc[m] += sA[m * K_TILE + k] * B[k * N + lane];
  }
  __syncthreads();  // the fix: every warp is done reading sA before sC overwrites it
  for (int m = 0; m < M_TILE; ++m) sC[(warp * M_TILE + m) * 32 + lane] = acc[m];
  __syncthreads();
  if (warp == 0)
    for (int m = 0; m < M_TILE; ++m) {
      float s = 0.0f;
      for (int w = 0; w < nwarps; ++w) s += sC[(w * M_TILE + m) * 32 + lane];
      C[(blockIdx.x * M_TILE + m) * N + lane] = s;
    }
}
