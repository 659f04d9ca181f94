// LayerNorm, one block of 128 threads per row: the mean, then the variance of x - mean (two passes).
#define THREADS 128

extern "C" __global__ void layernorm_mean_bug(float* y, const float* x, const float* gamma, const float* beta, int rows, int cols,
                                              float eps) {
  __shared__ float buf[THREADS];
  __shared__ float mean, rstd;
  if (blockIdx.x >= rows) return;  // block-uniform guard
  const float* xr = x + (size_t)blockIdx.x * cols;
  int tid = threadIdx.x;
  float s = 0.0f;
  for (int j = tid; j < cols; j += THREADS) s += xr[j];
  buf[tid] = s;
  __syncthreads();
  for (int k = THREADS / 2; k > 0; k >>= 1) {
    if (tid < k) buf[tid] += buf[tid + k];
    __syncthreads();
  }
  if (tid == 0) mean = buf[0] / cols;
  __syncthreads();
  float s2 = 0.0f;
  for (int j = tid; j < cols; j += THREADS) {
    float d = xr[j] - mean;
    s2 += d * d;
  }
  buf[tid] = s2;
  __syncthreads();
  for (int k = THREADS / 2; k > 0; k >>= 1) {
    if (tid < k) buf[tid] += buf[tid + k];
    __syncthreads();
  }
  if (tid == 0) rstd = rsqrtf(buf[0] / cols + eps);
  __syncthreads();
  for (int j = tid; j < cols; j += THREADS)
    y[(size_t)blockIdx.x * cols + j] = xr[j] * rstd * gamma[j] + beta[j];
}
