// out[i] = in[i - 1] within each block (0 at the block start), staged through shared memory.
extern "C" __global__ void shift_right_shared_oob(const float* in, float* out, int n) {
  __shared__ float s[256];
  int i = blockIdx.x * blockDim.x + threadIdx.x;
  s[threadIdx.x + 1] = (i < n) ? in[i] : 0.0f;
  if (threadIdx.x == 0) s[0] = 0.0f;
  __syncthreads();
  if (i < n) out[i] = s[threadIdx.x];
}
