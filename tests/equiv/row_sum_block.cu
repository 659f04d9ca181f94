// Row sums with one block of 256 threads per row: each thread strides over the row, then a
// shared-memory tree reduction. Shapes are derived from the declared ranges (none listed).
#define THREADS 256
extern "C" __global__ void row_sum_block(float* out, const float* x, int rows, int cols) {
  __shared__ float partial[THREADS];
  const float* row = x + (long)blockIdx.x * cols;
  float acc = 0.0f;
  for (int c = threadIdx.x; c < cols; c += THREADS) acc += row[c];
  partial[threadIdx.x] = acc;
  __syncthreads();
  for (int half = THREADS / 2; half > 0; half /= 2) {
    if (threadIdx.x < half) partial[threadIdx.x] += partial[threadIdx.x + half];
    __syncthreads();
  }
  if (threadIdx.x == 0) out[blockIdx.x] = partial[0];
}
