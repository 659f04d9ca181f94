// Per-block sum accumulated in a shared scalar, then written out by thread 0.
extern "C" __global__ void block_sum_shared_race(const float* x, float* block_sums, int n) {
  __shared__ float acc;
  if (threadIdx.x == 0) acc = 0.0f;
  __syncthreads();
  int i = blockIdx.x * blockDim.x + threadIdx.x;
  if (i < n) acc += x[i];
  __syncthreads();
  if (threadIdx.x == 0) block_sums[blockIdx.x] = acc;
}
