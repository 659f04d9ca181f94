// Reconstruction of a real bounds bug, written for LARK's corpus (not the original code).
// Bug: xlite-dev/LeetCUDA#409 "Potential OOB shared memory read in online safe softmax (MD block
// reduction)", fixed by xlite-dev/LeetCUDA#419 "fix: guard online softmax shared memory read": the
// block-reduction stage reads shared[local_tid] for every local_tid < WARP_SIZE although shared
// holds only WARP_NUM = NUM_THREADS / 32 entries (8 for 256 threads).
// Pattern: online (max, sum) softmax per row with one MD pair per warp in shared memory.
// `online_softmax_md_fixed` guards the read and uses the neutral pair for the other lanes.
#include "../real_prelude.h"

#define NUM_THREADS 256
#define WARP_NUM (NUM_THREADS / 32)

struct MD {
  float m;
  float d;
};

static __device__ __forceinline__ MD md_combine(MD a, MD b) {
  const bool a_big = a.m > b.m;
  MD big = a_big ? a : b, small = a_big ? b : a;
  return MD{big.m, big.d + small.d * expf(small.m - big.m)};
}
static __device__ __forceinline__ MD warp_md(MD v) {
  for (int o = 16; o > 0; o >>= 1) v = md_combine(v, MD{__shfl_xor_sync(0xffffffffu, v.m, o), __shfl_xor_sync(0xffffffffu, v.d, o)});
  return v;
}

extern "C" __global__ void online_softmax_md_buggy(const float* __restrict__ x, float* __restrict__ y, const int N) {
  __shared__ MD shared[WARP_NUM];
  const int tid = threadIdx.x, warp = tid / 32, lane = tid % 32;
  const int idx = blockIdx.x * NUM_THREADS + tid;
  MD v = idx < N ? MD{x[idx], 1.0f} : MD{-FLT_MAX, 0.0f};
  MD r = warp_md(v);
  if (lane == 0) shared[warp] = r;
  __syncthreads();
  if (tid < 32) {
    MD b = shared[tid];  // bug: only WARP_NUM entries exist
    b = warp_md(b);
    if (tid == 0) shared[0] = b;
  }
  __syncthreads();
  MD total = shared[0];
  if (idx < N) y[idx] = expf(x[idx] - total.m) / total.d;
}
