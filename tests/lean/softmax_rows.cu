// Row softmax, one block of 256 threads per row: block max, then the block sum of exp(x - max),
// both by shared-memory tree reductions; thread 0 publishes each result in a shared scalar.
#define THREADS 256

extern "C" __global__ void softmax_rows(float* y, const float* x, int rows, int cols) {
  __shared__ float red[THREADS];
  __shared__ float s_max, s_sum;
  if (blockIdx.x >= rows) return;  // block-uniform guard
  const float* xr = x + (size_t)blockIdx.x * cols;
  int tid = threadIdx.x;
  float m = -INFINITY;
  for (int c = tid; c < cols; c += THREADS) m = fmaxf(m, xr[c]);
  red[tid] = m;
  __syncthreads();
  for (int s = THREADS / 2; s > 0; s >>= 1) {
    if (tid < s) red[tid] = fmaxf(red[tid], red[tid + s]);
    __syncthreads();
  }
  if (tid == 0) s_max = red[0];
  __syncthreads();
  float sum = 0.0f;
  for (int c = tid; c < cols; c += THREADS) sum += __expf(xr[c] - s_max);
  red[tid] = sum;
  __syncthreads();
  for (int s = THREADS / 2; s > 0; s >>= 1) {
    if (tid < s) red[tid] += red[tid + s];
    __syncthreads();
  }
  if (tid == 0) s_sum = red[0];
  __syncthreads();
  for (int c = tid; c < cols; c += THREADS) y[(size_t)blockIdx.x * cols + c] = __expf(xr[c] - s_max) / s_sum;
}
