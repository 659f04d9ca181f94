// Modelled on NVIDIA/cuda-samples Samples/2_Concepts_and_Techniques/sortingNetworks/bitonicSort.cu,
// bitonicSortShared with Comparator (sortingNetworks_common.cuh), commit
// c94ff366aed18c797b8a85dfaac7817b0228b420, BSD-3-Clause licence. Written for LARK's corpus from
// that kernel's structure (1024 keys and values per block in shared memory, two per thread, a
// barrier before every compare-exchange step of the bitonic network); not a copy of its text.
// Host launch in the sample: block 512, grid batch * arrayLength / 1024 (arrayLength = 1024).
#include "real_prelude.h"

#define SORT_SIZE 1024u

static __device__ __forceinline__ void compare_exchange(unsigned& ka, unsigned& va, unsigned& kb, unsigned& vb, unsigned dir) {
  if ((ka > kb) == dir) {
    unsigned t = ka;
    ka = kb;
    kb = t;
    t = va;
    va = vb;
    vb = t;
  }
}

extern "C" __global__ void samples_bitonic_sort(unsigned* d_dst_key, unsigned* d_dst_val, unsigned* d_src_key, unsigned* d_src_val,
                                                unsigned array_length, unsigned dir) {
  cg::thread_block cta = cg::this_thread_block();
  __shared__ unsigned s_key[SORT_SIZE];
  __shared__ unsigned s_val[SORT_SIZE];
  const unsigned base = blockIdx.x * SORT_SIZE + threadIdx.x;
  s_key[threadIdx.x] = d_src_key[base];
  s_val[threadIdx.x] = d_src_val[base];
  s_key[threadIdx.x + SORT_SIZE / 2] = d_src_key[base + SORT_SIZE / 2];
  s_val[threadIdx.x + SORT_SIZE / 2] = d_src_val[base + SORT_SIZE / 2];

  for (unsigned size = 2; size < array_length; size <<= 1) {
    unsigned d = dir ^ ((threadIdx.x & (size / 2)) != 0);
    for (unsigned stride = size / 2; stride > 0; stride >>= 1) {
      cta.sync();
      unsigned pos = 2 * threadIdx.x - (threadIdx.x & (stride - 1));
      compare_exchange(s_key[pos], s_val[pos], s_key[pos + stride], s_val[pos + stride], d);
    }
  }
  for (unsigned stride = array_length / 2; stride > 0; stride >>= 1) {
    cta.sync();
    unsigned pos = 2 * threadIdx.x - (threadIdx.x & (stride - 1));
    compare_exchange(s_key[pos], s_val[pos], s_key[pos + stride], s_val[pos + stride], dir);
  }
  cta.sync();
  d_dst_key[base] = s_key[threadIdx.x];
  d_dst_val[base] = s_val[threadIdx.x];
  d_dst_key[base + SORT_SIZE / 2] = s_key[threadIdx.x + SORT_SIZE / 2];
  d_dst_val[base + SORT_SIZE / 2] = s_val[threadIdx.x + SORT_SIZE / 2];
}
