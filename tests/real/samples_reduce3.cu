// Modelled on NVIDIA/cuda-samples Samples/2_Concepts_and_Techniques/reduction/reduction_kernel.cu,
// reduce3<T>, commit c94ff366aed18c797b8a85dfaac7817b0228b420, BSD-3-Clause licence. Written for
// LARK's corpus from that kernel's structure (first add during the load of two elements per
// thread, a shared-memory tree with a cooperative-groups block sync per step, dynamic shared
// memory); not a copy of its text. Instantiated for float.
// Host launch in the sample: block 256, grid ceil(n / 512), shared 256 * sizeof(T).
#include "real_prelude.h"

template <class T>
__global__ void samples_reduce3(T* g_idata, T* g_odata, unsigned int n) {
  cg::thread_block cta = cg::this_thread_block();
  extern __shared__ float sdata_raw[];
  T* sdata = reinterpret_cast<T*>(sdata_raw);
  unsigned int tid = threadIdx.x;
  unsigned int i = blockIdx.x * (blockDim.x * 2) + threadIdx.x;

  T sum = (i < n) ? g_idata[i] : 0;
  if (i + blockDim.x < n) sum += g_idata[i + blockDim.x];
  sdata[tid] = sum;
  cg::this_thread_block().sync();

  for (unsigned int s = blockDim.x / 2; s > 0; s >>= 1) {
    if (tid < s) sdata[tid] = sum = sum + sdata[tid + s];
    cta.sync();
  }
  if (tid == 0) g_odata[blockIdx.x] = sum;
}

template __global__ void samples_reduce3<float>(float*, float*, unsigned int);
