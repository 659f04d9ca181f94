// Templated block max-reduction in shared memory, one result per block.
template <int BLOCK>
__global__ void block_max(const float* x, float* out, int n) {
  __shared__ float smax[BLOCK];
  int tid = threadIdx.x;
  int i = blockIdx.x * BLOCK + tid;
  smax[tid] = (i < n) ? x[i] : -INFINITY;
  __syncthreads();
  for (int s = BLOCK / 2; s > 0; s >>= 1) {
    if (tid < s) smax[tid] = fmaxf(smax[tid], smax[tid + s]);
  }
  __syncthreads();
  if (tid == 0) out[blockIdx.x] = smax[0];
}

template __global__ void block_max<256>(const float*, float*, int);
