// 256-bin byte histogram: per-block bins in shared memory with atomics, then merged into global bins.
#define NUM_BINS 256

extern "C" __global__ void histogram_shared(const unsigned char* data, unsigned* bins, int n) {
  __shared__ unsigned local[NUM_BINS];
  for (int b = threadIdx.x; b < NUM_BINS; b += blockDim.x) local[b] = 0;
  __syncthreads();
  for (int i = blockIdx.x * blockDim.x + threadIdx.x; i < n; i += blockDim.x * gridDim.x)
    atomicAdd(&local[data[i]], 1u);
  __syncthreads();
  for (int b = threadIdx.x; b < NUM_BINS; b += blockDim.x)
    atomicAdd(&bins[b], local[b]);
}
