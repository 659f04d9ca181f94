// The last block mirrors its values through shared memory; every other block passes them through.
extern "C" __global__ void uniform_branch_barrier(const float* in, float* out, int n) {
  __shared__ float buf[256];
  int i = blockIdx.x * blockDim.x + threadIdx.x;
  float v = (i < n) ? in[i] : 0.0f;
  if (blockIdx.x == gridDim.x - 1) {
    buf[threadIdx.x] = v;
    __syncthreads();
    v = 0.5f * (v + buf[blockDim.x - 1 - threadIdx.x]);
  }
  if (i < n) out[i] = v;
}
