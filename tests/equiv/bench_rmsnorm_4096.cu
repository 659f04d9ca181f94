// Benchmark: RMSNorm over rows of 4096 columns, one block of 256 threads per row (16 columns per
// thread), xor-shuffle warp sums and a second shuffle stage over the 8 warp totals in every warp.
#define THREADS 256
#define COLS 4096

__device__ __forceinline__ float warp_sum(float v) {
  for (int o = 16; o > 0; o >>= 1) v += __shfl_xor_sync(0xffffffff, v, o);
  return v;
}

extern "C" __global__ void bench_rmsnorm_4096(float* out, const float* x, const float* w, int rows, float eps) {
  __shared__ float warp_sums[THREADS / 32];
  if (blockIdx.x >= rows) return;  // block-uniform guard
  const float* xr = x + (size_t)blockIdx.x * COLS;
  int lane = threadIdx.x & 31, warp = threadIdx.x >> 5;
  float ss = 0.0f;
  for (int c = threadIdx.x; c < COLS; c += THREADS) ss += xr[c] * xr[c];
  ss = warp_sum(ss);
  if (lane == 0) warp_sums[warp] = ss;
  __syncthreads();
  float total = warp_sum(lane < THREADS / 32 ? warp_sums[lane] : 0.0f);
  float inv_rms = rsqrtf(total / COLS + eps);
  for (int c = threadIdx.x; c < COLS; c += THREADS) out[(size_t)blockIdx.x * COLS + c] = xr[c] * inv_rms * w[c];
}
