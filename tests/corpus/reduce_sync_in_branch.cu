// Block-level sum: tree reduction down to 32 values, then the first warp finishes it.
extern "C" __global__ void reduce_sync_in_branch(const float* in, float* out, int n) {
  __shared__ float s[256];
  int tid = threadIdx.x;
  int i = blockIdx.x * blockDim.x + tid;
  s[tid] = (i < n) ? in[i] : 0.0f;
  __syncthreads();
  for (int stride = blockDim.x / 2; stride >= 32; stride >>= 1) {
    if (tid < stride) s[tid] += s[tid + stride];
    __syncthreads();
  }
  if (tid < 32) {
    for (int stride = 16; stride > 0; stride >>= 1) {
      if (tid < stride) s[tid] += s[tid + stride];
      __syncthreads();
    }
  }
  if (tid == 0) out[blockIdx.x] = s[0];
}
