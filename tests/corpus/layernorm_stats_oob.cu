// LayerNorm statistics: per-row mean and 1/std, one block per row.
extern "C" __global__ void layernorm_stats_oob(float* mean_out, float* rstd_out, const float* x, int d, float eps) {
  __shared__ float s1[256];
  __shared__ float s2[256];
  const float* xr = x + (size_t)blockIdx.x * d;
  int tid = threadIdx.x;
  float a = 0.0f, b = 0.0f;
  for (int j = tid; j <= d; j += blockDim.x) {
    float v = xr[j];
    a += v;
    b += v * v;
  }
  s1[tid] = a;
  s2[tid] = b;
  __syncthreads();
  for (int k = blockDim.x / 2; k > 0; k >>= 1) {
    if (tid < k) {
      s1[tid] += s1[tid + k];
      s2[tid] += s2[tid + k];
    }
    __syncthreads();
  }
  if (tid == 0) {
    float mu = s1[0] / d;
    mean_out[blockIdx.x] = mu;
    rstd_out[blockIdx.x] = rsqrtf(s2[0] / d - mu * mu + eps);
  }
}
