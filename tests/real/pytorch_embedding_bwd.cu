// Modelled on pytorch/pytorch aten/src/ATen/native/cuda/Embedding.cu,
// embedding_backward_feature_kernel<scalar_t, accscalar_t, index_t>, commit
// 1c94016e03463593c53fcf4f1a4438eed1fc08ea, BSD-3-Clause licence. Written for LARK's corpus from
// that kernel's structure (a block of 32 x 32 threads owns 32 feature columns; the block loads up
// to 1024 indices into dynamic shared memory, then takes them 32 at a time: each warp (threadIdx.y)
// stages its row's gradient slice in its own 32-float shared segment, a barrier, the warps that
// target the same grad_weight row find each other with a ballot of index matches, and the lowest
// such warp sums the others' segments and adds the total to grad_weight; the padding index is
// skipped); not a copy of its text. Instantiated for float gradients and int64 indices; namespace
// at stands for the original's at::native.
// Host launch in PyTorch (num_indices <= 3072 and no scale_grad_by_freq): grid ceil(stride / 32),
// block (32, 32), dynamic shared 4 * 32 * 32 + 4 * 32 * 32 bytes.
#include "real_prelude.h"

namespace at {

template <typename scalar_t, typename accscalar_t, typename index_t>
__global__ void embedding_backward_feature_kernel(const index_t* indices, const scalar_t* __restrict__ grad,
                                                  scalar_t* __restrict__ grad_weight, int n, int64_t stride,
                                                  int padding_idx) {
  extern __shared__ char buf[];
  accscalar_t* smem = (accscalar_t*)buf;
  accscalar_t* my_seg = smem + 32 * threadIdx.y;
  int* idx_batch = (int*)(buf + sizeof(accscalar_t) * 32 * blockDim.y);
  const int s = (int)stride;
  const int f = threadIdx.x + blockIdx.x * blockDim.x;  // feature column

  for (int batch_start = 0; batch_start < n; batch_start += blockDim.x * blockDim.y) {
    int tid = threadIdx.x + threadIdx.y * blockDim.x;
    if (batch_start + tid < n) idx_batch[tid] = (int)indices[batch_start + tid];
    int batch_end = batch_start + blockDim.x * blockDim.y < n ? batch_start + blockDim.x * blockDim.y : n;

    for (int chunk_start = batch_start; chunk_start < batch_end; chunk_start += blockDim.y) {
      // makes idx_batch visible, and keeps the leaders' sums apart from the next chunk's staging
      __syncthreads();
      int n_chunk = (batch_end - chunk_start) < blockDim.y ? (batch_end - chunk_start) : blockDim.y;
      int src_row = chunk_start + threadIdx.y;
      int dst_row = idx_batch[src_row - batch_start];
      if (src_row < n && f < s && dst_row != padding_idx) my_seg[threadIdx.x] = static_cast<accscalar_t>(grad[src_row * stride + f]);
      __syncthreads();
      // whole warps take this branch or skip it (the test depends on threadIdx.y only)
      if (dst_row != padding_idx && src_row < n) {
        int match = 0;
        if (threadIdx.x < n_chunk) match = (dst_row == idx_batch[chunk_start - batch_start + threadIdx.x]);
        unsigned matchmask = __ballot_sync(0xffffffffu, match);
        int first = __ffs(matchmask) - 1;
        if (threadIdx.y == first) {
          matchmask ^= (1u << first);
          while (matchmask) {
            first = __ffs(matchmask) - 1;
            my_seg[threadIdx.x] += smem[threadIdx.x + 32 * first];
            matchmask ^= (1u << first);
          }
          if (f < s) grad_weight[dst_row * stride + f] += static_cast<scalar_t>(my_seg[threadIdx.x]);
        }
      }
    }
  }
}

template __global__ void embedding_backward_feature_kernel<float, float, int64_t>(const int64_t*, const float* __restrict__,
                                                                                 float* __restrict__, int, int64_t, int);
}  // namespace at
