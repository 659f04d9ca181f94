// Modelled on NVIDIA/apex csrc/layer_norm_cuda_kernel.cu, cuApplyLayerNorm<T, U> with
// cuWelfordMuSigma2 (the at::Half specialisation), cuWelfordOnlineSum and cuChanOnlineSum, commit
// 0028c903c805c12cc4b6b8cc909bb888f3d71319, BSD-3-Clause licence. Written for LARK's corpus from
// that kernel's structure (one block of 32 x 4 per row on grid.y, a first element consumed by
// thread 0 when the row is only 2-byte aligned, Welford over half2 pairs, a rotating
// __shfl_sync(srcLane = lane + 2^l) merge of (mu, sigma2, count) in the warp, then a tree over
// the warps through a 6-float dynamic shared buffer, the result broadcast through ubuf[0..1],
// the gamma/beta null test); not a copy of its text. Instantiated for half with float statistics.
// Host launch in apex: block (32, 4), grid (1, n1), dynamic shared 4 * 4 + 2 * 4 = 24 bytes.
#include "real_prelude.h"

template <typename U>
__device__ __forceinline__ void welford_push(const U x, U& mean, U& m2, U& n) {
  n = n + U(1);
  U d = x - mean;
  U new_mean = mean + d / n;
  mean = new_mean;
  U d2 = x - new_mean;
  m2 = m2 + d * d2;
}

template <typename U>
__device__ __forceinline__ void chan_merge(const U mean_b, const U m2_b, const U n_b, U& mean, U& m2, U& n) {
  U d = mean_b - mean;
  U na = n;
  U nb = n_b;
  n = n + n_b;
  U nx = n;
  if (nx > U(0)) {
    na = na / nx;
    nb = nb / nx;
    mean = na * mean + nb * mean_b;
    m2 = m2 + m2_b + d * d * na * nb * nx;
  } else {
    mean = U(0);
    m2 = U(0);
  }
}

__device__ void welford_row_stats(const half* __restrict__ vals, const int n1, const int n2, float& mu, float& sigma2,
                                  float* buf) {
  // blockDim.x == 32, the row is contiguous, buf holds 2 * blockDim.y + blockDim.y / 2 floats
  float count = 0.0f;
  mu = 0.0f;
  sigma2 = 0.0f;
  int row = blockIdx.y;
  if (row < n1) {
    const int nthreads = blockDim.x * blockDim.y;
    const int t = threadIdx.x + threadIdx.y * blockDim.x;
    const half* rv = vals + row * n2;
    int l = 8 * t;
    if ((((size_t)rv) & 3) != 0) {
      // the row starts on a 2-byte boundary: thread 0 takes the first element
      if (t == 0) welford_push(__half2float(rv[0]), mu, sigma2, count);
      ++l;
    }
    for (; l + 7 < n2; l += 8 * nthreads) {
      for (int k = 0; k < 8; k += 2) {
        float2 p = __half22float2(*((const __half2*)(rv + l + k)));
        welford_push(p.x, mu, sigma2, count);
        welford_push(p.y, mu, sigma2, count);
      }
    }
    for (; l < n2; ++l) welford_push(__half2float(rv[l]), mu, sigma2, count);
    // merge around the warp: lane i takes lane i + 2^s
    for (int s = 0; s <= 4; ++s) {
      int from = (threadIdx.x + (1 << s)) & 31;
      float mu_b = __shfl_sync(0xffffffffu, mu, from, 32);
      float n_b = __shfl_sync(0xffffffffu, count, from, 32);
      float m2_b = __shfl_sync(0xffffffffu, sigma2, from, 32);
      chan_merge(mu_b, m2_b, n_b, mu, sigma2, count);
    }
    // lane 0 of each warp holds the warp's statistics
    if (blockDim.y > 1) {
      float* pair_buf = buf;
      float* count_buf = buf + blockDim.y;
      for (int half_y = blockDim.y / 2; half_y > 0; half_y /= 2) {
        if (threadIdx.x == 0 && threadIdx.y >= half_y && threadIdx.y < 2 * half_y) {
          const int slot = threadIdx.y - half_y;
          pair_buf[2 * slot] = mu;
          pair_buf[2 * slot + 1] = sigma2;
          count_buf[slot] = count;
        }
        __syncthreads();
        if (threadIdx.x == 0 && threadIdx.y < half_y) {
          float mu_b = pair_buf[2 * threadIdx.y];
          float m2_b = pair_buf[2 * threadIdx.y + 1];
          float n_b = count_buf[threadIdx.y];
          chan_merge(mu_b, m2_b, n_b, mu, sigma2, count);
        }
        __syncthreads();
      }
      if (threadIdx.x == 0 && threadIdx.y == 0) {
        pair_buf[0] = mu;
        pair_buf[1] = sigma2;
      }
      __syncthreads();
      mu = pair_buf[0];
      sigma2 = pair_buf[1] / float(n2);
    } else {
      mu = __shfl_sync(0xffffffffu, mu, 0, 32);
      sigma2 = __shfl_sync(0xffffffffu, sigma2 / float(n2), 0, 32);
    }
  }
}

template <typename T, typename U>
__global__ void cuApplyLayerNorm(T* __restrict__ output_vals, U* __restrict__ mean, U* __restrict__ invvar,
                                 const T* __restrict__ vals, const int n1, const int n2, const U epsilon,
                                 const T* __restrict__ gamma, const T* __restrict__ beta) {
  int row = blockIdx.y;
  if (row < n1) {
    extern __shared__ float shared_stats[];
    U mu, sigma2;
    welford_row_stats(vals, n1, n2, mu, sigma2, shared_stats);
    const T* rv = vals + row * n2;
    T* ov = output_vals + row * n2;
    U inv_std = rsqrtf(sigma2 + epsilon);
    const int nthreads = blockDim.x * blockDim.y;
    const int t = threadIdx.x + threadIdx.y * blockDim.x;
    if (gamma != nullptr && beta != nullptr) {
      for (int i = t; i < n2; i += nthreads) {
        U x = static_cast<U>(rv[i]);
        ov[i] = gamma[i] * static_cast<T>(inv_std * (x - mu)) + beta[i];
      }
    } else {
      for (int i = t; i < n2; i += nthreads) {
        U x = static_cast<U>(rv[i]);
        ov[i] = static_cast<T>(inv_std * (x - mu));
      }
    }
    if (threadIdx.x == 0 && threadIdx.y == 0) {
      mean[row] = mu;
      invvar[row] = inv_std;
    }
  }
}

template __global__ void cuApplyLayerNorm<half, float>(half*, float*, float*, const half*, const int, const int, const float,
                                                       const half*, const half*);
