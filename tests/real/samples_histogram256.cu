// Modelled on NVIDIA/cuda-samples Samples/2_Concepts_and_Techniques/histogram/histogram256.cu,
// histogram256Kernel and mergeHistogram256Kernel, commit c94ff366aed18c797b8a85dfaac7817b0228b420,
// BSD-3-Clause licence. Written for LARK's corpus from those kernels' structure (one 256-bin
// sub-histogram per warp in shared memory, cleared cooperatively, filled with shared atomics from
// four bytes per 32-bit word in a grid-stride loop using 24-bit multiplies, merged per block into
// global partials; the merge kernel sums the partials with a shared tree); not a copy of their text.
// Host launch in the sample: 240 blocks of 192 threads (6 warps); merge: 256 blocks of 256.
#include "real_prelude.h"

#define BIN_COUNT 256
#define HIST_THREADS 192
#define HIST_WARPS (HIST_THREADS / 32)
#define MERGE_THREADS 256

static __device__ __forceinline__ unsigned umul24(unsigned a, unsigned b) { return __nvvm_mul24_ui(a, b); }

static __device__ __forceinline__ void count_byte(unsigned* warp_hist, unsigned byte) { atomicAdd(warp_hist + byte, 1u); }

extern "C" __global__ void samples_histogram256(unsigned* d_partial, unsigned* d_data, unsigned data_count) {
  cg::thread_block cta = cg::this_thread_block();
  __shared__ unsigned s_hist[HIST_WARPS * BIN_COUNT];
  unsigned* warp_hist = s_hist + (threadIdx.x >> 5) * BIN_COUNT;

#pragma unroll
  for (unsigned i = 0; i < HIST_WARPS * BIN_COUNT / HIST_THREADS; i++) s_hist[threadIdx.x + i * HIST_THREADS] = 0;
  cta.sync();

  for (unsigned pos = umul24(blockIdx.x, blockDim.x) + threadIdx.x; pos < data_count; pos += umul24(blockDim.x, gridDim.x)) {
    unsigned word = d_data[pos];
    count_byte(warp_hist, (word >> 0) & 0xffu);
    count_byte(warp_hist, (word >> 8) & 0xffu);
    count_byte(warp_hist, (word >> 16) & 0xffu);
    count_byte(warp_hist, (word >> 24) & 0xffu);
  }
  cta.sync();

  for (unsigned bin = threadIdx.x; bin < BIN_COUNT; bin += HIST_THREADS) {
    unsigned total = 0;
    for (unsigned w = 0; w < HIST_WARPS; w++) total += s_hist[bin + w * BIN_COUNT];
    d_partial[blockIdx.x * BIN_COUNT + bin] = total;
  }
}

extern "C" __global__ void samples_merge_histogram256(unsigned* d_histogram, unsigned* d_partial, unsigned histogram_count) {
  cg::thread_block cta = cg::this_thread_block();
  unsigned total = 0;
  for (unsigned i = threadIdx.x; i < histogram_count; i += MERGE_THREADS) total += d_partial[blockIdx.x + i * BIN_COUNT];

  __shared__ unsigned sums[MERGE_THREADS];
  sums[threadIdx.x] = total;
  for (unsigned stride = MERGE_THREADS / 2; stride > 0; stride >>= 1) {
    cta.sync();
    if (threadIdx.x < stride) sums[threadIdx.x] += sums[threadIdx.x + stride];
  }
  if (threadIdx.x == 0) d_histogram[blockIdx.x] = sums[0];
}
