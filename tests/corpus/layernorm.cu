// LayerNorm: one block of 128 threads per row; mean and variance by shared-memory tree reductions.
#define THREADS 128

extern "C" __global__ void layernorm(float* y, const float* x, const float* gamma, const float* beta, int d, float eps) {
  __shared__ float buf[THREADS];
  __shared__ float mean, rstd;
  const float* xr = x + (size_t)blockIdx.x * d;
  int tid = threadIdx.x;
  float s = 0.0f, s2 = 0.0f;
  for (int j = tid; j < d; j += THREADS) { float v = xr[j]; s += v; s2 += v * v; }
  buf[tid] = s;
  __syncthreads();
  for (int k = THREADS / 2; k > 0; k >>= 1) {
    if (tid < k) buf[tid] += buf[tid + k];
    __syncthreads();
  }
  if (tid == 0) mean = buf[0] / d;
  __syncthreads();
  buf[tid] = s2;
  __syncthreads();
  for (int k = THREADS / 2; k > 0; k >>= 1) {
    if (tid < k) buf[tid] += buf[tid + k];
    __syncthreads();
  }
  if (tid == 0) rstd = rsqrtf(buf[0] / d - mean * mean + eps);
  __syncthreads();
  for (int j = tid; j < d; j += THREADS)
    y[(size_t)blockIdx.x * d + j] = (xr[j] - mean) * rstd * gamma[j] + beta[j];
}
