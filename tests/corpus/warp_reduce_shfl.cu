// Sum of x: warp-shuffle reduction, then one atomicAdd per warp into a global accumulator.
__device__ __forceinline__ float warp_reduce_sum(float v) {
  for (int offset = warpSize / 2; offset > 0; offset >>= 1)
    v += __shfl_down_sync(0xffffffff, v, offset);
  return v;
}

extern "C" __global__ void warp_reduce_shfl(const float* x, float* sum, int n) {
  int i = blockIdx.x * blockDim.x + threadIdx.x;
  float v = (i < n) ? x[i] : 0.0f;
  v = warp_reduce_sum(v);
  if ((threadIdx.x & 31) == 0) atomicAdd(sum, v);
}
