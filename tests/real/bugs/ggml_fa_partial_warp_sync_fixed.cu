// Reconstruction of a real synchronization bug, written for LARK's corpus (not the original code).
// Bug: ggml-org/llama.cpp#13469 "CUDA: fix misaligned synchronization in FA". This is the fixed
// version of ggml_fa_partial_warp_sync.cu: the barrier is outside the per-warp condition, so every
// warp reaches it the same number of times, and each warp stages into its own slice of the tile.
#include "../real_prelude.h"

#define TILE 64

extern "C" __global__ void fa_tile_sync_fixed(const float* __restrict__ K, float* __restrict__ scores, const int n_kv, const int tiles_per_warp) {
  __shared__ float tile[8][TILE];
  const int warp = threadIdx.x / 32, lane = threadIdx.x % 32;
  const int nwarps = blockDim.x / 32;
  for (int t = 0; t < tiles_per_warp; ++t) {
    const int kv0 = (t * nwarps + warp) * TILE;
    const bool mine = kv0 < n_kv;
    if (mine) {
      tile[warp][lane] = K[kv0 + lane];
      tile[warp][lane + 32] = K[kv0 + lane + 32];
    }
    __syncthreads();  // the fix: reached by all warps
    if (mine) scores[kv0 + lane] = tile[warp][lane] + tile[warp][lane + 32];
    __syncthreads();
  }
}
