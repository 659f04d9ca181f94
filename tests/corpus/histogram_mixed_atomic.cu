// 64-bin histogram of keys: shared-memory bins updated with atomics, then added to the global bins.
extern "C" __global__ void histogram_mixed_atomic(const int* keys, int* bins, int n) {
  __shared__ int hist[64];
  if (threadIdx.x < 64) hist[threadIdx.x] = 0;
  __syncthreads();
  int i = blockIdx.x * blockDim.x + threadIdx.x;
  if (i < n) atomicAdd(&hist[keys[i] & 63], 1);
  if (threadIdx.x < 64) atomicAdd(&bins[threadIdx.x], hist[threadIdx.x]);
}
