// Streams the input through shared memory one block-sized chunk at a time; out[i] = 2 * in[i + 1].
extern "C" __global__ void stage_loop_divergent(const float* in, float* out, int n) {
  __shared__ float buf[256];
  for (int i = threadIdx.x; i < n; i += blockDim.x) {
    buf[threadIdx.x] = in[i] * 2.0f;
    __syncthreads();
    out[i] = buf[(threadIdx.x + 1) % blockDim.x];
    __syncthreads();
  }
}
