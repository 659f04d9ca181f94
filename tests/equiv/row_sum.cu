// Row sums, one block of 256 threads per row: strided partial sums, then a shared-memory tree.
#define THREADS 256

extern "C" __global__ void row_sum(float* out, const float* x, int rows, int cols) {
  __shared__ float red[THREADS];
  if (blockIdx.x >= rows) return;  // block-uniform guard
  const float* xr = x + (size_t)blockIdx.x * cols;
  int tid = threadIdx.x;
  float s = 0.0f;
  for (int c = tid; c < cols; c += THREADS) s += xr[c];
  red[tid] = s;
  __syncthreads();
  for (int k = THREADS / 2; k > 0; k >>= 1) {
    if (tid < k) red[tid] += red[tid + k];
    __syncthreads();
  }
  if (tid == 0) out[blockIdx.x] = red[0];
}
