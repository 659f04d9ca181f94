// Block-level sum: tree reduction in shared memory, one partial sum per block.
#define BLOCK 256

extern "C" __global__ void reduce_sum_shared(const float* input, float* partial, int n) {
  __shared__ float sdata[BLOCK];
  int tid = threadIdx.x;
  int i = blockIdx.x * blockDim.x + tid;
  sdata[tid] = (i < n) ? input[i] : 0.0f;
  __syncthreads();
  for (int s = blockDim.x / 2; s > 0; s >>= 1) {
    if (tid < s) {
      sdata[tid] += sdata[tid + s];
    }
    __syncthreads();
  }
  if (tid == 0) partial[blockIdx.x] = sdata[0];
}
