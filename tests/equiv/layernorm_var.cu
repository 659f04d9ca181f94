// LayerNorm, one block per row: sum and sum of squares in one pass, two shared-memory tree reductions.
extern "C" __global__ void layernorm_var(float* y, const float* x, const float* gamma, const float* beta, int rows, int cols,
                                         float eps) {
  __shared__ float s1[256];
  __shared__ float s2[256];
  if (blockIdx.x >= rows) return;  // block-uniform guard
  const float* xr = x + (size_t)blockIdx.x * cols;
  int tid = threadIdx.x;
  float a = 0.0f, b = 0.0f;
  for (int j = tid; j < cols; j += blockDim.x) {
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
  float mean = s1[0] / cols;
  float var = s2[0] / cols - mean * mean;
  float rstd = rsqrtf(var + eps);
  for (int j = tid; j < cols; j += blockDim.x)
    y[(size_t)blockIdx.x * cols + j] = (xr[j] - mean) * rstd * gamma[j] + beta[j];
}
