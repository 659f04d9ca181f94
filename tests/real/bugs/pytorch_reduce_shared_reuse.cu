// Reconstruction of a real synchronization bug, written for LARK's corpus (not the original code).
// Bug: pytorch/pytorch#162995 "[CUDA] fix shared memory race in reduce_kernel": in ATen's
// Reduce.cuh, block_x_reduce and block_y_reduce both use the same shared_memory buffer for
// temporaries, with no barrier between the end of one and the start of the other.
// Pattern: a 2-D block reduces along x (a shared-memory tree down to one warp, then shuffles) and
// then along y through the same buffer and layout; the y step's first store overwrites a slot that
// a thread of the same row may still read in the x step's last round. `reduce_xy_fixed` has the
// barrier between the two steps.
#include "../real_prelude.h"

extern "C" __global__ void reduce_xy_buggy(const float* __restrict__ in, float* __restrict__ out, const int cols) {
  extern __shared__ float shared_memory[];
  const int tx = threadIdx.x, ty = threadIdx.y;
  const int dim_x = blockDim.x, dim_y = blockDim.y;
  const int slot = ty * dim_x + tx;
  float v = in[(blockIdx.x * dim_y + ty) * cols + tx];

  // block_x_reduce: tree over x while more than a warp is active, then warp shuffles
  shared_memory[slot] = v;
  for (int offset = dim_x / 2; offset >= 32; offset >>= 1) {
    __syncthreads();
    if (tx < offset) {
      v += shared_memory[slot + offset];
      shared_memory[slot] = v;
    }
  }
  for (int offset = 16; offset > 0; offset >>= 1) v += __shfl_down_sync(0xffffffffu, v, offset);

  // bug: block_y_reduce stores into the same buffer without a barrier
  // block_y_reduce: tree over y
  shared_memory[slot] = v;
  for (int offset = dim_y / 2; offset > 0; offset >>= 1) {
    __syncthreads();
    if (ty < offset) {
      v += shared_memory[slot + offset * dim_x];
      shared_memory[slot] = v;
    }
  }
  if (tx == 0 && ty == 0) out[blockIdx.x] = v;
}
