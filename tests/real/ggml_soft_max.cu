// Modelled on ggml-org/llama.cpp ggml/src/ggml-cuda/softmax.cu, soft_max_f32<use_shared,
// ncols_template, block_size_template, T>, commit 07003f1ffb23468e176b17d7ac99f98514e258bd, MIT
// licence. Written for LARK's corpus from that kernel's structure (a parameter struct passed by
// value, one row per block on a 3-D grid, scaled logits plus an ALiBi-sloped f16 mask cached in
// dynamic shared memory after a 32-float inter-warp buffer, two block reductions that reset the
// buffer from warp 0 between barriers, a final loop that returns at the row end); not a copy of
// its text. Instantiated as the generic <true, 0, 0, half> kernel; ALiBi is off (max_bias 0).
// Host launch in llama.cpp: block nth = min(next pow2 >= ncols, 1024), grid (ne01, ne02, ne03),
// dynamic shared (pad(ncols, 32) + 32) * sizeof(float).
#include "ggml_common.h"

struct soft_max_params {
  long long nheads;
  unsigned n_head_log2;
  long long ncols;
  long long nrows_x;
  long long nrows_y;
  long long ne00, ne01, ne02, ne03;
  long long nb11, nb12, nb13;
  long long ne12, ne13;
  float scale;
  float max_bias;
  float m0;
  float m1;
};

static __device__ __forceinline__ float alibi_slope(const float max_bias, const unsigned h, const unsigned n_head_log2, const float m0,
                                                    const float m1) {
  if (max_bias <= 0.0f) return 1.0f;
  const float base = h < n_head_log2 ? m0 : m1;
  const int exph = h < n_head_log2 ? h + 1 : 2 * (h - n_head_log2) + 1;
  return powf(base, exph);
}

template <bool use_shared, int ncols_template, int block_size_template, typename T>
static __global__ void soft_max_f32(const float* x, const T* mask, const float* sinks, float* dst, const soft_max_params p) {
  const int ncols = ncols_template == 0 ? p.ncols : ncols_template;
  const int tid = threadIdx.x;
  const long long i03 = blockIdx.z, i02 = blockIdx.y, i01 = blockIdx.x;
  const int rowx = blockIdx.x + blockIdx.y * gridDim.x + blockIdx.z * gridDim.x * gridDim.y;
  const long long i12 = i02 % p.ne12, i13 = i03 % p.ne13;
  x += (long long)rowx * ncols;
  mask += (i01 * p.nb11 + i12 * p.nb12 + i13 * p.nb13) / sizeof(T) * (mask != nullptr);
  dst += (long long)rowx * ncols;

  const int block_size = block_size_template == 0 ? blockDim.x : block_size_template;
  const int warp_id = threadIdx.x / WARP_SIZE;
  const int lane_id = threadIdx.x % WARP_SIZE;
  const float slope = alibi_slope(p.max_bias, i02, p.n_head_log2, p.m0, p.m1);

  extern __shared__ float smem_soft_max[];
  float* buf_iw = smem_soft_max;
  float* vals = use_shared ? buf_iw + WARP_SIZE : dst;

  float max_val = sinks ? sinks[i02] : -INFINITY;
  for (int col0 = 0; col0 < ncols; col0 += block_size) {
    const int col = col0 + tid;
    if (ncols_template == 0 && col >= ncols) break;
    const float val = x[col] * p.scale + (mask ? slope * (float)mask[col] : 0.0f);
    vals[col] = val;
    max_val = fmaxf(max_val, val);
  }
  max_val = warp_reduce_max(max_val);
  if (block_size > WARP_SIZE) {
    if (warp_id == 0) buf_iw[lane_id] = -INFINITY;
    __syncthreads();
    if (lane_id == 0) buf_iw[warp_id] = max_val;
    __syncthreads();
    max_val = warp_reduce_max(buf_iw[lane_id]);
  }

  float sum = 0.0f;
  for (int col0 = 0; col0 < ncols; col0 += block_size) {
    const int col = col0 + tid;
    if (ncols_template == 0 && col >= ncols) break;
    const float e = expf(vals[col] - max_val);
    sum += e;
    vals[col] = e;
  }
  sum = warp_reduce_sum(sum);
  if (block_size > WARP_SIZE) {
    __syncthreads();
    if (warp_id == 0) buf_iw[lane_id] = 0.0f;
    __syncthreads();
    if (lane_id == 0) buf_iw[warp_id] = sum;
    __syncthreads();
    sum = warp_reduce_sum(buf_iw[lane_id]);
  }
  if (sinks) sum += expf(sinks[i02] - max_val);
  const float inv_sum = 1.0f / sum;

  for (int col0 = 0; col0 < ncols; col0 += block_size) {
    const int col = col0 + tid;
    if (ncols_template == 0 && col >= ncols) return;
    dst[col] = vals[col] * inv_sum;
  }
}

template __global__ void soft_max_f32<true, 0, 0, half>(const float*, const half*, const float*, float*, const soft_max_params);
