// A block-wide sum as an LLM might write it, with one bug: the barrier inside the loop is
// missing, so threads read partial sums that other threads are still writing.
extern "C" __global__ void block_sum(const float* in, float* out, int n) {
  __shared__ float partial[256];
  unsigned tid = threadIdx.x;
  unsigned i = blockIdx.x * blockDim.x + tid;
  partial[tid] = i < n ? in[i] : 0.0f;
  __syncthreads();
  for (unsigned stride = blockDim.x / 2; stride > 0; stride >>= 1) {
    if (tid < stride)
      partial[tid] += partial[tid + stride];
    // missing: __syncthreads();
  }
  if (tid == 0)
    out[blockIdx.x] = partial[0];
}
