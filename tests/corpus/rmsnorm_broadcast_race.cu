// RMSNorm: one block per token; thread 0 publishes 1/rms through shared memory.
extern "C" __global__ void rmsnorm_broadcast_race(float* out, const float* x, const float* w, float eps, int hidden) {
  __shared__ float red[256];
  __shared__ float inv_rms;
  const float* xr = x + (size_t)blockIdx.x * hidden;
  float ss = 0.0f;
  for (int c = threadIdx.x; c < hidden; c += blockDim.x) ss += xr[c] * xr[c];
  red[threadIdx.x] = ss;
  __syncthreads();
  for (int s = blockDim.x / 2; s > 0; s >>= 1) {
    if (threadIdx.x < s) red[threadIdx.x] += red[threadIdx.x + s];
    __syncthreads();
  }
  if (threadIdx.x == 0) inv_rms = rsqrtf(red[0] / hidden + eps);
  float scale = inv_rms;
  for (int c = threadIdx.x; c < hidden; c += blockDim.x)
    out[(size_t)blockIdx.x * hidden + c] = xr[c] * scale * w[c];
}
