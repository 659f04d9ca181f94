// Modelled on NVIDIA/cuda-samples Samples/2_Concepts_and_Techniques/reduction/reduction_kernel.cu,
// cg_reduce<T>, commit c94ff366aed18c797b8a85dfaac7817b0228b420, BSD-3-Clause licence. Written for
// LARK's corpus from that kernel's structure (grid-stride accumulation, a shared-memory tree that
// syncs at the top of each step while the active half is at least a warp, then cg::reduce over
// tile 0); not a copy of its text. Instantiated for float.
// Host launch in the sample: block 256, grid 64 here, shared 256 * sizeof(T).
#include "real_prelude.h"

template <class T>
__global__ void samples_cg_reduce(T* g_idata, T* g_odata, unsigned int n) {
  extern __shared__ float sdata_raw[];
  T* sdata = reinterpret_cast<T*>(sdata_raw);
  cg::thread_block cta = cg::this_thread_block();
  cg::thread_block_tile<32> tile = cg::tiled_partition<32>(cta);
  unsigned int cta_size = cta.size();
  unsigned int rank = cta.thread_rank();

  T v = 0;
  for (unsigned int i = blockIdx.x * cta_size + rank; i < n; i += gridDim.x * cta_size) v += g_idata[i];
  sdata[rank] = v;

  for (unsigned int half = cta_size >> 1; half >= 32; half >>= 1) {
    cta.sync();
    if (rank < half) {
      v += sdata[rank + half];
      sdata[rank] = v;
    }
  }
  cta.sync();
  if (tile.meta_group_rank() == 0) v = cg::reduce(tile, v, cg::plus<T>());
  if (rank == 0) g_odata[blockIdx.x] = v;
}

template __global__ void samples_cg_reduce<float>(float*, float*, unsigned int);
