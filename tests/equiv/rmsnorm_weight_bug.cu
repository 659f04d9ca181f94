// RMSNorm, one block per row: xor-shuffle warp sums, per-warp partials reduced by warp 0.
__device__ __forceinline__ float warp_sum(float v) {
  for (int o = 16; o > 0; o >>= 1) v += __shfl_xor_sync(0xffffffff, v, o);
  return v;
}

extern "C" __global__ void rmsnorm_weight_bug(float* out, const float* x, const float* w, int rows, int cols, float eps) {
  __shared__ float warp_sums[32];
  __shared__ float inv_rms;
  int row = blockIdx.x;
  if (row >= rows) return;  // block-uniform guard
  const float* xr = x + (size_t)row * cols;
  float ss = 0.0f;
  for (int c = threadIdx.x; c < cols; c += blockDim.x) ss += xr[c] * xr[c];
  ss = warp_sum(ss);
  int lane = threadIdx.x & 31, warp = threadIdx.x >> 5;
  if (lane == 0) warp_sums[warp] = ss;
  __syncthreads();
  if (warp == 0) {
    ss = (lane < blockDim.x / 32) ? warp_sums[lane] : 0.0f;
    ss = warp_sum(ss);
    if (lane == 0) inv_rms = rsqrtf(ss / cols + eps);
  }
  __syncthreads();
  for (int c = threadIdx.x; c < cols; c += blockDim.x)
    out[(size_t)row * cols + c] = xr[c] * inv_rms;
}
