// Block-level sum: tree reduction in shared memory, one result per block.
extern "C" __global__ void reduce_missing_sync(const float* input, float* out, int n) {
  __shared__ float s[256];
  int tid = threadIdx.x;
  int i = blockIdx.x * blockDim.x + tid;
  s[tid] = (i < n) ? input[i] : 0.0f;
  __syncthreads();
  for (int stride = blockDim.x / 2; stride > 0; stride >>= 1) {
    if (tid < stride) {
      s[tid] += s[tid + stride];
    }
  }
  if (tid == 0) out[blockIdx.x] = s[0];
}
