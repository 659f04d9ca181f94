// Modelled on NVIDIA/cuda-samples Samples/2_Concepts_and_Techniques/scan/scan.cu, scanExclusiveShared,
// scanExclusiveShared2 and uniformUpdate with scan1Inclusive / scan1Exclusive / scan4Inclusive /
// scan4Exclusive, commit ca37378cb454b74e3979fa7a14c110045d3c4437, BSD-3-Clause licence. Written for
// LARK's corpus from those kernels' structure (a naive inclusive scan in a volatile shared array of
// 2 * 256 words whose lower half of each `size`-long segment is zeroed so that no `pos >= offset`
// test is needed, two barriers per step; uint4 loads with a per-thread 4-element pre-scan; the
// second level scanning the blocks' top elements with inactive threads of the last block skipping
// only the global accesses; the uniform add through one shared word); not a copy of its text.
// Host launch in the sample (scanExclusiveLarge): block 256; grid batch * arrayLength / 1024 for
// the first and third kernels, ceil(that / 256) for the second.
#include "real_prelude.h"

typedef unsigned int uint;
#define THREADBLOCK_SIZE 256

__device__ __forceinline__ uint scan1_inclusive(uint v, volatile uint* s, uint size, cg::thread_block cta) {
  uint pos = 2 * threadIdx.x - (threadIdx.x & (size - 1));
  s[pos] = 0;
  pos += size;
  s[pos] = v;
  for (uint offset = 1; offset < size; offset <<= 1) {
    cta.sync();
    uint t = s[pos] + s[pos - offset];
    cta.sync();
    s[pos] = t;
  }
  return s[pos];
}

__device__ __forceinline__ uint scan1_exclusive(uint v, volatile uint* s, uint size, cg::thread_block cta) {
  return scan1_inclusive(v, s, size, cta) - v;
}

__device__ __forceinline__ uint4 scan4_inclusive(uint4 v, volatile uint* s, uint size, cg::thread_block cta) {
  v.y += v.x;
  v.z += v.y;
  v.w += v.z;
  uint before = scan1_exclusive(v.w, s, size / 4, cta);
  v.x += before;
  v.y += before;
  v.z += before;
  v.w += before;
  return v;
}

__device__ __forceinline__ uint4 scan4_exclusive(uint4 v, volatile uint* s, uint size, cg::thread_block cta) {
  uint4 r = scan4_inclusive(v, s, size, cta);
  r.x -= v.x;
  r.y -= v.y;
  r.z -= v.z;
  r.w -= v.w;
  return r;
}

extern "C" __global__ void scanExclusiveShared(uint4* d_Dst, uint4* d_Src, uint size) {
  cg::thread_block cta = cg::this_thread_block();
  __shared__ uint s_Data[2 * THREADBLOCK_SIZE];
  uint pos = blockIdx.x * blockDim.x + threadIdx.x;
  uint4 v = d_Src[pos];
  uint4 r = scan4_exclusive(v, s_Data, size, cta);
  d_Dst[pos] = r;
}

extern "C" __global__ void scanExclusiveShared2(uint* d_Buf, uint* d_Dst, uint* d_Src, uint N, uint arrayLength) {
  cg::thread_block cta = cg::this_thread_block();
  __shared__ uint s_Data[2 * THREADBLOCK_SIZE];
  uint pos = blockIdx.x * blockDim.x + threadIdx.x;
  uint v = 0;
  if (pos < N)
    v = d_Dst[(4 * THREADBLOCK_SIZE) - 1 + (4 * THREADBLOCK_SIZE) * pos] + d_Src[(4 * THREADBLOCK_SIZE) - 1 + (4 * THREADBLOCK_SIZE) * pos];
  uint r = scan1_exclusive(v, s_Data, arrayLength, cta);
  if (pos < N) d_Buf[pos] = r;
}

extern "C" __global__ void uniformUpdate(uint4* d_Data, uint* d_Buffer) {
  cg::thread_block cta = cg::this_thread_block();
  __shared__ uint add;
  uint pos = blockIdx.x * blockDim.x + threadIdx.x;
  if (threadIdx.x == 0) add = d_Buffer[blockIdx.x];
  cta.sync();
  uint4 d = d_Data[pos];
  d.x += add;
  d.y += add;
  d.z += add;
  d.w += add;
  d_Data[pos] = d;
}
