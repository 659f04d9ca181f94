// Reconstruction of a real synchronization bug, written for LARK's corpus (not the original code).
// Bug: ggml-org/llama.cpp#13469 "CUDA: fix misaligned synchronization in FA": a __syncthreads added
// by #13438 to fix a race was, for some kernel configurations, executed by only part of the warps,
// so the warps' barriers became misaligned and long contexts gave wrong results.
// Pattern: the block's warps split the KV tiles; only warps that own a tile in this round reach the
// barrier that protects the shared tile. `fa_tile_sync_fixed` lets every warp reach it.
#include "../real_prelude.h"

#define TILE 64

extern "C" __global__ void fa_tile_sync_buggy(const float* __restrict__ K, float* __restrict__ scores, const int n_kv, const int tiles_per_warp) {
  __shared__ float tile[8][TILE];
  const int warp = threadIdx.x / 32, lane = threadIdx.x % 32;
  const int nwarps = blockDim.x / 32;
  for (int t = 0; t < tiles_per_warp; ++t) {
    const int kv0 = (t * nwarps + warp) * TILE;
    if (kv0 < n_kv) {  // only warps with a tile in this round
      tile[warp][lane] = K[kv0 + lane];
      tile[warp][lane + 32] = K[kv0 + lane + 32];
      __syncthreads();  // bug: not every warp gets here
      scores[kv0 + lane] = tile[warp][lane] + tile[warp][lane + 32];
    }
  }
}
