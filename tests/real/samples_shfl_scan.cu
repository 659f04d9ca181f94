// Modelled on NVIDIA/cuda-samples Samples/2_Concepts_and_Techniques/shfl_scan/shfl_scan.cu,
// shfl_scan_test and uniform_add, commit c94ff366aed18c797b8a85dfaac7817b0228b420, BSD-3-Clause
// licence. Written for LARK's corpus from those kernels' structure (inclusive warp scan with
// shfl.up, warp totals in dynamic shared memory, a second scan of the totals by the first lanes of
// warp 0 with a partial member mask and a narrower shuffle width, then a uniform add; the second
// kernel adds per-block offsets after an early return and a barrier); not a copy of their text.
// Host launch in the sample: block 256, grid n / 256, shared (256 / 32) * sizeof(int);
// uniform_add: block 256, grid n / 256 (n = 65536: every block is full, so nobody returns early).
#include "real_prelude.h"

static __device__ __forceinline__ int shfl_up_width(unsigned mask, int v, unsigned d, int width) {
  return __nvvm_shfl_sync_up_i32(mask, v, d, (32 - width) << 8);
}

extern "C" __global__ void samples_shfl_scan(int* data, int width, int* partial_sums) {
  extern __shared__ int warp_totals[];
  int id = blockIdx.x * blockDim.x + threadIdx.x;
  int lane = id % warpSize;
  int wid = threadIdx.x / warpSize;
  int value = data[id];

  for (int d = 1; d <= width; d *= 2) {
    int up = shfl_up_width(0xffffffffu, value, d, width);
    if (lane >= d) value += up;
  }
  if (threadIdx.x % warpSize == warpSize - 1) warp_totals[wid] = value;
  __syncthreads();

  const int nwarps = blockDim.x / warpSize;
  if (wid == 0 && lane < nwarps) {
    int total = warp_totals[lane];
    unsigned mask = (1u << nwarps) - 1;
    for (int d = 1; d <= nwarps; d *= 2) {
      int up = shfl_up_width(mask, total, d, nwarps);
      if (lane >= d) total += up;
    }
    warp_totals[lane] = total;
  }
  __syncthreads();

  if (wid > 0) value += warp_totals[wid - 1];
  data[id] = value;
  if (partial_sums != nullptr && threadIdx.x == blockDim.x - 1) partial_sums[blockIdx.x] = value;
}

extern "C" __global__ void samples_uniform_add(int* data, int* partial_sums, int len) {
  __shared__ int offset;
  int id = blockIdx.x * blockDim.x + threadIdx.x;
  if (id > len) return;
  if (threadIdx.x == 0) offset = partial_sums[blockIdx.x];
  __syncthreads();
  data[id] += offset;
}
