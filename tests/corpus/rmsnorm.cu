// RMSNorm over the hidden dimension: one block per token, warp shuffles then a shared-memory pass.
__device__ __forceinline__ float warp_sum(float v) {
  for (int o = 16; o > 0; o >>= 1) v += __shfl_xor_sync(0xffffffff, v, o);
  return v;
}

extern "C" __global__ void rmsnorm(float* out, const float* x, const float* weight, float eps, int hidden) {
  __shared__ float warp_sums[32];
  __shared__ float s_inv_rms;
  const float* xr = x + (size_t)blockIdx.x * hidden;
  float ss = 0.0f;
  for (int c = threadIdx.x; c < hidden; c += blockDim.x) ss += xr[c] * xr[c];
  ss = warp_sum(ss);
  int lane = threadIdx.x & 31, warp = threadIdx.x >> 5;
  if (lane == 0) warp_sums[warp] = ss;
  __syncthreads();
  if (warp == 0) {
    ss = (lane < blockDim.x / 32) ? warp_sums[lane] : 0.0f;
    ss = warp_sum(ss);
    if (lane == 0) s_inv_rms = rsqrtf(ss / hidden + eps);
  }
  __syncthreads();
  for (int c = threadIdx.x; c < hidden; c += blockDim.x)
    out[(size_t)blockIdx.x * hidden + c] = xr[c] * s_inv_rms * weight[c];
}
