// Modelled on NVIDIA/cuda-samples Samples/2_Concepts_and_Techniques/reduction/reduction_kernel.cu,
// reduce6<T, blockSize, nIsPow2>, commit c94ff366aed18c797b8a85dfaac7817b0228b420, BSD-3-Clause
// licence. Written for LARK's corpus from that kernel's structure (grid-stride accumulation of two
// elements per step when n is a power of two, an unrolled shared-memory tree down to 64, then
// warp 0 finishes with tile shuffles); not a copy of its text. Instantiated for <float, 256, true>.
// Host launch in the sample: block 256, grid min(ceil(n / 512), maxBlocks) (64 here), shared 256 * 4.
#include "real_prelude.h"

template <class T, unsigned int blockSize, bool nIsPow2>
__global__ void samples_reduce6(T* g_idata, T* g_odata, unsigned int n) {
  cg::thread_block cta = cg::this_thread_block();
  extern __shared__ float sdata_raw[];
  T* sdata = reinterpret_cast<T*>(sdata_raw);
  unsigned int tid = threadIdx.x;
  unsigned int gridSize = blockSize * gridDim.x;
  T sum = 0;

  if (nIsPow2) {
    unsigned int i = blockIdx.x * blockSize * 2 + threadIdx.x;
    gridSize <<= 1;
    while (i < n) {
      sum += g_idata[i];
      if (i + blockSize < n) sum += g_idata[i + blockSize];
      i += gridSize;
    }
  } else {
    unsigned int i = blockIdx.x * blockSize + threadIdx.x;
    while (i < n) {
      sum += g_idata[i];
      i += gridSize;
    }
  }
  sdata[tid] = sum;
  cta.sync();

  if (blockSize >= 512 && tid < 256) sdata[tid] = sum = sum + sdata[tid + 256];
  cta.sync();
  if (blockSize >= 256 && tid < 128) sdata[tid] = sum = sum + sdata[tid + 128];
  cta.sync();
  if (blockSize >= 128 && tid < 64) sdata[tid] = sum = sum + sdata[tid + 64];
  cta.sync();

  cg::thread_block_tile<32> tile32 = cg::tiled_partition<32>(cta);
  if (cta.thread_rank() < 32) {
    if (blockSize >= 64) sum += sdata[tid + 32];
    for (int offset = tile32.size() / 2; offset > 0; offset /= 2) sum += tile32.shfl_down(sum, offset);
  }
  if (cta.thread_rank() == 0) g_odata[blockIdx.x] = sum;
}

template __global__ void samples_reduce6<float, 256, true>(float*, float*, unsigned int);
