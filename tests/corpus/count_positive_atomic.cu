// Counts and sums the positive elements of x with global atomics.
extern "C" __global__ void count_positive_atomic(const float* x, int* count, float* total, int n) {
  int i = blockIdx.x * blockDim.x + threadIdx.x;
  if (i < n && x[i] > 0.0f) {
    atomicAdd(count, 1);
    atomicAdd(total, x[i]);
  }
}
