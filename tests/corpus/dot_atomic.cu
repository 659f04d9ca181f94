// Dot product: grid-stride partial products, block tree reduction, one global atomicAdd per block.
extern "C" __global__ void dot_atomic(const float* a, const float* b, float* result, int n) {
  __shared__ float cache[256];
  int tid = threadIdx.x;
  float t = 0.0f;
  for (int i = blockIdx.x * blockDim.x + tid; i < n; i += blockDim.x * gridDim.x) t += a[i] * b[i];
  cache[tid] = t;
  __syncthreads();
  for (int s = blockDim.x / 2; s > 0; s >>= 1) {
    if (tid < s) cache[tid] += cache[tid + s];
    __syncthreads();
  }
  if (tid == 0) atomicAdd(result, cache[0]);
}
