// Modelled on NVIDIA/cuda-samples Samples/6_Performance/transpose/transpose.cu,
// transposeCoalesced and transposeNoBankConflicts, commit c94ff366aed18c797b8a85dfaac7817b0228b420,
// BSD-3-Clause licence. Written for LARK's corpus from those kernels' structure (a 32x32 tile,
// padded to 33 columns against bank conflicts, loaded by a 32x8 block in 4 row steps, one block
// barrier, written back transposed); not a copy of their text.
// Host launch in the sample: block (32, 8), grid (width / 32, height / 32).
#include "real_prelude.h"

#define TILE_DIM 32
#define BLOCK_ROWS 8

extern "C" __global__ void samples_transpose_coalesced(float* odata, float* idata, int width, int height) {
  cg::thread_block cta = cg::this_thread_block();
  __shared__ float tile[TILE_DIM][TILE_DIM + 1];
  int x = blockIdx.x * TILE_DIM + threadIdx.x;
  int y = blockIdx.y * TILE_DIM + threadIdx.y;
  int in = x + y * width;
  x = blockIdx.y * TILE_DIM + threadIdx.x;
  y = blockIdx.x * TILE_DIM + threadIdx.y;
  int out = x + y * height;

  for (int r = 0; r < TILE_DIM; r += BLOCK_ROWS) tile[threadIdx.y + r][threadIdx.x] = idata[in + r * width];
  cta.sync();
  for (int r = 0; r < TILE_DIM; r += BLOCK_ROWS) odata[out + r * height] = tile[threadIdx.x][threadIdx.y + r];
}
