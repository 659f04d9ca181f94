// RMSNorm, one block of 256 threads per row: the sum of squares by a shared-memory tree reduction.
#define THREADS 256

extern "C" __global__ void rmsnorm_eps_bug(float* out, const float* x, const float* w, int rows, int cols, float eps) {
  __shared__ float red[THREADS];
  __shared__ float inv_rms;
  if (blockIdx.x >= rows) return;  // block-uniform guard
  const float* xr = x + (size_t)blockIdx.x * cols;
  int tid = threadIdx.x;
  float ss = 0.0f;
  for (int c = tid; c < cols; c += THREADS) ss += xr[c] * xr[c];
  red[tid] = ss;
  __syncthreads();
  for (int s = THREADS / 2; s > 0; s >>= 1) {
    if (tid < s) red[tid] += red[tid + s];
    __syncthreads();
  }
  if (tid == 0) inv_rms = 1.0f / (sqrtf(red[0] / cols) + eps);
  __syncthreads();
  for (int c = tid; c < cols; c += THREADS) out[(size_t)blockIdx.x * cols + c] = xr[c] * inv_rms * w[c];
}
