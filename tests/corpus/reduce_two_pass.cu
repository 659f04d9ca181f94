// Two-pass sum: pass 1 writes one partial sum per block, pass 2 (a single block) reduces the partials.
#define THREADS 256

extern "C" __global__ void sum_partials(const float* x, float* partials, int n) {
  __shared__ float s[THREADS];
  float v = 0.0f;
  for (int i = blockIdx.x * THREADS + threadIdx.x; i < n; i += THREADS * gridDim.x) v += x[i];
  s[threadIdx.x] = v;
  __syncthreads();
  for (int k = THREADS / 2; k > 0; k >>= 1) {
    if (threadIdx.x < k) s[threadIdx.x] += s[threadIdx.x + k];
    __syncthreads();
  }
  if (threadIdx.x == 0) partials[blockIdx.x] = s[0];
}

extern "C" __global__ void sum_final(const float* partials, float* result, int num_partials) {
  __shared__ float s[THREADS];
  float v = 0.0f;
  for (int i = threadIdx.x; i < num_partials; i += THREADS) v += partials[i];
  s[threadIdx.x] = v;
  __syncthreads();
  for (int k = THREADS / 2; k > 0; k >>= 1) {
    if (threadIdx.x < k) s[threadIdx.x] += s[threadIdx.x + k];
    __syncthreads();
  }
  if (threadIdx.x == 0) *result = s[0];
}
