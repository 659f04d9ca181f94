// Row sums, one block per row: warp sums with xor shuffles, then the first warp sums the warp totals.
__device__ __forceinline__ float warp_sum(float v) {
  for (int o = 16; o > 0; o >>= 1) v += __shfl_xor_sync(0xffffffff, v, o);
  return v;
}

extern "C" __global__ void row_sum_shfl(float* out, const float* x, int rows, int cols) {
  __shared__ float warp_totals[32];
  if (blockIdx.x >= rows) return;  // block-uniform guard
  const float* xr = x + (size_t)blockIdx.x * cols;
  int lane = threadIdx.x & 31, warp = threadIdx.x >> 5;
  float s = 0.0f;
  for (int c = threadIdx.x; c < cols; c += blockDim.x) s += xr[c];
  s = warp_sum(s);
  if (lane == 0) warp_totals[warp] = s;
  __syncthreads();
  if (warp == 0) {
    s = (lane < blockDim.x / 32) ? warp_totals[lane] : 0.0f;
    s = warp_sum(s);
    if (lane == 0) out[blockIdx.x] = s;
  }
}
