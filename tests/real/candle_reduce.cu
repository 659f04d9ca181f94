// Modelled on huggingface/candle candle-kernels/src/reduce.cu, fast_sum<T> (FAST_OP's
// fast_sum_f32) and SUM_OP's sum_f32, with get_strided_index / is_contiguous from
// candle-kernels/src/cuda_utils.cuh, commits 04189b66d9752ff4efb24b65046ed4984e0e4f34 and
// 121bdfdadc537f6664a8b5874ad0e5b7495e227e, MIT / Apache-2.0 licence. Written for LARK's corpus from
// those kernels' structure (fast_sum: one block per output element, a static 1024-slot shared
// buffer, a block-strided walk over the block's elements through the dims/strides held in the
// `info` buffer, a halving tree with the barrier at the top of each step; sum_f32: a grid-strided
// loop, contiguity test on `info`, the destination index folded through the summed dims'
// lengths and strides, atomicAdd into the output); not a copy of their text.
// Host launch in candle (candle-core/src/cuda_backend): fast_sum grid = dst_el, block =
// min(1024, el_to_sum_per_block).next_power_of_two(); sum_f32 LaunchConfig::for_num_elems(numel)
// = block 1024, grid ceil(numel / 1024).
#include "real_prelude.h"

typedef unsigned long size_t;
#define SUM_BLOCK 1024
static __device__ __forceinline__ size_t min(size_t a, size_t b) { return a < b ? a : b; }  // the CUDA headers have this overload

__device__ bool dims_contiguous(const size_t num_dims, const size_t* dims, const size_t* strides) {
  size_t acc = 1;
  for (unsigned int d = 0; d < num_dims; d++) {
    unsigned int k = num_dims - 1 - d;
    if (dims[k] > 1 && acc != strides[k]) return false;
    acc *= dims[k];
  }
  return true;
}

__device__ unsigned int strided_offset(unsigned int idx, const size_t num_dims, const size_t* dims, const size_t* strides) {
  unsigned int off = 0;
  for (unsigned int d = 0; d < num_dims; d++) {
    unsigned int k = num_dims - 1 - d;
    off += (idx % dims[k]) * strides[k];
    idx /= dims[k];
  }
  return off;
}

template <typename T>
__device__ void block_fast_sum(const size_t src_numel, const size_t el_per_block, const size_t num_dims, const size_t* info,
                               const T* src, T* dst) {
  const size_t* dims = info;
  const size_t* strides = info + num_dims;
  __shared__ T partial[SUM_BLOCK];
  size_t tid = threadIdx.x;
  size_t out_id = blockIdx.x;
  partial[tid] = 0;
  size_t begin = out_id * el_per_block;
  size_t end = min(begin + el_per_block, src_numel);
  size_t idx = begin + tid;
  while (idx < end) {
    size_t at = strided_offset(idx, num_dims, dims, strides);
    partial[tid] += src[at];
    idx += blockDim.x;
  }
  for (int s = blockDim.x / 2; s > 0; s >>= 1) {
    __syncthreads();
    if (tid < s) partial[tid] += partial[tid + s];
  }
  if (tid == 0) dst[out_id] = partial[0];
}

extern "C" __global__ void fast_sum_f32(const size_t src_numel, const size_t el_to_sum_per_block, const size_t num_dims,
                                        const size_t* info, const float* src, float* dst) {
  block_fast_sum(src_numel, el_to_sum_per_block, num_dims, info, src, dst);
}

extern "C" __global__ void sum_f32(const size_t numel, const size_t num_dims, const size_t num_sum_dims, const size_t* info,
                                   const float* inp, float* out) {
  const size_t* dims = info;
  const size_t* strides = info + num_dims;
  const size_t* sum_len = info + 2 * num_dims;
  const size_t* sum_stride = info + 2 * num_dims + num_sum_dims;
  if (dims_contiguous(num_dims, dims, strides)) {
    for (unsigned int i = blockIdx.x * blockDim.x + threadIdx.x; i < numel; i += blockDim.x * gridDim.x) {
      size_t di = i;
      for (unsigned int nd = 0; nd < num_sum_dims; ++nd) {
        size_t st = sum_stride[nd];
        size_t pre = di / st;
        size_t post = di % st;
        di = (pre / sum_len[nd]) * st + post;
      }
      atomicAdd(out + di, inp[i]);
    }
  } else {
    for (unsigned int i = blockIdx.x * blockDim.x + threadIdx.x; i < numel; i += blockDim.x * gridDim.x) {
      unsigned si = strided_offset(i, num_dims, dims, strides);
      size_t di = i;
      for (unsigned int nd = 0; nd < num_sum_dims; ++nd) {
        size_t st = sum_stride[nd];
        size_t pre = di / st;
        size_t post = di % st;
        di = (pre / sum_len[nd]) * st + post;
      }
      atomicAdd(out + di, inp[si]);
    }
  }
}
