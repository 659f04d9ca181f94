// Row sums with the strided loop unrolled to four elements per thread: correct while
// cols <= 4 * 256 = 1024, but a longer row loses every element past 1024. The interface gives
// cols up to 4096 and lists no shapes, so the check derives them from the ranges: the smallest
// and a small odd one agree with the reference, the largest declared one (4096) does not.
#define THREADS 256

extern "C" __global__ void row_sum_unrolled_bug(float* out, const float* x, int rows, int cols) {
  __shared__ float red[THREADS];
  if (blockIdx.x >= rows) return;  // block-uniform guard
  const float* xr = x + (size_t)blockIdx.x * cols;
  int tid = threadIdx.x;
  float s = 0.0f;
#pragma unroll
  for (int k = 0; k < 4; ++k) {
    int c = tid + k * THREADS;
    if (c < cols) s += xr[c];
  }
  red[tid] = s;
  __syncthreads();
  for (int k = THREADS / 2; k > 0; k >>= 1) {
    if (tid < k) red[tid] += red[tid + k];
    __syncthreads();
  }
  if (tid == 0) out[blockIdx.x] = red[0];
}
