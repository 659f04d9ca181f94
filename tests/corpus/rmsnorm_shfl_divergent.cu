// RMSNorm: one block per token; warp shuffles, then the per-warp partials are reduced by the first warp.
extern "C" __global__ void rmsnorm_shfl_divergent(float* out, const float* x, const float* w, float eps, int hidden) {
  __shared__ float partial[32];
  const float* xr = x + (size_t)blockIdx.x * hidden;
  int lane = threadIdx.x % 32, warp = threadIdx.x / 32;
  float ss = 0.0f;
  for (int c = threadIdx.x; c < hidden; c += blockDim.x) ss += xr[c] * xr[c];
  for (int o = 16; o > 0; o >>= 1) ss += __shfl_down_sync(0xffffffff, ss, o);
  if (lane == 0) partial[warp] = ss;
  __syncthreads();
  if (threadIdx.x < blockDim.x / 32) {
    ss = partial[threadIdx.x];
    for (int o = 16; o > 0; o >>= 1) ss += __shfl_down_sync(0xffffffff, ss, o);
    if (threadIdx.x == 0) partial[0] = rsqrtf(ss / hidden + eps);
  }
  __syncthreads();
  float inv = partial[0];
  for (int c = threadIdx.x; c < hidden; c += blockDim.x)
    out[(size_t)blockIdx.x * hidden + c] = xr[c] * inv * w[c];
}
