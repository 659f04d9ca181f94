// Row sums with one block of 256 threads per row. BUG: each thread takes one element and never
// strides, so columns past the block are dropped. Right for every row of at most 256 columns:
// derived shapes must try a long row even when every size at its largest is too big to check.
#define THREADS 256
extern "C" __global__ void row_sum_block_bug(float* out, const float* x, int rows, int cols) {
  __shared__ float partial[THREADS];
  const float* row = x + (long)blockIdx.x * cols;
  partial[threadIdx.x] = threadIdx.x < cols ? row[threadIdx.x] : 0.0f;
  __syncthreads();
  for (int half = THREADS / 2; half > 0; half /= 2) {
    if (threadIdx.x < half) partial[threadIdx.x] += partial[threadIdx.x + half];
    __syncthreads();
  }
  if (threadIdx.x == 0) out[blockIdx.x] = partial[0];
}
