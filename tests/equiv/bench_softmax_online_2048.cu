// Benchmark: online (single-pass) softmax over rows of 2048 columns, one block of 256 threads per row.
// Each thread keeps a running max and a rescaled sum over its 8 columns; the (max, sum) pairs are
// merged with xor shuffles inside each warp, then by warp 0 over the 8 warp results.
#define THREADS 256
#define COLS 2048

__device__ __forceinline__ void merge(float& m, float& s, float m2, float s2) {
  float mm = fmaxf(m, m2);
  s = s * __expf(m - mm) + s2 * __expf(m2 - mm);
  m = mm;
}

extern "C" __global__ void bench_softmax_online_2048(float* y, const float* x, int rows) {
  __shared__ float warp_m[THREADS / 32];
  __shared__ float warp_s[THREADS / 32];
  __shared__ float row_m, row_s;
  if (blockIdx.x >= rows) return;  // block-uniform guard
  const float* xr = x + (size_t)blockIdx.x * COLS;
  int tid = threadIdx.x, lane = tid & 31, warp = tid >> 5;
  float m = xr[tid];
  float s = 1.0f;
  for (int c = tid + THREADS; c < COLS; c += THREADS) merge(m, s, xr[c], 1.0f);
  for (int o = 16; o > 0; o >>= 1) {
    float m2 = __shfl_xor_sync(0xffffffff, m, o);
    float s2 = __shfl_xor_sync(0xffffffff, s, o);
    merge(m, s, m2, s2);
  }
  if (lane == 0) {
    warp_m[warp] = m;
    warp_s[warp] = s;
  }
  __syncthreads();
  if (warp == 0) {
    int src = lane % (THREADS / 32);  // lanes 8..31 repeat warps 0..7: the merged max and sum are unchanged
    m = warp_m[src];
    s = (lane < THREADS / 32) ? warp_s[src] : 0.0f;
    for (int o = 16; o > 0; o >>= 1) {
      float m2 = __shfl_xor_sync(0xffffffff, m, o);
      float s2 = __shfl_xor_sync(0xffffffff, s, o);
      merge(m, s, m2, s2);
    }
    if (lane == 0) {
      row_m = m;
      row_s = s;
    }
  }
  __syncthreads();
  float inv = 1.0f / row_s;
  for (int c = tid; c < COLS; c += THREADS) y[(size_t)blockIdx.x * COLS + c] = __expf(xr[c] - row_m) * inv;
}
