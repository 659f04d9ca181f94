// The sum of a whole vector with the blocks' partial sums stored with atomicExch instead of
// atomicAdd: the last block to finish overwrites the others' sums.
extern "C" __global__ void total_sum_bug(float* out, const float* x, int n) {
  __shared__ float partial[256];
  int t = threadIdx.x;
  int i = blockIdx.x * blockDim.x + t;
  partial[t] = i < n ? x[i] : 0.0f;
  __syncthreads();
  for (int s = blockDim.x / 2; s > 0; s >>= 1) {
    if (t < s) partial[t] += partial[t + s];
    __syncthreads();
  }
  if (t == 0) atomicExch(out, partial[0]);
}
