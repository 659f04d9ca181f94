// Counts the positive elements of x.
extern "C" __global__ void count_positive_race(const float* x, int* count, int n) {
  int i = blockIdx.x * blockDim.x + threadIdx.x;
  if (i < n && x[i] > 0.0f) {
    *count += 1;
  }
}
